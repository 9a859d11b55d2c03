
# Copyright (c) ddb authors

# Which WAL the TAP tests' servers write for ddb tables.
#
# DDB_TAP_WAL=custom puts ddb in shared_preload_libraries, so the engine
# logs its hot-path changes with ddb's own resource manager
# (src/engine/ddb_wal.c); unset or "generic" leaves it to CREATE EXTENSION
# alone, and everything is Generic WAL.  The tests that crash, replicate or
# wrap around call configure() on every node they create and check_mode()
# once started (or primary_and_standby(), which does both); test/run.sh
# runs the tests that call either in both modes, and fails if a test that
# uses this module calls neither and is not one of those that preload ddb
# themselves (016, 019, 022: its tap_self_preload).
#
# same_rows() is the oracle of the tests of ddb's own records (016, 019,
# 022): a ddb table and its heap shadow hold the same rows.  Those that
# need a test-only setting of a checks build (019, 022) ask for it with
# require_check_setting().
#
# A test (or a stress run) that gives a primary with a standby on the same
# host an extra tablespace makes it in place (allow_in_place_tablespaces =
# on, LOCATION ''), or makes it before the base backup and maps it there
# (pg_basebackup -T).  CREATE TABLESPACE with an absolute LOCATION replayed
# by the standby links the standby to the primary's own directory: then the
# standby's redo unlinks at once a file that the primary dropped and will
# fsync at its next checkpoint, whose checkpointer PANICs with "could not
# fsync file ...: No such file or directory" -- with heap tables alone too
# (and the primary removes files the standby still replays into).

package DdbWal;

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use Test::More;

sub mode
{
	my $mode = $ENV{DDB_TAP_WAL} || 'generic';
	die "DDB_TAP_WAL must be \"generic\" or \"custom\", not \"$mode\"\n"
	  unless $mode eq 'generic' || $mode eq 'custom';
	return $mode;
}

# Before the node's first start (a standby made from a backup inherits the
# primary's configuration, and with it the setting).  In both modes the
# node keeps 1 GB of WAL for standbys: on a loaded machine a standby can
# fall behind a primary that a test then crashes, and the checkpoint of
# the primary's restart removed the segments the standby had yet to
# receive ("requested WAL segment ... has already been removed"), which
# it then waited for until the test timed out.  No background writer:
# prunes, map frees and page reuse take buffer locks without waiting, and
# its writes would make a test's exact counts depend on when it ran.
sub configure
{
	my ($node) = @_;
	$node->append_conf('postgresql.conf', "wal_keep_size = '1GB'\nbgwriter_lru_maxpages = 0\n");
	return if mode() ne 'custom';
	$node->append_conf('postgresql.conf', qq(
shared_preload_libraries = 'ddb'
ddb.http_port = 0
));
	return;
}

# The mode asked for is the mode the server runs: ddb's resource manager is
# registered exactly when preloaded (so a test in custom mode cannot pass
# on Generic WAL without saying so).
sub check_mode
{
	my ($node) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $n = $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_get_wal_resource_managers() WHERE rm_name = 'ddb' AND NOT rm_builtin});
	is($n, mode() eq 'custom' ? '1' : '0',
		$node->name . ': WAL mode ' . mode() . ' (ddb resource manager registered: ' . $n . ')');
	return;
}

# A primary and a streaming standby for the tests that replay a ddb table t
# against its heap shadow s (same_rows): autovacuum off (the test decides
# when versions go), ddb's own records replayed to the primary's bytes
# (wal_consistency_checking) in custom mode, t and s ("PK" text, "SK"
# numeric, item jsonb) made before the base backup.  The standby inherits
# the primary's configuration.  Returns both, started.
sub primary_and_standby
{
	my $primary = PostgreSQL::Test::Cluster->new('primary');
	$primary->init(allows_streaming => 1);
	configure($primary);
	$primary->append_conf('postgresql.conf', "autovacuum = off\n");
	$primary->append_conf('postgresql.conf', "wal_consistency_checking = 'ddb'\n")
	  if mode() eq 'custom';
	$primary->start;
	check_mode($primary);
	$primary->safe_psql('postgres', q{
		CREATE EXTENSION ddb;
		CREATE TABLE t ("PK" text, "SK" numeric, item jsonb) USING ddb;
		CREATE TABLE s ("PK" text, "SK" numeric, item jsonb);
	});
	$primary->backup('bk');
	my $standby = PostgreSQL::Test::Cluster->new('standby');
	$standby->init_from_backup($primary, 'bk', has_streaming => 1);
	$standby->start;
	return ($primary, $standby);
}

# The WAL tests' oracle: table t (ddb) holds exactly the rows of its heap
# shadow s, written in the same transactions, and ddb_verify('t') is clean.
sub same_rows
{
	my ($node, $what) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	is( $node->safe_psql('postgres',
			'SELECT count(*) FROM (SELECT * FROM t EXCEPT ALL SELECT * FROM s) a') . '/'
		  . $node->safe_psql('postgres',
			'SELECT count(*) FROM (SELECT * FROM s EXCEPT ALL SELECT * FROM t) b'),
		'0/0', "$what: t holds exactly the rows of the heap shadow");
	my ($ret, $out, $err) = $node->psql('postgres', "SELECT ddb_verify('t')");
	ok($ret == 0 && $out =~ /^\{.*\}$/s, "$what: ddb_verify is clean: $out $err");
	return;
}

# The test-only setting a test needs, asked of a started node with ddb
# preloaded.  Such settings exist only in checks builds (make CHECKS=1,
# which test/run.sh and CI install): a plain build (no ddb.check_* setting
# at all) skips the whole test, saying so; a checks build without this one
# (a renamed setting) fails it, rather than skip silently where it is meant
# to run.
sub require_check_setting
{
	my ($node, $setting) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my ($have, $any) = split m{/}, $node->safe_psql('postgres',
		qq{SELECT count(*) FILTER (WHERE name = '$setting') || '/' || count(*) FROM pg_settings WHERE name LIKE 'ddb.check\\_%'});
	plan skip_all => "$setting exists only in a checks build of ddb (make CHECKS=1; test/run.sh installs one)"
	  if $any == 0;
	return if $have == 1;
	fail("a checks build of ddb (it has $any ddb.check_* settings) has $setting");
	done_testing();
	exit 0;
}

1;
