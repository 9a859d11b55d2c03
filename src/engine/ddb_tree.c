/*-------------------------------------------------------------------------
 *
 * ddb_tree.c
 *	  The ddb B+tree: metapage, descent, inserts and page splits.
 *
 * A ddb table is an index-organized B-link tree in the main fork of the
 * relation (page layout: ddb_page.h).  Items are ordered by their encoded
 * key (hash32(pk), pk, sk...; see ddb_key.c) plus a version suffix, so a
 * partition's items are contiguous and ordered by sort key.
 *
 * Creation.  A new relfilenode is an empty file.  The first insert creates
 * the metapage (block 0) and an empty root leaf (block 1) in one WAL record,
 * under the relation extension lock.  Readers treat a file without blocks as
 * an empty table.
 *
 * Locking protocol (deadlock-free; no "incomplete split" state ever):
 *
 *	- Readers descend with one share lock at a time: read the parent, note
 *	  the child, release, lock the child.  A page may have split in between;
 *	  items only ever move right (pages are never merged or deleted), so the
 *	  reader moves right along right-links while the search key is beyond the
 *	  page's high key (Lehman & Yao).
 *
 *	- Writers first try optimistically: descend like a reader but take the
 *	  leaf in exclusive mode.  If the item fits, it is added with a one-page
 *	  WAL record.  To check uniqueness a writer may lock further leaves to
 *	  the right while holding the first (left-to-right order).
 *
 *	- When the leaf is full, the writer releases everything and descends
 *	  again pessimistically, with exclusive locks coupled top-down (metapage,
 *	  root, child ...), splitting every node on the path that could not take
 *	  one more entry *before* stepping into it.  Hence each split touches only
 *	  the node, its new right sibling and its parent (plus the metapage when
 *	  the root splits), which is one Generic WAL record of at most four
 *	  pages, and a parent always has room for the new downlink.  The
 *	  pessimistic pass only makes room; the writer then retries the
 *	  optimistic insert, which repeats the uniqueness check.
 *
 *	  Only pessimistic writers split, and they hold the parent exclusively
 *	  while splitting a child, so a pessimistic writer holding a node never
 *	  needs to move right at the next level.  Lock order is always top-down,
 *	  then left-to-right, so no cycle can form.
 *
 *	- Page locks are released before waiting for another transaction.
 *
 * WAL.  Every change goes through Generic WAL (GenericXLogStart ...
 * GenericXLogFinish), new pages registered as full images, so crash recovery
 * and streaming replication need nothing but CREATE EXTENSION.  Pages keep
 * the standard layout with nothing between pd_lower and pd_upper.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/predicate.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "ddb.h"
#include "engine/ddb_page.h"

/* Row ids are taken from the metapage in batches of this many. */
#define DDB_ROWID_BATCH		64

/* Space an internal page keeps free so that a child split always fits. */
#define DDB_INTERNAL_RESERVE(seplen) \
	(MAXALIGN(DdbKeyItemSize(seplen)) + sizeof(ItemIdData))

/* ------------------------------------------------------------------------
 * Comparisons
 * ------------------------------------------------------------------------
 */

/* memcmp order, a proper prefix sorting first. */
int
ddb_compare_bytes(const char *a, int alen, const char *b, int blen)
{
	int			c = memcmp(a, b, Min(alen, blen));

	if (c != 0)
		return c;
	return (alen > blen) - (alen < blen);
}

/* The version suffix of a leaf item: the complemented TID, big-endian. */
static inline void
ddb_suffix(ItemPointer tid, unsigned char *out)
{
	BlockNumber blk = ~ItemPointerGetBlockNumberNoCheck(tid);
	OffsetNumber off = ~ItemPointerGetOffsetNumberNoCheck(tid);

	out[0] = (blk >> 24) & 0xff;
	out[1] = (blk >> 16) & 0xff;
	out[2] = (blk >> 8) & 0xff;
	out[3] = blk & 0xff;
	out[4] = (off >> 8) & 0xff;
	out[5] = off & 0xff;
}

/* Write a leaf item's item key (key || suffix) into buf. */
void
ddb_leaf_item_key(DdbLeafItem li, char *buf, int *len)
{
	memcpy(buf, li->key, li->keylen);
	ddb_suffix(&li->tid, (unsigned char *) buf + li->keylen);
	*len = li->keylen + DDB_SUFFIX_LEN;
}

/*
 * Compare a search string with a leaf item's item key, without building the
 * item key.
 */
int
ddb_compare_leaf(const char *key, int keylen, DdbLeafItem li)
{
	int			n = Min(keylen, li->keylen);
	int			c = memcmp(key, li->key, n);
	unsigned char suffix[DDB_SUFFIX_LEN];
	int			rest;

	if (c != 0)
		return c;
	if (keylen < li->keylen)
		return -1;
	ddb_suffix(&li->tid, suffix);
	rest = keylen - li->keylen;
	c = memcmp(key + li->keylen, suffix, Min(rest, DDB_SUFFIX_LEN));
	if (c != 0)
		return c;
	return (rest > DDB_SUFFIX_LEN) - (rest < DDB_SUFFIX_LEN);
}

/* Compare a search string with only the key part of a leaf item. */
int
ddb_compare_leaf_keypart(const char *key, int keylen, DdbLeafItem li)
{
	return ddb_compare_bytes(key, keylen, li->key, li->keylen);
}

static inline DdbKeyItem
ddb_key_item(Page page, OffsetNumber off)
{
	return (DdbKeyItem) PageGetItem(page, PageGetItemId(page, off));
}

static inline DdbLeafItem
ddb_leaf_item(Page page, OffsetNumber off)
{
	return (DdbLeafItem) PageGetItem(page, PageGetItemId(page, off));
}

/*
 * Compare a search string with item 'off' of a page: a leaf item's item key
 * or an internal item's separator.
 */
static inline int
ddb_compare_item(Page page, OffsetNumber off, const char *key, int keylen)
{
	if (DdbPageIsLeaf(page))
		return ddb_compare_leaf(key, keylen, ddb_leaf_item(page, off));
	else
	{
		DdbKeyItem	ki = ddb_key_item(page, off);

		return ddb_compare_bytes(key, keylen, ki->key, ki->keylen);
	}
}

