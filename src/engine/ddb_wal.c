/*-------------------------------------------------------------------------
 *
 * ddb_wal.c
 *	  How the engine's hot-path page changes are WAL-logged: ddb's own WAL
 *	  resource manager when ddb is preloaded, Generic WAL otherwise.
 *
 * Every leaf insert (one item, or a batch's items of one leaf in one
 * record), version mark (delete, update's old version, row lock),
 * one-record update, row-id map entry, prune, leaf split below an
 * existing parent and unlink of an empty leaf goes through a function of
 * this file, which changes the
 * page(s) and logs the change.  Which WAL it
 * writes is decided here and nowhere else (ddb_wal_custom):
 *
 *	- ddb in shared_preload_libraries: _PG_init runs while
 *	  process_shared_preload_libraries_in_progress, registers the resource
 *	  manager "ddb" (RegisterCustomRmgr) in the postmaster, and every backend
 *	  inherits it.  The changes are logged as typed records that carry what
 *	  changed -- a new item once, without what redo knows (item_compact),
 *	  an update's new item as what differs
 *	  from its old version (xl_ddb_update_delta) and, in the same record,
 *	  the new version's row-id map entry (UPDATE_MAP), a version's new
 *	  header fields, map slots, removed offsets -- and are replayed by
 *	  ddb_wal_redo
 *	  with XLogReadBufferForRedo and the page-LSN rule, in a critical section
 *	  (START_CRIT_SECTION, change, MarkBufferDirty, XLogInsert, PageSetLSN),
 *	  as nbtree's _bt_insertonpg and btree_xlog_insert do.
 *
 *	- Otherwise (CREATE EXTENSION alone; the library loaded into a backend
 *	  on first use): exactly the Generic WAL records the engine always
 *	  wrote.
 *
 * Everything else (tree creation, root and internal splits, map growth,
 * bulk build, VACUUM's freezing) stays Generic WAL in both modes.  Generic records are always
 * replayable, and both kinds order by LSN on a page, so mixing them is
 * safe, and a page written in one mode reads the same in the other.
 *
 * Generic WAL and fields that differ.  A Generic WAL record of a page that
 * is not a full image holds the byte ranges its change made differ on the
 * primary's page, and redo writes them over its own copy, which must then
 * equal the primary's copy everywhere else.  Two kinds of pages' copies
 * need not, in fields that change without WAL:
 *
 *	- A leaf's: hint bits are set without WAL on either side (on a standby
 *	  by its own readers), and redo of ddb's records writes FirstCommandId
 *	  where the primary keeps the command id, as heap's redo does.  A change
 *	  that rewrites an item's fields in place keeps those differences in
 *	  the same fields of the same item, where they are harmless: a byte a
 *	  mark or a freeze leaves unchanged here keeps the replica's hints about
 *	  the same xids, or about none (a mark follows HeapTupleSatisfiesUpdate,
 *	  which sets the hint bits it then clears).  A change that
 *	  moves items (a prune's compaction, a split's left half, a leaf re-laid
 *	  under another prefix) does not: where a moved item's bytes happen to
 *	  equal the bytes the primary had there, nothing is logged and the
 *	  replica keeps its own, another item's command id or hint bits, now in
 *	  some other field of the moved one.  So every Generic WAL record that
 *	  moves a leaf's items logs that leaf whole (DDB_GENERIC_ITEMS_MOVE,
 *	  ddb_page.h); TAP 016 has the case (a root leaf split after ddb's
 *	  inserts).
 *
 *	- A row-id map leaf's: map_repair rewrites an entry's block as a hint,
 *	  without WAL, on either side.  A record that writes the entry would
 *	  leave the replica's byte wherever the new block's byte equals this
 *	  side's old one: a cleared entry whose old block had a zero byte stayed
 *	  set after recovery, an orphan that no version owns and no VACUUM
 *	  clears.  So map_write, in Generic WAL, first gives each entry it
 *	  writes a block that differs in every byte from its new one
 *	  (ddb_map_unmatch; the hash, never repaired, is alike on both sides);
 *	  TAP 013 has the case.
 *
 * Other pages (internal, the metapage, the map's directory) hold no hints
 * and no transaction fields: their deltas are exact.
 *
 * The resource manager id is DDB_RMGR_ID (203), fixed: it is written into
 * every record, so changing it would make WAL written before the change
 * unreadable, and another extension registering the same id in the same
 * server is refused at startup by RegisterCustomRmgr.  128
 * (RM_EXPERIMENTAL_ID) is for development only; 203 was unused in
 * PostgreSQL's list of custom resource managers
 * (wiki.postgresql.org/wiki/CustomWALResourceManagers) when chosen, and
 * must be reserved there before a release.
 *
 * Safety.  WAL with ddb records can be replayed only by a server that
 * preloads ddb.  A server (crash recovery, a standby, a restore) that
 * meets one without it stops: GetRmgr raises "resource manager with ID
 * 203 not registered" in the startup process, which is fatal, and the
 * server does not start -- it never skips a record.  Adding ddb back to
 * shared_preload_libraries and starting again replays the WAL.  So a
 * standby must preload ddb whenever its primary does, and restores and
 * pg_rewind targets likewise.  Adding or removing the preload across a
 * clean shutdown is safe in either direction: a clean shutdown ends with
 * a checkpoint and leaves no WAL to replay, and pages are the same in
 * both modes.  pg_waldump shows the records as "custom203" (it cannot
 * load ddb's rm_desc) and --stats counts them under that name.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/bufmask.h"
#include "access/generic_xlog.h"
#include "access/htup_details.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogutils.h"
#include "common/pg_lzcompress.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/standby.h"
#include "utils/guc.h"
#include "utils/rel.h"

#include "ddb.h"
#include "engine/ddb_page.h"

#ifdef USE_LZ4
#include <lz4.h>
#endif

#define DDB_RMGR_ID			203

/* Record kinds: the high bits of xl_info */
#define XLOG_DDB_INSERT		0x00	/* one leaf item at an offset */
#define XLOG_DDB_MARK		0x10	/* a version's xmax fields */
#define XLOG_DDB_UPDATE		0x20	/* MARK, then INSERT, same leaf */
#define XLOG_DDB_MAP		0x30	/* row-id map slots of one map leaf */
#define XLOG_DDB_PRUNE		0x40	/* remove dead versions from a leaf */
#define XLOG_DDB_SPLIT		0x50	/* split a leaf below an existing parent */
#define XLOG_DDB_INSERT_MULTI 0x60	/* several leaf items, one leaf */
#define XLOG_DDB_UPDATE_MAP	0x70	/* UPDATE, short, with its map entry */
#define XLOG_DDB_OPMASK		0x70
#define XLOG_DDB_DELTA		0x80	/* UPDATE: the new item as a delta */
#define XLOG_DDB_MARK_SHORT	0x80	/* MARK: the short form (below) */
#define XLOG_DDB_MAP_CLEAR	0x80	/* MAP: cleared slots only (below) */
#define XLOG_DDB_INSERT_MAP	0x80	/* INSERT: with its map entry (below) */
#define XLOG_DDB_SPLIT_INPAGE 0x80	/* SPLIT: the right half as laid out (below) */
#define XLOG_DDB_UNLINK		(XLOG_DDB_PRUNE | 0x80) /* unlink an empty leaf (below):
													 * the op codes are all taken,
													 * and PRUNE has no use for
													 * the bit */
#define XLOG_DDB_EXT		(XLOG_DDB_UPDATE_MAP | 0x80)	/* a form named by its
															 * first bytes (below) */

/*
 * INSERT: block 0 the leaf; block data the item.  With XLOG_DDB_INSERT_MAP
 * the record also sets the new version's row-id map entry: block 1 is the
 * map leaf, its data the hash (uint32) and the slot (uint16), the block
 * number being block 0's (a single insert with ddb's own WAL,
 * ddb_tree_insert_at): 14 bytes instead of a 56-byte MAP record.
 */
typedef struct xl_ddb_insert
{
	OffsetNumber off;
} xl_ddb_insert;

#define SizeOfDdbInsert (offsetof(xl_ddb_insert, off) + sizeof(OffsetNumber))

/*
 * INSERT_MULTI: block 0 the leaf; block data the items' offsets
 * (OffsetNumber[nitems]), their sizes (uint16[nitems]) and the items one
 * after another.  Redo adds them in that order, each at its offset, which
 * is where the primary added it.
 */
typedef struct xl_ddb_insert_multi
{
	uint16		nitems;
} xl_ddb_insert_multi;

#define SizeOfDdbInsertMulti (offsetof(xl_ddb_insert_multi, nitems) + sizeof(uint16))

/* MARK: block 0 the leaf; the version's header fields after the mark */
typedef struct xl_ddb_mark
{
	OffsetNumber off;
	uint16		infomask;		/* only the DDB_MARK_INFOMASK bits */
	uint16		infomask2;		/* only HEAP_KEYS_UPDATED */
	TransactionId xmax;
	CommandId	cid;			/* t_cid as stored (cmax or combo id) */
	ItemPointerData ctid;
} xl_ddb_mark;

#define SizeOfDdbMark (offsetof(xl_ddb_mark, ctid) + sizeof(ItemPointerData))

/* The infomask bits a mark sets or clears (mark_xmax in ddb_modify.c). */
#define DDB_MARK_INFOMASK	(HEAP_XMAX_BITS | HEAP_MOVED | HEAP_COMBOCID)

/*
 * MARK with XLOG_DDB_MARK_SHORT, what ddb writes now (a MARK without it,
 * the form above, is still replayed): the offset, the infomask bits, xmax
 * and a flags byte, then t_ctid only when it does not point to the version
 * itself -- 9 bytes for a delete or a row lock instead of 20, as heap's
 * xl_heap_delete.  The command id is not logged: as heap_xlog_delete does,
 * redo sets it to FirstCommandId and clears HEAP_COMBOCID.  A command id
 * means something only to the transaction that wrote it, and no
 * transaction of the primary runs on a standby or survives a crash; the
 * consistency check masks it (ddb_wal_mask).
 */
#define DDB_MARK_KEYS_UPDATED	0x01	/* HEAP_KEYS_UPDATED is set */
#define DDB_MARK_CTID			0x02	/* t_ctid follows */
#define DDB_UPDATE_NEWOFF		0x04	/* UPDATE_MAP: the new offset follows */
#define DDB_UPDATE_DELTA		0x08	/* UPDATE_MAP: block 0's data is a delta */
#define DDB_UPDATE_PRUNE		0x10	/* UPDATE_MAP: the leaf is pruned first */
#define SizeOfDdbMarkShort \
	(sizeof(OffsetNumber) + sizeof(uint16) + sizeof(TransactionId) + sizeof(uint8))

/*
 * UPDATE: block 0 the leaf; block data the new item, or with XLOG_DDB_DELTA
 * what of it differs from the old version (below).  Written by earlier
 * versions of ddb, still replayed; ddb now writes UPDATE_MAP (below).  The
 * test-only ddb.check_wal_legacy writes UPDATE, UPDATE|DELTA and the long
 * MARK again, so that TAP 019 replays them.
 */
typedef struct xl_ddb_update
{
	xl_ddb_mark mark;
	OffsetNumber newoff;
} xl_ddb_update;

#define SizeOfDdbUpdate (offsetof(xl_ddb_update, newoff) + sizeof(OffsetNumber))

/*
 * UPDATE with XLOG_DDB_DELTA: the new item is rebuilt at redo from the old
 * version it replaces, as heap's log_heap_update and heap_xlog_update do
 * with XLH_UPDATE_PREFIX_FROM_OLD and _SUFFIX_FROM_OLD.  A leaf item is the
 * row id, the key (length, bytes, padding), a tuple header and the tuple's
 * data.  An update keeps the key; its new row id is the old version's
 * t_ctid after the mark (the old version points at its successor), and the
 * new version's t_xmin is the old one's t_xmax (the updater).  So the block
 * data is this struct followed by
 *
 *	- the new header without t_xmin: t_xmax, the bytes from t_cid through
 *	  t_infomask2 unless DDB_DELTA_MID_OLD (they equal the old version's
 *	  after the mark: the same command id, and t_ctid the new row id),
 *	  t_infomask, and t_hoff with the null bitmap up to t_hoff;
 *	- the new data without its first prefixlen and last suffixlen bytes,
 *	  which equal the old data's first and last bytes.
 *
 * An update whose new item does not fit that logs the whole item, without
 * the flag: one whose old version's xmax is a multixact (a lock kept beside
 * the update, new_update_xmax in ddb_modify.c), not the new t_xmin.  (A
 * different key or row id the engine never writes.)
 *
 * Whatever is taken from the old version is read at redo after the mark is
 * applied and before the new item is added, as the primary built it: the
 * old item is on the page at mark.off, because the primary changed the
 * page under one exclusive lock and one record (a prune or split that
 * moved it is an earlier record, already replayed when this one needs
 * redo), and its bytes there are the primary's except the hint bits of
 * t_infomask, which are never taken from it.  Under a full-page image the
 * block data is left out and redo restores the image instead.
 */
typedef struct xl_ddb_update_delta
{
	uint16		prefixlen;
	uint16		suffixlen;
	uint8		flags;
} xl_ddb_update_delta;

#define SizeOfDdbUpdateDelta (offsetof(xl_ddb_update_delta, flags) + sizeof(uint8))

#define DDB_DELTA_MID_OLD	0x01
#define DDB_DELTA_XMAX_ZERO	0x02	/* new t_xmax 0, not logged (UPDATE_MAP) */
#define DDB_DELTA_HOFF_OLD	0x04	/* t_hoff, null bitmap as old (UPDATE_MAP) */

/*
 * The header bytes DDB_DELTA_MID_OLD covers: t_cid, t_ctid, t_infomask2.
 * t_infomask follows them: it is always logged (its hint bits may differ
 * on the page at redo).
 */
