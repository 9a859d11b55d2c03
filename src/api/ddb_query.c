/*-------------------------------------------------------------------------
 *
 * ddb_query.c
 *	  Query and Scan: DynamoDB's read requests over the engine's range scans.
 *
 * A Query reads one partition: its key range is the partition prefix
 * (hash32(pk) || enc(pk)) up to ddb_key_successor of it, narrowed by the
 * sort-key condition.  A Scan reads the whole table in hash order, or one
 * segment of it: segment s of T covers the hashes
 * [floor(s * 2^32 / T), floor((s + 1) * 2^32 / T)), and since every encoded
 * key starts with its 4-byte big-endian hash, that is one contiguous key
 * range and the T segments partition the table exactly.
 *
 * Both then run the same reader (DdbReader): read items in key order (or
 * reverse), count each one read (ScannedCount) and evaluate the filter on
 * it (Count), apply the projection to those that match, and stop a page at
 * "limit" items read or once the items read reach 1 MB.  As in DynamoDB,
 * a filter never reduces what is read, and a page that stops early returns
 * LastEvaluatedKey (the key attributes of the last item read) even when no
 * item follows; the next page starts strictly after it.
 *
 * Page size: the 1 MB counts each read item at DynamoDB's item size
 * (ddb_item_size of the whole item, key attributes included), so pages
 * break where DynamoDB's would for the same items.  The item that reaches
 * 1 MB is part of the page.  The SETOF functions (ddb_query, ddb_scan)
 * stream every page without the 1 MB cut; their "limit" caps the items read
 * over the whole stream.  In a select list they return one item per call,
 * so they never hold more than one item and stop when their caller does.
 * In FROM, where the function scan keeps every row in a tuplestore
 * whichever way they come (it asks for SFRM_Materialize_Preferred), they
 * fill the tuplestore themselves in one call: each item is written where
 * its tuple's data go (ddb_stored_to_item_in) and the tuple copied into the
 * store once, instead of a jsonb per item that the executor then forms
 * into a tuple of its own.
 *
 * Indexes: a request names what it reads with index_name.  The reader only
 * needs a ddb relation and its key schema, so a global secondary index
 * (stored as another ddb table, see ddb_gsi.c) plugs in at
 * open_read_source(): its rows are the items a Query on the index returns
 * (index keys, table keys, projected attributes), and all their key
 * attributes make LastEvaluatedKey, as DynamoDB's does for an index.  A
 * key condition names only the index's own keys (nquerykeys), and so does
 * the rule that a filter may not name key attributes.
 *
 * Memory: each request parses its expressions once, in a context that
 * lives for the call (the SRF's multi_call_memory_ctx); every item is
 * built, filtered and projected in a per-item context reset in the loop.
 * No buffer pin or lock is held between items or between SRF calls (the
 * range scan copies each leaf's items out).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/tuplestore.h"

#include "ddb.h"
#include "model/ddb_expr.h"
#include "api/ddb_json.h"
#include "api/ddb_ops.h"

PG_FUNCTION_INFO_V1(ddb_query);
PG_FUNCTION_INFO_V1(ddb_query_page);
PG_FUNCTION_INFO_V1(ddb_scan);
PG_FUNCTION_INFO_V1(ddb_scan_page);

/* DynamoDB's page size: a Query or Scan reads at most 1 MB of items. */
#define DDB_PAGE_BYTES			(1024 * 1024)

/* DynamoDB's bounds on Scan's TotalSegments. */
#define DDB_MAX_TOTAL_SEGMENTS	1000000

#define validation_error(...) \
	ereport(ERROR, \
			(errcode(DDB_ERRCODE_VALIDATION), \
			 errmsg(__VA_ARGS__)))

/*
 * One request in progress: what it reads, its expressions, its counters.
 * Lives in the request's context (for the SRFs, multi_call_memory_ctx).
 */
typedef struct DdbReader
{
	Relation	table;			/* the table named by the request */
	Relation	rel;			/* what is read: the table, or an index */
	const char *index_name;		/* the index's DynamoDB name, or NULL */
	DdbKeyInfo	ki;				/* rel's key schema (a copy: rd_amcache may go) */
	const char *keynames[DDB_MAX_KEY_COLUMNS];	/* rel's key attribute names */
	int			nquerykeys;		/* key attributes a key condition may name */
	DdbRangeScan scan;
	DdbCondition *filter;		/* NULL: every item read matches */
	DdbProjection *projection;	/* NULL: whole items */
	bool		fetch_table;	/* an LSI read: each item from the table */
	bool		fetch_for_filter;	/* only for the filter: the index's
									 * item is returned */
	const char *partial_gsi;	/* a global index that does not project
								 * every attribute: its name */

	int64		limit;			/* items to read, 0 = no limit */
	bool		paged;			/* stop at DDB_PAGE_BYTES of items read */

	int64		scanned;		/* ScannedCount */
	int64		count;			/* Count */
	int64		bytes;			/* DynamoDB size of the items read */
	bool		stopped;		/* stopped early: limit or 1 MB */
	bool		done;			/* nothing more to return */
	Jsonb	   *last_key;		/* LastEvaluatedKey when stopped */

	StringInfo	out;			/* not NULL: build items at out->data + out_offset */
	int			out_offset;

	MemoryContext state_cxt;	/* the request's context */
	MemoryContext item_cxt;		/* reset for every item read */
	ExprContext *econtext;		/* SRFs: where the cleanup callback hangs */
} DdbReader;

/* ------------------------------------------------------------------------
 * Arguments and validation
 * ------------------------------------------------------------------------
 */
static const char *
arg_text(FunctionCallInfo fcinfo, int n)
{
	return PG_ARGISNULL(n) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(n));
}

static Jsonb *
arg_jsonb(FunctionCallInfo fcinfo, int n)
{
	return PG_ARGISNULL(n) ? NULL : PG_GETARG_JSONB_P(n);
}

