# pg_dump / pg_restore of a database with ddb tables: the same items and key
# schemas come back, and the item API works on the restored tables.  Global
# secondary indexes come back too (catalog rows, index tables, triggers) and
# keep being maintained.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('dump');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', q{
	CREATE EXTENSION ddb;
	SELECT ddb_create_table('shop', 'PK', 'S', 'SK', 'S');
	SELECT ddb_create_table('counters', 'id', 'N');
	SELECT ddb_create_table('blobs', 'id', 'B', 'n', 'N');
	CREATE TABLE handmade (k text NOT NULL, item jsonb) USING ddb;
	SELECT ddb_put_item('shop', jsonb_build_object('PK', 'CUST#' || (i % 50), 'SK', 'ORDER#' || i,
	                    'total', i * 1.5, 'tags', jsonb_build_object('$SS', jsonb_build_array('a', 'b' || i))))
	  FROM generate_series(1, 2000) i;
	SELECT ddb_update_item('counters', jsonb_build_object('id', i), 'ADD n :one', vals => '{":one": 1}')
	  FROM generate_series(1, 100) i;
	SELECT ddb_put_item('blobs', ('{"id": {"$B": "AAEC"}, "n": 1, "big": "' || repeat('x', 300000) || '"}')::jsonb);
	INSERT INTO handmade VALUES ('a', '{"x": 1}');
	DELETE FROM shop WHERE "SK" LIKE 'ORDER#1%';
	SELECT ddb_create_gsi('shop', 'ByTotal', 'band', 'N', sort_key => 'total', sort_key_type => 'N',
	                      projection => 'KEYS_ONLY');
	SELECT ddb_create_gsi('shop', 'Inverted', 'SK', sort_key => 'PK', projection => 'INCLUDE',
	                      non_key_attributes => ARRAY['total']);
	UPDATE shop SET item = item || jsonb_build_object('band', ("SK" < 'ORDER#5')::int) WHERE "SK" > 'ORDER#3';
	CREATE ROLE dump_key_role;
	SELECT ddb_create_access_key('dump_key_role');
});
# the endpoint's access keys are an extension configuration table: dumped
my $keys = q{SELECT string_agg(access_key_id || ':' || secret_access_key || ':' || role::text
	|| ':' || role_name, ',') FROM ddb_internal.access_keys};
my $keys_before = $node->safe_psql('src', $keys);
my $gsi_state = q{
	SELECT ddb_verify_gsi('shop')::text
	  || (SELECT string_agg(x::text, ',') FROM ddb_query('shop', 'band = :b', '{":b": 1}', index_name => 'ByTotal') x)
	  || (SELECT string_agg(x::text, ',') FROM ddb_query('shop', 'SK = :s', '{":s": "ORDER#777"}', index_name => 'Inverted') x)
	  || (SELECT string_agg(index_name || ':' || index_table::text || ':' || projection, ',' ORDER BY index_name) FROM ddb_internal.gsi)
	  || (SELECT string_agg(tgname, ',' ORDER BY tgname) FROM pg_trigger WHERE tgrelid = 'shop'::regclass)};
