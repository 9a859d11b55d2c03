/*-------------------------------------------------------------------------
 *
 * ddb_customscan.c
 *	  Executor side of the "DdbKeyScan" CustomScan: reads key ranges of a
 *	  ddb table through the engine's ordered range scans.
 *
 * The key values (Consts, Params, nested-loop parameters) are evaluated at
 * the first fetch after the start or a rescan, encoded with the table's key
 * types into one [lo, hi) range per partition value, and read with
 * ddb_range_begin/next.  A NULL key value, a NaN or an infinity compared
 * with "=", or bounds that cross, give an empty range.  An array of values
 * for one key column (pk = ANY, or sk = ANY in one partition) gives a range
 * per element, sorted and deduplicated by their encoded keys and read one
 * after the other; NULL, NaN and infinite elements match nothing.
 *
 * The range holds exactly the rows that satisfy the "=" clauses pinning
 * key columns (ddb_planner.c), so ExecScan checks only the other clauses
 * (the filter) row by row; an EvalPlanQual recheck, whose row may come with
 * new outer-row parameters, evaluates the pinning clauses too, compiled on
 * its first use (most executions never recheck).
 *
 * Rows come out in PostgreSQL 15's virtual scan slot, filled from the
 * engine's stored versions (store_stored: the item column as stored, and
 * of the key columns only those the plan reads, decoded from the key), or
 * in a heap-tuple slot of the engine's full tuples when the plan reads
 * system columns other than ctid and tableoid or runs an EvalPlanQual
 * recheck (see ddb_keyscan_begin).  A scan of the table an UPDATE or DELETE modifies
 * tells the engine on which leaf it read each row (ddb_version_seen_on), so
 * the modification finds the version there without asking the row-id map.
 *
 * Direction: a backward plan (ORDER BY sk DESC) reads the range backward;
 * the estate's direction (FETCH BACKWARD on a SCROLL cursor) flips it.
 * When the direction changes mid-scan, the range is restarted from the key
 * of the last row read, exclusive of it (or inclusive when the scan had run
 * off the end), which is where a cursor's position is.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/tableam.h"
#include "catalog/pg_type_d.h"
#include "executor/executor.h"
#include "executor/nodeCustom.h"
#include "commands/explain.h"
#include "mb/pg_wchar.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "miscadmin.h"
#include "storage/predicate.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"
#include "utils/snapmgr.h"

#include "ddb.h"
#include "engine/ddb_page.h"

typedef struct DdbKeyScanState
{
	CustomScanState css;

	/* from the plan */
	DdbKeyInfo	ki;
	int			npinned;
	bool		backward;		/* plan reads the range backward */
	int			array_col;		/* the key column pinned "= ANY", or -1 */
	List	   *bound_kinds;
	int			nkeyexprs;		/* custom_exprs: this many key values, */
	int			nfilter;		/* then this many filter clauses, then */
	int			rows_wanted;	/* at most this many rows asked for (a hint,
								 * ddb_range_want), 0 = unknown */
	List	   *recheck_clauses;	/* the clauses the range enforces */
	ExprState  *recheck;		/* compiled on first use */
	List	   *exprstates;		/* ExprState per key value */
	bool		track_pos;		/* a SCROLL cursor may change direction */
	bool		is_target;		/* UPDATE or DELETE modifies what we read */
	bool		heap_slot;		/* the scan slot is a heap-tuple slot */
	bool		want_key[DDB_MAX_KEY_COLUMNS];	/* virtual slot: key columns
												 * the plan reads */

	/* the ranges, recomputed after each rescan */
	bool		keys_ready;
	MemoryContext keycxt;
	int			nranges;
	DdbRange   *ranges;

	/* the engine scan */
	DdbRangeScan scan;
	bool		started;
	bool		scan_forward;	/* engine direction of the current scan */
	int			cur;			/* range being read */
	bool		exhausted;		/* ran off the end in scan_forward direction */

	/* position for direction changes */
	bool		have_pos;
	int			posrange;
	StringInfoData poskey;
	StringInfoData tmp;
} DdbKeyScanState;

static void ddb_keyscan_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *ddb_keyscan_exec(CustomScanState *node);
static void ddb_keyscan_end(CustomScanState *node);
static void ddb_keyscan_rescan(CustomScanState *node);
static void ddb_keyscan_explain(CustomScanState *node, List *ancestors,
								ExplainState *es);

