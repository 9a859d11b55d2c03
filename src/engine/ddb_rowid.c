/*-------------------------------------------------------------------------
 *
 * ddb_rowid.c
 *	  The row-id map: from a version's row id (its TID) to the leaf where it
 *	  lives.
 *
 * PostgreSQL names rows by TID, and a TID must keep naming one version for
 * as long as a transaction that saw it lives.  ddb items move right when
 * leaves split, so a TID cannot be a physical position.  Each version gets
 * a logical row id instead (ddb_alloc_rowid), and this map records, per row
 * id, the leaf block where the version was written and the hash32 of its
 * partition key.
 *
 * Row ids are handed out densely from a counter, so the map is not a
 * general B+tree but a radix tree over the row id, in the same fork as the
 * items (DESIGN.md sketches a B+tree; a radix tree is the same thing for
 * dense integer keys, with no splits and a fixed depth):
 *
 *	 map leaf page:			DdbMapEntry[DDB_MAP_LEAF_ENTRIES]
 *	 map directory page:	BlockNumber[DDB_MAP_DIR_ENTRIES]
 *
 * stored right after the page header.  A directory's pd_lower covers its
 * whole array; a leaf's covers its entries up to the highest slot ever
 * written (map_leaf_cover), and the zeroes after it are the page's hole.
 * Row ids are handed out in increasing order, so a leaf fills from its
 * start, and Generic WAL, which copies and compares a registered page
 * except its hole, then compares only the part in use instead of 8 kB per
 * record: the map's record is one per writing transaction.  Full-page
 * images drop the hole, as they would any.  Readers need no change: a slot
 * in the hole reads as zero, "no entry" (pages written before this kept
 * their whole array below pd_lower, and read the same).  The metapage holds the root and the number of
 * levels; the tree grows a level at the top when row ids outgrow it.  A
 * zero block number means "no entry" (block 0 is the metapage).
 *
 * Entries of new versions are deferred: a backend collects them and writes
 * them in batches, one WAL record per map page, before its transaction
 * commits or prepares (and before it resolves a TID of that relation
 * itself, and before a table rewrite swaps in or copies the file they
 * belong to: ddb_finish_bulk_insert, ddb_relation_copy_data).  Entries are
 * kept by file: those of a file the relation no longer has are dropped at
 * commit; those of a subtransaction are dropped when it aborts (its
 * versions may be pruned before the commit writes them).  Only committed
 * versions must be reachable through the map, and
 * a crash before commit loses only entries of versions that died with their
 * transaction.  This turns a WAL record per insert into one per thousand.
 * A backend remembers the map leaf it wrote last (map_leaf_for_write), so
 * a small batch, the usual one of a single-row transaction, reads only
 * that page.
 * A batch is never written under a leaf lock (writing opens relations and
 * locks map pages): entries are recorded after the leaf is released, or,
 * by the one caller that records one under the lock (an update beside its
 * old version, with Generic WAL), after ddb_map_make_room made room before
 * the leaf was locked.
 *
 * With ddb's own WAL a single writer defers nothing (ddb_wal_map_in_record;
 * but for the test-only ddb.check_wal_legacy, which writes as earlier
 * versions did): an insert (ddb_tree_insert_at) or an update beside its old
 * version (ddb_tree_insert_beside) sets its version's entry in its own
 * record, the map leaf being the record's second block (ddb_wal_leaf_add,
 * ddb_wal_leaf_update), which costs a block reference, the hash and for an
 * insert the slot, 12 or 14 bytes, where a map record of its own costs 56
 * -- most of what a single-row transaction wrote for its entry.  The map
 * leaf is found before any tree page is locked (ddb_map_pin_leaf) and
 * locked after the leaf, the one case of a map page locked under a tree
 * page (rule 1 of ddb_tree.c's header says why that is safe).  In a
 * transaction of many writes a deferred batch would log the same 12 bytes
 * an entry, so little is lost by not batching them; a batch of new keys
 * (ddb_tree_insert_multi: COPY's row path, BatchWriteItem) still defers
 * its entries.  A prune's cleared entries are logged as their slots alone
 * (ddb_wal_map_clear).
 *
 * Resolving a TID: read the entry, read that leaf, look for the row id, and
 * follow right-links while the leaves can still hold keys of the entry's
 * hash (a version only ever moves right, and pages are never merged).  A
 * stale hint is repaired lazily, and a wrong one (a page that is not a
 * leaf, or right of the version) falls back to a descent to the first leaf
 * of the hash.  Wrong ones are ordinary: an entry keeps naming the leaf its
 * version was written on, which VACUUM may since have unlinked (a deleted
 * page is not a leaf here) and a split reused as any kind of page; the
 * walk from it only ever accepts the version's own row id, which is
 * unique, so a reused page costs the fallback and nothing else.  Nor is a
 * walk from a hint let cross more than a couple of leaves wholly left of
 * the hash's key space (DDB_HINT_LEFT_STEPS): from a page reused for keys
 * far left, it would lead across every partition in between.  The
 * version is written before its map entry (or in the same record), so a
 * crash never leaves an entry without a version; VACUUM and prunes clear
 * the entries of versions they remove.
 *
 * Freeing.  A version written costs its 8-byte entry for good unless the
 * leaf holding it goes: VACUUM frees the map leaves whose entries are all
 * cleared and whose row ids were all handed out (ddb_map_free_empty, under
 * "Freeing empty leaves"), clearing the directory's slot and turning the
 * leaf into a deleted page that splits reuse like an unlinked tree leaf,
 * but at once (no safexid to wait out, no standby conflict).
 * A row id of a freed leaf's range that is written later (a backend's
 * batch, a deferred entry) gets a new leaf through the directory.  A map
 * leaf's block number read before its lock -- from a directory released
 * first, from the relcache -- is checked under the lock: each leaf keeps
 * its index in its special space (map_leaf_is).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "storage/bufmgr.h"
#include "commands/vacuum.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "ddb.h"
#include "engine/ddb_page.h"

typedef struct DdbMapEntry
{
	BlockNumber block;			/* leaf where the version was written; 0 = none */
	uint32		hash;			/* hash32 of the version's partition key */
} DdbMapEntry;

#define DDB_MAP_LEAF_ENTRIES	((int) (DDB_PAGE_CAPACITY / sizeof(DdbMapEntry)))
#define DDB_MAP_DIR_ENTRIES		((int) (DDB_PAGE_CAPACITY / sizeof(BlockNumber)))

/* Row ids covered by a map subtree of 'levels' levels. */
static uint64
map_capacity(int levels)
{
	uint64		cap = DDB_MAP_LEAF_ENTRIES;

	if (levels <= 0)
		return 0;
	for (int l = 1; l < levels; l++)
		cap *= DDB_MAP_DIR_ENTRIES;
	return cap;
}

/* The index of the map leaf that holds rowid's entry. */
static inline uint64
map_leaf_index(uint64 rowid)
{
	return rowid / DDB_MAP_LEAF_ENTRIES;
}

/* The row ids one map leaf covers (ddb_alloc_rowid aligns batches to them). */
uint64
ddb_map_leaf_rowids(void)
{
	return DDB_MAP_LEAF_ENTRIES;
}

/*
 * A map leaf keeps its index (the low 32 bits) in the special space's
 * right-link, which map pages do not otherwise use, flagged
 * DDB_PAGE_MAP_INDEXED; leaves written before leaves were freed have
 * neither.  'index' is ignored for a directory.
 */
