-- ddb_api: a request that breaks several member constraints at once gets
-- them all in one ValidationException, DynamoDB's "N validation errors
-- detected: ...; ..." (the first ten), not the first alone.  The legacy
-- members, StreamSpecification, Tags, the backup operations' members and
-- the streams' Limit used to be raised one by one, and so were
-- ddb_create_gsi's NonKeyAttributes.  (ddb_update_stream's view type is
-- its one constrained member: it has no other to list with.)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
CREATE SCHEMA api_listed_errors;
SET ddb.schema = api_listed_errors;
SET search_path = api_listed_errors, public;

SELECT ddb_api('CreateTable', '{"TableName": "Listed",
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "BillingMode": "PAY_PER_REQUEST"}') -> 'TableDescription' -> 'TableName' AS created;

\set VERBOSITY terse
-- legacy members, with the item operations' other members
SELECT ddb_api('GetItem', '{"TableName": "x", "Key": {"pk": {"S": "a"}}, "AttributesToGet": []}');
SELECT ddb_api('Query', '{"TableName": "x", "KeyConditions": {"pk": {"AttributeValueList": [{"S": "a"}]}},
                          "QueryFilter": {"a": {"ComparisonOperator": "XX"}}}');
SELECT ddb_api('Scan', '{"TableName": "Listed", "Limit": 0,
                         "ScanFilter": {"a": {"AttributeValueList": [{"S": "a"}]}}}');
SELECT ddb_api('UpdateItem', '{"TableName": "x", "Key": {"pk": {"S": "a"}},
                               "AttributeUpdates": {"a": {"Action": "SET", "Value": {"S": "x"}},
                                                    "b": {"Action": "ADD"}}}');
-- (Expected's ComparisonOperator is not required: Exists or Value stand for it)
SELECT ddb_api('PutItem', '{"TableName": "Listed", "Item": {"pk": {"S": "a"}},
                            "Expected": {"a": {"Exists": false}}}');
-- StreamSpecification and Tags, with CreateTable's and UpdateTable's others
SELECT ddb_api('CreateTable', '{"TableName": "Listed2",
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "X"}],
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST",
  "StreamSpecification": {"StreamViewType": "ALL"},
  "Tags": [{"Key": "", "Value": "v"}, {"Key": "a"}]}');
SELECT ddb_api('UpdateTable', '{"TableName": "Listed", "BillingMode": "X",
                                "StreamSpecification": {"StreamViewType": "KEYS_ONLY"}}');
SELECT ddb_api('TagResource', jsonb_build_object(
  'ResourceArn', 'arn:aws:dynamodb:us-east-1:000000000000:table/Listed',
  'Tags', jsonb_build_array(jsonb_build_object('Key', '', 'Value', 'v'),
                            jsonb_build_object('Key', repeat('k', 129), 'Value', repeat('v', 257)))));
-- BatchGetItem's AttributesToGet, at its table's path, with the keys' errors
SELECT ddb_api('BatchGetItem', '{"RequestItems": {
  "Listed": {"Keys": [{"pk": {"S": "a"}}], "AttributesToGet": []},
  "Other": {"Keys": []}}}');
-- the backup operations' members
SELECT ddb_api('UpdateContinuousBackups', '{}');
SELECT ddb_api('UpdateContinuousBackups', '{"TableName": "", "PointInTimeRecoverySpecification": {}}');
-- the streams' Limit with their other members
SELECT ddb_api('ListStreams', '{"TableName": "x", "Limit": 0}');
SELECT ddb_api('DescribeStream', '{"Limit": 101, "ShardFilter": {"Type": "X"}}');
SELECT ddb_api('GetRecords', '{"Limit": 0}');
SELECT ddb_api('GetRecords', '{"ShardIterator": "", "Limit": 1001}');
-- ddb_create_gsi: the index name, the projection type and NonKeyAttributes
-- (at most 20 names of 1-255 bytes) together, before what they mean (the
-- repeated name); no index made
SELECT ddb_create_gsi('Listed', 'ab', 'g', projection => 'SOME',
                      non_key_attributes => ARRAY['', repeat('n', 256), 'a', 'a']);
SELECT ddb_create_gsi('Listed', 'Idx', 'g', projection => 'INCLUDE',
                      non_key_attributes => (SELECT array_agg(CASE WHEN i = 3 THEN '' ELSE 'a' || i END)
                                             FROM generate_series(1, 21) i));
\set VERBOSITY default
-- nothing was made or changed
SELECT to_regclass('api_listed_errors."Listed2"') AS listed2;
SELECT ddb_api('ListTagsOfResource',
  '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Listed"}') AS tags;
SELECT d -> 'BillingModeSummary' ->> 'BillingMode' AS billing, d ? 'StreamSpecification' AS stream,
       d ? 'GlobalSecondaryIndexes' AS indexes
FROM (SELECT ddb_api('DescribeTable', '{"TableName": "Listed"}') -> 'Table' d) x;

DROP SCHEMA api_listed_errors CASCADE;
