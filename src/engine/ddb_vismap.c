/*-------------------------------------------------------------------------
 *
 * ddb_vismap.c
 *	  Which leaves VACUUM may skip: a bit a leaf in the visibility map fork.
 *
 * A leaf's bit says that every version on it is visible to every snapshot
 * -- its xmin committed before the oldest running transaction, its xmax
 * empty, aborted or a lock's -- so that a VACUUM would find nothing to
 * prune there, now or until the leaf changes.  VACUUM sets it when it
 * leaves a leaf so (an empty leaf stays unmarked: VACUUM tries to unlink
 * it instead).  Every change of a leaf's versions clears it first -- an
 * insert, an update's, a delete's or a row lock's mark, a prune, a split,
 * a re-lay under another prefix, the leaf's own unlink -- but not
 * freezing, nor a new right-link when its right sibling is unlinked,
 * which leave every version as visible as it was.  A VACUUM that is not
 * aggressive (ddb_vacuum.c) then skips the leaves whose bits are set,
 * reading their parents instead of them.  An aggressive one (freeze_table_age reached,
 * wraparound, DISABLE_PAGE_SKIPPING) reads every leaf, as before: the map
 * says nothing about what is frozen.
 *
 * Where the bits live.  PostgreSQL has no fork of its own for an access
 * method, so the bits are kept in the visibility map fork, in the heap's
 * page layout (two bits a block: visibilitymap.c), and read with its
 * visibilitymap_get_status and visibilitymap_pin.  ddb uses only the
 * second bit, the one heap calls VISIBILITYMAP_ALL_FROZEN, and never the
 * first: pg_visibility's pg_check_visible() judges every "tuple" of a
 * block whose first bit is set with heap's routines, which would set hint
 * bits in the middle of a ddb leaf item.  pg_visibility's other functions
 * only read, but read the map as heap's: they call ddb's marked leaves
 * all frozen, and pg_check_frozen() calls their items corrupt.  They do
 * not apply to ddb tables.  ANALYZE's relallvisible counts the first bit,
 * so it stays 0, which matters to nothing (ddb tables have no index-only
 * scans).
 *
 * WAL.  A set is logged after VACUUM's own record of the leaf, a clear
 * before the change that makes it necessary, while the leaf is locked
 * exclusively throughout; replay meets them in the order they were made.
 * With ddb's own records (ddb_wal.c) they are DDB_EXT_VM_SET, of the map
 * page and ordered by its LSN, as heap logs its map's sets, and
 * DDB_EXT_VM_CLEAR, a few bytes whose redo clears the bit as heap's redo
 * clears its map's; without them, Generic WAL records of the map page.
 * A map page is made by visibilitymap.c without WAL (vm_extend); the first
 * record that changes one logs it whole and sets its pd_lower to the end
 * of the page: a Generic WAL record leaves out the hole between pd_lower
 * and pd_upper, which would otherwise be all of the bits.  A map page that comes back torn or missing
 * reads as zeroes (RBM_ZERO_ON_ERROR): every leaf is then read again,
 * which is always safe.
 *
 * Locks.  A map page is locked last of all, by a backend that holds the
 * leaf exclusively, and nothing is locked while it is held (ddb_tree.c,
 * rule 1).  The bit is read without the map page's lock: it is set only
 * under the leaf's lock, which the reader holds (a writer) or which
 * VACUUM, skipping, does not need (a skipped leaf changed since is left
 * for the next VACUUM, as a heap page would be).  A writer must see the
 * map's real size, not the one it cached (ddb_vm_clear).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/visibilitymap.h"
#include "access/xlogutils.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/smgr.h"
#include "utils/rel.h"

#include "ddb.h"
#include "engine/ddb_page.h"

/* ddb's bit: heap's second, never its first (see the header) */
#define DDB_VM_ALL_VISIBLE	VISIBILITYMAP_ALL_FROZEN

/* The layout of visibilitymap.c, whose macros are its own. */
#define VM_MAPSIZE			(BLCKSZ - MAXALIGN(SizeOfPageHeaderData))
#define VM_BLOCKS_PER_BYTE	(BITS_PER_BYTE / BITS_PER_HEAPBLOCK)
#define VM_BLOCKS_PER_PAGE	(VM_MAPSIZE * VM_BLOCKS_PER_BYTE)

