/*-------------------------------------------------------------------------
 *
 * ddb_gsi.c
 *	  Global secondary indexes: catalog, creation and backfill, maintenance,
 *	  reading, verification.
 *
 * A GSI is an internal ddb table in schema ddb_internal whose key columns
 * are the index's partition key, its sort key (if any), then the base
 * table's key attributes not already among them, each column named as its
 * attribute; the jsonb column holds the projected non-key attributes.  The
 * base keys make every entry unique, so many items may share index keys as
 * in DynamoDB, and since the columns carry the attribute names, a row of the
 * index table read by ddb_tuple_to_item is exactly what a Query on the index
 * returns (index keys, table keys, projected attributes), and its key
 * attributes are the LastEvaluatedKey DynamoDB returns for an index.
 *
 * Kinds (ddb_internal.gsi.kind).  The same tables and maintenance serve
 * four kinds of index: G, a global secondary index; L, a local secondary
 * index, whose partition key is the table's, so its entries route like
 * the table's items and a Query reads one partition in the index's sort
 * order (made only with the table; reads of attributes it does not
 * project look the item up in the table, see ddb_query.c); T, the TTL
 * index (ddb_ttl.c): a constant partition ordered by the TTL attribute,
 * only items whose attribute is a number, KEYS_ONLY, so a sweep reads
 * exactly the expired entries; C, the item collection sizes of a table
 * with LSIs, one row per partition key, kept by collection_apply rather
 * than by entries.  T and C are internal: DescribeTable, Query and
 * ddb_drop_gsi do not see them; ddb_verify_gsi checks them too.
 *
 * Catalog: ddb_internal.gsi, one row per index, naming the base and index
 * tables by regclass.  It is an extension configuration table, so pg_dump
 * dumps its rows; they load after every table exists, so the regclass
 * values resolve to the restored tables.  The index tables are ordinary
 * ddb tables (dumped with their data) and the triggers ordinary triggers
 * (created after the data is loaded), so a restore needs no rebuild.
 *
 * Maintenance: for an item's old and new versions, each index's entry of
 * each (none when the item lacks an index key attribute: indexes are
 * sparse); unchanged entries are left alone, an entry whose key stayed but
 * whose projected attributes changed is updated in place, otherwise the old
 * entry is deleted and the new one inserted.  The writes go through the
 * engine (ddb_lock_current, ddb_update_version, ddb_delete_version,
 * ddb_insert_version with DDB_UNIQUE_ERROR) in the writing transaction, so
 * an index is strongly consistent with its table.  SQL writes (INSERT,
 * UPDATE, DELETE, COPY, MERGE) reach it through ddb_gsi_trigger, an AFTER
 * ROW trigger; the item API writes through the engine, which fires no
 * triggers, so ddb_api.c calls ddb_gsi_maintain itself.  An AFTER TRUNCATE
 * trigger truncates the index tables.
 *
 * Locks: ddb_create_gsi and ddb_drop_gsi take ShareRowExclusiveLock on the
 * base table: writers (RowExclusiveLock) wait until the index is built and
 * committed, readers do not, and two index changes on one table serialize.
 * The backfill reads with a snapshot taken after that lock, so it sees
 * every committed write.  Nothing takes more: the upkeep triggers are
 * disabled, not dropped, with the last index (ddb_upkeep_trigger_set).
 *
 * The per-backend list of a table's indexes is cached in a hash table and
 * dropped on the table's relcache invalidation, which ddb_create_gsi and
 * ddb_drop_gsi send.  It is loaded with a fresh snapshot so a transaction
 * that waited for an index's creation sees it even under REPEATABLE READ.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "access/genam.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "catalog/pg_type.h"
#include "catalog/pg_class.h"
#include "commands/trigger.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "ddb.h"
#include "model/ddb_expr.h"
#include "engine/ddb_page.h"
#include "api/ddb_json.h"
#include "api/ddb_ops.h"

PG_FUNCTION_INFO_V1(ddb_create_gsi);
PG_FUNCTION_INFO_V1(ddb_drop_gsi);
PG_FUNCTION_INFO_V1(ddb_verify_gsi);
PG_FUNCTION_INFO_V1(ddb_gsi_trigger);

/* DynamoDB's limit on NonKeyAttributes summed over a table's indexes */
#define DDB_MAX_PROJECTED_ATTRIBUTES	100

/* DynamoDB's default quota of GSIs per table */
#define DDB_MAX_GSI_PER_TABLE	20

/* a NOTICE every this many items backfilled */
#define DDB_GSI_PROGRESS_EVERY	100000

#define GSI_SCHEMA			"ddb_internal"
#define GSI_CATALOG			"ddb_internal.gsi"
#define GSI_ROW_TRIGGER		"ddb_gsi_maintain"
#define GSI_TRUNC_TRIGGER	"ddb_gsi_truncate"

typedef enum DdbProjType
{
	DDB_PROJ_ALL,
	DDB_PROJ_KEYS_ONLY,
	DDB_PROJ_INCLUDE
} DdbProjType;

static const char *const proj_names[] = {"ALL", "KEYS_ONLY", "INCLUDE"};

/* One index of a table, as the catalog describes it. */
typedef struct DdbGsi
{
	char	   *name;
	Oid			indexrelid;
	char	   *pk;
	DdbKeyType	pktype;
	char	   *sk;				/* NULL: no sort key */
	DdbKeyType	sktype;
	DdbProjType proj;
	int			nnonkey;
	char	  **nonkey;			/* INCLUDE's attributes */
	int64		violations;		/* items left out by the backfill */
	char		kind;			/* DDB_INDEX_GLOBAL, _LOCAL or _TTL */
	int64		read_capacity;	/* a global index's provisioned throughput */
	int64		write_capacity;
} DdbGsi;

/* The cached index list of one table. */
typedef struct GsiCacheEntry
{
	Oid			relid;			/* hash key */
	bool		valid;
	int			ngsi;
	DdbGsi	   *gsi;
	MemoryContext cxt;			/* holds gsi; NULL when ngsi = 0 */
} GsiCacheEntry;

static HTAB *gsi_cache = NULL;

/*
 * The entry of the last call: a write asks for its table's indexes three
 * times or more (ddb_index_any, ddb_gsi_maintain, ...), and a run of writes
 * to one table more.  Entries are never removed while they may be in use
 * (only a dropped table's, where no caller holds one: see
 * ddb_forget_tables) and dynahash never moves one, so the pointer
 * stays good; invalidation clears e->valid through the
 * hash table, on the same entry.
 */
static GsiCacheEntry *gsi_last = NULL;

/* One index entry of an item. */
typedef struct GsiEntry
{
	StringInfoData key;			/* encoded key in the index table */
	Datum	   *values;			/* the index row, by attribute number - 1 */
	bool	   *isnull;
	Jsonb	   *item;			/* the projected non-key attributes */
} GsiEntry;

/* ------------------------------------------------------------------------
 * The catalog and its cache
 * ------------------------------------------------------------------------
 */
static void
gsi_cache_invalidate(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS status;
	GsiCacheEntry *e;

	if (gsi_cache == NULL)
		return;
	if (OidIsValid(relid))
	{
		e = hash_search(gsi_cache, &relid, HASH_FIND, NULL);
		if (e)
			e->valid = false;
		return;
	}
	hash_seq_init(&status, gsi_cache);
	while ((e = hash_seq_search(&status)) != NULL)
		e->valid = false;
}

/* Forget the index lists of dropped tables (see ddb_forget_tables). */
static void
gsi_cache_forget(void *entry)
{
	GsiCacheEntry *e = (GsiCacheEntry *) entry;

	if (e->cxt)
		MemoryContextDelete(e->cxt);
	if (e == gsi_last)
		gsi_last = NULL;
}

int
ddb_gsi_cache_forget(bool (*gone) (Oid relid))
{
	return ddb_cache_forget(gsi_cache, gone, gsi_cache_forget);
}

static DdbKeyType
key_type_of(const char *t, const char *what)
{
	if (t != NULL && strcmp(t, "S") == 0)
		return DDB_KEY_S;
	if (t != NULL && strcmp(t, "N") == 0)
		return DDB_KEY_N;
	if (t != NULL && strcmp(t, "B") == 0)
		return DDB_KEY_B;
	ereport(ERROR,
			(errcode(DDB_ERRCODE_VALIDATION),
			 errmsg("ValidationException: %s type \"%s\" is not valid", what, t ? t : "(null)"),
			 errhint("Key types are S (string), N (number) and B (binary).")));
	return DDB_KEY_S;
}

/*
 * Read a table's indexes from the catalog into cxt.  A fresh snapshot: the
 * catalog as it is now, not as the transaction's snapshot saw it.
 */
