/*-------------------------------------------------------------------------
 *
 * ddb_modify.c
 *	  MVCC operations on single versions: fetch by TID, update, delete and
 *	  row locks, with PostgreSQL's exact TM_Result semantics.
 *
 * These follow heap_delete, heap_update and heap_lock_tuple step by step,
 * on versions found through the row-id map, with two simplifications,
 * both documented in README.md:
 *
 *	- Every row lock is taken as an exclusive lock (FOR KEY SHARE, FOR
 *	  SHARE and FOR NO KEY UPDATE conflict like FOR UPDATE).  So only one
 *	  transaction at a time locks or changes a version, and xmax is a plain
 *	  transaction id but in one case: a subtransaction that updates or
 *	  deletes a version its transaction has locked under another xid (a
 *	  row lock taken before a SAVEPOINT) leaves a multixact of that lock
 *	  and its update, as heap does (new_update_xmax), so that the lock
 *	  outlives a rollback of the subtransaction.  All members of such a
 *	  multixact belong to one transaction; another waits for them one by
 *	  one (wait_for_modifier).
 *	- Key columns are immutable: an UPDATE that changes them is rejected, as
 *	  DynamoDB rejects it.
 *
 * An update marks the old version (xmax, cmax, t_ctid pointing at the new
 * version's row id) and inserts the new version next to it; the new row id
 * is allocated first so the old version can point at it.  Page locks are
 * never held while waiting for another transaction: like heap, a waiter
 * takes the heavyweight tuple lock to queue fairly, releases the page, waits
 * on the transaction, and starts over.
 *
 * The item API reads the current version of a key in one descent
 * (ddb_read_current: copied, and judged by the transaction's snapshot,
 * while its leaf is locked) and then updates or deletes it on that leaf
 * (ddb_update_version_at, ddb_delete_version_at), asking the row-id map
 * only when a split has moved the version meanwhile or after a wait.  SQL's
 * UPDATE and DELETE start at the leaf where the version was last seen
 * (last_fetched): the key scan that found the row says where it read it
 * (ddb_version_seen_on), and UPDATE's fetch of the row by TID looks there
 * first and records where it found it.  Both also say at which offset, so
 * that finding the version again on that leaf reads one item instead of
 * every item header before it (ddb_leaf_find_rowid).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/heapam.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/multixact.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/predicate.h"
#include "storage/procarray.h"
#include "utils/rel.h"

#include "ddb.h"
#include "engine/ddb_page.h"

/* Point htup at leaf item 'off' of the locked page in buf. */
static inline DdbLeafItem
version_tuple(Relation rel, Buffer buf, OffsetNumber off, HeapTuple htup)
{
	return ddb_leaf_htup(rel, BufferGetPage(buf), off, htup);
}

static void
version_missing(Relation rel, ItemPointer tid)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg_internal("ddb table \"%s\" has no row version with row id (%u,%u)",
							 RelationGetRelationName(rel),
							 ItemPointerGetBlockNumberNoCheck(tid),
							 ItemPointerGetOffsetNumberNoCheck(tid))));
}

/*
 * The leaf (and offset) where this backend last saw a version: read by a
 * key scan of a table being modified (ddb_version_seen_on), found by
 * ddb_fetch_version, or read by the item API (ddb_read_current).  The
 * executor fetches the row it is about to update by TID
 * (table_tuple_fetch_row_version) right after its scan returned it, and
 * calls table_tuple_update or table_tuple_delete right after that; each
 * lookup of the same version then starts at that leaf (find_version_on)
 * instead of going through the row-id map, and looks at that offset first.
 * Only a hint: a version found there under its row id is that version, and
 * anything else sends the lookup to the rest of the leaf, then to the map.
 */
static struct
{
	Oid			relid;
	RelFileNode node;
	ItemPointerData tid;
	BlockNumber leaf;
	OffsetNumber off;
} last_fetched = {InvalidOid};

/*
 * Remember that the version named by tid was just seen on leaf 'leaf' at
 * offset 'off' (InvalidOffsetNumber: not known).
 */
void
ddb_version_seen_on(Relation rel, ItemPointer tid, BlockNumber leaf, OffsetNumber off)
{
	last_fetched.relid = RelationGetRelid(rel);
	last_fetched.node = rel->rd_node;
	last_fetched.tid = *tid;
	last_fetched.leaf = leaf;
	last_fetched.off = off;
}

/*
 * The table's file was truncated in place (ddb_relation_nontransactional_
 * truncate): the same relfilenode, its blocks and row ids starting over.
 * What this backend saw in the old tree names no page of the new one -- the
 * leaf may lie past the new file's end -- and its TID may name a new row:
 * forget it, as the relcache entry forgets its hints.
 */
void
ddb_forget_versions_seen(Relation rel)
{
	if (last_fetched.relid == RelationGetRelid(rel))
		last_fetched.relid = InvalidOid;
}

static bool find_version_on(Relation rel, ItemPointer tid, BlockNumber leaf,
							int mode, Buffer *buf, OffsetNumber *off);

/*
 * The version the item API just read (ddb_read_current), when it read it
 * on its key's first leaf as the descent found it: that leaf's low bound
 * is at or below the key, so a new version of the key, which sorts right
 * before the current one, belongs on that leaf even when no item there
 * sorts before it (ddb_tree_insert_beside, which cannot tell otherwise: a
 * leaf keeps no low bound).  A leaf's low bound never rises while the
 * file lives (a split keeps the lower half in place, an unlink lowers the
 * right sibling's, and a leaf holding the version is not empty, so it is
 * not unlinked).  Set by each ddb_read_current (or cleared), and taken
 * by the update that follows it in the same API call
 * (ddb_update_version_at), never kept beyond that, so that it cannot
 * outlive the tree it speaks of (a table truncated in place starts its
 * row ids and blocks over).
 */
static struct
{
	Oid			relid;
	RelFileNode node;
	ItemPointerData tid;
	BlockNumber leaf;
} read_on_first = {InvalidOid};

