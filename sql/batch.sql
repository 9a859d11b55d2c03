-- BatchWriteItem and BatchGetItem: the SQL functions (document form) and
-- ddb_api (typed JSON) on one core; DynamoDB's limits and messages; a
-- batch is all or nothing; global secondary indexes follow every write;
-- UnprocessedKeys at 16 MB, fed back to finish the read.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
CREATE SCHEMA batch;
SET ddb.schema = batch;
SET search_path = batch, public;

SELECT ddb_create_table('orders', 'PK', 'S', 'SK', 'S');
SELECT ddb_create_table('stock', 'sku', 'S');
SELECT ddb_create_gsi('orders', 'StatusIndex', 'status', sort_key => 'SK');

-- ------------------------------------------------------------------------
-- BatchWriteItem: puts and deletes over two tables, in one call.
-- ------------------------------------------------------------------------
SELECT ddb_batch_write_item('{
  "orders": [
    {"PutRequest": {"Item": {"PK": "CUST#1", "SK": "ORDER#1", "status": "PENDING", "total": 10}}},
    {"PutRequest": {"Item": {"PK": "CUST#1", "SK": "ORDER#2", "status": "SHIPPED", "total": 20}}},
    {"PutRequest": {"Item": {"PK": "CUST#2", "SK": "ORDER#3", "status": "PENDING", "total": 30}}}],
  "stock": [
    {"PutRequest": {"Item": {"sku": "apple", "qty": 5}}},
    {"PutRequest": {"Item": {"sku": "pear", "qty": 7}}}]}');
SELECT x FROM ddb_scan('orders') x ORDER BY x ->> 'SK';
SELECT x FROM ddb_scan('stock') x ORDER BY x ->> 'sku';
-- the index saw the puts
SELECT x ->> 'SK' AS sk FROM ddb_query('orders', '#s = :s', '{":s": "PENDING"}', '{"#s": "status"}',
                                       index_name => 'StatusIndex') x;

-- A put replaces the whole item (and its index entry); a delete of an
-- item that does not exist is no error.
SELECT ddb_batch_write_item('{
  "orders": [
    {"PutRequest": {"Item": {"PK": "CUST#1", "SK": "ORDER#1", "status": "SHIPPED"}}},
    {"DeleteRequest": {"Key": {"PK": "CUST#2", "SK": "ORDER#3"}}},
    {"DeleteRequest": {"Key": {"PK": "CUST#9", "SK": "ORDER#9"}}}]}');
SELECT x FROM ddb_scan('orders') x ORDER BY x ->> 'SK';
SELECT x ->> 'SK' AS sk FROM ddb_query('orders', '#s = :s', '{":s": "SHIPPED"}', '{"#s": "status"}',
                                       index_name => 'StatusIndex') x;
SELECT count(*) AS pending FROM ddb_query('orders', '#s = :s', '{":s": "PENDING"}', '{"#s": "status"}',
                                          index_name => 'StatusIndex');
SELECT ddb_verify_gsi('orders');

-- ------------------------------------------------------------------------
-- BatchWriteItem's errors change nothing.
-- ------------------------------------------------------------------------
\set VERBOSITY terse
-- two requests for one item: a put and a delete, or two puts
SELECT ddb_batch_write_item('{"stock": [{"PutRequest": {"Item": {"sku": "apple", "qty": 1}}},
                                        {"DeleteRequest": {"Key": {"sku": "apple"}}}]}');
SELECT ddb_batch_write_item('{"stock": [{"PutRequest": {"Item": {"sku": "fig"}}},
                                        {"PutRequest": {"Item": {"sku": "fig", "qty": 1}}}]}');
-- 26 requests in one table, or 26 over two tables
SELECT ddb_batch_write_item(jsonb_build_object('stock',
  (SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object('sku', 'k' || i))))
   FROM generate_series(1, 26) i)));
SELECT ddb_batch_write_item(jsonb_build_object(
  'stock', (SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object('sku', 'k' || i))))
            FROM generate_series(1, 13) i),
  'orders', (SELECT jsonb_agg(jsonb_build_object('DeleteRequest', jsonb_build_object('Key', jsonb_build_object('PK', 'P', 'SK', 'k' || i))))
             FROM generate_series(1, 13) i)));
-- The counts come before any request is read, as DynamoDB checks the
-- members' constraints before the requests' contents: an over-long list
-- whose last request is malformed (neither put nor delete, no key, an
-- empty attribute value) is refused for its length, so that a list of
-- thousands costs nothing to refuse -- through SQL and through ddb_api
SELECT ddb_batch_write_item(jsonb_build_object('stock',
  (SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object('sku', 'k' || i))))
   FROM generate_series(1, 5000) i) || '[{"Bogus": {}}]'));
