/*-------------------------------------------------------------------------
 *
 * ddb_shape.c
 *	  The table shape rule and the per-relation key schema cache.
 *
 * A ddb table's columns are: the partition key, then zero or more sort
 * keys, then exactly one jsonb item column.  Key columns are text (DynamoDB
 * S), numeric (N) or bytea (B) and NOT NULL.  Tables made through the
 * DynamoDB API have at most one sort key; tables made in SQL may have more
 * (a composite sort key, ordered column by column), and internal GSI
 * tables use more to keep their keys unique.
 *
 * The rule is enforced twice: by an event trigger at CREATE/ALTER TABLE (so
 * a wrong table is rejected before it holds data) and again whenever the key
 * schema is loaded for a relation (so a table created while event triggers
 * were disabled still cannot be mis-stored).  The event trigger also marks
 * key columns NOT NULL, so `CREATE TABLE t (pk text, sk text, item jsonb)
 * USING ddb` is accepted and behaves like DynamoDB: keys are required.
 *
 * Collation.  The tree orders text keys by their UTF-8 bytes, DynamoDB's
 * order, which is PostgreSQL's "C" collation; the planner's key scan
 * serves sort-key ranges and ORDER BY only when the column's collation is
 * that order.  A text key column that takes the database's default
 * collation is therefore declared COLLATE "C" by the event trigger, as
 * ddb_create_table declares it, so a table made in a database with a
 * UTF-8 locale gets the same plans as in a "C" database.  A collation
 * named explicitly is the user's choice and is kept; for a sort key that
 * is not bytewise, CREATE TABLE says with a NOTICE what it costs and how
 * to avoid it.  A partition (or inheritance child) cannot change the
 * collation of a column it inherits, so one whose text key inherits the
 * default collation is refused with a hint to declare the parent's column
 * COLLATE "C" (pg_dump would recreate the partition alone, with "C", and
 * then fail to attach it).
 *
 * Also here: opening a ddb table on behalf of a function that bypasses the
 * executor (the item API, the inspection functions), with the lock,
 * privilege and row-level security checks the executor would make.
 *
 * And the search path of ddb's own SQL (ddb_search_path_pin).  Every
 * statement ddb runs through SPI -- the catalogs' reads and writes, the DDL
 * of CreateTable, DeleteTable, indexes, TTL and streams, the event
 * trigger's query here -- runs with search_path = pg_catalog, pg_temp,
 * whoever calls and whatever their search_path: never through the
 * caller's.  The statements name ddb's relations and the user's tables with
 * their schema, but PostgreSQL looks up operators, functions, types and
 * collations in search_path, and an operator whose argument types match
 * exactly wins over pg_catalog's inexact one wherever it is: pg_catalog has
 * no "=(regclass, oid)", so "relid = $1" on a regclass column with an oid
 * parameter would run an "=(regclass, oid)" that any role with CREATE on
 * public defined there -- as whoever called ddb (a superuser, a table's
 * owner), or, inside ddb_run_as_begin (api/ddb_table.c, which pins with
 * this), as the catalogs' owner.  Every SPI call of ddb's is inside a pin
 * (the workers, HTTP and TTL, also set the same path once, when they
 * start); event triggers that ddb's DDL fires see it too.  It lives in the
 * engine because the engine runs SPI too (the event trigger) and calls no
 * layer above it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "utils/acl.h"
#include "utils/rls.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "commands/event_trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "nodes/pg_list.h"
#include "parser/parse_type.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_locale.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "access/genam.h"
#include "access/tableam.h"
#include "executor/tuptable.h"
#include "utils/snapmgr.h"
#include "catalog/indexing.h"
#include "catalog/pg_trigger.h"
#include "utils/fmgroids.h"
#include "commands/trigger.h"
#include "nodes/bitmapset.h"
#include "optimizer/optimizer.h"

#include "ddb.h"

PG_FUNCTION_INFO_V1(ddb_check_table_shape);
PG_FUNCTION_INFO_V1(ddb_event_trigger_check);
PG_FUNCTION_INFO_V1(ddb_event_trigger_alter_check);

static Oid	ddb_am_oid = InvalidOid;

/*
 * Pin search_path to pg_catalog, pg_temp for SQL that ddb runs itself, until
 * ddb_search_path_unpin with the level returned (see the file's header).
 * The setting is saved at a new GUC nest level, as a function's SET clause
 * saves it: unpinning restores the caller's, and an error restores it with
 * the (sub)transaction's abort.  Pins nest, and unpin in reverse order.
 * pg_temp is last, so nothing of it shadows pg_catalog's (PostgreSQL never
 * looks up operators or functions in pg_temp unless asked by name).
 */
int
ddb_search_path_pin(void)
{
	int			nestlevel = NewGUCNestLevel();

	(void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET,
							 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	return nestlevel;
}

void
ddb_search_path_unpin(int nestlevel)
{
	AtEOXact_GUC(true, nestlevel);
}

/*
 * Is this relation stored by the ddb access method?
 */
bool
ddb_is_ddb_relation(Relation rel)
{
	extern const TableAmRoutine *ddb_routine(void);

	return rel->rd_rel->relkind == RELKIND_RELATION &&
		rel->rd_tableam == ddb_routine();
}

/*
 * Is a trigger function one of ddb's own (index maintenance, stream
 * capture: C functions of ddb's library), whose work the item functions do
 * themselves?
 */
static bool
ddb_own_trigger_function(Oid fnoid)
{
	HeapTuple	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fnoid));
	bool		own = false;

	if (HeapTupleIsValid(tup))
	{
		if (((Form_pg_proc) GETSTRUCT(tup))->prolang == ClanguageId)
		{
			bool		isnull;
			Datum		bin = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_probin, &isnull);

			own = !isnull && strcmp(TextDatumGetCString(bin), "$libdir/ddb") == 0;
		}
		ReleaseSysCache(tup);
	}
	return own;
}