#define DELTA_MID_START		offsetof(HeapTupleHeaderData, t_choice.t_heap.t_field3)
#define DELTA_MID_END		offsetof(HeapTupleHeaderData, t_infomask)
#define DELTA_HOFF			offsetof(HeapTupleHeaderData, t_hoff)

/*
 * UPDATE_MAP: what ddb writes for an update that stays on its leaf (UPDATE
 * above is still replayed).  Block 0 the leaf, block 1 the row-id map leaf
 * of the new version's entry, which the record sets: in the slot of the
 * new row id, the leaf's block number and the hash, block 1's data (4
 * bytes; ddb_tree_insert_beside, ddb_rowid.c).  The main data is the old
 * version's mark in MARK's short form with t_ctid -- the new row id --
 * always logged (DDB_MARK_CTID), its flags byte also saying whether the
 * new offset follows (DDB_UPDATE_NEWOFF; without it the new item goes at
 * the old one's offset, where it usually does, newest first) and whether
 * block 0's data is the new item as a delta (DDB_UPDATE_DELTA:
 * xl_ddb_update_delta, which may also leave out the new t_xmax when it is
 * 0, DDB_DELTA_XMAX_ZERO, and t_hoff with the null bitmap when they equal
 * the old version's, DDB_DELTA_HOFF_OLD) or the whole item.  As with a
 * short MARK, the command id is not logged.  An update logs 15 bytes of
 * main data instead of 22, about 7 less of delta, and its map entry in 12
 * bytes instead of a 56-byte MAP record at commit.
 *
 * With DDB_UPDATE_PRUNE the update first removes dead versions from the
 * leaf, as a PRUNE record would (an update that found no room beside its
 * old version): the main data goes on with the PRUNE's latestRemovedXid
 * and number of offsets, block 0's data starts with the offsets, and the
 * offsets of the mark and the new item are those after the prune.  Redo
 * cancels standby queries that could see the removed versions first,
 * image or not.  The removed versions' map entries that are on the new
 * version's map leaf are cleared by the record too, their slots (uint16)
 * following the hash in block 1's data; the others are cleared by a
 * MAP_CLEAR record once the leaf is released.  That saves a PRUNE
 * record's 46 bytes of headers, and for a hot item, whose dead versions
 * are recent, the MAP_CLEAR record too.
 */

/*
 * MAP: block 0 the map leaf; block data DdbMapChange[].  With
 * XLOG_DDB_MAP_CLEAR the slots to clear (uint16[]) instead: a prune's or
 * VACUUM's removed versions, 2 bytes each instead of 12.
 */

/* PRUNE: block 0 the leaf; block data the removed offsets */
typedef struct xl_ddb_prune
{
	TransactionId latestRemovedXid;
	uint16		ndeleted;
} xl_ddb_prune;

#define SizeOfDdbPrune (offsetof(xl_ddb_prune, ndeleted) + sizeof(uint16))

/*
 * SPLIT: block 0 the parent, block 1 the left half (the leaf that split),
 * block 2 the new right half (its items as block data), locked in that
 * order, top-down and left to right as ddb_tree.c's lock order says; the
 * separator follows the struct.  Redo makes each page with the functions
 * the primary made it with (ddb_split_leaf_left, and ddb_split_leaf_right_redo
 * for the right half, which the record carries) and the parent with
 * ddb_split_parent, which adds the downlink the primary built before its
 * critical section (or rewrote the parent aside with, when its prefix
 * shrinks).
 * Block 2's data is the right half's item count and line pointer lengths
 * (uint16 each), then its items: with XLOG_DDB_SPLIT_INPAGE as they lie
 * on the page, from pd_upper to the special space (the last item first),
 * so the primary logs them from the page and redo copies them in one
 * piece; without it, as earlier ddb versions wrote them, one after
 * another in offset order.
 */
typedef struct xl_ddb_split
{
	BlockNumber rightlink;		/* the right half's right-link */
	OffsetNumber downlink;		/* the new downlink's offset in the parent */
	uint16		newpp;			/* the parent's prefix length after the split */
	uint16		nleft;			/* data items that stay on the left */
	uint16		flags;			/* the leaf's page flags */
	uint16		seplen;
	bool		hashk;			/* the right half has a high key */
	/* separator follows */
} xl_ddb_split;

#define SizeOfDdbSplit (offsetof(xl_ddb_split, hashk) + sizeof(bool))

/*
 * EXT: a record whose main data starts with an xl_ddb_ext naming its form,
 * so that new forms no longer take info values (of the sixteen ddb has,
 * EXT's is the last but one).  A form this ddb does not know stops redo
 * as an unknown info does.
 *
 *	DDB_EXT_SPLIT: SPLIT|SPLIT_INPAGE (above, after the xl_ddb_ext) of a
 *	leaf with a prefix (ddb_page.h, "Leaf prefix"), which both halves keep:
 *	'arg' is its length, which the plain SPLIT's redo, initializing the
 *	right half, would not give it.  A leaf without a prefix is split with
 *	a plain SPLIT, which earlier ddb versions replay too.
 *
 *	DDB_EXT_SPLIT_ITEMS: a leaf split whose halves take prefixes of their
 *	own (storage version 3): 'arg' is the right half's prefix length; two
 *	uint16 follow, the prefix the halves were made under and the left
 *	half's, then the SPLIT|SPLIT_INPAGE record, whose right half is logged
 *	as it lies (its prefix and flags with it).  Redo makes the left half
 *	as SPLIT does, under the first prefix (ddb_split_leaf_left), then
 *	re-lays it under its own (ddb_leaf_relay).
 *
 *	DDB_EXT_RELAY: block 0, a leaf, re-laid under a prefix of 'arg' bytes
 *	(ddb_leaf_relay): a key that shares less of the prefix is about to go
 *	in.  No main data beyond the xl_ddb_ext.
 *
 *	DDB_EXT_INSERT: INSERT (with its map entry in block 1 when the record
 *	has a block 1, as INSERT_MAP) of a new version, 'arg' its offset,
 *	block 0's data the item without what redo knows (item_compact,
 *	below): what ddb writes for a single insert since it was added; an
 *	item it cannot be written for is logged by INSERT.
 *
 *	DDB_EXT_INSERT_MULTI: INSERT_MULTI, 'arg' the number of items, each
 *	item in block 0's data as DDB_EXT_INSERT logs it, the sizes those of
 *	the items as logged.
 *
 *	DDB_EXT_VM_CLEAR: the visibility map bit of a leaf is cleared
 *	(ddb_vismap.c) before a change of the leaf: main data a RelFileNode
 *	and the leaf's block number, no block registered.  Redo clears the
 *	bit where the map has a page for it, as heap's redo clears its map's
 *	bits (an idempotent change the map page's LSN does not order; replay
 *	meets it and the sets, DDB_EXT_VM_SET, in the order they were made).
 *	With ddb's records a clear costs this, and no record of the 8 kB map
 *	page.
 *
 *	DDB_EXT_VM_SET: block 0 a visibility map page, on which VACUUM set the
 *	bit of the leaf whose block number is the main data (after the
 *	xl_ddb_ext), as heap logs its map's sets: the page's LSN orders them,
 *	and the map page is registered (with its image when a checkpoint asks
 *	for one).  With ddb's records VACUUM logs a mark in a few bytes.
 *
 *	DDB_EXT_SPLIT_PACKED: DDB_EXT_SPLIT_ITEMS (the two prefixes always
 *	follow the xl_ddb_ext) whose block 2 data -- the right half's line
 *	pointer lengths and its items as they lie -- is compressed: a uint16,
 *	its length uncompressed, a uint8 naming the method (DDB_PACK_PGLZ,
 *	DDB_PACK_LZ4), then the method's output.  Written when PostgreSQL's
 *	wal_compression is on, which trades CPU for WAL in full-page images
 *	and so, here, in splits (split_pack), and when that is shorter (pglz,
 *	with PGLZ_strategy_default as PostgreSQL's images, only when it saves
 *	a quarter).  A
 *	ddb built without LZ4 (against a PostgreSQL without it: USE_LZ4)
 *	refuses an LZ4 record at redo with a PANIC, as PostgreSQL refuses an
 *	image compressed with a method it was built without.
 */
typedef struct xl_ddb_ext
{
	uint8		form;
	uint8		pad;
	uint16		arg;
} xl_ddb_ext;

#define DDB_EXT_SPLIT		1
#define DDB_EXT_SPLIT_ITEMS	2
#define DDB_EXT_RELAY		3
#define DDB_EXT_INSERT		4
#define DDB_EXT_INSERT_MULTI 5
#define DDB_EXT_SPLIT_PACKED 6
#define DDB_EXT_VM_CLEAR	7
#define DDB_EXT_VM_SET		8

/* DDB_EXT_SPLIT_PACKED's methods */
#define DDB_PACK_PGLZ		1
#define DDB_PACK_LZ4		2

static bool ddb_wal_registered = false;

#ifdef DDB_CHECKS
/*
 * Test-only (CHECKS=1 builds): ddb.check_wal_legacy makes the server write
 * the record forms earlier versions of ddb wrote, which redo still replays
 * because a standby or a crash recovery may meet them, where those
 * versions wrote them: a mark (a delete, a row lock, an update's separate
 * mark) as the long MARK (xl_ddb_mark), an update beside its old version
 * as UPDATE with its new item whole ('whole') or as the delta of the time
 * ('delta': UPDATE|DELTA, t_xmax, t_hoff and the null bitmap always
 * logged), and a single write's map entry deferred to a MAP record at
 * commit, its insert a plain INSERT (ddb_wal_map_in_record).  With
 * 'uncompressed' it writes only the forms the versions just before
 * DDB_EXT_INSERT, _INSERT_MULTI and _SPLIT_PACKED wrote where those are
 * written now: INSERT_MAP, INSERT (a batch's run of one item), INSERT_MULTI
 * and the splits' uncompressed forms (SPLIT, EXT SPLIT, EXT SPLIT_ITEMS);
 * every legacy setting writes these too.  TAP 019 writes them against a standby under
 * wal_consistency_checking; plain builds have no such setting.
 */
typedef enum WalLegacy
{
	WAL_LEGACY_OFF,
	WAL_LEGACY_DELTA,
	WAL_LEGACY_WHOLE,
	WAL_LEGACY_UNCOMPRESSED
} WalLegacy;

static const struct config_enum_entry wal_legacy_options[] = {
	{"off", WAL_LEGACY_OFF, false},
	{"delta", WAL_LEGACY_DELTA, false},
	{"whole", WAL_LEGACY_WHOLE, false},
	{"uncompressed", WAL_LEGACY_UNCOMPRESSED, false},
	{NULL, 0, false}
};

static int	check_wal_legacy = WAL_LEGACY_OFF;

#define WAL_LEGACY	(check_wal_legacy == WAL_LEGACY_DELTA || check_wal_legacy == WAL_LEGACY_WHOLE)
#define WAL_UNCOMPRESSED	(check_wal_legacy != WAL_LEGACY_OFF)

/*
 * ddb.check_wal_unknown_form makes the server write its INSERT_MULTI
 * records with the bit 0x80 set in their info (0xE0), which no version of
 * ddb has given that kind, and its UPDATE_MAP records as an EXT record of
 * a form no version has (DDB_EXT_UNKNOWN): the records are otherwise the
 * ones it writes, as a later ddb's new form of them could be.  Redo must
 * refuse them with a PANIC rather than replay them as the kinds it knows
 * (TAP 022).  0xE0 is the only info value ddb leaves unused.
 */
static bool check_wal_unknown_form = false;

#define WAL_UNKNOWN_FORM	(check_wal_unknown_form ? 0x80 : 0)
#define DDB_EXT_UNKNOWN		255

