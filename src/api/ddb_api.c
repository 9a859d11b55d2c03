/*-------------------------------------------------------------------------
 *
 * ddb_api.c
 *	  The item API: DynamoDB's CreateTable, DescribeTable, PutItem, GetItem,
 *	  UpdateItem and DeleteItem as SQL functions.
 *
 * GetItem is one point lookup in the tree; the writes read the item's
 * current version (ddb_read_current: the live one, waiting for an
 * in-progress insert), evaluate the condition expression on it, and then
 * replace, insert or delete exactly that version; if it changed meanwhile
 * (or a concurrent insert of the key won) they start over, as EvalPlanQual
 * would, or fail with a serialization error under REPEATABLE READ.  No SPI and no planning on these paths.
 * Each write ends with CommandCounterIncrement, so later calls in the same
 * statement see it, as DynamoDB requests would.
 *
 * The writes keep their RowExclusiveLock on the table until the
 * transaction ends, as SQL writes do, so ddb_create_gsi's
 * ShareRowExclusiveLock waits for every uncommitted write before it
 * backfills.  After each write, ddb_gsi_maintain keeps the table's global
 * secondary indexes (the engine fires no triggers).
 *
 * A failed condition is ConditionalCheckFailedException and changes
 * nothing.  Other DynamoDB errors map to the DDB_ERRCODE_* SQLSTATEs of
 * ddb.h, their messages starting with the DynamoDB error name.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "storage/predicate.h"
#include "utils/json.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "ddb.h"
#include "model/ddb_expr.h"

PG_FUNCTION_INFO_V1(ddb_create_table);
PG_FUNCTION_INFO_V1(ddb_describe_table);
PG_FUNCTION_INFO_V1(ddb_put_item);
PG_FUNCTION_INFO_V1(ddb_get_item);
PG_FUNCTION_INFO_V1(ddb_update_item);
PG_FUNCTION_INFO_V1(ddb_delete_item);

#define ARG_TABLE(n)	(PG_ARGISNULL(n) ? null_table() : PG_GETARG_OID(n))
#define ARG_JSONB(n)	(PG_ARGISNULL(n) ? NULL : PG_GETARG_JSONB_P(n))
#define ARG_CSTRING(n)	(PG_ARGISNULL(n) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(n)))

static Oid
null_table(void)
{
	ereport(ERROR,
			(errcode(DDB_ERRCODE_VALIDATION),
			 errmsg("ValidationException: the table must not be null")));
	return InvalidOid;
}

typedef enum ReturnValues
{
	RV_NONE,
	RV_ALL_OLD,
	RV_UPDATED_OLD,
	RV_ALL_NEW,
	RV_UPDATED_NEW
} ReturnValues;

static ReturnValues
parse_return_values(const char *s, bool update)
{
	if (s == NULL || strcmp(s, "NONE") == 0)
		return RV_NONE;
	if (strcmp(s, "ALL_OLD") == 0)
		return RV_ALL_OLD;
	if (update && strcmp(s, "UPDATED_OLD") == 0)
		return RV_UPDATED_OLD;
	if (update && strcmp(s, "ALL_NEW") == 0)
		return RV_ALL_NEW;
	if (update && strcmp(s, "UPDATED_NEW") == 0)
		return RV_UPDATED_NEW;
	ereport(ERROR,
			(errcode(DDB_ERRCODE_VALIDATION),
			 errmsg("ValidationException: return_values \"%s\" is not valid for this operation", s),
			 errhint(update ? "Use NONE, ALL_OLD, UPDATED_OLD, ALL_NEW or UPDATED_NEW." :
					 "Use NONE or ALL_OLD.")));
	return RV_NONE;				/* keep compiler quiet */
}

/*
 * Parsed expressions cached per call site (fn_extra): a loop of calls with
 * the same expressions, names and values (a prepared statement, say)
 * parses once.  Placeholders are resolved at parse time, so the cache key
 * is all of them; the trees are read-only during evaluation.
 */
