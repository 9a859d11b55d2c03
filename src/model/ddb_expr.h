/*-------------------------------------------------------------------------
 *
 * ddb_expr.h
 *	  ddb: DynamoDB's item model and expression language over jsonb.
 *
 * Three layers, one file each:
 *
 *	ddb_types.c      the item model: document-form jsonb <-> DdbValue trees,
 *	                 DynamoDB typed JSON, validation, item size
 *	ddb_expr_parse.c tokenizer and recursive-descent parser for condition,
 *	                 key condition, filter, update and projection expressions,
 *	                 placeholder resolution and DynamoDB's static validation
 *	ddb_expr_eval.c  evaluation of parsed expressions against items, and the
 *	                 SQL-callable wrappers
 *
 * Document form (what items look like in SQL):
 *	S -> JSON string      N -> JSON number    BOOL -> true/false   NULL -> null
 *	L -> JSON array       M -> JSON object
 *	B  -> {"$B": "<base64>"}          SS -> {"$SS": ["a", "b"]}
 *	NS -> {"$NS": [1, 2.5]}           BS -> {"$BS": ["<base64>", ...]}
 *	{"$M": {...}} is a map written literally: it escapes a map whose only key
 *	is one of the five tag names, so every value has exactly one spelling.
 * An item is a JSON object of attributes (its top level is never a tag).
 *
 * Usage for one request (all memory in CurrentMemoryContext):
 *
 *		cx = ddb_expr_begin(names, vals);
 *		cond = ddb_parse_condition(cx, text, "ConditionExpression");
 *		upd = ddb_parse_update(cx, text);
 *		ddb_expr_end(cx);		-- unused placeholders are an error
 *		if (!ddb_eval_condition(cond, olditem)) ...
 *		newitem = ddb_apply_update(upd, olditem, keys, nkeys, NULL, NULL);
 *
 * All errors are ERRORs with SQLSTATE DDB_ERRCODE_VALIDATION and a message
 * "ValidationException: " followed by DynamoDB's text (ddb_errors.h).
 *
 * Memory: parse trees (and the values they hold) live in the context that
 * was current at ddb_expr_begin/ddb_parse_*; keep it alive while you
 * evaluate.  Evaluation allocates in CurrentMemoryContext and frees
 * nothing, so a loop over many items (a Query filter, say) should evaluate
 * in a per-item context and reset it.  ddb_eval_condition and
 * ddb_apply_projection expand only the top-level attributes the expression
 * names, so their cost does not grow with the rest of the item; they assume
 * stored items are valid and validate only what they read.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DDB_EXPR_H
#define DDB_EXPR_H

#include "utils/jsonb.h"
#include "utils/numeric.h"

/* DynamoDB's limits that belong to the item model and the expressions. */
#define DDB_MAX_EXPRESSION_BYTES	4096	/* per expression */
#define DDB_MAX_NESTING_DEPTH		32		/* levels of L/M nesting */
#define DDB_MAX_NUMBER_DIGITS		38		/* significant digits of N */
#define DDB_MAX_IN_OPERANDS			100		/* values in IN's list */
#define DDB_MAX_ATTRIBUTE_NAME_BYTES 65535	/* any attribute name */

/* ------------------------------------------------------------------------
 * The item model (ddb_types.c)
 * ------------------------------------------------------------------------
 */
typedef enum DdbType
{
	DDB_TYPE_S,
	DDB_TYPE_N,
	DDB_TYPE_B,
	DDB_TYPE_BOOL,
	DDB_TYPE_NULL,
	DDB_TYPE_L,
	DDB_TYPE_M,
	DDB_TYPE_SS,
	DDB_TYPE_NS,
	DDB_TYPE_BS
} DdbType;

/*
 * One attribute value, fully expanded.  Lists and sets share the "list"
 * arm (a set's elements are S, N or B values without duplicates); maps keep
 * their attributes in insertion order with unique names.
 */
typedef struct DdbValue DdbValue;
struct DdbValue
{
	DdbType		type;
	union
	{
		struct
		{
			char	   *data;
			int			len;
		}			str;		/* S (UTF-8 bytes) and B (raw bytes) */
		Numeric		num;		/* N */
		bool		boolean;	/* BOOL */
		struct
		{
			DdbValue  **elems;
			int			n;
			int			cap;
		}			list;		/* L, SS, NS, BS */
		struct
		{
			char	  **keys;	/* NUL-terminated UTF-8 attribute names */
			DdbValue  **vals;
			int			n;
			int			cap;
		}			map;		/* M (and a whole item) */
	}			u;
};

