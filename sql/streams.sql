-- Streams: enabling and disabling, one record per item change from every
-- write path (SQL INSERT/UPDATE/DELETE/COPY/MERGE, the item API, ddb_api),
-- the record shapes of each view type, reading in order and resuming, and
-- the errors.  DynamoDB Streams' API through ddb_api is in streams_api.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
CREATE SCHEMA streams;
SET ddb.schema = streams;
SET search_path = streams, public;

-- Sequence numbers, event ids and times depend on what ran before: records
-- are shown without them, and their order is checked separately.
CREATE FUNCTION rec(r jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT (r - 'eventID') #- '{dynamodb,SequenceNumber}' #- '{dynamodb,ApproximateCreationDateTime}'
$$;
CREATE FUNCTION recs(tbl text) RETURNS SETOF jsonb LANGUAGE sql AS $$
  SELECT rec(r) FROM ddb_stream_records(tbl) r
$$;
-- the records' short form: event, keys, images
CREATE FUNCTION brief(tbl text, after text DEFAULT NULL) RETURNS TABLE (event text, keys jsonb, new jsonb, old jsonb) LANGUAGE sql AS $$
  SELECT r->>'eventName', r->'dynamodb'->'Keys', r->'dynamodb'->'NewImage', r->'dynamodb'->'OldImage'
  FROM ddb_stream_records(tbl, NULL, after) r
$$;

SELECT ddb_create_table('orders', 'PK', 'S', 'SK', 'S');

-- No stream: DescribeTable shows none, reading is ResourceNotFoundException,
-- and disabling is refused.
SELECT ddb_describe_table('orders') ? 'LatestStreamArn' AS has_stream;
SELECT * FROM ddb_stream_records('orders');
SELECT ddb_update_stream('orders', NULL);
SELECT ddb_update_stream('orders', 'NEW_AND_OLD');

-- Writes before the stream is enabled are not in it.
INSERT INTO orders VALUES ('CUST#1', 'PROFILE', '{"name": "Ann"}');

-- Enable: DescribeTable shows the specification, the label and the ARN.
SELECT ddb_update_stream('orders', 'NEW_AND_OLD_IMAGES') ? 'LatestStreamArn' AS enabled;
SELECT d->'StreamSpecification' AS spec,
       d->>'LatestStreamArn' = d->>'TableArn' || '/stream/' || (d->>'LatestStreamLabel') AS arn_ok,
       d->>'LatestStreamLabel' ~ '^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}$' AS label_ok
FROM ddb_describe_table('orders') d;
SELECT ddb_update_stream('orders', 'KEYS_ONLY');
SELECT count(*) FROM ddb_stream_records('orders');

-- Every SQL write path: INSERT, UPDATE, DELETE, COPY, MERGE.
INSERT INTO orders VALUES ('CUST#1', 'ORDER#1', '{"total": 10}'), ('CUST#2', 'ORDER#7', '{"total": 7}');
UPDATE orders SET item = '{"total": 11}' WHERE "PK" = 'CUST#1' AND "SK" = 'ORDER#1';
DELETE FROM orders WHERE "PK" = 'CUST#2';
COPY orders FROM stdin;
CUST#3	ORDER#9	{"total": 9}
\.
MERGE INTO orders o USING (VALUES ('CUST#3', 'ORDER#9', 90)) v(pk, sk, t)
  ON o."PK" = v.pk AND o."SK" = v.sk
  WHEN MATCHED THEN UPDATE SET item = jsonb_build_object('total', v.t);
SELECT * FROM brief('orders');

-- The item API: PutItem (new, replacing, unchanged), UpdateItem, DeleteItem;
-- a failed condition and a delete of a missing item write nothing.
TRUNCATE ddb_internal.stream_records;
SELECT ddb_put_item('orders', '{"PK": "CUST#4", "SK": "A", "n": 1}');
SELECT ddb_put_item('orders', '{"PK": "CUST#4", "SK": "A", "n": 2}');
SELECT ddb_put_item('orders', '{"PK": "CUST#4", "SK": "A", "n": 2}');   -- changes nothing: no record
SELECT ddb_update_item('orders', '{"PK": "CUST#4", "SK": "A"}', 'SET n = n + :one', vals => '{":one": 1}');
SELECT ddb_put_item('orders', '{"PK": "CUST#4", "SK": "A"}', 'n = :x', vals => '{":x": 0}');
SELECT ddb_delete_item('orders', '{"PK": "CUST#4", "SK": "A"}');
SELECT ddb_delete_item('orders', '{"PK": "CUST#4", "SK": "A"}');
SELECT * FROM brief('orders');

-- ddb_api's writes are the same code: PutItem, UpdateItem, DeleteItem.
TRUNCATE ddb_internal.stream_records;
SELECT ddb_api('PutItem', '{"TableName": "orders", "Item": {"PK": {"S": "CUST#5"}, "SK": {"S": "B"}, "tags": {"SS": ["x", "y"]}}}');
SELECT ddb_api('UpdateItem', '{"TableName": "orders", "Key": {"PK": {"S": "CUST#5"}, "SK": {"S": "B"}},
  "UpdateExpression": "ADD tags :t", "ExpressionAttributeValues": {":t": {"SS": ["z"]}}}');
SELECT ddb_api('DeleteItem', '{"TableName": "orders", "Key": {"PK": {"S": "CUST#5"}, "SK": {"S": "B"}}}');
SELECT * FROM brief('orders');

-- Transactions: a rolled-back change never appears, a rolled-back
-- subtransaction's neither; a transaction does not see its own records
-- before it commits (they are not committed yet).
TRUNCATE ddb_internal.stream_records;
BEGIN;
INSERT INTO orders VALUES ('CUST#6', 'X', '{}');
SELECT count(*) AS own_records_before_commit FROM ddb_stream_records('orders');
ROLLBACK;
BEGIN;
INSERT INTO orders VALUES ('CUST#6', 'Y', '{}');
SAVEPOINT s;
SELECT ddb_put_item('orders', '{"PK": "CUST#6", "SK": "Z"}');
ROLLBACK TO s;
COMMIT;
SELECT * FROM brief('orders');

-- The whole record, DynamoDB's shape.
SELECT jsonb_pretty(r) FROM recs('orders') r;

-- Each view type: what the records hold.
CREATE TABLE views_k (pk text, item jsonb) USING ddb;
CREATE TABLE views_n (pk text, item jsonb) USING ddb;
CREATE TABLE views_o (pk text, item jsonb) USING ddb;
SELECT ddb_update_stream('views_k', 'KEYS_ONLY') IS NOT NULL,
       ddb_update_stream('views_n', 'NEW_IMAGE') IS NOT NULL,
       ddb_update_stream('views_o', 'OLD_IMAGE') IS NOT NULL;
INSERT INTO views_k VALUES ('a', '{"v": 1}');
UPDATE views_k SET item = '{"v": 2}';
DELETE FROM views_k;
INSERT INTO views_n VALUES ('a', '{"v": 1}');
UPDATE views_n SET item = '{"v": 2}';
DELETE FROM views_n;
INSERT INTO views_o VALUES ('a', '{"v": 1}');
UPDATE views_o SET item = '{"v": 2}';
DELETE FROM views_o;
SELECT 'KEYS_ONLY' AS view, * FROM brief('views_k')
UNION ALL SELECT 'NEW_IMAGE', * FROM brief('views_n')
UNION ALL SELECT 'OLD_IMAGE', * FROM brief('views_o');
SELECT DISTINCT r->'dynamodb'->>'StreamViewType' AS view_type, r->'dynamodb'->>'SizeBytes' AS size
FROM ddb_stream_records('views_o') r ORDER BY 1, 2;

-- Order and resuming: sequence numbers increase; a reader that resumes
-- after the last number it got, in pages of 2, gets every record once.
TRUNCATE ddb_internal.stream_records;
INSERT INTO orders SELECT 'P#' || i, 'S', jsonb_build_object('i', i) FROM generate_series(1, 9) i;
SELECT bool_and(a < b) AS increasing
FROM (SELECT r->'dynamodb'->>'SequenceNumber' AS a,
             lead(r->'dynamodb'->>'SequenceNumber') OVER () AS b
      FROM ddb_stream_records('orders') r) x WHERE b IS NOT NULL;
DO $$
DECLARE
  after text := NULL;
  got text[] := '{}';
  page jsonb[];
BEGIN
  LOOP
    page := ARRAY(SELECT r FROM ddb_stream_records('orders', NULL, after, 2) r);
    EXIT WHEN cardinality(page) = 0;
    got := got || ARRAY(SELECT p->'dynamodb'->'Keys'->>'PK' FROM unnest(page) p);
    after := page[cardinality(page)]->'dynamodb'->>'SequenceNumber';
  END LOOP;
  RAISE NOTICE 'pages of 2: % records, % distinct, same as one read: %', cardinality(got),
    (SELECT count(DISTINCT g) FROM unnest(got) g),
    got = ARRAY(SELECT r->'dynamodb'->'Keys'->>'PK' FROM ddb_stream_records('orders') r);
END
$$;

-- Shards: records are spread over the stream's shards by partition-key
-- hash; each item's records stay in one shard; the shards' records
-- together are the merged read.
SELECT count(*) AS shards,
       sum(n) AS records
FROM (SELECT s->>'ShardId' AS id,
             (SELECT count(*) FROM ddb_stream_records('orders', s->>'ShardId')) AS n
      FROM jsonb_array_elements(ddb_api('DescribeStream',
             jsonb_build_object('StreamArn', ddb_describe_table('orders')->>'LatestStreamArn'))
             ->'StreamDescription'->'Shards') s) x;
SELECT count(*) FROM ddb_stream_records('orders');

-- Disabling keeps the stream readable; later writes are not recorded.
SELECT ddb_update_stream('orders', NULL) - 'LatestStreamArn' - 'LatestStreamLabel';
INSERT INTO orders VALUES ('CUST#7', 'X', '{}');
SELECT count(*) FROM ddb_stream_records('orders');
SELECT ddb_describe_table('orders') ? 'StreamSpecification' AS has_spec,
       ddb_describe_table('orders') ? 'LatestStreamArn' AS has_arn;
SELECT ddb_update_stream('orders', NULL);
-- enabling again makes a new stream, empty
SELECT ddb_update_stream('orders', 'NEW_IMAGE')->'StreamSpecification';
SELECT count(*) FROM ddb_stream_records('orders');
SELECT count(*) AS streams FROM ddb_internal.streams s WHERE s.relid = 'orders'::regclass;

-- DynamoDB Streams' operations through ddb_api (the endpoint's pytest,
-- test/endpoint/test_streams.py, reads a stream end to end with boto3).
INSERT INTO orders VALUES ('CUST#10', 'X', '{"n": 1}');
SELECT ddb_describe_table('orders')->>'LatestStreamArn' AS arn \gset
SELECT jsonb_array_length(ddb_api('ListStreams', '{"TableName": "orders"}')->'Streams') AS streams_of_orders;
SELECT d->'StreamStatus' AS status, d->'StreamViewType' AS view, d->'KeySchema' AS keys,
       jsonb_array_length(d->'Shards') AS shards, d->>'StreamArn' = :'arn' AS arn_ok
