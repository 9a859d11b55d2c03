-- Query 100 items backward in plain SQL.
\set p random(0, :P - 1)
SELECT item FROM @TBL@ WHERE "PK" = bench_pk(:p) ORDER BY "SK" DESC LIMIT 100;
