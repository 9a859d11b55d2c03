# test/lib.sh: shared by test/run.sh and test/demo.sh; source it, don't run it.
#
# Finds PostgreSQL (DDB_PGBIN, default Debian's /usr/lib/postgresql/15/bin),
# installs missing Debian packages when running as root, builds and installs
# the extension, and knows which OS user owns throwaway clusters (initdb
# refuses root, so root hands them to the "postgres" user).
#
# Functions return non-zero on failure after printing why; the caller decides
# what its last line says.

: "${here:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
PG_MAJOR=15
PGBIN=${DDB_PGBIN:-/usr/lib/postgresql/$PG_MAJOR/bin}
PG_CONFIG="$PGBIN/pg_config"

log() { printf '==> %s\n' "$*" >&2; }

# initdb takes the encoding from the locale when not told one: clusters
# started without -E (PostgreSQL::Test::Cluster's, in the TAP tests) would
# be SQL_ASCII under a C or unset locale, and LATIN1 under some others,
# which ddb refuses.  Children get C.UTF-8 when the system has it (glibc
# 2.35 and later have it built in), so that every test cluster is UTF-8;
# LC_ALL and LC_CTYPE would override it.
if locale -a 2>/dev/null | grep -qix 'c\.utf-\?8'; then
	export LANG=C.UTF-8
	unset LC_ALL LC_CTYPE
fi

# apt_wait COMMAND...: run an apt-get command, waiting for the package
# manager's locks while another apt or dpkg (unattended-upgrades, another
# install) holds them, instead of failing.  DPkg::Lock::Timeout makes apt
# wait for the dpkg lock itself; the loop covers the package lists' lock,
# which "apt-get update" does not wait for.
apt_wait() {
	local out i
	for i in $(seq 1 120); do
		if out=$("$@" -o DPkg::Lock::Timeout=600 2>&1); then
			return 0
		fi
		if grep -qE 'Could not get lock|Unable to (acquire|lock)' <<<"$out"; then
			[ "$i" = 1 ] && log "waiting for another apt/dpkg to release its lock"
			sleep 5
			continue
		fi
		echo "$out" >&2
		return 1
	done
	echo "$out" >&2
	return 1
}

