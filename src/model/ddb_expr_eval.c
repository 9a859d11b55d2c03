/*-------------------------------------------------------------------------
 *
 * ddb_expr_eval.c
 *	  Evaluation of parsed DynamoDB expressions against items.
 *
 * Conditions follow DynamoDB's comparison rules, which never raise errors
 * at evaluation time:
 *	- = and <> compare any two values: different types are unequal, sets
 *	  are unordered, numbers compare numerically, maps by attribute name;
 *	- < <= > >= and BETWEEN order two values of one scalar type (S by UTF-8
 *	  bytes, N numerically, B by unsigned bytes); anything else is false;
 *	- a missing attribute makes every comparison false except <>, which is
 *	  true (the values are not equal);
 *	- contains() looks for a substring (S), a byte run (B), a member (sets)
 *	  or an equal element (L); begins_with() takes S or B prefixes;
 *	- size() is the length of S in UTF-16 code units (as DynamoDB, a Java
 *	  service, counts it: "é𝄞" is 3), of B in bytes, the number of
 *	  elements of a set, L or M; of other types (N, BOOL, NULL) it yields no
 *	  value, so the comparison using it is false.  size(:value) measures the
 *	  value (the parser has refused the types without a size).
 *
 * Updates follow UpdateItem: every operand is read from the item as it was
 * before the update; SET into a map or list requires the parent to exist
 * (setting list indexes past the end appends, in index order); REMOVE of
 * list elements shifts the rest left; all list indexes name positions
 * before the update (REMOVE l[1] SET l[3] = x replaces the old l[3]);
 * REMOVE through a missing parent is an error, except on a missing item
 * (DynamoDB ignores it there);
 * ADD adds numbers or unions sets, creating the attribute when missing;
 * DELETE subtracts a set and removes the attribute when it becomes empty.
 * Type mismatches at this stage are DynamoDB's "An operand in the update
 * expression has an incorrect data type".
 *
 * Projections keep the nested structure of the projected paths: a.b yields
 * {"a": {"b": ...}}, l[1] and l[3] yield {"l": [l1, l3]} (list elements
 * keep their order and close up).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "mb/pg_wchar.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "ddb.h"
#include "model/ddb_expr.h"

PG_FUNCTION_INFO_V1(ddb_eval_condition_sql);
PG_FUNCTION_INFO_V1(ddb_apply_update_sql);
PG_FUNCTION_INFO_V1(ddb_project_sql);
PG_FUNCTION_INFO_V1(ddb_key_condition_sql);

/* ------------------------------------------------------------------------
 * Paths
 * ------------------------------------------------------------------------
 */
static DdbValue *
path_step(DdbValue *v, DdbPathElem *e)
{
	if (e->kind == DDB_PATH_NAME)
		return v->type == DDB_TYPE_M ? ddb_map_get(v, e->name) : NULL;
	if (v->type == DDB_TYPE_L && e->index < v->u.list.n)
		return v->u.list.elems[e->index];
	return NULL;
}

/* The value at a path, or NULL when any step of it is missing. */
DdbValue *
ddb_path_get(DdbValue *item, DdbPath *path)
{
	DdbValue   *v = item;

	for (int i = 0; i < path->nelems && v != NULL; i++)
		v = path_step(v, &path->elems[i]);
	return v;
}

/* ------------------------------------------------------------------------
 * Conditions
 * ------------------------------------------------------------------------
 */
static DdbValue *
make_number(int64 n)
{
	DdbValue   *v = ddb_value_new(DDB_TYPE_N);

	v->u.num = int64_to_numeric(n);
	return v;
}

/* UTF-16 code units of valid UTF-8: two for a 4-byte sequence */
static int64
utf8_utf16_units(const char *s, int len)
{
	int64		n = 0;

	for (int i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) s[i];

		if ((c & 0xC0) != 0x80)
			n += (c >= 0xF0) ? 2 : 1;
	}
	return n;
}

/*
 * The length of an S value in UTF-16 code units, as DynamoDB's size()
 * counts a string: one per character, two for a character outside the
 * Basic Multilingual Plane.  The string is in the database's encoding: in
 * one other than UTF-8 (or SQL_ASCII, whose bytes are taken as they are)
 * it is converted first, piece by piece around any U+0000, which the
 * conversions refuse.
 */
static int64
utf16_length(const char *s, int len)
{
	int			enc = GetDatabaseEncoding();
	int64		n = 0;
	const char *end = s + len;

	if (enc == PG_UTF8 || enc == PG_SQL_ASCII)
		return utf8_utf16_units(s, len);
	for (;;)
	{
		const char *nul = memchr(s, '\0', end - s);
		int			seglen = (nul ? nul : end) - s;
		char	   *u = pg_server_to_any(s, seglen, PG_UTF8);

		n += utf8_utf16_units(u, u == s ? seglen : strlen(u));
		if (nul == NULL)
			return n;
		n++;
		s = nul + 1;
	}
}

