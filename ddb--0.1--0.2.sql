/* ddb--0.1--0.2.sql: upgrade ddb 0.1 to 0.2 */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION ddb UPDATE TO '0.2'" to load this file. \quit

-- ddb 0.1's install script is frozen.  CREATE EXTENSION ddb installs 0.2 by
-- running it and then this script, so everything new or changed since 0.1
-- is here, and a fresh install and an upgraded one are the same.
-- Since 0.1 the sources live in layer folders: src/engine, src/model,
-- src/api, src/planner (the 0.1 script's comments name the old paths).

-- ---------------------------------------------------------------------------
-- HTTP endpoint: access keys (issue 14; src/http/ddb_http_keys.c)
-- ---------------------------------------------------------------------------
-- An access key maps an AWS-style key pair to a role: a request to the
-- HTTP endpoint signed with the key (SigV4) runs as that role.  Secrets are
-- stored as given (SigV4 needs them to recompute signatures) and are
-- readable only by superusers: the table grants nothing to PUBLIC.

CREATE TABLE ddb_internal.access_keys (
    access_key_id     text PRIMARY KEY,
    secret_access_key text NOT NULL,
    role              regrole NOT NULL,
    created           timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE ddb_internal.access_keys IS 'access keys of ddb''s HTTP endpoint: key id, secret, and the role requests signed with it run as';
REVOKE ALL ON ddb_internal.access_keys FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('ddb_internal.access_keys', '');

CREATE FUNCTION ddb_access_key_random(kind text)
RETURNS text
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT VOLATILE;
REVOKE ALL ON FUNCTION ddb_access_key_random(text) FROM PUBLIC;

CREATE FUNCTION ddb_create_access_key(role regrole,
                                      OUT access_key_id text,
                                      OUT secret_access_key text)
AS $$
    INSERT INTO ddb_internal.access_keys (access_key_id, secret_access_key, role)
    VALUES (ddb_access_key_random('id'), ddb_access_key_random('secret'), role)
    RETURNING access_key_id, secret_access_key
$$ LANGUAGE sql VOLATILE STRICT;
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
$$ LANGUAGE plpgsql VOLATILE STRICT;
COMMENT ON FUNCTION ddb_drop_access_key(text) IS 'drops an access key of the HTTP endpoint; requests signed with it fail from then on';
REVOKE ALL ON FUNCTION ddb_drop_access_key(text) FROM PUBLIC;
