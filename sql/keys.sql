-- The key encoding: order, normalization, DynamoDB's limits and the routing
-- hash, seen through ddb_sort_key_bytes (enc of one value), ddb_key_bytes
-- (a whole key: hash, partition key, sort keys) and ddb_hash32.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
RESET client_min_messages;

-- The encoding of each type, byte by byte: S and B end in 00 01, a 00 byte
-- of the value is escaped as 00 ff; N is tag, exponent, digit pairs, end.
SELECT v, ddb_sort_key_bytes(v) FROM (VALUES ('a'), ('ab'), ('é')) AS t(v);
SELECT v, ddb_sort_key_bytes(v)
  FROM (VALUES ('\x00'::bytea), ('\x0001'::bytea), ('\xff'::bytea)) AS t(v);
SELECT v, ddb_sort_key_bytes(v::numeric)
  FROM (VALUES ('0'), ('1'), ('-1'), ('123.45'), ('-123.45'), ('1e-130')) AS t(v);

-- S orders by UTF-8 bytes, not by collation: upper case before lower case,
-- a prefix before its extensions, high-bit characters after ASCII.
SELECT v, ddb_sort_key_bytes(v)
  FROM (VALUES ('b'), ('a'), ('ab'), ('B'), ('aa'), ('a b'), ('é'), ('e'),
               ('日本'), ('日'), ('日本語'), ('😀'), ('z'), ('~')) AS t(v)
 ORDER BY ddb_sort_key_bytes(v);

-- ... which is exactly the "C" collation's order (bytewise strcmp).
SELECT count(*) AS rows, count(*) FILTER (WHERE by_key = by_bytes) AS agree
  FROM (SELECT row_number() OVER (ORDER BY ddb_sort_key_bytes(v)) AS by_key,
               row_number() OVER (ORDER BY v COLLATE "C") AS by_bytes
          FROM (VALUES ('b'), ('a'), ('ab'), ('B'), ('aa'), ('a b'), ('é'),
                       ('e'), ('日本'), ('日'), ('日本語'), ('😀'), ('z'),
                       ('~')) AS t(v)) AS s;

-- The encoding of a prefix is a byte prefix of the encoding of the whole
-- (without its terminator): begins_with() can be a range scan.
SELECT p, s,
       position(substr(ddb_sort_key_bytes(p), 1, length(ddb_sort_key_bytes(p)) - 2)
                IN ddb_sort_key_bytes(s)) = 1 AS is_byte_prefix
  FROM (VALUES ('a', 'ab'), ('日', '日本'), ('ab', 'a')) AS t(p, s);
SELECT position(substr(ddb_sort_key_bytes('\x00'::bytea), 1, 2)
                IN ddb_sort_key_bytes('\x0000ff'::bytea)) = 1 AS is_byte_prefix;

-- B orders by unsigned bytes: 00 bytes are escaped but keep their place,
-- a prefix sorts first, ff sorts last.
SELECT v, ddb_sort_key_bytes(v)
  FROM (VALUES ('\xff'::bytea), ('\x00'::bytea), ('\x0000'::bytea),
               ('\x00ff'::bytea), ('\x01'::bytea), ('\x0001'::bytea),
               ('\x7f'::bytea), ('\x80'::bytea), ('\xfe'::bytea),
               ('\xffff'::bytea), ('\x000000'::bytea)) AS t(v)
 ORDER BY ddb_sort_key_bytes(v);

-- ... which is bytea's own order.
SELECT count(*) AS rows, count(*) FILTER (WHERE by_key = by_value) AS agree
  FROM (SELECT row_number() OVER (ORDER BY ddb_sort_key_bytes(v)) AS by_key,
               row_number() OVER (ORDER BY v) AS by_value
          FROM (VALUES ('\xff'::bytea), ('\x00'::bytea), ('\x0000'::bytea),
                       ('\x00ff'::bytea), ('\x01'::bytea), ('\x0001'::bytea),
                       ('\x7f'::bytea), ('\x80'::bytea), ('\xfe'::bytea),
                       ('\xffff'::bytea), ('\x000000'::bytea)) AS t(v)) AS s;

