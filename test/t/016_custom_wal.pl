
# Copyright (c) ddb authors

# ddb's own WAL resource manager (src/engine/ddb_wal.c) and its safety.
#
# With ddb in shared_preload_libraries the engine logs leaf inserts, version
# marks, one-record updates, row-id map entries and prunes as records of the
# resource manager "ddb" (id 203), and so are leaf splits below an existing
# parent and a batch's items of one leaf (COPY into an existing table:
# INSERT_MULTI); without it, everything is Generic WAL.  This proves:
#   (a) the records are written when preloaded, every kind of them
#       (pg_walinspect names them, pg_waldump --stats counts them as
#       custom203), and none without the preload -- inserts and a batch's
#       items in the EXT forms that leave out what redo knows, leaf splits
#       with their right half LZ4-compressed (the primary runs with
#       wal_compression = lz4), and no insert in the earlier forms that log
#       the items whole;
#   (b) their redo is exact: the primary runs with wal_consistency_checking
#       = 'ddb', so the standby compares every page it replays from them with
#       the primary's image (hint bits masked), and both answer the same
#       queries, ddb_verify clean -- among them updates logged as a delta
#       against the old version, with the new version's row-id map entry in
#       the same record (UPDATE_MAP), of every shape: identical items, a
#       change in the middle, at the end, at both ends, longer and shorter
#       items, a second update in one transaction (a combo command id, so
#       the header's middle is logged), an update after an aborted one (the
#       new version goes before the aborted version, not at the old
#       version's offset, so the record names its offset), updates that
#       prune their leaf first, whose removed versions' map entries are
#       cleared by slot (MAP_CLEAR), and updates beside a row lock of their
#       own transaction (a multixact xmax);
#   (c) a standby without the preload stops at the first ddb record, saying
#       why, and with it catches up;
#   (d) a crash with ddb records in WAL, restarted without the preload: the
#       server refuses to start and names the resource manager; with it,
#       every committed row is back and ddb_verify is clean;
#   (e) the preload removed and added again across clean shutdowns (no WAL
#       to replay) is fine both ways, and a preloaded server replays Generic
#       WAL written without it.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib $FindBin::RealBin;
use DdbPgbench;
use DdbWal;

my $preload = qq(
shared_preload_libraries = 'ddb'
ddb.http_port = 0
log_min_messages = warning
);

# Records of each kind on the ddb resource manager between two LSNs
# (pg_walinspect runs rm_identify, so the names are ddb's own).
sub kinds_since
{
	my ($node, $lsn) = @_;
	# (an EXT record by its form, which its description names first)
	my $out = $node->safe_psql('postgres', qq{
		SELECT k || '=' || count(*) FROM (
			SELECT CASE WHEN record_type <> 'EXT' THEN record_type
				WHEN description ~ '^SPLIT \\(right half lz4\\)' THEN 'EXT_SPLIT_LZ4'
				WHEN description ~ '^INSERT, .*, with its map entry' THEN 'EXT_INSERT_MAP'
				ELSE 'EXT_' || substring(description FROM '^[A-Z_]+') END AS k
			FROM pg_get_wal_records_info('$lsn', pg_current_wal_flush_lsn())
			WHERE resource_manager = 'ddb') r
		GROUP BY k ORDER BY k});
	return { map { split /=/ } split /\n/, $out };
}

# pg_waldump --stats row of a resource manager between two LSNs: record count.
sub waldump_count
{
	my ($node, $from, $to, $rmgr) = @_;
	my ($stdout, $stderr);
	IPC::Run::run [ 'pg_waldump', '--stats', '-p', $node->data_dir . '/pg_wal', '-s', $from, '-e', $to ],
	  '>', \$stdout, '2>', \$stderr;
	return $1 if $stdout =~ /^\Q$rmgr\E\s+(\d+)/m;
	return 0;
}

