-- ddb_api: UpdateItem, DeleteItem, Query and Scan through the protocol, with
-- ReturnValues, Select, paging, ReturnConsumedCapacity as DynamoDB bills it,
-- and the SQL functions giving the same answers.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
CREATE SCHEMA api_query;
SET ddb.schema = api_query;
SET search_path = api_query, public;

SELECT ddb_api('CreateTable', '{"TableName": "Orders",
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                           {"AttributeName": "sk", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"}],
  "BillingMode": "PAY_PER_REQUEST"}') IS NOT NULL AS created;
SELECT count(ddb_api('PutItem', format('{"TableName": "Orders", "Item": {"pk": {"S": "c1"},
  "sk": {"S": "o%s"}, "n": {"N": "%s"}, "status": {"S": "%s"}}}',
  i, i, CASE WHEN i % 2 = 0 THEN 'OPEN' ELSE 'DONE' END)::jsonb)) FROM generate_series(1, 5) i;

-- Query: key condition, filter, projection, Limit and LastEvaluatedKey;
-- a page reads Limit items before the filter, as DynamoDB counts them.
SELECT ddb_api('Query', '{"TableName": "Orders",
  "KeyConditionExpression": "pk = :p AND sk > :s", "FilterExpression": "#st = :open",
  "ExpressionAttributeNames": {"#st": "status"},
  "ExpressionAttributeValues": {":p": {"S": "c1"}, ":s": {"S": "o1"}, ":open": {"S": "OPEN"}},
  "ProjectionExpression": "sk, n", "Limit": 3}');
-- the next page starts after LastEvaluatedKey
SELECT ddb_api('Query', '{"TableName": "Orders",
  "KeyConditionExpression": "pk = :p AND sk > :s",
  "ExpressionAttributeValues": {":p": {"S": "c1"}, ":s": {"S": "o1"}},
  "ExclusiveStartKey": {"pk": {"S": "c1"}, "sk": {"S": "o4"}}}') -> 'Items' AS rest;
-- newest first, COUNT only
SELECT ddb_api('Query', '{"TableName": "Orders", "KeyConditionExpression": "pk = :p",
  "ExpressionAttributeValues": {":p": {"S": "c1"}}, "ScanIndexForward": false, "Limit": 2}')
  #> '{Items}' AS newest_first;
SELECT ddb_api('Query', '{"TableName": "Orders", "KeyConditionExpression": "pk = :p",
  "ExpressionAttributeValues": {":p": {"S": "c1"}}, "Select": "COUNT"}');

-- The same page from ddb_query_page (document form) is the same page.
SELECT (SELECT jsonb_agg(ddb_to_typed_json(i)) FROM jsonb_array_elements(
          ddb_query_page('Orders', 'pk = :p', '{":p": "c1"}', "limit" => 2) -> 'Items') i)
     = ddb_api('Query', '{"TableName": "Orders", "KeyConditionExpression": "pk = :p",
         "ExpressionAttributeValues": {":p": {"S": "c1"}}, "Limit": 2}') -> 'Items' AS same_page;

-- Scan with segments: the two segments hold every item once.
SELECT (SELECT sum((ddb_api('Scan', format('{"TableName": "Orders", "Segment": %s, "TotalSegments": 2}', s)::jsonb)
                    ->> 'Count')::int) FROM generate_series(0, 1) s) AS scanned_in_segments;
SELECT ddb_api('Scan', '{"TableName": "Orders", "FilterExpression": "n >= :three",
  "ExpressionAttributeValues": {":three": {"N": "3"}}, "Select": "COUNT"}');

-- ReturnConsumedCapacity: 4 KB read units, halved unless ConsistentRead;
-- writes in 1 KB units of the larger of the old and new item.
SELECT ddb_api('GetItem', '{"TableName": "Orders", "Key": {"pk": {"S": "c1"}, "sk": {"S": "o1"}},
  "ReturnConsumedCapacity": "TOTAL"}') -> 'ConsumedCapacity' AS eventually_consistent;
SELECT ddb_api('GetItem', '{"TableName": "Orders", "Key": {"pk": {"S": "c1"}, "sk": {"S": "o1"}},
  "ReturnConsumedCapacity": "TOTAL", "ConsistentRead": true}') -> 'ConsumedCapacity' AS consistent;
