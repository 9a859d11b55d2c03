# Differential stress test with readers: clients write a ddb table that has
# a local and a global secondary index, a TTL attribute and a stream,
# through PutItem, UpdateItem, DeleteItem, BatchWriteItem,
# TransactWriteItems and plain SQL, and make the same change to a heap
# table in the same transaction, while other clients VACUUM and read.  A
# reader compares, inside one REPEATABLE READ snapshot, what ddb returns
# with what the heap holds: a partition through Query (both directions), a
# sort-key range through SQL's key scan, the partition through the local
# index and one value of the global index.  Writers split and prune leaves
# under the readers all the time, so this checks that every read path sees
# exactly its snapshot.  Afterwards the tables must be equal, ddb_verify
# and ddb_verify_gsi clean, and the stream must tell each key's history:
# every record's old image is the key's previous record's new image, its
# event name agrees with the images, and the last new image of each key is
# the heap's row (no record: no row).
#
# Then the same mix runs again and the server is crashed in the middle
# of it: after recovery every check above must hold again.  test/run.sh
# runs this file with Generic WAL and again with ddb's own records
# (DdbWal.pm).
#
# The comparisons are oracles; each is first fed a real difference (a row
# the heap has and ddb does not) and must report it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DdbPgbench;
use DdbWal;

my $node = PostgreSQL::Test::Cluster->new('snapshot_stress');
$node->init;
$node->append_conf('postgresql.conf', "max_connections = 40\n"
	# (the test's own VACUUMs must find no other snapshot: an autovacuum
	# ANALYZE's would keep versions it expects gone)
	. "autovacuum = off\n");
