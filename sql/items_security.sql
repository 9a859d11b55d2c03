-- The item API checks privileges itself (it bypasses the executor) and
-- refuses tables under row-level security.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

SELECT ddb_create_table('secure_items', 'PK');
SELECT ddb_put_item('secure_items', '{"PK": "a", "v": 1}');
CREATE ROLE ddb_reader;
CREATE ROLE ddb_nobody;
GRANT SELECT ON secure_items TO ddb_reader;

SET ROLE ddb_nobody;
SELECT ddb_get_item('secure_items', '{"PK": "a"}');
SELECT ddb_put_item('secure_items', '{"PK": "b"}');
RESET ROLE;

-- SELECT is enough to read, not to write.
SET ROLE ddb_reader;
SELECT ddb_get_item('secure_items', '{"PK": "a"}');
SELECT ddb_put_item('secure_items', '{"PK": "b"}');
SELECT ddb_update_item('secure_items', '{"PK": "a"}', 'SET v = :v', vals => '{":v": 2}');
SELECT ddb_delete_item('secure_items', '{"PK": "a"}');
RESET ROLE;

-- Row-level security: refused for everyone it applies to.
ALTER TABLE secure_items ENABLE ROW LEVEL SECURITY;
CREATE POLICY p ON secure_items USING (true);
SET ROLE ddb_reader;
SELECT ddb_get_item('secure_items', '{"PK": "a"}');
RESET ROLE;
ALTER TABLE secure_items DISABLE ROW LEVEL SECURITY;

-- Identifiers are quoted: odd table and key names work and inject nothing.
SELECT ddb_create_table('we.ird-Name_1', 'pk"; DROP TABLE secure_items; --');
SELECT ddb_put_item('we.ird-Name_1', '{"pk\"; DROP TABLE secure_items; --": "k", "v": 1}');
SELECT ddb_get_item('we.ird-Name_1', '{"pk\"; DROP TABLE secure_items; --": "k"}');
SELECT count(*) FROM secure_items;

DROP TABLE secure_items, "we.ird-Name_1";
DROP ROLE ddb_reader;
DROP ROLE ddb_nobody;
