-- Global secondary indexes: creation and backfill, maintenance by every
-- write path (item API and SQL), sparse indexes, projections, type errors,
-- Query and Scan on an index with pagination, TRUNCATE, DescribeTable,
-- dropping.  ddb_verify_gsi after each scenario proves the index holds
-- exactly its table's entries.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

CREATE FUNCTION sqlstate_of(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE stmt;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || SQLERRM;
END $$;

-- ------------------------------------------------------------------------
-- Orders by status: StatusIndex (status, createdAt), newest PENDING first.
-- Created on a populated table, so it is backfilled.
-- ------------------------------------------------------------------------
SELECT ddb_create_table('orders', 'orderId');
SELECT ddb_put_item('orders', '{"orderId": "o1", "status": "PENDING", "createdAt": "2024-01-01", "total": 10}');
SELECT ddb_put_item('orders', '{"orderId": "o2", "status": "SHIPPED", "createdAt": "2024-01-02", "total": 20}');
SELECT ddb_put_item('orders', '{"orderId": "o3", "status": "PENDING", "createdAt": "2024-01-03", "total": 30}');
SELECT ddb_put_item('orders', '{"orderId": "o4", "note": "no status: not in the index"}');
SELECT ddb_create_gsi('orders', 'StatusIndex', 'status', sort_key => 'createdAt');
SELECT ddb_verify_gsi('orders');

-- The index table: internal, keyed by (status, createdAt, orderId).
SELECT index_name, index_table, partition_key, partition_key_type, sort_key, projection
FROM ddb_internal.gsi WHERE base = 'orders'::regclass;
SELECT * FROM ddb_internal."orders__StatusIndex" ORDER BY 1, 2, 3;

-- PENDING orders, newest first: index keys, table keys and projected attributes.
SELECT x FROM ddb_query('orders', '#s = :s', '{":s": "PENDING"}', '{"#s": "status"}',
                        index_name => 'StatusIndex', forward => false) x;
-- A sort-key condition on createdAt; a projection; a filter.
SELECT x FROM ddb_query('orders', '#s = :s AND createdAt > :d',
                        '{":s": "PENDING", ":d": "2024-01-02"}', '{"#s": "status"}', index_name => 'StatusIndex') x;
SELECT x FROM ddb_query('orders', '#s = :s', '{":s": "PENDING"}', '{"#s": "status", "#t": "total"}',
                        projection => 'orderId, #t', index_name => 'StatusIndex') x;
SELECT x FROM ddb_query('orders', '#s = :s', '{":s": "PENDING", ":t": 15}', '{"#s": "status", "#t": "total"}',
                        filter => '#t > :t', index_name => 'StatusIndex') x;
-- The key condition names the index's keys, not the table's.
SELECT sqlstate_of($$SELECT ddb_query('orders', 'orderId = :o', '{":o": "o1"}', index_name => 'StatusIndex')$$);
-- A filter may not name the index's key attributes.
SELECT sqlstate_of($$SELECT ddb_query('orders', '#s = :s', '{":s": "PENDING", ":d": "x"}', '{"#s": "status"}', filter => 'createdAt > :d', index_name => 'StatusIndex')$$);
-- An unknown index.
SELECT sqlstate_of($$SELECT ddb_query('orders', '#s = :s', '{":s": "PENDING"}', '{"#s": "status"}', index_name => 'NoSuchIndex')$$);
-- A start key that is not the index's key names the index and its table,
-- not the index's backing table.
SELECT ddb_query('orders', '#s = :s', '{":s": "PENDING"}', '{"#s": "status"}',
                 index_name => 'StatusIndex', start_key => '{"orderId": "o1"}');
-- Scan of the index: every entry.
SELECT x->>'orderId' AS id FROM ddb_scan('orders', index_name => 'StatusIndex') x ORDER BY 1;

-- ------------------------------------------------------------------------
-- Every update transition, through the item API.
-- ------------------------------------------------------------------------
-- key changed (o1 ships): leaves PENDING, joins SHIPPED
SELECT ddb_update_item('orders', '{"orderId": "o1"}', 'SET #s = :s', names => '{"#s": "status"}', vals => '{":s": "SHIPPED"}');
-- key removed (o2 loses its status): leaves the index
SELECT ddb_update_item('orders', '{"orderId": "o2"}', 'REMOVE #s', names => '{"#s": "status"}');
-- key added (o4 gets a status and a date): joins the index
SELECT ddb_update_item('orders', '{"orderId": "o4"}', 'SET #s = :s, createdAt = :d', names => '{"#s": "status"}', vals => '{":s": "PENDING", ":d": "2024-02-01"}');
-- only a projected attribute changed: the entry is updated in place
SELECT ddb_update_item('orders', '{"orderId": "o3"}', 'SET #t = :t', names => '{"#t": "total"}', vals => '{":t": 33}');
-- nothing relevant changed (same values): the entry stays, not even rewritten
CREATE TEMP TABLE entry_xmin AS
  SELECT "orderId", xmin::text AS x FROM ddb_internal."orders__StatusIndex";
SELECT ddb_put_item('orders', '{"orderId": "o3", "status": "PENDING", "createdAt": "2024-01-03", "total": 33}');
SELECT i."orderId", i.xmin::text = e.x AS untouched
FROM ddb_internal."orders__StatusIndex" i JOIN entry_xmin e USING ("orderId") ORDER BY 1;
-- sort key only missing: sparse, no entry
SELECT ddb_put_item('orders', '{"orderId": "o5", "status": "PENDING"}');
SELECT ddb_verify_gsi('orders');
SELECT status, "createdAt", "orderId", item FROM ddb_internal."orders__StatusIndex" ORDER BY 1, 2, 3;
-- delete through the API
SELECT ddb_delete_item('orders', '{"orderId": "o4"}');
SELECT ddb_verify_gsi('orders');
SELECT status, "createdAt", "orderId" FROM ddb_internal."orders__StatusIndex" ORDER BY 1, 2, 3;

-- ------------------------------------------------------------------------
-- The same transitions through SQL: INSERT, UPDATE, DELETE, COPY fire the
-- maintenance trigger.
-- ------------------------------------------------------------------------
INSERT INTO orders VALUES ('o6', '{"status": "PENDING", "createdAt": "2024-03-01", "total": 60}');
UPDATE orders SET item = item || '{"status": "CANCELLED"}' WHERE "orderId" = 'o6';   -- key changed
UPDATE orders SET item = item - 'status' WHERE "orderId" = 'o3';                      -- key removed
UPDATE orders SET item = item || '{"status": "PENDING", "createdAt": "2024-01-02"}' WHERE "orderId" = 'o2';  -- key added
UPDATE orders SET item = item || '{"total": 11}' WHERE "orderId" = 'o1';              -- projection changed
TRUNCATE entry_xmin;
INSERT INTO entry_xmin SELECT "orderId", xmin::text FROM ddb_internal."orders__StatusIndex";
UPDATE orders SET item = item WHERE "orderId" = 'o1';                                 -- nothing changed
UPDATE orders SET item = item || '{"total": 20}' WHERE "orderId" = 'o2';              -- same value
SELECT i."orderId", i.xmin::text = e.x AS untouched
FROM ddb_internal."orders__StatusIndex" i JOIN entry_xmin e USING ("orderId") ORDER BY 1;
SELECT ddb_verify_gsi('orders');
DELETE FROM orders WHERE "orderId" = 'o6';
COPY orders FROM stdin;
o7	{"status": "PENDING", "createdAt": "2024-04-01"}
o8	{"other": true}
\.
SELECT ddb_verify_gsi('orders');
SELECT status, "createdAt", "orderId", item FROM ddb_internal."orders__StatusIndex" ORDER BY 1, 2, 3;
-- A multi-row UPDATE changing many keys at once.
UPDATE orders SET item = item || '{"status": "ARCHIVED"}' WHERE item ? 'status';
SELECT ddb_verify_gsi('orders');
SELECT x->>'orderId' FROM ddb_query('orders', '#s = :s', '{":s": "ARCHIVED"}', '{"#s": "status"}', index_name => 'StatusIndex') x;
-- A rolled-back write leaves the index as it was.
BEGIN;
SELECT ddb_put_item('orders', '{"orderId": "o9", "status": "PENDING", "createdAt": "2024-05-01"}');
DELETE FROM orders WHERE "orderId" = 'o1';
ROLLBACK;
SELECT ddb_verify_gsi('orders');

-- ------------------------------------------------------------------------
-- Type errors: a GSI key of the wrong type (or an empty string) is a
-- ValidationException and changes nothing, whatever the write path.
-- ------------------------------------------------------------------------
SELECT sqlstate_of($$SELECT ddb_put_item('orders', '{"orderId": "o1", "status": 5, "createdAt": "2024-01-01"}')$$);
SELECT sqlstate_of($$SELECT ddb_put_item('orders', '{"orderId": "o1", "status": "X", "createdAt": 7}')$$);
SELECT sqlstate_of($$SELECT ddb_put_item('orders', '{"orderId": "o1", "status": "", "createdAt": "2024-01-01"}')$$);
SELECT sqlstate_of($$SELECT ddb_update_item('orders', '{"orderId": "o1"}', 'SET #s = :s', names => '{"#s": "status"}', vals => '{":s": {"$SS": ["a"]}}')$$);
SELECT sqlstate_of($$UPDATE orders SET item = item || '{"status": true}' WHERE "orderId" = 'o1'$$);
SELECT sqlstate_of($$INSERT INTO orders VALUES ('o10', '{"status": null, "createdAt": "x"}')$$);
SELECT ddb_get_item('orders', '{"orderId": "o1"}');
SELECT ddb_verify_gsi('orders');

-- An index key longer than the engine's 3200-byte key limit (index keys
-- plus table keys, each within DynamoDB's limits) is refused.
SELECT sqlstate_of($$SELECT ddb_put_item('orders', jsonb_build_object('orderId', repeat('i', 2000), 'status', repeat('s', 2000), 'createdAt', repeat('c', 1000)))$$);
SELECT ddb_verify_gsi('orders');

-- ------------------------------------------------------------------------
-- Pagination on an index: LastEvaluatedKey has the index keys and the
-- table keys; following it covers every entry exactly once, both ways,
-- including entries with equal index keys.
-- ------------------------------------------------------------------------
SELECT ddb_put_item('orders', jsonb_build_object('orderId', 'p' || i, 'status', 'PAGED',
                    'createdAt', '2024-06-0' || (i % 3)))
FROM generate_series(1, 7) i;
SELECT ddb_query_page('orders', '#s = :s', '{":s": "PAGED"}', '{"#s": "status"}', index_name => 'StatusIndex', "limit" => 3);
WITH RECURSIVE pages(n, page) AS (
  SELECT 1, ddb_query_page('orders', '#s = :s', '{":s": "PAGED"}', '{"#s": "status"}', index_name => 'StatusIndex', "limit" => 2)
  UNION ALL
  SELECT n + 1, ddb_query_page('orders', '#s = :s', '{":s": "PAGED"}', '{"#s": "status"}', index_name => 'StatusIndex',
                               "limit" => 2, start_key => page->'LastEvaluatedKey')
  FROM pages WHERE page ? 'LastEvaluatedKey')
SELECT n, (SELECT string_agg(i->>'orderId', ' ') FROM jsonb_array_elements(page->'Items') i) AS items
FROM pages ORDER BY n;
WITH RECURSIVE pages(n, page) AS (
  SELECT 1, ddb_query_page('orders', '#s = :s', '{":s": "PAGED"}', '{"#s": "status"}', index_name => 'StatusIndex', forward => false, "limit" => 3)
  UNION ALL
  SELECT n + 1, ddb_query_page('orders', '#s = :s', '{":s": "PAGED"}', '{"#s": "status"}', index_name => 'StatusIndex',
                               forward => false, "limit" => 3, start_key => page->'LastEvaluatedKey')
  FROM pages WHERE page ? 'LastEvaluatedKey')
SELECT n, (SELECT string_agg(i->>'orderId', ' ') FROM jsonb_array_elements(page->'Items') i) AS items
FROM pages ORDER BY n;
-- Scan pages on the index, too.
WITH RECURSIVE pages(n, page) AS (
  SELECT 1, ddb_scan_page('orders', index_name => 'StatusIndex', "limit" => 4)
  UNION ALL
  SELECT n + 1, ddb_scan_page('orders', index_name => 'StatusIndex', "limit" => 4, start_key => page->'LastEvaluatedKey')
  FROM pages WHERE page ? 'LastEvaluatedKey')
SELECT count(*) AS entries, count(DISTINCT i->>'orderId') AS distinct_items
FROM pages, jsonb_array_elements(page->'Items') i;
-- A start key without the table's keys is refused.
SELECT sqlstate_of($$SELECT ddb_query_page('orders', '#s = :s', '{":s": "PAGED"}', '{"#s": "status"}', index_name => 'StatusIndex', start_key => '{"status": "PAGED", "createdAt": "2024-06-01"}')$$);
SELECT ddb_verify_gsi('orders');

-- ------------------------------------------------------------------------
-- A sparse index holding only flagged items (KEYS_ONLY).
-- ------------------------------------------------------------------------
SELECT ddb_create_table('tickets', 'id', 'N');
SELECT ddb_put_item('tickets', jsonb_build_object('id', i, 'title', 't' || i)) FROM generate_series(1, 20) i;
SELECT ddb_update_item('tickets', jsonb_build_object('id', i), 'SET flagged = :f', vals => '{":f": "Y"}')
FROM generate_series(3, 20, 5) i;
SELECT ddb_create_gsi('tickets', 'FlaggedIndex', 'flagged', projection => 'KEYS_ONLY');
SELECT x FROM ddb_query('tickets', 'flagged = :f', '{":f": "Y"}', index_name => 'FlaggedIndex') x ORDER BY (x->>'id')::int;
-- Unflagging removes the entry.  A GSI answers only with what it holds
-- (DynamoDB reads no table for it): a projection or a filter naming an
-- attribute it does not project is refused, in DynamoDB's words, each
-- attribute named once, by its top-level name; its keys and the table's
-- are projected.
SELECT ddb_update_item('tickets', '{"id": 8}', 'REMOVE flagged');
SELECT x FROM ddb_query('tickets', 'flagged = :f', '{":f": "Y"}', projection => 'id, flagged',
                        index_name => 'FlaggedIndex') x ORDER BY (x->>'id')::int;
SELECT sqlstate_of($$SELECT ddb_query('tickets', 'flagged = :f', '{":f": "Y"}', projection => 'id, title',
                        index_name => 'FlaggedIndex')$$);
SELECT sqlstate_of($$SELECT ddb_query('tickets', 'flagged = :f', '{":f": "Y"}',
                        projection => 'title.a, id, #n[0], price, title.b', names => '{"#n": "note"}',
                        index_name => 'FlaggedIndex')$$);
SELECT sqlstate_of($$SELECT ddb_query('tickets', 'flagged = :f', '{":f": "Y", ":t": "t3"}',
                        filter => 'title = :t OR size(id) > :f', index_name => 'FlaggedIndex')$$);
-- the request's key values are judged before, the projection before the
-- filter; Scan and the protocol's legacy forms alike
SELECT sqlstate_of($$SELECT ddb_query('tickets', 'flagged = :f', '{":f": 1}', projection => 'title',
                        index_name => 'FlaggedIndex')$$);
SELECT sqlstate_of($$SELECT ddb_scan('tickets', projection => 'title', index_name => 'FlaggedIndex',
                        start_key => '{"id": 3}')$$);
SELECT sqlstate_of($$SELECT ddb_query('tickets', 'flagged = :f', '{":f": "Y", ":t": "t3"}',
                        filter => 'title = :t', projection => 'price', index_name => 'FlaggedIndex')$$);
SELECT sqlstate_of($$SELECT ddb_scan('tickets', filter => 'attribute_exists(title)', index_name => 'FlaggedIndex')$$);
SELECT sqlstate_of($$SELECT ddb_api('Scan', '{"TableName": "tickets", "IndexName": "FlaggedIndex", "AttributesToGet": ["id", "title"]}')$$);
SELECT sqlstate_of($$SELECT ddb_api('Query', '{"TableName": "tickets", "IndexName": "FlaggedIndex",
  "KeyConditions": {"flagged": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "Y"}]}},
  "QueryFilter": {"title": {"ComparisonOperator": "NOT_NULL"}}}')$$);
