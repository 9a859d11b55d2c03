-- INSERT of a new key (into a random existing partition).
\set p random(0, :P - 1)
\set n :n + 1
INSERT INTO @TBL@ VALUES (bench_pk(:p), 'NEW#' || :run || '#' || :client_id || '#' || :n, bench_item(:n));
