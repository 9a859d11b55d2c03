-- The 25 items of a batch as 25 single ddb_put_item calls in one
-- transaction: what a client without BatchWriteItem sends.
\set p random(0, :P - 1)
\set n :n + 1
BEGIN;
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#1') || bench_item(:n * 25 + 1));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#2') || bench_item(:n * 25 + 2));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#3') || bench_item(:n * 25 + 3));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#4') || bench_item(:n * 25 + 4));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#5') || bench_item(:n * 25 + 5));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#6') || bench_item(:n * 25 + 6));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#7') || bench_item(:n * 25 + 7));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#8') || bench_item(:n * 25 + 8));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#9') || bench_item(:n * 25 + 9));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#10') || bench_item(:n * 25 + 10));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#11') || bench_item(:n * 25 + 11));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#12') || bench_item(:n * 25 + 12));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#13') || bench_item(:n * 25 + 13));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#14') || bench_item(:n * 25 + 14));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#15') || bench_item(:n * 25 + 15));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#16') || bench_item(:n * 25 + 16));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#17') || bench_item(:n * 25 + 17));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#18') || bench_item(:n * 25 + 18));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#19') || bench_item(:n * 25 + 19));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#20') || bench_item(:n * 25 + 20));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#21') || bench_item(:n * 25 + 21));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#22') || bench_item(:n * 25 + 22));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#23') || bench_item(:n * 25 + 23));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#24') || bench_item(:n * 25 + 24));
SELECT ddb_put_item('@TBL@', jsonb_build_object('PK', bench_pk(:p), 'SK', 'BATCH#' || :run || '#' || :client_id || '#' || :n || '#25') || bench_item(:n * 25 + 25));
COMMIT;
