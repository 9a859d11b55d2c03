/*-------------------------------------------------------------------------
 *
 * ddb_ttl.c
 *	  Time to Live: UpdateTimeToLive, DescribeTimeToLive, and the sweep that
 *	  deletes expired items.
 *
 * An item expires when its TTL attribute is a number (epoch seconds) below
 * the current time and no more than five years in the past, as DynamoDB
 * rules; an item without it, or with a value of another type, never does.
 *
 * The TTL index.  Enabling TTL creates an internal index of kind
 * DDB_INDEX_TTL (ddb_gsi.c), named DDB_TTL_INDEX, whose key is (a constant
 * partition, the TTL attribute, the table's keys): every entry sits in one
 * partition in expiry order, and only items whose attribute is a number
 * have one, so it is sparse.  It is maintained by the same code as global
 * secondary indexes, in the writing transaction, by every write path.  Its
 * catalog row exists exactly while TTL is enabled; disabling TTL drops it.
 *
 * The sweep reads the index range [now - 5 years, now) and nothing else,
 * so its cost grows with the number of expired items, not with the table.
 * It first collects the keys of up to a batch of expired entries, then
 * deletes each item through DeleteItem's core with the condition "the TTL
 * attribute is still a number in that range": the core reads the item's
 * latest version (waiting for a writer in progress) and evaluates the
 * condition on it, so an item whose TTL a concurrent transaction moved to
 * the future or removed is never deleted, and the deletion maintains every
 * index (global, local, and this one) as any DeleteItem does.  It
 * deletes them in the order of their keys, not of their expiry, and takes
 * the collection rows of a table with LSIs after all its items (ddb_gsi.c's
 * lock order), as TransactWriteItems does, so that a sweep and a
 * transaction over the same items wait for each other instead of
 * deadlocking.
 *
 * The background worker (ddb_ttl_worker.c) runs ddb_ttl_sweep_table in
 * transactions of one batch each; ddb_ttl_sweep() runs a whole sweep in the
 * caller's transaction, for pg_cron or by hand, as one batch: in key order
 * from its first item to its last (a tuplesort, so in bounded memory).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xact.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/tuplesort.h"

#include "ddb.h"
#include "api/ddb_ops.h"
#include "api/ddb_json.h"
#include "engine/ddb_page.h"
#include "model/ddb_expr.h"

PG_FUNCTION_INFO_V1(ddb_update_time_to_live);
PG_FUNCTION_INFO_V1(ddb_describe_time_to_live);
PG_FUNCTION_INFO_V1(ddb_ttl_sweep);

/* The TTL index's name ('$' is in no DynamoDB index name) and partition. */
#define DDB_TTL_INDEX			"$ttl"
#define DDB_TTL_BUCKET_COLUMN	"$ttl"

/* Items expired longer ago than this are not deleted, as in DynamoDB. */
#define DDB_TTL_MAX_AGE_SECONDS	(5 * 365 * 86400 + 2 * 86400)

/* ------------------------------------------------------------------------
 * UpdateTimeToLive / DescribeTimeToLive
 * ------------------------------------------------------------------------
 */

/* The TTL attribute of a table, or NULL when TTL is disabled. */
char *
ddb_ttl_attribute(Relation rel)
{
	char	   *attr;

	if (!ddb_index_info(rel, DDB_INDEX_TTL, NULL, NULL, NULL, &attr))
		return NULL;
	return attr;
}

/*
 * UpdateTimeToLive's core: enable TTL on attribute (creating and filling
 * the TTL index) or disable it (dropping the index).  DynamoDB's errors:
 * enabling twice, disabling twice, disabling another attribute.  The
 * caller must own the table (checked when the index is created or
 * dropped).
 */
