/*-------------------------------------------------------------------------
 *
 * ddb_ops.h
 *	  The operation cores of the api layer, shared by the two front doors:
 *	  the SQL functions (document-form jsonb) and ddb_api (DynamoDB's typed
 *	  JSON, ddb_protocol.c).
 *
 * Each DynamoDB operation's rules live in one C core below; a front door
 * only parses its arguments, opens the table and formats the answer.  The
 * single-item cores take an open table and parsed expressions, and report
 * a failed condition to the caller instead of raising it, so batch and
 * transaction operations can run many of them in one statement and decide
 * what a failure means.  No core uses SPI except the DDL ones.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DDB_OPS_H
#define DDB_OPS_H

#include "fmgr.h"
#include "nodes/pg_list.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/jsonb.h"
#include "utils/relcache.h"
#include "utils/resowner.h"

#include "ddb.h"

/*
 * Building jsonb results with pushJsonbValue: a key, a C string value, and
 * a whole Jsonb (NULL as JSON null, a scalar unwrapped) as a value or an
 * array element.  Shared by the API's result builders.
 */
static inline void
ddb_push_string_token(JsonbParseState **ps, JsonbIteratorToken tok, const char *s)
{
	JsonbValue	v;

	v.type = jbvString;
	v.val.string.val = (char *) s;
	v.val.string.len = strlen(s);
	pushJsonbValue(ps, tok, &v);
}

static inline void
ddb_push_key(JsonbParseState **ps, const char *key)
{
	ddb_push_string_token(ps, WJB_KEY, key);
}

static inline void
ddb_push_cstring(JsonbParseState **ps, const char *s)
{
	ddb_push_string_token(ps, WJB_VALUE, s);
}

static inline void
ddb_push_jsonb(JsonbParseState **ps, JsonbIteratorToken tok, Jsonb *j)
{
	JsonbValue	v;

	if (j == NULL)
		v.type = jbvNull;
	else if (JB_ROOT_IS_SCALAR(j))
		(void) JsonbExtractScalar(&j->root, &v);
	else
	{
		v.type = jbvBinary;
		v.val.binary.data = &j->root;
		v.val.binary.len = VARSIZE(j) - VARHDRSZ;
	}
	pushJsonbValue(ps, tok, &v);
}
#include "model/ddb_expr.h"

/* GUCs (ddb_table.c) */
extern char *ddb_schema;
extern char *ddb_region;
extern char *ddb_account_id;
extern void ddb_api_init(void);

/* ------------------------------------------------------------------------
 * Tables (ddb_table.c)
 * ------------------------------------------------------------------------
 */

/* A table's row in ddb_internal.tables, as cached. */
typedef struct DdbTableInfo
{
	Oid			relid;
	bool		registered;		/* has a catalog row */
	char	   *table_name;		/* DynamoDB name when it is not the relation's */
	int			nkeynames;
	char	  **key_names;		/* DynamoDB key names; NULL entries: the column's */
	char	   *table_id;
	char	   *created;		/* CreationDateTime, epoch seconds as text */
	char	   *billing_mode;
	int64		read_capacity;
	int64		write_capacity;
	char	   *billing_changed;	/* epoch seconds as text, or NULL */
} DdbTableInfo;

typedef struct DdbCreateTable
{
	const char *name;
	int			nkeys;
	const char *keys[DDB_MAX_KEY_COLUMNS];
	DdbKeyType	keytypes[DDB_MAX_KEY_COLUMNS];
	const char *billing_mode;	/* PROVISIONED or PAY_PER_REQUEST */
	int64		read_capacity;
	int64		write_capacity;
} DdbCreateTable;

extern char *ddb_pg_name(const char *name);
extern bool ddb_pg_key_columns(const char *const *attrs, int n, char **cols);
extern Datum ddb_key_names_array(const char *const *attrs, char *const *cols, int n);
extern bool ddb_valid_name_chars(const char *name);
extern Oid	ddb_schema_oid(void);
extern const DdbTableInfo *ddb_table_info(Oid relid);
extern char *ddb_table_name(Relation rel);
extern const char *ddb_table_key_name(Relation rel, int k);
extern void ddb_table_key_names(Relation rel, const char **names);
extern Oid	ddb_table_lookup(const char *name);
extern const char *ddb_table_name_in_arn(const char *name);
extern Relation ddb_table_open(const char *name, AclMode mode);
extern Relation ddb_table_open_named(const char *name, AclMode mode);
extern Relation ddb_table_open_arg(FunctionCallInfo fcinfo, int argno, AclMode mode);
extern Oid	ddb_catalog_owner(void);