/* The table argument: a DynamoDB name (text) or a regclass. */
static void
table_arg(FunctionCallInfo fcinfo, DdbReadRequest *a)
{
	Oid			argtype;

	if (PG_ARGISNULL(0))
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
				  DDB_MSG_REQUIRED_PARAMETER, "TableName");
	argtype = get_fn_expr_argtype(fcinfo->flinfo, 0);
	if (argtype == REGCLASSOID || argtype == OIDOID)
		a->relid = PG_GETARG_OID(0);
	else
		a->table_name = text_to_cstring(PG_GETARG_TEXT_PP(0));
}

/*
 * ddb_query / ddb_query_page (tbl, key_condition, vals, names, filter,
 * projection, index_name, forward, limit, start_key)
 */
static void
query_args(FunctionCallInfo fcinfo, DdbReadRequest *a)
{
	memset(a, 0, sizeof(DdbReadRequest));
	table_arg(fcinfo, a);
	a->key_condition = arg_text(fcinfo, 1);
	a->vals = arg_jsonb(fcinfo, 2);
	a->names = arg_jsonb(fcinfo, 3);
	a->filter = arg_text(fcinfo, 4);
	a->projection = arg_text(fcinfo, 5);
	a->index_name = arg_text(fcinfo, 6);
	a->forward = PG_ARGISNULL(7) ? true : PG_GETARG_BOOL(7);
	a->has_limit = !PG_ARGISNULL(8);
	a->limit = a->has_limit ? PG_GETARG_INT32(8) : 0;
	a->start_key = arg_jsonb(fcinfo, 9);
	if (a->key_condition == NULL)
		validation_error("ValidationException: Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.");
}

/*
 * ddb_scan / ddb_scan_page (tbl, filter, vals, names, projection,
 * index_name, segment, total_segments, limit, start_key)
 */
static void
scan_args(FunctionCallInfo fcinfo, DdbReadRequest *a)
{
	memset(a, 0, sizeof(DdbReadRequest));
	table_arg(fcinfo, a);
	a->filter = arg_text(fcinfo, 1);
	a->vals = arg_jsonb(fcinfo, 2);
	a->names = arg_jsonb(fcinfo, 3);
	a->projection = arg_text(fcinfo, 4);
	a->index_name = arg_text(fcinfo, 5);
	a->has_segment = !PG_ARGISNULL(6);
	a->segment = a->has_segment ? PG_GETARG_INT32(6) : 0;
	a->has_total_segments = !PG_ARGISNULL(7);
	a->total_segments = a->has_total_segments ? PG_GETARG_INT32(7) : 0;
	a->has_limit = !PG_ARGISNULL(8);
	a->limit = a->has_limit ? PG_GETARG_INT32(8) : 0;
	a->start_key = arg_jsonb(fcinfo, 9);
	a->forward = true;
}

/* The parameter checks DynamoDB makes before it looks at the table. */
static void
check_parameters(DdbReadRequest *a)
{
	DdbValErrors e;

	/* a Scan's placeholders need its expressions (a Query always has one) */
	if (a->key_condition == NULL)
		ddb_check_expression_use(a->filter || a->projection, a->filter != NULL,
								 "FilterExpression", a->names != NULL, a->vals != NULL);
	/* the members' constraints, listed together as the protocol lists them */
	ddb_valerr_init(&e);
	if (a->has_limit && a->limit < 1)
		ddb_valerr_add(&e, psprintf("%d", a->limit), "limit",
					   "Member must have value greater than or equal to 1");
	if (a->has_segment && a->segment < 0)
		ddb_valerr_add(&e, psprintf("%d", a->segment), "segment",
					   "Member must have value greater than or equal to 0");
	if (a->has_segment && a->segment > DDB_MAX_TOTAL_SEGMENTS - 1)
		ddb_valerr_add(&e, psprintf("%d", a->segment), "segment",
					   psprintf("Member must have value less than or equal to %d",
								DDB_MAX_TOTAL_SEGMENTS - 1));
	if (a->has_total_segments && a->total_segments < 1)
		ddb_valerr_add(&e, psprintf("%d", a->total_segments), "totalSegments",
					   "Member must have value greater than or equal to 1");
	if (a->has_total_segments && a->total_segments > DDB_MAX_TOTAL_SEGMENTS)
		ddb_valerr_add(&e, psprintf("%d", a->total_segments), "totalSegments",
					   psprintf("Member must have value less than or equal to %d",
								DDB_MAX_TOTAL_SEGMENTS));
	ddb_valerr_raise(&e);
	if (a->has_segment && !a->has_total_segments)
		validation_error("ValidationException: The TotalSegments parameter is required but was not present in the request when Segment parameter is present");
	if (a->has_total_segments && !a->has_segment)
		validation_error("ValidationException: The Segment parameter is required but was not present in the request when parameter TotalSegments is present");
	if (a->has_segment && a->segment >= a->total_segments)
		validation_error("ValidationException: The Segment parameter is zero-based and must be less than parameter TotalSegments: Segment: %d is not less than TotalSegments: %d",
						 a->segment, a->total_segments);
}

/* ------------------------------------------------------------------------
 * What is read
 * ------------------------------------------------------------------------
 */

/*
 * The relation a request reads: the table itself, or the ddb table that
 * holds the named index.  Global secondary indexes plug in here: they are
 * ddb tables of their own (the index keys as key columns), read exactly as
 * a table is, with their own key schema and LastEvaluatedKey.
 */
static Relation
open_read_source(Relation table, const char *index_name, int *nquerykeys,
				 char *kind, bool *projects_all)
{
	if (index_name == NULL)
	{
		*nquerykeys = ddb_get_keyinfo(table)->nkeys;
		return table;
	}
	return ddb_gsi_open_index(table, index_name, nquerykeys, kind, projects_all);
}

/* memcmp order of encoded keys, shorter first on a tie (DdbRange's order) */
static int
key_cmp(const char *a, int alen, const char *b, int blen)
{
	int			c = memcmp(a, b, Min(alen, blen));

	if (c != 0)
		return c;
	return (alen > blen) - (alen < blen);
}

