/*-------------------------------------------------------------------------
 *
 * ddb_planner.c
 *	  Plain SQL on a ddb table uses the tree: the planner side of the
 *	  "DdbKeyScan" CustomScan.
 *
 * A set_rel_pathlist_hook looks at the restriction clauses of every base
 * relation that is a ddb table.  When they pin the partition key with "="
 * (to a constant, a Param, or, for a parameterized path, an expression over
 * other relations' Vars) it adds a CustomPath that reads only that key range
 * of the tree:
 *
 *	- further sort keys pinned with "=" narrow the range (all keys pinned: a
 *	  point lookup); a parameterized path also takes "=" join clauses on
 *	  sort keys over the same outer relations, so a join on the whole key
 *	  (or WHERE (pk, sk) IN (SELECT ...)) probes one item per outer row;
 *	  with the partition key pinned by a constant, a sort key joined "="
 *	  to other relations makes a parameterized path of its own;
 *	- the first sort key that is not pinned may be bounded with < <= > >=
 *	  (BETWEEN arrives as two of those), LIKE 'prefix%' or starts_with();
 *	- the path declares pathkeys on the remaining sort keys, ascending for a
 *	  forward scan and descending for a backward one, so ORDER BY sk [DESC]
 *	  LIMIT n needs no Sort;
 *	- "pk = ANY(array)" / "pk IN (...)" becomes a multi-range scan, one range
 *	  per distinct element, read in key order; it has no pathkeys because
 *	  the partitions come out in hash order.  Likewise "sk = ANY(array)"
 *	  with the partition key pinned "=": one point (or, with more sort keys
 *	  pinned after it, narrower) range per distinct element, read in key
 *	  order.  One key column per scan is an array: the first that could be
 *	  (a pk = ANY wins over an sk = ANY, which then stays a filter).
 *
 * The key clauses choose the range.  The "=" clauses that pin key columns
 * (not = ANY) hold for exactly the rows in it -- numerically equal
 * values encode identically, text compares bytewise under a deterministic
 * collation, and a value no stored key can have gives an empty range -- so,
 * like an index scan's index quals, they are not checked row by row: they
 * are the scan's recheck, which EvalPlanQual runs on the version it
 * rechecks (whose key cannot have changed, but whose outer-row parameters
 * can).  Every other restriction clause (bounds, LIKE, = ANY, the rest)
 * is the scan's filter, so results are exactly those of a sequential scan.
 * Filter and recheck travel in the plan's custom_exprs after the key
 * values, not in plan.qual: PostgreSQL 15 would compile plan.qual for a
 * virtual scan slot before BeginCustomScan, which may replace that slot
 * (ddb_customscan.c) and must then compile the qual again -- a second
 * compile of every clause on every execution, a seventh of a plain
 * UPDATE's instructions.  EXPLAIN shows the filter as the Filter it is and the
 * exact clauses as the Partition Key and Sort Key they are.
 *
 * Byte order is ddb's order.  Text comparisons use the clause's collation,
 * so < <= > >= on text bound the range only under a "C" collation (and a
 * UTF-8 database, as keys are stored in UTF-8); other collations still get a
 * partition range and the operators run as a filter.  Sort-key pathkeys on
 * text are declared in the "C" collation: ORDER BY "SK" COLLATE "C" (or a
 * column declared COLLATE "C") needs no Sort, a plain ORDER BY under another
 * collation is sorted, which is what that collation asks for.
 *
 * Executor side: ddb_customscan.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_collation_d.h"
#include "catalog/pg_opfamily_d.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type_d.h"
#include "utils/array.h"
#include "commands/defrem.h"
#include "mb/pg_wchar.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "access/nbtree.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/pg_locale.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/spccache.h"
#include "utils/syscache.h"

#include "ddb.h"

/* ddb.enable_key_scan */
bool		ddb_enable_key_scan = true;

static set_rel_pathlist_hook_type prev_set_rel_pathlist_hook = NULL;

/* Internal pages hold many short separator keys; a rough fan-out. */
#define DDB_EST_FANOUT	100

/*
 * What the restriction clauses say about the key columns of one table.
 */
typedef struct DdbKeyClauses
{
	int			npinned;		/* key columns 0..npinned-1 pinned by "=" */
	Expr	   *pin[DDB_MAX_KEY_COLUMNS];	/* the value each is pinned to */
	RestrictInfo *pin_rinfo[DDB_MAX_KEY_COLUMNS];
	int			array_col;		/* pin[array_col] is an array (= ANY), or -1 */
	List	   *bound_kinds;	/* DdbBoundKind of each bound on column npinned */
	List	   *bound_exprs;
	List	   *bound_rinfos;
} DdbKeyClauses;

