# Differential stress of unlinking and reuse (doc/design-unlink.md;
# ddb_tree.c, "Unlinking empty leaves" and "Reuse"): clients use a ddb
# table and a heap twin as one queue, in the same transactions -- each
# puts the next rising sort key of a partition and deletes the key 300
# below it -- while other clients read the partitions' oldest and newest
# items from both tables under one snapshot (a difference is a division
# by zero, which fails the run), and others VACUUM the ddb table, which
# unlinks the leaves the queue empties while readers and writers walk
# through them, and hands their pages to the writers' splits.  Then the
# two tables must hold the same rows, ddb_verify must be clean, the file
# must have stayed far below what the queue wrote, and all of it again
# after a crash in the middle of the load.  A first, shorter load runs
# without VACUUM: the readers that walk the heads unlink leaves on their
# own (ddb_scan.c, "Reads clean up behind them").
#
# DDB_TAP_WAL=custom runs it with ddb preloaded (test/t/DdbWal.pm): the
# unlink and the splits into reused pages are then ddb's own records.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DdbPgbench;
use DdbWal;

my $node = PostgreSQL::Test::Cluster->new('unlink_stress');
$node->init;
DdbWal::configure($node);
$node->append_conf('postgresql.conf', "max_connections = 40\nautovacuum = off\n");
$node->start;
DdbWal::check_mode($node);
$node->safe_psql('postgres', q{
	CREATE EXTENSION ddb;
	SELECT ddb_create_table('qqt', 'PK', 'S', 'SK', 'N');
	CREATE TABLE qqh ("PK" text, "SK" numeric, item jsonb, PRIMARY KEY ("PK", "SK"));
	CREATE SEQUENCE qs;
});

# The delete's key was put by another client, maybe still in progress:
# its advisory lock makes the deleter wait for that commit, so both of its
# statements see the row (under READ COMMITTED they could otherwise
# disagree).  Waits go only to smaller keys: no deadlock.
my %scripts = (
	'queue' => q{
SELECT nextval('qs') AS n \gset
BEGIN;
SELECT pg_advisory_xact_lock(:n);
SELECT pg_advisory_xact_lock(:n - 300);
SELECT ddb_put_item('qqt', jsonb_build_object('PK', 'q' || (:n % 6), 'SK', :n, 'pad', repeat('x', 100 + :n % 500)));
INSERT INTO qqh VALUES ('q' || (:n % 6), :n, jsonb_build_object('pad', repeat('x', 100 + :n % 500)));
DELETE FROM qqt WHERE "PK" = 'q' || ((:n - 300) % 6) AND "SK" = :n - 300;
DELETE FROM qqh WHERE "PK" = 'q' || ((:n - 300) % 6) AND "SK" = :n - 300;
END;
},
	'read' => q{
\set p random(0, 5)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT 1 / ((SELECT array_agg("SK") FROM (SELECT "SK" FROM qqt WHERE "PK" = 'q' || :p ORDER BY "SK" LIMIT 10) a)
  IS NOT DISTINCT FROM (SELECT array_agg("SK") FROM (SELECT "SK" FROM qqh WHERE "PK" = 'q' || :p ORDER BY "SK" LIMIT 10) b))::int;
SELECT 1 / ((SELECT array_agg("SK") FROM (SELECT "SK" FROM qqt WHERE "PK" = 'q' || :p ORDER BY "SK" DESC LIMIT 10) a)
  IS NOT DISTINCT FROM (SELECT array_agg("SK") FROM (SELECT "SK" FROM qqh WHERE "PK" = 'q' || :p ORDER BY "SK" DESC LIMIT 10) b))::int;
SELECT 1 / ((SELECT count(*) FROM ddb_query('qqt', '#p = :' || 'p',
    names => '{"#p": "PK"}', vals => jsonb_build_object(':' || 'p', 'q' || :p)))
  = (SELECT count(*) FROM qqh WHERE "PK" = 'q' || :p))::int;
COMMIT;
},
	'vacuum' => q{
VACUUM qqt;
},
);
my %weights = (queue => 12, read => 4, vacuum => 1);
my $diff = q{SELECT (SELECT count(*) FROM (SELECT * FROM qqt EXCEPT SELECT * FROM qqh) a) +
                    (SELECT count(*) FROM (SELECT * FROM qqh EXCEPT SELECT * FROM qqt) b)};

