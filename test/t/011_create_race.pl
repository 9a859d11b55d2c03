# Sessions racing the first inserts into a new or just-truncated ddb table
# must never deadlock.  One session creating the tree holds the relation
# extension lock; another splitting the root holds the metapage and asks for
# the extension lock.  If the first then waited for the metapage, neither
# the deadlock detector nor a cancel could end it (a buffer-lock wait inside
# a heavyweight-lock cycle): ddb_tree.c's lock order rule 2 forbids that.
#
# ddb.check_delay_tree_create (CHECKS=1 builds only) holds each creating
# session for a while right after it takes the extension lock, so the
# other sessions fill and split the first leaf meanwhile: without rule 2
# this hangs in the first round.  A round that does not finish in time is
# a failure, and the server is stopped with an immediate shutdown.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time usleep);

my $node = PostgreSQL::Test::Cluster->new('create_race');
$node->init;
$node->append_conf('postgresql.conf', "max_connections = 40\n");
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION ddb;
	CREATE TABLE race (pk text, sk text, item jsonb) USING ddb;
});

# The pause exists only in an invariant-checks build; without it this test
# would prove nothing, so its absence is a failure, not a skip.
my ($ret, $out, $err) = $node->psql('postgres',
	q{SET ddb.check_delay_tree_create = 100; INSERT INTO race VALUES ('x', 'y', '{}')});
is($ret, 0, 'the test-only pause ddb.check_delay_tree_create exists (CHECKS=1 build)')
  or diag($err);

my $sessions = 8;
my $rounds = 6;
my $hung = 0;
ROUND: for my $round (1 .. $rounds)
{
	$node->safe_psql('postgres', 'TRUNCATE race');
	my @h;
	for my $s (1 .. $sessions)
	{
		# rows of ~1.3 kB: the first leaf splits after a handful
		my $sql = qq{SET ddb.check_delay_tree_create = 150;
INSERT INTO race SELECT 'p' || (i % 3), '$s-' || i, jsonb_build_object('pad', repeat(md5(i::text), 40))
FROM generate_series(1, 30) i;};
		my ($in, $o, $e) = ('', '', '');
		push @h, IPC::Run::start(
			[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'), '-c', $sql ],
			\$in, \$o, \$e);
	}
	my $deadline = time() + 60;
	for my $h (@h)
	{
		while ($h->pumpable && time() < $deadline)
		{
			$h->pump_nb;
			usleep(20_000);
		}
		if ($h->pumpable)
		{
			$hung = $round;
			last ROUND;
		}
		ok($h->finish, "round $round: a racing session committed");
	}
	is($node->safe_psql('postgres', 'SELECT count(*) FROM race'),
		$sessions * 30, "round $round: every racing insert is there");
	is($node->safe_psql('postgres', q{SELECT ddb_verify('race') ->> 'live'}),
		$sessions * 30, "round $round: ddb_verify is clean");
}

if ($hung)
{
	fail("round $hung: sessions racing the first inserts hang");
	diag($node->safe_psql('postgres',
		q{SELECT string_agg(pid || ' ' || coalesce(wait_event_type, '-') || '/' || coalesce(wait_event, '-'), E'\n')
		  FROM pg_stat_activity WHERE query LIKE '%INSERT INTO race%' AND pid <> pg_backend_pid()}));
	$node->stop('immediate');
}
else
{
	pass('no round hangs');
	$node->stop;
}
done_testing();