static DdbValue *
eval_operand(DdbOperand *op, DdbValue *item)
{
	DdbValue   *v;

	switch (op->kind)
	{
		case DDB_OPERAND_VALUE:
			return op->value;
		case DDB_OPERAND_PATH:
			return item ? ddb_path_get(item, op->path) : NULL;
		case DDB_OPERAND_SIZE:
			if (op->path == NULL)
				v = op->left->value;	/* size(:value) */
			else
				v = item ? ddb_path_get(item, op->path) : NULL;
			if (v == NULL)
				return NULL;
			switch (v->type)
			{
				case DDB_TYPE_S:
					return make_number(utf16_length(v->u.str.data, v->u.str.len));
				case DDB_TYPE_B:
					return make_number(v->u.str.len);
				case DDB_TYPE_L:
				case DDB_TYPE_SS:
				case DDB_TYPE_NS:
				case DDB_TYPE_BS:
					return make_number(v->u.list.n);
				case DDB_TYPE_M:
					return make_number(v->u.map.n);
				default:
					return NULL;
			}
		default:
			/* update-only operands never reach a condition */
			elog(ERROR, "unexpected operand kind %d in a condition", op->kind);
	}
	return NULL;
}

static bool
ordered_pair(DdbValue *a, DdbValue *b)
{
	return a && b && a->type == b->type &&
		(a->type == DDB_TYPE_S || a->type == DDB_TYPE_N || a->type == DDB_TYPE_B);
}

static bool
eval_compare(DdbCompareOp op, DdbValue *a, DdbValue *b)
{
	int			c;

	if (op == DDB_CMP_EQ)
		return a && b && ddb_value_equal(a, b);
	if (op == DDB_CMP_NE)
		return !(a && b && ddb_value_equal(a, b));
	if (!ordered_pair(a, b))
		return false;
	c = ddb_scalar_cmp(a, b);
	switch (op)
	{
		case DDB_CMP_LT:
			return c < 0;
		case DDB_CMP_LE:
			return c <= 0;
		case DDB_CMP_GT:
			return c > 0;
		case DDB_CMP_GE:
			return c >= 0;
		default:
			return false;
	}
}

static bool
eval_contains(DdbValue *hay, DdbValue *needle)
{
	if (hay == NULL || needle == NULL)
		return false;
	switch (hay->type)
	{
		case DDB_TYPE_S:
		case DDB_TYPE_B:
			/* a substring of a string, or a byte run of a binary */
			if (needle->type != hay->type)
				return false;
			if (needle->u.str.len == 0)
				return true;
			for (int i = 0; i + needle->u.str.len <= hay->u.str.len; i++)
				if (memcmp(hay->u.str.data + i, needle->u.str.data, needle->u.str.len) == 0)
					return true;
			return false;
		case DDB_TYPE_SS:
		case DDB_TYPE_NS:
		case DDB_TYPE_BS:
			if ((hay->type == DDB_TYPE_SS && needle->type != DDB_TYPE_S) ||
				(hay->type == DDB_TYPE_NS && needle->type != DDB_TYPE_N) ||
				(hay->type == DDB_TYPE_BS && needle->type != DDB_TYPE_B))
				return false;
			return ddb_set_contains(hay, needle);
		case DDB_TYPE_L:
			for (int i = 0; i < hay->u.list.n; i++)
				if (ddb_value_equal(hay->u.list.elems[i], needle))
					return true;
			return false;
		default:
			return false;
	}
}

static bool
eval_begins_with(DdbValue *v, DdbValue *prefix)
{
	if (v == NULL || prefix == NULL || v->type != prefix->type ||
		(v->type != DDB_TYPE_S && v->type != DDB_TYPE_B))
		return false;
	return prefix->u.str.len <= v->u.str.len &&
		memcmp(v->u.str.data, prefix->u.str.data, prefix->u.str.len) == 0;
}

static bool
eval_cond(DdbCondition *c, DdbValue *item)
{
	DdbValue   *a;

	check_stack_depth();
	switch (c->kind)
	{
		case DDB_COND_AND:
			return eval_cond(c->left, item) && eval_cond(c->right, item);
		case DDB_COND_OR:
			return eval_cond(c->left, item) || eval_cond(c->right, item);
		case DDB_COND_NOT:
			return !eval_cond(c->left, item);
		case DDB_COND_COMPARE:
			return eval_compare(c->op, eval_operand(c->args[0], item),
								eval_operand(c->args[1], item));
		case DDB_COND_BETWEEN:
			{
				DdbValue   *lo = eval_operand(c->args[1], item);
				DdbValue   *hi = eval_operand(c->args[2], item);

				a = eval_operand(c->args[0], item);
				return ordered_pair(a, lo) && ordered_pair(a, hi) &&
					ddb_scalar_cmp(lo, a) <= 0 && ddb_scalar_cmp(a, hi) <= 0;
			}
		case DDB_COND_IN:
			a = eval_operand(c->args[0], item);
			if (a == NULL)
				return false;
			for (int i = 1; i < c->nargs; i++)
			{
				DdbValue   *b = eval_operand(c->args[i], item);

				if (b && ddb_value_equal(a, b))
					return true;
			}
			return false;
		case DDB_COND_ATTRIBUTE_EXISTS:
			return eval_operand(c->args[0], item) != NULL;
		case DDB_COND_ATTRIBUTE_NOT_EXISTS:
			return eval_operand(c->args[0], item) == NULL;
		case DDB_COND_ATTRIBUTE_TYPE:
			a = eval_operand(c->args[0], item);
			return a != NULL && a->type == c->type_arg;
		case DDB_COND_BEGINS_WITH:
			return eval_begins_with(eval_operand(c->args[0], item),
									eval_operand(c->args[1], item));
		case DDB_COND_CONTAINS:
			return eval_contains(eval_operand(c->args[0], item),
								 eval_operand(c->args[1], item));
	}
	return false;
}

