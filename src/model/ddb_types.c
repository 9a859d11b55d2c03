/*-------------------------------------------------------------------------
 *
 * ddb_types.c
 *	  The DynamoDB item model: document-form jsonb, typed JSON, validation
 *	  and item size.
 *
 * Items arrive as jsonb in document form (see ddb_expr.h for the table of
 * forms) and are expanded into DdbValue trees, which the expression
 * evaluator reads and modifies; results go back to jsonb through
 * pushJsonbValue, which sorts object keys the way jsonb requires.  Every
 * conversion into a DdbValue validates, so a DdbValue tree always holds
 * legal DynamoDB values:
 *
 *	- N: at most 38 significant digits, magnitude 1E-130 .. < 1E+126, or 0
 *	- B: strict base64 in the tagged forms (length a multiple of 4, padding
 *	  only at the end, no whitespace)
 *	- sets: non-empty, elements of one scalar type, no duplicates (NS
 *	  elements compare numerically, so [1, 1.0] is a duplicate)
 *	- nesting: at most 32 levels of L/M
 *
 * Plain SQL writes check their item column with the same reader in a
 * checking mode (ddb_validate_item_column): one walk of the jsonb that runs
 * the same checks and adds up the item's size, without building a tree.
 *
 * Item size follows DynamoDB's published rules (CapacityUnitCalculations):
 * name bytes + value size, where S is its UTF-8 bytes, B its raw bytes, N
 * (significant digits + 1) / 2 + 1 bytes (DynamoDB says "approximately"),
 * BOOL and NULL 1 byte, L and M 3 bytes plus 1 byte per element plus the
 * elements (a map element counts its name), and a set the sum of its
 * elements.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/base64.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "ddb.h"
#include "model/ddb_expr.h"

PG_FUNCTION_INFO_V1(ddb_to_typed_json);
PG_FUNCTION_INFO_V1(ddb_from_typed_json);
PG_FUNCTION_INFO_V1(ddb_item_size_sql);
PG_FUNCTION_INFO_V1(ddb_validate_item_sql);

static const char *const type_names[] = {
	"S", "N", "B", "BOOL", "NULL", "L", "M", "SS", "NS", "BS"
};

#define validation_error(...) \
	ereport(ERROR, \
			(errcode(DDB_ERRCODE_VALIDATION), \
			 errmsg(__VA_ARGS__)))

const char *
ddb_type_name(DdbType type)
{
	return type_names[type];
}

bool
ddb_type_from_name(const char *name, int len, DdbType *type)
{
	for (int i = 0; i < lengthof(type_names); i++)
	{
		if (strlen(type_names[i]) == len && memcmp(type_names[i], name, len) == 0)
		{
			*type = (DdbType) i;
			return true;
		}
	}
	return false;
}

/* ------------------------------------------------------------------------
 * Construction
 * ------------------------------------------------------------------------
 */
DdbValue *
ddb_value_new(DdbType type)
{
	DdbValue   *v = palloc0(sizeof(DdbValue));

	v->type = type;
	return v;
}

void
ddb_list_append(DdbValue *list, DdbValue *elem)
{
	if (list->u.list.n == list->u.list.cap)
	{
		int			newcap = list->u.list.cap ? list->u.list.cap * 2 : 4;

		if (list->u.list.elems)
			list->u.list.elems = repalloc(list->u.list.elems, newcap * sizeof(DdbValue *));
		else
			list->u.list.elems = palloc(newcap * sizeof(DdbValue *));
		list->u.list.cap = newcap;
	}
	list->u.list.elems[list->u.list.n++] = elem;
}

static int
map_find(DdbValue *map, const char *key)
{
	for (int i = 0; i < map->u.map.n; i++)
		if (strcmp(map->u.map.keys[i], key) == 0)
			return i;
	return -1;
}

DdbValue *
ddb_map_get(DdbValue *map, const char *key)
{
	int			i = map_find(map, key);

	return i < 0 ? NULL : map->u.map.vals[i];
}

/* Add an attribute known not to be in the map yet (keys read from jsonb). */
static void
map_append(DdbValue *map, char *key, DdbValue *val)
{
	if (map->u.map.n == map->u.map.cap)
	{
		int			newcap = map->u.map.cap ? map->u.map.cap * 2 : 8;

		if (map->u.map.keys)
		{
			map->u.map.keys = repalloc(map->u.map.keys, newcap * sizeof(char *));
			map->u.map.vals = repalloc(map->u.map.vals, newcap * sizeof(DdbValue *));
		}
		else
		{
			map->u.map.keys = palloc(newcap * sizeof(char *));
			map->u.map.vals = palloc(newcap * sizeof(DdbValue *));
		}
		map->u.map.cap = newcap;
	}
	map->u.map.keys[map->u.map.n] = key;
	map->u.map.vals[map->u.map.n] = val;
	map->u.map.n++;
}

void
ddb_map_put(DdbValue *map, const char *key, DdbValue *val)
{
	int			i = map_find(map, key);

	if (i >= 0)
		map->u.map.vals[i] = val;
	else
		map_append(map, pstrdup(key), val);
}

bool
ddb_map_remove(DdbValue *map, const char *key)
{
	int			i = map_find(map, key);

	if (i < 0)
		return false;
	memmove(&map->u.map.keys[i], &map->u.map.keys[i + 1],
			(map->u.map.n - i - 1) * sizeof(char *));
	memmove(&map->u.map.vals[i], &map->u.map.vals[i + 1],
			(map->u.map.n - i - 1) * sizeof(DdbValue *));
	map->u.map.n--;
	return true;
}

DdbValue *
ddb_value_copy(DdbValue *v)
{
	DdbValue   *c = ddb_value_new(v->type);

	switch (v->type)
	{
		case DDB_TYPE_L:
		case DDB_TYPE_SS:
		case DDB_TYPE_NS:
		case DDB_TYPE_BS:
			for (int i = 0; i < v->u.list.n; i++)
				ddb_list_append(c, ddb_value_copy(v->u.list.elems[i]));
			break;
		case DDB_TYPE_M:
			for (int i = 0; i < v->u.map.n; i++)
				map_append(c, v->u.map.keys[i], ddb_value_copy(v->u.map.vals[i]));
			break;
		default:
			/* scalars are never modified in place: share their payload */
			c->u = v->u;
			break;
	}
	return c;
}

/* ------------------------------------------------------------------------
 * Comparison
 * ------------------------------------------------------------------------
 */
static int
numeric_compare(Numeric a, Numeric b)
{
	return DatumGetInt32(DirectFunctionCall2(numeric_cmp,
											 NumericGetDatum(a),
											 NumericGetDatum(b)));
}

static int
bytes_cmp(const char *a, int alen, const char *b, int blen)
{
	int			r = memcmp(a, b, Min(alen, blen));

	if (r != 0)
		return r;
	return (alen > blen) - (alen < blen);
}

/*
 * Order two scalars of one type as DynamoDB does: S by UTF-8 bytes, B by
 * unsigned bytes (memcmp compares unsigned), N numerically.
 */
int
ddb_scalar_cmp(DdbValue *a, DdbValue *b)
{
	Assert(a->type == b->type);
	if (a->type == DDB_TYPE_N)
		return numeric_compare(a->u.num, b->u.num);
	return bytes_cmp(a->u.str.data, a->u.str.len, b->u.str.data, b->u.str.len);
}

bool
ddb_set_contains(DdbValue *set, DdbValue *elem)
{
	for (int i = 0; i < set->u.list.n; i++)
		if (ddb_scalar_cmp(set->u.list.elems[i], elem) == 0)
			return true;
	return false;
}

static int
scalar_qsort_cmp(const void *x, const void *y)
{
	return ddb_scalar_cmp(*(DdbValue *const *) x, *(DdbValue *const *) y);
}

/*
 * Two sets of one type and size, by sorted copies of their elements: what a
 * large set needs (inclusion element by element is quadratic, and a set may
 * hold tens of thousands of numbers).
 */
