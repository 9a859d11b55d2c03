/*-------------------------------------------------------------------------
 *
 * ddb_ttl_worker.c
 *	  The TTL background worker: deletes expired items of every TTL-enabled
 *	  table in every database that has ddb, every ddb.ttl_interval.
 *
 * With shared_preload_libraries = 'ddb' (and ddb.ttl_interval > 0) the
 * postmaster starts one launcher.  It connects to no database (as the
 * autovacuum launcher does: it reads only the shared catalog pg_database),
 * and each interval starts one short-lived worker per database that
 * accepts connections and is no template, one at a time, waiting for each
 * to finish, so at
 * most two of max_worker_processes' slots are ever used.  A database
 * worker connects as the bootstrap superuser, returns at once where ddb is
 * not installed (or not yet at the version with TTL), and otherwise sweeps
 * each TTL-enabled table (ddb_ttl_sweep_table) in transactions of one batch
 * each, so a sweep holds no long transaction and an error in one table
 * (logged) ends only that worker's round.
 *
 * ddb.ttl_interval bounds how long an expired item stays (plus the time a
 * round takes); 0 stops the sweeps.  Without preloading, ddb_ttl_sweep()
 * does the same from SQL (pg_cron).  Each round also runs the streams'
 * retention sweep (ddb_stream_sweep_all: records older than
 * ddb.stream_retention), whose cost is proportional to what expires, so a
 * round over streams with nothing to trim costs a few index probes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_database.h"
#include "commands/extension.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "ddb.h"
#include "api/ddb_ops.h"

PGDLLEXPORT void ddb_ttl_launcher_main(Datum arg);
PGDLLEXPORT void ddb_ttl_db_worker_main(Datum arg);

/* Items one transaction of the worker deletes. */
#define DDB_TTL_WORKER_BATCH	500

static int	ttl_interval = 5;	/* seconds; 0 = off */

/*
 * Defines ddb.ttl_interval and, when the library is preloaded, registers
 * the launcher.  Runs in _PG_init before the ddb. prefix is reserved.
 */
void
ddb_ttl_worker_init(void)
{
	BackgroundWorker worker;

	DefineCustomIntVariable("ddb.ttl_interval",
							"Seconds between the TTL worker's sweeps of expired items (0 = none).",
							"Needs shared_preload_libraries = 'ddb'; without it, schedule ddb_ttl_sweep().",
							&ttl_interval, 5, 0, 86400,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	if (!process_shared_preload_libraries_in_progress)
		return;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	/* deletions: only on a primary */
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 10;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "ddb");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "ddb_ttl_launcher_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "ddb ttl launcher");
	snprintf(worker.bgw_type, BGW_MAXLEN, "ddb ttl launcher");
	RegisterBackgroundWorker(&worker);
}

/* The databases that accept connections (autovacuum's get_database_list). */
static List *
database_list(void)
{
	List	   *dbs = NIL;
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;
	MemoryContext caller = CurrentMemoryContext;

	StartTransactionCommand();
	(void) GetTransactionSnapshot();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while (HeapTupleIsValid(tup = heap_getnext(scan, ForwardScanDirection)))
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tup);
		MemoryContext old;

		/* templates: a connection there would delay CREATE DATABASE */
		if (!db->datallowconn || db->datistemplate)
			continue;
		old = MemoryContextSwitchTo(caller);
		dbs = lappend_oid(dbs, db->oid);
		MemoryContextSwitchTo(old);
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();
	return dbs;
}

/* Run one database's round in a worker of its own and wait for it. */
static void
run_database(Oid dboid)
{
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;
	pid_t		pid;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "ddb");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "ddb_ttl_db_worker_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "ddb ttl worker for database %u", dboid);
	snprintf(worker.bgw_type, BGW_MAXLEN, "ddb ttl worker");
	worker.bgw_main_arg = ObjectIdGetDatum(dboid);
	worker.bgw_notify_pid = MyProcPid;
	if (!RegisterDynamicBackgroundWorker(&worker, &handle))
	{
		ereport(LOG,
				(errmsg("ddb ttl launcher could not start a worker for database %u", dboid),
				 errhint("Raise max_worker_processes.")));
		return;
	}
	if (WaitForBackgroundWorkerStartup(handle, &pid) != BGWH_STARTED)
		return;
	(void) WaitForBackgroundWorkerShutdown(handle);
	pfree(handle);
}

