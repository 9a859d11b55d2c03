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
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/elog.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "ddb.h"
#include "api/ddb_json.h"
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
	/* PostgreSQL's errors with a DynamoDB meaning */
	{ERRCODE_INSUFFICIENT_PRIVILEGE, "AccessDeniedException", NS_SERVICE, 400},
	{ERRCODE_T_R_SERIALIZATION_FAILURE, "TransactionConflictException", NS_DYNAMODB, 400},
	{ERRCODE_T_R_DEADLOCK_DETECTED, "TransactionConflictException", NS_DYNAMODB, 400},
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

/* A member, NULL when absent or null. */
static DdbJson *
member(DdbJson *req, const char *name)
{
	DdbJson    *j = ddb_json_get(req, name);

	return (j == NULL || j->type == DDB_JSON_NULL) ? NULL : j;
}

static const char *
member_string(DdbJson *req, const char *name)
{
	DdbJson    *j = member(req, name);

	if (j == NULL)
		return NULL;
	ddb_json_check_string(j);
	return j->str;
}

static bool
member_bool(DdbJson *req, const char *name, bool dflt)
{
	DdbJson    *j = member(req, name);

	return j ? ddb_json_check_bool(j) : dflt;
}

static bool
member_number(DdbJson *req, const char *name, const char *target, double *value)
{
	DdbJson    *j = member(req, name);

	if (j == NULL)
		return false;
	*value = ddb_json_check_number(j, target);
	return true;
}

static DdbJson *
member_list(DdbJson *req, const char *name)
{
	DdbJson    *j = member(req, name);

	if (j)
		ddb_json_check_list(j);
	return j;
}

static DdbJson *
member_struct(DdbJson *req, const char *name, const char *structname)
{
	DdbJson    *j = member(req, name);

	if (j)
		ddb_json_check_struct(j, structname);
	return j;
}

static DdbJson *
member_attribute_map(DdbJson *req, const char *name)
{
	DdbJson    *j = member(req, name);

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
	if (!ddb_valid_name_chars(t) || t[0] == '\0')
		ddb_valerr_add(e, t, m, "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+");
	if (strlen(t) < 3)
		ddb_valerr_add(e, t, m, "Member must have length greater than or equal to 3");
	if (strlen(t) > 255)
		ddb_valerr_add(e, t, m, "Member must have length less than or equal to 255");
	return t;
}

/* ------------------------------------------------------------------------
 * Responses
 * ------------------------------------------------------------------------
 */
typedef struct Response
{
	StringInfoData buf;
	bool		first;
} Response;

static void
resp_begin(Response *r)
{
	initStringInfo(&r->buf);
	appendStringInfoChar(&r->buf, '{');
	r->first = true;
}

static void
resp_key(Response *r, const char *key)
{
	ddb_json_key(&r->buf, &r->first, key);
}

static void
resp_item(Response *r, const char *key, Jsonb *item)
{
	if (item == NULL)
		return;
	resp_key(r, key);
	ddb_json_write_jsonb_item(&r->buf, item);
}

static char *
resp_end(Response *r, int *len)
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

static char *
op_create_table(DdbJson *req, int *len)
{
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
	Response	r;

	memset(&ct, 0, sizeof(ct));
	ct.name = member_string(req, "TableName");
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
				ddb_json_check_struct(d, "AttributeDefinition");
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

			ddb_json_check_struct(k, "KeySchemaElement");
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
	if (member(req, "GlobalSecondaryIndexes") == NULL && ct.nkeys != ndefs)
		validation_error("One or more parameter values were invalid: Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions");
	if (member(req, "GlobalSecondaryIndexes") != NULL || member(req, "LocalSecondaryIndexes") != NULL)
		validation_error("One or more parameter values were invalid: secondary indexes in CreateTable are not supported yet; create the table, then add each index with UpdateTable");

	ddb_check_create_table(&ct);
	relid = ddb_create_table_core(&ct);

	rel = ddb_open_table(relid, ACL_SELECT);
	resp_begin(&r);
	resp_key(&r, "TableDescription");
	ddb_describe_table_json(rel, "ACTIVE", &r.buf);
	relation_close(rel, AccessShareLock);
	return resp_end(&r, len);
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
	Oid			relid;

	ddb_valerr_init(&e);
	name = check_table_name(&e, req, "TableName");
	ddb_valerr_raise(&e);
	relid = ddb_table_lookup(name);
	if (!OidIsValid(relid))
		ddb_raise(DDB_ERRCODE_RESOURCE_NOT_FOUND, "ResourceNotFoundException",
				  DDB_MSG_TABLE_NOT_FOUND, name);
	return ddb_open_table(relid, ACL_SELECT);
}

