# ddb_verify is the oracle of nearly every other test: this proves it can
# fail.  Each class of violation the README lists for ddb_verify is planted
# in a table of its own by editing the relation file with the server
# stopped (the page layout is ddb_page.h's; the row-id map's is
# ddb_rowid.c's), and ddb_verify must then raise data_corrupted (XX001)
# naming that violation.  A table left untouched must still verify clean, so
# the editing itself breaks nothing else.  ddb_verify_gsi's classes (missing,
# extra, wrong index entries) are planted through SQL in sql/gsi_verify.sql.
#
# The page helpers below read and write native-endian integers and assume
# the C compiler's little-endian bit-field order for line pointers (lp_off
# in the low 15 bits), as on every platform PostgreSQL's Debian packages
# are built for.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

plan skip_all => 'ddb_verify needs ddb tables' if ($ENV{DDB_TAP_AM} || 'ddb') ne 'ddb';

my $node = PostgreSQL::Test::Cluster->new('verify_corruption');
$node->init;
$node->append_conf('postgresql.conf', "autovacuum = off\nmax_prepared_transactions = 2\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION ddb');

my $BLCKSZ = $node->safe_psql('postgres', 'SHOW block_size');
is($node->safe_psql('postgres', 'SHOW data_checksums'), 'off',
	'no data checksums (the edits do not recompute them)');

# ---------------------------------------------------------------------------
# Page access (layout: src/engine/ddb_page.h)
# ---------------------------------------------------------------------------
use constant {
	PAGE_HEADER     => 24,       # SizeOfPageHeaderData, already MAXALIGNed
	INVALID_BLOCK   => 0xFFFFFFFF,
	F_META          => 0x0001,
	F_LEAF          => 0x0002,
	F_INTERNAL      => 0x0004,
	F_MAP_LEAF      => 0x0008,
	F_DELETED       => 0x0020,
	F_MAP_INDEXED   => 0x0040,
	ROWIDS_PER_BLOCK => 291,     # MaxHeapTuplesPerPage: row id <-> TID
	XMAX_COMMITTED  => 0x0400,
	XMAX_INVALID    => 0x0800,
	XMAX_IS_MULTI   => 0x1000,
};

sub maxalign { my ($n) = @_; return ($n + 7) & ~7; }

sub read_block
{
	my ($file, $blk) = @_;
	open my $fh, '<:raw', $file or die "$file: $!";
	sysseek($fh, $blk * $BLCKSZ, 0) or die "seek: $!";
	my $n = sysread($fh, my $buf, $BLCKSZ);
	die "short read of block $blk of $file" unless defined $n && $n == $BLCKSZ;
	close $fh;
	return $buf;
}

sub write_block
{
	my ($file, $blk, $buf) = @_;
	die "a page is $BLCKSZ bytes" unless length($buf) == $BLCKSZ;
	open my $fh, '+<:raw', $file or die "$file: $!";
	sysseek($fh, $blk * $BLCKSZ, 0) or die "seek: $!";
	syswrite($fh, $buf) == $BLCKSZ or die "write: $!";
	close $fh;
}

sub nblocks { my ($file) = @_; return (-s $file) / $BLCKSZ; }

# Page header fields and the DdbPageOpaqueData in the special space.
sub page_info
{
	my ($buf) = @_;
	my ($lower, $upper, $special) = unpack('x12 S S S', $buf);
	my ($right, $level, $flags) = unpack("x$special L S S", $buf);
	return {
		lower   => $lower, upper => $upper, special => $special,
		right   => $right, level => $level, flags   => $flags,
		maxoff  => ($lower - PAGE_HEADER) / 4,
		first   => $right == INVALID_BLOCK ? 1 : 2,    # DdbPageFirstData
	};
}

sub set_special
{
	my ($buf, $field, $value) = @_;
	my $special = page_info($$buf)->{special};
	my %at = (right => [ 0, 'L' ], level => [ 4, 'S' ], flags => [ 6, 'S' ],
		prefixlen => [ 8, 'S' ], page_id => [ 10, 'S' ]);
	my ($off, $fmt) = @{ $at{$field} };
	substr($$buf, $special + $off, $fmt eq 'L' ? 4 : 2) = pack($fmt, $value);
}

# Line pointer 'off' (1-based): item offset, flags, length.
sub lp
{
	my ($buf, $off) = @_;
	my $v = unpack('L', substr($buf, PAGE_HEADER + 4 * ($off - 1), 4));
	return ($v & 0x7fff, ($v >> 15) & 3, $v >> 17);
}

sub lp_raw { my ($buf, $off) = @_; return substr($buf, PAGE_HEADER + 4 * ($off - 1), 4); }

sub set_lp_raw
{
	my ($buf, $off, $raw) = @_;
	substr($$buf, PAGE_HEADER + 4 * ($off - 1), 4) = $raw;
}

# Leaf item: DdbLeafItemData { tid, keylen, key } then, MAXALIGNed, the
# heap tuple header.
sub leaf_item
{
	my ($buf, $off) = @_;
	my ($at) = lp($buf, $off);
	my ($hi, $lo, $pos, $keylen) = unpack("x$at S S S S", $buf);
	my $tup = $at + maxalign(8 + $keylen);
	my ($xmin, $xmax) = unpack("x$tup L L", $buf);
	my $infomask = unpack('x' . ($tup + 20) . ' S', $buf);
	return {
		at       => $at,
		key      => substr($buf, $at + 8, $keylen),
		rowid    => ((($hi << 16) | $lo) * ROWIDS_PER_BLOCK) + $pos - 1,
		tup      => $tup,
		xmin     => $xmin,
		xmax     => $xmax,
		infomask => $infomask,
	};
}

# Internal item or high key: DdbKeyItemData { child, keylen, key }.
sub key_item
{
	my ($buf, $off) = @_;
	my ($at) = lp($buf, $off);
	my ($child, $keylen) = unpack("x$at L S", $buf);
	return { at => $at, child => $child, keylen => $keylen,
		key => substr($buf, $at + 6, $keylen) };
}

# Metapage contents (DdbMetaPageData) right after the page header.
my @META_FIELDS = qw(magic version root height next_rowid map_root map_levels);
my $META_FORMAT = 'L L L L Q L L';

sub meta
{
	my ($buf) = @_;
	my %m;
	@m{@META_FIELDS} = unpack('x' . PAGE_HEADER . " $META_FORMAT", $buf);
	return \%m;
}

sub set_meta
{
	my ($buf, $field, $value) = @_;
	my $m = meta($$buf);
	$m->{$field} = $value;
	substr($$buf, PAGE_HEADER, 32) = pack($META_FORMAT, @{$m}{@META_FIELDS});
}

# The tree of one relation file: metapage, root, and the leaves left to
# right (leftmost path, then right-links).
sub tree
{
	my ($file) = @_;
	my $m = meta(read_block($file, 0));
	my $blk = $m->{root};
	my $page = read_block($file, $blk);
	while (page_info($page)->{level} > 0)
	{
		$blk = key_item($page, page_info($page)->{first})->{child};
		$page = read_block($file, $blk);
	}
	my @leaves;
	while (1)
	{
		push @leaves, $blk;
		my $right = page_info($page)->{right};
		last if $right == INVALID_BLOCK;
		$blk = $right;
		$page = read_block($file, $blk);
	}
	return { meta => $m, leaves => \@leaves };
}

# Row-id map entry (DdbMapEntry { block, hash }) of a row id; the test's
# tables are small enough for a map of one leaf.
sub map_entry_at
{
	my ($file, $rowid) = @_;
	my $m = meta(read_block($file, 0));
	die "expected a one-page row-id map" unless $m->{map_levels} == 1;
	my $entries = int(($BLCKSZ - PAGE_HEADER - 16) / 8);    # DDB_MAP_LEAF_ENTRIES
	die "row id $rowid is beyond the map's first page" if $rowid >= $entries;
	return ($m->{map_root}, PAGE_HEADER + 8 * $rowid);
}

# ---------------------------------------------------------------------------
# The tables: one per violation, all loaded alike, plus an untouched one.
# ---------------------------------------------------------------------------
my @cases;    # [ table, description, expected message, edit sub ]

sub corruption
{
	my ($table, $what, $message, $edit) = @_;
	push @cases, [ $table, $what, $message, $edit ];
}

# Page edits; $f is the table's file, $t its tree as loaded.
corruption('c_order', 'leaf items out of order', qr/items \d+ and \d+ are out of order/, sub {
	my ($f, $t) = @_;
	my $blk = $t->{leaves}[1];
	my $page = read_block($f, $blk);
	my $first = page_info($page)->{first};
	my ($a, $b) = (lp_raw($page, $first), lp_raw($page, $first + 1));
	set_lp_raw(\$page, $first, $b);
	set_lp_raw(\$page, $first + 1, $a);
	write_block($f, $blk, $page);
});

corruption('c_hikey_low', 'a high key below the page\'s items',
	qr/last item is not below the high key/, sub {
	my ($f, $t) = @_;
	my $blk = $t->{leaves}[1];
	my $page = read_block($f, $blk);
	my $hk = key_item($page, 1);
	substr($page, $hk->{at} + 6, $hk->{keylen}) = "\0" x $hk->{keylen};
	write_block($f, $blk, $page);
});

corruption('c_hikey_high', 'a high key above the parent\'s separator',
	qr/high key differs from the parent's separator/, sub {
	my ($f, $t) = @_;
	my $blk = $t->{leaves}[1];
	my $page = read_block($f, $blk);
	my $hk = key_item($page, 1);
	substr($page, $hk->{at} + 6, $hk->{keylen}) = "\xff" x $hk->{keylen};
	write_block($f, $blk, $page);
});

