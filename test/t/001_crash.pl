
# Copyright (c) ddb authors

# Crash recovery of ddb tables.
#
# Several pgbench clients insert items concurrently; each transaction writes
# the same rows into the ddb table "t" and into a heap "shadow" table, and one
# transaction in eight rolls back.  The server is killed (immediate shutdown:
# no checkpoint, WAL replay on restart) while they run.  After restart this
# proves:
#   (a) "t" holds exactly the rows of "shadow" (heap is the oracle: both were
#       written by the same transactions, so their committed states agree);
#   (b) no row of a rolled-back transaction is visible;
#   (c) ddb_verify('t') finds the tree healthy;
#   (d) the table takes inserts after recovery, and stays healthy.
# The second round crashes a tree made big by a bulk load (many leaf and
# internal splits, none of them checkpointed), the third crashes a recovered
# tree again.
#
# DDB_TAP_AM=heap runs the same workload on a heap "t" and skips ddb_verify:
# that checks the harness itself.
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

my $am = $ENV{DDB_TAP_AM} || 'ddb';
note "table access method under test: $am";

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
$node->append_conf('postgresql.conf', qq(
max_connections = 40
log_min_messages = warning
));
DdbWal::configure($node);
$node->start;
DdbWal::check_mode($node);

$node->safe_psql('postgres', qq(
CREATE EXTENSION ddb;
CREATE TABLE t ("PK" text, "SK" text, item jsonb) USING $am;
CREATE TABLE shadow ("PK" text, "SK" text, item jsonb);
CREATE SEQUENCE txn_seq;
));

# One pgbench transaction: :rows items under one transaction number, spread
# over a few of 2000 partitions, written to both tables; it rolls back when
# :abort is 1 and marks its items with "abort": "yes".  Sort keys contain the
# transaction number, so keys are unique and nothing raises unique_violation.
sub pgbench_script
{
	my ($rows, $pad) = @_;
	return qq(\\set p random(0, 1999)
\\set abort random(1, 8)
\\set rows random(1, $rows)
BEGIN;
SELECT nextval('txn_seq') AS n \\gset
INSERT INTO t SELECT 'P' || ((:p + i * 37) % 2000), 'T' || lpad(:n::text, 9, '0') || '#' || i, jsonb_build_object('txn', :n, 'i', i, 'client', :client_id, 'abort', CASE WHEN :abort = 1 THEN 'yes' ELSE 'no' END, 'pad', repeat('x', (:n * 7 + i) % $pad)) FROM generate_series(1, :rows) i;
INSERT INTO shadow SELECT 'P' || ((:p + i * 37) % 2000), 'T' || lpad(:n::text, 9, '0') || '#' || i, jsonb_build_object('txn', :n, 'i', i, 'client', :client_id, 'abort', CASE WHEN :abort = 1 THEN 'yes' ELSE 'no' END, 'pad', repeat('x', (:n * 7 + i) % $pad)) FROM generate_series(1, :rows) i;
\\if :abort = 1
ROLLBACK;
\\else
COMMIT;
\\endif
);
}

# Start pgbench clients in the background; they run until the crash.
sub start_writers
{
	my ($name, $clients, $rows, $pad) = @_;
	my $script = $node->basedir . "/$name.sql";
	PostgreSQL::Test::Utils::append_to_file($script, pgbench_script($rows, $pad));
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			'pgbench', '-n', '-c', $clients, '-j', $clients, '-T', '600',
			'-f', $script, '-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', \$out, '2>', \$err,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	return ($h, \$out, \$err);
}

sub count_of
{
	my ($sql) = @_;
	return $node->safe_psql('postgres', $sql);
}

# Check (a) (b) (c) after a restart.
sub check_state
{
	my ($round) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	my $n = count_of('SELECT count(*) FROM shadow');
	cmp_ok($n, '>', 0, "$round: some transactions committed ($n rows)");
	is(count_of('SELECT count(*) FROM t'), $n, "$round: same row count in t and shadow");
	is( count_of(
			'SELECT count(*) FROM (SELECT "PK", "SK", item FROM t EXCEPT ALL SELECT "PK", "SK", item FROM shadow) x'),
		'0',
		"$round: every row of t is a committed row of shadow");
	is( count_of(
			'SELECT count(*) FROM (SELECT "PK", "SK", item FROM shadow EXCEPT ALL SELECT "PK", "SK", item FROM t) x'),
		'0',
		"$round: every committed row of shadow is in t");
	is(count_of(qq(SELECT count(*) FROM t WHERE item->>'abort' = 'yes')),
		'0', "$round: no row of a rolled-back transaction is visible");
	my $part = q{SELECT "SK" || item::text FROM %s WHERE "PK" = 'P7' ORDER BY "SK" COLLATE "C"};
	is(count_of(sprintf($part, 't')), count_of(sprintf($part, 'shadow')),
		"$round: a single partition reads the same");
	verify($round);
}

