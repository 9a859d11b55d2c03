-- The heap form of a 100-key BatchGetItem: SELECT ... WHERE (PK, SK) IN
-- (the 100 keys of batch_get_api.sql), one index probe per key.
\set p random(0, :P - 1)
\set s random(0, 99)
SELECT item FROM @TBL@ WHERE ("PK", "SK") IN (
  SELECT bench_pk((:p + k * 7919) % :P), bench_sk((:s + k * 37) % 100) FROM generate_series(0, 99) k);
