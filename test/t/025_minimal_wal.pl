
# Copyright (c) ddb authors

# Crash recovery with wal_level = minimal.  A file created in the writing
# transaction (CREATE TABLE, TRUNCATE, a rewrite, SET TABLESPACE, VACUUM
# FULL) is not logged: PostgreSQL syncs it at commit, or logs it whole when
# it is smaller than wal_skip_threshold (storage.c, smgrDoPendingSyncs).
# Everything ddb writes to such a file -- tree pages, the row-id map, the
# metapage, the deferred map entries written at commit -- must be in that
# file by then, and nothing ddb logs for it may be replayed over it.
#
# Each scenario writes a ddb table and its heap shadow in the same
# transactions; both paths of the commit are taken (wal_skip_threshold 0:
# sync; 1GB: log the whole file), a prepared transaction stays prepared
# across the crash, and after an immediate shutdown every table must equal
# its shadow, ddb_verify must be clean (no orphan map entries: the last
# transaction flushed the WAL before the crash), and every row must be
# reachable by its row id (an UPDATE of every row).
#
# DDB_TAP_WAL=custom runs it with ddb preloaded (test/t/DdbWal.pm).

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DdbWal;

my $node = PostgreSQL::Test::Cluster->new('minimal');
$node->init;
$node->append_conf('postgresql.conf', qq(
wal_level = minimal
max_wal_senders = 0
max_prepared_transactions = 2
autovacuum = off
));
DdbWal::configure($node);
$node->start;
DdbWal::check_mode($node);

my $tsdir = $node->basedir . '/ts';
mkdir $tsdir or die "mkdir $tsdir: $!";
$node->safe_psql('postgres', "CREATE EXTENSION ddb");
$node->safe_psql('postgres', "CREATE TABLESPACE ts LOCATION '$tsdir'");

my @tables;

# "INSERT INTO d ...; INSERT INTO h ..." for rows lo..hi of table pair n
sub ins
{
	my ($n, $lo, $hi) = @_;
	my $sel = "SELECT 'p' || (g % 7), 's' || lpad(g::text, 7, '0'), "
	  . "jsonb_build_object('n', g, 'pad', repeat('x', g % 200)) FROM generate_series($lo, $hi) g";
	return "INSERT INTO d$n $sel; INSERT INTO h$n $sel;";
}

sub both
{
	my ($n, $sql) = @_;
	return join(' ', map { my $s = $sql; $s =~ s/\bT\b/$_$n/g; $s } ('d', 'h'));
}

sub create
{
	my ($n) = @_;
	push @tables, $n;
	return "CREATE TABLE d$n (\"PK\" text, \"SK\" text, item jsonb) USING ddb; "
	  . "CREATE TABLE h$n (\"PK\" text, \"SK\" text, item jsonb);";
}

my $n = 0;
for my $threshold ('0', '1GB')
{
	my $set = "SET wal_skip_threshold = '$threshold';";

	# created, written, a savepoint that truncates rolled back
	$n++;
	$node->safe_psql('postgres', "$set BEGIN; " . create($n) . ins($n, 1, 30000)
		  . " SAVEPOINT a; " . both($n, 'TRUNCATE T;') . ins($n, 40000, 41000)
		  . " ROLLBACK TO a; " . ins($n, 50000, 52000)
		  . both($n, q{UPDATE T SET item = item || '{"u": 1}' WHERE "SK" LIKE '%3';})
		  . both($n, q{DELETE FROM T WHERE "SK" LIKE '%5';}) . " COMMIT;");

	# created, then truncated in place (same subtransaction), then COPY
	# builds its tree bottom-up
	$n++;
	$node->safe_psql('postgres', "$set BEGIN; " . create($n) . ins($n, 1, 20000)
		  . both($n, 'TRUNCATE T;') . ins($n, 20001, 21000)
		  . both($n, 'TRUNCATE T;')
		  . both($n, q{COPY T FROM PROGRAM $p$awk 'BEGIN { for (i = 1; i <= 25000; i++) printf "p%d\ts%07d\t{\"c\": %d}\n", i % 5, i, i }'$p$;})
		  . " COMMIT;");

	# an older table: TRUNCATE, SET TABLESPACE, writes
	$n++;
	$node->safe_psql('postgres', create($n) . ins($n, 1, 10000));
	$node->safe_psql('postgres', "$set BEGIN; " . both($n, 'TRUNCATE T;')
		  . ins($n, 10001, 40000) . " ALTER TABLE d$n SET TABLESPACE ts; "
		  . ins($n, 40001, 41000)
		  . both($n, q{UPDATE T SET item = '{}' WHERE "SK" LIKE '%7';}) . " COMMIT;");

	# an older table: away to heap and back in one transaction
	$n++;
	$node->safe_psql('postgres', create($n) . ins($n, 1, 10000));
	$node->safe_psql('postgres', "$set BEGIN; " . ins($n, 10001, 20000)
		  . " ALTER TABLE d$n SET ACCESS METHOD heap; " . ins($n, 20001, 21000)
		  . " ALTER TABLE d$n SET ACCESS METHOD ddb; " . ins($n, 21001, 22000)
		  . both($n, q{DELETE FROM T WHERE "SK" LIKE '%1';}) . " COMMIT;");

	# VACUUM FULL, then logged writes
	$n++;
	$node->safe_psql('postgres', create($n) . ins($n, 1, 30000)
		  . both($n, q{DELETE FROM T WHERE "SK" LIKE '%2';}));
	$node->safe_psql('postgres', "$set VACUUM FULL d$n;");
	$node->safe_psql('postgres', ins($n, 30001, 31000)
		  . both($n, q{UPDATE T SET item = '{}' WHERE "SK" LIKE '%9';}));
}

# created and written by a transaction that is still prepared at the crash
$n++;
$node->safe_psql('postgres', "BEGIN; " . create($n) . ins($n, 1, 20000)
	  . " PREPARE TRANSACTION 'p';");

# the last commit flushes the WAL: no VACUUM or prune is cut in half
$node->safe_psql('postgres', "CREATE TABLE flush (a int); INSERT INTO flush VALUES (1);");
$node->stop('immediate');
$node->start;
$node->safe_psql('postgres', "COMMIT PREPARED 'p';");

my $diff = q{SELECT (SELECT count(*) FROM (SELECT * FROM dN EXCEPT ALL SELECT * FROM hN) a) || '/' || (SELECT count(*) FROM (SELECT * FROM hN EXCEPT ALL SELECT * FROM dN) b) || ' of ' || (SELECT count(*) FROM hN)};
for my $t (@tables)
{
	(my $q = $diff) =~ s/N\b/$t/g;
	like($node->safe_psql('postgres', $q), qr{^0/0 of [1-9]}, "d$t equals its shadow after the crash");
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT ddb_verify('d$t')");
	ok($ret == 0 && $out =~ /"orphan_map_entries": 0\b/, "d$t: ddb_verify clean: $out $err");
	$node->safe_psql('postgres', both($t, q{UPDATE T SET item = item || '{"z": 1}';}));
	like($node->safe_psql('postgres', $q), qr{^0/0 of [1-9]}, "d$t: every row updated through its row id");
	($ret, $out, $err) = $node->psql('postgres', "SELECT ddb_verify('d$t')");
	ok($ret == 0 && $out =~ /"orphan_map_entries": 0\b/, "d$t: ddb_verify clean after the update: $out $err");
}

$node->stop;
done_testing();
