/*-------------------------------------------------------------------------
 *
 * ddb_scan.c
 *	  Ordered range scans and point lookups over the ddb tree.
 *
 * A range scan returns, in key order (forward) or reverse key order
 * (backward), the versions visible to a snapshot whose item keys lie in
 * [lo, hi).  It works a leaf page at a time: under the page's share lock it
 * judges every item in range with HeapTupleSatisfiesVisibility and copies
 * the visible ones out as full tuples (nbtree's _bt_saveitem pattern), then
 * releases the page and hands the copies out one by one.  No pin or lock is
 * held between calls.
 *
 * Forward scans follow right-links: items only move right, so the page to
 * the right of one we have read holds everything not yet seen; a leaf
 * unlinked meanwhile is a deleted page whose right-link leads on
 * (ddb_leaf_step).  It may also hold items already seen: a split may have
 * moved the read leaf's upper items into it (ddb_tree.c, "Long keys"),
 * and a later split of it on to the leaf after it, so the scan starts
 * each leaf at the highest high key of the leaves it has read.  Backward
 * scans re-descend for "the last item below the low bound of the page just
 * read" instead of keeping left-links (DESIGN.md), which needs no extra
 * locking protocol and costs one descent per page.
 *
 * A caller that will take only a few tuples says so (ddb_range_want: a
 * Query's Limit, a SQL LIMIT over the scan alone): its batches then copy
 * no more than that many in all, a batch stopping inside its leaf once it
 * holds them, instead of copying the rest of the leaf (a newest-first
 * Query of one item copied about 20).  Should the caller ask for more
 * after all, the scan goes on from the last item it judged, by its item
 * key, as a backward scan goes from page to page, and reads whole leaves
 * from there: a forward scan descends again to the first item above it
 * (item key || 0x00, the least byte string above it in memcmp order), a
 * backward one to the last item below it.  Items move only by splits,
 * which keep the key order, so the key finds the place wherever they
 * went; the snapshot is the scan's throughout.  In test builds,
 * ddb.check_scan_batch caps every batch, so that a test can put any scan
 * through these resumptions (scan_batches, scan-resume).
 *
 * Reads clean up behind them.  A batch that found nothing visible on its
 * leaf, only versions that no snapshot sees any more (dead_to_all: the head
 * of a partition used as a queue, items a TTL sweep or a purge deleted, an
 * insert rolled back), has the leaf pruned once it is released, and
 * unlinked when that empties it (ddb_prune_read_leaf, as VACUUM does), so
 * the next reader of the range does not walk those versions again: the
 * first read after 290 deletes at a partition's head prunes 42 leaves, and
 * the next reads the head in 2 buffers instead of 44.  (A heap's index
 * scans mark such entries dead for the next scan, and its page reads prune;
 * here the dead versions are whole items, so only their removal spares the
 * next reader their leaves.)  A leaf where the batch found a version its
 * snapshot sees is left to the writers' prunes and VACUUM, so a read that
 * finds something on every leaf it walks writes nothing.  The cleaning
 * takes the table's ShareUpdateExclusiveLock without waiting (clean_behind)
 * and gives up, until the scan's next rescan, when another backend holds
 * it: VACUUM, ANALYZE, ddb_verify, another reader cleaning.  A leaf the
 * prune empties but the unlink leaves (a busy neighbour, the first or last
 * child of its parent) is left to VACUUM.  Never in recovery or in parallel
 * mode.  The pages a read unlinks go back to its backend's own splits
 * and, at its next unlink, to the free space map (ddb_tree.c, "Reuse");
 * the statistics' dead versions are left as they are, so that autovacuum
 * still comes to record them.
 *
 * Point lookups (GetItem) are a forward range scan over the versions of one
 * key that stops at the first visible version; under an MVCC snapshot at
 * most one version of a key is visible.
 *
 * Two forms of what a reader gets: full tuples of the row type (the
 * executor's, ddb_expand_tuple), or the stored versions as they are on the
 * leaf, copied with their encoded keys (DdbStoredItem: ddb_range_begin_stored,
 * ddb_lookup_stored).  The item API builds its jsonb items straight from
 * the stored form (ddb_stored_to_item), and the planner's key scan fills
 * its virtual slot from it, so neither forms the full tuple.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/predicate.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "ddb.h"
#include "engine/ddb_page.h"

typedef struct DdbRangeScanData
{
	Relation	rel;
	Snapshot	snapshot;
	bool		forward;
	bool		stored;			/* hand out DdbStoredItems, not full tuples */
	char	   *lo;				/* inclusive lower bound, NULL = -infinity */
	int			lolen;
	char	   *hi;				/* exclusive upper bound, NULL = +infinity */
	int			hilen;

	bool		started;
	bool		done;			/* no more pages to read */
	BlockNumber next_block;		/* forward: next leaf to read */
	char	   *read_below;		/* forward: highest high key of the leaves read */
	int			read_belowlen;
	int			read_belowcap;	/* read_below's allocation, in scan_cxt */
	char	   *next_hi;		/* backward: exclusive bound of the next batch */
	int			next_hilen;
	bool		next_hi_inf;	/* backward: next batch is the left end */

	MemoryContext scan_cxt;		/* lives as long as the scan */
	MemoryContext batch_cxt;	/* holds the current batch of tuples */
	HeapTuple  *batch;
	OffsetNumber *batch_off;	/* each one's offset on batch_leaf */
	int			nbatch;
	int			ibatch;
	int			maxbatch;
	BlockNumber batch_leaf;		/* the leaf the current batch was read from */
	int			want;			/* ddb_range_want's hint, 0 = none */
	int			want_left;		/* rows the hint still lets batches copy;
								 * 0: none left, or no hint (whole leaves) */

	/* reads clean up behind them (see the header) */
	bool		clean_allowed;	/* MVCC snapshot, not in recovery */
	bool		clean;			/* ... and no cleaning has given up since
								 * the scan (or its rescan) began */
	bool		clean_locked;	/* holds ShareUpdateExclusiveLock to do so */
	bool		resumed;		/* the next batch goes on inside the leaf
								 * where a capped one stopped */
	int			batch_dead;		/* versions the batch found dead to all */
	GlobalVisState *vistest;	/* for batch_dead; NULL until needed */
} DdbRangeScanData;