static int
gsi_load(Oid relid, MemoryContext cxt, DdbGsi **out)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		args[1] = {ObjectIdGetDatum(relid)};
	int			n;
	DdbGsi	   *gsi = NULL;
	int			pinned;

	/* "base = $1" is regclass = oid: see ddb_search_path_pin */
	pinned = ddb_search_path_pin();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	PushActiveSnapshot(GetLatestSnapshot());
	if (SPI_execute_with_args("SELECT index_name, index_table::oid, partition_key, "
							  "partition_key_type::text, sort_key, sort_key_type::text, "
							  "projection, non_key_attributes, indexing_violations, kind, "
							  "read_capacity, write_capacity FROM " GSI_CATALOG
							  " WHERE base = $1 ORDER BY index_name",
							  1, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read %s", GSI_CATALOG);
	PopActiveSnapshot();
	n = SPI_processed;
	if (n > 0)
	{
		MemoryContext old = MemoryContextSwitchTo(cxt);

		gsi = palloc0(sizeof(DdbGsi) * n);
		for (int i = 0; i < n; i++)
		{
			HeapTuple	tup = SPI_tuptable->vals[i];
			TupleDesc	desc = SPI_tuptable->tupdesc;
			DdbGsi	   *g = &gsi[i];
			char	   *proj;
			bool		isnull;
			Datum		d;

			g->name = SPI_getvalue(tup, desc, 1);
			g->indexrelid = DatumGetObjectId(SPI_getbinval(tup, desc, 2, &isnull));
			g->pk = SPI_getvalue(tup, desc, 3);
			g->pktype = key_type_of(SPI_getvalue(tup, desc, 4), "partition key");
			g->sk = SPI_getvalue(tup, desc, 5);
			if (g->sk)
				g->sktype = key_type_of(SPI_getvalue(tup, desc, 6), "sort key");
			proj = SPI_getvalue(tup, desc, 7);
			g->proj = strcmp(proj, "KEYS_ONLY") == 0 ? DDB_PROJ_KEYS_ONLY :
				strcmp(proj, "INCLUDE") == 0 ? DDB_PROJ_INCLUDE : DDB_PROJ_ALL;
			g->violations = DatumGetInt64(SPI_getbinval(tup, desc, 9, &isnull));
			g->kind = DatumGetChar(SPI_getbinval(tup, desc, 10, &isnull));
			g->read_capacity = DatumGetInt64(SPI_getbinval(tup, desc, 11, &isnull));
			g->write_capacity = DatumGetInt64(SPI_getbinval(tup, desc, 12, &isnull));
			d = SPI_getbinval(tup, desc, 8, &isnull);
			if (!isnull)
			{
				Datum	   *elems;
				bool	   *nulls;

				deconstruct_array(DatumGetArrayTypeP(d), TEXTOID, -1, false,
								  TYPALIGN_INT, &elems, &nulls, &g->nnonkey);
				g->nonkey = palloc(sizeof(char *) * Max(g->nnonkey, 1));
				for (int j = 0; j < g->nnonkey; j++)
					g->nonkey[j] = TextDatumGetCString(elems[j]);
			}
		}
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	ddb_search_path_unpin(pinned);
	*out = gsi;
	return n;
}

/*
 * Does the active snapshot see the catalog row of index_table, an index of
 * relid?  The list of indexes comes from the catalog as it is now
 * (gsi_load), and an index created after the snapshot was taken has entries
 * the snapshot cannot see.
 */
static bool
gsi_in_snapshot(Oid relid, Oid index_table)
{
	Oid			argtypes[2] = {OIDOID, OIDOID};
	Datum		args[2] = {ObjectIdGetDatum(relid), ObjectIdGetDatum(index_table)};
	bool		found;
	int			pinned;

	/* "base = $1" is regclass = oid: see ddb_search_path_pin */
	pinned = ddb_search_path_pin();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* read-only: with the active snapshot, not a new one */
	if (SPI_execute_with_args("SELECT FROM " GSI_CATALOG " WHERE base = $1 AND index_table = $2",
							  2, argtypes, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read %s", GSI_CATALOG);
	found = SPI_processed > 0;
	SPI_finish();
	ddb_search_path_unpin(pinned);
	return found;
}

/* The indexes of a table, from the cache (valid until the next call). */
static int
gsi_list(Relation rel, DdbGsi **out)
{
	Oid			relid = RelationGetRelid(rel);
	GsiCacheEntry *e;
	bool		found;

	if (gsi_cache == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(GsiCacheEntry);
		ctl.hcxt = CacheMemoryContext;
		gsi_cache = hash_create("ddb gsi cache", 64, &ctl,
								HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		CacheRegisterRelcacheCallback(gsi_cache_invalidate, (Datum) 0);
	}
	if (gsi_last != NULL && gsi_last->relid == relid)
		e = gsi_last;
	else
	{
		e = hash_search(gsi_cache, &relid, HASH_ENTER, &found);
		if (!found)
		{
			e->valid = false;
			e->cxt = NULL;
			e->ngsi = 0;
		}
	}
	if (!e->valid)
	{
		MemoryContext cxt = AllocSetContextCreate(CacheMemoryContext, "ddb gsi list",
												  ALLOCSET_SMALL_SIZES);
		DdbGsi	   *gsi;
		int			n;

		PG_TRY();
		{
			n = gsi_load(relid, cxt, &gsi);
		}
		PG_CATCH();
		{
			MemoryContextDelete(cxt);
			PG_RE_THROW();
		}
		PG_END_TRY();
		/* the entry may have moved: look it up again */
		e = hash_search(gsi_cache, &relid, HASH_ENTER, &found);
		if (found && e->cxt)
			MemoryContextDelete(e->cxt);
		e->cxt = cxt;
		e->gsi = gsi;
		e->ngsi = n;
		e->valid = true;
	}
	gsi_last = e;
	*out = e->gsi;
	return e->ngsi;
}

/* How many indexes of a kind (DDB_INDEX_GLOBAL, ...) does this table have? */
int
ddb_index_count(Relation rel, char kind)
{
	DdbGsi	   *gsi;
	int			n = gsi_list(rel, &gsi);
	int			count = 0;

	for (int i = 0; i < n; i++)
		count += gsi[i].kind == kind;
	return count;
}

/*
 * The first index of a kind (the TTL index: the only one): its name,
 * index table, partition and sort key attributes (palloc'd copies; the
 * cache may be rebuilt by the next call).  False when there is none.
 */
bool
ddb_index_info(Relation rel, char kind, char **index_name, Oid *index_relid,
			   char **pk, char **sk)
{
	DdbGsi	   *gsi;
	int			n = gsi_list(rel, &gsi);

	for (int i = 0; i < n; i++)
	{
		if (gsi[i].kind != kind)
			continue;
		if (index_name)
			*index_name = pstrdup(gsi[i].name);
		if (index_relid)
			*index_relid = gsi[i].indexrelid;
		if (pk)
			*pk = pstrdup(gsi[i].pk);
		if (sk)
			*sk = gsi[i].sk ? pstrdup(gsi[i].sk) : NULL;
		return true;
	}
	return false;
}

/* The kind (DDB_INDEX_GLOBAL, DDB_INDEX_LOCAL, ...) of a table's named index; 0 if none. */
char
ddb_index_kind(Relation rel, const char *index_name)
{
	DdbGsi	   *gsi;
	int			n = gsi_list(rel, &gsi);

	for (int i = 0; i < n; i++)
		if (strcmp(gsi[i].name, index_name) == 0)
			return gsi[i].kind;
	return 0;
}

/*
 * Does ddb_gsi_maintain have anything to do on this table (an index of any
 * kind)?  A write that needs no old item for itself builds it only then.
 */
bool
ddb_index_any(Relation rel)
{
	DdbGsi	   *gsi;

	return gsi_list(rel, &gsi) > 0;
}

/* Does this table have global secondary indexes? */
bool
ddb_gsi_exists(Relation rel)
{
	return ddb_index_count(rel, DDB_INDEX_GLOBAL) > 0;
}

/*
 * The names of a table's global indexes, in name order (palloc'd copies;
 * the cache may be rebuilt by the next call).
 */
int
ddb_gsi_names(Relation rel, const char ***names)
{
	DdbGsi	   *gsi;
	int			n = gsi_list(rel, &gsi);
	int			count = 0;

	*names = palloc(sizeof(char *) * Max(n, 1));
	for (int i = 0; i < n; i++)
		if (gsi[i].kind == DDB_INDEX_GLOBAL)
			(*names)[count++] = pstrdup(gsi[i].name);
	return count;
}

/*
 * The key attributes of a table's secondary indexes, global and local, that
 * are not keys of the table, each once, index by index (palloc'd copies).
 */
int
ddb_index_key_names(Relation rel, const char ***names)
{
	DdbGsi	   *gsi;
	int			n = gsi_list(rel, &gsi);
	const DdbKeyInfo *ki = ddb_get_keyinfo(rel);
	int			count = 0;

	*names = palloc(sizeof(char *) * Max(2 * n, 1));
	for (int i = 0; i < n; i++)
	{
		if (gsi[i].kind != DDB_INDEX_GLOBAL && gsi[i].kind != DDB_INDEX_LOCAL)
			continue;
		for (int j = 0; j < (gsi[i].sk ? 2 : 1); j++)
		{
			const char *name = j == 0 ? gsi[i].pk : gsi[i].sk;
			bool		dup = false;

			for (int k = 0; k < ki->nkeys; k++)
				dup |= strcmp(ddb_key_name(rel, k), name) == 0;
			for (int k = 0; k < count; k++)
				dup |= strcmp((*names)[k], name) == 0;
			if (!dup)
				(*names)[count++] = pstrdup(name);
		}
	}
	return count;
}

static bool jbv_is_key_type(JsonbValue *v, DdbKeyType type, int *len);

/*
 * The SET, ADD or DELETE of an update that gives top-level attribute 'name'
 * a value whose type the request shows (*type; a DELETE's, its set's);
 * NULL when there is none.  from_item: instead, the SET whose value comes
 * from the item.
 */
static DdbUpdateAction *
update_action_on(DdbUpdate *upd, const char *name, bool from_item, DdbType *type)
{
	for (int i = 0; i < upd->nactions; i++)
	{
		DdbUpdateAction *a = &upd->actions[i];
		bool		known;

		if (a->path->nelems != 1 || strcmp(a->path->elems[0].name, name) != 0)
			continue;
		if (a->kind == DDB_UPDATE_SET)
			known = ddb_operand_request_type(a->value, type);
		else if (a->kind == DDB_UPDATE_ADD || a->kind == DDB_UPDATE_DELETE)
		{
			*type = a->value->value->type;
			known = true;
		}
		else
			continue;
		if (known != from_item)
			return a;
	}
	return NULL;
}

static DdbType
key_value_type(DdbKeyType t)
{
	return t == DDB_KEY_S ? DDB_TYPE_S : t == DDB_KEY_N ? DDB_TYPE_N : DDB_TYPE_B;
}

/*
 * Does an update SET a top-level attribute to a value from the item
 * (SET c = e, SET c = if_not_exists(x, e))?
 */
static bool
update_sets_from_item(DdbUpdate *upd)
{
	DdbType		type;

	for (int i = 0; i < upd->nactions; i++)
		if (upd->actions[i].kind == DDB_UPDATE_SET && upd->actions[i].path->nelems == 1 &&
			!ddb_operand_request_type(upd->actions[i].value, &type))
			return true;
	return false;
}

/*
 * The index keys an update gives a value of another type, index by index
 * as the table lists them, the partition key before the sort key.  item
 * NULL: the values whose type the request shows (SET k = :v, SET k = a +
 * :v, ADD k :v, DELETE k :set), DynamoDB's "Type mismatch for Index Key",
 * refused before the item is read.  Else the updated item's values taken
 * from the item (SET k = e), DynamoDB's "The update expression attempted to
 * update the secondary index key to unsupported type" (a TransactWriteItems
 * action's ValidationError reason).
 */
static void
check_update_index_keys(Relation rel, DdbUpdate *upd, Jsonb *item)
{
	DdbGsi	   *gsi;
	int			n = gsi_list(rel, &gsi);

	for (int i = 0; i < n; i++)
	{
		if (gsi[i].kind != DDB_INDEX_GLOBAL && gsi[i].kind != DDB_INDEX_LOCAL)
			continue;
		for (int j = 0; j < (gsi[i].sk ? 2 : 1); j++)
		{
			const char *name = j == 0 ? gsi[i].pk : gsi[i].sk;
			DdbKeyType	kt = j == 0 ? gsi[i].pktype : gsi[i].sktype;
			DdbType		type;
			JsonbValue *v;
			int			len;

			if (update_action_on(upd, name, item != NULL, &type) == NULL)
				continue;
			if (item == NULL && type != key_value_type(kt))
				ereport(ERROR,
						(errcode(DDB_ERRCODE_VALIDATION),
						 errmsg("ValidationException: One or more parameter values were invalid: Type mismatch for Index Key %s Expected: %s Actual: %s IndexName: %s",
								name, ddb_key_type_name(kt), ddb_type_name(type), gsi[i].name)));
			if (item == NULL)
				continue;
			v = getKeyJsonValueFromContainer(&item->root, name, strlen(name), NULL);
			if (v != NULL && !jbv_is_key_type(v, kt, &len))
				ereport(ERROR,
						(errcode(DDB_ERRCODE_VALIDATION),
						 errmsg("ValidationException: " DDB_MSG_UPDATE_INDEX_KEY_TYPE)));
		}
	}
}

/* An update's index key values of a type the request shows to be wrong. */
void
ddb_gsi_check_update_types(Relation rel, DdbUpdate *upd)
{
	check_update_index_keys(rel, upd, NULL);
}

/* An updated item's index key values, of the wrong type, from the item. */
void
ddb_gsi_check_update_values(Relation rel, DdbUpdate *upd, Jsonb *item)
{
	/* (most updates set nothing from the item: no index list to read) */
	if (item != NULL && update_sets_from_item(upd))
		check_update_index_keys(rel, upd, item);
}

/* A global index's provisioned throughput; false when there is no such index */
bool
ddb_gsi_throughput(Relation rel, const char *index_name, int64 *rcu, int64 *wcu)
{
	DdbGsi	   *gsi;
	int			n = gsi_list(rel, &gsi);

	for (int i = 0; i < n; i++)
		if (gsi[i].kind == DDB_INDEX_GLOBAL && strcmp(gsi[i].name, index_name) == 0)
		{
			*rcu = gsi[i].read_capacity;
			*wcu = gsi[i].write_capacity;
			return true;
		}
	return false;
}

static DdbGsi *
gsi_find(Relation rel, const char *name)
{
	DdbGsi	   *gsi;
	int			n = gsi_list(rel, &gsi);

	for (int i = 0; i < n; i++)
		if (strcmp(gsi[i].name, name) == 0)
			return &gsi[i];
	return NULL;
}

/* ------------------------------------------------------------------------
 * Index entries of an item
 * ------------------------------------------------------------------------
 */
static bool
is_key_column(Relation idx, const char *name, int len)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(idx);

	for (int k = 0; k < ki->nkeys; k++)
	{
		const char *kn = ddb_key_name(idx, k);

		if (strlen(kn) == len && memcmp(kn, name, len) == 0)
			return true;
	}
	return false;
}

static bool
is_projected(DdbGsi *g, const char *name, int len)
{
	if (g->proj == DDB_PROJ_ALL)
		return true;
	if (g->proj == DDB_PROJ_KEYS_ONLY)
		return false;
	for (int i = 0; i < g->nnonkey; i++)
		if (strlen(g->nonkey[i]) == len && memcmp(g->nonkey[i], name, len) == 0)
			return true;
	return false;
}

/*
 * While an index is backfilled, items whose index key has the wrong type,
 * is empty or is too long are left out and counted (DynamoDB's indexing
 * violations) instead of failing the creation: later writes of such
 * values are refused, existing ones are not the creator's request.  The verifier
 * reads them the same way: such an item has no entry.
 */
static bool gsi_lenient = false;
static bool gsi_violation = false;

/* A backfill leaves an item with a bad index key out, and counts it. */
static bool
gsi_leave_out(void)
{
	gsi_violation = true;
	return false;
}

/*
 * Is v a value of key type 'type'?  *len: its string's or binary's length
 * (1 for a number).
 */
static bool
jbv_is_key_type(JsonbValue *v, DdbKeyType type, int *len)
{
	*len = 1;
	switch (type)
	{
		case DDB_KEY_S:
			if (v->type != jbvString)
				return false;
			*len = v->val.string.len;
			return true;
		case DDB_KEY_N:
			return v->type == jbvNumeric;
		default:
			{
				JsonbValue *b64 = NULL;

				if (v->type == jbvBinary && JsonContainerIsObject(v->val.binary.data) &&
					JsonContainerSize(v->val.binary.data) == 1)
					b64 = getKeyJsonValueFromContainer(v->val.binary.data, "$B", 2, NULL);
				if (b64 == NULL || b64->type != jbvString)
					return false;
				*len = b64->val.string.len;
				return true;
			}
	}
}

/*
 * An index key attribute of an item: false when the item lacks it (no
 * entry), ValidationException when it has the wrong type or is empty
 * (while backfilling: false, and gsi_violation set).
 */
static bool
gsi_key_attr(DdbGsi *g, Jsonb *item, const char *name, DdbKeyType type)
{
	JsonbValue *v = getKeyJsonValueFromContainer(&item->root, name, strlen(name), NULL);
	bool		ok;
	int			len;

	if (v == NULL)
		return false;
	/* TTL ignores items whose attribute is no number, as DynamoDB does */
	if (g->kind == DDB_INDEX_TTL)
		return v->type == jbvNumeric;
	ok = jbv_is_key_type(v, type, &len);
	if ((!ok || len == 0) && gsi_lenient)
		return gsi_leave_out();
	if (!ok)
	{
		DdbValue   *dv = ddb_map_get(ddb_item_from_jsonb(item), name);
		const char *actual = dv ? ddb_type_name(dv->type) : "?";

		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: One or more parameter values were invalid: Type mismatch for Index Key %s Expected: %s Actual: %s IndexName: %s",
						name, ddb_key_type_name(type), actual, g->name)));
	}
	if (len == 0)
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty string value. IndexName: %s, IndexKey: %s",
						g->name, name)));
	return true;
}

