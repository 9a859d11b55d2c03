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
#   (b) a crash: recovery leaves each table holding exactly its heap
#       twin's rows, with ddb_verify clean (prefixes included);
#   (c) the standby holds the same rows and a clean tree, and, with ddb's
#       own WAL, replayed every page under wal_consistency_checking; the
#       splits of prefixed leaves were EXT records, some carrying a
#       prefix of more than 2,000 bytes.
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
$primary->safe_psql('postgres', 'VACUUM FULL b; VACUUM FULL l;');
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
for my $t ('l', 'lh')
{
	$primary->safe_psql('postgres', qq{
		INSERT INTO $t SELECT "PK", "SK" || 'x', '{}' FROM lh WHERE (item ->> 'n')::int % 2 = 0;
		UPDATE $t SET item = item || '{"u": 1}' WHERE (item ->> 'n')::int % 3 = 0;
		UPDATE $t SET item = item || '{"u": 2}' WHERE (item ->> 'n')::int % 5 = 0;
		DELETE FROM $t WHERE (item ->> 'n')::int BETWEEN 30 AND 80;
	});
}
$primary->safe_psql('postgres', 'VACUUM b; VACUUM l;');
cmp_ok($primary->safe_psql('postgres',
		q{SELECT (ddb_verify('b') ->> 'deleted_pages')::int + (ddb_verify('l') ->> 'deleted_pages')::int}),
	'>', 0, '(a) VACUUM unlinked emptied prefixed leaves');
if ($custom)
{
	# the splits of prefixed leaves are EXT records, which carry the prefix
	# (a commit flushes what came before it: pg_walinspect reads no further)
	$primary->safe_psql('postgres', 'SELECT txid_current()');
	my $to = $primary->safe_psql('postgres', 'SELECT pg_current_wal_flush_lsn()');
	cmp_ok($primary->safe_psql('postgres', qq{
			SELECT coalesce(max(substring(description FROM 'SPLIT, prefix ([0-9]+) bytes')::int), 0)
			FROM pg_get_wal_records_info('$from', '$to')
			WHERE resource_manager = 'ddb' AND record_type = 'EXT'}),
		'>', 2000, '(a) splits of leaves with long prefixes were EXT records');
}

my $check = q{SELECT count(*) FROM ((SELECT * FROM %s EXCEPT ALL SELECT * FROM %s)
	UNION ALL (SELECT * FROM %s EXCEPT ALL SELECT * FROM %s)) d};
sub same_and_sound
{
	my ($node, $step) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	for my $pair ([ 'b', 'bh' ], [ 'l', 'lh' ])
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
