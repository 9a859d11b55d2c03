/*-------------------------------------------------------------------------
 *
 * ddb_table.c
 *	  DynamoDB tables: names, the table catalog, CreateTable, DeleteTable,
 *	  DescribeTable, ListTables, tags, and the GUCs they need.
 *
 * Namespace: DynamoDB's tables are the ddb tables of one PostgreSQL schema,
 * ddb.schema (default public).  A DynamoDB name ([a-zA-Z0-9_.-]{3,255}) is
 * its relation's name when it fits in a PostgreSQL identifier (63 bytes);
 * a longer one is stored as "<first 54 bytes>_<8 hex digits of its hash>"
 * and the catalog keeps the whole name.  Key attribute names (up to 255
 * bytes) map to column names the same way, as do the names of PostgreSQL's
 * system columns (xmin, ctid, ...; ddb_pg_key_columns), the catalog
 * keeping the attribute names that are not their columns'; everything
 * users see through the item functions and the protocol is the DynamoDB
 * name, while plain SQL sees the relation and columns.
 *
 * The catalog, ddb_internal.tables, has one row per ddb table (tables
 * created by hand get theirs from an event trigger): the long names, the
 * TableId, CreationDateTime, billing settings and tags.  It is read through
 * a backend-local cache keyed by relation OID and dropped on the relation's
 * relcache invalidation, which every change of a row sends (DROP TABLE
 * removes the row and the relation together).  Resolving a name is then a
 * syscache lookup of the relation plus a cache probe: no SPI on the item
 * paths.  Names resolved are cached too (ddb_table_lookup), and a table
 * whose name still holds once its lock is taken is known to exist, so it
 * is opened without probing the catalog for it again (ddb_table_open).
 *
 * A table that does not exist is ResourceNotFoundException (DB003) from
 * every function, whether it is named as text or as regclass.
 *
 * DDL (CREATE TABLE, DROP TABLE, catalog rows) runs through SPI, as the
 * catalog's owner where the catalog changes; the item operations never do.
 * All of it, and the catalog reads, with search_path pinned to pg_catalog,
 * pg_temp (ddb_search_path_pin, engine/ddb_shape.c; ddb_run_as_begin here
 * for SQL run as another role): never through the caller's search_path.
 * A catalog row is changed by updating it, inserted only when missing:
 * a restore's COPY replaces rows the event trigger made ("auto" rows, see
 * ddb--0.1--0.2.sql), which must never happen to a row ddb changed.
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
#include "access/skey.h"
#include "catalog/heap.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "commands/defrem.h"
#include "storage/lmgr.h"
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
#include "utils/uuid.h"

#include "ddb.h"
#include "api/ddb_json.h"
#include "api/ddb_ops.h"
#include "api/ddb_protocol.h"

PG_FUNCTION_INFO_V1(ddb_list_tables);

#define TABLES_CATALOG	"ddb_internal.tables"

/* GUCs */
char	   *ddb_schema = NULL;
char	   *ddb_region = NULL;
char	   *ddb_account_id = NULL;

/*
 * Set by the HTTP workers before they connect: ddb.schema, ddb.region and
 * ddb.account_id then take no value from ALTER DATABASE or ALTER ROLE.
 * A database's owner need not be a superuser, and may set any of these
 * for the database; the workers, which connect as the bootstrap
 * superuser and run every request's lookups by ddb.schema, would then
 * find tables in a schema the owner picked (and writes signed with a
 * superuser's key would land in the owner's tables).  So in a worker they
 * come from the server's configuration only (postgresql.conf, ALTER
 * SYSTEM, the command line), and a database or role setting is refused
 * with a WARNING in the log (ProcessGUCArray's level for those sources).
 */
bool		ddb_settings_server_only = false;

static bool
check_server_only(char **newval, void **extra, GucSource source)
{
	if (ddb_settings_server_only &&
		(source == PGC_S_DATABASE || source == PGC_S_USER || source == PGC_S_DATABASE_USER))
	{
		GUC_check_errdetail("ddb's HTTP endpoint takes this setting from the server's configuration only, not from ALTER DATABASE or ALTER ROLE.");
		return false;
	}
	return true;
}

/* One table's catalog row, cached. */
typedef struct TableCacheEntry
{
	Oid			relid;			/* hash key */
	bool		valid;
	DdbTableInfo info;
	MemoryContext cxt;
} TableCacheEntry;

static HTAB *table_cache = NULL;
static TableCacheEntry *last_entry = NULL;	/* the last one returned */

/*
 * Names resolved to tables (ddb_table_lookup's answers), so that an item
 * call does not look its table up in four catalogs.  An entry holds while
 * no relcache invalidation (a drop, a rename, an access method or catalog
 * row change: every change of what the lookup reads sends one) and no
 * change of a schema has arrived since it was made, and ddb.schema names
 * the same schema; any such event makes every entry stale.  Only found
 * tables are kept.
 */
#define NAME_CACHE_KEYLEN	256		/* DynamoDB names are at most 255 bytes */

typedef struct NameCacheEntry
{
	char		name[NAME_CACHE_KEYLEN];	/* hash key */
	char		schema[NAMEDATALEN];	/* ddb.schema when it was resolved */
	uint64		generation;
	Oid			relid;
} NameCacheEntry;

static HTAB *name_cache = NULL;
static uint64 name_cache_generation = 1;

/*
 * The entry of the last name found, checked before hashing: an item API
 * call names the table its predecessor named, as often as not.  Entries
 * are removed only by ddb_forget_tables, which resets this, so the
 * pointer stays good.
 */
static NameCacheEntry *name_cache_last = NULL;

static void table_cache_invalidate(Datum arg, Oid relid);
static void note_suspect(Oid relid);
static void tables_xact_callback(XactEvent event, void *arg);

static void
name_cache_invalidate(Datum arg, int cacheid, uint32 hashvalue)
{
	name_cache_generation++;
}

void
ddb_api_init(void)
{
	ddb_item_column_check = ddb_check_item_column_values;
	DefineCustomStringVariable("ddb.schema",
							   "The schema whose ddb tables are DynamoDB's tables.",
							   "Table names given to ddb's functions and to ddb_api are looked up, and created, in this schema.",
							   &ddb_schema, "public", PGC_USERSET, 0, check_server_only, NULL, NULL);
	DefineCustomStringVariable("ddb.region",
							   "The AWS region ddb reports in ARNs and endpoints.",
							   NULL, &ddb_region, "us-east-1", PGC_USERSET, 0, check_server_only,
							   NULL, NULL);
	DefineCustomStringVariable("ddb.account_id",
							   "The AWS account id ddb reports in ARNs.",
							   NULL, &ddb_account_id, "000000000000", PGC_USERSET, 0,
							   check_server_only, NULL, NULL);
#ifdef DDB_CHECKS
	ddb_types_checks_init();
#endif
	ddb_gsi_init();
	ddb_ttl_worker_init();
	ddb_stream_init();
	CacheRegisterRelcacheCallback(table_cache_invalidate, (Datum) 0);
	RegisterXactCallback(tables_xact_callback, NULL);
}