-- N orders numerically, across signs, exponents and digit counts: the
-- encoded order equals numeric's order, row for row.  Equal numbers tie.
-- (v is the number as written, x its value.)
CREATE TEMP TABLE nums AS
SELECT v, v::numeric AS x
  FROM (VALUES
  ('-9.9999999999999999999999999999999999999e125'), ('-9.99e125'), ('-1e125'),
  ('-12345678901234567890123456789012345678'), ('-1000'), ('-101'), ('-100'),
  ('-99.5'), ('-10'), ('-1.5'), ('-1'), ('-0.5'), ('-0.1201'), ('-0.12'),
  ('-0.1'), ('-1e-129'), ('-1e-130'), ('0'), ('-0'), ('0.000'), ('1e-130'),
  ('1.5e-130'), ('1e-129'), ('0.01'), ('0.1'), ('0.10001'), ('0.12'),
  ('0.1201'), ('0.5'), ('1'), ('1.5'), ('9.99'), ('10'), ('10.5'), ('99'),
  ('100'), ('101'), ('1e3'), ('1000.00'), ('1000.001'),
  ('12345678901234567890123456789012345678'), ('1e125'), ('9.99e125'),
  ('9.9999999999999999999999999999999999999e125')) AS t(v);
SELECT v, ddb_sort_key_bytes(x) FROM nums ORDER BY ddb_sort_key_bytes(x), v;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE by_key = by_value) AS agree
  FROM (SELECT rank() OVER (ORDER BY ddb_sort_key_bytes(x)) AS by_key,
               rank() OVER (ORDER BY x) AS by_value
          FROM nums) AS s;

-- The same over 20000 random pairs of numbers of mixed signs, scales and
-- magnitudes: the encoded comparison always agrees with numeric's.
SELECT setseed(0.25);
SELECT count(*) AS pairs,
       count(*) FILTER (WHERE sign(x - y) =
                        CASE WHEN ex < ey THEN -1 WHEN ex = ey THEN 0 ELSE 1 END) AS agree
  FROM (SELECT x, y, ddb_sort_key_bytes(x) AS ex, ddb_sort_key_bytes(y) AS ey
          FROM (SELECT round((random() - 0.5)::numeric * 10::numeric ^ (floor(random() * 12) - 6)::int,
                             (random() * 8)::int) AS x,
                       round((random() - 0.5)::numeric * 10::numeric ^ (floor(random() * 12) - 6)::int,
                             (random() * 8)::int) AS y
                  FROM generate_series(1, 20000)) AS r) AS s;

-- Equal numbers encode identically whatever their written form, and
-- unequal ones differently (the rank check above would miss a collision).
SELECT ddb_sort_key_bytes(1e3) = ddb_sort_key_bytes(1000.00) AS e3_is_1000,
       ddb_sort_key_bytes(-0::numeric) = ddb_sort_key_bytes(0::numeric) AS minus_zero,
       ddb_sort_key_bytes(0.5) = ddb_sort_key_bytes(0.50000) AS trailing_zeros,
       ddb_sort_key_bytes(1.5e-130) <> ddb_sort_key_bytes(1e-130) AS distinct_values;
SELECT count(DISTINCT x) AS distinct_numbers,
       count(DISTINCT ddb_sort_key_bytes(x)) AS distinct_encodings
  FROM nums;

-- Numbers within DynamoDB's limits are accepted at both ends of the range
-- and with 38 significant digits, whatever leading or trailing zeros.
SELECT length(ddb_sort_key_bytes(9.9999999999999999999999999999999999999e125)) AS max,
       length(ddb_sort_key_bytes(-1e-130)) AS min_negative,
       length(ddb_sort_key_bytes(0.00012345678901234567890123456789012345678000)) AS digits38;

-- A whole key is hash || enc(pk) || enc(sk...): the first 4 bytes are
-- ddb_hash32 of the partition key, big-endian, and enc(pk) follows.
SELECT ddb_key_bytes('user#1'::text, 'order#2'::text) AS key,
       ddb_hash32('user#1'::text) AS hash;
