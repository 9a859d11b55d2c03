/*-------------------------------------------------------------------------
 *
 * ddb_batch.c
 *	  Batches and transactions: DynamoDB's BatchWriteItem, BatchGetItem,
 *	  TransactWriteItems and TransactGetItems, as C cores shared by the SQL
 *	  functions below (document form) and ddb_api (ddb_protocol.c, typed
 *	  JSON).
 *
 * Every item an operation touches goes through the single-item cores of
 * ddb_api.c, so conditions, key checks, global secondary indexes and
 * concurrency (wait for the other writer, then re-read the item) are the
 * same as PutItem's, UpdateItem's and DeleteItem's.
 *
 * BatchWriteItem and BatchGetItem check DynamoDB's limits and duplicate
 * keys before they touch anything.  The members' constraints (the counts,
 * table names, required members: ddb_batch_write_check, ddb_batch_get_check,
 * ddb_transact_check) need none of a request's items or keys, so the front
 * ends (the SQL functions below, ddb_protocol.c) check them before they
 * convert any: DynamoDB checks them before the items too, and a request of
 * 80,000 actions is refused without reading one.  A BatchWriteItem is one
 * SQL statement, so it is all-or-nothing (DynamoDB applies each request
 * atomically but not the batch); UnprocessedItems is always empty.  BatchGetItem reads every
 * key with the statement's snapshot and stops at 16 MB of items: the keys
 * it did not read are UnprocessedKeys.
 *
 * TransactWriteItems runs its actions in one subtransaction, in the order
 * of their tables and keys (so two transactions over overlapping items
 * lock them in the same order and cannot deadlock each other).  A failed
 * condition, or a ValidationException that depends on the stored item (an
 * update of a string with "+", an item grown past 400 KB), does not end
 * the run: the subtransaction is rolled back, the action gets its
 * cancellation reason, and the remaining actions are still evaluated, so
 * that CancellationReasons lists every failure, as DynamoDB's does.  Then
 * nothing is written and the front door raises TransactionCanceledException.
 * Errors that do not depend on the items (expressions, keys, limits) are
 * raised before anything runs, as plain ValidationExceptions.
 * ConditionCheck locks the item it checks (as SELECT ... FOR UPDATE), so
 * its condition still holds when the transaction commits.
 *
 * ClientRequestToken: tokens live in ddb_internal.transaction_tokens
 * (token, SHA-256 of the request, time of use), written in the caller's
 * transaction, read and purged here with direct heap and index access (no
 * SPI; the caller needs no privilege on the table).  A token is taken under
 * a transaction-level advisory lock: a second request with a token still in
 * use by an uncommitted transaction is TransactionInProgressException.  A
 * token older than DDB_TOKEN_LIFETIME_SECS is ignored (the request is new)
 * and replaced; each new token also deletes up to PURGE_BATCH expired ones,
 * oldest first, so the table holds little more than the last ten minutes'
 * tokens.
 *
 * TransactGetItems reads all its items with the statement's snapshot: one
 * consistent view across items and tables.
 *
 * Lock order.  Every request that writes several items writes them in the
 * order of their tables' OIDs and then of their encoded keys
 * (ddb_compare_bytes): TransactWriteItems (and ExecuteTransaction, which
 * becomes one), BatchWriteItem (its puts of new keys too: see
 * batch_put_run), BatchExecuteStatement (ddb_partiql.c) and the TTL sweep
 * (ddb_ttl.c); LSI collection rows come after all of a request's items
 * (ddb_gsi.c).  Each write keeps its item locked until the transaction
 * ends, so two such requests over the same items wait for each other
 * instead of deadlocking.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_collation.h"
#include "common/hashfn.h"
#include "common/cryptohash.h"
#include "common/sha2.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "ddb.h"
#include "model/ddb_expr.h"
#include "api/ddb_ops.h"

PG_FUNCTION_INFO_V1(ddb_batch_write_item);
PG_FUNCTION_INFO_V1(ddb_batch_get_item);
PG_FUNCTION_INFO_V1(ddb_transact_write_items);
PG_FUNCTION_INFO_V1(ddb_transact_get_items);

#define validation_error(...) \
	ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", __VA_ARGS__)

#define DDB_MSG_DUPLICATE_KEYS		"Provided list of item keys contains duplicates"
#define DDB_MSG_BATCH_GET_TOO_MANY	"Too many items requested for the BatchGetItem call"
#define DDB_MSG_BATCH_WRITE_TOO_MANY "Too many items requested for the BatchWriteItem call"
#define DDB_MSG_TX_SAME_ITEM		"Transaction request cannot include multiple operations on one item"
#define DDB_MSG_TX_SIZE				"Collection size of items exceeded, which can also be caused by the aggregate size of the items in the transaction exceeding the 4MB limit"
#define DDB_MSG_TX_CANCELED			"Transaction cancelled, please refer cancellation reasons for specific reasons [%s]"
/*
 * The last two are the exceptions' descriptions in DynamoDB's API
 * reference (the service's own texts could not be checked), and the size
 * message above is the one DynamoDB-compatible servers report.
 */
#define DDB_MSG_TX_IN_PROGRESS		"The transaction with the given request token is already in progress."
#define DDB_MSG_TX_TOKEN_MISMATCH	"DynamoDB rejected the request because you retried a request with a different payload but with an idempotent token that was already used."

/* expired tokens one new token deletes */
#define PURGE_BATCH 16

/* ------------------------------------------------------------------------
 * Shared checks
 * ------------------------------------------------------------------------
 */

/* The "Value ... at 'member' failed to satisfy constraint" of a table name. */
static void
check_table_name(DdbValErrors *e, const char *name, const char *member)
{
	if (name == NULL)
		ddb_valerr_add(e, NULL, member, "Member must not be null");
	else
		ddb_valerr_table_name(e, name, member);
}

/* One item key in a list of keys checked for duplicates. */
typedef struct KeyRef
{
	Oid			relid;
	char	   *key;
	int			len;
	int			index;			/* position in the request */
} KeyRef;

static int
keyref_cmp(const void *a, const void *b)
{
	const KeyRef *x = a;
	const KeyRef *y = b;

	if (x->relid != y->relid)
		return x->relid < y->relid ? -1 : 1;
	return ddb_compare_bytes(x->key, x->len, y->key, y->len);
}

/* Sort keys by table and key; true when two are the same item. */
static bool
sort_keys_find_duplicate(KeyRef *refs, int n)
{
	if (n > 1)
		qsort(refs, n, sizeof(KeyRef), keyref_cmp);
	for (int i = 1; i < n; i++)
		if (keyref_cmp(&refs[i - 1], &refs[i]) == 0)
			return true;
	return false;
}

/*
 * A put's key, as BatchWriteItem checks it: a missing key attribute, or
 * one of the wrong type, is "The provided key element does not match the
 * schema" there, not PutItem's "Missing the key" or "Type mismatch for
 * key".
 */
static void
batch_put_key(Relation rel, Jsonb *item, StringInfo key)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(rel);

	for (int k = 0; k < ki->nkeys; k++)
	{
		const char *name = ddb_key_name(rel, k);
		JsonbValue *v;

		if (!JB_ROOT_IS_OBJECT(item))
			break;
		v = getKeyJsonValueFromContainer(&item->root, name, strlen(name), NULL);
		if (v == NULL)
			ereport(ERROR,
					(errcode(DDB_ERRCODE_VALIDATION),
					 errmsg("ValidationException: " DDB_MSG_KEY_SCHEMA_MISMATCH),
					 errdetail("Key attribute \"%s\" of table \"%s\" is missing.",
							   name, RelationGetRelationName(rel))));
		if (!ddb_jbv_is_key_type(ki->keytype[k], v))
			ereport(ERROR,
					(errcode(DDB_ERRCODE_VALIDATION),
					 errmsg("ValidationException: " DDB_MSG_KEY_SCHEMA_MISMATCH),
					 errdetail("Key attribute \"%s\" of table \"%s\" must be of type %s.",
							   name, RelationGetRelationName(rel),
							   ddb_key_type_name(ki->keytype[k]))));
	}
	ddb_request_key(rel, item, false, key);
}

/* ------------------------------------------------------------------------
 * BatchWriteItem
 * ------------------------------------------------------------------------
 */

/*
 * New versions of a run of one table's puts, consecutive in key order, for
 * ddb_insert_versions' batch path: one descent and one WAL record per leaf
 * instead of one each per item.
 */
typedef struct PutRun
{
	DdbBatchWriteTable *bt;
	DdbNewVersion *versions;
	int		   *reqs;			/* each version's request */
	int			n;
} PutRun;

