
# Copyright (c) ddb authors

# The redo of ddb's legacy WAL record forms (src/engine/ddb_wal.c).
#
# Earlier versions of ddb wrote record forms that current ddb no longer
# writes but still replays, because a standby or a crash recovery may meet
# WAL an older ddb wrote: a MARK in the long form (xl_ddb_mark, with the
# command id), an UPDATE with the whole new item, an UPDATE|DELTA whose
# delta logs t_xmax, t_hoff and the null bitmap always, and single writes
# whose map entries follow as MAP records (their inserts plain INSERTs).
# The test-only setting ddb.check_wal_legacy (checks builds only) makes the
# primary write them where those versions did.  This proves:
#   (a) the legacy forms are written, each of them many times, and the
#       current forms they replace (UPDATE_MAP, INSERT_MAP, the short MARK)
#       are not, while the setting is on (pg_walinspect names them); with
#       it 'uncompressed', the forms written just before inserts left out
#       what redo knows and splits compressed their right half: INSERT_MAP,
#       INSERT_MULTI and the uncompressed splits, none of the EXT INSERT,
#       INSERT_MULTI or SPLIT_PACKED forms (nor with the other settings),
#       though wal_compression is on; with the setting off, the current
#       forms, splits compressed with wal_compression's method (pglz, lz4)
#       and not compressed with it off;
#   (b) their redo is exact: with wal_consistency_checking = 'ddb' the
#       standby compares every page it replays from them with the primary's
#       image, and it reads the same rows as the primary and as a heap
#       shadow table written alike, ddb_verify clean on both -- for deletes,
#       row locks, marks of versions inserted in the same transaction (a
#       combo command id), updates beside their old version of every shape
#       (as a delta, and whole), and updates that do not fit beside it (a
#       separate long MARK and INSERT);
#   (c) a crash (immediate stop) with the legacy forms in the WAL since the
#       last checkpoint, and the current ones after them (LZ4 splits):
#       recovery replays them, under the same consistency
#       checks, to the same rows, ddb_verify clean, and the standby follows.

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
$primary->append_conf('postgresql.conf', q(
shared_preload_libraries = 'ddb'
ddb.http_port = 0
wal_consistency_checking = 'ddb'
autovacuum = off
wal_keep_size = '1GB'
));
$primary->start;

# a checks build's setting: a plain build skips, a checks build without it fails
DdbWal::require_check_setting($primary, 'ddb.check_wal_legacy');

$primary->safe_psql('postgres', q{
	CREATE EXTENSION ddb;
	CREATE EXTENSION pg_walinspect;
	CREATE TABLE t ("PK" text, "SK" text, item jsonb) USING ddb;
	CREATE TABLE s ("PK" text, "SK" text, item jsonb);
});
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

# Records of the ddb resource manager between two LSNs, by form: a MARK in
# the long form (its description shows t_ctid, "ctid (b,o)"; the short
# form's does not) as MARK_LONG or, lock-only, MARK_LONG_LOCK; the
# others by the name ddb's rm_identify gives them.  Only records that carry
# their block data count (not those whose page redo restores from a full
# image instead: "delta"/"item" in an update's description, an insert's
# "item"), so each counted record ran its redo code.
sub forms_since
{
	my ($node, $from) = @_;
	my $out = $node->safe_psql('postgres', qq{
		SELECT f || '=' || count(*) FROM (
			SELECT CASE
				WHEN record_type = 'MARK' AND description ~ ' ctid \\('
					THEN CASE WHEN description ~ 'lock-only' THEN 'MARK_LONG_LOCK' ELSE 'MARK_LONG' END
				WHEN record_type = 'MARK' THEN 'MARK_SHORT'
				WHEN record_type IN ('UPDATE', 'UPDATE_DELTA', 'INSERT')
				     AND description !~ '(delta|item) [0-9]+ bytes' THEN record_type || '_IMAGE'
				WHEN record_type = 'EXT' AND description ~ '^SPLIT \\(right half lz4\\)' THEN 'EXT_SPLIT_LZ4'
				WHEN record_type = 'EXT' AND description ~ '^SPLIT \\(right half pglz\\)' THEN 'EXT_SPLIT_PGLZ'
				WHEN record_type = 'EXT' THEN 'EXT_' || substring(description FROM '^[A-Z_]+')
				ELSE record_type END AS f
			FROM pg_get_wal_records_info('$from', pg_current_wal_flush_lsn())
			WHERE resource_manager = 'ddb') r
		GROUP BY f ORDER BY f});
	return { map { split /=/ } split /\n/, $out };
}