/* Set *bound to a copy of buf's bytes (a palloc'd copy, buf may be reused). */
static void
set_bound(const char **bound, int *len, StringInfo buf)
{
	char	   *c = palloc(Max(buf->len, 1));

	memcpy(c, buf->data, buf->len);
	*bound = c;
	*len = buf->len;
}

/* Set the exclusive upper bound to the successor of key; none = unbounded. */
static void
set_successor_bound(const char **bound, int *len, const char *key, int keylen)
{
	StringInfoData succ;

	initStringInfo(&succ);
	if (ddb_key_successor(key, keylen, &succ))
		set_bound(bound, len, &succ);
	else
	{
		*bound = NULL;
		*len = 0;
	}
}

/*
 * An exclusive start key, checked as DynamoDB checks it: a JSON object of
 * exactly the key attributes of what is read, each of its key type.
 * Returns its encoded key in *enc.  A key of other attributes than those is
 * "The provided starting key is invalid", bare (DynamoDB's words for a
 * Query, and for a Scan of an index) or with the key-schema reason after it
 * (a Scan of a table).
 */
static void
start_key_encode(DdbReader *r, Jsonb *start, bool bare, StringInfo enc)
{
	Datum	   *values = palloc(sizeof(Datum) * r->ki.natts);
	bool	   *isnull = palloc(sizeof(bool) * r->ki.natts);
	const char *shape_msg = bare ?
		"ValidationException: The provided starting key is invalid" :
		"ValidationException: The provided starting key is invalid: The provided key element does not match the schema";

	if (!JB_ROOT_IS_OBJECT(start) || JB_ROOT_IS_SCALAR(start) ||
		JsonContainerSize(&start->root) != r->ki.nkeys)
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg_internal("%s", shape_msg),
				 r->index_name ?
				 errdetail("A start key of index \"%s\" of table \"%s\" is a JSON object of exactly its %d key attributes.",
						   r->index_name, RelationGetRelationName(r->table), r->ki.nkeys) :
				 errdetail("A start key of \"%s\" is a JSON object of exactly its %d key attributes.",
						   RelationGetRelationName(r->table), r->ki.nkeys)));
	for (int k = 0; k < r->ki.nkeys; k++)
	{
		const char *name = ddb_key_name(r->rel, k);
		JsonbValue *v = getKeyJsonValueFromContainer(&start->root, name, strlen(name), NULL);
		bool		ok;

		if (v == NULL)
			ereport(ERROR,
					(errcode(DDB_ERRCODE_VALIDATION),
					 errmsg_internal("%s", shape_msg),
					 errdetail("Key attribute \"%s\" is missing from the start key.", name)));
		/* S and N here; B's {"$B": ...} form is checked when it is decoded */
		ok = r->ki.keytype[k] == DDB_KEY_S ? (v->type == jbvString && v->val.string.len > 0) :
			r->ki.keytype[k] == DDB_KEY_N ? v->type == jbvNumeric : true;
		if (!ok)
			ereport(ERROR,
					(errcode(DDB_ERRCODE_VALIDATION),
					 errmsg("ValidationException: The provided starting key is invalid: The provided key element does not match the schema"),
					 errdetail("Key attribute \"%s\" of the start key must be %s.", name,
							   r->ki.keytype[k] == DDB_KEY_S ? "a non-empty string (S)" : "a number (N)")));
	}
	/* the key types, and DynamoDB's key value rules */
	ddb_key_from_jsonb(r->rel, start, true, values, isnull, enc);
}

/* A DdbValue of a key condition as a Datum of the key column's type. */
static Datum
key_value_datum(DdbValue *v)
{
	switch (v->type)
	{
		case DDB_TYPE_S:
			return PointerGetDatum(cstring_to_text_with_len(v->u.str.data, v->u.str.len));
		case DDB_TYPE_B:
			{
				bytea	   *b = palloc(VARHDRSZ + v->u.str.len);

				SET_VARSIZE(b, VARHDRSZ + v->u.str.len);
				memcpy(VARDATA(b), v->u.str.data, v->u.str.len);
				return PointerGetDatum(b);
			}
		case DDB_TYPE_N:
			return NumericGetDatum(v->u.num);
		default:
			elog(ERROR, "unexpected key value type %s", ddb_type_name(v->type));
	}
	return (Datum) 0;
}

/*
 * A key condition's value must have the key's type and not be empty.  Also
 * PartiQL's, for every partition key value of a SELECT before its first
 * Query runs (ddb_partiql.c).
 */
void
ddb_query_check_key_value(DdbValue *v, DdbKeyType keytype, const char *name)
{
	DdbType		want = keytype == DDB_KEY_S ? DDB_TYPE_S :
		keytype == DDB_KEY_N ? DDB_TYPE_N : DDB_TYPE_B;

	if (v->type != want)
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: One or more parameter values were invalid: Condition parameter type does not match schema type"),
				 errdetail("Key attribute \"%s\" is of type %s; the condition compares it with a value of type %s.",
						   name, ddb_key_type_name(keytype), ddb_type_name(v->type))));
	if ((v->type == DDB_TYPE_S || v->type == DDB_TYPE_B) && v->u.str.len == 0)
		validation_error("ValidationException: One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty %s value. Key: %s",
						 v->type == DDB_TYPE_S ? "string" : "binary", name);
}

/*
 * PartiQL's SELECT (ddb_partiql.c) runs as a Query or Scan whose filter may
 * name key attributes -- a strict sort-key bound beside the key
 * condition's range, say -- where DynamoDB's own Query refuses them; true
 * only around that call.
 */
static bool key_filter_allowed = false;

void
ddb_query_allow_key_filter(bool allow)
{
	key_filter_allowed = allow;
}

/*
 * Query's FilterExpression (or legacy QueryFilter, whose message names it)
 * may not name key attributes (DynamoDB's rule).
 */
