/*-------------------------------------------------------------------------
 *
 * ddb_vacuum.c
 *	  VACUUM, version pruning and ANALYZE sampling for ddb tables.
 *
 * Pruning removes versions that no snapshot can see any more
 * (HeapTupleSatisfiesVacuumHorizon + GlobalVisTest, as heap_page_prune
 * does) from a leaf and clears their row-id map entries.  It runs in VACUUM
 * over every leaf, and opportunistically before a leaf is split, so a hot
 * item updated thousands of times does not split leaf after leaf -- on the
 * leaf's right sibling too when the versions of the leaf's last key go on
 * there (ddb_tree.c, "Long keys").
 *
 * VACUUM also unlinks the leaves its prune leaves without items and
 * records the pages that may be reused in the free space map (ddb_tree.c,
 * "Unlinking empty leaves" and "Reuse").
 *
 * An autovacuum worker logs what it did as heap's does, when
 * log_autovacuum_min_duration asks (log_vacuum).
 *
 * VACUUM also freezes old xids (heap_prepare_freeze_tuple /
 * heap_execute_freeze_tuple) and, having seen every leaf, advances
 * relfrozenxid/relminmxid through vac_update_relstats.  xids below the new
 * relfrozenxid are frozen, so wraparound never makes data vanish.
 *
 * Skipping.  VACUUM marks in the visibility map the leaves it leaves all
 * visible (ddb_vismap.c), and walks the leaves by their parents' downlinks
 * (ddb_leaf_walk_next), so that a VACUUM that is not aggressive skips the
 * marked leaves without reading them: a table nothing changed costs it its
 * internal and row-id map pages, not its leaves.  Such a VACUUM has not
 * seen every xid, so it leaves relfrozenxid and relminmxid as they were
 * and counts the skipped leaves' items by the table's density (as heap's
 * VACUUM does for the pages it skips); an aggressive one (freeze_table_age
 * reached, FREEZE, wraparound, DISABLE_PAGE_SKIPPING) reads every leaf and
 * advances them.  A tree of one leaf is walked by right-links, as every
 * tree was before.  No buffer lock is held between leaves, where VACUUM
 * sleeps for its cost limit (vacuum_delay_point).
 *
 * Hot standby.  Generic WAL records carry no conflict horizon, so a standby
 * replaying a prune would remove versions under a query that can still see
 * them.  Before each prune we emit an nbtree XLOG_BTREE_REUSE_PAGE record
 * carrying the newest removed xid: its redo does nothing but resolve
 * recovery conflicts for that horizon (cancelling standby queries that
 * could see the versions), which is exactly what we need, and it needs no
 * shared_preload_libraries.  It names the ddb relation and block 0 and
 * touches no page.  The reuse of a deleted leaf is logged with the same
 * record, for its block and its safexid (ddb_log_reuse), as nbtree logs
 * its own: standby queries whose snapshots may still hold the page's
 * number are cancelled before the page changes under them.
 *
 * No cleanup lock is needed: readers copy tuples out under the content lock
 * and keep no pointers into pages between calls.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/heapam.h"
#include "access/heapam_xlog.h"
#include "access/htup_details.h"
#include "access/multixact.h"
#include "access/nbtxlog.h"
#include "access/transam.h"
#include "access/xloginsert.h"
#include "access/xlog.h"
#include "commands/dbcommands.h"
#include "commands/vacuum.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "postmaster/autovacuum.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/pg_rusage.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "ddb.h"
#include "engine/ddb_page.h"

/* Freezing cutoffs of one VACUUM, and what it learned. */
typedef struct DdbFreezeState
{
	TransactionId relfrozenxid;
	MultiXactId relminmxid;
	TransactionId FreezeLimit;
	MultiXactId MultiXactCutoff;
	TransactionId NewRelfrozenXid;
	MultiXactId NewRelminMxid;
	/* the leaf last pruned: is everything left on it visible to all? */
	TransactionId OldestXmin;
	bool		all_visible;
} DdbFreezeState;

typedef struct DdbPruneStats
{
	double		live;
	double		dead;			/* removed */
	double		recently_dead;	/* dead but still visible to someone */
} DdbPruneStats;

/*
 * Make hot standbys cancel queries that could still see versions up to
 * latestRemovedXid (see the file header).
 */
