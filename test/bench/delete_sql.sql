-- DELETE of keys inserted for this run (see delete_api.sql).
\set n :n + 1
\set p (:client_id * 7919 + :n) % :P
DELETE FROM @TBL@ WHERE "PK" = bench_pk(:p) AND "SK" = 'DEL#' || :run || '#' || :client_id || '#' || :n;
