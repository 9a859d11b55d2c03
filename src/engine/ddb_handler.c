/*-------------------------------------------------------------------------
 *
 * ddb_handler.c
 *	  The ddb table access method handler: glue between PostgreSQL's
 *	  executor and the ddb storage engine.
 *
 * Every slot of TableAmRoutine is filled (Debian's server has no
 * assertions, so a NULL callback would crash the backend).  Callbacks that a
 * later stage of the engine implements answer with a clear error naming the
 * statement that is not supported yet, never with a crash.  The engine lives
 * below this file (ddb_tree.c, ddb_scan.c, ddb_tuple.c) and knows nothing of
 * the executor.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/heaptoast.h"
#include "access/multixact.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_am_d.h"
#include "catalog/storage.h"
#include "catalog/storage_xlog.h"
#include "commands/vacuum.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "optimizer/plancat.h"
#include "parser/analyze.h"
#include "parser/parsetree.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/predicate.h"
#include "storage/smgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/rel.h"

#include "ddb.h"


PG_FUNCTION_INFO_V1(ddb_tableam_handler);

static get_relation_info_hook_type prev_get_relation_info_hook = NULL;
static post_parse_analyze_hook_type prev_post_parse_analyze_hook = NULL;
static ExecutorStart_hook_type prev_executor_start_hook = NULL;

/*
 * The scan descriptor of a sequential scan: a forward range scan over the
 * whole key space, i.e. every item in hash order.
 */
typedef struct DdbScanDescData
{
	TableScanDescData base;
	DdbRangeScan range;
	Buffer		abuf;			/* ANALYZE: the sampled leaf, share-locked */
	OffsetNumber aoff;			/* ANALYZE: next offset on it */

	/* a SCROLL cursor's position, for a change of direction */
	bool		started;		/* a row was asked for since the (re)start */
	bool		forward;		/* direction of the range scan */
	bool		exhausted;		/* ran off the end in that direction */
	bool		have_pos;		/* a row was returned: lasttid */
	ItemPointerData lasttid;	/* the row returned last */

	/* TID scans: the metapage's next_rowid, read at the first TID checked */
	bool		have_rowid_end;
	uint64		rowid_end;
} DdbScanDescData;
typedef DdbScanDescData *DdbScanDesc;

static void ddb_not_supported(const char *what) pg_attribute_noreturn();
static void ddb_tablesample_refuse(void) pg_attribute_noreturn();

static void
ddb_not_supported(const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s is not supported on ddb tables yet", what)));
}

/* TABLESAMPLE: refused when the scan begins, which comes first */
static void
ddb_tablesample_refuse(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("TABLESAMPLE is not supported on ddb tables"),
			 errhint("Use ddb_scan() with segment and total_segments to read a hash-range slice of the table.")));
}

/* ------------------------------------------------------------------------
 * Slot related callbacks
 * ------------------------------------------------------------------------
 */

/*
 * Tuples handed to the executor are self-contained heap tuples of the table's
 * row type (keys decoded from the tree key, item from the leaf), so a plain
 * heap-tuple slot fits and system columns (ctid, xmin, ...) work.
 */
static const TupleTableSlotOps *
ddb_slot_callbacks(Relation relation)
{
	return &TTSOpsHeapTuple;
}

/* ------------------------------------------------------------------------
 * Sequential scan
 * ------------------------------------------------------------------------
 */

static TableScanDesc
ddb_scan_begin(Relation rel, Snapshot snapshot, int nkeys, ScanKey key,
			   ParallelTableScanDesc pscan, uint32 flags)
{
	DdbScanDesc scan;
	DdbRange	all = {0};

	if (pscan != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("parallel scans of ddb tables are not supported")));
	if (flags & SO_TYPE_SAMPLESCAN)
		ddb_tablesample_refuse();
	if (flags & (SO_TYPE_BITMAPSCAN | SO_TYPE_TIDRANGESCAN))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("this kind of scan is not supported on ddb tables"),
				 errhint("Query by key with ddb_query(), or scan the whole table.")));

	scan = palloc0(sizeof(DdbScanDescData));
	scan->base.rs_rd = rel;
	scan->base.rs_snapshot = snapshot;
	scan->base.rs_nkeys = nkeys;
	scan->base.rs_key = key;
	scan->base.rs_flags = flags;
	scan->base.rs_parallel = NULL;

	if (flags & SO_TYPE_SEQSCAN)
		scan->range = ddb_range_begin(rel, snapshot, &all, true);
	scan->abuf = InvalidBuffer;

	if (flags & SO_TYPE_SEQSCAN)
		pgstat_count_heap_scan(rel);

	return (TableScanDesc) scan;
}

static void
ddb_scan_end(TableScanDesc sscan)
{
	DdbScanDesc scan = (DdbScanDesc) sscan;

	if (scan->range)
		ddb_range_end(scan->range);
	if (BufferIsValid(scan->abuf))
		UnlockReleaseBuffer(scan->abuf);
	if (scan->base.rs_flags & SO_TEMP_SNAPSHOT)
		UnregisterSnapshot(scan->base.rs_snapshot);
	pfree(scan);
}

static void
ddb_scan_rescan(TableScanDesc sscan, ScanKey key, bool set_params,
				bool allow_strat, bool allow_sync, bool allow_pagemode)
{
	DdbScanDesc scan = (DdbScanDesc) sscan;
	DdbRange	all = {0};

	if (scan->range)
		ddb_range_rescan(scan->range, &all, true);
	scan->started = false;
	scan->have_rowid_end = false;
}

