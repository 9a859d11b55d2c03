/*-------------------------------------------------------------------------
 *
 * ddb_build.c
 *	  Bulk build of a compact tree from items in key order: VACUUM FULL and
 *	  CLUSTER.
 *
 * Items arrive in item-key order.  Each level of the tree is filled page by
 * page, left to right: a leaf up to the table's fillfactor, keeping the
 * leaf reserve (ddb_leaf_reserve_bytes) free for new versions as inserts
 * of new keys do, an internal page to DDB_BUILD_INTERNAL_FILL of its
 * capacity, the room its children's splits take; when a page is full its
 * right sibling is allocated, the page gets its high key (the truncated
 * separator) and right-link and is written, and a downlink to the sibling
 * goes to the level above (created on demand, starting with a minus
 * infinity downlink to the level's first page).  Internal levels keep the
 * current page's downlinks in memory and lay the page out when it ends, so
 * that it gets the prefix its separators share, as a split would give it
 * (ddb_page.h, "Prefix"): with long keys, an internal page holds hundreds
 * of downlinks instead of two.  A leaf (storage version 3) takes the
 * prefix its items share (ddb_page.h, "Leaf prefix"), and is counted at
 * it as it fills: where a partition ends within it, that is the hash
 * bytes the two share, and where it ends before the next partition, its
 * partition's key, kept in a copy after its high key (leaf_end_v3).
 * Version 2's build gave a leaf the prefix of its key space, lcp(low
 * bound, high key), and ended a leaf that met a partition's end an item
 * early (leaf_end_v2): on 1,000,000 items of 100 a partition, 30,001
 * leaves against version 3's 28,751, the key-order inserts' count
 * (ddb_tree.c, last_leaf_run_split).  At the end the top page is the
 * root, the row-id map is written for the new row ids, and the metapage
 * last.
 *
 * The relation is new in this transaction and ours alone (VACUUM FULL and
 * CLUSTER hold AccessExclusiveLock on a transient relation; a bulk COPY,
 * ddb_bulk.c, builds in a file created in its own subtransaction), so
 * tree pages bypass shared buffers, as nbtree's bulk build does: each is
 * written once, straight to the file, and logged as a full-page image
 * (XLOG_FPI, which recovery replays without ddb), not logged at all when
 * the relation needs no WAL (wal_level = minimal: commit syncs the file,
 * or logs it whole when it is small).  Going through shared buffers cost
 * a zero-filled write per page to extend the file, a buffer to find and
 * fault in, and the real write later: 40 % of a bulk COPY.  Blocks are
 * numbered as pages start and written as they end, so an internal page
 * leaves a hole filled with zeroes until it is written.  Since the pages
 * never pass through shared buffers, a checkpoint that starts during the
 * build would not write them: when one has (the redo pointer moved), the
 * build syncs the file itself before it ends; otherwise the sync requests
 * its writes registered are the next checkpoint's.  The row-id map
 * (ddb_map_build) and the metapage are written through shared buffers
 * with Generic WAL after the tree, when the file holds every tree page.
 *
 * Versions keep their transaction headers (xmin, xmax, infomask), so
 * VACUUM FULL is MVCC-safe like heap's; they get new row ids, in order, and
 * t_ctid links between versions of one key are remapped.  Out-of-line
 * values are re-toasted into the new relation's TOAST table.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/heapam.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/smgr.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "ddb.h"
#include "engine/ddb_page.h"

/*
 * Internal pages are filled to this share of their capacity: a child's
 * split adds a downlink.  (nbtree builds its internal pages 70 % full, but
 * ddb's leaves split rarely after a build: they keep the leaf reserve.)
 */
#define DDB_BUILD_INTERNAL_FILL	0.90

/* A leaf item waiting for its leaf to end: a whole-key copy, as ddb_build_add made it. */
typedef struct PendingItem
{
	DdbLeafItem item;
	Size		size;			/* MAXALIGN'd */
	char	   *key;			/* its item key */
	int			keylen;
} PendingItem;

typedef struct LevelBuilder
{
	int			level;
	BlockNumber blkno;			/* current page's block, InvalidBlockNumber
								 * before the level's first page */
	Page		page;			/* its contents, built in local memory */
	BlockNumber first;			/* first page of this level */
	int			npages;
	/*
	 * leaf: the current leaf's items, laid out when it ends (leaf_write),
	 * and what they share with its low bound
	 */
	PendingItem *pend;
	int			nitems;
	int			maxitems;
	char	   *low;			/* the leaf's low bound; NULL: the first leaf */
	int			lowlen;
	int			run;			/* the prefix its items share with low */
	Size		used;			/* their bytes at prefix 'run', line pointers too */
	/* internal: the current page's downlinks, [0] minus infinity */
	BlockNumber *child;
	char	  **key;			/* full separators, palloc'd ([0] unused) */
	int		   *keylen;
	int			n;
	int			max;
	struct LevelBuilder *parent;
} LevelBuilder;