/* ------------------------------------------------------------------------
 * Names
 * ------------------------------------------------------------------------
 */

/*
 * A DynamoDB name's hash-suffixed form: a prefix of it, cut at a character
 * boundary to leave room, then '_' and 8 hex digits of 'hash'.
 */
static char *
hashed_name(const char *name, int len, uint32 hash)
{
	return psprintf("%.*s_%08x", pg_mbcliplen(name, len, NAMEDATALEN - 1 - 9), name, hash);
}

/*
 * The PostgreSQL identifier for a DynamoDB name (table, index or key
 * attribute): the name itself when it fits, else its hashed_name form with
 * a hash of the whole name.
 */
char *
ddb_pg_name(const char *name)
{
	int			len = strlen(name);

	if (len < NAMEDATALEN)
		return pstrdup(name);
	return hashed_name(name, len, hash_bytes((const unsigned char *) name, len));
}

/*
 * The columns cols[0..n-1] for key attributes attrs[0..n-1] of a table or
 * an index table: ddb_pg_name's, except for the names of PostgreSQL's
 * system columns (xmin, ctid, ...), which no column may take and DynamoDB
 * does not reserve: they get the hashed form a long name gets.  Made
 * distinct where two would be one (an attribute named as another's hashed
 * form, xmin and xmin_55efd647) by hashing the later one's name again with
 * the attempt's number as the seed; names made to collide on purpose
 * through a chain of hashes give up after a few attempts, with an error.
 * Returns whether any column is not its attribute's name: then the
 * catalog keeps those names (ddb_key_names_array).
 */
bool
ddb_pg_key_columns(const char *const *attrs, int n, char **cols)
{
	bool		renamed = false;

	for (int k = 0; k < n; k++)
	{
		int			len = strlen(attrs[k]);
		int			attempt = 0;

		cols[k] = SystemAttributeByName(attrs[k]) != NULL ?
			hashed_name(attrs[k], len, hash_bytes((const unsigned char *) attrs[k], len)) :
			ddb_pg_name(attrs[k]);
		for (int c = 0; c < k; c++)
			if (strcmp(cols[c], cols[k]) == 0)
			{
				if (++attempt > 8)
					ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
							  "One or more parameter values were invalid: ddb found no column name for key attribute %s that differs from the other key attributes' columns",
							  attrs[k]);
				cols[k] = hashed_name(attrs[k], len,
									  (uint32) hash_bytes_extended((const unsigned char *) attrs[k],
																   len, attempt));
				c = -1;			/* compare the new name with all again */
			}
		renamed |= strcmp(cols[k], attrs[k]) != 0;
	}
	return renamed;
}

/*
 * The catalog's key_names for columns cols of key attributes attrs: the
 * attribute's name where its column has another, NULL where the column is
 * named as its attribute, so that renaming such a column renames the
 * attribute, as on a table whose columns all are.
 */
Datum
ddb_key_names_array(const char *const *attrs, char *const *cols, int n)
{
	Datum		elems[DDB_MAX_KEY_COLUMNS];
	bool		nulls[DDB_MAX_KEY_COLUMNS];
	int			dims[1] = {n};
	int			lbs[1] = {1};

	for (int k = 0; k < n; k++)
	{
		nulls[k] = strcmp(cols[k], attrs[k]) == 0;
		elems[k] = nulls[k] ? (Datum) 0 : CStringGetTextDatum(attrs[k]);
	}
	return PointerGetDatum(construct_md_array(elems, nulls, 1, dims, lbs, TEXTOID, -1, false,
											  TYPALIGN_INT));
}

/* DynamoDB's rule for table and index names, as a validation message. */
bool
ddb_valid_name_chars(const char *name)
{
	for (const char *p = name; *p; p++)
		if (!(isalnum((unsigned char) *p) || *p == '_' || *p == '-' || *p == '.'))
			return false;
	return true;
}

/* The schema of DynamoDB's namespace; InvalidOid when it does not exist. */
Oid
ddb_schema_oid(void)
{
	return get_namespace_oid(ddb_schema ? ddb_schema : "public", true);
}

/* ------------------------------------------------------------------------
 * The catalog cache
 * ------------------------------------------------------------------------
 */
/*
 * Every relcache invalidation (registered by ddb_api_init: a backend has
 * only ten such callbacks, so this one also serves the sweep).
 */
static void
table_cache_invalidate(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS status;
	TableCacheEntry *e;

	name_cache_generation++;
	note_suspect(relid);
	if (table_cache == NULL)
		return;
	if (OidIsValid(relid))
	{
		e = hash_search(table_cache, &relid, HASH_FIND, NULL);
		if (e)
			e->valid = false;
		return;
	}
	hash_seq_init(&status, table_cache);
	while ((e = hash_seq_search(&status)) != NULL)
		e->valid = false;
}

/*
 * The catalog appeared in version 0.2 of the extension's SQL objects.  A
 * library installed over a database whose extension is still at 0.1 (the
 * library is per installation, the objects per database) must say to
 * update the extension, not fail on a missing relation.  Two syscache
 * lookups, once per catalog cache fill.
 */
void
ddb_check_catalog_version(void)
{
	Oid			nsp = get_namespace_oid("ddb_internal", true);

	if (!OidIsValid(nsp) || !OidIsValid(get_relname_relid("tables", nsp)))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"ddb\" in this database is older than the ddb library"),
				 errdetail("Its catalog %s is missing: the extension's objects were created by an earlier version.",
						   TABLES_CATALOG),
				 errhint("Run ALTER EXTENSION ddb UPDATE in this database.")));
}