/*
 * The entry of an item (an API item: keys included) in index g, stored in
 * idx.  False when the item has none.
 */
static bool
gsi_entry(DdbGsi *g, Relation idx, Jsonb *item, GsiEntry *e)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(idx);
	JsonbParseState *ps = NULL;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	bool		skip = false;

	if (item == NULL)
		return false;
	/* both key attributes are checked, so a bad one is reported either way */
	{
		bool		has_pk = g->kind == DDB_INDEX_TTL ||
			gsi_key_attr(g, item, g->pk, g->pktype);
		bool		has_sk = g->sk == NULL || gsi_key_attr(g, item, g->sk, g->sktype);

		if (!has_pk || !has_sk)
			return false;
	}

	e->values = palloc(sizeof(Datum) * ki->natts);
	e->isnull = palloc(sizeof(bool) * ki->natts);
	for (int a = 0; a < ki->natts; a++)
	{
		e->values[a] = (Datum) 0;
		e->isnull[a] = true;
	}
	for (int k = 0; k < ki->nkeys; k++)
	{
		const char *name = ddb_key_name(idx, k);
		JsonbValue *kv;
		int			a = ki->keyattno[k] - 1;

		if (k == 0 && g->kind == DDB_INDEX_TTL)
		{
			/* one partition holds every entry, in expiry order */
			e->values[a] = DirectFunctionCall1(int4_numeric, Int32GetDatum(0));
			e->isnull[a] = false;
			continue;
		}
		kv = getKeyJsonValueFromContainer(&item->root, name, strlen(name), NULL);
		if (kv == NULL)
			elog(ERROR, "ddb item lacks key attribute \"%s\"", name);
		e->values[a] = ddb_jbv_to_key(idx, ki->keytype[k], kv, name);
		e->isnull[a] = false;
		/* the index's own keys get DynamoDB's key value rules */
		if (strcmp(name, g->pk) == 0 || (g->sk && strcmp(name, g->sk) == 0))
		{
			bool		partition = strcmp(name, g->pk) == 0;
			int			len = ki->keytype[k] == DDB_KEY_N ? 0 :
				ddb_key_value_bytes(ki->keytype[k], e->values[a]);

			/*
			 * An index key over the size of a table key is DynamoDB's
			 * ValidationException, worded as for the table's keys; a
			 * backfill (gsi_lenient) leaves the item out of the index.
			 */
			if (len > (partition ? DDB_MAX_PARTITION_KEY_BYTES : DDB_MAX_SORT_KEY_BYTES))
			{
				if (gsi_lenient)
					return gsi_leave_out();
				ddb_raise_key_size(partition, name, g->name, len);
			}
			ddb_check_key_value(ki->keytype[k], e->values[a], partition, name);
		}
	}
	initStringInfo(&e->key);
	ddb_encode_key(ki, e->values, e->isnull, &e->key);
	if (e->key.len > DDB_MAX_KEY_LEN)
	{
		/*
		 * ddb's own limit (DynamoDB has none like it): a ValidationException,
		 * so that the endpoint answers 400 with this message; a backfill
		 * leaves the item out, as for DynamoDB's limits.
		 */
		if (gsi_lenient)
			return gsi_leave_out();
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: One or more parameter values were invalid: the key of index %s (its keys and the table's) encodes to %d bytes, over ddb's limit of %d",
						g->name, e->key.len, (int) DDB_MAX_KEY_LEN),
				 errhint("Use shorter key values for items in this index.")));
	}

	/* the projected non-key attributes */
	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	it = JsonbIteratorInit(&item->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			skip = is_key_column(idx, v.val.string.val, v.val.string.len) ||
				!is_projected(g, v.val.string.val, v.val.string.len);
			if (!skip)
				pushJsonbValue(&ps, WJB_KEY, &v);
		}
		else if (tok == WJB_VALUE && !skip)
			pushJsonbValue(&ps, WJB_VALUE, &v);
	}
	e->item = JsonbValueToJsonb(pushJsonbValue(&ps, WJB_END_OBJECT, NULL));
	e->values[ki->itemattno - 1] = JsonbPGetDatum(e->item);
	e->isnull[ki->itemattno - 1] = false;
	return true;
}

/* The stored tuple of an entry: key columns NULL (the key holds them). */
static HeapTuple
gsi_stored_tuple(Relation idx, GsiEntry *e)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(idx);
	bool	   *isnull = palloc(sizeof(bool) * ki->natts);

	memcpy(isnull, e->isnull, sizeof(bool) * ki->natts);
	for (int k = 0; k < ki->nkeys; k++)
		isnull[ki->keyattno[k] - 1] = true;
	return heap_form_tuple(RelationGetDescr(idx), e->values, isnull);
}

/*
 * Is an entry's item the same, byte for byte?  Not jsonb's equality, for
 * which 1.50 is 1.5: an item written before numbers were normalized keeps
 * its 1.50 until it is written again, and its entry must then follow the
 * base item's 1.5 (the copy is the item's, ddb_verify_gsi).  Items are
 * built the same way on both sides (gsi_entry), so equal values are equal
 * bytes; an entry is never rewritten for nothing.
 */
static bool
jsonb_same(Jsonb *a, Jsonb *b)
{
	return VARSIZE(a) == VARSIZE(b) && memcmp(a, b, VARSIZE(a)) == 0;
}

static void
entry_missing(DdbGsi *g)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg_internal("entry of global secondary index \"%s\" is missing", g->name),
			 errhint("Drop and recreate the index.")));
}

/*
 * The entry of an item's old version: built leniently, as a backfill
 * builds entries, so that an item the index left out (an indexing
 * violation: a key of the wrong type, empty or too long) has none, and can
 * still be updated or deleted.
 */
static bool
gsi_old_entry(DdbGsi *g, Relation idx, Jsonb *item, GsiEntry *e)
{
	bool		lenient = gsi_lenient;
	bool		violation = gsi_violation;
	volatile bool has = false;

	gsi_lenient = true;
	PG_TRY();
	{
		has = gsi_entry(g, idx, item, e);
	}
	PG_FINALLY();
	{
		gsi_lenient = lenient;
		gsi_violation = violation;
	}
	PG_END_TRY();
	return has;
}

/* Bring one index from an item's old version to its new one. */
static void
gsi_apply(DdbGsi *g, Relation idx, Jsonb *olditem, Jsonb *newitem, CommandId cid)
{
	GsiEntry	o,
				n;
	bool		has_old,
				has_new;
	ItemPointerData tid;
	HeapTuple	current;
	TM_FailureData tmfd;

	/* the new version first: its errors are the user's */
	has_new = gsi_entry(g, idx, newitem, &n);
	has_old = gsi_old_entry(g, idx, olditem, &o);
	if (!has_old && !has_new)
		return;

	if (has_old && has_new && o.key.len == n.key.len &&
		memcmp(o.key.data, n.key.data, o.key.len) == 0)
	{
		ItemPointerData newtid;

		if (jsonb_same(o.item, n.item))
			return;				/* nothing this index shows changed */
		if (!ddb_lock_current(idx, o.key.data, o.key.len, cid, &tid, &current))
			entry_missing(g);
		if (ddb_update_version(idx, &tid, gsi_stored_tuple(idx, &n), n.key.data, n.key.len,
							   cid, InvalidSnapshot, true, &tmfd, &newtid) != TM_Ok)
			elog(ERROR, "ddb index entry locked by this transaction changed");
		return;
	}
	if (has_old)
	{
		if (!ddb_lock_current(idx, o.key.data, o.key.len, cid, &tid, &current))
			entry_missing(g);
		if (ddb_delete_version(idx, &tid, cid, InvalidSnapshot, true, &tmfd, false) != TM_Ok)
			elog(ERROR, "ddb index entry locked by this transaction changed");
	}
	if (has_new)
		ddb_insert_version(idx, n.key.data, n.key.len, gsi_stored_tuple(idx, &n), cid,
						   DDB_UNIQUE_ERROR, &tid);
}

/* ------------------------------------------------------------------------
 * Item collections (tables with local secondary indexes)
 *
 * An item collection is the items of one partition key value plus their
 * entries in the table's local secondary indexes; DynamoDB limits it to
 * 10 GB.  Its size is kept in the table's collection index (kind
 * DDB_INDEX_COLLECTION, made with the first LSI): one row per partition
 * key, {"size": bytes}, bytes counted as DynamoDB sizes items (items and
 * LSI entries).  Each write adds its difference under the row's lock, in
 * the writing transaction, so the sum is exact and costs one point write,
 * not a scan of the collection; the price is that writers of one
 * collection serialize on that row until they commit.
 *
 * Lock order: a write locks its item, then its collection row.  A request
 * of several writes (TransactWriteItems, BatchWriteItem, a TTL sweep's
 * batch) locks its items in the order of their tables and keys, and
 * defers its collection changes
 * (ddb_collection_defer_begin/end) to the end, where it applies them in
 * the order of their collection tables and keys, once per collection: all
 * its items first, then all its collection rows.  Had each write taken its
 * collection row right after its item, two such requests, or one and a
 * single write, sharing a partition would each hold what the other wanted
 * next (A: item 1, the collection row, then item 3; B: item 3, then the
 * row) and deadlock.
 * ------------------------------------------------------------------------
 */
int			ddb_item_collection_limit_kb = 10 * 1024 * 1024;	/* 10 GB */

/* ddb.item_collection_size_limit; called by ddb_api_init */
void
ddb_gsi_init(void)
{
	DefineCustomIntVariable("ddb.item_collection_size_limit",
							"Largest item collection (a partition key's items and their local secondary index entries).",
							"DynamoDB's limit is 10 GB; lower it to test ItemCollectionSizeLimitExceededException.",
							&ddb_item_collection_limit_kb, 10 * 1024 * 1024, 1, INT_MAX,
							PGC_SUSET, GUC_UNIT_KB, NULL, NULL, NULL);
}

static int64 entry_bytes(Relation idx, GsiEntry *e);

/* What an item adds to its collection: itself and its LSI entries. */
static int64
collection_bytes(DdbGsi *gsi, int n, Jsonb *item)
{
	int64		size;

	if (item == NULL)
		return 0;
	size = ddb_item_size(ddb_item_from_jsonb(item));
	for (int i = 0; i < n; i++)
	{
		Relation	idx;
		GsiEntry	e;

		if (gsi[i].kind != DDB_INDEX_LOCAL)
			continue;
		idx = try_relation_open(gsi[i].indexrelid, AccessShareLock);
		if (idx == NULL)
			continue;
		if (gsi_entry(&gsi[i], idx, item, &e))
			size += entry_bytes(idx, &e);
		relation_close(idx, AccessShareLock);
	}
	return size;
}

/* The encoded key of an item's collection row (its partition key). */
static void
collection_key(Relation cidx, Jsonb *item, StringInfo key)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(cidx);
	const char *name = ddb_key_name(cidx, 0);
	JsonbValue *v = getKeyJsonValueFromContainer(&item->root, name, strlen(name), NULL);
	Datum	   *values = palloc0(sizeof(Datum) * ki->natts);
	bool	   *isnull = palloc(sizeof(bool) * ki->natts);

	if (v == NULL)
		elog(ERROR, "ddb item lacks key attribute \"%s\"", name);
	for (int a = 0; a < ki->natts; a++)
		isnull[a] = true;
	values[ki->keyattno[0] - 1] = ddb_jbv_to_key(cidx, ki->keytype[0], v, name);
	isnull[ki->keyattno[0] - 1] = false;
	initStringInfo(key);
	ddb_encode_key(ki, values, isnull, key);
}