static const CustomExecMethods ddb_keyscan_exec_methods = {
	.CustomName = "DdbKeyScan",
	.BeginCustomScan = ddb_keyscan_begin,
	.ExecCustomScan = ddb_keyscan_exec,
	.EndCustomScan = ddb_keyscan_end,
	.ReScanCustomScan = ddb_keyscan_rescan,
	.ExplainCustomScan = ddb_keyscan_explain,
};

Node *
ddb_keyscan_create_state(CustomScan *cscan)
{
	DdbKeyScanState *st = (DdbKeyScanState *) newNode(sizeof(DdbKeyScanState),
													  T_CustomScanState);

	st->css.methods = &ddb_keyscan_exec_methods;
	st->npinned = intVal(linitial(cscan->custom_private));
	st->backward = intVal(lsecond(cscan->custom_private)) != 0;
	st->array_col = intVal(lthird(cscan->custom_private));
	st->bound_kinds = (List *) lfourth(cscan->custom_private);
	st->nkeyexprs = intVal(list_nth(cscan->custom_private, 4));
	st->nfilter = intVal(list_nth(cscan->custom_private, 5));
	st->rows_wanted = intVal(list_nth(cscan->custom_private, 6));
	return (Node *) st;
}

/*
 * Does the expression read a system column of the scanned row that only its
 * heap tuple has?  Every Var of a scan node's expressions is of its
 * relation; ctid and tableoid are fields of any slot.
 */
static bool
reads_tuple_sysattrs(Node *node)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
	{
		AttrNumber	attno = ((Var *) node)->varattno;

		return attno < 0 && attno != SelfItemPointerAttributeNumber &&
			attno != TableOidAttributeNumber;
	}
	return expression_tree_walker(node, reads_tuple_sysattrs, NULL);
}

/* The filter clauses of the plan: custom_exprs after the key values. */
static List *
filter_clauses(DdbKeyScanState *st, CustomScan *cscan)
{
	return list_truncate(list_copy_tail(cscan->custom_exprs, st->nkeyexprs),
						 st->nfilter);
}

/*
 * The key columns a virtual scan slot must carry: those the projection and
 * the filter read (the slot is deformed from the stored version, and a key
 * column's value is decoded from its key, so one nobody reads is left
 * NULL).  A scan without a projection hands its slot itself to its parent,
 * and a whole-row reference reads every column: then all of them.  The
 * recheck's clauses are evaluated in a heap-tuple slot only (an
 * EvalPlanQual plan's, see ddb_keyscan_begin).
 */
static void
set_wanted_keys(DdbKeyScanState *st, CustomScan *cscan, List *filter)
{
	Index		scanrelid = cscan->scan.scanrelid;
	Bitmapset  *attrs = NULL;
	bool		all;

	pull_varattnos((Node *) cscan->scan.plan.targetlist, scanrelid, &attrs);
	pull_varattnos((Node *) cscan->scan.plan.qual, scanrelid, &attrs);
	pull_varattnos((Node *) filter, scanrelid, &attrs);
	all = st->css.ss.ps.ps_ProjInfo == NULL ||
		bms_is_member(InvalidAttrNumber - FirstLowInvalidHeapAttributeNumber, attrs);
	for (int k = 0; k < st->ki.nkeys; k++)
		st->want_key[k] = all ||
			bms_is_member(st->ki.keyattno[k] - FirstLowInvalidHeapAttributeNumber, attrs);
	bms_free(attrs);
}

