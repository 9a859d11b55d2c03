# ddb: DynamoDB-style tables for PostgreSQL (PGXS build)

MODULE_big = ddb
OBJS = \
	src/ddb_main.o \
	src/engine/ddb_handler.o \
	src/engine/ddb_shape.o \
	src/engine/ddb_key.o \
	src/engine/ddb_tuple.o \
	src/engine/ddb_tree.o \
	src/engine/ddb_scan.o \
	src/engine/ddb_rowid.o \
	src/engine/ddb_modify.o \
	src/engine/ddb_vacuum.o \
	src/engine/ddb_vismap.o \
	src/engine/ddb_build.o \
	src/engine/ddb_bulk.o \
	src/engine/ddb_verify.o \
	src/engine/ddb_inspect.o \
	src/engine/ddb_wal.o \
	src/model/ddb_types.o \
	src/model/ddb_expr_parse.o \
	src/model/ddb_expr_eval.o \
	src/api/ddb_item.o \
	src/api/ddb_api.o \
	src/api/ddb_query.o \
	src/api/ddb_gsi.o \
	src/api/ddb_json.o \
	src/api/ddb_table.o \
	src/api/ddb_protocol.o \
	src/api/ddb_legacy.o \
	src/api/ddb_ttl.o \
	src/api/ddb_ttl_worker.o \
	src/api/ddb_batch.o \
	src/api/ddb_stream.o \
	src/api/ddb_partiql.o \
	src/planner/ddb_planner.o \
	src/planner/ddb_customscan.o \
	src/http/ddb_http.o \
	src/http/ddb_http_sigv4.o \
	src/http/ddb_http_keys.o

# The HTTP endpoint uses libmicrohttpd (Debian: libmicrohttpd-dev), and
# GnuTLS, its TLS library, to cap what an HTTPS client may send that the
# endpoint does not process (libgnutls28-dev, which libmicrohttpd-dev
# depends on).
SHLIB_LINK += -lmicrohttpd -lgnutls

EXTENSION = ddb
DATA = ddb--0.1.sql ddb--0.1--0.2.sql
PGFILEDESC = "ddb - DynamoDB-style tables for PostgreSQL"

# pg_regress: sql/NAME.sql against expected/NAME.out
REGRESS = extension shape keys tree modify rewrite items items_security search_path types expr_condition expr_update \
	expr_projection expr_key_condition expr_errors model_messages query scan query_cost keyscan scan_batches gsi \
	gsi_verify big_items long_key_updates split_fill split_in_place fillfactor write_records bulk_load api_tables api_items api_query api_legacy names write_path \
	api_indexes http_keys ttl ttl_cost lsi batch transact streams items_built items_in_from item_column old_extension \
	multi_insert reads rowid_map put_item_key unlink partiql leaf_prefix leaf_prefix_shapes leaf_prefix_rows leaf_prefix_long_rows api_listed_errors read_prune catalog_rows vacuum_skip
REGRESS_OPTS = --inputdir=.

# Isolation specs live in test/isolation/{specs,expected}
ISOLATION = insert-conflict update-conflict row-locks vacuum-snapshot write-skew item-api index-drop-lock \
	gsi-concurrent keyscan-epq hot-key-versions hot-key-long-run api-protocol statement-snapshot \
	ttl-sweep lsi-collection transact-conflict transact-get-snapshot stream-order bulk-load \
	multi-insert-race multi-insert-span relcache-inval put-new-key rowid-map-cache cache-forget-drop table-open-drop \
	unlink-reader unlink-reuse-horizon unlink-vs-insert unlink-put rowid-batches stream-sweep-race batch-lock-order batch-serialization \
	lsi-lock-order ttl-key-order stream-enable-wait \
	ttl-sweep-batches ttl-sweep-tables pql-batch-order pql-batch-lsi-order long-key-reader \
	long-key-reader-resplit leaf-prefix-reader long-key-vacuum-full leaf-prefix-relay \
	leaf-prefix-writers scan-resume read-prune read-unlink-reuse verify-privileges vacuum-walk-splits vacuum-stale-map
ISOLATION_OPTS = --inputdir=test/isolation --load-extension=ddb

# TAP tests: test/t/*.pl (they start clusters of their own with initdb, so
# they need an unprivileged user and Perl's IPC::Run; see the end)
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

# ddb's own invariant checks (Debian's server has no assertions): make CHECKS=1
ifeq ($(CHECKS),1)
PG_CPPFLAGS += -DDDB_CHECKS
endif
PG_CPPFLAGS += -I$(srcdir)/src
PG_CFLAGS += -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare \
	-Wno-missing-field-initializers -Wno-clobbered

EXTRA_CLEAN = results output_iso tmp_check regression.diffs regression.out log

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# Calls between ddb's own functions bind inside ddb.so: without these, every
# call to a function of another file (and to a non-static one of the same
# file, which GCC then also cannot inline) went through the PLT, about
# 2,500 call sites, because a -fPIC library's global symbols may be
# interposed.  Nothing interposes them (every symbol ddb exports is
# ddb_*, pg_finfo_*, _PG_init or Pg_magic_func), and PostgreSQL 16 builds
# modules with hidden symbols to the same effect.  Measured with
# test/bench/instructions.sh --cache: 0.4-0.8 % fewer instructions and
# 2-7 % fewer mispredicted branches per statement.
ifeq ($(PORTNAME),linux)
override CFLAGS += -fno-semantic-interposition
SHLIB_LINK += -Wl,-Bsymbolic-functions
endif

# A PostgreSQL built with LZ4 (Debian's is; pg_config.h defines USE_LZ4):
# ddb compresses the right half of a leaf split in its WAL with liblz4
# (Debian: liblz4-dev), as PostgreSQL's wal_compression = lz4 does images.
ifneq ($(shell grep -c '^\#define USE_LZ4 1' $(includedir_server)/pg_config.h 2>/dev/null),0)
SHLIB_LINK += -llz4
endif

# `make installcheck` runs the regression and isolation suites against the
# running server (PGHOST, PGPORT, PGUSER), then the TAP tests.  initdb
# refuses to run as root, so root skips the TAP tests and says where they
# run; anyone else without IPC::Run is told what to install, before
# anything runs.
ifneq ($(TAP_TESTS),)
ifeq ($(shell id -u),0)
prove_installcheck = @echo "TAP tests (test/t) skipped: initdb refuses to run as root.  Run \"make installcheck\" as an unprivileged user, or \"bash test/run.sh tap\", which runs them as the postgres user."
else
installcheck: ddb-tap-prerequisites
endif
endif

.PHONY: ddb-tap-prerequisites
ddb-tap-prerequisites:
	@perl -MIPC::Run -e1 2>/dev/null || { echo "The TAP tests (test/t) need Perl's IPC::Run: install libipc-run-perl, or run \"make installcheck TAP_TESTS=\" for the rest." >&2; exit 1; }