/*
 * Is the search string beyond the page's key space?  With strict = false
 * ("first item >= key") that is high key <= key; with strict = true ("last
 * item < key") high key < key.  A rightmost page has no high key.
 */
static inline bool
ddb_beyond_page(Page page, const char *key, int keylen, bool strict)
{
	DdbKeyItem	hk;
	int			c;

	if (DdbPageIsRightmost(page))
		return false;
	if (key == NULL)
		return strict;			/* +infinity is beyond, -infinity is not */
	hk = ddb_key_item(page, DDB_HIKEY);
	c = ddb_compare_bytes(hk->key, hk->keylen, key, keylen);
	return strict ? c < 0 : c <= 0;
}

/*
 * First data offset on a leaf whose item key is >= key (maxoff + 1 when
 * none).  key == NULL means -infinity.
 */
OffsetNumber
ddb_leaf_search(Page page, const char *key, int keylen, bool strict)
{
	OffsetNumber lo = DdbPageFirstData(page);
	OffsetNumber hi = PageGetMaxOffsetNumber(page) + 1;

	if (key == NULL)
		return strict ? hi : lo;
	while (lo < hi)
	{
		OffsetNumber mid = lo + (hi - lo) / 2;

		if (ddb_compare_item(page, mid, key, keylen) > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The child of an internal page to follow for key: the last data item whose
 * separator is <= key (strict = false) or < key (strict = true).  The first
 * data item's separator is minus infinity.  key == NULL is -infinity when
 * !strict and +infinity when strict.
 */
static OffsetNumber
ddb_internal_search(Page page, const char *key, int keylen, bool strict)
{
	OffsetNumber first = DdbPageFirstData(page);
	OffsetNumber lo = first + 1;
	OffsetNumber hi = PageGetMaxOffsetNumber(page) + 1;

	if (key == NULL)
		return strict ? hi - 1 : first;
	/* find the first item whose separator is > key (>= key when strict) */
	while (lo < hi)
	{
		OffsetNumber mid = lo + (hi - lo) / 2;
		DdbKeyItem	ki = ddb_key_item(page, mid);
		int			c = ddb_compare_bytes(ki->key, ki->keylen, key, keylen);

		if (strict ? c < 0 : c <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

#ifdef DDB_CHECKS
/* Item key or separator of data item off (leaf items with their suffix). */
static int
ddb_item_sortkey(Page page, OffsetNumber off, char *buf)
{
	int			len;

	if (DdbPageIsLeaf(page))
		ddb_leaf_item_key(ddb_leaf_item(page, off), buf, &len);
	else
	{
		DdbKeyItem	ki = ddb_key_item(page, off);

		memcpy(buf, ki->key, ki->keylen);
		len = ki->keylen;
	}
	return len;
}

/*
 * Invariant of every page we write: data items strictly ascending, all
 * below the high key, and (when given) at or above 'low'.  Used by
 * DdbCheck, so it costs nothing unless built with CHECKS=1.
 */
static bool
ddb_page_is_ordered(Page page, const char *low, int lowlen)
{
	OffsetNumber first = DdbPageFirstData(page);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	char	   *prev = palloc(BLCKSZ);
	char	   *cur = palloc(BLCKSZ);
	int			prevlen = -1;
	bool		ok = true;

	for (OffsetNumber off = first; off <= maxoff && ok; off++)
	{
		int			curlen;

		if (!DdbPageIsLeaf(page) && off == first)
			continue;			/* minus infinity */
		curlen = ddb_item_sortkey(page, off, cur);
		if (prevlen >= 0 && ddb_compare_bytes(prev, prevlen, cur, curlen) >= 0)
			ok = false;
		if (prevlen < 0 && low != NULL && ddb_compare_bytes(low, lowlen, cur, curlen) > 0)
			ok = false;
		memcpy(prev, cur, curlen);
		prevlen = curlen;
	}
	if (ok && prevlen >= 0 && !DdbPageIsRightmost(page))
	{
		DdbKeyItem	hk = ddb_key_item(page, DDB_HIKEY);

		ok = ddb_compare_bytes(prev, prevlen, hk->key, hk->keylen) < 0;
	}
	pfree(prev);
	pfree(cur);
	return ok;
}
#endif

/* ------------------------------------------------------------------------
 * Metapage and tree creation
 * ------------------------------------------------------------------------
 */

static void
ddb_check_page(Relation rel, Buffer buf, Page page)
{
	DdbPageOpaque op;

	if (PageIsNew(page) ||
		((PageHeader) page)->pd_special != BLCKSZ - MAXALIGN(sizeof(DdbPageOpaqueData)))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg_internal("ddb table \"%s\" has an invalid page at block %u",
								 RelationGetRelationName(rel), BufferGetBlockNumber(buf))));
	op = DdbPageGetOpaque(page);
	if (op->page_id != DDB_PAGE_ID)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg_internal("ddb table \"%s\" has a page of another kind at block %u",
								 RelationGetRelationName(rel), BufferGetBlockNumber(buf))));
}

static void
ddb_init_page(Page page, uint16 flags, uint16 level, BlockNumber right)
{
	DdbPageOpaque op;

	PageInit(page, BLCKSZ, sizeof(DdbPageOpaqueData));
	op = DdbPageGetOpaque(page);
	op->right = right;
	op->level = level;
	op->flags = flags;
	op->unused = 0;
	op->page_id = DDB_PAGE_ID;
}

/* Allocate a new page at the end of the relation, returned locked. */
Buffer
ddb_new_buffer(Relation rel)
{
	Buffer		buf;

	/* Extension lock only around the extension, as nbtree and bloom do. */
	LockRelationForExtension(rel, ExclusiveLock);
	buf = ReadBufferExtended(rel, MAIN_FORKNUM, P_NEW, RBM_NORMAL, NULL);
	UnlockRelationForExtension(rel, ExclusiveLock);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	return buf;
}

/*
 * Has block 0 been initialized?  An all-zero block 0 is a tree being
 * created right now (its creator holds the extension lock until the
 * metapage is written: wait for it), or one whose creation a crash cut
 * short: the file was extended, but the WAL record never made it to disk.
 * That second case is an empty table, which the next insert initializes in
 * place.
 */
static bool
metapage_written(Relation rel)
{
	Buffer		buf = ReadBuffer(rel, DDB_METAPAGE_BLKNO);
	bool		isnew;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	isnew = PageIsNew(BufferGetPage(buf));
	UnlockReleaseBuffer(buf);
	if (isnew && !RecoveryInProgress())
	{
		LockRelationForExtension(rel, ExclusiveLock);
		UnlockRelationForExtension(rel, ExclusiveLock);
		buf = ReadBuffer(rel, DDB_METAPAGE_BLKNO);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		isnew = PageIsNew(BufferGetPage(buf));
		UnlockReleaseBuffer(buf);
	}
	return !isnew;
}

/* Does the tree exist (has its metapage been written)? */
bool
ddb_tree_exists(Relation rel)
{
	DdbRelCache *cache = ddb_get_relcache(rel);

	if (!cache->initialized && RelationGetNumberOfBlocks(rel) > 0 &&
		metapage_written(rel))
	{
		cache = ddb_get_relcache(rel);
		cache->initialized = true;
	}
	return cache->initialized;
}

/*
 * Create the metapage and an empty root leaf if the relation has no blocks.
 */
void
ddb_tree_init_if_needed(Relation rel)
{
	Buffer		metabuf;
	Buffer		rootbuf;
	GenericXLogState *state;
	Page		meta;
	Page		root;
	DdbMetaPageData *md;
	BlockNumber nblocks;

	if (ddb_tree_exists(rel))
		return;

	/*
	 * Keep the extension lock until the metapage is written: a backend that
	 * sees the new blocks before that finds an all-zero metapage and waits
	 * for this lock (metapage_written, ddb_meta_read).
	 */
	LockRelationForExtension(rel, ExclusiveLock);
	nblocks = RelationGetNumberOfBlocks(rel);
	if (nblocks > 0)
	{
		Buffer		buf = ReadBuffer(rel, DDB_METAPAGE_BLKNO);
		bool		isnew;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		isnew = PageIsNew(BufferGetPage(buf));
		UnlockReleaseBuffer(buf);
		if (!isnew)
		{
			UnlockRelationForExtension(rel, ExclusiveLock);
			ddb_get_relcache(rel)->initialized = true;
			return;
		}
	}

	/* new blocks, or the all-zero ones a crash left: initialize in place */
	metabuf = nblocks > 0 ? ReadBuffer(rel, DDB_METAPAGE_BLKNO) :
		ReadBufferExtended(rel, MAIN_FORKNUM, P_NEW, RBM_NORMAL, NULL);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	rootbuf = nblocks > 1 ? ReadBuffer(rel, DDB_METAPAGE_BLKNO + 1) :
		ReadBufferExtended(rel, MAIN_FORKNUM, P_NEW, RBM_NORMAL, NULL);
	LockBuffer(rootbuf, BUFFER_LOCK_EXCLUSIVE);
	if (BufferGetBlockNumber(metabuf) != DDB_METAPAGE_BLKNO)
		elog(ERROR, "ddb metapage of \"%s\" allocated at block %u",
			 RelationGetRelationName(rel), BufferGetBlockNumber(metabuf));

	state = GenericXLogStart(rel);
	meta = GenericXLogRegisterBuffer(state, metabuf, GENERIC_XLOG_FULL_IMAGE);
	root = GenericXLogRegisterBuffer(state, rootbuf, GENERIC_XLOG_FULL_IMAGE);

	ddb_init_page(meta, DDB_PAGE_META, 0, InvalidBlockNumber);
	md = DdbPageGetMeta(meta);
	memset(md, 0, sizeof(DdbMetaPageData));
	md->magic = DDB_MAGIC;
	md->version = DDB_VERSION;
	md->root = BufferGetBlockNumber(rootbuf);
	md->height = 1;
	md->next_rowid = 0;
	/* Keep the metadata inside pd_lower: full-page images drop the hole. */
	((PageHeader) meta)->pd_lower = ((char *) md + sizeof(DdbMetaPageData)) - (char *) meta;

	ddb_init_page(root, DDB_PAGE_LEAF, 0, InvalidBlockNumber);

	GenericXLogFinish(state);
	UnlockReleaseBuffer(rootbuf);
	UnlockReleaseBuffer(metabuf);
	UnlockRelationForExtension(rel, ExclusiveLock);
	ddb_get_relcache(rel)->initialized = true;
}

static void
ddb_check_meta(Relation rel, Page page)
{
	DdbMetaPageData *md = DdbPageGetMeta(page);

	if (!(DdbPageGetOpaque(page)->flags & DDB_PAGE_META) ||
		md->magic != DDB_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg_internal("ddb table \"%s\" has a bad metapage",
								 RelationGetRelationName(rel))));
	if (md->version != DDB_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("ddb table \"%s\" has storage version %u, this ddb reads version %u",
						RelationGetRelationName(rel), md->version, DDB_VERSION)));
}