static void
ddb_keyscan_begin(CustomScanState *node, EState *estate, int eflags)
{
	DdbKeyScanState *st = (DdbKeyScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	Relation	rel = node->ss.ss_currentRelation;
	List	   *filter = filter_clauses(st, cscan);

	st->ki = *ddb_get_keyinfo(rel);

	/*
	 * PostgreSQL 15 gives a custom scan a virtual scan slot, and has
	 * compiled the projection for it.  The engine hands out heap tuples,
	 * which a virtual slot takes deformed (ExecForceStoreHeapTuple); its
	 * ctid and tableoid are the slot's own fields, which is all UPDATE,
	 * DELETE, row marks and WHERE CURRENT OF read.  Two cases need the
	 * table's heap-tuple slot instead: other system columns (xmin, ...),
	 * which only a heap tuple has, and an EvalPlanQual recheck, whose test
	 * tuple arrives in a slot of the table's type and is evaluated by this
	 * node's expressions.  Then replace the slot and rebuild the projection
	 * for it; the rebuild registers the projection's SubPlans again, so
	 * forget the first ones.  The filter is compiled here only, for the
	 * slot in use: the planner keeps it out of plan.qual, in custom_exprs
	 * after the key values (see ddb_planner.c).
	 */
	st->heap_slot = estate->es_epq_active != NULL ||
		reads_tuple_sysattrs((Node *) cscan->scan.plan.targetlist) ||
		reads_tuple_sysattrs((Node *) filter);
	if (st->heap_slot)
	{
		ExecInitScanTupleSlot(estate, &node->ss, RelationGetDescr(rel),
							  table_slot_callbacks(rel));
		node->ss.ps.subPlan = NIL;
		ExecAssignScanProjectionInfoWithVarno(&node->ss, cscan->scan.scanrelid);
	}
	if (st->nfilter > 0)
		node->ss.ps.qual = ExecInitQual(filter, &node->ss.ps);
	if (!st->heap_slot)
		set_wanted_keys(st, cscan, filter);
	st->recheck_clauses = list_copy_tail(cscan->custom_exprs,
										 st->nkeyexprs + st->nfilter);
	st->exprstates = ExecInitExprList(list_truncate(list_copy(cscan->custom_exprs),
													st->nkeyexprs),
									  &node->ss.ps);
	st->track_pos = (eflags & EXEC_FLAG_BACKWARD) != 0;
	st->is_target = ExecRelationIsTargetRelation(estate, cscan->scan.scanrelid);
	st->keycxt = AllocSetContextCreate(estate->es_query_cxt, "ddb key scan keys",
									   ALLOCSET_SMALL_SIZES);
	initStringInfo(&st->poskey);
	initStringInfo(&st->tmp);

	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;

	/* Relation-level SIREAD lock, as the sequential scan takes. */
	if (estate->es_snapshot && IsMVCCSnapshot(estate->es_snapshot))
		PredicateLockRelation(rel, estate->es_snapshot);
}

/* ------------------------------------------------------------------------
 * Bounds
 * ------------------------------------------------------------------------
 */

static int
compare_ranges(const void *a, const void *b)
{
	const DdbRange *x = (const DdbRange *) a;
	const DdbRange *y = (const DdbRange *) b;

	return ddb_compare_bytes(x->lo, x->lolen, y->lo, y->lolen);
}

static char *
copy_key(StringInfo s, int *len)
{
	char	   *c = palloc(Max(s->len, 1));

	memcpy(c, s->data, s->len);
	*len = s->len;
	return c;
}

/*
 * Sign of a numeric bound that no key can reach: an infinity, or a number
 * too large for the key encoding (1E+32767 and beyond, far past DynamoDB's
 * 1E+126); 0 for other values.  *nan reports NaN, which sorts above all.
 */
static int
numeric_special(Datum value, bool *nan)
{
	Numeric		n = DatumGetNumeric(value);
	static Datum too_large = (Datum) 0;
	Datum		absval;

	*nan = numeric_is_nan(n);
	if (*nan)
		return 0;
	if (!numeric_is_inf(n))
	{
		if (too_large == (Datum) 0)
		{
			MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

			too_large = DirectFunctionCall3(numeric_in, CStringGetDatum("1e32767"),
											ObjectIdGetDatum(InvalidOid),
											Int32GetDatum(-1));
			MemoryContextSwitchTo(old);
		}
		absval = DirectFunctionCall1(numeric_abs, value);
		if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, absval, too_large)) < 0)
			return 0;
	}
	return DatumGetInt32(DirectFunctionCall2(numeric_cmp, value,
											 NumericGetDatum(int64_to_numeric(0))));
}

/*
 * The literal prefix of a LIKE pattern (backslash escapes, as like_escape()
 * normalizes to), up to the first wildcard, in the server encoding.  UTF-8
 * wildcards and backslashes are single ASCII bytes that never occur inside
 * a multibyte character, so a bytewise walk is exact.
 */
static text *
like_prefix(text *pattern)
{
	const char *p = VARDATA_ANY(pattern);
	int			n = VARSIZE_ANY_EXHDR(pattern);
	StringInfoData out;

	initStringInfo(&out);
	for (int i = 0; i < n; i++)
	{
		if (p[i] == '%' || p[i] == '_')
			break;
		if (p[i] == '\\')
		{
			if (++i >= n)
				break;
		}
		appendStringInfoChar(&out, p[i]);
	}
	return cstring_to_text_with_len(out.data, out.len);
}

