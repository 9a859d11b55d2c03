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
 * Creation.  A new relfilenode is an empty file, which reads as an empty
 * table.  The first insert extends it by the metapage (block 0) and an empty
 * root leaf (block 1) and writes both in one WAL record, holding the
 * relation extension lock from before the extension until after the
 * record, so a backend that finds block 0 all zeroes waits for that lock
 * and looks again.  A block 0 that is still all zeroes after the wait is
 * what a crash leaves when the file was extended but the record never
 * reached disk: the table is empty, and the next insert initializes it in
 * place.  But an all-zero block 0 beside an initialized block is corruption
 * (that block's WAL comes after the metapage's, so no crash can produce
 * it), and reads raise data_corrupted instead of returning no rows.
 *
 * Lock order.  These rules are written down only here; every path in
 * ddb_tree.c, ddb_rowid.c, ddb_scan.c, ddb_modify.c, ddb_vacuum.c,
 * ddb_build.c and ddb_verify.c obeys them.
 *
 *	1. Buffer content locks are taken top-down -- the metapage, then tree
 *	   pages from the root towards the leaves -- and left to right within a
 *	   level.  Row-id map pages (ddb_rowid.c) are locked only while no tree
 *	   page is -- the metapage, then map directory pages, then a map leaf --
 *	   with one exception: with ddb's own WAL, a writer adding one version
 *	   to a leaf (ddb_tree_insert_at; ddb_tree_insert_beside, an update
 *	   beside its old version), holding that leaf exclusively (and the
 *	   key's first leaf, when it is another), locks the map leaf of the new
 *	   version's entry exclusively, to set the entry in the same record.
 *	   It found (or created) and pinned that map leaf before it locked any
 *	   tree page (ddb_map_pin_leaf), so under tree pages it waits for that
 *	   map leaf alone, never for the metapage or a map directory, and it
 *	   locks nothing after it.  No cycle can close through that wait,
 *	   because whoever holds a map leaf waits for no other buffer lock
 *	   while it does: map readers and writers (map_get, flush_entries,
 *	   ddb_map_clear, map_repair, ddb_verify's walk) hold one map page at a
 *	   time and lock tree pages only after releasing it, the descent to a
 *	   map leaf holds at most a directory page and a page it has just
 *	   added, VACUUM freeing a map leaf holds its directory page and takes
 *	   the leaf's cleanup lock only conditionally (map_free_leaf), and
 *	   these writers lock nothing after the map leaf.  Redo
 *	   takes the two pages in the same order.  A page just added to the
 *	   file, which no other page links to yet, may be locked at any point,
 *	   and so may a recyclable page (ddb_new_buffer), conditionally.  A
 *	   visibility map page (ddb_vismap.c) is locked last of all, by a
 *	   backend holding the leaf whose bit it changes (and whatever else it
 *	   holds then, a map leaf included), and nothing is locked while it is
 *	   held, so no wait for it closes a cycle.
 *
 *	2. The relation extension lock is innermost.  A backend may ask for it
 *	   while holding buffer locks (a split holds the page it splits; a
 *	   writer extending the visibility map, ddb_vm_clear, its leaf), but
 *	   while it holds it, it locks only pages it has just added, and other
 *	   pages only with ConditionalLockBuffer.  So nobody ever waits for a
 *	   buffer lock while holding the extension lock, and no buffer-lock wait
 *	   can close a cycle with a heavyweight-lock wait, which the deadlock
 *	   detector could not see and nothing could cancel.
 *
 *	3. No buffer lock is held while waiting for a transaction
 *	   (XactLockTableWait) or for any heavyweight lock but the extension
 *	   lock.  Errors may be raised with buffer locks held (abort releases
 *	   them).
 *
 *	4. A backend holds a bounded number of buffer locks, far below
 *	   PostgreSQL's 200: the four pages of a split (metapage or parent,
 *	   node, new sibling, new root; or parent, leaf and its right sibling:
 *	   see "Long keys"), the four of an unlink (parent, left
 *	   sibling, leaf, and, at times, the right sibling for a look at its
 *	   prefix),
 *	   or, while checking that a key is free,
 *	   the key's first leaf and two more, however many leaves the key's
 *	   versions span, plus a new version's map leaf.
 *
 *	5. A block number read from a tree page may be used, after that page's
 *	   lock is released, to lock the page it names only by a backend whose
 *	   snapshot xmin was set before it read the number (every statement,
 *	   item API call, TTL and HTTP transaction has one), or when it is a
 *	   hint checked under the named page's lock (row-id map entries, a
 *	   reader's leaf in ddb_modify.c), or a hint that names an internal
 *	   page (the relcache's root, leaf_parent and buffer hints: internal
 *	   pages are never deleted).  The relcache's leaf, which outlives its
 *	   statement, is trusted only while the xmin it was read under is
 *	   still held (leaf_xmin).  Checked builds check that an xmin is held
 *	   where tree pages are read by a number (ddb_descend, ddb_leaf_step,
 *	   ddb_read_hinted).  VACUUM (whose xmin others ignore)
 *	   follows only right-links of live leaves it has just read, and
 *	   downlinks of level-1 pages under their lock (ddb_leaf_walk_next),
 *	   and only VACUUM and a reader cleaning up behind it (ddb_scan.c,
 *	   under its snapshot) delete leaves.  This is what lets a deleted
 *	   leaf be reused once its safexid is older than every xmin (see
 *	   "Reuse").
 *
 *	6. ShareUpdateExclusiveLock on the table is the unlinker's (see
 *	   "Unlinking empty leaves").  VACUUM holds it throughout; a reader
 *	   cleaning up behind it (ddb_scan.c, clean_behind) takes it only
 *	   without waiting (LockAcquireExtended, dontWait), holding no buffer
 *	   lock, so it never waits for it, and no buffer-lock wait can close a
 *	   cycle through it.
 *
 * Tree concurrency (deadlock-free by the rules above; no "incomplete split"
 * state ever):
 *
 *	- Readers descend with one share lock at a time: read the parent, note
 *	  the child, release, lock the child.  A page may have split in between;
 *	  items only ever move right (pages are never merged, and a leaf is
 *	  unlinked only when it has none: see "Unlinking empty leaves"), so the
 *	  reader moves right along right-links while the search key is beyond the
 *	  page's high key, or the page is a deleted leaf (Lehman & Yao).  Every descent starts at the cached
 *	  root and reads internal pages through the buffer each was last found
 *	  in (ddb_read_internal: a hint that ReadRecentBuffer checks, so it
 *	  changes what is read never, only what finding it costs).
 *
 *	- Writers first try optimistically: descend like a reader but take the
 *	  leaf in exclusive mode.  If the item fits, it is added with a one-page
 *	  WAL record.
 *
 *	- A writer that must check that no other version of its key is live
 *	  holds the key's first leaf -- the leaf whose key space holds the bare
 *	  key -- exclusively from the check until its item is added, and walks
 *	  the key's versions to the right hand over hand (one more leaf at a
 *	  time).  Every such writer of the key holds that same leaf (it cannot
 *	  split while held), so they are serialized; a writer adding a new
 *	  version of a key whose current version it has locked needs no check,
 *	  and one that checks sees that lock (xmax) on its walk and waits.
 *
 *	- When the leaf is full, the writer releases everything and descends
 *	  again pessimistically, with exclusive locks coupled top-down (metapage,
 *	  root, child ...), splitting every node on the path that could not take
 *	  one more entry *before* stepping into it.  Hence each split touches only
 *	  the node, its new right sibling and its parent (plus the metapage and a
 *	  new root when the root splits), which is one Generic WAL record of at
 *	  most four pages, and a parent always has room for the new downlink.
 *	  The pessimistic pass only makes room; the writer then retries the
 *	  optimistic insert, which repeats the uniqueness check.  Most passes
 *	  start lower (ddb_make_room_below): at the leaf's parent as the
 *	  optimistic descent found it, moving right on its level as a reader
 *	  does, when that page can take the new downlink without splitting --
 *	  the same parent-then-child locking, without the levels above.
 *
 *	  Only pessimistic writers split, and they hold the parent exclusively
 *	  while splitting a child, so a pessimistic writer holding a node never
 *	  needs to move right at the next level.
 *
 *	- A batch of new keys (ddb_tree_insert_multi: COPY's row path,
 *	  BatchWriteItem) is sorted by item key and placed leaf by leaf: one
 *	  descent to the first unplaced key's leaf, exclusive, then every
 *	  following key whose key and item key lie below that leaf's high key is
 *	  checked there as a single writer checks it (the leaf is the key's first
 *	  leaf, held from the check until the version is in) and added with the
 *	  others in one critical section.  It holds one leaf at a time (plus the
 *	  check's walk to the right), never a leaf while descending to another,
 *	  and releases it before it waits for a transaction, makes room or
 *	  falls back to the single-item path (a key to wait for); so rules 1-4
 *	  hold as for single inserts, and a batch and a single writer of one
 *	  key are serialized on that key's first leaf.  A full leaf is split
 *	  once for all of the batch's keys that belong on it: the pessimistic
 *	  pass above, with no lock held on entry, whose leaf split is chosen
 *	  over the leaf's items merged with those keys' items
 *	  (ddb_split_point_for_run); then the placement goes on.
 *
 * Long keys.  With keys near DynamoDB's limits (a 2048-byte partition key
 * and a 1024-byte sort key: 3 kB items) a leaf whose high key falls among
 * one key's versions (the key plus part of a version suffix) holds one
 * version beside it.  Every update of that key then splits the leaf (the
 * new version sorts right before the old one, which is live until the
 * update commits), and the key's older versions lie on the leaves to the
 * right, where the prune before a split, which sees only the leaf to
 * split, never looks: the versions piled up, a leaf each, until VACUUM.
 * So a leaf split below a parent, when the versions of the leaf's last
 * key go on to its right sibling and the parent's next downlink names
 * that sibling, also prunes the sibling (ddb_prune_right_sibling), with
 * the same horizon test as every prune; and when that leaves the sibling
 * without items, the split moves its right half there instead of to a new
 * page (ddb_split_into_right): the sibling keeps its high key and
 * right-link, and the parent's downlink to it gets the split's separator,
 * lower than the one it replaces; the sibling's prefix becomes what its
 * high key shares of the leaf's ("Leaf prefix" in ddb_page.h: the key
 * space's in storage version 2, its items' in version 3).  An
 * updated long-key item then lives on two leaves, its current version's
 * and the one its last dead version held, whatever the number of updates
 * (older versions further right, on as many leaves as a VACUUM FULL
 * under an old snapshot needed for them, wait for VACUUM).  Locks: the
 * parent and the leaf, held for the split, then the sibling (rule 1;
 * conditionally, as an unlink locks its leaves: a busy sibling is left
 * to the next split), three pages; one Generic WAL record of the three
 * in both WAL modes (after the sibling's prune's own record).  What it
 * changes for everyone else:
 *
 *	- Items still only move right, and a live page's low bound still
 *	  never rises (the sibling's falls).  A walker that holds the leaf
 *	  while it locks the sibling (hand over hand: the uniqueness check,
 *	  ddb_move_to_target) cannot see the move half done.
 *
 *	- But the right sibling of a leaf a reader has read and released may
 *	  now hold items the reader saw on that leaf, and so may the leaves
 *	  that sibling splits into later.  A forward range scan skips, on
 *	  each leaf it steps to, the items below the highest high key of the
 *	  leaves it has read (ddb_scan.c), so it returns each item once.
 *	  The walks over one key's versions (point lookups,
 *	  ddb_find_current_ext, the row-id map's search right of a version's
 *	  leaf) stop at the first version they look for, so seeing a version
 *	  twice changes nothing; VACUUM's walk may prune and count such an
 *	  item twice (its statistics only); backward scans re-descend below
 *	  the last low bound they read.
 *
 * Unlinking empty leaves (doc/design-unlink.md).  VACUUM (or a read that
 * cleans up behind it), having pruned a leaf L to no items, unlinks it
 * when its left sibling P and right sibling R share its parent Q (L is
 * neither Q's first nor its last child): Q's
 * downlink to L then names R and R's own downlink goes (R takes over L's
 * key space, with L's separator as its low bound: no separator is added,
 * and Q's prefix, kept in its minus-infinity downlink or high key, stays
 * valid for the separators that remain); P's right-link names R; and L
 * becomes a deleted leaf (DDB_PAGE_DELETED: one item, an empty high key
 * with the next full xid, its safexid; its right-link kept).  R is not
 * changed; in a table of storage version 2 its prefix must start L's low
 * bound, which becomes its own (ddb_page.h, "Leaf prefix"): else L stays.
 * (Version 3's leaf prefix is about the items present, which stay.)
 * Locks (ddb_unlink_leaf): Q
 * exclusively, found by a descent
 * that share-locks the levels above one page at a time, then P, then L,
 * then, in version 2 when Q's separators do not settle the prefix
 * question, R shared --
 * top-down, then left to right (rule 1), P, L and R only conditionally (a
 * busy one waits for the next VACUUM); Q held exclusively keeps P, L and R
 * from splitting.  One WAL record of Q, P and L (XLOG_DDB_UNLINK with ddb
 * preloaded, else Generic WAL; redo locks them in that order), so there
 * is no half-unlinked state.  Only VACUUM and a read that cleans up
 * behind it (ddb_prune_read_leaf) unlink, both under the table's
 * ShareUpdateExclusiveLock, so one at a time per table (rule 6).  So a
 * live page's low bound never
 * rises (an unlink lowers R's), and a deleted leaf is reached only through
 * a number read before the unlink: readers that land on one move right
 * (ddb_beyond_page, ddb_leaf_step), through leaves deleted later, to the
 * leaf that holds its key space now.
 *
 * Reuse.  A later VACUUM records in the free space map the deleted leaves
 * whose safexid every running snapshot's xmin has passed
 * (ddb_page_is_recyclable): by rule 5 no backend holds their numbers any
 * more.  ddb_new_buffer takes pages from there before it extends the file,
 * re-checking each under its lock, and logs the reuse as a conflict
 * horizon for hot standbys.  A read that unlinks a leaf also has its
 * backend remember it (own_unlinked): its own next split takes it, and its next
 * unlink records in the free space map those it remembers that have
 * become recyclable, so that a table whose reads unlink the leaves a
 * queue's head empties reuses them at once instead of growing until the
 * next VACUUM.  (Recording a leaf in the map when it is unlinked would not
 * do: the next split would take it before it is recyclable, and drop it.)
 * A relcache hint that outlives its statement
 * (the leaf of the last descent) is trusted only under the xmin it was
 * read with (DdbRelCache.leaf_xmin).  Row-id map leaves that VACUUM freed
 * (ddb_rowid.c, "Freeing empty leaves") are deleted pages of the same
 * layout, with no right-link; their numbers are checked under the leaf's
 * lock by whoever holds one, so they do not rely on rule 5: the VACUUM
 * that frees them records them, and their reuse cancels no standby query.
 *
 * WAL.  Every page change is WAL-logged in the critical section that makes
 * it, in one of two ways, decided in one place (ddb_wal_custom, ddb_wal.c):
 *
 *	- With CREATE EXTENSION alone, everything goes through Generic WAL
 *	  (GenericXLogStart ... GenericXLogFinish), new pages registered as full
 *	  images, so crash recovery and streaming replication need nothing more.
 *
 *	- With ddb in shared_preload_libraries, the hot-path changes -- a leaf
 *	  insert (or a batch's items of one leaf), a version's xmax mark, the one-record update, row-id map
 *	  entries, a prune, a leaf split below an existing parent, and the
 *	  unlink of an empty leaf -- are
 *	  records of ddb's own resource manager (id 203), logged as nbtree logs
 *	  its own (START_CRIT_SECTION, change, MarkBufferDirty, XLogInsert,
 *	  PageSetLSN) and replayed with XLogReadBufferForRedo to the same
 *	  bytes (a split's left half by ddb_split_leaf_left, as on the
 *	  primary, its right half from the bytes the record carries,
 *	  ddb_split_leaf_right_redo, and its parent by ddb_split_parent);
 *	  wal_consistency_checking = 'ddb' checks that a replayed page is the
 *	  primary's.  The rest (tree
 *	  creation, root and internal splits, map growth, bulk builds,
 *	  VACUUM's freezing) stays Generic WAL; both kinds order by LSN on a
 *	  page, so mixing them is safe.
 *
 *	  Either way a replica's leaf is the primary's but for hint bits and
 *	  command ids, so a Generic record that moves a leaf's items logs the
 *	  leaf whole (ddb_wal.c, "Generic WAL and fields that differ").
 *
 *	  That WAL can only be replayed by a server that preloads ddb.  One that
 *	  meets a ddb record without it (crash recovery, a standby, a restore
 *	  from backup) stops with FATAL "resource manager with ID 203 not
 *	  registered" and does not start -- it never skips a record; preloading
 *	  ddb and starting again replays it (test/t/016_custom_wal.pl).  So
 *	  standbys and restores must preload ddb whenever the primary does.
 *	  Adding or removing the preload across a clean shutdown is safe both
 *	  ways: no WAL is left to replay and the pages are the same in both
 *	  modes.
 *
 * Pages keep the standard layout with nothing between pd_lower and pd_upper
 * (full-page images and Generic WAL drop that gap).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/reloptions.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/buf_internals.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "storage/indexfsm.h"
#include "storage/lmgr.h"
#include "storage/predicate.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/smgr.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "ddb.h"
#include "engine/ddb_page.h"

/*
 * Row ids are taken from the metapage in batches: this many first, then
 * twice as many each time the backend needs more (ddb_alloc_rowid), up to
 * a whole row-id map leaf's worth, aligned to a leaf.
 */
#define DDB_ROWID_BATCH		64

/*
 * A missing free space map fork is looked for again after this many
 * allocations (ddb_new_buffer): one failed open() per DDB_FSM_RECHECK leaf
 * splits costs nothing measurable.
 */
#define DDB_FSM_RECHECK		128

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

/* The row id of an item key's version suffix (ddb_suffix's inverse). */
static inline uint64
ddb_suffix_rowid(const char *itemkey, int len)
{
	const unsigned char *s = (const unsigned char *) itemkey + len - DDB_SUFFIX_LEN;
	ItemPointerData tid;

	ItemPointerSet(&tid,
				   ~(((BlockNumber) s[0] << 24) | ((BlockNumber) s[1] << 16) |
					 ((BlockNumber) s[2] << 8) | (BlockNumber) s[3]),
				   (OffsetNumber) ~(((unsigned) s[4] << 8) | (unsigned) s[5]));
	return ddb_tid_to_rowid(&tid);
}

/*
 * Write a leaf item's item key (key || suffix) into buf: the page's prefix
 * ("Leaf prefix" in ddb_page.h), the stored key bytes, the suffix.
 */
void
ddb_leaf_item_key(Page page, DdbLeafItem li, char *buf, int *len)
{
	const char *prefix;
	int			plen = ddb_leaf_prefix(page, &prefix);

	if (plen > 0)
		memcpy(buf, prefix, plen);
	memcpy(buf + plen, li->key, li->keylen);
	ddb_suffix(&li->tid, (unsigned char *) buf + plen + li->keylen);
	*len = plen + li->keylen + DDB_SUFFIX_LEN;
}

/* The item key of a version of 'key' with row id 'tid', into buf; its length. */
int
ddb_item_key(const char *key, int keylen, ItemPointer tid, char *buf)
{
	memcpy(buf, key, keylen);
	ddb_suffix(tid, (unsigned char *) buf + keylen);
	return keylen + DDB_SUFFIX_LEN;
}

/*
 * A leaf item's whole key (without the suffix), *len bytes: the stored
 * bytes themselves on a leaf without a prefix, else the prefix and them,
 * written into buf (room for DDB_MAX_KEY_LEN bytes).
 */
const char *
ddb_leaf_key(Page page, DdbLeafItem li, char *buf, int *len)
{
	const char *prefix;
	int			plen = ddb_leaf_prefix(page, &prefix);

	*len = plen + li->keylen;
	if (plen == 0)
		return li->key;
	memcpy(buf, prefix, plen);
	memcpy(buf + plen, li->key, li->keylen);
	return buf;
}

/*
 * ddb_expand_tuple of leaf item 'li' of 'page', whose tuple header is 't'
 * (the item's, or a copy of it) and length 'len'.
 */
HeapTuple
ddb_expand_leaf(Relation rel, Page page, DdbLeafItem li, HeapTupleHeader t, uint32 len)
{
	char		buf[DDB_MAX_KEY_LEN];
	int			keylen;
	const char *key = ddb_leaf_key(page, li, buf, &keylen);

	return ddb_expand_tuple(rel, key, keylen, t, len, &li->tid);
}

/*
 * Compare a search string with a leaf item's item key as stored, without
 * building the item key: the caller has taken the page's prefix off the
 * search string.
 */
int
ddb_compare_stored(const char *key, int keylen, DdbLeafItem li)
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

/*
 * Compare a search string with the prefix of leaf 'page': nonzero when it
 * does not start with it (-1 below, 1 above every key of the page's key
 * space); else 0, and *key and *keylen advanced past it.
 */
int
ddb_strip_leaf_prefix(Page page, const char **key, int *keylen)
{
	const char *prefix;
	int			plen = ddb_leaf_prefix(page, &prefix);
	int			c;

	if (plen == 0)
		return 0;
	c = memcmp(*key, prefix, Min(*keylen, plen));
	if (c != 0)
		return c < 0 ? -1 : 1;
	if (*keylen < plen)
		return -1;
	*key += plen;
	*keylen -= plen;
	return 0;
}

/* Does 'key' (keylen bytes) start with the prefix of leaf 'page'? */
static inline bool
ddb_leaf_shares_prefix(Page page, const char *key, int keylen)
{
	return ddb_strip_leaf_prefix(page, &key, &keylen) == 0;
}

/* Compare a search string with item key of leaf item 'li' of 'page'. */
int
ddb_compare_leaf(Page page, const char *key, int keylen, DdbLeafItem li)
{
	int			c = ddb_strip_leaf_prefix(page, &key, &keylen);

	return c != 0 ? c : ddb_compare_stored(key, keylen, li);
}

/* Compare a search string with only the key part of leaf item 'li' of 'page'. */
int
ddb_compare_leaf_keypart(Page page, const char *key, int keylen, DdbLeafItem li)
{
	int			c = ddb_strip_leaf_prefix(page, &key, &keylen);

	return c != 0 ? c : ddb_compare_bytes(key, keylen, li->key, li->keylen);
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
 * Is the search string beyond the page's key space?  With strict = false
 * ("first item >= key") that is high key <= key; with strict = true ("last
 * item < key") high key < key.  A rightmost page has no high key.
 */
static inline bool
ddb_beyond_page(Page page, const char *key, int keylen, bool strict)
{
	DdbKeyItem	hk;
	int			c;

	if (DdbPageIsDeleted(page))
		return true;			/* its key space went to its right sibling */
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
	int			c;

	if (key == NULL)
		return strict ? hi : lo;
	/* the prefix once; then the rest against the stored keys */
	c = ddb_strip_leaf_prefix(page, &key, &keylen);
	if (c != 0)
		return c < 0 ? lo : hi;
	while (lo < hi)
	{
		OffsetNumber mid = lo + (hi - lo) / 2;

		if (ddb_compare_stored(key, keylen, ddb_leaf_item(page, mid)) > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Length of the longest common prefix of two byte strings. */
int
ddb_common_prefix(const char *a, int alen, const char *b, int blen)
{
	int			n = Min(alen, blen);
	int			i = 0;

	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/*
 * An internal page's prefix (ddb_page.h, "Prefix"): the key of its
 * minus-infinity downlink when that has one, else the first prefixlen
 * bytes of its high key.  Returns the length; *prefix points into the page.
 */
static inline int
ddb_page_prefix(Page page, const char **prefix)
{
	int			len = DdbPageGetOpaque(page)->prefixlen;

	*prefix = NULL;
	if (len > 0)
	{
		DdbKeyItem	inf = ddb_key_item(page, DdbPageFirstData(page));

		*prefix = inf->keylen > 0 ? inf->key : ddb_key_item(page, DDB_HIKEY)->key;
	}
	return len;
}

/* Does internal page 'page' keep its prefix in its minus-infinity downlink? */
static inline bool
ddb_prefix_in_first(Page page)
{
	return ddb_key_item(page, DdbPageFirstData(page))->keylen > 0;
}

/*
 * The full separator of internal data item 'off' (after the first): the
 * page's prefix followed by the item's stored rest.  palloc'd.
 */
static char *
ddb_internal_sep(Page page, OffsetNumber off, int *len)
{
	const char *prefix;
	int			plen = ddb_page_prefix(page, &prefix);
	DdbKeyItem	ki = ddb_key_item(page, off);
	char	   *sep = palloc(Max(plen + ki->keylen, 1));

	if (plen > 0)
		memcpy(sep, prefix, plen);
	memcpy(sep + plen, ki->key, ki->keylen);
	*len = plen + ki->keylen;
	return sep;
}

/*
 * The child of an internal page to follow for key: the last data item whose
 * separator is <= key (strict = false) or < key (strict = true).  The first
 * data item's separator is minus infinity.  key == NULL is -infinity when
 * !strict and +infinity when strict.
 *
 * Separators are stored without the page's prefix.  A key that does not
 * start with the prefix is below or above all of them; one that does is
 * compared by the rest.
 */
static OffsetNumber
ddb_internal_search(Page page, const char *key, int keylen, bool strict)
{
	OffsetNumber first = DdbPageFirstData(page);
	OffsetNumber lo = first + 1;
	OffsetNumber hi = PageGetMaxOffsetNumber(page) + 1;
	const char *prefix;
	int			plen = ddb_page_prefix(page, &prefix);

	if (key == NULL)
		return strict ? hi - 1 : first;
	if (plen > 0)
	{
		int			c = memcmp(key, prefix, Min(keylen, plen));

		if (c < 0 || (c == 0 && keylen < plen))
			return first;		/* below every separator */
		if (c > 0)
			return hi - 1;		/* above every separator */
		key += plen;
		keylen -= plen;
	}
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
		ddb_leaf_item_key(page, ddb_leaf_item(page, off), buf, &len);
	else
	{
		char	   *sep = ddb_internal_sep(page, off, &len);

		memcpy(buf, sep, len);
		pfree(sep);
	}
	return len;
}

/*
 * Invariant of every page we write: data items strictly ascending, all
 * below the high key, and (when given) at or above 'low'; an internal page's
 * prefix kept whole where ddb_page_prefix finds it; a leaf's prefix within
 * its high key or copied after it, only when the high key does not hold
 * it, and none on the rightmost leaf ("Leaf prefix" in ddb_page.h).
 * Used by DdbCheck, so it costs nothing unless built with CHECKS=1.
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
	/* an internal page's prefix is kept whole in its first item or high key */
	if (ok && !DdbPageIsLeaf(page))
	{
		int			plen = DdbPageGetOpaque(page)->prefixlen;
		int			inflen = ddb_key_item(page, first)->keylen;

		if (inflen > 0)
			ok = inflen == plen;
		else if (plen > 0)
			ok = !DdbPageIsRightmost(page) &&
				plen <= ddb_key_item(page, DDB_HIKEY)->keylen;
	}
	else if (ok && DdbPageGetOpaque(page)->prefixlen > 0)
	{
		/*
		 * A leaf's prefix in its high key, or copied after it when the
		 * high key does not start with it (every item key starts with it:
		 * the order checks above read them through it).
		 */
		int			plen = DdbPageGetOpaque(page)->prefixlen;
		DdbKeyItem	hk;

		ok = !DdbPageIsRightmost(page) && !DdbPageIsDeleted(page);
		hk = ok ? ddb_key_item(page, DDB_HIKEY) : NULL;
		if (ok && (DdbPageGetOpaque(page)->flags & DDB_PAGE_PREFIX_COPY))
			ok = ItemIdGetLength(PageGetItemId(page, DDB_HIKEY)) >=
				DdbKeyItemSize(hk->keylen) + plen &&
				!ddb_starts_with(hk->key, hk->keylen, hk->key + hk->keylen, plen);
		else
			ok = ok && plen <= hk->keylen;
	}
	else if (ok && DdbPageIsLeaf(page))
		ok = !(DdbPageGetOpaque(page)->flags & DDB_PAGE_PREFIX_COPY);
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

/*
 * A page reached through a right-link at the leaf level must be a leaf: a
 * zeroed or foreign page there is corruption, never the end of the items.
 */
void
ddb_check_leaf(Relation rel, Buffer buf)
{
	Page		page = BufferGetPage(buf);

	ddb_check_page(rel, buf, page);
	if (!DdbPageIsLeaf(page) || DdbPageGetOpaque(page)->level != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg_internal("ddb table \"%s\": block %u, reached through a right-link between leaves, is not a leaf",
								 RelationGetRelationName(rel), BufferGetBlockNumber(buf))));
}

/*
 * Read and lock leaf 'blkno', reached by a block number read before the
 * lock of the page that named it was released (a scan's next leaf, a right
 * step that does not hold the left page), and move right past deleted
 * leaves: a deleted leaf's key space belongs to its right sibling (see
 * "Unlinking empty leaves").  One lock at a time, left to right.
 */
Buffer
ddb_leaf_step(Relation rel, BlockNumber blkno, int mode)
{
	Buffer		buf;

	DdbCheck(TransactionIdIsValid(MyProc->xmin));	/* rule 5 */
	DDB_CHECK_PAUSE_LEAF();

	/*
	 * Walks of many leaves (a key's versions, a run of leaves that reads
	 * unlinked) come through here a leaf at a time: a cancel is served
	 * between leaves (held off while the caller holds a buffer lock).
	 */
	CHECK_FOR_INTERRUPTS();
	buf = ReadBuffer(rel, blkno);
	LockBuffer(buf, mode);
	ddb_check_leaf(rel, buf);
	while (DdbPageIsDeleted(BufferGetPage(buf)))
	{
		BlockNumber right = DdbPageGetOpaque(BufferGetPage(buf))->right;

		UnlockReleaseBuffer(buf);
		CHECK_FOR_INTERRUPTS();
		buf = ReadBuffer(rel, right);
		LockBuffer(buf, mode);
		ddb_check_leaf(rel, buf);
	}
	return buf;
}

/* The special space of a new ddb page (ddb_init_page, ddb_init_leaf_header). */
static void
ddb_init_opaque(Page page, uint16 flags, uint16 level, BlockNumber right)
{
	DdbPageOpaque op = DdbPageGetOpaque(page);

	op->right = right;
	op->level = level;
	op->flags = flags;
	op->prefixlen = 0;
	op->page_id = DDB_PAGE_ID;
}

static void
ddb_init_page(Page page, uint16 flags, uint16 level, BlockNumber right)
{
	PageInit(page, BLCKSZ, sizeof(DdbPageOpaqueData));
	ddb_init_opaque(page, flags, level, right);
}

/*
 * May the page be handed out as a new one?  An all-zero page (a block a
 * crash or an abandoned allocation left unused: nobody names it); a
 * deleted leaf whose safexid precedes every snapshot's xmin, so that no
 * backend still holds its block number (rule 5; nbtree's
 * BTPageIsRecyclable); or a freed row-id map leaf, at once: whoever holds
 * a map leaf's number checks the page under its lock (ddb_rowid.c,
 * "Freeing"), and a deleted tree leaf became a map leaf only once no
 * backend held its number as a tree leaf's.  The page must be locked.
 */
bool
ddb_page_is_recyclable(Page page)
{
	if (PageIsNew(page))
		return true;
	if (DdbPageGetOpaque(page)->page_id != DDB_PAGE_ID || !DdbPageIsDeleted(page))
		return false;
	return ddb_page_is_freed_map_leaf(page) ||
		GlobalVisCheckRemovableFullXid(NULL, ddb_deleted_safexid(page));
}

/*
 * The leaves this backend unlinked lately (see "Reuse" in the header), by
 * file: a split of this backend takes them once they are recyclable
 * (own_unlinked_take), and its next unlink in their table records those
 * that are in the free space map (own_unlinked_remember).  The oldest are
 * forgotten when the list is full; VACUUM finds them as before.
 */
#define DDB_OWN_UNLINKED	1024

typedef struct OwnUnlinked
{
	RelFileNode node;
	BlockNumber blkno;
	FullTransactionId safexid;
} OwnUnlinked;

static OwnUnlinked own_unlinked[DDB_OWN_UNLINKED];
static int	n_own_unlinked = 0;

static void
own_unlinked_forget(int k)
{
	memmove(&own_unlinked[k], &own_unlinked[k + 1],
			sizeof(OwnUnlinked) * (n_own_unlinked - k - 1));
	n_own_unlinked--;
}

/* A deleted tree leaf (not a freed map leaf) recyclable now; page locked. */
static bool
leaf_is_reusable(Page page)
{
	return !PageIsNew(page) && ddb_page_is_recyclable(page) &&
		!ddb_page_is_freed_map_leaf(page);
}

/*
 * The next of rel's leaves this backend unlinked that is recyclable now,
 * locked exclusively (forgotten, taken or not); InvalidBuffer when none.
 * Checked again under the lock: a VACUUM may have listed it in the free
 * space map meanwhile, and another backend's split taken it.
 */
static Buffer
own_unlinked_take(Relation rel)
{
	for (int k = 0; k < n_own_unlinked; k++)
	{
		OwnUnlinked u = own_unlinked[k];
		Buffer		buf;
		Page		page;

		if (!RelFileNodeEquals(u.node, rel->rd_node) ||
			!GlobalVisCheckRemovableFullXid(NULL, u.safexid))
			continue;
		own_unlinked_forget(k--);
		if (u.blkno >= RelationGetNumberOfBlocks(rel))
			continue;			/* (truncated since) */
		buf = ReadBuffer(rel, u.blkno);
		if (!ConditionalLockBuffer(buf))
		{
			ReleaseBuffer(buf);
			continue;
		}
		page = BufferGetPage(buf);
		if (leaf_is_reusable(page))
		{
			ddb_log_reuse(rel, u.blkno, ddb_deleted_safexid(page));
			return buf;
		}
		UnlockReleaseBuffer(buf);
	}
	return InvalidBuffer;
}

/*
 * Is block b of rel still a deleted leaf that may be reused?  Looked at
 * before it is listed in the free space map, whose takers accept an
 * all-zero page without the extension lock: a number that names another
 * page now (a file truncated in place, a relfilenode used again) must not
 * get there.
 */
static bool
own_unlinked_still_deleted(Relation rel, BlockNumber b)
{
	Buffer		buf = ReadBuffer(rel, b);
	Page		page;
	bool		ok;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	ok = leaf_is_reusable(page);
	UnlockReleaseBuffer(buf);
	return ok;
}

/*
 * Remember leaf blkno of rel, just unlinked with 'safexid'; first record in
 * the free space map those of rel remembered before that have become
 * recyclable, for any backend's split (the page is checked again when it
 * is taken, ddb_new_buffer).  Recording the first page may create the
 * map's fork; a backend that found no fork asks the map again only every
 * DDB_FSM_RECHECK pages, or once its smgr entry forgets the fork's size
 * (ddb_new_buffer), so the creation is announced with an smgr
 * invalidation, as vm_extend announces a new visibility map page: sent at
 * once, not at the end of the transaction, so that a read that rolls back
 * announces it too, and without the transactional relcache message that a
 * read cannot queue (a subtransaction later in the same statement would
 * fail with "cannot start a subtransaction when there are unprocessed
 * inval messages").
 */
static void
own_unlinked_remember(Relation rel, BlockNumber blkno, FullTransactionId safexid)
{
	int			had_fsm = -1;	/* -1: not looked yet */
	BlockNumber nblocks = InvalidBlockNumber;

	for (int k = 0; k < n_own_unlinked; k++)
	{
		BlockNumber b = own_unlinked[k].blkno;

		if (!RelFileNodeEquals(own_unlinked[k].node, rel->rd_node) ||
			!GlobalVisCheckRemovableFullXid(NULL, own_unlinked[k].safexid))
			continue;
		own_unlinked_forget(k--);
		if (had_fsm < 0)
		{
			had_fsm = smgrexists(RelationGetSmgr(rel), FSM_FORKNUM) ? 1 : 0;
			nblocks = RelationGetNumberOfBlocks(rel);
		}
		if (b >= nblocks || !own_unlinked_still_deleted(rel, b))
			continue;			/* (truncated since, or taken) */
		RecordFreeIndexPage(rel, b);
		/* (and up the map's tree, which searches start from) */
		FreeSpaceMapVacuumRange(rel, b, b + 1);
	}
	if (had_fsm >= 0)
	{
		ddb_get_relcache(rel)->fsm_skip = 0;
		if (had_fsm == 0)
			CacheInvalidateSmgr(RelationGetSmgr(rel)->smgr_rnode);
	}
	/* full: the older half is forgotten (VACUUM finds those) */
	if (n_own_unlinked == DDB_OWN_UNLINKED)
	{
		memmove(&own_unlinked[0], &own_unlinked[DDB_OWN_UNLINKED / 2],
				sizeof(OwnUnlinked) * (DDB_OWN_UNLINKED / 2));
		n_own_unlinked = DDB_OWN_UNLINKED / 2;
	}
	own_unlinked[n_own_unlinked].node = rel->rd_node;
	own_unlinked[n_own_unlinked].blkno = blkno;
	own_unlinked[n_own_unlinked].safexid = safexid;
	n_own_unlinked++;
}

/*
 * rel's file was truncated in place: its block numbers name other pages
 * now, or none.
 */
void
ddb_forget_unlinked(Relation rel)
{
	for (int k = 0; k < n_own_unlinked; k++)
		if (RelFileNodeEquals(own_unlinked[k].node, rel->rd_node))
			own_unlinked_forget(k--);
}

/*
 * A page for a split or the row-id map, returned locked exclusively for
 * the caller to initialize whole (and log as a new page): a recyclable
 * page the free space map lists (see "Reuse" in the header), or else a
 * new block at the end of the relation.
 *
 * The free space map is a hint, so each candidate is locked and checked
 * again; it is locked only conditionally -- the caller may hold tree pages,
 * and a candidate someone holds is skipped (rule 1 lets a page that nobody
 * names be locked at any point).  A deleted leaf's reuse is logged first
 * with its safexid as a conflict horizon (ddb_log_reuse), so that a hot
 * standby cancels the queries that may still hold its number; a freed map
 * leaf's is not, since its holders check it under its lock there too.
 *
 * A file whose VACUUMs never recorded a free page has no free space map
 * fork, and asking it costs a failed open() each time (smgrexists, from
 * fsm_readbuf, which then leaves the fork's cached size at 0): 15 % of a
 * row-by-row COPY's time, which splits a leaf every few dozen rows.  So
 * the relcache entry notes the fork's absence and asks again only every
 * DDB_FSM_RECHECK allocations, or once the entry is rebuilt, or once the
 * smgr entry no longer holds the fork's size as 0: the VACUUM that creates
 * the fork, recording a page, invalidates every backend's relcache entry,
 * and a read that creates it, listing the leaves it unlinked
 * (own_unlinked_remember), their smgr entries.  (The recheck finds the
 * fork when no invalidation arrives: the VACUUM was cancelled after
 * recording pages, or the backend holds the table's lock from before it
 * and processes none.)
 *
 * The extension lock is held until the new block is locked, so that a
 * VACUUM, which reads the relation's size under the same lock, never finds
 * the all-zero block unlocked and records it as recyclable while it is
 * being handed out here (as _bt_getbuf and btvacuumscan do).
 */
Buffer
ddb_new_buffer(Relation rel)
{
	DdbRelCache *cache = ddb_get_relcache(rel);
	Buffer		buf;

	if (n_own_unlinked > 0)
	{
		buf = own_unlinked_take(rel);
		if (BufferIsValid(buf))
			return buf;
	}
	/* (the fork's size forgotten: another backend may have made it) */
	if (cache->fsm_skip > 0 &&
		RelationGetSmgr(rel)->smgr_cached_nblocks[FSM_FORKNUM] != 0)
		cache->fsm_skip = 0;
	if (cache->fsm_skip > 0)
		cache->fsm_skip--;
	for (int tries = 0; tries < 4 && ddb_get_relcache(rel)->fsm_skip == 0; tries++)
	{
		BlockNumber blkno = GetFreeIndexPage(rel);
		Page		page;

		if (blkno == InvalidBlockNumber)
		{
			/* what fsm_readbuf found: 0 blocks is no fork */
			if (RelationGetSmgr(rel)->smgr_cached_nblocks[FSM_FORKNUM] == 0)
				ddb_get_relcache(rel)->fsm_skip = DDB_FSM_RECHECK;
			break;
		}
		if (blkno == DDB_METAPAGE_BLKNO || blkno >= RelationGetNumberOfBlocks(rel))
			continue;			/* a stale entry */
		buf = ReadBuffer(rel, blkno);
		if (!ConditionalLockBuffer(buf))
		{
			ReleaseBuffer(buf);
			continue;
		}
		page = BufferGetPage(buf);
		if (ddb_page_is_recyclable(page))
		{
			if (!PageIsNew(page) && !ddb_page_is_freed_map_leaf(page))
				ddb_log_reuse(rel, blkno, ddb_deleted_safexid(page));
			return buf;
		}
		UnlockReleaseBuffer(buf);
	}

	LockRelationForExtension(rel, ExclusiveLock);
	buf = ReadBufferExtended(rel, MAIN_FORKNUM, P_NEW, RBM_NORMAL, NULL);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	UnlockRelationForExtension(rel, ExclusiveLock);
	return buf;
}

#ifdef DDB_CHECKS
/*
 * Test-only pause (CHECKS=1 builds): ddb.check_delay_tree_create holds a
 * backend, for that many milliseconds, right after it takes the extension
 * lock to create the tree.  It widens the creation race for the
 * concurrency tests; plain builds have no such setting.
 */
static int	check_delay_tree_create = 0;

/*
 * ddb.check_fault_skip_unique makes every uniqueness check find its key
 * free, so that TAP 010 can show the guard after a checked insert
 * (ddb_check_key_has_one_version) catching the second live version that
 * follows.
 */
static bool check_fault_skip_unique = false;

/*
 * ddb.check_fault_rightmost_whole makes every split of the rightmost leaf
 * under a longer prefix than the leaf's take the branch for a right half
 * that would not fit with its keys whole (ddb_split): no input is known
 * to reach it, so TAP 027 forces it (and finds the LOG line it writes)
 * to show that the split it retries is sound, through crash and standby.
 */
static bool check_fault_rightmost_whole = false;

/*
 * Pause points for the isolation specs of the unlink (PostgreSQL 15 has no
 * injection points).  With ddb.check_pause_leaf set to an advisory lock
 * key, a backend about to lock a leaf by a block number it read before
 * releasing the page that named it (a descent's leaf, a scan's next leaf,
 * a right step, a hinted first leaf) takes and releases that advisory lock
 * in share mode first; ddb.check_pause_unlink does the same in VACUUM
 * right before it unlinks a leaf it emptied.  No buffer lock is held at
 * either point (rule 3), so a session holding the key exclusively
 * (pg_advisory_lock) stops the backend exactly there, and the isolation
 * tester sees it wait.
 */
static int	check_pause_leaf = 0;
static int	check_pause_unlink = 0;
bool		ddb_check_tree_without_map = false;	/* ddb_vm_create */

/*
 * ddb.check_storage_version: the storage version of the trees this
 * backend writes (0: DDB_VERSION), so that tests make tables of the
 * versions earlier ddb builds wrote -- version 2's bulk-built leaves and
 * the rules this build keeps for them ("Leaf prefix" in ddb_page.h), or a
 * version 1 table written row by row (a bulk build still gives prefixes,
 * which version 1 never had).
 */
static int	check_storage_version = 0;

uint32
ddb_new_tree_version(void)
{
	return check_storage_version > 0 ? check_storage_version : DDB_VERSION;
}

static void
check_pause(int key)
{
	LOCKTAG		tag;

	if (key == 0)
		return;
	/* the tag pg_advisory_lock(bigint) takes */
	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, 0, (uint32) key, 1);
	(void) LockAcquire(&tag, ShareLock, false, false);
	LockRelease(&tag, ShareLock, false);
}

void
ddb_check_pause_leaf(void)
{
	check_pause(check_pause_leaf);
}

void
ddb_check_pause_unlink(void)
{
	check_pause(check_pause_unlink);
}

void
ddb_checks_init(void)
{
	DefineCustomIntVariable("ddb.check_delay_tree_create",
							"Test only: pause while creating a ddb tree (milliseconds).",
							NULL, &check_delay_tree_create, 0, 0, 60000,
							PGC_USERSET, GUC_NOT_IN_SAMPLE | GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomBoolVariable("ddb.check_fault_skip_unique",
							 "Test only: an insert's uniqueness check finds every key free.",
							 NULL, &check_fault_skip_unique, false,
							 PGC_SUSET, GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("ddb.check_fault_rightmost_whole",
							 "Test only: a split of the rightmost leaf chooses again with its items' keys whole.",
							 NULL, &check_fault_rightmost_whole, false,
							 PGC_USERSET, GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("ddb.check_pause_leaf",
							"Test only: wait for this advisory lock before locking a leaf by a block number read earlier.",
							NULL, &check_pause_leaf, 0, 0, INT_MAX,
							PGC_USERSET, GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);
	DefineCustomIntVariable("ddb.check_storage_version",
							"Test only: the storage version of the ddb trees this session writes (0: the current one).",
							NULL, &check_storage_version, 0, 0, DDB_VERSION,
							PGC_USERSET, GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);
	DefineCustomIntVariable("ddb.check_pause_unlink",
							"Test only: VACUUM waits for this advisory lock before unlinking a leaf.",
							NULL, &check_pause_unlink, 0, 0, INT_MAX,
							PGC_USERSET, GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);
	DefineCustomBoolVariable("ddb.check_tree_without_map",
							 "Test only: make new ddb trees without a visibility map, as earlier versions did.",
							 NULL, &ddb_check_tree_without_map, false,
							 PGC_USERSET, GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);
	ddb_wal_checks_init();
}
#define CHECK_DELAY(ms) \
	do { if ((ms) > 0) pg_usleep((long) (ms) * 1000L); } while (0)
#else
#define CHECK_DELAY(ms) ((void) 0)
#endif

/* Is block 'blkno' all zeroes (never initialized)? */
static bool
ddb_block_is_new(Relation rel, BlockNumber blkno)
{
	Buffer		buf = ReadBuffer(rel, blkno);
	bool		isnew;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	isnew = PageIsNew(BufferGetPage(buf));
	UnlockReleaseBuffer(buf);
	return isnew;
}

/*
 * Block 0 is all zeroes and stayed so after waiting for any creator.  If
 * another block is initialized, that is corruption (see "Creation" above)
 * -- unless block 0 has been initialized meanwhile, by a backend
 * initializing a crash's leftovers in place: it writes block 0 and the new
 * root in one record, so once the root reads as initialized, block 0 does
 * too.  Returns whether block 0 is initialized now.  The scan covers a
 * handful of blocks in every legitimate case.
 */
static bool
ddb_check_zero_metapage(Relation rel, BlockNumber nblocks)
{
	BlockNumber ninit = 0;

	for (BlockNumber b = DDB_METAPAGE_BLKNO + 1; b < nblocks; b++)
	{
		CHECK_FOR_INTERRUPTS();
		if (!ddb_block_is_new(rel, b))
			ninit++;
	}
	if (ninit == 0)
		return false;
	if (!ddb_block_is_new(rel, DDB_METAPAGE_BLKNO))
		return true;
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("ddb table \"%s\" has an all-zero metapage but %u initialized pages",
					RelationGetRelationName(rel), ninit),
			 errdetail("Block 0 of a ddb table leads to its tree; without it the table's items cannot be found."),
			 errhint("Restore the table from a backup; ddb_verify() reports the pages that remain.")));
	return false;				/* keep compiler quiet */
}

/*
 * Has block 0 been initialized?  An all-zero block 0 is a tree being
 * created right now (its creator holds the extension lock until the
 * metapage is written: wait for it), the empty table a crash left, or
 * corruption (ddb_check_zero_metapage raises it).
 */
static bool
metapage_written(Relation rel, BlockNumber nblocks)
{
	if (!ddb_block_is_new(rel, DDB_METAPAGE_BLKNO))
		return true;
	if (!RecoveryInProgress())
	{
		/* no buffer lock is held here (lock order rule 2) */
		LockRelationForExtension(rel, ExclusiveLock);
		UnlockRelationForExtension(rel, ExclusiveLock);
		if (!ddb_block_is_new(rel, DDB_METAPAGE_BLKNO))
			return true;
		nblocks = RelationGetNumberOfBlocks(rel);
	}
	return ddb_check_zero_metapage(rel, nblocks);
}

/* Does the tree exist (has its metapage been written)? */
bool
ddb_tree_exists(Relation rel)
{
	DdbRelCache *cache = ddb_get_relcache(rel);

	if (!cache->initialized)
	{
		BlockNumber nblocks = RelationGetNumberOfBlocks(rel);

		if (nblocks > 0 && metapage_written(rel, nblocks))
		{
			cache = ddb_get_relcache(rel);
			cache->initialized = true;
		}
	}
	return cache->initialized;
}

/*
 * Write the metapage and an empty root leaf into metabuf and rootbuf
 * (exclusively locked), in one WAL record.
 */
static void
ddb_write_new_tree(Relation rel, Buffer metabuf, Buffer rootbuf)
{
	GenericXLogState *state;
	Page		meta;
	Page		root;
	DdbMetaPageData *md;

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
	md->version = ddb_new_tree_version();
	md->root = BufferGetBlockNumber(rootbuf);
	md->height = 1;
	md->next_rowid = 0;
	/* Keep the metadata inside pd_lower: full-page images drop the hole. */
	((PageHeader) meta)->pd_lower = ((char *) md + sizeof(DdbMetaPageData)) - (char *) meta;

	ddb_init_page(root, DDB_PAGE_LEAF, 0, InvalidBlockNumber);

	GenericXLogFinish(state);
	ddb_vm_create(rel);
}

/*
 * Create the metapage and an empty root leaf if the tree does not exist.
 *
 * Lock order rule 2 shapes this: under the extension lock we lock only the
 * blocks we add, and block 0 of a file that already has blocks only
 * conditionally -- a backend splitting the root holds the metapage while it
 * waits for the extension lock.
 */
void
ddb_tree_init_if_needed(Relation rel)
{
	while (!ddb_tree_exists(rel))
	{
		BlockNumber nblocks;

		LockRelationForExtension(rel, ExclusiveLock);
		CHECK_DELAY(check_delay_tree_create);
		nblocks = RelationGetNumberOfBlocks(rel);
		if (nblocks == 0)
		{
			/* a new file: add blocks 0 and 1; nobody else can lock them yet */
			Buffer		metabuf = ReadBufferExtended(rel, MAIN_FORKNUM, P_NEW, RBM_NORMAL, NULL);
			Buffer		rootbuf = ReadBufferExtended(rel, MAIN_FORKNUM, P_NEW, RBM_NORMAL, NULL);

			LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
			LockBuffer(rootbuf, BUFFER_LOCK_EXCLUSIVE);
			ddb_write_new_tree(rel, metabuf, rootbuf);
			UnlockReleaseBuffer(rootbuf);
			UnlockReleaseBuffer(metabuf);
		}
		else
		{
			/*
			 * Blocks exist: someone created the tree since we looked (the
			 * loop's test sees it), or a crash left an all-zero block 0 --
			 * ddb_tree_exists checked that no other block is initialized.
			 * Initialize in place with a new root leaf; the other all-zero
			 * blocks stay unused.
			 */
			Buffer		metabuf = ReadBuffer(rel, DDB_METAPAGE_BLKNO);

			if (ConditionalLockBuffer(metabuf))
			{
				if (PageIsNew(BufferGetPage(metabuf)))
				{
					Buffer		rootbuf = ReadBufferExtended(rel, MAIN_FORKNUM, P_NEW,
															 RBM_NORMAL, NULL);

					LockBuffer(rootbuf, BUFFER_LOCK_EXCLUSIVE);
					ddb_write_new_tree(rel, metabuf, rootbuf);
					UnlockReleaseBuffer(rootbuf);
				}
				UnlockReleaseBuffer(metabuf);
			}
			else
				ReleaseBuffer(metabuf);
		}
		UnlockRelationForExtension(rel, ExclusiveLock);
	}
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
	if (md->version < DDB_VERSION_MIN || md->version > DDB_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("ddb table \"%s\" has storage version %u, this ddb reads versions %u to %u",
						RelationGetRelationName(rel), md->version, DDB_VERSION_MIN,
						DDB_VERSION)));
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
	ddb_get_relcache(rel)->version = copy->version;
	return copy;
}

/*
 * Do this table's leaves take the prefix of their items (storage version
 * 3, "Leaf prefix" in ddb_page.h)?  As far as this backend has read its
 * metapage since its relcache entry was last rebuilt: a version not read
 * yet answers no, and the version 2 rules it then follows are valid in
 * version 3 too.  Never reads the metapage, so callers may hold tree pages.
 */
static bool
ddb_items_prefixes(Relation rel)
{
	return ddb_get_relcache(rel)->version >= 3;
}

/*
 * Next row id of this backend.  Batches come from the metapage counter, so
 * row ids are unique for the life of the relfilenode and grow roughly in
 * time order.  A batch abandoned by a crash or a relcache reset leaves a
 * harmless gap.
 *
 * A backend's batches grow (DDB_ROWID_BATCH, then doubling) until they are
 * a whole row-id map leaf's range, aligned to it, skipping the rest of the
 * leaf the counter is in.  Every write locks the map leaf of its version's
 * row id, so backends that write steadily each get map leaves of their
 * own instead of taking turns on one (with batches of 64 two writers
 * shared every leaf, and waited for its lock in about one update in ten;
 * see "Issue 19: two writers, one map leaf" in doc/performance-history.md),
 * while one that writes a few rows takes a few row ids: a backend leaves
 * unused at most about what it used, plus the alignment gap, so at worst
 * about a third of a map leaf's slots are used.  (A relcache rebuild
 * drops a backend's batch and starts it at 64 again.)
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
		uint64		span = ddb_map_leaf_rowids();
		uint64		want = cache->rowid_batch == 0 ? DDB_ROWID_BATCH :
			Min((uint64) cache->rowid_batch * 2, span);

		ddb_tree_init_if_needed(rel);
		buf = ReadBuffer(rel, DDB_METAPAGE_BLKNO);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		ddb_check_meta(rel, BufferGetPage(buf));
		start = DdbPageGetMeta(BufferGetPage(buf))->next_rowid;
		if (want == span)
			start = (start + span - 1) / span * span;
		/* row ids show as TIDs: block numbers run out first */
		if (start + want > (uint64) MaxBlockNumber * DDB_ROWIDS_PER_BLOCK)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("ddb table \"%s\" has used up its row ids", RelationGetRelationName(rel)),
					 errhint("VACUUM FULL the table to number its versions again.")));
		state = GenericXLogStart(rel);
		page = GenericXLogRegisterBuffer(state, buf, 0);
		md = DdbPageGetMeta(page);
		md->next_rowid = start + want;
		GenericXLogFinish(state);
		UnlockReleaseBuffer(buf);

		/* re-fetch: the relcache entry may have been rebuilt meanwhile */
		cache = ddb_get_relcache(rel);
		cache->rowid_next = start;
		cache->rowid_end = start + want;
		cache->rowid_batch = (uint32) want;
	}
	return cache->rowid_next++;
}

/*
 * The end (exclusive) of the row ids handed out so far: the metapage's
 * counter, 0 before the tree exists.  Every version stored has a row id
 * below it (ddb_verify checks this); batches reserved and not yet used lie
 * below it too.
 */
uint64
ddb_rowid_end(Relation rel)
{
	DdbMetaPageData meta;

	if (!ddb_tree_exists(rel))
		return 0;
	return ddb_meta_read(rel, &meta)->next_rowid;
}

/* ------------------------------------------------------------------------
 * Descent
 * ------------------------------------------------------------------------
 */

/*
 * Every this many reads through one hint, read through the buffer mapping
 * instead (see ddb_read_internal).
 */
#define DDB_HINT_REFRESH	16

/*
 * ReadBuffer of an internal page (one that descents read far more often
 * than any leaf: the root on every one), through the buffer the page was
 * last found in.  ReadRecentBuffer pins that buffer only if it still holds
 * the block, valid, under its header lock, so a stale hint -- the page
 * evicted, the relation's storage replaced by TRUNCATE or VACUUM FULL,
 * truncated by VACUUM -- just costs the ordinary read; a hit skips the
 * buffer mapping table's lookup and partition lock, about 700 of a read's
 * 930 instructions.  Statistics are kept as ReadBuffer keeps them for a
 * hit.  A hint pin does not raise the buffer's usage count, as ReadBuffer's
 * does, so that the clock sweep would come to evict exactly the pages this
 * backend reads most; every DDB_HINT_REFRESH-th read through a hint goes
 * through ReadBuffer to raise it.  Temporary tables (local buffers) read
 * without hints.
 */
static Buffer
ddb_read_internal(Relation rel, BlockNumber blkno)
{
	DdbBufferHint *hint;
	Buffer		buf;

	if (RelationUsesLocalBuffers(rel))
		return ReadBuffer(rel, blkno);
	hint = &ddb_get_relcache(rel)->hints[blkno % DDB_BUFFER_HINTS];
	if (hint->blkno == blkno && BufferIsValid(hint->buffer) &&
		++hint->uses % DDB_HINT_REFRESH != 0 &&
#if PG_VERSION_NUM >= 160000
		ReadRecentBuffer(rel->rd_locator, MAIN_FORKNUM, blkno, hint->buffer)
#else
		ReadRecentBuffer(rel->rd_node, MAIN_FORKNUM, blkno, hint->buffer)
#endif
		)
	{
		pgstat_count_buffer_read(rel);
		pgstat_count_buffer_hit(rel);
		VacuumPageHit++;
		if (VacuumCostActive)
			VacuumCostBalance += VacuumCostPageHit;
		return hint->buffer;
	}
	buf = ReadBuffer(rel, blkno);
	/* (ReadBuffer takes no heavyweight lock: the cache is still there) */
	if (hint->blkno != blkno || hint->buffer != buf)
	{
		hint->blkno = blkno;
		hint->buffer = buf;
		hint->uses = 0;
	}
	return buf;
}

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
 *
 * The leaf the last downlink named and the page it was in are remembered
 * in the relcache entry (leaf, leaf_parent): where a split of that leaf,
 * or of one right of it, can start (ddb_make_room_below).
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
	DdbCheck(TransactionIdIsValid(MyProc->xmin));	/* rule 5 */

	for (;;)
	{
		Page		page;
		DdbPageOpaque op;

		if (level == 0)
			DDB_CHECK_PAUSE_LEAF();
		buf = level > 0 ? ddb_read_internal(rel, blkno) : ReadBuffer(rel, blkno);
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
			/* (a deleted page has no high key: the low bound stays) */
			if (lowkey && !DdbPageIsDeleted(page))
			{
				if (low)
					pfree(low);
				low = palloc(hk->keylen);
				memcpy(low, hk->key, hk->keylen);
				lowlen = hk->keylen;
			}
			UnlockReleaseBuffer(buf);
			buf = level > 0 ? ddb_read_internal(rel, blkno) : ReadBuffer(rel, blkno);
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
				low = ddb_internal_sep(page, off, &lowlen);
			}
			blkno = ki->child;
			level--;
			if (level == 0)
			{
				cache->leaf = blkno;
				cache->leaf_parent = BufferGetBlockNumber(buf);
				cache->leaf_xmin = MyProc->xmin;
			}
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

/*
 * One item of a page being split, read in place to choose the split: the
 * page itself does not change until the split's critical section (ddb's
 * own WAL) or its registered copy is changed (Generic WAL), where the
 * halves are made from the page (or copy) itself.
 */
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
int
ddb_truncated_separator(const char *left, int leftlen,
						const char *right, int rightlen)
{
	int			n = Min(leftlen, rightlen);
	int			i = 0;

	/* neighbours share long prefixes (hash, partition key): 8 bytes a step */
	while (i + (int) sizeof(uint64) <= n)
	{
		uint64		a,
					b;

		memcpy(&a, left + i, sizeof(uint64));
		memcpy(&b, right + i, sizeof(uint64));
		if (a != b)
			break;
		i += sizeof(uint64);
	}
	while (i < n && left[i] == right[i])
		i++;
	/* right differs at byte i, or left is a proper prefix of right */
	return Min(i + 1, rightlen);
}


/*
 * A key item (high key or downlink) at 'to', sz bytes
 * (MAXALIGN(DdbKeyItemSize(keylen))), its padding zeroed.
 */
static void
ddb_fill_key_item(char *to, Size sz, BlockNumber child, const char *key, int keylen)
{
	DdbKeyItem	ki = (DdbKeyItem) to;

	memset(to, 0, sz);
	ki->child = child;
	ki->keylen = keylen;
	if (keylen > 0)
		memcpy(ki->key, key, keylen);
}

/* A key item built in palloc'd memory. */
static DdbKeyItem
ddb_make_key_item(BlockNumber child, const char *key, int keylen, Size *size)
{
	char	   *ki;

	*size = MAXALIGN(DdbKeyItemSize(keylen));
	ki = palloc(*size);
	ddb_fill_key_item(ki, *size, child, key, keylen);
	return (DdbKeyItem) ki;
}

static void
ddb_add_item(Page page, const void *item, Size size, OffsetNumber off)
{
	if (PageAddItem(page, (Item) item, size, off, false, false) == InvalidOffsetNumber)
		elog(ERROR, "failed to add item of size %zu to ddb page", size);
}

/*
 * The imbalance |l - r| of a split whose left half takes between lmin and
 * lmax bytes and whose right half r: at worst (worst) or at least; at
 * least, SIZE_MAX when the left half surely does not fit, or the right.
 */
static inline Size
ddb_split_gap(Size lmin, Size lmax, Size r, bool worst)
{
	if (worst)
		return Max(lmax > r ? lmax - r : r - lmax, lmin > r ? lmin - r : r - lmin);
	if (lmin > DDB_PAGE_CAPACITY || r > DDB_PAGE_CAPACITY)
		return SIZE_MAX;
	return lmin > r ? lmin - r : lmax < r ? r - lmax : 0;
}

/*
 * Where to split a leaf: over the sequence of its items with the new item
 * in its place (as nbtree's _bt_findsplitloc does), so the new item may end
 * up alone on a half, which is what lets items of DynamoDB's largest keys
 * fit.  Candidate v (1..nv-1) puts virtual items [0, v) left; the separator
 * is truncated between v-1 and v.  vkey/vkeylen/vsize describe the nv
 * virtual items; 'skip' (or -1) is one to leave out, for the fallback below.
 * Returns the best v, or -1.
 */
static int
ddb_leaf_split_point(int nv, char **vkey, int *vkeylen, Size *vsize, int skip,
					 Size oldhk)
{
	Size		total = 0;
	Size		left = 0;
	Size		bestdiff = 0;
	Size		bound = SIZE_MAX;
	int			best = -1;
	int			prev = -1;

	for (int v = 0; v < nv; v++)
		if (v != skip)
			total += vsize[v];

	/*
	 * A candidate's high key takes between ddb_key_item_size(1) and
	 * ddb_key_item_size(vkeylen[v]) bytes on the left, which bounds its
	 * imbalance both ways before its separator is computed.  'bound' is
	 * the least worst-case imbalance of a candidate sure to fit: a
	 * candidate whose least imbalance exceeds it cannot be the best, and
	 * the loop below computes the separators of the others only -- in the
	 * same order, so it chooses what trying every candidate would.
	 */
	for (int v = 0; v < nv; v++)
	{
		if (v == skip)
			continue;
		if (prev >= 0)
		{
			Size		lmin = left + ddb_key_item_size(1);
			Size		lmax = left + ddb_key_item_size(vkeylen[v]);
			Size		r = total - left + oldhk;

			if (lmax <= DDB_PAGE_CAPACITY && r <= DDB_PAGE_CAPACITY)
				bound = Min(bound, ddb_split_gap(lmin, lmax, r, true));
		}
		left += vsize[v];
		prev = v;
	}
	left = 0;
	prev = -1;
	for (int v = 0; v < nv; v++)
	{
		if (v == skip)
			continue;
		if (prev >= 0 &&
			ddb_split_gap(left + ddb_key_item_size(1), left + ddb_key_item_size(vkeylen[v]),
						  total - left + oldhk, false) <= bound)
		{
			int			hklen = ddb_truncated_separator(vkey[prev], vkeylen[prev],
														vkey[v], vkeylen[v]);
			Size		l = left + ddb_key_item_size(hklen);
			Size		r = total - left + oldhk;

			if (l <= DDB_PAGE_CAPACITY && r <= DDB_PAGE_CAPACITY)
			{
				Size		diff = l > r ? l - r : r - l;

				if (best < 0 || diff < bestdiff)
				{
					best = v;
					bestdiff = diff;
				}
			}
		}
		left += vsize[v];
		prev = v;
	}
	return best;
}

/*
 * Split where a partition that grows at its end can go on growing.
 * DynamoDB-style partitions grow at their end (orders by date, events by
 * time) and items arrive interleaved across partitions, so the leaf that
 * must split holds the ends of several partitions that all keep growing.
 * A balanced split leaves half pages behind for good wherever a partition
 * stops growing, and an interleaved load ended with leaves 56 % full.
 * When the new item extends its partition, this split instead
 *	 - puts the split right after the new item when other partitions follow
 *	   it on the page: the left half is full and every partition on it can
 *	   still grow into it (a page splits when one of them grows again);
 *	 - when the new item would be the page's last, moves its partition's
 *	   run to the right half, which it then fills alone with its appends,
 *	   the partitions before it keeping the room it leaves on the left;
 *	   when the run is (nearly) the whole page, the new item goes right
 *	   alone, as a rightmost append would.
 * The benchmark's interleaved load then leaves leaves ~0.96 full (doc/
 * performance-history.md; sql/split_fill.sql holds the bound).
 *
 * As nbtree guards its split-after-new-item heuristic (_bt_afternewitemoff),
 * this one applies only on evidence that the partition is being appended
 * to, and never where it could leave a nearly empty page:
 *	 - the new item follows at least DDB_SPLIT_RUN items of its own
 *	   partition on the page (an append to a run: not a lone item of a new
 *	   partition, and not a new version of an existing key, which sorts
 *	   before that key's older versions);
 *	 - it is the last item of its partition: the next item on the page, or
 *	   the high key when it would be the page's last, is beyond the
 *	   partition; or, inside the partition, the items before it are the
 *	   partition's newest on the page, in the order they came, written by
 *	   at least DDB_SPLIT_SEQ separate writes (ddb_inserting_in_sequence):
 *	   its last inserts went right there, so the partition grows at a
 *	   point inside it -- a sort key of a time or a sequence before the
 *	   partition's other items ("ORDER#<time>" before "PROFILE"), the
 *	   evidence nbtree reads in adjacent heap TIDs.
 *	   The split right after the new item then moves the partition's later
 *	   items right once, and the appends that follow fill the left half
 *	   and, split off alone, pages of their own;
 *	 - the left half keeps at least DDB_SPLIT_MIN_LEFT, and both halves fit.
 * Otherwise, and for random inserts (which rarely land at the end of a
 * run or after a chain of their partition's newest items), the balanced
 * split stays.  'pktype' is the partition key's type.
 * Returns the virtual item v that starts the right half, or -1.
 */
#define DDB_SPLIT_RUN		2
#define DDB_SPLIT_MIN_LEFT	(DDB_PAGE_CAPACITY / 10)

static inline bool
ddb_in_partition(const char *key, int keylen, const char *part, int partlen)
{
	return ddb_starts_with(key, keylen, part, partlen);
}

/*
 * Evidence that a partition grows at a point inside it, an item at a time:
 * a sort key of a time or a sequence before the partition's other items
 * ("ORDER#<time>" before "PROFILE").  The items right before the new one
 * must be a chain of the partition's newest on the page, each newer than
 * the one before it, and every other item of the partition on the page
 * older; and the chain must hold at least DDB_SPLIT_SEQ separate writes:
 * links whose row ids are not adjacent, so that other writes came between
 * them.  A few items written together at a random point (an order and its
 * lines) are one write by this count, and two or three such groups that
 * happen to lie side by side on a page in the order they came are two or
 * three: taken for a sequence they would split off pages of a narrow key
 * range that stay nearly empty.  (A partition that grows inside itself
 * with nothing else written between its inserts is not recognized; it
 * keeps the balanced split.)  Only the partition's own items count:
 * partitions that share a page grow interleaved.  The new item must be a
 * new key, not a new version (which sorts right before its key's older
 * ones).  Row ids are read from the item keys' suffixes
 * (ddb_suffix_rowid).  The partition's items are a run around newpos, its
 * encoded prefix of 'plen' bytes.
 */
#define DDB_SPLIT_SEQ		6

static bool
ddb_inserting_in_sequence(int nv, char **vkey, int *vkeylen, int newpos, int plen)
{
	const char *nk = vkey[newpos];
	int			klen = vkeylen[newpos] - DDB_SUFFIX_LEN;
	int			writes = 1;
	int			v;
	uint64		next = 0;
	uint64		oldest = 0;

	if (newpos + 1 < nv && vkeylen[newpos + 1] - DDB_SUFFIX_LEN == klen &&
		memcmp(vkey[newpos + 1], nk, klen) == 0)
		return false;
	/* the chain: items of the partition, each older than the one after it */
	for (v = newpos - 1; v >= 0 && ddb_in_partition(vkey[v], vkeylen[v], nk, plen); v--)
	{
		uint64		r = ddb_suffix_rowid(vkey[v], vkeylen[v]);

		if (v < newpos - 1)
		{
			if (r >= next)
				break;
			if (r + 1 != next)
				writes++;
		}
		next = oldest = r;
	}
	if (writes < DDB_SPLIT_SEQ)
		return false;
	/* every other item of the partition on the page older than the chain */
	for (; v >= 0 && ddb_in_partition(vkey[v], vkeylen[v], nk, plen); v--)
		if (ddb_suffix_rowid(vkey[v], vkeylen[v]) > oldest)
			return false;
	for (v = newpos + 1; v < nv && ddb_in_partition(vkey[v], vkeylen[v], nk, plen); v++)
		if (ddb_suffix_rowid(vkey[v], vkeylen[v]) > oldest)
			return false;
	return true;
}

static int
ddb_leaf_split_after_new(DdbKeyType pktype, int nv, char **vkey, int *vkeylen,
						 Size *vsize, int newpos, DdbKeyItem oldhk, Size oldhk_space)
{
	const char *nk = vkey[newpos];
	int			plen = ddb_key_partition_len(pktype, nk, vkeylen[newpos]);
	int			cand[3];
	int			ncand = 0;
	int			rs;
	Size		total = 0;
	bool		partition_ends;

	if (plen < 0 || newpos < DDB_SPLIT_RUN)
		return -1;
	for (int i = 1; i <= DDB_SPLIT_RUN; i++)
		if (!ddb_in_partition(vkey[newpos - i], vkeylen[newpos - i], nk, plen))
			return -1;
	if (newpos + 1 < nv)
		partition_ends = !ddb_in_partition(vkey[newpos + 1], vkeylen[newpos + 1], nk, plen);
	else						/* (a high key shorter than plen is beyond it) */
		partition_ends = oldhk == NULL ||
			!ddb_in_partition(oldhk->key, oldhk->keylen, nk, plen);
	if (!partition_ends && !ddb_inserting_in_sequence(nv, vkey, vkeylen, newpos, plen))
		return -1;
	if (newpos + 1 < nv)
		cand[ncand++] = newpos + 1;

	/*
	 * Candidates, best first: right after the new item; before its
	 * partition's run (the whole partition goes on growing on the right),
	 * when it grows at its end; right before it (alone, or with the
	 * partitions after it).  The first that leaves both halves fitting and
	 * the left one not nearly empty.  A partition growing inside itself
	 * does not move its run: the partitions before it on the page end
	 * where its own items start, which tells nothing of their growth, and
	 * the new item alone on the right leaves the left full and moves
	 * nothing.
	 */
	if (partition_ends)
	{
		rs = newpos - DDB_SPLIT_RUN;
		while (rs > 0 && ddb_in_partition(vkey[rs - 1], vkeylen[rs - 1], nk, plen))
			rs--;
		if (rs > 0)
			cand[ncand++] = rs;
	}
	cand[ncand++] = newpos;

	for (int i = 0; i < nv; i++)
		total += vsize[i];
	for (int c = 0; c < ncand; c++)
	{
		int			v = cand[c];
		Size		left = 0;
		int			seplen;

		for (int i = 0; i < v; i++)
			left += vsize[i];
		seplen = ddb_truncated_separator(vkey[v - 1], vkeylen[v - 1], vkey[v], vkeylen[v]);
		if (left >= DDB_SPLIT_MIN_LEFT &&
			left + ddb_key_item_size(seplen) <= DDB_PAGE_CAPACITY &&
			total - left + oldhk_space <= DDB_PAGE_CAPACITY)
			return v;
	}
	return -1;
}

/*
 * A batch's run of new items that a leaf split must leave room for
 * (ddb_tree_insert_multi): their item keys in key order, their on-page
 * sizes (MAXALIGN'd, line pointer not counted), and the leaf reserve that
 * a half receiving any of them must keep free beside them.
 */
typedef struct DdbSplitRun
{
	int			n;
	char	  **itemkey;
	int		   *itemkeylen;
	Size	   *size;
	Size		reserve;
} DdbSplitRun;

/*
 * Where to split a leaf so that a whole run of new items fits: over the
 * sequence of the leaf's items merged with the run's (isnew[v] marks the
 * run's), the split v (1..nv-1) whose halves both fit with the run's items
 * and, in a half that gets any, the leaf reserve.  One split then makes
 * room for the run, where splitting for its first item (the left half kept
 * full by ddb_leaf_split_after_new, or half of the room given to the
 * neighbours) would leave the next items to split again.
 *
 * Candidates, best first:
 *	 - when the run extends its partition (its first item follows at least
 *	   DDB_SPLIT_RUN items of the partition, its last is the partition's
 *	   last on the page), as ddb_leaf_split_after_new splits for one new
 *	   item: right after the run (the left half full, its partitions left
 *	   to grow into it), before the partition's run (the partition goes on
 *	   growing on the right), right before the run;
 *	 - otherwise at the run's ends (the run stays on one leaf, so it is
 *	   placed with one record), the more even of the two first;
 *	 - then the most even split over the whole sequence.
 * Returns v, or -1 when no split leaves room for the whole run (the caller
 * then sizes for fewer of its items).
 */
static int
ddb_leaf_split_run(DdbKeyType pktype, int nv, char **vkey, int *vkeylen, Size *vsize,
				   bool *isnew, Size reserve, Size oldhkspace, DdbKeyItem oldhk)
{
	Size		total = 0;
	int			firstnew = -1;
	int			lastnew = -1;
	int			cand[3];
	int			ncand = 0;
	int			nnew_total = 0;
	int			best = -1;
	Size		bestdiff = 0;
	Size		left;
	int			nnewleft;

	for (int v = 0; v < nv; v++)
	{
		total += vsize[v];
		if (isnew[v])
		{
			if (firstnew < 0)
				firstnew = v;
			lastnew = v;
			nnew_total++;
		}
	}
	Assert(firstnew >= 0);

	/* the partition-append candidates */
	{
		int			plen = ddb_key_partition_len(pktype, vkey[firstnew], vkeylen[firstnew]);
		bool		extends = plen >= 0 && firstnew >= DDB_SPLIT_RUN;

		for (int i = 1; extends && i <= DDB_SPLIT_RUN; i++)
			if (!ddb_in_partition(vkey[firstnew - i], vkeylen[firstnew - i], vkey[firstnew], plen))
				extends = false;
		if (extends && !ddb_in_partition(vkey[lastnew], vkeylen[lastnew], vkey[firstnew], plen))
			extends = false;
		if (extends && lastnew + 1 < nv &&
			ddb_in_partition(vkey[lastnew + 1], vkeylen[lastnew + 1], vkey[firstnew], plen))
			extends = false;
		if (extends && lastnew + 1 == nv && oldhk != NULL &&
			ddb_in_partition(oldhk->key, oldhk->keylen, vkey[firstnew], plen))
			extends = false;
		if (extends)
		{
			int			rs = firstnew - DDB_SPLIT_RUN;

			while (rs > 0 && ddb_in_partition(vkey[rs - 1], vkeylen[rs - 1], vkey[firstnew], plen))
				rs--;
			if (lastnew + 1 < nv)
				cand[ncand++] = lastnew + 1;
			if (rs > 0)
				cand[ncand++] = rs;
			cand[ncand++] = firstnew;
		}
	}

	/*
	 * Try the candidates in order, then every split for the most even; a
	 * candidate must keep DDB_SPLIT_MIN_LEFT on the left, as the single
	 * item's appending split does.
	 */
	for (int pass = 0; pass < 3; pass++)
	{
		int			nc;
		int		   *cs;

		if (pass == 0)
		{
			nc = ncand;
			cs = cand;
		}
		else if (pass == 1)
		{
			/* the run's ends, when it did not extend its partition */
			if (ncand > 0)
				continue;
			ncand = 0;
			if (firstnew > 0)
				cand[ncand++] = firstnew;
			if (lastnew + 1 < nv)
				cand[ncand++] = lastnew + 1;
			nc = ncand;
			cs = cand;
		}
		else
		{
			nc = nv - 1;
			cs = NULL;
		}

		best = -1;
		for (int c = 0; c < nc; c++)
		{
			int			v = cs ? cs[c] : c + 1;
			Size		l,
						r;
			int			seplen;

			left = 0;
			nnewleft = 0;
			for (int i = 0; i < v; i++)
			{
				left += vsize[i];
				nnewleft += isnew[i] ? 1 : 0;
			}
			seplen = ddb_truncated_separator(vkey[v - 1], vkeylen[v - 1], vkey[v], vkeylen[v]);
			l = left + ddb_key_item_size(seplen) + (nnewleft > 0 ? reserve : 0);
			r = total - left + oldhkspace + (nnewleft < nnew_total ? reserve : 0);
			if (l > DDB_PAGE_CAPACITY || r > DDB_PAGE_CAPACITY)
				continue;
			if (pass == 0)
			{
				if (left < DDB_SPLIT_MIN_LEFT)
					continue;
				return v;		/* in order of preference */
			}
			{
				Size		diff = l > r ? l - r : r - l;

				if (best < 0 || diff < bestdiff)
				{
					best = v;
					bestdiff = diff;
				}
			}
		}
		if (best >= 0)
			return best;
	}
	return -1;
}

/*
 * Sizes of runs of an internal split's separators key[1, n), each without
 * a prefix of p bytes: sums over key[lo, hi) in O(1) from a running total
 * per prefix length, made when first asked for.  A split weighs every
 * split point m, each with its halves' prefixes; summing each half afresh
 * made that quadratic in the page's downlinks (hundreds: ~360,000
 * instructions per internal split of short keys).  The prefixes the points
 * ask for are few (a half's prefix only shrinks as it grows).
 */
typedef struct DdbSepSums
{
	int			n;				/* 0: keep no totals, sum each run afresh */
	int		   *keylen;
	int			nsums;
	int			prefix[32];
	Size	   *sum[32];		/* sum[k][i]: key[1, i) without prefix[k] */
} DdbSepSums;

static Size
ddb_sep_sizes(DdbSepSums *ss, int lo, int hi, int p)
{
	Size	   *sum = NULL;

	if (lo >= hi)
		return 0;				/* (an empty half's prefix is no other's) */
	for (int k = 0; k < ss->nsums; k++)
		if (ss->prefix[k] == p)
			sum = ss->sum[k];
	if (sum == NULL)
	{
		Size		total = 0;

		if (ss->n == 0 || ss->nsums == lengthof(ss->sum))
		{
			/* (past 32 prefix lengths, rare: directly too) */
			for (int i = lo; i < hi; i++)
				total += ddb_key_item_size(ss->keylen[i] - p);
			return total;
		}
		/*
		 * Keys shorter than p count as wrapped (Size) values: exact modulo
		 * 2^64, so a difference over [lo, hi) -- whose keys are all at
		 * least p long -- is exact.
		 */
		sum = palloc(sizeof(Size) * (ss->n + 1));
		sum[0] = sum[1] = 0;
		for (int i = 1; i < ss->n; i++)
		{
			total += ddb_key_item_size(ss->keylen[i] - p);
			sum[i + 1] = total;
		}
		ss->prefix[ss->nsums] = p;
		ss->sum[ss->nsums++] = sum;
	}
	return sum[hi] - sum[lo];
}

/*
 * The prefix of one half of an internal split (ddb_page.h, "Prefix"): its
 * separators key[lo, hi) -- and 'pred', the one expected to come up into
 * it next, when not NULL -- share their first L bytes (sorted keys share
 * what their first and last share).  Kept in the high key 'hk' (NULL: the
 * half is rightmost) a prefix costs nothing, but only what hk shares with
 * the separators counts; kept in the minus-infinity downlink it costs one
 * more copy of L bytes.  A half without separators takes all of its high
 * key: separators that come later shrink it as they need.  Returns the
 * cheaper length, sets *infirst when it goes in the minus-infinity downlink
 * and *bytes to where its bytes are.  'ss' sums the separators' sizes.
 */
static int
ddb_half_prefix_sums(DdbSepSums *ss, char **key, int *keylen, int lo, int hi,
					 const char *hk, int hklen, const char *pred, int predlen,
					 bool *infirst, const char **bytes)
{
	int			L;
	int			H;
	Size		saved = 0;

	*infirst = false;
	*bytes = NULL;
	if (lo < hi)
	{
		*bytes = key[lo];
		L = ddb_common_prefix(key[lo], keylen[lo], key[hi - 1], keylen[hi - 1]);
		if (pred != NULL)
			L = Min(L, ddb_common_prefix(pred, predlen, key[lo], keylen[lo]));
	}
	else if (pred != NULL)
	{
		*bytes = pred;
		L = predlen;
	}
	else
	{
		/* nothing to share yet: all of the high key, for free */
		*bytes = hk;
		return hk ? Min(hklen, PG_UINT16_MAX) : 0;
	}
	L = Min(L, PG_UINT16_MAX);
	H = hk ? ddb_common_prefix(*bytes, L, hk, hklen) : 0;
	if (L == H)
		return H;
	saved = ddb_sep_sizes(ss, lo, hi, H) - ddb_sep_sizes(ss, lo, hi, L);
	if (pred != NULL)
		saved += ddb_key_item_size(predlen - H) - ddb_key_item_size(predlen - L);
	if (saved >= ddb_key_item_size(L) - ddb_key_item_size(0))
	{
		*infirst = true;
		return L;
	}
	return H;
}

int
ddb_half_prefix(char **key, int *keylen, int lo, int hi, const char *hk, int hklen,
				const char *pred, int predlen, bool *infirst, const char **bytes)
{
	DdbSepSums	direct = {.n = 0,.keylen = keylen};

	return ddb_half_prefix_sums(&direct, key, keylen, lo, hi, hk, hklen, pred, predlen,
								infirst, bytes);
}

/*
 * Bytes the data items of internal page 'page' would grow by if its prefix
 * shrank to newplen.
 */
static Size
ddb_reprefix_growth(Page page, int newplen)
{
	int			plen = DdbPageGetOpaque(page)->prefixlen;
	int			d = plen - newplen;
	OffsetNumber first = DdbPageFirstData(page);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	int64		growth = 0;

	if (d <= 0)
		return 0;
	for (OffsetNumber off = first + 1; off <= maxoff; off++)
	{
		DdbKeyItem	ki = ddb_key_item(page, off);

		growth += MAXALIGN(DdbKeyItemSize(ki->keylen + d)) -
			MAXALIGN(DdbKeyItemSize(ki->keylen));
	}
	/* a prefix kept in the minus-infinity downlink shrinks with it */
	if (ddb_prefix_in_first(page))
		growth -= MAXALIGN(DdbKeyItemSize(plen)) - MAXALIGN(DdbKeyItemSize(newplen));
	return growth > 0 ? (Size) growth : 0;
}

/*
 * Where to split an internal node: existing downlinks [0, m) go left (the
 * separator of m becomes the left half's high key and goes up), [m, n)
 * right, the first of them becoming the right half's minus infinity.  Sizes
 * count each half's separators without the prefix it will get
 * (ddb_half_prefix).  The new downlink of 'newsize' bytes goes in at
 * position 'newpos' (it comes from splitting child newpos - 1; newpos < 0:
 * none), so it lands left when newpos <= m: it sorts below key[m], the left
 * half's new high key.  Returns the best m, or -1.
 *
 * Among the m whose halves fit, only those whose separator is about the
 * shortest are candidates (nbtree's suffix truncation chooses its split
 * point for the same reason): a split at the short separator between two
 * partitions, say, sends that up instead of a long one, and leaves halves
 * whose separators share long prefixes.  Among the candidates:
 *
 *	- When the new downlink lands at an unbounded end of a level (a node
 *	  without a low bound or without a high key) -- keys inserted in
 *	  descending or ascending order -- no further insert of that order
 *	  reaches the other half, and a balanced split would leave it half empty
 *	  for good.  There the split packs the bounded half as full as it can
 *	  (nbtree's rightmost fill factor, for the same reason).
 *
 *	- Otherwise the fuller half as empty as can be, then the halves even.
 */
#define DDB_SEP_SLACK	16		/* "about the shortest": within this many bytes */

static int
ddb_internal_split_point(int n, char **key, int *keylen, const char *low, int lowlen,
						 const char *oldhk, int oldhklen, int newpos, Size newsize,
						 const char *newkey, int newkeylen)
{
	Size	   *lsz = palloc(sizeof(Size) * n);
	Size	   *rsz = palloc(sizeof(Size) * n);
	int			minlen = -1;
	Size		bestmax = 0;
	Size		bestdiff = 0;
	int			best = -1;
	bool		packright = low == NULL && newpos >= 0 && newpos <= 1;
	bool		packleft = oldhk == NULL && newpos >= n;

	DdbSepSums	ss = {.n = n,.keylen = keylen};

	for (int m = 1; m < n; m++)
	{
		bool		infl;
		bool		infr;
		const char *bytes;
		int			pl = ddb_half_prefix_sums(&ss, key, keylen, 1, m, key[m], keylen[m],
											  newpos >= 0 && newpos <= m ? newkey : NULL,
											  newkeylen, &infl, &bytes);
		int			pr = ddb_half_prefix_sums(&ss, key, keylen, m + 1, n, oldhk, oldhklen,
											  newpos > m ? newkey : NULL, newkeylen,
											  &infr, &bytes);

		/*
		 * Each half: its minus-infinity downlink (holding the prefix or
		 * not), its high key, the rest.
		 */
		Size		l = ddb_key_item_size(infl ? pl : 0) + ddb_key_item_size(keylen[m]) +
			ddb_sep_sizes(&ss, 1, m, pl);
		Size		r = ddb_key_item_size(infr ? pr : 0) +
			(oldhk ? ddb_key_item_size(oldhklen) : 0) + ddb_sep_sizes(&ss, m + 1, n, pr);

#ifdef DDB_CHECKS
		{
			/* the sums are the halves' sizes, summed afresh */
			Size		l2 = ddb_key_item_size(infl ? pl : 0) + ddb_key_item_size(keylen[m]);
			Size		r2 = ddb_key_item_size(infr ? pr : 0) +
				(oldhk ? ddb_key_item_size(oldhklen) : 0);
			bool		infl2;
			bool		infr2;

			for (int i = 1; i < m; i++)
				l2 += ddb_key_item_size(keylen[i] - pl);
			for (int i = m + 1; i < n; i++)
				r2 += ddb_key_item_size(keylen[i] - pr);
			if (l2 != l || r2 != r ||
				ddb_half_prefix(key, keylen, 1, m, key[m], keylen[m],
								newpos >= 0 && newpos <= m ? newkey : NULL, newkeylen,
								&infl2, &bytes) != pl || infl2 != infl ||
				ddb_half_prefix(key, keylen, m + 1, n, oldhk, oldhklen,
								newpos > m ? newkey : NULL, newkeylen,
								&infr2, &bytes) != pr || infr2 != infr)
				elog(ERROR, "ddb check: internal split sizes differ at %d of %d", m, n);
		}
#endif
		if (newpos >= 0)
		{
			if (newpos <= m)
				l += newsize;
			else
				r += newsize;
		}
		lsz[m] = l;
		rsz[m] = r;
		if (l <= DDB_PAGE_CAPACITY && r <= DDB_PAGE_CAPACITY &&
			(minlen < 0 || keylen[m] < minlen))
			minlen = keylen[m];
	}

	for (int m = 1; m < n && minlen >= 0; m++)
	{
		Size		l = lsz[m];
		Size		r = rsz[m];

		if (l > DDB_PAGE_CAPACITY || r > DDB_PAGE_CAPACITY ||
			keylen[m] > minlen + DDB_SEP_SLACK)
			continue;
		if (packright && !packleft)
		{
			best = m;			/* the smallest m */
			break;
		}
		if (packleft && !packright)
		{
			best = m;			/* the largest m */
			continue;
		}
		if (best < 0 || Max(l, r) < bestmax ||
			(Max(l, r) == bestmax && (l > r ? l - r : r - l) < bestdiff))
		{
			best = m;
			bestmax = Max(l, r);
			bestdiff = l > r ? l - r : r - l;
		}
	}
	for (int k = 0; k < ss.nsums; k++)
		pfree(ss.sum[k]);
	pfree(lsz);
	pfree(rsz);
	return best;
}

/* Add a downlink with the part of 'key' after the page's prefix. */
static void
ddb_add_downlink(Page page, BlockNumber child, const char *key, int keylen,
				 int prefixlen, OffsetNumber off)
{
	Size		sz;
	DdbKeyItem	ki = ddb_make_key_item(child, key + prefixlen, keylen - prefixlen, &sz);

	ddb_add_item(page, ki, sz, off);
}

/* Give 'page' the contents of 'tmp', keeping its LSN and checksum fields. */
void
ddb_page_replace(Page page, Page tmp)
{
	memcpy((char *) page + SizeOfPageHeaderData, tmp + SizeOfPageHeaderData,
		   BLCKSZ - SizeOfPageHeaderData);
	((PageHeader) page)->pd_lower = ((PageHeader) tmp)->pd_lower;
	((PageHeader) page)->pd_upper = ((PageHeader) tmp)->pd_upper;
	((PageHeader) page)->pd_special = ((PageHeader) tmp)->pd_special;
	((PageHeader) page)->pd_flags = ((PageHeader) tmp)->pd_flags;
	((PageHeader) page)->pd_prune_xid = ((PageHeader) tmp)->pd_prune_xid;
}

/*
 * Rewrite internal page 'page' (registered in the caller's
 * WAL record) with the shorter prefix 'newplen'; the caller has checked that
 * the grown separators fit (ddb_reprefix_growth).  Item order, and so every
 * offset, stays the same.
 */
static void
ddb_reprefix(Page page, int newplen)
{
	DdbPageOpaque op = DdbPageGetOpaque(page);
	OffsetNumber first = DdbPageFirstData(page);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	Page		tmp = palloc(BLCKSZ);

	Assert(!DdbPageIsLeaf(page) && newplen < op->prefixlen);
	ddb_init_page(tmp, op->flags, op->level, op->right);
	DdbPageGetOpaque(tmp)->prefixlen = newplen;
	if (!DdbPageIsRightmost(page))
		ddb_add_item(tmp, PageGetItem(page, PageGetItemId(page, DDB_HIKEY)),
					 ItemIdGetLength(PageGetItemId(page, DDB_HIKEY)), DDB_HIKEY);
	for (OffsetNumber off = first; off <= maxoff; off++)
	{
		BlockNumber child = ddb_key_item(page, off)->child;

		if (off == first)
		{
			const char *prefix;

			/* a prefix kept here stays here, shorter */
			ddb_page_prefix(page, &prefix);
			ddb_add_downlink(tmp, child, prefix, ddb_prefix_in_first(page) ? newplen : 0, 0,
							 InvalidOffsetNumber);
		}
		else
		{
			int			len;
			char	   *sep = ddb_internal_sep(page, off, &len);

			ddb_add_downlink(tmp, child, sep, len, newplen, InvalidOffsetNumber);
			pfree(sep);
		}
	}
	ddb_page_replace(page, tmp);
	pfree(tmp);
}

/* ------------------------------------------------------------------------
 * A leaf split as three page changes.  With ddb's own WAL (ddb_wal.c) a
 * leaf split below an existing parent is made by these functions on the
 * primary, in the record's critical section, and replayed by them, so a
 * replayed page is the primary's byte for byte (outside the hole between
 * pd_lower and pd_upper, which neither keeps anything in), and the record
 * carries the separator and the right half's items instead of a new
 * page's image and a rewritten left page's delta.  They allocate nothing
 * and cannot fail.  Both halves come out in the layout PageAddItem gives
 * items added in offset order to an empty page: the first at the top of
 * the page, each next one right below it.
 * ------------------------------------------------------------------------
 */

/*
 * The header and special space of an empty leaf: what PageInit and
 * ddb_init_page set, without zeroing the rest of the page, which the
 * caller covers with its line pointers and items but for the hole.
 */
static void
ddb_init_leaf_header(Page page, uint16 flags, BlockNumber right)
{
	PageHeader	ph = (PageHeader) page;
	Size		special = BLCKSZ - MAXALIGN(sizeof(DdbPageOpaqueData));

	memset(page, 0, SizeOfPageHeaderData);
	memset(page + special, 0, BLCKSZ - special);
	ph->pd_lower = SizeOfPageHeaderData;
	ph->pd_upper = special;
	ph->pd_special = special;
	PageSetPageSizeAndVersion(page, BLCKSZ, PG_PAGE_LAYOUT_VERSION);
	ddb_init_opaque(page, flags, 0, right);
}

/*
 * The left half, in place: keep the first 'nleft' data items of the leaf
 * under the new high key 'sep', right-linked to the new page rblkno, and
 * under a prefix of 'plen' bytes, the leaf's or (storage version 3) a
 * longer one its items and the separator share (their stored keys lose
 * the difference).  The kept items are gathered, in their new places, on
 * a scratch page and copied back in one piece; their line pointers
 * likewise.  The right half must have been taken from the page first
 * (ddb_split_leaf_right): this overwrites its items.
 */
static void split_leaf_right_under(Page page, Page src, int nleft, BlockNumber right,
								   const char *hk, int hklen, const char *copy, int plen);
static void leaf_item_reprefix(DdbLeafItem dst, DdbLeafItem src, Size size, const char *head,
							   int delta);

void
ddb_split_leaf_left(Page page, int nleft, const char *sep, int seplen, BlockNumber rblkno,
					int plen)
{
	PageHeader	ph = (PageHeader) page;
	DdbPageOpaque op = DdbPageGetOpaque(page);
	OffsetNumber first = DdbPageFirstData(page);
	PGAlignedBlock scratch;
	ItemId		lp = ((PageHeader) scratch.data)->pd_linp;
	Size		hksz = MAXALIGN(DdbKeyItemSize(seplen));
	Size		upper = ph->pd_special - hksz;
	int			delta = op->prefixlen - plen;	/* what stored keys gain */

	Assert(delta <= 0);
	ddb_fill_key_item(scratch.data + upper, hksz, InvalidBlockNumber, sep, seplen);
	ItemIdSetNormal(&lp[0], upper, hksz);
	for (int i = 0; i < nleft; i++)
	{
		ItemId		iid = PageGetItemId(page, first + i);
		Size		len = ItemIdGetLength(iid);
		Size		sz = MAXALIGN(len);

		if (delta < 0)
		{
			/* under the longer prefix: the key loses its first bytes */
			DdbLeafItem li = (DdbLeafItem) PageGetItem(page, iid);
			Size		nsz = ddb_leaf_item_resized(li, sz, delta);

			upper -= nsz;
			leaf_item_reprefix((DdbLeafItem) (scratch.data + upper), li, sz, NULL, delta);
			ItemIdSetNormal(&lp[i + 1], upper, nsz);
			continue;
		}
		upper -= sz;
		memcpy(scratch.data + upper, PageGetItem(page, iid), len);
		if (sz > len)
			memset(scratch.data + upper + len, 0, sz - len);
		ItemIdSetNormal(&lp[i + 1], upper, len);
	}
	memcpy(ph->pd_linp, lp, sizeof(ItemIdData) * (nleft + 1));
	memcpy(page + upper, scratch.data + upper, ph->pd_special - upper);
	ph->pd_lower = SizeOfPageHeaderData + sizeof(ItemIdData) * (nleft + 1);
	ph->pd_upper = upper;
	ph->pd_flags = 0;
	ph->pd_prune_xid = InvalidTransactionId;
	op->right = rblkno;

	/*
	 * The separator lies between two item keys that start with the
	 * prefix (a key that does not share the leaf's never comes to a split:
	 * ddb_make_room shrinks the prefix first), so it starts with it too and
	 * holds it; a copy the old high key had goes with that.
	 */
	op->prefixlen = plen;
	op->flags &= ~DDB_PAGE_PREFIX_COPY;
}

/*
 * Leaf item 'src' (of 'size' bytes) written to 'dst' under a prefix
 * 'delta' bytes shorter (negative: longer; "Leaf prefix" in ddb_page.h):
 * its stored key becomes 'head' (the delta bytes the shorter prefix leaves
 * out) followed by its own, or its own without its first -delta bytes.
 * 'dst' takes ddb_leaf_item_resized(src, size, delta) bytes.
 */
static void
leaf_item_reprefix(DdbLeafItem dst, DdbLeafItem src, Size size, const char *head, int delta)
{
	Size		tupoff = DdbLeafTupleOffset(src->keylen);
	int			skip = Max(-delta, 0);

	memset(dst, 0, DdbLeafTupleOffset(src->keylen + delta));
	dst->tid = src->tid;
	dst->keylen = src->keylen + delta;
	if (delta > 0)
		memcpy(dst->key, head, delta);
	memcpy(dst->key + Max(delta, 0), src->key + skip, src->keylen - skip);
	memcpy((char *) dst + DdbLeafTupleOffset(dst->keylen), (char *) src + tupoff, size - tupoff);
}

/* ------------------------------------------------------------------------
 * A leaf under another prefix (storage version 3: "Leaf prefix" in
 * ddb_page.h).  ddb_leaf_relay re-lays a leaf in place; redo calls it with
 * the length the record carries, so it takes the prefix's bytes from the
 * page itself, allocates nothing and cannot fail once the caller has
 * checked the size (ddb_leaf_relaid_size).
 * ------------------------------------------------------------------------
 */

/*
 * The first 'len' bytes of every item key of leaf 'page', into buf: its
 * prefix, then as much of its first item's stored key as len asks for.
 * The caller knows that every item shares them (ddb_leaf_items_prefix).
 */
static void
leaf_prefix_bytes(Page page, int len, char *buf)
{
	const char *prefix;
	int			plen = ddb_leaf_prefix(page, &prefix);

	memcpy(buf, prefix, Min(plen, len));
	if (len > plen)
		memcpy(buf + plen, ddb_leaf_item(page, DdbPageFirstData(page))->key, len - plen);
}

/*
 * The length of the prefix every item key of leaf 'page' shares, version
 * suffixes left out, and 'extra' (extralen bytes) too when it is not
 * NULL: lcp of the first and last items' keys (items lie in item key
 * order, and every string between two shares their lcp), never longer
 * than any key.  An empty leaf: its own prefix, or what extra shares of
 * it.
 */
static int
ddb_leaf_items_prefix(Page page, const char *extra, int extralen)
{
	OffsetNumber first = DdbPageFirstData(page);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	const char *prefix;
	int			plen = ddb_leaf_prefix(page, &prefix);
	int			len;
	char		buf[DDB_MAX_KEY_LEN];

	if (maxoff < first)
		len = plen;
	else
	{
		DdbLeafItem fi = ddb_leaf_item(page, first);
		DdbLeafItem la = ddb_leaf_item(page, maxoff);

		len = plen + ddb_common_prefix(fi->key, fi->keylen, la->key, la->keylen);
		for (OffsetNumber o = first; o <= maxoff; o++)
			len = Min(len, plen + ddb_leaf_item(page, o)->keylen);
	}
	if (extra != NULL)
	{
		leaf_prefix_bytes(page, len, buf);
		len = ddb_common_prefix(buf, len, extra, extralen);
	}
	return len;
}

/*
 * Would leaf 'page' under a prefix of 'newplen' bytes (from
 * leaf_prefix_bytes) keep it after its high key's key bytes?  When the high
 * key does not start with it.
 */
static bool
leaf_prefix_needs_copy(Page page, int newplen)
{
	DdbKeyItem	hk;
	char		buf[DDB_MAX_KEY_LEN];

	if (newplen == 0)
		return false;
	hk = ddb_key_item(page, DDB_HIKEY);
	leaf_prefix_bytes(page, newplen, buf);
	return !ddb_starts_with(hk->key, hk->keylen, buf, newplen);
}

/* The bytes leaf 'page' would take, line pointers counted, re-laid under a
 * prefix of 'newplen' bytes (ddb_leaf_relay). */
static Size
ddb_leaf_relaid_size(Page page, int newplen)
{
	int			plen = DdbPageGetOpaque(page)->prefixlen;
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	Size		total = 0;

	if (!DdbPageIsRightmost(page))
		total += ddb_key_item_size(ddb_key_item(page, DDB_HIKEY)->keylen +
								   (leaf_prefix_needs_copy(page, newplen) ? newplen : 0));
	for (OffsetNumber o = DdbPageFirstData(page); o <= maxoff; o++)
	{
		ItemId		iid = PageGetItemId(page, o);

		total += MAXALIGN(ddb_leaf_item_resized((DdbLeafItem) PageGetItem(page, iid),
												MAXALIGN(ItemIdGetLength(iid)),
												plen - newplen)) + sizeof(ItemIdData);
	}
	return total;
}

/*
 * Re-lay leaf 'page' under a prefix of 'newplen' bytes, which every item
 * key shares (from leaf_prefix_bytes): every item's stored key loses or
 * gains the difference, at the same offset; the prefix is kept in the
 * high key when that starts with it, else copied after the high key's
 * key bytes (DDB_PAGE_PREFIX_COPY).  Items come out in the layout
 * PageAddItem gives items added in offset order to an empty page.  On the
 * primary and in redo; the caller checked that it fits.
 */
void
ddb_leaf_relay(Page page, int newplen)
{
	DdbPageOpaque op = DdbPageGetOpaque(page);
	int			plen = op->prefixlen;
	OffsetNumber first = DdbPageFirstData(page);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	bool		copy = !DdbPageIsRightmost(page) && leaf_prefix_needs_copy(page, newplen);
	char		np[DDB_MAX_KEY_LEN];
	char		op_prefix[DDB_MAX_KEY_LEN];
	PGAlignedBlock scratch;
	Page		tmp = scratch.data;
	PageHeader	th = (PageHeader) tmp;
	ItemId		lp = th->pd_linp;
	Size		upper;
	int			n = 0;

	if (ddb_leaf_relaid_size(page, newplen) > DDB_PAGE_CAPACITY ||
		(DdbPageIsRightmost(page) && newplen > 0))
		elog(ERROR, "ddb leaf does not fit under a prefix of %d bytes", newplen);
	leaf_prefix_bytes(page, newplen, np);
	leaf_prefix_bytes(page, plen, op_prefix);

	memset(tmp, 0, BLCKSZ);
	memcpy(tmp, page, SizeOfPageHeaderData);
	th->pd_special = BLCKSZ - MAXALIGN(sizeof(DdbPageOpaqueData));
	*DdbPageGetOpaque(tmp) = *op;
	DdbPageGetOpaque(tmp)->prefixlen = newplen;
	if (copy)
		DdbPageGetOpaque(tmp)->flags |= DDB_PAGE_PREFIX_COPY;
	else
		DdbPageGetOpaque(tmp)->flags &= ~DDB_PAGE_PREFIX_COPY;
	upper = th->pd_special;
	if (!DdbPageIsRightmost(page))
	{
		DdbKeyItem	hk = ddb_key_item(page, DDB_HIKEY);
		Size		len = DdbKeyItemSize(hk->keylen) + (copy ? newplen : 0);
		Size		sz = MAXALIGN(len);

		upper -= sz;
		ddb_fill_key_item(tmp + upper, sz, InvalidBlockNumber, hk->key, hk->keylen);
		if (copy)
			memcpy(((DdbKeyItem) (tmp + upper))->key + hk->keylen, np, newplen);
		ItemIdSetNormal(&lp[n], upper, sz);
		n++;
	}
	for (OffsetNumber o = first; o <= maxoff; o++)
	{
		ItemId		iid = PageGetItemId(page, o);
		DdbLeafItem li = (DdbLeafItem) PageGetItem(page, iid);
		Size		sz = MAXALIGN(ItemIdGetLength(iid));
		Size		nsz = ddb_leaf_item_resized(li, sz, plen - newplen);

		upper -= MAXALIGN(nsz);
		/* a longer prefix: drop bytes; a shorter one: the old prefix's rest in front */
		leaf_item_reprefix((DdbLeafItem) (tmp + upper), li, sz,
						   op_prefix + newplen, plen - newplen);
		ItemIdSetNormal(&lp[n], upper, nsz);
		n++;
	}
	th->pd_lower = SizeOfPageHeaderData + sizeof(ItemIdData) * n;
	th->pd_upper = upper;
	ddb_page_replace(page, tmp);
}

/*
 * May leaf 'page' (not the rightmost) be re-laid under a prefix of p bytes
 * and keep 'need' bytes free?  A copy of the prefix must not make the high
 * key longer than the longest separator (DDB_MAX_SEP_LEN).
 */
static bool
leaf_prefix_fits(Page page, int p, Size need)
{
	if (leaf_prefix_needs_copy(page, p) &&
		ddb_key_item(page, DDB_HIKEY)->keylen + p > DDB_MAX_SEP_LEN)
		return false;
	return ddb_leaf_relaid_size(page, p) + need <= DDB_PAGE_CAPACITY;
}

/*
 * The prefix leaf 'page' should take (storage version 3), which leaves
 * 'need' bytes free: the longest of the prefix its items and 'extra' (a
 * key about to go in, or NULL) share (ddb_leaf_items_prefix), kept after
 * the high key when that does not hold it; the part of it the high key
 * holds, for free; 'fallback'.  -1 when none fits.  'fallback' is the
 * page's own prefix after a split, which fits by the split's sizing, or 0.
 * A copy never makes the high key longer than the longest separator
 * (DDB_MAX_SEP_LEN), so that an item of any size still fits beside it
 * (DDB_MAX_ITEM_SIZE), as a split needs.
 */
static int
ddb_leaf_choose_prefix(Page page, const char *extra, int extralen, Size need, int fallback)
{
	int			cand[3];
	char		buf[DDB_MAX_KEY_LEN];

	if (DdbPageIsRightmost(page))
		return 0;
	cand[0] = ddb_leaf_items_prefix(page, extra, extralen);
	leaf_prefix_bytes(page, cand[0], buf);
	{
		DdbKeyItem	hk = ddb_key_item(page, DDB_HIKEY);

		cand[1] = ddb_common_prefix(buf, cand[0], hk->key, hk->keylen);
	}
	cand[2] = fallback;
	for (int i = 0; i < 3; i++)
		if (leaf_prefix_fits(page, cand[i], need))
			return cand[i];
	return -1;
}

/*
 * The right half, on the new page 'page', taken from leaf 'src' before
 * its left half is made (ddb_split_leaf_left): src's high key, when it
 * has one, and its data items from the nleft'th on, under a prefix of
 * 'plen' bytes 'prefix': src's, or (storage version 3) a longer one its
 * items share, copied after the high key when that does not start with
 * it.  Items that lie one right below the other on src, as a split or a
 * bulk build left them, are copied in one piece when the prefix stays.
 */
void
ddb_split_leaf_right(Page page, Page src, int nleft, int plen, const char *prefix)
{
	DdbKeyItem	hk = DdbPageIsRightmost(src) ? NULL : ddb_key_item(src, DDB_HIKEY);
	bool		copy = hk != NULL && plen > 0 &&
		!ddb_starts_with(hk->key, hk->keylen, prefix, plen);

	split_leaf_right_under(page, src, nleft, DdbPageGetOpaque(src)->right,
						   hk ? hk->key : NULL, hk ? hk->keylen : 0,
						   copy ? prefix : NULL, plen);
}

/*
 * ddb_split_leaf_right's page, under the high key 'hk' (NULL: none) and
 * right-linked to 'right': src's own for a new page, the right sibling's
 * when that takes the right half (ddb_split_into_right).  'plen' is the
 * page's prefix: src's, whose items are then copied as they are, or a
 * shorter one (the right sibling's key space may share less of it), whose
 * items get the bytes of src's prefix beyond it back (leaf_item_reprefix).
 * 'copy' (NULL: none) is the prefix's bytes to keep after the high key's
 * (DDB_PAGE_PREFIX_COPY).
 */
static void
split_leaf_right_under(Page page, Page src, int nleft, BlockNumber right,
					   const char *hk, int hklen, const char *copy, int plen)
{
	PageHeader	ph = (PageHeader) page;
	OffsetNumber off = DdbPageFirstData(src) + nleft;
	OffsetNumber maxoff = PageGetMaxOffsetNumber(src);
	ItemId		lp = ph->pd_linp;
	int			n = 0;
	Size		upper;
	Size		runsrc = 0;		/* the pending run of items to copy */
	Size		runlen = 0;
	int			grow = DdbPageGetOpaque(src)->prefixlen - plen;
	const char *gbytes = NULL;	/* src's prefix bytes beyond plen */
	uint16		flags = DdbPageGetOpaque(src)->flags & ~DDB_PAGE_PREFIX_COPY;

	Assert(copy == NULL || (hk != NULL && grow <= 0));
	if (grow > 0)
	{
		(void) ddb_leaf_prefix(src, &gbytes);
		gbytes += plen;
	}
	ddb_init_leaf_header(page, copy ? flags | DDB_PAGE_PREFIX_COPY : flags, right);
	DdbPageGetOpaque(page)->prefixlen = plen;
	upper = ph->pd_special;
	if (hk != NULL)
	{
		Size		sz = MAXALIGN(DdbKeyItemSize(hklen) + (copy ? plen : 0));

		upper -= sz;
		ddb_fill_key_item(page + upper, sz, InvalidBlockNumber, hk, hklen);
		if (copy)
			memcpy(page + upper + DdbKeyItemSize(hklen), copy, plen);
		ItemIdSetNormal(&lp[n], upper, sz);
		n++;
	}
	for (; off <= maxoff; off++)
	{
		ItemId		iid = PageGetItemId(src, off);
		Size		sz = MAXALIGN(ItemIdGetLength(iid));
		Size		from = ItemIdGetOffset(iid);

		if (grow != 0)
		{
			/* under another prefix: the key gains bytes in front, or loses them */
			DdbLeafItem li = (DdbLeafItem) (src + from);
			Size		nsz = ddb_leaf_item_resized(li, sz, grow);

			upper -= nsz;
			leaf_item_reprefix((DdbLeafItem) (page + upper), li, sz, gbytes, grow);
			ItemIdSetNormal(&lp[n], upper, nsz);
			n++;
			continue;
		}
		if (runlen > 0 && from + sz != runsrc)
		{
			memcpy(page + upper, src + runsrc, runlen);
			runlen = 0;
		}
		upper -= sz;
		runsrc = from;
		runlen += sz;
		ItemIdSetNormal(&lp[n], upper, sz);
		n++;
	}
	if (runlen > 0)
		memcpy(page + upper, src + runsrc, runlen);
	ph->pd_lower = SizeOfPageHeaderData + sizeof(ItemIdData) * n;
	ph->pd_upper = upper;
}

/*
 * The right half's line pointer lengths for the SPLIT record, from the
 * new page as the split made it: the count, then one uint16 per item
 * (palloc'd; *len its size).  With the items as the right half lays them
 * out (pd_upper to pd_special) they are what ddb_split_leaf_right_redo
 * rebuilds the page from.
 */
uint16 *
ddb_split_leaf_right_lens(Page page, Size *len)
{
	int			n = PageGetMaxOffsetNumber(page);
	uint16	   *lens = palloc(sizeof(uint16) * (n + 1));

	lens[0] = n;
	for (OffsetNumber off = FirstOffsetNumber; off <= n; off++)
		lens[off] = ItemIdGetLength(PageGetItemId(page, off));
	*len = sizeof(uint16) * (n + 1);
	return lens;
}

/*
 * Redo of the right half, on the new page 'page', whose prefix is
 * 'prefixlen' (the split leaf's, ddb_page.h "Leaf prefix"; 0 for the
 * plain SPLIT record): 'data' is the count and
 * line pointer lengths, then the items, either as the page lays them out
 * (inpage: ddb_split_leaf_right_lens, then the page's bytes from pd_upper
 * on) or, as the plain SPLIT record of earlier ddb versions has them, one after
 * another in offset order (the high key first, when there is one).  Both
 * give the page ddb_split_leaf_right made.
 */
void
ddb_split_leaf_right_redo(Page page, uint16 flags, BlockNumber right, uint16 prefixlen,
						  const char *data, bool inpage)
{
	PageHeader	ph = (PageHeader) page;
	uint16		n;
	const char *lens = data + sizeof(uint16);
	const char *p;
	Size		upper;

	memcpy(&n, data, sizeof(uint16));
	p = lens + sizeof(uint16) * n;
	ddb_init_leaf_header(page, flags, right);
	DdbPageGetOpaque(page)->prefixlen = prefixlen;
	upper = ph->pd_special;
	for (int i = 0; i < n; i++)
	{
		uint16		len;

		memcpy(&len, lens + sizeof(uint16) * i, sizeof(uint16));
		upper -= MAXALIGN(len);
		ItemIdSetNormal(&ph->pd_linp[i], upper, len);
		if (!inpage)
		{
			memcpy(page + upper, p, len);
			if (MAXALIGN(len) > len)
				memset(page + upper + len, 0, MAXALIGN(len) - len);
			p += len;
		}
	}
	if (inpage)
		memcpy(page + upper, p, ph->pd_special - upper);
	ph->pd_lower = SizeOfPageHeaderData + sizeof(ItemIdData) * n;
	ph->pd_upper = upper;
}

/*
 * The parent: the new downlink (to rblkno, separator 'sep') at 'off', the
 * page's prefix shrunk first to 'newpp' when it is longer.
 */
void
ddb_split_parent(Page page, OffsetNumber off, BlockNumber rblkno, const char *sep, int seplen,
				 int newpp)
{
	if (newpp < DdbPageGetOpaque(page)->prefixlen)
		ddb_reprefix(page, newpp);
	ddb_add_downlink(page, rblkno, sep, seplen, newpp, off);
}

/*
 * Does the table's last leaf, its items re-laid under a prefix of p bytes
 * taking 'need' bytes with what is to join them, fit beside the high key
 * 'sep' (seplen bytes) the split gives it -- with a copy of the prefix
 * when sep does not start with it (never beyond DDB_MAX_SEP_LEN, as
 * ddb_leaf_choose_prefix) -- and does its left half fit as
 * ddb_split_leaf_left first makes it, under the part of the prefix sep
 * holds (*held), before its re-lay?  last_leaf_run_split's and
 * last_leaf_append_split's test.
 */
static bool
last_leaf_bound_fits(Page page, int p, Size need, const char *sep, int seplen, int *held)
{
	char		bytes[DDB_MAX_KEY_LEN];
	bool		copy;

	leaf_prefix_bytes(page, p, bytes);
	*held = ddb_common_prefix(bytes, p, sep, seplen);
	copy = *held < p;
	return !(copy && seplen + p > DDB_MAX_SEP_LEN) &&
		need + ddb_key_item_size(seplen + (copy ? p : 0)) <= DDB_PAGE_CAPACITY &&
		ddb_leaf_relaid_size(page, *held) + ddb_key_item_size(seplen) <= DDB_PAGE_CAPACITY;
}

/*
 * A split of the table's last leaf for a run of keys past all its items
 * (inserts in key order at the table's end: a COPY into a table created
 * earlier), storage version 3.  The last leaf has no high key to keep a
 * prefix in, so it fills with whole keys; split as usual (its items left,
 * the run right), it would take its items' prefix only then, and the
 * bytes that frees would stay free, since every later key goes right.
 * Instead the leaf keeps its items and as many of the run's first keys as
 * fit beside its reserve under the prefix they all share (the lcp of the
 * first item and the last run key kept: both lie in key order), with a
 * high key before the next run key, which keeps the prefix or, when it
 * does not start with it, a copy of it (never beyond DDB_MAX_SEP_LEN, as
 * ddb_leaf_choose_prefix).  After the whole run the high key is the
 * successor of the run's last key, or of its partition part
 * (ddb_key_partition_len) when the items and the run all lie in one
 * partition: then the partition's keys after the run fill this leaf too
 * (as last_leaf_append_split's single keys do), not a last leaf of whole
 * keys again.  Sizes are those of ddb_leaf_relaid_size and of
 * ddb_tree_insert_multi's run, so the kept keys then go in as one run.
 * Returns how many run keys the leaf keeps (0: split as usual; all of
 * them leave the right half empty for the keys after the run), with the
 * separator (palloc'd), the prefix the halves are made under (what the
 * separator holds of it, ddb_split_leaf_left) and the left half's prefix.
 */
static int
last_leaf_run_split(Page page, DdbKeyType pktype, const DdbSplitRun *run, char **sep,
					int *seplen, int *madeplen, int *leftplen)
{
	int			kept = 0;
	StringInfoData succ;
	/* the run's partition part, when its first key has one */
	int			partlen = ddb_key_partition_len(pktype, run->itemkey[0],
												run->itemkeylen[0] - DDB_SUFFIX_LEN);

	Assert(DdbPageIsRightmost(page) && DdbPageGetOpaque(page)->prefixlen == 0);
	initStringInfo(&succ);
	for (int k = 1; k <= run->n; k++)
	{
		int			klen = run->itemkeylen[k - 1] - DDB_SUFFIX_LEN;
		int			p = ddb_leaf_items_prefix(page, run->itemkey[k - 1], klen);
		const char *next;
		int			sl;
		int			held;
		/* the items (the last leaf has no high key) and run keys under p */
		Size		need = ddb_leaf_relaid_size(page, p) + run->reserve;

		for (int r = 0; r < k; r++)
			need += ddb_leaf_size_resized(run->itemkeylen[r] - DDB_SUFFIX_LEN, run->size[r], -p) +
				sizeof(ItemIdData);
		if (need > DDB_PAGE_CAPACITY)
			break;				/* (nor do more keys fit) */

		/*
		 * The high key: before the next run key, or after the whole run the
		 * successor of its last key, which every version of that key lies
		 * below and every greater key at or above (keys are prefix-free)
		 */
		if (k < run->n)
		{
			next = run->itemkey[k];
			sl = ddb_truncated_separator(run->itemkey[k - 1], run->itemkeylen[k - 1],
										 next, run->itemkeylen[k]);
		}
		else if (ddb_key_successor(run->itemkey[k - 1],
								   p >= partlen && partlen > 0 ? partlen : klen, &succ))
		{
			next = succ.data;
			sl = succ.len;
		}
		else
			break;

		/*
		 * (these depend on this k's separator alone, so a k they do not fit
		 * may be followed by one they do)
		 */
		if (!last_leaf_bound_fits(page, p, need, next, sl, &held))
			continue;
		if (kept > 0)
			pfree(*sep);
		kept = k;
		*seplen = sl;
		*sep = palloc(sl);
		memcpy(*sep, next, sl);
		*madeplen = held;
		*leftplen = p;
	}
	pfree(succ.data);
	return kept;
}

/*
 * A split of the table's last leaf for a single new key past all its
 * items, when they and the key lie in one partition (a partition that
 * grows at the table's end, row by row), storage version 3.  The last
 * leaf holds its items with whole keys (it has no high key to keep a
 * prefix in); split as usual, it would keep them under their prefix, and
 * every later key of the partition would go right, onto a last leaf that
 * again fills with whole keys: with keys of a kilobyte the leaves left
 * behind were a fifth full.  Instead the leaf keeps its items, under the
 * prefix they and the key share, up to the partition's end: its high key
 * is the successor of the key's partition part (ddb_key_partition_len),
 * which holds all but the last byte of the prefix, the prefix in a copy
 * after it.  The right half, the new last leaf, stays empty for the
 * partitions after it, and the partition's later keys fill the left
 * half, whose splits are then those of any partition that grows at its
 * end (ddb_leaf_split_after_new).  Sizes as last_leaf_run_split's, with
 * 'newsize' (the new item whole, its line pointer and the leaf reserve)
 * for the key.  Returns false (split as usual) when the leaf holds
 * another partition's items or these do not fit; else sets the separator
 * (palloc'd), the prefix the halves are made under (what the separator
 * holds of it) and the left half's prefix.
 */
static bool
last_leaf_append_split(Page page, DdbKeyType pktype, const char *newkey, int newkeylen,
					   Size newsize, char **sep, int *seplen, int *madeplen, int *leftplen)
{
	int			klen = newkeylen - DDB_SUFFIX_LEN;
	int			partlen = ddb_key_partition_len(pktype, newkey, klen);
	int			p;
	int			held;
	StringInfoData succ;

	Assert(DdbPageIsRightmost(page) && DdbPageGetOpaque(page)->prefixlen == 0);
	if (partlen <= 0)
		return false;
	p = ddb_leaf_items_prefix(page, newkey, klen);
	if (p < partlen)
		return false;			/* (another partition's items too) */
	initStringInfo(&succ);
	if (!ddb_key_successor(newkey, partlen, &succ))
	{
		pfree(succ.data);
		return false;
	}
	if (!last_leaf_bound_fits(page, p, ddb_leaf_relaid_size(page, p) + newsize,
							  succ.data, succ.len, &held))
	{
		pfree(succ.data);
		return false;
	}
	Assert(held < p);			/* (it ends after the partition part) */
	*sep = succ.data;
	*seplen = succ.len;
	*madeplen = held;
	*leftplen = p;
	return true;
}

/*
 * The split of leaf 'page' (its items copied out in 'items') that leaves
 * room for as much of 'run' as belongs on the page: the run's items below
 * the page's high key, all of them if a split fits them, else the longest
 * prefix of them that fits (ddb_leaf_split_run).  Returns the number of
 * existing items that go left and sets the separator (palloc'd), or -1
 * when not even the first two fit: the caller splits for the first item
 * alone.
 */
static int
ddb_split_point_for_run(Page page, DdbKeyType pktype, SplitItem *items, int nitems,
						const DdbSplitRun *run, DdbKeyItem oldhk, Size oldhkspace,
						char **sep, int *seplen)
{
	int			k = 0;
	int			nv;
	char	  **vkey;
	int		   *vkeylen;
	Size	   *vsize;
	bool	   *isnew;
	char	  **ekey = palloc(sizeof(char *) * nitems);
	int		   *ekeylen = palloc(sizeof(int) * nitems);

	while (k < run->n && !ddb_beyond_page(page, run->itemkey[k], run->itemkeylen[k], false))
		k++;
	for (int i = 0; i < nitems; i++)
	{
		DdbLeafItem li = (DdbLeafItem) items[i].data;

		ekey[i] = palloc(DdbPageGetOpaque(page)->prefixlen + li->keylen + DDB_SUFFIX_LEN);
		ddb_leaf_item_key(page, li, ekey[i], &ekeylen[i]);
	}
	vkey = palloc(sizeof(char *) * (nitems + k));
	vkeylen = palloc(sizeof(int) * (nitems + k));
	vsize = palloc(sizeof(Size) * (nitems + k));
	isnew = palloc(sizeof(bool) * (nitems + k));

	for (; k > 1; k--)
	{
		int			e = 0,
					r = 0,
					b,
					nleft = 0;

		/* merge the page's items and the run's first k */
		nv = 0;
		while (e < nitems || r < k)
		{
			if (r < k && (e >= nitems ||
						  ddb_compare_bytes(run->itemkey[r], run->itemkeylen[r],
											ekey[e], ekeylen[e]) < 0))
			{
				vkey[nv] = run->itemkey[r];
				vkeylen[nv] = run->itemkeylen[r];
				vsize[nv] = run->size[r] + sizeof(ItemIdData);
				isnew[nv++] = true;
				r++;
			}
			else
			{
				vkey[nv] = ekey[e];
				vkeylen[nv] = ekeylen[e];
				vsize[nv] = items[e].size + sizeof(ItemIdData);
				isnew[nv++] = false;
				e++;
			}
		}
		b = ddb_leaf_split_run(pktype, nv, vkey, vkeylen, vsize, isnew, run->reserve,
							   oldhkspace, oldhk);
		if (b < 0)
			continue;
		*seplen = ddb_truncated_separator(vkey[b - 1], vkeylen[b - 1], vkey[b], vkeylen[b]);
		*sep = palloc(*seplen);
		memcpy(*sep, vkey[b], *seplen);
		for (int v = 0; v < b; v++)
			nleft += isnew[v] ? 0 : 1;
		return nleft;
	}
	return -1;
}

/*
 * The versions a split's prune of the right sibling removed
 * (ddb_prune_right_sibling), for the caller of ddb_split to clear from the
 * row-id map once it holds no tree page (rule 1 of the header).
 */
typedef struct DdbSplitPruned
{
	ItemPointerData *tids;		/* room for MaxOffsetNumber, palloc'd lazily */
	int			n;
} DdbSplitPruned;

/* Clear the map entries of what a split's prune removed; no tree page may be locked. */
static void
ddb_split_pruned_clear(Relation rel, DdbSplitPruned *pruned)
{
	if (pruned->n > 0)
		ddb_map_clear(rel, pruned->tids, pruned->n);
	pruned->n = 0;
}

/*
 * Before leaf 'buf' splits below 'parentbuf' (both locked exclusively, the
 * leaf's downlink at 'downlink'): when the versions of the leaf's last key
 * go on to its right sibling (the leaf's high key is that key plus part of
 * a version suffix) and the sibling is the parent's next child, lock the
 * sibling exclusively -- parent, then child, then left to right (rule 1),
 * and only if no one holds it -- and prune it (see "Long keys" in the
 * header).  Returns the sibling, still locked, when the prune left it
 * without items, for the split to use instead of a new page; else
 * InvalidBuffer, the sibling released.  What the prune removed is in
 * *pruned.
 */
static Buffer
ddb_prune_right_sibling(Relation rel, Buffer parentbuf, OffsetNumber downlink, Buffer buf,
						DdbSplitPruned *pruned)
{
	Page		page = BufferGetPage(buf);
	Page		parent = BufferGetPage(parentbuf);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	OffsetNumber next = OffsetNumberNext(downlink);
	BlockNumber right = DdbPageGetOpaque(page)->right;
	DdbKeyItem	hk;
	DdbLeafItem last;
	char		lastbuf[DDB_MAX_KEY_LEN];
	const char *lastkey;
	int			lastlen;
	Buffer		rbuf;
	Page		rpage;

	if (DdbPageIsRightmost(page) || maxoff < DdbPageFirstData(page) ||
		next > PageGetMaxOffsetNumber(parent) || ddb_key_item(parent, next)->child != right)
		return InvalidBuffer;
	hk = ddb_key_item(page, DDB_HIKEY);
	last = ddb_leaf_item(page, maxoff);
	lastkey = ddb_leaf_key(page, last, lastbuf, &lastlen);
	if (hk->keylen <= lastlen || memcmp(hk->key, lastkey, lastlen) != 0)
		return InvalidBuffer;

	Assert(pruned->n == 0);
	if (pruned->tids == NULL)
		pruned->tids = palloc(sizeof(ItemPointerData) * MaxOffsetNumber);
	/*
	 * Only conditionally, as an unlink locks its leaves: a sibling someone
	 * holds would hold up every descent through the parent meanwhile.
	 */
	rbuf = ReadBuffer(rel, right);
	if (!ConditionalLockBuffer(rbuf))
	{
		ReleaseBuffer(rbuf);
		return InvalidBuffer;
	}
	ddb_check_leaf(rel, rbuf);
	rpage = BufferGetPage(rbuf);
	/* (the parent we hold names it: no unlink can have deleted it) */
	Assert(!DdbPageIsDeleted(rpage));
	pruned->n = ddb_prune_leaf(rel, rbuf, GlobalVisTestFor(rel), NULL, pruned->tids, NULL);
	if (PageGetMaxOffsetNumber(rpage) >= DdbPageFirstData(rpage))
	{
		UnlockReleaseBuffer(rbuf);
		return InvalidBuffer;
	}
	return rbuf;
}

/*
 * Split leaf 'buf' into its empty right sibling 'rbuf' instead of a new
 * page (see "Long keys" in the header): the leaf keeps its first 'nleft'
 * items under the new high key 'sep'; the sibling gets the rest under its
 * own high key and right-link; and the parent's downlink to the sibling
 * (at OffsetNumberNext(downlink)) gets 'sep' as its separator, stored
 * without the first 'newpp' bytes (the parent's prefix, shrunk first when
 * it is longer; the caller checked that the parent has room for a new
 * downlink, which is more than this needs).  The sibling's key space then
 * reaches from 'sep', which starts with the leaf's prefix, up to its own
 * high key, which may share less of it (a bulk build's leaf boundary, or
 * an unlink, lies between the two) or be none (the rightmost leaf): its
 * prefix becomes what that high key shares of the leaf's ("Leaf prefix"
 * in ddb_page.h), and the moved items get the rest of the leaf's prefix
 * back.  One Generic WAL record of the three pages, the sibling as a full
 * image, in both WAL modes.  Returns false, with nothing changed, when
 * the sibling's high key leaves no room for the right half, or for the
 * new item (of 'newsize' bytes, line pointer counted, at the leaf's
 * prefix) if it goes there.
 */
static bool
ddb_split_into_right(Relation rel, Buffer parentbuf, OffsetNumber downlink, Buffer buf,
					 Buffer rbuf, int nleft, const char *sep, int seplen, int newpp,
					 const char *newkey, int newkeylen, Size newsize, int lplen)
{
	Page		page = BufferGetPage(buf);
	Page		rpage = BufferGetPage(rbuf);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	Size		need = 0;
	char	   *rhk = NULL;
	int			rhklen = 0;
	BlockNumber rright = DdbPageGetOpaque(rpage)->right;
	int			plen = DdbPageGetOpaque(page)->prefixlen;
	int			rplen = 0;		/* the sibling's prefix: none when rightmost */
	GenericXLogState *state;
	Page		ppage,
				lpage;

	if (!DdbPageIsRightmost(rpage))
	{
		DdbKeyItem	hk = ddb_key_item(rpage, DDB_HIKEY);

		rhklen = hk->keylen;
		rhk = palloc(Max(rhklen, 1));
		memcpy(rhk, hk->key, rhklen);
		need += ddb_key_item_size(rhklen);
		if (plen > 0)
		{
			const char *prefix;

			(void) ddb_leaf_prefix(page, &prefix);
			rplen = ddb_common_prefix(rhk, rhklen, prefix, plen);
		}
	}
	for (OffsetNumber off = DdbPageFirstData(page) + nleft; off <= maxoff; off++)
	{
		ItemId		iid = PageGetItemId(page, off);

		need += ddb_leaf_item_resized((DdbLeafItem) PageGetItem(page, iid),
									  MAXALIGN(ItemIdGetLength(iid)), plen - rplen) +
			sizeof(ItemIdData);
	}
	if (newkey != NULL && ddb_compare_bytes(newkey, newkeylen, sep, seplen) >= 0)
		need += newsize + MAXALIGN(plen - rplen);

	if (need > DDB_PAGE_CAPACITY)
	{
		if (rhk)
			pfree(rhk);
		return false;
	}

	ddb_vm_clear(rel, buf);
	ddb_vm_clear(rel, rbuf);
	state = GenericXLogStart(rel);
	ppage = GenericXLogRegisterBuffer(state, parentbuf, 0);
	lpage = GenericXLogRegisterBuffer(state, buf, DDB_GENERIC_ITEMS_MOVE);
	rpage = GenericXLogRegisterBuffer(state, rbuf, GENERIC_XLOG_FULL_IMAGE);
	/* the right half first: the left one is made in place over it */
	split_leaf_right_under(rpage, lpage, nleft, rright, rhk, rhklen, NULL, rplen);
	ddb_split_leaf_left(lpage, nleft, sep, seplen, BufferGetBlockNumber(rbuf), lplen);
	PageIndexTupleDelete(ppage, OffsetNumberNext(downlink));
	ddb_split_parent(ppage, OffsetNumberNext(downlink), BufferGetBlockNumber(rbuf),
					 sep, seplen, newpp);
	DdbCheck(ddb_page_is_ordered(rpage, sep, seplen));
	DdbCheck(ddb_page_is_ordered(ppage, NULL, 0));
	GenericXLogFinish(state);
	if (rhk)
		pfree(rhk);
	return true;
}

/*
 * Give the halves of a leaf split just made aside (storage version 3) the
 * prefixes of their items, and of 'newkey' (an item key, or NULL) in the
 * half it goes to, where they leave room for 'newsize' bytes; else they
 * keep the split leaf's (ddb_leaf_choose_prefix).
 */
static void
leaf_split_prefixes(Page lpage, Page rpage, const char *newkey, int newkeylen,
					Size newsize, const char *sep, int seplen)
{
	bool		goes_right = newkey != NULL &&
		ddb_compare_bytes(newkey, newkeylen, sep, seplen) >= 0;

	for (int h = 0; h < 2; h++)
	{
		Page		half = h == 0 ? lpage : rpage;
		bool		here = newkey != NULL && (h == 1) == goes_right;
		int			cur = DdbPageGetOpaque(half)->prefixlen;
		int			p = ddb_leaf_choose_prefix(half, here ? newkey : NULL,
											   here ? newkeylen - DDB_SUFFIX_LEN : 0,
											   here ? newsize : 0, cur);

		if (p >= 0 && p != cur)
			ddb_leaf_relay(half, p);
	}
}

/*
 * Split 'buf' (locked exclusively, child of 'parentbuf' at downlink offset
 * 'downlink', or the root when parentbuf is InvalidBuffer and metabuf is
 * valid).  'low' is the node's low bound (NULL: minus infinity), which the
 * pessimistic descent knows from the parent it holds.  'newkey'/'newkeylen'
 * is the key being inserted into the tree and 'newsize' the size of the item
 * about to go into this node (for the split point choice); it is not
 * inserted.  'predkey'/'predkeylen', when not NULL, is the separator that
 * will come up from the level below into this node: an internal node uses it
 * instead of newkey to place the new downlink and to size its prefixes.
 *
 * Returns the buffer of the half where newkey belongs, still locked, and
 * in *sep_out that half's low bound when it is the right one (else NULL);
 * the other half is released.  Returns InvalidBuffer (nothing changed, all
 * buffers still held by the caller) when the parent has no room for the
 * separator, and sets *parent_full and *sep_out to that separator: the
 * caller restarts reserving exactly that much at the parent's level.
 *
 * Internal pages store their separators without the prefix they share
 * (ddb_page.h), so long keys that share long prefixes -- a 2048-byte
 * partition key, sort keys with a common stem -- still leave room for many
 * downlinks.
 */
static Buffer
ddb_split(Relation rel, DdbKeyType pktype, Buffer metabuf, Buffer parentbuf,
		  OffsetNumber downlink, Buffer buf, const char *low, int lowlen,
		  const char *newkey, int newkeylen, const char *predkey, int predkeylen,
		  Size newsize, const DdbSplitRun *run, DdbSplitPruned *pruned, bool *parent_full,
		  char **sep_out, int *sep_outlen)
{
	Page		page = BufferGetPage(buf);
	DdbPageOpaque op = DdbPageGetOpaque(page);
	bool		leaf = op->level == 0;
	OffsetNumber first = DdbPageFirstData(page);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	int			nitems = maxoff - first + 1;
	SplitItem  *items;
	char	  **key = NULL;		/* internal: full separators (key[0] unused) */
	int		   *keylen = NULL;
	DdbKeyItem	oldhk = NULL;
	Size		oldhksize = 0;
	int			newpos;
	int			best = -1;
	char	   *sep = NULL;
	int			seplen = 0;
	bool		infl = false;	/* a half keeps its prefix in its first item */
	bool		infr = false;
	const char *lbytes = NULL;	/* where a half's prefix bytes are */
	const char *rbytes = NULL;
	int			pl = 0,
				pr = 0,
				pp = 0,
				newpp = 0;
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
	Page		lnew = NULL,	/* a leaf's halves, made aside */
				rnew = NULL;
	bool		alone;			/* split the existing items alone */
	bool		items_prefixes; /* the halves take their items' prefix */
	int			splitplen = 0;	/* the prefix a leaf's halves are made under */
	char		splitprefix[DDB_MAX_KEY_LEN];
	int			lastplen = -1;	/* the last leaf keeps run keys: its prefix */
	bool		whole_retry = false;

	*parent_full = false;
	*sep_out = NULL;
	*sep_outlen = 0;

	/*
	 * The items, in place (see SplitItem).  An item's MAXALIGN'd size stays
	 * within the page: items are placed at MAXALIGN'd offsets below the
	 * special space.
	 */
	items = palloc(sizeof(SplitItem) * nitems);
	for (int i = 0; i < nitems; i++)
	{
		ItemId		iid = PageGetItemId(page, first + i);

		items[i].size = MAXALIGN(ItemIdGetLength(iid));
		items[i].data = (char *) PageGetItem(page, iid);
	}
	if (!DdbPageIsRightmost(page))
	{
		DdbKeyItem	hk = ddb_key_item(page, DDB_HIKEY);

		oldhk = ddb_make_key_item(InvalidBlockNumber, hk->key, hk->keylen, &oldhksize);
	}

	/*
	 * Keys that do not share a leaf's prefix do not get here
	 * (ddb_leaf_take_key), unless a split gave this leaf a longer one since
	 * the caller looked: then the run is left to later splits, and a key
	 * that could not shrink the prefix splits the items alone, so that the
	 * separator lies between two of them and starts with the prefix.
	 */
	if (leaf && run != NULL && run->n > 1)
	{
		for (int k = 0; k < run->n; k++)
		{
			if (!ddb_leaf_shares_prefix(page, run->itemkey[k],
										run->itemkeylen[k] - DDB_SUFFIX_LEN))
			{
				newsize = run->size[0] + run->reserve + sizeof(ItemIdData);
				run = NULL;
				break;
			}
		}
	}
	alone = leaf && newkey != NULL &&
		!ddb_leaf_shares_prefix(page, newkey, newkeylen - DDB_SUFFIX_LEN);

	/*
	 * Storage version 3: both halves are made under the prefix every item
	 * and every key about to go in share, which both halves' separators
	 * and items then start with (the right half's high key may not: it
	 * keeps a copy), so the split point is chosen with the items as they
	 * will be stored; leaf_split_prefixes then lengthens each half's.  Not
	 * beyond what the high key holds, unless the leaf's own prefix already
	 * is: a copy of a long prefix after a long high key could leave no
	 * room for the right half's items (the copy is for the prefixes chosen
	 * afterwards, where it fits).  The right half of the rightmost leaf
	 * stays without one: see below.
	 */
	items_prefixes = leaf && ddb_items_prefixes(rel) && maxoff >= first &&
		(!DdbPageIsRightmost(page) || run == NULL || run->n <= 1);
	if (leaf)
	{
		splitplen = items_prefixes ?
			ddb_leaf_items_prefix(page, alone ? NULL : newkey,
								  alone ? 0 : newkeylen - DDB_SUFFIX_LEN) :
			op->prefixlen;
		/* (what follows only shortens it: these bytes stay its) */
		leaf_prefix_bytes(page, splitplen, splitprefix);
	}
	if (items_prefixes)
	{
		for (int k = 0; run != NULL && k < run->n; k++)
			splitplen = ddb_common_prefix(splitprefix, splitplen, run->itemkey[k],
										  run->itemkeylen[k] - DDB_SUFFIX_LEN);
		if (oldhk)
			splitplen = Max(op->prefixlen,
							ddb_common_prefix(splitprefix, splitplen, oldhk->key, oldhk->keylen));
		Assert(splitplen >= op->prefixlen);
		for (int i = 0; i < nitems && splitplen != op->prefixlen; i++)
			items[i].size = ddb_leaf_item_resized((DdbLeafItem) items[i].data, items[i].size,
												  op->prefixlen - splitplen);
	}
	/* the right half's high key with the prefix's copy, if it needs one */
	if (leaf && splitplen > 0 && oldhk &&
		!ddb_starts_with(oldhk->key, oldhk->keylen, splitprefix, splitplen))
		oldhksize = MAXALIGN(DdbKeyItemSize(oldhk->keylen) + splitplen);
choose:
	if (leaf && run != NULL && run->n > 1 && DdbPageIsRightmost(page) && !whole_retry &&
		ddb_items_prefixes(rel) && maxoff >= first &&
		ddb_compare_stored(run->itemkey[0], run->itemkeylen[0],
						   (DdbLeafItem) items[nitems - 1].data) > 0 &&
		last_leaf_run_split(page, pktype, run, &sep, &seplen, &splitplen, &lastplen) > 0)
		best = nitems;			/* the run's first keys join the items */
	else if (leaf && (run == NULL || run->n <= 1) && DdbPageIsRightmost(page) && !whole_retry &&
			 items_prefixes && newkey != NULL && !alone &&
			 ddb_compare_stored(newkey, newkeylen, (DdbLeafItem) items[nitems - 1].data) > 0 &&
			 last_leaf_append_split(page, pktype, newkey, newkeylen, newsize, &sep, &seplen,
									&splitplen, &lastplen))
		best = nitems;			/* the key joins them, the partition's next too */
	else if (leaf && run != NULL && run->n > 1)
	{
		best = ddb_split_point_for_run(page, pktype, items, nitems, run, oldhk,
									   oldhk ? oldhksize + sizeof(ItemIdData) : 0,
									   &sep, &seplen);

		/*
		 * Not even the run's first two items fit: split for the first one
		 * alone, as its single insert would.  'newsize' is the whole run's
		 * (the room the caller asked for), which no split may leave beside
		 * the high key; with it the fallback below looked for a split of
		 * the existing items alone, and a leaf of one item has none.
		 */
		if (best < 0)
			newsize = run->size[0] + run->reserve + sizeof(ItemIdData);
	}
	if (best >= 0)
		;						/* the run's split (leaf) */
	else if (leaf)
	{
		int			nv = nitems + 1;
		char	  **vkey = palloc(sizeof(char *) * nv);
		int		   *vkeylen = palloc(sizeof(int) * nv);
		Size	   *vsize = palloc(sizeof(Size) * nv);
		Size		oldhkspace = oldhk ? oldhksize + sizeof(ItemIdData) : 0;
		int			a,
					b;
		Size		keybytes = 0;
		char	   *kp;

		/* Where would the new item go? (index of the first item > newkey) */
		newpos = ddb_leaf_search(page, newkey, newkeylen, false) - first;
		/* the item keys, in one allocation */
		for (int i = 0; i < nitems; i++)
			keybytes += op->prefixlen + ((DdbLeafItem) items[i].data)->keylen + DDB_SUFFIX_LEN;
		kp = palloc(keybytes);
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

				vkey[v] = kp;
				ddb_leaf_item_key(page, (DdbLeafItem) items[i].data, vkey[v], &vkeylen[v]);
				kp += vkeylen[v];
				vsize[v] = items[i].size + sizeof(ItemIdData);
			}
		}
		b = alone ? -1 : ddb_leaf_split_after_new(pktype, nv, vkey, vkeylen, vsize, newpos,
												  oldhk, oldhkspace);
		if (b < 0 && !alone)
			b = ddb_leaf_split_point(nv, vkey, vkeylen, vsize, -1, oldhkspace);
		a = b - 1;
		if (b < 0)
		{
			/*
			 * No split leaves room for the new item on its side: a large
			 * item between two large neighbours under a long high key.
			 * Split the existing items alone.  Such a split always exists
			 * (one item fits beside any high key, DDB_MAX_ITEM_SIZE, and
			 * the rest fit as they did before), and the insert splits again
			 * if its half is still full, until the item fits.
			 */
			b = ddb_leaf_split_point(nv, vkey, vkeylen, vsize, newpos, oldhkspace);
			if (b < 0)
				elog(ERROR, "could not find a split point for ddb page %u of \"%s\"",
					 BufferGetBlockNumber(buf), RelationGetRelationName(rel));
			a = b - 1 == newpos ? b - 2 : b - 1;
		}
		seplen = ddb_truncated_separator(vkey[a], vkeylen[a], vkey[b], vkeylen[b]);
		sep = palloc(seplen);
		memcpy(sep, vkey[b], seplen);
		/* existing items going left: virtual items before b, the new one not counted */
		best = b <= newpos ? b : b - 1;
	}
	else
	{
		int			m;

		if (nitems < 2)
			elog(ERROR, "ddb page %u of \"%s\" has too few items to split",
				 BufferGetBlockNumber(buf), RelationGetRelationName(rel));
		key = palloc0(sizeof(char *) * nitems);
		keylen = palloc0(sizeof(int) * nitems);
		for (int i = 1; i < nitems; i++)
			key[i] = ddb_internal_sep(page, first + i, &keylen[i]);
		newpos = ddb_internal_search(page, predkey, predkeylen, false) - first + 1;
		m = ddb_internal_split_point(nitems, key, keylen, low, lowlen,
									 oldhk ? oldhk->key : NULL, oldhk ? oldhk->keylen : 0,
									 newpos, newsize, predkey, predkeylen);
		if (m < 0)
		{
			/* as for leaves: split the existing downlinks alone, then retry */
			m = ddb_internal_split_point(nitems, key, keylen, low, lowlen,
										 oldhk ? oldhk->key : NULL, oldhk ? oldhk->keylen : 0,
										 -1, 0, NULL, 0);
			newpos = -1;
			if (m < 0)
				elog(ERROR, "could not find a split point for ddb page %u of \"%s\"",
					 BufferGetBlockNumber(buf), RelationGetRelationName(rel));
		}
		best = m;
		sep = key[m];
		seplen = keylen[m];
		pl = ddb_half_prefix(key, keylen, 1, m, key[m], keylen[m],
							 newpos >= 0 && newpos <= m ? predkey : NULL, predkeylen,
							 &infl, &lbytes);
		pr = ddb_half_prefix(key, keylen, m + 1, nitems,
							 oldhk ? oldhk->key : NULL, oldhk ? oldhk->keylen : 0,
							 newpos > m ? predkey : NULL, predkeylen,
							 &infr, &rbytes);
	}

	/*
	 * The right half of the rightmost leaf is the new rightmost leaf, which
	 * has no high key to keep a prefix in: its items were sized above
	 * under the prefix the left half gets.  When they do not fit under
	 * none, choose again with every item sized as it is.
	 */
	if (leaf && DdbPageIsRightmost(page) && splitplen > op->prefixlen)
	{
		Size		rneed = 0;

		for (int i = best; i < nitems; i++)
			rneed += MAXALIGN(ItemIdGetLength(PageGetItemId(page, first + i))) +
				sizeof(ItemIdData);
		if (newkey != NULL && ddb_compare_bytes(newkey, newkeylen, sep, seplen) >= 0)
			rneed += newsize;
#ifdef DDB_CHECKS
		if (check_fault_rightmost_whole)
		{
			elog(LOG, "ddb check: rightmost split of block %u chosen again with whole keys",
				 BufferGetBlockNumber(buf));
			rneed = DDB_PAGE_CAPACITY + 1;
		}
#endif
		if (rneed > DDB_PAGE_CAPACITY)
		{
			for (int i = 0; i < nitems; i++)
				items[i].size = MAXALIGN(ItemIdGetLength(PageGetItemId(page, first + i)));
			splitplen = op->prefixlen;
			best = -1;
			lastplen = -1;
			whole_retry = true;
			goto choose;
		}
	}

	/* Does the parent have room for the new downlink? */
	if (BufferIsValid(parentbuf))
	{
		Page		parent = BufferGetPage(parentbuf);
		const char *pprefix;

		/*
		 * The parent's prefix may have to shrink to what the separator
		 * shares with it (ddb_reprefix); the rewrite must fit too.
		 */
		pp = ddb_page_prefix(parent, &pprefix);
		newpp = pp > 0 ? ddb_common_prefix(pprefix, pp, sep, seplen) : 0;
		if (PageGetFreeSpace(parent) <
			MAXALIGN(DdbKeyItemSize(seplen - newpp)) + ddb_reprefix_growth(parent, newpp))
		{
			*parent_full = true;
			*sep_out = sep;		/* for the retry's reservation */
			*sep_outlen = seplen;
			return InvalidBuffer;
		}
	}

	/*
	 * A leaf whose key's versions go on to its right sibling: prune the
	 * sibling, and when that empties it, split into it instead of a new
	 * page (see "Long keys" in the header).  Not for a batch's run, whose
	 * split point counts on the leaf's own high key.
	 */
	if (leaf && BufferIsValid(parentbuf) && pruned != NULL && (run == NULL || run->n <= 1))
	{
		rbuf = ddb_prune_right_sibling(rel, parentbuf, downlink, buf, pruned);
		if (BufferIsValid(rbuf))
		{
			if (ddb_split_into_right(rel, parentbuf, downlink, buf, rbuf, best, sep, seplen,
									 newpp, newkey, newkeylen, newsize, splitplen))
			{
				DdbCheck(ddb_page_is_ordered(page, low, lowlen));
				goto split_done;
			}
			UnlockReleaseBuffer(rbuf);
		}
	}

	/* Allocate the new pages before starting the WAL record. */
	rbuf = ddb_new_buffer(rel);
	rblkno = BufferGetBlockNumber(rbuf);
	if (!BufferIsValid(parentbuf))
		rootbuf = ddb_new_buffer(rel);

	/*
	 * A leaf's halves are made aside, by the functions redo uses: the
	 * right one first (ddb_split_leaf_right), then the left over a copy of
	 * the page (ddb_split_leaf_left), and on a table whose leaves take the
	 * prefix of their items, each half its own (leaf_split_prefixes).  The
	 * WAL record installs them.
	 */
	if (leaf)
	{
		/* both halves change: neither may keep a bit (ddb_vismap.c) */
		ddb_vm_clear(rel, buf);
		ddb_vm_clear(rel, rbuf);
		lnew = palloc(BLCKSZ);
		rnew = palloc0(BLCKSZ);
		ddb_split_leaf_right(rnew, page, best, DdbPageIsRightmost(page) ? 0 : splitplen,
							 splitprefix);
		memcpy(lnew, page, BLCKSZ);
		ddb_split_leaf_left(lnew, best, sep, seplen, rblkno, splitplen);
		if (lastplen > splitplen)
			ddb_leaf_relay(lnew, lastplen); /* (sized by last_leaf_run_split) */
		else if (lastplen < 0 && ddb_items_prefixes(rel))
			leaf_split_prefixes(lnew, rnew, newkey, newkeylen, newsize, sep, seplen);
	}

	/*
	 * A leaf below an existing parent, with ddb's own WAL: the three pages
	 * are changed and logged in one critical section (ddb_wal_leaf_split).
	 * What could fail is done first: the halves, the new downlink, and a
	 * parent whose prefix must shrink for it (ddb_reprefix, rare),
	 * rewritten aside.
	 */
	if (leaf && BufferIsValid(parentbuf) && ddb_wal_custom())
	{
		Size		dlsize;
		DdbKeyItem	dl = ddb_make_key_item(rblkno, sep + newpp, seplen - newpp, &dlsize);
		Page		ptmp = NULL;

		if (newpp < pp)
		{
			ptmp = palloc(BLCKSZ);
			memcpy(ptmp, BufferGetPage(parentbuf), BLCKSZ);
			ddb_split_parent(ptmp, OffsetNumberNext(downlink), rblkno, sep, seplen, newpp);
		}
		ddb_wal_leaf_split(rel, parentbuf, OffsetNumberNext(downlink), newpp, ptmp, dl, dlsize,
						   buf, lnew, best, splitplen, sep, seplen, rbuf, rnew);
		DdbCheck(ddb_page_is_ordered(page, low, lowlen));
		DdbCheck(ddb_page_is_ordered(BufferGetPage(rbuf), sep, seplen));
		DdbCheck(ddb_page_is_ordered(BufferGetPage(parentbuf), NULL, 0));
		if (ptmp)
			pfree(ptmp);
		pfree(dl);
		goto split_done;
	}

	state = GenericXLogStart(rel);
	if (BufferIsValid(metabuf))
		mpage = GenericXLogRegisterBuffer(state, metabuf, 0);
	if (BufferIsValid(parentbuf))
		ppage = GenericXLogRegisterBuffer(state, parentbuf, 0);
	lpage = GenericXLogRegisterBuffer(state, buf, leaf ? DDB_GENERIC_ITEMS_MOVE : 0);
	rpage = GenericXLogRegisterBuffer(state, rbuf, GENERIC_XLOG_FULL_IMAGE);
	if (BufferIsValid(rootbuf))
		ppage = GenericXLogRegisterBuffer(state, rootbuf, GENERIC_XLOG_FULL_IMAGE);

	if (leaf)
	{
		ddb_page_replace(lpage, lnew);
		memcpy(rpage, rnew, BLCKSZ);
	}
	else
	{
		/* Right half: downlinks [best, n) and the old high key. */
		ddb_init_page(rpage, op->flags, op->level, op->right);
		DdbPageGetOpaque(rpage)->prefixlen = pr;
		if (oldhk)
			ddb_add_item(rpage, oldhk, oldhksize, DDB_HIKEY);
		for (int i = best; i < nitems; i++)
		{
			if (i == best)		/* minus infinity, maybe holding the prefix */
				ddb_add_downlink(rpage, ((DdbKeyItem) items[i].data)->child,
								 rbytes, infr ? pr : 0, 0, InvalidOffsetNumber);
			else
				ddb_add_downlink(rpage, ((DdbKeyItem) items[i].data)->child,
								 key[i], keylen[i], pr, InvalidOffsetNumber);
		}

		/* Left half: downlinks [0, best) and the separator as high key. */
		tmp = palloc(BLCKSZ);
		ddb_init_page(tmp, op->flags, op->level, rblkno);
		DdbPageGetOpaque(tmp)->prefixlen = pl;
		{
			Size		sz;
			DdbKeyItem	hk = ddb_make_key_item(InvalidBlockNumber, sep, seplen, &sz);

			ddb_add_item(tmp, hk, sz, DDB_HIKEY);
		}
		for (int i = 0; i < best; i++)
		{
			if (i == 0)			/* minus infinity, maybe holding the prefix */
				ddb_add_downlink(tmp, ((DdbKeyItem) items[i].data)->child,
								 lbytes, infl ? pl : 0, 0, InvalidOffsetNumber);
			else
				ddb_add_downlink(tmp, ((DdbKeyItem) items[i].data)->child,
								 key[i], keylen[i], pl, InvalidOffsetNumber);
		}
		ddb_page_replace(lpage, tmp);
		pfree(tmp);
	}

	if (BufferIsValid(rootbuf))
	{
		/*
		 * New root above the old one: (-inf -> left), (sep -> right), with
		 * the prefix sep shares with the key being inserted, as a split's
		 * half would get it.
		 */
		DdbMetaPageData *md = DdbPageGetMeta(mpage);
		bool		inf;
		const char *bytes;
		int			rp = ddb_half_prefix(&sep, &seplen, 0, 1, NULL, 0,
										 newkey, newkeylen, &inf, &bytes);

		ddb_init_page(ppage, DDB_PAGE_INTERNAL, op->level + 1, InvalidBlockNumber);
		DdbPageGetOpaque(ppage)->prefixlen = inf ? rp : 0;
		ddb_add_downlink(ppage, BufferGetBlockNumber(buf), bytes, inf ? rp : 0, 0,
						 InvalidOffsetNumber);
		ddb_add_downlink(ppage, rblkno, sep, seplen, inf ? rp : 0, InvalidOffsetNumber);
		md->root = BufferGetBlockNumber(rootbuf);
		md->height = op->level + 2;
	}
	else
	{
		if (newpp < pp)
			ddb_reprefix(ppage, newpp);
		ddb_add_downlink(ppage, rblkno, sep, seplen, newpp, OffsetNumberNext(downlink));
	}

	/* both halves ordered; left below the separator, right at or above it */
	DdbCheck(ddb_page_is_ordered(lpage, low, lowlen));
	DdbCheck(ddb_page_is_ordered(rpage, sep, seplen));
	DdbCheck(ddb_page_is_ordered(ppage, NULL, 0));
	GenericXLogFinish(state);

split_done:
	if (BufferIsValid(rootbuf))
		UnlockReleaseBuffer(rootbuf);

	/* Continue in the half where newkey belongs: right iff newkey >= sep. */
	if (newkey != NULL && ddb_compare_bytes(newkey, newkeylen, sep, seplen) >= 0)
	{
		UnlockReleaseBuffer(buf);
		keep = rbuf;
		*sep_out = sep;
		*sep_outlen = seplen;
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
 * Page 'blkno', known to have been a tree page of level 'level' whose key
 * space was at or below 'key' (a hint: ddb_first_leaf_from_hint,
 * ddb_make_room_below), locked exclusively and followed right along its
 * level while key is at or beyond its high key, as a descent does;
 * InvalidBuffer, with nothing locked, when blkno is not a tree page of
 * that level.  Pages of one level are locked one at a time, left to right
 * (rule 1 of the header).
 */
static Buffer
ddb_read_hinted(Relation rel, BlockNumber blkno, int level, const char *key, int keylen)
{
	Buffer		buf;
	Page		page;

	DdbCheck(TransactionIdIsValid(MyProc->xmin));	/* rule 5 */
	if (level == 0)
		DDB_CHECK_PAUSE_LEAF();
	buf = ReadBuffer(rel, blkno);
	page = BufferGetPage(buf);

	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (PageIsNew(page) || DdbPageGetOpaque(page)->page_id != DDB_PAGE_ID ||
		(DdbPageGetOpaque(page)->flags & (level == 0 ? DDB_PAGE_LEAF : DDB_PAGE_INTERNAL)) == 0 ||
		DdbPageGetOpaque(page)->level != level)
	{
		UnlockReleaseBuffer(buf);
		return InvalidBuffer;
	}
	while (ddb_beyond_page(page, key, keylen, false))
	{
		BlockNumber right = DdbPageGetOpaque(page)->right;

		UnlockReleaseBuffer(buf);
		buf = ReadBuffer(rel, right);
		LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
		if (level == 0)
			ddb_check_leaf(rel, buf);
		else
			ddb_check_page(rel, buf, BufferGetPage(buf));
		page = BufferGetPage(buf);
	}
	return buf;
}

/*
 * The pessimistic pass in the common case: split the leaf of 'itemkey'
 * under the internal page 'parentblk' that an optimistic descent reached
 * it, or a leaf left of it, from (ddb_descend), leaving out the metapage
 * and the levels above.  An internal page's low bound never changes (pages
 * split only to the right, and internal pages are never merged or
 * unlinked), so itemkey is still at or above
 * parentblk's (a leaf it named is at or below the key, and the leaf's low
 * bound is at or above the page's), and the page that holds its downlink
 * now is parentblk or right of it.  When that page can take one more downlink of the size
 * ddb_make_room reserves, the leaf's split touches only it, the leaf and
 * the new page, locked in ddb_make_room's order (the parent, then the
 * child).  Returns false, having changed nothing, when the page cannot
 * (or the separator turns out too long for it): the caller then takes
 * the whole pass, which splits that page first.
 */
static bool ddb_leaf_take_key(Relation rel, Buffer buf, const char *key, int keylen,
							  Size need);

static bool
ddb_make_room_below(Relation rel, DdbKeyType pktype, BlockNumber parentblk,
					const char *itemkey, int itemkeylen, Size itemsize,
					const DdbSplitRun *run)
{
	int			reservelen = Min(Max(itemkeylen, 64) * 2, DDB_MAX_SEP_LEN);
	Buffer		pbuf;
	Buffer		buf;
	Page		page;
	OffsetNumber downlink;
	char	   *low = NULL;		/* the leaf's low bound, if in this page */
	int			lowlen = 0;
	DdbSplitPruned pruned = {0};

#ifdef DDB_CHECKS
	{
		/*
		 * Checked builds start every other such split at the leftmost
		 * leaf's parent instead, whose low bound is minus infinity: the
		 * move right must then cross that level to the leaf's parent, or
		 * ddb_verify fails (as ddb_first_leaf_from_hint is tested).
		 */
		static uint32 ncalls = 0;

		if (++ncalls % 2 == 0)
		{
			UnlockReleaseBuffer(ddb_descend(rel, NULL, 0, false, BUFFER_LOCK_SHARE, NULL, NULL));
			parentblk = ddb_get_relcache(rel)->leaf_parent;
		}
	}
#endif
	pbuf = ddb_read_hinted(rel, parentblk, 1, itemkey, itemkeylen);
	if (!BufferIsValid(pbuf))
		return false;
	page = BufferGetPage(pbuf);
	if (ddb_node_full(page, DDB_INTERNAL_RESERVE(reservelen -
												 Min(DdbPageGetOpaque(page)->prefixlen, reservelen))))
	{
		UnlockReleaseBuffer(pbuf);
		return false;
	}
	downlink = ddb_internal_search(page, itemkey, itemkeylen, false);
	if (downlink > DdbPageFirstData(page))
		low = ddb_internal_sep(page, downlink, &lowlen);
	buf = ReadBuffer(rel, ddb_key_item(page, downlink)->child);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	ddb_check_page(rel, buf, BufferGetPage(buf));
	if (!ddb_leaf_take_key(rel, buf, itemkey, itemkeylen - DDB_SUFFIX_LEN, 0) ||
		ddb_node_full(BufferGetPage(buf), itemsize))
	{
		bool		parent_full;
		char	   *sep;
		int			seplen;
		Buffer		half = ddb_split(rel, pktype, InvalidBuffer, pbuf, downlink, buf, low, lowlen,
									 itemkey, itemkeylen, itemkey, itemkeylen,
									 itemsize + sizeof(ItemIdData), run, &pruned,
									 &parent_full, &sep, &seplen);

		if (!BufferIsValid(half))
		{
			UnlockReleaseBuffer(buf);
			UnlockReleaseBuffer(pbuf);
			return false;
		}
		buf = half;
	}
	UnlockReleaseBuffer(buf);
	UnlockReleaseBuffer(pbuf);
	ddb_split_pruned_clear(rel, &pruned);
	if (pruned.tids)
		pfree(pruned.tids);
	return true;
}

/*
 * Pessimistic pass: descend with exclusive locks coupled top-down and split
 * every full node on the path of 'itemkey', so that the leaf has room for an
 * item of 'itemsize' bytes (as of the moment we leave it).  An internal node
 * is full when it could not take one more downlink: a separator of up to
 * 'reservelen' bytes (a guess that grows to the maximum when a parent turns
 * out too full), stored without the node's prefix.  A parent that turned
 * out too full names the separator it could not take; the retry reserves
 * for exactly that one at that level, prefix rewrite included.  The low bound of each
 * node on the way is known from the parent we hold; splits need it to
 * choose the halves' prefixes.  'leaf' is the leaf an optimistic descent
 * for a key at or below itemkey reached: when the relcache entry still
 * knows the page that named it, most passes start there
 * (ddb_make_room_below).
 */
static void
ddb_make_room(Relation rel, const char *itemkey, int itemkeylen, Size itemsize,
			  const DdbSplitRun *run, BlockNumber leaf)
{
	int			reservelen = Min(Max(itemkeylen, 64) * 2, DDB_MAX_SEP_LEN);
	char	   *hint = NULL;	/* the separator a parent could not take */
	int			hintlen = 0;
	int			hintlevel = -1; /* that parent's level */
	/* before any buffer lock: the relcache entry may need catalog reads */
	DdbKeyType	pktype = ddb_get_keyinfo(rel)->keytype[0];
	DdbSplitPruned pruned = {0};

	DdbRelCache *cache = ddb_get_relcache(rel);

	/*
	 * The relcache's leaf is the one 'leaf' names only if no VACUUM can
	 * have reused its block since it was read (rule 5): under the same xmin.
	 */
	if (cache->leaf == leaf && cache->leaf_parent != DDB_METAPAGE_BLKNO &&
		TransactionIdIsValid(MyProc->xmin) && cache->leaf_xmin == MyProc->xmin &&
		ddb_make_room_below(rel, pktype, cache->leaf_parent, itemkey, itemkeylen,
							itemsize, run))
		return;

	for (;;)
	{
		Buffer		metabuf;
		Buffer		buf;
		Buffer		parent = InvalidBuffer;
		OffsetNumber downlink = InvalidOffsetNumber;
		char	   *low = NULL;		/* the node's low bound; NULL = -infinity */
		int			lowlen = 0;
		bool		restart = false;
		DdbMetaPageData *md;

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
			Size		need;
			Size		growth = 0;
			Size		newsize;
			const char *predkey = itemkey;
			int			predkeylen = itemkeylen;
			bool		must_split = false;

			if (leaf)
			{
				need = newsize = itemsize;
				/* a key that does not share the prefix: shrink it, or split */
				must_split = !ddb_leaf_take_key(rel, buf, itemkey,
												itemkeylen - DDB_SUFFIX_LEN, 0);
			}
			else if (hint != NULL && DdbPageGetOpaque(page)->level == hintlevel)
			{
				/*
				 * This level could not take 'hint' last time: reserve for
				 * exactly that separator, with the rewrite if the node's
				 * prefix must shrink for it (ddb_reprefix), and if it
				 * must split, give the half that gets it a prefix it shares
				 * and room for it whole.
				 */
				const char *prefix;
				int			plen = ddb_page_prefix(page, &prefix);
				int			newpp = plen > 0 ? ddb_common_prefix(prefix, plen, hint, hintlen) : 0;

				need = DDB_INTERNAL_RESERVE(hintlen - newpp);
				growth = ddb_reprefix_growth(page, newpp);
				newsize = DDB_INTERNAL_RESERVE(hintlen);
				predkey = hint;
				predkeylen = hintlen;
			}
			else
				need = newsize =
					DDB_INTERNAL_RESERVE(reservelen - Min(DdbPageGetOpaque(page)->prefixlen, reservelen));

			if (must_split || ddb_node_full(page, need + growth))
			{
				bool		parent_full;
				Buffer		half;
				char	   *sep;
				int			seplen;
				int			level = DdbPageGetOpaque(page)->level;

				half = ddb_split(rel, pktype,
								 BufferIsValid(parent) ? InvalidBuffer : metabuf,
								 parent, downlink, buf, low, lowlen,
								 itemkey, itemkeylen, predkey, predkeylen,
								 leaf ? newsize + sizeof(ItemIdData) : newsize,
								 leaf ? run : NULL, &pruned, &parent_full, &sep, &seplen);
				if (!BufferIsValid(half))
				{
					/* parent cannot take the separator: retry, reserving for it */
					hint = sep;
					hintlen = seplen;
					hintlevel = level + 1;
					restart = true;
					break;
				}
				buf = half;
				if (sep != NULL)
				{
					low = sep;	/* we went on in the right half */
					lowlen = seplen;
				}
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
			if (downlink > DdbPageFirstData(page))
				low = ddb_internal_sep(page, downlink, &lowlen);
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
		ddb_split_pruned_clear(rel, &pruned);
		if (!restart)
			break;
		reservelen = DDB_MAX_SEP_LEN;
	}
	if (pruned.tids)
		pfree(pruned.tids);
}

/* ------------------------------------------------------------------------
 * Unlinking empty leaves (see the file header)
 * ------------------------------------------------------------------------
 */

/*
 * An unlink's change to the parent: downlink 'off' (the unlinked leaf's)
 * names 'right', whose own downlink, the next item, goes.  On the primary
 * and in redo (ddb_wal.c), so both make the same bytes.
 */
void
ddb_unlink_parent(Page page, OffsetNumber off, BlockNumber right)
{
	ddb_key_item(page, off)->child = right;
	PageIndexTupleDelete(page, off + 1);
}

/*
 * The unlink's change to its three pages, made by both WAL forms on the
 * primary (ddb_unlink_leaf, ddb_wal_unlink); redo makes it block by block
 * with the same functions: the parent's downlink 'off' names 'right' and
 * loses the next item, the left sibling's right-link names 'right', the
 * leaf becomes a deleted leaf.
 */
void
ddb_unlink_pages(Page q, OffsetNumber off, Page p, Page l, BlockNumber right,
				 FullTransactionId safexid)
{
	ddb_unlink_parent(q, off, right);
	DdbPageGetOpaque(p)->right = right;
	ddb_page_set_deleted(l, DDB_PAGE_LEAF, right, safexid);
}

/*
 * Turn 'page' into a deleted page whose right-link is 'right': one item,
 * an empty high key carrying safexid (DdbDeletedItemData).  'kind' is what
 * the page was: DDB_PAGE_LEAF (an unlinked leaf) or DDB_PAGE_MAP_LEAF (a
 * row-id map leaf VACUUM freed, ddb_rowid.c, whose 'right' is invalid).
 * On the primary and in redo.
 */
void
ddb_page_set_deleted(Page page, uint16 kind, BlockNumber right, FullTransactionId safexid)
{
	DdbDeletedItemData d;

	OffsetNumber off PG_USED_FOR_ASSERTS_ONLY;

	memset(&d, 0, sizeof(d));
	d.child = InvalidBlockNumber;
	d.keylen = 0;
	d.safexid = safexid;
	ddb_init_page(page, kind | DDB_PAGE_DELETED, 0, right);
	/* inside the critical section: an empty page always takes it */
	off = PageAddItem(page, (Item) &d, sizeof(d), DDB_HIKEY, false, false);
	Assert(off == DDB_HIKEY);
}

/*
 * Does the low bound of parent q's child 'off' (an unlink's leaf, neither
 * q's first child nor its last) start with the prefix of its right sibling
 * 'rblk', the next child?  Q's separators answer most often: R's prefix,
 * the first bytes of its high key, which start its low bound too, is no
 * longer than what R's bounds in q share, so a low bound that shares that
 * much with R's high key starts with it.  Else R itself is looked at,
 * share-locked conditionally (after q and the leaf: top-down, left to
 * right; a writer busy on R answers no, and the next VACUUM tries again)
 * and released: its prefix cannot change while q, which a split of it
 * needs, is held.
 */
static bool
ddb_unlink_keeps_prefix(Relation rel, Page q, OffsetNumber off, BlockNumber rblk)
{
	int			lowlen,
				rlowlen,
				rhighlen;
	char	   *low = ddb_internal_sep(q, off, &lowlen);
	char	   *rlow = ddb_internal_sep(q, off + 1, &rlowlen);
	char	   *rhigh;
	Buffer		rbuf;
	const char *prefix;
	int			plen;
	bool		ok;

	if (off + 2 <= PageGetMaxOffsetNumber(q))
		rhigh = ddb_internal_sep(q, off + 2, &rhighlen);
	else if (DdbPageIsRightmost(q))
	{
		/* R is the rightmost leaf, which has no prefix */
		pfree(low);
		pfree(rlow);
		return true;
	}
	else
	{
		/* R is q's last child: q's high key is R's */
		DdbKeyItem	hk = ddb_key_item(q, DDB_HIKEY);

		rhighlen = hk->keylen;
		rhigh = palloc(Max(rhighlen, 1));
		memcpy(rhigh, hk->key, rhighlen);
	}
	ok = ddb_common_prefix(low, lowlen, rhigh, rhighlen) >=
		ddb_common_prefix(rlow, rlowlen, rhigh, rhighlen);
	pfree(rlow);
	pfree(rhigh);
	if (ok)
	{
		pfree(low);
		return true;
	}

	rbuf = ReadBuffer(rel, rblk);
	if (!BufferIsLocal(rbuf) &&
		!LWLockConditionalAcquire(BufferDescriptorGetContentLock(GetBufferDescriptor(rbuf - 1)),
								  LW_SHARED))
	{
		ReleaseBuffer(rbuf);
		pfree(low);
		return false;
	}
	ddb_check_leaf(rel, rbuf);
	plen = ddb_leaf_prefix(BufferGetPage(rbuf), &prefix);
	ok = plen == 0 || (lowlen >= plen && memcmp(low, prefix, plen) == 0);
	UnlockReleaseBuffer(rbuf);
	pfree(low);
	return ok;
}

/*
 * The level-1 page whose key space holds the last key below 'key' (strict,
 * as ddb_descend), locked exclusively; InvalidBuffer for a tree of height
 * one.  Pages above are share-locked one at a time, as in every descent.
 */
static Buffer
ddb_descend_parent(Relation rel, const char *key, int keylen)
{
	DdbMetaPageData meta;
	BlockNumber blkno;
	int			level;

	ddb_meta_read(rel, &meta);
	if (meta.height < 2)
		return InvalidBuffer;
	blkno = meta.root;
	level = meta.height - 1;
	for (;;)
	{
		int			mode = level == 1 ? BUFFER_LOCK_EXCLUSIVE : BUFFER_LOCK_SHARE;
		Buffer		buf = ddb_read_internal(rel, blkno);
		Page		page;

		LockBuffer(buf, mode);
		page = BufferGetPage(buf);
		ddb_check_page(rel, buf, page);
		while (ddb_beyond_page(page, key, keylen, true))
		{
			blkno = DdbPageGetOpaque(page)->right;
			UnlockReleaseBuffer(buf);
			buf = ddb_read_internal(rel, blkno);
			LockBuffer(buf, mode);
			page = BufferGetPage(buf);
			ddb_check_page(rel, buf, page);
		}
		if (DdbPageGetOpaque(page)->level != level)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg_internal("ddb page %u of \"%s\" is at level %u, expected %d",
									 BufferGetBlockNumber(buf), RelationGetRelationName(rel),
									 DdbPageGetOpaque(page)->level, level)));
		if (level == 1)
			return buf;
		blkno = ddb_key_item(page, ddb_internal_search(page, key, keylen, true))->child;
		UnlockReleaseBuffer(buf);
		level--;
	}
}

/*
 * VACUUM's walk over the leaves by their parents (ddb_vacuum.c), so that
 * leaves it need not read are not read: each call of ddb_leaf_walk_next
 * returns the next leaf in key order that 'skip' does not skip, named by a
 * downlink of the level-1 page whose key space holds the walk's next key
 * (w->next: the key at which the last leaf's key space ended), locked
 * exclusively; the leaves skipped are never read.  The leaf is locked
 * before its parent's share lock is released (rules 1 and 5: the downlink
 * is read and followed under the parent's lock, which any split, move
 * into a right sibling or unlink of its children needs exclusively), so
 * the leaf's key space is the one the downlink gave it until the leaf is
 * released: a split that moves items right after that moves only items
 * VACUUM has seen, and the walk goes on at the key where that key space
 * ended, whatever the level-1 page holds by then.  A tree of height one
 * has no level 1: ddb_leaf_walk_start returns false, and VACUUM walks its
 * leaves by their right-links.
 */
bool
ddb_leaf_walk_start(Relation rel, DdbLeafWalk *w, DdbBlockSet *seen)
{
	DdbMetaPageData meta;
	BlockNumber blkno;

	memset(w, 0, sizeof(*w));
	w->seen = seen;
	ddb_meta_read(rel, &meta);
	if (meta.height < 2)
		return false;
	blkno = meta.root;
	for (uint32 level = meta.height - 1; level > 1; level--)
	{
		Buffer		buf = ddb_read_internal(rel, blkno);
		Page		page;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		ddb_check_page(rel, buf, page);
		blkno = ddb_key_item(page, DdbPageFirstData(page))->child;
		UnlockReleaseBuffer(buf);
	}
	w->parent = blkno;
	return true;
}

/*
 * The next leaf of the walk (see above) that 'skip' does not skip: its
 * block, or InvalidBlockNumber at the end, and in *buf the leaf locked
 * exclusively.  The leaves skipped on the way are passed to skip(rel,
 * block, arg) alone, one level-1 page's run of them under one share lock
 * of that page.  Holds no lock on return but the leaf's.
 */
BlockNumber
ddb_leaf_walk_next(Relation rel, DdbLeafWalk *w, BufferAccessStrategy bstrategy,
				   bool (*skip) (Relation, BlockNumber, void *), void *arg, Buffer *buf)
{
	*buf = InvalidBuffer;
	while (!w->done)
	{
		Buffer		pbuf;
		Page		page;
		OffsetNumber off;
		OffsetNumber maxoff;
		BlockNumber child = InvalidBlockNumber;
		char	   *after = NULL;
		int			afterlen = 0;

		pbuf = ReadBufferExtended(rel, MAIN_FORKNUM, w->parent, RBM_NORMAL, bstrategy);
		LockBuffer(pbuf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(pbuf);
		ddb_check_page(rel, pbuf, page);
		while (w->next != NULL && ddb_beyond_page(page, w->next, w->nextlen, false))
		{
			w->parent = DdbPageGetOpaque(page)->right;
			UnlockReleaseBuffer(pbuf);
			pbuf = ReadBufferExtended(rel, MAIN_FORKNUM, w->parent, RBM_NORMAL, bstrategy);
			LockBuffer(pbuf, BUFFER_LOCK_SHARE);
			page = BufferGetPage(pbuf);
			ddb_check_page(rel, pbuf, page);
		}
		ddb_block_set_add(w->seen, w->parent);
		if (DdbPageGetOpaque(page)->level != 1)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg_internal("ddb page %u of \"%s\" is at level %u, expected 1",
									 w->parent, RelationGetRelationName(rel),
									 DdbPageGetOpaque(page)->level)));
		maxoff = PageGetMaxOffsetNumber(page);
		for (off = ddb_internal_search(page, w->next, w->nextlen, false); off <= maxoff; off++)
		{
			child = ddb_key_item(page, off)->child;
			if (skip == NULL || !skip(rel, child, arg))
				break;
		}

		/* where the key space of the last child looked at ends */
		if (off < maxoff)
			after = ddb_internal_sep(page, OffsetNumberNext(off), &afterlen);
		else if (!DdbPageIsRightmost(page))
		{
			DdbKeyItem	hk = ddb_key_item(page, DDB_HIKEY);

			afterlen = hk->keylen;
			after = palloc(Max(afterlen, 1));
			memcpy(after, hk->key, afterlen);
			w->parent = DdbPageGetOpaque(page)->right;
		}
		else
			w->done = true;
		if (w->next)
			pfree(w->next);
		w->next = after;
		w->nextlen = afterlen;

		if (off > maxoff)
		{
			/* every child skipped: the next level-1 page, if any */
			UnlockReleaseBuffer(pbuf);
			continue;
		}
		*buf = ReadBufferExtended(rel, MAIN_FORKNUM, child, RBM_NORMAL, bstrategy);
		LockBuffer(*buf, BUFFER_LOCK_EXCLUSIVE);
		UnlockReleaseBuffer(pbuf);
		ddb_check_leaf(rel, *buf);
		return child;
	}
	return InvalidBlockNumber;
}

/*
 * Unlink leaf 'lblk', whose high key VACUUM read as 'hk' when it left the
 * leaf without items, if it still has none and its left and right
 * siblings share its parent: the parent's downlink to it then names its
 * right sibling, whose own downlink goes; its left sibling's right-link
 * names the right sibling; and the leaf becomes a deleted leaf that keeps
 * its right-link.  One WAL record of three pages (ddb's own with ddb
 * preloaded, ddb_wal_unlink; else Generic WAL).  With 'remember' (a read
 * cleaning up) this backend keeps the leaf for its own splits (see
 * "Reuse"); VACUUM's leaves wait for its next run.  Returns whether
 * it unlinked the leaf.  Only VACUUM and a read cleaning up behind it call
 * this, under the table's ShareUpdateExclusiveLock (one at a time per
 * table: rule 6).
 */
bool
ddb_unlink_leaf(Relation rel, BlockNumber lblk, const char *hk, int hklen, bool remember)
{
	Buffer		qbuf = ddb_descend_parent(rel, hk, hklen);
	Buffer		pbuf;
	Buffer		lbuf;
	Page		q;
	Page		p;
	Page		l;
	OffsetNumber off;
	BlockNumber pblk;
	BlockNumber rblk;
	FullTransactionId safexid;
	GenericXLogState *state;

	if (!BufferIsValid(qbuf))
		return false;
	q = BufferGetPage(qbuf);
	off = ddb_internal_search(q, hk, hklen, true);
	if (ddb_key_item(q, off)->child != lblk || off == DdbPageFirstData(q) ||
		off >= PageGetMaxOffsetNumber(q))
	{
		/* the first or last child of its parent (or gone: not ours) */
		UnlockReleaseBuffer(qbuf);
		return false;
	}
	pblk = ddb_key_item(q, off - 1)->child;
	rblk = ddb_key_item(q, off + 1)->child;

	/*
	 * The parent held exclusively: neither child can split (rule 1 order).
	 * The children are locked only conditionally: waiting for a reader or
	 * a writer busy on one would hold up every descent through the parent.
	 * The next VACUUM tries again.
	 */
	pbuf = ReadBuffer(rel, pblk);
	if (!ConditionalLockBuffer(pbuf))
	{
		ReleaseBuffer(pbuf);
		UnlockReleaseBuffer(qbuf);
		return false;
	}
	ddb_check_leaf(rel, pbuf);
	lbuf = ReadBuffer(rel, lblk);
	if (!ConditionalLockBuffer(lbuf))
	{
		ReleaseBuffer(lbuf);
		UnlockReleaseBuffer(pbuf);
		UnlockReleaseBuffer(qbuf);
		return false;
	}
	ddb_check_leaf(rel, lbuf);
	p = BufferGetPage(pbuf);
	l = BufferGetPage(lbuf);
	if (DdbPageIsDeleted(p) || DdbPageIsDeleted(l) ||
		DdbPageGetOpaque(p)->right != lblk || DdbPageGetOpaque(l)->right != rblk)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg_internal("ddb table \"%s\": leaves %u, %u, %u under parent %u are not linked in order",
								 RelationGetRelationName(rel), pblk, lblk, rblk,
								 BufferGetBlockNumber(qbuf))));

	/*
	 * A writer may have added to it since VACUUM left it; and R's key space
	 * will reach down to L's low bound, which in a table of storage
	 * version 2 must then share R's prefix ("Leaf prefix" in ddb_page.h;
	 * version 3's is about R's items, which stay as they are).
	 */
	if (PageGetMaxOffsetNumber(l) >= DdbPageFirstData(l) ||
		(!ddb_items_prefixes(rel) && !ddb_unlink_keeps_prefix(rel, q, off, rblk)))
	{
		UnlockReleaseBuffer(lbuf);
		UnlockReleaseBuffer(pbuf);
		UnlockReleaseBuffer(qbuf);
		return false;
	}

	safexid = ReadNextFullTransactionId();
	/*
	 * The leaf becomes a deleted page, which keeps no mark; its left
	 * sibling only takes another right-link, which leaves its versions as
	 * visible as they were, and keeps its mark (ddb_vismap.c).
	 */
	ddb_vm_clear(rel, lbuf);
	if (!ddb_wal_unlink(rel, qbuf, off, pbuf, lbuf, rblk, safexid))
	{
		state = GenericXLogStart(rel);
		q = GenericXLogRegisterBuffer(state, qbuf, 0);
		p = GenericXLogRegisterBuffer(state, pbuf, 0);
		l = GenericXLogRegisterBuffer(state, lbuf, 0);
		ddb_unlink_pages(q, off, p, l, rblk, safexid);
		GenericXLogFinish(state);
	}
	DdbCheck(ddb_page_is_ordered(BufferGetPage(qbuf), NULL, 0));

	UnlockReleaseBuffer(lbuf);
	UnlockReleaseBuffer(pbuf);
	UnlockReleaseBuffer(qbuf);
	if (remember)
		own_unlinked_remember(rel, lblk, safexid);
	return true;
}

