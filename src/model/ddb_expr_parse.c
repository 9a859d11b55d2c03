/*-------------------------------------------------------------------------
 *
 * ddb_expr_parse.c
 *	  Tokenizer and recursive-descent parser for DynamoDB's expressions.
 *
 * One function per production.  The grammars, as DynamoDB documents them:
 *
 *	condition  : or_cond
 *	or_cond    : and_cond (OR and_cond)*
 *	and_cond   : not_cond (AND not_cond)*
 *	not_cond   : NOT not_cond | primary
 *	primary    : '(' or_cond ')'
 *	           | bool_function '(' args ')'
 *	           | operand comparator operand
 *	           | operand BETWEEN operand AND operand
 *	           | operand IN '(' operand (',' operand)* ')'
 *	operand    : path | :value | size '(' path ')'
 *
 *	update     : clause+ where each of SET, REMOVE, ADD, DELETE appears once
 *	clause     : SET path '=' set_value (',' path '=' set_value)*
 *	           | REMOVE path (',' path)*
 *	           | ADD path :value (',' path :value)*
 *	           | DELETE path :value (',' path :value)*
 *	set_value  : set_operand (('+' | '-') set_operand)?
 *	set_operand: path | :value | if_not_exists '(' path ',' set_operand ')'
 *	           | list_append '(' set_operand ',' set_operand ')'
 *
 *	projection : path (',' path)*
 *	path       : (name | #name) ('.' (name | #name) | '[' integer ']')*
 *
 * Keywords (AND, OR, NOT, BETWEEN, IN, SET, REMOVE, ADD, DELETE) are
 * case-insensitive; function names are case-sensitive, as in DynamoDB.  A
 * bare name must not be one of DynamoDB's 573 reserved words.
 *
 * Placeholders are resolved while parsing: #names to attribute names,
 * :values to DdbValues (converted and validated once, in ddb_expr_begin).
 * The DdbExprContext records which placeholders were used, so that
 * ddb_expr_end can reject the unused ones across all the expressions of one
 * request, as DynamoDB does.
 *
 * Static validation happens here, before any item is read: syntax, undefined
 * placeholders, reserved words, operand types of constants, overlapping and
 * conflicting update or projection paths, expression size.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/jsonb.h"

#include "ddb.h"
#include "model/ddb_expr.h"

/* Nesting of parentheses and functions a parser accepts (ours, not DynamoDB's) */
#define DDB_MAX_PARSE_DEPTH		200

/* ------------------------------------------------------------------------
 * Reserved words: DynamoDB's list, sorted, matched case-insensitively
 * ------------------------------------------------------------------------
 */