static void
check_filter_paths(DdbReader *r, DdbCondition *c, bool legacy)
{
	check_stack_depth();
	if (c == NULL)
		return;
	check_filter_paths(r, c->left, legacy);
	check_filter_paths(r, c->right, legacy);
	for (int i = 0; i < c->nargs; i++)
	{
		DdbOperand *op = c->args[i];

		if (op->path == NULL || op->path->nelems == 0 ||
			op->path->elems[0].kind != DDB_PATH_NAME)
			continue;
		for (int k = 0; k < r->nquerykeys; k++)
			if (strcmp(op->path->elems[0].name, ddb_key_name(r->rel, k)) == 0)
				validation_error("ValidationException: %s can only contain non-primary key attributes: Primary key attribute: %s",
								 legacy ? "QueryFilter" : "Filter Expression",
								 op->path->elems[0].name);
	}
}

/*
 * The key range of a Query: the partition of kc->pk_value, narrowed by the
 * sort-key condition.  The sort key is the first sort-key column (tables
 * with more sort-key columns order by them after it).  *prefix receives the
 * partition prefix.
 */
static void
query_range(DdbReader *r, DdbKeyCondition *kc, DdbRange *range, StringInfo prefix)
{
	const DdbKeyInfo *ki = &r->ki;
	Datum		pk[1];
	StringInfoData buf;
	DdbKeyType sktype = r->nquerykeys > 1 ? ki->keytype[1] : DDB_KEY_S;
	const char *skname = r->nquerykeys > 1 ? ddb_key_name(r->rel, 1) : NULL;

	ddb_query_check_key_value(kc->pk_value, ki->keytype[0], ddb_key_name(r->rel, 0));
	pk[0] = key_value_datum(kc->pk_value);
	ddb_encode_key_prefix(ki, pk, 1, prefix);

	/* the whole partition */
	set_bound(&range->lo, &range->lolen, prefix);
	set_successor_bound(&range->hi, &range->hilen, prefix->data, prefix->len);
	if (!kc->has_sk)
		return;

	/*
	 * The sort-key condition, checked as DynamoDB does.  begins_with of a
	 * number was refused as the expression was parsed, so one here on a
	 * number sort key has a value of another type: "Condition parameter
	 * type does not match schema type", as for any other comparison.
	 */
	ddb_query_check_key_value(kc->sk_value, sktype, skname);
	if (kc->sk_value2)
	{
		ddb_query_check_key_value(kc->sk_value2, sktype, skname);
		if (ddb_scalar_cmp(kc->sk_value, kc->sk_value2) > 0)
			validation_error("ValidationException: Invalid KeyConditionExpression: The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: %s, upper bound operand: AttributeValue: %s",
							 ddb_value_describe(kc->sk_value),
							 ddb_value_describe(kc->sk_value2));
	}

	/* buf = partition prefix || enc(sk_value) */
	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, prefix->data, prefix->len);
	ddb_encode_key_column(&buf, sktype, key_value_datum(kc->sk_value));

	switch (kc->sk_kind)
	{
		case DDB_COND_BEGINS_WITH:
			/* enc() without its 2-byte terminator prefixes every longer value */
			buf.len -= 2;
			set_bound(&range->lo, &range->lolen, &buf);
			set_successor_bound(&range->hi, &range->hilen, buf.data, buf.len);
			break;
		case DDB_COND_BETWEEN:
			set_bound(&range->lo, &range->lolen, &buf);
			resetStringInfo(&buf);
			appendBinaryStringInfo(&buf, prefix->data, prefix->len);
			ddb_encode_key_column(&buf, sktype, key_value_datum(kc->sk_value2));
			set_successor_bound(&range->hi, &range->hilen, buf.data, buf.len);
			break;
		case DDB_COND_COMPARE:
			switch (kc->sk_op)
			{
				case DDB_CMP_EQ:
					set_bound(&range->lo, &range->lolen, &buf);
					set_successor_bound(&range->hi, &range->hilen, buf.data, buf.len);
					break;
				case DDB_CMP_LT:
					set_bound(&range->hi, &range->hilen, &buf);
					break;
				case DDB_CMP_LE:
					set_successor_bound(&range->hi, &range->hilen, buf.data, buf.len);
					break;
				case DDB_CMP_GT:
					/* above every key with sort key sk_value, and in the partition */
					{
						const char *lo;
						int			lolen;

						set_successor_bound(&lo, &lolen, buf.data, buf.len);
						if (lo == NULL)
						{
							/* no key above: an empty range */
							set_bound(&range->lo, &range->lolen, prefix);
							set_bound(&range->hi, &range->hilen, prefix);
						}
						else
						{
							range->lo = lo;
							range->lolen = lolen;
						}
					}
					break;
				case DDB_CMP_GE:
					set_bound(&range->lo, &range->lolen, &buf);
					break;
				default:
					elog(ERROR, "unexpected sort key operator %d", (int) kc->sk_op);
			}
			break;
		default:
			elog(ERROR, "unexpected sort key condition %d", (int) kc->sk_kind);
	}
}

/*
 * Narrow a Query's range to what follows an exclusive start key, which must
 * lie in the range (DynamoDB refuses a key of another partition, or one the
 * sort-key condition excludes).
 */
static void
query_resume(DdbReader *r, Jsonb *start, bool forward, DdbRange *range,
			 StringInfo prefix)
{
	StringInfoData enc;

	initStringInfo(&enc);
	start_key_encode(r, start, true, &enc);
	if (enc.len < prefix->len || memcmp(enc.data, prefix->data, prefix->len) != 0)
		validation_error("ValidationException: The provided starting key is outside query boundaries based on provided conditions");
	if (key_cmp(enc.data, enc.len, range->lo, range->lolen) < 0 ||
		(range->hi != NULL && key_cmp(enc.data, enc.len, range->hi, range->hilen) >= 0))
		validation_error("ValidationException: The provided starting key does not match the range key predicate");
	if (forward)
		set_successor_bound(&range->lo, &range->lolen, enc.data, enc.len);
	else
		set_bound(&range->hi, &range->hilen, &enc);
}

