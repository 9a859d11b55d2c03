-- Time to Live: UpdateTimeToLive and DescribeTimeToLive (SQL and ddb_api)
-- with DynamoDB's statuses and errors; which items expire (a number of
-- epoch seconds in the past, at most five years ago); ddb_ttl_sweep
-- deleting exactly those, through every write path's index maintenance;
-- the internal TTL index hidden from DescribeTable, Query and
-- ddb_drop_gsi; privileges.  ddb_verify_gsi proves the TTL index ("$ttl")
-- and the table's GSI hold exactly their entries after each step.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

CREATE FUNCTION sqlstate_of(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE stmt;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ' ' || SQLERRM;
END $$;

-- epoch seconds from now, as a number
CREATE FUNCTION epoch_in(secs numeric) RETURNS numeric LANGUAGE sql AS
$$ SELECT round(extract(epoch FROM clock_timestamp())::numeric + secs, 3) $$;

SELECT ddb_create_table('sessions', 'user', 'S', 'sid', 'S');
SELECT ddb_create_gsi('sessions', 'ByDevice', 'device');

-- ------------------------------------------------------------------------
-- Status and errors
-- ------------------------------------------------------------------------
SELECT ddb_describe_time_to_live('sessions');
SELECT ddb_api('DescribeTimeToLive', '{"TableName": "sessions"}');
-- disabling what is not enabled
SELECT sqlstate_of($$SELECT ddb_update_time_to_live('sessions', 'expires', false)$$);
SELECT ddb_update_time_to_live('sessions', 'expires', true);
SELECT ddb_describe_time_to_live('sessions');
SELECT ddb_api('DescribeTimeToLive', '{"TableName": "sessions"}');
-- enabling twice, on the same attribute or another
SELECT sqlstate_of($$SELECT ddb_update_time_to_live('sessions', 'expires', true)$$);
SELECT sqlstate_of($$SELECT ddb_update_time_to_live('sessions', 'other', true)$$);
-- disabling another attribute than the enabled one
SELECT sqlstate_of($$SELECT ddb_update_time_to_live('sessions', 'other', false)$$);
-- bad specifications
SELECT sqlstate_of($$SELECT ddb_update_time_to_live('sessions', '', true)$$);
SELECT sqlstate_of($$SELECT ddb_update_time_to_live('sessions', NULL, true)$$);
SELECT sqlstate_of($$SELECT ddb_update_time_to_live('sessions', 'expires', NULL)$$);
SELECT sqlstate_of($$SELECT ddb_update_time_to_live('sessions', repeat('x', 256), false)$$);
SELECT sqlstate_of($$SELECT ddb_update_time_to_live('nosuch', 'expires', true)$$);
SELECT sqlstate_of($$SELECT ddb_api('UpdateTimeToLive', '{"TableName": "sessions"}')$$);
SELECT sqlstate_of($$SELECT ddb_api('UpdateTimeToLive', '{"TableName": "sessions", "TimeToLiveSpecification": {"AttributeName": "expires"}}')$$);
SELECT sqlstate_of($$SELECT ddb_api('UpdateTimeToLive', '{"TableName": "sessions", "TimeToLiveSpecification": {"Enabled": true}}')$$);
SELECT sqlstate_of($$SELECT ddb_api('UpdateTimeToLive', '{"TableName": "sessions", "TimeToLiveSpecification": {"AttributeName": "expires", "Enabled": true}}')$$);
SELECT sqlstate_of($$SELECT ddb_api('DescribeTimeToLive', '{"TableName": "nosuch"}')$$);
SELECT sqlstate_of($$SELECT ddb_api('DescribeTimeToLive', '{}')$$);
-- nothing changed
SELECT ddb_describe_time_to_live('sessions');

-- The TTL index is internal: not in DescribeTable, not queryable, not
-- droppable as a GSI.
SELECT jsonb_path_query_array(ddb_api('DescribeTable', '{"TableName": "sessions"}'),
                              '$.Table.GlobalSecondaryIndexes[*].IndexName') AS gsis,
       jsonb_path_query_array(ddb_api('DescribeTable', '{"TableName": "sessions"}'),
                              '$.Table.AttributeDefinitions[*].AttributeName') AS attrs;
SELECT sqlstate_of($$SELECT ddb_query('sessions', '#t < :n', '{":n": 1}', '{"#t": "expires"}', index_name => '$ttl')$$);
SELECT sqlstate_of($$SELECT ddb_drop_gsi('sessions', '$ttl')$$);

-- ------------------------------------------------------------------------
-- Which items expire.  Written by the item API, SQL INSERT and UPDATE, and
-- BatchWriteItem-free PutItem through ddb_api: every path keeps the index.
-- ------------------------------------------------------------------------
SELECT ddb_put_item('sessions', jsonb_build_object('user', 'ann', 'sid', 's1', 'expires', epoch_in(-60), 'device', 'phone'));
SELECT ddb_put_item('sessions', jsonb_build_object('user', 'ann', 'sid', 's2', 'expires', epoch_in(3600), 'device', 'laptop'));
INSERT INTO sessions VALUES ('bob', 's1', jsonb_build_object('expires', epoch_in(-1), 'device', 'tablet'));
INSERT INTO sessions VALUES ('bob', 's2', '{"expires": "2020-01-01"}');         -- not a number: never
INSERT INTO sessions VALUES ('bob', 's3', '{"device": "phone"}');               -- no attribute: never
INSERT INTO sessions VALUES ('bob', 's4', jsonb_build_object('expires', epoch_in(-6 * 366 * 86400)));  -- over five years ago: never
INSERT INTO sessions VALUES ('bob', 's5', jsonb_build_object('expires', epoch_in(-4 * 365 * 86400)));  -- four years ago: expires
INSERT INTO sessions VALUES ('cid', 's1', '{"expires": {"nested": 1}}');        -- a map: never
SELECT ddb_api('PutItem', format('{"TableName": "sessions", "Item": {"user": {"S": "cid"}, "sid": {"S": "s2"}, "expires": {"N": "%s"}}}', epoch_in(-5))::jsonb);
-- an item whose expired TTL is moved to the future by SQL, another by UpdateItem
INSERT INTO sessions VALUES ('dan', 's1', jsonb_build_object('expires', epoch_in(-30)));
UPDATE sessions SET item = jsonb_build_object('expires', epoch_in(600)) WHERE "user" = 'dan' AND sid = 's1';
SELECT ddb_put_item('sessions', jsonb_build_object('user', 'dan', 'sid', 's2', 'expires', epoch_in(-30)));
SELECT ddb_update_item('sessions', '{"user": "dan", "sid": "s2"}', 'REMOVE expires');
-- an item whose TTL becomes a string
SELECT ddb_put_item('sessions', jsonb_build_object('user', 'dan', 'sid', 's3', 'expires', epoch_in(-30)));
SELECT ddb_update_item('sessions', '{"user": "dan", "sid": "s3"}', 'SET expires = :s', vals => '{":s": "soon"}');
SELECT ddb_verify_gsi('sessions');

-- Until deleted, expired items are still returned, as DynamoDB does; the
-- filter users add hides them.
SELECT count(*) AS all_items FROM ddb_scan('sessions');
SELECT count(*) AS unexpired FROM ddb_scan('sessions', 'attribute_not_exists(#t) OR NOT (#t < :now)',
                                          jsonb_build_object(':now', extract(epoch FROM now())::bigint),
                                          '{"#t": "expires"}');

-- The sweep deletes ann/s1, bob/s1, bob/s5, cid/s2 and nothing else.
SELECT ddb_ttl_sweep('sessions');
SELECT string_agg(x->>'user' || '/' || (x->>'sid'), ' ' ORDER BY x->>'user', x->>'sid') AS remaining
FROM ddb_scan('sessions') x;
-- their GSI entries went with them
SELECT string_agg(x->>'user' || '/' || (x->>'sid'), ' ' ORDER BY x->>'user', x->>'sid') AS by_device
FROM ddb_scan('sessions', index_name => 'ByDevice') x;
SELECT ddb_verify_gsi('sessions');
SELECT ddb_verify('sessions'::regclass) IS NOT NULL AS tree_ok;
-- a second sweep finds nothing
SELECT ddb_ttl_sweep('sessions');

-- The other write paths keep the TTL index too: BatchWriteItem (its
-- leaf-at-a-time inserts of new keys and a replacing put), TransactWriteItems,
-- PartiQL, COPY, MERGE and SQL DELETE.  Each writes an expired item (or
-- one that was); the sweep deletes exactly those that still are.
SELECT ddb_create_table('paths', 'id', 'N');
SELECT ddb_update_time_to_live('paths', 'ttl', true);
SELECT ddb_put_item('paths', jsonb_build_object('id', 3, 'ttl', epoch_in(3600)));
SELECT ddb_put_item('paths', jsonb_build_object('id', 9, 'ttl', epoch_in(-10)));
SELECT ddb_batch_write_item(jsonb_build_object('paths', jsonb_build_array(
  jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object('id', 1, 'ttl', epoch_in(-10)))),
  jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object('id', 2, 'ttl', epoch_in(-10)))),
  jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object('id', 3, 'ttl', epoch_in(-10)))))));