#ifdef DDB_CHECKS
static int	check_scan_batch = 0;

void
ddb_scan_checks_init(void)
{
	DefineCustomIntVariable("ddb.check_scan_batch",
							"Test only: every batch of a range scan holds at most this many versions (0: no cap).",
							NULL, &check_scan_batch, 0, 0, INT_MAX,
							PGC_USERSET, GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);
}
#else
#define check_scan_batch 0
#endif

static char *
copy_bytes(const char *p, int len)
{
	char	   *c;

	if (p == NULL)
		return NULL;
	c = palloc(Max(len, 1));
	memcpy(c, p, len);
	return c;
}

static void
ddb_range_set(DdbRangeScan scan, const DdbRange *range, bool forward)
{
	if (scan->lo)
		pfree(scan->lo);
	if (scan->hi)
		pfree(scan->hi);
	if (scan->next_hi)
		pfree(scan->next_hi);
	scan->lo = copy_bytes(range->lo, range->lolen);
	scan->lolen = range->lolen;
	scan->hi = copy_bytes(range->hi, range->hilen);
	scan->hilen = range->hilen;
	scan->forward = forward;
	scan->started = false;
	scan->done = false;
	scan->next_block = InvalidBlockNumber;
	scan->read_belowlen = 0;
	scan->next_hi = NULL;
	scan->next_hilen = 0;
	scan->next_hi_inf = false;
	scan->nbatch = scan->ibatch = 0;
	scan->want_left = scan->want;
	scan->resumed = false;
	scan->clean = scan->clean_allowed;
	MemoryContextReset(scan->batch_cxt);
}

DdbRangeScan
ddb_range_begin(Relation rel, Snapshot snapshot, const DdbRange *range,
				bool forward)
{
	DdbRangeScan scan = palloc0(sizeof(DdbRangeScanData));

	scan->rel = rel;
	scan->snapshot = snapshot;
	scan->scan_cxt = CurrentMemoryContext;
	scan->batch_cxt = AllocSetContextCreate(CurrentMemoryContext,
											"ddb range scan batch",
											ALLOCSET_DEFAULT_SIZES);
	ddb_range_set(scan, range, forward);

	/*
	 * Relation-level SIREAD lock for every reader (SQL, Query, Scan): coarse,
	 * but SERIALIZABLE stays serializable.  A no-op at other levels.
	 */
	if (snapshot != NULL && IsMVCCSnapshot(snapshot))
	{
		PredicateLockRelation(rel, snapshot);
		scan->clean = scan->clean_allowed = !RecoveryInProgress();
	}
	return scan;
}