/*
 * A SCROLL cursor changes direction: read on from the row returned last, in
 * the new direction, as heap does -- from the row after it (before it), or,
 * when the scan had run off the end, from that row itself.  The position is
 * kept as the row's TID, which costs nothing per row; its key is read back
 * only here.  The version stays where the map finds it: the scan's snapshot
 * sees it, so nothing prunes it.
 */
static void
seq_change_direction(DdbScanDesc scan, bool forward)
{
	Relation	rel = scan->base.rs_rd;
	DdbRange	r = {0};
	StringInfoData key;
	StringInfoData succ;
	HeapTuple	tup;
	bool		visible;
	Datum		values[DDB_MAX_KEY_COLUMNS];
	bool		isnull[DDB_MAX_KEY_COLUMNS];
	const DdbKeyInfo *ki;

	if (!scan->have_pos)
	{
		/* nothing was returned: start over from the new direction's end */
		scan->started = false;
		return;
	}

	tup = ddb_fetch_version(rel, &scan->lasttid, SnapshotAny, &visible);
	if (tup == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg_internal("ddb table \"%s\" lost the version (%u,%u) a scan returned",
								 RelationGetRelationName(rel),
								 ItemPointerGetBlockNumberNoCheck(&scan->lasttid),
								 ItemPointerGetOffsetNumberNoCheck(&scan->lasttid))));
	ki = ddb_get_keyinfo(rel);
	for (int k = 0; k < ki->nkeys; k++)
		values[k] = heap_getattr(tup, ki->keyattno[k], RelationGetDescr(rel), &isnull[k]);
	initStringInfo(&key);
	initStringInfo(&succ);
	ddb_encode_key(ki, values, isnull, &key);

	if (forward == scan->exhausted)
	{
		/* forward after running off the start: from the row itself */
		/* backward in the middle: below the row */
		if (forward)
			r.lo = key.data, r.lolen = key.len;
		else
			r.hi = key.data, r.hilen = key.len;
	}
	else if (forward)
	{
		/* forward in the middle: after the row */
		if (ddb_key_successor(key.data, key.len, &succ))
			r.lo = succ.data, r.lolen = succ.len;
		else
			r.lo = r.hi = key.data, r.lolen = r.hilen = key.len;	/* empty */
	}
	else
	{
		/* backward after running off the end: from the row itself */
		if (ddb_key_successor(key.data, key.len, &succ))
			r.hi = succ.data, r.hilen = succ.len;
	}
	ddb_range_rescan(scan->range, &r, forward);
	scan->forward = forward;
	scan->exhausted = false;
	heap_freetuple(tup);
	pfree(key.data);
	pfree(succ.data);
}

static bool
ddb_scan_getnextslot(TableScanDesc sscan, ScanDirection direction,
					 TupleTableSlot *slot)
{
	DdbScanDesc scan = (DdbScanDesc) sscan;
	HeapTuple	tuple;
	bool		forward = !ScanDirectionIsBackward(direction);

	if (scan->started && forward != scan->forward)
		seq_change_direction(scan, forward);
	if (!scan->started)
	{
		DdbRange	all = {0};

		/* begin and rescan set up a forward scan of everything */
		if (!forward)
			ddb_range_rescan(scan->range, &all, false);
		scan->started = true;
		scan->forward = forward;
		scan->exhausted = false;
		scan->have_pos = false;
	}

	tuple = ddb_range_next(scan->range);
	if (tuple == NULL)
	{
		scan->exhausted = true;
		ExecClearTuple(slot);
		return false;
	}
	pgstat_count_heap_getnext(scan->base.rs_rd);
	ExecStoreHeapTuple(tuple, slot, false);
	scan->lasttid = tuple->t_self;
	scan->have_pos = true;
	return true;
}

/* ------------------------------------------------------------------------
 * Parallel scans: kept away by the planner hook below; these exist so that
 * no path can reach a NULL callback.
 * ------------------------------------------------------------------------
 */

static Size
ddb_parallelscan_estimate(Relation rel)
{
	return sizeof(ParallelTableScanDescData);
}

static Size
ddb_parallelscan_initialize(Relation rel, ParallelTableScanDesc pscan)
{
	pscan->phs_syncscan = false;
	return sizeof(ParallelTableScanDescData);
}

static void
ddb_parallelscan_reinitialize(Relation rel, ParallelTableScanDesc pscan)
{
}

const TableAmRoutine *ddb_routine(void);

/*
 * Keep parallel plans away from ddb tables: zero workers means the planner
 * builds no partial paths for them.  Any relation stored by ddb, not only
 * the tables ddb_is_ddb_relation names: a materialized view USING ddb is
 * scanned by the same callbacks, which refuse a parallel scan.
 */
static void
ddb_get_relation_info(PlannerInfo *root, Oid relationObjectId, bool inhparent,
					  RelOptInfo *rel)
{
	if (prev_get_relation_info_hook)
		prev_get_relation_info_hook(root, relationObjectId, inhparent, rel);

	if (rel->reloptkind == RELOPT_BASEREL || rel->reloptkind == RELOPT_OTHER_MEMBER_REL)
	{
		Relation	r = RelationIdGetRelation(relationObjectId);

		if (RelationIsValid(r))
		{
			if (r->rd_tableam == ddb_routine())
				rel->rel_parallel_workers = 0;
			RelationClose(r);
		}
	}
}

/* ------------------------------------------------------------------------
 * Index scan callbacks: secondary PostgreSQL indexes are refused at CREATE
 * INDEX, so these are unreachable; they error rather than crash.
 * ------------------------------------------------------------------------
 */

