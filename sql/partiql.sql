-- ExecuteStatement: PartiQL statements through ddb_api, translated into the
-- Query, Scan, PutItem, UpdateItem and DeleteItem requests ddb already runs
-- (src/api/ddb_partiql.c), with DynamoDB's answers and errors.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;
\set VERBOSITY terse
CREATE SCHEMA partiql;
SET ddb.schema = partiql;
SET search_path = partiql, public;

CREATE FUNCTION pq(statement text, extra jsonb DEFAULT '{}') RETURNS jsonb
LANGUAGE sql AS $$
  SELECT ddb_api('ExecuteStatement', jsonb_build_object('Statement', statement) || extra)
$$;

SELECT ddb_api('CreateTable', '{"TableName": "Music",
  "AttributeDefinitions": [{"AttributeName": "Artist", "AttributeType": "S"},
                           {"AttributeName": "Song", "AttributeType": "S"},
                           {"AttributeName": "Year", "AttributeType": "N"}],
  "KeySchema": [{"AttributeName": "Artist", "KeyType": "HASH"},
                {"AttributeName": "Song", "KeyType": "RANGE"}],
  "GlobalSecondaryIndexes": [{"IndexName": "ByYear",
    "KeySchema": [{"AttributeName": "Year", "KeyType": "HASH"},
                  {"AttributeName": "Song", "KeyType": "RANGE"}],
    "Projection": {"ProjectionType": "ALL"}}],
  "BillingMode": "PAY_PER_REQUEST"}') IS NOT NULL AS created;

-- INSERT: literals of every kind; the answer is {}
SELECT pq($$INSERT INTO "Music" VALUE {'Artist': 'Ada', 'Song': 'Engine', 'Year': 1843,
  'tags': <<'b', 'a'>>, 'scores': <<3, -1.5>>, 'live': true, 'gone': NULL,
  'meta': {'take': [1, 'two', false], 'it''s': 'quoted'}}$$);
-- placeholders, in order, typed AttributeValues (a binary set from them)
SELECT pq($$INSERT INTO Music VALUE {'Artist': ?, 'Song': ?, 'Year': ?, 'bin': <<?, ?>>}$$,
  '{"Parameters": [{"S": "Ada"}, {"S": "Note"}, {"N": "1850"}, {"B": "AQ=="}, {"B": "Ag=="}]}');
SELECT pq($$INSERT INTO Music VALUE {'Artist': 'Ada', 'Song': 'Poem', 'Year': 1850}$$);
SELECT pq($$INSERT INTO Music VALUE {'Artist': 'Bob', 'Song': 'Blues', 'Year': 1843}$$);
SELECT pq($$INSERT INTO Music VALUE ?$$,
  '{"Parameters": [{"M": {"Artist": {"S": "Cy"}, "Song": {"S": "Cant"}, "Year": {"N": "1900"}}}]}');
-- the same key again: DuplicateItemException; nothing changed
SELECT pq($$INSERT INTO Music VALUE {'Artist': 'Ada', 'Song': 'Engine'}$$);
SELECT ddb_api('GetItem', '{"TableName": "Music", "Key": {"Artist": {"S": "Ada"}, "Song": {"S": "Engine"}}}');
-- an item without its key: PutItem's own message
SELECT pq($$INSERT INTO Music VALUE {'Artist': 'Ada'}$$);

-- a map names each attribute once (ddb's choice: DynamoDB documents
-- nothing; taking the last silently lost the first)
SELECT pq($$INSERT INTO Music VALUE {'Artist': 'Dup', 'Song': 's', 'x': 1, 'x': 2}$$);
SELECT pq($$UPDATE Music SET m = {'a': {'y': 1, 'y': 2}} WHERE Artist = 'Ada' AND Song = 'Engine'$$);
SELECT pq($$SELECT * FROM Music WHERE Artist = 'Dup'$$);

-- SELECT with the partition key's equality: a Query, in sort key order
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Ada'$$);
-- ORDER BY the sort key DESC: the Query backwards
SELECT pq($$SELECT Song FROM Music WHERE Artist = ? ORDER BY Song DESC$$, '{"Parameters": [{"S": "Ada"}]}');
-- key condition on the sort key, the rest a filter; paths project
SELECT pq($$SELECT Song, meta.take[1] FROM Music WHERE Artist = 'Ada' AND Song BETWEEN 'A' AND 'O' AND "Year" < 1845$$);
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Ada' AND begins_with(Song, 'P')$$);
-- IN on the partition key: one Query per value
SELECT pq($$SELECT Artist, Song FROM Music WHERE Artist IN ['Bob', 'Cy', 'Ada'] AND "Year" <> 1850$$);
-- IN values are one Query per distinct value: 1843, 1843.0 and 18.43e2
-- are one number, whose items come once
SELECT pq($$SELECT Song FROM Music."ByYear" WHERE "Year" IN [1843, 1843.0, 18.43e2]$$) AS in_by_value;
-- anything else: a Scan with the whole WHERE as its filter
SELECT pq($$SELECT Song FROM Music WHERE "Year" = 1843 AND (live = true OR Artist = 'Bob')$$);
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Ada' AND (Song = 'Note' OR Song = 'Poem')$$);
SELECT jsonb_array_length(pq('SELECT * FROM Music')->'Items') AS all_items;
-- conditions: IS [NOT] MISSING, IS NULL, NOT, contains, size, attribute_type, <> and !=
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Ada' AND tags IS NOT MISSING$$);
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Ada' AND tags IS MISSING AND bin IS MISSING$$);
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Ada' AND gone IS NULL$$);
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Ada' AND "Year" IS NOT NULL AND NOT live = true$$);
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Ada' AND contains(tags, 'a') AND size(tags) = 2$$);
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Ada' AND attribute_type(bin, 'BS') AND Song != 'x'$$);
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Ada' AND "Year" NOT IN [1843] AND NOT "Year" BETWEEN 1 AND 2$$);
-- an index: "Table"."Index", with the index's keys
SELECT pq($$SELECT Artist, Song FROM "Music"."ByYear" WHERE "Year" = 1850 ORDER BY Song DESC$$);
-- ORDER BY with several partition keys (IN or OR): by the partition key,
-- which DynamoDB requires there, then the sort key; the Queries run in the
-- partition key's order, each in the sort key's
SELECT pq($$SELECT Artist, Song FROM Music WHERE Artist IN ['Cy', 'Bob', 'Ada'] ORDER BY Artist$$);
SELECT pq($$SELECT Artist, Song FROM Music WHERE Artist IN ['Ada', 'Cy', 'Bob'] ORDER BY Artist DESC, Song DESC$$);
SELECT pq($$SELECT Artist, Song FROM Music WHERE Artist = 'Bob' OR Artist = ? ORDER BY Artist ASC, Song DESC$$,
  '{"Parameters": [{"S": "Ada"}]}');
