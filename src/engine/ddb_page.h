/*-------------------------------------------------------------------------
 *
 * ddb_page.h
 *	  On-page layout of the ddb B+tree, shared by ddb_tree.c (which owns it
 *	  and documents the locking protocol), ddb_scan.c and ddb_verify.c.
 *
 * Every page uses PostgreSQL's standard layout (line pointers growing up
 * from pd_lower, items packed down from pd_upper, nothing in between) with
 * a DdbPageOpaqueData in the special space.  Block 0 is the metapage.
 *
 * Tree pages are B-link nodes: a right-link and, unless the page is the
 * rightmost of its level, a high key at offset DDB_HIKEY (1).  Data items
 * start at DdbPageFirstData().
 *
 *	 internal item:	DdbKeyItem { child block, key length, key bytes }.  The
 *					first data item is the "minus infinity" downlink, with
 *					no key; every other item stores its separator without
 *					the page's prefix.
 *	 high key:		DdbKeyItem with child = InvalidBlockNumber.
 *	 leaf item:		DdbLeafItem { row id as TID, key length, key bytes },
 *					padded to MAXALIGN, then a heap-format tuple (header
 *					and data) whose key columns are NULL.
 *
 * Prefix.  An internal page's separators all start with the same
 * 'prefixlen' bytes, which they do not store.  The page keeps them once:
 * as the key of its minus-infinity downlink (which otherwise has none) when
 * that key is not empty, else as the first prefixlen bytes of its high key.
 * A split gives each half the longest prefix its separators share (and the
 * separator expected to come up into it next), kept in the high key when
 * that shares it -- for free -- or else in the minus-infinity downlink
 * when that saves more than the copy costs (ddb_half_prefix).  A separator
 * added later that shares less shrinks the prefix, the page being rewritten
 * with its separators longer, in the same WAL record as the insert.  Keys
 * that share long prefixes (a 2048-byte partition key, sort keys with a
 * long common stem) would otherwise leave room for one or two downlinks per
 * page, and the tree would grow tall.  prefixlen 0 is always valid, so
 * pages written before prefixes existed read the same.
 *
 * Leaf prefix.  Every item key on a leaf starts with the leaf's first
 * 'prefixlen' bytes, its prefix, and its items store their keys without
 * them (li->keylen is the stored length).  The prefix is kept once: as the
 * first prefixlen bytes of the high key when that starts with it (for
 * free), else as a copy right after the high key's key bytes, flagged
 * DDB_PAGE_PREFIX_COPY, which readers of the high key do not see (they
 * use its keylen).  ddb_leaf_prefix is the one reader of the bytes.
 * The rightmost leaf (no high key) and a deleted one have prefixlen 0.
 *
 * Storage version 3 ("B") makes the invariant one about the items
 * present: a split gives each half the prefix its items (and the key
 * about to go in) share, lcp of its first and last item key
 * (ddb_leaf_choose_prefix), so a partition's growing end, whose high key
 * lies in another partition, still stores its partition key once; an
 * insert of a key that shares less first shrinks the prefix to what it
 * shares, re-laying every item with its longer key in place
 * (ddb_leaf_relay; split first when they no longer fit); a full leaf
 * whose items share more than its prefix, when that frees an eighth of
 * it, takes their prefix instead of splitting (ddb_leaf_lengthen_prefix:
 * the half a split gives keys appended after its items is empty and
 * keeps the split leaf's); and nothing that
 * lowers a leaf's low bound (an unlink, "Long keys") has to look at it.
 * Version 2 (only the bulk build gave prefixes, "C") kept a stronger
 * invariant, about the key space: the prefix, always in the high key,
 * starts every key from the leaf's low bound up to its high key, so that
 * an earlier ddb inserting any key of the leaf's key space finds it
 * shared.  This ddb keeps that invariant on version 2 tables (their
 * splits keep the split leaf's prefix, unlinks check it) and writes
 * version 3 trees, whose bulk build gives each leaf its items' prefix as
 * a split does, kept in a copy when its high key lies beyond it
 * (ddb_build.c); version 2's build gave lcp(low bound, high key), which
 * satisfies both.  prefixlen 0 is always valid, and every leaf of a table
 * of storage version 1 has it, so those read unchanged.  Code that reads
 * a leaf item's key goes through ddb_leaf_prefix (or ddb_leaf_item_key and
 * the comparisons, which do); code that reads only its tuple or row id
 * (the visibility checks, WAL records of an item's bytes) is unaffected.
 * A search key that does not start with the prefix lies below or above
 * every item of the leaf (ddb_strip_leaf_prefix).
 *
 * Order.  Leaf items are ordered by their "item key": the encoded key
 * followed by the complement of the row id (6 bytes, big-endian), so that
 * several versions of one key sort side by side, newest (largest row id)
 * first as a rule, and every item key is unique.  Separators (internal keys
 * and high keys) are arbitrary byte strings compared with the same memcmp
 * order; a separator S between a left page L and right page R satisfies
 * every item key in L < S <= every item key in R.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DDB_PAGE_H
#define DDB_PAGE_H

#include "access/generic_xlog.h"
#include "access/htup_details.h"
#include "access/transam.h"
#include "storage/buf.h"
#include "storage/bufpage.h"
#include "storage/itemptr.h"
#include "utils/rel.h"

#define DDB_MAGIC			0x0DDB7AB1
#define DDB_VERSION			3	/* 2: leaves may have a prefix ("Leaf prefix");
								 * 3: the prefix of the items present */
