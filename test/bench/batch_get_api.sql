-- BatchGetItem of 100 loaded keys through ddb_batch_get_item, the request
-- sent as one parameter, as a DynamoDB client sends it: the client holds
-- the request's text (key set :i of bench_batch_requests, see setup.sql; it
-- names the table bench_ddb) and the server parses it.  The heap form
-- (batch_get_sql.sql) fetches its text of the same keys the same way.
\set i random(0, 999)
SELECT request FROM bench_batch_requests WHERE id = :i \gset
SELECT ddb_batch_get_item(:request);