/*
 * The index in rel->trigdesc of the first enabled trigger, not ddb's own,
 * that fires on one of 'events', or -1.
 *
 * rel->trigdesc is read afresh after each look-up of a trigger function:
 * a syscache miss takes a lock and so takes in invalidations, and a
 * relcache rebuild frees the trigger list it replaces (PostgreSQL keeps
 * rd_rel and an unchanged tuple descriptor in place, not the triggers).
 * The caller's lock keeps the list itself from changing, so index i still
 * names the same trigger in the rebuilt one.
 */
static int
first_user_trigger(Relation rel, int16 events)
{
	for (int i = 0; rel->trigdesc != NULL && i < rel->trigdesc->numtriggers; i++)
	{
		Trigger    *t = &rel->trigdesc->triggers[i];

		if ((t->tgtype & events) == 0 || t->tgenabled == TRIGGER_DISABLED)
			continue;
		if (!ddb_own_trigger_function(t->tgfoid))
			return i;
	}
	return -1;
}

/*
 * Does a deletion of one of rel's rows fire a trigger that is not ddb's
 * own?  ddb_ttl_sweep() leaves such a table to its owner (ddb_ttl.c).
 */
bool
ddb_has_user_delete_trigger(Relation rel)
{
	return first_user_trigger(rel, TRIGGER_TYPE_DELETE) >= 0;
}

/*
 * The item functions write the tree directly, without the executor, so
 * nothing would check a table's CHECK constraints and foreign keys, compute
 * its generated columns or fire its triggers: they refuse to write such a
 * table, as they refuse one with row-level security, rather than write
 * rows SQL would have refused or skip an audit trigger.  ddb's own triggers are fine (the functions do
 * their work), and so are disabled ones.  The refusal is a
 * ValidationException (DB001): the request, not the server, is at fault,
 * and the endpoint answers it as such.
 */
static void
ddb_check_api_writable(Relation rel, AclMode mode)
{
	TupleConstr *constr = RelationGetDescr(rel)->constr;
	/* (puts and updates may replace or, in a batch, come with deletes) */
	int16		events = mode == ACL_DELETE ? TRIGGER_TYPE_DELETE :
		TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE | TRIGGER_TYPE_DELETE;
	int			i;

	if (mode != ACL_DELETE && constr != NULL && constr->num_check > 0)
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: ddb functions cannot write to table \"%s\" because it has CHECK constraint \"%s\"",
						RelationGetRelationName(rel), constr->check[0].ccname),
				 errdetail("The item functions write the table directly, without the checks and triggers of SQL writes."),
				 errhint("Write it with SQL (INSERT, UPDATE, DELETE), or drop the constraint.")));

	/*
	 * A stored generated column (a key or the item column computed from
	 * the others) is computed by the executor: a put would store whatever
	 * the request says instead, a row SQL could never have written.
	 */
	if (mode != ACL_DELETE && constr != NULL && constr->has_generated_stored)
	{
		TupleDesc	desc = RelationGetDescr(rel);

		for (int a = 0; a < desc->natts; a++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, a);

			if (att->attgenerated == ATTRIBUTE_GENERATED_STORED && !att->attisdropped)
				ereport(ERROR,
						(errcode(DDB_ERRCODE_VALIDATION),
						 errmsg("ValidationException: ddb functions cannot write to table \"%s\" because it has generated column \"%s\"",
								RelationGetRelationName(rel), NameStr(att->attname)),
						 errdetail("The item functions write the table directly, without the checks and triggers of SQL writes."),
						 errhint("Write it with SQL (INSERT, UPDATE, DELETE), or drop the generation expression.")));
		}
	}

	i = first_user_trigger(rel, events);
	if (i >= 0)
	{
		Trigger    *t = &rel->trigdesc->triggers[i];

		if (OidIsValid(t->tgconstraint))
			ereport(ERROR,
					(errcode(DDB_ERRCODE_VALIDATION),
					 errmsg("ValidationException: ddb functions cannot write to table \"%s\" because it has constraint \"%s\"",
							RelationGetRelationName(rel), get_constraint_name(t->tgconstraint)),
					 errdetail("The item functions write the table directly, without the checks and triggers of SQL writes."),
					 errhint("Write it with SQL (INSERT, UPDATE, DELETE), or drop the constraint.")));
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: ddb functions cannot write to table \"%s\" because it has trigger \"%s\"",
						RelationGetRelationName(rel), t->tgname),
				 errdetail("The item functions write the table directly, without the checks and triggers of SQL writes."),
				 errhint("Write it with SQL (INSERT, UPDATE, DELETE), or drop or disable the trigger.")));
	}
}

static Relation open_checks(Relation rel, AclMode mode);

