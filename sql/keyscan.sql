-- Plain SQL on a ddb table uses the tree: the DdbKeyScan custom scan.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

-- 100 customers with 100 orders each and a profile item.  The sort key is
-- declared COLLATE "C": ddb orders text by its UTF-8 bytes, which is the
-- "C" collation's order, so ORDER BY "SK" and ranges on "SK" can use it.
CREATE TABLE ks_orders ("PK" text, "SK" text COLLATE "C", item jsonb) USING ddb;
INSERT INTO ks_orders
SELECT 'CUST#' || (i % 100), 'ORDER#' || lpad((i / 100)::text, 4, '0'),
       jsonb_build_object('n', i)
FROM generate_series(0, 9999) i;
INSERT INTO ks_orders
SELECT 'CUST#' || c, 'PROFILE', jsonb_build_object('name', 'customer ' || c)
FROM generate_series(0, 99) c;
ANALYZE ks_orders;

-- A fresh session whose first statement plans a key query: the library is
-- loaded by the table AM handler while the query is parsed, which installs
-- the planner hook before planning starts (no shared_preload_libraries).
\c
EXPLAIN (COSTS OFF) SELECT * FROM ks_orders WHERE "PK" = 'CUST#42' AND "SK" = 'PROFILE';

-- ks_check(query): the plan uses DdbKeyScan, and the rows (in output order)
-- are those of the same query with ddb.enable_key_scan = off, which then
-- plans no DdbKeyScan.
CREATE FUNCTION ks_rows(q text) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE r text[];
BEGIN
  EXECUTE format('SELECT coalesce(array_agg(x::text), ''{}'') FROM (%s) x', q) INTO r;
  RETURN r;
