#!/usr/bin/env bash
#
# test/run.sh: build ddb and run its whole test suite on a throwaway cluster.
#
#   bash test/run.sh            # every part (see "parts" below)
#   bash test/run.sh regress    # only some parts, in the order given
#
# On a fresh Debian 12 machine run it as root: it installs what is missing,
# builds with warnings as errors and ddb's invariant checks on, installs the
# extension, and runs the tests as the unprivileged "postgres" user (initdb
# refuses root).  As a normal user it needs the build dependencies already
# installed and write access to PostgreSQL's extension directories (or sudo).
#
# The checks build is made in a private copy of the tree, never in the
# checkout, so a later "make install" in the checkout builds the plain
# library.  The part "plain" (last in a full run) builds and installs the
# plain library, as users do, and runs the regression suite against it; a
# run without it leaves the checks build installed, and says so.
#
# Parts (each is a function part_NAME below; to add one, write the function
# and add its name to all_parts):
#   regress        pg_regress, sql/ against expected/ (and sql/ = REGRESS)
#   regress-order  every regression file alone, then all in reverse order
#   regress-batches  the regression files again with every range scan's
#                  batches one row (ddb.check_scan_batch = 1), so that each
#                  scan resumes by key after every row (ddb_scan.c); keyscan,
#                  which counts the buffers scans read, left out
#   isolation      isolation specs (and test/isolation/specs = ISOLATION)
#   tap            TAP tests, test/t/*.pl; those that crash, replicate or
#                  wrap around a second time with ddb preloaded (its own
#                  WAL records instead of Generic WAL: test/t/DdbWal.pm)
#   fuzz           expression and item-model fuzzing with result oracles: a
#                  fixed seed (DDB_FUZZ_SEED, default 1) and a self-test that
#                  the oracles catch planted differences; DDB_FUZZ_RANDOM=1
#                  adds a run with a random seed (printed)
#   bench          benchmark smoke: the scripts run and ddb and heap tables
#                  return the same results (nothing about speed)
#   endpoint       the HTTP endpoint in a cluster of its own with the library
#                  preloaded: pytest through boto3, the AWS CLI, dynamodb-admin
#   readme         every SQL example in README.md, in order, in the demo
#                  database (test/readme/check.py)
#   plain          the plain build users install, by the demo
#                  (test/demo.sh, in a directory of its own: DDB_DEMO_DIR),
#                  whose second start must not build again, whose
#                  rebuild restarts its running cluster, and whose
#                  printed endpoint commands work as printed; then the
#                  regression suite again
# A part that was asked for and ran nothing is a failure.
#
# Knobs: DDB_PGBIN (another PostgreSQL 15 build's bin directory),
# DDB_TEST_PORT, DDB_TEST_FREE_PORTS ("lo-hi": where the endpoint's tests
# and the demo take TCP ports; default the kernel's pick), DDB_KEEP=1 (keep the work directory), DDB_TAP_AM=heap (run
# the TAP tests' workloads on heap tables, to check the harness itself),
# DDB_FUZZ_SEED (the fixed fuzz seed, default 1).
#
# The last line is "N passed, N failed"; the exit status is non-zero when
# anything failed.
set -u
set -o pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
all_parts="regress regress-order regress-batches isolation tap fuzz bench endpoint readme plain"
parts=${*:-$all_parts}
. "$here/test/lib.sh"

# Every step's line carries the run's elapsed time (minutes:seconds), so a
# log shows where CI's 30 minutes go.
log() { printf '==> [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2; }

for part in $parts; do
	case " $all_parts " in
	*" $part "*) ;;
	*) echo "unknown part: $part (parts: $all_parts)" >&2; echo "0 passed, 1 failed"; exit 1 ;;
	esac
done

# --- dependencies, build and install (test/lib.sh) --------------------------
ddb_install_deps || { echo "0 passed, 1 failed"; exit 1; }

work=$(mktemp -d /tmp/ddb-test.XXXXXX)
ddb_cluster_user
chmod 755 "$work"
# Build and run tests in a private copy: tests write results next to their
# inputs, and the checks build's objects must not stay in the checkout.
ddb_copy_tree "$work/src"

log "building in a private copy (warnings are errors, invariant checks on)"
ddb_build_install "$work/src" CHECKS=1 COPT='-Werror' || { echo "0 passed, 1 failed"; exit 1; }
installed="the invariant-checks build"
mkdir -p "$work/sock"
chown -R "$RUNAS" "$work" 2>/dev/null || true

