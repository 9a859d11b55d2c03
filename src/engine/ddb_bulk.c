/*-------------------------------------------------------------------------
 *
 * ddb_bulk.c
 *	  Bulk load: COPY spools its rows and sorts them by key; into a table
 *	  whose file is new in this subtransaction it builds the tree bottom-up,
 *	  into any other it inserts them in key order.
 *
 * Row by row, COPY descends the tree, logs a Generic WAL record and
 * sometimes splits a leaf for every row.  When the table's file was created
 * in the current subtransaction (CREATE TABLE, or TRUNCATE, in the same
 * subtransaction as the COPY -- the condition PostgreSQL's own COPY FREEZE
 * requires) and nothing has been written to it yet, no other transaction
 * can see the table (its catalog row is not committed, or TRUNCATE holds
 * AccessExclusiveLock until commit), and an error anywhere in the command
 * aborts the subtransaction that owns the file, which discards the file
 * with whatever was written to it.  Then multi_insert (COPY's way in)
 * forms each row's stored tuple and key, toasts it, gives it a row id in
 * arrival order, and puts it into a tuplesort instead of the tree;
 * finish_bulk_insert sorts the spool by key and hands the items to the
 * bottom-up builder VACUUM FULL uses (ddb_build.c): leaves and internal
 * levels filled left to right (leaves to the table's fillfactor), the
 * row-id map and the metapage, each page written once as a full-page image
 * (not logged at all with wal_level = minimal, where Generic WAL skips WAL
 * for a file new in the transaction and commit syncs it, as for heap).  A
 * key that appears twice raises the unique_violation a row-by-row insert
 * raises.
 *
 * Every other COPY (a table whose file is older than the current
 * subtransaction, even an empty one, or one that has pages already) cannot
 * be built in place: other transactions may insert into it concurrently
 * (COPY takes only RowExclusiveLock), and an error in a later
 * subtransaction (ROLLBACK TO SAVEPOINT) would leave the file with a
 * half-built tree.  Its rows are spooled all the same, with row ids from
 * the metapage's counter, and finish_bulk_insert inserts them in key order,
 * a chunk at a time through ddb_tree_insert_multi -- the row path's own
 * inserts, WAL-logged, checked for uniqueness and waiting on concurrent
 * writers as any insert does.  Row by row, COPY's batches of up to 1,000
 * rows each fell across the whole key space: a descent and a record for
 * each row's leaf, and leaves split while half the rows of the load that
 * belonged next to them had not arrived yet (leaves ended 0.71 full after
 * the bench's interleaved load).  In key order each leaf takes its rows in
 * one run, one descent and one record for all of them, and a table loaded
 * from empty grows at its right edge, where splits leave full leaves
 * behind.  Inserting in key order is also the lock order of every
 * multi-item writer (ddb_batch.c's header).
 *
 * What takes the row path (ddb_multi_insert: batch by batch), and why:
 *	 - a table with insert triggers other than BEFORE STATEMENT: COPY fires
 *	   AFTER ROW and AFTER STATEMENT triggers (GSI, LSI, TTL and stream
 *	   maintenance are AFTER ROW triggers; so are foreign keys) at the end
 *	   of the statement, before finish_bulk_insert, and they read the rows
 *	   by TID or by scanning: the rows must be in the tree by then.  BEFORE
 *	   ROW triggers make COPY insert one row at a time anyway;
 *	 - a partition whose partition tree has such triggers on any other
 *	   table: COPY into a partitioned table fires the target's AFTER
 *	   STATEMENT triggers and every partition's queued AFTER ROW triggers
 *	   at the end of the statement too, and they may read this partition
 *	   (a count over the parent, say) -- but the partitions are finished
 *	   only after them (CopyMultiInsertInfoCleanup).  The tree's tables
 *	   are read from the catalogs once per COPY (tree_fires_after_insert);
 *	   ddb's own maintenance triggers count too, so a GSI on one partition
 *	   keeps its siblings on the row path;
 *	 - ddb.bulk_load = off.
 * One table spools at a time per backend: COPY into a partitioned table
 * spools the first eligible partition it meets; the others take the row
 * path.  Rows inserted into the table through another path while its COPY
 * spools (a CHECK constraint's function, say) create the tree; the spool
 * then goes in in key order at the end, with fresh row ids.  Such a function
 * may itself COPY into the table: that COPY (another command) takes the
 * row path, and its finish_bulk_insert, which cannot tell the two COPYs
 * apart, inserts the spool so far -- the rows the outer COPY has handed
 * over, as the row path would have inserted them by then -- and the outer
 * COPY's later rows start a spool of their own.  The spool's versions
 * carry its transaction (set when spooled), and finish_bulk_insert writes
 * their map entries at once, so a subtransaction of the function rolled
 * back afterwards takes nothing of them.
 *
 * The spool is a tuplesort of bytea datums, key || stored tuple || key
 * length (2 bytes), compared bytewise: no encoded key is a proper prefix
 * of another (ddb_key.c), so this is key order, and equal keys end up
 * side by side.  It takes maintenance_work_mem, as CREATE INDEX does, and
 * spills to temporary files beyond it.  Either way a key that appears
 * twice, or (inserting) one that is live in the table, raises its
 * unique_violation at the end of the COPY, not at its input line.
 *
 * COPY FREEZE (which PostgreSQL allows under the same condition) spools
 * its rows with xmin frozen, as heap_insert does for it: they are visible
 * to every snapshot once the transaction commits, and VACUUM has nothing
 * to freeze.  A COPY FREEZE that takes the row path (a table with
 * triggers, ddb.bulk_load = off) freezes its rows there (ddb_multi_insert).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type_d.h"
#include "catalog/pg_trigger.h"
#include "commands/trigger.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "storage/proc.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/tuplesort.h"

#include "ddb.h"
#include "engine/ddb_page.h"

/* ddb.bulk_load: COPY spools and sorts its rows (see the file header) */
bool		ddb_bulk_load = true;

