-- The item API: DynamoDB's PutItem, GetItem, UpdateItem, DeleteItem and
-- CreateTable/DescribeTable, with a single-table design as the example.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

-- CreateTable is sugar over CREATE TABLE ... USING ddb; key columns are
-- named as the key attributes.
SELECT ddb_create_table('shop', 'PK', 'S', 'SK', 'S');
\d shop
SELECT ddb_describe_table('shop') - '{TableSizeBytes,TableId,CreationDateTime}'::text[] #- '{BillingModeSummary,LastUpdateToPayPerRequestDateTime}';
SELECT ddb_create_table('shop', 'PK');                       -- exists
SELECT ddb_create_table('x', 'PK');                          -- name too short
SELECT ddb_create_table('bad name', 'PK');
SELECT ddb_create_table('nums', 'id', 'N');
SELECT ddb_create_table('blobs', 'id', 'B', 'part', 'N');
SELECT ddb_create_table('oops', 'id', 'X');
SELECT ddb_create_table('same', 'k', 'S', 'k', 'S');
SELECT ddb_list_tables();

-- Create-only: PutItem with attribute_not_exists(PK) succeeds once.
SELECT ddb_put_item('shop', '{"PK": "CUST#42", "SK": "PROFILE", "name": "Ann", "email": "ann@example.com"}',
                    'attribute_not_exists(PK)');
SELECT ddb_put_item('shop', '{"PK": "CUST#42", "SK": "PROFILE", "name": "Impostor"}',
                    'attribute_not_exists(PK)');
SELECT ddb_get_item('shop', '{"PK": "CUST#42", "SK": "PROFILE"}');

-- Orders in the same partition.
SELECT ddb_put_item('shop', jsonb_build_object('PK', 'CUST#42', 'SK', 'ORDER#2025-01-09#A11',
                    'status', 'SHIPPED', 'total', 42.50, 'createdAt', '2025-01-09'));
SELECT ddb_put_item('shop', jsonb_build_object('PK', 'CUST#42', 'SK', 'ORDER#2025-02-14#B07',
                    'status', 'PENDING', 'total', 19.99, 'createdAt', '2025-02-14'));

-- PutItem replaces the whole item (ALL_OLD returns what was there).
SELECT ddb_put_item('shop', '{"PK": "CUST#42", "SK": "ORDER#2025-02-14#B07", "status": "CANCELLED"}',
                    return_values => 'ALL_OLD');
SELECT ddb_get_item('shop', '{"PK": "CUST#42", "SK": "ORDER#2025-02-14#B07"}');

-- GetItem with a projection and #names; a missing item is NULL.
SELECT ddb_get_item('shop', '{"PK": "CUST#42", "SK": "PROFILE"}', '#n, email', '{"#n": "name"}');
SELECT ddb_get_item('shop', '{"PK": "CUST#42", "SK": "NOPE"}') IS NULL AS absent;

-- Optimistic locking with a version attribute.
SELECT ddb_update_item('shop', '{"PK": "CUST#42", "SK": "PROFILE"}',
                       'SET #v = :one', 'attribute_not_exists(#v)',
                       '{"#v": "version"}', '{":one": 1}', 'ALL_NEW');
SELECT ddb_update_item('shop', '{"PK": "CUST#42", "SK": "PROFILE"}',
                       'SET #v = #v + :one, email = :e', '#v = :expected',
                       '{"#v": "version"}', '{":one": 1, ":expected": 1, ":e": "ann@new.example"}',
                       'UPDATED_NEW');
-- a stale writer fails and changes nothing
SELECT ddb_update_item('shop', '{"PK": "CUST#42", "SK": "PROFILE"}',
                       'SET #v = #v + :one, email = :e', '#v = :expected',
                       '{"#v": "version"}', '{":one": 1, ":expected": 1, ":e": "stale@example"}');
SELECT ddb_get_item('shop', '{"PK": "CUST#42", "SK": "PROFILE"}', 'email, version');

-- Counters with ADD, tags as string sets.  VIEWS is one of DynamoDB's
-- reserved words, so it needs a #name placeholder.
SELECT ddb_update_item('shop', '{"PK": "PRODUCT#1", "SK": "STATS"}', 'ADD views :n', vals => '{":n": 1}');
SELECT ddb_update_item('shop', '{"PK": "PRODUCT#1", "SK": "STATS"}', 'ADD #v :n', names => '{"#v": "views"}',
                       vals => '{":n": 1}', return_values => 'ALL_NEW');
SELECT ddb_update_item('shop', '{"PK": "PRODUCT#1", "SK": "STATS"}', 'ADD #v :n', names => '{"#v": "views"}',
                       vals => '{":n": 5}', return_values => 'UPDATED_OLD');
SELECT ddb_update_item('shop', '{"PK": "PRODUCT#1", "SK": "STATS"}', 'ADD tags :t',
                       vals => '{":t": {"$SS": ["new", "sale"]}}', return_values => 'UPDATED_NEW');