/* Read a copy of the metapage contents. */
DdbMetaPageData *
ddb_meta_read(Relation rel, DdbMetaPageData *copy)
{
	Buffer		buf = ReadBuffer(rel, DDB_METAPAGE_BLKNO);
	Page		page;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	if (PageIsNew(page) && !RecoveryInProgress())
	{
		/*
		 * The first insert is creating the tree right now: it holds the
		 * extension lock until the metapage is written.  Wait for it.
		 */
		UnlockReleaseBuffer(buf);
		LockRelationForExtension(rel, ExclusiveLock);
		UnlockRelationForExtension(rel, ExclusiveLock);
		buf = ReadBuffer(rel, DDB_METAPAGE_BLKNO);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
	}
	ddb_check_page(rel, buf, page);
	ddb_check_meta(rel, page);
	*copy = *DdbPageGetMeta(page);
	UnlockReleaseBuffer(buf);
	return copy;
}

/*
 * Next row id of this backend.  Batches come from the metapage counter, so
 * row ids are unique for the life of the relfilenode and grow roughly in
 * time order.  A batch abandoned by a crash or a relcache reset leaves a
 * harmless gap.
 */
uint64
ddb_alloc_rowid(Relation rel)
{
	DdbRelCache *cache = ddb_get_relcache(rel);

	if (cache->rowid_next >= cache->rowid_end)
	{
		Buffer		buf;
		GenericXLogState *state;
		Page		page;
		DdbMetaPageData *md;
		uint64		start;

		ddb_tree_init_if_needed(rel);
		buf = ReadBuffer(rel, DDB_METAPAGE_BLKNO);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		ddb_check_meta(rel, BufferGetPage(buf));
		state = GenericXLogStart(rel);
		page = GenericXLogRegisterBuffer(state, buf, 0);
		md = DdbPageGetMeta(page);
		start = md->next_rowid;
		md->next_rowid += DDB_ROWID_BATCH;
		GenericXLogFinish(state);
		UnlockReleaseBuffer(buf);

		/* re-fetch: the relcache entry may have been rebuilt meanwhile */
		cache = ddb_get_relcache(rel);
		cache->rowid_next = start;
		cache->rowid_end = start + DDB_ROWID_BATCH;
	}
	return cache->rowid_next++;
}

