-- UpdateItem: increment a counter on a random loaded key through the API.
\set p random(0, :P - 1)
\set s random(0, 99)
SELECT ddb_update_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', bench_sk(:s)), 'ADD n :' || 'one', vals => jsonb_build_object(':' || 'one', 1));
