/*-------------------------------------------------------------------------
 *
 * ddb_stream.c
 *	  Streams: every change to a ddb table as an ordered record stream,
 *	  DynamoDB Streams' semantics on PostgreSQL's guarantees.
 *
 * Duties: enabling and disabling a table's stream (UpdateTable's and
 * CreateTable's StreamSpecification, ddb_update_stream), writing one record
 * per item change from every write path, reading records in order
 * (ddb_stream_records, and DynamoDB Streams' ListStreams, DescribeStream,
 * GetShardIterator, GetRecords), and the retention sweep.
 *
 * Storage.  A stream is a row of ddb_internal.streams; its records are rows
 * of ddb_internal.stream_records, an ordinary heap table with a btree on
 * (stream_id, shard, seq).  Heap rather than a ddb table or a WAL message:
 * the changing transaction inserts its records itself, so they commit or
 * roll back with the change (a rolled-back change never appears, a
 * committed one exactly once), they are WAL-logged by heap's own resource
 * manager (crash recovery, physical replication, and a hot standby reads
 * them), and VACUUM, TOAST and pg_dump need nothing of ours.  Records are
 * written with heap_insert and CatalogTupleInsertWithInfo (heap tuple plus
 * index entries, no executor, no SPI).
 *
 * Write paths: the item API (ddb_api.c's writes call ddb_stream_capture
 * after each write, as they call ddb_gsi_maintain) and SQL (INSERT, UPDATE,
 * DELETE, COPY, MERGE), through ddb_stream_trigger, an AFTER ROW trigger
 * that exists on a table only while its stream is enabled.  A table without
 * a stream pays one cache probe per item-API write and nothing per SQL
 * write.  A write that changes nothing (PutItem of the same item) writes no
 * record, as in DynamoDB.
 *
 * Shards.  A stream has a fixed number of shards (DDB_STREAM_SHARDS),
 * each a contiguous range of the partition-key hash (the tree's routing
 * hash): shard = hash32 * nshards >> 32.  All changes of one item go to one
 * shard.  Shards are not split over time: they have no parent and stay open
 * while the stream is enabled.
 *
 * ORDERING: why a reader resuming after its last sequence number misses
 * nothing, even when transactions commit out of the order they wrote.
 *
 *	 Sequence numbers are taken from ddb_internal.stream_seq while the record
 *	 is written, before the writer commits, so they follow the order of the
 *	 writes, not of the commits: T1 may take 10, T2 take 11 and commit
 *	 first.  A reader that returned 11 and then resumes "after 11" would
 *	 never see 10.  Three rules close that gap:
 *
 *	 (1) Writers take the stream's number and insert the record (heap tuple
 *		 and index entry) under one lock of the stream (a heavyweight
 *		 LOCKTAG_OBJECT lock on (stream_records, stream_id), exclusive, held
 *		 only for these few steps, never across a wait for another
 *		 transaction, so it cannot deadlock).  Hence a record with number s
 *		 is in the index before any record numbered above s is, and in WAL
 *		 before it (which is what a standby sees).
 *
 *	 (2) A reader first finds G, the highest number present in the stream's
 *		 index (visible or not: any version), and reads only up to G.  By
 *		 (1), every record numbered up to G was already in the index when G
 *		 was found: nothing numbered below G can appear later.  (Records
 *		 numbered above G may appear meanwhile; they are read next time.)
 *
 *	 (3) The reader reads (after, G] in order with SnapshotAny and judges
 *		 each record against its MVCC snapshot: visible means committed,
 *		 returned; inserted by a transaction the snapshot still sees as
 *		 running (or by the reader's own transaction) means PENDING: the
 *		 reader stops there and returns nothing numbered above it, so its
 *		 position never passes an undecided record; anything else (aborted,
 *		 or committed and since removed by the retention sweep) is skipped,
 *		 since it can never become visible.
 *
 *	 So what a reader returns is a prefix, in number order, of the records
 *	 that will ever be committed, and resuming after the last one it
 *	 returned continues that prefix: nothing missed, nothing twice.  The
 *	 records of one item follow its commit order, since a transaction can
 *	 write an item only after the previous writer of the item committed
 *	 (row locks) and so takes a higher number.  The price: a reader does not
 *	 pass a transaction that is still open, so a long transaction that wrote
 *	 to a streamed table holds back that stream's readers (for one shard's
 *	 reader, only that shard) until it ends; a prepared transaction until
 *	 COMMIT/ROLLBACK PREPARED.  On a hot standby the same holds: (1) orders
 *	 the WAL, and the standby's snapshots know the primary's running
 *	 transactions.
 *
 *	 Reading all shards at once merges them by number: each shard is read
 *	 up to G, and the merged result stops at the first shard position that
 *	 could hide a lower number (a pending record, or a shard cut by the
 *	 limit), so "after the last number returned" is also a valid position
 *	 for the merged reader.
 *
 * Retention: ddb_stream_sweep (and nothing else) deletes, per shard, the
 * oldest records while they are older than ddb.stream_retention, walking
 * the index from the shard's start, so its cost is what expires; it then
 * raises the shard's "trimmed" number (the highest it deleted) and the
 * stream's (the highest of all shards').  A shard's position below its
 * shard's trimmed number may have missed records: TrimmedDataAccessException,
 * as DynamoDB's "read past the oldest stream record in a shard".  Sequence
 * numbers are shared by the shards, so a reader that has read its shard to
 * the end keeps a position below other shards' deleted records, and only
 * its own shard's number can judge it.  A position of the merged reader
 * (all shards) is judged by the stream's.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "common/cryptohash.h"
#include "common/hmac.h"
#include "common/sha2.h"
#include "commands/sequence.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "ddb.h"
#include "model/ddb_expr.h"
#include "api/ddb_json.h"
#include "api/ddb_ops.h"

PG_FUNCTION_INFO_V1(ddb_update_stream);
PG_FUNCTION_INFO_V1(ddb_stream_records);
PG_FUNCTION_INFO_V1(ddb_stream_sweep);
PG_FUNCTION_INFO_V1(ddb_stream_trigger);

/* Shards of a new stream. */
#define DDB_STREAM_SHARDS		4

/* GetRecords' Limit and the SQL function's "limit": 1..1000. */
#define DDB_STREAM_MAX_LIMIT	1000

/* GetRecords returns at most 1 MB of records. */
#define DDB_STREAM_MAX_BYTES	(1024 * 1024)

/* A shard iterator expires 15 minutes after GetShardIterator made it. */
#define DDB_ITERATOR_LIFETIME_MS	(15 * 60 * 1000)

#define STREAM_TRIGGER			"ddb_stream_capture"
#define INTERNAL_SCHEMA			"ddb_internal"

/* Columns of ddb_internal.stream_records */
#define Natts_rec				10
#define Anum_rec_stream_id		1
#define Anum_rec_shard			2
#define Anum_rec_seq			3
#define Anum_rec_created		4
#define Anum_rec_event			5
#define Anum_rec_keys			6
#define Anum_rec_new_image		7
#define Anum_rec_old_image		8
#define Anum_rec_size_bytes		9
#define Anum_rec_service		10

/* ddb.stream_retention, in seconds */
static int	ddb_stream_retention = 86400;

typedef enum StreamView
{
	VIEW_KEYS_ONLY,
	VIEW_NEW_IMAGE,
	VIEW_OLD_IMAGE,
	VIEW_NEW_AND_OLD_IMAGES
} StreamView;

static const char *const view_names[] = {"KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES"};

/* A stream, as its catalog row describes it. */
typedef struct DdbStream
{
	int32		stream_id;
	Oid			relid;			/* InvalidOid once the table is dropped */
	char	   *table_name;
	char	   *label;
	StreamView	view;
	int			shards;
	char	   *key_schema;		/* JSON text */
	char	   *created;		/* epoch seconds, as text */
	bool		enabled;
	int64		trimmed;		/* the highest number deleted, of any shard */
	int64	   *shard_trimmed;	/* of each shard */
	Oid			owner;			/* the table's owner (kept by ddb_stream_owner_sync) */
} DdbStream;

/* A table's latest stream, cached per relation. */
typedef struct StreamCacheEntry
{
	Oid			relid;			/* hash key */
	bool		valid;
	bool		has_stream;		/* the table has had a stream */
	DdbStream	stream;
	MemoryContext cxt;
} StreamCacheEntry;

static HTAB *stream_cache = NULL;

/* The entry of the last call, as gsi_last in ddb_gsi.c (and as safe). */
static StreamCacheEntry *stream_last = NULL;

/* One record as read back. */
typedef struct StreamRecord
{
	int64		seq;
	int			shard;
	TimestampTz created;
	char		event;
	Jsonb	   *keys;
	Jsonb	   *new_image;
	Jsonb	   *old_image;
	int32		size_bytes;
	bool		service;
} StreamRecord;

void
ddb_stream_init(void)
{
	DefineCustomIntVariable("ddb.stream_retention",
							"How long stream records are kept.",
							"ddb_stream_sweep() removes records older than this, and streams disabled for longer.",
							&ddb_stream_retention, 86400, 1, INT_MAX / 1000,
							PGC_SUSET, GUC_UNIT_S, NULL, NULL, NULL);
}

/* ------------------------------------------------------------------------
 * Catalog
 * ------------------------------------------------------------------------
 */
