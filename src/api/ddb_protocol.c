/*-------------------------------------------------------------------------
 *
 * ddb_protocol.c
 *	  DynamoDB's JSON protocol as one C entry point, ddb_api_execute (see
 *	  ddb_protocol.h), and the SQL functions ddb_api and ddb_api_text.
 *
 * A request is parsed by ddb_json.c (never through jsonb text input, so
 * U+0000 survives), checked as DynamoDB checks requests -- member shapes
 * (SerializationException), then constraints on members ("N validation
 * errors detected: ..."), then each operation's own rules -- and handed to
 * the same operation cores the SQL functions call (ddb_ops.h).  Responses
 * are written as JSON text straight from the item model.
 *
 * Unknown request members are ignored and a JSON null is an absent member,
 * as DynamoDB does.
 *
 * Errors are raised as "<Kind>: <DynamoDB's message>" with the kind's
 * SQLSTATE; ddb_error_kind maps a SQLSTATE back to the kind, its __type
 * namespace and HTTP status, for the endpoint.  PostgreSQL's own errors
 * that have a DynamoDB meaning (insufficient privilege, serialization
 * failure, deadlock) map too; anything else is InternalServerError and the
 * endpoint never shows its message.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/relation.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/inval.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/elog.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "ddb.h"
#include "api/ddb_json.h"
#include "api/ddb_legacy.h"
#include "api/ddb_ops.h"
#include "api/ddb_protocol.h"

PG_FUNCTION_INFO_V1(ddb_api);
PG_FUNCTION_INFO_V1(ddb_api_text);

#define NS_DYNAMODB		"com.amazonaws.dynamodb.v20120810#"
#define NS_SERVICE		"com.amazon.coral.service#"
#define NS_VALIDATE		"com.amazon.coral.validate#"

#define validation_error(...) \
	ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", __VA_ARGS__)

/* ------------------------------------------------------------------------
 * Error kinds
 * ------------------------------------------------------------------------
 */
typedef struct ErrorKind
{
	int			sqlstate;
	const char *name;
	const char *prefix;
	int			status;
} ErrorKind;

static const ErrorKind error_kinds[] = {
	{DDB_ERRCODE_VALIDATION, "ValidationException", NS_VALIDATE, 400},
	{DDB_ERRCODE_CONDITIONAL_CHECK, "ConditionalCheckFailedException", NS_DYNAMODB, 400},
	{DDB_ERRCODE_RESOURCE_NOT_FOUND, "ResourceNotFoundException", NS_DYNAMODB, 400},
	{DDB_ERRCODE_TRANSACTION_CANCELED, "TransactionCanceledException", NS_DYNAMODB, 400},
	{DDB_ERRCODE_ITEM_COLLECTION_SIZE, "ItemCollectionSizeLimitExceededException", NS_DYNAMODB, 400},
	{DDB_ERRCODE_RESOURCE_IN_USE, "ResourceInUseException", NS_DYNAMODB, 400},
	{DDB_ERRCODE_TRANSACTION_CONFLICT, "TransactionConflictException", NS_DYNAMODB, 400},
	{DDB_ERRCODE_LIMIT_EXCEEDED, "LimitExceededException", NS_DYNAMODB, 400},
	{DDB_ERRCODE_SERIALIZATION, "SerializationException", NS_SERVICE, 400},
	{DDB_ERRCODE_UNKNOWN_OPERATION, "UnknownOperationException", NS_SERVICE, 400},
	{DDB_ERRCODE_ACCESS_DENIED, "AccessDeniedException", NS_SERVICE, 400},
	{DDB_ERRCODE_UNRECOGNIZED_CLIENT, "UnrecognizedClientException", NS_SERVICE, 400},
	{DDB_ERRCODE_INVALID_SIGNATURE, "InvalidSignatureException", NS_SERVICE, 400},
	{DDB_ERRCODE_MISSING_AUTH_TOKEN, "MissingAuthenticationTokenException", NS_SERVICE, 400},
	{DDB_ERRCODE_INCOMPLETE_SIGNATURE, "IncompleteSignatureException", NS_SERVICE, 400},
	{DDB_ERRCODE_IDEMPOTENT_MISMATCH, "IdempotentParameterMismatchException", NS_DYNAMODB, 400},
	{DDB_ERRCODE_TRANSACTION_IN_PROGRESS, "TransactionInProgressException", NS_DYNAMODB, 400},
	{DDB_ERRCODE_REQUEST_LIMIT, "RequestLimitExceeded", NS_DYNAMODB, 400},
	{DDB_ERRCODE_INTERNAL, "InternalServerError", NS_DYNAMODB, 500},
	{DDB_ERRCODE_EXPIRED_ITERATOR, "ExpiredIteratorException", NS_DYNAMODB, 400},
	{DDB_ERRCODE_TRIMMED_DATA, "TrimmedDataAccessException", NS_DYNAMODB, 400},
	{DDB_ERRCODE_TABLE_NOT_FOUND, "TableNotFoundException", NS_DYNAMODB, 400},
	{DDB_ERRCODE_DUPLICATE_ITEM, "DuplicateItemException", NS_DYNAMODB, 400},
	/* PostgreSQL's errors with a DynamoDB meaning */
	{ERRCODE_INSUFFICIENT_PRIVILEGE, "AccessDeniedException", NS_SERVICE, 400},
	{ERRCODE_T_R_SERIALIZATION_FAILURE, "TransactionConflictException", NS_DYNAMODB, 400},
	{ERRCODE_T_R_DEADLOCK_DETECTED, "TransactionConflictException", NS_DYNAMODB, 400},
	{ERRCODE_LOCK_NOT_AVAILABLE, "TransactionConflictException", NS_DYNAMODB, 400},
};

const char *
ddb_error_kind(int sqlerrcode, const char **type_prefix, int *http_status)
{
	for (int i = 0; i < lengthof(error_kinds); i++)
		if (error_kinds[i].sqlstate == sqlerrcode)
		{
			if (type_prefix)
				*type_prefix = error_kinds[i].prefix;
			if (http_status)
				*http_status = error_kinds[i].status;
			return error_kinds[i].name;
		}
	return NULL;
}

const char *
ddb_error_client_message(int sqlerrcode, const char *message, const char *role,
						 const char *operation)
{
	switch (sqlerrcode)
	{
		case ERRCODE_INSUFFICIENT_PRIVILEGE:
			/* PostgreSQL's aclcheck texts; ddb's own refusals say more */
			if (strncmp(message, "permission denied", 17) != 0 &&
				strncmp(message, "must be owner of", 16) != 0)
				return NULL;
			return psprintf("User: arn:aws:iam::%s:user/%s is not authorized to perform: dynamodb:%s",
							ddb_account_id, role ? role : "unknown", operation ? operation : "*");
		case ERRCODE_T_R_SERIALIZATION_FAILURE:
		case ERRCODE_T_R_DEADLOCK_DETECTED:
		case ERRCODE_LOCK_NOT_AVAILABLE:
			return "Transaction is ongoing for the item";
		default:
			return NULL;
	}
}

/* ------------------------------------------------------------------------
 * Validation errors ("N validation errors detected: ...")
 * ------------------------------------------------------------------------
 */
void
ddb_valerr_init(DdbValErrors *e)
{
	e->n = 0;
	initStringInfo(&e->msgs);
}

/* value NULL is printed as null, as DynamoDB prints a missing member */
void
ddb_valerr_add(DdbValErrors *e, const char *value, const char *member,
			   const char *constraint)
{
	/* DynamoDB reports at most ten */
	if (e->n >= 10)
		return;
	if (e->n > 0)
		appendStringInfoString(&e->msgs, "; ");
	appendStringInfo(&e->msgs, DDB_MSG_CONSTRAINT,
					 value ? psprintf("'%s'", value) : "null", member, constraint);
	e->n++;
}

/* A table or index name: DynamoDB's pattern and 3..255 characters. */
void
ddb_valerr_name(DdbValErrors *e, const char *value, const char *member)
{
	if (!ddb_valid_name_chars(value) || value[0] == '\0')
		ddb_valerr_add(e, value, member,
					   "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+");
	if (strlen(value) < 3)
		ddb_valerr_add(e, value, member, "Member must have length greater than or equal to 3");
	if (strlen(value) > 255)
		ddb_valerr_add(e, value, member, "Member must have length less than or equal to 255");
}

/*
 * A TableName that names an existing table: a name as ddb_valerr_name
 * checks it, or this server's ARN of one (ddb_table_name_in_arn, at most
 * 1024 characters, as DynamoDB's TableName members take them), whose name
 * is checked so.
 */
void
ddb_valerr_table_name(DdbValErrors *e, const char *value, const char *member)
{
	const char *inner = ddb_table_name_in_arn(value);

	if (inner == NULL)
		ddb_valerr_name(e, value, member);
	else if (strlen(value) > 1024)
		ddb_valerr_add(e, value, member, "Member must have length less than or equal to 1024");
	else
		ddb_valerr_name(e, inner, member);
}

void
ddb_valerr_raise(DdbValErrors *e)
{
	if (e->n > 0)
		validation_error(DDB_MSG_VALIDATION_ERRORS, e->n, e->n > 1 ? "s" : "", e->msgs.data);
}

/* ------------------------------------------------------------------------
 * Request members
 * ------------------------------------------------------------------------
 */

static const char *
member_string(DdbJson *req, const char *name)
{
	DdbJson    *j = ddb_json_member(req, name);

	if (j == NULL)
		return NULL;
	return ddb_json_member_cstring(j, name);
}

static bool
member_bool(DdbJson *req, const char *name, bool dflt)
{
	DdbJson    *j = ddb_json_member(req, name);

	return j ? ddb_json_check_bool(j) : dflt;
}

static bool
member_number(DdbJson *req, const char *name, const char *target, double *value)
{
	DdbJson    *j = ddb_json_member(req, name);

	if (j == NULL)
		return false;
	*value = ddb_json_check_number(j, target);
	return true;
}

static DdbJson *
member_list(DdbJson *req, const char *name)
{
	DdbJson    *j = ddb_json_member(req, name);

	if (j)
		ddb_json_check_list(j);
	return j;
}

static DdbJson *
member_struct(DdbJson *req, const char *name, const char *structname)
{
	DdbJson    *j = ddb_json_member(req, name);

	if (j)
		ddb_json_check_struct(j, structname);
	return j;
}

/* Is 'name' in the NULL-terminated list? */
static bool
listed(const char *const *list, const char *name)
{
	for (int i = 0; list[i]; i++)
		if (strcmp(list[i], name) == 0)
			return true;
	return false;
}

/* Legacy member 'name', when the operation takes it (it is in 'legacy'). */
static DdbJson *
legacy_member(DdbJson *req, const char *const *legacy, const char *name)
{
	return listed(legacy, name) ? ddb_json_member(req, name) : NULL;
}

/* ConditionalOperator goes with Expected, QueryFilter and ScanFilter. */
static bool
takes_conditional_operator(const char *const *legacy)
{
	return listed(legacy, "Expected") || listed(legacy, "QueryFilter") ||
		listed(legacy, "ScanFilter");
}

static DdbJson *
member_attribute_map(DdbJson *req, const char *name)
{
	DdbJson    *j = ddb_json_member(req, name);

	if (j)
		ddb_json_check_attribute_map(j);
	return j;
}

/* DynamoDB writes member names in messages with a lowercase first letter. */
static char *
lower_first(const char *name)
{
	char	   *s = pstrdup(name);

	s[0] = pg_tolower((unsigned char) s[0]);
	return s;
}

/* An enum member: its value, checked against the set DynamoDB lists. */
static const char *
check_enum(DdbValErrors *e, const char *value, const char *name, const char *const *set,
		   const char *setlist)
{
	if (value == NULL)
		return NULL;
	for (int i = 0; set[i]; i++)
		if (strcmp(value, set[i]) == 0)
			return value;
	ddb_valerr_add(e, value, lower_first(name),
				   psprintf("Member must satisfy enum value set: [%s]", setlist));
	return NULL;
}

static const char *const return_consumed_set[] = {"INDEXES", "TOTAL", "NONE", NULL};
#define RETURN_CONSUMED_LIST "INDEXES, TOTAL, NONE"

/* TableName of an item or read operation: length and pattern */
static const char *
check_table_name(DdbValErrors *e, DdbJson *req, const char *name)
{
	const char *t = member_string(req, name);
	char	   *m = lower_first(name);

	if (t == NULL)
	{
		ddb_valerr_add(e, NULL, m, "Member must not be null");
		return NULL;
	}
	ddb_valerr_table_name(e, t, m);
	return t;
}

/* ------------------------------------------------------------------------
 * Responses
 * ------------------------------------------------------------------------
 */
void
ddb_resp_begin(DdbResponse *r)
{
	initStringInfo(&r->buf);
	appendStringInfoChar(&r->buf, '{');
	r->first = true;
}

void
ddb_resp_key(DdbResponse *r, const char *key)
{
	ddb_json_key(&r->buf, &r->first, key);
}

static void
resp_item(DdbResponse *r, const char *key, Jsonb *item)
{
	if (item == NULL)
		return;
	ddb_resp_key(r, key);
	ddb_json_write_jsonb_item(&r->buf, item);
}

char *
ddb_resp_end(DdbResponse *r, int *len)
{
	appendStringInfoChar(&r->buf, '}');
	*len = r->buf.len;
	return r->buf.data;
}

/* ------------------------------------------------------------------------
 * Tables
 * ------------------------------------------------------------------------
 */
static const char *const key_type_set[] = {"B", "N", "S", NULL};
static const char *const key_kind_set[] = {"HASH", "RANGE", NULL};
static const char *const billing_set[] = {"PROVISIONED", "PAY_PER_REQUEST", NULL};

/* ProvisionedThroughput {ReadCapacityUnits, WriteCapacityUnits} */
static void
check_throughput(DdbValErrors *e, DdbJson *pt, const char *path, int64 *rcu, int64 *wcu)
{
	double		r = 0,
				w = 0;
	bool		hr = member_number(pt, "ReadCapacityUnits", "Long", &r);
	bool		hw = member_number(pt, "WriteCapacityUnits", "Long", &w);

	/* (beyond DynamoDB's bound, kept above it without overflowing int64) */
	r = Max(Min(r, 1e13), -1e13);
	w = Max(Min(w, 1e13), -1e13);

	if (!hw)
		ddb_valerr_add(e, NULL, psprintf("%s.writeCapacityUnits", path), "Member must not be null");
	else if (w < 1)
		ddb_valerr_add(e, psprintf("%.0f", w), psprintf("%s.writeCapacityUnits", path),
					   "Member must have value greater than or equal to 1");
	if (!hr)
		ddb_valerr_add(e, NULL, psprintf("%s.readCapacityUnits", path), "Member must not be null");
	else if (r < 1)
		ddb_valerr_add(e, psprintf("%.0f", r), psprintf("%s.readCapacityUnits", path),
					   "Member must have value greater than or equal to 1");
	*rcu = (int64) r;
	*wcu = (int64) w;
}

/*
 * An update to the throughput a table (or, in dynalite's record of the
 * service, an index) already has: DynamoDB refuses it in these words.
 */
static void
refuse_unchanged_throughput(int64 cur_rcu, int64 rcu, int64 cur_wcu, int64 wcu)
{
	validation_error("The provisioned throughput for the table will not change. The requested value equals the current value. "
					 "Current ReadCapacityUnits provisioned for the table: " INT64_FORMAT ". Requested ReadCapacityUnits: " INT64_FORMAT ". "
					 "Current WriteCapacityUnits provisioned for the table: " INT64_FORMAT ". Requested WriteCapacityUnits: " INT64_FORMAT ". "
					 "Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits.",
					 cur_rcu, rcu, cur_wcu, wcu);
}

/* Throughput over DynamoDB's bound (10^12 units), checked after the members */
static void
check_throughput_bounds(int64 rcu, int64 wcu)
{
	if (rcu > INT64CONST(1000000000000))
		validation_error("Given value " INT64_FORMAT " for ReadCapacityUnits is out of bounds", rcu);
	if (wcu > INT64CONST(1000000000000))
		validation_error("Given value " INT64_FORMAT " for WriteCapacityUnits is out of bounds", wcu);
}

static void create_index(Relation rel, DdbJson *defs, DdbJson *c, char kind);

/*
 * A new global index (CreateTable's, or UpdateTable's Create) has its own
 * ProvisionedThroughput exactly when the table is PROVISIONED, as
 * DynamoDB requires.
 */
static void
index_throughput_allowed(DdbJson *c, const char *iname, bool provisioned)
{
	bool		has = ddb_json_member(c, "ProvisionedThroughput") != NULL;

	if (provisioned && !has)
		validation_error("One or more parameter values were invalid: ProvisionedThroughput is not specified for index: %s",
						 iname);
	if (!provisioned && has)
		validation_error("One or more parameter values were invalid: ProvisionedThroughput should not be specified for index: %s when BillingMode is PAY_PER_REQUEST",
						 iname);
}

/*
 * The members of one index definition (an element of CreateTable's
 * GlobalSecondaryIndexes or LocalSecondaryIndexes, or UpdateTable's
 * Create) that DynamoDB's request model constrains, collected into e under
 * the definition's path (e.g. "globalSecondaryIndexes.1.member"): DynamoDB
 * reports them with the request's other constraint errors, before it looks
 * at the table or at the index's meaning.
 */