static void
log_conflict_full(Relation rel, BlockNumber blkno, FullTransactionId horizon)
{
	xl_btree_reuse_page xlrec;

	if (!RelationNeedsWAL(rel) || !XLogStandbyInfoActive())
		return;
	xlrec.node = rel->rd_node;
	xlrec.block = blkno;
	xlrec.latestRemovedFullXid = horizon;
	XLogBeginInsert();
	XLogRegisterData((char *) &xlrec, SizeOfBtreeReusePage);
	XLogInsert(RM_BTREE_ID, XLOG_BTREE_REUSE_PAGE);
}

static void
log_conflict_horizon(Relation rel, TransactionId latestRemovedXid)
{
	FullTransactionId next;
	uint32		epoch;

	if (!TransactionIdIsNormal(latestRemovedXid))
		return;
	next = ReadNextFullTransactionId();
	epoch = EpochFromFullTransactionId(next);
	if (latestRemovedXid > XidFromFullTransactionId(next))
		epoch--;				/* from before the last wraparound */
	log_conflict_full(rel, DDB_METAPAGE_BLKNO,
					  FullTransactionIdFromEpochAndXid(epoch, latestRemovedXid));
}

/*
 * A deleted leaf is about to be reused (ddb_new_buffer): make hot standbys
 * cancel the queries whose snapshots may still hold its block number, as
 * _bt_log_reuse_page does -- the same record, this time naming the block.
 */
void
ddb_log_reuse(Relation rel, BlockNumber blkno, FullTransactionId safexid)
{
	log_conflict_full(rel, blkno, safexid);
}

/*
 * The versions of the locked leaf in buf that a prune removes: their
 * offsets (ascending) in deletable[], their TIDs in removed[], the newest
 * xid they make invisible in *latestRemovedXid; with fs, the versions to
 * freeze in frzoff[] and frz[] (*nfrozen).  Returns the number removed.
 * Changes nothing.
 */
static int
prune_scan(Relation rel, Buffer buf, GlobalVisState *vistest, DdbFreezeState *fs,
		   DdbPruneStats *stats, OffsetNumber *deletable, ItemPointerData *removed,
		   TransactionId *latestRemovedXid, OffsetNumber *frzoff,
		   xl_heap_freeze_tuple *frz, int *nfrozen)
{
	Page		page = BufferGetPage(buf);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	int			ndeletable = 0;

	*latestRemovedXid = InvalidTransactionId;
	if (fs)
		fs->all_visible = true;
	for (OffsetNumber off = DdbPageFirstData(page); off <= maxoff; off++)
	{
		ItemId		iid = PageGetItemId(page, off);
		DdbLeafItem li = (DdbLeafItem) PageGetItem(page, iid);
		HeapTupleData htup;
		TransactionId dead_after = InvalidTransactionId;
		HTSV_Result res;
		bool		remove = false;

		(void) ddb_leaf_htup(rel, page, off, &htup);

		res = HeapTupleSatisfiesVacuumHorizon(&htup, buf, &dead_after);
		if (res == HEAPTUPLE_DEAD)
			remove = true;
		else if (res == HEAPTUPLE_RECENTLY_DEAD)
		{
			if (GlobalVisTestIsRemovableXid(vistest, dead_after))
				remove = true;
			else if (stats)
				stats->recently_dead++;
		}
		else if (stats && (res == HEAPTUPLE_LIVE || res == HEAPTUPLE_DELETE_IN_PROGRESS))
			stats->live++;

		/*
		 * All visible, as heap's VACUUM judges it (lazy_scan_prune): live,
		 * its xmin committed (the hint HeapTupleSatisfiesVacuum just set,
		 * which waits for an asynchronous commit's flush) before the
		 * oldest xmin; an xmax left on a live version is a lock's or an
		 * aborted update's.
		 */
		if (fs && !remove &&
			(res != HEAPTUPLE_LIVE || !HeapTupleHeaderXminCommitted(htup.t_data) ||
			 !TransactionIdPrecedes(HeapTupleHeaderGetXmin(htup.t_data), fs->OldestXmin)))
			fs->all_visible = false;

		if (remove)
		{
			HeapTupleHeaderAdvanceLatestRemovedXid(htup.t_data, latestRemovedXid);
			removed[ndeletable] = li->tid;
			deletable[ndeletable++] = off;
			if (stats)
				stats->dead++;
		}
		else if (fs)
		{
			bool		totally_frozen;

			if (heap_prepare_freeze_tuple(htup.t_data, fs->relfrozenxid, fs->relminmxid,
										  fs->FreezeLimit, fs->MultiXactCutoff,
										  &frz[*nfrozen], &totally_frozen,
										  &fs->NewRelfrozenXid, &fs->NewRelminMxid))
				frzoff[(*nfrozen)++] = off;
		}
	}
	return ndeletable;
}