SELECT ddb_batch_write_item(jsonb_build_object(
  'stock', (SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object('sku', 'k' || i))))
            FROM generate_series(1, 13) i),
  'orders', '[{"DeleteRequest": {}}]'::jsonb || (SELECT jsonb_agg(jsonb_build_object('DeleteRequest', jsonb_build_object('Key', jsonb_build_object('PK', 'P', 'SK', 'k' || i))))
             FROM generate_series(1, 12) i)));
SELECT ddb_api('BatchWriteItem', jsonb_build_object('RequestItems', jsonb_build_object('stock',
  (SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object('sku', jsonb_build_object('S', 'k' || i)))))
   FROM generate_series(1, 5000) i) || '[{"PutRequest": {"Item": {"sku": {}}}}]')));
SELECT ddb_api('BatchWriteItem', jsonb_build_object('RequestItems', jsonb_build_object(
  'stock', (SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object('sku', jsonb_build_object('S', 'k' || i)))))
            FROM generate_series(1, 13) i),
  'orders', '[{"DeleteRequest": {"Key": {"PK": {"S": "P"}, "SK": {"NS": []}}}}, {"PutRequest": {}, "DeleteRequest": {}}]'::jsonb ||
            (SELECT jsonb_agg(jsonb_build_object('DeleteRequest', jsonb_build_object('Key', jsonb_build_object('PK', jsonb_build_object('S', 'P'), 'SK', jsonb_build_object('S', 'k' || i)))))
             FROM generate_series(1, 11) i))));
-- (a request of the wrong JSON shape is still a SerializationException
-- first: DynamoDB reads the whole body before it checks a constraint)
SELECT ddb_api('BatchWriteItem', jsonb_build_object('RequestItems', jsonb_build_object('stock',
  (SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object('sku', jsonb_build_object('S', 'k' || i)))))
   FROM generate_series(1, 30) i) || '[{"PutRequest": []}]')));
-- empty
SELECT ddb_batch_write_item('{}');
SELECT ddb_batch_write_item('{"stock": []}');
SELECT ddb_batch_write_item(NULL);
-- neither or both of PutRequest and DeleteRequest; a request without its item
SELECT ddb_batch_write_item('{"stock": [{}]}');
SELECT ddb_batch_write_item('{"stock": [{"PutRequest": {}}]}');
-- a table name DynamoDB refuses; a table that does not exist
SELECT ddb_batch_write_item('{"s": [{"PutRequest": {"Item": {"sku": "x"}}}]}');
SELECT ddb_batch_write_item('{"nosuch": [{"PutRequest": {"Item": {"sku": "x"}}}]}');
-- a key of the wrong type, a missing key, a key with an extra attribute
SELECT ddb_batch_write_item('{"stock": [{"PutRequest": {"Item": {"sku": 5}}}]}');
SELECT ddb_batch_write_item('{"stock": [{"PutRequest": {"Item": {"qty": 5}}}]}');
SELECT ddb_batch_write_item('{"stock": [{"DeleteRequest": {"Key": {"sku": "apple", "qty": 5}}}]}');
-- an item over 400 KB
SELECT ddb_batch_write_item(jsonb_build_object('stock', jsonb_build_array(
  jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object('sku', 'huge', 'blob', repeat('x', 409600)))))));
-- an item the index refuses (its index key has the wrong type): the
-- earlier requests of the batch are undone with it -- all or nothing
SELECT ddb_batch_write_item('{"orders": [
  {"PutRequest": {"Item": {"PK": "CUST#5", "SK": "ORDER#5", "status": "PENDING"}}},
  {"PutRequest": {"Item": {"PK": "CUST#5", "SK": "ORDER#6", "status": 42}}}]}');
\set VERBOSITY default
SELECT x FROM ddb_scan('stock') x ORDER BY x ->> 'sku';
SELECT count(*) AS orders FROM ddb_scan('orders');
SELECT ddb_verify_gsi('orders');

-- In a SQL transaction a batch composes with other writes; ROLLBACK undoes it.
BEGIN;
SELECT ddb_batch_write_item('{"stock": [{"DeleteRequest": {"Key": {"sku": "apple"}}},
                                        {"PutRequest": {"Item": {"sku": "plum", "qty": 1}}}]}');