/* ------------------------------------------------------------------------
 * Insert
 * ------------------------------------------------------------------------
 */

/*
 * A leaf item of itemsize bytes for a version of 'key' with row id 'tid'
 * and stored tuple 'tuple', and its item key in *itemkey (both palloc'd).
 */
static DdbLeafItem
ddb_build_leaf_item(const char *key, int keylen, ItemPointer tid, HeapTuple tuple,
					Size itemsize, char **itemkey, int *itemkeylen)
{
	DdbLeafItem item = palloc0(itemsize);

	item->tid = *tid;
	item->keylen = keylen;
	memcpy(item->key, key, keylen);
	memcpy(DdbLeafItemGetTuple(item), tuple->t_data, tuple->t_len);
	*itemkey = palloc(keylen + DDB_SUFFIX_LEN);
	*itemkeylen = ddb_item_key(key, keylen, tid, *itemkey);
	return item;
}

/*
 * Leaf item 'item' (itemsize bytes, MAXALIGN'd, with its whole key, as
 * ddb_build_leaf_item makes it) in the form leaf 'page' stores: without
 * the leaf's prefix ("Leaf prefix" in ddb_page.h), which the caller knows
 * its key starts with (ddb_leaf_take_key, ddb_tree_insert_multi's run).
 * Returns 'item' itself on a leaf without one, else a palloc'd copy;
 * *size is its size.
 */
