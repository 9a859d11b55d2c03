#!/usr/bin/env bash
#
# test/bench/instructions.sh: instructions per statement, ddb against heap +
# btree, counted by callgrind: a measure that does not depend on the load
# of a shared machine.
#
#   bash test/bench/instructions.sh                    # the write benchmarks, plain and preloaded
#   bash test/bench/instructions.sh --ops "get query" --preload no
#   bash test/bench/instructions.sh --items 100000 --runs "20 220"
#   bash test/bench/instructions.sh --smoke            # a few statements: the tool runs
#   bash test/bench/instructions.sh --wal --ops "update put_over"   # WAL bytes instead
#   bash test/bench/instructions.sh --cache --items 1000000 --ops get  # simulated cache misses
#   bash test/bench/instructions.sh --dead 20 --ops query   # deleted versions at each partition's head
#
# Loads the bench's layout (test/bench/setup.sql: 100 items per partition,
# interleaved, ~150-byte items; --items, default 20,000) into bench_ddb and
# bench_heap (PRIMARY KEY ("PK", "SK")) as test/bench/run.sh does (TRUNCATE
# and COPY in one transaction), VACUUM ANALYZEs them and stops the server.
# Then, for each benchmark script test/bench/OP_{api,sql}.sql and each side
# (ddb API: the *_api script on bench_ddb; ddb SQL: the *_sql script on
# bench_ddb; heap: the *_sql script on bench_heap), it runs a single-user
# backend (postgres --single) under valgrind --tool=callgrind on a fresh
# copy of the loaded cluster, twice: the script PREPAREd and EXECUTEd N
# times, then M times (--runs "N M", default "50 250"), each EXECUTE its
# own transaction, as pgbench -M prepared sends it (the \set variables
# become the statement's parameters, drawn from a fixed seed; client_id 0,
# run 1).  (Ir(M) - Ir(N)) / (M - N) is the instructions per statement:
# start-up, the first executions' custom plans and catalog caching cancel
# out.  Keys a delete script deletes are inserted at load time.  A script's
# \gset query (the batch scripts fetch the request a client holds) is run
# on the loaded server while the script is translated, not measured; the
# columns of its row become the statement's parameters, as in pgbench.
#
# --preload yes|no|both (default both): with ddb in shared_preload_libraries
# (its own WAL records, src/engine/ddb_wal.c) or not (Generic WAL).
# full_page_writes is off: every copy starts right after a checkpoint, and
# the first touch of each page would log an image of it.
#
# Prints a Markdown table: instructions per statement for each side and the
# ratios heap / ddb (> 1: ddb does less work).  The single-user backend
# prints each result, which both sides pay for.
#
# --dead K: after the load, K items inserted at the head of every partition
# (keys DEAD#..., which sort before the loaded ORDER#...) and deleted in a
# later transaction, on both sides, with nothing to prune them before the
# measured statements (a single-user backend runs no autovacuum): what
# reads meet after deletes that VACUUM has not reached yet.  The first
# --runs N executions pay for the hint bits and whatever cleaning the reads
# do, and cancel out.
#
# --wal: WAL bytes per statement instead, by the same method without
# valgrind: the position of WAL's end after N and after M executions
# (pg_current_wal_insert_lsn, same copy, same statements, so the first N
# log the same bytes in both runs), and pg_waldump --stats over the last
# M - N executions' WAL: the records' bytes (the page images Generic WAL
# writes, full_page_writes being off, in parentheses when there are any).
# Nothing else writes WAL in a single-user backend (no autovacuum, no
# background writer), so the figures are exact and repeat run after run.
# The ratios are then ddb / heap (<= 1: ddb logs no more than the heap).
#
# --cache: callgrind's cache simulation as well (--cache-sim=yes), each
# level sized like the VM's CPU (AMD EPYC, Zen 5): I1 32 kB 8-way, D1 48 kB
# 12-way, and the last level --ll SIZE,ASSOC,LINE (default the 32 MB
# 16-way L3 of one core complex; 1048576,16,64 for the 1 MB L2), 64-byte
# lines. The backend runs with shared_buffers 2GB and each script's input
# first prewarms the table it reads (pg_prewarm; for the heap side its
# primary key too), so that no measured execution reads from the kernel,
# as in run.sh's timed runs; the prewarm is in both runs and cancels out.
# Prints, per statement and side, instructions, I1 misses, D1 misses
# (reads + writes), last-level misses (data; instructions) and branches
# mispredicted (--branch-sim=yes: conditional and indirect), the
# difference of the two runs divided by M - N as for instructions. With
# DDB_KEEP=1, test/bench/cache_by_function.sh TAG-DIRECTORY TAG shows
# which functions and lines miss.
#
# Knobs: DDB_PGBIN (default /usr/lib/postgresql/15/bin, whose PostgreSQL
# must have ddb installed), DDB_BENCH_PORT (the loading server's port,
# default 55480), DDB_KEEP=1 (keep the work directory and callgrind files:
# callgrind_annotate --inclusive=yes FILE shows where the instructions go),
# DDB_WAL_COMPRESSION (the servers' wal_compression, default off: with it
# on, ddb compresses its leaf splits' right halves, src/engine/ddb_wal.c).
set -u
set -o pipefail