END $$;
CREATE FUNCTION ks_uses_keyscan(q text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF l LIKE '%DdbKeyScan%' THEN RETURN true; END IF;
  END LOOP;
  RETURN false;
END $$;
CREATE FUNCTION ks_check(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE a text[]; b text[]; ua bool; ub bool;
BEGIN
  PERFORM set_config('ddb.enable_key_scan', 'on', true);
  ua := ks_uses_keyscan(q);
  a := ks_rows(q);
  PERFORM set_config('ddb.enable_key_scan', 'off', true);
  ub := ks_uses_keyscan(q);
  b := ks_rows(q);
  PERFORM set_config('ddb.enable_key_scan', 'on', true);
  RETURN format('%s, %s rows, %s', CASE WHEN ua AND NOT ub THEN 'key scan' ELSE 'NO KEY SCAN' END,
                coalesce(array_length(a, 1), 0),
                CASE WHEN a = b THEN 'same as seq scan' ELSE 'DIFFERENT: ' || a::text || ' vs ' || b::text END);
END $$;

-- Point: every key column pinned.
EXPLAIN (COSTS OFF) SELECT * FROM ks_orders WHERE "PK" = 'CUST#42' AND "SK" = 'PROFILE';
SELECT * FROM ks_orders WHERE "PK" = 'CUST#42' AND "SK" = 'PROFILE';
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#42' AND "SK" = 'PROFILE'$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#42' AND "SK" = 'NOPE'$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'NOPE' AND "SK" = 'PROFILE'$$);

-- Partition key only: the whole partition, in sort-key order.
EXPLAIN (COSTS OFF) SELECT * FROM ks_orders WHERE "PK" = 'CUST#7';
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7'$$);
-- The key on either side of "=", and an expression that folds to a constant.
EXPLAIN (COSTS OFF) SELECT * FROM ks_orders WHERE 'CUST#7' = "PK";
SELECT ks_check($$SELECT * FROM ks_orders WHERE 'CUST#7' = "PK"$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#' || 7$$);

-- Sort key ranges: >, >=, <, <=, BETWEEN (two clauses), both bounds, the
-- constant on the left, and bounds that leave nothing.
EXPLAIN (COSTS OFF) SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" >= 'ORDER#0095';
SELECT "PK", "SK" FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" >= 'ORDER#0095';
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" >= 'ORDER#0095'$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" > 'ORDER#0095'$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" < 'ORDER#0003'$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" <= 'ORDER#0003'$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND 'ORDER#0003' >= "SK"$$);
EXPLAIN (COSTS OFF) SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" BETWEEN 'ORDER#0010' AND 'ORDER#0012';
SELECT "PK", "SK" FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" BETWEEN 'ORDER#0010' AND 'ORDER#0012';
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" BETWEEN 'ORDER#0010' AND 'ORDER#0012'$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" > 'ORDER#0010' AND "SK" < 'ORDER#0011'$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" > 'ORDER#0012' AND "SK" < 'ORDER#0010'$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" > 'ORDER#0010' AND "SK" > 'ORDER#0090' AND "SK" < 'ORDER#0095' AND "SK" <= 'ORDER#0099'$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" >= 'ORDER#0010' AND "SK" <= 'ORDER#0010'$$);
-- Bounds past the partition's last item or below its first.
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" > 'ZZZ'$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" < 'A'$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" < ''$$);

-- Prefix: LIKE 'p%' and starts_with / ^@ on a text sort key.  The rest of
-- the pattern is still checked by the filter.
EXPLAIN (COSTS OFF) SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" LIKE 'ORDER#%';
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" LIKE 'ORDER#%'$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" LIKE 'ORDER#009%'$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" LIKE 'ORDER#00_5'$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" LIKE '%5'$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" LIKE 'PROFILE'$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" LIKE 'ORDER\#0001%'$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" LIKE 'ORDER!#0001%' ESCAPE '!'$$);
EXPLAIN (COSTS OFF) SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND starts_with("SK", 'ORDER#002');
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND starts_with("SK", 'ORDER#002')$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" ^@ 'ORDER#003'$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" LIKE 'ORDER#%' AND "SK" < 'ORDER#0002'$$);

-- Order: ascending needs no Sort, and ORDER BY ... DESC LIMIT n reads the
-- range backward (newest first) without a Sort either.
EXPLAIN (COSTS OFF) SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' ORDER BY "SK";
EXPLAIN (COSTS OFF)
SELECT * FROM ks_orders WHERE "PK" = 'CUST#42' AND "SK" >= 'ORDER#0090' ORDER BY "SK" DESC LIMIT 3;
SELECT "PK", "SK" FROM ks_orders WHERE "PK" = 'CUST#42' AND "SK" >= 'ORDER#0090' ORDER BY "SK" DESC LIMIT 3;
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#42' AND "SK" >= 'ORDER#0090' ORDER BY "SK" DESC LIMIT 3$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#42' AND "SK" < 'ORDER#0090' ORDER BY "SK" DESC$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#42' ORDER BY "SK" DESC LIMIT 1$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#42' ORDER BY "SK" LIMIT 2$$);

-- No usable key: Seq Scan.  Sort key alone, partition key range or
-- expression, key compared with another column, a volatile value.
EXPLAIN (COSTS OFF) SELECT * FROM ks_orders WHERE "SK" = 'PROFILE';
EXPLAIN (COSTS OFF) SELECT * FROM ks_orders WHERE "PK" > 'CUST#98';
EXPLAIN (COSTS OFF) SELECT * FROM ks_orders WHERE lower("PK") = 'cust#7';
EXPLAIN (COSTS OFF) SELECT * FROM ks_orders WHERE "PK" = "SK";
EXPLAIN (COSTS OFF) SELECT * FROM ks_orders WHERE "PK" = 'CUST#' || floor(random() * 0)::int;
EXPLAIN (COSTS OFF) SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' OR "PK" = 'CUST#8';
-- The switch.
SET ddb.enable_key_scan = off;
EXPLAIN (COSTS OFF) SELECT * FROM ks_orders WHERE "PK" = 'CUST#7';
RESET ddb.enable_key_scan;
SHOW ddb.enable_key_scan;

-- IN lists and = ANY: one range per distinct partition, read in key order
-- (the tree's hash order, as a seq scan returns them); no pathkeys, since
-- the output is not in sort-key order across partitions.
EXPLAIN (COSTS OFF) SELECT * FROM ks_orders WHERE "PK" IN ('CUST#1', 'CUST#2', 'CUST#1');
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" IN ('CUST#1', 'CUST#2', 'CUST#1', 'NOPE', NULL)$$);
EXPLAIN (COSTS OFF)
SELECT * FROM ks_orders WHERE "PK" = ANY (ARRAY['CUST#3', 'CUST#4']) AND "SK" > 'ORDER#0097';
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = ANY (ARRAY['CUST#3', 'CUST#4']) AND "SK" > 'ORDER#0097'$$);
EXPLAIN (COSTS OFF)
SELECT * FROM ks_orders WHERE "PK" IN ('CUST#3', 'CUST#4') ORDER BY "SK" LIMIT 3;
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" IN ('CUST#3', 'CUST#4') ORDER BY "SK", "PK" LIMIT 3$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = ANY ('{}'::text[])$$);

-- Joins: a nested loop probes the inner table by partition key, the
-- DdbKeyScan parameterized by the outer row.
CREATE TABLE ks_customers (id text, name text);
INSERT INTO ks_customers VALUES ('CUST#1', 'one'), ('CUST#2', 'two'), ('CUST#404', 'none');
ANALYZE ks_customers;
EXPLAIN (COSTS OFF)
SELECT c.name, o."SK" FROM ks_customers c JOIN ks_orders o ON o."PK" = c.id
WHERE o."SK" < 'ORDER#0002';
SELECT ks_check($$SELECT c.name, o."SK" FROM ks_customers c JOIN ks_orders o ON o."PK" = c.id WHERE o."SK" < 'ORDER#0002'$$);
EXPLAIN (COSTS OFF)
SELECT c.name, o."SK" FROM ks_customers c LEFT JOIN ks_orders o ON o."PK" = c.id AND o."SK" = 'PROFILE';
SELECT ks_check($$SELECT c.name, o."SK" FROM ks_customers c LEFT JOIN ks_orders o ON o."PK" = c.id AND o."SK" = 'PROFILE'$$);
-- LATERAL: newest two orders per customer.
EXPLAIN (COSTS OFF)
SELECT c.name, o."SK" FROM ks_customers c,
  LATERAL (SELECT "SK" FROM ks_orders WHERE "PK" = c.id ORDER BY "SK" DESC LIMIT 2) o;
SELECT ks_check($$SELECT c.name, o."SK" FROM ks_customers c, LATERAL (SELECT "SK" FROM ks_orders WHERE "PK" = c.id ORDER BY "SK" DESC LIMIT 2) o$$);
-- A join on the whole key probes each outer row's item alone: the sort
-- key is pinned from the join too ("Sort Key" in the plan), not filtered
-- out of the partition.  Also keys given as pairs (a batch of keys).
CREATE TABLE ks_wanted (pk text, sk text COLLATE "C");
INSERT INTO ks_wanted VALUES ('CUST#1', 'ORDER#0007'), ('CUST#2', 'PROFILE'),
  ('CUST#2', 'ORDER#9999'), ('CUST#404', 'PROFILE');
ANALYZE ks_wanted;
EXPLAIN (COSTS OFF)
SELECT w.pk, o.item FROM ks_wanted w JOIN ks_orders o ON o."PK" = w.pk AND o."SK" = w.sk;
SELECT ks_check($$SELECT w.pk, o.item FROM ks_wanted w JOIN ks_orders o ON o."PK" = w.pk AND o."SK" = w.sk$$);
EXPLAIN (COSTS OFF)
SELECT item FROM ks_orders
WHERE ("PK", "SK") IN (SELECT * FROM unnest('{CUST#3,CUST#4}'::text[], '{ORDER#0001,PROFILE}'::text[]));
SELECT ks_check($$SELECT item FROM ks_orders WHERE ("PK", "SK") IN (SELECT * FROM unnest('{CUST#3,CUST#4}'::text[], '{ORDER#0001,PROFILE}'::text[])) ORDER BY item::text$$);
-- A sort key joined to a different relation than the partition key's is
-- not pinned by the partition key's probe (it needs both outer rows).
SELECT ks_check($$SELECT c.name, o."SK" FROM ks_customers c, ks_wanted w, ks_orders o WHERE o."PK" = c.id AND o."SK" = w.sk AND w.pk = 'CUST#404'$$);
-- A constant partition key and a sort key joined to another table: one
-- probe per outer row, the sort key pinned by it (not a filter over the
-- partition).  (A partition of 101 items is cheaper to merge with four
-- outer rows, so the other joins are switched off to show the path.)
SET enable_mergejoin = off;
SET enable_hashjoin = off;
EXPLAIN (COSTS OFF)
SELECT w.sk, o.item FROM ks_wanted w JOIN ks_orders o ON o."SK" = w.sk WHERE o."PK" = 'CUST#2';
RESET enable_mergejoin;
RESET enable_hashjoin;
SELECT ks_check($$SELECT w.sk, o.item FROM ks_wanted w JOIN ks_orders o ON o."SK" = w.sk WHERE o."PK" = 'CUST#2' ORDER BY 1$$);
SELECT ks_check($$SELECT w.sk, o."PK" FROM ks_wanted w JOIN ks_orders o ON o."SK" = w.sk WHERE o."PK" IN ('CUST#1', 'CUST#2') ORDER BY 1, 2$$);
DROP TABLE ks_wanted;
-- A subquery's value as the key (an InitPlan Param).
EXPLAIN (COSTS OFF)
SELECT * FROM ks_orders WHERE "PK" = (SELECT id FROM ks_customers WHERE name = 'two') AND "SK" = 'PROFILE';
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = (SELECT id FROM ks_customers WHERE name = 'two') AND "SK" = 'PROFILE'$$);

