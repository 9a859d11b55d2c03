-- Query and Scan in FROM (issue 19): a function scan keeps every row in a
-- tuplestore, so ddb_query and ddb_scan called there write each item once,
-- straight into the tuple the store keeps (materialize mode), while in a
-- select list they still return one item per call (and stop when the
-- caller stops).  String keys are copied into the item as they are stored,
-- number and binary keys decoded.  This proves both forms return the same
-- items, byte for byte, as PostgreSQL's own jsonb operators make them from
-- the rows, for key strings of every kind, every attribute type, items
-- shorter and longer than a short varlena, projections, filters, limits,
-- start keys, both directions, indexes, Scan segments, and the function
-- scan's own features: WITH ORDINALITY, ROWS FROM, LATERAL rescans,
-- scrollable cursors.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
CREATE SCHEMA items_in_from;
SET ddb.schema = items_in_from;
SET search_path = items_in_from, public;

-- String keys: names that sort before and after the item's attributes,
-- values with quotes, backslashes, control characters, non-ASCII, and one
-- longer than 127 bytes; attributes of every type.
SELECT ddb_create_table('Strs', 'P', 'S', 'SortKeyName', 'S') IS NOT NULL AS created;
SELECT ddb_put_item('Strs', jsonb_build_object('P', 'part "1" \ é☃', 'SortKeyName', k) || v, NULL) IS NULL AS put
FROM (VALUES
  ('a', '{}'::jsonb),
  ('b quote " backslash \ tab' || chr(9) || 'end', '{"A": 1, "Zz": "x", "SortKeyNamf": true}'),
  ('c ☃ snow', '{"n": 1.5e-30, "neg": -12345678901234567890, "zero": 0, "t": true, "f": false, "nul": null}'),
  ('d ' || repeat('long ', 40), '{"m": {"a": [1, {"b": {"$B": "AAEC"}}], "e": {}}, "l": [[], {}, "s"],
     "b": {"$B": "3q2+7w=="}, "ss": {"$SS": ["x", "y"]}, "ns": {"$NS": [1, 2.5]}, "bs": {"$BS": ["AQ==", "Ag=="]}}'),
  ('e empty string value', '{"s": "", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa": "a name longer than the keys"}')
) AS v(k, v);
INSERT INTO "Strs" VALUES ('part "1" \ é☃', 'f from SQL', '{"x": [1, 2, 3]}');
-- 100 attributes: more pairs than the writer keeps on its stack, and
-- several of jsonb's offset strides
SELECT ddb_put_item('Strs', (SELECT jsonb_object_agg('a' || i, CASE WHEN i % 3 = 0 THEN to_jsonb(i)
    WHEN i % 3 = 1 THEN to_jsonb('v' || i) ELSE jsonb_build_object('n', i) END)
  || '{"P": "part \"1\" \\ é☃", "SortKeyName": "g wide"}' FROM generate_series(1, 100) i), NULL) IS NULL AS put;

CREATE FUNCTION oracle_strs(forward boolean) RETURNS text[]
LANGUAGE sql STABLE RETURN (
  SELECT array_agg((jsonb_build_object('P', "P", 'SortKeyName', "SortKeyName") || item)::text
                   ORDER BY CASE WHEN forward THEN "SortKeyName" END,
                            CASE WHEN NOT forward THEN "SortKeyName" END DESC)
  FROM "Strs");

-- in FROM (materialized) and in the select list (one per call): the same texts
SELECT array_agg(q::text) = oracle_strs(true) AS from_forward
FROM ddb_query('Strs', 'P = :p', '{":p": "part \"1\" \\ é☃"}') q;
SELECT array_agg(q::text) = oracle_strs(false) AS from_backward
FROM ddb_query('Strs', 'P = :p', '{":p": "part \"1\" \\ é☃"}', forward => false) q;
SELECT array_agg(q::text) = oracle_strs(true) AS select_list
FROM (SELECT ddb_query('Strs', 'P = :p', '{":p": "part \"1\" \\ é☃"}') q) s;
SELECT array_agg(q::text) = oracle_strs(true) AS scan_from
FROM ddb_scan('Strs') q;
SELECT q FROM ddb_query('Strs', 'P = :p AND SortKeyName < :c', '{":p": "part \"1\" \\ é☃", ":c": "c"}') q;
SELECT ddb_get_item('Strs', jsonb_build_object('P', 'part "1" \ é☃', 'SortKeyName', 'c ☃ snow'));

-- projections, filters, limits and start keys in FROM
SELECT q FROM ddb_query('Strs', 'P = :p', '{":p": "part \"1\" \\ é☃", ":one": 1}',
  filter => 'A = :one OR attribute_exists(m)', projection => 'm.a[1], SortKeyName, Zz') q;
SELECT q FROM ddb_query('Strs', 'P = :p', '{":p": "part \"1\" \\ é☃"}', "limit" => 2,
  start_key => '{"P": "part \"1\" \\ é☃", "SortKeyName": "a"}') q;
