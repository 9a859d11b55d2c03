/*-------------------------------------------------------------------------
 *
 * ddb_verify.c
 *	  ddb_verify(regclass): check every structural invariant of a ddb tree.
 *
 * Checked, level by level from the root down, following right-links:
 *	- metapage: magic, version, root, height; every block of the fork is the
 *	  metapage, a tree page, a never-initialized page left by a crash, or a
 *	  deleted leaf (ddb_tree.c, "Unlinking empty leaves")
 *	- deleted leaves: never reachable from the tree; one item, an empty high
 *	  key with a safexid; from every one not yet recyclable, right-links
 *	  lead through leaves deleted no earlier to a leaf of the tree (a
 *	  recyclable one's right-link may name a page reused since)
 *	- every page: standard layout (pd_lower <= pd_upper <= pd_special, the
 *	  special space where ddb puts it), page id, flags, level
 *	- items strictly ascending within a page, all below the page's high key
 *	- the first item of an internal page is minus infinity; the page's
 *	  separator prefix (ddb_page.h) is its whole key or lies within its
 *	  high key; a leaf's prefix ("Leaf prefix") lies within its high key
 *	  or, in storage version 3 and only when the high key does not start
 *	  with it, in a copy after it (DDB_PAGE_PREFIX_COPY), which with the
 *	  high key is no longer than a separator may be; it is 0 on the
 *	  rightmost leaf and in tables of storage version 1; in version 2 it
 *	  starts the leaf's low bound too and is 0 on the leftmost leaf
 *	- every leaf item's key, read through its leaf's prefix, is well formed
 *	  (ddb_key_check: columns terminated and escaped, the hash the
 *	  partition key's): a wrong prefix reads every key of its leaf wrong
 *	- parent/child agreement: the children of a level's pages, taken in
 *	  order, are exactly the next level's right-link chain; a child's items
 *	  are >= its downlink's separator and its high key equals the next
 *	  separator (or the parent's high key for the last child)
 *	- leaf items: row ids within the TID range and below the metapage's
 *	  next row id (or the counter would hand them out again), sane tuple
 *	  lengths
 *	- MVCC: at most one live version per key, a version that was never
 *	  updated or deleted has t_ctid pointing at itself, xmin/xmax lie between the
 *	  table's relfrozenxid and the next transaction id; a multixact xmax
 *	  between relminmxid and the next multixact
 *	- row-id map: every committed version is found through the map at its
 *	  own leaf and offset, with its key's hash; the entry points into the
 *	  relation.  An entry whose block does not lead to the version by
 *	  itself (ddb_find_version then searches the hash's key space and
 *	  repairs it) is counted as stale_map_entries, not reported: an entry
 *	  keeps naming the leaf its version was written on, which may since
 *	  have been unlinked and reused as any kind of page.  Set entries that
 *	  no leaf item owns are counted as orphan_map_entries, not reported: a
 *	  crash between a prune's record and its map clear's (ddb_map_clear,
 *	  after the leaf is released) leaves some, which cost only space (their
 *	  map leaf is never freed).  Anything else that leaves them is a bug,
 *	  and the tests of workloads without crashes expect 0
 *
 *	- run length: the versions of one key span at most
 *	  ddb.verify_max_key_leaves leaves (default 1000; 0 = no limit)
 *	- visibility map (ddb_vismap.c): only leaves of the tree are marked all
 *	  visible, and every version on a marked leaf is live to
 *	  HeapTupleSatisfiesVacuum (a change that failed to clear the mark
 *	  before it added a version, marked one deleted or locked, leaves one
 *	  that is not); all_visible_leaves and empty_leaves count the marked
 *	  leaves and those without items
 *
 * The summary also reports leaf_fill, the share of the leaves' capacity
 * that leaf items and their line pointers take (alignment padding and high
 * keys not counted), leaf_prefix_bytes, the mean length of the leaves'
 * prefixes (ddb_page.h, "Leaf prefix": bytes each item on the leaf does
 * not store), leaf_prefix_copies, the leaves that keep it after their
 * high key, leaf_prefix_saved, the share of the leaves' capacity their
 * items would take more with their whole keys (leaf_fill plus it is the
 * fill of the same leaves without prefixes, alignment aside: what a
 * split policy's packing is judged by), storage_version (the
 * metapage's), the table's fillfactor
 * (ddb_fillfactor: the leaf reserve), and max_key_leaves, the most leaves the versions of
 * one key span.  Writers stay within bounded page locks however long the
 * run (ddb_tree.c's lock order rule 4), and an old snapshot legitimately
 * keeps versions alive, so a long run is not broken, only costly: every
 * write of the key and every read through its first leaf walks it.  But a
 * run of 1000 leaves (8 MB of one key's versions) means that versions are
 * not being pruned -- a snapshot held for hours, or pruning broken -- and
 * is reported; a workload that expects it raises the setting.  The tests
 * that build long runs check max_key_leaves, so they prove they exercise
 * what they claim.
 *
 * The table is locked in ShareLock, so writers wait and the tree is quiet.
 * The first violation raises ERRCODE_DATA_CORRUPTED; a healthy tree yields a
 * jsonb summary.  Who may: a role with SELECT on the table (the summary
 * counts its items) that may also lock it so, which PostgreSQL 15's LOCK
 * TABLE ... IN SHARE MODE grants UPDATE, DELETE and TRUNCATE (on a hot
 * standby, where the lock is AccessShareLock, SELECT alone); checked
 * before the lock is taken, so that no other role can hold writers up.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/multixact.h"
#include "access/relation.h"
#include "access/tableam.h"
#include "catalog/pg_class.h"
#include "access/xlog.h"
#include "access/heapam.h"
#include "access/transam.h"
#include "storage/procarray.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "ddb.h"
#include "engine/ddb_page.h"

PG_FUNCTION_INFO_V1(ddb_verify);

/* ddb.verify_max_key_leaves: see the file header */
static int	verify_max_key_leaves = 1000;

void
ddb_verify_init(void)
{
	DefineCustomIntVariable("ddb.verify_max_key_leaves",
							"Most leaves the versions of one key may span before ddb_verify reports the table.",
							"0 turns the check off.",
							&verify_max_key_leaves, 1000, 0, INT_MAX,
							PGC_USERSET, 0, NULL, NULL, NULL);
}