typedef struct ExprCache
{
	char	   *sig;			/* the request's expression inputs, serialized */
	int			siglen;
	DdbCondition *cond;
	DdbUpdate  *upd;
	DdbProjection *proj;
} ExprCache;

static void
sig_add(StringInfo sig, const void *data, int len)
{
	appendBinaryStringInfo(sig, (const char *) &len, sizeof(int));
	if (len > 0)
		appendBinaryStringInfo(sig, data, len);
}

/*
 * The parsed condition/update/projection of this call, from the cache or
 * freshly parsed into the cache's memory.
 */
static ExprCache *
parse_cached(FunctionCallInfo fcinfo, const char *condition, const char *update,
			 const char *projection, Jsonb *names, Jsonb *vals)
{
	ExprCache  *c = (ExprCache *) fcinfo->flinfo->fn_extra;
	StringInfoData sig;
	MemoryContext old;
	DdbExprContext *cx;

	initStringInfo(&sig);
	sig_add(&sig, condition, condition ? strlen(condition) + 1 : 0);
	sig_add(&sig, update, update ? strlen(update) + 1 : 0);
	sig_add(&sig, projection, projection ? strlen(projection) + 1 : 0);
	sig_add(&sig, names, names ? VARSIZE(names) : 0);
	sig_add(&sig, vals, vals ? VARSIZE(vals) : 0);
	if (c != NULL && c->sig != NULL && c->siglen == sig.len &&
		memcmp(c->sig, sig.data, sig.len) == 0)
	{
		pfree(sig.data);
		return c;
	}

	if (c == NULL)
		c = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(ExprCache));
	fcinfo->flinfo->fn_extra = c;
	if (c->sig)
		pfree(c->sig);
	c->sig = NULL;				/* invalid until the parse succeeds */
	c->cond = NULL;
	c->upd = NULL;
	c->proj = NULL;

	/* trees live as long as the call site (it keeps a few kB at most) */
	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	cx = ddb_expr_begin(names, vals);
	if (update != NULL)
		c->upd = ddb_parse_update(cx, update);
	if (condition != NULL)
		c->cond = ddb_parse_condition(cx, condition, "ConditionExpression");
	if (projection != NULL)
		c->proj = ddb_parse_projection(cx, projection);
	ddb_expr_end(cx);
	c->sig = palloc(sig.len);
	memcpy(c->sig, sig.data, sig.len);
	c->siglen = sig.len;
	MemoryContextSwitchTo(old);
	pfree(sig.data);
	return c;
}

/* The encoded key of a request's key document (exact) or item. */
static void
request_key(Relation rel, Jsonb *doc, bool exact, StringInfo key)
{
	int			natts = RelationGetNumberOfAttributes(rel);
	Datum	   *values = palloc(sizeof(Datum) * natts);
	bool	   *isnull = palloc(sizeof(bool) * natts);

	initStringInfo(key);
	ddb_key_from_jsonb(rel, doc, exact, values, isnull, key);
	pfree(values);
	pfree(isnull);
}

static void
require_doc(Jsonb *doc, const char *what)
{
	if (doc == NULL)
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: the %s must not be null", what)));
}

/* A privilege the operation needs besides the one ddb_open_table checked. */
static void
require_privilege(Relation rel, AclMode mode)
{
	if (pg_class_aclcheck(RelationGetRelid(rel), GetUserId(), mode) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, RelationGetRelationName(rel));
}

static void
condition_failed(void)
{
	ereport(ERROR,
			(errcode(DDB_ERRCODE_CONDITIONAL_CHECK),
			 errmsg("ConditionalCheckFailedException: the conditional request failed")));
}

/* The key attribute names of a table, for UpdateExpression validation. */
static const char **
key_names(Relation rel, int *n)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(rel);
	const char **names = palloc(sizeof(char *) * ki->nkeys);

	for (int k = 0; k < ki->nkeys; k++)
		names[k] = ddb_key_name(rel, k);
	*n = ki->nkeys;
	return names;
}

