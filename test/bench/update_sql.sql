-- Increment a counter in the item of a random loaded key in plain SQL.
\set p random(0, :P - 1)
\set s random(0, 99)
UPDATE @TBL@ SET item = jsonb_set(item, '{n}', to_jsonb(COALESCE((item ->> 'n')::numeric, 0) + 1))
  WHERE "PK" = bench_pk(:p) AND "SK" = bench_sk(:s);
