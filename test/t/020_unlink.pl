# VACUUM unlinking emptied leaves, and splits reusing them, replay on a hot
# standby and after a crash (doc/design-unlink.md; ddb_tree.c, "Unlinking
# empty leaves" and "Reuse").
#
#   (a) a queue workload (rising sort keys, the oldest deleted) with VACUUMs
#       that unlink leaves: the standby returns the primary's rows, and
#       ddb_verify is clean on both, with deleted pages; from the third
#       round on, splits reuse the deleted pages and the file stops growing;
#   (b) a standby cursor that has read the leaf before a run of leaves the
#       primary then unlinks steps over the deleted pages when the unlink is
#       replayed under it, and returns the right rows;
#   (c) after a crash right after the unlinks, recovery leaves the same
#       tree: t holds exactly the rows of its heap shadow, ddb_verify is
#       clean, and the deleted pages are still deleted;
#   (e) (run before (d)) a writer whose cached row-id map leaf VACUUM freed
#       and a split reused writes its entries to a new leaf, on the primary
#       and on the standby;
#   (f) (run before (d)) VACUUM does not free a map leaf a waiting writer
#       has pinned for its own record;
#   (d) a standby cursor whose snapshot is older than an unlink: without
#       hot_standby_feedback the primary reuses the page, and the reuse's
#       conflict record cancels the cursor's session before it can read
#       the reused page; with hot_standby_feedback the primary does not
#       reuse the page (its file grows instead) and the cursor returns the
#       right rows;
#   (g) (between the two halves of (d)) freed map leaves are reused at
#       once, under older snapshots on both servers, and cancel no standby
#       session.
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

my ($primary, $standby) = DdbWal::primary_and_standby();

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
	$primary->safe_psql('postgres', "VACUUM t; VACUUM s;");
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

# (a) the queue, four rounds, each VACUUMed.  Round 1's VACUUM deletes
# pages, round 2's records them as reusable (their safexid has passed by
# then), and rounds 3 and 4 split into them: from round 3 on the file has
# the room the queue needs.
my @size;
for my $round (1 .. 4)
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
	$size[$round] = $primary->safe_psql('postgres', "SELECT pg_relation_size('t')");
}
my $deleted = verify_field($primary, 'deleted_pages');
my $leaves = verify_field($primary, 'leaf_pages');
ok($deleted > $leaves, "the deleted leaves ($deleted) outnumber the leaves left ($leaves)");
# (A round's splits take the deleted leaves the VACUUM before it found
# recyclable, and how many there are depends on how full the leaves are:
# with leaf prefixes the last round may need a page or two more than it
# finds.  Without reuse every round grows the file about as much as the
# one before, ~21 pages here, where the last round takes 4: a third leaves
# room for a leaf or two that another process's pin kept from reuse.)
cmp_ok($size[4] - $size[3], '<=', ($size[3] - $size[2]) / 3,
	"the file stops growing once deleted pages are reused ($size[2], $size[3], $size[4] bytes)");

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
$primary->safe_psql('postgres', "VACUUM u;");
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

# (e) row-id map leaves freed and their pages reused under a writer that
# cached one of them (ddb_rowid.c, "Freeing empty leaves"): w's rows take
# row ids from its batch, which the freed leaf covered, in a transaction
# that holds the table's lock from before the VACUUM, through a prepared
# statement, so no invalidation drops its cache.  Its entries (in the
# insert's own record with ddb's WAL, deferred to commit with Generic WAL)
# must go to a new leaf, not to the page the cached number now names.
$primary->safe_psql('postgres', q{CREATE TABLE m (pk text, sk text, item jsonb) USING ddb});
my $w = $primary->background_psql('postgres', on_error_stop => 0);
$w->query_safe(q{INSERT INTO m SELECT 'a', 'n' || i, '{}' FROM generate_series(1, 3) i});
$w->query_safe('BEGIN');
$w->query_safe('LOCK TABLE m IN ROW EXCLUSIVE MODE');
$w->query_safe(q{PREPARE more AS INSERT INTO m
	SELECT 'b', 'n' || i, jsonb_build_object('n', i) FROM generate_series(1, 70) i});
