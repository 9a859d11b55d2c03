\set ECHO none
-- The steps of sql/leaf_prefix_long_rows.sql, for one shape of long keys:
-- a ddb table lpl and its heap twin lpl_heap written row by row through
-- the same writes, with partition keys of lpl.pkbase plus up to
-- lpl.pkspread bytes and sort keys under a stem of lpl.stem bytes
-- (settings the caller sets), lpl_check after every step.  Included with
-- \i from the tree's top; it drops what it makes.
\set ECHO all
CREATE TABLE lpl ("PK" text, "SK" text, item jsonb) USING ddb;
CREATE TABLE lpl_heap ("PK" text, "SK" text, item jsonb, PRIMARY KEY ("PK", "SK"));

-- one write to both
CREATE FUNCTION lpl_ins(p text, s text, it jsonb, how int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF how = 0 THEN
    INSERT INTO lpl VALUES (p, s, it);
  ELSE
    PERFORM ddb_put_item('lpl', it || jsonb_build_object('PK', p, 'SK', s));
  END IF;
  INSERT INTO lpl_heap VALUES (p, s, it);
END $$;

CREATE FUNCTION lpl_pk(p int) RETURNS text LANGUAGE sql STABLE AS
$$ SELECT lpad(p::text, current_setting('lpl.pkbase')::int + (p * 97) % current_setting('lpl.pkspread')::int, 'k') $$;

CREATE FUNCTION lpl_check(step text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
  v jsonb;
  d bigint;
  g bigint;
  bad int;
BEGIN
  v := ddb_verify('lpl');
  d := twin_differ('lpl', 'lpl_heap');
  SELECT count(*) INTO g FROM lpl_heap h
   WHERE ddb_get_item('lpl', jsonb_build_object('PK', h."PK", 'SK', h."SK"))
         IS DISTINCT FROM h.item || jsonb_build_object('PK', h."PK", 'SK', h."SK");
  SELECT count(*) FILTER (WHERE NOT ok) INTO bad FROM (
    SELECT twin_query_ok('lpl', 'lpl_heap', p, c, vals) AS ok
    FROM (SELECT DISTINCT "PK" AS p FROM lpl_heap ORDER BY 1 LIMIT 12) ps,
         (VALUES ('PK = :p', '{}'::jsonb),
                 ('PK = :p AND SK < :a', '{":a": "STEM"}'),
                 ('PK = :p AND SK >= :a', '{":a": "STEM/"}'),
                 ('PK = :p AND SK BETWEEN :a AND :b', jsonb_build_object(':a', 'B', ':b', 'STEM/' || repeat('z', 400) || '/0005'))) q(c, vals)) x;
  IF d <> 0 OR g <> 0 OR bad <> 0 THEN
    RAISE EXCEPTION 'step %: differ %, get wrong %, query wrong %', step, d, g, bad;
  END IF;
  IF (v ->> 'live')::bigint <> (SELECT count(*) FROM lpl_heap) THEN
    RAISE EXCEPTION 'step %: ddb_verify counts % live items, the twin holds %', step, v ->> 'live',
      (SELECT count(*) FROM lpl_heap);
  END IF;
  RETURN step || ': ok';
END $f$;

-- 1. 12 partitions interleaved, sort keys under the stem, attributes of 0-1,800 bytes
DO $$
BEGIN
  FOR i IN 1 .. 360 LOOP
    PERFORM lpl_ins(lpl_pk(i % 12), 'STEM/' || repeat('x', current_setting('lpl.stem')::int) || '/' || lpad(i::text, 5, '0'),
                  jsonb_build_object('n', i, 'pad', repeat('z', (i * 331) % 1800)), i % 2);
  END LOOP;
END $$;
SELECT lpl_check('1 interleaved');

-- 2. keys below the stem, one at a time, each partition
DO $$
BEGIN
  FOR i IN 1 .. 48 LOOP
    PERFORM lpl_ins(lpl_pk(i % 12), 'A' || lpad(i::text, 3, '0'), jsonb_build_object('a', i, 'pad', repeat('q', (i * 97) % 900)), i % 2);
  END LOOP;
END $$;
SELECT lpl_check('2 below stem');

-- 3. new partitions, one or two items each, long sort keys
DO $$
BEGIN
  FOR p IN 100 .. 180 LOOP
    PERFORM lpl_ins(lpl_pk(p), repeat('m', 900) || p, jsonb_build_object('p', p), p % 2);
    IF p % 3 = 0 THEN
      PERFORM lpl_ins(lpl_pk(p), repeat('m', 900) || p || 'b', jsonb_build_object('p', p, 'pad', repeat('y', 1500)), (p + 1) % 2);
    END IF;
  END LOOP;
END $$;
SELECT lpl_check('3 new partitions');
-- each leaf stores the long stem of its items once; the leaves at a
-- partition's end keep it in a copy beside a high key in the next one
SELECT (v ->> 'leaf_prefix_bytes')::float > 1000 AS prefixed, (v ->> 'leaf_prefix_copies')::int > 0 AS copied
FROM ddb_verify('lpl') v;


-- 3b. BatchWriteItem of 25 (runs that mix keys above, inside and below the stems,
-- new partitions), and COPY's row path of long keys
DO $$
DECLARE
  req jsonb;
BEGIN
  FOR b IN 0 .. 7 LOOP
    SELECT jsonb_build_object('lpl', jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item',
             jsonb_build_object('PK', p, 'SK', s, 'b', b, 'pad', repeat('b', (i * 71) % 1400))))))
      INTO req
      FROM (SELECT i, lpl_pk(CASE WHEN i % 5 = 4 THEN 300 + b * 25 + i ELSE (b + i) % 12 END) AS p,
                   CASE i % 3 WHEN 0 THEN 'STEM/' || repeat('x', current_setting('lpl.stem')::int) || '/' || lpad((b * 25 + i)::text, 5, '0') || 'b'
                              WHEN 1 THEN 'AB' || b || '.' || i ELSE 'STEM' || b || '.' || i END AS s
            FROM generate_series(0, 24) i) x;
    IF ddb_batch_write_item(req) -> 'UnprocessedItems' <> '{}' THEN
      RAISE EXCEPTION 'unprocessed';
    END IF;
    INSERT INTO lpl_heap SELECT r -> 'PutRequest' -> 'Item' ->> 'PK', r -> 'PutRequest' -> 'Item' ->> 'SK',
                               (r -> 'PutRequest' -> 'Item') - 'PK' - 'SK'
      FROM jsonb_array_elements(req -> 'lpl') r;
  END LOOP;
