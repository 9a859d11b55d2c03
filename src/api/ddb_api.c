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
 * Each write ends with CommandCounterIncrement, so later writes in the same
 * statement see it (their read of the current version does), as DynamoDB
 * requests would.  GetItem reads with the statement's snapshot, as every
 * other read of the statement does (see ddb_get_item_core_ext): it sees
 * the writes of earlier statements, not those of its own.
 *
 * What a write does not do (issue 19, single-item writes): parse an
 * expression it parsed before (ddb_parse_expressions, a per-backend cache
 * the SQL functions and ddb_api share), look the version it read up again
 * through the row-id map (ddb_read_current says on which leaf it is),
 * descend again to insert a key the read found missing (the insert starts
 * at the key's first leaf the read found: ddb_insert_version_at), build
 * the old item when neither a condition, ReturnValues, the response, an
 * index nor a stream needs it, build UPDATED_OLD/UPDATED_NEW nobody
 * asked for, or walk a PutItem's item once for its key and again for its
 * item column (ddb_item_split_key does both in one pass).
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
#include "common/hashfn.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "storage/predicate.h"
#include "tcop/utility.h"
#include "utils/json.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "ddb.h"
#include "model/ddb_expr.h"
#include "api/ddb_ops.h"
#include "api/ddb_protocol.h"

PG_FUNCTION_INFO_V1(ddb_create_table);
PG_FUNCTION_INFO_V1(ddb_describe_table);
PG_FUNCTION_INFO_V1(ddb_put_item);
PG_FUNCTION_INFO_V1(ddb_get_item);
PG_FUNCTION_INFO_V1(ddb_update_item);
PG_FUNCTION_INFO_V1(ddb_delete_item);

#define ARG_JSONB(n)	(PG_ARGISNULL(n) ? NULL : PG_GETARG_JSONB_P(n))
#define ARG_CSTRING(n)	(PG_ARGISNULL(n) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(n)))

/*
 * ReturnValues, checked as DynamoDB checks it: a value outside the enum is
 * a constraint violation; PutItem and DeleteItem take only NONE and
 * ALL_OLD.
 */
DdbReturnValues
ddb_parse_return_values(const char *s, bool update)
{
	static const char *const names[] = {"NONE", "ALL_OLD", "UPDATED_OLD", "ALL_NEW", "UPDATED_NEW"};

	if (s == NULL)
		return DDB_RV_NONE;
	for (int i = 0; i < lengthof(names); i++)
		if (strcmp(s, names[i]) == 0)
		{
			if (!update && i != DDB_RV_NONE && i != DDB_RV_ALL_OLD)
				ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", DDB_MSG_RETURN_VALUES_PUT);
			return (DdbReturnValues) i;
		}
	ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", DDB_MSG_RETURN_VALUES_ENUM, s);
	return DDB_RV_NONE;			/* keep compiler quiet */
}

/*
 * Parsed expressions, cached per backend: a client that sends the same
 * expressions with the same names and values (a prepared statement's
 * UpdateItem of a counter, say) parses them once, not on every call.
 * Placeholders are resolved at parse time, so the cache key is all of the
 * request's expression inputs: the texts and ExpressionAttributeNames and
 * ExpressionAttributeValues, byte for byte (a change of any is another
 * entry).  Parsing depends on nothing else (no catalog, no setting), so
 * entries need no invalidation; the trees are read-only during evaluation.
 * Bounded: at EXPR_CACHE_SIZE entries the cache is emptied and starts
 * over.  Each entry parses into a context of its own, from copies of the
 * names and values, which joins the cache only when the parse succeeded
 * (an invalid expression leaves nothing behind).  Requests whose inputs are
 * larger than EXPR_CACHE_MAX_SIG bytes are parsed without the cache.
 */
#define EXPR_CACHE_SIZE		64
#define EXPR_CACHE_MAX_SIG	(64 * 1024)

typedef struct ExprCacheEntry
{
	uint32		hash;			/* hash_bytes of sig: the hash table's key */
	char	   *sig;			/* the request's expression inputs, serialized */
	int			siglen;
	MemoryContext cxt;			/* the entry's memory, NULL when it is unused */
	DdbParsedExpressions parsed;
} ExprCacheEntry;

static HTAB *expr_cache = NULL;
static MemoryContext expr_cache_cxt = NULL;
static uint64 expr_cache_hits = 0;
static uint64 expr_cache_misses = 0;

static void
sig_add(StringInfo sig, const void *data, int len)
{
	appendBinaryStringInfo(sig, (const char *) &len, sizeof(int));
	if (len > 0)
		appendBinaryStringInfo(sig, data, len);
}

static void
parse_into(DdbParsedExpressions *p, const char *condition, const char *update,
		   const char *projection, Jsonb *names, Jsonb *vals)
{
	DdbExprContext *cx = ddb_expr_begin(names, vals);

	memset(p, 0, sizeof(DdbParsedExpressions));
	if (update != NULL)
		p->upd = ddb_parse_update(cx, update);
	if (condition != NULL)
		p->cond = ddb_parse_condition(cx, condition, "ConditionExpression");
	if (projection != NULL)
		p->proj = ddb_parse_projection(cx, projection);
	ddb_expr_end(cx);
}

/*
 * The parsed condition, update and projection of a request (NULL texts:
 * none), with the placeholders of names and vals, from the cache or freshly
 * parsed into it.  In the order DynamoDB validates them: update, condition,
 * projection, then unused placeholders.  The result is read-only; it lives
 * at least until the next call.
 */
const DdbParsedExpressions *
ddb_parse_expressions(const char *condition, const char *update, const char *projection,
					  Jsonb *names, Jsonb *vals)
{
	StringInfoData sig;
	uint32		hash;
	ExprCacheEntry *e;
	bool		found;
	MemoryContext cxt,
				old;
	Jsonb	   *names_copy = NULL,
			   *vals_copy = NULL;
	static const DdbParsedExpressions none = {NULL, NULL, NULL};

	/* no expressions (a plain PutItem): nothing to parse or to look up */
	if (condition == NULL && update == NULL && projection == NULL &&
		names == NULL && vals == NULL)
		return &none;

	initStringInfo(&sig);
	sig_add(&sig, condition, condition ? strlen(condition) + 1 : 0);
	sig_add(&sig, update, update ? strlen(update) + 1 : 0);
	sig_add(&sig, projection, projection ? strlen(projection) + 1 : 0);
	sig_add(&sig, names, names ? VARSIZE(names) : 0);
	sig_add(&sig, vals, vals ? VARSIZE(vals) : 0);

	if (sig.len > EXPR_CACHE_MAX_SIG)
	{
		DdbParsedExpressions *p = palloc(sizeof(DdbParsedExpressions));

		pfree(sig.data);
		parse_into(p, condition, update, projection, names, vals);
		return p;
	}

	hash = hash_bytes((const unsigned char *) sig.data, sig.len);
	if (expr_cache != NULL)
	{
		e = hash_search(expr_cache, &hash, HASH_FIND, NULL);
		if (e != NULL && e->cxt != NULL && e->siglen == sig.len &&
			memcmp(e->sig, sig.data, sig.len) == 0)
		{
			pfree(sig.data);
			expr_cache_hits++;
			return &e->parsed;
		}
	}
	expr_cache_misses++;

	/* parse first, in a context of the entry's own that the call's owns until it succeeds */
	cxt = AllocSetContextCreate(CurrentMemoryContext, "ddb parsed expressions",
								ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(cxt);
	if (names != NULL)
	{
		names_copy = palloc(VARSIZE(names));
		memcpy(names_copy, names, VARSIZE(names));
	}
	if (vals != NULL)
	{
		vals_copy = palloc(VARSIZE(vals));
		memcpy(vals_copy, vals, VARSIZE(vals));
	}
	{
		DdbParsedExpressions parsed;
		char	   *sigcopy;

		parse_into(&parsed, condition, update, projection, names_copy, vals_copy);
		sigcopy = palloc(sig.len);
		memcpy(sigcopy, sig.data, sig.len);
		MemoryContextSwitchTo(old);
		pfree(sig.data);

		if (expr_cache_cxt == NULL)
			expr_cache_cxt = AllocSetContextCreate(CacheMemoryContext, "ddb expression cache",
												   ALLOCSET_SMALL_SIZES);
		if (expr_cache != NULL && hash_get_num_entries(expr_cache) >= EXPR_CACHE_SIZE)
		{
			/* full: start over (every entry's context is a child) */
			MemoryContextReset(expr_cache_cxt);
			expr_cache = NULL;
		}
		if (expr_cache == NULL)
		{
			HASHCTL		ctl;

			ctl.keysize = sizeof(uint32);
			ctl.entrysize = sizeof(ExprCacheEntry);
			ctl.hcxt = expr_cache_cxt;
			expr_cache = hash_create("ddb expression cache", EXPR_CACHE_SIZE, &ctl,
									 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		}
		e = hash_search(expr_cache, &hash, HASH_ENTER, &found);
		if (found && e->cxt != NULL)
			MemoryContextDelete(e->cxt);	/* another request of the same hash */
		MemoryContextSetParent(cxt, expr_cache_cxt);
		e->cxt = cxt;
		e->sig = sigcopy;
		e->siglen = sig.len;
		e->parsed = parsed;
	}
	return &e->parsed;
}

/*
 * ddb_expression_cache_stats(): the backend's expression cache, for tests:
 * {"entries", "hits", "misses"}.
 */
PG_FUNCTION_INFO_V1(ddb_expression_cache_stats);
Datum
ddb_expression_cache_stats(PG_FUNCTION_ARGS)
{
	char	   *s = psprintf("{\"entries\": %ld, \"hits\": " UINT64_FORMAT ", \"misses\": " UINT64_FORMAT "}",
							 expr_cache ? hash_get_num_entries(expr_cache) : 0L,
							 expr_cache_hits, expr_cache_misses);

	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(s)));
}

/*
 * DynamoDB's rule on placeholders without expressions: names need some
 * expression, values one that takes values (value_exprs names those of the
 * operation, "UpdateExpression and ConditionExpression").  Both front doors
 * check it.
 */
void
ddb_check_expression_use(bool has_expr, bool has_value_expr, const char *value_exprs,
						 bool has_names, bool has_vals)
{
	if (has_names && !has_expr)
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", DDB_MSG_EAN_WITHOUT_EXPRESSIONS);
	if (has_vals && !has_value_expr)
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", DDB_MSG_EAV_WITHOUT_EXPRESSIONS,
				  psprintf("%s %s null", value_exprs, strchr(value_exprs, ' ') ? "are" : "is"));
}

