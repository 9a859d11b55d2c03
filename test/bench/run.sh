#!/usr/bin/env bash
#
# test/bench/run.sh: ddb against PostgreSQL's own heap + btree, side by side.
#
#   bash test/bench/run.sh                # 1M items, 5 rounds of 5 s runs, 1 and 2 clients (~25 min)
#   bash test/bench/run.sh --items 100000 --duration 3 --rounds 7 --clients 4
#   bash test/bench/run.sh --locale C.UTF-8      # the database in a UTF-8 locale
#   bash test/bench/run.sh --shared-buffers 64MB --ops "get query" # a small cache
#   bash test/bench/run.sh --preload --ops "put_new put_over update"  # ddb preloaded: its own WAL records
#   bash test/bench/run.sh --huge-pages --ops "delete delete_old"  # shared memory in 2 MB pages
#   bash test/bench/run.sh --preload --wal-compression lz4 --ops put_new  # compressed splits (and images)
#   bash test/bench/run.sh --scaling      # GetItem and Query-100 at 10^5 and 10^6 items
#   bash test/bench/run.sh --scaling --big   # ... and 10^7 (long: about an hour)
#   bash test/bench/run.sh --smoke        # 2,000 items, 1 s runs (CI: the scripts run, results agree)
#
# Loads the same items into a ddb table (bench_ddb), a heap table with
# PRIMARY KEY ("PK", "SK") (bench_heap) and, for Query, a heap copy
# CLUSTERed on that key (bench_heap_clustered), checks that all three hold
# the same items and answer every read benchmark's query alike, then runs
# pgbench -M prepared scripts (test/bench/*.sql, @TBL@ replaced by the
# table) and prints Markdown tables: tps and ratios, COPY time, size on
# disk, WAL bytes per write, buffers per query, load average.
#
# Method: each operation runs in short runs (--duration seconds) for
# --rounds rounds; in each round every side (ddb API, ddb SQL, heap,
# clustered heap) runs once, in an order that alternates from round to
# round, so that a noisy neighbour or a drifting machine weighs on both
# sides alike.  A ratio is the median over rounds of the per-round ratio
# (ddb tps / heap tps of the same round), reported with its spread (the
# lowest and highest per-round ratio); tps and WAL columns are medians.
# The 1-minute load average is sampled before every run: the table shows
# its mean per operation, and the header the whole run's range.  Reads run
# before writes at every client count, so that all of them read the table
# as loaded (see the main loop).
#
# Items: N = 100 x P, partition i % P gets item i (interleaved arrival, as
# real traffic), the generator and the scripts share bench_pk/bench_sk
# (setup.sql), so every GetItem hits.  The database is UTF-8 with the "C"
# collation by default; --locale L creates it with locale L instead (the
# ddb table's text keys are then "C" all the same, the heap's take L), and
# the run fails if plain SQL on the ddb table does not get the key scan
# without a Sort.
#
# Server: by default a throwaway cluster of its own (DDB_PGBIN, default
# /usr/lib/postgresql/15/bin; port DDB_BENCH_PORT, default 55480; as the
# "postgres" user when run as root; shared_buffers 2GB or --shared-buffers,
# synchronous_commit off, see start_cluster).  With --use-running, or with
# --smoke when PGHOST is set (test/run.sh's "bench" part), it uses the
# server PGHOST/PGPORT/PGUSER point to, in a scratch database ddb_bench
# that it drops at the end.  The ddb extension must be installed in that
# server's PostgreSQL.
#
# Exit status: non-zero when a benchmark did not run (pgbench failed or
# reported no transactions, a delete missed its keys), when the tables'
# contents or any read benchmark's results differ between ddb and heap,
# or when the ddb table's plain-SQL query does not use the key scan.
# Nothing about speed is asserted.
set -u
set -o pipefail

bench_dir=$(cd "$(dirname "$0")" && pwd)
PGBIN=${DDB_PGBIN:-/usr/lib/postgresql/15/bin}

items=1000000
duration=5
rounds=5
clients_list="1 2"
mode=full
use_running=0
big=0
db_locale=""
shared_buffers=""
only_ops=""
preload=0
huge_pages=0
wal_compression=""
orig_args=("$@")
usage() { sed -n '3,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--items) items=$2; shift ;;
	--duration) duration=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--clients) clients_list="1 $2"; [ "$2" = 1 ] && clients_list=1; shift ;;
	--locale) db_locale=$2; shift ;;
	--shared-buffers) shared_buffers=$2; shift ;;
	--ops) only_ops=$2; shift ;;
	--preload) preload=1 ;;
	--huge-pages) huge_pages=1 ;;
	--wal-compression) wal_compression=$2; shift ;;
	--smoke) mode=smoke ;;
	--scaling) mode=scaling ;;
	--big) big=1 ;;
	--use-running) use_running=1 ;;
	-h|--help) usage ;;
	*) echo "unknown option: $1" >&2; usage ;;
	esac
	shift
done
if [ $mode = smoke ]; then
	items=2000; duration=1; rounds=2; clients_list=1
	[ -n "${PGHOST:-}" ] && use_running=1
fi
if [ -n "$wal_compression" ] && [ $use_running = 1 ]; then
	echo "--wal-compression needs the script's own cluster" >&2; exit 2
fi
if [ $preload = 1 ] && [ $use_running = 1 ]; then
	echo "--preload needs the script's own cluster (the running server's preload is its own)" >&2; exit 2
fi
if [ $huge_pages = 1 ] && [ $use_running = 1 ]; then
	echo "--huge-pages needs the script's own cluster" >&2; exit 2
fi
case $items in ''|*[!0-9]*) echo "--items must be a number" >&2; exit 2 ;; esac
case $duration in ''|*[!0-9]*) echo "--duration must be a number of seconds" >&2; exit 2 ;; esac
case $rounds in ''|*[!0-9]*|0) echo "--rounds must be a positive number" >&2; exit 2 ;; esac
case $db_locale in *[!A-Za-z0-9_.@-]*) echo "--locale must be a locale name" >&2; exit 2 ;; esac
case $shared_buffers in *[!A-Za-z0-9]*) echo "--shared-buffers must be a size like 64MB" >&2; exit 2 ;; esac
if [ $((items % 100)) != 0 ] || [ "$items" -lt 100 ]; then
	echo "--items must be a multiple of 100 (100 items per partition)" >&2; exit 2
fi

# The throwaway cluster's shared_buffers.
cluster_shared_buffers() {
	local sb=2GB
	[ $mode = smoke ] && sb=128MB
	[ "$items" -ge 10000000 ] && sb=8GB
	[ -n "$shared_buffers" ] && sb=$shared_buffers
	echo $sb
}