/* ------------------------------------------------------------------------
 * Setting a request up
 * ------------------------------------------------------------------------
 */

/* Open the table and what is read, set up the reader's common parts. */
static DdbReader *
reader_open(DdbReadRequest *a, bool paged)
{
	DdbReader  *r = palloc0(sizeof(DdbReader));
	char		kind = 0;
	bool		projects_all = true;

	check_parameters(a);
	r->table = OidIsValid(a->relid) ? ddb_open_table(a->relid, ACL_SELECT) :
		ddb_table_open(a->table_name, ACL_SELECT);
	r->rel = open_read_source(r->table, a->index_name, &r->nquerykeys, &kind, &projects_all);
	r->index_name = a->index_name;
	r->ki = *ddb_get_keyinfo(r->rel);
	for (int k = 0; k < r->ki.nkeys; k++)
		r->keynames[k] = pstrdup(ddb_key_name(r->rel, k));
	if (kind == DDB_INDEX_GLOBAL && a->consistent)
		validation_error("ValidationException: Consistent reads are not supported on global secondary indexes");
	if (kind == DDB_INDEX_GLOBAL && a->select_all && !projects_all)
		validation_error("ValidationException: One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global secondary index %s because its projection type is not ALL",
						 a->index_name);

	/*
	 * A local secondary index returns attributes it does not project by
	 * reading them from the table, as DynamoDB does: for ALL_ATTRIBUTES, a
	 * projection or a filter (which may name any attribute), one point
	 * lookup per item read.
	 */
	if (kind == DDB_INDEX_GLOBAL && !projects_all)
		r->partial_gsi = a->index_name;
	r->fetch_table = kind == DDB_INDEX_LOCAL && !projects_all &&
		(a->select_all || a->projection != NULL || a->filter != NULL);
	/* (the result is still what Select asks for: the projected attributes) */
	r->fetch_for_filter = r->fetch_table && !a->select_all && a->projection == NULL;
	r->limit = a->has_limit ? a->limit : 0;
	r->paged = paged;
	r->state_cxt = CurrentMemoryContext;
	r->item_cxt = AllocSetContextCreate(CurrentMemoryContext,
										"ddb query item",
										ALLOCSET_DEFAULT_SIZES);
	return r;
}

/*
 * Add the attribute 'path' starts with to 'names' (", "-separated, each
 * once) if r's global index does not project it.
 */
static void
note_unprojected(DdbReader *r, DdbPath *path, StringInfo names, List **seen)
{
	const char *name;
	ListCell   *lc;

	if (path == NULL || path->nelems == 0 || path->elems[0].kind != DDB_PATH_NAME)
		return;
	name = path->elems[0].name;
	if (ddb_gsi_projects(r->table, r->partial_gsi, name))
		return;
	foreach(lc, *seen)
		if (strcmp(lfirst(lc), name) == 0)
			return;
	*seen = lappend(*seen, (char *) name);
	if (names->len > 0)
		appendStringInfoString(names, ", ");
	appendStringInfoString(names, name);
}

static void
note_unprojected_in(DdbReader *r, DdbCondition *c, StringInfo names, List **seen)
{
	check_stack_depth();
	if (c == NULL)
		return;
	note_unprojected_in(r, c->left, names, seen);
	note_unprojected_in(r, c->right, names, seen);
	for (int i = 0; i < c->nargs; i++)
		note_unprojected(r, c->args[i]->path, names, seen);
}

/*
 * A global secondary index answers only with what it holds: DynamoDB
 * refuses a projection or a filter that names an attribute the index does
 * not project, with these texts (a local index reads such attributes from
 * the table instead: fetch_table).
 */
static void
check_index_projection(DdbReader *r)
{
	StringInfoData names;
	List	   *seen = NIL;

	if (r->partial_gsi == NULL)
		return;
	initStringInfo(&names);
	if (r->projection)
		for (int i = 0; i < r->projection->npaths; i++)
			note_unprojected(r, r->projection->paths[i], &names, &seen);
	if (names.len > 0)
		validation_error("ValidationException: One or more parameter values were invalid: Global secondary index %s does not project [%s]",
						 r->partial_gsi, names.data);
	note_unprojected_in(r, r->filter, &names, &seen);
	if (names.len > 0)
		validation_error("ValidationException: One or more parameter values were invalid: Secondary index %s does not project one or more filter attributes: [%s]",
						 r->partial_gsi, names.data);
}

/*
 * Neither the projection nor the filter may name a path below a key
 * attribute of the table or of any of its indexes (k.x, k[0]), whatever is
 * read: DynamoDB's "Key attributes must be scalars", after the request's
 * keys (its start key; a Query's key condition) are judged.  A PartiQL
 * SELECT's paths too (key_filter_allowed lets its filter name a key, not
 * a path below one), as DynamoDB Local's SelectStatementProcessor checks
 * them.
 */
static void
check_key_paths(DdbReader *r)
{
	if (r->projection)
		ddb_check_projection_key_paths(r->table, r->projection);
	if (r->filter)
		ddb_check_condition_key_paths(r->table, r->filter);
}

/* Parse FilterExpression and ProjectionExpression into the reader. */
static void
parse_filter_projection(DdbReader *r, DdbExprContext *cx, DdbReadRequest *a)
{
	if (a->filter)
		r->filter = ddb_parse_condition(cx, a->filter, "FilterExpression");
	if (a->projection)
		r->projection = ddb_parse_projection(cx, a->projection);
}

