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
-- sizes strings by their UTF-8 bytes.  (SQL_ASCII, whose bytes ddb takes
-- as UTF-8, is accepted.)
SET client_min_messages = warning;
CREATE DATABASE ddb_latin1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0;
RESET client_min_messages;
\set home :DBNAME
\c ddb_latin1
CREATE EXTENSION ddb;
SELECT count(*) AS ddb_objects FROM pg_proc WHERE proname LIKE 'ddb\_%';
\c :home
DROP DATABASE ddb_latin1;
SET client_min_messages = warning;
CREATE DATABASE ddb_sql_ascii ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0;
RESET client_min_messages;
\c ddb_sql_ascii
SET client_min_messages = warning;
CREATE EXTENSION ddb;
RESET client_min_messages;
SELECT ddb_create_table('sql_ascii', 'pk', 'S', 'sk', 'S');
SELECT ddb_put_item('sql_ascii', jsonb_build_object('pk', 'p', 'sk', s)) FROM unnest(ARRAY['z', 'é', '€', 'a']) s;
SELECT ddb_query('sql_ascii', 'pk = :p', '{":p": "p"}');
\c :home
DROP DATABASE ddb_sql_ascii;
