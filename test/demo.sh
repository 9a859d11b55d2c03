#!/usr/bin/env bash
#
# test/demo.sh: set up ddb on this machine and try it.
#
#   bash test/demo.sh         # build, install, start a local cluster, load the
#                             # worked example (test/demo.sql), open psql
#   bash test/demo.sh stop    # stop the demo cluster
#
# On a fresh Debian 12 machine run it as root: it installs what is missing
# (the build's and the endpoint's packages, not the test suite's; see
# test/lib.sh), builds and installs the
# extension, and runs the cluster as the unprivileged "postgres" user (initdb
# refuses root).  As a normal user it needs the build dependencies installed
# and write access to PostgreSQL's extension directories (or sudo).
#
# The cluster lives in .tmp/demo of this checkout (or DDB_DEMO_DIR) and is
# reused by the next run; it listens only on a private Unix socket
# directory.  When stdin is a terminal the script ends in psql; otherwise
# it prints how to connect.  The extension is built and installed only when
# the sources or the installed files differ from what the last run
# installed (a digest of both, kept in the cluster's directory).
#
# The cluster also serves DynamoDB's HTTP API (shared_preload_libraries =
# 'ddb'): the script creates an access key, runs a few requests through the
# endpoint with boto3, and prints how to point boto3 and the AWS CLI at it.
#
# Knobs: DDB_PGBIN (another PostgreSQL 15 build's bin directory),
# DDB_DEMO_PORT (default 54320), DDB_DEMO_HTTP_PORT (the HTTP endpoint's
# port on 127.0.0.1, default 8000), DDB_DEMO_DIR (the cluster's directory,
# default .tmp/demo of this checkout; made if missing, else the cluster's
# owner must be able to write it).
set -eu
set -o pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
orig_path=$PATH
# (relative to where the script was started)
if [ -n "${DDB_DEMO_DIR:-}" ]; then DDB_DEMO_DIR=$(realpath -m "$DDB_DEMO_DIR"); fi
. "$here/test/lib.sh"
# Every path below is absolute; the cluster's owner may not be allowed in
# the current directory.
cd /

PORT=${DDB_DEMO_PORT:-54320}
HTTP_PORT=${DDB_DEMO_HTTP_PORT:-8000}
cmd=${1:-start}
demo_link="$here/.tmp/demo"

# The cluster's directory.  Its owner must be able to reach it: when this
# checkout sits where the "postgres" user cannot go (root's home, say), the
# cluster lives under /var/tmp and .tmp/demo points there.  DDB_DEMO_DIR,
# when given, is used as it is.
ddb_cluster_user
demo_dir() {
	if [ -n "${DDB_DEMO_DIR:-}" ]; then
		if [ ! -e "$DDB_DEMO_DIR" ]; then
			mkdir -p "$DDB_DEMO_DIR"
			chown "$RUNAS" "$DDB_DEMO_DIR"
		fi
		as_user "test -d '$DDB_DEMO_DIR' && test -w '$DDB_DEMO_DIR'" || {
			echo "DDB_DEMO_DIR=$DDB_DEMO_DIR: the cluster's owner ($RUNAS) cannot write that directory" >&2
			return 1
		}
		echo "$DDB_DEMO_DIR"
		return
	fi
	if [ -e "$demo_link" ]; then
		readlink -f "$demo_link"
		return
	fi
	mkdir -p "$demo_link"
	chown "$RUNAS" "$demo_link"
	if ! as_user "test -w '$demo_link'"; then
		rmdir "$demo_link"
		local alt="/var/tmp/ddb-demo-$(id -u)-$(printf '%s' "$here" | md5sum | cut -c1-8)"
		mkdir -p "$alt"
		chown "$RUNAS" "$alt"
		ln -s "$alt" "$demo_link"
	fi
	readlink -f "$demo_link"
}

# Port and socket directory of the running cluster, from postmaster.pid.
running() {
	[ -f "$data/postmaster.pid" ] && as_user "'$PGBIN/pg_ctl' -D '$data' status" >/dev/null 2>&1
}
read_conn() {
	port=$(sed -n 4p "$data/postmaster.pid")
	sock=$(sed -n 5p "$data/postmaster.pid")
}

