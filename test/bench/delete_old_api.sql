-- DeleteItem through the API of items of the loaded set, spread over the
-- table as they were loaded (run.sh puts them back after the run): item
-- j of partition p, K per client, no key twice in a run (see
-- delete_old_keys in run.sh), in an order permute() draws (see
-- delete_api.sql: the load put item j of partitions p, p + 1, ... side by
-- side in the heap).
\set n :n + 1
\set m 1 + permute(:n - 1, :K, :run)
\set p (:client_id * 7919 + :m) % :P
\set j (:m / :P + :run * 13 + :client_id * 31) % 100
SELECT ddb_delete_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', bench_sk(:j)));