struct DdbBuildState
{
	Relation	rel;
	bool		use_wal;		/* log tree pages (RelationNeedsWAL) */
	bool		items_prefix;	/* each leaf takes its items' prefix (storage
								 * version 3; else its key space's) */
	Size		leaf_reserve;	/* room each leaf keeps (the fillfactor's) */
	XLogRecPtr	start_redo;		/* the redo pointer when the build began */
	BlockNumber next_block;		/* next block number to hand out */
	BlockNumber nwritten;		/* blocks the file has (written or zeroes) */
	Page		zeropage;
	LevelBuilder *leaf;
	uint64		nitems;
	/* row-id map entries for rowids 0..nitems-1 */
	BlockNumber *map_block;
	uint32	   *map_hash;
	uint64		map_size;
};

static void
build_init_page(Page page, int level, BlockNumber right)
{
	DdbPageOpaque op;

	PageInit(page, BLCKSZ, sizeof(DdbPageOpaqueData));
	op = DdbPageGetOpaque(page);
	op->right = right;
	op->level = level;
	op->flags = level == 0 ? DDB_PAGE_LEAF : DDB_PAGE_INTERNAL;
	op->page_id = DDB_PAGE_ID;
}

/* A block number for a new tree page (written by build_write). */
static BlockNumber
build_new_page(DdbBuildState *bs)
{
	return bs->next_block++;
}

/*
 * Write a finished tree page to its block, straight to the file (see the
 * file header), after logging it as a full-page image.
 */
static void
build_write(DdbBuildState *bs, BlockNumber blkno, Page page)
{
	SMgrRelation smgr;

	if (bs->use_wal)
		log_newpage(&bs->rel->rd_node, MAIN_FORKNUM, blkno, page, true);
	smgr = RelationGetSmgr(bs->rel);
	while (bs->nwritten < blkno)
	{
		/* a hole for a page that ends later; no checksum on zeroes */
		smgrextend(smgr, MAIN_FORKNUM, bs->nwritten++, (char *) bs->zeropage, false);
	}
	PageSetChecksumInplace(page, blkno);
	if (blkno == bs->nwritten)
	{
		smgrextend(smgr, MAIN_FORKNUM, blkno, (char *) page, false);
		bs->nwritten++;
	}
	else
		smgrwrite(smgr, MAIN_FORKNUM, blkno, (char *) page, false);
}

/*
 * Add a key item (downlink or high key) to a page being built, with
 * copylen bytes 'copy' after its key bytes (a leaf's prefix kept after
 * its high key: ddb_page.h, "Leaf prefix").
 */
static void
page_add_key(Page page, BlockNumber child, const char *key, int keylen,
			 const char *copy, int copylen, OffsetNumber off)
{
	Size		sz = MAXALIGN(DdbKeyItemSize(keylen + copylen));
	DdbKeyItem	ki = palloc0(sz);

	ki->child = child;
	ki->keylen = keylen;
	if (keylen > 0)
		memcpy(ki->key, key, keylen);
	if (copylen > 0)
		memcpy(ki->key + keylen, copy, copylen);
	if (PageAddItem(page, (Item) ki, sz, off, false, false) == InvalidOffsetNumber)
		elog(ERROR, "could not add a key item of %d bytes to ddb page during build", keylen);
	pfree(ki);
}

static LevelBuilder *
level_new(int level)
{
	LevelBuilder *lb = palloc0(sizeof(LevelBuilder));

	lb->level = level;
	lb->blkno = InvalidBlockNumber;
	lb->page = palloc(BLCKSZ);
	return lb;
}

static void push_downlink(DdbBuildState *bs, LevelBuilder *lb, const char *key,
						  int keylen, BlockNumber child);

/*
 * Size of an internal page holding downlinks [0, j) of lb with the prefix
 * their separators share kept in its minus-infinity downlink, high key not
 * counted.  The page written may keep a shorter prefix in its high key
 * instead, but only when that is smaller (ddb_half_prefix).
 */
static Size
internal_size(LevelBuilder *lb, int j)
{
	int			L = 0;
	Size		sz;

	if (j >= 2)
	{
		int			a = lb->keylen[1];
		int			b = lb->keylen[j - 1];
		int			i = 0;

		while (i < a && i < b && lb->key[1][i] == lb->key[j - 1][i])
			i++;
		L = i;
	}
	sz = ddb_key_item_size(L);
	for (int i = 1; i < j; i++)
		sz += ddb_key_item_size(lb->keylen[i] - L);
	return sz;
}

/*
 * Lay out downlinks [0, j) of lb in lb->page: high key 'hk' (NULL: the
 * level's last page), the prefix ddb_tree.c's splits would choose
 * (ddb_page.h, "Prefix").
 */
static void
internal_fill(LevelBuilder *lb, int j, const char *hk, int hklen, BlockNumber right)
{
	bool		inf;
	const char *bytes;
	int			plen = ddb_half_prefix(lb->key, lb->keylen, 1, j, hk, hklen, NULL, 0,
									   &inf, &bytes);

	build_init_page(lb->page, lb->level, right);
	DdbPageGetOpaque(lb->page)->prefixlen = plen;
	if (hk != NULL)
		page_add_key(lb->page, InvalidBlockNumber, hk, hklen, NULL, 0, DDB_HIKEY);
	page_add_key(lb->page, lb->child[0], bytes, inf ? plen : 0, NULL, 0, InvalidOffsetNumber);
	for (int i = 1; i < j; i++)
		page_add_key(lb->page, lb->child[i], lb->key[i] + plen, lb->keylen[i] - plen, NULL, 0,
					 InvalidOffsetNumber);
}

