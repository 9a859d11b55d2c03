/*-------------------------------------------------------------------------
 *
 * ddb_partiql.c
 *	  DynamoDB's PartiQL operation, ExecuteStatement, as a translation into
 *	  the operations ddb already has.
 *
 * A statement is tokenized and parsed here (a hand-written recursive-
 * descent parser, one function per production) into a small tree, and the
 * tree is written out as the request of one existing operation:
 *
 *	SELECT ... FROM "T"[."I"] WHERE ...	Query when the WHERE's top-level AND
 *										terms give the partition key an
 *										equality (one Query) or an IN list
 *										or OR of equalities (one Query per
 *										value), else Scan
 *	INSERT INTO "T" VALUE {...}			PutItem with attribute_not_exists(pk)
 *	UPDATE "T" SET/REMOVE ... WHERE ...	UpdateItem with attribute_exists(pk)
 *	DELETE FROM "T" WHERE ...			DeleteItem
 *
 * The WHERE clause becomes KeyConditionExpression / FilterExpression /
 * ConditionExpression text with generated placeholders (#n0, :v0, ...),
 * values become typed AttributeValues, and the request goes through
 * ddb_api_execute like any other: the operation's own validation, reads,
 * writes, capacity accounting and error messages are the ones a client of
 * Query or UpdateItem gets.  Nothing here touches a table directly.
 *
 * Paging: a SELECT answers one page (Limit items read, or 1 MB, as the
 * Query or Scan below it).  NextToken is base64 of a small JSON object,
 * the index of the Query under way (for IN lists) and that Query's
 * LastEvaluatedKey, signed with the database's key for the statement and
 * its parameters (ddb_token_sign, as shard iterators are): a token that
 * was edited, or made for another statement, is refused.  ORDER BY over
 * several partition keys names the partition key first, so the Queries
 * run in its order and no partition's items need merging with another's.
 *
 * In ExecuteTransaction, EXISTS(SELECT ...) is a ConditionCheck.  What
 * DynamoDB's PartiQL can say that this cannot (joins, nested SELECTs) is a
 * ValidationException.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "access/relation.h"
#include "access/xact.h"
#include "common/base64.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "utils/elog.h"
#include "utils/builtins.h"
#include "utils/formatting.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "ddb.h"
#include "api/ddb_json.h"
#include "model/ddb_expr.h"
#include "api/ddb_ops.h"
#include "api/ddb_protocol.h"

#define validation_error(...) \
	ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", __VA_ARGS__)

#define PQL_MALFORMED	"Statement wasn't well formed, can't be processed: %s"
#define PQL_KEY_EQUALITY "Where clause does not contain a mandatory equality on all key attributes"
#define PQL_PARAM_COUNT	"Number of parameters in request and statement doesn't match."
#define PQL_DUPLICATE	"Duplicate primary key exists in table"
#define PQL_MAX_STATEMENT 8192
#define PQL_MAX_TOKEN	32768
#define PQL_MAX_IN_KEYS	50		/* ql-operators: IN's partition key values */
#define PQL_MAX_PAGE_BYTES (1024 * 1024)	/* a SELECT's page of items */

/* ------------------------------------------------------------------------
 * Tokens
 * ------------------------------------------------------------------------
 */
typedef enum TokKind
{
	T_EOF,
	T_IDENT,					/* bare identifier or keyword */
	T_QIDENT,					/* "double-quoted" identifier */
	T_STRING,					/* 'single-quoted' string */
	T_NUMBER,
	T_PARAM,					/* ? */
	T_PUNCT						/* operators and punctuation, in text */
} TokKind;

typedef struct Token
{
	TokKind		kind;
	char	   *text;			/* de-quoted for T_QIDENT and T_STRING */
	int			pos;			/* 1-based character position */
} Token;

/* ------------------------------------------------------------------------
 * Parse tree
 * ------------------------------------------------------------------------
 */
typedef enum NodeKind
{
	N_PATH,						/* path: list of PathElem */
	N_VALUE,					/* a literal or a bound parameter */
	N_MISSING,					/* the MISSING literal */
	N_CMP,						/* args[0] op args[1] */
	N_BETWEEN,					/* args[0] BETWEEN args[1] AND args[2] */
	N_IN,						/* args[0] IN (args[1..]) */
	N_AND,
	N_OR,
	N_NOT,
	N_IS,						/* args[0] IS [NOT] MISSING|NULL (op) */
	N_FUNC,						/* op(args) */
	N_ARITH						/* args[0] op args[1], op + or - (SET only) */
} NodeKind;

typedef struct PathElem
{
	char	   *name;			/* NULL: a list index */
	char	   *index;			/* its digits (the expression parser checks the range) */
} PathElem;

typedef struct PqlValue
{
	const char *type;			/* "S", "N", "M", "SS", ... */
	char	   *json;			/* the typed AttributeValue as JSON text */
	char	   *scalar;			/* S, N, B: the JSON of the bare value */
	DdbValue   *parsed;			/* the value, once made (parsed_value) */
} PqlValue;

typedef struct PNode
{
	NodeKind	kind;
	const char *op;
	bool		negated;
	List	   *path;
	PqlValue   *value;
	List	   *args;
	int			pos;
} PNode;

typedef enum StmtKind
{
	STMT_SELECT,
	STMT_INSERT,
	STMT_UPDATE,
	STMT_DELETE,
	STMT_EXISTS					/* EXISTS(SELECT ...): a transaction's check */
} StmtKind;

typedef struct SetClause
{
	char		action;			/* 'S' SET, 'R' REMOVE, 'A' ADD, 'D' DELETE */
	PNode	   *target;
	PNode	   *value;
} SetClause;

typedef struct OrderKey
{
	char	   *name;
	bool		desc;
} OrderKey;

typedef struct Statement
{
	StmtKind	kind;
	char	   *table;
	char	   *index;
	List	   *projection;		/* SELECT: paths; NIL: * */
	PNode	   *where;
	List	   *order;			/* SELECT: OrderKey */
	PqlValue   *item;			/* INSERT */
	List	   *sets;			/* UPDATE: SetClause */
	const char *returning;		/* ReturnValues, or NULL */
} Statement;

typedef struct Parser
{
	Token	   *toks;
	int			ntoks;
	int			pos;
	DdbJson    *params;			/* the request's Parameters, or NULL */
	int			nextparam;
	int			depth;			/* lists and maps open around the value parsed */
} Parser;

/* ------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------
 */
static void malformed(Parser *ps, Token *t) pg_attribute_noreturn();

static void
malformed(Parser *ps, Token *t)
{
	if (t->kind == T_EOF)
		validation_error(PQL_MALFORMED, "unexpected end of statement");
	validation_error(PQL_MALFORMED,
					 psprintf("unexpected %s '%s' at position %d",
							  t->kind == T_STRING ? "string" :
							  t->kind == T_NUMBER ? "number" :
							  t->kind == T_PUNCT ? "token" : "identifier",
							  t->text, t->pos));
}

static void unsupported(const char *what) pg_attribute_noreturn();

static void
unsupported(const char *what)
{
	validation_error("Unsupported operation: %s is not supported by ddb's ExecuteStatement", what);
}

/* ------------------------------------------------------------------------
 * Tokenizer
 * ------------------------------------------------------------------------
 */
static Token *
tokenize(const char *s, int *ntoks)
{
	int			cap = 32;
	int			n = 0;
	Token	   *toks = palloc(cap * sizeof(Token));
	int			i = 0;
	int			len = strlen(s);
	int			counted = 0;	/* bytes of s counted into chars */
	int			chars = 0;

	for (;;)
	{
		Token	   *t;
		StringInfoData buf;

		while (i < len && isspace((unsigned char) s[i]))
			i++;
		if (n + 1 >= cap)
		{
			cap *= 2;
			toks = repalloc(toks, cap * sizeof(Token));
		}
		t = &toks[n++];
		/* positions count characters, as a client sees them, not bytes */
		chars += pg_mbstrlen_with_len(s + counted, i - counted);
		counted = i;
		t->pos = chars + 1;
		if (i >= len)
		{
			t->kind = T_EOF;
			t->text = "";
			break;
		}
		initStringInfo(&buf);
		if (isalpha((unsigned char) s[i]) || s[i] == '_')
		{
			while (i < len && (isalnum((unsigned char) s[i]) || s[i] == '_' || s[i] == '$'))
				appendStringInfoChar(&buf, s[i++]);
			t->kind = T_IDENT;
		}
		else if (s[i] == '"' || s[i] == '\'')
		{
			char		q = s[i++];

			for (;;)
			{
				if (i >= len)
					validation_error(PQL_MALFORMED,
									 psprintf("unterminated %s at position %d",
											  q == '"' ? "quoted identifier" : "string",
											  t->pos));
				if (s[i] == q)
				{
					if (i + 1 < len && s[i + 1] == q)
					{
						appendStringInfoChar(&buf, q);
						i += 2;
						continue;
					}
					i++;
					break;
				}
				appendStringInfoChar(&buf, s[i++]);
			}
			t->kind = q == '"' ? T_QIDENT : T_STRING;
			if (q == '"' && buf.len == 0)
				validation_error(PQL_MALFORMED,
								 psprintf("empty quoted identifier at position %d", t->pos));
		}
		else if (isdigit((unsigned char) s[i]) ||
				 (s[i] == '.' && i + 1 < len && isdigit((unsigned char) s[i + 1])))
		{
			while (i < len && isdigit((unsigned char) s[i]))
				appendStringInfoChar(&buf, s[i++]);
			if (i < len && s[i] == '.')
			{
				appendStringInfoChar(&buf, s[i++]);
				while (i < len && isdigit((unsigned char) s[i]))
					appendStringInfoChar(&buf, s[i++]);
			}
			if (i < len && (s[i] == 'e' || s[i] == 'E'))
			{
				appendStringInfoChar(&buf, s[i++]);
				if (i < len && (s[i] == '+' || s[i] == '-'))
					appendStringInfoChar(&buf, s[i++]);
				while (i < len && isdigit((unsigned char) s[i]))
					appendStringInfoChar(&buf, s[i++]);
			}
			t->kind = T_NUMBER;
		}
		else if (s[i] == '?')
		{
			appendStringInfoChar(&buf, s[i++]);
			t->kind = T_PARAM;
		}
		else
		{
			static const char *const two[] = {"<>", "!=", "<=", ">=", "<<", ">>", NULL};
			static const char one[] = "=<>()[]{},.:*+-;";
			bool		found = false;

			for (int k = 0; two[k]; k++)
				if (i + 1 < len && s[i] == two[k][0] && s[i + 1] == two[k][1])
				{
					appendStringInfoString(&buf, two[k]);
					i += 2;
					found = true;
					break;
				}
			if (!found)
			{
				if (strchr(one, s[i]) == NULL || s[i] == '\0')
					validation_error(PQL_MALFORMED,
									 psprintf("unexpected character '%.*s' at position %d",
											  Min(pg_mblen(s + i), len - i), s + i, t->pos));
				appendStringInfoChar(&buf, s[i++]);
			}
			t->kind = T_PUNCT;
		}
		t->text = buf.data;
	}
	*ntoks = n;
	return toks;
}

/* ------------------------------------------------------------------------
 * Parser helpers
 * ------------------------------------------------------------------------
 */
static Token *
peek(Parser *ps, int ahead)
{
	int			i = Min(ps->pos + ahead, ps->ntoks - 1);

	return &ps->toks[i];
}

static Token *
next(Parser *ps)
{
	Token	   *t = peek(ps, 0);

	if (ps->pos < ps->ntoks - 1)
		ps->pos++;
	return t;
}

static bool
is_kw(Token *t, const char *kw)
{
	return t->kind == T_IDENT && pg_strcasecmp(t->text, kw) == 0;
}

static bool
is_punct(Token *t, const char *p)
{
	return t->kind == T_PUNCT && strcmp(t->text, p) == 0;
}

static bool
accept_kw(Parser *ps, const char *kw)
{
	if (!is_kw(peek(ps, 0), kw))
		return false;
	next(ps);
	return true;
}

static bool
accept_punct(Parser *ps, const char *p)
{
	if (!is_punct(peek(ps, 0), p))
		return false;
	next(ps);
	return true;
}

static void
expect_kw(Parser *ps, const char *kw)
{
	if (!accept_kw(ps, kw))
		malformed(ps, peek(ps, 0));
}

static void
expect_punct(Parser *ps, const char *p)
{
	if (!accept_punct(ps, p))
		malformed(ps, peek(ps, 0));
}

/* Words that end or join clauses: never a bare attribute name. */
static bool
reserved(Token *t)
{
	static const char *const words[] = {
		"and", "or", "not", "between", "in", "is", "from", "where", "order", "by",
		"set", "remove", "returning", "select", "insert", "update", "delete",
		"into", "value", "values", "join", "inner", "left", "right", "outer",
		"cross", "on", "group", "having", "limit", "offset", "union", "intersect",
		"except", "null", "missing", "true", "false", "asc", "desc", "exists", NULL
	};

	if (t->kind != T_IDENT)
		return false;
	for (int i = 0; words[i]; i++)
		if (pg_strcasecmp(t->text, words[i]) == 0)
			return true;
	return false;
}

static PNode *
make_node(NodeKind kind, int pos)
{
	PNode	   *n = palloc0(sizeof(PNode));

	n->kind = kind;
	n->pos = pos;
	return n;
}

