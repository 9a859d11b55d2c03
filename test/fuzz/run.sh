#!/usr/bin/env bash
#
# test/fuzz/run.sh: throw random and mutated expressions at ddb's expression
# parser and evaluator (ddb_eval_condition, ddb_apply_update, ddb_project,
# ddb_key_condition) and random typed JSON at the item model
# (ddb_from_typed_json, ddb_to_typed_json, ddb_validate_item, ddb_item_size),
# and check the results with oracles.
#
#   bash test/fuzz/run.sh --smoke [--seed N]   # 3,000 cases, well under 60 s
#   bash test/fuzz/run.sh [--seed N] [CASES]    # CASES cases (default 50000)
#   bash test/fuzz/run.sh --selftest [--seed N] # the oracles catch planted bugs
#
# The seed is N, else DDB_FUZZ_SEED, else random; it is always printed, and
# the same seed generates the same cases.  Connects with the usual
# PGHOST/PGPORT/PGUSER/PGDATABASE and works in a scratch database.
#
# Every call must return or raise an ERROR of SQLSTATE class DB (DynamoDB
# errors), 42 or 22 -- never another error, never a crash (the server must
# still answer afterwards).  And the results must satisfy three oracles:
#   not        a condition and its NOT are never both true or both false;
#   typed      typed JSON is lossless: for an item d that ddb_from_typed_json
#              made, ddb_from_typed_json(ddb_to_typed_json(d)) = d, and
#              converting again gives the same typed JSON;
#   model      ddb_apply_update gives the new item a small reference model
#              (gen.py's model_update, independent of ddb's code) computes,
#              or a ValidationException when the model says DynamoDB
#              rejects the update.
# --selftest runs the same cases with a planted difference in each result
# (a NOT that returns its operand, a conversion that drops an attribute, an
# update result with an extra attribute) and passes only when every oracle
# reports every case it checked: an oracle that cannot fail proves nothing.
#
# Cases run in batches so that a crash names the batch; the generated cases
# are kept on failure.  Prints one summary line; exits 0 or 1.
set -u
set -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
n=50000
seed=${DDB_FUZZ_SEED:-}
selftest=0
while [ $# -gt 0 ]; do
	case $1 in
	--smoke) n=3000 ;;
	--selftest) selftest=1; n=3000 ;;
	--seed) seed=$2; shift ;;
	--seed=*) seed=${1#--seed=} ;;
	[0-9]*) n=$1 ;;
	*) echo "usage: bash test/fuzz/run.sh [--smoke | --selftest] [--seed N] [CASES]" >&2; exit 2 ;;
	esac
	shift
done
[ -n "$seed" ] || seed=$(( (RANDOM << 15) | RANDOM ))
case $seed$n in *[!0-9]*) echo "fuzz: --seed and CASES must be numbers" >&2; exit 2 ;; esac
batch=500
db="ddb_fuzz_$$"
maint=${PGDATABASE:-postgres}
cases=$(mktemp /tmp/ddb-fuzz.XXXXXX)
psql_q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
what="fuzz"
[ $selftest = 1 ] && what="fuzz self-test"

fail() {
	echo "$what: FAILED: $* (seed $seed, cases kept in $cases)"
	psql_q -d "$maint" -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1
	exit 1
}

echo "$what: seed $seed, $n cases"
# (a fixed hash seed too: set iteration order must not vary between runs)
PYTHONHASHSEED=0 python3 "$here/gen.py" "$n" "$seed" >"$cases" || fail "generator failed"
psql_q -d "$maint" -c "CREATE DATABASE $db" >/dev/null || fail "cannot create $db"

psql_q -d "$db" >/dev/null <<SQL || fail "setup failed"
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS ddb;
CREATE TABLE fuzz_case (id int PRIMARY KEY, kind text, expr text, item text, names text,
                        vals text, expect text);
-- sqlstate: what the call did; oracle: the oracle it was checked by, if
-- any; violated: that oracle's verdict.
CREATE TABLE fuzz_result (id int, sqlstate text, message text, oracle text, violated boolean);
\copy fuzz_case FROM '$cases'

-- Each oracle compares what ddb returned with what must hold.  In the
-- self-test (mutant), each first plants a difference in ddb's result.
CREATE FUNCTION oracle_not(r jsonb, expr text, names jsonb, vals jsonb, mutant boolean)
RETURNS boolean LANGUAGE plpgsql AS \$\$
DECLARE
  a boolean;
  b boolean;
BEGIN
  a := ddb_eval_condition(r, expr, names, vals);
  BEGIN
    b := ddb_eval_condition(r, 'NOT (' || expr || ')', names, vals);
  EXCEPTION WHEN OTHERS THEN
    RETURN NULL;        -- NOT made it too long or too deep: not checked
  END;
  IF mutant THEN b := a; END IF;
  RETURN a IS NULL OR b IS NULL OR a = b;
END \$\$;

CREATE FUNCTION oracle_typed(typed jsonb, mutant boolean)
RETURNS boolean LANGUAGE plpgsql AS \$\$
DECLARE
  d jsonb;
  t jsonb;
  d2 jsonb;
BEGIN
  BEGIN
    d := ddb_from_typed_json(typed);
  EXCEPTION WHEN OTHERS THEN
    RETURN NULL;        -- not valid typed JSON: nothing to round-trip
  END;
  BEGIN
    t := ddb_to_typed_json(d);
    d2 := ddb_from_typed_json(t);
    IF mutant THEN
      d2 := CASE WHEN d2 = '{}' THEN '{"planted": 1}' ELSE d2 - (SELECT min(k) FROM jsonb_object_keys(d2) k) END;
    END IF;
    RETURN d2 IS DISTINCT FROM d OR ddb_to_typed_json(d2) IS DISTINCT FROM t;
  EXCEPTION WHEN OTHERS THEN
    RETURN true;        -- an item ddb made that it cannot convert back
  END;
