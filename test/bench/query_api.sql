-- Query 100 items forward through the API (a whole partition).
\set p random(0, :P - 1)
SELECT x FROM ddb_query('@TBL@', 'PK = :' || 'p', jsonb_build_object(':' || 'p', bench_pk(:p)), "limit" => 100) x;
