-- ddb_api: the item operations through the protocol entry point, with
-- DynamoDB's typed JSON, its validation and messages; the two front doors
-- (ddb_api and the SQL functions) write and read the same items.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
-- its own namespace, so other tests' tables do not show
CREATE SCHEMA api_items;
SET ddb.schema = api_items;
SET search_path = api_items, public;

SELECT ddb_api('CreateTable', '{"TableName": "Items",
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                           {"AttributeName": "sk", "AttributeType": "N"}],
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"}],
  "BillingMode": "PAY_PER_REQUEST"}') IS NOT NULL AS created;

-- PutItem with every type; GetItem returns it typed.
SELECT ddb_api('PutItem', '{"TableName": "Items", "Item": {
  "pk": {"S": "a"}, "sk": {"N": "1"},
  "s": {"S": "text"}, "n": {"N": "-12.50"}, "b": {"B": "3q2+7w=="},
  "t": {"BOOL": true}, "z": {"NULL": true},
  "l": {"L": [{"S": "x"}, {"N": "2"}]}, "m": {"M": {"in": {"SS": ["q", "p"]}}},
  "ss": {"SS": ["b", "a"]}, "ns": {"NS": ["3", "1.5"]}, "bs": {"BS": ["AQ==", "Ag=="]}}}');
SELECT jsonb_pretty(ddb_api('GetItem', '{"TableName": "Items", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}}}'));

-- The same item through the SQL function, in document form.
SELECT ddb_get_item('Items', '{"pk": "a", "sk": 1}');

-- Two front doors, one behaviour: a put through SQL reads back through
-- ddb_api as the same typed item, and the other way round.
SELECT ddb_put_item('Items', '{"pk": "b", "sk": 2, "v": {"$SS": ["x"]}, "n": 1e3}');
SELECT ddb_api('GetItem', '{"TableName": "Items", "Key": {"pk": {"S": "b"}, "sk": {"N": "2"}}}') -> 'Item'
     = ddb_to_typed_json(ddb_get_item('Items', '{"pk": "b", "sk": 2}')) AS same_item;
SELECT ddb_api('PutItem', '{"TableName": "Items", "Item": {"pk": {"S": "c"}, "sk": {"N": "3"}, "v": {"L": []}}}');
SELECT ddb_get_item('Items', '{"pk": "c", "sk": 3}')
     = ddb_from_typed_json(ddb_api('GetItem', '{"TableName": "Items", "Key": {"pk": {"S": "c"}, "sk": {"N": "3"}}}') -> 'Item') AS same_item;

-- A missing item: an empty response.
SELECT ddb_api('GetItem', '{"TableName": "Items", "Key": {"pk": {"S": "none"}, "sk": {"N": "1"}}}');

-- ProjectionExpression with names; ConsistentRead accepted.
SELECT ddb_api('GetItem', '{"TableName": "Items", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
  "ProjectionExpression": "#m.#i, s", "ExpressionAttributeNames": {"#m": "m", "#i": "in"},
  "ConsistentRead": true}');

-- Conditional put; ReturnValues ALL_OLD.
SELECT ddb_api('PutItem', '{"TableName": "Items", "Item": {"pk": {"S": "c"}, "sk": {"N": "3"}, "v": {"N": "2"}},
  "ConditionExpression": "attribute_exists(pk) AND size(v) = :zero",
  "ExpressionAttributeValues": {":zero": {"N": "0"}}, "ReturnValues": "ALL_OLD"}');
SELECT ddb_api('PutItem', '{"TableName": "Items", "Item": {"pk": {"S": "c"}, "sk": {"N": "3"}},
  "ConditionExpression": "attribute_not_exists(pk)"}');

-- U+0000 in a string value round-trips through the text entry point;
-- jsonb cannot hold it, so ddb_api (jsonb) refuses the response clearly.
SELECT ddb_api_text('PutItem', '{"TableName": "Items", "Item": {"pk": {"S": "nul"}, "sk": {"N": "1"}, "v": {"S": "a\u0000b"}}}');
SELECT ddb_api_text('GetItem', '{"TableName": "Items", "Key": {"pk": {"S": "nul"}, "sk": {"N": "1"}}}');
SELECT ddb_api('GetItem', '{"TableName": "Items", "Key": {"pk": {"S": "nul"}, "sk": {"N": "1"}}}');
-- SQL sees the stored form: {"$S": [parts]}, the string split at each U+0000
-- (in sets too); a literal map whose only key is "$S" is escaped with $M.
SELECT ddb_api_text('PutItem', '{"TableName": "Items", "Item": {"pk": {"S": "nul"}, "sk": {"N": "2"},
  "v": {"S": "\u0000x\u0000"}, "ss": {"SS": ["a\u0000", "b"]}, "m": {"M": {"$S": {"S": "plain"}}}}}');