/* ------------------------------------------------------------------------
 * Descent
 * ------------------------------------------------------------------------
 */

/*
 * Descend to the leaf for key and return it locked in mode 'access'.
 *
 * strict = false: the leaf whose key space holds the first item >= key.
 * strict = true: the leaf whose key space holds the last item < key.
 * key == NULL is -infinity (!strict) or +infinity (strict).
 *
 * If lowkey is not NULL, *lowkey is set to a palloc'd copy of the leaf's low
 * bound at the time it was read (NULL for -infinity), which backward scans
 * use to find the page before it.
 */
Buffer
ddb_descend(Relation rel, const char *key, int keylen, bool strict,
			int access, char **lowkey, int *lowkeylen)
{
	DdbRelCache *cache = ddb_get_relcache(rel);
	BlockNumber blkno;
	int			level;
	bool		check_root = true;
	Buffer		buf;
	char	   *low = NULL;
	int			lowlen = 0;

	/*
	 * Start from the cached root.  A root page is the only page of the top
	 * level, so it is rightmost; once it splits it no longer is, and we
	 * re-read the metapage.  (Starting from a stale root would still be
	 * correct, since right-links reach everything, just slower.)
	 */
	if (cache->root == DDB_METAPAGE_BLKNO)
	{
		DdbMetaPageData meta;

		ddb_meta_read(rel, &meta);
		cache = ddb_get_relcache(rel);
		cache->root = meta.root;
		cache->rootlevel = meta.height - 1;
		check_root = false;
	}
	blkno = cache->root;
	level = cache->rootlevel;

	for (;;)
	{
		Page		page;
		DdbPageOpaque op;

		buf = ReadBuffer(rel, blkno);
		LockBuffer(buf, level == 0 ? access : BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		ddb_check_page(rel, buf, page);
		op = DdbPageGetOpaque(page);

		if (check_root)
		{
			check_root = false;
			if (op->level != level || !DdbPageIsRightmost(page) ||
				(op->flags & DDB_PAGE_META))
			{
				DdbMetaPageData meta;

				UnlockReleaseBuffer(buf);
				ddb_meta_read(rel, &meta);
				cache = ddb_get_relcache(rel);
				cache->root = meta.root;
				cache->rootlevel = meta.height - 1;
				blkno = cache->root;
				level = cache->rootlevel;
				continue;
			}
		}
		if (op->level != level)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg_internal("ddb page %u of \"%s\" is at level %u, expected %d",
									 blkno, RelationGetRelationName(rel), op->level, level)));

		/* Lehman & Yao: the page may have split since we saw its downlink. */
		while (ddb_beyond_page(page, key, keylen, strict))
		{
			DdbKeyItem	hk = ddb_key_item(page, DDB_HIKEY);

			blkno = op->right;
			if (lowkey)
			{
				if (low)
					pfree(low);
				low = palloc(hk->keylen);
				memcpy(low, hk->key, hk->keylen);
				lowlen = hk->keylen;
			}
			UnlockReleaseBuffer(buf);
			buf = ReadBuffer(rel, blkno);
			LockBuffer(buf, level == 0 ? access : BUFFER_LOCK_SHARE);
			page = BufferGetPage(buf);
			ddb_check_page(rel, buf, page);
			op = DdbPageGetOpaque(page);
		}

		if (level == 0)
			break;
		else
		{
			OffsetNumber off = ddb_internal_search(page, key, keylen, strict);
			DdbKeyItem	ki = ddb_key_item(page, off);

			if (lowkey && off > DdbPageFirstData(page))
			{
				if (low)
					pfree(low);
				low = palloc(ki->keylen);
				memcpy(low, ki->key, ki->keylen);
				lowlen = ki->keylen;
			}
			blkno = ki->child;
			level--;
			UnlockReleaseBuffer(buf);
		}
	}

	if (lowkey)
	{
		*lowkey = low;
		*lowkeylen = lowlen;
	}
	return buf;
}

/* ------------------------------------------------------------------------
 * Splits
 * ------------------------------------------------------------------------
 */

/* A copy of one item of a page being split. */
typedef struct SplitItem
{
	char	   *data;
	Size		size;			/* MAXALIGN'd on-page size */
} SplitItem;

/*
 * The separator for a leaf split between item keys left < right: the
 * shortest prefix of right that is still greater than left (suffix
 * truncation keeps internal pages small).
 */
static int
ddb_truncated_separator(const char *left, int leftlen,
						const char *right, int rightlen)
{
	int			i = 0;

	while (i < leftlen && i < rightlen && left[i] == right[i])
		i++;
	/* right differs at byte i, or left is a proper prefix of right */
	return Min(i + 1, rightlen);
}


/* A key item (high key or downlink) built in palloc'd memory. */
static DdbKeyItem
ddb_make_key_item(BlockNumber child, const char *key, int keylen, Size *size)
{
	DdbKeyItem	ki;

	*size = MAXALIGN(DdbKeyItemSize(keylen));
	ki = palloc0(*size);
	ki->child = child;
	ki->keylen = keylen;
	if (keylen > 0)
		memcpy(ki->key, key, keylen);
	return ki;
}