static DdbLeafItem
leaf_item_under_prefix(Page page, DdbLeafItem item, Size itemsize, Size *size)
{
	int			plen = DdbPageGetOpaque(page)->prefixlen;
	DdbLeafItem li;

	DdbCheck(ddb_leaf_shares_prefix(page, item->key, item->keylen));
	*size = itemsize;
	if (plen == 0)
		return item;
	*size = ddb_leaf_item_resized(item, itemsize, -plen);
	li = palloc(*size);
	leaf_item_reprefix(li, item, itemsize, NULL, -plen);
	return li;
}

/*
 * leaf_item_under_prefix for leaf 'buf', checking that the key starts with
 * its prefix: an update's new version, whose older one is on the leaf.  A
 * key that does not means a corrupt tree.
 */
DdbLeafItem
ddb_leaf_item_for(Relation rel, Buffer buf, DdbLeafItem item, Size itemsize, Size *size)
{
	Page		page = BufferGetPage(buf);

	if (!ddb_leaf_shares_prefix(page, item->key, item->keylen))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg_internal("ddb table \"%s\": a key that does not share the prefix of leaf %u",
								 RelationGetRelationName(rel), BufferGetBlockNumber(buf))));
	return leaf_item_under_prefix(page, item, itemsize, size);
}

/*
 * Make leaf 'buf' (locked exclusively) take 'key' (keylen bytes, without
 * a version suffix), which does not share its prefix when an insert has
 * split a leaf of storage version 3 since the key's last descent, or the
 * key goes below a partition's stem or into another partition's last
 * leaf: shrink the prefix to what the items and the key share, re-laying
 * the leaf in a record of its own (ddb_wal_leaf_relay), when that leaves
 * 'need' bytes free.  Returns whether the key shares the leaf's prefix
 * now; false, nothing changed, when the re-laid leaf would not keep 'need'
 * bytes free (the caller splits it).
 */