SELECT ddb_transact_write_items(jsonb_build_array(
  jsonb_build_object('Put', jsonb_build_object('TableName', 'paths', 'Item', jsonb_build_object('id', 4, 'ttl', epoch_in(-10)))),
  jsonb_build_object('Update', jsonb_build_object('TableName', 'paths', 'Key', jsonb_build_object('id', 5),
    'UpdateExpression', 'SET #t = :t', 'ExpressionAttributeNames', jsonb_build_object('#t', 'ttl'),
    'ExpressionAttributeValues', jsonb_build_object(':t', epoch_in(-10))))));
SELECT ddb_api('ExecuteStatement', jsonb_build_object('Statement',
  format('INSERT INTO "paths" VALUE {''id'': 6, ''ttl'': %s}', epoch_in(-10))));
COPY paths FROM PROGRAM 'printf "7\t{\"ttl\": 1000000000}\n"';  -- 2001: over five years ago, never
UPDATE paths SET item = jsonb_build_object('ttl', epoch_in(-10)) WHERE id = 7;
MERGE INTO paths p USING (SELECT 8 AS id) s ON p.id = s.id
  WHEN NOT MATCHED THEN INSERT VALUES (s.id, jsonb_build_object('ttl', epoch_in(-10)));
DELETE FROM paths WHERE id = 9;
SELECT ddb_verify_gsi('paths');
SELECT ddb_ttl_sweep('paths');
SELECT count(*) AS left FROM ddb_scan('paths');
DROP TABLE paths;