SELECT ddb_api('Scan', '{"TableName": "tickets", "IndexName": "FlaggedIndex", "ProjectionExpression": "id",
  "FilterExpression": "id > :n AND flagged = :f", "ExpressionAttributeValues": {":n": {"N": "10"}, ":f": {"S": "Y"}}}') - 'ScannedCount';
SELECT ddb_verify_gsi('tickets');

-- ------------------------------------------------------------------------
-- Adjacency list, many-to-many: user-group edges PK=USER#u SK=GROUP#g;
-- the inverted index (SK as partition key, PK as sort key) answers
-- "members of a group".  Its table keys are its index keys: two columns.
-- ------------------------------------------------------------------------
SELECT ddb_create_table('edges', 'PK', 'S', 'SK', 'S');
SELECT ddb_create_gsi('edges', 'Inverted', 'SK', sort_key => 'PK', projection => 'INCLUDE',
                      non_key_attributes => ARRAY['role']);
INSERT INTO edges VALUES
  ('USER#ann', 'GROUP#admins', '{"role": "owner", "since": 2020}'),
  ('USER#ann', 'GROUP#devs', '{"role": "member", "since": 2021}'),
  ('USER#bob', 'GROUP#devs', '{"role": "owner", "since": 2019}'),
  ('USER#cid', 'GROUP#devs', '{"since": 2022}'),
  ('USER#ann', 'PROFILE', '{"name": "Ann"}');
