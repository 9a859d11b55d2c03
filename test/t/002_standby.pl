
# Copyright (c) ddb authors

# Physical replication of ddb tables (Generic WAL replayed on a hot standby).
#
# A primary and a streaming standby, as contrib/bloom's t/001_wal.pl: after
# each step (create, bulk insert, more transactions with one rolled back,
# TRUNCATE, re-insert) the standby catches up and the same queries (count, a
# checksum of every row in key order, point reads of single partitions) must
# return identical results on both, and ddb_verify must be clean on both
# (it only reads, so it runs on a hot standby too).
# Then an unlogged ddb table: after a crash it comes back empty and usable.
#
# DDB_TAP_AM=heap runs the same steps on heap tables and skips ddb_verify:
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

my $am = $ENV{DDB_TAP_AM} || 'ddb';
note "table access method under test: $am";

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', "log_min_messages = warning\n");
DdbWal::configure($primary);
$primary->start;
DdbWal::check_mode($primary);
$primary->safe_psql('postgres', 'CREATE EXTENSION ddb');

$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

# The queries both nodes must answer alike: whole-table count and checksum,
# then reads of single partitions (full, by key, by sort-key range,
# backwards with a limit).  Ordering uses the C collation so the results
# depend on the bytes only.
my @partitions = ('P0', 'P1', 'P4242', 'P9999', 'P10000', 'nope');
my $queries = join(
	"\n",
	'SELECT count(*) FROM t;',
	q{SELECT md5(coalesce(string_agg("PK" || '|' || "SK" || '|' || item::text, E'\n' ORDER BY "PK" COLLATE "C", "SK" COLLATE "C"), '')) FROM t;},
	q{SELECT count(DISTINCT "PK") FROM t;},
	q{SELECT item FROM t WHERE "PK" = 'P4242' AND "SK" = 'S0007';},
	q{SELECT "SK" FROM t WHERE "PK" = 'P4242' AND "SK" >= 'S0005' AND "SK" < 'S0010' ORDER BY "SK" COLLATE "C";},
	q{SELECT "SK" FROM t WHERE "PK" = 'P0' ORDER BY "SK" COLLATE "C" DESC LIMIT 3;},
	map {
		qq{SELECT count(*), md5(coalesce(string_agg("SK" || item::text, ',' ORDER BY "SK" COLLATE "C"), '')) FROM t WHERE "PK" = '$_';}
	} @partitions);

# Catch up, compare, verify; returns the primary's row count.
sub check_replay
{
	my ($step) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	$primary->wait_for_catchup($standby);
	my $p = $primary->safe_psql('postgres', $queries);
	my $s = $standby->safe_psql('postgres', $queries);
	is($s, $p, "$step: standby returns what the primary returns");

  SKIP:
	{
		skip "ddb_verify needs a ddb table (DDB_TAP_AM=$am)", 2
		  if $am ne 'ddb';
		for my $node ($primary, $standby)
		{
			my ($ret, $out, $err) =
			  $node->psql('postgres', "SELECT ddb_verify('t')");
			ok($ret == 0 && $out =~ /^\{.*\}$/s,
				"$step: ddb_verify clean on " . $node->name . ": $out $err");
		}
	}
	return (split /\n/, $p)[0];
}

$primary->safe_psql('postgres',
	qq{CREATE TABLE t ("PK" text, "SK" text, item jsonb) USING $am});
is(check_replay('create'), 0, 'create: the table is empty');

# 200k items interleaved across 10k partitions: every partition gets one
# item per pass, so inserts land all over the tree and split it everywhere.
$primary->safe_psql('postgres', q{
INSERT INTO t
SELECT 'P' || (g % 10000), 'S' || lpad((g / 10000)::text, 4, '0'),
       jsonb_build_object('g', g, 'pad', repeat('z', g % 97))
  FROM generate_series(0, 199999) g});
is(check_replay('bulk insert'), 200000, 'bulk insert: 200000 items');

# More transactions, one of them rolled back, one a COPY.
for my $i (1 .. 4)
{
	my $end = $i == 3 ? 'ROLLBACK' : 'COMMIT';
	$primary->safe_psql('postgres', qq{
BEGIN;
INSERT INTO t SELECT 'P' || ((g * $i) % 10007), 'X$i#' || g, jsonb_build_object('txn', $i)
  FROM generate_series(1, 5000) g;
$end;});
}
$primary->safe_psql('postgres',
	"COPY t FROM STDIN;\n"
	  . join('', map { "P$_\tCOPY#$_\t{\"copy\": $_}\n" } 1 .. 3000)
	  . "\\.\n");
is(check_replay('more transactions'), 200000 + 3 * 5000 + 3000,
	'more transactions: rolled-back items are not there');

$primary->safe_psql('postgres', 'TRUNCATE t');
is(check_replay('truncate'), 0, 'truncate: the table is empty');

$primary->safe_psql('postgres', q{
INSERT INTO t
SELECT 'P' || (g % 1000), 'again#' || g, jsonb_build_object('g', g)
  FROM generate_series(1, 30000) g});
is(check_replay('re-insert'), 30000, 're-insert: 30000 items');

# An unlogged ddb table: its contents are lost in a crash, its init fork
# makes it an empty, working table again.
$primary->safe_psql('postgres', qq{
CREATE UNLOGGED TABLE u ("PK" text, "SK" text, item jsonb) USING $am;
INSERT INTO u SELECT 'U' || (g % 100), 'S' || g, '{}' FROM generate_series(1, 5000) g});
is($primary->safe_psql('postgres', 'SELECT count(*) FROM u'),
	5000, 'unlogged: filled');
$primary->stop('immediate');
$primary->start;
is($primary->safe_psql('postgres', 'SELECT count(*) FROM u'),
	0, 'unlogged: empty after a crash');
$primary->safe_psql('postgres',
	q{INSERT INTO u SELECT 'U' || g, 'S', '{"back": true}' FROM generate_series(1, 500) g});
is($primary->safe_psql('postgres', 'SELECT count(*) FROM u'),
	500, 'unlogged: takes inserts after the crash');
SKIP:
{
	skip "ddb_verify needs a ddb table (DDB_TAP_AM=$am)", 1 if $am ne 'ddb';
	my ($ret, $out, $err) = $primary->psql('postgres', "SELECT ddb_verify('u')");
	ok($ret == 0 && $out =~ /^\{.*\}$/s, "unlogged: ddb_verify clean: $out $err");
}

# The standby follows the restarted primary and still agrees on t.
$primary->safe_psql('postgres', q{
INSERT INTO t SELECT 'P' || g, 'after-crash', '{}' FROM generate_series(1, 2000) g});
is(check_replay('after primary crash'), 32000,
	'after primary crash: the standby follows');

$standby->stop;
$primary->stop;
done_testing();