/* SQL run as another role (ddb_run_as_begin): what ddb_run_as_end restores */
typedef struct DdbRunAs
{
	Oid			userid;
	int			sec_context;
	int			nestlevel;
} DdbRunAs;

extern void ddb_run_as_begin(Oid role, DdbRunAs *save);
extern void ddb_run_as_end(const DdbRunAs *save);
extern void ddb_catalog_exec(const char *sql, int nargs, Oid *argtypes, Datum *args,
							 const char *nulls, int expect);
extern const char *ddb_key_sql_type(DdbKeyType t);
extern Oid	ddb_create_table_core(const DdbCreateTable *ct);
extern void ddb_delete_table_core(Relation rel);
extern char *ddb_table_arn(const char *name);
extern void ddb_describe_table_json(Relation rel, const char *status, StringInfo buf);
extern List *ddb_list_table_names(void);
extern int	ddb_table_tag_count(Oid relid);
extern void ddb_table_tags_json(Oid relid, StringInfo buf);

/* ------------------------------------------------------------------------
 * Items (ddb_api.c)
 * ------------------------------------------------------------------------
 */
typedef enum DdbReturnValues
{
	DDB_RV_NONE,
	DDB_RV_ALL_OLD,
	DDB_RV_UPDATED_OLD,
	DDB_RV_ALL_NEW,
	DDB_RV_UPDATED_NEW
} DdbReturnValues;

/* What a write did: the versions before and after (NULL: none). */
typedef struct DdbWriteResult
{
	bool		condition_failed;	/* nothing was written */
	Jsonb	   *old;			/* the item before (also when the condition failed) */
	Jsonb	   *new;			/* the item after */
	int64		new_size;		/* new's size as DynamoDB counts it
								 * (ddb_item_size), set with it */
	Jsonb	   *updated_old;	/* UpdateItem: UPDATED_OLD, NULL if nothing */
	Jsonb	   *updated_new;	/* UpdateItem: UPDATED_NEW, NULL if nothing */
} DdbWriteResult;

/* A request's parsed expressions (ddb_parse_expressions: cached per backend). */
typedef struct DdbParsedExpressions
{
	DdbCondition *cond;
	DdbUpdate  *upd;
	DdbProjection *proj;
} DdbParsedExpressions;

extern const DdbParsedExpressions *ddb_parse_expressions(const char *condition,
														 const char *update,
														 const char *projection,
														 Jsonb *names, Jsonb *vals);
extern void ddb_condition_failed(void);
extern Jsonb *ddb_get_item_core(Relation rel, Jsonb *key, DdbProjection *proj);
extern Jsonb *ddb_get_item_core_ext(Relation rel, Jsonb *key, DdbProjection *proj,
									 bool project);
extern Jsonb *ddb_get_item_encoded(Relation rel, const char *key, int keylen,
								   DdbProjection *proj, const char *const *keynames);
extern void ddb_put_item_core(Relation rel, Jsonb *item, DdbCondition *cond,
							  DdbWriteResult *res);
extern void ddb_put_item_core_ext(Relation rel, Jsonb *item, DdbCondition *cond,
								  bool want_old, DdbWriteResult *res);
extern void ddb_update_item_core(Relation rel, Jsonb *key, DdbUpdate *upd,
								 DdbCondition *cond, DdbWriteResult *res);
extern void ddb_update_item_core_ext(Relation rel, Jsonb *key, DdbUpdate *upd,
									 DdbCondition *cond, bool want_updated,
									 DdbWriteResult *res);
extern void ddb_check_update_keys(Relation rel, DdbUpdate *upd);
extern void ddb_check_update_key_paths(Relation rel, DdbUpdate *upd);
extern void ddb_check_projection_key_paths(Relation rel, DdbProjection *proj);
extern void ddb_check_condition_key_paths(Relation rel, DdbCondition *cond);
extern void ddb_delete_item_core(Relation rel, Jsonb *key, DdbCondition *cond,
								 DdbWriteResult *res);
extern void ddb_delete_item_core_ext(Relation rel, Jsonb *key, DdbCondition *cond,
									 bool want_old, DdbWriteResult *res);
extern Jsonb *ddb_write_result(DdbWriteResult *res, DdbReturnValues rv);
extern void ddb_check_write_privileges(Relation rel, int op, bool reads);
extern void ddb_check_expression_use(bool has_expr, bool has_value_expr,
									 const char *value_exprs, bool has_names, bool has_vals);

extern DdbReturnValues ddb_parse_return_values(const char *s, bool update);
extern DdbKeyType ddb_parse_key_type(const char *t, const char *member);
extern void ddb_check_create_table(const DdbCreateTable *ct);