# The workload: every kind of change, with a heap shadow written alike.
sub workload
{
	my ($node, $tag) = @_;
	$node->safe_psql('postgres', qq{
		INSERT INTO t SELECT 'P' || (g % 40), '$tag' || g, jsonb_build_object('n', g, 'pad', repeat('x', g % 150)) FROM generate_series(1, 3000) g;
		INSERT INTO s SELECT 'P' || (g % 40), '$tag' || g, jsonb_build_object('n', g, 'pad', repeat('x', g % 150)) FROM generate_series(1, 3000) g;
		UPDATE t SET item = item || '{"u": 1}' WHERE "SK" LIKE '$tag%' AND (item->>'n')::int % 3 = 0;
		UPDATE s SET item = item || '{"u": 1}' WHERE "SK" LIKE '$tag%' AND (item->>'n')::int % 3 = 0;
		DELETE FROM t WHERE "SK" LIKE '$tag%' AND (item->>'n')::int % 7 = 0;
		DELETE FROM s WHERE "SK" LIKE '$tag%' AND (item->>'n')::int % 7 = 0;
	});
	# updates of every shape for the delta against the old version: the
	# item's data (a jsonb whose values are n, then pad) unchanged, changed
	# in the middle (n, same length), at its end (pad's last character), at
	# both ends, longer, shorter, and twice in one transaction
	for my $tbl ('t', 's')
	{
		my $w = qq{"SK" LIKE '$tag%' AND length(item->>'pad') > 1 AND (item->>'n')::int};
		$node->safe_psql('postgres', qq{
			UPDATE $tbl SET item = item WHERE $w % 11 = 1;
			UPDATE $tbl SET item = item || jsonb_build_object('n', (item->>'n')::int + 1) WHERE $w % 11 = 2 AND (item->>'n')::int % 10 < 9;
			UPDATE $tbl SET item = item || jsonb_build_object('pad', left(item->>'pad', -1) || 'z') WHERE $w % 11 = 3;
			UPDATE $tbl SET item = item || jsonb_build_object('n', -(item->>'n')::int, 'pad', left(item->>'pad', -1) || 'y') WHERE $w % 11 = 4;
			UPDATE $tbl SET item = item || jsonb_build_object('pad', (item->>'pad') || 'www') WHERE $w % 11 = 5;
			UPDATE $tbl SET item = item || jsonb_build_object('pad', substr(item->>'pad', 3)) WHERE $w % 11 = 6;
			BEGIN;
			UPDATE $tbl SET item = item || '{"v": 1}' WHERE $w % 11 = 7;
			UPDATE $tbl SET item = item || '{"v": 2}' WHERE $w % 11 = 7;
			COMMIT;
			BEGIN;
			UPDATE $tbl SET item = item || '{"a": 1}' WHERE $w % 11 = 8;
			ROLLBACK;
			UPDATE $tbl SET item = item || '{"a": 2}' WHERE $w % 11 = 8;
		});
	}
	$node->safe_psql('postgres', qq{
		BEGIN;
		SELECT "SK" FROM t WHERE "PK" = 'P3' AND "SK" LIKE '$tag%' FOR UPDATE;
		COMMIT;
	});
	# updates beside a row lock of their own transaction, in subtransactions
	# rolled back and released: their xmax is a multixact of the lock and
	# the update (the standby reads its members to judge them)
	for my $tbl ('t', 's')
	{
		$node->safe_psql('postgres', qq{
			BEGIN;
			SELECT "SK" FROM $tbl WHERE "PK" = 'P4' AND "SK" LIKE '$tag%' FOR UPDATE;
			SAVEPOINT a;
			UPDATE $tbl SET item = item || '{"m": 1}' WHERE "PK" = 'P4' AND "SK" LIKE '$tag%';
			ROLLBACK TO a;
			SAVEPOINT b;
			UPDATE $tbl SET item = item || '{"m": 2}' WHERE "PK" = 'P4' AND "SK" LIKE '$tag%' AND (item->>'n')::int % 2 = 0;
			RELEASE b;
			COMMIT;
		});
	}
	# marks of versions inserted earlier in the same transaction (a combo
	# command id, which a short MARK record does not log) and a lock, then a
	# delete, of one version
	for my $tbl ('t', 's')
	{
		$node->safe_psql('postgres', qq{
			BEGIN;
			INSERT INTO $tbl VALUES ('P5', '${tag}X', '{"x": 1}'), ('P6', '${tag}Y', '{"y": 1}');
			UPDATE $tbl SET item = '{"x": 2}' WHERE "PK" = 'P5' AND "SK" = '${tag}X';
			SELECT * FROM $tbl WHERE "PK" = 'P6' AND "SK" = '${tag}Y' FOR UPDATE;
			DELETE FROM $tbl WHERE "PK" = 'P6' AND "SK" = '${tag}Y';
			COMMIT;
		});
	}
	# COPY into the existing table: its row path places a batch's items of
	# one leaf in one record (ddb_tree_insert_multi), splitting on the way
	my $copy = "seq 1 4000 | awk '{printf \"P%d\\t${tag}C%05d\\t{\\\"c\\\": %d}\\n\", \$1 % 40, \$1, \$1}'";
	$node->safe_psql('postgres', qq{
		COPY t FROM PROGRAM \$q\$$copy\$q\$;
		COPY s FROM PROGRAM \$q\$$copy\$q\$;
	});
	# a hot key: one transaction per overwrite, so its leaf fills with dead
	# versions and is pruned instead of split
	$node->safe_psql('postgres', qq{
		DO \$\$
		BEGIN
			FOR i IN 1..250 LOOP
				PERFORM ddb_put_item('t', jsonb_build_object('PK', 'hot', 'SK', '$tag', 'n', i, 'pad', repeat('h', 200)));
				COMMIT;
			END LOOP;
		END \$\$;
		INSERT INTO s VALUES ('hot', '$tag', jsonb_build_object('n', 250, 'pad', repeat('h', 200)));
	});
	return;
}