/* The single-item core for request r: PutItem's or DeleteItem's. */
static void
batch_write_one(DdbBatchWriteTable *bt, int r)
{
	if (bt->is_put[r])
		ddb_put_item_core(bt->rel, bt->docs[r], NULL, &bt->results[r]);
	else
		ddb_delete_item_core(bt->rel, bt->docs[r], NULL, &bt->results[r]);
}

/*
 * Write a run's puts, strictly in key order: place the new keys together
 * (ddb_place_versions) up to the first key found live, which PutItem's core
 * then overwrites, and go on after it.  Each inserted item is indexed and
 * streamed as PutItem's core does it for a new item.  Stopping at the live
 * key keeps the batch's lock order its keys' order: placed past it, the
 * later keys would be held while PutItem's core waits for the live one.
 */
static void
batch_put_run(PutRun *pr)
{
	DdbBatchWriteTable *bt = pr->bt;
	int			pos = 0;

	if (pr->n == 0)
		return;
	ddb_prepare_versions(bt->rel, pr->versions, pr->n, GetCurrentCommandId(true), false);
	while (pos < pr->n)
	{
		int			stop = pos + ddb_place_versions(bt->rel, pr->versions + pos,
													pr->n - pos, DDB_UNIQUE_RETURN, true);

		for (int k = pos; k < stop; k++)
		{
			int			r = pr->reqs[k];

			if (!pr->versions[k].inserted)
				elog(ERROR, "BatchWriteItem: a put before the first live key was not inserted");
			/* the engine fires no triggers: the indexes and the stream see every item */
			ddb_gsi_maintain(bt->rel, NULL, bt->docs[r]);
			ddb_stream_capture(bt->rel, NULL, bt->docs[r]);
			bt->results[r].new = bt->docs[r];
		}
		CommandCounterIncrement();
		if (stop < pr->n)
			batch_write_one(bt, pr->reqs[stop]);
		pos = stop + 1;
	}
	pr->n = 0;
}

/*
 * Add request r, a put, to the run, or write it alone when its item needs
 * TOAST: not inserted, a version would leave its TOAST values behind, so it
 * goes through PutItem's core, after the run's keys before it.
 */
static void
batch_put_add(PutRun *pr, int r, StringInfo key)
{
	DdbBatchWriteTable *bt = pr->bt;
	HeapTuple	stored = ddb_form_stored_item(bt->rel,
											  ddb_item_without_keys(bt->rel, bt->docs[r]));

	if (ddb_stored_tuple_needs_toast(bt->rel, stored, NULL, key->len))
	{
		batch_put_run(pr);
		batch_write_one(bt, r);
		return;
	}
	pr->versions[pr->n].key = key->data;
	pr->versions[pr->n].keylen = key->len;
	pr->versions[pr->n].tuple = stored;
	pr->reqs[pr->n] = r;
	pr->n++;
}

/*
 * The request's members as DynamoDB checks them before it looks at any
 * request: each table's name and number of requests, then the total.  It
 * needs only table_name and nrequests, so the front ends call it before they
 * convert a single request (an over-long list costs nothing to refuse);
 * ddb_batch_write_core calls it again.  Returns the number of requests.
 */
int
ddb_batch_write_check(DdbBatchWriteTable *tables, int ntables)
{
	DdbValErrors e;
	int64		total = 0;

	ddb_valerr_init(&e);
	if (ntables == 0)
		ddb_valerr_add(&e, "{}", "requestItems", "Member must have length greater than or equal to 1");
	for (int t = 0; t < ntables; t++)
	{
		check_table_name(&e, tables[t].table_name, "requestItems");
		if (tables[t].nrequests < 1 || tables[t].nrequests > DDB_BATCH_WRITE_MAX)
			ddb_valerr_add(&e, psprintf("{%s=[%d requests]}", tables[t].table_name,
										tables[t].nrequests),
						   "requestItems",
						   "Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]");
		total += tables[t].nrequests;
	}
	ddb_valerr_raise(&e);
	if (total > DDB_BATCH_WRITE_MAX)
		validation_error(DDB_MSG_BATCH_WRITE_TOO_MANY);
	return (int) total;
}

void
ddb_batch_write_core(DdbBatchWriteTable *tables, int ntables)
{
	int			total = 0;
	KeyRef	   *refs;
	int		   *tab_of;			/* a ref's table and request, by its index */
	int		   *req_of;
	int			nrefs = 0;
	int			mark;
	StringInfoData **keys = palloc(sizeof(StringInfoData *) * Max(ntables, 1));

	PreventCommandIfReadOnly("BatchWriteItem");
	/* the request's shape: DynamoDB's member constraints */
	total = ddb_batch_write_check(tables, ntables);

	/*
	 * The items themselves, before any table is looked at: ddb_check_item's
	 * one walk, the checks of ddb_validate_item without building the item
	 * model it would throw away.
	 */
	for (int t = 0; t < ntables; t++)
		for (int r = 0; r < tables[t].nrequests; r++)
			if (tables[t].is_put[r])
				tables[t].docs[r] = ddb_check_item(tables[t].docs[r]);

	/* the tables, then their keys: one request per item */
	refs = palloc(sizeof(KeyRef) * Max(total, 1));
	tab_of = palloc(sizeof(int) * Max(total, 1));
	req_of = palloc(sizeof(int) * Max(total, 1));
	for (int t = 0; t < ntables; t++)
	{
		DdbBatchWriteTable *bt = &tables[t];
		bool		puts = false,
					deletes = false;

		for (int r = 0; r < bt->nrequests; r++)
		{
			puts |= bt->is_put[r];
			deletes |= !bt->is_put[r];
		}
		/*
		 * puts need INSERT and UPDATE, deletes DELETE, as PutItem's and
		 * DeleteItem's, and both SELECT when the answer bills the stored
		 * items (ReturnConsumedCapacity)
		 */
		bt->rel = ddb_table_open(bt->table_name, puts ? ACL_INSERT : ACL_DELETE);
		ddb_check_write_privileges(bt->rel, puts ? ACL_INSERT : ACL_DELETE, bt->reads_old);
		if (puts && deletes &&
			pg_class_aclcheck(RelationGetRelid(bt->rel), GetUserId(), ACL_DELETE) != ACLCHECK_OK)
			aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, RelationGetRelationName(bt->rel));
		keys[t] = palloc(sizeof(StringInfoData) * bt->nrequests);
		for (int r = 0; r < bt->nrequests; r++)
		{
			StringInfo	key = &keys[t][r];

			if (bt->is_put[r])
				batch_put_key(bt->rel, bt->docs[r], key);
			else
				ddb_request_key(bt->rel, bt->docs[r], true, key);
			refs[nrefs].relid = RelationGetRelid(bt->rel);
			refs[nrefs].key = key->data;
			refs[nrefs].len = key->len;
			refs[nrefs].index = nrefs;
			tab_of[nrefs] = t;
			req_of[nrefs] = r;
			nrefs++;
		}
	}
	if (sort_keys_find_duplicate(refs, nrefs))
		validation_error(DDB_MSG_DUPLICATE_KEYS);

	/*
	 * The writes, unconditional puts and deletes, in the order of their
	 * tables and keys (refs, sorted above), as TransactWriteItems runs its
	 * actions.  Each waits for another writer of its item and keeps the item
	 * locked until the batch's transaction ends; in request order, two
	 * batches over the same items listed in different orders locked them in
	 * different orders and deadlocked.  A table's consecutive puts go to the
	 * tree together (batch_put_run), still in key order, under READ
	 * COMMITTED: there PutItem's read of a key that has no item finds what
	 * the insert's uniqueness check finds (it waits for an in-progress
	 * writer of the key the same way), so it is skipped.  Under REPEATABLE
	 * READ and SERIALIZABLE PutItem reads the current item first, so that an
	 * item changed after the transaction's snapshot is a serialization
	 * failure, and every put takes that path.
	 */
	mark = ddb_collection_defer_begin();	/* items, then collection rows */
	PG_TRY();
	{
		PutRun		pr;

		pr.bt = NULL;
		pr.versions = palloc(sizeof(DdbNewVersion) * Max(nrefs, 1));
		pr.reqs = palloc(sizeof(int) * Max(nrefs, 1));
		pr.n = 0;
		for (int t = 0; t < ntables; t++)
			tables[t].results = palloc0(sizeof(DdbWriteResult) * tables[t].nrequests);
		for (int i = 0; i < nrefs; i++)
		{
			int			t = tab_of[refs[i].index];
			int			r = req_of[refs[i].index];
			DdbBatchWriteTable *bt = &tables[t];

			if (pr.bt != bt)
				batch_put_run(&pr);
			pr.bt = bt;
			if (bt->is_put[r] && !IsolationUsesXactSnapshot())
				batch_put_add(&pr, r, &keys[t][r]);
			else
			{
				batch_put_run(&pr);
				batch_write_one(bt, r);
			}
		}
		batch_put_run(&pr);
	}
	PG_CATCH();
	{
		ddb_collection_defer_end(mark, false);
		PG_RE_THROW();
	}
	PG_END_TRY();
	ddb_collection_defer_end(mark, true);
}

