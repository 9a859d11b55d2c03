/*-------------------------------------------------------------------------
 *
 * ddb.h
 *	  ddb: DynamoDB-style tables for PostgreSQL.
 *
 * This header is the table of contents of the extension: shared types,
 * then prototypes grouped by the file that defines them.  Structs used by
 * one file only stay private to that file.
 *
 * The sources are in layers, a folder each; a layer calls only the layers
 * below it, never one above:
 *
 *	 api/		the SQL functions (item API, Query/Scan, GSIs, LSIs, TTL),
 *				the DynamoDB protocol and the TTL background worker;
 *				calls model/ and engine/
 *	 planner/	the DdbKeyScan CustomScan for plain SQL; calls engine/
 *	 model/		DynamoDB items and the expression language, on jsonb only;
 *				calls nothing of ddb's
 *	 engine/	the table access method: key encoding, the B-link tree, row
 *				ids, MVCC, WAL, vacuum, the verifier; calls nothing above it
 *
 *-------------------------------------------------------------------------
 */
#ifndef DDB_H
#define DDB_H

#include "access/htup.h"
#include "access/relscan.h"
#include "access/stratnum.h"
#include "access/tableam.h"
#include "lib/stringinfo.h"
#include "nodes/parsenodes.h"
#include "utils/hsearch.h"
#include "utils/jsonb.h"
#include "storage/block.h"
#include "storage/buf.h"
#include "storage/bufpage.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"

/*
 * Invariant checks.  Debian's server is built without assertions, so ddb has
 * its own, compiled in with -DDDB_CHECKS (CI always sets it).  A failed
 * check is an ERROR naming the invariant, never a silent continue.
 */