/* DynamoDB's ReservedWords page, 573 words, in strcmp order (binary search) */
static const char *const reserved_words[] = {
	"ABORT", "ABSOLUTE", "ACTION", "ADD", "AFTER", "AGENT", "AGGREGATE", "ALL",
	"ALLOCATE", "ALTER", "ANALYZE", "AND", "ANY", "ARCHIVE", "ARE", "ARRAY",
	"AS", "ASC", "ASCII", "ASENSITIVE", "ASSERTION", "ASYMMETRIC", "AT",
	"ATOMIC", "ATTACH", "ATTRIBUTE", "AUTH", "AUTHORIZATION", "AUTHORIZE",
	"AUTO", "AVG", "BACK", "BACKUP", "BASE", "BATCH", "BEFORE", "BEGIN",
	"BETWEEN", "BIGINT", "BINARY", "BIT", "BLOB", "BLOCK", "BOOLEAN", "BOTH",
	"BREADTH", "BUCKET", "BULK", "BY", "BYTE", "CALL", "CALLED", "CALLING",
	"CAPACITY", "CASCADE", "CASCADED", "CASE", "CAST", "CATALOG", "CHAR",
	"CHARACTER", "CHECK", "CLASS", "CLOB", "CLOSE", "CLUSTER", "CLUSTERED",
	"CLUSTERING", "CLUSTERS", "COALESCE", "COLLATE", "COLLATION", "COLLECTION",
	"COLUMN", "COLUMNS", "COMBINE", "COMMENT", "COMMIT", "COMPACT", "COMPILE",
	"COMPRESS", "CONDITION", "CONFLICT", "CONNECT", "CONNECTION", "CONSISTENCY",
	"CONSISTENT", "CONSTRAINT", "CONSTRAINTS", "CONSTRUCTOR", "CONSUMED",
	"CONTINUE", "CONVERT", "COPY", "CORRESPONDING", "COUNT", "COUNTER",
	"CREATE", "CROSS", "CUBE", "CURRENT", "CURSOR", "CYCLE", "DATA", "DATABASE",
	"DATE", "DATETIME", "DAY", "DEALLOCATE", "DEC", "DECIMAL", "DECLARE",
	"DEFAULT", "DEFERRABLE", "DEFERRED", "DEFINE", "DEFINED", "DEFINITION",
	"DELETE", "DELIMITED", "DEPTH", "DEREF", "DESC", "DESCRIBE", "DESCRIPTOR",
	"DETACH", "DETERMINISTIC", "DIAGNOSTICS", "DIRECTORIES", "DISABLE",
	"DISCONNECT", "DISTINCT", "DISTRIBUTE", "DO", "DOMAIN", "DOUBLE", "DROP",
	"DUMP", "DURATION", "DYNAMIC", "EACH", "ELEMENT", "ELSE", "ELSEIF", "EMPTY",
	"ENABLE", "END", "EQUAL", "EQUALS", "ERROR", "ESCAPE", "ESCAPED", "EVAL",
	"EVALUATE", "EXCEEDED", "EXCEPT", "EXCEPTION", "EXCEPTIONS", "EXCLUSIVE",
	"EXEC", "EXECUTE", "EXISTS", "EXIT", "EXPLAIN", "EXPLODE", "EXPORT",
	"EXPRESSION", "EXTENDED", "EXTERNAL", "EXTRACT", "FAIL", "FALSE", "FAMILY",
	"FETCH", "FIELDS", "FILE", "FILTER", "FILTERING", "FINAL", "FINISH",
	"FIRST", "FIXED", "FLATTERN", "FLOAT", "FOR", "FORCE", "FOREIGN", "FORMAT",
	"FORWARD", "FOUND", "FREE", "FROM", "FULL", "FUNCTION", "FUNCTIONS",
	"GENERAL", "GENERATE", "GET", "GLOB", "GLOBAL", "GO", "GOTO", "GRANT",
	"GREATER", "GROUP", "GROUPING", "HANDLER", "HASH", "HAVE", "HAVING", "HEAP",
	"HIDDEN", "HOLD", "HOUR", "IDENTIFIED", "IDENTITY", "IF", "IGNORE",
	"IMMEDIATE", "IMPORT", "IN", "INCLUDING", "INCLUSIVE", "INCREMENT",
	"INCREMENTAL", "INDEX", "INDEXED", "INDEXES", "INDICATOR", "INFINITE",
	"INITIALLY", "INLINE", "INNER", "INNTER", "INOUT", "INPUT", "INSENSITIVE",
	"INSERT", "INSTEAD", "INT", "INTEGER", "INTERSECT", "INTERVAL", "INTO",
	"INVALIDATE", "IS", "ISOLATION", "ITEM", "ITEMS", "ITERATE", "JOIN", "KEY",
	"KEYS", "LAG", "LANGUAGE", "LARGE", "LAST", "LATERAL", "LEAD", "LEADING",
	"LEAVE", "LEFT", "LENGTH", "LESS", "LEVEL", "LIKE", "LIMIT", "LIMITED",
	"LINES", "LIST", "LOAD", "LOCAL", "LOCALTIME", "LOCALTIMESTAMP", "LOCATION",
	"LOCATOR", "LOCK", "LOCKS", "LOG", "LOGED", "LONG", "LOOP", "LOWER", "MAP",
	"MATCH", "MATERIALIZED", "MAX", "MAXLEN", "MEMBER", "MERGE", "METHOD",
	"METRICS", "MIN", "MINUS", "MINUTE", "MISSING", "MOD", "MODE", "MODIFIES",
	"MODIFY", "MODULE", "MONTH", "MULTI", "MULTISET", "NAME", "NAMES",
	"NATIONAL", "NATURAL", "NCHAR", "NCLOB", "NEW", "NEXT", "NO", "NONE", "NOT",
	"NULL", "NULLIF", "NUMBER", "NUMERIC", "OBJECT", "OF", "OFFLINE", "OFFSET",
	"OLD", "ON", "ONLINE", "ONLY", "OPAQUE", "OPEN", "OPERATOR", "OPTION", "OR",
	"ORDER", "ORDINALITY", "OTHER", "OTHERS", "OUT", "OUTER", "OUTPUT", "OVER",
	"OVERLAPS", "OVERRIDE", "OWNER", "PAD", "PARALLEL", "PARAMETER",
	"PARAMETERS", "PARTIAL", "PARTITION", "PARTITIONED", "PARTITIONS", "PATH",
	"PERCENT", "PERCENTILE", "PERMISSION", "PERMISSIONS", "PIPE", "PIPELINED",
	"PLAN", "POOL", "POSITION", "PRECISION", "PREPARE", "PRESERVE", "PRIMARY",
	"PRIOR", "PRIVATE", "PRIVILEGES", "PROCEDURE", "PROCESSED", "PROJECT",
	"PROJECTION", "PROPERTY", "PROVISIONING", "PUBLIC", "PUT", "QUERY", "QUIT",
	"QUORUM", "RAISE", "RANDOM", "RANGE", "RANK", "RAW", "READ", "READS",
	"REAL", "REBUILD", "RECORD", "RECURSIVE", "REDUCE", "REF", "REFERENCE",
	"REFERENCES", "REFERENCING", "REGEXP", "REGION", "REINDEX", "RELATIVE",
	"RELEASE", "REMAINDER", "RENAME", "REPEAT", "REPLACE", "REQUEST", "RESET",
	"RESIGNAL", "RESOURCE", "RESPONSE", "RESTORE", "RESTRICT", "RESULT",
	"RETURN", "RETURNING", "RETURNS", "REVERSE", "REVOKE", "RIGHT", "ROLE",
	"ROLES", "ROLLBACK", "ROLLUP", "ROUTINE", "ROW", "ROWS", "RULE", "RULES",
	"SAMPLE", "SATISFIES", "SAVE", "SAVEPOINT", "SCAN", "SCHEMA", "SCOPE",
	"SCROLL", "SEARCH", "SECOND", "SECTION", "SEGMENT", "SEGMENTS", "SELECT",
	"SELF", "SEMI", "SENSITIVE", "SEPARATE", "SEQUENCE", "SERIALIZABLE",
	"SESSION", "SET", "SETS", "SHARD", "SHARE", "SHARED", "SHORT", "SHOW",
	"SIGNAL", "SIMILAR", "SIZE", "SKEWED", "SMALLINT", "SNAPSHOT", "SOME",
	"SOURCE", "SPACE", "SPACES", "SPARSE", "SPECIFIC", "SPECIFICTYPE", "SPLIT",
	"SQL", "SQLCODE", "SQLERROR", "SQLEXCEPTION", "SQLSTATE", "SQLWARNING",
	"START", "STATE", "STATIC", "STATUS", "STORAGE", "STORE", "STORED",
	"STREAM", "STRING", "STRUCT", "STYLE", "SUB", "SUBMULTISET", "SUBPARTITION",
	"SUBSTRING", "SUBTYPE", "SUM", "SUPER", "SYMMETRIC", "SYNONYM", "SYSTEM",
	"TABLE", "TABLESAMPLE", "TEMP", "TEMPORARY", "TERMINATED", "TEXT", "THAN",
	"THEN", "THROUGHPUT", "TIME", "TIMESTAMP", "TIMEZONE", "TINYINT", "TO",
	"TOKEN", "TOTAL", "TOUCH", "TRAILING", "TRANSACTION", "TRANSFORM",
	"TRANSLATE", "TRANSLATION", "TREAT", "TRIGGER", "TRIM", "TRUE", "TRUNCATE",
	"TTL", "TUPLE", "TYPE", "UNDER", "UNDO", "UNION", "UNIQUE", "UNIT",
	"UNKNOWN", "UNLOGGED", "UNNEST", "UNPROCESSED", "UNSIGNED", "UNTIL",
	"UPDATE", "UPPER", "URL", "USAGE", "USE", "USER", "USERS", "USING", "UUID",
	"VACUUM", "VALUE", "VALUED", "VALUES", "VARCHAR", "VARIABLE", "VARIANCE",
	"VARINT", "VARYING", "VIEW", "VIEWS", "VIRTUAL", "VOID", "WAIT", "WHEN",
	"WHENEVER", "WHERE", "WHILE", "WINDOW", "WITH", "WITHIN", "WITHOUT", "WORK",
	"WRAPPED", "WRITE", "YEAR", "ZONE"
};

bool
ddb_is_reserved_word(const char *word, int len)
{
	char		upper[32];
	int			lo = 0,
				hi = lengthof(reserved_words) - 1;

	if (len <= 0 || len >= sizeof(upper))
		return false;
	for (int i = 0; i < len; i++)
		upper[i] = pg_ascii_toupper((unsigned char) word[i]);
	upper[len] = '\0';
	while (lo <= hi)
	{
		int			mid = (lo + hi) / 2;
		int			c = strcmp(upper, reserved_words[mid]);

		if (c == 0)
			return true;
		if (c < 0)
			hi = mid - 1;
		else
			lo = mid + 1;
	}
	return false;
}

/* ------------------------------------------------------------------------
 * Placeholders: one context per request
 * ------------------------------------------------------------------------
 */
struct DdbExprContext
{
	int			nnames;
	char	  **name_keys;		/* "#n" */
	char	  **name_vals;		/* the attribute names they stand for */
	bool	   *name_used;
	int			nvals;
	char	  **val_keys;		/* ":v" */
	DdbValue  **val_vals;
	bool	   *val_used;
};

/* A placeholder key is its sigil followed by one or more [A-Za-z0-9_]. */
static bool
placeholder_key_ok(const char *key, int len, char sigil)
{
	if (len < 2 || key[0] != sigil)
		return false;
	for (int i = 1; i < len; i++)
		if (!isalnum((unsigned char) key[i]) && key[i] != '_')
			return false;
	return true;
}

