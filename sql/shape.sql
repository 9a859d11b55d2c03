-- The table shape rule: partition key, optional sort keys, one trailing
-- jsonb item column; keys are text, numeric or bytea.  Each rejection's
-- hint names the fix for that mistake.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

-- Accepted shapes: simple key, composite key, every key type.
CREATE TABLE simple_key (id text, item jsonb) USING ddb;
CREATE TABLE composite ("PK" text NOT NULL, "SK" text NOT NULL, item jsonb NOT NULL) USING ddb;
CREATE TABLE numeric_keys (n numeric, m numeric, doc jsonb) USING ddb;
CREATE TABLE binary_keys (b bytea, doc jsonb) USING ddb;
SELECT ddb_check_table_shape('simple_key'), ddb_check_table_shape('composite'),
       ddb_check_table_shape('numeric_keys'), ddb_check_table_shape('binary_keys');

-- Rejected: no item column, item not last, wrong key types, too few columns.
CREATE TABLE bad1 (pk text, sk text) USING ddb;
CREATE TABLE bad2 (pk text, item jsonb, sk text) USING ddb;
CREATE TABLE bad3 (pk integer, item jsonb) USING ddb;
CREATE TABLE bad4 (pk varchar, item jsonb) USING ddb;
CREATE TABLE bad8 (pk text, created timestamptz, item jsonb) USING ddb;
CREATE TABLE bad5 (item jsonb) USING ddb;
CREATE TABLE bad6 (pk text, item json) USING ddb;
CREATE TABLE bad7 (k1 text, k2 text, k3 text, k4 text, k5 text, k6 text,
                   k7 text, k8 text, k9 text, item jsonb) USING ddb;
SELECT count(*) FROM pg_class WHERE relname LIKE 'bad_';

-- CREATE TABLE AS into ddb must produce the same shape.
CREATE TABLE ctas USING ddb AS SELECT 'a'::text AS pk, '{}'::jsonb AS item;
CREATE TABLE ctas_bad USING ddb AS SELECT 1 AS pk, '{}'::jsonb AS item;

-- ALTER TABLE cannot break the shape.
ALTER TABLE composite ADD COLUMN extra int;
ALTER TABLE composite DROP COLUMN item;
ALTER TABLE composite ALTER COLUMN "SK" TYPE integer USING 0;
SELECT ddb_check_table_shape('composite');

-- Nor can it change the key schema under stored items: dropping a key
-- column (the rest may still be a valid shape) or changing a key column's
-- type is refused before ALTER TABLE runs, and the items stay readable.
-- Renames and a text key's collation keep the stored encoding.
INSERT INTO composite VALUES ('p', 's', '{"a": 1}');
ALTER TABLE composite DROP COLUMN "SK";
ALTER TABLE composite DROP COLUMN IF EXISTS "SK";
ALTER TABLE composite ALTER COLUMN "SK" TYPE bytea USING convert_to("SK", 'UTF8');
ALTER TABLE numeric_keys ALTER COLUMN m TYPE text;
ALTER TABLE composite ALTER COLUMN "SK" TYPE text COLLATE "POSIX";
ALTER TABLE composite RENAME COLUMN "SK" TO "SortKey";
SELECT * FROM composite;
SELECT ddb_check_table_shape('composite'), ddb_verify('composite')->>'live' AS live;
-- A type modifier or a USING expression would rewrite (round, recompute)
-- the stored keys under the items: refused too, and a key column is
-- created without a modifier (SQL would round what the item functions
-- store as sent).
ALTER TABLE numeric_keys ALTER COLUMN m TYPE numeric(6,0);
ALTER TABLE numeric_keys ALTER COLUMN m TYPE numeric USING m * 2;
ALTER TABLE composite ALTER COLUMN "PK" TYPE text USING "PK" || 'zz';
CREATE TABLE rounded (pk text, sk numeric(4,1), item jsonb) USING ddb;
-- A key column is renamed only while no index, TTL or stream holds the
-- keys under its name: an index would find no key in items written after.
SELECT ddb_create_gsi('composite', 'ByA', 'a', 'N');
ALTER TABLE composite RENAME COLUMN "SortKey" TO "SK";
ALTER TABLE composite RENAME "PK" TO pk;
ALTER TABLE composite RENAME COLUMN item TO doc;
SELECT ddb_put_item('composite', '{"PK": "q", "SortKey": "s", "a": 2}');
SELECT ddb_verify_gsi('composite');
SELECT ddb_drop_gsi('composite', 'ByA');
ALTER TABLE composite RENAME COLUMN doc TO item;
-- (the index gone, its disabled trigger holds no keys: renames go again)
ALTER TABLE composite RENAME COLUMN "SortKey" TO "SK2";
ALTER TABLE composite RENAME COLUMN "SK2" TO "SortKey";
-- Nor to a name an item holds as an attribute, which the key would hide:
-- committed items, and this transaction's own.
ALTER TABLE composite RENAME COLUMN "SortKey" TO a;
BEGIN;
SELECT ddb_put_item('composite', '{"PK": "r", "SortKey": "s", "b": 3}');
ALTER TABLE composite RENAME COLUMN "PK" TO b;
ROLLBACK;
ALTER TABLE composite RENAME COLUMN "PK" TO b;
ALTER TABLE composite RENAME COLUMN b TO "PK";
SELECT * FROM composite ORDER BY 1, 2;