SELECT pq($$SELECT Song, "Year" FROM "Music"."ByYear" WHERE "Year" IN [1843, 1900, 1850] ORDER BY "Year" DESC$$);
-- read in pages: the order holds across them, each item once
SELECT pq($$SELECT Artist, Song FROM Music WHERE Artist IN ['Cy', 'Bob', 'Ada'] ORDER BY Artist DESC$$,
  '{"Limit": 2}') AS ord1 \gset
SELECT :'ord1'::jsonb - 'NextToken' AS ord_page1;
SELECT pq($$SELECT Artist, Song FROM Music WHERE Artist IN ['Cy', 'Bob', 'Ada'] ORDER BY Artist DESC$$,
  jsonb_build_object('Limit', 2, 'NextToken', :'ord1'::jsonb->>'NextToken')) AS ord2 \gset
SELECT :'ord2'::jsonb - 'NextToken' AS ord_page2;
SELECT pq($$SELECT Artist, Song FROM Music WHERE Artist IN ['Cy', 'Bob', 'Ada'] ORDER BY Artist DESC$$,
  jsonb_build_object('NextToken', :'ord2'::jsonb->>'NextToken')) AS ord_page3;
-- without the partition key in ORDER BY: DynamoDB's ValidationException
-- (values as written count, a repeated one too); after the sort key the
-- partitions' items would need merging, which ddb does not do
SELECT pq($$SELECT Song FROM Music WHERE Artist IN ['Bob', 'Ada'] ORDER BY Song$$);
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Bob' OR Artist = 'Ada' ORDER BY Song DESC$$);
SELECT pq($$SELECT Song FROM Music WHERE Artist IN ['Ada', 'Ada'] ORDER BY Song$$);
SELECT pq($$SELECT Song FROM Music WHERE Artist IN ['Bob', 'Ada'] ORDER BY Song, Artist$$);

-- names and strings a translation could confuse: placeholders' own
-- spellings, a space, a dot, a double quote; backslashes and quotes
SELECT pq($$INSERT INTO Music VALUE {'Artist': 'Odd', 'Song': 'names', '#n0': 'hash', ':v0': 'colon',
  'a b': 'space', 'x.y': 'dot', 'q"t': 'dq', 'bs': 'back\slash \\ and ''quote'' "dq"'}$$);
SELECT pq($$SELECT "#n0", ":v0", "a b", "x.y", "q""t", bs FROM Music
  WHERE Artist = 'Odd' AND "#n0" = 'hash' AND ":v0" = 'colon' AND "a b" = 'space'
  AND "x.y" = 'dot' AND "q""t" = 'dq' AND bs = 'back\slash \\ and ''quote'' "dq"'$$);
SELECT pq($$UPDATE Music SET "x.y" = 'dot2', "q""t" = ? WHERE Artist = 'Odd' AND Song = 'names'
  AND "#n0" = 'hash' RETURNING MODIFIED NEW *$$, '{"Parameters": [{"S": "\\\"\\u00e9"}]}');
-- a list index in a path: projected, compared, SET and REMOVEd
SELECT pq($$INSERT INTO Music VALUE {'Artist': 'Odd', 'Song': 'list', 'l': [10, [20, 21], {'m': 30}]}$$);
SELECT pq($$SELECT l[0], l[1][1], l[2].m FROM Music WHERE Artist = 'Odd' AND l[1][0] = 20$$);
SELECT pq($$UPDATE Music SET l[1][1] = 22 REMOVE l[0] WHERE Artist = 'Odd' AND Song = 'list' RETURNING ALL NEW *$$);
-- ORDER BY DESC read in pages: backwards, each item once
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Ada' ORDER BY Song DESC$$, '{"Limit": 2}') AS desc1 \gset
SELECT :'desc1'::jsonb - 'NextToken' AS desc_page1;
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Ada' ORDER BY Song DESC$$,
  jsonb_build_object('Limit', 2, 'NextToken', :'desc1'::jsonb->>'NextToken')) AS desc_page2;
SELECT pq($$DELETE FROM Music WHERE Artist = 'Odd' AND Song = 'names'$$);
SELECT pq($$DELETE FROM Music WHERE Artist = 'Odd' AND Song = 'list'$$);

-- Limit and NextToken: one page at a time, the token carrying the rest
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Ada'$$, '{"Limit": 2}') - 'NextToken' AS page1;
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Ada'$$, '{"Limit": 2}')->>'NextToken' AS tok \gset
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Ada'$$, jsonb_build_object('Limit', 2, 'NextToken', :'tok')) AS page2;
-- across the Queries of an IN list, and over a Scan
SELECT pq($$SELECT Song FROM Music WHERE Artist IN ['Bob', 'Ada']$$, '{"Limit": 1}')->>'NextToken' AS tok \gset
SELECT pq($$SELECT Song FROM Music WHERE Artist IN ['Bob', 'Ada']$$, jsonb_build_object('Limit', 2, 'NextToken', :'tok')) - 'NextToken' AS in_page2;
SELECT pq('SELECT Song FROM Music', '{"Limit": 4}')->>'NextToken' AS tok \gset
SELECT jsonb_array_length(pq('SELECT Song FROM Music', jsonb_build_object('NextToken', :'tok'))->'Items') AS scan_rest;
-- a token of another statement, or not a token at all
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Bob'$$, jsonb_build_object('NextToken', :'tok'));
SELECT pq($$SELECT Song FROM Music$$, '{"NextToken": "bm90IGEgdG9rZW4="}');
-- a token edited: its start key, its Query (4294967296 once wrapped to 0)
-- or its tag; each is refused (the token is signed)
CREATE FUNCTION edit_token(tok text, pattern text, replacement text) RETURNS text
LANGUAGE sql AS $$
  SELECT translate(encode(convert_to(regexp_replace(convert_from(decode(tok, 'base64'), 'UTF8'),
                                                    pattern, replacement), 'UTF8'), 'base64'), E'\n', '')
$$;
SELECT pq($$SELECT Song FROM Music WHERE Artist IN ['Bob', 'Ada']$$, '{"Limit": 1}')->>'NextToken' AS tok \gset
SELECT pq($$SELECT Song FROM Music WHERE Artist IN ['Bob', 'Ada']$$,
  jsonb_build_object('NextToken', edit_token(:'tok', '"Blues"', '"Aaa"')));
SELECT pq($$SELECT Song FROM Music WHERE Artist IN ['Bob', 'Ada']$$,
  jsonb_build_object('NextToken', edit_token(:'tok', '"i":0', '"i":4294967296')));
SELECT pq($$SELECT Song FROM Music WHERE Artist IN ['Bob', 'Ada']$$,
  jsonb_build_object('NextToken', edit_token(:'tok', '"i":0', '"i":1')));
SELECT pq($$SELECT Song FROM Music WHERE Artist IN ['Bob', 'Ada']$$,
  jsonb_build_object('NextToken', edit_token(:'tok', '.$', 'x')));