FROM (SELECT ddb_api('DescribeStream', jsonb_build_object('StreamArn', :'arn'))->'StreamDescription' d) x;
SELECT ddb_api('DescribeStream', jsonb_build_object('StreamArn', :'arn', 'Limit', 1))
       ->'StreamDescription' ? 'LastEvaluatedShardId' AS paged;
-- every shard from TRIM_HORIZON: the one record, typed
SELECT r->'eventName' AS event, r->'dynamodb'->'Keys' AS keys, r->'dynamodb'->'NewImage' AS new
FROM jsonb_array_elements(ddb_api('DescribeStream', jsonb_build_object('StreamArn', :'arn'))->'StreamDescription'->'Shards') s,
     LATERAL (SELECT ddb_api('GetShardIterator', jsonb_build_object('StreamArn', :'arn', 'ShardId', s->'ShardId',
                             'ShardIteratorType', 'TRIM_HORIZON'))->>'ShardIterator' AS it) i,
     LATERAL jsonb_array_elements(ddb_api('GetRecords', jsonb_build_object('ShardIterator', i.it))->'Records') r;
SELECT ddb_api('ListStreams', '{"Limit": 0}');
SELECT ddb_api('DescribeStream', '{}');
SELECT ddb_api('DescribeStream', '{"StreamArn": "arn:aws:dynamodb:us-east-1:000000000000:table/orders/stream/2000-01-01T00:00:00.000"}');
SELECT ddb_api('GetShardIterator', '{"ShardIteratorType": "OLDEST"}');
SELECT ddb_api('GetShardIterator', jsonb_build_object('StreamArn', :'arn', 'ShardId', 'shardId-x', 'ShardIteratorType', 'LATEST'));
SELECT ddb_api('GetRecords', '{"ShardIterator": "1:2:3"}');
SELECT ddb_api('GetRecords', '{}');

