-- PutItem of a new key (into an existing partition) through the API, the
-- item sent as one parameter, as a DynamoDB client sends it: the client
-- holds the item's text (item :j of bench_put_items, see setup.sql) with
-- its sort key tagged by run, client and transaction so that every key is
-- new, and the server parses it.  The heap form (put_new_sql.sql) fetches
-- and tags its row of the same item the same way.  n counts this client's
-- transactions (pgbench -D n=0); run tags the run.
\set j random(0, 999)
\set n :n + 1
SELECT item FROM bench_put_items WHERE id = :j \gset
SELECT ddb_put_item('@TBL@', replace(:item, '@T@', :run || '#' || :client_id || '#' || :n)::jsonb);
