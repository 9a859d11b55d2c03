-- ddb_api: DynamoDB's legacy parameters (AttributesToGet, KeyConditions,
-- QueryFilter, ScanFilter, Expected with ConditionalOperator,
-- AttributeUpdates) give the same results as the expressions they are
-- translated into, and DynamoDB's errors for misuse.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
CREATE SCHEMA api_legacy;
SET ddb.schema = api_legacy;
SET search_path = api_legacy, public;

SELECT ddb_api('CreateTable', '{"TableName": "Legacy",
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                           {"AttributeName": "sk", "AttributeType": "N"}],
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"}],
  "BillingMode": "PAY_PER_REQUEST"}') IS NOT NULL AS created;
SELECT count(ddb_put_item('Legacy', jsonb_build_object('pk', 'p', 'sk', i, 'n', i * 10,
         'tags', jsonb_build_object('$SS', CASE WHEN i % 2 = 0 THEN '["even"]'::jsonb ELSE '["odd"]'::jsonb END),
         'name', 'item' || i))) FROM generate_series(1, 6) i;

-- Each legacy form and its expression give the same answer.
CREATE FUNCTION same(a jsonb, b jsonb) RETURNS boolean LANGUAGE sql AS $$ SELECT a = b $$;
SELECT same(
  ddb_api('Query', '{"TableName": "Legacy", "KeyConditions": {
     "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "p"}]},
     "sk": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [{"N": "2"}, {"N": "5"}]}},
     "QueryFilter": {"tags": {"ComparisonOperator": "CONTAINS", "AttributeValueList": [{"S": "even"}]}},
     "AttributesToGet": ["sk", "name"]}'),
  ddb_api('Query', '{"TableName": "Legacy",
     "KeyConditionExpression": "pk = :p AND sk BETWEEN :a AND :b",
     "FilterExpression": "contains(tags, :e)", "ProjectionExpression": "sk, #n",
     "ExpressionAttributeNames": {"#n": "name"},
     "ExpressionAttributeValues": {":p": {"S": "p"}, ":a": {"N": "2"}, ":b": {"N": "5"}, ":e": {"S": "even"}}}')) AS query_same;
SELECT ddb_api('Query', '{"TableName": "Legacy", "KeyConditions": {
     "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "p"}]},
     "sk": {"ComparisonOperator": "GT", "AttributeValueList": [{"N": "4"}]}},
     "AttributesToGet": ["sk"]}') -> 'Items' AS sk_gt_4;
SELECT ddb_api('Query', '{"TableName": "Legacy", "KeyConditions": {
     "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "p"}]}},
     "FilterExpression": "n > :v", "ExpressionAttributeValues": {":v": {"N": "40"}}}') ->> 'Count' AS key_conditions_with_filter_expression;
-- and with a ProjectionExpression (dynalite's rule, recorded against
-- DynamoDB: KeyConditions count as legacy only beside a
-- KeyConditionExpression)
SELECT ddb_api('Query', '{"TableName": "Legacy", "KeyConditions": {
     "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "p"}]},
     "sk": {"ComparisonOperator": "LE", "AttributeValueList": [{"N": "2"}]}},
     "ProjectionExpression": "sk"}') -> 'Items' AS key_conditions_with_projection_expression;
SELECT ddb_api('Query', '{"TableName": "Legacy", "KeyConditions": {
     "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "p"}]}},
     "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "p"}}}');

-- ScanFilter with OR, IN, NOT_NULL, NULL, BEGINS_WITH, NE.
SELECT same(
  ddb_api('Scan', '{"TableName": "Legacy", "ConditionalOperator": "OR", "ScanFilter": {
     "n": {"ComparisonOperator": "IN", "AttributeValueList": [{"N": "10"}, {"N": "60"}]},
     "name": {"ComparisonOperator": "BEGINS_WITH", "AttributeValueList": [{"S": "item3"}]}}}'),
  ddb_api('Scan', '{"TableName": "Legacy", "FilterExpression": "n IN (:a, :b) OR begins_with(#n, :c)",
     "ExpressionAttributeNames": {"#n": "name"},
     "ExpressionAttributeValues": {":a": {"N": "10"}, ":b": {"N": "60"}, ":c": {"S": "item3"}}}')) AS scan_same;
SELECT ddb_api('Scan', '{"TableName": "Legacy", "Select": "COUNT", "ScanFilter": {
     "nickname": {"ComparisonOperator": "NULL"}, "n": {"ComparisonOperator": "NE", "AttributeValueList": [{"N": "10"}]},
     "name": {"ComparisonOperator": "NOT_NULL"}}}') ->> 'Count' AS five;