extern const TableAmRoutine *ddb_routine(void);

typedef struct VerifyState
{
	Relation	rel;
	const DdbKeyInfo *keyinfo;	/* the table's key schema (ddb_key_check) */
	BlockNumber nblocks;
	bool	   *seen;
	bool	   *live_leaf;		/* leaves of the tree (not deleted ones) */
	uint64		pages;
	uint64		leaf_pages;
	uint64		stale_map_entries;
	uint64		versions_with_entries;	/* leaf items whose map slot is set */
	uint64		items;
	uint64		leaf_bytes;		/* bytes used by leaf items and line pointers */
	uint64		prefix_saved;	/* bytes leaf items leave out: prefixes */
	uint64		prefix_bytes;	/* the leaves' prefix lengths, summed */
	uint64		prefix_copies;	/* leaves keeping it after the high key */
	uint32		version;		/* the metapage's storage version */
	uint64		live;			/* live versions */
	uint64		map_pages;
	char	   *lastkey;		/* key of the previous leaf item (runs span pages) */
	int			lastkeylen;
	int			lastlive;		/* live versions of lastkey so far */
	BlockNumber lastblk;		/* leaf of the previous leaf item */
	uint32		lastleaves;		/* leaves lastkey's versions span so far */
	uint32		max_key_leaves; /* most leaves one key's versions span */
	TransactionId relfrozenxid;
	TransactionId nextxid;
	MultiXactId relminmxid;
	MultiXactId nextmulti;
	uint64		next_rowid;		/* the metapage's row id counter */
	Buffer		vmbuf;			/* a visibility map page (ddb_vismap.c) */
	uint64		all_visible_leaves; /* leaves whose map bit is set */
	uint64		empty_leaves;	/* leaves without items */
} VerifyState;

static void corrupt(VerifyState *vs, BlockNumber blk, const char *fmt,...) pg_attribute_printf(3, 4) pg_attribute_noreturn();

static void
corrupt(VerifyState *vs, BlockNumber blk, const char *fmt,...)
{
	char		buf[512];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg_internal("ddb table \"%s\" is corrupted at block %u: %s",
							 RelationGetRelationName(vs->rel), blk, buf)));
}

/* A palloc'd copy of a page, read under share lock. */
static Page
read_page(VerifyState *vs, BlockNumber blk)
{
	Buffer		buf;
	Page		copy = palloc(BLCKSZ);

	if (blk >= vs->nblocks)
		corrupt(vs, blk, "link to a block beyond the end of the relation (%u blocks)", vs->nblocks);
	buf = ReadBuffer(vs->rel, blk);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	memcpy(copy, BufferGetPage(buf), BLCKSZ);
	UnlockReleaseBuffer(buf);
	return copy;
}

static void
check_layout(VerifyState *vs, BlockNumber blk, Page page)
{
	PageHeader	ph = (PageHeader) page;

	if (PageIsNew(page))
		corrupt(vs, blk, "page is not initialized");
	if (ph->pd_special != BLCKSZ - MAXALIGN(sizeof(DdbPageOpaqueData)))
		corrupt(vs, blk, "special space at %u", ph->pd_special);
	if (ph->pd_lower < SizeOfPageHeaderData || ph->pd_lower > ph->pd_upper ||
		ph->pd_upper > ph->pd_special)
		corrupt(vs, blk, "bad layout: pd_lower %u, pd_upper %u, pd_special %u",
				ph->pd_lower, ph->pd_upper, ph->pd_special);
	if (DdbPageGetOpaque(page)->page_id != DDB_PAGE_ID)
		corrupt(vs, blk, "page id %04x", DdbPageGetOpaque(page)->page_id);
	if (DdbPageGetOpaque(page)->flags & DDB_PAGE_META)
		return;					/* pd_lower covers the metadata, not items */
	for (OffsetNumber off = FirstOffsetNumber; off <= PageGetMaxOffsetNumber(page); off++)
	{
		ItemId		iid = PageGetItemId(page, off);

		if (!ItemIdIsNormal(iid))
			corrupt(vs, blk, "item %u is not a normal item", off);
		if (ItemIdGetOffset(iid) < ph->pd_upper ||
			ItemIdGetOffset(iid) + ItemIdGetLength(iid) > ph->pd_special)
			corrupt(vs, blk, "item %u lies outside the item area", off);
	}
}

/*
 * Item key (leaf), full separator (internal: the page's prefix and the
 * stored rest) or high key (off == DDB_HIKEY) of item off, into buf.
 */
static void
item_key(Page page, OffsetNumber off, char *buf, int *len)
{
	if (DdbPageIsLeaf(page) && off >= DdbPageFirstData(page))
		ddb_leaf_item_key(page, (DdbLeafItem) PageGetItem(page, PageGetItemId(page, off)),
						  buf, len);
	else
	{
		DdbKeyItem	ki = (DdbKeyItem) PageGetItem(page, PageGetItemId(page, off));
		int			plen = 0;

		if (off > DdbPageFirstData(page))
		{
			/*
			 * The page's prefix: the key of its minus-infinity downlink when
			 * that has one, else the start of its high key (ddb_page.h).
			 */
			DdbKeyItem	pk = (DdbKeyItem) PageGetItem(page, PageGetItemId(page, DdbPageFirstData(page)));

			if (pk->keylen == 0 && !DdbPageIsRightmost(page))
				pk = (DdbKeyItem) PageGetItem(page, PageGetItemId(page, DDB_HIKEY));

			plen = Min(DdbPageGetOpaque(page)->prefixlen, pk->keylen);
			memcpy(buf, pk->key, plen);
		}
		memcpy(buf + plen, ki->key, ki->keylen);
		*len = plen + ki->keylen;
	}
}

/* item_key, palloc'd to size. */
static char *
item_key_copy(Page page, OffsetNumber off, int *len)
{
	char		buf[BLCKSZ];
	char	   *copy;

	item_key(page, off, buf, len);
	copy = palloc(Max(*len, 1));
	memcpy(copy, buf, *len);
	return copy;
}

