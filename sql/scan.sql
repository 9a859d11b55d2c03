-- Scan: DynamoDB's read of a whole table in hash order, with filter,
-- projection, Limit, 1 MB pages, exclusive start keys and parallel
-- segments.  ddb_scan streams every item; ddb_scan_page returns one page.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

-- 2000 items in 200 partitions.
CREATE TABLE inv ("PK" text, "SK" numeric, item jsonb) USING ddb;
INSERT INTO inv SELECT 'P#' || (i % 200), i / 200,
       jsonb_build_object('i', i, 'even', i % 2 = 0, 'tags', jsonb_build_object('a', i % 3, 'b', ARRAY[i, -i]))
FROM generate_series(0, 1999) i;

-- A Scan returns every item once, in the tree's order: hash of the
-- partition key, then partition key, then sort key.
SELECT count(*), count(DISTINCT (x->>'PK', x->>'SK')), sum((x->>'i')::int) = 1999000 AS all_items
FROM ddb_scan('inv') x;
SELECT bool_and(ok) AS in_key_order FROM (
  SELECT ddb_key_bytes(x->>'PK', (x->>'SK')::numeric)
           > lag(ddb_key_bytes(x->>'PK', (x->>'SK')::numeric)) OVER (ORDER BY o) AS ok
  FROM ddb_scan('inv') WITH ORDINALITY AS s(x, o)) s WHERE ok IS NOT NULL;

-- Segments partition the table exactly: for 1, 3 and 7 segments, every
-- item is in exactly one segment, and each segment holds the items whose
-- partition-key hash lies in its slice [s * 2^32 / T, (s + 1) * 2^32 / T).
SELECT t AS total_segments, count(*) AS items,
       count(DISTINCT (x->>'PK', x->>'SK')) AS distinct_items,
       bool_and(ddb_hash32(x->>'PK') >= floor(s * 2^32 / t)
                AND ddb_hash32(x->>'PK') < floor((s + 1) * 2^32 / t)) AS in_own_slice,
       count(DISTINCT s) AS nonempty_segments
FROM (VALUES (1), (3), (7)) v(t), generate_series(0, t - 1) s,
     ddb_scan('inv', segment => s, total_segments => t) x
GROUP BY t ORDER BY t;
-- The segments in order, concatenated, are the whole scan.
SELECT array_agg(x ORDER BY s, o) = ARRAY(SELECT x FROM ddb_scan('inv') x) AS concatenation_is_scan
FROM generate_series(0, 6) s, ddb_scan('inv', segment => s, total_segments => 7) WITH ORDINALITY AS q(x, o);
-- The most segments DynamoDB allows: the slices are then tiny, still exact.
SELECT count(*) AS items FROM generate_series(0, 999999, 1000) s,
  ddb_scan('inv', segment => s, total_segments => 1000000) x;
SELECT count(*) AS last_segment_items FROM ddb_scan('inv', segment => 999999, total_segments => 1000000);

-- Filter and projection; Count is what matched, ScannedCount what was read.
SELECT ddb_scan_page('inv', '#i < :n AND #t.a = :z', '{":n": 40, ":z": 0}', '{"#i": "i", "#t": "tags"}',
                     projection => '#i, #t.b[1]');
SELECT ddb_scan_page('inv', '#i < :n', '{":n": 40}', '{"#i": "i"}', projection => 'PK', "limit" => 5);
-- Scan's filter may name key attributes (unlike Query's).
SELECT count(*) FROM ddb_scan('inv', 'PK = :p AND SK >= :s', '{":p": "P#7", ":s": 5}');

-- Pagination visits every item exactly once, with and without a filter,
-- with and without segments.
CREATE FUNCTION scan_all(tbl regclass, filter text DEFAULT NULL, vals jsonb DEFAULT NULL,
                         lim integer DEFAULT NULL, seg integer DEFAULT NULL, total integer DEFAULT NULL)
RETURNS TABLE (pages integer, scanned bigint, items jsonb[])
LANGUAGE plpgsql AS $$
DECLARE
  page jsonb;
  start jsonb := NULL;