corruption('c_rightlink', 'a broken right-link',
	qr/right-link \d+ does not match the parent's next downlink/, sub {
	my ($f, $t) = @_;
	my $blk = $t->{leaves}[1];
	my $page = read_block($f, $blk);
	set_special(\$page, 'right', $t->{leaves}[3]);
	write_block($f, $blk, $page);
});

corruption('c_separator', 'a wrong separator in the parent',
	qr/high key differs from the parent's separator/, sub {
	my ($f, $t) = @_;
	my $root = $t->{meta}{root};
	my $page = read_block($f, $root);
	my $info = page_info($page);
	die "the root must be an internal page" unless $info->{level} > 0;
	# the downlink to the second child: its separator is the first child's high key
	my $sep = key_item($page, $info->{first} + 1);
	my $last = $sep->{at} + 6 + $sep->{keylen} - 1;
	my $byte = ord(substr($page, $last, 1));
	substr($page, $last, 1) = chr($byte < 255 ? $byte + 1 : $byte - 1);
	write_block($f, $root, $page);
});

corruption('c_prefix', 'an internal page\'s separator prefix longer than the key that keeps it',
	qr/separator prefix of 300 bytes is longer than the key it comes from/, sub {
	my ($f, $t) = @_;
	my $root = $t->{meta}{root};
	my $page = read_block($f, $root);
	my $info = page_info($page);
	die "the root must be an internal page without a prefix"
	  unless $info->{level} > 0 && key_item($page, $info->{first})->{keylen} == 0;
	set_special(\$page, 'prefixlen', 300);
	write_block($f, $root, $page);
});