/*
 * The encoded key of a request's key document (exact) or item, by the key
 * names 'names' (ddb_table_key_names).  The columns' values go to arrays on
 * the stack when the table has few columns (every table the API creates has
 * a key column or two and the item).
 */
static Jsonb *
request_key_ext(Relation rel, const char **names, Jsonb *doc, bool exact, bool split,
				StringInfo key)
{
	int			natts = RelationGetNumberOfAttributes(rel);
	Datum		values_local[16];
	bool		isnull_local[16];
	Datum	   *values = natts <= lengthof(values_local) ? values_local :
		palloc(sizeof(Datum) * natts);
	bool	   *isnull = natts <= lengthof(isnull_local) ? isnull_local :
		palloc(sizeof(bool) * natts);
	Jsonb	   *itemcol = NULL;

	initStringInfo(key);
	if (split)
		itemcol = ddb_item_split_key(rel, doc, values, isnull, key);
	else
		ddb_key_from_jsonb_named(rel, names, doc, exact, values, isnull, key);
	/* an item's key, to be written: refused before anything is */
	if (!exact)
		ddb_check_key_encoded_len(rel, key->len);
	if (values != values_local)
	{
		pfree(values);
		pfree(isnull);
	}
	return itemcol;
}

static void
request_key_named(Relation rel, const char **names, Jsonb *doc, bool exact, StringInfo key)
{
	(void) request_key_ext(rel, names, doc, exact, false, key);
}