SELECT ddb_api('PutItem', format('{"TableName": "Orders", "Item": {"pk": {"S": "big"}, "sk": {"S": "x"},
  "pad": {"S": "%s"}}, "ReturnConsumedCapacity": "INDEXES"}', repeat('x', 5000))::jsonb) -> 'ConsumedCapacity' AS five_kb_put;
SELECT ddb_api('Query', '{"TableName": "Orders", "KeyConditionExpression": "pk = :p",
  "ExpressionAttributeValues": {":p": {"S": "big"}}, "ReturnConsumedCapacity": "TOTAL",
  "ConsistentRead": true}') -> 'ConsumedCapacity' AS query_5kb;
SELECT ddb_api('DeleteItem', '{"TableName": "Orders", "Key": {"pk": {"S": "big"}, "sk": {"S": "x"}},
  "ReturnConsumedCapacity": "TOTAL"}') -> 'ConsumedCapacity' AS delete_5kb;

-- UpdateItem: ReturnValues; UPDATED_OLD with nothing to show has no Attributes.
SELECT ddb_api('UpdateItem', '{"TableName": "Orders", "Key": {"pk": {"S": "c1"}, "sk": {"S": "o1"}},
  "UpdateExpression": "SET n = n + :one, tag = :t", "ExpressionAttributeValues": {":one": {"N": "1"}, ":t": {"S": "x"}},
  "ReturnValues": "UPDATED_NEW"}');
SELECT ddb_api('UpdateItem', '{"TableName": "Orders", "Key": {"pk": {"S": "c1"}, "sk": {"S": "o1"}},
  "UpdateExpression": "SET fresh = :v", "ExpressionAttributeValues": {":v": {"N": "1"}},
  "ReturnValues": "UPDATED_OLD"}');
SELECT ddb_update_item('Orders', '{"pk": "c1", "sk": "o1"}', 'SET fresh2 = :v', vals => '{":v": 1}',
                       return_values => 'UPDATED_OLD') IS NULL AS sql_updated_old_is_null;
-- no update expression: creates the key-only item, leaves an existing one
SELECT ddb_api('UpdateItem', '{"TableName": "Orders", "Key": {"pk": {"S": "c9"}, "sk": {"S": "k"}},
  "ReturnValues": "ALL_NEW"}');
SELECT ddb_api('UpdateItem', '{"TableName": "Orders", "Key": {"pk": {"S": "c1"}, "sk": {"S": "o2"}},
  "ReturnValues": "ALL_NEW"}');
SELECT ddb_update_item('Orders', '{"pk": "c8", "sk": "k"}', return_values => 'ALL_NEW');
-- a key attribute in REMOVE is refused whether or not the item exists
SELECT ddb_api('UpdateItem', '{"TableName": "Orders", "Key": {"pk": {"S": "none"}, "sk": {"S": "k"}},
  "UpdateExpression": "REMOVE sk"}');
SELECT ddb_api('GetItem', '{"TableName": "Orders", "Key": {"pk": {"S": "none"}, "sk": {"S": "k"}}}') AS nothing_written;

-- DeleteItem: conditions, ALL_OLD, the item on a failed condition.
SELECT ddb_api('DeleteItem', '{"TableName": "Orders", "Key": {"pk": {"S": "c1"}, "sk": {"S": "o5"}},
  "ConditionExpression": "n = :five", "ExpressionAttributeValues": {":five": {"N": "5"}},
  "ReturnValues": "ALL_OLD"}');