SELECT x FROM ddb_scan('stock') x ORDER BY x ->> 'sku';
ROLLBACK;
SELECT x FROM ddb_scan('stock') x ORDER BY x ->> 'sku';
-- the trees hold every invariant after the batches and their rollbacks
SELECT (v ->> 'live')::int AS live FROM ddb_verify('orders') v;
SELECT (v ->> 'live')::int AS live FROM ddb_verify('stock') v;

-- ------------------------------------------------------------------------
-- BatchGetItem: items found, missing keys omitted, projections per table.
-- ------------------------------------------------------------------------
SELECT ddb_batch_get_item('{
  "orders": {"Keys": [{"PK": "CUST#1", "SK": "ORDER#1"}, {"PK": "CUST#1", "SK": "ORDER#2"},
                      {"PK": "CUST#7", "SK": "ORDER#7"}],
             "ProjectionExpression": "SK, #s", "ExpressionAttributeNames": {"#s": "status"}},
  "stock": {"Keys": [{"sku": "pear"}]}}');
-- nothing found: the table is still in Responses, with no items
SELECT ddb_batch_get_item('{"stock": {"Keys": [{"sku": "nothing"}]}}');

\set VERBOSITY terse
SELECT ddb_batch_get_item('{"stock": {"Keys": [{"sku": "pear"}, {"sku": "pear"}]}}');
SELECT ddb_batch_get_item(jsonb_build_object('stock', jsonb_build_object('Keys',
  (SELECT jsonb_agg(jsonb_build_object('sku', 'k' || i)) FROM generate_series(1, 101) i))));
SELECT ddb_batch_get_item(jsonb_build_object(
  'stock', jsonb_build_object('Keys', (SELECT jsonb_agg(jsonb_build_object('sku', 'k' || i)) FROM generate_series(1, 60) i)),
  'orders', jsonb_build_object('Keys', (SELECT jsonb_agg(jsonb_build_object('PK', 'P', 'SK', 'k' || i)) FROM generate_series(1, 41) i))));
-- as for BatchWriteItem, the counts before the keys: a malformed key past
-- the limit is not looked at
SELECT ddb_api('BatchGetItem', jsonb_build_object('RequestItems', jsonb_build_object('stock', jsonb_build_object('Keys',
  (SELECT jsonb_agg(jsonb_build_object('sku', jsonb_build_object('S', 'k' || i))) FROM generate_series(1, 5000) i) ||
  '[{"sku": {}}]'::jsonb))));
SELECT ddb_api('BatchGetItem', jsonb_build_object('RequestItems', jsonb_build_object(
  'stock', jsonb_build_object('Keys', (SELECT jsonb_agg(jsonb_build_object('sku', jsonb_build_object('S', 'k' || i))) FROM generate_series(1, 60) i)),
  'orders', jsonb_build_object('Keys', '[{"PK": {"S": "P"}, "SK": {"S": "a", "N": "1"}}]'::jsonb ||
    (SELECT jsonb_agg(jsonb_build_object('PK', jsonb_build_object('S', 'P'), 'SK', jsonb_build_object('S', 'k' || i))) FROM generate_series(1, 40) i)))));
SELECT ddb_batch_get_item('{"stock": {"Keys": []}}');
SELECT ddb_batch_get_item('{"stock": {}}');
SELECT ddb_batch_get_item('{}');
SELECT ddb_batch_get_item('{"nosuch": {"Keys": [{"sku": "x"}]}}');
SELECT ddb_batch_get_item('{"stock": {"Keys": [{"qty": 1}]}}');
SELECT ddb_batch_get_item('{"stock": {"Keys": [{"sku": "pear"}], "ExpressionAttributeNames": {"#q": "qty"}}}');
SELECT ddb_batch_get_item('{"stock": {"Keys": [{"sku": "pear"}], "ProjectionExpression": "#q"}}');
\set VERBOSITY default

-- ------------------------------------------------------------------------
-- The same operations through ddb_api, in typed JSON: one core.
-- ------------------------------------------------------------------------
SELECT ddb_api('BatchWriteItem', '{"RequestItems": {"stock": [
  {"PutRequest": {"Item": {"sku": {"S": "kiwi"}, "qty": {"N": "3"}, "tags": {"SS": ["green"]}}}},
  {"DeleteRequest": {"Key": {"sku": {"S": "pear"}}}}]}, "ReturnConsumedCapacity": "TOTAL"}');
SELECT ddb_get_item('stock', '{"sku": "kiwi"}');
SELECT ddb_api('BatchGetItem', '{"RequestItems": {"stock": {"Keys": [{"sku": {"S": "kiwi"}}, {"sku": {"S": "pear"}}],
  "AttributesToGet": ["qty", "tags"], "ConsistentRead": true}}, "ReturnConsumedCapacity": "TOTAL"}');