/* The encoded key of a request's key document (exact) or item. */
void
ddb_request_key(Relation rel, Jsonb *doc, bool exact, StringInfo key)
{
	const char *names[DDB_MAX_KEY_COLUMNS];

	ddb_table_key_names(rel, names);
	request_key_named(rel, names, doc, exact, key);
}

static void
require_doc(Jsonb *doc, const char *member)
{
	if (doc == NULL)
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
				  DDB_MSG_REQUIRED_PARAMETER, member);
}

/* A privilege the operation needs besides the one ddb_open_table checked. */
static void
require_privilege(Relation rel, AclMode mode)
{
	if (pg_class_aclcheck(RelationGetRelid(rel), GetUserId(), mode) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, RelationGetRelationName(rel));
}

/*
 * The privileges a write needs besides the one its table was opened with
 * (puts: INSERT and UPDATE; updates: UPDATE, INSERT and SELECT; deletes:
 * DELETE), plus SELECT when it reads the item: for a condition, return
 * values, ReturnConsumedCapacity (units of the stored item's size) or
 * ReturnItemCollectionMetrics (the size of the item's collection).
 */
void
ddb_check_write_privileges(Relation rel, int op, bool reads)
{
	if (op == ACL_INSERT)
		require_privilege(rel, ACL_UPDATE);
	else if (op == ACL_UPDATE)
	{
		require_privilege(rel, ACL_INSERT);
		reads = true;
	}
	if (reads)
		require_privilege(rel, ACL_SELECT);
}

void
ddb_condition_failed(void)
{
	ddb_raise(DDB_ERRCODE_CONDITIONAL_CHECK, "ConditionalCheckFailedException",
			  DDB_MSG_CONDITIONAL_FAILED);
}

/*
 * The key attribute names of a table, for UpdateExpression validation:
 * copies, which UpdateItem keeps across its retries.  The table catalog's
 * strings go when a changed catalog row is read again (ddb_table_info), and
 * a retry may read it again after taking in an invalidation (a wait, a
 * detoasted item, an index table opened).
 */
static const char **
key_names(Relation rel, int *n)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(rel);
	const char **names = palloc(sizeof(char *) * ki->nkeys);

	for (int k = 0; k < ki->nkeys; k++)
		names[k] = pstrdup(ddb_key_name(rel, k));
	*n = ki->nkeys;
	return names;
}

/*
 * UpdateItem's check that no action targets a key attribute: of the
 * request alone, made before the item is read (and its condition
 * evaluated), by UpdateItem and by TransactWriteItems' preparation.
 */
void
ddb_check_update_keys(Relation rel, DdbUpdate *upd)
{
	const char **keys;
	int			nkeys;

	if (upd == NULL)
		return;
	keys = key_names(rel, &nkeys);
	ddb_update_check_key_attributes(upd, keys, nkeys);
	ddb_check_update_key_paths(rel, upd);
}

/*
 * Is there a path below a key attribute of the table or of one of its
 * indexes (k.x, k[0]) in an expression?  DynamoDB's "Key attributes must be
 * scalars" (with "Key" for the table's keys, checked first, or "IndexKey"),
 * a check of the request alone, made before the item is read.  'nests'
 * answers for one attribute, or for any when given NULL: an expression
 * without a nested path (the common case) reads no index list.
 */
static void
check_key_paths(Relation rel, bool (*nests) (const void *expr, const char *name),
				const void *expr)
{
	const DdbKeyInfo *ki;
	const char **keys;
	int			nkeys;

	if (expr == NULL || !nests(expr, NULL))
		return;
	ki = ddb_get_keyinfo(rel);
	for (int k = 0; k < ki->nkeys; k++)
		if (nests(expr, ddb_key_name(rel, k)))
			ereport(ERROR, (errcode(DDB_ERRCODE_VALIDATION),
							errmsg("ValidationException: " DDB_MSG_KEY_NOT_SCALAR, "Key",
								   ddb_key_name(rel, k))));
	nkeys = ddb_index_key_names(rel, &keys);
	for (int k = 0; k < nkeys; k++)
		if (nests(expr, keys[k]))
			ereport(ERROR, (errcode(DDB_ERRCODE_VALIDATION),
							errmsg("ValidationException: " DDB_MSG_KEY_NOT_SCALAR, "IndexKey", keys[k])));
}

static bool
update_nests(const void *expr, const char *name)
{
	return ddb_update_nests_into((DdbUpdate *) expr, name);
}

static bool
projection_nests(const void *expr, const char *name)
{
	return ddb_projection_nests_into((DdbProjection *) expr, name);
}