/* An identifier (bare or quoted), or a syntax error. */
static char *
identifier(Parser *ps)
{
	Token	   *t = peek(ps, 0);

	if (t->kind == T_QIDENT || (t->kind == T_IDENT && !reserved(t)))
		return next(ps)->text;
	malformed(ps, t);
}

/* ------------------------------------------------------------------------
 * Values: literals and parameters, as typed AttributeValue JSON text
 * ------------------------------------------------------------------------
 */

static char *
json_text(DdbJson *j)
{
	StringInfoData buf;

	if (j == NULL)
		return "null";
	initStringInfo(&buf);
	ddb_json_write_json(&buf, j);
	return buf.data;
}

/* A copy of j (NULL: NULL) in the current memory context. */
static DdbJson *
json_copy(DdbJson *j)
{
	char	   *text;

	if (j == NULL)
		return NULL;
	text = json_text(j);
	return ddb_json_parse(text, strlen(text));
}

static char *
json_text_key(const char *s, int len)
{
	StringInfoData buf;

	initStringInfo(&buf);
	ddb_json_string(&buf, s, len);
	return buf.data;
}

static PqlValue *
scalar_value(const char *type, const char *scalar_json)
{
	PqlValue   *v = palloc0(sizeof(PqlValue));

	v->type = type;
	v->scalar = pstrdup(scalar_json);
	v->json = psprintf("{\"%s\":%s}", type, scalar_json);
	return v;
}

static PqlValue *
string_value(const char *s)
{
	StringInfoData buf;

	initStringInfo(&buf);
	ddb_json_string(&buf, s, strlen(s));
	return scalar_value("S", buf.data);
}

/*
 * Levels of lists and maps a value may nest in a statement: an attribute
 * value's DDB_MAX_NESTING_DEPTH, and the INSERT's item around its values.
 * Deeper is refused here, as the item or ExpressionAttributeValues check
 * would refuse it: the request the statement becomes holds the value in
 * JSON nested twice as deep, which the protocol's parser refuses past its
 * own depth as a request body that nests too deeply (a
 * SerializationException of a body the client never sent, which also
 * failed a whole BatchExecuteStatement for one statement).
 */
#define PQL_MAX_VALUE_DEPTH (DDB_MAX_NESTING_DEPTH + 1)

static void
check_value_depth(int depth)
{
	if (depth > PQL_MAX_VALUE_DEPTH)
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: " DDB_MSG_NESTING),
				 errdetail("Lists and maps nest at most %d levels deep.",
						   DDB_MAX_NESTING_DEPTH)));
}

/* The next Parameters element, checked as an AttributeValue. */
static PqlValue *
param_value(Parser *ps)
{
	DdbJson    *j = ps->params->elems[ps->nextparam++];
	PqlValue   *v = palloc0(sizeof(PqlValue));

	v->parsed = ddb_typed_value(j); /* DynamoDB's checks and messages */
	/* (its one member that is not null: the checks made sure of it) */
	for (int i = 0; i < j->n; i++)
	{
		if (j->elems[i]->type == DDB_JSON_NULL)
			continue;
		v->type = pstrdup(j->keys[i]);
		v->json = psprintf("{%s:%s}", json_text_key(j->keys[i], j->keylens[i]),
						   json_text(j->elems[i]));
		if (strcmp(v->type, "S") == 0 || strcmp(v->type, "N") == 0 ||
			strcmp(v->type, "B") == 0)
			v->scalar = json_text(j->elems[i]);
	}
	return v;
}

static PNode *parse_value_node(Parser *ps);
static DdbValue *parsed_value(PqlValue *v);

/* A value that must be a value (not MISSING). */
static PqlValue *
parse_value(Parser *ps)
{
	Token	   *t = peek(ps, 0);
	PNode	   *n = parse_value_node(ps);

	if (n == NULL || n->kind != N_VALUE)
		malformed(ps, t);
	return n->value;
}

/* A literal, a parameter or MISSING; NULL (nothing consumed) if none. */
static PNode *
parse_value_node(Parser *ps)
{
	Token	   *t = peek(ps, 0);
	PNode	   *n;
	StringInfoData buf;

	/* [..], {..} and <<..>> nest: each level comes back here */
	check_stack_depth();
	n = make_node(N_VALUE, t->pos);
	initStringInfo(&buf);
	if (t->kind == T_STRING)
	{
		next(ps);
		n->value = string_value(t->text);
	}
	else if (t->kind == T_NUMBER ||
			 (is_punct(t, "-") && peek(ps, 1)->kind == T_NUMBER))
	{
		if (is_punct(t, "-"))
		{
			next(ps);
			appendStringInfoChar(&buf, '-');
		}
		appendStringInfoString(&buf, next(ps)->text);
		n->value = scalar_value("N", psprintf("\"%s\"", buf.data));
		/*
		 * Checked here, as a parameter is (DynamoDB's messages, the first
		 * bad number of the statement): not later as the ExpressionAttributeValues
		 * of the request the statement becomes, whose message would name
		 * a placeholder the statement does not have.
		 */
		(void) parsed_value(n->value);
	}
	else if (t->kind == T_PARAM)
	{
		next(ps);
		n->value = param_value(ps);
	}
	else if (is_kw(t, "true") || is_kw(t, "false"))
	{
		next(ps);
		n->value = palloc0(sizeof(PqlValue));
		n->value->type = "BOOL";
		n->value->json = is_kw(t, "true") ? "{\"BOOL\":true}" : "{\"BOOL\":false}";
	}
	else if (is_kw(t, "null"))
	{
		next(ps);
		n->value = palloc0(sizeof(PqlValue));
		n->value->type = "NULL";
		n->value->json = "{\"NULL\":true}";
	}
	else if (is_kw(t, "missing"))
	{
		next(ps);
		n->kind = N_MISSING;
	}
	else if (is_punct(t, "{"))
	{
		/* a map: {'name': value, ...}, each name once */
		List	   *names = NIL;

		next(ps);
		check_value_depth(++ps->depth);
		appendStringInfoString(&buf, "{\"M\":{");
		if (!is_punct(peek(ps, 0), "}"))
		{
			do
			{
				Token	   *k = next(ps);
				ListCell   *lc;

				if (k->kind != T_STRING)
					malformed(ps, k);
				foreach(lc, names)
					if (strcmp(lfirst(lc), k->text) == 0)
					validation_error(PQL_MALFORMED,
									 psprintf("duplicate name '%s' in a map at position %d",
											  k->text, k->pos));
				names = lappend(names, k->text);
				if (buf.data[buf.len - 1] != '{')
					appendStringInfoChar(&buf, ',');
				ddb_json_string(&buf, k->text, strlen(k->text));
				expect_punct(ps, ":");
				appendStringInfoChar(&buf, ':');
				appendStringInfoString(&buf, parse_value(ps)->json);
			} while (accept_punct(ps, ","));
		}
		expect_punct(ps, "}");
		ps->depth--;
		appendStringInfoString(&buf, "}}");
		n->value = palloc0(sizeof(PqlValue));
		n->value->type = "M";
		n->value->json = buf.data;
	}
	else if (is_punct(t, "["))
	{
		next(ps);
		check_value_depth(++ps->depth);
		appendStringInfoString(&buf, "{\"L\":[");
		if (!is_punct(peek(ps, 0), "]"))
		{
			do
			{
				if (buf.data[buf.len - 1] != '[')
					appendStringInfoChar(&buf, ',');
				appendStringInfoString(&buf, parse_value(ps)->json);
			} while (accept_punct(ps, ","));
		}
		expect_punct(ps, "]");
		ps->depth--;
		appendStringInfoString(&buf, "]}");
		n->value = palloc0(sizeof(PqlValue));
		n->value->type = "L";
		n->value->json = buf.data;
	}
	else if (is_punct(t, "<<"))
	{
		/* a set: every element a string, or a number, or a binary */
		const char *elemtype = NULL;

		next(ps);
		appendStringInfoChar(&buf, '[');
		if (!is_punct(peek(ps, 0), ">>"))
		{
			do
			{
				Token	   *et = peek(ps, 0);
				PqlValue   *e = parse_value(ps);

				if (e->scalar == NULL || (elemtype && strcmp(elemtype, e->type) != 0))
					validation_error(PQL_MALFORMED,
									 psprintf("the elements of a set must all be strings, all numbers or all binaries (position %d)",
											  et->pos));
				elemtype = e->type;
				if (buf.len > 1)
					appendStringInfoChar(&buf, ',');
				appendStringInfoString(&buf, e->scalar);
			} while (accept_punct(ps, ","));
		}
		expect_punct(ps, ">>");
		appendStringInfoChar(&buf, ']');
		n->value = palloc0(sizeof(PqlValue));
		n->value->type = psprintf("%sS", elemtype ? elemtype : "S");
		n->value->json = psprintf("{\"%s\":%s}", n->value->type, buf.data);
	}
	else
		return NULL;
	return n;
}

/* ------------------------------------------------------------------------
 * Expressions
 * ------------------------------------------------------------------------
 */
static PNode *parse_or(Parser *ps);

/* path: name ( '.' name | '[' n ']' )* */
static PNode *
parse_path(Parser *ps)
{
	PNode	   *n = make_node(N_PATH, peek(ps, 0)->pos);
	PathElem   *e = palloc0(sizeof(PathElem));

	e->name = identifier(ps);
	n->path = list_make1(e);
	for (;;)
	{
		if (accept_punct(ps, "."))
		{
			e = palloc0(sizeof(PathElem));
			e->name = identifier(ps);
		}
		else if (accept_punct(ps, "["))
		{
			Token	   *t = next(ps);

			if (t->kind != T_NUMBER || strspn(t->text, "0123456789") != strlen(t->text))
				malformed(ps, t);
			e = palloc0(sizeof(PathElem));
			e->index = t->text;
			expect_punct(ps, "]");
		}
		else
			break;
		n->path = lappend(n->path, e);
	}
	return n;
}

/* operand: '(' expr ')' | function call | path | value */
static PNode *
parse_operand(Parser *ps)
{
	Token	   *t = peek(ps, 0);
	PNode	   *n;

	check_stack_depth();
	if (is_punct(t, "("))
	{
		next(ps);
		if (is_kw(peek(ps, 0), "select"))
			unsupported("a nested SELECT");
		n = parse_or(ps);
		expect_punct(ps, ")");
		return n;
	}
	if (is_kw(t, "exists") && is_punct(peek(ps, 1), "("))
		unsupported("EXISTS (it is for ExecuteTransaction)");
	if (t->kind == T_IDENT && !reserved(t) && is_punct(peek(ps, 1), "("))
	{
		n = make_node(N_FUNC, t->pos);
		n->op = asc_tolower(t->text, strlen(t->text));
		next(ps);
		next(ps);
		if (!is_punct(peek(ps, 0), ")"))
		{
			do
			{
				if (is_kw(peek(ps, 0), "select"))
					unsupported("a nested SELECT");
				n->args = lappend(n->args, parse_or(ps));
			} while (accept_punct(ps, ","));
		}
		expect_punct(ps, ")");
		return n;
	}
	if (t->kind == T_QIDENT || (t->kind == T_IDENT && !reserved(t)))
		return parse_path(ps);
	n = parse_value_node(ps);
	if (n == NULL)
		malformed(ps, t);
	return n;
}

/* an operand, with + and - (only SET takes them) */
static PNode *
parse_arith(Parser *ps)
{
	PNode	   *n = parse_operand(ps);

	while (is_punct(peek(ps, 0), "+") || is_punct(peek(ps, 0), "-"))
	{
		PNode	   *a = make_node(N_ARITH, peek(ps, 0)->pos);

		a->op = next(ps)->text;
		a->args = list_make2(n, parse_operand(ps));
		n = a;
	}
	return n;
}

/* predicate: operand [cmp operand | [NOT] BETWEEN | [NOT] IN | IS [NOT] ...] */
static PNode *
parse_predicate(Parser *ps)
{
	PNode	   *left = parse_arith(ps);
	Token	   *t = peek(ps, 0);
	PNode	   *n;
	bool		negated = false;

	if (t->kind == T_PUNCT &&
		(strcmp(t->text, "=") == 0 || strcmp(t->text, "<>") == 0 ||
		 strcmp(t->text, "!=") == 0 || strcmp(t->text, "<") == 0 ||
		 strcmp(t->text, "<=") == 0 || strcmp(t->text, ">") == 0 ||
		 strcmp(t->text, ">=") == 0))
	{
		next(ps);
		n = make_node(N_CMP, t->pos);
		n->op = strcmp(t->text, "!=") == 0 ? "<>" : t->text;
		n->args = list_make2(left, parse_arith(ps));
		return n;
	}
	if (is_kw(t, "is"))
	{
		next(ps);
		n = make_node(N_IS, t->pos);
		n->negated = accept_kw(ps, "not");
		if (accept_kw(ps, "missing"))
			n->op = "MISSING";
		else if (accept_kw(ps, "null"))
			n->op = "NULL";
		else
			malformed(ps, peek(ps, 0));
		n->args = list_make1(left);
		return n;
	}
	if (is_kw(t, "not") && (is_kw(peek(ps, 1), "between") || is_kw(peek(ps, 1), "in")))
	{
		next(ps);
		negated = true;
		t = peek(ps, 0);
	}
	if (accept_kw(ps, "between"))
	{
		n = make_node(N_BETWEEN, t->pos);
		n->negated = negated;
		n->args = list_make1(left);
		n->args = lappend(n->args, parse_arith(ps));
		expect_kw(ps, "and");
		n->args = lappend(n->args, parse_arith(ps));
		return n;
	}
	if (accept_kw(ps, "in"))
	{
		const char *close;

		n = make_node(N_IN, t->pos);
		n->negated = negated;
		n->args = list_make1(left);
		if (accept_punct(ps, "["))
			close = "]";
		else
		{
			expect_punct(ps, "(");
			if (is_kw(peek(ps, 0), "select"))
				unsupported("a nested SELECT");
			close = ")";
		}
		do
		{
			PNode	   *v = make_node(N_VALUE, peek(ps, 0)->pos);

			v->value = parse_value(ps);
			n->args = lappend(n->args, v);
		} while (accept_punct(ps, ","));
		expect_punct(ps, close);
		return n;
	}
	return left;
}

