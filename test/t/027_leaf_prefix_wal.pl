# Leaves with long key prefixes (ddb_page.h, "Leaf prefix") through crash
# recovery and a hot standby.  TAP 017 (e) writes on the prefixes of the
# bench's short keys; here the bulk build (VACUUM FULL) gives leaves
# prefixes of up to 3,000 bytes, and of keys made of 0x00 and 0xFF runs:
#
#   (a) binary keys (0xFF runs, then 0x00 runs: bytes the key encoding
#       escapes) and keys of about 3,000 encoded bytes in one partition
#       (leaves whose prefix is nearly the whole key, and a last leaf the
#       build ends early), bulk-built, then new keys that split the
#       prefixed leaves, updates, deletes and a VACUUM that unlinks;
#       Beside them, the prefixes of tables written row by row (storage
#       version 3: each leaf the prefix of its items, copied after its
#       high key at a partition's end): a table of long stems in
#       interleaved partitions, written row by row, then keys below the
#       stems and new partitions that shrink leaves' prefixes (re-laid in
#       records of their own), splits, updates, deletes and unlinks; and
#       a bulk-built table of storage version 2 (ddb.check_storage_version),
#       whose leaves keep their key space's prefix through the same
#       writes, as the ddb that wrote version 2 expects; and a table of
#       one partition written row by row with every split of its
#       rightmost leaf forced to choose again with whole keys
#       (ddb.check_fault_rightmost_whole: no input is known to need it);
#       and a COPY into a table created earlier, whose sorted rows go in
#       at the table's end, where the last leaf's splits keep the next
#       rows under their prefix, in a copy after the high key when that
#       lies in the next partition (last_leaf_run_split); and one
#       partition written row by row at the table's end, whose last
#       leaf's splits leave it a leaf bounded by the partition's end
#       (last_leaf_append_split), then more rows, updates and deletes;
#       and a COPY into a table created earlier of partitions that grow
#       inside the table under a long stem, whose leaves take their
#       items' prefix before they split (ddb_leaf_lengthen_prefix), then
#       keys that shrink it again, updates and deletes;
#   (b) a crash: recovery leaves each table holding exactly its heap
#       twin's rows, with ddb_verify clean (prefixes included);
#   (c) the standby holds the same rows and a clean tree, and, with ddb's
#       own WAL, replayed every page under wal_consistency_checking; the
#       splits of prefixed leaves were EXT records, some carrying a
#       prefix of more than 2,000 bytes, and the row-by-row table's were
#       SPLIT_ITEMS and RELAY records.
#
# DDB_TAP_WAL=custom runs it with ddb preloaded (test/t/DdbWal.pm); else
# Generic WAL, whose full page images carry the prefixes.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DdbWal;

my $custom = DdbWal::mode() eq 'custom';
my $primary = PostgreSQL::Test::Cluster->new('prefix_primary');
$primary->init(allows_streaming => 1);
DdbWal::configure($primary);
$primary->append_conf('postgresql.conf', "autovacuum = off\n");
# (pg_walinspect reads the WAL of (a)'s writes at the end: keep it)
$primary->append_conf('postgresql.conf', "wal_keep_size = '1GB'\n");
# (ddb's records only: Generic WAL's masking knows nothing of the hint bits
# of the tuples in ddb's leaves, as TAP 017 says)
$primary->append_conf('postgresql.conf', "wal_consistency_checking = 'ddb'\n")
  if $custom;