/* One table's key columns as the planner sees them. */
typedef struct DdbPlanKeys
{
	Index		relid;
	DdbKeyInfo	ki;
	Oid			typid[DDB_MAX_KEY_COLUMNS];
	Oid			collid[DDB_MAX_KEY_COLUMNS];
	Oid			opfamily[DDB_MAX_KEY_COLUMNS];	/* default btree family */
	bool		bytewise_text;	/* text order = UTF-8 byte order possible */
} DdbPlanKeys;

static Plan *ddb_plan_keyscan_path(PlannerInfo *root, RelOptInfo *rel,
								   struct CustomPath *best_path, List *tlist,
								   List *clauses, List *custom_plans);

static const CustomPathMethods ddb_keyscan_path_methods = {
	.CustomName = "DdbKeyScan",
	.PlanCustomPath = ddb_plan_keyscan_path,
};

static const CustomScanMethods ddb_keyscan_scan_methods = {
	.CustomName = "DdbKeyScan",
	.CreateCustomScanState = ddb_keyscan_create_state,
};

/* ------------------------------------------------------------------------
 * Matching clauses to key columns
 * ------------------------------------------------------------------------
 */

static DdbKeyType
type_key(Oid typid)
{
	switch (typid)
	{
		case TEXTOID:
			return DDB_KEY_S;
		case NUMERICOID:
			return DDB_KEY_N;
		case BYTEAOID:
			return DDB_KEY_B;
	}
	return 0;
}

static Oid
key_typid(DdbKeyType type)
{
	switch (type)
	{
		case DDB_KEY_S:
			return TEXTOID;
		case DDB_KEY_N:
			return NUMERICOID;
		case DDB_KEY_B:
			return BYTEAOID;
	}
	return InvalidOid;
}

/* Which key column (0-based) is this expression, or -1. */
static int
key_column_of(DdbPlanKeys *pk, Node *node)
{
	Var		   *var;

	if (node == NULL || !IsA(node, Var))
		return -1;
	var = (Var *) node;
	if (var->varno != pk->relid || var->varlevelsup != 0)
		return -1;
	for (int k = 0; k < pk->ki.nkeys; k++)
		if (var->varattno == pk->ki.keyattno[k])
			return var->vartype == pk->typid[k] ? k : -1;
	return -1;
}

/*
 * Can "other" be evaluated before the scan starts (or at each rescan)?  It
 * must not read this table, change between rows or run a subquery per row.
 */
static bool
usable_operand(Node *other, Relids other_relids, Index relid)
{
	if (bms_is_member(relid, other_relids))
		return false;
	if (contain_volatile_functions(other))
		return false;
	if (contain_subplans(other))
		return false;
	return true;
}

/* Does this collation compare text as UTF-8 bytes (what ddb stores)? */
static bool
collation_is_bytewise(DdbPlanKeys *pk, Oid collid)
{
	return pk->bytewise_text && OidIsValid(collid) && lc_collate_is_c(collid);
}

/*
 * Match one clause against the key columns.  On success set *col, *kind
 * (BTEqualStrategyNumber, a DdbBoundKind, or DDB_BOUND_ANY for key = ANY)
 * and *value (the expression the column is compared with).  Join clauses
 * are matched too; the caller decides which relids the value may use.
 */
#define DDB_BOUND_ANY	100

