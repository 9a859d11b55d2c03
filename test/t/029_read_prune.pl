# Reads clean up behind them (ddb_scan.c, clean_behind; ddb_vacuum.c,
# ddb_prune_read_leaf): the prunes and unlinks a primary's read makes
# replay on a hot standby and after a crash, and a standby's reads of the
# same dead versions change nothing (they may not write WAL).
#
#   (a) a partition whose first 290 of 300 items are deleted: the
#       standby's reads walk the dead versions, return the right rows and
#       leave the versions (its ddb_verify counts them all);
#   (b) the primary's read prunes them and unlinks the emptied leaves; the
#       standby replays that to the same tree: the same rows, versions and
#       deleted pages, and ddb_verify clean on both;
#   (c) after a crash right after such a read, recovery leaves the same
#       tree;
#   (d) a standby snapshot that still sees the versions a primary's read
#       removes: without hot_standby_feedback the prune's conflict horizon
#       cancels the standby session before replay removes them under it;
#       with hot_standby_feedback the primary's read leaves them, and the
#       standby session goes on seeing every item.
#
# DDB_TAP_WAL=custom runs it with ddb preloaded (test/t/DdbWal.pm), where
# the prune and the unlink are ddb's own records, replayed under
# wal_consistency_checking = 'ddb'; otherwise Generic WAL.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DdbWal;

my ($primary, $standby) = DdbWal::primary_and_standby();

my $fill = q{
	INSERT INTO s SELECT p, i, jsonb_build_object('pad', repeat('x', 1000))
		FROM unnest(ARRAY['%1$s', '%1$s2']) p, generate_series(1, 300) i;
	INSERT INTO t SELECT * FROM s WHERE "PK" LIKE '%1$s%%';
	DELETE FROM t WHERE "PK" = '%1$s' AND "SK" <= 290;
	DELETE FROM s WHERE "PK" = '%1$s' AND "SK" <= 290;
};
my $read = q{SELECT string_agg("SK"::text, ',' ORDER BY "SK") FROM (SELECT "SK" FROM t WHERE "PK" = '%s' ORDER BY "SK" LIMIT 3) r};
my $shape = q{SELECT (v->>'items') || '/' || (v->>'live') || '/' || (v->>'deleted_pages') FROM ddb_verify('t') v};
my $same = q{SELECT (SELECT array_agg(("PK", "SK", item)::text ORDER BY "PK", "SK") FROM t)
	= (SELECT array_agg(("PK", "SK", item)::text ORDER BY "PK", "SK") FROM s)};

# (a) the standby reads the dead versions first
$primary->safe_psql('postgres', sprintf($fill, 'a'));
$primary->wait_for_catchup($standby);
my $logpos = -s $standby->logfile;
is($standby->safe_psql('postgres', sprintf($read, 'a')), '291,292,293',
	'a: the standby reads the partition past its dead versions');
is($standby->safe_psql('postgres', sprintf($read, 'a')), '291,292,293',
	'a: ... twice');
is($standby->safe_psql('postgres', $shape), '600/310/0',
	'a: the standby\'s reads left every version where it was');
ok(!$standby->log_contains(qr/ERROR|cannot/, $logpos), 'a: no error in the standby\'s log');

# (b) the primary's read prunes and unlinks; the standby replays it
is($primary->safe_psql('postgres', sprintf($read, 'a')), '291,292,293',
	'b: the primary reads the same rows');
# (A leaf whose lock another process holds as the read passes -- the
# checkpointer writing it -- is skipped, and the next read takes it; a read
# that never prunes fails all three tries.)
my ($after, $items, $live, $deleted);
for my $try (1 .. 3)
{
	$primary->safe_psql('postgres', sprintf($read, 'a')) if $try > 1;
	$after = $primary->safe_psql('postgres', $shape);
	($items, $live, $deleted) = split m{/}, $after;
	last if $items < 320;
}
ok($items < 320 && $live == 310 && $deleted > 30,
	"b: the primary's read pruned the dead versions and unlinked their leaves ($after)");
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $shape), $after, 'b: the standby replayed the same tree');
is($standby->safe_psql('postgres', sprintf($read, 'a')), '291,292,293', 'b: the standby reads the same rows');
is($standby->safe_psql('postgres', $same), 't', 'b: the standby holds the primary\'s rows');