static bool
condition_nests(const void *expr, const char *name)
{
	return ddb_condition_nests_into((DdbCondition *) expr, name);
}

/*
 * An update may not set an index key to a type the request shows to be
 * wrong (ddb_gsi_check_update_types), nor name a path below a key
 * attribute, as a target or in a value (check_key_paths), in that order.
 */
void
ddb_check_update_key_paths(Relation rel, DdbUpdate *upd)
{
	if (upd == NULL)
		return;
	ddb_gsi_check_update_types(rel, upd);
	check_key_paths(rel, update_nests, upd);
}

/*
 * A ProjectionExpression (GetItem, BatchGetItem, TransactGetItems, Query,
 * Scan) may not name a path below a key attribute of the table or of an
 * index.
 */
void
ddb_check_projection_key_paths(Relation rel, DdbProjection *proj)
{
	check_key_paths(rel, projection_nests, proj);
}

/*
 * Nor may a condition: a FilterExpression (Query, Scan) or a
 * ConditionExpression (PutItem, UpdateItem, DeleteItem, each action of
 * TransactWriteItems), checked before the item is read.
 */
void
ddb_check_condition_key_paths(Relation rel, DdbCondition *cond)
{
	check_key_paths(rel, condition_nests, cond);
}

/*
 * Write 'item' (an API item, keys included) as the new version of its key,
 * whose encoding the caller already made (key attributes cannot change in
 * an update, so it is the request's key), with 'itemcol' its item column
 * if the caller made that too (NULL: made here): replace the current version read
 * by the caller (have_current), found on 'leaf', or insert, starting at the
 * key's first leaf 'leaf' that the read found (one descent for a new key:
 * ddb_tree_insert_at).  Returns false when that version
 * changed meanwhile or an insert lost a race with a concurrent insert of the
 * key (the caller starts over).
 */
static bool
write_item(Relation rel, Jsonb *item, Jsonb *itemcol, StringInfo key, Jsonb *old,
		   bool have_current, ItemPointer current_tid, BlockNumber leaf, CommandId cid)
{
	HeapTuple	stored;
	ItemPointerData newtid;

	/* (an UpdateItem's key came from its Key, not checked for writing) */
	ddb_check_key_encoded_len(rel, key->len);
	stored = ddb_form_stored_item(rel, itemcol ? itemcol : ddb_item_without_keys(rel, item));
	if (have_current)
	{
		TM_FailureData tmfd;
		TM_Result	result;

		result = ddb_update_version_at(rel, current_tid, leaf, stored, key->data, key->len,
									   cid, &tmfd, &newtid);
		if (result != TM_Ok && ddb_retry_after_conflict(result))
			return false;		/* changed since we read it: start over */
	}
	else if (!ddb_insert_version_at(rel, leaf, key->data, key->len, stored, cid,
									DDB_UNIQUE_RETURN, &newtid))
		return false;

	/* the engine fires no triggers: keep the indexes and the stream here */
	ddb_gsi_maintain(rel, have_current ? old : NULL, item);
	ddb_stream_capture(rel, have_current ? old : NULL, item);
	return true;
}

/* ------------------------------------------------------------------------
 * The cores
 * ------------------------------------------------------------------------
 */

/* GetItem: the item of a key (projected), or NULL. */
Jsonb *
ddb_get_item_core(Relation rel, Jsonb *keydoc, DdbProjection *proj)
{
	return ddb_get_item_core_ext(rel, keydoc, proj, true);
}

/*
 * ddb_get_item_core for a caller that applies the projection itself
 * (project false: the whole item, the projection only checked).
 */
Jsonb *
ddb_get_item_core_ext(Relation rel, Jsonb *keydoc, DdbProjection *proj, bool project)
{
	StringInfoData key;
	const char *keynames[DDB_MAX_KEY_COLUMNS];

	/* the key names once, for the key and the item */
	ddb_table_key_names(rel, keynames);
	request_key_named(rel, keynames, keydoc, true, &key);
	/* the request's key first, then its projection (DynamoDB's order) */
	if (proj)
		ddb_check_projection_key_paths(rel, proj);
	return ddb_get_item_encoded(rel, key.data, key.len, project ? proj : NULL, keynames);
}

/*
 * GetItem of a key already encoded (ddb_request_key).  keynames: the
 * table's key attribute names, for callers that read many items (NULL:
 * looked up).
 */
Jsonb *
ddb_get_item_encoded(Relation rel, const char *key, int keylen, DdbProjection *proj,
					 const char *const *keynames)
{
	DdbStoredItem *stored;
	Jsonb	   *item;

	/*
	 * The active snapshot: the calling statement's (or cursor's), as every
	 * other read in it uses.  GetTransactionSnapshot() would take a new one
	 * per call under READ COMMITTED, so one statement could see an item
	 * change between two of its calls.
	 */
	stored = ddb_lookup_stored(rel, GetActiveSnapshot(), key, keylen);
	if (stored == NULL)
		return NULL;
	item = ddb_stored_to_item(rel, stored, keynames);
	/* (the item is a copy: a batch of many keys keeps only the items) */
	pfree(stored);
	if (proj)
		item = ddb_apply_projection(proj, item);
	return item;
}

/*
 * Does a write that needs no old item for itself (no condition, no return
 * values) need it all the same?  Index maintenance and streams compare the
 * old item with the new one.
 */
static bool
old_item_needed(Relation rel, bool want_old, DdbCondition *cond)
{
	return want_old || cond != NULL || ddb_index_any(rel) || ddb_stream_capturing(rel);
}

