-- Plain SQL writes check the item column (ddb_tuple.c check_item_column,
-- ddb_types.c ddb_validate_item_column): INSERT, INSERT ... SELECT, COPY on
-- both paths, UPDATE of the item column, MERGE, and tables with a GSI all
-- refuse an item the item API would refuse, with the item API's
-- ValidationException text and SQLSTATE DB001, and change nothing.  Good
-- items (nested maps, sets, binary, numbers at DynamoDB's limits, the size
-- limit counted with the keys) are still accepted and read back by the
-- item functions.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

CREATE TABLE cpy (pk text, sk numeric, item jsonb) USING ddb;
INSERT INTO cpy VALUES ('a', 1, '{"x": 1}');

-- The table's state, to show that a refused write changed nothing.
CREATE FUNCTION cpy_state(t regclass DEFAULT 'cpy') RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
	EXECUTE format('SELECT count(*) || '' rows '' || coalesce(md5(string_agg(pk || '':'' || sk || '':'' || coalesce(item::text, ''-''), '','' ORDER BY pk, sk)), '''') FROM %s', t) INTO r;
	RETURN r;
END $$;

-- One value for each rule the item API checks.
CREATE TABLE bad (id int, why text, v jsonb);
INSERT INTO bad VALUES
 (1, 'array', '[1]'),
 (2, 'string', '"s"'),
 (3, 'number', '5'),
 (4, 'partition key named', '{"pk": "zz"}'),
 (5, 'sort key named', '{"y": 1, "sk": 1}'),
 (6, 'bad base64', '{"b": {"$B": "!!"}}'),
 (7, '$B not a string', '{"b": {"$B": 5}}'),
 (8, 'empty SS', '{"s": {"$SS": []}}'),
 (9, 'duplicate SS', '{"s": {"$SS": ["a", "a"]}}'),
 (10, 'duplicate NS', '{"s": {"$NS": [1, 1.0]}}'),
 (11, 'NS of strings', '{"s": {"$NS": ["1"]}}'),
 (12, 'nested bad BS', '{"m": {"l": [{"$BS": ["AA==", "AA=="]}]}}'),
 (13, 'overflow', '{"n": 1e126}'),
 (14, 'underflow', '{"n": 1e-131}'),
 (15, '39 digits', '{"n": 123456789012345678901234567890123456789}'),
 (16, 'empty name', '{"": 1}'),
 (17, 'empty nested name', '{"m": {"": 1}}'),
 (18, '$M not an object', '{"m": {"$M": [1]}}'),
 (19, '$S not parts', '{"s": {"$S": "x"}}'),
 (20, 'too deep', jsonb_build_object('l', (repeat('[', 33) || repeat(']', 33))::jsonb)),
 (21, 'too large', jsonb_build_object('d', repeat('x', 409600))),
 -- the item column alone fits: 409600 - 1 (the name d) bytes; with the
 -- keys (pk "a", sk 20) it does not
 (22, 'too large with the keys', jsonb_build_object('d', repeat('x', 409599)));

-- Run a statement with each bad value ($1) and report its SQLSTATE and
-- message, one line per value.  A statement that succeeds is rolled back
-- (and reported), so every value meets the same table.
CREATE FUNCTION try_each(stmt text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE b record;
BEGIN
	FOR b IN SELECT * FROM bad ORDER BY id LOOP
		BEGIN
			EXECUTE stmt USING b.v;
			RAISE EXCEPTION 'accepted';
		EXCEPTION WHEN OTHERS THEN
			RETURN NEXT b.id || ' ' || b.why || ': ' || SQLSTATE || ' ' || SQLERRM;
		END;
	END LOOP;
END $$;

SELECT cpy_state() AS before \gset
-- INSERT: every value refused with the item API's error
SELECT try_each($$INSERT INTO cpy VALUES ('a', 20, $1)$$);
SELECT cpy_state() = :'before' AS unchanged;

-- the same errors from the item API itself (the key added to the item)
CREATE FUNCTION api_error(v jsonb) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	PERFORM ddb_put_item('cpy', jsonb_build_object('pk', 'a', 'sk', 20) || v);
	RAISE EXCEPTION 'accepted';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ' ' || SQLERRM;
END $$;
CREATE FUNCTION sql_error(v jsonb) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO cpy VALUES ('a', 20, v);
	RAISE EXCEPTION 'accepted';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ' ' || SQLERRM;
END $$;
-- the values that are items to the API too (not key-named, not a non-object)
SELECT count(*) AS compared FROM bad
WHERE jsonb_typeof(v) = 'object' AND NOT v ?| ARRAY['pk', 'sk'];
SELECT id, why FROM bad
WHERE jsonb_typeof(v) = 'object' AND NOT v ?| ARRAY['pk', 'sk']
  AND api_error(v) IS DISTINCT FROM sql_error(v);
SELECT cpy_state() = :'before' AS unchanged;

-- INSERT ... SELECT: one bad row among good ones stops the statement
INSERT INTO cpy SELECT 'b', i, '{"ok": true}'::jsonb FROM generate_series(1, 3) i
UNION ALL SELECT 'b', 4, '{"b": {"$B": "!!"}}';
SELECT try_each($$INSERT INTO cpy SELECT 'b', i, CASE WHEN i = 2 THEN $1 ELSE '{"ok": true}'::jsonb END FROM generate_series(1, 3) i$$);
SELECT cpy_state() = :'before' AS unchanged;

-- COPY, from a file the server writes into its data directory: a good row
-- then the bad one
SELECT current_setting('data_directory') || '/item_column.tsv' AS copyfile \gset
CREATE FUNCTION try_copy(bulk bool) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE b record;
	f text := current_setting('data_directory') || '/item_column.tsv';
BEGIN
	FOR b IN SELECT * FROM bad ORDER BY id LOOP
		EXECUTE format('COPY (SELECT %L, 20, %L::jsonb UNION ALL SELECT %L, 21, %L::jsonb) TO %L',
					   'a', '{"ok": 1}', 'a', b.v, f);
		BEGIN
			IF bulk THEN
				-- created in this subtransaction: COPY spools and builds
				CREATE TABLE cpy_bulk (pk text, sk numeric, item jsonb) USING ddb;
				EXECUTE format('COPY cpy_bulk FROM %L', f);
			ELSE
				-- the row path: the table exists
				EXECUTE format('COPY cpy FROM %L', f);
			END IF;
			RAISE EXCEPTION 'accepted';
		EXCEPTION WHEN OTHERS THEN
			RETURN NEXT b.id || ' ' || b.why || ': ' || SQLSTATE || ' ' || SQLERRM;
		END;
	END LOOP;
END $$;
SELECT try_copy(false);
SELECT cpy_state() = :'before' AS unchanged;
SELECT try_copy(true);
SELECT to_regclass('cpy_bulk') IS NULL AS no_bulk_table;

-- the bulk path was the one taken: a good file builds the tree bottom-up
COPY (SELECT 'a', 20, '{"ok": 1}'::jsonb) TO :'copyfile';
BEGIN;
CREATE TABLE cpy_bulk (pk text, sk numeric, item jsonb) USING ddb;
SET LOCAL client_min_messages = debug1;
COPY cpy_bulk FROM :'copyfile';
RESET client_min_messages;
ROLLBACK;

-- UPDATE of the item column
SELECT try_each($$UPDATE cpy SET item = $1 WHERE pk = 'a' AND sk = 1$$);
SELECT try_each($$UPDATE cpy SET item = item || $1 WHERE pk = 'a'$$);
SELECT cpy_state() = :'before' AS unchanged;

-- MERGE: the insert action and the update action
SELECT try_each($$MERGE INTO cpy c USING (SELECT 'a' AS pk, 20 AS sk) s ON c.pk = s.pk AND c.sk = s.sk
	WHEN NOT MATCHED THEN INSERT VALUES (s.pk, s.sk, $1)$$);
SELECT try_each($$MERGE INTO cpy c USING (SELECT 'a' AS pk, 1 AS sk) s ON c.pk = s.pk AND c.sk = s.sk
	WHEN MATCHED THEN UPDATE SET item = $1$$);
SELECT cpy_state() = :'before' AS unchanged;

-- A table with a GSI: refused before the index is touched
CREATE TABLE g (pk text, sk numeric, item jsonb) USING ddb;
SELECT ddb_create_gsi('g', 'ByColor', 'color') IS NOT NULL AS gsi;
INSERT INTO g VALUES ('a', 1, '{"color": "red"}');
SELECT cpy_state('g') AS gbefore \gset
SELECT try_each($$INSERT INTO g VALUES ('a', 20, $1 || '{"color": "blue"}')$$);
SELECT try_each($$UPDATE g SET item = $1 || '{"color": "blue"}' WHERE pk = 'a'$$);
SELECT cpy_state('g') = :'gbefore' AS unchanged;
SELECT count(*) AS blue FROM ddb_query('g', 'color = :c', '{":c": "blue"}', index_name => 'ByColor');
SELECT count(*) AS red FROM ddb_query('g', 'color = :c', '{":c": "red"}', index_name => 'ByColor');

-- Good items are accepted and read back whole by the item functions
INSERT INTO cpy VALUES
 ('c', 1, '{"m": {"a": {"b": [1, "x", {"c": null}]}, "t": true}}'),
 ('c', 2, '{"ss": {"$SS": ["a", "b"]}, "ns": {"$NS": [1, 2.5]}, "bs": {"$BS": ["AA==", "AQ=="]}}'),
 ('c', 3, '{"b": {"$B": "AAECAw=="}, "e": {"$B": ""}, "s": {"$S": ["a", "b"]}}'),
 ('c', 4, '{"max": 9.9999999999999999999999999999999999999E+125, "min": -9.9999999999999999999999999999999999999E+125, "tiny": 1E-130, "digits": 12345678901234567890123456789012345678, "zero": 0}'),
 ('c', 5, NULL),
 ('c', 6, '{}'),
 ('c', 7, jsonb_build_object('l', (repeat('[', 32) || repeat(']', 32))::jsonb));
SELECT ddb_get_item('cpy', jsonb_build_object('pk', 'c', 'sk', i)) FROM generate_series(1, 7) i WHERE i <> 4;
SELECT ddb_get_item('cpy', '{"pk": "c", "sk": 4}') - 'pk' - 'sk' = item AS same_numbers
FROM cpy WHERE pk = 'c' AND sk = 4;
SELECT count(*) FROM ddb_query('cpy', 'pk = :p', '{":p": "c"}');
-- The check counts sizes as ddb_item_size counts the item API's items:
-- each good item, padded to exactly 400 KB with its keys, is accepted, and
-- one byte more is refused (every type: maps, lists, sets, binary, U+0000
-- strings, numbers)
CREATE FUNCTION padded(item jsonb, s numeric, extra int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	size int := ddb_item_size(coalesce(item, '{}') || jsonb_build_object('pk', 'd', 'sk', s));
BEGIN
	-- the attribute "pad" adds 3 bytes of name and its string
	INSERT INTO cpy VALUES ('d', s, coalesce(item, '{}') ||
		jsonb_build_object('pad', repeat('x', 409600 - size - 3 + extra)));
	RAISE EXCEPTION 'accepted';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLERRM;
END $$;
SELECT sk, padded(item, sk, 0) AS at_limit, padded(item, sk, 1) AS one_more
FROM cpy WHERE pk = 'c' ORDER BY sk;
-- at the size limit with the keys counted: 409600 - 3 (pk and "a") - 4 (sk
-- and 30, one digit: 2 bytes) - 1 (the name d)
INSERT INTO cpy VALUES ('a', 30, jsonb_build_object('d', repeat('x', 409600 - 3 - 4 - 1)));
SELECT ddb_item_size(ddb_get_item('cpy', '{"pk": "a", "sk": 30}'));
INSERT INTO cpy VALUES ('a', 31, jsonb_build_object('d', repeat('x', 409600 - 3 - 4 - 1 + 1)));

-- Key columns are checked by ddb's key rules with PostgreSQL's SQLSTATEs:
-- an empty string or binary key is invalid_parameter_value (22023), a key
-- over DynamoDB's length program_limit_exceeded (54000), from INSERT,
-- UPDATE and COPY alike; the item API says ValidationException (DB001)
CREATE TABLE kcol (pk text, sk bytea, item jsonb) USING ddb;
INSERT INTO kcol VALUES ('a', '\x01', NULL);
SELECT cpy_state('kcol') AS kbefore \gset
CREATE FUNCTION key_error(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE stmt;
	RETURN 'accepted';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE || ' ' || SQLERRM;
END $$;
SELECT stmt, key_error(stmt) FROM (VALUES
	($$INSERT INTO kcol VALUES ('', '\x01', NULL)$$),
	($$INSERT INTO kcol VALUES ('b', '', NULL)$$),
	($$INSERT INTO kcol VALUES (repeat('x', 2049), '\x01', NULL)$$),
	($$INSERT INTO kcol VALUES ('b', decode(repeat('00', 1025), 'hex'), NULL)$$),
	($$UPDATE kcol SET pk = ''$$),
	($$UPDATE kcol SET sk = decode(repeat('00', 1025), 'hex')$$),
	($$COPY kcol FROM PROGRAM 'printf "\t\\\\x01\t{}\n"'$$),
	($$SELECT ddb_put_item('kcol', '{"pk": "", "sk": {"$B": "AQ=="}}')$$),
	($$SELECT ddb_put_item('kcol', jsonb_build_object('pk', repeat('x', 2049), 'sk', '{"$B": "AQ=="}'::jsonb))$$)
) v(stmt);
SELECT cpy_state('kcol') = :'kbefore' AS unchanged;
DROP TABLE kcol;
DROP FUNCTION key_error;

-- A bad row in a COPY is reported where the rows buffered with it were
-- handed to the table (1,000 rows a batch), not at its own line: row 5 of
-- 2,500 at line 1000, on the row path and on the bulk path
SELECT cpy_state() AS before_copy \gset
COPY cpy FROM PROGRAM 'seq 1 2500 | awk ''{ print "e\t" $1 "\t" ($1 == 5 ? "[1]" : "{}") }''';
BEGIN;
CREATE TABLE cpy_bulk (pk text, sk numeric, item jsonb) USING ddb;
COPY cpy_bulk FROM PROGRAM 'seq 1 2500 | awk ''{ print "e\t" $1 "\t" ($1 == 5 ? "[1]" : "{}") }''';
ROLLBACK;
SELECT cpy_state() = :'before_copy' AS unchanged;

-- ALTER TABLE ... SET ACCESS METHOD ddb checks the rows it moves
CREATE TABLE h (pk text NOT NULL, sk numeric NOT NULL, item jsonb);
INSERT INTO h VALUES ('a', 1, '{"ok": 1}'), ('a', 2, '{"pk": "b"}');
ALTER TABLE h SET ACCESS METHOD ddb;
SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = 'h'::regclass;
-- and a duplicate key among them names the table, not the transient
-- relation the rewrite fills
UPDATE h SET item = '{"ok": 2}' WHERE sk = 2;
INSERT INTO h VALUES ('a', 1.0, '{"ok": 3}');
ALTER TABLE h SET ACCESS METHOD ddb;
DELETE FROM h WHERE item = '{"ok": 3}';
ALTER TABLE h SET ACCESS METHOD ddb;
SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = 'h'::regclass;

-- Numbers are stored as DynamoDB gives them back: "Leading and trailing
-- zeroes are trimmed" (HowItWorks.DataTypes).  Written with trailing zeros
-- (1.50, 0.0, 3.000), in lists, maps and number sets, by plain SQL (INSERT,
-- UPDATE, COPY) and by the API (typed PutItem, ddb_put_item's document
-- form, BatchWriteItem, UpdateItem's values and arithmetic), they read
-- back trimmed: from SELECT, ddb_get_item, a Query of a GSI, GetItem.  (Before,
-- the document form showed them as written, and typed JSON only trimmed
-- them on the way out.)  A plain SQL write's RETURNING shows the row as
-- written, as it does for a numeric key column.
CREATE TABLE nums (pk text, item jsonb) USING ddb;
SELECT ddb_create_gsi('nums', 'ByC', 'c') IS NOT NULL AS gsi;
INSERT INTO nums VALUES ('sql', '{"c": "x", "n": 1.50, "z": 0.0, "neg": -2.500,
  "l": [2.50, {"m": 3.000}], "ns": {"$NS": [1.0, 2.50]}, "s": "1.50", "i": 100, "e": 1E+2, "f": 0.001}')
  RETURNING item;
INSERT INTO nums VALUES ('upd', '{"c": "x"}');
UPDATE nums SET item = item || '{"n": 7.10}' WHERE pk = 'upd';
COPY nums FROM stdin;
copy	{"c": "x", "n": 8.00}
\.
SELECT ddb_api('PutItem', '{"TableName": "nums", "Item": {"pk": {"S": "typed"}, "c": {"S": "x"},
  "n": {"N": "1.50"}, "z": {"N": "-0.00"}, "ns": {"NS": ["1.0", "2.50"]}, "l": {"L": [{"N": "2.50"}]}}}');
SELECT ddb_put_item('nums', '{"pk": "doc", "c": "x", "n": 1.50, "m": {"k": [0.0]}}');
SELECT ddb_api('BatchWriteItem', '{"RequestItems": {"nums": [{"PutRequest": {"Item":
  {"pk": {"S": "batch"}, "c": {"S": "x"}, "n": {"N": "9.90"}}}}]}}');
