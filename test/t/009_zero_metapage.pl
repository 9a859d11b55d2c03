# A crash can leave a ddb table's file extended but its first WAL record
# lost: the first insert extends the file (zero blocks) before its WAL
# record reaches disk.  Such a table must read as empty and take inserts
# again (the metapage is initialized in place), never fail with a bad
# metapage.  Simulated by zeroing the file's first blocks on a stopped server.
#
# But a zeroed page in a tree that was written and checkpointed -- block 0
# with other pages initialized, the root, a row-id map page, a leaf another
# leaf links to -- is corruption, and reads must fail with XX001 rather
# than return fewer rows (second part).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('zero_meta');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
	CREATE EXTENSION ddb;
	CREATE TABLE t (pk text, item jsonb) USING ddb;
	INSERT INTO t VALUES ('a', '{}');
	CHECKPOINT;
});
my $path = $node->safe_psql('postgres', q{SELECT pg_relation_filepath('t')});
$node->stop;

# the file as a crash before the WAL flush would leave it: two zero blocks
my $file = $node->data_dir . "/$path";
open my $fh, '>', $file or die "$file: $!";
binmode $fh;
print $fh "\0" x 16384;
close $fh;

$node->start;
is($node->safe_psql('postgres', 'SELECT count(*) FROM t'), '0', 'a zero metapage reads as an empty table');
is($node->safe_psql('postgres', q{SELECT ddb_verify('t') ->> 'items'}), '0', 'ddb_verify reports it empty');
$node->safe_psql('postgres', q{INSERT INTO t SELECT 'k' || i, '{}' FROM generate_series(1, 500) i});
is($node->safe_psql('postgres', 'SELECT count(*) FROM t'), '500', 'inserts initialize the tree in place');
is($node->safe_psql('postgres', q{SELECT (ddb_verify('t') ->> 'live')::int}), '500', 'ddb_verify is clean');
$node->safe_psql('postgres', 'VACUUM t');
$node->restart;
is($node->safe_psql('postgres', 'SELECT count(*) FROM t'), '500', 'and it survives a restart');


# ---------------------------------------------------------------------------
# Corruption, not emptiness: a zeroed page of a tree that was written and
# checkpointed is lost data, and every read that needs it must fail with
# data_corrupted (XX001), never return fewer rows.  One table per case, each
# 3000 rows over a root and dozens of leaves, pages zeroed with the server
# stopped.
# ---------------------------------------------------------------------------
my $BLCKSZ = 8192;
my $PAGE_HEADER = 24;

sub block_of
{
	my ($file, $blk) = @_;
	open my $in, '<:raw', $file or die "$file: $!";
	sysseek($in, $blk * $BLCKSZ, 0) or die "seek: $!";
	sysread($in, my $page, $BLCKSZ) == $BLCKSZ or die "short read of block $blk";
	close $in;
	return $page;
}

sub zero_block
{
	my ($file, $blk) = @_;
	open my $out, '+<:raw', $file or die "$file: $!";
	sysseek($out, $blk * $BLCKSZ, 0) or die "seek: $!";
	syswrite($out, "\0" x $BLCKSZ) == $BLCKSZ or die "write: $!";
	close $out;
}

# the special space of a page (ddb_page.h): right-link and flags
sub right_and_flags
{
	my ($page) = @_;
	my $special = unpack('x16 S', $page);
	my ($right, $level, $flags) = unpack("x$special L S S", $page);
	return ($right, $flags);
}

# Block to zero in each table, from its file (metapage: ddb_page.h,
# DdbMetaPageData right after the page header).
my %victim = (
	z_meta => sub { return 0 },
	z_root => sub {
		my ($file) = @_;
		my ($magic, $version, $root) = unpack("x$PAGE_HEADER L L L", block_of($file, 0));
		return $root;
	},
	z_map => sub {
		my ($file) = @_;
		# the map's root: its directory (3000 row ids fill three map leaves)
		my ($map_root, $map_levels) = unpack("x$PAGE_HEADER x24 L L", block_of($file, 0));
		die "expected a row-id map with a directory" unless $map_levels == 2;
		return $map_root;
	},
	z_rightlink => sub {
		my ($file) = @_;
		# the right sibling of some leaf that has one
		for my $blk (1 .. (-s $file) / $BLCKSZ - 1)
		{
			my ($right, $flags) = right_and_flags(block_of($file, $blk));
			return $right if ($flags & 0x0002) && $right != 0xFFFFFFFF;
		}
		die "no leaf with a right sibling";
	},
);