bool
ddb_eval_condition_value(DdbCondition *cond, DdbValue *item)
{
	return eval_cond(cond, item);
}

/* ------------------------------------------------------------------------
 * Reading only what an expression needs
 *
 * A filter or projection over a large item usually names a few of its
 * attributes.  Rather than expanding the whole item, look up just the
 * top-level attributes the expression's paths start with (a binary search
 * in the jsonb object each) and expand those.
 * ------------------------------------------------------------------------
 */
static void
add_attribute(DdbValue *partial, Jsonb *item, const char *name)
{
	JsonbValue	key;
	JsonbValue *val;

	if (ddb_map_get(partial, name) != NULL)
		return;
	key.type = jbvString;
	key.val.string.val = (char *) name;
	key.val.string.len = strlen(name);
	val = findJsonbValueFromContainer(&item->root, JB_FOBJECT, &key);
	if (val != NULL)
		ddb_map_put(partial, name, ddb_value_from_jbv(val));
}

static void
add_operand_attributes(DdbValue *partial, Jsonb *item, DdbOperand *op)
{
	if (op == NULL)
		return;
	if (op->path)
		add_attribute(partial, item, op->path->elems[0].name);
	add_operand_attributes(partial, item, op->left);
	add_operand_attributes(partial, item, op->right);
}

static void
add_condition_attributes(DdbValue *partial, Jsonb *item, DdbCondition *c)
{
	check_stack_depth();
	for (int i = 0; i < c->nargs; i++)
		add_operand_attributes(partial, item, c->args[i]);
	if (c->left)
		add_condition_attributes(partial, item, c->left);
	if (c->right)
		add_condition_attributes(partial, item, c->right);
}

static void
check_item_object(Jsonb *item)
{
	if (!JB_ROOT_IS_OBJECT(item))
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: An item must be a JSON object of attributes")));
}

bool
ddb_eval_condition(DdbCondition *cond, Jsonb *item)
{
	DdbValue   *partial;

	if (item == NULL)
		return eval_cond(cond, NULL);
	check_item_object(item);
	partial = ddb_value_new(DDB_TYPE_M);
	add_condition_attributes(partial, item, cond);
	return eval_cond(cond, partial);
}

/* ------------------------------------------------------------------------
 * Updates
 * ------------------------------------------------------------------------
 */
/*
 * Whether the update being applied came from legacy AttributeUpdates
 * (DdbUpdate.legacy), whose type errors DynamoDB words its own way; set by
 * ddb_apply_update_value, through which every update is applied.
 */
static bool applying_legacy = false;

static void
incorrect_type(void)
{
	ereport(ERROR,
			(errcode(DDB_ERRCODE_VALIDATION),
			 errmsg("ValidationException: %s",
					applying_legacy ? DDB_MSG_UPDATE_TYPE_MISMATCH : DDB_MSG_UPDATE_OPERAND_TYPE)));
}

static void
invalid_path(DdbPath *path)
{
	ereport(ERROR,
			(errcode(DDB_ERRCODE_VALIDATION),
			 errmsg("ValidationException: " DDB_MSG_UPDATE_INVALID_PATH),
			 errdetail("Path %s: a map or list on the way to it is missing or of another type.",
					   ddb_path_to_string(path))));
}

/* A SET value, computed from the item as it was before the update. */
static DdbValue *
eval_set_operand(DdbOperand *op, DdbValue *old)
{
	DdbValue   *l,
			   *r,
			   *v;

	check_stack_depth();
	switch (op->kind)
	{
		case DDB_OPERAND_VALUE:
			return op->value;
		case DDB_OPERAND_PATH:
			v = ddb_path_get(old, op->path);
			if (v == NULL)
				ereport(ERROR,
						(errcode(DDB_ERRCODE_VALIDATION),
						 errmsg("ValidationException: " DDB_MSG_UPDATE_MISSING_ATTRIBUTE),
						 errdetail("Path %s does not exist.", ddb_path_to_string(op->path))));
			return v;
		case DDB_OPERAND_IF_NOT_EXISTS:
			v = ddb_path_get(old, op->path);
			return v ? v : eval_set_operand(op->left, old);
		case DDB_OPERAND_LIST_APPEND:
			l = eval_set_operand(op->left, old);
			r = eval_set_operand(op->right, old);
			if (l->type != DDB_TYPE_L || r->type != DDB_TYPE_L)
				incorrect_type();
			v = ddb_value_new(DDB_TYPE_L);
			for (int i = 0; i < l->u.list.n; i++)
				ddb_list_append(v, l->u.list.elems[i]);
			for (int i = 0; i < r->u.list.n; i++)
				ddb_list_append(v, r->u.list.elems[i]);
			return v;
		case DDB_OPERAND_PLUS:
		case DDB_OPERAND_MINUS:
			l = eval_set_operand(op->left, old);
			r = eval_set_operand(op->right, old);
			if (l->type != DDB_TYPE_N || r->type != DDB_TYPE_N)
				incorrect_type();
			v = ddb_value_new(DDB_TYPE_N);
			v->u.num = DatumGetNumeric(DirectFunctionCall2(op->kind == DDB_OPERAND_PLUS ?
														   numeric_add : numeric_sub,
														   NumericGetDatum(l->u.num),
														   NumericGetDatum(r->u.num)));
			ddb_check_number_result(v->u.num);
			/* as DynamoDB gives it back: 1.5 + 1.5 is 3, not numeric's 3.0 */
			v->u.num = ddb_number_normalize(v->u.num);
			return v;
		case DDB_OPERAND_SIZE:
			break;
	}
	elog(ERROR, "unexpected operand kind %d in an update", op->kind);
	return NULL;
}