SELECT ddb_get_item('Items', '{"pk": "nul", "sk": 2}');
SELECT ddb_api_text('Query', '{"TableName": "Items", "KeyConditionExpression": "pk = :p",
  "FilterExpression": "v = :v OR contains(ss, :e)",
  "ExpressionAttributeValues": {":p": {"S": "nul"}, ":v": {"S": "a\u0000b"}, ":e": {"S": "a\u0000"}}}');
SELECT ddb_put_item('Items', '{"pk": "nul", "sk": 3, "v": {"$S": ["only one"]}}');
-- key columns are PostgreSQL text, which cannot hold U+0000: refused clearly
SELECT ddb_api_text('PutItem', '{"TableName": "Items", "Item": {"pk": {"S": "a\u0000"}, "sk": {"N": "1"}}}');

-- Errors.  Wrong JSON types are SerializationException (a malformed
-- request), wrong values ValidationException.
SELECT ddb_api('PutItem', '{"TableName": "Items", "Item": {"pk": {"S": "a"}, "sk": {"N": 123}}}');
SELECT ddb_api('PutItem', '{"TableName": "Items", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "x": {"S": true}}}');
SELECT ddb_api('PutItem', '{"TableName": "Items", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "x": {"S": {}}}}');
SELECT ddb_api('PutItem', '{"TableName": "Items", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "x": {"L": {}}}}');
SELECT ddb_api('PutItem', '{"TableName": "Items", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "x": {"M": []}}}');
SELECT ddb_api('PutItem', '{"TableName": "Items", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "x": "plain"}}');
SELECT ddb_api('PutItem', '{"TableName": "Items", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "x": {"B": "abc"}}}');
-- A scalar for a structure: an element of a list or map of structures is a
-- "value", as an attribute value is; a member is a "field".
SELECT ddb_api('BatchWriteItem', '{"RequestItems": {"Items": [true]}}');
SELECT ddb_api('BatchGetItem', '{"RequestItems": {"Items": 1}}');
SELECT ddb_api('BatchGetItem', '{"RequestItems": {"Items": {"Keys": [{"pk": {"S": "a"}, "sk": {"N": "1"}}]}, "Other": 1}}');
SELECT ddb_api('CreateTable', '{"TableName": "Items2", "AttributeDefinitions": ["pk"],
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST"}');
SELECT ddb_api('CreateTable', '{"TableName": "Items2", "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "ProvisionedThroughput": 5}');
SELECT ddb_api('PutItem', '{"TableName": "Items", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "x": {}}}');
SELECT ddb_api('PutItem', '{"TableName": "Items", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "x": {"S": "a", "N": "1"}}}');
SELECT ddb_api('PutItem', '{"TableName": "Items", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}, "x": {"NULL": false}}}');
SELECT ddb_api('PutItem', '{"TableName": "Items", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}}, "ReturnValues": "ALL_NEW"}');
SELECT ddb_api('PutItem', '{"TableName": "Items", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}}, "ReturnValues": "SOME"}');
SELECT ddb_api('PutItem', '{"TableName": "Items"}');
SELECT ddb_api('PutItem', '{"TableName": "Items", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}},
  "ExpressionAttributeValues": {":v": {"S": "x"}}}');
SELECT ddb_api('PutItem', '{"TableName": "Items", "Item": {"pk": {"S": "a"}, "sk": {"N": "1"}},
  "ExpressionAttributeNames": {"#v": "x"}}');
SELECT ddb_api('PutItem', '{"TableName": "Nope", "Item": {"pk": {"S": "a"}}}');
-- an item over 400 KB is refused before the table is looked for, as
-- DynamoDB does; one just under the limit meets the missing table
SELECT ddb_api('PutItem', format('{"TableName": "Nope", "Item": {"pk": {"S": "a"}, "b": {"S": "%s"}}}', repeat('x', 409600))::jsonb);
SELECT ddb_api('PutItem', format('{"TableName": "Nope", "Item": {"pk": {"S": "a"}, "b": {"S": "%s"}}}', repeat('x', 409600 - 4))::jsonb);
SELECT ddb_api('PutItem', format('{"TableName": "Items", "Item": {"pk": {"S": "big"}, "sk": {"N": "1"}, "b": {"S": "%s"}}}', repeat('x', 409600 - 10))::jsonb)
  AS at_the_limit;
SELECT length(ddb_get_item('Items', '{"pk": "big", "sk": 1}') ->> 'b');
SELECT ddb_delete_item('Items', '{"pk": "big", "sk": 1}', return_values => 'ALL_OLD') ->> 'pk' AS deleted;
SELECT ddb_api('GetItem', '{"TableName": "Items", "Key": {"pk": {"S": "a"}}}');
SELECT ddb_api('GetItem', '{"TableName": "Items", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}, "x": {"S": "y"}}}');
SELECT ddb_api('GetItem', '{"TableName": "Items", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
  "ExpressionAttributeNames": {"#v": "x"}}');
SELECT ddb_api('GetItem', '{"TableName": "Items", "Key": {"pk": {"S": "a"}, "sk": {"N": "1"}},
  "ReturnConsumedCapacity": "ALL"}');

-- ddb_api (jsonb) refuses only a real U+0000: an escaped backslash followed
-- by "u0000" is an ordinary string.
SELECT ddb_api('PutItem', '{"TableName": "Items", "Item": {"pk": {"S": "bs"}, "sk": {"N": "1"}, "v": {"S": "a\\u0000"}}}');
SELECT ddb_api('GetItem', '{"TableName": "Items", "Key": {"pk": {"S": "bs"}, "sk": {"N": "1"}}}') #>> '{Item,v,S}' AS backslash_u0000;
-- attribute names hold no U+0000, through ExpressionAttributeNames either
SELECT ddb_api_text('GetItem', '{"TableName": "Items", "Key": {"pk": {"S": "bs"}, "sk": {"N": "1"}},
  "ProjectionExpression": "#a", "ExpressionAttributeNames": {"#a": "x\u0000y"}}');
SELECT ddb_api_text('PutItem', '{"TableName": "Items", "Item": {"pk": {"S": "bs"}, "sk": {"N": "1"}, "x\u0000y": {"S": "v"}}}');
-- The SQL functions' typed JSON and the protocol's agree on every error: a
-- malformed AttributeValue gives the same error name and text from
-- ddb_from_typed_json as from PutItem (which checks it before the table).
CREATE FUNCTION pg_temp.err(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || SQLERRM;
END $$;
SELECT v AS attribute_value, sql_error,
       sql_error = pg_temp.err(format('SELECT ddb_api(%L, %L)', 'PutItem',
         jsonb_build_object('TableName', 'Items', 'Item',
           jsonb_build_object('pk', '{"S": "t"}'::jsonb, 'sk', '{"N": "1"}'::jsonb, 'a', v::jsonb)))) AS same_from_api
FROM unnest(ARRAY['{"N": 1}', '{"N": 1.5}', '{"S": true}', '{"S": ["x"]}', '{"S": {}}',
                  '{"B": 5}', '{"B": "AQI"}', '{"B": "A$=="}', '{"BOOL": "maybe"}', '{"BOOL": 3}',
                  '{"L": {}}', '{"L": "x"}', '{"M": []}', '{"M": 1}', '{"SS": [1]}', '{"BS": ["AQI"]}',
                  '"plain"', '[1]', '{}', '{"X": "1"}', '{"S": "x", "N": "1"}', '{"NULL": false}',
                  '{"X": "1", "S": "x"}', '{"S": null, "N": "1"}']) v,
     LATERAL (SELECT pg_temp.err(format('SELECT ddb_from_typed_json(%L)',
                                        jsonb_build_object('a', v::jsonb)))) e(sql_error);
-- an empty attribute name, at the top or inside a map
SELECT pg_temp.err($$SELECT ddb_from_typed_json('{"": {"S": "x"}}')$$);
SELECT ddb_api_text('PutItem', '{"TableName": "Items", "Item": {"pk": {"S": "t"}, "sk": {"N": "1"}, "": {"S": "v"}}}');
SELECT pg_temp.err($$SELECT ddb_from_typed_json('{"m": {"L": [{"M": {"": {"S": "x"}}}]}}')$$);
SELECT pg_temp.err($$SELECT ddb_put_item('Items', '{"pk": "t", "sk": 2, "m": {"": 1}}')$$);
-- An invalid ExpressionAttributeValues entry is reported in DynamoDB's frame
-- for it, naming its key, over the protocol as in the SQL functions (of
-- several, the first in key order); a malformed one stays a bare
-- SerializationException.
SELECT ddb_api('UpdateItem', '{"TableName": "Items", "Key": {"pk": {"S": "t"}, "sk": {"N": "1"}},
  "UpdateExpression": "SET a = :w, b = :v", "ExpressionAttributeValues": {":w": {"N": "1"}, ":v": {"SS": []}}}');
SELECT ddb_api('Query', '{"TableName": "Items", "KeyConditionExpression": "pk = :v",
  "ExpressionAttributeValues": {":v": {"S": "t"}, ":n": {"N": "1e200"}, ":d": {"NS": ["1", "1.0"]}}}');
SELECT ddb_api('UpdateItem', '{"TableName": "Items", "Key": {"pk": {"S": "t"}, "sk": {"N": "1"}},
  "UpdateExpression": "SET a = :v", "ExpressionAttributeValues": {":v": {"N": 1}}}');
-- (a malformed value wins over an invalid one, as DynamoDB reads the whole
-- request before it validates anything)
SELECT ddb_api('UpdateItem', '{"TableName": "Items", "Key": {"pk": {"S": "t"}, "sk": {"N": "1"}},
  "UpdateExpression": "SET a = :a, b = :b", "ExpressionAttributeValues": {":a": {"SS": []}, ":b": {"N": 1}}}');
-- (over text, in whatever order the request writes them, the first in key order)
SELECT ddb_api_text('UpdateItem', '{"TableName": "Items", "Key": {"pk": {"S": "t"}, "sk": {"N": "1"}},
  "UpdateExpression": "SET a = :zz, b = :b", "ExpressionAttributeValues": {":zz": {"SS": []}, ":b": {"NS": ["1", "1.0"]}}}');
SELECT ddb_update_item('Items', '{"pk": "t", "sk": 1}', 'SET a = :v', vals => '{":v": {"$SS": []}}');
-- ddb_to_typed_json refuses a string holding U+0000 (document form's
-- {"$S": [parts]}), anywhere in the item, rather than cut it short: a
-- jsonb string cannot hold it, and typed JSON has no other form for it.
SELECT ddb_to_typed_json('{"s": {"$S": ["a", "b"]}}');
\echo :LAST_ERROR_SQLSTATE
SELECT ddb_to_typed_json('{"l": [1, {"m": {"$S": ["", "x"]}}]}');
SELECT ddb_to_typed_json('{"ss": {"$SS": [{"$S": ["a", "b"]}, "c"]}}');

-- A binary key of zero bytes within DynamoDB's 2048 bytes can encode past
-- ddb's own 3200-byte key limit (a zero byte takes two): every write of
-- such an item is a ValidationException naming that limit, not the
-- engine's internal error (which the endpoint would answer with a 500),
-- and writes nothing; a read of it finds no item.
SELECT ddb_api('CreateTable', '{"TableName": "Zeros", "BillingMode": "PAY_PER_REQUEST",
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "B"}],
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}]}') IS NOT NULL AS created;
CREATE TEMP TABLE zkey AS SELECT jsonb_build_object('id', jsonb_build_object('B',
  translate(encode(decode(repeat('00', 2048), 'hex'), 'base64'), E'\n', ''))) AS k;
