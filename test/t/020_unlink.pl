# VACUUM unlinking emptied leaves (doc/design-unlink.md; for now behind the
# checks-build setting ddb.check_vacuum_unlink) replays on a hot standby and
# after a crash.
#
#   (a) a queue workload (rising sort keys, the oldest deleted) with VACUUMs
#       that unlink leaves: the standby returns the primary's rows, and
#       ddb_verify is clean on both, with deleted pages;
#   (b) a standby cursor that has read the leaf before a run of leaves the
#       primary then unlinks steps over the deleted pages when the unlink is
#       replayed under it, and returns the right rows;
#   (c) after a crash right after the unlinks, recovery leaves the same
#       tree: t holds exactly the rows of its heap shadow, ddb_verify is
#       clean, and the deleted pages are still deleted.
#
# DDB_TAP_WAL=custom runs it with ddb preloaded (test/t/DdbWal.pm), where
# the unlink is ddb's own XLOG_DDB_UNLINK record, replayed under
# wal_consistency_checking = 'ddb'; otherwise Generic WAL.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DdbWal;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
DdbWal::configure($primary);
$primary->append_conf('postgresql.conf', "autovacuum = off\n");
# ddb's own records, the unlink's among them, replay to the primary's bytes
$primary->append_conf('postgresql.conf', "wal_consistency_checking = 'ddb'\n")
  if DdbWal::mode() eq 'custom';
$primary->start;
DdbWal::check_mode($primary);
$primary->safe_psql('postgres', q{
	CREATE EXTENSION ddb;
	CREATE TABLE t ("PK" text, "SK" numeric, item jsonb) USING ddb;
	CREATE TABLE s ("PK" text, "SK" numeric, item jsonb);
});
$primary->backup('bk');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'bk', has_streaming => 1);
$standby->start;

# One round of the queue: 'cycles' inserts of rising sort keys over four
# partitions, each deleting its partition's key 400 below, in t and s.
my $next = 0;
sub queue_round
{
	my ($cycles) = @_;
	my ($from, $to) = ($next + 1, $next + $cycles);
	$next = $to;
	$primary->safe_psql('postgres', qq{
		DO \$\$
		BEGIN
			FOR n IN $from .. $to LOOP
				INSERT INTO t VALUES ('q' || (n % 4), n, jsonb_build_object('pad', repeat('x', 300)));
				INSERT INTO s VALUES ('q' || (n % 4), n, jsonb_build_object('pad', repeat('x', 300)));
				DELETE FROM t WHERE "PK" = 'q' || (n % 4) AND "SK" = n - 400;
				DELETE FROM s WHERE "PK" = 'q' || (n % 4) AND "SK" = n - 400;
			END LOOP;
		END \$\$;
	});
	return;
}

sub vacuum_unlink
{
	$primary->safe_psql('postgres',
		"SET ddb.check_vacuum_unlink = on; VACUUM t; VACUUM s;");
	return;
}

sub verify_field
{
	my ($node, $field) = @_;
	return $node->safe_psql('postgres', "SELECT ddb_verify('t')->>'$field'");
}

my $rows = q{SELECT string_agg("PK" || ':' || "SK", ',' ORDER BY "PK", "SK") FROM t};
my $firsts = q{SELECT string_agg(f, ',') FROM
	(SELECT (SELECT "SK" FROM t WHERE "PK" = p ORDER BY "SK" LIMIT 1)::text AS f
	 FROM unnest(ARRAY['q0', 'q1', 'q2', 'q3']) p) a};

# (a) the queue, three rounds, each VACUUMed with unlinking
for my $round (1 .. 3)
{
	queue_round(1500);
	vacuum_unlink();
	$primary->wait_for_catchup($standby);
	is($standby->safe_psql('postgres', $rows), $primary->safe_psql('postgres', $rows),
		"round $round: the standby returns the primary's rows");
	is($standby->safe_psql('postgres', $firsts), $primary->safe_psql('postgres', $firsts),
		"round $round: the standby finds each partition's first item");
	DdbWal::same_rows($primary, "round $round, primary");
	ok(verify_field($standby, 'deleted_pages') > 0,
		"round $round: ddb_verify is clean on the standby, with deleted pages");
}
my $deleted = verify_field($primary, 'deleted_pages');
my $leaves = verify_field($primary, 'leaf_pages');
ok($deleted > $leaves, "the unlinked leaves ($deleted) outnumber the leaves left ($leaves)");

# (b) a standby cursor whose next leaves are unlinked by replay under it
$primary->safe_psql('postgres', q{
	CREATE TABLE u ("PK" text, "SK" numeric, item jsonb) USING ddb;
	INSERT INTO u SELECT 'a', i, jsonb_build_object('pad', repeat('x', 1000)) FROM generate_series(1, 300) i;
	DELETE FROM u WHERE "SK" BETWEEN 11 AND 290;
});
$primary->wait_for_catchup($standby);
my $session = $standby->background_psql('postgres', on_error_stop => 0);
$session->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$session->query_safe(
	q{DECLARE c CURSOR FOR SELECT "SK" FROM u WHERE "PK" = 'a' AND "SK" >= 10 ORDER BY "SK"});
is($session->query_safe('FETCH 1 FROM c'), '10', 'the standby cursor read its first leaf');
$primary->safe_psql('postgres', "SET ddb.check_vacuum_unlink = on; VACUUM u;");
$primary->wait_for_catchup($standby);
ok($standby->safe_psql('postgres', q{SELECT ddb_verify('u')->>'deleted_pages'}) > 0,
	'the unlink of the leaves after it was replayed');
is($session->query_safe(q{FETCH ALL FROM c}), join("\n", 291 .. 300),
	'the standby cursor steps over the deleted leaves to the right rows');
$session->query_safe('COMMIT');
$session->quit;

# (c) crash right after unlinks
queue_round(1000);
vacuum_unlink();
$deleted = verify_field($primary, 'deleted_pages');
$primary->stop('immediate');
$primary->start;
DdbWal::same_rows($primary, 'after the crash');
is(verify_field($primary, 'deleted_pages'), $deleted,
	'after the crash the deleted pages are still deleted');
queue_round(500);
vacuum_unlink();
DdbWal::same_rows($primary, 'writes and unlinks after the crash');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $rows), $primary->safe_psql('postgres', $rows),
	'the standby follows the recovered primary');

done_testing();