static bool
ddb_leaf_take_key(Relation rel, Buffer buf, const char *key, int keylen, Size need)
{
	Page		page = BufferGetPage(buf);
	int			p;

	if (ddb_leaf_shares_prefix(page, key, keylen))
		return true;
	p = ddb_leaf_choose_prefix(page, key, keylen, need, 0);
	if (p < 0)
		return false;
	ddb_wal_leaf_relay(rel, buf, p);
	DdbCheck(ddb_page_is_ordered(page, NULL, 0));
	return true;
}

/*
 * Before leaf 'buf' (locked exclusively) splits for lack of room for the
 * keys from 'key' to 'last' (keylen and lastlen bytes, without version
 * suffixes; last may be NULL), the first taking 'need' bytes: lengthen
 * its prefix to what its items and those keys share, when that frees at
 * least DDB_LENGTHEN_MIN bytes and leaves 'need' free (storage version 3,
 * not the last leaf, which keeps none), re-laying the leaf in a record of
 * its own (ddb_wal_leaf_relay).  A leaf's prefix is chosen when a split
 * makes it, from the items it gets; the half that keys appended to a
 * partition go to is empty then and keeps the split leaf's prefix, so
 * they went in nearly whole under a long common stem, and the leaf, split
 * as soon as it was full, kept a fraction of a page of them: a key-order
 * COPY of 1 kB keys left leaves a quarter full.  The threshold keeps a
 * re-lay that would put the split off by an item or two from costing a
 * record.  Returns whether it re-laid the leaf (the caller tries again).
 */