/* ------------------------------------------------------------------------
 * BatchGetItem
 * ------------------------------------------------------------------------
 */
static double
read_units_4k(int64 bytes)
{
	return Max(1, (bytes + 4095) / 4096);
}

/*
 * BatchGetItem's members as DynamoDB checks them first: each table's name
 * and number of keys, then the total.  Needs only table_name and nkeys (see
 * ddb_batch_write_check).  Returns the number of keys.
 */
int
ddb_batch_get_check(DdbBatchGetTable *tables, int ntables)
{
	DdbValErrors e;
	int64		total = 0;

	ddb_valerr_init(&e);
	if (ntables == 0)
		ddb_valerr_add(&e, "{}", "requestItems", "Member must have length greater than or equal to 1");
	for (int t = 0; t < ntables; t++)
	{
		char	   *member = psprintf("requestItems.%s.member.keys", tables[t].table_name);

		check_table_name(&e, tables[t].table_name, "requestItems");
		if (tables[t].nkeys < 1)
			ddb_valerr_add(&e, "[]", member, "Member must have length greater than or equal to 1");
		if (tables[t].nkeys > DDB_BATCH_GET_MAX)
			ddb_valerr_add(&e, psprintf("[%d keys]", tables[t].nkeys), member,
						   "Member must have length less than or equal to 100");
		if (tables[t].empty_attributes)
			ddb_valerr_add(&e, "[]", psprintf("requestItems.%s.member.attributesToGet",
											  tables[t].table_name),
						   "Member must have length greater than or equal to 1");
		total += tables[t].nkeys;
	}
	ddb_valerr_raise(&e);
	if (total > DDB_BATCH_GET_MAX)
		validation_error(DDB_MSG_BATCH_GET_TOO_MANY);
	return (int) total;
}

void
ddb_batch_get_core(DdbBatchGetTable *tables, int ntables)
{
	int			total = 0;
	int64		bytes = 0;		/* DynamoDB's size of the items, once exact */
	int64		bound = 0;		/* their jsonb size, an upper bound */
	bool		exact = false;
	bool		full = false;
	Relation   *rels;
	DdbProjection **projs;
	KeyRef	   *refs;
	KeyRef	   *enc;
	int			nrefs = 0;

	total = ddb_batch_get_check(tables, ntables);

	/* tables, projections, keys; then the duplicate check */
	rels = palloc(sizeof(Relation) * ntables);
	projs = palloc0(sizeof(DdbProjection *) * ntables);
	refs = palloc(sizeof(KeyRef) * Max(total, 1));
	enc = palloc(sizeof(KeyRef) * Max(total, 1));
	for (int t = 0; t < ntables; t++)
	{
		DdbBatchGetTable *bt = &tables[t];

		ddb_check_expression_use(bt->projection != NULL, false, "", bt->names != NULL, false);
		if (bt->projection != NULL)
		{
			DdbExprContext *cx = ddb_expr_begin(bt->names, NULL);

			projs[t] = ddb_parse_projection(cx, bt->projection);
			ddb_expr_end(cx);
		}
		rels[t] = ddb_table_open(bt->table_name, ACL_SELECT);
		for (int k = 0; k < bt->nkeys; k++)
		{
			StringInfoData key;

			ddb_request_key(rels[t], bt->keys[k], true, &key);
			refs[nrefs].relid = RelationGetRelid(rels[t]);

			/*
			 * Keep the key at its size, and give the StringInfo's 1 kB back
			 * for the next key: 100 of them made the call's memory pass
			 * 128 kB, which malloc hands back to the kernel at the end of
			 * every statement and faults in again at the next.
			 */
			refs[nrefs].key = palloc(Max(key.len, 1));
			memcpy(refs[nrefs].key, key.data, key.len);
			pfree(key.data);
			refs[nrefs].len = key.len;
			refs[nrefs].index = nrefs;
			enc[nrefs] = refs[nrefs];	/* in request order, for the reads */
			nrefs++;
		}
		/* the table's keys first, then its projection (as GetItem) */
		if (projs[t] != NULL)
			ddb_check_projection_key_paths(rels[t], projs[t]);
	}
	if (sort_keys_find_duplicate(refs, nrefs))
		validation_error(DDB_MSG_DUPLICATE_KEYS);

	/*
	 * The reads, with the statement's snapshot, until the items would pass
	 * 16 MB: that key and all after it are left for the next call.
	 *
	 * DynamoDB's size of an item is never more than its jsonb's (every
	 * value costs at least as many bytes there, containers more: at most
	 * 0.46 of it, for a 38-digit number), so the sum of the jsonb sizes
	 * bounds the response; the exact sizes are computed only once that
	 * bound nears the limit, or for capacity.
	 */
	for (int t = 0, e = 0; t < ntables; t++)
	{
		DdbBatchGetTable *bt = &tables[t];
		const DdbKeyInfo *ki = ddb_get_keyinfo(rels[t]);
		const char *keynames[DDB_MAX_KEY_COLUMNS];

		/* the key names once per table, not once per item */
		for (int k = 0; k < ki->nkeys; k++)
			keynames[k] = ddb_key_name(rels[t], k);
		bt->items = NIL;
		bt->unprocessed = NIL;
		bt->read_units = 0;
		for (int k = 0; k < bt->nkeys; k++, e++)
		{
			Jsonb	   *item;
			int64		size = 0;

			if (full)
			{
				bt->unprocessed = lappend(bt->unprocessed, bt->keys[k]);
				continue;
			}
			item = ddb_get_item_encoded(rels[t], enc[e].key, enc[e].len, projs[t], keynames);
			if (item && !exact && (VARATT_IS_EXTERNAL(item) || VARATT_IS_COMPRESSED(item) ||
								   bound + VARSIZE_ANY(item) > DDB_BATCH_GET_RESPONSE_MAX))
			{
				/* near the limit: from now on, DynamoDB's sizes */
				exact = true;
				bytes = 0;
				for (int u = 0; u <= t; u++)
				{
					ListCell   *lc;

					foreach(lc, tables[u].items)
						bytes += ddb_item_size(ddb_item_from_jsonb(lfirst(lc)));
				}
			}
			if (item && (exact || bt->want_units))
				size = ddb_item_size(ddb_item_from_jsonb(item));
			if (exact && bytes + size > DDB_BATCH_GET_RESPONSE_MAX)
			{
				full = true;
				bt->unprocessed = lappend(bt->unprocessed, bt->keys[k]);
				continue;
			}
			bytes += size;
			if (item)
				bound += VARSIZE_ANY(item);
			bt->read_units += read_units_4k(size);
			if (item)
				bt->items = lappend(bt->items, item);
		}
		relation_close(rels[t], AccessShareLock);
	}
}

/* ------------------------------------------------------------------------
 * ClientRequestToken
 * ------------------------------------------------------------------------
 */

/* The request's fingerprint: SHA-256 of every action's parameters. */
static void
request_hash(DdbTransactAction *actions, int n, uint8 *digest)
{
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);
	StringInfoData buf;

	initStringInfo(&buf);
	for (int i = 0; i < n; i++)
	{
		DdbTransactAction *a = &actions[i];
		const char *parts[7];

		parts[0] = a->table_name;
		parts[1] = a->doc ? JsonbToCString(NULL, &a->doc->root, VARSIZE(a->doc)) : NULL;
		parts[2] = a->condition;
		parts[3] = a->update;
		parts[4] = a->names ? JsonbToCString(NULL, &a->names->root, VARSIZE(a->names)) : NULL;
		parts[5] = a->vals ? JsonbToCString(NULL, &a->vals->root, VARSIZE(a->vals)) : NULL;
		parts[6] = a->return_old ? "ALL_OLD" : NULL;
		/* the table itself, not only its name (ddb.schema may differ) */
		appendStringInfo(&buf, "%d:%u", (int) a->kind,
						 a->rel ? RelationGetRelid(a->rel) : InvalidOid);
		for (int p = 0; p < lengthof(parts); p++)
		{
			/* length-prefixed, so no two requests serialize alike */
			int			len = parts[p] ? strlen(parts[p]) : -1;

			appendBinaryStringInfo(&buf, (char *) &len, sizeof(len));
			if (len > 0)
				appendBinaryStringInfo(&buf, parts[p], len);
		}
	}
	if (ctx == NULL || pg_cryptohash_init(ctx) < 0 ||
		pg_cryptohash_update(ctx, (uint8 *) buf.data, buf.len) < 0 ||
		pg_cryptohash_final(ctx, digest, PG_SHA256_DIGEST_LENGTH) < 0)
		elog(ERROR, "could not compute the request's SHA-256: %s", pg_cryptohash_error(ctx));
	pg_cryptohash_free(ctx);
	pfree(buf.data);
}