$primary->start;
DdbWal::check_mode($primary);
$primary->safe_psql('postgres', q{
	CREATE EXTENSION ddb;
	CREATE EXTENSION pg_walinspect;
	CREATE TABLE b (pk bytea, sk bytea, item jsonb) USING ddb;
	CREATE TABLE bh (pk bytea, sk bytea, item jsonb, PRIMARY KEY (pk, sk));
	CREATE TABLE l ("PK" text, "SK" text, item jsonb) USING ddb;
	CREATE TABLE lh ("PK" text COLLATE "C", "SK" text COLLATE "C", item jsonb, PRIMARY KEY ("PK", "SK"));
	CREATE TABLE r ("PK" text, "SK" text, item jsonb) USING ddb;
	CREATE TABLE rh ("PK" text COLLATE "C", "SK" text COLLATE "C", item jsonb, PRIMARY KEY ("PK", "SK"));
	CREATE TABLE v2 ("PK" text, "SK" text, item jsonb) USING ddb;
	CREATE TABLE v2p ("PK" text, "SK" text, item jsonb) USING ddb;
	CREATE TABLE v2ph ("PK" text COLLATE "C", "SK" text COLLATE "C", item jsonb, PRIMARY KEY ("PK", "SK"));
	CREATE TABLE v2h ("PK" text COLLATE "C", "SK" text COLLATE "C", item jsonb, PRIMARY KEY ("PK", "SK"));
	CREATE TABLE k ("PK" text, "SK" text, item jsonb) USING ddb;
	CREATE TABLE kh ("PK" text COLLATE "C", "SK" text COLLATE "C", item jsonb, PRIMARY KEY ("PK", "SK"));
	CREATE TABLE e ("PK" text, "SK" text, item jsonb) USING ddb;
	CREATE TABLE eh ("PK" text COLLATE "C", "SK" text COLLATE "C", item jsonb, PRIMARY KEY ("PK", "SK"));
	CREATE TABLE a ("PK" text, "SK" text, item jsonb) USING ddb;
	CREATE TABLE m ("PK" text, "SK" text, item jsonb) USING ddb;
	CREATE TABLE mh ("PK" text COLLATE "C", "SK" text COLLATE "C", item jsonb, PRIMARY KEY ("PK", "SK"));
	CREATE TABLE ah ("PK" text COLLATE "C", "SK" text COLLATE "C", item jsonb, PRIMARY KEY ("PK", "SK"));
});
$primary->backup('bk');
my $standby = PostgreSQL::Test::Cluster->new('prefix_standby');
$standby->init_from_backup($primary, 'bk', has_streaming => 1);
$standby->start;
DdbWal::check_mode($standby);

# (a) the loads, built bottom-up, then writes on the prefixed leaves
$primary->safe_psql('postgres', q{
	INSERT INTO bh
	SELECT decode(repeat('ff', 30) || lpad(to_hex(i % 5), 2, '0'), 'hex'),
	       decode(repeat('ff', 20 + i % 3) || lpad(to_hex(i % 256), 2, '0') || repeat('00', i % 5) ||
	              lpad(to_hex(i / 256), 4, '0'), 'hex'),
	       jsonb_build_object('n', i, 'pad', repeat('x', 60))
	FROM generate_series(0, 5999) i;
	INSERT INTO b SELECT * FROM bh;
	INSERT INTO lh
	SELECT repeat('p', 2040), repeat('s', 1010) || lpad(i::text, 6, '0'), jsonb_build_object('n', i)
	FROM generate_series(0, 119) i;
	INSERT INTO l SELECT * FROM lh;
});
# r: row by row, 60 partitions interleaved, sort keys of a 150-byte stem;
# v2: the same rows, bulk-built as storage version 2
$primary->safe_psql('postgres', q{
	INSERT INTO rh SELECT 'CUST#' || i % 60, repeat('o', 150) || lpad(i::text, 6, '0'),
	       jsonb_build_object('n', i, 'pad', repeat('x', 100))
	FROM generate_series(0, 2999) i;
	INSERT INTO v2h SELECT * FROM rh;
	INSERT INTO v2 SELECT * FROM rh;
	INSERT INTO v2ph SELECT 'CUST#' || i % 200, 'ORDER#2025-01-01T00:00:00#' || lpad(i::text, 6, '0'),
	       jsonb_build_object('n', i, 'note', repeat('x', 80))
	FROM generate_series(0, 15999) i;
	INSERT INTO v2p SELECT * FROM v2ph;
});
$primary->safe_psql('postgres', q{
	DO $$
	BEGIN
	  FOR i IN 0 .. 2999 LOOP
	    INSERT INTO r VALUES ('CUST#' || i % 60, repeat('o', 150) || lpad(i::text, 6, '0'),
	                          jsonb_build_object('n', i, 'pad', repeat('x', 100)));
	  END LOOP;
	END $$;
});
# e: one partition, its sort keys in a drawn order, so that its rightmost
# leaf takes both appends and keys inside it; every split of that leaf
# takes the branch for a right half too large with its keys whole
$primary->safe_psql('postgres', q{
	INSERT INTO eh SELECT 'ONE', repeat('s', 100) || lpad(((i * 7919) % 2000)::text, 6, '0'),
	       jsonb_build_object('n', i, 'pad', repeat('x', 120))
	FROM generate_series(0, 1999) i;
	SET ddb.check_fault_rightmost_whole = on;
	DO $$
	BEGIN
	  FOR i IN 0 .. 1999 LOOP
	    INSERT INTO e VALUES ('ONE', repeat('s', 100) || lpad(((i * 7919) % 2000)::text, 6, '0'),
	                          jsonb_build_object('n', i, 'pad', repeat('x', 120)));
	  END LOOP;
	END $$;
});
ok($primary->log_contains(qr/rightmost split of block \d+ chosen again with whole keys/),
	'(a) splits of e\'s rightmost leaf took the branch for a right half too large');
