
# Copyright (c) ddb authors

# Crash recovery and replication of the bulk load (ddb_bulk.c): COPY into a
# table created or truncated in the same transaction builds the tree
# bottom-up, its pages written straight to the file and logged as
# full-page images (not logged with wal_level = minimal).
#
# A primary with a streaming standby; a heap "shadow" table loaded from the
# same input is the oracle.  This proves:
#   (a) CREATE TABLE + COPY in one transaction: the standby returns what
#       the primary returns, both equal the shadow, ddb_verify is clean;
#   (b) a crash (immediate shutdown, no checkpoint) after TRUNCATE + COPY
#       committed: after recovery the table holds the new rows, on the
#       primary and on the standby;
#   (c) a crash while TRUNCATE + COPY is done but not committed: after
#       recovery the table holds the rows it had before;
#   (d) with wal_level = minimal (no WAL for the new file; commit syncs it)
#       a crash after commit keeps every row;
#   (e) writes on the leaf prefixes the build gave (ddb_page.h, "Leaf
#       prefix"): new keys that split the loaded leaves, updates, whole
#       partitions deleted and VACUUMed (unlinks), then a crash: primary
#       and standby equal the shadow; with ddb's own WAL the splits are EXT
#       records and the standby checks every page ddb's records change
#       against the primary's image (wal_consistency_checking).
# Each step checks that the bulk path was taken (DEBUG1 line in the log)
# and that the table takes writes afterwards.
#
# DDB_TAP_WAL=custom runs it with ddb preloaded (test/t/DdbWal.pm): the tree
# pages are full-page images either way, the row-id map, the metapage and
# the writes after the load use ddb's own records; test/run.sh runs both.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::RealBin;
use DdbWal;

# COPY tbl FROM a generator: n items over 'parts' partitions, sort keys
# from 'first', items tagged with 'tag'.
sub copy_sql
{
	my ($tbl, $n, $parts, $first, $tag) = @_;
	my $last = $first + $n;
	return
	  qq{COPY $tbl FROM PROGRAM \$p\$awk 'BEGIN { for (i = $first; i < $last; i++) printf "P%d\\tS%07d\\t{\\"tag\\": \\"$tag\\", \\"i\\": %d, \\"pad\\": \\"%0100d\\"}\\n", i % $parts, i, i, i }'\$p\$;};
}

my $check = q{SELECT count(*), md5(coalesce(string_agg("PK" || '|' || "SK" || '|' || item::text, E'\n' ORDER BY "PK" COLLATE "C", "SK" COLLATE "C"), '')) FROM };

sub verify_ok
{
	my ($node, $step) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT ddb_verify('t')");
	ok($ret == 0 && $out =~ /^\{.*\}$/s,
		"$step: ddb_verify clean on " . $node->name . ": $out $err");
}

my $primary = PostgreSQL::Test::Cluster->new('bulk_primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', qq(
log_min_messages = debug1
max_wal_size = 1GB
));
DdbWal::configure($primary);
$primary->start;
DdbWal::check_mode($primary);
$primary->safe_psql('postgres', qq(
CREATE EXTENSION ddb;
CREATE TABLE shadow ("PK" text, "SK" text, item jsonb);
));
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('bulk_standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;
DdbWal::check_mode($standby);

# (a) created and loaded in one transaction
my $log_offset = -s $primary->logfile;
$primary->safe_psql('postgres',
	"BEGIN; CREATE TABLE t (\"PK\" text, \"SK\" text, item jsonb) USING ddb; "
	  . copy_sql('t', 60000, 700, 0, 'a')
	  . " COMMIT; "
	  . copy_sql('shadow', 60000, 700, 0, 'a'));
ok($primary->log_contains(qr/COPY builds the tree of "t" bottom-up from 60000 items/, $log_offset),
	'(a) the bulk path was taken');
$primary->wait_for_catchup($standby);
my $want = $primary->safe_psql('postgres', $check . 'shadow');
is($primary->safe_psql('postgres', $check . 't'), $want, '(a) primary holds the loaded rows');
is($standby->safe_psql('postgres', $check . 't'), $want, '(a) standby holds the loaded rows');
verify_ok($primary, '(a)');
verify_ok($standby, '(a)');

# (b) TRUNCATE + COPY committed, then a crash before any checkpoint
$log_offset = -s $primary->logfile;
$primary->safe_psql('postgres',
	"BEGIN; TRUNCATE t; " . copy_sql('t', 80000, 900, 100000, 'b') . " COMMIT; "
	  . "TRUNCATE shadow; " . copy_sql('shadow', 80000, 900, 100000, 'b'));
ok($primary->log_contains(qr/COPY builds the tree of "t" bottom-up from 80000 items/, $log_offset),
	'(b) the bulk path was taken');
$want = $primary->safe_psql('postgres', $check . 'shadow');
$primary->stop('immediate');
$primary->start;
is($primary->safe_psql('postgres', $check . 't'), $want, '(b) after the crash the committed load is there');
verify_ok($primary, '(b)');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $check . 't'), $want, '(b) standby holds the committed load');
verify_ok($standby, '(b)');

# (c) TRUNCATE + COPY done, not committed, then a crash: the rows before it
my $in = '';
my $out = '';
my $h = IPC::Run::start(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $primary->connstr('postgres') ],
	'<', \$in, '>', \$out, '2>', \$out);