/*
 * Add a downlink to internal level lb (key NULL for the level's first,
 * minus infinity).  A page that grows past DDB_BUILD_INTERNAL_FILL ends
 * before its last downlink, whose separator becomes its high key and goes
 * up, or before an earlier one if that high key would not fit.
 */
static void
internal_add(DdbBuildState *bs, LevelBuilder *lb, BlockNumber child,
			 const char *key, int keylen)
{
	int			j;
	BlockNumber nextblk;

	if (lb->n == lb->max)
	{
		lb->max = Max(16, lb->max * 2);
		lb->child = lb->child ? repalloc(lb->child, sizeof(BlockNumber) * lb->max) :
			palloc(sizeof(BlockNumber) * lb->max);
		lb->key = lb->key ? repalloc(lb->key, sizeof(char *) * lb->max) :
			palloc(sizeof(char *) * lb->max);
		lb->keylen = lb->keylen ? repalloc(lb->keylen, sizeof(int) * lb->max) :
			palloc(sizeof(int) * lb->max);
	}
	if (lb->blkno == InvalidBlockNumber)
	{
		lb->blkno = build_new_page(bs);
		lb->first = lb->blkno;
		lb->npages = 1;
	}
	lb->child[lb->n] = child;
	lb->key[lb->n] = NULL;
	lb->keylen[lb->n] = 0;
	if (lb->n > 0)
	{
		lb->key[lb->n] = palloc(Max(keylen, 1));
		memcpy(lb->key[lb->n], key, keylen);
		lb->keylen[lb->n] = keylen;
	}
	lb->n++;
	if (lb->n <= 2 ||
		internal_size(lb, lb->n) <= (Size) (DDB_PAGE_CAPACITY * DDB_BUILD_INTERNAL_FILL))
		return;

	/* end the page before downlink j, whose separator is its high key */
	j = lb->n - 1;
	while (j > 1 && internal_size(lb, j) + ddb_key_item_size(lb->keylen[j]) > DDB_PAGE_CAPACITY)
		j--;
	nextblk = build_new_page(bs);
	internal_fill(lb, j, lb->key[j], lb->keylen[j], nextblk);
	build_write(bs, lb->blkno, lb->page);
	lb->blkno = nextblk;
	lb->npages++;
	push_downlink(bs, lb, lb->key[j], lb->keylen[j], nextblk);

	/* downlinks [j, n) start the next page, j as its minus infinity */
	for (int i = 1; i <= j; i++)
		pfree(lb->key[i]);
	for (int i = j; i < lb->n; i++)
	{
		lb->child[i - j] = lb->child[i];
		lb->key[i - j] = i == j ? NULL : lb->key[i];
		lb->keylen[i - j] = i == j ? 0 : lb->keylen[i];
	}
	lb->n -= j;
}

/* Add a downlink (key -> child) to the level above lb, creating it. */
static void
push_downlink(DdbBuildState *bs, LevelBuilder *lb, const char *key, int keylen,
			  BlockNumber child)
{
	if (lb->parent == NULL)
	{
		lb->parent = level_new(lb->level + 1);
		internal_add(bs, lb->parent, lb->first, NULL, 0);
	}
	internal_add(bs, lb->parent, child, key, keylen);
}

/* Size of whole-key leaf item 'li' (size bytes) stored without plen bytes. */
static Size
leaf_item_size(DdbLeafItem li, Size size, int plen)
{
	return ddb_leaf_item_resized(li, size, -plen);
}

/* Bytes the leaf's first n items take at prefix plen, line pointers counted. */
static Size
leaf_used(LevelBuilder *lb, int n, int plen)
{
	Size		used = 0;

	for (int i = 0; i < n; i++)
		used += leaf_item_size(lb->pend[i].item, lb->pend[i].size, plen) + sizeof(ItemIdData);
	return used;
}

/*
 * The prefix the leaf's first n items (n >= 1) share, storage version 3:
 * lcp of the first and last item keys (every key between shares it),
 * never longer than an item's key (versions of one key share part of
 * their suffixes; the prefix stops before them).
 */
static int
leaf_items_prefix(LevelBuilder *lb, int n)
{
	int			plen = ddb_common_prefix(lb->pend[0].key, lb->pend[0].keylen,
										 lb->pend[n - 1].key, lb->pend[n - 1].keylen);

	for (int i = 0; i < n; i++)
		plen = Min(plen, lb->pend[i].item->keylen);
	return plen;
}

/*
 * The prefix the leaf's items are counted at (lb->run), as leaf_add keeps
 * it: storage version 3, what they share (leaf_items_prefix); version 2,
 * what they share with the leaf's low bound, none on the first leaf.
 */