static Oid
token_relid(const char *relname)
{
	Oid			nsp = get_namespace_oid("ddb_internal", false);
	Oid			relid = get_relname_relid(relname, nsp);

	if (!OidIsValid(relid))
		elog(ERROR, "ddb_internal.%s is missing: run ALTER EXTENSION ddb UPDATE", relname);
	return relid;
}

/*
 * Take the token for this transaction: TransactionInProgressException when
 * another transaction holds it.  A transaction-level advisory lock in a
 * space of its own (field4 0xDDB0), so user advisory locks never collide.
 */
static void
lock_token(const char *token)
{
	LOCKTAG		tag;
	uint64		h = hash_bytes_extended((const unsigned char *) token, strlen(token), 0xDDB);

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, (uint32) (h >> 32), (uint32) h, 0xDDB0);
	if (LockAcquire(&tag, ExclusiveLock, false, true) == LOCKACQUIRE_NOT_AVAIL)
		ddb_raise(DDB_ERRCODE_TRANSACTION_IN_PROGRESS, "TransactionInProgressException",
				  DDB_MSG_TX_IN_PROGRESS);
}

/*
 * The token's row: found, with its hash and whether it expired.  Read with
 * the latest snapshot, so a token committed after our statement began (by
 * the transaction whose lock we just waited out) is seen.
 */
static bool
find_token(Relation rel, const char *token, ItemPointer tid, uint8 *hash, bool *expired)
{
	ScanKeyData skey;
	SysScanDesc scan;
	HeapTuple	tup;
	Snapshot	snap = RegisterSnapshot(GetLatestSnapshot());
	bool		found = false;

	ScanKeyInit(&skey, 1, BTEqualStrategyNumber, F_TEXTEQ, CStringGetTextDatum(token));
	skey.sk_collation = C_COLLATION_OID;
	scan = systable_beginscan(rel, token_relid("transaction_tokens_pkey"), true, snap, 1, &skey);
	if ((tup = systable_getnext(scan)) != NULL)
	{
		bool		isnull;
		bytea	   *h = DatumGetByteaPP(heap_getattr(tup, 2, RelationGetDescr(rel), &isnull));
		TimestampTz used = DatumGetTimestampTz(heap_getattr(tup, 3, RelationGetDescr(rel), &isnull));

		found = true;
		*tid = tup->t_self;
		memset(hash, 0, PG_SHA256_DIGEST_LENGTH);
		memcpy(hash, VARDATA_ANY(h), Min(VARSIZE_ANY_EXHDR(h), PG_SHA256_DIGEST_LENGTH));
		*expired = TimestampDifferenceExceeds(used, GetCurrentTimestamp(),
											  DDB_TOKEN_LIFETIME_SECS * 1000);
	}
	systable_endscan(scan);
	UnregisterSnapshot(snap);
	return found;
}

/* Delete a token row; a row another transaction is changing is left to it. */
static void
delete_token(Relation rel, ItemPointer tid)
{
	TM_FailureData tmfd;

	(void) heap_delete(rel, tid, GetCurrentCommandId(true), InvalidSnapshot, false,
					   &tmfd, false);
}

/* Delete up to PURGE_BATCH expired tokens, oldest first. */
static void
purge_tokens(Relation rel)
{
	ScanKeyData skey;
	SysScanDesc scan;
	HeapTuple	tup;
	Snapshot	snap = RegisterSnapshot(GetLatestSnapshot());
	TimestampTz cutoff = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													 -DDB_TOKEN_LIFETIME_SECS * 1000);
	int			n = 0;

	ScanKeyInit(&skey, 3, BTLessStrategyNumber, F_TIMESTAMPTZ_LT, TimestampTzGetDatum(cutoff));
	scan = systable_beginscan_ordered(rel, index_open(token_relid("transaction_tokens_used"),
													  AccessShareLock),
									  snap, 1, &skey);
	while (n < PURGE_BATCH && (tup = systable_getnext_ordered(scan, ForwardScanDirection)) != NULL)
	{
		ItemPointerData tid = tup->t_self;

		delete_token(rel, &tid);
		n++;
	}
	{
		Relation	irel = scan->irel;

		systable_endscan_ordered(scan);
		index_close(irel, AccessShareLock);
	}
	UnregisterSnapshot(snap);
}

static void
insert_token(Relation rel, const char *token, const uint8 *hash)
{
	Datum		values[3];
	bool		nulls[3] = {false, false, false};
	bytea	   *h = palloc(VARHDRSZ + PG_SHA256_DIGEST_LENGTH);
	HeapTuple	tup;

	SET_VARSIZE(h, VARHDRSZ + PG_SHA256_DIGEST_LENGTH);
	memcpy(VARDATA(h), hash, PG_SHA256_DIGEST_LENGTH);
	values[0] = CStringGetTextDatum(token);
	values[1] = PointerGetDatum(h);
	values[2] = TimestampTzGetDatum(GetCurrentTimestamp());
	tup = heap_form_tuple(RelationGetDescr(rel), values, nulls);
	CatalogTupleInsert(rel, tup);
	heap_freetuple(tup);
}

/* ------------------------------------------------------------------------
 * TransactWriteItems
 * ------------------------------------------------------------------------
 */

/* The parsed expressions of one action. */
typedef struct ActionExprs
{
	DdbCondition *cond;
	DdbUpdate  *upd;
	DdbProjection *proj;
} ActionExprs;

static const char *const kind_members[] = {"conditionCheck", "put", "delete", "update", "get", NULL};

/*
 * ConditionCheck: lock the item's current version, as SELECT ... FOR
 * UPDATE would, and evaluate the condition on it.
 */
static void
condition_check(Relation rel, Jsonb *keydoc, DdbCondition *cond, DdbWriteResult *res)
{
	StringInfoData key;
	ItemPointerData tid;
	HeapTuple	current;

	memset(res, 0, sizeof(DdbWriteResult));
	ddb_request_key(rel, keydoc, true, &key);
	if (ddb_lock_current(rel, key.data, key.len, GetCurrentCommandId(true), &tid, &current))
		res->old = ddb_tuple_to_item(rel, current);
	if (!ddb_eval_condition(cond, res->old))
		res->condition_failed = true;
}

static void
run_action(DdbTransactAction *a, ActionExprs *x)
{
	switch (a->kind)
	{
		case DDB_TX_CHECK:
			condition_check(a->rel, a->doc, x->cond, &a->res);
			break;
		case DDB_TX_PUT:
			ddb_put_item_core(a->rel, a->doc, x->cond, &a->res);
			break;
		case DDB_TX_DELETE:
			ddb_delete_item_core(a->rel, a->doc, x->cond, &a->res);
			break;
		case DDB_TX_UPDATE:
			ddb_update_item_core(a->rel, a->doc, x->upd, x->cond, &a->res);
			break;
		case DDB_TX_GET:
		case DDB_TX_NONE:
			elog(ERROR, "a Get or no action in TransactWriteItems");
	}
	if (a->res.condition_failed && a->condition_code != NULL)
	{
		a->code = a->condition_code;
		a->message = a->condition_message;
	}
	else if (a->res.condition_failed)
	{
		a->code = "ConditionalCheckFailed";
		a->message = DDB_MSG_CONDITIONAL_FAILED;
		a->item = a->return_old ? a->res.old : NULL;
	}
}

/* The message's primary text without its "ValidationException: " prefix. */
static const char *
reason_message(const char *msg)
{
	const char *prefix = "ValidationException: ";

	if (msg && strncmp(msg, prefix, strlen(prefix)) == 0)
		return msg + strlen(prefix);
	return msg;
}