/*
 * Check one page's own invariants.  lowkey (NULL = -infinity) is the bound
 * its parent gave it; highkey/has_high what the parent expects as its high
 * key (has_high false: rightmost).
 */
static void
check_page(VerifyState *vs, BlockNumber blk, Page page, int level,
		   const char *lowkey, int lowlen, bool has_low)
{
	DdbPageOpaque op = DdbPageGetOpaque(page);
	OffsetNumber first = DdbPageFirstData(page);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	char		prev[BLCKSZ];
	int			prevlen = 0;
	bool		have_prev = false;
	char		cur[BLCKSZ];
	int			curlen;

	check_layout(vs, blk, page);
	if (op->level != level)
		corrupt(vs, blk, "level %u, expected %d", op->level, level);
	if (op->flags & DDB_PAGE_DELETED)
		corrupt(vs, blk, "deleted page is reachable from the tree");
	if ((level == 0) != ((op->flags & DDB_PAGE_LEAF) != 0) ||
		(level > 0) != ((op->flags & DDB_PAGE_INTERNAL) != 0))
		corrupt(vs, blk, "flags %04x do not match level %d", op->flags, level);
	if (!DdbPageIsRightmost(page) && maxoff < DDB_HIKEY)
		corrupt(vs, blk, "page with a right sibling has no high key");
	if (level > 0 && maxoff < first)
		corrupt(vs, blk, "internal page has no downlinks");
	if (level == 0 && (op->flags & DDB_PAGE_PREFIX_COPY) && op->prefixlen == 0)
		corrupt(vs, blk, "leaf flags a prefix copy but has no prefix");
	if (op->prefixlen > 0 && level == 0)
	{
		/*
		 * "Leaf prefix" in ddb_page.h: in version 2 the key space's, kept
		 * in the high key; in version 3 the items', kept in the high key
		 * or, only when that does not start with it, copied after it.
		 * Every item key starts with it: the order and bound checks read
		 * them through it (item_key).
		 */
		DdbKeyItem	hk = maxoff >= DDB_HIKEY ?
			(DdbKeyItem) PageGetItem(page, PageGetItemId(page, DDB_HIKEY)) : NULL;
		bool		copy = (op->flags & DDB_PAGE_PREFIX_COPY) != 0;

		if (vs->version < 2)
			corrupt(vs, blk, "leaf has a prefix of %u bytes in a table of storage version %u",
					op->prefixlen, vs->version);
		else if (DdbPageIsRightmost(page) || hk == NULL)
			corrupt(vs, blk, "rightmost leaf has a prefix of %u bytes", op->prefixlen);
		else if (copy && vs->version < 3)
			corrupt(vs, blk, "leaf has a prefix copy in a table of storage version %u",
					vs->version);
		else if (copy && hk->keylen + op->prefixlen > DDB_MAX_SEP_LEN)
			corrupt(vs, blk, "leaf prefix copy of %u bytes makes the high key longer than a separator may be",
					op->prefixlen);
		else if (copy && ItemIdGetLength(PageGetItemId(page, DDB_HIKEY)) <
				 DdbKeyItemSize(hk->keylen) + op->prefixlen)
			corrupt(vs, blk, "leaf prefix copy of %u bytes lies outside the high key",
					op->prefixlen);
		else if (copy && ddb_starts_with(hk->key, hk->keylen, hk->key + hk->keylen, op->prefixlen))
			corrupt(vs, blk, "leaf prefix of %u bytes is copied though the high key holds it",
					op->prefixlen);
		else if (!copy && op->prefixlen > hk->keylen)
			corrupt(vs, blk, "leaf prefix of %u bytes is longer than the high key", op->prefixlen);
		else if (vs->version < 3 && !has_low)
			corrupt(vs, blk, "leftmost leaf has a prefix of %u bytes", op->prefixlen);
		else if (vs->version < 3 &&
				 (lowlen < op->prefixlen || memcmp(lowkey, hk->key, op->prefixlen) != 0))
			corrupt(vs, blk, "leaf prefix of %u bytes is not shared by the leaf's low bound",
					op->prefixlen);
		vs->prefix_bytes += op->prefixlen;
		vs->prefix_copies += copy;
	}
	if (level > 0 && maxoff >= first)
	{
		/*
		 * The first downlink is minus infinity: its key, if any, is the
		 * page's whole prefix; without one, the high key holds the prefix.
		 */
		DdbKeyItem	first_dl = (DdbKeyItem) PageGetItem(page, PageGetItemId(page, first));

		if (first_dl->keylen > 0 && first_dl->keylen != op->prefixlen)
			corrupt(vs, blk, "first downlink is not minus infinity");
		else if (first_dl->keylen == 0 && op->prefixlen > 0 &&
				 (DdbPageIsRightmost(page) ||
				  op->prefixlen > ((DdbKeyItem) PageGetItem(page, PageGetItemId(page, DDB_HIKEY)))->keylen))
			corrupt(vs, blk, "separator prefix of %u bytes is longer than the key it comes from", op->prefixlen);
	}

	for (OffsetNumber off = first; off <= maxoff; off++)
	{
		ItemId		iid = PageGetItemId(page, off);

		if (level == 0)
		{
			DdbLeafItem li = (DdbLeafItem) PageGetItem(page, iid);
			OffsetNumber toff = ItemPointerGetOffsetNumberNoCheck(&li->tid);
			HeapTupleHeader tup;

			if (ItemIdGetLength(iid) < offsetof(DdbLeafItemData, key) ||
				DdbLeafTupleOffset(li->keylen) + SizeofHeapTupleHeader > ItemIdGetLength(iid))
				corrupt(vs, blk, "leaf item %u has a bad length", off);
			if (op->prefixlen + li->keylen <= 4)
				corrupt(vs, blk, "leaf item %u has a key of %u bytes", off,
						op->prefixlen + li->keylen);
			if (toff < 1 || toff > DDB_ROWIDS_PER_BLOCK)
				corrupt(vs, blk, "leaf item %u has row id offset %u", off, toff);
			if (ddb_tid_to_rowid(&li->tid) >= vs->next_rowid)
				corrupt(vs, blk, "leaf item %u has row id " UINT64_FORMAT ", which is not below the metapage's next row id " UINT64_FORMAT,
						off, ddb_tid_to_rowid(&li->tid), vs->next_rowid);
			tup = DdbLeafItemGetTuple(li);
			if (tup->t_hoff < SizeofHeapTupleHeader ||
				DdbLeafTupleOffset(li->keylen) + tup->t_hoff > ItemIdGetLength(iid))
				corrupt(vs, blk, "leaf item %u has a bad tuple header", off);
			vs->items++;
			vs->leaf_bytes += ItemIdGetLength(iid) + sizeof(ItemIdData);
			vs->prefix_saved += op->prefixlen;
		}
		else
		{
			DdbKeyItem	ki = (DdbKeyItem) PageGetItem(page, iid);

			if (DdbKeyItemSize(ki->keylen) > ItemIdGetLength(iid))
				corrupt(vs, blk, "internal item %u has a bad length", off);
			if (ki->child == InvalidBlockNumber || ki->child == DDB_METAPAGE_BLKNO)
				corrupt(vs, blk, "downlink %u points to block %u", off, ki->child);
			if (off == first)
				continue;
		}

		item_key(page, off, cur, &curlen);
		if (have_prev && ddb_compare_bytes(prev, prevlen, cur, curlen) >= 0)
			corrupt(vs, blk, "items %u and %u are out of order", off - 1, off);
		if (!have_prev && has_low && ddb_compare_bytes(lowkey, lowlen, cur, curlen) > 0)
			corrupt(vs, blk, "item %u is below the page's low bound", off);
		if (level == 0)
		{
			/* read through the leaf's prefix: a wrong one shows here */
			const char *why = ddb_key_check(vs->keyinfo, cur, curlen - DDB_SUFFIX_LEN);

			if (why != NULL)
				corrupt(vs, blk, "leaf item %u has a bad key: %s", off, why);
		}
		memcpy(prev, cur, curlen);
		prevlen = curlen;
		have_prev = true;
	}

	if (!DdbPageIsRightmost(page) && have_prev)
	{
		item_key(page, DDB_HIKEY, cur, &curlen);
		if (ddb_compare_bytes(prev, prevlen, cur, curlen) >= 0)
			corrupt(vs, blk, "last item is not below the high key");
	}
}

