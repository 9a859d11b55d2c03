-- Read paths (issues 16 and 19): what the read-path work changed must not
-- change what the reads return.
--  * ddb_query and ddb_scan hand each item out as built, without a copy:
--    a value-per-call result lives until the next call, in a FROM clause
--    (the function scan's tuplestore) and in a target list (ProjectSet),
--    also with two readers side by side and when the caller stops early.
--  * The table information cache remembers the last table asked for: calls
--    that alternate between tables with different key names, and a change
--    of a table's catalog row between calls, read the right names.
--  * The table-name cache remembers the last name it resolved: a table
--    dropped and created again under that name, and another ddb.schema,
--    are seen by the next call.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
CREATE SCHEMA reads;
SET ddb.schema = reads;
SET search_path = reads, public;

SELECT ddb_create_table('rd1', 'PK', 'S', 'SK', 'N') IS NOT NULL AS created;
-- a 70-character partition key name: longer than a column name can be, so
-- the DynamoDB name comes from the catalog row, not from the column
SELECT ddb_create_table('rd2', repeat('k', 70), 'S') IS NOT NULL AS created;
SELECT count(ddb_put_item('rd1', jsonb_build_object('PK', 'p' || (i % 2), 'SK', i, 'v', repeat('x', i))) IS NULL)
  FROM generate_series(1, 20) i;
SELECT count(ddb_put_item('rd2', jsonb_build_object(repeat('k', 70), 'k' || i, 'w', i)) IS NULL)
  FROM generate_series(1, 3) i;

-- FROM clause: every item, in order, each one itself (not the last one
-- built, which an item handed out uncopied and then reused would show)
SELECT x ->> 'SK' AS sk, length(x ->> 'v') AS len
  FROM ddb_query('rd1', 'PK = :p', '{":p": "p1"}') x;
-- target list: one reader, then two side by side (ProjectSet)
SELECT ddb_query('rd1', 'PK = :p', '{":p": "p0"}', "limit" => 4) ->> 'SK' AS sk;
SELECT a ->> 'SK' AS a, b ->> 'SK' AS b
  FROM (SELECT ddb_query('rd1', 'PK = :p', '{":p": "p0"}', "limit" => 3) a,
               ddb_query('rd1', 'PK = :p', '{":p": "p1"}', forward => false, "limit" => 5) b) s;
-- the caller stops early; the items kept by the upper node stay intact
SELECT array_agg(x ->> 'SK' ORDER BY x ->> 'v') AS sks
  FROM (SELECT x FROM ddb_query('rd1', 'PK = :p', '{":p": "p0"}') x LIMIT 3) s;
SELECT count(*), count(DISTINCT x), min(length(x ->> 'v')), max(length(x ->> 'v'))
  FROM ddb_scan('rd1') x;
-- projection and filter results are handed out the same way
SELECT x FROM ddb_query('rd1', 'PK = :p', '{":p": "p1", ":n": 15}',
  filter => 'size(v) > :n', projection => 'SK') x;

-- alternating tables in one statement: each call names its own keys
SELECT i, ddb_get_item('rd1', jsonb_build_object('PK', 'p' || (i % 2), 'SK', i)) ->> 'SK' AS rd1_sk,
       ddb_get_item('rd2', jsonb_build_object(repeat('k', 70), 'k' || i)) ->> 'w' AS rd2_w,
       ddb_get_item('rd2', jsonb_build_object(repeat('k', 70), 'k1')) ? repeat('k', 70) AS long_name
  FROM generate_series(1, 3) i ORDER BY i;
-- a key of the other table's shape is refused, so the names really come
-- from the table each call names
SELECT ddb_get_item('rd2', '{"PK": "p1", "SK": 1}');
SELECT ddb_get_item('rd1', jsonb_build_object(repeat('k', 70), 'k1'));
-- BatchGetItem over both tables, then the catalog row of rd2 changes
-- (billing mode) and DescribeTable shows the change right after a read of
-- the same table cached its row
SELECT jsonb_array_length(ddb_batch_get_item(jsonb_build_object(
         'rd1', jsonb_build_object('Keys', jsonb_build_array('{"PK": "p1", "SK": 1}'::jsonb, '{"PK": "p0", "SK": 2}'::jsonb)),
         'rd2', jsonb_build_object('Keys', jsonb_build_array(jsonb_build_object(repeat('k', 70), 'k2'))))) -> 'Responses' -> 'rd1') AS rd1_items;
SELECT ddb_api('DescribeTable', '{"TableName": "rd2"}') -> 'Table' -> 'BillingModeSummary' ->> 'BillingMode' AS before;
SELECT ddb_api('UpdateTable', '{"TableName": "rd2", "BillingMode": "PROVISIONED",
  "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}') -> 'TableDescription' ->> 'TableName' AS updated;
SELECT ddb_api('DescribeTable', '{"TableName": "rd2"}') -> 'Table' -> 'BillingModeSummary' ->> 'BillingMode' AS after,
       ddb_api('DescribeTable', '{"TableName": "rd2"}') -> 'Table' -> 'ProvisionedThroughput' ->> 'ReadCapacityUnits' AS rcu;

-- the last name resolved: the same call again, then the table behind the
-- name dropped and created again with another key, then another schema
-- holding a table of the same name
SELECT ddb_create_table('rd3', 'PK', 'S') IS NOT NULL AS created;
SELECT ddb_put_item('rd3', '{"PK": "a", "v": 1}');
SELECT ddb_get_item('rd3', '{"PK": "a"}') AS first, ddb_get_item('rd3', '{"PK": "a"}') AS again;
SELECT ddb_api('DeleteTable', '{"TableName": "rd3"}') -> 'TableDescription' ->> 'TableName' AS deleted;
SELECT ddb_get_item('rd3', '{"PK": "a"}');
SELECT ddb_create_table('rd3', 'id', 'N') IS NOT NULL AS created;
SELECT ddb_put_item('rd3', '{"id": 7, "v": 2}');
SELECT ddb_get_item('rd3', '{"id": 7}') AS recreated;
SELECT ddb_get_item('rd3', '{"PK": "a"}');
CREATE SCHEMA reads_other;
SET ddb.schema = reads_other;
SELECT ddb_get_item('rd3', '{"id": 7}');
SELECT ddb_create_table('rd3', 'id', 'N') IS NOT NULL AS created;
SELECT ddb_put_item('rd3', '{"id": 7, "v": "other"}');
SELECT ddb_get_item('rd3', '{"id": 7}') AS other_schema;
SET ddb.schema = reads;
SELECT ddb_get_item('rd3', '{"id": 7}') AS back;

RESET ddb.schema;
RESET search_path;
SET client_min_messages = warning;
DROP SCHEMA reads_other CASCADE;
DROP SCHEMA reads CASCADE;
RESET client_min_messages;
