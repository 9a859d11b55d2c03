# A crash can leave a ddb table's file extended but its first WAL record
# lost: the first insert extends the file (zero blocks) before its WAL
# record reaches disk.  Such a table must read as empty and take inserts
# again (the metapage is initialized in place), never fail with a bad
# metapage.  Simulated by zeroing the file's first blocks on a stopped server.
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

$node->stop;
done_testing();