#define ddb_type_is_set(t)	((t) == DDB_TYPE_SS || (t) == DDB_TYPE_NS || (t) == DDB_TYPE_BS)

extern const char *ddb_type_name(DdbType type);	/* "S", "N", ..., "BS" */
extern bool ddb_type_from_name(const char *name, int len, DdbType *type);

/* Document-form jsonb <-> DdbValue.  Both validate (ValidationException). */
extern DdbValue *ddb_item_from_jsonb(Jsonb *item);
extern DdbValue *ddb_value_from_jsonb(Jsonb *value);	/* any value, not only items */
extern DdbValue *ddb_value_from_jbv(JsonbValue *value);
extern Jsonb *ddb_item_to_jsonb(DdbValue *item);

/* DynamoDB typed JSON ({"a": {"S": "x"}}) <-> DdbValue. */
extern DdbValue *ddb_item_from_typed_jsonb(Jsonb *item);
extern Jsonb *ddb_item_to_typed_jsonb(DdbValue *item);

/*
 * Validation for the put path: every value well-typed (tags, base64, number
 * limits, set rules, nesting depth) and the item within DDB_MAX_ITEM_BYTES.
 * Returns the parsed item so callers need not parse twice.
 * ddb_check_item: the same checks without the parsed item, for writers
 * that store the jsonb; ddb_validate_item_column: the same for the item
 * column of a plain SQL write, whose key attributes are the key columns
 * (ddb_tuple.c).  These two return the jsonb to store: the one given, or
 * a copy whose numbers are written as DynamoDB gives them back (1.50 is
 * 1.5, 0.0 is 0; ddb_number_normalize), so every read returns them so.
 */
extern DdbValue *ddb_validate_item(Jsonb *item);
extern Jsonb *ddb_check_item(Jsonb *item);
extern Jsonb *ddb_check_item_size_msg(Jsonb *item, const char *message, int64 *size);
extern Jsonb *ddb_validate_item_column(Jsonb *itemcol, int nkeys,
									   const char *const *keynames,
									   DdbValue *const *keyvalues);
extern void ddb_check_item_size(DdbValue *item, const char *message);
extern void ddb_check_item_depth(DdbValue *item);

/* DynamoDB's item size (bytes), and the size of one value without a name. */
extern int64 ddb_item_size(DdbValue *item);
extern int64 ddb_value_size(DdbValue *value);

/* Raise DynamoDB's errors for a number outside N's precision or range. */
extern void ddb_check_number(Numeric num);
extern void ddb_check_number_result(Numeric num);
extern Numeric ddb_number_normalize(Numeric num);	/* trailing zeros trimmed */
extern void ddb_value_normalize_numbers(DdbValue *v);
#ifdef DDB_CHECKS
extern void ddb_types_checks_init(void);
#endif

/* Raise DynamoDB's error for an attribute name over 65,535 bytes. */
extern void ddb_check_attribute_name(const char *name);

/* Construction and comparison. */
extern DdbValue *ddb_value_new(DdbType type);
extern DdbValue *ddb_value_copy(DdbValue *v);
extern void ddb_list_append(DdbValue *list, DdbValue *elem);
extern DdbValue *ddb_map_get(DdbValue *map, const char *key);
extern void ddb_map_put(DdbValue *map, const char *key, DdbValue *val);
extern bool ddb_map_remove(DdbValue *map, const char *key);
extern bool ddb_value_equal(DdbValue *a, DdbValue *b);
extern bool ddb_items_equal(Jsonb *a, Jsonb *b);
extern int	ddb_scalar_cmp(DdbValue *a, DdbValue *b);	/* S, N, B of one type */
extern bool ddb_set_contains(DdbValue *set, DdbValue *elem);
extern char *ddb_value_describe(DdbValue *v);	/* "{N:5}" style, for errors */

/* ------------------------------------------------------------------------
 * Parse trees (ddb_expr_parse.c).  Exposed so the query layer can inspect
 * a KeyConditionExpression.
 * ------------------------------------------------------------------------
 */

/* A document path: a.b[2].c is [name a, name b, index 2, name c]. */
typedef enum DdbPathElemKind
{
	DDB_PATH_NAME,
	DDB_PATH_INDEX
} DdbPathElemKind;

typedef struct DdbPathElem
{
	DdbPathElemKind kind;
	char	   *name;			/* DDB_PATH_NAME: resolved attribute name */
	int			index;			/* DDB_PATH_INDEX */
} DdbPathElem;