# Leaf prefixes (ddb_page.h, "Leaf prefix"): the p_ tables are rebuilt by
# VACUUM FULL, which gives their leaves prefixes.  The leaf edited is the
# first with a prefix shorter than its high key (not the leftmost).
sub prefixed_leaf
{
	my ($f, $t) = @_;
	for my $blk (@{ $t->{leaves} }[ 1 .. $#{ $t->{leaves} } - 1 ])
	{
		my $page = read_block($f, $blk);
		my $plen = unpack('x' . (page_info($page)->{special} + 8) . ' S', $page);
		return ($blk, $page, $plen) if $plen > 0 && $plen < key_item($page, 1)->{keylen};
	}
	die "no leaf with a prefix found";
}

corruption('p_long', 'a leaf prefix longer than the high key that keeps it',
	qr/leaf prefix of \d+ bytes is longer than the high key/, sub {
	my ($f, $t) = @_;
	my ($blk, $page) = prefixed_leaf($f, $t);
	set_special(\$page, 'prefixlen', key_item($page, 1)->{keylen} + 1);
	write_block($f, $blk, $page);
});

# (The key space's prefix of storage version 2: these two p_ tables are
# rebuilt as version 2 (ddb.check_storage_version), whose build gives each
# leaf the prefix its low bound and high key share.  Version 3's gives a
# leaf its items' prefix, which may be longer, and the leftmost one too.)
sub mark_version
{
	my ($f, $version) = @_;
	my $meta = read_block($f, 0);
	set_meta(\$meta, 'version', $version);
	write_block($f, 0, $meta);
}

corruption('p_low', 'a leaf prefix its low bound does not start with (storage version 2)',
	qr/leaf prefix of \d+ bytes is not shared by the leaf's low bound/, sub {
	my ($f, $t) = @_;
	my ($blk, $page, $plen) = prefixed_leaf($f, $t);
	set_special(\$page, 'prefixlen', $plen + 1);
	write_block($f, $blk, $page);
});

corruption('p_leftmost', 'a prefix on the leftmost leaf (storage version 2)',
	qr/leftmost leaf has a prefix of 1 bytes/, sub {
	my ($f, $t) = @_;
	my $page = read_block($f, $t->{leaves}[0]);
	set_special(\$page, 'prefixlen', 1);
	write_block($f, $t->{leaves}[0], $page);
});

corruption('p_rightmost', 'a prefix on the rightmost leaf',
	qr/rightmost leaf has a prefix of 1 bytes/, sub {
	my ($f, $t) = @_;
	my $page = read_block($f, $t->{leaves}[-1]);
	set_special(\$page, 'prefixlen', 1);
	write_block($f, $t->{leaves}[-1], $page);
});

corruption('p_version1', 'a leaf prefix in a table of storage version 1',
	qr/leaf has a prefix of \d+ bytes in a table of storage version 1/, sub {
	my ($f, $t) = @_;
	prefixed_leaf($f, $t);
	mark_version($f, 1);
});

# Storage version 3's prefixes of the items present, on the b_ tables,
# written row by row: a leaf at a partition's end keeps its prefix in a
# copy after its high key (DDB_PAGE_PREFIX_COPY), which lies in the next
# partition.
use constant PREFIX_COPY => 0x0080;

sub copied_leaf
{
	my ($f, $t) = @_;
	for my $blk (@{ $t->{leaves} })
	{
		my $page = read_block($f, $blk);
		my $plen = unpack('x' . (page_info($page)->{special} + 8) . ' S', $page);
		return ($blk, $page, $plen) if page_info($page)->{flags} & PREFIX_COPY;
	}
	die "no leaf with a prefix copy found";
}

corruption('b_outside', 'a prefix copy flagged that the high key item does not hold',
	qr/leaf prefix copy of \d+ bytes lies outside the high key/, sub {
	my ($f, $t) = @_;
	my ($blk, $page, $plen) = copied_leaf($f, $t);
	my ($at, $flags, $len) = lp($page, 1);
	set_lp_raw(\$page, 1, pack('L', ($at & 0x7fff) | (1 << 15) | ((6 + key_item($page, 1)->{keylen}) << 17)));
	write_block($f, $blk, $page);
});

# (the high key moved into the page's free space, with room for a copy)
corruption('b_held', 'a prefix copy beside a high key that holds the prefix',
	qr/leaf prefix of \d+ bytes is copied though the high key holds it/, sub {
	my ($f, $t) = @_;
	for my $blk (@{ $t->{leaves} })
	{
		my $page = read_block($f, $blk);
		my $info = page_info($page);
		my $plen = unpack('x' . ($info->{special} + 8) . ' S', $page);
		next if $plen == 0 || ($info->{flags} & PREFIX_COPY);
		my $hk = key_item($page, 1);
		my $len = 6 + $hk->{keylen} + $plen;
		my $at = $info->{upper} - maxalign($len);
		next if $at < $info->{lower};
		substr($page, $at, $len) = pack('L S', INVALID_BLOCK, $hk->{keylen}) . $hk->{key}
		  . substr($hk->{key}, 0, $plen);
		set_lp_raw(\$page, 1, pack('L', $at | (1 << 15) | ($len << 17)));
		substr($page, 14, 2) = pack('S', $at);    # pd_upper
		set_special(\$page, 'flags', $info->{flags} | PREFIX_COPY);
		write_block($f, $blk, $page);
		return;
	}
	die "no leaf whose high key holds its prefix found";
});

# (a high key with its copy must leave room for any one item: splits count
# on it, ddb_tree.c's ddb_leaf_choose_prefix)
corruption('b_copy_long', 'a prefix copy that makes the high key longer than a separator',
	qr/leaf prefix copy of \d+ bytes makes the high key longer than a separator may be/, sub {
	my ($f, $t) = @_;
	my ($blk, $page) = copied_leaf($f, $t);
	set_special(\$page, 'prefixlen', 3206 - key_item($page, 1)->{keylen} + 1);    # DDB_MAX_SEP_LEN
	write_block($f, $blk, $page);
});

corruption('b_noprefix', 'a prefix copy flagged on a leaf without a prefix',
	qr/leaf flags a prefix copy but has no prefix/, sub {
	my ($f, $t) = @_;
	my ($blk, $page) = copied_leaf($f, $t);
	set_special(\$page, 'prefixlen', 0);
	write_block($f, $blk, $page);
});

# (b_version2 is written as storage version 2, without prefixes; one leaf
# gets a prefix copy, of its high key's first 2 bytes, as b_held's)
corruption('b_version2', 'a prefix copy in a table of storage version 2',
	qr/leaf has a prefix copy in a table of storage version 2/, sub {
	my ($f, $t) = @_;
	my $blk = $t->{leaves}[1];
	my $page = read_block($f, $blk);
	my $info = page_info($page);
	my $hk = key_item($page, 1);
	my $len = 6 + $hk->{keylen} + 2;
	my $at = $info->{upper} - maxalign($len);
	substr($page, $at, $len) = pack('L S', INVALID_BLOCK, $hk->{keylen}) . $hk->{key} . substr($hk->{key}, 0, 2);
	set_lp_raw(\$page, 1, pack('L', $at | (1 << 15) | ($len << 17)));
	substr($page, 14, 2) = pack('S', $at);    # pd_upper
	set_special(\$page, 'flags', $info->{flags} | PREFIX_COPY);
	set_special(\$page, 'prefixlen', 2);
	write_block($f, $blk, $page);
});

corruption('b_copy_bytes', 'a prefix copy whose bytes are not the items\' prefix',
	qr/leaf item \d+ has a bad key: |last item is not below the high key|item \d+ is below the page's low bound/, sub {
	my ($f, $t) = @_;
	my ($blk, $page, $plen) = copied_leaf($f, $t);
	my $hk = key_item($page, 1);
	substr($page, $hk->{at} + 6 + $hk->{keylen}, 1) = "\xff";
	write_block($f, $blk, $page);
});

corruption('c_unreachable', 'an initialized page no link reaches',
	qr/initialized page is not reachable from the root/, sub {
	my ($f, $t) = @_;
	write_block_append($f, read_block($f, $t->{leaves}[1]));
});