static DdbReader *
query_begin(DdbReadRequest *a, bool paged)
{
	DdbReader  *r = reader_open(a, paged);
	DdbExprContext *cx;
	DdbCondition *kcond;
	DdbKeyCondition kc;
	DdbRange	range = {0};
	StringInfoData prefix;

	cx = ddb_expr_begin(a->names, a->vals);
	kcond = ddb_parse_condition(cx, a->key_condition, "KeyConditionExpression");
	parse_filter_projection(r, cx, a);
	ddb_expr_end(cx);

	ddb_analyze_key_condition(kcond, ddb_key_name(r->rel, 0),
							  r->nquerykeys > 1 ? ddb_key_name(r->rel, 1) : NULL,
							  &kc);
	if (r->filter && !key_filter_allowed)
		check_filter_paths(r, r->filter, a->filter_legacy);

	initStringInfo(&prefix);
	query_range(r, &kc, &range, &prefix);
	if (a->start_key)
		query_resume(r, a->start_key, a->forward, &range, &prefix);
	check_key_paths(r);
	check_index_projection(r);

	r->scan = ddb_range_begin_stored(r->rel, GetActiveSnapshot(), &range, a->forward);
	ddb_range_want(r->scan, (int) r->limit);	/* it reads no more */
	return r;
}

static DdbReader *
scan_begin(DdbReadRequest *a, bool paged)
{
	DdbReader  *r = reader_open(a, paged);
	DdbExprContext *cx;
	DdbRange	range = {0};
	char		lo[4],
				hi[4];

	cx = ddb_expr_begin(a->names, a->vals);
	parse_filter_projection(r, cx, a);
	ddb_expr_end(cx);

	if (a->has_segment)
	{
		uint64		lohash = ((uint64) a->segment << 32) / (uint64) a->total_segments;
		uint64		hihash = ((uint64) (a->segment + 1) << 32) / (uint64) a->total_segments;

		/* 4-byte big-endian hash bounds: every encoded key starts with its hash */
		for (int i = 0; i < 4; i++)
			lo[i] = (char) (lohash >> (24 - 8 * i));
		range.lo = lo;
		range.lolen = 4;
		if (hihash <= PG_UINT32_MAX)
		{
			for (int i = 0; i < 4; i++)
				hi[i] = (char) (hihash >> (24 - 8 * i));
			range.hi = hi;
			range.hilen = 4;
		}
		if (a->start_key)
		{
			StringInfoData enc;
			uint32		h;

			initStringInfo(&enc);
			start_key_encode(r, a->start_key, r->rel != r->table, &enc);
			h = ddb_key_hash(enc.data);
			if (h < lohash || h >= hihash)
				validation_error("ValidationException: The provided starting key is invalid: Invalid ExclusiveStartKey. Please use ExclusiveStartKey with correct Segment. TotalSegments: %d Segment: %d",
								 a->total_segments, a->segment);
			set_successor_bound(&range.lo, &range.lolen, enc.data, enc.len);
		}
	}
	else if (a->start_key)
	{
		StringInfoData enc;

		initStringInfo(&enc);
		start_key_encode(r, a->start_key, r->rel != r->table, &enc);
		set_successor_bound(&range.lo, &range.lolen, enc.data, enc.len);
	}
	/* after the request's keys, as DynamoDB judges them first */
	check_key_paths(r);
	check_index_projection(r);

	/* the scan copies its bounds */
	r->scan = ddb_range_begin_stored(r->rel, GetActiveSnapshot(), &range, true);
	ddb_range_want(r->scan, (int) r->limit);
	return r;
}

/* ------------------------------------------------------------------------
 * Reading
 * ------------------------------------------------------------------------
 */

/* The key attributes of an API item, as LastEvaluatedKey shows them. */
static Jsonb *
key_of_item(DdbReader *r, Jsonb *item)
{
	JsonbParseState *ps = NULL;

	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	for (int k = 0; k < r->ki.nkeys; k++)
	{
		const char *name = ddb_key_name(r->rel, k);
		JsonbValue *v = getKeyJsonValueFromContainer(&item->root, name, strlen(name), NULL);
		JsonbValue	jk;

		if (v == NULL)
			elog(ERROR, "ddb item lacks key attribute \"%s\"", name);
		jk.type = jbvString;
		jk.val.string.val = (char *) name;
		jk.val.string.len = strlen(name);
		pushJsonbValue(&ps, WJB_KEY, &jk);
		pushJsonbValue(&ps, WJB_VALUE, v);
	}
	return JsonbValueToJsonb(pushJsonbValue(&ps, WJB_END_OBJECT, NULL));
}

/*
 * The next item to return (filtered, projected), or NULL when the range is
 * exhausted or the page is full.  It lives in the reader's item context,
 * until the next call.  When the page counts bytes and the item is
 * returned whole, *value is the item model's form of it, which the size
 * needed anyway (typed writers use it), else NULL.
 */
static Jsonb *
reader_next_item(DdbReader *r, DdbValue **value)
{
	*value = NULL;
	while (!r->done)
	{
		DdbStoredItem *stored;
		Jsonb	   *item;
		Jsonb	   *index_item;
		Jsonb	   *result = NULL;
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		stored = ddb_range_next_stored(r->scan);
		if (stored == NULL)
		{
			r->done = true;
			break;
		}

		MemoryContextReset(r->item_cxt);
		old = MemoryContextSwitchTo(r->item_cxt);
		item = index_item = ddb_stored_to_item_in(r->rel, stored, r->keynames, r->out, r->out_offset);
		if (r->fetch_table)
		{
			/* the whole item, by its table key, as the same snapshot sees it */
			const DdbKeyInfo *tki = ddb_get_keyinfo(r->table);
			Datum		values[DDB_MAX_KEY_COLUMNS + 1];
			bool		isnull[DDB_MAX_KEY_COLUMNS + 1];
			StringInfoData key;
			DdbStoredItem *full;

			if (tki->natts > lengthof(values))
				elog(ERROR, "too many columns in ddb table \"%s\"", RelationGetRelationName(r->table));
			initStringInfo(&key);
			ddb_key_from_jsonb(r->table, item, false, values, isnull, &key);
			full = ddb_lookup_stored(r->table, GetActiveSnapshot(), key.data, key.len);
			if (full == NULL)
				elog(ERROR, "local secondary index entry of table \"%s\" has no item",
					 RelationGetRelationName(r->table));
			item = ddb_stored_to_item(r->table, full, NULL);
		}
		r->scanned++;
		if (r->paged)
		{
			*value = ddb_item_from_jsonb(item);
			r->bytes += ddb_item_size(*value);
		}

		/* a full page: remember where it stopped, for the next one */
		if ((r->limit > 0 && r->scanned >= r->limit) ||
			(r->paged && r->bytes >= DDB_PAGE_BYTES))
		{
			MemoryContextSwitchTo(r->state_cxt);
			r->last_key = key_of_item(r, item);
			MemoryContextSwitchTo(r->item_cxt);
			r->stopped = true;
			r->done = true;
		}

		if (r->filter == NULL || ddb_eval_condition(r->filter, item))
		{
			r->count++;
			result = r->projection ? ddb_apply_projection(r->projection, item) :
				r->fetch_for_filter ? index_item : item;
		}
		MemoryContextSwitchTo(old);

		if (result != NULL)
		{
			if (result != item)
				*value = NULL;
			return result;
		}
	}
	*value = NULL;
	return NULL;
}