/*
 * What a prune of the exclusively locked leaf in buf would remove, without
 * removing it (prune_scan): for an update that removes them in its own
 * record (ddb_tree_insert_beside with ddb's own WAL).  deletable[] and
 * removed[] have room for MaxOffsetNumber.
 */
int
ddb_prune_plan(Relation rel, Buffer buf, OffsetNumber *deletable, ItemPointerData *removed,
			   TransactionId *latestRemovedXid)
{
	return prune_scan(rel, buf, GlobalVisTestFor(rel), NULL, NULL, deletable, removed,
					  latestRemovedXid, NULL, NULL, NULL);
}

/*
 * Prune (and with fs, freeze) the exclusively locked leaf in buf.  Removed
 * versions' TIDs are appended to removed[] (room for MaxOffsetNumber) so
 * the caller can clear their map entries after unlocking.  Returns the
 * number removed.
 */
int
ddb_prune_leaf(Relation rel, Buffer buf, GlobalVisState *vistest,
			   void *freeze_state, ItemPointerData *removed, void *stats_out)
{
	DdbFreezeState *fs = (DdbFreezeState *) freeze_state;
	DdbPruneStats *stats = (DdbPruneStats *) stats_out;
	Page		page = BufferGetPage(buf);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber deletable[MaxOffsetNumber];
	int			ndeletable;
	OffsetNumber frzoff[MaxOffsetNumber];
	xl_heap_freeze_tuple *frz = NULL;
	int			nfrozen = 0;
	TransactionId latestRemovedXid;

	if (fs)
		frz = palloc(sizeof(xl_heap_freeze_tuple) * (maxoff + 1));
	ndeletable = prune_scan(rel, buf, vistest, fs, stats, deletable, removed,
							&latestRemovedXid, frzoff, frz, &nfrozen);

	/* freezing keeps a leaf all visible; removing versions is a change */
	if (ndeletable > 0)
		ddb_vm_clear(rel, buf);
	/* a prune without freezing: ddb's own record, when it has one */
	if (ndeletable > 0 && nfrozen == 0 &&
		ddb_wal_leaf_prune(rel, buf, deletable, ndeletable, latestRemovedXid))
		;
	else if (ndeletable > 0 || nfrozen > 0)
	{
		GenericXLogState *state;
		Page		copy;

		if (ndeletable > 0)
			log_conflict_horizon(rel, latestRemovedXid);
		if (nfrozen > 0)
		{
			/*
			 * Freezing makes xids below FreezeLimit look committed to every
			 * snapshot: standby queries that still see them as running must
			 * go, as heap's freeze redo does with cutoff_xid - 1.
			 */
			TransactionId horizon = fs->FreezeLimit;

			TransactionIdRetreat(horizon);
			log_conflict_horizon(rel, horizon);
		}
		state = GenericXLogStart(rel);
		/* freezing rewrites fields in place; a prune's compaction moves items */
		copy = GenericXLogRegisterBuffer(state, buf,
										 ndeletable > 0 ? DDB_GENERIC_ITEMS_MOVE : 0);
		for (int i = 0; i < nfrozen; i++)
		{
			DdbLeafItem li = (DdbLeafItem) PageGetItem(copy, PageGetItemId(copy, frzoff[i]));
			HeapTupleHeader t = DdbLeafItemGetTuple(li);

			heap_execute_freeze_tuple(t, &frz[i]);

			/*
			 * An xmax that freezing removed was an aborted update's (a
			 * committed one's version is dead and pruned) or a lock: the
			 * version is as if never updated, and points to itself again,
			 * as ddb_verify expects of such a version.
			 */
			if (HeapTupleHeaderGetRawXmax(t) == InvalidTransactionId)
				t->t_ctid = li->tid;
		}
		if (ndeletable > 0)
			PageIndexMultiDelete(copy, deletable, ndeletable);
		GenericXLogFinish(state);
	}
	if (frz)
		pfree(frz);
	return ndeletable;
}