# Writers of one small table at once (c: 4 partitions on a few leaves),
# each insert and update setting its map entry in its own record with the
# map leaf locked under the tree leaf, while TID lookups read the map
# (UPDATE by ctid), prunes and VACUUM clear entries, and batches defer
# theirs: no lock cycle (a hang would end in statement_timeout and fail the
# run), and ddb_verify clean.
sub concurrent
{
	my ($node) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	$node->safe_psql('postgres', q{
		CREATE TABLE conc ("PK" text, "SK" text, item jsonb) USING ddb;
		INSERT INTO conc SELECT 'C' || (g % 4), 'k' || g, jsonb_build_object('n', 0, 'pad', repeat('c', 150)) FROM generate_series(1, 40) g;
	});
	my %scripts = (
		update => q{
\set k random(1, 40)
SELECT ddb_update_item('conc', jsonb_build_object('PK', 'C' || (:k % 4), 'SK', 'k' || :k), 'ADD n :' || 'one', vals => jsonb_build_object(':' || 'one', 1));
},
		put => q{
\set k random(1, 3000)
SELECT ddb_put_item('conc', jsonb_build_object('PK', 'C' || (:k % 4), 'SK', 'p' || :k, 'pad', repeat('p', 120)));
},
		by_ctid => q{
\set k random(1, 40)
UPDATE conc SET item = item || '{"t": 1}' WHERE ctid = (SELECT ctid FROM conc WHERE "PK" = 'C' || (:k % 4) AND "SK" = 'k' || :k);
},
		batch => q{
\set k random(1, 3000)
SELECT ddb_batch_write_item(jsonb_build_object('conc', jsonb_build_array(
  jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object('PK', 'C' || (:k % 4), 'SK', 'b' || :k))),
  jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object('PK', 'C' || ((:k + 1) % 4), 'SK', 'b' || :k))))));
},
		vacuum => q{
VACUUM conc;
});
	my ($ok, $out, $err) = DdbPgbench::run($node, \%scripts,
		{ update => 6, put => 3, by_ctid => 2, batch => 1, vacuum => 1 },
		clients => 6, transactions => 150);
	ok($ok, '(b) concurrent writers of one table ran without errors') or diag $err;
	my ($ret, $v, $verr) = $node->psql('postgres', "SELECT ddb_verify('conc')");
	ok($ret == 0 && $v =~ /^\{.*\}$/s, "(b) ddb_verify is clean after them: $v $verr");
	return;
}