static bool
match_key_clause(DdbPlanKeys *pk, RestrictInfo *rinfo, int *col, int *kind,
				 Expr **value, Relids *value_relids)
{
	Node	   *clause = (Node *) rinfo->clause;

	if (rinfo->pseudoconstant)
		return false;

	if (IsA(clause, OpExpr) && list_length(((OpExpr *) clause)->args) == 2)
	{
		OpExpr	   *op = (OpExpr *) clause;
		Node	   *left = linitial(op->args);
		Node	   *right = lsecond(op->args);
		int			k;
		bool		commuted = false;
		Node	   *other;
		Relids		other_relids;
		int			strategy;
		Oid			lefttype,
					righttype;

		if ((k = key_column_of(pk, left)) >= 0)
		{
			other = right;
			other_relids = rinfo->right_relids;
		}
		else if ((k = key_column_of(pk, right)) >= 0)
		{
			other = left;
			other_relids = rinfo->left_relids;
			commuted = true;
		}
		else
			return false;

		if (!usable_operand(other, other_relids, pk->relid))
			return false;

		/* LIKE 'prefix%' and ^@ (starts_with) on text, column on the left */
		if (!commuted && pk->typid[k] == TEXTOID &&
			(op->opno == OID_TEXT_LIKE_OP || get_opcode(op->opno) == F_STARTS_WITH))
		{
			if (!pk->bytewise_text || !OidIsValid(op->inputcollid) ||
				!get_collation_isdeterministic(op->inputcollid))
				return false;
			*col = k;
			*kind = op->opno == OID_TEXT_LIKE_OP ? DDB_BOUND_LIKE : DDB_BOUND_PREFIX;
			*value = (Expr *) other;
			*value_relids = other_relids;
			return true;
		}

		op_input_types(op->opno, &lefttype, &righttype);
		if (lefttype != pk->typid[k] || righttype != pk->typid[k])
			return false;
		strategy = get_op_opfamily_strategy(op->opno, pk->opfamily[k]);
		if (strategy == 0)
			return false;
		if (strategy == BTEqualStrategyNumber)
		{
			/* bytewise equality unless a nondeterministic collation */
			if (pk->typid[k] == TEXTOID &&
				(!OidIsValid(op->inputcollid) ||
				 !get_collation_isdeterministic(op->inputcollid)))
				return false;
		}
		else
		{
			if (pk->typid[k] == TEXTOID && !collation_is_bytewise(pk, op->inputcollid))
				return false;
			if (commuted)
				strategy = BTCommuteStrategyNumber(strategy);
		}
		*col = k;
		*kind = strategy;
		*value = (Expr *) other;
		*value_relids = other_relids;
		return true;
	}

	/* starts_with(sk, prefix) */
	if (IsA(clause, FuncExpr) && ((FuncExpr *) clause)->funcid == F_STARTS_WITH &&
		list_length(((FuncExpr *) clause)->args) == 2)
	{
		FuncExpr   *fe = (FuncExpr *) clause;
		int			k = key_column_of(pk, linitial(fe->args));
		Node	   *other = lsecond(fe->args);
		Relids		other_relids;

		if (k < 0 || pk->typid[k] != TEXTOID || !pk->bytewise_text)
			return false;
		if (!OidIsValid(fe->inputcollid) || !get_collation_isdeterministic(fe->inputcollid))
			return false;
		other_relids = pull_varnos(NULL, other);
		if (!usable_operand(other, other_relids, pk->relid))
			return false;
		*col = k;
		*kind = DDB_BOUND_PREFIX;
		*value = (Expr *) other;
		*value_relids = other_relids;
		return true;
	}

	/* key = ANY (array): one range per element */
	if (IsA(clause, ScalarArrayOpExpr))
	{
		ScalarArrayOpExpr *sa = (ScalarArrayOpExpr *) clause;
		Node	   *other;
		Relids		other_relids;
		Oid			lefttype,
					righttype;
		int			k;

		if (!sa->useOr || list_length(sa->args) != 2 ||
			(k = key_column_of(pk, linitial(sa->args))) < 0)
			return false;
		other = lsecond(sa->args);
		op_input_types(sa->opno, &lefttype, &righttype);
		if (lefttype != pk->typid[k] || righttype != pk->typid[k] ||
			get_op_opfamily_strategy(sa->opno, pk->opfamily[k]) != BTEqualStrategyNumber)
			return false;
		if (pk->typid[k] == TEXTOID &&
			(!OidIsValid(sa->inputcollid) || !get_collation_isdeterministic(sa->inputcollid)))
			return false;
		if (exprType(other) != get_array_type(pk->typid[k]))
			return false;
		other_relids = pull_varnos(NULL, other);
		if (!usable_operand(other, other_relids, pk->relid))
			return false;
		*col = k;
		*kind = DDB_BOUND_ANY;
		*value = (Expr *) other;
		*value_relids = other_relids;
		return true;
	}

	return false;
}

/*
 * Sort restriction clauses into pinned columns and bounds.  'pk_join' (or
 * NULL) pins the partition key from a join clause, and 'sk_joins' are join
 * clauses over the same outer relations that may pin sort keys "=" (a
 * probe by the whole key: WHERE (pk, sk) IN (SELECT ...), a join on both
 * key columns).  False when the partition key is not pinned.
 */