/*
 * Release the exclusively locked leaf in buf, which a prune has just left
 * without the nremoved versions in removed[]: clear their map entries and,
 * if the leaf has no items left and is not the rightmost, unlink it
 * (ddb_tree.c, "Unlinking empty leaves"; the unlink locks the parent
 * first, so only once the leaf is released).  The caller holds the
 * table's ShareUpdateExclusiveLock, which makes it the only unlinker;
 * 'by_read': a read cleaning up, whose backend keeps what it unlinks
 * (ddb_unlink_leaf).  Returns whether the leaf was unlinked.
 */
static bool
release_pruned_leaf(Relation rel, Buffer buf, ItemPointerData *removed, int nremoved,
					bool by_read)
{
	Page		page = BufferGetPage(buf);
	BlockNumber emptied = InvalidBlockNumber;
	char	   *hk = NULL;
	int			hklen = 0;
	bool		unlinked = false;

	if (!DdbPageIsRightmost(page) &&
		PageGetMaxOffsetNumber(page) < DdbPageFirstData(page))
	{
		DdbKeyItem	k = (DdbKeyItem) PageGetItem(page, PageGetItemId(page, DDB_HIKEY));

		hklen = k->keylen;
		hk = palloc(Max(hklen, 1));
		memcpy(hk, k->key, hklen);
		emptied = BufferGetBlockNumber(buf);
	}
	UnlockReleaseBuffer(buf);
	ddb_map_clear(rel, removed, nremoved);
	if (BlockNumberIsValid(emptied))
	{
		DDB_CHECK_PAUSE_UNLINK();
		unlinked = ddb_unlink_leaf(rel, emptied, hk, hklen, by_read);
		pfree(hk);
	}
	return unlinked;
}

/*
 * Reads clean up behind them.  A range scan that has walked over leaf
 * 'blkno' and found there nothing visible, only versions that no snapshot
 * can see any more (the head of a partition used as a queue, the items a
 * TTL sweep or a purge deleted), calls this once it has released the leaf:
 * the leaf is pruned, and unlinked if that empties it, as VACUUM would, so
 * that the next reader does not walk those versions again.  (A heap's
 * index scans mark such entries dead for the next one, _bt_killitems, and
 * its page reads prune, heap_page_prune_opt; here the dead versions are
 * whole items, so only their removal spares the next reader their leaves.)
 *
 * The caller holds the table's ShareUpdateExclusiveLock, taken without
 * waiting (ddb_scan.c): the unlink needs it (one unlinker per table), and
 * it keeps the prune out of ddb_verify's quiet tree and away from VACUUM.
 * A leaf another backend has locked is left alone; the unlink may wait
 * only for the share lock of a page it unlinked earlier and the free
 * space map's locks, holding no tree page, as it lists its leaves for
 * reuse (ddb_tree.c, "Reuse").
 * Never in recovery (a standby's reads change nothing).  The scan's
 * snapshot keeps the block from being reused (ddb_tree.c, rule 5), but
 * VACUUM may have unlinked it before the lock was taken.  Returns the
 * number of versions removed.
 */
int
ddb_prune_read_leaf(Relation rel, BlockNumber blkno)
{
	Buffer		buf;
	Page		page;
	ItemPointerData *removed;
	int			nremoved;

	Assert(!RecoveryInProgress());
	buf = ReadBuffer(rel, blkno);
	if (!ConditionalLockBuffer(buf))
	{
		ReleaseBuffer(buf);
		return 0;
	}
	ddb_check_leaf(rel, buf);
	page = BufferGetPage(buf);
	if (DdbPageIsDeleted(page))
	{
		UnlockReleaseBuffer(buf);
		return 0;
	}
	removed = palloc(sizeof(ItemPointerData) * MaxOffsetNumber);
	nremoved = ddb_prune_leaf(rel, buf, GlobalVisTestFor(rel), NULL, removed, NULL);
	if (nremoved == 0)
		UnlockReleaseBuffer(buf);
	else
		(void) release_pruned_leaf(rel, buf, removed, nremoved, true);
	pfree(removed);
	return nremoved;
}