# --huge-pages: the cluster's shared memory in 2 MB pages (huge_pages = on).
# PostgreSQL's main shared memory is otherwise mapped in 4 kB pages, and
# each backend takes a page fault the first time it touches each of them:
# pgbench opens new connections for every run, so a run that touches many
# distinct buffers (a delete of random keys) pays a fault for most of them,
# which a pooled, long-lived connection would not.  With 2 MB pages a
# backend takes a fault per 2 MB instead.  Run as root, the script reserves
# the pages (vm.nr_hugepages: shared_buffers plus an eighth and 64 MB) and
# gives them back at the end; otherwise they must be reserved already.
huge_pages_needed() {
	local sb mb
	sb=$(cluster_shared_buffers)
	case $sb in
	*[Gg][Bb]) mb=$(( ${sb%??} * 1024 )) ;;
	*[Mm][Bb]) mb=${sb%??} ;;
	*[Kk][Bb]) mb=$(( ${sb%??} / 1024 )) ;;
	*) echo "--huge-pages: cannot size shared_buffers $sb (give it in kB, MB or GB)" >&2; exit 2 ;;
	esac
	echo $(( (mb + mb / 8 + 64) / 2 ))
}

# initdb refuses root: run the whole benchmark as "postgres" instead.
if [ "$(id -u)" = 0 ] && [ $huge_pages = 1 ]; then
	hp_before=$(cat /proc/sys/vm/nr_hugepages)
	hp_want=$(( hp_before + $(huge_pages_needed) ))
	echo $hp_want >/proc/sys/vm/nr_hugepages 2>/dev/null
	if [ "$(cat /proc/sys/vm/nr_hugepages)" -lt $hp_want ]; then
		echo $hp_before >/proc/sys/vm/nr_hugepages
		echo "--huge-pages: could not reserve $hp_want huge pages (vm.nr_hugepages)" >&2; exit 1
	fi
	trap 'echo $hp_before >/proc/sys/vm/nr_hugepages' EXIT