-- GetItem with AttributesToGet.
SELECT ddb_api('GetItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "p"}, "sk": {"N": "1"}},
  "AttributesToGet": ["name", "n"]}');

-- PutItem with Expected: Exists false (create only), Value, ComparisonOperator.
SELECT ddb_api('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "p"}, "sk": {"N": "1"}},
  "Expected": {"pk": {"Exists": false}}}');
SELECT ddb_api('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "p"}, "sk": {"N": "7"}, "n": {"N": "70"}},
  "Expected": {"pk": {"Exists": false}}}');
SELECT ddb_api('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "p"}, "sk": {"N": "7"}, "n": {"N": "71"}},
  "Expected": {"n": {"Value": {"N": "70"}}}, "ReturnValues": "ALL_OLD"}');
SELECT ddb_api('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "p"}, "sk": {"N": "7"}},
  "Expected": {"n": {"ComparisonOperator": "LT", "AttributeValueList": [{"N": "50"}]},
               "name": {"ComparisonOperator": "NULL"}}, "ConditionalOperator": "AND"}');

-- UpdateItem with AttributeUpdates (PUT, ADD, DELETE with and without a value).
SELECT ddb_api('UpdateItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "p"}, "sk": {"N": "2"}},
  "AttributeUpdates": {"n": {"Action": "ADD", "Value": {"N": "5"}},
                       "tags": {"Action": "DELETE", "Value": {"SS": ["even"]}},
                       "name": {"Action": "DELETE"},
                       "extra": {"Value": {"BOOL": true}}},
  "ReturnValues": "ALL_NEW"}');
SELECT ddb_api('UpdateItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "p"}, "sk": {"N": "2"}},
  "AttributeUpdates": {"n": {"Action": "PUT", "Value": {"N": "0"}}},
  "Expected": {"n": {"ComparisonOperator": "GT", "AttributeValueList": [{"N": "1000"}]}}}');

-- DeleteItem with Expected.
SELECT ddb_api('DeleteItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "p"}, "sk": {"N": "3"}},
  "Expected": {"n": {"Value": {"N": "30"}, "Exists": true}}, "ReturnValues": "ALL_OLD"}') -> 'Attributes' -> 'n' AS deleted_n;

-- Errors.
SELECT ddb_api('GetItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "p"}, "sk": {"N": "1"}},
  "AttributesToGet": ["n"], "ProjectionExpression": "n"}');
SELECT ddb_api('GetItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "p"}, "sk": {"N": "1"}},
  "AttributesToGet": ["n", "n"]}');
SELECT ddb_api('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "p"}, "sk": {"N": "1"}},
  "Expected": {"n": {"Exists": false, "Value": {"N": "1"}}}}');
SELECT ddb_api('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "p"}, "sk": {"N": "1"}},
  "Expected": {"n": {"Exists": true}}}');
SELECT ddb_api('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "p"}, "sk": {"N": "1"}},
  "Expected": {"n": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [{"N": "1"}]}}}');
SELECT ddb_api('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "p"}, "sk": {"N": "1"}},
  "Expected": {"n": {"ComparisonOperator": "LT", "AttributeValueList": [{"BOOL": true}]}}}');
SELECT ddb_api('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "p"}, "sk": {"N": "1"}},
  "Expected": {"n": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [{"N": "5"}, {"N": "1"}]}}}');
SELECT ddb_api('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "p"}, "sk": {"N": "1"}},
  "Expected": {"n": {"ComparisonOperator": "EQ", "AttributeValueList": [{"N": "5"}], "Exists": true}}}');