/* The container the last element of path lives in, or NULL. */
static DdbValue *
path_parent(DdbValue *root, DdbPath *path)
{
	DdbValue   *v = root;

	for (int i = 0; i < path->nelems - 1 && v != NULL; i++)
		v = path_step(v, &path->elems[i]);
	return v;
}

static void
path_set(DdbValue *root, DdbPath *path, DdbValue *val)
{
	DdbValue   *parent = path_parent(root, path);
	DdbPathElem *last = &path->elems[path->nelems - 1];

	if (last->kind == DDB_PATH_NAME)
	{
		if (parent == NULL || parent->type != DDB_TYPE_M)
			invalid_path(path);
		ddb_map_put(parent, last->name, val);
	}
	else
	{
		if (parent == NULL || parent->type != DDB_TYPE_L)
			invalid_path(path);
		if (last->index < parent->u.list.n)
			parent->u.list.elems[last->index] = val;
		else
			ddb_list_append(parent, val);	/* past the end: append */
	}
}

static void
path_remove(DdbValue *root, DdbPath *path, bool lenient)
{
	DdbValue   *parent = path_parent(root, path);
	DdbPathElem *last = &path->elems[path->nelems - 1];

	if (last->kind == DDB_PATH_NAME)
	{
		if (parent == NULL || parent->type != DDB_TYPE_M)
		{
			if (lenient)
				return;
			invalid_path(path);
		}
		(void) ddb_map_remove(parent, last->name);
	}
	else
	{
		if (parent == NULL || parent->type != DDB_TYPE_L)
		{
			if (lenient)
				return;
			invalid_path(path);
		}
		if (last->index < parent->u.list.n)
		{
			memmove(&parent->u.list.elems[last->index],
					&parent->u.list.elems[last->index + 1],
					(parent->u.list.n - last->index - 1) * sizeof(DdbValue *));
			parent->u.list.n--;
		}
	}
}

/* ADD: number addition or set union; creates the attribute when missing. */
static void
apply_add(DdbValue *item, DdbPath *path, DdbValue *val)
{
	DdbValue   *cur = ddb_path_get(item, path);
	DdbValue   *res;

	if (cur == NULL)
	{
		path_set(item, path, ddb_value_copy(val));
		return;
	}
	if (cur->type != val->type)
		incorrect_type();
	if (cur->type == DDB_TYPE_N)
	{
		res = ddb_value_new(DDB_TYPE_N);
		res->u.num = DatumGetNumeric(DirectFunctionCall2(numeric_add,
														 NumericGetDatum(cur->u.num),
														 NumericGetDatum(val->u.num)));
		ddb_check_number(res->u.num);
		res->u.num = ddb_number_normalize(res->u.num);
	}
	else
	{
		res = ddb_value_copy(cur);
		for (int i = 0; i < val->u.list.n; i++)
			if (!ddb_set_contains(res, val->u.list.elems[i]))
				ddb_list_append(res, val->u.list.elems[i]);
	}
	path_set(item, path, res);
}

/* DELETE: set difference; an emptied set disappears. */
static void
apply_delete(DdbValue *item, DdbPath *path, DdbValue *val)
{
	DdbValue   *cur = ddb_path_get(item, path);
	DdbValue   *res;

	if (cur == NULL)
	{
		DdbValue   *parent = path_parent(item, path);

		/* nothing to delete from, but the path must still make sense */
		if (parent == NULL ||
			parent->type != (path->elems[path->nelems - 1].kind == DDB_PATH_NAME ?
							 DDB_TYPE_M : DDB_TYPE_L))
			invalid_path(path);
		return;
	}
	if (cur->type != val->type)
		incorrect_type();
	res = ddb_value_new(cur->type);
	for (int i = 0; i < cur->u.list.n; i++)
		if (!ddb_set_contains(val, cur->u.list.elems[i]))
			ddb_list_append(res, cur->u.list.elems[i]);
	if (res->u.list.n == 0)
		path_remove(item, path, false);
	else
		path_set(item, path, res);
}

/* Action order: by path, lexicographic, list indexes numerically. */
static int
path_cmp(const void *a, const void *b)
{
	DdbPath    *p = (*(DdbUpdateAction *const *) a)->path;
	DdbPath    *q = (*(DdbUpdateAction *const *) b)->path;
	int			n = Min(p->nelems, q->nelems);

	for (int i = 0; i < n; i++)
	{
		DdbPathElem *x = &p->elems[i],
				   *y = &q->elems[i];
		int			c;

		if (x->kind != y->kind)
			return x->kind - y->kind;
		c = x->kind == DDB_PATH_NAME ? strcmp(x->name, y->name) :
			(x->index > y->index) - (x->index < y->index);
		if (c != 0)
			return c;
	}
	return p->nelems - q->nelems;
}

