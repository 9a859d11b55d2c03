#!/usr/bin/env bash
#
# test/endpoint/run.sh: the DynamoDB HTTP endpoint, end to end.
#
#   bash test/endpoint/run.sh           # build, install, test; last line "N passed, N failed"
#   bash test/endpoint/run.sh -k sigv4  # extra arguments go to pytest
#
# Starts a throwaway cluster of its own with shared_preload_libraries = 'ddb'
# and the endpoint on a free loopback port, creates roles and access keys,
# and runs the pytest suite in this folder (Debian's python3-boto3 and
# python3-pytest): transport and robustness, SigV4, the server's life cycle
# (worker crash and restart, clean stop, pg_stat_activity, auth = none),
# the single-table playbook through boto3's client and resource APIs, the
# AWS CLI (Debian's awscli), dynamodb-admin (npm, installed into
# node_modules here on first use) rendered by headless Chromium, and
# the same requests to dynalite (npm, test/bench/dynalite) side by side.
#
# test/run.sh runs it as its "endpoint" part with DDB_BUILT=1 (it has built
# and installed ddb already).  Knobs: DDB_PGBIN as in test/run.sh,
# DDB_TEST_PORT (PostgreSQL's port), DDB_TEST_HTTP_PORT (the endpoint's;
# default a free one), DDB_TEST_FREE_PORTS ("lo-hi": where tests that
# start servers of their own take ports), DDB_KEEP=1 keeps the work directory.
set -u
set -o pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
tests="$here/test/endpoint"
. "$here/test/lib.sh"

fail() { echo "$*" >&2; echo "0 passed, 1 failed"; exit 1; }

if [ -z "${DDB_BUILT:-}" ]; then
	ddb_install_deps || fail "could not install the dependencies"
	log "building and installing ddb"
	ddb_build_install "$here" || fail "build failed"
fi
export PATH="$PGBIN:$PATH"
PY=/usr/bin/python3

# dynamodb-admin, installed once into node_modules here (npm's own cache
# is reused across runs)
if [ ! -x "$tests/node_modules/.bin/dynamodb-admin" ]; then
	log "installing dynamodb-admin (npm)"
	(cd "$tests" && npm install --no-audit --no-fund --loglevel=error) >&2 ||
		echo "npm install of dynamodb-admin failed; its test will fail" >&2
fi

# dynalite, the second implementation test_dynalite_diff.py compares the
# endpoint with: the benchmark's pinned copy, installed there once
dyn="$here/test/bench/dynalite"
if [ ! -f "$dyn/node_modules/dynalite/cli.js" ]; then
	log "installing dynalite (npm)"
	(cd "$dyn" && npm install --no-audit --no-fund --loglevel=error) >&2 ||
		echo "npm install of dynalite failed; its test will fail" >&2
fi

ddb_cluster_user
work=$(mktemp -d /tmp/ddb-endpoint.XXXXXX)
chmod 755 "$work"
mkdir -p "$work/sock"
chown -R "$RUNAS" "$work" 2>/dev/null || true
data="$work/data"
cleanup() {
	as_user "'$PGBIN/pg_ctl' -D '$data' -m immediate stop" >/dev/null 2>&1
	if [ -z "${DDB_KEEP:-}" ]; then rm -rf "$work"; else echo "kept $work" >&2; fi
}
trap cleanup EXIT

# A free loopback port for the endpoint (the kernel picks it), or
# DDB_TEST_HTTP_PORT's, for machines where tests must keep to given ports.
http_port=${DDB_TEST_HTTP_PORT:-$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}
# PostgreSQL itself listens only on a private socket directory.
pg_port=${DDB_TEST_PORT:-55439}

log "starting a cluster with the endpoint on 127.0.0.1:$http_port"
as_user "'$PGBIN/initdb' -D '$data' -A trust -U '$RUNAS' -E UTF8 --locale=C --no-sync" >"$work/initdb.log" 2>&1 ||
	{ cat "$work/initdb.log" >&2; fail "initdb failed"; }
cat >>"$data/postgresql.conf" <<EOF
listen_addresses = ''
unix_socket_directories = '$work/sock'
port = $pg_port
fsync = off
shared_preload_libraries = 'ddb'
ddb.http_port = $http_port
ddb.http_workers = 2
ddb.http_idle_timeout = 5s
ddb.http_lock_timeout = 1s
ddb.http_request_timeout = 30s
log_min_messages = warning
EOF
as_user "'$PGBIN/pg_ctl' -D '$data' -l '$work/server.log' -w start" >/dev/null ||
	{ cat "$work/server.log" >&2; fail "the cluster did not start"; }

psql=("$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$work/sock" -p "$pg_port" -U "$RUNAS" -d postgres)
"${psql[@]}" <<'EOF' || fail "setup failed"
CREATE EXTENSION ddb;
-- ddb_app owns what it creates through the endpoint; ddb_reader only reads
CREATE ROLE ddb_app;
GRANT CREATE ON SCHEMA public TO ddb_app;
CREATE ROLE ddb_reader;
EOF
key() { "${psql[@]}" -tA -F ' ' -c "SELECT access_key_id, secret_access_key FROM ddb_create_access_key('$1')"; }
read -r app_id app_secret < <(key ddb_app)
read -r reader_id reader_secret < <(key ddb_reader)

export DDB_ENDPOINT="http://127.0.0.1:$http_port"
export DDB_HTTP_PORT=$http_port
export DDB_KEY_ID=$app_id DDB_SECRET=$app_secret
export DDB_READER_KEY_ID=$reader_id DDB_READER_SECRET=$reader_secret
export DDB_WORK=$work DDB_DATA=$data DDB_SOCK="$work/sock" DDB_PGPORT=$pg_port DDB_PGBIN=$PGBIN
export DDB_RUNAS=$RUNAS DDB_TESTS=$tests
export AWS_EC2_METADATA_DISABLED=true AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
export PYTHONDONTWRITEBYTECODE=1

log "pytest (boto3, raw HTTP, AWS CLI, dynamodb-admin)"
cd "$tests"
[ $# -gt 0 ] || set -- .
$PY -m pytest -p no:cacheprovider -q -rfE "$@" 2>&1 | tee "$work/pytest.out"
rc=${PIPESTATUS[0]}

# pytest's summary: "3 failed, 40 passed, 1 error in 12.3s"
summary=$(grep -E '^(=+ )?[0-9]+ (passed|failed|error)' "$work/pytest.out" | tail -1)
p=$(printf '%s' "$summary" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+' || echo 0)
f=$(printf '%s' "$summary" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+' || echo 0)
e=$(printf '%s' "$summary" | grep -oE '[0-9]+ errors?' | grep -oE '[0-9]+' || echo 0)
s=$(printf '%s' "$summary" | grep -oE '[0-9]+ skipped' | grep -oE '[0-9]+' || echo 0)
# a test that was asked for and did not run counts as failed
f=$((${f:-0} + ${e:-0} + ${s:-0}))
if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi

if grep -qE 'TRAP:|terminated by signal [^9]|PANIC' "$work/server.log"; then
	echo "the server log shows a crash that no test caused:" >&2
	grep -E 'TRAP:|terminated by signal|PANIC' "$work/server.log" >&2
	f=$((f + 1))
fi
echo "${p:-0} passed, $f failed"
[ "$f" = 0 ]