static bool
sets_equal_sorted(DdbValue *a, DdbValue *b)
{
	int			n = a->u.list.n;
	DdbValue  **x = palloc(sizeof(DdbValue *) * n);
	DdbValue  **y = palloc(sizeof(DdbValue *) * n);
	bool		equal = true;

	memcpy(x, a->u.list.elems, sizeof(DdbValue *) * n);
	memcpy(y, b->u.list.elems, sizeof(DdbValue *) * n);
	qsort(x, n, sizeof(DdbValue *), scalar_qsort_cmp);
	qsort(y, n, sizeof(DdbValue *), scalar_qsort_cmp);
	for (int i = 0; i < n && equal; i++)
		equal = ddb_scalar_cmp(x[i], y[i]) == 0;
	pfree(x);
	pfree(y);
	return equal;
}

/*
 * Are two stored items (document form) the same DynamoDB item?  Their jsonb
 * may differ where the items do not: a set's elements in another order.
 * The byte-wise comparison answers most calls; only items it finds
 * different are compared as values.
 */
bool
ddb_items_equal(Jsonb *a, Jsonb *b)
{
	if (compareJsonbContainers(&a->root, &b->root) == 0)
		return true;
	return ddb_value_equal(ddb_item_from_jsonb(a), ddb_item_from_jsonb(b));
}

/* Deep equality: sets unordered, maps by name, numbers numerically. */
bool
ddb_value_equal(DdbValue *a, DdbValue *b)
{
	if (a->type != b->type)
		return false;
	switch (a->type)
	{
		case DDB_TYPE_S:
		case DDB_TYPE_B:
		case DDB_TYPE_N:
			return ddb_scalar_cmp(a, b) == 0;
		case DDB_TYPE_BOOL:
			return a->u.boolean == b->u.boolean;
		case DDB_TYPE_NULL:
			return true;
		case DDB_TYPE_L:
			if (a->u.list.n != b->u.list.n)
				return false;
			for (int i = 0; i < a->u.list.n; i++)
				if (!ddb_value_equal(a->u.list.elems[i], b->u.list.elems[i]))
					return false;
			return true;
		case DDB_TYPE_SS:
		case DDB_TYPE_NS:
		case DDB_TYPE_BS:
			/* sets hold no duplicates, so equal sizes + inclusion suffice */
			if (a->u.list.n != b->u.list.n)
				return false;
			if (a->u.list.n > 16)
				return sets_equal_sorted(a, b);
			for (int i = 0; i < a->u.list.n; i++)
				if (!ddb_set_contains(b, a->u.list.elems[i]))
					return false;
			return true;
		case DDB_TYPE_M:
			if (a->u.map.n != b->u.map.n)
				return false;
			for (int i = 0; i < a->u.map.n; i++)
			{
				DdbValue   *bv = ddb_map_get(b, a->u.map.keys[i]);

				if (bv == NULL || !ddb_value_equal(a->u.map.vals[i], bv))
					return false;
			}
			return true;
	}
	return false;
}

/* ------------------------------------------------------------------------
 * Numbers
 * ------------------------------------------------------------------------
 */

/*
 * Significant digits and decimal exponent (value = d.ddd x 10^exp) of a
 * number; zero has 0 digits.
 */
static void
number_shape(Numeric num, int *ndigits, int *exponent)
{
	char	   *s = numeric_normalize(num);
	char	   *p = s;
	int			pos = 0;		/* digits seen before the decimal point */
	int			first = -1;		/* index of first nonzero digit */
	int			last = -1;		/* index of last nonzero digit */
	int			intdigits = -1;
	int			idx = 0;

	if (*p == '-')
		p++;
	for (; *p; p++)
	{
		if (*p == '.')
		{
			intdigits = pos;
			continue;
		}
		if (*p != '0')
		{
			if (first < 0)
				first = idx;
			last = idx;
		}
		idx++;
		pos++;
	}
	if (intdigits < 0)
		intdigits = idx;
	if (first < 0)
	{
		*ndigits = 0;
		*exponent = 0;
	}
	else
	{
		*ndigits = last - first + 1;
		*exponent = intdigits - 1 - first;
	}
	pfree(s);
}

/* DynamoDB's size of a number of ndigits significant digits */
#define NUMBER_SIZE(ndigits)	((Max((ndigits), 1) + 1) / 2 + 1)

/*
 * Check a number; returns its significant digits (for its size).  A result
 * of arithmetic that needs more than 38 digits (1e50 + 1) is reported as
 * DynamoDB reports it, as an overflow (ScyllaDB's tests, run against the
 * service, record this), not with the precision message a value written
 * with too many digits gets.
 */
static int
check_number_ext(Numeric num, bool arithmetic)
{
	int			ndigits;
	int			exponent;

	if (numeric_is_nan(num) || numeric_is_inf(num))
		validation_error("ValidationException: " DDB_MSG_NUMBER_INVALID);
	number_shape(num, &ndigits, &exponent);
	if (ndigits == 0)
		return 0;
	if (exponent > 125)
		validation_error("ValidationException: " DDB_MSG_NUMBER_OVERFLOW);
	if (exponent < -130)
		validation_error("ValidationException: " DDB_MSG_NUMBER_UNDERFLOW);
	if (ndigits > DDB_MAX_NUMBER_DIGITS)
		validation_error("ValidationException: %s",
						 arithmetic ? DDB_MSG_NUMBER_OVERFLOW : DDB_MSG_NUMBER_PRECISION);
	return ndigits;
}

static int
check_number(Numeric num)
{
	return check_number_ext(num, false);
}

void
ddb_check_number(Numeric num)
{
	(void) check_number(num);
}

/*
 * The same for the result of + or - in an update.  (ADD keeps the
 * precision message: nothing records what DynamoDB says there.)
 */
void
ddb_check_number_result(Numeric num)
{
	(void) check_number_ext(num, true);
}

/*
 * Is a number written as DynamoDB gives numbers back, without zeros after
 * its last significant fractional digit?  numeric keeps the scale a number
 * was written with (1.50, 0.0, 3.000), and jsonb prints it; DynamoDB trims
 * leading and trailing zeros (HowItWorks.DataTypes: 1.5, 0, 3).  An
 * exponent is no question: numeric has none (1E+2 is 100).  The number
 * must be finite (check_number).
 */
#ifdef DDB_CHECKS
/*
 * Test only (CHECKS=1 builds): ddb.check_fault_keep_number_scale stores
 * numbers with the scale they were written with, as releases before
 * numbers were normalized did, so that tests can make the items such a
 * release left behind.
 */
static bool check_fault_keep_number_scale = false;

void
ddb_types_checks_init(void)
{
	DefineCustomBoolVariable("ddb.check_fault_keep_number_scale",
							 "Test only: numbers are stored with the scale they were written with.",
							 NULL, &check_fault_keep_number_scale, false,
							 PGC_SUSET, GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);
}
#endif

static bool
number_normalized(Numeric num)
{
	Datum		d = NumericGetDatum(num);

#ifdef DDB_CHECKS
	if (check_fault_keep_number_scale)
		return true;
#endif
	return DatumGetInt32(DirectFunctionCall1(numeric_scale, d)) ==
		DatumGetInt32(DirectFunctionCall1(numeric_min_scale, d));
}

/* The number as DynamoDB gives it back: num itself when it already is. */
Numeric
ddb_number_normalize(Numeric num)
{
	if (number_normalized(num))
		return num;
	return DatumGetNumeric(DirectFunctionCall1(numeric_trim_scale, NumericGetDatum(num)));
}

/* ddb_number_normalize for every number of a value, in place */
void
ddb_value_normalize_numbers(DdbValue *v)
{
	check_stack_depth();
	switch (v->type)
	{
		case DDB_TYPE_N:
			v->u.num = ddb_number_normalize(v->u.num);
			break;
		case DDB_TYPE_NS:
		case DDB_TYPE_L:
			for (int i = 0; i < v->u.list.n; i++)
				ddb_value_normalize_numbers(v->u.list.elems[i]);
			break;
		case DDB_TYPE_M:
			for (int i = 0; i < v->u.map.n; i++)
				ddb_value_normalize_numbers(v->u.map.vals[i]);
			break;
		default:
			break;
	}
}

/*
 * DynamoDB's limit on attribute names (items, nested maps, and the names
 * expressions use), checked in bytes.
 */
static void
check_name_length(int len)
{
	if (len > DDB_MAX_ATTRIBUTE_NAME_BYTES)
		validation_error("ValidationException: " DDB_MSG_NAME_TOO_LARGE);
}