/*
 * Is leaf blkno's bit set?  *vmbuf: a pin on a map page, kept for the next
 * call and released by the caller (InvalidBuffer to start; it stays so
 * while the table has no map).
 */
bool
ddb_vm_is_set(Relation rel, BlockNumber blkno, Buffer *vmbuf)
{
	return (visibilitymap_get_status(rel, blkno, vmbuf) & DDB_VM_ALL_VISIBLE) != 0;
}

/* Where leaf blkno's bit is on its map page. */
static inline uint8 *
vm_byte(Page page, BlockNumber blkno, uint8 *bit)
{
	*bit = DDB_VM_ALL_VISIBLE << (BITS_PER_HEAPBLOCK * (blkno % VM_BLOCKS_PER_BYTE));
	return (uint8 *) PageGetContents(page) + (blkno % VM_BLOCKS_PER_PAGE) / VM_BLOCKS_PER_BYTE;
}

/*
 * Change leaf blkno's bit on the pinned map page vmbuf: with ddb's own
 * records a clear is DDB_EXT_VM_CLEAR (ddb_wal.c), the page changed first
 * in the same critical section, as heap clears its map's bits; anything
 * else is a Generic WAL record of the page (see "WAL" above).
 */
static void
vm_change(Relation rel, Buffer vmbuf, BlockNumber blkno, bool set)
{
	GenericXLogState *state;
	Page		page;
	uint8		bit;
	uint8	   *byte;

	LockBuffer(vmbuf, BUFFER_LOCK_EXCLUSIVE);
	page = BufferGetPage(vmbuf);
	byte = vm_byte(page, blkno, &bit);
	if (((*byte & bit) != 0) == set)
	{
		LockBuffer(vmbuf, BUFFER_LOCK_UNLOCK);
		return;
	}
	if (ddb_wal_custom())
	{
		START_CRIT_SECTION();
		if (set)
			ddb_vm_set_in_page(page, blkno);
		else
			*byte &= ~bit;
		MarkBufferDirty(vmbuf);
		if (set)
			ddb_wal_vm_set(rel, vmbuf, blkno);
		else
			ddb_wal_vm_clear(rel, blkno);
		END_CRIT_SECTION();
		LockBuffer(vmbuf, BUFFER_LOCK_UNLOCK);
		return;
	}
	state = GenericXLogStart(rel);
	page = GenericXLogRegisterBuffer(state, vmbuf,
									 ((PageHeader) page)->pd_lower == BLCKSZ ? 0 :
									 GENERIC_XLOG_FULL_IMAGE);
	((PageHeader) page)->pd_lower = BLCKSZ;
	byte = vm_byte(page, blkno, &bit);
	if (set)
		*byte |= bit;
	else
		*byte &= ~bit;
	GenericXLogFinish(state);
	LockBuffer(vmbuf, BUFFER_LOCK_UNLOCK);
}

/*
 * Set leaf blkno's bit on map page 'page' (formatting it as the first
 * record of a page does: see "WAL" above): VACUUM's change with ddb's own
 * records, and the redo of DDB_EXT_VM_SET (ddb_wal.c).
 */
void
ddb_vm_set_in_page(Page page, BlockNumber blkno)
{
	uint8		bit;
	uint8	   *byte;

	if (PageIsNew(page))
		PageInit(page, BLCKSZ, 0);
	((PageHeader) page)->pd_lower = BLCKSZ;
	byte = vm_byte(page, blkno, &bit);
	*byte |= bit;
}

