-- DynamoDB names: table names up to 255 characters and key attribute names
-- up to 255 bytes work in every function and round-trip in DescribeTable,
-- stored as hash-suffixed relation and column names that plain SQL sees;
-- a missing table is ResourceNotFoundException from every function.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
CREATE SCHEMA names;
SET ddb.schema = names;
SET search_path = names, public;

-- a 255-character table name, a 255-byte partition key, a 100-byte sort key
SELECT ddb_create_table(repeat('T', 255), repeat('k', 255), 'S', repeat('s', 100), 'N')::text AS relation;
SELECT attname FROM pg_attribute WHERE attrelid = (SELECT relid FROM ddb_internal.tables
  WHERE table_name = repeat('T', 255)) AND attnum > 0 ORDER BY attnum;
SELECT d ->> 'TableName' = repeat('T', 255) AS name_round_trips,
       d #>> '{KeySchema,0,AttributeName}' = repeat('k', 255) AS pk_round_trips,
       d #>> '{KeySchema,1,AttributeName}' = repeat('s', 100) AS sk_round_trips,
       d ->> 'TableArn' = 'arn:aws:dynamodb:us-east-1:000000000000:table/' || repeat('T', 255) AS arn
FROM ddb_api('DescribeTable', jsonb_build_object('TableName', repeat('T', 255))) t(r),
     LATERAL (SELECT r -> 'Table') x(d);

-- items through both front doors, keyed by the long names
SELECT ddb_put_item(repeat('T', 255), jsonb_build_object(repeat('k', 255), 'a', repeat('s', 100), 1, 'v', 'x'));
SELECT ddb_api('PutItem', jsonb_build_object('TableName', repeat('T', 255), 'Item',
  jsonb_build_object(repeat('k', 255), '{"S": "a"}'::jsonb, repeat('s', 100), '{"N": "2"}'::jsonb))) AS put;
SELECT count(*) AS items, bool_and(i ? repeat('k', 255)) AS keys_named
FROM ddb_query(repeat('T', 255), '#k = :v', '{":v": "a"}', jsonb_build_object('#k', repeat('k', 255))) i;
SELECT ddb_update_item(repeat('T', 255), jsonb_build_object(repeat('k', 255), 'a', repeat('s', 100), 1),
                       'SET v = :y', vals => '{":y": "y"}', return_values => 'UPDATED_NEW');
SELECT ddb_api('DeleteItem', jsonb_build_object('TableName', repeat('T', 255), 'Key',
  jsonb_build_object(repeat('k', 255), '{"S": "a"}'::jsonb, repeat('s', 100), '{"N": "2"}'::jsonb),
  'ReturnValues', 'ALL_OLD')) -> 'Attributes' ?| ARRAY[repeat('k', 255)] AS deleted;
SELECT ddb_list_tables() = repeat('T', 255) AS listed;

-- Key attributes named as PostgreSQL's system columns (xmin, ctid, ...),
-- which DynamoDB does not reserve: a table's, an index's, the TTL
-- attribute.  Their columns take a hash-suffixed name, the catalog keeps
-- the attribute's, and the system columns still read as system columns.
SELECT ddb_api('CreateTable', '{"TableName": "sys", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "xmin", "KeyType": "HASH"}, {"AttributeName": "ctid", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "xmin", "AttributeType": "S"}, {"AttributeName": "ctid", "AttributeType": "N"},
    {"AttributeName": "tableoid", "AttributeType": "S"}, {"AttributeName": "cmin", "AttributeType": "N"},
    {"AttributeName": "cmax", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "gix", "Projection": {"ProjectionType": "ALL"},
    "KeySchema": [{"AttributeName": "tableoid", "KeyType": "HASH"}, {"AttributeName": "cmin", "KeyType": "RANGE"}]}],
  "LocalSecondaryIndexes": [{"IndexName": "lix", "Projection": {"ProjectionType": "KEYS_ONLY"},
    "KeySchema": [{"AttributeName": "xmin", "KeyType": "HASH"}, {"AttributeName": "cmax", "KeyType": "RANGE"}]}]}')
  #> '{TableDescription,KeySchema}' AS keys;