# a: one partition, the table's last, written row by row in key order
# under a 300-byte stem: each split of the table's last leaf leaves the
# partition a leaf bounded by its end (last_leaf_append_split), which its
# next rows fill under their prefix: 40 leaves at fill 0.86 (splits that
# left the last leaf of whole keys behind them made 118, fill 0.3)
$primary->safe_psql('postgres', q{
	INSERT INTO ah SELECT 'TAIL', repeat('t', 300) || lpad(i::text, 6, '0'),
	       jsonb_build_object('n', i, 'pad', repeat('x', 60))
	FROM generate_series(0, 1999) i;
	DO $$
	BEGIN
	  FOR i IN 0 .. 1999 LOOP
	    INSERT INTO a VALUES ('TAIL', repeat('t', 300) || lpad(i::text, 6, '0'),
	                          jsonb_build_object('n', i, 'pad', repeat('x', 60)));
	  END LOOP;
	END $$;
});
is($primary->safe_psql('postgres', q{
		SELECT (ddb_verify('a') ->> 'leaf_pages')::int < 60, (ddb_verify('a') ->> 'leaf_prefix_copies')::int > 0}),
	't|t', '(a) the partition at the table\'s end fills leaves bounded by its end, under its prefix');
# k: COPY into a table created earlier (key-order inserts at its end),
# 150 partitions of about 21 rows under a 200-byte stem: each leaf the
# last one leaves behind holds one partition under its prefix, its high
# key in the next partition with a copy (170 leaves of whole keys before)
my $kcsv = $primary->basedir . '/k.csv';
$primary->safe_psql('postgres', qq{
	INSERT INTO kh SELECT 'PART#' || i % 150, repeat('k', 200) || lpad(i::text, 6, '0'),
	       jsonb_build_object('n', i, 'pad', repeat('x', 90))
	FROM generate_series(0, 3199) i;
	COPY (SELECT * FROM kh ORDER BY (item ->> 'n')::int) TO '$kcsv' CSV;
});
$primary->safe_psql('postgres', qq{COPY k FROM '$kcsv' CSV});
is($primary->safe_psql('postgres', q{
		SELECT (ddb_verify('k') ->> 'leaf_pages')::int < 160, (ddb_verify('k') ->> 'leaf_prefix_bytes')::float > 150,
		       (ddb_verify('k') ->> 'leaf_prefix_copies')::int > 100}),
	't|t|t', '(a) the key-order COPY\'s leaves hold their rows under their prefixes, most in copies');
# m: COPY into a table created earlier of 8 partitions that grow inside
# the table, 250 rows each under a 1,000-byte stem: a leaf about to split
# takes its items' prefix first (ddb_leaf_lengthen_prefix; a RELAY record
# with ddb's own WAL), so COPY's next rows fill it (leaves of five items,
# about 400 of them, before)
my $mcsv = $primary->basedir . '/m.csv';
$primary->safe_psql('postgres', qq{
	INSERT INTO mh SELECT 'P' || i / 250, repeat('x', 1000) || lpad(i::text, 8, '0'),
	       jsonb_build_object('n', i, 'pad', repeat('y', 300))
	FROM generate_series(0, 1999) i;
	COPY (SELECT * FROM mh ORDER BY (item ->> 'n')::int) TO '$mcsv' CSV;
});
$primary->safe_psql('postgres', qq{COPY m FROM '$mcsv' CSV});
cmp_ok($primary->safe_psql('postgres', q{SELECT (ddb_verify('m') ->> 'leaf_pages')::int}),
	'<', 200, '(a) the COPY of partitions inside the table fills leaves under their items\' prefix');