-- Prepared statements with generic plans: the keys are Params, evaluated
-- when the scan starts.
SET plan_cache_mode = force_generic_plan;
PREPARE ks_q(text, text) AS
  SELECT "PK", "SK" FROM ks_orders WHERE "PK" = $1 AND "SK" >= $2 ORDER BY "SK" DESC LIMIT 2;
EXPLAIN (COSTS OFF) EXECUTE ks_q('CUST#9', 'ORDER#0050');
EXECUTE ks_q('CUST#9', 'ORDER#0050');
EXECUTE ks_q('CUST#10', 'ORDER#0050');
EXECUTE ks_q('CUST#10', NULL);
EXECUTE ks_q(NULL, 'ORDER#0050');
PREPARE ks_like(text, text) AS SELECT "SK" FROM ks_orders WHERE "PK" = $1 AND "SK" LIKE $2;
EXPLAIN (COSTS OFF) EXECUTE ks_like('CUST#9', 'ORDER#009%');
EXECUTE ks_like('CUST#9', 'ORDER#009%');
EXECUTE ks_like('CUST#9', 'ORDER#00_9');
EXECUTE ks_like('CUST#9', 'P%');
PREPARE ks_any(text[]) AS SELECT "PK", "SK" FROM ks_orders WHERE "PK" = ANY ($1) AND "SK" = 'PROFILE';
EXPLAIN (COSTS OFF) EXECUTE ks_any('{CUST#5,CUST#6}');
EXECUTE ks_any('{CUST#5,CUST#6,CUST#5,NULL}');
EXECUTE ks_any(NULL);
DEALLOCATE ks_q;
DEALLOCATE ks_like;
DEALLOCATE ks_any;
RESET plan_cache_mode;

