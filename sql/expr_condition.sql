-- ConditionExpression / FilterExpression: DynamoDB's comparison rules,
-- functions, logical operators and precedence, evaluated by
-- ddb_eval_condition(item, condition, names, vals).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

CREATE TEMP TABLE item AS SELECT '{
  "pk": "CUST#42", "nick": "Ann", "age": 37, "score": 4.50,
  "active": true, "nothing": null,
  "tags": {"$SS": ["vip", "new"]}, "lucky": {"$NS": [7, 13]},
  "bin": {"$B": "AQID"}, "bins": {"$BS": ["AQ=="]},
  "address": {"city": "Oslo", "zip": "0150", "geo": [59.9, 10.7]},
  "orders": [{"id": "A17", "amount": 12}, {"id": "B3", "amount": 30}],
  "greeting": "héllo"
}'::jsonb AS i;

-- A tiny helper so each line reads as "condition -> result".
CREATE FUNCTION cond(c text, vals jsonb DEFAULT NULL, names jsonb DEFAULT NULL)
RETURNS boolean LANGUAGE sql AS $$ SELECT ddb_eval_condition(i, c, names, vals) FROM item $$;

-- Comparators on numbers compare numerically (37 = 37.0; 4.50 = 4.5).
SELECT cond('age = :v', '{":v": 37.0}') AS eq,
       cond('age <> :v', '{":v": 37}') AS ne,
       cond('score = :v', '{":v": 4.5}') AS eq_scale,
       cond('age < :v', '{":v": 100}') AS lt,
       cond('age <= :v', '{":v": 37}') AS le,
       cond('age > :v', '{":v": 9}') AS gt_not_lexical,
       cond('age >= :v', '{":v": 38}') AS ge;

-- Strings compare by UTF-8 bytes, not by collation: "A" (0x41) < "a"
-- (0x61), and "é" (0xC3 0xA9) > "z" (0x7A).
SELECT cond('nick < :v', '{":v": "ann"}') AS bytes_not_collation,
       cond('greeting > :v', '{":v": "hz"}') AS utf8_bytes;

-- Binary compares by unsigned bytes.
SELECT cond('bin < :v', '{":v": {"$B": "/w=="}}') AS unsigned_bytes,
       cond('bin = :v', '{":v": {"$B": "AQID"}}') AS b_eq;

-- Different types are never equal and never ordered; <> is true.
SELECT cond('age = :v', '{":v": "37"}') AS n_eq_s,
       cond('age <> :v', '{":v": "37"}') AS n_ne_s,
       cond('age < :v', '{":v": "99"}') AS n_lt_s,
       cond('age > :v', '{":v": "0"}') AS n_gt_s;

-- A missing attribute makes comparisons false; <> is true (not equal).
SELECT cond('absent = :v', '{":v": 1}') AS eq,
       cond('absent < :v', '{":v": 1}') AS lt,
       cond('absent <> :v', '{":v": 1}') AS ne;

-- Sets compare unordered, maps by attribute, lists in order; =/<> only.
SELECT cond('tags = :v', '{":v": {"$SS": ["new", "vip"]}}') AS set_unordered,
       cond('lucky = :v', '{":v": {"$NS": [13.0, 7]}}') AS ns_numeric,
       cond('address.geo = :v', '{":v": [59.9, 10.7]}') AS list_eq,
       cond('address.geo = :v', '{":v": [10.7, 59.9]}') AS list_order,
       cond('orders[0] = :v', '{":v": {"amount": 12, "id": "A17"}}') AS map_eq,
       cond('nothing = :v', '{":v": null}') AS null_eq,
       cond('active = :v', '{":v": true}') AS bool_eq;

-- Two attributes can be compared with each other.
SELECT cond('orders[0].amount < orders[1].amount') AS path_vs_path;

-- Nested paths: dots into maps, brackets into lists; a path through the
-- wrong type, or past the end of a list, is simply missing.
SELECT cond('address.city = :v', '{":v": "Oslo"}') AS map_path,
       cond('orders[1].id = :v', '{":v": "B3"}') AS list_path,
       cond('address.geo[1] = :v', '{":v": 10.7}') AS nested,
       cond('attribute_exists(orders[2])') AS past_end,
       cond('attribute_exists(nick.x)') AS through_string,
       cond('attribute_exists(address[0])') AS index_into_map;