#define DDB_VERSION_MIN		1	/* the oldest storage version this ddb reads */
#define DDB_METAPAGE_BLKNO	0
#define DDB_PAGE_ID			0xDDB1	/* last 2 bytes of special space */

/* Page flags */
#define DDB_PAGE_META		0x0001
#define DDB_PAGE_LEAF		0x0002
#define DDB_PAGE_INTERNAL	0x0004
#define DDB_PAGE_MAP_LEAF	0x0008	/* row-id map: entries (ddb_rowid.c) */
#define DDB_PAGE_MAP_DIR	0x0010	/* row-id map: directory */
#define DDB_PAGE_DELETED	0x0020	/* with DDB_PAGE_LEAF: an unlinked leaf;
										 * with DDB_PAGE_MAP_LEAF: a freed map
										 * leaf (ddb_rowid.c) */
#define DDB_PAGE_MAP_INDEXED 0x0040 /* a map leaf whose 'right' holds its
									 * index (ddb_rowid.c) */
#define DDB_PAGE_PREFIX_COPY 0x0080 /* a leaf whose prefix follows its high
									 * key's key bytes ("Leaf prefix") */

typedef struct DdbPageOpaqueData
{
	BlockNumber right;			/* right sibling, or InvalidBlockNumber; a map
								 * leaf with DDB_PAGE_MAP_INDEXED keeps its
								 * index here (ddb_rowid.c) */
	uint16		level;			/* 0 for leaves */
	uint16		flags;
	uint16		prefixlen;		/* see "Prefix" and "Leaf prefix" above */
	uint16		page_id;		/* DDB_PAGE_ID, for tools like pg_filedump */
} DdbPageOpaqueData;

typedef DdbPageOpaqueData *DdbPageOpaque;

#define DdbPageGetOpaque(page) ((DdbPageOpaque) PageGetSpecialPointer(page))
#define DdbPageIsLeaf(page)		((DdbPageGetOpaque(page)->flags & DDB_PAGE_LEAF) != 0)
#define DdbPageIsRightmost(page) (DdbPageGetOpaque(page)->right == InvalidBlockNumber)
#define DdbPageIsDeleted(page)	((DdbPageGetOpaque(page)->flags & DDB_PAGE_DELETED) != 0)
#define DDB_HIKEY				((OffsetNumber) 1)
#define DdbPageFirstData(page)	(DdbPageIsRightmost(page) ? (OffsetNumber) 1 : (OffsetNumber) 2)

/* The metapage contents, stored right after the page header. */
typedef struct DdbMetaPageData
{
	uint32		magic;
	uint32		version;
	BlockNumber root;			/* root of the item tree */
	uint32		height;			/* levels; a lone root leaf is height 1 */
	uint64		next_rowid;		/* next row id batch starts here */
	BlockNumber map_root;		/* root of the row-id map (ddb_rowid.c) */
	uint32		map_levels;		/* its height; 0 = no map yet */
} DdbMetaPageData;

#define DdbPageGetMeta(page) ((DdbMetaPageData *) PageGetContents(page))