/*
 * A range scan whose ddb_range_next_stored hands out the stored versions
 * with their keys (for the item API), instead of full tuples.
 */
DdbRangeScan
ddb_range_begin_stored(Relation rel, Snapshot snapshot, const DdbRange *range,
					   bool forward)
{
	DdbRangeScan scan = ddb_range_begin(rel, snapshot, range, forward);

	scan->stored = true;
	return scan;
}

/*
 * The caller will take at most n tuples of each start of the range (a
 * hint: n <= 0 is none): batches copy no more than n in all (see the
 * header).  Call before the first ddb_range_next; a rescan keeps it.
 */
void
ddb_range_want(DdbRangeScan scan, int n)
{
	scan->want = scan->want_left = Max(n, 0);
}

void
ddb_range_rescan(DdbRangeScan scan, const DdbRange *range, bool forward)
{
	ddb_range_set(scan, range, forward);
}

void
ddb_range_end(DdbRangeScan scan)
{
	Assert(!scan->clean_locked);
	MemoryContextDelete(scan->batch_cxt);
	if (scan->lo)
		pfree(scan->lo);
	if (scan->hi)
		pfree(scan->hi);
	if (scan->next_hi)
		pfree(scan->next_hi);
	if (scan->read_below)
		pfree(scan->read_below);
	pfree(scan);
}

/*
 * A palloc'd copy of a visible leaf version, as it is stored (key columns
 * NULL), with its encoded key.  The tuple data is MAXALIGNed, as on the
 * page, so heap_getattr reads it.  The caller holds the page's lock.
 */
static DdbStoredItem *
ddb_copy_stored(Relation rel, Page page, DdbLeafItem li, HeapTuple htup)
{
	Size		hdr = MAXALIGN(sizeof(DdbStoredItem));
	const char *prefix;
	int			plen = ddb_leaf_prefix(page, &prefix);
	DdbStoredItem *si = palloc(hdr + MAXALIGN(htup->t_len) + plen + li->keylen);
	char	   *key = (char *) si + hdr + MAXALIGN(htup->t_len);

	si->tuple.t_len = htup->t_len;
	si->tuple.t_self = li->tid;
	si->tuple.t_tableOid = RelationGetRelid(rel);
	si->tuple.t_data = (HeapTupleHeader) ((char *) si + hdr);
	memcpy(si->tuple.t_data, htup->t_data, htup->t_len);
	if (plen > 0)
		memcpy(key, prefix, plen);
	memcpy(key + plen, li->key, li->keylen);
	si->key = key;
	si->keylen = plen + li->keylen;
	return si;
}

static void
batch_add(DdbRangeScan scan, HeapTuple tuple, OffsetNumber off)
{
	if (scan->nbatch == scan->maxbatch)
	{
		MemoryContext old = MemoryContextSwitchTo(scan->batch_cxt);
		int			oldmax = scan->maxbatch;
		Size		each = sizeof(HeapTuple) + sizeof(OffsetNumber);

		/* one chunk: the tuples, then their offsets */
		scan->maxbatch = Max(64, oldmax * 2);
		if (scan->batch == NULL)
			scan->batch = palloc(each * scan->maxbatch);
		else
		{
			scan->batch = repalloc(scan->batch, each * scan->maxbatch);
			memmove(scan->batch + scan->maxbatch, scan->batch + oldmax,
					sizeof(OffsetNumber) * oldmax);
		}
		scan->batch_off = (OffsetNumber *) (scan->batch + scan->maxbatch);
		MemoryContextSwitchTo(old);
	}
	scan->batch_off[scan->nbatch] = off;
	scan->batch[scan->nbatch++] = tuple;
}

/*
 * Is version 't', which the scan's snapshot does not see, one that no
 * snapshot sees any more: an aborted insert (HeapTupleSatisfiesVisibility
 * has just set its hint), or a delete or update whose xid every snapshot
 * has passed (GlobalVisTestIsRemovableXid) and that committed -- by its
 * hint, or, when the hint waits for the commit's WAL to be flushed (an
 * asynchronous commit: SetHintBits), by the commit log.  A first look;
 * the prune judges again (HeapTupleSatisfiesVacuumHorizon).
 */
