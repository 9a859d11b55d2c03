-- Global secondary index definitions checked as DynamoDB checks them, and
-- created over existing items the way DynamoDB builds them: items whose
-- index key has the wrong type or is empty are left out and counted as
-- indexing violations, later writes of such values are refused.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
CREATE SCHEMA api_indexes;
SET ddb.schema = api_indexes;
SET search_path = api_indexes, public;

SELECT ddb_create_table('shop', 'pk', 'S', 'sk', 'S')::text AS created;
SELECT count(ddb_put_item('shop', jsonb_build_object('pk', 'p', 'sk', 's' || i, 'status',
         CASE i WHEN 1 THEN to_jsonb(42) WHEN 2 THEN to_jsonb(''::text) ELSE to_jsonb('OPEN'::text) END)))
FROM generate_series(1, 5) i;

-- two of five items have a bad index key: the index holds the other three
SELECT ddb_create_gsi('shop', 'ByStatus', 'status');
SELECT ddb_describe_table('shop') #> '{GlobalSecondaryIndexes,0,IndexingViolations}' AS violations;
SELECT count(*) AS entries FROM ddb_query('shop', '#s = :s', '{":s": "OPEN"}', '{"#s": "status"}',
                                          index_name => 'ByStatus');
SELECT ddb_verify_gsi('shop', 'ByStatus') -> 'indexes' -> 0 -> 'entries' AS verified_entries;
-- from now on such a write is refused
SELECT ddb_put_item('shop', '{"pk": "p", "sk": "s9", "status": 7}');

-- an attribute keys the table and its indexes with one type
SELECT ddb_create_gsi('shop', 'BySk', 'sk', 'N');
SELECT ddb_create_gsi('shop', 'ByStatus2', 'status', 'N');
-- the same index name again
SELECT ddb_create_gsi('shop', 'ByStatus', 'other');
-- NonKeyAttributes: no repeats, names of at most 255 bytes, at most 100 over all indexes
SELECT ddb_create_gsi('shop', 'Inc', 'x', projection => 'INCLUDE', non_key_attributes => '{a,b,a}');
SELECT ddb_create_gsi('shop', 'Inc', 'x', projection => 'INCLUDE',
                      non_key_attributes => ARRAY[repeat('n', 256)]);
SELECT ddb_create_gsi('shop', 'Inc' || i, 'x' || i, projection => 'INCLUDE',
                      non_key_attributes => (SELECT array_agg('i' || i || '_' || j) FROM generate_series(1, 20) j))
FROM generate_series(1, 5) i;
SELECT ddb_create_gsi('shop', 'Inc6', 'x6', projection => 'INCLUDE', non_key_attributes => '{one_more}');

-- index key attribute names up to 255 bytes work (hash-suffixed columns)
SELECT ddb_create_table('wide', 'id')::text AS wide;
SELECT ddb_put_item('wide', jsonb_build_object('id', '1', repeat('g', 255), 'G'));
SELECT ddb_create_gsi('wide', 'ByLong', repeat('g', 255));
SELECT i ? repeat('g', 255) AS long_key_returned
FROM ddb_query('wide', '#g = :g', '{":g": "G"}', jsonb_build_object('#g', repeat('g', 255)),
               index_name => 'ByLong') i;
SELECT ddb_describe_table('wide') #>> '{GlobalSecondaryIndexes,0,KeySchema,0,AttributeName}' = repeat('g', 255) AS described;

-- Index keys have the table keys' size limits, refused as DynamoDB refuses
-- them (a ValidationException, not an internal error over the endpoint);
-- the index's creation over existing items leaves such an item out.
SELECT ddb_api('CreateTable', '{"TableName": "sized", "BillingMode": "PAY_PER_REQUEST",
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"},
                           {"AttributeName": "g", "AttributeType": "S"}, {"AttributeName": "l", "AttributeType": "B"}],
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "GlobalSecondaryIndexes": [{"IndexName": "ByG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                              "Projection": {"ProjectionType": "KEYS_ONLY"}}],
  "LocalSecondaryIndexes": [{"IndexName": "ByL", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                                               {"AttributeName": "l", "KeyType": "RANGE"}],
                             "Projection": {"ProjectionType": "KEYS_ONLY"}}]}') IS NOT NULL AS created;