static void
check_xid(VerifyState *vs, BlockNumber blk, OffsetNumber off, const char *what,
		  TransactionId xid)
{
	if (!TransactionIdIsNormal(xid))
		return;
	if (TransactionIdIsValid(vs->relfrozenxid) &&
		TransactionIdPrecedes(xid, vs->relfrozenxid))
		corrupt(vs, blk, "item %u has %s %u before relfrozenxid %u", off, what,
				xid, vs->relfrozenxid);
	/*
	 * vs->nextxid was read when the check began; a transaction that started
	 * since may have locked a version (a row lock does not conflict with
	 * our ShareLock), or on a standby replay may have changed one.  The
	 * counter passed such an xid before the version got it, so only an xid
	 * the current counter has not reached is from the future.
	 */
	if (!TransactionIdPrecedes(xid, vs->nextxid))
		vs->nextxid = ReadNextTransactionId();
	if (!TransactionIdPrecedes(xid, vs->nextxid))
		corrupt(vs, blk, "item %u has %s %u from the future (next xid %u)", off, what,
				xid, vs->nextxid);
}

/*
 * A multixact xmax (ddb_modify.c makes one only for an update or delete
 * beside a row lock of the same transaction): between the table's
 * relminmxid and the next multixact, so that the visibility routines can
 * read its members.
 */
static void
check_multi(VerifyState *vs, BlockNumber blk, OffsetNumber off, HeapTupleHeader t)
{
	MultiXactId multi = HeapTupleHeaderGetRawXmax(t);

	/* on a standby, replay may have made it since the check began: as check_xid */
	if (MultiXactIdIsValid(multi) && !MultiXactIdPrecedes(multi, vs->nextmulti))
		vs->nextmulti = ReadNextMultiXactId();
	if (!MultiXactIdIsValid(multi) ||
		(MultiXactIdIsValid(vs->relminmxid) && MultiXactIdPrecedes(multi, vs->relminmxid)) ||
		!MultiXactIdPrecedes(multi, vs->nextmulti))
		corrupt(vs, blk, "item %u has multixact xmax %u outside relminmxid %u to next multixact %u",
				off, multi, vs->relminmxid, vs->nextmulti);
}

/*
 * MVCC and row-id map checks of one leaf, on the real buffer (visibility
 * routines set hint bits, so they need it).
 */