$primary->safe_psql('postgres', q{
	INSERT INTO m SELECT 'r' || (i % 5), 's' || i, '{}' FROM generate_series(1, 3000) i;
	DELETE FROM m;});
# (ddb_verify would wait for w's lock: VACUUM VERBOSE tells what it freed)
$primary->psql('postgres', 'VACUUM (VERBOSE) m', stderr => \my $verbose);
my ($freed) = $verbose =~ /(\d+) row-id map leaves freed/;
# row ids 0-63 are w's batch; the 3,000 rows' batches grow (64-1023 in
# batches of 64 to 512), then take whole map leaves (1,019 row ids each,
# 2038-5094: ddb_alloc_rowid): leaves 0-4 were all handed out, and all five
# are freed, w's leaf 0 among them
is($freed, 5, 'm: VACUUM freed the five emptied map leaves, the cached one among them');
$primary->safe_psql('postgres', 'SELECT txid_current()');
$primary->safe_psql('postgres', 'VACUUM m');
$primary->safe_psql('postgres', q{
	INSERT INTO m SELECT 'r' || (i % 5), 't' || i, '{}' FROM generate_series(1, 6000) i;
	DELETE FROM m WHERE sk LIKE 't%';});
$w->query_safe('EXECUTE more');
$w->query_safe('COMMIT');
$w->quit;
is($primary->safe_psql('postgres', q{SELECT ddb_verify('m')->>'deleted_pages'}), '0',
	'm: splits reused every freed page');
$primary->safe_psql('postgres', q{UPDATE m SET item = jsonb_build_object('u', 1)});
my $m_rows = q{SELECT count(*) FILTER (WHERE item = jsonb_build_object('u', 1)) || '/' || count(*)
	|| ' ' || (ddb_verify('m')->>'live') FROM m};
is($primary->safe_psql('postgres', $m_rows), '70/70 70',
	"m: the cached writer's rows are found by TID, and ddb_verify is clean");
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $m_rows), '70/70 70', 'm: the standby has them too');

# (f) VACUUM does not free a map leaf that a writer has pinned for its own
# record (ddb_map_pin_leaf, ddb's own WAL): the cleanup lock it takes fails
# while the pin is held.  w2's update waits for h's row lock holding the
# pin of map leaf 0, the leaf of its new version's row id (its batch,
# taken by its first insert), which is empty and whose row ids were all
# handed out, like leaves 1 to 3 (leaf 4 holds 'target'; the batches are
# those of (e)).  h rolls back, so w2's update goes on with the leaf it
# pinned.  With Generic WAL nothing is pinned (the entry is deferred to
# commit, and written to a new leaf 0): all four leaves are freed.
$primary->safe_psql('postgres', q{CREATE TABLE m2 (pk text, sk text, item jsonb) USING ddb});
my $w2 = $primary->background_psql('postgres', on_error_stop => 0);
$w2->query_safe(q{INSERT INTO m2 VALUES ('w', 'w', '{}')});
$w2->query_safe('BEGIN');
$w2->query_safe('LOCK TABLE m2 IN ROW EXCLUSIVE MODE');
$w2->query_safe(q{PREPARE upd(text) AS UPDATE m2 SET item = jsonb_build_object('by', 'w2') WHERE pk = $1 AND sk = $1});
$w2->query_safe(q{EXECUTE upd('none')});
$primary->safe_psql('postgres', q{
	INSERT INTO m2 SELECT 'r' || (i % 5), 's' || i, '{}' FROM generate_series(1, 3000) i;
	INSERT INTO m2 VALUES ('target', 'target', '{}');
	DELETE FROM m2 WHERE pk <> 'target';});