static void
map_init_page(Page page, bool leaf, uint64 index)
{
	Size		arraysz = leaf ? sizeof(DdbMapEntry) * DDB_MAP_LEAF_ENTRIES :
		sizeof(BlockNumber) * DDB_MAP_DIR_ENTRIES;
	DdbPageOpaque op;

	PageInit(page, BLCKSZ, sizeof(DdbPageOpaqueData));
	op = DdbPageGetOpaque(page);
	op->right = leaf ? (BlockNumber) (uint32) index : InvalidBlockNumber;
	op->level = 0;
	op->flags = leaf ? DDB_PAGE_MAP_LEAF | DDB_PAGE_MAP_INDEXED : DDB_PAGE_MAP_DIR;
	op->page_id = DDB_PAGE_ID;
	memset(PageGetContents(page), 0, arraysz);
	/* a leaf starts with all of its array in the hole: see the header */
	((PageHeader) page)->pd_lower = (PageGetContents(page) + (leaf ? 0 : arraysz)) - (char *) page;
}

/*
 * Make a map leaf's pd_lower cover 'slot' before the slot is written (the
 * hole above pd_lower is zeroed by GenericXLogFinish and dropped from
 * full-page images).  'page' is the registered copy.
 */
static inline void
map_leaf_cover(Page page, int slot)
{
	LocationIndex end = (PageGetContents(page) + sizeof(DdbMapEntry) * (slot + 1)) - (char *) page;

	if (((PageHeader) page)->pd_lower < end)
		((PageHeader) page)->pd_lower = end;
}

/*
 * Set slot 'slot' of a map leaf (block 0 clears it), covering it with
 * pd_lower first.  Shared with redo (ddb_wal.c).
 */
void
ddb_map_apply(Page page, int slot, BlockNumber block, uint32 hash)
{
	DdbMapEntry *e = &((DdbMapEntry *) PageGetContents(page))[slot];

	map_leaf_cover(page, slot);
	e->block = block;
	e->hash = hash;
}

/*
 * The slots a map leaf's pd_lower covers (see map_leaf_cover): those above
 * are in the hole, and zero.
 */
static int
map_leaf_nslots(Page page)
{
	int			n = (((PageHeader) page)->pd_lower - (PageGetContents(page) - (char *) page)) /
		sizeof(DdbMapEntry);

	return Min(n, DDB_MAP_LEAF_ENTRIES);
}

/*
 * Before a Generic WAL record sets slot 'slot' of the exclusively locked
 * map leaf 'page' to 'block' (0: clears it): give the slot a block that
 * differs from 'block' in every byte, so that the record logs all of them,
 * for a replica's block may differ from this one (map_repair; ddb_wal.c,
 * "Generic WAL and fields that differ").  Not WAL-logged itself: the record
 * that follows under the same lock overwrites it, and should it not, the
 * slot holds a block no leaf has, which ddb_find_version takes as any
 * stale hint.  A slot above pd_lower is in the hole, logged whole anyway.
 * A clear slot is left as it is: it is being set for the first time (row
 * ids are never reused in a file), and map_repair rewrites only set
 * entries, so the replica's is clear too -- unless a Generic clear from
 * before this rule left it set there, an orphan that stays (its leaf is
 * then never freed), harmless to lookups, which check what they find.
 */
void
ddb_map_unmatch(Page page, int slot, BlockNumber block)
{
	DdbMapEntry *e = &((DdbMapEntry *) PageGetContents(page))[slot];

	if (slot < map_leaf_nslots(page) && e->block != 0)
		e->block = ~block;
}

/*
 * wal_consistency_checking (ddb_wal.c): an entry's block is a hint that
 * map_repair changes without WAL, so only whether a slot is set is
 * compared, and its hash.
 */
void
ddb_map_mask(Page page)
{
	DdbMapEntry *e = (DdbMapEntry *) PageGetContents(page);
	int			n = map_leaf_nslots(page);

	for (int i = 0; i < n; i++)
		if (e[i].block != 0)
			e[i].block = 1;
}

static void
map_check_page(Relation rel, Buffer buf, uint16 flag)
{
	Page		page = BufferGetPage(buf);

	if (PageIsNew(page) || DdbPageGetOpaque(page)->page_id != DDB_PAGE_ID ||
		!(DdbPageGetOpaque(page)->flags & flag) || DdbPageIsDeleted(page))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg_internal("ddb table \"%s\": block %u is not a row-id map page",
								 RelationGetRelationName(rel), BufferGetBlockNumber(buf))));
}

/* Is 'page' a map leaf VACUUM has not freed? */
static inline bool
map_leaf_live(Page page)
{
	return !PageIsNew(page) && DdbPageGetOpaque(page)->page_id == DDB_PAGE_ID &&
		(DdbPageGetOpaque(page)->flags & (DDB_PAGE_MAP_LEAF | DDB_PAGE_DELETED)) == DDB_PAGE_MAP_LEAF;
}

/*
 * Is 'page' the live map leaf of index 'index'?  Not if VACUUM freed it
 * (ddb_map_free_empty) or a split reused it since its number was read: a
 * block number from a directory released before the leaf was locked, or
 * from the relcache (DdbRelCache.map_leaf), is checked with this under
 * the leaf's lock.  A leaf written before leaves had indexes is never
 * reused as one (new map leaves always have one), so a live unindexed map
 * leaf is still the leaf its number named.
 */
static bool
map_leaf_is(Page page, uint64 index)
{
	return map_leaf_live(page) &&
		(!(DdbPageGetOpaque(page)->flags & DDB_PAGE_MAP_INDEXED) ||
		 DdbPageGetOpaque(page)->right == (BlockNumber) (uint32) index);
}

/*
 * Does slot idx of directory 'dir' still name 'child'?  (InvalidBlockNumber
 * for 'dir': is 'child' the root of a one-level map?)
 */
static bool
map_still_names(Relation rel, BlockNumber dir, int idx, BlockNumber child)
{
	Buffer		buf;
	bool		names;

	if (!BlockNumberIsValid(dir))
	{
		DdbMetaPageData meta;

		ddb_meta_read(rel, &meta);
		return meta.map_levels == 1 && meta.map_root == child;
	}
	buf = ReadBuffer(rel, dir);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	map_check_page(rel, buf, DDB_PAGE_MAP_DIR);
	names = ((BlockNumber *) PageGetContents(BufferGetPage(buf)))[idx] == child;
	UnlockReleaseBuffer(buf);
	return names;
}

/*
 * Make the map tall enough for rowid; returns the root and levels.
 */