static Oid
internal_relid(const char *name)
{
	Oid			nsp = get_namespace_oid(INTERNAL_SCHEMA, false);
	Oid			relid = get_relname_relid(name, nsp);

	if (!OidIsValid(relid))
		elog(ERROR, "ddb catalog relation %s.%s is missing", INTERNAL_SCHEMA, name);
	return relid;
}

static const char *
event_name(char e)
{
	return e == 'I' ? "INSERT" : e == 'M' ? "MODIFY" : "REMOVE";
}

/* Fill a DdbStream from an SPI row of STREAM_COLUMNS. */
#define STREAM_COLUMNS "stream_id, relid::oid, table_name, label, view_type, shards, " \
	"key_schema::text, extract(epoch FROM created)::numeric(20,3)::text, disabled IS NULL, trimmed, " \
	"shard_trimmed, owner::oid"

static void
stream_from_spi(HeapTuple tup, TupleDesc desc, DdbStream *s)
{
	bool		isnull;
	char	   *view;

	s->stream_id = DatumGetInt32(SPI_getbinval(tup, desc, 1, &isnull));
	s->relid = DatumGetObjectId(SPI_getbinval(tup, desc, 2, &isnull));
	if (isnull)
		s->relid = InvalidOid;
	s->table_name = SPI_getvalue(tup, desc, 3);
	s->label = SPI_getvalue(tup, desc, 4);
	view = SPI_getvalue(tup, desc, 5);
	s->view = VIEW_KEYS_ONLY;
	for (int i = 0; i < lengthof(view_names); i++)
		if (strcmp(view, view_names[i]) == 0)
			s->view = (StreamView) i;
	s->shards = DatumGetInt32(SPI_getbinval(tup, desc, 6, &isnull));
	s->key_schema = SPI_getvalue(tup, desc, 7);
	s->created = SPI_getvalue(tup, desc, 8);
	s->enabled = DatumGetBool(SPI_getbinval(tup, desc, 9, &isnull));
	s->trimmed = DatumGetInt64(SPI_getbinval(tup, desc, 10, &isnull));
	s->shard_trimmed = palloc(sizeof(int64) * Max(s->shards, 1));
	{
		Datum	   *elems;
		bool	   *nulls;
		int			n;

		deconstruct_array(DatumGetArrayTypeP(SPI_getbinval(tup, desc, 11, &isnull)),
						  INT8OID, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
						  &elems, &nulls, &n);
		/* (a shard the sweep has not recorded is judged by the stream's) */
		for (int i = 0; i < s->shards; i++)
			s->shard_trimmed[i] = i < n && !nulls[i] ? DatumGetInt64(elems[i]) : s->trimmed;
	}
	s->owner = DatumGetObjectId(SPI_getbinval(tup, desc, 12, &isnull));
	if (isnull)
		s->owner = InvalidOid;
}

/*
 * May the current user read stream s?  While its table exists, who may
 * SELECT from the table; once it is dropped (its records stay until they
 * expire, as DynamoDB keeps a deleted table's stream for 24 hours), its
 * owner's roles and superusers.  A table gone without the drop's event
 * trigger (single-user mode, or the trigger disabled) counts as dropped.
 */
static bool
may_read_stream(const DdbStream *s)
{
	if (OidIsValid(s->relid))
	{
		bool		missing = false;
		AclResult	r = pg_class_aclcheck_ext(s->relid, GetUserId(), ACL_SELECT, &missing);

		if (!missing)
			return r == ACLCHECK_OK;
	}
	return superuser() || (OidIsValid(s->owner) && has_privs_of_role(GetUserId(), s->owner));
}

/* The number a position in 'shard' (< 0: the merged reader's) must not be below */
static int64
trimmed_of(const DdbStream *s, int shard)
{
	return shard < 0 ? s->trimmed : s->shard_trimmed[shard];
}

/*
 * Run a catalog query (as the catalog's owner: the stream catalogs grant
 * nothing to PUBLIC) with the latest snapshot; rows are copied into the
 * caller's context as DdbStreams.
 */