SELECT ddb_api('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "p"}, "sk": {"N": "1"}},
  "Expected": {"n": {"ComparisonOperator": "XX", "AttributeValueList": [{"N": "5"}]}}}');
SELECT ddb_api('UpdateItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "p"}, "sk": {"N": "1"}},
  "AttributeUpdates": {"n": {"Action": "PUT"}}}');
SELECT ddb_api('UpdateItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "p"}, "sk": {"N": "1"}},
  "AttributeUpdates": {"n": {"Action": "PUT", "Value": {"N": "1"}}}, "UpdateExpression": "SET a = :a",
  "ExpressionAttributeValues": {":a": {"N": "1"}}}');
SELECT ddb_api('Scan', '{"TableName": "Legacy", "ScanFilter": {"n": {"ComparisonOperator": "EQ",
  "AttributeValueList": [{"N": "1"}]}}, "ConditionalOperator": "XOR"}');
SELECT ddb_api('Query', '{"TableName": "Legacy", "KeyConditions": {}}');
-- A key condition whose operator cannot select a key range is DynamoDB's
-- own error, never the translated expression's (which would name "<>",
-- "attribute_not_exists", "NOT"... that the request never wrote).
SELECT ddb_api('Query', '{"TableName": "Legacy", "KeyConditions": {
  "pk": {"ComparisonOperator": "NE", "AttributeValueList": [{"S": "p"}]}}}');
SELECT ddb_api('Query', '{"TableName": "Legacy", "KeyConditions": {
  "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "p"}]},
  "sk": {"ComparisonOperator": "NOT_NULL"}}}');
SELECT ddb_api('Query', '{"TableName": "Legacy", "KeyConditions": {
  "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "p"}]},
  "sk": {"ComparisonOperator": "NOT_CONTAINS", "AttributeValueList": [{"N": "1"}]}}}');
SELECT ddb_api('Query', '{"TableName": "Legacy", "KeyConditions": {
  "pk": {"ComparisonOperator": "IN", "AttributeValueList": [{"S": "p"}]}}}');
-- The legacy enums are member constraints, checked up front with the
-- others and joined with them: ConditionalOperator, and each condition's
-- ComparisonOperator, named by its member path.
SELECT ddb_api('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "p"}, "sk": {"N": "1"}},
  "Expected": {"a": {"Exists": false}}, "ConditionalOperator": "XOR"}');
SELECT ddb_api('Scan', '{"TableName": "Legacy", "ConditionalOperator": "BAD"}');
SELECT ddb_api('DeleteItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "p"}, "sk": {"N": "1"}},
  "Expected": {"a": {"ComparisonOperator": "BOGUS"}}}');
SELECT ddb_api('Scan', '{"TableName": "Legacy", "Select": "NONE",
  "ScanFilter": {"a": {"ComparisonOperator": "LIKE", "AttributeValueList": [{"S": "x"}]}}}');
SELECT ddb_api('Query', '{"TableName": "Legacy", "KeyConditions": {
  "pk": {"ComparisonOperator": "EQUALS", "AttributeValueList": [{"S": "p"}]}},
  "QueryFilter": {"a": {"ComparisonOperator": "GT", "AttributeValueList": [{"N": "1"}]}}}');
-- (an operation ignores the legacy members it does not take, like any
-- member it does not know: GetItem all of these, Scan KeyConditions, a
-- Query ScanFilter -- which does not replace its FilterExpression)
SELECT ddb_api('GetItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "nothing"}, "sk": {"N": "1"}},
  "ConditionalOperator": "XOR"}');
SELECT ddb_api('Scan', '{"TableName": "Legacy", "Select": "COUNT",
  "KeyConditions": {"pk": {"ComparisonOperator": "BOGUS"}}}');
SELECT ddb_api('Query', '{"TableName": "Legacy", "KeyConditionExpression": "pk = :p",
  "FilterExpression": "n > :n", "ExpressionAttributeValues": {":p": {"S": "p"}, ":n": {"N": "40"}},
  "ScanFilter": {"n": {"ComparisonOperator": "LT", "AttributeValueList": [{"N": "20"}]}},
  "Select": "COUNT"}');