static void
value_errcontext(void *arg)
{
	errcontext("ExpressionAttributeValues key \"%s\"", (const char *) arg);
}

DdbExprContext *
ddb_expr_begin(Jsonb *names, Jsonb *vals)
{
	DdbExprContext *cx = palloc0(sizeof(DdbExprContext));
	JsonbIterator *it;
	JsonbValue	k,
				v;
	JsonbIteratorToken tok;

	if (names != NULL)
	{
		int			n;

		if (!JB_ROOT_IS_OBJECT(names))
			ereport(ERROR,
					(errcode(DDB_ERRCODE_VALIDATION),
					 errmsg("ValidationException: ExpressionAttributeNames must be a JSON object")));
		n = JB_ROOT_COUNT(names);
		if (n == 0)
			ereport(ERROR,
					(errcode(DDB_ERRCODE_VALIDATION),
					 errmsg("ValidationException: ExpressionAttributeNames must not be empty")));
		cx->name_keys = palloc(n * sizeof(char *));
		cx->name_vals = palloc(n * sizeof(char *));
		cx->name_used = palloc0(n * sizeof(bool));
		it = JsonbIteratorInit(&names->root);
		while ((tok = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
		{
			if (tok != WJB_KEY)
				continue;
			if (!placeholder_key_ok(k.val.string.val, k.val.string.len, '#'))
				ereport(ERROR,
						(errcode(DDB_ERRCODE_VALIDATION),
						 errmsg("ValidationException: ExpressionAttributeNames contains invalid key \"%.*s\"",
								k.val.string.len, k.val.string.val),
						 errhint("Keys are \"#\" followed by letters, digits or underscores.")));
			tok = JsonbIteratorNext(&it, &v, true);
			if (v.type != jbvString || v.val.string.len == 0)
				ereport(ERROR,
						(errcode(DDB_ERRCODE_VALIDATION),
						 errmsg("ValidationException: ExpressionAttributeNames contains invalid value for key \"%.*s\"",
								k.val.string.len, k.val.string.val),
						 errdetail("Each value must be a non-empty attribute name string.")));
			cx->name_keys[cx->nnames] = pnstrdup(k.val.string.val, k.val.string.len);
			cx->name_vals[cx->nnames] = pnstrdup(v.val.string.val, v.val.string.len);
			cx->nnames++;
		}
	}

	if (vals != NULL)
	{
		int			n;

		if (!JB_ROOT_IS_OBJECT(vals))
			ereport(ERROR,
					(errcode(DDB_ERRCODE_VALIDATION),
					 errmsg("ValidationException: ExpressionAttributeValues must be a JSON object")));
		n = JB_ROOT_COUNT(vals);
		if (n == 0)
			ereport(ERROR,
					(errcode(DDB_ERRCODE_VALIDATION),
					 errmsg("ValidationException: ExpressionAttributeValues must not be empty")));
		cx->val_keys = palloc(n * sizeof(char *));
		cx->val_vals = palloc(n * sizeof(DdbValue *));
		cx->val_used = palloc0(n * sizeof(bool));
		it = JsonbIteratorInit(&vals->root);
		while ((tok = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
		{
			ErrorContextCallback errcb;
			char	   *key;

			if (tok != WJB_KEY)
				continue;
			if (!placeholder_key_ok(k.val.string.val, k.val.string.len, ':'))
				ereport(ERROR,
						(errcode(DDB_ERRCODE_VALIDATION),
						 errmsg("ValidationException: ExpressionAttributeValues contains invalid key \"%.*s\"",
								k.val.string.len, k.val.string.val),
						 errhint("Keys are \":\" followed by letters, digits or underscores.")));
			key = pnstrdup(k.val.string.val, k.val.string.len);
			tok = JsonbIteratorNext(&it, &v, true);
			/* name the key in any error about its value */
			errcb.callback = value_errcontext;
			errcb.arg = key;
			errcb.previous = error_context_stack;
			error_context_stack = &errcb;
			cx->val_vals[cx->nvals] = ddb_value_from_jbv(&v);
			error_context_stack = errcb.previous;
			cx->val_keys[cx->nvals] = key;
			cx->nvals++;
		}
	}
	return cx;
}

/* DynamoDB rejects placeholders that no expression of the request used. */
void
ddb_expr_end(DdbExprContext *cx)
{
	StringInfoData buf;
	int			nunused = 0;

	initStringInfo(&buf);
	for (int i = 0; i < cx->nnames; i++)
		if (!cx->name_used[i])
			appendStringInfo(&buf, "%s%s", nunused++ ? ", " : "", cx->name_keys[i]);
	if (nunused > 0)
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: value provided in ExpressionAttributeNames unused in expressions: keys: {%s}",
						buf.data)));
	for (int i = 0; i < cx->nvals; i++)
		if (!cx->val_used[i])
			appendStringInfo(&buf, "%s%s", nunused++ ? ", " : "", cx->val_keys[i]);
	if (nunused > 0)
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: value provided in ExpressionAttributeValues unused in expressions: keys: {%s}",
						buf.data)));
	pfree(buf.data);
}

/* ------------------------------------------------------------------------
 * Tokenizer
 * ------------------------------------------------------------------------
 */
typedef enum TokType
{
	TOK_EOF,
	TOK_IDENT,					/* name, keyword or function name */
	TOK_NAMEREF,				/* #name */
	TOK_VALUEREF,				/* :value */
	TOK_INT,					/* digits (list indexes) */
	TOK_LPAREN,
	TOK_RPAREN,
	TOK_LBRACKET,
	TOK_RBRACKET,
	TOK_COMMA,
	TOK_DOT,
	TOK_EQ,
	TOK_NE,
	TOK_LT,
	TOK_LE,
	TOK_GT,
	TOK_GE,
	TOK_PLUS,
	TOK_MINUS,
	TOK_BAD						/* a character no token starts with */
} TokType;

typedef struct Token
{
	TokType		type;
	const char *start;
	int			len;
} Token;

static bool
ident_char(char c)
{
	return isalnum((unsigned char) c) || c == '_';
}

/* Scan one token starting at p; returns the position after it. */
static const char *
lex(const char *p, Token *t)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	t->start = p;
	t->len = 1;
	switch (*p)
	{
		case '\0':
			t->type = TOK_EOF;
			t->len = 0;
			return p;
		case '(':
			t->type = TOK_LPAREN;
			break;
		case ')':
			t->type = TOK_RPAREN;
			break;
		case '[':
			t->type = TOK_LBRACKET;
			break;
		case ']':
			t->type = TOK_RBRACKET;
			break;
		case ',':
			t->type = TOK_COMMA;
			break;
		case '.':
			t->type = TOK_DOT;
			break;
		case '=':
			t->type = TOK_EQ;
			break;
		case '+':
			t->type = TOK_PLUS;
			break;
		case '-':
			t->type = TOK_MINUS;
			break;
		case '<':
			t->type = TOK_LT;
			if (p[1] == '=')
				t->type = TOK_LE, t->len = 2;
			else if (p[1] == '>')
				t->type = TOK_NE, t->len = 2;
			break;
		case '>':
			t->type = TOK_GT;
			if (p[1] == '=')
				t->type = TOK_GE, t->len = 2;
			break;
		case '#':
		case ':':
			t->type = *p == '#' ? TOK_NAMEREF : TOK_VALUEREF;
			while (ident_char(p[t->len]))
				t->len++;
			if (t->len == 1)
				t->type = TOK_BAD;
			break;
		default:
			if (isdigit((unsigned char) *p))
			{
				t->type = TOK_INT;
				while (isdigit((unsigned char) p[t->len]))
					t->len++;
			}
			else if (isalpha((unsigned char) *p))
			{
				t->type = TOK_IDENT;
				while (ident_char(p[t->len]))
					t->len++;
			}
			else
			{
				/* show the whole (possibly multibyte) character */
				t->type = TOK_BAD;
				t->len = pg_utf_mblen((const unsigned char *) p);
				for (int i = 1; i < t->len; i++)
					if (p[i] == '\0')
						t->len = i;
			}
			break;
	}
	return p + t->len;
}