static int
leaf_run(DdbBuildState *bs, LevelBuilder *lb)
{
	int			run;

	if (lb->nitems == 0)
		return 0;
	if (bs->items_prefix)
		return leaf_items_prefix(lb, lb->nitems);
	if (lb->low == NULL)
		return 0;
	run = lb->lowlen;
	for (int i = 0; i < lb->nitems; i++)
		run = Min(run, Min(lb->pend[i].item->keylen,
						   ddb_common_prefix(lb->low, lb->lowlen, lb->pend[i].key,
											 lb->pend[i].keylen)));
	return run;
}

/*
 * Write the leaf's first n items as a page under high key 'hk' (NULL: the
 * level's last page), right-linked to 'right', with a prefix of plen
 * bytes, which every item key starts with: kept in the high key when that
 * starts with it, else (copy) in a copy after it (ddb_page.h, "Leaf
 * prefix").  Set the items' map entries; the items after them become the
 * next leaf's first.
 */
static void
leaf_write(DdbBuildState *bs, LevelBuilder *lb, int n, const char *hk, int hklen,
		   BlockNumber right, int plen, bool copy)
{
	char	   *prefix = NULL;

	Assert(hk != NULL || plen == 0);
	build_init_page(lb->page, 0, right);
	DdbPageGetOpaque(lb->page)->prefixlen = plen;
	if (plen > 0)
	{
		prefix = palloc(plen);
		memcpy(prefix, lb->pend[0].key, plen);
		Assert(copy != ddb_starts_with(hk, hklen, prefix, plen));
	}
	if (copy)
		DdbPageGetOpaque(lb->page)->flags |= DDB_PAGE_PREFIX_COPY;
	if (hk != NULL)
		page_add_key(lb->page, InvalidBlockNumber, hk, hklen, prefix, copy ? plen : 0, DDB_HIKEY);
	for (int i = 0; i < n; i++)
	{
		DdbLeafItem li = lb->pend[i].item;
		Size		size = leaf_item_size(li, lb->pend[i].size, plen);

		if (plen > 0)
		{
			Size		tupoff = DdbLeafTupleOffset(li->keylen);
			Size		tuplen = lb->pend[i].size - tupoff;

			/* in place: the key's rest, then the tuple moved down to its offset */
			Assert(memcmp(li->key, prefix, plen) == 0);
			memmove(li->key, li->key + plen, li->keylen - plen);
			li->keylen -= plen;
			memmove((char *) li + DdbLeafTupleOffset(li->keylen), (char *) li + tupoff, tuplen);
			memset((char *) li + offsetof(DdbLeafItemData, key) + li->keylen, 0,
				   DdbLeafTupleOffset(li->keylen) - offsetof(DdbLeafItemData, key) - li->keylen);
		}
		if (PageAddItem(lb->page, (Item) li, size, InvalidOffsetNumber, false, false) == InvalidOffsetNumber)
			elog(ERROR, "could not add item of size %zu to ddb page during build", size);
		bs->map_block[ddb_tid_to_rowid(&li->tid)] = lb->blkno;
		pfree(li);
		pfree(lb->pend[i].key);
	}
	if (prefix)
		pfree(prefix);
	build_write(bs, lb->blkno, lb->page);
	lb->nitems -= n;
	memmove(lb->pend, lb->pend + n, sizeof(PendingItem) * lb->nitems);
}

/*
 * Storage version 2's end of a leaf (the rule version 1 and 2 trees are
 * built by): its prefix is that of its key space, lcp(low bound, high
 * key), none on the first leaf, so that it lies in its high key.  When
 * 'next' does not share the prefix 'run' the leaf's items share with its
 * low bound, as they were counted at it (next starts another partition),
 * the leaf ends one item earlier, at the separator between its last two
 * items, which share the prefix: its last item and 'next' go to the next
 * leaf, which then holds the end of one partition and the start of the
 * next, as any leaf a boundary falls in does.  A high key inside the
 * partition before would keep the prefix too, but a backward scan from
 * the end of that partition would then descend to the leaf right of it,
 * find nothing and descend again.  A leaf of one item ends at the
 * truncated separator all the same, its prefix shortened to what that
 * shares with the low bound: its item fits at any prefix beside any high
 * key (DDB_MAX_ITEM_SIZE).  Keeping the prefix there would take a high
 * key of the item's whole key and more when the low bound shares all of
 * it (a key's older versions, which VACUUM FULL keeps for a snapshot,
 * each on a leaf of its own when keys are long): the parent then holds
 * two such downlinks, a key's leaves fall under different parents, and
 * the split that prunes a key's old version on the leaf to its right
 * (ddb_tree.c, "Long keys") could not reach it.  Returns the items that
 * go, with the high key's length (a prefix of *next) and the prefix.
 */
static int
leaf_end_v2(LevelBuilder *lb, int n, const char **next, int *nextlen, int *hklen, int *plen)
{
	if (lb->low != NULL && ddb_common_prefix(lb->low, lb->lowlen, *next, *nextlen) < lb->run &&
		n >= 2)
	{
		n--;					/* (its last two items share the prefix) */
		*next = lb->pend[n].key;
		*nextlen = lb->pend[n].keylen;
	}
	*hklen = ddb_truncated_separator(lb->pend[n - 1].key, lb->pend[n - 1].keylen,
										 *next, *nextlen);
	*plen = 0;
	if (lb->low != NULL)
	{
		*plen = ddb_common_prefix(lb->low, lb->lowlen, *next, *hklen);
		for (int i = 0; i < n; i++)
			*plen = Min(*plen, lb->pend[i].item->keylen);
	}
	return n;
}