static int
path_cmp_desc(const void *a, const void *b)
{
	return -path_cmp(a, b);
}

/*
 * Key attributes cannot be the target of any action.  A check of the
 * request alone: the item operations make it before reading the item, so a
 * condition never hides it, as in DynamoDB.
 */
void
ddb_update_check_key_attributes(DdbUpdate *u, const char **key_attrs, int nkey_attrs)
{
	for (int i = 0; i < u->nactions; i++)
	{
		DdbPathElem *first = &u->actions[i].path->elems[0];

		for (int k = 0; k < nkey_attrs; k++)
			if (strcmp(first->name, key_attrs[k]) == 0)
				ereport(ERROR,
						(errcode(DDB_ERRCODE_VALIDATION),
						 errmsg("ValidationException: " DDB_MSG_UPDATE_KEY_ATTRIBUTE,
								key_attrs[k]),
						 errhint("Delete the item and put a new one to change its key.")));
	}
}

/*
 * Does the operand, or one inside it, name a path below attribute 'name'
 * (any attribute when 'name' is NULL)?
 */
static bool
operand_nests_into(DdbOperand *op, const char *name)
{
	check_stack_depth();
	if (op == NULL)
		return false;
	if (op->path != NULL && op->path->nelems > 1 &&
		(name == NULL || strcmp(op->path->elems[0].name, name) == 0))
		return true;
	return operand_nests_into(op->left, name) || operand_nests_into(op->right, name);
}

/*
 * Does an update name a path below attribute 'name' (name.x, name[0]), as
 * an action's target or in a SET's value?  DynamoDB refuses such a path
 * into a key attribute, whose value is a scalar.  'name' NULL: below any
 * attribute.
 */
bool
ddb_update_nests_into(DdbUpdate *u, const char *name)
{
	for (int i = 0; i < u->nactions; i++)
	{
		DdbPath    *p = u->actions[i].path;

		if (p->nelems > 1 && (name == NULL || strcmp(p->elems[0].name, name) == 0))
			return true;
		if (u->actions[i].kind == DDB_UPDATE_SET &&
			operand_nests_into(u->actions[i].value, name))
			return true;
	}
	return false;
}

/*
 * Does a condition (a FilterExpression) name a path below attribute 'name'
 * (any attribute when 'name' is NULL)?
 */
bool
ddb_condition_nests_into(DdbCondition *c, const char *name)
{
	check_stack_depth();
	if (c == NULL)
		return false;
	for (int i = 0; i < c->nargs; i++)
		if (operand_nests_into(c->args[i], name))
			return true;
	return ddb_condition_nests_into(c->left, name) ||
		ddb_condition_nests_into(c->right, name);
}

/*
 * Does a projection name a path below attribute 'name' (any attribute when
 * 'name' is NULL)?
 */
bool
ddb_projection_nests_into(DdbProjection *p, const char *name)
{
	for (int i = 0; i < p->npaths; i++)
		if (p->paths[i]->nelems > 1 &&
			(name == NULL || strcmp(p->paths[i]->elems[0].name, name) == 0))
			return true;
	return false;
}

/*
 * The type of the value an operand of a SET gives, when the request alone
 * shows it: a value, arithmetic (N), list_append (L), or if_not_exists of a
 * default that shows it.  False when it comes from the item (a path).
 */
bool
ddb_operand_request_type(DdbOperand *op, DdbType *type)
{
	check_stack_depth();
	switch (op->kind)
	{
		case DDB_OPERAND_VALUE:
			*type = op->value->type;
			return true;
		case DDB_OPERAND_PLUS:
		case DDB_OPERAND_MINUS:
			*type = DDB_TYPE_N;
			return true;
		case DDB_OPERAND_LIST_APPEND:
			*type = DDB_TYPE_L;
			return true;
		case DDB_OPERAND_IF_NOT_EXISTS:
			return ddb_operand_request_type(op->left, type);
		default:
			return false;
	}
}

/*
 * Apply an update to a DdbValue item (NULL: no item); returns the new item,
 * leaving the old one untouched.
 */