# The item API's update of a leaf's first item: the leaf keeps no low
# bound, but the API's read found the version on the key's first leaf, so
# the new version (which sorts right before it) goes beside it in one
# UPDATE_MAP record, not a separate MARK and INSERT.
sub first_item_update
{
	my ($node) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	$node->safe_psql('postgres', q{
		CREATE TABLE fl ("PK" text, "SK" text, item jsonb) USING ddb;
		INSERT INTO fl SELECT 'F' || g, 's', '{"n": 0}' FROM generate_series(1, 5) g;
	});
	# a seq scan returns the items in key order: the first is the leaf's first
	my $first = $node->safe_psql('postgres', q{SELECT "PK" FROM fl LIMIT 1});
	my $from = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
	$node->safe_psql('postgres', qq{
		SELECT ddb_update_item('fl', '{"PK": "$first", "SK": "s"}', 'SET n = :one', vals => '{":one": 1}')});
	my $to = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
	is( $node->safe_psql('postgres', qq{
			SELECT string_agg(record_type, ',' ORDER BY start_lsn)
			FROM pg_get_wal_records_info('$from', '$to') WHERE resource_manager = 'ddb'}),
		'UPDATE_MAP', '(a) the API\'s update of a leaf\'s first item is one UPDATE_MAP record');
	my ($ret, $v, $verr) = $node->psql('postgres', "SELECT ddb_verify('fl')");
	ok($ret == 0 && $v =~ /^\{.*\}$/s, "(a) ... and ddb_verify is clean: $v $verr");
	return;
}

# A leaf whose items redo wrote with other command ids than the primary's,
# re-laid by a Generic WAL record.  Redo of ddb's own inserts writes
# FirstCommandId, as heap's does (the inserts of a transaction's later
# command: here after the CREATE TABLE's catalog writes), and the root
# leaf's split is Generic WAL, which logs only the bytes the primary's page
# changed: a leaf whose items move is logged whole (ddb_page.h,
# DDB_GENERIC_ITEMS_MOVE), else where a moved item happened to bring the
# primary's old byte back, the standby kept its own, in another field.
# The inserts after the split then find the standby's page unlike the
# primary's (wal_consistency_checking), and ddb_verify there a t_ctid that
# does not point to itself.
sub relaid_leaf
{
	my ($node) = @_;
	$node->safe_psql('postgres', q{
		BEGIN;
		CREATE TABLE relaid ("PK" text, "SK" text, item jsonb) USING ddb;
		INSERT INTO relaid SELECT 'P' || (i % 7), lpad(i::text, 5, '0'),
		  jsonb_build_object('s', (SELECT string_agg(chr(c), '') FROM generate_series(1, 127) c) || i)
		FROM generate_series(1, 120) i;
		COMMIT;
		INSERT INTO relaid SELECT 'P' || (i % 7), lpad(i::text, 5, '0') || 'a', '{}'
		FROM generate_series(1, 120) i;
	});
	return;
}

my $schema = q{
	CREATE EXTENSION ddb;
	CREATE EXTENSION pg_walinspect;
	CREATE TABLE t ("PK" text, "SK" text, item jsonb) USING ddb;
	CREATE TABLE s ("PK" text, "SK" text, item jsonb);
};