void
ddb_check_attribute_name(const char *name)
{
	check_name_length(strlen(name));
}

/*
 * Parse a number written as a string (typed JSON "N"), in the syntax
 * DynamoDB accepts: optional sign, digits with an optional fraction, an
 * optional exponent.  Anything else is DynamoDB's conversion error rather
 * than PostgreSQL's numeric input error.
 */
static Numeric
number_from_string(const char *s, int len)
{
	int			i = 0;
	int			mant = 0;
	bool		nonzero = false;
	bool		point = false;
	char	   *cstr;
	Numeric		num;

	/* (s is not NUL-terminated: jsonb strings are counted) */
	if (i < len && (s[i] == '-' || s[i] == '+'))
		i++;
	for (; i < len && (isdigit((unsigned char) s[i]) || s[i] == '.'); i++)
	{
		if (s[i] == '.')
		{
			if (point)
				break;			/* a second point: rejected below */
			point = true;
			continue;
		}
		mant++;
		nonzero |= (s[i] != '0');
	}
	if (mant > 0 && i < len && (s[i] == 'e' || s[i] == 'E'))
	{
		int			expdigits = 0;
		int			expvalue = 0;
		bool		negative;

		i++;
		negative = (i < len && s[i] == '-');
		if (i < len && (s[i] == '-' || s[i] == '+'))
			i++;
		while (i < len && isdigit((unsigned char) s[i]))
		{
			/* its value, saturated: leading zeros ("1e0001") count for nothing */
			expvalue = Min(expvalue * 10 + (s[i] - '0'), 100000);
			i++, expdigits++;
		}
		if (expdigits == 0)
			mant = 0;
		else if (expvalue > 1000 && i == len)
		{
			/*
			 * numeric_in refuses exponents beyond 1000, so judge these here:
			 * zero stays zero, anything else is out of DynamoDB's range.
			 */
			if (!nonzero)
				return int64_to_numeric(0);
			if (negative)
				validation_error("ValidationException: " DDB_MSG_NUMBER_UNDERFLOW);
			validation_error("ValidationException: " DDB_MSG_NUMBER_OVERFLOW);
		}
	}
	if (len == 0)
		validation_error("ValidationException: " DDB_MSG_NUMBER_INVALID);
	if (mant == 0 || i != len)
		validation_error("ValidationException: " DDB_MSG_NUMBER_INVALID_TEXT, pnstrdup(s, len));
	cstr = pnstrdup(s[0] == '+' ? s + 1 : s, s[0] == '+' ? len - 1 : len);
	num = DatumGetNumeric(DirectFunctionCall3(numeric_in,
											  CStringGetDatum(cstr),
											  ObjectIdGetDatum(InvalidOid),
											  Int32GetDatum(-1)));
	/* (finite: numeric_in takes no NaN or Infinity past the syntax above) */
	return ddb_number_normalize(num);
}

/* ------------------------------------------------------------------------
 * Base64 (strict: what DynamoDB's SDKs produce)
 * ------------------------------------------------------------------------
 */
static bool
b64_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		(c >= '0' && c <= '9') || c == '+' || c == '/';
}

static void
b64_decode_strict(const char *src, int len, DdbValue *out)
{
	int			pad = 0;
	int			n;

	if (len % 4 != 0)
		goto bad;
	while (pad < 2 && len - pad > 0 && src[len - pad - 1] == '=')
		pad++;
	for (int i = 0; i < len - pad; i++)
		if (!b64_char(src[i]))
			goto bad;
	out->u.str.data = palloc(pg_b64_dec_len(len) + 1);
	n = len == 0 ? 0 : pg_b64_decode(src, len, out->u.str.data, pg_b64_dec_len(len));
	if (n < 0)
		goto bad;
	out->u.str.len = n;
	return;

bad:
	validation_error("ValidationException: " DDB_MSG_DOC_BASE64, Min(len, 40), src);
}

static char *
b64_encode(const char *data, int len, int *outlen)
{
	char	   *dst = palloc(pg_b64_enc_len(len) + 1);
	int			n = len == 0 ? 0 : pg_b64_encode(data, len, dst, pg_b64_enc_len(len));

	if (n < 0)
		elog(ERROR, "base64 encoding failed");
	dst[n] = '\0';
	*outlen = n;
	return dst;
}

/* ------------------------------------------------------------------------
 * Sets
 * ------------------------------------------------------------------------
 */
/* "[a, b]": a set as DynamoDB quotes it, its elements as written */
static char *
set_elements_string(DdbValue *set)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '[');
	for (int i = 0; i < set->u.list.n; i++)
	{
		DdbValue   *e = set->u.list.elems[i];
		int			n;

		if (i > 0)
			appendStringInfoString(&buf, ", ");
		if (e->type == DDB_TYPE_B)
			appendStringInfoString(&buf, b64_encode(e->u.str.data, e->u.str.len, &n));
		else
			appendBinaryStringInfo(&buf, e->u.str.data, e->u.str.len);
	}
	appendStringInfoChar(&buf, ']');
	return buf.data;
}

/*
 * Empty sets and duplicates are DynamoDB ValidationExceptions, each type
 * with its own wording (DynamoDB's, including "An string set  may").
 */
static void
check_set(DdbValue *set)
{
	DdbValue  **sorted;

	if (set->u.list.n == 0)
		validation_error("ValidationException: %s",
						 set->type == DDB_TYPE_SS ? DDB_MSG_EMPTY_SS :
						 set->type == DDB_TYPE_NS ? DDB_MSG_EMPTY_NS : DDB_MSG_EMPTY_BS);
	/* sort a copy, then duplicates are neighbours: O(n log n) */
	sorted = palloc(set->u.list.n * sizeof(DdbValue *));
	memcpy(sorted, set->u.list.elems, set->u.list.n * sizeof(DdbValue *));
	qsort(sorted, set->u.list.n, sizeof(DdbValue *), scalar_qsort_cmp);
	for (int i = 1; i < set->u.list.n; i++)
		if (ddb_scalar_cmp(sorted[i - 1], sorted[i]) == 0)
		{
			if (set->type == DDB_TYPE_NS)
				validation_error("ValidationException: " DDB_MSG_DUPLICATES_NS);
			validation_error("ValidationException: %s",
							 psprintf(set->type == DDB_TYPE_SS ? DDB_MSG_DUPLICATES_SS :
									  DDB_MSG_DUPLICATES_BS,
									  set_elements_string(set)));
		}
	pfree(sorted);
}

/* ------------------------------------------------------------------------
 * Document form jsonb -> DdbValue
 * ------------------------------------------------------------------------
 */
/*
 * Reading document form has two modes that run the same checks in the same
 * order: building the DdbValue tree (walk NULL), and checking only (walk
 * set), for ddb_validate_item_column, which must not pay for a tree it
 * would throw away.  A checking walk adds each value's DynamoDB size (see
 * ddb_value_size) to walk->size and notes an empty attribute name, which
 * the building mode reports after the whole item is read
 * (check_attribute_names), so both raise the same first error.  The
 * checking walk reads an object's pairs straight from its entries rather
 * than through an iterator (about half of a small item's check); checked
 * builds compare its size with the built tree's.
 */
typedef struct DocWalk
{
	int64		size;
	bool		empty_name;
	bool		unnormalized;	/* a number not as DynamoDB gives it back */
} DocWalk;

static DdbValue *value_from_jbv(JsonbValue *jv, int depth, DocWalk *walk);

static void
check_depth(int depth)
{
	check_stack_depth();
	if (depth > DDB_MAX_NESTING_DEPTH)
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: " DDB_MSG_NESTING),
				 errdetail("Lists and maps nest at most %d levels deep.",
						   DDB_MAX_NESTING_DEPTH)));
}

static char *
jbv_cstring(JsonbValue *jv)
{
	return pnstrdup(jv->val.string.val, jv->val.string.len);
}

/* Is this the name of a document-form tag? */
static bool
is_tag(const char *key, int len)
{
	return (len == 2 && (memcmp(key, "$B", 2) == 0 || memcmp(key, "$M", 2) == 0 ||
						 memcmp(key, "$S", 2) == 0)) ||
		(len == 3 && (memcmp(key, "$SS", 3) == 0 || memcmp(key, "$NS", 3) == 0 ||
					  memcmp(key, "$BS", 3) == 0));
}