static void
index_member_errors(DdbValErrors *e, DdbJson *c, const char *path)
{
	static const char *const projection_set[] = {"ALL", "INCLUDE", "KEYS_ONLY", NULL};
	const char *iname = member_string(c, "IndexName");
	DdbJson    *ks = member_list(c, "KeySchema");
	DdbJson    *pj = member_struct(c, "Projection", "Projection");

	if (iname == NULL)
		ddb_valerr_add(e, NULL, psprintf("%s.indexName", path), "Member must not be null");
	else
		ddb_valerr_name(e, iname, psprintf("%s.indexName", path));
	if (ks == NULL)
		ddb_valerr_add(e, NULL, psprintf("%s.keySchema", path), "Member must not be null");
	else if (ks->n < 1 || ks->n > 2)
		ddb_valerr_add(e, ks->n < 1 ? "[]" : psprintf("%d elements", ks->n),
					   psprintf("%s.keySchema", path),
					   ks->n < 1 ? "Member must have length greater than or equal to 1" :
					   "Member must have length less than or equal to 2");
	if (pj == NULL)
		ddb_valerr_add(e, NULL, psprintf("%s.projection", path), "Member must not be null");
	else
	{
		DdbJson    *nonkey = member_list(pj, "NonKeyAttributes");

		check_enum(e, member_string(pj, "ProjectionType"),
				   psprintf("%s.projection.projectionType", path), projection_set,
				   "ALL, INCLUDE, KEYS_ONLY");
		if (nonkey != NULL && (nonkey->n < 1 || nonkey->n > 20))
		{
			StringInfoData v;

			/* the list as DynamoDB prints it: [a, b, c] */
			initStringInfo(&v);
			appendStringInfoChar(&v, '[');
			for (int i = 0; i < nonkey->n; i++)
			{
				ddb_json_check_string(nonkey->elems[i]);
				appendStringInfo(&v, "%s%s", i ? ", " : "", nonkey->elems[i]->str);
			}
			appendStringInfoChar(&v, ']');
			ddb_valerr_add(e, v.data, psprintf("%s.projection.nonKeyAttributes", path),
						   nonkey->n < 1 ? "Member must have length greater than or equal to 1" :
						   "Member must have length less than or equal to 20");
		}
	}
}

/*
 * The IndexName of element i of CreateTable's GlobalSecondaryIndexes or
 * LocalSecondaryIndexes (list): present, and used by no earlier element
 * nor by any index of others (the other list, or NULL).
 */
static const char *
index_list_name(DdbJson *list, int i, const char *structname, const char *member_name,
				DdbJson *others)
{
	const char *iname;

	ddb_json_check_value_struct(list->elems[i], structname);
	iname = member_string(list->elems[i], "IndexName");
	if (iname == NULL)
		validation_error(DDB_MSG_VALIDATION_ERRORS, 1, "",
						 psprintf(DDB_MSG_CONSTRAINT, "null",
								  psprintf("%s.%d.member.indexName", member_name, i + 1),
								  "Member must not be null"));
	for (int j = 0; j < i; j++)
		if (strcmp(iname, member_string(list->elems[j], "IndexName")) == 0)
			validation_error("One or more parameter values were invalid: Duplicate index name: %s", iname);
	for (int j = 0; others && j < others->n; j++)
	{
		const char *other = member_string(others->elems[j], "IndexName");

		if (other && strcmp(iname, other) == 0)
			validation_error("One or more parameter values were invalid: Duplicate index name: %s", iname);
	}
	return iname;
}

/*
 * StreamSpecification {StreamEnabled, StreamViewType} of CreateTable and
 * UpdateTable: false when absent; *view is the view type to enable, or
 * NULL to disable.
 */
static bool
stream_specification(DdbJson *req, const char **view, bool creating)
{
	DdbJson    *ss = member_struct(req, "StreamSpecification", "StreamSpecification");
	bool		enabled;

	*view = NULL;
	if (ss == NULL)
		return false;
	/* (its members' constraints were listed: check_stream_specification) */
	*view = member_string(ss, "StreamViewType");
	enabled = ddb_json_check_bool(ddb_json_member(ss, "StreamEnabled"));
	/* (DynamoDB's texts, which call the member UpdateViewType) */
	if (enabled && *view == NULL)
		validation_error("One or more parameter values were invalid: %s", creating ?
						 "Table is being created with a stream enabled, UpdateViewType is required" :
						 "If stream is being enabled then UpdateViewType is required");
	if (!enabled && *view != NULL)
		validation_error("One or more parameter values were invalid: %s", creating ?
						 "Table is being created with a stream disabled, UpdateViewType should not be specified" :
						 "If stream is being disabled, then UpdateViewType must not be specified");
	return true;
}

/*
 * StreamSpecification's member constraints, listed with CreateTable's or
 * UpdateTable's others (after the indexes', as the request's members come).
 */
static void
check_stream_specification(DdbValErrors *e, DdbJson *req)
{
	DdbJson    *ss = member_struct(req, "StreamSpecification", "StreamSpecification");

	if (ss == NULL)
		return;
	if (ddb_json_member(ss, "StreamEnabled") == NULL)
		ddb_valerr_add(e, NULL, "streamSpecification.streamEnabled", "Member must not be null");
	check_enum(e, member_string(ss, "StreamViewType"), "streamSpecification.streamViewType",
			   (const char *const[]) {"NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES", "KEYS_ONLY", NULL},
			   "NEW_IMAGE, OLD_IMAGE, NEW_AND_OLD_IMAGES, KEYS_ONLY");
}

static void check_tags(DdbValErrors *e, DdbJson *tags);
static Jsonb *request_tags(DdbJson *tags);
static void add_tags(Relation rel, Jsonb *tags);

/*
 * With indexes, every attribute defined must be a key of the table or of
 * an index: DynamoDB's message lists the definitions and the keys used
 * (here in the request's order and in order of first use).
 */
static void
check_definitions_used(const DdbCreateTable *ct, const char *const *defnames, int ndefs,
					   DdbJson *gsis, DdbJson *lsis)
{
	const char **used = palloc0(sizeof(char *) * (ct->nkeys + 2 * ((gsis ? gsis->n : 0) + (lsis ? lsis->n : 0)) + 1));
	int			nused = 0;
	DdbJson    *lists[2] = {gsis, lsis};

	for (int k = 0; k < ct->nkeys; k++)
		used[nused++] = ct->keys[k];
	for (int l = 0; l < 2; l++)
		for (int i = 0; lists[l] && i < lists[l]->n; i++)
		{
			DdbJson    *ks = lists[l]->elems[i]->type == DDB_JSON_OBJECT ?
				ddb_json_get(lists[l]->elems[i], "KeySchema") : NULL;

			for (int k = 0; ks && ks->type == DDB_JSON_ARRAY && k < ks->n && k < 2; k++)
			{
				DdbJson    *an = ks->elems[k]->type == DDB_JSON_OBJECT ?
					ddb_json_get(ks->elems[k], "AttributeName") : NULL;

				if (an != NULL && an->type == DDB_JSON_STRING && !listed(used, an->str))
					used[nused++] = an->str;
			}
		}
	for (int d = 0; d < ndefs; d++)
		if (!listed(used, defnames[d]))
		{
			StringInfoData defs,
						keys;

			initStringInfo(&defs);
			initStringInfo(&keys);
			for (int i = 0; i < ndefs; i++)
				appendStringInfo(&defs, "%s%s", i ? ", " : "", defnames[i]);
			for (int i = 0; i < nused; i++)
				appendStringInfo(&keys, "%s%s", i ? ", " : "", used[i]);
			validation_error("One or more parameter values were invalid: Some AttributeDefinitions are not used. AttributeDefinitions: [%s], keys used: [%s]",
							 defs.data, keys.data);
		}
	pfree(used);
}

static char *
op_create_table(DdbJson *req, int *len)
{
	DdbJson    *gsis;
	DdbJson    *lsis;
	DdbJson    *tagsreq = member_list(req, "Tags");
	Jsonb	   *tags = NULL;
	DdbValErrors e;
	DdbCreateTable ct;
	DdbJson    *defs = member_list(req, "AttributeDefinitions");
	DdbJson    *ks = member_list(req, "KeySchema");
	DdbJson    *pt = member_struct(req, "ProvisionedThroughput", "ProvisionedThroughput");
	const char *billing;
	const char *defnames[64];
	const char *deftypes[64];
	int			ndefs = 0;
	Oid			relid;
	Relation	rel;
	DdbResponse	r;
	bool		has_stream;
	const char *stream_view;
	int64	   *gsi_rcu;
	int64	   *gsi_wcu;
	bool		provisioned;

	memset(&ct, 0, sizeof(ct));
	ct.name = member_string(req, "TableName");
	/*
	 * TableName's presence and length are raised alone, before the listed
	 * constraints: CreateTable checks them first, in words of its own
	 * (dynalite's record of the service: its "required" and "tableName"
	 * checks throw before the others are collected).
	 */
	if (ct.name == NULL)
		validation_error(DDB_MSG_REQUIRED_PARAMETER, "TableName");
	if (strlen(ct.name) < 3 || strlen(ct.name) > 255)
		validation_error("TableName must be at least 3 characters long and at most 255 characters long");

	ddb_valerr_init(&e);
	if (defs == NULL)
		ddb_valerr_add(&e, NULL, "attributeDefinitions", "Member must not be null");
	else
	{
		for (int i = 0; i < defs->n && ndefs < lengthof(defnames); i++)
		{
			DdbJson    *d = defs->elems[i];
			char	   *path = psprintf("attributeDefinitions.%d.member", i + 1);

			if (d->type == DDB_JSON_NULL)
				continue;
			if (d->type != DDB_JSON_OBJECT)
				ddb_json_check_value_struct(d, "AttributeDefinition");
			defnames[ndefs] = member_string(d, "AttributeName");
			deftypes[ndefs] = member_string(d, "AttributeType");
			if (defnames[ndefs] == NULL)
				ddb_valerr_add(&e, NULL, psprintf("%s.attributeName", path), "Member must not be null");
			if (deftypes[ndefs] == NULL)
				ddb_valerr_add(&e, NULL, psprintf("%s.attributeType", path), "Member must not be null");
			else
				check_enum(&e, deftypes[ndefs], psprintf("%s.attributeType", path), key_type_set, "B, N, S");
			ndefs++;
		}
	}
	if (!ddb_valid_name_chars(ct.name))
		ddb_valerr_add(&e, ct.name, "tableName",
					   "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+");
	billing = check_enum(&e, member_string(req, "BillingMode"), "BillingMode", billing_set,
						 "PROVISIONED, PAY_PER_REQUEST");
	if (pt)
		check_throughput(&e, pt, "provisionedThroughput", &ct.read_capacity, &ct.write_capacity);
	if (ks == NULL)
		ddb_valerr_add(&e, NULL, "keySchema", "Member must not be null");
	else
	{
		if (ks->n < 1)
			ddb_valerr_add(&e, "[]", "keySchema", "Member must have length greater than or equal to 1");
		if (ks->n > 2)
			ddb_valerr_add(&e, psprintf("%d elements", ks->n), "keySchema",
						   "Member must have length less than or equal to 2");
		for (int i = 0; i < ks->n && i < 2; i++)
		{
			DdbJson    *k = ks->elems[i];
			char	   *path = psprintf("keySchema.%d.member", i + 1);
			const char *kt;

			ddb_json_check_value_struct(k, "KeySchemaElement");
			ct.keys[i] = member_string(k, "AttributeName");
			kt = member_string(k, "KeyType");
			if (ct.keys[i] == NULL)
				ddb_valerr_add(&e, NULL, psprintf("%s.attributeName", path), "Member must not be null");
			else if (strlen(ct.keys[i]) > 255)
				ddb_valerr_add(&e, ct.keys[i], psprintf("%s.attributeName", path),
							   "Member must have length less than or equal to 255");
			else if (strlen(ct.keys[i]) < 1)
				ddb_valerr_add(&e, ct.keys[i], psprintf("%s.attributeName", path),
							   "Member must have length greater than or equal to 1");
			if (kt == NULL)
				ddb_valerr_add(&e, NULL, psprintf("%s.keyType", path), "Member must not be null");
			else if (check_enum(&e, kt, psprintf("%s.keyType", path), key_kind_set, "HASH, RANGE") &&
					 strcmp(kt, i == 0 ? "HASH" : "RANGE") != 0)
			{
				ddb_valerr_raise(&e);
				validation_error("Invalid KeySchema: The %s KeySchemaElement is not a %s key type",
								 i == 0 ? "first" : "second", i == 0 ? "HASH" : "RANGE");
			}
		}
		ct.nkeys = Min(ks->n, 2);
	}
	/* the indexes' members: DynamoDB lists the global ones' errors first */
	gsis = member_list(req, "GlobalSecondaryIndexes");
	lsis = member_list(req, "LocalSecondaryIndexes");
	gsi_rcu = palloc0(sizeof(int64) * (gsis ? Max(gsis->n, 1) : 1));
	gsi_wcu = palloc0(sizeof(int64) * (gsis ? Max(gsis->n, 1) : 1));
	for (int i = 0; gsis && i < gsis->n; i++)
	{
		char	   *path = psprintf("globalSecondaryIndexes.%d.member", i + 1);
		DdbJson    *gpt;

		ddb_json_check_value_struct(gsis->elems[i], "GlobalSecondaryIndex");
		index_member_errors(&e, gsis->elems[i], path);
		gpt = member_struct(gsis->elems[i], "ProvisionedThroughput", "ProvisionedThroughput");
		if (gpt)
			check_throughput(&e, gpt, psprintf("%s.provisionedThroughput", path), &gsi_rcu[i], &gsi_wcu[i]);
	}
	for (int i = 0; lsis && i < lsis->n; i++)
	{
		ddb_json_check_value_struct(lsis->elems[i], "LocalSecondaryIndex");
		index_member_errors(&e, lsis->elems[i], psprintf("localSecondaryIndexes.%d.member", i + 1));
	}
	check_stream_specification(&e, req);
	if (tagsreq != NULL)
		check_tags(&e, tagsreq);
	ddb_valerr_raise(&e);

	/* the billing mode and its throughput */
	if (billing == NULL || strcmp(billing, "PROVISIONED") == 0)
	{
		if (pt == NULL)
			validation_error("One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED");
		ct.billing_mode = "PROVISIONED";
	}
	else
	{
		if (pt != NULL)
			validation_error("One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST");
		ct.billing_mode = "PAY_PER_REQUEST";
	}
	provisioned = strcmp(ct.billing_mode, "PROVISIONED") == 0;
	if (pt != NULL)
		check_throughput_bounds(ct.read_capacity, ct.write_capacity);

	/* each attribute defined once (DynamoDB's words) */
	for (int d = 0; d < ndefs; d++)
		for (int d2 = 0; d2 < d; d2++)
			if (strcmp(defnames[d], defnames[d2]) == 0)
				validation_error("Attribute Name is duplicated: %s", defnames[d]);

	/* every key attribute defined, and no other attribute */
	if (ct.nkeys > ndefs)
		validation_error("Invalid KeySchema: Some index key attribute have no definition");
	for (int k = 0; k < ct.nkeys; k++)
	{
		bool		found = false;

		for (int d = 0; d < ndefs; d++)
			if (strcmp(defnames[d], ct.keys[k]) == 0)
			{
				ct.keytypes[k] = (DdbKeyType) deftypes[d][0];
				found = true;
			}
		if (!found)
		{
			StringInfoData keys,
						dn;

			initStringInfo(&keys);
			initStringInfo(&dn);
			for (int i = 0; i < ct.nkeys; i++)
				appendStringInfo(&keys, "%s%s", i ? ", " : "", ct.keys[i]);
			for (int i = 0; i < ndefs; i++)
				appendStringInfo(&dn, "%s%s", i ? ", " : "", defnames[i]);
			validation_error("One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions. Keys: [%s], AttributeDefinitions: [%s]",
							 keys.data, dn.data);
		}
	}
	if (ct.nkeys == 2 && strcmp(ct.keys[0], ct.keys[1]) == 0)
		validation_error("Both the Hash Key and the Range Key element in the KeySchema have the same name");
	if (ddb_json_member(req, "GlobalSecondaryIndexes") == NULL &&
		ddb_json_member(req, "LocalSecondaryIndexes") == NULL && ct.nkeys != ndefs)
		validation_error("One or more parameter values were invalid: Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions");
	if (lsis != NULL)
	{
		if (ct.nkeys < 2)
			validation_error("One or more parameter values were invalid: Table KeySchema does not have a range key, which is required when specifying a LocalSecondaryIndex");
		if (lsis->n == 0)
			validation_error("One or more parameter values were invalid: List of LocalSecondaryIndexes is empty");
		if (lsis->n > DDB_MAX_LSI_PER_TABLE)
			validation_error("One or more parameter values were invalid: Number of LocalSecondaryIndexes exceeds per-table limit of %d",
							 DDB_MAX_LSI_PER_TABLE);
		for (int i = 0; i < lsis->n; i++)
			(void) index_list_name(lsis, i, "LocalSecondaryIndex", "localSecondaryIndexes", NULL);
	}
	if (gsis != NULL)
	{
		if (gsis->n == 0)
			validation_error("One or more parameter values were invalid: List of GlobalSecondaryIndexes is empty");
		if (gsis->n > 20)
			validation_error("One or more parameter values were invalid: GlobalSecondaryIndex count exceeds the per-table limit of 20");
		for (int i = 0; i < gsis->n; i++)
		{
			const char *iname = index_list_name(gsis, i, "GlobalSecondaryIndex",
												"globalSecondaryIndexes", lsis);

			index_throughput_allowed(gsis->elems[i], iname, provisioned);
			if (provisioned)
				check_throughput_bounds(gsi_rcu[i], gsi_wcu[i]);
		}
	}

	if (gsis != NULL || lsis != NULL)
		check_definitions_used(&ct, defnames, ndefs, gsis, lsis);

	has_stream = stream_specification(req, &stream_view, true);
	if (tagsreq != NULL && tagsreq->n > 0)
		tags = request_tags(tagsreq);

	ddb_check_create_table(&ct);
	relid = ddb_create_table_core(&ct);

	rel = ddb_open_table(relid, ACL_SELECT);
	/* the indexes, each as UpdateTable would create it (the table is empty) */
	for (int i = 0; lsis && i < lsis->n; i++)
		create_index(rel, defs, lsis->elems[i], DDB_INDEX_LOCAL);
	for (int i = 0; gsis && i < gsis->n; i++)
	{
		create_index(rel, defs, gsis->elems[i], DDB_INDEX_GLOBAL);
		if (provisioned)
			ddb_gsi_set_throughput(rel, member_string(gsis->elems[i], "IndexName"),
								   gsi_rcu[i], gsi_wcu[i]);
	}
	if (has_stream && stream_view != NULL)
		ddb_stream_set(rel, stream_view);
	if (tags != NULL)
		add_tags(rel, tags);
	ddb_resp_begin(&r);
	ddb_resp_key(&r, "TableDescription");
	ddb_describe_table_json(rel, "ACTIVE", &r.buf);
	relation_close(rel, AccessShareLock);
	return ddb_resp_end(&r, len);
}