static List *
streams_query(const char *sql, int nargs, Oid *argtypes, Datum *args, const char *nulls)
{
	MemoryContext caller = CurrentMemoryContext;
	List	   *result = NIL;
	DdbRunAs	save;

	ddb_run_as_begin(ddb_catalog_owner(), &save);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	PushActiveSnapshot(GetLatestSnapshot());
	if (SPI_execute_with_args(sql, nargs, argtypes, args, nulls, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read ddb_internal.streams");
	PopActiveSnapshot();
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		MemoryContext old = MemoryContextSwitchTo(caller);
		DdbStream  *s = palloc0(sizeof(DdbStream));

		stream_from_spi(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, s);
		result = lappend(result, s);
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	ddb_run_as_end(&save);
	return result;
}

static void
stream_cache_invalidate(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS status;
	StreamCacheEntry *e;

	if (stream_cache == NULL)
		return;
	if (OidIsValid(relid))
	{
		e = hash_search(stream_cache, &relid, HASH_FIND, NULL);
		if (e)
			e->valid = false;
		return;
	}
	hash_seq_init(&status, stream_cache);
	while ((e = hash_seq_search(&status)) != NULL)
		e->valid = false;
}

/*
 * The table's latest stream (enabled or not), or NULL if it never had one.
 * Valid until the next relcache invalidation of the table, which enabling
 * and disabling send.
 */
static const DdbStream *
table_stream(Oid relid)
{
	StreamCacheEntry *e;
	bool		found;

	if (stream_cache == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(StreamCacheEntry);
		ctl.hcxt = CacheMemoryContext;
		stream_cache = hash_create("ddb stream cache", 64, &ctl,
								   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		CacheRegisterRelcacheCallback(stream_cache_invalidate, (Datum) 0);
	}
	if (stream_last != NULL && stream_last->relid == relid)
		e = stream_last;
	else
	{
		e = hash_search(stream_cache, &relid, HASH_ENTER, &found);
		if (!found)
		{
			e->valid = false;
			e->cxt = NULL;
		}
	}
	if (!e->valid)
	{
		MemoryContext cxt = AllocSetContextCreate(CacheMemoryContext, "ddb stream info",
												  ALLOCSET_SMALL_SIZES);
		Oid			argtypes[1] = {OIDOID};
		Datum		args[1] = {ObjectIdGetDatum(relid)};
		List	   *l;
		DdbStream	s;
		bool		has = false;

		memset(&s, 0, sizeof(s));
		PG_TRY();
		{
			MemoryContext old = MemoryContextSwitchTo(cxt);

			l = streams_query("SELECT " STREAM_COLUMNS " FROM " INTERNAL_SCHEMA ".streams "
							  "WHERE relid = $1 ORDER BY stream_id DESC LIMIT 1",
							  1, argtypes, args, NULL);
			if (l != NIL)
			{
				s = *(DdbStream *) linitial(l);
				has = true;
			}
			MemoryContextSwitchTo(old);
		}
		PG_CATCH();
		{
			MemoryContextDelete(cxt);
			PG_RE_THROW();
		}
		PG_END_TRY();
		e = hash_search(stream_cache, &relid, HASH_ENTER, &found);
		if (found && e->cxt)
			MemoryContextDelete(e->cxt);
		e->cxt = cxt;
		e->stream = s;
		e->has_stream = has;
		e->valid = true;
	}
	stream_last = e;
	return e->has_stream ? &e->stream : NULL;
}

/* Forget the streams of dropped tables (see ddb_forget_tables). */
static void
stream_cache_forget(void *entry)
{
	StreamCacheEntry *e = (StreamCacheEntry *) entry;

	if (e->cxt)
		MemoryContextDelete(e->cxt);
	if (e == stream_last)
		stream_last = NULL;
}

int
ddb_stream_cache_forget(bool (*gone) (Oid relid))
{
	return ddb_cache_forget(stream_cache, gone, stream_cache_forget);
}

/* ------------------------------------------------------------------------
 * Names: ARNs, shard ids, sequence numbers
 * ------------------------------------------------------------------------
 */
static char *
stream_arn(const DdbStream *s)
{
	return psprintf("%s/stream/%s", ddb_table_arn(s->table_name), s->label);
}

static char *
shard_id(const DdbStream *s, int shard)
{
	/* DynamoDB's shape: shardId-<20 digits>-<8 hex digits> */
	return psprintf("shardId-%020lld-%04x%04x",
					(long long) (strtod(s->created, NULL) * 1000), s->stream_id & 0xffff, shard);
}

/* The shard number a shard id names in stream s, or -1. */
static int
parse_shard_id(const DdbStream *s, const char *id)
{
	for (int i = 0; i < s->shards; i++)
		if (strcmp(id, shard_id(s, i)) == 0)
			return i;
	return -1;
}

static char *
seq_string(int64 seq)
{
	return psprintf("%021lld", (long long) seq);
}

/* A sequence number given by a client; false if it is not one. */
static bool
parse_seq(const char *s, int64 *seq)
{
	int64		v = 0;

	if (s == NULL || *s == '\0' || strlen(s) > 40)
		return false;
	for (const char *p = s; *p; p++)
	{
		if (*p < '0' || *p > '9')
			return false;
		if (v > (PG_INT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (*p - '0');
	}
	*seq = v;
	return true;
}

static void
stream_not_found(const char *arn)
{
	ddb_raise(DDB_ERRCODE_RESOURCE_NOT_FOUND, "ResourceNotFoundException",
			  DDB_MSG_STREAM_NOT_FOUND, arn);
}

/* ------------------------------------------------------------------------
 * Writing records
 * ------------------------------------------------------------------------
 */

/* The key attributes of an API item, as a document-form object. */
static Jsonb *
item_keys(Relation rel, Jsonb *item)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(rel);
	JsonbParseState *ps = NULL;

	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	for (int k = 0; k < ki->nkeys; k++)
	{
		const char *name = ddb_key_name(rel, k);
		JsonbValue	jk;
		JsonbValue *v;

		jk.type = jbvString;
		jk.val.string.val = (char *) name;
		jk.val.string.len = strlen(name);
		v = findJsonbValueFromContainer(&item->root, JB_FOBJECT, &jk);
		if (v == NULL)
			elog(ERROR, "item lacks its key attribute \"%s\"", name);
		pushJsonbValue(&ps, WJB_KEY, &jk);
		pushJsonbValue(&ps, WJB_VALUE, v);
	}
	return JsonbValueToJsonb(pushJsonbValue(&ps, WJB_END_OBJECT, NULL));
}

static int64
doc_size(Jsonb *doc)
{
	return doc ? ddb_item_size(ddb_item_from_jsonb(doc)) : 0;
}

/*
 * Write one record into stream s: take its sequence number and insert it
 * under the stream's lock (rule (1) of the header).
 */
static void
write_record(const DdbStream *s, int shard, char event, Jsonb *keys,
			 Jsonb *new_image, Jsonb *old_image, bool service)
{
	Relation	rec = table_open(internal_relid("stream_records"), RowExclusiveLock);
	Oid			seqoid = internal_relid("stream_seq");
	CatalogIndexState indstate = CatalogOpenIndexes(rec);
	Datum		values[Natts_rec];
	bool		nulls[Natts_rec];
	HeapTuple	tup;
	LOCKTAG		tag;
	int64		size = doc_size(keys) + doc_size(new_image) + doc_size(old_image);

	memset(nulls, false, sizeof(nulls));
	values[Anum_rec_stream_id - 1] = Int32GetDatum(s->stream_id);
	values[Anum_rec_shard - 1] = Int16GetDatum(shard);
	values[Anum_rec_event - 1] = CharGetDatum(event);
	values[Anum_rec_keys - 1] = JsonbPGetDatum(keys);
	values[Anum_rec_new_image - 1] = new_image ? JsonbPGetDatum(new_image) : (Datum) 0;
	nulls[Anum_rec_new_image - 1] = (new_image == NULL);
	values[Anum_rec_old_image - 1] = old_image ? JsonbPGetDatum(old_image) : (Datum) 0;
	nulls[Anum_rec_old_image - 1] = (old_image == NULL);
	values[Anum_rec_size_bytes - 1] = Int32GetDatum((int32) Min(size, PG_INT32_MAX));
	values[Anum_rec_service - 1] = BoolGetDatum(service);

	SET_LOCKTAG_OBJECT(tag, MyDatabaseId, RelationGetRelid(rec), s->stream_id, 0);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
	values[Anum_rec_seq - 1] = Int64GetDatum(nextval_internal(seqoid, false));
	values[Anum_rec_created - 1] = TimestampTzGetDatum(GetCurrentTimestamp());
	tup = heap_form_tuple(RelationGetDescr(rec), values, nulls);
	CatalogTupleInsertWithInfo(rec, tup, indstate);
	LockRelease(&tag, ExclusiveLock, false);

	CatalogCloseIndexes(indstate);
	table_close(rec, NoLock);
}

/*
 * Record an item change of rel in its stream, if it has an enabled one:
 * olditem/newitem are the API items before and after (NULL for none).
 * Called by every write path, in the writing transaction.
 */
/*
 * Writes between ddb_stream_service_begin and _end are the service's own
 * (TTL deletions): their records carry DynamoDB's service userIdentity.
 * Calls nest; the TTL sweep ends its span in PG_FINALLY.
 */
static int	service_depth = 0;

void
ddb_stream_service_begin(void)
{
	service_depth++;
}

void
ddb_stream_service_end(void)
{
	Assert(service_depth > 0);
	service_depth--;
}

/*
 * Does ddb_stream_capture record writes of this table (a stream that is
 * enabled)?  A write that needs no old item for itself builds it only then.
 */
bool
ddb_stream_capturing(Relation rel)
{
	const DdbStream *cached = table_stream(RelationGetRelid(rel));

	return cached != NULL && cached->enabled;
}

void
ddb_stream_capture(Relation rel, Jsonb *olditem, Jsonb *newitem)
{
	const DdbStream *cached = table_stream(RelationGetRelid(rel));
	DdbStream	s;
	MemoryContext cxt,
				old;
	Jsonb	   *keys;
	StringInfoData enckey;
	Datum		kvalues[DDB_MAX_KEY_COLUMNS];
	bool		knulls[DDB_MAX_KEY_COLUMNS];
	uint32		hash;
	char		event;

	if (cached == NULL || !cached->enabled)
		return;
	if (olditem == NULL && newitem == NULL)
		return;
	/* DynamoDB writes no record for a write that changes nothing */
	if (olditem != NULL && newitem != NULL && ddb_items_equal(olditem, newitem))
		return;
	s = *cached;				/* opening relations may invalidate the cache */

	cxt = AllocSetContextCreate(CurrentMemoryContext, "ddb stream record",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	keys = item_keys(rel, newitem ? newitem : olditem);
	initStringInfo(&enckey);
	ddb_key_from_jsonb(rel, keys, true, kvalues, knulls, &enckey);
	hash = ddb_key_hash(enckey.data);
	event = olditem == NULL ? 'I' : newitem == NULL ? 'R' : 'M';
	write_record(&s, (int) (((uint64) hash * s.shards) >> 32), event, keys,
				 (s.view == VIEW_NEW_IMAGE || s.view == VIEW_NEW_AND_OLD_IMAGES) ? newitem : NULL,
				 (s.view == VIEW_OLD_IMAGE || s.view == VIEW_NEW_AND_OLD_IMAGES) ? olditem : NULL,
				 service_depth > 0);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}

/*
 * ddb_stream_trigger: AFTER INSERT OR UPDATE OR DELETE FOR EACH ROW, the
 * stream's capture of SQL writes.
 */
Datum
ddb_stream_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	Relation	rel;
	Jsonb	   *olditem = NULL;
	Jsonb	   *newitem = NULL;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_AFTER(td->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(td->tg_event))
		elog(ERROR, "ddb_stream_trigger must be an AFTER ROW trigger");
	rel = td->tg_relation;
	if (!ddb_is_ddb_relation(rel))
		elog(ERROR, "ddb_stream_trigger is for ddb tables");
	if (TRIGGER_FIRED_BY_INSERT(td->tg_event))
		newitem = ddb_tuple_to_item(rel, ExecFetchSlotHeapTuple(td->tg_trigslot, false, NULL));
	else if (TRIGGER_FIRED_BY_DELETE(td->tg_event))
		olditem = ddb_tuple_to_item(rel, ExecFetchSlotHeapTuple(td->tg_trigslot, false, NULL));
	else if (TRIGGER_FIRED_BY_UPDATE(td->tg_event))
	{
		olditem = ddb_tuple_to_item(rel, ExecFetchSlotHeapTuple(td->tg_trigslot, false, NULL));
		newitem = ddb_tuple_to_item(rel, ExecFetchSlotHeapTuple(td->tg_newslot, false, NULL));
	}
	else
		elog(ERROR, "ddb_stream_trigger must be a trigger for INSERT, UPDATE and DELETE");
	ddb_stream_capture(rel, olditem, newitem);
	return PointerGetDatum(NULL);
}

/* ------------------------------------------------------------------------
 * Enabling and disabling
 * ------------------------------------------------------------------------
 */

/* DescribeStream's KeySchema of a table, as JSON text. */
static char *
key_schema_json(Relation rel)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(rel);
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '[');
	for (int k = 0; k < ki->nkeys; k++)
	{
		appendStringInfoString(&buf, k ? ",{\"AttributeName\":" : "{\"AttributeName\":");
		ddb_json_cstring(&buf, ddb_table_key_name(rel, k));
		appendStringInfo(&buf, ",\"KeyType\":\"%s\"}", k == 0 ? "HASH" : "RANGE");
	}
	appendStringInfoChar(&buf, ']');
	return buf.data;
}

/* A StreamViewType, or -1. */
static int
parse_view(const char *v)
{
	for (int i = 0; v && i < lengthof(view_names); i++)
		if (strcmp(v, view_names[i]) == 0)
			return i;
	return -1;
}

/*
 * Enable (view_type given) or disable (NULL) rel's stream, as UpdateTable's
 * StreamSpecification does.  Only the table's owner may.  Takes
 * ShareRowExclusiveLock on the table, so the change waits for every
 * uncommitted write and a stream starts and ends between writes; readers
 * do not wait.  Disabling disables the capture trigger rather than drop
 * it (ddb_upkeep_trigger_set: DROP TRIGGER's lock would).
 */
void
ddb_stream_set(Relation rel, const char *view_type)
{
	Oid			relid = RelationGetRelid(rel);
	const DdbStream *cur;
	char	   *name = ddb_table_name(rel);
	char	   *qrel;
	char	   *fn;
	DdbRunAs	save;
	int			pinned;

	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, RelationGetRelationName(rel));
	if (view_type != NULL && parse_view(view_type) < 0)
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", DDB_MSG_VALIDATION_ERRORS, 1, "",
				  psprintf(DDB_MSG_CONSTRAINT, view_type, "streamSpecification.streamViewType",
						   "Member must satisfy enum value set: [NEW_IMAGE, OLD_IMAGE, NEW_AND_OLD_IMAGES, KEYS_ONLY]"));
	LockRelationOid(relid, ShareRowExclusiveLock);
	CacheInvalidateRelcache(rel);
	cur = table_stream(relid);
	if (view_type != NULL && cur != NULL && cur->enabled)
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
				  DDB_MSG_STREAM_ALREADY_ENABLED, name);
	if (view_type == NULL && (cur == NULL || !cur->enabled))
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
				  DDB_MSG_STREAM_NOT_ENABLED, name);

	qrel = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
									  RelationGetRelationName(rel));
	fn = quote_qualified_identifier(get_namespace_name(ddb_extension_schema()),
									"ddb_stream_trigger");
	/* the trigger's SQL, as the caller (see ddb_search_path_pin) */
	pinned = ddb_search_path_pin();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (view_type != NULL)
	{
		Oid			argtypes[6] = {OIDOID, TEXTOID, TEXTOID, INT4OID, TEXTOID, OIDOID};
		Datum		args[6];

		args[0] = ObjectIdGetDatum(relid);
		args[1] = CStringGetTextDatum(name);
		args[2] = CStringGetTextDatum(view_type);
		args[3] = Int32GetDatum(DDB_STREAM_SHARDS);
		args[4] = CStringGetTextDatum(key_schema_json(rel));
		args[5] = ObjectIdGetDatum(rel->rd_rel->relowner);
		ddb_run_as_begin(ddb_catalog_owner(), &save);
		/* labels are unique per table name: never two in one millisecond */
		if (SPI_execute_with_args("WITH t AS (SELECT date_trunc('milliseconds', greatest(clock_timestamp(), "
								  "(SELECT max(created) + interval '1 millisecond' FROM " INTERNAL_SCHEMA ".streams "
								  "WHERE table_name = $2))) AS created) "
								  "INSERT INTO " INTERNAL_SCHEMA ".streams (relid, table_name, label, view_type, "
								  "shards, key_schema, created, owner) "
								  "SELECT $1::regclass, $2, to_char(t.created AT TIME ZONE 'UTC', "
								  "'YYYY-MM-DD\"T\"HH24:MI:SS.MS'), $3, $4, $5::jsonb, t.created, $6::regrole FROM t",
								  6, argtypes, args, NULL, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not insert into " INTERNAL_SCHEMA ".streams");
		ddb_run_as_end(&save);
		/* the capture of SQL writes, as the table's owner */
		if (!ddb_upkeep_trigger_set(rel, STREAM_TRIGGER, true) &&
			SPI_execute(psprintf("CREATE TRIGGER " STREAM_TRIGGER " AFTER INSERT OR UPDATE OR DELETE "
								 "ON %s FOR EACH ROW EXECUTE FUNCTION %s()", qrel, fn),
						false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not create the stream trigger");
	}
	else
	{
		Oid			argtypes[1] = {INT4OID};
		Datum		args[1] = {Int32GetDatum(cur->stream_id)};

		ddb_run_as_begin(ddb_catalog_owner(), &save);
		if (SPI_execute_with_args("UPDATE " INTERNAL_SCHEMA ".streams SET disabled = now() "
								  "WHERE stream_id = $1", 1, argtypes, args, NULL, false, 0) != SPI_OK_UPDATE)
			elog(ERROR, "could not update " INTERNAL_SCHEMA ".streams");
		ddb_run_as_end(&save);
		(void) ddb_upkeep_trigger_set(rel, STREAM_TRIGGER, false);
	}
	SPI_finish();
	ddb_search_path_unpin(pinned);
	CacheInvalidateRelcache(rel);
	CommandCounterIncrement();
}

/*
 * DescribeTable's stream members: StreamSpecification while a stream is
 * enabled, LatestStreamArn and LatestStreamLabel once the table has had one.
 */
void
ddb_stream_describe(Relation rel, StringInfo buf, bool *first)
{
	const DdbStream *s = table_stream(RelationGetRelid(rel));

	if (s == NULL)
		return;
	if (s->enabled)
	{
		ddb_json_key(buf, first, "StreamSpecification");
		appendStringInfo(buf, "{\"StreamEnabled\":true,\"StreamViewType\":\"%s\"}",
						 view_names[s->view]);
	}
	ddb_json_key(buf, first, "LatestStreamLabel");
	ddb_json_cstring(buf, s->label);
	ddb_json_key(buf, first, "LatestStreamArn");
	ddb_json_cstring(buf, stream_arn(s));
}

/* ------------------------------------------------------------------------
 * Reading records (rules (2) and (3) of the header)
 * ------------------------------------------------------------------------
 */
typedef enum RecState
{
	REC_READY,					/* committed, visible: return it */
	REC_PENDING,				/* undecided for this snapshot: stop here */
	REC_ABORTED,				/* never committed: skip it */
	REC_TRIMMED					/* committed and removed by the sweep */
} RecState;

static RecState
record_state(TupleTableSlot *slot, Snapshot snap)
{
	BufferHeapTupleTableSlot *bslot = (BufferHeapTupleTableSlot *) slot;
	HeapTuple	tup = bslot->base.tuple;
	Buffer		buf = bslot->buffer;
	TransactionId xmin;
	bool		visible;
	RecState	state;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	xmin = HeapTupleHeaderGetXmin(tup->t_data);
	if (TransactionIdIsNormal(xmin) && TransactionIdIsCurrentTransactionId(xmin))
		state = REC_PENDING;	/* our own: not committed yet */
	else if ((visible = HeapTupleSatisfiesVisibility(tup, snap, buf)))
		state = REC_READY;
	else if (TransactionIdIsNormal(xmin) && XidInMVCCSnapshot(xmin, snap))
		state = REC_PENDING;	/* running, or committed after the snapshot */
	else if (!TransactionIdIsNormal(xmin) || TransactionIdDidCommit(xmin))
		state = REC_TRIMMED;	/* committed before the snapshot, yet deleted */
	else
		state = REC_ABORTED;
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	return state;
}

static void
stream_keys(ScanKey key, int32 stream_id, int shard)
{
	ScanKeyInit(&key[0], Anum_rec_stream_id, BTEqualStrategyNumber, F_INT4EQ,
				Int32GetDatum(stream_id));
	ScanKeyInit(&key[1], Anum_rec_shard, BTEqualStrategyNumber, F_INT2EQ,
				Int16GetDatum((int16) shard));
}

/* The highest number present in a shard's index, whatever its state (rule 2). */
static int64
shard_max(Relation rec, Relation idx, int32 stream_id, int shard)
{
	ScanKeyData key[2];
	IndexScanDesc scan;
	TupleTableSlot *slot = table_slot_create(rec, NULL);
	int64		m = 0;
	bool		isnull;

	stream_keys(key, stream_id, shard);
	scan = index_beginscan(rec, idx, SnapshotAny, 2, 0);
	index_rescan(scan, key, 2, NULL, 0);
	if (index_getnext_slot(scan, BackwardScanDirection, slot))
		m = DatumGetInt64(slot_getattr(slot, Anum_rec_seq, &isnull));
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	return m;
}

static void
trimmed_error(void)
{
	ddb_raise(DDB_ERRCODE_TRIMMED_DATA, "TrimmedDataAccessException",
			  DDB_MSG_STREAM_TRIMMED);
}

/*
 * The committed records of one shard numbered (after, upto], in order, at
 * most 'limit' of them and about max_bytes; stops at a pending record.
 * *safe is the number a reader may resume after: upto when the shard was
 * read to the end, else the last number decided.
 */
static List *
read_shard(Relation rec, Relation idx, Snapshot snap, int32 stream_id, int shard,
		   int64 after, int64 upto, int limit, int64 max_bytes, int64 *safe)
{
	ScanKeyData key[4];
	IndexScanDesc scan;
	TupleTableSlot *slot = table_slot_create(rec, NULL);
	List	   *out = NIL;
	int64		bytes = 0;

	*safe = upto;
	if (upto <= after)
	{
		*safe = after;
		ExecDropSingleTupleTableSlot(slot);
		return NIL;
	}
	stream_keys(key, stream_id, shard);
	ScanKeyInit(&key[2], Anum_rec_seq, BTGreaterStrategyNumber, F_INT8GT, Int64GetDatum(after));
	ScanKeyInit(&key[3], Anum_rec_seq, BTLessEqualStrategyNumber, F_INT8LE, Int64GetDatum(upto));
	scan = index_beginscan(rec, idx, SnapshotAny, 4, 0);
	index_rescan(scan, key, 4, NULL, 0);
	while (index_getnext_slot(scan, ForwardScanDirection, slot))
	{
		int64		seq;
		RecState	st;
		StreamRecord *r;

		CHECK_FOR_INTERRUPTS();
		slot_getallattrs(slot);
		seq = DatumGetInt64(slot->tts_values[Anum_rec_seq - 1]);
		st = record_state(slot, snap);
		if (st == REC_PENDING)
		{
			*safe = seq - 1;
			break;
		}
		if (st == REC_TRIMMED)
			trimmed_error();
		if (st == REC_ABORTED)
			continue;
		if (list_length(out) >= limit || bytes >= max_bytes)
		{
			*safe = ((StreamRecord *) llast(out))->seq;
			break;
		}
		r = palloc0(sizeof(StreamRecord));
		r->seq = seq;
		r->shard = shard;
		r->created = DatumGetTimestampTz(slot->tts_values[Anum_rec_created - 1]);
		r->event = DatumGetChar(slot->tts_values[Anum_rec_event - 1]);
		r->keys = DatumGetJsonbPCopy(slot->tts_values[Anum_rec_keys - 1]);
		if (!slot->tts_isnull[Anum_rec_new_image - 1])
			r->new_image = DatumGetJsonbPCopy(slot->tts_values[Anum_rec_new_image - 1]);
		if (!slot->tts_isnull[Anum_rec_old_image - 1])
			r->old_image = DatumGetJsonbPCopy(slot->tts_values[Anum_rec_old_image - 1]);
		r->size_bytes = DatumGetInt32(slot->tts_values[Anum_rec_size_bytes - 1]);
		r->service = DatumGetBool(slot->tts_values[Anum_rec_service - 1]);
		bytes += r->size_bytes;
		out = lappend(out, r);
	}
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	return out;
}

static int
record_cmp(const ListCell *a, const ListCell *b)
{
	int64		x = ((StreamRecord *) lfirst(a))->seq;
	int64		y = ((StreamRecord *) lfirst(b))->seq;

	return x < y ? -1 : x > y ? 1 : 0;
}

/*
 * The committed records of stream s after 'after': of one shard (shard >=
 * 0), or of all shards merged in number order (shard < 0).  *next is the
 * number to resume after.
 */
static List *
read_stream(const DdbStream *s, int shard, int64 after, int limit, int64 max_bytes,
			int64 *next)
{
	Relation	rec = table_open(internal_relid("stream_records"), AccessShareLock);
	Relation	idx = index_open(internal_relid("stream_records_pkey"), AccessShareLock);
	Snapshot	snap = GetActiveSnapshot();
	List	   *out = NIL;
	int64		upto = 0;
	int64		cutoff;

	if (after < trimmed_of(s, shard))
		trimmed_error();
	if (shard >= 0)
	{
		upto = shard_max(rec, idx, s->stream_id, shard);
		out = read_shard(rec, idx, snap, s->stream_id, shard, after, upto, limit, max_bytes,
						 next);
	}
	else
	{
		/* G: every shard probed before any is read */
		for (int i = 0; i < s->shards; i++)
			upto = Max(upto, shard_max(rec, idx, s->stream_id, i));
		cutoff = Max(upto, after);
		for (int i = 0; i < s->shards; i++)
		{
			int64		safe;

			out = list_concat(out, read_shard(rec, idx, snap, s->stream_id, i, after, upto,
											  limit, max_bytes, &safe));
			cutoff = Min(cutoff, safe);
		}
		list_sort(out, record_cmp);
		/* nothing past a position that may hide a lower number */
		while (out != NIL && ((StreamRecord *) llast(out))->seq > cutoff)
			out = list_delete_last(out);
		if (list_length(out) > limit)
		{
			out = list_truncate(out, limit);
			cutoff = ((StreamRecord *) llast(out))->seq;
		}
		*next = cutoff;
	}
	index_close(idx, AccessShareLock);
	table_close(rec, AccessShareLock);
	return out;
}

/*
 * A record as DynamoDB Streams' Record: images typed (the protocol) or in
 * document form (SQL).
 */
static void
record_json(StringInfo buf, const DdbStream *s, StreamRecord *r, bool typed)
{
	const char *names[3] = {"Keys", "NewImage", "OldImage"};
	Jsonb	   *docs[3] = {r->keys, r->new_image, r->old_image};

	appendStringInfo(buf, "{\"eventID\":\"%08x%024llx\",\"eventName\":\"%s\",\"eventVersion\":\"1.1\","
					 "\"eventSource\":\"aws:dynamodb\",\"awsRegion\":",
					 (unsigned) s->stream_id, (unsigned long long) r->seq, event_name(r->event));
	ddb_json_cstring(buf, ddb_region);
	appendStringInfo(buf, ",\"dynamodb\":{\"ApproximateCreationDateTime\":%lld",
					 (long long) (timestamptz_to_time_t(r->created)));
	for (int i = 0; i < 3; i++)
	{
		if (docs[i] == NULL)
			continue;
		appendStringInfo(buf, ",\"%s\":", names[i]);
		if (typed)
			ddb_json_write_jsonb_item(buf, docs[i]);
		else
			appendStringInfoString(buf, JsonbToCString(NULL, &docs[i]->root, VARSIZE(docs[i])));
	}
	appendStringInfo(buf, ",\"SequenceNumber\":\"%s\",\"SizeBytes\":%d,\"StreamViewType\":\"%s\"}",
					 seq_string(r->seq), r->size_bytes, view_names[s->view]);
	if (r->service)
		appendStringInfoString(buf, ",\"userIdentity\":{\"PrincipalId\":\"dynamodb.amazonaws.com\","
							   "\"Type\":\"Service\"}");
	appendStringInfoChar(buf, '}');
}

/*
 * "limit"/Limit: 1..max, DynamoDB's constraint messages, listed in e with
 * the request's other member errors.
 */
static void
check_limit(DdbValErrors *e, int64 limit, int64 max)
{
	if (limit < 1)
		ddb_valerr_add(e, psprintf("%lld", (long long) limit), "limit",
					   "Member must have value greater than or equal to 1");
	if (limit > max)
		ddb_valerr_add(e, psprintf("%lld", (long long) limit), "limit",
					   psprintf("Member must have value less than or equal to %lld", (long long) max));
}

static void
invalid_sequence_number(const char *s)
{
	ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
			  DDB_MSG_STREAM_INVALID_SEQUENCE, s);
}

static void
shard_not_found(const char *id)
{
	ddb_raise(DDB_ERRCODE_RESOURCE_NOT_FOUND, "ResourceNotFoundException",
			  DDB_MSG_STREAM_SHARD_NOT_FOUND, id);
}

/* Who may read a stream: SELECT on its table; a dropped table's, superusers. */
static void
check_read_privilege(const DdbStream *s)
{
	if (OidIsValid(s->relid) && SearchSysCacheExists1(RELOID, ObjectIdGetDatum(s->relid)))
	{
		Relation	rel = ddb_open_table(s->relid, ACL_SELECT);

		relation_close(rel, AccessShareLock);
	}
	else if (!may_read_stream(s))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for the stream of dropped table \"%s\"", s->table_name),
				 errdetail("The streams of dropped tables are read by their tables' owners and by superusers.")));
}