# ---- (a), (b), (c): a preloaded primary and two standbys ----------------
my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
# (wal_keep_size: the bare standby below stops at the first ddb record and
# starts again later; the WAL it still needs must not be recycled meanwhile,
# which on a loaded machine a checkpoint in between would do)
$primary->append_conf('postgresql.conf',
	$preload . "wal_consistency_checking = 'ddb'\nwal_keep_size = '512MB'\nwal_compression = lz4\n"
	  # the test decides when VACUUM runs: one of autovacuum's would write
	  # records into the WAL ranges it counts
	  . "autovacuum = off\n");
$primary->start;
$primary->safe_psql('postgres', $schema);
$primary->backup('base');

my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

# a standby made the same way, but without the preload
my $bare = PostgreSQL::Test::Cluster->new('bare');
$bare->init_from_backup($primary, 'base', has_streaming => 1);
$bare->adjust_conf('postgresql.conf', 'shared_preload_libraries', "''");
# (the consistency checks name ddb's resource manager: unknown without it)
$bare->adjust_conf('postgresql.conf', 'wal_consistency_checking', "''");
$bare->start;

my $lsn = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
workload($primary, 'A');
concurrent($primary);
first_item_update($primary);
relaid_leaf($primary);
$primary->safe_psql('postgres', 'VACUUM t');
my $end = $primary->safe_psql('postgres', 'SELECT pg_current_wal_flush_lsn()');