DdbValue *
ddb_apply_update_value(DdbUpdate *u, DdbValue *old, const char **key_attrs,
					   int nkey_attrs)
{
	DdbValue   *item;
	DdbValue  **setvals = palloc0(u->nactions * sizeof(DdbValue *));
	DdbUpdateAction **writes = palloc(u->nactions * sizeof(DdbUpdateAction *));
	DdbUpdateAction **removes = palloc(u->nactions * sizeof(DdbUpdateAction *));
	int			nwrites = 0;
	int			nremoves = 0;
	bool		no_item = (old == NULL);

	if (old == NULL)
		old = ddb_value_new(DDB_TYPE_M);

	applying_legacy = u->legacy;
	ddb_update_check_key_attributes(u, key_attrs, nkey_attrs);

	/* every SET operand reads the item as it was before the update */
	for (int i = 0; i < u->nactions; i++)
		if (u->actions[i].kind == DDB_UPDATE_SET)
			setvals[i] = eval_set_operand(u->actions[i].value, old);

	/*
	 * Paths never overlap (the parser checked), so the actions touch
	 * disjoint parts of the item, and only list indexes make order matter.
	 * They name positions before the update, as in DynamoDB: first the
	 * writes in ascending path order (so that indexes past the end append
	 * in index order), then the removals from the highest path down (so
	 * that no removal shifts an element a later one names).
	 */
	for (int i = 0; i < u->nactions; i++)
	{
		if (u->actions[i].kind == DDB_UPDATE_REMOVE)
			removes[nremoves++] = &u->actions[i];
		else
			writes[nwrites++] = &u->actions[i];
	}
	qsort(writes, nwrites, sizeof(DdbUpdateAction *), path_cmp);
	qsort(removes, nremoves, sizeof(DdbUpdateAction *), path_cmp_desc);

	item = ddb_value_copy(old);
	for (int i = 0; i < nwrites; i++)
	{
		DdbUpdateAction *a = writes[i];

		switch (a->kind)
		{
			case DDB_UPDATE_SET:
				path_set(item, a->path, setvals[a - u->actions]);
				break;
			case DDB_UPDATE_ADD:
				apply_add(item, a->path, a->value->value);
				break;
			case DDB_UPDATE_DELETE:
				apply_delete(item, a->path, a->value->value);
				break;
			case DDB_UPDATE_REMOVE:
				break;
		}
	}
	/* DynamoDB ignores REMOVE through missing parents on a missing item */
	for (int i = 0; i < nremoves; i++)
		path_remove(item, removes[i]->path, no_item);

	ddb_check_item_depth(item);
	ddb_check_item_size(item, DDB_MSG_UPDATE_ITEM_SIZE);
	pfree(setvals);
	pfree(writes);
	pfree(removes);
	return item;
}

bool
ddb_update_creates_item(DdbUpdate *u)
{
	for (int i = 0; i < u->nactions; i++)
		if (u->actions[i].kind == DDB_UPDATE_SET || u->actions[i].kind == DDB_UPDATE_ADD)
			return true;
	return false;
}

static DdbPath **
update_paths(DdbUpdate *u)
{
	DdbPath   **paths = palloc(Max(u->nactions, 1) * sizeof(DdbPath *));

	for (int i = 0; i < u->nactions; i++)
		paths[i] = u->actions[i].path;
	return paths;
}

Jsonb *
ddb_apply_update(DdbUpdate *u, Jsonb *item, const char **key_attrs, int nkey_attrs,
				 Jsonb **updated_old, Jsonb **updated_new)
{
	DdbValue   *old = item ? ddb_item_from_jsonb(item) : NULL;
	DdbValue   *new = ddb_apply_update_value(u, old, key_attrs, nkey_attrs);

	if (old == NULL)
		old = ddb_value_new(DDB_TYPE_M);

	if (updated_old)
		*updated_old = ddb_item_to_jsonb(ddb_project_value(update_paths(u), u->nactions, old));
	if (updated_new)
		*updated_new = ddb_item_to_jsonb(ddb_project_value(update_paths(u), u->nactions, new));
	return ddb_item_to_jsonb(new);
}

/*
 * UpdateItem on a stored item without expanding all of it: only the
 * top-level attributes the actions write or read are expanded (as
 * ddb_eval_condition expands only what a condition names), the update is
 * applied to them, and the result is the object of the attributes it
 * writes that exist afterwards, *touched (*ntouched) their names, removed
 * ones included.  The caller replaces those pairs of 'item' and checks the
 * whole result's size (ddb_check_item_size_msg with
 * DDB_MSG_UPDATE_ITEM_SIZE), which this cannot see.  Paths never overlap
 * and every path starts with an attribute name, so attributes the update
 * does not name come out as they went in: the result equals
 * ddb_apply_update's (checked builds compare them).  NULL when some path
 * does not start with a name: the caller then uses ddb_apply_update.
 */
Jsonb *
ddb_apply_update_partial(DdbUpdate *u, Jsonb *item, const char **key_attrs, int nkey_attrs,
						 Jsonb **updated_old, Jsonb **updated_new,
						 const char ***touched, int *ntouched)
{
	DdbValue   *partial;
	DdbValue   *new;
	DdbValue   *changed;
	const char **names;
	int			n = 0;

	check_item_object(item);
	for (int i = 0; i < u->nactions; i++)
		if (u->actions[i].path->nelems < 1 ||
			u->actions[i].path->elems[0].kind != DDB_PATH_NAME)
			return NULL;

	partial = ddb_value_new(DDB_TYPE_M);
	names = palloc(sizeof(char *) * Max(u->nactions, 1));
	for (int i = 0; i < u->nactions; i++)
	{
		const char *name = u->actions[i].path->elems[0].name;
		bool		seen = false;

		add_attribute(partial, item, name);
		if (u->actions[i].kind == DDB_UPDATE_SET)
			add_operand_attributes(partial, item, u->actions[i].value);
		for (int j = 0; j < n && !seen; j++)
			seen = strcmp(names[j], name) == 0;
		if (!seen)
			names[n++] = name;
	}

	new = ddb_apply_update_value(u, partial, key_attrs, nkey_attrs);
	if (updated_old)
		*updated_old = ddb_item_to_jsonb(ddb_project_value(update_paths(u), u->nactions, partial));
	if (updated_new)
		*updated_new = ddb_item_to_jsonb(ddb_project_value(update_paths(u), u->nactions, new));

	changed = ddb_value_new(DDB_TYPE_M);
	for (int j = 0; j < n; j++)
	{
		DdbValue   *v = ddb_map_get(new, names[j]);

		if (v != NULL)
			ddb_map_put(changed, names[j], v);
	}
	*touched = names;
	*ntouched = n;
	return ddb_item_to_jsonb(changed);
}

