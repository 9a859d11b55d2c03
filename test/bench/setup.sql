-- test/bench/setup.sql: the benchmark's data model, shared by the data
-- generator and the pgbench scripts, so that a key drawn by pgbench is a
-- key that was loaded.  Item i of N lives in partition i % P at position
-- i / P (0..99): PK 'CUST#<p>', SK 'ORDER#2025-MM-DD#nnnn', ascending in
-- position.  The functions are IMMUTABLE SQL over immutable operators, so
-- the planner inlines them: a pgbench Param becomes a key expression that
-- both the btree and ddb's key scan evaluate once per execution.
CREATE EXTENSION IF NOT EXISTS ddb;

CREATE FUNCTION bench_pk(p int) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN 'CUST#' || p::text;

CREATE FUNCTION bench_sk(s int) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN 'ORDER#2025-' || lpad((1 + s * 12 / 100)::text, 2, '0') || '-'
       || lpad((1 + s % 28)::text, 2, '0') || '#' || lpad(s::text, 4, '0');

-- ~150 bytes with the keys: status, total and a 90-character note.  The
-- total is trimmed as DynamoDB (and ddb, on every write) stores numbers, so
-- both sides store the same bytes and ddb's writes never rewrite an item.
-- STABLE like jsonb_build_object: an IMMUTABLE wrapper around a STABLE body
-- is not inlined, and a generic plan would call it through fmgr_sql.
CREATE FUNCTION bench_item(n bigint) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE
RETURN jsonb_build_object(
  'status', (ARRAY['PENDING', 'PAID', 'SHIPPED', 'DELIVERED'])[1 + n % 4],
  'total', trim_scale((n % 100000) / 100.0),
  'note', substr(md5(n::text) || md5((n + 1)::text) || md5((n + 2)::text), 1, 90));

-- Buffers (shared hit + read) that the top plan node touched for one
-- execution of q: what EXPLAIN (ANALYZE, BUFFERS) shows.
CREATE FUNCTION bench_buffers(q text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  j json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ' || q INTO j;
  RETURN (j -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::bigint
       + (j -> 0 -> 'Plan' ->> 'Shared Read Blocks')::bigint;
END
$$;

-- The rows (one jsonb column) query q returns, in order, as one array:
-- how run.sh compares the sides' results.
CREATE FUNCTION bench_rows(q text) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  r jsonb;
  out jsonb := '[]';
BEGIN
  FOR r IN EXECUTE q LOOP
    out := out || jsonb_build_array(r);
  END LOOP;
  RETURN out;
END
$$;

-- BatchGetItem's key sets, as a client holds them before it sends a batch:
-- set j (0..999) is the 100 keys k = 0..99 at partition (p + 7919 k) mod P
-- and position (s + 37 k) mod 100, with p = 7907 j mod P and s = 31 j mod
-- 100 (37 k mod 100 takes every value once, so the keys are distinct).
-- Each set is kept as the text a client sends: ddb's request document
-- (for the table bench_ddb; bench_batch_requests) and the heap's two text
-- arrays (bench_batch_keys, with keys, the Keys array, for the results
-- check).  Both are kept inline and uncompressed (a request fills most of
-- a page, hence two tables), so that fetching a set costs both sides alike
-- and little.
CREATE FUNCTION bench_batch_sets(P int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  DROP TABLE IF EXISTS bench_batch_keys, bench_batch_requests;
  CREATE TABLE bench_batch_keys (id int PRIMARY KEY, keys jsonb, pks text, sks text);
  CREATE TABLE bench_batch_requests (id int PRIMARY KEY, request text);
  ALTER TABLE bench_batch_keys ALTER pks SET STORAGE PLAIN, ALTER sks SET STORAGE PLAIN;
  ALTER TABLE bench_batch_requests ALTER request SET STORAGE PLAIN;
  INSERT INTO bench_batch_keys
  SELECT j, jsonb_agg(jsonb_build_object('PK', pk, 'SK', sk) ORDER BY k),
         array_agg(pk ORDER BY k)::text, array_agg(sk ORDER BY k)::text
  FROM (SELECT j, k, bench_pk(((j * 7907) % P + k * 7919) % P) pk, bench_sk(((j * 31) % 100 + k * 37) % 100) sk
        FROM generate_series(0, 999) j, generate_series(0, 99) k) s
  GROUP BY j;
  INSERT INTO bench_batch_requests
  SELECT id, jsonb_build_object('bench_ddb', jsonb_build_object('Keys', keys))::text FROM bench_batch_keys;
  ANALYZE bench_batch_keys, bench_batch_requests;
  -- BatchWriteItem's 1,000 batches of 25 new items, each in one partition,
  -- with '@T@' in their sort keys for the caller's unique tag: ddb's
  -- request text and the heap's three arrays of the same rows.
  DROP TABLE IF EXISTS bench_batch_put_requests, bench_batch_put_rows;
  CREATE TABLE bench_batch_put_requests (id int PRIMARY KEY, request text);
  CREATE TABLE bench_batch_put_rows (id int PRIMARY KEY, pks text, sks text, items text);
  ALTER TABLE bench_batch_put_requests ALTER request SET STORAGE PLAIN;
  ALTER TABLE bench_batch_put_rows ALTER pks SET STORAGE PLAIN, ALTER sks SET STORAGE PLAIN,
    ALTER items SET STORAGE PLAIN;
  INSERT INTO bench_batch_put_rows
  SELECT j, array_agg(pk ORDER BY i)::text, array_agg(sk ORDER BY i)::text, array_agg(item ORDER BY i)::text
  FROM (SELECT j, i, bench_pk((j * 7907) % P) pk, 'BATCH#@T@#' || i sk, bench_item(j * 25 + i) item
        FROM generate_series(0, 999) j, generate_series(1, 25) i) s
  GROUP BY j;
  INSERT INTO bench_batch_put_requests
  SELECT j, jsonb_build_object('bench_ddb', jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item',
           jsonb_build_object('PK', pk, 'SK', sk) || item)) ORDER BY i))::text
  FROM (SELECT j, i, bench_pk((j * 7907) % P) pk, 'BATCH#@T@#' || i sk, bench_item(j * 25 + i) item
        FROM generate_series(0, 999) j, generate_series(1, 25) i) s
  GROUP BY j;
  ANALYZE bench_batch_put_requests, bench_batch_put_rows;
  -- PutItem's 1,000 new items, item j in partition 7907 j mod P, with '@T@'
  -- in its sort key for the caller's unique tag: ddb's item text (keys
  -- included, as a DynamoDB client sends it) and the heap's row as three
  -- texts (key, sort key, item column).
  DROP TABLE IF EXISTS bench_put_items, bench_put_rows;
  CREATE TABLE bench_put_items (id int PRIMARY KEY, item text);
  CREATE TABLE bench_put_rows (id int PRIMARY KEY, pk text, sk text, item text);
  INSERT INTO bench_put_rows
  SELECT j, bench_pk((j * 7907) % P), 'NEW#@T@', bench_item(j)::text
  FROM generate_series(0, 999) j;
  INSERT INTO bench_put_items
  SELECT id, (jsonb_build_object('PK', pk, 'SK', sk) || item::jsonb)::text FROM bench_put_rows;
  ANALYZE bench_put_items, bench_put_rows;
END
$$;