/*
 * Was the current version tid just read on 'leaf', its key's first leaf?
 * Forgets the read either way.
 */
static bool
take_read_on_first(Relation rel, ItemPointer tid, BlockNumber leaf)
{
	bool		match = read_on_first.relid == RelationGetRelid(rel) &&
		RelFileNodeEquals(read_on_first.node, rel->rd_node) &&
		ItemPointerEquals(&read_on_first.tid, tid) && read_on_first.leaf == leaf;

	read_on_first.relid = InvalidOid;
	return match;
}

static BlockNumber
last_fetched_leaf(Relation rel, ItemPointer tid)
{
	if (last_fetched.relid == RelationGetRelid(rel) &&
		RelFileNodeEquals(last_fetched.node, rel->rd_node) &&
		ItemPointerEquals(&last_fetched.tid, tid))
		return last_fetched.leaf;
	return InvalidBlockNumber;
}

/* Where on 'leaf' version tid was last seen, or InvalidOffsetNumber. */
static OffsetNumber
last_fetched_off(Relation rel, ItemPointer tid, BlockNumber leaf)
{
	if (last_fetched_leaf(rel, tid) == leaf)
		return last_fetched.off;
	return InvalidOffsetNumber;
}

/*
 * Fetch the version named by tid as a full tuple (with its header) and say
 * whether it is visible to snapshot.  NULL if the version does not exist.
 * For SnapshotDirty, the snapshot's xmin/xmax are set as heap_fetch would.
 */
HeapTuple
ddb_fetch_version(Relation rel, ItemPointer tid, Snapshot snapshot, bool *visible)
{
	Buffer		buf;
	OffsetNumber off;
	HeapTupleData htup;
	DdbLeafItem li;
	HeapTuple	result;

	if (!find_version_on(rel, tid, last_fetched_leaf(rel, tid), BUFFER_LOCK_SHARE,
						 &buf, &off) &&
		!ddb_find_version(rel, tid, BUFFER_LOCK_SHARE, &buf, &off))
		return NULL;
	ddb_version_seen_on(rel, tid, BufferGetBlockNumber(buf), off);
	li = version_tuple(rel, buf, off, &htup);
	*visible = HeapTupleSatisfiesVisibility(&htup, snapshot, buf);
	if (snapshot->snapshot_type == SNAPSHOT_MVCC)
		HeapCheckForSerializableConflictOut(*visible, rel, &htup, buf, snapshot);
	result = ddb_expand_leaf(rel, BufferGetPage(buf), li, htup.t_data, htup.t_len);
	UnlockReleaseBuffer(buf);
	return result;
}

/*
 * The transaction a BeingModified version waits for: its xmax, or for a
 * multixact (see the file header) its first member still running that is
 * not ours.  InvalidTransactionId when only our own transaction holds it.
 */
static TransactionId
modifier_to_wait_for(HeapTupleHeader t)
{
	TransactionId xwait = HeapTupleHeaderGetRawXmax(t);
	MultiXactMember *members;
	int			n;

	if (!(t->t_infomask & HEAP_XMAX_IS_MULTI))
		return TransactionIdIsCurrentTransactionId(xwait) ? InvalidTransactionId : xwait;

	n = GetMultiXactIdMembers(xwait, &members, false,
							  HEAP_XMAX_IS_LOCKED_ONLY(t->t_infomask));
	xwait = InvalidTransactionId;
	for (int i = 0; i < n && !TransactionIdIsValid(xwait); i++)
		if (!TransactionIdIsCurrentTransactionId(members[i].xid) &&
			TransactionIdIsInProgress(members[i].xid))
			xwait = members[i].xid;
	if (n > 0)
		pfree(members);
	return xwait;
}

/*
 * Shared by delete, update and lock: after HeapTupleSatisfiesUpdate said
 * TM_BeingModified, wait for the other transaction unless it is ours.
 * Returns true when the caller must start over (the page was unlocked);
 * *waited is the transaction waited for.
 */
static bool
wait_for_modifier(Relation rel, HeapTuple htup, Buffer buf, LockWaitPolicy policy,
				  XLTW_Oper oper, bool *have_tuple_lock, TM_Result *result,
				  TransactionId *waited)
{
	TransactionId xwait = modifier_to_wait_for(htup->t_data);
	ItemPointerData tid = htup->t_self;

	*waited = xwait;
	if (!TransactionIdIsValid(xwait))
		return false;

	UnlockReleaseBuffer(buf);
	if (!*have_tuple_lock)
	{
		/* queue behind other waiters for this version, as heap does */
		switch (policy)
		{
			case LockWaitBlock:
				LockTuple(rel, &tid, AccessExclusiveLock);
				break;
			case LockWaitSkip:
				if (!ConditionalLockTuple(rel, &tid, AccessExclusiveLock))
				{
					*result = TM_WouldBlock;
					return true;
				}
				break;
			case LockWaitError:
				if (!ConditionalLockTuple(rel, &tid, AccessExclusiveLock))
					ereport(ERROR,
							(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
							 errmsg("could not obtain lock on row in relation \"%s\"",
									RelationGetRelationName(rel))));
				break;
		}
		*have_tuple_lock = true;
	}
	switch (policy)
	{
		case LockWaitBlock:
			XactLockTableWait(xwait, rel, &tid, oper);
			break;
		case LockWaitSkip:
			if (!ConditionalXactLockTableWait(xwait))
			{
				*result = TM_WouldBlock;
				return true;
			}
			break;
		case LockWaitError:
			if (!ConditionalXactLockTableWait(xwait))
				ereport(ERROR,
						(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
						 errmsg("could not obtain lock on row in relation \"%s\"",
								RelationGetRelationName(rel))));
			break;
	}
	*result = TM_Ok;			/* re-evaluate from scratch */
	return true;
}