/* Read a table's catalog row into info (allocated in cxt). */
static void
table_info_load(Oid relid, MemoryContext cxt, DdbTableInfo *info)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		args[1] = {ObjectIdGetDatum(relid)};
	int			pinned;

	memset(info, 0, sizeof(DdbTableInfo));
	info->relid = relid;
	ddb_check_catalog_version();
	/* "relid = $1" is regclass = oid: see ddb_search_path_pin */
	pinned = ddb_search_path_pin();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* the catalog as it is now, not as the transaction's snapshot saw it */
	PushActiveSnapshot(GetLatestSnapshot());
	if (SPI_execute_with_args("SELECT table_name, key_names, table_id::text, "
							  "extract(epoch FROM created)::numeric::text, billing_mode, "
							  "read_capacity, write_capacity, "
							  "extract(epoch FROM billing_changed)::numeric::text "
							  "FROM " TABLES_CATALOG " WHERE relid = $1",
							  1, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read %s", TABLES_CATALOG);
	PopActiveSnapshot();
	if (SPI_processed > 0)
	{
		HeapTuple	tup = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		MemoryContext old = MemoryContextSwitchTo(cxt);
		bool		isnull;
		Datum		d;

		info->registered = true;
		info->table_name = SPI_getvalue(tup, desc, 1);
		d = SPI_getbinval(tup, desc, 2, &isnull);
		if (!isnull)
		{
			Datum	   *elems;
			bool	   *nulls;
			int			n;

			deconstruct_array(DatumGetArrayTypeP(d), TEXTOID, -1, false,
							  TYPALIGN_INT, &elems, &nulls, &n);
			info->nkeynames = n;
			info->key_names = palloc0(sizeof(char *) * Max(n, 1));
			for (int i = 0; i < n; i++)
				info->key_names[i] = nulls[i] ? NULL : TextDatumGetCString(elems[i]);
		}
		info->table_id = SPI_getvalue(tup, desc, 3);
		info->created = SPI_getvalue(tup, desc, 4);
		info->billing_mode = SPI_getvalue(tup, desc, 5);
		info->read_capacity = DatumGetInt64(SPI_getbinval(tup, desc, 6, &isnull));
		info->write_capacity = DatumGetInt64(SPI_getbinval(tup, desc, 7, &isnull));
		info->billing_changed = SPI_getvalue(tup, desc, 8);
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	ddb_search_path_unpin(pinned);
}

static bool
same_string(const char *a, const char *b)
{
	return a == NULL ? b == NULL : (b != NULL && strcmp(a, b) == 0);
}

/* Do two loads of a table's catalog row say the same? */
static bool
table_info_equal(const DdbTableInfo *a, const DdbTableInfo *b)
{
	if (a->registered != b->registered || a->nkeynames != b->nkeynames ||
		a->read_capacity != b->read_capacity || a->write_capacity != b->write_capacity ||
		!same_string(a->table_name, b->table_name) || !same_string(a->table_id, b->table_id) ||
		!same_string(a->created, b->created) || !same_string(a->billing_mode, b->billing_mode) ||
		!same_string(a->billing_changed, b->billing_changed))
		return false;
	for (int i = 0; i < a->nkeynames; i++)
		if (!same_string(a->key_names[i], b->key_names[i]))
			return false;
	return true;
}

/*
 * A table's catalog information (valid until the next relcache
 * invalidation).  Any invalidation of the table (a VACUUM or ANALYZE of
 * it, a GRANT) makes the next call read the row again; when it reads what
 * it read before, the strings handed out before stay, so that a caller
 * holding a key name across a lock (which takes in invalidations) does not
 * find it freed.  A table without a row (created by hand while the event
 * trigger was off) gets defaults: its names are its relation's.
 */
const DdbTableInfo *
ddb_table_info(Oid relid)
{
	TableCacheEntry *e;
	bool		found;

	if (table_cache == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(TableCacheEntry);
		ctl.hcxt = CacheMemoryContext;
		table_cache = hash_create("ddb table cache", 64, &ctl,
								  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	/*
	 * The last table asked for, without hashing: an item API call asks for
	 * its table's key names once per key and per item.  Entries are only
	 * marked invalid (removed only when their table is gone, where no
	 * caller holds one: ddb_forget_tables), so the pointer stays good.
	 */
	if (last_entry != NULL && last_entry->relid == relid && last_entry->valid)
		return &last_entry->info;
	e = hash_search(table_cache, &relid, HASH_ENTER, &found);
	if (!found)
	{
		e->valid = false;
		e->cxt = NULL;
	}
	if (!e->valid)
	{
		MemoryContext cxt = AllocSetContextCreate(CacheMemoryContext, "ddb table info",
												  ALLOCSET_SMALL_SIZES);
		DdbTableInfo info;

		PG_TRY();
		{
			table_info_load(relid, cxt, &info);
		}
		PG_CATCH();
		{
			MemoryContextDelete(cxt);
			PG_RE_THROW();
		}
		PG_END_TRY();
		/* the entry may have moved meanwhile: look it up again */
		e = hash_search(table_cache, &relid, HASH_ENTER, &found);
		if (found && e->cxt && table_info_equal(&e->info, &info))
			MemoryContextDelete(cxt);	/* unchanged: keep the strings given out */
		else
		{
			if (found && e->cxt)
				MemoryContextDelete(e->cxt);
			e->cxt = cxt;
			e->info = info;
		}
		e->valid = true;
	}
	last_entry = e;
	return &e->info;
}

/* A dropped table's entry goes (ddb_forget_tables). */
static void
table_cache_forget(void *entry)
{
	TableCacheEntry *e = (TableCacheEntry *) entry;

	if (e->cxt)
		MemoryContextDelete(e->cxt);
	if (e == last_entry)
		last_entry = NULL;
}

/*
 * Forget what ddb's caches hold about the tables gone(relid) names, which
 * must be missing from pg_class (see ddb_keyinfo_forget).  The caches keep
 * an entry per table and never remove one on their own, so that a pointer
 * handed out stays good for as long as its caller runs (see last_entry,
 * name_cache_last, gsi_last, stream_last, and engine/ddb_shape.c's key
 * schemas); where tables come and go, the entries of dropped ones pile
 * up, some kilobytes each.  So this runs only where no caller holds
 * anything: in the HTTP worker between two requests
 * (ddb_forget_dropped_tables), and in a backend after a transaction
 * committed (tables_xact_callback).  Returns how many entries it removed.
 */
static int
ddb_forget_tables(bool (*gone) (Oid relid))
{
	HASH_SEQ_STATUS status;
	int			n = ddb_cache_forget(table_cache, gone, table_cache_forget);

	/* names are the key here: look at each entry's table */
	if (name_cache != NULL)
	{
		NameCacheEntry *e;

		hash_seq_init(&status, name_cache);
		while ((e = hash_seq_search(&status)) != NULL)
			if (gone(e->relid))
			{
				if (e == name_cache_last)
					name_cache_last = NULL;
				hash_search(name_cache, e->name, HASH_REMOVE, NULL);
				n++;
			}
	}
	n += ddb_gsi_cache_forget(gone);
	n += ddb_stream_cache_forget(gone);
	n += ddb_keyinfo_forget(gone);
	return n;
}

/* Is relid no table any more (in a transaction: reads pg_class)? */
static bool
table_missing(Oid relid)
{
	return !SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid));
}

/*
 * Forget the tables that no longer exist.  The HTTP worker, a process that
 * lives as long as the server, calls this between two requests, in a
 * transaction.
 */
int
ddb_forget_dropped_tables(void)
{
	return ddb_forget_tables(table_missing);
}

/*
 * A backend's sweep.  A backend may live as long as a connection pool
 * keeps it, and a test suite may create and drop thousands of tables
 * through it, so it forgets dropped tables too, at the one point where no
 * caller of ddb holds a pointer into its caches: the end of a top-level
 * transaction.  (ddb has no procedure, so no ddb function is running when
 * a procedure's COMMIT ends one either; a cursor kept past the commit has
 * run its query to the end before.)  The pg_class lookups need the
 * transaction, the removal its commit: at PRE_COMMIT the tables found
 * missing are noted (a table this transaction dropped is missing already),
 * and at COMMIT, when each of those drops has committed and nothing of ddb
 * runs any more, their entries go; an abort removes nothing.
 *
 * Only the tables that a relcache invalidation named since the last sweep
 * are looked up (every DROP sends one, and so does the abort of a CREATE),
 * not every table cached: a backend of a pool may hold thousands, and a
 * VACUUM, ANALYZE, GRANT or TRUNCATE of any of them sends one too, and a
 * pass over all of them made each such commit pay for every table cached
 * (0.7 ms of CPU for 2000).  A reset, or more tables than the list holds,
 * makes the next sweep look at all of them.  Background workers keep to
 * their own points (the HTTP worker's between requests; the TTL worker
 * holds its tables across its transactions).
 */
#define SWEEP_SUSPECTS	64

/* the cached tables a relcache invalidation named since the last sweep */
static Oid	suspects[SWEEP_SUSPECTS];
static int	nsuspects = 0;
static bool sweep_all = false;	/* every cached table is a suspect */

/* what this commit's PRE_COMMIT took, given back should it abort after all */
static Oid	taken[SWEEP_SUSPECTS];
static int	ntaken = 0;
static bool taken_all = false;
static bool have_taken = false;

static Oid *doomed = NULL;		/* noted at PRE_COMMIT, sorted, in TopMemoryContext */
static int	ndoomed = 0;
static int	doomed_size = 0;

static void
add_suspect(Oid relid)
{
	if (sweep_all || (nsuspects > 0 && suspects[nsuspects - 1] == relid))
		return;
	if (nsuspects == SWEEP_SUSPECTS)
		sweep_all = true;
	else
		suspects[nsuspects++] = relid;
}

/* From every relcache invalidation (table_cache_invalidate): two hash probes at most. */
static void
note_suspect(Oid relid)
{
	if (!OidIsValid(relid))
		sweep_all = true;
	else if (!sweep_all &&
			 (ddb_keyinfo_cached(relid) ||
			  (table_cache != NULL && hash_search(table_cache, &relid, HASH_FIND, NULL) != NULL)))
		add_suspect(relid);
}

/* note relid when it is missing (once per cache that holds it); remove nothing */
static bool
note_missing(Oid relid)
{
	if (!table_missing(relid))
		return false;
	if (ndoomed == doomed_size)
	{
		doomed_size = Max(16, doomed_size * 2);
		doomed = doomed == NULL
			? MemoryContextAlloc(TopMemoryContext, sizeof(Oid) * doomed_size)
			: repalloc(doomed, sizeof(Oid) * doomed_size);
	}
	doomed[ndoomed++] = relid;
	return false;
}

static bool
is_doomed(Oid relid)
{
	return bsearch(&relid, doomed, ndoomed, sizeof(Oid), oid_cmp) != NULL;
}

static void
tables_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			ndoomed = 0;
			if ((nsuspects == 0 && !sweep_all) || MyBackendType != B_BACKEND)
				return;

			/*
			 * Take the suspects first: one an invalidation adds during the
			 * lookups (which may take in invalidations) waits for the next
			 * commit, and an error among them gives all back (ABORT).
			 */
			taken_all = sweep_all;
			ntaken = nsuspects;
			memcpy(taken, suspects, sizeof(Oid) * nsuspects);
			have_taken = true;
			sweep_all = false;
			nsuspects = 0;
			if (taken_all)
				ddb_forget_tables(note_missing);
			else
				for (int i = 0; i < ntaken; i++)
					(void) note_missing(taken[i]);
			if (ndoomed > 1)
				qsort(doomed, ndoomed, sizeof(Oid), oid_cmp);
			break;
		case XACT_EVENT_COMMIT:
			if (ndoomed > 0)
				ddb_forget_tables(is_doomed);
			ndoomed = 0;
			have_taken = false;
			break;
		case XACT_EVENT_ABORT:
			/* the next commit looks again at what this one took */
			if (have_taken)
			{
				if (taken_all)
					sweep_all = true;
				for (int i = 0; i < ntaken; i++)
					add_suspect(taken[i]);
			}
			have_taken = false;
			ndoomed = 0;
			break;
		default:
			break;
	}
}