corruption('c_twolive', 'a second live version of a key',
	qr/second live version of its key/, sub {
	my ($f, $t) = @_;
	# the updated key: two adjacent items with the same key, newest first
	for my $blk (@{ $t->{leaves} })
	{
		my $page = read_block($f, $blk);
		my $info = page_info($page);
		for my $off ($info->{first} + 1 .. $info->{maxoff})
		{
			my ($new, $old) = (leaf_item($page, $off - 1), leaf_item($page, $off));
			next unless $new->{key} eq $old->{key};
			# the old version's deleter "never happened"
			substr($page, $old->{tup} + 4, 4) = pack('L', 0);
			substr($page, $old->{tup} + 20, 2) =
			  pack('S', ($old->{infomask} & ~XMAX_COMMITTED) | XMAX_INVALID);
			write_block($f, $blk, $page);
			return;
		}
	}
	die "no key with two versions found";
});

# Row-id map edits of the first item of the second leaf.
sub edit_map_entry
{
	my ($f, $t, $change) = @_;
	my $page = read_block($f, $t->{leaves}[1]);
	my $item = leaf_item($page, page_info($page)->{first});
	my ($mapblk, $at) = map_entry_at($f, $item->{rowid});
	my $map = read_block($f, $mapblk);
	my ($block, $hash) = unpack("x$at L L", $map);
	die "the map entry of row id $item->{rowid} is not set" unless $block;
	($block, $hash) = $change->($block, $hash);
	substr($map, $at, 8) = pack('L L', $block, $hash);
	write_block($f, $mapblk, $map);
}

# A map leaf keeps its index in its right-link (ddb_rowid.c): the one
# leaf of these tables' maps is leaf 0.
corruption('c_map_index', 'a row-id map leaf marked as another leaf of the map',
	qr/(row-id map leaf \d+ is marked as leaf 5 of the map, not leaf 0|block \d+ is not the row-id map leaf its directory names)/, sub {
	my ($f, $t) = @_;
	my $blk = $t->{meta}{map_root};
	my $page = read_block($f, $blk);
	die "the map's root is not an indexed leaf"
	  unless page_info($page)->{flags} == (F_MAP_LEAF | F_MAP_INDEXED);
	set_special(\$page, right => 5);
	write_block($f, $blk, $page);
});

corruption('c_map_missing', 'a missing row-id map entry',
	qr/has no row-id map entry with its hash/, sub {
	my ($f, $t) = @_;
	edit_map_entry($f, $t, sub { return (0, 0) });
});

corruption('c_map_hash', 'a row-id map entry with another key\'s hash',
	qr/has no row-id map entry with its hash/, sub {
	my ($f, $t) = @_;
	edit_map_entry($f, $t, sub { return ($_[0], ($_[1] + 1) % 4294967296) });
});

corruption('c_map_beyond', 'a row-id map entry pointing beyond the relation',
	qr/row-id map entry points to block \d+ beyond the end of the relation/, sub {
	my ($f, $t) = @_;
	edit_map_entry($f, $t, sub { return (nblocks($f) + 10, $_[1]) });
});

# xids: one beyond the next transaction id, one before relfrozenxid.
my $next_xid;

sub edit_xmin
{
	my ($f, $t, $xmin) = @_;
	my $blk = $t->{leaves}[1];
	my $page = read_block($f, $blk);
	my $item = leaf_item($page, page_info($page)->{first});
	substr($page, $item->{tup}, 4) = pack('L', $xmin);
	write_block($f, $blk, $page);
}

corruption('c_xid_future', 'an xmin after the next transaction id',
	qr/has xmin \d+ from the future/, sub {
	my ($f, $t) = @_;
	edit_xmin($f, $t, $next_xid + 100000);
});

corruption('c_xid_old', 'an xmin before relfrozenxid',
	qr/has xmin \d+ before relfrozenxid/, sub {
	my ($f, $t) = @_;
	edit_xmin($f, $t, 3);    # FirstNormalTransactionId, older than any table here
});

corruption('c_meta_rowid', 'a metapage row-id counter behind the row ids in use',
	qr/has row id \d+, which is not below the metapage's next row id/, sub {
	my ($f, $t) = @_;
	my $page = read_block($f, 0);
	set_meta(\$page, 'next_rowid', 1);
	write_block($f, 0, $page);
});

corruption('c_meta_magic', 'a metapage with a bad magic number',
	qr/bad magic/, sub {
	my ($f, $t) = @_;
	my $page = read_block($f, 0);
	set_meta(\$page, 'magic', 0x12345678);
	write_block($f, 0, $page);
});

corruption('c_level', 'a leaf claiming a level above 0',
	qr/level 1, expected 0/, sub {
	my ($f, $t) = @_;
	my $blk = $t->{leaves}[1];
	my $page = read_block($f, $blk);
	set_special(\$page, 'level', 1);
	write_block($f, $blk, $page);
});

# (PostgreSQL's own page check already refuses pd_lower > pd_upper; these
# layouts pass it and only ddb_verify's checks catch them.)
corruption('c_special', 'a special space where ddb does not put it',
	qr/special space at \d+/, sub {
	my ($f, $t) = @_;
	my $blk = $t->{leaves}[1];
	my $page = read_block($f, $blk);
	my $info = page_info($page);
	substr($page, 16, 2) = pack('S', $info->{special} - 8);
	write_block($f, $blk, $page);
});

corruption('c_item_outside', 'a line pointer outside the item area',
	qr/item \d+ lies outside the item area/, sub {
	my ($f, $t) = @_;
	my $blk = $t->{leaves}[1];
	my $page = read_block($f, $blk);
	my $info = page_info($page);
	my ($at, $flags, $len) = lp($page, $info->{first});
	set_lp_raw(\$page, $info->{first},
		pack('L', (($info->{upper} - 8) & 0x7fff) | ($flags << 15) | ($len << 17)));
	write_block($f, $blk, $page);
});

# Edits of the first item of the second leaf (never updated, live).
sub edit_first_item
{
	my ($f, $t, $change) = @_;
	my $blk = $t->{leaves}[1];
	my $page = read_block($f, $blk);
	$change->(\$page, leaf_item($page, page_info($page)->{first}), page_info($page));
	write_block($f, $blk, $page);
}

corruption('c_page_id', 'a page whose special space carries another page id',
	qr/page id 1234/, sub {
	my ($f, $t) = @_;
	edit_first_item($f, $t, sub { set_special($_[0], 'page_id', 0x1234) });
});