/* After waiting (or for our own lock), classify a BeingModified version. */
static TM_Result
classify_modified(HeapTuple htup)
{
	HeapTupleHeader t = htup->t_data;

	if ((t->t_infomask & HEAP_XMAX_INVALID) ||
		HEAP_XMAX_IS_LOCKED_ONLY(t->t_infomask) ||
		HeapTupleHeaderIsOnlyLocked(t))
		return TM_Ok;
	if (!ItemPointerEquals(&htup->t_self, &t->t_ctid))
		return TM_Updated;
	return TM_Deleted;
}

static void
fill_tmfd(HeapTuple htup, TM_Result result, TM_FailureData *tmfd)
{
	tmfd->ctid = htup->t_data->t_ctid;
	tmfd->xmax = HeapTupleHeaderGetUpdateXid(htup->t_data);
	if (result == TM_SelfModified)
		tmfd->cmax = HeapTupleHeaderGetCmax(htup->t_data);
	else
		tmfd->cmax = InvalidCommandId;
}

/*
 * Find the version named by tid on the leaf where its reader just saw it
 * (ddb_read_current, a key scan, a fetch by TID), locked in 'mode',
 * without asking the row-id map.  False, with nothing locked, when there is
 * no such leaf hint or the version is no longer there (a split moved it
 * right): the caller then asks the map.  A row id names one version, so a
 * match is that version.
 */
static bool
find_version_on(Relation rel, ItemPointer tid, BlockNumber leaf, int mode,
				Buffer *buf, OffsetNumber *off)
{
	OffsetNumber hint = last_fetched_off(rel, tid, leaf);
	Buffer		b;
	Page		page;

	if (!BlockNumberIsValid(leaf))
		return false;
	b = ReadBuffer(rel, leaf);
	LockBuffer(b, mode);
	page = BufferGetPage(b);
	if (ddb_page_is_tree_leaf(page) &&
		(*off = ddb_leaf_find_rowid(page, tid, hint)) != InvalidOffsetNumber)
	{
		*buf = b;
		return true;
	}
	UnlockReleaseBuffer(b);
	return false;
}

/*
 * Lock the version named by tid for modification: find it (first on the
 * leaf 'leaf', when valid, see find_version_on), and loop until
 * HeapTupleSatisfiesUpdate allows us to modify it or says why not.  On
 * TM_Ok, *buf is locked exclusively with the version at *off.
 */
static TM_Result
lock_for_modify(Relation rel, ItemPointer tid, BlockNumber leaf, CommandId cid,
				Snapshot crosscheck, bool wait, XLTW_Oper oper,
				TM_FailureData *tmfd, Buffer *buf, OffsetNumber *off,
				HeapTuple htup, bool *have_tuple_lock)
{
	TM_Result	result;

	for (;;)
	{
		/* after a wait the version may have moved: the map knows where */
		if (!find_version_on(rel, tid, leaf, BUFFER_LOCK_EXCLUSIVE, buf, off) &&
			!ddb_find_version(rel, tid, BUFFER_LOCK_EXCLUSIVE, buf, off))
			version_missing(rel, tid);
		leaf = InvalidBlockNumber;
		version_tuple(rel, *buf, *off, htup);

		result = HeapTupleSatisfiesUpdate(htup, cid, *buf);
		if (result == TM_Invisible)
		{
			UnlockReleaseBuffer(*buf);
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("attempted to %s invisible tuple",
							oper == XLTW_Delete ? "delete" : "update")));
		}
		if (result == TM_BeingModified && wait)
		{
			TM_Result	r;
			TransactionId waited;

			if (wait_for_modifier(rel, htup, *buf, LockWaitBlock, oper,
								  have_tuple_lock, &r, &waited))
				continue;		/* page was released: look again */
			result = classify_modified(htup);
		}
		break;
	}

	if (crosscheck != InvalidSnapshot && result == TM_Ok &&
		!HeapTupleSatisfiesVisibility(htup, crosscheck, *buf))
		result = TM_Updated;

	if (result != TM_Ok)
	{
		fill_tmfd(htup, result, tmfd);
		UnlockReleaseBuffer(*buf);
		if (*have_tuple_lock)
			UnlockTuple(rel, tid, AccessExclusiveLock);
	}
	return result;
}

/* The mark of a version: an update or delete by us, or a row lock. */
typedef struct XmaxMark
{
	TransactionId xid;			/* or a multixact, with multi */
	CommandId	cmax;
	bool		iscombo;
	bool		lock_only;		/* an exclusive row lock: next unused */
	ItemPointer next;			/* the successor (t_ctid) of an update */
	bool		moved_partitions;
	bool		multi;			/* xid is a multixact (new_update_xmax) */
} XmaxMark;

/*
 * The xmax that an update or delete by our xid 'xid' gives the version t,
 * which HeapTupleSatisfiesUpdate allowed us to modify: *multi false and
 * xid itself, unless another xid of our transaction that stays live holds
 * a row lock on it -- a lock taken before a SAVEPOINT, or one kept in such
 * a multixact by an earlier, rolled-back subtransaction.  Then a new
 * multixact of those locks and our update, as heap's
 * compute_new_xmax_infomask makes, so that rolling back this
 * subtransaction leaves the row locked.  Called with the leaf locked, as
 * heap does (a multixact is made and logged outside critical sections).
 */