my $h = $primary->background_psql('postgres', on_error_stop => 0);
$h->query_safe('BEGIN');
$h->query_safe(q{UPDATE m2 SET item = jsonb_build_object('by', 'h') WHERE pk = 'target' AND sk = 'target'});
$w2->query_until(qr/sent/, "\\echo sent\nEXECUTE upd('target');\n");
$primary->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_locks WHERE locktype = 'transactionid' AND NOT granted})
  or die "w2 never waited for h";
$primary->psql('postgres', 'VACUUM (VERBOSE) m2', stderr => \my $verbose2);
my ($freed2) = $verbose2 =~ /(\d+) row-id map leaves freed/;
is($freed2, DdbWal::mode() eq 'custom' ? 3 : 4,
	'm2: VACUUM skips the map leaf a waiting writer has pinned (ddb\'s WAL), frees the rest');
$h->query_safe('ROLLBACK');
$h->quit;
$w2->query_safe('COMMIT');
$w2->quit;
is($primary->safe_psql('postgres', q{SELECT item->>'by', (ddb_verify('m2')->>'live')::int FROM m2}),
	'w2|1', "m2: the writer's update went on into the leaf it pinned, and ddb_verify is clean");

# (d) a standby snapshot older than an unlink, and the reuse of the page
sub standby_cursor
{
	my ($table) = @_;
	$primary->safe_psql('postgres', qq{
		CREATE TABLE $table ("PK" text, "SK" numeric, item jsonb) USING ddb;
		INSERT INTO $table SELECT 'a', i, jsonb_build_object('pad', repeat('x', 1000))
			FROM generate_series(1, 300) i;
		DELETE FROM $table WHERE "SK" BETWEEN 11 AND 290;
	});
	$primary->wait_for_catchup($standby);
	my $session = $standby->background_psql('postgres', on_error_stop => 0);
	$session->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
	$session->query_safe(qq{DECLARE c CURSOR FOR SELECT "SK" FROM $table
		WHERE "PK" = 'a' AND "SK" >= 10 ORDER BY "SK"});
	is($session->query_safe('FETCH 1 FROM c'), '10', "$table: the standby cursor read its first leaf");
	return $session;
}

# Unlink the emptied leaves, let xids pass them, VACUUM again (which records
# the recyclable ones), then split leaves by new items.
sub unlink_and_refill
{
	my ($table) = @_;
	$primary->safe_psql('postgres', "VACUUM $table");
	$primary->safe_psql('postgres', 'SELECT txid_current()');
	$primary->safe_psql('postgres', "VACUUM $table");
	my $before = $primary->safe_psql('postgres', "SELECT pg_relation_size('$table')");
	$primary->safe_psql('postgres', qq{
		INSERT INTO $table SELECT 'b' || i, 1, jsonb_build_object('pad', repeat('y', 1000))
			FROM generate_series(1, 100) i});
	return $primary->safe_psql('postgres', "SELECT pg_relation_size('$table')") > $before;
}