/*
 * Write 'item' (an API item, keys included) as the new version of its key,
 * whose encoding the caller already made (key attributes cannot change in
 * an update, so it is the request's key): replace the current version read
 * by the caller (have_current) or insert.  Returns false when that version
 * changed meanwhile or an insert lost a race with a concurrent insert of the
 * key (the caller starts over).
 */
static bool
write_item(Relation rel, Jsonb *item, StringInfo key, Jsonb *old,
		   bool have_current, ItemPointer current_tid, CommandId cid)
{
	HeapTuple	stored = ddb_form_stored_item(rel, ddb_item_without_keys(rel, item));
	ItemPointerData newtid;

	if (have_current)
	{
		TM_FailureData tmfd;
		TM_Result	result;

		result = ddb_update_version(rel, current_tid, stored, key->data, key->len, cid,
									InvalidSnapshot, true, &tmfd, &newtid);
		if (result != TM_Ok && ddb_retry_after_conflict(result))
			return false;		/* changed since we read it: start over */
	}
	else if (!ddb_insert_version(rel, key->data, key->len, stored, cid,
								 DDB_UNIQUE_RETURN, &newtid))
		return false;

	/* the engine fires no triggers: keep the indexes here */
	ddb_gsi_maintain(rel, have_current ? old : NULL, item);
	return true;
}

/* ------------------------------------------------------------------------
 * GetItem
 * ------------------------------------------------------------------------
 */
Datum
ddb_get_item(PG_FUNCTION_ARGS)
{
	Oid			relid = ARG_TABLE(0);
	Jsonb	   *keydoc = ARG_JSONB(1);
	char	   *projection = ARG_CSTRING(2);
	Jsonb	   *names = ARG_JSONB(3);
	Relation	rel;
	StringInfoData key;
	DdbProjection *proj = NULL;
	HeapTuple	tuple;
	Jsonb	   *item;

	require_doc(keydoc, "key");
	rel = ddb_open_table(relid, ACL_SELECT);
	if (projection != NULL)
		proj = parse_cached(fcinfo, NULL, NULL, projection, names, NULL)->proj;
	else if (names != NULL)
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: expression attribute names can only be specified when using expressions")));

	request_key(rel, keydoc, true, &key);

	tuple = ddb_lookup(rel, GetTransactionSnapshot(), key.data, key.len);
	if (tuple == NULL)
	{
		relation_close(rel, AccessShareLock);
		PG_RETURN_NULL();
	}
	item = ddb_tuple_to_item(rel, tuple);
	if (proj)
		item = ddb_apply_projection(proj, item);
	relation_close(rel, AccessShareLock);
	PG_RETURN_JSONB_P(item);
}

/* ------------------------------------------------------------------------
 * PutItem
 * ------------------------------------------------------------------------
 */
Datum
ddb_put_item(PG_FUNCTION_ARGS)
{
	Oid			relid = ARG_TABLE(0);
	Jsonb	   *item = ARG_JSONB(1);
	char	   *condition = ARG_CSTRING(2);
	ReturnValues rv = parse_return_values(ARG_CSTRING(5), false);
	Relation	rel;
	DdbCondition *cond = NULL;
	StringInfoData key;
	CommandId	cid;
	Jsonb	   *old = NULL;

	require_doc(item, "item");
	rel = ddb_open_table(relid, ACL_INSERT);
	require_privilege(rel, ACL_UPDATE);
	if (condition != NULL || rv != RV_NONE)
		require_privilege(rel, ACL_SELECT);

	cond = parse_cached(fcinfo, condition, NULL, NULL, ARG_JSONB(3), ARG_JSONB(4))->cond;
	ddb_validate_item(item);
	request_key(rel, item, false, &key);

	cid = GetCurrentCommandId(true);
	for (;;)
	{
		ItemPointerData tid;
		HeapTuple	current;
		bool		exists = ddb_read_current(rel, key.data, key.len, &tid, &current);

		old = exists ? ddb_tuple_to_item(rel, current) : NULL;
		if (cond && !ddb_eval_condition(cond, old))
			condition_failed();
		if (write_item(rel, item, &key, old, exists, &tid, cid))
			break;
		/* a concurrent insert of the key won: replace it instead */
	}
	CommandCounterIncrement();
	relation_close(rel, NoLock);	/* held to commit, as SQL writes hold it */

	if (rv == RV_ALL_OLD && old != NULL)
		PG_RETURN_JSONB_P(old);
	PG_RETURN_NULL();
}