fi
if [ "$(id -u)" = 0 ]; then
	id postgres >/dev/null 2>&1 || useradd -r -m postgres
	envs="DDB_PGBIN=$(printf %q "$PGBIN") DDB_BENCH_PORT=${DDB_BENCH_PORT:-55480} DDB_KEEP=${DDB_KEEP:-}"
	if [ $use_running = 1 ]; then
		envs="$envs PGHOST=$(printf %q "$PGHOST") PGPORT=${PGPORT:-5432} PGUSER=$(printf %q "${PGUSER:-postgres}")"
	fi
	args=""
	[ ${#orig_args[@]} -gt 0 ] && args=$(printf ' %q' "${orig_args[@]}")
	cmd="$envs bash $(printf %q "$bench_dir/$(basename "$0")")$args"
	# (not exec'd with --huge-pages: the EXIT trap gives the pages back)
	[ $huge_pages = 1 ] || { cd /tmp && exec su postgres -s /bin/bash -c "$cmd"; }
	cd /tmp && su postgres -s /bin/bash -c "$cmd"
	exit $?
fi

export PATH="$PGBIN:$PATH"
work=$(mktemp -d /tmp/ddb-bench.XXXXXX)
results="$work/results"     # op|variant|clients|round|tps|wal bytes per txn|load average|wal bytes per txn without FPIs|server CPU us per txn
: >"$results"
log() { printf '==> [%4ss] %s\n' "$SECONDS" "$*" >&2; }
die() { echo "bench: $*" >&2; exit 1; }
started_cluster=0
export PGDATABASE=ddb_bench
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"

cleanup() {
	if [ $started_cluster = 1 ]; then
		pg_ctl -D "$work/data" -m fast stop >/dev/null 2>&1 ||
			pg_ctl -D "$work/data" -m immediate stop >/dev/null 2>&1
	elif [ $use_running = 1 ]; then
		psql -X -q -d postgres -c 'DROP DATABASE IF EXISTS ddb_bench' >/dev/null 2>&1
	fi
	if [ -z "${DDB_KEEP:-}" ]; then rm -rf "$work"; else echo "kept $work" >&2; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the server ---------------------------------------------------------------

start_cluster() {
	local sb
	sb=$(cluster_shared_buffers)
	export PGHOST="$work/sock" PGPORT=${DDB_BENCH_PORT:-55480} PGUSER=$(id -un)
	mkdir -p "$work/sock"
	log "starting a throwaway cluster in $work (port $PGPORT, shared_buffers $sb)"
	initdb -D "$work/data" -A trust -U "$PGUSER" --locale=C --encoding=UTF8 --no-sync \
		>"$work/initdb.log" 2>&1 || { cat "$work/initdb.log" >&2; die "initdb failed"; }
	# The same settings serve both sides.  synchronous_commit = off keeps the
	# VM's fsync latency from hiding the engines' own costs in the write
	# benchmarks; max_wal_size keeps checkpoints out of the runs.
	cat >>"$work/data/postgresql.conf" <<EOF
listen_addresses = ''
unix_socket_directories = '$work/sock'
port = $PGPORT
shared_buffers = $sb
synchronous_commit = off
max_wal_size = 20GB
checkpoint_timeout = 1h
log_min_messages = warning
EOF
	# --preload: ddb in shared_preload_libraries, so ddb tables are logged
	# with its own WAL records (src/engine/ddb_wal.c), not Generic WAL
	if [ $preload = 1 ]; then
		printf "shared_preload_libraries = 'ddb'\nddb.http_port = 0\n" >>"$work/data/postgresql.conf"
	fi
	[ $huge_pages = 1 ] && echo "huge_pages = on" >>"$work/data/postgresql.conf"
	# --wal-compression: page images compressed on both sides, and with
	# ddb's own records its leaf splits' right halves (ddb_wal.c)
	[ -n "$wal_compression" ] && echo "wal_compression = $wal_compression" >>"$work/data/postgresql.conf"
	pg_ctl -D "$work/data" -l "$work/server.log" -w start >/dev/null ||
		{ cat "$work/server.log" >&2; die "the server did not start"; }
	started_cluster=1
}

if [ $use_running = 1 ]; then
	[ -n "${PGHOST:-}" ] || die "--use-running needs PGHOST (and PGPORT, PGUSER)"
	log "using the running server at ${PGHOST}:${PGPORT:-5432}"
else
	start_cluster
fi

q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

q -d postgres -c 'DROP DATABASE IF EXISTS ddb_bench' >/dev/null ||
	die "cannot connect to the server"
# UTF-8 and the "C" collation whatever the server's defaults (ddb's key
# order is bytewise UTF-8, and so is ORDER BY "SK" here), or --locale's.
q -d postgres -c "CREATE DATABASE ddb_bench TEMPLATE template0 ENCODING 'UTF8' LOCALE '${db_locale:-C}'" ||
	die "cannot create the database ddb_bench (locale ${db_locale:-C})"
q -f "$bench_dir/setup.sql" || die "setup failed"
have_prewarm=1
q -c 'CREATE EXTENSION pg_prewarm' 2>/dev/null ||
	{ have_prewarm=0; log "no pg_prewarm: the first run on each table reads from the OS cache"; }
settings=$(q -c "SELECT string_agg(name || ' = ' || current_setting(name), ', ' ORDER BY name)
	FROM pg_settings WHERE name IN ('shared_buffers', 'synchronous_commit', 'fsync', 'max_wal_size', 'work_mem', 'jit', 'lc_collate', 'huge_pages', 'wal_compression')")
server_version=$(q -c 'SHOW server_version')

# --- loading ------------------------------------------------------------------

# load N: (re)creates the tables and loads N items; sets copy_ddb, copy_heap
# (seconds) and P.  Both sides load the way a user loads a table: TRUNCATE
# and COPY in one transaction, which gives ddb its bulk path (the tree
# built bottom-up, ddb_bulk.c) and heap a file that skips the free space
# map.  With with_clustered it also times COPY into bench_ddb_rows, created
# in an earlier transaction, which ddb cannot build in place: it inserts the
# sorted rows in key order at the COPY's end (copy_ddb_rows,
# fill_ddb_rows, size_ddb_rows), then drops that table.
load() {
	local n=$1 t0 t1
	P=$((n / 100))
	log "generating $n items ($P partitions x 100, interleaved)"
	q -c "DROP TABLE IF EXISTS bench_ddb, bench_ddb_rows, bench_heap, bench_heap_clustered" || die "drop failed"
	rm -f "$work/items.csv"
	q -c "\\copy (SELECT bench_pk((i % $P)::int), bench_sk((i / $P)::int), bench_item(i) FROM generate_series(0, $n - 1) i ORDER BY i) TO '$work/items.csv' CSV" ||
		die "generating the CSV failed"
	q <<EOF || die "creating the tables failed"
CREATE TABLE bench_ddb ("PK" text, "SK" text, item jsonb) USING ddb;
CREATE TABLE bench_heap ("PK" text, "SK" text, item jsonb, PRIMARY KEY ("PK", "SK"));
CHECKPOINT;
EOF
	# COPY into each, ddb first; the CSV is in the OS cache for both.
	log "COPY into bench_ddb (TRUNCATE and COPY in one transaction: the bulk path)"
	t0=$(date +%s.%N)
	q <<EOF || die "COPY into bench_ddb failed"
BEGIN;
TRUNCATE bench_ddb;
\\copy bench_ddb FROM '$work/items.csv' CSV
COMMIT;
EOF
	t1=$(date +%s.%N)
	copy_ddb=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
	q -c CHECKPOINT
	log "COPY into bench_heap (TRUNCATE and COPY in one transaction)"
	t0=$(date +%s.%N)
	q <<EOF || die "COPY into bench_heap failed"
BEGIN;
TRUNCATE bench_heap;
\\copy bench_heap FROM '$work/items.csv' CSV
COMMIT;
EOF
	t1=$(date +%s.%N)
	copy_heap=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
	q -c CHECKPOINT
	if [ "${2:-}" = with_clustered ]; then
		log "COPY into bench_ddb_rows (created earlier: key-order inserts)"
		q -c 'CREATE TABLE bench_ddb_rows ("PK" text, "SK" text, item jsonb) USING ddb' -c CHECKPOINT ||
			die "creating bench_ddb_rows failed"
		t0=$(date +%s.%N)
		q -c "\\copy bench_ddb_rows FROM '$work/items.csv' CSV" || die "COPY into bench_ddb_rows failed"
		t1=$(date +%s.%N)
		copy_ddb_rows=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
		size_ddb_rows=$(size_of bench_ddb_rows)
		fill_ddb_rows=$(leaf_fill bench_ddb_rows)
		q -c "DROP TABLE bench_ddb_rows" -c CHECKPOINT || die "dropping bench_ddb_rows failed"
	fi
	if [ "${2:-}" = with_clustered ]; then
		log "bench_heap_clustered: COPY, then CLUSTER on its primary key"
		q <<EOF || die "creating bench_heap_clustered failed"
CREATE TABLE bench_heap_clustered ("PK" text, "SK" text, item jsonb, PRIMARY KEY ("PK", "SK"));
\\copy bench_heap_clustered FROM '$work/items.csv' CSV
CLUSTER bench_heap_clustered USING bench_heap_clustered_pkey;
EOF
	fi
	rm -f "$work/items.csv"
	# BatchGetItem's key sets (setup.sql), which the batch_get scripts send
	# as parameters
	q -c "SELECT bench_batch_sets($P)" >/dev/null || die "creating bench_batch_keys failed"
	log "VACUUM ANALYZE"
	q -c "VACUUM ANALYZE bench_ddb, bench_heap$([ "${2:-}" = with_clustered ] && echo ', bench_heap_clustered')" -c CHECKPOINT ||
		die "VACUUM ANALYZE failed"
	# COPY, CLUSTER and VACUUM go through small buffer rings: read every
	# table, index and TOAST block into shared_buffers so that no side's
	# first run pays for reads from the OS cache.
	if [ $have_prewarm = 1 ] && [ -z "$shared_buffers" ]; then
		log "pg_prewarm"
		q -c "SELECT sum(pg_prewarm(r)) FROM (
			SELECT c.oid AS r FROM pg_class c WHERE c.relname LIKE 'bench\_%' AND c.relkind = 'r'
			UNION ALL SELECT i.indexrelid FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid WHERE c.relname LIKE 'bench\_%'
			UNION ALL SELECT c.reltoastrelid FROM pg_class c WHERE c.relname LIKE 'bench\_%' AND c.reltoastrelid <> 0
			UNION ALL SELECT i.indexrelid FROM pg_index i JOIN pg_class c ON c.reltoastrelid = i.indrelid WHERE c.relname LIKE 'bench\_%'
		) s" >/dev/null || die "pg_prewarm failed"
	fi
}

size_of() { q -c "SELECT pg_total_relation_size('$1')"; }
# leaf_fill TABLE: ddb_verify's mean fill of the leaves (also proves the
# tree sound after the load or the benchmarks)
leaf_fill() { q -c "SELECT ddb_verify('$1') ->> 'leaf_fill'" || { fail=$((fail + 1)); echo "?"; }; }

# compact: the sizes after VACUUM FULL, on the loaded items: the keys the
# write benchmarks added are deleted first (overwrites and counters changed
# some items, alike on both sides but not equally often).  Sets size_ddb_full,
# size_heap_full, fill_ddb_full.
compact() {
	log "VACUUM FULL (sizes after a rebuild)"
	q -c "DELETE FROM bench_ddb WHERE \"SK\" LIKE 'NEW#%' OR \"SK\" LIKE 'DEL#%' OR \"SK\" LIKE 'BATCH#%'" \
	  -c "DELETE FROM bench_heap WHERE \"SK\" LIKE 'NEW#%' OR \"SK\" LIKE 'DEL#%' OR \"SK\" LIKE 'BATCH#%'" \
	  -c "VACUUM FULL bench_ddb" -c "VACUUM FULL bench_heap" >/dev/null ||
		{ fail=$((fail + 1)); return; }
	size_ddb_full=$(size_of bench_ddb); size_heap_full=$(size_of bench_heap)
	fill_ddb_full=$(leaf_fill bench_ddb)
}

# --- running one benchmark ------------------------------------------------------

fail=0
run_no=0
loadavg() { cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0; }
# wal_records_bytes LSN0 LSN1: the bytes of the WAL records between the two
# positions without their full-page images (pg_waldump --stats), or empty
# when this script did not start the server (no pg_wal to read).  A run
# right after a checkpoint logs an image of every page it touches first;
# without them the column compares what each engine logs per write.
wal_records_bytes() {
	[ $started_cluster = 1 ] || return 0
	local i
	# pg_waldump reads flushed WAL only: wait for the WAL writer
	for i in $(seq 1 50); do
		[ "$(q -c "SELECT pg_current_wal_flush_lsn() >= '$2'")" = t ] && break
		sleep 0.1
	done
	# "Total  <count>  <record bytes> [pct]  <FPI bytes> [pct]  <combined> [pct]"
	pg_waldump --stats -p "$work/data/pg_wal" -s "$1" -e "$2" 2>/dev/null |
		awk '$1 == "Total" { print $3; exit }'
}

# The server's CPU time for the backends of a run, which pgbench's own CPU
# does not count in: the CPU of the postmaster's children that exited
# (cutime + cstime of /proc/PID/stat, in clock ticks), read before a run
# and after its backends were reaped.  With 2 clients on 2 cores, pgbench
# takes CPU from the backends in proportion to the tps, which narrows the
# tps ratios; the server CPU per transaction is the engines' own cost.
# Only with the script's own cluster (blank with --use-running).  A run's
# backends are the children connected to ddb_bench over the socket
# ("[local]" in their title; autovacuum's workers are not counted): none
# before the run, and none once pgbench's have exited and been reaped.
pm_pid() { [ "${started_cluster:-0}" = 1 ] && head -1 "$work/data/postmaster.pid"; }
children_cpu() { awk '{ print $16 + $17 }' "/proc/$1/stat"; }
client_backends() {
	local c n=0
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		{ tr '\0' ' ' <"/proc/$c/cmdline"; } 2>/dev/null | grep -q 'ddb_bench \[local\]' && n=$((n + 1))
	done
	echo $n
}
wait_no_clients() {
	local i
	for i in $(seq 400); do [ "$(client_backends "$1")" = 0 ] && return; sleep 0.025; done
}

# bench OP VARIANT TABLE SCRIPT CLIENTS ROUND [pgbench options]: one short
# pgbench run; records tps, WAL bytes per transaction, the load average
# before it and the backends' CPU per transaction in $results.
bench() {
	local op=$1 variant=$2 tbl=$3 script=$4 clients=$5 round=$6
	shift 6
	local sql="$work/$script.$tbl.sql" out="$work/pgbench.out" lsn0 lsn1 wal tps txns failed rc len load nofpi
	local pm cpu0 cpu1
	run_no=$((run_no + 1))
	sed "s/@TBL@/$tbl/g" "$bench_dir/$script.sql" >"$sql"
	len="-T $duration"
	case " $* " in *" -t "*) len="" ;; esac
	load=$(loadavg)
	lsn0=$(q -c 'SELECT pg_current_wal_insert_lsn()')
	pm=$(pm_pid)
	if [ -n "$pm" ]; then
		wait_no_clients "$pm"	# (the psql above)
		cpu0=$(children_cpu "$pm")
	fi
	pgbench -n -M prepared $len -c "$clients" -j "$clients" -f "$sql" \
		-D P="$P" -D n=0 -D run="$run_no" "$@" >"$out" 2>&1
	rc=$?
	if [ -n "$pm" ]; then
		wait_no_clients "$pm"	# pgbench's backends exit as it disconnects
		cpu1=$(children_cpu "$pm")
	fi
	lsn1=$(q -c 'SELECT pg_current_wal_insert_lsn()')
	wal=$(q -c "SELECT pg_wal_lsn_diff('$lsn1', '$lsn0')")
	nofpi=$(wal_records_bytes "$lsn0" "$lsn1")
	tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$out")
	txns=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$out")
	failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$out")
	if [ $rc != 0 ] || [ -z "$tps" ] || [ -z "$txns" ] || [ "$txns" = 0 ] ||
		[ "${failed:-0}" != 0 ] || ! awk -v t="$tps" 'BEGIN { exit !(t > 0) }'; then
		echo "bench: $op / $variant / $clients client(s) on $tbl did not run (exit $rc):" >&2
		tail -20 "$out" >&2
		fail=$((fail + 1))
		tps=0
		txns=1
	fi
	printf '%s|%s|%s|%s|%.0f|%.0f|%s|%s|%s\n' "$op" "$variant" "$clients" "$round" "$tps" \
		"$(awk -v w="$wal" -v t="$txns" 'BEGIN { print w / t }')" "$load" \
		"$(awk -v w="$nofpi" -v t="$txns" 'BEGIN { if (w != "") printf "%.0f", w / t }')" \
		"$([ -n "$pm" ] && awk -v a="$cpu0" -v b="$cpu1" -v t="$txns" -v hz="$(getconf CLK_TCK)" \
			'BEGIN { printf "%.1f", (b - a) / hz / t * 1e6 }')" >>"${bench_results:-$results}"
	log "$(printf '%-12s %-6s %s client(s), round %s: %8.0f tps (load %s)' "$op" "$variant" "$clients" "$round" "$tps" "$load")"
}

# Variants per operation: api = ddb's SQL function, sql = plain SQL on the ddb
# table, heap, clust = the clustered heap (reads only).
read_ops="get query query_back prefix last"
write_ops="put_new put_seq put_over update delete delete_old"
# Batches: api = ddb_batch_write_item / ddb_batch_get_item, sql = the same
# items as single ddb_put_item / ddb_get_item calls in one transaction
# (*_singles.sql), heap = one INSERT of 25 rows / one SELECT ... IN (100 keys).
# BatchGetItem's request and the heap's 100 keys are parameters, one of the
# key sets of bench_batch_requests / bench_batch_keys (setup.sql), as a
# client sends them; so are PutItem's new item and the heap's new row
# (bench_put_items / bench_put_rows).
batch_ops="batch_put batch_get"
# --ops: only these benchmarks (the results check still covers every read)
if [ -n "$only_ops" ]; then
	for o in $only_ops; do
		case " $read_ops $write_ops $batch_ops " in *" $o "*) ;; *) die "unknown operation in --ops: $o ($read_ops $write_ops $batch_ops)" ;; esac
	done
	bench_ops=$only_ops