static void
map_ensure_height(Relation rel, uint64 rowid, BlockNumber *root, int *levels)
{
	for (;;)
	{
		Buffer		metabuf = ReadBuffer(rel, DDB_METAPAGE_BLKNO);
		DdbMetaPageData *md;
		Buffer		newbuf;
		GenericXLogState *state;
		Page		mpage,
					npage;

		LockBuffer(metabuf, BUFFER_LOCK_SHARE);
		md = DdbPageGetMeta(BufferGetPage(metabuf));
		if (md->map_levels > 0 && rowid < map_capacity(md->map_levels))
		{
			*root = md->map_root;
			*levels = md->map_levels;
			UnlockReleaseBuffer(metabuf);
			return;
		}
		LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);

		/* Grow by one level: a new root above the old one. */
		newbuf = ddb_new_buffer(rel);
		LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
		md = DdbPageGetMeta(BufferGetPage(metabuf));
		if (md->map_levels > 0 && rowid < map_capacity(md->map_levels))
		{
			/*
			 * Someone else grew it.  The new page stays unused (all zeroes,
			 * which ddb_verify accepts as a page a crash left behind).
			 */
			UnlockReleaseBuffer(newbuf);
			UnlockReleaseBuffer(metabuf);
			continue;
		}
		state = GenericXLogStart(rel);
		mpage = GenericXLogRegisterBuffer(state, metabuf, 0);
		npage = GenericXLogRegisterBuffer(state, newbuf, GENERIC_XLOG_FULL_IMAGE);
		md = DdbPageGetMeta(mpage);
		map_init_page(npage, md->map_levels == 0, 0);
		if (md->map_levels > 0)
			((BlockNumber *) PageGetContents(npage))[0] = md->map_root;
		md->map_root = BufferGetBlockNumber(newbuf);
		md->map_levels++;
		GenericXLogFinish(state);
		UnlockReleaseBuffer(newbuf);
		UnlockReleaseBuffer(metabuf);
	}
}

/*
 * Descend to the map leaf holding rowid.  With create, missing directory
 * children are allocated; without, returns InvalidBuffer when there is no
 * leaf.  The leaf is returned locked in 'mode'.
 *
 * The directory is released before the leaf is locked, so the leaf may
 * have been freed meanwhile (ddb_map_free_empty), and its page even
 * reused: then the descent starts again, finding no leaf, or the one made
 * since.  A directory that still names a page that is not its leaf is
 * corrupt.
 */
static Buffer
map_leaf(Relation rel, uint64 rowid, bool create, int mode, int *slot)
{
	for (;;)
	{
		BlockNumber blkno;
		int			levels;
		BlockNumber parent = InvalidBlockNumber;
		int			parent_idx = 0;
		Buffer		buf;

		if (create)
			map_ensure_height(rel, rowid, &blkno, &levels);
		else
		{
			DdbMetaPageData meta;

			ddb_meta_read(rel, &meta);
			if (meta.map_levels == 0 || rowid >= map_capacity(meta.map_levels))
				return InvalidBuffer;
			blkno = meta.map_root;
			levels = meta.map_levels;
		}

		for (int level = levels; level > 1; level--)
		{
			uint64		below = map_capacity(level - 1);
			int			idx = (int) ((rowid / below) % DDB_MAP_DIR_ENTRIES);
			BlockNumber child;

			buf = ReadBuffer(rel, blkno);
			LockBuffer(buf, BUFFER_LOCK_SHARE);
			map_check_page(rel, buf, DDB_PAGE_MAP_DIR);
			child = ((BlockNumber *) PageGetContents(BufferGetPage(buf)))[idx];
			if (child == 0 && create)
			{
				Buffer		newbuf;

				LockBuffer(buf, BUFFER_LOCK_UNLOCK);
				newbuf = ddb_new_buffer(rel);
				LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
				child = ((BlockNumber *) PageGetContents(BufferGetPage(buf)))[idx];
				if (child == 0)
				{
					GenericXLogState *state = GenericXLogStart(rel);
					Page		dpage = GenericXLogRegisterBuffer(state, buf, 0);
					Page		npage = GenericXLogRegisterBuffer(state, newbuf, GENERIC_XLOG_FULL_IMAGE);

					map_init_page(npage, level - 1 == 1, map_leaf_index(rowid));
					((BlockNumber *) PageGetContents(dpage))[idx] = BufferGetBlockNumber(newbuf);
					GenericXLogFinish(state);
					child = BufferGetBlockNumber(newbuf);
				}
				UnlockReleaseBuffer(newbuf);
			}
			UnlockReleaseBuffer(buf);
			if (child == 0)
				return InvalidBuffer;
			parent = blkno;
			parent_idx = idx;
			blkno = child;
		}

		buf = ReadBuffer(rel, blkno);
		LockBuffer(buf, mode);
		if (map_leaf_is(BufferGetPage(buf), map_leaf_index(rowid)))
		{
			*slot = (int) (rowid % DDB_MAP_LEAF_ENTRIES);
			return buf;
		}
		UnlockReleaseBuffer(buf);
		if (map_still_names(rel, parent, parent_idx, blkno))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg_internal("ddb table \"%s\": block %u is not the row-id map leaf its directory names",
									 RelationGetRelationName(rel), blkno)));
	}
}

static int
rowid_cmp(const void *a, const void *b)
{
	uint64		ra = ddb_tid_to_rowid((ItemPointer) a);
	uint64		rb = ddb_tid_to_rowid((ItemPointer) b);

	return ra < rb ? -1 : ra > rb ? 1 : 0;
}

/*
 * Clear the map entries of n removed versions (a prune's or VACUUM's; tids
 * is sorted here), one WAL record per map leaf rather than one per version:
 * the versions a prune removes from one leaf were written close together,
 * so their row ids usually share a map leaf.
 */
void
ddb_map_clear(Relation rel, ItemPointerData *tids, int n)
{
	uint16	   *slots;
	int			i = 0;

	if (n == 0)
		return;
	qsort(tids, n, sizeof(ItemPointerData), rowid_cmp);
	slots = palloc(sizeof(uint16) * n);
	while (i < n)
	{
		int			start = i;
		int			slot;
		Buffer		buf = map_leaf(rel, ddb_tid_to_rowid(&tids[i]), false,
								   BUFFER_LOCK_EXCLUSIVE, &slot);
		int			nslots = 0;

		for (; i < n && ddb_map_same_leaf(&tids[i], &tids[start]); i++)
			slots[nslots++] = (uint16) ddb_map_slot(&tids[i]);
		if (!BufferIsValid(buf))
			continue;			/* entries that were never set */
		ddb_wal_map_clear(rel, buf, slots, nslots);
		UnlockReleaseBuffer(buf);
	}
	pfree(slots);
}

/* ------------------------------------------------------------------------
 * Freeing empty leaves
 * ------------------------------------------------------------------------
 */

/* Are all of a map leaf's entries cleared? */
static bool
map_leaf_empty(Page page)
{
	DdbMapEntry *e = (DdbMapEntry *) PageGetContents(page);
	int			n = map_leaf_nslots(page);

	for (int i = 0; i < n; i++)
		if (e[i].block != 0)
			return false;
	return true;
}

/*
 * Free map leaf 'leafblk', slot 'idx' of directory 'dirblk', if it is
 * still that leaf and all its entries are cleared: the directory's slot
 * is cleared and the leaf becomes a deleted page (a deleted leaf's layout,
 * flagged as a map leaf, with no right-link), in one record.  The
 * directory is locked first, then the leaf with a cleanup lock, taken
 * only if nobody else holds a pin on it: a writer between
 * ddb_map_pin_leaf and its record keeps its pin.  Anyone else who reads
 * the leaf's number (from the directory, or from its relcache) checks the
 * page under its lock (map_leaf_is) and looks again.
 */
