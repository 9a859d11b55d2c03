-- DELETE of items of the loaded set (see delete_old_api.sql).
\set n :n + 1
\set m 1 + permute(:n - 1, :K, :run)
\set p (:client_id * 7919 + :m) % :P
\set j (:m / :P + :run * 13 + :client_id * 31) % 100
DELETE FROM @TBL@ WHERE "PK" = bench_pk(:p) AND "SK" = bench_sk(:j);
