-- ddb's own SQL never resolves a name through the caller's search_path.
-- The statements ddb runs through SPI (catalog reads and writes, the DDL of
-- CreateTable, DeleteTable, indexes, TTL and streams, the event trigger's
-- query) name relations with their schema, but PostgreSQL looks operators,
-- functions and types up in search_path, and an operator whose argument
-- types match exactly wins over pg_catalog's inexact one wherever it is:
-- "relid = $1" (regclass = oid) would run an "=(regclass, oid)" that a role
-- with CREATE on public defined there, as whoever called ddb.  Here such a
-- role plants operators and functions that note who ran them, and a
-- superuser and a table's owner go through every ddb path that runs SQL,
-- each in a fresh session (ddb's caches empty): nothing planted may run.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

CREATE ROLE sp_planter;
CREATE ROLE sp_owner;
GRANT CREATE ON SCHEMA public TO sp_planter, sp_owner;
SET ROLE sp_planter;
CREATE TABLE public.sp_ran (who name, what text);
GRANT INSERT ON public.sp_ran TO PUBLIC;
-- pg_catalog has "=(oid, oid)", not these: each is an exact match where a
-- regclass meets an oid, so it wins over pg_catalog's
CREATE FUNCTION public.sp_eq(regclass, oid) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.sp_ran VALUES (current_user, '=(regclass, oid)');
  RETURN $1::oid OPERATOR(pg_catalog.=) $2;
END $$;
CREATE OPERATOR public.= (LEFTARG = regclass, RIGHTARG = oid, FUNCTION = public.sp_eq);
CREATE FUNCTION public.sp_eq(oid, regclass) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.sp_ran VALUES (current_user, '=(oid, regclass)');
  RETURN $1 OPERATOR(pg_catalog.=) $2::oid;
END $$;
CREATE OPERATOR public.= (LEFTARG = oid, RIGHTARG = regclass, FUNCTION = public.sp_eq);
-- the same names and argument types as pg_catalog's own functions and
-- operator: they win for a search_path that puts public before pg_catalog
CREATE FUNCTION public.jsonb_each_text(jsonb, OUT key text, OUT value text)
RETURNS SETOF record LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.sp_ran VALUES (current_user, 'jsonb_each_text');
  RETURN QUERY SELECT * FROM pg_catalog.jsonb_each_text($1);
END $$;
CREATE FUNCTION public.jsonb_object_keys(jsonb) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.sp_ran VALUES (current_user, 'jsonb_object_keys');
  RETURN QUERY SELECT * FROM pg_catalog.jsonb_object_keys($1);
END $$;
CREATE FUNCTION public.sp_eq(text, text) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.sp_ran VALUES (current_user, '=(text, text)');
  RETURN $1 OPERATOR(pg_catalog.=) $2;
END $$;
CREATE OPERATOR public.= (LEFTARG = text, RIGHTARG = text, FUNCTION = public.sp_eq);
-- where an access key's role (regrole) meets a role's OID
CREATE FUNCTION public.sp_eq(oid, regrole) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.sp_ran VALUES (current_user, '=(oid, regrole)');
  RETURN $1 OPERATOR(pg_catalog.=) $2::oid;
END $$;
CREATE OPERATOR public.= (LEFTARG = oid, RIGHTARG = regrole, FUNCTION = public.sp_eq);
RESET ROLE;

-- The planted objects work: a query that meets them runs them.
SELECT 'pg_class'::regclass = 1259::oid AS planted_works;
SELECT count(*) AS planted_ran FROM public.sp_ran;
TRUNCATE public.sp_ran;

-- What ran since the last check (as the superuser: the rows are its), by
-- whom: a superuser, or the table's owner.
\set ran 'WITH d AS (DELETE FROM public.sp_ran RETURNING *) SELECT coalesce(string_agg(DISTINCT CASE WHEN r.rolsuper THEN \'a superuser\' ELSE d.who::text END || \' ran \' || d.what, \'; \'), \'nothing\') AS planted_ran FROM d LEFT JOIN pg_catalog.pg_roles r ON r.rolname = d.who'

-- CreateTable, in SQL, with an index; a plain CREATE TABLE (ddb's event
-- trigger checks every table created)
SELECT ddb_create_table('sp_items', 'pk', 'S', 'sk') IS NOT NULL AS created;
CREATE TABLE sp_heap (a int);
:ran;
\c -
SELECT ddb_create_gsi('sp_items', 'by_v', 'v', 'N');
:ran;
-- the table's owner: its own table, through the protocol
\c -
SET ROLE sp_owner;
SELECT ddb_api('CreateTable', '{"TableName": "sp_owned",
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                           {"AttributeName": "g", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
  "GlobalSecondaryIndexes": [{"IndexName": "by_g",
    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
    "Projection": {"ProjectionType": "ALL"}}],
  "BillingMode": "PAY_PER_REQUEST"}') -> 'TableDescription' -> 'TableStatus' AS status;
RESET ROLE;
:ran;

-- Items: writes that keep an index, reads
\c -
SELECT ddb_put_item('sp_items', '{"pk": "a", "sk": "1", "v": 1}');
:ran;
\c -
SELECT ddb_update_item('sp_items', '{"pk": "a", "sk": "1"}', 'SET v = :v', vals => '{":v": 2}');
:ran;
\c -
SELECT ddb_get_item('sp_items', '{"pk": "a", "sk": "1"}');
:ran;
\c -
SELECT * FROM ddb_query('sp_items', 'pk = :p', '{":p": "a"}');
:ran;
\c -
SELECT ddb_delete_item('sp_items', '{"pk": "a", "sk": "1"}');
:ran;
\c -
SET ROLE sp_owner;
SELECT ddb_api('PutItem', '{"TableName": "sp_owned", "Item": {"pk": {"S": "a"}, "g": {"S": "x"}}}');
SELECT ddb_api('Query', '{"TableName": "sp_owned", "IndexName": "by_g",
  "KeyConditionExpression": "g = :g", "ExpressionAttributeValues": {":g": {"S": "x"}}}') -> 'Count' AS count;
RESET ROLE;
:ran;

-- PartiQL
\c -
SELECT ddb_api('ExecuteStatement', '{"Statement": "INSERT INTO \"sp_items\" VALUE {''pk'': ''b'', ''sk'': ''1'', ''v'': 3}"}');
SELECT ddb_api('ExecuteStatement', '{"Statement": "SELECT * FROM \"sp_items\" WHERE pk = ''b''"}');
:ran;

-- Streams: enable, write, read, disable
\c -
SELECT ddb_update_stream('sp_items', 'NEW_IMAGE') -> 'StreamSpecification' AS spec;
:ran;
\c -
SELECT ddb_put_item('sp_items', '{"pk": "c", "sk": "1", "v": 4}');
SELECT count(*) AS records FROM ddb_stream_records('sp_items');
:ran;
\c -
SELECT ddb_update_stream('sp_items', NULL) -> 'StreamSpecification' AS spec;
:ran;

-- Time to Live: enable, describe, sweep (every table, then one)
\c -
SELECT ddb_update_time_to_live('sp_items', 'exp', true);
:ran;
\c -
SELECT ddb_describe_time_to_live('sp_items');
:ran;
\c -
SELECT ddb_put_item('sp_items', jsonb_build_object('pk', 'd', 'sk', '1',
                                                   'exp', extract(epoch FROM now())::int8 - 60));
-- (other tests' tables may have expired items too)
SELECT ddb_ttl_sweep() >= 1 AS swept;
:ran;
\c -
SELECT ddb_ttl_sweep('sp_items');
:ran;

-- DescribeTable, tags
\c -
SELECT ddb_describe_table('sp_items') ->> 'TableStatus' AS status;
:ran;
\c -
SELECT ddb_api('DescribeTable', '{"TableName": "sp_owned"}') -> 'Table' ->> 'TableStatus' AS status;
:ran;
\c -
SELECT ddb_api('TagResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/sp_items",
  "Tags": [{"Key": "k", "Value": "v"}]}');
SELECT ddb_api('ListTagsOfResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/sp_items"}');
:ran;
-- a search_path that puts public first: pg_catalog's functions lose too
\c -
SET search_path = public, pg_catalog;
SELECT ddb_api('TagResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/sp_items",
  "Tags": [{"Key": "k2", "Value": "v2"}]}');
SELECT ddb_api('ListTagsOfResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/sp_items"}');
RESET search_path;
:ran;

-- Access keys (superusers' SQL functions), public first as well
\c -
SET search_path = public, pg_catalog;
SELECT count(*) AS keys FROM ddb_create_access_key('sp_owner');
SELECT count(*) AS orphans FROM ddb_drop_orphaned_access_keys();
SELECT ddb_drop_access_key(k.access_key_id) FROM ddb_internal.access_keys k
WHERE k.role OPERATOR(pg_catalog.=) 'sp_owner'::regrole;
RESET search_path;
:ran;

-- Indexes and tables dropped
\c -
SELECT ddb_drop_gsi('sp_items', 'by_v');
:ran;
\c -
SELECT ddb_api('DeleteTable', '{"TableName": "sp_items"}') -> 'TableDescription' ->> 'TableStatus' AS status;
:ran;
\c -
SET ROLE sp_owner;
SELECT ddb_api('DeleteTable', '{"TableName": "sp_owned"}') -> 'TableDescription' ->> 'TableStatus' AS status;
RESET ROLE;
:ran;

DROP TABLE sp_heap;
DROP OWNED BY sp_planter;
DROP ROLE sp_planter;
REVOKE CREATE ON SCHEMA public FROM sp_owner;
DROP ROLE sp_owner;