\set VERBOSITY terse
SELECT ddb_api('BatchWriteItem', '{}');
SELECT ddb_api('BatchWriteItem', '{"RequestItems": {"stock": [{"PutRequest": {}}]}}');
SELECT ddb_api('BatchWriteItem', '{"RequestItems": {"stock": [{"PutRequest": {"Item": {"sku": {"S": "a"}}}},
                                                             {"PutRequest": {"Item": {"sku": {"S": "a"}}}}]}}');
SELECT ddb_api('BatchWriteItem', '{"RequestItems": {"stock": [{"PutRequest": {"Item": {"sku": {"S": "a"}, "e": {"SS": []}}}}]}}');
SELECT ddb_api('BatchWriteItem', '{"RequestItems": {"stock": [{"PutRequest": {"Item": {"sku": {"S": "a"}}}}]}, "ReturnConsumedCapacity": "ALL"}');
SELECT ddb_api('BatchGetItem', '{"RequestItems": {"stock": {"Keys": [{"sku": {"S": "a"}}],
  "AttributesToGet": ["qty"], "ProjectionExpression": "qty"}}}');
SELECT ddb_api('BatchGetItem', '{"RequestItems": {"stock": {"Keys": [{"sku": {"S": "a"}}, {"sku": {"S": "a"}}]}}}');
\set VERBOSITY default

-- ------------------------------------------------------------------------
-- 16 MB: 45 items of 390 KB do not fit one response.  The first call
-- returns what fits and the rest as UnprocessedKeys (with the table's
-- projection); feeding those back returns the others.
-- ------------------------------------------------------------------------
SELECT ddb_create_table('blobs', 'id', 'N');
SELECT count(*) FROM generate_series(1, 45) i,
  ddb_put_item('blobs', jsonb_build_object('id', i, 'body', repeat(chr(65 + i % 26), 390000)));
CREATE TEMP TABLE first_page AS
SELECT ddb_batch_get_item(jsonb_build_object('blobs', jsonb_build_object(
  'Keys', (SELECT jsonb_agg(jsonb_build_object('id', i)) FROM generate_series(1, 45) i),
  'ProjectionExpression', 'id, #b', 'ExpressionAttributeNames', '{"#b": "body"}'::jsonb))) AS r;
SELECT jsonb_array_length(r -> 'Responses' -> 'blobs') AS returned,
       jsonb_array_length(r -> 'UnprocessedKeys' -> 'blobs' -> 'Keys') AS unprocessed,
       r -> 'UnprocessedKeys' -> 'blobs' ->> 'ProjectionExpression' AS projection,
       (SELECT sum(length(i ->> 'body')) FROM jsonb_array_elements(r -> 'Responses' -> 'blobs') i) <= 16 * 1024 * 1024 AS within_16mb
FROM first_page;
SELECT jsonb_array_length(r2 -> 'Responses' -> 'blobs') AS returned,
       r2 -> 'UnprocessedKeys' AS unprocessed
FROM first_page, ddb_batch_get_item(r -> 'UnprocessedKeys') r2;
-- every item exactly once over the two calls
SELECT count(DISTINCT id) AS items, count(*) AS rows
FROM (SELECT (i ->> 'id')::int AS id FROM first_page, jsonb_array_elements(r -> 'Responses' -> 'blobs') i
      UNION ALL
      SELECT (i ->> 'id')::int FROM first_page, ddb_batch_get_item(r -> 'UnprocessedKeys') r2,
             jsonb_array_elements(r2 -> 'Responses' -> 'blobs') i) s;
-- the same limit through ddb_api: UnprocessedKeys in typed JSON
SELECT jsonb_array_length(a -> 'Responses' -> 'blobs') AS returned,
       a -> 'UnprocessedKeys' -> 'blobs' -> 'Keys' -> 0 AS first_unprocessed
FROM ddb_api('BatchGetItem', jsonb_build_object('RequestItems', jsonb_build_object('blobs', jsonb_build_object(
  'Keys', (SELECT jsonb_agg(jsonb_build_object('id', jsonb_build_object('N', i::text))) FROM generate_series(1, 45) i))))) a;