/* ------------------------------------------------------------------------
 * SQL functions
 * ------------------------------------------------------------------------
 */

/* ddb_update_stream(tbl, view_type): enable (a view type) or disable (NULL). */
Datum
ddb_update_stream(PG_FUNCTION_ARGS)
{
	Relation	rel;
	const DdbStream *s;
	StringInfoData buf;
	bool		first = true;

	if (PG_ARGISNULL(0))
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
				  DDB_MSG_REQUIRED_PARAMETER, "TableName");
	rel = ddb_table_open(text_to_cstring(PG_GETARG_TEXT_PP(0)), ACL_SELECT);
	ddb_stream_set(rel, PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1)));
	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	s = table_stream(RelationGetRelid(rel));
	if (s && !s->enabled)
	{
		ddb_json_key(&buf, &first, "StreamSpecification");
		appendStringInfoString(&buf, "{\"StreamEnabled\":false}");
	}
	ddb_stream_describe(rel, &buf, &first);
	appendStringInfoChar(&buf, '}');
	relation_close(rel, NoLock);
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data)));
}

/*
 * ddb_stream_records(tbl, shard, after_sequence_number, "limit"): the
 * committed records of the table's latest stream, in number order.
 */
Datum
ddb_stream_records(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	rel;
	const DdbStream *cached;
	DdbStream	s;
	int			shard = -1;
	int64		after = 0;
	int64		next;
	int64		limit = PG_ARGISNULL(3) ? DDB_STREAM_MAX_LIMIT : PG_GETARG_INT32(3);
	List	   *recs;
	ListCell   *lc;
	MemoryContext old;
	DdbValErrors e;

	if (PG_ARGISNULL(0))
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
				  DDB_MSG_REQUIRED_PARAMETER, "TableName");
	ddb_valerr_init(&e);
	check_limit(&e, limit, DDB_STREAM_MAX_LIMIT);
	ddb_valerr_raise(&e);
	rel = ddb_table_open(text_to_cstring(PG_GETARG_TEXT_PP(0)), ACL_SELECT);
	cached = table_stream(RelationGetRelid(rel));
	if (cached == NULL)
		ddb_raise(DDB_ERRCODE_RESOURCE_NOT_FOUND, "ResourceNotFoundException",
				  DDB_MSG_STREAM_TABLE_HAS_NONE, ddb_table_name(rel));
	s = *cached;
	if (!PG_ARGISNULL(1))
	{
		char	   *id = text_to_cstring(PG_GETARG_TEXT_PP(1));

		shard = parse_shard_id(&s, id);
		if (shard < 0)
			shard_not_found(id);
	}
	if (!PG_ARGISNULL(2))
	{
		char	   *a = text_to_cstring(PG_GETARG_TEXT_PP(2));

		if (!parse_seq(a, &after))
			invalid_sequence_number(a);
	}
	else
		after = trimmed_of(&s, shard);	/* from the oldest record kept */
	recs = read_stream(&s, shard, after, (int) limit, PG_INT64_MAX, &next);

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC | MAT_SRF_BLESS);
	foreach(lc, recs)
	{
		StringInfoData buf;
		Datum		value;
		bool		isnull = false;

		initStringInfo(&buf);
		record_json(&buf, &s, lfirst(lc), false);
		value = DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
		old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
		MemoryContextSwitchTo(old);
	}
	relation_close(rel, NoLock);
	return (Datum) 0;
}