static TransactionId
new_update_xmax(HeapTupleHeader t, TransactionId xid, bool *multi)
{
	TransactionId old = HeapTupleHeaderGetRawXmax(t);
	MultiXactMember *members = NULL;
	MultiXactMember *keep;
	int			n = 0;
	int			nkeep = 0;
	TransactionId result;

	*multi = false;
	if (t->t_infomask & HEAP_XMAX_INVALID)
		return xid;
	if (t->t_infomask & HEAP_XMAX_IS_MULTI)
		n = GetMultiXactIdMembers(old, &members, false,
								  HEAP_XMAX_IS_LOCKED_ONLY(t->t_infomask));
	else if (HEAP_XMAX_IS_LOCKED_ONLY(t->t_infomask) && old != xid &&
			 TransactionIdIsCurrentTransactionId(old))
	{
		/* the common case: one lock, taken before this subtransaction */
		MultiXactMember both[2] = {{old, MultiXactStatusForUpdate},
		{xid, MultiXactStatusUpdate}};

		MultiXactIdSetOldestMember();
		*multi = true;
		return MultiXactIdCreateFromMembers(2, both);
	}
	if (n <= 0)
		return xid;

	keep = palloc(sizeof(MultiXactMember) * (n + 1));
	for (int i = 0; i < n; i++)
		if (!ISUPDATE_from_mxstatus(members[i].status) && members[i].xid != xid &&
			TransactionIdIsCurrentTransactionId(members[i].xid))
			keep[nkeep++] = (MultiXactMember) {members[i].xid, MultiXactStatusForUpdate};
	pfree(members);
	if (nkeep == 0)
		result = xid;
	else
	{
		keep[nkeep++] = (MultiXactMember) {xid, MultiXactStatusUpdate};
		MultiXactIdSetOldestMember();
		*multi = true;
		result = MultiXactIdCreateFromMembers(nkeep, keep);
	}
	pfree(keep);
	return result;
}

/*
 * Set xmax on the locked version at off of a page (a DdbMarkFn: called in
 * a critical section, so it neither fails nor allocates).
 */
static void
mark_xmax(Page page, OffsetNumber off, void *arg)
{
	XmaxMark   *m = (XmaxMark *) arg;
	DdbLeafItem li = (DdbLeafItem) PageGetItem(page, PageGetItemId(page, off));
	HeapTupleHeader t = DdbLeafItemGetTuple(li);

	t->t_infomask &= ~(HEAP_XMAX_BITS | HEAP_MOVED);
	t->t_infomask2 &= ~HEAP_KEYS_UPDATED;
	/* every lock and modification is exclusive: see the file header */
	t->t_infomask2 |= HEAP_KEYS_UPDATED;
	if (m->lock_only)
		t->t_infomask |= HEAP_XMAX_EXCL_LOCK | HEAP_XMAX_LOCK_ONLY;
	else if (m->multi)
	{
		/* GetMultiXactIdHintBits' bits for FOR UPDATE locks and an update */
		t->t_infomask |= HEAP_XMAX_IS_MULTI | HEAP_XMAX_EXCL_LOCK;
	}
	HeapTupleHeaderSetXmax(t, m->xid);
	if (!m->lock_only)
	{
		HeapTupleHeaderSetCmax(t, m->cmax, m->iscombo);
		if (m->moved_partitions)
			HeapTupleHeaderSetMovedPartitions(t);
		else
			t->t_ctid = *m->next;
	}
}

/*
 * Set xmax on the locked version at off, WAL-logged: an update or delete by
 * us (with t_ctid = next; xid as new_update_xmax gave it), or an exclusive
 * row lock (next = NULL, lock_only).
 */
static void
set_xmax(Relation rel, Buffer buf, OffsetNumber off, TransactionId xid, bool multi,
		 CommandId cid, bool iscombo, bool lock_only, ItemPointer next,
		 bool moved_partitions)
{
	XmaxMark	m = {xid, cid, iscombo, lock_only, next, moved_partitions, multi};

	ddb_wal_leaf_mark(rel, buf, off, mark_xmax, &m);
}

static TM_Result delete_version(Relation rel, ItemPointer tid, BlockNumber leaf,
								CommandId cid, Snapshot crosscheck, bool wait,
								TM_FailureData *tmfd, bool changingPart);

TM_Result
ddb_delete_version(Relation rel, ItemPointer tid, CommandId cid,
				   Snapshot crosscheck, bool wait, TM_FailureData *tmfd,
				   bool changingPart)
{
	return delete_version(rel, tid, last_fetched_leaf(rel, tid), cid, crosscheck, wait,
						  tmfd, changingPart);
}

/*
 * The item API's delete of the version it read with ddb_read_current, which
 * also said on which leaf: looked for there first, not through the map.
 */
TM_Result
ddb_delete_version_at(Relation rel, ItemPointer tid, BlockNumber leaf, CommandId cid,
					  TM_FailureData *tmfd)
{
	return delete_version(rel, tid, leaf, cid, InvalidSnapshot, true, tmfd, false);
}

static TM_Result
delete_version(Relation rel, ItemPointer tid, BlockNumber leaf, CommandId cid,
			   Snapshot crosscheck, bool wait, TM_FailureData *tmfd,
			   bool changingPart)
{
	TransactionId xid = GetCurrentTransactionId();
	TransactionId xmax;
	bool		multi;
	Buffer		buf;
	OffsetNumber off;
	HeapTupleData htup;
	HeapTuple	old = NULL;
	bool		have_tuple_lock = false;
	bool		iscombo;
	TM_Result	result;

	if (IsInParallelMode())
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TRANSACTION_STATE),
				 errmsg("cannot delete tuples during a parallel operation")));

	result = lock_for_modify(rel, tid, leaf, cid, crosscheck, wait, XLTW_Delete,
							 tmfd, &buf, &off, &htup, &have_tuple_lock);
	if (result != TM_Ok)
		return result;

	CheckForSerializableConflictIn(rel, NULL, InvalidBlockNumber);
	HeapTupleHeaderAdjustCmax(htup.t_data, &cid, &iscombo);
	if (HeapTupleHasExternal(&htup))
		old = heap_copytuple(&htup);
	xmax = new_update_xmax(htup.t_data, xid, &multi);
	set_xmax(rel, buf, off, xmax, multi, cid, iscombo, false, tid, changingPart);
	UnlockReleaseBuffer(buf);

	/* toast values go with the version, transactionally, as in heap */
	if (old)
		heap_toast_delete(rel, old, false);
	if (have_tuple_lock)
		UnlockTuple(rel, tid, AccessExclusiveLock);
	pgstat_count_heap_delete(rel);
	return TM_Ok;
}