/*
 * In the PG_CATCH of work begun with BeginInternalSubTransaction from
 * memory context 'cxt' and resource owner 'owner': the error, copied into
 * cxt, with the subtransaction rolled back and cxt and owner current again
 * (plpgsql's exception blocks do the same).  The caller rethrows what it
 * does not handle.
 */
ErrorData *
ddb_subxact_caught(MemoryContext cxt, ResourceOwner owner)
{
	ErrorData  *edata;

	MemoryContextSwitchTo(cxt);
	edata = CopyErrorData();
	FlushErrorState();
	RollbackAndReleaseCurrentSubTransaction();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
	return edata;
}

/*
 * Run the actions, in 'order', in subtransactions: one when all goes
 * well.  An action whose ValidationException depends on the stored item
 * gets the reason ValidationError and the run goes on after it in a new
 * subtransaction.  Returns true when every action succeeded (its writes are
 * kept), false when any failed (nothing is kept).
 */
static bool
run_actions(DdbTransactAction *actions, ActionExprs *exprs, int *order, int n)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	int			start = 0;
	volatile bool failed = false;

	while (start <= n)
	{
		volatile int i = start;
		bool		caught = false;

		BeginInternalSubTransaction(NULL);
		MemoryContextSwitchTo(cxt);
		PG_TRY();
		{
			for (; i < n; i++)
			{
				DdbTransactAction *a = &actions[order[i]];

				run_action(a, &exprs[order[i]]);
				failed |= a->code != NULL;
			}
		}
		PG_CATCH();
		{
			ErrorData  *edata = ddb_subxact_caught(cxt, owner);

			if (edata->sqlerrcode != DDB_ERRCODE_VALIDATION)
				ReThrowError(edata);
			actions[order[i]].code = "ValidationError";
			actions[order[i]].message = reason_message(edata->message);
			failed = true;
			start = i + 1;
			caught = true;
		}
		PG_END_TRY();
		if (caught)
			continue;
		if (failed)
			RollbackAndReleaseCurrentSubTransaction();
		else
			ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		break;
	}
	return !failed;
}

/*
 * Apply the collection changes of a transaction whose actions all
 * succeeded (ddb_collection_defer_end).  A collection grown past its limit
 * cancels the transaction, as DynamoDB does ("a local secondary index
 * (LSI) becomes too large"): the reason ItemCollectionSizeLimitExceeded
 * goes to each Put and Update of that collection, and false is returned
 * (the caller raises the cancellation, which undoes the writes).
 */
static bool
apply_collections(DdbTransactAction *actions, int n, int mark)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	ErrorData  *volatile edata = NULL;
	volatile bool started = false;
	bool		named = false;

	if (!ddb_collection_defer_pending(mark))
	{
		ddb_collection_defer_end(mark, true);	/* nothing to write here */
		return true;
	}
	PG_TRY();
	{
		BeginInternalSubTransaction(NULL);
		started = true;
		MemoryContextSwitchTo(cxt);
		ddb_collection_defer_end(mark, true);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		/* (a subtransaction that could not start leaves the deferral to end) */
		if (!started)
		{
			ddb_collection_defer_end(mark, false);
			PG_RE_THROW();
		}
		edata = ddb_subxact_caught(cxt, owner);
		if (edata->sqlerrcode != DDB_ERRCODE_ITEM_COLLECTION_SIZE)
			ReThrowError(edata);
	}
	PG_END_TRY();
	if (edata == NULL)
		return true;
	for (int i = 0; i < n; i++)
	{
		DdbTransactAction *a = &actions[i];

		if ((a->kind == DDB_TX_PUT || a->kind == DDB_TX_UPDATE) &&
			ddb_collection_overflowed(a->rel, a->doc))
		{
			a->code = "ItemCollectionSizeLimitExceeded";
			a->message = DDB_MSG_COLLECTION_SIZE;
			a->item = NULL;
			named = true;
		}
	}
	if (!named)
		ReThrowError(edata);	/* (not expected: no action wrote it) */
	return false;
}

/* Sort actions by table and key (order[] gets their indexes). */
static int *
key_order(KeyRef *refs, int n)
{
	int		   *order = palloc(sizeof(int) * Max(n, 1));

	for (int i = 0; i < n; i++)
		order[i] = refs[i].index;
	return order;
}

/*
 * A transaction's members as DynamoDB checks them before anything else: the
 * number of actions, then each action's table name and required members.
 * It reads only kind, table_name, condition, update and whether the item or
 * key was given (doc, or doc_given before it is converted), so the front
 * ends call it before they convert any action; prepare_actions again.
 * The count's error is listed with the actions' errors, as DynamoDB lists
 * them (the first ten).  An action of kind
 * DDB_TX_NONE has no action member: for gets (TransactGetItems) the Get is
 * a required member; a write's is refused by the front end afterwards, as
 * DynamoDB's rule that a TransactWriteItem holds exactly one is not a
 * member constraint.
 */
void
ddb_transact_check(DdbTransactAction *actions, int n, int max_actions, bool gets)
{
	DdbValErrors e;

	ddb_valerr_init(&e);
	if (n < 1)
		ddb_valerr_add(&e, "[]", "transactItems", "Member must have length greater than or equal to 1");
	if (n > max_actions)
		ddb_valerr_add(&e, psprintf("[%d actions]", n), "transactItems",
					   psprintf("Member must have length less than or equal to %d", max_actions));
	/* (ddb_valerr_add keeps ten: no need to walk a list past that) */
	for (int i = 0; i < n && e.n < 10; i++)
	{
		DdbTransactAction *a = &actions[i];
		char	   *path;

		if (a->kind == DDB_TX_NONE)
		{
			if (gets)
				ddb_valerr_add(&e, NULL, psprintf("transactItems.%d.member.get", i + 1),
							   "Member must not be null");
			continue;
		}
		path = psprintf("transactItems.%d.member.%s", i + 1, kind_members[a->kind]);
		check_table_name(&e, a->table_name, psprintf("%s.tableName", path));
		if (a->doc == NULL && !a->doc_given)
			ddb_valerr_add(&e, NULL, psprintf("%s.%s", path, a->kind == DDB_TX_PUT ? "item" : "key"),
						   "Member must not be null");
		if (a->kind == DDB_TX_CHECK && a->condition == NULL)
			ddb_valerr_add(&e, NULL, psprintf("%s.conditionExpression", path), "Member must not be null");
		if (a->kind == DDB_TX_UPDATE && a->update == NULL)
			ddb_valerr_add(&e, NULL, psprintf("%s.updateExpression", path), "Member must not be null");
	}
	ddb_valerr_raise(&e);
}

/*
 * Open every action's table, parse its expressions, encode its key; the
 * checks that do not depend on stored items.  Returns the actions' keys,
 * sorted by table and key, and (when put_size is not NULL) the size of the
 * items the Puts write.
 */
static KeyRef *
prepare_actions(DdbTransactAction *actions, int n, int max_actions, ActionExprs *exprs,
				int64 *put_size)
{
	KeyRef	   *refs;
	int64		size = 0;

	/* (every action has its kind by now) */
	ddb_transact_check(actions, n, max_actions, false);

	refs = palloc(sizeof(KeyRef) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		DdbTransactAction *a = &actions[i];
		StringInfoData key;
		AclMode		mode;

		/* expressions, as the single-item operations check them */
		switch (a->kind)
		{
			case DDB_TX_GET:
				ddb_check_expression_use(a->projection != NULL, false, "", a->names != NULL, false);
				break;
			case DDB_TX_UPDATE:
				ddb_check_expression_use(true, true, "UpdateExpression and ConditionExpression",
										 a->names != NULL, a->vals != NULL);
				break;
			default:
				ddb_check_expression_use(a->condition != NULL, a->condition != NULL,
										 "ConditionExpression", a->names != NULL, a->vals != NULL);
				break;
		}
		memset(&exprs[i], 0, sizeof(ActionExprs));
		{
			DdbExprContext *cx = ddb_expr_begin(a->names, a->vals);

			if (a->update)
				exprs[i].upd = ddb_parse_update(cx, a->update);
			if (a->condition)
				exprs[i].cond = ddb_parse_condition(cx, a->condition, "ConditionExpression");
			if (a->projection)
				exprs[i].proj = ddb_parse_projection(cx, a->projection);
			ddb_expr_end(cx);
		}
		if (a->kind == DDB_TX_PUT)
			size += ddb_item_size(ddb_validate_item(a->doc));

		mode = a->kind == DDB_TX_PUT ? ACL_INSERT :
			a->kind == DDB_TX_UPDATE ? ACL_UPDATE :
			a->kind == DDB_TX_DELETE ? ACL_DELETE : ACL_SELECT;
		a->rel = ddb_table_open(a->table_name, mode);
		if (a->kind == DDB_TX_CHECK)
		{
			/* it locks the item, which PostgreSQL allows UPDATE's holders */
			if (pg_class_aclcheck(RelationGetRelid(a->rel), GetUserId(), ACL_UPDATE) != ACLCHECK_OK)
				aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, RelationGetRelationName(a->rel));
		}
		else if (a->kind != DDB_TX_GET)
			ddb_check_write_privileges(a->rel, mode,
									   a->condition != NULL || a->return_old || a->reads_old);

		ddb_request_key(a->rel, a->doc, a->kind != DDB_TX_PUT, &key);
		/* not the action's ValidationError: it does not depend on the item */
		ddb_check_condition_key_paths(a->rel, exprs[i].cond);
		ddb_check_update_keys(a->rel, exprs[i].upd);
		refs[i].relid = RelationGetRelid(a->rel);
		refs[i].key = key.data;
		refs[i].len = key.len;
		refs[i].index = i;
	}
	if (size > DDB_TRANSACT_SIZE_MAX)
		validation_error(DDB_MSG_TX_SIZE);
	if (sort_keys_find_duplicate(refs, n))
		validation_error(DDB_MSG_TX_SAME_ITEM);
	if (put_size != NULL)
		*put_size = size;
	return refs;
}

