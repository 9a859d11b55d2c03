# Reads clean up behind them (ddb_scan.c, clean_behind; ddb_vacuum.c,
# ddb_prune_read_leaf): the prunes and unlinks a primary's read makes
# replay on a hot standby and after a crash, and a standby's reads of the
# same dead versions change nothing (they may not write WAL).
#
#   (a) a partition whose first 290 of 300 items are deleted: the
#       standby's reads walk the dead versions, return the right rows and
#       leave the versions (its ddb_verify counts them all);
#   (b) the primary's read prunes them and unlinks the emptied leaves; the
#       standby replays that to the same tree: the same rows, versions and
#       deleted pages, and ddb_verify clean on both;
#   (c) after a crash right after such a read, recovery leaves the same
#       tree.
#
# DDB_TAP_WAL=custom runs it with ddb preloaded (test/t/DdbWal.pm), where
# the prune and the unlink are ddb's own records, replayed under
# wal_consistency_checking = 'ddb'; otherwise Generic WAL.

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
$primary->append_conf('postgresql.conf', "autovacuum = off\n");
$primary->append_conf('postgresql.conf', "wal_consistency_checking = 'ddb'\n")
  if DdbWal::mode() eq 'custom';
$primary->start;
DdbWal::check_mode($primary);
$primary->safe_psql('postgres', q{
	CREATE EXTENSION ddb;
	CREATE TABLE t ("PK" text, "SK" numeric, item jsonb) USING ddb;
	CREATE TABLE s ("PK" text, "SK" numeric, item jsonb);
});
$primary->backup('bk');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'bk', has_streaming => 1);
DdbWal::configure($standby);
$standby->start;

my $fill = q{
	INSERT INTO s SELECT p, i, jsonb_build_object('pad', repeat('x', 1000))
		FROM unnest(ARRAY['%1$s', '%1$s2']) p, generate_series(1, 300) i;
	INSERT INTO t SELECT * FROM s WHERE "PK" LIKE '%1$s%%';
	DELETE FROM t WHERE "PK" = '%1$s' AND "SK" <= 290;
	DELETE FROM s WHERE "PK" = '%1$s' AND "SK" <= 290;
};
my $read = q{SELECT string_agg("SK"::text, ',' ORDER BY "SK") FROM (SELECT "SK" FROM t WHERE "PK" = '%s' ORDER BY "SK" LIMIT 3) r};
my $shape = q{SELECT (v->>'items') || '/' || (v->>'live') || '/' || (v->>'deleted_pages') FROM ddb_verify('t') v};
my $same = q{SELECT (SELECT array_agg(("PK", "SK", item)::text ORDER BY "PK", "SK") FROM t)
	= (SELECT array_agg(("PK", "SK", item)::text ORDER BY "PK", "SK") FROM s)};

# (a) the standby reads the dead versions first
$primary->safe_psql('postgres', sprintf($fill, 'a'));
$primary->wait_for_catchup($standby);
my $logpos = -s $standby->logfile;
is($standby->safe_psql('postgres', sprintf($read, 'a')), '291,292,293',
	'a: the standby reads the partition past its dead versions');
is($standby->safe_psql('postgres', sprintf($read, 'a')), '291,292,293',
	'a: ... twice');
is($standby->safe_psql('postgres', $shape), '600/310/0',
	'a: the standby\'s reads left every version where it was');
ok(!$standby->log_contains(qr/ERROR|cannot/, $logpos), 'a: no error in the standby\'s log');

# (b) the primary's read prunes and unlinks; the standby replays it
is($primary->safe_psql('postgres', sprintf($read, 'a')), '291,292,293',
	'b: the primary reads the same rows');
my $after = $primary->safe_psql('postgres', $shape);
my ($items, $live, $deleted) = split m{/}, $after;
ok($items < 320 && $live == 310 && $deleted > 30,
	"b: the primary's read pruned the dead versions and unlinked their leaves ($after)");
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $shape), $after, 'b: the standby replayed the same tree');
is($standby->safe_psql('postgres', sprintf($read, 'a')), '291,292,293', 'b: the standby reads the same rows');
is($standby->safe_psql('postgres', $same), 't', 'b: the standby holds the primary\'s rows');

# (c) a crash right after another read that cleans up
$primary->safe_psql('postgres', sprintf($fill, 'b'));
is($primary->safe_psql('postgres', sprintf($read, 'b')), '291,292,293', 'c: the read before the crash');
my $before_crash = $primary->safe_psql('postgres', $shape);
$primary->stop('immediate');
$primary->start;
is($primary->safe_psql('postgres', $shape), $before_crash, 'c: recovery leaves the same tree');
is($primary->safe_psql('postgres', $same), 't', 'c: t holds the rows of its heap shadow');
is($primary->safe_psql('postgres', sprintf($read, 'b')), '291,292,293', 'c: the read after the crash');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $shape), $before_crash, 'c: and so does the standby');

done_testing();