static bool
dead_to_all(DdbRangeScan scan, HeapTupleHeader t)
{
	TransactionId xmax;

	if (HeapTupleHeaderXminInvalid(t))
		return true;
	if ((t->t_infomask & (HEAP_XMAX_INVALID | HEAP_XMAX_IS_MULTI)) ||
		HEAP_XMAX_IS_LOCKED_ONLY(t->t_infomask))
		return false;
	xmax = HeapTupleHeaderGetRawXmax(t);
	if (!TransactionIdIsNormal(xmax))
		return false;
	if (scan->vistest == NULL)
		scan->vistest = GlobalVisTestFor(scan->rel);
	if (!GlobalVisTestIsRemovableXid(scan->vistest, xmax))
		return false;
	return (t->t_infomask & HEAP_XMAX_COMMITTED) || TransactionIdDidCommit(xmax);
}

/*
 * Judge leaf item 'off' of the share-locked page in 'buf' and, if visible,
 * add an expanded copy to the batch.
 */
static void
ddb_scan_item(DdbRangeScan scan, Buffer buf, Page page, OffsetNumber off)
{
	ItemId		iid = PageGetItemId(page, off);
	DdbLeafItem li = (DdbLeafItem) PageGetItem(page, iid);
	HeapTupleData htup;
	bool		visible;

	(void) ddb_leaf_htup(scan->rel, page, off, &htup);

	/* items come out of the tree in range */
	DdbCheck(scan->lo == NULL || ddb_compare_leaf(page, scan->lo, scan->lolen, li) <= 0);
	DdbCheck(scan->hi == NULL || ddb_compare_leaf(page, scan->hi, scan->hilen, li) > 0);

	visible = HeapTupleSatisfiesVisibility(&htup, scan->snapshot, buf);
	HeapCheckForSerializableConflictOut(visible, scan->rel, &htup, buf,
										scan->snapshot);
	if (visible)
	{
		MemoryContext old = MemoryContextSwitchTo(scan->batch_cxt);

		if (scan->stored)
			batch_add(scan, &ddb_copy_stored(scan->rel, page, li, &htup)->tuple, off);
		else
			batch_add(scan, ddb_expand_leaf(scan->rel, page, li, htup.t_data, htup.t_len),
					  off);
		MemoryContextSwitchTo(old);
	}
	else if (scan->clean && scan->nbatch == 0 && dead_to_all(scan, htup.t_data))
		scan->batch_dead++;		/* (a batch that holds a version cleans nothing) */
}

/*
 * How many versions the batch about to be read may hold, 0 for no cap:
 * what the hint has left (a batch that found none visible leaves it
 * whole), or the test builds' cap.
 */
static int
batch_cap(DdbRangeScan scan)
{
	int			cap = scan->want_left;

	if (check_scan_batch > 0 && (cap == 0 || check_scan_batch < cap))
		cap = check_scan_batch;
	return cap;
}

/*
 * A palloc'd copy, in the scan's context, of the item key of leaf item
 * 'off', followed by a 0x00 byte when 'successor' (the least byte string
 * above it).
 */
static char *
resume_key(DdbRangeScan scan, Page page, OffsetNumber off, bool successor, int *len)
{
	DdbLeafItem li = (DdbLeafItem) PageGetItem(page, PageGetItemId(page, off));
	const char *prefix;
	int			plen = ddb_leaf_prefix(page, &prefix);
	char	   *key = MemoryContextAlloc(scan->scan_cxt,
										 plen + li->keylen + DDB_SUFFIX_LEN + 1);

	ddb_leaf_item_key(page, li, key, len);
	if (successor)
		key[(*len)++] = '\0';
	return key;
}