static bool
map_free_leaf(Relation rel, BlockNumber dirblk, int idx, BlockNumber leafblk,
			  uint64 index, BufferAccessStrategy bstrategy, DdbBlockSet *seen)
{
	Buffer		dbuf;
	Buffer		lbuf;
	bool		freed = false;

	/* a look first, so that leaves in use cost no exclusive lock */
	lbuf = ReadBufferExtended(rel, MAIN_FORKNUM, leafblk, RBM_NORMAL, bstrategy);
	LockBuffer(lbuf, BUFFER_LOCK_SHARE);
	if (!map_leaf_is(BufferGetPage(lbuf), index) || !map_leaf_empty(BufferGetPage(lbuf)))
	{
		/* a leaf in use, which VACUUM's free-page pass need not read again */
		if (map_leaf_is(BufferGetPage(lbuf), index))
			ddb_block_set_add(seen, leafblk);
		UnlockReleaseBuffer(lbuf);
		return false;
	}
	LockBuffer(lbuf, BUFFER_LOCK_UNLOCK);

	dbuf = ReadBufferExtended(rel, MAIN_FORKNUM, dirblk, RBM_NORMAL, bstrategy);
	LockBuffer(dbuf, BUFFER_LOCK_EXCLUSIVE);
	map_check_page(rel, dbuf, DDB_PAGE_MAP_DIR);
	if (((BlockNumber *) PageGetContents(BufferGetPage(dbuf)))[idx] == leafblk &&
		ConditionalLockBufferForCleanup(lbuf))
	{
		if (map_leaf_is(BufferGetPage(lbuf), index) && map_leaf_empty(BufferGetPage(lbuf)))
		{
			GenericXLogState *state = GenericXLogStart(rel);
			Page		dpage = GenericXLogRegisterBuffer(state, dbuf, 0);
			Page		lpage = GenericXLogRegisterBuffer(state, lbuf, GENERIC_XLOG_FULL_IMAGE);

			((BlockNumber *) PageGetContents(dpage))[idx] = 0;
			ddb_page_set_deleted(lpage, DDB_PAGE_MAP_LEAF, InvalidBlockNumber,
								 ReadNextFullTransactionId());
			GenericXLogFinish(state);
			freed = true;
		}
		LockBuffer(lbuf, BUFFER_LOCK_UNLOCK);
	}
	ReleaseBuffer(lbuf);
	UnlockReleaseBuffer(dbuf);
	return freed;
}

/* ddb_map_free_empty below directory 'dirblk' at 'level', whose first row id is 'first'. */
static BlockNumber
map_free_under(Relation rel, BlockNumber dirblk, int level, uint64 first,
			   uint64 limit, BufferAccessStrategy bstrategy, DdbBlockSet *seen)
{
	uint64		below = map_capacity(level - 1);
	BlockNumber *children = palloc(sizeof(BlockNumber) * DDB_MAP_DIR_ENTRIES);
	BlockNumber nfreed = 0;
	Buffer		buf;

	buf = ReadBufferExtended(rel, MAIN_FORKNUM, dirblk, RBM_NORMAL, bstrategy);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	map_check_page(rel, buf, DDB_PAGE_MAP_DIR);
	memcpy(children, PageGetContents(BufferGetPage(buf)), sizeof(BlockNumber) * DDB_MAP_DIR_ENTRIES);
	UnlockReleaseBuffer(buf);
	ddb_block_set_add(seen, dirblk);
	for (int i = 0; i < DDB_MAP_DIR_ENTRIES; i++)
	{
		uint64		cfirst = first + (uint64) i * below;

		/* a leaf whose row ids are not all handed out yet, or nothing */
		if (level > 2 ? cfirst >= limit : cfirst + below > limit)
			break;
		if (children[i] == 0)
			continue;
		vacuum_delay_point();
		if (level > 2)
			nfreed += map_free_under(rel, children[i], level - 1, cfirst, limit, bstrategy, seen);
		else if (map_free_leaf(rel, dirblk, i, children[i], map_leaf_index(cfirst), bstrategy,
							   seen))
			nfreed++;
	}
	pfree(children);
	return nfreed;
}

/*
 * VACUUM, after clearing the entries of the versions it removed: free the
 * map leaves whose entries are all cleared, so that a table whose versions
 * come and go (a queue, a TTL table, counters updated in place) stops
 * growing by 8 bytes a version written.  Only leaves whose row ids were
 * all handed out (below the metapage's next_rowid) are freed, and never a
 * one-level map's root.  A row id handed out but not yet written -- in a
 * backend's batch, or a version whose deferred entry is not written yet --
 * gets a new leaf when its entry is written (map_leaf with create): an
 * entry is only ever written through the directory or through a leaf
 * checked under its lock.  Freed leaves are reusable at once: this VACUUM
 * records them in the free space map (ddb_page_is_recyclable), and their
 * reuse logs no conflict horizon for hot standbys, whose readers check
 * them under the lock too.
 * Directory pages are kept: one covers about a million row ids.  The
 * directory pages and the leaves in use it read are added to 'seen'.
 * Returns the number of leaves freed.
 */
BlockNumber
ddb_map_free_empty(Relation rel, BufferAccessStrategy bstrategy, DdbBlockSet *seen)
{
	DdbMetaPageData meta;

	ddb_meta_read(rel, &meta);
	if (meta.map_levels < 2)
		return 0;
	return map_free_under(rel, meta.map_root, meta.map_levels, 0, meta.next_rowid, bstrategy,
						  seen);
}

/* ------------------------------------------------------------------------
 * Deferred entries
 * ------------------------------------------------------------------------
 */
static void forget_pending_repair(Relation rel);

typedef struct PendingEntry
{
	Oid			relid;
	RelFileNode node;			/* entries of a truncated file are dropped */
	uint64		rowid;
	BlockNumber block;
	uint32		hash;
	SubTransactionId subid;		/* the subtransaction that wrote it */
} PendingEntry;

/*
 * The pending list's first size.  A test build may set it small
 * (COPT=-DDDB_MAX_PENDING=8) so that make_room flushes and grows the list
 * all the time; the WAL record counts multi_insert.out expects then differ.
 */
#ifndef DDB_MAX_PENDING
#define DDB_MAX_PENDING		65536
#endif

static PendingEntry *pending = NULL;
static int	npending = 0;
static int	maxpending = 0;
static uint64 pending_min_rowid = 0;	/* the least row id pending, if any */
static SubTransactionId pending_max_subid = InvalidSubTransactionId;
static bool xact_callback_registered = false;

/* pending_min_rowid after entries were removed */
static void
pending_recompute_min(void)
{
	for (int i = 0; i < npending; i++)
		if (i == 0 || pending[i].rowid < pending_min_rowid)
			pending_min_rowid = pending[i].rowid;
}

/*
 * By relation, then by file, then by row id.  A file's entries must come
 * together: each file numbers its row ids from the start, so those of a
 * relation's earlier file (kept for a savepoint rollback, see
 * flush_pending) and of its current one would otherwise alternate, and
 * each entry of the current file would be written in a record of its own.
 */
static int
pending_cmp(const void *a, const void *b)
{
	const PendingEntry *pa = a;
	const PendingEntry *pb = b;

	if (pa->relid != pb->relid)
		return pa->relid < pb->relid ? -1 : 1;
	if (pa->node.spcNode != pb->node.spcNode)
		return pa->node.spcNode < pb->node.spcNode ? -1 : 1;
	if (pa->node.relNode != pb->node.relNode)
		return pa->node.relNode < pb->node.relNode ? -1 : 1;
	if (pa->rowid != pb->rowid)
		return pa->rowid < pb->rowid ? -1 : 1;
	return 0;
}