static bool
analyze_key_clauses(DdbPlanKeys *pk, List *restrictinfo, RestrictInfo *pk_join,
					Expr *pk_join_value, List *sk_joins, DdbKeyClauses *kc)
{
	Expr	   *eq[DDB_MAX_KEY_COLUMNS] = {0};
	RestrictInfo *eq_rinfo[DDB_MAX_KEY_COLUMNS] = {0};
	Expr	   *any_value[DDB_MAX_KEY_COLUMNS] = {0};
	RestrictInfo *any_rinfo[DDB_MAX_KEY_COLUMNS] = {0};
	ListCell   *lc;

	memset(kc, 0, sizeof(*kc));
	kc->array_col = -1;

	if (pk_join)
	{
		eq[0] = pk_join_value;
		eq_rinfo[0] = pk_join;
	}

	foreach(lc, restrictinfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		int			col,
					kind;
		Expr	   *value;
		Relids		value_relids;

		if (!match_key_clause(pk, rinfo, &col, &kind, &value, &value_relids))
			continue;
		if (!bms_is_empty(value_relids))
			continue;			/* a join clause: not for this path */
		if (kind == BTEqualStrategyNumber && eq[col] == NULL)
		{
			eq[col] = value;
			eq_rinfo[col] = rinfo;
		}
		else if (kind == DDB_BOUND_ANY && any_value[col] == NULL)
		{
			any_value[col] = value;
			any_rinfo[col] = rinfo;
		}
	}

	/* sort keys pinned by join clauses over the path's outer relations */
	foreach(lc, sk_joins)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		int			col,
					kind;
		Expr	   *value;
		Relids		value_relids;

		if (match_key_clause(pk, rinfo, &col, &kind, &value, &value_relids) &&
			col > 0 && kind == BTEqualStrategyNumber && eq[col] == NULL)
		{
			eq[col] = value;
			eq_rinfo[col] = rinfo;
		}
	}

	if (eq[0] == NULL && any_value[0] == NULL)
		return false;

	/* columns pinned by "=", or by "= ANY" for the first that can be */
	while (kc->npinned < pk->ki.nkeys)
	{
		int			k = kc->npinned;

		if (eq[k] != NULL)
		{
			kc->pin[k] = eq[k];
			kc->pin_rinfo[k] = eq_rinfo[k];
		}
		else if (any_value[k] != NULL && kc->array_col < 0)
		{
			kc->pin[k] = any_value[k];
			kc->pin_rinfo[k] = any_rinfo[k];
			kc->array_col = k;
		}
		else
			break;
		kc->npinned++;
	}

	/* Bounds on the first sort key that is not pinned. */
	if (kc->npinned < pk->ki.nkeys)
	{
		foreach(lc, restrictinfo)
		{
			RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
			int			col,
						kind;
			Expr	   *value;
			Relids		value_relids;

			if (!match_key_clause(pk, rinfo, &col, &kind, &value, &value_relids))
				continue;
			if (col != kc->npinned || !bms_is_empty(value_relids) ||
				kind == BTEqualStrategyNumber || kind == DDB_BOUND_ANY)
				continue;
			kc->bound_kinds = lappend_int(kc->bound_kinds, kind);
			kc->bound_exprs = lappend(kc->bound_exprs, value);
			kc->bound_rinfos = lappend(kc->bound_rinfos, rinfo);
		}
	}
	return true;
}

/* ------------------------------------------------------------------------
 * Paths
 * ------------------------------------------------------------------------
 */

/* Key Var of column k as the sort expression of its pathkey. */
static Expr *
key_sort_expr(DdbPlanKeys *pk, int k)
{
	Expr	   *var = (Expr *) makeVar(pk->relid, pk->ki.keyattno[k], pk->typid[k],
									   -1, pk->collid[k], 0);

	/* ddb's text order is the "C" collation's (or the column's, if bytewise) */
	if (pk->typid[k] == TEXTOID && !collation_is_bytewise(pk, pk->collid[k]))
		var = (Expr *) makeRelabelType(var, TEXTOID, -1, C_COLLATION_OID,
									   COERCE_IMPLICIT_CAST);
	return var;
}

/*
 * Pathkeys of a scan of the key range: the sort keys after the pinned ones,
 * ascending (forward) or descending (backward), as far as the query has
 * use for them.
 */
static List *
keyscan_pathkeys(PlannerInfo *root, RelOptInfo *rel, DdbPlanKeys *pk,
				 int firstcol, bool backward)
{
	List	   *pathkeys = NIL;

	for (int k = firstcol; k < pk->ki.nkeys; k++)
	{
		Oid			opno;
		List	   *one;

		if (pk->typid[k] == TEXTOID && !pk->bytewise_text)
			break;
		opno = get_opfamily_member(pk->opfamily[k], pk->typid[k], pk->typid[k],
								   backward ? BTGreaterStrategyNumber : BTLessStrategyNumber);
		if (!OidIsValid(opno))
			break;
		one = build_expression_pathkey(root, key_sort_expr(pk, k), NULL, opno,
									   rel->relids, false);
		if (one == NIL)
			break;
		pathkeys = list_concat(pathkeys, one);
	}
	return truncate_useless_pathkeys(root, rel, pathkeys);
}

/*
 * Cost of reading the key range.  A seq scan reads rel->pages pages and
 * every tuple; the key scan reads the internal pages of one descent per
 * range, then the leaves holding the range, and only the tuples in it.
 * Pages are charged like the seq scan's (seq_page_cost), so the key scan
 * is cheaper exactly when it reads fewer pages or fewer tuples.
 */