void
ddb_ttl_update_core(Relation rel, const char *attribute, bool enabled)
{
	char	   *current;
	DdbValErrors e;

	ddb_valerr_init(&e);
	if (attribute == NULL)
		ddb_valerr_add(&e, NULL, "timeToLiveSpecification.attributeName",
					   "Member must not be null");
	else if (strlen(attribute) < 1)
		ddb_valerr_add(&e, attribute, "timeToLiveSpecification.attributeName",
					   "Member must have length greater than or equal to 1");
	else if (strlen(attribute) > 255)
		ddb_valerr_add(&e, attribute, "timeToLiveSpecification.attributeName",
					   "Member must have length less than or equal to 255");
	ddb_valerr_raise(&e);

	/*
	 * The lock the index's creation or drop takes, before TTL's state is
	 * read: another UpdateTimeToLive not yet committed is waited for and
	 * its outcome seen (taking the lock reads the invalidations), so the
	 * second of two enables is "already enabled" rather than the index
	 * code's "Attempting to create an index which already exists", and
	 * the second of two disables "already disabled" rather than
	 * ResourceNotFoundException.
	 */
	LockRelationOid(RelationGetRelid(rel), ShareRowExclusiveLock);
	current = ddb_ttl_attribute(rel);

	if (enabled)
	{
		char	   *bucket = DDB_TTL_BUCKET_COLUMN;

		if (current != NULL)
			ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
					  "TimeToLive is already enabled");
		/* the constant partition's column must not be an attribute's name */
		for (;;)
		{
			bool		taken = strcmp(bucket, attribute) == 0;
			const DdbKeyInfo *ki = ddb_get_keyinfo(rel);

			for (int k = 0; k < ki->nkeys; k++)
				taken |= strcmp(bucket, ddb_key_name(rel, k)) == 0;
			if (!taken)
				break;
			bucket = psprintf("%s_", bucket);
		}
		ddb_index_create(RelationGetRelid(rel), DDB_INDEX_TTL, DDB_TTL_INDEX,
						 bucket, "N", pstrdup(attribute), "N", "KEYS_ONLY", NULL);
	}
	else
	{
		if (current == NULL)
			ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
					  "TimeToLive is already disabled");
		if (strcmp(current, attribute) != 0)
			ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
					  "TimeToLive is active on a different AttributeName: current AttributeName is %s",
					  current);
		ddb_index_drop(RelationGetRelid(rel), DDB_TTL_INDEX, DDB_INDEX_TTL);
	}
}

/* DescribeTimeToLive's TimeToLiveDescription, as JSON text, appended to buf. */
void
ddb_ttl_describe_json(Relation rel, StringInfo buf)
{
	char	   *attr = ddb_ttl_attribute(rel);

	if (attr == NULL)
	{
		appendStringInfoString(buf, "{\"TimeToLiveStatus\":\"DISABLED\"}");
		return;
	}
	appendStringInfoString(buf, "{\"TimeToLiveStatus\":\"ENABLED\",\"AttributeName\":");
	ddb_json_cstring(buf, attr);
	appendStringInfoChar(buf, '}');
}

/* ddb_update_time_to_live(tbl, attribute_name, enabled) RETURNS jsonb */
Datum
ddb_update_time_to_live(PG_FUNCTION_ARGS)
{
	Relation	rel;
	char	   *attr = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));
	StringInfoData out;

	if (PG_ARGISNULL(2))
	{
		DdbValErrors e;

		ddb_valerr_init(&e);
		ddb_valerr_add(&e, NULL, "timeToLiveSpecification.enabled", "Member must not be null");
		ddb_valerr_raise(&e);
	}
	rel = ddb_table_open_arg(fcinfo, 0, ACL_SELECT);
	ddb_ttl_update_core(rel, attr, PG_GETARG_BOOL(2));
	initStringInfo(&out);
	appendStringInfoString(&out, "{\"AttributeName\":");
	ddb_json_cstring(&out, attr);
	appendStringInfo(&out, ",\"Enabled\":%s}", PG_GETARG_BOOL(2) ? "true" : "false");
	relation_close(rel, AccessShareLock);
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(out.data)));
}

/* ddb_describe_time_to_live(tbl) RETURNS jsonb */
Datum
ddb_describe_time_to_live(PG_FUNCTION_ARGS)
{
	Relation	rel = ddb_table_open_arg(fcinfo, 0, ACL_SELECT);
	StringInfoData out;

	initStringInfo(&out);
	ddb_ttl_describe_json(rel, &out);
	relation_close(rel, AccessShareLock);
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(out.data)));
}

/* ------------------------------------------------------------------------
 * The sweep
 * ------------------------------------------------------------------------
 */