static PNode *
parse_not(Parser *ps)
{
	Token	   *t = peek(ps, 0);

	check_stack_depth();
	if (accept_kw(ps, "not"))
	{
		PNode	   *n = make_node(N_NOT, t->pos);

		n->args = list_make1(parse_not(ps));
		return n;
	}
	return parse_predicate(ps);
}

static PNode *
parse_and(Parser *ps)
{
	PNode	   *n = parse_not(ps);

	while (is_kw(peek(ps, 0), "and"))
	{
		PNode	   *a = make_node(N_AND, next(ps)->pos);

		a->args = list_make2(n, parse_not(ps));
		n = a;
	}
	return n;
}

static PNode *
parse_or(Parser *ps)
{
	PNode	   *n = parse_and(ps);

	while (is_kw(peek(ps, 0), "or"))
	{
		PNode	   *o = make_node(N_OR, next(ps)->pos);

		o->args = list_make2(n, parse_and(ps));
		n = o;
	}
	return n;
}

/* ------------------------------------------------------------------------
 * Statements
 * ------------------------------------------------------------------------
 */
static void
parse_table(Parser *ps, Statement *st, bool index_ok)
{
	st->table = identifier(ps);
	if (index_ok && accept_punct(ps, "."))
		st->index = identifier(ps);
	if (is_punct(peek(ps, 0), ",") || is_kw(peek(ps, 0), "join") ||
		is_kw(peek(ps, 0), "inner") || is_kw(peek(ps, 0), "left") ||
		is_kw(peek(ps, 0), "right") || is_kw(peek(ps, 0), "cross") ||
		is_kw(peek(ps, 0), "outer"))
		unsupported("a join (more than one table in FROM)");
	if (peek(ps, 0)->kind == T_IDENT && !reserved(peek(ps, 0)))
		unsupported("a table alias");
}

static void
parse_where(Parser *ps, Statement *st, bool required)
{
	if (accept_kw(ps, "where"))
		st->where = parse_or(ps);
	else if (required)
		malformed(ps, peek(ps, 0));
}

static void
parse_end(Parser *ps)
{
	Token	   *t = peek(ps, 0);

	if (is_kw(t, "group") || is_kw(t, "having") || is_kw(t, "union") ||
		is_kw(t, "intersect") || is_kw(t, "except") || is_kw(t, "limit") ||
		is_kw(t, "offset"))
		unsupported(psprintf("%s", asc_toupper(t->text, strlen(t->text))));
	if (t->kind != T_EOF)
		malformed(ps, t);
}

/* SELECT's select list, FROM and WHERE (after the SELECT keyword) */
static void
parse_select_body(Parser *ps, Statement *st)
{
	st->kind = STMT_SELECT;
	if (!accept_punct(ps, "*"))
	{
		if (is_kw(peek(ps, 0), "distinct") || is_kw(peek(ps, 0), "value"))
			unsupported(asc_toupper(peek(ps, 0)->text, strlen(peek(ps, 0)->text)));
		do
		{
			Token	   *t = peek(ps, 0);

			if (t->kind == T_IDENT && is_punct(peek(ps, 1), "("))
				unsupported("a function in the select list");
			if (t->kind != T_IDENT && t->kind != T_QIDENT)
				malformed(ps, t);
			st->projection = lappend(st->projection, parse_path(ps));
			if (is_kw(peek(ps, 0), "as"))
				unsupported("AS in the select list");
		} while (accept_punct(ps, ","));
	}
	expect_kw(ps, "from");
	if (is_punct(peek(ps, 0), "("))
		unsupported("a nested SELECT");
	parse_table(ps, st, true);
	parse_where(ps, st, false);
}

static void
parse_select(Parser *ps, Statement *st)
{
	parse_select_body(ps, st);
	if (accept_kw(ps, "order"))
	{
		expect_kw(ps, "by");
		do
		{
			OrderKey   *k = palloc0(sizeof(OrderKey));

			k->name = identifier(ps);
			if (accept_kw(ps, "desc"))
				k->desc = true;
			else
				(void) accept_kw(ps, "asc");
			st->order = lappend(st->order, k);
		} while (accept_punct(ps, ","));
	}
	parse_end(ps);
}

static void
parse_insert(Parser *ps, Statement *st)
{
	Token	   *t;

	st->kind = STMT_INSERT;
	expect_kw(ps, "into");
	parse_table(ps, st, false);
	if (is_kw(peek(ps, 0), "values"))
		unsupported("INSERT ... VALUES (insert one item with VALUE {...})");
	expect_kw(ps, "value");
	t = peek(ps, 0);
	if (is_punct(t, "<<"))
		unsupported("inserting several items in one statement");
	st->item = parse_value(ps);
	if (strcmp(st->item->type, "M") != 0)
		validation_error(PQL_MALFORMED,
						 psprintf("the value of an INSERT must be a map (position %d)", t->pos));
	parse_end(ps);
}

static void
parse_returning(Parser *ps, Statement *st)
{
	bool		all;
	bool		old;

	if (!accept_kw(ps, "returning"))
		return;
	if (accept_kw(ps, "all"))
		all = true;
	else
	{
		if (st->kind == STMT_DELETE)
			malformed(ps, peek(ps, 0));
		expect_kw(ps, "modified");
		all = false;
	}
	if (accept_kw(ps, "old"))
		old = true;
	else
	{
		if (st->kind == STMT_DELETE)
			malformed(ps, peek(ps, 0));
		expect_kw(ps, "new");
		old = false;
	}
	expect_punct(ps, "*");
	st->returning = all ? (old ? "ALL_OLD" : "ALL_NEW") : (old ? "UPDATED_OLD" : "UPDATED_NEW");
}

static void
parse_update(Parser *ps, Statement *st)
{
	st->kind = STMT_UPDATE;
	parse_table(ps, st, false);
	if (!is_kw(peek(ps, 0), "set") && !is_kw(peek(ps, 0), "remove"))
		malformed(ps, peek(ps, 0));
	for (;;)
	{
		if (accept_kw(ps, "set"))
		{
			do
			{
				SetClause  *c = palloc0(sizeof(SetClause));

				c->action = 'S';
				c->target = parse_path(ps);
				expect_punct(ps, "=");
				c->value = parse_arith(ps);
				st->sets = lappend(st->sets, c);
			} while (accept_punct(ps, ","));
		}
		else if (accept_kw(ps, "remove"))
		{
			do
			{
				SetClause  *c = palloc0(sizeof(SetClause));

				c->action = 'R';
				c->target = parse_path(ps);
				st->sets = lappend(st->sets, c);
			} while (accept_punct(ps, ","));
		}
		else
			break;
	}
	parse_where(ps, st, true);
	parse_returning(ps, st);
	parse_end(ps);
}

static void
parse_delete(Parser *ps, Statement *st)
{
	st->kind = STMT_DELETE;
	expect_kw(ps, "from");
	parse_table(ps, st, false);
	parse_where(ps, st, true);
	parse_returning(ps, st);
	parse_end(ps);
}

/*
 * EXISTS(SELECT * FROM "T" WHERE <the whole primary key> [AND ...]): a
 * ConditionCheck of ExecuteTransaction (after the EXISTS keyword).
 */
static void
parse_exists(Parser *ps, Statement *st)
{
	expect_punct(ps, "(");
	expect_kw(ps, "select");
	parse_select_body(ps, st);
	st->kind = STMT_EXISTS;
	expect_punct(ps, ")");
	parse_end(ps);
}

static Statement *
parse_statement(const char *text, DdbJson *params)
{
	Parser		ps;
	Statement  *st = palloc0(sizeof(Statement));
	Token	   *t;
	int			nparams = 0;

	memset(&ps, 0, sizeof(ps));
	ps.toks = tokenize(text, &ps.ntoks);
	ps.params = params;
	for (int i = 0; i < ps.ntoks; i++)
		if (ps.toks[i].kind == T_PARAM)
			nparams++;
	if (nparams != (params ? params->n : 0))
		validation_error(PQL_PARAM_COUNT);

	t = next(&ps);
	if (is_kw(t, "select"))
		parse_select(&ps, st);
	else if (is_kw(t, "insert"))
		parse_insert(&ps, st);
	else if (is_kw(t, "update"))
		parse_update(&ps, st);
	else if (is_kw(t, "delete"))
		parse_delete(&ps, st);
	else if (is_kw(t, "exists") && is_punct(peek(&ps, 0), "("))
		parse_exists(&ps, st);
	else if (is_kw(t, "upsert") || is_kw(t, "replace") || is_kw(t, "create") ||
			 is_kw(t, "drop") || is_kw(t, "exists"))
		unsupported(asc_toupper(t->text, strlen(t->text)));
	else
		malformed(&ps, t);
	return st;
}

/* ------------------------------------------------------------------------
 * Writing DynamoDB expressions
 * ------------------------------------------------------------------------
 */
typedef struct PExpr
{
	StringInfoData names;		/* ExpressionAttributeNames members */
	StringInfoData vals;		/* ExpressionAttributeValues members */
	List	   *name_list;		/* the names given a placeholder, in order */
	int			nvals;
} PExpr;

static void
expr_init(PExpr *x)
{
	memset(x, 0, sizeof(PExpr));
	initStringInfo(&x->names);
	initStringInfo(&x->vals);
}

static void
emit_name(PExpr *x, StringInfo buf, const char *name)
{
	int			i = 0;
	ListCell   *lc;

	foreach(lc, x->name_list)
	{
		if (strcmp(lfirst(lc), name) == 0)
		{
			appendStringInfo(buf, "#n%d", i);
			return;
		}
		i++;
	}
	x->name_list = lappend(x->name_list, (char *) name);
	if (x->names.len > 0)
		appendStringInfoChar(&x->names, ',');
	appendStringInfo(&x->names, "\"#n%d\":", i);
	ddb_json_string(&x->names, name, strlen(name));
	appendStringInfo(buf, "#n%d", i);
}

static void
emit_value(PExpr *x, StringInfo buf, PqlValue *v)
{
	if (x->vals.len > 0)
		appendStringInfoChar(&x->vals, ',');
	appendStringInfo(&x->vals, "\":v%d\":%s", x->nvals, v->json);
	appendStringInfo(buf, ":v%d", x->nvals++);
}

static void
emit_path(PExpr *x, StringInfo buf, PNode *n)
{
	ListCell   *lc;

	foreach(lc, n->path)
	{
		PathElem   *e = lfirst(lc);

		if (e->name == NULL)
			appendStringInfo(buf, "[%s]", e->index);
		else
		{
			if (lc != list_head(n->path))
				appendStringInfoChar(buf, '.');
			emit_name(x, buf, e->name);
		}
	}
}

static void emit_cond(PExpr *x, StringInfo buf, PNode *n);

static void
expect_path(PNode *n, const char *what)
{
	if (n->kind != N_PATH)
		validation_error(PQL_MALFORMED,
						 psprintf("%s takes an attribute path (position %d)", what, n->pos));
}

/* A comparison's operand: a path, a value or size(path). */
static void
emit_operand(PExpr *x, StringInfo buf, PNode *n)
{
	switch (n->kind)
	{
		case N_PATH:
			emit_path(x, buf, n);
			break;
		case N_VALUE:
			emit_value(x, buf, n->value);
			break;
		case N_FUNC:
			if (strcmp(n->op, "size") != 0)
				validation_error(PQL_MALFORMED,
								 psprintf("function %s does not return a value to compare (position %d)",
										  n->op, n->pos));
			if (list_length(n->args) != 1)
				validation_error(PQL_MALFORMED,
								 psprintf("size takes one argument (position %d)", n->pos));
			expect_path(linitial(n->args), "size");
			appendStringInfoString(buf, "size(");
			emit_path(x, buf, linitial(n->args));
			appendStringInfoChar(buf, ')');
			break;
		case N_MISSING:
			validation_error(PQL_MALFORMED,
							 psprintf("MISSING can only be compared with = or <> (position %d)", n->pos));
			break;
		case N_ARITH:
			validation_error(PQL_MALFORMED,
							 psprintf("arithmetic is only allowed in SET, as one + or - of two operands (position %d)", n->pos));
			break;
		default:
			validation_error(PQL_MALFORMED,
							 psprintf("a condition is not a value (position %d)", n->pos));
	}
}

/* A child of AND, OR or NOT: parenthesized when it is itself AND or OR. */
static void
emit_child(PExpr *x, StringInfo buf, PNode *n)
{
	bool		parens = n->kind == N_AND || n->kind == N_OR;

	if (parens)
		appendStringInfoChar(buf, '(');
	emit_cond(x, buf, n);
	if (parens)
		appendStringInfoChar(buf, ')');
}