/* ------------------------------------------------------------------------
 * UpdateItem
 * ------------------------------------------------------------------------
 */
Datum
ddb_update_item(PG_FUNCTION_ARGS)
{
	Oid			relid = ARG_TABLE(0);
	Jsonb	   *keydoc = ARG_JSONB(1);
	char	   *update = ARG_CSTRING(2);
	char	   *condition = ARG_CSTRING(3);
	ReturnValues rv = parse_return_values(ARG_CSTRING(6), true);
	Relation	rel;
	DdbCondition *cond = NULL;
	DdbUpdate  *upd;
	StringInfoData key;
	CommandId	cid;
	const char **keys;
	int			nkeys;
	Jsonb	   *old = NULL;
	Jsonb	   *new = NULL;
	Jsonb	   *updated_old = NULL;
	Jsonb	   *updated_new = NULL;

	require_doc(keydoc, "key");
	if (update == NULL)
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: an update expression is required")));
	rel = ddb_open_table(relid, ACL_UPDATE);
	require_privilege(rel, ACL_INSERT);
	require_privilege(rel, ACL_SELECT);

	{
		ExprCache  *c = parse_cached(fcinfo, condition, update, NULL, ARG_JSONB(4), ARG_JSONB(5));

		upd = c->upd;
		cond = c->cond;
	}
	keys = key_names(rel, &nkeys);
	request_key(rel, keydoc, true, &key);

	cid = GetCurrentCommandId(true);
	for (;;)
	{
		ItemPointerData tid;
		HeapTuple	current;
		bool		exists = ddb_read_current(rel, key.data, key.len, &tid, &current);

		old = exists ? ddb_tuple_to_item(rel, current) : NULL;
		if (cond && !ddb_eval_condition(cond, old))
			condition_failed();
		if (!exists && !ddb_update_creates_item(upd))
		{
			/* REMOVE/DELETE on a missing item: nothing to create */
			new = NULL;
			break;
		}
		new = ddb_apply_update(upd, old != NULL ? old : keydoc, keys, nkeys,
							   &updated_old, &updated_new);
		ddb_validate_item(new);
		if (write_item(rel, new, &key, old, exists, &tid, cid))
			break;
	}
	CommandCounterIncrement();
	relation_close(rel, NoLock);	/* held to commit, as SQL writes hold it */

	switch (rv)
	{
		case RV_NONE:
			break;
		case RV_ALL_OLD:
			if (old)
				PG_RETURN_JSONB_P(old);
			break;
		case RV_ALL_NEW:
			if (new)
				PG_RETURN_JSONB_P(new);
			break;
		case RV_UPDATED_OLD:
			if (old && updated_old)
				PG_RETURN_JSONB_P(updated_old);
			break;
		case RV_UPDATED_NEW:
			if (updated_new)
				PG_RETURN_JSONB_P(updated_new);
			break;
	}
	PG_RETURN_NULL();
}

/* ------------------------------------------------------------------------
 * DeleteItem
 * ------------------------------------------------------------------------
 */