DdbWal::configure($node);
$node->start;
DdbWal::check_mode($node);
$node->safe_psql('postgres', q{
	CREATE EXTENSION ddb;
	SELECT ddb_create_table('adv', 'PK', 'S', 'SK', 'S', '[
	  {"IndexName": "ByV",
	   "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"},
	                 {"AttributeName": "v", "KeyType": "RANGE", "AttributeType": "N"}],
	   "Projection": {"ProjectionType": "ALL"}}]');
	SELECT ddb_create_gsi('adv', 'ByG', 'g', 'S', 'v', 'N');
	SELECT ddb_update_time_to_live('adv', 'exp', true);
	SELECT ddb_update_stream('adv', 'NEW_AND_OLD_IMAGES');
	CREATE TABLE h ("PK" text, "SK" text, item jsonb, PRIMARY KEY ("PK", "SK"));

	-- The views a reader compares; what = 'all' or one view's name.
	CREATE FUNCTION adv_check(p int, g int, what text DEFAULT 'all') RETURNS void
	LANGUAGE plpgsql AS $$
	DECLARE
	  pk text := 'P' || p;
	  a jsonb;
	  b jsonb;
	BEGIN
	  IF what IN ('all', 'query') THEN
	    SELECT coalesce(jsonb_agg(x ORDER BY x ->> 'SK'), '[]') INTO a
	      FROM ddb_query('adv', 'PK = :p', jsonb_build_object(':p', pk)) x;
	    SELECT coalesce(jsonb_agg(item || jsonb_build_object('PK', "PK", 'SK', "SK") ORDER BY "SK"), '[]') INTO b
	      FROM h WHERE "PK" = pk;
	    IF a IS DISTINCT FROM b THEN
	      RAISE EXCEPTION 'query of % differs: ddb % heap %', pk, a, b;
	    END IF;
	    -- backward, in ddb's order: the same items reversed
	    SELECT coalesce(jsonb_agg(x ->> 'SK' ORDER BY o DESC), '[]') INTO a
	      FROM ddb_query('adv', 'PK = :p', jsonb_build_object(':p', pk), forward => false)
	           WITH ORDINALITY AS q(x, o);
	    SELECT coalesce(jsonb_agg(x ->> 'SK' ORDER BY o), '[]') INTO b
	      FROM ddb_query('adv', 'PK = :p', jsonb_build_object(':p', pk))
	           WITH ORDINALITY AS q(x, o);
	    IF a IS DISTINCT FROM b THEN
	      RAISE EXCEPTION 'backward query of % differs: % against %', pk, a, b;
	    END IF;
	  END IF;
	  IF what IN ('all', 'range') THEN
	    SELECT coalesce(jsonb_agg(jsonb_build_array("SK", item) ORDER BY "SK"), '[]') INTO a
	      FROM adv WHERE "PK" = pk AND "SK" BETWEEN 'S10' AND 'S30';
	    SELECT coalesce(jsonb_agg(jsonb_build_array("SK", item) ORDER BY "SK"), '[]') INTO b
	      FROM h WHERE "PK" = pk AND "SK" BETWEEN 'S10' AND 'S30';
	    IF a IS DISTINCT FROM b THEN
	      RAISE EXCEPTION 'key scan range of % differs: ddb % heap %', pk, a, b;
	    END IF;
	  END IF;
	  IF what IN ('all', 'lsi') THEN
	    SELECT coalesce(jsonb_agg(x ORDER BY x ->> 'SK'), '[]') INTO a
	      FROM ddb_query('adv', 'PK = :p', jsonb_build_object(':p', pk), index_name => 'ByV') x;
	    SELECT coalesce(jsonb_agg(item || jsonb_build_object('PK', "PK", 'SK', "SK") ORDER BY "SK"), '[]') INTO b
	      FROM h WHERE "PK" = pk AND jsonb_typeof(item -> 'v') = 'number';
	    IF a IS DISTINCT FROM b THEN
	      RAISE EXCEPTION 'local index query of % differs: ddb % heap %', pk, a, b;
	    END IF;
	  END IF;
	  IF what IN ('all', 'gsi') THEN
	    SELECT coalesce(jsonb_agg(x ORDER BY x ->> 'PK', x ->> 'SK'), '[]') INTO a
	      FROM ddb_query('adv', 'g = :g', jsonb_build_object(':g', 'G' || g), index_name => 'ByG') x;
	    SELECT coalesce(jsonb_agg(item || jsonb_build_object('PK', "PK", 'SK', "SK") ORDER BY "PK", "SK"), '[]') INTO b
	      FROM h WHERE item ->> 'g' = 'G' || g AND jsonb_typeof(item -> 'v') = 'number';
	    IF a IS DISTINCT FROM b THEN
	      RAISE EXCEPTION 'global index query of G% differs: ddb % heap %', g, a, b;
	    END IF;
	  END IF;
	END $$;

	-- The stream against the heap: the number of keys whose history is
	-- wrong (a broken chain of images, an event name that disagrees with
	-- them, a last image that is not the heap's row).  lose: leave out
	-- the lose-th MODIFY record read (the oracle's own test).
	CREATE FUNCTION adv_stream_check(lose int DEFAULT NULL) RETURNS bigint
	LANGUAGE plpgsql AS $$
	DECLARE
	  last text;
	  n int;
	  bad bigint;
	BEGIN
	  CREATE TEMP TABLE recs (seq text, pk text, sk text, ev text, old jsonb, new jsonb) ON COMMIT DROP;
	  LOOP
	    INSERT INTO recs
	      SELECT r -> 'dynamodb' ->> 'SequenceNumber', r -> 'dynamodb' -> 'Keys' ->> 'PK',
	             r -> 'dynamodb' -> 'Keys' ->> 'SK', r ->> 'eventName',
	             r -> 'dynamodb' -> 'OldImage', r -> 'dynamodb' -> 'NewImage'
	        FROM ddb_stream_records('adv', after_sequence_number => last) r;
	    GET DIAGNOSTICS n = ROW_COUNT;
	    EXIT WHEN n = 0;
	    SELECT max(seq) INTO last FROM recs;
	  END LOOP;
	  IF lose IS NOT NULL THEN
	    DELETE FROM recs WHERE seq = (SELECT seq FROM recs WHERE ev = 'MODIFY' ORDER BY seq OFFSET lose LIMIT 1);
	  END IF;
	  SELECT count(*) INTO bad FROM (
	    SELECT pk, sk FROM (
	      SELECT pk, sk, ev, old, new, lag(new) OVER w AS prev,
	             row_number() OVER w = count(*) OVER (PARTITION BY pk, sk) AS is_last
	        FROM recs WINDOW w AS (PARTITION BY pk, sk ORDER BY seq)) x
	      LEFT JOIN h ON h."PK" = x.pk AND h."SK" = x.sk
	     WHERE prev IS DISTINCT FROM old
	        OR ev <> CASE WHEN old IS NULL THEN 'INSERT' WHEN new IS NULL THEN 'REMOVE' ELSE 'MODIFY' END
	        OR (is_last AND new IS DISTINCT FROM h.item || jsonb_build_object('PK', h."PK", 'SK', h."SK"))
	    UNION
	    SELECT "PK", "SK" FROM h WHERE NOT EXISTS (SELECT FROM recs WHERE pk = "PK" AND sk = "SK")) k;
	  DROP TABLE recs;
	  RETURN bad;
	END $$;
});