$standby->append_conf('postgresql.conf', "max_standby_streaming_delay = 0
");
$standby->reload;
my $logpos = -s $standby->logfile;
$session = standby_cursor('w1');
ok(!unlink_and_refill('w1'), 'w1: without hot_standby_feedback the primary reuses the deleted pages');
$primary->wait_for_catchup($standby);
$standby->wait_for_log(qr/terminating connection due to conflict with recovery/, $logpos);
pass('w1: the reuse record cancelled the standby session whose snapshot predates the unlink');
$session->quit;

# (g) freed row-id map leaves are reused at once, with no conflict for
# hot standbys: their holders check them under the lock (ddb_rowid.c,
# "Freeing").  The VACUUM that frees m3's emptied map leaves records them;
# a standby session then takes a snapshot (older than any xid that could
# pass the leaves' safexid) and a primary session holds one too; new rows'
# splits and map leaves take the three freed pages, and the standby
# session, under max_standby_streaming_delay = 0, is not cancelled.  (Tree
# leaves the same VACUUM unlinked are not recorded yet: no pages but the
# map leaves are free when the rows go in.)
$primary->safe_psql('postgres', q{
	CREATE TABLE m3 (pk text, sk text, item jsonb) USING ddb WITH (autovacuum_enabled = false);
	INSERT INTO m3 SELECT 'r' || (i % 5), 's' || i, '{}' FROM generate_series(1, 3000) i;
	INSERT INTO m3 VALUES ('keep', 'keep', '{}');
	DELETE FROM m3 WHERE pk <> 'keep';});
$primary->psql('postgres', 'VACUUM (VERBOSE) m3', stderr => \my $verbose3);
my ($freed3) = $verbose3 =~ /(\d+) row-id map leaves freed/;
# row ids 0-959 in growing batches, then whole map leaves (1,019 row ids
# each) from 1019: leaves 0 to 2 were all handed out and emptied; leaf 3
# holds 'keep'
is($freed3, 3, 'm3: VACUUM freed the three emptied map leaves');
my $deleted3 = q{SELECT (v->>'deleted_pages')::int FROM ddb_verify('m3') v};
my $before3 = $primary->safe_psql('postgres', $deleted3);
$primary->wait_for_catchup($standby);
$logpos = -s $standby->logfile;
my $old3 = $standby->background_psql('postgres', on_error_stop => 0);
$old3->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
is($old3->query_safe('SELECT count(*) FROM m3'), '1', 'm3: a standby snapshot taken after the free');
my $hold3 = $primary->background_psql('postgres', on_error_stop => 0);
$hold3->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$hold3->query_safe('SELECT count(*) FROM m3');
$primary->safe_psql('postgres', q{
	INSERT INTO m3 SELECT 'n' || (i % 5), 's' || i, '{}' FROM generate_series(1, 2000) i});
is($before3 - $primary->safe_psql('postgres', $deleted3), 3,
	'm3: new rows reused the three freed map leaves while snapshots older than their free live');
$primary->wait_for_catchup($standby);
is($old3->query('SELECT count(*) FROM m3'), '1',
	'm3: the standby session whose snapshot predates the reuse still runs');
ok(!$standby->log_contains(qr/conflict with recovery/, $logpos),
	'm3: no recovery conflict on the standby');
is($standby->safe_psql('postgres', 'SELECT count(*) FROM m3'), '2001', 'm3: the standby has the new rows');
$old3->query('COMMIT');
$old3->quit;
$hold3->query_safe('COMMIT');
$hold3->quit;

$standby->append_conf('postgresql.conf',
	"hot_standby_feedback = on
wal_receiver_status_interval = 1s
");
$standby->reload;
$session = standby_cursor('w2');
# the standby's feedback must carry the cursor's xmin (it may carry an
# older one from before the table was filled, which would keep VACUUM from
# removing the deleted rows at all)
my $xmin = $session->query_safe(
	'SELECT backend_xmin FROM pg_stat_activity WHERE pid = pg_backend_pid()');
$primary->poll_query_until('postgres',
	qq{SELECT backend_xmin::text = '$xmin' FROM pg_stat_replication})
  or die "the standby never reported its xmin $xmin";
ok(unlink_and_refill('w2'), 'w2: with hot_standby_feedback the primary extends the file instead');
is($primary->safe_psql('postgres', q{
	SELECT (v->>'deleted_pages')::int > 30 AND (v->>'recyclable_pages')::int = 0 FROM ddb_verify('w2') v}),
	't', 'w2: the deleted pages are not recyclable while the standby snapshot lives');
$primary->wait_for_catchup($standby);
is($session->query_safe('FETCH ALL FROM c'), join("\n", 291 .. 300),
	'w2: the standby cursor steps over the deleted leaves to the right rows');
$session->query_safe('COMMIT');
$session->quit;

done_testing();