/*
 * Read an object's pairs into a map (names unique: jsonb guarantees it),
 * each value read by 'read' (document form or typed JSON).
 */
static DdbValue *
map_read(JsonbContainer *jc, int depth, DdbValue *(*read) (JsonbValue *, int))
{
	DdbValue   *map = ddb_value_new(DDB_TYPE_M);
	JsonbIterator *it = JsonbIteratorInit(jc);
	JsonbValue	v;
	JsonbIteratorToken tok;
	char	   *key = NULL;

	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		if (tok == WJB_KEY)
		{
			key = jbv_cstring(&v);
			ddb_check_attribute_name(key);
		}
		else if (tok == WJB_VALUE)
			map_append(map, key, read(&v, depth + 1));
	}
	return map;
}

static DdbValue *
doc_value(JsonbValue *jv, int depth)
{
	return value_from_jbv(jv, depth, NULL);
}

/*
 * An object's attributes: a map, or (checking) their names and values'
 * sizes added to walk->size.  'overhead': count M's 3 bytes and 1 byte per
 * element (false for the item itself, which DynamoDB counts as bare
 * attributes).
 */
static DdbValue *
map_from_container(JsonbContainer *jc, int depth, DocWalk *walk, bool overhead)
{
	int			n = JsonContainerSize(jc);
	char	   *base = (char *) &jc->children[n * 2];
	uint32		keyoff = 0;
	uint32		valoff;

	if (walk == NULL)
		return map_read(jc, depth, doc_value);
	if (overhead)
		walk->size += 3;

	/*
	 * The pairs straight from the container's entries, in the order an
	 * iterator gives them (each key, then its value), without its per-token
	 * work.  Entries hold lengths, with an end offset every
	 * JB_OFFSET_STRIDE'th: the n keys' come first, then the n values'.
	 */
	valoff = n > 0 ? getJsonbOffset(jc, n) : 0;
	for (int i = 0; i < n; i++)
	{
		JEntry		ke = jc->children[i];
		JEntry		ve = jc->children[n + i];
		uint32		start = valoff;
		JsonbValue	v;
		int			keylen;

		keylen = (JBE_HAS_OFF(ke) ? JBE_OFFLENFLD(ke) : keyoff + JBE_OFFLENFLD(ke)) - keyoff;
		keyoff += keylen;
		check_name_length(keylen);
		if (keylen == 0)
			walk->empty_name = true;
		walk->size += keylen + (overhead ? 1 : 0);

		/* the value as an iterator gives it (jsonb_util.c's fillJsonbValue) */
		valoff = JBE_HAS_OFF(ve) ? JBE_OFFLENFLD(ve) : valoff + JBE_OFFLENFLD(ve);
		if (JBE_ISNULL(ve))
			v.type = jbvNull;
		else if (JBE_ISSTRING(ve))
		{
			v.type = jbvString;
			v.val.string.val = base + start;
			v.val.string.len = valoff - start;
		}
		else if (JBE_ISNUMERIC(ve))
		{
			v.type = jbvNumeric;
			v.val.numeric = (Numeric) (base + INTALIGN(start));
		}
		else if (JBE_ISBOOL_TRUE(ve) || JBE_ISBOOL_FALSE(ve))
		{
			v.type = jbvBool;
			v.val.boolean = JBE_ISBOOL_TRUE(ve);
		}
		else
		{
			v.type = jbvBinary;
			v.val.binary.data = (JsonbContainer *) (base + INTALIGN(start));
			v.val.binary.len = valoff - INTALIGN(start);
		}
		(void) value_from_jbv(&v, depth + 1, walk);
	}
	return NULL;
}

/*
 * Strings holding U+0000 (legal in DynamoDB) cannot be jsonb strings that
 * print as text, so the document form writes them as {"$S": [parts]}: the
 * parts are the string split at each U+0000 (at least two, none holding
 * U+0000).  nul_string reads that form, push_nul_string writes it.
 */