static void
check_leaf_mvcc(VerifyState *vs, BlockNumber blk)
{
	Buffer		buf = ReadBuffer(vs->rel, blk);
	Page		page;
	OffsetNumber maxoff;
	TransactionId oldest = GetOldestNonRemovableTransactionId(vs->rel);
	struct
	{
		OffsetNumber off;
		ItemPointerData tid;
		uint32		hash;
		bool		committed;	/* else: only counted, if it has an entry */
	}		   *mapped = NULL;
	int			nmapped = 0;

	bool		all_visible = ddb_vm_is_set(vs->rel, blk, &vs->vmbuf);

	if (all_visible)
		vs->all_visible_leaves++;
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	maxoff = PageGetMaxOffsetNumber(page);
	if (maxoff < DdbPageFirstData(page))
		vs->empty_leaves++;
	for (OffsetNumber off = DdbPageFirstData(page); off <= maxoff; off++)
	{
		ItemId		iid = PageGetItemId(page, off);
		DdbLeafItem li = (DdbLeafItem) PageGetItem(page, iid);
		HeapTupleData htup;
		HeapTupleHeader t = DdbLeafItemGetTuple(li);
		HTSV_Result res;
		char		keybuf[DDB_MAX_KEY_LEN];
		const char *key;
		int			keylen;

		htup.t_data = t;
		htup.t_len = ItemIdGetLength(iid) - DdbLeafTupleOffset(li->keylen);
		htup.t_self = li->tid;
		htup.t_tableOid = RelationGetRelid(vs->rel);

		if (!HeapTupleHeaderXminFrozen(t))
			check_xid(vs, blk, off, "xmin", HeapTupleHeaderGetRawXmin(t));
		if (t->t_infomask & HEAP_XMAX_INVALID)
			;
		else if (t->t_infomask & HEAP_XMAX_IS_MULTI)
			check_multi(vs, blk, off, t);
		else
			check_xid(vs, blk, off, "xmax", HeapTupleHeaderGetRawXmax(t));

		res = HeapTupleSatisfiesVacuum(&htup, oldest, buf);

		/*
		 * A leaf marked all visible was left so by VACUUM, and every change
		 * since would have cleared the mark first (ddb_vismap.c).
		 */
		if (all_visible && res != HEAPTUPLE_LIVE)
			corrupt(vs, blk, "the leaf is marked all visible, but item %u is not visible to every snapshot", off);

		key = ddb_leaf_key(page, li, keybuf, &keylen);
		/* runs of versions of one key may span pages */
		if (vs->lastkey == NULL || vs->lastkeylen != keylen ||
			memcmp(vs->lastkey, key, keylen) != 0)
		{
			if (vs->lastkey)
				pfree(vs->lastkey);
			vs->lastkey = palloc(keylen);
			memcpy(vs->lastkey, key, keylen);
			vs->lastkeylen = keylen;
			vs->lastlive = 0;
			vs->lastleaves = 1;
		}
		else if (vs->lastblk != blk)
			vs->lastleaves++;
		vs->lastblk = blk;
		vs->max_key_leaves = Max(vs->max_key_leaves, vs->lastleaves);
		if (verify_max_key_leaves > 0 && vs->lastleaves > (uint32) verify_max_key_leaves)
			corrupt(vs, blk, "the versions of one key span more than %d leaves (ddb.verify_max_key_leaves)",
					verify_max_key_leaves);
		if (res == HEAPTUPLE_LIVE)
		{
			vs->live++;
			if (++vs->lastlive > 1)
				corrupt(vs, blk, "item %u is a second live version of its key", off);
			/*
			 * A version never updated points to itself.  (One whose updater
			 * aborted keeps the dead successor in t_ctid, as on heap.)
			 */
			if (HeapTupleHeaderGetRawXmax(t) == InvalidTransactionId &&
				!ItemPointerEquals(&t->t_ctid, &li->tid))
				corrupt(vs, blk, "item %u was never updated but its t_ctid does not point to itself", off);
		}

		/*
		 * The map must lead to every version whose inserter committed;
		 * the others' entries are only counted (orphan_map_entries).
		 */
		if (nmapped == 0)
			mapped = palloc(sizeof(*mapped) * maxoff);
		mapped[nmapped].off = off;
		mapped[nmapped].tid = li->tid;
		mapped[nmapped].hash = ddb_key_hash(key);
		mapped[nmapped].committed = HeapTupleHeaderXminFrozen(t) ||
			TransactionIdDidCommit(HeapTupleHeaderGetRawXmin(t));
		nmapped++;
	}

	/*
	 * Resolve those versions through the map.  That reads this leaf again
	 * (and others), so the lock is released first; the page may then change
	 * under a concurrent writer, VACUUM, or on a standby the replay of one
	 * (items pruned or moved right by a split).  A resolution that fails is
	 * corruption only if the leaf is still as it was when its items were
	 * checked: otherwise the version may have moved or gone meanwhile, and
	 * this leaf's remaining map checks are skipped.  (Reading items after
	 * re-locking, as this once did, read whatever the page then held.)
	 */
	if (nmapped > 0)
	{
		char	   *snap = palloc(BLCKSZ);

		memcpy(snap, page, BLCKSZ);
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		for (int i = 0; i < nmapped; i++)
		{
			OffsetNumber off = mapped[i].off;
			BlockNumber hint;
			Buffer		fbuf;
			OffsetNumber foff;
			DdbHintResult hres;
			bool		found;
			char		msg[256];

			msg[0] = '\0';
			if (!mapped[i].committed)
			{
				if (ddb_map_has_entry(vs->rel, &mapped[i].tid))
					vs->versions_with_entries++;
				continue;
			}
			if (!ddb_map_check(vs->rel, &mapped[i].tid, mapped[i].hash, &hint))
				snprintf(msg, sizeof(msg), "item %u has no row-id map entry with its hash", off);
			else if (hint >= vs->nblocks)
				snprintf(msg, sizeof(msg),
						 "item %u's row-id map entry points to block %u beyond the end of the relation",
						 off, hint);
			else
			{
				vs->versions_with_entries++;
				found = ddb_find_version_ext(vs->rel, &mapped[i].tid, BUFFER_LOCK_SHARE,
											 &fbuf, &foff, &hres);
				if (!found)
					snprintf(msg, sizeof(msg), "item %u cannot be found through the row-id map", off);
				else
				{
					if (BufferGetBlockNumber(fbuf) != blk || foff != off)
						snprintf(msg, sizeof(msg), "item %u resolves to block %u offset %u", off,
								 BufferGetBlockNumber(fbuf), foff);
					else if (hres != DDB_HINT_OK)
						vs->stale_map_entries++;
					UnlockReleaseBuffer(fbuf);
				}
			}
			if (msg[0] != '\0')
			{
				bool		unchanged;

				LockBuffer(buf, BUFFER_LOCK_SHARE);
				unchanged = memcmp(snap, BufferGetPage(buf), BLCKSZ) == 0;
				LockBuffer(buf, BUFFER_LOCK_UNLOCK);
				if (unchanged)
					corrupt(vs, blk, "%s", msg);
				break;			/* the leaf changed: its items moved on */
			}
		}
		pfree(snap);
		pfree(mapped);
		ReleaseBuffer(buf);
		return;
	}
	UnlockReleaseBuffer(buf);
}

/*
 * A block that the tree and the map do not reach must be a deleted leaf
 * (ddb_tree.c, "Unlinking empty leaves") or a freed row-id map leaf
 * (ddb_rowid.c, which has no right-link): its layout, its one item.  Its
 * right-link is returned for check_deleted_chains.  (A safexid ahead of
 * the next xid is not checked: on a standby or after recovery the next
 * xid may lag the primary's, as amcheck notes.)
 */
