/*-------------------------------------------------------------------------
 *
 * ddb_legacy.c
 *	  DynamoDB's legacy request parameters, translated into expressions.
 *
 * AttributesToGet, KeyConditions, QueryFilter, ScanFilter, Expected (with
 * ConditionalOperator) and AttributeUpdates predate DynamoDB's expression
 * language, and many applications and libraries still send them.  Each is
 * translated here into the equivalent ProjectionExpression,
 * KeyConditionExpression, FilterExpression, ConditionExpression or
 * UpdateExpression, with its names and values as generated placeholders
 * (#l0, :l0, ...), so the one expression evaluator runs them: there is no
 * second implementation of conditions or updates.  A request may not mix
 * the two forms (DynamoDB's rule, checked by the caller), so the
 * placeholders never meet the user's.
 *
 * The translations (DynamoDB's documented equivalences):
 *	EQ NE LT LE GT GE	a = :v, a <> :v, ...
 *	NULL / NOT_NULL		attribute_not_exists(a) / attribute_exists(a)
 *	CONTAINS			contains(a, :v); NOT_CONTAINS: NOT contains(a, :v)
 *	BEGINS_WITH			begins_with(a, :v)
 *	IN					a IN (:v0, :v1, ...)
 *	BETWEEN				a BETWEEN :v0 AND :v1
 *	Expected {Exists: false}		attribute_not_exists(a)
 *	Expected {Value: v [, Exists: true]}	a = :v
 *	AttributeUpdates PUT: SET a = :v; ADD: ADD a :v; DELETE: REMOVE a, or
 *	DELETE a :v with a value
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "ddb.h"
#include "api/ddb_json.h"
#include "api/ddb_legacy.h"

#define validation_error(...) \
	ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", __VA_ARGS__)

void
ddb_legacy_init(DdbLegacy *lx)
{
	memset(lx, 0, sizeof(DdbLegacy));
	lx->values = ddb_value_new(DDB_TYPE_M);
}

/* A placeholder for an attribute name. */
static char *
name_placeholder(DdbLegacy *lx, const char *name)
{
	char	   *ph = psprintf("#l%d", lx->nnames++);

	lx->names = lappend(lx->names, ph);
	lx->names = lappend(lx->names, pstrdup(name));
	return ph;
}

/* A placeholder for a typed value. */
static char *
value_placeholder(DdbLegacy *lx, DdbJson *typed)
{
	char	   *ph = psprintf(":l%d", lx->nvalues++);

	ddb_map_put(lx->values, ph, ddb_typed_value(typed));
	return ph;
}

/* The names and values of the translated expressions, as jsonb. */
Jsonb *
ddb_legacy_names(DdbLegacy *lx)
{
	JsonbParseState *ps = NULL;
	ListCell   *lc;

	if (lx->nnames == 0)
		return NULL;
	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	foreach(lc, lx->names)
	{
		JsonbValue	v;
		char	   *s = lfirst(lc);

		v.type = jbvString;
		v.val.string.val = s;
		v.val.string.len = strlen(s);
		pushJsonbValue(&ps, foreach_current_index(lc) % 2 == 0 ? WJB_KEY : WJB_VALUE, &v);
	}
	return JsonbValueToJsonb(pushJsonbValue(&ps, WJB_END_OBJECT, NULL));
}

Jsonb *
ddb_legacy_values(DdbLegacy *lx)
{
	return lx->nvalues == 0 ? NULL : ddb_item_to_jsonb(lx->values);
}

/* AttributesToGet -> ProjectionExpression */
char *
ddb_legacy_projection(DdbLegacy *lx, DdbJson *attrs)
{
	StringInfoData buf;

	ddb_json_check_list(attrs);
	/* (the item operations list it with their other member errors first) */
	if (attrs->n < 1)
		validation_error(DDB_MSG_VALIDATION_ERRORS, 1, "",
						 "Value '[]' at 'attributesToGet' failed to satisfy constraint: Member must have length greater than or equal to 1");
	initStringInfo(&buf);
	for (int i = 0; i < attrs->n; i++)
	{
		(void) ddb_json_member_cstring(attrs->elems[i], "AttributesToGet");
		for (int j = 0; j < i; j++)
			if (strcmp(attrs->elems[i]->str, attrs->elems[j]->str) == 0)
				validation_error("One or more parameter values were invalid: Duplicate value in attribute name: %s",
								 attrs->elems[i]->str);
		appendStringInfo(&buf, "%s%s", i ? ", " : "", name_placeholder(lx, attrs->elems[i]->str));
	}
	return buf.data;
}