typedef struct DdbPath
{
	int			nelems;
	DdbPathElem *elems;
} DdbPath;

typedef enum DdbOperandKind
{
	DDB_OPERAND_PATH,			/* path */
	DDB_OPERAND_VALUE,			/* :value, already converted */
	DDB_OPERAND_SIZE,			/* size(path) or size(:value, in left) -- conditions only */
	DDB_OPERAND_IF_NOT_EXISTS,	/* if_not_exists(path, arg) -- SET only */
	DDB_OPERAND_LIST_APPEND,	/* list_append(left, right) -- SET only */
	DDB_OPERAND_PLUS,			/* left + right -- SET only */
	DDB_OPERAND_MINUS			/* left - right -- SET only */
} DdbOperandKind;

typedef struct DdbOperand DdbOperand;
struct DdbOperand
{
	DdbOperandKind kind;
	DdbPath    *path;			/* PATH, SIZE of a path, IF_NOT_EXISTS */
	DdbValue   *value;			/* VALUE */
	const char *placeholder;	/* VALUE: ":v" as written */
	DdbOperand *left;			/* SIZE of a value, IF_NOT_EXISTS (default),
								 * LIST_APPEND, PLUS, MINUS */
	DdbOperand *right;			/* LIST_APPEND, PLUS, MINUS */
};

typedef enum DdbCondKind
{
	DDB_COND_COMPARE,			/* args[0] op args[1] */
	DDB_COND_BETWEEN,			/* args[0] BETWEEN args[1] AND args[2] */
	DDB_COND_IN,				/* args[0] IN (args[1], ..., args[nargs-1]) */
	DDB_COND_AND,				/* left AND right */
	DDB_COND_OR,				/* left OR right */
	DDB_COND_NOT,				/* NOT left */
	DDB_COND_ATTRIBUTE_EXISTS,	/* attribute_exists(args[0]), a PATH */
	DDB_COND_ATTRIBUTE_NOT_EXISTS,	/* attribute_not_exists(args[0]), a PATH */
	DDB_COND_ATTRIBUTE_TYPE,	/* attribute_type(args[0], args[1] a VALUE) */
	DDB_COND_BEGINS_WITH,		/* begins_with(args[0], args[1]) */
	DDB_COND_CONTAINS			/* contains(args[0], args[1]) */
} DdbCondKind;

typedef enum DdbCompareOp
{
	DDB_CMP_EQ,
	DDB_CMP_NE,
	DDB_CMP_LT,
	DDB_CMP_LE,
	DDB_CMP_GT,
	DDB_CMP_GE
} DdbCompareOp;

typedef struct DdbCondition DdbCondition;
struct DdbCondition
{
	DdbCondKind kind;
	DdbCompareOp op;			/* DDB_COND_COMPARE */
	int			nargs;
	DdbOperand **args;
	DdbCondition *left;			/* AND, OR, NOT */
	DdbCondition *right;		/* AND, OR */
	DdbType		type_arg;		/* ATTRIBUTE_TYPE: the type named by args[1] */
};

typedef enum DdbUpdateActionKind
{
	DDB_UPDATE_SET,
	DDB_UPDATE_REMOVE,
	DDB_UPDATE_ADD,
	DDB_UPDATE_DELETE
} DdbUpdateActionKind;

typedef struct DdbUpdateAction
{
	DdbUpdateActionKind kind;
	DdbPath    *path;			/* the target */
	DdbOperand *value;			/* SET: the value; ADD/DELETE: a VALUE operand */
} DdbUpdateAction;

typedef struct DdbUpdate
{
	int			nactions;
	DdbUpdateAction *actions;	/* in the order written */
	bool		legacy;			/* translated from AttributeUpdates: a value
								 * of the wrong type is DynamoDB's "Type
								 * mismatch for attribute to update" */
} DdbUpdate;

typedef struct DdbProjection
{
	int			npaths;
	DdbPath   **paths;
} DdbProjection;

/* One request's placeholders and their usage; opaque. */
typedef struct DdbExprContext DdbExprContext;

extern DdbExprContext *ddb_expr_begin(Jsonb *names, Jsonb *vals);
extern bool ddb_value_error_frameable(ErrorData *edata);
extern void ddb_raise_value_error(ErrorData *edata, const char *key) pg_attribute_noreturn();
extern DdbCondition *ddb_parse_condition(DdbExprContext *cx, const char *text,
										 const char *what);
