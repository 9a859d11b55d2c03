# Copyright (c) ddb authors
# ddb_verify under the writers it does not lock out.  Its ShareLock keeps
# out INSERT, UPDATE and DELETE but not row locks (SELECT ... FOR UPDATE,
# RowShareLock), which give a version an xmax from a transaction that
# started after the check read the next transaction id.  Such an xid is not
# "from the future": every check must come out clean.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DdbPgbench;
use DdbWal;

my $primary = PostgreSQL::Test::Cluster->new('verify_primary');
$primary->init;
$primary->append_conf('postgresql.conf', "max_connections = 30\n");
DdbWal::configure($primary);
$primary->start;
DdbWal::check_mode($primary);
$primary->safe_psql('postgres', q{
	CREATE EXTENSION ddb;
	CREATE TABLE big (k text, item jsonb) USING ddb;
	INSERT INTO big SELECT 'k' || lpad(i::text, 6, '0'), jsonb_build_object('n', 0)
	  FROM generate_series(1, 30000) i;
});

# Run ddb_verify on $node for $seconds; returns the errors.
sub verify_loop
{
	my ($node, $seconds) = @_;
	my ($n, @errors) = (0);
	my $end = time() + $seconds;
	while (time() < $end)
	{
		my ($ret, $out, $err) = $node->psql('postgres', q{SELECT ddb_verify('big') IS NOT NULL});
		push @errors, $err if $ret != 0;
		$n++;
	}
	note "$n checks";
	return @errors;
}

my %locks = (lock => q{
\set r random(1, 30000)
BEGIN;
SELECT k FROM big WHERE k = 'k' || lpad((:r)::text, 6, '0') FOR UPDATE;
COMMIT;
});
my ($out, $err) = ('', '');
my $h = DdbPgbench::start($primary, \%locks, {}, clients => 4, seconds => 12,
	out => \$out, err => \$err);
my @errors = verify_loop($primary, 10);
$h->finish;
is(scalar(@errors), 0, 'ddb_verify is clean while other transactions lock rows')
  or diag(join("\n", @errors[0 .. ($#errors < 2 ? $#errors : 2)]));

is($primary->safe_psql('postgres', q{SELECT (ddb_verify('big') ->> 'live')::int}), '30000',
	'and afterwards');

done_testing();