/* The same, allocated in the caller's context. */
static Jsonb *
reader_next(DdbReader *r)
{
	DdbValue   *value;
	Jsonb	   *result = reader_next_item(r, &value);
	Jsonb	   *copy;

	if (result == NULL)
		return NULL;
	copy = palloc(VARSIZE(result));
	memcpy(copy, result, VARSIZE(result));
	return copy;
}

static void
reader_close(DdbReader *r)
{
	if (r->scan)
		ddb_range_end(r->scan);
	r->scan = NULL;
	if (r->rel != r->table)
		relation_close(r->rel, AccessShareLock);
	relation_close(r->table, AccessShareLock);
	r->rel = r->table = NULL;
}

/* ------------------------------------------------------------------------
 * SQL functions: one page
 * ------------------------------------------------------------------------
 */
/* A count as a jsonb number. */
static Jsonb *
count_jsonb(int64 n)
{
	JsonbValue	v;

	v.type = jbvNumeric;
	v.val.numeric = int64_to_numeric(n);
	return JsonbValueToJsonb(&v);
}

/*
 * Read one page: the items (in the caller's context; none with
 * count_only, as Select COUNT), counters and LastEvaluatedKey.  The reader
 * works in a context deleted on exit.
 */
void
ddb_read_page(DdbReadRequest *a, bool is_query, bool count_only, DdbReadPage *page)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext call_cxt;
	DdbReader  *r;
	Jsonb	   *j;

	memset(page, 0, sizeof(DdbReadPage));
	call_cxt = AllocSetContextCreate(CurrentMemoryContext, "ddb query page",
									 ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(call_cxt);
	r = is_query ? query_begin(a, true) : scan_begin(a, true);
	if (a->typed && !count_only)
	{
		/* DynamoDB's typed JSON, written as each item comes */
		page->typed = MemoryContextAlloc(caller, sizeof(StringInfoData));
		page->typed->data = MemoryContextAlloc(caller, 1024);
		page->typed->maxlen = 1024;
		resetStringInfo(page->typed);
	}
	for (;;)
	{
		DdbValue   *value;

		if (page->typed)
		{
			j = reader_next_item(r, &value);
			if (j == NULL)
				break;
			/* (the buffer grows in the caller's context, the rest is per item) */
			MemoryContextSwitchTo(r->item_cxt);
			if (page->typed->len > 0)
				appendStringInfoChar(page->typed, ',');
			if (value != NULL)
				ddb_json_write_item(page->typed, value);
			else
				ddb_json_write_jsonb_item(page->typed, j);
			MemoryContextSwitchTo(call_cxt);
			continue;
		}
		MemoryContextSwitchTo(caller);
		j = reader_next(r);
		if (j == NULL)
			break;
		if (count_only)
			pfree(j);
		else
			page->items = lappend(page->items, j);
		MemoryContextSwitchTo(call_cxt);
	}
	MemoryContextSwitchTo(caller);
	page->count = r->count;
	page->scanned = r->scanned;
	page->bytes = r->bytes;
	page->is_index = r->rel != r->table;
	page->table_name = ddb_table_name(r->table);
	if (r->stopped)
	{
		page->last_key = palloc(VARSIZE(r->last_key));
		memcpy(page->last_key, r->last_key, VARSIZE(r->last_key));
	}
	MemoryContextSwitchTo(call_cxt);
	reader_close(r);
	MemoryContextSwitchTo(caller);
	MemoryContextDelete(call_cxt);
}

/*
 * One page as DynamoDB's response, in document form:
 * {"Items": [...], "Count": n, "ScannedCount": m, "LastEvaluatedKey": {...}}.
 */
static Datum
read_page(FunctionCallInfo fcinfo, bool is_query)
{
	DdbReadRequest a;
	DdbReadPage page;
	ListCell   *lc;

	if (is_query)
		query_args(fcinfo, &a);
	else
		scan_args(fcinfo, &a);
	ddb_read_page(&a, is_query, false, &page);

	/* the items go in whole, as they were built (no unpacking) */
	{
		const char *keys[4] = {"Items", "Count", "ScannedCount", "LastEvaluatedKey"};
		Jsonb	   *vals[4];
		Jsonb	  **elems = palloc(sizeof(Jsonb *) * Max(list_length(page.items), 1));
		Jsonb	   *result;

		foreach(lc, page.items)
			elems[foreach_current_index(lc)] = lfirst(lc);
		vals[0] = ddb_jsonb_array(elems, list_length(page.items));
		/* free each level once copied into the next (as BatchGetItem) */
		foreach(lc, page.items)
			pfree(lfirst(lc));
		list_free(page.items);
		pfree(elems);
		vals[1] = count_jsonb(page.count);
		vals[2] = count_jsonb(page.scanned);
		vals[3] = page.last_key;
		result = ddb_jsonb_object(keys, vals, page.last_key ? 4 : 3);
		pfree(vals[0]);
		PG_RETURN_JSONB_P(result);
	}
}