static char *
op_describe_table(DdbJson *req, int *len)
{
	Relation	rel = open_named_table(req);
	Response	r;

	resp_begin(&r);
	resp_key(&r, "Table");
	ddb_describe_table_json(rel, "ACTIVE", &r.buf);
	relation_close(rel, AccessShareLock);
	return resp_end(&r, len);
}

static char *
op_delete_table(DdbJson *req, int *len)
{
	Relation	rel = open_named_table(req);
	Response	r;

	resp_begin(&r);
	resp_key(&r, "TableDescription");
	ddb_describe_table_json(rel, "DELETING", &r.buf);
	ddb_delete_table_core(rel);
	return resp_end(&r, len);
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
	Response	r;
	int			n = 0;
	const char *last = NULL;

	ddb_valerr_init(&e);
	if (start != NULL)
	{
		if (!ddb_valid_name_chars(start) || start[0] == '\0')
			ddb_valerr_add(&e, start, "exclusiveStartTableName",
						   "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+");
		if (strlen(start) < 3)
			ddb_valerr_add(&e, start, "exclusiveStartTableName",
						   "Member must have length greater than or equal to 3");
		if (strlen(start) > 255)
			ddb_valerr_add(&e, start, "exclusiveStartTableName",
						   "Member must have length less than or equal to 255");
	}
	if (has_limit && limit < 1)
		ddb_valerr_add(&e, psprintf("%.0f", limit), "limit",
					   "Member must have value greater than or equal to 1");
	if (has_limit && limit > 100)
		ddb_valerr_add(&e, psprintf("%.0f", limit), "limit",
					   "Member must have value less than or equal to 100");
	ddb_valerr_raise(&e);

	names = ddb_list_table_names();
	resp_begin(&r);
	resp_key(&r, "TableNames");
	appendStringInfoChar(&r.buf, '[');
	foreach(lc, names)
	{
		const char *name = lfirst(lc);

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
		resp_key(&r, "LastEvaluatedTableName");
		ddb_json_cstring(&r.buf, last);
	}
	return resp_end(&r, len);
}

/* ------------------------------------------------------------------------
 * Items
 * ------------------------------------------------------------------------
 */

