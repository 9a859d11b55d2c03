-- Items built once (issue 19): GetItem, Query, Scan and BatchGetItem build
-- each API item straight from the stored version (its item column and its
-- decoded key), and ddb_api writes typed JSON as it reads.  This proves
-- those items against PostgreSQL's own jsonb operators on the same rows
-- (the key attributes, then the item column: a name given twice takes the
-- item column's value), for every attribute type, nested values, more
-- pairs than jsonb's offset stride (32), attribute names that sort before,
-- between and after the key names, and number and binary keys; through the
-- SQL functions and through ddb_api, with projections and pages.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
CREATE SCHEMA items_built;
SET ddb.schema = items_built;
SET search_path = items_built, public;

SELECT ddb_create_table('Shapes', 'PK', 'S', 'SK', 'N') IS NOT NULL AS created;
-- every type, nested maps and lists, escapes, long numbers
SELECT ddb_put_item('Shapes', '{"PK": "p1", "SK": 1,
  "A": "short name", "PA": "same length, before PK", "PZ": "same length, after PK",
  "PKX": "longer than PK", "s": "quote \" backslash \\ newline \n tab \t bell \u0007 é ☃",
  "n": 12345678901234567890.123456789012345678, "neg": -0.000001, "zero": 0,
  "t": true, "f": false, "nul": null,
  "l": [1, "two", [3, {"four": 4}], {"$B": "AAEC"}, [], {}],
  "m": {"a": {"b": {"c": [1, 2, {"d": "deep"}]}}, "e": {}, "n": 1.5},
  "b": {"$B": "3q2+7w=="}, "ss": {"$SS": ["x", "y"]}, "ns": {"$NS": [1, 2.5]},
  "bs": {"$BS": ["AQ==", "Ag=="]}}', NULL) IS NULL AS put;
-- 40 attributes: more pairs than jsonb's offset stride
SELECT ddb_put_item('Shapes', (SELECT jsonb_object_agg('attr' || i, i) || '{"PK": "p1", "SK": 2}'
  FROM generate_series(1, 40) i), NULL) IS NULL AS put;
-- only the keys
SELECT ddb_put_item('Shapes', '{"PK": "p1", "SK": 3}', NULL) IS NULL AS put;
-- plain SQL may not put a key name in the item column (item_column.sql tests
-- the rule): the item keeps its keys from the key columns only
INSERT INTO "Shapes" VALUES ('p1', 4, '{"PK": "not the key", "SK": "nor this", "x": 1}');
INSERT INTO "Shapes" VALUES ('p1', 4, '{"x": 1}');
INSERT INTO "Shapes" VALUES ('p1', 5.50, '{}');

-- The oracle: the row's keys, then its item column, by jsonb's || operator.
CREATE FUNCTION oracle_item("PK" text, "SK" numeric, item jsonb) RETURNS jsonb
LANGUAGE sql IMMUTABLE RETURN jsonb_build_object('PK', "PK", 'SK', "SK") || item;

-- GetItem (SQL): the same item, and the same text
SELECT s."SK", g = oracle_item(s."PK", s."SK", s.item) AS same,
       g::text = oracle_item(s."PK", s."SK", s.item)::text AS same_text
FROM "Shapes" s, ddb_get_item('Shapes', jsonb_build_object('PK', s."PK", 'SK', s."SK")) g
ORDER BY s."SK";
SELECT ddb_get_item('Shapes', '{"PK": "p1", "SK": 4}');
SELECT ddb_get_item('Shapes', '{"PK": "p1", "SK": 5.5}');
SELECT ddb_get_item('Shapes', '{"PK": "p1", "SK": 1}');

-- Query (SQL), both directions, and a page: every item, in order
SELECT array_agg(q::text) = (SELECT array_agg(oracle_item("PK", "SK", item)::text ORDER BY "SK") FROM "Shapes")
  AS query_forward
FROM ddb_query('Shapes', 'PK = :p', '{":p": "p1"}') q;
SELECT array_agg(q::text) = (SELECT array_agg(oracle_item("PK", "SK", item)::text ORDER BY "SK" DESC) FROM "Shapes")
  AS query_backward
FROM ddb_query('Shapes', 'PK = :p', '{":p": "p1"}', forward => false) q;
SELECT ddb_query_page('Shapes', 'PK = :p', '{":p": "p1"}', "limit" => 2)
  = jsonb_build_object('Items', (SELECT jsonb_agg(oracle_item("PK", "SK", item) ORDER BY "SK") FROM
      (SELECT * FROM "Shapes" ORDER BY "SK" LIMIT 2) f),
    'Count', 2, 'ScannedCount', 2, 'LastEvaluatedKey', '{"PK": "p1", "SK": 2}'::jsonb) AS query_page;
SELECT (ddb_scan_page('Shapes') -> 'Items') = (SELECT jsonb_agg(oracle_item("PK", "SK", item) ORDER BY "SK") FROM "Shapes")
  AS scan_page;
-- projections of nested paths and of the keys
SELECT q FROM ddb_query('Shapes', 'PK = :p AND SK = :one', '{":p": "p1", ":one": 1}',
  projection => 'm.a.b.c[2], l[3], SK, b, ss') q;
SELECT ddb_get_item('Shapes', '{"PK": "p1", "SK": 2}', 'attr40, PK, attr1');

-- ddb_api: each typed item is the typed form of the SQL item
SELECT s."SK", ddb_from_typed_json(ddb_api('GetItem', jsonb_build_object('TableName', 'Shapes',
         'Key', ddb_to_typed_json(jsonb_build_object('PK', s."PK", 'SK', s."SK")))) -> 'Item')
       = oracle_item(s."PK", s."SK", s.item) AS same
FROM "Shapes" s ORDER BY s."SK";
SELECT ddb_api_text('GetItem', '{"TableName": "Shapes", "Key": {"PK": {"S": "p1"}, "SK": {"N": "1"}}}');
SELECT ddb_api_text('GetItem', '{"TableName": "Shapes", "Key": {"PK": {"S": "p1"}, "SK": {"N": "4"}},
  "ProjectionExpression": "x, PK", "ReturnConsumedCapacity": "TOTAL"}');
SELECT (SELECT array_agg(ddb_from_typed_json(i)) FROM jsonb_array_elements(r -> 'Items') i)
       = (SELECT array_agg(oracle_item("PK", "SK", item) ORDER BY "SK") FROM "Shapes") AS api_query,
       r -> 'Count' AS count, r -> 'ConsumedCapacity' AS capacity
FROM ddb_api('Query', '{"TableName": "Shapes", "KeyConditionExpression": "PK = :p",
  "ExpressionAttributeValues": {":p": {"S": "p1"}}, "ReturnConsumedCapacity": "TOTAL"}') r;
-- the whole typed text of a page, projected and filtered, with LastEvaluatedKey
SELECT ddb_api_text('Query', '{"TableName": "Shapes", "KeyConditionExpression": "PK = :p",
  "FilterExpression": "attribute_exists(m) OR attribute_exists(x)",
  "ProjectionExpression": "SK, m.a, bs, ns, s, x", "ExpressionAttributeValues": {":p": {"S": "p1"}},
  "Limit": 4}');
SELECT ddb_api_text('Scan', '{"TableName": "Shapes", "Limit": 1,
  "ExclusiveStartKey": {"PK": {"S": "p1"}, "SK": {"N": "2"}}}');
SELECT ddb_api('Query', '{"TableName": "Shapes", "KeyConditionExpression": "PK = :p",
  "ExpressionAttributeValues": {":p": {"S": "p1"}}, "Select": "COUNT"}');

-- BatchGetItem, SQL and ddb_api
-- (responses are unordered: compared as sorted texts)
SELECT (SELECT array_agg(i::text ORDER BY i::text) FROM jsonb_array_elements(r #> '{Responses,Shapes}') i)
       = (SELECT array_agg(oracle_item("PK", "SK", item)::text ORDER BY oracle_item("PK", "SK", item)::text)
          FROM "Shapes") AS batch_sql
FROM ddb_batch_get_item('{"Shapes": {"Keys": [{"PK": "p1", "SK": 1}, {"PK": "p1", "SK": 2},
  {"PK": "p1", "SK": 3}, {"PK": "p1", "SK": 4}, {"PK": "p1", "SK": 5.5}, {"PK": "p1", "SK": 6}]}}') r;
SELECT (SELECT array_agg(ddb_from_typed_json(i)::text ORDER BY ddb_from_typed_json(i)::text)
          FROM jsonb_array_elements(r #> '{Responses,Shapes}') i)
       = (SELECT array_agg(oracle_item("PK", "SK", item)::text ORDER BY oracle_item("PK", "SK", item)::text)
          FROM "Shapes") AS batch_api
FROM ddb_api('BatchGetItem', '{"RequestItems": {"Shapes": {"Keys": [
  {"PK": {"S": "p1"}, "SK": {"N": "1"}}, {"PK": {"S": "p1"}, "SK": {"N": "2"}},
  {"PK": {"S": "p1"}, "SK": {"N": "3"}}, {"PK": {"S": "p1"}, "SK": {"N": "4"}},
  {"PK": {"S": "p1"}, "SK": {"N": "5.5"}}]}}}') r;

