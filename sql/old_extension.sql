-- A library newer than the extension's SQL objects: the library is per
-- installation, the objects per database, so a database whose extension is
-- still at 0.1 meets the 0.2 library after an upgrade of the package.  Item
-- calls and plain SQL writes (which read the table catalog of 0.2 for the
-- key attributes' names) say to run ALTER EXTENSION ddb UPDATE instead of
-- failing on a missing relation; after the update they work.
SELECT current_database() AS orig \gset
CREATE DATABASE ddb_old_extension;
\c ddb_old_extension
CREATE EXTENSION ddb VERSION '0.1';
CREATE TABLE t (pk text, sk numeric, item jsonb) USING ddb;
SELECT ddb_put_item('t', '{"pk": "a", "sk": 1}');
INSERT INTO t VALUES ('a', 1, '{}');
ALTER EXTENSION ddb UPDATE;
INSERT INTO t VALUES ('a', 1, '{"x": 1}');
SELECT ddb_get_item('t', '{"pk": "a", "sk": 1}');
\c :orig
DROP DATABASE ddb_old_extension;
