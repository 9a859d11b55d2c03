-- PutItem picks its key attributes out of the item's pairs in the same
-- pass that builds the item column (ddb_item_split_key): the key, the
-- stored item and every key error must be what the search by name gave.
-- (The invariant-checks build also compares each PutItem's key and item
-- column with the old route.)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
CREATE SCHEMA put_item_key;
SET ddb.schema = put_item_key;
SET search_path = put_item_key, public;

SELECT ddb_create_table('pk_s', 'PK', 'S', 'SK', 'N') IS NOT NULL AS created;
SELECT ddb_create_table('pk_b', 'k', 'B') IS NOT NULL AS created;

-- Key attributes first, last and between the others in jsonb's key order
-- (shorter names first), and an item of more than 40 attributes.
SELECT ddb_put_item('pk_s', '{"PK": "a", "SK": 1, "a": 1, "zzzzzzzz": "last"}');
SELECT ddb_put_item('pk_s', '{"PK": "a", "SK": 2.50, "x": "short", "longer_name": [1, 2]}');
SELECT ddb_put_item('pk_s', '{"SK": -3, "PK": "b", "m": {"PK": "nested", "SK": 0}}');
SELECT ddb_put_item('pk_s', jsonb_build_object('PK', 'c', 'SK', 4) ||
       (SELECT jsonb_object_agg('attr' || i, i) FROM generate_series(1, 45) i));
SELECT ddb_put_item('pk_b', '{"k": {"$B": "AAEC"}, "v": true}');
SELECT "PK", "SK", CASE WHEN "PK" = 'c' THEN jsonb_build_object('attributes', (SELECT count(*) FROM jsonb_object_keys(item))) ELSE item END AS item
  FROM pk_s ORDER BY 1, 2;
SELECT (SELECT count(*) FROM jsonb_object_keys(ddb_get_item('pk_s', '{"PK": "c", "SK": 4}'))) AS attributes;
SELECT ddb_get_item('pk_b', '{"k": {"$B": "AAEC"}}');
SELECT ddb_put_item('pk_s', '{"PK": "a", "SK": 1, "a": 2}', return_values => 'ALL_OLD') AS old;

-- Key errors, in the order the search by name raised them.
SELECT ddb_put_item('pk_s', '{"SK": 1, "a": 1}');
SELECT ddb_put_item('pk_s', '{"PK": "a", "a": 1}');
SELECT ddb_put_item('pk_s', '{"a": 1}');
SELECT ddb_put_item('pk_s', '{"PK": 1, "SK": 1}');
SELECT ddb_put_item('pk_s', '{"PK": "a", "SK": "1"}');
SELECT ddb_put_item('pk_s', '{"PK": {"M": 1}, "SK": 1}');
SELECT ddb_put_item('pk_s', '{"PK": ["a"], "SK": 1}');
SELECT ddb_put_item('pk_s', '{"PK": true, "SK": 1}');
SELECT ddb_put_item('pk_s', '{"PK": null, "SK": 1}');
SELECT ddb_put_item('pk_s', '{"PK": {"$B": "AAEC"}, "SK": 1}');
SELECT ddb_put_item('pk_s', '{"PK": {"$S": ["a", "b"]}, "SK": 1}');
SELECT ddb_put_item('pk_s', '{"PK": "", "SK": 1}');
SELECT ddb_put_item('pk_s', jsonb_build_object('PK', repeat('x', 2049), 'SK', 1));
SELECT ddb_put_item('pk_s', '{"PK": "a", "SK": 1234567890123456789012345678901234567890}');
SELECT ddb_put_item('pk_s', '{"PK": 1, "SK": "1"}');
SELECT ddb_put_item('pk_b', '{"k": "AAEC"}');
SELECT ddb_put_item('pk_b', '{"k": {"$B": ""}}');
SELECT ddb_put_item('pk_b', '{"k": {"$B": "!!"}}');
SELECT ddb_put_item('pk_b', '[1, 2]');
-- nothing was written by the failed calls
SELECT count(*) FROM pk_s;

RESET search_path;
RESET ddb.schema;
DROP SCHEMA put_item_key CASCADE;