static void
check_deleted(VerifyState *vs, BlockNumber blk, Page page, BlockNumber *right,
			  FullTransactionId *safexid)
{
	DdbPageOpaque op;
	ItemId		iid;
	DdbDeletedItemData d;

	check_layout(vs, blk, page);
	op = DdbPageGetOpaque(page);
	if (op->flags != (DDB_PAGE_LEAF | DDB_PAGE_DELETED) &&
		op->flags != (DDB_PAGE_MAP_LEAF | DDB_PAGE_DELETED))
		corrupt(vs, blk, "initialized page is not reachable from the root");
	if (op->level != 0 || op->prefixlen != 0)
		corrupt(vs, blk, "deleted leaf at level %u with prefix %u", op->level, op->prefixlen);
	if (PageGetMaxOffsetNumber(page) != DDB_HIKEY)
		corrupt(vs, blk, "deleted leaf has %u items", (unsigned) PageGetMaxOffsetNumber(page));
	iid = PageGetItemId(page, DDB_HIKEY);
	if (ItemIdGetLength(iid) != sizeof(DdbDeletedItemData))
		corrupt(vs, blk, "deleted leaf's item has %u bytes", ItemIdGetLength(iid));
	memcpy(&d, PageGetItem(page, iid), sizeof(d));
	if (d.child != InvalidBlockNumber || d.keylen != 0)
		corrupt(vs, blk, "deleted leaf's item is not an empty high key");
	if (op->flags & DDB_PAGE_MAP_LEAF)
	{
		/* a freed row-id map leaf: no right-link, no chain */
		if (op->right != InvalidBlockNumber)
			corrupt(vs, blk, "freed row-id map leaf has right-link %u", op->right);
	}
	else if (op->right == InvalidBlockNumber || op->right >= vs->nblocks)
		corrupt(vs, blk, "deleted leaf's right-link %u leads nowhere", op->right);
	*right = op->right;
	*safexid = d.safexid;
}

/*
 * From every deleted leaf not yet recyclable, right-links lead through
 * deleted leaves deleted no earlier (non-decreasing safexid) to a leaf of
 * the tree: what a reader that lands on one relies on.  (A reader can no
 * longer land on a recyclable one, whose right-link may name a page
 * reused since; the pages right of a leaf not yet recyclable, deleted no
 * earlier, are not recyclable either.)  Each block is followed once.
 *
 * That last argument assumes the xmin horizon never moves back, which
 * PostgreSQL does not promise (a raised vacuum_defer_cleanup_age, a
 * standby's feedback after a reconnect without a slot): a page right of
 * one that is not recyclable now may have been recyclable, and reused,
 * before.  So a right-link that names neither a leaf nor a deleted leaf
 * is corruption only if the page it names was last written before the
 * deleted leaf was (lsn[]: a deleted leaf is never written again); one
 * written since may be a reuse, and the chain check stops there.
 */
static void
check_deleted_chains(VerifyState *vs, BlockNumber *right, FullTransactionId *safexid,
					 const bool *recyclable, const XLogRecPtr *lsn)
{
	uint8	   *state = palloc0(vs->nblocks);	/* 1 = on the walk, 2 = good */
	BlockNumber *walk = palloc(sizeof(BlockNumber) * vs->nblocks);

	for (BlockNumber start = 0; start < vs->nblocks; start++)
	{
		int			n = 0;
		BlockNumber blk = start;

		if (right[start] == InvalidBlockNumber || state[start] == 2 || recyclable[start])
			continue;
		while (right[blk] != InvalidBlockNumber && state[blk] != 2)
		{
			BlockNumber next = right[blk];

			if (state[blk] == 1)
				corrupt(vs, blk, "right-links of deleted leaves form a cycle");
			state[blk] = 1;
			walk[n++] = blk;
			if (right[next] != InvalidBlockNumber)
			{
				if (FullTransactionIdPrecedes(safexid[next], safexid[blk]))
					corrupt(vs, blk, "deleted leaf's right-link %u names a page deleted before it", next);
			}
			else if (!vs->live_leaf[next])
			{
				Page		target = read_page(vs, next);
				bool		rewritten = PageGetLSN(target) > lsn[blk];

				pfree(target);
				if (!rewritten)
					corrupt(vs, blk, "deleted leaf's right-link %u names neither a leaf nor a deleted leaf", next);
				break;			/* reused after the horizon moved back */
			}
			blk = next;
		}
		while (n > 0)
			state[walk[--n]] = 2;
	}
	pfree(state);
	pfree(walk);
}

/*
 * An all-zero metapage beside initialized pages is corruption (ddb_tree.c,
 * "Creation"): no item can be reached.  Walk every other block and report
 * what became unreachable, so the damage can be judged; an all-zero
 * metapage with no initialized page is the empty table a crash leaves.
 */
static void
check_zero_metapage(VerifyState *vs)
{
	uint32		leaves = 0,
				internal = 0,
				map = 0,
				other = 0;
	uint64		items = 0;
	Page		page;

	if (vs->nblocks == 0)
		return;
	page = read_page(vs, DDB_METAPAGE_BLKNO);
	if (!PageIsNew(page))
	{
		pfree(page);
		return;
	}
	pfree(page);
	for (BlockNumber blk = DDB_METAPAGE_BLKNO + 1; blk < vs->nblocks; blk++)
	{
		uint16		flags;

		CHECK_FOR_INTERRUPTS();
		page = read_page(vs, blk);
		if (PageIsNew(page))
		{
			pfree(page);
			continue;
		}
		flags = ((PageHeader) page)->pd_special == BLCKSZ - MAXALIGN(sizeof(DdbPageOpaqueData)) &&
			DdbPageGetOpaque(page)->page_id == DDB_PAGE_ID ? DdbPageGetOpaque(page)->flags : 0;
		if (flags & DDB_PAGE_LEAF)
		{
			OffsetNumber maxoff = PageGetMaxOffsetNumber(page);

			leaves++;
			if (maxoff >= DdbPageFirstData(page))
				items += maxoff - DdbPageFirstData(page) + 1;
		}
		else if (flags & DDB_PAGE_INTERNAL)
			internal++;
		else if (flags & (DDB_PAGE_MAP_LEAF | DDB_PAGE_MAP_DIR))
			map++;
		else
			other++;
		pfree(page);
	}
	if (leaves + internal + map + other > 0)
		corrupt(vs, DDB_METAPAGE_BLKNO,
				"the metapage is all zeroes; %u initialized pages are unreachable: %u leaves holding " UINT64_FORMAT " items, %u internal pages, %u row-id map pages, %u other pages",
				leaves + internal + map + other, leaves, items, internal, map, other);
}