/*
 * Record in the free space map every page of blocks [1, nblocks) that the
 * leaf walk and the row-id map's pass did not read or skip ('visited':
 * leaves, level-1 pages, map pages in use) and that is recyclable now: deleted
 * leaves whose safexid every snapshot has passed, and all-zero pages
 * (ddb_page_is_recyclable).  Deleted leaves not recyclable yet are counted
 * in *waiting: a later VACUUM records them.  Returns the number recorded.
 */
static BlockNumber
record_free_pages(Relation rel, const bool *visited, BlockNumber nblocks,
				  BufferAccessStrategy bstrategy, BlockNumber *waiting)
{
	BlockNumber nfree = 0;

	*waiting = 0;
	for (BlockNumber blkno = DDB_METAPAGE_BLKNO + 1; blkno < nblocks; blkno++)
	{
		Buffer		buf;
		Page		page;

		if (visited[blkno])
			continue;
		vacuum_delay_point();
		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, bstrategy);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		if (ddb_page_is_recyclable(page))
		{
			RecordFreeIndexPage(rel, blkno);
			nfree++;
		}
		else if (DdbPageGetOpaque(page)->page_id == DDB_PAGE_ID && DdbPageIsDeleted(page))
			(*waiting)++;
		UnlockReleaseBuffer(buf);
	}
	IndexFreeSpaceMapVacuum(rel);
	return nfree;
}

/* What one VACUUM did: VACUUM VERBOSE's line and autovacuum's log. */
typedef struct DdbVacuumReport
{
	BlockNumber leaves;			/* leaves pruned */
	BlockNumber skipped;		/* leaves skipped: all visible */
	BlockNumber unlinked;
	BlockNumber mapfreed;		/* row-id map leaves freed */
	BlockNumber free;			/* pages recorded free for reuse */
	BlockNumber waiting;		/* deleted earlier, not yet reusable */
	/* for the log only (log_vacuum) */
	TimestampTz start;
	PGRUsage	ru0;
	BufferUsage buffers;
	WalUsage	wal;
} DdbVacuumReport;

/*
 * Autovacuum's log line, as heap's (heap_vacuum_rel) with ddb's counts,
 * when log_autovacuum_min_duration asks for it.
 */
static void
log_vacuum(Relation rel, VacuumParams *params, DdbVacuumReport *r, DdbPruneStats *stats,
		   TransactionId OldestXmin, DdbFreezeState *fs, bool frozenxid_updated,
		   BlockNumber nblocks)
{
	BufferUsage buffers = {0};
	WalUsage	wal = {0};
	StringInfoData buf;

	if (params->log_min_duration != 0 &&
		!TimestampDifferenceExceeds(r->start, GetCurrentTimestamp(), params->log_min_duration))
		return;
	BufferUsageAccumDiff(&buffers, &pgBufferUsage, &r->buffers);
	WalUsageAccumDiff(&wal, &pgWalUsage, &r->wal);
	initStringInfo(&buf);
	appendStringInfo(&buf, "automatic %sof ddb table \"%s.%s.%s\"\n",
					 params->is_wraparound ? "vacuum to prevent wraparound " : "vacuum ",
					 get_database_name(MyDatabaseId),
					 get_namespace_name(RelationGetNamespace(rel)),
					 RelationGetRelationName(rel));
	appendStringInfo(&buf, "leaves: %u scanned, %u skipped as all visible, %u unlinked; row-id map leaves freed: %u; pages: %u in total, %u recorded free for reuse, %u deleted earlier and not yet reusable\n",
					 r->leaves, r->skipped, r->unlinked, r->mapfreed, nblocks, r->free, r->waiting);
	appendStringInfo(&buf, "versions: %.0f removed, %.0f remain, %.0f are dead but not yet removable\n",
					 stats->dead, stats->live, stats->recently_dead);
	appendStringInfo(&buf, "removable cutoff: %u, which was %d XIDs old when operation ended\n",
					 OldestXmin, (int32) (ReadNextTransactionId() - OldestXmin));
	if (frozenxid_updated)
		appendStringInfo(&buf, "new relfrozenxid: %u, which is %d XIDs ahead of previous value\n",
						 fs->NewRelfrozenXid, (int32) (fs->NewRelfrozenXid - fs->relfrozenxid));
	appendStringInfo(&buf, "buffer usage: %lld hits, %lld misses, %lld dirtied\n",
					 (long long) buffers.shared_blks_hit, (long long) buffers.shared_blks_read,
					 (long long) buffers.shared_blks_dirtied);
	appendStringInfo(&buf, "WAL usage: %lld records, %lld full page images, %llu bytes\n",
					 (long long) wal.wal_records, (long long) wal.wal_fpi,
					 (unsigned long long) wal.wal_bytes);
	appendStringInfo(&buf, "system usage: %s", pg_rusage_show(&r->ru0));
	ereport(LOG, (errmsg_internal("%s", buf.data)));
	pfree(buf.data);
}