else
	bench_ops="$read_ops $write_ops $batch_ops"
fi
variants_for() {
	local op=$1 clients=$2
	case $op in batch_*) echo "api sql heap"; return ;; esac
	case $op in
	get) echo "api heap sql" ;;
	put_new|put_seq|update|delete|delete_old) echo "api heap sql" ;;
	put_over) echo "api heap" ;;  # no ON CONFLICT on ddb: no arbiter index
	*) echo "api heap sql clust" ;;
	esac | if [ $mode = smoke ]; then
		# under a minute: every operation, ddb API and heap
		# (the heap runs cover every plain-SQL script)
		case $op in delete|delete_old) sed 's/ clust//' ;; *) sed 's/ sql//; s/ clust//' ;; esac
	elif [ "$clients" != 1 ]; then sed 's/ sql//; s/ clust//'   # keep runtime down
	else cat; fi
}
script_for() {   # OP VARIANT -> script name
	case $1/$2 in batch_*/sql) echo "${1}_singles"; return ;; esac
	case $2 in api) echo "${1}_api" ;; *) [ "$1" = put_over ] && echo put_over_sql || echo "${1}_sql" ;; esac
}
table_for() {
	case $1 in api|sql) echo bench_ddb ;; heap) echo bench_heap ;; clust) echo bench_heap_clustered ;; esac
}