SELECT ('x' || encode(substr(ddb_key_bytes('user#1'::text, 'order#2'::text), 1, 4), 'hex'))::bit(32)::bigint
         = ddb_hash32('user#1'::text) AS hash_prefix,
       substr(ddb_key_bytes('user#1'::text, 'order#2'::text), 5)
         = ddb_sort_key_bytes('user#1'::text) || ddb_sort_key_bytes('order#2'::text) AS columns_follow;
SELECT ddb_key_bytes(42::numeric, '\xbeef'::bytea, 'x'::text) AS three_columns,
       ddb_key_bytes(1e3) = ddb_key_bytes(1000.00) AS normalized;

-- Sort keys order within a partition: keys of one partition key share their
-- hash and enc(pk), so they order by the sort key.
SELECT sk FROM (VALUES ('b'), ('a'), ('ab'), ('B')) AS t(sk)
 ORDER BY ddb_key_bytes('p'::text, sk);

-- The routing hash is MurmurHash3_x86_32 with seed 0 over enc(pk).  These
-- values were computed by an independent implementation; a change here means
-- the on-disk key order or client-side routing changed.
SELECT v, ddb_hash32(v) FROM (VALUES ('hello'), ('user#123'), ('日本')) AS t(v);
SELECT v, ddb_hash32(v::numeric)
  FROM (VALUES ('0'), ('1'), ('1000'), ('1e3'), ('-1.5'), ('123.45'), ('1e-130')) AS t(v);
SELECT v, ddb_hash32(v) FROM (VALUES ('\x00'::bytea), ('\xdeadbeef'::bytea)) AS t(v);

-- An untyped literal is taken as text.
SELECT ddb_hash32('hello') = ddb_hash32('hello'::text) AS unknown_is_text;

-- DynamoDB rejects empty strings and binaries as keys.
SELECT ddb_sort_key_bytes(''::text);
SELECT ddb_hash32(''::bytea);
SELECT ddb_key_bytes('p'::text, ''::text);

-- Numbers: at most 38 significant digits, magnitude within 1E-130 ..
-- 9.99...E+125, finite.
SELECT ddb_sort_key_bytes(123456789012345678901234567890123456789);
SELECT ddb_sort_key_bytes(1.00000000000000000000000000000000000001);
SELECT ddb_sort_key_bytes(1e126);
SELECT ddb_sort_key_bytes(-1e126);
SELECT ddb_sort_key_bytes(1e-131);
SELECT ddb_hash32(-1e-131);
SELECT ddb_sort_key_bytes('NaN'::numeric);
SELECT ddb_sort_key_bytes('Infinity'::numeric);
SELECT ddb_hash32('-Infinity'::numeric);

-- Size limits count bytes (of UTF-8 for text): 2048 for a partition key,
-- 1024 for a sort key.
SELECT length(ddb_sort_key_bytes(repeat('x', 2048))) AS pk_at_limit;
SELECT ddb_hash32(repeat('x', 2049));
SELECT ddb_hash32(repeat('é', 1025));
SELECT ddb_key_bytes(repeat('x', 2049), 'sk'::text);
SELECT length(ddb_key_bytes('pk'::text, repeat('x', 1024))) AS sk_at_limit;
SELECT ddb_key_bytes('pk'::text, repeat('x', 1025));
SELECT ddb_key_bytes('pk'::text, decode(repeat('00', 1025), 'hex'));

-- Keys are text, numeric or bytea only; the explicit VARIADIC array form is
-- refused because it would force one type on every key column.
SELECT ddb_hash32(42);
SELECT ddb_sort_key_bytes(now());
SELECT ddb_key_bytes('p'::text, 1::integer);
SELECT ddb_key_bytes(VARIADIC ARRAY['a', 'b']);
SELECT ddb_key_bytes('1'::text, '2'::text, '3'::text, '4'::text, '5'::text,
                     '6'::text, '7'::text, '8'::text, '9'::text);

DROP TABLE nums;
