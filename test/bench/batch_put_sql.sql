-- The heap form of a 25-item batch: one INSERT of 25 rows.
\set p random(0, :P - 1)
\set n :n + 1
INSERT INTO @TBL@
SELECT bench_pk(:p), 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#' || i, bench_item(:n * 25 + i)
FROM generate_series(1, 25) i;