typedef struct LegacyOp
{
	const char *name;
	int			minargs;
	int			maxargs;
	const char *types;			/* the value types it takes, or NULL: any */
} LegacyOp;

static const LegacyOp legacy_ops[] = {
	{"EQ", 1, 1, NULL},
	{"NE", 1, 1, NULL},
	{"LE", 1, 1, "S N B"},
	{"LT", 1, 1, "S N B"},
	{"GE", 1, 1, "S N B"},
	{"GT", 1, 1, "S N B"},
	{"NOT_NULL", 0, 0, NULL},
	{"NULL", 0, 0, NULL},
	{"CONTAINS", 1, 1, "S N B"},
	{"NOT_CONTAINS", 1, 1, "S N B"},
	{"BEGINS_WITH", 1, 1, "S B"},
	{"IN", 1, 100, "S N B"},
	{"BETWEEN", 2, 2, "S N B"},
};

/*
 * The legacy members' enums, in the order DynamoDB's messages list them:
 * the request's member checks (ddb_protocol.c) refuse anything else, so
 * the translation below meets only these.
 */
const char *const ddb_legacy_comparison_ops[] = {"IN", "NULL", "BETWEEN", "LT", "NOT_CONTAINS", "EQ",
"GT", "NOT_NULL", "NE", "LE", "BEGINS_WITH", "GE", "CONTAINS", NULL};
const char *const ddb_legacy_conditional_ops[] = {"OR", "AND", NULL};

/* The value type of a typed AttributeValue ("S", "N", ...). */
static const char *
typed_type(DdbJson *v)
{
	return ddb_type_name(ddb_typed_value(v)->type);
}

/*
 * One condition {ComparisonOperator, AttributeValueList} on attribute
 * 'attr', as expression text.
 */
