-- GetItem through the API: one random loaded key.
\set p random(0, :P - 1)
\set s random(0, 99)
SELECT ddb_get_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', bench_sk(:s)));