/*
 * PutItem: replace the whole item, if the condition holds on the current
 * one.  Ends with CommandCounterIncrement, so later calls see the write.
 */
void
ddb_put_item_core(Relation rel, Jsonb *item, DdbCondition *cond, DdbWriteResult *res)
{
	ddb_put_item_core_ext(rel, item, cond, true, res);
}

/*
 * ddb_put_item_core for a caller that says whether it needs res->old
 * (want_old; without it res->old may stay NULL for an item that existed).
 */
void
ddb_put_item_core_ext(Relation rel, Jsonb *item, DdbCondition *cond, bool want_old,
					  DdbWriteResult *res)
{
	StringInfoData key;
	CommandId	cid;
	bool		need_old;
	Jsonb	   *itemcol;

	memset(res, 0, sizeof(DdbWriteResult));
	PreventCommandIfReadOnly("PutItem");
	item = ddb_check_item(item);
	/* the key and the item column in one pass over the item */
	itemcol = request_key_ext(rel, NULL, item, false, true, &key);
	ddb_check_condition_key_paths(rel, cond);
	need_old = old_item_needed(rel, want_old, cond);

	cid = GetCurrentCommandId(true);
	for (;;)
	{
		ItemPointerData tid;
		HeapTuple	current;
		BlockNumber leaf;
		bool		exists = ddb_read_current(rel, key.data, key.len, &tid,
											  need_old ? &current : NULL, &leaf);

		res->old = exists && need_old ? ddb_tuple_to_item(rel, current) : NULL;
		if (cond && !ddb_eval_condition(cond, res->old))
		{
			res->condition_failed = true;
			return;
		}
		if (write_item(rel, item, itemcol, &key, res->old, exists, &tid, leaf, cid))
			break;
		/* a concurrent insert of the key won: replace it instead */
		CHECK_FOR_INTERRUPTS();
	}
	res->new = item;
	CommandCounterIncrement();
}

/*
 * The item an update makes of an existing item: only the attributes the
 * update names are expanded and changed (ddb_apply_update_partial), the
 * other pairs are copied as stored.  NULL when the update cannot be applied
 * that way (the caller applies it to the whole item).
 */
static Jsonb *
update_stored(DdbUpdate *upd, Jsonb *old, const char **keys, int nkeys, bool want_updated,
			  DdbWriteResult *res)
{
	const char **touched;
	int			ntouched;
	Jsonb	   *changed;
	Jsonb	   *new;

	changed = ddb_apply_update_partial(upd, old, keys, nkeys,
									   want_updated ? &res->updated_old : NULL,
									   want_updated ? &res->updated_new : NULL,
									   &touched, &ntouched);
	if (changed == NULL)
		return NULL;
	new = ddb_jsonb_replace_pairs(old, touched, ntouched, changed);
#ifdef DDB_CHECKS
	{
		/* the same as the whole item's update, byte for byte */
		Jsonb	   *uo = NULL,
				   *un = NULL;
		Jsonb	   *whole = ddb_apply_update(upd, old, keys, nkeys,
											 want_updated ? &uo : NULL,
											 want_updated ? &un : NULL);

		DdbCheck(VARSIZE(whole) == VARSIZE(new) && memcmp(whole, new, VARSIZE(new)) == 0);
		DdbCheck(!want_updated ||
				 (VARSIZE(uo) == VARSIZE(res->updated_old) &&
				  memcmp(uo, res->updated_old, VARSIZE(uo)) == 0 &&
				  VARSIZE(un) == VARSIZE(res->updated_new) &&
				  memcmp(un, res->updated_new, VARSIZE(un)) == 0));
	}
#endif
	return new;
}

/*
 * UpdateItem: apply an update (NULL: none) to the current item, or to the
 * key alone when there is none, if the condition holds.  The result is
 * always written, as in DynamoDB: an update of a missing item creates it,
 * whatever its actions, and an UpdateItem without actions creates the
 * key-only item (and leaves an existing one as it is).
 */
void
ddb_update_item_core(Relation rel, Jsonb *keydoc, DdbUpdate *upd, DdbCondition *cond,
					 DdbWriteResult *res)
{
	ddb_update_item_core_ext(rel, keydoc, upd, cond, true, res);
}

/*
 * ddb_update_item_core for a caller that says whether it needs
 * res->updated_old and res->updated_new (want_updated: ReturnValues
 * UPDATED_OLD or UPDATED_NEW); without it they stay NULL.
 */