static void
ddb_add_item(Page page, const void *item, Size size, OffsetNumber off)
{
	if (PageAddItem(page, (Item) item, size, off, false, false) == InvalidOffsetNumber)
		elog(ERROR, "failed to add item of size %zu to ddb page", size);
}

/*
 * Split 'buf' (locked exclusively, child of 'parentbuf' at downlink offset
 * 'downlink', or the root when parentbuf is InvalidBuffer and metabuf is
 * valid).  'newkey'/'newkeylen'/'newsize' describe the item about to be
 * inserted into this node (for the split point choice); it is not inserted.
 *
 * Returns the buffer of the half where newkey belongs, still locked; the
 * other half is released.  Returns InvalidBuffer (nothing changed, all
 * buffers still held by the caller) when the parent has no room for the
 * separator: the caller restarts with a bigger reserve.
 */
static Buffer
ddb_split(Relation rel, Buffer metabuf, Buffer parentbuf, OffsetNumber downlink,
		  Buffer buf, const char *newkey, int newkeylen, Size newsize,
		  bool *parent_full)
{
	Page		page = BufferGetPage(buf);
	DdbPageOpaque op = DdbPageGetOpaque(page);
	bool		leaf = op->level == 0;
	OffsetNumber first = DdbPageFirstData(page);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	int			nitems = maxoff - first + 1;
	SplitItem  *items;
	DdbKeyItem	oldhk = NULL;
	Size		oldhksize = 0;
	int			newpos;
	int			best = -1;
	Size		bestdiff = 0;
	Size		capacity = DDB_PAGE_CAPACITY;
	Size		total = 0;
	char	   *sep = NULL;
	int			seplen = 0;
	Buffer		rbuf;
	Buffer		rootbuf = InvalidBuffer;
	GenericXLogState *state;
	Page		lpage,
				rpage,
				ppage = NULL,
				mpage = NULL,
				tmp;
	BlockNumber rblkno;
	Buffer		keep;

	*parent_full = false;

	/* Copy the items out; the page is rewritten below. */
	items = palloc(sizeof(SplitItem) * nitems);
	for (int i = 0; i < nitems; i++)
	{
		ItemId		iid = PageGetItemId(page, first + i);

		items[i].size = MAXALIGN(ItemIdGetLength(iid));
		items[i].data = palloc0(items[i].size);
		memcpy(items[i].data, PageGetItem(page, iid), ItemIdGetLength(iid));
		total += items[i].size + sizeof(ItemIdData);
	}
	if (!DdbPageIsRightmost(page))
	{
		DdbKeyItem	hk = ddb_key_item(page, DDB_HIKEY);

		oldhk = ddb_make_key_item(InvalidBlockNumber, hk->key, hk->keylen, &oldhksize);
	}

	/* Where would the new item go? (index of the first item > newkey) */
	if (leaf)
		newpos = ddb_leaf_search(page, newkey, newkeylen, false) - first;
	else
		newpos = ddb_internal_search(page, newkey, newkeylen, false) - first + 1;

	if (leaf)
	{
		/*
		 * Leaf: choose the split over the sequence of the existing items with
		 * the new item in its place (as nbtree's _bt_findsplitloc does), so
		 * the new item may end up alone on a half: that is what lets items of
		 * DynamoDB's largest keys fit.  Candidate v (1..nv-1) puts virtual
		 * items [0, v) left; the separator is truncated between v-1 and v.
		 */
		int			nv = nitems + 1;
		char	  **vkey = palloc(sizeof(char *) * nv);
		int		   *vkeylen = palloc(sizeof(int) * nv);
		Size	   *vsize = palloc(sizeof(Size) * nv);
		Size		vtotal = 0;
		Size		left = 0;
		int			bestv = -1;

		for (int v = 0; v < nv; v++)
		{
			if (v == newpos)
			{
				vkey[v] = (char *) newkey;
				vkeylen[v] = newkeylen;
				vsize[v] = newsize;
			}
			else
			{
				int			i = v < newpos ? v : v - 1;

				vkey[v] = palloc(((DdbLeafItem) items[i].data)->keylen + DDB_SUFFIX_LEN);
				ddb_leaf_item_key((DdbLeafItem) items[i].data, vkey[v], &vkeylen[v]);
				vsize[v] = items[i].size + sizeof(ItemIdData);
			}
			vtotal += vsize[v];
		}
		for (int v = 1; v < nv; v++)
		{
			int			hklen;
			Size		l,
						r,
						diff;

			left += vsize[v - 1];
			hklen = ddb_truncated_separator(vkey[v - 1], vkeylen[v - 1], vkey[v], vkeylen[v]);
			l = left + MAXALIGN(DdbKeyItemSize(hklen)) + sizeof(ItemIdData);
			r = vtotal - left + (oldhk ? oldhksize + sizeof(ItemIdData) : 0);
			if (l > capacity || r > capacity)
				continue;
			diff = l > r ? l - r : r - l;
			if (bestv < 0 || diff < bestdiff)
			{
				bestv = v;
				bestdiff = diff;
			}
		}
		if (bestv < 0)
			elog(ERROR, "could not find a split point for ddb page %u of \"%s\"",
				 BufferGetBlockNumber(buf), RelationGetRelationName(rel));
		seplen = ddb_truncated_separator(vkey[bestv - 1], vkeylen[bestv - 1],
										 vkey[bestv], vkeylen[bestv]);
		sep = palloc(seplen);
		memcpy(sep, vkey[bestv], seplen);
		/* existing items going left */
		best = bestv <= newpos ? bestv : bestv - 1;
	}
	else
	{
		/*
		 * Internal: split the existing downlinks (at least one per half); the
		 * right half's first downlink becomes its minus infinity and its key
		 * goes up as the separator.
		 */
		Size		left = 0;

		if (nitems < 2)
			elog(ERROR, "ddb page %u of \"%s\" has too few items to split",
				 BufferGetBlockNumber(buf), RelationGetRelationName(rel));
		for (int m = 1; m < nitems; m++)
		{
			Size		l,
						r,
						diff;
			int			hklen = ((DdbKeyItem) items[m].data)->keylen;

			left += items[m - 1].size + sizeof(ItemIdData);
			l = left + MAXALIGN(DdbKeyItemSize(hklen)) + sizeof(ItemIdData);
			r = total - left - items[m].size + MAXALIGN(DdbKeyItemSize(0)) +
				(oldhk ? oldhksize + sizeof(ItemIdData) : 0);
			if (newpos < m)
				l += newsize;
			else
				r += newsize;
			if (l > capacity || r > capacity)
				continue;
			diff = l > r ? l - r : r - l;
			if (best < 0 || diff < bestdiff)
			{
				best = m;
				bestdiff = diff;
			}
		}
		if (best < 0)
			elog(ERROR, "could not find a split point for ddb page %u of \"%s\"",
				 BufferGetBlockNumber(buf), RelationGetRelationName(rel));
		seplen = ((DdbKeyItem) items[best].data)->keylen;
		sep = palloc(seplen);
		memcpy(sep, ((DdbKeyItem) items[best].data)->key, seplen);
	}

	/* Does the parent have room for the new downlink? */
	if (BufferIsValid(parentbuf) &&
		PageGetFreeSpace(BufferGetPage(parentbuf)) < MAXALIGN(DdbKeyItemSize(seplen)))
	{
		*parent_full = true;
		return InvalidBuffer;
	}

	/* Allocate the new pages before starting the WAL record. */
	rbuf = ddb_new_buffer(rel);
	rblkno = BufferGetBlockNumber(rbuf);
	if (!BufferIsValid(parentbuf))
		rootbuf = ddb_new_buffer(rel);

	state = GenericXLogStart(rel);
	if (BufferIsValid(metabuf))
		mpage = GenericXLogRegisterBuffer(state, metabuf, 0);
	if (BufferIsValid(parentbuf))
		ppage = GenericXLogRegisterBuffer(state, parentbuf, 0);
	lpage = GenericXLogRegisterBuffer(state, buf, 0);
	rpage = GenericXLogRegisterBuffer(state, rbuf, GENERIC_XLOG_FULL_IMAGE);
	if (BufferIsValid(rootbuf))
		ppage = GenericXLogRegisterBuffer(state, rootbuf, GENERIC_XLOG_FULL_IMAGE);

	/* Right half: items [best, n) and the old high key. */
	ddb_init_page(rpage, op->flags, op->level, op->right);
	if (oldhk)
		ddb_add_item(rpage, oldhk, oldhksize, DDB_HIKEY);
	for (int i = best; i < nitems; i++)
	{
		if (!leaf && i == best)
		{
			Size		sz;
			DdbKeyItem	ki = ddb_make_key_item(((DdbKeyItem) items[i].data)->child,
											   NULL, 0, &sz);

			ddb_add_item(rpage, ki, sz, InvalidOffsetNumber);
		}
		else
			ddb_add_item(rpage, items[i].data, items[i].size, InvalidOffsetNumber);
	}

	/* Left half: items [0, best) and the separator as high key. */
	tmp = palloc(BLCKSZ);
	ddb_init_page(tmp, op->flags, op->level, rblkno);
	{
		Size		sz;
		DdbKeyItem	hk = ddb_make_key_item(InvalidBlockNumber, sep, seplen, &sz);

		ddb_add_item(tmp, hk, sz, DDB_HIKEY);
	}
	for (int i = 0; i < best; i++)
		ddb_add_item(tmp, items[i].data, items[i].size, InvalidOffsetNumber);
	/* keep the LSN and checksum fields of the real page */
	memcpy((char *) lpage + SizeOfPageHeaderData, tmp + SizeOfPageHeaderData,
		   BLCKSZ - SizeOfPageHeaderData);
	((PageHeader) lpage)->pd_lower = ((PageHeader) tmp)->pd_lower;
	((PageHeader) lpage)->pd_upper = ((PageHeader) tmp)->pd_upper;
	((PageHeader) lpage)->pd_special = ((PageHeader) tmp)->pd_special;
	((PageHeader) lpage)->pd_flags = ((PageHeader) tmp)->pd_flags;
	((PageHeader) lpage)->pd_prune_xid = ((PageHeader) tmp)->pd_prune_xid;
	pfree(tmp);

	if (BufferIsValid(rootbuf))
	{
		/* New root above the old one: (-inf -> left), (sep -> right). */
		DdbMetaPageData *md = DdbPageGetMeta(mpage);
		Size		sz;
		DdbKeyItem	ki;

		ddb_init_page(ppage, DDB_PAGE_INTERNAL, op->level + 1, InvalidBlockNumber);
		ki = ddb_make_key_item(BufferGetBlockNumber(buf), NULL, 0, &sz);
		ddb_add_item(ppage, ki, sz, InvalidOffsetNumber);
		ki = ddb_make_key_item(rblkno, sep, seplen, &sz);
		ddb_add_item(ppage, ki, sz, InvalidOffsetNumber);
		md->root = BufferGetBlockNumber(rootbuf);
		md->height = op->level + 2;
	}
	else
	{
		Size		sz;
		DdbKeyItem	ki = ddb_make_key_item(rblkno, sep, seplen, &sz);

		ddb_add_item(ppage, ki, sz, OffsetNumberNext(downlink));
	}

	/* both halves ordered; left below the separator, right at or above it */
	DdbCheck(ddb_page_is_ordered(lpage, NULL, 0));
	DdbCheck(ddb_page_is_ordered(rpage, sep, seplen));
	DdbCheck(ddb_page_is_ordered(ppage, NULL, 0));
	GenericXLogFinish(state);

	if (BufferIsValid(rootbuf))
		UnlockReleaseBuffer(rootbuf);

	/* Continue in the half where newkey belongs: right iff newkey >= sep. */
	if (newkey != NULL && ddb_compare_bytes(newkey, newkeylen, sep, seplen) >= 0)
	{
		UnlockReleaseBuffer(buf);
		keep = rbuf;
	}
	else
	{
		UnlockReleaseBuffer(rbuf);
		keep = buf;
	}
	return keep;
}