# The oracle: a row only the heap has is reported by each view.
$node->safe_psql('postgres',
	q{INSERT INTO h VALUES ('P1', 'S20', '{"v": 5, "g": "G1"}')});
for my $what (qw(query range lsi gsi))
{
	my ($rc, $out, $err) = $node->psql('postgres',
		"BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT adv_check(1, 1, '$what'); COMMIT;");
	like($err, qr/differs/, "the $what comparison reports a real difference");
}
is($node->safe_psql('postgres', q{SELECT adv_stream_check()}), '1',
	'the stream comparison reports a key the heap has and the stream never wrote');
$node->safe_psql('postgres', q{DELETE FROM h});
is($node->psql('postgres', q{SELECT adv_check(1, 1)}), 0, 'equal tables compare equal');

# 10 partitions x 40 sort keys, items up to ~700 bytes: leaves split and
# prune all the time.  Each write transaction takes advisory locks on its
# keys first, in ascending order (see 007_stress.pl for why).  pgbench
# replaces :name everywhere, string literals included, so the expressions'
# placeholders are spelled ':' || 'name'.  An item's
# g is one of 8 values or absent (the global index is sparse), v is a
# number or absent (so is the local index), exp a time far ahead (the TTL
# index holds it; nothing expires).
my $item = q{jsonb_build_object('v', :v, 'pad', repeat('x', :v % 700), 'exp', 4102444800 + :v)
  || CASE WHEN :v % 3 = 0 THEN '{}' ELSE jsonb_build_object('g', 'G' || (:v % 8 + 1)) END};