/*
 * The table-level operations that take nothing but a table (DescribeTable,
 * DeleteTable, DescribeTimeToLive) and UpdateTable refuse a request without
 * a TableName, or with one shorter than 3 or longer than 255 characters,
 * before any other check, in CreateTable's words rather than as a member
 * constraint, as DynamoDB does.
 */
static void
require_table_name(DdbJson *req)
{
	const char *name = member_string(req, "TableName");
	const char *inner;

	if (name == NULL)
		validation_error(DDB_MSG_REQUIRED_PARAMETER, "TableName");
	/* a table's ARN (ddb_valerr_table_name) is checked by its name */
	if ((inner = ddb_table_name_in_arn(name)) != NULL)
		name = inner;
	if (strlen(name) < 3 || strlen(name) > 255)
		validation_error("TableName must be at least 3 characters long and at most 255 characters long");
}

/*
 * The table a DescribeTable or DeleteTable names, opened; its
 * ResourceNotFoundException names the table, as DynamoDB's does.
 */
static Relation
open_named_table(DdbJson *req)
{
	DdbValErrors e;
	const char *name;

	require_table_name(req);
	ddb_valerr_init(&e);
	name = check_table_name(&e, req, "TableName");
	ddb_valerr_raise(&e);
	return ddb_table_open_named(name, ACL_SELECT);
}

static char *
op_describe_table(DdbJson *req, int *len)
{
	Relation	rel = open_named_table(req);
	DdbResponse	r;

	ddb_resp_begin(&r);
	ddb_resp_key(&r, "Table");
	ddb_describe_table_json(rel, "ACTIVE", &r.buf);
	relation_close(rel, AccessShareLock);
	return ddb_resp_end(&r, len);
}

/*
 * The table of a backup operation's TableName (a name or, as DynamoDB
 * allows there, the table's ARN), opened; DynamoDB's TableNotFoundException
 * when there is none.
 */
static Relation
open_backup_table(DdbJson *req, DdbValErrors *e)
{
	const char *name = member_string(req, "TableName");
	Oid			relid;

	/* listed with the request's other member errors, gathered in e */
	if (name == NULL)
		ddb_valerr_add(e, NULL, "tableName", "Member must not be null");
	else if (strlen(name) < 1 || strlen(name) > 1024)
		ddb_valerr_add(e, name, "tableName", strlen(name) < 1 ?
					   "Member must have length greater than or equal to 1" :
					   "Member must have length less than or equal to 1024");
	ddb_valerr_raise(e);
	relid = ddb_table_lookup(name);	/* (its ARN too) */
	if (!OidIsValid(relid))
		ddb_raise(DDB_ERRCODE_TABLE_NOT_FOUND, "TableNotFoundException", "Table not found: %s", name);
	return ddb_open_table(relid, ACL_SELECT);
}

/*
 * The description of a table's continuous backups: as DynamoDB's table has
 * them from its creation (ENABLED), without point-in-time recovery, which
 * ddb does not do per table (PostgreSQL's own is the whole cluster's, from
 * archived WAL).
 */
static char *
continuous_backups_response(int *len)
{
	DdbResponse	r;

	ddb_resp_begin(&r);
	ddb_resp_key(&r, "ContinuousBackupsDescription");
	appendStringInfoString(&r.buf, "{\"ContinuousBackupsStatus\":\"ENABLED\","
						   "\"PointInTimeRecoveryDescription\":{\"PointInTimeRecoveryStatus\":\"DISABLED\"}}");
	return ddb_resp_end(&r, len);
}

/* DescribeContinuousBackups {TableName}: what Terraform reads of every table */
static char *
op_describe_continuous_backups(DdbJson *req, int *len)
{
	DdbValErrors e;

	ddb_valerr_init(&e);
	relation_close(open_backup_table(req, &e), AccessShareLock);
	return continuous_backups_response(len);
}

/*
 * UpdateContinuousBackups {TableName, PointInTimeRecoverySpecification}:
 * turning point-in-time recovery off is what every table already is;
 * turning it on is refused, saying why, rather than claimed.
 */