/* The size a collection row holds. */
static int64
collection_row_size(Relation cidx, HeapTuple tuple)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(cidx);
	bool		isnull;
	Datum		d = heap_getattr(tuple, ki->itemattno, RelationGetDescr(cidx), &isnull);
	JsonbValue *v;

	if (isnull)
		return 0;
	v = getKeyJsonValueFromContainer(&DatumGetJsonbP(d)->root, "size", 4, NULL);
	if (v == NULL || v->type != jbvNumeric)
		return 0;
	return DatumGetInt64(DirectFunctionCall1(numeric_int8, NumericGetDatum(v->val.numeric)));
}

/* A collection row's stored tuple: the key in the encoded key, the size. */
static HeapTuple
collection_row(Relation cidx, int64 size)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(cidx);
	Datum	   *values = palloc0(sizeof(Datum) * ki->natts);
	bool	   *isnull = palloc(sizeof(bool) * ki->natts);
	char		buf[64];

	for (int a = 0; a < ki->natts; a++)
		isnull[a] = true;
	snprintf(buf, sizeof(buf), "{\"size\": " INT64_FORMAT "}", size);
	values[ki->itemattno - 1] = DirectFunctionCall1(jsonb_in, CStringGetDatum(buf));
	isnull[ki->itemattno - 1] = false;
	return heap_form_tuple(RelationGetDescr(cidx), values, isnull);
}

/* A collection change deferred to the end of a request (see above). */
typedef struct DeferredDelta
{
	Oid			indexrelid;
	char	   *key;
	int			keylen;
	int64		delta;
} DeferredDelta;

#define DDB_DEFER_MAX_DEPTH 8
static int	defer_depth = 0;
static List *deferred = NIL;	/* of DeferredDelta, in TopTransactionContext */
static int	defer_floor[DDB_DEFER_MAX_DEPTH];	/* each level's mark */

static void collection_add(Relation cidx, const char *key, int keylen, int64 delta);

/*
 * The collection whose growth last raised ItemCollectionSizeLimitExceeded
 * (its "$collections" table and key, in TopTransactionContext): a
 * transaction names the actions that wrote it (ddb_collection_overflowed).
 * The outermost ddb_collection_defer_begin forgets it.
 */
static Oid	overflow_relid = InvalidOid;
static char *overflow_key = NULL;
static int	overflow_keylen = 0;
static void collection_add_by_oid(Oid indexrelid, const char *key, int keylen, int64 delta);

/*
 * Collect collection changes from here until the matching
 * ddb_collection_defer_end, instead of applying each at its write.
 * Returns the mark to hand to it.
 */
int
ddb_collection_defer_begin(void)
{
	if (defer_depth >= DDB_DEFER_MAX_DEPTH)
		elog(ERROR, "collection changes deferred %d levels deep", defer_depth);
	if (defer_depth == 0)
	{
		deferred = NIL;			/* (a list of an ended transaction is gone) */
		overflow_relid = InvalidOid;	/* (and so is its overflow's key) */
	}
	defer_floor[defer_depth] = list_length(deferred);
	return defer_floor[defer_depth++];
}

static int
deferred_cmp(const DeferredDelta *x, const DeferredDelta *y)
{
	if (x->indexrelid != y->indexrelid)
		return x->indexrelid < y->indexrelid ? -1 : 1;
	return ddb_compare_bytes(x->key, x->keylen, y->key, y->keylen);
}

static int
deferred_cell_cmp(const ListCell *a, const ListCell *b)
{
	return deferred_cmp(lfirst(a), lfirst(b));
}

/*
 * Whether ending the ddb_collection_defer_begin that returned 'mark' with
 * apply true would write collection rows (so could raise
 * ItemCollectionSizeLimitExceeded): it is the outermost, and changes were
 * collected.
 */
bool
ddb_collection_defer_pending(int mark)
{
	Assert(defer_depth > 0 && defer_floor[defer_depth - 1] == mark);
	return defer_depth == 1 && list_length(deferred) > 0;
}

/*
 * End the ddb_collection_defer_begin that returned 'mark'.  apply false
 * (the request failed and its writes are rolled back, or it raised an
 * error): the changes it collected are dropped.  apply true: the outermost
 * end applies every change collected, summed per collection, in the order
 * of their collection tables and keys.  Error paths must call it.
 */
void
ddb_collection_defer_end(int mark, bool apply)
{
	List	   *todo;
	DeferredDelta *prev = NULL;
	ListCell   *lc;

	bool		wrote = false;

	Assert(defer_depth > 0 && defer_floor[defer_depth - 1] == mark);
	if (!apply)
		deferred = list_truncate(deferred, mark);
	if (--defer_depth > 0)
		return;
	todo = deferred;
	deferred = NIL;
	list_sort(todo, deferred_cell_cmp);
	foreach(lc, todo)
	{
		DeferredDelta *d = lfirst(lc);

		if (prev != NULL && deferred_cmp(prev, d) == 0)
		{
			prev->delta += d->delta;
			continue;
		}
		if (prev != NULL && prev->delta != 0)
		{
			collection_add_by_oid(prev->indexrelid, prev->key, prev->keylen, prev->delta);
			wrote = true;
		}
		prev = d;
	}
	if (prev != NULL && prev->delta != 0)
	{
		collection_add_by_oid(prev->indexrelid, prev->key, prev->keylen, prev->delta);
		wrote = true;
	}
	list_free(todo);

	/*
	 * collection_add increments the command counter before its write, not
	 * after, as each write core does at its end: without this the last row
	 * written stayed invisible to ItemCollectionMetrics' read
	 * (ddb_item_collection_size, GetLatestSnapshot) in the same command.
	 * Only after a write: on an error path (apply false) nothing was
	 * written, and the increment could itself fail there.
	 */
	if (wrote)
		CommandCounterIncrement();
}

/*
 * Add a write's difference to its collection's size (at once, or at the
 * end of a deferring request); a write that grows a collection past
 * ddb.item_collection_size_limit fails with
 * ItemCollectionSizeLimitExceededException (and, being in the writing
 * transaction, writes nothing).
 *
 * Unlike an index entry, a collection row is shared by all the items of a
 * partition, and one command may write several of them: a multi-row
 * INSERT, COPY, a BatchWriteItem.  A version made at the current command
 * id cannot be locked by a write at that id (ddb_lock_current), so each
 * change of the row is its own command: the counter is advanced first and
 * the row is read and written at the new id.  The earlier changes are then
 * visible to it, and the statement's own snapshot, which keeps its command
 * id, sees none of them, as with a volatile function's writes.
 */
static void
collection_apply(DdbGsi *c, DdbGsi *gsi, int n, Jsonb *olditem, Jsonb *newitem)
{
	int64		delta = collection_bytes(gsi, n, newitem) - collection_bytes(gsi, n, olditem);
	Relation	cidx;
	StringInfoData key;

	if (delta == 0)
		return;
	cidx = try_relation_open(c->indexrelid, RowExclusiveLock);
	if (cidx == NULL)
		return;
	collection_key(cidx, newitem ? newitem : olditem, &key);
	if (defer_depth > 0)
	{
		MemoryContext old;
		DeferredDelta *d;

		/*
		 * The same collection as the change before, in this level's part of
		 * the list (a failed level drops only its own part): added to it.
		 * Writers in key order (a TTL sweep of a whole table) meet each
		 * collection's changes one after another, so the list grows with
		 * the partitions written, not the items.
		 */
		if (list_length(deferred) > defer_floor[defer_depth - 1])
		{
			d = llast(deferred);
			if (d->indexrelid == c->indexrelid &&
				ddb_compare_bytes(d->key, d->keylen, key.data, key.len) == 0)
			{
				d->delta += delta;
				relation_close(cidx, NoLock);
				return;
			}
		}
		old = MemoryContextSwitchTo(TopTransactionContext);
		d = palloc(sizeof(DeferredDelta));
		d->indexrelid = c->indexrelid;
		d->key = palloc(key.len);	/* (binary: pnstrdup stops at a zero) */
		memcpy(d->key, key.data, key.len);
		d->keylen = key.len;
		d->delta = delta;
		deferred = lappend(deferred, d);
		MemoryContextSwitchTo(old);
	}
	else
		collection_add(cidx, key.data, key.len, delta);
	relation_close(cidx, NoLock);
}

/* collection_add for a deferred change: its table may be gone since */
static void
collection_add_by_oid(Oid indexrelid, const char *key, int keylen, int64 delta)
{
	Relation	cidx = try_relation_open(indexrelid, RowExclusiveLock);

	if (cidx == NULL)
		return;
	collection_add(cidx, key, keylen, delta);
	relation_close(cidx, NoLock);
}

/* Add 'delta' to the size in the collection row of 'key' (cidx open). */
static void
collection_add(Relation cidx, const char *key, int keylen, int64 delta)
{
	CommandId	cid;

	CommandCounterIncrement();
	cid = GetCurrentCommandId(true);
	for (;;)
	{
		ItemPointerData tid;
		ItemPointerData newtid;
		HeapTuple	current;
		TM_FailureData tmfd;
		bool		exists = ddb_lock_current(cidx, key, keylen, cid, &tid, &current);
		int64		size = (exists ? collection_row_size(cidx, current) : 0) + delta;

		if (size < 0)
			size = 0;
		if (delta > 0 && size > (int64) ddb_item_collection_limit_kb * 1024)
		{
			/* which collection, for a transaction's cancellation reasons */
			MemoryContext old = MemoryContextSwitchTo(TopTransactionContext);

			overflow_relid = RelationGetRelid(cidx);
			overflow_key = palloc(Max(keylen, 1));
			memcpy(overflow_key, key, keylen);
			overflow_keylen = keylen;
			MemoryContextSwitchTo(old);
			ereport(ERROR,
					(errcode(DDB_ERRCODE_ITEM_COLLECTION_SIZE),
					 errmsg("ItemCollectionSizeLimitExceededException: " DDB_MSG_COLLECTION_SIZE),
					 errdetail("The write would make the item collection of its partition key " INT64_FORMAT " bytes (the items and their local secondary index entries); the limit is %d kB.",
							   size, ddb_item_collection_limit_kb),
					 errhint("Spread the items over more partition key values (DynamoDB's limit is 10 GB, ddb.item_collection_size_limit).")));
		}
		if (exists)
		{
			if (ddb_update_version(cidx, &tid, collection_row(cidx, size), key, keylen,
								   cid, InvalidSnapshot, true, &tmfd, &newtid) != TM_Ok)
				elog(ERROR, "ddb item collection row locked by this transaction changed");
			break;
		}
		if (ddb_insert_version(cidx, key, keylen, collection_row(cidx, size), cid,
							   DDB_UNIQUE_RETURN, &newtid))
			break;
		/* a concurrent writer made the row first: add to it */
	}
}

/*
 * ReturnItemCollectionMetrics: the size of the collection of item's
 * partition key as this transaction sees it now, or -1 when the table has
 * no local secondary index.
 */
int64
ddb_item_collection_size(Relation rel, Jsonb *item)
{
	Oid			cidxoid;
	Relation	cidx;
	StringInfoData key;
	HeapTuple	tuple;
	int64		size;

	if (item == NULL || !ddb_index_info(rel, DDB_INDEX_COLLECTION, NULL, &cidxoid, NULL, NULL))
		return -1;
	cidx = try_relation_open(cidxoid, AccessShareLock);
	if (cidx == NULL)
		return -1;
	collection_key(cidx, item, &key);
	/* a fresh snapshot: this command's own write included */
	tuple = ddb_lookup(cidx, GetLatestSnapshot(), key.data, key.len);
	size = tuple ? collection_row_size(cidx, tuple) : 0;
	relation_close(cidx, AccessShareLock);
	return size;
}

/*
 * Whether item (or key) belongs to the collection whose growth raised the
 * last ItemCollectionSizeLimitExceeded since the outermost
 * ddb_collection_defer_begin.
 */
bool
ddb_collection_overflowed(Relation rel, Jsonb *item)
{
	Oid			cidxoid;
	Relation	cidx;
	StringInfoData key;
	bool		same;

	if (!OidIsValid(overflow_relid) || item == NULL ||
		!ddb_index_info(rel, DDB_INDEX_COLLECTION, NULL, &cidxoid, NULL, NULL) ||
		cidxoid != overflow_relid)
		return false;
	cidx = try_relation_open(cidxoid, AccessShareLock);
	if (cidx == NULL)
		return false;
	collection_key(cidx, item, &key);
	same = ddb_compare_bytes(key.data, key.len, overflow_key, overflow_keylen) == 0;
	relation_close(cidx, AccessShareLock);
	return same;
}