/* ------------------------------------------------------------------------
 * Batches and transactions (ddb_batch.c): BatchWriteItem, BatchGetItem,
 * TransactWriteItems, TransactGetItems.  Each front door parses its request
 * into these structs (documents in document form); the core checks
 * DynamoDB's limits, opens the tables, runs the single-item cores above and
 * fills in the results.
 * ------------------------------------------------------------------------
 */
#define DDB_BATCH_WRITE_MAX		25	/* requests in one BatchWriteItem */
#define DDB_BATCH_GET_MAX		100 /* keys in one BatchGetItem */
#define DDB_BATCH_GET_RESPONSE_MAX (16 * 1024 * 1024)	/* bytes of items returned */
#define DDB_TRANSACT_MAX		100 /* actions (gets) in one transaction */
#define DDB_TRANSACT_SIZE_MAX	(4 * 1024 * 1024)	/* bytes of items written */
#define DDB_TOKEN_LIFETIME_SECS	600 /* a ClientRequestToken is valid 10 minutes */

/* One table of a BatchWriteItem: its put and delete requests, in order. */
typedef struct DdbBatchWriteTable
{
	const char *table_name;
	int			nrequests;
	bool	   *is_put;			/* PutRequest (else DeleteRequest) */
	Jsonb	  **docs;			/* PutRequest's Item or DeleteRequest's Key */
	bool		reads_old;		/* the answer shows the stored items' sizes
								 * (ReturnConsumedCapacity,
								 * ReturnItemCollectionMetrics): needs SELECT */
	/* set by ddb_batch_write_core */
	Relation	rel;			/* open, locked; the caller closes (NoLock) */
	DdbWriteResult *results;
} DdbBatchWriteTable;

/* One table of a BatchGetItem. */
typedef struct DdbBatchGetTable
{
	const char *table_name;
	int			nkeys;
	Jsonb	  **keys;
	const char *projection;		/* ProjectionExpression, or NULL */
	Jsonb	   *names;			/* ExpressionAttributeNames, or NULL */
	bool		empty_attributes;	/* AttributesToGet given as [] (the
									 * protocol's legacy member; listed by
									 * ddb_batch_get_check) */
	/* set by ddb_batch_get_core */
	List	   *items;			/* the items found (projected) */
	List	   *unprocessed;	/* keys not read: the response was full */
	bool		want_units;		/* compute read_units (ReturnConsumedCapacity) */
	double		read_units;		/* strongly consistent read units consumed */
} DdbBatchGetTable;

typedef enum DdbTransactKind
{
	DDB_TX_CHECK,				/* ConditionCheck */
	DDB_TX_PUT,
	DDB_TX_DELETE,
	DDB_TX_UPDATE,
	DDB_TX_GET,					/* TransactGetItems' Get */
	DDB_TX_NONE					/* not one action member: the front end
								 * refuses it after ddb_transact_check */
} DdbTransactKind;

/* One action of a TransactWriteItems (or one Get of a TransactGetItems). */
typedef struct DdbTransactAction
{
	DdbTransactKind kind;
	const char *table_name;
	Jsonb	   *doc;			/* Put: Item; the others: Key */
	bool		doc_given;		/* the request has doc, not converted yet */
	const char *condition;		/* ConditionExpression */
	const char *update;			/* UpdateExpression */
	const char *projection;		/* Get: ProjectionExpression */
	Jsonb	   *names;
	Jsonb	   *vals;
	bool		return_old;		/* ReturnValuesOnConditionCheckFailure ALL_OLD */
	bool		reads_old;		/* the answer shows the stored item's size
								 * (ReturnConsumedCapacity,
								 * ReturnItemCollectionMetrics): needs SELECT */
	/*
	 * The cancellation reason a failed condition gives, when not
	 * ConditionalCheckFailed (PartiQL's INSERT: DuplicateItem); the
	 * reason then carries no item.
	 */
	const char *condition_code;
	const char *condition_message;
	/* set by the cores */
	Relation	rel;			/* open, locked; the caller closes (NoLock) */
	const char *code;			/* cancellation reason: NULL (None),
								 * "ConditionalCheckFailed" (or condition_code),
								 * "ValidationError" */
	const char *message;		/* its message */
	Jsonb	   *item;			/* ConditionalCheckFailed with ALL_OLD: the
								 * item; Get: the item read (or NULL) */
	DdbWriteResult res;			/* what the write did */
} DdbTransactAction;

