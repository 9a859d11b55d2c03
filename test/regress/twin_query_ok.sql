\set ECHO none
-- twin_query_ok(t, h, pk, cond, vals): does Query on the ddb table t, both
-- ways, with the key condition cond (PK = :p, SK's comparisons, BETWEEN
-- and begins_with) and the values vals (pk as :p), return the sort keys
-- the heap twin h holds in that range, in key order?  The oracle of the
-- files that keep a ddb table and a heap twin through the same writes
-- (sql/leaf_prefix.sql, leaf_prefix_rows.sql, leaf_prefix_long_rows.sql).
-- Included with \i from the tree's top, as twin_differ.sql; the caller
-- drops the function.
CREATE FUNCTION twin_query_ok(t regclass, h regclass, pk text, cond text, vals jsonb)
RETURNS bool LANGUAGE plpgsql AS $f$
DECLARE
  sql_cond text := replace(replace(replace(replace(replace(cond,
                     'begins_with(SK, :a)', 'starts_with(SK, :a)'),
                     'SK', '"SK" COLLATE "C"'), ':a', quote_nullable(vals ->> ':a')),
                     ':b', quote_nullable(vals ->> ':b')), 'PK = :p', '"PK" = ' || quote_literal(pk));
  want_f text[];
  want_b text[];
  got_f text[];
  got_b text[];
BEGIN
  EXECUTE format('SELECT array_agg("SK" ORDER BY "SK" COLLATE "C"), '
                 'array_agg("SK" ORDER BY "SK" COLLATE "C" DESC) FROM %s WHERE %s', h, sql_cond)
    INTO want_f, want_b;
  SELECT array_agg(i ->> 'SK') INTO got_f
    FROM ddb_query(t, cond, vals || jsonb_build_object(':p', pk)) i;
  SELECT array_agg(i ->> 'SK') INTO got_b
    FROM ddb_query(t, cond, vals || jsonb_build_object(':p', pk), forward => false) i;
  RETURN got_f IS NOT DISTINCT FROM want_f AND got_b IS NOT DISTINCT FROM want_b;
END
$f$;
\set ECHO all