static void
cost_keyscan(PlannerInfo *root, RelOptInfo *rel, Path *path, List *keyrinfos,
			 double nranges)
{
	double		spc_random_page_cost,
				spc_seq_page_cost;
	double		pages = Max(rel->pages, 1);
	double		frac;
	double		height = 1;
	double		leaf_pages;
	double		tuples_read;
	QualCost	qcost;
	List	   *quals;

	get_tablespace_page_costs(rel->reltablespace, &spc_random_page_cost,
							  &spc_seq_page_cost);

	for (double p = pages; p > 1; p = ceil(p / DDB_EST_FANOUT))
		height++;

	frac = clauselist_selectivity(root, keyrinfos, rel->relid, JOIN_INNER, NULL);
	leaf_pages = Max(nranges, ceil(frac * pages));
	tuples_read = clamp_row_est(frac * Max(rel->tuples, 1));

	quals = rel->baserestrictinfo;
	if (path->param_info)
		quals = list_concat_copy(quals, path->param_info->ppi_clauses);
	cost_qual_eval(&qcost, quals, root);

	path->rows = path->param_info ? path->param_info->ppi_rows : rel->rows;
	path->startup_cost = qcost.startup + rel->reltarget->cost.startup;
	path->total_cost = path->startup_cost +
		((height - 1) * nranges + leaf_pages) * spc_seq_page_cost +
		tuples_read * (cpu_tuple_cost + qcost.per_tuple) +
		path->rows * rel->reltarget->cost.per_tuple;
}

static void
add_keyscan_path(PlannerInfo *root, RelOptInfo *rel, DdbPlanKeys *pk,
				 DdbKeyClauses *kc, Relids required_outer, bool backward)
{
	CustomPath *cp = makeNode(CustomPath);
	List	   *keyrinfos = NIL;
	List	   *exprs = NIL;
	List	   *exact = NIL;
	double		nranges = 1;

	cp->path.pathtype = T_CustomScan;
	cp->path.parent = rel;
	cp->path.pathtarget = rel->reltarget;
	cp->path.param_info = get_baserel_parampathinfo(root, rel, required_outer);
	cp->path.parallel_aware = false;
	/* as safe as the seq scan (no partial paths: no parallel workers) */
	cp->path.parallel_safe = rel->consider_parallel;
	cp->path.parallel_workers = 0;
	cp->flags = CUSTOMPATH_SUPPORT_BACKWARD_SCAN | CUSTOMPATH_SUPPORT_PROJECTION;
	cp->methods = &ddb_keyscan_path_methods;

	for (int k = 0; k < kc->npinned; k++)
	{
		keyrinfos = lappend(keyrinfos, kc->pin_rinfo[k]);
		exprs = lappend(exprs, kc->pin[k]);
	}
	keyrinfos = list_concat(keyrinfos, kc->bound_rinfos);
	exprs = list_concat(exprs, kc->bound_exprs);

	if (kc->array_col >= 0)
	{
		Node	   *arr = (Node *) kc->pin[kc->array_col];

		nranges = IsA(arr, Const) && !((Const *) arr)->constisnull ?
			ArrayGetNItems(ARR_NDIM(DatumGetArrayTypeP(((Const *) arr)->constvalue)),
						   ARR_DIMS(DatumGetArrayTypeP(((Const *) arr)->constvalue))) :
			IsA(arr, ArrayExpr) ? list_length(((ArrayExpr *) arr)->elements) : 10;
		nranges = Max(nranges, 1);
	}
	else if (kc->npinned < pk->ki.nkeys)
		cp->path.pathkeys = keyscan_pathkeys(root, rel, pk, kc->npinned, backward);

	cost_keyscan(root, rel, &cp->path, keyrinfos, nranges);

	/*
	 * The "=" clauses that pin key columns hold for exactly the rows of the
	 * range (equal values encode identically, and a value no key can have
	 * gives an empty range), so the scan need not check them on each row:
	 * they become the recheck (see the header).  A column pinned = ANY
	 * stays a filter.
	 */
	for (int k = 0; k < kc->npinned; k++)
		if (k != kc->array_col)
			exact = lappend(exact, kc->pin_rinfo[k]);

	/*
	 * custom_private: npinned, backward, array_col, bound kinds, exprs, the
	 * exact clauses, then the bound clauses (for keyscan_rows_wanted)
	 */
	cp->custom_private = list_make5(makeInteger(kc->npinned),
									makeInteger(backward ? 1 : 0),
									makeInteger(kc->array_col),
									list_copy(kc->bound_kinds),
									exprs);
	cp->custom_private = lappend(cp->custom_private, exact);
	cp->custom_private = lappend(cp->custom_private, list_copy(kc->bound_rinfos));
	add_path(rel, &cp->path);
}

