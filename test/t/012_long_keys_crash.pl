# Splits of trees with DynamoDB's longest keys survive a crash.
#
# Internal pages store separators without the prefix they share, kept once
# in the high key or the minus-infinity downlink, and shrink it by
# rewriting the page when a new separator shares less.  Those rewrites and
# the splits around them are WAL-logged with the change they belong to:
# load long keys in ascending, descending and random order without a
# checkpoint, crash (immediate stop), and after recovery every committed
# item is there, nothing else, the tree verifies and stays shallow, and
# inserts go on.  So do the splits of steady updates of long-key items,
# which prune the leaf's right sibling and split into it once it is empty
# (ddb_tree.c, "Long keys"): the items keep their last committed values on
# a bounded number of leaves.
#
# DDB_TAP_WAL=custom runs it with ddb preloaded, so ddb tables are logged
# with ddb's own WAL records (test/t/DdbWal.pm); test/run.sh runs both.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DdbWal;

my $node = PostgreSQL::Test::Cluster->new('long_keys_crash');
$node->init;
# (autovacuum off: its ANALYZE would hold back the updates' prunes below)
$node->append_conf('postgresql.conf', "checkpoint_timeout = 1h\nmax_wal_size = 4GB\nautovacuum = off\n");
DdbWal::configure($node);
$node->start;
DdbWal::check_mode($node);

$node->safe_psql('postgres', q{
	CREATE EXTENSION ddb;
	CREATE TABLE t (pk text, sk text, item jsonb) USING ddb;
	CHECKPOINT;
});

# three partitions of 2048-byte keys with 1000-byte sort-key stems, each
# loaded in another order; one more transaction left uncommitted
my $load = q{
	INSERT INTO t SELECT repeat(%s, 2048), repeat('s', 1000) || lpad(i::text, 5, '0'),
	       jsonb_build_object('i', i)
	FROM generate_series(1, 400) i ORDER BY %s;
};
$node->safe_psql('postgres', sprintf($load, "'A'", 'i'));
$node->safe_psql('postgres', sprintf($load, "'D'", 'i DESC'));
$node->safe_psql('postgres', "SELECT setseed(0.5);" . sprintf($load, "'R'", 'random()'));
# twenty long-key items, updated in 30 committed rounds
$node->safe_psql('postgres', q{
	CREATE TABLE u (pk text, sk text, item jsonb) USING ddb WITH (autovacuum_enabled = false);
	INSERT INTO u SELECT lpad(i::text, 2048, 'p'), lpad(i::text, 1024, 's'), jsonb_build_object('n', 0)
	FROM generate_series(1, 20) i;
	DO $$ BEGIN
		FOR r IN 1 .. 30 LOOP
			UPDATE u SET item = jsonb_build_object('n', r);
			COMMIT;
		END LOOP;
	END $$;
});
# one long-key item a leaf, built by VACUUM FULL, so the leaves keep a
# prefix (the hash bytes their neighbours share): updates split 41's leaf
# into its emptied older-version leaf, VACUUM unlinks that leaf into 21's,
# and once 21 is gone a new key splits 41's leaf into 21's emptied leaf,
# whose key space shares less of the prefix: the moved version is stored
# under the shorter one (sql/leaf_prefix_shapes.sql, part 6)
$node->safe_psql('postgres', q{
	CREATE TABLE w (pk text, sk text, item jsonb) USING ddb WITH (autovacuum_enabled = false);
	INSERT INTO w SELECT lpad(i::text, 2048, 'p'), lpad(i::text, 1024, 's'),
	       jsonb_build_object('n', 0, 'pad', (SELECT string_agg(md5(i::text || j), '') FROM generate_series(1, 52) j))
	FROM generate_series(1, 60) i;
	VACUUM FULL w;
	UPDATE w SET item = item || '{"n": 1}' WHERE pk = lpad('41', 2048, 'p');
	UPDATE w SET item = item || '{"n": 2}' WHERE pk = lpad('41', 2048, 'p');
	VACUUM w;
	DELETE FROM w WHERE pk = lpad('21', 2048, 'p');
	INSERT INTO w VALUES (lpad('398', 2048, 'p'), lpad('398', 1024, 's'),
	                      jsonb_build_object('n', 398, 'pad', repeat('q', 1700)));
});
my $open = $node->background_psql('postgres');
$open->query_safe("BEGIN; " . sprintf($load, "'U'", 'i'));

$node->stop('immediate');
$node->start;

is($node->safe_psql('postgres', q{SELECT left(pk, 1), count(*) FROM t GROUP BY 1 ORDER BY 1}),
	"A|400\nD|400\nR|400", 'committed items are all there after recovery, the open transaction\'s are not');
my $v = $node->safe_psql('postgres', q{
	SELECT (v->>'live')::int, (v->>'height')::int <= 5 FROM ddb_verify('t') v});
is($v, "1200|t", 'the recovered tree verifies and stays shallow');
is($node->safe_psql('postgres', q{
	SELECT count(*) FROM generate_series(1, 400) i, unnest(ARRAY['A', 'D', 'R']) p
	WHERE (SELECT item->>'i' FROM t WHERE t.pk = repeat(p, 2048)
	       AND t.sk = repeat('s', 1000) || lpad(i::text, 5, '0')) = i::text}),
	'1200', 'every item is found by its key');

is($node->safe_psql('postgres', q{
	SELECT count(*), count(*) FILTER (WHERE item->>'n' = '30'), (SELECT (v->>'leaf_pages')::int <= 40
	FROM ddb_verify('u') v) FROM u}),
	'20|20|t', 'long-key items updated in place of their dead versions are back, on few leaves');

is($node->safe_psql('postgres', q{
	SELECT count(*), sum((item->>'n')::int),
	       (SELECT item->>'n' FROM w WHERE pk = lpad('41', 2048, 'p') AND sk = lpad('41', 1024, 's')),
	       (SELECT (v->>'live')::int || '/' || (v->>'leaf_pages')::int FROM ddb_verify('w') v) FROM w}),
	'60|400|2|60/60', 'a version moved into an emptied sibling under a shorter prefix is back, on no new leaf');
$node->safe_psql('postgres', q{UPDATE w SET item = item || '{"n": 3}' WHERE pk = lpad('41', 2048, 'p')});
is($node->safe_psql('postgres', q{
	SELECT (SELECT item->>'n' FROM w WHERE pk = lpad('41', 2048, 'p')), (ddb_verify('w')->>'live')::int}),
	'3|60', 'and is updated again after recovery');

# and the recovered tree takes more of the same
$node->safe_psql('postgres', sprintf($load, "'U'", 'i DESC'));
is($node->safe_psql('postgres', q{SELECT (ddb_verify('t')->>'live')::int}), '1600',
	'inserts after recovery verify');

$node->stop;
done_testing();