END \$\$;

CREATE FUNCTION oracle_model(item jsonb, expr text, vals jsonb, expect text, mutant boolean)
RETURNS boolean LANGUAGE plpgsql AS \$\$
DECLARE
  r jsonb;
  st text := '00000';
BEGIN
  BEGIN
    r := ddb_apply_update(item, expr, NULL, vals, ARRAY['pk'], 'ALL_NEW');
  EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE;
  END;
  IF mutant THEN
    -- an extra attribute in a result; a result where there was an error
    IF st = '00000' THEN r := r || '{"planted": 1}'; ELSE st := '00000'; r := '{}'; END IF;
  END IF;
  IF st <> '00000' THEN
    RETURN expect <> 'ERROR' OR st <> 'DB001';   -- ValidationException
  END IF;
  RETURN expect = 'ERROR' OR r IS DISTINCT FROM expect::jsonb;
END \$\$;

-- One call per case, each in its own subtransaction; record the outcome.
CREATE PROCEDURE fuzz_run(lo int, hi int, mutant boolean) LANGUAGE plpgsql AS \$\$
DECLARE
  r record;
  st text;
  msg text;
  orc text;
  bad boolean;
BEGIN
  FOR r IN SELECT * FROM fuzz_case WHERE id >= lo AND id < hi ORDER BY id LOOP
    orc := NULL;
    bad := NULL;
    BEGIN
      IF r.kind = 'c' THEN
        PERFORM ddb_eval_condition(r.item::jsonb, r.expr, r.names::jsonb, r.vals::jsonb);
        orc := 'not';
        bad := oracle_not(r.item::jsonb, r.expr, r.names::jsonb, r.vals::jsonb, mutant);
      ELSIF r.kind = 'u' THEN
        PERFORM ddb_apply_update(r.item::jsonb, r.expr, r.names::jsonb, r.vals::jsonb,
                                 ARRAY['pk'], 'UPDATED_NEW');
      ELSIF r.kind = 'm' THEN
        orc := 'model';
        bad := oracle_model(r.item::jsonb, r.expr, r.vals::jsonb, r.expect, mutant);
      ELSIF r.kind = 'p' THEN
        PERFORM ddb_project(r.item::jsonb, r.expr, r.names::jsonb);
      ELSIF r.kind = 'k' THEN
        PERFORM ddb_key_condition(r.expr, 'pk', 'sk', r.names::jsonb, r.vals::jsonb);
      ELSE
        -- typed JSON both ways, and the document form's checks
        orc := 'typed';
        bad := oracle_typed(r.expr::jsonb, mutant);
        PERFORM ddb_validate_item(ddb_from_typed_json(r.expr::jsonb));
        PERFORM ddb_to_typed_json(ddb_from_typed_json(r.expr::jsonb));
        PERFORM ddb_item_size(r.item::jsonb);
      END IF;
      INSERT INTO fuzz_result VALUES (r.id, '00000', NULL, orc, bad);
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
      INSERT INTO fuzz_result VALUES (r.id, st, msg, orc, bad);
    END;
  END LOOP;
END
\$\$;
SQL

mutant=false
[ $selftest = 1 ] && mutant=true
start=0
while [ "$start" -lt "$n" ]; do
	end=$((start + batch))
	if ! psql_q -d "$db" -c "CALL fuzz_run($start, $end, $mutant)" >/dev/null 2>"$cases.err"; then
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

# The oracles: per oracle, the cases it checked and the violations.
oracles=$(psql_q -d "$db" -At -F ' ' -c "
	SELECT o, count(r.violated), count(*) FILTER (WHERE r.violated)
	  FROM unnest(ARRAY['not', 'typed', 'model']) o
	  LEFT JOIN fuzz_result r ON r.oracle = o
	 GROUP BY o ORDER BY o") || fail "cannot read the oracles' results"
report=""
problem=""
while read -r o checked violated; do
	report="$report, $o: $checked checked"
	if [ "$checked" = 0 ]; then
		problem="$problem; oracle $o checked no case"
	elif [ $selftest = 1 ] && [ "$violated" != "$checked" ]; then
		problem="$problem; oracle $o missed $((checked - violated)) of $checked planted differences"
	elif [ $selftest = 0 ] && [ "$violated" != 0 ]; then
		problem="$problem; oracle $o: $violated violations"
	fi
done <<<"$oracles"
if [ -n "$problem" ]; then
	[ $selftest = 1 ] || psql_q -d "$db" -At -c "
		SELECT r.oracle || ' <- ' || c.kind || ': ' || left(c.expr, 200) || '  item ' || coalesce(left(c.item, 200), 'NULL')
		       || '  vals ' || coalesce(left(c.vals, 200), 'NULL') || coalesce('  expected ' || left(c.expect, 200), '')
		  FROM fuzz_result r JOIN fuzz_case c USING (id)
		 WHERE r.violated
		 LIMIT 10"
	fail "${problem#; }"
fi
psql_q -d "$maint" -c "DROP DATABASE $db" >/dev/null
rm -f "$cases"
if [ $selftest = 1 ]; then
	echo "$what: every oracle reported every planted difference${report} (seed $seed)"
else
	echo "$what: $total cases, $ok returned, $expected raised DB/42/22 errors, 0 unexpected, server alive; oracles hold${report} (seed $seed)"
fi
exit 0
