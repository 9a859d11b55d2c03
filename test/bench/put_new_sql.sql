-- INSERT of a new key (into an existing partition), the row sent as three
-- parameters (key, sort key, item column), fetched and tagged as
-- put_new_api.sql fetches and tags its item.
\set j random(0, 999)
\set n :n + 1
SELECT pk, sk, item FROM bench_put_rows WHERE id = :j \gset
INSERT INTO @TBL@ VALUES (:pk, replace(:sk, '@T@', :run || '#' || :client_id || '#' || :n), :item::jsonb);