/*
 * Update: 'newtup' is the stored form of the new row (key columns NULL),
 * 'newkey' its encoded key, which must equal the old version's key.
 * On TM_Ok, *newtid is the new version's TID.
 */
static TM_Result update_version(Relation rel, ItemPointer otid, BlockNumber leaf,
								bool key_first_leaf, HeapTuple newtup,
								const char *newkey, int newkeylen,
								CommandId cid, Snapshot crosscheck, bool wait,
								TM_FailureData *tmfd, ItemPointer newtid);

TM_Result
ddb_update_version(Relation rel, ItemPointer otid, HeapTuple newtup,
				   const char *newkey, int newkeylen, CommandId cid,
				   Snapshot crosscheck, bool wait, TM_FailureData *tmfd,
				   ItemPointer newtid)
{
	return update_version(rel, otid, last_fetched_leaf(rel, otid), false, newtup, newkey,
						  newkeylen, cid, crosscheck, wait, tmfd, newtid);
}

/* The item API's update of the version ddb_read_current found on 'leaf'. */
TM_Result
ddb_update_version_at(Relation rel, ItemPointer otid, BlockNumber leaf,
					  HeapTuple newtup, const char *newkey, int newkeylen,
					  CommandId cid, TM_FailureData *tmfd, ItemPointer newtid)
{
	return update_version(rel, otid, leaf, take_read_on_first(rel, otid, leaf), newtup,
						  newkey, newkeylen, cid, InvalidSnapshot, true, tmfd, newtid);
}

/*
 * key_first_leaf: 'leaf' is the key's first leaf as a descent found it
 * (see read_on_first), which matters when the version is still there.
 */
static TM_Result
update_version(Relation rel, ItemPointer otid, BlockNumber leaf, bool key_first_leaf,
			   HeapTuple newtup, const char *newkey, int newkeylen, CommandId cid,
			   Snapshot crosscheck, bool wait, TM_FailureData *tmfd,
			   ItemPointer newtid)
{
	TransactionId xid = GetCurrentTransactionId();
	TransactionId xmax;
	bool		multi;
	Buffer		buf;
	OffsetNumber off;
	HeapTupleData htup;
	HeapTuple	old;
	HeapTuple	stored;
	DdbLeafItem li;
	bool		have_tuple_lock = false;
	bool		iscombo;
	CommandId	cmax = cid;
	TM_Result	result;
	Buffer		mapbuf = InvalidBuffer;
	ItemPointerData *removed = NULL;
	int			nremoved = 0;

	if (IsInParallelMode())
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TRANSACTION_STATE),
				 errmsg("cannot update tuples during a parallel operation")));

	/* Allocate first, so the old version can point at the new one. */
	ddb_rowid_to_tid(ddb_alloc_rowid(rel), newtid);

	/*
	 * ddb_tree_insert_beside sets the new version's map entry under the
	 * leaf lock: in its own record (ddb's WAL, ddb_wal_map_in_record),
	 * whose map leaf is found now, before any tree page is locked, or
	 * deferred (Generic WAL), the room for it made now.
	 */
	if (ddb_wal_map_in_record())
		mapbuf = ddb_map_pin_leaf(rel, newtid);
	else
		ddb_map_make_room();

	result = lock_for_modify(rel, otid, leaf, cid, crosscheck, wait, XLTW_Update,
							 tmfd, &buf, &off, &htup, &have_tuple_lock);
	if (result != TM_Ok)
	{
		if (BufferIsValid(mapbuf))
			ReleaseBuffer(mapbuf);
		return result;
	}

	li = (DdbLeafItem) PageGetItem(BufferGetPage(buf), PageGetItemId(BufferGetPage(buf), off));
	if (ddb_compare_leaf_keypart(BufferGetPage(buf), newkey, newkeylen, li) != 0)
	{
		UnlockReleaseBuffer(buf);
		if (BufferIsValid(mapbuf))
			ReleaseBuffer(mapbuf);
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change the key of an item in ddb table \"%s\"",
						RelationGetRelationName(rel)),
				 errdetail("Key columns are immutable, as in DynamoDB."),
				 errhint("Delete the item and insert it with the new key.")));
	}

	CheckForSerializableConflictIn(rel, NULL, InvalidBlockNumber);
	HeapTupleHeaderAdjustCmax(htup.t_data, &cmax, &iscombo);
	old = heap_copytuple(&htup);
	xmax = new_update_xmax(htup.t_data, xid, &multi);

	newtup->t_data->t_infomask &= ~HEAP_XACT_MASK;
	newtup->t_data->t_infomask2 &= ~HEAP2_XACT_MASK;
	newtup->t_data->t_infomask |= HEAP_XMAX_INVALID;
	HeapTupleHeaderSetXmin(newtup->t_data, xid);
	HeapTupleHeaderSetCmin(newtup->t_data, cid);
	HeapTupleHeaderSetXmax(newtup->t_data, 0);
	newtup->t_tableOid = RelationGetRelid(rel);
	newtup->t_self = *newtid;
	newtup->t_data->t_ctid = *newtid;

	/*
	 * Usually the new version needs no TOAST work and fits beside the old
	 * one: mark the old version and add the new one in one WAL record,
	 * without a second descent (ddb_tree_insert_beside).
	 */
	if (!ddb_stored_tuple_needs_toast(rel, newtup, old, newkeylen))
	{
		XmaxMark	m = {xmax, cmax, iscombo, false, newtid, false, multi};
		bool		beside;

		/* (it may prune the leaf: off follows the old version) */
		beside = ddb_tree_insert_beside(rel, buf, &off, newkey, newkeylen, newtid, newtup,
										mark_xmax, &m, mapbuf,
										key_first_leaf && BufferGetBlockNumber(buf) == leaf,
										&removed, &nremoved);
		if (BufferIsValid(mapbuf))
			ReleaseBuffer(mapbuf);
		if (beside)
		{
			UnlockReleaseBuffer(buf);
			ddb_map_clear(rel, removed, nremoved);
			goto done;
		}
	}
	else if (BufferIsValid(mapbuf))
		ReleaseBuffer(mapbuf);

	set_xmax(rel, buf, off, xmax, multi, cmax, iscombo, false, newtid, false);
	UnlockReleaseBuffer(buf);
	ddb_map_clear(rel, removed, nremoved);

	/*
	 * The old version is ours now (its xmax is our transaction), so toast
	 * and insert without page locks; a concurrent writer waits for us.
	 */
	stored = ddb_toast_stored_tuple(rel, newtup, old, newkeylen);
	ddb_tree_insert(rel, newkey, newkeylen, newtid, stored, DDB_UNIQUE_NONE);