/*
 * One bound on the first unpinned key column, encoded once and applied to
 * each partition's prefix.
 */
typedef struct EncodedBound
{
	int			kind;
	bool		ignore;			/* says nothing (e.g. sk < +Infinity) */
	char	   *bytes;			/* enc(value), or the raw prefix bytes */
	int			len;
} EncodedBound;

/*
 * Evaluate the key expressions and build the ranges.  Runs in keycxt,
 * which is reset first.
 */
static void
compute_ranges(DdbKeyScanState *st)
{
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	MemoryContext old;
	Datum		values[DDB_MAX_KEY_COLUMNS];
	int			ac = Max(st->array_col, 0);	/* the column that varies by range */
	Datum	   *acvals = NULL;
	bool	   *acnulls = NULL;
	int			nac = 0;
	int			nbounds = list_length(st->bound_kinds);
	EncodedBound *bounds;
	ListCell   *lc;
	int			i;
	bool		empty = false;
	DdbKeyType	bt = st->npinned < st->ki.nkeys ? st->ki.keytype[st->npinned] : 0;

	MemoryContextReset(st->keycxt);
	old = MemoryContextSwitchTo(st->keycxt);
	st->nranges = 0;
	st->ranges = NULL;

	/* pinned columns */
	i = 0;
	foreach(lc, st->exprstates)
	{
		bool		isnull;
		Datum		v;

		if (i >= st->npinned)
			break;
		v = ExecEvalExprSwitchContext((ExprState *) lfirst(lc), econtext, &isnull);
		MemoryContextSwitchTo(st->keycxt);
		if (isnull)
			empty = true;
		else if (i == st->array_col)
		{
			ArrayType  *arr = DatumGetArrayTypePCopy(v);
			int16		typlen;
			bool		typbyval;
			char		typalign;

			get_typlenbyvalalign(ARR_ELEMTYPE(arr), &typlen, &typbyval, &typalign);
			deconstruct_array(arr, ARR_ELEMTYPE(arr), typlen, typbyval, typalign,
							  &acvals, &acnulls, &nac);
		}
		else
		{
			if (st->ki.keytype[i] == DDB_KEY_N)
			{
				bool		nan;

				/* no stored key is NaN, infinite or that large */
				if (numeric_special(v, &nan) != 0 || nan)
					empty = true;
			}
			values[i] = datumCopy(v, false, -1);
		}
		i++;
	}
	if (st->array_col < 0)
	{
		acvals = &values[0];
		nac = 1;
	}

	/* bounds on column npinned */
	bounds = palloc0(sizeof(EncodedBound) * Max(nbounds, 1));
	for (int b = 0; b < nbounds && !empty; b++)
	{
		ExprState  *es = (ExprState *) list_nth(st->exprstates, st->npinned + b);
		EncodedBound *eb = &bounds[b];
		bool		isnull;
		Datum		v;
		StringInfoData buf;

		eb->kind = list_nth_int(st->bound_kinds, b);
		v = ExecEvalExprSwitchContext(es, econtext, &isnull);
		MemoryContextSwitchTo(st->keycxt);
		if (isnull)
		{
			empty = true;		/* a comparison with NULL is never true */
			break;
		}
		initStringInfo(&buf);
		if (eb->kind == DDB_BOUND_LIKE || eb->kind == DDB_BOUND_PREFIX)
		{
			text	   *prefix = eb->kind == DDB_BOUND_LIKE ?
				like_prefix(DatumGetTextPP(v)) : DatumGetTextPP(v);

			/* enc(text) is its UTF-8 bytes (no NULs in text), then 00 01 */
			ddb_encode_key_column(&buf, DDB_KEY_S, PointerGetDatum(prefix));
			buf.len -= 2;
		}
		else
		{
			if (bt == DDB_KEY_N)
			{
				bool		nan;
				int			inf = numeric_special(v, &nan);
				bool		below_all = inf < 0;
				bool		above_all = inf > 0 || nan;	/* NaN sorts above all */

				if (below_all || above_all)
				{
					bool		is_lower = eb->kind == DDB_BOUND_GE || eb->kind == DDB_BOUND_GT;

					/* x > +inf: nothing; x < +inf: no constraint; and so on */
					if (is_lower == above_all)
						empty = true;
					else
						eb->ignore = true;
					continue;
				}
			}
			ddb_encode_key_column(&buf, bt, v);
		}
		eb->bytes = buf.data;
		eb->len = buf.len;
	}

	if (!empty)
	{
		StringInfoData prefix;
		StringInfoData t;

		initStringInfo(&prefix);
		initStringInfo(&t);
		st->ranges = palloc(sizeof(DdbRange) * Max(nac, 1));
		for (int p = 0; p < nac; p++)
		{
			char	   *lo;
			int			lolen;
			char	   *hi = NULL;
			int			hilen = 0;

			if (acnulls && acnulls[p])
				continue;
			values[ac] = acvals[p];
			if (st->ki.keytype[ac] == DDB_KEY_N)
			{
				bool		nan;

				if (numeric_special(values[ac], &nan) != 0 || nan)
					continue;
			}
			resetStringInfo(&prefix);
			ddb_encode_key_prefix(&st->ki, values, st->npinned, &prefix);
			lo = copy_key(&prefix, &lolen);
			if (ddb_key_successor(prefix.data, prefix.len, &t))
				hi = copy_key(&t, &hilen);

			for (int b = 0; b < nbounds; b++)
			{
				EncodedBound *eb = &bounds[b];
				char	   *k;
				int			klen;
				bool		has_succ;
				char	   *s = NULL;
				int			slen = 0;

				if (eb->ignore)
					continue;
				resetStringInfo(&t);
				appendBinaryStringInfo(&t, prefix.data, prefix.len);
				appendBinaryStringInfo(&t, eb->bytes, eb->len);
				k = copy_key(&t, &klen);
				has_succ = ddb_key_successor(k, klen, &t);
				if (has_succ)
					s = copy_key(&t, &slen);

				/* new lower bound: >= k, or > k i.e. >= succ(k) */
				if (eb->kind == DDB_BOUND_GE || eb->kind == DDB_BOUND_LIKE ||
					eb->kind == DDB_BOUND_PREFIX || eb->kind == DDB_BOUND_GT)
				{
					char	   *nl = eb->kind == DDB_BOUND_GT ? s : k;
					int			nllen = eb->kind == DDB_BOUND_GT ? slen : klen;

					if (nl == NULL)
					{
						/* nothing is above an all-0xFF key */
						hi = lo;
						hilen = lolen;
					}
					else if (ddb_compare_bytes(nl, nllen, lo, lolen) > 0)
					{
						lo = nl;
						lolen = nllen;
					}
				}
				/* new upper bound: < k, or <= k i.e. < succ(k) */
				if (eb->kind == DDB_BOUND_LT || eb->kind == DDB_BOUND_LE ||
					eb->kind == DDB_BOUND_LIKE || eb->kind == DDB_BOUND_PREFIX)
				{
					char	   *nh = eb->kind == DDB_BOUND_LT ? k : s;
					int			nhlen = eb->kind == DDB_BOUND_LT ? klen : slen;

					if (nh != NULL &&
						(hi == NULL || ddb_compare_bytes(nh, nhlen, hi, hilen) < 0))
					{
						hi = nh;
						hilen = nhlen;
					}
				}
			}

			if (hi != NULL && ddb_compare_bytes(lo, lolen, hi, hilen) >= 0)
				continue;		/* empty */
			st->ranges[st->nranges].lo = lo;
			st->ranges[st->nranges].lolen = lolen;
			st->ranges[st->nranges].hi = hi;
			st->ranges[st->nranges].hilen = hilen;
			st->nranges++;
		}

		/* several ranges (= ANY): key order, each once */
		if (st->nranges > 1)
		{
			int			n = 1;

			qsort(st->ranges, st->nranges, sizeof(DdbRange), compare_ranges);
			for (int a = 1; a < st->nranges; a++)
				if (ddb_compare_bytes(st->ranges[a].lo, st->ranges[a].lolen,
								 st->ranges[n - 1].lo, st->ranges[n - 1].lolen) != 0)
					st->ranges[n++] = st->ranges[a];
			st->nranges = n;
		}
	}

	MemoryContextSwitchTo(old);
	st->keys_ready = true;
}