static char *
one_condition(DdbLegacy *lx, const char *attr, const char *opname, DdbJson *list)
{
	const LegacyOp *op = NULL;
	char	   *a;
	int			n = list ? list->n : 0;
	char	   *ph[100];

	for (int i = 0; i < lengthof(legacy_ops); i++)
		if (strcmp(legacy_ops[i].name, opname) == 0)
			op = &legacy_ops[i];
	if (op == NULL)				/* the request's member checks refused it */
		elog(ERROR, "unknown ComparisonOperator \"%s\"", opname);
	if (n < op->minargs || n > op->maxargs)
		validation_error("One or more parameter values were invalid: Invalid number of argument(s) for the %s ComparisonOperator",
						 opname);
	for (int i = 0; i < n; i++)
	{
		const char *t = typed_type(list->elems[i]);

		if (i > 0 && strcmp(t, typed_type(list->elems[0])) != 0)
			validation_error("One or more parameter values were invalid: AttributeValues inside AttributeValueList must be of same type");
		if (op->types && (strlen(t) != 1 || strstr(op->types, t) == NULL))
			validation_error("One or more parameter values were invalid: ComparisonOperator %s is not valid for %s AttributeValue type",
							 opname, t);
		if (strcmp(op->name, "EQ") == 0 || strcmp(op->name, "NE") == 0)
		{
			if (strcmp(t, "S") != 0 && strcmp(t, "N") != 0 && strcmp(t, "B") != 0 &&
				strcmp(t, "SS") != 0 && strcmp(t, "NS") != 0 && strcmp(t, "BS") != 0 &&
				strcmp(t, "L") != 0 && strcmp(t, "M") != 0 && strcmp(t, "BOOL") != 0 &&
				strcmp(t, "NULL") != 0)
				validation_error("One or more parameter values were invalid: ComparisonOperator %s is not valid for %s AttributeValue type",
								 opname, t);
		}
		ph[i] = value_placeholder(lx, list->elems[i]);
	}
	if (strcmp(op->name, "BETWEEN") == 0 &&
		ddb_scalar_cmp(ddb_map_get(lx->values, ph[0]), ddb_map_get(lx->values, ph[1])) > 0)
		validation_error("The BETWEEN condition was provided a range where the lower bound is greater than the upper bound");

	a = name_placeholder(lx, attr);
	if (strcmp(opname, "EQ") == 0)
		return psprintf("%s = %s", a, ph[0]);
	if (strcmp(opname, "NE") == 0)
		return psprintf("%s <> %s", a, ph[0]);
	if (strcmp(opname, "LE") == 0)
		return psprintf("%s <= %s", a, ph[0]);
	if (strcmp(opname, "LT") == 0)
		return psprintf("%s < %s", a, ph[0]);
	if (strcmp(opname, "GE") == 0)
		return psprintf("%s >= %s", a, ph[0]);
	if (strcmp(opname, "GT") == 0)
		return psprintf("%s > %s", a, ph[0]);
	if (strcmp(opname, "NOT_NULL") == 0)
		return psprintf("attribute_exists(%s)", a);
	if (strcmp(opname, "NULL") == 0)
		return psprintf("attribute_not_exists(%s)", a);
	if (strcmp(opname, "CONTAINS") == 0)
		return psprintf("contains(%s, %s)", a, ph[0]);
	if (strcmp(opname, "NOT_CONTAINS") == 0)
		return psprintf("NOT contains(%s, %s)", a, ph[0]);
	if (strcmp(opname, "BEGINS_WITH") == 0)
		return psprintf("begins_with(%s, %s)", a, ph[0]);
	if (strcmp(opname, "BETWEEN") == 0)
		return psprintf("%s BETWEEN %s AND %s", a, ph[0], ph[1]);
	/* IN */
	{
		StringInfoData buf;

		initStringInfo(&buf);
		appendStringInfo(&buf, "%s IN (", a);
		for (int i = 0; i < n; i++)
			appendStringInfo(&buf, "%s%s", i ? ", " : "", ph[i]);
		appendStringInfoChar(&buf, ')');
		return buf.data;
	}
}

static const char *
conditional_operator(const char *op)
{
	if (op == NULL || strcmp(op, "AND") == 0)
		return " AND ";
	if (strcmp(op, "OR") == 0)
		return " OR ";
	/* the request's member checks refused it */
	elog(ERROR, "unknown ConditionalOperator \"%s\"", op);
	return NULL;
}

/*
 * KeyConditions, QueryFilter, ScanFilter: {attr: {ComparisonOperator,
 * AttributeValueList}, ...} joined by ConditionalOperator (AND by default).
 * 'member' is the member's name as DynamoDB's messages write it
 * ("scanFilter").
 */
char *
ddb_legacy_conditions(DdbLegacy *lx, DdbJson *conds, const char *condop, const char *member)
{
	StringInfoData buf;
	const char *sep = conditional_operator(condop);
	bool		first = true;

	ddb_json_check_struct(conds, "Condition");
	ddb_json_check_key_names(conds, "An attribute name");
	initStringInfo(&buf);
	for (int i = 0; i < conds->n; i++)
	{
		DdbJson    *c = conds->elems[i];
		DdbJson    *list;
		DdbJson    *op;

		if (c->type == DDB_JSON_NULL)
			continue;
		ddb_json_check_value_struct(c, "Condition");
		op = ddb_json_get(c, "ComparisonOperator");
		list = ddb_json_get(c, "AttributeValueList");
		if (op == NULL || op->type == DDB_JSON_NULL)	/* the request's member checks refused it */
			elog(ERROR, "%s.%s has no ComparisonOperator", member, conds->keys[i]);
		ddb_json_check_string(op);
		if (list && list->type == DDB_JSON_NULL)
			list = NULL;
		if (list)
			ddb_json_check_list(list);
		appendStringInfo(&buf, "%s(%s)", first ? "" : sep,
						 one_condition(lx, conds->keys[i], op->str, list));
		first = false;
	}
	return first ? NULL : buf.data;
}