/* ------------------------------------------------------------------------
 * Parser state and errors
 * ------------------------------------------------------------------------
 */
typedef struct Parser
{
	DdbExprContext *cx;
	const char *what;			/* "ConditionExpression", ... */
	const char *pos;			/* scan position after tok */
	Token		tok;			/* current token */
	int			depth;			/* nesting of parentheses and functions */
	char	   *undefined_name;	/* first undefined #name, reported after parsing */
	char	   *undefined_value;	/* first undefined :value, likewise */
} Parser;

static void parse_error(Parser *ps, const char *fmt,...) pg_attribute_printf(2, 3) pg_attribute_noreturn();

static void
parse_error(Parser *ps, const char *fmt,...)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (;;)
	{
		va_list		args;
		int			needed;

		va_start(args, fmt);
		needed = appendStringInfoVA(&buf, fmt, args);
		va_end(args);
		if (needed == 0)
			break;
		enlargeStringInfo(&buf, needed);
	}
	ereport(ERROR,
			(errcode(DDB_ERRCODE_VALIDATION),
			 errmsg("ValidationException: invalid %s: %s", ps->what, buf.data)));
}

static void syntax_error(Parser *ps) pg_attribute_noreturn();

static void
syntax_error(Parser *ps)
{
	if (ps->tok.type == TOK_EOF)
		parse_error(ps, "syntax error at end of input");
	parse_error(ps, "syntax error at or near \"%.*s\"", ps->tok.len, ps->tok.start);
}

static void
advance(Parser *ps)
{
	ps->pos = lex(ps->pos, &ps->tok);
}

static void
expect(Parser *ps, TokType type)
{
	if (ps->tok.type != type)
		syntax_error(ps);
	advance(ps);
}

/* The token after the current one, without consuming anything. */
static TokType
peek_type(Parser *ps)
{
	Token		t;

	(void) lex(ps->pos, &t);
	return t.type;
}

static bool
tok_is_keyword(Parser *ps, const char *kw)
{
	return ps->tok.type == TOK_IDENT && ps->tok.len == strlen(kw) &&
		pg_strncasecmp(ps->tok.start, kw, ps->tok.len) == 0;
}

static void
enter(Parser *ps)
{
	check_stack_depth();
	if (++ps->depth > DDB_MAX_PARSE_DEPTH)
		parse_error(ps, "the expression is nested too deeply (at most %d levels of parentheses and functions)",
					DDB_MAX_PARSE_DEPTH);
}

static void
leave(Parser *ps)
{
	ps->depth--;
}

static void
parser_init(Parser *ps, DdbExprContext *cx, const char *text, const char *what)
{
	size_t		len = strlen(text);

	ps->cx = cx;
	ps->what = what;
	ps->depth = 0;
	ps->undefined_name = NULL;
	ps->undefined_value = NULL;
	if (len > DDB_MAX_EXPRESSION_BYTES)
		parse_error(ps, "expression size has exceeded the maximum allowed size of %d bytes; expression size: %zu",
					DDB_MAX_EXPRESSION_BYTES, len);
	ps->pos = text;
	advance(ps);
	if (ps->tok.type == TOK_EOF)
		parse_error(ps, "the expression can not be empty");
}

/* ------------------------------------------------------------------------
 * Paths and operands
 * ------------------------------------------------------------------------
 */
static char *
resolve_name(Parser *ps)
{
	DdbExprContext *cx = ps->cx;

	for (int i = 0; i < cx->nnames; i++)
		if (strlen(cx->name_keys[i]) == ps->tok.len &&
			memcmp(cx->name_keys[i], ps->tok.start, ps->tok.len) == 0)
		{
			cx->name_used[i] = true;
			return cx->name_vals[i];
		}
	/* syntax errors come first: report this once the whole text parsed */
	if (ps->undefined_name == NULL)
		ps->undefined_name = pnstrdup(ps->tok.start, ps->tok.len);
	return ps->undefined_name;
}

static DdbValue *
resolve_value(Parser *ps, const char **placeholder)
{
	DdbExprContext *cx = ps->cx;

	for (int i = 0; i < cx->nvals; i++)
		if (strlen(cx->val_keys[i]) == ps->tok.len &&
			memcmp(cx->val_keys[i], ps->tok.start, ps->tok.len) == 0)
		{
			cx->val_used[i] = true;
			*placeholder = cx->val_keys[i];
			return cx->val_vals[i];
		}
	/* as for names; a NULL placeholder marks the stand-in value */
	if (ps->undefined_value == NULL)
		ps->undefined_value = pnstrdup(ps->tok.start, ps->tok.len);
	*placeholder = NULL;
	return ddb_value_new(DDB_TYPE_NULL);
}

/* Once the text parsed: the placeholders it used must all be defined. */
static void
check_undefined(Parser *ps)
{
	if (ps->undefined_name)
		parse_error(ps, "an expression attribute name used in the document path is not defined; attribute name: %s",
					ps->undefined_name);
	if (ps->undefined_value)
		parse_error(ps, "an expression attribute value used in expression is not defined; attribute value: %s",
					ps->undefined_value);
}

/* A constant whose type static checks may look at (not an undefined one). */
static bool
known_value(DdbOperand *op)
{
	return op->kind == DDB_OPERAND_VALUE && op->placeholder != NULL;
}

/* One attribute name of a path: a bare name or a #placeholder. */
static char *
parse_path_name(Parser *ps)
{
	char	   *name;

	if (ps->tok.type == TOK_NAMEREF)
		name = resolve_name(ps);
	else if (ps->tok.type == TOK_IDENT)
	{
		if (ddb_is_reserved_word(ps->tok.start, ps->tok.len))
			parse_error(ps, "attribute name is a reserved keyword; reserved keyword: %.*s",
						ps->tok.len, ps->tok.start);
		name = pnstrdup(ps->tok.start, ps->tok.len);
	}
	else
		syntax_error(ps);
	advance(ps);
	return name;
}