-- A sweep from SQL takes all expired items in one pass, in key order,
-- however many there are.  (It swept in batches of 1,000, each scanning
-- the TTL index with the statement's snapshot, which still saw the entries
-- the batches before had deleted: with more than 1,000 expired items it
-- found the same 1,000 again and again, without end, until it ran out of
-- memory.  The timeout only guards against that.)
SET statement_timeout = '60s';
SELECT ddb_create_table('many', 'id', 'N');
SELECT ddb_update_time_to_live('many', 'ttl', true);
SELECT count(*) FROM (SELECT ddb_put_item('many', jsonb_build_object('id', i, 'ttl', epoch_in(-10 - i)))
                      FROM generate_series(1, 2500) i) s;
SELECT ddb_put_item('many', jsonb_build_object('id', 0, 'ttl', epoch_in(100)));
-- its keys are sorted in work_mem, spilling to temporary files beyond it:
-- in 64 kB the sweep writes one (which temp_file_limit 0 refuses, deleting
-- nothing), and without the limit it deletes them all
SET work_mem = '64kB';
SET temp_file_limit = 0;
SELECT sqlstate_of($$SELECT ddb_ttl_sweep('many')$$);
RESET temp_file_limit;
SELECT count(*) AS left FROM ddb_scan('many');
SELECT ddb_ttl_sweep('many') AS swept;
RESET work_mem;
SELECT count(*) AS left FROM ddb_scan('many');
SELECT ddb_verify_gsi('many');
-- With an LSI, the collection rows come after all the items, summed per
-- collection as the sweep meets them (in key order, one partition's
-- changes after another): the sizes must come out exact.
SELECT ddb_create_table('manyl', 'pk', 'S', 'sk', 'N', jsonb_build_array(jsonb_build_object(
  'IndexName', 'ByN',
  'KeySchema', jsonb_build_array(jsonb_build_object('AttributeName', 'pk', 'KeyType', 'HASH'),
                                 jsonb_build_object('AttributeName', 'n', 'KeyType', 'RANGE', 'AttributeType', 'N')),
  'Projection', jsonb_build_object('ProjectionType', 'ALL'))));
