-- Expression errors: each is a ValidationException (SQLSTATE DB001) whose
-- message names the expression and says what is wrong, as DynamoDB does.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
-- The SQLSTATE is DB001 and the message starts with the DynamoDB error name.
SELECT ddb_project('{}', 'name');
\echo :LAST_ERROR_SQLSTATE

-- Syntax errors point at the offending token, or at the end of the input.
SELECT ddb_eval_condition('{}', 'a = ');
SELECT ddb_eval_condition('{}', 'a = = :v', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', '(a = :v', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', 'a = :v)', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', 'a = :v b', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', 'a ! :v', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', 'a = :v AND', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', 'a BETWEEN :v', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', 'a IN ()');
SELECT ddb_eval_condition('{}', 'a[x] = :v', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', 'a.[1] = :v', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', 'a = # OR b = :v', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', 'a ≠ :v', NULL, '{":v": 1}');
SELECT ddb_apply_update('{}', 'SET a = :v SET b = :v', NULL, '{":v": 1}');
SELECT ddb_apply_update('{}', 'SET a :v', NULL, '{":v": 1}');
SELECT ddb_apply_update('{}', 'SET a = :v,', NULL, '{":v": 1}');
SELECT ddb_apply_update('{}', 'UPSERT a = :v', NULL, '{":v": 1}');
SELECT ddb_apply_update('{}', 'ADD a b');
SELECT ddb_apply_update('{}', 'SET a = :v + :v + :v', NULL, '{":v": 1}');
SELECT ddb_project('{}', 'a,');
SELECT ddb_project('{}', 'a b');

-- An empty expression, or one over 4 KB.
SELECT ddb_eval_condition('{}', '   ');
SELECT ddb_apply_update('{}', '');
SELECT ddb_project('{}', 'a, ' || repeat('b, ', 1400) || 'c');

-- Placeholders: every one used must be defined, and every one defined
-- must be used (by some expression of the request).
SELECT ddb_eval_condition('{}', '#a = :v', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', 'a = :v');
SELECT ddb_eval_condition('{}', 'a = :v', '{"#unused": "x"}', '{":v": 1}');
SELECT ddb_eval_condition('{}', 'a = :v', NULL, '{":v": 1, ":w": 2, ":x": 3}');
SELECT ddb_project('{}', 'a', '{"#a": "a", "#b": "b"}');
-- Syntax errors are reported before undefined placeholders.
SELECT ddb_eval_condition('{}', '#a = :v SET');
-- Placeholder maps: keys need their sigil, names must be strings, values
-- must be valid DynamoDB values, and an empty map is an error.
SELECT ddb_eval_condition('{}', 'a = :v', '{"a": "x"}', '{":v": 1}');
SELECT ddb_eval_condition('{}', 'a = :v', NULL, '{"v": 1}');
SELECT ddb_eval_condition('{}', '#a = :v', '{"#a": 1}', '{":v": 1}');
SELECT ddb_eval_condition('{}', 'a = :v', NULL, '{":v": {"$SS": []}}');
SELECT ddb_eval_condition('{}', 'a = :v', '{}', '{":v": 1}');
SELECT ddb_eval_condition('{}', 'attribute_exists(a)', NULL, '{}');

-- Reserved words cannot be attribute names unless written as #names;
-- the check is case-insensitive and covers DynamoDB's whole list.
SELECT ddb_eval_condition('{}', 'name = :v', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', 'a.Status = :v', NULL, '{":v": 1}');
SELECT ddb_apply_update('{}', 'SET ttl = :v', NULL, '{":v": 1}');
SELECT ddb_project('{}', 'abort, zone');
SELECT ddb_project('{"names": 1, "nam": 2}', 'names, nam');
SELECT ddb_project('{"name": 1}', '#n', '{"#n": "name"}');

-- Functions: unknown names, functions used in the wrong place, and
-- arguments of the wrong kind.
SELECT ddb_eval_condition('{}', 'exists(a)');
SELECT ddb_eval_condition('{}', 'Attribute_Exists(a)');
SELECT ddb_eval_condition('{}', 'attribute_exists(a) = :v', NULL, '{":v": true}');
SELECT ddb_eval_condition('{}', 'size(a)');
SELECT ddb_eval_condition('{}', 'a = attribute_exists(b)');
SELECT ddb_eval_condition('{}', 'if_not_exists(a, :v) = :v', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', 'attribute_exists(:v)', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', 'attribute_type(a, :t)', NULL, '{":t": "STRING"}');
SELECT ddb_eval_condition('{}', 'attribute_type(a, b)');
SELECT ddb_eval_condition('{}', 'begins_with(a, :n)', NULL, '{":n": 1}');
SELECT ddb_eval_condition('{}', 'size(a, b) = :v', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', 'contains(a)');
SELECT ddb_apply_update('{}', 'SET a = size(b)');
SELECT ddb_apply_update('{}', 'SET a = if_not_exists(:v, :v)', NULL, '{":v": 1}');
SELECT ddb_apply_update('{}', 'SET a = if_not_exists(if_not_exists(a, :v), :v)', NULL, '{":v": 1}');
SELECT ddb_apply_update('{}', 'SET a = list_append(:v)', NULL, '{":v": [1]}');
SELECT ddb_apply_update('{}', 'SET a = list_append(list_append(:v, :v), :v)', NULL, '{":v": [1]}');
SELECT ddb_apply_update('{}', 'SET a = LIST_APPEND(:v, :v)', NULL, '{":v": [1]}');
SELECT ddb_apply_update('{}', 'SET a = f123_hi(b, c, d)');
-- names (of attributes and of functions) start with a letter
SELECT ddb_apply_update('{}', 'SET a = _f(b)');
SELECT ddb_project('{}', '_a');

-- Operand types of constants are checked before any item is read.
SELECT ddb_eval_condition('{}', 'a < :v', NULL, '{":v": [1]}');
SELECT ddb_eval_condition('{}', 'a BETWEEN :lo AND :hi', NULL, '{":lo": 1, ":hi": {"$SS": ["x"]}}');
SELECT ddb_eval_condition('{}', 'a BETWEEN :lo AND :hi', NULL, '{":lo": 9, ":hi": 1}');
SELECT ddb_eval_condition('{}', 'a BETWEEN :lo AND :hi', NULL, '{":lo": 2, ":hi": "dog"}');
SELECT ddb_apply_update('{}', 'SET a = b + :s', NULL, '{":s": "x"}');
SELECT ddb_apply_update('{}', 'SET a = list_append(b, :s)', NULL, '{":s": "x"}');
SELECT ddb_apply_update('{}', 'ADD a :s', NULL, '{":s": "x"}');
SELECT ddb_apply_update('{}', 'DELETE a :n', NULL, '{":n": 1}');

-- IN takes at most 100 operands, the left one included (so 99 values).
SELECT ddb_eval_condition('{"a": 1}', 'a IN (' || string_agg(':v', ', ') || ')', NULL, '{":v": 1}')
  FROM generate_series(1, 99);
SELECT ddb_eval_condition('{"a": 1}', 'a IN (' || string_agg(':v', ', ') || ')', NULL, '{":v": 1}')
  FROM generate_series(1, 100);

-- Update paths must not overlap (one a prefix of the other, or the same
-- path twice) nor conflict (one attribute used as both map and list).
SELECT ddb_apply_update('{}', 'SET a = :v REMOVE a', NULL, '{":v": 1}');
SELECT ddb_apply_update('{}', 'SET a = :v, a.b = :v', NULL, '{":v": 1}');
SELECT ddb_apply_update('{}', 'SET #a = :v, a = :v', '{"#a": "a"}', '{":v": 1}');
SELECT ddb_apply_update('{}', 'REMOVE l[0], l.x');
SELECT ddb_apply_update('{}', 'ADD n :v DELETE n :s', NULL, '{":v": 1, ":s": {"$SS": ["x"]}}');
-- ... while siblings are fine.
SELECT ddb_apply_update('{"l": [1, 2], "m": {}}', 'SET l[0] = :v, l[1] = :v, m.a = :v, m.b = :v', NULL, '{":v": 0}');

-- Key attributes cannot be updated (UpdateItem passes the table's keys).
SELECT ddb_apply_update('{"pk": "p", "a": 1}', 'SET pk = :v', NULL, '{":v": "q"}', ARRAY['pk']);
SELECT ddb_apply_update('{"pk": "p", "sk": "s"}', 'REMOVE sk', NULL, NULL, ARRAY['pk', 'sk']);
SELECT ddb_apply_update('{"pk": "p"}', 'ADD #k :v', '{"#k": "pk"}', '{":v": 1}', ARRAY['pk']);

-- Paths nest at most 32 levels; parentheses not without limit either.
SELECT ddb_project('{}', 'a' || repeat('.b', 31));
SELECT ddb_project('{}', 'a' || repeat('.b', 32));
SELECT ddb_eval_condition('{}', repeat('(', 300) || 'a = :v' || repeat(')', 300), NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', repeat('NOT ', 300) || 'a = :v', NULL, '{":v": 1}');

-- ReturnValues must be one of DynamoDB's five.
SELECT ddb_apply_update('{}', 'SET a = :v', NULL, '{":v": 1}', NULL, 'ALL');
