/*-------------------------------------------------------------------------
 *
 * ddb_item.c
 *	  Items as the SQL API sees them: jsonb documents that include their key
 *	  attributes, to and from the rows of a ddb table.
 *
 * A row is (key columns..., item jsonb).  The API's item is the item jsonb
 * with the key attributes added under the key columns' names, in document
 * form (S: string, N: number, B: {"$B": "<base64>"}).  Going in, the key
 * attributes are taken out of the item, checked against the table's key
 * schema, and encoded; the rest is the item column.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/pg_type.h"
#include "common/base64.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/rel.h"
#include "utils/rls.h"

#include "ddb.h"
#include "model/ddb_expr.h"
#include "api/ddb_ops.h"

/* The DynamoDB name of key column k (see ddb_table.c). */
const char *
ddb_key_name(Relation rel, int k)
{
	return ddb_table_key_name(rel, k);
}

/* A key column value as a document-form JsonbValue. */
static void
key_to_jbv(DdbKeyType type, Datum d, JsonbValue *v)
{
	switch (type)
	{
		case DDB_KEY_S:
			{
				text	   *t = DatumGetTextPP(d);

				v->type = jbvString;
				v->val.string.val = VARDATA_ANY(t);
				v->val.string.len = VARSIZE_ANY_EXHDR(t);
				break;
			}
		case DDB_KEY_N:
			v->type = jbvNumeric;
			v->val.numeric = DatumGetNumeric(d);
			break;
		case DDB_KEY_B:
			{
				bytea	   *b = DatumGetByteaPP(d);
				int			len = VARSIZE_ANY_EXHDR(b);
				char	   *enc = palloc(pg_b64_enc_len(len) + 1);
				int			enclen = pg_b64_encode(VARDATA_ANY(b), len, enc, pg_b64_enc_len(len));
				JsonbParseState *ps = NULL;
				JsonbValue	k,
							s;

				if (enclen < 0)
					elog(ERROR, "base64 encoding failed");
				k.type = jbvString;
				k.val.string.val = "$B";
				k.val.string.len = 2;
				s.type = jbvString;
				s.val.string.val = enc;
				s.val.string.len = enclen;
				pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
				pushJsonbValue(&ps, WJB_KEY, &k);
				pushJsonbValue(&ps, WJB_VALUE, &s);
				*v = *pushJsonbValue(&ps, WJB_END_OBJECT, NULL);
				break;
			}
	}
}

/*
 * The API item of a full row tuple: the item column plus the key attributes.
 */
Jsonb *
ddb_tuple_to_item(Relation rel, HeapTuple tuple)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(rel);
	TupleDesc	desc = RelationGetDescr(rel);
	JsonbParseState *ps = NULL;
	JsonbValue *res;
	bool		isnull;
	Datum		itemd;

	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	for (int k = 0; k < ki->nkeys; k++)
	{
		Datum		d = heap_getattr(tuple, ki->keyattno[k], desc, &isnull);
		const char *name = ddb_key_name(rel, k);
		JsonbValue	jk,
					jv;

		if (isnull)
			continue;
		jk.type = jbvString;
		jk.val.string.val = (char *) name;
		jk.val.string.len = strlen(name);
		key_to_jbv(ki->keytype[k], d, &jv);
		pushJsonbValue(&ps, WJB_KEY, &jk);
		pushJsonbValue(&ps, WJB_VALUE, &jv);
	}
	itemd = heap_getattr(tuple, ki->itemattno, desc, &isnull);
	if (!isnull)
	{
		Jsonb	   *item = DatumGetJsonbP(itemd);
		JsonbIterator *it;
		JsonbValue	v;
		JsonbIteratorToken tok;

		if (JB_ROOT_IS_OBJECT(item))
		{
			it = JsonbIteratorInit(&item->root);
			while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
			{
				if (tok == WJB_KEY || tok == WJB_VALUE)
					pushJsonbValue(&ps, tok, &v);
			}
		}
	}
	res = pushJsonbValue(&ps, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(res);
}