/* Internal item and high key. */
typedef struct DdbKeyItemData
{
	BlockNumber child;
	uint16		keylen;
	char		key[FLEXIBLE_ARRAY_MEMBER];
} DdbKeyItemData;

typedef DdbKeyItemData *DdbKeyItem;

#define DdbKeyItemSize(keylen)	(offsetof(DdbKeyItemData, key) + (keylen))

/*
 * Item 1 of a deleted leaf (ddb_tree.c, "Unlinking empty leaves"): shaped
 * as an empty high key, so that code reading it as one finds a key space
 * below every key and moves right, followed by the next full transaction
 * id at the time of the deletion.
 */
typedef struct DdbDeletedItemData
{
	BlockNumber child;			/* InvalidBlockNumber */
	uint16		keylen;			/* 0 */
	uint16		pad;
	FullTransactionId safexid;
} DdbDeletedItemData;

/* The safexid of a deleted leaf. */
static inline FullTransactionId
ddb_deleted_safexid(Page page)
{
	DdbDeletedItemData d;

	memcpy(&d, PageGetItem(page, PageGetItemId(page, DDB_HIKEY)), sizeof(d));
	return d.safexid;
}

/* Does byte string s (slen bytes) start with prefix (plen bytes)? */
static inline bool
ddb_starts_with(const char *s, int slen, const char *prefix, int plen)
{
	return slen >= plen && memcmp(s, prefix, plen) == 0;
}

/*
 * A leaf's prefix ("Leaf prefix" above): its length, and in *prefix its
 * bytes -- the high key's first ones, or the copy after the high key's key
 * bytes (DDB_PAGE_PREFIX_COPY) -- (NULL when the length is 0).
 */
static inline int
ddb_leaf_prefix(Page page, const char **prefix)
{
	int			len = DdbPageGetOpaque(page)->prefixlen;
	DdbKeyItem	hk;

	if (len == 0)
	{
		*prefix = NULL;
		return 0;
	}
	hk = (DdbKeyItem) PageGetItem(page, PageGetItemId(page, DDB_HIKEY));
	*prefix = (DdbPageGetOpaque(page)->flags & DDB_PAGE_PREFIX_COPY) ?
		hk->key + hk->keylen : hk->key;
	return len;
}

/*
 * How a Generic WAL record registers a leaf whose items its change moves:
 * whole, as the replica's copy may differ from the primary's in the bytes
 * that moved (ddb_wal.c, "Generic WAL and fields that differ").
 */
#define DDB_GENERIC_ITEMS_MOVE	GENERIC_XLOG_FULL_IMAGE

/* Leaf item header; the stored heap tuple follows at DdbLeafTupleOffset. */
typedef struct DdbLeafItemData
{
	ItemPointerData tid;		/* this version's row id as a TID */
	uint16		keylen;
	char		key[FLEXIBLE_ARRAY_MEMBER];
} DdbLeafItemData;

typedef DdbLeafItemData *DdbLeafItem;

#define DdbLeafTupleOffset(keylen) MAXALIGN(offsetof(DdbLeafItemData, key) + (keylen))
#define DdbLeafItemGetTuple(li)	((HeapTupleHeader) ((char *) (li) + DdbLeafTupleOffset((li)->keylen)))

/*
 * The size of leaf item 'li' (of 'size' bytes) with its stored key 'delta'
 * bytes longer (negative: shorter), as under a prefix that many bytes
 * shorter ("Leaf prefix" above): its tuple moves with the key's end.
 * ddb_leaf_size_resized: the same for an item of a key of keylen bytes
 * not yet built (a batch's run, sized by its keys).
 */
static inline Size
ddb_leaf_size_resized(int keylen, Size size, int delta)
{
	return DdbLeafTupleOffset(keylen + delta) + (size - DdbLeafTupleOffset(keylen));
}

static inline Size
ddb_leaf_item_resized(DdbLeafItem li, Size size, int delta)
{
	return ddb_leaf_size_resized(li->keylen, size, delta);
}

/* Is the page a row-id map leaf that VACUUM freed (ddb_rowid.c)? */
static inline bool
ddb_page_is_freed_map_leaf(Page page)
{
	uint16		flags = DdbPageGetOpaque(page)->flags;

	return !PageIsNew(page) && DdbPageGetOpaque(page)->page_id == DDB_PAGE_ID &&
		(flags & DDB_PAGE_MAP_LEAF) && (flags & DDB_PAGE_DELETED);
}

