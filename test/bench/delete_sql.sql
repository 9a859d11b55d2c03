-- DELETE of keys inserted for this run (see delete_api.sql).
\set n :n + 1
\set m 1 + permute(:n - 1, :K, :run)
\set p (:client_id * 7919 + :m) % :P
DELETE FROM @TBL@ WHERE "PK" = bench_pk(:p) AND "SK" = 'DEL#' || :run || '#' || :client_id || '#' || :m;
