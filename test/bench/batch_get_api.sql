-- BatchGetItem of 100 loaded keys through ddb_batch_get_item: key k is
-- partition (p + 7919 k) mod P, position (s + 37 k) mod 100, so the 100
-- keys are distinct and spread over the partitions.
\set p random(0, :P - 1)
\set s random(0, 99)
SELECT ddb_batch_get_item(jsonb_build_object('@TBL@', jsonb_build_object('Keys', (
  SELECT jsonb_agg(jsonb_build_object('PK', bench_pk((:p + k * 7919) % :P), 'SK', bench_sk((:s + k * 37) % 100)))
  FROM generate_series(0, 99) k))));
