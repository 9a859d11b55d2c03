-- BatchGetItem of 100 loaded keys through ddb_batch_get_item, the request
-- sent as one parameter, as a DynamoDB client sends it: the client holds
-- the request (key set :i of bench_batch_keys, see setup.sql) and the
-- server parses its JSON text.  The heap form (batch_get_sql.sql) fetches
-- its copy of the same keys the same way.
\set i random(0, 999)
SELECT jsonb_build_object('@TBL@', jsonb_build_object('Keys', keys))::text AS request FROM bench_batch_keys WHERE id = :i \gset
SELECT ddb_batch_get_item(:request);