-- UPDATE and DELETE through the key scan (the scan's slot carries the row
-- id), with RETURNING.
EXPLAIN (COSTS OFF)
UPDATE ks_orders SET item = item || '{"status": "shipped"}'
WHERE "PK" = 'CUST#7' AND "SK" BETWEEN 'ORDER#0001' AND 'ORDER#0002';
UPDATE ks_orders SET item = item || '{"status": "shipped"}'
WHERE "PK" = 'CUST#7' AND "SK" BETWEEN 'ORDER#0001' AND 'ORDER#0002'
RETURNING "PK", "SK", item;
SELECT "SK", item FROM ks_orders WHERE "PK" = 'CUST#7' AND item ? 'status';
EXPLAIN (COSTS OFF) DELETE FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" = 'ORDER#0099';
DELETE FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" = 'ORDER#0099' RETURNING "PK", "SK";
DELETE FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" = 'ORDER#0099' RETURNING "PK", "SK";
SELECT count(*) FROM ks_orders WHERE "PK" = 'CUST#7';
-- The tree is intact after writes through the key scan.
SELECT ddb_verify('ks_orders') IS NOT NULL AS verified;
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#7'$$);

-- SELECT ... FOR UPDATE through the key scan locks the rows it returns.
EXPLAIN (COSTS OFF) SELECT * FROM ks_orders WHERE "PK" = 'CUST#9' AND "SK" = 'PROFILE' FOR UPDATE;
BEGIN;
SELECT "PK", "SK" FROM ks_orders WHERE "PK" = 'CUST#9' AND "SK" >= 'ORDER#0098' FOR UPDATE;
SELECT "PK", "SK" FROM ks_orders WHERE "PK" = 'CUST#9' AND "SK" = 'PROFILE' FOR SHARE;
COMMIT;

-- Cursors.  A SCROLL cursor over a forward key scan moves both ways; the
-- scan restarts from the cursor's position when the direction changes.
BEGIN;
DECLARE ks_c SCROLL CURSOR FOR
  SELECT "SK" FROM ks_orders WHERE "PK" = 'CUST#5' AND "SK" < 'ORDER#0005';
FETCH 2 FROM ks_c;
FETCH BACKWARD 1 FROM ks_c;
FETCH BACKWARD 1 FROM ks_c;
FETCH FORWARD 3 FROM ks_c;
FETCH LAST FROM ks_c;
FETCH BACKWARD 2 FROM ks_c;
FETCH FORWARD 10 FROM ks_c;
FETCH BACKWARD 10 FROM ks_c;
FETCH ABSOLUTE 3 FROM ks_c;
FETCH RELATIVE -1 FROM ks_c;
CLOSE ks_c;
-- A backward plan (ORDER BY DESC) run backward reads the range forward.
DECLARE ks_d SCROLL CURSOR FOR
  SELECT "SK" FROM ks_orders WHERE "PK" = 'CUST#5' AND "SK" BETWEEN 'ORDER#0010' AND 'ORDER#0014'
  ORDER BY "SK" DESC;
FETCH 2 FROM ks_d;
FETCH BACKWARD 5 FROM ks_d;
FETCH ALL FROM ks_d;
FETCH BACKWARD 2 FROM ks_d;
CLOSE ks_d;
-- An IN-list scan moves back across partitions too.
DECLARE ks_e SCROLL CURSOR FOR
  SELECT "PK", "SK" FROM ks_orders WHERE "PK" IN ('CUST#5', 'CUST#6') AND "SK" > 'ORDER#0097';
FETCH ALL FROM ks_e;
FETCH BACKWARD 3 FROM ks_e;
FETCH FORWARD 1 FROM ks_e;
CLOSE ks_e;
-- WHERE CURRENT OF updates the row under a key-scan cursor.
DECLARE ks_f CURSOR FOR
  SELECT "SK" FROM ks_orders WHERE "PK" = 'CUST#5' AND "SK" >= 'ORDER#0097' FOR UPDATE;
FETCH 2 FROM ks_f;
UPDATE ks_orders SET item = '{"touched": true}' WHERE CURRENT OF ks_f RETURNING "PK", "SK", item;
DELETE FROM ks_orders WHERE CURRENT OF ks_f RETURNING "PK", "SK";
CLOSE ks_f;
COMMIT;
SELECT "SK", item FROM ks_orders WHERE "PK" = 'CUST#5' AND "SK" >= 'ORDER#0097';