SELECT ddb_update_item('nums', '{"pk": "doc"}', 'SET n = n + :h, k = :k', NULL, NULL,
  '{":h": 1.50, ":k": 7.0}', 'UPDATED_NEW');
SELECT ddb_api('UpdateItem', '{"TableName": "nums", "Key": {"pk": {"S": "typed"}},
  "UpdateExpression": "SET n = n + :h", "ExpressionAttributeValues": {":h": {"N": "1.50"}},
  "ReturnValues": "ALL_NEW"}') -> 'Attributes' -> 'n' AS typed_sum;
SELECT pk, item FROM nums ORDER BY pk;
SELECT ddb_get_item('nums', '{"pk": "sql"}');
SELECT q ->> 'pk' AS pk, q -> 'n' AS n_in_gsi
  FROM ddb_query('nums', 'c = :c', '{":c": "x"}', index_name => 'ByC') q ORDER BY 1;
SELECT ddb_api('GetItem', '{"TableName": "nums", "Key": {"pk": {"S": "sql"}}}') AS typed;
SELECT v ->> 'live' AS live FROM ddb_verify('nums') v;
SELECT ddb_verify_gsi('nums');
DROP TABLE nums;

SELECT v ->> 'live' AS live FROM ddb_verify('cpy') v;
SELECT v ->> 'live' AS live FROM ddb_verify('g') v;
DROP FUNCTION cpy_state, try_each, try_copy, api_error, sql_error, padded;
DROP TABLE cpy, g, h, bad;