/*
 * The map leaf holding rowid, created if missing, locked exclusively, for
 * writing entries.  A map leaf never moves, so the leaf this backend wrote
 * last is kept in the relcache entry (DdbRelCache.map_leaf) and a batch
 * whose row ids it covers -- in a steady stream of single-row
 * transactions, nearly every batch -- goes straight to it instead of
 * reading the metapage and the directory.  VACUUM may have freed it since
 * (ddb_map_free_empty), which no invalidation tells this backend in time
 * -- a transaction holding the table's lock from before the VACUUM
 * processes none -- so the page is checked under its lock (map_leaf_is)
 * and, if it is no longer that leaf, found through the directory, which
 * makes a new one.  The cache goes with anything that replaces or
 * truncates the file: a relcache invalidation frees it (TRUNCATE, a
 * rewrite, or their rollback, another backend's included), and
 * ddb_reset_relcache clears it (a new relfilenode or an in-place
 * truncation in this backend).
 */
static Buffer
map_leaf_for_write(Relation rel, uint64 rowid, bool lock, int *slot)
{
	DdbRelCache *cache = ddb_get_relcache(rel);
	Buffer		buf;

	if (cache->map_leaf != 0 && rowid >= cache->map_leaf_first &&
		rowid - cache->map_leaf_first < DDB_MAP_LEAF_ENTRIES)
	{
		uint64		first = cache->map_leaf_first;

		/* checked under its lock: VACUUM may have freed it since */
		buf = ReadBuffer(rel, cache->map_leaf);
		LockBuffer(buf, lock ? BUFFER_LOCK_EXCLUSIVE : BUFFER_LOCK_SHARE);
		if (map_leaf_is(BufferGetPage(buf), map_leaf_index(first)))
		{
			*slot = (int) (rowid - first);
			if (!lock)
				LockBuffer(buf, BUFFER_LOCK_UNLOCK);
			return buf;
		}
		UnlockReleaseBuffer(buf);
		cache->map_leaf = 0;
	}
	buf = map_leaf(rel, rowid, true, BUFFER_LOCK_EXCLUSIVE, slot);
	/* re-fetch: the descent may have accepted an invalidation */
	cache = ddb_get_relcache(rel);
	cache->map_leaf = BufferGetBlockNumber(buf);
	cache->map_leaf_first = rowid - *slot;
	if (!lock)
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	return buf;
}

/*
 * The map leaf that is to hold the entry of the new version 'tid', found,
 * or created, now, and returned pinned but not locked: for a writer that
 * sets the entry in the very record that adds the version, under the
 * version's tree leaf (ddb_tree_insert_beside with ddb's own WAL), where
 * rule 1 of ddb_tree.c's header lets it lock this one map leaf and nothing
 * that leads to it (the metapage, a map directory).  A map leaf never
 * moves, the writer's lock on the table keeps the file, and the pin keeps
 * VACUUM from freeing the leaf, which takes a cleanup lock on it
 * (map_free_leaf): the leaf checked here is the one the caller will lock.
 */
Buffer
ddb_map_pin_leaf(Relation rel, ItemPointer tid)
{
	int			slot;

	return map_leaf_for_write(rel, ddb_tid_to_rowid(tid), false, &slot);
}

/* Lock a pinned map leaf for writing, and check that it is one. */
void
ddb_map_lock_leaf(Relation rel, Buffer buf)
{
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	map_check_page(rel, buf, DDB_PAGE_MAP_LEAF);
}

/* The slot of the entry of row id 'tid' in its map leaf (shared with redo). */
int
ddb_map_slot(ItemPointer tid)
{
	return (int) (ddb_tid_to_rowid(tid) % DDB_MAP_LEAF_ENTRIES);
}

/* Are the entries of row ids a and b on one map leaf? */
bool
ddb_map_same_leaf(ItemPointer a, ItemPointer b)
{
	return ddb_tid_to_rowid(a) / DDB_MAP_LEAF_ENTRIES ==
		ddb_tid_to_rowid(b) / DDB_MAP_LEAF_ENTRIES;
}

/* Write entries [from, to) of one relation, one WAL record per map leaf. */
static void
flush_entries(Relation rel, PendingEntry *e, int n)
{
	int			i = 0;
	DdbMapChange one;
	DdbMapChange *changes = n == 1 ? &one :
		palloc(sizeof(DdbMapChange) * Min(n, DDB_MAP_LEAF_ENTRIES));

	while (i < n)
	{
		int			slot;
		Buffer		buf = map_leaf_for_write(rel, e[i].rowid, true, &slot);
		uint64		leafstart = e[i].rowid - slot;
		int			nchanges = 0;

		for (; i < n && e[i].rowid < leafstart + DDB_MAP_LEAF_ENTRIES; i++)
		{
			/* no stray padding bytes in WAL */
			memset(&changes[nchanges], 0, sizeof(DdbMapChange));
			changes[nchanges].block = e[i].block;
			changes[nchanges].hash = e[i].hash;
			changes[nchanges].slot = (uint16) (e[i].rowid - leafstart);
			nchanges++;
		}
		ddb_wal_map_set(rel, buf, changes, nchanges);
		UnlockReleaseBuffer(buf);
	}
	if (changes != &one)
		pfree(changes);
}

/*
 * Write the deferred entries of one relation (relid = InvalidOid: all) that
 * belong to its current relfilenode.  Entries of another file of the
 * relation are void at commit (that file was truncated or replaced), but
 * before it they are kept: rolling back to a savepoint can bring the file
 * back.  Entries of a relation that no longer exists are void at commit,
 * and kept before it for the same reason: its DROP may be rolled back.
 */
static void
flush_pending(Oid only, bool at_commit)
{
	int			i = 0;
	int			keep = 0;

	if (npending == 0)
		return;
	qsort(pending, npending, sizeof(PendingEntry), pending_cmp);
	while (i < npending)
	{
		Oid			relid = pending[i].relid;
		int			j = i;

		while (j < npending && pending[j].relid == relid)
			j++;
		if (OidIsValid(only) && relid != only)
		{
			memmove(&pending[keep], &pending[i], sizeof(PendingEntry) * (j - i));
			keep += j - i;
		}
		else
		{
			/*
			 * We hold a lock on it since we inserted; it may have been
			 * dropped since, by this transaction, and then there is no
			 * relcache entry to find and none to build (NULL).  Only the
			 * relcache entry is needed (no lock, no statistics entry), so
			 * not relation_open's catalog probe either.
			 */
			Relation	rel = RelationIdGetRelation(relid);

			if (rel != NULL)
			{
				int			k = i;

				while (k < j)
				{
					int			m = k;

					while (m < j && RelFileNodeEquals(pending[m].node, pending[k].node))
						m++;
					if (RelFileNodeEquals(pending[k].node, rel->rd_node))
						flush_entries(rel, &pending[k], m - k);
					else if (!at_commit)
					{
						memmove(&pending[keep], &pending[k], sizeof(PendingEntry) * (m - k));
						keep += m - k;
					}
					k = m;
				}
				RelationClose(rel);
			}
			else if (!at_commit)
			{
				memmove(&pending[keep], &pending[i], sizeof(PendingEntry) * (j - i));
				keep += j - i;
			}
		}
		i = j;
	}
	npending = keep;
	pending_recompute_min();
}

