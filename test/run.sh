#!/usr/bin/env bash
#
# test/run.sh: build ddb and run its whole test suite on a throwaway cluster.
#
#   bash test/run.sh            # everything: regression, isolation, TAP, fuzz smoke
#   bash test/run.sh regress    # only some parts: regress isolation tap fuzz bench
#
# On a fresh Debian 12 machine run it as root: it installs what is missing,
# builds with warnings as errors and ddb's invariant checks on, installs the
# extension, and runs the tests as the unprivileged "postgres" user (initdb
# refuses root).  As a normal user it needs the build dependencies already
# installed and write access to PostgreSQL's extension directories (or sudo).
#
# The last line is "N passed, N failed"; the exit status is non-zero when
# anything failed.
set -u
set -o pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
parts=${*:-regress isolation tap fuzz bench}
PG_MAJOR=15
PGBIN=${DDB_PGBIN:-/usr/lib/postgresql/$PG_MAJOR/bin}

log() { printf '==> %s\n' "$*" >&2; }

# --- dependencies ---------------------------------------------------------
need_pkgs=()
command -v "$PGBIN/pg_config" >/dev/null 2>&1 || need_pkgs+=("postgresql-$PG_MAJOR")
[ -f "$($PGBIN/pg_config --includedir-server 2>/dev/null)/postgres.h" ] || need_pkgs+=("postgresql-server-dev-$PG_MAJOR")
perl -MIPC::Run -e1 >/dev/null 2>&1 || need_pkgs+=(libipc-run-perl)
command -v make >/dev/null 2>&1 || need_pkgs+=(make)
command -v gcc >/dev/null 2>&1 || need_pkgs+=(gcc)
command -v prove >/dev/null 2>&1 || need_pkgs+=(perl)
if [ ${#need_pkgs[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ]; then
		log "installing ${need_pkgs[*]}"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -q >/dev/null && apt-get install -y -q "${need_pkgs[@]}" >/dev/null || {
			echo "could not install ${need_pkgs[*]}" >&2; echo "0 passed, 1 failed"; exit 1; }
	else
		echo "missing packages: ${need_pkgs[*]} (run as root, or install them)" >&2
		echo "0 passed, 1 failed"; exit 1
	fi
fi
export PATH="$PGBIN:$PATH"
PG_CONFIG="$PGBIN/pg_config"

# --- build and install ------------------------------------------------------
SUDO=""
if [ "$(id -u)" != 0 ] && [ ! -w "$($PG_CONFIG --pkglibdir)" ]; then SUDO="sudo"; fi

log "building (warnings are errors, invariant checks on)"
make -C "$here" -s clean >/dev/null 2>&1
if ! make -C "$here" -s -j2 PG_CONFIG="$PG_CONFIG" CHECKS=1 COPT='-Werror' >/tmp/ddb-build.$$ 2>&1; then
	cat /tmp/ddb-build.$$ >&2; rm -f /tmp/ddb-build.$$
	echo "0 passed, 1 failed"; exit 1
fi
rm -f /tmp/ddb-build.$$
$SUDO make -C "$here" -s install PG_CONFIG="$PG_CONFIG" CHECKS=1 >/dev/null || {
	echo "make install failed" >&2; echo "0 passed, 1 failed"; exit 1; }

# --- a throwaway cluster, owned by a non-root user --------------------------
work=$(mktemp -d /tmp/ddb-test.XXXXXX)
if [ "$(id -u)" = 0 ]; then
	RUNAS=postgres
	id postgres >/dev/null 2>&1 || useradd -r -m postgres
	as_user() { su "$RUNAS" -s /bin/bash -c "$*"; }
else
	RUNAS=$(id -un)
	as_user() { bash -c "$*"; }
fi
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
mk="make -C '$work/src' PG_CONFIG='$PG_CONFIG' CHECKS=1 PGHOST='$work/sock' PGPORT=$PGPORT PGUSER='$RUNAS'"

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