static IndexFetchTableData *
ddb_index_fetch_begin(Relation rel)
{
	ddb_not_supported("fetching by TID");
}

static void
ddb_index_fetch_reset(IndexFetchTableData *scan)
{
}

static void
ddb_index_fetch_end(IndexFetchTableData *scan)
{
}

static bool
ddb_index_fetch_tuple(struct IndexFetchTableData *scan, ItemPointer tid,
					  Snapshot snapshot, TupleTableSlot *slot,
					  bool *call_again, bool *all_dead)
{
	ddb_not_supported("fetching by TID");
}

/* ------------------------------------------------------------------------
 * Callbacks for non-modifying operations on individual tuples
 * ------------------------------------------------------------------------
 */

/* Fetch the version named by tid if visible to snapshot (resolves the TID). */
static bool
ddb_fetch_row_version(Relation relation, ItemPointer tid, Snapshot snapshot,
					  TupleTableSlot *slot)
{
	bool		visible;
	HeapTuple	tuple = ddb_fetch_version(relation, tid, snapshot, &visible);

	if (tuple == NULL || !visible)
	{
		if (tuple)
			heap_freetuple(tuple);
		return false;
	}
	slot->tts_tableOid = RelationGetRelid(relation);
	ExecStoreHeapTuple(tuple, slot, true);
	slot->tts_tid = *tid;
	return true;
}

/*
 * Could tid name a version?  Only a row id below the metapage's counter has
 * ever been handed out, as heap accepts only blocks below the size it read
 * when the scan began: TID scans skip the rest, and currtid2 reports them
 * as not valid.  The counter is read once per scan (and rescan), at the
 * first TID checked: every version the scan's snapshot can see got its row
 * id before that.  An offset past DDB_ROWIDS_PER_BLOCK is refused too: it
 * would alias another block's row id.
 */
static bool
ddb_tuple_tid_valid(TableScanDesc sscan, ItemPointer tid)
{
	DdbScanDesc scan = (DdbScanDesc) sscan;

	if (!ItemPointerIsValid(tid) ||
		ItemPointerGetOffsetNumberNoCheck(tid) > DDB_ROWIDS_PER_BLOCK)
		return false;
	if (!scan->have_rowid_end)
	{
		scan->rowid_end = ddb_rowid_end(sscan->rs_rd);
		scan->have_rowid_end = true;
	}
	return ddb_tid_to_rowid(tid) < scan->rowid_end;
}

/*
 * Follow the update chain from tid to the newest version visible to the
 * scan's snapshot, as heap_get_latest_tid does.
 */
static void
ddb_get_latest_tid(TableScanDesc sscan, ItemPointer tid)
{
	Relation	rel = sscan->rs_rd;
	Snapshot	snapshot = sscan->rs_snapshot;
	ItemPointerData ctid = *tid;
	TransactionId priorXmax = InvalidTransactionId;

	for (;;)
	{
		bool		visible;
		HeapTuple	tup = ddb_fetch_version(rel, &ctid, snapshot, &visible);

		if (tup == NULL)
			return;
		if (TransactionIdIsValid(priorXmax) &&
			!TransactionIdEquals(priorXmax, HeapTupleHeaderGetXmin(tup->t_data)))
			return;
		if (visible)
			*tid = ctid;
		if ((tup->t_data->t_infomask & HEAP_XMAX_INVALID) ||
			HeapTupleHeaderIsOnlyLocked(tup->t_data) ||
			HeapTupleHeaderIndicatesMovedPartitions(tup->t_data) ||
			ItemPointerEquals(&ctid, &tup->t_data->t_ctid))
			return;
		ctid = tup->t_data->t_ctid;
		priorXmax = HeapTupleHeaderGetUpdateXid(tup->t_data);
		heap_freetuple(tup);
	}
}

static bool
ddb_tuple_satisfies_snapshot(Relation rel, TupleTableSlot *slot,
							 Snapshot snapshot)
{
	bool		visible;
	HeapTuple	tup = ddb_fetch_version(rel, &slot->tts_tid, snapshot, &visible);

	if (tup == NULL)
		return false;
	heap_freetuple(tup);
	return visible;
}

static TransactionId
ddb_index_delete_tuples(Relation rel, TM_IndexDeleteOp *delstate)
{
	ddb_not_supported("index tuple deletion");
}

/* ------------------------------------------------------------------------
 * Manipulations of physical tuples
 * ------------------------------------------------------------------------
 */

/*
 * The executor's slot holds the row as the statement formed it, not the
 * stored version: a heap tuple whose header is heap_form_tuple's
 * composite-datum header (its length, type id and typmod where xmin, cmin
 * and xmax are).  heap_insert and heap_update write the new version's
 * header into that very tuple, which is how RETURNING xmin, xmax and cmin
 * (and anything else that reads the slot's system columns) see the
 * version; do the same.  The slot is made to own its tuple first, as
 * heap's ExecFetchSlotHeapTuple does: it may hold the row of the scan that
 * produced it (INSERT ... SELECT), whose header is that row's.
 */
