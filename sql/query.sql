-- Query: DynamoDB's read of one partition, in sort-key order, with its
-- key conditions, filter, projection, Limit, 1 MB pages and exclusive start
-- keys.  ddb_query streams every item; ddb_query_page returns one page.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

-- Helpers: the sort keys a Query returns, in order (S and N as text, B as
-- its base64), and the SQLSTATE an expression raises.
CREATE FUNCTION sks(tbl regclass, kc text, vals jsonb, fwd boolean DEFAULT true,
                    lim integer DEFAULT NULL, filter text DEFAULT NULL)
RETURNS text LANGUAGE sql AS $$
  SELECT coalesce(string_agg(coalesce(x->'SK'->>'$B', x->>'SK'), ' ' ORDER BY o), '(none)')
  FROM ddb_query(tbl, kc, vals, filter => filter, forward => fwd, "limit" => lim)
       WITH ORDINALITY AS q(x, o) $$;
CREATE FUNCTION sqlstate_of(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE stmt;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || split_part(SQLERRM, ':', 1);
END $$;

-- A single-table design: a customer's profile and its
-- orders share a partition.  Sort keys that are prefixes of other sort keys
-- (A, AB, ABC) test begins_with at key boundaries.
CREATE TABLE app ("PK" text, "SK" text, item jsonb) USING ddb;
INSERT INTO app VALUES
  ('CUST#1', 'PROFILE', '{"name": "Ann", "address": {"city": "Oslo", "zip": ["0150", "0151"]}}'),
  ('CUST#1', 'ORDER#2024-01-05', '{"total": 30, "status": "SHIPPED", "lines": [{"sku": "a", "qty": 1}, {"sku": "b", "qty": 2}]}'),
  ('CUST#1', 'ORDER#2024-02-11', '{"total": 12, "status": "PENDING", "lines": [{"sku": "c", "qty": 5}]}'),
  ('CUST#1', 'ORDER#2024-03-20', '{"total": 99, "status": "SHIPPED", "lines": []}'),
  ('CUST#1', 'ORDER', '{"note": "a sort key equal to the prefix"}'),
  ('CUST#1', 'ORDERS', '{"note": "not an order: ORDER is a prefix, ORDER# is not"}'),
  ('CUST#2', 'PROFILE', '{"name": "Bob"}'),
  ('CUST#2', 'ORDER#2024-01-01', '{"total": 5, "status": "PENDING"}'),
  ('WORDS', 'A', '{}'), ('WORDS', 'AB', '{}'), ('WORDS', 'ABC', '{}'),
  ('WORDS', 'ABD', '{}'), ('WORDS', 'AC', '{}'), ('WORDS', 'B', '{}'),
  ('WORDS', 'a', '{}'), ('WORDS', 'é', '{}');

-- The partition key alone: the whole partition in sort-key order (UTF-8
-- byte order, as DynamoDB compares strings), and nothing of others.
SELECT sks('app', 'PK = :p', '{":p": "CUST#1"}');
SELECT sks('app', 'PK = :p', '{":p": "WORDS"}');
SELECT sks('app', 'PK = :p', '{":p": "NOBODY"}');
-- Whole items come back with their key attributes.
SELECT x FROM ddb_query('app', '#pk = :p', '{":p": "CUST#2"}', '{"#pk": "PK"}') x;

-- "Customer with orders in one request" and "orders only by prefix".
SELECT sks('app', 'PK = :p AND begins_with(SK, :o)', '{":p": "CUST#1", ":o": "ORDER#"}');
-- begins_with on prefixes that are themselves keys includes that key.
SELECT sks('app', 'PK = :p AND begins_with(SK, :o)', '{":p": "CUST#1", ":o": "ORDER"}');
SELECT sks('app', 'PK = :p AND begins_with(SK, :o)', '{":p": "WORDS", ":o": "A"}');
SELECT sks('app', 'PK = :p AND begins_with(SK, :o)', '{":p": "WORDS", ":o": "AB"}');
SELECT sks('app', 'PK = :p AND begins_with(SK, :o)', '{":p": "WORDS", ":o": "ABC"}');
SELECT sks('app', 'PK = :p AND begins_with(SK, :o)', '{":p": "WORDS", ":o": "ABCD"}');
SELECT sks('app', 'PK = :p AND begins_with(SK, :o)', '{":p": "WORDS", ":o": "Z"}');

-- Every comparison on an S sort key, forward and backward.
SELECT sks('app', 'PK = :p AND SK = :s', '{":p": "WORDS", ":s": "AB"}');
SELECT sks('app', 'PK = :p AND SK = :s', '{":p": "WORDS", ":s": "ABE"}');
SELECT sks('app', 'PK = :p AND SK < :s', '{":p": "WORDS", ":s": "AB"}');
SELECT sks('app', 'PK = :p AND SK <= :s', '{":p": "WORDS", ":s": "AB"}');
SELECT sks('app', 'PK = :p AND SK > :s', '{":p": "WORDS", ":s": "AB"}');
SELECT sks('app', 'PK = :p AND SK >= :s', '{":p": "WORDS", ":s": "AB"}');
SELECT sks('app', 'PK = :p AND SK BETWEEN :a AND :b', '{":p": "WORDS", ":a": "AB", ":b": "AC"}');
SELECT sks('app', 'PK = :p AND SK BETWEEN :a AND :b', '{":p": "WORDS", ":a": "AA", ":b": "ABZ"}');
SELECT sks('app', 'PK = :p AND SK BETWEEN :a AND :b', '{":p": "WORDS", ":a": "B", ":b": "B"}');
SELECT sks('app', 'PK = :p AND SK < :s', '{":p": "WORDS", ":s": "AB"}', false);
SELECT sks('app', 'PK = :p AND SK >= :s', '{":p": "WORDS", ":s": "AB"}', false);
SELECT sks('app', 'PK = :p AND begins_with(SK, :o)', '{":p": "WORDS", ":o": "AB"}', false);
-- The value may come first in a comparison: ":s < SK" is "SK > :s" (each
-- result equals the one of the written-out comparison above).
SELECT sks('app', ':p = PK AND :s = SK', '{":p": "WORDS", ":s": "AB"}');
SELECT sks('app', ':p = PK AND :s > SK', '{":p": "WORDS", ":s": "AB"}');
SELECT sks('app', ':p = PK AND :s >= SK', '{":p": "WORDS", ":s": "AB"}');
SELECT sks('app', ':p = PK AND :s < SK', '{":p": "WORDS", ":s": "AB"}');
SELECT sks('app', ':p = PK AND :s <= SK', '{":p": "WORDS", ":s": "AB"}');
SELECT sks('app', ':s <= SK AND PK = :p', '{":p": "WORDS", ":s": "AB"}', false);
-- Bounds below and above every key of the partition select nothing.
SELECT sks('app', 'PK = :p AND SK < :s', '{":p": "WORDS", ":s": "A"}');
SELECT sks('app', 'PK = :p AND SK > :s', '{":p": "WORDS", ":s": "é"}');

-- "Newest first": the latest order only, read backward with Limit 1.
SELECT x->>'SK' AS latest_order, x->'total' AS total
FROM ddb_query('app', 'PK = :p AND begins_with(SK, :o)', '{":p": "CUST#1", ":o": "ORDER#"}',
               forward => false, "limit" => 1) x;
SELECT ddb_query_page('app', 'PK = :p AND begins_with(SK, :o)', '{":p": "CUST#1", ":o": "ORDER#"}',
                      projection => 'SK, #t', names => '{"#t": "total"}',
                      forward => false, "limit" => 1);
-- "A date range".
SELECT sks('app', 'PK = :p AND SK BETWEEN :a AND :b',
           '{":p": "CUST#1", ":a": "ORDER#2024-01-10", ":b": "ORDER#2024-03-01"}');

-- N sort keys order as numbers: negative, fractional, zero, large.
CREATE TABLE nums ("PK" text, "SK" numeric, item jsonb) USING ddb;
INSERT INTO nums SELECT 'N', v, jsonb_build_object('v', v)
FROM unnest(ARRAY[-1e10, -10, -1.5, -1, 0, 0.001, 1, 1.5, 2, 10, 100, 1e10]::numeric[]) v;
INSERT INTO nums VALUES ('M', 1, '{}');
SELECT sks('nums', 'PK = :p', '{":p": "N"}');
SELECT sks('nums', 'PK = :p', '{":p": "N"}', false);
SELECT sks('nums', 'PK = :p AND SK = :v', '{":p": "N", ":v": 1.50}');
SELECT sks('nums', 'PK = :p AND SK < :v', '{":p": "N", ":v": 0}');
SELECT sks('nums', 'PK = :p AND SK <= :v', '{":p": "N", ":v": 1}');
SELECT sks('nums', 'PK = :p AND SK > :v', '{":p": "N", ":v": 1}');
SELECT sks('nums', 'PK = :p AND SK >= :v', '{":p": "N", ":v": -1}');
SELECT sks('nums', 'PK = :p AND SK BETWEEN :a AND :b', '{":p": "N", ":a": -1.5, ":b": 2}');
SELECT sks('nums', 'PK = :p AND SK BETWEEN :a AND :b', '{":p": "N", ":a": 3, ":b": 9}');

-- B keys (partition and sort) order as unsigned bytes; begins_with works
-- on binary prefixes, a 0x00 byte included.
CREATE TABLE bins ("PK" bytea, "SK" bytea, item jsonb) USING ddb;
INSERT INTO bins SELECT '\x0102', v, '{}'
FROM unnest(ARRAY['\x00', '\x0000', '\x0001', '\x01', '\x0100', '\x7f', '\x80', '\xff', '\xff00']::bytea[]) v;
INSERT INTO bins VALUES ('\x01', '\x00', '{}');
SELECT sks('bins', 'PK = :p', '{":p": {"$B": "AQI="}}');
SELECT sks('bins', 'PK = :p AND SK = :v', '{":p": {"$B": "AQI="}, ":v": {"$B": "AAE="}}');
SELECT sks('bins', 'PK = :p AND SK < :v', '{":p": {"$B": "AQI="}, ":v": {"$B": "AQ=="}}');
SELECT sks('bins', 'PK = :p AND SK <= :v', '{":p": {"$B": "AQI="}, ":v": {"$B": "AQ=="}}');
SELECT sks('bins', 'PK = :p AND SK > :v', '{":p": {"$B": "AQI="}, ":v": {"$B": "fw=="}}');
SELECT sks('bins', 'PK = :p AND SK >= :v', '{":p": {"$B": "AQI="}, ":v": {"$B": "fw=="}}');
SELECT sks('bins', 'PK = :p AND SK BETWEEN :a AND :b', '{":p": {"$B": "AQI="}, ":a": {"$B": "AAA="}, ":b": {"$B": "AQ=="}}');
SELECT sks('bins', 'PK = :p AND begins_with(SK, :v)', '{":p": {"$B": "AQI="}, ":v": {"$B": "AA=="}}');
SELECT sks('bins', 'PK = :p AND begins_with(SK, :v)', '{":p": {"$B": "AQI="}, ":v": {"$B": "/w=="}}', false);

-- A table without a sort key: the partition key condition reads one item.
CREATE TABLE users ("UserId" text, item jsonb) USING ddb;
INSERT INTO users SELECT 'U' || i, jsonb_build_object('n', i) FROM generate_series(1, 50) i;
SELECT x FROM ddb_query('users', 'UserId = :u', '{":u": "U7"}') x;
SELECT ddb_query_page('users', 'UserId = :u', '{":u": "U7"}', "limit" => 1);

-- Hierarchical composite sort keys: each begins_with level narrows the
-- range; the most specific prefix is itself a key.
CREATE TABLE stores ("PK" text, "SK" text, item jsonb) USING ddb;
INSERT INTO stores VALUES
  ('STORES', 'COUNTRY#USA#STATE#CA#CITY#SF', '{"n": 1}'),
  ('STORES', 'COUNTRY#USA#STATE#CA#CITY#SF#STORE#12', '{"n": 2}'),
  ('STORES', 'COUNTRY#USA#STATE#CA#CITY#LA', '{"n": 3}'),
  ('STORES', 'COUNTRY#USA#STATE#NY#CITY#NYC', '{"n": 4}'),
  ('STORES', 'COUNTRY#USA#STATE#CAB#CITY#X', '{"n": 5}'),
  ('STORES', 'COUNTRY#CAN#STATE#ON#CITY#TOR', '{"n": 6}');
SELECT sks('stores', 'PK = :p AND begins_with(SK, :c)', '{":p": "STORES", ":c": "COUNTRY#USA#"}');
SELECT sks('stores', 'PK = :p AND begins_with(SK, :c)', '{":p": "STORES", ":c": "COUNTRY#USA#STATE#CA#"}');
SELECT sks('stores', 'PK = :p AND begins_with(SK, :c)', '{":p": "STORES", ":c": "COUNTRY#USA#STATE#CA#CITY#SF"}');
SELECT sks('stores', 'PK = :p AND begins_with(SK, :c)', '{":p": "STORES", ":c": "COUNTRY#CAN"}');

-- Write sharding: a hot date spread over 4 partitions (DATE#d#0..3) is
-- read back by querying each shard; the shards together hold every item
-- of the date, each once.
CREATE TABLE events ("PK" text, "SK" text, item jsonb) USING ddb;
INSERT INTO events SELECT 'DATE#2024-05-01#' || (i % 4), 'T#' || lpad(i::text, 5, '0'), jsonb_build_object('i', i)
FROM generate_series(1, 1000) i;
INSERT INTO events SELECT 'DATE#2024-05-02#' || (i % 4), 'T#' || lpad(i::text, 5, '0'), jsonb_build_object('i', i)
FROM generate_series(1, 10) i;
SELECT count(*) AS items, count(DISTINCT x->>'SK') AS distinct_items,
       sum((x->>'i')::int) = 500500 AS all_of_them
FROM generate_series(0, 3) shard,
     ddb_query('events', 'PK = :p', jsonb_build_object(':p', 'DATE#2024-05-01#' || shard)) x;
-- ... and merged in time order by the client, as with DynamoDB.
SELECT string_agg(x->>'SK', ' ' ORDER BY x->>'SK') FROM generate_series(0, 3) shard,
  ddb_query('events', 'PK = :p AND SK <= :t', jsonb_build_object(':p', 'DATE#2024-05-01#' || shard, ':t', 'T#00006')) x;

-- A partition that spans many leaf pages: 1200 items of about 1 kB.
CREATE TABLE wide ("PK" text, "SK" numeric, item jsonb) USING ddb;
INSERT INTO wide SELECT 'W', i, jsonb_build_object('pad', repeat('x', 1000), 'odd', i % 2 = 1)
FROM generate_series(1, 1200) i;
INSERT INTO wide SELECT 'V' || i, 1, '{}' FROM generate_series(1, 50) i;
SELECT (v->>'leaf_pages')::int > 100 AS many_leaves FROM ddb_verify('wide') v;
-- BETWEEN across leaf boundaries: exactly the items in the range, in order,
-- forward and backward.
SELECT count(*), min((x->>'SK')::int), max((x->>'SK')::int),
       array_agg((x->>'SK')::int ORDER BY o) = ARRAY(SELECT generate_series(100, 1100)) AS in_order
FROM ddb_query('wide', 'PK = :p AND SK BETWEEN :a AND :b', '{":p": "W", ":a": 100, ":b": 1100}')
     WITH ORDINALITY AS q(x, o);
SELECT count(*),
       array_agg((x->>'SK')::int ORDER BY o) = ARRAY(SELECT generate_series(1100, 100, -1)) AS in_order
FROM ddb_query('wide', 'PK = :p AND SK BETWEEN :a AND :b', '{":p": "W", ":a": 100, ":b": 1100}', forward => false)
     WITH ORDINALITY AS q(x, o);
SELECT sks('wide', 'PK = :p AND SK > :a', '{":p": "W", ":a": 1195}');
SELECT sks('wide', 'PK = :p AND SK < :a', '{":p": "W", ":a": 6}', false);

-- A page ends once the items read reach 1 MB, as DynamoDB counts item
-- size: the first page holds exactly the shortest run of items whose sizes
-- add up to 1 MB, and says where it stopped.
WITH page AS (
  SELECT ddb_query_page('wide', 'PK = :p', '{":p": "W"}', projection => 'SK') AS p
), sizes AS (
  SELECT (x->>'SK')::int AS sk, sum(ddb_item_size(x)) OVER (ORDER BY (x->>'SK')::int) AS running
  FROM ddb_query('wide', 'PK = :p', '{":p": "W"}') x
)
SELECT (p->>'ScannedCount')::int AS scanned, (p->>'Count')::int AS count,
       (SELECT min(sk) FROM sizes WHERE running >= 1048576) AS expected_last,
       p->'LastEvaluatedKey' AS last_evaluated_key
FROM page;
-- The SETOF form streams every page: no 1 MB cut.
SELECT count(*) FROM ddb_query('wide', 'PK = :p', '{":p": "W"}');

-- Pagination: following LastEvaluatedKey visits every item exactly once,
-- forward and backward, with and without a filter, whatever the page size.
CREATE FUNCTION page_all(tbl regclass, kc text, vals jsonb, filter text DEFAULT NULL,
                         fwd boolean DEFAULT true, lim integer DEFAULT NULL)
RETURNS TABLE (pages integer, scanned bigint, matched bigint, items jsonb[])
LANGUAGE plpgsql AS $$
DECLARE
  page jsonb;
  start jsonb := NULL;
BEGIN
  pages := 0; scanned := 0; matched := 0; items := '{}';
  LOOP
    page := ddb_query_page(tbl, kc, vals, filter => filter, forward => fwd,
                           "limit" => lim, start_key => start);
    pages := pages + 1;
    scanned := scanned + (page->>'ScannedCount')::bigint;
    matched := matched + (page->>'Count')::bigint;
    IF jsonb_array_length(page->'Items') <> (page->>'Count')::int THEN
      RAISE EXCEPTION 'Count % but % items', page->'Count', jsonb_array_length(page->'Items');
    END IF;
    items := items || ARRAY(SELECT jsonb_array_elements(page->'Items'));
    start := page->'LastEvaluatedKey';
    EXIT WHEN start IS NULL;
  END LOOP;
  RETURN NEXT;
END $$;
SELECT pages, scanned, matched, cardinality(items) AS n,
       (SELECT count(DISTINCT i->>'SK') FROM unnest(items) i) AS distinct_n,
       items = ARRAY(SELECT x FROM ddb_query(a.tbl, a.kc, a.vals, filter => a.filter, forward => a.fwd) x) AS same_as_stream
FROM (VALUES
  ('wide'::regclass, 'PK = :p', '{":p": "W"}'::jsonb, NULL, true, 7),
  ('wide', 'PK = :p', '{":p": "W"}', NULL, false, 7),
  ('wide', 'PK = :p', '{":p": "W"}', NULL, true, NULL),
  ('wide', 'PK = :p', '{":p": "W"}', NULL, false, NULL),
  ('wide', 'PK = :p', '{":p": "W", ":t": true}', 'odd = :t', true, 50),
  ('wide', 'PK = :p', '{":p": "W", ":t": true}', 'odd = :t', false, 50),
  ('wide', 'PK = :p AND SK BETWEEN :a AND :b', '{":p": "W", ":a": 10, ":b": 20}', NULL, true, 1),
  ('wide', 'PK = :p AND SK BETWEEN :a AND :b', '{":p": "W", ":a": 10, ":b": 20}', NULL, false, 3),
  ('app', 'PK = :p AND begins_with(SK, :o)', '{":p": "WORDS", ":o": "A"}', NULL, true, 2),
  ('app', 'PK = :p AND begins_with(SK, :o)', '{":p": "WORDS", ":o": "A"}', NULL, false, 2),
  ('events', 'PK = :p', '{":p": "DATE#2024-05-01#1", ":x": 3}', 'i > :x', true, 11)
) AS a(tbl, kc, vals, filter, fwd, lim), page_all(a.tbl, a.kc, a.vals, a.filter, a.fwd, a.lim);
-- Limit equal to what is left still returns LastEvaluatedKey (DynamoDB
-- cannot know that nothing follows); the next page is empty and final.
SELECT ddb_query_page('app', 'PK = :p', '{":p": "CUST#2"}', "limit" => 2);
SELECT ddb_query_page('app', 'PK = :p', '{":p": "CUST#2"}', "limit" => 2,
                      start_key => '{"PK": "CUST#2", "SK": "PROFILE"}');
-- A start key need not be an existing item: the page starts after it.
SELECT sks('app', 'PK = :p', '{":p": "WORDS"}') AS all_words,
       (SELECT string_agg(x->>'SK', ' ') FROM ddb_query('app', 'PK = :p', '{":p": "WORDS"}',
          start_key => '{"PK": "WORDS", "SK": "ABA"}') x) AS after_aba,
       (SELECT string_agg(x->>'SK', ' ') FROM ddb_query('app', 'PK = :p', '{":p": "WORDS"}',
          forward => false, start_key => '{"PK": "WORDS", "SK": "ABA"}') x) AS before_aba;

-- Filter and Limit: Limit counts items read, the filter only what is
-- returned; Count is what matched, ScannedCount what was read.  A page of
-- which nothing matched is empty yet still has a LastEvaluatedKey.
SELECT ddb_query_page('app', 'PK = :p', '{":p": "CUST#1", ":s": "SHIPPED"}',
                      filter => '#st = :s', names => '{"#st": "status"}', "limit" => 3);
SELECT ddb_query_page('app', 'PK = :p', '{":p": "CUST#1", ":s": "SHIPPED"}',
                      filter => '#st = :s', names => '{"#st": "status"}', "limit" => 2);
SELECT ddb_query_page('app', 'PK = :p', '{":p": "CUST#1", ":s": "SHIPPED"}',
                      filter => '#st = :s', names => '{"#st": "status"}');
SELECT ddb_query_page('app', 'PK = :p', '{":p": "CUST#1"}',
                      filter => 'attribute_exists(nothing)', "limit" => 2);
-- In the SETOF form the limit caps the items read over the whole stream.
SELECT count(*) FROM ddb_query('app', 'PK = :p', '{":p": "CUST#1", ":s": "SHIPPED"}',
                               filter => '#st = :s', names => '{"#st": "status"}', "limit" => 3);

-- Projection of nested paths (map members, list elements, lists of maps);
-- key attributes project like any other attribute.
SELECT x FROM ddb_query('app', 'PK = :p AND SK = :s', '{":p": "CUST#1", ":s": "PROFILE"}',
                        projection => '#n, address.zip[1], address.#c, nothing.here',
                        names => '{"#n": "name", "#c": "city"}') x;
SELECT x FROM ddb_query('app', 'PK = :p AND begins_with(SK, :o)', '{":p": "CUST#1", ":o": "ORDER#"}',
                        projection => 'SK, #l[0].sku, #l[1].qty', names => '{"#l": "lines"}') x;
SELECT ddb_query_page('app', 'PK = :p AND begins_with(SK, :o)', '{":p": "CUST#1", ":o": "ORDER#", ":t": 20}',
                      projection => '#t', filter => '#t > :t', names => '{"#t": "total"}');

-- A table with two sort-key columns: the key condition names the first;
-- items come in (SK, SK2) order and LastEvaluatedKey names all three keys.
CREATE TABLE two ("PK" text, "SK" text, "SK2" numeric, item jsonb) USING ddb;
INSERT INTO two SELECT 'P', 'S' || (i % 3), i, '{}' FROM generate_series(1, 9) i;
SELECT string_agg((x->>'SK') || '/' || (x->>'SK2'), ' ' ORDER BY o)
FROM ddb_query('two', 'PK = :p AND SK <= :s', '{":p": "P", ":s": "S1"}', forward => false)
     WITH ORDINALITY AS q(x, o);
SELECT ddb_query_page('two', 'PK = :p AND SK = :s', '{":p": "P", ":s": "S1"}', "limit" => 2);
SELECT ddb_query_page('two', 'PK = :p AND SK = :s', '{":p": "P", ":s": "S1"}', "limit" => 2,
                      start_key => '{"PK": "P", "SK": "S1", "SK2": 4}');
-- An empty table (no pages at all yet) answers with an empty page.
CREATE TABLE empty ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT ddb_query_page('empty', 'PK = :p', '{":p": "P"}');

-- Stopping a streamed Query early (LIMIT in the caller) ends it cleanly.
SELECT ddb_query('app', 'PK = :p', '{":p": "CUST#1"}') LIMIT 2;

-- Errors are DynamoDB's, with the error kind's SQLSTATE.
-- no partition key condition, or it is not =
SELECT sks('app', 'SK = :s', '{":s": "A"}');
SELECT sks('app', 'PK > :p', '{":p": "A"}');
SELECT * FROM ddb_query('app', NULL);
-- two sort-key conditions, three conditions, OR, NOT, <>
SELECT sks('app', 'PK = :p AND SK > :a AND SK < :b', '{":p": "WORDS", ":a": "A", ":b": "B"}');
SELECT sks('app', 'SK > :a AND SK < :b', '{":a": "A", ":b": "B"}');
SELECT sks('app', 'PK = :p OR SK = :s', '{":p": "WORDS", ":s": "A"}');
SELECT sks('app', 'PK = :p AND NOT SK = :s', '{":p": "WORDS", ":s": "A"}');
SELECT sks('app', 'PK = :p AND SK <> :s', '{":p": "WORDS", ":s": "A"}');
-- a non-key attribute, a nested path, a table without a sort key
SELECT * FROM ddb_query('app', 'PK = :p AND #t > :t', '{":p": "CUST#1", ":t": 1}', '{"#t": "total"}');
SELECT sks('app', 'PK = :p AND SK.x = :s', '{":p": "CUST#1", ":s": "A"}');
SELECT * FROM ddb_query('users', 'UserId = :u AND SK = :s', '{":u": "U1", ":s": "A"}');
-- values of the wrong type, empty key values, begins_with on a number,
-- BETWEEN with its bounds reversed
SELECT sks('app', 'PK = :p', '{":p": 1}');
SELECT sks('app', 'PK = :p AND SK > :s', '{":p": "WORDS", ":s": 1}');
SELECT sks('nums', 'PK = :p AND SK BETWEEN :a AND :b', '{":p": "N", ":a": 1, ":b": "2"}');
SELECT sks('bins', 'PK = :p', '{":p": "AQI="}');
SELECT sks('app', 'PK = :p', '{":p": ""}');
SELECT sks('app', 'PK = :p AND begins_with(SK, :s)', '{":p": "WORDS", ":s": ""}');
SELECT sks('nums', 'PK = :p AND begins_with(SK, :v)', '{":p": "N", ":v": 1}');
-- a string or binary prefix of a number sort key, a string prefix of a
-- binary one: the value is not of the key's type, as in any comparison
SELECT sks('nums', 'PK = :p AND begins_with(SK, :v)', '{":p": "N", ":v": "1"}');
SELECT sks('nums', 'PK = :p AND begins_with(SK, :v)', '{":p": "N", ":v": {"$B": "AQ=="}}');
SELECT sks('bins', 'PK = :p AND begins_with(SK, :v)', '{":p": {"$B": "AQI="}, ":v": "A"}');
SELECT sks('app', 'PK = :p AND SK BETWEEN :a AND :b', '{":p": "WORDS", ":a": "B", ":b": "A"}');
-- the filter may not name key attributes; unused or missing placeholders
SELECT sks('app', 'PK = :p', '{":p": "CUST#1", ":s": "A"}', filter => 'SK = :s');
SELECT sks('app', 'PK = :p', '{":p": "CUST#1", ":x": 1}');
SELECT sks('app', 'PK = :p AND SK = :s', '{":p": "CUST#1"}');
-- Limit must be at least 1
SELECT ddb_query_page('app', 'PK = :p', '{":p": "CUST#1"}', "limit" => 0);
SELECT * FROM ddb_query('app', 'PK = :p', '{":p": "CUST#1"}', "limit" => -5);
-- malformed start keys: not an object, a key attribute missing, an extra
-- attribute, a wrong type, another partition, outside the sort-key range
SELECT ddb_query_page('app', 'PK = :p', '{":p": "WORDS"}', start_key => '"A"');
SELECT ddb_query_page('app', 'PK = :p', '{":p": "WORDS"}', start_key => '{"PK": "WORDS"}');
SELECT ddb_query_page('app', 'PK = :p', '{":p": "WORDS"}', start_key => '{"PK": "WORDS", "sk": "A"}');
SELECT ddb_query_page('app', 'PK = :p', '{":p": "WORDS"}', start_key => '{"PK": "WORDS", "SK": "A", "x": 1}');
SELECT ddb_query_page('app', 'PK = :p', '{":p": "WORDS"}', start_key => '{"PK": "WORDS", "SK": 1}');
SELECT ddb_query_page('app', 'PK = :p', '{":p": "WORDS"}', start_key => '{"PK": "CUST#1", "SK": "A"}');
SELECT ddb_query_page('app', 'PK = :p AND begins_with(SK, :o)', '{":p": "WORDS", ":o": "A"}',
                      start_key => '{"PK": "WORDS", "SK": "B"}');
SELECT ddb_query_page('app', 'PK = :p AND SK < :s', '{":p": "WORDS", ":s": "AB"}',
                      start_key => '{"PK": "WORDS", "SK": "AB"}');
SELECT ddb_query_page('app', 'PK = :p', '{":p": "WORDS"}', start_key => '{"PK": "WORDS", "SK": ""}');
SELECT ddb_query_page('bins', 'PK = :p', '{":p": {"$B": "AQI="}}', start_key => '{"PK": {"$B": "AQI="}, "SK": "AA=="}');
-- an index the table does not have; something that is not a ddb table
SELECT * FROM ddb_query('app', 'PK = :p', '{":p": "CUST#1"}', index_name => 'GSI1');
CREATE TABLE plain (a int);
SELECT * FROM ddb_query('plain', 'a = :a', '{":a": 1}');
-- the SQLSTATEs: DB001 ValidationException, DB003 ResourceNotFoundException
SELECT sqlstate_of($$SELECT ddb_query_page('app', 'SK = :s', '{":s": "A"}')$$);
SELECT sqlstate_of($$SELECT ddb_query_page('app', 'PK = :p', '{":p": "A"}', "limit" => 0)$$);
SELECT sqlstate_of($$SELECT ddb_query_page('app', 'PK = :p', '{":p": "A"}', start_key => '{}')$$);
SELECT sqlstate_of($$SELECT ddb_query_page('app', 'PK = :p', '{":p": "A"}', index_name => 'i')$$);

-- Privileges: SELECT on the table is needed; a table under row-level
-- security is refused (the API would bypass its policies).
CREATE ROLE ddb_query_nobody;
GRANT USAGE ON SCHEMA public TO ddb_query_nobody;
SET ROLE ddb_query_nobody;
SELECT ddb_query_page('app', 'PK = :p', '{":p": "CUST#1"}');
SELECT * FROM ddb_query('app', 'PK = :p', '{":p": "CUST#1"}');
RESET ROLE;
GRANT SELECT ON app TO ddb_query_nobody;
SET ROLE ddb_query_nobody;
SELECT ddb_query_page('app', 'PK = :p', '{":p": "CUST#2"}', projection => 'SK');
RESET ROLE;
ALTER TABLE app ENABLE ROW LEVEL SECURITY;
CREATE POLICY own ON app USING ("PK" = current_user);
SET ROLE ddb_query_nobody;
SELECT * FROM ddb_query('app', 'PK = :p', '{":p": "CUST#1"}');
RESET ROLE;
ALTER TABLE app DISABLE ROW LEVEL SECURITY;
DROP POLICY own ON app;
REVOKE ALL ON app FROM ddb_query_nobody;
REVOKE USAGE ON SCHEMA public FROM ddb_query_nobody;
DROP ROLE ddb_query_nobody;

DROP TABLE app, nums, bins, users, stores, events, wide, plain, two, empty;
DROP FUNCTION sks, sqlstate_of, page_all;