/*
 * Open a ddb table for an API call: the lock an equivalent SQL statement
 * would take, the privilege it needs, and a refusal when row-level security
 * applies (the API bypasses the executor, which enforces policies), or,
 * for a write, when constraints or triggers would need the executor.
 */
Relation
ddb_open_table(Oid relid, AclMode mode)
{
	Relation	rel = try_relation_open(relid, ddb_api_lockmode(mode));

	if (rel == NULL)
		ereport(ERROR,
				(errcode(DDB_ERRCODE_RESOURCE_NOT_FOUND),
				 errmsg("ResourceNotFoundException: " DDB_MSG_RESOURCE_NOT_FOUND),
				 errdetail("Table with OID %u does not exist.", relid)));
	return open_checks(rel, mode);
}

/*
 * ddb_open_table of a relation that the caller has locked already (in
 * ddb_api_lockmode(mode)) and knows to exist: it found the relation after
 * the lock had taken in every invalidation sent before it (ddb_table_open).
 * So it is opened without try_relation_open's catalog probe for it.
 */
Relation
ddb_open_locked_table(Oid relid, AclMode mode)
{
	return open_checks(relation_open(relid, NoLock), mode);
}

/* The lock an API call needing privilege 'mode' takes: its SQL statement's. */
LOCKMODE
ddb_api_lockmode(AclMode mode)
{
	return (mode == ACL_SELECT) ? AccessShareLock : RowExclusiveLock;
}

/* ddb_open_table's checks of the opened relation. */
static Relation
open_checks(Relation rel, AclMode mode)
{
	Oid			relid = RelationGetRelid(rel);
	AclResult	aclresult;

	if (!ddb_is_ddb_relation(rel))
		ereport(ERROR,
				(errcode(DDB_ERRCODE_RESOURCE_NOT_FOUND),
				 errmsg("ResourceNotFoundException: " DDB_MSG_RESOURCE_NOT_FOUND),
				 errdetail("\"%s\" is not a ddb table.", RelationGetRelationName(rel)),
				 errhint("Create it with ddb_create_table() or CREATE TABLE ... USING ddb.")));
	aclresult = pg_class_aclcheck(relid, GetUserId(), mode);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_TABLE, RelationGetRelationName(rel));
	/*
	 * (check_enable_rls answers RLS_NONE for a table without row security
	 * after a catalog look-up; the relcache entry, read under our lock,
	 * says so without one)
	 */
	if (rel->rd_rel->relrowsecurity &&
		check_enable_rls(relid, InvalidOid, false) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("ddb functions cannot access table \"%s\" because row-level security applies to it",
						RelationGetRelationName(rel)),
				 errhint("Use SQL on the table, which applies the policies, or disable row-level security.")));
	if (mode != ACL_SELECT)
		ddb_check_api_writable(rel, mode);
	return rel;
}

/*
 * The hint for a key column of the wrong type: the key type that holds the
 * same values, or where non-key attributes belong.
 */
static int
key_type_hint(Form_pg_attribute att)
{
	char		category;
	bool		preferred;

	get_type_category_preferred(getBaseType(att->atttypid), &category, &preferred);
	if (category == TYPCATEGORY_NUMERIC)
		return errhint("Declare \"%s\" as numeric: DynamoDB number keys (N) are stored as numeric.",
					   NameStr(att->attname));
	if (category == TYPCATEGORY_STRING)
		return errhint("Declare \"%s\" as text: DynamoDB string keys (S) are stored as text.",
					   NameStr(att->attname));
	return errhint("Declare \"%s\" as text, numeric or bytea, or move it into the jsonb item column, which holds every non-key attribute.",
				   NameStr(att->attname));
}

/*
 * Derive the key schema from the table's columns, raising a clear error when
 * the table does not have ddb's shape.  Dropped columns are skipped.
 */
static void
ddb_build_keyinfo(TupleDesc desc, const char *relname, DdbKeyInfo *ki)
{
	int			live[MaxHeapAttributeNumber];
	int			nlive = 0;

	memset(ki, 0, sizeof(DdbKeyInfo));
	for (int i = 0; i < desc->natts; i++)
	{
		if (!TupleDescAttr(desc, i)->attisdropped)
			live[nlive++] = i;
	}

	if (nlive < 2)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
				 errmsg("ddb table \"%s\" must have a partition key column and a jsonb item column",
						relname),
				 errhint("Use columns (partition key, [sort key,] item jsonb), for example (\"PK\" text, \"SK\" text, item jsonb).")));

	if (nlive - 1 > DDB_MAX_KEY_COLUMNS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
				 errmsg("ddb table \"%s\" has too many key columns", relname),
				 errdetail("A ddb table has at most %d key columns.", DDB_MAX_KEY_COLUMNS)));

	for (int k = 0; k < nlive - 1; k++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, live[k]);
		DdbKeyType	type;

		switch (att->atttypid)
		{
			case TEXTOID:
				type = DDB_KEY_S;
				break;
			case NUMERICOID:
				type = DDB_KEY_N;
				break;
			case BYTEAOID:
				type = DDB_KEY_B;
				break;
			case JSONBOID:
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
						 errmsg("jsonb item column \"%s\" must be the last column of ddb table \"%s\"",
								NameStr(att->attname), relname),
						 errdetail("A ddb table's columns are the partition key, optional sort keys, then one jsonb item column.")));
				break;
			default:
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
						 errmsg("key column \"%s\" of ddb table \"%s\" has type %s",
								NameStr(att->attname), relname,
								format_type_be(att->atttypid)),
						 errdetail("Key columns must be text (S), numeric (N) or bytea (B), and the last column must be the jsonb item."),
						 key_type_hint(att)));
		}
		ki->keyattno[k] = att->attnum;
		ki->keytype[k] = type;
	}
	ki->nkeys = nlive - 1;

	{
		Form_pg_attribute att = TupleDescAttr(desc, live[nlive - 1]);

		if (att->atttypid != JSONBOID)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
					 errmsg("last column \"%s\" of ddb table \"%s\" must be of type jsonb",
							NameStr(att->attname), relname),
					 errdetail("A ddb table's columns are the partition key, optional sort keys, then one jsonb item column.")));
		ki->itemattno = att->attnum;
	}
	ki->natts = desc->natts;
}