SELECT q FROM ddb_scan('Strs', 'attribute_exists(x)') q;
SELECT count(*) FROM ddb_query('Strs', 'P = :p', '{":p": "nobody"}') q;

-- WITH ORDINALITY and ROWS FROM
SELECT o, q ->> 'SortKeyName' AS sk
FROM ddb_query('Strs', 'P = :p', '{":p": "part \"1\" \\ é☃"}', projection => 'SortKeyName')
  WITH ORDINALITY AS t(q, o);
SELECT a ->> 'SortKeyName' AS query_sk, b ->> 'SortKeyName' AS scan_sk
FROM ROWS FROM (ddb_query('Strs', 'P = :p', '{":p": "part \"1\" \\ é☃"}', "limit" => 2),
                ddb_scan('Strs', projection => 'SortKeyName', "limit" => 3)) AS t(a, b);

-- Number and binary keys, decoded
SELECT ddb_create_table('Nums', 'h', 'N', 'r', 'B') IS NOT NULL AS created;
SELECT ddb_put_item('Nums', jsonb_build_object('h', h, 'r', jsonb_build_object('$B', r), 'v', h), NULL) IS NULL AS put
FROM (VALUES (1e3, 'AA=='), (1e3, 'AAEC/w=='), (-0.5, 'AQ=='), (12345678901234567890.5, '/w==')) AS v(h, r);
SELECT q FROM ddb_scan('Nums') q;
SELECT q FROM ddb_query('Nums', 'h = :h', '{":h": 1000}', forward => false) q;
SELECT array_agg(q::text ORDER BY q::text) = (SELECT array_agg(q::text ORDER BY q::text)
    FROM (SELECT ddb_scan('Nums') q) s) AS same
FROM ddb_scan('Nums') q;

-- Scan segments in FROM: two halves hold every item once
SELECT array_agg(q::text ORDER BY q::text) = (SELECT array_agg(q::text ORDER BY q::text)
    FROM (SELECT ddb_scan('Nums') q) s) AS segments_cover
FROM (SELECT q FROM ddb_scan('Nums', segment => 0, total_segments => 2) q
      UNION ALL
      SELECT q FROM ddb_scan('Nums', segment => 1, total_segments => 2) q) s;

-- LATERAL: the function scan runs again for every outer row
SELECT p.h, q
FROM (VALUES (1000), (-0.5), (7)) AS p(h),
     LATERAL ddb_query('Nums', 'h = :h', jsonb_build_object(':h', p.h), projection => 'r') q
ORDER BY p.h, q::text;

-- A scrollable cursor reads the store backward and by position
BEGIN;
DECLARE c SCROLL CURSOR FOR
  SELECT q ->> 'SortKeyName' FROM ddb_query('Strs', 'P = :p', '{":p": "part \"1\" \\ é☃"}') q;
FETCH 2 FROM c;
FETCH BACKWARD 1 FROM c;
FETCH ABSOLUTE 5 FROM c;
FETCH LAST FROM c;
COMMIT;

-- In a select list the items come one per call, and LIMIT stops the reader
SELECT ddb_query('Strs', 'P = :p', '{":p": "part \"1\" \\ é☃"}', projection => 'SortKeyName') LIMIT 1;

-- Global and local secondary indexes in FROM
SELECT ddb_api('CreateTable', '{"TableName": "Idx",
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
    {"AttributeName": "sk", "AttributeType": "S"}, {"AttributeName": "at", "AttributeType": "N"},
    {"AttributeName": "g", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "LocalSecondaryIndexes": [{"IndexName": "ByAt", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
    {"AttributeName": "at", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "KEYS_ONLY"}}],
  "GlobalSecondaryIndexes": [{"IndexName": "ByG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "ALL"}}],
  "BillingMode": "PAY_PER_REQUEST"}') IS NOT NULL AS created;
SELECT ddb_put_item('Idx', jsonb_build_object('pk', 'a', 'sk', 's' || i, 'at', 10 - i, 'g', 'grp',
  'm', jsonb_build_object('i', i)), NULL) IS NULL AS put
FROM generate_series(1, 3) i;
SELECT q FROM ddb_query('Idx', 'pk = :p', '{":p": "a"}', index_name => 'ByAt') q;
SELECT q FROM ddb_query('Idx', 'pk = :p', '{":p": "a"}', index_name => 'ByAt', projection => 'm, sk') q;
SELECT q FROM ddb_query('Idx', 'g = :g', '{":g": "grp"}', index_name => 'ByG') q ORDER BY q ->> 'sk';

-- Request errors are raised in FROM as in the select list
SELECT q FROM ddb_query('Strs', 'P = :p', '{":p": "x"}', "limit" => 0) q;
SELECT q FROM ddb_query('Strs', 'SortKeyName = :p', '{":p": "x"}') q;
SELECT q FROM ddb_query('Missing', 'P = :p', '{":p": "x"}') q;

RESET search_path;
RESET ddb.schema;
DROP SCHEMA items_in_from CASCADE;