-- A generated column may read a text key, but then the key must be declared
-- COLLATE "C": PostgreSQL cannot change the collation of a column a
-- generated column uses, and the error says what to declare.
CREATE TABLE gen_key ("PK" text, "SK" text GENERATED ALWAYS AS ("PK" || '#meta') STORED, item jsonb) USING ddb;
CREATE TABLE gen_key ("PK" text, "SK" text, item jsonb GENERATED ALWAYS AS (('{"of": "' || "SK" || '"}')::jsonb) STORED) USING ddb;
CREATE TABLE gen_key ("PK" text COLLATE "C", "SK" text GENERATED ALWAYS AS ("PK" || '#meta') STORED, item jsonb) USING ddb;
INSERT INTO gen_key ("PK") VALUES ('a');
SELECT "PK", "SK", pg_typeof("SK"), item FROM gen_key;
SELECT attname, attnotnull, collname FROM pg_attribute JOIN pg_collation c ON c.oid = attcollation
  WHERE attrelid = 'gen_key'::regclass AND attnum > 0 ORDER BY attnum;
DROP TABLE gen_key;

-- ddb tables as partitions (or inheritance children): a text key cannot
-- inherit the default collation (the partition cannot make it "C"), which
-- the error says clearly; and the parent's ALTER TABLE may not drop or
-- retype their key columns either.
CREATE TABLE parted (pk text NOT NULL, sk text NOT NULL, item jsonb NOT NULL) PARTITION BY HASH (pk);
CREATE TABLE parted0 PARTITION OF parted FOR VALUES WITH (modulus 2, remainder 0) USING ddb;
DROP TABLE parted;
CREATE TABLE parted (pk text COLLATE "C" NOT NULL, sk text COLLATE "C" NOT NULL, item jsonb NOT NULL)
  PARTITION BY HASH (pk);
CREATE TABLE parted0 PARTITION OF parted FOR VALUES WITH (modulus 2, remainder 0) USING ddb;
CREATE TABLE parted1 PARTITION OF parted FOR VALUES WITH (modulus 2, remainder 1) USING ddb;
INSERT INTO parted SELECT 'p' || i, 's', '{}' FROM generate_series(1, 10) i;
ALTER TABLE parted DROP COLUMN sk;
ALTER TABLE parted ALTER COLUMN sk TYPE bytea USING convert_to(sk, 'UTF8');
SELECT count(*) FROM parted;
SELECT ddb_verify('parted0')->>'live' AS live0, ddb_verify('parted1')->>'live' AS live1;
DROP TABLE parted;

-- Heap tables are none of ddb's business.
CREATE TABLE plain (a int);
ALTER TABLE plain ADD COLUMN b int;

-- NULL keys are refused even if NOT NULL were dropped.
ALTER TABLE simple_key ALTER COLUMN id DROP NOT NULL;
SELECT attnotnull FROM pg_attribute WHERE attrelid = 'simple_key'::regclass AND attname = 'id';