/* One VACUUM's walk over the leaves (ddb_vacuum_rel). */
typedef struct VacuumLeafState
{
	Relation	rel;
	GlobalVisState *vistest;
	DdbFreezeState *fs;
	DdbPruneStats *stats;
	DdbVacuumReport *report;
	ItemPointerData *removed;	/* room for MaxOffsetNumber */
	DdbBlockSet seen;			/* blocks the walk read or skipped */
	bool		skip;			/* may skip leaves all visible (not aggressive) */
	Buffer		vmbuf;			/* a pinned visibility map page */
} VacuumLeafState;

/*
 * Prune and freeze the exclusively locked leaf in buf, mark it all visible
 * (ddb_vismap.c) when everything left on it is, and release it, unlinking
 * it when it is left without items.  Returns its right sibling as it was.
 */
static BlockNumber
vacuum_leaf(VacuumLeafState *vs, Buffer buf)
{
	Page		page = BufferGetPage(buf);
	BlockNumber blkno = BufferGetBlockNumber(buf);
	BlockNumber right;
	int			nremoved;

	ddb_block_set_add(&vs->seen, blkno);
	nremoved = ddb_prune_leaf(vs->rel, buf, vs->vistest, vs->fs, vs->removed, vs->stats);
	vs->report->leaves++;
	/* the right sibling is where a walk by right-links goes on either way */
	right = DdbPageGetOpaque(page)->right;
	if (vs->fs->all_visible && PageGetMaxOffsetNumber(page) >= DdbPageFirstData(page))
		ddb_vm_set(vs->rel, buf, &vs->vmbuf);
	if (release_pruned_leaf(vs->rel, buf, vs->removed, nremoved, false))
		vs->report->unlinked++;
	return right;
}

/* The walk's test (ddb_leaf_walk_next): may this VACUUM skip leaf blkno? */
static bool
skip_leaf(Relation rel, BlockNumber blkno, void *arg)
{
	VacuumLeafState *vs = (VacuumLeafState *) arg;

	if (!vs->skip || !ddb_vm_is_set(rel, blkno, &vs->vmbuf))
		return false;
	ddb_block_set_add(&vs->seen, blkno);
	vs->report->skipped++;
	return true;
}

/*
 * VACUUM: prune and freeze every leaf not skipped as all visible, left to
 * right, unlinking the leaves it leaves without items (ddb_tree.c,
 * "Unlinking empty leaves") and marking those it leaves all visible;
 * record the pages that may be reused in the free space map; then update
 * pg_class and the statistics.
 */