SELECT x FROM ddb_query('edges', 'SK = :g', '{":g": "GROUP#devs"}', index_name => 'Inverted') x;
-- and the groups of a user, from the table
SELECT x->>'SK' FROM ddb_query('edges', 'PK = :u AND begins_with(SK, :p)', '{":u": "USER#ann", ":p": "GROUP#"}') x;
SELECT attname FROM pg_attribute WHERE attrelid = (SELECT index_table FROM ddb_internal.gsi WHERE index_name = 'Inverted') AND attnum > 0 ORDER BY attnum;
-- an INCLUDE attribute changes: the entry follows; a non-projected one: nothing to do
UPDATE edges SET item = item || '{"role": "admin"}' WHERE "PK" = 'USER#cid';
UPDATE edges SET item = item || '{"since": 2023}' WHERE "PK" = 'USER#bob';
SELECT x FROM ddb_query('edges', 'SK = :g', '{":g": "GROUP#devs"}', index_name => 'Inverted') x;
SELECT ddb_verify_gsi('edges');

-- ------------------------------------------------------------------------
-- Index overloading: one GSI over generic GSI1PK/GSI1SK attributes serves
-- several entity types.
-- ------------------------------------------------------------------------
SELECT ddb_create_table('app', 'PK', 'S', 'SK', 'S');
SELECT ddb_create_gsi('app', 'GSI1', 'GSI1PK', sort_key => 'GSI1SK');
SELECT ddb_put_item('app', '{"PK": "EMP#1", "SK": "EMP#1", "name": "Ann", "GSI1PK": "DEPT#eng", "GSI1SK": "EMP#Ann"}');
SELECT ddb_put_item('app', '{"PK": "EMP#2", "SK": "EMP#2", "name": "Bob", "GSI1PK": "DEPT#eng", "GSI1SK": "EMP#Bob"}');
SELECT ddb_put_item('app', '{"PK": "ORD#9", "SK": "ORD#9", "total": 5, "GSI1PK": "CUST#7", "GSI1SK": "2024-01-09"}');
SELECT ddb_put_item('app', '{"PK": "ORD#8", "SK": "ORD#8", "total": 6, "GSI1PK": "CUST#7", "GSI1SK": "2024-01-08"}');
SELECT ddb_put_item('app', '{"PK": "DEPT#eng", "SK": "META", "floor": 3}');
-- employees of a department; a customer's orders by date
SELECT x->>'name' FROM ddb_query('app', 'GSI1PK = :d AND begins_with(GSI1SK, :e)', '{":d": "DEPT#eng", ":e": "EMP#"}', index_name => 'GSI1') x;
SELECT x->>'PK' FROM ddb_query('app', 'GSI1PK = :c AND GSI1SK BETWEEN :a AND :b', '{":c": "CUST#7", ":a": "2024-01-01", ":b": "2024-01-31"}', index_name => 'GSI1') x;
SELECT ddb_verify_gsi('app');

