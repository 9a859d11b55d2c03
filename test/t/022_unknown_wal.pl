
# Copyright (c) ddb authors

# A ddb WAL record in a form this ddb does not know stops replay with a
# PANIC instead of being misread (README, "Preloading ddb": upgrading;
# ddb_wal_redo in src/engine/ddb_wal.c).
#
# A later ddb may add record forms, which an older one's redo must refuse
# rather than replay as a kind it knows.  The test-only setting
# ddb.check_wal_unknown_form (checks builds only) makes the server write its
# INSERT_MULTI records with the info bit 0x80, which no ddb gives that kind
# (info 0xE0, the only value ddb leaves unused: PostgreSQL keeps the low
# four bits), and its UPDATE_MAP records as EXT records (info 0xF0, whose
# first byte names a form) of a form no ddb has (255).  The records are
# otherwise the ones ddb writes, so the known form of the same record is the
# control.  For each of the two, on a server of its own, this proves:
#   (a) the control: the statements with the setting off write the known
#       form (pg_waldump: custom203, info 60 or 70), and after a crash
#       (immediate stop) recovery replays them from before them and every
#       committed row is back, ddb_verify clean;
#   (b) the same statements with the setting on write the unknown form, and
#       nothing else of that kind; pg_waldump, which cannot load ddb, still
#       reads the WAL and lists them as custom203 with their info (README,
#       "Tools"), and pg_walinspect names them "UNKNOWN (e0)" (or "EXT",
#       "unknown form 255"), not as the kind whose info they share the low
#       bits of, and does not decode them;
#   (c) after a crash, recovery stops at the first of them: the log says
#       "PANIC:  ddb WAL record with unknown info 0xE0: this server's ddb is
#       older than the one that wrote it" (0xF0 form 255) with that
#       record's LSN (the error context, "ddb/UNKNOWN (E0)", "ddb/EXT"), and
#       the server does not come up.
#
# The test needs ddb preloaded (its own records are what it is about), so
# it sets the preload itself and runs once, in either DDB_TAP_WAL mode.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib $FindBin::RealBin;
use DdbWal;

plan skip_all => 'ddb\'s WAL records are written for ddb tables'
  if ($ENV{DDB_TAP_AM} || 'ddb') ne 'ddb';

# (t of storage version 2, whose leaves split without EXT records, written
# with ddb.check_wal_legacy = uncompressed, whose inserts are INSERT_MAP
# and INSERT_MULTI, not EXT records, and whose splits are not compressed:
# the only EXT records then are the unknown form's)
my $schema = q{
	CREATE EXTENSION ddb;
	CREATE EXTENSION pg_walinspect;
	SET ddb.check_storage_version = 2;
	CREATE TABLE t ("PK" text, "SK" text, item jsonb) USING ddb;
	CREATE TABLE s ("PK" text, "SK" text, item jsonb);
	INSERT INTO t SELECT 'P' || (g % 20), 'k' || g, jsonb_build_object('n', g, 'pad', repeat('x', g % 100)) FROM generate_series(1, 2000) g;
	INSERT INTO s SELECT * FROM t;
};

# An LSN as a number, to compare (pg_waldump pads its low half to 8 digits,
# the server's messages do not).
sub lsn
{
	my ($hi, $lo) = split m{/}, $_[0];
	return hex($hi) * 2**32 + hex($lo);
}

# ddb's records between two LSNs as pg_waldump shows them: a list of
# [lsn, info] (info as pg_waldump prints it, "UNKNOWN (e0)": it cannot load
# ddb), and whether pg_waldump exited 0.
sub waldump_ddb
{
	my ($node, $from, $to) = @_;
	my ($stdout, $stderr);
	my $ok = IPC::Run::run [ 'pg_waldump', '-p', $node->data_dir . '/pg_wal', '-s', $from, '-e', $to ],
	  '>', \$stdout, '2>', \$stderr;
	my @recs;
	for (split /\n/, $stdout)
	{
		push @recs, [ $1, $2 ] if m{^rmgr: custom203 .* lsn: ([0-9A-F]+/[0-9A-F]+), .* desc: UNKNOWN \(([0-9a-f]+)\)};
	}
	diag "pg_waldump: $stderr" unless $ok;
	return ($ok, \@recs);
}