/* The DynamoDB name of a table (palloc'd). */
char *
ddb_table_name(Relation rel)
{
	const DdbTableInfo *info = ddb_table_info(RelationGetRelid(rel));

	if (info->table_name != NULL)
		return pstrdup(info->table_name);
	return pstrdup(RelationGetRelationName(rel));
}

/*
 * The DynamoDB name of key column k: the catalog's long name, or the
 * column's name.
 */
const char *
ddb_table_key_name(Relation rel, int k)
{
	const char *names[DDB_MAX_KEY_COLUMNS];

	ddb_table_key_names(rel, names);
	return names[k];
}

/*
 * The DynamoDB names of all of a table's key columns into names[] (as
 * ddb_table_key_name gives them one by one): one look-up of the key schema
 * and of the catalog information for a caller that needs them all.  Valid
 * as ddb_table_info's strings are (see there).
 */
void
ddb_table_key_names(Relation rel, const char **names)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(rel);
	const DdbTableInfo *info = ddb_table_info(RelationGetRelid(rel));

	for (int k = 0; k < ki->nkeys; k++)
		names[k] = k < info->nkeynames && info->key_names[k] != NULL ? info->key_names[k] :
			NameStr(TupleDescAttr(RelationGetDescr(rel), ki->keyattno[k] - 1)->attname);
}

/* ------------------------------------------------------------------------
 * Resolving and opening tables
 * ------------------------------------------------------------------------
 */

/*
 * A cached answer of ddb_table_lookup, or InvalidOid; *known says whether
 * the name was found once, even if its answer is stale now.
 */
static Oid
name_cache_get(const char *name, bool *known)
{
	NameCacheEntry *e;
	const char *schema = ddb_schema ? ddb_schema : "public";

	*known = false;
	if (name_cache_last != NULL && strcmp(name_cache_last->name, name) == 0)
		e = name_cache_last;
	else
	{
		if (name_cache == NULL || strlen(name) >= NAME_CACHE_KEYLEN)
			return InvalidOid;
		e = hash_search(name_cache, name, HASH_FIND, NULL);
	}
	*known = e != NULL;
	if (e == NULL || e->generation != name_cache_generation || strcmp(e->schema, schema) != 0)
		return InvalidOid;
	name_cache_last = e;
	return e->relid;
}