static void
emit_cond(PExpr *x, StringInfo buf, PNode *n)
{
	ListCell   *lc;

	check_stack_depth();
	switch (n->kind)
	{
		case N_AND:
		case N_OR:
			emit_child(x, buf, linitial(n->args));
			appendStringInfoString(buf, n->kind == N_AND ? " AND " : " OR ");
			emit_child(x, buf, lsecond(n->args));
			break;
		case N_NOT:
			appendStringInfoString(buf, "NOT ");
			emit_child(x, buf, linitial(n->args));
			break;
		case N_CMP:
			{
				PNode	   *l = linitial(n->args);
				PNode	   *r = lsecond(n->args);

				if (l->kind == N_MISSING || r->kind == N_MISSING)
				{
					PNode	   *p = l->kind == N_MISSING ? r : l;

					if (strcmp(n->op, "=") != 0 && strcmp(n->op, "<>") != 0)
						validation_error(PQL_MALFORMED,
										 psprintf("MISSING can only be compared with = or <> (position %d)", n->pos));
					expect_path(p, "a comparison with MISSING");
					appendStringInfoString(buf, strcmp(n->op, "=") == 0 ?
										   "attribute_not_exists(" : "attribute_exists(");
					emit_path(x, buf, p);
					appendStringInfoChar(buf, ')');
					break;
				}
				emit_operand(x, buf, l);
				appendStringInfo(buf, " %s ", n->op);
				emit_operand(x, buf, r);
				break;
			}
		case N_BETWEEN:
			if (n->negated)
				appendStringInfoString(buf, "NOT (");
			emit_operand(x, buf, linitial(n->args));
			appendStringInfoString(buf, " BETWEEN ");
			emit_operand(x, buf, lsecond(n->args));
			appendStringInfoString(buf, " AND ");
			emit_operand(x, buf, lthird(n->args));
			if (n->negated)
				appendStringInfoChar(buf, ')');
			break;
		case N_IN:
			if (n->negated)
				appendStringInfoString(buf, "NOT (");
			emit_operand(x, buf, linitial(n->args));
			appendStringInfoString(buf, " IN (");
			for_each_from(lc, n->args, 1)
			{
				if (foreach_current_index(lc) > 1)
					appendStringInfoString(buf, ", ");
				emit_operand(x, buf, lfirst(lc));
			}
			appendStringInfoChar(buf, ')');
			if (n->negated)
				appendStringInfoChar(buf, ')');
			break;
		case N_IS:
			expect_path(linitial(n->args), psprintf("IS %s", n->op));
			if (strcmp(n->op, "MISSING") == 0)
			{
				appendStringInfoString(buf, n->negated ? "attribute_exists(" : "attribute_not_exists(");
				emit_path(x, buf, linitial(n->args));
				appendStringInfoChar(buf, ')');
			}
			else
			{
				/* IS NULL: the attribute is there and of type NULL */
				if (n->negated)
				{
					appendStringInfoString(buf, "(attribute_exists(");
					emit_path(x, buf, linitial(n->args));
					appendStringInfoString(buf, ") AND NOT ");
				}
				appendStringInfoString(buf, "attribute_type(");
				emit_path(x, buf, linitial(n->args));
				appendStringInfoString(buf, ", ");
				emit_value(x, buf, string_value("NULL"));
				appendStringInfoChar(buf, ')');
				if (n->negated)
					appendStringInfoChar(buf, ')');
			}
			break;
		case N_FUNC:
			if (strcmp(n->op, "begins_with") != 0 && strcmp(n->op, "contains") != 0 &&
				strcmp(n->op, "attribute_type") != 0)
			{
				if (strcmp(n->op, "size") == 0)
					validation_error(PQL_MALFORMED,
									 psprintf("size returns a number, not a condition (position %d)", n->pos));
				validation_error(PQL_MALFORMED,
								 psprintf("unknown function %s (position %d); PartiQL for DynamoDB has begins_with, contains, attribute_type, size and, in conditions, IS MISSING",
										  n->op, n->pos));
			}
			if (list_length(n->args) != 2)
				validation_error(PQL_MALFORMED,
								 psprintf("%s takes two arguments (position %d)", n->op, n->pos));
			expect_path(linitial(n->args), n->op);
			appendStringInfo(buf, "%s(", n->op);
			emit_path(x, buf, linitial(n->args));
			appendStringInfoString(buf, ", ");
			emit_operand(x, buf, lsecond(n->args));
			appendStringInfoChar(buf, ')');
			break;
		default:
			validation_error(PQL_MALFORMED,
							 psprintf("expected a condition at position %d", n->pos));
	}
}

/* The top-level AND terms of a condition. */
static List *
and_terms(PNode *n, List *terms)
{
	if (n == NULL)
		return terms;
	if (n->kind == N_AND)
	{
		terms = and_terms(linitial(n->args), terms);
		return and_terms(lsecond(n->args), terms);
	}
	return lappend(terms, n);
}

/* Terms joined by AND; NULL when there are none. */
static char *
emit_terms(PExpr *x, List *terms)
{
	StringInfoData buf;
	ListCell   *lc;

	if (terms == NIL)
		return NULL;
	initStringInfo(&buf);
	foreach(lc, terms)
	{
		if (lc != list_head(terms))
			appendStringInfoString(&buf, " AND ");
		emit_child(x, &buf, lfirst(lc));
	}
	return buf.data;
}

/* Is n the single attribute 'name'? */
static bool
is_attr(PNode *n, const char *name)
{
	return n->kind == N_PATH && list_length(n->path) == 1 &&
		strcmp(((PathElem *) linitial(n->path))->name, name) == 0;
}

/* 'name = value' (either way round): the value, else NULL. */
static PqlValue *
key_equality(PNode *n, const char *name)
{
	PNode	   *l,
			   *r;

	if (n->kind != N_CMP || strcmp(n->op, "=") != 0)
		return NULL;
	l = linitial(n->args);
	r = lsecond(n->args);
	if (is_attr(l, name) && r->kind == N_VALUE)
		return r->value;
	if (is_attr(r, name) && l->kind == N_VALUE)
		return l->value;
	return NULL;
}

/*
 * A value of the sort key's type, sktype ("S", "N" or "B")?  A key condition
 * on a value of another type is a ValidationException; in the filter such a
 * term is simply false, as a Scan's would be.
 */
static bool
key_typed_value(PNode *n, const char *sktype)
{
	return n->kind == N_VALUE && strcmp(n->value->type, sktype) == 0;
}

/* A sort-key condition Query takes in its key condition? */
static bool
sort_key_term(PNode *n, const char *sk, const char *sktype)
{
	if (n->kind == N_CMP && strcmp(n->op, "<>") != 0)
	{
		PNode	   *l = linitial(n->args);
		PNode	   *r = lsecond(n->args);

		return (is_attr(l, sk) && key_typed_value(r, sktype)) ||
			(is_attr(r, sk) && key_typed_value(l, sktype));
	}
	if (n->kind == N_BETWEEN && !n->negated)
		return is_attr(linitial(n->args), sk) &&
			key_typed_value(lsecond(n->args), sktype) &&
			key_typed_value(lthird(n->args), sktype);
	if (n->kind == N_FUNC && strcmp(n->op, "begins_with") == 0 &&
		list_length(n->args) == 2)
		return is_attr(linitial(n->args), sk) &&
			key_typed_value(lsecond(n->args), sktype);
	return false;
}

/*
 * An OR (of ORs) whose every operand is 'pk = value': the values, as an IN
 * list's; else NIL.
 */
static List *
key_equalities(PNode *n, const char *pk, List *values)
{
	PqlValue   *v;

	if (n->kind == N_OR)
	{
		values = key_equalities(linitial(n->args), pk, values);
		if (values == NIL)
			return NIL;
		return key_equalities(lsecond(n->args), pk, values);
	}
	if ((v = key_equality(n, pk)) == NULL)
		return NIL;
	return lappend(values, v);
}

/*
 * A bound of the sort key, 'sk >= value', 'sk > value' or their mirrors
 * 'value <= sk', 'value < sk' (a lower one), 'sk <= value', 'sk < value' or
 * theirs (an upper one): the value's node, *attr the key's, and *strict
 * whether the bound excludes the value; else NULL.
 */
static PNode *
sort_key_bound(PNode *n, const char *sk, const char *sktype, bool lower, PNode **attr,
			   bool *strict)
{
	PNode	   *l,
			   *r;
	const char *op;

	if (n->kind != N_CMP)
		return NULL;
	l = linitial(n->args);
	r = lsecond(n->args);
	/* as 'sk op value' */
	if (is_attr(l, sk) && key_typed_value(r, sktype))
		op = n->op;
	else if (is_attr(r, sk) && key_typed_value(l, sktype))
	{
		PNode	   *t = l;

		l = r, r = t;
		op = strcmp(n->op, "<") == 0 ? ">" : strcmp(n->op, ">") == 0 ? "<" :
			strcmp(n->op, "<=") == 0 ? ">=" : strcmp(n->op, ">=") == 0 ? "<=" : n->op;
	}
	else
		return NULL;
	if (strncmp(op, lower ? ">" : "<", 1) != 0 || (op[1] != '\0' && op[1] != '='))
		return NULL;
	*attr = l;
	*strict = op[1] == '\0';
	return r;
}

/*
 * The value itself, made from its typed JSON as the request's values are
 * (ddb_json_parse, ddb_typed_value), never through jsonb's text input,
 * which refuses a U+0000 in a string.  It is made once and kept with the
 * value (in the value's own memory context): sorting and de-duplicating an
 * IN list compare each value many times, and parsing its text at every
 * comparison made a 50-value list cost thousands of parses.
 */
static DdbValue *
parsed_value(PqlValue *v)
{
	if (v->parsed == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(GetMemoryChunkContext(v));

		v->parsed = ddb_typed_value(ddb_json_parse(v->json, strlen(v->json)));
		MemoryContextSwitchTo(old);
	}
	return v->parsed;
}

/*
 * Compare two values of one scalar type (S, N or B) as the key compares
 * them (ddb_scalar_cmp) into *cmp; false, with nothing compared, for any
 * other pair.
 */
static bool
key_values_cmp(PqlValue *a, PqlValue *b, int *cmp)
{
	if (strcmp(a->type, b->type) != 0 ||
		(strcmp(a->type, "S") != 0 && strcmp(a->type, "N") != 0 &&
		 strcmp(a->type, "B") != 0))
		return false;
	*cmp = ddb_scalar_cmp(parsed_value(a), parsed_value(b));
	return true;
}

/* lo <= hi: a BETWEEN of them is a key condition Query takes */
static bool
bounds_ordered(PqlValue *lo, PqlValue *hi)
{
	int			cmp;

	return key_values_cmp(lo, hi, &cmp) && cmp <= 0;
}

/*
 * values += v, unless it is there already (the same value: 1 and 1.0 are
 * one number): one Query per distinct value
 */
static List *
add_key_value(List *values, PqlValue *v)
{
	ListCell   *lc;

	foreach(lc, values)
	{
		PqlValue   *w = lfirst(lc);
		int			cmp;

		if (key_values_cmp(w, v, &cmp) ? cmp == 0 : strcmp(w->json, v->json) == 0)
			return values;
	}
	return lappend(values, v);
}

/*
 * list_sort comparators of partition key values of one type (they were
 * checked against the key's): the key's order, and its reverse
 */
static int
key_value_asc(const ListCell *a, const ListCell *b)
{
	int			cmp = 0;

	(void) key_values_cmp(lfirst(a), lfirst(b), &cmp);
	return cmp;
}

static int
key_value_desc(const ListCell *a, const ListCell *b)
{
	return key_value_asc(b, a);
}

/* ------------------------------------------------------------------------
 * Requests and responses: the operations' requests are written as their
 * responses are (DdbResponse, ddb_protocol.h)
 * ------------------------------------------------------------------------
 */
static void
req_begin(DdbResponse *r, const char *table)
{
	ddb_resp_begin(r);
	ddb_resp_key(r, "TableName");
	ddb_json_cstring(&r->buf, table);
}

static void
req_string(DdbResponse *r, const char *key, const char *value)
{
	if (value == NULL)
		return;
	ddb_resp_key(r, key);
	ddb_json_cstring(&r->buf, value);
}

static void
req_raw(DdbResponse *r, const char *key, const char *json)
{
	if (json == NULL)
		return;
	ddb_resp_key(r, key);
	appendStringInfoString(&r->buf, json);
}

static void
req_expr(DdbResponse *r, PExpr *x)
{
	if (x->names.len > 0)
		req_raw(r, "ExpressionAttributeNames", psprintf("{%s}", x->names.data));
	if (x->vals.len > 0)
		req_raw(r, "ExpressionAttributeValues", psprintf("{%s}", x->vals.data));
}

/* Run one operation through the protocol's entry point; its parsed response. */
static DdbJson *
run(const char *operation, DdbResponse *r)
{
	char	   *body;
	int			bodylen;
	char	   *resp;
	int			len;

	body = ddb_resp_end(r, &bodylen);
	resp = ddb_api_execute(operation, body, bodylen, &len);
	return ddb_json_parse(resp, len);
}

/* Add one ConsumedCapacity to another: every number member summed. */
static void
capacity_add(DdbJson *sum, DdbJson *c)
{
	for (int i = 0; i < sum->n; i++)
	{
		DdbJson    *a = sum->elems[i];
		DdbJson    *b = ddb_json_get(c, sum->keys[i]);

		if (b == NULL)
			continue;
		if (a->type == DDB_JSON_NUMBER && b->type == DDB_JSON_NUMBER)
			a->str = psprintf("%.15g", strtod(a->str, NULL) + strtod(b->str, NULL));
		else if (a->type == DDB_JSON_OBJECT && b->type == DDB_JSON_OBJECT)
			capacity_add(a, b);
	}
}

