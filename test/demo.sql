-- test/demo.sql: a worked example for a newcomer, loaded by test/demo.sh.
--
-- One table holds several entity types, as in DynamoDB's single-table
-- design: a customer's profile and orders share the partition key CUST#<id>,
-- and the sort key says what each item is.  Every access pattern below reads
-- one partition.  Safe to run again: it rebuilds the table app (with the
-- grants it had, such as the README's to the endpoint's role app_rw) and
-- leaves every other table, and the access keys, as they are.
--
-- The same table is reachable both ways: DynamoDB-style functions
-- (ddb_put_item, ddb_get_item, ddb_update_item, ...) and plain SQL.

\set ON_ERROR_STOP 1
SET client_min_messages = warning;
-- the extension as the installed build has it (a newer build's upgrade
-- script applies), and app from scratch (its GSI table goes with it)
CREATE EXTENSION IF NOT EXISTS ddb;
ALTER EXTENSION ddb UPDATE;
-- The grants on the old app outlive the rebuild: a role given access to it
-- (the README's app_rw, for the HTTP endpoint) keeps it on the next start.
CREATE TEMP TABLE demo_app_grants AS
SELECT format('GRANT %s ON app TO %s%s', a.privilege_type,
              CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END,
              CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END) AS stmt
  FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a
  LEFT JOIN pg_roles r ON r.oid = a.grantee
 WHERE c.oid = to_regclass('app') AND a.grantee <> c.relowner;
DROP TABLE IF EXISTS app;
RESET client_min_messages;

-- Partition key "PK", sort key "SK", and the rest of the item as jsonb:
-- the same as CREATE TABLE app ("PK" text, "SK" text, item jsonb) USING ddb.
SELECT ddb_create_table('app', 'PK', 'S', 'SK', 'S') \gset
SELECT stmt FROM demo_app_grants \gexec
DROP TABLE demo_app_grants;

-- PutItem, create-only: the condition makes a second put of this key fail.
SELECT ddb_put_item('app', '{"PK": "CUST#99", "SK": "PROFILE", "name": "Edsger Dijkstra", "tier": "bronze"}',
                    'attribute_not_exists(PK)') \gset

INSERT INTO app ("PK", "SK", item) VALUES
  ('CUST#42', 'PROFILE',
   '{"name": "Ada Lovelace", "email": "ada@example.com", "tier": "gold"}'),
  ('CUST#42', 'ORDER#2025-01-09#A11',
   '{"status": "DELIVERED", "total": 42.50, "lines": 3}'),
  ('CUST#42', 'ORDER#2025-02-14#B07',
   '{"status": "DELIVERED", "total": 18.00, "lines": 1}'),
  ('CUST#42', 'ORDER#2025-02-27#B19',
   '{"status": "SHIPPED", "total": 64.20, "lines": 2}'),
  ('CUST#42', 'ORDER#2025-03-01#A17',
   '{"status": "PENDING", "total": 99.90, "lines": 5}'),
  ('CUST#7', 'PROFILE',
   '{"name": "Grace Hopper", "email": "grace@example.com", "tier": "silver"}'),
  ('CUST#7', 'ORDER#2025-01-20#C03',
   '{"status": "DELIVERED", "total": 12.00, "lines": 1}');

\echo
\echo '== The item collection of customer CUST#42: profile and orders, in sort-key order'
\set ECHO queries
SELECT "SK", item FROM app WHERE "PK" = 'CUST#42' ORDER BY "SK";
\set ECHO none

\echo
\echo '== GetItem: one customer profile by its full key (API and SQL)'
\set ECHO queries
SELECT ddb_get_item('app', '{"PK": "CUST#42", "SK": "PROFILE"}');
SELECT item->>'name' AS name, item->>'email' AS email
  FROM app WHERE "PK" = 'CUST#42' AND "SK" = 'PROFILE';
\set ECHO none

\echo
\echo '== UpdateItem: a counter and optimistic locking in one call'
\set ECHO queries
SELECT ddb_update_item('app', '{"PK": "CUST#42", "SK": "PROFILE"}',
                       'ADD logins :one SET tier = :t', 'tier = :old',
                       vals => '{":one": 1, ":t": "platinum", ":old": "gold"}',
                       return_values => 'ALL_NEW');
\set ECHO none

\echo
\echo '== Query with begins_with: only the orders of CUST#42'
\set ECHO queries
SELECT "SK", item->>'status' AS status, item->'total' AS total
  FROM app WHERE "PK" = 'CUST#42' AND "SK" LIKE 'ORDER#%' ORDER BY "SK";
\set ECHO none

\echo
\echo '== Query with a sort-key range: orders of February 2025'
\set ECHO queries
SELECT "SK", item->>'status' AS status
  FROM app WHERE "PK" = 'CUST#42'
   AND "SK" >= 'ORDER#2025-02' AND "SK" < 'ORDER#2025-03' ORDER BY "SK";
\set ECHO none

\echo
\echo '== Query backwards with a limit: the latest order'
\set ECHO queries
SELECT "SK", item FROM app
 WHERE "PK" = 'CUST#42' AND "SK" LIKE 'ORDER#%' ORDER BY "SK" DESC LIMIT 1;
\set ECHO none

\echo
\echo '== Query (the DynamoDB way): the latest order of CUST#42, newest first, limit 1'
\set ECHO queries
SELECT ddb_query('app', 'PK = :c AND begins_with(SK, :o)', '{":c": "CUST#42", ":o": "ORDER#"}',
                 forward => false, "limit" => 1);
\set ECHO none

\echo
\echo '== A sparse global secondary index: orders by status, only items that have one'
\set ECHO queries
SELECT ddb_create_gsi('app', 'StatusIndex', 'status', 'S', 'SK', 'S');
SELECT q->>'PK' AS customer, q->>'SK' AS sk
  FROM ddb_query('app', '#s = :s', '{":s": "DELIVERED"}', '{"#s": "status"}',
                 index_name => 'StatusIndex', forward => false) q;
\set ECHO none

\echo
\echo '== The storage verifier: checks every invariant of the table''s tree'
\set ECHO queries
SELECT ddb_verify('app');
\set ECHO none