/* Remember an answer found since 'generation' (stale at once if anything changed meanwhile). */
static void
name_cache_put(const char *name, Oid relid, uint64 generation)
{
	NameCacheEntry *e;
	const char *schema = ddb_schema ? ddb_schema : "public";

	if (strlen(name) >= NAME_CACHE_KEYLEN || strlen(schema) >= NAMEDATALEN)
		return;
	if (name_cache == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = NAME_CACHE_KEYLEN;
		ctl.entrysize = sizeof(NameCacheEntry);
		ctl.hcxt = CacheMemoryContext;
		name_cache = hash_create("ddb table names", 64, &ctl,
								 HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);

		/* relcache invalidations reach table_cache_invalidate (ddb_api_init) */
		CacheRegisterSyscacheCallback(NAMESPACEOID, name_cache_invalidate, (Datum) 0);
	}
	e = hash_search(name_cache, name, HASH_ENTER, NULL);
	strlcpy(e->schema, schema, NAMEDATALEN);
	e->generation = generation;
	e->relid = relid;
}

/*
 * The relation named relname in namespace nsp, or InvalidOid, read from
 * pg_class's name index rather than through the syscache: the names come
 * from clients, and every name that does not exist would leave a negative
 * entry in the syscache, which PostgreSQL 15 never evicts.  An endpoint
 * worker lives as long as the server, and grew about 225 bytes for each
 * distinct missing table name any key holder sent (a name's lookup comes
 * before any privilege check).  Only for names not found before: a name
 * name_cache knows (its answer gone stale with an invalidation) named a
 * table, which the syscache finds, as it did, from its positive entry.
 */
static Oid
relname_relid_uncached(const char *relname, Oid nsp)
{
	Relation	pg_class = table_open(RelationRelationId, AccessShareLock);
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			relid = InvalidOid;

	ScanKeyInit(&key[0], Anum_pg_class_relname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum(relname));
	ScanKeyInit(&key[1], Anum_pg_class_relnamespace, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(nsp));
	scan = systable_beginscan(pg_class, ClassNameNspIndexId, true, NULL, 2, key);
	if (HeapTupleIsValid(tup = systable_getnext(scan)))
		relid = ((Form_pg_class) GETSTRUCT(tup))->oid;
	systable_endscan(scan);
	table_close(pg_class, AccessShareLock);
	return relid;
}

/*
 * The table name in this server's ARN of a table (arn:aws:dynamodb:
 * <ddb.region>:<ddb.account_id>:table/<name>, as DescribeTable's TableArn
 * shows it), or NULL when 'name' is no such ARN.  DynamoDB takes a
 * table's ARN wherever a TableName names an existing table.
 */
const char *
ddb_table_name_in_arn(const char *name)
{
	char	   *prefix;
	size_t		plen;
	const char *inner = NULL;

	if (name == NULL || strncmp(name, "arn:", 4) != 0)
		return NULL;
	prefix = psprintf("arn:aws:dynamodb:%s:%s:table/", ddb_region, ddb_account_id);
	plen = strlen(prefix);
	if (strncmp(name, prefix, plen) == 0 && name[plen] != '\0' && strchr(name + plen, '/') == NULL)
		inner = name + plen;
	pfree(prefix);
	return inner;
}

/* The relation of a DynamoDB table name (or its ARN), or InvalidOid. */
Oid
ddb_table_lookup(const char *name)
{
	Oid			nsp;
	Oid			relid;
	const DdbTableInfo *info;
	char	   *relname;
	uint64		generation = name_cache_generation;
	bool		known;

	const char *inner = ddb_table_name_in_arn(name);

	if (inner != NULL)
		name = inner;
	if (name == NULL || name[0] == '\0')
		return InvalidOid;
	if (OidIsValid(relid = name_cache_get(name, &known)))
		return relid;
	nsp = ddb_schema_oid();
	if (!OidIsValid(nsp))
		return InvalidOid;
	relname = ddb_pg_name(name);
	relid = known ? get_relname_relid(relname, nsp) : relname_relid_uncached(relname, nsp);
	if (!OidIsValid(relid) || get_rel_relkind(relid) != RELKIND_RELATION)
		return InvalidOid;
	/* is it that table, and a ddb table? */
	{
		HeapTuple	tp = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
		Oid			am;

		if (!HeapTupleIsValid(tp))
			return InvalidOid;
		am = ((Form_pg_class) GETSTRUCT(tp))->relam;
		ReleaseSysCache(tp);
		if (am != get_table_am_oid("ddb", false))
			return InvalidOid;
	}
	info = ddb_table_info(relid);
	if (info->table_name != NULL ? strcmp(info->table_name, name) != 0 :
		strcmp(relname, name) != 0)
		return InvalidOid;
	name_cache_put(name, relid, generation);
	return relid;
}

/*
 * DescribeTable's and DeleteTable's text names the table; the others' not,
 * as DynamoDB's.  Their detail, which SQL callers see (the endpoint sends
 * the message alone), names it and where it was looked for: a name typed
 * in another case ('music' for Music) is the common miss.
 */
static void
table_not_found(const char *name, bool named)
{
	if (named)
		ddb_raise(DDB_ERRCODE_RESOURCE_NOT_FOUND, "ResourceNotFoundException",
				  DDB_MSG_TABLE_NOT_FOUND, name);
	ereport(ERROR,
			(errcode(DDB_ERRCODE_RESOURCE_NOT_FOUND),
			 errmsg("ResourceNotFoundException: " DDB_MSG_RESOURCE_NOT_FOUND),
			 name ? errdetail("There is no ddb table named \"%s\" in schema \"%s\" (ddb.schema); table names are case-sensitive.",
							  name, ddb_schema ? ddb_schema : "public") : 0));
}

static Relation table_open_by_name(const char *name, AclMode mode, bool named);

/*
 * Open a DynamoDB table by name for an operation: ResourceNotFoundException
 * when there is none, then ddb_open_table's lock, privilege and row
 * security checks.
 */
Relation
ddb_table_open(const char *name, AclMode mode)
{
	return table_open_by_name(name, mode, false);
}

/*
 * ddb_table_open whose ResourceNotFoundException names the table, as
 * DynamoDB's DescribeTable and DeleteTable do ("Requested resource not
 * found: Table: <name> not found"), also when the table is dropped while
 * the call waits for its lock.
 */
Relation
ddb_table_open_named(const char *name, AclMode mode)
{
	return table_open_by_name(name, mode, true);
}

static Relation
table_open_by_name(const char *name, AclMode mode, bool named)
{
	LOCKMODE	lockmode = ddb_api_lockmode(mode);

	for (;;)
	{
		uint64		generation = name_cache_generation;
		Oid			relid = ddb_table_lookup(name);

		if (!OidIsValid(relid))
			table_not_found(name, named);
		LockRelationOid(relid, lockmode);

		/*
		 * Taking the lock processes the invalidations that arrived: if any
		 * did, the name may have moved meanwhile, or its table gone
		 * (RangeVarGetRelidExtended checks the same way).  Keep the table
		 * only if it still answers to the name.  Then it exists: every
		 * relcache invalidation, a drop's included, moves the generation,
		 * and none arrived since the name was found, or the name was found
		 * again after them, under the lock.  (Had we held the lock before,
		 * nobody could have dropped the table since; our own transaction's
		 * drop is taken in at its command's end.)  So the table is opened
		 * without probing the catalog for it once more.
		 */
		if (generation == name_cache_generation || ddb_table_lookup(name) == relid)
			return ddb_open_locked_table(relid, mode);
		UnlockRelationOid(relid, lockmode);
	}
}