/*
 * Bring every index of rel from an item's old version to its new one (API
 * items, keys included; NULL for none).  Runs in a short-lived context.
 */
void
ddb_gsi_maintain(Relation rel, Jsonb *olditem, Jsonb *newitem)
{
	DdbGsi	   *list;
	int			n = gsi_list(rel, &list);
	DdbGsi	   *gsi;
	MemoryContext cxt,
				old;
	CommandId	cid;

	if (n == 0)
		return;
	cxt = AllocSetContextCreate(CurrentMemoryContext, "ddb gsi maintenance",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	/* a private copy: opening index tables may invalidate the cache */
	gsi = palloc(sizeof(DdbGsi) * n);
	memcpy(gsi, list, sizeof(DdbGsi) * n);
	for (int i = 0; i < n; i++)
	{
		gsi[i].name = pstrdup(gsi[i].name);
		gsi[i].pk = pstrdup(gsi[i].pk);
		gsi[i].sk = gsi[i].sk ? pstrdup(gsi[i].sk) : NULL;
		if (gsi[i].nnonkey > 0)
		{
			char	  **nk = palloc(sizeof(char *) * gsi[i].nnonkey);

			for (int j = 0; j < gsi[i].nnonkey; j++)
				nk[j] = pstrdup(gsi[i].nonkey[j]);
			gsi[i].nonkey = nk;
		}
	}
	cid = GetCurrentCommandId(true);
	for (int i = 0; i < n; i++)
	{
		Relation	idx;

		if (gsi[i].kind == DDB_INDEX_COLLECTION)
			continue;			/* after the entries, whose sizes it sums */
		idx = try_relation_open(gsi[i].indexrelid, RowExclusiveLock);
		if (idx == NULL)
			continue;			/* dropped by hand: the catalog row goes too */
		gsi_apply(&gsi[i], idx, olditem, newitem, cid);
		relation_close(idx, NoLock);
	}
	for (int i = 0; i < n; i++)
		if (gsi[i].kind == DDB_INDEX_COLLECTION)
			collection_apply(&gsi[i], gsi, n, olditem, newitem);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
}

/* ------------------------------------------------------------------------
 * The trigger
 * ------------------------------------------------------------------------
 */

/* Run SQL as the owner of a relation (the index tables' maintenance). */
static void
exec_as_owner(Oid relid, const char *sql, int expect)
{
	DdbRunAs	save;
	HeapTuple	tp = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tp))
		return;
	owner = ((Form_pg_class) GETSTRUCT(tp))->relowner;
	ReleaseSysCache(tp);
	ddb_run_as_begin(owner, &save);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute(sql, false, 0) != expect)
		elog(ERROR, "SPI_execute failed: %s", sql);
	SPI_finish();
	ddb_run_as_end(&save);
}

/*
 * ddb_gsi_trigger: AFTER INSERT OR UPDATE OR DELETE FOR EACH ROW keeps the
 * indexes of SQL writes; AFTER TRUNCATE FOR EACH STATEMENT empties them.
 */
Datum
ddb_gsi_trigger(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	Relation	rel;
	Jsonb	   *olditem = NULL;
	Jsonb	   *newitem = NULL;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_AFTER(td->tg_event))
		elog(ERROR, "ddb_gsi_trigger must be an AFTER trigger");
	rel = td->tg_relation;
	if (!ddb_is_ddb_relation(rel))
		elog(ERROR, "ddb_gsi_trigger is for ddb tables");

	if (TRIGGER_FIRED_BY_TRUNCATE(td->tg_event))
	{
		DdbGsi	   *list;
		int			n = gsi_list(rel, &list);
		List	   *sqls = NIL;
		List	   *oids = NIL;
		ListCell   *lc,
				   *lo;

		for (int i = 0; i < n; i++)
		{
			char	   *name = get_rel_name(list[i].indexrelid);

			if (name == NULL)
				continue;
			sqls = lappend(sqls, psprintf("TRUNCATE %s.%s", GSI_SCHEMA, quote_identifier(name)));
			oids = lappend_oid(oids, list[i].indexrelid);
		}
		forboth(lc, sqls, lo, oids)
			exec_as_owner(lfirst_oid(lo), lfirst(lc), SPI_OK_UTILITY);
		return PointerGetDatum(NULL);
	}
	if (!TRIGGER_FIRED_FOR_ROW(td->tg_event))
		elog(ERROR, "ddb_gsi_trigger must be a row trigger for INSERT, UPDATE and DELETE");

	if (TRIGGER_FIRED_BY_INSERT(td->tg_event))
		newitem = ddb_tuple_to_item(rel, ExecFetchSlotHeapTuple(td->tg_trigslot, false, NULL));
	else if (TRIGGER_FIRED_BY_DELETE(td->tg_event))
		olditem = ddb_tuple_to_item(rel, ExecFetchSlotHeapTuple(td->tg_trigslot, false, NULL));
	else
	{
		olditem = ddb_tuple_to_item(rel, ExecFetchSlotHeapTuple(td->tg_trigslot, false, NULL));
		newitem = ddb_tuple_to_item(rel, ExecFetchSlotHeapTuple(td->tg_newslot, false, NULL));
	}
	ddb_gsi_maintain(rel, olditem, newitem);
	return PointerGetDatum(NULL);
}

/* ------------------------------------------------------------------------
 * CreateGlobalSecondaryIndex / DeleteGlobalSecondaryIndex
 * ------------------------------------------------------------------------
 */
static void
check_attr_name(const char *name, const char *what)
{
	if (name == NULL || strlen(name) < 1 || strlen(name) > 255)
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: %s must be between 1 and 255 characters long", what)));
}


/* An attribute keyed with two types by the table and its indexes. */
static void
attribute_redefined(const char *name, DdbKeyType was, DdbKeyType now)
{
	ereport(ERROR,
			(errcode(DDB_ERRCODE_VALIDATION),
			 errmsg("ValidationException: One or more parameter values were invalid: Attributes cannot be redefined"),
			 errdetail("Attribute %s is a key of type %s; the new index gives it type %s.",
					   name, ddb_key_type_name(was), ddb_key_type_name(now))));
}

/* The schema ddb is installed in (where the trigger functions live). */
Oid
ddb_extension_schema(void)
{
	Relation	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			nsp;

	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum("ddb"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "extension ddb is not installed");
	nsp = ((Form_pg_extension) GETSTRUCT(tup))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return nsp;
}

/* The owner check DynamoDB's UpdateTable stands for: ALTER TABLE rights. */
static Relation
open_base_for_ddl(Oid relid)
{
	Relation	rel = try_relation_open(relid, ShareRowExclusiveLock);

	if (rel == NULL || !ddb_is_ddb_relation(rel))
		ereport(ERROR,
				(errcode(DDB_ERRCODE_RESOURCE_NOT_FOUND),
				 errmsg("ResourceNotFoundException: " DDB_MSG_RESOURCE_NOT_FOUND),
				 errdetail("Table with OID %u is not a ddb table.", relid)));
	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, RelationGetRelationName(rel));
	if (RelationGetNamespace(rel) == get_namespace_oid(GSI_SCHEMA, false))
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: \"%s\" is an index table", RelationGetRelationName(rel))));
	return rel;
}

/* "<base>__<index>", or a hash-suffixed prefix of it when too long or taken */
static char *
index_table_name(Relation base, const char *index_name)
{
	char	   *name = psprintf("%s__%s", RelationGetRelationName(base), index_name);
	Oid			nsp = get_namespace_oid(GSI_SCHEMA, false);

	if (strlen(name) < NAMEDATALEN && !OidIsValid(get_relname_relid(name, nsp)))
		return name;
	for (uint32 salt = 0;; salt++)
	{
		uint32		h = hash_bytes((const unsigned char *) name, strlen(name)) ^
			(RelationGetRelid(base) * 2654435761U) ^ salt;
		int			keep = pg_mbcliplen(name, strlen(name), NAMEDATALEN - 1 - 9);
		char	   *n = psprintf("%.*s_%08x", keep, name, h);

		if (!OidIsValid(get_relname_relid(n, nsp)))
			return n;
	}
}

/*
 * The catalog's owner (who installed the extension).  ddb_create_gsi and
 * ddb_drop_gsi change the catalog, the index tables and the triggers as
 * this role, having checked that the caller owns the table: a table owner
 * needs no rights on ddb_internal.
 */
static Oid
gsi_catalog_owner(void)
{
	Oid			catalog = get_relname_relid("gsi", get_namespace_oid(GSI_SCHEMA, false));
	HeapTuple	tp = SearchSysCache1(RELOID, ObjectIdGetDatum(catalog));
	Oid			owner;

	if (!HeapTupleIsValid(tp))
		elog(ERROR, "cache lookup failed for %s", GSI_CATALOG);
	owner = ((Form_pg_class) GETSTRUCT(tp))->relowner;
	ReleaseSysCache(tp);
	return owner;
}

static int
spi_exec(const char *sql, int expect)
{
	int			rc = SPI_execute(sql, false, 0);

	if (rc != expect)
		elog(ERROR, "SPI_execute failed (%d): %s", rc, sql);
	return rc;
}

/*
 * Enable or disable ddb's upkeep trigger 'trigname' of rel, inside SPI with
 * search_path pinned (ddb_search_path_pin); false if the table has no such
 * trigger.  ddb's triggers are disabled, not dropped, when the last index
 * or the stream goes, and enabled again by the next: disabling needs no
 * more than the SHARE ROW EXCLUSIVE these changes hold, where DROP TRIGGER
 * takes ACCESS EXCLUSIVE -- which made the last drop wait for readers, and
 * deadlock with a transaction that had read the table and then wrote it.
 * (EnableDisableTrigger, not ALTER TABLE, which refuses a table its caller
 * has open.)
 */