/*
 * Key schemas by relation OID, kept outside the relcache entry.  Any
 * invalidation of a relation frees its rd_amcache (RelationClearRelation),
 * and a backend accepts invalidations whenever it takes a lock it did not
 * hold: a catalog lookup that misses the syscache, the table catalog's
 * query (ddb_table_info), opening a TOAST table to detoast a value.  A
 * DdbKeyInfo pointer into rd_amcache held across such a call (as
 * ddb_check_item_column_values holds one across ddb_key_name) would then read freed
 * memory, which another allocation may already have reused; a concurrent
 * VACUUM or ANALYZE of the table, an anti-wraparound autovacuum included,
 * sends such invalidations at any time.  So ddb_get_keyinfo hands out a
 * pointer into this table instead, which stays valid for the life of the
 * backend: entries are never removed while a relation may use them (only
 * those of dropped relations, where no caller holds one:
 * ddb_keyinfo_forget), and dynahash never moves one.  An
 * entry is rewritten only when its relation's key schema differs from the
 * one stored (an ALTER TABLE of a key column, or the OID reused by a new
 * table), which takes a lock that no statement reading the old schema
 * holds beside.  One small entry per ddb table the backend has used.
 */
typedef struct DdbKeyInfoEntry
{
	Oid			relid;			/* hash key */
	DdbKeyInfo	ki;
} DdbKeyInfoEntry;

static HTAB *keyinfo_table = NULL;