/* A page read by a block number that may be stale: is it one of our leaves? */
static inline bool
ddb_page_is_tree_leaf(Page page)
{
	return !PageIsNew(page) && DdbPageGetOpaque(page)->page_id == DDB_PAGE_ID &&
		DdbPageIsLeaf(page) && !DdbPageIsDeleted(page);
}

/* Is leaf item 'o' the version with row id 'tid'? */
static inline bool
ddb_leaf_has_rowid(Page page, OffsetNumber o, ItemPointer tid)
{
	DdbLeafItem li = (DdbLeafItem) PageGetItem(page, PageGetItemId(page, o));

	return memcmp(&li->tid, tid, sizeof(ItemPointerData)) == 0;
}

/*
 * The offset of the version with row id 'tid' on a leaf, or 0 (none).
 * 'hint' (or InvalidOffsetNumber) is where the caller last saw it: looked
 * at first, so that finding it again touches one item, not every item
 * header before it on the page -- each its own cache line, and a leaf's
 * first read misses them all.  A row id names one version, so a match
 * there is that version wherever items have moved since.
 */
static inline OffsetNumber
ddb_leaf_find_rowid(Page page, ItemPointer tid, OffsetNumber hint)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);

	if (hint >= DdbPageFirstData(page) && hint <= maxoff &&
		ddb_leaf_has_rowid(page, hint, tid))
		return hint;
	for (OffsetNumber o = DdbPageFirstData(page); o <= maxoff; o++)
	{
		if (ddb_leaf_has_rowid(page, o, tid))
			return o;
	}
	return InvalidOffsetNumber;
}

/*
 * Point htup at leaf item 'off' of a locked page: the heap-format tuple as
 * the visibility routines want it.  Returns the leaf item.
 */
static inline DdbLeafItem
ddb_leaf_htup(Relation rel, Page page, OffsetNumber off, HeapTuple htup)
{
	ItemId		iid = PageGetItemId(page, off);
	DdbLeafItem li = (DdbLeafItem) PageGetItem(page, iid);

	htup->t_data = DdbLeafItemGetTuple(li);
	htup->t_len = ItemIdGetLength(iid) - DdbLeafTupleOffset(li->keylen);
	htup->t_self = li->tid;
	htup->t_tableOid = RelationGetRelid(rel);
	return li;
}

/* Length of the version suffix appended to a key to make an item key. */
#define DDB_SUFFIX_LEN		6

/*
 * Size limits.  The longest encoded key covers DynamoDB's largest text keys
 * (4 + 2048 + 2 + 1024 + 2 = 3080 bytes).  A separator is at most a key plus
 * the version suffix.  A leaf item must fit on a page next to the largest
 * high key, so that a split can always put it on a page of its own; an
 * internal page then holds at least two downlinks and a high key.
 */
#define DDB_PAGE_CAPACITY \
	(BLCKSZ - MAXALIGN(SizeOfPageHeaderData) - MAXALIGN(sizeof(DdbPageOpaqueData)))
#define DDB_MAX_KEY_LEN		3200
#define DDB_MAX_SEP_LEN		(DDB_MAX_KEY_LEN + DDB_SUFFIX_LEN)
#define DDB_MAX_ITEM_SIZE \
	(DDB_PAGE_CAPACITY - MAXALIGN(offsetof(DdbKeyItemData, key) + DDB_MAX_SEP_LEN) - \
	 2 * sizeof(ItemIdData))

/* On-page size of a key item (downlink or high key) with a key of keylen. */
static inline Size
ddb_key_item_size(int keylen)
{
	return MAXALIGN(DdbKeyItemSize(keylen)) + sizeof(ItemIdData);
}

/* ddb_tree.c: comparisons and page helpers shared with scan, verify, build */
extern int	ddb_common_prefix(const char *a, int alen, const char *b, int blen);
extern int	ddb_truncated_separator(const char *left, int leftlen, const char *right,
									int rightlen);
extern int	ddb_item_key(const char *key, int keylen, ItemPointer tid, char *buf);
extern void ddb_leaf_item_key(Page page, DdbLeafItem li, char *buf, int *len);
extern const char *ddb_leaf_key(Page page, DdbLeafItem li, char *buf, int *len);
extern HeapTuple ddb_expand_leaf(Relation rel, Page page, DdbLeafItem li,
								 HeapTupleHeader t, uint32 len);