/* now - seconds, as an exact decimal of epoch seconds with microseconds */
static Datum
epoch_numeric(TimestampTz t)
{
	/* TimestampTz counts microseconds from 2000-01-01 */
	int64		us = t + ((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY);
	char		buf[64];

	snprintf(buf, sizeof(buf), "%s%lld.%06lld", us < 0 ? "-" : "",
			 (long long) (Abs(us) / USECS_PER_SEC), (long long) (Abs(us) % USECS_PER_SEC));
	return DirectFunctionCall3(numeric_in, CStringGetDatum(buf),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

/* The encoded TTL index key prefix (constant partition, expiry). */
static void
expiry_prefix(Relation idx, Datum expiry, StringInfo out)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(idx);
	Datum		values[2];

	values[0] = DirectFunctionCall1(int4_numeric, Int32GetDatum(0));
	values[1] = expiry;
	initStringInfo(out);
	ddb_encode_key_prefix(ki, values, 2, out);
}

/* A document-form jsonb object {name: value} with a numeric value, or text. */
static Jsonb *
one_member(const char *name, const char *numtext, const char *strval)
{
	StringInfoData s;

	initStringInfo(&s);
	appendStringInfoChar(&s, '{');
	escape_json(&s, name);
	appendStringInfoChar(&s, ':');
	if (numtext)
		appendStringInfoString(&s, numtext);
	else
		escape_json(&s, strval);
	appendStringInfoChar(&s, '}');
	return DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(s.data)));
}

/*
 * A sweep's keys, in key order: a tuplesort of bytea datums, encoded key ||
 * the key as a jsonb document || key length (2 bytes), as the bulk load
 * spools its rows (ddb_bulk.c).  No encoded key is a proper prefix of
 * another, so bytewise order is key order.  It takes work_mem and spills
 * to temporary files beyond it, so a sweep of the whole table from SQL
 * sorts all its keys however many expired.
 */
static void
sweep_put_key(Tuplesortstate *sort, const char *enc, int enclen, Jsonb *doc)
{
	bytea	   *blob;
	char	   *p;
	uint16		kl = (uint16) enclen;

	blob = palloc(VARHDRSZ + enclen + VARSIZE(doc) + sizeof(uint16));
	SET_VARSIZE(blob, VARHDRSZ + enclen + VARSIZE(doc) + sizeof(uint16));
	p = VARDATA(blob);
	memcpy(p, enc, enclen);
	memcpy(p + enclen, doc, VARSIZE(doc));
	memcpy(p + enclen + VARSIZE(doc), &kl, sizeof(uint16));
	tuplesort_putdatum(sort, PointerGetDatum(blob), false);
	pfree(blob);
}

/* The key document of a sorted datum, copied out (aligned). */
static Jsonb *
sweep_key_doc(Datum d)
{
	bytea	   *blob = DatumGetByteaPP(d);
	char	   *p = VARDATA_ANY(blob);
	int			len = VARSIZE_ANY_EXHDR(blob);
	uint16		kl;
	Jsonb	   *doc;

	memcpy(&kl, p + len - sizeof(uint16), sizeof(uint16));
	doc = palloc(len - kl - sizeof(uint16));
	memcpy(doc, p + kl, len - kl - sizeof(uint16));
	return doc;
}

/*
 * Delete up to limit expired items of rel (a ddb table opened with
 * RowExclusiveLock), all of them when limit is 0; *more is set when the
 * batch was full.  Reads only the TTL index's expired range.  Returns the
 * number deleted; 0 when TTL is disabled.  Needs an active snapshot.
 */