static void
slot_set_version_header(Relation rel, TupleTableSlot *slot, ItemPointer tid,
						CommandId cid)
{
	HeapTuple	tuple;
	HeapTupleHeader td;

	if (!TTS_IS_HEAPTUPLE(slot))
		return;
	ExecMaterializeSlot(slot);
	tuple = ((HeapTupleTableSlot *) slot)->tuple;
	td = tuple->t_data;
	td->t_infomask &= ~HEAP_XACT_MASK;
	td->t_infomask2 &= ~HEAP2_XACT_MASK;
	td->t_infomask |= HEAP_XMAX_INVALID;
	HeapTupleHeaderSetXmin(td, GetCurrentTransactionId());
	HeapTupleHeaderSetCmin(td, cid);
	HeapTupleHeaderSetXmax(td, InvalidTransactionId);
	td->t_ctid = *tid;
	tuple->t_self = *tid;
	tuple->t_tableOid = RelationGetRelid(rel);
}

static void
ddb_tuple_insert(Relation relation, TupleTableSlot *slot, CommandId cid,
				 int options, BulkInsertState bistate)
{
	StringInfoData key;
	HeapTuple	tuple;
	ItemPointerData tid;

	initStringInfo(&key);
	tuple = ddb_form_stored_tuple(relation, slot, &key);
	ddb_insert_version(relation, key.data, key.len, tuple, cid,
					   DDB_UNIQUE_ERROR, &tid);
	slot_set_version_header(relation, slot, &tid, cid);
	slot->tts_tableOid = RelationGetRelid(relation);
	slot->tts_tid = tid;
	pfree(key.data);
}

static void
ddb_tuple_insert_speculative(Relation relation, TupleTableSlot *slot,
							 CommandId cid, int options,
							 BulkInsertState bistate, uint32 specToken)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("INSERT ... ON CONFLICT is not supported on ddb tables yet"),
			 errhint("Use ddb_put_item(), which replaces an existing item.")));
}

static void
ddb_tuple_complete_speculative(Relation relation, TupleTableSlot *slot,
							   uint32 specToken, bool succeeded)
{
	ddb_not_supported("INSERT ... ON CONFLICT");
}

/* ddb_multi_insert's: a batch's stored tuples and keys */
static DdbScratch rows_scratch = {NULL, "ddb row batch", 1024 * 1024};

static void
ddb_multi_insert(Relation relation, TupleTableSlot **slots, int ntuples,
				 CommandId cid, int options, BulkInsertState bistate)
{
	/* into a table without insert triggers: spooled (ddb_bulk.c) */
	DdbNewVersion *versions;
	MemoryContext cxt;
	MemoryContext old;

	if (ddb_bulk_multi_insert(relation, slots, ntuples, cid, options))
		return;

	/*
	 * otherwise: all at once, one descent and one WAL record per leaf, in
	 * memory kept from batch to batch (see ddb_scratch_enter)
	 */
	cxt = ddb_scratch_enter(&rows_scratch);
	old = MemoryContextSwitchTo(cxt);
	versions = palloc(sizeof(DdbNewVersion) * ntuples);
	for (int i = 0; i < ntuples; i++)
	{
		StringInfoData key;

		/* a key is tens of bytes: not initStringInfo's kilobyte each */
		key.maxlen = 64;
		key.data = palloc(key.maxlen);
		resetStringInfo(&key);
		versions[i].tuple = ddb_form_stored_tuple(relation, slots[i], &key);
		versions[i].key = key.data;
		versions[i].keylen = key.len;
	}
	ddb_insert_versions(relation, versions, ntuples, cid, DDB_UNIQUE_ERROR,
						(options & TABLE_INSERT_FROZEN) != 0);
	for (int i = 0; i < ntuples; i++)
	{
		slots[i]->tts_tableOid = RelationGetRelid(relation);
		slots[i]->tts_tid = versions[i].tid;
	}
	MemoryContextSwitchTo(old);
	ddb_scratch_leave(&rows_scratch, cxt);
}

static TM_Result
ddb_tuple_delete(Relation relation, ItemPointer tid, CommandId cid,
				 Snapshot snapshot, Snapshot crosscheck, bool wait,
				 TM_FailureData *tmfd, bool changingPart)
{
	return ddb_delete_version(relation, tid, cid, crosscheck, wait, tmfd,
							  changingPart);
}

static TM_Result
ddb_tuple_update(Relation relation, ItemPointer otid, TupleTableSlot *slot,
				 CommandId cid, Snapshot snapshot, Snapshot crosscheck,
				 bool wait, TM_FailureData *tmfd,
				 LockTupleMode *lockmode, bool *update_indexes)
{
	StringInfoData key;
	HeapTuple	tuple;
	ItemPointerData newtid;
	TM_Result	result;

	initStringInfo(&key);
	tuple = ddb_form_stored_tuple(relation, slot, &key);
	result = ddb_update_version(relation, otid, tuple, key.data, key.len, cid,
								crosscheck, wait, tmfd, &newtid);
	if (result == TM_Ok)
	{
		slot_set_version_header(relation, slot, &newtid, cid);
		slot->tts_tableOid = RelationGetRelid(relation);
		slot->tts_tid = newtid;
	}
	/* every modification is exclusive (see ddb_modify.c) */
	*lockmode = LockTupleExclusive;
	*update_indexes = false;
	pfree(key.data);
	return result;
}

/*
 * Row locks, following heapam_tuple_lock: lock the version, and with
 * TUPLE_LOCK_FLAG_FIND_LAST_VERSION chase the update chain to the newest
 * version (EvalPlanQual in READ COMMITTED).
 */
