# Transaction id wraparound never makes ddb data vanish.
#
# VACUUM FREEZE freezes every version and advances relfrozenxid; then the
# cluster's next transaction id is moved forward by more than 2^31 in two
# steps with pg_resetwal (crossing the 2^32 wrap), with VACUUM FREEZE in
# between.  Every row must stay visible, updates must keep working, and
# ddb_verify must be clean (it checks xids against relfrozenxid).
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

my $node = PostgreSQL::Test::Cluster->new('wrap');
$node->init;
$node->append_conf('postgresql.conf', "autovacuum = off\n");
DdbWal::configure($node);
$node->start;
DdbWal::check_mode($node);
$node->safe_psql('postgres', q{
	CREATE EXTENSION ddb;
	CREATE TABLE t (pk text, sk text, item jsonb) USING ddb;
	INSERT INTO t SELECT 'p' || (i % 10), 's' || i, jsonb_build_object('n', i)
	  FROM generate_series(1, 1000) i;
	UPDATE t SET item = item || '{"u": 1}' WHERE pk = 'p1';
});

# Move the next xid forward by 'step' after freezing everything.
sub jump
{
	my ($step) = @_;
	$node->command_ok([ 'vacuumdb', '--all', '--freeze', '-h', $node->host, '-p', $node->port ],
		'vacuum freeze everything');
	my $next = $node->safe_psql('postgres', 'SELECT txid_current() % 4294967296');
	$node->stop;
	my $xid = ($next + $step) % 4294967296;
	$xid = 3 if $xid < 3;
	# pg_xact needs the segment holding the new xid (1M xids per 256 kB file)
	my $seg = sprintf('%04X', int($xid / 1048576));
	my $file = $node->data_dir . "/pg_xact/$seg";
	if (!-e $file)
	{
		open my $fh, '>', $file or die "$file: $!";
		print $fh "\0" x 262144;
		close $fh;
	}
	command_ok([ 'pg_resetwal', '-x', $xid, $node->data_dir ], "next xid moved to $xid");
	$node->start;
	return $xid;
}

my $before = $node->safe_psql('postgres', q{SELECT count(*), sum((item->>'n')::int) FROM t});

jump(1_500_000_000);
is($node->safe_psql('postgres', q{SELECT count(*), sum((item->>'n')::int) FROM t}),
	$before, 'rows survive an xid jump of 1.5 billion');
$node->safe_psql('postgres', q{
	UPDATE t SET item = item || '{"u": 2}' WHERE pk = 'p2';
	DELETE FROM t WHERE pk = 'p3';
	INSERT INTO t VALUES ('new', '1', '{"n": 0}');
});
my $mid = $node->safe_psql('postgres', q{SELECT count(*), sum((item->>'n')::int) FROM t});

jump(1_500_000_000);
is($node->safe_psql('postgres', q{SELECT count(*), sum((item->>'n')::int) FROM t}),
	$mid, 'rows survive crossing the 2^32 wrap');
is($node->safe_psql('postgres', q{SELECT count(*) FROM t WHERE item->>'u' = '2'}),
	'100', 'updates made between the jumps are intact');
$node->safe_psql('postgres', q{UPDATE t SET item = item || '{"u": 3}' WHERE pk = 'p4'});
is($node->safe_psql('postgres', q{SELECT ddb_verify('t') IS NOT NULL}), 't',
	'ddb_verify is clean after wraparound');
is($node->safe_psql('postgres',
		q{SELECT age(relfrozenxid) < 1000000 FROM pg_class WHERE relname = 't'}),
	't', 'relfrozenxid follows the current xid');

$node->stop;
done_testing();
