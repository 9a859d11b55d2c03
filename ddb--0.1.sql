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