int64
ddb_ttl_sweep_table(Relation rel, int64 limit, bool *more)
{
	Oid			idxoid;
	char	   *attr;
	Relation	idx;
	TimestampTz now = GetCurrentTimestamp();
	Datum		now_num,
				lo_num;
	StringInfoData lo,
				hi;
	DdbRange	range;
	DdbRangeScan scan;
	HeapTuple	tuple;
	int64		nkeys = 0;
	int64		deleted = 0;
	const DdbKeyInfo *ki = ddb_get_keyinfo(rel);
	DdbExprContext *cx;
	DdbCondition *cond;
	Jsonb	   *names,
			   *vals;
	MemoryContext cxt,
				old;
	Tuplesortstate *sort;
	Datum		d;
	bool		isnull;
	int			mark;

	*more = false;
	if (!ddb_index_info(rel, DDB_INDEX_TTL, NULL, &idxoid, NULL, &attr))
		return 0;
	idx = try_relation_open(idxoid, AccessShareLock);
	if (idx == NULL)
		return 0;				/* TTL disabled meanwhile */

	now_num = epoch_numeric(now);
	lo_num = epoch_numeric(now - (int64) DDB_TTL_MAX_AGE_SECONDS * USECS_PER_SEC);
	expiry_prefix(idx, lo_num, &lo);
	expiry_prefix(idx, now_num, &hi);
	range.lo = lo.data;
	range.lolen = lo.len;
	range.hi = hi.data;
	range.hilen = hi.len;

	cxt = AllocSetContextCreate(CurrentMemoryContext, "ddb ttl sweep",
								ALLOCSET_DEFAULT_SIZES);

	/*
	 * First the keys of the expired entries (the deletions change the
	 * index), sorted into key order (see the header).
	 */
	sort = tuplesort_begin_datum(BYTEAOID, ByteaLessOperator, InvalidOid, false,
								 work_mem, NULL, TUPLESORT_NONE);
	scan = ddb_range_begin(idx, GetActiveSnapshot(), &range, true);
	while ((limit == 0 || nkeys < limit) && (tuple = ddb_range_next(scan)) != NULL)
	{
		Jsonb	   *entry;
		JsonbParseState *ps = NULL;
		StringInfoData enc;
		Jsonb	   *doc;

		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(cxt);
		entry = ddb_tuple_to_item(idx, tuple);
		pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
		for (int k = 0; k < ki->nkeys; k++)
		{
			const char *name = ddb_key_name(rel, k);
			JsonbValue	kv;
			JsonbValue *v = getKeyJsonValueFromContainer(&entry->root, name, strlen(name), NULL);

			if (v == NULL)
				elog(ERROR, "TTL index entry of table \"%s\" lacks key attribute \"%s\"",
					 RelationGetRelationName(rel), name);
			kv.type = jbvString;
			kv.val.string.val = (char *) name;
			kv.val.string.len = strlen(name);
			pushJsonbValue(&ps, WJB_KEY, &kv);
			pushJsonbValue(&ps, WJB_VALUE, v);
		}
		doc = JsonbValueToJsonb(pushJsonbValue(&ps, WJB_END_OBJECT, NULL));
		ddb_request_key(rel, doc, true, &enc);
		MemoryContextSwitchTo(old);
		sweep_put_key(sort, enc.data, enc.len, doc);
		MemoryContextReset(cxt);
		nkeys++;
	}
	*more = limit > 0 && nkeys >= limit;
	ddb_range_end(scan);
	relation_close(idx, AccessShareLock);
	tuplesort_performsort(sort);

	/* then each item, if it is still expired when its latest version is read */
	names = one_member("#t", NULL, attr);
	{
		StringInfoData v;

		initStringInfo(&v);
		appendStringInfo(&v, "{\":now\":%s,\":lo\":%s}",
						 DatumGetCString(DirectFunctionCall1(numeric_out, now_num)),
						 DatumGetCString(DirectFunctionCall1(numeric_out, lo_num)));
		vals = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(v.data)));
	}
	cx = ddb_expr_begin(names, vals);
	cond = ddb_parse_condition(cx, "#t < :now AND #t >= :lo", "ConditionExpression");
	ddb_expr_end(cx);

	/* the deletions are the service's, in a stream's records */
	ddb_stream_service_begin();
	mark = ddb_collection_defer_begin();
	PG_TRY();
	{
		while (tuplesort_getdatum(sort, true, &d, &isnull, NULL))
		{
			DdbWriteResult res;

			CHECK_FOR_INTERRUPTS();
			old = MemoryContextSwitchTo(cxt);
			ddb_delete_item_core(rel, sweep_key_doc(d), cond, &res);
			if (!res.condition_failed && res.old != NULL)
				deleted++;
			MemoryContextSwitchTo(old);
			pfree(DatumGetPointer(d));
			MemoryContextReset(cxt);
		}
	}
	PG_CATCH();
	{
		ddb_collection_defer_end(mark, false);
		ddb_stream_service_end();
		PG_RE_THROW();
	}
	PG_END_TRY();
	ddb_collection_defer_end(mark, true);
	ddb_stream_service_end();
	tuplesort_end(sort);
	MemoryContextDelete(cxt);
	return deleted;
}