END $$;
SELECT lpl_check('3b batch');
SELECT format($a$awk -v stem=%s -v base=%s -v spread=%s 'function rep(c, n,  r, j) { r = ""; for (j = 0; j < n; j++) r = r c; return r }
BEGIN { for (i = 1; i <= 300; i++) { p = (i %% 4 == 0) ? 500 + i : i %% 12; pk = rep("k", base + (p * 97) %% spread - length(p "")) p;
  sk = (i %% 2 == 0) ? sprintf("STEM/%%s/%%05dc", rep("x", stem), i) : "AC" i;
  printf "%%s\t%%s\t{\"c\": %%d, \"pad\": \"%%s\"}\n", pk, sk, i, rep("c", (i * 89) %% 1700) } }'$a$,
  current_setting('lpl.stem'), current_setting('lpl.pkbase'), current_setting('lpl.pkspread')) AS copycmd \gset
COPY lpl FROM PROGRAM :'copycmd';
COPY lpl_heap FROM PROGRAM :'copycmd';
SELECT lpl_check('3c copy');

-- 4. keys inside the stem between existing ones, and keys just above it
DO $$
BEGIN
  FOR i IN 1 .. 120 LOOP
    PERFORM lpl_ins(lpl_pk(i % 12), 'STEM/' || repeat('x', current_setting('lpl.stem')::int) || '/' || lpad((i * 3)::text, 5, '0') || '.5',
                  jsonb_build_object('mid', i, 'pad', repeat('w', (i * 53) % 1200)), i % 2);
    IF i % 10 = 0 THEN
      PERFORM lpl_ins(lpl_pk(i % 12), 'STEM/' || repeat('x', current_setting('lpl.stem')::int - 1) || 'y' || i,
                    jsonb_build_object('hi', i), i % 2);
      PERFORM lpl_ins(lpl_pk(i % 12), 'STEM' || i, jsonb_build_object('lo', i), i % 2);
    END IF;
  END LOOP;
END $$;
SELECT lpl_check('4 inside and around the stem');