/*
 * Storage version 3's end of a leaf: the truncated separator between its
 * last item and 'next' for a high key, whatever partition that lies in,
 * and the prefix its items share (leaf_items_prefix), as a split gives
 * its halves.  When the high key does not start with the prefix, the
 * prefix goes in a copy after it (never past DDB_MAX_SEP_LEN, so that an
 * item of any size fits beside it, as a split needs) or, if the copy does
 * not fit where the items do (leaf_add counted the high key alone), the
 * leaf takes what the high key holds of it.  When neither fits, the leaf
 * ends one item earlier (its last item then starts the next leaf); a leaf
 * of one item always fits beside its high key (DDB_MAX_ITEM_SIZE), and
 * one of one or two items takes the leaf reserve if it must, as leaf_add
 * lets it.  (A leaf of one item takes no copy: it would move the key's
 * bytes from the item to the high key and save nothing.)  Returns the
 * items that go, with the high key's length (a prefix of *next), the
 * prefix and whether it is copied.
 */
static int
leaf_end_v3(DdbBuildState *bs, LevelBuilder *lb, int n, const char **next, int *nextlen,
			int *hklen, int *plen, bool *copy)
{
	for (;;)
	{
		int			items = leaf_items_prefix(lb, n);
		int			held;
		Size		room = DDB_PAGE_CAPACITY - (n > 2 ? bs->leaf_reserve : 0);

		*hklen = ddb_truncated_separator(lb->pend[n - 1].key, lb->pend[n - 1].keylen,
										 *next, *nextlen);
		held = Min(items, ddb_common_prefix(lb->pend[0].key, items, *next, *hklen));
		*copy = n >= 2 && held < items && *hklen + items <= DDB_MAX_SEP_LEN &&
			leaf_used(lb, n, items) + ddb_key_item_size(*hklen + items) <= room;
		*plen = *copy ? items : held;
		if (*copy || held == items)
			return n;
		if (n == 1 || leaf_used(lb, n, held) + ddb_key_item_size(*hklen) <= room)
		{
			if (n > 1)
				elog(DEBUG1, "ddb build: a leaf's prefix cut to the %d bytes its high key holds, its items' %d bytes fitting no copy after that",
					 held, items);
			return n;
		}
		elog(DEBUG1, "ddb build: a leaf ends an item early, its items' prefix of %d bytes fitting neither after its high key of %d bytes nor cut to the %d bytes that holds",
			 items, *hklen, held);
		n--;
		*next = lb->pend[n].key;
		*nextlen = lb->pend[n].keylen;
	}
}

/*
 * End the current leaf before item key 'next' (its first n items go, or
 * fewer: leaf_end_v3, leaf_end_v2; the rest, if any, start the next leaf)
 * and start the next leaf.  Its high key is the truncated separator
 * between its last item and 'next' (a prefix of 'next').
 */
static void
leaf_end(DdbBuildState *bs, LevelBuilder *lb, int n, const char *next, int nextlen)
{
	char	   *hk;
	int			hklen;
	int			plen;
	bool		copy = false;
	BlockNumber nextblk = build_new_page(bs);

	if (bs->items_prefix)
		n = leaf_end_v3(bs, lb, n, &next, &nextlen, &hklen, &plen, &copy);
	else
		n = leaf_end_v2(lb, n, &next, &nextlen, &hklen, &plen);
	hk = palloc(hklen);
	memcpy(hk, next, hklen);
	leaf_write(bs, lb, n, hk, hklen, nextblk, plen, copy);
	lb->blkno = nextblk;
	lb->npages++;
	push_downlink(bs, lb, hk, hklen, nextblk);
	if (lb->low)
		pfree(lb->low);
	lb->low = hk;
	lb->lowlen = hklen;
	/* the items left, if any, at the prefix they share */
	lb->run = leaf_run(bs, lb);
	lb->used = leaf_used(lb, lb->nitems, lb->run);
}

/*
 * Add a whole-key item (item key 'key') to the leaf level.  The leaf takes
 * it if it fits at the prefix its items would then share (storage version
 * 3: with each other; version 2: with the leaf's low bound), counting
 * every item at that prefix, beside the high key the leaf would get if
 * the next item did not fit (at most this key and one byte), and the leaf
 * reserve after both, unless the leaf has fewer than two items.  The leaf
 * takes items up to the fillfactor, never beyond it (as nbtree's and
 * heap's pages do), so it ends on average half an item below it.  Else
 * the leaf ends (leaf_end), and the item is looked at again for the next
 * one, which may have taken the leaf's last items.
 */
