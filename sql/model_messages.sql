-- Every DynamoDB message of the expression language and the item model
-- (src/ddb_errors.h, the model's part), raised once each, in the table's
-- order, so a changed or misspelled text shows here.  The texts are
-- DynamoDB's own, as its documentation and its responses give them; the
-- SQLSTATE is always DB001 (ValidationException).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
\set VERBOSITY terse

-- Expressions: "Invalid <parameter>: ..." ------------------------------
-- DDB_MSG_EXPR_SYNTAX: the token and its surroundings
SELECT ddb_apply_update('{}', 'INVALID SYNTAX HERE');
-- DDB_MSG_EXPR_EMPTY
SELECT ddb_project('{}', '');
-- DDB_MSG_EXPR_SIZE (updates and projections), _DETAIL (conditions)
SELECT ddb_project('{}', 'a' || repeat(', a', 1366));
SELECT ddb_eval_condition('{}', 'a = :v' || repeat(' OR a = :v', 410), NULL, '{":v": 1}');
-- DDB_MSG_EXPR_REDUNDANT_PARENS
SELECT ddb_eval_condition('{}', '((a <> :v))', NULL, '{":v": 1}');
-- DDB_MSG_EXPR_RESERVED
SELECT ddb_eval_condition('{}', 'name = :v', NULL, '{":v": 1}');
-- DDB_MSG_EXPR_LIST_INDEX: an index must fit in 31 bits
SELECT ddb_project('{}', 'l[2147483648]');
-- DDB_MSG_EXPR_FUNCTION_NAME
SELECT ddb_eval_condition('{}', 'exists(a)');
-- DDB_MSG_EXPR_NOT_IN_CONDITION, _NOT_IN_UPDATE, _FUNCTION_MISUSED
SELECT ddb_eval_condition('{}', 'if_not_exists(a, :v) = :v', NULL, '{":v": 1}');
SELECT ddb_apply_update('{}', 'SET a = size(b)');
SELECT ddb_eval_condition('{}', 'size(a)');
-- DDB_MSG_EXPR_SECTION_TWICE
SELECT ddb_apply_update('{}', 'SET a = :v SET b = :v', NULL, '{":v": 1}');
-- DDB_MSG_EXPR_PATH_TOO_DEEP: 32 levels at most
SELECT ddb_project('{}', 'a' || repeat('.b', 32));
-- DDB_MSG_EXPR_PATHS_CONFLICT, _PATHS_OVERLAP
SELECT ddb_project('{}', 'a.b, a[1]');
SELECT ddb_project('{}', 'a, a.b');
-- DDB_MSG_EXPR_NAME_UNDEFINED, _VALUE_UNDEFINED
SELECT ddb_eval_condition('{}', '#a = :v', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', 'a = :v');
-- DDB_MSG_EXPR_OPERAND_COUNT, _OPERAND_TYPE, _ACTION_OPERAND_TYPE
SELECT ddb_eval_condition('{}', 'contains(a)');
SELECT ddb_eval_condition('{}', 'a < :l', NULL, '{":l": [1]}');
SELECT ddb_apply_update('{}', 'ADD a :s', NULL, '{":s": "x"}');
SELECT ddb_apply_update('{}', 'DELETE a :n', NULL, '{":n": 1}');
-- DDB_MSG_EXPR_PATH_REQUIRED
SELECT ddb_eval_condition('{}', 'attribute_exists(:v)', NULL, '{":v": 1}');
-- DDB_MSG_EXPR_NOT_DISTINCT
SELECT ddb_eval_condition('{}', 'contains(a, a)');
-- DDB_MSG_EXPR_TYPE_NAME, and _ANY_TYPE (the types a path may have)
SELECT ddb_eval_condition('{}', 'attribute_type(a, :t)', NULL, '{":t": "STRING"}');
SELECT ddb_eval_condition('{}', 'attribute_type(a, b)');
-- DDB_MSG_EXPR_BETWEEN_TYPES, _BETWEEN_ORDER
SELECT ddb_eval_condition('{}', 'a BETWEEN :lo AND :hi', NULL, '{":lo": 1, ":hi": "z"}');
SELECT ddb_eval_condition('{}', 'a BETWEEN :lo AND :hi', NULL, '{":lo": 2, ":hi": 1}');
-- DDB_MSG_EXPR_IN_TOO_MANY: 100 values at most
SELECT ddb_eval_condition('{}', 'a IN (:v' || repeat(', :v', 100) || ')', NULL, '{":v": 1}');
-- DDB_MSG_EXPR_TOO_MANY_OPERATORS: 300 at most (151 comparisons, 150 ORs)
SELECT ddb_eval_condition('{}', 'a = :v' || repeat(' OR a = :v', 150), NULL, '{":v": 1}');

-- Key conditions, raised bare ------------------------------------------
-- DDB_MSG_KEY_INVALID_OPERATOR
SELECT ddb_key_condition('PK = :p OR SK = :s', 'PK', 'SK', NULL, '{":p": 1, ":s": 1}');
-- DDB_MSG_KEY_INVALID_CONDITION with _MULTIPLE_NAMES, _NO_ATTRIBUTE, _FIRST_OPERAND
SELECT ddb_key_condition('PK = SK', 'PK', 'SK');
SELECT ddb_key_condition(':a = :b', 'PK', 'SK', NULL, '{":a": 1, ":b": 1}');
SELECT ddb_key_condition('PK = :p AND begins_with(:a, SK)', 'PK', 'SK', NULL, '{":p": 1, ":a": "x"}');
-- DDB_MSG_KEY_NESTED_OPERATION, _NESTED_PATH
SELECT ddb_key_condition('PK = :p AND size(SK) > :n', 'PK', 'SK', NULL, '{":p": 1, ":n": 1}');
SELECT ddb_key_condition('PK.x = :p', 'PK', 'SK', NULL, '{":p": 1}');
-- DDB_MSG_KEY_DUPLICATE, _CONDITION_COUNT
SELECT ddb_key_condition('PK = :p AND PK = :p', 'PK', 'SK', NULL, '{":p": 1}');
SELECT ddb_key_condition('PK = :p AND SK = :p AND x = :p', 'PK', 'SK', NULL, '{":p": 1}');
-- DDB_MSG_KEY_NOT_SUPPORTED, _MISSED_ELEMENT
SELECT ddb_key_condition('PK > :p', 'PK', 'SK', NULL, '{":p": 1}');
SELECT ddb_key_condition('SK = :s', 'PK', 'SK', NULL, '{":s": 1}');

-- ExpressionAttributeNames and ExpressionAttributeValues ---------------
-- DDB_MSG_NAMES_EMPTY, _VALUES_EMPTY
SELECT ddb_project('{}', 'a', '{}');
SELECT ddb_eval_condition('{}', 'attribute_exists(a)', NULL, '{}');
-- DDB_MSG_NAMES_INVALID_KEY, _VALUES_INVALID_KEY
SELECT ddb_project('{}', 'a', '{"a": "a"}');
SELECT ddb_eval_condition('{}', 'a = :v', NULL, '{"v": 1}');
-- DDB_MSG_NAMES_KEY_TOO_LONG, _VALUES_KEY_TOO_LONG: 255 bytes at most
SELECT ddb_project('{}', 'a', jsonb_build_object('#' || repeat('n', 255), 'a'));
SELECT ddb_eval_condition('{}', 'a = :v', NULL, jsonb_build_object(':' || repeat('v', 255), 1));
-- DDB_MSG_NAMES_EMPTY_NAME, _VALUES_INVALID_VALUE
SELECT ddb_project('{}', '#a', '{"#a": ""}');
SELECT ddb_eval_condition('{}', 'a = :v', NULL, '{":v": {"$SS": []}}');
-- DDB_MSG_NAMES_UNUSED, _VALUES_UNUSED
SELECT ddb_project('{}', 'a', '{"#a": "a"}');
SELECT ddb_eval_condition('{}', 'a = :v', NULL, '{":v": 1, ":w": 2}');

-- UpdateExpression evaluation -------------------------------------------
-- DDB_MSG_UPDATE_MISSING_ATTRIBUTE, _OPERAND_TYPE, _INVALID_PATH
SELECT ddb_apply_update('{}', 'SET a = b');
SELECT ddb_apply_update('{"b": "x"}', 'SET a = b + :v', NULL, '{":v": 1}');
SELECT ddb_apply_update('{}', 'SET a.b = :v', NULL, '{":v": 1}');
-- DDB_MSG_UPDATE_KEY_ATTRIBUTE
SELECT ddb_apply_update('{"pk": "p"}', 'SET pk = :v', NULL, '{":v": "q"}', ARRAY['pk']);
-- DDB_MSG_UPDATE_ITEM_SIZE
SELECT ddb_apply_update('{}', 'SET a = :v, b = :v', NULL,
                        jsonb_build_object(':v', repeat('x', 210000)));

-- The item model -------------------------------------------------------
-- DDB_MSG_ITEM_SIZE: 400 KB
SELECT ddb_validate_item(jsonb_build_object('a', repeat('x', 409600)));
-- DDB_MSG_EMPTY_SS, _EMPTY_NS, _EMPTY_BS (DynamoDB's spelling and spaces)
SELECT ddb_validate_item('{"s": {"$SS": []}}');
SELECT ddb_validate_item('{"n": {"$NS": []}}');
SELECT ddb_validate_item('{"b": {"$BS": []}}');
-- DDB_MSG_DUPLICATES_SS, _DUPLICATES_NS, _DUPLICATES_BS
SELECT ddb_validate_item('{"s": {"$SS": ["a", "b", "a"]}}');
SELECT ddb_validate_item('{"n": {"$NS": [1, 1.0]}}');
SELECT ddb_validate_item('{"b": {"$BS": ["Yg==", "Yg=="]}}');
-- DDB_MSG_NULL_NOT_TRUE
SELECT ddb_from_typed_json('{"a": {"NULL": false}}');
-- DDB_MSG_NUMBER_INVALID, _NUMBER_INVALID_TEXT
SELECT ddb_from_typed_json('{"a": {"N": ""}}');
SELECT ddb_from_typed_json('{"a": {"N": "12abc"}}');
-- DDB_MSG_NUMBER_OVERFLOW, _NUMBER_UNDERFLOW, _NUMBER_PRECISION
SELECT ddb_validate_item('{"a": 1e126}');
SELECT ddb_validate_item('{"a": 1e-131}');
SELECT ddb_validate_item('{"a": 1234567890123456789012345678901234567890}');
-- DDB_MSG_NESTING: 32 levels of lists and maps
SELECT ddb_validate_item(('{"a": ' || repeat('[', 33) || repeat(']', 33) || '}')::jsonb);
-- DDB_MSG_NAME_TOO_LARGE: an attribute name over 65,535 bytes
SELECT ddb_validate_item(jsonb_build_object(repeat('n', 65536), 1));
