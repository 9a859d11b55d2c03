-- INSERT of a new key in sequence (see put_seq_api.sql), the row sent as
-- three parameters as in put_new_sql.sql.
\set j random(0, 999)
\set n :n + 1
SELECT pk, sk, item FROM bench_put_rows WHERE id = :j \gset
INSERT INTO @TBL@ VALUES (:pk, replace(:sk, '@T@', lpad(:run::text, 4, '0') || '#' || lpad(:n::text, 10, '0') || '#' || :client_id), :item::jsonb);