void
ddb_wal_checks_init(void)
{
	DefineCustomEnumVariable("ddb.check_wal_legacy",
							 "Test only: write the WAL record forms of earlier ddb versions.",
							 NULL, &check_wal_legacy, WAL_LEGACY_OFF, wal_legacy_options,
							 PGC_SUSET, GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("ddb.check_wal_unknown_form",
							 "Test only: write INSERT_MULTI and UPDATE_MAP records in a form no ddb knows (info bit 0x80).",
							 NULL, &check_wal_unknown_form, false,
							 PGC_SUSET, GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);
}
#else
#define WAL_LEGACY	false
#define WAL_UNCOMPRESSED	false
#define WAL_UNKNOWN_FORM	0
#endif

/* ------------------------------------------------------------------------
 * The switch
 * ------------------------------------------------------------------------
 */

/*
 * Does this server log ddb's records?  True exactly when the resource
 * manager was registered at postmaster start (see the header).  The one
 * place the choice is read.
 */
bool
ddb_wal_custom(void)
{
	return ddb_wal_registered;
}

/*
 * Does a single write (an insert, an update beside its old version) set
 * its new version's row-id map entry in its own record (INSERT_MAP,
 * UPDATE_MAP)?  With ddb's records, unless ddb.check_wal_legacy says to
 * write as earlier versions did; otherwise the caller defers the entry.
 */
bool
ddb_wal_map_in_record(void)
{
	return ddb_wal_registered && !WAL_LEGACY;
}

/* ------------------------------------------------------------------------
 * Page changes shared by the primary and redo
 * ------------------------------------------------------------------------
 */

static void
leaf_add(Page page, const void *item, Size size, OffsetNumber off, int elevel)
{
	if (PageAddItem(page, (Item) item, size, off, false, false) == InvalidOffsetNumber)
		elog(elevel, "failed to add item of size %zu to ddb page", size);
}

static HeapTupleHeader
leaf_tuple(Page page, OffsetNumber off)
{
	DdbLeafItem li = (DdbLeafItem) PageGetItem(page, PageGetItemId(page, off));

	return DdbLeafItemGetTuple(li);
}

/*
 * The short record of a mark just made on the page at off, in out (room
 * for SizeOfDdbMarkShort + sizeof(ItemPointerData)); returns its length.
 */
static int
mark_record_short(Page page, OffsetNumber off, char *out, uint8 extra)
{
	DdbLeafItem li = (DdbLeafItem) PageGetItem(page, PageGetItemId(page, off));
	HeapTupleHeader t = DdbLeafItemGetTuple(li);
	uint16		infomask = t->t_infomask & DDB_MARK_INFOMASK & ~HEAP_COMBOCID;
	TransactionId xmax = HeapTupleHeaderGetRawXmax(t);
	uint8		flags = extra;
	int			len = 0;

	if (t->t_infomask2 & HEAP_KEYS_UPDATED)
		flags |= DDB_MARK_KEYS_UPDATED;
	if (!ItemPointerEquals(&t->t_ctid, &li->tid))
		flags |= DDB_MARK_CTID;
	memcpy(out + len, &off, sizeof(off));
	len += sizeof(off);
	memcpy(out + len, &infomask, sizeof(infomask));
	len += sizeof(infomask);
	memcpy(out + len, &xmax, sizeof(xmax));
	len += sizeof(xmax);
	memcpy(out + len, &flags, sizeof(flags));
	len += sizeof(flags);
	if (flags & DDB_MARK_CTID)
	{
		memcpy(out + len, &t->t_ctid, sizeof(ItemPointerData));
		len += sizeof(ItemPointerData);
	}
	return len;
}

#ifdef DDB_CHECKS
/* The long record of a mark just made on the page at off (legacy forms). */
static void
mark_record(Page page, OffsetNumber off, xl_ddb_mark *rec)
{
	HeapTupleHeader t = leaf_tuple(page, off);

	memset(rec, 0, sizeof(*rec));
	rec->off = off;
	rec->infomask = t->t_infomask & DDB_MARK_INFOMASK;
	rec->infomask2 = t->t_infomask2 & HEAP_KEYS_UPDATED;
	rec->xmax = HeapTupleHeaderGetRawXmax(t);
	rec->cid = HeapTupleHeaderGetRawCommandId(t);
	rec->ctid = t->t_ctid;
}
#endif

/*
 * A short mark record read back into the long form's fields (at redo);
 * 'page' is read only when t_ctid is not logged.  Returns the record's
 * length and its flags in *flagsp.
 */
static int
mark_from_short(Page page, const char *in, xl_ddb_mark *rec, uint8 *flagsp)
{
	const char *start = in;
	uint8		flags;

	memset(rec, 0, sizeof(*rec));
	memcpy(&rec->off, in, sizeof(rec->off));
	in += sizeof(rec->off);
	memcpy(&rec->infomask, in, sizeof(rec->infomask));
	in += sizeof(rec->infomask);
	memcpy(&rec->xmax, in, sizeof(rec->xmax));
	in += sizeof(rec->xmax);
	memcpy(&flags, in, sizeof(flags));
	in += sizeof(flags);
	rec->infomask2 = (flags & DDB_MARK_KEYS_UPDATED) ? HEAP_KEYS_UPDATED : 0;
	rec->cid = FirstCommandId;
	if (flags & DDB_MARK_CTID)
	{
		memcpy(&rec->ctid, in, sizeof(ItemPointerData));
		in += sizeof(ItemPointerData);
	}
	else if (page != NULL)
		rec->ctid = ((DdbLeafItem) PageGetItem(page, PageGetItemId(page, rec->off)))->tid;
	else
		ItemPointerSetInvalid(&rec->ctid);
	*flagsp = flags;
	return in - start;
}

static void
mark_apply(Page page, const xl_ddb_mark *rec)
{
	HeapTupleHeader t = leaf_tuple(page, rec->off);

	t->t_infomask = (t->t_infomask & ~DDB_MARK_INFOMASK) | rec->infomask;
	t->t_infomask2 = (t->t_infomask2 & ~HEAP_KEYS_UPDATED) | rec->infomask2;
	HeapTupleHeaderSetXmax(t, rec->xmax);
	t->t_choice.t_heap.t_field3.t_cid = rec->cid;
	t->t_ctid = rec->ctid;
}

/* ------------------------------------------------------------------------
 * Logged changes (the engine's entry points)
 * ------------------------------------------------------------------------
 */

/*
 * The header bytes an inserted item logs (item_compact): t_infomask2,
 * t_infomask, t_hoff and the null bitmap up to t_hoff.
 */
#define COMPACT_HDR_START	offsetof(HeapTupleHeaderData, t_infomask2)

/*
 * A new version's leaf item 'item' (size bytes) as DDB_EXT_INSERT and
 * DDB_EXT_INSERT_MULTI log it: two pieces, the item's first *keyend bytes
 * (its row id, the key's length and bytes) and item_compact_rest (the
 * header from t_infomask2 through the null bitmap, and the data) --
 * without the key's padding (zeros), t_xmin (the record's xid), t_xmax
 * (0), t_cid and t_ctid (the row id), 18 to 25 bytes of a ~200-byte item.
 * As heap_xlog_insert does, redo sets the command id to FirstCommandId
 * (ddb_wal_mask masks it).  Returns the pieces' length, or 0 when the
 * item is not a fresh version of this transaction (say a frozen or moved
 * one): then it is logged whole.
 */
static Size
item_compact(const char *item, Size size, Size *keyend)
{
	const DdbLeafItemData *li = (const DdbLeafItemData *) item;
	Size		tupoff = DdbLeafTupleOffset(li->keylen);
	HeapTupleHeader h = (HeapTupleHeader) (item + tupoff);
	TransactionId xid = GetCurrentTransactionIdIfAny();

	*keyend = offsetof(DdbLeafItemData, key) + li->keylen;
	if (!TransactionIdIsNormal(xid) ||
		HeapTupleHeaderGetRawXmin(h) != xid ||
		HeapTupleHeaderGetRawXmax(h) != InvalidTransactionId ||
		(h->t_infomask & (HEAP_COMBOCID | HEAP_MOVED | HEAP_XMIN_FROZEN)) != 0 ||
		!ItemPointerEquals(&h->t_ctid, (ItemPointer) &li->tid) ||
		h->t_hoff < SizeofHeapTupleHeader || tupoff + h->t_hoff > size)
		return 0;
	for (Size i = *keyend; i < tupoff; i++)
		if (item[i] != 0)
			return 0;
	return size - (tupoff - *keyend) - COMPACT_HDR_START;
}

/* item_compact's second piece */
static inline const char *
item_compact_rest(const char *item)
{
	return item + DdbLeafTupleOffset(((const DdbLeafItemData *) item)->keylen) + COMPACT_HDR_START;
}

/*
 * Redo's side of item_compact: the item from its logged form 'in' (inlen
 * bytes) and 'xid', the record's, into 'out' (BLCKSZ bytes).  Returns its
 * size.
 */
static Size
item_from_compact(const char *in, Size inlen, TransactionId xid, char *out)
{
	DdbLeafItemData li;
	Size		keyend;
	Size		tupoff;
	HeapTupleHeader h;

	if (inlen < offsetof(DdbLeafItemData, key))
		elog(PANIC, "ddb_wal_redo: invalid inserted item");
	memcpy(&li, in, offsetof(DdbLeafItemData, key));
	keyend = offsetof(DdbLeafItemData, key) + li.keylen;
	tupoff = DdbLeafTupleOffset(li.keylen);
	if (keyend + SizeofHeapTupleHeader - COMPACT_HDR_START > inlen ||
		tupoff + COMPACT_HDR_START + (inlen - keyend) > BLCKSZ)
		elog(PANIC, "ddb_wal_redo: invalid inserted item");
	memcpy(out, in, keyend);
	memset(out + keyend, 0, tupoff - keyend);
	h = (HeapTupleHeader) (out + tupoff);
	memset(h, 0, COMPACT_HDR_START);
	HeapTupleHeaderSetXmin(h, xid);
	h->t_choice.t_heap.t_field3.t_cid = FirstCommandId;
	h->t_ctid = li.tid;
	memcpy((char *) h + COMPACT_HDR_START, in + keyend, inlen - keyend);
	if (h->t_hoff < SizeofHeapTupleHeader ||
		h->t_hoff - COMPACT_HDR_START > inlen - keyend)
		elog(PANIC, "ddb_wal_redo: invalid inserted item");
	return tupoff + COMPACT_HDR_START + (inlen - keyend);
}

/*
 * Redo's add of a logged item at 'off': whole, or with 'xid' (the
 * record's) as item_compact logged it.
 */
static void
leaf_add_logged(Page page, const char *item, Size size, OffsetNumber off,
				TransactionId xid)
{
	PGAlignedBlock whole;

	if (TransactionIdIsValid(xid))
	{
		size = item_from_compact(item, size, xid, whole.data);
		item = whole.data;
	}
	leaf_add(page, item, size, off, PANIC);
}

/*
 * Add a leaf item at 'off' of the exclusively locked leaf in buf.  The
 * caller has checked that it fits.  With ddb's records and a valid
 * 'mapbuf' (a map leaf pinned by ddb_map_pin_leaf and locked by the caller
 * after the leaf: rule 1 of ddb_tree.c's header), the same record sets the
 * new version's map entry to this leaf and 'hash' (INSERT_MAP); otherwise
 * the caller defers it.  The item is logged as DDB_EXT_INSERT logs it
 * when it can be (item_compact), else whole (INSERT, INSERT_MAP).
 */
void
ddb_wal_leaf_add(Relation rel, Buffer buf, OffsetNumber off, const void *item, Size size,
				 Buffer mapbuf, uint32 hash)
{
	Page		page = BufferGetPage(buf);
	uint16		slot = 0;
	Size		clen = 0;
	Size		keyend = 0;

	ddb_vm_clear(rel, buf);
	if (!ddb_wal_custom())
	{
		GenericXLogState *state = GenericXLogStart(rel);

		page = GenericXLogRegisterBuffer(state, buf, 0);
		leaf_add(page, item, size, off, ERROR);
		GenericXLogFinish(state);
		return;
	}

	if (RelationNeedsWAL(rel) && !WAL_UNCOMPRESSED)
		clen = item_compact(item, size, &keyend);
	START_CRIT_SECTION();
	leaf_add(page, item, size, off, PANIC);
	MarkBufferDirty(buf);
	if (BufferIsValid(mapbuf))
	{
		DdbLeafItem li = (DdbLeafItem) PageGetItem(page, PageGetItemId(page, off));

		slot = (uint16) ddb_map_slot(&li->tid);
		ddb_map_apply(BufferGetPage(mapbuf), slot, BufferGetBlockNumber(buf), hash);
		MarkBufferDirty(mapbuf);
	}
	if (RelationNeedsWAL(rel))
	{
		xl_ddb_insert xlrec;
		xl_ddb_ext	ext = {DDB_EXT_INSERT, 0, off};
		XLogRecPtr	recptr;
		char		entry[sizeof(uint32) + sizeof(uint16)];

		xlrec.off = off;
		XLogBeginInsert();
		if (clen > 0)
			XLogRegisterData((char *) &ext, sizeof(ext));
		else
			XLogRegisterData((char *) &xlrec, SizeOfDdbInsert);
		XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
		if (clen > 0)
		{
			XLogRegisterBufData(0, (char *) item, keyend);
			XLogRegisterBufData(0, (char *) item_compact_rest(item), clen - keyend);
		}
		else
			XLogRegisterBufData(0, (char *) item, size);
		if (BufferIsValid(mapbuf))
		{
			memcpy(entry, &hash, sizeof(uint32));
			memcpy(entry + sizeof(uint32), &slot, sizeof(uint16));
			XLogRegisterBuffer(1, mapbuf, REGBUF_STANDARD);
			XLogRegisterBufData(1, entry, sizeof(entry));
		}
		recptr = XLogInsert(DDB_RMGR_ID, clen > 0 ? XLOG_DDB_EXT : XLOG_DDB_INSERT |
							(BufferIsValid(mapbuf) ? XLOG_DDB_INSERT_MAP : 0));
		PageSetLSN(page, recptr);
		if (BufferIsValid(mapbuf))
			PageSetLSN(BufferGetPage(mapbuf), recptr);
	}
	END_CRIT_SECTION();
}

/*
 * Add n leaf items to the exclusively locked leaf in buf, the k-th at
 * offs[k] of the page as it is after the first k were added (the caller
 * computed the offsets and checked that all fit), in one critical section
 * and one record: a batch's items of one leaf (ddb_tree_insert_multi).
 */
void
ddb_wal_leaf_add_multi(Relation rel, Buffer buf, int n, const OffsetNumber *offs,
					   char *const *items, const Size *sizes)
{
	Page		page = BufferGetPage(buf);
	char	   *data = NULL;
	Size		datalen = 0;
	bool		compact = false;

	ddb_vm_clear(rel, buf);
	if (!ddb_wal_custom())
	{
		GenericXLogState *state = GenericXLogStart(rel);

		page = GenericXLogRegisterBuffer(state, buf, 0);
		for (int k = 0; k < n; k++)
			leaf_add(page, items[k], sizes[k], offs[k], ERROR);
		GenericXLogFinish(state);
		return;
	}

	/*
	 * The block data, laid out before the critical section (it allocates):
	 * the items as DDB_EXT_INSERT_MULTI logs them when all can be
	 * (item_compact), else whole.
	 */
	if (RelationNeedsWAL(rel))
	{
		char	   *sizep;
		char	   *p;

		datalen = (sizeof(OffsetNumber) + sizeof(uint16)) * n;
		for (int k = 0; k < n; k++)
			datalen += sizes[k];
		data = palloc(datalen);
		memcpy(data, offs, sizeof(OffsetNumber) * n);
		sizep = data + sizeof(OffsetNumber) * n;
		compact = !WAL_UNCOMPRESSED && !WAL_UNKNOWN_FORM;
		p = sizep + sizeof(uint16) * n;
		for (int k = 0; compact && k < n; k++)
		{
			Size		keyend;
			uint16		sz = (uint16) item_compact(items[k], sizes[k], &keyend);

			compact = sz > 0;
			if (compact)
			{
				memcpy(p, items[k], keyend);
				memcpy(p + keyend, item_compact_rest(items[k]), sz - keyend);
			}
			memcpy(sizep + sizeof(uint16) * k, &sz, sizeof(uint16));
			p += sz;
		}
		if (!compact)
		{
			p = sizep + sizeof(uint16) * n;
			for (int k = 0; k < n; k++)
			{
				uint16		sz = (uint16) sizes[k];

				memcpy(sizep + sizeof(uint16) * k, &sz, sizeof(uint16));
				memcpy(p, items[k], sizes[k]);
				p += sizes[k];
			}
		}
		datalen = p - data;
	}

	START_CRIT_SECTION();
	for (int k = 0; k < n; k++)
		leaf_add(page, items[k], sizes[k], offs[k], PANIC);
	MarkBufferDirty(buf);
	if (RelationNeedsWAL(rel))
	{
		xl_ddb_insert_multi xlrec;
		xl_ddb_ext	ext = {DDB_EXT_INSERT_MULTI, 0, n};
		XLogRecPtr	recptr;

		xlrec.nitems = n;
		XLogBeginInsert();
		if (compact)
			XLogRegisterData((char *) &ext, sizeof(ext));
		else
			XLogRegisterData((char *) &xlrec, SizeOfDdbInsertMulti);
		XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
		XLogRegisterBufData(0, data, datalen);
		recptr = XLogInsert(DDB_RMGR_ID, compact ? XLOG_DDB_EXT :
							XLOG_DDB_INSERT_MULTI | WAL_UNKNOWN_FORM);
		PageSetLSN(page, recptr);
	}
	END_CRIT_SECTION();
	if (data)
		pfree(data);
}

/*
 * Mark the version at 'off' of the exclusively locked leaf in buf: 'mark'
 * sets its xmax fields (it must not fail or allocate).
 */
void
ddb_wal_leaf_mark(Relation rel, Buffer buf, OffsetNumber off, DdbMarkFn mark, void *arg)
{
	Page		page = BufferGetPage(buf);

	ddb_vm_clear(rel, buf);
	if (!ddb_wal_custom())
	{
		GenericXLogState *state = GenericXLogStart(rel);

		page = GenericXLogRegisterBuffer(state, buf, 0);
		mark(page, off, arg);
		GenericXLogFinish(state);
		return;
	}

	START_CRIT_SECTION();
	mark(page, off, arg);
	MarkBufferDirty(buf);
	if (RelationNeedsWAL(rel))
	{
		char		xlrec[SizeOfDdbMarkShort + sizeof(ItemPointerData)];
		uint8		info = XLOG_DDB_MARK | XLOG_DDB_MARK_SHORT;
		XLogRecPtr	recptr;
#ifdef DDB_CHECKS
		xl_ddb_mark longrec;
#endif

		XLogBeginInsert();
#ifdef DDB_CHECKS
		if (WAL_LEGACY)
		{
			mark_record(page, off, &longrec);
			XLogRegisterData((char *) &longrec, SizeOfDdbMark);
			info = XLOG_DDB_MARK;
		}
		else
#endif
			XLogRegisterData(xlrec, mark_record_short(page, off, xlrec, 0));
		XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
		recptr = XLogInsert(DDB_RMGR_ID, info);
		PageSetLSN(page, recptr);
	}
	END_CRIT_SECTION();
}

/*
 * The delta of the new leaf item 'item' (size bytes) against the old
 * version 'old' (oldsize bytes) as it is after its mark, laid out in 'out'
 * (room for size bytes), as xl_ddb_update_delta says, leaving out a zero
 * t_xmax and an unchanged t_hoff and null bitmap (UPDATE_MAP's delta), or
 * with 'legacy' logging them as UPDATE|DELTA did (ddb.check_wal_legacy).
 * Returns its length, or 0 when the new item cannot be logged that way
 * (then it is logged whole).
 */
static Size
update_delta(const char *old, Size oldsize, const char *item, Size size, char *out,
			 bool legacy)
{
	const DdbLeafItemData *oli = (const DdbLeafItemData *) old;
	DdbLeafItemData *nli = (DdbLeafItemData *) item;
	Size		tupoff = DdbLeafTupleOffset(nli->keylen);
	HeapTupleHeader oh;
	HeapTupleHeader nh;
	const char *odata;
	const char *ndata;
	Size		olen;
	Size		nlen;
	Size		prefix = 0;
	Size		suffix = 0;
	xl_ddb_update_delta d;
	char	   *p = out + SizeOfDdbUpdateDelta;

	if (oli->keylen != nli->keylen ||
		memcmp(old + sizeof(ItemPointerData), item + sizeof(ItemPointerData),
			   tupoff - sizeof(ItemPointerData)) != 0)
		return 0;
	oh = (HeapTupleHeader) (old + tupoff);
	nh = (HeapTupleHeader) (item + tupoff);
	if (!ItemPointerEquals(&nli->tid, &oh->t_ctid) ||
		HeapTupleHeaderGetRawXmin(nh) != HeapTupleHeaderGetRawXmax(oh))
		return 0;
	odata = (const char *) oh + oh->t_hoff;
	ndata = (const char *) nh + nh->t_hoff;
	olen = old + oldsize - odata;
	nlen = item + size - ndata;

	d.flags = 0;
	if (!legacy && HeapTupleHeaderGetRawXmax(nh) == InvalidTransactionId)
		d.flags |= DDB_DELTA_XMAX_ZERO;
	else
	{
		memcpy(p, &nh->t_choice.t_heap.t_xmax, sizeof(TransactionId));
		p += sizeof(TransactionId);
	}
	if (memcmp((char *) oh + DELTA_MID_START, (char *) nh + DELTA_MID_START,
			   DELTA_MID_END - DELTA_MID_START) == 0)
		d.flags |= DDB_DELTA_MID_OLD;
	else
	{
		memcpy(p, (char *) nh + DELTA_MID_START, DELTA_MID_END - DELTA_MID_START);
		p += DELTA_MID_END - DELTA_MID_START;
	}
	/* t_infomask, then t_hoff and the null bitmap unless they are the old ones */
	memcpy(p, &nh->t_infomask, sizeof(uint16));
	p += sizeof(uint16);
	if (!legacy && nh->t_hoff == oh->t_hoff &&
		memcmp((char *) nh + DELTA_HOFF, (char *) oh + DELTA_HOFF, nh->t_hoff - DELTA_HOFF) == 0)
		d.flags |= DDB_DELTA_HOFF_OLD;
	else
	{
		memcpy(p, (char *) nh + DELTA_HOFF, nh->t_hoff - DELTA_HOFF);
		p += nh->t_hoff - DELTA_HOFF;
	}

	/* the data: what it shares with the old data at either end is not logged */
	while (prefix < olen && prefix < nlen && odata[prefix] == ndata[prefix])
		prefix++;
	while (suffix < olen - prefix && suffix < nlen - prefix &&
		   odata[olen - suffix - 1] == ndata[nlen - suffix - 1])
		suffix++;
	memcpy(p, ndata + prefix, nlen - prefix - suffix);
	p += nlen - prefix - suffix;

	d.prefixlen = prefix;
	d.suffixlen = suffix;
	memcpy(out, &d, SizeOfDdbUpdateDelta);
	return p - out;
}

/*
 * Redo's side of update_delta: the new item from the old version 'old'
 * (oldsize bytes, after its mark) and the delta, into 'out' (BLCKSZ
 * bytes).  Returns its size.
 */
static Size
update_from_delta(const char *old, Size oldsize, const char *delta, Size deltalen,
				  char *out)
{
	const DdbLeafItemData *oli = (const DdbLeafItemData *) old;
	Size		tupoff = DdbLeafTupleOffset(oli->keylen);
	HeapTupleHeader oh = (HeapTupleHeader) (old + tupoff);
	HeapTupleHeader nh = (HeapTupleHeader) (out + tupoff);
	const char *odata = (const char *) oh + oh->t_hoff;
	Size		olen = old + oldsize - odata;
	const char *p = delta + SizeOfDdbUpdateDelta;
	const char *end = delta + deltalen;
	xl_ddb_update_delta d;
	Size		rest;
	char	   *ndata;

	memcpy(&d, delta, SizeOfDdbUpdateDelta);
	/* the row id, then the key's length, bytes and padding */
	memcpy(out, &oh->t_ctid, sizeof(ItemPointerData));
	memcpy(out + sizeof(ItemPointerData), old + sizeof(ItemPointerData),
		   tupoff - sizeof(ItemPointerData));
	memcpy(&nh->t_choice.t_heap.t_xmin, &oh->t_choice.t_heap.t_xmax, sizeof(TransactionId));
	if (d.flags & DDB_DELTA_XMAX_ZERO)
		HeapTupleHeaderSetXmax(nh, InvalidTransactionId);
	else
	{
		memcpy(&nh->t_choice.t_heap.t_xmax, p, sizeof(TransactionId));
		p += sizeof(TransactionId);
	}
	if (d.flags & DDB_DELTA_MID_OLD)
		memcpy((char *) nh + DELTA_MID_START, (char *) oh + DELTA_MID_START,
			   DELTA_MID_END - DELTA_MID_START);
	else
	{
		memcpy((char *) nh + DELTA_MID_START, p, DELTA_MID_END - DELTA_MID_START);
		p += DELTA_MID_END - DELTA_MID_START;
	}
	if (d.flags & DDB_DELTA_HOFF_OLD)
	{
		/* t_infomask, then t_hoff and the null bitmap from the old version */
		if (p + sizeof(uint16) > end)
			elog(PANIC, "ddb_wal_redo: invalid update delta");
		memcpy(&nh->t_infomask, p, sizeof(uint16));
		p += sizeof(uint16);
		memcpy((char *) nh + DELTA_HOFF, (char *) oh + DELTA_HOFF, oh->t_hoff - DELTA_HOFF);
	}
	else
	{
		/* t_infomask and t_hoff first: t_hoff says where the bitmap ends */
		if (p + SizeofHeapTupleHeader - DELTA_MID_END > end)
			elog(PANIC, "ddb_wal_redo: invalid update delta");
		memcpy(&nh->t_infomask, p, SizeofHeapTupleHeader - DELTA_MID_END);
		if (nh->t_hoff < SizeofHeapTupleHeader || p + nh->t_hoff - DELTA_MID_END > end)
			elog(PANIC, "ddb_wal_redo: invalid update delta");
		memcpy(&nh->t_infomask, p, nh->t_hoff - DELTA_MID_END);
		p += nh->t_hoff - DELTA_MID_END;
	}

	ndata = (char *) nh + nh->t_hoff;
	rest = end - p;
	if (d.prefixlen + d.suffixlen > olen ||
		ndata - out + d.prefixlen + rest + d.suffixlen > BLCKSZ)
		elog(PANIC, "ddb_wal_redo: invalid update delta");
	memcpy(ndata, odata, d.prefixlen);
	memcpy(ndata + d.prefixlen, p, rest);
	memcpy(ndata + d.prefixlen + rest, odata + olen - d.suffixlen, d.suffixlen);
	return ndata - out + d.prefixlen + rest + d.suffixlen;
}

#ifdef DDB_CHECKS
/*
 * ddb_wal_leaf_update under ddb.check_wal_legacy: UPDATE as earlier
 * versions of ddb wrote it, the long mark and the new item whole or as
 * UPDATE|DELTA's delta; no map leaf (the caller defers the entry) and no
 * prune in the record.
 */
static void
leaf_update_legacy(Relation rel, Buffer buf, OffsetNumber oldoff, DdbMarkFn mark,
				   void *arg, OffsetNumber newoff, const void *item, Size size)
{
	Page		page = BufferGetPage(buf);
	xl_ddb_update xlrec;
	char	   *delta = NULL;
	Size		deltalen = 0;

	if (RelationNeedsWAL(rel) && check_wal_legacy == WAL_LEGACY_DELTA)
		delta = palloc(size);

	START_CRIT_SECTION();
	mark(page, oldoff, arg);
	/* the mark's fields and the delta are read before the insert moves the item */
	mark_record(page, oldoff, &xlrec.mark);
	xlrec.newoff = newoff;
	if (delta)
	{
		ItemId		oiid = PageGetItemId(page, oldoff);

		deltalen = update_delta(PageGetItem(page, oiid), ItemIdGetLength(oiid),
								item, size, delta, true);
	}
	leaf_add(page, item, size, newoff, PANIC);
	MarkBufferDirty(buf);
	if (RelationNeedsWAL(rel))
	{
		XLogRecPtr	recptr;

		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, SizeOfDdbUpdate);
		XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
		if (deltalen > 0)
			XLogRegisterBufData(0, delta, deltalen);
		else
			XLogRegisterBufData(0, (char *) item, size);
		recptr = XLogInsert(DDB_RMGR_ID,
							XLOG_DDB_UPDATE | (deltalen > 0 ? XLOG_DDB_DELTA : 0));
		PageSetLSN(page, recptr);
	}
	END_CRIT_SECTION();
	if (delta)
		pfree(delta);
}
#endif

