/* ddb--0.1.sql: install script for ddb 0.1 */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION ddb" to load this file. \quit

-- The table access method: CREATE TABLE ... USING ddb
CREATE FUNCTION ddb_tableam_handler(internal)
RETURNS table_am_handler
AS 'MODULE_PATHNAME'
LANGUAGE C;

CREATE ACCESS METHOD ddb TYPE TABLE HANDLER ddb_tableam_handler;
COMMENT ON ACCESS METHOD ddb IS 'DynamoDB-style hash-routed, sort-key-ordered tables';

-- The table shape rule, checked at CREATE/ALTER TABLE.
CREATE FUNCTION ddb_check_table_shape(tbl regclass)
RETURNS text
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

CREATE FUNCTION ddb_event_trigger_check()
RETURNS event_trigger
AS 'MODULE_PATHNAME'
LANGUAGE C;

CREATE EVENT TRIGGER ddb_table_shape
  ON ddl_command_end
  WHEN TAG IN ('CREATE TABLE', 'CREATE TABLE AS', 'SELECT INTO', 'ALTER TABLE')
  EXECUTE FUNCTION ddb_event_trigger_check();

-- Structural verifier: raises data_corrupted on the first violation.
CREATE FUNCTION ddb_verify(tbl regclass)
RETURNS jsonb
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

-- Key encoding, exposed for tests and for tools that route by hash.
CREATE FUNCTION ddb_hash32(value "any")
RETURNS bigint
AS 'MODULE_PATHNAME', 'ddb_hash32_sql'
LANGUAGE C STRICT IMMUTABLE;

CREATE FUNCTION ddb_key_bytes(VARIADIC "any")
RETURNS bytea
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT IMMUTABLE;

CREATE FUNCTION ddb_sort_key_bytes(value "any")
RETURNS bytea
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT IMMUTABLE;

-- The storage engine's range scan and point lookup over encoded keys (see
-- ddb_key_bytes), for tests and tools: SELECT * FROM ddb_range_scan(NULL::t, ...)
CREATE FUNCTION ddb_range_scan(rowtype anyelement, lo bytea DEFAULT NULL,
                               hi bytea DEFAULT NULL, forward boolean DEFAULT true,
                               prefix boolean DEFAULT false)
RETURNS SETOF anyelement
AS 'MODULE_PATHNAME'
LANGUAGE C CALLED ON NULL INPUT STABLE;

CREATE FUNCTION ddb_lookup_key(rowtype anyelement, key bytea)
RETURNS anyelement
AS 'MODULE_PATHNAME'
LANGUAGE C CALLED ON NULL INPUT STABLE;