-- the unedited token still reads on
SELECT pq($$SELECT Song FROM Music WHERE Artist IN ['Bob', 'Ada']$$,
  jsonb_build_object('NextToken', :'tok')) - 'NextToken' AS unedited;
-- IN takes at most 50 partition key values (ql-operators); 50 are one
-- Query each
SELECT pq('SELECT * FROM Music WHERE Artist IN [' ||
  (SELECT string_agg(format('''a%s''', i), ', ') FROM generate_series(1, 51) i) || ']');
SELECT pq('SELECT * FROM Music WHERE Artist IN [' ||
  (SELECT string_agg(format('''a%s''', i), ', ') FROM generate_series(1, 50) i) || ']');
-- Each IN value is parsed once, then the values are de-duplicated and
-- sorted (before, a value's text was parsed again at every comparison:
-- some 2,500 parses for 50 values).  The answer is the same: 50 values of
-- 2 KB (parameters: a statement is at most 8192 characters), 25 distinct
-- ones twice over, in ORDER BY's order, each partition's items once; and
-- numbers written several ways are one value each.
SELECT ddb_api('CreateTable', '{"TableName": "InList",
  "AttributeDefinitions": [{"AttributeName": "k", "AttributeType": "S"}],
  "KeySchema": [{"AttributeName": "k", "KeyType": "HASH"}],
  "BillingMode": "PAY_PER_REQUEST"}') IS NOT NULL AS created;
SELECT count(pq('INSERT INTO InList VALUE {''k'': ?}',
  jsonb_build_object('Parameters', jsonb_build_array(jsonb_build_object('S', repeat('k', 2000) || i)))))
  FROM generate_series(10, 30, 5) i;
SELECT array_agg(right(i.v->'k'->>'S', 2) ORDER BY i.n) AS desc_once
  FROM jsonb_array_elements(pq('SELECT k FROM InList WHERE k IN [' ||
    (SELECT string_agg('?', ', ') FROM generate_series(1, 50)) || '] ORDER BY k DESC',
    jsonb_build_object('Parameters', (SELECT jsonb_agg(jsonb_build_object('S', repeat('k', 2000) || (10 + i % 25)))
                                      FROM generate_series(1, 50) i)))->'Items') WITH ORDINALITY i(v, n);
SELECT pq($$SELECT Song, "Year" FROM "Music"."ByYear"
  WHERE "Year" IN [1900, 1850.0, 19e2, 18.5e2, 1843, 1843.000, 0.01843e5] ORDER BY "Year" DESC$$) AS numbers_once;
SELECT ddb_api('DeleteTable', '{"TableName": "InList"}') IS NOT NULL AS dropped;
-- a partition key value of another type (or an empty string) in an IN
-- list or an OR is the statement's ValidationException, as in 'pk = v',
-- before any Query runs: not an error of the page that reaches it
SELECT pq($$SELECT Song FROM Music WHERE Artist = 1$$);
SELECT pq($$SELECT Song FROM Music WHERE Artist IN ['Ada', 1]$$, '{"Limit": 1}');
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Ada' OR Artist = ?$$,
  '{"Limit": 1, "Parameters": [{"BOOL": true}]}');
SELECT pq($$SELECT Song FROM Music WHERE Artist IN ['Ada', '']$$, '{"Limit": 1}');
-- an index's partition key has its own type
SELECT pq($$SELECT Song FROM Music."ByYear" WHERE "Year" IN [1850, '1843']$$, '{"Limit": 1}');
-- a page holds about 1 MB of items: the Queries of an IN list stop once
-- their items pass it, and NextToken starts the next Query.  Six
-- partitions of three items of 100 KB: four Queries (1.2 MB), then two.
SELECT count(pq('INSERT INTO Music VALUE {''Artist'': ?, ''Song'': ?, ''pad'': ?}',
  jsonb_build_object('Parameters', jsonb_build_array(jsonb_build_object('S', 'Big' || p),
    jsonb_build_object('S', 's' || s), jsonb_build_object('S', repeat('x', 100000))))))
  FROM generate_series(0, 5) p, generate_series(1, 3) s;
CREATE TABLE big_pages (page int, items jsonb, token text);
INSERT INTO big_pages SELECT 1, r->'Items', r->>'NextToken'
  FROM pq($$SELECT Artist, Song, pad FROM Music WHERE Artist IN ['Big0', 'Big1', 'Big2', 'Big3', 'Big4', 'Big5']$$) r;
INSERT INTO big_pages SELECT 2, r->'Items', r->>'NextToken'
  FROM big_pages b, pq($$SELECT Artist, Song, pad FROM Music WHERE Artist IN ['Big0', 'Big1', 'Big2', 'Big3', 'Big4', 'Big5']$$,
                       jsonb_build_object('NextToken', b.token)) r
  WHERE b.page = 1;
SELECT page, jsonb_array_length(items) AS n, token IS NOT NULL AS more,
  (SELECT string_agg(DISTINCT i->'Artist'->>'S', ' ') FROM jsonb_array_elements(items) i) AS artists,
  (SELECT sum(length(i->'pad'->>'S')) FROM jsonb_array_elements(items) i) AS pad_bytes
  FROM big_pages ORDER BY page;
DROP TABLE big_pages;
-- With the 1.8 MB of Big items in the table, ConsumedCapacity tells a
-- Query (the items of its partitions) from a Scan (every item).
CREATE FUNCTION pq_cu(statement text, params jsonb DEFAULT NULL) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT jsonb_build_object('Items', r->'Items',
    'CapacityUnits', r->'ConsumedCapacity'->'CapacityUnits')
  FROM pq(statement, jsonb_strip_nulls(jsonb_build_object('Parameters', params,
                                                          'ReturnConsumedCapacity', 'TOTAL'))) r
$$;
-- an OR of partition key equalities is an IN list: one Query per value
SELECT pq_cu($$SELECT Song FROM Music WHERE Artist = 'Bob' OR Artist = 'Ada'$$) AS or_pk;
SELECT pq_cu($$SELECT Song FROM Music WHERE Artist IN ['Bob', 'Ada']$$) AS in_pk;
SELECT pq_cu($$SELECT Song FROM Music WHERE (Artist = 'Bob' OR Artist = 'Ada' OR Artist = 'Bob') AND "Year" = 1843$$) AS or_pk_and;
-- paged as an IN list's Queries are
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Bob' OR Artist = 'Ada'$$, '{"Limit": 1}') - 'NextToken' AS or_page1;
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Bob' OR Artist = 'Ada'$$, '{"Limit": 1}')->>'NextToken' AS tok \gset
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Bob' OR Artist = 'Ada'$$,
  jsonb_build_object('Limit', 3, 'NextToken', :'tok')) - 'NextToken' AS or_page2;