/*
 * ddb_stream_sweep(): the retention sweep.  Per shard of every stream,
 * deletes the oldest records while they are older than ddb.stream_retention
 * (the index from the shard's start: cost proportional to what expires),
 * raises the stream's trimmed number, and forgets streams disabled for
 * longer than the retention whose records are gone.
 */
Datum
ddb_stream_sweep(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(ddb_stream_sweep_all());
}

/*
 * The sweep itself, for the SQL function and the background worker
 * (ddb_ttl_worker.c), in the caller's transaction.
 */
int64
ddb_stream_sweep_all(void)
{
	int64		removed = 0;
	bool		trimmed = false;
	DdbRunAs	save;
	TimestampTz cutoff;
	List	   *streams;
	ListCell   *lc;

	/* as the catalogs' owner: whoever was granted the function may sweep */
	ddb_run_as_begin(ddb_catalog_owner(), &save);
	streams = streams_query("SELECT " STREAM_COLUMNS " FROM " INTERNAL_SCHEMA ".streams",
							0, NULL, NULL, NULL);
	cutoff = GetCurrentTimestamp() - (TimestampTz) ddb_stream_retention * USECS_PER_SEC;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	foreach(lc, streams)
	{
		DdbStream  *st = lfirst(lc);
		int64		top = st->trimmed;
		bool		changed = false;

		for (int shard = 0; shard < st->shards; shard++)
		{
			Oid			types[3] = {INT4OID, INT2OID, TIMESTAMPTZOID};
			Datum		args[3];
			bool		isnull;

			CHECK_FOR_INTERRUPTS();
			args[0] = Int32GetDatum(st->stream_id);
			args[1] = Int16GetDatum((int16) shard);
			args[2] = TimestampTzGetDatum(cutoff);

			/*
			 * The first record to keep (the index from the shard's start),
			 * and everything before it, by index range: in one statement, so
			 * with one snapshot.  Found with one snapshot and deleted with a
			 * later one, a shard whose records the first did not see (none
			 * yet, or none young) had "nothing to keep", and the delete
			 * removed records that committed in between, however young.
			 * "created < $3" says the rule once more, whatever the snapshot.
			 */
			if (SPI_execute_with_args("WITH d AS (DELETE FROM " INTERNAL_SCHEMA ".stream_records "
									  "WHERE stream_id = $1 AND shard = $2 AND created < $3 "
									  "AND seq < coalesce((SELECT k.seq FROM " INTERNAL_SCHEMA ".stream_records k "
									  "WHERE k.stream_id = $1 AND k.shard = $2 AND k.created >= $3 "
									  "ORDER BY k.seq LIMIT 1), 9223372036854775807) "
									  "RETURNING seq) "
									  "SELECT count(*), max(seq) FROM d",
									  3, types, args, NULL, false, 0) != SPI_OK_SELECT)
				elog(ERROR, "could not delete stream records");
			removed += DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
			{
				Datum		m = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);

				if (!isnull && DatumGetInt64(m) > st->shard_trimmed[shard])
				{
					st->shard_trimmed[shard] = DatumGetInt64(m);
					top = Max(top, DatumGetInt64(m));
					changed = true;
				}
			}
		}
		if (changed)
		{
			Oid			types[3] = {INT4OID, INT8OID, INT8ARRAYOID};
			Datum		args[3];
			Datum	   *elems = palloc(sizeof(Datum) * st->shards);

			for (int shard = 0; shard < st->shards; shard++)
				elems[shard] = Int64GetDatum(st->shard_trimmed[shard]);
			args[0] = Int32GetDatum(st->stream_id);
			args[1] = Int64GetDatum(top);
			args[2] = PointerGetDatum(construct_array(elems, st->shards, INT8OID, sizeof(int64),
													  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
			trimmed = true;
			/* (only ever raised: a concurrent sweep may have raised others) */
			if (SPI_execute_with_args("UPDATE " INTERNAL_SCHEMA ".streams SET trimmed = greatest(trimmed, $2), "
									  "shard_trimmed = ARRAY(SELECT greatest(shard_trimmed[i], ($3::bigint[])[i]) "
									  "FROM generate_subscripts($3::bigint[], 1) i ORDER BY i) "
									  "WHERE stream_id = $1", 3, types, args, NULL, false, 0) != SPI_OK_UPDATE)
				elog(ERROR, "could not update " INTERNAL_SCHEMA ".streams");
		}
	}
	/* streams disabled for longer than the retention, once empty */
	if (SPI_execute_with_args("DELETE FROM " INTERNAL_SCHEMA ".streams s WHERE s.disabled < $1 "
							  "AND NOT EXISTS (SELECT FROM " INTERNAL_SCHEMA ".stream_records r "
							  "WHERE r.stream_id = s.stream_id)",
							  1, (Oid[]) {TIMESTAMPTZOID}, (Datum[]) {TimestampTzGetDatum(cutoff)},
							  NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not delete from " INTERNAL_SCHEMA ".streams");
	if (SPI_processed > 0)
		trimmed = true;
	SPI_finish();
	ddb_run_as_end(&save);
	/* readers cache the trimmed numbers */
	if (trimmed)
		CacheInvalidateRelcacheAll();
	return removed;
}

/* ------------------------------------------------------------------------
 * DynamoDB Streams' API (DynamoDBStreams_20120810): ListStreams,
 * DescribeStream, GetShardIterator, GetRecords, run by ddb_api_execute
 * ------------------------------------------------------------------------
 */
static const char *
req_string(DdbJson *req, const char *name)
{
	DdbJson    *j = ddb_json_member(req, name);

	if (j == NULL)
		return NULL;
	return ddb_json_member_cstring(j, name);
}

static bool
req_int(DdbJson *req, const char *name, int64 *v)
{
	DdbJson    *j = ddb_json_member(req, name);

	if (j == NULL)
		return false;
	/* (an int: ddb_json_check_number refuses what is not) */
	*v = (int64) ddb_json_check_number(j, "Integer");
	return true;
}

/* DynamoDB Streams' length constraint on a string member (absent: none) */
static void
check_length(DdbValErrors *e, const char *value, const char *member, int min, int max)
{
	int			len;

	if (value == NULL)
		return;
	len = strlen(value);
	if (len < min)
		ddb_valerr_add(e, value, member,
					   psprintf("Member must have length greater than or equal to %d", min));
	if (len > max)
		ddb_valerr_add(e, value, member,
					   psprintf("Member must have length less than or equal to %d", max));
}

/* A required member (DynamoDB Streams': null is a member constraint too) */
static void
required(DdbValErrors *e, const char *value, const char *member)
{
	if (value == NULL)
		ddb_valerr_add(e, NULL, member, "Member must not be null");
}

/* Is 'arn' shaped as a stream's ARN (...:table/<name>/stream/<label>)? */
static bool
stream_arn_well_formed(const char *arn)
{
	const char *slash = strstr(arn, "/stream/");
	const char *tab = strstr(arn, ":table/");

	return slash != NULL && tab != NULL && tab < slash;
}

/* The stream an ARN names (any state), or ResourceNotFoundException. */
static DdbStream *
stream_by_arn(const char *arn)
{
	const char *slash = arn ? strstr(arn, "/stream/") : NULL;
	const char *tab = arn ? strstr(arn, ":table/") : NULL;
	Oid			argtypes[2] = {TEXTOID, TEXTOID};
	Datum		args[2];
	List	   *l;
	DdbStream  *s = NULL;
	char	   *table;
	Oid			relid;

	if (arn == NULL || !stream_arn_well_formed(arn))
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", DDB_MSG_STREAM_INVALID_ARN);
	table = pnstrdup(tab + 7, slash - (tab + 7));

	/* the table's latest stream, from the cache: no SPI for a reader's polls */
	relid = ddb_table_lookup(table);
	if (OidIsValid(relid))
	{
		const DdbStream *cached = table_stream(relid);

		if (cached != NULL && strcmp(cached->label, slash + 8) == 0)
		{
			s = palloc(sizeof(DdbStream));
			*s = *cached;
		}
	}
	if (s != NULL)
	{
		if (strcmp(stream_arn(s), arn) != 0)
			stream_not_found(arn);	/* another region or account */
		check_read_privilege(s);
		return s;
	}

	/* an older stream, or a dropped table's */
	args[0] = CStringGetTextDatum(table);
	args[1] = CStringGetTextDatum(slash + 8);
	l = streams_query("SELECT " STREAM_COLUMNS " FROM " INTERNAL_SCHEMA ".streams "
					  "WHERE table_name = $1 AND label = $2", 2, argtypes, args, NULL);
	if (l == NIL)
		stream_not_found(arn);
	s = linitial(l);
	if (strcmp(stream_arn(s), arn) != 0)
		stream_not_found(arn);	/* another region or account */
	check_read_privilege(s);
	return s;
}

/* ListStreams {TableName, Limit 1..100, ExclusiveStartStreamArn} */
char *
ddb_op_list_streams(DdbJson *req, int *len)
{
	const char *table = req_string(req, "TableName");
	const char *start = req_string(req, "ExclusiveStartStreamArn");
	int64		limit = 100;
	StringInfoData buf;
	List	   *l;
	ListCell   *lc;
	int			n = 0;
	bool		started = (start == NULL);
	char	   *last = NULL;
	DdbValErrors e;

	ddb_valerr_init(&e);
	if (table != NULL)
		ddb_valerr_name(&e, table, "tableName");
	check_length(&e, start, "exclusiveStartStreamArn", 37, 1024);
	if (req_int(req, "Limit", &limit))
		check_limit(&e, limit, 100);
	ddb_valerr_raise(&e);
	/* a malformed start is an error, not an empty page */
	if (start != NULL && !stream_arn_well_formed(start))
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", DDB_MSG_STREAM_INVALID_ARN);
	if (table != NULL)
		relation_close(ddb_table_open(table, ACL_SELECT), AccessShareLock);
	l = streams_query("SELECT " STREAM_COLUMNS " FROM " INTERNAL_SCHEMA ".streams "
					  "WHERE $1::text IS NULL OR table_name = $1 ORDER BY table_name, label",
					  1, (Oid[]) {TEXTOID},
					  (Datum[]) {table ? CStringGetTextDatum(table) : (Datum) 0},
					  table ? " " : "n");
	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"Streams\":[");
	foreach(lc, l)
	{
		DdbStream  *s = lfirst(lc);
		char	   *arn = stream_arn(s);

		if (!started)
		{
			started = (strcmp(arn, start) == 0);
			continue;
		}
		/* only the streams of tables the caller may read */
		if (!may_read_stream(s))
			continue;
		if (n == limit)
			break;
		appendStringInfoString(&buf, n ? ",{\"StreamArn\":" : "{\"StreamArn\":");
		ddb_json_cstring(&buf, arn);
		appendStringInfoString(&buf, ",\"StreamLabel\":");
		ddb_json_cstring(&buf, s->label);
		appendStringInfoString(&buf, ",\"TableName\":");
		ddb_json_cstring(&buf, s->table_name);
		appendStringInfoChar(&buf, '}');
		last = arn;
		n++;
	}
	appendStringInfoChar(&buf, ']');
	if (n == limit && lc != NULL)
	{
		appendStringInfoString(&buf, ",\"LastEvaluatedStreamArn\":");
		ddb_json_cstring(&buf, last);
	}
	appendStringInfoChar(&buf, '}');
	*len = buf.len;
	return buf.data;
}

/* The lowest and highest numbers present in a shard (0, 0 when empty). */
static void
shard_range(const DdbStream *s, int shard, int64 *lo, int64 *hi)
{
	Relation	rec = table_open(internal_relid("stream_records"), AccessShareLock);
	Relation	idx = index_open(internal_relid("stream_records_pkey"), AccessShareLock);
	ScanKeyData key[2];
	IndexScanDesc scan;
	TupleTableSlot *slot = table_slot_create(rec, NULL);
	bool		isnull;

	*lo = 0;
	stream_keys(key, s->stream_id, shard);
	scan = index_beginscan(rec, idx, GetActiveSnapshot(), 2, 0);
	index_rescan(scan, key, 2, NULL, 0);
	if (index_getnext_slot(scan, ForwardScanDirection, slot))
		*lo = DatumGetInt64(slot_getattr(slot, Anum_rec_seq, &isnull));
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	*hi = shard_max(rec, idx, s->stream_id, shard);
	index_close(idx, AccessShareLock);
	table_close(rec, AccessShareLock);
}

/* DescribeStream {StreamArn, Limit 1..100, ExclusiveStartShardId} */
char *
ddb_op_describe_stream(DdbJson *req, int *len)
{
	const char *arn = req_string(req, "StreamArn");
	const char *start = req_string(req, "ExclusiveStartShardId");
	DdbJson    *filter = ddb_json_member(req, "ShardFilter");
	int64		limit = 100;
	DdbStream  *s;
	StringInfoData buf;
	int			first_shard = 0;
	int			n = 0;
	DdbValErrors e;

	ddb_valerr_init(&e);
	required(&e, arn, "streamArn");
	check_length(&e, arn, "streamArn", 37, 1024);
	check_length(&e, start, "exclusiveStartShardId", 28, 65);
	if (req_int(req, "Limit", &limit))
		check_limit(&e, limit, 100);
	if (filter != NULL)
	{
		DdbJson    *type;

		ddb_json_check_struct(filter, "ShardFilter");
		type = ddb_json_get(filter, "Type");
		if (type != NULL && type->type != DDB_JSON_NULL &&
			(type->type != DDB_JSON_STRING || strcmp(type->str, "CHILD_SHARDS") != 0))
			ddb_valerr_add(&e, type->type == DDB_JSON_STRING ? type->str : NULL,
						   "shardFilter.type", "Member must satisfy enum value set: [CHILD_SHARDS]");
	}
	ddb_valerr_raise(&e);
	s = stream_by_arn(arn);
	if (start != NULL)
	{
		int			k = parse_shard_id(s, start);

		first_shard = k < 0 ? s->shards : k + 1;
	}
	if (filter != NULL)
		first_shard = s->shards;	/* the children of a shard: ddb's never split */
	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"StreamDescription\":{\"StreamArn\":");
	ddb_json_cstring(&buf, arn);
	appendStringInfoString(&buf, ",\"StreamLabel\":");
	ddb_json_cstring(&buf, s->label);
	appendStringInfo(&buf, ",\"StreamStatus\":\"%s\",\"StreamViewType\":\"%s\","
					 "\"CreationRequestDateTime\":%s,\"TableName\":",
					 s->enabled ? "ENABLED" : "DISABLED", view_names[s->view], s->created);
	ddb_json_cstring(&buf, s->table_name);
	appendStringInfo(&buf, ",\"KeySchema\":%s,\"Shards\":[", s->key_schema);
	for (int i = first_shard; i < s->shards && n < limit; i++, n++)
	{
		int64		lo,
					hi;

		shard_range(s, i, &lo, &hi);
		appendStringInfoString(&buf, n ? ",{\"ShardId\":" : "{\"ShardId\":");
		ddb_json_cstring(&buf, shard_id(s, i));
		appendStringInfo(&buf, ",\"SequenceNumberRange\":{\"StartingSequenceNumber\":\"%s\"",
						 seq_string(lo ? lo : trimmed_of(s, i) + 1));
		/* (a closed shard without records ends where it starts) */
		if (!s->enabled)
			appendStringInfo(&buf, ",\"EndingSequenceNumber\":\"%s\"",
							 seq_string(Max(hi, trimmed_of(s, i) + 1)));
		appendStringInfoString(&buf, "}}");
	}
	appendStringInfoChar(&buf, ']');
	if (first_shard + n < s->shards)
	{
		appendStringInfoString(&buf, ",\"LastEvaluatedShardId\":");
		ddb_json_cstring(&buf, shard_id(s, first_shard + n - 1));
	}
	appendStringInfoString(&buf, "}}");
	*len = buf.len;
	return buf.data;
}

/*
 * Shard iterators: "<stream_id>:<shard>:<after>:<issued ms>:<ARN>|<tag>", a
 * position (read after this number) and its age, signed as a token below
 * (ddb_token_sign, with no purpose).  The ARN makes an iterator of a
 * dropped and re-created stream id fail as not found.  Signed, an iterator
 * is what GetShardIterator or GetRecords made, unedited, so that its issue
 * time bounds its life to DDB_ITERATOR_LIFETIME_MS as DynamoDB's does
 * (moving the time forward kept one alive for ever) and its position is
 * one the reader was given.  Every call still checks the reader's
 * privileges on the stream.
 *
 * Tokens: "<payload>|<tag>", the tag the first DDB_TOKEN_TAG_BYTES of the
 * HMAC-SHA256, in hex, of the database's OID, ':', then (for a purpose)
 * the purpose, ':', the length of the context, ':', the context, and last
 * the payload, under the database's key (ddb_internal.stream_iterator_key,
 * made at CREATE EXTENSION, readable only by its owner).  The context is
 * signed but not carried: a token opens only with the context it was made
 * with (PartiQL's NextToken: the statement and its parameters).  A shard
 * iterator has no purpose, so iterators signed before there were other
 * tokens still open; no other token can pass for one (its purpose comes
 * where an iterator's payload has its stream id, a number).
 */
#define DDB_TOKEN_TAG_BYTES	16

/*
 * The database's token key, read once per transaction (GetRecords checks
 * one iterator and signs the next).
 */
static bytea *
token_key(void)
{
	static bytea *key = NULL;
	static LocalTransactionId key_lxid = InvalidLocalTransactionId;
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;
	bool		isnull = true;

	if (key != NULL && key_lxid == MyProc->lxid)
		return key;
	rel = table_open(internal_relid("stream_iterator_key"), AccessShareLock);
	scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	tup = heap_getnext(scan, ForwardScanDirection);
	if (tup != NULL)
	{
		Datum		d = heap_getattr(tup, 1, RelationGetDescr(rel), &isnull);

		if (!isnull)
		{
			MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

			if (key != NULL)
				pfree(key);
			key = DatumGetByteaPCopy(d);
			key_lxid = MyProc->lxid;
			MemoryContextSwitchTo(old);
		}
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	if (isnull)
		elog(ERROR, "ddb's stream iterator key is missing");
	return key;
}

static void
token_tag(const char *purpose, const char *context, int contextlen,
		  const char *payload, int len, char *hex)
{
	bytea	   *key = token_key();
	pg_hmac_ctx *ctx;
	uint8		mac[PG_SHA256_DIGEST_LENGTH];
	/* a database made from a template shares its key, not its tokens */
	char	   *db = psprintf("%u:", MyDatabaseId);
	char	   *head = purpose ? psprintf("%s:%d:", purpose, contextlen) : "";

	ctx = pg_hmac_create(PG_SHA256);
	if (ctx == NULL ||
		pg_hmac_init(ctx, (const uint8 *) VARDATA_ANY(key), VARSIZE_ANY_EXHDR(key)) < 0 ||
		pg_hmac_update(ctx, (const uint8 *) db, strlen(db)) < 0 ||
		pg_hmac_update(ctx, (const uint8 *) head, strlen(head)) < 0 ||
		(purpose && pg_hmac_update(ctx, (const uint8 *) context, contextlen) < 0) ||
		pg_hmac_update(ctx, (const uint8 *) payload, len) < 0 ||
		pg_hmac_final(ctx, mac, sizeof(mac)) < 0)
		elog(ERROR, "could not compute HMAC-SHA256");
	pg_hmac_free(ctx);
	hex_encode((const char *) mac, DDB_TOKEN_TAG_BYTES, hex);
	hex[2 * DDB_TOKEN_TAG_BYTES] = '\0';
}

/*
 * "<payload>|<tag>": payload signed for purpose (NULL: a shard iterator)
 * and context (contextlen bytes; none without a purpose).
 */
char *
ddb_token_sign(const char *purpose, const char *context, int contextlen,
			   const char *payload)
{
	char		tag[2 * DDB_TOKEN_TAG_BYTES + 1];

	token_tag(purpose, context, contextlen, payload, strlen(payload), tag);
	return psprintf("%s|%s", payload, tag);
}

/*
 * The payload of token, or NULL when it carries no tag or one that is not
 * ddb_token_sign's for this purpose and context.
 */
char *
ddb_token_payload(const char *purpose, const char *context, int contextlen,
				  const char *token)
{
	const char *bar = strrchr(token, '|');
	char		tag[2 * DDB_TOKEN_TAG_BYTES + 1];

	if (bar == NULL || strlen(bar + 1) != 2 * DDB_TOKEN_TAG_BYTES)
		return NULL;
	token_tag(purpose, context, contextlen, token, bar - token, tag);
	if (timingsafe_bcmp(tag, bar + 1, 2 * DDB_TOKEN_TAG_BYTES) != 0)
		return NULL;
	return pnstrdup(token, bar - token);
}

static char *
make_iterator(const DdbStream *s, int shard, int64 after)
{
	return ddb_token_sign(NULL, NULL, 0,
						  psprintf("%d:%d:%lld:%lld:%s", s->stream_id, shard, (long long) after,
								   (long long) (GetCurrentTimestamp() / 1000), stream_arn(s)));
}

static void
invalid_iterator(void)
{
	ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", DDB_MSG_STREAM_INVALID_ITERATOR);
}

/* GetShardIterator {StreamArn, ShardId, ShardIteratorType, SequenceNumber} */
char *
ddb_op_get_shard_iterator(DdbJson *req, int *len)
{
	static const char *const types[] = {"TRIM_HORIZON", "LATEST", "AT_SEQUENCE_NUMBER",
	"AFTER_SEQUENCE_NUMBER"};
	const char *arn = req_string(req, "StreamArn");
	const char *sid = req_string(req, "ShardId");
	const char *type = req_string(req, "ShardIteratorType");
	const char *seqs = req_string(req, "SequenceNumber");
	DdbValErrors e;
	DdbStream  *s;
	int			shard;
	int			t = -1;
	int64		after = 0;
	StringInfoData buf;

	ddb_valerr_init(&e);
	if (arn == NULL)
		ddb_valerr_add(&e, NULL, "streamArn", "Member must not be null");
	if (sid == NULL)
		ddb_valerr_add(&e, NULL, "shardId", "Member must not be null");
	if (type == NULL)
		ddb_valerr_add(&e, NULL, "shardIteratorType", "Member must not be null");
	else
	{
		for (int i = 0; i < lengthof(types); i++)
			if (strcmp(type, types[i]) == 0)
				t = i;
		if (t < 0)
			ddb_valerr_add(&e, type, "shardIteratorType",
						   "Member must satisfy enum value set: [AFTER_SEQUENCE_NUMBER, LATEST, AT_SEQUENCE_NUMBER, TRIM_HORIZON]");
	}
	check_length(&e, arn, "streamArn", 37, 1024);
	check_length(&e, sid, "shardId", 28, 65);
	check_length(&e, seqs, "sequenceNumber", 21, 40);
	ddb_valerr_raise(&e);
	/* a position is given exactly when the type takes one */
	if (t < 2 && seqs != NULL)
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
				  DDB_MSG_STREAM_SEQUENCE_NOT_ALLOWED, type);
	s = stream_by_arn(arn);
	shard = parse_shard_id(s, sid);
	if (shard < 0)
		shard_not_found(sid);
	if (t >= 2)
	{
		if (seqs == NULL)
			ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
					  DDB_MSG_STREAM_SEQUENCE_REQUIRED, type);
		if (!parse_seq(seqs, &after))
			invalid_sequence_number(seqs);
		if (t == 2)
			after = after > 0 ? after - 1 : 0;
		if (after < trimmed_of(s, shard))
			trimmed_error();
	}
	else if (t == 0)
		after = trimmed_of(s, shard);	/* the oldest record kept */
	else
	{
		Relation	rec = table_open(internal_relid("stream_records"), AccessShareLock);
		Relation	idx = index_open(internal_relid("stream_records_pkey"), AccessShareLock);

		/* after the newest record present; see the README on LATEST */
		after = Max(shard_max(rec, idx, s->stream_id, shard), trimmed_of(s, shard));
		index_close(idx, AccessShareLock);
		table_close(rec, AccessShareLock);
	}
	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"ShardIterator\":");
	ddb_json_cstring(&buf, make_iterator(s, shard, after));
	appendStringInfoChar(&buf, '}');
	*len = buf.len;
	return buf.data;
}