/*
 * Does a node need a split before one more entry of 'need' bytes (a leaf
 * item, or a downlink for internal nodes) can be added?
 */
static bool
ddb_node_full(Page page, Size need)
{
	return PageGetFreeSpace(page) < need;
}

/*
 * Pessimistic pass: descend with exclusive locks coupled top-down and split
 * every full node on the path of 'itemkey', so that the leaf has room for an
 * item of 'itemsize' bytes (as of the moment we leave it).
 */
static void
ddb_make_room(Relation rel, const char *itemkey, int itemkeylen, Size itemsize)
{
	Size		reserve = DDB_INTERNAL_RESERVE(Max(itemkeylen, 64) * 2);

	for (;;)
	{
		Buffer		metabuf;
		Buffer		buf;
		Buffer		parent = InvalidBuffer;
		OffsetNumber downlink = InvalidOffsetNumber;
		bool		restart = false;
		DdbMetaPageData *md;

		if (reserve > DDB_INTERNAL_RESERVE(DDB_MAX_SEP_LEN))
			reserve = DDB_INTERNAL_RESERVE(DDB_MAX_SEP_LEN);

		metabuf = ReadBuffer(rel, DDB_METAPAGE_BLKNO);
		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		ddb_check_meta(rel, BufferGetPage(metabuf));
		md = DdbPageGetMeta(BufferGetPage(metabuf));
		buf = ReadBuffer(rel, md->root);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		ddb_check_page(rel, buf, BufferGetPage(buf));

		for (;;)
		{
			Page		page = BufferGetPage(buf);
			bool		leaf = DdbPageIsLeaf(page);
			Size		need = leaf ? itemsize : reserve;

			if (ddb_node_full(page, need))
			{
				bool		parent_full;
				Buffer		half;

				half = ddb_split(rel,
								 BufferIsValid(parent) ? InvalidBuffer : metabuf,
								 parent, downlink, buf,
								 itemkey, itemkeylen,
								 leaf ? itemsize + sizeof(ItemIdData) : reserve,
								 &parent_full);
				if (!BufferIsValid(half))
				{
					/* parent cannot take the separator: retry, reserving more */
					restart = true;
					break;
				}
				buf = half;
			}

			/* The node now has room; the levels above are no longer needed. */
			if (BufferIsValid(metabuf))
			{
				UnlockReleaseBuffer(metabuf);
				metabuf = InvalidBuffer;
			}
			if (BufferIsValid(parent))
				UnlockReleaseBuffer(parent);
			parent = InvalidBuffer;

			if (DdbPageIsLeaf(BufferGetPage(buf)))
				break;

			/* Step into the child, keeping this node locked. */
			page = BufferGetPage(buf);
			downlink = ddb_internal_search(page, itemkey, itemkeylen, false);
			parent = buf;
			buf = ReadBuffer(rel, ddb_key_item(page, downlink)->child);
			LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
			ddb_check_page(rel, buf, BufferGetPage(buf));
		}

		if (BufferIsValid(metabuf))
			UnlockReleaseBuffer(metabuf);
		if (BufferIsValid(parent))
			UnlockReleaseBuffer(parent);
		UnlockReleaseBuffer(buf);
		if (!restart)
			return;
		reserve = DDB_INTERNAL_RESERVE(DDB_MAX_SEP_LEN);
	}
}