/*
 * The forward path, and a backward one when the query wants the reverse
 * order (ORDER BY sk DESC, a merge join...).
 */
static void
add_keyscan_paths(PlannerInfo *root, RelOptInfo *rel, DdbPlanKeys *pk,
				  DdbKeyClauses *kc, Relids required_outer)
{
	add_keyscan_path(root, rel, pk, kc, required_outer, false);
	if (kc->array_col < 0 && kc->npinned < pk->ki.nkeys &&
		keyscan_pathkeys(root, rel, pk, kc->npinned, true) != NIL)
		add_keyscan_path(root, rel, pk, kc, required_outer, true);
}

typedef struct EcKeyColumn
{
	DdbPlanKeys *pk;
	int			col;
} EcKeyColumn;

/* generate_implied_equalities_for_column callback: is em key column col? */
static bool
ec_matches_key_column(PlannerInfo *root, RelOptInfo *rel,
					  EquivalenceClass *ec, EquivalenceMember *em, void *arg)
{
	DdbPlanKeys *pk = ((EcKeyColumn *) arg)->pk;
	int			col = ((EcKeyColumn *) arg)->col;

	if (!list_member_oid(ec->ec_opfamilies, pk->opfamily[col]))
		return false;
	if (pk->typid[col] == TEXTOID &&
		(!OidIsValid(ec->ec_collation) || !get_collation_isdeterministic(ec->ec_collation)))
		return false;
	return key_column_of(pk, (Node *) em->em_expr) == col;
}

/* The outer relations a join clause on rel needs. */
static Relids
join_clause_outer(RelOptInfo *rel, RestrictInfo *rinfo)
{
	return bms_union(bms_difference(rinfo->clause_relids, rel->relids),
					 rel->lateral_relids);
}

/*
 * Parameterized paths: a key column equals an expression over other
 * relations, so a nested loop can probe the tree once per outer row.  When
 * the restriction clauses leave the partition key unpinned ('base' NULL),
 * the partition key's join clauses drive the probes; when they pin it (a
 * constant partition, 'base' what they pin), a join clause on a sort key
 * they leave unpinned does: WHERE "PK" = 'x' AND "SK" = other.sk probes one
 * item per outer row instead of filtering the partition.
 */
static void
add_parameterized_paths(PlannerInfo *root, RelOptInfo *rel, DdbPlanKeys *pk,
						const DdbKeyClauses *base)
{
	List	   *candidates = NIL;
	List	   *done = NIL;
	ListCell   *lc;

	foreach(lc, rel->joininfo)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);

		if (join_clause_is_movable_to(rinfo, rel))
			candidates = lappend(candidates, rinfo);
	}
	for (int k = 0; k < pk->ki.nkeys; k++)
	{
		EcKeyColumn arg = {pk, k};

		candidates = list_concat(candidates,
								 generate_implied_equalities_for_column(root, rel,
																		ec_matches_key_column,
																		&arg,
																		rel->lateral_referencers));
	}

	foreach(lc, candidates)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		int			col,
					kind;
		Expr	   *value;
		Relids		value_relids;
		Relids		required_outer;
		DdbKeyClauses kc;
		List	   *sk_joins = NIL;
		ListCell   *lc2;
		bool		seen = false;

		if (!match_key_clause(pk, rinfo, &col, &kind, &value, &value_relids))
			continue;
		if (kind != BTEqualStrategyNumber || bms_is_empty(value_relids))
			continue;
		if (base == NULL ? col != 0 : col < base->npinned)
			continue;

		required_outer = join_clause_outer(rel, rinfo);
		if (bms_is_empty(required_outer) || bms_overlap(required_outer, rel->relids))
			continue;
		foreach(lc2, done)
			if (bms_equal((Relids) lfirst(lc2), required_outer))
				seen = true;
		if (seen)
			continue;
		done = lappend(done, required_outer);

		foreach(lc2, candidates)
		{
			RestrictInfo *other = lfirst_node(RestrictInfo, lc2);

			if ((other != rinfo || base != NULL) &&
				bms_is_subset(join_clause_outer(rel, other), required_outer))
				sk_joins = lappend(sk_joins, other);
		}
		if (base == NULL ?
			analyze_key_clauses(pk, rel->baserestrictinfo, rinfo, value, sk_joins, &kc) :
			(analyze_key_clauses(pk, rel->baserestrictinfo, NULL, NULL, sk_joins, &kc) &&
			 kc.npinned > base->npinned))
			add_keyscan_paths(root, rel, pk, &kc, required_outer);
	}
}

/* ------------------------------------------------------------------------
 * The hook
 * ------------------------------------------------------------------------
 */