/*
 * One update on one leaf: mark the old version at 'oldoff', then add the
 * new item at 'newoff' (<= oldoff: newest first), in one record.  With
 * ddb's records the record also sets the new version's row-id map entry
 * in the map leaf 'mapbuf' (pinned; locked exclusively by the caller after
 * the leaf: rule 1 of ddb_tree.c's header), to this leaf and 'hash', and
 * the new item is logged as a delta against the old version (UPDATE_MAP).
 * With Generic WAL 'mapbuf' is not used: the caller defers the entry.
 */
void
ddb_wal_leaf_update(Relation rel, Buffer buf, OffsetNumber oldoff, DdbMarkFn mark,
					void *arg, OffsetNumber newoff, const void *item, Size size,
					Buffer mapbuf, uint32 hash, const DdbUpdatePrune *prune)
{
	int			npruned = prune ? prune->n : 0;
	TransactionId latestRemovedXid = prune ? prune->latestRemovedXid : InvalidTransactionId;
	Page		page = BufferGetPage(buf);
	Page		mappage;
	ItemPointerData newtid = ((const DdbLeafItemData *) item)->tid;
	char		hdr[SizeOfDdbMarkShort + sizeof(ItemPointerData) + sizeof(OffsetNumber) +
					sizeof(TransactionId) + sizeof(uint16)];
	int			hdrlen = 0;
	char	   *delta = NULL;
	Size		deltalen = 0;

	ddb_vm_clear(rel, buf);
	if (!ddb_wal_custom())
	{
		GenericXLogState *state;

		if (npruned > 0)
			elog(ERROR, "ddb update with a prune logged as Generic WAL");
		state = GenericXLogStart(rel);
		page = GenericXLogRegisterBuffer(state, buf, 0);
		mark(page, oldoff, arg);
		leaf_add(page, item, size, newoff, ERROR);
		GenericXLogFinish(state);
		return;
	}
#ifdef DDB_CHECKS
	if (WAL_LEGACY)
	{
		if (npruned > 0 || BufferIsValid(mapbuf))
			elog(ERROR, "ddb update in a legacy record with a prune or its map entry");
		leaf_update_legacy(rel, buf, oldoff, mark, arg, newoff, item, size);
		return;
	}
#endif
	if (!BufferIsValid(mapbuf))
		elog(ERROR, "ddb update logged without its row-id map leaf");
	mappage = BufferGetPage(mapbuf);
	if (!XLogStandbyInfoActive())
		latestRemovedXid = InvalidTransactionId;

	/*
	 * Room for the delta before the critical section: it is shorter than
	 * the item, whose row id, key and t_xmin it leaves out.
	 */
	if (RelationNeedsWAL(rel))
		delta = palloc(size);

	START_CRIT_SECTION();
	if (npruned > 0)
		PageIndexMultiDelete(page, prune->offsets, npruned);
	mark(page, oldoff, arg);
	/* the mark's fields and the delta are read before the insert moves the item */
	if (delta)
	{
		ItemId		oiid = PageGetItemId(page, oldoff);
		uint8		flags = (newoff != oldoff ? DDB_UPDATE_NEWOFF : 0) |
			(npruned > 0 ? DDB_UPDATE_PRUNE : 0);

		deltalen = update_delta(PageGetItem(page, oiid), ItemIdGetLength(oiid),
								item, size, delta, false);
		if (deltalen > 0)
			flags |= DDB_UPDATE_DELTA;
		hdrlen = mark_record_short(page, oldoff, hdr, flags);
		/* the old version points at the new one: its t_ctid is logged */
		Assert(hdr[SizeOfDdbMarkShort - 1] & DDB_MARK_CTID);
		if (flags & DDB_UPDATE_NEWOFF)
		{
			memcpy(hdr + hdrlen, &newoff, sizeof(OffsetNumber));
			hdrlen += sizeof(OffsetNumber);
		}
		if (flags & DDB_UPDATE_PRUNE)
		{
			uint16		n = (uint16) npruned;

			memcpy(hdr + hdrlen, &latestRemovedXid, sizeof(TransactionId));
			hdrlen += sizeof(TransactionId);
			memcpy(hdr + hdrlen, &n, sizeof(uint16));
			hdrlen += sizeof(uint16);
		}
	}
	leaf_add(page, item, size, newoff, PANIC);
	ddb_map_apply(mappage, ddb_map_slot(&newtid), BufferGetBlockNumber(buf), hash);
	for (int i = 0; i < (prune ? prune->nclear : 0); i++)
		ddb_map_apply(mappage, prune->clear[i], 0, 0);
	MarkBufferDirty(buf);
	MarkBufferDirty(mapbuf);
	if (RelationNeedsWAL(rel))
	{
		XLogRecPtr	recptr;

		XLogBeginInsert();
#ifdef DDB_CHECKS
		if (check_wal_unknown_form)
		{
			static const xl_ddb_ext unknown = {DDB_EXT_UNKNOWN, 0, 0};

			XLogRegisterData((char *) &unknown, sizeof(unknown));
		}
#endif
		XLogRegisterData(hdr, hdrlen);
		XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
		if (npruned > 0)
			XLogRegisterBufData(0, (char *) prune->offsets, sizeof(OffsetNumber) * npruned);
		if (deltalen > 0)
			XLogRegisterBufData(0, delta, deltalen);
		else
			XLogRegisterBufData(0, (char *) item, size);
		XLogRegisterBuffer(1, mapbuf, REGBUF_STANDARD);
		XLogRegisterBufData(1, (char *) &hash, sizeof(uint32));
		if (prune && prune->nclear > 0)
			XLogRegisterBufData(1, (char *) prune->clear, sizeof(uint16) * prune->nclear);
		recptr = XLogInsert(DDB_RMGR_ID, XLOG_DDB_UPDATE_MAP | WAL_UNKNOWN_FORM);
		PageSetLSN(page, recptr);
		PageSetLSN(mappage, recptr);
	}
	END_CRIT_SECTION();
	if (delta)
		pfree(delta);
}