/* ------------------------------------------------------------------------
 * Insert
 * ------------------------------------------------------------------------
 */

/*
 * Check that no other version of 'key' is live, looking at the versions on
 * the locked leaves bufs[0..nbufs).  Returns InvalidTransactionId when the
 * key is free; the xid to wait for when a concurrent transaction inserted or
 * deleted a version; raises unique_violation when a live version exists.
 */
static TransactionId
ddb_check_unique(Relation rel, Buffer *bufs, int nbufs, const char *key, int keylen,
				 bool *duplicate)
{
	SnapshotData dirty;

	InitDirtySnapshot(dirty);
	for (int b = 0; b < nbufs; b++)
	{
		Page		page = BufferGetPage(bufs[b]);
		OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
		OffsetNumber off = ddb_leaf_search(page, key, keylen, false);

		for (; off <= maxoff; off++)
		{
			DdbLeafItem li = ddb_leaf_item(page, off);
			HeapTupleData htup;

			if (ddb_compare_leaf_keypart(key, keylen, li) != 0)
				return InvalidTransactionId;	/* past the key's versions */

			(void) ddb_leaf_htup(rel, page, off, &htup);
			if (HeapTupleSatisfiesVisibility(&htup, &dirty, bufs[b]))
			{
				if (TransactionIdIsValid(dirty.xmin))
					return dirty.xmin;
				if (TransactionIdIsValid(dirty.xmax))
					return dirty.xmax;
				if (duplicate)
				{
					*duplicate = true;
					return InvalidTransactionId;
				}
				ereport(ERROR,
						(errcode(ERRCODE_UNIQUE_VIOLATION),
						 errmsg("duplicate key value violates the key of ddb table \"%s\"",
								RelationGetRelationName(rel)),
						 errdetail("An item with the same key already exists."),
						 errhint("Use ddb_put_item() to replace an item.")));
			}
		}
	}
	return InvalidTransactionId;
}

/*
 * Insert a version of 'key' with row id 'tid' whose stored tuple is 'tuple'.
 * With DDB_UNIQUE_ERROR, raise unique_violation if another live version of
 * the key exists, waiting for in-progress transactions first (as nbtree
 * does); with DDB_UNIQUE_RETURN, return false instead (nothing inserted).
 */