extern int	ddb_strip_leaf_prefix(Page page, const char **key, int *keylen);
extern int	ddb_compare_stored(const char *key, int keylen, DdbLeafItem li);
extern int	ddb_compare_leaf(Page page, const char *key, int keylen, DdbLeafItem li);
extern int	ddb_compare_leaf_keypart(Page page, const char *key, int keylen, DdbLeafItem li);
extern DdbLeafItem ddb_leaf_item_for(Relation rel, Buffer buf, DdbLeafItem item,
									 Size itemsize, Size *size);
extern DdbMetaPageData *ddb_meta_read(Relation rel, DdbMetaPageData *copy);
extern void ddb_check_leaf(Relation rel, Buffer buf);
extern Buffer ddb_leaf_step(Relation rel, BlockNumber blkno, int mode);
extern bool ddb_page_is_recyclable(Page page);
extern Buffer ddb_descend(Relation rel, const char *key, int keylen, bool strict,
						  int access, char **lowkey, int *lowkeylen);
extern OffsetNumber ddb_leaf_search(Page page, const char *key, int keylen,
									bool strict);
extern void ddb_page_replace(Page page, Page tmp);
extern void ddb_unlink_parent(Page page, OffsetNumber off, BlockNumber right);
extern void ddb_unlink_pages(Page q, OffsetNumber off, Page p, Page l, BlockNumber right,
							 FullTransactionId safexid);
extern void ddb_page_set_deleted(Page page, uint16 kind, BlockNumber right,
								 FullTransactionId safexid);
extern void ddb_split_leaf_left(Page page, int nleft, const char *sep, int seplen,
								BlockNumber rblkno, int plen);
extern void ddb_split_leaf_right(Page page, Page src, int nleft, int plen, const char *prefix);
extern uint16 *ddb_split_leaf_right_lens(Page page, Size *len);
extern void ddb_leaf_relay(Page page, int newplen);
extern void ddb_split_leaf_right_redo(Page page, uint16 flags, BlockNumber right,
									  uint16 prefixlen, const char *data, bool inpage);
extern void ddb_split_parent(Page page, OffsetNumber off, BlockNumber rblkno,
							 const char *sep, int seplen, int newpp);
extern int	ddb_half_prefix(char **key, int *keylen, int lo, int hi,
							const char *hk, int hklen, const char *pred, int predlen,
							bool *infirst, const char **bytes);

/* ddb_tree.c: VACUUM's walk over the leaves by their parents */
typedef struct DdbLeafWalk
{
	BlockNumber parent;			/* the level-1 page to read next */
	char	   *next;			/* where the next leaf's key space begins
								 * (NULL: minus infinity) */
	int			nextlen;
	bool		done;
	struct DdbBlockSet *seen;	/* gets the level-1 pages read (or NULL) */
} DdbLeafWalk;

extern bool ddb_leaf_walk_start(Relation rel, DdbLeafWalk *w, struct DdbBlockSet *seen);
extern BlockNumber ddb_leaf_walk_next(Relation rel, DdbLeafWalk *w,
									  BufferAccessStrategy bstrategy,
									  bool (*skip) (Relation, BlockNumber, void *),
									  void *arg, Buffer *buf);

/* ddb_vismap.c: the leaves VACUUM may skip */
extern bool ddb_vm_is_set(Relation rel, BlockNumber blkno, Buffer *vmbuf);
extern void ddb_vm_clear(Relation rel, Buffer buf);
extern void ddb_vm_set(Relation rel, Buffer buf, Buffer *vmbuf);
extern void ddb_vm_clear_redo(RelFileNode rnode, BlockNumber blkno);
extern void ddb_vm_create(Relation rel);
#ifdef DDB_CHECKS
extern bool ddb_check_tree_without_map;	/* ddb.check_tree_without_map */
#endif
extern void ddb_vm_extend(Relation rel, BlockNumber nblocks, Buffer *vmbuf);
extern void ddb_wal_vm_clear(Relation rel, BlockNumber blkno);
extern void ddb_wal_vm_set(Relation rel, Buffer vmbuf, BlockNumber blkno);
extern void ddb_vm_set_in_page(Page page, BlockNumber blkno);

#endif							/* DDB_PAGE_H */