static void
ddb_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			flush_pending(InvalidOid, true);
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			npending = 0;
			pending_max_subid = InvalidSubTransactionId;
			break;
	}
}

/*
 * A subtransaction aborts: drop the entries it and its children recorded.
 * Their versions are dead, and this transaction may prune them (an insert
 * that finds their leaf full) before it commits: a prune clears only the
 * entries already written, so an entry written at commit after it would
 * name a version that is gone, and keep its map leaf from ever being freed
 * (ddb_map_free_empty).  Subtransaction ids grow as subtransactions start,
 * so those of the aborting one and of every subtransaction begun inside it
 * are the ids from its own on; a committed child's entries need no
 * relabelling.
 */
static void
ddb_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					 SubTransactionId parentSubid, void *arg)
{
	int			keep = 0;

	if (event != SUBXACT_EVENT_ABORT_SUB || npending == 0 ||
		pending_max_subid < mySubid)
		return;
	pending_max_subid = InvalidSubTransactionId;
	for (int i = 0; i < npending; i++)
		if (pending[i].subid < mySubid)
		{
			pending_max_subid = Max(pending_max_subid, pending[i].subid);
			pending[keep++] = pending[i];
		}
	npending = keep;
	pending_recompute_min();
}

/* The pending list is full: write it out, or grow it if it stays full. */
static void
make_room(void)
{
	flush_pending(InvalidOid, false);
	/* what is left belongs to files a savepoint rollback may restore */
	if (npending > maxpending / 2)
	{
		maxpending *= 2;
		pending = repalloc_huge(pending, sizeof(PendingEntry) * maxpending);
	}
}

/*
 * Before locking a leaf on which ddb_map_set_deferred will be called with
 * the lock held (ddb_tree_insert_beside): make room for that entry now, so
 * that it never flushes, which opens relations and locks map pages, under
 * a leaf lock.
 */
void
ddb_map_make_room(void)
{
	if (pending != NULL && npending == maxpending)
		make_room();
}

/* Record the map entry of a new version, deferred (see the file header). */
void
ddb_map_set_deferred(Relation rel, ItemPointer tid, BlockNumber block, uint32 hash)
{
	PendingEntry *e;

	if (pending == NULL)
	{
		maxpending = DDB_MAX_PENDING;
		pending = MemoryContextAlloc(TopMemoryContext, sizeof(PendingEntry) * maxpending);
	}
	if (!xact_callback_registered)
	{
		RegisterXactCallback(ddb_xact_callback, NULL);
		RegisterSubXactCallback(ddb_subxact_callback, NULL);
		xact_callback_registered = true;
	}
	if (npending == maxpending)
		make_room();
	e = &pending[npending++];
	e->relid = RelationGetRelid(rel);
	e->node = rel->rd_node;
	e->rowid = ddb_tid_to_rowid(tid);
	if (npending == 1 || e->rowid < pending_min_rowid)
		pending_min_rowid = e->rowid;
	e->block = block;
	e->hash = hash;
	e->subid = GetCurrentSubTransactionId();
	if (e->subid > pending_max_subid)
		pending_max_subid = e->subid;
}

/* Before resolving a TID of rel: write our deferred entries for it. */
void
ddb_map_flush(Relation rel)
{
	if (npending > 0)
		flush_pending(RelationGetRelid(rel), false);
}

/*
 * Before a parallel query: write every deferred entry.  Its workers resolve
 * TIDs through the map (a TID scan, a join on ctid), and they cannot see
 * this backend's pending list, so a version this transaction wrote would
 * be missing to them.  Parallel mode forbids writes, so nothing is deferred
 * again until the query ends.
 */
void
ddb_map_flush_all(void)
{
	if (npending > 0)
		flush_pending(InvalidOid, false);
}

/*
 * Before resolving row id 'rowid' of rel: the same, but only when rowid
 * may be one of them.  A statement that updates or deletes many rows
 * resolves the TIDs of versions that existed before it, whose row ids are
 * below every row id this backend has pending; writing the entries at
 * each resolution logged a map record per row with Generic WAL.
 */
static void
map_flush_for(Relation rel, uint64 rowid)
{
	if (npending > 0 && rowid >= pending_min_rowid)
		flush_pending(RelationGetRelid(rel), false);
}

/*
 * The relation's current file was truncated in place: its entries are void,
 * and so is a repair still waiting for it (pending_repair).  Those of the
 * relation's other files stay, as flush_pending keeps them: a file
 * truncated in place is one this subtransaction created (TRUNCATE after
 * TRUNCATE), and rolling back to a savepoint brings back the file before
 * it, with the versions its kept entries name.
 */
void
ddb_map_forget(Relation rel)
{
	int			keep = 0;

	forget_pending_repair(rel);

	for (int i = 0; i < npending; i++)
		if (pending[i].relid != RelationGetRelid(rel) ||
			!RelFileNodeEquals(pending[i].node, rel->rd_node))
			pending[keep++] = pending[i];
	npending = keep;
	pending_recompute_min();
}

static bool
map_get(Relation rel, uint64 rowid, BlockNumber *block, uint32 *hash)
{
	int			slot;
	Buffer		buf = map_leaf(rel, rowid, false, BUFFER_LOCK_SHARE, &slot);
	DdbMapEntry *e;

	if (!BufferIsValid(buf))
		return false;
	e = &((DdbMapEntry *) PageGetContents(BufferGetPage(buf)))[slot];
	*block = e->block;
	*hash = e->hash;
	UnlockReleaseBuffer(buf);
	return *block != 0;
}

/*
 * Repair a stale hint without WAL, like a hint bit: a stale entry that
 * points left of its version is still correct, so losing the repair in a
 * crash or on a standby costs only a few extra page reads.
 *
 * But the repair must not reach disk before the WAL that put the version
 * on 'block' (the split that moved it there): if that WAL were lost (an OS
 * crash with synchronous_commit = off), the recovered entry would point at
 * a page that is all zeroes or holds other keys.  So, as heap's
 * SetHintBits does for a commit LSN, the repair is skipped while 'lsn' --
 * the LSN of 'block' when the version was found there, at or after that
 * split's record -- is not yet flushed, unless the map page's own LSN is
 * at or past it (writing the map page then flushes that WAL first).  A
 * skipped repair is made by a later resolution.  And should a bad entry
 * reach disk anyway, ddb_find_version treats it as a hint and falls back
 * to searching the key space of the entry's hash.
 */
static void
map_repair(Relation rel, uint64 rowid, BlockNumber block, XLogRecPtr lsn)
{
	int			slot;
	Buffer		buf = map_leaf(rel, rowid, false, BUFFER_LOCK_SHARE, &slot);

	if (!BufferIsValid(buf))
		return;
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	if (ConditionalLockBuffer(buf))
	{
		DdbMapEntry *e = &((DdbMapEntry *) PageGetContents(BufferGetPage(buf)))[slot];

		/*
		 * Unlocked meanwhile: on a hot standby nothing keeps the replay of
		 * VACUUM's free (ddb_map_free_empty) from changing the page, a pin
		 * included, so check it again.
		 */
		if (map_leaf_is(BufferGetPage(buf), map_leaf_index(rowid)) &&
			e->block != 0 && e->block != block &&
			!(BufferIsPermanent(buf) && XLogNeedsFlush(lsn) &&
			  BufferGetLSNAtomic(buf) < lsn))
		{
			e->block = block;
			MarkBufferDirtyHint(buf, true);
		}
		UnlockReleaseBuffer(buf);
	}
	else
		ReleaseBuffer(buf);
}