typedef struct DdbBulkSpool
{
	Oid			relid;
	RelFileNode node;			/* the file the tree is built in */
	CommandId	cid;			/* the COPY's command */
	SubTransactionId subid;		/* the subtransaction that owns the file (build)
								 * or runs the COPY */
	bool		build;			/* build the tree bottom-up; else insert in
								 * key order */
	MemoryContext cxt;			/* the spool's, under TopTransactionContext */
	Tuplesortstate *sort;
	uint64		nitems;			/* rows spooled; building, the next row id */
} DdbBulkSpool;

/* The spool being filled, if any: one per backend at a time. */
static DdbBulkSpool *spool = NULL;
static bool callbacks_registered = false;

/* Forget the spool; its memory goes with it. */
static void
spool_drop(bool delete_memory)
{
	DdbBulkSpool *sp = spool;

	spool = NULL;
	if (sp != NULL && delete_memory)
		MemoryContextDelete(sp->cxt);
}

static void
bulk_xact_callback(XactEvent event, void *arg)
{
	if (spool == NULL)
		return;
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:

			/*
			 * A spool is always built by the command that filled it; one
			 * left at commit would be rows silently lost.
			 */
			elog(ERROR, "bulk load of ddb table %u was not finished", spool->relid);
			break;
		default:
			/* abort: TopTransactionContext goes, and the spool with it */
			spool_drop(false);
			break;
	}
}

/*
 * A subtransaction that aborts while its COPY spools: the COPY failed (a
 * COPY runs in one subtransaction; one that a function in it starts and
 * rolls back is a different subtransaction, and the COPY goes on).
 */
static void
bulk_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					  SubTransactionId parentSubid, void *arg)
{
	if (spool != NULL && event == SUBXACT_EVENT_ABORT_SUB && spool->subid == mySubid)
		spool_drop(true);
}

