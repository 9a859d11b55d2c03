-- DynamoDB's ten data types in ddb's document form, their conversion to and
-- from DynamoDB's typed JSON, item size, and DynamoDB's validation errors.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

-- Document form: S, N, BOOL, NULL, L and M are plain JSON; B and the three
-- set types are tagged objects.  Typed JSON names every type explicitly.
SELECT jsonb_pretty(ddb_to_typed_json('{
  "s": "text", "n": 42, "t": true, "z": null,
  "l": ["a", 1, [false]], "m": {"x": {"y": "deep"}},
  "b": {"$B": "AQID"}, "ss": {"$SS": ["a", "b"]},
  "ns": {"$NS": [1, 2.5]}, "bs": {"$BS": ["AQ==", "Ag=="]}
}'));

-- ... and back: the document form is recovered exactly.
SELECT ddb_from_typed_json(ddb_to_typed_json(d)) = d AS round_trip
  FROM (VALUES ('{"s": "text", "n": 42, "t": true, "z": null,
                  "l": ["a", 1, [false]], "m": {"x": {"y": "deep"}},
                  "b": {"$B": "AQID"}, "ss": {"$SS": ["a", "b"]},
                  "ns": {"$NS": [1, 2.5]}, "bs": {"$BS": ["AQ==", "Ag=="]}}'::jsonb)) v(d);

-- Typed JSON in, document form out: each type on its own.
SELECT ddb_from_typed_json('{"a": {"S": "x"}}') AS s,
       ddb_from_typed_json('{"a": {"N": "-1.50"}}') AS n,
       ddb_from_typed_json('{"a": {"B": "aGVsbG8="}}') AS b,
       ddb_from_typed_json('{"a": {"BOOL": false}}') AS bool,
       ddb_from_typed_json('{"a": {"NULL": true}}') AS null;
SELECT ddb_from_typed_json('{"a": {"L": [{"S": "x"}, {"N": "1"}]}}') AS l,
       ddb_from_typed_json('{"a": {"M": {"k": {"BOOL": true}}}}') AS m,
       ddb_from_typed_json('{"a": {"SS": ["x", "y"]}}') AS ss,
       ddb_from_typed_json('{"a": {"NS": ["1", "1e2"]}}') AS ns,
       ddb_from_typed_json('{"a": {"BS": ["AA=="]}}') AS bs;

-- Numbers are exact decimals: typed JSON writes them as normalized strings
-- (trailing zeros dropped, no exponent), as DynamoDB returns them.
SELECT ddb_to_typed_json('{"a": 1.500, "b": 1e3, "c": -0.000001, "d": 12345678901234567890123456789012345678}');

-- The $M tag escapes a map whose only key looks like a tag, so a map
-- {"$B": "abc"} is not mistaken for a binary value; conversion adds the
-- escape where needed and the round trip is lossless.
SELECT ddb_to_typed_json('{"m": {"$M": {"$B": "abc"}}}');
SELECT ddb_from_typed_json('{"m": {"M": {"$SS": {"S": "not a set"}}}}');
SELECT ddb_from_typed_json('{"m": {"M": {"$X": {"S": "no escape needed"}, "$B": {"S": "two keys"}}}}');
-- An item's top level is always a map of attributes, never a tag.
SELECT ddb_to_typed_json('{"$B": "AQID"}');

-- Empty strings, binaries, lists and maps are legal non-key values.
SELECT ddb_to_typed_json('{"s": "", "b": {"$B": ""}, "l": [], "m": {}}');

-- Item size follows DynamoDB's rules: name bytes + value bytes.
--   S: UTF-8 bytes; "é" is 2 bytes          -> 1 + 2 = 3
SELECT ddb_item_size('{"a": "é"}');
--   N: (significant digits + 1) / 2 + 1; 12345 has 5 digits -> 1 + 4 = 5,
--   and leading/trailing zeros do not count: 1000 = 1 digit -> 1 + 2 = 3
SELECT ddb_item_size('{"a": 12345}'), ddb_item_size('{"a": 1000}');
--   B: raw bytes (3), not base64 length     -> 1 + 3 = 4
SELECT ddb_item_size('{"a": {"$B": "AQID"}}');
--   BOOL and NULL: 1 byte                   -> 1 + 1 = 2 each
SELECT ddb_item_size('{"a": true}'), ddb_item_size('{"a": null}');
--   L and M: 3 bytes + 1 per element + elements (map elements with names)
--   ["x", "y"] -> 3 + (1+1) + (1+1) = 7, plus name 1 = 8
--   {"k": "v"} -> 3 + (1 + 1 + 1) = 6, plus name 1 = 7
SELECT ddb_item_size('{"a": ["x", "y"]}'), ddb_item_size('{"a": {"k": "v"}}');
--   sets: the sum of their elements: "ab" + "c" = 3, plus name 1 = 4
SELECT ddb_item_size('{"a": {"$SS": ["ab", "c"]}}');

-- ddb_validate_item accepts valid items and the 400 KB limit is enforced.
-- (pk: 2 + 1 = 3 bytes; big: 3 + 409594 = 409597; 409600 = 400 KB in all)
SELECT ddb_validate_item(('{"pk": "x", "big": "' || repeat('x', 400 * 1024 - 6) || '"}')::jsonb);
SELECT ddb_item_size(('{"pk": "x", "big": "' || repeat('x', 400 * 1024 - 6) || '"}')::jsonb);
SELECT ddb_validate_item(('{"pk": "x", "big": "' || repeat('x', 400 * 1024 - 5) || '"}')::jsonb);

-- Errors are DynamoDB ValidationExceptions (SQLSTATE DB001).
-- an empty set
SELECT ddb_to_typed_json('{"a": {"$SS": []}}');
\echo :LAST_ERROR_SQLSTATE
SELECT ddb_from_typed_json('{"a": {"NS": []}}');
-- duplicates in a set; numbers compare numerically, so 1 and 1.0 collide
SELECT ddb_to_typed_json('{"a": {"$SS": ["x", "x"]}}');
SELECT ddb_to_typed_json('{"a": {"$NS": [1, 1.0]}}');
-- set elements of the wrong JSON type
SELECT ddb_to_typed_json('{"a": {"$SS": ["x", 1]}}');
SELECT ddb_to_typed_json('{"a": {"$NS": ["1"]}}');
-- bad base64, in a binary and in a binary set
SELECT ddb_to_typed_json('{"a": {"$B": "not base64!"}}');
SELECT ddb_to_typed_json('{"a": {"$BS": ["AQID", "AQI"]}}');
SELECT ddb_from_typed_json('{"a": {"B": "A Q=="}}');
-- 39 significant digits, and numbers outside 1E-130 .. 9.99E+125
SELECT ddb_to_typed_json('{"a": 123456789012345678901234567890123456789}');
SELECT ddb_to_typed_json('{"a": 1e126}');
SELECT ddb_to_typed_json('{"a": 1e-131}');
-- the extremes themselves are fine
SELECT ddb_validate_item('{"a": 9.9999999999999999999999999999999999999e125, "b": -1e-130, "c": 0}');
SELECT ddb_from_typed_json('{"a": {"N": "12345678901234567890123456789012345678.9"}}');
-- typed JSON that is not well formed
SELECT ddb_from_typed_json('{"a": {"X": "1"}}');
SELECT ddb_from_typed_json('{"a": {}}');
SELECT ddb_from_typed_json('{"a": {"S": "x", "N": "1"}}');
SELECT ddb_from_typed_json('{"a": {"N": "one"}}');
SELECT ddb_from_typed_json('{"a": {"N": "1.2.3"}}');
SELECT ddb_from_typed_json('{"a": {"N": " 1"}}');
-- (number strings may carry a sign, omit digits on one side of the point,
-- and use exponents; huge exponents are range errors, except for zero)
SELECT ddb_from_typed_json('{"a": {"N": "+1"}, "b": {"N": "5."}, "c": {"N": ".5"}, "d": {"N": "-2E-3"}, "e": {"N": "0e99999"}}');
SELECT ddb_from_typed_json('{"a": {"N": "1e99999"}}');
SELECT ddb_from_typed_json('{"a": {"N": "-1e-99999"}}');
-- exponents are read by value: leading zeros do not make them large
SELECT ddb_from_typed_json('{"a": {"N": "1e0001"}, "b": {"N": "-5E-0003"}, "c": {"N": "2e+000002"}}');
SELECT ddb_from_typed_json('{"a": {"N": "1e000126"}}');
SELECT ddb_from_typed_json('{"a": {"N": 1}}');
SELECT ddb_from_typed_json('{"a": {"NULL": false}}');
SELECT ddb_from_typed_json('{"a": "plain"}');
SELECT ddb_from_typed_json('[1]');
-- an item must be an object, and nesting is limited to 32 levels
SELECT ddb_to_typed_json('"just a string"');
SELECT ddb_validate_item(('{"a": ' || repeat('[', 33) || repeat(']', 33) || '}')::jsonb);
SELECT ddb_validate_item(('{"a": ' || repeat('[', 32) || repeat(']', 32) || '}')::jsonb);
-- (only lists and maps are levels: a scalar or a set inside 32 lists is fine)
SELECT ddb_validate_item(('{"a": ' || repeat('[', 32) || '{"$SS": ["x"]}' || repeat(']', 32) || '}')::jsonb);
SELECT ddb_from_typed_json(('{"a": ' || repeat('{"L": [', 33) || '{"N": "1"}' || repeat(']}', 33) || '}')::jsonb);
-- DynamoDB's own wording for sets: each set type has its messages, and a
-- string or binary set's duplicates are quoted with the whole set.
SELECT ddb_validate_item('{"b": {"$BS": []}}');
SELECT ddb_validate_item('{"s": {"$SS": ["x", "y", "x"]}}');
SELECT ddb_validate_item('{"b": {"$BS": ["AQ==", "Ag==", "AQ=="]}}');
-- an empty number string has a message of its own
SELECT ddb_from_typed_json('{"a": {"N": ""}}');
-- Attribute names are 1 to 65,535 bytes, at every level of an item.
SELECT length(ddb_to_typed_json(jsonb_build_object(repeat('n', 65535), 1,
                                'm', jsonb_build_object(repeat('n', 65535), 1)))::text);
SELECT ddb_validate_item(jsonb_build_object(repeat('n', 65536), 1));
SELECT ddb_validate_item(jsonb_build_object('m', jsonb_build_object('l', jsonb_build_array(
                         jsonb_build_object(repeat('n', 65536), 1)))));
SELECT ddb_from_typed_json(jsonb_build_object('m', jsonb_build_object('M',
                           jsonb_build_object(repeat('n', 65536), '{"N": "1"}'::jsonb))));