void
ddb_ttl_launcher_main(Datum arg)
{
	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	for (;;)
	{
		TimestampTz start = GetCurrentTimestamp();
		long		elapsed_ms;
		long		wait_ms;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (ttl_interval > 0)
		{
			List	   *dbs = database_list();
			ListCell   *lc;

			foreach(lc, dbs)
			{
				CHECK_FOR_INTERRUPTS();
				run_database(lfirst_oid(lc));
			}
			list_free(dbs);
		}
		elapsed_ms = (long) ((GetCurrentTimestamp() - start) / 1000);
		wait_ms = (ttl_interval > 0 ? ttl_interval * 1000L : 60000L) - elapsed_ms;
		if (wait_ms < 100)
			wait_ms = 100;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 wait_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

/* Is ddb installed here, at a version with TTL (its catalog has "kind")? */
static bool
ddb_has_ttl(void)
{
	Oid			nsp;
	Oid			gsi;

	if (!OidIsValid(get_extension_oid("ddb", true)))
		return false;
	nsp = get_namespace_oid("ddb_internal", true);
	if (!OidIsValid(nsp))
		return false;
	gsi = get_relname_relid("gsi", nsp);
	return OidIsValid(gsi) && get_attnum(gsi, "kind") != InvalidAttrNumber;
}

/* Is ddb installed here, at a version with streams? */
static bool
ddb_has_streams(void)
{
	Oid			nsp;

	if (!OidIsValid(get_extension_oid("ddb", true)))
		return false;
	nsp = get_namespace_oid("ddb_internal", true);
	return OidIsValid(nsp) && OidIsValid(get_relname_relid("stream_records", nsp));
}

void
ddb_ttl_db_worker_main(Datum arg)
{
	Oid			dboid = DatumGetObjectId(arg);
	List	   *tables;
	ListCell   *lc;
	bool		has_ttl;
	int64		total = 0;

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);
	/* a superuser's SQL: nothing of public's (see ddb_run_as_begin) */
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_SUSET, PGC_S_OVERRIDE);

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	has_ttl = ddb_has_ttl();
	tables = NIL;
	if (has_ttl)
	{
		List	   *t = ddb_ttl_tables();
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		/* the list outlives this transaction */
		tables = list_copy(t);
		MemoryContextSwitchTo(old);
	}
	PopActiveSnapshot();
	CommitTransactionCommand();

	foreach(lc, tables)
	{
		Oid			relid = lfirst_oid(lc);
		bool		more = true;

		while (more)
		{
			Relation	rel;

			CHECK_FOR_INTERRUPTS();
			StartTransactionCommand();
			PushActiveSnapshot(GetTransactionSnapshot());
			pgstat_report_activity(STATE_RUNNING, "ddb ttl sweep");
			rel = try_relation_open(relid, RowExclusiveLock);
			more = false;
			if (rel != NULL)
			{
				total += ddb_ttl_sweep_table(rel, DDB_TTL_WORKER_BATCH, &more);
				relation_close(rel, NoLock);
			}
			PopActiveSnapshot();
			CommitTransactionCommand();
		}
	}

	/* and the streams' retention (ddb.stream_retention), in one transaction */
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	if (ddb_has_streams())
	{
		pgstat_report_activity(STATE_RUNNING, "ddb stream retention sweep");
		(void) ddb_stream_sweep_all();
	}
	PopActiveSnapshot();
	CommitTransactionCommand();

	pgstat_report_activity(STATE_IDLE, NULL);
	if (total > 0)
		ereport(DEBUG1, (errmsg("ddb ttl worker deleted " INT64_FORMAT " expired items", total)));
	pgstat_report_stat(true);
	proc_exit(0);
}