BEGIN
  pages := 0; scanned := 0; items := '{}';
  LOOP
    page := ddb_scan_page(tbl, filter, vals, segment => seg, total_segments => total,
                          "limit" => lim, start_key => start);
    pages := pages + 1;
    scanned := scanned + (page->>'ScannedCount')::bigint;
    items := items || ARRAY(SELECT jsonb_array_elements(page->'Items'));
    start := page->'LastEvaluatedKey';
    EXIT WHEN start IS NULL;
  END LOOP;
  RETURN NEXT;
END $$;
SELECT lim, seg, total, pages, scanned, cardinality(items) AS n,
       (SELECT count(DISTINCT (i->>'PK', i->>'SK')) FROM unnest(items) i) AS distinct_n,
       items = ARRAY(SELECT x FROM ddb_scan('inv', filter, vals, segment => seg, total_segments => total) x)
         AS same_as_stream
FROM (VALUES (NULL::text, NULL::jsonb, 97, NULL::int, NULL::int),
             ('even = :t', '{":t": true}', 97, NULL, NULL),
             (NULL, NULL, 50, 2, 3),
             ('even = :t', '{":t": false}', 13, 6, 7),
             (NULL, NULL, NULL, NULL, NULL)) AS a(filter, vals, lim, seg, total),
     scan_all('inv', filter, vals, lim, seg, total);

-- 1 MB pages: a table of 1.5 MB of items takes two pages without a limit.
CREATE TABLE big ("PK" text, item jsonb) USING ddb;
INSERT INTO big SELECT 'K' || i, jsonb_build_object('pad', repeat('y', 1000)) FROM generate_series(1, 1500) i;
SELECT pages, scanned, cardinality(items) AS n FROM scan_all('big');
SELECT (p->>'ScannedCount')::int AS first_page, p ? 'LastEvaluatedKey' AS has_last_key
FROM ddb_scan_page('big') p;
-- The streamed form has no 1 MB cut; its limit caps the whole stream.
SELECT count(*) FROM ddb_scan('big');
SELECT count(*) FROM ddb_scan('big', "limit" => 1234);

-- An exclusive start key resumes right after that key (it need not exist).
SELECT (SELECT x FROM ddb_scan('inv', "limit" => 1, start_key => p->'LastEvaluatedKey') x)
       = (SELECT x FROM ddb_scan('inv') WITH ORDINALITY AS s(x, o) WHERE o = 11) AS resumes_after
FROM ddb_scan_page('inv', "limit" => 10) p;

-- An empty table (no pages at all yet) scans as an empty page.
CREATE TABLE empty ("PK" text, item jsonb) USING ddb;
SELECT ddb_scan_page('empty'), ddb_scan_page('empty', segment => 1, total_segments => 2);

-- Stopping a streamed Scan early (LIMIT in the caller) ends it cleanly.
SELECT count(*) FROM (SELECT ddb_scan('inv') LIMIT 3) s;

-- Errors.
-- Limit, Segment and TotalSegments: ranges, and both or neither
SELECT ddb_scan_page('inv', "limit" => 0);
SELECT ddb_scan_page('inv', segment => 0);
SELECT ddb_scan_page('inv', total_segments => 2);
SELECT ddb_scan_page('inv', segment => -1, total_segments => 2);
SELECT ddb_scan_page('inv', segment => 2, total_segments => 2);
SELECT ddb_scan_page('inv', segment => 0, total_segments => 0);
SELECT ddb_scan_page('inv', segment => 0, total_segments => 1000001);
SELECT ddb_scan_page('inv', segment => 1000000, total_segments => 1000000);
-- several broken at once are listed together, as over the protocol
SELECT ddb_scan_page('inv', "limit" => 0, segment => -1, total_segments => 0);
-- malformed start keys, and one outside the requested segment
SELECT ddb_scan_page('inv', start_key => '[]');
SELECT ddb_scan_page('inv', start_key => '{"PK": "P#1"}');
SELECT ddb_scan_page('inv', start_key => '{"PK": "P#1", "SK": "1"}');
SELECT ddb_scan_page('inv', segment => s, total_segments => 2,
                     start_key => '{"PK": "P#1", "SK": 1}')
FROM generate_series(0, 1) s WHERE (ddb_hash32('P#1') < 2147483648) = (s = 1);
-- a filter that does not parse; an unused value; an unknown index
SELECT ddb_scan_page('inv', 'i >');
SELECT ddb_scan_page('inv', vals => '{":x": 1}');
SELECT * FROM ddb_scan('inv', index_name => 'ByStatus');