done:

	if (removed)
		pfree(removed);
	if (have_tuple_lock)
		UnlockTuple(rel, otid, AccessExclusiveLock);
	pgstat_count_heap_update(rel, false);
	return TM_Ok;
}

/*
 * heap_lock_tuple for ddb: every mode is taken as an exclusive lock.  On
 * return *tuple (when not NULL) is a copy of the version as locked.
 */
TM_Result
ddb_lock_version(Relation rel, ItemPointer tid, CommandId cid,
				 LockWaitPolicy wait_policy, TM_FailureData *tmfd,
				 HeapTuple *tuple)
{
	TransactionId xid = GetCurrentTransactionId();
	Buffer		buf;
	OffsetNumber off;
	HeapTupleData htup;
	DdbLeafItem li;
	bool		have_tuple_lock = false;
	TM_Result	result;

	*tuple = NULL;
	for (;;)
	{
		if (!ddb_find_version(rel, tid, BUFFER_LOCK_EXCLUSIVE, &buf, &off))
			version_missing(rel, tid);
		li = version_tuple(rel, buf, off, &htup);
		result = HeapTupleSatisfiesUpdate(&htup, cid, buf);
		if (result == TM_BeingModified)
		{
			TM_Result	r;
			TransactionId xwait;

			if (wait_for_modifier(rel, &htup, buf, wait_policy, XLTW_Lock,
								  &have_tuple_lock, &r, &xwait))
			{
				if (r == TM_WouldBlock)
				{
					tmfd->ctid = *tid;
					tmfd->xmax = xwait;
					tmfd->cmax = InvalidCommandId;
					if (have_tuple_lock)
						UnlockTuple(rel, tid, AccessExclusiveLock);
					return TM_WouldBlock;
				}
				continue;
			}

			/*
			 * Only our own transaction holds it: a lock of ours (the
			 * locker may be another xid of ours: every lock is exclusive,
			 * so that lock will do), or a change a rolled-back
			 * subtransaction of ours made beside one (a multixact).
			 */
			result = classify_modified(&htup);
			if (result == TM_Ok)
			{
				/* already locked by us: nothing to write */
				*tuple = ddb_expand_leaf(rel, BufferGetPage(buf), li,
										  htup.t_data, htup.t_len);
				UnlockReleaseBuffer(buf);
				if (have_tuple_lock)
					UnlockTuple(rel, tid, AccessExclusiveLock);
				return TM_Ok;
			}
		}
		break;
	}

	if (result == TM_Invisible)
	{
		UnlockReleaseBuffer(buf);
		if (have_tuple_lock)
			UnlockTuple(rel, tid, AccessExclusiveLock);
		return TM_Invisible;
	}
	if (result != TM_Ok)
	{
		fill_tmfd(&htup, result, tmfd);
		*tuple = ddb_expand_leaf(rel, BufferGetPage(buf), li, htup.t_data, htup.t_len);
		UnlockReleaseBuffer(buf);
		if (have_tuple_lock)
			UnlockTuple(rel, tid, AccessExclusiveLock);
		return result;
	}

	set_xmax(rel, buf, off, xid, false, cid, false, true, NULL, false);
	li = (DdbLeafItem) PageGetItem(BufferGetPage(buf), PageGetItemId(BufferGetPage(buf), off));
	*tuple = ddb_expand_leaf(rel, BufferGetPage(buf), li, DdbLeafItemGetTuple(li),
							  htup.t_len);
	UnlockReleaseBuffer(buf);
	if (have_tuple_lock)
		UnlockTuple(rel, tid, AccessExclusiveLock);
	return TM_Ok;
}

/*
 * Make 'stored' a fresh version with row id 'tid', inserted by our
 * transaction's command 'cid', as heap_prepare_insert does (also the bulk
 * load's, ddb_bulk.c).
 */
void
ddb_prepare_new_version(Relation rel, HeapTuple stored, CommandId cid, ItemPointer tid)
{
	stored->t_data->t_infomask &= ~HEAP_XACT_MASK;
	stored->t_data->t_infomask2 &= ~HEAP2_XACT_MASK;
	stored->t_data->t_infomask |= HEAP_XMAX_INVALID;
	HeapTupleHeaderSetXmin(stored->t_data, GetCurrentTransactionId());
	HeapTupleHeaderSetCmin(stored->t_data, cid);
	HeapTupleHeaderSetXmax(stored->t_data, 0);
	stored->t_tableOid = RelationGetRelid(rel);
	stored->t_self = *tid;
	stored->t_data->t_ctid = *tid;
}

/*
 * Insert a new version from its stored tuple (key columns NULL) and encoded
 * key: the transaction header, a row id, TOAST, the tree.  Returns false
 * only with DDB_UNIQUE_RETURN when a live version of the key exists.
 */
bool
ddb_insert_version(Relation rel, const char *key, int keylen, HeapTuple stored,
				   CommandId cid, DdbUniqueCheck check, ItemPointer tid)
{
	return ddb_insert_version_at(rel, InvalidBlockNumber, key, keylen, stored, cid,
								 check, tid);
}

/*
 * ddb_insert_version of a key whose first leaf the caller has just read
 * (ddb_read_current of a missing item): the tree insert starts there
 * (ddb_tree_insert_at).
 */