$in .= "BEGIN;\nTRUNCATE t;\n" . copy_sql('t', 50000, 300, 500000, 'c') . "\nSELECT 'loaded', pg_sleep(600);\n";
my $loaded = 0;
for (my $i = 0; $i < 10 * $PostgreSQL::Test::Utils::timeout_default; $i++)
{
	$h->pump_nb;
	if ($primary->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT ''loaded''%'") eq '1')
	{
		$loaded = 1;
		last;
	}
	usleep(100_000);
}
ok($loaded, '(c) the uncommitted load finished: ' . $out);
$primary->stop('immediate');
$h->kill_kill;
$primary->start;
is($primary->safe_psql('postgres', $check . 't'), $want, '(c) after the crash the table is as before the load');
verify_ok($primary, '(c)');
$primary->safe_psql('postgres',
	q{INSERT INTO t VALUES ('P1', 'after', '{}'); INSERT INTO shadow VALUES ('P1', 'after', '{}');});
$want = $primary->safe_psql('postgres', $check . 'shadow');
is($primary->safe_psql('postgres', $check . 't'), $want, '(c) the table takes inserts');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $check . 't'), $want, '(c) standby agrees');
verify_ok($standby, '(c)');

# (e) writes on the prefixed leaves, a crash, the standby checking its replay
cmp_ok($primary->safe_psql('postgres', q{SELECT (ddb_verify('t') ->> 'leaf_prefix_bytes')::float}),
	'>', 4, '(e) the loaded leaves have prefixes');
# (ddb's records only: Generic WAL's masking knows nothing of the hint bits
# of the tuples in ddb's leaves, which change without WAL, as on heap)
my $custom = ($ENV{DDB_TAP_WAL} // '') eq 'custom';
my $wcc = $custom ? 'ddb' : '';
my $from = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
for my $tbl ('t', 'shadow')
{
	$primary->safe_psql('postgres', qq{
		SET wal_consistency_checking = '$wcc';
		INSERT INTO $tbl SELECT 'P' || (i % 900), 'S' || lpad((100000 + i * 13)::text, 7, '0') || 'x',
		       '{"e": 1}' FROM generate_series(1, 8000) i;
		UPDATE $tbl SET item = item || '{"u": 1}' WHERE "SK" LIKE 'S01500%';
		DELETE FROM $tbl WHERE "PK" IN (SELECT 'P' || i FROM generate_series(0, 899, 3) i);
	});
}
if ($custom)
{
	# the splits of leaves with a prefix are ddb's EXT records, which carry it
	my $to = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
	cmp_ok($primary->safe_psql('postgres', qq{
			CREATE EXTENSION IF NOT EXISTS pg_walinspect;
			SELECT count(*) FROM pg_get_wal_records_info('$from', '$to')
			WHERE resource_manager = 'ddb' AND record_type = 'EXT'
			  AND description LIKE 'SPLIT, prefix % bytes: left keeps%'}),
		'>', 0, '(e) the splits of prefixed leaves were EXT records');
}
$primary->safe_psql('postgres', "SET wal_consistency_checking = '$wcc'; VACUUM t;");
cmp_ok($primary->safe_psql('postgres', q{SELECT (ddb_verify('t') ->> 'deleted_pages')::int}),
	'>', 0, '(e) VACUUM unlinked emptied leaves');
$want = $primary->safe_psql('postgres', $check . 'shadow');
$primary->stop('immediate');
$primary->start;
is($primary->safe_psql('postgres', $check . 't'), $want, '(e) after the crash the writes are there');
verify_ok($primary, '(e)');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $check . 't'), $want, '(e) standby agrees');
verify_ok($standby, '(e)');
ok(!$standby->log_contains(qr/inconsistent page found/) &&
	  !$primary->log_contains(qr/inconsistent page found/), '(e) every replayed page matched the primary\'s');

# (d) wal_level = minimal: the new file is not logged, commit syncs it
my $minimal = PostgreSQL::Test::Cluster->new('bulk_minimal');
$minimal->init;
$minimal->append_conf('postgresql.conf', qq(
wal_level = minimal
max_wal_senders = 0
log_min_messages = debug1
));
DdbWal::configure($minimal);
$minimal->start;
DdbWal::check_mode($minimal);
$log_offset = -s $minimal->logfile;
$minimal->safe_psql('postgres',
	"CREATE EXTENSION ddb; CREATE TABLE shadow (\"PK\" text, \"SK\" text, item jsonb); "
	  . copy_sql('shadow', 40000, 500, 0, 'd')
	  . " BEGIN; CREATE TABLE t (\"PK\" text, \"SK\" text, item jsonb) USING ddb; "
	  . copy_sql('t', 40000, 500, 0, 'd')
	  . " COMMIT;");
ok($minimal->log_contains(qr/COPY builds the tree of "t" bottom-up from 40000 items/, $log_offset),
	'(d) the bulk path was taken');
$want = $minimal->safe_psql('postgres', $check . 'shadow');
$minimal->stop('immediate');
$minimal->start;
is($minimal->safe_psql('postgres', $check . 't'), $want, '(d) after the crash every row is there');
verify_ok($minimal, '(d)');

$standby->stop;
$primary->stop;
$minimal->stop;
done_testing();
