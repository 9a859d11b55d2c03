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

-- Errors, as DynamoDB reports them.
-- the partition key is required, and takes only =
SELECT ddb_key_condition('SK = :sk', 'PK', 'SK', NULL, '{":sk": 1}');
SELECT ddb_key_condition('PK > :pk', 'PK', 'SK', NULL, '{":pk": 1}');
SELECT ddb_key_condition('begins_with(PK, :pk)', 'PK', 'SK', NULL, '{":pk": "x"}');
-- one condition per key, two at most, joined by AND only
SELECT ddb_key_condition('PK = :pk AND PK = :pk', 'PK', 'SK', NULL, '{":pk": 1}');
SELECT ddb_key_condition('PK = :pk AND SK > :a AND SK < :b', 'PK', 'SK', NULL, '{":pk": 1, ":a": 1, ":b": 2}');
SELECT ddb_key_condition('PK = :pk OR SK = :sk', 'PK', 'SK', NULL, '{":pk": 1, ":sk": 1}');
SELECT ddb_key_condition('NOT PK = :pk', 'PK', 'SK', NULL, '{":pk": 1}');
SELECT ddb_key_condition('PK = :pk AND SK <> :sk', 'PK', 'SK', NULL, '{":pk": 1, ":sk": 1}');
SELECT ddb_key_condition('PK = :pk AND SK IN (:sk)', 'PK', 'SK', NULL, '{":pk": 1, ":sk": 1}');
SELECT ddb_key_condition('PK = :pk AND contains(SK, :sk)', 'PK', 'SK', NULL, '{":pk": 1, ":sk": "x"}');
SELECT ddb_key_condition('PK = :pk AND attribute_exists(SK)', 'PK', 'SK', NULL, '{":pk": 1}');
-- only key attributes, named directly and compared with values
SELECT ddb_key_condition('PK = :pk AND price = :v', 'PK', 'SK', NULL, '{":pk": 1, ":v": 1}');
SELECT ddb_key_condition('PK = :pk AND SK = :sk', 'PK', NULL, NULL, '{":pk": 1, ":sk": 1}');
SELECT ddb_key_condition('PK = SK', 'PK', 'SK');
SELECT ddb_key_condition(':pk = PK', 'PK', 'SK', NULL, '{":pk": 1}');
SELECT ddb_key_condition('PK.x = :pk', 'PK', 'SK', NULL, '{":pk": 1}');
SELECT ddb_key_condition('PK = :pk', 'PK', 'SK', NULL, '{":pk": [1]}');
-- and everything a condition must be: defined and used placeholders, syntax
SELECT ddb_key_condition('PK = :pk', 'PK', 'SK', NULL, '{":pk": 1, ":extra": 2}');
SELECT ddb_key_condition('PK = :pk AND', 'PK', 'SK', NULL, '{":pk": 1}');
