-- Access keys of the HTTP endpoint (src/http/ddb_http_keys.c): created for
-- a role, shaped like AWS's, readable (not by pg_read_all_data) and
-- manageable only by superusers,
-- dropped by id, kept by pg_dump (an extension configuration table).  A key
-- records its role's name as well as its OID and works only while the two
-- still go together (the endpoint checks it: test/endpoint/test_sigv4.py);
-- the keys that fail the check can be dropped in one call.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
CREATE ROLE ddb_key_owner;
CREATE ROLE ddb_key_other;

-- a key: 20-character id AKDB[A-Z2-7]{16}, 40-character secret
SELECT access_key_id ~ '^AKDB[A-Z2-7]{16}$' AS id_shape,
       secret_access_key ~ '^[A-Za-z0-9+/]{40}$' AS secret_shape
FROM ddb_create_access_key('ddb_key_owner');
SELECT role, role_name, length(secret_access_key) FROM ddb_internal.access_keys ORDER BY created;

-- two keys never collide
SELECT count(DISTINCT id) AS distinct_ids, count(*) AS keys
FROM (SELECT (ddb_create_access_key('ddb_key_other')).access_key_id AS id
      FROM generate_series(1, 20)) k;

-- an unknown role is refused by regrole itself; an OID that names no role
-- (regrole does not check those) by the function
SELECT ddb_create_access_key('no_such_role');
SELECT ddb_create_access_key(4000000000::oid::regrole);
SELECT count(*) AS keys FROM ddb_internal.access_keys WHERE role = 4000000000::oid;

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
SELECT ddb_drop_orphaned_access_keys();
RESET ROLE;

-- nor do roles that read every table without grants (pg_read_all_data):
-- row-level security with no policy hides the secrets, and the key that
-- signs stream iterators, from them
CREATE ROLE ddb_key_reader IN ROLE pg_read_all_data;
SET ROLE ddb_key_reader;
SELECT count(*) AS keys_seen FROM ddb_internal.access_keys;
SELECT count(*) AS iterator_keys_seen FROM ddb_internal.stream_iterator_key;
RESET ROLE;
SELECT count(*) > 0 AS superuser_sees_keys FROM ddb_internal.access_keys;
SELECT count(*) AS superuser_sees_iterator_key FROM ddb_internal.stream_iterator_key;
DROP ROLE ddb_key_reader;

-- the random parts: only 'id' and 'secret'
SELECT length(ddb_access_key_random('id')), length(ddb_access_key_random('secret'));
SELECT ddb_access_key_random('other');

-- pg_dump keeps the keys
SELECT extconfig @> ARRAY['ddb_internal.access_keys'::regclass::oid] AS dumped
FROM pg_extension WHERE extname = 'ddb';

-- Orphaned keys: those whose role was dropped, or renamed (the OID no
-- longer has the name the key was made for), or whose OID names another
-- role -- what a role created after the key's was dropped may get once OIDs
-- wrap; here a superuser edits the row to the same effect.  They, and only
-- they, are dropped and listed; renaming a role back makes its key whole.
CREATE ROLE ddb_key_dropped;
CREATE ROLE ddb_key_renamed;
CREATE ROLE ddb_key_back;
SELECT count(*) FROM ddb_create_access_key('ddb_key_dropped');
SELECT count(*) FROM ddb_create_access_key('ddb_key_renamed');
SELECT count(*) FROM ddb_create_access_key('ddb_key_back');
SELECT count(*) FROM ddb_create_access_key('ddb_key_other');
SELECT access_key_id AS other_key FROM ddb_internal.access_keys WHERE role_name = 'ddb_key_other' \gset
UPDATE ddb_internal.access_keys SET role = 'ddb_key_owner' WHERE access_key_id = :'other_key';
DROP ROLE ddb_key_dropped;
ALTER ROLE ddb_key_renamed RENAME TO ddb_key_renamed2;
ALTER ROLE ddb_key_back RENAME TO ddb_key_back2;
ALTER ROLE ddb_key_back2 RENAME TO ddb_key_back;
SELECT role_name, created IS NOT NULL AS created FROM ddb_drop_orphaned_access_keys() ORDER BY 1;
SELECT role, role_name FROM ddb_internal.access_keys ORDER BY 2;
SELECT count(*) FROM ddb_drop_orphaned_access_keys();

SELECT count(ddb_drop_access_key(access_key_id)) FROM ddb_internal.access_keys;
DROP ROLE ddb_key_owner;
DROP ROLE ddb_key_other;
DROP ROLE ddb_key_renamed2;
DROP ROLE ddb_key_back;
