-- The heap form of a 25-item batch: one INSERT of 25 rows, sent as three
-- arrays (keys, tagged sort keys, items) fetched and tagged as
-- batch_put_api.sql fetches and tags its request.
\set j random(0, 999)
\set n :n + 1
SELECT pks, sks, items FROM bench_batch_put_rows WHERE id = :j \gset
INSERT INTO @TBL@
SELECT * FROM unnest(:pks::text[], replace(:sks, '@T@', :run || '#' || :client_id || '#' || :n)::text[], :items::jsonb[]);