# wal_compression for the statements below: with it on, ddb compresses a
# split's right half (EXT SPLIT_PACKED), which no legacy setting writes.
my $walcomp = 'lz4';

# The same statements on t (ddb) and s (its heap shadow), in one session
# with ddb.check_wal_legacy set as asked and wal_compression as $walcomp.
sub both
{
	my ($node, $legacy, $sql) = @_;
	my $all = '';
	for my $tbl ('t', 's')
	{
		(my $q = $sql) =~ s/\bTBL\b/$tbl/g;
		$all .= $q;
	}
	return $node->safe_psql('postgres',
		"SET ddb.check_wal_legacy = $legacy;\nSET wal_compression = $walcomp;\n$all");
}

# Every kind of change an older ddb logged in a legacy form, keys tagged.
sub workload
{
	my ($node, $legacy, $tag) = @_;
	both($node, $legacy, qq{
		INSERT INTO TBL SELECT 'P' || (g % 30), '$tag' || g, jsonb_build_object('n', g, 'pad', repeat('x', g % 120)) FROM generate_series(1, 2000) g;
		DELETE FROM TBL WHERE "SK" LIKE '$tag%' AND (item->>'n')::int % 13 = 0;
	});
	# updates beside the old version, of every shape: unchanged, changed in
	# the middle, at the end, at both ends, longer, shorter; twice in one
	# transaction (a combo command id: the header's middle is logged); after
	# an aborted update of the same key
	my $w = qq{"SK" LIKE '$tag%' AND length(item->>'pad') > 1 AND (item->>'n')::int};
	both($node, $legacy, qq{
		UPDATE TBL SET item = item WHERE $w % 11 = 1;
		UPDATE TBL SET item = item || jsonb_build_object('n', (item->>'n')::int + 1) WHERE $w % 11 = 2 AND (item->>'n')::int % 10 < 9;
		UPDATE TBL SET item = item || jsonb_build_object('pad', left(item->>'pad', -1) || 'z') WHERE $w % 11 = 3;
		UPDATE TBL SET item = item || jsonb_build_object('n', -(item->>'n')::int, 'pad', left(item->>'pad', -1) || 'y') WHERE $w % 11 = 4;
		UPDATE TBL SET item = item || jsonb_build_object('pad', (item->>'pad') || 'www') WHERE $w % 11 = 5;
		UPDATE TBL SET item = item || jsonb_build_object('pad', substr(item->>'pad', 3)) WHERE $w % 11 = 6;
		BEGIN;
		UPDATE TBL SET item = item || '{"v": 1}' WHERE $w % 11 = 7;
		UPDATE TBL SET item = item || '{"v": 2}' WHERE $w % 11 = 7;
		COMMIT;
		BEGIN;
		UPDATE TBL SET item = item || '{"a": 1}' WHERE $w % 11 = 8;
		ROLLBACK;
		UPDATE TBL SET item = item || '{"a": 2}' WHERE $w % 11 = 8;
	});
	# row locks, alone and in a transaction that then updates and deletes;
	# marks of versions inserted earlier in the same transaction
	both($node, $legacy, qq{
		BEGIN;
		SELECT count(*) FROM (SELECT * FROM TBL WHERE "SK" LIKE '$tag%' AND (item->>'n')::int % 17 = 3 FOR UPDATE) l;
		COMMIT;
		BEGIN;
		SELECT count(*) FROM (SELECT * FROM TBL WHERE "SK" LIKE '$tag%' AND (item->>'n')::int % 17 = 5 FOR UPDATE) l;
		UPDATE TBL SET item = item || '{"l": 1}' WHERE "SK" LIKE '$tag%' AND (item->>'n')::int % 17 = 5;
		DELETE FROM TBL WHERE "SK" LIKE '$tag%' AND (item->>'n')::int % 34 = 5;
		COMMIT;
		BEGIN;
		INSERT INTO TBL SELECT 'Q', '${tag}X' || g, '{"x": 1}' FROM generate_series(1, 30) g;
		UPDATE TBL SET item = '{"x": 2}' WHERE "PK" = 'Q' AND "SK" LIKE '${tag}X%' AND length("SK") % 2 = 0;
		SELECT count(*) FROM (SELECT * FROM TBL WHERE "PK" = 'Q' AND "SK" LIKE '${tag}X%' FOR UPDATE) l;
		DELETE FROM TBL WHERE "PK" = 'Q' AND "SK" LIKE '${tag}X1%';
		COMMIT;
	});
	# updates that do not fit beside their old version (their leaf is
	# full): a separate long MARK, then an INSERT elsewhere
	both($node, $legacy, qq{
		UPDATE TBL SET item = item || jsonb_build_object('big', repeat('b', 1200)) WHERE "SK" LIKE '$tag%' AND (item->>'n')::int % 5 = 1;
	});
	# the item API: an update, an overwrite, a delete (t only, s by SQL)
	$node->safe_psql('postgres', qq{
		SET ddb.check_wal_legacy = $legacy;
		SET wal_compression = $walcomp;
		SELECT count(ddb_update_item('t', jsonb_build_object('PK', 'P' || (g % 30), 'SK', '$tag' || g), 'SET api = :one', vals => '{":one": 1}'))
		FROM generate_series(2, 2000, 30) g WHERE g % 13 <> 0 AND g % 34 <> 5;
		SELECT count(ddb_put_item('t', jsonb_build_object('PK', 'P' || (g % 30), 'SK', '$tag' || g, 'put', g)))
		FROM generate_series(4, 2000, 30) g;
		SELECT count(ddb_delete_item('t', jsonb_build_object('PK', 'P' || (g % 30), 'SK', '$tag' || g)))
		FROM generate_series(8, 2000, 30) g;
		UPDATE s SET item = item || '{"api": 1}' WHERE "SK" IN
			(SELECT '$tag' || g FROM generate_series(2, 2000, 30) g WHERE g % 13 <> 0 AND g % 34 <> 5);
		DELETE FROM s WHERE "SK" IN
			(SELECT '$tag' || g FROM generate_series(4, 2000, 30) g
			 UNION ALL SELECT '$tag' || g FROM generate_series(8, 2000, 30) g);
		INSERT INTO s SELECT 'P' || (g % 30), '$tag' || g, jsonb_build_object('put', g) FROM generate_series(4, 2000, 30) g;
	});
	return;
}