# Keys for a delete run: K per client, in existing partitions.
del_keys() {
	if [ $mode = smoke ]; then echo 500; else echo $((duration * 2000)); fi
}
preinsert_deletes() {   # TABLE CLIENTS K RUN
	q -c "INSERT INTO $1 SELECT bench_pk(((c * 7919 + n) % $P)::int), 'DEL#' || $4 || '#' || c || '#' || n, bench_item(n)
		FROM generate_series(0, $2 - 1) c, generate_series(1, $3) n" || die "pre-inserting keys to delete failed"
}

# The items a delete_old run deletes: K per client, item j of partition p
# as delete_old_*.sql draw them, as rows (c, n, p, j) of a subquery.
# Distinct within a run while K / P < 30 (checked), and all of the loaded
# set, so spread over the table as the load left them: unlike delete's
# fresh keys, which the heap keeps together on its last pages.
delete_old_keys() {   # CLIENTS K RUN
	echo "(SELECT c, n, p, (n / $P + $3 * 13 + c * 31) % 100 AS j
		FROM generate_series(0, $1 - 1) c, generate_series(1, $2) n,
		LATERAL (SELECT ((c * 7919 + n) % $P)::int AS p) x) k"
}
# After a delete_old run: every key of the run gone (each transaction
# deleted an item), then the items put back as the load made them, so
# that the next run meets the table it would have.
restore_old_deletes() {   # TABLE CLIENTS K RUN
	local keys left distinct
	keys=$(delete_old_keys "$2" "$3" "$4")
	distinct=$(q -c "SELECT count(DISTINCT (p, j)) FROM $keys")
	[ "$distinct" = $(($2 * $3)) ] || die "delete_old: $distinct distinct keys for $2 x $3 deletes (too many for $P partitions)"
	left=$(q -c "SELECT count(*) FROM $keys JOIN $1 t ON t.\"PK\" = bench_pk(k.p) AND t.\"SK\" = bench_sk(k.j)")
	if [ "$left" != 0 ]; then
		echo "bench: delete_old on $1 left $left of its keys behind" >&2
		fail=$((fail + 1))
	fi
	q -c "INSERT INTO $1 SELECT bench_pk(p), bench_sk(j), bench_item(j::bigint * $P + p) FROM $keys" >/dev/null ||
		die "putting back the items delete_old deleted failed"
}

# run_op OP CLIENTS: --rounds rounds; each runs every side once, in an
# order reversed every other round (ABBA), so drift weighs on all alike.
#
# Operations that add keys (put_new, put_seq, batch_put) first run one
# unmeasured warm-up round, "round 0", every side once (with 1 client only,
# before the first measured round of the operation).  The tables are bulk-loaded with
# full leaves (ddb's fillfactor 95, the heap's pages full), so the first
# new key that lands on a leaf splits it, and the API and SQL sides share
# bench_ddb: without the warm-up, whichever ddb side ran first in a round
# paid for most of those splits, tps and WAL alike, and the ABBA order put
# the API first in two rounds of three.  After the warm-up every side
# meets leaves that have room about as often as the other.  The smoke
# mode runs it too, so that CI's bench part exercises it.
warm_ups=" put_new put_seq batch_put "
run_op() {   # OP CLIENTS
	local op=$1 clients=$2 v tbl k left r order
	if [ "$clients" = 1 ] && [[ $warm_ups == *" $op "* ]]; then
		for v in $(variants_for "$op" "$clients"); do
			bench_results="$work/warmup" bench "$op" "$v" "$(table_for $v)" "$(script_for "$op" $v)" "$clients" 0
		done
	fi
	for r in $(seq 1 "$rounds"); do
		order=$(variants_for "$op" "$clients")
		[ $((r % 2)) = 0 ] && order=$(tr ' ' '\n' <<<"$order" | tac | tr '\n' ' ')
		for v in $order; do
			tbl=$(table_for $v)
			if [ "$op" = delete ]; then
				k=$(del_keys)
				# bench numbers runs from 1: the next run is run_no + 1
				preinsert_deletes "$tbl" "$clients" "$k" $((run_no + 1))
				bench "$op" "$v" "$tbl" "$(script_for "$op" $v)" "$clients" "$r" -t "$k" -D K="$k"
				# every transaction must have deleted an item, or we timed misses
				left=$(q -c "SELECT count(*) FROM $tbl WHERE \"SK\" LIKE 'DEL#$run_no#%'")
				if [ "$left" != 0 ]; then
					echo "bench: delete / $v left $left of its keys behind" >&2
					fail=$((fail + 1))
				fi
			elif [ "$op" = delete_old ]; then
				k=$(del_keys)
				bench "$op" "$v" "$tbl" "$(script_for "$op" $v)" "$clients" "$r" -t "$k" -D K="$k"
				restore_old_deletes "$tbl" "$clients" "$k" "$run_no"
			else
				bench "$op" "$v" "$tbl" "$(script_for "$op" $v)" "$clients" "$r"
			fi
		done
	done
}