SELECT ddb_api('PutItem', jsonb_build_object('TableName', 'Zeros', 'Item', k)) FROM zkey;
\echo :LAST_ERROR_SQLSTATE
SELECT ddb_api('UpdateItem', jsonb_build_object('TableName', 'Zeros', 'Key', k,
  'UpdateExpression', 'SET a = :a', 'ExpressionAttributeValues', '{":a": {"N": "1"}}'::jsonb)) FROM zkey;
SELECT ddb_api('BatchWriteItem', jsonb_build_object('RequestItems', jsonb_build_object('Zeros',
  jsonb_build_array(jsonb_build_object('PutRequest', jsonb_build_object('Item', k)))))) FROM zkey;
SELECT ddb_api('TransactWriteItems', jsonb_build_object('TransactItems',
  jsonb_build_array(jsonb_build_object('Put', jsonb_build_object('TableName', 'Zeros', 'Item', k))))) FROM zkey;
SELECT ddb_api('GetItem', jsonb_build_object('TableName', 'Zeros', 'Key', k)) FROM zkey;
SELECT ddb_api('DeleteItem', jsonb_build_object('TableName', 'Zeros', 'Key', k)) FROM zkey;
SELECT count(*) AS items FROM ddb_scan('Zeros');
-- (1,500 zero bytes encode within it)
SELECT ddb_api('PutItem', jsonb_build_object('TableName', 'Zeros', 'Item', jsonb_build_object('id', jsonb_build_object('B',
  translate(encode(decode(repeat('00', 1500), 'hex'), 'base64'), E'\n', ''))))) AS put;
SELECT count(*) AS items FROM ddb_scan('Zeros');