corruption('c_leaf_prefix', 'a leaf prefix 4 bytes longer than its items share',
	qr/leaf item \d+ has a bad key: |last item is not below the high key|item \d+ is below the page's low bound|items \d+ and \d+ are out of order|leaf prefix of \d+ bytes is longer than the high key/, sub {
	my ($f, $t) = @_;
	edit_first_item($f, $t, sub {
		my ($page) = @_;
		set_special($page, 'prefixlen',
			unpack('x' . (page_info($$page)->{special} + 8) . ' S', $$page) + 4);
	});
});

corruption('c_not_normal', 'a dead line pointer among the items',
	qr/item \d+ is not a normal item/, sub {
	my ($f, $t) = @_;
	edit_first_item($f, $t, sub {
		my ($page, $item, $info) = @_;
		my ($at, $flags, $len) = lp($$page, $info->{first});
		set_lp_raw($page, $info->{first}, pack('L', ($at & 0x7fff) | (3 << 15) | ($len << 17)));    # LP_DEAD
	});
});

# (c_keylen and c_low_bound take the leaf's prefix away: the edited item's
# stored key is then its whole key)
corruption('c_keylen', 'a leaf item with a key too short to hold a hash',
	qr/leaf item \d+ has a key of 3 bytes/, sub {
	my ($f, $t) = @_;
	edit_first_item($f, $t, sub {
		substr(${ $_[0] }, $_[1]{at} + 6, 2) = pack('S', 3);
		set_special($_[0], 'prefixlen', 0);
		set_special($_[0], 'flags', page_info(${ $_[0] })->{flags} & ~PREFIX_COPY);
	});
});

corruption('c_rowid_off', 'a leaf item whose row id has offset 0',
	qr/leaf item \d+ has row id offset 0/, sub {
	my ($f, $t) = @_;
	edit_first_item($f, $t, sub { substr(${ $_[0] }, $_[1]{at} + 4, 2) = pack('S', 0) });
});

corruption('c_hoff', 'a leaf item whose tuple header is shorter than a heap tuple\'s',
	qr/leaf item \d+ has a bad tuple header/, sub {
	my ($f, $t) = @_;
	edit_first_item($f, $t, sub { substr(${ $_[0] }, $_[1]{tup} + 22, 1) = chr(8) });
});

corruption('c_low_bound', 'a leaf\'s first item below the parent\'s separator',
	qr/item \d+ is below the page's low bound/, sub {
	my ($f, $t) = @_;
	edit_first_item($f, $t, sub {
		my ($page, $item) = @_;
		substr($$page, $item->{at} + 8, length($item->{key})) = "\0" x length($item->{key});
		set_special($page, 'prefixlen', 0);
		set_special($page, 'flags', page_info($$page)->{flags} & ~PREFIX_COPY);
	});
});

corruption('c_multixact', 'a version whose xmax is a multixact not yet created',
	qr/item \d+ has multixact xmax \d+ outside relminmxid \d+ to next multixact \d+/, sub {
	my ($f, $t) = @_;
	edit_first_item($f, $t, sub {
		my ($page, $item) = @_;
		# a plausible xid as the raw xmax: as a multixact it is far beyond
		# the next one (this cluster has made at most a few)
		substr($$page, $item->{tup} + 4, 4) = pack('L', $item->{xmin});
		substr($$page, $item->{tup} + 20, 2) =
		  pack('S', ($item->{infomask} & ~(XMAX_INVALID | XMAX_COMMITTED)) | XMAX_IS_MULTI);
	});
});

corruption('c_ctid', 'a never-updated live version whose t_ctid points elsewhere',
	qr/item \d+ was never updated but its t_ctid does not point to itself/, sub {
	my ($f, $t) = @_;
	edit_first_item($f, $t, sub {
		my ($page, $item) = @_;
		my $pos = unpack('x' . ($item->{tup} + 16) . ' S', $$page);
		substr($$page, $item->{tup} + 16, 2) = pack('S', $pos + 1);
	});
});

sub write_block_append
{
	my ($file, $buf) = @_;
	write_block($file, nblocks($file), $buf);
}

# ---------------------------------------------------------------------------
# A wrong row-id map entry is a hint, not the truth (issue 12, item 7): a
# map page written before the WAL of the split it depends on, and that WAL
# lost, would point at a block that is all zeroes or holds other keys.
# ddb_verify reports an entry beyond the end of the file, and counts the
# others as stale_map_entries: an entry keeps naming the leaf its version
# was written on, which VACUUM may since have unlinked and a split reused
# as any kind of page (sql/unlink.sql makes such entries the ordinary
# way).  Reads, updates and deletes fall back to searching the entry's hash
# and still find every version.  Each
# table gets one bad entry (the first item of its second leaf).
# ---------------------------------------------------------------------------
my @fallbacks = (
	[ 'f_beyond', 'a block beyond the end of the relation',
		sub { my ($f, $t) = @_; return nblocks($f) + 10 } ],
	[ 'f_zero', 'an all-zero block',
		sub { my ($f, $t) = @_; write_block_append($f, "\0" x $BLCKSZ); return nblocks($f) - 1 } ],
	[ 'f_internal', 'an internal page', sub { my ($f, $t) = @_; return $t->{meta}{root} } ],
	[ 'f_map', 'a row-id map page', sub { my ($f, $t) = @_; return $t->{meta}{map_root} } ],
	[ 'f_right', 'a leaf right of the version', sub { my ($f, $t) = @_; return $t->{leaves}[-1] } ],
);

# Load every table alike: 800 items of ~200 bytes over 40 partitions (a
# root and a few dozen leaves), one key updated so it has two versions.
my @tables = ('c_clean', 'o_unindexed', 'o_orphan', 'v_one', 'v_four', (map { $_->[0] } @cases),
	(map { $_->[0] } @fallbacks));
