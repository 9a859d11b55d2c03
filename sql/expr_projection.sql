-- ProjectionExpression: which attributes GetItem, Query and Scan return,
-- applied by ddb_project(item, projection, names).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

CREATE TEMP TABLE item AS SELECT '{
  "pk": "CUST#42", "sk": "PROFILE", "nick": "Ann",
  "address": {"city": "Oslo", "zip": "0150", "geo": {"lat": 59.9, "lon": 10.7}},
  "orders": [{"id": "A17", "amount": 12}, {"id": "B3", "amount": 30}, {"id": "C9", "amount": 7}],
  "tags": {"$SS": ["vip"]}, "bin": {"$B": "AQID"}
}'::jsonb AS i;

-- Top-level attributes, in any order; values keep their types.
SELECT ddb_project(i, 'nick, pk, tags, bin') FROM item;

-- A nested path keeps its structure: a.b yields {"a": {"b": ...}}.
SELECT ddb_project(i, 'address.city, address.geo.lat') FROM item;

-- List elements keep their order and close up, whatever the order written.
SELECT ddb_project(i, 'orders[2], orders[0]') FROM item;
SELECT ddb_project(i, 'orders[1].id, orders[0].amount') FROM item;

-- Missing paths are left out; projecting nothing that exists gives {}.
SELECT ddb_project(i, 'nick, absent, address.street, orders[9], nick2.x') FROM item;
SELECT ddb_project(i, 'absent') FROM item;

-- #name placeholders, needed for reserved words such as "name".
SELECT ddb_project('{"name": "Ann", "size": 3, "other": 1}', '#n, #s', '{"#n": "name", "#s": "size"}');

-- No item, no result.
SELECT ddb_project(NULL, 'pk') IS NULL AS no_item;

-- Paths that overlap or conflict are DynamoDB errors.
SELECT ddb_project(i, 'address, address.city') FROM item;
SELECT ddb_project(i, 'nick, nick') FROM item;
SELECT ddb_project(i, 'orders[0], orders.x') FROM item;