/*
 * The table's (or an index's) key attribute names, and if asked the
 * partition key's type and the sort key's ("S", "N" or "B"), from the table
 * opened as the operation below opens it (ddb_table_open, with the
 * privilege it needs, mode): a table or index that is not there, or a
 * privilege that is missing, is that operation's error.  The operation
 * opens the table again, under the lock held since.
 */
static void
key_schema(const char *table, const char *index, AclMode mode, char **pk, char **sk,
		   DdbKeyType *pktype, const char **sktype)
{
	Relation	rel = ddb_table_open(table, mode);
	Relation	keyrel = rel;
	const char *names[DDB_MAX_KEY_COLUMNS];
	int			nkeys = ddb_get_keyinfo(rel)->nkeys;

	if (index != NULL)
	{
		char		kind;
		bool		projects_all;

		keyrel = ddb_gsi_open_index(rel, index, &nkeys, &kind, &projects_all);
	}
	ddb_table_key_names(keyrel, names);
	*pk = pstrdup(names[0]);
	*sk = nkeys > 1 ? pstrdup(names[1]) : NULL;
	if (pktype != NULL)
		*pktype = ddb_get_keyinfo(keyrel)->keytype[0];
	if (sktype != NULL && nkeys > 1)
	{
		DdbKeyType	t = ddb_get_keyinfo(keyrel)->keytype[1];

		*sktype = t == DDB_KEY_S ? "S" : t == DDB_KEY_N ? "N" : "B";
	}
	if (keyrel != rel)
		relation_close(keyrel, NoLock);
	relation_close(rel, NoLock);
}

/* ------------------------------------------------------------------------
 * NextToken: base64 of {"i": query, "k": start key}, signed for the
 * statement and its parameters (ddb_token_sign)
 * ------------------------------------------------------------------------
 */

/* What a token is signed for: the statement, a NUL, its parameters. */
static StringInfo
token_context(const char *statement, DdbJson *params)
{
	StringInfo	buf = makeStringInfo();

	appendStringInfoString(buf, statement);
	appendStringInfoChar(buf, '\0');
	if (params)
		ddb_json_write_json(buf, params);
	return buf;
}

static char *
token_encode(StringInfo context, int query, DdbJson *start_key)
{
	char	   *json = ddb_token_sign("partiql", context->data, context->len,
									  psprintf("{\"i\":%d,\"k\":%s}", query,
											   json_text(start_key)));
	int			len = strlen(json);
	char	   *out = palloc(pg_b64_enc_len(len) + 1);
	int			n = pg_b64_encode(json, len, out, pg_b64_enc_len(len));

	out[Max(n, 0)] = '\0';
	return out;
}

/* The query index and start key a token carries; an error if not ours. */
static DdbJson *
token_decode(const char *token, StringInfo context, int nqueries, int *query)
{
	int			len = strlen(token);
	char	   *text = palloc(pg_b64_dec_len(len) + 1);
	int			n = pg_b64_decode(token, len, text, pg_b64_dec_len(len));
	char	   *json = NULL;
	DdbJson    *j = NULL;
	DdbJson    *i,
			   *k;
	char	   *end;
	long		qi = -1;

	if (n > 0)
	{
		text[n] = '\0';
		if (strlen(text) == n)
			json = ddb_token_payload("partiql", context->data, context->len, text);
	}
	/* (signed: what was signed is our JSON) */
	if (json != NULL)
		j = ddb_json_parse(json, strlen(json));
	if (j != NULL && j->type == DDB_JSON_OBJECT &&
		(i = ddb_json_member(j, "i")) != NULL && i->type == DDB_JSON_NUMBER)
	{
		errno = 0;
		qi = strtol(i->str, &end, 10);
		if (errno != 0 || *end != '\0' || end == i->str)
			qi = -1;
	}
	if (qi < 0 || qi >= nqueries ||
		((k = ddb_json_member(j, "k")) != NULL && k->type != DDB_JSON_OBJECT))
		validation_error("Invalid NextToken: the token was not returned for this statement and its parameters");
	*query = (int) qi;
	return k;
}

/* ------------------------------------------------------------------------
 * ExecuteStatement
 * ------------------------------------------------------------------------
 */
typedef struct Options
{
	const char *statement;
	DdbJson    *params;
	const char *rcc;			/* ReturnConsumedCapacity */
	const char *on_failure;		/* ReturnValuesOnConditionCheckFailure */
	DdbJson    *consistent;
	int			limit;			/* 0: none */
	const char *next_token;
} Options;

static void
req_common(DdbResponse *r, Options *o)
{
	req_string(r, "ReturnConsumedCapacity", o->rcc);
}

/* ProjectionExpression: the SELECT's paths (none for *) */
static void
req_projection(DdbResponse *r, PExpr *x, Statement *st)
{
	StringInfoData proj;
	ListCell   *lc;

	if (st->projection == NIL)
		return;
	initStringInfo(&proj);
	foreach(lc, st->projection)
	{
		if (lc != list_head(st->projection))
			appendStringInfoString(&proj, ", ");
		emit_path(x, &proj, lfirst(lc));
	}
	req_string(r, "ProjectionExpression", proj.data);
}

static char *
execute_select(Statement *st, Options *o, int *len)
{
	char	   *pk,
			   *sk;
	DdbKeyType	pktype;
	const char *sktype = NULL;
	List	   *terms = and_terms(st->where, NIL);
	PNode	   *pk_term = NULL;
	PNode	   *sk_term = NULL;
	List	   *key_terms = NIL;
	List	   *pk_values = NIL;
	List	   *ors = NIL;
	List	   *filter_terms = NIL;
	int			npk_listed = 0; /* partition key values as written */
	OrderKey   *pk_order = NULL;
	bool		sk_ordered_first = false;
	bool		forward = true;
	bool		query;
	int			nqueries;
	int			qi = 0;
	DdbJson    *start_key = NULL;
	StringInfo	context = token_context(o->statement, o->params);
	StringInfoData items;
	int			nitems = 0;
	DdbJson    *capacity = NULL;
	DdbJson    *last_key = NULL;
	int			remaining = o->limit;
	DdbResponse out;
	ListCell   *lc;
	MemoryContext outer = CurrentMemoryContext;
	MemoryContext qcxt;

	key_schema(st->table, st->index, ACL_SELECT, &pk, &sk, &pktype, &sktype);

	/*
	 * The partition key's equality, IN list or OR of equalities, then a sort
	 * key condition: an inclusive range (>= and <=) is one BETWEEN.
	 */
	foreach(lc, terms)
	{
		PNode	   *t = lfirst(lc);
		PqlValue   *v;

		if (pk_term == NULL && (v = key_equality(t, pk)) != NULL)
		{
			pk_term = t;
			pk_values = list_make1(v);
			npk_listed = 1;
		}
		else if (pk_term == NULL && t->kind == N_IN && !t->negated &&
				 is_attr(linitial(t->args), pk))
		{
			ListCell   *vc;

			if (list_length(t->args) - 1 > PQL_MAX_IN_KEYS)
				validation_error("IN takes at most %d values of the partition key; the statement has %d (position %d)",
								 PQL_MAX_IN_KEYS, list_length(t->args) - 1, t->pos);
			pk_term = t;
			npk_listed = list_length(t->args) - 1;
			for_each_from(vc, t->args, 1)
				pk_values = add_key_value(pk_values, ((PNode *) lfirst(vc))->value);
		}
		else if (pk_term == NULL && t->kind == N_OR &&
				 (ors = key_equalities(t, pk, NIL)) != NIL)
		{
			ListCell   *vc;

			if (list_length(ors) > PQL_MAX_IN_KEYS)
				validation_error("OR takes at most %d equalities of the partition key; the statement has %d (position %d)",
								 PQL_MAX_IN_KEYS, list_length(ors), t->pos);
			pk_term = t;
			npk_listed = list_length(ors);
			foreach(vc, ors)
				pk_values = add_key_value(pk_values, lfirst(vc));
		}
	}
	if (pk_term != NULL && sk != NULL)
	{
		PNode	   *lo_term = NULL,
				   *hi_term = NULL,
				   *lo = NULL,
				   *hi = NULL,
				   *attr = NULL;
		bool		lo_strict = false,
					hi_strict = false;

		foreach(lc, terms)
		{
			PNode	   *t = lfirst(lc);
			PNode	   *v;

			if (t == pk_term)
				continue;
			if (lo == NULL &&
				(v = sort_key_bound(t, sk, sktype, true, &attr, &lo_strict)) != NULL)
				lo_term = t, lo = v;
			else if (hi == NULL &&
					 (v = sort_key_bound(t, sk, sktype, false, &attr, &hi_strict)) != NULL)
				hi_term = t, hi = v;
		}

		/*
		 * Two bounds are one BETWEEN; a strict one also stays in the filter,
		 * which drops the item equal to it.
		 */
		if (lo != NULL && hi != NULL && bounds_ordered(lo->value, hi->value))
		{
			sk_term = make_node(N_BETWEEN, lo_term->pos);
			sk_term->args = list_make3(attr, lo, hi);
			if (!lo_strict)
				key_terms = lappend(key_terms, lo_term);
			if (!hi_strict)
				key_terms = lappend(key_terms, hi_term);
		}
		else
			foreach(lc, terms)
			{
				if (lfirst(lc) != pk_term && sort_key_term(lfirst(lc), sk, sktype))
				{
					sk_term = lfirst(lc);
					key_terms = list_make1(sk_term);
					break;
				}
			}
	}
	foreach(lc, terms)
		if (lfirst(lc) != pk_term && !list_member_ptr(key_terms, lfirst(lc)))
		filter_terms = lappend(filter_terms, lfirst(lc));

	/*
	 * A Query on the partition key's values.  Its filter may name key
	 * attributes (ddb_query_allow_key_filter, around the call below, for a
	 * Scan too): a strict bound, a second condition on the sort key.
	 */
	query = pk_term != NULL;
	if (!query)
		filter_terms = terms;

	/*
	 * Every partition key value is checked as its Query would check it, but
	 * before the first Query runs: a value of another type (or an empty
	 * string) in an IN list or OR is the statement's ValidationException,
	 * as it is in 'pk = v', not an error of the page that reaches it after
	 * the earlier values' items were read.
	 */
	foreach(lc, pk_values)
	{
		PqlValue   *v = lfirst(lc);

		ddb_query_check_key_value(parsed_value(v), pktype, pk);
	}

	/* ORDER BY: the key attributes only, and only on a Query */
	foreach(lc, st->order)
	{
		OrderKey   *k = lfirst(lc);

		if (st->where == NULL)
			validation_error("Must have WHERE clause in the statement when using ORDER BY clause.");
		if (strcmp(k->name, pk) != 0 && (sk == NULL || strcmp(k->name, sk) != 0))
			validation_error("ORDER BY can only name the key attributes of the table or index (%s is not one)",
							 k->name);
		if (!query)
			validation_error("ORDER BY needs a WHERE clause with an equality or IN condition on the partition key");
		if (strcmp(k->name, pk) == 0)
			pk_order = k;
		else
		{
			forward = !k->desc;
			sk_ordered_first |= pk_order == NULL;
		}
	}

	/*
	 * Several partition keys: each Query reads one partition in sort key
	 * order, so the items are in order when the Queries run in the
	 * partition key's order and ORDER BY puts the partition key first.
	 * DynamoDB asks for it in ORDER BY (its message); after the sort key,
	 * the partitions' items would have to be merged, which ddb does not do.
	 * The sorted values are a function of the statement and its parameters,
	 * so a NextToken's Query index still names the same Query.
	 */
	if (st->order != NIL && npk_listed > 1)
	{
		if (pk_order == NULL)
			validation_error("Must have hash key in ORDER BY clause when more than one hash key condition specified in WHERE clause.");
		if (sk_ordered_first && list_length(pk_values) > 1)
			unsupported("ORDER BY the sort key before the partition key of several partition keys");
		list_sort(pk_values, pk_order->desc ? key_value_desc : key_value_asc);
	}

	nqueries = query ? list_length(pk_values) : 1;
	if (o->next_token)
		start_key = token_decode(o->next_token, context, nqueries, &qi);

	/*
	 * Each Query runs in a context of its own, emptied for the next: only
	 * its items (as text), ConsumedCapacity and LastEvaluatedKey are copied
	 * out.  The page ends at a LastEvaluatedKey, when Limit items were
	 * read, or when the items passed PQL_MAX_PAGE_BYTES (of their JSON
	 * text, never less than their DynamoDB size): an IN list's page is at
	 * most that and one Query's answer, not one per value.
	 */
	qcxt = AllocSetContextCreate(outer, "PartiQL Query", ALLOCSET_DEFAULT_SIZES);
	initStringInfo(&items);
	appendStringInfoChar(&items, '[');
	for (; qi < nqueries; qi++)
	{
		DdbResponse r;
		PExpr		x;
		StringInfoData kc;
		DdbJson    *resp;
		DdbJson    *j;
		char	   *filter;

		MemoryContextReset(qcxt);
		MemoryContextSwitchTo(qcxt);
		expr_init(&x);
		req_begin(&r, st->table);
		req_string(&r, "IndexName", st->index);
		if (query)
		{
			initStringInfo(&kc);
			emit_name(&x, &kc, pk);
			appendStringInfoString(&kc, " = ");
			emit_value(&x, &kc, list_nth(pk_values, qi));
			if (sk_term)
			{
				appendStringInfoString(&kc, " AND ");
				emit_cond(&x, &kc, sk_term);
			}
			req_string(&r, "KeyConditionExpression", kc.data);
			if (!forward)
				req_raw(&r, "ScanIndexForward", "false");
		}
		filter = emit_terms(&x, filter_terms);
		req_string(&r, "FilterExpression", filter);
		req_projection(&r, &x, st);
		req_expr(&r, &x);
		if (o->consistent)
			req_raw(&r, "ConsistentRead", o->consistent->boolean ? "true" : "false");
		if (o->limit > 0)
			req_raw(&r, "Limit", psprintf("%d", remaining));
		if (start_key)
			req_raw(&r, "ExclusiveStartKey", json_text(start_key));
		req_common(&r, o);
		ddb_query_allow_key_filter(true);
		PG_TRY();
		{
			resp = run(query ? "Query" : "Scan", &r);
		}
		PG_FINALLY();
		{
			ddb_query_allow_key_filter(false);
		}
		PG_END_TRY();

		MemoryContextSwitchTo(outer);
		j = ddb_json_member(resp, "Items");
		for (int i = 0; j && i < j->n; i++)
		{
			if (nitems++ > 0)
				appendStringInfoChar(&items, ',');
			ddb_json_write_json(&items, j->elems[i]);
		}
		if ((j = ddb_json_member(resp, "ConsumedCapacity")) != NULL)
		{
			if (capacity == NULL)
				capacity = json_copy(j);
			else
				capacity_add(capacity, j);
		}
		start_key = NULL;
		last_key = json_copy(ddb_json_member(resp, "LastEvaluatedKey"));
		if (o->limit > 0 && (j = ddb_json_member(resp, "ScannedCount")) != NULL)
			remaining -= atoi(j->str);
		if (last_key != NULL || (o->limit > 0 && remaining <= 0) ||
			items.len > PQL_MAX_PAGE_BYTES)
			break;
	}
	MemoryContextDelete(qcxt);
	appendStringInfoChar(&items, ']');

	ddb_resp_begin(&out);
	ddb_resp_key(&out, "Items");
	appendBinaryStringInfo(&out.buf, items.data, items.len);
	if (last_key != NULL)
	{
		ddb_resp_key(&out, "LastEvaluatedKey");
		ddb_json_write_json(&out.buf, last_key);
		ddb_resp_key(&out, "NextToken");
		ddb_json_cstring(&out.buf, token_encode(context, qi, last_key));
	}
	else if (qi + 1 < nqueries)
	{
		/* Limit or the page ran out at a Query's end: the next starts afresh */
		ddb_resp_key(&out, "NextToken");
		ddb_json_cstring(&out.buf, token_encode(context, qi + 1, NULL));
	}
	if (capacity != NULL)
	{
		ddb_resp_key(&out, "ConsumedCapacity");
		ddb_json_write_json(&out.buf, capacity);
	}
	return ddb_resp_end(&out, len);
}