/* path : name ('.' name | '[' integer ']')* */
static DdbPath *
parse_path(Parser *ps)
{
	DdbPath    *path = palloc0(sizeof(DdbPath));
	int			cap = 4;

	path->elems = palloc(cap * sizeof(DdbPathElem));
	path->elems[0].kind = DDB_PATH_NAME;
	path->elems[0].name = parse_path_name(ps);
	path->nelems = 1;
	for (;;)
	{
		DdbPathElem *e;

		if (ps->tok.type != TOK_DOT && ps->tok.type != TOK_LBRACKET)
			break;
		if (path->nelems == DDB_MAX_NESTING_DEPTH)
			parse_error(ps, "the document path has too many nesting levels; nesting levels: %d (at most %d)",
						path->nelems + 1, DDB_MAX_NESTING_DEPTH);
		if (path->nelems == cap)
		{
			cap *= 2;
			path->elems = repalloc(path->elems, cap * sizeof(DdbPathElem));
		}
		e = &path->elems[path->nelems++];
		if (ps->tok.type == TOK_DOT)
		{
			advance(ps);
			e->kind = DDB_PATH_NAME;
			e->name = parse_path_name(ps);
		}
		else
		{
			advance(ps);
			if (ps->tok.type != TOK_INT)
				syntax_error(ps);
			if (ps->tok.len > 9)
				parse_error(ps, "list index is out of range: %.*s", ps->tok.len, ps->tok.start);
			e->kind = DDB_PATH_INDEX;
			e->name = NULL;
			e->index = atoi(pnstrdup(ps->tok.start, ps->tok.len));
			advance(ps);
			expect(ps, TOK_RBRACKET);
		}
	}
	return path;
}

static DdbOperand *
make_operand(DdbOperandKind kind)
{
	DdbOperand *op = palloc0(sizeof(DdbOperand));

	op->kind = kind;
	return op;
}

static DdbOperand *
parse_value_operand(Parser *ps)
{
	DdbOperand *op = make_operand(DDB_OPERAND_VALUE);

	op->value = resolve_value(ps, &op->placeholder);
	advance(ps);
	return op;
}

static bool
is_condition_function(const char *name)
{
	return strcmp(name, "attribute_exists") == 0 ||
		strcmp(name, "attribute_not_exists") == 0 ||
		strcmp(name, "attribute_type") == 0 ||
		strcmp(name, "begins_with") == 0 ||
		strcmp(name, "contains") == 0;
}

static bool
is_update_function(const char *name)
{
	return strcmp(name, "if_not_exists") == 0 || strcmp(name, "list_append") == 0;
}

static void operand_type_error(Parser *ps, const char *op, DdbValue *v) pg_attribute_noreturn();

static void
operand_type_error(Parser *ps, const char *op, DdbValue *v)
{
	parse_error(ps, "incorrect operand type for operator or function; operator or function: %s, operand type: %s",
				op, ddb_type_name(v->type));
}

/*
 * A function call, parsed before its name is judged: like DynamoDB, the
 * grammar takes any name with any number of arguments, and the meaning
 * (known function, right place, right arguments) is checked afterwards.
 */
typedef struct Call
{
	char	   *name;
	int			nargs;
	DdbOperand **args;
} Call;

typedef DdbOperand *(*ArgParser) (Parser *ps);

/* call : name '(' arg (',' arg)* ')' */
static Call *
parse_call(Parser *ps, ArgParser parse_arg)
{
	Call	   *call = palloc0(sizeof(Call));
	int			cap = 4;

	call->name = pnstrdup(ps->tok.start, ps->tok.len);
	call->args = palloc(cap * sizeof(DdbOperand *));
	enter(ps);
	advance(ps);				/* the name */
	advance(ps);				/* ( */
	for (;;)
	{
		if (call->nargs == cap)
		{
			cap *= 2;
			call->args = repalloc(call->args, cap * sizeof(DdbOperand *));
		}
		call->args[call->nargs++] = parse_arg(ps);
		if (ps->tok.type != TOK_COMMA)
			break;
		advance(ps);
	}
	expect(ps, TOK_RPAREN);
	leave(ps);
	return call;
}

static void
check_nargs(Parser *ps, Call *call, int want)
{
	if (call->nargs != want)
		parse_error(ps, "incorrect number of operands for operator or function; operator or function: %s, number of operands: %d",
					call->name, call->nargs);
}

/* Some arguments must be document paths, not values or function calls. */
static DdbPath *
call_path_arg(Parser *ps, Call *call, int i)
{
	if (call->args[i]->kind != DDB_OPERAND_PATH)
		parse_error(ps, "operator or function requires a document path; operator or function: %s",
					call->name);
	return call->args[i]->path;
}

static bool
at_call(Parser *ps)
{
	return ps->tok.type == TOK_IDENT && peek_type(ps) == TOK_LPAREN;
}

/* A :value or a path operand; NULL when a function call comes next. */
static DdbOperand *
parse_plain_operand(Parser *ps)
{
	DdbOperand *op;

	if (ps->tok.type == TOK_VALUEREF)
		return parse_value_operand(ps);
	if (at_call(ps))
		return NULL;
	op = make_operand(DDB_OPERAND_PATH);
	op->path = parse_path(ps);
	return op;
}

/* operand : path | :value | size '(' path ')' */
static DdbOperand *
parse_operand(Parser *ps)
{
	DdbOperand *op;
	Call	   *call;

	op = parse_plain_operand(ps);
	if (op != NULL)
		return op;

	call = parse_call(ps, parse_operand);
	if (strcmp(call->name, "size") == 0)
	{
		check_nargs(ps, call, 1);
		op = make_operand(DDB_OPERAND_SIZE);
		op->path = call_path_arg(ps, call, 0);
		return op;
	}
	if (is_condition_function(call->name))
		parse_error(ps, "the function is not allowed to be used this way in an expression; function: %s",
					call->name);
	if (is_update_function(call->name))
		parse_error(ps, "the function is not allowed in a condition expression; function: %s",
					call->name);
	parse_error(ps, "invalid function name; function: %s", call->name);
}

/* ------------------------------------------------------------------------
 * Conditions
 * ------------------------------------------------------------------------
 */
static DdbCondition *parse_or(Parser *ps);

static DdbCondition *
make_cond(DdbCondKind kind, int nargs)
{
	DdbCondition *c = palloc0(sizeof(DdbCondition));

	c->kind = kind;
	c->nargs = nargs;
	if (nargs > 0)
		c->args = palloc0(nargs * sizeof(DdbOperand *));
	return c;
}

static bool
is_ordered_scalar(DdbValue *v)
{
	return v->type == DDB_TYPE_S || v->type == DDB_TYPE_N || v->type == DDB_TYPE_B;
}

/*
 * bool_function '(' args ')': attribute_exists(path),
 * attribute_not_exists(path), attribute_type(operand, :type),
 * begins_with(operand, operand), contains(operand, operand).  DynamoDB
 * accepts values as well as paths where a path is not required.
 */