/* The tables with TTL enabled, by OID (SPI; in the caller's context). */
List *
ddb_ttl_tables(void)
{
	List	   *relids = NIL;
	MemoryContext caller = CurrentMemoryContext;
	int			pinned = ddb_search_path_pin();	/* see its comment */

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute("SELECT base::oid FROM ddb_internal.gsi WHERE kind = 'T' ORDER BY 1",
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read ddb_internal.gsi");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
		MemoryContext spi = MemoryContextSwitchTo(caller);

		relids = lappend_oid(relids, DatumGetObjectId(d));
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();
	ddb_search_path_unpin(pinned);
	return relids;
}

/*
 * May the current user delete expired items of this table with ddb?  Not
 * of a table that is gone: dropped since the list was read, or without the
 * drop's event trigger (single-user mode, or the trigger disabled), which
 * leaves its catalog row behind.
 */
static bool
may_sweep(Oid relid)
{
	bool		missing;			/* (gone: no privilege at all) */

	return pg_class_aclmask_ext(relid, GetUserId(), ACL_DELETE | ACL_SELECT, ACLMASK_ALL,
								&missing) == (ACL_DELETE | ACL_SELECT) &&
		check_enable_rls(relid, InvalidOid, true) != RLS_ENABLED;
}

/*
 * A whole sweep of one table in this transaction: one batch of all its
 * expired items, so that they are deleted in key order (in batches, each in
 * key order, a later batch's smaller key was taken while the earlier
 * batches' keys were still held).
 */
static int64
sweep_all(Relation rel)
{
	bool		more;

	return ddb_ttl_sweep_table(rel, 0, &more);
}

/*
 * ddb_ttl_sweep(tbl DEFAULT NULL) RETURNS bigint: delete the expired items
 * of a table, or of every TTL-enabled table the caller may delete from
 * (others are skipped), in the caller's transaction.  Without a table the
 * deletions are the service's, as the worker's: they fire no triggers, so
 * a table with DELETE triggers of its own is swept only by its owner (who
 * may drop them anyway), never by a role that may merely delete from it,
 * whose own deletions fire them.  Tables go in OID
 * order, each in key order, and the collection rows of tables with LSIs
 * after all their items (one deferral around the whole sweep): the order
 * TransactWriteItems locks in.
 */
Datum
ddb_ttl_sweep(PG_FUNCTION_ARGS)
{
	int64		total = 0;
	int			mark = ddb_collection_defer_begin();

	PG_TRY();
	{
		if (!PG_ARGISNULL(0))
		{
			Relation	rel = ddb_open_table(PG_GETARG_OID(0), ACL_DELETE);

			ddb_check_write_privileges(rel, ACL_DELETE, true);
			total = sweep_all(rel);
			relation_close(rel, NoLock);
		}
		else
		{
			ListCell   *lc;

			foreach(lc, ddb_ttl_tables())
			{
				Oid			relid = lfirst_oid(lc);
				Relation	rel;

				if (!may_sweep(relid))
					continue;
				rel = try_relation_open(relid, RowExclusiveLock);
				if (rel == NULL)
					continue;
				/* the service's deletions skip triggers: their owner's call */
				if (ddb_has_user_delete_trigger(rel) &&
					!pg_class_ownercheck(relid, GetUserId()))
				{
					relation_close(rel, RowExclusiveLock);
					continue;
				}
				total += sweep_all(rel);
				relation_close(rel, NoLock);
			}
		}
	}
	PG_CATCH();
	{
		ddb_collection_defer_end(mark, false);
		PG_RE_THROW();
	}
	PG_END_TRY();
	ddb_collection_defer_end(mark, true);
	PG_RETURN_INT64(total);
}