#define DDB_LENGTHEN_MIN	(DDB_PAGE_CAPACITY / 8)

static bool
ddb_leaf_lengthen_prefix(Relation rel, Buffer buf, const char *key, int keylen,
						 const char *last, int lastlen, Size need)
{
	Page		page = BufferGetPage(buf);
	int			cur = DdbPageGetOpaque(page)->prefixlen;
	int			p;
	char		pbytes[DDB_MAX_KEY_LEN];

	if (!ddb_items_prefixes(rel) || DdbPageIsRightmost(page) ||
		PageGetMaxOffsetNumber(page) < DdbPageFirstData(page) ||
		!ddb_leaf_shares_prefix(page, key, keylen))
		return false;
	p = ddb_leaf_items_prefix(page, key, keylen);
	if (last != NULL)
	{
		leaf_prefix_bytes(page, p, pbytes);
		p = ddb_common_prefix(pbytes, p, last, lastlen);
	}
	if (p <= cur || !leaf_prefix_fits(page, p, need) ||
		ddb_leaf_relaid_size(page, cur) < ddb_leaf_relaid_size(page, p) + DDB_LENGTHEN_MIN)
		return false;
	ddb_wal_leaf_relay(rel, buf, p);
	DdbCheck(ddb_page_is_ordered(page, NULL, 0));
	return true;
}