/* The stable copy of relid's key schema, set to *ki.  Takes no locks. */
static const DdbKeyInfo *
ddb_stable_keyinfo(Oid relid, const DdbKeyInfo *ki)
{
	DdbKeyInfoEntry *e;
	bool		found;

	if (keyinfo_table == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(DdbKeyInfoEntry);
		ctl.hcxt = CacheMemoryContext;
		keyinfo_table = hash_create("ddb key schemas", 64, &ctl,
									HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	e = hash_search(keyinfo_table, &relid, HASH_ENTER, &found);
	if (!found || memcmp(&e->ki, ki, sizeof(DdbKeyInfo)) != 0)
		e->ki = *ki;
	return &e->ki;
}

/*
 * Remove from a cache keyed by relation OID (the key first in each entry)
 * the entries of the relations gone(relid) names, calling forget(entry)
 * before each goes (NULL: nothing to release).  Only for a caller that
 * holds no pointer into the cache: see ddb_forget_tables.  gone may also
 * just note what it is asked and answer false (the backends' sweep,
 * ddb_table.c, collects the dropped tables in the transaction and removes
 * them after it committed).  Returns how many it removed.
 */
int
ddb_cache_forget(HTAB *cache, bool (*gone) (Oid relid), void (*forget) (void *entry))
{
	HASH_SEQ_STATUS status;
	void	   *e;
	int			n = 0;

	if (cache == NULL)
		return 0;
	hash_seq_init(&status, cache);
	while ((e = hash_seq_search(&status)) != NULL)
	{
		Oid			relid = *(Oid *) e;

		if (!gone(relid))
			continue;
		if (forget)
			forget(e);
		hash_search(cache, &relid, HASH_REMOVE, NULL);
		n++;
	}
	return n;
}

/* Does the key schema cache hold relid (one of the tables a sweep looks at)? */
bool
ddb_keyinfo_cached(Oid relid)
{
	return keyinfo_table != NULL && hash_search(keyinfo_table, &relid, HASH_FIND, NULL) != NULL;
}

/*
 * Forget the key schemas of the relations gone(relid) names, which this
 * backend no longer finds in pg_class: dropped, or created by a
 * transaction that is prepared and not yet committed (the backend that
 * prepared it sweeps it at its next commit).  A relcache entry may still
 * point here, but it is rebuilt before it is used again: using it takes
 * the relation's lock, which the dropping or preparing transaction keeps
 * until it has sent the relation's invalidation.
 */
int
ddb_keyinfo_forget(bool (*gone) (Oid relid))
{
	return ddb_cache_forget(keyinfo_table, gone, NULL);
}

/*
 * The backend-local cache of a ddb relation, built on first use.  It lives
 * in rd_amcache and is freed by any invalidation of the relation: fetch it
 * again after anything that may take a lock (see ddb_fillfactor).
 */
DdbRelCache *
ddb_get_relcache(Relation rel)
{
	DdbRelCache *cache = (DdbRelCache *) rel->rd_amcache;

	if (cache == NULL)
	{
		DdbKeyInfo	ki;
		const DdbKeyInfo *stable;

		/* Build first, so an error leaves no half-made cache behind. */
		ddb_build_keyinfo(RelationGetDescr(rel), RelationGetRelationName(rel), &ki);
		stable = ddb_stable_keyinfo(RelationGetRelid(rel), &ki);
		cache = MemoryContextAllocZero(CacheMemoryContext, sizeof(DdbRelCache));
		cache->keyinfo = stable;
		rel->rd_amcache = cache;
	}
	return cache;
}

/*
 * The relation's storage was truncated or replaced: forget the cached tree
 * state and the row-id batch, which belong to the old file.  Deferred map
 * entries are kept by file (a rolled-back TRUNCATE brings the old file back);
 * an in-place truncation, which is never undone on its own, voids those of
 * the truncated file alone.
 */
void
ddb_reset_relcache(Relation rel, bool truncated_in_place)
{
	DdbRelCache *cache = (DdbRelCache *) rel->rd_amcache;

	if (cache)
	{
		cache->initialized = false;
		cache->rowid_next = 0;
		cache->rowid_end = 0;
		cache->rowid_batch = 0;
		cache->root = 0;
		cache->version = 0;
		cache->nblocks_seen = 0;
		cache->map_leaf = 0;
		cache->leaf = 0;
		cache->leaf_parent = 0;
		cache->fsm_skip = 0;
		memset(cache->hints, 0, sizeof(cache->hints));
	}
	if (truncated_in_place)
		ddb_map_forget(rel);
}

const DdbKeyInfo *
ddb_get_keyinfo(Relation rel)
{
	return ddb_get_relcache(rel)->keyinfo;
}

/*
 * The name of a stored generated column whose expression reads column
 * attno of rel, or NULL.
 */
static const char *
generated_column_using(Relation rel, AttrNumber attno)
{
	TupleDesc	desc = RelationGetDescr(rel);
	TupleConstr *constr = desc->constr;

	if (constr == NULL || !constr->has_generated_stored)
		return NULL;
	for (int i = 0; i < constr->num_defval; i++)
	{
		AttrDefault *def = &constr->defval[i];
		Form_pg_attribute gatt = TupleDescAttr(desc, def->adnum - 1);
		Bitmapset  *used = NULL;

		if (gatt->attgenerated != ATTRIBUTE_GENERATED_STORED)
			continue;
		pull_varattnos(stringToNode(def->adbin), 1, &used);
		if (bms_is_member(attno - FirstLowInvalidHeapAttributeNumber, used))
			return NameStr(gatt->attname);
	}
	return NULL;
}

/*
 * Check one table's shape, make its key columns NOT NULL and its text key
 * columns of the default collation COLLATE "C" (see the file header).
 * Called by the event trigger for every created or altered ddb table;
 * 'created' when the command created it.
 */
static void
ddb_check_and_fix_table(Oid relid, bool created)
{
	Relation	rel;
	DdbKeyInfo	ki;
	List	   *fix = NIL;
	List	   *fixcoll = NIL;
	char	   *qualname;

	rel = relation_open(relid, AccessShareLock);
	if (rel->rd_rel->relkind != RELKIND_RELATION ||
		rel->rd_rel->relam != ddb_am_oid)
	{
		relation_close(rel, AccessShareLock);
		return;
	}
	ddb_build_keyinfo(RelationGetDescr(rel), RelationGetRelationName(rel), &ki);
	for (int k = 0; k < ki.nkeys; k++)
	{
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), ki.keyattno[k] - 1);

		if (!att->attnotnull)
			fix = lappend(fix, pstrdup(NameStr(att->attname)));

		/*
		 * A numeric(p, s) key would be rounded by SQL writes and not by the
		 * item functions, which store DynamoDB's number as sent: 1.55 and
		 * 1.6 would be two items, or one, by the path that wrote them.
		 * (Checked here, for tables created or altered from now on; the
		 * key schema's cache does not refuse a table made before.)
		 */
		if (att->atttypmod != -1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
					 errmsg("key column \"%s\" of ddb table \"%s\" has a type modifier: %s",
							NameStr(att->attname), RelationGetRelationName(rel),
							format_type_with_typemod(att->atttypid, att->atttypmod)),
					 errdetail("DynamoDB's numbers keep the precision they are sent with; a key column cannot round them."),
					 errhint("Declare it %s.", format_type_be(att->atttypid))));
		if (ki.keytype[k] != DDB_KEY_S)
			continue;
		/*
		 * An inherited column's collation is its parent's to change, and
		 * leaving the default would not survive pg_dump (which creates the
		 * partition alone, where it would get "C", then attaches it).
		 */
		if (att->attcollation == DEFAULT_COLLATION_OID && att->attinhcount > 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
					 errmsg("text key column \"%s\" of ddb table \"%s\" inherits the default collation from its parent",
							NameStr(att->attname), RelationGetRelationName(rel)),
					 errdetail("ddb stores text keys in byte order, COLLATE \"C\", and a partition or child table cannot change the collation of an inherited column."),
					 errhint("Declare the parent's column COLLATE \"C\".")));
		if (att->attcollation == DEFAULT_COLLATION_OID)
		{
			const char *gen = generated_column_using(rel, ki.keyattno[k]);

			/*
			 * PostgreSQL cannot change the collation (the type) of a column
			 * a generated column reads: say so, and what to declare,
			 * rather than fail inside the ALTER TABLE below.
			 */
			if (gen != NULL)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_TABLE_DEFINITION),
						 errmsg("text key column \"%s\" of ddb table \"%s\" takes the default collation and is used by generated column \"%s\"",
								NameStr(att->attname), RelationGetRelationName(rel), gen),
						 errdetail("ddb declares text key columns COLLATE \"C\" (byte order), and PostgreSQL cannot change the collation of a column that a generated column uses."),
						 errhint("Declare \"%s\" COLLATE \"C\".", NameStr(att->attname))));
			fixcoll = lappend(fixcoll, pstrdup(NameStr(att->attname)));
		}
		else if (created && k > 0 && OidIsValid(att->attcollation) &&
				 !lc_collate_is_c(att->attcollation))
			ereport(NOTICE,
					(errmsg("sort key \"%s\" of ddb table \"%s\" has collation \"%s\", not ddb's byte order",
							NameStr(att->attname), RelationGetRelationName(rel),
							get_collation_name(att->attcollation)),
					 errdetail("Range conditions and ORDER BY on it read the whole partition and sort."),
					 errhint("Declare it COLLATE \"C\" (DynamoDB's order of string keys) for key-range scans in sort-key order.")));
	}
	qualname = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
										  RelationGetRelationName(rel));
	relation_close(rel, AccessShareLock);

	if (fix != NIL || fixcoll != NIL)
	{
		StringInfoData sql;
		ListCell   *lc;
		const char *sep = "";
		int			pinned;

		initStringInfo(&sql);
		appendStringInfo(&sql, "ALTER TABLE %s", qualname);
		foreach(lc, fix)
		{
			appendStringInfo(&sql, "%s ALTER COLUMN %s SET NOT NULL",
							 sep, quote_identifier((char *) lfirst(lc)));
			sep = ",";
		}
		/* text to text in another collation: no rewrite, no scan */
		foreach(lc, fixcoll)
		{
			appendStringInfo(&sql, "%s ALTER COLUMN %s TYPE text COLLATE \"C\"",
							 sep, quote_identifier((char *) lfirst(lc)));
			sep = ",";
		}
		pinned = ddb_search_path_pin();
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		if (SPI_execute(sql.data, false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not fix the key columns of %s", qualname);
		SPI_finish();
		ddb_search_path_unpin(pinned);
	}
}

static List *ddb_tables_of(RangeVar *rv);
static bool ddb_has_own_trigger(Oid relid);

/*
 * Does any item of ddb table relid, as this transaction sees the table,
 * hold a top-level attribute 'name'?  A full scan; the caller holds a lock
 * that keeps writers out.
 */
static bool
ddb_items_hold_attribute(Oid relid, const char *name)
{
	Relation	rel = table_open(relid, NoLock);
	DdbKeyInfo	ki;
	Snapshot	snap = RegisterSnapshot(GetLatestSnapshot());
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	TableScanDesc scan = table_beginscan(rel, snap, 0, NULL);
	Datum		key = CStringGetTextDatum(name);
	bool		found = false;

	ddb_build_keyinfo(RelationGetDescr(rel), RelationGetRelationName(rel), &ki);
	while (!found && table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		bool		isnull;
		Datum		item = slot_getattr(slot, ki.itemattno, &isnull);

		found = !isnull && DatumGetBool(DirectFunctionCall2(jsonb_exists, item, key));
		CHECK_FOR_INTERRUPTS();
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	UnregisterSnapshot(snap);
	table_close(rel, NoLock);
	return found;
}

/*
 * RENAME of a key column of ddb table relid from 'oldname' to 'newname',
 * checked at ddl_command_end, when the command holds its ACCESS EXCLUSIVE
 * lock: no index, TTL or stream can be added meanwhile, nor an item
 * written (checked at ddl_command_start, before that lock, an index
 * created concurrently slipped past).  Refused
 *   - while the table has secondary indexes, TTL or a stream, whose
 *	   entries and records hold the keys under the old name (an index keyed
 *	   on the old name would find no key in any item written after);
 *   - when an item holds an attribute named 'newname': the key attribute
 *	   would hide it (a full scan of the table).
 * Otherwise a rename renames the key attribute, as ddb_table_key_name
 * reads it, unless the catalog keeps the attribute's name (one longer than
 * a column name or a system column's, ddb_pg_key_columns; every key of a
 * table made by CreateTable before ddb kept only those): then only the
 * column's name changes.
 */
static void
ddb_check_rename(Oid relid, const char *oldname, const char *newname)
{
	HeapTuple	tup = SearchSysCacheAttName(relid, newname);
	Oid			type;

	if (!HeapTupleIsValid(tup))
		return;
	type = ((Form_pg_attribute) GETSTRUCT(tup))->atttypid;
	ReleaseSysCache(tup);
	if (type == JSONBOID)
		return;					/* the item column */
	if (ddb_has_own_trigger(relid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot rename key column \"%s\" of ddb table \"%s\"",
						oldname, get_rel_name(relid)),
				 errdetail("Its secondary indexes, TTL or stream hold the keys under their attribute names."),
				 errhint("Drop them first, or keep the name.")));
	if (ddb_items_hold_attribute(relid, newname))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot rename key column \"%s\" of ddb table \"%s\" to \"%s\"",
						oldname, get_rel_name(relid), newname),
				 errdetail("An item holds an attribute named \"%s\", which the key attribute would hide.",
						   newname),
				 errhint("Remove that attribute from the items, or choose another name.")));
}

