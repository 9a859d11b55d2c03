-- PutItem of a new key in sequence through the API: as put_new_api.sql,
-- but the sort key's tag grows with time (run, then this client's
-- transaction count, zero-padded, then the client), as a sort key of a
-- timestamp or a sequence number does, so that each partition grows at one
-- point: after its earlier new keys, before its loaded "ORDER#" items.
-- (put_new's tags, unpadded, land at scattered places in the partition.)
\set j random(0, 999)
\set n :n + 1
SELECT item FROM bench_put_items WHERE id = :j \gset
SELECT ddb_put_item('@TBL@', replace(:item, '@T@', lpad(:run::text, 4, '0') || '#' || lpad(:n::text, 10, '0') || '#' || :client_id)::jsonb);