static void
leaf_add(DdbBuildState *bs, LevelBuilder *lb, DdbLeafItem item, Size size,
		 char *key, int keylen)
{
	if (lb->blkno == InvalidBlockNumber)
	{
		/* first page of the level */
		lb->blkno = build_new_page(bs);
		lb->first = lb->blkno;
		lb->npages = 1;
	}
	for (;;)
	{
		int			run;
		Size		used;
		Size		hk = ddb_key_item_size(Min(keylen + 1, DDB_MAX_SEP_LEN));
		const char *with;
		int			withlen;

		if (lb->nitems == 0)
		{
			/* the first item of a leaf: all it shares (with the low bound) */
			lb->run = bs->items_prefix ? item->keylen : lb->low ?
				Min(item->keylen, ddb_common_prefix(lb->low, lb->lowlen, key, keylen)) : 0;
			lb->used = 0;
			break;
		}
		with = bs->items_prefix ? lb->pend[0].key : lb->low;
		withlen = bs->items_prefix ? lb->pend[0].keylen : lb->lowlen;
		run = with ?
			Min(lb->run, Min(item->keylen, ddb_common_prefix(with, withlen, key, keylen))) : 0;
		used = (run == lb->run ? lb->used : leaf_used(lb, lb->nitems, run)) +
			leaf_item_size(item, size, run) + sizeof(ItemIdData);
		if (used + hk <= DDB_PAGE_CAPACITY &&
			(DDB_PAGE_CAPACITY - used - hk >= bs->leaf_reserve || lb->nitems < 2))
		{
			lb->run = run;
			lb->used = used - leaf_item_size(item, size, run) - sizeof(ItemIdData);
			break;
		}
		leaf_end(bs, lb, lb->nitems, key, keylen);
	}
	if (lb->nitems == lb->maxitems)
	{
		lb->maxitems = Max(64, lb->maxitems * 2);
		lb->pend = lb->pend ? repalloc(lb->pend, sizeof(PendingItem) * lb->maxitems) :
			palloc(sizeof(PendingItem) * lb->maxitems);
	}
	lb->pend[lb->nitems].item = item;
	lb->pend[lb->nitems].size = size;
	lb->pend[lb->nitems].key = key;
	lb->pend[lb->nitems].keylen = keylen;
	lb->nitems++;
	lb->used += leaf_item_size(item, size, lb->run) + sizeof(ItemIdData);
}

/*
 * The level's last leaf, which is the rightmost: no high key, no prefix.
 * Its items were counted at the prefix they share; while they do not fit
 * whole, with the leaf reserve, the leaf ends before the longest run of
 * its last items that does (one item always fits a page:
 * DDB_MAX_ITEM_SIZE), which then makes the last leaf (leaf_end may end
 * it earlier still, and what it leaves is looked at again).
 */
static void
leaf_finish(DdbBuildState *bs, LevelBuilder *lb)
{
	Size		room = DDB_PAGE_CAPACITY - Min(bs->leaf_reserve, DDB_PAGE_CAPACITY / 2);

	while (lb->nitems > 1 && leaf_used(lb, lb->nitems, 0) > room)
	{
		int			s = lb->nitems - 1;
		Size		used = leaf_item_size(lb->pend[s].item, lb->pend[s].size, 0) + sizeof(ItemIdData);

		while (s > 1)
		{
			Size		more = leaf_item_size(lb->pend[s - 1].item, lb->pend[s - 1].size, 0) +
				sizeof(ItemIdData);

			if (used + more > room)
				break;
			used += more;
			s--;
		}
		leaf_end(bs, lb, s, lb->pend[s].key, lb->pend[s].keylen);
	}
	leaf_write(bs, lb, lb->nitems, NULL, 0, InvalidBlockNumber, 0, false);
}

DdbBuildState *
ddb_build_begin(Relation rel)
{
	DdbBuildState *bs = palloc0(sizeof(DdbBuildState));

	if (RelationGetNumberOfBlocks(rel) != 0)
		elog(ERROR, "ddb bulk build needs an empty relation");
	bs->rel = rel;
	bs->use_wal = RelationNeedsWAL(rel);
	bs->items_prefix = ddb_new_tree_version() >= 3;
	bs->leaf_reserve = ddb_leaf_reserve_bytes(rel);
	bs->start_redo = GetRedoRecPtr();
	bs->zeropage = palloc0(BLCKSZ);
	/* block 0, the metapage, is written last, through shared buffers */
	bs->next_block = DDB_METAPAGE_BLKNO + 1;
	bs->nwritten = 0;
	bs->leaf = level_new(0);
	return bs;
}

/*
 * Add one version, in item-key order.  The caller has assigned its row id
 * (tid) and, for the stored tuple, t_ctid.
 */
