# Autovacuum's log line for a ddb table (ddb_vacuum.c, log_vacuum): with
# log_autovacuum_min_duration = 0 an autovacuum worker's VACUUM of a ddb
# table is logged as heap's is, with ddb's counts -- the leaves it
# scanned and unlinked, the versions it removed and those that remain --
# and with it at -1 (the default) nothing is.  A plain VACUUM logs nothing
# either way.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('avlog');
$node->init;
$node->append_conf('postgresql.conf', qq{
autovacuum_naptime = 1s
log_autovacuum_min_duration = 0
});
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION ddb;
	CREATE TABLE t ("PK" text, "SK" numeric, item jsonb) USING ddb
		WITH (autovacuum_vacuum_threshold = 50, autovacuum_vacuum_scale_factor = 0,
		      autovacuum_analyze_threshold = 1000000);
	CREATE TABLE quiet ("PK" text, "SK" numeric, item jsonb) USING ddb
		WITH (autovacuum_enabled = false);
});

# 300 items of ~1 kB in one partition, the first 250 deleted: whole
# leaves of dead versions, which nothing reads before autovacuum comes
my $logpos = -s $node->logfile;
$node->safe_psql('postgres', q{
	INSERT INTO t SELECT 'p', i, jsonb_build_object('pad', repeat('x', 1000)) FROM generate_series(1, 300) i;
	INSERT INTO quiet SELECT * FROM t;
});
$node->safe_psql('postgres', q{DELETE FROM t WHERE "SK" <= 250});
$node->safe_psql('postgres', q{DELETE FROM quiet WHERE "SK" <= 250; VACUUM quiet});

my $line = qr/automatic vacuum of ddb table "postgres\.public\.t"/;
ok($node->wait_for_log($line, $logpos), 'autovacuum logged its VACUUM of the ddb table');
my $log = slurp_file($node->logfile, $logpos);
my ($entry) = $log =~ /($line.*?system usage: [^\n]*)/s;
ok(defined $entry, 'the entry runs to its system usage line');
$entry //= '';
like($entry, qr/leaves: [1-9]\d* scanned, \d+ skipped as all visible, \d+ unlinked;/, 'it counts the leaves scanned and unlinked');
# (another autovacuum worker's snapshot may keep some deletes unremovable)
my ($removed, $remain, $notyet) =
  $entry =~ /versions: (\d+) removed, (\d+) remain, (\d+) are dead but not yet removable/;
ok(defined $removed && $removed + $notyet == 250 && $remain == 50,
	'it counts the versions removed, those that remain and those not yet removable ('
	  . ($removed // '?') . ', ' . ($remain // '?') . ', ' . ($notyet // '?') . ')');
like($entry, qr/removable cutoff: \d+, which was -?\d+ XIDs old/, 'it names the removable cutoff');
like($entry, qr/WAL usage: [1-9]\d* records/, 'it counts the WAL it wrote');
unlike($log, qr/ddb table "postgres\.public\.quiet"/, 'a plain VACUUM of a ddb table logs nothing');
is($node->safe_psql('postgres', q{SELECT (ddb_verify('t') ->> 'live')::int}), '50', 'ddb_verify is clean');

# at -1, autovacuum still runs, and logs nothing
$node->append_conf('postgresql.conf', "log_autovacuum_min_duration = -1\n");
$node->reload;
my $count = $node->safe_psql('postgres',
	q{SELECT autovacuum_count FROM pg_stat_user_tables WHERE relname = 't'});
$logpos = -s $node->logfile;
$node->safe_psql('postgres', q{
	INSERT INTO t SELECT 'q', i, '{}' FROM generate_series(1, 100) i;
	DELETE FROM t WHERE "PK" = 'q'});
$node->poll_query_until('postgres',
	qq{SELECT autovacuum_count > $count FROM pg_stat_user_tables WHERE relname = 't'})
  or die 'autovacuum never came back to t';
unlike(slurp_file($node->logfile, $logpos), $line, 'with log_autovacuum_min_duration = -1 it logs nothing');

$node->stop;
done_testing();