/* Redo of DDB_EXT_VM_CLEAR (ddb_wal.c): clear the bit where there is one. */
void
ddb_vm_clear_redo(RelFileNode rnode, BlockNumber blkno)
{
	Relation	reln = CreateFakeRelcacheEntry(rnode);
	Buffer		vmbuf = InvalidBuffer;

	if (ddb_vm_is_set(reln, blkno, &vmbuf))
	{
		uint8		bit;
		uint8	   *byte;

		LockBuffer(vmbuf, BUFFER_LOCK_EXCLUSIVE);
		byte = vm_byte(BufferGetPage(vmbuf), blkno, &bit);
		*byte &= ~bit;
		MarkBufferDirty(vmbuf);
		LockBuffer(vmbuf, BUFFER_LOCK_UNLOCK);
	}
	if (BufferIsValid(vmbuf))
		ReleaseBuffer(vmbuf);
	FreeFakeRelcacheEntry(reln);
}

/*
 * Clear the bit of the leaf in buf, which the caller holds exclusively and
 * is about to change (outside a critical section: this may read the map
 * page and logs a record).  Nothing is done when the bit is clear, which
 * is nearly always, and costs one map page lookup.
 */
void
ddb_vm_clear(Relation rel, Buffer buf)
{
	BlockNumber blkno = BufferGetBlockNumber(buf);
	Buffer		vmbuf = InvalidBuffer;
	SMgrRelation reln = RelationGetSmgr(rel);
	BlockNumber *cached = &reln->smgr_cached_nblocks[VISIBILITYMAP_FORKNUM];

	/*
	 * visibilitymap.c reads a block beyond the map's size as it was last
	 * seen in this backend as clear.  But a VACUUM may have made or
	 * extended the map since, and the invalidation it sent waits for this
	 * backend's next new lock or transaction: a statement, or a
	 * transaction, that wrote before the VACUUM and writes after it would
	 * change a leaf the VACUUM marked without clearing the mark.  So a
	 * block beyond the size seen makes it look at the map's file again,
	 * as pg_visibility does (heap needs no such look, its page's
	 * PD_ALL_VISIBLE telling it to pin), and extend the map to cover the
	 * leaf, or make it for a table from before maps (ddb_vm_create), so
	 * that the next look is not needed.  Rule 2 of ddb_tree.c allows the
	 * wait for the extension lock under the leaf's.
	 */
	if (*cached == InvalidBlockNumber || blkno / VM_BLOCKS_PER_PAGE >= *cached)
	{
		*cached = InvalidBlockNumber;
		visibilitymap_pin(rel, blkno, &vmbuf);
	}
	if (ddb_vm_is_set(rel, blkno, &vmbuf))
		vm_change(rel, vmbuf, blkno, false);
	if (BufferIsValid(vmbuf))
		ReleaseBuffer(vmbuf);
}

/*
 * Make the map, its first page (the first 32,672 blocks' bits), with a new
 * tree, so that its first writer need not (ddb_vm_clear).  Not WAL-logged,
 * as heap's map pages are made: a map page's first record logs it whole.
 * ddb.check_tree_without_map (checks builds) makes trees as earlier
 * versions did, for the tests of a writer that meets a map made since.
 */
void
ddb_vm_create(Relation rel)
{
	Buffer		vmbuf = InvalidBuffer;

#ifdef DDB_CHECKS
	if (ddb_check_tree_without_map)
		return;
#endif
	visibilitymap_pin(rel, 0, &vmbuf);
	ReleaseBuffer(vmbuf);
}

/*
 * VACUUM, before its walk over nblocks blocks: extend the map to cover
 * them and a page's worth more, so that the table may grow by that much
 * (255 MB) before its writers must look at the map's size again.  Leaves
 * *vmbuf pinned.
 */
void
ddb_vm_extend(Relation rel, BlockNumber nblocks, Buffer *vmbuf)
{
	visibilitymap_pin(rel, nblocks + VM_BLOCKS_PER_PAGE - 1, vmbuf);
}

/*
 * Set the bit of the leaf in buf, which VACUUM holds exclusively and has
 * found all visible (its own record of the leaf, if any, comes first).
 * *vmbuf as for ddb_vm_is_set; the map is extended as needed.
 */
void
ddb_vm_set(Relation rel, Buffer buf, Buffer *vmbuf)
{
	BlockNumber blkno = BufferGetBlockNumber(buf);

	visibilitymap_pin(rel, blkno, vmbuf);
	vm_change(rel, *vmbuf, blkno, true);
}