bool
ddb_insert_version_at(Relation rel, BlockNumber first_leaf, const char *key, int keylen,
					  HeapTuple stored, CommandId cid, DdbUniqueCheck check,
					  ItemPointer tid)
{
	HeapTuple	tuple;

	ddb_rowid_to_tid(ddb_alloc_rowid(rel), tid);
	ddb_prepare_new_version(rel, stored, cid, tid);

	CheckForSerializableConflictIn(rel, NULL, InvalidBlockNumber);
	tuple = ddb_toast_stored_tuple(rel, stored, NULL, keylen);
	if (!ddb_tree_insert_at(rel, first_leaf, key, keylen, tid, tuple, check))
		return false;
	pgstat_count_heap_insert(rel, 1);
	return true;
}

/*
 * Insert new versions of several keys at once (COPY's rows, BatchWriteItem's
 * puts): each as ddb_insert_version would, with DDB_UNIQUE_ERROR or
 * DDB_UNIQUE_RETURN, but placed by ddb_tree_insert_multi, one descent and
 * one WAL record per leaf.  Sets each version's tid and inserted.  With
 * DDB_UNIQUE_RETURN a version whose key is live is not inserted; its stored
 * tuple must then need no TOAST work (the caller checks it with
 * ddb_stored_tuple_needs_toast), or its out-of-line values would be left
 * behind.  'frozen' (COPY FREEZE, which PostgreSQL allows only into a file
 * new in this subtransaction) inserts them with xmin frozen, as heap_insert
 * does for it.
 */
void
ddb_insert_versions(Relation rel, DdbNewVersion *versions, int n, CommandId cid,
					DdbUniqueCheck check, bool frozen)
{
	ddb_prepare_versions(rel, versions, n, cid, frozen);
	ddb_place_versions(rel, versions, n, check, false);
}

/* ddb_insert_versions' first half: row ids, transaction headers, TOAST. */
void
ddb_prepare_versions(Relation rel, DdbNewVersion *versions, int n, CommandId cid,
					 bool frozen)
{
	for (int i = 0; i < n; i++)
	{
		DdbNewVersion *v = &versions[i];

		ddb_rowid_to_tid(ddb_alloc_rowid(rel), &v->tid);
		ddb_prepare_new_version(rel, v->tuple, cid, &v->tid);
		if (frozen)
			HeapTupleHeaderSetXminFrozen(v->tuple->t_data);
		v->tuple = ddb_toast_stored_tuple(rel, v->tuple, NULL, v->keylen);
	}
}

/*
 * ddb_insert_versions' second half, on prepared versions: the tree.  With
 * stop_at_live (DDB_UNIQUE_RETURN, versions in key order) it stops at the
 * first live key and returns its index (n when none was live); the versions
 * after it are untouched and can be placed by a later call
 * (ddb_tree_insert_multi).
 */
int
ddb_place_versions(Relation rel, DdbNewVersion *versions, int n,
				   DdbUniqueCheck check, bool stop_at_live)
{
	int			ninserted = 0;
	int			stopped;

	if (n <= 0)
		return n;
	CheckForSerializableConflictIn(rel, NULL, InvalidBlockNumber);
	stopped = ddb_tree_insert_multi(rel, versions, n, check, stop_at_live);
	for (int i = 0; i < n; i++)
		ninserted += versions[i].inserted;
	pgstat_count_heap_insert(rel, ninserted);
	return stopped;
}

/*
 * After an update or delete of a version read without a lock found it
 * changed (TM_Updated/TM_Deleted): start over under READ COMMITTED (true),
 * fail under REPEATABLE READ / SERIALIZABLE as heap's UPDATE would.
 */
bool
ddb_retry_after_conflict(TM_Result result)
{
	if (result == TM_Updated || result == TM_Deleted)
	{
		if (IsolationUsesXactSnapshot())
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("could not serialize access due to concurrent %s",
							result == TM_Updated ? "update" : "delete")));
		return true;
	}
	elog(ERROR, "unexpected result %d writing a ddb item", result);
	return false;
}

/* What ddb_read_current keeps of the current version while its leaf is locked. */
typedef struct CurrentCopy
{
	bool		copy;			/* the caller wants the version as a tuple */
	Snapshot	xact_snapshot;	/* REPEATABLE READ and up: the transaction's */
	bool		visible;		/* ... and whether it sees the version */
	HeapTuple	tuple;
	BlockNumber leaf;
	OffsetNumber off;
} CurrentCopy;

/* A DdbCurrentFn: as ddb_fetch_version would see the version, without the map. */
static void
copy_current(Relation rel, Buffer buf, OffsetNumber off, HeapTuple htup, void *arg)
{
	CurrentCopy *c = (CurrentCopy *) arg;

	c->leaf = BufferGetBlockNumber(buf);
	c->off = off;
	if (c->xact_snapshot != InvalidSnapshot)
	{
		c->visible = HeapTupleSatisfiesVisibility(htup, c->xact_snapshot, buf);
		HeapCheckForSerializableConflictOut(c->visible, rel, htup, buf, c->xact_snapshot);
	}
	if (c->copy)
	{
		DdbLeafItem li = (DdbLeafItem) PageGetItem(BufferGetPage(buf),
												   PageGetItemId(BufferGetPage(buf), off));

		c->tuple = ddb_expand_leaf(rel, BufferGetPage(buf), li, htup->t_data,
									htup->t_len);
	}
}