-- Errors: limits, sequence numbers, shards.
SELECT * FROM ddb_stream_records('orders', NULL, NULL, 0);
SELECT * FROM ddb_stream_records('orders', NULL, NULL, 1001);
SELECT * FROM ddb_stream_records('orders', NULL, 'x1');
SELECT * FROM ddb_stream_records('orders', 'shardId-nope');
SELECT * FROM ddb_stream_records('nosuchtable');

-- Privileges: only the owner changes a stream; reading needs SELECT.
CREATE ROLE streams_reader;
GRANT USAGE ON SCHEMA streams TO streams_reader;
SET ROLE streams_reader;
SELECT * FROM ddb_stream_records('orders');
SELECT ddb_update_stream('orders', NULL);
SELECT ddb_stream_sweep();
RESET ROLE;
-- the sweep may be granted (it runs as the catalogs' owner)
GRANT EXECUTE ON FUNCTION ddb_stream_sweep() TO streams_reader;
SET ROLE streams_reader;
SELECT ddb_stream_sweep() >= 0 AS swept;
RESET ROLE;
REVOKE EXECUTE ON FUNCTION ddb_stream_sweep() FROM streams_reader;
GRANT SELECT ON orders TO streams_reader;
SET ROLE streams_reader;
SELECT count(*) FROM ddb_stream_records('orders');
RESET ROLE;

-- Writing needs no privilege on the stream's catalogs: a writer with only
-- INSERT on the table records its changes.
GRANT INSERT ON orders TO streams_reader;
SET ROLE streams_reader;
INSERT INTO orders VALUES ('CUST#8', 'X', '{"by": "reader"}');
RESET ROLE;
SELECT * FROM brief('orders');

-- DROP TABLE disables the stream; its records stay until they expire,
-- readable by superusers through its ARN.
SELECT ddb_describe_table('views_k')->>'LatestStreamArn' AS views_k_arn \gset
DROP TABLE views_k;
SELECT view_type, relid IS NULL AS dropped, disabled IS NOT NULL AS disabled
FROM ddb_internal.streams WHERE table_name = 'views_k';
SELECT ddb_api('DescribeStream', jsonb_build_object('StreamArn', :'views_k_arn'))->'StreamDescription'->>'StreamStatus' AS status;
SET ROLE streams_reader;
SELECT ddb_api('DescribeStream', jsonb_build_object('StreamArn', :'views_k_arn'));
RESET ROLE;
-- ... and by the role that owned the table (DynamoDB keeps a deleted
-- table's stream readable, and listed, for 24 hours)
CREATE ROLE streams_owner;
GRANT USAGE ON SCHEMA streams TO streams_owner;
SELECT ddb_create_table('owned_s', 'id', 'S');
SELECT ddb_update_stream('owned_s', 'KEYS_ONLY') IS NOT NULL AS enabled;
-- (the owner when it is dropped: ownership given after enabling counts)
ALTER TABLE owned_s OWNER TO streams_owner;
SELECT ddb_describe_table('owned_s')->>'LatestStreamArn' AS owned_arn \gset
DROP TABLE owned_s;
SET ROLE streams_owner;
SELECT ddb_api('DescribeStream', jsonb_build_object('StreamArn', :'owned_arn'))->'StreamDescription'->>'StreamStatus' AS owner_reads;
SELECT count(*) AS owner_lists FROM jsonb_array_elements(ddb_api('ListStreams', '{}')->'Streams') s
WHERE s->>'StreamArn' = :'owned_arn';
SET ROLE streams_reader;
SELECT count(*) AS reader_lists FROM jsonb_array_elements(ddb_api('ListStreams', '{}')->'Streams') s
WHERE s->>'StreamArn' = :'owned_arn';
SELECT ddb_api('DescribeStream', jsonb_build_object('StreamArn', :'owned_arn'));
RESET ROLE;

-- Retention: the sweep removes records older than ddb.stream_retention
-- (and streams disabled for longer, once their records are gone); a read
-- from before the trimmed point is TrimmedDataAccessException.
SELECT r->'dynamodb'->>'SequenceNumber' AS first_seq FROM ddb_stream_records('orders') r LIMIT 1 \gset
SELECT pg_sleep(1.1);
SET ddb.stream_retention = 1;
SELECT ddb_stream_sweep() > 0 AS removed;
SELECT count(*) FROM ddb_stream_records('orders');
SELECT * FROM ddb_stream_records('orders', NULL, '1');
SELECT count(*) AS views_k_stream_left FROM ddb_internal.streams WHERE table_name = 'views_k';
RESET ddb.stream_retention;
-- new records after the trimmed point are read as usual
INSERT INTO orders VALUES ('CUST#9', 'X', '{}');
SELECT * FROM brief('orders');

-- TTL deletions are the service's: REMOVE records with DynamoDB's
-- userIdentity; a user's DeleteItem has none
SELECT ddb_create_table('sessions', 'id', 'S');
SELECT ddb_update_stream('sessions', 'OLD_IMAGE') -> 'StreamSpecification' AS spec;
SELECT ddb_update_time_to_live('sessions', 'expires', true);
SELECT ddb_put_item('sessions', jsonb_build_object('id', 'old', 'expires', extract(epoch FROM now())::bigint - 60));
SELECT ddb_put_item('sessions', jsonb_build_object('id', 'gone', 'expires', extract(epoch FROM now())::bigint + 3600));
SELECT ddb_put_item('sessions', jsonb_build_object('id', 'live', 'expires', extract(epoch FROM now())::bigint + 3600));
SELECT ddb_delete_item('sessions', '{"id": "gone"}');
SELECT ddb_ttl_sweep('sessions') AS swept;
SELECT r->>'eventName' AS event, r->'dynamodb'->'Keys'->>'id' AS id, r->'userIdentity' AS user_identity
FROM ddb_stream_records('sessions') r WHERE r->>'eventName' = 'REMOVE';
-- batches and transactions write records like single writes; a canceled
-- transaction writes none
SELECT ddb_batch_write_item('{"sessions": [{"PutRequest": {"Item": {"id": "b1"}}},
                                           {"DeleteRequest": {"Key": {"id": "live"}}}]}');
SELECT ddb_transact_write_items('[{"Put": {"TableName": "sessions", "Item": {"id": "t1"}}},
  {"Update": {"TableName": "sessions", "Key": {"id": "b1"}, "UpdateExpression": "SET n = :one",
              "ExpressionAttributeValues": {":one": 1}}}]');
CREATE FUNCTION sqlstate_of(q text) RETURNS text LANGUAGE plpgsql AS $f$
BEGIN EXECUTE q; RETURN '00000'; EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE; END $f$;
SELECT sqlstate_of($$SELECT ddb_transact_write_items('[{"Put": {"TableName": "sessions", "Item": {"id": "t2"}}},
  {"ConditionCheck": {"TableName": "sessions", "Key": {"id": "t1"}, "ConditionExpression": "attribute_not_exists(id)"}}]')$$);
SELECT r->>'eventName' AS event, r->'dynamodb'->'Keys'->>'id' AS id
FROM ddb_stream_records('sessions') r WHERE r->'dynamodb'->'Keys'->>'id' IN ('b1', 'live', 't1', 't2')
ORDER BY r->'dynamodb'->>'SequenceNumber';

-- Trimming is judged per shard: sequence numbers are shared by the shards,
-- so a reader that read its shard to the end keeps a position below the
-- numbers the sweep deletes from other shards, and misses nothing.  Here
-- one item's records (shard A) expire while another item's shard (B) was
-- read to its end, at a number below A's.
SELECT ddb_create_table('trims', 'id', 'S');
SELECT ddb_update_stream('trims', 'KEYS_ONLY') IS NOT NULL AS enabled;
SELECT ddb_describe_table('trims')->>'LatestStreamArn' AS tarn \gset
-- two keys whose records go to different shards: B's, then A's
CREATE FUNCTION shard_of(id text) RETURNS int LANGUAGE sql AS $$
  SELECT r.shard FROM ddb_internal.stream_records r JOIN ddb_internal.streams s USING (stream_id)
  WHERE s.relid = 'trims'::regclass AND r.keys->>'id' = id ORDER BY r.seq DESC LIMIT 1
$$;
SELECT ddb_put_item('trims', '{"id": "b"}') IS NULL AS put_b;
DO $$
BEGIN
  FOR i IN 1..200 LOOP
    PERFORM ddb_put_item('trims', jsonb_build_object('id', 'a' || i));
    EXIT WHEN shard_of('a' || i) <> shard_of('b');
  END LOOP;
END $$;
SELECT r.keys->>'id' AS key_a, r.shard AS shard_a_no, shard_of('b') AS shard_b_no
FROM ddb_internal.stream_records r JOIN ddb_internal.streams s USING (stream_id)
WHERE s.relid = 'trims'::regclass AND r.shard <> shard_of('b') \gset
SELECT ddb_put_item('trims', jsonb_build_object('id', :'key_a', 'n', 2)) IS NULL AS put_a2;
SELECT d->'Shards'->(:shard_b_no)->>'ShardId' AS shard_b, d->'Shards'->(:shard_a_no)->>'ShardId' AS shard_a
FROM (SELECT ddb_api('DescribeStream', jsonb_build_object('StreamArn', :'tarn'))->'StreamDescription' d) x \gset
-- B read to its end: its position is below A's two records
SELECT ddb_api('GetShardIterator', jsonb_build_object('StreamArn', :'tarn', 'ShardId', :'shard_b',
  'ShardIteratorType', 'TRIM_HORIZON'))->>'ShardIterator' AS it_b \gset
SELECT ddb_api('GetRecords', jsonb_build_object('ShardIterator', :'it_b')) AS got_b \gset
SELECT (:'got_b')::jsonb->'Records'->-1->'dynamodb'->>'SequenceNumber' AS b_seq \gset
-- A's records expire (made old here rather than waited for)
UPDATE ddb_internal.stream_records SET created = created - interval '1 hour'
WHERE stream_id = (SELECT stream_id FROM ddb_internal.streams WHERE relid = 'trims'::regclass)
  AND shard = :shard_a_no;
SET ddb.stream_retention = 600;
SELECT ddb_stream_sweep() AS removed;
RESET ddb.stream_retention;
SELECT trimmed > (:'b_seq')::bigint AS trimmed_past_b FROM ddb_internal.streams WHERE relid = 'trims'::regclass;
-- B's reader goes on (it failed with TrimmedDataAccessException before)
SELECT jsonb_array_length(ddb_api('GetRecords', jsonb_build_object('ShardIterator',
  (:'got_b')::jsonb->>'NextShardIterator'))->'Records') AS b_records_after;
SELECT ddb_api('GetShardIterator', jsonb_build_object('StreamArn', :'tarn', 'ShardId', :'shard_b',
  'ShardIteratorType', 'AFTER_SEQUENCE_NUMBER', 'SequenceNumber', :'b_seq')) ? 'ShardIterator' AS b_resumes;
-- a position in A before its deleted records is trimmed; TRIM_HORIZON of A is after them
SELECT ddb_api('GetShardIterator', jsonb_build_object('StreamArn', :'tarn', 'ShardId', :'shard_a',
  'ShardIteratorType', 'AFTER_SEQUENCE_NUMBER', 'SequenceNumber', :'b_seq'));
SELECT jsonb_array_length(ddb_api('GetRecords', jsonb_build_object('ShardIterator',
  ddb_api('GetShardIterator', jsonb_build_object('StreamArn', :'tarn', 'ShardId', :'shard_a',
    'ShardIteratorType', 'TRIM_HORIZON'))->>'ShardIterator'))->'Records') AS a_records_left;
-- the merged reader (all shards) from before A's records is trimmed
SELECT count(*) FROM ddb_stream_records('trims', NULL, '1');

-- A set written in another order is the same item: no record.
SELECT trimmed AS trim_s FROM ddb_internal.streams WHERE relid = 'trims'::regclass \gset
SELECT ddb_put_item('trims', jsonb_build_object('id', 's', 'ss', '{"$SS": ["x", "y"]}'::jsonb,
  'ns', jsonb_build_object('$NS', (SELECT jsonb_agg(i) FROM generate_series(1, 40) i)))) IS NULL AS put;
SELECT ddb_put_item('trims', jsonb_build_object('id', 's', 'ss', '{"$SS": ["y", "x"]}'::jsonb,
  'ns', jsonb_build_object('$NS', (SELECT jsonb_agg(i ORDER BY -i) FROM generate_series(1, 40) i)))) IS NULL AS reordered;
SELECT ddb_put_item('trims', jsonb_build_object('id', 's', 'ss', '{"$SS": ["y", "z"]}'::jsonb,
  'ns', jsonb_build_object('$NS', (SELECT jsonb_agg(i) FROM generate_series(1, 40) i)))) IS NULL AS changed;
SELECT r->>'eventName' AS event FROM ddb_stream_records('trims', NULL, :'trim_s') r
WHERE r->'dynamodb'->'Keys'->>'id' = 's';

-- Requests DynamoDB Streams refuses: a position with TRIM_HORIZON or
-- LATEST, a malformed ExclusiveStartStreamArn, a ShardFilter of another
-- type; child shards of a shard (ddb's never split) are none.
SELECT ddb_api('GetShardIterator', jsonb_build_object('StreamArn', :'tarn', 'ShardId', :'shard_b',
  'ShardIteratorType', 'TRIM_HORIZON', 'SequenceNumber', :'b_seq'));
SELECT ddb_api('GetShardIterator', jsonb_build_object('StreamArn', :'tarn', 'ShardId', :'shard_b',
  'ShardIteratorType', 'LATEST', 'SequenceNumber', 'sdfsafglldfngjdafnasdflgnaldklk'));
SELECT ddb_api('ListStreams', '{"ExclusiveStartStreamArn": "kossaapaaasdafsdaasdasdasdasasdasfadfadf"}');
-- (a Limit beyond a Java int is no Integer: SerializationException)
SELECT ddb_api('ListStreams', '{"Limit": 1e300}');
-- members' length and pattern constraints, in DynamoDB's validation words
SELECT ddb_api('ListStreams', '{"TableName": "ab"}');
SELECT ddb_api('GetShardIterator', jsonb_build_object('StreamArn', :'tarn', 'ShardId', 'x',
  'ShardIteratorType', 'AT_SEQUENCE_NUMBER', 'SequenceNumber', '1'));
DO $$ BEGIN PERFORM ddb_api('GetRecords', jsonb_build_object('ShardIterator', repeat('1', 2049)));
EXCEPTION WHEN OTHERS THEN RAISE NOTICE '% ... %', left(SQLERRM, 60), right(SQLERRM, 80); END $$;
-- an iterator is signed (HMAC under the database's key): one edited to be
-- issued in the future (never to expire), naming no stream, or with its
-- tag changed or cut off is an invalid iterator; the key is no reader's
SELECT ddb_api('GetShardIterator', jsonb_build_object('StreamArn', :'tarn', 'ShardId', :'shard_b',
  'ShardIteratorType', 'LATEST'))->>'ShardIterator' AS it_l \gset
SELECT ddb_api('GetRecords', jsonb_build_object('ShardIterator',
  regexp_replace(:'it_l', '^(\d+:\d+:\d+:)\d+', '\1' || ((extract(epoch FROM now()) * 1000)::bigint + 3600000))));
SELECT ddb_api('GetRecords', jsonb_build_object('ShardIterator', regexp_replace(:'it_l', '/stream/.*$', 'x')));
SELECT ddb_api('GetRecords', jsonb_build_object('ShardIterator',
  regexp_replace(:'it_l', '.$', CASE WHEN right(:'it_l', 1) = '0' THEN '1' ELSE '0' END)));
SELECT ddb_api('GetRecords', jsonb_build_object('ShardIterator', regexp_replace(:'it_l', '\|[0-9a-f]*$', '')));
SELECT :'it_l' ~ '^\d+:\d+:\d+:\d+:arn:aws:dynamodb:.*/stream/[^|]*\|[0-9a-f]{32}$' AS iterator_form;
SELECT has_table_privilege('public', 'ddb_internal.stream_iterator_key', 'SELECT') AS key_readable;
SELECT ddb_api('GetRecords', jsonb_build_object('ShardIterator', :'it_l')) ? 'Records' AS unedited_works;
SELECT ddb_api('DescribeStream', jsonb_build_object('StreamArn', :'tarn',
  'ShardFilter', jsonb_build_object('Type', 'CHILD_SHARDS', 'ShardId', :'shard_b')))->'StreamDescription'->'Shards' AS children;
SELECT ddb_api('DescribeStream', jsonb_build_object('StreamArn', :'tarn', 'ShardFilter', '{"Type": "BOGUS"}'::jsonb));
-- a closed shard without records ends where it starts
SELECT ddb_update_stream('trims', NULL) IS NOT NULL AS disabled;
SELECT count(*) FILTER (WHERE (r->>'StartingSequenceNumber')::numeric > (r->>'EndingSequenceNumber')::numeric) AS inverted,
       count(*) AS shards
FROM jsonb_array_elements(ddb_api('DescribeStream', jsonb_build_object('StreamArn', :'tarn'))
                          ->'StreamDescription'->'Shards') s, LATERAL (SELECT s->'SequenceNumberRange' AS r) x;

-- StreamSpecification's errors, in DynamoDB's words (which name the member
-- UpdateViewType), and the changes UpdateTable does not combine with a
-- stream's: a new or dropped index, the table's throughput.
SELECT ddb_api('CreateTable', '{"TableName": "trims2", "BillingMode": "PAY_PER_REQUEST",
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}], "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
  "StreamSpecification": {"StreamEnabled": true}}');
SELECT ddb_api('CreateTable', '{"TableName": "trims2", "BillingMode": "PAY_PER_REQUEST",
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}], "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
  "StreamSpecification": {"StreamEnabled": false, "StreamViewType": "KEYS_ONLY"}}');