static void
key_schema_error(Relation rel, const char *detail_fmt, const char *name)
{
	ereport(ERROR,
			(errcode(DDB_ERRCODE_VALIDATION),
			 errmsg("ValidationException: " DDB_MSG_KEY_SCHEMA_MISMATCH),
			 errdetail(detail_fmt, name, RelationGetRelationName(rel))));
}

/*
 * A string key holding U+0000 ({"$S": [...]} in document form): key
 * columns are PostgreSQL text, which cannot hold U+0000 (see README).
 */
static void
nul_key_check(JsonbValue *v, const char *name)
{
	if (v->type == jbvBinary && JsonContainerIsObject(v->val.binary.data) &&
		JsonContainerSize(v->val.binary.data) == 1 &&
		getKeyJsonValueFromContainer(v->val.binary.data, "$S", 2, NULL) != NULL)
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
				  "One or more parameter values were invalid: ddb does not support U+0000 in key attribute values. Key: %s",
				  name);
}

/* The DynamoDB type of a document-form value, for messages. */
static const char *
jbv_type_name(JsonbValue *v)
{
	if (v->type == jbvBinary)
		return ddb_type_name(ddb_value_from_jbv(v)->type);
	return v->type == jbvString ? "S" : v->type == jbvNumeric ? "N" :
		v->type == jbvBool ? "BOOL" : "NULL";
}

/*
 * An item's key attribute of the wrong type: PutItem's message names the
 * key and both types.
 */
static void
check_item_key_type(DdbKeyType type, JsonbValue *v, const char *name)
{
	bool		ok;

	nul_key_check(v, name);
	switch (type)
	{
		case DDB_KEY_S:
			ok = v->type == jbvString;
			break;
		case DDB_KEY_N:
			ok = v->type == jbvNumeric;
			break;
		default:
			ok = v->type == jbvBinary && ddb_value_from_jbv(v)->type == DDB_TYPE_B;
			break;
	}
	if (!ok)
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", DDB_MSG_KEY_TYPE_MISMATCH,
				  name, ddb_key_type_name(type), jbv_type_name(v));
}

/* A document-form value as a key column Datum, or error. */
static Datum
jbv_to_key(Relation rel, DdbKeyType type, JsonbValue *v, const char *name)
{
	switch (type)
	{
		case DDB_KEY_S:
			nul_key_check(v, name);
			if (v->type != jbvString)
				key_schema_error(rel, "Key attribute \"%s\" of table \"%s\" must be a string (S).", name);
			return PointerGetDatum(cstring_to_text_with_len(v->val.string.val, v->val.string.len));
		case DDB_KEY_N:
			if (v->type != jbvNumeric)
				key_schema_error(rel, "Key attribute \"%s\" of table \"%s\" must be a number (N).", name);
			return NumericGetDatum(v->val.numeric);
		case DDB_KEY_B:
			{
				JsonbValue *b64 = NULL;
				bytea	   *result;
				int			declen;

				if (v->type == jbvBinary &&
					JsonContainerIsObject(v->val.binary.data) &&
					JsonContainerSize(v->val.binary.data) == 1)
					b64 = getKeyJsonValueFromContainer(v->val.binary.data, "$B", 2, NULL);
				if (b64 == NULL || b64->type != jbvString)
					key_schema_error(rel, "Key attribute \"%s\" of table \"%s\" must be binary (B), written {\"$B\": \"<base64>\"}.", name);
				result = palloc(VARHDRSZ + pg_b64_dec_len(b64->val.string.len));
				declen = pg_b64_decode(b64->val.string.val, b64->val.string.len,
									   VARDATA(result), pg_b64_dec_len(b64->val.string.len));
				if (declen < 0)
					key_schema_error(rel, "Key attribute \"%s\" of table \"%s\" is not valid base64.", name);
				SET_VARSIZE(result, VARHDRSZ + declen);
				return PointerGetDatum(result);
			}
	}
	return (Datum) 0;
}

/* jbv_to_key for other files (GSI maintenance): the same checks and errors */
Datum
ddb_jbv_to_key(Relation rel, DdbKeyType type, JsonbValue *v, const char *name)
{
	return jbv_to_key(rel, type, v, name);
}

