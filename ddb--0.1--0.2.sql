/* ddb--0.1--0.2.sql: upgrade ddb 0.1 to 0.2 */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION ddb UPDATE TO '0.2'" to load this file. \quit

-- ddb 0.1's install script is frozen.  CREATE EXTENSION ddb installs 0.2 by
-- running it and then this script, so everything new or changed since 0.1
-- is here, and a fresh install and an upgraded one are the same.
-- Since 0.1 the sources live in layer folders: src/engine, src/model,
-- src/api, src/planner (the 0.1 script's comments name the old paths).

-- DynamoDB's strings are Unicode, sent as UTF-8 and ordered and sized by
-- their UTF-8 bytes (the tree compares key bytes, the size limits count
-- them): a database of another encoding could not store most of them, and
-- would order and compare them by its own bytes.  SQL_ASCII stores the
-- bytes it is given, which ddb takes as UTF-8 (the endpoint checks that
-- they are).
DO $$
BEGIN
  IF pg_catalog.getdatabaseencoding() NOT IN ('UTF8', 'SQL_ASCII') THEN
    RAISE EXCEPTION 'ddb requires a UTF8 database, and database "%" is %',
      pg_catalog.current_database(), pg_catalog.getdatabaseencoding()
      USING ERRCODE = 'feature_not_supported',
            DETAIL = 'DynamoDB orders and sizes strings by their UTF-8 bytes.',
            HINT = 'Create the database with ENCODING ''UTF8''.';
  END IF;
END $$;

-- ===========================================================================
-- DynamoDB names, the table catalog, and the protocol (src/api/ddb_table.c,
-- ddb_api.c, ddb_protocol.c)
-- ===========================================================================

-- One row per ddb table: its DynamoDB names when they do not fit a
-- PostgreSQL identifier (the relation and columns then have hash-suffixed
-- names), TableId, CreationDateTime, billing settings and tags.  Tables
-- created by hand get their row from the event trigger below.
CREATE TABLE ddb_internal.tables (
    relid regclass PRIMARY KEY,
    table_name text,              -- DynamoDB's name when it is not the relation's
    key_names text[],             -- DynamoDB's key names when they are not the columns'
    table_id uuid NOT NULL DEFAULT pg_catalog.gen_random_uuid(),
    created timestamptz NOT NULL DEFAULT pg_catalog.now(),
    billing_mode text NOT NULL DEFAULT 'PAY_PER_REQUEST'
        CHECK (billing_mode IN ('PAY_PER_REQUEST', 'PROVISIONED')),
    read_capacity bigint NOT NULL DEFAULT 0,
    write_capacity bigint NOT NULL DEFAULT 0,
    billing_changed timestamptz,
    tags jsonb NOT NULL DEFAULT '{}',
    auto boolean NOT NULL DEFAULT false  -- made by the event trigger, unchanged since
);
-- Readable by all but the tags, which are shown to roles that may SELECT
-- from the table (ListTagsOfResource reads them as the catalog's owner).
GRANT SELECT (relid, table_name, key_names, table_id, created, billing_mode, read_capacity,
              write_capacity, billing_changed, auto) ON ddb_internal.tables TO PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('ddb_internal.tables', '');

-- ddb tables that exist already (an upgrade from 0.1)
INSERT INTO ddb_internal.tables (relid, auto)
SELECT c.oid, true
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_am a ON a.oid = c.relam
     JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE a.amname = 'ddb' AND c.relkind = 'r' AND n.nspname <> 'ddb_internal';

CREATE FUNCTION ddb_register_tables()
RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  INSERT INTO ddb_internal.tables (relid, auto)
  SELECT c.oid, true
  FROM pg_catalog.pg_event_trigger_ddl_commands() d
       JOIN pg_catalog.pg_class c ON c.oid = d.objid
       JOIN pg_catalog.pg_am a ON a.oid = c.relam
  WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.objsubid = 0
    AND a.amname = 'ddb' AND c.relkind = 'r' AND c.relpersistence <> 't'
    AND c.relnamespace <> 'ddb_internal'::regnamespace
  ON CONFLICT (relid) DO NOTHING;
END
$$;

-- A restore creates each table (the event trigger registers it afresh)
-- before it loads the dumped catalog rows: a dumped row replaces the fresh
-- one.  ddb itself changes rows by UPDATE and inserts only missing ones.
CREATE FUNCTION ddb_tables_replace_auto()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  DELETE FROM ddb_internal.tables WHERE relid = NEW.relid AND auto;
  RETURN NEW;
END
$$;

CREATE TRIGGER replace_auto BEFORE INSERT ON ddb_internal.tables
  FOR EACH ROW EXECUTE FUNCTION ddb_tables_replace_auto();

CREATE EVENT TRIGGER ddb_register_tables
  ON ddl_command_end
  WHEN TAG IN ('CREATE TABLE', 'CREATE TABLE AS', 'SELECT INTO')
  EXECUTE FUNCTION ddb_register_tables();

-- DROP TABLE also forgets the table's catalog row.
CREATE OR REPLACE FUNCTION ddb_gsi_on_drop()
RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  r record;
  g record;
BEGIN
  FOR r IN SELECT objid FROM pg_catalog.pg_event_trigger_dropped_objects()
           WHERE classid = 'pg_catalog.pg_class'::regclass AND objsubid = 0
             AND object_type = 'table'
  LOOP
    DELETE FROM ddb_internal.tables WHERE relid = r.objid;
    FOR g IN DELETE FROM ddb_internal.gsi
             WHERE base = r.objid OR index_table = r.objid
             RETURNING base, index_table
    LOOP
      IF g.base::oid = r.objid THEN
        IF EXISTS (SELECT FROM pg_catalog.pg_class WHERE oid = g.index_table) THEN
          EXECUTE pg_catalog.format('DROP TABLE %s', g.index_table);
        END IF;
      END IF;
    END LOOP;
  END LOOP;
END
$$;

-- The item functions take the table as a DynamoDB name (text, looked up in
-- ddb.schema; a missing table is ResourceNotFoundException) or, as in 0.1,
-- as a regclass.  A quoted literal resolves to the text form.
CREATE FUNCTION ddb_describe_table(tbl text)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_describe_table'
LANGUAGE C STABLE;

CREATE FUNCTION ddb_put_item(tbl text, item jsonb, condition text DEFAULT NULL,
                             names jsonb DEFAULT NULL, vals jsonb DEFAULT NULL,
                             return_values text DEFAULT 'NONE')
RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_put_item'
LANGUAGE C;

CREATE FUNCTION ddb_get_item(tbl text, key jsonb, projection text DEFAULT NULL,
                             names jsonb DEFAULT NULL)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_get_item'
LANGUAGE C STABLE;

CREATE FUNCTION ddb_update_item(tbl text, key jsonb, update_expression text DEFAULT NULL,
                                condition text DEFAULT NULL, names jsonb DEFAULT NULL,
                                vals jsonb DEFAULT NULL, return_values text DEFAULT 'NONE')
RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_update_item'
LANGUAGE C;

CREATE FUNCTION ddb_delete_item(tbl text, key jsonb, condition text DEFAULT NULL,
                                names jsonb DEFAULT NULL, vals jsonb DEFAULT NULL,
                                return_values text DEFAULT 'NONE')
RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_delete_item'
LANGUAGE C;

-- ListTables: the DynamoDB names of the ddb tables in ddb.schema you may read.
DROP FUNCTION ddb_list_tables();
CREATE FUNCTION ddb_list_tables()
RETURNS SETOF text
AS 'MODULE_PATHNAME', 'ddb_list_tables'
LANGUAGE C STABLE;

-- The DynamoDB protocol: ddb_api('PutItem', '{"TableName": ..., "Item": {...}}')
-- takes and returns DynamoDB's JSON 1.0 bodies.  jsonb cannot hold U+0000
-- in strings; ddb_api_text takes and returns the JSON as text and can.
CREATE FUNCTION ddb_api(operation text, request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_api'
LANGUAGE C;
COMMENT ON FUNCTION ddb_api(text, jsonb) IS
  'run one DynamoDB operation: DynamoDB''s JSON request in, its JSON response out';

CREATE FUNCTION ddb_api_text(operation text, request text)
RETURNS text
AS 'MODULE_PATHNAME', 'ddb_api_text'
LANGUAGE C;
COMMENT ON FUNCTION ddb_api_text(text, text) IS
  'ddb_api on JSON text, for strings that hold U+0000';

-- Query and Scan by DynamoDB name too.
CREATE FUNCTION ddb_query(tbl text, key_condition text, vals jsonb DEFAULT NULL,
                          names jsonb DEFAULT NULL, filter text DEFAULT NULL,
                          projection text DEFAULT NULL, index_name text DEFAULT NULL,
                          forward boolean DEFAULT true, "limit" integer DEFAULT NULL,
                          start_key jsonb DEFAULT NULL)
RETURNS SETOF jsonb
AS 'MODULE_PATHNAME', 'ddb_query'
LANGUAGE C CALLED ON NULL INPUT STABLE;

CREATE FUNCTION ddb_query_page(tbl text, key_condition text, vals jsonb DEFAULT NULL,
                               names jsonb DEFAULT NULL, filter text DEFAULT NULL,
                               projection text DEFAULT NULL, index_name text DEFAULT NULL,
                               forward boolean DEFAULT true, "limit" integer DEFAULT NULL,
                               start_key jsonb DEFAULT NULL)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_query_page'
LANGUAGE C CALLED ON NULL INPUT STABLE;

CREATE FUNCTION ddb_scan(tbl text, filter text DEFAULT NULL, vals jsonb DEFAULT NULL,
                         names jsonb DEFAULT NULL, projection text DEFAULT NULL,
                         index_name text DEFAULT NULL, segment integer DEFAULT NULL,
                         total_segments integer DEFAULT NULL, "limit" integer DEFAULT NULL,
                         start_key jsonb DEFAULT NULL)
RETURNS SETOF jsonb
AS 'MODULE_PATHNAME', 'ddb_scan'
LANGUAGE C CALLED ON NULL INPUT STABLE;

CREATE FUNCTION ddb_scan_page(tbl text, filter text DEFAULT NULL, vals jsonb DEFAULT NULL,
                              names jsonb DEFAULT NULL, projection text DEFAULT NULL,
                              index_name text DEFAULT NULL, segment integer DEFAULT NULL,
                              total_segments integer DEFAULT NULL, "limit" integer DEFAULT NULL,
                              start_key jsonb DEFAULT NULL)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_scan_page'
LANGUAGE C CALLED ON NULL INPUT STABLE;

-- Global secondary indexes by DynamoDB table name too.
CREATE FUNCTION ddb_create_gsi(tbl text, index_name text, partition_key text,
                               partition_key_type text DEFAULT 'S',
                               sort_key text DEFAULT NULL, sort_key_type text DEFAULT 'S',
                               projection text DEFAULT 'ALL',
                               non_key_attributes text[] DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'ddb_create_gsi'
LANGUAGE C;

CREATE FUNCTION ddb_drop_gsi(tbl text, index_name text)
RETURNS void
AS 'MODULE_PATHNAME', 'ddb_drop_gsi'
LANGUAGE C;

CREATE FUNCTION ddb_verify_gsi(tbl text, index_name text DEFAULT NULL)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_verify_gsi'
LANGUAGE C;

-- Items an index's backfill left out because their index key had the wrong
-- type or was empty (DynamoDB's indexing violations), reported by
-- DescribeTable.
ALTER TABLE ddb_internal.gsi ADD COLUMN indexing_violations bigint NOT NULL DEFAULT 0;

-- ---------------------------------------------------------------------------
-- HTTP endpoint: access keys (issue 14; src/http/ddb_http_keys.c)
-- ---------------------------------------------------------------------------
-- An access key maps an AWS-style key pair to a role: a request to the
-- HTTP endpoint signed with the key (SigV4) runs as that role.  Secrets are
-- stored as given (SigV4 needs them to recompute signatures) and are
-- readable only by superusers: the table grants nothing to PUBLIC, and
-- row-level security with no policy hides its rows from roles that read
-- every table without grants (pg_read_all_data does not bypass it; the
-- workers read the table directly, below the rewriter).
--
-- A key names its role by OID and by the name the role had when the key
-- was made, and works only while that OID still has that name.  The OID
-- alone is not enough: DROP ROLE (from any database) leaves the key's row
-- behind, and a role created later may get the same OID once OIDs wrap.
-- So renaming a role disables its keys (renaming it back enables them);
-- ddb_drop_orphaned_access_keys() removes keys that no longer work.

CREATE TABLE ddb_internal.access_keys (
    access_key_id     text PRIMARY KEY,
    secret_access_key text NOT NULL,
    role              regrole NOT NULL,
    role_name         name NOT NULL,
    created           timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE ddb_internal.access_keys IS 'access keys of ddb''s HTTP endpoint: key id, secret, and the role requests signed with it run as';
COMMENT ON COLUMN ddb_internal.access_keys.role_name IS 'the role''s name when the key was made: the key works only while the role still has it';
REVOKE ALL ON ddb_internal.access_keys FROM PUBLIC;
ALTER TABLE ddb_internal.access_keys ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
SELECT pg_catalog.pg_extension_config_dump('ddb_internal.access_keys', '');

CREATE FUNCTION ddb_access_key_random(kind text)
RETURNS text
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT VOLATILE;
REVOKE ALL ON FUNCTION ddb_access_key_random(text) FROM PUBLIC;

-- The functions' SQL never resolves a name through the caller's search_path
-- (an operator or function another role put in public would run as the
-- superuser calling): it is pinned, and ddb's own functions are named by
-- their schema.
CREATE FUNCTION ddb_create_access_key(role regrole,
                                      OUT access_key_id text,
                                      OUT secret_access_key text)
AS $$
DECLARE
    rname name;
BEGIN
    -- (a regrole made from a number names no role unless one has that OID)
    SELECT r.rolname INTO rname FROM pg_catalog.pg_roles r
    WHERE r.oid = ddb_create_access_key.role;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'role with OID % does not exist', ddb_create_access_key.role::oid
            USING ERRCODE = 'undefined_object';
    END IF;
    INSERT INTO ddb_internal.access_keys AS k (access_key_id, secret_access_key, role, role_name)
    VALUES (@extschema@.ddb_access_key_random('id'), @extschema@.ddb_access_key_random('secret'),
            ddb_create_access_key.role, rname)
    RETURNING k.access_key_id, k.secret_access_key
    INTO ddb_create_access_key.access_key_id, ddb_create_access_key.secret_access_key;
END
$$ LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION ddb_create_access_key(regrole) IS 'creates an access key for the HTTP endpoint: requests signed with it run as the role';
REVOKE ALL ON FUNCTION ddb_create_access_key(regrole) FROM PUBLIC;

CREATE FUNCTION ddb_drop_access_key(access_key_id text)
RETURNS void
AS $$
BEGIN
    DELETE FROM ddb_internal.access_keys k WHERE k.access_key_id = ddb_drop_access_key.access_key_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'access key "%" does not exist', access_key_id
            USING ERRCODE = 'undefined_object';
    END IF;
END
$$ LANGUAGE plpgsql VOLATILE STRICT
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION ddb_drop_access_key(text) IS 'drops an access key of the HTTP endpoint; requests signed with it fail from then on';
REVOKE ALL ON FUNCTION ddb_drop_access_key(text) FROM PUBLIC;

CREATE FUNCTION ddb_drop_orphaned_access_keys(OUT access_key_id text,
                                              OUT role_name name,
                                              OUT created timestamptz)
RETURNS SETOF record
AS $$
    DELETE FROM ddb_internal.access_keys k
    WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_roles r
                      WHERE r.oid = k.role
                        AND r.rolname = k.role_name)
    RETURNING k.access_key_id, k.role_name, k.created
$$ LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION ddb_drop_orphaned_access_keys() IS 'drops the access keys of the HTTP endpoint whose role was dropped or renamed since (they no longer work) and returns them';
REVOKE ALL ON FUNCTION ddb_drop_orphaned_access_keys() FROM PUBLIC;

-- ---------------------------------------------------------------------------
-- Time to Live and local secondary indexes (issue 17; src/api/ddb_ttl.c,
-- src/api/ddb_ttl_worker.c, src/api/ddb_gsi.c)
-- ---------------------------------------------------------------------------
-- ddb_internal.gsi holds every index of a table, of four kinds: G a global
-- secondary index, L a local one, T the TTL index (index_name '$ttl', one
-- constant partition keyed by the TTL attribute, KEYS_ONLY): its row is
-- there exactly while TTL is enabled, and the sweep reads only its expired
-- entries; C the item collections' sizes of a table with LSIs
-- (index_name '$collections', one row per partition key).
ALTER TABLE ddb_internal.gsi ADD COLUMN kind "char" NOT NULL DEFAULT 'G'
    CHECK (kind IN ('G', 'L', 'T', 'C'));

-- A global index's provisioned throughput (CreateTable, UpdateTable's Create
-- and Update on a PROVISIONED table): kept and reported by DescribeTable,
-- as the table's own is, not enforced; 0 while the table is on demand.
ALTER TABLE ddb_internal.gsi
    ADD COLUMN read_capacity bigint NOT NULL DEFAULT 0,
    ADD COLUMN write_capacity bigint NOT NULL DEFAULT 0;

CREATE FUNCTION ddb_update_time_to_live(tbl text, attribute_name text, enabled boolean)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_update_time_to_live'
LANGUAGE C;
COMMENT ON FUNCTION ddb_update_time_to_live(text, text, boolean) IS
  'DynamoDB UpdateTimeToLive: enable or disable Time to Live on an attribute';

CREATE FUNCTION ddb_update_time_to_live(tbl regclass, attribute_name text, enabled boolean)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_update_time_to_live'
LANGUAGE C;

CREATE FUNCTION ddb_describe_time_to_live(tbl text)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_describe_time_to_live'
LANGUAGE C STABLE;
COMMENT ON FUNCTION ddb_describe_time_to_live(text) IS
  'DynamoDB DescribeTimeToLive: {"TimeToLiveStatus": ..., "AttributeName": ...}';

CREATE FUNCTION ddb_describe_time_to_live(tbl regclass)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_describe_time_to_live'
LANGUAGE C STABLE;

-- One sweep: deletes the expired items of a table (NULL: of every table
-- with TTL enabled that the caller may delete from); returns how many.
CREATE FUNCTION ddb_ttl_sweep(tbl regclass DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'ddb_ttl_sweep'
LANGUAGE C CALLED ON NULL INPUT VOLATILE;
COMMENT ON FUNCTION ddb_ttl_sweep(regclass) IS
  'delete the expired items of a TTL-enabled table (NULL: of all), reading only expired ones; returns the count';

-- Local secondary indexes: CreateTable's LocalSecondaryIndexes (typed
-- JSON, DynamoDB's shape; a key schema element may carry "AttributeType",
-- default S).  They can only be made with the table, as in DynamoDB.
DROP FUNCTION ddb_create_table(text, text, text, text, text);
CREATE FUNCTION ddb_create_table(table_name text, partition_key text,
                                 partition_key_type text DEFAULT 'S',
                                 sort_key text DEFAULT NULL,
                                 sort_key_type text DEFAULT 'S',
                                 local_secondary_indexes jsonb DEFAULT NULL)
RETURNS regclass
AS 'MODULE_PATHNAME', 'ddb_create_table'
LANGUAGE C;
COMMENT ON FUNCTION ddb_create_table(text, text, text, text, text, jsonb) IS
  'DynamoDB CreateTable: a ddb table with its key schema and, optionally, local secondary indexes';

-- ---------------------------------------------------------------------------
-- Batch and transactional operations (issue 16; src/api/ddb_batch.c):
-- BatchWriteItem, BatchGetItem, TransactWriteItems, TransactGetItems.
-- Requests in DynamoDB's shape, items in document form.
-- ---------------------------------------------------------------------------
CREATE FUNCTION ddb_batch_write_item(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_batch_write_item'
LANGUAGE C CALLED ON NULL INPUT;
COMMENT ON FUNCTION ddb_batch_write_item(jsonb) IS
  'BatchWriteItem: {"<table>": [{"PutRequest": {"Item": ...}} | {"DeleteRequest": {"Key": ...}}, ...]}; all or nothing';

CREATE FUNCTION ddb_batch_get_item(request jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_batch_get_item'
LANGUAGE C CALLED ON NULL INPUT STABLE;
COMMENT ON FUNCTION ddb_batch_get_item(jsonb) IS
  'BatchGetItem: {"<table>": {"Keys": [...], "ProjectionExpression": ..., "ExpressionAttributeNames": ...}}';

CREATE FUNCTION ddb_transact_write_items(items jsonb, client_request_token text DEFAULT NULL,
                                         max_actions integer DEFAULT 100)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_transact_write_items'
LANGUAGE C CALLED ON NULL INPUT;
COMMENT ON FUNCTION ddb_transact_write_items(jsonb, text, integer) IS
  'TransactWriteItems: [{"Put"|"Update"|"Delete"|"ConditionCheck": {...}}, ...]; max_actions lifts DynamoDB''s limit of 100';

CREATE FUNCTION ddb_transact_get_items(items jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_transact_get_items'
LANGUAGE C CALLED ON NULL INPUT STABLE;
COMMENT ON FUNCTION ddb_transact_get_items(jsonb) IS
  'TransactGetItems: [{"Get": {"TableName": ..., "Key": ...}}, ...], one snapshot';

-- ClientRequestTokens of TransactWriteItems: the request's SHA-256 and when
-- it was used.  Written in the caller's transaction and read by C code with
-- direct access (callers need no privilege here).  A token is valid for ten
-- minutes; every new token deletes up to 16 expired ones, oldest first.
CREATE TABLE ddb_internal.transaction_tokens (
    token text COLLATE "C" NOT NULL,
    request_hash bytea NOT NULL,
    used timestamptz NOT NULL,
    CONSTRAINT transaction_tokens_pkey PRIMARY KEY (token)
);
CREATE INDEX transaction_tokens_used ON ddb_internal.transaction_tokens (used);
REVOKE ALL ON ddb_internal.transaction_tokens FROM PUBLIC;
COMMENT ON TABLE ddb_internal.transaction_tokens IS
  'ClientRequestTokens of TransactWriteItems in the last ten minutes (older ones are purged as new ones arrive)';

-- ---------------------------------------------------------------------------
-- Streams (issue 18; src/api/ddb_stream.c)
-- ---------------------------------------------------------------------------
-- One row per stream a table ever had (enabling a stream again makes a new
-- one, as DynamoDB does; a disabled stream stays readable until its records
-- expire).  Records live in ddb_internal.stream_records, an ordinary heap
-- table: WAL-logged, replicated and transactional, written by the changing
-- transaction itself.  Sequence numbers come from one sequence shared by
-- every stream; see ddb_stream.c for why a reader resuming after the last
-- number it processed misses nothing.
CREATE SEQUENCE ddb_internal.stream_seq;

CREATE TABLE ddb_internal.streams (
    stream_id serial PRIMARY KEY,
    relid regclass,                  -- NULL once the table is dropped
    table_name text NOT NULL,        -- DynamoDB's name, for the ARN
    label text NOT NULL,             -- StreamLabel: creation time, UTC, ms
    view_type text NOT NULL
        CHECK (view_type IN ('KEYS_ONLY', 'NEW_IMAGE', 'OLD_IMAGE', 'NEW_AND_OLD_IMAGES')),
    shards integer NOT NULL CHECK (shards BETWEEN 1 AND 256),
    key_schema jsonb NOT NULL,       -- DescribeStream's KeySchema
    created timestamptz NOT NULL,
    disabled timestamptz,            -- NULL while enabled
    trimmed bigint NOT NULL DEFAULT 0,  -- records up to this number may be gone
    shard_trimmed bigint[] NOT NULL DEFAULT '{}',  -- the same per shard (from 1)
    owner regrole,                   -- the table's owner (ddb_stream_owner_sync): reads it once dropped
    UNIQUE (table_name, label)
);
CREATE INDEX ON ddb_internal.streams (relid);

CREATE TABLE ddb_internal.stream_records (
    stream_id integer NOT NULL,
    shard smallint NOT NULL,
    seq bigint NOT NULL,
    created timestamptz NOT NULL,    -- ApproximateCreationDateTime
    event "char" NOT NULL,           -- I(NSERT), M(ODIFY), R(EMOVE)
    keys jsonb NOT NULL,             -- document form, as the SQL functions
    new_image jsonb,
    old_image jsonb,
    size_bytes integer NOT NULL,
    service boolean NOT NULL DEFAULT false  -- a deletion by the service (TTL)
);
CREATE UNIQUE INDEX stream_records_pkey ON ddb_internal.stream_records (stream_id, shard, seq);
-- The key that signs shard iterators (ddb_stream.c): two random UUIDs (32
-- bytes, 244 random bits) per database.  Not dumped: a restored database
-- makes its own, and iterators live 15 minutes.
CREATE TABLE ddb_internal.stream_iterator_key (key bytea NOT NULL);
INSERT INTO ddb_internal.stream_iterator_key
  SELECT decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex');
REVOKE ALL ON ddb_internal.streams, ddb_internal.stream_records, ddb_internal.stream_seq,
  ddb_internal.stream_iterator_key FROM PUBLIC;
-- (its rows hidden from pg_read_all_data as the access keys' are: it
-- would let a reader forge iterators)
ALTER TABLE ddb_internal.stream_iterator_key ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
SELECT pg_catalog.pg_extension_config_dump('ddb_internal.streams', '');
SELECT pg_catalog.pg_extension_config_dump('ddb_internal.stream_records', '');
SELECT pg_catalog.pg_extension_config_dump('ddb_internal.stream_seq', '');
SELECT pg_catalog.pg_extension_config_dump('ddb_internal.streams_stream_id_seq', '');

-- Temporary tables get no rows in ddb's catalogs (tables, gsi, streams):
-- PostgreSQL drops them at the session's end without firing the sql_drop
-- event triggers that would delete their rows, which would then name a
-- relation that no longer exists (and could name a later one that reuses
-- its OID).  So a temporary ddb table has no stream, Time to Live, index,
-- tags or DynamoDB names of its own, and its creation registers nothing.
CREATE FUNCTION ddb_catalog_refuse_temporary()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  rel oid;
  name text;
BEGIN
  IF TG_TABLE_NAME = 'gsi' THEN
    rel := NEW.base;
  ELSE
    rel := NEW.relid;
  END IF;
  SELECT relname INTO name FROM pg_catalog.pg_class WHERE oid = rel AND relpersistence = 't';
  IF FOUND THEN
    RAISE EXCEPTION USING ERRCODE = 'DB001',
      MESSAGE = pg_catalog.format('ValidationException: ddb keeps no stream, Time to Live, index, tags or DynamoDB names for temporary table "%s"', name),
      HINT = 'Use a permanent table.';
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER refuse_temporary BEFORE INSERT ON ddb_internal.tables
  FOR EACH ROW EXECUTE FUNCTION ddb_catalog_refuse_temporary();
CREATE TRIGGER refuse_temporary BEFORE INSERT ON ddb_internal.gsi
  FOR EACH ROW EXECUTE FUNCTION ddb_catalog_refuse_temporary();
CREATE TRIGGER refuse_temporary BEFORE INSERT ON ddb_internal.streams
  FOR EACH ROW EXECUTE FUNCTION ddb_catalog_refuse_temporary();

-- UpdateTable's StreamSpecification: a view type enables a stream, NULL
-- disables it.  Returns the table's stream settings.
CREATE FUNCTION ddb_update_stream(tbl text, view_type text)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_update_stream'
LANGUAGE C;

-- The records of the table's latest stream, in sequence-number order (all
-- shards merged, or one shard), after a sequence number.
CREATE FUNCTION ddb_stream_records(tbl text, shard text DEFAULT NULL,
                                   after_sequence_number text DEFAULT NULL,
                                   "limit" integer DEFAULT 1000)
RETURNS SETOF jsonb
AS 'MODULE_PATHNAME', 'ddb_stream_records'
LANGUAGE C CALLED ON NULL INPUT VOLATILE;

-- Removes records older than ddb.stream_retention (and streams disabled for
-- longer); for pg_cron.  Returns the number of records removed.
CREATE FUNCTION ddb_stream_sweep()
RETURNS bigint
AS 'MODULE_PATHNAME', 'ddb_stream_sweep'
LANGUAGE C;
REVOKE ALL ON FUNCTION ddb_stream_sweep() FROM PUBLIC;

-- SQL writes (INSERT, UPDATE, DELETE, COPY, MERGE) reach a stream through
-- this row trigger, created on the table while its stream is enabled.
CREATE FUNCTION ddb_stream_trigger()
RETURNS trigger
AS 'MODULE_PATHNAME', 'ddb_stream_trigger'
LANGUAGE C;

-- DROP TABLE disables the table's stream; its records stay until they
-- expire, as DynamoDB keeps a deleted table's stream for 24 hours.
CREATE FUNCTION ddb_stream_on_drop()
RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  UPDATE ddb_internal.streams s
     SET relid = NULL, disabled = coalesce(s.disabled, pg_catalog.now())
    FROM pg_catalog.pg_event_trigger_dropped_objects() d
   WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.objsubid = 0
     AND d.object_type = 'table' AND s.relid::oid = d.objid;
END
$$;

CREATE EVENT TRIGGER ddb_stream_on_drop ON sql_drop
  EXECUTE FUNCTION ddb_stream_on_drop();

-- A table's owner is its streams' owner too: the role that reads them once
-- the table is dropped.  ALTER TABLE ... OWNER TO fires ddl_command_end;
-- REASSIGN OWNED fires no event trigger at all, so every command that can
-- drop a table (a typed table goes with its type, a table USING ddb with
-- the access method) first brings the owners of all live tables' streams
-- up to date: a small join, one row per stream ever enabled.
CREATE FUNCTION ddb_stream_owner_sync()
RETURNS event_trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  UPDATE ddb_internal.streams s
     SET owner = c.relowner::pg_catalog.regrole
    FROM pg_catalog.pg_class c
   WHERE s.relid::oid = c.oid AND s.owner IS DISTINCT FROM c.relowner::pg_catalog.regrole;
END
$$;

CREATE EVENT TRIGGER ddb_stream_owner ON ddl_command_end
  WHEN TAG IN ('ALTER TABLE')
  EXECUTE FUNCTION ddb_stream_owner_sync();
CREATE EVENT TRIGGER ddb_stream_owner_before_drop ON ddl_command_start
  WHEN TAG IN ('DROP TABLE', 'DROP SCHEMA', 'DROP OWNED', 'DROP TYPE', 'DROP EXTENSION',
               'DROP ACCESS METHOD')
  EXECUTE FUNCTION ddb_stream_owner_sync();

-- ALTER TABLE on a ddb table: refuse dropping a key column or changing its
-- type before the command runs (the stored keys are encoded for the key
-- schema the table was created with).
CREATE FUNCTION ddb_event_trigger_alter_check()
RETURNS event_trigger
AS 'MODULE_PATHNAME'
LANGUAGE C;

CREATE EVENT TRIGGER ddb_table_alter
  ON ddl_command_start
  WHEN TAG IN ('ALTER TABLE')
  EXECUTE FUNCTION ddb_event_trigger_alter_check();

-- Single-item writes (issue 19): the backend's cache of parsed expressions,
-- for tests and for checking that a workload's expressions are reused:
-- {"entries", "hits", "misses"} since the backend started.
CREATE FUNCTION ddb_expression_cache_stats()
RETURNS jsonb
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT VOLATILE;

-- Publications: logical decoding does not see ddb tables' changes (Generic
-- WAL and ddb's own records have no decoder), so a subscriber would copy a
-- ddb table once and never hear of it again.  Listing one in a publication
-- is refused; a publication that takes one in implicitly (FOR ALL TABLES,
-- TABLES IN SCHEMA) is allowed, for its other tables, with a warning that
-- names (the first ten of) the ddb tables it will not replicate.  Checked
-- at the end of the command, so a refusal undoes it.
CREATE FUNCTION ddb_publication_check()
RETURNS event_trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  r record;
BEGIN
  -- (ALTER PUBLICATION ... SET TABLE reports no objects: every listed
  -- table is checked, and none can be there but by this command)
  FOR r IN SELECT p.pubname, pr.prrelid::regclass AS tbl
             FROM pg_publication_rel pr
             JOIN pg_publication p ON p.oid = pr.prpubid
             JOIN pg_class c ON c.oid = pr.prrelid
             JOIN pg_am a ON a.oid = c.relam
            WHERE a.amname = 'ddb'
            ORDER BY p.pubname, c.relname
            LIMIT 1
  LOOP
    RAISE EXCEPTION 'ddb table % cannot be added to publication "%"', r.tbl, r.pubname
      USING ERRCODE = 'feature_not_supported',
            DETAIL = 'Logical decoding does not see changes to ddb tables: a subscriber would never receive them.',
            HINT = 'Use the table''s stream (ddb_update_stream) to follow its changes.';
  END LOOP;
  -- The ddb tables a publication the command created or changed takes
  -- in: by FOR ALL TABLES or TABLES IN SCHEMA, or as partitions of a
  -- partitioned table it lists (ADD TABLE reports a pg_publication_rel;
  -- with publish_via_partition_root pg_publication_tables shows only the
  -- root, so every listed table is taken with its leaf partitions).
  FOR r IN SELECT p.pubname,
                  array_to_string((array_agg(format('%I.%I', x.nspname, x.relname)
                                             ORDER BY x.nspname, x.relname))[1:10], ', ')
                  || CASE WHEN count(*) > 10 THEN format(' and %s more', count(*) - 10) ELSE '' END
                    AS tbls
             FROM pg_publication p
             CROSS JOIN LATERAL (
                  SELECT DISTINCT n.nspname, c.relname
                    FROM pg_publication_tables pt
                    CROSS JOIN LATERAL (SELECT format('%I.%I', pt.schemaname, pt.tablename)::regclass) t(rel)
                    CROSS JOIN LATERAL (SELECT t.rel
                                        UNION
                                        SELECT tree.relid FROM pg_partition_tree(t.rel) tree
                                         WHERE tree.isleaf) leaf(relid)
                    JOIN pg_class c ON c.oid = leaf.relid
                    JOIN pg_namespace n ON n.oid = c.relnamespace
                    JOIN pg_am a ON a.oid = c.relam
                   WHERE pt.pubname = p.pubname AND a.amname = 'ddb') x
            WHERE p.oid IN (SELECT CASE d.classid
                                     WHEN 'pg_publication'::regclass THEN d.objid
                                     WHEN 'pg_publication_namespace'::regclass
                                       THEN (SELECT pn.pnpubid FROM pg_publication_namespace pn
                                              WHERE pn.oid = d.objid)
                                     WHEN 'pg_publication_rel'::regclass
                                       THEN (SELECT pr.prpubid FROM pg_publication_rel pr
                                              WHERE pr.oid = d.objid)
                                   END
                              FROM pg_event_trigger_ddl_commands() d)
            GROUP BY p.pubname
            ORDER BY p.pubname
  LOOP
    RAISE WARNING 'publication "%" does not replicate ddb tables: %', r.pubname, r.tbls
      USING DETAIL = 'Logical decoding does not see changes to ddb tables.',
            HINT = 'Use a table''s stream (ddb_update_stream) to follow its changes.';
  END LOOP;
END
$$;

CREATE EVENT TRIGGER ddb_publication
  ON ddl_command_end
  WHEN TAG IN ('CREATE PUBLICATION', 'ALTER PUBLICATION')
  EXECUTE FUNCTION ddb_publication_check();
