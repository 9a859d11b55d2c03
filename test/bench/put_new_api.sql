-- PutItem of a new key (into a random existing partition) through the API.
-- n counts this client's transactions (pgbench -D n=0); run tags the run.
\set p random(0, :P - 1)
\set n :n + 1
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'NEW#' || :run || '#' || :client_id || '#' || :n) || bench_item(:n));
