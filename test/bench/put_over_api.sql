-- PutItem overwriting a random loaded key through the API.
\set p random(0, :P - 1)
\set s random(0, 99)
\set r random(0, 1000000)
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', bench_sk(:s)) || bench_item(:r));