/*
 * The table argument of an item function: text (a DynamoDB name in
 * ddb.schema) or regclass (a relation).  NULL is ValidationException.
 */
Relation
ddb_table_open_arg(FunctionCallInfo fcinfo, int argno, AclMode mode)
{
	Oid			argtype;

	if (PG_ARGISNULL(argno))
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
				  DDB_MSG_REQUIRED_PARAMETER, "TableName");
	argtype = get_fn_expr_argtype(fcinfo->flinfo, argno);
	if (argtype == REGCLASSOID || argtype == OIDOID)
		return ddb_open_table(PG_GETARG_OID(argno), mode);
	return ddb_table_open(text_to_cstring(PG_GETARG_TEXT_PP(argno)), mode);
}

/* ------------------------------------------------------------------------
 * Catalog changes
 * ------------------------------------------------------------------------
 */

/* The catalog's owner, who installed the extension. */
Oid
ddb_catalog_owner(void)
{
	Oid			catalog = get_relname_relid("tables", get_namespace_oid("ddb_internal", false));
	HeapTuple	tp = SearchSysCache1(RELOID, ObjectIdGetDatum(catalog));
	Oid			owner;

	if (!HeapTupleIsValid(tp))
		elog(ERROR, "cache lookup failed for %s", TABLES_CATALOG);
	owner = ((Form_pg_class) GETSTRUCT(tp))->relowner;
	ReleaseSysCache(tp);
	return owner;
}

/*
 * Run SQL as 'role' (the catalogs' owner, the owner of an index table) on
 * behalf of the caller, until ddb_run_as_end: the user is switched, and
 * search_path is pinned to pg_catalog, pg_temp meanwhile
 * (ddb_search_path_pin), as a SECURITY DEFINER function's SET clause would
 * make it: an "=(regclass, oid)" that a role created in public must not run
 * as the owner, a superuser.  An error restores both, with the
 * transaction's abort.  SQL run as the caller pins search_path alone.
 */
void
ddb_run_as_begin(Oid role, DdbRunAs *save)
{
	GetUserIdAndSecContext(&save->userid, &save->sec_context);
	SetUserIdAndSecContext(role, save->sec_context | SECURITY_LOCAL_USERID_CHANGE);
	save->nestlevel = ddb_search_path_pin();
}

void
ddb_run_as_end(const DdbRunAs *save)
{
	ddb_search_path_unpin(save->nestlevel);
	SetUserIdAndSecContext(save->userid, save->sec_context);
}

/*
 * Run one statement on ddb's catalogs (ddb_internal.tables, .gsi, ...) as
 * their owner, who installed the extension (SPI connected).
 */
void
ddb_catalog_exec(const char *sql, int nargs, Oid *argtypes, Datum *args,
				 const char *nulls, int expect)
{
	DdbRunAs	save;

	ddb_run_as_begin(ddb_catalog_owner(), &save);
	if (SPI_execute_with_args(sql, nargs, argtypes, args, nulls, false, 0) != expect)
		elog(ERROR, "ddb catalog statement failed: %s", sql);
	ddb_run_as_end(&save);
}

/*
 * The column type of a key type.  String keys are text in the "C"
 * collation: DynamoDB orders them by UTF-8 bytes, as the tree does, so the
 * planner's key scan serves ranges and ORDER BY in any database's locale.
 */
const char *
ddb_key_sql_type(DdbKeyType t)
{
	return t == DDB_KEY_S ? "text COLLATE \"C\"" : t == DDB_KEY_N ? "numeric" : "bytea";
}

/*
 * CreateTable's core: the relation (key columns named for the key
 * attributes, then the item column) and its catalog row.  The caller has
 * validated the request.  Returns the new relation's OID.
 */
Oid
ddb_create_table_core(const DdbCreateTable *ct)
{
	Oid			nsp = ddb_schema_oid();
	char	   *relname = ddb_pg_name(ct->name);
	char	   *colnames[DDB_MAX_KEY_COLUMNS];
	bool		longnames;
	const char *itemcol = "item";
	StringInfoData sql;
	Oid			relid;
	int			pinned;
	MemoryContext cxt = CurrentMemoryContext;

	if (!OidIsValid(nsp))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_SCHEMA),
				 errmsg("schema \"%s\" does not exist", ddb_schema),
				 errhint("Set ddb.schema to the schema that holds DynamoDB's tables.")));
	if (OidIsValid(get_relname_relid(relname, nsp)))
		ddb_raise(DDB_ERRCODE_RESOURCE_IN_USE, "ResourceInUseException",
				  DDB_MSG_TABLE_IN_USE, ct->name);
	longnames = ddb_pg_key_columns((const char *const *) ct->keys, ct->nkeys, colnames);
	for (bool again = true; again;)
	{
		again = false;
		for (int k = 0; k < ct->nkeys; k++)
			if (strcmp(colnames[k], itemcol) == 0)
			{
				itemcol = psprintf("%s_", itemcol);
				again = true;
			}
	}

	initStringInfo(&sql);
	appendStringInfo(&sql, "CREATE TABLE %s (",
					 quote_qualified_identifier(get_namespace_name(nsp), relname));
	for (int k = 0; k < ct->nkeys; k++)
		appendStringInfo(&sql, "%s %s NOT NULL, ", quote_identifier(colnames[k]),
						 ddb_key_sql_type(ct->keytypes[k]));
	appendStringInfo(&sql, "%s jsonb NOT NULL) USING ddb", quote_identifier(itemcol));

	/* the column types and collation: pg_catalog's, whatever the caller's path */
	pinned = ddb_search_path_pin();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	/*
	 * Another transaction creating the same name, not yet committed, is
	 * invisible to the check above: CREATE TABLE then waits for it and,
	 * once it commits, fails on the catalogs' unique index (pg_type's or
	 * pg_class's name).  That is the same "already exists", as DynamoDB
	 * answers a second CreateTable, not an internal error.
	 */
	PG_TRY();
	{
		if (SPI_execute(sql.data, false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not create table \"%s\"", ct->name);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		if (edata->sqlerrcode != ERRCODE_UNIQUE_VIOLATION &&
			edata->sqlerrcode != ERRCODE_DUPLICATE_TABLE)
			PG_RE_THROW();
		FlushErrorState();
		ddb_raise(DDB_ERRCODE_RESOURCE_IN_USE, "ResourceInUseException",
				  DDB_MSG_TABLE_IN_USE, ct->name);
	}
	PG_END_TRY();
	relid = get_relname_relid(relname, nsp);
	if (!OidIsValid(relid))
		elog(ERROR, "table \"%s\" was not created", ct->name);
	{
		Oid			argtypes[6] = {OIDOID, TEXTOID, TEXTARRAYOID, TEXTOID, INT8OID, INT8OID};
		Datum		args[6];
		char		nulls[6] = "      ";

		args[0] = ObjectIdGetDatum(relid);
		args[1] = (Datum) 0;
		nulls[1] = 'n';
		if (strcmp(relname, ct->name) != 0)
		{
			args[1] = CStringGetTextDatum(ct->name);
			nulls[1] = ' ';
		}
		args[2] = (Datum) 0;
		nulls[2] = 'n';
		if (longnames)
		{
			args[2] = ddb_key_names_array((const char *const *) ct->keys, colnames, ct->nkeys);
			nulls[2] = ' ';
		}
		args[3] = CStringGetTextDatum(ct->billing_mode);
		args[4] = Int64GetDatum(ct->read_capacity);
		args[5] = Int64GetDatum(ct->write_capacity);
		ddb_catalog_exec("WITH u AS (UPDATE " TABLES_CATALOG " SET table_name = $2, key_names = $3, "
						 "billing_mode = $4, read_capacity = $5, write_capacity = $6, auto = false "
						 "WHERE relid = $1 RETURNING 1) "
						 "INSERT INTO " TABLES_CATALOG " (relid, table_name, key_names, billing_mode, "
						 "read_capacity, write_capacity) SELECT $1, $2, $3, $4, $5, $6 "
						 "WHERE NOT EXISTS (SELECT FROM u)",
						 6, argtypes, args, nulls, SPI_OK_INSERT);
	}
	SPI_finish();
	ddb_search_path_unpin(pinned);
	CacheInvalidateRelcacheByRelid(relid);
	CommandCounterIncrement();
	return relid;
}