SELECT ddb_update_time_to_live('manyl', 'ttl', true);
SELECT count(*) FROM (SELECT ddb_put_item('manyl', jsonb_build_object('pk', 'p' || (i % 3), 'sk', i, 'n', i % 7,
                                                                   'ttl', epoch_in(CASE WHEN i % 4 = 0 THEN 100 ELSE -10 END)))
                      FROM generate_series(1, 1200) i) s;
SELECT ddb_ttl_sweep('manyl') AS swept;
SELECT count(*) AS left FROM ddb_scan('manyl');
SELECT ddb_verify_gsi('manyl');
RESET statement_timeout;
DROP TABLE many;
DROP TABLE manyl;

-- ddb_ttl_sweep() sweeps every TTL-enabled table; tables without TTL are
-- left alone.
SELECT ddb_create_table('carts', 'id', 'N');
SELECT ddb_put_item('carts', jsonb_build_object('id', 1, 'ttl', epoch_in(-10)));
SELECT ddb_ttl_sweep('carts');                       -- TTL not enabled: nothing
SELECT ddb_update_time_to_live('carts', 'ttl', true);  -- the backfill indexes existing items
SELECT ddb_put_item('carts', jsonb_build_object('id', 2, 'ttl', epoch_in(-10)));
SELECT ddb_put_item('carts', jsonb_build_object('id', 3, 'ttl', epoch_in(100)));
SELECT ddb_put_item('sessions', jsonb_build_object('user', 'eve', 'sid', 's1', 'expires', epoch_in(-10)));
SELECT ddb_ttl_sweep();
SELECT (SELECT string_agg(x->>'id', ' ' ORDER BY x->>'id') FROM ddb_scan('carts') x) AS carts,
       (SELECT count(*) FROM ddb_query('sessions', '#u = :u', '{":u": "eve"}', '{"#u": "user"}')) AS eve;

-- TRUNCATE empties the TTL index too.
TRUNCATE carts;
SELECT ddb_put_item('carts', jsonb_build_object('id', 4, 'ttl', epoch_in(-10)));
SELECT ddb_verify_gsi('carts');
SELECT ddb_ttl_sweep('carts');

-- Disabling drops the TTL index; expired items then stay.
SELECT ddb_put_item('carts', jsonb_build_object('id', 5, 'ttl', epoch_in(-10)));
SELECT ddb_api('UpdateTimeToLive', '{"TableName": "carts", "TimeToLiveSpecification": {"AttributeName": "ttl", "Enabled": false}}');
SELECT ddb_api('DescribeTimeToLive', '{"TableName": "carts"}');
SELECT ddb_ttl_sweep('carts');
SELECT count(*) FROM ddb_scan('carts');
SELECT count(*) AS ttl_index_tables FROM ddb_internal.gsi WHERE base = 'carts'::regclass;
-- The change is the transaction's, shown at once (no ENABLING or
-- DISABLING): a rolled-back enable leaves TTL disabled and no TTL index.
BEGIN;
SELECT ddb_update_time_to_live('carts', 'ttl', true);
SELECT ddb_describe_time_to_live('carts');
ROLLBACK;
SELECT ddb_describe_time_to_live('carts');
SELECT count(*) AS ttl_index_tables FROM ddb_internal.gsi WHERE base = 'carts'::regclass;
-- and it can be enabled again, on another attribute
SELECT ddb_api('UpdateTimeToLive', '{"TableName": "carts", "TimeToLiveSpecification": {"AttributeName": "ttl", "Enabled": true}}');
SELECT ddb_ttl_sweep('carts');