# What each legacy setting must have written (at least this many records
# that ran their redo), and the current forms it must not have.
sub check_forms
{
	my ($forms, $what, %min) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	note explain $forms;
	for my $form (sort keys %min)
	{
		cmp_ok($forms->{$form} // 0, '>=', $min{$form}, "$what: at least $min{$form} $form records");
	}
	for my $form ('UPDATE_MAP', 'INSERT_MAP', 'MARK_SHORT', 'EXT_INSERT', 'EXT_INSERT_MULTI', 'EXT_SPLIT_LZ4',
		'EXT_SPLIT_PGLZ')
	{
		is($forms->{$form} // 0, 0, "$what: no $form record");
	}
	return;
}

my $rows = q{SELECT md5(string_agg(t::text, ',' ORDER BY "PK", "SK")) FROM t};

# ---- (a), (b): the legacy forms, replayed by a standby -------------------
my %delta_min = (UPDATE_DELTA => 300, MARK_LONG => 300, MARK_LONG_LOCK => 50, INSERT => 300, MAP => 10);
my %whole_min = (UPDATE => 300, MARK_LONG => 300, MARK_LONG_LOCK => 50, INSERT => 300, MAP => 10);

my $lsn = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
workload($primary, 'delta', 'A');
check_forms(forms_since($primary, $lsn), '(a) delta', %delta_min);

$lsn = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
workload($primary, 'whole', 'B');
check_forms(forms_since($primary, $lsn), '(a) whole', %whole_min);

# 'uncompressed': inserts whole with their map entry, a batch's items
# whole, splits uncompressed; the rest current (COPY into the existing
# table places a batch's items of one leaf: INSERT_MULTI)
$lsn = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
workload($primary, 'uncompressed', 'U');
my $copy = "seq 1 3000 | awk '{printf \"P%d\\tUC%05d\\t{\\\"c\\\": %d}\\n\", \$1 % 30, \$1, \$1}'";
both($primary, 'uncompressed', qq{COPY TBL FROM PROGRAM \$q\$$copy\$q\$;});
my $forms = forms_since($primary, $lsn);
note explain $forms;
cmp_ok($forms->{INSERT_MAP} // 0, '>=', 300, '(a) uncompressed: at least 300 INSERT_MAP records');
cmp_ok($forms->{INSERT_MULTI} // 0, '>=', 10, '(a) uncompressed: at least 10 INSERT_MULTI records');
cmp_ok(($forms->{SPLIT} // 0) + ($forms->{EXT_SPLIT} // 0), '>=', 20,
	'(a) uncompressed: at least 20 uncompressed splits (SPLIT_ITEMS too is "EXT_SPLIT" here)');
ok(($forms->{UPDATE_MAP} // 0) > 0 && ($forms->{MARK_SHORT} // 0) > 0,
	'(a) uncompressed: updates and marks in their current forms');
# (a plain INSERT it may write: a COPY's run of one item, as before)
for my $form ('EXT_INSERT', 'EXT_INSERT_MULTI', 'EXT_SPLIT_LZ4', 'EXT_SPLIT_PGLZ', 'UPDATE', 'UPDATE_DELTA',
	'MARK_LONG')
{
	is($forms->{$form} // 0, 0, "(a) uncompressed: no $form record");
}

# the setting off again: the current forms, the splits compressed with
# wal_compression's method (pglz here), and not at all with it off
$walcomp = 'pglz';
$lsn = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
workload($primary, 'off', 'C');
$forms = forms_since($primary, $lsn);
note explain $forms;
ok(($forms->{UPDATE_MAP} // 0) > 0 && ($forms->{MARK_SHORT} // 0) > 0
	  && ($forms->{EXT_INSERT} // 0) > 0 && ($forms->{EXT_SPLIT_PGLZ} // 0) > 0
	  && !$forms->{EXT_SPLIT_LZ4}
	  && !$forms->{UPDATE} && !$forms->{UPDATE_DELTA} && !$forms->{MARK_LONG}
	  && !$forms->{INSERT} && !$forms->{INSERT_MAP},
	'(a) with the setting off, the current forms and no legacy one; wal_compression pglz: pglz splits');
$walcomp = 'off';
$lsn = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
workload($primary, 'off', 'F');
$forms = forms_since($primary, $lsn);
ok(($forms->{EXT_INSERT} // 0) > 0 && ($forms->{EXT_SPLIT} // 0) > 0
	  && !$forms->{EXT_SPLIT_LZ4} && !$forms->{EXT_SPLIT_PGLZ},
	'(a) wal_compression off: the splits are not compressed');
$walcomp = 'lz4';

DdbWal::same_rows($primary, '(b) primary');
$primary->wait_for_catchup($standby);
DdbWal::same_rows($standby, '(b) standby, replayed with consistency checks');
is($standby->safe_psql('postgres', $rows), $primary->safe_psql('postgres', $rows),
	'(b) the standby reads what the primary reads');
ok(!$standby->log_contains('inconsistent page found'),
	'(b) no replayed page differed from the primary\'s');

# ---- (c): a crash with the legacy forms since the last checkpoint --------
$primary->safe_psql('postgres', 'CHECKPOINT');
$lsn = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
workload($primary, 'delta', 'D');
workload($primary, 'whole', 'E');
# (what recovery replays: every record since the checkpoint)
check_forms(forms_since($primary, $lsn), '(c) the WAL recovery replays',
	UPDATE_DELTA => 100, UPDATE => 100, MARK_LONG => 300, MARK_LONG_LOCK => 50, INSERT => 300, MAP => 10);
# ... and the current forms after them, splits compressed with LZ4
$lsn = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
workload($primary, 'off', 'G');
$forms = forms_since($primary, $lsn);
ok(($forms->{EXT_INSERT} // 0) >= 300 && ($forms->{EXT_SPLIT_LZ4} // 0) > 0,
	'(c) the WAL recovery replays: EXT INSERT records and LZ4 splits after them');
my $before = $primary->safe_psql('postgres', $rows);
$primary->stop('immediate');
my $logstart = -s $primary->logfile;
$primary->start;
ok($primary->log_contains('redo done', $logstart), '(c) the primary ran crash recovery');
ok(!$primary->log_contains('inconsistent page found', $logstart),
	'(c) no page it replayed differed from the logged image');
is($primary->safe_psql('postgres', $rows), $before, '(c) after recovery the primary reads what it read before the crash');
DdbWal::same_rows($primary, '(c) primary after recovery');
$primary->wait_for_catchup($standby);
DdbWal::same_rows($standby, '(c) standby after the primary\'s recovery');
is($standby->safe_psql('postgres', $rows), $before, '(c) ... and reads the same');
ok(!$standby->log_contains('inconsistent page found'),
	'(c) no page the standby replayed differed from the primary\'s');

$standby->stop;
$primary->stop;

done_testing();