/* ------------------------------------------------------------------------
 * Scanning
 * ------------------------------------------------------------------------
 */

/* (Re)start the engine scan on range 'r' in direction 'forward'. */
static void
start_range(DdbKeyScanState *st, const DdbRange *r, bool forward)
{
	if (st->scan == NULL)
	{
		EState	   *estate = st->css.ss.ps.state;
		MemoryContext old = MemoryContextSwitchTo(estate->es_query_cxt);

		/* a virtual slot is filled from the stored versions */
		st->scan = st->heap_slot ?
			ddb_range_begin(st->css.ss.ss_currentRelation,
							estate->es_snapshot, r, forward) :
			ddb_range_begin_stored(st->css.ss.ss_currentRelation,
								   estate->es_snapshot, r, forward);
		ddb_range_want(st->scan, st->rows_wanted);
		MemoryContextSwitchTo(old);
	}
	else
		ddb_range_rescan(st->scan, r, forward);
}

/*
 * Remember the key of the row just read: a cursor's position.  A stored
 * version carries its encoded key; a full tuple's key is encoded again.
 */
static void
save_position(DdbKeyScanState *st, HeapTuple tuple)
{
	resetStringInfo(&st->poskey);
	if (st->heap_slot)
	{
		TupleDesc	desc = RelationGetDescr(st->css.ss.ss_currentRelation);
		Datum		values[DDB_MAX_KEY_COLUMNS];
		bool		isnull[DDB_MAX_KEY_COLUMNS];

		for (int k = 0; k < st->ki.nkeys; k++)
			values[k] = heap_getattr(tuple, st->ki.keyattno[k], desc, &isnull[k]);
		ddb_encode_key(&st->ki, values, isnull, &st->poskey);
	}
	else
	{
		DdbStoredItem *si = (DdbStoredItem *) tuple;

		appendBinaryStringInfo(&st->poskey, si->key, si->keylen);
	}
	st->have_pos = true;
	st->posrange = st->cur;
}