static TM_Result
ddb_tuple_lock(Relation relation, ItemPointer tid, Snapshot snapshot,
			   TupleTableSlot *slot, CommandId cid, LockTupleMode mode,
			   LockWaitPolicy wait_policy, uint8 flags,
			   TM_FailureData *tmfd)
{
	TM_Result	result;
	HeapTuple	tuple;

	tmfd->traversed = false;

retry:
	result = ddb_lock_version(relation, tid, cid, wait_policy, tmfd, &tuple);

	if (result == TM_Updated && (flags & TUPLE_LOCK_FLAG_FIND_LAST_VERSION))
	{
		SnapshotData dirty;
		TransactionId priorXmax;

		if (tuple)
			heap_freetuple(tuple);
		if (ItemPointerEquals(&tmfd->ctid, tid))
			return TM_Deleted;
		*tid = tmfd->ctid;
		priorXmax = tmfd->xmax;
		tmfd->traversed = true;
		InitDirtySnapshot(dirty);
		for (;;)
		{
			bool		visible;
			HeapTuple	next;

			if (ItemPointerIndicatesMovedPartitions(tid))
				ereport(ERROR,
						(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
						 errmsg("tuple to be locked was already moved to another partition due to concurrent update")));
			next = ddb_fetch_version(relation, tid, &dirty, &visible);
			if (next == NULL ||
				!TransactionIdEquals(HeapTupleHeaderGetXmin(next->t_data), priorXmax))
				return TM_Deleted;
			if (visible)
			{
				if (TransactionIdIsValid(dirty.xmin))
					ereport(ERROR,
							(errcode(ERRCODE_DATA_CORRUPTED),
							 errmsg_internal("t_xmin %u is uncommitted in a row version to be updated in table \"%s\"",
											 dirty.xmin, RelationGetRelationName(relation))));
				if (TransactionIdIsValid(dirty.xmax))
				{
					/* being updated: wait for it, then look again */
					switch (wait_policy)
					{
						case LockWaitBlock:
							XactLockTableWait(dirty.xmax, relation, tid, XLTW_FetchUpdated);
							break;
						case LockWaitSkip:
							if (!ConditionalXactLockTableWait(dirty.xmax))
								return TM_WouldBlock;
							break;
						case LockWaitError:
							if (!ConditionalXactLockTableWait(dirty.xmax))
								ereport(ERROR,
										(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
										 errmsg("could not obtain lock on row in relation \"%s\"",
												RelationGetRelationName(relation))));
							break;
					}
					heap_freetuple(next);
					continue;
				}
				if (TransactionIdIsCurrentTransactionId(priorXmax) &&
					HeapTupleHeaderGetCmin(next->t_data) >= cid)
				{
					tmfd->xmax = priorXmax;
					tmfd->cmax = HeapTupleHeaderGetCmin(next->t_data);
					heap_freetuple(next);
					return TM_SelfModified;
				}
				heap_freetuple(next);
				goto retry;
			}
			/* updated or deleted by a committed or our own transaction */
			if (ItemPointerEquals(tid, &next->t_data->t_ctid) ||
				HeapTupleHeaderIsOnlyLocked(next->t_data))
			{
				heap_freetuple(next);
				return TM_Deleted;
			}
			*tid = next->t_data->t_ctid;
			priorXmax = HeapTupleHeaderGetUpdateXid(next->t_data);
			heap_freetuple(next);
		}
	}

	if (tuple)
	{
		slot->tts_tableOid = RelationGetRelid(relation);
		ExecStoreHeapTuple(tuple, slot, true);
		slot->tts_tid = *tid;
	}
	return result;
}

/*
 * End of a bulk insert.  A COPY that spooled its rows builds the tree, or
 * inserts them in key order, now (ddb_bulk.c).  Table rewrites (ALTER
 * TABLE rewrites, SET ACCESS METHOD, REFRESH MATERIALIZED VIEW) fill a
 * transient relation, swap its file into the target and drop the transient
 * relation, all before commit: the deferred row-id map entries recorded
 * under the transient relation would be dropped at commit with it
 * (flush_pending cannot open it), and the rows could be read but never
 * updated or deleted.  Write them now, into the file that becomes the
 * table's.
 */
static void
ddb_finish_bulk_insert(Relation relation, int options)
{
	ddb_bulk_finish(relation);
	ddb_map_flush(relation);
}

/* ------------------------------------------------------------------------
 * DDL related callbacks
 * ------------------------------------------------------------------------
 */

/*
 * Create the storage for a new relfilenode.  The tree itself (metapage and
 * an empty root leaf) is created lazily by the first insert, so a freshly
 * created, truncated or rewritten table is simply an empty fork.
 */
static void
ddb_relation_set_new_filenode(Relation rel, const RelFileNode *newrnode,
							  char persistence, TransactionId *freezeXid,
							  MultiXactId *minmulti)
{
	SMgrRelation srel;

	/* Same horizons as heap: no older xact can have written to it. */
	*freezeXid = RecentXmin;
	*minmulti = GetOldestMultiXactId();

	srel = RelationCreateStorage(*newrnode, persistence, true);

	/*
	 * An unlogged table needs an init fork; an empty one resets the table to
	 * "no tree yet", which the lazy initialization handles.
	 */
	if (persistence == RELPERSISTENCE_UNLOGGED)
	{
		smgrcreate(srel, INIT_FORKNUM, false);
		log_smgrcreate(newrnode, INIT_FORKNUM);
		smgrimmedsync(srel, INIT_FORKNUM);
	}
	smgrclose(srel);

	/* Our cached row-id batch and init flag belong to the old file. */
	ddb_reset_relcache(rel, false);
}

static void
ddb_relation_nontransactional_truncate(Relation rel)
{
	RelationTruncate(rel, 0);
	ddb_reset_relcache(rel, true);
	ddb_forget_unlinked(rel);
	ddb_forget_versions_seen(rel);
}