my $kinds = kinds_since($primary, $lsn);
note explain $kinds;
for my $kind ('EXT_INSERT_MAP', 'EXT_INSERT_MULTI', 'MARK', 'UPDATE_MAP', 'MAP', 'MAP_CLEAR', 'PRUNE',
	'EXT_SPLIT_LZ4')
{
	cmp_ok($kinds->{$kind} // 0, '>', 0, "(a) ddb records of kind $kind were written");
}
# inserts leave out what redo knows, and splits compress their right half
# (the earlier forms, still replayed, are TAP 019's)
for my $kind ('INSERT', 'INSERT_MAP', 'INSERT_MULTI')
{
	is($kinds->{$kind} // 0, 0, "(a) no $kind record in the form that logs its items whole");
}
# the forms an update takes: its new item as a delta, at an offset of its
# own after an aborted version of its key, and after pruning its leaf (the
# hot key's overwrites)
is( $primary->safe_psql('postgres', qq{
		SELECT count(*) FILTER (WHERE description ~ 'delta') > 0,
		       count(*) FILTER (WHERE substring(description from '^off (\\d+)')
		                         <> substring(description from 'new off (\\d+)')) > 0,
		       count(*) FILTER (WHERE description ~ 'pruned') > 0
		FROM pg_get_wal_records_info('$lsn', '$end') WHERE record_type = 'UPDATE_MAP'}),
	't|t|t', '(a) UPDATE_MAP records with a delta, with a new offset of their own, with a prune');
cmp_ok($primary->safe_psql('postgres', qq{
		SELECT count(*) FROM pg_get_wal_records_info('$lsn', '$end')
		WHERE resource_manager = 'MultiXact' AND record_type = 'CREATE_ID'}), '>', 0,
	'(a) the updates beside a row lock made multixacts');
cmp_ok(waldump_count($primary, $lsn, $end, 'custom203'), '>', 0,
	'(a) pg_waldump --stats counts them as custom203');

$primary->wait_for_catchup($standby);
DdbWal::same_rows($standby, '(b) standby, replayed with consistency checks');
is($standby->safe_psql('postgres', q{SELECT item->>'n' FROM t WHERE "PK" = 'hot' AND "SK" = 'A'}),
	'250', '(b) the hot key reads its last version on the standby');
ok(!$standby->log_contains('inconsistent page found'),
	'(b) no replayed page differed from the primary\'s');
my $rows_c = q{SELECT md5(string_agg(c::text, ',' ORDER BY "PK", "SK")) FROM conc c};
is($standby->safe_psql('postgres', $rows_c), $primary->safe_psql('postgres', $rows_c),
	'(b) the concurrently written table reads the same on the standby');
my ($vret, $vout, $verr) = $standby->psql('postgres', "SELECT ddb_verify('conc')");
ok($vret == 0 && $vout =~ /^\{.*\}$/s, "(b) ... and its ddb_verify is clean there: $vout $verr");
my $rows_r = q{SELECT md5(string_agg(r::text, ',' ORDER BY "PK", "SK")) FROM relaid r};
is($standby->safe_psql('postgres', $rows_r), $primary->safe_psql('postgres', $rows_r),
	'(b) a leaf re-laid by Generic WAL after ddb\'s inserts reads the same on the standby');
($vret, $vout, $verr) = $standby->psql('postgres', "SELECT ddb_verify('relaid')");
ok($vret == 0 && $vout =~ /^\{.*\}$/s, "(b) ... and its ddb_verify is clean there: $vout $verr");
DdbWal::same_rows($primary, '(b) primary');

# (c) the bare standby stopped at the first ddb record
$bare->wait_for_log(qr/resource manager with ID 203 not registered/);
ok($bare->log_contains('Include the extension module that implements this resource manager in shared_preload_libraries'),
	'(c) a standby without the preload stops and says what to load');
for (1 .. $PostgreSQL::Test::Utils::timeout_default)
{
	last unless -e $bare->data_dir . '/postmaster.pid';
	sleep 1;
}
$bare->_update_pid(-1);
ok(!defined $bare->{_pid}, '(c) ... and is not running');
$bare->adjust_conf('postgresql.conf', 'shared_preload_libraries', "'ddb'");
$bare->start;
$primary->wait_for_catchup($bare);
DdbWal::same_rows($bare, '(c) the standby, preloaded, caught up');
$bare->stop;
$standby->stop;
$primary->stop;

# ---- (d), (e): crash and restarts on one server --------------------------
my $node = PostgreSQL::Test::Cluster->new('solo');
$node->init;
$node->append_conf('postgresql.conf', $preload);
$node->start;
$node->safe_psql('postgres', $schema);
$node->safe_psql('postgres', 'CHECKPOINT');
workload($node, 'D');
$node->stop('immediate');

$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "''");
my $logstart = -s $node->logfile;
ok(!$node->start(fail_ok => 1), '(d) without the preload the crashed server does not start');
ok($node->log_contains(qr/FATAL:  resource manager with ID 203 not registered/, $logstart),
	'(d) ... and the log names the resource manager');
$node->_update_pid(-1);
$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "'ddb'");
$node->start;
DdbWal::same_rows($node, '(d) restarted with the preload after the crash');

# (e) clean shutdown, no preload: reads the same, writes Generic WAL only
$node->stop;
$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "''");
$node->start;
DdbWal::same_rows($node, '(e) clean restart without the preload');
$lsn = $node->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
workload($node, 'E');
$end = $node->safe_psql('postgres', 'SELECT pg_current_wal_flush_lsn()');
is(waldump_count($node, $lsn, $end, 'custom203'), 0, '(a) without the preload no ddb record is written');
cmp_ok(waldump_count($node, $lsn, $end, 'Generic'), '>', 0, '(a) ... but Generic ones');
DdbWal::same_rows($node, '(e) writes without the preload');

# a crash in Generic mode, replayed by a preloaded server
$node->stop('immediate');
$node->adjust_conf('postgresql.conf', 'shared_preload_libraries', "'ddb'");
$node->start;
DdbWal::same_rows($node, '(e) Generic WAL replayed with the preload');
workload($node, 'F');
$node->stop;
$node->start;
DdbWal::same_rows($node, '(e) clean restart with the preload');
$node->stop;

done_testing();