/*
 * DeleteTable's core: DROP TABLE, as the caller (who must own the table);
 * the sql_drop event trigger removes the catalog rows and the indexes.
 */
void
ddb_delete_table_core(Relation rel)
{
	char	   *qualname = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
													  RelationGetRelationName(rel));
	Oid			relid = RelationGetRelid(rel);
	int			pinned;

	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, RelationGetRelationName(rel));
	relation_close(rel, NoLock);
	pinned = ddb_search_path_pin();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute(psprintf("DROP TABLE %s", qualname), false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not drop table %s", qualname);
	SPI_finish();
	ddb_search_path_unpin(pinned);
	CommandCounterIncrement();
}

/* ------------------------------------------------------------------------
 * DescribeTable
 * ------------------------------------------------------------------------
 */

/* arn:aws:dynamodb:<region>:<account>:table/<name> */
char *
ddb_table_arn(const char *name)
{
	return psprintf("arn:aws:dynamodb:%s:%s:table/%s", ddb_region, ddb_account_id, name);
}

/*
 * DynamoDB's TableDescription of a table, as JSON text: everything SDKs
 * read.  status is TableStatus (ACTIVE, or DELETING for DeleteTable).
 */
void
ddb_describe_table_json(Relation rel, const char *status, StringInfo buf)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(rel);
	const DdbTableInfo *info = ddb_table_info(RelationGetRelid(rel));
	char	   *name = ddb_table_name(rel);
	double		count = rel->rd_rel->reltuples;
	int64		size;
	bool		first = true;
	bool		provisioned = info->billing_mode && strcmp(info->billing_mode, "PROVISIONED") == 0;

	/*
	 * DeleteTable's description (status DELETING) leaves out the attribute
	 * definitions, the key schema, the creation time and the indexes, as
	 * DynamoDB's does (ScyllaDB's tests, run against the service).
	 */
	bool		full = strcmp(status, "DELETING") != 0;

	/* a table created PAY_PER_REQUEST has been so since its creation */
	const char *ppr_since = info->billing_changed ? info->billing_changed :
		provisioned ? NULL : info->created ? info->created : "0";

	/*
	 * Both figures are the planner's, which ANALYZE and VACUUM refresh as
	 * DynamoDB refreshes its own about every six hours.  A table the
	 * planner holds empty (or has not counted yet) is 0 bytes, as
	 * DynamoDB's empty table is, not the pages its empty tree keeps.
	 */
	size = count <= 0 ? 0 :
		DatumGetInt64(DirectFunctionCall1(pg_total_relation_size,
										  ObjectIdGetDatum(RelationGetRelid(rel))));
	appendStringInfoChar(buf, '{');
	if (full)
	{
		ddb_json_key(buf, &first, "AttributeDefinitions");
		appendStringInfoChar(buf, '[');
		for (int k = 0; k < ki->nkeys; k++)
		{
			appendStringInfoString(buf, k ? ",{\"AttributeName\":" : "{\"AttributeName\":");
			ddb_json_cstring(buf, ddb_table_key_name(rel, k));
			appendStringInfo(buf, ",\"AttributeType\":\"%s\"}", ddb_key_type_name(ki->keytype[k]));
		}
		ddb_gsi_attribute_definitions(rel, buf);
		appendStringInfoChar(buf, ']');
	}
	ddb_json_key(buf, &first, "TableName");
	ddb_json_cstring(buf, name);
	if (full)
	{
		ddb_json_key(buf, &first, "KeySchema");
		appendStringInfoChar(buf, '[');
		for (int k = 0; k < ki->nkeys; k++)
		{
			appendStringInfoString(buf, k ? ",{\"AttributeName\":" : "{\"AttributeName\":");
			ddb_json_cstring(buf, ddb_table_key_name(rel, k));
			appendStringInfo(buf, ",\"KeyType\":\"%s\"}", k == 0 ? "HASH" : "RANGE");
		}
		appendStringInfoChar(buf, ']');
	}
	ddb_json_key(buf, &first, "TableStatus");
	ddb_json_cstring(buf, status);
	if (full)
	{
		ddb_json_key(buf, &first, "CreationDateTime");
		appendStringInfoString(buf, info->created ? info->created : "0");
	}
	ddb_json_key(buf, &first, "ProvisionedThroughput");
	appendStringInfo(buf, "{\"NumberOfDecreasesToday\":0,\"ReadCapacityUnits\":" INT64_FORMAT
					 ",\"WriteCapacityUnits\":" INT64_FORMAT "}",
					 provisioned ? info->read_capacity : 0,
					 provisioned ? info->write_capacity : 0);
	ddb_json_key(buf, &first, "TableSizeBytes");
	appendStringInfo(buf, INT64_FORMAT, size);
	ddb_json_key(buf, &first, "ItemCount");
	appendStringInfo(buf, "%.0f", count < 0 ? 0 : count);
	ddb_json_key(buf, &first, "TableArn");
	ddb_json_cstring(buf, ddb_table_arn(name));
	ddb_json_key(buf, &first, "TableId");
	ddb_json_cstring(buf, info->table_id ? info->table_id : "00000000-0000-0000-0000-000000000000");
	ddb_json_key(buf, &first, "BillingModeSummary");
	appendStringInfo(buf, "{\"BillingMode\":\"%s\"", provisioned ? "PROVISIONED" : "PAY_PER_REQUEST");
	if (ppr_since)
		appendStringInfo(buf, ",\"LastUpdateToPayPerRequestDateTime\":%s", ppr_since);
	appendStringInfoChar(buf, '}');
	if (full && ddb_index_count(rel, DDB_INDEX_LOCAL) > 0)
	{
		ddb_json_key(buf, &first, "LocalSecondaryIndexes");
		ddb_gsi_describe(rel, DDB_INDEX_LOCAL, buf);
	}
	if (full && ddb_gsi_exists(rel))
	{
		ddb_json_key(buf, &first, "GlobalSecondaryIndexes");
		ddb_gsi_describe(rel, DDB_INDEX_GLOBAL, buf);
	}
	ddb_stream_describe(rel, buf, &first);
	ddb_json_key(buf, &first, "DeletionProtectionEnabled");
	appendStringInfoString(buf, "false");
	appendStringInfoChar(buf, '}');
}