/*
 * KeyConditions -> KeyConditionExpression.  Only EQ, LE, LT, GE, GT,
 * BEGINS_WITH and BETWEEN select a key range; DynamoDB refuses the other
 * operators on a key with a message of its own, which must not become the
 * expression parser's (naming an operator the request never wrote).
 */
char *
ddb_legacy_key_conditions(DdbLegacy *lx, DdbJson *conds)
{
	static const char *const not_indexable[] = {"NE", "NULL", "NOT_NULL", "CONTAINS", "NOT_CONTAINS", "IN"};
	char	   *expr = ddb_legacy_conditions(lx, conds, "AND", "keyConditions");

	for (int i = 0; i < conds->n; i++)
	{
		DdbJson    *op;

		if (conds->elems[i]->type == DDB_JSON_NULL)
			continue;
		op = ddb_json_get(conds->elems[i], "ComparisonOperator");
		for (int k = 0; k < lengthof(not_indexable); k++)
			if (strcmp(op->str, not_indexable[k]) == 0)
				validation_error(DDB_MSG_KEY_NOT_INDEXABLE);
	}
	return expr;
}

/* Expected (with ConditionalOperator) -> ConditionExpression */
char *
ddb_legacy_expected(DdbLegacy *lx, DdbJson *expected, const char *condop)
{
	StringInfoData buf;
	const char *sep = conditional_operator(condop);
	bool		first = true;

	ddb_json_check_struct(expected, "ExpectedAttributeValue");
	ddb_json_check_key_names(expected, "An attribute name");
	initStringInfo(&buf);
	for (int i = 0; i < expected->n; i++)
	{
		DdbJson    *c = expected->elems[i];
		const char *attr = expected->keys[i];
		DdbJson    *value,
				   *exists,
				   *op,
				   *list;
		char	   *text;

		if (c->type == DDB_JSON_NULL)
			continue;
		ddb_json_check_value_struct(c, "ExpectedAttributeValue");
		value = ddb_json_get(c, "Value");
		exists = ddb_json_get(c, "Exists");
		op = ddb_json_get(c, "ComparisonOperator");
		list = ddb_json_get(c, "AttributeValueList");
		value = value && value->type != DDB_JSON_NULL ? value : NULL;
		exists = exists && exists->type != DDB_JSON_NULL ? exists : NULL;
		op = op && op->type != DDB_JSON_NULL ? op : NULL;
		list = list && list->type != DDB_JSON_NULL ? list : NULL;
		if (list && value)
			validation_error("One or more parameter values were invalid: Value and AttributeValueList cannot be used together for Attribute: %s", attr);
		if (op)
		{
			DdbJson		one;
			DdbJson    *elems[1];

			if (exists)
				validation_error("One or more parameter values were invalid: Exists and ComparisonOperator cannot be used together for Attribute: %s", attr);
			ddb_json_check_string(op);
			if (value)
			{
				/* Value is a one-element AttributeValueList */
				memset(&one, 0, sizeof(one));
				one.type = DDB_JSON_ARRAY;
				one.n = 1;
				elems[0] = value;
				one.elems = elems;
				list = &one;
			}
			if (list)
				ddb_json_check_list(list);
			if (list == NULL && strcmp(op->str, "NULL") != 0 && strcmp(op->str, "NOT_NULL") != 0)
				validation_error("One or more parameter values were invalid: Value or AttributeValueList must be used with ComparisonOperator: %s for Attribute: %s",
								 op->str, attr);
			text = one_condition(lx, attr, op->str, list);
		}
		else if (list)
			validation_error("One or more parameter values were invalid: AttributeValueList can only be used with a ComparisonOperator for Attribute: %s", attr);
		else
		{
			bool		ex = exists ? ddb_json_check_bool(exists) : true;

			if (ex && value == NULL)
				validation_error("One or more parameter values were invalid: Value must be provided when Exists is %s for Attribute: %s",
								 exists ? "true" : "null", attr);
			if (!ex && value != NULL)
				validation_error("One or more parameter values were invalid: Value cannot be used when Exists is false for Attribute: %s", attr);
			if (ex)
				text = psprintf("%s = %s", name_placeholder(lx, attr), value_placeholder(lx, value));
			else
				text = psprintf("attribute_not_exists(%s)", name_placeholder(lx, attr));
		}
		appendStringInfo(&buf, "%s(%s)", first ? "" : sep, text);
		first = false;
	}
	return first ? NULL : buf.data;
}