-- ------------------------------------------------------------------------
-- Privileges: enabling TTL needs the table's owner; sweeping a table needs
-- DELETE and SELECT on it; ddb_ttl_sweep() skips tables one may not sweep.
-- ------------------------------------------------------------------------
CREATE ROLE ttl_user;
GRANT SELECT ON sessions, carts TO ttl_user;
SELECT ddb_put_item('carts', jsonb_build_object('id', 6, 'ttl', epoch_in(-10)));
SET ROLE ttl_user;
SELECT sqlstate_of($$SELECT ddb_update_time_to_live('carts', 'ttl', false)$$);
SELECT sqlstate_of($$SELECT ddb_ttl_sweep('carts')$$);
SELECT ddb_ttl_sweep();
RESET ROLE;
SELECT count(*) AS carts_left FROM ddb_scan('carts');
GRANT DELETE ON carts TO ttl_user;
SET ROLE ttl_user;
SELECT ddb_ttl_sweep();
RESET ROLE;
SELECT count(*) AS carts_left FROM ddb_scan('carts');
-- Without SELECT a table is skipped by ddb_ttl_sweep() and refused by name
-- (DELETE alone may not read the items' expiry); with row-level security
-- applying to the caller too, since the sweep does not apply policies.
SELECT ddb_put_item('carts', jsonb_build_object('id', 8, 'ttl', epoch_in(-10)));
REVOKE SELECT ON carts FROM ttl_user;
SET ROLE ttl_user;
SELECT ddb_ttl_sweep();
SELECT sqlstate_of($$SELECT ddb_ttl_sweep('carts')$$);
RESET ROLE;
GRANT SELECT ON carts TO ttl_user;
ALTER TABLE carts ENABLE ROW LEVEL SECURITY;
CREATE POLICY carts_all ON carts USING (true);
SET ROLE ttl_user;
SELECT ddb_ttl_sweep();
SELECT sqlstate_of($$SELECT ddb_ttl_sweep('carts')$$);
RESET ROLE;
SELECT count(*) AS carts_left FROM ddb_scan('carts');
DROP POLICY carts_all ON carts;
ALTER TABLE carts DISABLE ROW LEVEL SECURITY;
SET ROLE ttl_user;
SELECT ddb_ttl_sweep();
RESET ROLE;
-- Its deletions fire no triggers (the service's, as the worker's), so a
-- table with a DELETE trigger of its own (an audit) is swept only by its
-- owner: a role that may delete from it would skip the trigger.
CREATE TABLE carts_audit (id jsonb);
CREATE FUNCTION carts_audit() RETURNS trigger LANGUAGE plpgsql AS
$$BEGIN INSERT INTO carts_audit VALUES (OLD.id); RETURN OLD; END$$;
SELECT ddb_put_item('carts', jsonb_build_object('id', 7, 'ttl', epoch_in(-10)));
CREATE TRIGGER carts_audit AFTER DELETE ON carts FOR EACH ROW EXECUTE FUNCTION carts_audit();
SET ROLE ttl_user;
SELECT ddb_ttl_sweep();                          -- skipped: not the owner
SELECT sqlstate_of($$SELECT ddb_ttl_sweep('carts')$$);  -- refused, as DeleteItem is
RESET ROLE;
SELECT count(*) AS carts_left FROM ddb_scan('carts');
-- named, it is refused to the owner too, as the item functions' writes
-- are (README, Limitations); without a name the owner sweeps it
SELECT sqlstate_of($$SELECT ddb_ttl_sweep('carts')$$);
SELECT ddb_ttl_sweep();                          -- the owner's call
SELECT count(*) AS carts_left, (SELECT count(*) FROM carts_audit) AS audited FROM ddb_scan('carts');
DROP TRIGGER carts_audit ON carts;
DROP FUNCTION carts_audit();
DROP TABLE carts_audit;

-- Dropping the table drops its TTL index.
DROP TABLE carts;
SELECT count(*) AS orphans FROM ddb_internal.gsi g
WHERE NOT EXISTS (SELECT FROM pg_class c WHERE c.oid = g.base);
SELECT count(*) AS ttl_tables FROM pg_class WHERE relname LIKE 'carts__%';

REVOKE ALL ON sessions FROM ttl_user;
DROP ROLE ttl_user;
DROP TABLE sessions;
DROP FUNCTION epoch_in(numeric);
DROP FUNCTION sqlstate_of(text);
