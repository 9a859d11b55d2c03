-- UpdateExpression: SET (with + and -, if_not_exists, list_append), REMOVE,
-- ADD and DELETE, applied by ddb_apply_update(item, expression, names, vals,
-- key_attributes, return_values) as UpdateItem applies them.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

-- SET replaces or creates attributes; several actions share one SET.
SELECT ddb_apply_update('{"pk": "u1", "a": 1}', 'SET a = :x, b = :y',
                        NULL, '{":x": "one", ":y": [1, {"$SS": ["s"]}]}');

-- Arithmetic on numbers is exact (no floating point).
SELECT ddb_apply_update('{"n": 0.1}', 'SET n = n + :d, m = :a - :b',
                        NULL, '{":d": 0.2, ":a": 10, ":b": 12.5}');

-- Every operand reads the item as it was before the update: swapping two
-- attributes needs no temporary.
SELECT ddb_apply_update('{"a": 1, "b": 2}', 'SET a = b, b = a');

-- if_not_exists gives a default for a missing attribute only.
SELECT ddb_apply_update('{"hits": 5}',
                        'SET hits = if_not_exists(hits, :zero) + :one, visits = if_not_exists(visits, :zero) + :one',
                        NULL, '{":zero": 0, ":one": 1}');

-- list_append concatenates lists in either order; with if_not_exists it
-- appends to a list that may not exist yet.
SELECT ddb_apply_update('{"l": [2, 3]}', 'SET l = list_append(:front, l), m = list_append(if_not_exists(m, :empty), :front)',
                        NULL, '{":front": [1], ":empty": []}');
SELECT ddb_apply_update('{"l": [1]}', 'SET l = list_append(l, :more)', NULL, '{":more": [2, 3]}');

-- SET into nested paths: the parent map or list must exist.  An index past
-- the end of a list appends.
SELECT ddb_apply_update('{"m": {"x": 1}, "l": [0, 1]}',
                        'SET m.y = :v, m.x = :v, l[1] = :v, l[7] = :w',
                        NULL, '{":v": "new", ":w": "appended"}');

-- Several indexes past the end append in index order, not written order.
SELECT ddb_apply_update('{"l": ["x"]}', 'SET l[84] = :a, l[37] = :b, l[17] = :c',
                        NULL, '{":a": 84, ":b": 37, ":c": 17}');

-- #name placeholders, also inside paths.
SELECT ddb_apply_update('{"status": "OPEN", "meta": {"count": 1}}',
                        'SET #s = :s, #m.#c = #m.#c + :one',
                        '{"#s": "status", "#m": "meta", "#c": "count"}',
                        '{":s": "CLOSED", ":one": 1}');

-- REMOVE deletes attributes; removing what does not exist is a no-op.
SELECT ddb_apply_update('{"a": 1, "b": 2, "m": {"x": 1, "y": 2}}', 'REMOVE a, m.x, nope, m.nope');

-- REMOVE of list elements shifts the rest left; indexes name positions
-- before the update, whatever order they are written in.
SELECT ddb_apply_update('{"l": ["a", "b", "c", "d", "e"]}', 'REMOVE l[1], l[3]');
SELECT ddb_apply_update('{"l": ["a", "b", "c", "d", "e"]}', 'REMOVE l[3], l[1], l[9]');
SELECT ddb_apply_update('{"l": [{"x": 1, "y": 2}, "b"]}', 'REMOVE l[0].x, l[1]');
-- ... and so do the indexes of SET in the same update: l[3] is the old l[3].
SELECT ddb_apply_update('{"l": [2, 3, 4, 5, 6, 7]}', 'REMOVE l[1] SET l[3] = :v', NULL, '{":v": 17}');
-- REMOVE through a missing parent is an error (see below), but DynamoDB
-- ignores it when the whole item is missing.
SELECT ddb_apply_update(NULL, 'REMOVE m.x, l[0].y');