void
ddb_bulk_init(void)
{
	DefineCustomBoolVariable("ddb.bulk_load",
							 "COPY into a ddb table sorts its rows by key: it builds the tree bottom-up when the table was created or truncated in the same subtransaction, else inserts them in key order.",
							 "Off: COPY inserts its rows batch by batch, as they come.",
							 &ddb_bulk_load, true, PGC_USERSET, 0,
							 NULL, NULL, NULL);
}

/* What COPY's rows into a table do (see the file header). */
typedef enum SpoolMode
{
	SPOOL_NONE,					/* the row path */
	SPOOL_BUILD,				/* spooled, then built bottom-up */
	SPOOL_INSERT				/* spooled, then inserted in key order */
} SpoolMode;

/*
 * rel is a partition: has any other table of its partition tree (from the
 * topmost ancestor down) an enabled insert trigger that fires after the
 * rows, AFTER ROW or AFTER STATEMENT (see the file header)?  Read from
 * pg_trigger, without opening (or locking) the tables COPY has not routed
 * a row to yet.  COPY asks for each of its partitions' batches while none
 * spools, so the answer is kept for the command (cid) of this transaction.
 */
static bool
tree_fires_after_insert(Relation rel, CommandId cid)
{
	static LocalTransactionId cached_lxid = InvalidLocalTransactionId;
	static CommandId cached_cid = InvalidCommandId;
	static Oid	cached_root = InvalidOid;
	static bool cached_fires = false;
	List	   *ancestors = get_partition_ancestors(RelationGetRelid(rel));
	Oid			root;
	List	   *members;
	Relation	tgrel;
	bool		fires = false;
	ListCell   *lc;

	if (ancestors == NIL)
		return false;			/* detached meanwhile */
	root = llast_oid(ancestors);
	list_free(ancestors);
	if (cached_lxid == MyProc->lxid && cached_cid == cid && cached_root == root)
		return cached_fires;

	members = find_all_inheritors(root, NoLock, NULL);
	tgrel = table_open(TriggerRelationId, AccessShareLock);
	foreach(lc, members)
	{
		Oid			relid = lfirst_oid(lc);
		HeapTuple	tup;
		bool		hastriggers;
		ScanKeyData key;
		SysScanDesc scan;

		if (relid == RelationGetRelid(rel))
			continue;			/* its own triggers: spool_mode */
		tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
		if (!HeapTupleIsValid(tup))
			continue;			/* dropped meanwhile */
		hastriggers = ((Form_pg_class) GETSTRUCT(tup))->relhastriggers;
		ReleaseSysCache(tup);
		if (!hastriggers)
			continue;
		ScanKeyInit(&key, Anum_pg_trigger_tgrelid, BTEqualStrategyNumber, F_OIDEQ,
					ObjectIdGetDatum(relid));
		scan = systable_beginscan(tgrel, TriggerRelidNameIndexId, true, NULL, 1, &key);
		while (!fires && HeapTupleIsValid(tup = systable_getnext(scan)))
		{
			Form_pg_trigger t = (Form_pg_trigger) GETSTRUCT(tup);

			fires = t->tgenabled != TRIGGER_DISABLED &&
				TRIGGER_FOR_INSERT(t->tgtype) &&
				!TRIGGER_FOR_BEFORE(t->tgtype) &&
				!TRIGGER_FOR_INSTEAD(t->tgtype);
		}
		systable_endscan(scan);
		if (fires)
			break;
	}
	table_close(tgrel, AccessShareLock);
	list_free(members);

	cached_lxid = MyProc->lxid;
	cached_cid = cid;
	cached_root = root;
	cached_fires = fires;
	return fires;
}

/*
 * How may COPY's rows into rel be spooled?  The checks that cost nothing
 * come first; the partition tree's triggers and the file's size are asked
 * for last.
 */
