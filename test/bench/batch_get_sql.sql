-- The heap form of a 100-key BatchGetItem: the same 100 keys (key set :i
-- of bench_batch_keys, fetched as batch_get_api.sql fetches its request)
-- sent as two text arrays, SELECT ... WHERE (PK, SK) IN (their pairs):
-- one index probe per key.
\set i random(0, 999)
SELECT pks, sks FROM bench_batch_keys WHERE id = :i \gset
SELECT item FROM @TBL@ WHERE ("PK", "SK") IN (SELECT * FROM unnest(:pks::text[], :sks::text[]));
