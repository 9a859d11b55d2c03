#!/usr/bin/env bash
#
# test/bench/endpoint.sh: ddb's HTTP endpoint against dynalite and against
# pgbench calling ddb_api, and against an HTTP server that does no work (see test/bench/endpoint.py for what it measures).
#
#   bash test/bench/endpoint.sh                 # 10,000 items, 5 rounds x 5 s per side (~10 min)
#   bash test/bench/endpoint.sh --rounds 3 --duration 3 --ops GetItem --clients 1
#
# Builds and installs ddb (DDB_PGBIN picks the PostgreSQL build), installs
# dynalite with npm into test/bench/dynalite/node_modules on first use, and
# prints a Markdown table.  As root, the cluster runs as "postgres".
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/test/lib.sh"
ddb_install_deps
log "building and installing ddb"
ddb_build_install "$here" || exit 1
ddb_cluster_user
dyn="$here/test/bench/dynalite"
if [ ! -f "$dyn/node_modules/dynalite/cli.js" ]; then
	log "installing dynalite (npm)"
	(cd "$dyn" && npm install --no-audit --no-fund --loglevel=error) >&2
fi
null_http=$(mktemp -d)/null_http
cc -O2 -Wall -Werror -o "$null_http" "$here/test/bench/null_http.c" -lmicrohttpd
exec /usr/bin/python3 "$here/test/bench/endpoint.py" --pgbin "$PGBIN" --runas "$RUNAS" \
	--dynalite "$dyn/node_modules/dynalite/cli.js" --null-server "$null_http" "$@"