/*
 * Put a stored version into the virtual scan slot: the item column as it
 * is stored (the slot points into the scan's copy of the version, valid
 * until the next ddb_range_next, as a heap scan's slot points into its
 * buffer), the key columns the plan reads decoded from the key, in the
 * per-tuple memory that ExecScan resets before the next row.  No full
 * tuple is formed and nothing else is copied.
 */
static void
store_stored(DdbKeyScanState *st, DdbStoredItem *si, TupleTableSlot *slot)
{
	Relation	rel = st->css.ss.ss_currentRelation;
	TupleDesc	desc = slot->tts_tupleDescriptor;
	Datum		keyvals[DDB_MAX_KEY_COLUMNS];
	bool		keynull[DDB_MAX_KEY_COLUMNS];
	int			a = st->ki.itemattno - 1;
	MemoryContext old;

	ExecClearTuple(slot);
	memset(slot->tts_isnull, true, sizeof(bool) * desc->natts);
	slot->tts_values[a] = ddb_stored_item_column(&st->ki, RelationGetDescr(rel),
												 &si->tuple, &slot->tts_isnull[a]);
	old = MemoryContextSwitchTo(st->css.ss.ps.ps_ExprContext->ecxt_per_tuple_memory);
	ddb_decode_key_some(&st->ki, si->key, si->keylen, st->want_key, keyvals, keynull);
	MemoryContextSwitchTo(old);
	for (int k = 0; k < st->ki.nkeys; k++)
	{
		slot->tts_values[st->ki.keyattno[k] - 1] = keyvals[k];
		slot->tts_isnull[st->ki.keyattno[k] - 1] = keynull[k];
	}
	ExecStoreVirtualTuple(slot);
}

/*
 * Change direction at the current position: re-read range 'posrange' from
 * the last row's key onward in the new direction.
 */
static void
change_direction(DdbKeyScanState *st, bool forward)
{
	DdbRange	r;

	if (!st->track_pos)
		elog(ERROR, "ddb key scan changed direction without a SCROLL cursor");

	if (!st->have_pos)
	{
		/* nothing was read: start over */
		st->started = false;
		return;
	}

	r = st->ranges[st->posrange];
	if (forward)
	{
		/* resume after the last row (or at it, if we had run off the start) */
		if (st->exhausted)
		{
			r.lo = st->poskey.data;
			r.lolen = st->poskey.len;
		}
		else if (ddb_key_successor(st->poskey.data, st->poskey.len, &st->tmp))
		{
			r.lo = st->tmp.data;
			r.lolen = st->tmp.len;
		}
		else
			r.hi = r.lo, r.hilen = r.lolen;		/* empty */
	}
	else
	{
		if (st->exhausted)
		{
			if (ddb_key_successor(st->poskey.data, st->poskey.len, &st->tmp))
			{
				r.hi = st->tmp.data;
				r.hilen = st->tmp.len;
			}
		}
		else
		{
			r.hi = st->poskey.data;
			r.hilen = st->poskey.len;
		}
	}
	st->cur = st->posrange;
	st->scan_forward = forward;
	st->exhausted = false;
	start_range(st, &r, forward);
}

