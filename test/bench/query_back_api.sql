-- Query 100 items backward through the API.
\set p random(0, :P - 1)
SELECT x FROM ddb_query('@TBL@', 'PK = :' || 'p', jsonb_build_object(':' || 'p', bench_pk(:p)), forward => false, "limit" => 100) x;