# buffers OP VARIANT: mean shared buffers (hit + read) of the top plan node
# over 20 partitions (smoke: 1), after one warm-up execution.
buffer_sql() {   # OP VARIANT PARTITION
	local tbl pk
	tbl=$(table_for $2)
	pk="bench_pk($3)"
	case $1/$2 in
	get/api) echo "SELECT ddb_get_item('$tbl', jsonb_build_object('PK', $pk, 'SK', bench_sk(42)))" ;;
	get/*) echo "SELECT item FROM $tbl WHERE \"PK\" = $pk AND \"SK\" = bench_sk(42)" ;;
	query/api) echo "SELECT x FROM ddb_query('$tbl', 'PK = :p', jsonb_build_object(':p', $pk), \"limit\" => 100) x" ;;
	query/*) echo "SELECT item FROM $tbl WHERE \"PK\" = $pk ORDER BY \"SK\" LIMIT 100" ;;
	query_back/api) echo "SELECT x FROM ddb_query('$tbl', 'PK = :p', jsonb_build_object(':p', $pk), forward => false, \"limit\" => 100) x" ;;
	query_back/*) echo "SELECT item FROM $tbl WHERE \"PK\" = $pk ORDER BY \"SK\" DESC LIMIT 100" ;;
	prefix/api) echo "SELECT x FROM ddb_query('$tbl', 'PK = :p AND begins_with(SK, :m)', jsonb_build_object(':p', $pk, ':m', 'ORDER#2025-03')) x" ;;
	prefix/*) echo "SELECT item FROM $tbl WHERE \"PK\" = $pk AND \"SK\" LIKE 'ORDER#2025-03%' ORDER BY \"SK\"" ;;
	last/api) echo "SELECT x FROM ddb_query('$tbl', 'PK = :p', jsonb_build_object(':p', $pk), forward => false, \"limit\" => 1) x" ;;
	last/*) echo "SELECT item FROM $tbl WHERE \"PK\" = $pk ORDER BY \"SK\" DESC LIMIT 1" ;;
	esac
}
measure_buffers() {   # "OP/VARIANT ..." -> sets buf[OP/VARIANT]
	local ov i p nq=20 sqlf="$work/buffers.sql" line
	[ $mode = smoke ] && nq=1
	: >"$sqlf"
	for ov in "$@"; do
		for i in $(seq 0 $nq); do
			p=$(( (i * 7907 + 13) % P ))
			echo "SELECT '$ov|$i|' || bench_buffers(\$q\$$(buffer_sql "${ov%/*}" "${ov#*/}" $p)\$q\$);" >>"$sqlf"
		done
	done
	# one session for all: psql start-up costs more than the queries
	q -f "$sqlf" >"$work/buffers.out" || { fail=$((fail + 1)); return; }
	while IFS='|' read -r ov line; do
		buf[$ov]=$line
	done < <(awk -F'|' '$2 != 0 { s[$1] += $3; n[$1]++ } END { for (k in s) printf "%s|%.1f\n", k, s[k] / n[k] }' "$work/buffers.out")
}
# One plan of each kind, for the record; the ddb table's plain-SQL Query
# must be the key scan with no Sort above it, in any --locale.
check_plans() {
	local v
	for v in sql heap clust; do
		q -c "EXPLAIN (COSTS OFF) $(buffer_sql query $v 7)"
	done >"$work/plans.txt" 2>&1
	q -c "EXPLAIN (COSTS OFF) $(buffer_sql query sql 7)" >"$work/plan_sql.txt" 2>&1
	if ! grep -q DdbKeyScan "$work/plan_sql.txt" || grep -q Sort "$work/plan_sql.txt"; then
		echo "bench: plain SQL on bench_ddb is not a key scan in sort-key order:" >&2
		cat "$work/plan_sql.txt" >&2
		fail=$((fail + 1))
	fi
}

# result_sql OP VARIANT PARTITION: the rows a read benchmark returns for a
# partition, as jsonb items with their keys, in the order returned.
result_sql() {
	local sql with_keys='SELECT item || jsonb_build_object('"'PK'"', "PK", '"'SK'"', "SK") FROM'
	sql=$(buffer_sql "$1" "$2" "$3")
	[ "$2" = api ] || sql=${sql/SELECT item FROM/$with_keys}
	echo "$sql"
}

# The three tables hold the same items, and every read benchmark's query
# returns the same rows in the same order from each side, for a sample of
# partitions (smoke: every partition).  Items compare as jsonb, so numbers
# compare by value.
check_results() {
	local op v p i np bad diffs sqlf="$work/results.sql" nops
	diffs=$(q -c "SELECT (SELECT count(*) FROM (TABLE bench_ddb EXCEPT ALL TABLE bench_heap) a)
	                   + (SELECT count(*) FROM (TABLE bench_heap EXCEPT ALL TABLE bench_ddb) b)
	                   + (SELECT count(*) FROM (TABLE bench_heap_clustered EXCEPT ALL TABLE bench_heap) c)
	                   + (SELECT count(*) FROM (TABLE bench_heap EXCEPT ALL TABLE bench_heap_clustered) d)") ||
		diffs="(query failed)"
	if [ "$diffs" != 0 ]; then
		echo "bench: the tables do not hold the same items ($diffs rows differ)" >&2
		fail=$((fail + 1))
	fi
	np=20
	[ $mode = smoke ] && np=$P
	nops=$(wc -w <<<"$read_ops")
	local -A tmpl
	for op in $read_ops; do
		# one query text per side, the partition filled in below (no fork per query)
		for v in api sql heap clust; do tmpl[$v]=$(result_sql $op $v @P@); done
		for i in $(seq 0 $((np - 1))); do
			p=$(( (i * 7907 + 13) % P ))
			printf "SELECT '%s|%s|' || CASE WHEN a = s AND a = h AND a = c AND jsonb_array_length(a) > 0 THEN 'same' ELSE 'DIFFERENT' END\n" "$op" "$p"
			printf '  FROM (SELECT bench_rows($q$%s$q$) a, bench_rows($q$%s$q$) s,\n' "${tmpl[api]//@P@/$p}" "${tmpl[sql]//@P@/$p}"
			printf '               bench_rows($q$%s$q$) h, bench_rows($q$%s$q$) c) r;\n' "${tmpl[heap]//@P@/$p}" "${tmpl[clust]//@P@/$p}"
		done
	done >"$sqlf"
	q -f "$sqlf" >"$work/results.out" || { fail=$((fail + 1)); return; }
	bad=$(grep -c 'DIFFERENT' "$work/results.out")
	if [ "$bad" != 0 ] || [ "$(grep -c '|same$' "$work/results.out")" != $((nops * np)) ]; then
		echo "bench: ddb and heap return different results for $bad of $((nops * np)) queries:" >&2
		grep DIFFERENT "$work/results.out" | head -10 >&2
		fail=$((fail + 1))
	else
		log "results agree: $((nops * np)) queries, each the same on all 4 sides; the tables hold the same items"
	fi
}

# BatchGetItem returns the items the heap's IN query returns: all 100, for
# a sample of the key sets (smoke: 5).  The two statements are the scripts'
# with their parameters (the request, the key arrays) read from
# bench_batch_requests and bench_batch_keys in place.
check_batch_results() {
	local i n=20 bad sqlf="$work/batch_results.sql" api heap
	local with_keys='SELECT item || jsonb_build_object('"'PK'"', "PK", '"'SK'"', "SK") AS item FROM'
	[ $mode = smoke ] && n=5
	for i in $(seq 0 $((n - 1))); do
		i=$(( (i * 97) % 1000 ))
		api=$(sed -n '/^SELECT ddb_batch_get_item/,$p' "$bench_dir/batch_get_api.sql" |
			sed "s/:request/(SELECT request::jsonb FROM bench_batch_requests WHERE id = $i)/")
		heap=$(sed -n '/^SELECT item/,$p' "$bench_dir/batch_get_sql.sql" |
			sed "s/@TBL@/bench_heap/g; s/:pks/(SELECT pks FROM bench_batch_keys WHERE id = $i)/; s/:sks/(SELECT sks FROM bench_batch_keys WHERE id = $i)/")
		heap=${heap/SELECT item FROM/$with_keys}
		printf "SELECT CASE WHEN a = h AND jsonb_array_length(a) = 100 THEN 'same' ELSE 'DIFFERENT' END\n"
		printf "  FROM (SELECT (SELECT jsonb_agg(x ORDER BY x) FROM jsonb_array_elements((%s) -> 'Responses' -> 'bench_ddb') x) a,\n" "${api%;}"
		printf "               (SELECT jsonb_agg(item ORDER BY item) FROM (%s) r) h) c;\n" "${heap%;}"
	done >"$sqlf"
	q -f "$sqlf" >"$work/batch_results.out" || { fail=$((fail + 1)); return; }
	bad=$(grep -c -v '^same$' "$work/batch_results.out")
	if [ "$bad" != 0 ] || [ "$(grep -c '^same$' "$work/batch_results.out")" != $n ]; then
		echo "bench: BatchGetItem and the heap's IN query differ for $bad of $n key sets" >&2
		fail=$((fail + 1))
	else
		log "batch results agree: $n sets of 100 keys, the same items from ddb_batch_get_item and from the heap"
	fi
}

# --- reports ------------------------------------------------------------------

# The runs of OP on VARIANT with CLIENTS: one line per round.
runs_of() { awk -F'|' -v o="$1" -v v="$2" -v c="$3" '$1 == o && $2 == v && $3 == c' "$results"; }
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) printf "%.0f", (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
tps_of() { runs_of "$1" "$2" "$3" | cut -d'|' -f5 | median; }
wal_of() { runs_of "$1" "$2" "$3" | cut -d'|' -f6 | median; }
nofpi_of() { runs_of "$1" "$2" "$3" | cut -d'|' -f8 | grep . | median; }
cpu_of() { runs_of "$1" "$2" "$3" | cut -d'|' -f9 | grep . | sort -g | awk '{ a[NR] = $1 } END { if (NR) printf "%.1f", (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }
# cpu_ratio_of OP A B CLIENTS: median of the per-round ratios of B's server
# CPU per transaction to A's (> 1: A spends less), with the spread.
cpu_ratio_of() {
	join -t'|' <(runs_of "$1" "$2" "$4" | awk -F'|' '$9 != "" { print $4 "|" $9 }' | sort) \
		<(runs_of "$1" "$3" "$4" | awk -F'|' '$9 != "" { print $4 "|" $9 }' | sort) |
		awk -F'|' '$2 > 0 { print $3 / $2 }' | sort -g |
		awk '{ a[NR] = $1 } END { if (NR) printf "%.2f (%.2f-%.2f)", (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2), a[1], a[NR] }'
}
# ratio_of OP A B CLIENTS: median of the per-round ratios A/B with their
# lowest and highest, e.g. "1.32 (1.21-1.40)", or blank.
ratio_of() {
	join -t'|' <(runs_of "$1" "$2" "$4" | awk -F'|' '{ print $4 "|" $5 }' | sort) \
		<(runs_of "$1" "$3" "$4" | awk -F'|' '{ print $4 "|" $5 }' | sort) |
		awk -F'|' '$3 > 0 { print $2 / $3 }' | sort -g |
		awk '{ a[NR] = $1 } END { if (NR) printf "%.2f (%.2f-%.2f)", (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2), a[1], a[NR] }'
}
load_of() {   # OP CLIENTS: mean load average before its runs
	awk -F'|' -v o="$1" -v c="$2" '$1 == o && $3 == c { s += $7; n++ } END { if (n) printf "%.1f", s / n }' "$results"
}
load_range() { awk -F'|' 'NR == 1 || $7 < lo { lo = $7 } NR == 1 || $7 > hi { hi = $7 } END { printf "%.1f-%.1f", lo, hi }' "$results"; }
ratio() {   # A B -> A/B with 2 decimals, or blank
	awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b != "" && b > 0) printf "%.2f", a / b }'
}
num() { awk -v a="$1" 'BEGIN { if (a != "") printf "%.0f", a }'; }
mb() { awk -v a="$1" 'BEGIN { printf "%.1f MB", a / 1048576 }'; }
op_name() {
	case $1 in
	get) echo "GetItem" ;;
	query) echo "Query 100 items, forward" ;;
	query_back) echo "Query 100 items, backward" ;;
	prefix) echo "Query begins_with (~8 items)" ;;
	last) echo "Query limit 1, newest first" ;;
	put_new) echo "PutItem, new key" ;;
	put_seq) echo "PutItem, new key in sequence" ;;
	put_over) echo "PutItem, overwrite" ;;
	batch_put) echo "BatchWriteItem, 25 new items" ;;
	batch_get) echo "BatchGetItem, 100 keys" ;;
	update) echo "UpdateItem, counter +1" ;;
	delete) echo "DeleteItem" ;;
	delete_old) echo "DeleteItem, a loaded item" ;;
	esac
}