-- A binary partition key and a number-only key: the key values as the
-- document form writes them ({"$B": ...}, numbers)
SELECT ddb_create_table('Blobs', 'id', 'B') IS NOT NULL AS created;
SELECT ddb_put_item('Blobs', '{"id": {"$B": "AAEC/w=="}, "v": {"x": [1, {"$B": "AQ=="}]}}', NULL) IS NULL AS put;
SELECT ddb_get_item('Blobs', '{"id": {"$B": "AAEC/w=="}}');
SELECT ddb_api_text('GetItem', '{"TableName": "Blobs", "Key": {"id": {"B": "AAEC/w=="}}}');
SELECT ddb_scan_page('Blobs');
SELECT ddb_create_table('Numbers', 'n', 'N') IS NOT NULL AS created;
SELECT ddb_put_item('Numbers', jsonb_build_object('n', 1e3, 'big', 99999999999999999999999999999999999999), NULL) IS NULL AS put;
SELECT ddb_get_item('Numbers', '{"n": 1000}'), ddb_api_text('Scan', '{"TableName": "Numbers"}');

-- An item read through a local secondary index that does not project it
-- comes whole from the table (a second lookup of the stored version)
SELECT ddb_api('CreateTable', '{"TableName": "Indexed",
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
    {"AttributeName": "sk", "AttributeType": "S"}, {"AttributeName": "at", "AttributeType": "N"}],
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "LocalSecondaryIndexes": [{"IndexName": "ByAt", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
    {"AttributeName": "at", "KeyType": "RANGE"}], "Projection": {"ProjectionType": "KEYS_ONLY"}}],
  "BillingMode": "PAY_PER_REQUEST"}') IS NOT NULL AS created;