/* ------------------------------------------------------------------------
 * Projections
 * ------------------------------------------------------------------------
 */

/*
 * The result under construction: a tree with one node per path element.
 * List nodes remember the source index of each child so the result keeps
 * the source order whatever order the paths were written in.
 */
typedef struct ProjNode ProjNode;
struct ProjNode
{
	DdbValue   *leaf;			/* a projected value, or NULL for an inner node */
	bool		is_list;
	int			n;
	int			cap;
	char	  **keys;			/* map children */
	int		   *idx;			/* list children */
	ProjNode  **kids;
};

static ProjNode *
proj_child(ProjNode *node, DdbPathElem *e)
{
	ProjNode   *kid;

	for (int i = 0; i < node->n; i++)
		if (e->kind == DDB_PATH_NAME ? strcmp(node->keys[i], e->name) == 0 :
			node->idx[i] == e->index)
			return node->kids[i];
	if (node->n == node->cap)
	{
		node->cap = node->cap ? node->cap * 2 : 4;
		node->keys = node->keys ? repalloc(node->keys, node->cap * sizeof(char *)) :
			palloc(node->cap * sizeof(char *));
		node->idx = node->idx ? repalloc(node->idx, node->cap * sizeof(int)) :
			palloc(node->cap * sizeof(int));
		node->kids = node->kids ? repalloc(node->kids, node->cap * sizeof(ProjNode *)) :
			palloc(node->cap * sizeof(ProjNode *));
	}
	kid = palloc0(sizeof(ProjNode));
	node->is_list = (e->kind == DDB_PATH_INDEX);
	node->keys[node->n] = e->name;
	node->idx[node->n] = e->index;
	node->kids[node->n] = kid;
	node->n++;
	return kid;
}

static DdbValue *
proj_build(ProjNode *node)
{
	DdbValue   *v;

	if (node->leaf)
		return node->leaf;
	if (node->is_list)
	{
		/* insertion sort by source index: lists here are short */
		for (int i = 1; i < node->n; i++)
			for (int j = i; j > 0 && node->idx[j - 1] > node->idx[j]; j--)
			{
				int			ti = node->idx[j];
				ProjNode   *tk = node->kids[j];

				node->idx[j] = node->idx[j - 1];
				node->kids[j] = node->kids[j - 1];
				node->idx[j - 1] = ti;
				node->kids[j - 1] = tk;
			}
		v = ddb_value_new(DDB_TYPE_L);
		for (int i = 0; i < node->n; i++)
			ddb_list_append(v, proj_build(node->kids[i]));
		return v;
	}
	v = ddb_value_new(DDB_TYPE_M);
	for (int i = 0; i < node->n; i++)
		ddb_map_put(v, node->keys[i], proj_build(node->kids[i]));
	return v;
}

/*
 * The item restricted to the given paths (which must not overlap).  The
 * result shares values with the item.
 */
DdbValue *
ddb_project_value(DdbPath **paths, int npaths, DdbValue *item)
{
	ProjNode   *root = palloc0(sizeof(ProjNode));

	for (int i = 0; i < npaths; i++)
	{
		DdbValue   *v = ddb_path_get(item, paths[i]);
		ProjNode   *node = root;

		if (v == NULL)
			continue;
		for (int k = 0; k < paths[i]->nelems; k++)
			node = proj_child(node, &paths[i]->elems[k]);
		node->leaf = v;
	}
	return proj_build(root);
}

Jsonb *
ddb_apply_projection(DdbProjection *p, Jsonb *item)
{
	DdbValue   *partial = ddb_value_new(DDB_TYPE_M);

	check_item_object(item);
	for (int i = 0; i < p->npaths; i++)
		add_attribute(partial, item, p->paths[i]->elems[0].name);
	return ddb_item_to_jsonb(ddb_project_value(p->paths, p->npaths, partial));
}

/* ------------------------------------------------------------------------
 * SQL interface: each call is one request (begin, parse, end, evaluate)
 * ------------------------------------------------------------------------
 */
#define ARG_JSONB_OR_NULL(n) (PG_ARGISNULL(n) ? NULL : PG_GETARG_JSONB_P(n))

Datum
ddb_eval_condition_sql(PG_FUNCTION_ARGS)
{
	Jsonb	   *item = ARG_JSONB_OR_NULL(0);
	DdbExprContext *cx;
	DdbCondition *c;

	if (PG_ARGISNULL(1))
		PG_RETURN_NULL();
	cx = ddb_expr_begin(ARG_JSONB_OR_NULL(2), ARG_JSONB_OR_NULL(3));
	c = ddb_parse_condition(cx, text_to_cstring(PG_GETARG_TEXT_PP(1)),
							"ConditionExpression");
	ddb_expr_end(cx);
	PG_RETURN_BOOL(ddb_eval_condition(c, item));
}