/*
 * DynamoDB's 4 MB is of all the items a transaction writes: an Update's
 * item, as it is once updated, counts with the Puts' (put_size, refused
 * before anything ran when they alone pass it).  Known only once the
 * actions have run, it is refused then, which undoes them with the
 * statement.
 */
static void
check_written_size(DdbTransactAction *actions, int n, int64 put_size)
{
	int64		size = put_size;

	for (int i = 0; i < n && size <= DDB_TRANSACT_SIZE_MAX; i++)
		if (actions[i].kind == DDB_TX_UPDATE && actions[i].res.new != NULL)
			size += actions[i].res.new_size;
	if (size > DDB_TRANSACT_SIZE_MAX)
		validation_error(DDB_MSG_TX_SIZE);
}

/*
 * TransactWriteItems: true when the actions were written (or, with a token
 * already used for this request, *replayed without writing), false when
 * the transaction was canceled: then nothing is written and each action's
 * code/message/item say why (ddb_transact_canceled_message).
 */
bool
ddb_transact_write_core(DdbTransactAction *actions, int n, int max_actions,
						const char *token, bool *replayed)
{
	ActionExprs *exprs = palloc0(sizeof(ActionExprs) * Max(n, 1));
	KeyRef	   *refs;
	int		   *order;
	Relation	trel = NULL;
	uint8		hash[PG_SHA256_DIGEST_LENGTH];
	volatile bool ok;
	int			mark;
	int64		put_size;

	*replayed = false;
	/* (a ConditionCheck alone locks its item, which a read-only one may not) */
	PreventCommandIfReadOnly("TransactWriteItems");
	/* DynamoDB's length is in characters, as ExecuteTransaction counts it */
	if (token != NULL && (token[0] == '\0' || pg_mbstrlen(token) > 36))
	{
		DdbValErrors e;

		ddb_valerr_init(&e);
		ddb_valerr_add(&e, token, "clientRequestToken", token[0] == '\0' ?
					   "Member must have length greater than or equal to 1" :
					   "Member must have length less than or equal to 36");
		ddb_valerr_raise(&e);
	}
	refs = prepare_actions(actions, n, max_actions, exprs, &put_size);
	order = key_order(refs, n);

	if (token != NULL)
	{
		ItemPointerData tid;
		uint8		seen[PG_SHA256_DIGEST_LENGTH];
		bool		expired;

		request_hash(actions, n, hash);
		lock_token(token);
		trel = table_open(token_relid("transaction_tokens"), RowExclusiveLock);
		if (find_token(trel, token, &tid, seen, &expired))
		{
			if (!expired)
			{
				table_close(trel, NoLock);
				if (memcmp(seen, hash, sizeof(hash)) != 0)
					ddb_raise(DDB_ERRCODE_IDEMPOTENT_MISMATCH,
							  "IdempotentParameterMismatchException",
							  DDB_MSG_TX_TOKEN_MISMATCH);
				*replayed = true;
				return true;
			}
			/* ten minutes old: a new request */
			delete_token(trel, &tid);
		}
	}

	/* items first, then their collection rows (ddb_gsi.c: lock order) */
	mark = ddb_collection_defer_begin();
	PG_TRY();
	{
		ok = run_actions(actions, exprs, order, n);
		if (ok)
			check_written_size(actions, n, put_size);
	}
	PG_CATCH();
	{
		ddb_collection_defer_end(mark, false);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (ok)
		ok = apply_collections(actions, n, mark);
	else
		ddb_collection_defer_end(mark, false);
	if (ok && trel != NULL)
	{
		purge_tokens(trel);
		insert_token(trel, token, hash);
		CommandCounterIncrement();
	}
	if (trel != NULL)
		table_close(trel, NoLock);
	return ok;
}

/* TransactionCanceledException's message: the reasons' codes in order. */
char *
ddb_transact_canceled_message(DdbTransactAction *actions, int n)
{
	StringInfoData codes;

	initStringInfo(&codes);
	for (int i = 0; i < n; i++)
		appendStringInfo(&codes, "%s%s", i ? ", " : "", actions[i].code ? actions[i].code : "None");
	return psprintf("TransactionCanceledException: " DDB_MSG_TX_CANCELED, codes.data);
}

/* ------------------------------------------------------------------------
 * TransactGetItems
 * ------------------------------------------------------------------------
 */
void
ddb_transact_get_core(DdbTransactAction *actions, int n)
{
	ActionExprs *exprs = palloc0(sizeof(ActionExprs) * Max(n, 1));
	int64		size = 0;

	(void) prepare_actions(actions, n, DDB_TRANSACT_MAX, exprs, NULL);
	/* every Get reads with the statement's snapshot: one consistent view */
	for (int i = 0; i < n; i++)
	{
		DdbTransactAction *a = &actions[i];

		a->item = ddb_get_item_core(a->rel, a->doc, exprs[i].proj);
		if (a->item)
			size += ddb_item_size(ddb_item_from_jsonb(a->item));
	}
	if (size > DDB_TRANSACT_SIZE_MAX)
		validation_error(DDB_MSG_TX_SIZE);
}

/* ------------------------------------------------------------------------
 * The SQL functions: requests in DynamoDB's shape, items in document form
 * ------------------------------------------------------------------------
 */

/* A member of a jsonb object, NULL when absent or JSON null. */
static Jsonb *
jb_member(Jsonb *obj, const char *name)
{
	JsonbValue *v;

	if (obj == NULL || !JB_ROOT_IS_OBJECT(obj) || JB_ROOT_IS_SCALAR(obj))
		return NULL;
	v = getKeyJsonValueFromContainer(&obj->root, name, strlen(name), NULL);
	if (v == NULL || v->type == jbvNull)
		return NULL;
	return JsonbValueToJsonb(v);
}

/*
 * A name or expression as a C string: one holding U+0000 (which jsonb can
 * hold, and the protocol's JSON can carry) would be read cut short, the
 * table "t\u0000x" as t, so it is refused.
 */
static char *
jb_cstring(const char *s, int len, const char *what)
{
	if (memchr(s, '\0', len) != NULL)
		validation_error(DDB_MSG_NUL_IN_NAME, what);
	return pnstrdup(s, len);
}

/* A string member, NULL when absent. */
static const char *
jb_member_text(Jsonb *obj, const char *name)
{
	JsonbValue *v;

	if (obj == NULL || !JB_ROOT_IS_OBJECT(obj) || JB_ROOT_IS_SCALAR(obj))
		return NULL;
	v = getKeyJsonValueFromContainer(&obj->root, name, strlen(name), NULL);
	if (v == NULL || v->type == jbvNull)
		return NULL;
	if (v->type != jbvString)
		validation_error("%s must be a string", name);
	return jb_cstring(v->val.string.val, v->val.string.len, name);
}

static bool
jb_is_object(Jsonb *j)
{
	return j != NULL && JB_ROOT_IS_OBJECT(j) && !JB_ROOT_IS_SCALAR(j);
}

static bool
jb_is_array(Jsonb *j)
{
	return j != NULL && JB_ROOT_IS_ARRAY(j) && !JB_ROOT_IS_SCALAR(j);
}

/* The elements of a jsonb array. */
static Jsonb **
jb_elements(Jsonb *arr, int *n)
{
	int			count = JB_ROOT_COUNT(arr);
	Jsonb	  **elems = palloc(sizeof(Jsonb *) * Max(count, 1));

	for (int i = 0; i < count; i++)
		elems[i] = JsonbValueToJsonb(getIthJsonbValueFromContainer(&arr->root, i));
	*n = count;
	return elems;
}

/* The members of a jsonb object: keys and values. */
static int
jb_members(Jsonb *obj, char ***keys, Jsonb ***vals)
{
	JsonbIterator *it = JsonbIteratorInit(&obj->root);
	JsonbValue	v;
	JsonbIteratorToken tok;
	int			count = JB_ROOT_COUNT(obj);
	int			n = 0;

	*keys = palloc(sizeof(char *) * Max(count, 1));
	*vals = palloc(sizeof(Jsonb *) * Max(count, 1));
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
			(*keys)[n] = jb_cstring(v.val.string.val, v.val.string.len, "A table name");
		else if (tok == WJB_VALUE)
			(*vals)[n++] = JsonbValueToJsonb(&v);
	}
	return n;
}