/*
 * Set n slots of the exclusively locked row-id map leaf in buf as
 * changes[] says (MAP), or, with changes NULL, clear the slots in slots[]
 * (MAP_CLEAR).
 */
static void
map_write(Relation rel, Buffer buf, const DdbMapChange *changes, const uint16 *slots, int n)
{
	Page		page = BufferGetPage(buf);
	GenericXLogState *state = NULL;

	if (!ddb_wal_custom())
	{
		/*
		 * A slot's block may differ on a replica ("Generic WAL and fields
		 * that differ" above): before the record takes its image, make
		 * every byte of it differ from the block it gets, so that all are
		 * logged.
		 */
		state = GenericXLogStart(rel);
		for (int i = 0; i < n; i++)
			ddb_map_unmatch(page, changes ? changes[i].slot : slots[i],
							changes ? changes[i].block : 0);
		page = GenericXLogRegisterBuffer(state, buf, 0);
	}
	else
		START_CRIT_SECTION();
	for (int i = 0; i < n; i++)
	{
		if (changes)
			ddb_map_apply(page, changes[i].slot, changes[i].block, changes[i].hash);
		else
			ddb_map_apply(page, slots[i], 0, 0);
	}
	if (state)
	{
		GenericXLogFinish(state);
		return;
	}
	MarkBufferDirty(buf);
	if (RelationNeedsWAL(rel))
	{
		XLogRecPtr	recptr;

		XLogBeginInsert();
		XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
		if (changes)
			XLogRegisterBufData(0, (char *) changes, sizeof(DdbMapChange) * n);
		else
			XLogRegisterBufData(0, (char *) slots, sizeof(uint16) * n);
		recptr = XLogInsert(DDB_RMGR_ID, XLOG_DDB_MAP | (changes ? 0 : XLOG_DDB_MAP_CLEAR));
		PageSetLSN(page, recptr);
	}
	END_CRIT_SECTION();
}

/* Set n slots of the exclusively locked row-id map leaf in buf. */
void
ddb_wal_map_set(Relation rel, Buffer buf, const DdbMapChange *changes, int n)
{
	map_write(rel, buf, changes, NULL, n);
}

/*
 * Clear n slots of the exclusively locked row-id map leaf in buf: the
 * entries of versions a prune or VACUUM removed.
 */
void
ddb_wal_map_clear(Relation rel, Buffer buf, const uint16 *slots, int n)
{
	map_write(rel, buf, NULL, slots, n);
}

/*
 * Remove the versions at 'deletable' (ascending) from the exclusively
 * locked leaf in buf.  latestRemovedXid is the newest xid they make
 * invisible: replay cancels standby queries that could still see them.
 * Returns false, with nothing done, when the custom records are off: the
 * caller then logs the prune with Generic WAL (and the conflict horizon
 * with a record of its own).
 */
bool
ddb_wal_leaf_prune(Relation rel, Buffer buf, OffsetNumber *deletable, int ndeletable,
				   TransactionId latestRemovedXid)
{
	Page		page = BufferGetPage(buf);

	if (!ddb_wal_custom())
		return false;

	START_CRIT_SECTION();
	PageIndexMultiDelete(page, deletable, ndeletable);
	MarkBufferDirty(buf);
	if (RelationNeedsWAL(rel))
	{
		xl_ddb_prune xlrec;
		XLogRecPtr	recptr;

		xlrec.latestRemovedXid = XLogStandbyInfoActive() ? latestRemovedXid :
			InvalidTransactionId;
		xlrec.ndeleted = ndeletable;
		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, SizeOfDdbPrune);
		XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
		XLogRegisterBufData(0, (char *) deletable, sizeof(OffsetNumber) * ndeletable);
		recptr = XLogInsert(DDB_RMGR_ID, XLOG_DDB_PRUNE);
		PageSetLSN(page, recptr);
	}
	END_CRIT_SECTION();
	return true;
}

/*
 * UNLINK (ddb_unlink_leaf): block 0 the parent, whose downlink 'downlink'
 * (the leaf's) now names 'right' and loses the next item; block 1 the
 * left sibling, whose right-link becomes 'right'; block 2 the leaf, which
 * redo rebuilds as a deleted leaf (ddb_page_set_deleted).  No conflict
 * horizon: the unlink removes no version (the prunes that emptied the
 * leaf carried theirs).
 */
typedef struct xl_ddb_unlink
{
	OffsetNumber downlink;
	BlockNumber right;
	FullTransactionId safexid;
} xl_ddb_unlink;

#define SizeOfDdbUnlink (offsetof(xl_ddb_unlink, safexid) + sizeof(FullTransactionId))

/*
 * Unlink an empty leaf (ddb's own WAL only): the parent, the left sibling
 * and the leaf locked exclusively by the caller, in that order.  Returns
 * false, with nothing done, when the custom records are off.
 */
bool
ddb_wal_unlink(Relation rel, Buffer qbuf, OffsetNumber off, Buffer pbuf, Buffer lbuf,
			   BlockNumber right, FullTransactionId safexid)
{
	Page		q = BufferGetPage(qbuf);
	Page		p = BufferGetPage(pbuf);
	Page		l = BufferGetPage(lbuf);

	if (!ddb_wal_custom())
		return false;
	START_CRIT_SECTION();
	ddb_unlink_pages(q, off, p, l, right, safexid);
	MarkBufferDirty(qbuf);
	MarkBufferDirty(pbuf);
	MarkBufferDirty(lbuf);
	if (RelationNeedsWAL(rel))
	{
		xl_ddb_unlink xlrec;
		XLogRecPtr	recptr;

		memset(&xlrec, 0, sizeof(xlrec));
		xlrec.downlink = off;
		xlrec.right = right;
		xlrec.safexid = safexid;
		XLogBeginInsert();
		XLogRegisterData((char *) &xlrec, SizeOfDdbUnlink);
		XLogRegisterBuffer(0, qbuf, REGBUF_STANDARD);
		XLogRegisterBuffer(1, pbuf, REGBUF_STANDARD);
		XLogRegisterBuffer(2, lbuf, REGBUF_STANDARD | REGBUF_WILL_INIT);
		recptr = XLogInsert(DDB_RMGR_ID, XLOG_DDB_UNLINK);
		PageSetLSN(q, recptr);
		PageSetLSN(p, recptr);
		PageSetLSN(l, recptr);
	}
	END_CRIT_SECTION();
	return true;
}

/*
 * The right half of a split as DDB_EXT_SPLIT_PACKED logs it: its line
 * pointer lengths 'rlens' (rlenslen bytes) and its items as they lie on
 * 'rnew', compressed after their length and the method.  Returns it
 * palloc'd with its length in *len, or NULL when wal_compression is off or
 * it would not be shorter.  The method is wal_compression's: pglz, or LZ4
 * for lz4 and for zstd (ddb does not link libzstd), or pglz for both when
 * ddb was built without LZ4.  A leaf's items share their attribute names,
 * header fields and much of their keys: the bench's right halves shrink
 * to ~60 %, for ~30,000 instructions (LZ4) per split, which is why it
 * waits for wal_compression, as full-page images do.  Done before the
 * critical section.
 */
static char *
split_pack(Page rnew, const uint16 *rlens, Size rlenslen, Size *len)
{
	PageHeader	ph = (PageHeader) rnew;
	Size		rawlen = rlenslen + (ph->pd_special - ph->pd_upper);
	Size		hdr = sizeof(uint16) + sizeof(uint8);
	uint16		rawlen16 = (uint16) rawlen;
	uint8		method = DDB_PACK_PGLZ;
	char	   *raw;
	char	   *packed;
	int32		clen;

	if (wal_compression == WAL_COMPRESSION_NONE)
		return NULL;
#ifdef USE_LZ4
	if (wal_compression != WAL_COMPRESSION_PGLZ)
		method = DDB_PACK_LZ4;
#endif
	Assert(rawlen <= PG_UINT16_MAX);
	raw = palloc(rawlen);
	memcpy(raw, rlens, rlenslen);
	memcpy(raw + rlenslen, (char *) rnew + ph->pd_upper, ph->pd_special - ph->pd_upper);
	packed = palloc(hdr + Max(PGLZ_MAX_OUTPUT(rawlen), rawlen + rawlen / 255 + 16));
#ifdef USE_LZ4
	if (method == DDB_PACK_LZ4)
		clen = LZ4_compress_default(raw, packed + hdr, rawlen, LZ4_compressBound(rawlen));
	else
#endif
		clen = pglz_compress(raw, rawlen, packed + hdr, PGLZ_strategy_default);
	pfree(raw);
	if (clen > 0 && hdr + clen < rawlen)
	{
		memcpy(packed, &rawlen16, sizeof(uint16));
		memcpy(packed + sizeof(uint16), &method, sizeof(uint8));
		*len = hdr + clen;
		return packed;
	}
	pfree(packed);
	return NULL;
}

/*
 * Redo's side of split_pack: the right half's block data as
 * ddb_split_leaf_right_redo reads it (inpage), palloc'd, from the packed
 * block data 'in' (inlen bytes): its bytes must be what its line pointer
 * lengths say, and they must fit on a leaf.
 */