static TupleTableSlot *
ddb_keyscan_next(ScanState *ss)
{
	DdbKeyScanState *st = (DdbKeyScanState *) ss;
	EState	   *estate = ss->ps.state;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;
	bool		forward;

	forward = ScanDirectionIsBackward(estate->es_direction) ? st->backward : !st->backward;

	if (!st->keys_ready)
		compute_ranges(st);

	if (st->started && forward != st->scan_forward)
		change_direction(st, forward);

	if (!st->started)
	{
		st->started = true;
		st->scan_forward = forward;
		st->exhausted = false;
		st->have_pos = false;
		if (st->nranges == 0)
			st->exhausted = true;
		else
		{
			st->cur = forward ? 0 : st->nranges - 1;
			start_range(st, &st->ranges[st->cur], forward);
		}
	}

	for (;;)
	{
		HeapTuple	tuple;

		if (st->exhausted)
			return ExecClearTuple(slot);

		CHECK_FOR_INTERRUPTS();
		tuple = ddb_range_next(st->scan);
		if (tuple != NULL)
		{
			/* valid until the next ddb_range_next: the slot does not own it */
			if (st->heap_slot)
				ExecStoreHeapTuple(tuple, slot, false);
			else
				store_stored(st, (DdbStoredItem *) tuple, slot);
			slot->tts_tid = tuple->t_self;
			slot->tts_tableOid = RelationGetRelid(ss->ss_currentRelation);
			/* the update or delete of this row looks for it there first */
			if (st->is_target)
			{
				OffsetNumber off;
				BlockNumber leaf = ddb_range_leaf(st->scan, &off);

				ddb_version_seen_on(ss->ss_currentRelation, &tuple->t_self, leaf, off);
			}
			if (st->track_pos)
				save_position(st, tuple);
			return slot;
		}

		/* this range is done: the next one in scan order, if any */
		if (forward ? st->cur + 1 >= st->nranges : st->cur == 0)
		{
			st->exhausted = true;
			continue;
		}
		st->cur += forward ? 1 : -1;
		start_range(st, &st->ranges[st->cur], forward);
	}
}

/*
 * EvalPlanQual's recheck of a row the scan did not read: the clauses the
 * range enforces (ExecScan then checks the filter), as IndexRecheck checks
 * an index scan's index quals.  Compiled on first use, in the query's
 * context: the clauses hold no SubPlans (ddb_planner.c's usable_operand).
 */
static bool
ddb_keyscan_recheck(ScanState *ss, TupleTableSlot *slot)
{
	DdbKeyScanState *st = (DdbKeyScanState *) ss;
	ExprContext *econtext = ss->ps.ps_ExprContext;

	if (st->recheck_clauses == NIL)
		return true;
	if (st->recheck == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(ss->ps.state->es_query_cxt);

		st->recheck = ExecInitQual(st->recheck_clauses, &ss->ps);
		MemoryContextSwitchTo(old);
	}
	ResetExprContext(econtext);
	econtext->ecxt_scantuple = slot;
	return ExecQual(st->recheck, econtext);
}

static TupleTableSlot *
ddb_keyscan_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, (ExecScanAccessMtd) ddb_keyscan_next,
					(ExecScanRecheckMtd) ddb_keyscan_recheck);
}

static void
ddb_keyscan_rescan(CustomScanState *node)
{
	DdbKeyScanState *st = (DdbKeyScanState *) node;

	/* parameters may have changed: evaluate the keys again */
	st->keys_ready = false;
	st->started = false;
	st->exhausted = false;
	st->have_pos = false;
	ExecScanReScan(&node->ss);
}

static void
ddb_keyscan_end(CustomScanState *node)
{
	DdbKeyScanState *st = (DdbKeyScanState *) node;

	if (st->scan)
		ddb_range_end(st->scan);
	st->scan = NULL;
}