# (c) a crash right after another read that cleans up
$primary->safe_psql('postgres', sprintf($fill, 'b'));
is($primary->safe_psql('postgres', sprintf($read, 'b')), '291,292,293', 'c: the read before the crash');
my $before_crash = $primary->safe_psql('postgres', $shape);
$primary->stop('immediate');
$primary->start;
is($primary->safe_psql('postgres', $shape), $before_crash, 'c: recovery leaves the same tree');
is($primary->safe_psql('postgres', $same), 't', 'c: t holds the rows of its heap shadow');
is($primary->safe_psql('postgres', sprintf($read, 'b')), '291,292,293', 'c: the read after the crash');
# That read may clean up what the first left (its prune takes each leaf's
# lock without waiting, and the checkpointer writing the leaf holds it),
# so the standby is compared with the primary's tree as it is now.
my $after_crash = $primary->safe_psql('postgres', $shape);
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $shape), $after_crash, 'c: and so does the standby');

# (d) standby snapshots older than the delete a primary's read cleans up
my $count_c = q{SELECT count(*) FROM t WHERE "PK" = 'c'};
sub standby_snapshot
{
	$primary->safe_psql('postgres', q{
		INSERT INTO t SELECT 'c', i, jsonb_build_object('pad', repeat('z', 1000))
			FROM generate_series(1, 300) i});
	$primary->wait_for_catchup($standby);
	my $session = $standby->background_psql('postgres', on_error_stop => 0);
	$session->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
	is($session->query_safe($count_c), '300', 'd: the standby session sees the 300 items');
	return $session;
}
sub delete_and_read
{
	$primary->safe_psql('postgres', q{DELETE FROM t WHERE "PK" = 'c'});
	$primary->safe_psql('postgres', $count_c);
	$primary->wait_for_catchup($standby);
}

$standby->append_conf('postgresql.conf', "max_standby_streaming_delay = 0\n");
$standby->reload;
$logpos = -s $standby->logfile;
my $session = standby_snapshot();
my $versions = $primary->safe_psql('postgres', q{SELECT (ddb_verify('t') ->> 'items')::int});
delete_and_read();
cmp_ok($primary->safe_psql('postgres', q{SELECT (ddb_verify('t') ->> 'items')::int}), '<', $versions,
	'd: without hot_standby_feedback the primary\'s read removes the versions');
$standby->wait_for_log(qr/terminating connection due to conflict with recovery/, $logpos);
pass('d: the prune\'s conflict horizon cancelled the standby session that still saw them');
$session->quit;

$standby->append_conf('postgresql.conf', "hot_standby_feedback = on\nwal_receiver_status_interval = 1s\n");
$standby->reload;
$session = standby_snapshot();
my $xmin = $session->query_safe(
	'SELECT backend_xmin FROM pg_stat_activity WHERE pid = pg_backend_pid()');
$primary->poll_query_until('postgres',
	qq{SELECT backend_xmin::text = '$xmin' FROM pg_stat_replication})
  or die "the standby never reported its xmin $xmin";
$logpos = -s $standby->logfile;
$versions = $primary->safe_psql('postgres', q{SELECT (ddb_verify('t') ->> 'items')::int});
delete_and_read();
is($primary->safe_psql('postgres', q{SELECT (ddb_verify('t') ->> 'items')::int}), $versions,
	'd: with hot_standby_feedback the primary\'s read leaves the versions');
is($session->query_safe($count_c), '300', 'd: and the standby session still sees all 300');
ok(!$standby->log_contains(qr/conflict with recovery/, $logpos), 'd: no conflict on the standby');
$session->query_safe('COMMIT');
$session->quit;

done_testing();