bool
ddb_upkeep_trigger_set(Relation rel, const char *trigname, bool enable)
{
	Oid			argtypes[2] = {OIDOID, TEXTOID};
	Datum		args[2] = {ObjectIdGetDatum(RelationGetRelid(rel)), CStringGetTextDatum(trigname)};
	bool		isnull;
	char		state;
	char		fires = enable ? TRIGGER_FIRES_ON_ORIGIN : TRIGGER_DISABLED;

	if (SPI_execute_with_args("SELECT tgenabled FROM pg_catalog.pg_trigger WHERE tgrelid = $1 AND tgname = $2",
							  2, argtypes, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_trigger");
	if (SPI_processed == 0)
		return false;
	state = DatumGetChar(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	if (state != fires)
	{
#if PG_VERSION_NUM >= 160000
		EnableDisableTrigger(rel, trigname, InvalidOid, fires, false, false, ShareRowExclusiveLock);
#else
		EnableDisableTrigger(rel, trigname, fires, false, ShareRowExclusiveLock);
#endif
		CommandCounterIncrement();
	}
	return true;
}

/*
 * CreateGlobalSecondaryIndex's core: check the definition, create the
 * index table, its catalog row and the maintenance triggers, backfill.
 * Key types are "S", "N" or "B" (NULL: S); proj ALL, KEYS_ONLY or
 * INCLUDE (NULL: ALL) with nonkey_arr.  Shared by ddb_create_gsi and
 * UpdateTable.
 */
void
ddb_create_gsi_core(Oid relid, char *index_name, char *pk, const char *pktype_name,
					char *sk, const char *sktype_name, char *proj, ArrayType *nonkey_arr)
{
	ddb_index_create(relid, DDB_INDEX_GLOBAL, index_name, pk, pktype_name, sk,
					 sktype_name, proj, nonkey_arr);
}

/*
 * Create an index of any kind: a global secondary index, a local one
 * (partition key = the table's), or the TTL index (kind DDB_INDEX_TTL:
 * index_name DDB_TTL_INDEX, pk the name of its constant partition column,
 * sk the TTL attribute, KEYS_ONLY).  The checks of the definition are
 * DynamoDB's; the caller checked what only its kind needs.
 */
void
ddb_index_create(Oid relid, char kind, char *index_name, char *pk, const char *pktype_name,
				 char *sk, const char *sktype_name, char *proj, ArrayType *nonkey_arr)
{
	DdbKeyType	pktype,
				sktype = DDB_KEY_S;
	DdbProjType ptype = DDB_PROJ_ALL;
	Relation	rel;
	const DdbKeyInfo *ki;
	const char *cols[DDB_MAX_KEY_COLUMNS];
	char	   *colnames[DDB_MAX_KEY_COLUMNS];
	bool		longnames;
	DdbKeyType	coltypes[DDB_MAX_KEY_COLUMNS];
	int			ncols = 0;
	const char *itemcol = "item";
	char	   *tblname;
	StringInfoData sql;
	Oid			idxoid;
	Oid			extschema;
	DdbGsi	   *g;
	Relation	idx;
	Snapshot	snap;
	DdbRangeScan scan;
	DdbRange	range = {0};
	HeapTuple	tuple;
	int64		nitems = 0,
				nentries = 0,
				nviolations = 0;
	MemoryContext item_cxt,
				old;
	DdbRunAs	save;
	DdbValErrors e;
	Datum	   *elems;
	char	  **nonkey = NULL;
	int			nnonkey = 0;

	pktype = key_type_of(pktype_name ? pktype_name : "S", "partition key");
	if (sk)
		sktype = key_type_of(sktype_name ? sktype_name : "S", "sort key");
	if (proj == NULL)
		proj = "ALL";

	/* (an SQL array may hold nulls, which no request can) */
	if (nonkey_arr != NULL && array_contains_nulls(nonkey_arr))
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: NonKeyAttributes must not contain nulls")));
	if (nonkey_arr != NULL)
	{
		deconstruct_array(nonkey_arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, NULL, &nnonkey);
		nonkey = palloc(sizeof(char *) * Max(nnonkey, 1));
		for (int i = 0; i < nnonkey; i++)
			nonkey[i] = TextDatumGetCString(elems[i]);
	}

	/*
	 * The members DynamoDB's request model constrains, listed together
	 * before the checks of what the definition means, as DynamoDB lists
	 * them: the index name (3-255 of [a-zA-Z0-9_.-]), the projection type,
	 * and NonKeyAttributes, at most 20 names of 1-255 bytes.
	 */
	ddb_valerr_init(&e);
	if (kind == DDB_INDEX_GLOBAL || kind == DDB_INDEX_LOCAL)
	{
		if (index_name == NULL)
			ddb_valerr_add(&e, NULL, "indexName", "Member must not be null");
		else
			ddb_valerr_name(&e, index_name, "indexName");
	}
	if (strcmp(proj, "ALL") == 0)
		ptype = DDB_PROJ_ALL;
	else if (strcmp(proj, "KEYS_ONLY") == 0)
		ptype = DDB_PROJ_KEYS_ONLY;
	else if (strcmp(proj, "INCLUDE") == 0)
		ptype = DDB_PROJ_INCLUDE;
	else
		ddb_valerr_add(&e, proj, "projection.projectionType",
					   "Member must satisfy enum value set: [ALL, INCLUDE, KEYS_ONLY]");
	if (nnonkey > 20)
	{
		StringInfoData v;

		/* the list as DynamoDB prints it */
		initStringInfo(&v);
		appendStringInfoChar(&v, '[');
		for (int i = 0; i < nnonkey; i++)
			appendStringInfo(&v, "%s%s", i ? ", " : "", nonkey[i]);
		appendStringInfoChar(&v, ']');
		ddb_valerr_add(&e, v.data, "projection.nonKeyAttributes",
					   "Member must have length less than or equal to 20");
	}
	for (int i = 0; i < nnonkey; i++)
		if (strlen(nonkey[i]) < 1 || strlen(nonkey[i]) > 255)
			ddb_valerr_add(&e, nonkey[i], "projection.nonKeyAttributes",
						   strlen(nonkey[i]) < 1 ? "Member must have length greater than or equal to 1" :
						   "Member must have length less than or equal to 255");
	ddb_valerr_raise(&e);

	check_attr_name(pk, "partition key name");
	if (sk)
	{
		check_attr_name(sk, "sort key name");
		if (strcmp(pk, sk) == 0)
			ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
					  "Both the Hash Key and the Range Key element in the KeySchema have the same name");
	}
	if (ptype == DDB_PROJ_INCLUDE)
	{
		if (nnonkey < 1)
			ereport(ERROR,
					(errcode(DDB_ERRCODE_VALIDATION),
					 errmsg("ValidationException: One or more parameter values were invalid: ProjectionType is INCLUDE, but NonKeyAttributes is not specified")));
		for (int i = 0; i < nnonkey; i++)
			for (int j = 0; j < i; j++)
				if (strcmp(nonkey[i], nonkey[j]) == 0)
					ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
							  "One or more parameter values were invalid: Duplicate attributes in NonKeyAttributes: %s",
							  nonkey[i]);
	}
	else if (nonkey_arr != NULL)
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
				  "One or more parameter values were invalid: ProjectionType is %s, but NonKeyAttributes is specified",
				  proj);

	/* writers wait for the index to be built; readers go on */
	rel = open_base_for_ddl(relid);
	ki = ddb_get_keyinfo(rel);
	if (gsi_find(rel, index_name) != NULL)
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
				  "One or more parameter values were invalid: Attempting to create an index which already exists");
	{
		DdbGsi	   *list;

		int			n = gsi_list(rel, &list);
		int			nsame = 0;

		for (int i = 0; i < n; i++)
			nsame += list[i].kind == kind;
		if (kind == DDB_INDEX_LOCAL && (ki->nkeys < 2 || nsame >= DDB_MAX_LSI_PER_TABLE ||
										strcmp(pk, ddb_key_name(rel, 0)) != 0 || sk == NULL))
			elog(ERROR, "invalid local secondary index \"%s\"", index_name);
		if (kind == DDB_INDEX_GLOBAL && nsame >= DDB_MAX_GSI_PER_TABLE)
			ddb_raise(DDB_ERRCODE_LIMIT_EXCEEDED, "LimitExceededException",
					  DDB_MSG_LIMIT_GSI_COUNT, DDB_MAX_GSI_PER_TABLE);
	}

	/* an attribute keys every index (and the table) with one type */
	{
		DdbGsi	   *list;
		int			n = gsi_list(rel, &list);
		int			projected = nonkey_arr ? ArrayGetNItems(ARR_NDIM(nonkey_arr), ARR_DIMS(nonkey_arr)) : 0;

		for (int i = 0; i < n && (kind == DDB_INDEX_GLOBAL || kind == DDB_INDEX_LOCAL); i++)
		{
			if (list[i].kind == DDB_INDEX_TTL || list[i].kind == DDB_INDEX_COLLECTION)
				continue;
			for (int j = 0; j < 2; j++)
			{
				const char *name = j == 0 ? list[i].pk : list[i].sk;
				DdbKeyType	type = j == 0 ? list[i].pktype : list[i].sktype;

				if (name == NULL)
					continue;
				if (strcmp(name, pk) == 0 && type != pktype)
					attribute_redefined(name, type, pktype);
				if (sk && strcmp(name, sk) == 0 && type != sktype)
					attribute_redefined(name, type, sktype);
			}
			projected += list[i].nnonkey;
		}
		if (projected > DDB_MAX_PROJECTED_ATTRIBUTES)
			ddb_raise(DDB_ERRCODE_LIMIT_EXCEEDED, "LimitExceededException",
					  "One or more parameter values were invalid: Number of projected attributes in all indexes exceeds limit of %d, number of projected attributes: %d",
					  DDB_MAX_PROJECTED_ATTRIBUTES, projected);
	}

	/* the index table's key columns: index keys, then the other table keys */
	cols[ncols] = pk;
	coltypes[ncols++] = pktype;
	if (sk)
	{
		cols[ncols] = sk;
		coltypes[ncols++] = sktype;
	}
	for (int k = 0; k < (kind == DDB_INDEX_COLLECTION ? 0 : ki->nkeys); k++)
	{
		const char *name = ddb_key_name(rel, k);
		bool		dup = false;

		for (int c = 0; c < ncols; c++)
			if (strcmp(cols[c], name) == 0)
			{
				dup = true;
				if (coltypes[c] != ki->keytype[k])
					attribute_redefined(name, ki->keytype[k], coltypes[c]);
			}
		if (!dup)
		{
			if (ncols >= DDB_MAX_KEY_COLUMNS)
				elog(ERROR, "too many key columns for a ddb index");
			cols[ncols] = name;
			coltypes[ncols++] = ki->keytype[k];
		}
	}
	longnames = ddb_pg_key_columns(cols, ncols, colnames);
	for (bool again = true; again;)
	{
		again = false;
		for (int c = 0; c < ncols; c++)
			if (strcmp(colnames[c], itemcol) == 0)
			{
				itemcol = psprintf("%s_", itemcol);
				again = true;
			}
	}

	/* the index table, the catalog row, the triggers */
	tblname = index_table_name(rel, index_name);
	initStringInfo(&sql);
	appendStringInfo(&sql, "CREATE TABLE %s.%s (", GSI_SCHEMA, quote_identifier(tblname));
	for (int c = 0; c < ncols; c++)
		appendStringInfo(&sql, "%s %s NOT NULL, ", quote_identifier(colnames[c]),
						 ddb_key_sql_type(coltypes[c]));
	appendStringInfo(&sql, "%s jsonb NOT NULL) USING ddb", quote_identifier(itemcol));

	/* the trigger function lives where this function does */
	extschema = ddb_extension_schema();
	ddb_run_as_begin(gsi_catalog_owner(), &save);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	spi_exec(sql.data, SPI_OK_UTILITY);
	idxoid = get_relname_relid(tblname, get_namespace_oid(GSI_SCHEMA, false));
	if (!OidIsValid(idxoid))
		elog(ERROR, "index table \"%s\" was not created", tblname);
	/*
	 * key attribute names that are not their columns' (longer than a column
	 * name, or a system column's): kept in the catalog
	 */
	if (longnames)
	{
		Oid			argtypes[2] = {OIDOID, TEXTARRAYOID};
		Datum		args[2] = {ObjectIdGetDatum(idxoid),
			ddb_key_names_array(cols, colnames, ncols)};

		if (SPI_execute_with_args("INSERT INTO ddb_internal.tables (relid, key_names) VALUES ($1, $2)",
								  2, argtypes, args, NULL, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not insert into ddb_internal.tables");
	}
	{
		Oid			argtypes[10] = {OIDOID, TEXTOID, OIDOID, TEXTOID, CHAROID, TEXTOID,
		CHAROID, TEXTOID, TEXTARRAYOID, CHAROID};
		Datum		args[10];
		char		nulls[10] = "          ";

		args[0] = ObjectIdGetDatum(relid);
		args[1] = CStringGetTextDatum(index_name);
		args[2] = ObjectIdGetDatum(idxoid);
		args[3] = CStringGetTextDatum(pk);
		args[4] = CharGetDatum((char) pktype);
		args[5] = sk ? CStringGetTextDatum(sk) : (Datum) 0;
		args[6] = CharGetDatum((char) sktype);
		args[7] = CStringGetTextDatum(proj);
		args[8] = nonkey_arr ? PointerGetDatum(nonkey_arr) : (Datum) 0;
		if (!sk)
			nulls[5] = nulls[6] = 'n';
		if (!nonkey_arr)
			nulls[8] = 'n';
		args[9] = CharGetDatum(kind);
		if (SPI_execute_with_args("INSERT INTO " GSI_CATALOG " (base, index_name, index_table, partition_key, "
								  "partition_key_type, sort_key, sort_key_type, projection, "
								  "non_key_attributes, kind) "
								  "VALUES ($1::regclass, $2, $3::regclass, $4, $5, $6, $7, $8, $9, $10)",
								  10, argtypes, args, nulls, false, 0) != SPI_OK_INSERT)
			elog(ERROR, "could not insert into %s", GSI_CATALOG);
	}
	{
		char	   *base = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
													  RelationGetRelationName(rel));
		char	   *fn = quote_qualified_identifier(get_namespace_name(extschema), "ddb_gsi_trigger");

		/* the triggers of an earlier index, disabled with its drop, or new ones */
		if (!ddb_upkeep_trigger_set(rel, GSI_ROW_TRIGGER, true))
			spi_exec(psprintf("CREATE TRIGGER " GSI_ROW_TRIGGER " AFTER INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION %s()",
							  base, fn), SPI_OK_UTILITY);
		if (!ddb_upkeep_trigger_set(rel, GSI_TRUNC_TRIGGER, true))
			spi_exec(psprintf("CREATE TRIGGER " GSI_TRUNC_TRIGGER " AFTER TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION %s()",
							  base, fn), SPI_OK_UTILITY);
	}
	SPI_finish();
	ddb_run_as_end(&save);
	CacheInvalidateRelcache(rel);
	CommandCounterIncrement();

	/* backfill: every item, with a snapshot taken under the lock */
	g = gsi_find(rel, index_name);
	if (g == NULL)
		elog(ERROR, "new index \"%s\" not found in %s", index_name, GSI_CATALOG);
	g = memcpy(palloc(sizeof(DdbGsi)), g, sizeof(DdbGsi));
	idx = relation_open(idxoid, RowExclusiveLock);
	snap = RegisterSnapshot(GetLatestSnapshot());
	item_cxt = AllocSetContextCreate(CurrentMemoryContext, "ddb gsi backfill",
									 ALLOCSET_DEFAULT_SIZES);
	scan = ddb_range_begin(rel, snap, &range, true);

	/*
	 * The collection index comes with the first LSI, which only CreateTable
	 * makes: the table is empty, every size 0.
	 */
	while (kind != DDB_INDEX_COLLECTION && (tuple = ddb_range_next(scan)) != NULL)
	{
		GsiEntry	e;
		ItemPointerData tid;
		bool		has_entry;

		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(item_cxt);
		gsi_lenient = true;
		gsi_violation = false;
		PG_TRY();
		{
			has_entry = gsi_entry(g, idx, ddb_tuple_to_item(rel, tuple), &e);
		}
		PG_FINALLY();
		{
			gsi_lenient = false;
		}
		PG_END_TRY();
		if (gsi_violation)
			nviolations++;
		else if (has_entry)
		{
			ddb_insert_version(idx, e.key.data, e.key.len, gsi_stored_tuple(idx, &e),
							   GetCurrentCommandId(true), DDB_UNIQUE_ERROR, &tid);
			nentries++;
		}
		MemoryContextSwitchTo(old);
		MemoryContextReset(item_cxt);
		if (++nitems % DDB_GSI_PROGRESS_EVERY == 0)
			ereport(NOTICE,
					(errmsg("index %s: " INT64_FORMAT " items read, " INT64_FORMAT " entries written",
							index_name, nitems, nentries)));
	}
	ddb_range_end(scan);
	UnregisterSnapshot(snap);
	if (nviolations > 0)
	{
		Oid			argtypes[3] = {OIDOID, TEXTOID, INT8OID};
		Datum		args[3] = {ObjectIdGetDatum(relid), CStringGetTextDatum(index_name),
		Int64GetDatum(nviolations)};

		ddb_run_as_begin(gsi_catalog_owner(), &save);
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		if (SPI_execute_with_args("UPDATE " GSI_CATALOG " SET indexing_violations = $3 "
								  "WHERE base = $1::regclass AND index_name = $2",
								  3, argtypes, args, NULL, false, 0) != SPI_OK_UPDATE)
			elog(ERROR, "could not update %s", GSI_CATALOG);
		SPI_finish();
		ddb_run_as_end(&save);
		CacheInvalidateRelcache(rel);
		ereport(NOTICE,
				(errmsg("index %s left out " INT64_FORMAT " items whose index key has the wrong type, is empty or is too long",
						index_name, nviolations),
				 errhint("DescribeTable reports them as IndexingViolations; writes of such values are refused from now on.")));
	}
	relation_close(idx, NoLock);

	/* the first local index brings the item collections' sizes */
	if (kind == DDB_INDEX_LOCAL && ddb_index_count(rel, DDB_INDEX_COLLECTION) == 0)
	{
		const DdbKeyInfo *tki = ddb_get_keyinfo(rel);

		ddb_index_create(relid, DDB_INDEX_COLLECTION, DDB_COLLECTION_INDEX,
						 pstrdup(ddb_key_name(rel, 0)), ddb_key_type_name(tki->keytype[0]),
						 NULL, NULL, "KEYS_ONLY", NULL);
	}
	relation_close(rel, NoLock);
}

