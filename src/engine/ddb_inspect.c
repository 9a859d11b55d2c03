/*-------------------------------------------------------------------------
 *
 * ddb_inspect.c
 *	  SQL access to the storage engine's own API, for tests and tools.
 *
 * These functions call the engine's range scan and point lookup directly
 * with encoded key bounds (see ddb_key_bytes()), so the regression tests can
 * prove the engine API that ddb_query and ddb_get_item are built on.  They
 * take a value of the table's row type (usually NULL::tablename) and return
 * rows of that type:
 *
 *	ddb_range_scan(NULL::t, lo, hi, forward)	items with lo <= key < hi
 *	ddb_range_scan(NULL::t, prefix, NULL, forward, prefix => true)
 *												items whose key starts with prefix
 *	ddb_lookup_key(NULL::t, key)				the visible version of one key
 *
 * Privileges: SELECT on the table, and row-level security must not apply
 * (the engine bypasses the executor, so it checks for itself).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/pg_class.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"

#include "ddb.h"

PG_FUNCTION_INFO_V1(ddb_range_scan);
PG_FUNCTION_INFO_V1(ddb_lookup_key);

/*
 * Open the ddb table whose row type is the type of argument 0, checking
 * SELECT privilege and refusing row-level security.
 */
static Relation
open_by_rowtype(FunctionCallInfo fcinfo)
{
	Oid			typid = get_fn_expr_argtype(fcinfo->flinfo, 0);
	Oid			relid = OidIsValid(typid) ? get_typ_typrelid(typid) : InvalidOid;

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("first argument must be a row of a ddb table"),
				 errhint("Pass NULL::tablename.")));
	return ddb_open_table(relid, ACL_SELECT);
}

typedef struct RangeScanState
{
	Relation	rel;			/* NULL once the scan has ended */
	DdbRangeScan scan;
	TupleDesc	desc;
	ExprContext *econtext;		/* where range_scan_shutdown is registered */
} RangeScanState;

/* End the scan and close the table: at its end, or when the caller stops. */
static void
range_scan_end(RangeScanState *st)
{
	if (st->rel == NULL)
		return;
	ddb_range_end(st->scan);
	relation_close(st->rel, AccessShareLock);
	st->rel = NULL;
}

/*
 * A caller may stop asking before the last row (a LIMIT over the function
 * in a select list, a cursor closed early): the expression context's
 * shutdown ends the scan then, as ddb_query's reader does, or the table
 * would stay open past the query (a relcache reference leak).  It runs
 * before the SRF's own shutdown, which frees the multi-call memory that
 * holds st (callbacks run in reverse order of registration).
 */
static void
range_scan_shutdown(Datum arg)
{
	range_scan_end((RangeScanState *) DatumGetPointer(arg));
}

Datum
ddb_range_scan(PG_FUNCTION_ARGS)
{
	FuncCallContext *funcctx;
	RangeScanState *st;
	HeapTuple	tuple;

	if (SRF_IS_FIRSTCALL())
	{
		ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
		MemoryContext old;
		DdbRange	range = {0};
		bool		forward = PG_ARGISNULL(3) ? true : PG_GETARG_BOOL(3);
		bool		prefix = PG_ARGISNULL(4) ? false : PG_GETARG_BOOL(4);
		StringInfoData succ;

		funcctx = SRF_FIRSTCALL_INIT();
		old = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		st = palloc0(sizeof(RangeScanState));
		st->rel = open_by_rowtype(fcinfo);
		st->desc = CreateTupleDescCopy(RelationGetDescr(st->rel));
		if (!PG_ARGISNULL(1))
		{
			bytea	   *lo = PG_GETARG_BYTEA_PP(1);

			range.lo = VARDATA_ANY(lo);
			range.lolen = VARSIZE_ANY_EXHDR(lo);
		}
		if (prefix)
		{
			if (range.lo == NULL)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("a prefix scan needs a prefix in lo")));
			initStringInfo(&succ);
			if (ddb_key_successor(range.lo, range.lolen, &succ))
			{
				range.hi = succ.data;
				range.hilen = succ.len;
			}
		}
		else if (!PG_ARGISNULL(2))
		{
			bytea	   *hi = PG_GETARG_BYTEA_PP(2);

			range.hi = VARDATA_ANY(hi);
			range.hilen = VARSIZE_ANY_EXHDR(hi);
		}
		st->scan = ddb_range_begin(st->rel, GetActiveSnapshot(), &range, forward);
		if (rsinfo && IsA(rsinfo, ReturnSetInfo) && rsinfo->econtext)
		{
			st->econtext = rsinfo->econtext;
			RegisterExprContextCallback(st->econtext, range_scan_shutdown,
										PointerGetDatum(st));
		}
		funcctx->user_fctx = st;
		MemoryContextSwitchTo(old);
	}

	funcctx = SRF_PERCALL_SETUP();
	st = funcctx->user_fctx;
	tuple = ddb_range_next(st->scan);
	if (tuple != NULL)
		SRF_RETURN_NEXT(funcctx, heap_copy_tuple_as_datum(tuple, st->desc));

	range_scan_end(st);
	if (st->econtext)
		UnregisterExprContextCallback(st->econtext, range_scan_shutdown,
									  PointerGetDatum(st));
	SRF_RETURN_DONE(funcctx);
}

Datum
ddb_lookup_key(PG_FUNCTION_ARGS)
{
	Relation	rel = open_by_rowtype(fcinfo);
	bytea	   *key;
	HeapTuple	tuple;
	Datum		result;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("key must not be null")));
	key = PG_GETARG_BYTEA_PP(1);
	tuple = ddb_lookup(rel, GetActiveSnapshot(), VARDATA_ANY(key), VARSIZE_ANY_EXHDR(key));
	if (tuple == NULL)
	{
		relation_close(rel, AccessShareLock);
		PG_RETURN_NULL();
	}
	result = heap_copy_tuple_as_datum(tuple, RelationGetDescr(rel));
	relation_close(rel, AccessShareLock);
	PG_RETURN_DATUM(result);
}