bench_dir=$(cd "$(dirname "$0")" && pwd)
PGBIN=${DDB_PGBIN:-/usr/lib/postgresql/15/bin}
wal_compression=${DDB_WAL_COMPRESSION:-off}
items=20000
runs="50 250"
ops="put_new put_over update delete"
preload=both
measure=instructions
ll=33554432,16,64
dead=0
orig_args=("$@")
usage() { sed -n '3,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--items) items=$2; shift ;;
	--runs) runs=$2; shift ;;
	--ops) ops=$2; shift ;;
	--preload) preload=$2; shift ;;
	--wal) measure=wal ;;
	--cache) measure=cache ;;
	--ll) ll=$2; shift ;;
	--dead) dead=$2; shift ;;
	--smoke) items=2000; runs="2 6"; ops="put_new update" ; preload=no ;;
	-h|--help) usage ;;
	*) echo "unknown option: $1" >&2; usage ;;
	esac
	shift
done
read -r n_lo n_hi extra <<<"$runs"
case "$n_lo/$n_hi/${extra:-}" in
*[!0-9/]*|/*|*//*) echo "--runs must be two numbers N M, N < M" >&2; exit 2 ;;
esac
[ "$n_lo" -lt "$n_hi" ] || { echo "--runs must be two numbers N M, N < M" >&2; exit 2; }
case $preload in yes) preloads=1 ;; no) preloads=0 ;; both) preloads="0 1" ;;
	*) echo "--preload must be yes, no or both" >&2; exit 2 ;; esac
if [ $((items % 100)) != 0 ] || [ "$items" -lt 100 ]; then
	echo "--items must be a multiple of 100 (100 items per partition)" >&2; exit 2
fi
for o in $ops; do
	[ -f "$bench_dir/${o}_api.sql" ] || [ -f "$bench_dir/${o}_sql.sql" ] ||
		{ echo "no benchmark script for $o in $bench_dir" >&2; exit 2; }
done
case $ll in [0-9]*,[0-9]*,[0-9]*) ;; *) echo "--ll must be SIZE,ASSOC,LINE" >&2; exit 2 ;; esac
case $dead in ''|*[!0-9]*) echo "--dead must be a number of items" >&2; exit 2 ;; esac
[ $measure = wal ] || command -v valgrind >/dev/null ||
	{ echo "valgrind is not installed" >&2; exit 2; }

# initdb refuses root: run the whole measurement as "postgres" instead.
if [ "$(id -u)" = 0 ]; then
	id postgres >/dev/null 2>&1 || useradd -r -m postgres
	envs="DDB_PGBIN=$(printf %q "$PGBIN") DDB_BENCH_PORT=${DDB_BENCH_PORT:-55480} DDB_KEEP=${DDB_KEEP:-} DDB_WAL_COMPRESSION=${DDB_WAL_COMPRESSION:-off}"
	args=""
	[ ${#orig_args[@]} -gt 0 ] && args=$(printf ' %q' "${orig_args[@]}")
	cd /tmp && exec su postgres -s /bin/bash -c "$envs bash $(printf %q "$bench_dir/$(basename "$0")")$args"
fi

export PATH="$PGBIN:$PATH"
work=$(mktemp -d /tmp/ddb-instructions.XXXXXX)
log() { printf '==> [%4ss] %s\n' "$SECONDS" "$*" >&2; }
die() { echo "instructions: $*" >&2; exit 1; }
started=0
cleanup() {
	[ $started = 1 ] && pg_ctl -D "$work/data" -m fast stop >/dev/null 2>&1
	if [ -z "${DDB_KEEP:-}" ]; then rm -rf "$work"; else echo "kept $work" >&2; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the loaded cluster -------------------------------------------------------
export PGHOST="$work/sock" PGPORT=${DDB_BENCH_PORT:-55480} PGUSER=$(id -un) PGDATABASE=ddb_bench
mkdir -p "$work/sock"
initdb -D "$work/data" -A trust -U "$PGUSER" --locale=C --encoding=UTF8 --no-sync \
	>"$work/initdb.log" 2>&1 || { cat "$work/initdb.log" >&2; die "initdb failed"; }
cat >>"$work/data/postgresql.conf" <<EOF
listen_addresses = ''
unix_socket_directories = '$work/sock'
port = $PGPORT
fsync = off
full_page_writes = off
max_wal_size = 1GB
log_min_messages = warning
EOF
pg_ctl -D "$work/data" -l "$work/server.log" -w start >/dev/null ||
	{ cat "$work/server.log" >&2; die "the server did not start"; }
started=1
q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
q -d postgres -c "CREATE DATABASE ddb_bench TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'" ||
	die "cannot create the database"
q -f "$bench_dir/setup.sql" >/dev/null || die "setup failed"
P=$((items / 100))
log "loading $items items ($P partitions x 100, interleaved) into bench_ddb and bench_heap"
q -c "\\copy (SELECT bench_pk((i % $P)::int), bench_sk((i / $P)::int), bench_item(i) FROM generate_series(0, $items - 1) i ORDER BY i) TO '$work/items.csv' CSV" ||
	die "generating the items failed"
q <<EOF >/dev/null || die "loading failed"
CREATE TABLE bench_ddb ("PK" text, "SK" text, item jsonb) USING ddb;
CREATE TABLE bench_heap ("PK" text, "SK" text, item jsonb, PRIMARY KEY ("PK", "SK"));
BEGIN;
TRUNCATE bench_ddb;
\\copy bench_ddb FROM '$work/items.csv' CSV
COMMIT;
BEGIN;
TRUNCATE bench_heap;
\\copy bench_heap FROM '$work/items.csv' CSV
COMMIT;
-- the keys delete_api.sql and delete_sql.sql delete (client 0, run 1, n = 1..M;
-- delete_old_*.sql deletes loaded items)
INSERT INTO bench_ddb SELECT bench_pk((n * 1 + 0 * 7919) % $P), 'DEL#1#0#' || n, bench_item(n) FROM generate_series(1, $n_hi) n;
INSERT INTO bench_heap SELECT bench_pk((n * 1 + 0 * 7919) % $P), 'DEL#1#0#' || n, bench_item(n) FROM generate_series(1, $n_hi) n;
VACUUM ANALYZE bench_ddb, bench_heap;
CHECKPOINT;
EOF
if [ "$dead" -gt 0 ]; then
	log "$dead deleted items at the head of each partition"
	q <<EOF >/dev/null || die "inserting and deleting the dead items failed"
INSERT INTO bench_ddb SELECT bench_pk(p), 'DEAD#' || lpad(d::text, 4, '0'), bench_item(d)
  FROM generate_series(0, $P - 1) p, generate_series(1, $dead) d;
INSERT INTO bench_heap SELECT bench_pk(p), 'DEAD#' || lpad(d::text, 4, '0'), bench_item(d)
  FROM generate_series(0, $P - 1) p, generate_series(1, $dead) d;
DELETE FROM bench_ddb WHERE "SK" LIKE 'DEAD#%';
DELETE FROM bench_heap WHERE "SK" LIKE 'DEAD#%';
CHECKPOINT;
EOF
fi
if [ $measure = cache ]; then
	q -c "CREATE EXTENSION pg_prewarm" >/dev/null || die "--cache needs pg_prewarm"
fi
rm -f "$work/items.csv"
q -c "SET client_min_messages = warning; SELECT bench_batch_sets($P)" >/dev/null || die "creating the batch benches' requests failed"

# --- a script as PREPARE and EXECUTEs ------------------------------------------
# to_single SCRIPT TABLE COUNT: the pgbench script as a single-user backend's
# input: one PREPARE, COUNT EXECUTEs with the \set variables drawn as
# pgbench draws them (fixed seed), one line each.
to_single() {
	perl -e '
		use strict; use warnings; use integer;
		my ($file, $tbl, $count, $P, $K) = @ARGV;
		srand(19);
		sub random { my ($lo, $hi) = @_; no integer; return $lo + int(rand($hi - $lo + 1)); }
		# a permutation of 0 .. size - 1 (not pgbench'"'"'s, which only timing
		# runs need: a statement'"'"'s instructions do not depend on the order)
		sub permute {
			my ($i, $size) = @_;
			die "permute: $size is a multiple of 7919\n" if $size % 7919 == 0;
			return ($i * 7919 + 13) % $size;
		}
		open(my $fh, "<", $file) or die "$file: $!";
		my (@sets, @sql, @gsets);
		while (<$fh>) {
			chomp;
			next if /^\s*--/ || /^\s*$/;
			if (/^\\set\s+(\w+)\s+(.*)$/) { push @sets, [$1, $2]; next; }
			# a query whose row sets variables (\gset) is run here, on the
			# loaded server, not measured: its columns become parameters
			if (/^(.*\S)\s*\\gset\s*$/) { push @gsets, $1; next; }
			push @sql, $_;
		}
		my %var = (P => $P, n => 0, run => 1, client_id => 0, K => $K);
		my %fetched;
		sub gset {
			my ($query) = @_;
			$query =~ s/\@TBL\@/$tbl/g;
			$query =~ s/(?<!:):(\w+)/defined $var{$1} ? $var{$1} : die "unknown variable $1"/ge;
			$fetched{$query} //= do {
				open(my $ph, "-|", "psql", "-X", "-q", "-A", "-F", "\x1f", "-P", "footer=off",
					 "-v", "ON_ERROR_STOP=1", "-c", $query) or die "psql: $!";
				my @lines = <$ph>;
				close($ph) or die "the \\gset query failed: $query\n";
				chomp(@lines);
				die "the \\gset query returned no row: $query\n" if @lines < 2;
				my @names = split(/\x1f/, $lines[0], -1);
				my @values = split(/\x1f/, $lines[1], -1);
				+{ map { ($names[$_] => $values[$_]) } 0 .. $#names };
			};
			%var = (%var, %{ $fetched{$query} });
		}
		# every execution drawn first: the \gset rows name the parameters
		my @draws;
		for my $i (1 .. $count) {
			for my $s (@sets) {
				my $e = $s->[1];
				$e =~ s/:(\w+)/defined $var{$1} ? $var{$1} : die "unknown variable $1"/ge;
				my $v = eval $e;
				die "cannot evaluate $s->[1]: $@" if $@;
				$var{$s->[0]} = $v;
			}
			gset($_) for @gsets;
			push @draws, { %var };
		}
		my $sql = join(" ", @sql);
		$sql =~ s/\@TBL\@/$tbl/g;
		$sql =~ s/;\s*$//;
		# each :var occurrence is a parameter, as pgbench -M prepared makes it
		my @params;
		$sql =~ s/(?<!:):([A-Za-z_]\w*)/exists $draws[0]{$1} ? do { push @params, $1; "\$" . scalar(@params) } : ":$1"/ge;
		print "PREPARE s AS $sql\n";
		for my $d (@draws) {
			print "EXECUTE s(", join(", ", map { (my $v = $d->{$_}) =~ s/\x27/\x27\x27/g; "\x27$v\x27" } @params), ")\n";
		}
	' "$1" "$2" "$3" "$P" "$n_hi"
}

# instructions SCRIPT TABLE COUNT PRELOAD TAG: Ir of a single-user backend
# running the script COUNT times on a fresh copy of the loaded cluster
instructions() {
	local script=$1 tbl=$2 count=$3 pre=$4 tag=$5 out opts
	out="$work/callgrind.$tag.$count"
	rm -rf "$work/copy"
	cp -a "$work/data" "$work/copy"
	cp "$work/input.$(basename "$script" .sql).$tbl.$count" "$work/input.$tag.$count" ||
		die "no input for $script"
	opts=(-c fsync=off -c full_page_writes=off -c max_wal_size=1GB -c "wal_compression=$wal_compression")
	[ "$pre" = 1 ] && opts+=(-c shared_preload_libraries=ddb -c ddb.http_port=0)
	if [ $measure = wal ]; then
		# the shutdown checkpoint would otherwise remove or recycle the
		# segments before the last one, which pg_waldump reads next
		# whenever the statements log more than a segment
		opts+=(-c wal_keep_size=4GB)
		wal_position "$tag" "$count" "${opts[@]}"
		return
	fi
	local sim=()
	if [ $measure = cache ]; then
		opts+=(-c shared_buffers=2GB)
		sim=(--cache-sim=yes --branch-sim=yes --I1=32768,8,64 --D1=49152,12,64 --LL="$ll")
		{
			echo "SELECT pg_prewarm('$tbl')"
			[ "$tbl" = bench_heap ] && echo "SELECT pg_prewarm('bench_heap_pkey')"
			cat "$work/input.$(basename "$script" .sql).$tbl.$count"
		} >"$work/input.$tag.$count"
	fi
	valgrind --tool=callgrind "${sim[@]}" --callgrind-out-file="$out" \
		postgres --single -D "$work/copy" "${opts[@]}" ddb_bench \
		<"$work/input.$tag.$count" >"$work/output.$tag.$count" 2>"$work/valgrind.$tag.$count" ||
		{ tail -20 "$work/valgrind.$tag.$count" >&2; die "$tag: the backend failed"; }
	if grep -q 'ERROR:' "$work/output.$tag.$count" "$work/valgrind.$tag.$count"; then
		grep -m3 'ERROR:' "$work/output.$tag.$count" "$work/valgrind.$tag.$count" >&2
		die "$tag: a statement failed"
	fi
	# Ir, or with --cache: Ir I1mr D1mr+D1mw DLmr+DLmw ILmr Bcm+Bim
	awk '/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i }
		/^(summary|totals):/ {
			if (!("I1mr" in col)) { print $2; exit }
			print $col["Ir"], $col["I1mr"], $col["D1mr"] + $col["D1mw"],
				$col["DLmr"] + $col["DLmw"], $col["ILmr"], $col["Bcm"] + $col["Bim"]; exit }' "$out"
}

# wal_position TAG COUNT OPTIONS...: in the fresh copy, run the input and
# print where WAL ends after it ("lsn"), and with $wal_from set the bytes
# of the records (and of their images) from $wal_from to there
# ("lsn records images").
wal_position() {
	local tag=$1 count=$2 in="$work/input.$1.$2" lsn
	shift 2
	echo "SELECT pg_current_wal_insert_lsn()" >>"$in"
	postgres --single -D "$work/copy" "$@" ddb_bench <"$in" \
		>"$work/output.$tag.$count" 2>&1 ||
		{ tail -20 "$work/output.$tag.$count" >&2; die "$tag: the backend failed"; }
	if grep -q 'ERROR:' "$work/output.$tag.$count"; then
		grep -m3 'ERROR:' "$work/output.$tag.$count" >&2
		die "$tag: a statement failed"
	fi
	lsn=$(grep -o 'pg_current_wal_insert_lsn = "[0-9A-F]*/[0-9A-F]*"' "$work/output.$tag.$count" |
		tail -1 | sed 's/.*"\(.*\)"/\1/')
	[ -n "$lsn" ] || die "$tag: no WAL position in the output"
	[ -z "${wal_from:-}" ] && { echo "$lsn"; return; }
	# "Total  <count>  <record bytes> [pct]  <FPI bytes> [pct]  <combined> [pct]"
	pg_waldump --stats=record -p "$work/copy/pg_wal" -s "$wal_from" -e "$lsn" \
		>"$work/waldump.$tag" 2>&1 || { cat "$work/waldump.$tag" >&2; die "$tag: pg_waldump failed"; }
	awk -v lsn="$lsn" '$1 == "Total" { print lsn, $3, $5; exit }' "$work/waldump.$tag"
}