bool
ddb_tree_insert(Relation rel, const char *key, int keylen, ItemPointer tid,
				HeapTuple tuple, DdbUniqueCheck check_unique)
{
	Size		itemlen = DdbLeafTupleOffset(keylen) + tuple->t_len;
	Size		itemsize = MAXALIGN(itemlen);
	DdbLeafItem item;
	char	   *itemkey;
	int			itemkeylen;
	char	   *succ = NULL;
	int			succlen = 0;
	bool		pruned = false;

	if (keylen > DDB_MAX_KEY_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("key of %d encoded bytes is too long for ddb table \"%s\"",
						keylen, RelationGetRelationName(rel)),
				 errdetail("The encoded key may be at most %d bytes.", (int) DDB_MAX_KEY_LEN)));
	if (itemsize > DDB_MAX_ITEM_SIZE)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("item of %zu bytes is too large for ddb table \"%s\"",
						itemsize, RelationGetRelationName(rel)),
				 errdetail("A stored item may be at most %zu bytes.", (Size) DDB_MAX_ITEM_SIZE)));

	ddb_tree_init_if_needed(rel);

	item = palloc0(itemsize);
	item->tid = *tid;
	item->keylen = keylen;
	memcpy(item->key, key, keylen);
	memcpy(DdbLeafItemGetTuple(item), tuple->t_data, tuple->t_len);

	itemkey = palloc(keylen + DDB_SUFFIX_LEN);
	ddb_leaf_item_key(item, itemkey, &itemkeylen);

	{
		StringInfoData s;

		initStringInfo(&s);
		if (ddb_key_successor(key, keylen, &s))
		{
			succ = s.data;
			succlen = s.len;
		}
	}

	for (;;)
	{
		Buffer	   *bufs;
		Buffer		leafbuf;
		int			nbufs = 0;
		int			maxbufs = 8;
		int			target;
		TransactionId wait_xid = InvalidTransactionId;
		Page		page;

		CHECK_FOR_INTERRUPTS();

		bufs = palloc(sizeof(Buffer) * maxbufs);

		/*
		 * Without a uniqueness check (a new version of a key whose current
		 * version we hold), only the leaf where the item goes matters.
		 * Otherwise start at the first leaf that can hold versions of key,
		 * and since they may continue on leaves to the right (a run of
		 * versions split across pages), lock those too, left to right.
		 */
		if (check_unique == DDB_UNIQUE_NONE)
			bufs[nbufs++] = ddb_descend(rel, itemkey, itemkeylen, false,
										BUFFER_LOCK_EXCLUSIVE, NULL, NULL);
		else
			bufs[nbufs++] = ddb_descend(rel, key, keylen, false,
										BUFFER_LOCK_EXCLUSIVE, NULL, NULL);
		while (check_unique != DDB_UNIQUE_NONE)
		{
			Page		last = BufferGetPage(bufs[nbufs - 1]);
			DdbKeyItem	hk;
			Buffer		next;

			if (DdbPageIsRightmost(last))
				break;
			hk = ddb_key_item(last, DDB_HIKEY);
			if (succ != NULL && ddb_compare_bytes(hk->key, hk->keylen, succ, succlen) >= 0)
				break;
			if (nbufs == maxbufs)
			{
				maxbufs *= 2;
				bufs = repalloc(bufs, sizeof(Buffer) * maxbufs);
			}
			next = ReadBuffer(rel, DdbPageGetOpaque(last)->right);
			LockBuffer(next, BUFFER_LOCK_EXCLUSIVE);
			ddb_check_page(rel, next, BufferGetPage(next));
			bufs[nbufs++] = next;
		}

		if (check_unique != DDB_UNIQUE_NONE)
		{
			bool		duplicate = false;

			wait_xid = ddb_check_unique(rel, bufs, nbufs, key, keylen,
										check_unique == DDB_UNIQUE_RETURN ? &duplicate : NULL);
			if (duplicate)
			{
				for (int b = 0; b < nbufs; b++)
					UnlockReleaseBuffer(bufs[b]);
				pfree(bufs);
				pfree(item);
				pfree(itemkey);
				if (succ)
					pfree(succ);
				return false;
			}
		}

		/* The leaf whose key space holds itemkey. */
		target = 0;
		while (target < nbufs - 1 &&
			   ddb_beyond_page(BufferGetPage(bufs[target]), itemkey, itemkeylen, false))
			target++;
		for (int b = 0; b < nbufs; b++)
			if (b != target)
				UnlockReleaseBuffer(bufs[b]);
		leafbuf = bufs[target];
		pfree(bufs);

		if (TransactionIdIsValid(wait_xid))
		{
			/* Never wait while holding a page lock. */
			UnlockReleaseBuffer(leafbuf);
			XactLockTableWait(wait_xid, rel, tid, XLTW_InsertIndex);
			continue;
		}

		page = BufferGetPage(leafbuf);
		if (PageGetFreeSpace(page) >= itemsize)
		{
			GenericXLogState *state = GenericXLogStart(rel);
			OffsetNumber off = ddb_leaf_search(page, itemkey, itemkeylen, false);
			BlockNumber leaf = BufferGetBlockNumber(leafbuf);

			page = GenericXLogRegisterBuffer(state, leafbuf, 0);
			ddb_add_item(page, item, itemsize, off);
			DdbCheck(ddb_page_is_ordered(page, NULL, 0));
			GenericXLogFinish(state);
			UnlockReleaseBuffer(leafbuf);

			/* The version first, then its map entry: see ddb_rowid.c. */
			ddb_map_set_deferred(rel, tid, leaf, ddb_key_hash(key));
			break;
		}

		/*
		 * No room.  First prune versions no snapshot can see (a hot item
		 * updated many times fills its leaf with them), then retry; only if
		 * that frees nothing, split on the way down.
		 */
		if (!pruned)
		{
			ItemPointerData *removed = palloc(sizeof(ItemPointerData) * MaxOffsetNumber);
			int			nremoved;

			pruned = true;
			ddb_prune_before_split(rel, leafbuf, removed, &nremoved);
			UnlockReleaseBuffer(leafbuf);
			ddb_forget_versions(rel, removed, nremoved);
			pfree(removed);
			if (nremoved > 0)
				continue;
		}
		else
			UnlockReleaseBuffer(leafbuf);
		{
			/* splits copy pages of items: keep that out of the caller's context */
			MemoryContext splitcxt = AllocSetContextCreate(CurrentMemoryContext,
														   "ddb split",
														   ALLOCSET_DEFAULT_SIZES);
			MemoryContext old = MemoryContextSwitchTo(splitcxt);

			ddb_make_room(rel, itemkey, itemkeylen, itemsize);
			MemoryContextSwitchTo(old);
			MemoryContextDelete(splitcxt);
		}
	}

	pfree(item);
	pfree(itemkey);
	if (succ)
		pfree(succ);
	return true;
}