/*
 * ALTER TABLE ... SET TABLESPACE: copy every fork block by block, as heap
 * does.  Row ids are stored in the pages, so they stay valid.
 */
static void
ddb_relation_copy_data(Relation rel, const RelFileNode *newrnode)
{
	SMgrRelation dstrel;

	/*
	 * Deferred row-id map entries are kept by file, and the old file is
	 * about to be dropped: write them into it first, so the copy carries
	 * them (rows inserted earlier in this transaction, e.g. before SET
	 * TABLESPACE).
	 */
	ddb_map_flush(rel);

	dstrel = smgropen(*newrnode, rel->rd_backend);
	FlushRelationBuffers(rel);
	RelationCreateStorage(*newrnode, rel->rd_rel->relpersistence, true);
	RelationCopyStorage(RelationGetSmgr(rel), dstrel, MAIN_FORKNUM,
						rel->rd_rel->relpersistence);
	for (ForkNumber forkNum = MAIN_FORKNUM + 1; forkNum <= MAX_FORKNUM; forkNum++)
	{
		if (smgrexists(RelationGetSmgr(rel), forkNum))
		{
			smgrcreate(dstrel, forkNum, false);
			if (RelationIsPermanent(rel) ||
				(rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED &&
				 forkNum == INIT_FORKNUM))
				log_smgrcreate(newrnode, forkNum);
			RelationCopyStorage(RelationGetSmgr(rel), dstrel, forkNum,
								rel->rd_rel->relpersistence);
		}
	}
	RelationDropStorage(rel);
	smgrclose(dstrel);
}

static void
ddb_relation_copy_for_cluster(Relation OldTable, Relation NewTable,
							  Relation OldIndex, bool use_sort,
							  TransactionId OldestXmin,
							  TransactionId *xid_cutoff,
							  MultiXactId *multi_cutoff,
							  double *num_tuples,
							  double *tups_vacuumed,
							  double *tups_recently_dead)
{
	/*
	 * The copy keeps every version's xids unfrozen, so the new table's
	 * relfrozenxid/relminmxid stay the old ones (cluster.c lets the AM say so).
	 */
	*xid_cutoff = OldTable->rd_rel->relfrozenxid;
	*multi_cutoff = OldTable->rd_rel->relminmxid;
	ddb_copy_for_cluster(OldTable, NewTable, OldestXmin, num_tuples,
						 tups_vacuumed, tups_recently_dead);
}

static void
ddb_relation_vacuum(Relation rel, VacuumParams *params,
					BufferAccessStrategy bstrategy)
{
	ddb_vacuum_rel(rel, params, bstrategy);
}

static bool
ddb_scan_analyze_next_block(TableScanDesc sscan, BlockNumber blockno,
							BufferAccessStrategy bstrategy)
{
	DdbScanDesc scan = (DdbScanDesc) sscan;

	if (BufferIsValid(scan->abuf))
		UnlockReleaseBuffer(scan->abuf);
	scan->abuf = InvalidBuffer;
	return ddb_analyze_next_block(sscan->rs_rd, blockno, bstrategy,
								  &scan->abuf, &scan->aoff);
}

static bool
ddb_scan_analyze_next_tuple(TableScanDesc sscan, TransactionId OldestXmin,
							double *liverows, double *deadrows,
							TupleTableSlot *slot)
{
	DdbScanDesc scan = (DdbScanDesc) sscan;
	HeapTuple	tuple;

	if (!BufferIsValid(scan->abuf))
		return false;
	tuple = ddb_analyze_next_tuple(sscan->rs_rd, &scan->abuf, &scan->aoff,
								   OldestXmin, liverows, deadrows);
	if (tuple == NULL)
	{
		ExecClearTuple(slot);
		return false;
	}
	ExecStoreHeapTuple(tuple, slot, true);
	return true;
}

static double
ddb_index_build_range_scan(Relation tableRelation, Relation indexRelation,
						   IndexInfo *indexInfo, bool allow_sync,
						   bool anyvisible, bool progress,
						   BlockNumber start_blockno, BlockNumber numblocks,
						   IndexBuildCallback callback, void *callback_state,
						   TableScanDesc scan)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("PostgreSQL indexes on ddb tables are not supported"),
			 errdetail("A ddb table is itself ordered by its key."),
			 errhint("Query by key, or create a global secondary index with ddb_create_gsi().")));
}

static void
ddb_index_validate_scan(Relation tableRelation, Relation indexRelation,
						IndexInfo *indexInfo, Snapshot snapshot,
						ValidateIndexState *state)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("PostgreSQL indexes on ddb tables are not supported")));
}

/* ------------------------------------------------------------------------
 * Miscellaneous callbacks
 * ------------------------------------------------------------------------
 */

/*
 * Large items go to a heap TOAST table (relation_toast_am says heap), filled
 * by heap_toast_insert_or_update from ddb_tuple.c.
 */
static bool
ddb_relation_needs_toast_table(Relation rel)
{
	return true;
}

static Oid
ddb_relation_toast_am(Relation rel)
{
	return HEAP_TABLE_AM_OID;
}

/* ------------------------------------------------------------------------
 * Planner related callbacks
 * ------------------------------------------------------------------------
 */

/*
 * Size estimate: blocks counted like heap's, with the per-item overhead of a
 * leaf item (item id, item header, key) in place of heap's.
 */
#define DDB_OVERHEAD_BYTES_PER_TUPLE \
	(MAXALIGN(SizeofHeapTupleHeader) + sizeof(ItemIdData) + 32)