# ddb_install_deps [demo]: install whatever the build and the tests need;
# with "demo", only what the demo needs (the build, the endpoint, boto3 and
# the AWS CLI it shows), not the test suite's pytest, Perl, Node.js,
# Chromium and wrk.
ddb_install_deps() {
	local need_pkgs=() tests=1
	[ "${1:-}" = demo ] && tests=
	command -v "$PGBIN/pg_config" >/dev/null 2>&1 || need_pkgs+=("postgresql-$PG_MAJOR")
	[ -f "$($PGBIN/pg_config --includedir-server 2>/dev/null)/postgres.h" ] || need_pkgs+=("postgresql-server-dev-$PG_MAJOR")
	command -v make >/dev/null 2>&1 || need_pkgs+=(make)
	command -v gcc >/dev/null 2>&1 || need_pkgs+=(gcc)
	# the HTTP endpoint: libmicrohttpd (and GnuTLS) to build it; boto3 and the AWS CLI
	# to use it (the demo).  Debian's python3 and aws, whatever else is on
	# PATH.
	[ -f /usr/include/microhttpd.h ] || need_pkgs+=(libmicrohttpd-dev)
	# GnuTLS, libmicrohttpd's TLS, whose socket reads the endpoint takes over
	# (libmicrohttpd-dev depends on it; named for a machine that has one
	# without the other)
	[ -f /usr/include/gnutls/gnutls.h ] || need_pkgs+=(libgnutls28-dev)
	# LZ4 for the leaf splits' WAL, as PostgreSQL (built with it) has it
	[ -f /usr/include/lz4.h ] || need_pkgs+=(liblz4-dev)
	[ -x /usr/bin/python3 ] || need_pkgs+=(python3)
	/usr/bin/python3 -c 'import boto3' >/dev/null 2>&1 || need_pkgs+=(python3-boto3)
	[ -x /usr/bin/aws ] || need_pkgs+=(awscli)
	if [ "$tests" ]; then
		perl -MIPC::Run -e1 >/dev/null 2>&1 || need_pkgs+=(libipc-run-perl)
		command -v prove >/dev/null 2>&1 || need_pkgs+=(perl)
		command -v python3 >/dev/null 2>&1 || need_pkgs+=(python3)	# fuzz cases, README examples
		# pytest to test the endpoint, Node.js/npm (dynamodb-admin,
		# dynalite) and Chromium to compare and drive it, wrk to
		# benchmark it.
		/usr/bin/python3 -c 'import pytest' >/dev/null 2>&1 || need_pkgs+=(python3-pytest)
		# (TLS 1.3 records written by hand for the HTTPS test; awscli
		# depends on it)
		/usr/bin/python3 -c 'import cryptography' >/dev/null 2>&1 || need_pkgs+=(python3-cryptography)
		command -v chromium >/dev/null 2>&1 || need_pkgs+=(chromium)
		command -v node >/dev/null 2>&1 || need_pkgs+=(nodejs)
		command -v npm >/dev/null 2>&1 || need_pkgs+=(npm)
		command -v wrk >/dev/null 2>&1 || need_pkgs+=(wrk)
		# a self-signed certificate for the endpoint's HTTPS test
		command -v openssl >/dev/null 2>&1 || need_pkgs+=(openssl)
	fi
	if [ ${#need_pkgs[@]} -gt 0 ]; then
		if [ "$(id -u)" = 0 ]; then
			log "installing ${need_pkgs[*]}"
			export DEBIAN_FRONTEND=noninteractive
			apt_wait apt-get update -q && apt_wait apt-get install -y -q "${need_pkgs[@]}" || {
				echo "could not install ${need_pkgs[*]}" >&2; return 1; }
		else
			echo "missing packages: ${need_pkgs[*]} (run as root, or install them)" >&2
			return 1
		fi
	fi
	export PATH="$PGBIN:$PATH"
}

# ddb_copy_tree DIR: a copy of the checkout's files in DIR (no .git, no
# build products, no demo cluster).
ddb_copy_tree() {
	mkdir -p "$1"
	tar -C "$here" --exclude=.git --exclude=.tmp --exclude='*.o' --exclude='*.so' \
		--exclude='*.bc' -cf - . | tar -C "$1" -xf -
}

# ddb_build_install DIR [make variables...]: clean build in DIR, then
# install.  run.sh passes CHECKS=1 COPT=-Werror (warnings are errors,
# invariant checks on) and builds in a copy; the demo builds the checkout
# as README.md tells users to.
ddb_build_install() {
	local dir=$1 sudo="" out
	shift
	if [ "$(id -u)" != 0 ] && [ ! -w "$($PG_CONFIG --pkglibdir)" ]; then
		command -v sudo >/dev/null 2>&1 || {
			echo "cannot write $($PG_CONFIG --pkglibdir) and there is no sudo: run as root" >&2; return 1; }
		sudo="sudo"
	fi
	out=$(mktemp /tmp/ddb-build.XXXXXX)
	make -C "$dir" -s clean >/dev/null 2>&1
	if ! make -C "$dir" -s -j2 PG_CONFIG="$PG_CONFIG" "$@" >"$out" 2>&1; then
		cat "$out" >&2; rm -f "$out"
		return 1
	fi
	rm -f "$out"
	# COPT only matters while compiling; install takes the rest.
	local v inst=()
	for v in "$@"; do case $v in COPT=*) ;; *) inst+=("$v") ;; esac; done
	$sudo make -C "$dir" -s install PG_CONFIG="$PG_CONFIG" "${inst[@]}" >/dev/null || {
		echo "make install failed" >&2; return 1; }
}

# ddb_scratch_cluster PORT [OPTION...]: a throwaway cluster for a benchmark
# script (queue.sh, consumer.sh), in the C locale, started on PORT with
# its socket in its directory and the server options given (-c name=value
# ...).  Sets work (the directory: removed at exit, kept with DDB_KEEP=1)
# and psql (a psql command line for its postgres database, to run with
# as_user).  Call ddb_cluster_user first.
ddb_scratch_cluster() {
	local port=$1
	shift
	work=$(mktemp -d)
	chmod 755 "$work"
	[ "$(id -u)" = 0 ] && chown "$RUNAS" "$work"
	trap ddb_scratch_cleanup EXIT
	as_user "'$PGBIN/initdb' -D '$work/data' -A trust -E UTF8 --locale=C" >/dev/null
	as_user "'$PGBIN/pg_ctl' -D '$work/data' -l '$work/log' -o \"-p $port -k '$work' -c listen_addresses='' $*\" start" >/dev/null
	psql="'$PGBIN/psql' -X -q -At -h '$work' -p $port -d postgres"
}
ddb_scratch_cleanup() {
	as_user "'$PGBIN/pg_ctl' -D '$work/data' -m immediate stop" >/dev/null 2>&1 || true
	if [ "${DDB_KEEP:-0}" = 1 ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}

# ddb_cluster_user: sets RUNAS and as_user (runs a shell command line as the
# user who owns clusters).  The command line gets no environment from us:
# put what it needs on the line itself.
ddb_cluster_user() {
	if [ "$(id -u)" = 0 ]; then
		RUNAS=postgres
		id postgres >/dev/null 2>&1 || useradd -r -m postgres
		as_user() { su "$RUNAS" -s /bin/bash -c "$*"; }
	else
		RUNAS=$(id -un)
		as_user() { bash -c "$*"; }
	fi
}