-- System columns through a key scan: ctid and tableoid are fields of the
-- scan's slot; xmin, cmin and xmax only the version's heap tuple has, so a
-- scan that reads them (in its output or its filter) keeps that tuple.
SELECT ks_check($$SELECT "SK", ctid, tableoid::regclass, xmin, cmin, xmax FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" >= 'ORDER#0098'$$);
SELECT ks_check($$SELECT "SK" FROM ks_orders WHERE "PK" = 'CUST#7' AND xmax = '0' AND cmin::text = '0' AND "SK" > 'ORDER#0097'$$);
SELECT ks_check($$SELECT "SK", ks_orders FROM ks_orders WHERE "PK" = 'CUST#7' AND tableoid = 'ks_orders'::regclass AND "SK" > 'ORDER#0097'$$);

-- The "=" key clauses are the range itself, not re-checked row by row (the
-- Filter has only the rest); pk = ANY stays in the Filter.
EXPLAIN (COSTS OFF) SELECT * FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" = 'PROFILE' AND item ? 'name';
EXPLAIN (COSTS OFF) SELECT * FROM ks_orders WHERE "PK" IN ('CUST#7', 'CUST#8') AND "SK" = 'PROFILE';

-- Numeric keys: "=" compares values, not spellings (1.0 = 1); NaN and
-- infinities are never stored keys, so they pin nothing and bound everything.
CREATE TABLE ks_num (n numeric, m numeric, doc jsonb) USING ddb;
INSERT INTO ks_num SELECT i % 10, (i / 10) * 0.5 - 20, '{}' FROM generate_series(0, 999) i;
ANALYZE ks_num;
EXPLAIN (COSTS OFF) SELECT * FROM ks_num WHERE n = 3 AND m >= 1.5 ORDER BY m DESC LIMIT 2;
SELECT n, m FROM ks_num WHERE n = 3.0 AND m >= 1.5 ORDER BY m DESC LIMIT 2;
SELECT ks_check($$SELECT * FROM ks_num WHERE n = 3 AND m >= 1.5 ORDER BY m DESC LIMIT 2$$);
SELECT ks_check($$SELECT * FROM ks_num WHERE n = 3 AND m BETWEEN -1 AND 1.0$$);
SELECT ks_check($$SELECT * FROM ks_num WHERE n = 3 AND m > -0.5 AND m < 0.5$$);
SELECT ks_check($$SELECT * FROM ks_num WHERE n = 3 AND m = -0$$);
SELECT ks_check($$SELECT * FROM ks_num WHERE n = 3 AND m < 'Infinity'$$);
SELECT ks_check($$SELECT * FROM ks_num WHERE n = 3 AND m > '-Infinity' AND m < -19$$);
SELECT ks_check($$SELECT * FROM ks_num WHERE n = 3 AND m > 'Infinity'$$);
SELECT ks_check($$SELECT * FROM ks_num WHERE n = 3 AND m < 'NaN' AND m >= 29$$);
SELECT ks_check($$SELECT * FROM ks_num WHERE n = 3 AND m >= 'NaN'$$);
SELECT ks_check($$SELECT * FROM ks_num WHERE n = 'NaN'$$);
SELECT ks_check($$SELECT * FROM ks_num WHERE n = 3 AND m < 1e40000 AND m > -1e40000 AND m >= 29$$);
SELECT ks_check($$SELECT * FROM ks_num WHERE n = 1e40000$$);
SELECT ks_check($$SELECT * FROM ks_num WHERE n = 3 AND m > 1e40000$$);
SELECT ks_check($$SELECT * FROM ks_num WHERE n IN (2, 2.0, 'Infinity', 4)$$);
SELECT ks_check($$SELECT * FROM ks_num WHERE n = 3 ORDER BY m LIMIT 3$$);

-- Bytea keys: byte order, shorter first; no prefix operators.
CREATE TABLE ks_bin (b bytea, c bytea, doc jsonb) USING ddb;
INSERT INTO ks_bin SELECT decode(lpad(to_hex(i % 4), 2, '0'), 'hex'),
       decode(repeat(lpad(to_hex(i / 4), 2, '0'), 1 + i % 3), 'hex'), '{}'
FROM generate_series(0, 1023) i;
ANALYZE ks_bin;
EXPLAIN (COSTS OFF) SELECT * FROM ks_bin WHERE b = '\x01' AND c > '\x00ff' ORDER BY c LIMIT 3;
SELECT b, c FROM ks_bin WHERE b = '\x01' AND c > '\x00ff' ORDER BY c LIMIT 3;
SELECT ks_check($$SELECT * FROM ks_bin WHERE b = '\x01' AND c > '\x00ff' ORDER BY c LIMIT 3$$);
SELECT ks_check($$SELECT * FROM ks_bin WHERE b = '\x02' AND c <= '\x0505' ORDER BY c DESC$$);
SELECT ks_check($$SELECT * FROM ks_bin WHERE b = '\x03' AND c = '\x7f7f7f'$$);
SELECT ks_check($$SELECT * FROM ks_bin WHERE b = '\x03' AND c >= '\xff'$$);

-- Two sort keys: "=" on the first narrows the range and the second takes
-- the range condition; pathkeys cover the sort keys after the pinned ones.
CREATE TABLE ks_multi (a text, b text COLLATE "C", c numeric, doc jsonb) USING ddb;
INSERT INTO ks_multi SELECT 'A' || (i % 3), 'B' || (i / 3 % 4), i, '{}' FROM generate_series(0, 599) i;
ANALYZE ks_multi;
EXPLAIN (COSTS OFF) SELECT * FROM ks_multi WHERE a = 'A1' AND b = 'B2' AND c >= 100 ORDER BY c DESC LIMIT 2;
SELECT ks_check($$SELECT * FROM ks_multi WHERE a = 'A1' AND b = 'B2' AND c >= 100 ORDER BY c DESC LIMIT 2$$);
SELECT ks_check($$SELECT * FROM ks_multi WHERE a = 'A1' AND b = 'B2' AND c = 301$$);
EXPLAIN (COSTS OFF) SELECT * FROM ks_multi WHERE a = 'A1' AND b >= 'B2' AND c < 10 ORDER BY b, c LIMIT 5;
SELECT ks_check($$SELECT * FROM ks_multi WHERE a = 'A1' AND b >= 'B2' AND c < 100 ORDER BY b, c LIMIT 5$$);
SELECT ks_check($$SELECT * FROM ks_multi WHERE a = 'A1' AND b > 'B2' ORDER BY b DESC, c DESC LIMIT 5$$);
SELECT ks_check($$SELECT * FROM ks_multi WHERE a = 'A1' AND c = 301$$);
-- The partition constant and the first sort key joined: one range per
-- outer row, the second sort key's bound inside it.
SELECT ks_check($$SELECT v.b, m.c FROM (VALUES ('B1' COLLATE "C"), ('B3'), ('B9')) v(b) JOIN ks_multi m ON m.b = v.b WHERE m.a = 'A1' AND m.c < 50 ORDER BY 1, 2$$);
-- A long array: 1000 values (an InitPlan Param), 150 partitions of which
-- 50 are absent, each partition read once.
SELECT ks_check($$SELECT "PK" FROM ks_orders WHERE "PK" = ANY ((SELECT array_agg('CUST#' || (i % 150)) FROM generate_series(1, 1000) i)::text[]) AND "SK" = 'PROFILE'$$);

-- Sort key = ANY inside one partition: one point range per distinct element,
-- in key order (NULL elements and missing keys match nothing).
EXPLAIN (COSTS OFF)
SELECT * FROM ks_orders WHERE "PK" = 'CUST#5' AND "SK" IN ('ORDER#0098', 'PROFILE', 'ORDER#0003', 'PROFILE');
SELECT "SK", item FROM ks_orders WHERE "PK" = 'CUST#5' AND "SK" IN ('ORDER#0098', 'PROFILE', 'ORDER#0003', 'PROFILE');
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#5' AND "SK" IN ('ORDER#0098', 'PROFILE', 'ORDER#0003', 'NOPE', NULL)$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#5' AND "SK" = ANY ('{}'::text[])$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'NOPE' AND "SK" = ANY (ARRAY['PROFILE'])$$);
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#5' AND "SK" = ANY (NULL::text[])$$);
-- Other conditions on the sort key stay in the filter.
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" = 'CUST#5' AND "SK" = ANY (ARRAY['ORDER#0001', 'ORDER#0002', 'PROFILE']) AND "SK" > 'ORDER#0001'$$);
-- One array per scan: with pk = ANY as well, the partitions are the ranges
-- and sk = ANY is a filter.
EXPLAIN (COSTS OFF)
SELECT * FROM ks_orders WHERE "PK" IN ('CUST#1', 'CUST#2') AND "SK" IN ('PROFILE', 'ORDER#0001');
SELECT ks_check($$SELECT * FROM ks_orders WHERE "PK" IN ('CUST#1', 'CUST#2') AND "SK" IN ('PROFILE', 'ORDER#0001')$$);
-- Numbers: 1.5 and 1.50 are one key; NaN, infinities and NULL match nothing.
EXPLAIN (COSTS OFF) SELECT * FROM ks_num WHERE n = 3 AND m = ANY (ARRAY[1.5, 1.50, -20]);
SELECT ks_check($$SELECT * FROM ks_num WHERE n = 3 AND m = ANY (ARRAY[1.5, 1.50, 'NaN', 'Infinity', '-Infinity', NULL, -20, 1e40000])$$);
-- Two sort keys: an array on the first, a range on the second, per element.
EXPLAIN (COSTS OFF) SELECT * FROM ks_multi WHERE a = 'A1' AND b = ANY (ARRAY['B2', 'B0']) AND c >= 500;
SELECT ks_check($$SELECT * FROM ks_multi WHERE a = 'A1' AND b = ANY (ARRAY['B2', 'B0', 'B9']) AND c >= 500$$);
-- A generic plan with the array as a parameter, and a join whose outer rows
-- give the partition key (the parameterized path takes the array too).
PREPARE ks_skany(text, text[]) AS SELECT "SK" FROM ks_orders WHERE "PK" = $1 AND "SK" = ANY ($2);
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE ks_skany('CUST#9', '{PROFILE,ORDER#0042}');
EXECUTE ks_skany('CUST#9', '{PROFILE,ORDER#0042,ORDER#0042,NULL}');
EXECUTE ks_skany('CUST#9', NULL);
RESET plan_cache_mode;
DEALLOCATE ks_skany;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
EXPLAIN (COSTS OFF)
SELECT c.id, o."SK" FROM ks_customers c JOIN ks_orders o
  ON o."PK" = c.id AND o."SK" = ANY (ARRAY['PROFILE', 'ORDER#0010']);
SELECT ks_check($$SELECT c.id, o."SK" FROM ks_customers c JOIN ks_orders o ON o."PK" = c.id AND o."SK" = ANY (ARRAY['PROFILE', 'ORDER#0010']) ORDER BY 1, 2$$);
RESET enable_hashjoin;
RESET enable_mergejoin;
-- A SCROLL cursor moves both ways over the ranges.
BEGIN;
DECLARE ks_g SCROLL CURSOR FOR
  SELECT "SK" FROM ks_orders WHERE "PK" = 'CUST#3' AND "SK" = ANY (ARRAY['ORDER#0007', 'ORDER#0005', 'PROFILE']);
FETCH 2 FROM ks_g;
FETCH BACKWARD 2 FROM ks_g;
FETCH ALL FROM ks_g;
FETCH BACKWARD ALL FROM ks_g;
COMMIT;

-- Text key columns that take the database's default collation are declared
-- COLLATE "C" when the table is created, whatever the database's locale,
-- so ranges and ORDER BY on the sort key use the key order with no Sort.
CREATE TABLE ks_default ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT attname, collname FROM pg_attribute a JOIN pg_collation c ON c.oid = a.attcollation
 WHERE attrelid = 'ks_default'::regclass AND attnum > 0 ORDER BY attnum;
INSERT INTO ks_default SELECT 'P', 'k' || i, '{}' FROM generate_series(1, 20) i;
EXPLAIN (COSTS OFF) SELECT * FROM ks_default WHERE "PK" = 'P' AND "SK" >= 'k5' ORDER BY "SK" DESC;
SELECT ks_check($$SELECT * FROM ks_default WHERE "PK" = 'P' AND "SK" >= 'k5' ORDER BY "SK" DESC$$);
-- CREATE TABLE AS too (the key columns come from the query).
CREATE TABLE ks_ctas USING ddb AS SELECT "PK", "SK", item FROM ks_default;
SELECT attname, collname FROM pg_attribute a JOIN pg_collation c ON c.oid = a.attcollation
 WHERE attrelid = 'ks_ctas'::regclass AND attnum > 0 ORDER BY attnum;
SELECT count(*) FROM ks_ctas WHERE "PK" = 'P' AND "SK" > 'k5';
DROP TABLE ks_default, ks_ctas;

-- A text sort key in a collation named explicitly keeps it (a NOTICE says
-- what that costs): "<" follows that collation, so only the partition is a
-- range and the comparison is a filter; ORDER BY "SK" sorts, ORDER BY "SK"
-- COLLATE "C" does not.  (ICU's root collation: present in every
-- PostgreSQL built with ICU, and not bytewise.)
CREATE TABLE ks_coll ("PK" text, "SK" text COLLATE "und-x-icu", item jsonb) USING ddb;
INSERT INTO ks_coll SELECT 'P', 'k' || i, '{}' FROM generate_series(1, 20) i;
EXPLAIN (COSTS OFF) SELECT * FROM ks_coll WHERE "PK" = 'P' AND "SK" >= 'k5';
SELECT ks_check($$SELECT * FROM ks_coll WHERE "PK" = 'P' AND "SK" >= 'k5'$$);
EXPLAIN (COSTS OFF) SELECT * FROM ks_coll WHERE "PK" = 'P' ORDER BY "SK";
EXPLAIN (COSTS OFF) SELECT * FROM ks_coll WHERE "PK" = 'P' ORDER BY "SK" COLLATE "C" DESC LIMIT 1;
SELECT ks_check($$SELECT * FROM ks_coll WHERE "PK" = 'P' ORDER BY "SK" COLLATE "C" DESC LIMIT 3$$);
-- LIKE prefixes do not depend on the collation's order.
EXPLAIN (COSTS OFF) SELECT * FROM ks_coll WHERE "PK" = 'P' AND "SK" LIKE 'k1%';
SELECT ks_check($$SELECT * FROM ks_coll WHERE "PK" = 'P' AND "SK" LIKE 'k1%'$$);

-- In a parallel worker (the plan is parallel safe, though ddb tables never
-- get partial paths): the worker loads the library and finds the scan's
-- methods by name.
SET force_parallel_mode = on;
EXPLAIN (COSTS OFF) SELECT "SK" FROM ks_orders WHERE "PK" = 'CUST#42' AND "SK" > 'ORDER#0097';
SELECT "SK" FROM ks_orders WHERE "PK" = 'CUST#42' AND "SK" > 'ORDER#0097';
SELECT c.name, o."SK" FROM ks_customers c JOIN ks_orders o ON o."PK" = c.id WHERE o."SK" < 'ORDER#0002';
RESET force_parallel_mode;

-- An empty table and an empty partition.
CREATE TABLE ks_empty ("PK" text, "SK" text, item jsonb) USING ddb;
SELECT * FROM ks_empty WHERE "PK" = 'x';
SELECT * FROM ks_empty WHERE "PK" = 'x' AND "SK" > 'a' ORDER BY "SK" COLLATE "C" DESC;

-- The cost of a partition query does not grow with the table: the shared
-- buffers touched reading one 100-item partition of a 10^4-item table and
-- of a 2*10^5-item table (same partition size) differ by a level of the
-- tree at most.
CREATE FUNCTION ks_buffers(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE l text; n int := 0;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF l ~ 'Buffers: shared' THEN
      n := coalesce((regexp_match(l, 'hit=(\d+)'))[1]::int, 0) +
           coalesce((regexp_match(l, 'read=(\d+)'))[1]::int, 0);
      RETURN n;		-- the first Buffers line is the top node's, children included
    END IF;
  END LOOP;
  RETURN n;
END $$;
CREATE TABLE ks_big ("PK" text, "SK" text, item jsonb) USING ddb;
INSERT INTO ks_big SELECT 'CUST#' || (i % 2000), 'ORDER#' || lpad((i / 2000)::text, 4, '0'), '{}'
FROM generate_series(0, 199999) i;
ANALYZE ks_big;
SELECT count(*) FROM ks_big WHERE "PK" = 'CUST#42';
SELECT count(*) FROM ks_orders WHERE "PK" = 'CUST#42';
SELECT ks_buffers($$SELECT count(*) FROM ks_big WHERE "PK" = 'CUST#42'$$) <=
       2 * ks_buffers($$SELECT count(*) FROM ks_orders WHERE "PK" = 'CUST#42'$$) + 5 AS flat,
       ks_buffers($$SELECT count(*) FROM ks_big WHERE "PK" = 'CUST#42'$$) < 20 AS few;
-- A seq scan reads the whole table.
SET ddb.enable_key_scan = off;
SELECT ks_buffers($$SELECT count(*) FROM ks_big WHERE "PK" = 'CUST#42'$$) > 1000 AS seq_reads_all;
RESET ddb.enable_key_scan;

-- An UPDATE or DELETE through a key scan looks for each row on the leaf
-- the scan read it from.  Here the statement's own new versions split that
-- leaf before it reaches the later rows, which have moved right: those are
-- found through the row-id map.
CREATE TABLE ks_grow ("PK" text, "SK" text COLLATE "C", item jsonb) USING ddb;
INSERT INTO ks_grow SELECT 'P', lpad(i::text, 4, '0'), '{}' FROM generate_series(1, 60) i;
SELECT (ddb_verify('ks_grow')->>'leaf_pages')::int AS leaves_before;
UPDATE ks_grow SET item = jsonb_build_object('pad', repeat('x', 500)) WHERE "PK" = 'P' AND "SK" >= '0001';
SELECT count(*), sum(length(item->>'pad')) FROM ks_grow WHERE "PK" = 'P';
SELECT (ddb_verify('ks_grow')->>'leaf_pages')::int > 1 AS split;
DELETE FROM ks_grow WHERE "PK" = 'P' AND "SK" > '0030';
SELECT count(*), min("SK"), max("SK") FROM ks_grow WHERE "PK" = 'P';
SELECT (ddb_verify('ks_grow')->>'live')::int AS live;

-- The scan decodes only the key columns its plan reads (the projection and
-- the filter); the others are walked over in the key, not decoded.  Each
-- subset of columns, whole-row references (which read every column), a
-- key column read only by the filter, and keys whose encoding escapes or
-- ends in the middle: bytea keys holding 0x00, numbers negative, zero and
-- positive, a middle sort key alone.
SELECT ks_check($$SELECT item FROM ks_orders WHERE "PK" = 'CUST#7' ORDER BY "SK"$$);
SELECT ks_check($$SELECT "PK" FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" >= 'ORDER#0090'$$);
SELECT ks_check($$SELECT "SK" FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" >= 'ORDER#0090'$$);
SELECT ks_check($$SELECT item->'n' FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" LIKE '%9'$$);
SELECT ks_check($$SELECT item FROM ks_orders WHERE "PK" = 'CUST#7' AND "PK" || "SK" LIKE '%PROFILE'$$);
SELECT ks_check($$SELECT o FROM ks_orders o WHERE "PK" = 'CUST#7' AND "SK" >= 'ORDER#0095'$$);
SELECT ks_check($$SELECT row_to_json(o)::text FROM ks_orders o WHERE "PK" = 'CUST#7' AND "SK" >= 'ORDER#0095'$$);
SELECT ks_check($$SELECT 1 FROM ks_orders WHERE "PK" = 'CUST#7' AND "SK" >= 'ORDER#0095'$$);
SELECT ks_check($$SELECT doc FROM ks_num WHERE n = 0 AND m < -18$$);
SELECT ks_check($$SELECT m FROM ks_num WHERE n = 0 AND m < -18$$);
SELECT ks_check($$SELECT n FROM ks_num WHERE n = 4 AND m > 28$$);
SELECT ks_check($$SELECT m, doc FROM ks_num WHERE n = 9 AND m BETWEEN -0.5 AND 0.5$$);
SELECT ks_check($$SELECT b FROM ks_bin WHERE b = '\x00' AND c < '\x0202'$$);
SELECT ks_check($$SELECT c FROM ks_bin WHERE b = '\x00' AND c < '\x0202'$$);
SELECT ks_check($$SELECT doc FROM ks_bin WHERE b = '\x01' AND c <= '\x0000'$$);
SELECT ks_check($$SELECT b FROM ks_multi WHERE a = 'A2' AND b = 'B1' AND c < 50$$);
SELECT ks_check($$SELECT c FROM ks_multi WHERE a = 'A2' AND b >= 'B3'$$);
SELECT ks_check($$SELECT a, c FROM ks_multi WHERE a = 'A0' AND c::int % 7 = 0$$);
-- The same through a SCROLL cursor moving both ways (its position is the
-- version's stored key) and a prepared statement's generic plan.
BEGIN;
DECLARE ks_item_cur SCROLL CURSOR FOR
  SELECT item FROM ks_orders WHERE "PK" = 'CUST#3' AND "SK" >= 'ORDER#0097';
FETCH 2 FROM ks_item_cur;
FETCH BACKWARD 1 FROM ks_item_cur;
FETCH ALL FROM ks_item_cur;
FETCH BACKWARD ALL FROM ks_item_cur;
COMMIT;
SET plan_cache_mode = force_generic_plan;
PREPARE ks_item_q(text) AS SELECT item FROM ks_orders WHERE "PK" = $1 ORDER BY "SK" DESC LIMIT 2;
EXECUTE ks_item_q('CUST#11');
EXECUTE ks_item_q('CUST#12');
DEALLOCATE ks_item_q;
RESET plan_cache_mode;

DROP TABLE ks_orders, ks_customers, ks_num, ks_bin, ks_multi, ks_coll, ks_empty, ks_big, ks_grow;
DROP FUNCTION ks_rows, ks_uses_keyscan, ks_check, ks_buffers;