extern DdbUpdate *ddb_parse_update(DdbExprContext *cx, const char *text);
extern DdbProjection *ddb_parse_projection(DdbExprContext *cx, const char *text);
extern void ddb_expr_end(DdbExprContext *cx);

/*
 * A KeyConditionExpression, checked against DynamoDB's rules and reduced to
 * what a Query needs: partition key = value, and at most one condition on
 * the sort key.  Only = < <= > >= BETWEEN begins_with and AND are allowed,
 * each comparing one key attribute with values; a comparison may put the
 * value first (":v < sk" is reduced to sk > :v).
 */
typedef struct DdbKeyCondition
{
	DdbValue   *pk_value;		/* partition key = pk_value */
	bool		has_sk;			/* is there a sort-key condition? */
	DdbCondKind sk_kind;		/* DDB_COND_COMPARE, _BETWEEN or _BEGINS_WITH */
	DdbCompareOp sk_op;			/* DDB_COND_COMPARE: EQ, LT, LE, GT or GE */
	DdbValue   *sk_value;		/* the operand; BETWEEN's lower bound */
	DdbValue   *sk_value2;		/* BETWEEN's upper bound */
} DdbKeyCondition;

extern void ddb_analyze_key_condition(DdbCondition *cond, const char *pk_name,
									  const char *sk_name, DdbKeyCondition *out);

extern char *ddb_path_to_string(DdbPath *path);	/* "[a, b, [2]]" as DynamoDB prints */
extern bool ddb_is_reserved_word(const char *word, int len);

/* ------------------------------------------------------------------------
 * Evaluation (ddb_expr_eval.c)
 * ------------------------------------------------------------------------
 */
extern DdbValue *ddb_path_get(DdbValue *item, DdbPath *path);

/*
 * Evaluate a condition (ConditionExpression, FilterExpression).  item NULL =
 * no item: attribute_not_exists() is true and comparisons with paths are
 * false (<>, true).  Never raises for type mismatches: they compare false.
 */
extern bool ddb_eval_condition(DdbCondition *cond, Jsonb *item);
extern bool ddb_eval_condition_value(DdbCondition *cond, DdbValue *item);

/*
 * Apply an update.  item NULL = UpdateItem on a missing item (starts from
 * an empty item; the caller adds the key attributes).  key_attrs names the
 * table's key attributes, which no action may target.  *updated_old and
 * *updated_new (either pointer may be NULL) receive DynamoDB's UPDATED_OLD /
 * UPDATED_NEW: the item projected on the paths the update targets, before
 * and after (nested paths keep their hierarchy, as DynamoDB returns them);
 * an empty object when nothing qualifies, where DynamoDB returns no
 * Attributes.  Raises ValidationException for DynamoDB's run-time errors
 * (operand types, invalid paths, number range, 400 KB, 32 levels).
 */
extern Jsonb *ddb_apply_update(DdbUpdate *u, Jsonb *item,
							   const char **key_attrs, int nkey_attrs,
							   Jsonb **updated_old, Jsonb **updated_new);
extern Jsonb *ddb_apply_update_partial(DdbUpdate *u, Jsonb *item,
									   const char **key_attrs, int nkey_attrs,
									   Jsonb **updated_old, Jsonb **updated_new,
									   const char ***touched, int *ntouched);
extern DdbValue *ddb_apply_update_value(DdbUpdate *u, DdbValue *item,
										const char **key_attrs, int nkey_attrs);
extern bool ddb_update_nests_into(DdbUpdate *u, const char *name);
extern bool ddb_condition_nests_into(DdbCondition *c, const char *name);
extern bool ddb_projection_nests_into(DdbProjection *p, const char *name);
extern bool ddb_operand_request_type(DdbOperand *op, DdbType *type);
extern void ddb_update_check_key_attributes(DdbUpdate *u, const char **key_attrs,
											int nkey_attrs);

/*
 * Does UpdateItem on a missing item create it?  Only if some action writes
 * (SET or ADD); an update that only removes or deletes leaves no item, as
 * in DynamoDB.
 */
extern bool ddb_update_creates_item(DdbUpdate *u);

/* ProjectionExpression: the item restricted to the paths, nested as they are */
extern Jsonb *ddb_apply_projection(DdbProjection *p, Jsonb *item);
extern DdbValue *ddb_project_value(DdbPath **paths, int npaths, DdbValue *item);

#endif							/* DDB_EXPR_H */