# Every script's input is translated now, while the loaded server runs (a
# \gset query is run on it), and the server stopped before the copies.
for o in $ops; do
	for st in "${o}_api.sql bench_ddb" "${o}_sql.sql bench_ddb" "${o}_sql.sql bench_heap"; do
		read -r script tbl <<<"$st"
		[ -f "$bench_dir/$script" ] || continue
		for count in "$n_lo" "$n_hi"; do
			to_single "$bench_dir/$script" "$tbl" "$count" \
				>"$work/input.${script%.sql}.$tbl.$count" || die "translating $script failed"
		done
	done
done
pg_ctl -D "$work/data" -m fast stop >/dev/null || die "stopping the server failed"
started=0

per_statement() {   # SCRIPT TABLE PRELOAD TAG
	local lo hi
	if [ $measure = wal ]; then
		lo=$(wal_from="" instructions "$1" "$2" "$n_lo" "$3" "$4") || exit 1
		hi=$(wal_from=$lo instructions "$1" "$2" "$n_hi" "$3" "$4") || exit 1
		read -r _ rec fpi <<<"$hi"
		awk -v r="$rec" -v f="$fpi" -v n="$((n_hi - n_lo))" \
			'BEGIN { printf "%.0f", r / n; if (f > 0) printf " (%.0f)", f / n }'
		return
	fi
	lo=$(instructions "$1" "$2" "$n_lo" "$3" "$4") || exit 1
	hi=$(instructions "$1" "$2" "$n_hi" "$3" "$4") || exit 1
	# one figure, or with --cache six: each event's (M - N) / (M - N)
	awk -v a="$lo" -v b="$hi" -v n="$((n_hi - n_lo))" 'BEGIN {
		k = split(a, x, " "); split(b, y, " ")
		for (i = 1; i <= k; i++) printf "%s%.*f", (i > 1 ? " " : ""), (i > 1 ? 1 : 0), (y[i] - x[i]) / n }'
}

