-- Query with begins_with on the sort key through the API: one month (~8 items).
\set p random(0, :P - 1)
SELECT x FROM ddb_query('@TBL@', 'PK = :' || 'p AND begins_with(SK, :' || 'm)', jsonb_build_object(':' || 'p', bench_pk(:p), ':' || 'm', 'ORDER#2025-03')) x;