void
ddb_vacuum_rel(Relation rel, VacuumParams *params, BufferAccessStrategy bstrategy)
{
	TransactionId OldestXmin;
	MultiXactId OldestMxact;
	DdbFreezeState fs;
	DdbPruneStats stats = {0};
	GlobalVisState *vistest;
	BlockNumber nblocks = 0;
	bool		frozenxid_updated,
				minmulti_updated;
	ItemPointerData *removed = palloc(sizeof(ItemPointerData) * MaxOffsetNumber);
	DdbVacuumReport report = {0};
	bool		logged = IsAutoVacuumWorkerProcess() && params->log_min_duration >= 0;
	bool		aggressive;
	double		live;

	if (logged)
	{
		report.start = GetCurrentTimestamp();
		pg_rusage_init(&report.ru0);
		report.buffers = pgBufferUsage;
		report.wal = pgWalUsage;
	}
	aggressive = vacuum_set_xid_limits(rel,
						  params->freeze_min_age, params->freeze_table_age,
						  params->multixact_freeze_min_age,
						  params->multixact_freeze_table_age,
						  &OldestXmin, &OldestMxact,
						  &fs.FreezeLimit, &fs.MultiXactCutoff);
	fs.relfrozenxid = rel->rd_rel->relfrozenxid;
	fs.relminmxid = rel->rd_rel->relminmxid;
	/* lowered by every xid that stays unfrozen */
	fs.NewRelfrozenXid = OldestXmin;
	fs.NewRelminMxid = OldestMxact;
	fs.OldestXmin = OldestXmin;
	/* as heap's: DISABLE_PAGE_SKIPPING reads every leaf */
	if (params->options & VACOPT_DISABLE_PAGE_SKIPPING)
		aggressive = true;
	vistest = GlobalVisTestFor(rel);

	if (ddb_tree_exists(rel))
	{
		DdbLeafWalk walk;
		VacuumLeafState vs = {rel, vistest, &fs, &stats, &report, removed};

		/*
		 * The size under the extension lock: a block added since is locked
		 * by its allocator until it is initialized (ddb_new_buffer), so the
		 * free-page pass never mistakes one for a page nobody uses.
		 */
		LockRelationForExtension(rel, ExclusiveLock);
		nblocks = RelationGetNumberOfBlocks(rel);
		UnlockRelationForExtension(rel, ExclusiveLock);
		vs.seen.in = palloc0(sizeof(bool) * nblocks);
		vs.seen.n = nblocks;
		vs.skip = !aggressive;
		vs.vmbuf = InvalidBuffer;
		/* the map covers every leaf there is now, extended outside leaf locks */
		ddb_vm_extend(rel, nblocks, &vs.vmbuf);

		if (ddb_leaf_walk_start(rel, &walk, &vs.seen))
		{
			/* by the leaves' parents, past the leaves all visible */
			for (;;)
			{
				Buffer		buf;

				vacuum_delay_point();
				if (!BlockNumberIsValid(ddb_leaf_walk_next(rel, &walk, bstrategy,
														   skip_leaf, &vs, &buf)))
					break;
				(void) vacuum_leaf(&vs, buf);
			}
		}
		else
		{
			/* a tree of height one, or grown since: by right-links */
			Buffer		buf = ddb_descend(rel, NULL, 0, false, BUFFER_LOCK_EXCLUSIVE, NULL, NULL);

			for (;;)
			{
				BlockNumber blkno = vacuum_leaf(&vs, buf);

				if (blkno == InvalidBlockNumber)
					break;
				vacuum_delay_point();
				buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, bstrategy);
				LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
				ddb_check_leaf(rel, buf);
			}
		}
		if (BufferIsValid(vs.vmbuf))
			ReleaseBuffer(vs.vmbuf);
		report.mapfreed = ddb_map_free_empty(rel, bstrategy, &vs.seen);
		report.free = record_free_pages(rel, vs.seen.in, nblocks, bstrategy, &report.waiting);
		pfree(vs.seen.in);

		/*
		 * Backends that found no free space map fork ask it only now and
		 * then (DdbRelCache.fsm_skip) until their relcache entry is
		 * rebuilt: make sure it is, even when pg_class does not change
		 * below.
		 */
		if (report.free > 0)
			CacheInvalidateRelcache(rel);
	}
	pfree(removed);

	ereport((params->options & VACOPT_VERBOSE) ? INFO : DEBUG2,
			(errmsg("ddb table \"%s\": %u leaves scanned, %u skipped as all visible, %u leaves unlinked, %u row-id map leaves freed, %u pages free for reuse, %u deleted pages not yet reusable",
					RelationGetRelationName(rel), report.leaves, report.skipped,
					report.unlinked, report.mapfreed, report.free, report.waiting)));

	/*
	 * A VACUUM that skipped leaves saw neither their versions nor their
	 * xids: it counts the items by the density the table had (as heap's
	 * does for the pages it skips) and leaves relfrozenxid and relminmxid
	 * as they were, which only a VACUUM that reads every leaf advances.
	 */
	live = stats.live;
	if (report.skipped > 0)
	{
		live = vac_estimate_reltuples(rel, nblocks, nblocks - report.skipped, stats.live);
		fs.NewRelfrozenXid = InvalidTransactionId;
		fs.NewRelminMxid = InvalidMultiXactId;
	}
	nblocks = RelationGetNumberOfBlocks(rel);
	vac_update_relstats(rel, nblocks, live, 0, false,
						fs.NewRelfrozenXid, fs.NewRelminMxid,
						&frozenxid_updated, &minmulti_updated, false);
	pgstat_report_vacuum(RelationGetRelid(rel), rel->rd_rel->relisshared,
						 live, stats.recently_dead);
	if (logged)
		log_vacuum(rel, params, &report, &stats, OldestXmin, &fs, frozenxid_updated, nblocks);
}

