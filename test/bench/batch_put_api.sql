-- BatchWriteItem of 25 new items (in a random existing partition) through
-- ddb_batch_write_item.  n counts this client's batches; run tags the run.
\set p random(0, :P - 1)
\set n :n + 1
SELECT ddb_batch_write_item(jsonb_build_object('@TBL@', (
  SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item',
           jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#' || i)
           || bench_item(:n * 25 + i))))
  FROM generate_series(1, 25) i)));