# --- a throwaway cluster, owned by a non-root user --------------------------
PGPORT=${DDB_TEST_PORT:-55439}
export PGPORT PGHOST="$work/sock" PGUSER="$RUNAS" PGDATABASE=postgres
cleanup() {
	as_user "$PGBIN/pg_ctl -D '$work/data' -m immediate stop" >/dev/null 2>&1
	# the plain part's demo cluster, if it was left running
	[ ! -f "$work/demo/data/postmaster.pid" ] ||
		as_user "$PGBIN/pg_ctl -D '$work/demo/data' -m immediate stop" >/dev/null 2>&1
	if [ -z "${DDB_KEEP:-}" ]; then rm -rf "$work"; else echo "kept $work" >&2; fi
}
trap cleanup EXIT

# The cluster's locale is the common default, a UTF-8 one (C.UTF-8, which
# PostgreSQL does not treat as bytewise), whatever this shell's is.
locale_opt="" locale_name="the environment's locale"
if locale -a 2>/dev/null | grep -qix 'c\.utf-\?8'; then locale_opt="--locale=C.UTF-8" locale_name="C.UTF-8"; fi
log "starting a throwaway cluster in $work ($locale_name)"
as_user "$PGBIN/initdb -D '$work/data' -A trust -U '$RUNAS' -E UTF8 $locale_opt --no-sync" >"$work/initdb.log" 2>&1 || {
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
# Each part adds to p (passed) and f (failed).
p=0
f=0
count_pgregress() {
	# pg_regress / pg_isolation_regress print "name ... ok" / "... FAILED"
	local out=$1
	p=$((p + $(grep -cE '\.\.\. +ok' "$out")))
	f=$((f + $(grep -cE '\.\.\. +FAILED|failed \(ignored\)' "$out")))
}
# su drops the environment: hand the TAP tests their knobs explicitly.
tapenv=""
case ${DDB_TAP_AM:-} in
'') ;;
*[!A-Za-z0-9_]*) echo "DDB_TAP_AM must be an access method name" >&2; echo "0 passed, 1 failed"; exit 1 ;;
*) tapenv="DDB_TAP_AM=$DDB_TAP_AM " ;;
esac
conn="PGHOST='$work/sock' PGPORT=$PGPORT PGUSER='$RUNAS' PGDATABASE=postgres"
mk() {   # DIR: make in DIR against the throwaway cluster, as its owner
	echo "${tapenv}make -C '$1' PG_CONFIG='$PG_CONFIG' $conn"
}

# make_var DIR NAME: a variable of the Makefile, as make sees it.
make_var() {
	printf 'ddb-print-%%:\n\t@echo $($*)\n' >"$work/print.mk"
	make -s --no-print-directory -C "$1" -f Makefile -f "$work/print.mk" \
		PG_CONFIG="$PG_CONFIG" "ddb-print-$2"
}
# same_list WHAT LISTED FOUND: fail (and say how) when two name lists differ.
same_list() {
	local what=$1 listed found missing extra
	listed=$(tr -s ' ' '\n' <<<"$2" | sed '/^$/d' | sort)
	found=$(tr -s ' ' '\n' <<<"$3" | sed '/^$/d' | sort)
	missing=$(comm -13 <(echo "$listed") <(echo "$found") | tr '\n' ' ')
	extra=$(comm -23 <(echo "$listed") <(echo "$found") | tr '\n' ' ')
	if [ -n "$missing$extra" ]; then
		echo "FAILED: $what disagree:${missing:+ not listed: $missing}${extra:+ listed without a file: $extra}"
		f=$((f + 1))
		return 1
	fi
	echo "ok: $what agree"
	p=$((p + 1))
}