for my $t (@tables)
{
	# the p_ tables: two partitions, rebuilt with leaf prefixes; the b_
	# tables: two partitions, written row by row
	my $parts = $t =~ /^[pb]_/ ? 2 : 40;
	# (v_one as an earlier ddb wrote it: version 1, no prefixes; b_version2
	# as version 2 wrote it row by row, without)
	my $version = $t eq 'v_one' ? 1 : $t eq 'b_version2' ? 2 : 0;
	$node->safe_psql('postgres', qq{
		SET ddb.check_storage_version = $version;
		CREATE TABLE $t ("PK" text, "SK" text, item jsonb) USING ddb;
		INSERT INTO $t SELECT 'P' || (i % $parts), 'S' || lpad(i::text, 5, '0'),
		       jsonb_build_object('i', i, 'pad', repeat('x', 150))
		  FROM generate_series(1, 800) i;
		UPDATE $t SET item = item || '{"v": 2}' WHERE "PK" = 'P7' AND "SK" = 'S00007';
	});
	my $build_version = $t =~ /^p_(low|leftmost)$/ ? 2 : 0;
	$node->safe_psql('postgres', "SET ddb.check_storage_version = $build_version; VACUUM FULL $t")
	  if $t =~ /^p_/;
	is($node->safe_psql('postgres', qq{SELECT (ddb_verify('$t') ->> 'live')::int}), '800',
		"$t verifies clean before the edit");
}
cmp_ok($node->safe_psql('postgres', q{SELECT (ddb_verify('p_long') ->> 'leaf_prefix_bytes')::float}),
	'>', 4, 'the p_ tables have leaf prefixes');
cmp_ok($node->safe_psql('postgres', q{SELECT (ddb_verify('b_held') ->> 'leaf_prefix_copies')::int}),
	'>', 0, 'the b_ tables have leaves that keep their prefix after the high key');

# o_orphan: one item deleted and VACUUMed, which clears its map entry (and
# that of the updated key's old version); the edit below sets one of them
# again, an entry no version owns.
$node->safe_psql('postgres', q{
	DELETE FROM o_orphan WHERE "PK" = 'P3' AND "SK" = 'S00003';
	VACUUM o_orphan;
});
is($node->safe_psql('postgres', q{SELECT ddb_verify('o_orphan') ->> 'orphan_map_entries'}), '0',
	'o_orphan has no orphan map entry before the edit');