-- (the DETAIL holds the error response's extra members)
SELECT ddb_api('DeleteItem', '{"TableName": "Orders", "Key": {"pk": {"S": "c1"}, "sk": {"S": "o4"}},
  "ConditionExpression": "n = :five", "ExpressionAttributeValues": {":five": {"N": "5"}},
  "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}');

-- UpdateTable: a global secondary index, created, queried, described, deleted.
SELECT (ddb_api('UpdateTable', '{"TableName": "Orders",
  "AttributeDefinitions": [{"AttributeName": "status", "AttributeType": "S"},
                           {"AttributeName": "sk", "AttributeType": "S"}],
  "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "ByStatus",
     "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
     "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["n"]}}}]}')
  #> '{TableDescription,GlobalSecondaryIndexes,0}') - '{IndexSizeBytes,ItemCount}'::text[] AS index;
SELECT ddb_api('Query', '{"TableName": "Orders", "IndexName": "ByStatus",
  "KeyConditionExpression": "#s = :s", "ExpressionAttributeNames": {"#s": "status"},
  "ExpressionAttributeValues": {":s": {"S": "OPEN"}}, "ReturnConsumedCapacity": "INDEXES"}');
SELECT ddb_api('PutItem', '{"TableName": "Orders", "Item": {"pk": {"S": "c2"}, "sk": {"S": "o1"},
  "status": {"S": "OPEN"}}, "ReturnConsumedCapacity": "INDEXES"}') -> 'ConsumedCapacity' AS put_with_index;
SELECT ddb_api('UpdateItem', '{"TableName": "Orders", "Key": {"pk": {"S": "c2"}, "sk": {"S": "o1"}},
  "UpdateExpression": "SET #s = :d", "ExpressionAttributeNames": {"#s": "status"},
  "ExpressionAttributeValues": {":d": {"S": "DONE"}}, "ReturnConsumedCapacity": "INDEXES"}')
  -> 'ConsumedCapacity' AS index_key_moved;
SELECT ddb_api('Query', '{"TableName": "Orders", "IndexName": "ByStatus", "ConsistentRead": true,
  "KeyConditionExpression": "#s = :s", "ExpressionAttributeNames": {"#s": "status"},
  "ExpressionAttributeValues": {":s": {"S": "OPEN"}}}');
SELECT ddb_api('Query', '{"TableName": "Orders", "IndexName": "NoSuch",
  "KeyConditionExpression": "pk = :s", "ExpressionAttributeValues": {":s": {"S": "OPEN"}}}');
SELECT ddb_api('UpdateTable', '{"TableName": "Orders",
  "AttributeDefinitions": [{"AttributeName": "status", "AttributeType": "S"}],
  "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "ByStatus",
     "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}],
     "Projection": {"ProjectionType": "ALL"}}}]}');