-- at most 50 values, as IN
SELECT pq('SELECT * FROM Music WHERE ' ||
  (SELECT string_agg(format('Artist = ''a%s''', i), ' OR ') FROM generate_series(1, 51) i));
-- an OR with any other term stays a Scan
SELECT (pq_cu($$SELECT Song FROM Music WHERE Artist = 'Bob' OR Song = 'Poem'$$)->>'CapacityUnits')::numeric > 100 AS or_other_scans;
-- an inclusive range on the sort key, >= and <= (either way round), is
-- one BETWEEN key condition; ORDER BY works on it as on any Query
SELECT pq_cu($$SELECT Song FROM Music WHERE Artist = 'Ada' AND Song >= 'F' AND 'Poem' >= Song$$) AS sk_range;
SELECT pq_cu($$SELECT Song FROM Music WHERE Artist = 'Ada' AND Song >= 'E' AND Song <= 'Poem' ORDER BY Song DESC$$) AS sk_range_desc;
-- a strict bound stays in the filter beside the BETWEEN of both bounds,
-- and any other condition on a key attribute filters the Query: PartiQL's
-- SELECT reads only the partition, as DynamoDB says it does, although the
-- Query API's filter may not name a key attribute
SELECT pq_cu($$SELECT Song FROM Music WHERE Artist = 'Ada' AND Song > 'Engine' AND Song <= 'Poem'$$) AS sk_strict;
SELECT pq_cu($$SELECT Song FROM Music WHERE Artist = 'Ada' AND 'Engine' < Song AND Song < 'Poem'$$) AS sk_both_strict;
SELECT pq_cu($$SELECT Song FROM Music WHERE Artist = 'Ada' AND Song > 'Poem' AND Song < 'Engine'$$) AS sk_crossed;
SELECT pq_cu($$SELECT Song FROM Music WHERE Artist = 'Ada' AND (Song = 'Note' OR Song = 'Poem')$$) AS sk_or;
SELECT pq_cu($$SELECT Song FROM Music WHERE Artist = 'Ada' AND Song <> 'Note' AND Artist = 'Ada'$$) AS sk_not;
-- ... and the Query API still refuses one, also right after a PartiQL
-- Query failed while it was allowed
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Ada' AND Song > 'A' AND attribute_type(Song, 'XX')$$);
SELECT ddb_api('Query', '{"TableName": "Music", "KeyConditionExpression": "Artist = :a",
  "FilterExpression": "Song > :s", "ExpressionAttributeValues": {":a": {"S": "Ada"}, ":s": {"S": "A"}}}');
-- the bounds are compared as the key orders its values: numbers by value
-- (9 before 10, though "10" sorts first as text), binaries by unsigned
-- bytes (AA== is 0x00, /w== 0xff, though "/w==" sorts first as text), and
-- never across types.  Ordered bounds are one Query, whose capacity is
-- partition 'a''s, not the padded 'z''s a Scan would read too; bounds the
-- wrong way round, or of two types, select nothing.
SELECT ddb_api('CreateTable', '{"TableName": "Ranges",
  "AttributeDefinitions": [{"AttributeName": "p", "AttributeType": "S"},
                           {"AttributeName": "n", "AttributeType": "N"},
                           {"AttributeName": "b", "AttributeType": "B"}],
  "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"},
                {"AttributeName": "n", "KeyType": "RANGE"}],
  "GlobalSecondaryIndexes": [{"IndexName": "ByBlob",
    "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"},
                  {"AttributeName": "b", "KeyType": "RANGE"}],
    "Projection": {"ProjectionType": "ALL"}}],
  "BillingMode": "PAY_PER_REQUEST"}') IS NOT NULL AS created;
SELECT pq($$INSERT INTO Ranges VALUE {'p': 'a', 'n': 9, 'b': ?}$$, '{"Parameters": [{"B": "AA=="}]}');
SELECT pq($$INSERT INTO Ranges VALUE {'p': 'a', 'n': 10, 'b': ?}$$, '{"Parameters": [{"B": "/w=="}]}');
SELECT count(pq($$INSERT INTO Ranges VALUE {'p': 'z', 'n': ?, 'b': ?, 'pad': ?}$$,
  jsonb_build_object('Parameters', jsonb_build_array(jsonb_build_object('N', i::text),
    '{"B": "AQ=="}'::jsonb, jsonb_build_object('S', repeat('x', 8000))))))
  FROM generate_series(1, 3) i;
SELECT pq_cu($$SELECT n FROM Ranges WHERE p = 'a' AND n >= 9 AND n <= 10$$) AS n_range;
SELECT pq_cu($$SELECT n FROM Ranges WHERE p = 'a' AND n >= 10 AND n <= 9$$)->'Items' AS n_range_empty;
SELECT pq_cu($$SELECT b FROM Ranges."ByBlob" WHERE p = 'a' AND b >= ? AND b <= ?$$,
  '[{"B": "AA=="}, {"B": "/w=="}]') AS b_range;
SELECT pq_cu($$SELECT b FROM Ranges."ByBlob" WHERE p = 'a' AND b >= ? AND b <= ?$$,
  '[{"B": "/w=="}, {"B": "AA=="}]')->'Items' AS b_range_empty;
SELECT pq_cu($$SELECT n FROM Ranges WHERE p = 'a' AND n >= '9' AND n <= 10$$)->'Items' AS mixed_range_empty;
-- a number literal that is not one, or is out of DynamoDB's range, is the
-- statement's ValidationException with DynamoDB's number message, for its
-- first such literal wherever it stands (a bound, both bounds, a filter,
-- an IN list): not as the ExpressionAttributeValues of the request the
-- statement becomes, whose message named a placeholder (":v1") the
-- statement does not have, nor the second bound before the first
SELECT pq($$SELECT n FROM Ranges WHERE p = 'a' AND n >= 1e$$);
SELECT pq($$SELECT n FROM Ranges WHERE p = 'a' AND n >= 1e AND n <= 2e$$);
SELECT pq($$SELECT n FROM Ranges WHERE p = 'a' AND pad = 1e$$);
SELECT pq($$SELECT n FROM Ranges WHERE p = 'a' AND n IN [1, 1e]$$);
SELECT pq($$SELECT n FROM Ranges WHERE p = 'a' AND n >= 1e999$$);
SELECT pq($$SELECT n FROM Ranges WHERE p = 'a' AND n >= <<1, 2e>>$$);
SELECT ddb_api('DeleteTable', '{"TableName": "Ranges"}') IS NOT NULL AS dropped;
-- a bound may hold U+0000 (ddb_api_text: jsonb cannot), as a Query's may
SELECT ddb_api_text('ExecuteStatement', $${"Statement": "SELECT Song FROM Music WHERE Artist = 'Ada' AND Song >= ? AND Song <= ?",
  "Parameters": [{"S": "E\u0000"}, {"S": "Poem"}]}$$) AS nul_range;