static Jsonb *
require_object_arg(FunctionCallInfo fcinfo, int argno, const char *what)
{
	Jsonb	   *j = PG_ARGISNULL(argno) ? NULL : PG_GETARG_JSONB_P(argno);

	if (j == NULL)
		validation_error(DDB_MSG_REQUIRED_PARAMETER, what);
	return j;
}

/*
 * ddb_batch_write_item(request jsonb) RETURNS jsonb
 *   {"<table>": [{"PutRequest": {"Item": {...}}} | {"DeleteRequest": {"Key": {...}}}, ...]}
 *   -> {"UnprocessedItems": {}}
 */
Datum
ddb_batch_write_item(PG_FUNCTION_ARGS)
{
	Jsonb	   *req = require_object_arg(fcinfo, 0, "RequestItems");
	char	  **names;
	Jsonb	  **lists;
	int			ntables;
	DdbBatchWriteTable *tables;
	JsonbParseState *ps = NULL;

	if (!jb_is_object(req))
		validation_error("RequestItems must be a JSON object of table names and request lists");
	ntables = jb_members(req, &names, &lists);
	tables = palloc0(sizeof(DdbBatchWriteTable) * Max(ntables, 1));
	/* the tables and their counts first: no request is read past a limit */
	for (int t = 0; t < ntables; t++)
	{
		if (!jb_is_array(lists[t]))
			validation_error("the requests of table \"%s\" must be a JSON array", names[t]);
		tables[t].table_name = names[t];
		tables[t].nrequests = JB_ROOT_COUNT(lists[t]);
	}
	ddb_batch_write_check(tables, ntables);
	for (int t = 0; t < ntables; t++)
	{
		Jsonb	  **reqs;
		int			n;

		reqs = jb_elements(lists[t], &n);
		tables[t].is_put = palloc(sizeof(bool) * Max(n, 1));
		tables[t].docs = palloc(sizeof(Jsonb *) * Max(n, 1));
		for (int r = 0; r < n; r++)
		{
			Jsonb	   *put = jb_member(reqs[r], "PutRequest");
			Jsonb	   *del = jb_member(reqs[r], "DeleteRequest");

			if ((put == NULL) == (del == NULL))
				validation_error(DDB_MSG_MULTI_TYPE_ATTRIBUTE_VALUE);
			tables[t].is_put[r] = put != NULL;
			tables[t].docs[r] = put ? jb_member(put, "Item") : jb_member(del, "Key");
			if (tables[t].docs[r] == NULL)
			{
				DdbValErrors e;

				ddb_valerr_init(&e);
				ddb_valerr_add(&e, NULL, psprintf("requestItems.%s.member.%d.member.%s",
												  names[t], r + 1,
												  put ? "putRequest.item" : "deleteRequest.key"),
							   "Member must not be null");
				ddb_valerr_raise(&e);
			}
		}
	}
	ddb_batch_write_core(tables, ntables);
	for (int t = 0; t < ntables; t++)
		relation_close(tables[t].rel, NoLock);	/* held to commit */

	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	ddb_push_key(&ps, "UnprocessedItems");
	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	pushJsonbValue(&ps, WJB_END_OBJECT, NULL);
	PG_RETURN_JSONB_P(JsonbValueToJsonb(pushJsonbValue(&ps, WJB_END_OBJECT, NULL)));
}

/*
 * ddb_batch_get_item(request jsonb) RETURNS jsonb
 *   {"<table>": {"Keys": [...], "ProjectionExpression": ..., "ExpressionAttributeNames": ...}}
 *   -> {"Responses": {"<table>": [items]}, "UnprocessedKeys": {...}}
 */
Datum
ddb_batch_get_item(PG_FUNCTION_ARGS)
{
	Jsonb	   *req = require_object_arg(fcinfo, 0, "RequestItems");
	char	  **names;
	Jsonb	  **specs;
	Jsonb	  **keys;
	int			ntables;
	DdbBatchGetTable *tables;
	JsonbParseState *ps = NULL;
	Jsonb	   *responses;

	if (!jb_is_object(req))
		validation_error("RequestItems must be a JSON object of table names and key lists");
	ntables = jb_members(req, &names, &specs);
	tables = palloc0(sizeof(DdbBatchGetTable) * Max(ntables, 1));
	keys = palloc0(sizeof(Jsonb *) * Max(ntables, 1));
	/* the tables and their counts first: no key is read past a limit */
	for (int t = 0; t < ntables; t++)
	{
		keys[t] = jb_member(specs[t], "Keys");
		if (!jb_is_object(specs[t]))
			validation_error("the request of table \"%s\" must be a JSON object with Keys", names[t]);
		if (keys[t] == NULL)
		{
			DdbValErrors e;

			ddb_valerr_init(&e);
			ddb_valerr_add(&e, NULL, psprintf("requestItems.%s.member.keys", names[t]),
						   "Member must not be null");
			ddb_valerr_raise(&e);
		}
		if (!jb_is_array(keys[t]))
			validation_error("Keys of table \"%s\" must be a JSON array", names[t]);
		tables[t].table_name = names[t];
		tables[t].nkeys = JB_ROOT_COUNT(keys[t]);
	}
	ddb_batch_get_check(tables, ntables);
	for (int t = 0; t < ntables; t++)
	{
		tables[t].keys = jb_elements(keys[t], &tables[t].nkeys);
		tables[t].projection = jb_member_text(specs[t], "ProjectionExpression");
		tables[t].names = jb_member(specs[t], "ExpressionAttributeNames");
	}
	ddb_batch_get_core(tables, ntables);

	/* the items go in whole, as they were built (no unpacking) */
	{
		const char **tnames = palloc(sizeof(char *) * Max(ntables, 1));
		Jsonb	  **arrays = palloc(sizeof(Jsonb *) * Max(ntables, 1));

		for (int t = 0; t < ntables; t++)
		{
			List	   *items = tables[t].items;
			Jsonb	  **elems = palloc(sizeof(Jsonb *) * Max(list_length(items), 1));

			for (int i = 0; i < list_length(items); i++)
				elems[i] = list_nth(items, i);
			tnames[t] = tables[t].table_name;
			arrays[t] = ddb_jsonb_array(elems, list_length(items));

			/*
			 * Each level of the response is a copy of the one below it:
			 * free what was copied, so that the call's memory peaks at
			 * two copies of the items rather than four (see "2 clients"
			 * in doc/performance-history.md: a peak past malloc's trim
			 * threshold is given back to the kernel and faulted in again at
			 * every call).
			 */
			for (int i = 0; i < list_length(items); i++)
				pfree(elems[i]);
			pfree(elems);
			list_free(items);
			tables[t].items = NIL;
		}
		responses = ddb_jsonb_object(tnames, arrays, ntables);
		for (int t = 0; t < ntables; t++)
			pfree(arrays[t]);
	}

	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	for (int t = 0; t < ntables; t++)
	{
		ListCell   *lc;

		if (tables[t].unprocessed == NIL)
			continue;
		/* the table's request again, with the keys not read */
		ddb_push_key(&ps, tables[t].table_name);
		pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
		ddb_push_key(&ps, "Keys");
		pushJsonbValue(&ps, WJB_BEGIN_ARRAY, NULL);
		foreach(lc, tables[t].unprocessed)
			ddb_push_jsonb(&ps, WJB_ELEM, lfirst(lc));
		pushJsonbValue(&ps, WJB_END_ARRAY, NULL);
		if (tables[t].projection)
		{
			ddb_push_key(&ps, "ProjectionExpression");
			ddb_push_cstring(&ps, tables[t].projection);
		}
		if (tables[t].names)
		{
			ddb_push_key(&ps, "ExpressionAttributeNames");
			ddb_push_jsonb(&ps, WJB_VALUE, tables[t].names);
		}
		pushJsonbValue(&ps, WJB_END_OBJECT, NULL);
	}
	{
		const char *keys[2] = {"Responses", "UnprocessedKeys"};
		Jsonb	   *vals[2];

		Jsonb	   *result;

		vals[0] = responses;
		vals[1] = JsonbValueToJsonb(pushJsonbValue(&ps, WJB_END_OBJECT, NULL));
		result = ddb_jsonb_object(keys, vals, 2);
		pfree(responses);
		PG_RETURN_JSONB_P(result);
	}
}