/* A separator copy, for the expected chain of the next level. */
typedef struct Downlink
{
	BlockNumber child;
	char	   *low;			/* NULL = -infinity */
	int			lowlen;
	char	   *high;			/* NULL = +infinity */
	int			highlen;
} Downlink;

/* May the current user verify relid, locked in lockmode?  (See the header.) */
static void
check_privileges(Oid relid, LOCKMODE lockmode)
{
	const AclMode lock = ACL_UPDATE | ACL_DELETE | ACL_TRUNCATE;
	bool		missing = false;
	AclMode		held = pg_class_aclmask_ext(relid, GetUserId(), ACL_SELECT | lock, ACLMASK_ALL,
											&missing);

	if (missing)
		return;					/* relation_open says so */
	if (!(held & ACL_SELECT) || (lockmode != AccessShareLock && !(held & lock)))
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, get_rel_name(relid));
}

Datum
ddb_verify(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	VerifyState vs;
	DdbMetaPageData meta;
	Downlink   *cur;
	int			ncur;
	int			height = 0;
	BlockNumber unused = 0;
	uint64		map_entries = 0;
	BlockNumber deleted = 0;
	BlockNumber nrecyclable = 0;
	bool	   *recyclable;
	XLogRecPtr *deleted_lsn;
	BlockNumber *deleted_right;
	FullTransactionId *deleted_xid;
	int			fillfactor;
	StringInfoData out;

	/*
	 * ShareLock keeps writers out so the tree is quiet; a hot standby only
	 * allows AccessShareLock (replay may then race with us: run it there
	 * when the primary is idle).
	 */
	LOCKMODE	lockmode = RecoveryInProgress() ? AccessShareLock : ShareLock;

	memset(&vs, 0, sizeof(vs));
	check_privileges(relid, lockmode);
	vs.rel = relation_open(relid, lockmode);
	/* a materialized view USING ddb is stored as a ddb tree too */
	if (!ddb_is_ddb_relation(vs.rel) &&
		!(vs.rel->rd_rel->relkind == RELKIND_MATVIEW && vs.rel->rd_tableam == ddb_routine()))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a ddb table", RelationGetRelationName(vs.rel))));
	vs.keyinfo = ddb_get_keyinfo(vs.rel);

	/*
	 * This transaction's deferred row-id map entries first, so that the map
	 * check finds them: writing them can add map pages, and every page must
	 * lie within the size read here.
	 */
	if (!RecoveryInProgress())
		ddb_map_flush(vs.rel);
	vs.nblocks = RelationGetNumberOfBlocks(vs.rel);
	check_zero_metapage(&vs);
	/* no blocks, or only all-zero ones a crash left before the tree was made */
	if (vs.nblocks == 0 || !ddb_tree_exists(vs.rel))
	{
		fillfactor = ddb_fillfactor(vs.rel);
		relation_close(vs.rel, lockmode);
		PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in,
											CStringGetDatum(psprintf("{\"pages\": 0, \"height\": 0, \"items\": 0, \"fillfactor\": %d}",
																	 fillfactor))));
	}
	vs.seen = palloc0(sizeof(bool) * vs.nblocks);
	vs.live_leaf = palloc0(sizeof(bool) * vs.nblocks);
	vs.relfrozenxid = vs.rel->rd_rel->relfrozenxid;
	vs.nextxid = ReadNextTransactionId();
	vs.relminmxid = vs.rel->rd_rel->relminmxid;
	vs.nextmulti = ReadNextMultiXactId();

	{
		Page		mp = read_page(&vs, DDB_METAPAGE_BLKNO);

		check_layout(&vs, DDB_METAPAGE_BLKNO, mp);
		if (!(DdbPageGetOpaque(mp)->flags & DDB_PAGE_META))
			corrupt(&vs, 0, "block 0 is not a metapage");
		meta = *DdbPageGetMeta(mp);
		vs.next_rowid = meta.next_rowid;
		if (meta.magic != DDB_MAGIC || meta.version < DDB_VERSION_MIN ||
			meta.version > DDB_VERSION)
			corrupt(&vs, 0, "bad magic %08x or version %u", meta.magic, meta.version);
		vs.version = meta.version;
		if (((PageHeader) mp)->pd_lower < (char *) DdbPageGetMeta(mp) + sizeof(DdbMetaPageData) - (char *) mp)
			corrupt(&vs, 0, "metapage contents lie beyond pd_lower");
		if (meta.height < 1 || meta.height > 32)
			corrupt(&vs, 0, "height %u", meta.height);
		vs.seen[0] = true;
		vs.pages++;
		pfree(mp);
	}

	/* Level by level: the expected chain is the parents' downlinks. */
	cur = palloc(sizeof(Downlink));
	cur[0].child = meta.root;
	cur[0].low = cur[0].high = NULL;
	cur[0].lowlen = cur[0].highlen = 0;
	ncur = 1;

	for (int level = meta.height - 1; level >= 0; level--)
	{
		Downlink   *next = NULL;
		int			nnext = 0;
		int			maxnext = 0;

		CHECK_FOR_INTERRUPTS();
		for (int i = 0; i < ncur; i++)
		{
			BlockNumber blk = cur[i].child;
			Page		page;
			DdbPageOpaque op;

			if (blk >= vs.nblocks)
				corrupt(&vs, blk, "block beyond the end of the relation");
			if (vs.seen[blk])
				corrupt(&vs, blk, "page reached twice");
			vs.seen[blk] = true;
			page = read_page(&vs, blk);
			check_page(&vs, blk, page, level, cur[i].low, cur[i].lowlen, cur[i].low != NULL);
			op = DdbPageGetOpaque(page);
			vs.pages++;
			if (level == 0)
			{
				vs.live_leaf[blk] = true;
				vs.leaf_pages++;
				check_leaf_mvcc(&vs, blk);
			}

			/* right-link chain == parents' downlink order */
			if (i + 1 < ncur ? op->right != cur[i + 1].child : op->right != InvalidBlockNumber)
				corrupt(&vs, blk, "right-link %u does not match the parent's next downlink %u",
						op->right, i + 1 < ncur ? cur[i + 1].child : InvalidBlockNumber);

			/* high key == the parent's next separator */
			if (cur[i].high == NULL)
			{
				if (!DdbPageIsRightmost(page))
					corrupt(&vs, blk, "page has a high key but is last under its parent");
			}
			else
			{
				DdbKeyItem	hk;

				if (DdbPageIsRightmost(page))
					corrupt(&vs, blk, "page has no high key but its parent gives one");
				hk = (DdbKeyItem) PageGetItem(page, PageGetItemId(page, DDB_HIKEY));
				if (ddb_compare_bytes(hk->key, hk->keylen, cur[i].high, cur[i].highlen) != 0)
					corrupt(&vs, blk, "high key differs from the parent's separator");
			}

			if (level > 0)
			{
				OffsetNumber first = DdbPageFirstData(page);
				OffsetNumber maxoff = PageGetMaxOffsetNumber(page);

				for (OffsetNumber off = first; off <= maxoff; off++)
				{
					DdbKeyItem	ki = (DdbKeyItem) PageGetItem(page, PageGetItemId(page, off));
					Downlink   *d;

					if (nnext == maxnext)
					{
						maxnext = Max(64, maxnext * 2);
						next = next ? repalloc(next, sizeof(Downlink) * maxnext) :
							palloc(sizeof(Downlink) * maxnext);
					}
					d = &next[nnext++];
					d->child = ki->child;
					if (off == first)
					{
						d->low = cur[i].low;
						d->lowlen = cur[i].lowlen;
					}
					else
						d->low = item_key_copy(page, off, &d->lowlen);
					if (off < maxoff)
						d->high = item_key_copy(page, off + 1, &d->highlen);
					else
					{
						d->high = cur[i].high;
						d->highlen = cur[i].highlen;
					}
				}
			}
			pfree(page);
		}
		cur = next;
		ncur = nnext;
		height++;
	}

	vs.map_pages = ddb_map_mark_pages(vs.rel, vs.seen, vs.nblocks, &map_entries);

	/*
	 * Every other block must be a page a crash left unused (all zeroes) or
	 * a deleted leaf.
	 */
	deleted_right = palloc(sizeof(BlockNumber) * vs.nblocks);
	deleted_xid = palloc(sizeof(FullTransactionId) * vs.nblocks);
	recyclable = palloc0(sizeof(bool) * vs.nblocks);
	deleted_lsn = palloc0(sizeof(XLogRecPtr) * vs.nblocks);
	for (BlockNumber blk = 0; blk < vs.nblocks; blk++)
	{
		deleted_right[blk] = InvalidBlockNumber;
		if (!vs.seen[blk])
		{
			Page		page = read_page(&vs, blk);

			if (PageIsNew(page))
				unused++;
			else
			{
				check_deleted(&vs, blk, page, &deleted_right[blk], &deleted_xid[blk]);
				deleted_lsn[blk] = PageGetLSN(page);
				deleted++;
			}
			if (blk != DDB_METAPAGE_BLKNO && ddb_page_is_recyclable(page))
			{
				recyclable[blk] = true;
				nrecyclable++;
			}
			pfree(page);
		}
	}
	if (deleted > 0)
		check_deleted_chains(&vs, deleted_right, deleted_xid, recyclable, deleted_lsn);

	/* only the tree's leaves may be marked all visible (ddb_vismap.c) */
	for (BlockNumber blk = 0; blk < vs.nblocks; blk++)
	{
		if (!vs.live_leaf[blk] && ddb_vm_is_set(vs.rel, blk, &vs.vmbuf))
			corrupt(&vs, blk, "the page is marked all visible, but it is not a leaf of the tree");
	}
	if (BufferIsValid(vs.vmbuf))
		ReleaseBuffer(vs.vmbuf);
	pfree(recyclable);
	pfree(deleted_lsn);
	pfree(deleted_right);
	pfree(deleted_xid);

	fillfactor = ddb_fillfactor(vs.rel);
	relation_close(vs.rel, lockmode);

	initStringInfo(&out);
	appendStringInfo(&out,
					 "{\"pages\": %llu, \"height\": %d, \"leaf_pages\": %llu, "
					 "\"items\": %llu, \"live\": %llu, \"map_pages\": %llu, "
					 "\"unused_pages\": %u, \"deleted_pages\": %u, \"recyclable_pages\": %u, "
					 "\"stale_map_entries\": %llu, \"orphan_map_entries\": %lld, "
					 "\"max_key_leaves\": %u, "
					 "\"leaf_fill\": %.3f, \"leaf_prefix_bytes\": %.1f, "
					 "\"leaf_prefix_copies\": %llu, \"leaf_prefix_saved\": %.3f, "
					 "\"all_visible_leaves\": %llu, \"empty_leaves\": %llu, "
					 "\"storage_version\": %u, \"fillfactor\": %d}",
					 (unsigned long long) vs.pages, height,
					 (unsigned long long) vs.leaf_pages,
					 (unsigned long long) vs.items, (unsigned long long) vs.live,
					 (unsigned long long) vs.map_pages, unused, deleted, nrecyclable,
					 (unsigned long long) vs.stale_map_entries,
					 (long long) (map_entries - vs.versions_with_entries), vs.max_key_leaves,
					 vs.leaf_pages ? (double) vs.leaf_bytes /
					 (vs.leaf_pages * (double) DDB_PAGE_CAPACITY) : 0.0,
					 vs.leaf_pages ? (double) vs.prefix_bytes / vs.leaf_pages : 0.0,
					 (unsigned long long) vs.prefix_copies,
					 vs.leaf_pages ? (double) vs.prefix_saved /
					 (vs.leaf_pages * (double) DDB_PAGE_CAPACITY) : 0.0,
					 (unsigned long long) vs.all_visible_leaves,
					 (unsigned long long) vs.empty_leaves,
					 vs.version, fillfactor);
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(out.data)));
}
