#!/usr/bin/env bash
#
# test/run.sh: build ddb and run its whole test suite on a throwaway cluster.
#
#   bash test/run.sh            # everything: regression, isolation, TAP, fuzz smoke
#   bash test/run.sh regress    # only some parts: regress isolation tap fuzz bench endpoint
#
# On a fresh Debian 12 machine run it as root: it installs what is missing,
# builds with warnings as errors and ddb's invariant checks on, installs the
# extension, and runs the tests as the unprivileged "postgres" user (initdb
# refuses root).  As a normal user it needs the build dependencies already
# installed and write access to PostgreSQL's extension directories (or sudo).
#
# Knobs: DDB_PGBIN (another PostgreSQL 15 build's bin directory),
# DDB_TEST_PORT, DDB_KEEP=1 (keep the work directory), DDB_TAP_AM=heap (run
# the TAP tests' workloads on heap tables, to check the harness itself).
#
# The last line is "N passed, N failed"; the exit status is non-zero when
# anything failed.
set -u
set -o pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
parts=${*:-regress isolation tap fuzz bench endpoint}
. "$here/test/lib.sh"

# --- dependencies, build and install (test/lib.sh) --------------------------
ddb_install_deps || { echo "0 passed, 1 failed"; exit 1; }

log "building (warnings are errors, invariant checks on)"
ddb_build_install CHECKS=1 COPT='-Werror' || { echo "0 passed, 1 failed"; exit 1; }

# --- a throwaway cluster, owned by a non-root user --------------------------
work=$(mktemp -d /tmp/ddb-test.XXXXXX)
ddb_cluster_user
# Tests write results next to their inputs: run them from a private copy.
mkdir -p "$work/src" "$work/sock"
tar -C "$here" --exclude=.git --exclude=.tmp -cf - . | tar -C "$work/src" -xf -
chmod 755 "$work"
chown -R "$RUNAS" "$work" 2>/dev/null || true

PGPORT=${DDB_TEST_PORT:-55439}
export PGPORT PGHOST="$work/sock" PGUSER="$RUNAS" PGDATABASE=postgres
cleanup() {
	as_user "$PGBIN/pg_ctl -D '$work/data' -m immediate stop" >/dev/null 2>&1
	if [ -z "${DDB_KEEP:-}" ]; then rm -rf "$work"; fi
}
trap cleanup EXIT

log "starting a throwaway cluster in $work"
as_user "$PGBIN/initdb -D '$work/data' -A trust -U '$RUNAS' --no-sync" >"$work/initdb.log" 2>&1 || {
	cat "$work/initdb.log" >&2; echo "0 passed, 1 failed"; exit 1; }
cat >>"$work/data/postgresql.conf" <<EOF
listen_addresses = ''
unix_socket_directories = '$work/sock'
port = $PGPORT
fsync = off
max_prepared_transactions = 10
log_min_messages = warning
EOF
as_user "$PGBIN/pg_ctl -D '$work/data' -l '$work/server.log' -w start" >/dev/null || {
	cat "$work/server.log" >&2; echo "0 passed, 1 failed"; exit 1; }

passed=0
failed=0
count_pgregress() {
	# pg_regress / pg_isolation_regress print "name ... ok" / "... FAILED"
	local out=$1 p f
	p=$(grep -cE '\.\.\. ok|\.\.\. +ok' "$out")
	f=$(grep -cE '\.\.\. FAILED|\.\.\. +FAILED|failed \(ignored\)' "$out")
	passed=$((passed + p)); failed=$((failed + f))
}
# su drops the environment: hand the TAP tests their knobs explicitly.
tapenv=""
case ${DDB_TAP_AM:-} in
'') ;;
*[!A-Za-z0-9_]*) echo "DDB_TAP_AM must be an access method name" >&2; echo "0 passed, 1 failed"; exit 1 ;;
*) tapenv="DDB_TAP_AM=$DDB_TAP_AM " ;;
esac
mk="${tapenv}make -C '$work/src' PG_CONFIG='$PG_CONFIG' CHECKS=1 PGHOST='$work/sock' PGPORT=$PGPORT PGUSER='$RUNAS'"

