# The visibility map of ddb's leaves (src/engine/ddb_vismap.c) through
# replication and crashes: VACUUM's marks and the clears that every change
# of a marked leaf logs before it are replayed in order, so a standby, and
# a primary recovering from an immediate stop, never hold a marked leaf
# with a version that not every snapshot sees (ddb_verify fails on one),
# and the next VACUUM still removes every dead version (it skips marked
# leaves: a mark left behind would keep it from them).  The standby is
# made from a backup taken before the table had a map, so the first record
# of each map page must bring the page with it.
#
# DDB_TAP_WAL=custom runs it with ddb preloaded: ddb's own WAL records for
# the leaves and for the map's marks and clears (DDB_EXT_VM_SET and
# DDB_EXT_VM_CLEAR); without, Generic WAL records of the map page.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DdbWal;

my ($primary, $standby) = DdbWal::primary_and_standby();

# marks: "all_visible_leaves/leaf_pages/items-live" of ddb_verify('t'),
# where leaf_pages counts the leaves with items: VACUUM marks no empty leaf
# (it tries to unlink them instead, and one that is the first or last child
# of its parent stays, empty, until it can)
sub marks
{
	my ($node) = @_;
	return $node->safe_psql('postgres', q{
		SELECT format('%s/%s/%s', v->>'all_visible_leaves',
					  (v->>'leaf_pages')::int - (v->>'empty_leaves')::int,
					  (v->>'items')::int - (v->>'live')::int)
		  FROM ddb_verify('t') v});
}

sub vacuum
{
	my ($node) = @_;
	$node->safe_psql('postgres', 'VACUUM t');
	return;
}

$primary->safe_psql('postgres', q{
	INSERT INTO t SELECT 'p' || (i % 80), i, jsonb_build_object('pad', repeat('x', 200))
	  FROM generate_series(1, 8000) i;
	INSERT INTO s SELECT * FROM t;
});
vacuum($primary);
my ($marked, $leaves) = split m{/}, marks($primary);
cmp_ok($leaves, '>', 100, 'the table has a few hundred leaves');
is($marked, $leaves, 'VACUUM marked every leaf');
$primary->wait_for_catchup($standby);
is(marks($standby), marks($primary), 'the standby replayed the marks into a map it did not have');
DdbWal::same_rows($standby, 'standby after the first VACUUM');

# Changes of every kind over some of the marked leaves: each clears the
# mark first.  ddb_verify on the standby fails on a marked leaf that holds
# a version not every snapshot sees.
sub changes
{
	my ($a, $b, $c, $d, $e) = @_;
	return qq{
	DELETE FROM t WHERE "PK" IN ('p$a', 'p$b');
	DELETE FROM s WHERE "PK" IN ('p$a', 'p$b');
	UPDATE t SET item = item || '{"u": 1}' WHERE "PK" = 'p$c';
	UPDATE s SET item = item || '{"u": 1}' WHERE "PK" = 'p$c';
	INSERT INTO t SELECT 'p$d', 100000 * $d + i, jsonb_build_object('pad', repeat('y', 200))
	  FROM generate_series(1, 200) i;
	INSERT INTO s SELECT * FROM t WHERE "PK" = 'p$d' AND "SK" > 100000 * $d;
	SELECT ddb_put_item('t', '{"PK": "p$e", "SK": $e, "n": 1}');
	DELETE FROM s WHERE "PK" = 'p$e' AND "SK" = $e;
	INSERT INTO s VALUES ('p$e', $e, '{"n": 1}');
	};
}
my $changes = changes(3, 4, 5, 6, 7);
$primary->safe_psql('postgres', $changes);
($marked, $leaves) = split m{/}, marks($primary);
cmp_ok($marked, '<', $leaves, 'the changes unmarked the leaves they changed');
$primary->wait_for_catchup($standby);
is(marks($standby), marks($primary), 'the standby replayed the clears');
DdbWal::same_rows($standby, 'standby after the changes');

# The next VACUUM reads the unmarked leaves, removes the dead versions and
# marks them again, on both.
vacuum($primary);
($marked, $leaves, my $dead) = split m{/}, marks($primary);
is("$marked/$dead", "$leaves/0", 'VACUUM removed every dead version and marked every leaf');
$primary->wait_for_catchup($standby);
is(marks($standby), marks($primary), 'the standby agrees');
DdbWal::same_rows($standby, 'standby after the second VACUUM');

# Immediate stops.  Changes committed after a checkpoint (so that the map
# page's first record since comes with its image) and then a crash: the
# clears are replayed before the changes.  A VACUUM and then a crash: its
# records may or may not have reached the disk (it commits nothing), and
# either way the table is consistent, and the next VACUUM finishes it.
$primary->safe_psql('postgres', 'CHECKPOINT');
$primary->safe_psql('postgres', changes(13, 14, 15, 16, 17));
$primary->stop('immediate');
$primary->start;
($marked, $leaves) = split m{/}, marks($primary);
cmp_ok($marked, '<', $leaves, 'after a crash the changed leaves are unmarked');
DdbWal::same_rows($primary, 'primary after a crash with changes since the marks');
vacuum($primary);
$primary->stop('immediate');
$primary->start;
DdbWal::same_rows($primary, 'primary after a crash right after a VACUUM');
vacuum($primary);
($marked, $leaves, $dead) = split m{/}, marks($primary);
is("$marked/$dead", "$leaves/0", 'the next VACUUM removed every dead version and marked every leaf');
$primary->wait_for_catchup($standby);
is(marks($standby), marks($primary), 'the standby agrees after the primary\'s crashes');
DdbWal::same_rows($standby, 'standby after the primary\'s crashes');

# A VACUUM that skips marked leaves after a crash still finds the dead
# versions of changed ones: delete, crash, VACUUM.
$primary->safe_psql('postgres', q{
	DELETE FROM t WHERE "PK" = 'p20';
	DELETE FROM s WHERE "PK" = 'p20';
});
$primary->stop('immediate');
$primary->start;
vacuum($primary);
($marked, $leaves, $dead) = split m{/}, marks($primary);
is("$marked/$dead", "$leaves/0", 'VACUUM after a crash removed the versions deleted before it');
DdbWal::same_rows($primary, 'primary at the end');

$standby->stop;
$primary->stop;
done_testing();
