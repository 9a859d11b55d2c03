#!/usr/bin/env bash
#
# test/bench/consumer.sh: partitions used as queues with a consumer that
# reads each head before it deletes it, ddb against a heap table with a
# btree primary key, side by side (ddb_scan.c, "Reads clean up behind
# them"; README, "Emptied leaves").
#
#   bash test/bench/consumer.sh                  # 7 rounds of 10 s runs
#   bash test/bench/consumer.sh --rounds 3 --duration 5
#
# Ten partitions of 1,000 live items of ~220 bytes.  Each transaction
# appends the next rising sort key to partition n % 10 and pops that
# partition's head: the first item by an ORDER BY "SK" LIMIT 1 read, then
# a DELETE of that key (pgbench -M prepared, one client, the same script
# on both tables).  Until something removes them, the popped versions lie
# at the head, where every later read of the partition walks over them:
# on the heap, VACUUM, and index scans marking their entries dead; on
# ddb, VACUUM and reads that clean up behind them.  Autovacuum runs with
# PostgreSQL's defaults, as it would in production.
#
# Method, as run.sh: each round runs both sides once, in an order that
# alternates from round to round; the ratio is the median of the per-round
# ratios (ddb tps / heap tps), with the lowest and highest; the load
# average is sampled before every run.  After the rounds: the shared
# buffers a head read touches, and each table's size.  Nothing about speed
# is asserted.
#
# Knobs: DDB_PGBIN (PostgreSQL 15 bin directory with ddb installed),
# DDB_BENCH_PORT (default 5498), DDB_KEEP=1 keeps the work directory.
set -eu
set -o pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/test/lib.sh"

rounds=7
duration=10
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) rounds=$2; shift 2 ;;
	--duration) duration=$2; shift 2 ;;
	*) echo "usage: $0 [--rounds N] [--duration SECONDS]" >&2; exit 2 ;;
	esac
done
port=${DDB_BENCH_PORT:-5498}

ddb_cluster_user
ddb_scratch_cluster "$port" -c synchronous_commit=off -c shared_buffers=256MB
as_user "$psql" <<'SQL' >/dev/null
CREATE EXTENSION ddb;
CREATE TABLE q_ddb ("PK" text, "SK" numeric, item jsonb) USING ddb;
CREATE TABLE q_heap ("PK" text, "SK" numeric, item jsonb, PRIMARY KEY ("PK", "SK"));
INSERT INTO q_heap SELECT 'q' || (i % 10), i, jsonb_build_object('pad', repeat('x', 200))
	FROM generate_series(1, 10000) i;
INSERT INTO q_ddb SELECT * FROM q_heap;
VACUUM ANALYZE q_ddb, q_heap;
SQL
for t in ddb heap; do
	cat >"$work/q_$t.sql" <<Q
\\set n :n + 1
\\set p :n % 10
\\set k :base + :n
INSERT INTO q_$t VALUES ('q' || :p, :k, jsonb_build_object('pad', repeat('x', 200)));
SELECT "SK" AS head FROM q_$t WHERE "PK" = 'q' || :p ORDER BY "SK" LIMIT 1 \\gset
DELETE FROM q_$t WHERE "PK" = 'q' || :p AND "SK" = :head;
Q
done
chmod 644 "$work"/q_*.sql

# run SIDE: one pgbench run into $work/tps (a run that fails or reports
# no tps ends the script); each run's keys are above the last run's
base=10000
run() {
	local out
	out=$(as_user "'$PGBIN/pgbench' -n -M prepared -h '$work' -p $port -T $duration -D n=0 -D base=$base -f '$work/q_$1.sql' postgres" 2>&1) ||
		{ printf '%s\n' "$out" >&2; echo "consumer: pgbench failed on q_$1" >&2; exit 1; }
	base=$((base + 100000000))
	printf '%s\n' "$out" | sed -n 's/^tps = \([0-9.]*\).*/\1/p' >"$work/tps"
	[ -s "$work/tps" ] || { printf '%s\n' "$out" >&2; echo "consumer: no tps from q_$1" >&2; exit 1; }
}

printf '| round | order | ddb tps | heap tps | ddb / heap | load |\n|---:|---|---:|---:|---:|---:|\n'
ratios=()
loads=()
for ((r = 1; r <= rounds; r++)); do
	load=$(cut -d' ' -f1 /proc/loadavg)
	loads+=("$load")
	if [ $((r % 2)) = 1 ]; then
		run ddb; d=$(cat "$work/tps"); run heap; h=$(cat "$work/tps"); order="ddb, heap"
	else
		run heap; h=$(cat "$work/tps"); run ddb; d=$(cat "$work/tps"); order="heap, ddb"
	fi
	ratio=$(awk -v d="$d" -v h="$h" 'BEGIN { printf "%.2f", d / h }')
	ratios+=("$ratio")
	printf '| %d | %s | %.0f | %.0f | %s | %s |\n' "$r" "$order" "$d" "$h" "$ratio" "$load"
done
sorted=$(printf '%s\n' "${ratios[@]}" | sort -g)
median=$(printf '%s\n' "$sorted" | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
echo
echo "ddb / heap, median of $rounds rounds: $median ($(printf '%s\n' "$sorted" | head -1)-$(printf '%s\n' "$sorted" | tail -1)); load average $(printf '%s\n' "${loads[@]}" | sort -g | head -1)-$(printf '%s\n' "${loads[@]}" | sort -g | tail -1)"

head_buffers() {
	as_user "$psql -c \"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT \\\"SK\\\" FROM $1 WHERE \\\"PK\\\" = 'q3' ORDER BY \\\"SK\\\" LIMIT 1\"" |
		sed -n 's/.*Buffers: shared hit=\([0-9]*\).*/\1/p' | head -1
}
echo "buffers for a head read (partition q3), twice: ddb $(head_buffers q_ddb), $(head_buffers q_ddb); heap $(head_buffers q_heap), $(head_buffers q_heap)"
echo "size: ddb $(as_user "$psql -c \"SELECT pg_size_pretty(pg_total_relation_size('q_ddb'))\""), heap + btree $(as_user "$psql -c \"SELECT pg_size_pretty(pg_total_relation_size('q_heap'))\"")"