DROP FUNCTION pq_cu;
SELECT count(pq(format($$DELETE FROM Music WHERE Artist = 'Big%s' AND Song = 's%s'$$, p, s)))
  FROM generate_series(0, 5) p, generate_series(1, 3) s;
-- the same answers as above, without the Big items
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Bob' OR Song = 'Poem'$$) AS or_other;
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Ada' AND Song > 'Engine' AND Song <= 'Poem'$$) AS sk_strict;
-- inclusive bounds the wrong way round select nothing (not a BETWEEN,
-- which refuses them: one bound is the key condition, the other filters)
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Ada' AND Song >= 'P' AND Song <= 'E'$$) AS sk_range_empty;
-- ConsumedCapacity, summed over the Queries of an IN list
SELECT pq($$SELECT Song FROM Music WHERE Artist IN ['Bob', 'Ada']$$, '{"ReturnConsumedCapacity": "TOTAL"}')->'ConsumedCapacity';

-- UPDATE: SET, arithmetic, list_append, set_add, set_delete, REMOVE; the
-- item must exist, and the other WHERE terms are conditions
SELECT pq($$UPDATE Music SET "Year" = "Year" + 1 SET meta.take = list_append(meta.take, ['three'])
  SET tags = set_add(tags, <<'c'>>), scores = set_delete(scores, <<3>>) REMOVE gone
  WHERE Artist = 'Ada' AND Song = 'Engine' AND live = true RETURNING ALL NEW *$$);
SELECT pq($$UPDATE Music SET live = false WHERE Artist = 'Ada' AND Song = 'Engine' RETURNING MODIFIED OLD *$$);
SELECT pq($$UPDATE Music SET live = ? WHERE Artist = 'Ada' AND Song = 'Engine' RETURNING MODIFIED NEW *$$, '{"Parameters": [{"BOOL": true}]}');
SELECT pq($$UPDATE Music SET n = 1 WHERE Artist = 'Bob' AND Song = 'Blues' RETURNING ALL OLD *$$);
SELECT pq($$UPDATE Music SET n = 2 WHERE Song = 'Blues' AND Artist = 'Bob'$$);
-- a false condition, or no such item: ConditionalCheckFailedException
SELECT pq($$UPDATE Music SET n = 3 WHERE Artist = 'Bob' AND Song = 'Blues' AND n = 1$$);
SELECT pq($$UPDATE Music SET n = 3 WHERE Artist = 'Zed' AND Song = 'None'$$);
SELECT pq($$UPDATE Music SET n = 3 WHERE Artist = 'Bob' AND Song = 'Blues' AND n = 1$$,
  '{"ReturnValuesOnConditionCheckFailure": "ALL_OLD"}');
-- the whole primary key, by equality, or no UPDATE
SELECT pq($$UPDATE Music SET n = 3 WHERE Artist = 'Bob'$$);
SELECT pq($$UPDATE Music SET n = 3 WHERE Artist = 'Bob' AND Song > 'A'$$);
SELECT pq($$UPDATE Music SET n = 3 WHERE Artist = 'Bob' OR Song = 'Blues'$$);
-- a key attribute cannot be SET: UpdateItem's own message
SELECT pq($$UPDATE Music SET Song = 'x' WHERE Artist = 'Bob' AND Song = 'Blues'$$);

-- set_add and set_delete take a set, nothing else (set_add(v, 5) once
-- added 5 to a number)
SELECT pq($$UPDATE Music SET "Year" = set_add("Year", 5) WHERE Artist = 'Ada' AND Song = 'Engine'$$);
SELECT pq($$UPDATE Music SET tags = set_delete(tags, 'a') WHERE Artist = 'Ada' AND Song = 'Engine'$$);
SELECT pq($$UPDATE Music SET tags = set_add(tags, ?) WHERE Artist = 'Ada' AND Song = 'Engine'$$,
  '{"Parameters": [{"L": [{"S": "x"}]}]}');
SELECT pq($$SELECT "Year", tags FROM Music WHERE Artist = 'Ada' AND Song = 'Engine'$$);

-- DELETE: RETURNING ALL OLD *; no item is no error; a false term is
SELECT pq($$DELETE FROM Music WHERE Artist = 'Cy' AND Song = 'Cant' RETURNING ALL OLD *$$);
SELECT pq($$DELETE FROM Music WHERE Artist = 'Cy' AND Song = 'Cant'$$);
SELECT pq($$DELETE FROM Music WHERE Artist = 'Bob' AND Song = 'Blues' AND n = 99$$);
-- ReturnValuesOnConditionCheckFailure: the item in the error's detail
\set VERBOSITY default
SELECT pq($$DELETE FROM Music WHERE Artist = 'Bob' AND Song = 'Blues' AND n = 99$$,
  '{"ReturnValuesOnConditionCheckFailure": "ALL_OLD"}');
\set VERBOSITY terse
SELECT pq($$DELETE FROM Music WHERE Artist = 'Bob' AND Song = 'Blues' AND n = 2 AND "Year" = 1843$$);
SELECT pq($$SELECT * FROM Music WHERE Artist = 'Bob'$$);
SELECT pq($$DELETE FROM Music WHERE Artist = 'Bob'$$);

-- the privilege the operation needs, and only that: DELETE alone deletes
-- an item (as DeleteItem does), and reads nothing
SELECT pq($$INSERT INTO Music VALUE {'Artist': 'Del', 'Song': 'Gone'}$$);
CREATE ROLE partiql_deleter;
GRANT USAGE ON SCHEMA partiql TO partiql_deleter;
GRANT DELETE ON partiql."Music" TO partiql_deleter;
SET ROLE partiql_deleter;
SELECT pq($$DELETE FROM Music WHERE Artist = 'Del' AND Song = 'Gone'$$);
SELECT pq($$SELECT * FROM Music WHERE Artist = 'Del'$$);
SELECT pq($$INSERT INTO Music VALUE {'Artist': 'Del', 'Song': 'Back'}$$);
-- in a batch, a statement the role may not run is that statement's
-- AccessDenied; the others still run
RESET ROLE;
SELECT pq($$INSERT INTO Music VALUE {'Artist': 'Del', 'Song': 'Again'}$$);
SET ROLE partiql_deleter;
SELECT ddb_api('BatchExecuteStatement', $${"Statements": [
  {"Statement": "INSERT INTO Music VALUE {'Artist': 'Del', 'Song': 'Back'}"},
  {"Statement": "DELETE FROM Music WHERE Artist = 'Del' AND Song = 'Again'"}]}$$);
RESET ROLE;
SELECT pq($$SELECT * FROM Music WHERE Artist = 'Del'$$);
REVOKE ALL ON partiql."Music" FROM partiql_deleter;
REVOKE ALL ON SCHEMA partiql FROM partiql_deleter;
DROP ROLE partiql_deleter;