/* Read the next forward batch; false when the range is exhausted. */
static bool
ddb_scan_forward_batch(DdbRangeScan scan)
{
	Buffer		buf;
	Page		page;
	OffsetNumber off;
	OffsetNumber maxoff;

	if (!scan->started)
	{
		scan->started = true;
		buf = ddb_descend(scan->rel, scan->lo, scan->lolen, false,
						  BUFFER_LOCK_SHARE, NULL, NULL);
		page = BufferGetPage(buf);
		off = ddb_leaf_search(page, scan->lo, scan->lolen, false);
	}
	else
	{
		if (scan->next_block == InvalidBlockNumber)
			return false;
		buf = ddb_leaf_step(scan->rel, scan->next_block, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		off = DdbPageFirstData(page);

		/*
		 * Items below the high key of the leaf read last were read there: a
		 * split into this leaf may have moved them here since.
		 */
		if (off <= PageGetMaxOffsetNumber(page) &&
			ddb_compare_leaf(page, scan->read_below, scan->read_belowlen,
							 (DdbLeafItem) PageGetItem(page, PageGetItemId(page, off))) > 0)
			off = ddb_leaf_search(page, scan->read_below, scan->read_belowlen, false);
	}
	scan->batch_leaf = BufferGetBlockNumber(buf);

	maxoff = PageGetMaxOffsetNumber(page);
	{
		/*
		 * hi against the page's prefix once: below every key of the page's
		 * key space (done), above all of them (no check), else its rest
		 * against each item's stored key.
		 */
		const char *hi = scan->hi;
		int			hilen = scan->hilen;
		int			c = hi ? ddb_strip_leaf_prefix(page, &hi, &hilen) : 1;
		int			cap = batch_cap(scan);

		if (c < 0)
			off = maxoff + 1;
		for (; off <= maxoff; off++)
		{
			if (c == 0 &&
				ddb_compare_stored(hi, hilen,
								   (DdbLeafItem) PageGetItem(page, PageGetItemId(page, off))) <= 0)
				break;
			ddb_scan_item(scan, buf, page, off);
			if (cap > 0 && scan->nbatch >= cap && off < maxoff)
			{
				/* enough: a later batch starts above this item */
				if (scan->lo)
					pfree(scan->lo);
				scan->lo = resume_key(scan, page, off, true, &scan->lolen);
				scan->started = false;
				scan->resumed = true;
				UnlockReleaseBuffer(buf);
				return true;
			}
		}
		if (off <= maxoff || c < 0)
			scan->done = true;
	}

	/* Past the high key of this page everything is beyond hi? */
	if (!scan->done && !DdbPageIsRightmost(page) && scan->hi)
	{
		DdbKeyItem	hk = (DdbKeyItem) PageGetItem(page, PageGetItemId(page, DDB_HIKEY));

		if (ddb_compare_bytes(hk->key, hk->keylen, scan->hi, scan->hilen) >= 0)
			scan->done = true;
	}
	scan->next_block = DdbPageGetOpaque(page)->right;
	if (scan->next_block == InvalidBlockNumber)
		scan->done = true;
	else if (!scan->done)
	{
		DdbKeyItem	hk = (DdbKeyItem) PageGetItem(page, PageGetItemId(page, DDB_HIKEY));

		/*
		 * Only ever raised: when this leaf took items from the leaf read
		 * before and has split since, its high key is below that leaf's, and
		 * the leaf to its right holds items read there.
		 */
		if (scan->read_belowlen == 0 ||
			ddb_compare_bytes(hk->key, hk->keylen, scan->read_below, scan->read_belowlen) > 0)
		{
			if (hk->keylen > scan->read_belowcap)
			{
				if (scan->read_below)
					pfree(scan->read_below);
				scan->read_belowcap = Max(hk->keylen, 64);
				scan->read_below = MemoryContextAlloc(scan->scan_cxt, scan->read_belowcap);
			}
			memcpy(scan->read_below, hk->key, hk->keylen);
			scan->read_belowlen = hk->keylen;
		}
	}
	UnlockReleaseBuffer(buf);
	return true;
}

/* Read the next backward batch; false when the range is exhausted. */
static bool
ddb_scan_backward_batch(DdbRangeScan scan)
{
	Buffer		buf;
	Page		page;
	OffsetNumber off;
	char	   *bound;
	int			boundlen;
	char	   *low;
	int			lowlen;

	if (!scan->started)
	{
		scan->started = true;
		bound = scan->hi;
		boundlen = scan->hilen;
	}
	else
	{
		if (scan->next_hi_inf)
			return false;
		bound = scan->next_hi;
		boundlen = scan->next_hilen;
	}

	{
		/* the low bound outlives this call: allocate it with the scan */
		MemoryContext old = MemoryContextSwitchTo(scan->scan_cxt);

		buf = ddb_descend(scan->rel, bound, boundlen, true, BUFFER_LOCK_SHARE,
						  &low, &lowlen);
		MemoryContextSwitchTo(old);
	}
	page = BufferGetPage(buf);
	scan->batch_leaf = BufferGetBlockNumber(buf);

	/* start at the last item < bound */
	off = bound == NULL ? PageGetMaxOffsetNumber(page) + 1 :
		ddb_leaf_search(page, bound, boundlen, false);
	{
		/* lo against the page's prefix once, as hi going forward */
		const char *lo = scan->lo;
		int			lolen = scan->lolen;
		int			c = lo ? ddb_strip_leaf_prefix(page, &lo, &lolen) : -1;
		int			cap = batch_cap(scan);

		if (c > 0)
			off = DdbPageFirstData(page);
		for (off = off - 1; off >= DdbPageFirstData(page); off--)
		{
			if (c == 0 &&
				ddb_compare_stored(lo, lolen,
								   (DdbLeafItem) PageGetItem(page, PageGetItemId(page, off))) > 0)
				break;
			ddb_scan_item(scan, buf, page, off);
			if (cap > 0 && scan->nbatch >= cap && off > DdbPageFirstData(page))
			{
				/* enough: a later batch ends below this item */
				if (scan->next_hi)
					pfree(scan->next_hi);
				scan->next_hi = resume_key(scan, page, off, false, &scan->next_hilen);
				scan->resumed = true;
				UnlockReleaseBuffer(buf);
				if (low)
					pfree(low);
				return true;
			}
		}
		if (off >= DdbPageFirstData(page) || c > 0)
			scan->done = true;
	}
	UnlockReleaseBuffer(buf);

	/* The next batch ends below this page's low bound. */
	if (scan->next_hi)
		pfree(scan->next_hi);
	scan->next_hi = low;
	scan->next_hilen = lowlen;
	if (low == NULL)
		scan->done = true;		/* this was the leftmost page */
	else if (scan->lo && ddb_compare_bytes(low, lowlen, scan->lo, scan->lolen) <= 0)
		scan->done = true;		/* everything left of here is below lo */
	return true;
}

/*
 * The batch just read found nothing visible on its leaf, and versions no
 * snapshot sees: prune the leaf behind the scan (ddb_prune_read_leaf).
 * Under the table's ShareUpdateExclusiveLock, taken without waiting and
 * held until ddb_range_next returns (one lock for a walk over many such
 * leaves); when another backend holds it (VACUUM, ANALYZE, ddb_verify, a
 * reader cleaning up), this scan leaves the cleaning to others.
 */
static void
clean_behind(DdbRangeScan scan)
{
	/* (a parallel group's members would not exclude each other) */
	if (IsInParallelMode())
		return;
	if (!scan->clean_locked)
	{
		LOCKTAG		tag;

		/*
		 * Not ConditionalLockRelation: no invalidation messages are taken
		 * in the middle of a scan (the relation's own lock is held, and
		 * the cleaning needs nothing new of its relcache entry), and a full
		 * lock table gives up the cleaning, not the read.
		 */
		SET_LOCKTAG_RELATION(tag, scan->rel->rd_lockInfo.lockRelId.dbId,
							 scan->rel->rd_lockInfo.lockRelId.relId);
		if (LockAcquireExtended(&tag, ShareUpdateExclusiveLock, false, true, false,
								NULL) == LOCKACQUIRE_NOT_AVAIL)
		{
			scan->clean = false;
			return;
		}
		scan->clean_locked = true;
	}
	(void) ddb_prune_read_leaf(scan->rel, scan->batch_leaf);
}

static HeapTuple
range_next(DdbRangeScan scan)
{
	for (;;)
	{
		bool		partial;

		if (scan->ibatch < scan->nbatch)
			return scan->batch[scan->ibatch++];

		if (scan->done)
			return NULL;

		/* a walk over many empty batches, and their cleaning, can be cancelled */
		CHECK_FOR_INTERRUPTS();

		/* batch exhausted: forget it and read the next page */
		MemoryContextReset(scan->batch_cxt);
		scan->batch = NULL;
		scan->batch_off = NULL;
		scan->maxbatch = 0;
		scan->nbatch = scan->ibatch = 0;

		if (!ddb_tree_exists(scan->rel))
		{
			scan->done = true;
			return NULL;
		}
		/*
		 * A leaf is cleaned when the scan found nothing visible on it: on
		 * the part of it in range, not on a rest a capped batch left
		 * (which holds no more than the cap's next visible version, and
		 * would make where the caps fall decide).
		 */
		partial = scan->resumed;
		scan->resumed = false;
		scan->batch_dead = 0;
		if (scan->forward ? !ddb_scan_forward_batch(scan) : !ddb_scan_backward_batch(scan))
		{
			scan->done = true;
			return NULL;
		}
		if (scan->batch_dead > 0 && scan->nbatch == 0 && scan->clean && !partial)
			clean_behind(scan);
		if (scan->want_left > 0)
			scan->want_left = Max(scan->want_left - scan->nbatch, 0);
	}
}

/*
 * Next visible tuple of the range, or NULL at the end.  The tuple lives
 * until the next call (it belongs to the scan's current batch).
 */
HeapTuple
ddb_range_next(DdbRangeScan scan)
{
	HeapTuple	tuple = range_next(scan);

	if (scan->clean_locked)
	{
		UnlockRelation(scan->rel, ShareUpdateExclusiveLock);
		scan->clean_locked = false;
	}
	return tuple;
}

/*
 * The leaf the tuple ddb_range_next returned last was read from, and its
 * offset there in *off (where it was then: a split or an insert beside it
 * may have moved it since).
 */
BlockNumber
ddb_range_leaf(DdbRangeScan scan, OffsetNumber *off)
{
	Assert(scan->ibatch > 0);
	*off = scan->batch_off[scan->ibatch - 1];
	return scan->batch_leaf;
}

/*
 * Next visible version of a scan begun by ddb_range_begin_stored, or NULL
 * at the end.  It lives until the next call.
 */
DdbStoredItem *
ddb_range_next_stored(DdbRangeScan scan)
{
	Assert(scan->stored);
	return (DdbStoredItem *) ddb_range_next(scan);
}

static void *ddb_lookup_internal(Relation rel, Snapshot snapshot, const char *key,
								 int keylen, bool stored);

/*
 * GetItem: the version of 'key' visible to 'snapshot', expanded into a
 * palloc'd tuple in the caller's memory context, or NULL.  One descent,
 * then the key's versions (under an MVCC snapshot at most one is visible);
 * they may continue on the next leaf when a run of versions was split.
 */
HeapTuple
ddb_lookup(Relation rel, Snapshot snapshot, const char *key, int keylen)
{
	return (HeapTuple) ddb_lookup_internal(rel, snapshot, key, keylen, false);
}

/* The same as its stored version with its key (the item API's GetItem). */
DdbStoredItem *
ddb_lookup_stored(Relation rel, Snapshot snapshot, const char *key, int keylen)
{
	return (DdbStoredItem *) ddb_lookup_internal(rel, snapshot, key, keylen, true);
}

static void *
ddb_lookup_internal(Relation rel, Snapshot snapshot, const char *key, int keylen,
					bool stored)
{
	Buffer		buf;

	if (IsMVCCSnapshot(snapshot))
		PredicateLockRelation(rel, snapshot);
	if (!ddb_tree_exists(rel))
		return NULL;
	buf = ddb_descend(rel, key, keylen, false, BUFFER_LOCK_SHARE, NULL, NULL);
	for (;;)
	{
		Page		page = BufferGetPage(buf);
		OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
		BlockNumber next;
		const char *rest = key; /* the key without the leaf's prefix */
		int			restlen = keylen;
		bool		inpage = ddb_strip_leaf_prefix(page, &rest, &restlen) == 0;

		for (OffsetNumber off = ddb_leaf_search(page, key, keylen, false); off <= maxoff; off++)
		{
			HeapTupleData htup;
			DdbLeafItem li = ddb_leaf_htup(rel, page, off, &htup);
			bool		visible;

			if (!inpage || ddb_compare_bytes(rest, restlen, li->key, li->keylen) != 0)
			{
				UnlockReleaseBuffer(buf);
				return NULL;
			}
			visible = HeapTupleSatisfiesVisibility(&htup, snapshot, buf);
			HeapCheckForSerializableConflictOut(visible, rel, &htup, buf, snapshot);
			if (visible)
			{
				void	   *result;

				if (stored)
					result = ddb_copy_stored(rel, page, li, &htup);
				else
					result = ddb_expand_tuple(rel, key, keylen,
											  htup.t_data, htup.t_len, &li->tid);
				UnlockReleaseBuffer(buf);
				return result;
			}
		}
		/*
		 * Past the last item.  The key's versions go on to the right only if
		 * the high key falls inside them (a separator that is the key plus
		 * part of a version suffix).
		 */
		if (DdbPageIsRightmost(page))
			break;
		{
			DdbKeyItem	hk = (DdbKeyItem) PageGetItem(page, PageGetItemId(page, DDB_HIKEY));

			if (hk->keylen <= keylen || memcmp(hk->key, key, keylen) != 0)
				break;
		}
		next = DdbPageGetOpaque(page)->right;
		UnlockReleaseBuffer(buf);
		buf = ddb_leaf_step(rel, next, BUFFER_LOCK_SHARE);
	}
	UnlockReleaseBuffer(buf);
	return NULL;
}

/*
 * The current version of key, as the item API's writes see it: the live
 * version (SnapshotDirty).  Returns true with its tid; false when there is
 * none, or, setting *wait_xid, when another transaction is inserting,
 * changing or locking the key's version (the caller waits and retries).
 */
bool
ddb_find_current(Relation rel, const char *key, int keylen, ItemPointer tid,
				 TransactionId *wait_xid)
{
	return ddb_find_current_ext(rel, key, keylen, tid, wait_xid, NULL, NULL, NULL);
}

/*
 * ddb_find_current that also calls 'found' on the current version while its
 * leaf is still share-locked (buf, off, and the version's header in htup),
 * so a caller can copy it, or judge it by another snapshot, without a
 * second lookup through the row-id map.  When first_leaf is not NULL, it is
 * set to the key's first leaf as the descent found it (InvalidBlockNumber
 * for a table without a tree), where an insert of the key can start
 * (ddb_tree_insert_at).
 */
bool
ddb_find_current_ext(Relation rel, const char *key, int keylen, ItemPointer tid,
					 TransactionId *wait_xid, DdbCurrentFn found, void *arg,
					 BlockNumber *first_leaf)
{
	SnapshotData dirty;
	Buffer		buf;
	StringInfoData succ;
	bool		has_succ;

	*wait_xid = InvalidTransactionId;
	if (first_leaf)
		*first_leaf = InvalidBlockNumber;
	if (!ddb_tree_exists(rel))
		return false;
	initStringInfo(&succ);
	has_succ = ddb_key_successor(key, keylen, &succ);
	InitDirtySnapshot(dirty);
	buf = ddb_descend(rel, key, keylen, false, BUFFER_LOCK_SHARE, NULL, NULL);
	if (first_leaf)
		*first_leaf = BufferGetBlockNumber(buf);
	for (;;)
	{
		Page		page = BufferGetPage(buf);
		OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
		DdbKeyItem	hk;
		BlockNumber next;
		const char *rest = key; /* the key without the leaf's prefix */
		int			restlen = keylen;
		bool		inpage = ddb_strip_leaf_prefix(page, &rest, &restlen) == 0;

		for (OffsetNumber off = ddb_leaf_search(page, key, keylen, false); off <= maxoff; off++)
		{
			ItemId		iid = PageGetItemId(page, off);
			DdbLeafItem li = (DdbLeafItem) PageGetItem(page, iid);
			HeapTupleData htup;

			if (!inpage || ddb_compare_bytes(rest, restlen, li->key, li->keylen) != 0)
			{
				UnlockReleaseBuffer(buf);
				return false;
			}
			(void) ddb_leaf_htup(rel, page, off, &htup);
			if (HeapTupleSatisfiesVisibility(&htup, &dirty, buf))
			{
				/*
				 * Being inserted, or being updated, deleted or locked, by
				 * another transaction: the caller waits for its outcome and
				 * looks again, so conditions are judged on a settled item.
				 */
				if (TransactionIdIsValid(dirty.xmin) || TransactionIdIsValid(dirty.xmax))
				{
					*wait_xid = TransactionIdIsValid(dirty.xmin) ? dirty.xmin : dirty.xmax;
					UnlockReleaseBuffer(buf);
					return false;
				}
				*tid = li->tid;
				if (found)
					found(rel, buf, off, &htup, arg);
				UnlockReleaseBuffer(buf);
				return true;
			}
		}
		/* the key's versions may continue on the next leaf */
		if (DdbPageIsRightmost(page))
			break;
		hk = (DdbKeyItem) PageGetItem(page, PageGetItemId(page, DDB_HIKEY));
		if (has_succ && ddb_compare_bytes(hk->key, hk->keylen, succ.data, succ.len) >= 0)
			break;
		next = DdbPageGetOpaque(page)->right;
		UnlockReleaseBuffer(buf);
		buf = ddb_leaf_step(rel, next, BUFFER_LOCK_SHARE);
	}
	UnlockReleaseBuffer(buf);
	return false;
}