# How many of the records have info $info.
sub count_info
{
	my ($recs, $info) = @_;
	return scalar grep { $_->[1] eq $info } @$recs;
}

# One case: $write->($node, $tag) writes records of one kind (known info
# $known) into t and alike into the heap shadow s; with the setting on,
# they have info $unknown, and $form (if given) in their first byte: an EXT
# record of that form.
sub one_case
{
	my ($name, $known, $unknown, $write, $form) = @_;
	my $UNKNOWN = uc $unknown;
	# what pg_walinspect and the PANIC and its context say of them
	my ($type, $where, $panic, $context) = defined $form
	  ? ("EXT unknown form $form", "record_type = 'EXT' AND description LIKE 'unknown form%'",
		"0x$UNKNOWN form $form", 'EXT')
	  : ("UNKNOWN ($unknown) ", "record_type LIKE 'UNKNOWN%'", "0x$UNKNOWN", "UNKNOWN \\($UNKNOWN\\)");

	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	# (no checkpoint of its own between the writes and the crash: recovery
	# must meet them)
	$node->append_conf('postgresql.conf', q(
shared_preload_libraries = 'ddb'
ddb.http_port = 0
autovacuum = off
checkpoint_timeout = '1h'
max_wal_size = '1GB'
));
	$node->start;
	is( $node->safe_psql('postgres',
			q{SELECT count(*) FROM pg_get_wal_resource_managers() WHERE rm_name = 'ddb' AND NOT rm_builtin}),
		'1', "$name: ddb's resource manager is registered (preloaded)");
	$node->safe_psql('postgres', $schema);

	# ---- (a) the known form: written, crash, recovered ----
	$node->safe_psql('postgres', 'CHECKPOINT');
	my $from = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
	$write->($node, 'A', 'off');
	my $to = $node->safe_psql('postgres', 'SELECT pg_current_wal_flush_lsn()');
	my ($ok, $recs) = waldump_ddb($node, $from, $to);
	ok($ok, "(a) $name: pg_waldump reads the WAL");
	note "(a) $name: " . count_info($recs, $known) . " records with info $known, of " . scalar(@$recs) . " of ddb's";
	cmp_ok(count_info($recs, $known), '>', 0, "(a) $name: records with the known info $known were written");
	is(count_info($recs, $unknown), 0, "(a) $name: ... and none with $unknown while the setting is off");

	$node->stop('immediate');
	my $logstart = -s $node->logfile;
	ok($node->start(fail_ok => 1), "(a) $name: after a crash with the known form in the WAL, the server starts");
	my $log = slurp_file($node->logfile, $logstart);
	ok($log =~ m{redo starts at ([0-9A-F]+/[0-9A-F]+)} && lsn($1) <= lsn($from) && $log =~ /redo done/,
		"(a) $name: crash recovery replayed them (redo from before them to the end)");
	DdbWal::same_rows($node, "(a) $name: after recovery");

	# ---- (b) the unknown form: written, pg_waldump reads it ----
	$from = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
	$write->($node, 'B', 'on');
	$to = $node->safe_psql('postgres', 'SELECT pg_current_wal_flush_lsn()');
	($ok, $recs) = waldump_ddb($node, $from, $to);
	ok($ok, "(b) $name: pg_waldump reads the WAL with the unknown form in it");
	my @bad = grep { $_->[1] eq $unknown } @$recs;
	note "(b) $name: " . scalar(@bad) . " records with info $unknown, of " . scalar(@$recs) . " of ddb's";
	cmp_ok(scalar @bad, '>', 0, "(b) $name: records with the unknown info $unknown were written (pg_waldump: custom203, UNKNOWN ($unknown))");
	is(count_info($recs, $known), 0, "(b) $name: ... and none with $known while the setting is on");
	is( $node->safe_psql('postgres', qq{
			SELECT string_agg(DISTINCT record_type || ' ' || description, ', ')
			FROM pg_get_wal_records_info('$from', '$to')
			WHERE resource_manager = 'ddb' AND $where}),
		$type,
		"(b) $name: pg_walinspect names them $type and does not decode them");
	is( $node->safe_psql('postgres', qq{
			SELECT count(*) FROM pg_get_wal_records_info('$from', '$to')
			WHERE resource_manager = 'ddb' AND $where}),
		scalar @bad, "(b) $name: ... all " . scalar(@bad) . " of them");

	# ---- (c) a crash: recovery meets them and stops ----
	$node->stop('immediate');
	$logstart = -s $node->logfile;
	my $started = $node->start(fail_ok => 1);
	ok(!$started, "(c) $name: after a crash with the unknown form in the WAL, the server does not start");
	$log = slurp_file($node->logfile, $logstart);
	like($log,
		qr/PANIC:  ddb WAL record with unknown info $panic: this server's ddb is older than the one that wrote it/,
		"(c) $name: recovery stops with ddb's PANIC naming the info $panic");
	ok($log =~ m{PANIC:  ddb WAL record with unknown info[^\n]*\n(?:[^\n]*\n)*?[^\n]*CONTEXT:  WAL redo at ([0-9A-F]+/[0-9A-F]+) for ddb/$context}
		  && @bad && lsn($1) == lsn($bad[0][0]),
		"(c) $name: ... at the first record of that form (" . ($bad[0][0] // 'none')
		  . '), which the error context does not name as a kind ddb knows');
	unlike($log, qr/redo done/, "(c) $name: redo did not finish");
	if ($started)
	{
		fail("(c) $name: ... and is not running");
		$node->stop('immediate');
		return;
	}
	# (the postmaster exits after the startup process's PANIC)
	for (1 .. $PostgreSQL::Test::Utils::timeout_default)
	{
		last unless -e $node->data_dir . '/postmaster.pid';
		sleep 1;
	}
	$node->_update_pid(-1);
	ok(!defined $node->{_pid}, "(c) $name: ... and is not running");
	return;
}

# A checks build's setting (a plain build skips, a checks build without it
# fails), asked of a node of its own: each case below starts its own.
{
	my $probe = PostgreSQL::Test::Cluster->new('probe');
	$probe->init;
	$probe->append_conf('postgresql.conf', "shared_preload_libraries = 'ddb'\nddb.http_port = 0\n");
	$probe->start;
	DdbWal::require_check_setting($probe, 'ddb.check_wal_unknown_form');
	$probe->stop;
}

# INSERT_MULTI (0x60; unknown: 0xE0): COPY into an existing table places a
# batch's items of one leaf in one record.
one_case('insert_multi', '60', 'e0', sub {
	my ($node, $tag, $form) = @_;
	my $file = $node->basedir . "/copy_$tag.tsv";
	open my $fh, '>', $file or die "$file: $!";
	printf $fh "P%d\t%sC%05d\t{\"c\": %d}\n", $_ % 20, $tag, $_, $_ for 1 .. 3000;
	close $fh;
	$node->safe_psql('postgres', qq{
		SET ddb.check_wal_unknown_form = $form;
		SET ddb.check_wal_legacy = uncompressed;
		COPY t FROM '$file';
		COPY s FROM '$file';
	});
});

# UPDATE_MAP (0x70; unknown: EXT, 0xF0, form 255): an update beside its old
# version, with its row-id map entry.
one_case('update_map', '70', 'f0', sub {
	my ($node, $tag, $form) = @_;
	for my $tbl ('t', 's')
	{
		$node->safe_psql('postgres', qq{
			SET ddb.check_wal_unknown_form = $form;
			SET ddb.check_wal_legacy = uncompressed;
			UPDATE $tbl SET item = item || jsonb_build_object('u', '$tag') WHERE (item->>'n')::int % 10 = 3;
		});
	}
}, 255);

done_testing();
