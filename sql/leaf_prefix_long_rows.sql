-- Leaf prefixes of long keys written row by row (storage version 3,
-- ddb_page.h "Leaf prefix"), against a heap twin: partition keys of 1,500
-- to 2,047 bytes, sort keys under a long shared stem, keys below and just
-- above the stem (the leaf's prefix shrinks, re-laid in place or split
-- first when the longer keys no longer fit), new partitions whose hashes
-- fall among the others (copies of the prefix beside high keys in the next
-- partition, refused where the copy would make the high key longer than
-- the longest separator), BatchWriteItem and COPY's row path (runs that
-- stop at a key that shares less), updates that grow and shrink, a key
-- updated until its versions span leaves, deletes, VACUUM's unlinks,
-- refills of the emptied ranges, VACUUM FULL and row-by-row writes on the
-- rebuilt tree.  After every step (lpl_check): ddb_verify finds the tree
-- sound and as many live items as the twin holds, the two tables hold the
-- same rows, GetItem finds every key of the twin with its item, and Query
-- returns the twin's sort keys both ways under bounds below, at and above
-- the stem.  Two shapes: a 400-byte stem under 1,500-2,000-byte partition
-- keys, and keys near the 3,080-byte limit (a 990-byte stem under
-- 2,000-2,047-byte partition keys), where a leaf's prefix is most of every
-- key and a copy of it is most often refused.  With a CHECKS build every
-- page a write changes is also checked for order and for where its prefix
-- is kept.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
\i test/regress/twin_differ.sql
\i test/regress/twin_query_ok.sql
RESET client_min_messages;

SELECT set_config('lpl.stem', '400', false), set_config('lpl.pkbase', '1500', false),
       set_config('lpl.pkspread', '500', false);
\i test/regress/leaf_prefix_long_steps.sql

SELECT set_config('lpl.stem', '990', false), set_config('lpl.pkbase', '2000', false),
       set_config('lpl.pkspread', '48', false);
\i test/regress/leaf_prefix_long_steps.sql

DROP FUNCTION twin_query_ok(regclass, regclass, text, text, jsonb), twin_differ(regclass, regclass);