Datum
ddb_create_gsi(PG_FUNCTION_ARGS)
{
#define ARG_TEXT(n) (PG_ARGISNULL(n) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(n)))
	Relation	rel = ddb_table_open_arg(fcinfo, 0, ACL_SELECT);
	Oid			relid = RelationGetRelid(rel);

	relation_close(rel, AccessShareLock);
	ddb_create_gsi_core(relid, ARG_TEXT(1), ARG_TEXT(2), ARG_TEXT(3), ARG_TEXT(4),
						ARG_TEXT(5), ARG_TEXT(6),
						PG_ARGISNULL(7) ? NULL : PG_GETARG_ARRAYTYPE_P(7));
	PG_RETURN_VOID();
}

Datum
ddb_drop_gsi(PG_FUNCTION_ARGS)
{
	Relation	rel;
	Oid			relid;

	if (PG_ARGISNULL(1))
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
				  DDB_MSG_REQUIRED_PARAMETER, "IndexName");
	rel = ddb_table_open_arg(fcinfo, 0, ACL_SELECT);
	relid = RelationGetRelid(rel);
	relation_close(rel, AccessShareLock);
	ddb_drop_gsi_core(relid, text_to_cstring(PG_GETARG_TEXT_PP(1)));
	PG_RETURN_VOID();
}

/* DeleteGlobalSecondaryIndex's core, shared by ddb_drop_gsi and UpdateTable. */
void
ddb_drop_gsi_core(Oid relid, const char *index_name)
{
	ddb_index_drop(relid, index_name, DDB_INDEX_GLOBAL);
}

/*
 * Store a global index's provisioned throughput (index_name NULL: every
 * global index's, as when the table goes on demand).  The caller owns the
 * table (UpdateTable checks it; CreateTable made it); the catalog is written
 * as its owner, as ddb_index_create writes it.
 */
void
ddb_gsi_set_throughput(Relation rel, const char *index_name, int64 rcu, int64 wcu)
{
	Oid			argtypes[4] = {OIDOID, TEXTOID, INT8OID, INT8OID};
	Datum		args[4];
	char		nulls[4] = "    ";

	args[0] = ObjectIdGetDatum(RelationGetRelid(rel));
	args[1] = index_name ? CStringGetTextDatum(index_name) : (Datum) 0;
	if (index_name == NULL)
		nulls[1] = 'n';
	args[2] = Int64GetDatum(rcu);
	args[3] = Int64GetDatum(wcu);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	ddb_catalog_exec("UPDATE " GSI_CATALOG " SET read_capacity = $3, write_capacity = $4 "
					 "WHERE base = $1::regclass AND kind = 'G' AND ($2 IS NULL OR index_name = $2)",
					 4, argtypes, args, nulls, SPI_OK_UPDATE);
	SPI_finish();
	CacheInvalidateRelcache(rel);
	CommandCounterIncrement();
}