SELECT ddb_api('UpdateTimeToLive', '{"TableName": "sys",
  "TimeToLiveSpecification": {"Enabled": true, "AttributeName": "xmax"}}');
SELECT ddb_api('UpdateTable', '{"TableName": "sys",
  "AttributeDefinitions": [{"AttributeName": "oid", "AttributeType": "S"}, {"AttributeName": "xmax", "AttributeType": "N"}],
  "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "g2x", "Projection": {"ProjectionType": "KEYS_ONLY"},
    "KeySchema": [{"AttributeName": "oid", "KeyType": "HASH"}, {"AttributeName": "xmax", "KeyType": "RANGE"}]}}]}')
  #> '{TableDescription,GlobalSecondaryIndexes,0,KeySchema}' AS created_index;
SELECT attname FROM pg_attribute WHERE attrelid = 'sys'::regclass AND attnum > 0 ORDER BY attnum;
SELECT ddb_api('PutItem', '{"TableName": "sys", "Item": {"xmin": {"S": "a"}, "ctid": {"N": "1"},
  "tableoid": {"S": "t"}, "cmin": {"N": "5"}, "cmax": {"S": "c"}, "oid": {"S": "o"}, "xmax": {"N": "4000000000"}}}');
SELECT ddb_put_item('sys', '{"xmin": "a", "ctid": 2, "tableoid": "t", "cmin": 6, "cmax": "b"}');
INSERT INTO sys VALUES ('a', 3, '{"tableoid": "u", "cmin": 7, "cmax": "a"}');
INSERT INTO sys VALUES ('a', 4, '{"xmin": "u"}');
SELECT ddb_api('GetItem', '{"TableName": "sys", "Key": {"xmin": {"S": "a"}, "ctid": {"N": "1"}}}');
SELECT i FROM ddb_query('sys', 'xmin = :a AND ctid > :z', '{":a": "a", ":z": 1}') i;
SELECT ddb_api('Query', '{"TableName": "sys", "IndexName": "gix", "KeyConditionExpression": "tableoid = :t",
  "ExpressionAttributeValues": {":t": {"S": "t"}}}') -> 'Items' AS gsi;
SELECT ddb_api('Query', '{"TableName": "sys", "IndexName": "lix", "KeyConditionExpression": "xmin = :a",
  "ExpressionAttributeValues": {":a": {"S": "a"}}}') -> 'Items' AS lsi;
SELECT ddb_api('Query', '{"TableName": "sys", "IndexName": "g2x", "KeyConditionExpression": "oid = :o",
  "ExpressionAttributeValues": {":o": {"S": "o"}}}') -> 'Items' AS gsi2;
SELECT ddb_api('DescribeTimeToLive', '{"TableName": "sys"}');
SELECT d -> 'KeySchema' AS keys, d #> '{LocalSecondaryIndexes,0,KeySchema}' AS lsi_keys
FROM ddb_api('DescribeTable', '{"TableName": "sys"}') r, LATERAL (SELECT r -> 'Table') x(d);
SELECT xmin <> '0'::xid AS system_xmin, ctid IS NOT NULL AS system_ctid, item FROM sys ORDER BY 3::text;
SELECT ddb_verify_gsi('sys');
SELECT ddb_api('DeleteTable', '{"TableName": "sys"}') #>> '{TableDescription,TableStatus}' AS deleted;
-- an attribute named as another's column (xmin's): each key its own column
SELECT ddb_api('CreateTable', '{"TableName": "sys2", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "xmin", "KeyType": "HASH"}, {"AttributeName": "xmin_55efd647", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "xmin", "AttributeType": "S"},
    {"AttributeName": "xmin_55efd647", "AttributeType": "S"}]}') #> '{TableDescription,KeySchema}' AS keys;