$primary->safe_psql('postgres', 'VACUUM FULL b; VACUUM FULL l;');
$primary->safe_psql('postgres', 'SET ddb.check_storage_version = 2; VACUUM FULL v2; VACUUM FULL v2p;');
# v2p: many small partitions, every third deleted.  Some emptied leaves
# begin a partition while their right sibling's prefix holds its own
# partition's key: version 2 keeps those (an unlink would give the sibling
# a key space its prefix does not start, which ddb_verify reports), and
# unlinks the others.
for my $t ('v2p', 'v2ph')
{
	$primary->safe_psql('postgres',
		qq{DELETE FROM $t WHERE "PK" IN (SELECT 'CUST#' || i FROM generate_series(0, 199, 3) i)});
}
is($primary->safe_psql('postgres', q{
		SELECT ddb_verify('r') ->> 'storage_version', (ddb_verify('r') ->> 'leaf_prefix_bytes')::float > 100,
		       (ddb_verify('r') ->> 'leaf_prefix_copies')::int > 0,
		       ddb_verify('v2') ->> 'storage_version', (ddb_verify('v2') ->> 'leaf_prefix_bytes')::float > 10}),
	'3|t|t|2|t', '(a) the row-by-row leaves have their items\' prefixes, some in copies; v2 is version 2 with the key space\'s');
cmp_ok($primary->safe_psql('postgres', q{SELECT (ddb_verify('l') ->> 'leaf_prefix_bytes')::float}),
	'>', 1000, '(a) the long keys\' leaves have prefixes of most of their keys');
cmp_ok($primary->safe_psql('postgres', q{SELECT (ddb_verify('b') ->> 'leaf_prefix_bytes')::float}),
	'>', 30, '(a) so do the binary keys\' leaves');
my $from = $primary->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
# (the twin last: its inserts read its own rows, without the new ones)
for my $t ('b', 'bh')
{
	$primary->safe_psql('postgres', qq{
		INSERT INTO $t SELECT pk, sk || '\\x0000'::bytea, '{"new": 1}' FROM bh
		WHERE (item ->> 'n')::int % 3 = 0 AND NOT (item ? 'new');
		INSERT INTO $t SELECT pk, sk || '\\xff'::bytea, '{"new": 2}' FROM bh
		WHERE (item ->> 'n')::int % 7 = 1 AND NOT (item ? 'new');
		UPDATE $t SET item = item || '{"u": 1}' WHERE (item ->> 'n')::int % 4 = 0;
		DELETE FROM $t WHERE (item ->> 'n')::int BETWEEN 1000 AND 4000;
	});
}
for my $t ('r', 'rh', 'v2', 'v2h')
{
	# keys below every stem, new partitions, keys inside the stems, updates,
	# deletes (the twin after its table: both read the twin's rows)
	my $h = $t =~ /^r/ ? 'rh' : 'v2h';
	$primary->safe_psql('postgres', qq{
		INSERT INTO $t SELECT 'CUST#' || p, 'alert', '{}' FROM generate_series(0, 59) p;
		INSERT INTO $t SELECT 'NEW#' || p, 's', '{}' FROM generate_series(1, 200) p;
		INSERT INTO $t SELECT "PK", "SK" || 'x', '{"x": 1}' FROM $h WHERE (item ->> 'n')::int % 5 = 0;
		INSERT INTO $t SELECT "PK", repeat('o', 75) || 'p' || (item ->> 'n'), '{"y": 1}' FROM $h
		WHERE (item ->> 'n')::int % 9 = 0;
		UPDATE $t SET item = item || '{"u": 1}' WHERE (item ->> 'n')::int % 4 = 0;
		DELETE FROM $t WHERE (item ->> 'n')::int BETWEEN 300 AND 2400;
	});
}
for my $t ('l', 'lh')
{
	$primary->safe_psql('postgres', qq{
		INSERT INTO $t SELECT "PK", "SK" || 'x', '{}' FROM lh WHERE (item ->> 'n')::int % 2 = 0;
		UPDATE $t SET item = item || '{"u": 1}' WHERE (item ->> 'n')::int % 3 = 0;
		UPDATE $t SET item = item || '{"u": 2}' WHERE (item ->> 'n')::int % 5 = 0;
		DELETE FROM $t WHERE right(rtrim("SK", 'x'), 6)::int BETWEEN 30 AND 80;
	});
}
for my $t ('a', 'ah')
{
	$primary->safe_psql('postgres', qq{
		INSERT INTO $t SELECT 'TAIL', repeat('t', 300) || lpad(i::text, 6, '0'), '{"late": 1}'
		FROM generate_series(2000, 2499) i;
		INSERT INTO $t VALUES ('TAIL', 'below', '{}'), ('TAIL2', 'new partition', '{}');
		UPDATE $t SET item = item || '{"u": 1}' WHERE right("SK", 6) LIKE '%7';
		DELETE FROM $t WHERE right("SK", 6) BETWEEN '000500' AND '001500';
	});
}
for my $t ('m', 'mh')
{
	$primary->safe_psql('postgres', qq{
		INSERT INTO $t SELECT 'P' || i % 8, repeat('x', 999) || 'w' || i, '{}' FROM generate_series(0, 39) i;
		UPDATE $t SET item = item || '{"u": 1}' WHERE (item ->> 'n')::int % 7 = 0;
		DELETE FROM $t WHERE (item ->> 'n')::int BETWEEN 300 AND 700;
	});
}
$primary->safe_psql('postgres', 'VACUUM b; VACUUM l; VACUUM r; VACUUM v2; VACUUM v2p; VACUUM a; VACUUM m;');
cmp_ok($primary->safe_psql('postgres',
		q{SELECT (ddb_verify('b') ->> 'deleted_pages')::int + (ddb_verify('l') ->> 'deleted_pages')::int}),
	'>', 0, '(a) VACUUM unlinked emptied prefixed leaves');