#define DDB_USABLE_BYTES_PER_PAGE (BLCKSZ - SizeOfPageHeaderData - 16)

static void
ddb_estimate_rel_size(Relation rel, int32 *attr_widths,
					  BlockNumber *pages, double *tuples,
					  double *allvisfrac)
{
	table_block_relation_estimate_size(rel, attr_widths, pages,
									   tuples, allvisfrac,
									   DDB_OVERHEAD_BYTES_PER_TUPLE,
									   DDB_USABLE_BYTES_PER_PAGE);
	/* No visibility map: index-only scans never apply. */
	*allvisfrac = 0;
}

/* ------------------------------------------------------------------------
 * Executor related callbacks
 * ------------------------------------------------------------------------
 */

static bool
ddb_scan_bitmap_next_block(TableScanDesc scan, TBMIterateResult *tbmres)
{
	ddb_not_supported("bitmap scans");
}

static bool
ddb_scan_bitmap_next_tuple(TableScanDesc scan, TBMIterateResult *tbmres,
						   TupleTableSlot *slot)
{
	ddb_not_supported("bitmap scans");
}

static bool
ddb_scan_sample_next_block(TableScanDesc scan, SampleScanState *scanstate)
{
	ddb_tablesample_refuse();
}

static bool
ddb_scan_sample_next_tuple(TableScanDesc scan, SampleScanState *scanstate,
						   TupleTableSlot *slot)
{
	return false;
}

/* ------------------------------------------------------------------------
 * Definition of the ddb table access method.
 * ------------------------------------------------------------------------
 */

static const TableAmRoutine ddb_methods = {
	.type = T_TableAmRoutine,

	.slot_callbacks = ddb_slot_callbacks,

	.scan_begin = ddb_scan_begin,
	.scan_end = ddb_scan_end,
	.scan_rescan = ddb_scan_rescan,
	.scan_getnextslot = ddb_scan_getnextslot,

	.scan_set_tidrange = NULL,
	.scan_getnextslot_tidrange = NULL,

	.parallelscan_estimate = ddb_parallelscan_estimate,
	.parallelscan_initialize = ddb_parallelscan_initialize,
	.parallelscan_reinitialize = ddb_parallelscan_reinitialize,

	.index_fetch_begin = ddb_index_fetch_begin,
	.index_fetch_reset = ddb_index_fetch_reset,
	.index_fetch_end = ddb_index_fetch_end,
	.index_fetch_tuple = ddb_index_fetch_tuple,

	.tuple_insert = ddb_tuple_insert,
	.tuple_insert_speculative = ddb_tuple_insert_speculative,
	.tuple_complete_speculative = ddb_tuple_complete_speculative,
	.multi_insert = ddb_multi_insert,
	.tuple_delete = ddb_tuple_delete,
	.tuple_update = ddb_tuple_update,
	.tuple_lock = ddb_tuple_lock,
	.finish_bulk_insert = ddb_finish_bulk_insert,

	.tuple_fetch_row_version = ddb_fetch_row_version,
	.tuple_get_latest_tid = ddb_get_latest_tid,
	.tuple_tid_valid = ddb_tuple_tid_valid,
	.tuple_satisfies_snapshot = ddb_tuple_satisfies_snapshot,
	.index_delete_tuples = ddb_index_delete_tuples,

	.relation_set_new_filenode = ddb_relation_set_new_filenode,
	.relation_nontransactional_truncate = ddb_relation_nontransactional_truncate,
	.relation_copy_data = ddb_relation_copy_data,
	.relation_copy_for_cluster = ddb_relation_copy_for_cluster,
	.relation_vacuum = ddb_relation_vacuum,
	.scan_analyze_next_block = ddb_scan_analyze_next_block,
	.scan_analyze_next_tuple = ddb_scan_analyze_next_tuple,
	.index_build_range_scan = ddb_index_build_range_scan,
	.index_validate_scan = ddb_index_validate_scan,

	.relation_size = table_block_relation_size,
	.relation_needs_toast_table = ddb_relation_needs_toast_table,
	.relation_toast_am = ddb_relation_toast_am,
	.relation_fetch_toast_slice = heap_fetch_toast_slice,

	.relation_estimate_size = ddb_estimate_rel_size,

	.scan_bitmap_next_block = ddb_scan_bitmap_next_block,
	.scan_bitmap_next_tuple = ddb_scan_bitmap_next_tuple,
	.scan_sample_next_block = ddb_scan_sample_next_block,
	.scan_sample_next_tuple = ddb_scan_sample_next_tuple
};

const TableAmRoutine *
ddb_routine(void)
{
	return &ddb_methods;
}

Datum
ddb_tableam_handler(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(&ddb_methods);
}

/*
 * INSERT ... ON CONFLICT needs an arbiter index, and ddb tables have none
 * (the table is its own index).  Say so, and what to use instead, rather
 * than let the planner complain about a missing unique constraint or let a
 * duplicate surface as unique_violation.  (An index access method of ddb's
 * own, whose unique index on the key columns only looked the key up in
 * the tree, would not do: PostgreSQL 15 takes only btree unique indexes as
 * arbiters -- BuildSpeculativeIndexInfo refuses others -- and other access
 * methods' exclusion constraints only for DO NOTHING.)
 *
 * The target may be a ddb table itself, a partitioned table with ddb
 * partitions (at any level), or a view over either: parse analysis sees
 * the first (and opens the target table, which loads this library, before
 * its hook runs), and refuses it early, at PREPARE too; every plan is
 * checked again as it starts (check_plan_on_conflict), after the rewriter
 * has replaced a view by its table and whatever was attached since.  A
 * partitioned table without unique indexes (which it cannot have over a
 * ddb partition) takes ON CONFLICT DO NOTHING as a plain INSERT, so a
 * duplicate in a ddb partition would fail with unique_violation instead of
 * being skipped.
 */