/* ------------------------------------------------------------------------
 * EXPLAIN
 * ------------------------------------------------------------------------
 */

static const char *
key_colname(TupleDesc desc, const DdbKeyInfo *ki, int k)
{
	return quote_identifier(NameStr(TupleDescAttr(desc, ki->keyattno[k] - 1)->attname));
}

/*
 * EXPLAIN: the partition key value(s), pinned sort keys, the bounds on the
 * first free sort key, the direction when the plan reads backward, and
 * (VERBOSE) the rows the plan will ask for at most when it knows.
 */
static void
ddb_keyscan_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	DdbKeyScanState *st = (DdbKeyScanState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	Relation	rel = node->ss.ss_currentRelation;
	TupleDesc	desc = RelationGetDescr(rel);
	List	   *context;
	StringInfoData buf;
	int			i = 0;
	ListCell   *lc;
	const DdbKeyInfo *ki = ddb_get_keyinfo(rel);

	List	   *qual = filter_clauses(st, cscan);

	context = set_deparse_context_plan(es->deparse_cxt, &cscan->scan.plan, ancestors);
	initStringInfo(&buf);

	/*
	 * The qual, where EXPLAIN shows a scan's plan.qual (the planner keeps it
	 * in custom_exprs instead: see ddb_planner.c), with explain.c's
	 * show_scan_qual and show_instrumentation_count's rules.
	 */
	if (qual != NIL)
	{
		ExplainPropertyText("Filter",
							deparse_expression((Node *) make_ands_explicit(qual),
											   context, es->verbose, false),
							es);
		if (es->analyze && node->ss.ps.instrument)
		{
			double		nfiltered = node->ss.ps.instrument->nfiltered1;
			double		nloops = node->ss.ps.instrument->nloops;

			if (nfiltered > 0 || es->format != EXPLAIN_FORMAT_TEXT)
				ExplainPropertyFloat("Rows Removed by Filter", NULL,
									 nloops > 0 ? nfiltered / nloops : 0.0, 0, es);
		}
	}

	foreach(lc, cscan->custom_exprs)
	{
		char	   *val;

		if (i >= st->nkeyexprs)
			break;
		val = deparse_expression(lfirst(lc), context, es->verbose, false);

		if (i == 0)
		{
			appendStringInfo(&buf, st->array_col == 0 ? "%s = ANY (%s)" : "%s = %s",
							 key_colname(desc, ki, 0), val);
			ExplainPropertyText("Partition Key", buf.data, es);
			resetStringInfo(&buf);
		}
		else if (i < st->npinned)
		{
			if (buf.len > 0)
				appendStringInfoString(&buf, " AND ");
			appendStringInfo(&buf, st->array_col == i ? "%s = ANY (%s)" : "%s = %s",
							 key_colname(desc, ki, i), val);
			if (i == st->npinned - 1)
			{
				ExplainPropertyText("Sort Key", buf.data, es);
				resetStringInfo(&buf);
			}
		}
		else
		{
			int			kind = list_nth_int(st->bound_kinds, i - st->npinned);
			const char *col = key_colname(desc, ki, st->npinned);

			if (buf.len > 0)
				appendStringInfoString(&buf, " AND ");
			switch (kind)
			{
				case DDB_BOUND_LT:
					appendStringInfo(&buf, "%s < %s", col, val);
					break;
				case DDB_BOUND_LE:
					appendStringInfo(&buf, "%s <= %s", col, val);
					break;
				case DDB_BOUND_GE:
					appendStringInfo(&buf, "%s >= %s", col, val);
					break;
				case DDB_BOUND_GT:
					appendStringInfo(&buf, "%s > %s", col, val);
					break;
				case DDB_BOUND_LIKE:
					appendStringInfo(&buf, "%s LIKE %s", col, val);
					break;
				case DDB_BOUND_PREFIX:
					appendStringInfo(&buf, "starts_with(%s, %s)", col, val);
					break;
			}
		}
		i++;
	}
	if (buf.len > 0)
		ExplainPropertyText("Sort Key Range", buf.data, es);
	if (st->backward)
		ExplainPropertyText("Scan Direction", "Backward", es);
	if (es->verbose && st->rows_wanted > 0)
		ExplainPropertyInteger("Rows Wanted", NULL, st->rows_wanted, es);
}