/* AttributeUpdates -> UpdateExpression (NULL when it holds no update) */
char *
ddb_legacy_updates(DdbLegacy *lx, DdbJson *updates)
{
	StringInfoData set,
				remove,
				add,
				del,
				out;

	ddb_json_check_struct(updates, "AttributeValueUpdate");
	ddb_json_check_key_names(updates, "An attribute name");
	initStringInfo(&set);
	initStringInfo(&remove);
	initStringInfo(&add);
	initStringInfo(&del);
	for (int i = 0; i < updates->n; i++)
	{
		DdbJson    *u = updates->elems[i];
		const char *attr = updates->keys[i];
		DdbJson    *action,
				   *value;
		const char *act = "PUT";

		if (u->type == DDB_JSON_NULL)
			continue;
		ddb_json_check_value_struct(u, "AttributeValueUpdate");
		action = ddb_json_get(u, "Action");
		value = ddb_json_get(u, "Value");
		value = value && value->type != DDB_JSON_NULL ? value : NULL;
		if (action && action->type != DDB_JSON_NULL)
		{
			ddb_json_check_string(action);
			act = action->str;
		}
		if (strcmp(act, "PUT") == 0)
		{
			if (value == NULL)
				validation_error("One or more parameter values were invalid: Only DELETE action is allowed when no attribute value is specified");
			appendStringInfo(&set, "%s%s = %s", set.len ? ", " : "",
							 name_placeholder(lx, attr), value_placeholder(lx, value));
		}
		else if (strcmp(act, "ADD") == 0)
		{
			const char *t;

			if (value == NULL)
				validation_error("One or more parameter values were invalid: Only DELETE action is allowed when no attribute value is specified");
			t = typed_type(value);
			if (strcmp(t, "L") == 0)
			{
				/* ADD of a list appends to it (or creates it), as DynamoDB does */
				char	   *a = name_placeholder(lx, attr);

				appendStringInfo(&set, "%s%s = list_append(if_not_exists(%s, %s), %s)",
								 set.len ? ", " : "", a, a,
								 value_placeholder(lx, ddb_json_parse("{\"L\": []}", 9)),
								 value_placeholder(lx, value));
			}
			else if (strcmp(t, "N") == 0 || strcmp(t, "SS") == 0 ||
					 strcmp(t, "NS") == 0 || strcmp(t, "BS") == 0)
				appendStringInfo(&add, "%s%s %s", add.len ? ", " : "",
								 name_placeholder(lx, attr), value_placeholder(lx, value));
			else
				validation_error("One or more parameter values were invalid: ADD action is not supported for the type %s", t);
		}
		else if (strcmp(act, "DELETE") == 0)
		{
			if (value == NULL)
				appendStringInfo(&remove, "%s%s", remove.len ? ", " : "",
								 name_placeholder(lx, attr));
			else
			{
				const char *t = typed_type(value);

				if (strcmp(t, "SS") != 0 && strcmp(t, "NS") != 0 && strcmp(t, "BS") != 0)
					validation_error("One or more parameter values were invalid: DELETE action with value is not supported for the type %s", t);
				appendStringInfo(&del, "%s%s %s", del.len ? ", " : "",
								 name_placeholder(lx, attr), value_placeholder(lx, value));
			}
		}
		else					/* the request's member checks refused it */
			elog(ERROR, "unknown AttributeUpdates Action \"%s\"", act);
	}
	initStringInfo(&out);
	if (set.len)
		appendStringInfo(&out, "SET %s ", set.data);
	if (remove.len)
		appendStringInfo(&out, "REMOVE %s ", remove.data);
	if (add.len)
		appendStringInfo(&out, "ADD %s ", add.data);
	if (del.len)
		appendStringInfo(&out, "DELETE %s ", del.data);
	return out.len ? out.data : NULL;
}