SELECT ddb_update_item('shop', '{"PK": "PRODUCT#1", "SK": "STATS"}', 'DELETE tags :t',
                       vals => '{":t": {"$SS": ["new"]}}', return_values => 'ALL_NEW');
SELECT ddb_to_typed_json(ddb_get_item('shop', '{"PK": "PRODUCT#1", "SK": "STATS"}'));

-- UpdateItem of a missing item creates it, whatever its actions (as DynamoDB:
-- REMOVE alone leaves the key-only item).
SELECT ddb_update_item('shop', '{"PK": "CUST#7", "SK": "PROFILE"}', 'REMOVE nickname',
                       return_values => 'ALL_NEW');
SELECT ddb_get_item('shop', '{"PK": "CUST#7", "SK": "PROFILE"}') AS created;
SELECT ddb_update_item('shop', '{"PK": "CUST#7", "SK": "PROFILE"}', 'SET nickname = :n',
                       vals => '{":n": "seven"}', return_values => 'ALL_NEW');

-- DeleteItem with a condition; ALL_OLD.
SELECT ddb_delete_item('shop', '{"PK": "CUST#7", "SK": "PROFILE"}', 'nickname = :x', vals => '{":x": "eight"}');
SELECT ddb_delete_item('shop', '{"PK": "CUST#7", "SK": "PROFILE"}', 'nickname = :x', vals => '{":x": "seven"}',
                       return_values => 'ALL_OLD');
SELECT ddb_delete_item('shop', '{"PK": "CUST#7", "SK": "PROFILE"}', return_values => 'ALL_OLD') IS NULL AS already_gone;

-- The API and SQL see the same rows.
SELECT "PK", "SK", item FROM shop ORDER BY "PK", "SK" COLLATE "C";
UPDATE shop SET item = item || '{"viaSql": true}' WHERE "PK" = 'CUST#42' AND "SK" = 'PROFILE';
SELECT ddb_get_item('shop', '{"PK": "CUST#42", "SK": "PROFILE"}', 'viaSql');

-- Several writes of one key in one statement see each other (and the
-- call site parses its expressions once: the trees are cached while the
-- expressions, names and values stay the same, and re-parsed when they change).
SELECT ddb_update_item('shop', '{"PK": "CTR", "SK": "X"}', 'ADD n :one', vals => '{":one": 1}')
FROM generate_series(1, 5);
SELECT ddb_get_item('shop', '{"PK": "CTR", "SK": "X"}');
SELECT ddb_update_item('shop', '{"PK": "CTR", "SK": "X"}', 'ADD n :v', vals => jsonb_build_object(':v', i),
                       return_values => 'UPDATED_NEW')
FROM generate_series(1, 3) i;

-- A transaction sees its own writes; ROLLBACK undoes them.
BEGIN;
SELECT ddb_put_item('shop', '{"PK": "TX", "SK": "1", "v": 1}');
SELECT ddb_get_item('shop', '{"PK": "TX", "SK": "1"}');
ROLLBACK;
SELECT ddb_get_item('shop', '{"PK": "TX", "SK": "1"}') IS NULL AS rolled_back;

-- Number and binary keys.
SELECT ddb_put_item('nums', '{"id": 1e3, "v": "thousand"}');
SELECT ddb_get_item('nums', '{"id": 1000.00}');
SELECT ddb_put_item('blobs', '{"id": {"$B": "3q2+7w=="}, "part": 1, "v": true}');
SELECT ddb_get_item('blobs', '{"id": {"$B": "3q2+7w=="}, "part": 1}');
SELECT ddb_to_typed_json(ddb_get_item('blobs', '{"id": {"$B": "3q2+7w=="}, "part": 1}'));

-- Errors: each a DynamoDB error kind with its own SQLSTATE.
\set VERBOSITY sqlstate
SELECT ddb_get_item('shop', '{"PK": "CUST#42"}');                       -- key incomplete
SELECT ddb_get_item('shop', '{"PK": "CUST#42", "SK": "PROFILE", "x": 1}'); -- extra attribute
SELECT ddb_get_item('shop', '{"PK": 42, "SK": "PROFILE"}');             -- wrong key type
SELECT ddb_put_item('shop', '{"PK": "", "SK": "x"}');                    -- empty key
SELECT ddb_put_item('shop', jsonb_build_object('PK', repeat('k', 2049), 'SK', 'x'));  -- key too long
SELECT ddb_put_item('nums', '{"id": 1e126}');                            -- number out of range
SELECT ddb_put_item('shop', '{"PK": "p", "SK": "x", "s": {"$SS": []}}'); -- empty set
SELECT ddb_put_item('shop', jsonb_build_object('PK', 'p', 'SK', 'big', 'data', repeat('x', 410000)));
SELECT ddb_put_item('shop', '{"PK": "p", "SK": "x"}', 'attribute_exists(PK)'); -- condition fails
SELECT ddb_update_item('shop', '{"PK": "CUST#42", "SK": "PROFILE"}', 'SET PK = :v', vals => '{":v": "x"}');
SELECT ddb_update_item('shop', '{"PK": "CUST#42", "SK": "PROFILE"}', 'SET a = :v');  -- undefined :v
SELECT ddb_update_item('shop', '{"PK": "CUST#42", "SK": "PROFILE"}', 'SET a = :v', vals => '{":v": 1, ":w": 2}');
SELECT ddb_put_item('shop', '{"PK": "p", "SK": "x"}', return_values => 'ALL_NEW');
SELECT ddb_get_item('nosuch', '{"k": "v"}');
SELECT ddb_get_item('pg_class', '{"k": "v"}');
\set VERBOSITY default
SELECT ddb_get_item('shop', '{"PK": "CUST#42"}');
SELECT ddb_put_item('shop', '{"PK": "", "SK": "x"}');
SELECT ddb_put_item('shop', '{"PK": "p", "SK": "x"}', 'attribute_exists(PK)');
SELECT count(*) AS nothing_written FROM shop WHERE "PK" = 'p';