void
ddb_update_item_core_ext(Relation rel, Jsonb *keydoc, DdbUpdate *upd, DdbCondition *cond,
						 bool want_updated, DdbWriteResult *res)
{
	StringInfoData key;
	CommandId	cid;
	const char **keys;
	int			nkeys;

	memset(res, 0, sizeof(DdbWriteResult));
	PreventCommandIfReadOnly("UpdateItem");
	keys = key_names(rel, &nkeys);
	ddb_request_key(rel, keydoc, true, &key);
	/* the condition's paths before the update's (DynamoDB Local's order) */
	ddb_check_condition_key_paths(rel, cond);
	if (upd)
	{
		ddb_update_check_key_attributes(upd, keys, nkeys);
		ddb_check_update_key_paths(rel, upd);
	}

	cid = GetCurrentCommandId(true);
	for (;;)
	{
		ItemPointerData tid;
		HeapTuple	current;
		BlockNumber leaf;
		bool		exists = ddb_read_current(rel, key.data, key.len, &tid, &current, &leaf);

		res->old = exists ? ddb_tuple_to_item(rel, current) : NULL;
		if (cond && !ddb_eval_condition(cond, res->old))
		{
			res->condition_failed = true;
			return;
		}
		if (upd == NULL)
		{
			res->new = res->old ? res->old : keydoc;
			if (exists)
				break;			/* nothing to change */
		}
		else
		{
			res->updated_old = res->updated_new = NULL;
			res->new = res->old ? update_stored(upd, res->old, keys, nkeys, want_updated, res) : NULL;
			if (res->new == NULL)
				res->new = ddb_apply_update(upd, res->old ? res->old : keydoc, keys, nkeys,
											want_updated ? &res->updated_old : NULL,
											want_updated ? &res->updated_new : NULL);
			ddb_gsi_check_update_values(rel, upd, res->new);
		}
		res->new = ddb_check_item_size_msg(res->new, upd ? DDB_MSG_UPDATE_ITEM_SIZE : DDB_MSG_ITEM_SIZE,
										   &res->new_size);
		if (write_item(rel, res->new, NULL, &key, res->old, exists, &tid, leaf, cid))
			break;
		CHECK_FOR_INTERRUPTS();
	}
	/* nothing to show is no Attributes, not an empty map */
	if (res->updated_old && JB_ROOT_COUNT(res->updated_old) == 0)
		res->updated_old = NULL;
	if (res->updated_new && JB_ROOT_COUNT(res->updated_new) == 0)
		res->updated_new = NULL;
	CommandCounterIncrement();
}

/* DeleteItem: delete the item, if the condition holds on it. */
void
ddb_delete_item_core(Relation rel, Jsonb *keydoc, DdbCondition *cond, DdbWriteResult *res)
{
	ddb_delete_item_core_ext(rel, keydoc, cond, true, res);
}

/* ddb_delete_item_core for a caller that says whether it needs res->old. */
void
ddb_delete_item_core_ext(Relation rel, Jsonb *keydoc, DdbCondition *cond, bool want_old,
						 DdbWriteResult *res)
{
	StringInfoData key;
	CommandId	cid;
	ItemPointerData tid;
	HeapTuple	current;
	BlockNumber leaf;
	bool		need_old;

	memset(res, 0, sizeof(DdbWriteResult));
	PreventCommandIfReadOnly("DeleteItem");
	ddb_request_key(rel, keydoc, true, &key);
	ddb_check_condition_key_paths(rel, cond);
	need_old = old_item_needed(rel, want_old, cond);

	cid = GetCurrentCommandId(true);
	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		if (ddb_read_current(rel, key.data, key.len, &tid, need_old ? &current : NULL, &leaf))
		{
			TM_FailureData tmfd;
			TM_Result	result;

			res->old = need_old ? ddb_tuple_to_item(rel, current) : NULL;
			if (cond && !ddb_eval_condition(cond, res->old))
			{
				res->condition_failed = true;
				return;
			}
			result = ddb_delete_version_at(rel, &tid, leaf, cid, &tmfd);
			if (result != TM_Ok && ddb_retry_after_conflict(result))
				continue;		/* changed since we read it: start over */
			if (need_old)
			{
				ddb_gsi_maintain(rel, res->old, NULL);
				ddb_stream_capture(rel, res->old, NULL);
			}
		}
		else
		{
			res->old = NULL;
			if (cond && !ddb_eval_condition(cond, NULL))
			{
				res->condition_failed = true;
				return;
			}
		}
		break;
	}
	CommandCounterIncrement();
}

/* The Attributes a write returns for ReturnValues, or NULL. */
Jsonb *
ddb_write_result(DdbWriteResult *res, DdbReturnValues rv)
{
	switch (rv)
	{
		case DDB_RV_NONE:
			return NULL;
		case DDB_RV_ALL_OLD:
			return res->old;
		case DDB_RV_ALL_NEW:
			return res->new;
		case DDB_RV_UPDATED_OLD:
			return res->old ? res->updated_old : NULL;
		case DDB_RV_UPDATED_NEW:
			return res->updated_new;
	}
	return NULL;
}

/* ------------------------------------------------------------------------
 * The SQL functions (document form).  The table is a DynamoDB name (text,
 * in ddb.schema) or a regclass.
 * ------------------------------------------------------------------------
 */

/* Return a write's Attributes, or SQL NULL; the table stays locked. */
static Datum
write_return(FunctionCallInfo fcinfo, Relation rel, DdbWriteResult *res,
			 DdbReturnValues rv)
{
	Jsonb	   *out;

	relation_close(rel, NoLock);	/* held to commit, as SQL writes hold it */
	if (res->condition_failed)
		ddb_condition_failed();
	out = ddb_write_result(res, rv);
	if (out == NULL)
		PG_RETURN_NULL();
	PG_RETURN_JSONB_P(out);
}

/* ddb_get_item(tbl, key, projection, names) */
Datum
ddb_get_item(PG_FUNCTION_ARGS)
{
	Jsonb	   *keydoc = ARG_JSONB(1);
	char	   *projection = ARG_CSTRING(2);
	Jsonb	   *names = ARG_JSONB(3);
	Relation	rel;
	DdbProjection *proj = NULL;
	Jsonb	   *item;

	rel = ddb_table_open_arg(fcinfo, 0, ACL_SELECT);
	require_doc(keydoc, "Key");
	ddb_check_expression_use(projection != NULL, false, "", names != NULL, false);
	if (projection != NULL)
		proj = ddb_parse_expressions(NULL, NULL, projection, names, NULL)->proj;
	item = ddb_get_item_core(rel, keydoc, proj);
	relation_close(rel, AccessShareLock);
	if (item == NULL)
		PG_RETURN_NULL();
	PG_RETURN_JSONB_P(item);
}