# pg_suite DIR VAR FILES EXT MAKEARGS DIFFS: a pg_regress-style suite in DIR
# (a built copy of the tree): the Makefile's list VAR must name exactly the
# FILES/*.EXT, then "make installcheck MAKEARGS" runs it; DIFFS is shown
# on failure.
pg_suite() {
	local dir=$1 var=$2 files=$3 ext=$4 args=$5 diffs=$6 out="$work/suite.$RANDOM.out" rc
	same_list "$files/*.$ext and the Makefile's $var" "$(make_var "$dir" "$var")" \
		"$(cd "$dir/$files" && ls *."$ext" 2>/dev/null | sed "s/\\.$ext\$//")"
	as_user "$(mk "$dir") installcheck $args" >"$out" 2>&1
	rc=$?
	cat "$out"
	count_pgregress "$out"
	if [ $rc != 0 ] && ! grep -qE 'FAILED' "$out"; then f=$((f + 1)); fi
	[ -f "$dir/$diffs" ] && head -200 "$dir/$diffs"
}

regress_in() {   # DIR: the regression suite in DIR
	pg_suite "$1" REGRESS sql sql "ISOLATION= TAP_TESTS=" regression.diffs
}

# check_layers DIR: in the built tree DIR, the engine's objects use no
# symbol defined in another layer's, and the model's none but the
# engine's (README, "Design": a layer calls only the layers below it).
# Read off the objects' symbol tables, so an include that slips through
# ddb.h counts as much as one of "api/...".
check_layers() {
	local dir=$1 defs="$work/layer-defs" bad="" o layer
	: >"$defs"
	for o in "$dir"/src/*/*.o "$dir"/src/*.o; do
		layer=$(basename "$(dirname "$o")")
		[ "$layer" = src ] && layer=main
		nm --defined-only "$o" | awk -v l="$layer" '$2 ~ /^[TDBR]$/ {print $3, l}' >>"$defs"
	done
	for o in "$dir"/src/engine/*.o "$dir"/src/model/*.o; do
		layer=$(basename "$(dirname "$o")")
		bad="$bad$(nm -u "$o" | awk '{print $2}' | LC_ALL=C sort -u |
			LC_ALL=C join - <(LC_ALL=C sort -u "$defs") |
			awk -v l="$layer" -v f="${o#"$dir"/}" '$2 != l && !(l == "model" && $2 == "engine") {printf " %s->%s(%s)", f, $1, $2}')"
	done
	if [ -n "$bad" ]; then
		echo "FAILED: layers call upward:$bad"
		f=$((f + 1))
	else
		echo "ok: the engine and the model call no layer above them"
		p=$((p + 1))
	fi
}

part_regress() {
	log "regression tests"
	check_layers "$work/src"
	regress_in "$work/src"
}

# Every regression file alone (a fresh database each), then all of them in
# reverse order in one database: none may depend on another's leftovers or
# on running after another.  Counted as one test per file that failed, or
# one passed test.
part_regress_order() {
	local dir="$work/src" t bad="" pgr
	log "regression files alone and in reverse order"
	pgr=$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress
	local tests rev
	tests=$(make_var "$dir" REGRESS)
	rev=$(tr ' ' '\n' <<<"$tests" | sed '/^$/d' | tac | tr '\n' ' ')
	for t in $tests; do
		as_user "cd '$dir' && $conn '$pgr' --inputdir=. --bindir='$PGBIN' --dbname=ddb_alone_$t $t" \
			>"$work/alone.out" 2>&1 || {
			bad="$bad $t(alone)"
			cat "$work/alone.out"
			# (the next file's run replaces the diffs: show them now)
			[ -f "$dir/regression.diffs" ] && head -100 "$dir/regression.diffs"
		}
	done
	as_user "cd '$dir' && $conn '$pgr' --inputdir=. --bindir='$PGBIN' --dbname=ddb_reverse $rev" \
		>"$work/reverse.out" 2>&1 || { bad="$bad (reverse order)"; cat "$work/reverse.out"; }
	if [ -n "$bad" ]; then
		echo "FAILED: regression files that depend on order:$bad"
		[ -f "$dir/regression.diffs" ] && head -100 "$dir/regression.diffs"
		f=$((f + 1))
	else
		echo "ok: every regression file passes alone and in reverse order"
		p=$((p + 1))
	fi
}

part_regress_batches() {
	local dir="$work/src" pgr tests out="$work/batches.out"
	log "regression files with every scan batch one row"
	pgr=$("$PG_CONFIG" --pkglibdir)/pgxs/src/test/regress/pg_regress
	tests=$(make_var "$dir" REGRESS | tr ' ' '\n' | sed '/^$/d' | grep -vx keyscan | tr '\n' ' ')
	as_user "cd '$dir' && PGOPTIONS='-c ddb.check_scan_batch=1' $conn '$pgr' --inputdir=. --bindir='$PGBIN' --dbname=ddb_batches $tests" \
		>"$out" 2>&1
	cat "$out"
	count_pgregress "$out"
	if ! grep -qE '\.\.\. +ok' "$out"; then f=$((f + 1)); fi
	[ -f "$dir/regression.diffs" ] && head -200 "$dir/regression.diffs"
}

part_isolation() {
	log "isolation tests"
	pg_suite "$work/src" ISOLATION test/isolation/specs spec "REGRESS= TAP_TESTS=" output_iso/regression.diffs
}

# tap_pass LABEL ENV TESTS: one prove run of TESTS (empty: all) with ENV
# (VAR=value ...) in the environment, counted.  Two tests at a time: most
# of a test's time is waiting for its servers to start, stop, crash and
# catch up (a sequential run used a third of one core), and two at once
# took the first pass from about 350 s to 180 s on 2 cores.  Each test's
# servers take their own ports (PostgreSQL::Test::Cluster reserves them)
# and directories.
tap_pass() {
	local label=$1 env=$2 tests=$3 dir="$work/src" out="$work/tap.$RANDOM.out" rc n
	log "TAP tests$label"
	as_user "$env $(mk "$dir") installcheck REGRESS= ISOLATION= PROVE_FLAGS='--timer -j2'${tests:+ PROVE_TESTS='$tests'}" >"$out" 2>&1
	rc=$?
	cat "$out"
	p=$((p + $(grep -cE '^\[[0-9:]+\] test/t/[^ ]+ \.+ ok' "$out")))
	n=$(grep -cE '^test/t/[^ ]+ +\(Wstat|^\[[0-9:]+\] test/t/[^ ]+ \.+ (Dubious|Failed|[0-9]+/)' "$out")
	if [ $rc != 0 ] && [ "$n" = 0 ]; then n=1; fi
	f=$((f + n))
	if [ $rc != 0 ]; then
		for l in "$dir"/tmp_check/log/*; do
			[ -f "$l" ] && { echo "--- $l"; tail -50 "$l"; }
		done
	fi
}

# Every TAP test as users run it (CREATE EXTENSION alone: Generic WAL), then
# the ones that crash, replicate or wrap around (those that call
# DdbWal::configure, or DdbWal::primary_and_standby, which calls it) again
# with ddb preloaded, so its own WAL records are what recovery and the
# standbys replay (test/t/DdbWal.pm).
#
# That choice is a grep, so a test that uses DdbWal but makes its nodes
# some other way would drop out of the second pass unseen (02e7601 did that
# to two tests).  Every test that uses DdbWal must be chosen, or be one of
# those that set shared_preload_libraries themselves and run once
# (tap_self_preload); otherwise the part fails.
tap_self_preload="016_custom_wal.pl 019_legacy_wal.pl 022_unknown_wal.pl"

# tap_custom_wal_tests DIR: the tests for the second pass, on stdout; the
# tests that use DdbWal and are neither chosen nor in tap_self_preload, on
# stderr, with status 1.
tap_custom_wal_tests() {
	local t chosen users missing= stale=
	chosen=$(cd "$1" && grep -lE 'DdbWal::(configure|primary_and_standby)' test/t/*.pl | tr '\n' ' ')
	users=$(cd "$1" && grep -lE '^[[:space:]]*(use|require)[[:space:]]+DdbWal\b' test/t/*.pl | tr '\n' ' ')
	for t in $users; do
		case " $chosen $(printf 'test/t/%s ' $tap_self_preload)" in
		*" $t "*) ;;
		*) missing="$missing $t" ;;
		esac
	done
	for t in $tap_self_preload; do
		case " $users " in
		*" test/t/$t "*) ;;
		*) stale="$stale $t" ;;
		esac
	done
	echo "$chosen"
	if [ -n "$missing" ]; then
		echo "these TAP tests use DdbWal but call neither DdbWal::configure nor DdbWal::primary_and_standby, so the pass with ddb's own WAL would skip them:$missing" >&2
	fi
	if [ -n "$stale" ]; then
		echo "tap_self_preload names tests that do not exist or do not use DdbWal:$stale" >&2
	fi
	[ -z "$missing$stale" ]
}

part_tap() {
	local wal first copy="$work/tapcheck"
	tap_pass "" "" ""
	if ! wal=$(tap_custom_wal_tests "$work/src"); then
		echo "FAILED: the TAP tests' choice for the pass with ddb's own WAL"
		f=$((f + 1))
	fi
	# the check itself fails a copy whose first chosen test makes its nodes
	# another way
	first=${wal%% *}
	mkdir -p "$copy/test/t" && cp "$work/src"/test/t/*.p[lm] "$copy/test/t/" &&
		sed -i 's/DdbWal::configure/other_configure/g; s/DdbWal::primary_and_standby/other_setup/g' \
			"$copy/$first"
	if [ -n "$first" ] && ! tap_custom_wal_tests "$copy" >/dev/null 2>&1; then
		echo "ok: the TAP tests' choice fails a DdbWal test that would drop out"
		p=$((p + 1))
	else
		echo "FAILED: the TAP tests' choice took a copy whose $first makes its nodes another way"
		f=$((f + 1))
	fi
	rm -rf "$copy"
	tap_pass " with ddb's own WAL records (DDB_TAP_WAL=custom)" "DDB_TAP_WAL=custom" "$wal"
}

# run_script NAME COMMAND: one test that passes when COMMAND exits 0.
run_script() {
	local name=$1 out="$work/script.$RANDOM.out"
	shift
	if as_user "$conn $*" >"$out" 2>&1; then
		echo "ok: $name"
		p=$((p + 1))
	else
		echo "FAILED: $name"
		f=$((f + 1))
	fi
	tail -30 "$out"
}

part_fuzz() {
	local fz="$work/src/test/fuzz/run.sh" seed=${DDB_FUZZ_SEED:-1}
	log "fuzz smoke: seed $seed and the oracles' self-test"
	case $seed in ''|*[!0-9]*) echo "DDB_FUZZ_SEED must be a number"; f=$((f + 1)); return ;; esac
	run_script "fuzz, seed $seed" "bash '$fz' --smoke --seed $seed"
	if [ "${DDB_FUZZ_RANDOM:-0}" = 1 ]; then
		run_script "fuzz, a random seed" "bash '$fz' --smoke"
	fi
	run_script "fuzz oracles catch planted differences" "bash '$fz' --selftest --seed $seed"
}

part_bench() {
	log "benchmark smoke (the scripts run and the tables agree; nothing about speed)"
	run_script "benchmark smoke" "bash '$work/src/test/bench/run.sh' --smoke"
}

# The HTTP endpoint in a cluster of its own (it needs the library preloaded):
# test/endpoint/run.sh counts its pytest cases.
part_endpoint() {
	local out="$work/endpoint.out" rc ep ef
	log "HTTP endpoint: boto3, AWS CLI, dynamodb-admin"
	DDB_BUILT=1 DDB_TEST_PORT=$((PGPORT + 1)) bash "$here/test/endpoint/run.sh" >"$out" 2>&1
	rc=$?
	tail -40 "$out"
	read -r ep ef < <(sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\1 \2/p' "$out" | tail -1)
	if [ -z "${ep:-}" ]; then ep=0; ef=1; fi
	if [ $rc != 0 ] && [ "$ef" = 0 ]; then ef=1; fi
	p=$((p + ep))
	f=$((f + ef))
}

part_readme() {
	log "README examples, in order, in the demo database"
	run_script "README examples" "python3 '$work/src/test/readme/check.py' --demo '$work/src/test/demo.sql' '$work/src/README.md'"
}

# A free loopback TCP port: one of DDB_TEST_FREE_PORTS ("lo-hi") when
# given, else the kernel's pick.
free_tcp_port() {
	/usr/bin/python3 - "${DDB_TEST_FREE_PORTS:-}" <<'EOF'
import random, socket, sys
cands = [0]
if sys.argv[1]:
    lo, hi = (int(x) for x in sys.argv[1].split("-"))
    cands = random.sample(range(lo, hi + 1), hi - lo + 1)
for c in cands:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", c))
        except OSError:
            continue
        print(s.getsockname()[1])
        break
EOF
}

# The plain library, built and installed over the checks build by the
# demo, the README's first command, as users get it; the demo's second
# start must find it current and not build again, and a third, told to
# rebuild while the cluster runs, must restart it onto the new library.
# Then the regression suite once more against it.
part_plain() {
	local demo out pm
	log "the plain build users install: the demo (built, started again, rebuilt while it runs), regression suite"
	ddb_copy_tree "$work/plain"
	chown -R "$RUNAS" "$work/plain" 2>/dev/null || true
	demo=(env DDB_DEMO_DIR="$work/demo" DDB_DEMO_PORT=$((PGPORT + 2))
		DDB_DEMO_HTTP_PORT="$(free_tcp_port)" bash "$work/plain/test/demo.sh")
	out="$work/demo.out"
	if ! "${demo[@]}" </dev/null >"$out" 2>&1; then
		tail -30 "$out"
		echo "FAILED: the plain build (test/demo.sh)"
		f=$((f + 1))
		return
	fi
	installed="the plain build"
	if "${demo[@]}" stop >>"$out" 2>&1 && "${demo[@]}" </dev/null >"$out.2" 2>&1 &&
		grep -q "ddb is installed from these sources already" "$out.2" &&
		! grep -q "building and installing" "$out.2" &&
		[ -f "$work/demo/data/PG_VERSION" ]; then
		echo "ok: the demo runs in DDB_DEMO_DIR, and starts again without building"
		p=$((p + 1))
	else
		tail -30 "$out.2" 2>/dev/null
		echo "FAILED: the demo's second start (DDB_DEMO_DIR, no rebuild)"
		f=$((f + 1))
	fi
	# A run that installs a build while the cluster runs must restart it:
	# the preloaded library stays mapped, deleted, in the old server.  (It
	# runs with a python3 first on PATH that has no boto3, as a pyenv or a
	# virtualenv may be, for the check of the printed commands below.)
	local nob="$work/python-without-boto3"
	mkdir -p "$nob" && printf '#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n' >"$nob/python3" &&
		chmod 755 "$nob" "$nob/python3"
	rm -f "$work/demo/installed-build"
	if PATH="$nob:$PATH" "${demo[@]}" </dev/null >"$out.3" 2>&1 &&
		grep -q "building and installing" "$out.3" &&
		pm=$(head -1 "$work/demo/data/postmaster.pid") &&
		grep -q '/ddb\.so$' "/proc/$pm/maps" && ! grep -q 'ddb\.so (deleted)' "/proc/$pm/maps"; then
		echo "ok: the demo restarts a running cluster onto the build it installs"
		p=$((p + 1))
	else
		tail -30 "$out.3" 2>/dev/null
		grep ddb "/proc/${pm:-0}/maps" 2>/dev/null | sort -u -k6
		echo "FAILED: the demo's rebuild while its cluster runs leaves the old library loaded"
		f=$((f + 1))
	fi
	# The endpoint commands the demo prints work as printed, from the
	# shell it ran in.
	local cmds res
	cmds=$(sed -n '/^  export AWS_ACCESS_KEY_ID=/,/python3 -c /p' "$out.3")
	if [ -n "$cmds" ] && res=$(PATH="$nob:$PATH" bash -c "$cmds" 2>&1) &&
		grep -q '"S": "PROFILE"' <<<"$res" &&
		grep -q "'SK': 'PROFILE'" <<<"$res"; then
		echo "ok: the endpoint commands the demo prints work as printed"
		p=$((p + 1))
	else
		echo "$cmds"
		echo "$res" | tail -20
		echo "FAILED: the endpoint commands the demo prints"
		f=$((f + 1))
	fi
	"${demo[@]}" stop >>"$out" 2>&1
	regress_in "$work/plain"
}

# "plain" replaces the installed library: run it last.
ordered=""
for part in $parts; do [ "$part" = plain ] || ordered="$ordered $part"; done
case " $parts " in *" plain "*) ordered="$ordered plain" ;; esac

for part in $ordered; do
	p=0
	f=0
	"part_${part//-/_}"
	if [ $((p + f)) = 0 ]; then
		echo "FAILED: part $part ran no tests"
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
done

if grep -qE 'TRAP:|terminated by signal|server process .* was terminated' "$work/server.log"; then
	echo "the server log shows a crash:" >&2
	grep -E 'TRAP:|terminated by signal|was terminated' "$work/server.log" >&2
	failed=$((failed + 1))
fi

log "installed in $PG_CONFIG's PostgreSQL: $installed$([ "$installed" = "the plain build" ] ||
	echo " (bash test/run.sh plain, or make install, replaces it)")"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
