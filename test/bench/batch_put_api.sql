-- BatchWriteItem of 25 new items (in one partition) through
-- ddb_batch_write_item, the request sent as one parameter, as a DynamoDB
-- client sends it: the client holds the request's text (batch :j of
-- bench_batch_put_requests, see setup.sql; it names the table bench_ddb)
-- with its sort keys tagged by run, client and batch so that every key is
-- new, and the server parses it.  The heap form (batch_put_sql.sql) fetches
-- and tags its rows of the same batch the same way.  n counts this
-- client's batches; run tags the run.
\set j random(0, 999)
\set n :n + 1
SELECT request FROM bench_batch_put_requests WHERE id = :j \gset
SELECT ddb_batch_write_item(replace(:request, '@T@', :run || '#' || :client_id || '#' || :n)::jsonb);