/* The Key member of a write: the full primary key, from WHERE's equalities. */
static char *
write_key(Statement *st, List *terms, char *pk, char *sk, List **rest)
{
	StringInfoData key;
	PNode	   *pk_term = NULL;
	PNode	   *sk_term = NULL;
	PqlValue   *pkv = NULL;
	PqlValue   *skv = NULL;
	ListCell   *lc;

	foreach(lc, terms)
	{
		PqlValue   *v;

		if (pk_term == NULL && pk && (v = key_equality(lfirst(lc), pk)) != NULL)
		{
			pk_term = lfirst(lc);
			pkv = v;
		}
		else if (sk_term == NULL && sk && (v = key_equality(lfirst(lc), sk)) != NULL)
		{
			sk_term = lfirst(lc);
			skv = v;
		}
	}
	if (pkv == NULL || (sk != NULL && skv == NULL))
		validation_error(PQL_KEY_EQUALITY);
	*rest = NIL;
	foreach(lc, terms)
		if (lfirst(lc) != pk_term && lfirst(lc) != sk_term)
		*rest = lappend(*rest, lfirst(lc));
	initStringInfo(&key);
	appendStringInfoChar(&key, '{');
	ddb_json_cstring(&key, pk);
	appendStringInfo(&key, ":%s", pkv->json);
	if (sk)
	{
		appendStringInfoChar(&key, ',');
		ddb_json_cstring(&key, sk);
		appendStringInfo(&key, ":%s", skv->json);
	}
	appendStringInfoChar(&key, '}');
	return key.data;
}

/* A write's answer: {} or, with RETURNING, {"Items": [the image]}. */
static char *
write_answer(DdbJson *resp, const char *returning, int *len)
{
	DdbResponse out;
	DdbJson    *j;

	ddb_resp_begin(&out);
	if (returning)
	{
		ddb_resp_key(&out, "Items");
		appendStringInfoChar(&out.buf, '[');
		if ((j = ddb_json_member(resp, "Attributes")) != NULL)
			ddb_json_write_json(&out.buf, j);
		appendStringInfoChar(&out.buf, ']');
	}
	if ((j = ddb_json_member(resp, "ConsumedCapacity")) != NULL)
	{
		ddb_resp_key(&out, "ConsumedCapacity");
		ddb_json_write_json(&out.buf, j);
	}
	return ddb_resp_end(&out, len);
}

/*
 * The request of a write statement's operation, not yet closed (run()
 * closes it): PutItem, UpdateItem or DeleteItem; TransactWriteItems takes
 * it as its Put, Update or Delete.
 */
static void
build_insert(Statement *st, Options *o, DdbResponse *r)
{
	char	   *pk,
			   *sk;
	PExpr		x;
	StringInfoData cond;
	DdbJson    *item;

	key_schema(st->table, NULL, ACL_INSERT, &pk, &sk, NULL, NULL);
	expr_init(&x);
	initStringInfo(&cond);
	req_begin(r, st->table);
	item = ddb_json_parse(st->item->json, strlen(st->item->json));
	req_raw(r, "Item", json_text(item->elems[0]));
	appendStringInfoString(&cond, "attribute_not_exists(");
	emit_name(&x, &cond, pk);
	appendStringInfoChar(&cond, ')');
	req_string(r, "ConditionExpression", cond.data);
	req_expr(r, &x);
	req_common(r, o);
}

static char *
execute_insert(Statement *st, Options *o, int *len)
{
	DdbResponse r;
	DdbJson    *volatile resp = NULL;
	MemoryContext cxt = CurrentMemoryContext;

	build_insert(st, o, &r);

	/* the put's failed condition is a duplicate key (raised anew, at once) */
	PG_TRY();
	{
		resp = run("PutItem", &r);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		if (edata->sqlerrcode != DDB_ERRCODE_CONDITIONAL_CHECK)
			PG_RE_THROW();
		FlushErrorState();
		ddb_raise(DDB_ERRCODE_DUPLICATE_ITEM, "DuplicateItemException", PQL_DUPLICATE);
	}
	PG_END_TRY();
	return write_answer(resp, NULL, len);
}

static void
build_update(Statement *st, Options *o, DdbResponse *r)
{
	char	   *pk,
			   *sk;
	List	   *rest = NIL;
	char	   *key;
	PExpr		x;
	StringInfoData set,
				remove,
				add,
				del,
				upd,
				cond;
	ListCell   *lc;

	key_schema(st->table, NULL, ACL_UPDATE, &pk, &sk, NULL, NULL);
	key = write_key(st, and_terms(st->where, NIL), pk, sk, &rest);
	expr_init(&x);
	initStringInfo(&set);
	initStringInfo(&remove);
	initStringInfo(&add);
	initStringInfo(&del);
	foreach(lc, st->sets)
	{
		SetClause  *c = lfirst(lc);
		PNode	   *v = c->value;
		StringInfo	buf;

		if (c->action == 'R')
		{
			buf = &remove;
			if (buf->len > 0)
				appendStringInfoString(buf, ", ");
			emit_path(&x, buf, c->target);
			continue;
		}
		if (v->kind == N_FUNC &&
			(strcmp(v->op, "set_add") == 0 || strcmp(v->op, "set_delete") == 0))
		{
			/* SET s = set_add(s, <<...>>): ADD s :v; set_delete: DELETE */
			PNode	   *arg;

			if (list_length(v->args) != 2)
				validation_error(PQL_MALFORMED,
								 psprintf("%s takes two arguments (position %d)", v->op, v->pos));
			arg = linitial(v->args);
			expect_path(arg, v->op);
			if (list_length(arg->path) != list_length(c->target->path))
				unsupported(psprintf("%s of a path other than the one SET", v->op));
			for (int i = 0; i < list_length(arg->path); i++)
			{
				PathElem   *a = list_nth(arg->path, i);
				PathElem   *b = list_nth(c->target->path, i);

				if ((a->name == NULL) != (b->name == NULL) ||
					strcmp(a->name ? a->name : a->index, b->name ? b->name : b->index) != 0)
					unsupported(psprintf("%s of a path other than the one SET", v->op));
			}
			/* a string, number or binary set (ql-functions), nothing else */
			arg = lsecond(v->args);
			if (arg->kind != N_VALUE ||
				(strcmp(arg->value->type, "SS") != 0 && strcmp(arg->value->type, "NS") != 0 &&
				 strcmp(arg->value->type, "BS") != 0))
				validation_error(PQL_MALFORMED,
								 psprintf("%s takes a set value (position %d)", v->op, v->pos));
			buf = v->op[4] == 'a' ? &add : &del;
			if (buf->len > 0)
				appendStringInfoString(buf, ", ");
			emit_path(&x, buf, c->target);
			appendStringInfoChar(buf, ' ');
			emit_value(&x, buf, ((PNode *) lsecond(v->args))->value);
			continue;
		}
		buf = &set;
		if (buf->len > 0)
			appendStringInfoString(buf, ", ");
		emit_path(&x, buf, c->target);
		appendStringInfoString(buf, " = ");
		if (v->kind == N_ARITH)
		{
			emit_operand(&x, buf, linitial(v->args));
			appendStringInfo(buf, " %s ", v->op);
			emit_operand(&x, buf, lsecond(v->args));
		}
		else if (v->kind == N_FUNC && strcmp(v->op, "list_append") == 0)
		{
			if (list_length(v->args) != 2)
				validation_error(PQL_MALFORMED,
								 psprintf("list_append takes two arguments (position %d)", v->pos));
			appendStringInfoString(buf, "list_append(");
			emit_operand(&x, buf, linitial(v->args));
			appendStringInfoString(buf, ", ");
			emit_operand(&x, buf, lsecond(v->args));
			appendStringInfoChar(buf, ')');
		}
		else if (v->kind == N_FUNC)
			validation_error(PQL_MALFORMED,
							 psprintf("unknown function %s in SET (position %d); SET takes list_append, set_add and set_delete",
									  v->op, v->pos));
		else
			emit_operand(&x, buf, v);
	}
	initStringInfo(&upd);
	if (set.len)
		appendStringInfo(&upd, "SET %s", set.data);
	if (remove.len)
		appendStringInfo(&upd, "%sREMOVE %s", upd.len ? " " : "", remove.data);
	if (add.len)
		appendStringInfo(&upd, "%sADD %s", upd.len ? " " : "", add.data);
	if (del.len)
		appendStringInfo(&upd, "%sDELETE %s", upd.len ? " " : "", del.data);

	/* UPDATE never creates an item: the item must exist */
	initStringInfo(&cond);
	appendStringInfoString(&cond, "attribute_exists(");
	emit_name(&x, &cond, pk);
	appendStringInfoChar(&cond, ')');
	foreach(lc, rest)
	{
		appendStringInfoString(&cond, " AND ");
		emit_child(&x, &cond, lfirst(lc));
	}

	req_begin(r, st->table);
	req_raw(r, "Key", key);
	req_string(r, "UpdateExpression", upd.data);
	req_string(r, "ConditionExpression", cond.data);
	req_expr(r, &x);
	req_string(r, "ReturnValues", st->returning);
	req_string(r, "ReturnValuesOnConditionCheckFailure", o->on_failure);
	req_common(r, o);
}

static void
build_delete(Statement *st, Options *o, DdbResponse *r)
{
	char	   *pk,
			   *sk;
	List	   *rest = NIL;
	char	   *key;
	PExpr		x;
	StringInfoData cond;

	key_schema(st->table, NULL, ACL_DELETE, &pk, &sk, NULL, NULL);
	key = write_key(st, and_terms(st->where, NIL), pk, sk, &rest);
	expr_init(&x);
	initStringInfo(&cond);

	/*
	 * No item: nothing to delete, and no error.  An item the other terms
	 * do not hold for: ConditionalCheckFailedException.
	 */
	if (rest != NIL)
	{
		char	   *terms;

		appendStringInfoString(&cond, "attribute_not_exists(");
		emit_name(&x, &cond, pk);
		appendStringInfoString(&cond, ") OR ");
		terms = emit_terms(&x, rest);
		if (list_length(rest) > 1)
			appendStringInfo(&cond, "(%s)", terms);
		else
			appendStringInfoString(&cond, terms);
	}
	req_begin(r, st->table);
	req_raw(r, "Key", key);
	req_string(r, "ConditionExpression", cond.len ? cond.data : NULL);
	req_expr(r, &x);
	req_string(r, "ReturnValues", st->returning);
	req_string(r, "ReturnValuesOnConditionCheckFailure", o->on_failure);
	req_common(r, o);
}