/* ExpressionAttributeNames as the jsonb the expression parser takes. */
static Jsonb *
request_names(DdbJson *req)
{
	DdbJson    *j = member(req, "ExpressionAttributeNames");
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

/* ExpressionAttributeValues as document-form jsonb. */
static Jsonb *
request_values(DdbJson *req)
{
	DdbJson    *j = member_attribute_map(req, "ExpressionAttributeValues");

	return j ? ddb_typed_item_jsonb(j) : NULL;
}

/* A key or item member (Key, Item) as a document-form item. */
static Jsonb *
request_item(DdbJson *req, const char *name)
{
	DdbJson    *j = member_attribute_map(req, name);

	return j ? ddb_typed_item_jsonb(j) : NULL;
}

/* Members every item operation shares: ReturnConsumedCapacity. */
static void
check_common(DdbValErrors *e, DdbJson *req)
{
	check_enum(e, member_string(req, "ReturnConsumedCapacity"), "ReturnConsumedCapacity",
			   return_consumed_set, RETURN_CONSUMED_LIST);
}

static char *
op_get_item(DdbJson *req, int *len)
{
	DdbValErrors e;
	const char *name;
	Jsonb	   *key;
	const char *projection = member_string(req, "ProjectionExpression");
	Jsonb	   *names = request_names(req);
	DdbProjection *proj = NULL;
	Relation	rel;
	Jsonb	   *item;
	Response	r;

	(void) member_bool(req, "ConsistentRead", false);
	ddb_valerr_init(&e);
	check_common(&e, req);
	name = check_table_name(&e, req, "TableName");
	if (member(req, "Key") == NULL)
		ddb_valerr_add(&e, NULL, "key", "Member must not be null");
	ddb_valerr_raise(&e);
	if (names != NULL && projection == NULL)
		validation_error(DDB_MSG_EAN_WITHOUT_EXPRESSIONS);
	key = request_item(req, "Key");

	rel = ddb_table_open(name, ACL_SELECT);
	if (projection != NULL)
	{
		DdbExprContext *cx = ddb_expr_begin(names, NULL);

		proj = ddb_parse_projection(cx, projection);
		ddb_expr_end(cx);
	}
	item = ddb_get_item_core(rel, key, proj);
	relation_close(rel, AccessShareLock);

	resp_begin(&r);
	resp_item(&r, "Item", item);
	return resp_end(&r, len);
}

static char *
op_put_item(DdbJson *req, int *len)
{
	static const char *const rv_set[] = {"ALL_NEW", "UPDATED_OLD", "ALL_OLD", "NONE", "UPDATED_NEW", NULL};
	DdbValErrors e;
	const char *name;
	const char *condition = member_string(req, "ConditionExpression");
	const char *rvs;
	Jsonb	   *names = request_names(req);
	Jsonb	   *vals;
	Jsonb	   *item;
	DdbReturnValues rv;
	DdbCondition *cond = NULL;
	Relation	rel;
	DdbWriteResult res;
	Response	r;

	ddb_valerr_init(&e);
	check_common(&e, req);
	name = check_table_name(&e, req, "TableName");
	if (member(req, "Item") == NULL)
		ddb_valerr_add(&e, NULL, "item", "Member must not be null");
	rvs = check_enum(&e, member_string(req, "ReturnValues"), "ReturnValues", rv_set,
					 "ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW");
	ddb_valerr_raise(&e);
	if (names != NULL && condition == NULL)
		validation_error(DDB_MSG_EAN_WITHOUT_EXPRESSIONS);
	item = request_item(req, "Item");
	vals = request_values(req);
	if (vals != NULL && condition == NULL)
		validation_error(DDB_MSG_EAV_WITHOUT_EXPRESSIONS, "ConditionExpression is null");
	rv = ddb_parse_return_values(rvs, false);

	rel = ddb_table_open(name, ACL_INSERT);
	ddb_check_write_privileges(rel, ACL_INSERT, condition != NULL || rv != DDB_RV_NONE);
	if (condition != NULL || names != NULL || vals != NULL)
	{
		DdbExprContext *cx = ddb_expr_begin(names, vals);

		if (condition)
			cond = ddb_parse_condition(cx, condition, "ConditionExpression");
		ddb_expr_end(cx);
	}
	ddb_put_item_core(rel, item, cond, &res);
	relation_close(rel, NoLock);
	if (res.condition_failed)
		ddb_condition_failed();

	resp_begin(&r);
	resp_item(&r, "Attributes", ddb_write_result(&res, rv));
	return resp_end(&r, len);
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
	{"CreateTable", op_create_table},
	{"DeleteTable", op_delete_table},
	{"DescribeTable", op_describe_table},
	{"GetItem", op_get_item},
	{"ListTables", op_list_tables},
	{"PutItem", op_put_item},
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
	if (strstr(resp, "\\u0000") != NULL)
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