static char *
op_update_continuous_backups(DdbJson *req, int *len)
{
	DdbJson    *spec = member_struct(req, "PointInTimeRecoverySpecification",
									 "PointInTimeRecoverySpecification");
	DdbJson    *en = spec ? ddb_json_member(spec, "PointInTimeRecoveryEnabled") : NULL;
	Relation	rel;
	DdbValErrors e;

	/* (the specification's error first, as ddb reported it alone before) */
	ddb_valerr_init(&e);
	if (spec == NULL || en == NULL)
		ddb_valerr_add(&e, NULL, spec ? "pointInTimeRecoverySpecification.pointInTimeRecoveryEnabled" :
					   "pointInTimeRecoverySpecification", "Member must not be null");
	rel = open_backup_table(req, &e);
	if (!pg_class_ownercheck(RelationGetRelid(rel), GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, RelationGetRelationName(rel));
	relation_close(rel, AccessShareLock);
	if (ddb_json_check_bool(en))
		validation_error("One or more parameter values were invalid: ddb does not provide point in time recovery per table; "
						 "PostgreSQL's point-in-time recovery (base backups and archived WAL) covers the whole server");
	return continuous_backups_response(len);
}

/* UpdateTimeToLive: {"TableName", "TimeToLiveSpecification": {...}} */
static char *
op_update_time_to_live(DdbJson *req, int *len)
{
	DdbValErrors e;
	DdbJson    *spec;
	const char *attr = NULL;
	bool		enabled = false;
	Relation	rel;
	DdbResponse	r;

	ddb_valerr_init(&e);
	(void) check_table_name(&e, req, "TableName");
	spec = member_struct(req, "TimeToLiveSpecification", "TimeToLiveSpecification");
	if (spec == NULL)
		ddb_valerr_add(&e, NULL, "timeToLiveSpecification", "Member must not be null");
	else
	{
		attr = member_string(spec, "AttributeName");
		if (ddb_json_member(spec, "Enabled") == NULL)
			ddb_valerr_add(&e, NULL, "timeToLiveSpecification.enabled", "Member must not be null");
		else
			enabled = member_bool(spec, "Enabled", false);
		if (attr == NULL)
			ddb_valerr_add(&e, NULL, "timeToLiveSpecification.attributeName",
						   "Member must not be null");
	}
	ddb_valerr_raise(&e);
	rel = open_named_table(req);
	ddb_ttl_update_core(rel, attr, enabled);
	ddb_resp_begin(&r);
	ddb_resp_key(&r, "TimeToLiveSpecification");
	appendStringInfoString(&r.buf, "{\"AttributeName\":");
	ddb_json_cstring(&r.buf, attr);
	appendStringInfo(&r.buf, ",\"Enabled\":%s}", enabled ? "true" : "false");
	relation_close(rel, AccessShareLock);
	return ddb_resp_end(&r, len);
}

/* DescribeTimeToLive: {"TableName"} */
static char *
op_describe_time_to_live(DdbJson *req, int *len)
{
	Relation	rel = open_named_table(req);
	DdbResponse	r;

	ddb_resp_begin(&r);
	ddb_resp_key(&r, "TimeToLiveDescription");
	ddb_ttl_describe_json(rel, &r.buf);
	relation_close(rel, AccessShareLock);
	return ddb_resp_end(&r, len);
}

static char *
op_delete_table(DdbJson *req, int *len)
{
	Relation	rel = open_named_table(req);
	DdbResponse	r;

	ddb_resp_begin(&r);
	ddb_resp_key(&r, "TableDescription");
	ddb_describe_table_json(rel, "DELETING", &r.buf);
	ddb_delete_table_core(rel);
	return ddb_resp_end(&r, len);
}

static char *
op_list_tables(DdbJson *req, int *len)
{
	DdbValErrors e;
	const char *start = member_string(req, "ExclusiveStartTableName");
	double		limit = 100;
	bool		has_limit = member_number(req, "Limit", "Integer", &limit);
	List	   *names;
	ListCell   *lc;
	DdbResponse	r;
	int			n = 0;
	const char *last = NULL;

	ddb_valerr_init(&e);
	if (start != NULL)
		ddb_valerr_name(&e, start, "exclusiveStartTableName");
	if (has_limit && limit < 1)
		ddb_valerr_add(&e, psprintf("%.0f", limit), "limit",
					   "Member must have value greater than or equal to 1");
	if (has_limit && limit > 100)
		ddb_valerr_add(&e, psprintf("%.0f", limit), "limit",
					   "Member must have value less than or equal to 100");
	ddb_valerr_raise(&e);

	names = ddb_list_table_names();
	ddb_resp_begin(&r);
	ddb_resp_key(&r, "TableNames");
	appendStringInfoChar(&r.buf, '[');
	foreach(lc, names)
	{
		const char *name = lfirst(lc);

		/*
		 * A table made in SQL under a name DynamoDB cannot spell (too short,
		 * or with other characters) fails every request that names it: a
		 * client that lists the tables and describes each would stop at it.
		 */
		if (strlen(name) < 3 || !ddb_valid_name_chars(name))
			continue;
		if (start != NULL && strcmp(name, start) <= 0)
			continue;
		if (n >= limit)
			break;
		if (n++ > 0)
			appendStringInfoChar(&r.buf, ',');
		ddb_json_cstring(&r.buf, name);
		last = name;
	}
	appendStringInfoChar(&r.buf, ']');
	/* more names follow: where the next page starts */
	if (lc != NULL && last != NULL)
	{
		ddb_resp_key(&r, "LastEvaluatedTableName");
		ddb_json_cstring(&r.buf, last);
	}
	return ddb_resp_end(&r, len);
}

/* The key type of an attribute in AttributeDefinitions, or NULL. */
static const char *
defined_type(DdbJson *defs, const char *name)
{
	for (int i = 0; defs && i < defs->n; i++)
	{
		DdbJson    *d = defs->elems[i];
		const char *n,
				   *t;

		ddb_json_check_value_struct(d, "AttributeDefinition");
		n = member_string(d, "AttributeName");
		t = member_string(d, "AttributeType");
		if (n && t && strcmp(n, name) == 0)
			return t;
	}
	return NULL;
}

/*
 * GlobalSecondaryIndexUpdates' Create, or an index of CreateTable's
 * GlobalSecondaryIndexes or LocalSecondaryIndexes (kind): a new index
 * from its definition.
 */
static void
create_index(Relation rel, DdbJson *defs, DdbJson *c, char kind)
{
	const char *index_name = member_string(c, "IndexName");
	DdbJson    *ks = member_list(c, "KeySchema");
	DdbJson    *pj = member_struct(c, "Projection", "Projection");
	const char *keys[2] = {NULL, NULL};
	const char *types[2] = {NULL, NULL};
	const char *ptype = pj ? member_string(pj, "ProjectionType") : NULL;
	DdbJson    *nonkey = pj ? member_list(pj, "NonKeyAttributes") : NULL;
	ArrayType  *arr = NULL;

	/* the callers checked these members with index_member_errors */
	if (index_name == NULL || ks == NULL || pj == NULL || ks->n < 1 || ks->n > 2)
		elog(ERROR, "index definition was not checked");
	for (int i = 0; i < ks->n; i++)
	{
		const char *kt;

		ddb_json_check_value_struct(ks->elems[i], "KeySchemaElement");
		keys[i] = member_string(ks->elems[i], "AttributeName");
		kt = member_string(ks->elems[i], "KeyType");
		if (keys[i] == NULL || kt == NULL)
			validation_error("One or more parameter values were invalid: Invalid KeySchema");
		if (strcmp(kt, i == 0 ? "HASH" : "RANGE") != 0)
			validation_error("Invalid KeySchema: The %s KeySchemaElement is not a %s key type",
							 i == 0 ? "first" : "second", i == 0 ? "HASH" : "RANGE");
		types[i] = defined_type(defs, keys[i]);
		if (types[i] == NULL)
		{
			StringInfoData dn;

			initStringInfo(&dn);
			for (int d = 0; defs && d < defs->n; d++)
			{
				const char *n = member_string(defs->elems[d], "AttributeName");

				appendStringInfo(&dn, "%s%s", d ? ", " : "", n ? n : "null");
			}
			validation_error("One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions. Keys: [%s%s%s], AttributeDefinitions: [%s]",
							 keys[0], keys[1] ? ", " : "", keys[1] ? keys[1] : "", dn.data);
		}
	}
	if (keys[1] && strcmp(keys[0], keys[1]) == 0)
		validation_error("Both the Hash Key and the Range Key element in the KeySchema have the same name");
	if (kind == DDB_INDEX_LOCAL)
	{
		const char *table_pk = ddb_table_key_name(rel, 0);

		if (strcmp(keys[0], table_pk) != 0)
			validation_error("One or more parameter values were invalid: Index KeySchema does not have the same leading hash key as table KeySchema for index: %s. index hash key: %s, table hash key: %s",
							 index_name, keys[0], table_pk);
		if (keys[1] == NULL)
			validation_error("One or more parameter values were invalid: Index KeySchema does not have a range key for index: %s",
							 index_name);
	}
	if (ptype == NULL)
		validation_error("One or more parameter values were invalid: Unknown ProjectionType: null");
	if (nonkey && strcmp(ptype, "INCLUDE") != 0)
		validation_error("One or more parameter values were invalid: ProjectionType is %s, but NonKeyAttributes is specified",
						 ptype);
	if (nonkey)
	{
		Datum	   *elems = palloc(sizeof(Datum) * Max(nonkey->n, 1));

		for (int i = 0; i < nonkey->n; i++)
		{
			ddb_json_check_string(nonkey->elems[i]);
			elems[i] = CStringGetTextDatum(nonkey->elems[i]->str);
		}
		arr = construct_array(elems, nonkey->n, TEXTOID, -1, false, TYPALIGN_INT);
	}
	ddb_index_create(RelationGetRelid(rel), kind, pstrdup(index_name), pstrdup(keys[0]), types[0],
					 keys[1] ? pstrdup(keys[1]) : NULL, types[1], pstrdup(ptype), arr);
}

/* The IndexName of a GlobalSecondaryIndexUpdates element, whichever action, or NULL */
static const char *
gsi_update_index_name(DdbJson *u)
{
	static const char *const actions[] = {"Update", "Create", "Delete"};

	if (u->type != DDB_JSON_OBJECT)
		return NULL;
	for (int a = 0; a < lengthof(actions); a++)
	{
		DdbJson    *spec = ddb_json_get(u, actions[a]);
		DdbJson    *name = spec && spec->type == DDB_JSON_OBJECT ? ddb_json_get(spec, "IndexName") : NULL;

		if (name && name->type == DDB_JSON_STRING)
			return name->str;
	}
	return NULL;
}

/*
 * The throughput of UpdateTable's index changes, against the table as it
 * is: a Create has its own exactly when the table is (or becomes)
 * PROVISIONED; an Update names an existing global index of a PROVISIONED
 * table and changes something; a table going PROVISIONED gets every index's
 * throughput in the same request.  The texts are DynamoDB's as recorded by
 * dynalite (its Action Blocked message and the per-index lists).
 */
static void
check_index_throughput(Relation rel, DdbJson *updates, int64 *idx_rcu, int64 *idx_wcu,
					   bool was_provisioned, bool provisioned)
{
	const char **names;
	int			nnames;
	StringInfoData missing;

	for (int i = 0; updates && i < updates->n; i++)
	{
		DdbJson    *u = updates->elems[i];
		DdbJson    *c = ddb_json_member(u, "Create");
		DdbJson    *up = ddb_json_member(u, "Update");
		const char *iname;
		int64		cur_rcu,
					cur_wcu;

		if (c)
		{
			index_throughput_allowed(c, member_string(c, "IndexName"), provisioned);
			if (provisioned)
				check_throughput_bounds(idx_rcu[i], idx_wcu[i]);
		}
		if (up == NULL || c != NULL || ddb_json_member(u, "Delete") != NULL)
			continue;
		iname = member_string(up, "IndexName");
		if (!ddb_gsi_throughput(rel, iname, &cur_rcu, &cur_wcu))
			ddb_raise(DDB_ERRCODE_RESOURCE_NOT_FOUND, "ResourceNotFoundException",
					  DDB_MSG_RESOURCE_NOT_FOUND);
		index_throughput_allowed(up, iname, provisioned);
		if (idx_rcu[i] > INT64CONST(1000000000000) || idx_wcu[i] > INT64CONST(1000000000000))
			validation_error("This operation cannot be performed with given input values. Please contact DynamoDB service team for more info: Action Blocked: IndexUpdate");
		if (was_provisioned && idx_rcu[i] == cur_rcu && idx_wcu[i] == cur_wcu)
			refuse_unchanged_throughput(cur_rcu, idx_rcu[i], cur_wcu, idx_wcu[i]);
	}
	if (was_provisioned || !provisioned)
		return;
	/* going PROVISIONED: every index not dropped here gets its throughput */
	nnames = ddb_gsi_names(rel, &names);
	initStringInfo(&missing);
	for (int n = 0; n < nnames; n++)
	{
		bool		given = false;

		for (int i = 0; updates && i < updates->n && !given; i++)
		{
			const char *other = gsi_update_index_name(updates->elems[i]);

			given = other && strcmp(other, names[n]) == 0 &&
				ddb_json_member(updates->elems[i], "Create") == NULL;
		}
		if (!given)
			appendStringInfo(&missing, "%s%s", missing.len ? "," : "", names[n]);
	}
	if (missing.len)
		validation_error("One or more parameter values were invalid: ProvisionedThroughput must be specified for index: %s",
						 missing.data);
}

static char *
op_update_table(DdbJson *req, int *len)
{
	DdbValErrors e;
	const char *billing;
	DdbJson    *pt = member_struct(req, "ProvisionedThroughput", "ProvisionedThroughput");
	DdbJson    *updates = member_list(req, "GlobalSecondaryIndexUpdates");
	DdbJson    *defs = member_list(req, "AttributeDefinitions");
	int64		rcu = 0,
				wcu = 0;
	Relation	rel;
	Oid			relid;
	const DdbTableInfo *info;
	DdbResponse	r;
	bool		has_stream;
	const char *stream_view;
	int64	   *idx_rcu;
	int64	   *idx_wcu;
	int			nchanges = 0;
	bool		was_provisioned;
	bool		provisioned;

	require_table_name(req);
	ddb_valerr_init(&e);
	(void) check_table_name(&e, req, "TableName");
	billing = check_enum(&e, member_string(req, "BillingMode"), "BillingMode", billing_set,
						 "PROVISIONED, PAY_PER_REQUEST");
	if (pt)
		check_throughput(&e, pt, "provisionedThroughput", &rcu, &wcu);
	idx_rcu = palloc0(sizeof(int64) * (updates ? Max(updates->n, 1) : 1));
	idx_wcu = palloc0(sizeof(int64) * (updates ? Max(updates->n, 1) : 1));
	for (int i = 0; updates && i < updates->n; i++)
	{
		DdbJson    *u = updates->elems[i];
		char	   *path = psprintf("globalSecondaryIndexUpdates.%d.member", i + 1);
		DdbJson    *c,
				   *d,
				   *up;

		ddb_json_check_value_struct(u, "GlobalSecondaryIndexUpdate");
		c = member_struct(u, "Create", "CreateGlobalSecondaryIndexAction");
		d = member_struct(u, "Delete", "DeleteGlobalSecondaryIndexAction");
		up = member_struct(u, "Update", "UpdateGlobalSecondaryIndexAction");

		/*
		 * An element is one action (DynamoDB's docs: "Represents one of the
		 * following"); ddb's words, as DynamoDB's are not documented
		 */
		if ((c != NULL) + (d != NULL) + (up != NULL) > 1)
			validation_error("One or more parameter values were invalid: Only one of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, GlobalSecondaryIndexUpdate.Delete may be specified");
		if (c == NULL && d == NULL && up == NULL)
			validation_error("One or more parameter values were invalid: One of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, GlobalSecondaryIndexUpdate.Delete must not be null");
		if (c)
		{
			DdbJson    *cpt = member_struct(c, "ProvisionedThroughput", "ProvisionedThroughput");

			index_member_errors(&e, c, psprintf("%s.create", path));
			if (cpt)
				check_throughput(&e, cpt, psprintf("%s.create.provisionedThroughput", path),
								 &idx_rcu[i], &idx_wcu[i]);
		}
		if (up)
		{
			const char *iname = member_string(up, "IndexName");
			DdbJson    *upt = member_struct(up, "ProvisionedThroughput", "ProvisionedThroughput");

			if (iname == NULL)
				ddb_valerr_add(&e, NULL, psprintf("%s.update.indexName", path), "Member must not be null");
			else
				ddb_valerr_name(&e, iname, psprintf("%s.update.indexName", path));
			if (upt == NULL)
				ddb_valerr_add(&e, NULL, psprintf("%s.update.provisionedThroughput", path),
							   "Member must not be null");
			else
				check_throughput(&e, upt, psprintf("%s.update.provisionedThroughput", path),
								 &idx_rcu[i], &idx_wcu[i]);
		}
		nchanges += (c != NULL || d != NULL);
		if (d)
		{
			const char *iname = member_string(d, "IndexName");

			if (iname == NULL)
				ddb_valerr_add(&e, NULL, psprintf("%s.delete.indexName", path), "Member must not be null");
			else
				ddb_valerr_name(&e, iname, psprintf("%s.delete.indexName", path));
		}
	}
	check_stream_specification(&e, req);
	ddb_valerr_raise(&e);
	if (pt == NULL && billing == NULL && (updates == NULL || updates->n == 0) &&
		ddb_json_member(req, "StreamSpecification") == NULL && ddb_json_member(req, "SSESpecification") == NULL)
		validation_error("At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates or SSESpecification or ReplicaUpdates is required");
	if (billing && strcmp(billing, "PROVISIONED") == 0 && pt == NULL)
		validation_error("One or more parameter values were invalid: ProvisionedThroughput must be specified when BillingMode is PROVISIONED");
	if (billing && strcmp(billing, "PAY_PER_REQUEST") == 0 && pt != NULL)
		validation_error("One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST");
	if (pt != NULL)
		check_throughput_bounds(rcu, wcu);
	has_stream = stream_specification(req, &stream_view, false);
	/*
	 * Changes DynamoDB will not make in one request, in its words: a new or
	 * dropped index, the table's throughput and the stream's status are
	 * each a request of their own (index Updates and BillingMode combine).
	 */
	if (nchanges > 0 && pt != NULL)
		validation_error("One or more parameter values were invalid: You cannot create or delete index while updating table IOPS");
	if (has_stream && pt != NULL)
		validation_error("One or more parameter values were invalid: You cannot modify stream status while updating table IOPS");
	if (has_stream && nchanges > 0)
		validation_error("One or more parameter values were invalid: You cannot create or delete index while changing stream status");
	/* one update per index (a request check), then one index change at a time */
	for (int i = 0; updates && i < updates->n; i++)
	{
		const char *iname = gsi_update_index_name(updates->elems[i]);

		for (int i2 = 0; iname && i2 < i; i2++)
		{
			const char *other = gsi_update_index_name(updates->elems[i2]);

			if (other && strcmp(other, iname) == 0)
				validation_error("One or more parameter values were invalid: Only one global secondary index update per index is allowed simultaneously. Index: %s",
								 iname);
		}
	}
	/* (several Updates of throughput are one change) */
	if (nchanges > 1)
		ddb_raise(DDB_ERRCODE_LIMIT_EXCEEDED, "LimitExceededException",
				  "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table");

	/* a missing table is named, as DescribeTable and DeleteTable name it */
	rel = open_named_table(req);
	relid = RelationGetRelid(rel);
	if (!pg_class_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, RelationGetRelationName(rel));
	info = ddb_table_info(relid);
	was_provisioned = info->billing_mode && strcmp(info->billing_mode, "PROVISIONED") == 0;
	provisioned = billing ? strcmp(billing, "PROVISIONED") == 0 : was_provisioned;
	if (pt != NULL && billing == NULL && info->billing_mode && strcmp(info->billing_mode, "PAY_PER_REQUEST") == 0)
		validation_error("One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST");
	/* the same throughput again changes nothing, which DynamoDB refuses */
	if (pt != NULL && was_provisioned && rcu == info->read_capacity && wcu == info->write_capacity)
		refuse_unchanged_throughput(info->read_capacity, rcu, info->write_capacity, wcu);
	check_index_throughput(rel, updates, idx_rcu, idx_wcu, was_provisioned, provisioned);

	/* billing settings: stored and echoed */
	if (billing != NULL || pt != NULL)
	{
		const char *mode = billing ? billing : info->billing_mode;
		Oid			argtypes[4] = {OIDOID, TEXTOID, INT8OID, INT8OID};
		Datum		args[4];

		args[0] = ObjectIdGetDatum(relid);
		args[1] = CStringGetTextDatum(mode);
		args[2] = Int64GetDatum(strcmp(mode, "PROVISIONED") == 0 ? rcu : 0);
		args[3] = Int64GetDatum(strcmp(mode, "PROVISIONED") == 0 ? wcu : 0);
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		/*
		 * billing_changed: when the table last went on demand, which
		 * DynamoDB keeps reporting after it goes back to PROVISIONED (a
		 * table created on demand: since its creation).
		 */
		ddb_catalog_exec("WITH u AS (UPDATE ddb_internal.tables t SET "
						 "billing_changed = CASE WHEN $2 = 'PAY_PER_REQUEST' AND t.billing_mode <> $2 "
						 "THEN now() WHEN t.billing_mode = 'PAY_PER_REQUEST' AND $2 <> t.billing_mode "
						 "THEN coalesce(t.billing_changed, t.created) ELSE t.billing_changed END, "
						 "billing_mode = $2, read_capacity = $3, write_capacity = $4, auto = false "
						 "WHERE relid = $1 RETURNING 1) "
						 "INSERT INTO ddb_internal.tables (relid, billing_mode, read_capacity, write_capacity) "
						 "SELECT $1, $2, $3, $4 WHERE NOT EXISTS (SELECT FROM u)",
						 4, argtypes, args, NULL, SPI_OK_INSERT);
		SPI_finish();
		CacheInvalidateRelcache(rel);
		CommandCounterIncrement();
		/* an on-demand table's indexes have no throughput either */
		if (was_provisioned && !provisioned)
			ddb_gsi_set_throughput(rel, NULL, 0, 0);
	}

	/* index changes */
	for (int i = 0; updates && i < updates->n; i++)
	{
		DdbJson    *u = updates->elems[i];
		DdbJson    *c,
				   *d,
				   *up;

		ddb_json_check_value_struct(u, "GlobalSecondaryIndexUpdate");
		c = member_struct(u, "Create", "CreateGlobalSecondaryIndexAction");
		d = member_struct(u, "Delete", "DeleteGlobalSecondaryIndexAction");
		up = member_struct(u, "Update", "UpdateGlobalSecondaryIndexAction");
		/* (exactly one of the three: checked with the request's members) */
		if (c)
		{
			create_index(rel, defs, c, DDB_INDEX_GLOBAL);
			if (provisioned)
				ddb_gsi_set_throughput(rel, member_string(c, "IndexName"), idx_rcu[i], idx_wcu[i]);
		}
		else if (d)
		{
			/* its IndexName was checked with the request's members */
			ddb_drop_gsi_core(relid, member_string(d, "IndexName"));
		}
		else
			ddb_gsi_set_throughput(rel, member_string(up, "IndexName"), idx_rcu[i], idx_wcu[i]);
	}

	/* StreamSpecification: enable or disable the stream */
	if (has_stream)
		ddb_stream_set(rel, stream_view);

	ddb_resp_begin(&r);
	ddb_resp_key(&r, "TableDescription");
	ddb_describe_table_json(rel, "ACTIVE", &r.buf);
	relation_close(rel, AccessShareLock);
	return ddb_resp_end(&r, len);
}

/* DescribeLimits: DynamoDB's default account quotas. */
static char *
op_describe_limits(DdbJson *req, int *len)
{
	DdbResponse	r;

	ddb_resp_begin(&r);
	appendStringInfoString(&r.buf, "\"AccountMaxReadCapacityUnits\":80000,"
						   "\"AccountMaxWriteCapacityUnits\":80000,"
						   "\"TableMaxReadCapacityUnits\":40000,"
						   "\"TableMaxWriteCapacityUnits\":40000");
	r.first = false;
	return ddb_resp_end(&r, len);
}

const char *ddb_request_address = NULL;

/*
 * DescribeEndpoints: over HTTP, this server, by the address the request was
 * sent to -- a client with endpoint discovery on (the Java SDK's
 * endpointDiscoveryEnabled) then sends its next requests to the same
 * place, never to the region's DynamoDB, which the name
 * dynamodb.<region>.amazonaws.com would send it to.  Through SQL there is
 * no request address, and the answer names the region's endpoint, as the
 * health check does.
 */
static char *
op_describe_endpoints(DdbJson *req, int *len)
{
	DdbResponse	r;

	ddb_resp_begin(&r);
	ddb_resp_key(&r, "Endpoints");
	appendStringInfoString(&r.buf, "[{\"Address\":");
	ddb_json_cstring(&r.buf, ddb_request_address ? ddb_request_address :
					 psprintf("dynamodb.%s.amazonaws.com", ddb_region));
	appendStringInfoString(&r.buf, ",\"CachePeriodInMinutes\":1440}]");
	return ddb_resp_end(&r, len);
}

/*
 * The table a ResourceArn names (arn:aws:dynamodb:<region>:<account>:
 * table/<name>), opened; DynamoDB's errors for a malformed or unknown ARN.
 *
 * TagResource and UntagResource also take a list, 'list' (already read, so
 * that a malformed one is refused first): DynamoDB checks that it is there
 * once the ARN has the shape of one, and that it is not empty before it
 * looks the table up.  Only UntagResource's unknown table is the bare
 * "Requested resource not found".
 */
static Relation
open_arn_table(DdbJson *req, const char *action, AclMode mode,
			   DdbJson *list, const char *listname, const char *emptymsg)
{
	const char *arn = member_string(req, "ResourceArn");
	const char *slash;
	const char *prefix = "arn:aws:dynamodb:";
	int			colons = 0;
	Oid			relid;

	if (arn == NULL)
		validation_error("Invalid TableArn");
	for (const char *p = arn; *p; p++)
		colons += *p == ':';
	slash = strchr(arn, '/');
	if (colons < 5 || slash == NULL)
		ddb_raise(DDB_ERRCODE_ACCESS_DENIED, "AccessDeniedException",
				  "User is not authorized to perform: dynamodb:%s on resource: %s", action, arn);
	/*
	 * Raised alone, after the ARN's checks, as dynalite records DynamoDB
	 * doing (the operation's own checks, not its request model's: with the
	 * list absent there is no other member error to list with it).
	 */
	if (listname && list == NULL)
		validation_error(DDB_MSG_VALIDATION_ERRORS, 1, "",
						 psprintf(DDB_MSG_CONSTRAINT, "null", listname, "Member must not be null"));
	if (strncmp(arn, prefix, strlen(prefix)) != 0 ||
		strncmp(slash - 6, ":table", 6) != 0 || strlen(slash + 1) < 3 || strchr(slash + 1, '/'))
		validation_error("Invalid TableArn: Invalid ResourceArn provided as input %s", arn);
	if (listname && list->n == 0)
		validation_error("%s", emptymsg);
	relid = ddb_table_lookup(slash + 1);
	if (!OidIsValid(relid) || strcmp(arn, ddb_table_arn(slash + 1)) != 0)
	{
		if (strcmp(action, "UntagResource") == 0)
			ddb_raise(DDB_ERRCODE_RESOURCE_NOT_FOUND, "ResourceNotFoundException",
					  DDB_MSG_RESOURCE_NOT_FOUND);
		ddb_raise(DDB_ERRCODE_RESOURCE_NOT_FOUND, "ResourceNotFoundException",
				  "Requested resource not found: ResourcArn: %s not found", arn);
	}
	return ddb_open_table(relid, mode);
}

/* Run a change of a table's tags (SPI: the catalog) and invalidate. */
static void
change_tags(Relation rel, const char *sql, Datum arg, Oid argtype)
{
	Oid			argtypes[2] = {OIDOID, argtype};
	Datum		args[2] = {ObjectIdGetDatum(RelationGetRelid(rel)), arg};

	if (!pg_class_ownercheck(RelationGetRelid(rel), GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, OBJECT_TABLE, RelationGetRelationName(rel));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	ddb_catalog_exec(sql, 2, argtypes, args, NULL, SPI_OK_INSERT);
	SPI_finish();
	CacheInvalidateRelcache(rel);
	CommandCounterIncrement();
}

/*
 * Is s made of the characters a tag may hold: "letters, white space, and
 * numbers, plus the following special characters: + - = . _ : /"
 * (DynamoDB's tagging restrictions)?  Exact for ASCII, where the white
 * space is the space (AWS's tag pattern's \p{Z}: no tab or newline); any
 * other character is taken as a letter, a number or a space, as ddb has
 * no Unicode character classes of its own.
 */
static bool
tag_chars_ok(const char *s)
{
	for (const unsigned char *c = (const unsigned char *) s; *c; c++)
		if (*c < 0x80 && !isalnum(*c) && strchr(" +-=._:/", *c) == NULL)
			return false;
	return true;
}

/* The pattern of tag_chars_ok, in the words of AWS's tag constraints */
#define TAG_CHARS_PATTERN	"Member must satisfy regular expression pattern: [\\p{L}\\p{Z}\\p{N}_.:/=+\\-]*"

/*
 * Refuse a tag key that starts with aws:, which "the user cannot assign"
 * (ddb's words: DynamoDB's are not documented).
 */
static void
check_tag_key_reserved(const char *k)
{
	if (pg_strncasecmp(k, "aws:", 4) == 0)
		validation_error("One or more parameter values were invalid: Tag key %s: the aws: prefix is reserved for AWS-assigned tags", k);
}

/*
 * The member constraints of a request's Tags ([{"Key", "Value"}, ...], as
 * TagResource and CreateTable take them), listed in e with the request's
 * others: every tag's, each tag's key before its value; then the aws:
 * prefix, which only AWS assigns (ddb's words: DynamoDB's are not
 * documented).
 */
static void
check_tags(DdbValErrors *e, DdbJson *tags)
{
	for (int i = 0; i < tags->n; i++)
	{
		const char *k,
				   *v;

		ddb_json_check_value_struct(tags->elems[i], "Tag");
		k = member_string(tags->elems[i], "Key");
		v = member_string(tags->elems[i], "Value");
		/* lengths in characters ("128 Unicode characters"), as PartiQL's */
		if (k == NULL)
			ddb_valerr_add(e, NULL, psprintf("tags.%d.member.key", i + 1), "Member must not be null");
		else if (k[0] == '\0' || pg_mbstrlen(k) > 128)
			ddb_valerr_add(e, k, psprintf("tags.%d.member.key", i + 1), k[0] == '\0' ?
						   "Member must have length greater than or equal to 1" :
						   "Member must have length less than or equal to 128");
		else if (!tag_chars_ok(k))
			ddb_valerr_add(e, k, psprintf("tags.%d.member.key", i + 1), TAG_CHARS_PATTERN);
		if (v == NULL)
			ddb_valerr_add(e, NULL, psprintf("tags.%d.member.value", i + 1), "Member must not be null");
		else if (pg_mbstrlen(v) > 256)
			ddb_valerr_add(e, v, psprintf("tags.%d.member.value", i + 1),
						   "Member must have length less than or equal to 256");
		else if (!tag_chars_ok(v))
			ddb_valerr_add(e, v, psprintf("tags.%d.member.value", i + 1), TAG_CHARS_PATTERN);
	}
	ddb_valerr_raise(e);
	for (int i = 0; i < tags->n; i++)
		check_tag_key_reserved(member_string(tags->elems[i], "Key"));
}

/* A request's Tags, checked (check_tags), as one jsonb object. */
static Jsonb *
request_tags(DdbJson *tags)
{
	JsonbParseState *ps = NULL;

	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	for (int i = 0; i < tags->n; i++)
	{
		const char *k = member_string(tags->elems[i], "Key");
		const char *v = member_string(tags->elems[i], "Value");
		JsonbValue	jk,
					jv;

		jk.type = jv.type = jbvString;
		jk.val.string.val = (char *) k;
		jk.val.string.len = strlen(k);
		jv.val.string.val = (char *) v;
		jv.val.string.len = strlen(v);
		pushJsonbValue(&ps, WJB_KEY, &jk);
		pushJsonbValue(&ps, WJB_VALUE, &jv);
	}
	return JsonbValueToJsonb(pushJsonbValue(&ps, WJB_END_OBJECT, NULL));
}

/* Add tags (request_tags) to a table's, within DynamoDB's limit of 50. */
static void
add_tags(Relation rel, Jsonb *tags)
{
	change_tags(rel, "WITH u AS (UPDATE ddb_internal.tables SET tags = tags || $2, auto = false "
				"WHERE relid = $1 RETURNING 1) "
				"INSERT INTO ddb_internal.tables (relid, tags) SELECT $1, $2 "
				"WHERE NOT EXISTS (SELECT FROM u)",
				JsonbPGetDatum(tags), JSONBOID);
	if (ddb_table_tag_count(RelationGetRelid(rel)) > 50)
		ddb_raise(DDB_ERRCODE_LIMIT_EXCEEDED, "LimitExceededException",
				  "The number of tags of a table may not exceed 50");
}

static char *
op_tag_resource(DdbJson *req, int *len)
{
	DdbJson    *tags = member_list(req, "Tags");
	DdbValErrors e;
	Relation	rel;
	DdbResponse	r;

	for (int i = 0; tags && i < tags->n; i++)
	{
		ddb_json_check_value_struct(tags->elems[i], "Tag");
		(void) member_string(tags->elems[i], "Key");
		(void) member_string(tags->elems[i], "Value");
	}
	rel = open_arn_table(req, "TagResource", ACL_SELECT, tags, "tags",
						 "Atleast one Tag needs to be provided as Input.");
	ddb_valerr_init(&e);
	check_tags(&e, tags);
	ddb_valerr_raise(&e);
	add_tags(rel, request_tags(tags));
	relation_close(rel, AccessShareLock);
	ddb_resp_begin(&r);
	return ddb_resp_end(&r, len);
}

static char *
op_untag_resource(DdbJson *req, int *len)
{
	DdbJson    *keys = member_list(req, "TagKeys");
	Relation	rel;
	Datum	   *elems;
	DdbResponse	r;

	for (int i = 0; keys && i < keys->n; i++)
		ddb_json_check_string(keys->elems[i]);
	rel = open_arn_table(req, "UntagResource", ACL_SELECT, keys, "tagKeys",
						 "Atleast one Tag Key needs to be provided as Input.");
	for (int i = 0; i < keys->n; i++)
		check_tag_key_reserved(keys->elems[i]->str);
	elems = palloc(sizeof(Datum) * keys->n);
	for (int i = 0; i < keys->n; i++)
		elems[i] = CStringGetTextDatum(keys->elems[i]->str);
	change_tags(rel, "WITH u AS (UPDATE ddb_internal.tables SET tags = tags - $2, auto = false "
				"WHERE relid = $1 RETURNING 1) "
				"INSERT INTO ddb_internal.tables (relid) SELECT $1 "
				"WHERE NOT EXISTS (SELECT FROM u) AND $2 IS NOT NULL",
				PointerGetDatum(construct_array(elems, keys->n, TEXTOID, -1, false, TYPALIGN_INT)),
				TEXTARRAYOID);
	relation_close(rel, AccessShareLock);
	ddb_resp_begin(&r);
	return ddb_resp_end(&r, len);
}

static char *
op_list_tags_of_resource(DdbJson *req, int *len)
{
	Relation	rel = open_arn_table(req, "ListTagsOfResource", ACL_SELECT, NULL, NULL, NULL);
	DdbResponse	r;

	(void) member_string(req, "NextToken");
	ddb_resp_begin(&r);
	ddb_resp_key(&r, "Tags");
	ddb_table_tags_json(RelationGetRelid(rel), &r.buf);
	relation_close(rel, AccessShareLock);
	return ddb_resp_end(&r, len);
}

/* ------------------------------------------------------------------------
 * Items
 * ------------------------------------------------------------------------
 */

/* ExpressionAttributeNames as the jsonb the expression parser takes. */
static Jsonb *
request_names(DdbJson *req)
{
	DdbJson    *j = ddb_json_member(req, "ExpressionAttributeNames");
	JsonbParseState *ps = NULL;

	if (j == NULL)
		return NULL;
	ddb_json_check_string_map(j);
	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	for (int i = 0; i < j->n; i++)
	{
		JsonbValue	k,
					v;

		if (j->elems[i]->type == DDB_JSON_NULL)
			continue;
		/* attribute names are C strings in the expression parser */
		if (ddb_has_nul(j->elems[i]->str, j->elems[i]->len))
			validation_error("ExpressionAttributeNames contains invalid value: ddb does not support U+0000 in attribute names for key %s",
							 j->keys[i]);
		k.type = jbvString;
		k.val.string.val = j->keys[i];
		k.val.string.len = j->keylens[i];
		v.type = jbvString;
		v.val.string.val = j->elems[i]->str;
		v.val.string.len = j->elems[i]->len;
		pushJsonbValue(&ps, WJB_KEY, &k);
		pushJsonbValue(&ps, WJB_VALUE, &v);
	}
	return JsonbValueToJsonb(pushJsonbValue(&ps, WJB_END_OBJECT, NULL));
}

/* A key or item member (Key, Item, ExclusiveStartKey) as a document-form item. */
static Jsonb *
request_item(DdbJson *req, const char *name)
{
	DdbJson    *j = member_attribute_map(req, name);

	return j ? ddb_typed_item_jsonb(j) : NULL;
}

/*
 * A request's expressions, from its expression members or translated from
 * its legacy members (ddb_legacy.c), with DynamoDB's rules on mixing them.
 */
typedef struct ReqExpr
{
	const char *projection;
	const char *condition;
	const char *update;
	const char *filter;
	const char *key_condition;
	Jsonb	   *names;
	Jsonb	   *vals;
	bool		legacy;
} ReqExpr;

/* Two placeholder maps as one (either may be NULL). */
static Jsonb *
merge_maps(Jsonb *a, Jsonb *b)
{
	if (a == NULL || b == NULL)
		return a ? a : b;
	return DatumGetJsonbP(DirectFunctionCall2(jsonb_concat, JsonbPGetDatum(a),
											  JsonbPGetDatum(b)));
}

/*
 * expr: the operation's expression members; legacy: its non-expression
 * members (NULL-terminated lists).
 */
static void
request_expressions(DdbJson *req, ReqExpr *x, const char *const *expr,
					const char *const *legacy)
{
	StringInfoData used_expr,
				used_legacy,
				val_exprs;
	int			nval_exprs = 0;
	bool		any_expr = false;

	memset(x, 0, sizeof(ReqExpr));
	initStringInfo(&used_expr);
	initStringInfo(&used_legacy);
	initStringInfo(&val_exprs);
	for (int i = 0; expr[i]; i++)
	{
		const char *v = member_string(req, expr[i]);

		if (v != NULL)
		{
			appendStringInfo(&used_expr, "%s%s", used_expr.len ? ", " : "", expr[i]);
			any_expr = true;
		}
		if (strcmp(expr[i], "ProjectionExpression") != 0)
		{
			appendStringInfo(&val_exprs, "%s%s", nval_exprs ? " and " : "", expr[i]);
			nval_exprs++;
		}
	}
	for (int i = 0; legacy[i]; i++)
	{
		/* a Query may combine KeyConditions with the other expressions */
		if (strcmp(legacy[i], "KeyConditions") == 0 &&
			ddb_json_member(req, "KeyConditionExpression") == NULL)
			continue;
		if (ddb_json_member(req, legacy[i]) != NULL)
			appendStringInfo(&used_legacy, "%s%s", used_legacy.len ? ", " : "", legacy[i]);
	}
	if (any_expr && used_legacy.len)
		validation_error(DDB_MSG_MIXED_PARAMETERS, used_legacy.data, used_expr.data);

	x->names = request_names(req);
	{
		DdbJson    *vals = member_attribute_map(req, "ExpressionAttributeValues");
		bool		any_val_expr = false;

		for (int i = 0; expr[i]; i++)
			if (strcmp(expr[i], "ProjectionExpression") != 0 && ddb_json_member(req, expr[i]) != NULL)
				any_val_expr = true;
		ddb_check_expression_use(any_expr, any_val_expr, val_exprs.data,
								 x->names != NULL, vals != NULL);
		if (vals != NULL)
			x->vals = ddb_typed_values_jsonb(vals);
	}
	x->projection = member_string(req, "ProjectionExpression");
	x->condition = member_string(req, "ConditionExpression");
	x->update = member_string(req, "UpdateExpression");
	x->filter = member_string(req, "FilterExpression");
	x->key_condition = member_string(req, "KeyConditionExpression");

	/*
	 * The legacy members the operation takes, as expressions (any other is
	 * ignored, like every member an operation does not know).
	 */
	{
		DdbLegacy	lx;
		DdbJson    *j;
		const char *condop = takes_conditional_operator(legacy) ?
			member_string(req, "ConditionalOperator") : NULL;

		ddb_legacy_init(&lx);
		if ((j = legacy_member(req, legacy, "AttributesToGet")) != NULL)
			x->projection = ddb_legacy_projection(&lx, j);
		if ((j = legacy_member(req, legacy, "Expected")) != NULL)
			x->condition = ddb_legacy_expected(&lx, j, condop);
		if ((j = legacy_member(req, legacy, "AttributeUpdates")) != NULL)
			x->update = ddb_legacy_updates(&lx, j);
		if ((j = legacy_member(req, legacy, "QueryFilter")) != NULL)
			x->filter = ddb_legacy_conditions(&lx, j, condop, "queryFilter");
		else if ((j = legacy_member(req, legacy, "ScanFilter")) != NULL)
			x->filter = ddb_legacy_conditions(&lx, j, condop, "scanFilter");
		if (x->key_condition == NULL && (j = legacy_member(req, legacy, "KeyConditions")) != NULL)
		{
			x->key_condition = ddb_legacy_key_conditions(&lx, j);
			if (x->key_condition == NULL)
				validation_error("Conditions can be of length 1 or 2 only");
		}
		if (lx.nnames > 0 || lx.nvalues > 0)
		{
			/* (only KeyConditions may meet expressions: merge the placeholders) */
			x->legacy = true;
			x->names = merge_maps(x->names, ddb_legacy_names(&lx));
			x->vals = merge_maps(x->vals, ddb_legacy_values(&lx));
		}
	}
}

/* Parse a request's condition, update and projection (cached: ddb_api.c). */
static void
parse_expressions(ReqExpr *x, DdbCondition **cond, DdbUpdate **upd, DdbProjection **proj)
{
	const DdbParsedExpressions *p;

	p = ddb_parse_expressions(cond ? x->condition : NULL, upd ? x->update : NULL,
							  proj ? x->projection : NULL, x->names, x->vals);
	if (upd && x->update)
		*upd = p->upd;
	if (cond && x->condition)
		*cond = p->cond;
	if (proj && x->projection)
		*proj = p->proj;
}

/* ------------------------------------------------------------------------
 * Consumed capacity, as DynamoDB bills it: reads in 4 KB units (half for
 * an eventually consistent read), writes in 1 KB units, at least one unit
 * per item; a write also costs one write per index entry it puts or
 * deletes (see ddb_gsi_write_units).
 * ------------------------------------------------------------------------
 */
typedef struct Capacity
{
	const char *mode;			/* NULL/NONE, TOTAL or INDEXES */
	bool		read;
	double		table;
	int			nindexes;
	const char *index_names[32];
	double		index_units[32];
	bool		index_local[32];	/* a local secondary index */
} Capacity;

static double
read_units(int64 bytes, bool consistent)
{
	double		units = Max(1, (bytes + 4095) / 4096);

	return consistent ? units : units / 2;
}

static double
write_units(int64 bytes)
{
	return Max(1, (bytes + 1023) / 1024);
}

static int64
item_bytes(Jsonb *item)
{
	return item ? ddb_item_size(ddb_item_from_jsonb(item)) : 0;
}

/* One ConsumedCapacity object (mode TOTAL or INDEXES). */
static void
capacity_object(StringInfo buf, Capacity *c, const char *table_name)
{
	double		total = c->table;

	for (int i = 0; i < c->nindexes; i++)
		total += c->index_units[i];
	appendStringInfoString(buf, "{\"TableName\":");
	ddb_json_cstring(buf, table_name);
	appendStringInfo(buf, ",\"CapacityUnits\":%.1f,\"%s\":%.1f", total,
					 c->read ? "ReadCapacityUnits" : "WriteCapacityUnits", total);
	if (strcmp(c->mode, "INDEXES") == 0)
	{
		/* (a read of an index alone reads nothing of the table) */
		if (c->table > 0 || c->nindexes == 0)
			appendStringInfo(buf, ",\"Table\":{\"CapacityUnits\":%.1f,\"%s\":%.1f}", c->table,
							 c->read ? "ReadCapacityUnits" : "WriteCapacityUnits", c->table);
		/* the global ones, then the local ones, each under its member */
		for (int local = 0; local <= 1; local++)
		{
			bool		first = true;

			for (int i = 0; i < c->nindexes; i++)
			{
				if (c->index_local[i] != (local == 1))
					continue;
				appendStringInfoString(buf, first ? (local ? ",\"LocalSecondaryIndexes\":{" :
													 ",\"GlobalSecondaryIndexes\":{") : ",");
				first = false;
				ddb_json_cstring(buf, c->index_names[i]);
				appendStringInfo(buf, ":{\"CapacityUnits\":%.1f,\"%s\":%.1f}", c->index_units[i],
								 c->read ? "ReadCapacityUnits" : "WriteCapacityUnits",
								 c->index_units[i]);
			}
			if (!first)
				appendStringInfoChar(buf, '}');
		}
	}
	appendStringInfoChar(buf, '}');
}

static bool
capacity_wanted(const char *mode)
{
	return mode != NULL && strcmp(mode, "NONE") != 0;
}

static void
resp_capacity(DdbResponse *r, Capacity *c, const char *table_name)
{
	if (!capacity_wanted(c->mode))
		return;
	ddb_resp_key(r, "ConsumedCapacity");
	capacity_object(&r->buf, c, table_name);
}

/* Add one write's index units to a table's sum, index by index. */
static void
capacity_add(Capacity *sum, Capacity *c)
{
	sum->table += c->table;
	for (int i = 0; i < c->nindexes; i++)
	{
		int			j;

		for (j = 0; j < sum->nindexes; j++)
			if (strcmp(sum->index_names[j], c->index_names[i]) == 0)
				break;
		if (j == sum->nindexes)
		{
			if (j >= lengthof(sum->index_names))
				continue;
			sum->index_names[j] = c->index_names[i];
			sum->index_local[j] = c->index_local[i];
			sum->index_units[j] = 0;
			sum->nindexes++;
		}
		sum->index_units[j] += c->index_units[i];
	}
}

/* A write's capacity: the larger of the old and new item, and its indexes. */
static void
write_capacity(Capacity *c, Relation rel, DdbWriteResult *res)
{
	c->read = false;
	if (c->mode == NULL || strcmp(c->mode, "NONE") == 0)
		return;
	c->table = write_units(Max(item_bytes(res->old), item_bytes(res->new)));
	c->nindexes = ddb_gsi_write_units(rel, res->old, res->new, lengthof(c->index_names),
									  c->index_names, c->index_units);
	for (int i = 0; i < c->nindexes; i++)
		c->index_local[i] = ddb_index_kind(rel, c->index_names[i]) == DDB_INDEX_LOCAL;
}

/*
 * The legacy members' constraints, which DynamoDB checks and lists with the
 * other member constraints (dynalite's record of the service has them in its
 * request models): ConditionalOperator; each condition's ComparisonOperator
 * in Expected (an enum), and in KeyConditions, QueryFilter and ScanFilter
 * (required there too); AttributesToGet not empty; each AttributeUpdates
 * Action.  Only those the operation takes ('legacy', its list of legacy
 * members): it ignores the others, as it ignores any member it does not
 * know.  Shapes are checked where the members are read (ddb_legacy.c),
 * which meets only what passed here.
 */
static void
check_legacy_members(DdbValErrors *e, DdbJson *req, const char *const *legacy)
{
	static const char *const maps[] = {"Expected", "KeyConditions", "QueryFilter", "ScanFilter"};
	static const char *const actions[] = {"ADD", "PUT", "DELETE", NULL};
	DdbJson    *j;

	if (takes_conditional_operator(legacy))
		check_enum(e, member_string(req, "ConditionalOperator"), "ConditionalOperator",
				   ddb_legacy_conditional_ops, DDB_LEGACY_CONDITIONAL_OPS_LIST);
	for (int m = 0; m < lengthof(maps); m++)
	{
		DdbJson    *conds = legacy_member(req, legacy, maps[m]);

		if (conds == NULL || conds->type != DDB_JSON_OBJECT)
			continue;			/* (its shape is checked where it is read) */
		for (int i = 0; i < conds->n; i++)
		{
			DdbJson    *op = conds->elems[i]->type == DDB_JSON_OBJECT ?
				ddb_json_get(conds->elems[i], "ComparisonOperator") : NULL;
			char	   *path = psprintf("%s.%s.member.comparisonOperator", maps[m], conds->keys[i]);

			if (op != NULL && op->type == DDB_JSON_STRING)
				check_enum(e, op->str, path, ddb_legacy_comparison_ops,
						   DDB_LEGACY_COMPARISON_OPS_LIST);
			else if (m > 0 && conds->elems[i]->type == DDB_JSON_OBJECT &&
					 (op == NULL || op->type == DDB_JSON_NULL))
				ddb_valerr_add(e, NULL, lower_first(path), "Member must not be null");
		}
	}
	j = legacy_member(req, legacy, "AttributesToGet");
	if (j != NULL && j->type == DDB_JSON_ARRAY && j->n < 1)
		ddb_valerr_add(e, "[]", "attributesToGet", "Member must have length greater than or equal to 1");
	j = legacy_member(req, legacy, "AttributeUpdates");
	for (int i = 0; j != NULL && j->type == DDB_JSON_OBJECT && i < j->n; i++)
	{
		DdbJson    *action = j->elems[i]->type == DDB_JSON_OBJECT ?
			ddb_json_get(j->elems[i], "Action") : NULL;

		if (action != NULL && action->type == DDB_JSON_STRING)
			check_enum(e, action->str, psprintf("AttributeUpdates.%s.member.action", j->keys[i]),
					   actions, "ADD, PUT, DELETE");
	}
}

/*
 * Members every item operation shares: ReturnConsumedCapacity.  (Also
 * ExecuteStatement's check, ddb_partiql.c.)
 */
const char *
ddb_check_common(DdbValErrors *e, DdbJson *req)
{
	return check_enum(e, member_string(req, "ReturnConsumedCapacity"), "ReturnConsumedCapacity",
					  return_consumed_set, RETURN_CONSUMED_LIST);
}

/* ReturnItemCollectionMetrics: SIZE, NONE or NULL */
static const char *
check_item_collection_metrics(DdbValErrors *e, DdbJson *req)
{
	static const char *const set[] = {"SIZE", "NONE", NULL};

	return check_enum(e, member_string(req, "ReturnItemCollectionMetrics"),
					  "ReturnItemCollectionMetrics", set, "SIZE, NONE");
}

/*
 * ReturnItemCollectionMetrics SIZE: the answer gives the size of the item
 * collections written to, which is the size of stored items.  Like return
 * values and ReturnConsumedCapacity (and as INSERT ... RETURNING needs
 * SELECT) a write that asks for it needs SELECT on the table.
 */
static bool
metrics_wanted(const char *icm)
{
	return icm != NULL && strcmp(icm, "SIZE") == 0;
}

static const char *const rv_set[] = {"ALL_NEW", "UPDATED_OLD", "ALL_OLD", "NONE", "UPDATED_NEW", NULL};
#define RV_LIST "ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW"

/*
 * ReturnValuesOnConditionCheckFailure: ALL_OLD, NONE or NULL (also
 * ExecuteStatement's).  prefix: the path of the structure that holds it in
 * a list ("transactItems.1.member.put.", "statements.1.member."), as the
 * validation message names its other members; "" at the top.
 */
const char *
ddb_check_return_on_failure(DdbValErrors *e, DdbJson *req, const char *prefix)
{
	static const char *const set[] = {"ALL_OLD", "NONE", NULL};

	return check_enum(e, member_string(req, "ReturnValuesOnConditionCheckFailure"),
					  psprintf("%sreturnValuesOnConditionCheckFailure", prefix), set, "ALL_OLD, NONE");
}

/*
 * A failed condition: ConditionalCheckFailedException, with the item when
 * ReturnValuesOnConditionCheckFailure is ALL_OLD.  The item travels in the
 * error's DETAIL as a JSON object of extra response members (see
 * ddb_protocol.h).
 */
static void
write_condition_failed(DdbWriteResult *res, const char *on_failure)
{
	if (on_failure && strcmp(on_failure, "ALL_OLD") == 0 && res->old != NULL)
	{
		StringInfoData extra;

		initStringInfo(&extra);
		appendStringInfoString(&extra, "{\"Item\":");
		ddb_json_write_jsonb_item(&extra, res->old);
		appendStringInfoChar(&extra, '}');
		ereport(ERROR,
				(errcode(DDB_ERRCODE_CONDITIONAL_CHECK),
				 errmsg("ConditionalCheckFailedException: " DDB_MSG_CONDITIONAL_FAILED),
				 errdetail_internal("%s", extra.data)));
	}
	ddb_condition_failed();
}

/*
 * The item collection an item (or key) belongs to, on a table with local
 * secondary indexes, as ItemCollectionMetrics gives it: the collection's
 * partition key and its size, a range of gigabytes around the estimate.
 * *key receives the key alone (to tell collections apart); false when the
 * table has no LSI, and so no item collections.
 */
static bool
item_collection_object(StringInfo buf, Relation rel, Jsonb *item, char **key)
{
	int64		size = ddb_item_collection_size(rel, item);
	const char *pk = ddb_table_key_name(rel, 0);
	JsonbValue *v;
	JsonbParseState *ps = NULL;
	JsonbValue	k;
	StringInfoData kb;
	double		gb;

	if (size < 0)
		return false;
	v = getKeyJsonValueFromContainer(&item->root, pk, strlen(pk), NULL);
	if (v == NULL)
		return false;
	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	k.type = jbvString;
	k.val.string.val = (char *) pk;
	k.val.string.len = strlen(pk);
	pushJsonbValue(&ps, WJB_KEY, &k);
	pushJsonbValue(&ps, WJB_VALUE, v);
	initStringInfo(&kb);
	ddb_json_write_jsonb_item(&kb, JsonbValueToJsonb(pushJsonbValue(&ps, WJB_END_OBJECT, NULL)));
	gb = floor((double) size / (1024.0 * 1024.0 * 1024.0));
	appendStringInfo(buf, "{\"ItemCollectionKey\":%s,\"SizeEstimateRangeGB\":[%.1f,%.1f]}",
					 kb.data, gb, gb + 1);
	*key = kb.data;
	return true;
}

/* ItemCollectionMetrics of a single write */
static void
resp_item_collection(DdbResponse *r, Relation rel, DdbWriteResult *res)
{
	StringInfoData o;
	char	   *key;

	initStringInfo(&o);
	if (!item_collection_object(&o, rel, res->new ? res->new : res->old, &key))
		return;
	ddb_resp_key(r, "ItemCollectionMetrics");
	appendStringInfoString(&r->buf, o.data);
}

/*
 * ItemCollectionMetrics of a batch or a transaction: per table, in the
 * order they first appear, each item collection its writes touched, once
 * ('docs' are the items or keys written, rels their tables, names the
 * tables' names or ARNs as the request gave them, which key the answer).
 * Tables without LSIs have none; with none at all the member is left out.
 */
static void
resp_item_collections(DdbResponse *r, Relation *rels, const char **names, Jsonb **docs, int n)
{
	const char **tables = palloc(sizeof(char *) * Max(n, 1));
	StringInfoData *lists = palloc(sizeof(StringInfoData) * Max(n, 1));
	List	  **seen = palloc0(sizeof(List *) * Max(n, 1));
	int			ntables = 0;
	bool		any = false;

	for (int i = 0; i < n; i++)
	{
		const char *name = names[i];
		StringInfoData o;
		char	   *key;
		int			t;
		bool		dup = false;
		ListCell   *lc;

		initStringInfo(&o);
		if (docs[i] == NULL || !item_collection_object(&o, rels[i], docs[i], &key))
			continue;
		for (t = 0; t < ntables; t++)
			if (strcmp(tables[t], name) == 0)
				break;
		if (t == ntables)
		{
			tables[ntables] = name;
			initStringInfo(&lists[ntables]);
			ntables++;
		}
		foreach(lc, seen[t])
			dup |= strcmp((char *) lfirst(lc), key) == 0;
		if (dup)
			continue;
		seen[t] = lappend(seen[t], key);
		appendStringInfo(&lists[t], "%s%s", lists[t].len ? "," : "", o.data);
		any = true;
	}
	if (!any)
		return;
	ddb_resp_key(r, "ItemCollectionMetrics");
	appendStringInfoChar(&r->buf, '{');
	for (int t = 0; t < ntables; t++)
	{
		if (t > 0)
			appendStringInfoChar(&r->buf, ',');
		ddb_json_cstring(&r->buf, tables[t]);
		appendStringInfo(&r->buf, ":[%s]", lists[t].data);
	}
	appendStringInfoChar(&r->buf, '}');
}

/*
 * Does the answer of a write need the old item (ReturnValues, the capacity
 * of the larger of old and new item, ItemCollectionMetrics)?  A condition
 * needs it too, which the write itself knows.  Either way the write reads
 * stored data, and needs SELECT.
 */
static bool
write_needs_old(DdbReturnValues rv, const char *rcc, const char *icm)
{
	return rv != DDB_RV_NONE || capacity_wanted(rcc) || metrics_wanted(icm);
}

/*
 * The answer of a write: Attributes, ConsumedCapacity (under the table's
 * name or ARN, as the request gave it: 'name'), ItemCollectionMetrics.
 */
static char *
write_response(Relation rel, const char *name, DdbWriteResult *res, DdbReturnValues rv,
			   const char *rcc, const char *icm, int *len)
{
	DdbResponse	r;
	Capacity	c = {0};

	c.mode = rcc;
	write_capacity(&c, rel, res);
	ddb_resp_begin(&r);
	resp_item(&r, "Attributes", ddb_write_result(res, rv));
	resp_capacity(&r, &c, name);
	if (metrics_wanted(icm) && !res->condition_failed)
		resp_item_collection(&r, rel, res);
	return ddb_resp_end(&r, len);
}

static char *
op_get_item(DdbJson *req, int *len)
{
	static const char *const expr[] = {"ProjectionExpression", NULL};
	static const char *const legacy[] = {"AttributesToGet", NULL};
	DdbValErrors e;
	const char *name;
	const char *rcc;
	bool		consistent = member_bool(req, "ConsistentRead", false);
	ReqExpr		x;
	Jsonb	   *key;
	DdbProjection *proj = NULL;
	Relation	rel;
	Jsonb	   *item;
	DdbResponse	r;
	Capacity	c = {0};

	ddb_valerr_init(&e);
	rcc = ddb_check_common(&e, req);
	check_legacy_members(&e, req, legacy);
	name = check_table_name(&e, req, "TableName");
	if (ddb_json_member(req, "Key") == NULL)
		ddb_valerr_add(&e, NULL, "key", "Member must not be null");
	ddb_valerr_raise(&e);
	request_expressions(req, &x, expr, legacy);
	key = request_item(req, "Key");

	rel = ddb_table_open(name, ACL_SELECT);
	parse_expressions(&x, NULL, NULL, &proj);
	/* one lookup: the whole item is billed, whatever the projection */
	item = ddb_get_item_core_ext(rel, key, proj, false);
	c.mode = rcc;
	c.read = true;
	if (capacity_wanted(rcc))
		c.table = read_units(item_bytes(item), consistent);
	if (item != NULL && proj != NULL)
		item = ddb_apply_projection(proj, item);

	ddb_resp_begin(&r);
	resp_item(&r, "Item", item);
	resp_capacity(&r, &c, name);
	relation_close(rel, AccessShareLock);
	return ddb_resp_end(&r, len);
}

static char *
op_put_item(DdbJson *req, int *len)
{
	static const char *const expr[] = {"ConditionExpression", NULL};
	static const char *const legacy[] = {"Expected", NULL};
	DdbValErrors e;
	const char *name;
	const char *rvs;
	const char *rcc;
	const char *icm;
	const char *on_failure;
	ReqExpr		x;
	Jsonb	   *item;
	DdbReturnValues rv;
	DdbCondition *cond = NULL;
	Relation	rel;
	DdbWriteResult res;

	ddb_valerr_init(&e);
	rcc = ddb_check_common(&e, req);
	check_legacy_members(&e, req, legacy);
	icm = check_item_collection_metrics(&e, req);
	name = check_table_name(&e, req, "TableName");
	if (ddb_json_member(req, "Item") == NULL)
		ddb_valerr_add(&e, NULL, "item", "Member must not be null");
	rvs = check_enum(&e, member_string(req, "ReturnValues"), "ReturnValues", rv_set, RV_LIST);
	on_failure = ddb_check_return_on_failure(&e, req, "");
	ddb_valerr_raise(&e);
	request_expressions(req, &x, expr, legacy);
	item = request_item(req, "Item");
	rv = ddb_parse_return_values(rvs, false);

	/*
	 * DynamoDB refuses an item over 400 KB before it looks for the table.
	 * An item's jsonb is never smaller than its size as DynamoDB counts it
	 * (each name and value costs at least as many bytes in the jsonb), so
	 * only a jsonb over the limit can hold one: only such an item is
	 * checked here, and the others once, by the core.
	 */
	if (VARSIZE(item) > DDB_MAX_ITEM_BYTES)
		(void) ddb_check_item(item);
	rel = ddb_table_open(name, ACL_INSERT);
	/*
	 * ConsumedCapacity bills the stored item's size, ItemCollectionMetrics
	 * gives its collection's: they read stored items too
	 */
	ddb_check_write_privileges(rel, ACL_INSERT, write_needs_old(rv, rcc, icm) || x.condition != NULL);
	parse_expressions(&x, &cond, NULL, NULL);
	ddb_put_item_core_ext(rel, item, cond, write_needs_old(rv, rcc, icm), &res);
	relation_close(rel, NoLock);
	if (res.condition_failed)
		write_condition_failed(&res, on_failure);
	return write_response(rel, name, &res, rv, rcc, icm, len);
}

static char *
op_update_item(DdbJson *req, int *len)
{
	static const char *const expr[] = {"UpdateExpression", "ConditionExpression", NULL};
	static const char *const legacy[] = {"AttributeUpdates", "Expected", NULL};
	DdbValErrors e;
	const char *name;
	const char *rvs;
	const char *rcc;
	const char *icm;
	const char *on_failure;
	ReqExpr		x;
	Jsonb	   *key;
	DdbReturnValues rv;
	DdbCondition *cond = NULL;
	DdbUpdate  *upd = NULL;
	Relation	rel;
	DdbWriteResult res;

	ddb_valerr_init(&e);
	rcc = ddb_check_common(&e, req);
	check_legacy_members(&e, req, legacy);
	icm = check_item_collection_metrics(&e, req);
	name = check_table_name(&e, req, "TableName");
	if (ddb_json_member(req, "Key") == NULL)
		ddb_valerr_add(&e, NULL, "key", "Member must not be null");
	rvs = check_enum(&e, member_string(req, "ReturnValues"), "ReturnValues", rv_set, RV_LIST);
	on_failure = ddb_check_return_on_failure(&e, req, "");
	ddb_valerr_raise(&e);
	request_expressions(req, &x, expr, legacy);
	key = request_item(req, "Key");
	rv = ddb_parse_return_values(rvs, true);

	rel = ddb_table_open(name, ACL_UPDATE);
	ddb_check_write_privileges(rel, ACL_UPDATE, true);
	parse_expressions(&x, &cond, &upd, NULL);
	if (upd != NULL && ddb_json_member(req, "AttributeUpdates") != NULL)
	{
		/* (a copy: the parsed update is cached, and shared) */
		DdbUpdate  *legacy = palloc(sizeof(DdbUpdate));

		*legacy = *upd;
		legacy->legacy = true;
		upd = legacy;
	}
	ddb_update_item_core_ext(rel, key, upd, cond,
							 rv == DDB_RV_UPDATED_OLD || rv == DDB_RV_UPDATED_NEW, &res);
	relation_close(rel, NoLock);
	if (res.condition_failed)
		write_condition_failed(&res, on_failure);
	return write_response(rel, name, &res, rv, rcc, icm, len);
}

static char *
op_delete_item(DdbJson *req, int *len)
{
	static const char *const expr[] = {"ConditionExpression", NULL};
	static const char *const legacy[] = {"Expected", NULL};
	DdbValErrors e;
	const char *name;
	const char *rvs;
	const char *rcc;
	const char *icm;
	const char *on_failure;
	ReqExpr		x;
	Jsonb	   *key;
	DdbReturnValues rv;
	DdbCondition *cond = NULL;
	Relation	rel;
	DdbWriteResult res;

	ddb_valerr_init(&e);
	rcc = ddb_check_common(&e, req);
	check_legacy_members(&e, req, legacy);
	icm = check_item_collection_metrics(&e, req);
	name = check_table_name(&e, req, "TableName");
	if (ddb_json_member(req, "Key") == NULL)
		ddb_valerr_add(&e, NULL, "key", "Member must not be null");
	rvs = check_enum(&e, member_string(req, "ReturnValues"), "ReturnValues", rv_set, RV_LIST);
	on_failure = ddb_check_return_on_failure(&e, req, "");
	ddb_valerr_raise(&e);
	request_expressions(req, &x, expr, legacy);
	key = request_item(req, "Key");
	rv = ddb_parse_return_values(rvs, false);

	rel = ddb_table_open(name, ACL_DELETE);
	ddb_check_write_privileges(rel, ACL_DELETE, write_needs_old(rv, rcc, icm) || x.condition != NULL);
	parse_expressions(&x, &cond, NULL, NULL);
	ddb_delete_item_core_ext(rel, key, cond, write_needs_old(rv, rcc, icm), &res);
	relation_close(rel, NoLock);
	if (res.condition_failed)
		write_condition_failed(&res, on_failure);
	return write_response(rel, name, &res, rv, rcc, icm, len);
}

/* ------------------------------------------------------------------------
 * Query and Scan
 * ------------------------------------------------------------------------
 */
static char *
read_op(DdbJson *req, int *len, bool is_query)
{
	static const char *const qexpr[] = {"ProjectionExpression", "FilterExpression", "KeyConditionExpression", NULL};
	static const char *const qlegacy[] = {"AttributesToGet", "QueryFilter", "ConditionalOperator", "KeyConditions", NULL};
	static const char *const sexpr[] = {"ProjectionExpression", "FilterExpression", NULL};
	static const char *const slegacy[] = {"AttributesToGet", "ScanFilter", "ConditionalOperator", NULL};
	static const char *const select_set[] = {"SPECIFIC_ATTRIBUTES", "COUNT", "ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES", NULL};
	DdbValErrors e;
	DdbReadRequest a;
	DdbReadPage page;
	ReqExpr		x;
	const char *rcc;
	const char *select;
	const char *index_name;
	bool		consistent = member_bool(req, "ConsistentRead", false);
	double		d;
	DdbResponse	r;
	Capacity	c = {0};

	memset(&a, 0, sizeof(a));
	ddb_valerr_init(&e);
	rcc = ddb_check_common(&e, req);
	check_legacy_members(&e, req, is_query ? qlegacy : slegacy);
	a.table_name = check_table_name(&e, req, "TableName");
	index_name = member_string(req, "IndexName");
	if (index_name != NULL)
		ddb_valerr_name(&e, index_name, "indexName");
	select = check_enum(&e, member_string(req, "Select"), "Select", select_set,
						"SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, ALL_PROJECTED_ATTRIBUTES");
	if ((a.has_limit = member_number(req, "Limit", "Integer", &d)))
	{
		a.limit = (int32) d;	/* (an int: ddb_json_check_number) */
		if (d < 1)
			ddb_valerr_add(&e, psprintf("%.0f", d), "limit",
						   "Member must have value greater than or equal to 1");
		a.has_limit = d >= 1;
	}
	if (!is_query)
	{
		if ((a.has_segment = member_number(req, "Segment", "Integer", &d)))
		{
			a.segment = (int32) d;
			if (d < 0)
				ddb_valerr_add(&e, psprintf("%.0f", d), "segment",
							   "Member must have value greater than or equal to 0");
			if (d > 999999)
				ddb_valerr_add(&e, psprintf("%.0f", d), "segment",
							   "Member must have value less than or equal to 999999");
		}
		if ((a.has_total_segments = member_number(req, "TotalSegments", "Integer", &d)))
		{
			a.total_segments = (int32) d;
			if (d < 1)
				ddb_valerr_add(&e, psprintf("%.0f", d), "totalSegments",
							   "Member must have value greater than or equal to 1");
			if (d > 1000000)
				ddb_valerr_add(&e, psprintf("%.0f", d), "totalSegments",
							   "Member must have value less than or equal to 1000000");
		}
	}
	ddb_valerr_raise(&e);
	request_expressions(req, &x, is_query ? qexpr : sexpr, is_query ? qlegacy : slegacy);
	if (is_query && x.key_condition == NULL)
		validation_error("Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.");

	/* Select, as DynamoDB checks it */
	if (select != NULL)
	{
		if (strcmp(select, "SPECIFIC_ATTRIBUTES") == 0 && x.projection == NULL)
			validation_error("One or more parameter values were invalid: Select type SPECIFIC_ATTRIBUTES requires either ProjectionExpression or AttributesToGet");
		if (strcmp(select, "SPECIFIC_ATTRIBUTES") != 0 && x.projection != NULL)
			validation_error("One or more parameter values were invalid: Select type %s is not compatible with %s",
							 select, x.legacy ? "AttributesToGet" : "ProjectionExpression");
		if (strcmp(select, "ALL_PROJECTED_ATTRIBUTES") == 0 && index_name == NULL)
			validation_error("One or more parameter values were invalid: Select type ALL_PROJECTED_ATTRIBUTES is not compatible with a request without an index name");
	}
	/* ConsistentRead on a global secondary index: refused by the reader */
	a.consistent = consistent;
	a.select_all = select != NULL && strcmp(select, "ALL_ATTRIBUTES") == 0;

	a.key_condition = x.key_condition;
	a.filter = x.filter;
	a.filter_legacy = is_query && ddb_json_member(req, "QueryFilter") != NULL;
	a.projection = x.projection;
	a.names = x.names;
	a.vals = x.vals;
	a.index_name = index_name;
	a.forward = member_bool(req, "ScanIndexForward", true);
	a.start_key = request_item(req, "ExclusiveStartKey");
	a.typed = true;				/* written as they are read, no document-form copies */
	ddb_read_page(&a, is_query, select != NULL && strcmp(select, "COUNT") == 0, &page);

	ddb_resp_begin(&r);
	if (select == NULL || strcmp(select, "COUNT") != 0)
	{
		ddb_resp_key(&r, "Items");
		appendStringInfoChar(&r.buf, '[');
		appendBinaryStringInfo(&r.buf, page.typed->data, page.typed->len);
		appendStringInfoChar(&r.buf, ']');
	}
	ddb_resp_key(&r, "Count");
	appendStringInfo(&r.buf, INT64_FORMAT, page.count);
	ddb_resp_key(&r, "ScannedCount");
	appendStringInfo(&r.buf, INT64_FORMAT, page.scanned);
	resp_item(&r, "LastEvaluatedKey", page.last_key);
	/* a Query or Scan is billed for what it read, in one sum */
	c.mode = rcc;
	c.read = true;
	if (page.is_index)
	{
		c.nindexes = 1;
		c.index_names[0] = index_name;
		c.index_units[0] = read_units(page.bytes, consistent);
		if (capacity_wanted(rcc))
		{
			/* (the read locked the table: this open takes no new lock) */
			Relation	rel = relation_open(ddb_table_lookup(page.table_name), AccessShareLock);

			c.index_local[0] = ddb_index_kind(rel, index_name) == DDB_INDEX_LOCAL;
			relation_close(rel, AccessShareLock);
		}
	}
	else
		c.table = read_units(page.bytes, consistent);
	resp_capacity(&r, &c, page.table_name);
	return ddb_resp_end(&r, len);
}

static char *
op_query(DdbJson *req, int *len)
{
	return read_op(req, len, true);
}

static char *
op_scan(DdbJson *req, int *len)
{
	return read_op(req, len, false);
}

/* ------------------------------------------------------------------------
 * Batches and transactions (the cores are in ddb_batch.c)
 * ------------------------------------------------------------------------
 */

/* Write a list of strings (AttributesToGet) or a string map as JSON. */
static void
write_json_strings(StringInfo buf, DdbJson *j)
{
	bool		obj = j->type == DDB_JSON_OBJECT;

	appendStringInfoChar(buf, obj ? '{' : '[');
	for (int i = 0; i < j->n; i++)
	{
		if (i > 0)
			appendStringInfoChar(buf, ',');
		if (obj)
		{
			ddb_json_string(buf, j->keys[i], j->keylens[i]);
			appendStringInfoChar(buf, ':');
		}
		if (j->elems[i]->type == DDB_JSON_STRING)
			ddb_json_string(buf, j->elems[i]->str, j->elems[i]->len);
		else
			appendStringInfoString(buf, "null");
	}
	appendStringInfoChar(buf, obj ? '}' : ']');
}

/* A list of typed items (or keys) as a JSON array. */
static void
write_item_list(StringInfo buf, List *items)
{
	ListCell   *lc;

	appendStringInfoChar(buf, '[');
	foreach(lc, items)
	{
		if (foreach_current_index(lc) > 0)
			appendStringInfoChar(buf, ',');
		ddb_json_write_jsonb_item(buf, lfirst(lc));
	}
	appendStringInfoChar(buf, ']');
}

/* RequestItems of a batch: a map of table names to 'shape' members. */
static DdbJson *
request_items(DdbValErrors *e, DdbJson *req, const char *structname)
{
	DdbJson    *items = ddb_json_member(req, "RequestItems");

	if (items == NULL)
	{
		ddb_valerr_add(e, NULL, "requestItems", "Member must not be null");
		return NULL;
	}
	if (items->type == DDB_JSON_ARRAY)
		ddb_raise(DDB_ERRCODE_SERIALIZATION, "SerializationException",
				  "Unrecognized collection type java.util.Map<java.lang.String, %s>", structname);
	ddb_json_check_struct(items, structname);
	/* table names are read as C strings: none may hold U+0000 */
	ddb_json_check_key_names(items, "A table name");
	return items;
}

static char *
op_batch_write_item(DdbJson *req, int *len)
{
	DdbValErrors e;
	const char *rcc;
	const char *icm;
	DdbJson    *items;
	DdbJson   **lists;
	DdbBatchWriteTable *tables;
	int			ntables = 0;
	DdbResponse	r;

	ddb_valerr_init(&e);
	rcc = ddb_check_common(&e, req);
	icm = check_item_collection_metrics(&e, req);
	items = request_items(&e, req, "java.util.List<com.amazonaws.dynamodb.v20120810.WriteRequest>");
	ddb_valerr_raise(&e);

	/*
	 * The lists' shapes and the members' constraints (each table's name
	 * and count, the total) before any request is converted: a request of
	 * 80,000 puts is refused without converting them.
	 */
	tables = palloc0(sizeof(DdbBatchWriteTable) * Max(items->n, 1));
	lists = palloc0(sizeof(DdbJson *) * Max(items->n, 1));
	for (int t = 0; t < items->n; t++)
	{
		DdbJson    *list = items->elems[t];

		if (list->type == DDB_JSON_NULL)
			continue;
		ddb_json_check_list(list);
		for (int i = 0; i < list->n; i++)
		{
			ddb_json_check_value_struct(list->elems[i], "WriteRequest");
			(void) member_struct(list->elems[i], "PutRequest", "PutRequest");
			(void) member_struct(list->elems[i], "DeleteRequest", "DeleteRequest");
		}
		lists[ntables] = list;
		tables[ntables].table_name = items->keys[t];
		tables[ntables++].nrequests = list->n;
	}
	ddb_batch_write_check(tables, ntables);

	for (int t = 0; t < ntables; t++)
	{
		DdbJson    *list = lists[t];
		DdbBatchWriteTable *bt = &tables[t];

		bt->reads_old = capacity_wanted(rcc) || metrics_wanted(icm);
		bt->is_put = palloc(sizeof(bool) * Max(list->n, 1));
		bt->docs = palloc(sizeof(Jsonb *) * Max(list->n, 1));
		for (int i = 0; i < list->n; i++)
		{
			DdbJson    *w = list->elems[i];
			DdbJson    *put = ddb_json_member(w, "PutRequest");
			DdbJson    *del = ddb_json_member(w, "DeleteRequest");
			const char *path;

			if ((put == NULL) == (del == NULL))
				validation_error(DDB_MSG_MULTI_TYPE_ATTRIBUTE_VALUE);
			bt->is_put[i] = put != NULL;
			path = psprintf("requestItems.%s.member.%d.member.%s", bt->table_name, i + 1,
							put ? "putRequest.item" : "deleteRequest.key");
			if (ddb_json_member(put ? put : del, put ? "Item" : "Key") == NULL)
			{
				ddb_valerr_add(&e, NULL, path, "Member must not be null");
				ddb_valerr_raise(&e);
			}
			bt->docs[i] = request_item(put ? put : del, put ? "Item" : "Key");
		}
	}
	ddb_batch_write_core(tables, ntables);

	ddb_resp_begin(&r);
	ddb_resp_key(&r, "UnprocessedItems");
	appendStringInfoString(&r.buf, "{}");
	if (capacity_wanted(rcc))
	{
		ddb_resp_key(&r, "ConsumedCapacity");
		appendStringInfoChar(&r.buf, '[');
		for (int t = 0; t < ntables; t++)
		{
			Capacity	sum = {0};

			sum.mode = rcc;
			for (int i = 0; i < tables[t].nrequests; i++)
			{
				Capacity	c = {0};

				c.mode = rcc;
				write_capacity(&c, tables[t].rel, &tables[t].results[i]);
				capacity_add(&sum, &c);
			}
			if (t > 0)
				appendStringInfoChar(&r.buf, ',');
			capacity_object(&r.buf, &sum, tables[t].table_name);
		}
		appendStringInfoChar(&r.buf, ']');
	}
	if (metrics_wanted(icm))
	{
		int			nw = 0;
		Relation   *rels;
		const char **names;
		Jsonb	  **docs;

		for (int t = 0; t < ntables; t++)
			nw += tables[t].nrequests;
		rels = palloc(sizeof(Relation) * Max(nw, 1));
		names = palloc(sizeof(char *) * Max(nw, 1));
		docs = palloc(sizeof(Jsonb *) * Max(nw, 1));
		nw = 0;
		for (int t = 0; t < ntables; t++)
			for (int i = 0; i < tables[t].nrequests; i++)
			{
				rels[nw] = tables[t].rel;
				names[nw] = tables[t].table_name;
				docs[nw++] = tables[t].docs[i];
			}
		resp_item_collections(&r, rels, names, docs, nw);
	}
	for (int t = 0; t < ntables; t++)
		relation_close(tables[t].rel, NoLock);	/* held to commit */
	return ddb_resp_end(&r, len);
}

static char *
op_batch_get_item(DdbJson *req, int *len)
{
	static const char *const expr[] = {"ProjectionExpression", NULL};
	static const char *const legacy[] = {"AttributesToGet", NULL};
	DdbValErrors e;
	const char *rcc;
	DdbJson    *items;
	DdbJson   **specs;
	DdbBatchGetTable *tables;
	int			ntables = 0;
	DdbResponse	r;
	bool		first;

	ddb_valerr_init(&e);
	rcc = ddb_check_common(&e, req);
	items = request_items(&e, req, "com.amazonaws.dynamodb.v20120810.KeysAndAttributes");
	ddb_valerr_raise(&e);

	/*
	 * The tables' shapes and the members' constraints (names, numbers of
	 * keys, the total) before any key is converted.
	 */
	tables = palloc0(sizeof(DdbBatchGetTable) * Max(items->n, 1));
	specs = palloc0(sizeof(DdbJson *) * Max(items->n, 1));
	for (int t = 0; t < items->n; t++)
	{
		DdbJson    *spec = items->elems[t];
		DdbJson    *keys;
		DdbJson    *attrs;

		if (spec->type == DDB_JSON_NULL)
			continue;
		ddb_json_check_value_struct(spec, "KeysAndAttributes");
		keys = member_list(spec, "Keys");
		if (keys == NULL)
		{
			ddb_valerr_add(&e, NULL, psprintf("requestItems.%s.member.keys", items->keys[t]),
						   "Member must not be null");
			ddb_valerr_raise(&e);
		}
		for (int k = 0; k < keys->n; k++)
			ddb_json_check_attribute_map(keys->elems[k]);
		(void) member_bool(spec, "ConsistentRead", false);
		attrs = ddb_json_member(spec, "AttributesToGet");
		specs[ntables] = spec;
		tables[ntables].table_name = items->keys[t];
		tables[ntables].empty_attributes = attrs != NULL && attrs->type == DDB_JSON_ARRAY &&
			attrs->n == 0;
		tables[ntables++].nkeys = keys->n;
	}
	ddb_batch_get_check(tables, ntables);

	for (int t = 0; t < ntables; t++)
	{
		DdbBatchGetTable *bt = &tables[t];
		DdbJson    *keys = ddb_json_member(specs[t], "Keys");
		ReqExpr		x;

		request_expressions(specs[t], &x, expr, legacy);
		bt->keys = palloc(sizeof(Jsonb *) * Max(keys->n, 1));
		for (int k = 0; k < keys->n; k++)
			bt->keys[k] = ddb_typed_item_jsonb(keys->elems[k]);
		bt->projection = x.projection;
		bt->names = x.names;
		bt->want_units = capacity_wanted(rcc);
	}
	ddb_batch_get_core(tables, ntables);

	ddb_resp_begin(&r);
	ddb_resp_key(&r, "Responses");
	appendStringInfoChar(&r.buf, '{');
	for (int t = 0; t < ntables; t++)
	{
		if (t > 0)
			appendStringInfoChar(&r.buf, ',');
		ddb_json_cstring(&r.buf, tables[t].table_name);
		appendStringInfoChar(&r.buf, ':');
		write_item_list(&r.buf, tables[t].items);
	}
	appendStringInfoChar(&r.buf, '}');

	/* the keys not read, with their table's request members, to send again */
	ddb_resp_key(&r, "UnprocessedKeys");
	appendStringInfoChar(&r.buf, '{');
	first = true;
	for (int t = 0; t < ntables; t++)
	{
		static const char *const echo[] = {"ProjectionExpression", "ExpressionAttributeNames",
		"AttributesToGet", "ConsistentRead"};

		if (tables[t].unprocessed == NIL)
			continue;
		if (!first)
			appendStringInfoChar(&r.buf, ',');
		first = false;
		ddb_json_cstring(&r.buf, tables[t].table_name);
		appendStringInfoString(&r.buf, ":{\"Keys\":");
		write_item_list(&r.buf, tables[t].unprocessed);
		for (int m = 0; m < lengthof(echo); m++)
		{
			DdbJson    *j = ddb_json_member(specs[t], echo[m]);

			if (j == NULL)
				continue;
			appendStringInfo(&r.buf, ",\"%s\":", echo[m]);
			if (j->type == DDB_JSON_STRING)
				ddb_json_string(&r.buf, j->str, j->len);
			else if (j->type == DDB_JSON_BOOL)
				appendStringInfoString(&r.buf, j->boolean ? "true" : "false");
			else
				write_json_strings(&r.buf, j);
		}
		appendStringInfoChar(&r.buf, '}');
	}
	appendStringInfoChar(&r.buf, '}');

	if (capacity_wanted(rcc))
	{
		ddb_resp_key(&r, "ConsumedCapacity");
		appendStringInfoChar(&r.buf, '[');
		for (int t = 0; t < ntables; t++)
		{
			Capacity	c = {0};

			c.mode = rcc;
			c.read = true;
			c.table = member_bool(specs[t], "ConsistentRead", false) ?
				tables[t].read_units : tables[t].read_units / 2;
			if (t > 0)
				appendStringInfoChar(&r.buf, ',');
			capacity_object(&r.buf, &c, tables[t].table_name);
		}
		appendStringInfoChar(&r.buf, ']');
	}
	return ddb_resp_end(&r, len);
}

/*
 * TransactItems of TransactWriteItems (writes) or TransactGetItems: the
 * actions, parsed into the core's structs, in DynamoDB's order: the shapes
 * of the actions and the members' constraints (ddb_transact_check: the
 * count, table names, required members) before any action's item, key or
 * placeholders are converted, so that a request of 80,000 actions is
 * refused without converting them; then each action's own rules.
 */
static DdbTransactAction *
transact_actions(DdbJson *req, bool writes, int *n)
{
	static const char *const wkinds[] = {"ConditionCheck", "Put", "Delete", "Update"};
	static const char *const cond_expr[] = {"ConditionExpression", NULL};
	static const char *const update_expr[] = {"UpdateExpression", "ConditionExpression", NULL};
	static const char *const get_expr[] = {"ProjectionExpression", NULL};
	static const char *const no_legacy[] = {NULL};
	DdbJson    *list = member_list(req, "TransactItems");
	DdbTransactAction *actions;
	DdbJson   **specs;

	if (list == NULL)
		validation_error(DDB_MSG_VALIDATION_ERRORS, 1, "",
						 psprintf(DDB_MSG_CONSTRAINT, "null", "transactItems", "Member must not be null"));
	*n = list->n;
	actions = palloc0(sizeof(DdbTransactAction) * Max(list->n, 1));
	specs = palloc0(sizeof(DdbJson *) * Max(list->n, 1));
	for (int i = 0; i < list->n; i++)
	{
		DdbJson    *elem = list->elems[i];
		DdbTransactAction *a = &actions[i];
		int			found = 0;

		ddb_json_check_value_struct(elem, writes ? "TransactWriteItem" : "TransactGetItem");
		a->kind = DDB_TX_NONE;
		for (int k = 0; k < (writes ? lengthof(wkinds) : 1); k++)
		{
			const char *member = writes ? wkinds[k] : "Get";
			DdbJson    *m = member_struct(elem, member, member);

			if (m != NULL)
			{
				specs[i] = m;
				a->kind = writes ? (DdbTransactKind) k : DDB_TX_GET;
				found++;
			}
		}
		if (found != 1)
		{
			a->kind = DDB_TX_NONE;	/* refused below */
			continue;
		}
		a->table_name = member_string(specs[i], "TableName");
		a->doc_given = ddb_json_member(specs[i], a->kind == DDB_TX_PUT ? "Item" : "Key") != NULL;
		a->condition = member_string(specs[i], "ConditionExpression");
		a->update = member_string(specs[i], "UpdateExpression");
	}
	ddb_transact_check(actions, list->n, DDB_TRANSACT_MAX, !writes);

	for (int i = 0; i < list->n; i++)
	{
		DdbTransactAction *a = &actions[i];
		DdbJson    *spec = specs[i];
		ReqExpr		x;
		const char *rv;
		DdbValErrors e;

		/* (a Get missing was refused by the check) */
		if (a->kind == DDB_TX_NONE)
			validation_error("TransactItems can only contain one of Check, Put, Update or Delete");
		a->doc = request_item(spec, a->kind == DDB_TX_PUT ? "Item" : "Key");
		request_expressions(spec, &x,
							a->kind == DDB_TX_GET ? get_expr :
							a->kind == DDB_TX_UPDATE ? update_expr : cond_expr, no_legacy);
		a->condition = x.condition;
		a->update = x.update;
		a->projection = x.projection;
		a->names = x.names;
		a->vals = x.vals;
		if (!writes)
			continue;			/* a Get has no ReturnValuesOnConditionCheckFailure */
		ddb_valerr_init(&e);
		rv = ddb_check_return_on_failure(&e, spec,
										 psprintf("transactItems.%d.member.%s.", i + 1,
												  lower_first(wkinds[a->kind])));
		ddb_valerr_raise(&e);
		a->return_old = rv != NULL && strcmp(rv, "ALL_OLD") == 0;
	}
	return actions;
}

/*
 * Capacity per table of a transaction's actions, as DynamoDB bills them:
 * twice the units of the same non-transactional request.
 */
static void
transact_capacity(DdbResponse *r, DdbTransactAction *actions, int n, const char *rcc, bool read)
{
	Oid		   *relids = palloc(sizeof(Oid) * Max(n, 1));
	int			nrels = 0;

	ddb_resp_key(r, "ConsumedCapacity");
	appendStringInfoChar(&r->buf, '[');
	for (int i = 0; i < n; i++)
	{
		Oid			relid = RelationGetRelid(actions[i].rel);
		Capacity	sum = {0};
		bool		seen = false;

		for (int j = 0; j < nrels; j++)
			seen |= relids[j] == relid;
		if (seen)
			continue;
		relids[nrels++] = relid;
		sum.mode = rcc;
		sum.read = read;
		for (int k = i; k < n; k++)
		{
			Capacity	c = {0};

			if (RelationGetRelid(actions[k].rel) != relid)
				continue;
			c.mode = rcc;
			if (read)
				c.table = 2 * read_units(item_bytes(actions[k].item), true);
			else
			{
				write_capacity(&c, actions[k].rel, &actions[k].res);
				c.table *= 2;
				for (int x = 0; x < c.nindexes; x++)
					c.index_units[x] *= 2;
			}
			capacity_add(&sum, &c);
		}
		if (nrels > 1)
			appendStringInfoChar(&r->buf, ',');
		capacity_object(&r->buf, &sum, actions[i].table_name);
	}
	appendStringInfoChar(&r->buf, ']');
}

static char *
op_transact_write_items(DdbJson *req, int *len)
{
	return ddb_transact_write_request(req, NULL, len);
}

char *
ddb_transact_write_request(DdbJson *req, const DdbConditionReason *reasons, int *len)
{
	DdbValErrors e;
	const char *rcc;
	const char *icm;
	const char *token;
	DdbTransactAction *actions;
	int			n;
	bool		replayed;
	bool		ok;
	DdbResponse	r;

	ddb_valerr_init(&e);
	rcc = ddb_check_common(&e, req);
	icm = check_item_collection_metrics(&e, req);
	token = member_string(req, "ClientRequestToken");
	if (ddb_json_member(req, "TransactItems") == NULL)
		ddb_valerr_add(&e, NULL, "transactItems", "Member must not be null");
	ddb_valerr_raise(&e);
	actions = transact_actions(req, true, &n);
	for (int i = 0; i < n; i++)
	{
		actions[i].reads_old = capacity_wanted(rcc) || metrics_wanted(icm);
		if (reasons != NULL)
		{
			actions[i].condition_code = reasons[i].code;
			actions[i].condition_message = reasons[i].message;
		}
	}
	ok = ddb_transact_write_core(actions, n, DDB_TRANSACT_MAX, token, &replayed);
	if (!ok)
	{
		StringInfoData extra;

		for (int i = 0; i < n; i++)
			relation_close(actions[i].rel, NoLock);
		/* CancellationReasons: extra members of the error response */
		initStringInfo(&extra);
		appendStringInfoString(&extra, "{\"CancellationReasons\":[");
		for (int i = 0; i < n; i++)
		{
			if (i > 0)
				appendStringInfoChar(&extra, ',');
			appendStringInfoString(&extra, "{\"Code\":");
			ddb_json_cstring(&extra, actions[i].code ? actions[i].code : "None");
			if (actions[i].message)
			{
				appendStringInfoString(&extra, ",\"Message\":");
				ddb_json_cstring(&extra, actions[i].message);
			}
			if (actions[i].item)
			{
				appendStringInfoString(&extra, ",\"Item\":");
				ddb_json_write_jsonb_item(&extra, actions[i].item);
			}
			appendStringInfoChar(&extra, '}');
		}
		appendStringInfoString(&extra, "]}");
		ereport(ERROR,
				(errcode(DDB_ERRCODE_TRANSACTION_CANCELED),
				 errmsg_internal("%s", ddb_transact_canceled_message(actions, n)),
				 errdetail_internal("%s", extra.data)));
	}
	ddb_resp_begin(&r);
	if (capacity_wanted(rcc))
		transact_capacity(&r, actions, n, rcc, replayed);
	if (metrics_wanted(icm))
	{
		/* the writes' collections (a ConditionCheck writes none) */
		Relation   *rels = palloc(sizeof(Relation) * Max(n, 1));
		const char **names = palloc(sizeof(char *) * Max(n, 1));
		Jsonb	  **docs = palloc(sizeof(Jsonb *) * Max(n, 1));

		for (int i = 0; i < n; i++)
		{
			rels[i] = actions[i].rel;
			names[i] = actions[i].table_name;
			docs[i] = actions[i].kind == DDB_TX_CHECK ? NULL : actions[i].doc;
		}
		resp_item_collections(&r, rels, names, docs, n);
	}
	for (int i = 0; i < n; i++)
		relation_close(actions[i].rel, NoLock);	/* held to commit */
	return ddb_resp_end(&r, len);
}

static char *
op_transact_get_items(DdbJson *req, int *len)
{
	DdbValErrors e;
	const char *rcc;
	DdbTransactAction *actions;
	int			n;
	DdbResponse	r;

	ddb_valerr_init(&e);
	rcc = ddb_check_common(&e, req);
	if (ddb_json_member(req, "TransactItems") == NULL)
		ddb_valerr_add(&e, NULL, "transactItems", "Member must not be null");
	ddb_valerr_raise(&e);
	actions = transact_actions(req, false, &n);
	ddb_transact_get_core(actions, n);

	ddb_resp_begin(&r);
	ddb_resp_key(&r, "Responses");
	appendStringInfoChar(&r.buf, '[');
	for (int i = 0; i < n; i++)
	{
		if (i > 0)
			appendStringInfoChar(&r.buf, ',');
		appendStringInfoChar(&r.buf, '{');
		if (actions[i].item)
		{
			appendStringInfoString(&r.buf, "\"Item\":");
			ddb_json_write_jsonb_item(&r.buf, actions[i].item);
		}
		appendStringInfoChar(&r.buf, '}');
	}
	appendStringInfoChar(&r.buf, ']');
	if (capacity_wanted(rcc))
		transact_capacity(&r, actions, n, rcc, true);
	for (int i = 0; i < n; i++)
		relation_close(actions[i].rel, AccessShareLock);
	return ddb_resp_end(&r, len);
}

/* ------------------------------------------------------------------------
 * The entry point
 * ------------------------------------------------------------------------
 */
typedef char *(*OpHandler) (DdbJson *req, int *len);

typedef struct Operation
{
	const char *name;
	OpHandler	handler;
} Operation;

static const Operation operations[] = {
	{"BatchExecuteStatement", ddb_op_batch_execute_statement},
	{"BatchGetItem", op_batch_get_item},
	{"BatchWriteItem", op_batch_write_item},
	{"CreateTable", op_create_table},
	{"DeleteItem", op_delete_item},
	{"DeleteTable", op_delete_table},
	{"DescribeContinuousBackups", op_describe_continuous_backups},
	{"DescribeEndpoints", op_describe_endpoints},
	{"DescribeLimits", op_describe_limits},
	{"DescribeStream", ddb_op_describe_stream},
	{"DescribeTable", op_describe_table},
	{"DescribeTimeToLive", op_describe_time_to_live},
	{"ExecuteStatement", ddb_op_execute_statement},
	{"ExecuteTransaction", ddb_op_execute_transaction},
	{"GetItem", op_get_item},
	{"GetRecords", ddb_op_get_records},
	{"GetShardIterator", ddb_op_get_shard_iterator},
	{"ListStreams", ddb_op_list_streams},
	{"ListTables", op_list_tables},
	{"ListTagsOfResource", op_list_tags_of_resource},
	{"PutItem", op_put_item},
	{"Query", op_query},
	{"Scan", op_scan},
	{"TagResource", op_tag_resource},
	{"TransactGetItems", op_transact_get_items},
	{"TransactWriteItems", op_transact_write_items},
	{"UntagResource", op_untag_resource},
	{"UpdateContinuousBackups", op_update_continuous_backups},
	{"UpdateItem", op_update_item},
	{"UpdateTable", op_update_table},
	{"UpdateTimeToLive", op_update_time_to_live},
};

char *
ddb_api_execute(const char *operation, const char *body, int bodylen, int *resplen)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext cxt;
	const Operation *op = NULL;
	DdbJson    *req;
	char	   *resp;
	char	   *result;
	int			len;

	for (int i = 0; i < lengthof(operations); i++)
		if (operation && strcmp(operations[i].name, operation) == 0)
			op = &operations[i];
	if (op == NULL)
		ddb_raise(DDB_ERRCODE_UNKNOWN_OPERATION, "UnknownOperationException",
				  DDB_MSG_UNKNOWN_OPERATION);

	/* everything of the request lives in a context deleted on return */
	cxt = AllocSetContextCreate(CurrentMemoryContext, "ddb_api request",
								ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(cxt);
	req = ddb_json_parse(body, bodylen);
	if (req->type != DDB_JSON_OBJECT)
		ddb_raise(DDB_ERRCODE_SERIALIZATION, "SerializationException",
				  "Start of structure or map expected");
	resp = op->handler(req, &len);
	MemoryContextSwitchTo(caller);
	result = palloc(len + 1);
	memcpy(result, resp, len);
	result[len] = '\0';
	MemoryContextDelete(cxt);
	*resplen = len;
	return result;
}

/* ------------------------------------------------------------------------
 * SQL: ddb_api(operation text, request jsonb) RETURNS jsonb, and
 * ddb_api_text(operation text, request text) RETURNS text for bodies whose
 * strings hold U+0000, which jsonb cannot.
 * ------------------------------------------------------------------------
 */
/* Does JSON text hold the escape \u0000 (not an escaped backslash + u0000)? */
static bool
has_nul_escape(const char *s, int len)
{
	for (int i = 0; i < len; i++)
	{
		if (s[i] != '\\')
			continue;
		if (i + 5 < len && memcmp(s + i + 1, "u0000", 5) == 0)
			return true;
		i++;				/* skip the escaped character */
	}
	return false;
}

Datum
ddb_api(PG_FUNCTION_ARGS)
{
	char	   *operation;
	char	   *body;
	char	   *resp;
	int			len;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	operation = text_to_cstring(PG_GETARG_TEXT_PP(0));
	body = JsonbToCString(NULL, &PG_GETARG_JSONB_P(1)->root, VARSIZE(PG_GETARG_JSONB_P(1)));
	resp = ddb_api_execute(operation, body, strlen(body), &len);
	if (has_nul_escape(resp, len))
		ereport(ERROR,
				(errcode(ERRCODE_UNTRANSLATABLE_CHARACTER),
				 errmsg("the response holds a string with U+0000, which jsonb cannot represent"),
				 errhint("Call ddb_api_text(), which takes and returns JSON text.")));
	PG_RETURN_DATUM(DirectFunctionCall1(jsonb_in, CStringGetDatum(resp)));
}

Datum
ddb_api_text(PG_FUNCTION_ARGS)
{
	text	   *body;
	char	   *resp;
	int			len;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	body = PG_GETARG_TEXT_PP(1);
	resp = ddb_api_execute(text_to_cstring(PG_GETARG_TEXT_PP(0)),
						   VARDATA_ANY(body), VARSIZE_ANY_EXHDR(body), &len);
	PG_RETURN_TEXT_P(cstring_to_text_with_len(resp, len));
}
