-- ddb_api: DynamoDB's table operations through the protocol entry point
-- (CreateTable, DescribeTable, ListTables, DeleteTable), their request
-- validation with DynamoDB's messages, and the SQL functions agreeing.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
-- its own namespace, so other tests' tables do not show
CREATE SCHEMA api_tables;
SET ddb.schema = api_tables;
SET search_path = api_tables, public;

-- Volatile members (TableId, CreationDateTime, sizes) are removed; the test
-- checks each is there and well-formed instead.
CREATE FUNCTION stable_desc(d jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT d - '{TableId,CreationDateTime,TableSizeBytes}'::text[]
           #- '{BillingModeSummary,LastUpdateToPayPerRequestDateTime}'
$$;

-- CreateTable: composite key, on demand.
SELECT jsonb_pretty(stable_desc(ddb_api('CreateTable', '{
  "TableName": "Music",
  "AttributeDefinitions": [{"AttributeName": "Artist", "AttributeType": "S"},
                           {"AttributeName": "Song", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "Artist", "KeyType": "HASH"},
                {"AttributeName": "Song", "KeyType": "RANGE"}],
  "BillingMode": "PAY_PER_REQUEST"}') -> 'TableDescription'));

-- Sizes and counts are the planner's: an empty table is 0 bytes and 0
-- items, as DynamoDB's, until ANALYZE counts what was written.
SELECT d -> 'TableSizeBytes' AS size, d -> 'ItemCount' AS items
FROM (SELECT ddb_api('DescribeTable', '{"TableName": "Music"}') -> 'Table' AS d) s;
SELECT ddb_api('PutItem', '{"TableName": "Music", "Item": {"Artist": {"S": "a"}, "Song": {"S": "s" }}}');
ANALYZE "Music";
SELECT (d ->> 'TableSizeBytes')::bigint > 0 AS sized, d -> 'ItemCount' AS items
FROM (SELECT ddb_api('DescribeTable', '{"TableName": "Music"}') -> 'Table' AS d) s;
SELECT ddb_api('DeleteItem', '{"TableName": "Music", "Key": {"Artist": {"S": "a"}, "Song": {"S": "s" }}}');
ANALYZE "Music";

-- Provisioned throughput is stored and echoed.
SELECT ddb_api('CreateTable', '{
  "TableName": "counters",
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "N"}],
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
  "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 7}}')
  #> '{TableDescription,ProvisionedThroughput}' AS throughput;

-- TableId is a UUID, CreationDateTime seconds since the epoch, stable.
SELECT (d ->> 'TableId') ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' AS uuid,
       abs((d ->> 'CreationDateTime')::numeric - extract(epoch FROM now())) < 600 AS recent,
       d -> 'TableId' = ddb_api('DescribeTable', '{"TableName": "Music"}') #> '{Table,TableId}' AS stable_id
FROM (SELECT ddb_api('DescribeTable', '{"TableName": "Music"}') -> 'Table' AS d) s;

-- DescribeTable is ddb_describe_table: one implementation.
SELECT ddb_api('DescribeTable', '{"TableName": "Music"}') -> 'Table' = ddb_describe_table('Music') AS same;

-- ListTables: names in byte order, paged with Limit and ExclusiveStartTableName.
SELECT ddb_api('ListTables', '{}');
SELECT ddb_api('ListTables', '{"Limit": 1}');
SELECT ddb_api('ListTables', '{"Limit": 1, "ExclusiveStartTableName": "Music"}');
SELECT ddb_list_tables();

-- ddb.schema: DynamoDB's namespace is one schema.
CREATE SCHEMA other;
SET ddb.schema = other;
SELECT ddb_api('ListTables', '{}');
SELECT ddb_api('CreateTable', '{"TableName": "Music",
  "AttributeDefinitions": [{"AttributeName": "k", "AttributeType": "B"}],
  "KeySchema": [{"AttributeName": "k", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST"}')
  #>> '{TableDescription,KeySchema,0,AttributeName}' AS other_music_key;
SELECT 'other."Music"'::regclass IS NOT NULL AS created_in_other;
SET ddb.schema = api_tables;

-- ddb.region and ddb.account_id make the ARN.
SET ddb.region = 'eu-west-3';
SET ddb.account_id = '123456789012';
SELECT ddb_api('DescribeTable', '{"TableName": "Music"}') #>> '{Table,TableArn}' AS arn;
RESET ddb.region;
RESET ddb.account_id;

-- Errors, with DynamoDB's names and messages.
SELECT ddb_api('DescribeTable', '{"TableName": "Nope"}');
SELECT ddb_api('DeleteTable', '{"TableName": "Nope"}');
SELECT ddb_api('UpdateTable', '{"TableName": "Nope", "BillingMode": "PAY_PER_REQUEST"}');
SELECT ddb_api('DescribeTable', '{}');
SELECT ddb_api('DescribeTable', '{"TableName": "ab"}');
SELECT ddb_api('DescribeTable', '{"TableName": "a b"}');
SELECT ddb_api('DescribeTable', '{"TableName": 5}');
SELECT ddb_api('ListTables', '{"Limit": 0}');
SELECT ddb_api('ListTables', '{"Limit": 101, "ExclusiveStartTableName": "x"}');
SELECT ddb_api('CreateTable', '{"TableName": "Music",
  "AttributeDefinitions": [{"AttributeName": "Artist", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "Artist", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST"}');
SELECT ddb_api('CreateTable', '{"TableName": "t1"}');
SELECT ddb_api('CreateTable', '{"TableName": "t1x"}');
SELECT ddb_api('CreateTable', '{"TableName": "t1x",
  "AttributeDefinitions": [{"AttributeName": "a", "AttributeType": "X"}],
  "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}], "BillingMode": "FREE"}');
SELECT ddb_api('CreateTable', '{"TableName": "t1x",
  "AttributeDefinitions": [{"AttributeName": "a", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "a", "KeyType": "RANGE"}], "BillingMode": "PAY_PER_REQUEST"}');
SELECT ddb_api('CreateTable', '{"TableName": "t1x",
  "AttributeDefinitions": [{"AttributeName": "a", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "b", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST"}');
SELECT ddb_api('CreateTable', '{"TableName": "t1x",
  "AttributeDefinitions": [{"AttributeName": "a", "AttributeType": "S"}, {"AttributeName": "b", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST"}');
SELECT ddb_api('CreateTable', '{"TableName": "t1x",
  "AttributeDefinitions": [{"AttributeName": "a", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}]}');
SELECT ddb_api('CreateTable', '{"TableName": "t1x",
  "AttributeDefinitions": [{"AttributeName": "a", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST",
  "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}');
SELECT ddb_api('CreateTable', '{"TableName": "t1x",
  "AttributeDefinitions": [{"AttributeName": "a", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}],
  "ProvisionedThroughput": {"ReadCapacityUnits": 0}}');
SELECT ddb_api('CreateTable', '[]');
SELECT ddb_api('NoSuchOperation', '{}');
SELECT ddb_api_text('ListTables', '{"Limit": 1');
SELECT ddb_api_text('ListTables', '{"Limit": "1"}');

-- Every DynamoDB error kind has its own SQLSTATE.
\set VERBOSITY sqlstate
SELECT ddb_api('DescribeTable', '{"TableName": "Nope"}');
SELECT ddb_api('DescribeTable', '{"TableName": "ab"}');
SELECT ddb_api('DescribeTable', '{"TableName": 5}');
SELECT ddb_api('NoSuchOperation', '{}');
SELECT ddb_api('CreateTable', '{"TableName": "Music",
  "AttributeDefinitions": [{"AttributeName": "Artist", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "Artist", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST"}');
\set VERBOSITY default

-- DeleteTable answers with the description (DELETING; without the key
-- schema, the attribute definitions, the indexes and the creation time, as
-- DynamoDB's) and drops the table; the catalog forgets it.
SELECT d ->> 'TableStatus' AS status, (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(d) k) AS members
  FROM (SELECT ddb_api('DeleteTable', '{"TableName": "counters"}') -> 'TableDescription' AS d) s;
SELECT to_regclass('counters') IS NULL AS dropped,
       (SELECT count(*) FROM ddb_internal.tables t WHERE t.relid::text = 'counters') AS catalog_rows;
SELECT ddb_api('ListTables', '{}');

-- A table created by hand is registered too, with the same description.
CREATE TABLE by_hand (pk text, n numeric, item jsonb) USING ddb;
SELECT stable_desc(ddb_api('DescribeTable', '{"TableName": "by_hand"}') -> 'Table')
       #> '{KeySchema}' AS by_hand_keys,
       (SELECT count(*) FROM ddb_internal.tables WHERE relid = 'by_hand'::regclass) AS registered;
DROP TABLE by_hand;
-- One whose name DynamoDB cannot spell (shorter than 3 characters, or with
-- a character outside [a-zA-Z0-9_.-]) works with the item functions, but
-- every request that names it fails, so ListTables leaves it out.
CREATE TABLE t2 (pk text, item jsonb) USING ddb;
CREATE TABLE "by hand" (pk text, item jsonb) USING ddb;
SELECT ddb_put_item('t2', '{"pk": "a"}') IS NULL AS put_by_function;
SELECT ddb_api('DescribeTable', '{"TableName": "t2"}');
SELECT ddb_api('ListTables', '{}');
DROP TABLE t2, "by hand";

-- CreateTable with global secondary indexes: each created as UpdateTable
-- would, and queried through the index.
SELECT (ddb_api('CreateTable', '{"TableName": "WithIndex",
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"},
                           {"AttributeName": "email", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST",
  "GlobalSecondaryIndexes": [{"IndexName": "ByEmail",
    "KeySchema": [{"AttributeName": "email", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "KEYS_ONLY"}}]}')
  #> '{TableDescription,GlobalSecondaryIndexes,0}') - '{IndexSizeBytes,ItemCount}'::text[] AS index;
SELECT ddb_api('PutItem', '{"TableName": "WithIndex", "Item": {"id": {"S": "1"}, "email": {"S": "a@x"}, "n": {"N": "1"}}}');
SELECT ddb_api('Query', '{"TableName": "WithIndex", "IndexName": "ByEmail",
  "KeyConditionExpression": "email = :e", "ExpressionAttributeValues": {":e": {"S": "a@x"}}}');
SELECT ddb_api('CreateTable', '{"TableName": "WithIndex2",
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST",
  "GlobalSecondaryIndexes": [
    {"IndexName": "ById", "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}},
    {"IndexName": "ById", "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}]}');
SELECT ddb_api('CreateTable', '{"TableName": "WithIndex2",
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST",
  "GlobalSecondaryIndexes": [{"IndexName": "ById", "KeySchema": [{"AttributeName": "other", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "ALL"}}]}');
-- The request's constraints on an index definition come with the others,
-- before its meaning and before the table is looked up, each under the
-- definition's own member path; a global index's errors before a local one's.
SELECT ddb_api('CreateTable', '{"TableName": "WithIndex2",
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}, {"AttributeName": "s", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}, {"AttributeName": "s", "KeyType": "RANGE"}],
  "BillingMode": "PAY_PER_REQUEST",
  "LocalSecondaryIndexes": [{"IndexName": "L1", "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}, {"AttributeName": "u", "KeyType": "RANGE"}],
    "Projection": {"ProjectionType": "SOME"}}],
  "GlobalSecondaryIndexes": [{"IndexName": "I1", "KeySchema": [{"AttributeName": "other", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": []}}]}');
SELECT ddb_api('CreateTable', format('{"TableName": "WithIndex2",
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST",
  "GlobalSecondaryIndexes": [{"IndexName": "ById", "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": %s}}]}',
  (SELECT jsonb_agg('a' || i) FROM generate_series(1, 21) i))::jsonb);
SELECT ddb_api('UpdateTable', '{"TableName": "NoSuchTable",
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
  "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "I2", "KeySchema": [],
    "Projection": {"ProjectionType": "ALL"}}}]}');
SELECT ddb_api('UpdateTable', '{"TableName": "NoSuchTable",
  "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "a b"}}]}');
SELECT to_regclass('"WithIndex2"') IS NULL AS nothing_created;
SELECT ddb_api('DeleteTable', '{"TableName": "WithIndex"}') #>> '{TableDescription,TableStatus}';
SELECT count(*) AS index_tables_left FROM ddb_internal.gsi WHERE index_name = 'ByEmail';

-- AttributeDefinitions: each attribute once, and with indexes only keys'
-- (of the table or an index); both refused in DynamoDB's words, creating
-- nothing.
SELECT ddb_api('CreateTable', '{"TableName": "Dup1", "BillingMode": "PAY_PER_REQUEST",
  "AttributeDefinitions": [{"AttributeName": "xyz", "AttributeType": "S"}, {"AttributeName": "xyz", "AttributeType": "N"}],
  "KeySchema": [{"AttributeName": "xyz", "KeyType": "HASH"}]}');
SELECT ddb_api('CreateTable', '{"TableName": "Dup2", "BillingMode": "PAY_PER_REQUEST",
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"},
                           {"AttributeName": "g", "AttributeType": "N"}],
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "GlobalSecondaryIndexes": [{"IndexName": "ByG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                              "Projection": {"ProjectionType": "ALL"}}]}');
SELECT ddb_api('CreateTable', '{"TableName": "Unused", "BillingMode": "PAY_PER_REQUEST",
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "h", "AttributeType": "N"},
                           {"AttributeName": "g", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "GlobalSecondaryIndexes": [{"IndexName": "ByG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                              "Projection": {"ProjectionType": "ALL"}}]}');
SELECT count(*) AS created FROM ddb_list_tables() t WHERE t IN ('Dup1', 'Dup2', 'Unused');

-- Throughput: DynamoDB's bound of 10^12 units (a number beyond a Java
-- long, 1e19, is no Long at all: SerializationException), and an
-- UpdateTable that would change nothing, refused in its words.
SELECT ddb_api('CreateTable', '{"TableName": "thru", "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
  "ProvisionedThroughput": {"ReadCapacityUnits": 1000000000001, "WriteCapacityUnits": 5}}');
SELECT ddb_api('CreateTable', '{"TableName": "thru", "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
  "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}') IS NOT NULL AS created;
SELECT ddb_api('UpdateTable', '{"TableName": "thru", "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 1000000000001}}');
SELECT ddb_api('UpdateTable', '{"TableName": "thru", "ProvisionedThroughput": {"ReadCapacityUnits": 1e19, "WriteCapacityUnits": 5}}');
SELECT ddb_api('UpdateTable', '{"TableName": "thru", "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}');
SELECT ddb_api('UpdateTable', '{"TableName": "thru", "ProvisionedThroughput": {"ReadCapacityUnits": 6, "WriteCapacityUnits": 5}}')
  #> '{TableDescription,ProvisionedThroughput,ReadCapacityUnits}' AS read_units;
SELECT ddb_api('DeleteTable', '{"TableName": "thru"}') #>> '{TableDescription,TableStatus}' AS deleted;

-- A global index's own throughput: required on a PROVISIONED table and
-- refused on an on-demand one (CreateTable and UpdateTable's Create), its
-- members constrained as the table's; stored, reported by DescribeTable,
-- changed by UpdateTable's Update (several in one request), zeroed when the
-- table goes on demand and required for every index when it comes back.
SELECT ddb_api('CreateTable', '{"TableName": "Pro1", "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}], "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
  "GlobalSecondaryIndexes": [{"IndexName": "ByG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}]}');
-- RCU 0, missing WCU
SELECT ddb_api('CreateTable', '{"TableName": "Pro1", "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}], "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
  "GlobalSecondaryIndexes": [{"IndexName": "ByG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}, "ProvisionedThroughput": {"ReadCapacityUnits": 0}}]}');
SELECT ddb_api('CreateTable', '{"TableName": "Pro1", "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}], "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
  "GlobalSecondaryIndexes": [{"IndexName": "ByG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}, "ProvisionedThroughput": {"ReadCapacityUnits": 2000000000000, "WriteCapacityUnits": 1}}]}');
SELECT ddb_api('CreateTable', '{"TableName": "Pro1", "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}, {"AttributeName": "h", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}], "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
  "GlobalSecondaryIndexes": [{"IndexName": "ByG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}, "ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 4}},
  {"IndexName": "ByH", "KeySchema": [{"AttributeName": "h", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}, "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 2}}]}')
  #> '{TableDescription,GlobalSecondaryIndexes}' @? '$[*].ProvisionedThroughput ? (@.ReadCapacityUnits == 3 && @.WriteCapacityUnits == 4)' AS stored;
SELECT jsonb_path_query(ddb_api('DescribeTable', '{"TableName": "Pro1"}'), '$.Table.GlobalSecondaryIndexes[*].ProvisionedThroughput');
-- Update: Update {} ; unknown index; same values; bounds; two updates
SELECT ddb_api('UpdateTable', '{"TableName": "Pro1", "GlobalSecondaryIndexUpdates": [{"Update": {}}]}');
SELECT ddb_api('UpdateTable', '{"TableName": "Pro1", "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "Nope", "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}}]}');
SELECT ddb_api('UpdateTable', '{"TableName": "Pro1", "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "ByG", "ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 4}}}]}');
SELECT ddb_api('UpdateTable', '{"TableName": "Pro1", "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "ByG", "ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 2000000000000}}}]}');
SELECT jsonb_path_query(ddb_api('UpdateTable', '{"TableName": "Pro1", "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "ByG", "ProvisionedThroughput": {"ReadCapacityUnits": 7, "WriteCapacityUnits": 8}}},
  {"Update": {"IndexName": "ByH", "ProvisionedThroughput": {"ReadCapacityUnits": 9, "WriteCapacityUnits": 10}}}]}'), '$.TableDescription.GlobalSecondaryIndexes[*].ProvisionedThroughput');
-- to PPR: zeros; GSI Update refused; back to PROVISIONED needs every index
SELECT jsonb_path_query(ddb_api('UpdateTable', '{"TableName": "Pro1", "BillingMode": "PAY_PER_REQUEST"}'), '$.TableDescription.GlobalSecondaryIndexes[*].ProvisionedThroughput');
SELECT ddb_api('UpdateTable', '{"TableName": "Pro1", "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "ByG", "ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 4}}}]}');
SELECT ddb_api('UpdateTable', '{"TableName": "Pro1", "BillingMode": "PROVISIONED", "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}');
SELECT ddb_api('UpdateTable', '{"TableName": "Pro1", "BillingMode": "PROVISIONED", "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
  "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "ByG", "ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 4}}}]}');
SELECT jsonb_path_query(ddb_api('UpdateTable', '{"TableName": "Pro1", "BillingMode": "PROVISIONED", "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
  "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "ByG", "ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 4}}},
  {"Update": {"IndexName": "ByH", "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}}]}'), '$.TableDescription.BillingModeSummary.keyvalue().key');
-- Create on a PROVISIONED table: needs throughput; with it, stored
SELECT ddb_api('UpdateTable', '{"TableName": "Pro1", "AttributeDefinitions": [{"AttributeName": "k", "AttributeType": "S"}],
  "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "ByK", "KeySchema": [{"AttributeName": "k", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}}]}');
SELECT jsonb_path_query(ddb_api('UpdateTable', '{"TableName": "Pro1", "AttributeDefinitions": [{"AttributeName": "k", "AttributeType": "S"}],
  "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "ByK", "KeySchema": [{"AttributeName": "k", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"},
  "ProvisionedThroughput": {"ReadCapacityUnits": 11, "WriteCapacityUnits": 12}}}]}'), '$.TableDescription.GlobalSecondaryIndexes[*] ? (@.IndexName == "ByK").ProvisionedThroughput');
-- PPR table: Create with throughput refused
SELECT ddb_api('CreateTable', '{"TableName": "Odm1", "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST"}') IS NOT NULL;
SELECT ddb_api('UpdateTable', '{"TableName": "Odm1", "AttributeDefinitions": [{"AttributeName": "k", "AttributeType": "S"}],
  "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "ByK", "KeySchema": [{"AttributeName": "k", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"},
  "ProvisionedThroughput": {"ReadCapacityUnits": 11, "WriteCapacityUnits": 12}}}]}');
-- (a table created on demand keeps reporting since when it was)
SELECT jsonb_path_query(ddb_api('UpdateTable', '{"TableName": "Odm1", "BillingMode": "PROVISIONED", "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}'),
  '$.TableDescription.BillingModeSummary.keyvalue().key');
-- create+delete in one request: limit
SELECT ddb_api('UpdateTable', '{"TableName": "Pro1", "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "ByK"}}, {"Delete": {"IndexName": "ByH"}}]}');
-- one element, two actions: refused, and nothing changed (ByK stays, no ByZ)
SELECT ddb_api('UpdateTable', '{"TableName": "Pro1", "AttributeDefinitions": [{"AttributeName": "z", "AttributeType": "S"}],
  "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "ByK"},
    "Create": {"IndexName": "ByZ", "KeySchema": [{"AttributeName": "z", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}}]}');
SELECT ddb_api('UpdateTable', '{"TableName": "Pro1", "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "ByK"},
    "Update": {"IndexName": "ByG", "ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 4}}}]}');
SELECT jsonb_path_query_array(ddb_api('DescribeTable', '{"TableName": "Pro1"}'),
  '$.Table.GlobalSecondaryIndexes[*].IndexName') AS indexes;
SELECT ddb_api('DeleteTable', '{"TableName": "Pro1"}') #>> '{TableDescription,TableStatus}' AS deleted;
SELECT ddb_api('DeleteTable', '{"TableName": "Odm1"}') #>> '{TableDescription,TableStatus}' AS deleted;

-- A table's ARN (as DescribeTable's TableArn, this server's region and
-- account) works wherever TableName names a table, as DynamoDB's do: the
-- item and read operations, DescribeTable, the batches (whose answers are
-- keyed by the name or ARN the request gave) and the transactions.  An ARN
-- of another region is not this server's table; CreateTable takes names.
SELECT ddb_api('CreateTable', '{"TableName": "ByArn", "BillingMode": "PAY_PER_REQUEST",
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}]}') #>> '{TableDescription,TableArn}' AS arn \gset
SELECT ddb_api('PutItem', jsonb_build_object('TableName', :'arn', 'Item', '{"id": {"S": "a"}}'::jsonb,
  'ReturnConsumedCapacity', 'TOTAL')) #>> '{ConsumedCapacity,TableName}' = :'arn' AS capacity_under_arn;
SELECT ddb_api('GetItem', jsonb_build_object('TableName', :'arn', 'Key', '{"id": {"S": "a"}}'::jsonb));
SELECT ddb_api('DescribeTable', jsonb_build_object('TableName', :'arn')) #>> '{Table,TableName}' AS described;
SELECT ddb_api('Scan', jsonb_build_object('TableName', :'arn', 'Select', 'COUNT'));
SELECT ddb_api('BatchGetItem', jsonb_build_object('RequestItems',
  jsonb_build_object(:'arn', '{"Keys": [{"id": {"S": "a"}}]}'::jsonb))) -> 'Responses' ? :'arn' AS keyed_by_arn;
SELECT ddb_api('TransactWriteItems', jsonb_build_object('TransactItems', jsonb_build_array(
  jsonb_build_object('Delete', jsonb_build_object('TableName', :'arn', 'Key', '{"id": {"S": "a"}}'::jsonb)))));
SELECT ddb_api('GetItem', '{"TableName": "arn:aws:dynamodb:eu-west-1:000000000000:table/ByArn", "Key": {"id": {"S": "a"}}}');
SELECT ddb_api('DescribeTable', '{"TableName": "arn:aws:dynamodb:us-east-1:000000000000:table/NoSuch"}');
SELECT ddb_api('CreateTable', jsonb_build_object('TableName', :'arn', 'BillingMode', 'PAY_PER_REQUEST',
  'AttributeDefinitions', '[{"AttributeName": "id", "AttributeType": "S"}]'::jsonb,
  'KeySchema', '[{"AttributeName": "id", "KeyType": "HASH"}]'::jsonb));
SELECT ddb_api('DeleteTable', jsonb_build_object('TableName', :'arn')) #>> '{TableDescription,TableStatus}' AS deleted;
-- a name of 230 characters makes an ARN of 276, which TableName takes
SELECT ddb_api('CreateTable', jsonb_build_object('TableName', repeat('L', 230), 'BillingMode', 'PAY_PER_REQUEST',
  'AttributeDefinitions', '[{"AttributeName": "id", "AttributeType": "S"}]'::jsonb,
  'KeySchema', '[{"AttributeName": "id", "KeyType": "HASH"}]'::jsonb)) #>> '{TableDescription,TableArn}' AS arn \gset
SELECT length(:'arn') AS arn_length,
  ddb_api('DescribeTable', jsonb_build_object('TableName', :'arn')) #>> '{Table,TableName}' = repeat('L', 230) AS described;
SELECT ddb_api('DeleteTable', jsonb_build_object('TableName', :'arn')) #>> '{TableDescription,TableStatus}' AS deleted;

-- DescribeContinuousBackups (Terraform reads it for every table): backups
-- as a new DynamoDB table has them, no point-in-time recovery; a missing
-- table is DynamoDB's TableNotFoundException; the table's ARN works too.
-- UpdateContinuousBackups turns recovery off, and refuses to turn it on.
SELECT ddb_api('CreateTable', '{"TableName": "Backed", "BillingMode": "PAY_PER_REQUEST",
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}]}') IS NOT NULL AS created;
SELECT ddb_api('DescribeContinuousBackups', '{"TableName": "Backed"}');
SELECT ddb_api('DescribeContinuousBackups', jsonb_build_object('TableName',
  ddb_api('DescribeTable', '{"TableName": "Backed"}') #>> '{Table,TableArn}')) -> 'ContinuousBackupsDescription' ? 'ContinuousBackupsStatus' AS by_arn;
SELECT ddb_api('DescribeContinuousBackups', '{"TableName": "NoSuchTable"}');
\echo :LAST_ERROR_SQLSTATE
SELECT ddb_api('DescribeContinuousBackups', '{}');
SELECT ddb_api('UpdateContinuousBackups', '{"TableName": "Backed",
  "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": false}}');
SELECT ddb_api('UpdateContinuousBackups', '{"TableName": "Backed",
  "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true}}');
SELECT ddb_api('UpdateContinuousBackups', '{"TableName": "Backed"}');
SELECT ddb_api('UpdateContinuousBackups', '{"TableName": "NoSuchTable",
  "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": false}}');
SELECT ddb_api('DeleteTable', '{"TableName": "Backed"}') #>> '{TableDescription,TableStatus}' AS deleted;

-- A backend forgets what its caches hold about a dropped table once the
-- drop has committed (ddb_table.c, "A backend's sweep"): a table used
-- through the item functions has a memory context of its own in each of
-- three caches, and 40 tables created, written and deleted, one per
-- transaction or all in one, leave none behind (before, a backend kept them
-- for its life).  A drop rolled back leaves the table as it was.
CREATE FUNCTION ddb_table_contexts() RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM pg_backend_memory_contexts
  WHERE name IN ('ddb table info', 'ddb gsi list', 'ddb stream info') $$;
CREATE PROCEDURE cycle_tables(n int) LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. n LOOP
    PERFORM ddb_create_table('cycle' || i, 'PK', 'S');
    PERFORM ddb_put_item('cycle' || i, '{"PK": "a"}');
    PERFORM ddb_api('DeleteTable', jsonb_build_object('TableName', 'cycle' || i));
    COMMIT;
  END LOOP;
END $$;
SELECT ddb_table_contexts() AS contexts_before \gset
CALL cycle_tables(40);
SELECT ddb_table_contexts() - :contexts_before AS left_behind;
BEGIN;
SELECT count(ddb_create_table('cycle' || i, 'PK', 'S')) AS created FROM generate_series(1, 40) i;
SELECT count(*) AS written FROM (SELECT ddb_put_item('cycle' || i, '{"PK": "a"}') FROM generate_series(1, 40) i) w;
SELECT ddb_table_contexts() - :contexts_before AS in_use;
SELECT count(*) AS deleted FROM (SELECT ddb_api('DeleteTable', jsonb_build_object('TableName', 'cycle' || i))
  FROM generate_series(1, 40) i) d;
COMMIT;
SELECT ddb_table_contexts() - :contexts_before AS left_behind;
SELECT ddb_create_table('kept', 'PK', 'S');
SELECT ddb_put_item('kept', '{"PK": "a", "n": 1}');
BEGIN;
SELECT ddb_api('DeleteTable', '{"TableName": "kept"}') #>> '{TableDescription,TableStatus}' AS deleting;
ROLLBACK;
SELECT ddb_get_item('kept', '{"PK": "a"}') AS still_there;
SELECT ddb_table_contexts() - :contexts_before AS kept_table_contexts;
SELECT ddb_api('DeleteTable', '{"TableName": "kept"}') #>> '{TableDescription,TableStatus}' AS deleted;
SELECT ddb_table_contexts() - :contexts_before AS left_behind;
-- A commit looks up only the tables a relcache invalidation named since
-- the last one, not every table cached (a GRANT to one of a thousand
-- cached tables would pay for all); more of them than its list holds (64)
-- make it look at every table cached, and those dropped go too.
BEGIN;
SELECT count(ddb_create_table('cycle' || i, 'PK', 'S')) AS created FROM generate_series(1, 70) i;
SELECT count(*) AS written FROM (SELECT ddb_put_item('cycle' || i, '{"PK": "a"}') FROM generate_series(1, 70) i) w;
COMMIT;
SELECT ddb_table_contexts() - :contexts_before AS in_use;
BEGIN;
SELECT count(*) AS deleted FROM (SELECT ddb_api('DeleteTable', jsonb_build_object('TableName', 'cycle' || i))
  FROM generate_series(1, 70) i) d;
COMMIT;
SELECT ddb_table_contexts() - :contexts_before AS left_behind;
DROP PROCEDURE cycle_tables(int);
DROP FUNCTION ddb_table_contexts();