-- #name placeholders stand for any attribute name, including reserved words
-- and names with dots or spaces.
SELECT ddb_eval_condition('{"status": "OPEN", "a.b": 1, "my attr": 2}',
                          '#s = :s AND #dot = :one AND #sp > :one',
                          '{"#s": "status", "#dot": "a.b", "#sp": "my attr"}',
                          '{":s": "OPEN", ":one": 1}');
-- "#dot" is one attribute named "a.b", not the path a.b:
SELECT ddb_eval_condition('{"a": {"b": 1}}', 'attribute_exists(#dot)', '{"#dot": "a.b"}');

-- BETWEEN is inclusive and, like <, needs one scalar type throughout.
SELECT cond('age BETWEEN :lo AND :hi', '{":lo": 37, ":hi": 40}') AS inclusive,
       cond('nick BETWEEN :lo AND :hi', '{":lo": "A", ":hi": "B"}') AS strings,
       cond('age BETWEEN :lo AND :hi', '{":lo": "1", ":hi": "9"}') AS wrong_type,
       cond('absent BETWEEN :lo AND :hi', '{":lo": 1, ":hi": 9}') AS absent;

-- IN is equality against any of the list.
SELECT cond('nick IN (:a, :b)', '{":a": "Bob", ":b": "Ann"}') AS found,
       cond('age IN (:a)', '{":a": "37"}') AS type_mismatch,
       cond('tags IN (:a)', '{":a": {"$SS": ["new", "vip"]}}') AS set_in;

-- attribute_exists / attribute_not_exists see NULL values as existing.
SELECT cond('attribute_exists(nothing)') AS null_exists,
       cond('attribute_not_exists(absent)') AS not_exists,
       cond('attribute_exists(address.zip)') AS nested;

-- attribute_type with DynamoDB's type names.
SELECT cond('attribute_type(nick, :t)', '{":t": "S"}') AS s,
       cond('attribute_type(age, :t)', '{":t": "N"}') AS n,
       cond('attribute_type(tags, :t)', '{":t": "SS"}') AS ss,
       cond('attribute_type(lucky, :t)', '{":t": "NS"}') AS ns,
       cond('attribute_type(bin, :t)', '{":t": "B"}') AS b,
       cond('attribute_type(bins, :t)', '{":t": "BS"}') AS bs,
       cond('attribute_type(nothing, :t)', '{":t": "NULL"}') AS null,
       cond('attribute_type(active, :t)', '{":t": "BOOL"}') AS bool,
       cond('attribute_type(orders, :t)', '{":t": "L"}') AS l,
       cond('attribute_type(address, :t)', '{":t": "M"}') AS m,
       cond('attribute_type(age, :t)', '{":t": "S"}') AS wrong,
       cond('attribute_type(:v, :t)', '{":v": 1, ":t": "N"}') AS of_value;

-- begins_with: S and B prefixes; other types are simply false.  Either
-- argument may be a path or a value.
SELECT cond('begins_with(pk, :p)', '{":p": "CUST#"}') AS s_prefix,
       cond('begins_with(:s, nick)', '{":s": "Annabel"}') AS value_first,
       cond('begins_with(pk, :p)', '{":p": "ORDER#"}') AS s_no,
       cond('begins_with(bin, :p)', '{":p": {"$B": "AQI="}}') AS b_prefix,
       cond('begins_with(age, :p)', '{":p": "3"}') AS n_is_false,
       cond('begins_with(pk, :p)', '{":p": ""}') AS empty_prefix;

-- contains: substring of S, byte run of B, member of a set, element of a
-- list.
SELECT cond('contains(nick, :v)', '{":v": "nn"}') AS substring,
       cond('contains(bin, :v)', '{":v": {"$B": "AgM="}}') AS bytes,
       cond('contains(tags, :v)', '{":v": "vip"}') AS ss_member,
       cond('contains(lucky, :v)', '{":v": 13.0}') AS ns_member,
       cond('contains(bins, :v)', '{":v": {"$B": "AQ=="}}') AS bs_member,
       cond('contains(address.geo, :v)', '{":v": 10.7}') AS list_elem,
       cond('contains(orders, :v)', '{":v": {"id": "B3", "amount": 30}}') AS list_map_elem,
       cond('contains(tags, :v)', '{":v": 1}') AS wrong_type,
       cond('contains(age, :v)', '{":v": 3}') AS number_is_false;