/* UPDATE and DELETE: UpdateItem or DeleteItem, and RETURNING's image */
static char *
execute_keyed_write(Statement *st, Options *o, int *len)
{
	DdbResponse r;

	if (st->kind == STMT_UPDATE)
		build_update(st, o, &r);
	else
		build_delete(st, o, &r);
	return write_answer(run(st->kind == STMT_UPDATE ? "UpdateItem" : "DeleteItem", &r),
						st->returning, len);
}

/* Run a parsed statement: ExecuteStatement's answer. */
static char *
execute(Statement *st, Options *o, int *len)
{
	switch (st->kind)
	{
		case STMT_SELECT:
			return execute_select(st, o, len);
		case STMT_INSERT:
			return execute_insert(st, o, len);
		case STMT_UPDATE:
		case STMT_DELETE:
			return execute_keyed_write(st, o, len);
		case STMT_EXISTS:
			unsupported("EXISTS outside ExecuteTransaction");
	}
	pg_unreachable();
}

/*
 * The members of one statement: ExecuteStatement's request, or one
 * element of BatchExecuteStatement's Statements or ExecuteTransaction's
 * TransactStatements (prefix: "statements.1.member." and so on, as
 * DynamoDB names them in its validation errors).
 */
static void
statement_options(DdbValErrors *e, DdbJson *req, const char *prefix, Options *o)
{
	DdbJson    *j;

	memset(o, 0, sizeof(*o));
	if ((j = ddb_json_member(req, "Statement")) == NULL)
		ddb_valerr_add(e, NULL, psprintf("%sstatement", prefix), "Member must not be null");
	else
	{
		o->statement = ddb_json_member_cstring(j, "Statement");
		/* (lengths in characters, as DynamoDB's API reference counts them) */
		if (strlen(o->statement) < 1)
			ddb_valerr_add(e, o->statement, psprintf("%sstatement", prefix),
						   "Member must have length greater than or equal to 1");
		if (pg_mbstrlen(o->statement) > PQL_MAX_STATEMENT)
			ddb_valerr_add(e, o->statement, psprintf("%sstatement", prefix),
						   "Member must have length less than or equal to 8192");
	}
	if ((j = ddb_json_member(req, "Parameters")) != NULL)
	{
		ddb_json_check_list(j);
		if (j->n < 1)
			ddb_valerr_add(e, "[]", psprintf("%sparameters", prefix),
						   "Member must have length greater than or equal to 1");
		o->params = j;
	}
	if ((j = ddb_json_member(req, "ConsistentRead")) != NULL)
	{
		(void) ddb_json_check_bool(j);
		o->consistent = j;
	}
}

char *
ddb_op_execute_statement(DdbJson *req, int *len)
{
	DdbValErrors e;
	Options		o;
	DdbJson    *j;
	Statement  *st;

	ddb_valerr_init(&e);
	statement_options(&e, req, "", &o);
	if ((j = ddb_json_member(req, "NextToken")) != NULL)
	{
		o.next_token = ddb_json_member_cstring(j, "NextToken");
		if (strlen(o.next_token) < 1)
			ddb_valerr_add(&e, o.next_token, "nextToken",
						   "Member must have length greater than or equal to 1");
		if (pg_mbstrlen(o.next_token) > PQL_MAX_TOKEN)
			ddb_valerr_add(&e, o.next_token, "nextToken",
						   "Member must have length less than or equal to 32768");
	}
	if ((j = ddb_json_member(req, "Limit")) != NULL)
	{
		double		d = ddb_json_check_number(j, "Integer");

		if (d < 1)
			ddb_valerr_add(&e, psprintf("%.0f", d), "limit",
						   "Member must have value greater than or equal to 1");
		o.limit = (int) d;		/* (an int: ddb_json_check_number) */
	}
	/* the enums, as every item operation checks them, whatever the statement */
	o.rcc = ddb_check_common(&e, req);
	o.on_failure = ddb_check_return_on_failure(&e, req, "");
	ddb_valerr_raise(&e);

	st = parse_statement(o.statement, o.params);
	return execute(st, &o, len);
}

/* ------------------------------------------------------------------------
 * BatchExecuteStatement and ExecuteTransaction
 * ------------------------------------------------------------------------
 */
#define PQL_BATCH_MAX	25		/* Statements of a BatchExecuteStatement */
#define PQL_TRANSACT_MAX 100	/* TransactStatements of an ExecuteTransaction */
#define PQL_MAX_CLIENT_TOKEN 36
/* ddb's wording: DynamoDB documents the rule, not its message */
#define PQL_MIXED		"The %s must consist of either read statements or write statements, not both"

/*
 * The statements of a batch or transaction (member: "Statements" or
 * "TransactStatements"), checked as DynamoDB checks a list of structures:
 * null, 1 to max elements, each element's own members.
 */
static Options *
list_options(DdbValErrors *e, DdbJson *req, const char *name, int max, int *n)
{
	DdbJson    *list = ddb_json_member(req, name);
	char	   *lname = psprintf("%c%s", pg_ascii_tolower(name[0]), name + 1);
	Options    *opts;

	*n = 0;
	if (list == NULL)
	{
		ddb_valerr_add(e, NULL, lname, "Member must not be null");
		return NULL;
	}
	ddb_json_check_list(list);
	if (list->n < 1)
		ddb_valerr_add(e, "[]", lname, "Member must have length greater than or equal to 1");
	if (list->n > max)
		ddb_valerr_add(e, psprintf("[%d statements]", list->n), lname,
					   psprintf("Member must have length less than or equal to %d", max));
	*n = list->n;
	opts = palloc0(sizeof(Options) * Max(list->n, 1));
	for (int i = 0; i < list->n; i++)
	{
		char	   *prefix = psprintf("%s.%d.member.", lname, i + 1);

		ddb_json_check_value_struct(list->elems[i],
									max == PQL_BATCH_MAX ? "BatchStatementRequest" : "ParameterizedStatement");
		statement_options(e, list->elems[i], prefix, &opts[i]);
		opts[i].on_failure = ddb_check_return_on_failure(e, list->elems[i], prefix);
	}
	return opts;
}

/*
 * Run fn(arg) in a subtransaction: true when it succeeded (its work is
 * kept).  A DynamoDB error a statement of a batch can have is caught
 * (*edata, the subtransaction rolled back), and so are PostgreSQL's errors
 * with a DynamoDB meaning (privileges: AccessDenied; lock timeouts,
 * serialization failures, deadlocks: TransactionConflict); any other error
 * is raised.
 */
typedef void (*StatementFn) (void *arg);

static const struct
{
	int			sqlerrcode;
	const char *code;			/* BatchStatementError's Code */
}			batch_codes[] =
{
	{DDB_ERRCODE_CONDITIONAL_CHECK, "ConditionalCheckFailed"},
	{DDB_ERRCODE_DUPLICATE_ITEM, "DuplicateItem"},
	{DDB_ERRCODE_VALIDATION, "ValidationError"},
	{DDB_ERRCODE_RESOURCE_NOT_FOUND, "ResourceNotFound"},
	{DDB_ERRCODE_ACCESS_DENIED, "AccessDenied"},
	/* a statement its role lacks the privileges for, as DynamoDB's IAM */
	{ERRCODE_INSUFFICIENT_PRIVILEGE, "AccessDenied"},
	{DDB_ERRCODE_ITEM_COLLECTION_SIZE, "ItemCollectionSizeLimitExceeded"},
	{DDB_ERRCODE_TRANSACTION_CONFLICT, "TransactionConflict"},
	/* PostgreSQL's, which the endpoint answers TransactionConflictException */
	{ERRCODE_LOCK_NOT_AVAILABLE, "TransactionConflict"},
	{ERRCODE_T_R_SERIALIZATION_FAILURE, "TransactionConflict"},
	{ERRCODE_T_R_DEADLOCK_DETECTED, "TransactionConflict"},
	{DDB_ERRCODE_REQUEST_LIMIT, "RequestLimitExceeded"},
};

static const char *
batch_code(int sqlerrcode)
{
	for (int i = 0; i < lengthof(batch_codes); i++)
		if (batch_codes[i].sqlerrcode == sqlerrcode)
			return batch_codes[i].code;
	return NULL;
}

static bool
run_caught(StatementFn fn, void *arg, ErrorData **edata)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile bool ok = true;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		fn(arg);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		*edata = ddb_subxact_caught(cxt, owner);
		if (batch_code((*edata)->sqlerrcode) == NULL)
			ReThrowError(*edata);
		ok = false;
	}
	PG_END_TRY();
	return ok;
}

typedef struct BatchStatement
{
	Options    *o;
	Statement  *st;
	DdbJson    *resp;			/* the statement's answer */
	int			index;			/* its place in the request */
	Oid			relid;			/* a write: its item's table and key */
	char	   *key;			/* (NULL: not known, see batch_key) */
	int			keylen;
} BatchStatement;

static void
batch_parse(void *arg)
{
	BatchStatement *b = arg;

	b->st = parse_statement(b->o->statement, b->o->params);
}

/*
 * One statement of a batch, as ExecuteStatement runs it.  A SELECT must
 * name the whole primary key of the table (one item at most).  A write's
 * RETURNING image is its answer's Item, as a SELECT's item is.
 */
static void
batch_run(void *arg)
{
	BatchStatement *b = arg;
	int			len;
	char	   *resp;

	if (b->st->kind == STMT_SELECT)
	{
		char	   *pk,
				   *sk;
		List	   *rest;

		if (b->st->index != NULL)
			validation_error(PQL_KEY_EQUALITY);
		key_schema(b->st->table, NULL, ACL_SELECT, &pk, &sk, NULL, NULL);
		(void) write_key(b->st, and_terms(b->st->where, NIL), pk, sk, &rest);
	}
	resp = execute(b->st, b->o, &len);
	b->resp = ddb_json_parse(resp, len);
}

/*
 * batch_run for a write, its item collection changes deferred to the end
 * of the batch (batch_run_writes), or dropped when it fails.
 */
static void
batch_run_deferred(void *arg)
{
	int			mark = ddb_collection_defer_begin();

	PG_TRY();
	{
		batch_run(arg);
	}
	PG_CATCH();
	{
		ddb_collection_defer_end(mark, false);
		PG_RE_THROW();
	}
	PG_END_TRY();
	ddb_collection_defer_end(mark, true);
}

/*
 * The writes of a batch, in 'order', each in a subtransaction of its own
 * (one's error is its answer), and their item collection changes applied
 * after all of them, in the order of their collection tables and keys
 * (ddb_gsi.c's lock order: items, then collection rows), as
 * TransactWriteItems and BatchWriteItem apply theirs.  A statement that
 * took its partition's collection row right after its item held it while
 * the next statement waited for an item that a single write of the same
 * partition held on its way to that row: a deadlock.  The collection rows
 * at the end take the batch's growth of each collection as a whole, as
 * BatchWriteItem's do.  When they fail as a statement may (the collection
 * grown past its limit, a lock timeout, a serialization failure, a
 * deadlock: batch_code's), the batch runs again, in a subtransaction of
 * its own so that the first run leaves nothing behind, each statement
 * taking its collection row after its item as it would alone, so that
 * those errors are the statements' that meet them, each its own: a rare
 * run, which the lock order does not cover.
 */
static void
batch_run_writes(BatchStatement **order, int n, ErrorData **errors)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;

	for (int attempt = 0; attempt < 2; attempt++)
	{
		bool		deferred = attempt == 0;
		volatile int mark = -1;
		volatile bool applying = false;
		bool		again = false;

		BeginInternalSubTransaction(NULL);
		MemoryContextSwitchTo(cxt);
		PG_TRY();
		{
			if (deferred)
				mark = ddb_collection_defer_begin();
			for (int i = 0; i < n; i++)
			{
				BatchStatement *b = order[i];

				if (b->st == NULL)
					continue;
				errors[b->index] = NULL;
				b->resp = NULL;
				if (!run_caught(deferred ? batch_run_deferred : batch_run, b, &errors[b->index]))
					b->resp = NULL;
			}
			if (deferred)
			{
				applying = true;
				ddb_collection_defer_end(mark, true);
			}
			ReleaseCurrentSubTransaction();
			MemoryContextSwitchTo(cxt);
			CurrentResourceOwner = owner;
		}
		PG_CATCH();
		{
			ErrorData  *edata;

			if (mark >= 0 && !applying)
				ddb_collection_defer_end(mark, false);
			edata = ddb_subxact_caught(cxt, owner);
			if (!deferred || batch_code(edata->sqlerrcode) == NULL)
				ReThrowError(edata);
			again = true;
		}
		PG_END_TRY();
		if (!again)
			break;
	}
}

/*
 * A write's table and encoded key: an INSERT's item's, or the key its WHERE
 * names, as build_insert and write_key find them for the request the
 * statement becomes, and as BatchWriteItem and TransactWriteItems encode
 * theirs.
 */
