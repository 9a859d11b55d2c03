-- Items with long keys under steady updates stay on a bounded number of
-- leaves between VACUUMs (ddb_tree.c, "Long keys").  With a 2048-byte
-- partition key and a 1024-byte sort key a leaf holds one version beside
-- a high key that falls among the key's versions, so each update splits a
-- leaf, and the key's dead versions lie on the leaves to the right, which
-- the writer's prune of its own leaf never saw: 20 keys updated 50 times
-- left 432 items on 420 leaves.  The split prunes that right sibling and,
-- once it is empty, splits into it: at most two leaves per key, through
-- SQL and the item API, and every read sees each key once.  (Storage
-- version 3's leaves store what their items' keys share once, here most
-- of each key, so a leaf holds about five of these versions, whose
-- attributes take 1,500 bytes: the versions stay within what 40 leaves
-- hold, 200, where 50 rounds without prunes would leave 1,020.)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;

-- wait_no_xmin(), before each round: a snapshot older than the round's
-- (autovacuum's ANALYZE, or an autovacuum worker starting up) would keep
-- its prunes from removing anything, and the versions they leave stay
-- until VACUUM.  The round commits after the wait: its prunes then
-- compute their horizon afresh, not one computed while the wait waited.
\i test/regress/wait_no_xmin.sql
RESET client_min_messages;

CREATE TABLE lk ("PK" text, "SK" text, item jsonb) USING ddb WITH (autovacuum_enabled = false);
INSERT INTO lk
  SELECT lpad(i::text, 2048, 'p'), lpad(i::text, 1024, 's'), jsonb_build_object('n', 0, 'pad', repeat('x', 1500))
  FROM generate_series(1, 20) i;
SELECT (v ->> 'items')::int AS items, (v ->> 'leaf_pages')::int <= 20 AS few_leaves
FROM ddb_verify('lk') v;
-- what a round may leave: at most two leaves per key, and the versions
-- they hold
CREATE TEMP VIEW lk_shape AS
SELECT (v ->> 'live')::int AS live, (v ->> 'items')::int <= 200 AS items_bounded,
       (v ->> 'leaf_pages')::int <= 40 AS leaves_bounded,
       (v ->> 'max_key_leaves')::int <= 2 AS key_on_two_leaves
FROM ddb_verify('lk') v;
CREATE TEMP VIEW lk_rows AS
SELECT count(*) AS rows, count(DISTINCT "PK") AS keys, min(item ->> 'n') AS n FROM lk;

-- 50 rounds of SQL UPDATEs, each round its own transaction
DO $$
BEGIN
  FOR r IN 1 .. 50 LOOP
    PERFORM wait_no_xmin();
    COMMIT;
    UPDATE lk SET item = jsonb_build_object('n', r, 'pad', repeat('x', 1500));
    COMMIT;
  END LOOP;
END $$;
SELECT * FROM lk_shape;
-- a full scan, forward and backward, and lookups see each key once
SELECT * FROM lk_rows;
SELECT count(*) AS rows FROM (SELECT "PK" FROM lk ORDER BY "PK" DESC, "SK" DESC) d;
SELECT count(*) AS found FROM generate_series(1, 20) i
WHERE ddb_get_item('lk', jsonb_build_object('PK', lpad(i::text, 2048, 'p'),
                                            'SK', lpad(i::text, 1024, 's'))) ->> 'n' = '50';

-- 50 rounds through the item API: UpdateItem, then PutItem replacing
DO $$
BEGIN
  FOR r IN 1 .. 50 LOOP
    PERFORM wait_no_xmin();
    COMMIT;
    PERFORM ddb_update_item('lk', jsonb_build_object('PK', lpad(i::text, 2048, 'p'),
                                                     'SK', lpad(i::text, 1024, 's')),
                            'SET n = :n', vals => jsonb_build_object(':n', 100 + r))
    FROM generate_series(1, 20) i;
    COMMIT;
  END LOOP;
  FOR r IN 1 .. 50 LOOP
    PERFORM wait_no_xmin();
    COMMIT;
    PERFORM ddb_put_item('lk', jsonb_build_object('PK', lpad(i::text, 2048, 'p'),
                                                  'SK', lpad(i::text, 1024, 's'), 'n', 200 + r,
                                                  'pad', repeat('x', 1500)))
    FROM generate_series(1, 20) i;
    COMMIT;
  END LOOP;
END $$;
SELECT * FROM lk_shape;
SELECT * FROM lk_rows;

-- VACUUM leaves the live versions alone
SELECT wait_no_xmin();
VACUUM lk;
SELECT (v ->> 'items')::int AS items, (v ->> 'live')::int AS live FROM ddb_verify('lk') v;

DROP VIEW lk_shape, lk_rows;
DROP TABLE lk;
DROP FUNCTION wait_no_xmin();
