-- Query with a sort-key prefix in plain SQL: one month (~8 items).
\set p random(0, :P - 1)
SELECT item FROM @TBL@ WHERE "PK" = bench_pk(:p) AND "SK" LIKE 'ORDER#2025-03%' ORDER BY "SK";