static char *
split_unpack(const char *in, Size inlen)
{
	Size		hdr = sizeof(uint16) + sizeof(uint8);
	uint16		rawlen;
	uint8		method;
	char	   *raw;
	int32		got = -1;
	uint16		n;
	Size		items = 0;

	if (inlen < hdr)
		elog(PANIC, "ddb_wal_redo: invalid compressed split");
	memcpy(&rawlen, in, sizeof(uint16));
	memcpy(&method, in + sizeof(uint16), sizeof(uint8));
	raw = palloc(rawlen);
	if (method == DDB_PACK_PGLZ)
		got = pglz_decompress(in + hdr, inlen - hdr, raw, rawlen, true);
	else if (method == DDB_PACK_LZ4)
	{
#ifdef USE_LZ4
		got = LZ4_decompress_safe(in + hdr, raw, inlen - hdr, rawlen);
#else
		elog(PANIC, "ddb WAL record of a leaf split compressed with LZ4: this server's ddb was built without LZ4 support");
#endif
	}
	else
		elog(PANIC, "ddb WAL record of a leaf split compressed with unknown method %u: this server's ddb is older than the one that wrote it",
			 method);
	if (got != rawlen || rawlen < sizeof(uint16))
		elog(PANIC, "ddb_wal_redo: invalid compressed split");
	/* the items must be what the lengths say, as the page lays them out */
	memcpy(&n, raw, sizeof(uint16));
	if (sizeof(uint16) * (n + 1) > rawlen)
		elog(PANIC, "ddb_wal_redo: invalid compressed split");
	for (int i = 1; i <= n; i++)
	{
		uint16		len;

		memcpy(&len, raw + sizeof(uint16) * i, sizeof(uint16));
		items += MAXALIGN(len);
	}
	if (sizeof(uint16) * (n + 1) + items != rawlen ||
		SizeOfPageHeaderData + sizeof(ItemIdData) * n + items >
		BLCKSZ - MAXALIGN(sizeof(DdbPageOpaqueData)))
		elog(PANIC, "ddb_wal_redo: invalid compressed split");
	return raw;
}

/*
 * A leaf split (ddb's own WAL only), all buffers locked exclusively by the
 * caller, rbuf a new page: the parent gets the new downlink 'dl' (dlsize
 * bytes, built by the caller) at 'downlink', or, when its prefix shrinks
 * to newpp, becomes ptmp, rewritten aside by the caller; the leaf becomes
 * 'lnew', which keeps its first nleft items under the separator, and the
 * new page 'rnew', the rest: the halves the caller made aside
 * (ddb_split_leaf_right, _left under a prefix of 'splitplen' bytes, and
 * with storage version 3 each then under its own, ddb_leaf_relay).  The
 * record carries the right half as it lies on its page, after its line
 * pointer lengths (ddb_split_leaf_right_lens), and, when a prefix differs
 * from the split leaf's, is the EXT form SPLIT_ITEMS with the prefixes;
 * with wal_compression on, SPLIT_PACKED, the right half compressed
 * (split_pack).
 */
void
ddb_wal_leaf_split(Relation rel, Buffer pbuf, OffsetNumber downlink, int newpp,
				   Page ptmp, const void *dl, Size dlsize, Buffer lbuf, Page lnew,
				   int nleft, int splitplen, const char *sep, int seplen, Buffer rbuf,
				   Page rnew)
{
	Page		ppage = BufferGetPage(pbuf);
	Page		lpage = BufferGetPage(lbuf);
	Page		rpage = BufferGetPage(rbuf);
	uint16		oldplen = DdbPageGetOpaque(lpage)->prefixlen;
	uint16		plens[2] = {splitplen, DdbPageGetOpaque(lnew)->prefixlen};
	xl_ddb_ext	ext = {DDB_EXT_SPLIT, 0, DdbPageGetOpaque(rnew)->prefixlen};
	bool		isext;
	Size		rlenslen;
	uint16	   *rlens = ddb_split_leaf_right_lens(rnew, &rlenslen);

	char	   *packed = NULL;
	Size		packedlen = 0;

	Assert(ddb_wal_custom());
	if (splitplen != oldplen || plens[1] != oldplen || ext.arg != oldplen)
		ext.form = DDB_EXT_SPLIT_ITEMS;
	if (RelationNeedsWAL(rel) && !WAL_UNCOMPRESSED)
		packed = split_pack(rnew, rlens, rlenslen, &packedlen);
	if (packed != NULL)
		ext.form = DDB_EXT_SPLIT_PACKED;
	isext = ext.form != DDB_EXT_SPLIT || ext.arg > 0;
	START_CRIT_SECTION();
	if (ptmp != NULL)
		ddb_page_replace(ppage, ptmp);
	else if (PageAddItem(ppage, (Item) dl, dlsize, downlink, false, false) == InvalidOffsetNumber)
		elog(PANIC, "failed to add downlink of size %zu to ddb page", dlsize);
	memcpy(rpage, rnew, BLCKSZ);
	ddb_page_replace(lpage, lnew);
	MarkBufferDirty(pbuf);
	MarkBufferDirty(lbuf);
	MarkBufferDirty(rbuf);
	if (RelationNeedsWAL(rel))
	{
		xl_ddb_split xlrec;
		XLogRecPtr	recptr;
		PageHeader	rph = (PageHeader) rpage;

		memset(&xlrec, 0, sizeof(xlrec));
		xlrec.rightlink = DdbPageGetOpaque(rpage)->right;
		xlrec.downlink = downlink;
		xlrec.newpp = newpp;
		xlrec.nleft = nleft;
		xlrec.flags = DdbPageGetOpaque(rpage)->flags;
		xlrec.seplen = seplen;
		xlrec.hashk = !DdbPageIsRightmost(rpage);
		XLogBeginInsert();
		if (isext)
			XLogRegisterData((char *) &ext, sizeof(ext));
		if (ext.form != DDB_EXT_SPLIT)
			XLogRegisterData((char *) plens, sizeof(plens));
		XLogRegisterData((char *) &xlrec, SizeOfDdbSplit);
		XLogRegisterData((char *) sep, seplen);
		XLogRegisterBuffer(0, pbuf, REGBUF_STANDARD);
		XLogRegisterBuffer(1, lbuf, REGBUF_STANDARD);
		XLogRegisterBuffer(2, rbuf, REGBUF_STANDARD | REGBUF_WILL_INIT);
		if (packed != NULL)
			XLogRegisterBufData(2, packed, packedlen);
		else
		{
			XLogRegisterBufData(2, (char *) rlens, rlenslen);
			XLogRegisterBufData(2, (char *) rpage + rph->pd_upper, rph->pd_special - rph->pd_upper);
		}
		recptr = XLogInsert(DDB_RMGR_ID,
							isext ? XLOG_DDB_EXT : XLOG_DDB_SPLIT | XLOG_DDB_SPLIT_INPAGE);
		PageSetLSN(ppage, recptr);
		PageSetLSN(lpage, recptr);
		PageSetLSN(rpage, recptr);
	}
	END_CRIT_SECTION();
	pfree(rlens);
	if (packed != NULL)
		pfree(packed);
}

/*
 * Log that leaf blkno's visibility map bit was just set on the map page in
 * vmbuf (DDB_EXT_VM_SET), in the caller's critical section, and set the
 * page's LSN.  With ddb's own records only (ddb_vismap.c's vm_change).
 */
void
ddb_wal_vm_set(Relation rel, Buffer vmbuf, BlockNumber blkno)
{
	xl_ddb_ext	ext = {DDB_EXT_VM_SET, 0, 0};

	Assert(ddb_wal_custom());
	if (RelationNeedsWAL(rel))
	{
		XLogRecPtr	recptr;

		XLogBeginInsert();
		XLogRegisterData((char *) &ext, sizeof(ext));
		XLogRegisterData((char *) &blkno, sizeof(BlockNumber));
		XLogRegisterBuffer(0, vmbuf, 0);
		recptr = XLogInsert(DDB_RMGR_ID, XLOG_DDB_EXT);
		PageSetLSN(BufferGetPage(vmbuf), recptr);
	}
}

/*
 * Log that leaf blkno's visibility map bit was just cleared
 * (DDB_EXT_VM_CLEAR), in the caller's critical section, holding the leaf
 * exclusively.  With ddb's own records only (ddb_vismap.c's vm_change).
 */
void
ddb_wal_vm_clear(Relation rel, BlockNumber blkno)
{
	xl_ddb_ext	ext = {DDB_EXT_VM_CLEAR, 0, 0};

	Assert(ddb_wal_custom());
	if (RelationNeedsWAL(rel))
	{
		XLogBeginInsert();
		XLogRegisterData((char *) &ext, sizeof(ext));
		XLogRegisterData((char *) &rel->rd_node, sizeof(RelFileNode));
		XLogRegisterData((char *) &blkno, sizeof(BlockNumber));
		(void) XLogInsert(DDB_RMGR_ID, XLOG_DDB_EXT);
	}
}

/*
 * Re-lay leaf 'buf' (locked exclusively by the caller, who checked that it
 * fits) under a prefix of 'newplen' bytes (ddb_leaf_relay), in a record of
 * its own: with ddb's own WAL the EXT form RELAY, which redo re-lays the
 * page from, else a Generic WAL record of the page.
 */
void
ddb_wal_leaf_relay(Relation rel, Buffer buf, int newplen)
{
	ddb_vm_clear(rel, buf);
	if (!ddb_wal_custom())
	{
		GenericXLogState *state = GenericXLogStart(rel);

		ddb_leaf_relay(GenericXLogRegisterBuffer(state, buf, DDB_GENERIC_ITEMS_MOVE), newplen);
		GenericXLogFinish(state);
		return;
	}
	START_CRIT_SECTION();
	ddb_leaf_relay(BufferGetPage(buf), newplen);
	MarkBufferDirty(buf);
	if (RelationNeedsWAL(rel))
	{
		xl_ddb_ext	ext = {DDB_EXT_RELAY, 0, newplen};
		XLogRecPtr	recptr;

		XLogBeginInsert();
		XLogRegisterData((char *) &ext, sizeof(ext));
		XLogRegisterBuffer(0, buf, REGBUF_STANDARD);
		recptr = XLogInsert(DDB_RMGR_ID, XLOG_DDB_EXT);
		PageSetLSN(BufferGetPage(buf), recptr);
	}
	END_CRIT_SECTION();
}

/* ------------------------------------------------------------------------
 * Redo
 * ------------------------------------------------------------------------
 */

/*
 * SPLIT, whose xl_ddb_split is at 'xlrec' (the main data's start, or after
 * an EXT record's xl_ddb_ext): 'inpage' its right half's form, 'prefixlen'
 * the split leaf's prefix, which the right half keeps (0 for a plain
 * SPLIT; the left half has it already).
 */
static void
split_redo(XLogReaderState *record, xl_ddb_split *xlrec, bool inpage, uint16 prefixlen,
		   const uint16 *plens, bool packed)
{
	Size		rlen = 0;
	char	   *rdata = XLogRecGetBlockData(record, 2, &rlen);
	XLogRecPtr	lsn = record->EndRecPtr;
	char	   *sep = (char *) xlrec + SizeOfDdbSplit;
	BlockNumber rblkno;
	Buffer		pbuf,
				lbuf,
				rbuf;
	Page		page;

	XLogRecGetBlockTag(record, 2, NULL, NULL, &rblkno);
	if (packed)
		rdata = split_unpack(rdata, rlen);

	/* all three locked until all are changed: readers see the split whole */
	if (XLogReadBufferForRedo(record, 0, &pbuf) == BLK_NEEDS_REDO)
	{
		page = BufferGetPage(pbuf);
		ddb_split_parent(page, xlrec->downlink, rblkno, sep, xlrec->seplen, xlrec->newpp);
		PageSetLSN(page, lsn);
		MarkBufferDirty(pbuf);
	}
	if (XLogReadBufferForRedo(record, 1, &lbuf) == BLK_NEEDS_REDO)
	{
		page = BufferGetPage(lbuf);
		ddb_split_leaf_left(page, xlrec->nleft, sep, xlrec->seplen, rblkno,
							plens ? plens[0] : DdbPageGetOpaque(page)->prefixlen);
		if (plens && plens[1] != plens[0])
			ddb_leaf_relay(page, plens[1]);
		PageSetLSN(page, lsn);
		MarkBufferDirty(lbuf);
	}
	rbuf = XLogInitBufferForRedo(record, 2);
	page = BufferGetPage(rbuf);
	ddb_split_leaf_right_redo(page, xlrec->flags, xlrec->rightlink, prefixlen, rdata, inpage);
	if (packed)
		pfree(rdata);
	PageSetLSN(page, lsn);
	MarkBufferDirty(rbuf);

	UnlockReleaseBuffer(rbuf);
	if (BufferIsValid(lbuf))
		UnlockReleaseBuffer(lbuf);
	if (BufferIsValid(pbuf))
		UnlockReleaseBuffer(pbuf);
}

/*
 * The map entry an UPDATE_MAP or INSERT_MAP sets in its map leaf, block 1,
 * redone while the caller holds block 0, the leaf, as the primary did.
 * It comes from block 0's tag (the leaf's block number), block 1's data
 * (the hash; an INSERT_MAP's slot after it) and, for an update, the new
 * row id 'tid' in the main data -- never from block 0's page, which may be
 * newer than this record (then it is not redone) or restored from an
 * image (then its block data is not logged).
 */