/* ddb_put_item(tbl, item, condition, names, vals, return_values) */
Datum
ddb_put_item(PG_FUNCTION_ARGS)
{
	Jsonb	   *item = ARG_JSONB(1);
	char	   *condition = ARG_CSTRING(2);
	DdbReturnValues rv = ddb_parse_return_values(ARG_CSTRING(5), false);
	Relation	rel;
	DdbCondition *cond;
	DdbWriteResult res;

	rel = ddb_table_open_arg(fcinfo, 0, ACL_INSERT);
	ddb_check_write_privileges(rel, ACL_INSERT, condition != NULL || rv != DDB_RV_NONE);
	require_doc(item, "Item");
	ddb_check_expression_use(condition != NULL, condition != NULL, "ConditionExpression",
							 !PG_ARGISNULL(3), !PG_ARGISNULL(4));
	cond = ddb_parse_expressions(condition, NULL, NULL, ARG_JSONB(3), ARG_JSONB(4))->cond;
	ddb_put_item_core_ext(rel, item, cond, rv != DDB_RV_NONE, &res);
	return write_return(fcinfo, rel, &res, rv);
}

/* ddb_update_item(tbl, key, update_expression, condition, names, vals, return_values) */
Datum
ddb_update_item(PG_FUNCTION_ARGS)
{
	Jsonb	   *keydoc = ARG_JSONB(1);
	char	   *update = ARG_CSTRING(2);
	char	   *condition = ARG_CSTRING(3);
	DdbReturnValues rv = ddb_parse_return_values(ARG_CSTRING(6), true);
	Relation	rel;
	const DdbParsedExpressions *c;
	DdbWriteResult res;

	rel = ddb_table_open_arg(fcinfo, 0, ACL_UPDATE);
	ddb_check_write_privileges(rel, ACL_UPDATE, true);
	require_doc(keydoc, "Key");
	ddb_check_expression_use(update || condition, update || condition,
							 "UpdateExpression and ConditionExpression",
							 !PG_ARGISNULL(4), !PG_ARGISNULL(5));
	c = ddb_parse_expressions(condition, update, NULL, ARG_JSONB(4), ARG_JSONB(5));
	ddb_update_item_core_ext(rel, keydoc, c->upd, c->cond,
							 rv == DDB_RV_UPDATED_OLD || rv == DDB_RV_UPDATED_NEW, &res);
	return write_return(fcinfo, rel, &res, rv);
}

/* ddb_delete_item(tbl, key, condition, names, vals, return_values) */
Datum
ddb_delete_item(PG_FUNCTION_ARGS)
{
	Jsonb	   *keydoc = ARG_JSONB(1);
	char	   *condition = ARG_CSTRING(2);
	DdbReturnValues rv = ddb_parse_return_values(ARG_CSTRING(5), false);
	Relation	rel;
	DdbCondition *cond;
	DdbWriteResult res;

	rel = ddb_table_open_arg(fcinfo, 0, ACL_DELETE);
	ddb_check_write_privileges(rel, ACL_DELETE, condition != NULL || rv != DDB_RV_NONE);
	require_doc(keydoc, "Key");
	ddb_check_expression_use(condition != NULL, condition != NULL, "ConditionExpression",
							 !PG_ARGISNULL(3), !PG_ARGISNULL(4));
	cond = ddb_parse_expressions(condition, NULL, NULL, ARG_JSONB(3), ARG_JSONB(4))->cond;
	ddb_delete_item_core_ext(rel, keydoc, cond, rv != DDB_RV_NONE, &res);
	return write_return(fcinfo, rel, &res, rv);
}

/* ------------------------------------------------------------------------
 * CreateTable / DescribeTable
 * ------------------------------------------------------------------------
 */

/* A key type argument: S, N or B. */
DdbKeyType
ddb_parse_key_type(const char *t, const char *member)
{
	if (t == NULL || strcmp(t, "S") == 0)
		return DDB_KEY_S;
	if (strcmp(t, "N") == 0)
		return DDB_KEY_N;
	if (strcmp(t, "B") == 0)
		return DDB_KEY_B;
	{
		DdbValErrors e;

		ddb_valerr_init(&e);
		ddb_valerr_add(&e, t, member, "Member must satisfy enum value set: [B, N, S]");
		ddb_valerr_raise(&e);
	}
	return DDB_KEY_S;
}

/* A key schema element of CreateTable's request, appended to buf. */
static void
append_key(StringInfo buf, const char *name, const char *kind, bool comma)
{
	if (comma)
		appendStringInfoChar(buf, ',');
	appendStringInfoString(buf, "{\"AttributeName\":");
	escape_json(buf, name);
	appendStringInfo(buf, ",\"%s\":", strcmp(kind, "HASH") == 0 ||
					 strcmp(kind, "RANGE") == 0 ? "KeyType" : "AttributeType");
	escape_json(buf, kind);
	appendStringInfoChar(buf, '}');
}

/*
 * ddb_create_table(..., local_secondary_indexes): DynamoDB's CreateTable
 * request made of the arguments, run by ddb_api_execute, so the SQL form
 * and the protocol share one implementation.  local_secondary_indexes is
 * CreateTable's LocalSecondaryIndexes in typed JSON; a key element may
 * carry "AttributeType" (default S), which CreateTable takes from
 * AttributeDefinitions.  Returns the new table.
 */