Datum
ddb_apply_update_sql(PG_FUNCTION_ARGS)
{
	Jsonb	   *item = ARG_JSONB_OR_NULL(0);
	DdbExprContext *cx;
	DdbUpdate  *u;
	const char **keys = NULL;
	int			nkeys = 0;
	char	   *rv = PG_ARGISNULL(5) ? "ALL_NEW" : text_to_cstring(PG_GETARG_TEXT_PP(5));
	Jsonb	   *old_part = NULL,
			   *new_part = NULL,
			   *result;

	if (PG_ARGISNULL(1))
		PG_RETURN_NULL();
	if (strcmp(rv, "NONE") != 0 && strcmp(rv, "ALL_OLD") != 0 &&
		strcmp(rv, "ALL_NEW") != 0 && strcmp(rv, "UPDATED_OLD") != 0 &&
		strcmp(rv, "UPDATED_NEW") != 0)
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", DDB_MSG_RETURN_VALUES_ENUM, rv);
	if (!PG_ARGISNULL(4))
	{
		Datum	   *elems;
		bool	   *nulls;

		deconstruct_array(PG_GETARG_ARRAYTYPE_P(4), TEXTOID, -1, false,
						  TYPALIGN_INT, &elems, &nulls, &nkeys);
		keys = palloc(Max(nkeys, 1) * sizeof(char *));
		for (int i = 0; i < nkeys; i++)
			keys[i] = nulls[i] ? "" : TextDatumGetCString(elems[i]);
	}

	cx = ddb_expr_begin(ARG_JSONB_OR_NULL(2), ARG_JSONB_OR_NULL(3));
	u = ddb_parse_update(cx, text_to_cstring(PG_GETARG_TEXT_PP(1)));
	ddb_expr_end(cx);
	result = ddb_apply_update(u, item, keys, nkeys, &old_part, &new_part);

	if (strcmp(rv, "NONE") == 0)
		PG_RETURN_NULL();
	if (strcmp(rv, "ALL_OLD") == 0)
	{
		if (item == NULL)
			PG_RETURN_NULL();
		PG_RETURN_JSONB_P(item);
	}
	if (strcmp(rv, "UPDATED_OLD") == 0)
		PG_RETURN_JSONB_P(old_part);
	if (strcmp(rv, "UPDATED_NEW") == 0)
		PG_RETURN_JSONB_P(new_part);
	PG_RETURN_JSONB_P(result);
}

Datum
ddb_project_sql(PG_FUNCTION_ARGS)
{
	Jsonb	   *item = ARG_JSONB_OR_NULL(0);
	DdbExprContext *cx;
	DdbProjection *p;

	if (PG_ARGISNULL(1))
		PG_RETURN_NULL();
	cx = ddb_expr_begin(ARG_JSONB_OR_NULL(2), NULL);
	p = ddb_parse_projection(cx, text_to_cstring(PG_GETARG_TEXT_PP(1)));
	ddb_expr_end(cx);
	if (item == NULL)
		PG_RETURN_NULL();
	PG_RETURN_JSONB_P(ddb_apply_projection(p, item));
}

static DdbValue *
make_string(const char *s)
{
	DdbValue   *v = ddb_value_new(DDB_TYPE_S);

	v->u.str.data = pstrdup(s);
	v->u.str.len = strlen(s);
	return v;
}

/*
 * ddb_key_condition(condition, partition_key, sort_key, names, vals): what
 * a Query would make of a KeyConditionExpression, as jsonb
 * {"partition_key": v, "sort_key": {"op": "...", "values": [...]}}.
 */
Datum
ddb_key_condition_sql(PG_FUNCTION_ARGS)
{
	DdbExprContext *cx;
	DdbCondition *c;
	DdbKeyCondition kc;
	DdbValue   *res = ddb_value_new(DDB_TYPE_M);

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	cx = ddb_expr_begin(ARG_JSONB_OR_NULL(3), ARG_JSONB_OR_NULL(4));
	c = ddb_parse_condition(cx, text_to_cstring(PG_GETARG_TEXT_PP(0)),
							"KeyConditionExpression");
	ddb_expr_end(cx);
	ddb_analyze_key_condition(c, text_to_cstring(PG_GETARG_TEXT_PP(1)),
							  PG_ARGISNULL(2) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(2)),
							  &kc);

	ddb_map_put(res, "partition_key", kc.pk_value);
	if (kc.has_sk)
	{
		static const char *const ops[] = {"=", "<>", "<", "<=", ">", ">="};
		DdbValue   *sk = ddb_value_new(DDB_TYPE_M);
		DdbValue   *values = ddb_value_new(DDB_TYPE_L);

		ddb_map_put(sk, "op", make_string(kc.sk_kind == DDB_COND_BETWEEN ? "BETWEEN" :
										  kc.sk_kind == DDB_COND_BEGINS_WITH ? "begins_with" :
										  ops[kc.sk_op]));
		ddb_list_append(values, kc.sk_value);
		if (kc.sk_value2)
			ddb_list_append(values, kc.sk_value2);
		ddb_map_put(sk, "values", values);
		ddb_map_put(res, "sort_key", sk);
	}
	PG_RETURN_JSONB_P(ddb_item_to_jsonb(res));
}