SELECT ddb_put_item('Indexed', jsonb_build_object('pk', 'a', 'sk', 's' || i, 'at', 10 - i, 'm', jsonb_build_object('i', i)), NULL)
FROM generate_series(1, 3) i;
SELECT ddb_api_text('Query', '{"TableName": "Indexed", "IndexName": "ByAt", "KeyConditionExpression": "pk = :p",
  "ExpressionAttributeValues": {":p": {"S": "a"}}, "Select": "ALL_ATTRIBUTES"}');
SELECT q FROM ddb_query('Indexed', 'pk = :p', '{":p": "a"}', index_name => 'ByAt', projection => 'm, sk') q;


-- Table names resolve through a cache that any change of a table or a
-- schema empties: renames, drops, a new table under an old name, another
-- ddb.schema, a renamed schema.
CREATE SCHEMA items_names;
SET ddb.schema = items_names;
SELECT ddb_create_table('Named', 'k') IS NOT NULL AS created;
SELECT ddb_put_item('Named', '{"k": "a", "v": 1}', NULL) IS NULL AS put;
SELECT ddb_get_item('Named', '{"k": "a"}');
ALTER TABLE items_names."Named" RENAME TO "Other";
SELECT ddb_get_item('Named', '{"k": "a"}');
SELECT ddb_get_item('Other', '{"k": "a"}');
ALTER TABLE items_names."Other" RENAME TO "Named";
SELECT ddb_get_item('Named', '{"k": "a"}');
SELECT ddb_api('DeleteTable', '{"TableName": "Named"}') -> 'TableDescription' -> 'TableName' AS deleted;
SELECT ddb_get_item('Named', '{"k": "a"}');
SELECT ddb_create_table('Named', 'id', 'N') IS NOT NULL AS created;
SELECT ddb_put_item('Named', '{"id": 7, "v": "new table"}', NULL) IS NULL AS put;
SELECT ddb_get_item('Named', '{"k": "a"}');
SELECT ddb_get_item('Named', '{"id": 7}');
SET ddb.schema = items_built;
SELECT ddb_get_item('Named', '{"id": 7}');
SET ddb.schema = items_names;
SELECT ddb_get_item('Named', '{"id": 7}');
ALTER SCHEMA items_names RENAME TO items_names2;
SELECT ddb_get_item('Named', '{"id": 7}');
SET ddb.schema = items_names2;
SELECT ddb_get_item('Named', '{"id": 7}');
RESET ddb.schema;
DROP SCHEMA items_names2 CASCADE;
RESET search_path;
DROP SCHEMA items_built CASCADE;