/*
 * The actions of a TransactWriteItems or TransactGetItems request (SQL), in
 * two passes: first what ddb_transact_check reads (each action's kind, table
 * name, expressions and whether it has its item or key), checked, then the
 * rest.  DynamoDB checks the members' constraints before the operation's
 * own rules, and lists them together: a request of too many actions gets
 * the count's error with its actions' (the same check and list as the
 * protocol's, ddb_protocol.c's transact_actions).  The first pass only
 * looks members up, so a long list costs little to refuse; no item or key
 * is converted before the check.
 */
static DdbTransactAction *
sql_transact_actions(Jsonb *items, bool writes, int max_actions, int *n)
{
	static const char *const wkinds[] = {"ConditionCheck", "Put", "Delete", "Update"};
	Jsonb	  **elems;
	Jsonb	  **specs;
	DdbTransactAction *actions;

	if (!jb_is_array(items))
		validation_error("TransactItems must be a JSON array");
	elems = jb_elements(items, n);
	actions = palloc0(sizeof(DdbTransactAction) * Max(*n, 1));
	specs = palloc0(sizeof(Jsonb *) * Max(*n, 1));
	for (int i = 0; i < *n; i++)
	{
		DdbTransactAction *a = &actions[i];
		int			found = 0;

		a->kind = DDB_TX_NONE;
		for (int k = 0; k < (writes ? lengthof(wkinds) : 1); k++)
		{
			Jsonb	   *m = jb_member(elems[i], writes ? wkinds[k] : "Get");

			if (m != NULL)
			{
				specs[i] = m;
				a->kind = writes ? (DdbTransactKind) k : DDB_TX_GET;
				found++;
			}
		}
		if (found != 1 || (writes && jb_is_object(elems[i]) && JB_ROOT_COUNT(elems[i]) != 1))
		{
			specs[i] = NULL;
			a->kind = DDB_TX_NONE;	/* refused below */
			continue;
		}
		if (!jb_is_object(specs[i]))
			validation_error("each action of TransactItems must be a JSON object");
		a->table_name = jb_member_text(specs[i], "TableName");
		a->doc_given = jb_member(specs[i], a->kind == DDB_TX_PUT ? "Item" : "Key") != NULL;
		a->condition = jb_member_text(specs[i], "ConditionExpression");
		a->update = jb_member_text(specs[i], "UpdateExpression");
	}
	ddb_transact_check(actions, *n, max_actions, !writes);

	for (int i = 0; i < *n; i++)
	{
		DdbTransactAction *a = &actions[i];
		Jsonb	   *spec = specs[i];
		const char *rv;

		/* (a Get missing was refused by the check) */
		if (a->kind == DDB_TX_NONE)
			validation_error("TransactItems can only contain one of Check, Put, Update or Delete");
		a->doc = jb_member(spec, a->kind == DDB_TX_PUT ? "Item" : "Key");
		a->projection = jb_member_text(spec, "ProjectionExpression");
		a->names = jb_member(spec, "ExpressionAttributeNames");
		a->vals = jb_member(spec, "ExpressionAttributeValues");
		rv = jb_member_text(spec, "ReturnValuesOnConditionCheckFailure");
		if (rv != NULL && strcmp(rv, "ALL_OLD") != 0 && strcmp(rv, "NONE") != 0)
		{
			DdbValErrors e;

			ddb_valerr_init(&e);
			ddb_valerr_add(&e, rv, psprintf("transactItems.%d.member.%s.returnValuesOnConditionCheckFailure",
											i + 1, kind_members[a->kind]),
						   "Member must satisfy enum value set: [ALL_OLD, NONE]");
			ddb_valerr_raise(&e);
		}
		a->return_old = rv != NULL && strcmp(rv, "ALL_OLD") == 0;
	}
	return actions;
}

/*
 * ddb_transact_write_items(items jsonb, client_request_token text,
 * max_actions integer DEFAULT 100) RETURNS jsonb: {} when written.  A
 * canceled transaction is TransactionCanceledException, its DETAIL the
 * JSON object {"CancellationReasons": [...]} (items in document form).
 */
Datum
ddb_transact_write_items(PG_FUNCTION_ARGS)
{
	Jsonb	   *items = require_object_arg(fcinfo, 0, "TransactItems");
	const char *token = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));
	int			max_actions = PG_ARGISNULL(2) ? DDB_TRANSACT_MAX : PG_GETARG_INT32(2);
	DdbTransactAction *actions;
	int			n;
	bool		replayed;
	bool		ok;

	if (max_actions < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_actions must be at least 1")));
	actions = sql_transact_actions(items, true, max_actions, &n);
	ok = ddb_transact_write_core(actions, n, max_actions, token, &replayed);
	for (int i = 0; i < n; i++)
		relation_close(actions[i].rel, NoLock);	/* held to commit */
	if (!ok)
	{
		JsonbParseState *ps = NULL;
		Jsonb	   *detail;

		pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
		ddb_push_key(&ps, "CancellationReasons");
		pushJsonbValue(&ps, WJB_BEGIN_ARRAY, NULL);
		for (int i = 0; i < n; i++)
		{
			pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
			ddb_push_key(&ps, "Code");
			ddb_push_cstring(&ps, actions[i].code ? actions[i].code : "None");
			if (actions[i].message)
			{
				ddb_push_key(&ps, "Message");
				ddb_push_cstring(&ps, actions[i].message);
			}
			if (actions[i].item)
			{
				ddb_push_key(&ps, "Item");
				ddb_push_jsonb(&ps, WJB_VALUE, actions[i].item);
			}
			pushJsonbValue(&ps, WJB_END_OBJECT, NULL);
		}
		pushJsonbValue(&ps, WJB_END_ARRAY, NULL);
		detail = JsonbValueToJsonb(pushJsonbValue(&ps, WJB_END_OBJECT, NULL));
		ereport(ERROR,
				(errcode(DDB_ERRCODE_TRANSACTION_CANCELED),
				 errmsg_internal("%s", ddb_transact_canceled_message(actions, n)),
				 errdetail_internal("%s", JsonbToCString(NULL, &detail->root, VARSIZE(detail)))));
	}
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum("{}")));
}

/*
 * ddb_transact_get_items(items jsonb) RETURNS jsonb
 *   [{"Get": {"TableName", "Key", "ProjectionExpression", "ExpressionAttributeNames"}}, ...]
 *   -> {"Responses": [{"Item": {...}} | {}, ...]}
 */
Datum
ddb_transact_get_items(PG_FUNCTION_ARGS)
{
	Jsonb	   *items = require_object_arg(fcinfo, 0, "TransactItems");
	DdbTransactAction *actions;
	int			n;
	JsonbParseState *ps = NULL;

	actions = sql_transact_actions(items, false, DDB_TRANSACT_MAX, &n);
	ddb_transact_get_core(actions, n);
	for (int i = 0; i < n; i++)
		relation_close(actions[i].rel, AccessShareLock);

	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	ddb_push_key(&ps, "Responses");
	pushJsonbValue(&ps, WJB_BEGIN_ARRAY, NULL);
	for (int i = 0; i < n; i++)
	{
		pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
		if (actions[i].item)
		{
			ddb_push_key(&ps, "Item");
			ddb_push_jsonb(&ps, WJB_VALUE, actions[i].item);
		}
		pushJsonbValue(&ps, WJB_END_OBJECT, NULL);
	}
	pushJsonbValue(&ps, WJB_END_ARRAY, NULL);
	PG_RETURN_JSONB_P(JsonbValueToJsonb(pushJsonbValue(&ps, WJB_END_OBJECT, NULL)));
}
