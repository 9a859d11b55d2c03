-- KeyConditionExpression: the condition of a Query, parsed like any
-- condition and then held to DynamoDB's key rules.  ddb_key_condition
-- shows what the query layer gets from it: the partition key value and at
-- most one sort-key condition.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

-- The partition key alone, or with one sort-key condition of each kind.
SELECT ddb_key_condition('PK = :pk', 'PK', 'SK', NULL, '{":pk": "CUST#42"}');
SELECT ddb_key_condition('PK = :pk AND SK = :sk', 'PK', 'SK', NULL, '{":pk": "CUST#42", ":sk": "PROFILE"}');
SELECT ddb_key_condition('PK = :pk AND SK < :sk', 'PK', 'SK', NULL, '{":pk": 1, ":sk": 2}');
SELECT ddb_key_condition('PK = :pk AND SK <= :sk', 'PK', 'SK', NULL, '{":pk": 1, ":sk": 2}');
SELECT ddb_key_condition('PK = :pk AND SK > :sk', 'PK', 'SK', NULL, '{":pk": 1, ":sk": 2}');
SELECT ddb_key_condition('PK = :pk AND SK >= :sk', 'PK', 'SK', NULL, '{":pk": 1, ":sk": 2}');
SELECT ddb_key_condition('PK = :pk AND SK BETWEEN :a AND :b', 'PK', 'SK', NULL,
                         '{":pk": "CUST#42", ":a": "ORDER#2025-01", ":b": "ORDER#2025-12"}');
SELECT ddb_key_condition('PK = :pk AND begins_with(SK, :p)', 'PK', 'SK', NULL,
                         '{":pk": "CUST#42", ":p": "ORDER#"}');
-- Either order of the two conditions, parentheses, #names, binary keys.
SELECT ddb_key_condition('(begins_with(#s, :p)) and (#p = :pk)', 'PK', 'SK',
                         '{"#p": "PK", "#s": "SK"}', '{":pk": {"$B": "AQID"}, ":p": {"$B": "AQ=="}}');

-- A comparison may put the value first: DynamoDB turns it around, so
-- ":p = PK AND :c < SK" means "PK = :p AND SK > :c".
SELECT ddb_key_condition(':p = PK AND :c < SK', 'PK', 'SK', NULL, '{":p": 1, ":c": 2}');
SELECT ddb_key_condition(':p = PK AND :c <= SK', 'PK', 'SK', NULL, '{":p": 1, ":c": 2}');
SELECT ddb_key_condition(':p = PK AND :c > SK', 'PK', 'SK', NULL, '{":p": 1, ":c": 2}');
SELECT ddb_key_condition(':p = PK AND :c >= SK', 'PK', 'SK', NULL, '{":p": 1, ":c": 2}');
SELECT ddb_key_condition(':c = SK AND PK = :p', 'PK', 'SK', NULL, '{":p": 1, ":c": 2}');
-- ... but BETWEEN and begins_with need the key attribute first.
SELECT ddb_key_condition('PK = :p AND :a BETWEEN SK AND :b', 'PK', 'SK', NULL, '{":p": 1, ":a": 1, ":b": 2}');
SELECT ddb_key_condition('PK = :p AND begins_with(:a, SK)', 'PK', 'SK', NULL, '{":p": 1, ":a": "x"}');

-- Errors, as DynamoDB reports them.
-- the partition key is required, and takes only =
SELECT ddb_key_condition('SK = :sk', 'PK', 'SK', NULL, '{":sk": 1}');
SELECT ddb_key_condition('PK > :pk', 'PK', 'SK', NULL, '{":pk": 1}');
SELECT ddb_key_condition(':pk < PK', 'PK', 'SK', NULL, '{":pk": 1}');
SELECT ddb_key_condition('begins_with(PK, :pk)', 'PK', 'SK', NULL, '{":pk": "x"}');
-- one condition per key, at most two in all, joined by AND only
SELECT ddb_key_condition('PK = :pk AND PK = :pk', 'PK', 'SK', NULL, '{":pk": 1}');
SELECT ddb_key_condition('PK = :pk AND SK > :a AND SK < :b', 'PK', 'SK', NULL, '{":pk": 1, ":a": 1, ":b": 2}');
SELECT ddb_key_condition('PK = :pk AND SK > :a AND x < :b', 'PK', 'SK', NULL, '{":pk": 1, ":a": 1, ":b": 2}');
SELECT ddb_key_condition('PK = :pk OR SK = :sk', 'PK', 'SK', NULL, '{":pk": 1, ":sk": 1}');
SELECT ddb_key_condition('NOT PK = :pk', 'PK', 'SK', NULL, '{":pk": 1}');
SELECT ddb_key_condition('PK = :pk AND SK <> :sk', 'PK', 'SK', NULL, '{":pk": 1, ":sk": 1}');
SELECT ddb_key_condition('PK = :pk AND SK IN (:sk)', 'PK', 'SK', NULL, '{":pk": 1, ":sk": 1}');
SELECT ddb_key_condition('PK = :pk AND contains(SK, :sk)', 'PK', 'SK', NULL, '{":pk": 1, ":sk": "x"}');
SELECT ddb_key_condition('PK = :pk AND attribute_exists(SK)', 'PK', 'SK', NULL, '{":pk": 1}');
-- only key attributes: a condition on another attribute leaves a key
-- schema element missed, or is one condition too many without a sort key
SELECT ddb_key_condition('PK = :pk AND price = :v', 'PK', 'SK', NULL, '{":pk": 1, ":v": 1}');
SELECT ddb_key_condition('price = :v', 'PK', 'SK', NULL, '{":v": 1}');
SELECT ddb_key_condition('PK = :pk AND SK = :sk', 'PK', NULL, NULL, '{":pk": 1, ":sk": 1}');
-- one attribute per condition, named at the top level, compared with values
SELECT ddb_key_condition('PK = SK', 'PK', 'SK');
SELECT ddb_key_condition(':a = :b', 'PK', 'SK', NULL, '{":a": 1, ":b": 1}');
SELECT ddb_key_condition('PK.x = :pk', 'PK', 'SK', NULL, '{":pk": 1}');
SELECT ddb_key_condition('PK = :pk AND size(SK) > :n', 'PK', 'SK', NULL, '{":pk": 1, ":n": 1}');
SELECT ddb_key_condition('PK = size(:pk)', 'PK', 'SK', NULL, '{":pk": "x"}');
-- value types are the query's to check against the key schema
SELECT ddb_key_condition('PK = :pk', 'PK', 'SK', NULL, '{":pk": [1]}');
-- and everything a condition must be: defined and used placeholders, syntax
SELECT ddb_key_condition('PK = :pk', 'PK', 'SK', NULL, '{":pk": 1, ":extra": 2}');
SELECT ddb_key_condition('PK = :pk AND', 'PK', 'SK', NULL, '{":pk": 1}');
SELECT ddb_key_condition('PK = :pk AND SK BETWEEN :b AND :a', 'PK', 'SK', NULL, '{":pk": 1, ":a": 1, ":b": 2}');