/* Drop an index of a kind: the catalog row, the index table, the triggers. */
void
ddb_index_drop(Oid relid, const char *index_name, char kind)
{
	Relation	rel;
	DdbGsi	   *g;
	DdbGsi	   *list;
	char	   *idxname;
	Oid			idxoid;
	DdbRunAs	save;

	rel = open_base_for_ddl(relid);
	g = gsi_find(rel, index_name);
	if (g == NULL || g->kind != kind)
		ereport(ERROR,
				(errcode(DDB_ERRCODE_RESOURCE_NOT_FOUND),
				 errmsg("ResourceNotFoundException: " DDB_MSG_RESOURCE_NOT_FOUND),
				 errdetail("Table \"%s\" has no index %s.", RelationGetRelationName(rel), index_name)));
	idxoid = g->indexrelid;
	idxname = get_rel_name(idxoid);

	ddb_run_as_begin(gsi_catalog_owner(), &save);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	{
		Oid			argtypes[2] = {OIDOID, TEXTOID};
		Datum		args[2] = {ObjectIdGetDatum(relid), CStringGetTextDatum(index_name)};

		if (SPI_execute_with_args("DELETE FROM " GSI_CATALOG " WHERE base = $1::regclass AND index_name = $2",
								  2, argtypes, args, NULL, false, 0) != SPI_OK_DELETE)
			elog(ERROR, "could not delete from %s", GSI_CATALOG);
	}
	if (idxname)
		spi_exec(psprintf("DROP TABLE %s.%s", GSI_SCHEMA, quote_identifier(idxname)),
				 SPI_OK_UTILITY);
	{
		Oid			argtypes[1] = {OIDOID};
		Datum		args[1] = {ObjectIdGetDatum(relid)};

		if (SPI_execute_with_args("SELECT 1 FROM " GSI_CATALOG " WHERE base = $1::regclass",
								  1, argtypes, args, NULL, false, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not read %s", GSI_CATALOG);
	}
	if (SPI_processed == 0)
	{
		(void) ddb_upkeep_trigger_set(rel, GSI_ROW_TRIGGER, false);
		(void) ddb_upkeep_trigger_set(rel, GSI_TRUNC_TRIGGER, false);
	}
	SPI_finish();
	ddb_run_as_end(&save);
	CacheInvalidateRelcache(rel);
	CommandCounterIncrement();
	(void) gsi_list(rel, &list);
	relation_close(rel, NoLock);
}

/* ------------------------------------------------------------------------
 * Reading an index
 * ------------------------------------------------------------------------
 */

/*
 * The index table of table's index index_name, opened for reading (the
 * caller checked SELECT on the table; the index table itself needs no
 * privilege).  *nquerykeys: the index's key attributes (1 or 2), the first
 * key columns of the index table.
 */
Relation
ddb_gsi_open_index(Relation table, const char *index_name, int *nquerykeys,
				   char *kind, bool *projects_all)
{
	DdbGsi	   *g = gsi_find(table, index_name);
	Relation	idx = NULL;

	if (g != NULL && (g->kind == DDB_INDEX_GLOBAL || g->kind == DDB_INDEX_LOCAL))
	{
		*nquerykeys = g->sk ? 2 : 1;
		*kind = g->kind;
		*projects_all = g->proj == DDB_PROJ_ALL;
		idx = try_relation_open(g->indexrelid, AccessShareLock);
	}
	if (idx == NULL)
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", DDB_MSG_INDEX_NOT_FOUND,
				  index_name);
	return idx;
}

/*
 * Does index 'index_name' of 'table' hold attribute 'name': its own keys,
 * the table's keys, and what its projection names?
 */
bool
ddb_gsi_projects(Relation table, const char *index_name, const char *name)
{
	DdbGsi	   *g = gsi_find(table, index_name);
	const DdbKeyInfo *ki = ddb_get_keyinfo(table);

	if (g == NULL || strcmp(name, g->pk) == 0 || (g->sk && strcmp(name, g->sk) == 0))
		return true;
	for (int k = 0; k < ki->nkeys; k++)
		if (strcmp(name, ddb_key_name(table, k)) == 0)
			return true;
	return is_projected(g, name, strlen(name));
}

/*
 * The AttributeDefinitions of a table's index keys that are not table keys
 * (each once), appended to buf after the table's own.
 */
void
ddb_gsi_attribute_definitions(Relation rel, StringInfo buf)
{
	DdbGsi	   *gsi;
	int			n = gsi_list(rel, &gsi);
	const DdbKeyInfo *ki = ddb_get_keyinfo(rel);
	List	   *seen = NIL;

	for (int k = 0; k < ki->nkeys; k++)
		seen = lappend(seen, (char *) ddb_key_name(rel, k));
	for (int i = 0; i < n; i++)
	{
		if (gsi[i].kind == DDB_INDEX_TTL || gsi[i].kind == DDB_INDEX_COLLECTION)
			continue;			/* internal, keyed by no attribute definition */
		for (int j = 0; j < (gsi[i].sk ? 2 : 1); j++)
		{
			const char *name = j == 0 ? gsi[i].pk : gsi[i].sk;
			DdbKeyType	type = j == 0 ? gsi[i].pktype : gsi[i].sktype;
			ListCell   *lc;
			bool		dup = false;

			foreach(lc, seen)
				dup |= strcmp(lfirst(lc), name) == 0;
			if (dup)
				continue;
			seen = lappend(seen, (char *) name);
			appendStringInfoString(buf, ",{\"AttributeName\":");
			ddb_json_cstring(buf, name);
			appendStringInfo(buf, ",\"AttributeType\":\"%s\"}", ddb_key_type_name(type));
		}
	}
}

/* The DynamoDB size of an index entry: its keys and projected attributes. */
static int64
entry_bytes(Relation idx, GsiEntry *e)
{
	Jsonb	   *full = ddb_tuple_to_item(idx, heap_form_tuple(RelationGetDescr(idx),
															  e->values, e->isnull));

	return ddb_item_size(ddb_item_from_jsonb(full));
}

static double
entry_write_units(Relation idx, GsiEntry *e)
{
	int64		bytes = entry_bytes(idx, e);

	return Max(1, (bytes + 1023) / 1024);
}

/*
 * The write capacity a write from olditem to newitem costs in each index,
 * as DynamoDB bills it: putting an entry costs its size in 1 KB units,
 * deleting one a unit, an entry whose key changed both; an entry nothing
 * of which changed costs nothing.  Fills names/units for the indexes the
 * write touched (at most max) and returns how many.
 */
int
ddb_gsi_write_units(Relation rel, Jsonb *olditem, Jsonb *newitem, int max,
					const char **names, double *units)
{
	DdbGsi	   *list;
	int			n = gsi_list(rel, &list);
	DdbGsi	   *gsi = palloc(sizeof(DdbGsi) * Max(n, 1));
	int			out = 0;

	/* a copy: opening the index tables may invalidate the cache */
	memcpy(gsi, list, sizeof(DdbGsi) * n);
	for (int i = 0; i < n && out < max; i++)
	{
		Relation	idx = try_relation_open(gsi[i].indexrelid, AccessShareLock);
		GsiEntry	o,
					nw;
		bool		has_old,
					has_new;
		double		u = 0;

		if (idx == NULL)
			continue;
		if (gsi[i].kind == DDB_INDEX_TTL || gsi[i].kind == DDB_INDEX_COLLECTION)
		{
			relation_close(idx, AccessShareLock);
			continue;			/* internal, not billed */
		}
		has_old = gsi_old_entry(&gsi[i], idx, olditem, &o);
		has_new = gsi_entry(&gsi[i], idx, newitem, &nw);
		if (has_old && has_new && o.key.len == nw.key.len &&
			memcmp(o.key.data, nw.key.data, o.key.len) == 0)
			u = jsonb_same(o.item, nw.item) ? 0 : entry_write_units(idx, &nw);
		else
		{
			if (has_old)
				u += 1;
			if (has_new)
				u += entry_write_units(idx, &nw);
		}
		relation_close(idx, AccessShareLock);
		if (has_old || has_new)
		{
			names[out] = pstrdup(gsi[i].name);
			units[out++] = u;
		}
	}
	return out;
}

/*
 * DescribeTable's GlobalSecondaryIndexes (kind DDB_INDEX_GLOBAL) or
 * LocalSecondaryIndexes (DDB_INDEX_LOCAL) array, appended to buf.
 */
void
ddb_gsi_describe(Relation rel, char kind, StringInfo buf)
{
	DdbGsi	   *gsi;
	int			n = gsi_list(rel, &gsi);
	char	   *arn = ddb_table_arn(ddb_table_name(rel));
	bool		first = true;

	appendStringInfoChar(buf, '[');
	for (int i = 0; i < n; i++)
	{
		DdbGsi	   *g = &gsi[i];
		HeapTuple	tp;
		double		count = 0;
		int64		size = 0;

		if (g->kind != kind)
			continue;
		tp = SearchSysCache1(RELOID, ObjectIdGetDatum(g->indexrelid));
		if (HeapTupleIsValid(tp))
		{
			count = ((Form_pg_class) GETSTRUCT(tp))->reltuples;
			ReleaseSysCache(tp);
			/* as the table's TableSizeBytes (ddb_describe_table_json) */
			if (count > 0)
				size = DatumGetInt64(DirectFunctionCall1(pg_total_relation_size,
														 ObjectIdGetDatum(g->indexrelid)));
		}
		appendStringInfoString(buf, first ? "{\"IndexName\":" : ",{\"IndexName\":");
		first = false;
		ddb_json_cstring(buf, g->name);
		appendStringInfoString(buf, ",\"KeySchema\":[{\"AttributeName\":");
		ddb_json_cstring(buf, g->pk);
		appendStringInfoString(buf, ",\"KeyType\":\"HASH\"}");
		if (g->sk)
		{
			appendStringInfoString(buf, ",{\"AttributeName\":");
			ddb_json_cstring(buf, g->sk);
			appendStringInfoString(buf, ",\"KeyType\":\"RANGE\"}");
		}
		appendStringInfo(buf, "],\"Projection\":{\"ProjectionType\":\"%s\"", proj_names[g->proj]);
		if (g->proj == DDB_PROJ_INCLUDE)
		{
			appendStringInfoString(buf, ",\"NonKeyAttributes\":[");
			for (int j = 0; j < g->nnonkey; j++)
			{
				if (j)
					appendStringInfoChar(buf, ',');
				ddb_json_cstring(buf, g->nonkey[j]);
			}
			appendStringInfoChar(buf, ']');
		}
		/* ItemCount is approximate, as DynamoDB's: the planner's estimate */
		if (kind == DDB_INDEX_GLOBAL)
			appendStringInfo(buf, "},\"IndexStatus\":\"ACTIVE\",\"ProvisionedThroughput\":"
							 "{\"NumberOfDecreasesToday\":0,\"ReadCapacityUnits\":" INT64_FORMAT
							 ",\"WriteCapacityUnits\":" INT64_FORMAT "}"
							 ",\"ItemCount\":%.0f,\"IndexSizeBytes\":" INT64_FORMAT
							 ",\"IndexingViolations\":" INT64_FORMAT ",\"IndexArn\":",
							 g->read_capacity, g->write_capacity,
							 count < 0 ? 0 : count, size, g->violations);
		else
			appendStringInfo(buf, "},\"ItemCount\":%.0f,\"IndexSizeBytes\":" INT64_FORMAT
							 ",\"IndexArn\":", count < 0 ? 0 : count, size);
		ddb_json_cstring(buf, psprintf("%s/index/%s", arn, g->name));
		appendStringInfoChar(buf, '}');
	}
	appendStringInfoChar(buf, ']');
}

/* ------------------------------------------------------------------------
 * Verification
 * ------------------------------------------------------------------------
 */

/*
 * The collection index against its table: each partition key's row holds
 * the size of its items and their LSI entries (rows of empty collections
 * hold 0), and there is a row for every non-empty collection.  Table and
 * rows are both in (hash, partition key) order, so one pass over each.
 */
static void
verify_collections(Relation rel, DdbGsi *c, DdbGsi *gsi, int n, Snapshot snap,
				   StringInfo out, bool first)
{
	Relation	cidx = relation_open(c->indexrelid, AccessShareLock);
	DdbRange	range = {0};
	DdbRangeScan scan,
				cscan;
	HeapTuple	tuple;
	StringInfoData cur;
	int64		cursize = 0;
	int64		nitems = 0,
				ncollections = 0;
	bool		have = false;
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "ddb verify collections",
											  ALLOCSET_DEFAULT_SIZES);

	initStringInfo(&cur);
	cscan = ddb_range_begin(cidx, snap, &range, true);
	scan = ddb_range_begin(rel, snap, &range, true);
	for (;;)
	{
		StringInfoData key = {0};
		Jsonb	   *item = NULL;
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		tuple = ddb_range_next(scan);
		old = MemoryContextSwitchTo(cxt);
		if (tuple != NULL)
		{
			item = ddb_tuple_to_item(rel, tuple);
			collection_key(cidx, item, &key);
			nitems++;
		}
		if (have && (tuple == NULL || key.len != cur.len || memcmp(key.data, cur.data, cur.len) != 0))
		{
			/* a collection ends: the next row with a size must be its own */
			HeapTuple	row;
			int64		rowsize = 0;

			while ((row = ddb_range_next(cscan)) != NULL &&
				   (rowsize = collection_row_size(cidx, row)) == 0)
				;
			if (row == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg_internal("item collection index of table \"%s\" lacks a collection of " INT64_FORMAT " bytes",
										 RelationGetRelationName(rel), cursize)));
			if (rowsize != cursize)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg_internal("item collection of table \"%s\" is " INT64_FORMAT " bytes; its row says " INT64_FORMAT,
										 RelationGetRelationName(rel), cursize, rowsize)));
			ncollections++;
			have = false;
		}
		if (tuple == NULL)
		{
			MemoryContextSwitchTo(old);
			break;
		}
		if (!have)
		{
			MemoryContextSwitchTo(old);
			resetStringInfo(&cur);
			appendBinaryStringInfo(&cur, key.data, key.len);
			cursize = 0;
			have = true;
			MemoryContextSwitchTo(cxt);
		}
		gsi_lenient = true;
		PG_TRY();
		{
			cursize += collection_bytes(gsi, n, item);
		}
		PG_FINALLY();
		{
			gsi_lenient = false;
		}
		PG_END_TRY();
		MemoryContextSwitchTo(old);
		MemoryContextReset(cxt);
	}
	while ((tuple = ddb_range_next(cscan)) != NULL)
		if (collection_row_size(cidx, tuple) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg_internal("item collection index of table \"%s\" has a size for an empty collection",
									 RelationGetRelationName(rel))));
	ddb_range_end(scan);
	ddb_range_end(cscan);
	appendStringInfoString(out, first ? "{\"IndexName\": " : ", {\"IndexName\": ");
	escape_json(out, c->name);
	appendStringInfo(out, ", \"items\": " INT64_FORMAT ", \"collections\": " INT64_FORMAT "}",
					 nitems, ncollections);
	MemoryContextDelete(cxt);
	relation_close(cidx, AccessShareLock);
}

/*
 * One index against its table: every visible item's entry is in the index
 * with its projection, and the index has as many entries as the items that
 * have one (so nothing else: index keys are unique).
 */
static bool
verify_one(Relation rel, DdbGsi *g, Snapshot snap, StringInfo out, bool first)
{
	Relation	idx = try_relation_open(g->indexrelid, AccessShareLock);
	DdbRange	range = {0};
	DdbRangeScan scan;
	HeapTuple	tuple;
	int64		nitems = 0,
				expected = 0,
				actual = 0;
	MemoryContext cxt;
	MemoryContext old;

	/* dropped since the list was read (its lock does not keep out a drop) */
	if (idx == NULL)
		return false;
	cxt = AllocSetContextCreate(CurrentMemoryContext, "ddb verify gsi", ALLOCSET_DEFAULT_SIZES);
	scan = ddb_range_begin(rel, snap, &range, true);
	while ((tuple = ddb_range_next(scan)) != NULL)
	{
		GsiEntry	e;
		Jsonb	   *item;
		bool		has_entry;

		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(cxt);
		nitems++;
		item = ddb_tuple_to_item(rel, tuple);
		gsi_lenient = true;
		PG_TRY();
		{
			has_entry = gsi_entry(g, idx, item, &e);
		}
		PG_FINALLY();
		{
			gsi_lenient = false;
		}
		PG_END_TRY();
		if (has_entry)
		{
			HeapTuple	found = ddb_lookup(idx, snap, e.key.data, e.key.len);
			Jsonb	   *want,
					   *got;

			expected++;
			if (found == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg_internal("index %s of table \"%s\" lacks the entry of item %s",
										 g->name, RelationGetRelationName(rel),
										 JsonbToCString(NULL, &item->root, 0))));
			want = ddb_tuple_to_item(idx, heap_form_tuple(RelationGetDescr(idx), e.values, e.isnull));
			got = ddb_tuple_to_item(idx, found);
			if (!jsonb_same(want, got))
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg_internal("index %s of table \"%s\" has entry %s where %s belongs",
										 g->name, RelationGetRelationName(rel),
										 JsonbToCString(NULL, &got->root, 0),
										 JsonbToCString(NULL, &want->root, 0))));
		}
		MemoryContextSwitchTo(old);
		MemoryContextReset(cxt);
	}
	ddb_range_end(scan);
	scan = ddb_range_begin(idx, snap, &range, true);
	while ((tuple = ddb_range_next(scan)) != NULL)
		actual++;
	ddb_range_end(scan);
	if (actual != expected)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg_internal("index %s of table \"%s\" has " INT64_FORMAT " entries; its items have " INT64_FORMAT,
								 g->name, RelationGetRelationName(rel), actual, expected)));
	appendStringInfoString(out, first ? "{\"IndexName\": " : ", {\"IndexName\": ");
	escape_json(out, g->name);
	appendStringInfo(out, ", \"items\": " INT64_FORMAT ", \"entries\": " INT64_FORMAT "}",
					 nitems, actual);
	MemoryContextDelete(cxt);
	relation_close(idx, AccessShareLock);
	return true;
}

Datum
ddb_verify_gsi(PG_FUNCTION_ARGS)
{
	char	   *index_name = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));
	Relation	rel = ddb_table_open_arg(fcinfo, 0, ACL_SELECT);
	DdbGsi	   *list;
	int			n = gsi_list(rel, &list);
	DdbGsi	   *gsi = palloc(sizeof(DdbGsi) * Max(n, 1));
	StringInfoData out;
	int			done = 0;
	Snapshot	snap = GetActiveSnapshot();

	memcpy(gsi, list, sizeof(DdbGsi) * n);
	initStringInfo(&out);
	appendStringInfoString(&out, "{\"indexes\": [");
	for (int i = 0; i < n; i++)
	{
		if (index_name && strcmp(index_name, gsi[i].name) != 0)
			continue;
		/* an index created after the snapshot: its entries are not in it */
		if (!gsi_in_snapshot(RelationGetRelid(rel), gsi[i].indexrelid))
			continue;
		if (gsi[i].kind == DDB_INDEX_COLLECTION)
			verify_collections(rel, &gsi[i], gsi, n, snap, &out, done == 0);
		else if (!verify_one(rel, &gsi[i], snap, &out, done == 0))
			continue;
		done++;
	}
	if (index_name && done == 0)
		ereport(ERROR,
				(errcode(DDB_ERRCODE_RESOURCE_NOT_FOUND),
				 errmsg("ResourceNotFoundException: " DDB_MSG_RESOURCE_NOT_FOUND),
				 errdetail("Table \"%s\" has no index %s.", RelationGetRelationName(rel), index_name)));
	appendStringInfoString(&out, "]}");
	relation_close(rel, AccessShareLock);
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(out.data)));
}