/*
 * DynamoDB's key value rules as ValidationExceptions (ddb_check_key_value
 * raises PostgreSQL's own SQLSTATEs, which suit SQL on the table).
 */
static void
api_check_key(DdbKeyType type, Datum d, bool partition, const char *name)
{
	int			limit = partition ? DDB_MAX_PARTITION_KEY_BYTES : DDB_MAX_SORT_KEY_BYTES;
	int			len;

	if (type == DDB_KEY_N)
	{
		ddb_check_number(DatumGetNumeric(d));
		return;
	}
	len = VARSIZE_ANY_EXHDR(DatumGetPointer(d));
	if (len == 0)
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", DDB_MSG_KEY_EMPTY_VALUE,
				  type == DDB_KEY_S ? "string" : "binary", name);
	if (len > limit)
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: One or more parameter values were invalid: Size of %s has exceeded the maximum size limit of %d bytes",
						partition ? "hashkey" : "rangekey", limit),
				 errdetail("Key attribute \"%s\" is %d bytes.", name, len)));
}

/*
 * Extract the key of an item or of a key document.  values/isnull are
 * indexed by attribute number - 1 (natts entries); the encoded key goes to
 * enckey.  With exact, the document must hold the key attributes and nothing
 * else (a GetItem/DeleteItem key), as DynamoDB requires.
 */
void
ddb_key_from_jsonb(Relation rel, Jsonb *doc, bool exact, Datum *values,
				   bool *isnull, StringInfo enckey)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(rel);

	if (!JB_ROOT_IS_OBJECT(doc) || JB_ROOT_IS_SCALAR(doc))
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: %s must be a JSON object of attributes",
						exact ? "the key" : "the item")));
	for (int a = 0; a < ki->natts; a++)
	{
		values[a] = (Datum) 0;
		isnull[a] = true;
	}
	for (int k = 0; k < ki->nkeys; k++)
	{
		const char *name = ddb_key_name(rel, k);
		JsonbValue *v = getKeyJsonValueFromContainer(&doc->root, name, strlen(name), NULL);

		if (v == NULL && exact)
			key_schema_error(rel, "Key attribute \"%s\" of table \"%s\" is missing.", name);
		if (v == NULL)
			ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", DDB_MSG_KEY_MISSING, name);
		if (!exact)
			check_item_key_type(ki->keytype[k], v, name);
		values[ki->keyattno[k] - 1] = jbv_to_key(rel, ki->keytype[k], v, name);
		isnull[ki->keyattno[k] - 1] = false;
		api_check_key(ki->keytype[k], values[ki->keyattno[k] - 1], k == 0, name);
		ddb_check_key_value(ki->keytype[k], values[ki->keyattno[k] - 1], k == 0, name);
	}
	if (exact && JsonContainerSize(&doc->root) != ki->nkeys)
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: " DDB_MSG_KEY_SCHEMA_MISMATCH),
				 errdetail("A key of table \"%s\" has exactly the key attributes and no others.",
						   RelationGetRelationName(rel))));
	ddb_encode_key(ki, values, isnull, enckey);
}

/*
 * The item column of an API item: the item without its key attributes.
 */
Jsonb *
ddb_item_without_keys(Relation rel, Jsonb *item)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(rel);
	JsonbParseState *ps = NULL;
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	bool		skip = false;

	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	it = JsonbIteratorInit(&item->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			skip = false;
			for (int k = 0; k < ki->nkeys; k++)
			{
				const char *name = ddb_key_name(rel, k);

				if (v.val.string.len == strlen(name) &&
					memcmp(v.val.string.val, name, v.val.string.len) == 0)
					skip = true;
			}
			if (!skip)
				pushJsonbValue(&ps, WJB_KEY, &v);
		}
		else if (tok == WJB_VALUE && !skip)
			pushJsonbValue(&ps, WJB_VALUE, &v);
	}
	return JsonbValueToJsonb(pushJsonbValue(&ps, WJB_END_OBJECT, NULL));
}