my $gsi_before = $node->safe_psql('src', $gsi_state);
like($gsi_before, qr/^\{"indexes".*ORDER#777.*ByTotal:ddb_internal\."shop__ByTotal":KEYS_ONLY.*ddb_gsi_maintain,ddb_gsi_truncate$/, "index state before the dump");

my $checksum = q{
	SELECT md5(string_agg(x, ',' ORDER BY x)) FROM (
	  SELECT ddb_tuple::text AS x FROM (
	    SELECT (ddb_get_item('shop', jsonb_build_object('PK', "PK", 'SK', "SK")))::text AS ddb_tuple FROM shop
	    UNION ALL SELECT ddb_get_item('counters', jsonb_build_object('id', id))::text FROM counters
	    UNION ALL SELECT md5(ddb_get_item('blobs', jsonb_build_object('id', '{"$B": "AAEC"}'::jsonb, 'n', 1))::text)
	    UNION ALL SELECT row_to_json(h)::text FROM handmade h) s) t};
my $schemas = q{SELECT string_agg((ddb_describe_table(t) #>> '{KeySchema}') || (ddb_describe_table(t) #>> '{AttributeDefinitions}'), ';' ORDER BY t::text) FROM ddb_list_tables() t};

my $before = $node->safe_psql('src', $checksum);
my $schema_before = $node->safe_psql('src', $schemas);

my $dumpfile = $node->basedir . '/src.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dumpfile, '-h', $node->host, '-p', $node->port, 'src' ],
	'pg_dump of a database with ddb tables');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok([ 'pg_restore', '-d', 'restored', '-h', $node->host, '-p', $node->port, $dumpfile ],
	'pg_restore into a fresh database');

is($node->safe_psql('restored', $checksum), $before, 'restored items are identical');
is($node->safe_psql('restored', $schemas), $schema_before, 'restored key schemas are identical');
is($node->safe_psql('restored', $gsi_state), $gsi_before, 'restored indexes: catalog, entries, triggers');
like($keys_before, qr/^[A-Z0-9]+:[^:]+:dump_key_role:dump_key_role$/, 'an access key to dump');
is($node->safe_psql('restored', $keys), $keys_before, 'restored access keys are identical');
is($node->safe_psql('restored', q{SELECT count(*) FROM ddb_list_tables()}), '4', 'all ddb tables listed');
for my $t (qw(shop counters blobs handmade))
{
	ok($node->safe_psql('restored', "SELECT ddb_verify('$t') IS NOT NULL") eq 't', "ddb_verify($t) is clean");
}

# A plain-SQL dump restored with psql works too.
my $sqlfile = $node->basedir . '/src.sql';
$node->command_ok([ 'pg_dump', '-f', $sqlfile, '-h', $node->host, '-p', $node->port, 'src' ], 'plain pg_dump');
$node->safe_psql('postgres', 'CREATE DATABASE restored2');
$node->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', $sqlfile, '-h', $node->host,
	'-p', $node->port, 'restored2' ], 'psql restore of a plain dump');
is($node->safe_psql('restored2', $checksum), $before, 'plain restore has identical items');
is($node->safe_psql('restored2', $gsi_state), $gsi_before, 'plain restore has identical indexes');
is($node->safe_psql('restored2', $keys), $keys_before, 'plain restore has identical access keys');

# Restored in one transaction (psql -1), each table is created in the
# transaction that copies into it: the COPYs take the bulk path (the
# README's claim), and the result is the same.
{
	# (the dump sets client_min_messages itself: the server's log tells)
	local $ENV{PGOPTIONS} = '-c log_min_messages=debug1';
	my $offset = -s $node->logfile;
	$node->safe_psql('postgres', 'CREATE DATABASE restored3');
	my ($ret, $stdout, $stderr) = $node->psql('restored3', undef,
		extra_params => [ '-1', '-f', $sqlfile ], on_error_stop => 1);
	is($ret, 0, 'psql -1 restore of a plain dump');
	ok($node->log_contains(qr/COPY builds the tree of "shop" bottom-up/, $offset),
		'the single-transaction restore builds bottom-up');
}
is($node->safe_psql('restored3', $checksum), $before, 'single-transaction restore has identical items');
is($node->safe_psql('restored3', $gsi_state), $gsi_before, 'single-transaction restore has identical indexes');
ok($node->safe_psql('restored3', q{SELECT ddb_verify('shop') IS NOT NULL}) eq 't', 'ddb_verify(shop) is clean after it');

# The API keeps working on restored tables.
is( $node->safe_psql('restored', q{
		SELECT ddb_update_item('counters', '{"id": 7}', 'ADD n :one', vals => '{":one": 1}', return_values => 'ALL_NEW')}),
	'{"n": 2, "id": 7}', 'updates work after restore');

# ... and so does index maintenance, through the API and SQL.
for my $db (qw(restored restored2))
{
	$node->safe_psql($db, q{
		SELECT ddb_put_item('shop', '{"PK": "CUST#x", "SK": "ORDER#x", "band": 7, "total": 1}');
		UPDATE shop SET item = item || '{"band": 7}' WHERE "SK" = 'ORDER#777';
		DELETE FROM shop WHERE "SK" = 'ORDER#555';
	});
	is( $node->safe_psql($db, q{
			SELECT string_agg(x->>'SK', ' ') FROM ddb_query('shop', 'band = :b', '{":b": 7}', index_name => 'ByTotal') x}),
		'ORDER#x ORDER#777', "$db: index maintained after restore");
	ok($node->safe_psql($db, q{SELECT ddb_verify_gsi('shop') IS NOT NULL}) eq 't', "$db: ddb_verify_gsi is clean");
	$node->safe_psql($db, q{DROP TABLE shop});
	is($node->safe_psql($db, q{SELECT count(*) FROM ddb_internal.gsi}), '0', "$db: DROP TABLE drops the indexes");
}

$node->stop;
done_testing();