/*
 * Event trigger function (ddl_command_end): validate every ddb table that the
 * command created or altered, and a rename of a key column
 * (ddb_check_rename).
 */
Datum
ddb_event_trigger_check(PG_FUNCTION_ARGS)
{
	EventTriggerData *trigdata;
	int			ret;
	List	   *relids = NIL;
	List	   *created = NIL;
	ListCell   *lc;
	MemoryContext outer = CurrentMemoryContext;
	int			pinned;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_E_CONTAINING_SQL_NOT_PERMITTED),
				 errmsg("ddb_event_trigger_check() must be called as an event trigger")));
	trigdata = (EventTriggerData *) fcinfo->context;
	if (trigdata->parsetree != NULL && IsA(trigdata->parsetree, RenameStmt))
	{
		RenameStmt *rs = (RenameStmt *) trigdata->parsetree;

		if (rs->renameType == OBJECT_COLUMN && rs->relationType == OBJECT_TABLE &&
			rs->subname != NULL && rs->newname != NULL)
			foreach(lc, ddb_tables_of(rs->relation))
				ddb_check_rename(lfirst_oid(lc), rs->subname, rs->newname);
		PG_RETURN_NULL();
	}

	if (!OidIsValid(ddb_am_oid))
		ddb_am_oid = get_table_am_oid("ddb", false);

	/* "classid = regclass": an "=(oid, regclass)" in public would match */
	pinned = ddb_search_path_pin();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	ret = SPI_execute("SELECT objid, command_tag IN ('CREATE TABLE', 'CREATE TABLE AS', 'SELECT INTO') "
					  "FROM pg_event_trigger_ddl_commands() "
					  "WHERE classid = 'pg_class'::regclass AND objsubid = 0",
					  true, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "could not list DDL commands");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		bool		cnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
		Datum		c = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2, &cnull);

		/* in the caller's context: SPI_finish frees SPI's */
		if (!isnull)
		{
			MemoryContext spicxt = MemoryContextSwitchTo(outer);

			relids = lappend_oid(relids, DatumGetObjectId(d));
			created = lappend_int(created, !cnull && DatumGetBool(c));
			MemoryContextSwitchTo(spicxt);
		}
	}
	SPI_finish();
	ddb_search_path_unpin(pinned);

	foreach(lc, relids)
	{
		Oid			relid = lfirst_oid(lc);
		HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));

		if (!HeapTupleIsValid(tup))
			continue;
		ReleaseSysCache(tup);
		ddb_check_and_fix_table(relid, list_nth_int(created, foreach_current_index(lc)) != 0);
	}
	PG_RETURN_NULL();
}

