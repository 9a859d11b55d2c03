# The key-scan planner hook is active however the library gets loaded.
#
# Without shared_preload_libraries, a new session's first statement on a
# ddb table loads the library through the table AM handler while the query
# is parsed, before it is planned, so even that first plan is a DdbKeyScan.
# With shared_preload_libraries = 'ddb' the library (hook, GUC, custom scan
# methods) is set up once in the postmaster and inherited by every backend
# and parallel worker, with no second registration.  Both must give the same
# plans and the same rows, on the primary and after a restart.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('keyscan');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION ddb;
	CREATE TABLE t ("PK" text, "SK" text COLLATE "C", item jsonb) USING ddb;
	INSERT INTO t SELECT 'p' || (i % 50), 's' || lpad(i::text, 5, '0'), jsonb_build_object('n', i)
	  FROM generate_series(1, 5000) i;
	ANALYZE t;
});

my $explain = q{EXPLAIN (COSTS OFF) SELECT * FROM t WHERE "PK" = 'p7' AND "SK" >= 's04000' ORDER BY "SK" DESC LIMIT 3};
my $query = q{SELECT "SK" FROM t WHERE "PK" = 'p7' AND "SK" >= 's04000' ORDER BY "SK" DESC LIMIT 3};
my $expected = "s04957\ns04907\ns04857";

sub check
{
	my ($what) = @_;
	# each safe_psql is a new session: the EXPLAIN is its first statement
	my $plan = $node->safe_psql('postgres', $explain);
	like($plan, qr/Custom Scan \(DdbKeyScan\) on t/, "$what: first statement of a session plans a key scan");
	unlike($plan, qr/->  Sort|^Sort/m, "$what: no Sort for ORDER BY DESC LIMIT");
	is($node->safe_psql('postgres', $query), $expected, "$what: rows");
	is($node->safe_psql('postgres', "SET force_parallel_mode = on; $query"), $expected,
		"$what: rows from a parallel worker");
	is($node->safe_psql('postgres', "SET ddb.enable_key_scan = off; $query"), $expected,
		"$what: same rows with the key scan off");
	is($node->safe_psql('postgres', q{SELECT setting FROM pg_settings WHERE name = 'ddb.enable_key_scan'}),
		'', "$what: the GUC is not defined before the library is loaded")
	  if $what eq 'loaded by the handler';
}

check('loaded by the handler');

$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'ddb'\nddb.http_port = 0\n");
$node->restart;
is($node->safe_psql('postgres', q{SELECT setting FROM pg_settings WHERE name = 'ddb.enable_key_scan'}),
	'on', 'preloaded: the GUC exists from the start');
check('preloaded');
# LOAD of an already loaded library is a no-op: nothing registers twice.
is($node->safe_psql('postgres', "LOAD 'ddb'; $query"), $expected, 'preloaded: LOAD again');

$node->stop;
done_testing();