-- ------------------------------------------------------------------------
-- A batch writes in key order, its puts of new keys together up to a key
-- that has an item (PutItem's code overwrites it, and the inserts go on
-- after it), a put large enough for TOAST and the deletes in their places.
-- One batch with all of them, listed out of order: every write lands, the
-- stream has one record each, in key order, and the tree and its map
-- verify.
-- ------------------------------------------------------------------------
SELECT ddb_create_table('mixed', 'pk', 'S', 'sk', 'N');
SELECT ddb_update_stream('mixed', 'NEW_AND_OLD_IMAGES') ? 'LatestStreamArn' AS stream;
SELECT count(*) FROM generate_series(1, 10) k,
  ddb_put_item('mixed', jsonb_build_object('pk', 'p', 'sk', k * 10, 'v', 'old'));
BEGIN;
SELECT ddb_batch_write_item(jsonb_build_object('mixed', jsonb_agg(r ORDER BY o)))
FROM (VALUES
  (1, jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object('pk', 'p', 'sk', 95, 'v', 'new')))),
  (2, jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object('pk', 'p', 'sk', 50, 'v', 'over')))),
  (3, jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object('pk', 'p', 'sk', 5, 'v', 'new')))),
  (4, jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object('pk', 'p', 'sk', 55, 'v', repeat('t', 300000))))),
  (5, jsonb_build_object('DeleteRequest', jsonb_build_object('Key', jsonb_build_object('pk', 'p', 'sk', 70)))),
  (6, jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object('pk', 'p', 'sk', 52, 'v', 'new')))),
  (7, jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object('pk', 'p', 'sk', 10, 'v', 'over')))),
  (8, jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object('pk', 'p', 'sk', 51, 'v', 'new'))))) AS b(o, r);
-- the items inserted after the stops (51, 52, 95) are the transaction's
-- own to the statements after the batch
SELECT ddb_update_item('mixed', '{"pk": "p", "sk": 51}', 'SET v = :v', vals => '{":v": "upd"}') IS NULL AS updated;
UPDATE mixed SET item = item || '{"v": "sql"}' WHERE pk = 'p' AND sk = 95;
DELETE FROM mixed WHERE pk = 'p' AND sk = 52;
COMMIT;
SELECT string_agg((item->>'sk') || ':' || left(item->>'v', 4), ' ' ORDER BY (item->>'sk')::numeric) AS items
FROM ddb_query('mixed', 'pk = :p', '{":p": "p"}') item;
SELECT string_agg(r->>'eventName' || ':' || (r->'dynamodb'->'Keys'->>'sk'), ' '
                  ORDER BY (r->'dynamodb'->>'SequenceNumber')::numeric) AS stream
FROM ddb_stream_records('mixed') r WHERE (r->'dynamodb'->>'SequenceNumber')::numeric >
  (SELECT max((r2->'dynamodb'->>'SequenceNumber')::numeric) FROM ddb_stream_records('mixed') r2
   WHERE r2->'dynamodb'->'Keys'->>'sk' = '100' AND r2->>'eventName' = 'INSERT');
SELECT (v->>'orphan_map_entries')::int AS orphans, v->>'leaf_fill' IS NOT NULL AS verified
FROM ddb_verify('mixed'::regclass) v;
DROP TABLE mixed;

-- ------------------------------------------------------------------------
-- Privileges: a batch needs what its single-item operations need, on each
-- of its tables -- puts INSERT and UPDATE, deletes DELETE, reads SELECT.
-- ------------------------------------------------------------------------
CREATE ROLE ddb_batch_writer;
GRANT USAGE ON SCHEMA batch TO ddb_batch_writer;
GRANT SELECT, INSERT, UPDATE ON stock TO ddb_batch_writer;
SET ROLE ddb_batch_writer;
SELECT ddb_batch_write_item('{"stock": [{"PutRequest": {"Item": {"sku": "lime", "qty": 1}}}]}');
\set VERBOSITY terse
SELECT ddb_batch_write_item('{"stock": [{"PutRequest": {"Item": {"sku": "lemon"}}},
                                        {"DeleteRequest": {"Key": {"sku": "lime"}}}]}');
SELECT ddb_batch_write_item('{"stock": [{"DeleteRequest": {"Key": {"sku": "lime"}}}]}');
SELECT ddb_batch_get_item('{"orders": {"Keys": [{"PK": "CUST#1", "SK": "ORDER#1"}]}}');
\set VERBOSITY default
SELECT ddb_batch_get_item('{"stock": {"Keys": [{"sku": "lime"}, {"sku": "lemon"}]}}');
RESET ROLE;
DROP OWNED BY ddb_batch_writer;
DROP ROLE ddb_batch_writer;

DROP SCHEMA batch CASCADE;