-- errors: syntax, unknown table or index, parameters, unsupported constructs
SELECT pq('SELEC * FROM Music');
SELECT pq('SELECT * FROM');
SELECT pq($$SELECT * FROM Music WHERE Artist = 'Ada$$);
SELECT pq('SELECT * FROM Music WHERE Artist = ''Ada'' AND');
-- positions count characters, and an unexpected character is shown whole
SELECT pq('SELECT * FROM Music WHERE é = 1');
SELECT pq('SELECT * FROM "Müsic" WHERE a § 1');
SELECT pq('SELECT * FROM "Müsic" WHERE WHERE');
SELECT pq('SELECT * FROM Nowhere WHERE a = 1');
SELECT pq('SELECT * FROM "Music"."NoIndex" WHERE a = 1');
SELECT pq('INSERT INTO Nowhere VALUE {''a'': 1}');
SELECT pq('SELECT * FROM Music WHERE Artist = ?');
SELECT pq('SELECT * FROM Music WHERE Artist = ?', '{"Parameters": [{"S": "a"}, {"S": "b"}]}');
SELECT pq('SELECT * FROM Music WHERE Artist = ?', '{"Parameters": [{"Q": "a"}]}');
SELECT pq('SELECT * FROM Music m JOIN Other o ON m.a = o.a');
SELECT pq('SELECT * FROM Music, Other');
SELECT pq('SELECT * FROM Music WHERE Artist IN (SELECT Artist FROM Music)');
SELECT pq('SELECT * FROM (SELECT * FROM Music)');
SELECT pq('SELECT count(*) FROM Music');
SELECT pq('SELECT * FROM Music GROUP BY Artist');
SELECT pq('INSERT INTO Music VALUES (1, 2)');
SELECT pq('INSERT INTO Music VALUE ''text''');
SELECT pq('SELECT * FROM Music WHERE EXISTS(SELECT * FROM Music)');
SELECT pq('SELECT * FROM Music WHERE upper(Song) = ''X''');
SELECT pq('SELECT * FROM Music WHERE <<1, ''a''>> = tags');
SELECT pq('SELECT * FROM Music ORDER BY Song');
SELECT pq('SELECT * FROM Music WHERE live = true ORDER BY Song');
SELECT pq('SELECT * FROM Music WHERE Artist = ''Ada'' ORDER BY "Year"');
SELECT pq('DELETE FROM Music WHERE Artist = ''Ada'' AND Song = ''Note'' RETURNING ALL NEW *');
-- literals nest ([..], {..}, <<..>>) at most as deep as an attribute
-- value (32 levels, in an INSERT's item 33): deeper is DynamoDB's
-- ValidationException, before the parser recurses into the stack depth
-- and before the request the statement becomes (twice as deep in JSON)
-- was refused as a SerializationException, "The request body nests too
-- deeply", of a body the client never sent
SET max_stack_depth = '100kB';
SELECT pq('SELECT * FROM Music WHERE Artist = ''Ada'' AND a = ' || repeat('[', 4000) || repeat(']', 4000));
SELECT pq('SELECT * FROM Music WHERE Artist = ''Ada'' AND a = ' || repeat('{''k'': ', 1100) || '1' || repeat('}', 1100));
RESET max_stack_depth;
SELECT pq('SELECT * FROM Music WHERE Artist = ''Ada'' AND a = ' || repeat('[', 100) || repeat(']', 100));
SELECT pq($$INSERT INTO Music VALUE {'Artist': 'Deep', 'Song': 'd32', 'd': $$ || repeat('[', 32) || repeat(']', 32) || '}');
SELECT pq($$INSERT INTO Music VALUE {'Artist': 'Deep', 'Song': 'd33', 'd': $$ || repeat('[', 33) || repeat(']', 33) || '}');
SELECT pq($$INSERT INTO Music VALUE {'Artist': 'Deep', 'Song': 'd150', 'd': $$ || repeat('[', 150) || repeat(']', 150) || '}');
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Deep'$$);
SELECT pq($$DELETE FROM Music WHERE Artist = 'Deep' AND Song = 'd32'$$);
-- the request's own members, as DynamoDB checks them
SELECT ddb_api('ExecuteStatement', '{}');
SELECT ddb_api('ExecuteStatement', '{"Statement": ""}');
SELECT pq('SELECT * FROM Music', '{"Limit": 0}');
SELECT pq('SELECT * FROM Music', '{"Parameters": []}');
SELECT ddb_api('ExecuteStatement', '{"Statement": 1}');
-- the enum members are checked up front, whatever the statement
SELECT pq('SELECT * FROM Music', '{"ReturnValuesOnConditionCheckFailure": "BOGUS"}');
SELECT pq($$INSERT INTO Music VALUE {'Artist': 'x', 'Song': 'y'}$$,
  '{"ReturnValuesOnConditionCheckFailure": "BOGUS", "ReturnConsumedCapacity": "ALL"}');
SELECT pq($$SELECT * FROM Music WHERE Artist = 'x'$$);
-- the length limit (8192) counts characters: 7,960 of them in 15,860
-- bytes pass; 8,193 do not
SELECT pq($$SELECT Song FROM Music WHERE Artist = 'Ada' AND note = '$$ || repeat('é', 7900) || $$'$$);
DO $$ BEGIN PERFORM pq(repeat(' ', 8193));
EXCEPTION WHEN others THEN RAISE NOTICE '%', right(SQLERRM, 63); END $$;

-- BatchExecuteStatement: each statement run as ExecuteStatement runs it, in
-- its own subtransaction; its error is its response, in request order
CREATE FUNCTION pqb(VARIADIC statements text[]) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT ddb_api('BatchExecuteStatement', jsonb_build_object('Statements',
    (SELECT jsonb_agg(jsonb_build_object('Statement', s) ORDER BY i)
       FROM unnest(statements) WITH ORDINALITY AS u(s, i))))
$$;
CREATE FUNCTION pqt(VARIADIC statements text[]) RETURNS jsonb
LANGUAGE sql AS $$
  SELECT ddb_api('ExecuteTransaction', jsonb_build_object('TransactStatements',
    (SELECT jsonb_agg(jsonb_build_object('Statement', s) ORDER BY i)
       FROM unnest(statements) WITH ORDINALITY AS u(s, i))))
$$;
SELECT pqb($$INSERT INTO Music VALUE {'Artist': 'B', 'Song': 's1', 'n': 1}$$,
           $$INSERT INTO Music VALUE {'Artist': 'B', 'Song': 's2', 'n': 2}$$);
-- a duplicate, a failed condition, a malformed statement, a missing table,
-- and two that succeed: six answers in order, the good writes kept
SELECT jsonb_pretty(pqb($$INSERT INTO Music VALUE {'Artist': 'B', 'Song': 's1'}$$,
           $$UPDATE Music SET n = 5 WHERE Artist = 'B' AND Song = 'nope'$$,
           $$INSERT INTO Music VALUE {'Artist': 'B', 'Song': 's3', 'n': 3}$$,
           $$UPDATE Music SET n = 9 WHERE Artist = 'B' AND Song = 's2' AND n = 1$$,
           $$INSERTT INTO Music VALUE {'Artist': 'B', 'Song': 's4'}$$,
           $$DELETE FROM NoSuchTable WHERE Artist = 'B' AND Song = 's1'$$,
           $$UPDATE Music SET n = 10 WHERE Artist = 'B' AND Song = 's1'$$));
-- a ValidationException with a DETAIL (a key over 2048 bytes) is its
-- statement's ValidationError too
SELECT pqb(format($$INSERT INTO Music VALUE {'Artist': '%s', 'Song': 's5'}$$, repeat('x', 2049)),
           $$INSERT INTO Music VALUE {'Artist': 'B', 'Song': 's5', 'n': 5}$$);
-- a literal nested too deeply is its statement's ValidationError, not the
-- whole batch's SerializationException
SELECT pqb($$INSERT INTO Music VALUE {'Artist': 'B', 'Song': 'deep', 'd': $$ || repeat('[', 150) || repeat(']', 150) || '}',
           $$INSERT INTO Music VALUE {'Artist': 'B', 'Song': 'deep', 'n': 0}$$);
SELECT pq($$DELETE FROM Music WHERE Artist = 'B' AND Song = 'deep' RETURNING ALL OLD *$$);
-- ALL_OLD: the failed condition's item in the error
SELECT ddb_api('BatchExecuteStatement', '{"Statements": [{"Statement":
  "UPDATE Music SET n = 9 WHERE Artist = ''B'' AND Song = ''s2'' AND n = 1",
  "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}]}');
-- reads: the whole key, one item or none (no Item), filters applied
SELECT pqb($$SELECT Song, n FROM Music WHERE Artist = 'B' AND Song = 's1'$$,
           $$SELECT * FROM Music WHERE Artist = 'B' AND Song = 'none'$$,
           $$SELECT * FROM Music WHERE Artist = 'B' AND Song = 's3' AND n = 4$$,
           $$SELECT * FROM Music WHERE Artist = 'B'$$,
           $$SELECT n FROM Music WHERE Artist = 'B' AND Song = 's3'$$);
-- reads and writes do not mix (DynamoDB's rule, ddb's wording)
SELECT pqb($$SELECT * FROM Music WHERE Artist = 'B' AND Song = 's1'$$,
           $$DELETE FROM Music WHERE Artist = 'B' AND Song = 's1'$$);
-- RETURNING: a write's image is its Item, as a SELECT's item is (none
-- when there is no image); a failed write is its error as without it
SELECT jsonb_pretty(pqb($$INSERT INTO Music VALUE {'Artist': 'B', 'Song': 's6', 'n': 6}$$,
           $$UPDATE Music SET n = 7 WHERE Artist = 'B' AND Song = 's6' RETURNING MODIFIED OLD *$$,
           $$UPDATE Music SET m = 1 WHERE Artist = 'B' AND Song = 's6' RETURNING ALL NEW *$$,
           $$DELETE FROM Music WHERE Artist = 'B' AND Song = 's6' RETURNING ALL OLD *$$,
           $$DELETE FROM Music WHERE Artist = 'B' AND Song = 's6' RETURNING ALL OLD *$$,
           $$UPDATE Music SET n = 1 WHERE Artist = 'B' AND Song = 's9' RETURNING ALL OLD *$$,
           $$DELETE FROM Music WHERE Artist = 'B' AND Song = 's6' RETURNING ALL NEW *$$));
-- 1 to 25 statements
SELECT ddb_api('BatchExecuteStatement', '{"Statements": []}');
SELECT ddb_api('BatchExecuteStatement', '{}');
-- a statement's enum member is named by its path in the list
SELECT ddb_api('BatchExecuteStatement', $${"Statements": [{"Statement": "DELETE FROM Music WHERE Artist = 'B' AND Song = 's1'"},
  {"Statement": "DELETE FROM Music WHERE Artist = 'B' AND Song = 's2'", "ReturnValuesOnConditionCheckFailure": "ALL_NEW"}]}$$);
SELECT ddb_api('ExecuteTransaction', $${"TransactStatements": [
  {"Statement": "DELETE FROM Music WHERE Artist = 'B' AND Song = 's2'", "ReturnValuesOnConditionCheckFailure": "ALL_NEW"}]}$$);
SELECT pqb(VARIADIC array_fill($$SELECT * FROM Music WHERE Artist = 'B' AND Song = 's1'$$::text, ARRAY[26]));
SELECT jsonb_array_length(pqb(VARIADIC array_fill($$SELECT * FROM Music WHERE Artist = 'B' AND Song = 's1'$$::text, ARRAY[25]))->'Responses');
SELECT ddb_api('BatchExecuteStatement', '{"Statements": [{"Statement": "SELECT * FROM Music WHERE Artist = ''B'' AND Song = ''s1''"}],
  "ReturnConsumedCapacity": "TOTAL"}') -> 'ConsumedCapacity';

-- ExecuteTransaction: one TransactWriteItems or TransactGetItems
SELECT pqt($$INSERT INTO Music VALUE {'Artist': 'T', 'Song': 't1', 'n': 1}$$,
           $$UPDATE Music SET n = 11 WHERE Artist = 'B' AND Song = 's1'$$,
           $$DELETE FROM Music WHERE Artist = 'B' AND Song = 's3'$$);
SELECT pqt($$SELECT * FROM Music WHERE Artist = 'T' AND Song = 't1'$$,
           $$SELECT n FROM Music WHERE Artist = 'B' AND Song = 's1'$$,
           $$SELECT * FROM Music WHERE Artist = 'B' AND Song = 's3'$$);
-- cancelled: reasons in statement order, nothing written
DO $d$ BEGIN PERFORM pqt($$INSERT INTO Music VALUE {'Artist': 'T', 'Song': 't2'}$$,
           $$UPDATE Music SET n = 2 WHERE Artist = 'T' AND Song = 'missing'$$,
           $$DELETE FROM Music WHERE Artist = 'B' AND Song = 's1' AND n = 0$$);
EXCEPTION WHEN others THEN
  DECLARE d text; BEGIN GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
  RAISE NOTICE '% %', SQLERRM, d; END;
END $d$;
SELECT pqt($$SELECT * FROM Music WHERE Artist = 'T' AND Song = 't2'$$,
           $$SELECT n FROM Music WHERE Artist = 'B' AND Song = 's1'$$);
-- an INSERT of a key that has an item: its reason is DuplicateItem, as
-- the INSERT alone is DuplicateItemException; a failed condition beside it
-- is still ConditionalCheckFailed, a statement that succeeded None
DO $d$ BEGIN PERFORM pqt($$INSERT INTO Music VALUE {'Artist': 'T', 'Song': 't1'}$$,
           $$INSERT INTO Music VALUE {'Artist': 'T', 'Song': 't4'}$$,
           $$UPDATE Music SET n = 2 WHERE Artist = 'T' AND Song = 'missing'$$);
EXCEPTION WHEN others THEN
  DECLARE d text; BEGIN GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
  RAISE NOTICE '% %', SQLERRM, d; END;
END $d$;
SELECT pqt($$SELECT n FROM Music WHERE Artist = 'T' AND Song = 't1'$$,
           $$SELECT * FROM Music WHERE Artist = 'T' AND Song = 't4'$$);
-- EXISTS(SELECT ...) is a ConditionCheck: the write happens only when the
-- item named by its whole key exists and its other terms hold
SELECT pqt($$EXISTS(SELECT * FROM Music WHERE Artist = 'B' AND Song = 's1' AND n = 11)$$,
           $$INSERT INTO Music VALUE {'Artist': 'T', 'Song': 'e1'}$$);
DO $d$ BEGIN PERFORM pqt($$INSERT INTO Music VALUE {'Artist': 'T', 'Song': 'e2'}$$,
           $$EXISTS(SELECT * FROM "Music" WHERE "Artist" = 'B' AND "Song" = 's1' AND n > 11)$$,
           $$exists ( select Song from Music where Song = 'gone' and Artist = 'B' )$$);
EXCEPTION WHEN others THEN
  DECLARE d text; BEGIN GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
  RAISE NOTICE '% %', SQLERRM, d; END;
END $d$;
SELECT pqt($$SELECT * FROM Music WHERE Artist = 'T' AND Song = 'e1'$$,
           $$SELECT * FROM Music WHERE Artist = 'T' AND Song = 'e2'$$);
-- only checks: fine; ALL_OLD returns the item a check failed on
SELECT pqt($$EXISTS(SELECT * FROM Music WHERE Artist = 'T' AND Song = 'e1')$$);
DO $d$ BEGIN PERFORM ddb_api('ExecuteTransaction', '{"TransactStatements": [{"Statement":
  "EXISTS(SELECT * FROM Music WHERE Artist = ''B'' AND Song = ''s1'' AND n = 0)",
  "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}]}');
EXCEPTION WHEN others THEN
  DECLARE d text; BEGIN GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL;
  RAISE NOTICE '%', d; END;
END $d$;
-- EXISTS needs the whole key and the table, is refused outside a
-- transaction and beside SELECTs, and is one SELECT in parentheses
SELECT pqt($$EXISTS(SELECT * FROM Music WHERE Artist = 'B')$$);
SELECT pqt($$EXISTS(SELECT * FROM Music."ByYear" WHERE "Year" = 1843 AND Song = 'Engine')$$);
SELECT pqt($$EXISTS(SELECT * FROM Music WHERE Artist = 'B' AND Song = 's1')$$,
           $$SELECT * FROM Music WHERE Artist = 'B' AND Song = 's1'$$);
SELECT pq($$EXISTS(SELECT * FROM Music WHERE Artist = 'B' AND Song = 's1')$$);
SELECT pqb($$EXISTS(SELECT * FROM Music WHERE Artist = 'B' AND Song = 's1')$$);
SELECT pqt($$EXISTS(SELECT * FROM Music WHERE Artist = 'B' AND Song = 's1'$$);
SELECT pqt($$EXISTS(SELECT * FROM Music WHERE Artist = 'B' AND Song = 's1') AND 1 = 1$$);
SELECT pqt($$EXISTS(DELETE FROM Music WHERE Artist = 'B' AND Song = 's1')$$);
-- a malformed statement fails the whole transaction
SELECT pqt($$INSERT INTO Music VALUE {'Artist': 'T', 'Song': 't3'}$$, 'DELETE Music');
SELECT pqt($$SELECT * FROM Music WHERE Artist = 'T' AND Song = 't3'$$);
-- mixed, non-singleton reads, RETURNING, limits
SELECT pqt($$SELECT * FROM Music WHERE Artist = 'T' AND Song = 't1'$$,
           $$DELETE FROM Music WHERE Artist = 'T' AND Song = 't1'$$);
SELECT pqt($$SELECT * FROM Music WHERE Artist = 'T'$$);
SELECT pqt($$SELECT * FROM Music WHERE Artist = 'T' AND Song = 't1' AND n = 1$$);
-- RETURNING: TransactWriteItems returns no images; DynamoDB's message
-- names the first statement that asks (counted from 0), and nothing runs
SELECT pqt($$DELETE FROM Music WHERE Artist = 'T' AND Song = 't1' RETURNING ALL OLD *$$);
SELECT pqt($$INSERT INTO Music VALUE {'Artist': 'T', 'Song': 't5'}$$,
           $$UPDATE Music SET n = 3 WHERE Artist = 'T' AND Song = 't1' RETURNING ALL NEW *$$,
           $$DELETE FROM Music WHERE Artist = 'T' AND Song = 't1' RETURNING ALL OLD *$$);
SELECT pqt($$SELECT * FROM Music WHERE Artist = 'T' AND Song = 't5'$$,
           $$SELECT n FROM Music WHERE Artist = 'T' AND Song = 't1'$$);
SELECT ddb_api('ExecuteTransaction', '{"TransactStatements": []}');
SELECT pqt(VARIADIC array_fill($$SELECT * FROM Music WHERE Artist = 'B' AND Song = 's1'$$::text, ARRAY[101]));
SELECT jsonb_array_length(pqt(VARIADIC ARRAY(SELECT format($$SELECT * FROM Music WHERE Artist = 'B' AND Song = 'x%s'$$, g)
  FROM generate_series(1, 100) g))->'Responses');
SELECT ddb_api('ExecuteTransaction', '{"TransactStatements": [{"Statement": "SELECT * FROM Music"}],
  "ClientRequestToken": "0123456789012345678901234567890123456"}');
-- ClientRequestToken: the same statements again are not run again
SELECT ddb_api('ExecuteTransaction', '{"ClientRequestToken": "tok-1", "TransactStatements":
  [{"Statement": "UPDATE Music SET n = n + 1 WHERE Artist = ''T'' AND Song = ''t1''"}]}');
SELECT ddb_api('ExecuteTransaction', '{"ClientRequestToken": "tok-1", "TransactStatements":
  [{"Statement": "UPDATE Music SET n = n + 1 WHERE Artist = ''T'' AND Song = ''t1''"}]}');
SELECT pq($$SELECT n FROM Music WHERE Artist = 'T' AND Song = 't1'$$);
SELECT ddb_api('ExecuteTransaction', '{"ClientRequestToken": "tok-1", "TransactStatements":
  [{"Statement": "UPDATE Music SET n = n + 2 WHERE Artist = ''T'' AND Song = ''t1''"}]}');

-- (tokens are the database's: leave none for other tests)
DELETE FROM ddb_internal.transaction_tokens WHERE token = 'tok-1';
DROP SCHEMA partiql CASCADE;