SELECT ddb_api('PutItem', jsonb_build_object('TableName', 'sized', 'Item', jsonb_build_object(
  'pk', '{"S": "a"}'::jsonb, 'sk', '{"S": "1"}'::jsonb, 'g', jsonb_build_object('S', repeat('g', 2048)))));
SELECT ddb_api('PutItem', jsonb_build_object('TableName', 'sized', 'Item', jsonb_build_object(
  'pk', '{"S": "a"}'::jsonb, 'sk', '{"S": "2"}'::jsonb, 'g', jsonb_build_object('S', repeat('g', 2049)))));
\echo :LAST_ERROR_SQLSTATE
SELECT ddb_api('PutItem', jsonb_build_object('TableName', 'sized', 'Item', jsonb_build_object(
  'pk', '{"S": "a"}'::jsonb, 'sk', '{"S": "3"}'::jsonb,
  'l', jsonb_build_object('B', translate(encode(convert_to(repeat('l', 1025), 'UTF8'), 'base64'), E'\n', '')))));
SELECT ddb_update_item('sized', '{"pk": "a", "sk": "1"}', 'SET g = :g', vals => jsonb_build_object(':g', repeat('h', 2049)));
SELECT count(*) AS items, (SELECT count(*) FROM ddb_scan('sized', index_name => 'ByG')) AS indexed FROM ddb_scan('sized');
-- an index created over an item whose key is too long leaves it out
SELECT ddb_put_item('sized', jsonb_build_object('pk', 'b', 'sk', '1', 'x', repeat('x', 2049)));
SELECT ddb_put_item('sized', jsonb_build_object('pk', 'b', 'sk', '2', 'x', 'short'));
SELECT ddb_create_gsi('sized', 'ByX', 'x');
SELECT (SELECT gi -> 'IndexingViolations' FROM jsonb_array_elements(ddb_describe_table('sized') -> 'GlobalSecondaryIndexes') gi
         WHERE gi ->> 'IndexName' = 'ByX') AS violations,
       (SELECT count(*) FROM ddb_scan('sized', index_name => 'ByX')) AS entries;

-- an item the index left out can be fixed and deleted (its old version has
-- no entry to remove), and a write that keeps the bad key is refused
SELECT ddb_update_item('sized', '{"pk": "b", "sk": "1"}', 'SET y = :y', vals => '{":y": 1}');
SELECT ddb_update_item('sized', '{"pk": "b", "sk": "1"}', 'SET x = :x', vals => '{":x": "fixed"}');
SELECT ddb_verify_gsi('sized', 'ByX') -> 'indexes' -> 0 -> 'entries' AS entries_after_fix;
SELECT ddb_put_item('sized', jsonb_build_object('pk', 'b', 'sk', '3', 'x', repeat('x', 2049)));
SELECT ddb_delete_item('sized', '{"pk": "b", "sk": "1"}');
SELECT ddb_verify_gsi('sized', 'ByX') -> 'indexes' -> 0 -> 'entries' AS entries_left;
-- and an item left out is deleted as it is, in SQL too
SELECT ddb_put_item('sized', jsonb_build_object('pk', 'c', 'sk', '1', 'z', repeat('z', 2049)));
SELECT ddb_put_item('sized', jsonb_build_object('pk', 'c', 'sk', '2', 'z', repeat('z', 2049)));
SELECT ddb_create_gsi('sized', 'ByZ', 'z');
SELECT ddb_delete_item('sized', '{"pk": "c", "sk": "1"}');
DELETE FROM sized WHERE pk = 'c';
SELECT count(*) AS c_left FROM ddb_query('sized', 'pk = :p', '{":p": "c"}');

-- leave no index tables behind for other tests
DROP SCHEMA api_indexes CASCADE;