/* GetRecords {ShardIterator, Limit 1..1000} */
char *
ddb_op_get_records(DdbJson *req, int *len)
{
	const char *it = req_string(req, "ShardIterator");
	int64		limit = DDB_STREAM_MAX_LIMIT;
	int			stream_id,
				shard,
				consumed = 0;
	long long	after,
				issued;
	DdbStream  *s;
	List	   *recs;
	ListCell   *lc;
	int64		next;
	int64		now_ms = GetCurrentTimestamp() / 1000;
	StringInfoData buf;
	bool		first = true;
	bool		closed = false;

	{
		DdbValErrors e;

		ddb_valerr_init(&e);
		required(&e, it, "shardIterator");
		check_length(&e, it, "shardIterator", 1, 2048);
		if (req_int(req, "Limit", &limit))
			check_limit(&e, limit, DDB_STREAM_MAX_LIMIT);
		ddb_valerr_raise(&e);
	}
	/*
	 * (A tagged iterator from the future would need the server's clock to
	 * have gone back: it would not expire for as long.)
	 */
	it = ddb_token_payload(NULL, NULL, 0, it);
	if (it == NULL ||
		sscanf(it, "%d:%d:%lld:%lld:%n", &stream_id, &shard, &after, &issued, &consumed) != 4 ||
		consumed == 0 || after < 0 || issued > now_ms + 60000 ||
		!stream_arn_well_formed(it + consumed))
		invalid_iterator();
	s = stream_by_arn(it + consumed);
	if (s->stream_id != stream_id || shard < 0 || shard >= s->shards)
		invalid_iterator();
	if (now_ms - issued > DDB_ITERATOR_LIFETIME_MS)
		ddb_raise(DDB_ERRCODE_EXPIRED_ITERATOR, "ExpiredIteratorException",
				  DDB_MSG_STREAM_EXPIRED_ITERATOR);
	recs = read_stream(s, shard, after, (int) limit, DDB_STREAM_MAX_BYTES, &next);

	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"Records\":[");
	foreach(lc, recs)
	{
		if (!first)
			appendStringInfoChar(&buf, ',');
		first = false;
		record_json(&buf, s, lfirst(lc), true);
	}
	appendStringInfoChar(&buf, ']');

	/*
	 * A disabled stream's shard is closed: once read to its end, no next
	 * iterator.  (No record is written to a disabled stream: disabling waits
	 * for every writer of the table.)
	 */
	if (!s->enabled && recs == NIL)
	{
		int64		lo,
					hi;

		shard_range(s, shard, &lo, &hi);
		closed = (next >= hi);
	}
	if (!closed)
	{
		appendStringInfoString(&buf, ",\"NextShardIterator\":");
		ddb_json_cstring(&buf, make_iterator(s, shard, next));
	}
	appendStringInfoChar(&buf, '}');
	*len = buf.len;
	return buf.data;
}