SELECT attname FROM pg_attribute WHERE attrelid = 'sys2'::regclass AND attnum > 0 ORDER BY attnum;
SELECT key_names FROM ddb_internal.tables WHERE relid = 'sys2'::regclass;
SELECT ddb_put_item('sys2', '{"xmin": "a", "xmin_55efd647": "b"}');
SELECT ddb_get_item('sys2', '{"xmin": "a", "xmin_55efd647": "b"}');
-- a key column named as its attribute renames the attribute with it,
-- beside a key whose name the catalog keeps
SELECT ddb_api('CreateTable', '{"TableName": "sys3", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "ctid", "KeyType": "HASH"}, {"AttributeName": "b", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "ctid", "AttributeType": "S"},
    {"AttributeName": "b", "AttributeType": "N"}]}') #> '{TableDescription,KeySchema}' AS keys;
SELECT key_names FROM ddb_internal.tables WHERE relid = 'sys3'::regclass;
ALTER TABLE sys3 RENAME COLUMN b TO c;
SELECT ddb_describe_table('sys3') -> 'KeySchema' AS renamed;
SELECT ddb_put_item('sys3', '{"ctid": "a", "c": 1}');
SELECT ddb_get_item('sys3', '{"ctid": "a", "c": 1}');
DROP TABLE sys2, sys3;

-- a missing table: ResourceNotFoundException (DB003) from every function
\set VERBOSITY sqlstate
SELECT ddb_get_item('missing', '{"k": "v"}');
SELECT ddb_put_item('missing', '{"k": "v"}');
SELECT ddb_update_item('missing', '{"k": "v"}', 'SET a = :a', vals => '{":a": 1}');
SELECT ddb_delete_item('missing', '{"k": "v"}');
SELECT ddb_describe_table('missing');
SELECT * FROM ddb_query('missing', 'k = :v', '{":v": "v"}');
SELECT ddb_query_page('missing', 'k = :v', '{":v": "v"}');
SELECT * FROM ddb_scan('missing');
SELECT ddb_scan_page('missing');
SELECT ddb_create_gsi('missing', 'idx', 'a');
SELECT ddb_drop_gsi('missing', 'idx');
SELECT ddb_verify_gsi('missing');
SELECT ddb_api('GetItem', '{"TableName": "missing", "Key": {"k": {"S": "v"}}}');
SELECT ddb_api('UpdateTable', '{"TableName": "missing", "BillingMode": "PAY_PER_REQUEST"}');
-- not an ARN of a table: AccessDeniedException (DB011)
SELECT ddb_api('ListTagsOfResource', '{"ResourceArn": "nothing"}');
\set VERBOSITY default

-- Placeholders without expressions: DynamoDB's messages from the SQL
-- functions too.
SELECT ddb_put_item(repeat('T', 255), jsonb_build_object(repeat('k', 255), 'a', repeat('s', 100), 1), vals => '{":a": 1}');
SELECT ddb_put_item(repeat('T', 255), jsonb_build_object(repeat('k', 255), 'a', repeat('s', 100), 1), names => '{"#a": "b"}');
SELECT ddb_update_item(repeat('T', 255), jsonb_build_object(repeat('k', 255), 'a', repeat('s', 100), 1), vals => '{":a": 1}');
SELECT ddb_delete_item(repeat('T', 255), jsonb_build_object(repeat('k', 255), 'a', repeat('s', 100), 1), names => '{"#a": "b"}');
SELECT ddb_get_item(repeat('T', 255), jsonb_build_object(repeat('k', 255), 'a', repeat('s', 100), 1), names => '{"#a": "b"}');
SELECT ddb_scan_page(repeat('T', 255), vals => '{":a": 1}');
SELECT ddb_scan_page(repeat('T', 255), names => '{"#a": "b"}');