for part in $parts; do
	out="$work/$part.out"
	case $part in
	regress)
		log "regression tests"
		as_user "$mk installcheck ISOLATION= TAP_TESTS=" >"$out" 2>&1
		rc=$?
		cat "$out"
		count_pgregress "$out"
		if [ $rc != 0 ] && ! grep -qE 'FAILED' "$out"; then failed=$((failed + 1)); fi
		[ -f "$work/src/regression.diffs" ] && head -200 "$work/src/regression.diffs"
		;;
	isolation)
		log "isolation tests"
		as_user "$mk installcheck REGRESS= TAP_TESTS=" >"$out" 2>&1
		rc=$?
		cat "$out"
		count_pgregress "$out"
		if [ $rc != 0 ] && ! grep -qE 'FAILED' "$out"; then failed=$((failed + 1)); fi
		[ -f "$work/src/output_iso/regression.diffs" ] && head -200 "$work/src/output_iso/regression.diffs"
		;;
	tap)
		log "TAP tests"
		as_user "$mk installcheck REGRESS= ISOLATION= PROVE_FLAGS='--timer'" >"$out" 2>&1
		rc=$?
		cat "$out"
		p=$(grep -cE '^\[[0-9:]+\] test/t/[^ ]+ \.+ ok' "$out")
		f=$(grep -cE '^test/t/[^ ]+ +\(Wstat|^\[[0-9:]+\] test/t/[^ ]+ \.+ (Dubious|Failed|[0-9]+/)' "$out")
		if [ $rc != 0 ] && [ "$f" = 0 ]; then f=1; fi
		passed=$((passed + p)); failed=$((failed + f))
		if [ $rc != 0 ]; then
			for l in "$work"/src/tmp_check/log/*; do
				[ -f "$l" ] && { echo "--- $l"; tail -50 "$l"; }
			done
		fi
		;;
	fuzz)
		if [ -x "$here/test/fuzz/run.sh" ]; then
			log "fuzz smoke"
			if as_user "bash '$work/src/test/fuzz/run.sh' --smoke" >"$out" 2>&1; then
				passed=$((passed + 1))
			else
				failed=$((failed + 1))
			fi
			tail -20 "$out"
		fi
		;;
	bench)
		if [ -x "$here/test/bench/run.sh" ]; then
			log "benchmark smoke (asserts nothing about speed)"
			if as_user "bash '$work/src/test/bench/run.sh' --smoke" >"$out" 2>&1; then
				passed=$((passed + 1))
			else
				failed=$((failed + 1))
			fi
			tail -30 "$out"
		fi
		;;
	endpoint)
		# its own cluster with the HTTP endpoint; see test/endpoint/run.sh
		log "HTTP endpoint: boto3, AWS CLI, dynamodb-admin"
		DDB_BUILT=1 DDB_TEST_PORT=$((PGPORT + 1)) bash "$here/test/endpoint/run.sh" >"$out" 2>&1
		rc=$?
		tail -40 "$out"
		read -r p f < <(sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\1 \2/p' "$out" | tail -1)
		if [ -z "$p" ]; then p=0; f=1; fi
		if [ $rc != 0 ] && [ "$f" = 0 ]; then f=1; fi
		passed=$((passed + p)); failed=$((failed + f))
		;;
	*)
		echo "unknown part: $part" >&2
		failed=$((failed + 1))
		;;
	esac
done

if grep -qE 'TRAP:|terminated by signal|server process .* was terminated' "$work/server.log"; then
	echo "the server log shows a crash:" >&2
	grep -E 'TRAP:|terminated by signal|was terminated' "$work/server.log" >&2
	failed=$((failed + 1))
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
