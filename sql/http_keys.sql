-- Access keys of the HTTP endpoint (src/http/ddb_http_keys.c): created for
-- a role, shaped like AWS's, readable and manageable only by superusers,
-- dropped by id, kept by pg_dump (an extension configuration table).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
CREATE ROLE ddb_key_owner;
CREATE ROLE ddb_key_other;

-- a key: 20-character id AKDB[A-Z2-7]{16}, 40-character secret
SELECT access_key_id ~ '^AKDB[A-Z2-7]{16}$' AS id_shape,
       secret_access_key ~ '^[A-Za-z0-9+/]{40}$' AS secret_shape
FROM ddb_create_access_key('ddb_key_owner');
SELECT role, length(secret_access_key) FROM ddb_internal.access_keys ORDER BY created;

-- two keys never collide
SELECT count(DISTINCT id) AS distinct_ids, count(*) AS keys
FROM (SELECT (ddb_create_access_key('ddb_key_other')).access_key_id AS id
      FROM generate_series(1, 20)) k;

-- an unknown role is refused by regrole itself
SELECT ddb_create_access_key('no_such_role');

-- dropping: by id; an unknown id is an error
SELECT count(ddb_drop_access_key(access_key_id)) FROM ddb_internal.access_keys WHERE role = 'ddb_key_other'::regrole;
SELECT role, count(*) FROM ddb_internal.access_keys GROUP BY role;
SELECT ddb_drop_access_key('AKDBNOSUCHKEY0000000');

-- only superusers read secrets or manage keys
SET ROLE ddb_key_owner;
SELECT count(*) FROM ddb_internal.access_keys;
SELECT ddb_create_access_key('ddb_key_owner');
SELECT ddb_drop_access_key('x');
SELECT ddb_access_key_random('id');
RESET ROLE;

-- the random parts: only 'id' and 'secret'
SELECT length(ddb_access_key_random('id')), length(ddb_access_key_random('secret'));
SELECT ddb_access_key_random('other');

-- pg_dump keeps the keys
SELECT extconfig @> ARRAY['ddb_internal.access_keys'::regclass::oid] AS dumped
FROM pg_extension WHERE extname = 'ddb';

SELECT count(ddb_drop_access_key(access_key_id)) FROM ddb_internal.access_keys;
DROP ROLE ddb_key_owner;
DROP ROLE ddb_key_other;