static DdbCondition *
condition_function(Parser *ps, Call *call)
{
	DdbCondition *c;
	DdbCondKind kind;
	int			nargs;

	if (strcmp(call->name, "attribute_exists") == 0)
		kind = DDB_COND_ATTRIBUTE_EXISTS, nargs = 1;
	else if (strcmp(call->name, "attribute_not_exists") == 0)
		kind = DDB_COND_ATTRIBUTE_NOT_EXISTS, nargs = 1;
	else if (strcmp(call->name, "attribute_type") == 0)
		kind = DDB_COND_ATTRIBUTE_TYPE, nargs = 2;
	else if (strcmp(call->name, "begins_with") == 0)
		kind = DDB_COND_BEGINS_WITH, nargs = 2;
	else
		kind = DDB_COND_CONTAINS, nargs = 2;

	check_nargs(ps, call, nargs);
	c = make_cond(kind, nargs);
	memcpy(c->args, call->args, nargs * sizeof(DdbOperand *));
	if (nargs == 1)
		(void) call_path_arg(ps, call, 0);

	if (kind == DDB_COND_ATTRIBUTE_TYPE)
	{
		DdbValue   *t = c->args[1]->value;

		if (c->args[1]->kind != DDB_OPERAND_VALUE)
			parse_error(ps, "incorrect operand type for operator or function; operator or function: attribute_type, operand type: document path");
		if (!known_value(c->args[1]))
			c->type_arg = DDB_TYPE_NULL;
		else if (t->type != DDB_TYPE_S ||
				 !ddb_type_from_name(t->u.str.data, t->u.str.len, &c->type_arg))
			parse_error(ps, "invalid attribute type name found; type: %s, valid types: { B,NULL,SS,BOOL,L,BS,N,NS,S,M }",
						t->type == DDB_TYPE_S ? pnstrdup(t->u.str.data, t->u.str.len) :
						ddb_type_name(t->type));
	}
	if (kind == DDB_COND_BEGINS_WITH)
		for (int i = 0; i < 2; i++)
			if (known_value(c->args[i]) &&
				c->args[i]->value->type != DDB_TYPE_S &&
				c->args[i]->value->type != DDB_TYPE_B)
				operand_type_error(ps, "begins_with", c->args[i]->value);
	return c;
}

static bool
at_comparison(Parser *ps)
{
	return (ps->tok.type >= TOK_EQ && ps->tok.type <= TOK_GE) ||
		tok_is_keyword(ps, "BETWEEN") || tok_is_keyword(ps, "IN");
}

static const char *
cmp_op_name(DdbCompareOp op)
{
	static const char *const names[] = {"=", "<>", "<", "<=", ">", ">="};

	return names[op];
}

/*
 * primary : '(' or_cond ')' | bool_function | operand comparator operand
 *         | operand BETWEEN operand AND operand | operand IN '(' ... ')'
 */
static DdbCondition *
parse_primary(Parser *ps)
{
	DdbCondition *c;
	DdbOperand *left;

	if (ps->tok.type == TOK_LPAREN)
	{
		enter(ps);
		advance(ps);
		c = parse_or(ps);
		expect(ps, TOK_RPAREN);
		leave(ps);
		return c;
	}
	if (at_call(ps))
	{
		char	   *name = pnstrdup(ps->tok.start, ps->tok.len);

		if (is_condition_function(name))
		{
			c = condition_function(ps, parse_call(ps, parse_operand));
			/* a boolean function is not an operand */
			if (at_comparison(ps))
				parse_error(ps, "the function is not allowed to be used this way in an expression; function: %s",
							name);
			return c;
		}
		/* anything else is an operand: size() or an error */
	}

	left = parse_operand(ps);
	switch (ps->tok.type)
	{
		case TOK_EQ:
		case TOK_NE:
		case TOK_LT:
		case TOK_LE:
		case TOK_GT:
		case TOK_GE:
			c = make_cond(DDB_COND_COMPARE, 2);
			c->op = ps->tok.type == TOK_EQ ? DDB_CMP_EQ :
				ps->tok.type == TOK_NE ? DDB_CMP_NE :
				ps->tok.type == TOK_LT ? DDB_CMP_LT :
				ps->tok.type == TOK_LE ? DDB_CMP_LE :
				ps->tok.type == TOK_GT ? DDB_CMP_GT : DDB_CMP_GE;
			advance(ps);
			c->args[0] = left;
			c->args[1] = parse_operand(ps);
			/* ordering needs scalars; a constant of another type is an error */
			if (c->op != DDB_CMP_EQ && c->op != DDB_CMP_NE)
				for (int i = 0; i < 2; i++)
					if (known_value(c->args[i]) &&
						!is_ordered_scalar(c->args[i]->value))
						operand_type_error(ps, cmp_op_name(c->op), c->args[i]->value);
			return c;
		default:
			break;
	}

	if (tok_is_keyword(ps, "BETWEEN"))
	{
		DdbValue   *lo,
				   *hi;

		advance(ps);
		c = make_cond(DDB_COND_BETWEEN, 3);
		c->args[0] = left;
		c->args[1] = parse_operand(ps);
		if (!tok_is_keyword(ps, "AND"))
			syntax_error(ps);
		advance(ps);
		c->args[2] = parse_operand(ps);
		for (int i = 0; i < 3; i++)
			if (known_value(c->args[i]) &&
				!is_ordered_scalar(c->args[i]->value))
				operand_type_error(ps, "BETWEEN", c->args[i]->value);
		lo = known_value(c->args[1]) ? c->args[1]->value : NULL;
		hi = known_value(c->args[2]) ? c->args[2]->value : NULL;
		if (lo && hi && lo->type != hi->type)
			parse_error(ps, "the BETWEEN operator requires same data type for lower and upper bounds; lower bound operand: AttributeValue: %s, upper bound operand: AttributeValue: %s",
						ddb_value_describe(lo), ddb_value_describe(hi));
		if (lo && hi && ddb_scalar_cmp(lo, hi) > 0)
			parse_error(ps, "the BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: %s, upper bound operand: AttributeValue: %s",
						ddb_value_describe(lo), ddb_value_describe(hi));
		return c;
	}

	if (tok_is_keyword(ps, "IN"))
	{
		int			cap = 4;

		advance(ps);
		expect(ps, TOK_LPAREN);
		c = make_cond(DDB_COND_IN, 0);
		c->args = palloc(cap * sizeof(DdbOperand *));
		c->args[c->nargs++] = left;
		for (;;)
		{
			if (c->nargs == cap)
			{
				cap *= 2;
				c->args = repalloc(c->args, cap * sizeof(DdbOperand *));
			}
			c->args[c->nargs++] = parse_operand(ps);
			/* 100 operands in all, the left one included (as DynamoDB counts) */
			if (c->nargs > DDB_MAX_IN_OPERANDS)
				parse_error(ps, "too many operands for the IN operator; maximum: %d operands, the left one included",
							DDB_MAX_IN_OPERANDS);
			if (ps->tok.type != TOK_COMMA)
				break;
			advance(ps);
		}
		expect(ps, TOK_RPAREN);
		return c;
	}

	/* size() alone is not a condition */
	if (left->kind == DDB_OPERAND_SIZE)
		parse_error(ps, "the function is not allowed to be used this way in an expression; function: size");
	syntax_error(ps);
}

/* not_cond : NOT not_cond | primary */
static DdbCondition *
parse_not(Parser *ps)
{
	DdbCondition *c;

	if (!tok_is_keyword(ps, "NOT"))
		return parse_primary(ps);
	enter(ps);
	advance(ps);
	c = make_cond(DDB_COND_NOT, 0);
	c->left = parse_not(ps);
	leave(ps);
	return c;
}

/* and_cond : not_cond (AND not_cond)* */
static DdbCondition *
parse_and(Parser *ps)
{
	DdbCondition *c = parse_not(ps);

	while (tok_is_keyword(ps, "AND"))
	{
		DdbCondition *n = make_cond(DDB_COND_AND, 0);

		advance(ps);
		n->left = c;
		n->right = parse_not(ps);
		c = n;
	}
	return c;
}