/*
 * The default btree operator family of each key type (text, numeric,
 * bytea), looked up once per backend: GetDefaultOpClass has no syscache
 * and scans pg_opclass's btree entries, 13 buffer hits and about 20,000
 * instructions a key column on every plan of a statement on a ddb table.
 * Any change to pg_opclass (CREATE or DROP OPERATOR CLASS, which is how a
 * type's default can change) forgets them.
 */
static struct
{
	bool		valid;
	Oid			opfamily;
}			key_opfamilies[3];
static bool key_opfamilies_callback = false;
static uint64 key_opfamilies_forgotten = 0;

static void
forget_key_opfamilies(Datum arg, int cacheid, uint32 hashvalue)
{
	memset(key_opfamilies, 0, sizeof(key_opfamilies));
	key_opfamilies_forgotten++;
}

static Oid
key_opfamily(DdbKeyType type)
{
	int			i = type == DDB_KEY_S ? 0 : type == DDB_KEY_N ? 1 : 2;
	uint64		forgotten = key_opfamilies_forgotten;
	Oid			opclass;
	Oid			opfamily;

	if (!key_opfamilies_callback)
	{
		CacheRegisterSyscacheCallback(CLAOID, forget_key_opfamilies, (Datum) 0);
		key_opfamilies_callback = true;
	}
	if (key_opfamilies[i].valid)
		return key_opfamilies[i].opfamily;
	opclass = GetDefaultOpClass(key_typid(type), BTREE_AM_OID);
	opfamily = OidIsValid(opclass) ? get_opclass_family(opclass) : InvalidOid;
	/* an invalidation during the lookup leaves it unknown: asked again */
	if (forgotten == key_opfamilies_forgotten)
	{
		key_opfamilies[i].opfamily = opfamily;
		key_opfamilies[i].valid = true;
	}
	return opfamily;
}

static bool
load_plan_keys(RangeTblEntry *rte, Index rti, DdbPlanKeys *pk)
{
	Relation	r = RelationIdGetRelation(rte->relid);
	bool		ok = false;

	if (!RelationIsValid(r))
		return false;
	if (ddb_is_ddb_relation(r))
	{
		TupleDesc	desc = RelationGetDescr(r);

		memset(pk, 0, sizeof(*pk));
		pk->relid = rti;
		pk->ki = *ddb_get_keyinfo(r);
		pk->bytewise_text = GetDatabaseEncoding() == PG_UTF8;
		ok = true;
		for (int k = 0; k < pk->ki.nkeys; k++)
		{
			Form_pg_attribute att = TupleDescAttr(desc, pk->ki.keyattno[k] - 1);

			pk->typid[k] = key_typid(pk->ki.keytype[k]);
			pk->collid[k] = att->attcollation;
			pk->opfamily[k] = key_opfamily(pk->ki.keytype[k]);
			if (att->atttypid != pk->typid[k] || type_key(att->atttypid) == 0 ||
				!OidIsValid(pk->opfamily[k]))
				ok = false;
		}
	}
	RelationClose(r);
	return ok;
}

static void
ddb_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti,
					 RangeTblEntry *rte)
{
	DdbPlanKeys pk;
	DdbKeyClauses kc;

	if (prev_set_rel_pathlist_hook)
		prev_set_rel_pathlist_hook(root, rel, rti, rte);

	if (!ddb_enable_key_scan)
		return;
	if (rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_RELATION ||
		rte->inh || rte->tablesample != NULL)
		return;
	if (rel->reloptkind != RELOPT_BASEREL && rel->reloptkind != RELOPT_OTHER_MEMBER_REL)
		return;
	if (!load_plan_keys(rte, rti, &pk))
		return;

	if (analyze_key_clauses(&pk, rel->baserestrictinfo, NULL, NULL, NIL, &kc))
	{
		add_keyscan_paths(root, rel, &pk, &kc, rel->lateral_relids);
		if (kc.npinned < pk.ki.nkeys)
			add_parameterized_paths(root, rel, &pk, &kc);
	}
	else
		add_parameterized_paths(root, rel, &pk, NULL);
}

/* ------------------------------------------------------------------------
 * Plan
 * ------------------------------------------------------------------------
 */

/* Are a and b the same condition: equal, or the same binary operator commuted? */
static bool
same_condition(Expr *a, Expr *b)
{
	OpExpr	   *oa,
			   *ob;

	if (equal(a, b))
		return true;
	if (!IsA(a, OpExpr) || !IsA(b, OpExpr))
		return false;
	oa = (OpExpr *) a;
	ob = (OpExpr *) b;
	return list_length(oa->args) == 2 && list_length(ob->args) == 2 &&
		oa->inputcollid == ob->inputcollid &&
		oa->opno == get_commutator(ob->opno) &&
		equal(linitial(oa->args), lsecond(ob->args)) &&
		equal(lsecond(oa->args), linitial(ob->args));
}