# A digest of the build's sources and of the installed extension's files:
# unchanged since the last install, the installed build is current.
build_digest() {
	local share
	share="$("$PG_CONFIG" --sharedir)/extension"
	{
		echo "$PG_CONFIG"
		(cd "$here" && find Makefile ddb.control ddb--*.sql src -type f \
			! -name '*.o' ! -name '*.bc' ! -name '*.so' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
		sha256sum "$("$PG_CONFIG" --pkglibdir)/ddb.so" "$share/ddb.control" "$share"/ddb--*.sql 2>&1 || true
	} | sha256sum | cut -d' ' -f1
}

case $cmd in
stop)
	stop_dir=${DDB_DEMO_DIR:-$demo_link}
	if [ ! -e "$stop_dir/data" ]; then
		echo "no demo cluster in $stop_dir"
		exit 0
	fi
	data="$(readlink -f "$stop_dir")/data"
	if [ -f "$data/postmaster.pid" ] && [ ! -x "$PGBIN/pg_ctl" ]; then
		echo "no pg_ctl in $PGBIN to stop the demo cluster: give the DDB_PGBIN it was started with" >&2
		exit 1
	fi
	if running; then
		as_user "'$PGBIN/pg_ctl' -D '$data' -m fast -w stop" >/dev/null
		echo "demo cluster stopped"
	else
		echo "demo cluster is not running"
	fi
	exit 0
	;;
start) ;;
*)
	echo "usage: bash test/demo.sh [stop]" >&2
	exit 2
	;;
esac

# --- dependencies, build and install (test/lib.sh) --------------------------
ddb_install_deps demo || exit 1
dir=$(demo_dir) || exit 1
installed_now=""
if [ "$(cat "$dir/installed-build" 2>/dev/null)" = "$(build_digest)" ]; then
	log "ddb is installed from these sources already (delete $dir/installed-build to rebuild)"
else
	log "building and installing ddb"
	installed_now=1
	rm -f "$dir/installed-build"
	ddb_build_install "$here" || exit 1
	build_digest >"$dir/installed-build"
fi