report() {
	local op c a s h cl na ns nh
	echo
	echo "### ddb vs heap + btree: $items items ($P partitions x 100, interleaved), $rounds rounds of ${duration} s runs, pgbench -M prepared$([ $preload = 1 ] && echo ", ddb preloaded (its own WAL records)")"
	echo
	echo "PostgreSQL $server_version; $settings; load average $(load_range) (1 min, sampled before each run)."
	echo
	echo "| operation | clients | ddb API tps | ddb SQL tps | heap tps | API / heap | SQL / heap | clustered heap tps | API / clustered | load |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for c in $clients_list; do
		for op in $read_ops $write_ops; do
			a=$(tps_of $op api $c); s=$(tps_of $op sql $c); h=$(tps_of $op heap $c); cl=$(tps_of $op clust $c)
			[ -z "$a$h" ] && continue
			echo "| $(op_name $op) | $c | $a | $s | $h | $(ratio_of $op api heap $c) | $(ratio_of $op sql heap $c) | $cl | $(ratio_of $op api clust $c) | $(load_of $op $c) |"
		done
	done
	echo "| bulk load: TRUNCATE + COPY $items items | 1 | $(awk -v n=$items -v t=$copy_ddb 'BEGIN { printf "%.1f s (%.0f items/s)", t, n / t }') | | $(awk -v n=$items -v t=$copy_heap 'BEGIN { printf "%.1f s (%.0f items/s)", t, n / t }') | $(ratio "$copy_heap" "$copy_ddb") | | | | |"
	[ -n "${copy_ddb_rows:-}" ] &&
		echo "| COPY $items items into a table created earlier (ddb: key-order inserts) | 1 | $(awk -v n=$items -v t=$copy_ddb_rows 'BEGIN { printf "%.1f s (%.0f items/s)", t, n / t }') | | | $(ratio "$copy_heap" "$copy_ddb_rows") | | | | |"
	echo
	echo "tps: median of the rounds; ratios: median of the per-round ratios (lowest-highest)."
	echo "API = ddb_get_item / ddb_query / ddb_put_item / ddb_update_item / ddb_delete_item;"
	echo "SQL = plain SELECT / INSERT / UPDATE / DELETE on the ddb table (DdbKeyScan);"
	echo "heap = the same plain SQL on bench_heap (upsert with ON CONFLICT for overwrites)."
	echo
	echo "| batch | clients | ddb batch tps | ddb singles tps | heap tps | batch / singles | batch / heap | load |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
	for c in $clients_list; do
		for op in $batch_ops; do
			a=$(tps_of $op api $c); s=$(tps_of $op sql $c); h=$(tps_of $op heap $c)
			[ -z "$a$h" ] && continue
			echo "| $(op_name $op) | $c | $a | $s | $h | $(ratio_of $op api sql $c) | $(ratio_of $op api heap $c) | $(load_of $op $c) |"
		done
	done
	echo
	echo "batch = one ddb_batch_write_item / ddb_batch_get_item call; singles = the same"
	echo "items as 25 ddb_put_item / 100 ddb_get_item statements in one transaction;"
	echo "heap = one INSERT of 25 rows / one SELECT ... WHERE (\"PK\", \"SK\") IN (100 keys)."
	echo
	echo "| on-disk size (table + indexes + TOAST) | after the interleaved COPY | ratio to heap | after VACUUM FULL | ratio to heap |"
	echo "|---|---:|---:|---:|---:|"
	echo "| bench_ddb | $(mb $size_ddb) | $(ratio $size_ddb $size_heap) | $(mb ${size_ddb_full:-0}) | $(ratio "${size_ddb_full:-}" "${size_heap_full:-}") |"
	echo "| bench_heap | $(mb $size_heap) | 1.00 | $(mb ${size_heap_full:-0}) | 1.00 |"
	[ -n "${size_ddb_rows:-}" ] && echo "| bench_ddb_rows (COPY into a table created earlier: key-order inserts) | $(mb $size_ddb_rows) | $(ratio $size_ddb_rows $size_heap) | | |"
	[ -n "$size_clust" ] && echo "| bench_heap_clustered | $(mb $size_clust) | $(ratio $size_clust $size_heap) | | |"
	echo
	echo "ddb leaf fill (ddb_verify's leaf_fill): $fill_ddb after the bulk COPY, ${fill_ddb_rows:-?} after the COPY into a table created earlier, ${fill_ddb_full:-?} after VACUUM FULL."
	echo
	echo "| WAL bytes per write (1 client, median) | ddb API | ddb SQL | heap | API / heap | without FPIs: ddb API | ddb SQL | heap | API / heap | SQL / heap |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	for op in $write_ops; do
		a=$(wal_of $op api 1); s=$(wal_of $op sql 1); h=$(wal_of $op heap 1)
		[ -z "$a$h" ] && continue
		na=$(nofpi_of $op api 1); ns=$(nofpi_of $op sql 1); nh=$(nofpi_of $op heap 1)
		echo "| $(op_name $op) | $a | $s | $h | $(ratio "$a" "$h") | $na | $ns | $nh | $(ratio "$na" "$nh") | $(ratio "$ns" "$nh") |"
	done
	echo
	if [ -n "$(cut -d'|' -f9 "$results" | grep .)" ]; then
		echo "| server CPU per operation (the backends' µs a transaction, median) | clients | ddb API | heap | heap / API |"
		echo "|---|---:|---:|---:|---:|"
		for c in $clients_list; do
			for op in $read_ops $write_ops $batch_ops; do
				a=$(cpu_of $op api $c); h=$(cpu_of $op heap $c)
				[ -z "$a$h" ] && continue
				echo "| $(op_name $op) | $c | $a | $h | $(cpu_ratio_of $op api heap $c) |"
			done
		done
		echo
		echo "Server CPU: the CPU time of the run's backends (the postmaster's exited children), without pgbench's;"
		echo "with 2 clients on 2 cores pgbench's share grows with the tps, so this, not tps, shows how the engines scale."
		echo
	fi
	echo "| shared buffers touched per query (hit + read) | ddb API | ddb SQL | heap | clustered heap |"
	echo "|---|---:|---:|---:|---:|"
	for op in $read_ops; do
		echo "| $(op_name $op) | ${buf[$op/api]:-} | ${buf[$op/sql]:-} | ${buf[$op/heap]:-} | ${buf[$op/clust]:-} |"
	done
}