-- A QueryFilter on a key attribute is refused in its own words.
SELECT ddb_api('Query', '{"TableName": "Legacy", "KeyConditions": {
  "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "p"}]}},
  "QueryFilter": {"sk": {"ComparisonOperator": "GT", "AttributeValueList": [{"N": "1"}]}}}');
SELECT ddb_api('Query', '{"TableName": "Legacy", "KeyConditionExpression": "pk = :p",
  "FilterExpression": "sk > :one", "ExpressionAttributeValues": {":p": {"S": "p"}, ":one": {"N": "1"}}}');
-- a condition without its operator, named by its member path too
SELECT ddb_api('Scan', '{"TableName": "Legacy", "ScanFilter": {"a": {}}}');
SELECT ddb_api('Query', '{"TableName": "Legacy", "KeyConditions": {
  "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "p"}]}}, "QueryFilter": {"n": {}}}');
-- AttributeUpdates as DynamoDB takes them: ADD of a list appends to it (or
-- creates it); ADD takes numbers, sets and lists, DELETE with a value only
-- sets; a value whose type does not match the attribute's is a "Type
-- mismatch for attribute to update", where an UpdateExpression says its own.
SELECT ddb_api('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "u"}, "sk": {"N": "1"},
  "l": {"L": [{"N": "1"}]}, "s": {"SS": ["dog"]}, "t": {"S": "text"}}}');
SELECT ddb_api('UpdateItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "u"}, "sk": {"N": "1"}},
  "AttributeUpdates": {"l": {"Action": "ADD", "Value": {"L": [{"N": "2"}, {"S": "x"}]}},
                       "m": {"Action": "ADD", "Value": {"L": [{"S": "new"}]}}},
  "ReturnValues": "UPDATED_NEW"}');
SELECT ddb_api('UpdateItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "u"}, "sk": {"N": "1"}},
  "AttributeUpdates": {"t": {"Action": "ADD", "Value": {"S": "more"}}}}');
SELECT ddb_api('UpdateItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "u"}, "sk": {"N": "1"}},
  "AttributeUpdates": {"t": {"Action": "ADD", "Value": {"M": {}}}}}');
SELECT ddb_api('UpdateItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "u"}, "sk": {"N": "1"}},
  "AttributeUpdates": {"s": {"Action": "DELETE", "Value": {"N": "1"}}}}');
SELECT ddb_api('UpdateItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "u"}, "sk": {"N": "1"}},
  "AttributeUpdates": {"s": {"Action": "ADD", "Value": {"N": "2"}}}}');
SELECT ddb_api('UpdateItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "u"}, "sk": {"N": "1"}},
  "AttributeUpdates": {"s": {"Action": "DELETE", "Value": {"NS": ["2"]}}}}');
SELECT ddb_api('UpdateItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "u"}, "sk": {"N": "1"}},
  "AttributeUpdates": {"t": {"Action": "ADD", "Value": {"L": []}}}}');
SELECT ddb_api('UpdateItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "u"}, "sk": {"N": "1"}},
  "UpdateExpression": "ADD s :n", "ExpressionAttributeValues": {":n": {"N": "2"}}}');
SELECT ddb_api('GetItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "u"}, "sk": {"N": "1"}}}');

-- An attribute name holding U+0000 in a legacy parameter is refused, as in
-- an expression's names: read as a C string, "v\u0000zzz" named v.
SELECT ddb_api_text('GetItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "u"}, "sk": {"N": "1"}},
  "AttributesToGet": ["v\u0000zzz"]}');
SELECT ddb_api_text('Query', '{"TableName": "Legacy",
  "KeyConditions": {"pk\u0000x": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "u"}]}}}');
SELECT ddb_api_text('PutItem', '{"TableName": "Legacy", "Item": {"pk": {"S": "u"}, "sk": {"N": "1"}},
  "Expected": {"v\u0000zzz": {"Exists": false}}}');
SELECT ddb_api_text('UpdateItem', '{"TableName": "Legacy", "Key": {"pk": {"S": "u"}, "sk": {"N": "1"}},
  "AttributeUpdates": {"v\u0000zzz": {"Action": "PUT", "Value": {"N": "1"}}}}');
