#!/usr/bin/env bash
#
# test/bench/stream_overhead.sh: what a NEW_AND_OLD_IMAGES stream costs a
# write.  Against a running server (PGHOST, PGPORT, PGUSER, PGDATABASE; the
# ddb extension installed), for each operation it alternates runs on a table
# without a stream and one with a stream, and prints tps and WAL bytes per
# transaction (server-wide LSN difference over the run): the medians of the
# rounds, and the median of the per-round ratios (with their range), since
# a shared machine's load moves between rounds.
#
#   bash test/bench/stream_overhead.sh [seconds per run, default 10] [rounds, default 3]
set -euo pipefail
secs=${1:-10}
rounds=${2:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
q() { psql -X -q -tA -v ON_ERROR_STOP=1 -c "$1"; }

q "CREATE EXTENSION IF NOT EXISTS ddb"
for t in bench_nostream bench_stream; do
	q "SET client_min_messages = warning; DROP TABLE IF EXISTS $t"
	q "SELECT ddb_create_table('$t', 'PK', 'S', 'SK', 'S')" >/dev/null
	q "INSERT INTO $t SELECT 'P' || (g % 1000), 'S' || g, jsonb_build_object('n', 0, 'pad', repeat('x', 100)) FROM generate_series(1, 10000) g"
done
q "SELECT ddb_update_stream('bench_stream', 'NEW_AND_OLD_IMAGES') IS NOT NULL" >/dev/null
q "VACUUM ANALYZE bench_nostream"
q "VACUUM ANALYZE bench_stream"

# PutItem of a new key (an INSERT record), UpdateItem of a counter (MODIFY)
for t in bench_nostream bench_stream; do
	cat >"$work/put.$t.sql" <<SQL
\\set k random(1, 1000000000)
SELECT ddb_put_item('$t', jsonb_build_object('PK', 'N' || :k, 'SK', 'S' || :client_id, 'pad', repeat('y', 100)));
SQL
	cat >"$work/update.$t.sql" <<SQL
\\set g random(1, 10000)
SELECT ddb_update_item('$t', jsonb_build_object('PK', 'P' || (:g % 1000), 'SK', 'S' || :g), 'ADD n ' || chr(58) || 'one', vals => jsonb_build_object(chr(58) || 'one', 1));
SQL
done

run() { # op table -> "tps wal_per_txn"
	local op=$1 tbl=$2 lsn0 lsn1 out tps n
	lsn0=$(q "SELECT pg_current_wal_insert_lsn()")
	out=$(pgbench -n -M prepared -c 1 -T "$secs" -f "$work/$op.$tbl.sql" 2>&1)
	lsn1=$(q "SELECT pg_current_wal_insert_lsn()")
	tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out" | head -1)
	n=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
	echo "$tps $(q "SELECT round(pg_wal_lsn_diff('$lsn1', '$lsn0') / $n)")"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

printf '| operation | tps without stream | tps with stream | ratio (median of rounds) | range | WAL bytes/txn without | WAL bytes/txn with |\n|---|---:|---:|---:|---|---:|---:|\n'
for op in put update; do
	: >"$work/a"; : >"$work/b"; : >"$work/r"
	for r in $(seq "$rounds"); do
		x=$(run "$op" bench_nostream); y=$(run "$op" bench_stream)
		echo "$x" >>"$work/a"; echo "$y" >>"$work/b"
		echo "${y%% *} / ${x%% *}" | bc -l >>"$work/r"
	done
	ta=$(cut -d' ' -f1 "$work/a" | median); tb=$(cut -d' ' -f1 "$work/b" | median)
	wa=$(cut -d' ' -f2 "$work/a" | median); wb=$(cut -d' ' -f2 "$work/b" | median)
	printf '| %s | %.0f | %.0f | %.2f | %.2f-%.2f | %s | %s |\n' "$op" "$ta" "$tb" "$(median <"$work/r")" \
		"$(sort -n "$work/r" | head -1)" "$(sort -n "$work/r" | tail -1)" "$wa" "$wb"
done
q "DROP TABLE bench_nostream; DROP TABLE bench_stream"