-- ADD on numbers: increments, and creates a missing attribute (counters).
SELECT ddb_apply_update('{"count": 41}', 'ADD #c :one, fresh :one', '{"#c": "count"}', '{":one": 1}');
SELECT ddb_apply_update('{"count": 41}', 'ADD #c :neg', '{"#c": "count"}', '{":neg": -50}');

-- ADD on sets: union (no duplicates), and creates a missing set.
SELECT ddb_apply_update('{"tags": {"$SS": ["a", "b"]}}', 'ADD tags :t, more :n',
                        NULL, '{":t": {"$SS": ["b", "c"]}, ":n": {"$NS": [1, 2]}}');
SELECT ddb_apply_update('{"ns": {"$NS": [1, 2]}}', 'ADD ns :n', NULL, '{":n": {"$NS": [2.0, 3]}}');

-- DELETE removes elements from a set; an emptied set disappears, and
-- deleting from a missing attribute is a no-op.
SELECT ddb_apply_update('{"tags": {"$SS": ["a", "b", "c"]}}', 'DELETE tags :t', NULL, '{":t": {"$SS": ["a", "x"]}}');
SELECT ddb_apply_update('{"tags": {"$SS": ["a"]}, "k": 1}', 'DELETE tags :t, nope :t', NULL, '{":t": {"$SS": ["a"]}}');
SELECT ddb_apply_update('{"bs": {"$BS": ["AQ==", "Ag=="]}}', 'DELETE bs :b', NULL, '{":b": {"$BS": ["AQ=="]}}');

-- All four clauses, in any order, each at most once; keywords are
-- case-insensitive.
SELECT ddb_apply_update('{"a": 1, "b": 2, "s": {"$SS": ["x", "y"]}}',
                        'remove b add n :one delete s :x set a = :two',
                        NULL, '{":one": 1, ":two": 2, ":x": {"$SS": ["x"]}}');

-- UpdateItem on a missing item starts from an empty item.
SELECT ddb_apply_update(NULL, 'SET a = :v ADD n :one', NULL, '{":v": "x", ":one": 1}');

-- ReturnValues: ALL_NEW (the default), ALL_OLD, UPDATED_OLD, UPDATED_NEW,
-- NONE.  UPDATED_* contain only the updated paths (nested ones keep their
-- structure), as they were before / are after.
SELECT rv, ddb_apply_update('{"pk": "p", "a": 1, "m": {"x": 1, "y": 2}, "gone": true}',
                            'SET a = a + :one, m.x = :one, fresh = :one REMOVE gone',
                            NULL, '{":one": 1}', NULL, rv)
  FROM unnest(ARRAY['ALL_NEW', 'ALL_OLD', 'UPDATED_OLD', 'UPDATED_NEW', 'NONE']) rv;
SELECT ddb_apply_update(NULL, 'SET a = :one', NULL, '{":one": 1}', NULL, 'ALL_OLD') AS all_old_of_nothing;
-- UPDATED_* of nested updates: only the updated paths, in their hierarchy.
-- Paths that did not exist before (after) are missing from UPDATED_OLD
-- (UPDATED_NEW); a list index set past the end is not found again, and a
-- removed list element's index finds its successor -- all as DynamoDB does.
SELECT expr, ddb_apply_update(i, expr, NULL, vals, NULL, 'UPDATED_OLD') AS updated_old,
             ddb_apply_update(i, expr, NULL, vals, NULL, 'UPDATED_NEW') AS updated_new
  FROM (VALUES ('{"a": {"b": "dog", "c": [1, 2, 3]}, "d": "cat"}'::jsonb)) item(i),
       unnest(ARRAY['SET a.b = :v', 'SET a.c[1] = :v, a.b = :v', 'SET a.x = :v',
                    'SET a.c[100] = :v', 'REMOVE a.c[1], a.c[3]', 'REMOVE d']) expr,
       LATERAL (SELECT CASE WHEN expr LIKE 'SET%' THEN '{":v": 7}'::jsonb END) v(vals);