static void
on_conflict_refuse(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("INSERT ... ON CONFLICT is not supported on ddb tables"),
			 errdetail("A ddb table has no arbiter index: it is itself ordered by its key."),
			 errhint("Use ddb_put_item() to insert or replace an item, with condition 'attribute_not_exists(<partition key>)' to insert only if absent.")));
}

/* Is relid a ddb table, or a partitioned table with a ddb partition? */
static bool
on_conflict_reaches_ddb(Oid relid)
{
	Relation	r = RelationIdGetRelation(relid);
	bool		isddb = false;
	bool		partitioned = false;

	if (!RelationIsValid(r))
		return false;
	isddb = ddb_is_ddb_relation(r);
	partitioned = r->rd_rel->relkind == RELKIND_PARTITIONED_TABLE;
	RelationClose(r);
	if (partitioned)
	{
		/* the statement holds the parent's lock; the partitions' come later */
		List	   *parts = find_all_inheritors(relid, NoLock, NULL);
		ListCell   *lc;

		foreach(lc, parts)
		{
			Oid			part = lfirst_oid(lc);

			if (part == relid)
				continue;
			r = RelationIdGetRelation(part);
			if (RelationIsValid(r))
			{
				isddb = ddb_is_ddb_relation(r);
				RelationClose(r);
				if (isddb)
					break;
			}
		}
		list_free(parts);
	}
	return isddb;
}

/* the statement and its WITH queries (an INSERT there may have one too) */
static void
check_on_conflict(Query *query)
{
	ListCell   *lc;

	if (query->commandType == CMD_INSERT && query->onConflict != NULL &&
		query->resultRelation > 0)
	{
		RangeTblEntry *rte = rt_fetch(query->resultRelation, query->rtable);

		if (rte->rtekind == RTE_RELATION && on_conflict_reaches_ddb(rte->relid))
			on_conflict_refuse();
	}
	foreach(lc, query->cteList)
	{
		CommonTableExpr *cte = lfirst_node(CommonTableExpr, lc);

		if (IsA(cte->ctequery, Query))
			check_on_conflict((Query *) cte->ctequery);
	}
}

static void
ddb_post_parse_analyze(ParseState *pstate, Query *query, JumbleState *jstate)
{
	if (prev_post_parse_analyze_hook)
		prev_post_parse_analyze_hook(pstate, query, jstate);

	check_on_conflict(query);
}

/*
 * The same check on the plan, each time one starts (EXPLAIN too).  Not at
 * planning: a plan of an INSERT into a partitioned table names only that
 * table, not its sub-partitioned partitions, so a ddb partition attached
 * or created one level further down invalidates no plan that a prepared
 * statement or a function keeps, and DO NOTHING would go on as a plain
 * INSERT into it.  The targets are looked at here only for a plan that has
 * an ON CONFLICT clause: the statement's own ModifyTable, or one of a
 * data-modifying WITH query (a subplan).
 */
static void
check_modify_on_conflict(PlannedStmt *stmt, Plan *plan)
{
	ModifyTable *mt;
	ListCell   *lc;

	if (plan == NULL || !IsA(plan, ModifyTable))
		return;
	mt = (ModifyTable *) plan;
	if (mt->operation != CMD_INSERT || mt->onConflictAction == ONCONFLICT_NONE)
		return;
	foreach(lc, mt->resultRelations)
	{
		RangeTblEntry *rte = rt_fetch(lfirst_int(lc), stmt->rtable);

		if (rte->rtekind == RTE_RELATION && on_conflict_reaches_ddb(rte->relid))
			on_conflict_refuse();
	}
}

static void
check_plan_on_conflict(PlannedStmt *stmt)
{
	ListCell   *lc;

	if (stmt->commandType == CMD_INSERT)
		check_modify_on_conflict(stmt, stmt->planTree);
	if (stmt->hasModifyingCTE)
		foreach(lc, stmt->subplans)
			check_modify_on_conflict(stmt, (Plan *) lfirst(lc));
}

/*
 * A plan that may run in parallel workers: write this backend's deferred
 * row-id map entries first (ddb_map_flush_all), or a worker that resolves
 * a TID of a version this transaction wrote (a TID scan, a join on ctid)
 * would not find it.  The executor enters parallel mode only after
 * ExecutorStart, so the entries can still be written here.
 */
static void
ddb_executor_start(QueryDesc *queryDesc, int eflags)
{
	check_plan_on_conflict(queryDesc->plannedstmt);
	if (queryDesc->plannedstmt->parallelModeNeeded && !IsInParallelMode())
		ddb_map_flush_all();
	if (prev_executor_start_hook)
		prev_executor_start_hook(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

/* The engine's hooks and settings, installed when the library loads. */
void
ddb_engine_init(void)
{
	prev_get_relation_info_hook = get_relation_info_hook;
	get_relation_info_hook = ddb_get_relation_info;
	prev_post_parse_analyze_hook = post_parse_analyze_hook;
	post_parse_analyze_hook = ddb_post_parse_analyze;
	prev_executor_start_hook = ExecutorStart_hook;
	ExecutorStart_hook = ddb_executor_start;
	ddb_verify_init();
	ddb_bulk_init();
#ifdef DDB_CHECKS
	ddb_checks_init();
	ddb_scan_checks_init();
#endif
}