/*
 * A repair found while the caller holds the version's leaf locked cannot be
 * made then (it reads the metapage: leaf -> metapage is the wrong lock
 * order).  It waits here and is made at the next TID resolution, which
 * starts with no page locked.
 */
static struct
{
	bool		valid;
	Oid			relid;
	RelFileNode node;
	uint64		rowid;
	BlockNumber block;
	XLogRecPtr	lsn;			/* the leaf's LSN when the version was found */
}			pending_repair;

/* The file was truncated in place (ddb_map_forget): the repair is the old tree's. */
static void
forget_pending_repair(Relation rel)
{
	if (pending_repair.valid && pending_repair.relid == RelationGetRelid(rel) &&
		RelFileNodeEquals(pending_repair.node, rel->rd_node))
		pending_repair.valid = false;
}

static void
apply_pending_repair(Relation rel)
{
	if (pending_repair.valid && pending_repair.relid == RelationGetRelid(rel) &&
		RelFileNodeEquals(pending_repair.node, rel->rd_node))
	{
		pending_repair.valid = false;
		map_repair(rel, pending_repair.rowid, pending_repair.block, pending_repair.lsn);
	}
}

/* A routing hash as the first four bytes of a key (ddb_key_hash's inverse). */
static inline void
hash_key_bytes(uint32 hash, unsigned char *out)
{
	out[0] = (hash >> 24) & 0xff;
	out[1] = (hash >> 16) & 0xff;
	out[2] = (hash >> 8) & 0xff;
	out[3] = hash & 0xff;
}

/*
 * Does a leaf's key space end at or below 'key' (its high key <= key), so
 * that every item on it is below key?  A rightmost leaf's never does.
 */
static bool
leaf_left_of(Page page, const char *key, int keylen)
{
	DdbKeyItem	hk;

	if (DdbPageIsRightmost(page))
		return false;
	hk = (DdbKeyItem) PageGetItem(page, PageGetItemId(page, DDB_HIKEY));
	return ddb_compare_bytes(hk->key, hk->keylen, key, keylen) <= 0;
}

/*
 * Leaves wholly left of the hash's key space that a walk from a hint steps
 * over before it gives up for a descent: a split at a partition boundary
 * leaves the moved versions' leaf just left of them (separators between
 * partitions are cut to the right one's hash), while a page reused for
 * keys far left would lead across every partition in between.
 */
#define DDB_HINT_LEFT_STEPS	2

/*
 * Look for the version tid on leaf b (locked) and the leaves right of it
 * that can still hold keys below 'bound' (unbounded: to the rightmost leaf),
 * moving right hand over hand.  With 'low' (not NULL), a walk that would
 * step right from more than DDB_HINT_LEFT_STEPS leaves whose key space ends
 * at or below 'low' stops.  Returns true with the version's leaf still
 * locked in *buf and its offset in *off; false with nothing locked.
 */
static bool
map_walk_right(Relation rel, Buffer b, ItemPointer tid, int mode,
			   const unsigned char *low, const unsigned char *bound, bool unbounded,
			   Buffer *buf, OffsetNumber *off)
{
	int			left_steps = 0;

	for (;;)
	{
		Page		page = BufferGetPage(b);
		DdbKeyItem	hk;
		BlockNumber right;

		*off = ddb_leaf_find_rowid(page, tid, InvalidOffsetNumber);
		if (*off != InvalidOffsetNumber)
		{
			*buf = b;
			return true;
		}
		if (DdbPageIsRightmost(page))
			break;
		hk = (DdbKeyItem) PageGetItem(page, PageGetItemId(page, DDB_HIKEY));
		if (!unbounded && ddb_compare_bytes(hk->key, hk->keylen, (const char *) bound, 4) >= 0)
			break;
		if (low && leaf_left_of(page, (const char *) low, 4) &&
			++left_steps > DDB_HINT_LEFT_STEPS)
			break;
		right = DdbPageGetOpaque(page)->right;
		UnlockReleaseBuffer(b);
		b = ddb_leaf_step(rel, right, mode);
	}
	UnlockReleaseBuffer(b);
	return false;
}

/*
 * Find the version named by tid.  Returns true with *buf locked in 'mode'
 * and *off its offset; false when the version does not exist (never
 * written, or removed by VACUUM).
 *
 * The map entry is a hint: the walk starts at its block.  When that block
 * is not a leaf (beyond the end of the file, all zeroes, another kind of
 * page) or the walk from it passes the entry's hash without finding the
 * version (the block holds keys right of it), the version is searched for
 * from the first leaf of the hash's key space -- one descent -- and the
 * entry repaired.  *hint_result (if not NULL) tells whether the hint alone
 * led to the version: ddb_verify reports entries that do not.
 */
bool
ddb_find_version_ext(Relation rel, ItemPointer tid, int mode, Buffer *buf,
					 OffsetNumber *off, DdbHintResult *hint_result)
{
	uint64		rowid = ddb_tid_to_rowid(tid);
	BlockNumber hint;
	uint32		hash;
	unsigned char low[4];
	unsigned char bound[4];
	bool		unbounded;
	Buffer		b;
	bool		found = false;

	if (hint_result)
		*hint_result = DDB_HINT_OK;
	if (!ItemPointerIsValid(tid) || !ddb_tree_exists(rel))
		return false;
	map_flush_for(rel, rowid);
	apply_pending_repair(rel);
	if (!map_get(rel, rowid, &hint, &hash))
		return false;

	/* The hash's key space is [low, bound); unbounded: to the end. */
	hash_key_bytes(hash, low);
	unbounded = (hash == PG_UINT32_MAX);
	hash_key_bytes(hash + 1, bound);

	/*
	 * From the hint, if it names a leaf.  (The fork's size is asked for only
	 * when the hint lies beyond the largest size seen: an lseek per TID
	 * would tax every update and delete.)
	 */
	if (hint < ddb_get_relcache(rel)->nblocks_seen ||
		hint < (ddb_get_relcache(rel)->nblocks_seen = RelationGetNumberOfBlocks(rel)))
	{
		Page		page;

		b = ReadBuffer(rel, hint);
		LockBuffer(b, mode);
		page = BufferGetPage(b);
		if (ddb_page_is_tree_leaf(page))
		{
			if (map_walk_right(rel, b, tid, mode, low, bound, unbounded, buf, off))
			{
				found = true;
				if (BufferGetBlockNumber(*buf) == hint)
					return true;
			}
			else if (hint_result)
				*hint_result = DDB_HINT_MISSED;
		}
		else
		{
			UnlockReleaseBuffer(b);
			if (hint_result)
				*hint_result = DDB_HINT_NOT_LEAF;
		}
	}
	else if (hint_result)
		*hint_result = DDB_HINT_NOT_LEAF;

	/* A hint that led nowhere: search the hash's key space. */
	if (!found)
	{
		b = ddb_descend(rel, (const char *) low, 4, false, mode, NULL, NULL);
		if (!map_walk_right(rel, b, tid, mode, NULL, bound, unbounded, buf, off))
			return false;
	}

	/* found right of the hint, or only by the search: repair the entry */
	pending_repair.valid = true;
	pending_repair.relid = RelationGetRelid(rel);
	pending_repair.node = rel->rd_node;
	pending_repair.rowid = rowid;
	pending_repair.block = BufferGetBlockNumber(*buf);
	pending_repair.lsn = BufferGetLSNAtomic(*buf);
	return true;
}