-- Key attributes passed in key_attributes cannot be updated (UpdateItem
-- passes the table's key names); other attributes can.
SELECT ddb_apply_update('{"pk": "p", "sk": "s", "a": 1}', 'SET a = :v', NULL, '{":v": 2}', ARRAY['pk', 'sk']);

-- Optimistic locking with a version attribute, as DynamoDB users do it.
SELECT ddb_eval_condition(item, '#v = :expected', '{"#v": "version"}', '{":expected": 1}') AS may_update,
       ddb_apply_update(item, 'SET #v = #v + :one, price = :p', '{"#v": "version"}', '{":one": 1, ":p": 20}') AS updated
  FROM (VALUES ('{"pk": "PRODUCT#1", "version": 1, "price": 10}'::jsonb)) v(item);

-- Type errors surface when the update is applied.
SELECT ddb_apply_update('{"s": "text"}', 'ADD s :one', NULL, '{":one": 1}');
SELECT ddb_apply_update('{"s": "text"}', 'SET n = s + :one', NULL, '{":one": 1}');
SELECT ddb_apply_update('{"s": "text"}', 'SET l = list_append(s, :l)', NULL, '{":l": [1]}');
SELECT ddb_apply_update('{"ss": {"$SS": ["a"]}}', 'ADD ss :n', NULL, '{":n": {"$NS": [1]}}');
SELECT ddb_apply_update('{"n": 1}', 'DELETE n :s', NULL, '{":s": {"$SS": ["a"]}}');
-- A SET value may be in parentheses, as may its operands; if_not_exists
-- may stand inside arithmetic and list_append.
SELECT ddb_apply_update('{"a": 1, "b": 2}', 'SET c = (a + b), d = (a) - (b), e = (a)');
SELECT ddb_apply_update('{"a": 1}', 'SET n = if_not_exists(n, :z) + :one, m = a - if_not_exists(a, :z)',
                        NULL, '{":z": 0, ":one": 1}');
SELECT ddb_apply_update('{}', 'SET l = list_append(if_not_exists(l, :empty), :v)',
                        NULL, '{":empty": [], ":v": [1]}');
-- an operand path that does not exist
SELECT ddb_apply_update('{}', 'SET a = nope + :one', NULL, '{":one": 1}');
-- a nested SET whose parent is missing or not a map/list
SELECT ddb_apply_update('{}', 'SET m.x = :one', NULL, '{":one": 1}');
SELECT ddb_apply_update('{"m": "str"}', 'SET m.x = :one', NULL, '{":one": 1}');
SELECT ddb_apply_update('{"m": {}}', 'SET m[0] = :one', NULL, '{":one": 1}');
SELECT ddb_apply_update('{}', 'REMOVE m.x');
-- arithmetic beyond 38 digits or DynamoDB's range
SELECT ddb_apply_update('{"n": 9.9999999999999999999999999999999999999e125}', 'SET n = n + n');
SELECT ddb_apply_update('{"n": 12345678901234567890123456789012345678}', 'ADD n :tiny', NULL, '{":tiny": 0.1}');
-- (+ and - report a result beyond 38 digits as DynamoDB does, as an overflow)
SELECT ddb_apply_update('{"n": 1e50}', 'SET n = n + :one', NULL, '{":one": 1}');
SELECT ddb_apply_update('{"n": 1e50}', 'SET n = n - :one', NULL, '{":one": 1}');
-- the result must still nest at most 32 levels deep ...
SELECT ddb_apply_update('{"m": {}}', 'SET m.x = :v', NULL,
                        jsonb_build_object(':v', (repeat('[', 32) || repeat(']', 32))::jsonb));
-- ... and still fit in 400 KB
SELECT ddb_apply_update(('{"big": "' || repeat('x', 300000) || '"}')::jsonb, 'SET big2 = big');