-- ------------------------------------------------------------------------
-- Several indexes on one table, each maintained; DescribeTable lists them.
-- ------------------------------------------------------------------------
SELECT ddb_create_gsi('orders', 'TotalIndex', 'total', 'N', projection => 'INCLUDE',
                      non_key_attributes => ARRAY['status']);
SELECT ddb_put_item('orders', '{"orderId": "t1", "total": 42, "status": "PENDING", "createdAt": "2024-07-01", "x": 1}');
SELECT x FROM ddb_query('orders', '#t = :t', '{":t": 42}', '{"#t": "total"}', index_name => 'TotalIndex') x;
SELECT sqlstate_of($$SELECT ddb_put_item('orders', '{"orderId": "t2", "total": "42"}')$$);
SELECT ddb_verify_gsi('orders');
SELECT ddb_verify_gsi('orders', 'TotalIndex');
ANALYZE orders, ddb_internal."orders__StatusIndex", ddb_internal."orders__TotalIndex";
SELECT jsonb_pretty(ddb_describe_table('orders') - '{TableSizeBytes,TableId,CreationDateTime}'::text[] #- '{BillingModeSummary,LastUpdateToPayPerRequestDateTime}' #- '{GlobalSecondaryIndexes,0,IndexSizeBytes}'
                    #- '{GlobalSecondaryIndexes,1,IndexSizeBytes}');

-- ------------------------------------------------------------------------
-- Creation errors.
-- ------------------------------------------------------------------------
SELECT sqlstate_of($$SELECT ddb_create_gsi('orders', 'StatusIndex', 'status')$$);
SELECT sqlstate_of($$SELECT ddb_create_gsi('orders', 'ab', 'status')$$);
SELECT sqlstate_of($$SELECT ddb_create_gsi('orders', 'bad name', 'status')$$);
SELECT sqlstate_of($$SELECT ddb_create_gsi('orders', 'Idx1', 'status', 'X')$$);
SELECT sqlstate_of($$SELECT ddb_create_gsi('orders', 'Idx1', 'status', projection => 'SOME')$$);
SELECT sqlstate_of($$SELECT ddb_create_gsi('orders', 'Idx1', 'status', projection => 'INCLUDE')$$);
SELECT sqlstate_of($$SELECT ddb_create_gsi('orders', 'Idx1', 'status', non_key_attributes => ARRAY['a'])$$);
SELECT sqlstate_of($$SELECT ddb_create_gsi('orders', 'Idx1', 'status', projection => 'KEYS_ONLY', non_key_attributes => ARRAY['a'])$$);
SELECT sqlstate_of($$SELECT ddb_create_gsi('orders', 'Idx1', 'status', projection => 'INCLUDE',
                                           non_key_attributes => (SELECT array_agg('a' || i) FROM generate_series(1, 21) i))$$);
SELECT sqlstate_of($$SELECT ddb_create_gsi('orders', 'Idx1', 'orderId', 'N')$$);
SELECT sqlstate_of($$SELECT ddb_create_gsi('orders', 'Idx1', 'a', sort_key => 'a')$$);
-- status is a key of type S in StatusIndex: another index cannot make it N
-- (backfilling over items of the wrong type is in api_indexes.sql)
SELECT sqlstate_of($$SELECT ddb_create_gsi('orders', 'Idx1', 'status', 'N')$$);
SELECT count(*) FROM ddb_internal.gsi WHERE index_name = 'Idx1';
-- at most 20 indexes per table
SELECT ddb_create_table('many', 'pk');
SELECT ddb_create_gsi('many', 'idx' || i, 'a' || i) FROM generate_series(1, 20) i;
SELECT sqlstate_of($$SELECT ddb_create_gsi('many', 'idx21', 'a21')$$);
SELECT ddb_put_item('many', '{"pk": "x", "a1": "1", "a20": "20"}');
SELECT ddb_verify_gsi('many') -> 'indexes' -> 0;
DROP TABLE many;
-- index table names longer than 63 bytes get a hash suffix
SELECT ddb_create_table(repeat('x', 60), 'pk');
SELECT ddb_create_gsi(repeat('x', 60)::regclass, 'LongIndex', 'a');
SELECT ddb_create_gsi(repeat('x', 60)::regclass, 'LongIndex2', 'a');
SELECT length(index_table::text) - length('ddb_internal.') AS len, index_table::text ~ '_[0-9a-f]{8}$' AS suffixed
FROM ddb_internal.gsi WHERE index_name LIKE 'LongIndex%';
SELECT ddb_put_item(repeat('x', 60)::regclass, '{"pk": "k", "a": "v"}');
SELECT ddb_verify_gsi(repeat('x', 60)::regclass);
-- ddb_list_tables() does not show index tables
SELECT count(*) AS index_tables_listed FROM ddb_list_tables() t
WHERE t IN (SELECT index_table::regclass::text FROM ddb_internal.gsi);
DO $$ BEGIN EXECUTE format('DROP TABLE %I', repeat('x', 60)); END $$;

-- ------------------------------------------------------------------------
-- TRUNCATE empties the indexes.
-- ------------------------------------------------------------------------
TRUNCATE tickets;
SELECT count(*) FROM ddb_query('tickets', 'flagged = :f', '{":f": "Y"}', index_name => 'FlaggedIndex');
SELECT ddb_put_item('tickets', '{"id": 1, "flagged": "Y"}');
SELECT ddb_verify_gsi('tickets');

-- ------------------------------------------------------------------------
-- Dropping an index removes its table and, with the last one, disables the
-- triggers (DROP TRIGGER would lock readers out).
-- ------------------------------------------------------------------------
SELECT ddb_drop_gsi('orders', 'TotalIndex');
SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = 'orders'::regclass ORDER BY 1;
SELECT ddb_drop_gsi('orders', 'StatusIndex');
SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = 'orders'::regclass ORDER BY 1;
SELECT count(*) FROM ddb_internal.gsi WHERE base = 'orders'::regclass;
SELECT sqlstate_of($$SELECT ddb_drop_gsi('orders', 'StatusIndex')$$);
SELECT ddb_describe_table('orders') -> 'GlobalSecondaryIndexes';
-- writes after the drop need no index
SELECT ddb_put_item('orders', '{"orderId": "z", "status": 1}');
SELECT ddb_delete_item('orders', '{"orderId": "z"}');

-- ------------------------------------------------------------------------
-- DROP TABLE drops the table's indexes and their catalog rows.
-- ------------------------------------------------------------------------
DROP TABLE edges, app, tickets;
SELECT count(*) FROM ddb_internal.gsi;
SELECT relname FROM pg_class WHERE relnamespace = 'ddb_internal'::regnamespace AND relkind = 'r' ORDER BY 1;

-- ------------------------------------------------------------------------
-- Privileges: querying an index needs SELECT on the table only; a writer
-- without rights on the index tables still maintains them.
-- ------------------------------------------------------------------------
SELECT ddb_create_gsi('orders', 'StatusIndex', 'status', sort_key => 'createdAt');
CREATE ROLE gsi_user;
GRANT SELECT, INSERT, UPDATE, DELETE ON orders TO gsi_user;
SET ROLE gsi_user;
SELECT count(*) FROM ddb_query('orders', '#s = :s', '{":s": "ARCHIVED"}', '{"#s": "status"}', index_name => 'StatusIndex');
SELECT ddb_put_item('orders', '{"orderId": "u1", "status": "NEW", "createdAt": "2025"}');
UPDATE orders SET item = item || '{"status": "OLD"}' WHERE "orderId" = 'u1';
SELECT sqlstate_of($$SELECT ddb_drop_gsi('orders', 'StatusIndex')$$);
RESET ROLE;
SELECT ddb_verify_gsi('orders');
-- A table's owner needs no rights on ddb_internal to create and drop indexes.
CREATE ROLE gsi_owner;
ALTER TABLE orders OWNER TO gsi_owner;
SET ROLE gsi_owner;
SELECT ddb_create_gsi('orders', 'OwnerIndex', 'createdAt');
SELECT ddb_put_item('orders', '{"orderId": "u2", "createdAt": "2026"}');
-- the index table belongs to the extension's owner: not the user's to change
TRUNCATE ddb_internal."orders__OwnerIndex";
SELECT ddb_drop_gsi('orders', 'OwnerIndex');
RESET ROLE;
SELECT ddb_verify_gsi('orders');
DROP TABLE orders;
DROP ROLE gsi_user, gsi_owner;
SELECT count(*) FROM ddb_internal.gsi;
DROP FUNCTION sqlstate_of;