bool
ddb_find_version(Relation rel, ItemPointer tid, int mode, Buffer *buf,
				 OffsetNumber *off)
{
	return ddb_find_version_ext(rel, tid, mode, buf, off, NULL);
}

/*
 * Check the map against the tree for ddb_verify: every leaf item's entry
 * must exist and point at its leaf or a page left of it with the same hash.
 * Here we only check the hash and that the entry is set; the walk from the
 * hint is ddb_find_version's job.  The caller has written this
 * transaction's deferred entries (ddb_map_flush) before reading the
 * file's size.
 */
bool
ddb_map_check(Relation rel, ItemPointer tid, uint32 hash, BlockNumber *hint)
{
	uint32		h;

	if (!map_get(rel, ddb_tid_to_rowid(tid), hint, &h))
		return false;
	return h == hash;
}

/*
 * For ddb_verify: mark every page of the map in seen[], checking kinds and
 * that no page is reached twice, and count the set entries of its leaves
 * in *entries.  Returns the number of map pages.
 */
static uint64
map_mark(Relation rel, BlockNumber blkno, int level, uint64 first,
		 BlockNumber parent, int idx, bool *seen, BlockNumber nblocks,
		 uint64 *entries)
{
	Buffer		buf;
	uint64		n = 1;
	BlockNumber *children = NULL;

	if (blkno == 0 || blkno >= nblocks || seen[blkno])
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg_internal("ddb table \"%s\": bad row-id map link to block %u",
								 RelationGetRelationName(rel), blkno)));
	buf = ReadBuffer(rel, blkno);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	if (level == 1 && !map_leaf_is(BufferGetPage(buf), map_leaf_index(first)))
	{
		Page		page = BufferGetPage(buf);
		bool		a_leaf = map_leaf_live(page);
		BlockNumber marked = a_leaf ? DdbPageGetOpaque(page)->right : 0;

		/*
		 * On a hot standby the replay of VACUUM's free may have come
		 * between the directory's read and this one (the primary's
		 * ddb_verify holds a lock that keeps VACUUM out): then the
		 * directory no longer names the page.
		 */
		UnlockReleaseBuffer(buf);
		if (!map_still_names(rel, parent, idx, blkno))
			return 0;
		if (!a_leaf)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg_internal("ddb table \"%s\": block %u is not a row-id map page",
									 RelationGetRelationName(rel), blkno)));
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg_internal("ddb table \"%s\": row-id map leaf %u is marked as leaf %u of the map, not leaf " UINT64_FORMAT,
								 RelationGetRelationName(rel), blkno, marked, map_leaf_index(first))));
	}
	seen[blkno] = true;
	if (level == 1)
	{
		Page		page = BufferGetPage(buf);
		DdbMapEntry *e = (DdbMapEntry *) PageGetContents(page);
		int			nslots = map_leaf_nslots(page);

		for (int i = 0; i < nslots; i++)
			if (e[i].block != 0)
				(*entries)++;
	}
	else
	{
		map_check_page(rel, buf, DDB_PAGE_MAP_DIR);
		children = palloc(sizeof(BlockNumber) * DDB_MAP_DIR_ENTRIES);
		memcpy(children, PageGetContents(BufferGetPage(buf)),
			   sizeof(BlockNumber) * DDB_MAP_DIR_ENTRIES);
	}
	UnlockReleaseBuffer(buf);
	if (children)
	{
		for (int i = 0; i < DDB_MAP_DIR_ENTRIES; i++)
			if (children[i] != 0)
				n += map_mark(rel, children[i], level - 1,
							  first + (uint64) i * map_capacity(level - 1), blkno, i,
							  seen, nblocks, entries);
		pfree(children);
	}
	return n;
}

uint64
ddb_map_mark_pages(Relation rel, bool *seen, BlockNumber nblocks, uint64 *entries)
{
	DdbMetaPageData meta;

	*entries = 0;
	ddb_meta_read(rel, &meta);
	if (meta.map_levels == 0)
		return 0;
	return map_mark(rel, meta.map_root, meta.map_levels, 0, InvalidBlockNumber, 0, seen, nblocks,
					entries);
}

/* For ddb_verify: does rowid's version have a map entry at all? */
bool
ddb_map_has_entry(Relation rel, ItemPointer tid)
{
	BlockNumber block;
	uint32		hash;

	return map_get(rel, ddb_tid_to_rowid(tid), &block, &hash);
}

/*
 * Bulk build of the map for row ids 0..n-1 (VACUUM FULL, CLUSTER): leaves
 * first, then directory levels, each page written once as a full image.
 */
void
ddb_map_build(Relation rel, BlockNumber *blocks, uint32 *hashes, uint64 n,
			  BlockNumber *root, int *levels)
{
	BlockNumber *cur;
	uint64		ncur;
	int			level = 1;

	*root = 0;
	*levels = 0;
	if (n == 0)
		return;

	/* leaves */
	ncur = (n + DDB_MAP_LEAF_ENTRIES - 1) / DDB_MAP_LEAF_ENTRIES;
	cur = palloc(sizeof(BlockNumber) * ncur);
	for (uint64 i = 0; i < ncur; i++)
	{
		Buffer		buf = ddb_new_buffer(rel);
		GenericXLogState *state = GenericXLogStart(rel);
		Page		page = GenericXLogRegisterBuffer(state, buf, GENERIC_XLOG_FULL_IMAGE);
		DdbMapEntry *e;

		map_init_page(page, true, i);
		e = (DdbMapEntry *) PageGetContents(page);
		for (int j = 0; j < DDB_MAP_LEAF_ENTRIES; j++)
		{
			uint64		r = i * DDB_MAP_LEAF_ENTRIES + j;

			if (r >= n)
				break;
			map_leaf_cover(page, j);
			e[j].block = blocks[r];
			e[j].hash = hashes[r];
		}
		GenericXLogFinish(state);
		cur[i] = BufferGetBlockNumber(buf);
		UnlockReleaseBuffer(buf);
	}

	/* directories until one page remains */
	while (ncur > 1)
	{
		uint64		nnext = (ncur + DDB_MAP_DIR_ENTRIES - 1) / DDB_MAP_DIR_ENTRIES;
		BlockNumber *next = palloc(sizeof(BlockNumber) * nnext);

		for (uint64 i = 0; i < nnext; i++)
		{
			Buffer		buf = ddb_new_buffer(rel);
			GenericXLogState *state = GenericXLogStart(rel);
			Page		page = GenericXLogRegisterBuffer(state, buf, GENERIC_XLOG_FULL_IMAGE);
			BlockNumber *d;

			map_init_page(page, false, 0);
			d = (BlockNumber *) PageGetContents(page);
			for (int j = 0; j < DDB_MAP_DIR_ENTRIES; j++)
			{
				uint64		c = i * DDB_MAP_DIR_ENTRIES + j;

				if (c >= ncur)
					break;
				d[j] = cur[c];
			}
			GenericXLogFinish(state);
			next[i] = BufferGetBlockNumber(buf);
			UnlockReleaseBuffer(buf);
		}
		pfree(cur);
		cur = next;
		ncur = nnext;
		level++;
	}
	*root = cur[0];
	*levels = level;
	pfree(cur);
}