-- Publications: logical decoding does not see ddb tables' changes, so
-- listing one is refused (and changes nothing); FOR ALL TABLES and TABLES
-- IN SCHEMA that take one in are allowed for their other tables, with a
-- warning naming it.  (CREATE PUBLICATION also warns when wal_level is
-- not logical.)
SET client_min_messages = error;
CREATE PUBLICATION pub_plain FOR TABLE plain;
RESET client_min_messages;
CREATE PUBLICATION pub_ddb FOR TABLE plain, simple_key;
SELECT count(*) AS pub_ddb FROM pg_publication WHERE pubname = 'pub_ddb';
ALTER PUBLICATION pub_plain ADD TABLE composite;
ALTER PUBLICATION pub_plain SET TABLE plain, numeric_keys;
SELECT tablename FROM pg_publication_tables WHERE pubname = 'pub_plain';
CREATE SCHEMA pub_schema;
CREATE TABLE pub_schema.t ("PK" text, item jsonb) USING ddb;
CREATE TABLE pub_schema.h (a int);
ALTER PUBLICATION pub_plain ADD TABLES IN SCHEMA pub_schema;
SELECT tablename FROM pg_publication_tables WHERE pubname = 'pub_plain' ORDER BY 1;
-- (a warning names ten of them)
CREATE TABLE pub_schema.t2 ("PK" text, item jsonb) USING ddb;
CREATE TABLE pub_schema.t3 ("PK" text, item jsonb) USING ddb;
CREATE TABLE pub_schema.t4 ("PK" text, item jsonb) USING ddb;
CREATE TABLE pub_schema.t5 ("PK" text, item jsonb) USING ddb;
CREATE TABLE pub_schema.t6 ("PK" text, item jsonb) USING ddb;
CREATE TABLE pub_schema.t7 ("PK" text, item jsonb) USING ddb;
CREATE TABLE pub_schema.t8 ("PK" text, item jsonb) USING ddb;
CREATE TABLE pub_schema.t9 ("PK" text, item jsonb) USING ddb;
CREATE TABLE pub_schema.u1 ("PK" text, item jsonb) USING ddb;
CREATE TABLE pub_schema.u2 ("PK" text, item jsonb) USING ddb;
CREATE PUBLICATION pub_schema_all FOR TABLES IN SCHEMA pub_schema;
-- FOR ALL TABLES warns the same way, naming every ddb table of the
-- database (which depends on what the tests before left behind)
SET client_min_messages = error;
CREATE PUBLICATION pub_all FOR ALL TABLES;
RESET client_min_messages;
SELECT pubname, puballtables FROM pg_publication WHERE pubname IN ('pub_all', 'pub_schema_all') ORDER BY 1;
DROP PUBLICATION pub_plain, pub_all, pub_schema_all;
DROP SCHEMA pub_schema CASCADE;
-- A partitioned table with a ddb partition takes that partition in however
-- the publication lists it: the same warning, for ADD TABLE too and when
-- the publication publishes through the root (which is all that
-- pg_publication_tables shows then).
CREATE TABLE pub_parted ("PK" text COLLATE "C", item jsonb) PARTITION BY LIST ("PK");
CREATE TABLE pub_parted_d PARTITION OF pub_parted FOR VALUES IN ('d') USING ddb;
CREATE TABLE pub_parted_h PARTITION OF pub_parted FOR VALUES IN ('h');
CREATE PUBLICATION pub_root FOR TABLE pub_parted WITH (publish_via_partition_root = true);
SET client_min_messages = error;
CREATE PUBLICATION pub_leaf FOR TABLE plain;
RESET client_min_messages;
ALTER PUBLICATION pub_leaf ADD TABLE pub_parted;
SELECT pubname, tablename FROM pg_publication_tables WHERE pubname IN ('pub_root', 'pub_leaf') ORDER BY 1, 2;
DROP PUBLICATION pub_root, pub_leaf;
DROP TABLE pub_parted;

DROP TABLE simple_key, composite, numeric_keys, binary_keys, ctas, plain;
