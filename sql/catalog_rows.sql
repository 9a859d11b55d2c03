-- ddb's catalog rows (ddb_internal.tables, .gsi, .streams) and who may see
-- them: temporary tables get none (PostgreSQL drops them at the session's
-- end without the event triggers that would delete their rows), a row left
-- behind by a table dropped without those triggers breaks no one's
-- ListStreams or TTL sweep, a stream's owner follows REASSIGN OWNED, tags
-- are shown only to roles that may SELECT from the table, ddb_verify
-- needs the privileges its lock and its counts stand for, and looking up
-- a missing table caches nothing.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
CREATE SCHEMA cat;
SET ddb.schema = cat;
SET search_path = cat, public;
\set VERBOSITY terse
CREATE ROLE cat_owner;
CREATE ROLE cat_heir;
CREATE ROLE cat_reader;
CREATE ROLE cat_writer;
CREATE ROLE cat_nobody;
GRANT USAGE, CREATE ON SCHEMA cat TO cat_owner, cat_heir, cat_reader, cat_writer, cat_nobody;

-- A temporary ddb table: registered nowhere, and every feature that would
-- give it a catalog row is refused, changing nothing.
CREATE TEMP TABLE tmp_items ("PK" text, item jsonb) USING ddb;
SELECT count(*) AS registered FROM ddb_internal.tables WHERE relid = 'tmp_items'::regclass;
SELECT pg_my_temp_schema()::regnamespace AS tmp_schema \gset
SET ddb.schema = :'tmp_schema';
SELECT ddb_put_item('tmp_items', '{"PK": "a", "x": "1"}');
SELECT ddb_update_stream('tmp_items', 'NEW_IMAGE');
SELECT ddb_update_time_to_live('tmp_items', 'expires', true);
SELECT ddb_create_gsi('tmp_items', 'byx', 'x');
SELECT ddb_api('CreateTable', '{"TableName": "tmp_made", "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}], "BillingMode": "PAY_PER_REQUEST"}');
SET ddb.schema = cat;
SELECT count(*) AS rows_of_temporary_tables
FROM (SELECT relid::oid AS rel FROM ddb_internal.tables
      UNION ALL SELECT base::oid FROM ddb_internal.gsi
      UNION ALL SELECT relid::oid FROM ddb_internal.streams) r
JOIN pg_class c ON c.oid = r.rel WHERE c.relpersistence = 't';
SELECT count(*) AS tmp_made FROM pg_class WHERE relname = 'tmp_made';
SELECT count(*) AS tmp_items FROM tmp_items;
DROP TABLE tmp_items;

-- Rows left behind by tables dropped while the drop's event triggers were
-- off (single-user mode, or disabled): ListStreams and the TTL sweep go on
-- for everyone; the stream reads as a dropped table's, by superusers.
SELECT ddb_create_table('left_behind', 'id');
SELECT ddb_update_stream('left_behind', 'KEYS_ONLY') IS NOT NULL AS stream;
SELECT ddb_update_time_to_live('left_behind', 'expires', true) IS NOT NULL AS ttl;
SELECT ddb_describe_table('left_behind')->>'LatestStreamArn' AS left_arn \gset
SELECT 'left_behind'::regclass::oid AS left_oid \gset
ALTER EVENT TRIGGER ddb_gsi_drop DISABLE;
ALTER EVENT TRIGGER ddb_stream_on_drop DISABLE;
DROP TABLE left_behind;
ALTER EVENT TRIGGER ddb_gsi_drop ENABLE;
ALTER EVENT TRIGGER ddb_stream_on_drop ENABLE;
SELECT (SELECT count(*) FROM ddb_internal.streams WHERE relid::oid = :left_oid) AS stream_rows,
       (SELECT count(*) FROM ddb_internal.gsi WHERE base::oid = :left_oid) AS gsi_rows;
SELECT ddb_create_table('kept', 'id');
SELECT ddb_update_stream('kept', 'KEYS_ONLY') IS NOT NULL AS stream;
GRANT SELECT ON kept TO cat_reader;
SET ROLE cat_reader;
SELECT array_agg(s->>'TableName' ORDER BY s->>'TableName') AS reader_lists
FROM jsonb_array_elements(ddb_api('ListStreams', '{}')->'Streams') s;
SELECT ddb_api('DescribeStream', jsonb_build_object('StreamArn', :'left_arn'));
SELECT ddb_ttl_sweep() AS reader_swept;
RESET ROLE;
SELECT ddb_api('DescribeStream', jsonb_build_object('StreamArn', :'left_arn'))->'StreamDescription'->>'StreamStatus' AS superuser_reads;
SELECT ddb_ttl_sweep() AS swept;
DELETE FROM ddb_internal.streams WHERE relid::oid = :left_oid;
DELETE FROM ddb_internal.gsi WHERE base::oid = :left_oid;
DROP TABLE ddb_internal."left_behind__$ttl";
DELETE FROM ddb_internal.tables WHERE relid::oid = :left_oid;

