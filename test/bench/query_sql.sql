-- Query 100 items forward in plain SQL (C-collation database: bytewise order).
\set p random(0, :P - 1)
SELECT item FROM @TBL@ WHERE "PK" = bench_pk(:p) ORDER BY "SK" LIMIT 100;