label() {
	case $1 in
	put_new) echo "PutItem, new key" ;; put_seq) echo "PutItem, new key in sequence" ;;
	put_over) echo "PutItem, overwrite" ;;
	update) echo "UpdateItem, counter +1" ;; delete) echo "DeleteItem" ;;
	delete_old) echo "DeleteItem, a loaded item" ;;
	get) echo "GetItem" ;; query) echo "Query 100 items, forward" ;;
	query_back) echo "Query 100 items, backward" ;; prefix) echo "Query begins_with" ;;
	last) echo "Query limit 1, newest first" ;;
	batch_put) echo "BatchWriteItem, 25 new items" ;; batch_get) echo "BatchGetItem, 100 keys" ;;
	*) echo "$1" ;;
	esac
}
ratio() {
	local h=${1%% *} d=${2%% *}
	[ $measure = wal ] && { h=${2%% *}; d=${1%% *}; }	# ddb / heap
	awk -v h="$h" -v d="$d" 'BEGIN { if (h != "" && d != "" && d > 0) printf "%.2f", h / d }'
}
fmt() {
	[ $measure = wal ] && { printf '%s' "$1"; return; }
	awk -v n="$1" 'BEGIN { s = ""; while (length(n) > 3) { s = "," substr(n, length(n) - 2) s; n = substr(n, 1, length(n) - 3) } printf "%s%s", n, s }'
}

