-- GetItem in plain SQL: one random loaded key.
\set p random(0, :P - 1)
\set s random(0, 99)
SELECT item FROM @TBL@ WHERE "PK" = bench_pk(:p) AND "SK" = bench_sk(:s);
