-- DeleteItem through the API of keys inserted for this run (run.sh
-- pre-inserts n = 1..K per client; pgbench -t K, -D n=0).
\set n :n + 1
\set p (:client_id * 7919 + :n) % :P
SELECT ddb_delete_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'DEL#' || :run || '#' || :client_id || '#' || :n));