extern void ddb_request_key(Relation rel, Jsonb *doc, bool exact, StringInfo key);
extern int	ddb_batch_write_check(DdbBatchWriteTable *tables, int ntables);
extern void ddb_batch_write_core(DdbBatchWriteTable *tables, int ntables);
extern int	ddb_batch_get_check(DdbBatchGetTable *tables, int ntables);
extern void ddb_batch_get_core(DdbBatchGetTable *tables, int ntables);
extern void ddb_transact_check(DdbTransactAction *actions, int nactions, int max_actions,
							   bool gets);
extern bool ddb_transact_write_core(DdbTransactAction *actions, int nactions,
									int max_actions, const char *token, bool *replayed);
extern void ddb_transact_get_core(DdbTransactAction *actions, int nactions);
extern char *ddb_transact_canceled_message(DdbTransactAction *actions, int nactions);
extern ErrorData *ddb_subxact_caught(MemoryContext cxt, ResourceOwner owner);

/* ------------------------------------------------------------------------
 * Query and Scan (ddb_query.c)
 * ------------------------------------------------------------------------
 */

/*
 * The parameters of one Query or Scan, whichever front door received them.
 * NULL pointers and has_* flags stand for parameters not given.  The table
 * is table_name (a DynamoDB name) or, when relid is valid, that relation.
 * Expressions are parsed by the reader (legacy parameters arrive already
 * translated into expressions).
 */
typedef struct DdbReadRequest
{
	Oid			relid;
	const char *table_name;
	const char *key_condition;	/* Query only */
	Jsonb	   *vals;
	Jsonb	   *names;
	const char *filter;
	bool		filter_legacy;	/* filter is a legacy QueryFilter's */
	const char *projection;
	const char *index_name;
	bool		forward;		/* Query only */
	bool		has_segment;	/* Scan only */
	int32		segment;
	bool		has_total_segments;
	int32		total_segments;
	bool		has_limit;
	int32		limit;
	Jsonb	   *start_key;
	bool		consistent;		/* ConsistentRead: refused on a GSI */
	bool		select_all;		/* Select ALL_ATTRIBUTES */
	bool		typed;			/* items as typed JSON text (DdbReadPage.typed) */
} DdbReadRequest;

/* One page of a Query or Scan. */
typedef struct DdbReadPage
{
	List	   *items;			/* document-form items (unless count_only or typed) */
	StringInfo	typed;			/* typed: the items as typed JSON, comma-separated */
	int64		count;			/* Count */
	int64		scanned;		/* ScannedCount */
	int64		bytes;			/* DynamoDB size of the items read */
	Jsonb	   *last_key;		/* LastEvaluatedKey, or NULL */
	char	   *table_name;		/* the table's DynamoDB name */
	bool		is_index;		/* read a global secondary index */
} DdbReadPage;

extern void ddb_read_page(DdbReadRequest *a, bool is_query, bool count_only,
						  DdbReadPage *page);
extern void ddb_query_allow_key_filter(bool allow);
extern void ddb_query_check_key_value(DdbValue *v, DdbKeyType keytype, const char *name);

/* ------------------------------------------------------------------------
 * Request validation (ddb_protocol.c): DynamoDB's "N validation errors
 * detected: Value ... at 'member' failed to satisfy constraint: ..."
 * ------------------------------------------------------------------------
 */
typedef struct DdbValErrors
{
	int			n;
	StringInfoData msgs;
} DdbValErrors;

extern void ddb_valerr_init(DdbValErrors *e);
extern void ddb_valerr_add(DdbValErrors *e, const char *value, const char *member,
						   const char *constraint);
extern void ddb_valerr_name(DdbValErrors *e, const char *value, const char *member);
extern void ddb_valerr_table_name(DdbValErrors *e, const char *value, const char *member);
extern void ddb_valerr_raise(DdbValErrors *e);
struct DdbJson;
extern const char *ddb_check_common(DdbValErrors *e, struct DdbJson *req);
extern const char *ddb_check_return_on_failure(DdbValErrors *e, struct DdbJson *req,
												const char *prefix);

/* gsi (ddb_gsi.c) */
extern void ddb_create_gsi_core(Oid relid, char *index_name, char *pk,
								const char *pktype_name, char *sk, const char *sktype_name,
								char *proj, ArrayType *nonkey_arr);
extern void ddb_drop_gsi_core(Oid relid, const char *index_name);
extern void ddb_index_create(Oid relid, char kind, char *index_name, char *pk,
							 const char *pktype_name, char *sk, const char *sktype_name,
							 char *proj, ArrayType *nonkey_arr);
extern void ddb_index_drop(Oid relid, const char *index_name, char kind);
extern void ddb_check_item_column_values(Relation rel, const DdbKeyInfo *ki, Datum *values);
extern bool ddb_upkeep_trigger_set(Relation rel, const char *trigname, bool enable);
extern void ddb_gsi_init(void);
extern bool ddb_index_info(Relation rel, char kind, char **index_name, Oid *index_relid,
						   char **pk, char **sk);