/* or_cond : and_cond (OR and_cond)* */
static DdbCondition *
parse_or(Parser *ps)
{
	DdbCondition *c = parse_and(ps);

	while (tok_is_keyword(ps, "OR"))
	{
		DdbCondition *n = make_cond(DDB_COND_OR, 0);

		advance(ps);
		n->left = c;
		n->right = parse_and(ps);
		c = n;
	}
	return c;
}

DdbCondition *
ddb_parse_condition(DdbExprContext *cx, const char *text, const char *what)
{
	Parser		ps;
	DdbCondition *c;

	parser_init(&ps, cx, text, what);
	c = parse_or(&ps);
	if (ps.tok.type != TOK_EOF)
		syntax_error(&ps);
	check_undefined(&ps);
	return c;
}

/* ------------------------------------------------------------------------
 * Overlapping paths (updates and projections)
 * ------------------------------------------------------------------------
 */
char *
ddb_path_to_string(DdbPath *path)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '[');
	for (int i = 0; i < path->nelems; i++)
	{
		if (i > 0)
			appendStringInfoString(&buf, ", ");
		if (path->elems[i].kind == DDB_PATH_NAME)
			appendStringInfoString(&buf, path->elems[i].name);
		else
			appendStringInfo(&buf, "[%d]", path->elems[i].index);
	}
	appendStringInfoChar(&buf, ']');
	return buf.data;
}

/*
 * DynamoDB rejects two paths of one update or projection where one is a
 * prefix of the other ("overlap": a and a.b, or a twice) or where they
 * treat one attribute both as a map and as a list ("conflict": a.b and
 * a[0]).
 */
static void
check_paths(Parser *ps, DdbPath **paths, int npaths)
{
	for (int i = 0; i < npaths; i++)
		for (int j = i + 1; j < npaths; j++)
		{
			DdbPath    *p = paths[i],
					   *q = paths[j];
			int			n = Min(p->nelems, q->nelems);
			int			k;
			bool		differ = false;

			for (k = 0; k < n && !differ; k++)
			{
				DdbPathElem *a = &p->elems[k],
						   *b = &q->elems[k];

				if (a->kind != b->kind)
					parse_error(ps, "two document paths conflict with each other; must remove or rewrite one of these paths; path one: %s, path two: %s",
								ddb_path_to_string(p), ddb_path_to_string(q));
				if (a->kind == DDB_PATH_NAME ? strcmp(a->name, b->name) != 0 :
					a->index != b->index)
					differ = true;
			}
			if (!differ)
				parse_error(ps, "two document paths overlap with each other; must remove or rewrite one of these paths; path one: %s, path two: %s",
							ddb_path_to_string(p), ddb_path_to_string(q));
		}
}

/* ------------------------------------------------------------------------
 * Updates
 * ------------------------------------------------------------------------
 */
static DdbOperand *parse_set_operand(Parser *ps);

static void
check_constant_type(Parser *ps, DdbOperand *op, const char *opname, DdbType want)
{
	if (known_value(op) && op->value->type != want)
		operand_type_error(ps, opname, op->value);
}

/*
 * set_operand : path | :value
 *             | if_not_exists '(' path ',' set_operand ')'
 *             | list_append '(' set_operand ',' set_operand ')'
 */
static DdbOperand *
parse_set_operand(Parser *ps)
{
	DdbOperand *op;
	Call	   *call;

	op = parse_plain_operand(ps);
	if (op != NULL)
		return op;

	call = parse_call(ps, parse_set_operand);
	if (strcmp(call->name, "if_not_exists") == 0)
	{
		check_nargs(ps, call, 2);
		op = make_operand(DDB_OPERAND_IF_NOT_EXISTS);
		op->path = call_path_arg(ps, call, 0);
		op->left = call->args[1];
		return op;
	}
	if (strcmp(call->name, "list_append") == 0)
	{
		check_nargs(ps, call, 2);
		op = make_operand(DDB_OPERAND_LIST_APPEND);
		op->left = call->args[0];
		op->right = call->args[1];
		/* DynamoDB refuses list_append(list_append(...), ...) */
		if (op->left->kind == DDB_OPERAND_LIST_APPEND ||
			op->right->kind == DDB_OPERAND_LIST_APPEND)
			parse_error(ps, "the function is not allowed to be used this way in an expression; function: list_append");
		check_constant_type(ps, op->left, "list_append", DDB_TYPE_L);
		check_constant_type(ps, op->right, "list_append", DDB_TYPE_L);
		return op;
	}
	if (is_condition_function(call->name) || strcmp(call->name, "size") == 0)
		parse_error(ps, "the function is not allowed in an update expression; function: %s",
					call->name);
	parse_error(ps, "invalid function name; function: %s", call->name);
}

/* set_value : set_operand (('+' | '-') set_operand)? */
static DdbOperand *
parse_set_value(Parser *ps)
{
	DdbOperand *left = parse_set_operand(ps);
	DdbOperand *op;

	if (ps->tok.type != TOK_PLUS && ps->tok.type != TOK_MINUS)
		return left;
	op = make_operand(ps->tok.type == TOK_PLUS ? DDB_OPERAND_PLUS : DDB_OPERAND_MINUS);
	advance(ps);
	op->left = left;
	op->right = parse_set_operand(ps);
	check_constant_type(ps, op->left, op->kind == DDB_OPERAND_PLUS ? "+" : "-", DDB_TYPE_N);
	check_constant_type(ps, op->right, op->kind == DDB_OPERAND_PLUS ? "+" : "-", DDB_TYPE_N);
	return op;
}

DdbUpdate *
ddb_parse_update(DdbExprContext *cx, const char *text)
{
	static const char *const clause_names[] = {"SET", "REMOVE", "ADD", "DELETE"};
	Parser		ps;
	DdbUpdate  *u = palloc0(sizeof(DdbUpdate));
	bool		seen[4] = {false, false, false, false};
	int			cap = 8;
	DdbPath   **paths;

	parser_init(&ps, cx, text, "UpdateExpression");
	u->actions = palloc(cap * sizeof(DdbUpdateAction));
	while (ps.tok.type != TOK_EOF)
	{
		int			clause = -1;

		for (int i = 0; i < 4; i++)
			if (tok_is_keyword(&ps, clause_names[i]))
				clause = i;
		if (clause < 0)
			syntax_error(&ps);
		if (seen[clause])
			parse_error(&ps, "the \"%s\" section can only be used once in an update expression",
						clause_names[clause]);
		seen[clause] = true;
		advance(&ps);

		for (;;)
		{
			DdbUpdateAction *a;

			if (u->nactions == cap)
			{
				cap *= 2;
				u->actions = repalloc(u->actions, cap * sizeof(DdbUpdateAction));
			}
			a = &u->actions[u->nactions++];
			a->kind = (DdbUpdateActionKind) clause;
			a->path = parse_path(&ps);
			a->value = NULL;
			switch (a->kind)
			{
				case DDB_UPDATE_SET:
					expect(&ps, TOK_EQ);
					a->value = parse_set_value(&ps);
					break;
				case DDB_UPDATE_REMOVE:
					break;
				case DDB_UPDATE_ADD:
				case DDB_UPDATE_DELETE:
					if (ps.tok.type != TOK_VALUEREF)
						syntax_error(&ps);
					a->value = parse_value_operand(&ps);
					if (known_value(a->value) && a->kind == DDB_UPDATE_ADD
						? !(a->value->value->type == DDB_TYPE_N || ddb_type_is_set(a->value->value->type))
						: !ddb_type_is_set(a->value->value->type))
						parse_error(&ps, "incorrect operand type for operator or function; operator: %s, operand type: %s",
									clause_names[clause], ddb_type_name(a->value->value->type));
					break;
			}
			if (ps.tok.type != TOK_COMMA)
				break;
			advance(&ps);
		}
	}

	check_undefined(&ps);
	paths = palloc(u->nactions * sizeof(DdbPath *));
	for (int i = 0; i < u->nactions; i++)
		paths[i] = u->actions[i].path;
	check_paths(&ps, paths, u->nactions);
	pfree(paths);
	return u;
}