/*
 * An update that stays on its leaf, in one WAL record.  'buf' is the leaf
 * holding the key's current version at *oldoff, locked exclusively by the
 * caller, who owns that version (see ddb_update_version).  When the new
 * version's item fits on this page and belongs to it, one record both lets
 * 'mark' change the old version (its xmax, before anything moves) and adds
 * the new one: one descent and one record instead of two of each.  With
 * ddb's own WAL the same record sets the new version's map entry in the
 * map leaf 'mapbuf' (pinned by ddb_map_pin_leaf before the caller locked
 * any tree page, locked here after the leaf: rule 1 of the header); with
 * Generic WAL the entry is deferred, as ddb_tree_insert then defers it.
 * The new version sorts right before the old one (newest first); it
 * belongs here when some item on the page sorts before it, or when the
 * caller knows that this is the key's first leaf (key_first_leaf: a
 * descent by the key found it, so the leaf's low bound is at or below
 * the key), as a leaf keeps no low bound.  A leaf without room for it is pruned first, under
 * the lock already held, as ddb_tree_insert would prune it after a
 * separate mark (with ddb's own WAL in the update's record, when that
 * makes room): *oldoff follows the old version, and the removed versions
 * whose map entries are left to clear are returned in *removed (palloc'd)
 * and *nremoved, for the caller to clear once the leaf is released.  Returns false, with nothing changed
 * but that prune (Generic WAL), when the item does not belong here or
 * still does not fit; the caller then marks and inserts separately.
 * 'tuple' must need no TOAST work.
 */
