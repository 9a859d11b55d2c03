# Differential stress test: several clients run random puts, updates,
# deletes and gets on a ddb table (through the item API and through SQL) and
# make the same change to a heap table in the same transaction.  Afterwards
# the two tables must hold exactly the same items, and ddb_verify must be
# clean, before and after VACUUM.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DdbPgbench;

my $node = PostgreSQL::Test::Cluster->new('stress');
$node->init;
$node->append_conf('postgresql.conf', "max_connections = 40\n");
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION ddb;
	SELECT ddb_create_table('ddbt', 'PK', 'S', 'SK', 'S');
	CREATE TABLE h ("PK" text, "SK" text, item jsonb, PRIMARY KEY ("PK", "SK"));
});

# Keys collide across clients on purpose: 20 partitions x 50 sort keys, so
# clients write the same leaves all the time.  Each write transaction takes
# an advisory lock on its key first: under READ COMMITTED a write that finds
# no row takes no row lock, so without it the ddb and heap statements of two
# transactions could interleave differently (the same would happen between
# two heap tables).  Same-key waits and EvalPlanQual are proven by the
# isolation specs; this test is about the tree under concurrent writers.
my %scripts = (
	'put' => q{
\set p random(1, 20)
\set s random(1, 50)
\set v random(1, 1000000)
BEGIN;
SELECT pg_advisory_xact_lock(:p * 100 + :s);
SELECT ddb_put_item('ddbt', jsonb_build_object('PK', 'P' || :p, 'SK', 'S' || :s, 'v', :v, 'pad', repeat('x', :v % 300)));
INSERT INTO h VALUES ('P' || :p, 'S' || :s, jsonb_build_object('v', :v, 'pad', repeat('x', :v % 300)))
  ON CONFLICT ("PK", "SK") DO UPDATE SET item = excluded.item;
END;
},
	'add' => q{
\set p random(1, 20)
\set s random(1, 50)
BEGIN;
SELECT pg_advisory_xact_lock(:p * 100 + :s);
SELECT ddb_update_item('ddbt', jsonb_build_object('PK', 'P' || :p, 'SK', 'S' || :s), 'ADD n :one', vals => '{":one": 1}');
INSERT INTO h VALUES ('P' || :p, 'S' || :s, '{"n": 1}')
  ON CONFLICT ("PK", "SK") DO UPDATE SET item = h.item || jsonb_build_object('n', coalesce((h.item->>'n')::int, 0) + 1);
END;
},
	'sqlupdate' => q{
\set p random(1, 20)
\set s random(1, 50)
BEGIN;
SELECT pg_advisory_xact_lock(:p * 100 + :s);
UPDATE ddbt SET item = item || '{"sql": true}' WHERE "PK" = 'P' || :p AND "SK" = 'S' || :s;
UPDATE h SET item = item || '{"sql": true}' WHERE "PK" = 'P' || :p AND "SK" = 'S' || :s;
END;
},
	'delete' => q{
\set p random(1, 20)
\set s random(1, 50)
BEGIN;
SELECT pg_advisory_xact_lock(:p * 100 + :s);
SELECT ddb_delete_item('ddbt', jsonb_build_object('PK', 'P' || :p, 'SK', 'S' || :s));
DELETE FROM h WHERE "PK" = 'P' || :p AND "SK" = 'S' || :s;
END;
},
	# A BatchWriteItem of 5 neighbouring keys of one partition, new or
	# replacing, with pads up to 400 bytes: with 6 clients on 20 partitions
	# two batches often split the same leaf at once (ddb_tree.c's split for
	# a batch's run, and its fallback when another writer takes the room the
	# split made).  The keys' advisory locks are taken in ascending order.
	'batch' => q{
\set p random(1, 20)
\set s random(1, 46)
\set v random(1, 1000000)
BEGIN;
SELECT pg_advisory_xact_lock(:p * 100 + s) FROM generate_series(:s, :s + 4) s;
SELECT ddb_batch_write_item(jsonb_build_object('ddbt', (SELECT jsonb_agg(jsonb_build_object('PutRequest',
  jsonb_build_object('Item', jsonb_build_object('PK', 'P' || :p, 'SK', 'S' || s, 'v', :v + s, 'pad', repeat('y', (:v + s) % 400)))))
  FROM generate_series(:s, :s + 4) s)));
INSERT INTO h SELECT 'P' || :p, 'S' || s, jsonb_build_object('v', :v + s, 'pad', repeat('y', (:v + s) % 400))
  FROM generate_series(:s, :s + 4) s
  ON CONFLICT ("PK", "SK") DO UPDATE SET item = excluded.item;
END;
},
	'get' => q{
\set p random(1, 20)
\set s random(1, 50)
SELECT ddb_get_item('ddbt', jsonb_build_object('PK', 'P' || :p, 'SK', 'S' || :s));
},
);
my ($ok, $stdout, $stderr) = DdbPgbench::run($node, \%scripts,
	{ get => 3, delete => 1, put => 2, add => 2, sqlupdate => 2, batch => 2 },
	clients => 6, transactions => 400);
ok($ok, 'pgbench ran without client errors');
like($stdout, qr/number of failed transactions: 0/, 'no transaction failed');
diag($stderr) unless $ok;

my $diff = q{SELECT (SELECT count(*) FROM (SELECT * FROM ddbt EXCEPT SELECT * FROM h) a) +
                    (SELECT count(*) FROM (SELECT * FROM h EXCEPT SELECT * FROM ddbt) b)};
is($node->safe_psql('postgres', $diff), '0', 'ddb table equals the heap table');
cmp_ok($node->safe_psql('postgres', 'SELECT count(*) FROM ddbt'), '>', 100, 'a good share of keys exist');
is($node->safe_psql('postgres', q{SELECT ddb_verify('ddbt') ->> 'orphan_map_entries'}), '0',
	'ddb_verify is clean, and every row-id map entry has its version');
$node->safe_psql('postgres', 'VACUUM ddbt');
is($node->safe_psql('postgres', $diff), '0', 'still equal after VACUUM');
is($node->safe_psql('postgres', q{SELECT (v->>'items') = (v->>'live') FROM ddb_verify('ddbt') v}), 't',
	'VACUUM left only live versions');

$node->stop;
done_testing();