/* ------------------------------------------------------------------------
 * ListTables
 * ------------------------------------------------------------------------
 */
static int
name_cmp(const ListCell *a, const ListCell *b)
{
	return strcmp((const char *) lfirst(a), (const char *) lfirst(b));
}

/*
 * The DynamoDB names of the ddb tables in ddb.schema that the user may
 * read, in byte order.
 */
List *
ddb_list_table_names(void)
{
	Oid			nsp = ddb_schema_oid();
	Oid			am = get_table_am_oid("ddb", false);
	List	   *names = NIL;
	List	   *relids = NIL;
	List	   *relnames = NIL;
	ListCell   *lo,
			   *ln;
	Relation	pgclass;
	TableScanDesc scan;
	HeapTuple	tup;
	ScanKeyData key;

	if (!OidIsValid(nsp))
		return NIL;
	pgclass = table_open(RelationRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_class_relnamespace, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(nsp));
	scan = table_beginscan_catalog(pgclass, 1, &key);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_class c = (Form_pg_class) GETSTRUCT(tup);

		if (c->relkind == RELKIND_RELATION && c->relam == am &&
			pg_class_aclcheck(c->oid, GetUserId(), ACL_SELECT) == ACLCHECK_OK)
		{
			relids = lappend_oid(relids, c->oid);
			relnames = lappend(relnames, pstrdup(NameStr(c->relname)));
		}
	}
	table_endscan(scan);
	table_close(pgclass, AccessShareLock);

	/* the catalog rows, read after the scan (it reads them through SPI) */
	forboth(lo, relids, ln, relnames)
	{
		const DdbTableInfo *info = ddb_table_info(lfirst_oid(lo));

		names = lappend(names, info->table_name ? pstrdup(info->table_name) :
						lfirst(ln));
	}
	list_sort(names, name_cmp);
	return names;
}

/* ddb_list_tables() RETURNS SETOF text */
Datum
ddb_list_tables(PG_FUNCTION_ARGS)
{
	FuncCallContext *funcctx;
	List	   *names;

	if (SRF_IS_FIRSTCALL())
	{
		MemoryContext old;

		funcctx = SRF_FIRSTCALL_INIT();
		old = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		funcctx->user_fctx = ddb_list_table_names();
		MemoryContextSwitchTo(old);
	}
	funcctx = SRF_PERCALL_SETUP();
	names = funcctx->user_fctx;
	if (funcctx->call_cntr < list_length(names))
	{
		/* (SRF_RETURN_NEXT counts the call before it evaluates its result) */
		Datum		name = CStringGetTextDatum(list_nth(names, funcctx->call_cntr));

		SRF_RETURN_NEXT(funcctx, name);
	}
	SRF_RETURN_DONE(funcctx);
}

/*
 * CreateTable's checks of names, as DynamoDB makes them (the SQL function
 * and the protocol share them).
 */
void
ddb_check_create_table(const DdbCreateTable *ct)
{
	DdbValErrors e;

	if (ct->name == NULL)
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
				  DDB_MSG_REQUIRED_PARAMETER, "TableName");
	if (strlen(ct->name) < 3 || strlen(ct->name) > 255)
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
				  "TableName must be at least 3 characters long and at most 255 characters long");
	ddb_valerr_init(&e);
	if (!ddb_valid_name_chars(ct->name))
		ddb_valerr_add(&e, ct->name, "tableName",
					   "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+");
	for (int k = 0; k < ct->nkeys; k++)
	{
		char	   *member = psprintf("keySchema.%d.member.attributeName", k + 1);

		if (ct->keys[k] == NULL)
			ddb_valerr_add(&e, NULL, member, "Member must not be null");
		else if (strlen(ct->keys[k]) < 1)
			ddb_valerr_add(&e, ct->keys[k], member,
						   "Member must have length greater than or equal to 1");
		else if (strlen(ct->keys[k]) > 255)
			ddb_valerr_add(&e, ct->keys[k], member,
						   "Member must have length less than or equal to 255");
	}
	ddb_valerr_raise(&e);
	if (ct->nkeys == 2 && strcmp(ct->keys[0], ct->keys[1]) == 0)
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
				  "Both the Hash Key and the Range Key element in the KeySchema have the same name");
}

/*
 * How many tags a table has, counting this transaction's changes (the
 * caller checks the limit right after writing them: a read-only SPI call
 * would read the catalog under the statement's snapshot, without them).
 */
int
ddb_table_tag_count(Oid relid)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		args[1] = {ObjectIdGetDatum(relid)};
	int			n = 0;
	bool		isnull;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* (as the catalog's owner: the tags column is not PUBLIC's) */
	ddb_catalog_exec("SELECT count(*)::int4 FROM " TABLES_CATALOG " t, jsonb_object_keys(t.tags) "
					 "WHERE t.relid = $1", 1, argtypes, args, NULL, SPI_OK_SELECT);
	if (SPI_processed == 1)
		n = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_finish();
	return n;
}

/* ListTagsOfResource's Tags: [{"Key": k, "Value": v}, ...] in key order. */
void
ddb_table_tags_json(Oid relid, StringInfo buf)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		args[1] = {ObjectIdGetDatum(relid)};

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* (as the catalog's owner: the tags column is not PUBLIC's; the caller's privilege is checked) */
	ddb_catalog_exec("SELECT e.key, e.value FROM " TABLES_CATALOG " t, jsonb_each_text(t.tags) e "
					 "WHERE t.relid = $1 ORDER BY e.key COLLATE \"C\"",
					 1, argtypes, args, NULL, SPI_OK_SELECT);
	appendStringInfoChar(buf, '[');
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		appendStringInfoString(buf, i ? ",{\"Key\":" : "{\"Key\":");
		ddb_json_cstring(buf, SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
		appendStringInfoString(buf, ",\"Value\":");
		ddb_json_cstring(buf, SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2));
		appendStringInfoChar(buf, '}');
	}
	appendStringInfoChar(buf, ']');
	SPI_finish();
}