bool
ddb_tree_insert_beside(Relation rel, Buffer buf, OffsetNumber *oldoff,
					   const char *key, int keylen, ItemPointer tid, HeapTuple tuple,
					   DdbMarkFn mark, void *arg, Buffer mapbuf, bool key_first_leaf,
					   ItemPointerData **removed, int *nremoved)
{
	Page		page = BufferGetPage(buf);
	Size		itemsize = MAXALIGN(DdbLeafTupleOffset(keylen) + tuple->t_len);
	DdbLeafItem fullitem;
	DdbLeafItem item;
	char	   *itemkey;
	int			itemkeylen;
	OffsetNumber off;
	bool		fits;
	DdbUpdatePrune prune = {0};

	/* the lowest offset the new item may take here (see above) */
	OffsetNumber lowest = DdbPageFirstData(page) + (key_first_leaf ? 0 : 1);

	*removed = NULL;
	*nremoved = 0;
	if (keylen > DDB_MAX_KEY_LEN || itemsize > DDB_MAX_ITEM_SIZE)
		return false;

	fullitem = ddb_build_leaf_item(key, keylen, tid, tuple, itemsize, &itemkey, &itemkeylen);
	item = ddb_leaf_item_for(rel, buf, fullitem, itemsize, &itemsize);
	off = ddb_leaf_search(page, itemkey, itemkeylen, false);
	fits = off >= lowest && off <= *oldoff;
	if (fits && PageGetFreeSpace(page) < itemsize)
	{
		/* (the old version is ours and live: no prune removes it) */
		*removed = palloc(sizeof(ItemPointerData) * MaxOffsetNumber);
		if (BufferIsValid(mapbuf))
		{
			/*
			 * ddb's own WAL: the prune is logged in the update's record.
			 * Find what it removes, and where the old version and the new
			 * item are after it.
			 */
			Size		freed = 0;
			int			before_old = 0;
			int			before_off = 0;

			prune.offsets = palloc(sizeof(OffsetNumber) * MaxOffsetNumber);
			prune.n = ddb_prune_plan(rel, buf, prune.offsets, *removed,
									 &prune.latestRemovedXid);
			for (int i = 0; i < prune.n; i++)
			{
				freed += MAXALIGN(ItemIdGetLength(PageGetItemId(page, prune.offsets[i]))) +
					sizeof(ItemIdData);
				before_old += prune.offsets[i] < *oldoff;
				before_off += prune.offsets[i] < off;
			}
			/* (the prune compacts the page: at least this much is free then) */
			fits = ((PageHeader) page)->pd_upper - ((PageHeader) page)->pd_lower + freed >=
				itemsize + sizeof(ItemIdData) &&
				off - before_off >= lowest;
			if (fits)
			{
				/*
				 * The removed versions' entries on the new version's map
				 * leaf are cleared in the record; the caller clears the
				 * others.
				 */
				prune.clear = palloc(sizeof(uint16) * Max(prune.n, 1));
				for (int i = 0; i < prune.n; i++)
				{
					if (ddb_map_same_leaf(&(*removed)[i], tid))
						prune.clear[prune.nclear++] = (uint16) ddb_map_slot(&(*removed)[i]);
					else
						(*removed)[(*nremoved)++] = (*removed)[i];
				}
				*oldoff -= before_old;
				off -= before_off;
			}
			else
				prune.n = 0;	/* the caller's insert prunes, if it must */
		}
		else
		{
			DdbLeafItem oli = (DdbLeafItem) PageGetItem(page, PageGetItemId(page, *oldoff));
			ItemPointerData oldtid = oli->tid;

			if (ddb_prune_before_split(rel, buf, *removed, nremoved))
			{
				*oldoff = ddb_leaf_find_rowid(page, &oldtid, InvalidOffsetNumber);
				if (*oldoff == InvalidOffsetNumber)
					elog(ERROR, "ddb update: the old version is gone after a prune");
				off = ddb_leaf_search(page, itemkey, itemkeylen, false);
			}
			fits = off >= lowest && off <= *oldoff &&
				PageGetFreeSpace(page) >= itemsize;
		}
	}
	if (!fits)
	{
		if (prune.offsets)
			pfree(prune.offsets);
		if (item != fullitem)
			pfree(item);
		pfree(fullitem);
		pfree(itemkey);
		return false;
	}

	if (BufferIsValid(mapbuf))
		ddb_map_lock_leaf(rel, mapbuf);
	ddb_wal_leaf_update(rel, buf, *oldoff, mark, arg, off, item, itemsize,
						mapbuf, ddb_key_hash(key), &prune);
	DdbCheck(ddb_page_is_ordered(page, NULL, 0));
	if (prune.offsets)
		pfree(prune.offsets);
	if (prune.clear)
		pfree(prune.clear);

	/* The version first, then its map entry: see ddb_rowid.c. */
	if (BufferIsValid(mapbuf))
		LockBuffer(mapbuf, BUFFER_LOCK_UNLOCK);
	else
		ddb_map_set_deferred(rel, tid, BufferGetBlockNumber(buf), ddb_key_hash(key));
	if (item != fullitem)
		pfree(item);
	pfree(fullitem);
	pfree(itemkey);
	return true;
}

/*
 * The limits every stored item obeys: an encoded key of at most
 * DDB_MAX_KEY_LEN bytes, a leaf item ('itemsize', MAXALIGNed) that fits a
 * page beside the largest high key.  Shared with the bulk load
 * (ddb_bulk.c), which checks them before it spools an item.
 */
void
ddb_check_item_limits(Relation rel, int keylen, Size itemsize)
{
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
						itemsize, ddb_user_relation_name(rel)),
				 errdetail("A stored item may be at most %zu bytes.", (Size) DDB_MAX_ITEM_SIZE)));
}

/*
 * The name to show the user for 'rel' in an error.  A table rewrite (ALTER
 * TABLE ... SET ACCESS METHOD ddb, a column type change) writes into a
 * transient relation that make_new_heap names "pg_temp_<oid of the table>",
 * in the table's schema; its rows' errors name the table being rewritten.
 */
const char *
ddb_user_relation_name(Relation rel)
{
	const char *name = RelationGetRelationName(rel);
	unsigned int oid;
	int			len;

	if (strncmp(name, "pg_temp_", 8) == 0 &&
		sscanf(name + 8, "%u%n", &oid, &len) == 1 && name[8 + len] == '\0' &&
		OidIsValid(oid) && get_rel_namespace(oid) == RelationGetNamespace(rel))
	{
		char	   *orig = get_rel_name(oid);

		if (orig != NULL)
			return orig;
	}
	/* again: the lookups may have rebuilt the entry, freeing the old name */
	return RelationGetRelationName(rel);
}

/* A second live item with one key: unique_violation (also ddb_bulk.c's). */
void
ddb_duplicate_key_error(Relation rel)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNIQUE_VIOLATION),
			 errmsg("duplicate key value violates the key of ddb table \"%s\"",
					ddb_user_relation_name(rel)),
			 errdetail("An item with the same key already exists."),
			 errhint("Use ddb_put_item() to replace an item.")));
}

/*
 * Check that no other version of 'key' is live.  'first' is the key's first
 * leaf, locked exclusively by the caller, who keeps it locked until its own
 * version is added (see "Tree concurrency" in the header).  The key's
 * versions may run on over leaves to the right; they are read hand over
 * hand, so at most two leaves besides 'first' are locked at any time.
 * 'succ' is the key's successor (ddb_key_successor), or NULL if it has none.
 *
 * Returns InvalidTransactionId when the key is free, or the xid to wait for
 * when a concurrent transaction inserted, deleted or locked a version.  A
 * live version raises unique_violation, or sets *duplicate when duplicate
 * is not NULL.  Returns with only 'first' locked.
 *
 * With 'nvisible' (checked builds), it stops at no version: it counts the
 * versions a dirty snapshot sees, which right after a checked insert must
 * be exactly the one just added (ddb_check_key_has_one_version).
 */
static TransactionId
ddb_check_unique_walk(Relation rel, Buffer first, const char *key, int keylen,
					  const char *succ, int succlen, bool *duplicate, int *nvisible)
{
	SnapshotData dirty;
	Buffer		buf = first;
	TransactionId result = InvalidTransactionId;

	InitDirtySnapshot(dirty);
	for (;;)
	{
		Page		page = BufferGetPage(buf);
		OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
		OffsetNumber off = ddb_leaf_search(page, key, keylen, false);
		DdbKeyItem	hk;
		Buffer		next;
		const char *rest = key; /* the key without the leaf's prefix */
		int			restlen = keylen;
		bool		inpage = ddb_strip_leaf_prefix(page, &rest, &restlen) == 0;

		for (; off <= maxoff; off++)
		{
			DdbLeafItem li = ddb_leaf_item(page, off);
			HeapTupleData htup;

			if (!inpage || ddb_compare_bytes(rest, restlen, li->key, li->keylen) != 0)
				goto done;		/* past the key's versions */

			(void) ddb_leaf_htup(rel, page, off, &htup);
			if (HeapTupleSatisfiesVisibility(&htup, &dirty, buf))
			{
				if (nvisible)
				{
					(*nvisible)++;
					continue;
				}
				if (TransactionIdIsValid(dirty.xmin))
					result = dirty.xmin;
				else if (TransactionIdIsValid(dirty.xmax))
					result = dirty.xmax;
				else if (duplicate)
					*duplicate = true;
				else
					ddb_duplicate_key_error(rel);
				goto done;
			}
		}

		/* the key's versions may go on to the right */
		if (DdbPageIsRightmost(page))
			break;
		hk = ddb_key_item(page, DDB_HIKEY);
		if (succ != NULL && ddb_compare_bytes(hk->key, hk->keylen, succ, succlen) >= 0)
			break;
		next = ReadBuffer(rel, DdbPageGetOpaque(page)->right);
		LockBuffer(next, BUFFER_LOCK_SHARE);
		ddb_check_leaf(rel, next);
		if (buf != first)
			UnlockReleaseBuffer(buf);
		buf = next;
	}
done:
	if (buf != first)
		UnlockReleaseBuffer(buf);
	return result;
}

static inline TransactionId
ddb_check_unique(Relation rel, Buffer first, const char *key, int keylen,
				 const char *succ, int succlen, bool *duplicate)
{
#ifdef DDB_CHECKS
	if (check_fault_skip_unique)
		return InvalidTransactionId;
#endif
	return ddb_check_unique_walk(rel, first, key, keylen, succ, succlen, duplicate, NULL);
}

#ifdef DDB_CHECKS
/*
 * Checked builds, right after a version of 'key' was added under a
 * uniqueness check, with the key's first leaf still locked (so no other
 * writer of the key can have come in) and no leaf to its right: the key
 * has exactly one version a dirty snapshot sees, the new one.  A second
 * would be a live version the check missed, which ddb_verify would only
 * find much later.
 */
static bool
ddb_check_key_has_one_version(Relation rel, Buffer first, const char *key, int keylen,
							  const char *succ, int succlen)
{
	int			nvisible = 0;

	(void) ddb_check_unique_walk(rel, first, key, keylen, succ, succlen, NULL, &nvisible);
	return nvisible == 1;
}
#endif

/*
 * From 'first' (locked exclusively), move right to the leaf whose key space
 * holds itemkey and return it locked exclusively; 'first' stays locked.
 * At most one leaf besides 'first' is locked at a time.
 */
static Buffer
ddb_move_to_target(Relation rel, Buffer first, const char *itemkey, int itemkeylen)
{
	Buffer		buf = first;

	while (ddb_beyond_page(BufferGetPage(buf), itemkey, itemkeylen, false))
	{
		Buffer		next = ReadBuffer(rel, DdbPageGetOpaque(BufferGetPage(buf))->right);

		LockBuffer(next, BUFFER_LOCK_EXCLUSIVE);
		ddb_check_leaf(rel, next);
		if (buf != first)
			UnlockReleaseBuffer(buf);
		buf = next;
	}
	return buf;
}

/* Does pg_class.reloptions of rel name fillfactor? */
static bool
ddb_fillfactor_is_set(Relation rel)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(RelationGetRelid(rel)));
	bool		isnull;
	Datum		d;
	bool		set = false;
	ListCell   *lc;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", RelationGetRelid(rel));
	d = SysCacheGetAttr(RELOID, tup, Anum_pg_class_reloptions, &isnull);
	if (!isnull)
		foreach(lc, untransformRelOptions(d))
			if (strcmp(((DefElem *) lfirst(lc))->defname, "fillfactor") == 0)
				set = true;
	ReleaseSysCache(tup);
	return set;
}

/*
 * The table's fillfactor (WITH (fillfactor = N), 10..100), or
 * DDB_DEFAULT_FILLFACTOR when the table does not set it.  PostgreSQL 15
 * parses a table's storage parameters with heap's reloptions whatever its
 * access method, so rd_options is heap's StdRdOptions, range checks
 * included (CREATE and ALTER TABLE reject a value outside 10..100 with
 * PostgreSQL's own error).  StdRdOptions cannot tell a fillfactor set to
 * 100 from one not set when other parameters are (both read 100, heap's
 * default), so in that one case pg_class.reloptions says which.  Read once
 * per relcache entry (an ALTER TABLE ... SET invalidates it) and never with
 * a buffer locked: it may read the catalog.
 */
int
ddb_fillfactor(Relation rel)
{
	int			ff = ddb_get_relcache(rel)->fillfactor;

	if (ff == 0)
	{
		ff = DDB_DEFAULT_FILLFACTOR;
		if (rel->rd_options != NULL)
		{
			ff = ((StdRdOptions *) rel->rd_options)->fillfactor;
			if (ff == HEAP_DEFAULT_FILLFACTOR && !ddb_fillfactor_is_set(rel))
				ff = DDB_DEFAULT_FILLFACTOR;
		}

		/*
		 * Fetch the cache again: the catalog lookup may have processed an
		 * invalidation of this relation, which frees rd_amcache.
		 */
		ddb_get_relcache(rel)->fillfactor = ff;
	}
	return ff;
}

/*
 * The room, in bytes, that a leaf keeps free for new versions of its keys:
 * what the fillfactor leaves of a page's capacity.  Inserts of new keys
 * fill a leaf up to its fillfactor and bulk builds (VACUUM FULL, CLUSTER,
 * a bulk COPY: ddb_build.c) leave their leaves that full; a new version,
 * which goes beside the one it replaces on the same leaf, may use the
 * room.  Without it, a leaf that new keys filled would split on the first
 * update of any of its items, and a table loaded by appends (whose leaves
 * the appending split, ddb_leaf_split_after_new, leaves full) would end up
 * half full after one round of updates; with it, an update finds room and
 * a later one finds the versions it made dead to prune
 * (ddb_prune_before_split).  The part heap's fillfactor plays for HOT
 * updates and nbtree's for its leaves.  The default and its measurements:
 * doc/performance-history.md.
 */