my %scripts = (
	'put' => qq{
\\set p random(1, 10)
\\set s random(1, 40)
\\set v random(1, 1000000)
BEGIN;
SELECT pg_advisory_xact_lock(:p * 100 + :s);
SELECT ddb_put_item('adv', jsonb_build_object('PK', 'P' || :p, 'SK', 'S' || :s) || $item);
INSERT INTO h VALUES ('P' || :p, 'S' || :s, $item)
  ON CONFLICT ("PK", "SK") DO UPDATE SET item = excluded.item;
END;
},
	'update' => q{
\set p random(1, 10)
\set s random(1, 40)
\set v random(1, 1000000)
BEGIN;
SELECT pg_advisory_xact_lock(:p * 100 + :s);
SELECT ddb_update_item('adv', jsonb_build_object('PK', 'P' || :p, 'SK', 'S' || :s),
  CASE WHEN :v % 4 = 0 THEN 'REMOVE g, v' ELSE 'SET g = :' || 'ng, v = :' || 'nv ADD n :' || 'one' END,
  vals => CASE WHEN :v % 4 = 0 THEN NULL
               ELSE jsonb_build_object(':' || 'ng', 'G' || (:v % 8 + 1), ':' || 'nv', :v, ':' || 'one', 1) END);
INSERT INTO h VALUES ('P' || :p, 'S' || :s,
  CASE WHEN :v % 4 = 0 THEN '{}' ELSE jsonb_build_object('g', 'G' || (:v % 8 + 1), 'v', :v, 'n', 1) END)
  ON CONFLICT ("PK", "SK") DO UPDATE SET item =
  CASE WHEN :v % 4 = 0 THEN h.item - 'g' - 'v'
       ELSE h.item || jsonb_build_object('g', 'G' || (:v % 8 + 1), 'v', :v,
                                         'n', coalesce((h.item ->> 'n')::int, 0) + 1) END;
END;
},
	'delete' => q{
\set p random(1, 10)
\set s random(1, 40)
BEGIN;
SELECT pg_advisory_xact_lock(:p * 100 + :s);
SELECT ddb_delete_item('adv', jsonb_build_object('PK', 'P' || :p, 'SK', 'S' || :s));
DELETE FROM h WHERE "PK" = 'P' || :p AND "SK" = 'S' || :s;
END;
},
	# plain SQL through the key scan: the triggers keep the indexes
	'sql' => q{
\set p random(1, 10)
\set s random(1, 40)
\set v random(1, 1000000)
BEGIN;
SELECT pg_advisory_xact_lock(:p * 100 + k) FROM generate_series(:s, least(:s + 1, 40)) k;
UPDATE adv SET item = item || jsonb_build_object('v', :v, 'sql', true) WHERE "PK" = 'P' || :p AND "SK" = 'S' || :s;
UPDATE h SET item = item || jsonb_build_object('v', :v, 'sql', true) WHERE "PK" = 'P' || :p AND "SK" = 'S' || :s;
DELETE FROM adv WHERE "PK" = 'P' || :p AND "SK" = 'S' || (:s % 40 + 1) AND :v % 5 = 0 AND :s < 40;
DELETE FROM h WHERE "PK" = 'P' || :p AND "SK" = 'S' || (:s % 40 + 1) AND :v % 5 = 0 AND :s < 40;
END;
},
	# a put, an update and a delete of three neighbouring keys, in one
	# TransactWriteItems
	'transact' => q{
\set p random(1, 10)
\set s random(1, 38)
\set v random(1, 1000000)
BEGIN;
SELECT pg_advisory_xact_lock(:p * 100 + s) FROM generate_series(:s, :s + 2) s;
SELECT ddb_transact_write_items(jsonb_build_array(
  jsonb_build_object('Put', jsonb_build_object('TableName', 'adv',
    'Item', jsonb_build_object('PK', 'P' || :p, 'SK', 'S' || :s, 'v', :v, 'g', 'G' || (:v % 8 + 1)))),
  jsonb_build_object('Update', jsonb_build_object('TableName', 'adv',
    'Key', jsonb_build_object('PK', 'P' || :p, 'SK', 'S' || (:s + 1)),
    'UpdateExpression', 'ADD n :one', 'ExpressionAttributeValues', jsonb_build_object(':' || 'one', 1))),
  jsonb_build_object('Delete', jsonb_build_object('TableName', 'adv',
    'Key', jsonb_build_object('PK', 'P' || :p, 'SK', 'S' || (:s + 2))))));
INSERT INTO h VALUES ('P' || :p, 'S' || :s, jsonb_build_object('v', :v, 'g', 'G' || (:v % 8 + 1)))
  ON CONFLICT ("PK", "SK") DO UPDATE SET item = excluded.item;
INSERT INTO h VALUES ('P' || :p, 'S' || (:s + 1), '{"n": 1}')
  ON CONFLICT ("PK", "SK") DO UPDATE SET item = h.item || jsonb_build_object('n', coalesce((h.item ->> 'n')::int, 0) + 1);
DELETE FROM h WHERE "PK" = 'P' || :p AND "SK" = 'S' || (:s + 2);
END;
},
	'batch' => qq{
\\set p random(1, 10)
\\set s random(1, 36)
\\set v random(1, 1000000)
BEGIN;
SELECT pg_advisory_xact_lock(:p * 100 + s) FROM generate_series(:s, :s + 4) s;
SELECT ddb_batch_write_item(jsonb_build_object('adv', (SELECT jsonb_agg(jsonb_build_object('PutRequest',
  jsonb_build_object('Item', jsonb_build_object('PK', 'P' || :p, 'SK', 'S' || s, 'v', :v + s, 'pad', repeat('y', (:v + s) % 500)))))
  FROM generate_series(:s, :s + 4) s)));
INSERT INTO h SELECT 'P' || :p, 'S' || s, jsonb_build_object('v', :v + s, 'pad', repeat('y', (:v + s) % 500))
  FROM generate_series(:s, :s + 4) s
  ON CONFLICT ("PK", "SK") DO UPDATE SET item = excluded.item;
END;
},
	'read' => q{
\set p random(1, 10)
\set g random(1, 8)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT adv_check(:p, :g);
END;
},
	'vacuum' => q{
VACUUM adv;
},
);
my %weight = (put => 3, update => 3, delete => 1, sql => 2, transact => 1, batch => 1, read => 4, vacuum => 1);
my ($ok, $stdout, $stderr) = DdbPgbench::run($node, \%scripts, \%weight,
	clients => 6, transactions => 600);