/*
 * The rows a key scan will be asked for, at most, or 0 when that is not
 * known: the query's LIMIT (plus OFFSET) when the scan is its only
 * relation, its rows come in the order the query wants (no Sort between
 * it and the LIMIT) and none is filtered but by the sort key's bounds,
 * which reject a row of the range only in rare cases (LIKE 'a_c%'
 * read as the range of 'a').  The planner's limit_tuples is -1 under
 * grouping, aggregates, DISTINCT, window functions and set-returning
 * functions.  It is a hint to the engine (ddb_range_want): a newest-first
 * LIMIT 1 copies one row of the leaf instead of all.  Should more be
 * asked for after all (FOR UPDATE SKIP LOCKED passing a row by, WITH
 * TIES, a bound rejecting a row), the scan goes on, at the cost of a
 * descent.  Past a few hundred rows the whole leaves a scan reads are no
 * more than it needs, so no hint is given.
 */
static int
keyscan_rows_wanted(PlannerInfo *root, CustomPath *best_path, bool filtered)
{
	if (filtered || root->limit_tuples < 1 || root->limit_tuples > 1000 ||
		bms_membership(root->all_baserels) != BMS_SINGLETON ||
		!pathkeys_contained_in(root->query_pathkeys, best_path->path.pathkeys))
		return 0;
	return (int) root->limit_tuples;
}

static Plan *
ddb_plan_keyscan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
					  List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	List	   *keyexprs = copyObject((List *) list_nth(best_path->custom_private, 4));
	List	   *exact = (List *) list_nth(best_path->custom_private, 5);
	List	   *bounds = (List *) list_nth(best_path->custom_private, 6);
	List	   *filter = NIL;
	List	   *recheck = NIL;
	bool		filtered = false;	/* a filter beyond the bounds */
	ListCell   *lc;

	cscan->scan.scanrelid = rel->relid;
	cscan->scan.plan.targetlist = tlist;

	/*
	 * The range enforces the exact key clauses; every other clause is a
	 * filter.  A join clause may arrive as another RestrictInfo of the same
	 * condition (an equivalence class derives "outer = key" for the
	 * parameterization where the path matched "key = outer"): any clause
	 * that is not the same condition simply stays a filter.
	 */
	foreach(lc, clauses)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		ListCell   *lc2;
		bool		is_exact = false;

		if (rinfo->pseudoconstant)
			continue;			/* a gating Result checks it */
		foreach(lc2, exact)
			if (same_condition(rinfo->clause, ((RestrictInfo *) lfirst(lc2))->clause))
				is_exact = true;
		if (is_exact)
			recheck = lappend(recheck, rinfo->clause);
		else
		{
			filter = lappend(filter, rinfo->clause);
			if (!list_member_ptr(bounds, rinfo))
				filtered = true;
		}
	}

	/*
	 * Both are compiled by the executor's BeginCustomScan (the recheck only
	 * when an EvalPlanQual recheck needs it): custom_exprs holds the key
	 * values, then the filter, then the recheck clauses; custom_private
	 * says how many key values and filter clauses there are, and how many
	 * rows the scan will be asked for at most (the layout is in ddb.h).
	 */
	cscan->scan.plan.qual = NIL;
	cscan->flags = best_path->flags;
	cscan->methods = &ddb_keyscan_scan_methods;
	cscan->custom_private = list_make5(copyObject(linitial(best_path->custom_private)),
									   copyObject(lsecond(best_path->custom_private)),
									   copyObject(lthird(best_path->custom_private)),
									   copyObject(lfourth(best_path->custom_private)),
									   makeInteger(list_length(keyexprs)));
	cscan->custom_private = lappend(cscan->custom_private,
									makeInteger(list_length(filter)));
	cscan->custom_private = lappend(cscan->custom_private,
									makeInteger(keyscan_rows_wanted(root, best_path, filtered)));
	cscan->custom_exprs = list_concat(list_concat(keyexprs, filter), recheck);
	return &cscan->scan.plan;
}

void
ddb_planner_init(void)
{
	DefineCustomBoolVariable("ddb.enable_key_scan",
							 "Lets the planner read key ranges of ddb tables (DdbKeyScan).",
							 "When off, queries on ddb tables scan the whole table.",
							 &ddb_enable_key_scan,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	RegisterCustomScanMethods(&ddb_keyscan_scan_methods);

	prev_set_rel_pathlist_hook = set_rel_pathlist_hook;
	set_rel_pathlist_hook = ddb_set_rel_pathlist;
}