-- The item model (src/ddb_types.c).  Items are jsonb in document form:
-- S, N, BOOL, NULL, L, M are plain JSON; B is {"$B": "<base64>"}; SS, NS, BS
-- are {"$SS": [...]}, {"$NS": [...]}, {"$BS": [...]}; {"$M": {...}} writes a
-- map whose only key would otherwise read as one of these tags.
CREATE FUNCTION ddb_to_typed_json(item jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ddb_to_typed_json(jsonb) IS
  'convert an item from document form to DynamoDB typed JSON ({"a": {"S": "x"}})';

CREATE FUNCTION ddb_from_typed_json(item jsonb)
RETURNS jsonb
AS 'MODULE_PATHNAME'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ddb_from_typed_json(jsonb) IS
  'convert an item from DynamoDB typed JSON to document form';

CREATE FUNCTION ddb_item_size(item jsonb)
RETURNS integer
AS 'MODULE_PATHNAME', 'ddb_item_size_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ddb_item_size(jsonb) IS
  'the size of an item in bytes, as DynamoDB counts it';

CREATE FUNCTION ddb_validate_item(item jsonb)
RETURNS void
AS 'MODULE_PATHNAME', 'ddb_validate_item_sql'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION ddb_validate_item(jsonb) IS
  'raise ValidationException unless the item is a valid DynamoDB item within 400 KB';

-- The expression language (src/ddb_expr_*.c).  Each call is one request:
-- placeholders in names/vals that the expression does not use are errors.
-- A NULL item means "no item".
CREATE FUNCTION ddb_eval_condition(item jsonb, condition text,
                                   names jsonb DEFAULT NULL, vals jsonb DEFAULT NULL)
RETURNS boolean
AS 'MODULE_PATHNAME', 'ddb_eval_condition_sql'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION ddb_eval_condition(jsonb, text, jsonb, jsonb) IS
  'evaluate a DynamoDB ConditionExpression against an item';

CREATE FUNCTION ddb_apply_update(item jsonb, update_expression text,
                                 names jsonb DEFAULT NULL, vals jsonb DEFAULT NULL,
                                 key_attributes text[] DEFAULT NULL,
                                 return_values text DEFAULT 'ALL_NEW')
RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_apply_update_sql'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION ddb_apply_update(jsonb, text, jsonb, jsonb, text[], text) IS
  'apply a DynamoDB UpdateExpression to an item; key_attributes may not be updated';

CREATE FUNCTION ddb_project(item jsonb, projection text, names jsonb DEFAULT NULL)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_project_sql'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION ddb_project(jsonb, text, jsonb) IS
  'apply a DynamoDB ProjectionExpression to an item';

CREATE FUNCTION ddb_key_condition(condition text, partition_key text, sort_key text DEFAULT NULL,
                                  names jsonb DEFAULT NULL, vals jsonb DEFAULT NULL)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_key_condition_sql'
LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION ddb_key_condition(text, text, text, jsonb, jsonb) IS
  'check a DynamoDB KeyConditionExpression against a key schema and show what a Query would read';

-- The item API (src/ddb_api.c): DynamoDB's table and item operations.
CREATE FUNCTION ddb_create_table(table_name text, partition_key text,
                                 partition_key_type text DEFAULT 'S',
                                 sort_key text DEFAULT NULL,
                                 sort_key_type text DEFAULT 'S')
RETURNS regclass
AS 'MODULE_PATHNAME'
LANGUAGE C;

CREATE FUNCTION ddb_describe_table(tbl regclass)
RETURNS jsonb
AS 'MODULE_PATHNAME'
LANGUAGE C STABLE;

CREATE FUNCTION ddb_list_tables()
RETURNS SETOF regclass
LANGUAGE sql STABLE
AS $$
  SELECT c.oid::regclass
  FROM pg_catalog.pg_class c JOIN pg_catalog.pg_am a ON a.oid = c.relam
       JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  WHERE a.amname = 'ddb' AND c.relkind = 'r'
    AND n.nspname <> 'ddb_internal'  -- index tables of global secondary indexes
    AND pg_catalog.has_table_privilege(c.oid, 'SELECT')
  ORDER BY c.relname
$$;

CREATE FUNCTION ddb_put_item(tbl regclass, item jsonb, condition text DEFAULT NULL,
                             names jsonb DEFAULT NULL, vals jsonb DEFAULT NULL,
                             return_values text DEFAULT 'NONE')
RETURNS jsonb
AS 'MODULE_PATHNAME'
LANGUAGE C;

CREATE FUNCTION ddb_get_item(tbl regclass, key jsonb, projection text DEFAULT NULL,
                             names jsonb DEFAULT NULL)
RETURNS jsonb
AS 'MODULE_PATHNAME'
LANGUAGE C STABLE;

CREATE FUNCTION ddb_update_item(tbl regclass, key jsonb, update_expression text,
                                condition text DEFAULT NULL, names jsonb DEFAULT NULL,
                                vals jsonb DEFAULT NULL, return_values text DEFAULT 'NONE')
RETURNS jsonb
AS 'MODULE_PATHNAME'
LANGUAGE C;

CREATE FUNCTION ddb_delete_item(tbl regclass, key jsonb, condition text DEFAULT NULL,
                                names jsonb DEFAULT NULL, vals jsonb DEFAULT NULL,
                                return_values text DEFAULT 'NONE')
RETURNS jsonb
AS 'MODULE_PATHNAME'
LANGUAGE C;

-- Query and Scan (src/ddb_query.c), DynamoDB's read requests.  The _page
-- functions return one page as DynamoDB does ({"Items", "Count",
-- "ScannedCount", "LastEvaluatedKey"}); the SETOF functions stream every
-- item of every page ("limit" then caps the items read in all).
CREATE FUNCTION ddb_query(tbl regclass, key_condition text, vals jsonb DEFAULT NULL,
                          names jsonb DEFAULT NULL, filter text DEFAULT NULL,
                          projection text DEFAULT NULL, index_name text DEFAULT NULL,
                          forward boolean DEFAULT true, "limit" integer DEFAULT NULL,
                          start_key jsonb DEFAULT NULL)
RETURNS SETOF jsonb
AS 'MODULE_PATHNAME', 'ddb_query'
LANGUAGE C CALLED ON NULL INPUT STABLE;
COMMENT ON FUNCTION ddb_query(regclass, text, jsonb, jsonb, text, text, text, boolean, integer, jsonb) IS
  'DynamoDB Query: the items of one partition in sort-key order, every page';

CREATE FUNCTION ddb_query_page(tbl regclass, key_condition text, vals jsonb DEFAULT NULL,
                               names jsonb DEFAULT NULL, filter text DEFAULT NULL,
                               projection text DEFAULT NULL, index_name text DEFAULT NULL,
                               forward boolean DEFAULT true, "limit" integer DEFAULT NULL,
                               start_key jsonb DEFAULT NULL)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_query_page'
LANGUAGE C CALLED ON NULL INPUT STABLE;
COMMENT ON FUNCTION ddb_query_page(regclass, text, jsonb, jsonb, text, text, text, boolean, integer, jsonb) IS
  'DynamoDB Query: one page, with Count, ScannedCount and LastEvaluatedKey';

CREATE FUNCTION ddb_scan(tbl regclass, filter text DEFAULT NULL, vals jsonb DEFAULT NULL,
                         names jsonb DEFAULT NULL, projection text DEFAULT NULL,
                         index_name text DEFAULT NULL, segment integer DEFAULT NULL,
                         total_segments integer DEFAULT NULL, "limit" integer DEFAULT NULL,
                         start_key jsonb DEFAULT NULL)
RETURNS SETOF jsonb
AS 'MODULE_PATHNAME', 'ddb_scan'
LANGUAGE C CALLED ON NULL INPUT STABLE;
COMMENT ON FUNCTION ddb_scan(regclass, text, jsonb, jsonb, text, text, integer, integer, integer, jsonb) IS
  'DynamoDB Scan: every item of the table (or of one segment) in hash order';

CREATE FUNCTION ddb_scan_page(tbl regclass, filter text DEFAULT NULL, vals jsonb DEFAULT NULL,
                              names jsonb DEFAULT NULL, projection text DEFAULT NULL,
                              index_name text DEFAULT NULL, segment integer DEFAULT NULL,
                              total_segments integer DEFAULT NULL, "limit" integer DEFAULT NULL,
                              start_key jsonb DEFAULT NULL)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'ddb_scan_page'
LANGUAGE C CALLED ON NULL INPUT STABLE;
COMMENT ON FUNCTION ddb_scan_page(regclass, text, jsonb, jsonb, text, text, integer, integer, integer, jsonb) IS
  'DynamoDB Scan: one page, with Count, ScannedCount and LastEvaluatedKey';

-- Global secondary indexes (src/ddb_gsi.c).  Each GSI is an internal ddb
-- table in schema ddb_internal keyed by (index keys, base table keys),
-- maintained in the writing transaction by a C trigger on the base table
-- (and directly by the item API's writes).  The catalog names the base and
-- index tables by regclass: pg_dump writes them as qualified names and a
-- restore loads this table's rows after every table exists, so the OIDs
-- resolve again; the triggers are ordinary triggers, dumped with the base
-- table.
CREATE SCHEMA ddb_internal;
COMMENT ON SCHEMA ddb_internal IS 'ddb''s catalog and the tables that store global secondary indexes';
GRANT USAGE ON SCHEMA ddb_internal TO PUBLIC;

CREATE TABLE ddb_internal.gsi (
    base regclass NOT NULL,
    index_name text NOT NULL,
    index_table regclass NOT NULL,
    partition_key text NOT NULL,
    partition_key_type "char" NOT NULL,
    sort_key text,
    sort_key_type "char",
    projection text NOT NULL,
    non_key_attributes text[],
    PRIMARY KEY (base, index_name)
);
GRANT SELECT ON ddb_internal.gsi TO PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('ddb_internal.gsi', '');

CREATE FUNCTION ddb_create_gsi(tbl regclass, index_name text, partition_key text,
                               partition_key_type text DEFAULT 'S',
                               sort_key text DEFAULT NULL, sort_key_type text DEFAULT 'S',
                               projection text DEFAULT 'ALL',
                               non_key_attributes text[] DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C;
COMMENT ON FUNCTION ddb_create_gsi(regclass, text, text, text, text, text, text, text[]) IS
  'DynamoDB UpdateTable Create GlobalSecondaryIndex: create and backfill a global secondary index';

CREATE FUNCTION ddb_drop_gsi(tbl regclass, index_name text)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C;
COMMENT ON FUNCTION ddb_drop_gsi(regclass, text) IS
  'DynamoDB UpdateTable Delete GlobalSecondaryIndex';

CREATE FUNCTION ddb_verify_gsi(tbl regclass, index_name text DEFAULT NULL)
RETURNS jsonb
AS 'MODULE_PATHNAME'
LANGUAGE C;
COMMENT ON FUNCTION ddb_verify_gsi(regclass, text) IS
  'check that each global secondary index holds exactly the entries of its table; data_corrupted otherwise';

-- The maintenance triggers' function: AFTER INSERT OR UPDATE OR DELETE FOR
-- EACH ROW, and AFTER TRUNCATE FOR EACH STATEMENT.
CREATE FUNCTION ddb_gsi_trigger()
RETURNS trigger
AS 'MODULE_PATHNAME'
LANGUAGE C;

-- DROP TABLE of a base table drops its index tables and catalog rows;
-- dropping an index table by hand forgets that index.
CREATE FUNCTION ddb_gsi_on_drop()
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

CREATE EVENT TRIGGER ddb_gsi_drop
  ON sql_drop
  WHEN TAG IN ('DROP TABLE', 'DROP SCHEMA', 'DROP OWNED')
  EXECUTE FUNCTION ddb_gsi_on_drop();