-- size: UTF-16 code units of S, as DynamoDB counts them ("héllo" is 5, not
-- its 6 UTF-8 bytes; "é𝄞" is 3: the clef is a surrogate pair), raw bytes of
-- B, elements of sets, lists and maps; size of a number yields nothing, so
-- its comparison is false.
SELECT cond('size(greeting) = :v', '{":v": 5}') AS s_length,
       cond('size(:s) = :v', '{":s": "é𝄞", ":v": 3}') AS s_surrogates,
       cond('size(bin) = :v', '{":v": 3}') AS b_bytes,
       cond('size(tags) = :v', '{":v": 2}') AS set_count,
       cond('size(orders) = :v', '{":v": 2}') AS list_count,
       cond('size(address) = :v', '{":v": 3}') AS map_count,
       cond('size(age) >= :v', '{":v": 0}') AS number_false,
       cond('size(absent) >= :v', '{":v": 0}') AS absent_false,
       cond(':v < size(nick)', '{":v": 2}') AS size_on_right,
       cond('size(nick) BETWEEN :a AND :b', '{":a": 1, ":b": 3}') AS in_between;

-- Precedence: NOT binds tighter than AND, AND tighter than OR.
-- (active = :t is true, active = :f is false)
-- true OR false AND false = true OR (false AND false) = true
SELECT cond('active = :t OR active = :f AND active = :f', '{":t": true, ":f": false}') AS and_before_or;
-- (true OR false) AND false = false
SELECT cond('(active = :t OR active = :f) AND active = :f', '{":t": true, ":f": false}') AS parens;
-- NOT false AND false = (NOT false) AND false = false
SELECT cond('NOT active = :f AND active = :f', '{":f": false}') AS not_first;
-- NOT (false AND false) = true
SELECT cond('NOT (active = :f AND active = :f)', '{":f": false}') AS not_parens;
-- NOT NOT true = true
SELECT cond('NOT NOT active = :t', '{":t": true}') AS double_not;
-- keywords are case-insensitive; function names are not
SELECT cond('age between :a and :b or not attribute_exists(pk)', '{":a": 1, ":b": 99}') AS lower_case;

-- Without an item (PutItem of a new key): attribute_not_exists is true and
-- a comparison with a path is false (so NOT of it is true).
SELECT ddb_eval_condition(NULL, 'attribute_not_exists(pk)') AS create_only,
       ddb_eval_condition(NULL, 'pk = :v', NULL, '{":v": "x"}') AS eq,
       ddb_eval_condition(NULL, 'NOT pk = :v', NULL, '{":v": "x"}') AS not_eq;

-- Optimistic locking with a version attribute, as DynamoDB users do it.
SELECT ddb_eval_condition('{"v": 3}', '#v = :expected', '{"#v": "v"}', '{":expected": 3}') AS current,
       ddb_eval_condition('{"v": 4}', '#v = :expected', '{"#v": "v"}', '{":expected": 3}') AS stale;

-- An operand may be in parentheses, and a value may come first in a
-- comparison; size() also takes a value (its size is used).
SELECT cond('(age) = :v', '{":v": 37}') AS paren_path,
       cond('(size(nick)) = :v AND (:v) = size(nick)', '{":v": 3}') AS paren_size,
       cond(':v < age', '{":v": 36}') AS value_first,
       cond(':v BETWEEN age AND :w', '{":v": 37, ":w": 40}') AS value_between,
       cond('contains(:v, nick)', '{":v": "Ann and Bob"}') AS value_contains,
       cond('size(:v) = size(nick)', '{":v": "abc"}') AS size_string,
       cond('size(:v) = :n', '{":v": {"$SS": ["a", "b"]}, ":n": 2}') AS size_set,
       cond('size(:v) = :n', '{":v": {"a": 1}, ":n": 1}') AS size_map,
       cond('size(:v) > size(tags)', '{":v": [1, 2, 3]}') AS size_list;
-- ... and a condition in parentheses once (twice is refused).
SELECT cond('(age = :v) AND (NOT (active = :f))', '{":v": 37, ":f": false}') AS groups,
       cond('((age = :v) OR (nick = :n))', '{":v": 1, ":n": "Ann"}') AS group_of_groups;

-- A NULL condition is NULL (no expression given).
SELECT ddb_eval_condition('{}', NULL) IS NULL AS null_condition;

DROP FUNCTION cond(text, jsonb, jsonb);