/*
 * Is relid a ddb table?  From the catalog alone, without a lock.
 */
static bool
ddb_relid_is_ddb(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			am;

	if (!HeapTupleIsValid(tup))
		return false;
	am = ((Form_pg_class) GETSTRUCT(tup))->relam;
	ReleaseSysCache(tup);
	if (!OidIsValid(ddb_am_oid))
		ddb_am_oid = get_table_am_oid("ddb", false);
	return am == ddb_am_oid;
}

/*
 * Refuse one ALTER TABLE subcommand on ddb table relid (see below).
 */
static void
ddb_check_alter_cmd(Oid relid, AlterTableCmd *cmd)
{
	HeapTuple	tup;
	Form_pg_attribute att;
	Oid			oldtype;
	Oid			newtype;
	int32		newtypmod;
	char	   *relname;

	if ((cmd->subtype != AT_DropColumn && cmd->subtype != AT_AlterColumnType) ||
		cmd->name == NULL)
		return;
	tup = SearchSysCacheAttName(relid, cmd->name);
	if (!HeapTupleIsValid(tup))
		return;					/* ALTER TABLE reports it */
	att = (Form_pg_attribute) GETSTRUCT(tup);
	oldtype = att->atttypid;
	ReleaseSysCache(tup);
	if (oldtype == JSONBOID)
		return;					/* the item column: the shape rule decides */
	relname = get_rel_name(relid);

	if (cmd->subtype == AT_DropColumn)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot drop key column \"%s\" of ddb table \"%s\"", cmd->name, relname),
				 errdetail("Items are stored under their key; a table's key schema is fixed when it is created, as in DynamoDB."),
				 errhint("Create a table with the key schema you want and copy the items into it.")));

	typenameTypeIdAndMod(NULL, castNode(ColumnDef, cmd->def)->typeName, &newtype, &newtypmod);
	/* a USING expression or a type modifier rewrites the stored keys */
	if (newtype == oldtype && newtypmod == -1 &&
		castNode(ColumnDef, cmd->def)->raw_default != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot rewrite key column \"%s\" of ddb table \"%s\" with USING",
						cmd->name, relname),
				 errdetail("Items are stored under their key, and keys are immutable, as in DynamoDB."),
				 errhint("Copy the items into a table with the keys you want.")));
	if (newtype != oldtype || newtypmod != -1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change the type of key column \"%s\" of ddb table \"%s\" from %s to %s",
						cmd->name, relname, format_type_be(oldtype),
						format_type_with_typemod(newtype, newtypmod)),
				 errdetail("Items are stored under their key; a table's key schema is fixed when it is created, as in DynamoDB."),
				 errhint("Create a table with the key schema you want and copy the items into it.")));
}