-- A stream's owner follows the table's through REASSIGN OWNED, which fires
-- no event trigger: the owner at the drop reads the dropped table's
-- stream, the former owner does not.
SET ROLE cat_owner;
SELECT ddb_create_table('handed_on', 'id');
SELECT ddb_update_stream('handed_on', 'NEW_IMAGE') IS NOT NULL AS stream;
SELECT ddb_describe_table('handed_on')->>'LatestStreamArn' AS handed_arn \gset
RESET ROLE;
REASSIGN OWNED BY cat_owner TO cat_heir;
-- (not yet the heir: the next command that could drop the table syncs it)
SELECT owner FROM ddb_internal.streams WHERE relid = 'cat.handed_on'::regclass;
SET ROLE cat_heir;
SELECT ddb_put_item('handed_on', '{"id": "k1", "secret": "the heir''s"}');
DROP TABLE handed_on;
SELECT ddb_api('DescribeStream', jsonb_build_object('StreamArn', :'handed_arn'))->'StreamDescription'->>'StreamStatus' AS heir_reads;
SET ROLE cat_owner;
SELECT ddb_api('DescribeStream', jsonb_build_object('StreamArn', :'handed_arn'));
RESET ROLE;

-- Tags: their owner sets and lists them (as the catalog's owner, since
-- the column is not PUBLIC's); a role without SELECT on the table reads
-- them neither through ListTagsOfResource nor from the catalog.
SET ROLE cat_owner;
SELECT ddb_create_table('tagged', 'id');
SELECT ddb_describe_table('tagged')->>'TableArn' AS tagged_arn \gset
SELECT ddb_api('TagResource', jsonb_build_object('ResourceArn', :'tagged_arn',
  'Tags', '[{"Key": "cost-center", "Value": "secret-project"}]'::jsonb));
SELECT ddb_api('ListTagsOfResource', jsonb_build_object('ResourceArn', :'tagged_arn'));
SET ROLE cat_nobody;
SELECT ddb_api('ListTagsOfResource', jsonb_build_object('ResourceArn', :'tagged_arn'));
SELECT tags FROM ddb_internal.tables WHERE relid = 'cat.tagged'::regclass;
SELECT billing_mode FROM ddb_internal.tables WHERE relid = 'cat.tagged'::regclass;
RESET ROLE;

-- ddb_verify: SELECT (it counts the items) and a privilege that LOCK TABLE
-- ... IN SHARE MODE asks (UPDATE, DELETE or TRUNCATE), checked before the
-- lock is taken; index tables are the catalog owner's.
SELECT ddb_create_table('checked', 'id');
SELECT ddb_put_item('checked', '{"id": "a", "x": "1"}');
SELECT ddb_create_gsi('checked', 'byx', 'x');
GRANT SELECT ON checked TO cat_reader;
GRANT SELECT, UPDATE ON checked TO cat_writer;
SET ROLE cat_nobody;
SELECT ddb_verify('checked');
SET ROLE cat_reader;
SELECT ddb_verify('checked');
SELECT ddb_verify('ddb_internal.checked__byx');
SET ROLE cat_writer;
SELECT ddb_verify('checked')->>'live' AS writer_verifies;
RESET ROLE;
SELECT ddb_verify('ddb_internal.checked__byx')->>'live' AS superuser_verifies_the_index;

-- A table name that does not exist leaves nothing in the backend's caches:
-- looked up through the syscache, each distinct missing name left a
-- negative entry PostgreSQL 15 never evicts, about 240 bytes a name, which
-- any key holder could pile up in an endpoint worker (which lives as long
-- as the server) by asking for tables that are not there.
CREATE FUNCTION missing_lookups(n int, tag text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..n LOOP
    BEGIN
      PERFORM ddb_api('GetItem', jsonb_build_object('TableName', 'missing_' || tag || i,
                                                    'Key', '{"id": {"S": "a"}}'::jsonb));
    EXCEPTION WHEN OTHERS THEN NULL;
    END;
  END LOOP;
END $$;
SELECT missing_lookups(200, 'warm');
SELECT sum(used_bytes) AS cache_before FROM pg_backend_memory_contexts WHERE name = 'CacheMemoryContext' \gset
SELECT missing_lookups(4000, 'x');
SELECT sum(used_bytes) - :cache_before < 100000 AS cache_kept_small
FROM pg_backend_memory_contexts WHERE name = 'CacheMemoryContext';

RESET ROLE;
DROP SCHEMA cat CASCADE;
DROP OWNED BY cat_owner, cat_heir, cat_reader, cat_writer, cat_nobody;
DROP ROLE cat_owner, cat_heir, cat_reader, cat_writer, cat_nobody;