extern char ddb_index_kind(Relation rel, const char *index_name);
extern int	ddb_gsi_names(Relation rel, const char ***names);
extern int	ddb_gsi_cache_forget(bool (*gone) (Oid relid));
extern int	ddb_index_key_names(Relation rel, const char ***names);
extern int	ddb_collection_defer_begin(void);
extern void ddb_collection_defer_end(int mark, bool apply);
extern bool ddb_collection_defer_pending(int mark);
extern void ddb_gsi_check_update_types(Relation rel, DdbUpdate *upd);
extern void ddb_gsi_check_update_values(Relation rel, DdbUpdate *upd, Jsonb *item);
extern bool ddb_gsi_throughput(Relation rel, const char *index_name, int64 *rcu, int64 *wcu);
extern void ddb_gsi_set_throughput(Relation rel, const char *index_name, int64 rcu, int64 wcu);
extern Oid	ddb_extension_schema(void);
extern void ddb_gsi_attribute_definitions(Relation rel, StringInfo buf);
extern int	ddb_gsi_write_units(Relation rel, Jsonb *olditem, Jsonb *newitem, int max,
								const char **names, double *units);

/* Time to Live (ddb_ttl.c, ddb_ttl_worker.c) */
extern char *ddb_ttl_attribute(Relation rel);
extern void ddb_ttl_update_core(Relation rel, const char *attribute, bool enabled);
extern void ddb_ttl_describe_json(Relation rel, StringInfo buf);
extern int64 ddb_ttl_sweep_table(Relation rel, int64 limit, bool *more);
extern List *ddb_ttl_tables(void);
extern void ddb_ttl_worker_init(void);

/* ------------------------------------------------------------------------
 * Streams (ddb_stream.c).  Every write path calls ddb_stream_capture with
 * an item's old and new versions (NULL: none), in the writing transaction.
 * The ddb_op_* are DynamoDB Streams' operations, for ddb_api_execute.
 * ------------------------------------------------------------------------
 */
struct DdbJson;
extern void ddb_stream_init(void);
extern int	ddb_stream_cache_forget(bool (*gone) (Oid relid));
extern void ddb_stream_capture(Relation rel, Jsonb *olditem, Jsonb *newitem);
extern bool ddb_stream_capturing(Relation rel);
extern int64 ddb_stream_sweep_all(void);
extern void ddb_stream_service_begin(void);
extern void ddb_stream_service_end(void);
extern void ddb_stream_set(Relation rel, const char *view_type);
extern void ddb_stream_describe(Relation rel, StringInfo buf, bool *first);
extern char *ddb_op_list_streams(struct DdbJson *req, int *len);
extern char *ddb_op_describe_stream(struct DdbJson *req, int *len);
extern char *ddb_op_get_shard_iterator(struct DdbJson *req, int *len);
extern char *ddb_op_get_records(struct DdbJson *req, int *len);

/*
 * Tokens a client hands back (ddb_stream.c): a payload signed with the
 * database's key for a purpose and a context, so that an edited one is
 * refused.  Shard iterators (no purpose) and PartiQL's NextToken.
 */
extern char *ddb_token_sign(const char *purpose, const char *context, int contextlen,
							const char *payload);
extern char *ddb_token_payload(const char *purpose, const char *context, int contextlen,
							   const char *token);

/*
 * PartiQL (ddb_partiql.c): ExecuteStatement, translated into a Query, Scan,
 * PutItem, UpdateItem or DeleteItem request run by ddb_api_execute;
 * BatchExecuteStatement (each statement so, in a subtransaction of its own)
 * and ExecuteTransaction (one TransactGetItems or TransactWriteItems).
 */
extern char *ddb_op_execute_statement(struct DdbJson *req, int *len);
extern char *ddb_op_batch_execute_statement(struct DdbJson *req, int *len);
extern char *ddb_op_execute_transaction(struct DdbJson *req, int *len);

/*
 * TransactWriteItems (ddb_protocol.c) for ExecuteTransaction: 'req' the
 * parsed request; reasons[i], when its code is not NULL, is the
 * cancellation reason action i's failed condition gives instead of
 * ConditionalCheckFailed.
 */
typedef struct DdbConditionReason
{
	const char *code;
	const char *message;
} DdbConditionReason;

extern char *ddb_transact_write_request(struct DdbJson *req,
										const DdbConditionReason *reasons, int *len);

#endif							/* DDB_OPS_H */
