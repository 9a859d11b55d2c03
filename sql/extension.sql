-- CREATE EXTENSION installs the access method and its functions.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
SELECT amname, amtype FROM pg_am WHERE amname = 'ddb';

-- The canonical single-table shape is accepted; key columns become NOT NULL.
CREATE TABLE t (pk text, sk text, item jsonb) USING ddb;
SELECT attname, attnotnull FROM pg_attribute
 WHERE attrelid = 't'::regclass AND attnum > 0 ORDER BY attnum;
SELECT ddb_check_table_shape('t');
SELECT count(*) FROM t;
DROP TABLE t;

-- A database whose encoding is not UTF-8 is refused: DynamoDB orders and
-- sizes strings by their UTF-8 bytes.
SET client_min_messages = warning;
CREATE DATABASE ddb_latin1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0;
RESET client_min_messages;
\set home :DBNAME
\c ddb_latin1
CREATE EXTENSION ddb;
SELECT count(*) AS ddb_objects FROM pg_proc WHERE proname LIKE 'ddb\_%';
\c :home
DROP DATABASE ddb_latin1;