-- one index change per UpdateTable, as DynamoDB allows
SELECT ddb_api('UpdateTable', '{"TableName": "Orders",
  "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "ByStatus"}}, {"Delete": {"IndexName": "Other"}}]}');
-- (two updates of one index are a request error first)
SELECT ddb_api('UpdateTable', '{"TableName": "Orders",
  "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "ByStatus"}}, {"Delete": {"IndexName": "ByStatus"}}]}');
SELECT ddb_api('UpdateTable', '{"TableName": "Orders",
  "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "ByStatus"}}]}')
  #> '{TableDescription,GlobalSecondaryIndexes}' AS indexes_left;

-- UpdateTable: billing settings stored and echoed.  (A table created
-- PAY_PER_REQUEST has been so since its creation.)
SELECT (d -> 'BillingModeSummary' -> 'LastUpdateToPayPerRequestDateTime') = (d -> 'CreationDateTime') AS on_demand_since_creation
  FROM ddb_describe_table('Orders') d;
SELECT ddb_api('UpdateTable', '{"TableName": "Orders", "BillingMode": "PROVISIONED",
  "ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 4}}')
  #> '{TableDescription,ProvisionedThroughput}' AS provisioned;
SELECT ddb_api('UpdateTable', '{"TableName": "Orders", "BillingMode": "PAY_PER_REQUEST"}')
  #> '{TableDescription,BillingModeSummary,BillingMode}' AS on_demand,
  ddb_describe_table('Orders') #> '{BillingModeSummary}' ? 'LastUpdateToPayPerRequestDateTime' AS switched_at;
SELECT ddb_api('UpdateTable', '{"TableName": "Orders"}');
SELECT ddb_api('UpdateTable', '{"TableName": "Orders", "BillingMode": "PROVISIONED"}');

-- Tags, per table.
SELECT ddb_api('TagResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Orders",
  "Tags": [{"Key": "team", "Value": "a"}, {"Key": "env", "Value": "test"}]}');
SELECT ddb_api('UntagResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Orders",
  "TagKeys": ["team"]}');
SELECT ddb_api('ListTagsOfResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Orders"}');
SELECT ddb_api('ListTagsOfResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Nope"}');
-- Lengths count characters, not bytes: 128 and 256 two-byte characters
-- are within the limits, one more is not.
SELECT ddb_api('TagResource', jsonb_build_object('ResourceArn', 'arn:aws:dynamodb:us-east-1:000000000000:table/Orders',
  'Tags', jsonb_build_array(jsonb_build_object('Key', repeat('é', 128), 'Value', repeat('ü', 256)))));
SELECT length(t ->> 'Key') AS key_chars, octet_length(t ->> 'Key') AS key_bytes, length(t ->> 'Value') AS value_chars
FROM jsonb_array_elements(ddb_api('ListTagsOfResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Orders"}') -> 'Tags') t
WHERE t ->> 'Key' LIKE 'é%';
SELECT ddb_api('TagResource', jsonb_build_object('ResourceArn', 'arn:aws:dynamodb:us-east-1:000000000000:table/Orders',
  'Tags', jsonb_build_array(jsonb_build_object('Key', repeat('é', 129), 'Value', repeat('ü', 257)))));
SELECT ddb_api('UntagResource', jsonb_build_object('ResourceArn', 'arn:aws:dynamodb:us-east-1:000000000000:table/Orders',
  'TagKeys', jsonb_build_array(repeat('é', 128))));
-- Keys and values hold letters, numbers, white space and + - = . _ : /
-- (DynamoDB's tagging restrictions; characters beyond ASCII are taken as
-- letters), and keys may not start with aws:, which only AWS assigns; a
-- refused request changes nothing.
SELECT ddb_api('TagResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Orders",
  "Tags": [{"Key": "a b+c-d=e.f_g:h/i 9", "Value": "ok ÄÖ é 1"}]}');
SELECT ddb_api('TagResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Orders",
  "Tags": [{"Key": "hi!", "Value": "v"}, {"Key": "ok", "Value": "d%g"}]}');
SELECT ddb_api('TagResource', jsonb_build_object('ResourceArn', 'arn:aws:dynamodb:us-east-1:000000000000:table/Orders',
  'Tags', jsonb_build_array(jsonb_build_object('Key', E'a\tb', 'Value', 'v'))));
SELECT ddb_api('TagResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Orders",
  "Tags": [{"Key": "fine", "Value": "v"}, {"Key": "AWS:cost", "Value": "v"}]}');
SELECT ddb_api('UntagResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Orders",
  "TagKeys": ["aws:cost"]}');
SELECT ddb_api('CreateTable', '{"TableName": "TaggedAws", "BillingMode": "PAY_PER_REQUEST",
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}], "Tags": [{"Key": "aws:x", "Value": "v"}]}');
SELECT ddb_api('DescribeTable', '{"TableName": "TaggedAws"}');
SELECT t ->> 'Key' AS key FROM jsonb_array_elements(ddb_api('ListTagsOfResource',
  '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Orders"}') -> 'Tags') t ORDER BY 1;
SELECT ddb_api('UntagResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Orders",
  "TagKeys": ["a b+c-d=e.f_g:h/i 9"]}');
-- At most 50 tags per table, counting those of the request itself: one
-- request cannot pass the limit, and a request that only replaces values
-- at the limit is fine.
SELECT ddb_api('TagResource', jsonb_build_object('ResourceArn', 'arn:aws:dynamodb:us-east-1:000000000000:table/Orders',
  'Tags', (SELECT jsonb_agg(jsonb_build_object('Key', 'k' || i, 'Value', 'v')) FROM generate_series(1, 50) i)));
SELECT jsonb_array_length(ddb_api('ListTagsOfResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Orders"}') -> 'Tags');
SELECT ddb_api('TagResource', jsonb_build_object('ResourceArn', 'arn:aws:dynamodb:us-east-1:000000000000:table/Orders',
  'Tags', (SELECT jsonb_agg(jsonb_build_object('Key', 'k' || i, 'Value', 'v')) FROM generate_series(1, 49) i)));
SELECT ddb_api('TagResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Orders",
  "Tags": [{"Key": "env", "Value": "prod"}, {"Key": "k1", "Value": "w"}]}');
SELECT ddb_api('TagResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Orders",
  "Tags": [{"Key": "k50", "Value": "v"}]}');
SELECT jsonb_array_length(ddb_api('ListTagsOfResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Orders"}') -> 'Tags');
SELECT ddb_api('TagResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/Orders", "Tags": []}');
SELECT ddb_api('TagResource', '{"ResourceArn": "arn:aws:s3:::bucket/x", "Tags": []}');

-- CreateTable takes Tags too (checked as TagResource checks them).
SELECT ddb_api('CreateTable', '{"TableName": "TaggedAtBirth", "BillingMode": "PAY_PER_REQUEST",
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
  "Tags": [{"Key": "team", "Value": "a"}, {"Key": "cost", "Value": ""}]}') -> 'TableDescription' ->> 'TableName';
SELECT ddb_api('ListTagsOfResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/TaggedAtBirth"}');
SELECT ddb_api('CreateTable', '{"TableName": "TaggedBadly", "BillingMode": "PAY_PER_REQUEST",
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
  "Tags": [{"Key": "", "Value": "a"}]}');
SELECT count(*) FROM ddb_list_tables() t WHERE t = 'TaggedBadly';
SELECT ddb_api('DeleteTable', '{"TableName": "TaggedAtBirth"}') -> 'TableDescription' ->> 'TableStatus';

-- DescribeLimits and DescribeEndpoints.
SELECT ddb_api('DescribeLimits', '{}');
SELECT ddb_api('DescribeEndpoints', '{}');

-- Errors of reads.
SELECT ddb_api('Query', '{"TableName": "Orders"}');
SELECT ddb_api('Query', '{"TableName": "Orders", "KeyConditionExpression": "pk = :p",
  "ExpressionAttributeValues": {":p": {"S": "c1"}}, "Limit": 0}');
SELECT ddb_api('Query', '{"TableName": "Orders", "KeyConditionExpression": "pk = :p",
  "ExpressionAttributeValues": {":p": {"S": "c1"}}, "Select": "SPECIFIC_ATTRIBUTES"}');
SELECT ddb_api('Query', '{"TableName": "Orders", "KeyConditionExpression": "pk = :p",
  "ExpressionAttributeValues": {":p": {"S": "c1"}}, "Select": "ALL_PROJECTED_ATTRIBUTES"}');
SELECT ddb_api('Scan', '{"TableName": "Orders", "Segment": 1}');
SELECT ddb_api('Scan', '{"TableName": "Orders", "Segment": 2, "TotalSegments": 2}');
-- Limit, Segment and TotalSegments are Java ints: a number beyond one is
-- not a value of the member's type (SerializationException), whatever the
-- member's own bounds; within it a decimal is floored and the bounds are
-- checked (ValidationException), as DynamoDB's deserializer does
SELECT ddb_api_text('Query', '{"TableName": "Orders", "KeyConditionExpression": "pk = :p",
  "ExpressionAttributeValues": {":p": {"S": "c1"}}, "Limit": 1e100}');
SELECT ddb_api_text('Scan', '{"TableName": "Orders", "Limit": 2147483648}');
SELECT ddb_api_text('Scan', '{"TableName": "Orders", "Limit": -1e400}');
SELECT ddb_api_text('Scan', '{"TableName": "Orders", "Segment": 0, "TotalSegments": 1e100}');
SELECT ddb_api_text('Scan', '{"TableName": "Orders", "Segment": -2147483649, "TotalSegments": 2}');
SELECT ddb_api_text('ListTables', '{"Limit": 1e300}');
SELECT ddb_api_text('ExecuteStatement', '{"Statement": "SELECT * FROM Orders", "Limit": 99999999999}');
SELECT ddb_api_text('ListStreams', '{"Limit": 4294967297}');
SELECT ddb_api('Scan', '{"TableName": "Orders", "Segment": 0, "TotalSegments": 2147483647}');
SELECT ddb_api('Scan', '{"TableName": "Orders", "Limit": 0.5}');
SELECT ddb_api('Scan', '{"TableName": "Orders", "Limit": 2147483647, "Select": "COUNT"}');
SELECT ddb_api('Scan', '{"TableName": "Orders", "Limit": 1.9, "Select": "COUNT"}') ->> 'Count' AS one;
SELECT ddb_api('Scan', '{"TableName": "Nope"}');
SELECT ddb_scan_page('Nope');