-- 5. updates that grow and shrink, row by row
DO $$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT "PK", "SK" FROM lpl_heap ORDER BY md5("SK" || length("PK")) LIMIT 250 LOOP
    UPDATE lpl SET item = item || jsonb_build_object('pad', repeat('u', (length(r."SK") * 7 + length(r."PK")) % 2200))
      WHERE "PK" = r."PK" AND "SK" = r."SK";
    UPDATE lpl_heap SET item = item || jsonb_build_object('pad', repeat('u', (length(r."SK") * 7 + length(r."PK")) % 2200))
      WHERE "PK" = r."PK" AND "SK" = r."SK";
  END LOOP;
END $$;
SELECT lpl_check('5 updates');

-- 6. the same keys updated many times (versions pile up on long-key leaves)
DO $$
BEGIN
  FOR k IN 1 .. 15 LOOP
    FOR p IN 0 .. 11 LOOP
      UPDATE lpl SET item = item || jsonb_build_object('k', k, 'pad', repeat('v', 200 + k * 90))
        WHERE "PK" = lpl_pk(p) AND "SK" = 'A' || lpad((p + 12)::text, 3, '0');
      UPDATE lpl_heap SET item = item || jsonb_build_object('k', k, 'pad', repeat('v', 200 + k * 90))
        WHERE "PK" = lpl_pk(p) AND "SK" = 'A' || lpad((p + 12)::text, 3, '0');
    END LOOP;
  END LOOP;
END $$;
SELECT lpl_check('6 hot updates');

-- 7. deletes: whole partitions and ranges, then VACUUM
DELETE FROM lpl WHERE "PK" IN (lpl_pk(3), lpl_pk(4)) OR ("PK" = lpl_pk(5) AND "SK" < 'STEM/' || repeat('x', current_setting('lpl.stem')::int) || '/00200');
DELETE FROM lpl_heap WHERE "PK" IN (lpl_pk(3), lpl_pk(4)) OR ("PK" = lpl_pk(5) AND "SK" < 'STEM/' || repeat('x', current_setting('lpl.stem')::int) || '/00200');
DELETE FROM lpl WHERE "PK" IN (SELECT lpl_pk(p) FROM generate_series(100, 180, 2) p);
DELETE FROM lpl_heap WHERE "PK" IN (SELECT lpl_pk(p) FROM generate_series(100, 180, 2) p);
SELECT lpl_check('7 deleted');
VACUUM lpl;
SELECT lpl_check('7 vacuumed');

-- 8. new keys into the emptied key ranges, below, inside and above the stems
DO $$
BEGIN
  FOR i IN 1 .. 150 LOOP
    PERFORM lpl_ins(lpl_pk(3 + i % 3), CASE i % 3 WHEN 0 THEN 'B' || i WHEN 1 THEN 'STEM/' || repeat('x', current_setting('lpl.stem')::int) || '/' || lpad(i::text, 5, '0') || 'r'
                                  ELSE 'Z' || repeat('t', 700) || i END,
                  jsonb_build_object('r', i, 'pad', repeat('r', (i * 211) % 1900)), i % 2);
  END LOOP;
  FOR p IN 200 .. 240 LOOP
    PERFORM lpl_ins(lpl_pk(p), 'S', jsonb_build_object('p', p), p % 2);
  END LOOP;
END $$;
SELECT lpl_check('8 refill');

-- 9. VACUUM FULL, then row-by-row writes on the rebuilt tree
VACUUM FULL lpl;
SELECT lpl_check('9 vacuum full');
DO $$
BEGIN
  FOR i IN 1 .. 200 LOOP
    PERFORM lpl_ins(lpl_pk(i % 20), CASE WHEN i % 4 = 0 THEN 'A' || i || 'x' ELSE 'STEM/' || repeat('x', current_setting('lpl.stem')::int) || '/' || lpad(i::text, 5, '0') || 'f' END,
                  jsonb_build_object('f', i, 'pad', repeat('f', (i * 173) % 2000)), i % 2);
  END LOOP;
END $$;
SELECT lpl_check('9 after rebuild');
UPDATE lpl SET item = item || '{"all": 1}';
UPDATE lpl_heap SET item = item || '{"all": 1}';
SELECT lpl_check('9 update all');
DELETE FROM lpl WHERE length("SK") > 300 AND md5("SK") < '8';
DELETE FROM lpl_heap WHERE length("SK") > 300 AND md5("SK") < '8';
VACUUM lpl;
SELECT lpl_check('10 final');

DROP TABLE lpl, lpl_heap;
DROP FUNCTION lpl_ins(text, text, jsonb, int), lpl_pk(int), lpl_check(text);