Size
ddb_leaf_reserve_bytes(Relation rel)
{
	return (Size) DDB_PAGE_CAPACITY * (100 - ddb_fillfactor(rel)) / 100;
}

/*
 * The reserve an insert of an item of 'itemsize' bytes must leave: none for
 * a new version (DDB_UNIQUE_NONE), and never so much that the item could
 * not fit alone on a page.
 */
static Size
ddb_item_reserve(Size table_reserve, Size itemsize, DdbUniqueCheck check_unique)
{
	if (check_unique == DDB_UNIQUE_NONE || itemsize >= DDB_MAX_ITEM_SIZE)
		return 0;
	return Min(table_reserve, DDB_MAX_ITEM_SIZE - itemsize);
}

static Size
ddb_leaf_reserve(Relation rel, Size itemsize, DdbUniqueCheck check_unique)
{
	return ddb_item_reserve(ddb_leaf_reserve_bytes(rel), itemsize, check_unique);
}

/*
 * The key's first leaf, reached from 'hint', a leaf that was the key's
 * first leaf when this backend last descended to it (ddb_find_current_ext),
 * locked exclusively; InvalidBuffer, with nothing locked, when the hint is
 * not a leaf of this tree (the caller then descends from the root).
 *
 * A live leaf's low bound never rises: a split keeps the lower half in
 * place and moves the upper half to a new right sibling, an unlink lowers
 * the right sibling's, pages are never merged, and the tree's file is
 * replaced only under an AccessExclusiveLock that the writer's own lock
 * on the table excludes.  The hint was read in this API call, under the
 * xmin it still holds, so its block has not been reused since, even if
 * VACUUM has unlinked it (rule 5).  So a leaf that once held the key's
 * place still starts at or below the key (or was unlinked, and its key
 * space is to its right), and the key's first leaf is that leaf or one
 * right of it: moving right while the key is at or beyond the high key,
 * or the leaf is deleted, finds it, as a descent does at its leaf level
 * (Lehman & Yao).  Only leaves are locked, one at a time, left to right
 * (rule 1 of the header).
 */
static Buffer
ddb_first_leaf_from_hint(Relation rel, BlockNumber hint, const char *key, int keylen)
{
#ifdef DDB_CHECKS
	Buffer		buf;
#endif

	/* (the file never shrinks under our lock: the hint is inside it) */
	if (!BlockNumberIsValid(hint) || hint == DDB_METAPAGE_BLKNO)
		return InvalidBuffer;
#ifdef DDB_CHECKS
	{
		/*
		 * Checked builds start every other hinted insert at the leftmost
		 * leaf instead, whose low bound is minus infinity forever: the
		 * move right below must then cross many leaves and still stop at
		 * the key's first leaf, or the uniqueness check and ddb_verify
		 * fail.  That is the argument above, tested on every such insert
		 * of the regression and isolation suites.
		 */
		static uint32 ncalls = 0;

		if (++ncalls % 2 == 0)
		{
			buf = ddb_descend(rel, NULL, 0, false, BUFFER_LOCK_SHARE, NULL, NULL);
			hint = BufferGetBlockNumber(buf);
			UnlockReleaseBuffer(buf);
		}
	}
#endif
	return ddb_read_hinted(rel, hint, 0, key, keylen);
}

/*
 * Insert a version of 'key' with row id 'tid' whose stored tuple is 'tuple'.
 * With DDB_UNIQUE_ERROR, raise unique_violation if another live version of
 * the key exists, waiting for in-progress transactions first (as nbtree
 * does); with DDB_UNIQUE_RETURN, return false instead (nothing inserted).
 * A new key leaves the table's leaf reserve (ddb_leaf_reserve) free on its
 * leaf; a new version of a key (DDB_UNIQUE_NONE) may use it.
 */
bool
ddb_tree_insert(Relation rel, const char *key, int keylen, ItemPointer tid,
				HeapTuple tuple, DdbUniqueCheck check_unique)
{
	return ddb_tree_insert_at(rel, InvalidBlockNumber, key, keylen, tid, tuple,
							  check_unique);
}

/*
 * ddb_tree_insert of a new key (DDB_UNIQUE_ERROR or DDB_UNIQUE_RETURN) whose
 * first leaf the caller has just read (first_leaf, from
 * ddb_find_current_ext: PutItem looks for the current version first).  The
 * insert starts at that leaf instead of descending from the root again
 * (ddb_first_leaf_from_hint); after a wait, a prune or a split, and for an
 * invalid first_leaf, it descends as ddb_tree_insert does.
 */
bool
ddb_tree_insert_at(Relation rel, BlockNumber first_leaf, const char *key, int keylen,
				   ItemPointer tid, HeapTuple tuple, DdbUniqueCheck check_unique)
{
	Size		itemlen = DdbLeafTupleOffset(keylen) + tuple->t_len;
	Size		itemsize = MAXALIGN(itemlen);
	Size		reserve = ddb_leaf_reserve(rel, itemsize, check_unique);
	DdbLeafItem item;
	char	   *itemkey;
	int			itemkeylen;
	char	   *succ = NULL;
	int			succlen = 0;
	bool		pruned = false;
	bool		lengthened = false;
	bool		shares;
	Buffer		mapbuf = InvalidBuffer;

	ddb_check_item_limits(rel, keylen, itemsize);
	ddb_tree_init_if_needed(rel);

	/*
	 * With ddb's own WAL the version's map entry is set in the insert's own
	 * record (ddb_wal_map_in_record): its map leaf is found now, before any
	 * tree page is locked, and locked after the leaf (rule 1 of the
	 * header).  With Generic WAL it is deferred.
	 */
	if (ddb_wal_map_in_record())
		mapbuf = ddb_map_pin_leaf(rel, tid);

	item = ddb_build_leaf_item(key, keylen, tid, tuple, itemsize, &itemkey, &itemkeylen);

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
		Buffer		first;
		Buffer		leafbuf;
		BlockNumber firstblk;
		TransactionId wait_xid = InvalidTransactionId;
		Page		page;
		DdbLeafItem pitem;		/* the item as the leaf stores it */
		Size		psize;

		CHECK_FOR_INTERRUPTS();

		/*
		 * Without a uniqueness check (a new version of a key whose current
		 * version we hold), only the leaf where the item goes matters.
		 * Otherwise hold the key's first leaf from the check until the item
		 * is in (see "Tree concurrency" in the header).
		 */
		if (check_unique == DDB_UNIQUE_NONE)
			first = ddb_descend(rel, itemkey, itemkeylen, false,
								BUFFER_LOCK_EXCLUSIVE, NULL, NULL);
		else
		{
			bool		duplicate = false;

			first = ddb_first_leaf_from_hint(rel, first_leaf, key, keylen);
			first_leaf = InvalidBlockNumber;	/* once: later rounds descend */
			if (!BufferIsValid(first))
				first = ddb_descend(rel, key, keylen, false,
									BUFFER_LOCK_EXCLUSIVE, NULL, NULL);
			wait_xid = ddb_check_unique(rel, first, key, keylen, succ, succlen,
										check_unique == DDB_UNIQUE_RETURN ? &duplicate : NULL);
			if (duplicate)
			{
				UnlockReleaseBuffer(first);
				if (BufferIsValid(mapbuf))
					ReleaseBuffer(mapbuf);
				pfree(item);
				pfree(itemkey);
				if (succ)
					pfree(succ);
				return false;
			}
			if (TransactionIdIsValid(wait_xid))
			{
				/* Never wait while holding a page lock. */
				UnlockReleaseBuffer(first);
				XactLockTableWait(wait_xid, rel, tid, XLTW_InsertIndex);
				continue;
			}
		}

		/* The leaf whose key space holds itemkey: first, or right of it. */
		firstblk = BufferGetBlockNumber(first);
		leafbuf = ddb_move_to_target(rel, first, itemkey, itemkeylen);
		page = BufferGetPage(leafbuf);
		pitem = NULL;
		if (ddb_leaf_take_key(rel, leafbuf, key, keylen, itemsize + reserve + sizeof(ItemIdData)))
			pitem = leaf_item_under_prefix(page, item, itemsize, &psize);
		if (pitem != NULL && PageGetFreeSpace(page) >= psize + reserve)
		{
			OffsetNumber off = ddb_leaf_search(page, itemkey, itemkeylen, false);
			BlockNumber leaf = BufferGetBlockNumber(leafbuf);

			if (BufferIsValid(mapbuf))
				ddb_map_lock_leaf(rel, mapbuf);
			ddb_wal_leaf_add(rel, leafbuf, off, pitem, psize, mapbuf, ddb_key_hash(key));
			if (pitem != item)
				pfree(pitem);
			DdbCheck(ddb_page_is_ordered(page, NULL, 0));
			/* the map leaf first: the walk below locks tree pages (rule 1) */
			if (BufferIsValid(mapbuf))
				UnlockReleaseBuffer(mapbuf);
			if (leafbuf != first)
				UnlockReleaseBuffer(leafbuf);
			DdbCheck(check_unique == DDB_UNIQUE_NONE ||
					 ddb_check_key_has_one_version(rel, first, key, keylen, succ, succlen));
			UnlockReleaseBuffer(first);

			/* The version first, then its map entry: see ddb_rowid.c. */
			if (!BufferIsValid(mapbuf))
				ddb_map_set_deferred(rel, tid, leaf, ddb_key_hash(key));
			break;
		}
		shares = pitem != NULL;
		if (pitem != NULL && pitem != item)
			pfree(pitem);
		if (leafbuf != first)
			UnlockReleaseBuffer(first);

		/*
		 * No room.  First prune versions no snapshot can see (a hot item
		 * updated many times fills its leaf with them), then retry; then
		 * give the leaf its items' prefix, when that frees a good part of
		 * it (ddb_leaf_lengthen_prefix), and retry; only if neither helps,
		 * split on the way down.
		 */
		if (!pruned)
		{
			ItemPointerData *removed = palloc(sizeof(ItemPointerData) * MaxOffsetNumber);
			int			nremoved;

			pruned = true;
			ddb_prune_before_split(rel, leafbuf, removed, &nremoved);
			if (nremoved > 0)
			{
				UnlockReleaseBuffer(leafbuf);
				ddb_map_clear(rel, removed, nremoved);
				pfree(removed);
				continue;
			}
			pfree(removed);
		}
		if (!lengthened && shares &&
			ddb_leaf_lengthen_prefix(rel, leafbuf, key, keylen, NULL, 0,
									 itemsize + reserve + sizeof(ItemIdData)))
		{
			lengthened = true;
			UnlockReleaseBuffer(leafbuf);
			continue;
		}
		UnlockReleaseBuffer(leafbuf);
		{
			/* splits copy pages of items: keep that out of the caller's context */
			MemoryContext splitcxt = AllocSetContextCreate(CurrentMemoryContext,
														   "ddb split",
														   ALLOCSET_DEFAULT_SIZES);
			MemoryContext old = MemoryContextSwitchTo(splitcxt);

			ddb_make_room(rel, itemkey, itemkeylen, itemsize + reserve, NULL, firstblk);
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

/* ------------------------------------------------------------------------
 * Inserting a batch of new keys
 * ------------------------------------------------------------------------
 */

/* One version of a batch, as ddb_tree_insert_multi places it. */
typedef struct MultiItem
{
	DdbNewVersion *v;
	DdbLeafItem item;
	Size		itemsize;		/* MAXALIGN'd */
	char	   *itemkey;
	int			itemkeylen;
} MultiItem;

static int
multi_item_cmp(const void *a, const void *b)
{
	const MultiItem *x = (const MultiItem *) a;
	const MultiItem *y = (const MultiItem *) b;

	return ddb_compare_bytes(x->itemkey, x->itemkeylen, y->itemkey, y->itemkeylen);
}


/*
 * Scratch memory kept from batch to batch.  A batch's memory (COPY's row
 * path hands the table 1,000 rows at a time: their stored tuples, keys,
 * leaf items and sort) is most of a megabyte.  Allocated in a context
 * created and deleted per batch, or in the executor's per-tuple context,
 * glibc gave it back to the kernel after each batch (the top of its heap
 * shrank past the trim threshold) and the next batch faulted it in again,
 * a page fault per 4 kB: 138,000 faults in a 400,000-row COPY, a quarter
 * of its CPU time (doc/performance-history.md, "Issue 19: a batch's memory
 * kept").  A scratch context is a child of TopMemoryContext whose first
 * block, s->keep bytes, survives a reset; it is reset after each use, so
 * a batch that fits reuses the same memory, and a larger one frees only
 * what it added.  A use nested in another use of the same scratch (the
 * current context is the scratch or under it) gets a context of its own;
 * a use after an error first resets what the error left.  Returns the
 * context to allocate in; hand it back to ddb_scratch_leave.
 */
MemoryContext
ddb_scratch_enter(DdbScratch *s)
{
	for (MemoryContext c = CurrentMemoryContext; c != NULL; c = c->parent)
		if (c == s->cxt)
			return AllocSetContextCreate(CurrentMemoryContext, "ddb nested scratch",
										 ALLOCSET_DEFAULT_SIZES);
	if (s->cxt == NULL)
		/* s->name is a string constant, as AllocSetContextCreate checks */
		s->cxt = AllocSetContextCreateInternal(TopMemoryContext, s->name, s->keep,
											   s->keep, ALLOCSET_DEFAULT_MAXSIZE);
	else
		MemoryContextReset(s->cxt);
	return s->cxt;
}

void
ddb_scratch_leave(DdbScratch *s, MemoryContext cxt)
{
	if (cxt == s->cxt)
		MemoryContextReset(cxt);
	else
		MemoryContextDelete(cxt);
}

/* ddb_tree_insert_multi's: its copies of a batch's items and their sort */
static DdbScratch multi_scratch = {NULL, "ddb multi insert", 512 * 1024};

/*
 * Before a batch's leaf 'buf' (locked exclusively) splits for the pending
 * run mi[j .. j + npend - 1]: lengthen the leaf's prefix to what its items
 * and the run's keys share (ddb_leaf_lengthen_prefix), once per leaf
 * (*lengthened), after the run before it went in, so that a leaf that was
 * empty (the half a split gave to the keys after its items) takes its
 * new items' prefix.  Returns whether it re-laid the leaf.
 */
static bool
multi_lengthen(Relation rel, Buffer buf, MultiItem *mi, int j, int npend, Size table_reserve,
			   DdbUniqueCheck check_unique, BlockNumber *lengthened)
{
	MultiItem  *m = &mi[j];
	MultiItem  *last = &mi[j + npend - 1];

	if (BufferGetBlockNumber(buf) == *lengthened ||
		!ddb_leaf_lengthen_prefix(rel, buf, m->v->key, m->v->keylen,
								  last->v->key, last->v->keylen,
								  m->itemsize + sizeof(ItemIdData) +
								  ddb_item_reserve(table_reserve, m->itemsize, check_unique)))
		return false;
	*lengthened = BufferGetBlockNumber(buf);
	return true;
}

/*
 * Insert the versions of a batch of keys (COPY's rows, BatchWriteItem's
 * puts), each as ddb_tree_insert(..., check_unique) would, with
 * DDB_UNIQUE_ERROR or DDB_UNIQUE_RETURN (v->inserted tells which went in),
 * but one descent, one critical section and one WAL record per leaf
 * instead of one each per item.  The tuples are ready to store (prepared,
 * toasted); each v->tid is its row id.
 *
 * The items are sorted by item key.  From the leaf of the first item not
 * yet placed (descending to its key, exclusive lock), a run collects the
 * items that follow it in key order as long as they belong to that leaf
 * (key and item key below its high key) and fit beside the leaf reserve;
 * each key is checked free by ddb_check_unique on that leaf, which stays
 * locked until the run's items are added, so the rule of "Tree
 * concurrency" holds for every key of the run: the leaf is each key's
 * first leaf, held from its check until its version is in.  The run's
 * items are added in one record (ddb_wal_leaf_add_multi) and their map
 * entries deferred (see ddb_rowid.c: a batch's entries are, in both WAL
 * modes).
 *
 * When the leaf is full, the items from there on that belong to it (up to
 * a page of them) are one pending run: the leaf is pruned once, and if
 * that frees nothing, released and split by one pessimistic descent
 * (ddb_make_room) at a point that leaves room for the whole run
 * (ddb_split_point_for_run); the placement then goes on from the first
 * pending item.  An item the run cannot take at its start for another
 * reason -- its item key lies right of its key's first leaf, its key has
 * an in-progress writer to wait for, or a split just made room for it and
 * a concurrent writer took the room -- goes through ddb_tree_insert, which
 * prunes, splits, moves right or waits (with no page lock held) as it
 * always does; the next run starts after it.  A run that meets such an
 * item later ends before it.  A key that appears twice in the batch (COPY of two rows
 * with one key) is inserted once here and again through ddb_tree_insert,
 * which then finds the first as a live version of the key, exactly as two
 * single inserts would.
 *
 * Locks: one leaf at a time, exclusively, plus the at most two leaves
 * ddb_check_unique reads to its right; so the rules in the header hold as
 * for a single insert.
 *
 * 'stop_at_live' (with DDB_UNIQUE_RETURN; versions in key order, distinct
 * keys): stop at the first key found live, so that the batch's keys are
 * taken strictly in key order when the caller writes that key before the
 * rest (BatchWriteItem, whose lock order is its keys' order).  Returns the
 * index of that version (n when none was live): those before it are
 * inserted, it and those after it are not, and those after it have not been
 * looked at.  Without stop_at_live, returns n.
 */
int
ddb_tree_insert_multi(Relation rel, DdbNewVersion *versions, int n,
					  DdbUniqueCheck check_unique, bool stop_at_live)
{
	MemoryContext cxt;
	MemoryContext old;
	MultiItem  *mi;
	OffsetNumber *offs;
	char	  **data;
	Size	   *sizes;
	Size		table_reserve;
	int		   *run;
	StringInfoData succ;
	int			i;
	int			made_room_at = -1;	/* the item a split last made room for */
	BlockNumber pruned = InvalidBlockNumber;	/* the leaf last pruned */
	BlockNumber lengthened = InvalidBlockNumber;	/* and last re-laid longer */
	int			stopped = n;	/* stop_at_live: the live version's index */

	if (check_unique == DDB_UNIQUE_NONE)
		elog(ERROR, "ddb_tree_insert_multi needs a uniqueness check");
	Assert(!stop_at_live || check_unique == DDB_UNIQUE_RETURN);
	if (n <= 0)
		return n;

	/* the batch's copies and sort: gone at the end, whatever the caller's context */
	cxt = ddb_scratch_enter(&multi_scratch);
	old = MemoryContextSwitchTo(cxt);

	mi = palloc(sizeof(MultiItem) * n);
	for (i = 0; i < n; i++)
	{
		DdbNewVersion *v = &versions[i];
		Size		itemsize = MAXALIGN(DdbLeafTupleOffset(v->keylen) + v->tuple->t_len);

		ddb_check_item_limits(rel, v->keylen, itemsize);
		v->inserted = false;
		mi[i].v = v;
		mi[i].itemsize = itemsize;
		mi[i].item = ddb_build_leaf_item(v->key, v->keylen, &v->tid, v->tuple, itemsize,
										 &mi[i].itemkey, &mi[i].itemkeylen);
	}
	qsort(mi, n, sizeof(MultiItem), multi_item_cmp);
	/* stop_at_live: the caller's order is the sort's, so the index is its */
	for (i = 0; stop_at_live && i < n; i++)
		if (mi[i].v != &versions[i])
			elog(ERROR, "ddb_tree_insert_multi: versions not in key order");
	ddb_tree_init_if_needed(rel);
	/* read before any leaf is locked: the first read may look at pg_class */
	table_reserve = ddb_leaf_reserve_bytes(rel);

	offs = palloc(sizeof(OffsetNumber) * n);
	data = palloc(sizeof(char *) * n);
	sizes = palloc(sizeof(Size) * n);
	run = palloc(sizeof(int) * n);
	initStringInfo(&succ);

	i = 0;
	while (i < n)
	{
		MultiItem  *first = &mi[i];
		Buffer		buf;
		Page		page;
		Size		freespace;
		Size		need = 0;
		int			nrun = 0;
		int			j;
		bool		full = false;
		int			npend = 0;
		Size		pendsize = 0;
		bool		split = false;
		bool		relaid = false;
		BlockNumber leaf;		/* the descent's, for a split (ddb_make_room) */

		CHECK_FOR_INTERRUPTS();

		/* the second of one key: as a single insert after the first */
		if (i > 0 && ddb_compare_bytes(first->v->key, first->v->keylen,
									   mi[i - 1].v->key, mi[i - 1].v->keylen) == 0)
		{
			if (stop_at_live)
				elog(ERROR, "ddb_tree_insert_multi: a key twice");
			MemoryContextSwitchTo(old);
			first->v->inserted = ddb_tree_insert(rel, first->v->key, first->v->keylen,
												 &first->v->tid, first->v->tuple,
												 check_unique);
			MemoryContextSwitchTo(cxt);
			i++;
			continue;
		}

		buf = ddb_descend(rel, first->v->key, first->v->keylen, false,
						  BUFFER_LOCK_EXCLUSIVE, NULL, NULL);
		leaf = BufferGetBlockNumber(buf);
		page = BufferGetPage(buf);
		freespace = PageGetExactFreeSpace(page);

		for (j = i; j < n; j++)
		{
			MultiItem  *m = &mi[j];
			Size		reserve = ddb_item_reserve(table_reserve, m->itemsize,
												   check_unique);
			Size		stored;
			bool		duplicate = false;
			bool		has_succ;
			TransactionId wait_xid;

			if (j > i && ddb_compare_bytes(m->v->key, m->v->keylen,
										   mi[j - 1].v->key, mi[j - 1].v->keylen) == 0)
				break;			/* a key's second item: see above */
			if (ddb_beyond_page(page, m->v->key, m->v->keylen, false) ||
				ddb_beyond_page(page, m->itemkey, m->itemkeylen, false))
				break;			/* belongs to a leaf further right */
			if (!ddb_leaf_shares_prefix(page, m->v->key, m->v->keylen))
				break;			/* the single path shrinks the prefix */
			/* (its size as stored, under the leaf's prefix) */
			stored = ddb_leaf_item_resized(m->item, m->itemsize,
										   -DdbPageGetOpaque(page)->prefixlen);
			if (need + stored + sizeof(ItemIdData) + reserve > freespace)
			{
				full = true;	/* split for the rest, below */
				break;
			}

			/*
			 * The successor first, in a statement of its own: as arguments
			 * of one call, succ.data and succ.len could be read before
			 * ddb_key_successor sets them (C leaves the order open), and a
			 * length left from the previous key -- 0 for the batch's first
			 * -- ended the check at the first leaf's high key, missing a
			 * live version further right.
			 */
			has_succ = ddb_key_successor(m->v->key, m->v->keylen, &succ);
			wait_xid = ddb_check_unique(rel, buf, m->v->key, m->v->keylen,
										has_succ ? succ.data : NULL, succ.len,
										check_unique == DDB_UNIQUE_RETURN ? &duplicate : NULL);
			if (TransactionIdIsValid(wait_xid))
				break;			/* the single path waits, with no lock held */
			if (duplicate && stop_at_live)
			{
				stopped = j;	/* the run before it goes in, then stop */
				break;
			}
			if (duplicate)
				continue;		/* live: not inserted (DDB_UNIQUE_RETURN) */
			run[nrun++] = j;
			need += stored + sizeof(ItemIdData);
		}

		/*
		 * The leaf is full: the items from j on that belong to it (up to a
		 * page of them) are the run one split must make room for.
		 */
		if (full)
		{
			for (int k = j; k < n; k++)
			{
				MultiItem  *m = &mi[k];

				if ((k > j && ddb_compare_bytes(m->v->key, m->v->keylen,
												mi[k - 1].v->key, mi[k - 1].v->keylen) == 0) ||
					ddb_beyond_page(page, m->v->key, m->v->keylen, false) ||
					ddb_beyond_page(page, m->itemkey, m->itemkeylen, false) ||
					!ddb_leaf_shares_prefix(page, m->v->key, m->v->keylen) ||
					pendsize + m->itemsize + sizeof(ItemIdData) > DDB_PAGE_CAPACITY)
					break;
				pendsize += m->itemsize + sizeof(ItemIdData);
				npend++;
			}
			split = npend > 0 && !(j == i && made_room_at == i);
		}

		/*
		 * Before a split, prune versions no snapshot can see, once per leaf,
		 * as a single insert does; if that frees anything, start this leaf
		 * again (the run's checks are repeated, nothing was added).
		 */
		if (split && BufferGetBlockNumber(buf) != pruned)
		{
			ItemPointerData *removed = palloc(sizeof(ItemPointerData) * MaxOffsetNumber);
			int			nremoved;

			pruned = BufferGetBlockNumber(buf);
			ddb_prune_before_split(rel, buf, removed, &nremoved);
			if (nremoved > 0)
			{
				UnlockReleaseBuffer(buf);
				ddb_map_clear(rel, removed, nremoved);
				pfree(removed);
				continue;
			}
			pfree(removed);
		}

		if (nrun > 0)
		{
			BlockNumber leaf = BufferGetBlockNumber(buf);

			/*
			 * The run is in key order, so the k-th item lands k places after
			 * where it would go on the page as it is now.
			 */
			for (int k = 0; k < nrun; k++)
			{
				MultiItem  *m = &mi[run[k]];

				offs[k] = ddb_leaf_search(page, m->itemkey, m->itemkeylen, false) + k;
				/* (sized above with their whole keys: at least the room they take;
				 * their keys share the leaf's prefix, checked above under this lock) */
				data[k] = (char *) leaf_item_under_prefix(page, m->item, m->itemsize, &sizes[k]);
			}
			if (nrun == 1)
				ddb_wal_leaf_add(rel, buf, offs[0], data[0], sizes[0], InvalidBuffer, 0);
			else
				ddb_wal_leaf_add_multi(rel, buf, nrun, offs, data, sizes);
			DdbCheck(ddb_page_is_ordered(page, NULL, 0));
#ifdef DDB_CHECKS
			for (int k = 0; k < nrun; k++)
			{
				MultiItem  *m = &mi[run[k]];
				bool		has_succ = ddb_key_successor(m->v->key, m->v->keylen, &succ);

				DdbCheck(ddb_check_key_has_one_version(rel, buf, m->v->key, m->v->keylen,
													   has_succ ? succ.data : NULL, succ.len));
			}
#endif
			relaid = split && multi_lengthen(rel, buf, mi, j, npend, table_reserve,
											 check_unique, &lengthened);
			UnlockReleaseBuffer(buf);

			/* The versions first, then their map entries: see ddb_rowid.c. */
			for (int k = 0; k < nrun; k++)
			{
				DdbNewVersion *v = mi[run[k]].v;

				v->inserted = true;
				ddb_map_set_deferred(rel, &v->tid, leaf, ddb_key_hash(v->key));
			}
			buf = InvalidBuffer;
		}
		else
			relaid = split && multi_lengthen(rel, buf, mi, j, npend, table_reserve,
											 check_unique, &lengthened);
		if (BufferIsValid(buf))
			UnlockReleaseBuffer(buf);
		if (stopped < n)
			break;
		if (relaid)
		{
			i = j;				/* room made without a split */
			continue;
		}

		/*
		 * A full leaf that pruning did not help: one pessimistic descent
		 * splits it so that the whole pending run fits (ddb_make_room,
		 * ddb_split_point_for_run), and the placement goes on from j.  Only
		 * when a split just made room for this same item and it still did
		 * not fit (a concurrent writer took the room) does the item take
		 * the single path, which loops until it fits.
		 */
		if (split)
		{
			{
				MemoryContext splitcxt = AllocSetContextCreate(CurrentMemoryContext,
															   "ddb split",
															   ALLOCSET_DEFAULT_SIZES);
				MemoryContext prev = MemoryContextSwitchTo(splitcxt);
				Size		reserve = ddb_item_reserve(table_reserve, mi[j].itemsize,
													   check_unique);
				DdbSplitRun sr;

				sr.n = npend;
				sr.itemkey = palloc(sizeof(char *) * npend);
				sr.itemkeylen = palloc(sizeof(int) * npend);
				sr.size = palloc(sizeof(Size) * npend);
				sr.reserve = reserve;
				for (int k = 0; k < npend; k++)
				{
					sr.itemkey[k] = mi[j + k].itemkey;
					sr.itemkeylen[k] = mi[j + k].itemkeylen;
					sr.size[k] = mi[j + k].itemsize;
				}
				ddb_make_room(rel, mi[j].itemkey, mi[j].itemkeylen,
							  pendsize - sizeof(ItemIdData) + reserve,
							  npend > 1 ? &sr : NULL, leaf);
				MemoryContextSwitchTo(prev);
				MemoryContextDelete(splitcxt);
				made_room_at = j;
			}
			i = j;
			continue;
		}

		if (j == i)
		{
			/* the run could not even start: this item takes the single path */
			MemoryContextSwitchTo(old);
			first->v->inserted = ddb_tree_insert(rel, first->v->key, first->v->keylen,
												 &first->v->tid, first->v->tuple,
												 check_unique);
			MemoryContextSwitchTo(cxt);
			if (!first->v->inserted && stop_at_live)
			{
				stopped = i;
				break;
			}
			j = i + 1;
		}
		i = j;
	}

	MemoryContextSwitchTo(old);
	ddb_scratch_leave(&multi_scratch, cxt);
	return stopped;
}