static SpoolMode
spool_mode(Relation rel, CommandId cid)
{
	SubTransactionId mysubid = GetCurrentSubTransactionId();
	TriggerDesc *td = rel->trigdesc;

	if (!ddb_bulk_load)
		return SPOOL_NONE;
	/*
	 * (The flags count disabled triggers too, such as ddb's own left
	 * disabled when a table's last index or its stream went: look at those.)
	 */
	if (td != NULL &&
		(td->trig_insert_before_row || td->trig_insert_after_row ||
		 td->trig_insert_instead_row || td->trig_insert_after_statement ||
		 td->trig_insert_new_table))
	{
		for (int i = 0; i < td->numtriggers; i++)
			if (td->triggers[i].tgenabled != TRIGGER_DISABLED &&
				TRIGGER_FOR_INSERT(td->triggers[i].tgtype))
				return SPOOL_NONE;
	}
	if (rel->rd_rel->relispartition && tree_fires_after_insert(rel, cid))
		return SPOOL_NONE;
	if (rel->rd_createSubid != mysubid && rel->rd_newRelfilenodeSubid != mysubid)
		return SPOOL_INSERT;
	return RelationGetNumberOfBlocks(rel) == 0 ? SPOOL_BUILD : SPOOL_INSERT;
}

static void
spool_start(Relation rel, CommandId cid, bool build)
{
	MemoryContext cxt = AllocSetContextCreate(TopTransactionContext,
											  "ddb bulk load",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	DdbBulkSpool *sp = palloc0(sizeof(DdbBulkSpool));

	if (!callbacks_registered)
	{
		RegisterXactCallback(bulk_xact_callback, NULL);
		RegisterSubXactCallback(bulk_subxact_callback, NULL);
		callbacks_registered = true;
	}
	sp->relid = RelationGetRelid(rel);
	sp->node = rel->rd_node;
	sp->cid = cid;
	sp->subid = GetCurrentSubTransactionId();
	sp->build = build;
	sp->cxt = cxt;
	sp->sort = tuplesort_begin_datum(BYTEAOID, ByteaLessOperator, InvalidOid, false,
									 maintenance_work_mem, NULL, TUPLESORT_NONE);
	MemoryContextSwitchTo(old);
	spool = sp;
}

/*
 * COPY's multi_insert: spool the rows when the table qualifies (returns
 * true, each slot's TID set to its row's row id), or return false for the
 * row path.  Every check a row-by-row insert makes on a row is made here,
 * in the same order, so a bad row fails at its line of the input; all but
 * the key's uniqueness, which the build or the inserts check at the end.
 */
bool
ddb_bulk_multi_insert(Relation rel, TupleTableSlot **slots, int ntuples,
					  CommandId cid, int options)
{
	StringInfoData key;

	if (spool == NULL)
	{
		SpoolMode	mode = spool_mode(rel, cid);

		if (mode == SPOOL_NONE)
			return false;
		spool_start(rel, cid, mode == SPOOL_BUILD);
	}
	else if (spool->relid != RelationGetRelid(rel) ||
			 !RelFileNodeEquals(spool->node, rel->rd_node))
		return false;			/* another table is spooling */
	else if (spool->cid != cid)
		return false;			/* a COPY run during the COPY: see below */

	CheckForSerializableConflictIn(rel, NULL, InvalidBlockNumber);
	initStringInfo(&key);
	for (int i = 0; i < ntuples; i++)
	{
		HeapTuple	stored;
		HeapTuple	tuple;
		ItemPointerData tid;
		bytea	   *blob;
		char	   *p;
		uint16		keylen;

		resetStringInfo(&key);
		stored = ddb_form_stored_tuple(rel, slots[i], &key);
		ddb_rowid_to_tid(spool->build ? spool->nitems : ddb_alloc_rowid(rel), &tid);
		ddb_prepare_new_version(rel, stored, cid, &tid);
		if (options & TABLE_INSERT_FROZEN)
			HeapTupleHeaderSetXminFrozen(stored->t_data);
		tuple = ddb_toast_stored_tuple(rel, stored, NULL, key.len);
		ddb_check_item_limits(rel, key.len,
							  MAXALIGN(DdbLeafTupleOffset(key.len) + tuple->t_len));

		keylen = (uint16) key.len;
		blob = palloc(VARHDRSZ + key.len + tuple->t_len + sizeof(uint16));
		SET_VARSIZE(blob, VARHDRSZ + key.len + tuple->t_len + sizeof(uint16));
		p = VARDATA(blob);
		memcpy(p, key.data, key.len);
		memcpy(p + key.len, tuple->t_data, tuple->t_len);
		memcpy(p + key.len + tuple->t_len, &keylen, sizeof(uint16));
		tuplesort_putdatum(spool->sort, PointerGetDatum(blob), false);
		pfree(blob);
		if (tuple != stored)
			heap_freetuple(tuple);
		heap_freetuple(stored);

		slots[i]->tts_tableOid = RelationGetRelid(rel);
		slots[i]->tts_tid = tid;
		spool->nitems++;
	}
	pfree(key.data);
	pgstat_count_heap_insert(rel, ntuples);
	return true;
}

/*
 * Split a spooled datum into key and stored tuple; the tuple's t_data
 * points into the datum (callers only copy it).
 */
static void
spool_item(Datum d, char **key, int *keylen, HeapTuple htup)
{
	bytea	   *blob = DatumGetByteaPP(d);
	char	   *p = VARDATA_ANY(blob);
	int			len = VARSIZE_ANY_EXHDR(blob);
	uint16		kl;

	memcpy(&kl, p + len - sizeof(uint16), sizeof(uint16));
	*key = p;
	*keylen = kl;
	htup->t_len = len - kl - sizeof(uint16);
	htup->t_data = (HeapTupleHeader) (p + kl);
	ItemPointerSetInvalid(&htup->t_self);
	htup->t_tableOid = InvalidOid;
}

/*
 * Insert the spooled rows in key order, a chunk at a time (at most
 * SPOOL_CHUNK rows or SPOOL_CHUNK_BYTES of them), each chunk placed as the
 * row path places a batch (ddb_place_versions).  'fresh_rowids': the rows
 * were spooled to be built into a file that has since been written to
 * another way (see the file header), with row ids counted from zero;
 * they get row ids from the metapage's counter.
 */
#define SPOOL_CHUNK			1000
#define SPOOL_CHUNK_BYTES	(1024 * 1024)

static void
spool_insert_rows(Relation rel, Tuplesortstate *sort, bool fresh_rowids)
{
	MemoryContext chunk = AllocSetContextCreate(CurrentMemoryContext, "ddb spooled rows",
												ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(chunk);
	DdbNewVersion *v = MemoryContextAlloc(old, sizeof(DdbNewVersion) * SPOOL_CHUNK);
	int			n = 0;
	Size		bytes = 0;
	Datum		d;
	bool		isnull;

	/*
	 * Checked when the rows were spooled too; again here, where they go in,
	 * so that the check does not depend on when COPY calls multi_insert.
	 */
	CheckForSerializableConflictIn(rel, NULL, InvalidBlockNumber);
	for (;;)
	{
		bool		more = tuplesort_getdatum(sort, true, &d, &isnull, NULL);

		CHECK_FOR_INTERRUPTS();
		if (more)
		{
			char	   *key;
			int			keylen;
			HeapTupleData htup;
			HeapTuple	copy;

			spool_item(d, &key, &keylen, &htup);
			copy = heap_copytuple(&htup);	/* aligned */
			if (fresh_rowids)
				ddb_rowid_to_tid(ddb_alloc_rowid(rel), &copy->t_data->t_ctid);
			copy->t_self = copy->t_data->t_ctid;
			copy->t_tableOid = RelationGetRelid(rel);
			v[n].key = key;		/* in the datum, which the chunk keeps */
			v[n].keylen = keylen;
			v[n].tuple = copy;
			v[n].tid = copy->t_self;
			v[n].inserted = false;
			n++;
			bytes += VARSIZE_ANY(DatumGetPointer(d)) + copy->t_len;
		}
		if (n > 0 && (!more || n == SPOOL_CHUNK || bytes >= SPOOL_CHUNK_BYTES))
		{
			/* counted when spooled */
			ddb_tree_insert_multi(rel, v, n, DDB_UNIQUE_ERROR, false);
			MemoryContextReset(chunk);
			n = 0;
			bytes = 0;
		}
		if (!more)
			break;
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(chunk);
	pfree(v);
}

/* Sort the spool and build the tree from it, in key order. */
static void
spool_build(Relation rel, Tuplesortstate *sort)
{
	DdbBuildState *bs = ddb_build_begin(rel);
	Datum		d;
	bool		isnull;
	Datum		prev = (Datum) 0;

	while (tuplesort_getdatum(sort, true, &d, &isnull, NULL))
	{
		char	   *key;
		int			keylen;
		HeapTupleData htup;
		ItemPointerData tid;

		CHECK_FOR_INTERRUPTS();
		spool_item(d, &key, &keylen, &htup);
		if (prev != (Datum) 0)
		{
			char	   *pkey;
			int			pkeylen;
			HeapTupleData ptup;

			spool_item(prev, &pkey, &pkeylen, &ptup);
			if (pkeylen == keylen && memcmp(pkey, key, keylen) == 0)
				ddb_duplicate_key_error(rel);
			pfree(DatumGetPointer(prev));
		}
		tid = htup.t_data->t_ctid;
		ddb_build_add(bs, key, keylen, &tid, &htup);
		prev = d;
	}
	ddb_build_end(bs);
}

/*
 * COPY's finish_bulk_insert: build the tree from the spool of rel, or
 * insert its rows, if it has one.  The spool is dropped here, or by the
 * abort that an error here causes (its memory goes with the caller's).
 */
void
ddb_bulk_finish(Relation rel)
{
	DdbBulkSpool *sp = spool;
	MemoryContext old;

	if (sp == NULL || sp->relid != RelationGetRelid(rel) ||
		!RelFileNodeEquals(sp->node, rel->rd_node))
		return;

	/*
	 * Finished here, or dropped with the error that stops it, whichever
	 * subtransaction that aborts (a COPY run by a function during the COPY
	 * finishes the spool in the function's: see the file header).
	 */
	spool = NULL;
	MemoryContextSetParent(sp->cxt, CurrentMemoryContext);
	old = MemoryContextSwitchTo(sp->cxt);
	tuplesort_performsort(sp->sort);
	if (!sp->build)
	{
		ereport(DEBUG1,
				(errmsg_internal("ddb: COPY inserts " UINT64_FORMAT " items into \"%s\" in key order",
								 sp->nitems, RelationGetRelationName(rel))));
		spool_insert_rows(rel, sp->sort, false);
	}
	else if (RelationGetNumberOfBlocks(rel) == 0)
	{
		ereport(DEBUG1,
				(errmsg_internal("ddb: COPY builds the tree of \"%s\" bottom-up from " UINT64_FORMAT " items",
								 RelationGetRelationName(rel), sp->nitems)));
		spool_build(rel, sp->sort);
	}
	else
	{
		ereport(DEBUG1,
				(errmsg_internal("ddb: \"%s\" was written to during its COPY: " UINT64_FORMAT " spooled items go in by key order",
								 RelationGetRelationName(rel), sp->nitems)));
		spool_insert_rows(rel, sp->sort, true);
	}
	tuplesort_end(sp->sort);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(sp->cxt);
}