/*
 * Prune one leaf before splitting it (called with the leaf exclusively
 * locked, its parent possibly locked too).  Returns true if space was
 * freed.  Map entries are cleared by the caller once locks are released.
 */
bool
ddb_prune_before_split(Relation rel, Buffer buf, ItemPointerData *removed, int *nremoved)
{
	*nremoved = ddb_prune_leaf(rel, buf, GlobalVisTestFor(rel), NULL, removed, NULL);
	return *nremoved > 0;
}

/* ------------------------------------------------------------------------
 * ANALYZE: sample leaves only; other pages (metapage, internal, map) are
 * skipped, which keeps the estimate unbiased per leaf.
 * ------------------------------------------------------------------------
 */

bool
ddb_analyze_next_block(Relation rel, BlockNumber blockno,
					   BufferAccessStrategy bstrategy, Buffer *buf, OffsetNumber *off)
{
	Page		page;

	*buf = ReadBufferExtended(rel, MAIN_FORKNUM, blockno, RBM_NORMAL, bstrategy);
	LockBuffer(*buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(*buf);
	if (PageIsNew(page) || DdbPageGetOpaque(page)->page_id != DDB_PAGE_ID ||
		!(DdbPageGetOpaque(page)->flags & DDB_PAGE_LEAF) || DdbPageIsDeleted(page))
	{
		UnlockReleaseBuffer(*buf);
		*buf = InvalidBuffer;
		return false;
	}
	*off = DdbPageFirstData(page);
	return true;
}

/*
 * Next live tuple of the sampled leaf, counting live and dead rows exactly
 * as heapam_scan_analyze_next_tuple does.  NULL at the end of the page
 * (which is then released).
 */
HeapTuple
ddb_analyze_next_tuple(Relation rel, Buffer *buf, OffsetNumber *off,
					   TransactionId OldestXmin, double *liverows, double *deadrows)
{
	Page		page = BufferGetPage(*buf);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);

	for (; *off <= maxoff; (*off)++)
	{
		ItemId		iid = PageGetItemId(page, *off);
		DdbLeafItem li = (DdbLeafItem) PageGetItem(page, iid);
		HeapTupleData htup;
		bool		sample = false;

		(void) ddb_leaf_htup(rel, page, *off, &htup);

		switch (HeapTupleSatisfiesVacuum(&htup, OldestXmin, *buf))
		{
			case HEAPTUPLE_LIVE:
				sample = true;
				*liverows += 1;
				break;
			case HEAPTUPLE_DEAD:
			case HEAPTUPLE_RECENTLY_DEAD:
				*deadrows += 1;
				break;
			case HEAPTUPLE_INSERT_IN_PROGRESS:
				if (TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetXmin(htup.t_data)))
				{
					sample = true;
					*liverows += 1;
				}
				break;
			case HEAPTUPLE_DELETE_IN_PROGRESS:
				if (TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetUpdateXid(htup.t_data)))
					*deadrows += 1;
				else
				{
					sample = true;
					*liverows += 1;
				}
				break;
		}
		if (sample)
		{
			HeapTuple	t = ddb_expand_leaf(rel, page, li, htup.t_data,
											 htup.t_len);

			(*off)++;
			return t;
		}
	}
	UnlockReleaseBuffer(*buf);
	*buf = InvalidBuffer;
	return NULL;
}