# A key whose versions span more leaves than ddb.verify_max_key_leaves: one
# item of ~2 kB updated 60 times while a snapshot keeps every version.
$node->safe_psql('postgres', q{
	CREATE TABLE c_span ("PK" text, item jsonb) USING ddb;
	INSERT INTO c_span SELECT 'k' || i, '{}' FROM generate_series(1, 50) i;
	INSERT INTO c_span VALUES ('hot', '{}');
});
my $snapshot = $node->background_psql('postgres');
$snapshot->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM c_span;');
for my $i (1 .. 60)
{
	$node->safe_psql('postgres', q{
		UPDATE c_span SET item = jsonb_build_object('pad',
			(SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 60)))
		 WHERE "PK" = 'hot'});
}
$snapshot->query_safe('COMMIT');
$snapshot->quit;
my $span = $node->safe_psql('postgres', q{SELECT (ddb_verify('c_span') ->> 'max_key_leaves')::int});
cmp_ok($span, '>', 10, "c_span: one key's versions span $span leaves, within the default bound");
my ($rc, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\nSET ddb.verify_max_key_leaves = 10;\nSELECT ddb_verify('c_span')");
like($err, qr/ERROR:  XX001: .*the versions of one key span more than 10 leaves/,
	'ddb_verify reports a key whose versions span more leaves than ddb.verify_max_key_leaves');
is($node->safe_psql('postgres', "SET ddb.verify_max_key_leaves = $span; SELECT (ddb_verify('c_span') ->> 'live')::int"),
	'51', 'a bound of exactly the span passes');

$next_xid = $node->safe_psql('postgres', 'SELECT txid_current() % 4294967296');
my %file = map {
	$_ => $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('$_')")
} @tables;
$node->safe_psql('postgres', 'CHECKPOINT');
$node->stop;

for my $c (@cases)
{
	my ($table, $what, $message, $edit) = @$c;
	my $t = tree($file{$table});
	die "$table: expected a root above a dozen leaves"
	  unless $t->{meta}{height} >= 2 && @{ $t->{leaves} } >= 12;
	$edit->($file{$table}, $t);
}

# A row-id map leaf as written before leaves carried their index (no
# DDB_PAGE_MAP_INDEXED, no right-link): not corruption.
{
	my $f = $file{o_unindexed};
	my $blk = tree($f)->{meta}{map_root};
	my $page = read_block($f, $blk);
	die "o_unindexed: the map's root is not an indexed leaf"
	  unless page_info($page)->{flags} == (F_MAP_LEAF | F_MAP_INDEXED);
	set_special(\$page, flags => F_MAP_LEAF);
	set_special(\$page, right => INVALID_BLOCK);
	write_block($f, $blk, $page);
}

# Storage versions (ddb_page.h): a table an earlier ddb wrote (version 1,
# no leaf prefixes) is read as it is; one a later ddb wrote (4) is refused.
for ([ 'v_one', 1 ], [ 'v_four', 4 ])
{
	my ($table, $version) = @$_;
	my $meta = read_block($file{$table}, 0);
	set_meta(\$meta, 'version', $version);
	write_block($file{$table}, 0, $meta);
}

# An entry no version owns (a crash between a prune and its map clear
# leaves such): counted as orphan_map_entries, not corruption.
{
	my $f = $file{o_orphan};
	my $t = tree($f);
	die "o_orphan: expected a one-page row-id map" unless $t->{meta}{map_levels} == 1;
	my $map = read_block($f, $t->{meta}{map_root});
	my $nslots = int((unpack('x12 S', $map) - PAGE_HEADER) / 8);    # pd_lower
	my @zero = grep { unpack('x' . (PAGE_HEADER + 8 * $_) . ' L', $map) == 0 } 0 .. $nslots - 1;
	die "o_orphan: expected a cleared map entry" unless @zero;
	substr($map, PAGE_HEADER + 8 * $zero[0], 8) = pack('L L', $t->{leaves}[1], 12345);
	write_block($f, $t->{meta}{map_root}, $map);
}

for my $fb (@fallbacks)
{
	my ($table, $what, $where) = @$fb;
	my $t = tree($file{$table});
	my $block = $where->($file{$table}, $t);
	edit_map_entry($file{$table}, $t, sub { return ($block, $_[1]) });
}

$node->start;
for my $fb (@fallbacks)
{
	my ($table, $what) = @$fb;
	my ($rc, $out, $err) = $node->psql('postgres',
		"SELECT ddb_verify('$table') ->> 'stale_map_entries'");
	if ($table eq 'f_beyond')
	{
		like($err, qr/ERROR:  .*beyond the end/,
			"ddb_verify reports a map entry pointing at $what ($table)");
	}
	else
	{
		is($out, '1', "ddb_verify counts a map entry pointing at $what as stale ($table)");
	}
	is($node->safe_psql('postgres', qq{
		SELECT count(*) FROM $table;
		UPDATE $table SET item = item || '{"f": 1}';
		SELECT count(*) FILTER (WHERE item ? 'f') FROM $table;
		DELETE FROM $table WHERE "PK" IN ('P1', 'P2', 'P3');
		SELECT count(*) FROM $table;
	}), "800\n800\n740", "with an entry pointing at $what, every row is updated and deleted ($table)");
	$node->safe_psql('postgres', "VACUUM $table");
	is($node->safe_psql('postgres', qq{SELECT (ddb_verify('$table') ->> 'live')::int}), '740',
		"$table verifies clean once VACUUM removed the old versions");
}

is($node->safe_psql('postgres', q{
	SELECT count(*), (SELECT ddb_verify('v_one') ->> 'storage_version') FROM v_one;
	UPDATE v_one SET item = item || '{"v1": true}' WHERE "PK" = 'P1';
	SELECT (ddb_verify('v_one') ->> 'live')::int, ddb_verify('v_one') ->> 'leaf_prefix_bytes'}),
	"800|1\n800|0.0", 'a table of storage version 1 is read, written and verified as it is');
{
	my ($rc, $out, $err) = $node->psql('postgres', "\\set VERBOSITY verbose\nSELECT count(*) FROM v_four");
	like($err, qr/ERROR:  0A000: ddb table "v_four" has storage version 4, this ddb reads versions 1 to 3/,
		'a table of a later storage version is refused (feature_not_supported)');
}

is($node->safe_psql('postgres', q{
	SELECT ddb_verify('o_orphan') ->> 'orphan_map_entries', ddb_verify('o_orphan') ->> 'live'}),
	'1|799', 'ddb_verify counts a map entry that no version owns as an orphan');

is($node->safe_psql('postgres', q{
	SELECT (ddb_verify('o_unindexed') ->> 'live')::int;
	UPDATE o_unindexed SET item = item || '{"f": 1}';
	SELECT count(*) FILTER (WHERE item ? 'f') FROM o_unindexed;
	VACUUM o_unindexed;
	SELECT (ddb_verify('o_unindexed') ->> 'live')::int;
}), "800\n800\n800", 'a map leaf written before leaves had indexes verifies clean and leads to every row');

for my $c (@cases)
{
	my ($table, $what, $message) = @$c;
	my ($rc, $out, $err) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT ddb_verify('$table')");
	like($err, qr/ERROR:  XX001: .*$message/, "ddb_verify reports $what ($table)");
}
is($node->safe_psql('postgres', q{SELECT ddb_verify('c_clean') ->> 'live', ddb_verify('c_clean') ->> 'orphan_map_entries'}),
	'800|0', 'the untouched table still verifies clean, without orphan map entries');

# Checked builds (CI's) do not wait for ddb_verify to find a second live
# version of a key: right after an insert under a uniqueness check, with
# the key's first leaf still locked, ddb_tree.c counts the key's versions a
# dirty snapshot sees (ddb_check_key_has_one_version).  The test-only fault
# ddb.check_fault_skip_unique makes the check find every key free; each
# insert path must then fail at that guard and leave the table as it was.
$node->safe_psql('postgres', q{
	SELECT ddb_create_table('c_guard', 'PK', 'S', 'SK', 'S');
	SELECT ddb_put_item('c_guard', '{"PK": "k", "SK": "0", "v": 1}');
});
for my $w (
	[ 'a single insert (SQL INSERT)', q{INSERT INTO c_guard VALUES ('k', '0', '{"v": 2}')} ],
	[ 'a batch (BatchWriteItem)',
	  q{SELECT ddb_batch_write_item('{"c_guard": [{"PutRequest": {"Item": {"PK": "k", "SK": "0", "v": 3}}}]}')} ],
	[ 'a batch (COPY)', q{COPY c_guard FROM PROGRAM 'printf "k\t0\t{\"v\": 4}\n"'} ])
{
	my ($rc, $out, $err) = $node->psql('postgres',
		"SET ddb.check_fault_skip_unique = on;\n$w->[1]");
	like($err, qr/ddb invariant violated: .*ddb_check_key_has_one_version/,
		"the checked build's guard catches a second live version from $w->[0]");
}
is($node->safe_psql('postgres', q{
	SELECT string_agg(item::text, ','), (SELECT (ddb_verify('c_guard') ->> 'live')::int) FROM c_guard}),
	'{"v": 1}|1', 'the failed inserts left the table as it was');

# ---------------------------------------------------------------------------
# Deleted leaves (ddb_tree.c, "Unlinking empty leaves"): one table per
# case, most of its partitions deleted and VACUUMed, so that the leaves
# between the first and last child of the root are deleted pages.  A
# prepared transaction that took an xid before the VACUUMs keeps them from
# becoming recyclable (it survives the restart), so ddb_verify follows
# their right-links.
# ---------------------------------------------------------------------------
my @dcases = (
	[ 'd_reachable', 'a leaf of the tree marked deleted', qr/deleted page is reachable from the tree/,
		sub {
			my ($f, $t, $d) = @_;
			my $blk = $t->{leaves}[1];
			my $page = read_block($f, $blk);
			set_special(\$page, flags => F_LEAF | F_DELETED);
			write_block($f, $blk, $page);
		} ],
	[ 'd_cycle', 'a deleted leaf whose right-link names itself',
		qr/right-links of deleted leaves form a cycle/, sub {
			my ($f, $t, $d) = @_;
			my $page = read_block($f, $d);
			set_special(\$page, right => $d);
			write_block($f, $d, $page);
		} ],
	[ 'd_nowhere', 'a deleted leaf whose right-link names the metapage',
		qr/right-link 0 names neither a leaf nor a deleted leaf/, sub {
			my ($f, $t, $d) = @_;
			my $page = read_block($f, $d);
			set_special(\$page, right => 0);
			write_block($f, $d, $page);
		} ],
	[ 'd_flags', 'a deleted page flagged internal',
		qr/initialized page is not reachable from the root/, sub {
			my ($f, $t, $d) = @_;
			my $page = read_block($f, $d);
			set_special(\$page, flags => F_INTERNAL | F_DELETED);
			write_block($f, $d, $page);
		} ],
	# 3,000 items, the first 2,100 deleted too: VACUUM frees the three map
	# leaves whose entries it cleared (ddb_rowid.c, "Freeing empty leaves";
	# the rows' batches grow to whole leaves, so the last two rows have a
	# leaf of their own), which are recyclable at once, the prepared
	# transaction regardless
	[ 'd_map_right', 'a freed row-id map leaf with a right-link',
		qr/freed row-id map leaf has right-link 1/, sub {
			my ($f, $t, $d) = @_;
			my ($m) = grep { page_info(read_block($f, $_))->{flags} == (F_MAP_LEAF | F_DELETED) }
			  1 .. nblocks($f) - 1;
			die "no freed map leaf" unless defined $m;
			my $page = read_block($f, $m);
			set_special(\$page, right => 1);
			write_block($f, $m, $page);
		}, 3000, 44, 3 ],
);
for my $c (@dcases)
{
	my $t = $c->[0];
	my $n = $c->[4] // 800;
	$node->safe_psql('postgres', qq{
		CREATE TABLE $t ("PK" text, "SK" text, item jsonb) USING ddb;
		INSERT INTO $t SELECT 'P' || (i % 40), 'S' || lpad(i::text, 5, '0'),
		       jsonb_build_object('i', i, 'pad', repeat('x', 150))
		  FROM generate_series(1, $n) i;
		DELETE FROM $t WHERE "PK" NOT IN ('P1', 'P2') OR ($n > 800 AND "SK" <= 'S02100');
	});
}
$node->safe_psql('postgres', "BEGIN; SELECT txid_current(); PREPARE TRANSACTION 'hold_deleted'");
my %dfile;
for my $c (@dcases)
{
	my $t = $c->[0];
	$node->safe_psql('postgres', "VACUUM $t");
	is($node->safe_psql('postgres', qq{
		SELECT (v ->> 'deleted_pages')::int > 5, (v ->> 'recyclable_pages')::int, (v ->> 'live')::int
		  FROM ddb_verify('$t') v}),
		't|' . ($c->[6] // 0) . '|' . ($c->[5] // 40),
		"$t verifies clean before the edit, with deleted leaves not yet recyclable");
	$dfile{$t} = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('$t')");
}
$node->safe_psql('postgres', 'CHECKPOINT');
$node->stop;
for my $c (@dcases)
{
	my ($table, $what, $message, $edit) = @$c;
	my $f = $dfile{$table};
	my ($d) = grep { page_info(read_block($f, $_))->{flags} & F_DELETED } 1 .. nblocks($f) - 1;
	die "$table: no deleted leaf" unless defined $d;
	$edit->($f, tree($f), $d);
}
$node->start;
for my $c (@dcases)
{
	my ($table, $what, $message) = @$c;
	my ($rc, $out, $err) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT ddb_verify('$table')");
	like($err, qr/ERROR:  XX001: .*$message/, "ddb_verify reports $what ($table)");
}
$node->safe_psql('postgres', "COMMIT PREPARED 'hold_deleted'");

# ---------------------------------------------------------------------------
# The visibility map (ddb_vismap.c): a leaf VACUUM marked all visible is
# unmarked by every change before it is made, so a mark on a leaf holding
# a version that not every snapshot sees, or on a page that is not a leaf,
# is corruption.  The bits are in the map fork (heap's layout: two bits a
# block after the page header, ddb's the second).  vm_stale: after a
# VACUUM that marked every leaf, a DELETE unmarks the leaves it changes;
# the edit marks one of them again, over its deleted (not yet pruned)
# versions.  vm_root: the edit marks the root, an internal page.
# ---------------------------------------------------------------------------
sub vm_bit
{
	my ($file, $blk, $set) = @_;
	my $page = read_block($file, 0);
	my $at = PAGE_HEADER + int($blk / 4);
	my $mask = 0x02 << (2 * ($blk % 4));
	my $byte = ord(substr($page, $at, 1));
	return ($byte & $mask) != 0 unless defined $set;
	substr($page, $at, 1) = chr($set ? $byte | $mask : $byte & ~$mask);
	write_block($file, 0, $page);
}
my %vmfile;
for my $t ('vm_stale', 'vm_root')
{
	$node->safe_psql('postgres', qq{
		CREATE TABLE $t ("PK" text, "SK" text, item jsonb) USING ddb;
		INSERT INTO $t SELECT 'P' || (i % 40), 'S' || lpad(i::text, 5, '0'),
		       jsonb_build_object('i', i, 'pad', repeat('x', 150))
		  FROM generate_series(1, 800) i;
	});
	# (a write that commits synchronously, so that the VACUUM may set the
	# hint bits that say the load committed: see sql/vacuum_skip.sql)
	$node->safe_psql('postgres', "CREATE TABLE ${t}_flush (); VACUUM $t");
	is($node->safe_psql('postgres', qq{
		SELECT v ->> 'all_visible_leaves' = v ->> 'leaf_pages' FROM ddb_verify('$t') v}),
		't', "$t: VACUUM marked every leaf, and the table verifies clean");
	$vmfile{$t} = $node->data_dir . '/' .
	  $node->safe_psql('postgres', "SELECT pg_relation_filepath('$t')") . '_vm';
}
$node->safe_psql('postgres', q{DELETE FROM vm_stale WHERE "PK" = 'P5'});
is($node->safe_psql('postgres', q{
	SELECT (v ->> 'leaf_pages')::int - (v ->> 'all_visible_leaves')::int > 0
	  FROM ddb_verify('vm_stale') v}),
	't', 'the DELETE unmarked the leaves it changed, and the table verifies clean');
my %mainfile = map { $_ => $node->data_dir . '/' .
	  $node->safe_psql('postgres', "SELECT pg_relation_filepath('$_')") } ('vm_stale', 'vm_root');
$node->stop;
my $stale_tree = tree($mainfile{vm_stale});
my $root_tree = tree($mainfile{vm_root});
my ($unmarked) = grep { !vm_bit($vmfile{vm_stale}, $_) } @{ $stale_tree->{leaves} };
die "vm_stale: no unmarked leaf" unless defined $unmarked;
vm_bit($vmfile{vm_stale}, $unmarked, 1);
vm_bit($vmfile{vm_root}, $root_tree->{meta}{root}, 1);
$node->start;
for my $c (
	[ 'vm_stale', 'a marked leaf with versions not visible to all',
		qr/the leaf is marked all visible, but item \d+ is not visible to every snapshot/ ],
	[ 'vm_root', 'a marked internal page',
		qr/the page is marked all visible, but it is not a leaf of the tree/ ])
{
	my ($table, $what, $message) = @$c;
	my ($rc, $out, $err) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT ddb_verify('$table')");
	like($err, qr/ERROR:  XX001: .*$message/, "ddb_verify reports $what ($table)");
}

$node->stop;
done_testing();