static void
map_entry_redo(XLogReaderState *record, const ItemPointerData *tid)
{
	Buffer		mbuf;
	BlockNumber leafblk;

	XLogRecGetBlockTag(record, 0, NULL, NULL, &leafblk);
	if (XLogReadBufferForRedo(record, 1, &mbuf) == BLK_NEEDS_REDO)
	{
		Page		mpage = BufferGetPage(mbuf);
		Size		datalen;
		char	   *data = XLogRecGetBlockData(record, 1, &datalen);
		uint32		hash;
		uint16		slot;

		if (tid ? datalen < sizeof(uint32) || (datalen - sizeof(uint32)) % sizeof(uint16) != 0 :
			datalen != sizeof(uint32) + sizeof(uint16))
			elog(PANIC, "ddb_wal_redo: invalid row-id map entry");
		memcpy(&hash, data, sizeof(uint32));
		if (tid)
			slot = (uint16) ddb_map_slot((ItemPointer) tid);
		else
			memcpy(&slot, data + sizeof(uint32), sizeof(uint16));
		ddb_map_apply(mpage, slot, leafblk, hash);
		/* an update's prune: the cleared entries on this map leaf */
		for (Size i = sizeof(uint32); tid && i < datalen; i += sizeof(uint16))
		{
			memcpy(&slot, data + i, sizeof(uint16));
			ddb_map_apply(mpage, slot, 0, 0);
		}
		PageSetLSN(mpage, record->EndRecPtr);
		MarkBufferDirty(mbuf);
	}
	if (BufferIsValid(mbuf))
		UnlockReleaseBuffer(mbuf);
}

/*
 * UPDATE_MAP: the leaf (block 0) as UPDATE's redo changes it, then the map
 * leaf (block 1), both locked until both are changed, in the primary's
 * order.
 */
static void
update_map_redo(XLogReaderState *record)
{
	XLogRecPtr	lsn = record->EndRecPtr;
	char	   *rec = XLogRecGetData(record);
	xl_ddb_mark m;
	uint8		flags;
	int			len = mark_from_short(NULL, rec, &m, &flags);
	OffsetNumber newoff = m.off;
	Buffer		buf;
	char	   *data;
	Size		datalen;
	TransactionId latestRemovedXid = InvalidTransactionId;
	uint16		npruned = 0;

	if (!(flags & DDB_MARK_CTID))
		elog(PANIC, "ddb_wal_redo: update without its new row id");
	if (flags & DDB_UPDATE_NEWOFF)
	{
		memcpy(&newoff, rec + len, sizeof(OffsetNumber));
		len += sizeof(OffsetNumber);
	}
	if (flags & DDB_UPDATE_PRUNE)
	{
		memcpy(&latestRemovedXid, rec + len, sizeof(TransactionId));
		len += sizeof(TransactionId);
		memcpy(&npruned, rec + len, sizeof(uint16));
		len += sizeof(uint16);
		/* before the page changes: cancel queries that could see them */
		if (InHotStandby && TransactionIdIsValid(latestRemovedXid))
		{
			RelFileNode rnode;

			XLogRecGetBlockTag(record, 0, &rnode, NULL, NULL);
			ResolveRecoveryConflictWithSnapshot(latestRemovedXid, rnode);
		}
	}
	if (len != XLogRecGetDataLen(record))
		elog(PANIC, "ddb_wal_redo: invalid update record");

	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);

		data = XLogRecGetBlockData(record, 0, &datalen);
		if (npruned > 0)
		{
			OffsetNumber pruned[MaxOffsetNumber];

			if (npruned > MaxOffsetNumber || datalen < sizeof(OffsetNumber) * npruned)
				elog(PANIC, "ddb_wal_redo: invalid update record");
			memcpy(pruned, data, sizeof(OffsetNumber) * npruned);
			PageIndexMultiDelete(page, pruned, npruned);
			data += sizeof(OffsetNumber) * npruned;
			datalen -= sizeof(OffsetNumber) * npruned;
		}
		mark_apply(page, &m);
		if (flags & DDB_UPDATE_DELTA)
		{
			PGAlignedBlock item;
			ItemId		oiid = PageGetItemId(page, m.off);
			Size		size;

			size = update_from_delta(PageGetItem(page, oiid), ItemIdGetLength(oiid),
									 data, datalen, item.data);
			leaf_add(page, item.data, size, newoff, PANIC);
		}
		else
			leaf_add(page, data, datalen, newoff, PANIC);
		PageSetLSN(page, lsn);
		MarkBufferDirty(buf);
	}
	map_entry_redo(record, &m.ctid);
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

static void
unlink_redo(XLogReaderState *record)
{
	XLogRecPtr	lsn = record->EndRecPtr;
	xl_ddb_unlink *xlrec = (xl_ddb_unlink *) XLogRecGetData(record);
	Buffer		qbuf,
				pbuf,
				lbuf;
	Page		page;

	/* all three locked until all are changed: readers see the unlink whole */
	if (XLogReadBufferForRedo(record, 0, &qbuf) == BLK_NEEDS_REDO)
	{
		page = BufferGetPage(qbuf);
		ddb_unlink_parent(page, xlrec->downlink, xlrec->right);
		PageSetLSN(page, lsn);
		MarkBufferDirty(qbuf);
	}
	if (XLogReadBufferForRedo(record, 1, &pbuf) == BLK_NEEDS_REDO)
	{
		page = BufferGetPage(pbuf);
		DdbPageGetOpaque(page)->right = xlrec->right;
		PageSetLSN(page, lsn);
		MarkBufferDirty(pbuf);
	}
	lbuf = XLogInitBufferForRedo(record, 2);
	page = BufferGetPage(lbuf);
	ddb_page_set_deleted(page, DDB_PAGE_LEAF, xlrec->right, xlrec->safexid);
	PageSetLSN(page, lsn);
	MarkBufferDirty(lbuf);

	UnlockReleaseBuffer(lbuf);
	if (BufferIsValid(pbuf))
		UnlockReleaseBuffer(pbuf);
	if (BufferIsValid(qbuf))
		UnlockReleaseBuffer(qbuf);
}

/*
 * Is a record of this info a form this version of ddb knows?  Every kind
 * without the bit 0x80; with it, the kinds that give it a meaning.  A form
 * it does not know was written by a later ddb (whose standbys must be
 * upgraded first): it must not be misread as another, neither by redo nor
 * by the description of it in redo's error context and pg_walinspect.
 */
static bool
info_known(uint8 info)
{
	uint8		op = info & XLOG_DDB_OPMASK;

	if (!(info & 0x80))
		return true;
	return op == XLOG_DDB_UPDATE || op == XLOG_DDB_MARK || op == XLOG_DDB_MAP ||
		op == XLOG_DDB_INSERT || op == XLOG_DDB_SPLIT || op == XLOG_DDB_PRUNE ||
		op == XLOG_DDB_UPDATE_MAP;	/* EXT */
}

static void
ddb_wal_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & XLOG_DDB_OPMASK;
	XLogRecPtr	lsn = record->EndRecPtr;
	Buffer		buf;
	char	   *data;
	Size		datalen;
	TransactionId compact_xid = InvalidTransactionId;	/* EXT INSERT(_MULTI) */
	uint16		ext_arg = 0;

	if (!info_known(XLogRecGetInfo(record)))
		elog(PANIC, "ddb WAL record with unknown info 0x%02X: this server's ddb is older than the one that wrote it",
			 XLogRecGetInfo(record) & ~XLR_INFO_MASK);

	if ((XLogRecGetInfo(record) & ~XLR_INFO_MASK) == XLOG_DDB_EXT)
	{
		xl_ddb_ext ext;

		memcpy(&ext, XLogRecGetData(record), sizeof(ext));
		if (ext.form == DDB_EXT_SPLIT)
			split_redo(record, (xl_ddb_split *) (XLogRecGetData(record) + sizeof(ext)), true,
					   ext.arg, NULL, false);
		else if (ext.form == DDB_EXT_SPLIT_ITEMS || ext.form == DDB_EXT_SPLIT_PACKED)
		{
			uint16		plens[2];

			memcpy(plens, XLogRecGetData(record) + sizeof(ext), sizeof(plens));
			split_redo(record,
					   (xl_ddb_split *) (XLogRecGetData(record) + sizeof(ext) + sizeof(plens)),
					   true, ext.arg, plens, ext.form == DDB_EXT_SPLIT_PACKED);
		}
		else if (ext.form == DDB_EXT_INSERT || ext.form == DDB_EXT_INSERT_MULTI)
		{
			/* INSERT and INSERT_MULTI below, the items as item_compact logs them */
			info = ext.form == DDB_EXT_INSERT ? XLOG_DDB_INSERT : XLOG_DDB_INSERT_MULTI;
			compact_xid = XLogRecGetXid(record);
			ext_arg = ext.arg;
		}
		else if (ext.form == DDB_EXT_VM_CLEAR)
		{
			RelFileNode rnode;
			BlockNumber blkno;

			memcpy(&rnode, XLogRecGetData(record) + sizeof(ext), sizeof(rnode));
			memcpy(&blkno, XLogRecGetData(record) + sizeof(ext) + sizeof(rnode), sizeof(blkno));
			ddb_vm_clear_redo(rnode, blkno);
		}
		else if (ext.form == DDB_EXT_VM_SET)
		{
			BlockNumber blkno;

			memcpy(&blkno, XLogRecGetData(record) + sizeof(ext), sizeof(blkno));
			if (XLogReadBufferForRedoExtended(record, 0, RBM_ZERO_ON_ERROR, false, &buf) ==
				BLK_NEEDS_REDO)
			{
				ddb_vm_set_in_page(BufferGetPage(buf), blkno);
				PageSetLSN(BufferGetPage(buf), lsn);
				MarkBufferDirty(buf);
			}
			if (BufferIsValid(buf))
				UnlockReleaseBuffer(buf);
		}
		else if (ext.form == DDB_EXT_RELAY)
		{
			if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
			{
				ddb_leaf_relay(BufferGetPage(buf), ext.arg);
				PageSetLSN(BufferGetPage(buf), lsn);
				MarkBufferDirty(buf);
			}
			if (BufferIsValid(buf))
				UnlockReleaseBuffer(buf);
		}
		else
			elog(PANIC, "ddb WAL record with unknown info 0x%02X form %u: this server's ddb is older than the one that wrote it",
				 XLOG_DDB_EXT, ext.form);
		if (!TransactionIdIsValid(compact_xid))
			return;
	}
	if (info == XLOG_DDB_SPLIT)
	{
		split_redo(record, (xl_ddb_split *) XLogRecGetData(record),
				   (XLogRecGetInfo(record) & XLOG_DDB_SPLIT_INPAGE) != 0, 0, NULL, false);
		return;
	}
	if ((XLogRecGetInfo(record) & ~XLR_INFO_MASK) == XLOG_DDB_UNLINK)
	{
		unlink_redo(record);
		return;
	}
	if (info == XLOG_DDB_UPDATE_MAP)
	{
		update_map_redo(record);
		return;
	}

	if (info == XLOG_DDB_PRUNE && InHotStandby)
	{
		xl_ddb_prune *xlrec = (xl_ddb_prune *) XLogRecGetData(record);
		RelFileNode rnode;

		/* before the page changes: cancel queries that could see them */
		XLogRecGetBlockTag(record, 0, &rnode, NULL, NULL);
		if (TransactionIdIsValid(xlrec->latestRemovedXid))
			ResolveRecoveryConflictWithSnapshot(xlrec->latestRemovedXid, rnode);
	}

	if (XLogReadBufferForRedo(record, 0, &buf) == BLK_NEEDS_REDO)
	{
		Page		page = BufferGetPage(buf);

		data = XLogRecGetBlockData(record, 0, &datalen);
		switch (info)
		{
			case XLOG_DDB_INSERT:
				leaf_add_logged(page, data, datalen,
								TransactionIdIsValid(compact_xid) ? ext_arg :
								((xl_ddb_insert *) XLogRecGetData(record))->off,
								compact_xid);
				break;
			case XLOG_DDB_INSERT_MULTI:
				{
					int			n = TransactionIdIsValid(compact_xid) ? ext_arg :
						((xl_ddb_insert_multi *) XLogRecGetData(record))->nitems;
					char	   *sizes = data + sizeof(OffsetNumber) * n;
					char	   *item = sizes + sizeof(uint16) * n;

					if (item > data + datalen)
						elog(PANIC, "ddb_wal_redo: invalid inserted items");
					for (int k = 0; k < n; k++)
					{
						OffsetNumber off;
						uint16		sz;

						memcpy(&off, data + sizeof(OffsetNumber) * k, sizeof(OffsetNumber));
						memcpy(&sz, sizes + sizeof(uint16) * k, sizeof(uint16));
						if (item + sz > data + datalen)
							elog(PANIC, "ddb_wal_redo: invalid inserted items");
						leaf_add_logged(page, item, sz, off, compact_xid);
						item += sz;
					}
					break;
				}
			case XLOG_DDB_MARK:
				if (XLogRecGetInfo(record) & XLOG_DDB_MARK_SHORT)
				{
					xl_ddb_mark m;
					uint8		flags;

					mark_from_short(page, XLogRecGetData(record), &m, &flags);
					mark_apply(page, &m);
				}
				else
					mark_apply(page, (xl_ddb_mark *) XLogRecGetData(record));
				break;
			case XLOG_DDB_UPDATE:
				{
					xl_ddb_update *xlrec = (xl_ddb_update *) XLogRecGetData(record);

					mark_apply(page, &xlrec->mark);
					if (XLogRecGetInfo(record) & XLOG_DDB_DELTA)
					{
						PGAlignedBlock item;
						ItemId		oiid = PageGetItemId(page, xlrec->mark.off);
						Size		size;

						size = update_from_delta(PageGetItem(page, oiid),
												 ItemIdGetLength(oiid), data, datalen,
												 item.data);
						leaf_add(page, item.data, size, xlrec->newoff, PANIC);
					}
					else
						leaf_add(page, data, datalen, xlrec->newoff, PANIC);
					break;
				}
			case XLOG_DDB_MAP:
				if (XLogRecGetInfo(record) & XLOG_DDB_MAP_CLEAR)
				{
					uint16		slot;

					for (Size i = 0; i + sizeof(uint16) <= datalen; i += sizeof(uint16))
					{
						memcpy(&slot, data + i, sizeof(uint16));
						ddb_map_apply(page, slot, 0, 0);
					}
				}
				else
				{
					DdbMapChange *c = (DdbMapChange *) data;
					int			n = datalen / sizeof(DdbMapChange);

					for (int i = 0; i < n; i++)
						ddb_map_apply(page, c[i].slot, c[i].block, c[i].hash);
				}
				break;
			case XLOG_DDB_PRUNE:
				{
					xl_ddb_prune *xlrec = (xl_ddb_prune *) XLogRecGetData(record);

					PageIndexMultiDelete(page, (OffsetNumber *) data, xlrec->ndeleted);
					break;
				}
			default:
				elog(PANIC, "ddb_wal_redo: unknown op code %u", info);
		}
		PageSetLSN(page, lsn);
		MarkBufferDirty(buf);
	}
	if (info == XLOG_DDB_INSERT && XLogRecHasBlockRef(record, 1))	/* INSERT_MAP */
		map_entry_redo(record, NULL);
	if (BufferIsValid(buf))
		UnlockReleaseBuffer(buf);
}