/* ------------------------------------------------------------------------
 * Projections
 * ------------------------------------------------------------------------
 */
DdbProjection *
ddb_parse_projection(DdbExprContext *cx, const char *text)
{
	Parser		ps;
	DdbProjection *p = palloc0(sizeof(DdbProjection));
	int			cap = 8;

	parser_init(&ps, cx, text, "ProjectionExpression");
	p->paths = palloc(cap * sizeof(DdbPath *));
	for (;;)
	{
		if (p->npaths == cap)
		{
			cap *= 2;
			p->paths = repalloc(p->paths, cap * sizeof(DdbPath *));
		}
		p->paths[p->npaths++] = parse_path(&ps);
		if (ps.tok.type != TOK_COMMA)
			break;
		advance(&ps);
	}
	if (ps.tok.type != TOK_EOF)
		syntax_error(&ps);
	check_undefined(&ps);
	check_paths(&ps, p->paths, p->npaths);
	return p;
}

/* ------------------------------------------------------------------------
 * Key conditions (for Query)
 * ------------------------------------------------------------------------
 */
static void key_condition_error(const char *fmt,...) pg_attribute_printf(1, 2) pg_attribute_noreturn();

static void
key_condition_error(const char *fmt,...)
{
	StringInfoData buf;

	initStringInfo(&buf);
	for (;;)
	{
		va_list		args;
		int			needed;

		va_start(args, fmt);
		needed = appendStringInfoVA(&buf, fmt, args);
		va_end(args);
		if (needed == 0)
			break;
		enlargeStringInfo(&buf, needed);
	}
	ereport(ERROR,
			(errcode(DDB_ERRCODE_VALIDATION),
			 errmsg("ValidationException: %s", buf.data)));
}

/* The key attribute a simple condition is about, or NULL. */
static const char *
key_condition_attribute(DdbCondition *c)
{
	DdbOperand *a = c->args[0];

	for (int i = 1; i < c->nargs; i++)
		if (c->args[i]->kind != DDB_OPERAND_VALUE)
			key_condition_error("invalid KeyConditionExpression: the right-hand side of a key condition must be a value");
	if (a->kind != DDB_OPERAND_PATH)
		key_condition_error("invalid KeyConditionExpression: a key condition must name a key attribute on its left-hand side");
	if (a->path->nelems != 1)
		key_condition_error("invalid KeyConditionExpression: key conditions cannot use nested attribute paths; path: %s",
							ddb_path_to_string(a->path));
	for (int i = 1; i < c->nargs; i++)
	{
		DdbType		t = c->args[i]->value->type;

		if (t != DDB_TYPE_S && t != DDB_TYPE_N && t != DDB_TYPE_B)
			key_condition_error("invalid KeyConditionExpression: key values must be of type S, N or B; operand type: %s",
								ddb_type_name(t));
	}
	return a->path->elems[0].name;
}

static void
key_condition_one(DdbCondition *c, const char *pk_name, const char *sk_name,
				  DdbKeyCondition *out, bool *seen_pk)
{
	const char *attr;

	switch (c->kind)
	{
		case DDB_COND_AND:
			key_condition_error("invalid KeyConditionExpression: a key condition can have at most two conditions joined by AND");
		case DDB_COND_OR:
		case DDB_COND_NOT:
		case DDB_COND_IN:
		case DDB_COND_ATTRIBUTE_EXISTS:
		case DDB_COND_ATTRIBUTE_NOT_EXISTS:
		case DDB_COND_ATTRIBUTE_TYPE:
		case DDB_COND_CONTAINS:
			key_condition_error("invalid operator used in KeyConditionExpression: %s",
								c->kind == DDB_COND_OR ? "OR" :
								c->kind == DDB_COND_NOT ? "NOT" :
								c->kind == DDB_COND_IN ? "IN" :
								c->kind == DDB_COND_ATTRIBUTE_EXISTS ? "attribute_exists" :
								c->kind == DDB_COND_ATTRIBUTE_NOT_EXISTS ? "attribute_not_exists" :
								c->kind == DDB_COND_ATTRIBUTE_TYPE ? "attribute_type" : "contains");
		case DDB_COND_COMPARE:
			if (c->op == DDB_CMP_NE)
				key_condition_error("invalid operator used in KeyConditionExpression: <>");
			break;
		case DDB_COND_BETWEEN:
		case DDB_COND_BEGINS_WITH:
			break;
	}

	attr = key_condition_attribute(c);
	if (strcmp(attr, pk_name) == 0)
	{
		if (*seen_pk)
			key_condition_error("KeyConditionExpressions must only contain one condition per key");
		if (c->kind != DDB_COND_COMPARE || c->op != DDB_CMP_EQ)
			key_condition_error("query key condition not supported: the partition key \"%s\" takes only =",
								pk_name);
		out->pk_value = c->args[1]->value;
		*seen_pk = true;
	}
	else if (sk_name != NULL && strcmp(attr, sk_name) == 0)
	{
		if (out->has_sk)
			key_condition_error("KeyConditionExpressions must only contain one condition per key");
		out->has_sk = true;
		out->sk_kind = c->kind;
		out->sk_op = c->op;
		out->sk_value = c->args[1]->value;
		out->sk_value2 = c->kind == DDB_COND_BETWEEN ? c->args[2]->value : NULL;
	}
	else
		key_condition_error("query key condition not supported: \"%s\" is not a key attribute",
							attr);
}

/*
 * Check a parsed KeyConditionExpression against the table's key attribute
 * names (sk_name NULL: no sort key) and reduce it to *out.
 */
void
ddb_analyze_key_condition(DdbCondition *cond, const char *pk_name,
						  const char *sk_name, DdbKeyCondition *out)
{
	bool		seen_pk = false;

	memset(out, 0, sizeof(DdbKeyCondition));
	if (cond->kind == DDB_COND_AND)
	{
		key_condition_one(cond->left, pk_name, sk_name, out, &seen_pk);
		key_condition_one(cond->right, pk_name, sk_name, out, &seen_pk);
	}
	else
		key_condition_one(cond, pk_name, sk_name, out, &seen_pk);
	if (!seen_pk)
		key_condition_error("query condition missed key schema element: %s", pk_name);
}