/*
 * For the item API's writes (PutItem, UpdateItem, DeleteItem): the current
 * version of key, without locking it.  The caller evaluates its condition
 * on it and then updates or deletes exactly that version (TID); if it has
 * changed meanwhile the write returns TM_Updated/TM_Deleted and the caller
 * starts over (ddb_retry_after_conflict).  That saves the separate,
 * WAL-logged row lock that ddb_lock_current takes.  Returns false when the
 * item does not exist (waiting for an in-progress insert of it first).
 *
 * One descent: the version is copied (when 'current' is not NULL: a caller
 * that needs no old item passes NULL) and judged by the transaction's
 * snapshot while its leaf is locked, and *leaf tells the write where to
 * find it again (ddb_update_version_at, ddb_delete_version_at) without the
 * row-id map.  When the item does not exist, *leaf is the key's first
 * leaf, where an insert of the key can start (ddb_insert_version_at), or
 * InvalidBlockNumber for a table without a tree yet.
 */
bool
ddb_read_current(Relation rel, const char *key, int keylen,
				 ItemPointer tid, HeapTuple *current, BlockNumber *leaf)
{
	for (;;)
	{
		TransactionId wait_xid = InvalidTransactionId;
		CurrentCopy c;
		BlockNumber first_leaf;

		CHECK_FOR_INTERRUPTS();
		read_on_first.relid = InvalidOid;
		c.copy = current != NULL;
		c.xact_snapshot = IsolationUsesXactSnapshot() ? GetTransactionSnapshot() : InvalidSnapshot;
		c.visible = false;
		c.tuple = NULL;
		c.leaf = InvalidBlockNumber;
		if (!ddb_find_current_ext(rel, key, keylen, tid, &wait_xid, copy_current, &c,
								  &first_leaf))
		{
			if (TransactionIdIsValid(wait_xid))
			{
				XactLockTableWait(wait_xid, rel, NULL, XLTW_InsertIndex);
				continue;
			}
			/* deleted after our snapshot: see ddb_lock_current */
			if (IsolationUsesXactSnapshot() &&
				ddb_lookup(rel, GetTransactionSnapshot(), key, keylen) != NULL)
				ereport(ERROR,
						(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
						 errmsg("could not serialize access due to concurrent delete")));
			if (current)
				*current = NULL;
			*leaf = first_leaf;
			return false;
		}
		if (IsolationUsesXactSnapshot() && !c.visible)
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("could not serialize access due to concurrent update")));
		if (current)
			*current = c.tuple;
		*leaf = c.leaf;
		ddb_version_seen_on(rel, tid, c.leaf, c.off);
		if (c.leaf == first_leaf)
		{
			read_on_first.relid = RelationGetRelid(rel);
			read_on_first.node = rel->rd_node;
			read_on_first.tid = *tid;
			read_on_first.leaf = c.leaf;
		}
		return true;
	}
}

/*
 * For the item API's writes (PutItem, UpdateItem, DeleteItem): find the
 * current version of key and lock it, as INSERT ... ON CONFLICT DO UPDATE
 * does.  Returns true with *tid and *current (a full tuple) when the item
 * exists; false when it does not (the caller then inserts, and retries if
 * a concurrent insert wins).  Waits for in-progress writers of the key.
 * Under REPEATABLE READ / SERIALIZABLE, an item changed after the
 * transaction's snapshot is a serialization failure.
 */
bool
ddb_lock_current(Relation rel, const char *key, int keylen, CommandId cid,
				 ItemPointer tid, HeapTuple *current)
{
	for (;;)
	{
		TransactionId wait_xid = InvalidTransactionId;
		TM_FailureData tmfd;
		TM_Result	result;
		HeapTuple	tuple;

		CHECK_FOR_INTERRUPTS();
		if (!ddb_find_current(rel, key, keylen, tid, &wait_xid))
		{
			if (TransactionIdIsValid(wait_xid))
			{
				/* an insert of this key is in progress: wait for its outcome */
				XactLockTableWait(wait_xid, rel, NULL, XLTW_InsertIndex);
				continue;
			}
			/*
			 * No current version.  Under REPEATABLE READ / SERIALIZABLE, if
			 * our snapshot still sees one, someone deleted it after the
			 * snapshot: acting as if it never existed would be a lost
			 * update, so fail as heap's DELETE/UPDATE would.
			 */
			if (IsolationUsesXactSnapshot())
			{
				HeapTuple	seen = ddb_lookup(rel, GetTransactionSnapshot(), key, keylen);

				if (seen != NULL)
					ereport(ERROR,
							(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
							 errmsg("could not serialize access due to concurrent delete")));
			}
			*current = NULL;
			return false;
		}

		result = ddb_lock_version(rel, tid, cid, LockWaitBlock, &tmfd, &tuple);
		switch (result)
		{
			case TM_Ok:
				if (IsolationUsesXactSnapshot())
				{
					bool		visible = false;
					HeapTuple	v = ddb_fetch_version(rel, tid, GetTransactionSnapshot(), &visible);

					if (v)
						heap_freetuple(v);
					if (!visible)
						ereport(ERROR,
								(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
								 errmsg("could not serialize access due to concurrent update")));
				}
				*current = tuple;
				return true;
			case TM_Updated:
			case TM_Deleted:
				if (IsolationUsesXactSnapshot())
					ereport(ERROR,
							(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
							 errmsg("could not serialize access due to concurrent %s",
									result == TM_Updated ? "update" : "delete")));
				/* READ COMMITTED: look for the newest version again */
				break;
			case TM_SelfModified:
			case TM_Invisible:

				/*
				 * This transaction made or changed the current version with
				 * cid or a later command id, which a write at cid can
				 * neither see nor lock.  Looking again finds the same
				 * version forever, whatever the command counter does: cid
				 * is the caller's.  Heap's INSERT ... ON CONFLICT DO UPDATE
				 * refuses the same way.  A caller that writes one key twice
				 * must give the second write a later command id
				 * (collection_apply in ddb_gsi.c does).
				 */
				ereport(ERROR,
						(errcode(ERRCODE_CARDINALITY_VIOLATION),
						 errmsg("ddb item of \"%s\" cannot be changed a second time by one command",
								RelationGetRelationName(rel))));
				break;
			default:
				elog(ERROR, "unexpected result %d locking a ddb item", result);
		}
		if (tuple)
			heap_freetuple(tuple);
	}
}