# First without VACUUM: the readers alone prune the heads they walk and
# unlink the leaves that empties (ddb_scan.c, "Reads clean up behind
# them"), among the writers and each other; every deleted page is theirs.
my ($ok, $stdout, $stderr) = DdbPgbench::run($node,
	{ queue => $scripts{queue}, read => $scripts{read} }, \%weights, clients => 6, seconds => 10);
ok($ok && $stdout =~ /number of failed transactions: 0/, 'without VACUUM: pgbench ran, no transaction failed');
diag($stderr) unless $ok;
is($node->safe_psql('postgres', $diff), '0', 'without VACUUM: the ddb table equals the heap table');
cmp_ok($node->safe_psql('postgres', q{SELECT (ddb_verify('qqt') ->> 'deleted_pages')::int}), '>', 0,
	'without VACUUM: the readers unlinked leaves, and ddb_verify is clean');

($ok, $stdout, $stderr) = DdbPgbench::run($node, \%scripts, \%weights,
	clients => 6, seconds => 20);
ok($ok, 'pgbench ran without client errors');
like($stdout, qr/number of failed transactions: 0/, 'no transaction failed');
diag($stderr) unless $ok;
is($node->safe_psql('postgres', $diff), '0', 'the ddb table equals the heap table');
my $puts = $node->safe_psql('postgres', 'SELECT last_value FROM qs');
cmp_ok($puts, '>', 1000, "the queue went round ($puts puts)");
is($node->safe_psql('postgres', q{SELECT ddb_verify('qqt') ->> 'orphan_map_entries'}), '0',
	'ddb_verify is clean, and every row-id map entry has its version');

# Without unlinking, every leaf the queue filled would stay: at least
# ~500 bytes a put, at leaf fill below 1.  With the readers' snapshots
# delaying reuse, the file stays well under that (a third of it, measured).
my $blocks = $node->safe_psql('postgres', q{SELECT pg_relation_size('qqt') / 8192});
my $written = int($puts * 500 / 8192);
cmp_ok($blocks, '<', $written * 0.6,
	"the file ($blocks blocks) stayed far below what the queue wrote ($written blocks)");

# A crash in the middle of the load.
my ($out, $err) = ('', '');
my $h = DdbPgbench::start($node, \%scripts, \%weights, clients => 6, seconds => 30,
	out => \$out, err => \$err);
sleep 8;
$node->stop('immediate');
$h->finish;
$node->start;
is($node->safe_psql('postgres', $diff), '0', 'after a crash mid-load the tables are equal');
is($node->safe_psql('postgres', q{SELECT ddb_verify('qqt') IS NOT NULL}), 't',
	'ddb_verify is clean after the crash');
$node->safe_psql('postgres', 'SELECT txid_current()');
$node->safe_psql('postgres', 'VACUUM qqt');
$node->safe_psql('postgres', 'SELECT txid_current()');
$node->safe_psql('postgres', 'VACUUM qqt');
($ok, $stdout, $stderr) = DdbPgbench::run($node, \%scripts, \%weights,
	clients => 4, transactions => 200);
ok($ok, 'the load goes on after recovery');
is($node->safe_psql('postgres', $diff), '0', 'and the tables stay equal');
is($node->safe_psql('postgres', q{SELECT ddb_verify('qqt') IS NOT NULL}), 't',
	'ddb_verify is clean at the end');

$node->stop;
done_testing();
