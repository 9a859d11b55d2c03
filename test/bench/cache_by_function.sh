#!/usr/bin/env bash
#
# test/bench/cache_by_function.sh: where one statement's simulated cache
# misses go, function by function, from the callgrind files that
# `DDB_KEEP=1 bash test/bench/instructions.sh --cache` keeps.
#
#   bash test/bench/cache_by_function.sh DIR TAG [EVENT] [LINES]
#   bash test/bench/cache_by_function.sh /tmp/ddb-instructions.XXXXXX get.api.1 DLmr
#
# TAG is OP.SIDE.PRELOAD (get.api.1, delete.heap.1, ...): the script
# subtracts the run of N EXECUTEs from the run of M, as instructions.sh
# does, and prints each function's events per statement (self cost;
# --inclusive=yes in INCLUSIVE=1), sorted by EVENT (default D1mr; any of
# Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw), the first LINES (default 30).
set -eu
set -o pipefail
[ $# -ge 2 ] || { sed -n '3,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
dir=$1 tag=$2 event=${3:-D1mr} lines=${4:-30}
inclusive=no
[ "${INCLUSIVE:-}" = 1 ] && inclusive=yes
files=$(cd "$dir" && ls callgrind."$tag".* 2>/dev/null | sort -t. -k5 -n) ||
	{ echo "no callgrind files for $tag in $dir" >&2; exit 1; }
read -r lo hi extra <<<"$(echo $files)"
[ -n "${hi:-}" ] && [ -z "${extra:-}" ] || { echo "expected two runs of $tag in $dir" >&2; exit 1; }
n_lo=${lo##*.} n_hi=${hi##*.}
events="Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw"
annotate() {
	callgrind_annotate --auto=no --inclusive=$inclusive --threshold=100 --show="${events// /,}" \
		"$dir/$1" 2>/dev/null | awk '
		/^-+$/ { sep++; next }
		sep == 6 && /^ *[0-9]/ {
			gsub(/\([^)]*\)/, "")
			n = split($0, f, " +")
			out = ""; k = 0; name = ""
			for (i = 1; i <= n; i++) {
				if (f[i] == "") continue
				if (k < 9) { v = f[i]; gsub(",", "", v); if (v == ".") v = 0; out = out v " "; k++ }
				else name = name (name == "" ? "" : " ") f[i]
			}
			sub(/ \[[^]]*\]$/, "", name)
			print name "\t" out
		}'
}
join -t "$(printf '\t')" -a 2 -e "0 0 0 0 0 0 0 0 0" -o 0,1.2,2.2 \
	<(annotate "$lo" | sort -t "$(printf '\t')" -k1,1) \
	<(annotate "$hi" | sort -t "$(printf '\t')" -k1,1) |
awk -F '\t' -v n="$((n_hi - n_lo))" -v ev="$event" -v evs="$events" '
	BEGIN { k = split(evs, names, " "); for (i = 1; i <= k; i++) if (names[i] == ev) col = i
		if (!col) { print "unknown event " ev > "/dev/stderr"; exit 2 } }
	{ split($2, a, " "); split($3, b, " "); line = ""
	  for (i = 1; i <= k; i++) { d[i] = (b[i] - a[i]) / n; line = line sprintf("%9.1f", d[i]) }
	  if (d[col] >= 0.05) print d[col] "\t" line "  " $1 }' |
sort -t "$(printf '\t')" -k1,1 -g -r | cut -f2- | head -n "$lines" |
{ printf '%9s' $events; echo "  function (per statement, $tag, $n_hi - $n_lo EXECUTEs)"; cat; }