# (c): the verifier on the ddb table (nothing to verify on heap).
sub verify
{
	my ($round) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
  SKIP:
	{
		skip "ddb_verify needs a ddb table (DDB_TAP_AM=$am)", 1
		  if $am ne 'ddb';
		my ($ret, $out, $err) =
		  $node->psql('postgres', "SELECT ddb_verify('t')");
		ok($ret == 0 && $out =~ /^\{.*\}$/s,
			"$round: ddb_verify is clean: $out $err");
	}
}

# One round: writers, crash after $seconds, restart, checks, more inserts.
sub crash_round
{
	my ($round, %opt) = @_;

	my $logpos = -s $node->logfile;
	my ($h, $out, $err) = start_writers($round, $opt{clients}, $opt{rows}, $opt{pad});

	# Let them write: until $opt{min_txns} transactions started, at most
	# $opt{seconds} seconds, so the crash lands mid-write either way.
	my $deadline = time() + $opt{seconds};
	while (time() < $deadline)
	{
		last
		  if count_of('SELECT last_value FROM txn_seq') >= $opt{min_txns};
		sleep 1;
	}
	ok($h->pumpable, "$round: writers still running at the crash");
	$node->stop('immediate');

	# The clients lose their connections and exit; none may have failed for
	# any other reason ("ERROR:" would be, say, a unique_violation).  A
	# client cut off mid-query says "server closed the connection
	# unexpectedly" instead of "perhaps the backend died".
	eval { $h->finish; 1 } or do
	{
		$h->kill_kill;
		fail("$round: pgbench did not exit after the crash");
	};
	my @bad = grep {
		/ERROR:/
		  || (/aborted in command/
			&& !/perhaps the backend died|server closed the connection unexpectedly/)
	} split /\n/, $$err;
	is(scalar(@bad), 0, "$round: no client failed before the crash")
	  or diag $$err;
	# and no backend died before it (a lost connection looks the same)
	unlike(slurp_file($node->logfile, $logpos), qr/terminated by signal|TRAP:|PANIC:/,
		"$round: no backend crashed before the immediate stop");

	$node->start;
	check_state("$round after crash");

	# (b) means something only if transactions did roll back (or were cut
	# off by the crash): some transaction numbers must be missing.
	cmp_ok(
		count_of(q{SELECT count(DISTINCT item->>'txn') FROM shadow WHERE item ? 'txn'}),
		'<',
		count_of('SELECT last_value FROM txn_seq'),
		"$round: some transactions rolled back or were cut off");

	# (d) inserts still work after recovery, in both tables alike.
	$node->safe_psql('postgres', qq(
BEGIN;
INSERT INTO t SELECT 'P' || (g % 2000), 'R$round#' || g, jsonb_build_object('after', '$round', 'abort', 'no') FROM generate_series(1, 3000) g;
INSERT INTO shadow SELECT 'P' || (g % 2000), 'R$round#' || g, jsonb_build_object('after', '$round', 'abort', 'no') FROM generate_series(1, 3000) g;
COMMIT;
));
	check_state("$round after recovery inserts");
	return;
}

crash_round('small', clients => 4, rows => 5, pad => 40, seconds => 4, min_txns => 1_000_000);

# A big tree: ~60k items interleaved across 2000 partitions, committed but not
# checkpointed, so the crash's WAL replay redoes every split; then concurrent
# writers with bigger transactions and items, and the crash.
$node->safe_psql('postgres', q(
BEGIN;
INSERT INTO t SELECT 'P' || (g % 2000), 'B' || lpad(g::text, 7, '0'), jsonb_build_object('bulk', g, 'abort', 'no', 'pad', repeat('y', g % 200)) FROM generate_series(1, 60000) g;
INSERT INTO shadow SELECT 'P' || (g % 2000), 'B' || lpad(g::text, 7, '0'), jsonb_build_object('bulk', g, 'abort', 'no', 'pad', repeat('y', g % 200)) FROM generate_series(1, 60000) g;
COMMIT;
));
crash_round('big', clients => 6, rows => 40, pad => 300, seconds => 15, min_txns => 1500);

# Crash the recovered tree once more.
crash_round('again', clients => 4, rows => 20, pad => 100, seconds => 6, min_txns => 1_000_000);

cmp_ok(count_of('SELECT count(*) FROM t'), '>', 60000, 'the big round left a big table');

$node->stop;
done_testing();