SELECT ddb_verify('shop') ->> 'live' AS live_items;
DROP TABLE shop, nums, blobs;

-- Attribute names reach 65,535 bytes in items and in the names the
-- expressions use; one byte more is DynamoDB's ValidationException in a
-- put, a projection, an update and a condition, and nothing is written.
SELECT ddb_create_table('longnames', 'pk');
SELECT ddb_put_item('longnames', jsonb_build_object('pk', 'a', repeat('n', 65535), 1));
SELECT length(ddb_get_item('longnames', '{"pk": "a"}', '#n',
                           jsonb_build_object('#n', repeat('n', 65535)))::text);
\set VERBOSITY terse
SELECT ddb_put_item('longnames', jsonb_build_object('pk', 'b', 'm', jsonb_build_object(repeat('n', 65536), 1)));
SELECT ddb_get_item('longnames', '{"pk": "a"}', '#n', jsonb_build_object('#n', repeat('n', 65536)));
SELECT ddb_update_item('longnames', '{"pk": "a"}', 'SET #n = :v',
                       names => jsonb_build_object('#n', repeat('n', 65536)), vals => '{":v": 1}');
SELECT ddb_delete_item('longnames', '{"pk": "a"}', 'attribute_exists(#n)',
                       jsonb_build_object('#n', repeat('n', 65536)));
\set VERBOSITY default
SELECT pk FROM longnames;
DROP TABLE longnames;

-- A key attribute in an update is refused before the item is read, so a
-- condition that fails (or a missing item) never hides it: DynamoDB
-- validates the request first.
SELECT ddb_create_table('keyupd', 'pk', 'S', 'sk', 'S');
SELECT ddb_put_item('keyupd', '{"pk": "a", "sk": "b", "v": 1}');
SELECT ddb_update_item('keyupd', '{"pk": "a", "sk": "b"}', 'SET sk = :x', 'attribute_not_exists(pk)',
                       vals => '{":x": "c"}');
SELECT ddb_update_item('keyupd', '{"pk": "a", "sk": "none"}', 'REMOVE pk', 'attribute_exists(pk)');
SELECT ddb_api('UpdateItem', '{"TableName": "keyupd", "Key": {"pk": {"S": "a"}, "sk": {"S": "b"}},
  "AttributeUpdates": {"sk": {"Action": "DELETE"}}, "Expected": {"v": {"Value": {"N": "2"}}}}');
SELECT * FROM keyupd;
DROP TABLE keyupd;

-- A read-only transaction writes nothing through the item API either (as
-- INSERT/UPDATE/DELETE, and on a hot standby, where XactReadOnly is set):
-- each write is refused with read_only_sql_transaction before it reads.
SELECT ddb_create_table('ro_items', 'pk');
SELECT ddb_put_item('ro_items', '{"pk": "a", "n": 1}');
BEGIN READ ONLY;
SELECT ddb_put_item('ro_items', '{"pk": "b"}');
ROLLBACK;
BEGIN READ ONLY;
SELECT ddb_update_item('ro_items', '{"pk": "a"}', 'ADD n :one', vals => '{":one": 1}');
ROLLBACK;
BEGIN READ ONLY;
SELECT ddb_delete_item('ro_items', '{"pk": "a"}');
ROLLBACK;
BEGIN READ ONLY;
SELECT ddb_api('PutItem', '{"TableName": "ro_items", "Item": {"pk": {"S": "c"}}}');
ROLLBACK;
BEGIN READ ONLY;
SELECT ddb_batch_write_item('{"ro_items": [{"DeleteRequest": {"Key": {"pk": "a"}}}]}');
ROLLBACK;
BEGIN READ ONLY;
SELECT ddb_transact_write_items('[{"ConditionCheck": {"TableName": "ro_items", "Key": {"pk": "a"},
  "ConditionExpression": "attribute_exists(pk)"}}]');
ROLLBACK;
BEGIN READ ONLY;
SELECT ddb_get_item('ro_items', '{"pk": "a"}');
COMMIT;
SELECT * FROM ro_items;
DROP TABLE ro_items;
