# Hot standby safety of VACUUM, and of the prune an update makes, on a
# ddb table.
#
# Generic WAL records carry no conflict horizon.  ddb logs one before it
# removes versions, so a standby query whose snapshot can still see the
# removed versions is cancelled instead of silently missing rows.  The
# standby query below must either still count every row or be cancelled;
# it must never see fewer rows.
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

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
DdbWal::configure($primary);
# (an autovacuum ANALYZE's snapshot would keep the test's VACUUM from
# removing the deleted versions it counts)
$primary->append_conf('postgresql.conf', "autovacuum = off\n");
$primary->start;
DdbWal::check_mode($primary);
$primary->safe_psql('postgres', q{
	CREATE EXTENSION ddb;
	CREATE TABLE t (pk text, sk text, item jsonb) USING ddb;
	INSERT INTO t SELECT 'p' || (i % 100), 's' || i, jsonb_build_object('n', i)
	  FROM generate_series(1, 5000) i;
});
$primary->backup('bk');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'bk', has_streaming => 1);
$standby->append_conf('postgresql.conf', qq{
hot_standby_feedback = off
max_standby_streaming_delay = 1s
});
$standby->start;
$primary->wait_for_catchup($standby);

# A long-running standby transaction with a snapshot that sees 5000 rows.
my $session = $standby->background_psql('postgres', on_error_stop => 0);
$session->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
is($session->query_safe('SELECT count(*) FROM t'), '5000', 'standby snapshot sees all rows');

# The primary deletes half and vacuums them away.
$primary->safe_psql('postgres', q{DELETE FROM t WHERE (item->>'n')::int % 2 = 0});
$primary->safe_psql('postgres', 'VACUUM t');
is( $primary->safe_psql('postgres',
		q{SELECT (v->>'items')::int FROM ddb_verify('t') v}),
	'2500', 'primary VACUUM removed the deleted versions');
$primary->wait_for_catchup($standby);

# Same transaction, same snapshot: all rows, or cancelled (an idle
# transaction is terminated, a running query cancelled). Never 2500.
my ($out, $failed);
my $died = !eval {
	($out, $failed) = $session->query('SELECT count(*) FROM t');
	1;
};
if ($died || $failed)
{
	ok( $standby->log_contains(qr/conflict with recovery/),
		'the standby transaction was cancelled by the recovery conflict');
}
else
{
	is($out, '5000', 'the standby query still sees every row of its snapshot');
}
eval { $session->quit; };

# New transactions on the standby see the primary's state.
is($standby->safe_psql('postgres', 'SELECT count(*) FROM t'), '2500',
	'a new standby snapshot sees the deletes');
is($standby->safe_psql('postgres', q{SELECT (ddb_verify('t')->>'items')::int}),
	'2500', 'ddb_verify is clean on the standby');

# The same for a prune that an update makes on its own leaf (a hot item,
# updated one transaction at a time until its leaf is full of its dead
# versions; with ddb preloaded the prune is part of the update's record):
# a standby snapshot that still sees the first version keeps seeing it or
# is cancelled, never finds the item gone.
$primary->safe_psql('postgres', q{
	CREATE TABLE h (pk text, sk text, item jsonb) USING ddb;
	INSERT INTO h VALUES ('hot', 'x', '{"n": 0}');
});
$primary->wait_for_catchup($standby);
my $logstart = -s $standby->logfile;
$session = $standby->background_psql('postgres', on_error_stop => 0);
$session->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
is($session->query_safe(q{SELECT item->>'n' FROM h}), '0', 'standby snapshot sees the hot item\'s first version');
$primary->safe_psql('postgres', q{
	DO $$
	BEGIN
		FOR i IN 1..120 LOOP
			UPDATE h SET item = jsonb_build_object('n', i, 'pad', repeat('h', 300));
			COMMIT;
		END LOOP;
	END $$;
});
cmp_ok($primary->safe_psql('postgres', q{SELECT (ddb_verify('h')->>'items')::int}),
	'<', 60, 'the updates pruned the hot item\'s leaf');
$primary->wait_for_catchup($standby);
$died = !eval {
	($out, $failed) = $session->query(q{SELECT count(*) || ':' || min(item->>'n') FROM h});
	1;
};
if ($died || $failed)
{
	ok( $standby->log_contains(qr/conflict with recovery/, $logstart),
		'the standby transaction was cancelled by the prune\'s recovery conflict');
}
else
{
	is($out, '1:0', 'the standby query still sees the hot item\'s first version');
}
eval { $session->quit; };
is($standby->safe_psql('postgres', q{SELECT item->>'n' FROM h}), '120',
	'a new standby snapshot sees the last update');
is($standby->safe_psql('postgres', q{SELECT (ddb_verify('h')->>'items')::int}),
	$primary->safe_psql('postgres', q{SELECT (ddb_verify('h')->>'items')::int}),
	'ddb_verify is clean on the standby, with the primary\'s versions');

$standby->stop;
$primary->stop;
done_testing();