#ifdef DDB_CHECKS
#define DdbCheck(cond) \
	do { \
		if (unlikely(!(cond))) \
			elog(ERROR, "ddb invariant violated: %s (%s:%d)", \
				 #cond, __FILE__, __LINE__); \
	} while (0)
#else
#define DdbCheck(cond)	((void) 0)
#endif

#include "ddb_errors.h"

/* DynamoDB's item size limit (bytes, computed as DynamoDB does). */
#define DDB_MAX_ITEM_BYTES			(400 * 1024)

/* DynamoDB's key limits (bytes of the raw value). */
#define DDB_MAX_PARTITION_KEY_BYTES	2048
#define DDB_MAX_SORT_KEY_BYTES		1024

/* Most key columns a ddb table may have (partition key + sort keys). */
#define DDB_MAX_KEY_COLUMNS			8

/* Key column types, DynamoDB's scalar key types. */
typedef enum DdbKeyType
{
	DDB_KEY_S = 'S',			/* text */
	DDB_KEY_N = 'N',			/* numeric */
	DDB_KEY_B = 'B'				/* bytea */
} DdbKeyType;

/*
 * The key schema of a ddb table, derived from its columns: attribute 1 is the
 * partition key, attributes 2..nkeys are sort keys, and the last attribute is
 * the jsonb item.  ddb_get_keyinfo's copy stays valid across relcache
 * invalidations (see ddb_shape.c).
 */
typedef struct DdbKeyInfo
{
	int			nkeys;			/* partition key + sort keys */
	AttrNumber	keyattno[DDB_MAX_KEY_COLUMNS];
	DdbKeyType	keytype[DDB_MAX_KEY_COLUMNS];
	AttrNumber	itemattno;		/* the jsonb column */
	int			natts;			/* RelationGetNumberOfAttributes */
} DdbKeyInfo;

/*
 * Where an internal page of the tree was last found in shared buffers: a
 * hint for ReadRecentBuffer, which checks it (see ddb_read_internal).
 */
#define DDB_BUFFER_HINTS	64

typedef struct DdbBufferHint
{
	BlockNumber blkno;
	Buffer		buffer;			/* InvalidBuffer: no hint */
	uint32		uses;			/* reads through the hint, for its refresh */
} DdbBufferHint;

/*
 * Per-relation backend-local cache, hung off rd_amcache.  Freed (and so
 * rebuilt) on every relcache invalidation, which TRUNCATE, CLUSTER and
 * ALTER TABLE all cause, and so do a concurrent VACUUM or ANALYZE: a
 * pointer to it must not be held across anything that may take a lock.
 */
typedef struct DdbRelCache
{
	const DdbKeyInfo *keyinfo;	/* outside rd_amcache: see ddb_shape.c */
	bool		initialized;	/* metapage known to exist */
	BlockNumber root;			/* cached root, 0 (the metapage) = unknown */
	uint32		version;		/* storage version read from the metapage,
								 * 0 = not read yet (ddb_page.h, "Leaf
								 * prefix") */
	int			rootlevel;		/* level of the cached root */
	uint64		rowid_next;		/* next row id of this backend's batch */
	uint64		rowid_end;		/* end (exclusive) of the batch */
	uint32		rowid_batch;	/* its size, 0 = none yet (ddb_alloc_rowid) */
	BlockNumber nblocks_seen;	/* a size the fork has reached (it shrinks
								 * only when truncated, which resets this) */
	int			fillfactor;		/* ddb_fillfactor, 0 = not read yet */
	BlockNumber map_leaf;		/* the row-id map leaf this backend last
								 * wrote, 0 = none (ddb_rowid.c) */
	uint64		map_leaf_first; /* the first row id map_leaf covers */
	BlockNumber leaf;			/* the leaf the last descent's downlink named */
	BlockNumber leaf_parent;	/* and the page that named it, 0 = none
								 * (ddb_make_room_below) */
	uint16		fsm_skip;		/* allocations left before ddb_new_buffer
								 * asks a free space map fork found
								 * missing again (ddb_tree.c) */
	TransactionId leaf_xmin;	/* MyProc->xmin when leaf was read: valid
								 * while it is still held (ddb_tree.c,
								 * rule 5) */
	DdbBufferHint hints[DDB_BUFFER_HINTS];	/* internal pages, by block
											 * number modulo their number */
} DdbRelCache;

/*
 * Row ids.  Every stored version gets a 48-bit logical row id, presented to
 * the executor as a TID (block = rowid / DDB_ROWIDS_PER_BLOCK, offset =
 * rowid % DDB_ROWIDS_PER_BLOCK + 1) so offsets stay within
 * 1..MaxHeapTuplesPerPage and bitmap scans stay legal.
 */
#define DDB_ROWIDS_PER_BLOCK	MaxHeapTuplesPerPage

static inline void
ddb_rowid_to_tid(uint64 rowid, ItemPointer tid)
{
	ItemPointerSet(tid, (BlockNumber) (rowid / DDB_ROWIDS_PER_BLOCK),
				   (OffsetNumber) (rowid % DDB_ROWIDS_PER_BLOCK + 1));
}

static inline uint64
ddb_tid_to_rowid(ItemPointer tid)
{
	return (uint64) ItemPointerGetBlockNumberNoCheck(tid) * DDB_ROWIDS_PER_BLOCK +
		(ItemPointerGetOffsetNumberNoCheck(tid) - 1);
}

/*
 * A key range over the encoded key space, in the order the tree stores it.
 * lo is inclusive, hi exclusive; a NULL bound is unbounded.  Bounds compare
 * against the key part of items (not the version suffix).  See ddb_tree.c.
 */
typedef struct DdbRange
{
	const char *lo;
	int			lolen;
	const char *hi;
	int			hilen;
} DdbRange;

/* An ordered scan of a key range; opaque outside ddb_scan.c. */
typedef struct DdbRangeScanData *DdbRangeScan;

/* ddb_main.c */
extern void _PG_init(void);

/* engine/ddb_handler.c */
extern void ddb_engine_init(void);

/*
 * engine/ddb_wal.c: the hot-path page changes and their WAL, ddb's own
 * resource manager when preloaded, Generic WAL otherwise
 */
typedef void (*DdbMarkFn) (Page page, OffsetNumber off, void *arg);
/* the prune an update makes in its own record (ddb_wal_leaf_update) */
typedef struct DdbUpdatePrune
{
	OffsetNumber *offsets;		/* the removed versions, ascending */
	int			n;
	TransactionId latestRemovedXid;
	uint16	   *clear;			/* their map slots in the new version's map leaf */
	int			nclear;
} DdbUpdatePrune;
typedef struct DdbMapChange
{
	BlockNumber block;			/* 0 clears the slot */
	uint32		hash;
	uint16		slot;
} DdbMapChange;
extern void ddb_wal_init(void);
extern bool ddb_wal_custom(void);
extern bool ddb_wal_map_in_record(void);
#ifdef DDB_CHECKS
extern void ddb_wal_checks_init(void);
#endif
extern void ddb_wal_leaf_add(Relation rel, Buffer buf, OffsetNumber off,
							 const void *item, Size size, Buffer mapbuf,
							 uint32 hash);
extern void ddb_wal_leaf_mark(Relation rel, Buffer buf, OffsetNumber off,
							  DdbMarkFn mark, void *arg);
extern void ddb_wal_leaf_update(Relation rel, Buffer buf, OffsetNumber oldoff,
								DdbMarkFn mark, void *arg, OffsetNumber newoff,
								const void *item, Size size, Buffer mapbuf,
								uint32 hash, const DdbUpdatePrune *prune);
extern void ddb_wal_leaf_add_multi(Relation rel, Buffer buf, int n, const OffsetNumber *offs,
								   char *const *items, const Size *sizes);
extern void ddb_wal_map_set(Relation rel, Buffer buf, const DdbMapChange *changes, int n);
extern void ddb_wal_map_clear(Relation rel, Buffer buf, const uint16 *slots, int n);
extern bool ddb_wal_leaf_prune(Relation rel, Buffer buf, OffsetNumber *deletable,
							   int ndeletable, TransactionId latestRemovedXid);
extern bool ddb_wal_unlink(Relation rel, Buffer qbuf, OffsetNumber off, Buffer pbuf,
						   Buffer lbuf, BlockNumber right, FullTransactionId safexid);
extern void ddb_wal_leaf_split(Relation rel, Buffer pbuf, OffsetNumber downlink, int newpp,
							   Page ptmp, const void *dl, Size dlsize, Buffer lbuf, Page lnew,
							   int nleft, int splitplen, const char *sep, int seplen,
							   Buffer rbuf, Page rnew);
extern void ddb_wal_leaf_relay(Relation rel, Buffer buf, int newplen);

/* engine/ddb_shape.c */
extern const DdbKeyInfo *ddb_get_keyinfo(Relation rel);
extern int	ddb_keyinfo_forget(bool (*gone) (Oid relid));
extern bool ddb_keyinfo_cached(Oid relid);
extern int	ddb_cache_forget(HTAB *cache, bool (*gone) (Oid relid),
							 void (*forget) (void *entry));
extern DdbRelCache *ddb_get_relcache(Relation rel);
extern void ddb_reset_relcache(Relation rel, bool truncated_in_place);
extern bool ddb_is_ddb_relation(Relation rel);
extern Relation ddb_open_table(Oid relid, AclMode mode);
extern Relation ddb_open_locked_table(Oid relid, AclMode mode);
extern bool ddb_has_user_delete_trigger(Relation rel);
extern LOCKMODE ddb_api_lockmode(AclMode mode);
extern int	ddb_search_path_pin(void);
extern void ddb_search_path_unpin(int nestlevel);

/*
 * engine/ddb_key.c: the order-preserving key encoding and the routing hash.
 *
 * An encoded key is
 *
 *		hash32(enc(pk)) as 4 bytes big-endian || enc(pk) || enc(sk1) || ...
 *
 * where enc() of each column is self-delimiting and memcmp-ordered:
 *	S (text)   : UTF-8 bytes, 0x00 escaped as 0x00 0xFF, then 0x00 0x01
 *	B (bytea)  : same as S over the raw bytes
 *	N (numeric): normalized decimal; see ddb_key.c for the byte layout
 * Comparing two encoded keys of one table with memcmp (shorter first on a
 * tie: ddb_compare_bytes, in engine/ddb_tree.c) orders them by (hash, pk,
 * sk...), each column by DynamoDB's rules; requests that write several
 * items lock them in that order (the rule: api/ddb_batch.c's header).
 */
extern int	ddb_compare_bytes(const char *a, int alen, const char *b, int blen);
extern void ddb_encode_key_column(StringInfo buf, DdbKeyType type, Datum value);
extern void ddb_encode_key(const DdbKeyInfo *ki, Datum *values, bool *isnull,
						   StringInfo buf);
extern int	ddb_encode_key_prefix(const DdbKeyInfo *ki, Datum *values, int nvalues,
								  StringInfo buf);
extern void ddb_decode_key(const DdbKeyInfo *ki, const char *key, int keylen,
						   Datum *values, bool *isnull);
extern uint32 ddb_key_hash(const char *key);
extern const char *ddb_key_check(const DdbKeyInfo *ki, const char *key, int keylen);
extern void ddb_decode_key_raw(const DdbKeyInfo *ki, const char *key, int keylen,
							   Datum *values, bool *isnull,
							   const char **raw, int *rawlen);
extern void ddb_decode_key_some(const DdbKeyInfo *ki, const char *key, int keylen,
								const bool *want, Datum *values, bool *isnull);
extern const char *ddb_decode_key_column(DdbKeyType type, const char *p,
										 const char *end, Datum *value);
extern uint32 ddb_hash32(const char *data, int len);
extern int	ddb_key_partition_len(DdbKeyType type, const char *key, int keylen);
extern bool ddb_key_successor(const char *key, int keylen, StringInfo out);
extern int	ddb_key_value_bytes(DdbKeyType type, Datum value);
extern void ddb_check_key_value(DdbKeyType type, Datum value, bool partition,
								const char *colname);
extern const char *ddb_key_type_name(DdbKeyType type);

/* engine/ddb_tree.c: pages, descent, splits */
extern bool ddb_tree_exists(Relation rel);
extern void ddb_tree_init_if_needed(Relation rel);
typedef enum DdbUniqueCheck
{
	DDB_UNIQUE_NONE,			/* the caller knows the key is free */
	DDB_UNIQUE_ERROR,			/* a live duplicate is unique_violation */
	DDB_UNIQUE_RETURN			/* a live duplicate makes the insert return false */
} DdbUniqueCheck;
extern bool ddb_tree_insert(Relation rel, const char *key, int keylen,
							ItemPointer tid, HeapTuple tuple,
							DdbUniqueCheck check_unique);
extern bool ddb_tree_insert_at(Relation rel, BlockNumber first_leaf,
							   const char *key, int keylen, ItemPointer tid,
							   HeapTuple tuple, DdbUniqueCheck check_unique);
extern bool ddb_unlink_leaf(Relation rel, BlockNumber lblk, const char *hk, int hklen,
							bool remember);
extern void ddb_forget_unlinked(Relation rel);

/*
 * One new version of a batch (ddb_insert_versions, ddb_tree_insert_multi):
 * its encoded key, its stored tuple, and what became of it.
 */
typedef struct DdbNewVersion
{
	const char *key;			/* encoded key */
	int			keylen;
	HeapTuple	tuple;			/* the stored tuple (key columns NULL) */
	ItemPointerData tid;		/* its row id, set by ddb_insert_versions */
	bool		inserted;		/* false: DDB_UNIQUE_RETURN found the key live */
} DdbNewVersion;
extern int	ddb_tree_insert_multi(Relation rel, DdbNewVersion *versions, int n,
								  DdbUniqueCheck check_unique, bool stop_at_live);

/*
 * Scratch memory for one batch, kept from batch to batch (ddb_scratch_enter
 * in ddb_tree.c).  A static DdbScratch per use: {NULL, "name", bytes kept}.
 */
typedef struct DdbScratch
{
	MemoryContext cxt;
	const char *name;			/* a string constant */
	Size		keep;			/* the first block, which a reset keeps */
} DdbScratch;
extern MemoryContext ddb_scratch_enter(DdbScratch *s);
extern void ddb_scratch_leave(DdbScratch *s, MemoryContext cxt);
extern bool ddb_tree_insert_beside(Relation rel, Buffer buf, OffsetNumber *oldoff,
								   const char *key, int keylen, ItemPointer tid,
								   HeapTuple tuple, DdbMarkFn mark, void *arg,
								   Buffer mapbuf, bool key_first_leaf,
								   ItemPointerData **removed, int *nremoved);
extern uint64 ddb_alloc_rowid(Relation rel);
extern uint64 ddb_rowid_end(Relation rel);
extern void ddb_check_item_limits(Relation rel, int keylen, Size itemsize);
extern void ddb_duplicate_key_error(Relation rel) pg_attribute_noreturn();
extern const char *ddb_user_relation_name(Relation rel);
#ifdef DDB_CHECKS
extern void ddb_checks_init(void);
extern void ddb_scan_checks_init(void);
extern void ddb_check_pause_leaf(void);
extern void ddb_check_pause_unlink(void);
extern uint32 ddb_new_tree_version(void);
#define DDB_CHECK_PAUSE_LEAF() ddb_check_pause_leaf()
#define DDB_CHECK_PAUSE_UNLINK() ddb_check_pause_unlink()
#else
#define DDB_CHECK_PAUSE_LEAF() ((void) 0)
#define DDB_CHECK_PAUSE_UNLINK() ((void) 0)
#define ddb_new_tree_version() DDB_VERSION
#endif
extern Buffer ddb_new_buffer(Relation rel);
/* the leaf reserve: WITH (fillfactor = N), default DDB_DEFAULT_FILLFACTOR */
#define DDB_DEFAULT_FILLFACTOR	95
extern int	ddb_fillfactor(Relation rel);
extern Size ddb_leaf_reserve_bytes(Relation rel);

/* engine/ddb_rowid.c: the row-id map */
extern void ddb_map_clear(Relation rel, ItemPointerData *tids, int n);
/* blocks [0, n) a VACUUM has read (ddb_vacuum.c's free-page pass skips them) */
typedef struct DdbBlockSet
{
	bool	   *in;
	BlockNumber n;
} DdbBlockSet;

static inline void
ddb_block_set_add(DdbBlockSet *set, BlockNumber blkno)
{
	if (set != NULL && blkno < set->n)
		set->in[blkno] = true;
}

extern BlockNumber ddb_map_free_empty(Relation rel, BufferAccessStrategy bstrategy,
									  DdbBlockSet *seen);
extern void ddb_map_apply(Page page, int slot, BlockNumber block, uint32 hash);
extern void ddb_map_unmatch(Page page, int slot, BlockNumber block);
extern void ddb_map_mask(Page page);
extern void ddb_map_make_room(void);
extern Buffer ddb_map_pin_leaf(Relation rel, ItemPointer tid);
extern uint64 ddb_map_leaf_rowids(void);
extern void ddb_map_lock_leaf(Relation rel, Buffer buf);
extern int	ddb_map_slot(ItemPointer tid);
extern bool ddb_map_same_leaf(ItemPointer a, ItemPointer b);
extern void ddb_map_set_deferred(Relation rel, ItemPointer tid, BlockNumber block,
								 uint32 hash);
extern void ddb_map_flush(Relation rel);
extern void ddb_map_flush_all(void);
extern void ddb_map_forget(Relation rel);
extern bool ddb_find_version(Relation rel, ItemPointer tid, int mode, Buffer *buf,
							 OffsetNumber *off);
/* how a row-id map entry led to its version (ddb_verify reports the others) */
typedef enum DdbHintResult
{
	DDB_HINT_OK,				/* the walk from the entry's block found it */
	DDB_HINT_NOT_LEAF,			/* the entry names a block that is not a leaf */
	DDB_HINT_MISSED				/* the walk from it passed the hash's key space */
} DdbHintResult;
extern bool ddb_find_version_ext(Relation rel, ItemPointer tid, int mode, Buffer *buf,
								 OffsetNumber *off, DdbHintResult *hint_result);
extern bool ddb_map_check(Relation rel, ItemPointer tid, uint32 hash, BlockNumber *hint);
extern uint64 ddb_map_mark_pages(Relation rel, bool *seen, BlockNumber nblocks, uint64 *entries);
extern bool ddb_map_has_entry(Relation rel, ItemPointer tid);
extern void ddb_map_build(Relation rel, BlockNumber *blocks, uint32 *hashes, uint64 n,
						  BlockNumber *root, int *levels);

/* engine/ddb_build.c: bulk build (VACUUM FULL, CLUSTER) */
typedef struct DdbBuildState DdbBuildState;
extern DdbBuildState *ddb_build_begin(Relation rel);
extern void ddb_build_add(DdbBuildState *bs, const char *key, int keylen,
						  ItemPointer tid, HeapTuple stored);
extern void ddb_build_end(DdbBuildState *bs);
extern void ddb_copy_for_cluster(Relation OldTable, Relation NewTable,
								 TransactionId OldestXmin, double *num_tuples,
								 double *tups_vacuumed, double *tups_recently_dead);

/* engine/ddb_bulk.c: COPY's spool, built bottom-up into a new file or inserted in key order */
extern bool ddb_bulk_load;
extern void ddb_bulk_init(void);
extern bool ddb_bulk_multi_insert(Relation rel, TupleTableSlot **slots, int ntuples,
								  CommandId cid, int options);
extern void ddb_bulk_finish(Relation rel);

/* engine/ddb_scan.c: ordered range scans and point lookups */

/* A visible version as stored (key columns NULL), with its encoded key. */
typedef struct DdbStoredItem
{
	HeapTupleData tuple;		/* first: a DdbStoredItem is a HeapTuple too */
	const char *key;
	int			keylen;
} DdbStoredItem;

extern DdbRangeScan ddb_range_begin(Relation rel, Snapshot snapshot,
									const DdbRange *range, bool forward);
extern DdbRangeScan ddb_range_begin_stored(Relation rel, Snapshot snapshot,
										   const DdbRange *range, bool forward);
extern HeapTuple ddb_range_next(DdbRangeScan scan);
extern BlockNumber ddb_range_leaf(DdbRangeScan scan, OffsetNumber *off);
extern DdbStoredItem *ddb_range_next_stored(DdbRangeScan scan);
extern void ddb_range_end(DdbRangeScan scan);
extern void ddb_range_want(DdbRangeScan scan, int n);
extern void ddb_range_rescan(DdbRangeScan scan, const DdbRange *range,
							 bool forward);
extern HeapTuple ddb_lookup(Relation rel, Snapshot snapshot,
							const char *key, int keylen);
extern DdbStoredItem *ddb_lookup_stored(Relation rel, Snapshot snapshot,
										const char *key, int keylen);
extern bool ddb_find_current(Relation rel, const char *key, int keylen,
							 ItemPointer tid, TransactionId *wait_xid);
typedef void (*DdbCurrentFn) (Relation rel, Buffer buf, OffsetNumber off,
							  HeapTuple htup, void *arg);
extern bool ddb_find_current_ext(Relation rel, const char *key, int keylen,
								 ItemPointer tid, TransactionId *wait_xid,
								 DdbCurrentFn found, void *arg,
								 BlockNumber *first_leaf);

/* engine/ddb_tuple.c: leaf tuples <-> full heap tuples of the table's row type */
extern HeapTuple ddb_form_stored_tuple(Relation rel, TupleTableSlot *slot,
									   StringInfo key);
extern HeapTuple ddb_form_stored_values(Relation rel, Datum *values, bool *isnull,
										StringInfo key);
extern HeapTuple ddb_form_stored_item(Relation rel, Jsonb *itemcol);

/*
 * The check of a plain SQL write's item column against the item API's
 * rules, which live above the engine: the API layer installs it
 * (ddb_api_init), so that the engine imports nothing from the layers above.
 * It may replace the item column in 'values' with the one to store.
 */
typedef void (*DdbItemColumnCheck) (Relation rel, const DdbKeyInfo *ki, Datum *values);
extern DdbItemColumnCheck ddb_item_column_check;
extern HeapTuple ddb_expand_tuple(Relation rel, const char *key, int keylen,
								  HeapTupleHeader stored, uint32 storedlen,
								  ItemPointer tid);
extern Datum ddb_stored_item_column(const DdbKeyInfo *ki, TupleDesc desc,
									HeapTuple stored, bool *isnull);

extern bool ddb_stored_tuple_needs_toast(Relation rel, HeapTuple tuple, HeapTuple old,
										 int keylen);
extern HeapTuple ddb_toast_stored_tuple(Relation rel, HeapTuple tuple, HeapTuple old,
										 int keylen);

/* engine/ddb_modify.c: fetch, update, delete, lock single versions */
extern HeapTuple ddb_fetch_version(Relation rel, ItemPointer tid, Snapshot snapshot,
								   bool *visible);
extern void ddb_version_seen_on(Relation rel, ItemPointer tid, BlockNumber leaf,
								OffsetNumber off);
extern void ddb_forget_versions_seen(Relation rel);
extern TM_Result ddb_delete_version(Relation rel, ItemPointer tid, CommandId cid,
									Snapshot crosscheck, bool wait,
									TM_FailureData *tmfd, bool changingPart);
extern TM_Result ddb_update_version(Relation rel, ItemPointer otid, HeapTuple newtup,
									const char *newkey, int newkeylen, CommandId cid,
									Snapshot crosscheck, bool wait,
									TM_FailureData *tmfd, ItemPointer newtid);
extern TM_Result ddb_delete_version_at(Relation rel, ItemPointer tid, BlockNumber leaf,
									   CommandId cid, TM_FailureData *tmfd);
extern TM_Result ddb_update_version_at(Relation rel, ItemPointer otid, BlockNumber leaf,
									   HeapTuple newtup, const char *newkey, int newkeylen,
									   CommandId cid, TM_FailureData *tmfd,
									   ItemPointer newtid);
extern TM_Result ddb_lock_version(Relation rel, ItemPointer tid, CommandId cid,
								  LockWaitPolicy wait_policy, TM_FailureData *tmfd,
								  HeapTuple *tuple);
extern void ddb_prepare_new_version(Relation rel, HeapTuple stored, CommandId cid,
									ItemPointer tid);
extern bool ddb_insert_version(Relation rel, const char *key, int keylen,
							   HeapTuple stored, CommandId cid,
							   DdbUniqueCheck check, ItemPointer tid);
extern bool ddb_insert_version_at(Relation rel, BlockNumber first_leaf,
								  const char *key, int keylen, HeapTuple stored,
								  CommandId cid, DdbUniqueCheck check, ItemPointer tid);
extern void ddb_insert_versions(Relation rel, DdbNewVersion *versions, int n,
								CommandId cid, DdbUniqueCheck check, bool frozen);
extern void ddb_prepare_versions(Relation rel, DdbNewVersion *versions, int n,
								 CommandId cid, bool frozen);
extern int	ddb_place_versions(Relation rel, DdbNewVersion *versions, int n,
							   DdbUniqueCheck check, bool stop_at_live);
extern bool ddb_lock_current(Relation rel, const char *key, int keylen,
							 CommandId cid, ItemPointer tid, HeapTuple *current);
extern bool ddb_read_current(Relation rel, const char *key, int keylen,
							 ItemPointer tid, HeapTuple *current, BlockNumber *leaf);
extern bool ddb_retry_after_conflict(TM_Result result);

/* engine/ddb_vacuum.c: VACUUM, pruning, ANALYZE sampling */
struct VacuumParams;
struct GlobalVisState;
extern void ddb_vacuum_rel(Relation rel, struct VacuumParams *params,
						   BufferAccessStrategy bstrategy);
extern int	ddb_prune_leaf(Relation rel, Buffer buf, struct GlobalVisState *vistest,
						   void *freeze_state, ItemPointerData *removed, void *stats_out);
extern void ddb_log_reuse(Relation rel, BlockNumber blkno, FullTransactionId safexid);
extern int	ddb_prune_read_leaf(Relation rel, BlockNumber blkno);
extern bool ddb_prune_before_split(Relation rel, Buffer buf, ItemPointerData *removed,
								   int *nremoved);
extern int	ddb_prune_plan(Relation rel, Buffer buf, OffsetNumber *deletable,
						   ItemPointerData *removed, TransactionId *latestRemovedXid);
extern bool ddb_analyze_next_block(Relation rel, BlockNumber blockno,
								   BufferAccessStrategy bstrategy, Buffer *buf,
								   OffsetNumber *off);
extern HeapTuple ddb_analyze_next_tuple(Relation rel, Buffer *buf, OffsetNumber *off,
										TransactionId OldestXmin, double *liverows,
										double *deadrows);

/* api/ddb_item.c: API items <-> rows */
extern const char *ddb_key_name(Relation rel, int k);
extern Jsonb *ddb_tuple_to_item(Relation rel, HeapTuple tuple);
extern Jsonb *ddb_stored_to_item(Relation rel, DdbStoredItem *si,
								 const char *const *keynames);
extern Jsonb *ddb_stored_to_item_in(Relation rel, DdbStoredItem *si,
									const char *const *keynames,
									StringInfo out, int offset);
extern Jsonb *ddb_jsonb_array(Jsonb **elems, int n);
extern Jsonb *ddb_jsonb_object(const char **keys, Jsonb **vals, int n);
extern void ddb_key_from_jsonb(Relation rel, Jsonb *doc, bool exact,
							   Datum *values, bool *isnull, StringInfo enckey);
extern bool ddb_jbv_is_key_type(DdbKeyType type, JsonbValue *v);
extern void ddb_key_from_jsonb_named(Relation rel, const char **names, Jsonb *doc,
									 bool exact, Datum *values, bool *isnull,
									 StringInfo enckey);
extern Jsonb *ddb_item_without_keys(Relation rel, Jsonb *item);
extern void ddb_check_key_encoded_len(Relation rel, int len);
extern Jsonb *ddb_item_split_key(Relation rel, Jsonb *item, Datum *values, bool *isnull,
								 StringInfo enckey);
extern Jsonb *ddb_jsonb_replace_pairs(Jsonb *base, const char *const *names, int nnames,
									 Jsonb *repl);
extern Datum ddb_jbv_to_key(Relation rel, DdbKeyType type, JsonbValue *v,
							const char *name);
extern void ddb_raise_key_size(bool partition, const char *name, const char *index, int len);

/*
 * api/ddb_gsi.c: secondary indexes of every kind (global, local, the TTL
 * index, item collection sizes).  ddb_gsi_maintain brings a table's
 * indexes from an item's old version to its new one (either may be NULL);
 * the item API calls it after each write, the trigger for SQL writes.
 */
#define DDB_INDEX_GLOBAL	'G'		/* a global secondary index */
#define DDB_INDEX_LOCAL		'L'		/* a local secondary index */
#define DDB_INDEX_TTL		'T'		/* the TTL index: items by expiry time */
#define DDB_INDEX_COLLECTION	'C'	/* item collection sizes (tables with LSIs) */
#define DDB_COLLECTION_INDEX	"$collections"
#define DDB_MAX_LSI_PER_TABLE	5	/* DynamoDB's limit, not adjustable */
extern int	ddb_item_collection_limit_kb;
extern int64 ddb_item_collection_size(Relation rel, Jsonb *item);
extern bool ddb_collection_overflowed(Relation rel, Jsonb *item);
extern bool ddb_gsi_exists(Relation rel);
extern bool ddb_index_any(Relation rel);
extern int	ddb_index_count(Relation rel, char kind);
extern void ddb_gsi_maintain(Relation rel, Jsonb *olditem, Jsonb *newitem);
extern Relation ddb_gsi_open_index(Relation table, const char *index_name,
								   int *nquerykeys, char *kind, bool *projects_all);
extern bool ddb_gsi_projects(Relation table, const char *index_name, const char *name);
extern void ddb_gsi_describe(Relation rel, char kind, StringInfo buf);

/*
 * planner/ddb_planner.c, planner/ddb_customscan.c: the DdbKeyScan CustomScan.
 *
 * Plan layout: custom_private = (npinned, backward, array_col, bound
 * kinds, nkeyexprs, nfilter, rows wanted) and custom_exprs = the
 * nkeyexprs key values -- those of the npinned pinned key columns (the
 * one at array_col an array), then one per bound on key column npinned,
 * of the kind named in the bound kinds (an integer list) -- then the
 * nfilter filter clauses, then the clauses the range enforces (the
 * recheck).  Rows wanted is the hint ddb_range_want takes, 0 for none
 * (ddb_planner.c, keyscan_rows_wanted).
 */
typedef enum DdbBoundKind
{
	DDB_BOUND_LT = BTLessStrategyNumber,
	DDB_BOUND_LE = BTLessEqualStrategyNumber,
	DDB_BOUND_GE = BTGreaterEqualStrategyNumber,
	DDB_BOUND_GT = BTGreaterStrategyNumber,
	DDB_BOUND_LIKE = 10,		/* sk LIKE pattern: its literal prefix */
	DDB_BOUND_PREFIX = 11		/* starts_with(sk, prefix), sk ^@ prefix */
} DdbBoundKind;

extern bool ddb_enable_key_scan;
extern void ddb_planner_init(void);
struct CustomScan;
extern Node *ddb_keyscan_create_state(struct CustomScan *cscan);

/* engine/ddb_verify.c */
extern void ddb_verify_init(void);

/* api/ddb_query.c: Query and Scan; SQL-callable only (see its header) */

/*
 * api/ddb_table.c, ddb_api.c, ddb_protocol.c, ddb_json.c, ddb_stream.c:
 * tables and names, the operation cores, the protocol, streams; see
 * api/ddb_ops.h, api/ddb_protocol.h and api/ddb_json.h.  _PG_init calls ddb_api_init for
 * the api layer's GUCs.
 */
extern void ddb_api_init(void);
extern const char *ddb_table_key_name(Relation rel, int k);
extern void ddb_check_catalog_version(void);

/* model/ddb_types.c, model/ddb_expr_parse.c, model/ddb_expr_eval.c: see ddb_expr.h */

/*
 * http/ddb_http.c, http/ddb_http_sigv4.c, http/ddb_http_keys.c: the DynamoDB
 * HTTP endpoint (background workers, SigV4, access keys), the top layer;
 * see http/ddb_http.h.
 */

#endif							/* DDB_H */