-- A SCROLL cursor over a sequential scan moves both ways, as on heap:
-- backward from the row fetched last, across leaves, and back from either
-- end.  scroll_walk fetches at random offsets and checks each row against
-- the forward order; FIRST and ABSOLUTE rewind the scan.
BEGIN;
DECLARE inv_c SCROLL CURSOR FOR SELECT "PK", "SK" FROM inv;
FETCH 2 FROM inv_c;
FETCH BACKWARD 1 FROM inv_c;
FETCH BACKWARD 1 FROM inv_c;
FETCH NEXT FROM inv_c;
MOVE LAST IN inv_c;
FETCH BACKWARD 2 FROM inv_c;
FETCH FORWARD 5 FROM inv_c;
FETCH PRIOR FROM inv_c;
CLOSE inv_c;
COMMIT;
CREATE FUNCTION scroll_walk(steps int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  keys text[] := ARRAY(SELECT "PK" || '/' || "SK" FROM inv);
  n int := array_length(keys, 1);
  pos int := 0;					-- 0: before the first row, n + 1: after the last
  c refcursor := 'inv_walk';
  k text;
  step int;
  kind int;
BEGIN
  PERFORM setseed(0.25);
  OPEN c SCROLL FOR SELECT "PK" || '/' || "SK" FROM inv;
  FOR i IN 1 .. steps LOOP
    kind := (random() * 9)::int;
    IF kind = 0 THEN
      FETCH FIRST FROM c INTO k; pos := 1;
    ELSIF kind = 1 THEN
      step := 1 + (random() * (n - 1))::int;
      FETCH ABSOLUTE step FROM c INTO k; pos := step;
    ELSIF kind = 2 THEN
      FETCH LAST FROM c INTO k; pos := n;
    ELSE
      step := (random() * 1200)::int - 600;
      IF step = 0 THEN step := 1; END IF;
      FETCH RELATIVE step FROM c INTO k;
      pos := greatest(0, least(n + 1, pos + step));
    END IF;
    IF pos BETWEEN 1 AND n THEN
      IF NOT FOUND OR k IS DISTINCT FROM keys[pos] THEN
        RETURN format('step %s: at %s of %s got %s, want %s', i, pos, n, k, keys[pos]);
      END IF;
    ELSIF FOUND THEN
      RETURN format('step %s: off the end (%s) got %s', i, pos, k);
    END IF;
  END LOOP;
  CLOSE c;
  RETURN 'ok';
END $$;
BEGIN;
SELECT scroll_walk(300);
COMMIT;
-- WHERE CURRENT OF names the row a backward fetch returned.
BEGIN;
DECLARE inv_u SCROLL CURSOR FOR SELECT "PK", "SK" FROM inv;
MOVE FORWARD 700 IN inv_u;
FETCH BACKWARD 1 FROM inv_u \gset cur_
UPDATE inv SET item = item || '{"moved": true}' WHERE CURRENT OF inv_u RETURNING item ? 'moved' AS moved;
SELECT "PK" = :'cur_PK' AND "SK" = :'cur_SK' AS same_row FROM inv WHERE item ? 'moved';
ROLLBACK;
DROP FUNCTION scroll_walk(int);

-- Privileges: SELECT on the table; no row-level security.
CREATE ROLE ddb_scan_nobody;
GRANT USAGE ON SCHEMA public TO ddb_scan_nobody;
SET ROLE ddb_scan_nobody;
SELECT * FROM ddb_scan('inv');
RESET ROLE;
GRANT SELECT ON inv TO ddb_scan_nobody;
ALTER TABLE inv ENABLE ROW LEVEL SECURITY;
SET ROLE ddb_scan_nobody;
SELECT * FROM ddb_scan('inv');
RESET ROLE;
ALTER TABLE inv DISABLE ROW LEVEL SECURITY;
SET ROLE ddb_scan_nobody;
SELECT (ddb_scan_page('inv', "limit" => 1))->'Count' AS count_with_select;
RESET ROLE;
REVOKE ALL ON inv FROM ddb_scan_nobody;
REVOKE USAGE ON SCHEMA public FROM ddb_scan_nobody;
DROP ROLE ddb_scan_nobody;

DROP TABLE inv, big, empty;
DROP FUNCTION scan_all;
