-- Upsert overwriting a random loaded key: the heap's PutItem.
\set p random(0, :P - 1)
\set s random(0, 99)
\set r random(0, 1000000)
INSERT INTO @TBL@ VALUES (bench_pk(:p), bench_sk(:s), bench_item(:r))
  ON CONFLICT ("PK", "SK") DO UPDATE SET item = EXCLUDED.item;