Datum
ddb_query_page(PG_FUNCTION_ARGS)
{
	return read_page(fcinfo, true);
}

Datum
ddb_scan_page(PG_FUNCTION_ARGS)
{
	return read_page(fcinfo, false);
}

/* ------------------------------------------------------------------------
 * SQL functions: every item, one per call
 * ------------------------------------------------------------------------
 */

/*
 * When the caller stops early (SELECT ddb_query(...) LIMIT 1), end the
 * range scan and close the relations before the SRF's memory goes.
 */
static void
reader_shutdown(Datum arg)
{
	DdbReader  *r = (DdbReader *) DatumGetPointer(arg);

	if (r->table != NULL)
		reader_close(r);
}

/*
 * Every item into a tuplestore, for a caller that prefers a materialized
 * result (a function in FROM: the function scan keeps every row in a
 * tuplestore of its own however they come).  Each item is written once,
 * where its tuple's data go, and the tuple copied into the store: no
 * jsonb of its own, no heap_form_minimal_tuple, no call per item.  Returns
 * false, having done nothing, when the caller's row type is not the one
 * jsonb column.
 */
static bool
read_materialize(FunctionCallInfo fcinfo, bool is_query)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	/* a minimal tuple of one jsonb without nulls: its data start here */
	const int	hoff = MAXALIGN(SizeofHeapTupleHeader);
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext call_cxt;
	Tuplestorestate *store;
	TupleDesc	desc;
	DdbReadRequest a;
	DdbReader  *r;
	StringInfoData tup;

	if (rsinfo->expectedDesc == NULL || rsinfo->expectedDesc->natts != 1 ||
		TupleDescAttr(rsinfo->expectedDesc, 0)->atttypid != JSONBOID)
		return false;

	/* the store and its row type live as long as the query */
	MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	store = tuplestore_begin_heap((rsinfo->allowedModes & SFRM_Materialize_Random) != 0,
								  false, work_mem);
	desc = CreateTupleDescCopy(rsinfo->expectedDesc);

	/* the request, its reader and the tuple being written: for this call */
	call_cxt = AllocSetContextCreate(caller, "ddb query materialize",
									 ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(call_cxt);
	if (is_query)
		query_args(fcinfo, &a);
	else
		scan_args(fcinfo, &a);
	r = is_query ? query_begin(&a, false) : scan_begin(&a, false);
	initStringInfo(&tup);
	r->out = &tup;
	r->out_offset = hoff;
	for (;;)
	{
		DdbValue   *value;
		Jsonb	   *j = reader_next_item(r, &value);
		HeapTupleHeader td;
		HeapTupleData htup;

		if (j == NULL)
			break;
		if ((char *) j != tup.data + hoff)
		{
			/* a projection: built elsewhere, copied to where the data go */
			tup.len = hoff;
			appendBinaryStringInfo(&tup, (char *) j, VARSIZE(j));
		}
		/* heap_form_tuple's header for (j): one att, no nulls, no toast */
		td = (HeapTupleHeader) tup.data;
		memset(td, 0, hoff);
		HeapTupleHeaderSetNatts(td, 1);
		td->t_infomask = HEAP_HASVARWIDTH;
		td->t_hoff = hoff;
		htup.t_len = tup.len;
		htup.t_data = td;
		ItemPointerSetInvalid(&htup.t_self);
		htup.t_tableOid = InvalidOid;
		tuplestore_puttuple(store, &htup);
	}
	reader_close(r);
	MemoryContextSwitchTo(caller);
	MemoryContextDelete(call_cxt);

	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = store;
	rsinfo->setDesc = desc;
	return true;
}

static Datum
read_stream(FunctionCallInfo fcinfo, bool is_query)
{
	FuncCallContext *funcctx;
	DdbReader  *r;
	Jsonb	   *j;

	if (SRF_IS_FIRSTCALL())
	{
		ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

		/*
		 * A caller that keeps every row anyway gets them all at once; one
		 * that may stop early (a set-returning function in a select list
		 * under LIMIT) gets them one per call.
		 */
		if (rsinfo && IsA(rsinfo, ReturnSetInfo) &&
			(rsinfo->allowedModes & SFRM_Materialize) &&
			(rsinfo->allowedModes & SFRM_Materialize_Preferred) &&
			read_materialize(fcinfo, is_query))
			PG_RETURN_NULL();
	}

	if (SRF_IS_FIRSTCALL())
	{
		ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
		MemoryContext old;
		DdbReadRequest a;

		funcctx = SRF_FIRSTCALL_INIT();
		old = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		if (is_query)
			query_args(fcinfo, &a);
		else
			scan_args(fcinfo, &a);
		r = is_query ? query_begin(&a, false) : scan_begin(&a, false);
		if (rsinfo && IsA(rsinfo, ReturnSetInfo) && rsinfo->econtext)
		{
			r->econtext = rsinfo->econtext;
			RegisterExprContextCallback(r->econtext, reader_shutdown,
										PointerGetDatum(r));
		}
		funcctx->user_fctx = r;
		MemoryContextSwitchTo(old);
	}

	funcctx = SRF_PERCALL_SETUP();
	r = funcctx->user_fctx;

	/*
	 * The item as built in the reader's item context, not copied: a
	 * value-per-call result is used before the next call (the function
	 * scan copies it into its tuplestore, ProjectSet resets its per-call
	 * memory each call), and the next call is what resets the item
	 * context.
	 */
	{
		DdbValue   *value;

		j = reader_next_item(r, &value);
	}
	if (j != NULL)
		SRF_RETURN_NEXT(funcctx, JsonbPGetDatum(j));

	reader_close(r);
	if (r->econtext)
		UnregisterExprContextCallback(r->econtext, reader_shutdown,
									  PointerGetDatum(r));
	SRF_RETURN_DONE(funcctx);
}

Datum
ddb_query(PG_FUNCTION_ARGS)
{
	return read_stream(fcinfo, true);
}

Datum
ddb_scan(PG_FUNCTION_ARGS)
{
	return read_stream(fcinfo, false);
}