static DdbValue *
nul_string(JsonbValue *val)
{
	DdbValue   *v = ddb_value_new(DDB_TYPE_S);
	StringInfoData buf;
	JsonbIterator *it;
	JsonbValue	e;
	JsonbIteratorToken tok;
	int			n = 0;

	if (val->type != jbvBinary || !JsonContainerIsArray(val->val.binary.data))
		validation_error("ValidationException: " DDB_MSG_DOC_NUL_STRING);
	initStringInfo(&buf);
	it = JsonbIteratorInit(val->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
	{
		if (tok != WJB_ELEM)
			continue;
		if (e.type != jbvString || memchr(e.val.string.val, '\0', e.val.string.len))
			validation_error("ValidationException: " DDB_MSG_DOC_NUL_STRING);
		if (n++ > 0)
			appendStringInfoChar(&buf, '\0');
		appendBinaryStringInfo(&buf, e.val.string.val, e.val.string.len);
	}
	if (n < 2)
		validation_error("ValidationException: " DDB_MSG_DOC_NUL_STRING_PARTS);
	v->u.str.data = buf.data;
	v->u.str.len = buf.len;
	return v;
}

/* An element of a $SS set: a string, or a {"$S": [...]} string. */
static DdbValue *
set_string(JsonbValue *v)
{
	if (v->type == jbvBinary && JsonContainerIsObject(v->val.binary.data) &&
		JsonContainerSize(v->val.binary.data) == 1)
	{
		JsonbValue *parts = getKeyJsonValueFromContainer(v->val.binary.data, "$S", 2, NULL);

		if (parts != NULL)
			return nul_string(parts);
	}
	return NULL;
}

static DdbValue *
set_from_jbv(JsonbValue *jv, DdbType type, int depth)
{
	DdbValue   *set = ddb_value_new(type);
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	const char *tag = type == DDB_TYPE_SS ? "$SS" : type == DDB_TYPE_NS ? "$NS" : "$BS";

	if (jv->type != jbvBinary || !JsonContainerIsArray(jv->val.binary.data))
		validation_error("ValidationException: " DDB_MSG_DOC_SET_NOT_ARRAY, tag);
	it = JsonbIteratorInit(jv->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		DdbValue   *e;

		if (tok != WJB_ELEM)
			continue;
		if (type == DDB_TYPE_NS)
		{
			if (v.type != jbvNumeric)
				validation_error("ValidationException: " DDB_MSG_DOC_NS_ELEMENT);
			ddb_check_number(v.val.numeric);
			e = ddb_value_new(DDB_TYPE_N);
			e->u.num = v.val.numeric;
		}
		else if (type == DDB_TYPE_SS && (e = set_string(&v)) != NULL)
			;
		else
		{
			if (v.type != jbvString)
				validation_error("ValidationException: " DDB_MSG_DOC_SET_ELEMENT, tag);
			if (type == DDB_TYPE_SS)
			{
				e = ddb_value_new(DDB_TYPE_S);
				e->u.str.data = v.val.string.val;
				e->u.str.len = v.val.string.len;
			}
			else
			{
				e = ddb_value_new(DDB_TYPE_B);
				b64_decode_strict(v.val.string.val, v.val.string.len, e);
			}
		}
		ddb_list_append(set, e);
	}
	check_set(set);
	return set;
}

static DdbValue *
value_from_jbv(JsonbValue *jv, int depth, DocWalk *walk)
{
	DdbValue   *v;

	check_stack_depth();
	switch (jv->type)
	{
		case jbvNull:
			if (walk)
			{
				walk->size += 1;
				return NULL;
			}
			return ddb_value_new(DDB_TYPE_NULL);
		case jbvBool:
			if (walk)
			{
				walk->size += 1;
				return NULL;
			}
			v = ddb_value_new(DDB_TYPE_BOOL);
			v->u.boolean = jv->val.boolean;
			return v;
		case jbvString:
			if (walk)
			{
				walk->size += jv->val.string.len;
				return NULL;
			}
			v = ddb_value_new(DDB_TYPE_S);
			v->u.str.data = jv->val.string.val;
			v->u.str.len = jv->val.string.len;
			return v;
		case jbvNumeric:
			{
				int			ndigits = check_number(jv->val.numeric);

				if (walk)
				{
					walk->size += NUMBER_SIZE(ndigits);
					walk->unnormalized |= !number_normalized(jv->val.numeric);
					return NULL;
				}
			}
			v = ddb_value_new(DDB_TYPE_N);
			v->u.num = jv->val.numeric;
			return v;
		case jbvBinary:
			break;
		default:
			elog(ERROR, "unexpected jsonb value type %d", jv->type);
	}

	if (JsonContainerIsArray(jv->val.binary.data))
	{
		JsonbIterator *it = JsonbIteratorInit(jv->val.binary.data);
		JsonbValue	e;
		JsonbIteratorToken tok;

		check_depth(depth);		/* lists and maps are nesting levels */
		v = walk ? NULL : ddb_value_new(DDB_TYPE_L);
		if (walk)
			walk->size += 3;
		while ((tok = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
			if (tok == WJB_ELEM)
			{
				if (walk)
				{
					walk->size += 1;
					(void) value_from_jbv(&e, depth + 1, walk);
				}
				else
					ddb_list_append(v, value_from_jbv(&e, depth + 1, NULL));
			}
		return v;
	}

	/* an object: a tag when it has exactly one key that is a tag name */
	if (JsonContainerSize(jv->val.binary.data) == 1)
	{
		JsonbIterator *it = JsonbIteratorInit(jv->val.binary.data);
		JsonbValue	k,
					val;

		(void) JsonbIteratorNext(&it, &k, true);	/* WJB_BEGIN_OBJECT */
		(void) JsonbIteratorNext(&it, &k, true);	/* WJB_KEY */
		(void) JsonbIteratorNext(&it, &val, true);	/* WJB_VALUE */
		if (is_tag(k.val.string.val, k.val.string.len))
		{
			const char *tag = k.val.string.val;

			if (tag[1] == 'B' && k.val.string.len == 2)
			{
				if (val.type != jbvString)
					validation_error("ValidationException: " DDB_MSG_DOC_B_NOT_STRING);
				v = ddb_value_new(DDB_TYPE_B);
				b64_decode_strict(val.val.string.val, val.val.string.len, v);
			}
			else if (tag[1] == 'S' && k.val.string.len == 2)
				v = nul_string(&val);
			else if (tag[1] == 'M')
			{
				if (val.type != jbvBinary || !JsonContainerIsObject(val.val.binary.data))
					validation_error("ValidationException: " DDB_MSG_DOC_M_NOT_OBJECT);
				check_depth(depth);
				return map_from_container(val.val.binary.data, depth, walk, true);
			}
			else
				v = set_from_jbv(&val,
								 tag[1] == 'S' ? DDB_TYPE_SS :
								 tag[1] == 'N' ? DDB_TYPE_NS : DDB_TYPE_BS,
								 depth);
			/* B, a U+0000 string, sets: leaves, read whole in both modes */
			if (walk)
			{
				walk->size += ddb_value_size(v);
				if (v->type == DDB_TYPE_NS)
					for (int i = 0; i < v->u.list.n; i++)
						walk->unnormalized |= !number_normalized(v->u.list.elems[i]->u.num);
				return NULL;
			}
			return v;
		}
	}
	check_depth(depth);
	return map_from_container(jv->val.binary.data, depth, walk, true);
}

/* Attribute names are never empty, in an item or a map at any depth. */
static void
check_attribute_names(DdbValue *v)
{
	check_stack_depth();
	if (v->type == DDB_TYPE_M)
		for (int i = 0; i < v->u.map.n; i++)
		{
			if (v->u.map.keys[i][0] == '\0')
				validation_error("ValidationException: " DDB_MSG_EMPTY_ATTRIBUTE_NAME);
			check_attribute_names(v->u.map.vals[i]);
		}
	else if (v->type == DDB_TYPE_L)
		for (int i = 0; i < v->u.list.n; i++)
			check_attribute_names(v->u.list.elems[i]);
}

DdbValue *
ddb_item_from_jsonb(Jsonb *item)
{
	DdbValue   *map;

	if (!JB_ROOT_IS_OBJECT(item))
		validation_error("ValidationException: " DDB_MSG_DOC_NOT_OBJECT);
	map = map_from_container(&item->root, 0, NULL, false);
	check_attribute_names(map);
	return map;
}

DdbValue *
ddb_value_from_jsonb(Jsonb *value)
{
	JsonbValue	jv;

	if (JB_ROOT_IS_SCALAR(value))
	{
		if (!JsonbExtractScalar(&value->root, &jv))
			elog(ERROR, "could not extract a jsonb scalar");
	}
	else
	{
		jv.type = jbvBinary;
		jv.val.binary.data = &value->root;
		jv.val.binary.len = VARSIZE(value) - VARHDRSZ;
	}
	return value_from_jbv(&jv, 1, NULL);
}

DdbValue *
ddb_value_from_jbv(JsonbValue *value)
{
	return value_from_jbv(value, 1, NULL);
}

/* ------------------------------------------------------------------------
 * DdbValue -> jsonb (document form or typed JSON)
 * ------------------------------------------------------------------------
 */
static void push_value(JsonbParseState **st, DdbValue *v, JsonbIteratorToken tok,
					   bool typed);

static void
push_string(JsonbParseState **st, JsonbIteratorToken tok, const char *s, int len)
{
	JsonbValue	jv;

	jv.type = jbvString;
	jv.val.string.val = (char *) s;
	jv.val.string.len = len;
	(void) pushJsonbValue(st, tok, &jv);
}

static void
push_key(JsonbParseState **st, const char *key)
{
	push_string(st, WJB_KEY, key, strlen(key));
}

static void
push_number_string(JsonbParseState **st, JsonbIteratorToken tok, Numeric num)
{
	char	   *s = numeric_normalize(num);

	push_string(st, tok, s, strlen(s));
}

static void
push_map_body(JsonbParseState **st, DdbValue *m, bool typed)
{
	(void) pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
	for (int i = 0; i < m->u.map.n; i++)
	{
		push_key(st, m->u.map.keys[i]);
		push_value(st, m->u.map.vals[i], WJB_VALUE, typed);
	}
	(void) pushJsonbValue(st, WJB_END_OBJECT, NULL);
}

static void
push_list_body(JsonbParseState **st, DdbValue *l, bool typed)
{
	(void) pushJsonbValue(st, WJB_BEGIN_ARRAY, NULL);
	for (int i = 0; i < l->u.list.n; i++)
		push_value(st, l->u.list.elems[i], WJB_ELEM, typed);
	(void) pushJsonbValue(st, WJB_END_ARRAY, NULL);
}

/* A document-form string: {"$S": [parts]} when it holds U+0000. */
static void
push_doc_string(JsonbParseState **st, JsonbIteratorToken tok, const char *s, int len)
{
	const char *p = s;
	const char *end = s + len;

	if (memchr(s, '\0', len) == NULL)
	{
		push_string(st, tok, s, len);
		return;
	}
	(void) pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
	push_key(st, "$S");
	(void) pushJsonbValue(st, WJB_BEGIN_ARRAY, NULL);
	for (;;)
	{
		const char *nul = memchr(p, '\0', end - p);

		push_string(st, WJB_ELEM, p, nul ? nul - p : end - p);
		if (nul == NULL)
			break;
		p = nul + 1;
	}
	(void) pushJsonbValue(st, WJB_END_ARRAY, NULL);
	(void) pushJsonbValue(st, WJB_END_OBJECT, NULL);
}

/*
 * A typed-JSON string (the value of {"S": ...}, an SS element): jsonb
 * strings cannot hold U+0000, and typed JSON has no other form for one, so
 * such a string is refused rather than cut short (the typed writers of
 * ddb_api and ddb_api_text, which write JSON text, carry it).
 */
static void
push_typed_string(JsonbParseState **st, JsonbIteratorToken tok, const char *s, int len)
{
	if (memchr(s, '\0', len) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNTRANSLATABLE_CHARACTER),
				 errmsg("the item holds a string with U+0000, which typed JSON as jsonb cannot represent"),
				 errhint("Keep the item in document form, where such a string is {\"$S\": [parts]}, or use ddb_api_text(), which takes and returns JSON text.")));
	push_string(st, tok, s, len);
}

/* Set elements: strings, base64 strings, or (document NS) numbers. */
static void
push_set_body(JsonbParseState **st, DdbValue *set, bool typed)
{
	(void) pushJsonbValue(st, WJB_BEGIN_ARRAY, NULL);
	for (int i = 0; i < set->u.list.n; i++)
	{
		DdbValue   *e = set->u.list.elems[i];

		if (e->type == DDB_TYPE_N)
		{
			if (typed)
				push_number_string(st, WJB_ELEM, e->u.num);
			else
			{
				JsonbValue	jv;

				jv.type = jbvNumeric;
				jv.val.numeric = e->u.num;
				(void) pushJsonbValue(st, WJB_ELEM, &jv);
			}
		}
		else if (e->type == DDB_TYPE_B)
		{
			int			n;
			char	   *s = b64_encode(e->u.str.data, e->u.str.len, &n);

			push_string(st, WJB_ELEM, s, n);
		}
		else if (typed)
			push_typed_string(st, WJB_ELEM, e->u.str.data, e->u.str.len);
		else
			push_doc_string(st, WJB_ELEM, e->u.str.data, e->u.str.len);
	}
	(void) pushJsonbValue(st, WJB_END_ARRAY, NULL);
}

static void
push_value(JsonbParseState **st, DdbValue *v, JsonbIteratorToken tok, bool typed)
{
	JsonbValue	jv;

	check_stack_depth();
	if (typed)
	{
		(void) pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
		push_key(st, ddb_type_name(v->type));
		tok = WJB_VALUE;
	}

	switch (v->type)
	{
		case DDB_TYPE_S:
			if (typed)
				push_typed_string(st, tok, v->u.str.data, v->u.str.len);
			else
				push_doc_string(st, tok, v->u.str.data, v->u.str.len);
			break;
		case DDB_TYPE_N:
			if (typed)
				push_number_string(st, tok, v->u.num);
			else
			{
				jv.type = jbvNumeric;
				jv.val.numeric = v->u.num;
				(void) pushJsonbValue(st, tok, &jv);
			}
			break;
		case DDB_TYPE_B:
			{
				int			n;
				char	   *s = b64_encode(v->u.str.data, v->u.str.len, &n);

				if (!typed)
				{
					(void) pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
					push_key(st, "$B");
				}
				push_string(st, typed ? tok : WJB_VALUE, s, n);
				if (!typed)
					(void) pushJsonbValue(st, WJB_END_OBJECT, NULL);
			}
			break;
		case DDB_TYPE_BOOL:
		case DDB_TYPE_NULL:
			if (v->type == DDB_TYPE_BOOL)
			{
				jv.type = jbvBool;
				jv.val.boolean = v->u.boolean;
			}
			else if (typed)
			{
				jv.type = jbvBool;
				jv.val.boolean = true;	/* {"NULL": true} */
			}
			else
				jv.type = jbvNull;
			(void) pushJsonbValue(st, tok, &jv);
			break;
		case DDB_TYPE_L:
			push_list_body(st, v, typed);
			break;
		case DDB_TYPE_M:
			/* a map that would read back as a tag is escaped with $M */
			if (!typed && v->u.map.n == 1 &&
				is_tag(v->u.map.keys[0], strlen(v->u.map.keys[0])))
			{
				(void) pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
				push_key(st, "$M");
				push_map_body(st, v, false);
				(void) pushJsonbValue(st, WJB_END_OBJECT, NULL);
			}
			else
				push_map_body(st, v, typed);
			break;
		case DDB_TYPE_SS:
		case DDB_TYPE_NS:
		case DDB_TYPE_BS:
			if (!typed)
			{
				(void) pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
				push_key(st, v->type == DDB_TYPE_SS ? "$SS" :
						 v->type == DDB_TYPE_NS ? "$NS" : "$BS");
			}
			push_set_body(st, v, typed);
			if (!typed)
				(void) pushJsonbValue(st, WJB_END_OBJECT, NULL);
			break;
	}

	if (typed)
		(void) pushJsonbValue(st, WJB_END_OBJECT, NULL);
}

/* An item's top level is a plain object of attributes, never escaped. */
static Jsonb *
item_to_jsonb(DdbValue *item, bool typed)
{
	JsonbParseState *st = NULL;
	JsonbValue *res;

	Assert(item->type == DDB_TYPE_M);
	(void) pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	for (int i = 0; i < item->u.map.n; i++)
	{
		push_key(&st, item->u.map.keys[i]);
		push_value(&st, item->u.map.vals[i], WJB_VALUE, typed);
	}
	res = pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(res);
}

Jsonb *
ddb_item_to_jsonb(DdbValue *item)
{
	return item_to_jsonb(item, false);
}

Jsonb *
ddb_item_to_typed_jsonb(DdbValue *item)
{
	return item_to_jsonb(item, true);
}

/* ------------------------------------------------------------------------
 * Typed JSON -> DdbValue
 * ------------------------------------------------------------------------
 */
static DdbValue *typed_value_from_jbv(JsonbValue *jv, int depth);

/*
 * Typed JSON of the wrong shape is a malformed request, as DynamoDB's
 * deserializer reports it: SerializationException, with the texts the
 * endpoint's parser gives for the same JSON (api/ddb_json.c).
 */
#define serialization_error(...) \
	ereport(ERROR, \
			(errcode(DDB_ERRCODE_SERIALIZATION), \
			 errmsg("SerializationException: " __VA_ARGS__)))

/* A JSON value where a scalar of 'target' belongs. */
static void
typed_shape_error(JsonbValue *jv, const char *target, const char *collection_class)
{
	if (jv->type == jbvBinary && JsonContainerIsArray(jv->val.binary.data))
		serialization_error(DDB_MSG_SER_COLLECTION, collection_class);
	if (jv->type == jbvBinary)
		serialization_error(DDB_MSG_SER_START_OF_MAP);
	if (jv->type == jbvBool)
		serialization_error(DDB_MSG_SER_CONVERT, jv->val.boolean ? "TRUE_VALUE" : "FALSE_VALUE", target);
	if (jv->type == jbvNumeric)
	{
		char	   *s = DatumGetCString(DirectFunctionCall1(numeric_out,
															NumericGetDatum(jv->val.numeric)));

		serialization_error(DDB_MSG_SER_CONVERT, strpbrk(s, ".eE") ? "DECIMAL_VALUE" : "NUMBER_VALUE",
							target);
	}
	serialization_error(DDB_MSG_SER_CONVERT, "STRING_VALUE", target);
}

static void
typed_check_string(JsonbValue *jv)
{
	if (jv->type != jbvString)
		typed_shape_error(jv, "String", "class java.lang.String");
}

/* B and BS elements: base64 strings (decoded later, strictly) */
static void
typed_check_blob(JsonbValue *jv)
{
	int			len;

	if (jv->type == jbvBool || jv->type == jbvNumeric)
		serialization_error(DDB_MSG_SER_BYTES);
	if (jv->type == jbvBinary && JsonContainerIsArray(jv->val.binary.data))
		serialization_error(DDB_MSG_SER_COLLECTION, "class java.nio.ByteBuffer");
	if (jv->type != jbvString)
		serialization_error(DDB_MSG_SER_START_OF_MAP);
	len = jv->val.string.len;
	if (len % 4 != 0)
		serialization_error(DDB_MSG_SER_BASE64_LENGTH, len);
	if (len > 0 && pg_b64_decode(jv->val.string.val, len, palloc(pg_b64_dec_len(len) + 1),
								 pg_b64_dec_len(len)) < 0)
		serialization_error(DDB_MSG_SER_BASE64_CHAR);
}

/* BOOL and NULL: JSON booleans, or the strings DynamoDB's parser takes */
static bool
typed_check_bool(JsonbValue *jv)
{
	if (jv->type == jbvBool)
		return jv->val.boolean;
	if (jv->type == jbvString)
	{
		char	   *s = pnstrdup(jv->val.string.val, jv->val.string.len);

		if (pg_strcasecmp(s, "true") == 0 || strcmp(s, "1") == 0 || pg_strcasecmp(s, "yes") == 0)
			return true;
		if (pg_strcasecmp(s, "false") == 0 || strcmp(s, "0") == 0 || pg_strcasecmp(s, "no") == 0)
			return false;
		serialization_error(DDB_MSG_SER_BOOL_TOKEN);
	}
	typed_shape_error(jv, "Boolean", "class java.lang.Boolean");
	return false;
}

static void
typed_check_array(JsonbValue *jv)
{
	if (jv->type == jbvBinary && JsonContainerIsObject(jv->val.binary.data))
		serialization_error(DDB_MSG_SER_START_OF_MAP);
	if (jv->type != jbvBinary)
		serialization_error(DDB_MSG_SER_FIELD_TYPE);
}

static void
typed_check_map(JsonbValue *jv)
{
	if (jv->type == jbvBinary && JsonContainerIsArray(jv->val.binary.data))
		serialization_error(DDB_MSG_SER_COLLECTION,
							"java.util.Map<java.lang.String, com.amazonaws.dynamodb.v20120810.AttributeValue>");
	if (jv->type != jbvBinary)
		serialization_error(DDB_MSG_SER_FIELD_TYPE);
}

/* The JSON shape of member 'type' of an AttributeValue. */
static void
typed_check_shape(DdbType type, JsonbValue *jv)
{
	JsonbIterator *it;
	JsonbValue	e;
	JsonbIteratorToken tok;

	switch (type)
	{
		case DDB_TYPE_S:
		case DDB_TYPE_N:
			typed_check_string(jv);
			break;
		case DDB_TYPE_B:
			typed_check_blob(jv);
			break;
		case DDB_TYPE_BOOL:
		case DDB_TYPE_NULL:
			(void) typed_check_bool(jv);
			break;
		case DDB_TYPE_L:
			typed_check_array(jv);
			break;
		case DDB_TYPE_SS:
		case DDB_TYPE_NS:
		case DDB_TYPE_BS:
			typed_check_array(jv);
			it = JsonbIteratorInit(jv->val.binary.data);
			while ((tok = JsonbIteratorNext(&it, &e, true)) != WJB_DONE)
			{
				if (tok != WJB_ELEM)
					continue;
				if (type == DDB_TYPE_BS)
					typed_check_blob(&e);
				else
					typed_check_string(&e);
			}
			break;
		case DDB_TYPE_M:
			typed_check_map(jv);
			break;
	}
}

static DdbValue *
typed_map_from_container(JsonbContainer *jc, int depth)
{
	return map_read(jc, depth, typed_value_from_jbv);
}

/* S, N or B, its shape checked */
static DdbValue *
typed_scalar(DdbType type, JsonbValue *jv)
{
	DdbValue   *e = ddb_value_new(type);

	if (type == DDB_TYPE_N)
	{
		e->u.num = number_from_string(jv->val.string.val, jv->val.string.len);
		ddb_check_number(e->u.num);
	}
	else if (type == DDB_TYPE_B)
		b64_decode_strict(jv->val.string.val, jv->val.string.len, e);
	else
	{
		e->u.str.data = jv->val.string.val;
		e->u.str.len = jv->val.string.len;
	}
	return e;
}

/*
 * One typed AttributeValue, checked as DynamoDB checks it: the JSON shape of
 * every member first (SerializationException), then exactly one data type
 * (ValidationException).  Members with unknown type names or null values
 * are ignored, as DynamoDB's deserializer ignores them, so {"X": "1"} is an
 * empty AttributeValue.
 */
static DdbValue *
typed_value_from_jbv(JsonbValue *jv, int depth)
{
	JsonbIterator *it;
	JsonbValue	k,
				val,
				chosen;
	DdbType		type = DDB_TYPE_NULL;
	int			ntypes = 0;
	DdbValue   *v;
	JsonbIteratorToken tok;

	check_stack_depth();
	if (jv->type != jbvBinary || !JsonContainerIsObject(jv->val.binary.data))
	{
		if (jv->type == jbvBinary)
			serialization_error(DDB_MSG_SER_COLLECTION, DDB_MSG_SER_CLASS_ATTRIBUTE_VALUE);
		serialization_error(DDB_MSG_SER_VALUE_TYPE);
	}
	it = JsonbIteratorInit(jv->val.binary.data);
	while ((tok = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
	{
		DdbType		t;

		if (tok != WJB_KEY)
			continue;
		tok = JsonbIteratorNext(&it, &val, true);
		if (val.type == jbvNull ||
			!ddb_type_from_name(k.val.string.val, k.val.string.len, &t))
			continue;
		typed_check_shape(t, &val);
		ntypes++;
		type = t;
		chosen = val;
	}
	if (ntypes == 0)
		validation_error("ValidationException: " DDB_MSG_EMPTY_ATTRIBUTE_VALUE);
	if (ntypes > 1)
		validation_error("ValidationException: " DDB_MSG_MULTI_TYPE_ATTRIBUTE_VALUE);

	switch (type)
	{
		case DDB_TYPE_S:
		case DDB_TYPE_N:
		case DDB_TYPE_B:
			return typed_scalar(type, &chosen);
		case DDB_TYPE_BOOL:
			v = ddb_value_new(DDB_TYPE_BOOL);
			v->u.boolean = typed_check_bool(&chosen);
			return v;
		case DDB_TYPE_NULL:
			if (!typed_check_bool(&chosen))
				validation_error("ValidationException: " DDB_MSG_NULL_NOT_TRUE);
			return ddb_value_new(DDB_TYPE_NULL);
		case DDB_TYPE_L:
		case DDB_TYPE_SS:
		case DDB_TYPE_NS:
		case DDB_TYPE_BS:
			if (type == DDB_TYPE_L)
				check_depth(depth);
			v = ddb_value_new(type);
			it = JsonbIteratorInit(chosen.val.binary.data);
			while ((tok = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
			{
				if (tok != WJB_ELEM)
					continue;
				if (type == DDB_TYPE_L)
					ddb_list_append(v, typed_value_from_jbv(&k, depth + 1));
				else
					ddb_list_append(v, typed_scalar(type == DDB_TYPE_SS ? DDB_TYPE_S :
													type == DDB_TYPE_NS ? DDB_TYPE_N :
													DDB_TYPE_B, &k));
			}
			if (type != DDB_TYPE_L)
				check_set(v);
			return v;
		case DDB_TYPE_M:
			check_depth(depth);
			return typed_map_from_container(chosen.val.binary.data, depth);
	}
	return NULL;				/* keep compiler quiet */
}

DdbValue *
ddb_item_from_typed_jsonb(Jsonb *item)
{
	DdbValue   *map;

	if (!JB_ROOT_IS_OBJECT(item))
		validation_error("ValidationException: " DDB_MSG_DOC_NOT_OBJECT);
	map = typed_map_from_container(&item->root, 0);
	check_attribute_names(map);
	return map;
}

/* ------------------------------------------------------------------------
 * Size and validation
 * ------------------------------------------------------------------------
 */
int64
ddb_value_size(DdbValue *v)
{
	int64		size = 0;

	check_stack_depth();
	switch (v->type)
	{
		case DDB_TYPE_S:
		case DDB_TYPE_B:
			return v->u.str.len;
		case DDB_TYPE_N:
			{
				int			ndigits;
				int			exponent;

				number_shape(v->u.num, &ndigits, &exponent);
				/* zero still takes one digit's worth */
				return NUMBER_SIZE(ndigits);
			}
		case DDB_TYPE_BOOL:
		case DDB_TYPE_NULL:
			return 1;
		case DDB_TYPE_L:
			size = 3;
			for (int i = 0; i < v->u.list.n; i++)
				size += 1 + ddb_value_size(v->u.list.elems[i]);
			return size;
		case DDB_TYPE_M:
			size = 3;
			for (int i = 0; i < v->u.map.n; i++)
				size += 1 + strlen(v->u.map.keys[i]) + ddb_value_size(v->u.map.vals[i]);
			return size;
		case DDB_TYPE_SS:
		case DDB_TYPE_NS:
		case DDB_TYPE_BS:
			for (int i = 0; i < v->u.list.n; i++)
				size += ddb_value_size(v->u.list.elems[i]);
			return size;
	}
	return 0;
}

int64
ddb_item_size(DdbValue *item)
{
	int64		size = 0;

	for (int i = 0; i < item->u.map.n; i++)
		size += strlen(item->u.map.keys[i]) + ddb_value_size(item->u.map.vals[i]);
	return size;
}

static void
check_size(int64 size, const char *message)
{
	if (size > DDB_MAX_ITEM_BYTES)
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: %s", message),
				 errdetail("The item is " INT64_FORMAT " bytes as DynamoDB counts them; the limit is %d.",
						   size, DDB_MAX_ITEM_BYTES)));
}

/* message: DDB_MSG_ITEM_SIZE or DDB_MSG_UPDATE_ITEM_SIZE */
void
ddb_check_item_size(DdbValue *item, const char *message)
{
	check_size(ddb_item_size(item), message);
}

static int
value_depth(DdbValue *v)
{
	int			d = 0;
	int			n;

	check_stack_depth();
	if (v->type != DDB_TYPE_L && v->type != DDB_TYPE_M)
		return 0;
	n = v->type == DDB_TYPE_L ? v->u.list.n : v->u.map.n;
	for (int i = 0; i < n; i++)
	{
		/* (not inside Max(), which would evaluate the recursion twice) */
		int			k = value_depth(v->type == DDB_TYPE_L ? v->u.list.elems[i] :
									v->u.map.vals[i]);

		d = Max(d, k);
	}
	return d + 1;
}

/* Values built by updates can nest deeper than any input did: check again. */
void
ddb_check_item_depth(DdbValue *item)
{
	for (int i = 0; i < item->u.map.n; i++)
		check_depth(value_depth(item->u.map.vals[i]));
}

DdbValue *
ddb_validate_item(Jsonb *item)
{
	DdbValue   *v = ddb_item_from_jsonb(item);

	ddb_check_item_size(v, DDB_MSG_ITEM_SIZE);
	return v;
}

/*
 * A document-form jsonb with its numbers as DynamoDB gives them back
 * (ddb_number_normalize), all else as it was: for the writers below, when
 * their checking walk found a number that is not.  Reads then return what
 * DynamoDB would, and pay nothing for it.
 */
static Jsonb *
normalize_numbers(Jsonb *doc)
{
	JsonbIterator *it = JsonbIteratorInit(&doc->root);
	JsonbParseState *ps = NULL;
	JsonbValue	v;
	JsonbValue *res = NULL;
	JsonbIteratorToken tok;

	while ((tok = JsonbIteratorNext(&it, &v, false)) != WJB_DONE)
	{
		if ((tok == WJB_VALUE || tok == WJB_ELEM) && v.type == jbvNumeric)
			v.val.numeric = ddb_number_normalize(v.val.numeric);
		res = pushJsonbValue(&ps, tok, tok < WJB_BEGIN_ARRAY ? &v : NULL);
	}
	return JsonbValueToJsonb(res);
}

/*
 * ddb_validate_item without building the item: the same checks, in the same
 * order, by ddb_item_from_jsonb's checking mode (one walk that adds up the
 * size as DynamoDB counts it), for writers that keep the jsonb (PutItem,
 * UpdateItem's result).  Returns the item to store: 'item' itself, or a
 * copy with its numbers normalized (normalize_numbers).
 */
Jsonb *
ddb_check_item(Jsonb *item)
{
	return ddb_check_item_size_msg(item, DDB_MSG_ITEM_SIZE, NULL);
}

/*
 * ddb_check_item with another message for the size limit
 * (DDB_MSG_UPDATE_ITEM_SIZE), and the size it counted in *size unless that
 * is NULL.
 */
Jsonb *
ddb_check_item_size_msg(Jsonb *item, const char *message, int64 *size)
{
	DocWalk		walk = {0};

	if (!JB_ROOT_IS_OBJECT(item))
		validation_error("ValidationException: " DDB_MSG_DOC_NOT_OBJECT);
	map_from_container(&item->root, 0, &walk, false);
	if (walk.empty_name)
		validation_error("ValidationException: " DDB_MSG_EMPTY_ATTRIBUTE_NAME);
#ifdef DDB_CHECKS
	DdbCheck(walk.size == ddb_item_size(ddb_item_from_jsonb(item)));
#endif
	check_size(walk.size, message);
	if (size != NULL)
		*size = walk.size;
	return walk.unnormalized ? normalize_numbers(item) : item;
}

/*
 * Validation for the item column of a row written by plain SQL (INSERT,
 * COPY, UPDATE, MERGE): the item without its key attributes, whose names
 * and values the caller passes (the table's key columns).  The rules are
 * ddb_validate_item's, run by the same code, so plain SQL stores nothing
 * the item API would refuse; one rule is added: no attribute of the item
 * column is named like a key attribute, as the key columns are the one
 * place a key lives (see README "Writing with plain SQL").  The size limit
 * counts the key attributes, as DynamoDB counts them in every item.
 * Returns the item column to store: 'itemcol', or a copy with its numbers
 * normalized, as ddb_check_item's.
 */
Jsonb *
ddb_validate_item_column(Jsonb *itemcol, int nkeys, const char *const *keynames,
						 DdbValue *const *keyvalues)
{
	DocWalk		walk = {0};

	if (!JB_ROOT_IS_OBJECT(itemcol))
		validation_error("ValidationException: " DDB_MSG_DOC_NOT_OBJECT);
	/* a key-named attribute first: the cheapest check, and the likeliest */
	for (int k = 0; k < nkeys; k++)
		if (getKeyJsonValueFromContainer(&itemcol->root, keynames[k],
										 strlen(keynames[k]), NULL) != NULL)
			ereport(ERROR,
					(errcode(DDB_ERRCODE_VALIDATION),
					 errmsg("ValidationException: " DDB_MSG_ITEM_COLUMN_KEY, keynames[k]),
					 errdetail("The key columns hold the key attributes; the item column holds the other attributes."),
					 errhint("Leave the attribute out of the item column, e.g. item - '%s'.",
							 keynames[k])));
	/* ddb_item_from_jsonb's checks, in its checking mode: one walk */
	map_from_container(&itemcol->root, 0, &walk, false);
	if (walk.empty_name)
		validation_error("ValidationException: " DDB_MSG_EMPTY_ATTRIBUTE_NAME);
#ifdef DDB_CHECKS
	DdbCheck(walk.size == ddb_item_size(ddb_item_from_jsonb(itemcol)));
#endif
	for (int k = 0; k < nkeys; k++)
		walk.size += strlen(keynames[k]) + ddb_value_size(keyvalues[k]);
	check_size(walk.size, DDB_MSG_ITEM_SIZE);
	return walk.unnormalized ? normalize_numbers(itemcol) : itemcol;
}

/* "{N:5}" / "{S:abc}" -- how DynamoDB shows values in error messages */
char *
ddb_value_describe(DdbValue *v)
{
	StringInfoData buf;

	initStringInfo(&buf);
	switch (v->type)
	{
		case DDB_TYPE_S:
			appendStringInfo(&buf, "{S:%.*s}", Min(v->u.str.len, 64), v->u.str.data);
			break;
		case DDB_TYPE_N:
			appendStringInfo(&buf, "{N:%s}", numeric_normalize(v->u.num));
			break;
		default:
			appendStringInfo(&buf, "{%s}", ddb_type_name(v->type));
			break;
	}
	return buf.data;
}

/* ------------------------------------------------------------------------
 * SQL interface
 * ------------------------------------------------------------------------
 */
Datum
ddb_to_typed_json(PG_FUNCTION_ARGS)
{
	Jsonb	   *item = PG_GETARG_JSONB_P(0);

	PG_RETURN_JSONB_P(ddb_item_to_typed_jsonb(ddb_item_from_jsonb(item)));
}

Datum
ddb_from_typed_json(PG_FUNCTION_ARGS)
{
	Jsonb	   *item = PG_GETARG_JSONB_P(0);

	PG_RETURN_JSONB_P(ddb_item_to_jsonb(ddb_item_from_typed_jsonb(item)));
}

Datum
ddb_item_size_sql(PG_FUNCTION_ARGS)
{
	Jsonb	   *item = PG_GETARG_JSONB_P(0);
	int64		size = ddb_item_size(ddb_item_from_jsonb(item));

	PG_RETURN_INT32((int32) Min(size, PG_INT32_MAX));
}

Datum
ddb_validate_item_sql(PG_FUNCTION_ARGS)
{
	(void) ddb_validate_item(PG_GETARG_JSONB_P(0));
	PG_RETURN_VOID();
}