ok($ok, 'pgbench ran without client errors (every reader saw its snapshot)');
like($stdout, qr/number of failed transactions: 0/, 'no transaction failed');
diag($stderr) unless $ok;

my $diff = q{SELECT (SELECT count(*) FROM (SELECT * FROM adv EXCEPT SELECT * FROM h) a) +
                    (SELECT count(*) FROM (SELECT * FROM h EXCEPT SELECT * FROM adv) b)};

# Everything a reader can compare, with nobody writing.
sub check_all
{
	my ($label, $crashed) = @_;
	is($node->safe_psql('postgres', $diff), '0', "$label: ddb table equals the heap table");
	is($node->psql('postgres', 'SELECT adv_check(p, g) FROM generate_series(1, 10) p, generate_series(1, 8) g'), 0,
		"$label: every view equals the heap");
	is($node->safe_psql('postgres', q{SELECT adv_stream_check()}), '0',
		"$label: the stream tells every key's history, in order, ending at its row");
	my $orphans = $node->safe_psql('postgres', q{SELECT ddb_verify('adv') ->> 'orphan_map_entries'});
	# (a crash between a prune and its map clear may leave some)
	if ($crashed)
	{
		like($orphans, qr/^\d+$/, "$label: ddb_verify is clean");
	}
	else
	{
		is($orphans, '0', "$label: ddb_verify is clean, and every row-id map entry has its version");
	}
	is($node->safe_psql('postgres', q{SELECT ddb_verify_gsi('adv') IS NOT NULL}), 't',
		"$label: ddb_verify_gsi is clean");
}

check_all('after the run');
cmp_ok($node->safe_psql('postgres', 'SELECT count(*) FROM adv'), '>', 100, 'a good share of keys exist');
# the stream comparison reports a record missing from the middle of a
# key's history (the check is told to drop one from what it reads)
is($node->safe_psql('postgres', q{SELECT adv_stream_check(lose => 100) > 0}), 't',
	'the stream comparison reports a lost record');
cmp_ok($node->safe_psql('postgres', q{SELECT count(*) FROM ddb_stream_records('adv', "limit" => 1000)}),
	'==', 1000, 'the stream holds more than one page of records');
$node->safe_psql('postgres', 'VACUUM adv');
is($node->safe_psql('postgres', $diff), '0', 'still equal after VACUUM');
is($node->safe_psql('postgres', q{SELECT ddb_verify_gsi('adv') IS NOT NULL}), 't', 'ddb_verify_gsi is still clean');
is($node->safe_psql('postgres', q{SELECT (v->>'items') = (v->>'live') FROM ddb_verify('adv') v}), 't',
	'VACUUM left only live versions');

# The same mix again, crashed (immediate stop) in the middle: recovery must
# leave the table, its indexes, its item collections and its stream exactly
# as the committed transactions left the heap.
my ($out, $err) = ('', '');
my $bench = DdbPgbench::start($node, \%scripts, \%weight,
	clients => 6, seconds => 60, seed => 2, out => \$out, err => \$err);
sleep(5);
$node->stop('immediate');
$bench->finish;
like($out . $err, qr/processed: [1-9]|transactions? (actually )?processed/,
	'transactions ran before the crash');
$node->start;
check_all('after a crash', 1);
$node->stop;
done_testing();