table="$work/table.md"
{
	if [ $measure = cache ]; then
		echo "| statement | ddb preloaded | side | instructions | I1 misses | D1 misses | LL data misses | LL instr. misses | mispredicted branches |"
		echo "|---|---|---|---:|---:|---:|---:|---:|---:|"
	elif [ $measure = wal ]; then
		echo "| statement | ddb preloaded | ddb API | ddb SQL | heap | API / heap | SQL / heap |"
	else
		echo "| statement | ddb preloaded | ddb API | ddb SQL | heap | heap / API | heap / SQL |"
	fi
	[ $measure = cache ] || echo "|---|---|---:|---:|---:|---:|---:|"
} >"$table"
cache_row() {	# LABEL PRELOAD SIDE "Ir I1 D1 DL IL B"
	[ -n "$4" ] || return 0
	read -r ir i1 d1 dl il br <<<"$4"
	printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$2" "$3" "$(fmt "$ir")" \
		"$i1" "$d1" "$dl" "$il" "$br" >>"$table"
}
for pre in $preloads; do
	for o in $ops; do
		api="" sql="" heap=""
		heap_script="$bench_dir/${o}_sql.sql"
		[ -f "$bench_dir/${o}_api.sql" ] && {
			log "$o: ddb API (preload $pre)"
			api=$(per_statement "$bench_dir/${o}_api.sql" bench_ddb $pre "$o.api.$pre") || exit 1
		}
		# put_over_sql is an upsert: ON CONFLICT needs an arbiter index, which ddb has not
		if [ -f "$heap_script" ] && [ "$o" != put_over ]; then
			log "$o: ddb SQL (preload $pre)"
			sql=$(per_statement "$heap_script" bench_ddb $pre "$o.sql.$pre") || exit 1
		fi
		if [ -f "$heap_script" ]; then
			log "$o: heap (preload $pre)"
			heap=$(per_statement "$heap_script" bench_heap $pre "$o.heap.$pre") || exit 1
		fi
		if [ $measure = cache ]; then
			p=$([ $pre = 1 ] && echo yes || echo no)
			cache_row "$(label "$o")" "$p" "ddb API" "$api"
			cache_row "$(label "$o")" "$p" "ddb SQL" "$sql"
			cache_row "$(label "$o")" "$p" "heap" "$heap"
			continue
		fi
		printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$(label "$o")" \
			"$([ $pre = 1 ] && echo yes || echo no)" "$(fmt "$api")" "$(fmt "$sql")" \
			"$(fmt "$heap")" "$(ratio "$heap" "$api")" "$(ratio "$heap" "$sql")" >>"$table"
	done
done
echo
if [ $measure = cache ]; then
	echo "Instructions and simulated cache misses per statement (I1 32768,8,64, D1 49152,12,64, LL $ll; $items items, shared_buffers 2GB, prewarmed; EXECUTEs $n_hi minus $n_lo, $(postgres --version))"
elif [ $measure = wal ]; then
	echo "WAL bytes per statement, records (images) ($items items, EXECUTEs $n_hi minus $n_lo, $(postgres --version))"
else
	echo "Instructions per statement ($items items, EXECUTEs $n_hi minus $n_lo, $(postgres --version))"
fi
echo
cat "$table"