Datum
ddb_delete_item(PG_FUNCTION_ARGS)
{
	Oid			relid = ARG_TABLE(0);
	Jsonb	   *keydoc = ARG_JSONB(1);
	char	   *condition = ARG_CSTRING(2);
	ReturnValues rv = parse_return_values(ARG_CSTRING(5), false);
	Relation	rel;
	DdbCondition *cond = NULL;
	StringInfoData key;
	CommandId	cid;
	ItemPointerData tid;
	HeapTuple	current;
	Jsonb	   *old = NULL;

	require_doc(keydoc, "key");
	rel = ddb_open_table(relid, ACL_DELETE);
	if (condition != NULL || rv != RV_NONE)
		require_privilege(rel, ACL_SELECT);
	cond = parse_cached(fcinfo, condition, NULL, NULL, ARG_JSONB(3), ARG_JSONB(4))->cond;
	request_key(rel, keydoc, true, &key);

	cid = GetCurrentCommandId(true);
	for (;;)
	{
		if (ddb_read_current(rel, key.data, key.len, &tid, &current))
		{
			TM_FailureData tmfd;
			TM_Result	result;

			old = ddb_tuple_to_item(rel, current);
			if (cond && !ddb_eval_condition(cond, old))
				condition_failed();
			result = ddb_delete_version(rel, &tid, cid, InvalidSnapshot, true, &tmfd, false);
			if (result != TM_Ok && ddb_retry_after_conflict(result))
				continue;		/* changed since we read it: start over */
			ddb_gsi_maintain(rel, old, NULL);
		}
		else
		{
			old = NULL;
			if (cond && !ddb_eval_condition(cond, NULL))
				condition_failed();
		}
		break;
	}
	CommandCounterIncrement();
	relation_close(rel, NoLock);	/* held to commit, as SQL writes hold it */

	if (rv == RV_ALL_OLD && old != NULL)
		PG_RETURN_JSONB_P(old);
	PG_RETURN_NULL();
}

/* ------------------------------------------------------------------------
 * CreateTable / DescribeTable
 * ------------------------------------------------------------------------
 */
/*
 * The column type of a key type.  String keys are text in the "C"
 * collation: DynamoDB orders them by UTF-8 bytes, as the tree does, so the
 * planner's key scan serves ranges and ORDER BY in any database's locale.
 */
static const char *
key_sql_type(const char *t, const char *what)
{
	if (t == NULL || strcmp(t, "S") == 0)
		return "text COLLATE \"C\"";
	if (strcmp(t, "N") == 0)
		return "numeric";
	if (strcmp(t, "B") == 0)
		return "bytea";
	ereport(ERROR,
			(errcode(DDB_ERRCODE_VALIDATION),
			 errmsg("ValidationException: %s type \"%s\" is not valid", what, t),
			 errhint("Key types are S (string), N (number) and B (binary).")));
	return NULL;
}

static void
check_name(const char *name, const char *what, int minlen, int maxlen)
{
	int			len = name ? strlen(name) : 0;

	if (len < minlen || len > maxlen)
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: %s must be between %d and %d characters long",
						what, minlen, maxlen)));
}

/*
 * ddb_create_table: sugar over CREATE TABLE ... USING ddb.  The key schema
 * is the table's columns (key columns named as the key attributes), so a
 * table created by hand in that shape is just as good, and DROP TABLE
 * leaves nothing behind.
 */