is($primary->safe_psql('postgres',
		q{SELECT (ddb_verify('r') ->> 'deleted_pages')::int > 0, (ddb_verify('v2') ->> 'deleted_pages')::int > 0,
		         ddb_verify('v2') ->> 'storage_version', (ddb_verify('v2p') ->> 'deleted_pages')::int > 0,
		         ddb_verify('v2p') ->> 'storage_version'}),
	't|t|2|t|2', '(a) and on the row-by-row table and the version 2 ones');
if ($custom)
{
	# the splits of prefixed leaves are EXT records, which carry the prefix
	# (a commit flushes what came before it: pg_walinspect reads no further)
	$primary->safe_psql('postgres', 'SELECT txid_current()');
	my $to = $primary->safe_psql('postgres', 'SELECT pg_current_wal_flush_lsn()');
	cmp_ok($primary->safe_psql('postgres', qq{
			SELECT coalesce(max(substring(description FROM 'SPLIT, prefix(?:es)? ([0-9]+)')::int), 0)
			FROM pg_get_wal_records_info('$from', '$to')
			WHERE resource_manager = 'ddb' AND record_type = 'EXT'}),
		'>', 2000, '(a) splits of leaves with long prefixes were EXT records');
	is($primary->safe_psql('postgres', qq{
			SELECT count(*) FILTER (WHERE description ~ '^SPLIT, prefixes') > 0,
			       count(*) FILTER (WHERE description ~ '^RELAY') > 0
			FROM pg_get_wal_records_info('$from', '$to')
			WHERE resource_manager = 'ddb' AND record_type = 'EXT'}),
		't|t', '(a) the row-by-row table\'s splits and shrinks were SPLIT_ITEMS and RELAY records');
}

my $check = q{SELECT count(*) FROM ((SELECT * FROM %s EXCEPT ALL SELECT * FROM %s)
	UNION ALL (SELECT * FROM %s EXCEPT ALL SELECT * FROM %s)) d};
sub same_and_sound
{
	my ($node, $step) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	for my $pair ([ 'b', 'bh' ], [ 'l', 'lh' ], [ 'r', 'rh' ], [ 'v2', 'v2h' ], [ 'v2p', 'v2ph' ],
		[ 'e', 'eh' ], [ 'k', 'kh' ], [ 'a', 'ah' ], [ 'm', 'mh' ])
	{
		my ($t, $h) = @$pair;
		is($node->safe_psql('postgres', sprintf($check, $t, $h, $h, $t)),
			'0', "$step: $t holds exactly its heap twin's rows on " . $node->name);
		my ($ret, $out, $err) = $node->psql('postgres', "SELECT ddb_verify('$t')");
		ok($ret == 0 && $out =~ /"leaf_prefix_bytes"/,
			"$step: ddb_verify clean on $t on " . $node->name . ": $err");
	}
	is($node->safe_psql('postgres',
			q{SELECT count(*) FROM (SELECT * FROM l ORDER BY "PK" DESC, "SK" DESC) d}),
		$node->safe_psql('postgres', 'SELECT count(*) FROM lh'),
		"$step: a backward scan of l returns every row on " . $node->name);
}
same_and_sound($primary, '(a)');

# (b) a crash: recovery replays the splits, updates and unlinks
$primary->stop('immediate');
$primary->start;
same_and_sound($primary, '(b)');

# (c) the standby
$primary->wait_for_catchup($standby);
same_and_sound($standby, '(c)');
ok(!$standby->log_contains(qr/inconsistent page found/) &&
	  !$primary->log_contains(qr/inconsistent page found/),
	'(c) every replayed page matched the primary\'s');

$standby->stop;
$primary->stop;
done_testing();
