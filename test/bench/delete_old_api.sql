-- DeleteItem through the API of items of the loaded set, spread over the
-- table as they were loaded (run.sh puts them back after the run): item
-- j of partition p, K per client, no key twice in a run (see
-- delete_old_keys in run.sh).
\set n :n + 1
\set p (:client_id * 7919 + :n) % :P
\set j (:n / :P + :run * 13 + :client_id * 31) % 100
SELECT ddb_delete_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', bench_sk(:j)));