static void
batch_key(void *arg)
{
	BatchStatement *b = arg;
	Statement  *st = b->st;
	AclMode		mode = st->kind == STMT_INSERT ? ACL_INSERT :
		st->kind == STMT_UPDATE ? ACL_UPDATE : ACL_DELETE;
	DdbJson    *key;
	Relation	rel;
	StringInfoData enc;

	if (st->kind == STMT_INSERT)
		key = ddb_json_parse(st->item->json, strlen(st->item->json))->elems[0];
	else
	{
		char	   *pk,
				   *sk,
				   *json;
		List	   *rest;

		key_schema(st->table, NULL, mode, &pk, &sk, NULL, NULL);
		json = write_key(st, and_terms(st->where, NIL), pk, sk, &rest);
		key = ddb_json_parse(json, strlen(json));
	}
	rel = ddb_table_open(st->table, mode);
	ddb_request_key(rel, ddb_typed_item_jsonb(key), st->kind != STMT_INSERT, &enc);
	b->relid = RelationGetRelid(rel);
	relation_close(rel, NoLock);
	b->key = enc.data;
	b->keylen = enc.len;
}

/*
 * The order the writes of a batch run in: their tables' and keys' (those
 * whose key could not be found first: they fail when they run), as
 * TransactWriteItems and BatchWriteItem lock their items.
 */
static int
batch_order_cmp(const void *a, const void *b)
{
	const BatchStatement *x = *(BatchStatement *const *) a;
	const BatchStatement *y = *(BatchStatement *const *) b;

	if ((x->key == NULL) != (y->key == NULL))
		return x->key == NULL ? -1 : 1;
	if (x->key != NULL && x->relid != y->relid)
		return x->relid < y->relid ? -1 : 1;
	if (x->key != NULL)
	{
		int			c = ddb_compare_bytes(x->key, x->keylen, y->key, y->keylen);

		if (c != 0)
			return c;
	}
	return x->index - y->index;
}

/* BatchStatementError of a caught error: Code, Message and maybe Item */
static void
write_batch_error(StringInfo out, ErrorData *edata)
{
	const char *msg = edata->message ? edata->message : "";
	const char *colon = strstr(msg, ": ");
	const char *own;
	bool		first = true;

	/*
	 * PostgreSQL's own errors in the words the endpoint answers them with;
	 * ddb's own refusals (row-level security) keep theirs
	 */
	own = ddb_error_client_message(edata->sqlerrcode, msg,
								   GetUserNameFromId(GetUserId(), false),
								   "BatchExecuteStatement");
	if (own != NULL)
	{
		msg = own;
		colon = NULL;
	}
	appendStringInfoChar(out, '{');
	ddb_json_key(out, &first, "Code");
	ddb_json_cstring(out, batch_code(edata->sqlerrcode));
	ddb_json_key(out, &first, "Message");
	ddb_json_cstring(out, colon ? colon + 2 : msg);
	/* ALL_OLD's item (write_condition_failed); other details are prose */
	if (edata->sqlerrcode == DDB_ERRCODE_CONDITIONAL_CHECK && edata->detail)
	{
		DdbJson    *extra = ddb_json_parse(edata->detail, strlen(edata->detail));
		DdbJson    *item = extra->type == DDB_JSON_OBJECT ? ddb_json_member(extra, "Item") : NULL;

		if (item)
		{
			ddb_json_key(out, &first, "Item");
			ddb_json_write_json(out, item);
		}
	}
	appendStringInfoChar(out, '}');
}

char *
ddb_op_batch_execute_statement(DdbJson *req, int *len)
{
	DdbValErrors e;
	Options    *opts;
	const char *rcc;
	int			n;
	BatchStatement *b;
	BatchStatement **order;
	ErrorData **errors;
	int			reads = 0,
				writes = 0;
	DdbResponse out;
	bool		any_capacity = false;
	StringInfoData capacity;

	ddb_valerr_init(&e);
	opts = list_options(&e, req, "Statements", PQL_BATCH_MAX, &n);
	rcc = ddb_check_common(&e, req);
	ddb_valerr_raise(&e);

	/* parse all first: reads and writes do not mix */
	b = palloc0(sizeof(BatchStatement) * n);
	errors = palloc0(sizeof(ErrorData *) * n);
	for (int i = 0; i < n; i++)
	{
		b[i].o = &opts[i];
		b[i].o->rcc = rcc;
		if (!run_caught(batch_parse, &b[i], &errors[i]))
			b[i].st = NULL;
		else if (b[i].st->kind == STMT_SELECT)
			reads++;
		else
			writes++;
	}
	if (reads > 0 && writes > 0)
		validation_error(PQL_MIXED, "batch");

	/*
	 * Each statement on its own: one's error is its answer, not the
	 * batch's.  Writes run in the order of their tables and keys, not the
	 * request's: each keeps its item locked until the request ends, and two
	 * batches over the same items listed in different orders deadlocked.
	 * A write whose key cannot be found (batch_key's error is dropped: the
	 * statement raises it again when it runs) runs first.
	 */
	order = palloc(sizeof(BatchStatement *) * n);
	for (int i = 0; i < n; i++)
	{
		ErrorData  *ignored = NULL;

		b[i].index = i;
		order[i] = &b[i];
		if (writes > 0 && b[i].st != NULL && !run_caught(batch_key, &b[i], &ignored))
			b[i].key = NULL;
	}
	if (writes > 0)
	{
		qsort(order, n, sizeof(BatchStatement *), batch_order_cmp);
		batch_run_writes(order, n, errors);
	}
	else
		for (int i = 0; i < n; i++)
			if (order[i]->st != NULL &&
				!run_caught(batch_run, order[i], &errors[order[i]->index]))
				order[i]->resp = NULL;

	ddb_resp_begin(&out);
	initStringInfo(&capacity);
	ddb_resp_key(&out, "Responses");
	appendStringInfoChar(&out.buf, '[');
	for (int i = 0; i < n; i++)
	{
		bool		f = true;
		DdbJson    *j;

		if (i > 0)
			appendStringInfoChar(&out.buf, ',');
		appendStringInfoChar(&out.buf, '{');
		if (errors[i])
		{
			ddb_json_key(&out.buf, &f, "Error");
			write_batch_error(&out.buf, errors[i]);
		}
		if (b[i].st)
		{
			ddb_json_key(&out.buf, &f, "TableName");
			ddb_json_cstring(&out.buf, b[i].st->table);
		}
		if (b[i].resp && (j = ddb_json_member(b[i].resp, "Items")) != NULL &&
			j->type == DDB_JSON_ARRAY && j->n > 0)
		{
			ddb_json_key(&out.buf, &f, "Item");
			ddb_json_write_json(&out.buf, j->elems[0]);
		}
		appendStringInfoChar(&out.buf, '}');
		if (b[i].resp && (j = ddb_json_member(b[i].resp, "ConsumedCapacity")) != NULL)
		{
			if (any_capacity)
				appendStringInfoChar(&capacity, ',');
			ddb_json_write_json(&capacity, j);
			any_capacity = true;
		}
	}
	appendStringInfoChar(&out.buf, ']');
	if (any_capacity)
	{
		ddb_resp_key(&out, "ConsumedCapacity");
		appendStringInfo(&out.buf, "[%s]", capacity.data);
	}
	return ddb_resp_end(&out, len);
}

/*
 * EXISTS(SELECT ...) in a transaction: a ConditionCheck of the item its
 * WHERE names by the whole primary key, that the item exists and that the
 * other terms hold for it (as TransactWriteItems' ConditionCheck:
 * otherwise the transaction is cancelled, reason ConditionalCheckFailed).
 */
static void
build_check(Statement *st, Options *o, DdbResponse *r)
{
	char	   *pk,
			   *sk;
	List	   *rest;
	char	   *key;
	PExpr		x;
	StringInfoData cond;

	if (st->index != NULL)
		validation_error(PQL_KEY_EQUALITY);
	key_schema(st->table, NULL, ACL_SELECT, &pk, &sk, NULL, NULL);
	key = write_key(st, and_terms(st->where, NIL), pk, sk, &rest);
	expr_init(&x);
	initStringInfo(&cond);
	appendStringInfoString(&cond, "attribute_exists(");
	emit_name(&x, &cond, pk);
	appendStringInfoChar(&cond, ')');
	if (rest != NIL)
		appendStringInfo(&cond, " AND (%s)", emit_terms(&x, rest));
	req_begin(r, st->table);
	req_raw(r, "Key", key);
	req_string(r, "ConditionExpression", cond.data);
	req_expr(r, &x);
	req_string(r, "ReturnValuesOnConditionCheckFailure", o->on_failure);
}

/*
 * A SELECT of a transaction: TransactGetItems' Get, of the item its WHERE
 * names by the whole primary key (and nothing else, which a Get could not
 * filter on: ddb's wording).
 */
static void
build_get(Statement *st, DdbResponse *r)
{
	char	   *pk,
			   *sk;
	List	   *rest;
	char	   *key;
	PExpr		x;

	if (st->index != NULL)
		validation_error(PQL_KEY_EQUALITY);
	key_schema(st->table, NULL, ACL_SELECT, &pk, &sk, NULL, NULL);
	key = write_key(st, and_terms(st->where, NIL), pk, sk, &rest);
	if (rest != NIL)
		unsupported("a SELECT in a transaction with conditions other than the primary key's equalities");
	expr_init(&x);
	req_begin(r, st->table);
	req_raw(r, "Key", key);
	req_projection(r, &x, st);
	req_expr(r, &x);
}

/*
 * Run a transaction's writes as one TransactWriteItems.  An INSERT is a Put
 * whose only condition is attribute_not_exists(pk), so its failed condition
 * means the key has an item: the transaction gives the reason the INSERT
 * alone would give (ql-reference.multiplestatements.transactions: the
 * cancellation reasons are "the errors from the individual singleton
 * operations"), DuplicateItem with DuplicateItemException's message, as
 * BatchExecuteStatement's code for it is.  The other reasons are
 * TransactWriteItems' own.
 */
static char *
transact_write(Statement **sts, int n, const char *body, int bodylen, int *len)
{
	DdbConditionReason *reasons = palloc0(sizeof(DdbConditionReason) * Max(n, 1));

	for (int i = 0; i < n; i++)
	{
		if (sts[i]->kind != STMT_INSERT)
			continue;
		reasons[i].code = "DuplicateItem";
		reasons[i].message = PQL_DUPLICATE;
	}
	return ddb_transact_write_request(ddb_json_parse(body, bodylen), reasons, len);
}

/*
 * ExecuteTransaction: the statements translated into one TransactGetItems
 * (all SELECTs) or TransactWriteItems (all writes), run by ddb_api_execute:
 * its checks, ClientRequestToken, cancellation reasons and capacity.
 */
char *
ddb_op_execute_transaction(DdbJson *req, int *len)
{
	DdbValErrors e;
	Options    *opts;
	const char *rcc;
	const char *token = NULL;
	DdbJson    *j;
	int			n;
	int			reads = 0;
	Statement **sts;
	DdbResponse body;
	char	   *text;
	int			textlen;

	ddb_valerr_init(&e);
	opts = list_options(&e, req, "TransactStatements", PQL_TRANSACT_MAX, &n);
	if ((j = ddb_json_member(req, "ClientRequestToken")) != NULL)
	{
		token = ddb_json_member_cstring(j, "ClientRequestToken");
		if (strlen(token) < 1)
			ddb_valerr_add(&e, token, "clientRequestToken",
						   "Member must have length greater than or equal to 1");
		if (pg_mbstrlen(token) > PQL_MAX_CLIENT_TOKEN)
			ddb_valerr_add(&e, token, "clientRequestToken",
						   "Member must have length less than or equal to 36");
	}
	rcc = ddb_check_common(&e, req);
	ddb_valerr_raise(&e);

	sts = palloc(sizeof(Statement *) * n);
	for (int i = 0; i < n; i++)
	{
		sts[i] = parse_statement(opts[i].statement, opts[i].params);
		/* TransactWriteItems returns no images: DynamoDB refuses it so */
		if (sts[i]->returning)
			validation_error("Validation failed in TransactStatements[%d]: RETURNING clause is not supported in ExecuteTransaction.",
							 i);
		reads += sts[i]->kind == STMT_SELECT;
	}
	if (reads > 0 && reads < n)
		validation_error(PQL_MIXED, "transaction");

	ddb_resp_begin(&body);
	ddb_resp_key(&body, "TransactItems");
	appendStringInfoChar(&body.buf, '[');
	for (int i = 0; i < n; i++)
	{
		DdbResponse r;
		const char *kind = NULL;
		char	   *item;
		int			itemlen;

		switch (sts[i]->kind)
		{
			case STMT_SELECT:
				build_get(sts[i], &r);
				kind = "Get";
				break;
			case STMT_INSERT:
				build_insert(sts[i], &opts[i], &r);
				kind = "Put";
				break;
			case STMT_UPDATE:
				build_update(sts[i], &opts[i], &r);
				kind = "Update";
				break;
			case STMT_DELETE:
				build_delete(sts[i], &opts[i], &r);
				kind = "Delete";
				break;
			case STMT_EXISTS:
				build_check(sts[i], &opts[i], &r);
				kind = "ConditionCheck";
				break;
		}
		item = ddb_resp_end(&r, &itemlen);
		appendStringInfo(&body.buf, "%s{\"%s\":%s}", i > 0 ? "," : "", kind, item);
	}
	appendStringInfoChar(&body.buf, ']');
	if (token && reads == 0)
	{
		ddb_resp_key(&body, "ClientRequestToken");
		ddb_json_cstring(&body.buf, token);
	}
	if (rcc)
	{
		ddb_resp_key(&body, "ReturnConsumedCapacity");
		ddb_json_cstring(&body.buf, rcc);
	}
	text = ddb_resp_end(&body, &textlen);
	if (reads > 0)
		return ddb_api_execute("TransactGetItems", text, textlen, len);
	return transact_write(sts, n, text, textlen, len);
}