/*
 * Does relid have an enabled trigger of ddb's own (index, TTL or stream
 * upkeep)?
 * Those keep copies of the items' keys under the key attributes' names.
 */
static bool
ddb_has_own_trigger(Oid relid)
{
	Relation	tgrel = table_open(TriggerRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	bool		found = false;

	ScanKeyInit(&key, Anum_pg_trigger_tgrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	scan = systable_beginscan(tgrel, TriggerRelidNameIndexId, true, NULL, 1, &key);
	while (!found && HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_trigger t = (Form_pg_trigger) GETSTRUCT(tup);

		/* (ddb disables its own, rather than drop them, when their work ends) */
		found = t->tgenabled != TRIGGER_DISABLED && ddb_own_trigger_function(t->tgfoid);
	}
	systable_endscan(scan);
	table_close(tgrel, AccessShareLock);
	return found;
}

/*
 * The ddb tables an ALTER TABLE on 'rv' changes: the table and, when the
 * command recurses (no ONLY), every table inheriting from it.  Read from
 * the catalog alone, without a lock of its own: at ddl_command_start
 * ALTER TABLE takes its own right after, at ddl_command_end it holds it.
 */
static List *
ddb_tables_of(RangeVar *rv)
{
	Oid			relid = rv ? RangeVarGetRelid(rv, NoLock, true) : InvalidOid;
	List	   *relids;
	List	   *ddb = NIL;
	ListCell   *lc;

	if (!OidIsValid(relid))
		return NIL;
	relids = rv->inh ? find_all_inheritors(relid, NoLock, NULL) : list_make1_oid(relid);
	foreach(lc, relids)
		if (ddb_relid_is_ddb(lfirst_oid(lc)))
			ddb = lappend_oid(ddb, lfirst_oid(lc));
	return ddb;
}

/*
 * Event trigger function (ddl_command_start, ALTER TABLE): refuse the column
 * changes that would leave a ddb table's stored keys unreadable, before
 * ALTER TABLE runs them.  Every column of a ddb table is a key column or the
 * item, and the tree stores each version under the encoding of its key
 * columns: dropping a key column leaves every stored key with one column
 * too many (and the remaining shape may still pass the shape rule), and a
 * key column of another type would have to decode keys encoded for the old
 * one.  DynamoDB fixes a table's key schema when the table is created, too.
 * Renaming a key column and changing a text key's collation keep the
 * encoding and stay allowed (a rename is checked at ddl_command_end:
 * ddb_check_rename); the item column's changes are judged by the shape
 * rule at ddl_command_end.  The command's table is checked and, when
 * the command recurses (no ONLY), every table inheriting from it: ALTER
 * TABLE on a partitioned or inheritance parent changes its ddb partitions
 * and children too.  Only the catalog is read here (no lock: ALTER TABLE
 * takes its own right after).
 */
Datum
ddb_event_trigger_alter_check(PG_FUNCTION_ARGS)
{
	EventTriggerData *trigdata;
	AlterTableStmt *stmt;
	ListCell   *lc;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_E_CONTAINING_SQL_NOT_PERMITTED),
				 errmsg("ddb_event_trigger_alter_check() must be called as an event trigger")));
	trigdata = (EventTriggerData *) fcinfo->context;
	if (trigdata->parsetree == NULL || !IsA(trigdata->parsetree, AlterTableStmt))
		PG_RETURN_NULL();
	stmt = (AlterTableStmt *) trigdata->parsetree;
	if (stmt->objtype != OBJECT_TABLE)
		PG_RETURN_NULL();

	foreach(lc, ddb_tables_of(stmt->relation))
	{
		ListCell   *c;

		foreach(c, stmt->cmds)
			ddb_check_alter_cmd(lfirst_oid(lc), lfirst_node(AlterTableCmd, c));
	}
	PG_RETURN_NULL();
}

/*
 * ddb_check_table_shape(regclass): raise the shape error for a table, if
 * any; returns the key schema as text, e.g. "PK S, SK S, item".
 */
Datum
ddb_check_table_shape(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	rel;
	DdbKeyInfo	ki;
	StringInfoData buf;

	rel = relation_open(relid, AccessShareLock);
	ddb_build_keyinfo(RelationGetDescr(rel), RelationGetRelationName(rel), &ki);
	initStringInfo(&buf);
	for (int k = 0; k < ki.nkeys; k++)
		appendStringInfo(&buf, "%s%s %c", k ? ", " : "",
						 quote_identifier(NameStr(TupleDescAttr(RelationGetDescr(rel), ki.keyattno[k] - 1)->attname)),
						 (char) ki.keytype[k]);
	appendStringInfo(&buf, ", %s",
					 quote_identifier(NameStr(TupleDescAttr(RelationGetDescr(rel), ki.itemattno - 1)->attname)));
	relation_close(rel, AccessShareLock);
	PG_RETURN_TEXT_P(cstring_to_text(buf.data));
}