# --- the cluster --------------------------------------------------------------
data="$dir/data"
# Unix socket paths are limited to about 100 bytes.
sock="$dir/sock"
if [ ${#sock} -gt 80 ]; then sock="/tmp/ddb-demo-sock-$(id -u)-$PORT"; fi

if [ ! -f "$data/PG_VERSION" ]; then
	log "creating a cluster in $dir (owner: $RUNAS)"
	# The C locale sorts text by bytes, as DynamoDB sorts string keys.
	as_user "'$PGBIN/initdb' -D '$data' -A trust -U '$RUNAS' -E UTF8 --locale=C" \
		>"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
	echo "include_if_exists = 'ddb_demo.conf'" >>"$data/postgresql.conf"
fi

# A cluster started by an older demo (without the HTTP endpoint, or on
# another port) restarts; so does one running when a build was installed:
# ddb is preloaded, and the server and its backends keep the library the
# server started with, whatever replaces the file.
if running; then
	why=""
	if ! grep -q "^ddb.http_port = $HTTP_PORT\$" "$data/ddb_demo.conf" 2>/dev/null; then
		why="to start the HTTP endpoint"
	elif [ -n "$installed_now" ]; then
		why="to load the build just installed"
	fi
	if [ -n "$why" ]; then
		log "restarting the demo cluster $why"
		as_user "'$PGBIN/pg_ctl' -D '$data' -m fast -w stop" >/dev/null
	fi
fi
if running; then
	read_conn
	log "reusing the running cluster in $dir (port $port)"
else
	mkdir -p "$sock"
	chown "$RUNAS" "$sock"
	cat >"$data/ddb_demo.conf" <<EOF
# written by test/demo.sh on every start
listen_addresses = ''
unix_socket_directories = '$sock'
port = $PORT
# DynamoDB's HTTP API on 127.0.0.1:$HTTP_PORT, served from database ddb_demo
shared_preload_libraries = 'ddb'
ddb.http_port = $HTTP_PORT
ddb.http_database = 'ddb_demo'
ddb.http_workers = 2
EOF
	chown "$RUNAS" "$data/ddb_demo.conf"
	log "starting the cluster in $dir (port $PORT, HTTP endpoint on 127.0.0.1:$HTTP_PORT)"
	as_user "'$PGBIN/pg_ctl' -D '$data' -l '$dir/server.log' -w start" >/dev/null || {
		tail -20 "$dir/server.log" >&2
		echo "could not start the demo cluster (is port $PORT or $HTTP_PORT taken? set DDB_DEMO_PORT or DDB_DEMO_HTTP_PORT)" >&2
		exit 1
	}
	read_conn
fi

psql=("$PGBIN/psql" -X -h "$sock" -p "$port" -U "$RUNAS")
if [ "$("${psql[@]}" -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'ddb_demo'")" != 1 ]; then
	"${psql[@]}" -d postgres -qc 'CREATE DATABASE ddb_demo'
fi

log "loading the worked example (test/demo.sql)"
"${psql[@]}" -d ddb_demo -q -v ON_ERROR_STOP=1 -P pager=off -f "$here/test/demo.sql"

# --- the HTTP endpoint -----------------------------------------------------------
# An access key for the cluster's owner, so requests signed with it may do
# anything (a new one on every run; the earlier ones stay valid).
read -r key_id key_secret < <("${psql[@]}" -d ddb_demo -tA -F ' ' -c \
	"SELECT access_key_id, secret_access_key FROM ddb_create_access_key(current_user::regrole)")
endpoint="http://127.0.0.1:$HTTP_PORT"
log "the same table through DynamoDB's HTTP API at $endpoint (boto3, test/demo_endpoint.py)"
AWS_ACCESS_KEY_ID=$key_id AWS_SECRET_ACCESS_KEY=$key_secret AWS_DEFAULT_REGION=us-east-1 \
	DDB_ENDPOINT=$endpoint /usr/bin/python3 "$here/test/demo_endpoint.py" || {
	echo "the HTTP endpoint did not answer as expected; see $dir/server.log" >&2
	exit 1
}

# --- hand over ------------------------------------------------------------------
shown_psql=psql
[ "$(PATH=$orig_path command -v psql)" ] || shown_psql="$PGBIN/psql"
connect="$shown_psql -h $sock -p $port -U $RUNAS ddb_demo"
# The python3 the user's PATH finds may lack boto3 (pyenv, a virtualenv):
# then show Debian's, which has it (test/lib.sh installs python3-boto3).
shown_python=python3
PATH=$orig_path python3 -c 'import boto3' >/dev/null 2>&1 || shown_python=/usr/bin/python3
# The stop command needs the PostgreSQL build the demo runs, and a later
# start the same ports: show the variables this run was given.
again=""
for v in DDB_PGBIN DDB_DEMO_PORT DDB_DEMO_HTTP_PORT DDB_DEMO_DIR; do
	if [ -n "${!v:-}" ]; then again+="$v=${!v} "; fi
done
cat <<EOF

DynamoDB's HTTP API is at $endpoint.  Point boto3 or the AWS CLI at it with
this access key (role $RUNAS; make more with ddb_create_access_key('role')):

  export AWS_ACCESS_KEY_ID=$key_id
  export AWS_SECRET_ACCESS_KEY=$key_secret
  export AWS_DEFAULT_REGION=us-east-1
  aws dynamodb list-tables --endpoint-url $endpoint
  aws dynamodb get-item --endpoint-url $endpoint --table-name app \\
      --key '{"PK": {"S": "CUST#42"}, "SK": {"S": "PROFILE"}}'
  $shown_python -c "import boto3; t = boto3.resource('dynamodb', endpoint_url='$endpoint').Table('app'); print(t.get_item(Key={'PK': 'CUST#42', 'SK': 'PROFILE'})['Item'])"
EOF
if [ -t 0 ] && [ -t 1 ]; then
	echo "Connecting: $connect   (leave with \\q; stop the cluster with: ${again}bash test/demo.sh stop)"
	exec "${psql[@]}" -d ddb_demo
fi
echo "Connect with:   $connect"
echo "Stop it with:   ${again}bash test/demo.sh stop"
exit 0