SELECT ddb_api('UpdateTable', '{"TableName": "trims", "StreamSpecification": {"StreamEnabled": true}}');
SELECT ddb_api('UpdateTable', '{"TableName": "trims", "StreamSpecification": {"StreamEnabled": false, "StreamViewType": "KEYS_ONLY"}}');
SELECT ddb_api('UpdateTable', '{"TableName": "trims", "StreamSpecification": {"StreamEnabled": false}}');
SELECT ddb_api('UpdateTable', '{"TableName": "trims", "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "KEYS_ONLY"},
  "AttributeDefinitions": [{"AttributeName": "g", "AttributeType": "S"}],
  "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "ByG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                              "Projection": {"ProjectionType": "ALL"}}}]}');
SELECT ddb_api('UpdateTable', '{"TableName": "trims", "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "KEYS_ONLY"},
  "BillingMode": "PROVISIONED", "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}');
SELECT ddb_api('UpdateTable', '{"TableName": "trims", "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
  "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "ByG"}}]}');
SELECT ddb_describe_table('trims') ? 'StreamSpecification' AS stream_on, ddb_describe_table('trims') ? 'GlobalSecondaryIndexes' AS indexed;

SET client_min_messages = warning;
DROP SCHEMA streams CASCADE;
DROP ROLE streams_reader, streams_owner;