Datum
ddb_create_table(PG_FUNCTION_ARGS)
{
	char	   *name = ARG_CSTRING(0);
	char	   *pk = ARG_CSTRING(1);
	const char *pktype = key_sql_type(ARG_CSTRING(2), "partition key");
	char	   *sk = ARG_CSTRING(3);
	const char *sktype = key_sql_type(ARG_CSTRING(4), "sort key");
	const char *itemcol = "item";
	StringInfoData sql;
	Oid			relid;

	/* DynamoDB's table names: 3-255 of [a-zA-Z0-9_.-] */
	check_name(name, "table name", 3, 255);
	for (const char *p = name; *p; p++)
		if (!(isalnum((unsigned char) *p) || *p == '_' || *p == '-' || *p == '.'))
			ereport(ERROR,
					(errcode(DDB_ERRCODE_VALIDATION),
					 errmsg("ValidationException: table name \"%s\" may contain only a-z, A-Z, 0-9, '_', '-' and '.'",
							name)));
	check_name(pk, "partition key name", 1, 255);
	if (sk != NULL)
	{
		check_name(sk, "sort key name", 1, 255);
		if (strcmp(pk, sk) == 0)
			ereport(ERROR,
					(errcode(DDB_ERRCODE_VALIDATION),
					 errmsg("ValidationException: the partition key and the sort key must have different names")));
	}
	if (strcmp(pk, itemcol) == 0 || (sk && strcmp(sk, itemcol) == 0))
		itemcol = "item_";
	if (OidIsValid(get_relname_relid(name, RangeVarGetCreationNamespace(makeRangeVar(NULL, name, -1)))))
		ereport(ERROR,
				(errcode(DDB_ERRCODE_RESOURCE_IN_USE),
				 errmsg("ResourceInUseException: table \"%s\" already exists", name)));

	initStringInfo(&sql);
	appendStringInfo(&sql, "CREATE TABLE %s (%s %s NOT NULL, ",
					 quote_identifier(name), quote_identifier(pk), pktype);
	if (sk != NULL)
		appendStringInfo(&sql, "%s %s NOT NULL, ", quote_identifier(sk), sktype);
	appendStringInfo(&sql, "%s jsonb NOT NULL) USING ddb", quote_identifier(itemcol));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute(sql.data, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "could not create table \"%s\"", name);
	SPI_finish();

	relid = RangeVarGetRelid(makeRangeVar(NULL, name, -1), NoLock, false);
	PG_RETURN_OID(relid);
}

static void
append_json_string(StringInfo buf, const char *s)
{
	escape_json(buf, s);
}

Datum
ddb_describe_table(PG_FUNCTION_ARGS)
{
	Oid			relid = ARG_TABLE(0);
	Relation	rel = ddb_open_table(relid, ACL_SELECT);
	const DdbKeyInfo *ki = ddb_get_keyinfo(rel);
	StringInfoData buf;
	double		count = rel->rd_rel->reltuples;
	int64		size;

	size = DatumGetInt64(DirectFunctionCall1(pg_total_relation_size, ObjectIdGetDatum(relid)));
	initStringInfo(&buf);
	appendStringInfoString(&buf, "{\"TableName\": ");
	append_json_string(&buf, RelationGetRelationName(rel));
	appendStringInfoString(&buf, ", \"TableStatus\": \"ACTIVE\", \"KeySchema\": [");
	for (int k = 0; k < ki->nkeys; k++)
	{
		appendStringInfoString(&buf, k ? ", {\"AttributeName\": " : "{\"AttributeName\": ");
		append_json_string(&buf, ddb_key_name(rel, k));
		appendStringInfo(&buf, ", \"KeyType\": \"%s\"}", k == 0 ? "HASH" : "RANGE");
	}
	appendStringInfoString(&buf, "], \"AttributeDefinitions\": [");
	for (int k = 0; k < ki->nkeys; k++)
	{
		appendStringInfoString(&buf, k ? ", {\"AttributeName\": " : "{\"AttributeName\": ");
		append_json_string(&buf, ddb_key_name(rel, k));
		appendStringInfo(&buf, ", \"AttributeType\": \"%s\"}", ddb_key_type_name(ki->keytype[k]));
	}
	/* ItemCount is approximate, as DynamoDB's: the planner's estimate */
	appendStringInfo(&buf, "], \"ItemCount\": %.0f, \"TableSizeBytes\": " INT64_FORMAT
					 ", \"GlobalSecondaryIndexes\": ",
					 count < 0 ? 0 : count, size);
	ddb_gsi_describe(rel, &buf);
	appendStringInfoChar(&buf, '}');
	relation_close(rel, AccessShareLock);
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data)));
}