my %zfile;
for my $t (sort keys %victim)
{
	$node->safe_psql('postgres', qq{
		CREATE TABLE $t ("PK" text, "SK" text, item jsonb) USING ddb;
		INSERT INTO $t SELECT 'P' || (i % 97), 'S' || i, jsonb_build_object('i', i, 'pad', repeat('x', 100))
		  FROM generate_series(1, 3000) i;
	});
	is($node->safe_psql('postgres', qq{SELECT (ddb_verify('$t') ->> 'live')::int}), '3000', "$t verifies before the damage");
	$zfile{$t} = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('$t')");
}
$node->safe_psql('postgres', 'CHECKPOINT');
$node->stop;
zero_block($zfile{$_}, $victim{$_}->($zfile{$_})) for sort keys %victim;
$node->start;

# Each statement must fail with XX001 and the message given.
sub fails_corrupt
{
	my ($sql, $message, $what) = @_;
	my ($rc, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql");
	like($err, qr/ERROR:  XX001: .*$message/, $what);
}

# block 0 zeroed: reads and writes refuse, ddb_verify reports what is left
fails_corrupt('SELECT count(*) FROM z_meta', 'has an all-zero metapage but \d+ initialized pages',
	'a scan of a table whose metapage is zeroed fails');
fails_corrupt(q{SELECT * FROM z_meta WHERE "PK" = 'P1' AND "SK" = 'S1'}, 'has an all-zero metapage',
	'a key lookup fails too');
fails_corrupt(q{INSERT INTO z_meta VALUES ('new', 'row', '{}')}, 'has an all-zero metapage',
	'an insert does not start a new, empty tree over the old pages');
# (the 3,000 rows' row ids: 0-959 in growing batches, then three whole map
# leaves from 1019 -- four map leaves and their directory)
fails_corrupt(q{SELECT ddb_verify('z_meta')},
	'the metapage is all zeroes; \d+ initialized pages are unreachable: \d+ leaves holding 3000 items, 1 internal pages, 5 row-id map pages, 0 other pages',
	'ddb_verify walks the remaining blocks and reports the unreachable pages and items');

# the root zeroed: every descent fails
fails_corrupt('SELECT count(*) FROM z_root', 'has an invalid page at block', 'a scan through a zeroed root fails');
fails_corrupt(q{SELECT * FROM z_root WHERE "PK" = 'P1' AND "SK" = 'S1'}, 'has an invalid page at block',
	'a key lookup through a zeroed root fails');
fails_corrupt(q{SELECT ddb_verify('z_root')}, 'page is not initialized', 'ddb_verify reports the zeroed root');

# the row-id map zeroed: scans need no map, but resolving a TID does
is($node->safe_psql('postgres', 'SELECT count(*) FROM z_map'), '3000', 'a scan of a table whose map page is zeroed still sees every row');
fails_corrupt(q{UPDATE z_map SET item = '{}' WHERE "PK" = 'P1'}, 'is not a row-id map page',
	'an update, which resolves TIDs through the map, fails');
fails_corrupt(q{DELETE FROM z_map}, 'is not a row-id map page', 'a delete fails');
fails_corrupt(q{SELECT ddb_verify('z_map')}, 'is not a row-id map page', 'ddb_verify reports the zeroed map page');
is($node->safe_psql('postgres', 'SELECT count(*) FROM z_map'), '3000', 'and no row went away');

# a leaf's right-link leads to a zeroed page: a scan fails at it
fails_corrupt('SELECT count(*) FROM z_rightlink', 'is not a leaf|has an invalid page at block',
	'a scan that follows a right-link to a zeroed page fails');
fails_corrupt(q{SELECT ddb_verify('z_rightlink')}, 'page is not initialized', 'ddb_verify reports the zeroed leaf');

$node->stop;
done_testing();
