# Crash during concurrent UPDATE/DELETE/INSERT on a ddb table.
#
# Every transaction applies the same change to a ddb table and to a heap
# "shadow" table, so after a crash (immediate stop) and recovery the two must
# hold exactly the same rows: what committed is there, what did not is not.
# Then ddb_verify must be clean, VACUUM must work, and rows must still be
# reachable by TID (UPDATE after recovery).
#
# DDB_TAP_WAL=custom runs it with ddb preloaded, so ddb tables are logged
# with ddb's own WAL records (test/t/DdbWal.pm); test/run.sh runs both.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DdbWal;
use IPC::Run;

my $node = PostgreSQL::Test::Cluster->new('crash_modify');
$node->init;
$node->append_conf('postgresql.conf', "max_connections = 40\n"
	# (the test's own VACUUMs must find no other snapshot: an autovacuum
	# ANALYZE's would keep versions it expects gone)
	. "autovacuum = off\n");
DdbWal::configure($node);
$node->start;
DdbWal::check_mode($node);

$node->safe_psql('postgres', q{
	CREATE EXTENSION ddb;
	CREATE TABLE t (pk text, sk text, item jsonb) USING ddb;
	CREATE TABLE h (pk text, sk text, item jsonb, PRIMARY KEY (pk, sk));
	INSERT INTO t SELECT 'hot' || (i % 50), 's' || i, jsonb_build_object('n', 0)
	  FROM generate_series(1, 2000) i;
	INSERT INTO h SELECT * FROM t;
});

# Clients: a shared set of keys updated by everyone (concurrent updates
# wait for each other), plus per-client keys that are inserted and deleted.
my $script = $node->basedir . '/mix.sql';
open my $fh, '>', $script or die;
print $fh <<'SQL';
\set k random(1, 2000)
\set c random(1, 20000)
\set op random(1, 10)
BEGIN;
UPDATE t SET item = jsonb_build_object('n', (item->>'n')::int + 1, 'by', :client_id) WHERE pk = 'hot' || (:k % 50) AND sk = 's' || :k;
UPDATE h SET item = jsonb_build_object('n', (item->>'n')::int + 1, 'by', :client_id) WHERE pk = 'hot' || (:k % 50) AND sk = 's' || :k;
INSERT INTO t SELECT 'c' || :client_id, 'k' || :c, jsonb_build_object('pad', repeat('x', :op * 40)) WHERE NOT EXISTS (SELECT 1 FROM h WHERE pk = 'c' || :client_id AND sk = 'k' || :c);
INSERT INTO h SELECT 'c' || :client_id, 'k' || :c, jsonb_build_object('pad', repeat('x', :op * 40)) WHERE NOT EXISTS (SELECT 1 FROM h WHERE pk = 'c' || :client_id AND sk = 'k' || :c);
DELETE FROM t WHERE pk = 'c' || :client_id AND sk = 'k' || ((:c * 7) % 20000);
DELETE FROM h WHERE pk = 'c' || :client_id AND sk = 'k' || ((:c * 7) % 20000);
END;
SQL
close $fh;

for my $round (1 .. 2)
{
	my ($out, $err) = ('', '');
	my $bench = IPC::Run::start(
		[
			'pgbench', '-n', '-c', '6', '-j', '2', '-T', '60',
			'-f', $script, '-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', \$out, '2>', \$err);

	# let it run, then crash in the middle of the traffic
	sleep(4);
	$node->stop('immediate');
	$bench->finish;
	$node->start;

	my $diff = $node->safe_psql('postgres', q{
		SELECT (SELECT count(*) FROM (SELECT * FROM t EXCEPT SELECT * FROM h) a) +
		       (SELECT count(*) FROM (SELECT * FROM h EXCEPT SELECT * FROM t) b)});
	is($diff, '0', "round $round: ddb table equals the heap shadow after the crash");
	my $n = $node->safe_psql('postgres', 'SELECT count(*) FROM t');
	cmp_ok($n, '>', 2000, "round $round: inserts committed before the crash survived");
	my $verify = $node->safe_psql('postgres', q{SELECT ddb_verify('t') IS NOT NULL});
	is($verify, 't', "round $round: ddb_verify is clean after recovery");
}

# Versions stay reachable by TID; VACUUM prunes and the tree stays valid.
$node->safe_psql('postgres', q{
	UPDATE t SET item = item || '{"after": true}' WHERE pk = 'hot7';
	UPDATE h SET item = item || '{"after": true}' WHERE pk = 'hot7';
	DELETE FROM t WHERE pk = 'hot8';
	DELETE FROM h WHERE pk = 'hot8';
	VACUUM t;
});
is( $node->safe_psql('postgres', q{
		SELECT (SELECT count(*) FROM (SELECT * FROM t EXCEPT SELECT * FROM h) a) +
		       (SELECT count(*) FROM (SELECT * FROM h EXCEPT SELECT * FROM t) b)}),
	'0', 'ddb and heap agree after updates and VACUUM');
is( $node->safe_psql('postgres',
		q{SELECT (v->>'items') = (v->>'live') FROM ddb_verify('t') v}),
	't', 'VACUUM left only live versions and ddb_verify is clean');

$node->stop;
done_testing();
