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

-- An empty expression, or one over 4 KB.  Only the empty text is "empty":
-- blanks alone are a syntax error at the end, as in DynamoDB.
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

-- IN's list holds at most 100 values (the left operand not counted).
SELECT ddb_eval_condition('{"a": 1}', 'a IN (' || string_agg(':v', ', ') || ')', NULL, '{":v": 1}')
  FROM generate_series(1, 100);
SELECT ddb_eval_condition('{"a": 1}', 'a IN (' || string_agg(':v', ', ') || ')', NULL, '{":v": 1}')
  FROM generate_series(1, 101);

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

-- Syntax errors as DynamoDB words them: the offending token, and "near"
-- from the token before it to the token after it, blanks included; at the
-- start there is no token before, at the end the token is <EOF>.
SELECT ddb_apply_update('{}', 'INVALID SYNTAX HERE');
SELECT ddb_apply_update('{}', '  INVALID SYNTAX');
SELECT ddb_eval_condition('{}', 'attribute_exists(pk)   x   y');
SELECT ddb_eval_condition('{}', 'attribute_exists(pk) x ');
SELECT ddb_eval_condition('{}', 'attribute_exists(pk) AND NOT #h', '{"#h": "h"}');
SELECT ddb_eval_condition('{}', 'a = :v AND  ', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', 'a-b');
SELECT ddb_eval_condition('{}', 'a > 4');
SELECT ddb_project('{}', '!!! INVALID !!!');
SELECT ddb_project('{}', 'a[01]');
-- keywords are tokens of their own, whatever their case, never names
SELECT ddb_eval_condition('{}', 'a = :v and', NULL, '{":v": 1}');
SELECT ddb_project('{}', 'a, set');
-- where a '(' could open a condition or an operand, the error is where
-- either reading got furthest
SELECT ddb_eval_condition('{}', '(a) AND b = :v', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', '(a = :v', NULL, '{":v": 1}');
SELECT ddb_apply_update('{}', 'SET c = (a + b) + b');
SELECT ddb_apply_update('{}', 'SET c = (a + b');

-- Parentheses around parentheses are refused (a condition, an operand or
-- an arithmetic in a pair of its own is fine).
SELECT ddb_eval_condition('{}', '((a <> :v))', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', 'a = :v AND ((b = :v AND c = :v)) AND d = :v', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', 'a > ((b))');
SELECT ddb_eval_condition('{}', 'contains(((a)), :v)', NULL, '{":v": 1}');
SELECT ddb_apply_update('{}', 'SET c = ((a + b))');
-- ... before any later syntax error, but not where the text cannot parse
SELECT ddb_eval_condition('{}', '((a = :v)) AND', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', '((a)) AND', NULL, '{":v": 1}');

-- A function or comparison may not repeat its first path among its other
-- operands (#names resolved); values may repeat.
SELECT ddb_eval_condition('{}', 'contains(a, a)');
SELECT ddb_eval_condition('{}', 'begins_with(ab.bc[1].a, ab.bc[1].#a)', '{"#a": "a"}');
SELECT ddb_eval_condition('{}', 'attribute_type(#a, a)', '{"#a": "a"}');
SELECT ddb_eval_condition('{}', 'a = :v AND #a <> a', '{"#a": "a"}', '{":v": 1}');
SELECT ddb_eval_condition('{}', 'a BETWEEN :v AND a', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', 'a IN (:v, b, a)', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{"a": 1}', ':v = :v AND a.b <> a', NULL, '{":v": 1}');

-- size() takes a path or a value (of a type that has a size).
SELECT ddb_eval_condition('{}', 'size(:v) > a', NULL, '{":v": 5}');
SELECT ddb_eval_condition('{}', 'size(:v) > a', NULL, '{":v": true}');
SELECT ddb_eval_condition('{}', 'size(:v) > a', NULL, '{":v": null}');
SELECT ddb_eval_condition('{}', 'size(size(a)) > :v', NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', 'attribute_not_exists(size(:v))', NULL, '{":v": "x"}');
SELECT ddb_eval_condition('{}', 'begins_with(a, size(b))');

-- The stages, as in DynamoDB: syntax first; then, in the order written,
-- functions (before their arguments), reserved words, list indexes and
-- repeated sections; then placeholders and operators, operands before
-- their operator.
SELECT ddb_eval_condition('{}', 'name = :v SET');
SELECT ddb_eval_condition('{}', 'whatever(name) = :v');
SELECT ddb_eval_condition('{}', 'name = :v AND whatever(b)');
SELECT ddb_eval_condition('{}', 'attribute_exists(#x, name)');
SELECT ddb_eval_condition('{}', 'attribute_exists(#x, :y)');
SELECT ddb_eval_condition('{}', 'begins_with(:hello, #a, #b)');
SELECT ddb_apply_update('{}', 'SET a = :v SET b = name');
SELECT ddb_apply_update('{}', 'SET a = name SET b = :v');
-- an update is validated from its last action back: targets, then values
SELECT ddb_apply_update('{}', 'SET #u1 = :v, #u2 = :v', NULL, '{":v": 1}');
SELECT ddb_apply_update('{}', 'SET a = :u1, b = :u2');
SELECT ddb_apply_update('{}', 'SET a = :u1, #u2 = :v', NULL, '{":v": 1}');
-- ... so the overlapping pair DynamoDB names is found from the end
SELECT ddb_apply_update('{}', 'SET d[1] = a, d.b = a, c[1].a = a, #c = if_not_exists(a)', '{"#c": "c"}');
SELECT ddb_apply_update('{}', 'REMOVE a.#c SET a[1] = #d', '{"#c": "c", "#d": "d"}');
-- the second path named is the one the first passes, not another branch
-- of the tree at that level (tags, cnt, m.y)
SELECT ddb_apply_update('{}', 'SET hist = :l REMOVE hist[0] DELETE tags :d', NULL, '{":l": [], ":d": {"$SS": ["x"]}}');
SELECT ddb_apply_update('{}', 'SET hist = :l REMOVE hist[0] ADD cnt :v', NULL, '{":l": [], ":v": 1}');
SELECT ddb_apply_update('{}', 'REMOVE m.x SET m.x.a = :v, m.y = :v', NULL, '{":v": 1}');
SELECT ddb_project('{}', 'a.b, a, z');
SELECT ddb_project('{}', 'b[1], b.a, #a.b, a', '{"#a": "a"}');
SELECT ddb_project('{}', 'a, #a[1]', '{"#a": "a"}');
SELECT ddb_project('{}', 'a[3].b, #a.#b.b', '{"#a": "a", "#b": "[3]"}');

-- List indexes fit in 31 bits; paths nest 32 levels.
SELECT ddb_project('{"l": [1]}', 'l[2147483647]');
SELECT ddb_project('{"l": [1]}', 'l[99999999999]');

-- At most 300 operators and functions in one expression.
SELECT ddb_eval_condition('{}', 'a = :v' || repeat(' OR a = :v', 149), NULL, '{":v": 1}');
SELECT ddb_eval_condition('{}', 'a = :v' || repeat(' OR a = :v', 150), NULL, '{":v": 1}');
SELECT count(*) FROM jsonb_object_keys((
  SELECT ddb_apply_update('{"b": 1}', 'SET ' || string_agg('a' || i || '=b+b', ','))
    FROM generate_series(1, 300) i));
SELECT ddb_apply_update('{"b": 1}', 'SET ' || string_agg('a' || i || '=b+b', ','))
  FROM generate_series(1, 301) i;

-- Attribute names are at most 65,535 bytes, wherever they are written.
SELECT length(ddb_project(jsonb_build_object(repeat('n', 65535), 1), '#n',
                          jsonb_build_object('#n', repeat('n', 65535)))::text);
SELECT ddb_project('{}', '#n', jsonb_build_object('#n', repeat('n', 65536)));
SELECT ddb_eval_condition('{}', '#n = :v', jsonb_build_object('#n', repeat('n', 65536)), '{":v": 1}');
SELECT ddb_apply_update('{}', 'SET #n = :v', jsonb_build_object('#n', repeat('n', 65536)), '{":v": 1}');
SELECT ddb_apply_update('{}', 'SET a = :v', NULL,
                        jsonb_build_object(':v', jsonb_build_object('m', jsonb_build_object(repeat('n', 65536), 1))));