void
ddb_build_add(DdbBuildState *bs, const char *key, int keylen, ItemPointer tid,
			  HeapTuple stored)
{
	Size		itemlen = DdbLeafTupleOffset(keylen) + stored->t_len;
	Size		itemsize = MAXALIGN(itemlen);
	DdbLeafItem item = palloc0(itemsize);
	char	   *itemkey = palloc(keylen + DDB_SUFFIX_LEN);
	int			itemkeylen;
	uint64		rowid = ddb_tid_to_rowid(tid);

	if (itemsize > DDB_MAX_ITEM_SIZE)
		elog(ERROR, "item of %zu bytes is too large for a ddb page", itemsize);
	item->tid = *tid;
	item->keylen = keylen;
	memcpy(item->key, key, keylen);
	memcpy(DdbLeafItemGetTuple(item), stored->t_data, stored->t_len);
	itemkeylen = ddb_item_key(key, keylen, tid, itemkey);
	leaf_add(bs, bs->leaf, item, itemsize, itemkey, itemkeylen);

	/* map entry: the leaf it landed on */
	if (rowid >= bs->map_size)
	{
		uint64		newsize = Max(1024, Max(bs->map_size * 2, rowid + 1));

		if (bs->map_block == NULL)
		{
			bs->map_block = MemoryContextAllocHuge(CurrentMemoryContext, newsize * sizeof(BlockNumber));
			bs->map_hash = MemoryContextAllocHuge(CurrentMemoryContext, newsize * sizeof(uint32));
		}
		else
		{
			bs->map_block = repalloc_huge(bs->map_block, newsize * sizeof(BlockNumber));
			bs->map_hash = repalloc_huge(bs->map_hash, newsize * sizeof(uint32));
		}
		memset(bs->map_block + bs->map_size, 0, (newsize - bs->map_size) * sizeof(BlockNumber));
		bs->map_size = newsize;
	}
	/* (the leaf it lands on is set when the leaf is written) */
	bs->map_hash[rowid] = ddb_key_hash(key);
	bs->nitems = Max(bs->nitems, rowid + 1);
}

