#!/usr/bin/env bash
#
# test/fuzz/run.sh: throw random and mutated expressions at ddb's expression
# parser and evaluator (ddb_eval_condition, ddb_apply_update, ddb_project,
# ddb_key_condition) and random typed JSON at the item model
# (ddb_from_typed_json, ddb_to_typed_json, ddb_validate_item, ddb_item_size).
#
#   bash test/fuzz/run.sh --smoke     # a few thousand cases, well under 60 s
#   bash test/fuzz/run.sh [N]         # N cases (default 50000)
#
# Connects with the usual PGHOST/PGPORT/PGUSER/PGDATABASE, creates a scratch
# database, and asserts only that every call either returns or raises an
# ERROR of SQLSTATE class DB (DynamoDB errors), 42 or 22 -- never another
# error, never a crash (the server must still answer afterwards).  Cases run
# in batches so that a crash names the batch; the generated cases are kept
# on failure.  Prints one summary line; exits 0 or 1.
set -u
set -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
n=50000
seed=${DDB_FUZZ_SEED:-$RANDOM}
case ${1:-} in
	--smoke) n=3000 ;;
	'') ;;
	*) n=$1 ;;
esac
batch=500
db="ddb_fuzz_$$"
maint=${PGDATABASE:-postgres}
cases=$(mktemp /tmp/ddb-fuzz.XXXXXX)
psql_q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

fail() {
	echo "fuzz: FAILED: $* (seed $seed, cases kept in $cases)"
	psql_q -d "$maint" -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1
	exit 1
}

python3 "$here/gen.py" "$n" "$seed" >"$cases" || fail "generator failed"
psql_q -d "$maint" -c "CREATE DATABASE $db" >/dev/null || fail "cannot create $db"

psql_q -d "$db" >/dev/null <<SQL || fail "setup failed"
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
CREATE TABLE fuzz_case (id int PRIMARY KEY, kind text, expr text, item text, names text, vals text);
CREATE TABLE fuzz_result (id int, sqlstate text, message text);
\copy fuzz_case FROM '$cases'
-- One call per case, each in its own subtransaction; record the outcome.
CREATE PROCEDURE fuzz_run(lo int, hi int) LANGUAGE plpgsql AS \$\$
DECLARE
	r record;
	st text;
	msg text;
BEGIN
	FOR r IN SELECT * FROM fuzz_case WHERE id >= lo AND id < hi ORDER BY id LOOP
		BEGIN
			IF r.kind = 'c' THEN
				PERFORM ddb_eval_condition(r.item::jsonb, r.expr, r.names::jsonb, r.vals::jsonb);
			ELSIF r.kind = 'u' THEN
				PERFORM ddb_apply_update(r.item::jsonb, r.expr, r.names::jsonb, r.vals::jsonb,
										 ARRAY['pk'], 'UPDATED_NEW');
			ELSIF r.kind = 'p' THEN
				PERFORM ddb_project(r.item::jsonb, r.expr, r.names::jsonb);
			ELSIF r.kind = 'k' THEN
				PERFORM ddb_key_condition(r.expr, 'pk', 'sk', r.names::jsonb, r.vals::jsonb);
			ELSE
				-- typed JSON both ways, and the document form's checks
				PERFORM ddb_validate_item(ddb_from_typed_json(r.expr::jsonb));
				PERFORM ddb_to_typed_json(ddb_from_typed_json(r.expr::jsonb));
				PERFORM ddb_item_size(r.item::jsonb);
			END IF;
			INSERT INTO fuzz_result VALUES (r.id, '00000', NULL);
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
			INSERT INTO fuzz_result VALUES (r.id, st, msg);
		END;
	END LOOP;
END
\$\$;
SQL

start=0
while [ "$start" -lt "$n" ]; do
	end=$((start + batch))
	if ! psql_q -d "$db" -c "CALL fuzz_run($start, $end)" >/dev/null 2>"$cases.err"; then
		err=$(head -3 "$cases.err")
		psql_q -d "$maint" -c "SELECT 1" >/dev/null 2>&1 ||
			sleep 3		# the server may be restarting after a crash
		fail "cases $start..$((end - 1)) failed: $err"
	fi
	start=$end
done
rm -f "$cases.err"

# The server still answers, and every outcome is allowed.
psql_q -d "$maint" -c "SELECT 1" >/dev/null || fail "server does not answer"
summary=$(psql_q -d "$db" -At -F ' ' -c "
	SELECT count(*),
	       count(*) FILTER (WHERE sqlstate = '00000'),
	       count(*) FILTER (WHERE left(sqlstate, 2) IN ('DB', '42', '22')),
	       count(*) FILTER (WHERE sqlstate <> '00000' AND left(sqlstate, 2) NOT IN ('DB', '42', '22'))
	  FROM fuzz_result") || fail "cannot read results"
read -r total ok expected bad <<<"$summary"
if [ "$bad" != 0 ] || [ "$total" != "$n" ]; then
	psql_q -d "$db" -At -c "
		SELECT r.sqlstate || ' ' || r.message || ' <- ' || c.kind || ': ' || left(c.expr, 200)
		  FROM fuzz_result r JOIN fuzz_case c USING (id)
		 WHERE r.sqlstate <> '00000' AND left(r.sqlstate, 2) NOT IN ('DB', '42', '22')
		 LIMIT 10"
	fail "$total/$n cases ran, $bad raised unexpected SQLSTATEs"
fi
psql_q -d "$maint" -c "DROP DATABASE $db" >/dev/null
rm -f "$cases"
echo "fuzz: $total cases, $ok returned, $expected raised DB/42/22 errors, 0 unexpected, server alive (seed $seed)"
exit 0