static Oid
create_table_with_lsis(FunctionCallInfo fcinfo)
{
	char	   *name = ARG_CSTRING(0);
	char	   *pk = ARG_CSTRING(1);
	char	   *pktype = ARG_CSTRING(2);
	char	   *sk = ARG_CSTRING(3);
	char	   *sktype = ARG_CSTRING(4);
	Jsonb	   *lsis = PG_GETARG_JSONB_P(5);
	StringInfoData req;
	List	   *defined = NIL;
	char	   *resp;
	int			len;
	Oid			relid;

	if (name == NULL || pk == NULL)
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", DDB_MSG_REQUIRED_PARAMETER,
				  name == NULL ? "TableName" : "KeySchema");
	initStringInfo(&req);
	appendStringInfoString(&req, "{\"TableName\":");
	escape_json(&req, name);
	appendStringInfoString(&req, ",\"BillingMode\":\"PAY_PER_REQUEST\",\"KeySchema\":[");
	append_key(&req, pk, "HASH", false);
	if (sk)
		append_key(&req, sk, "RANGE", true);
	appendStringInfoString(&req, "],\"AttributeDefinitions\":[");
	append_key(&req, pk, pktype ? pktype : "S", false);
	defined = lappend(defined, pk);
	if (sk)
	{
		append_key(&req, sk, sktype ? sktype : "S", true);
		defined = lappend(defined, sk);
	}
	/* each index key attribute, once, with the type its element gives */
	if (JB_ROOT_IS_ARRAY(lsis) && !JB_ROOT_IS_SCALAR(lsis))
	{
		for (uint32 i = 0; i < JB_ROOT_COUNT(lsis); i++)
		{
			JsonbValue *lsi = getIthJsonbValueFromContainer(&lsis->root, i);
			JsonbValue *ks = NULL;

			if (lsi && lsi->type == jbvBinary && JsonContainerIsObject(lsi->val.binary.data))
				ks = getKeyJsonValueFromContainer(lsi->val.binary.data, "KeySchema", 9, NULL);
			if (ks == NULL || ks->type != jbvBinary || !JsonContainerIsArray(ks->val.binary.data))
				continue;		/* CreateTable reports it */
			for (uint32 j = 0; j < JsonContainerSize(ks->val.binary.data); j++)
			{
				JsonbValue *el = getIthJsonbValueFromContainer(ks->val.binary.data, j);
				JsonbValue *an,
						   *kt,
						   *at;
				char	   *aname;
				ListCell   *lc;
				bool		seen = false;

				if (el == NULL || el->type != jbvBinary || !JsonContainerIsObject(el->val.binary.data))
					continue;
				an = getKeyJsonValueFromContainer(el->val.binary.data, "AttributeName", 13, NULL);
				kt = getKeyJsonValueFromContainer(el->val.binary.data, "KeyType", 7, NULL);
				at = getKeyJsonValueFromContainer(el->val.binary.data, "AttributeType", 13, NULL);
				if (an == NULL || an->type != jbvString || kt == NULL || kt->type != jbvString)
					continue;
				aname = pnstrdup(an->val.string.val, an->val.string.len);
				foreach(lc, defined)
					seen |= strcmp(lfirst(lc), aname) == 0;
				if (seen)
					continue;
				defined = lappend(defined, aname);
				append_key(&req, aname, at && at->type == jbvString ?
						   pnstrdup(at->val.string.val, at->val.string.len) : "S", true);
			}
		}
	}
	appendStringInfoString(&req, "],\"LocalSecondaryIndexes\":");
	appendStringInfoString(&req, JsonbToCString(NULL, &lsis->root, VARSIZE(lsis)));
	appendStringInfoChar(&req, '}');
	resp = ddb_api_execute("CreateTable", req.data, req.len, &len);
	pfree(resp);
	relid = ddb_table_lookup(name);
	if (!OidIsValid(relid))
		elog(ERROR, "table \"%s\" was not created", name);
	return relid;
}

/*
 * ddb_create_table(table_name, partition_key, partition_key_type, sort_key,
 * sort_key_type): CreateTable with on-demand billing.
 */
Datum
ddb_create_table(PG_FUNCTION_ARGS)
{
	DdbCreateTable ct;
	char	   *sk = ARG_CSTRING(3);

	/* with local secondary indexes: CreateTable's own code, which has them */
	if (PG_NARGS() > 5 && !PG_ARGISNULL(5))
		PG_RETURN_OID(create_table_with_lsis(fcinfo));

	memset(&ct, 0, sizeof(ct));
	ct.name = ARG_CSTRING(0);
	ct.nkeys = sk ? 2 : 1;
	ct.keys[0] = ARG_CSTRING(1);
	ct.keytypes[0] = ddb_parse_key_type(ARG_CSTRING(2), "attributeDefinitions.1.member.attributeType");
	if (sk)
	{
		ct.keys[1] = sk;
		ct.keytypes[1] = ddb_parse_key_type(ARG_CSTRING(4), "attributeDefinitions.2.member.attributeType");
	}
	ct.billing_mode = "PAY_PER_REQUEST";
	ddb_check_create_table(&ct);
	PG_RETURN_OID(ddb_create_table_core(&ct));
}

/* ddb_describe_table(tbl): DynamoDB's TableDescription */
Datum
ddb_describe_table(PG_FUNCTION_ARGS)
{
	Relation	rel = ddb_table_open_arg(fcinfo, 0, ACL_SELECT);
	StringInfoData buf;

	initStringInfo(&buf);
	ddb_describe_table_json(rel, "ACTIVE", &buf);
	relation_close(rel, AccessShareLock);
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data)));
}