/* Finish: write the last page of every level, the map and the metapage. */
void
ddb_build_end(DdbBuildState *bs)
{
	LevelBuilder *lb = bs->leaf;
	BlockNumber root;
	int			height;
	GenericXLogState *state;
	Buffer		metabuf;
	Page		meta;
	DdbMetaPageData *md;
	BlockNumber map_root;
	int			map_levels;

	if (lb->blkno == InvalidBlockNumber)
	{
		/* no items: an empty root leaf */
		lb->blkno = build_new_page(bs);
		lb->first = lb->blkno;
	}
	for (;;)
	{
		LevelBuilder *parent = lb->parent;

		if (lb->level > 0)
		{
			internal_fill(lb, lb->n, NULL, 0, InvalidBlockNumber);
			build_write(bs, lb->blkno, lb->page);
		}
		else
		{
			leaf_finish(bs, lb);
			parent = lb->parent;	/* (its last leaf may have made the level above) */
		}
		if (parent == NULL)
		{
			root = lb->first;
			height = lb->level + 1;
			break;
		}
		lb = parent;
	}

	/*
	 * Every tree page is written, so the file ends at next_block, and the
	 * map's pages can be added through shared buffers after it.
	 */
	if (bs->nwritten != bs->next_block)
		elog(ERROR, "ddb bulk build wrote %u of %u blocks", bs->nwritten, bs->next_block);
	ddb_map_build(bs->rel, bs->map_block, bs->map_hash, bs->nitems,
				  &map_root, &map_levels);

	metabuf = ReadBuffer(bs->rel, DDB_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	state = GenericXLogStart(bs->rel);
	meta = GenericXLogRegisterBuffer(state, metabuf, GENERIC_XLOG_FULL_IMAGE);
	{
		PageInit(meta, BLCKSZ, sizeof(DdbPageOpaqueData));
		DdbPageGetOpaque(meta)->right = InvalidBlockNumber;
		DdbPageGetOpaque(meta)->flags = DDB_PAGE_META;
		DdbPageGetOpaque(meta)->page_id = DDB_PAGE_ID;
		md = DdbPageGetMeta(meta);
		memset(md, 0, sizeof(DdbMetaPageData));
		md->magic = DDB_MAGIC;
		md->version = ddb_new_tree_version();
		md->root = root;
		md->height = height;
		md->next_rowid = bs->nitems;
		md->map_root = map_root;
		md->map_levels = map_levels;
		((PageHeader) meta)->pd_lower = ((char *) md + sizeof(DdbMetaPageData)) - (char *) meta;
	}
	GenericXLogFinish(state);
	ddb_vm_create(bs->rel);
	UnlockReleaseBuffer(metabuf);

	/*
	 * The tree pages bypassed shared buffers: if a checkpoint began since
	 * they were logged, it may have passed over them, and recovery would
	 * start after their records; sync them now (nbtree's bulk build always
	 * does).  Otherwise the sync requests their writes registered go to
	 * the next checkpoint, which starts after those records.
	 */
	if (bs->use_wal && GetRedoRecPtr() != bs->start_redo)
		smgrimmedsync(RelationGetSmgr(bs->rel), MAIN_FORKNUM);
}

/* The versions of one key being copied by CLUSTER, newest first. */
typedef struct ClusterRun
{
	MemoryContext cxt;
	char	   *key;
	int			keylen;
	HeapTuple  *run;
	int			n;
	int			max;
	uint64		nextrowid;
} ClusterRun;

/*
 * Write the run of versions of one key: new row ids in the same order (the
 * newest gets the largest, so item-key order is kept), t_ctid links within
 * the run remapped, out-of-line values re-toasted into the new table's
 * TOAST table (the old one is dropped with the old relation).
 */
static void
flush_run(DdbBuildState *bs, Relation NewTable, ClusterRun *cr)
{
	ItemPointerData *newtids = palloc(sizeof(ItemPointerData) * cr->n);

	for (int r = 0; r < cr->n; r++)
		ddb_rowid_to_tid(cr->nextrowid + (cr->n - 1 - r), &newtids[r]);
	for (int r = 0; r < cr->n; r++)
	{
		HeapTuple	st = cr->run[r];
		ItemPointerData ctid = st->t_data->t_ctid;

		if (ItemPointerIndicatesMovedPartitions(&ctid))
			continue;			/* keep the "moved to another partition" mark */
		st->t_data->t_ctid = newtids[r];
		if (!ItemPointerEquals(&ctid, &st->t_self))
		{
			for (int s = 0; s < cr->n; s++)
				if (ItemPointerEquals(&ctid, &cr->run[s]->t_self))
					st->t_data->t_ctid = newtids[s];
		}
	}
	for (int r = 0; r < cr->n; r++)
	{
		HeapTuple	st = cr->run[r];

		st->t_self = newtids[r];
		{
			/* in the run's context, reset after the run */
			MemoryContext old = MemoryContextSwitchTo(cr->cxt);

			st = ddb_toast_stored_tuple(NewTable, st, NULL, cr->keylen);
			MemoryContextSwitchTo(old);
		}
		ddb_build_add(bs, cr->key, cr->keylen, &newtids[r], st);
	}
	cr->nextrowid += cr->n;
	cr->n = 0;
	cr->max = 0;
	cr->run = NULL;
	cr->key = NULL;
	pfree(newtids);
	MemoryContextReset(cr->cxt);
}

/*
 * VACUUM FULL / CLUSTER: copy every version that is not dead to everyone
 * from OldTable into the empty NewTable, in key order (ddb tables are
 * always clustered on their key, so the index CLUSTER names is irrelevant).
 */
void
ddb_copy_for_cluster(Relation OldTable, Relation NewTable, TransactionId OldestXmin,
					 double *num_tuples, double *tups_vacuumed,
					 double *tups_recently_dead)
{
	DdbBuildState *bs;
	Buffer		buf;
	ClusterRun	cr = {0};

	*num_tuples = *tups_vacuumed = *tups_recently_dead = 0;
	bs = ddb_build_begin(NewTable);
	cr.cxt = AllocSetContextCreate(CurrentMemoryContext, "ddb cluster run",
								   ALLOCSET_DEFAULT_SIZES);

	if (ddb_tree_exists(OldTable))
	{
		buf = ddb_descend(OldTable, NULL, 0, false, BUFFER_LOCK_SHARE, NULL, NULL);
		for (;;)
		{
			Page		page = BufferGetPage(buf);
			OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
			BlockNumber next;

			CHECK_FOR_INTERRUPTS();
			for (OffsetNumber off = DdbPageFirstData(page); off <= maxoff; off++)
			{
				ItemId		iid = PageGetItemId(page, off);
				DdbLeafItem li = (DdbLeafItem) PageGetItem(page, iid);
				HeapTupleData htup;
				MemoryContext old;
				char		keybuf[DDB_MAX_KEY_LEN];
				int			keylen;
				const char *key = ddb_leaf_key(page, li, keybuf, &keylen);

				(void) ddb_leaf_htup(OldTable, page, off, &htup);

				switch (HeapTupleSatisfiesVacuum(&htup, OldestXmin, buf))
				{
					case HEAPTUPLE_DEAD:
						*tups_vacuumed += 1;
						continue;
					case HEAPTUPLE_RECENTLY_DEAD:
						*tups_recently_dead += 1;
						break;
					default:
						*num_tuples += 1;
						break;
				}

				if (cr.key != NULL &&
					(cr.keylen != keylen || memcmp(cr.key, key, keylen) != 0))
				{
					/*
					 * Toasting must not happen under the page lock.  We hold
					 * AccessExclusiveLock on the table, so nothing changes
					 * the page meanwhile.
					 */
					LockBuffer(buf, BUFFER_LOCK_UNLOCK);
					flush_run(bs, NewTable, &cr);
					LockBuffer(buf, BUFFER_LOCK_SHARE);
				}
				old = MemoryContextSwitchTo(cr.cxt);
				if (cr.key == NULL)
				{
					cr.key = palloc(keylen);
					memcpy(cr.key, key, keylen);
					cr.keylen = keylen;
				}
				if (cr.n == cr.max)
				{
					cr.max = Max(8, cr.max * 2);
					cr.run = cr.run ? repalloc(cr.run, sizeof(HeapTuple) * cr.max) :
						palloc(sizeof(HeapTuple) * cr.max);
				}
				cr.run[cr.n++] = heap_copytuple(&htup);
				MemoryContextSwitchTo(old);
			}
			next = DdbPageGetOpaque(page)->right;
			UnlockReleaseBuffer(buf);
			if (next == InvalidBlockNumber)
				break;
			buf = ReadBuffer(OldTable, next);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
		}
	}
	if (cr.n > 0)
		flush_run(bs, NewTable, &cr);
	ddb_build_end(bs);
	MemoryContextDelete(cr.cxt);
}
