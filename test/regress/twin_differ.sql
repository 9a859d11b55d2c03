\set ECHO none
-- twin_differ(a, b): the number of rows that one of the tables a and b
-- holds and the other does not (EXCEPT ALL both ways), 0 when they hold
-- the same rows: the oracle of the files that keep a ddb table and a heap
-- twin through the same writes (sql/leaf_prefix.sql,
-- leaf_prefix_shapes.sql).  Included with \i from the tree's top, as
-- wait_no_xmin.sql; the caller drops the function.
CREATE FUNCTION twin_differ(a regclass, b regclass) RETURNS bigint
LANGUAGE plpgsql AS $f$
DECLARE
  n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM ((SELECT * FROM %s EXCEPT ALL SELECT * FROM %s) '
                 'UNION ALL (SELECT * FROM %s EXCEPT ALL SELECT * FROM %s)) d', a, b, b, a)
    INTO n;
  RETURN n;
END
$f$;
\set ECHO all
