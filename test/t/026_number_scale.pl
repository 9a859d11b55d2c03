# Items written before numbers were normalized (3f533ee) keep their zeros
# (1.50) until they are written again; then the item is stored trimmed
# (1.5), and every global secondary index's copy must follow it, even when
# no value the index shows changed numerically: the copy is the base
# item's (ddb_verify_gsi).  The test-only fault
# ddb.check_fault_keep_number_scale (CHECKS builds) stores numbers as those
# releases did, to make such items.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('number_scale');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION ddb');
if ($node->safe_psql('postgres', q{LOAD 'ddb'; SELECT count(*) FROM pg_settings
		WHERE name = 'ddb.check_fault_keep_number_scale'}) ne '1')
{
	$node->stop;
	plan skip_all => 'needs a CHECKS=1 build (ddb.check_fault_keep_number_scale)';
}

$node->safe_psql('postgres', q{
	CREATE TABLE old_nums (pk text, item jsonb) USING ddb;
	SELECT ddb_create_gsi('old_nums', 'ByC', 'c');
	SELECT ddb_create_gsi('old_nums', 'ByN', 'c', projection => 'INCLUDE',
						  non_key_attributes => '{n}');
	SET ddb.check_fault_keep_number_scale = on;
	SELECT ddb_put_item('old_nums', '{"pk": "a", "c": "x", "n": 1.50, "l": [2.50]}');
	SELECT ddb_put_item('old_nums', '{"pk": "b", "c": "x", "n": 3.0}');
});
is($node->safe_psql('postgres', q{SELECT item FROM old_nums WHERE pk = 'a'}),
	'{"c": "x", "l": [2.50], "n": 1.50}', 'the fault stores numbers as written, as earlier releases did');
is($node->safe_psql('postgres', q{SELECT q FROM ddb_query('old_nums', 'c = :c', '{":c": "x"}',
		index_name => 'ByC') q WHERE q ->> 'pk' = 'a'}),
	'{"c": "x", "l": [2.50], "n": 1.50, "pk": "a"}', 'and so the index copy');

# an update that changes no value numerically rewrites the item trimmed
$node->safe_psql('postgres', q{
	SELECT ddb_update_item('old_nums', '{"pk": "a"}', 'SET n = :n', NULL, NULL, '{":n": 1.5}');
	SELECT ddb_update_item('old_nums', '{"pk": "b"}', 'SET z = :z', NULL, NULL, '{":z": true}');
});
is($node->safe_psql('postgres', q{SELECT string_agg(item::text, ' ' ORDER BY pk) FROM old_nums}),
	'{"c": "x", "l": [2.5], "n": 1.5} {"c": "x", "n": 3, "z": true}', 'the rewritten items are trimmed');
is($node->safe_psql('postgres', q{SELECT string_agg(q::text, ' ' ORDER BY q ->> 'pk')
		FROM ddb_query('old_nums', 'c = :c', '{":c": "x"}', index_name => 'ByC') q}),
	'{"c": "x", "l": [2.5], "n": 1.5, "pk": "a"} {"c": "x", "n": 3, "z": true, "pk": "b"}',
	'the index copies follow the base items');
is($node->safe_psql('postgres', q{SELECT string_agg(q::text, ' ' ORDER BY q ->> 'pk')
		FROM ddb_query('old_nums', 'c = :c', '{":c": "x"}', index_name => 'ByN') q}),
	'{"c": "x", "n": 1.5, "pk": "a"} {"c": "x", "n": 3, "pk": "b"}',
	'those of an index that shows none of the attributes set too');
my ($rc, $out, $err) = $node->psql('postgres', q{SELECT ddb_verify_gsi('old_nums')});
is($rc, 0, 'ddb_verify_gsi finds the copies the base items\' own') or diag($err);

# the same for an item rewritten by plain SQL
$node->safe_psql('postgres', q{
	SET ddb.check_fault_keep_number_scale = on;
	SELECT ddb_put_item('old_nums', '{"pk": "c", "c": "x", "n": 4.50}');
	RESET ddb.check_fault_keep_number_scale;
	UPDATE old_nums SET item = '{"c": "x", "n": 4.5}' WHERE pk = 'c';
});
($rc, $out, $err) = $node->psql('postgres', q{SELECT ddb_verify_gsi('old_nums')});
is($rc, 0, 'a plain SQL rewrite is followed too') or diag($err);

$node->stop;
done_testing();
