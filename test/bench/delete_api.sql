-- DeleteItem through the API of keys inserted for this run (run.sh
-- pre-inserts keys 1..K per client; pgbench -t K, -D n=0 -D K=K), in an
-- order permute() draws: taken in the order they were inserted, the heap
-- would find about 40 in a row on one page while ddb's are on as many
-- leaves, which measured the rows' order rather than the engines.
\set n :n + 1
\set m 1 + permute(:n - 1, :K, :run)
\set p (:client_id * 7919 + :m) % :P
SELECT ddb_delete_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'DEL#' || :run || '#' || :client_id || '#' || :m));