declare -A buf

# --- the modes ------------------------------------------------------------------

if [ $mode = scaling ]; then
	sizes="100000 1000000"
	if [ $big = 1 ]; then
		sizes="$sizes 10000000"
		log "--big: 10^7 items take long (CSV of ~1.6 GB, loads of several minutes each)"
	fi
	table="$work/scaling"
	: >"$table"
	for n in $sizes; do
		items=$n
		load "$n"
		measure_buffers get/api get/heap query/api query/heap
		for op in get query; do
			for r in $(seq 1 "$rounds"); do
				if [ $((r % 2)) = 1 ]; then
					bench $op api bench_ddb "${op}_api" 1 "$r"
					bench $op heap bench_heap "${op}_sql" 1 "$r"
				else
					bench $op heap bench_heap "${op}_sql" 1 "$r"
					bench $op api bench_ddb "${op}_api" 1 "$r"
				fi
			done
		done
		echo "| $n | $(tps_of get api 1) | $(tps_of get heap 1) | $(ratio_of get api heap 1) | ${buf[get/api]} | ${buf[get/heap]} | $(tps_of query api 1) | $(tps_of query heap 1) | $(ratio_of query api heap 1) | ${buf[query/api]} | ${buf[query/heap]} | $(mb "$(size_of bench_ddb)") | $(mb "$(size_of bench_heap)") | $(load_of get 1)/$(load_of query 1) |" >>"$table"
		: >"$results"
	done
	echo
	echo "### Scaling: GetItem and Query-100 (1 client, $rounds rounds of ${duration} s runs, pgbench -M prepared)"
	echo
	echo "PostgreSQL $server_version; $settings."
	echo
	echo "| items | GetItem ddb tps | GetItem heap tps | ratio | GetItem buffers ddb | GetItem buffers heap | Query-100 ddb tps | Query-100 heap tps | ratio | Query-100 buffers ddb | Query-100 buffers heap | size ddb | size heap | load |"
	echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	cat "$table"
	[ $fail = 0 ] || { echo "bench: $fail check(s) failed (see the messages above)" >&2; exit 1; }
	exit 0
fi

load "$items" with_clustered
size_ddb=$(size_of bench_ddb); size_heap=$(size_of bench_heap); size_clust=$(size_of bench_heap_clustered)
fill_ddb=$(leaf_fill bench_ddb)
check_plans
check_results
check_batch_results
log "buffers per query"
ovs=""
for op in $read_ops; do
	for v in api sql heap clust; do ovs="$ovs $op/$v"; done
done
measure_buffers $ovs

# The reads run first, at every client count, then the writes and batches:
# the writes add hundreds of keys in front of the loaded ones in a thousand
# partitions (put_new, put_seq and batch_put's NEW# and BATCH# sort before
# ORDER#), which a Query-100 of those partitions then returns, and leave
# deleted versions behind, so reads after them measure another table (the
# heap's new rows, appended a transaction's together, read like a
# clustered table's).  Every read, with 1 client or 2, meets the table as
# loaded.
read_group=""; write_group=""
for op in $bench_ops; do
	case " $read_ops batch_get " in
	*" $op "*) read_group="$read_group $op" ;;
	*) write_group="$write_group $op" ;;
	esac
done
for group in "$read_group" "$write_group"; do
	for c in $clients_list; do
		for op in $group; do
			run_op "$op" "$c"
		done
	done
done

compact
report
if [ $fail != 0 ]; then
	echo "bench: $fail check(s) failed (see the messages above)" >&2
	exit 1
fi
