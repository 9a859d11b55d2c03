#!/usr/bin/env bash
#
# test/bench/queue.sh: a partition used as a queue, and what it leaves in
# the tree: VACUUM unlinks the leaves it empties and later splits reuse
# them (doc/design-unlink.md; README, "Emptied leaves: VACUUM unlinks and
# reuses them").
#
#   bash test/bench/queue.sh                 # 3 rounds of 20,000 cycles
#   bash test/bench/queue.sh --rounds 1 --cycles 5000
#
# Ten partitions, 1,000 live items of ~220 bytes in all: each cycle inserts
# the next rising sort key of partition n % 10 and deletes that partition's
# key 1,000 below it (pgbench, one client).  After each round: VACUUM, then
# ddb_verify's leaf_pages, pages, deleted_pages and recyclable_pages, the
# file's blocks, leaf_fill, and the
# shared buffers that the first item of one partition costs
# (EXPLAIN (ANALYZE, BUFFERS) ... ORDER BY "SK" LIMIT 1; only the buffer
# count matters, not the time).  Nothing here depends on load.
#
# Knobs: DDB_PGBIN (PostgreSQL 15 bin directory with ddb installed),
# DDB_BENCH_PORT (default 5499), DDB_KEEP=1 keeps the work directory.
set -eu
set -o pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/test/lib.sh"

rounds=3
cycles=20000
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) rounds=$2; shift 2 ;;
	--cycles) cycles=$2; shift 2 ;;
	*) echo "usage: $0 [--rounds N] [--cycles N]" >&2; exit 2 ;;
	esac
done
port=${DDB_BENCH_PORT:-5499}

ddb_cluster_user
ddb_scratch_cluster "$port" -c autovacuum=off
as_user "$psql -c 'CREATE EXTENSION ddb' -c \"SELECT ddb_create_table('qqq', 'PK', 'S', 'SK', 'N')\"" >/dev/null
cat >"$work/q.sql" <<'Q'
\set n :n + 1
INSERT INTO qqq VALUES ('q' || (:n % 10), :n, jsonb_build_object('pad', repeat('x', 200)));
DELETE FROM qqq WHERE "PK" = 'q' || (:n % 10) AND "SK" = :n - 1000;
Q
chmod 644 "$work/q.sql"

printf '| cycles | leaf pages | tree pages | deleted pages | of them recyclable | file blocks | leaf_fill | buffers, first item of q3 |\n'
printf '|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for ((r = 0; r < rounds; r++)); do
	start=$((r * cycles))
	as_user "'$PGBIN/pgbench' -n -h '$work' -p $port -t $cycles -D n=$start -f '$work/q.sql' postgres" >/dev/null
	as_user "$psql -c 'VACUUM qqq'"
	v=$(as_user "$psql -c \"SELECT ddb_verify('qqq')\"")
	blocks=$(as_user "$psql -c \"SELECT pg_relation_size('qqq') / current_setting('block_size')::int\"")
	bufs=$(as_user "$psql -c \"EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM qqq WHERE \\\"PK\\\" = 'q3' ORDER BY \\\"SK\\\" LIMIT 1\"" |
		sed -n 's/.*Buffers: shared hit=\([0-9]*\).*/\1/p' | head -1)
	field() { printf '%s' "$v" | sed -n "s/.*\"$1\": \([0-9.]*\).*/\1/p"; }
	printf '| %d | %s | %s | %s | %s | %s | %s | %s |\n' $((start + cycles)) "$(field leaf_pages)" \
		"$(field pages)" "$(field deleted_pages)" "$(field recyclable_pages)" "$blocks" \
		"$(field leaf_fill)" "$bufs"
done
