-- Global secondary index definitions checked as DynamoDB checks them, and
-- created over existing items the way DynamoDB builds them: items whose
-- index key has the wrong type or is empty are left out and counted as
-- indexing violations, later writes of such values are refused.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
CREATE SCHEMA api_indexes;
SET ddb.schema = api_indexes;
SET search_path = api_indexes, public;

SELECT ddb_create_table('shop', 'pk', 'S', 'sk', 'S')::text AS created;
SELECT count(ddb_put_item('shop', jsonb_build_object('pk', 'p', 'sk', 's' || i, 'status',
         CASE i WHEN 1 THEN to_jsonb(42) WHEN 2 THEN to_jsonb(''::text) ELSE to_jsonb('OPEN'::text) END)))
FROM generate_series(1, 5) i;

-- two of five items have a bad index key: the index holds the other three
SELECT ddb_create_gsi('shop', 'ByStatus', 'status');
SELECT ddb_describe_table('shop') #> '{GlobalSecondaryIndexes,0,IndexingViolations}' AS violations;
SELECT count(*) AS entries FROM ddb_query('shop', '#s = :s', '{":s": "OPEN"}', '{"#s": "status"}',
                                          index_name => 'ByStatus');
SELECT ddb_verify_gsi('shop', 'ByStatus') -> 'indexes' -> 0 -> 'entries' AS verified_entries;
-- from now on such a write is refused
SELECT ddb_put_item('shop', '{"pk": "p", "sk": "s9", "status": 7}');

-- an attribute keys the table and its indexes with one type
SELECT ddb_create_gsi('shop', 'BySk', 'sk', 'N');
SELECT ddb_create_gsi('shop', 'ByStatus2', 'status', 'N');
-- the same index name again
SELECT ddb_create_gsi('shop', 'ByStatus', 'other');
-- NonKeyAttributes: no repeats, names of at most 255 bytes, at most 100 over all indexes
SELECT ddb_create_gsi('shop', 'Inc', 'x', projection => 'INCLUDE', non_key_attributes => '{a,b,a}');
SELECT ddb_create_gsi('shop', 'Inc', 'x', projection => 'INCLUDE',
                      non_key_attributes => ARRAY[repeat('n', 256)]);
SELECT ddb_create_gsi('shop', 'Inc' || i, 'x' || i, projection => 'INCLUDE',
                      non_key_attributes => (SELECT array_agg('i' || i || '_' || j) FROM generate_series(1, 20) j))
FROM generate_series(1, 5) i;
SELECT ddb_create_gsi('shop', 'Inc6', 'x6', projection => 'INCLUDE', non_key_attributes => '{one_more}');

-- index key attribute names up to 255 bytes work (hash-suffixed columns)
SELECT ddb_create_table('wide', 'id')::text AS wide;
SELECT ddb_put_item('wide', jsonb_build_object('id', '1', repeat('g', 255), 'G'));
SELECT ddb_create_gsi('wide', 'ByLong', repeat('g', 255));
SELECT i ? repeat('g', 255) AS long_key_returned
FROM ddb_query('wide', '#g = :g', '{":g": "G"}', jsonb_build_object('#g', repeat('g', 255)),
               index_name => 'ByLong') i;
SELECT ddb_describe_table('wide') #>> '{GlobalSecondaryIndexes,0,KeySchema,0,AttributeName}' = repeat('g', 255) AS described;

-- leave no index tables behind for other tests
DROP SCHEMA api_indexes CASCADE;