/* ------------------------------------------------------------------------
 * Description (server logs, pg_walinspect) and consistency-check masking
 * ------------------------------------------------------------------------
 */

static const char *
ddb_wal_identify(uint8 info)
{
	if (!info_known(info))
		return NULL;			/* PostgreSQL shows "UNKNOWN (info)" */
	switch (info & XLOG_DDB_OPMASK)
	{
		case XLOG_DDB_INSERT:
			return (info & XLOG_DDB_INSERT_MAP) ? "INSERT_MAP" : "INSERT";
		case XLOG_DDB_MARK:
			return "MARK";
		case XLOG_DDB_UPDATE:
			return (info & XLOG_DDB_DELTA) ? "UPDATE_DELTA" : "UPDATE";
		case XLOG_DDB_MAP:
			return (info & XLOG_DDB_MAP_CLEAR) ? "MAP_CLEAR" : "MAP";
		case XLOG_DDB_PRUNE:
			return (info & 0x80) ? "UNLINK" : "PRUNE";
		case XLOG_DDB_SPLIT:
			return "SPLIT";
		case XLOG_DDB_INSERT_MULTI:
			return "INSERT_MULTI";
		case XLOG_DDB_UPDATE_MAP:
			return (info & 0x80) ? "EXT" : "UPDATE_MAP";
	}
	return NULL;
}

static void
desc_mark(StringInfo buf, const xl_ddb_mark *m)
{
	appendStringInfo(buf, "off %u xmax %u%s ctid (%u,%u)", m->off, m->xmax,
					 (m->infomask & HEAP_XMAX_LOCK_ONLY) ? " lock-only" : "",
					 ItemPointerGetBlockNumberNoCheck(&m->ctid),
					 ItemPointerGetOffsetNumberNoCheck(&m->ctid));
}

static void
ddb_wal_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & XLOG_DDB_OPMASK;
	char	   *rec = XLogRecGetData(record);
	Size		datalen = 0;

	if (!info_known(XLogRecGetInfo(record)))
		return;					/* its layout is a later ddb's */
	if ((XLogRecGetInfo(record) & ~XLR_INFO_MASK) == XLOG_DDB_EXT)
	{
		xl_ddb_ext ext;

		memcpy(&ext, rec, sizeof(ext));
		rec += sizeof(ext);
		if (ext.form == DDB_EXT_SPLIT)
			appendStringInfo(buf, "SPLIT, prefix %u bytes: ", ext.arg);
		else if (ext.form == DDB_EXT_SPLIT_ITEMS)
		{
			uint16		plens[2];

			memcpy(plens, rec, sizeof(plens));
			rec += sizeof(plens);
			appendStringInfo(buf, "SPLIT, prefixes %u, left %u, right %u bytes: ",
							 plens[0], plens[1], ext.arg);
		}
		else if (ext.form == DDB_EXT_SPLIT_PACKED)
		{
			uint16		plens[2];
			Size		rlen = 0;
			char	   *rdata = XLogRecGetBlockData(record, 2, &rlen);
			uint8		method = 0;

			if (rlen > sizeof(uint16))
				memcpy(&method, rdata + sizeof(uint16), sizeof(uint8));
			memcpy(plens, rec, sizeof(plens));
			rec += sizeof(plens);
			appendStringInfo(buf, "SPLIT (right half %s), prefixes %u, left %u, right %u bytes: ",
							 method == DDB_PACK_LZ4 ? "lz4" : method == DDB_PACK_PGLZ ? "pglz" : "compressed",
							 plens[0], plens[1], ext.arg);
		}
		else if (ext.form == DDB_EXT_RELAY)
		{
			appendStringInfo(buf, "RELAY, prefix %u bytes", ext.arg);
			return;
		}
		else if (ext.form == DDB_EXT_VM_SET)
		{
			BlockNumber blkno;

			memcpy(&blkno, rec, sizeof(blkno));
			appendStringInfo(buf, "VM_SET, blk %u", blkno);
			return;
		}
		else if (ext.form == DDB_EXT_VM_CLEAR)
		{
			RelFileNode rnode;
			BlockNumber blkno;

			memcpy(&rnode, rec, sizeof(rnode));
			memcpy(&blkno, rec + sizeof(rnode), sizeof(blkno));
			appendStringInfo(buf, "VM_CLEAR, rel %u/%u/%u blk %u", rnode.spcNode, rnode.dbNode,
							 rnode.relNode, blkno);
			return;
		}
		else if (ext.form == DDB_EXT_INSERT || ext.form == DDB_EXT_INSERT_MULTI)
		{
			(void) XLogRecGetBlockData(record, 0, &datalen);	/* 0 under a full image */
			appendStringInfo(buf, ext.form == DDB_EXT_INSERT ? "INSERT, off %u" : "INSERT_MULTI, items %u",
							 ext.arg);
			if (datalen > 0)
				appendStringInfo(buf, ", %zu bytes without what redo knows", datalen);
			if (ext.form == DDB_EXT_INSERT && XLogRecHasBlockRef(record, 1))
				appendStringInfoString(buf, ", with its map entry");
			return;
		}
		else
		{
			appendStringInfo(buf, "unknown form %u", ext.form);
			return;				/* its layout is a later ddb's */
		}
		info = XLOG_DDB_SPLIT;
	}
	(void) XLogRecGetBlockData(record, 0, &datalen);	/* 0 under a full image */
	switch (info)
	{
		case XLOG_DDB_INSERT:
			appendStringInfo(buf, "off %u", ((xl_ddb_insert *) rec)->off);
			if (datalen > 0)
				appendStringInfo(buf, ", item %zu bytes", datalen);
			break;
		case XLOG_DDB_INSERT_MULTI:
			appendStringInfo(buf, "items %u", ((xl_ddb_insert_multi *) rec)->nitems);
			if (datalen > 0)
				appendStringInfo(buf, ", %zu bytes", datalen);
			break;
		case XLOG_DDB_MARK:
			if (XLogRecGetInfo(record) & XLOG_DDB_MARK_SHORT)
			{
				uint16		infomask;
				TransactionId xmax;
				uint8		flags;
				OffsetNumber off;

				memcpy(&off, rec, sizeof(off));
				memcpy(&infomask, rec + sizeof(off), sizeof(infomask));
				memcpy(&xmax, rec + sizeof(off) + sizeof(infomask), sizeof(xmax));
				memcpy(&flags, rec + sizeof(off) + sizeof(infomask) + sizeof(xmax), sizeof(flags));
				appendStringInfo(buf, "off %u xmax %u%s%s", off, xmax,
								 (infomask & HEAP_XMAX_LOCK_ONLY) ? " lock-only" : "",
								 (flags & DDB_MARK_CTID) ? " ctid logged" : "");
			}
			else
				desc_mark(buf, (xl_ddb_mark *) rec);
			break;
		case XLOG_DDB_UPDATE:
			desc_mark(buf, &((xl_ddb_update *) rec)->mark);
			appendStringInfo(buf, "; new off %u", ((xl_ddb_update *) rec)->newoff);
			if (datalen > 0 && (XLogRecGetInfo(record) & XLOG_DDB_DELTA))
			{
				xl_ddb_update_delta d;

				memcpy(&d, XLogRecGetBlockData(record, 0, NULL), SizeOfDdbUpdateDelta);
				appendStringInfo(buf, ", delta %zu bytes (data prefix %u, suffix %u from old)",
								 datalen, d.prefixlen, d.suffixlen);
			}
			else if (datalen > 0)
				appendStringInfo(buf, ", item %zu bytes", datalen);
			break;
		case XLOG_DDB_MAP:
			if (datalen > 0 && (XLogRecGetInfo(record) & XLOG_DDB_MAP_CLEAR))
				appendStringInfo(buf, "cleared %zu", datalen / sizeof(uint16));
			else if (datalen > 0)
				appendStringInfo(buf, "entries %zu", datalen / sizeof(DdbMapChange));
			break;
		case XLOG_DDB_UPDATE_MAP:
			{
				xl_ddb_mark m;
				uint8		flags;
				int			len = mark_from_short(NULL, rec, &m, &flags);
				OffsetNumber newoff = m.off;

				uint16		npruned = 0;

				if (flags & DDB_UPDATE_NEWOFF)
				{
					memcpy(&newoff, rec + len, sizeof(OffsetNumber));
					len += sizeof(OffsetNumber);
				}
				if (flags & DDB_UPDATE_PRUNE)
					memcpy(&npruned, rec + len + sizeof(TransactionId), sizeof(uint16));
				desc_mark(buf, &m);
				appendStringInfo(buf, "; new off %u", newoff);
				if (npruned > 0)
					appendStringInfo(buf, "; pruned %u first", npruned);
				if (datalen > 0)
					datalen -= sizeof(OffsetNumber) * npruned;
				if (datalen > 0 && (flags & DDB_UPDATE_DELTA))
				{
					xl_ddb_update_delta d;

					memcpy(&d, XLogRecGetBlockData(record, 0, NULL) + sizeof(OffsetNumber) * npruned,
						   SizeOfDdbUpdateDelta);
					appendStringInfo(buf, ", delta %zu bytes (data prefix %u, suffix %u from old)",
									 datalen, d.prefixlen, d.suffixlen);
				}
				else if (datalen > 0)
					appendStringInfo(buf, ", item %zu bytes", datalen);
				break;
			}
		case XLOG_DDB_PRUNE:
			if ((XLogRecGetInfo(record) & ~XLR_INFO_MASK) == XLOG_DDB_UNLINK)
			{
				xl_ddb_unlink *x = (xl_ddb_unlink *) rec;

				appendStringInfo(buf, "downlink %u now to %u, safexid %u:%u", x->downlink,
								 x->right, EpochFromFullTransactionId(x->safexid),
								 XidFromFullTransactionId(x->safexid));
				break;
			}
			appendStringInfo(buf, "latestRemovedXid %u ndeleted %u",
							 ((xl_ddb_prune *) rec)->latestRemovedXid,
							 ((xl_ddb_prune *) rec)->ndeleted);
			break;
		case XLOG_DDB_SPLIT:
			{
				xl_ddb_split *x = (xl_ddb_split *) rec;

				(void) XLogRecGetBlockData(record, 2, &datalen);
				appendStringInfo(buf, "left keeps %u, downlink at %u, separator %u bytes, right half %zu bytes",
								 x->nleft, x->downlink, x->seplen, datalen);
				break;
			}
	}
}

/*
 * wal_consistency_checking = 'ddb': what may differ between a page and its
 * replay is what changes without WAL: the tuples' hint bits, as heap_mask
 * masks them, the command ids a short MARK and the EXT INSERT and
 * INSERT_MULTI forms do not log (heap_mask masks t_cid too), and the
 * row-id map's block hints (ddb_map_mask); redo writes exactly the other
 * fields the primary set.
 */
static void
ddb_wal_mask(char *pagedata, BlockNumber blkno)
{
	Page		page = (Page) pagedata;

	mask_page_lsn_and_checksum(page);
	mask_page_hint_bits(page);
	mask_unused_space(page);

	if (PageIsNew(page) || PageGetSpecialSize(page) != MAXALIGN(sizeof(DdbPageOpaqueData)))
		return;
	if ((DdbPageGetOpaque(page)->flags & (DDB_PAGE_MAP_LEAF | DDB_PAGE_DELETED)) == DDB_PAGE_MAP_LEAF)
		ddb_map_mask(page);
	else if (DdbPageIsLeaf(page))
	{
		OffsetNumber maxoff = PageGetMaxOffsetNumber(page);

		for (OffsetNumber off = DdbPageFirstData(page); off <= maxoff; off++)
		{
			ItemId		iid = PageGetItemId(page, off);
			HeapTupleHeader t;

			if (!ItemIdIsNormal(iid))
				continue;
			t = DdbLeafItemGetTuple((DdbLeafItem) PageGetItem(page, iid));
			t->t_infomask &= ~(HEAP_XMIN_COMMITTED | HEAP_XMIN_INVALID |
							   HEAP_XMAX_COMMITTED | HEAP_XMAX_INVALID);
			/*
			 * a short MARK's redo, and an EXT INSERT's or INSERT_MULTI's,
			 * sets the command id to FirstCommandId
			 */
			t->t_infomask &= ~HEAP_COMBOCID;
			t->t_choice.t_heap.t_field3.t_cid = MASK_MARKER;
		}
	}
}

static const RmgrData ddb_rmgr = {
	.rm_name = "ddb",
	.rm_redo = ddb_wal_redo,
	.rm_desc = ddb_wal_desc,
	.rm_identify = ddb_wal_identify,
	.rm_mask = ddb_wal_mask,
};

/*
 * From _PG_init: register the resource manager when the library is being
 * preloaded; otherwise Generic WAL it is (see the header).
 */
void
ddb_wal_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	RegisterCustomRmgr(DDB_RMGR_ID, (RmgrData *) &ddb_rmgr);
	ddb_wal_registered = true;
}
