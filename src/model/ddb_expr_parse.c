/*-------------------------------------------------------------------------
 *
 * ddb_expr_parse.c
 *	  Tokenizer, parser and static validation of DynamoDB's expressions.
 *
 * DynamoDB checks an expression in three stages, and which error a request
 * gets depends on them, so ddb follows the same stages:
 *
 *	1. Parse.  The text is tokenized and parsed by the grammar below; the
 *	   first syntax error is reported at once as "Syntax error; token: "x",
 *	   near: "...""; so are redundant parentheses, at the closing one.
 *	2. Walk.  The parse tree is walked in text order (a node before its
 *	   children, except where noted): unknown functions, functions used in
 *	   the wrong kind of expression or the wrong place, reserved words as
 *	   bare names, list indexes out of range, and an update section used
 *	   twice (reported after that section's actions).
 *	3. Validate.  Placeholders are resolved and operators checked, children
 *	   before their operator (post-order, left to right): undefined #names
 *	   and :values, path depth, operand counts and types, repeated paths,
 *	   BETWEEN bounds, IN size, operator count; for updates and projections
 *	   the target paths first (overlap and conflict), in reverse order of
 *	   writing, as DynamoDB builds its path tree from the last path back.
 *
 * The grammar (DynamoDB's; keywords are case-insensitive, function names
 * case-sensitive):
 *
 *	condition  : operand comparator operand
 *	           | operand IN '(' operand (',' operand)* ')'
 *	           | operand BETWEEN operand AND operand
 *	           | function
 *	           | '(' condition ')'
 *	           | NOT condition          -- binds tighter than AND, AND than OR
 *	           | condition AND condition | condition OR condition
 *	operand    : path | :value | function | '(' operand ')'
 *	function   : ID '(' operand (',' operand)* ')'
 *	update     : (SET set_action (',' set_action)*
 *	             | REMOVE path (',' path)*
 *	             | ADD path :value (',' path :value)*
 *	             | DELETE path :value (',' path :value)*)+
 *	set_action : path '=' (operand | arithmetic)
 *	arithmetic : operand ('+' | '-') operand | '(' arithmetic ')'
 *	projection : path (',' path)*
 *	path       : (ID | #name) ('.' (ID | #name) | '[' INDEX ']')*
 *
 * Tokens: ID is a letter then letters, digits or '_'; #name and :value a
 * sigil then one or more of those; INDEX is 0 or digits without a leading
 * zero; whitespace separates; any other character is a token of its own.
 * Where the grammar needs more than one token of lookahead (a '(' opening a
 * condition or an operand; a '(' opening an operand or arithmetic), both
 * alternatives are tried and the error, if both fail, is reported at the
 * furthest token either reached -- which is where DynamoDB's adaptive
 * parser detects it.  The error message's "near" is the source from the
 * token before the offending one to the token after it, whitespace
 * included; at the end of the text the token is "<EOF>".
 *
 * The DdbExprContext records which placeholders the expressions of one
 * request used, so that ddb_expr_end can reject the unused ones.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <setjmp.h>

#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "ddb.h"
#include "model/ddb_expr.h"

/* Nesting of parentheses and functions the parser accepts (ddb's limit) */
#define DDB_MAX_PARSE_DEPTH		200

/* DynamoDB's limits on one expression */
#define DDB_MAX_OPERATORS		300		/* operators and functions */
#define DDB_MAX_PLACEHOLDER_BYTES 255	/* a #name or :value key */

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
 * Errors
 * ------------------------------------------------------------------------
 */
#define VALIDATION_PREFIX	"ValidationException: "

static void validation_error(const char *message) pg_attribute_noreturn();

/* A ValidationException with DynamoDB's text (already formatted). */
static void
validation_error(const char *message)
{
	ereport(ERROR,
			(errcode(DDB_ERRCODE_VALIDATION),
			 errmsg(VALIDATION_PREFIX "%s", message)));
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
static void
check_placeholder_key(const char *key, int len, char sigil)
{
	bool		ok = len >= 2 && key[0] == sigil;

	if (len > DDB_MAX_PLACEHOLDER_BYTES)
		validation_error(sigil == '#' ?
						 psprintf(DDB_MSG_NAMES_KEY_TOO_LONG, len) :
						 DDB_MSG_VALUES_KEY_TOO_LONG);
	for (int i = 1; ok && i < len; i++)
		if (!isalnum((unsigned char) key[i]) && key[i] != '_')
			ok = false;
	if (!ok)
		validation_error(psprintf(sigil == '#' ? DDB_MSG_NAMES_INVALID_KEY :
								  DDB_MSG_VALUES_INVALID_KEY,
								  pnstrdup(key, len)));
}

/*
 * Raise edata, an error that converting ExpressionAttributeValues entry
 * 'key' raised (copied by the caller, which flushed the error state), as
 * DynamoDB reports it: an invalid value is "ExpressionAttributeValues
 * contains invalid value: <why> for key :v".  An over-long attribute name
 * inside the value is a request-level error that DynamoDB reports bare, as
 * is anything but a ValidationException.  Shared by the SQL functions'
 * document-form values (placeholder_value) and ddb_api's typed ones.
 */
bool
ddb_value_error_frameable(ErrorData *edata)
{
	size_t		plen = strlen(VALIDATION_PREFIX);

	return edata->sqlerrcode == DDB_ERRCODE_VALIDATION &&
		strncmp(edata->message, VALIDATION_PREFIX, plen) == 0 &&
		strcmp(edata->message + plen, DDB_MSG_NAME_TOO_LARGE) != 0;
}

void
ddb_raise_value_error(ErrorData *edata, const char *key)
{
	size_t		plen = strlen(VALIDATION_PREFIX);

	if (!ddb_value_error_frameable(edata))
		ReThrowError(edata);
	ereport(ERROR,
			(errcode(DDB_ERRCODE_VALIDATION),
			 errmsg(VALIDATION_PREFIX DDB_MSG_VALUES_INVALID_VALUE,
					edata->message + plen, key),
			 edata->detail ? errdetail_internal("%s", edata->detail) : 0));
}

/*
 * Convert one ExpressionAttributeValues entry; an invalid one is reported
 * in DynamoDB's frame (ddb_raise_value_error: the error is re-raised at
 * once, nothing is left half-done).
 */
static DdbValue *
placeholder_value(JsonbValue *v, const char *key)
{
	MemoryContext cxt = CurrentMemoryContext;
	DdbValue   *volatile result = NULL;

	PG_TRY();
	{
		result = ddb_value_from_jbv(v);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		ddb_raise_value_error(edata, key);
	}
	PG_END_TRY();
	/* numbers as DynamoDB gives them back, where an update returns them */
	ddb_value_normalize_numbers(result);
	return result;
}

DdbExprContext *
ddb_expr_begin(Jsonb *names, Jsonb *vals)
{
	DdbExprContext *cx = palloc0(sizeof(DdbExprContext));
	JsonbIterator *it;
	JsonbValue	k,
				v;
	JsonbIteratorToken tok;

	/* the maps and their keys first, then what the keys stand for */
	if (names != NULL)
	{
		int			n;

		if (!JB_ROOT_IS_OBJECT(names))
			ereport(ERROR,
					(errcode(DDB_ERRCODE_VALIDATION),
					 errmsg(VALIDATION_PREFIX "ExpressionAttributeNames must be a JSON object")));
		n = JB_ROOT_COUNT(names);
		if (n == 0)
			validation_error(DDB_MSG_NAMES_EMPTY);
		cx->name_keys = palloc(n * sizeof(char *));
		cx->name_vals = palloc(n * sizeof(char *));
		cx->name_used = palloc0(n * sizeof(bool));
		it = JsonbIteratorInit(&names->root);
		while ((tok = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
		{
			if (tok != WJB_KEY)
				continue;
			check_placeholder_key(k.val.string.val, k.val.string.len, '#');
			cx->name_keys[cx->nnames] = pnstrdup(k.val.string.val, k.val.string.len);
			tok = JsonbIteratorNext(&it, &v, true);
			if (v.type != jbvString)
				ereport(ERROR,
						(errcode(DDB_ERRCODE_VALIDATION),
						 errmsg(VALIDATION_PREFIX "ExpressionAttributeNames contains invalid value: the attribute name must be a string for key %s",
								cx->name_keys[cx->nnames])));
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
					 errmsg(VALIDATION_PREFIX "ExpressionAttributeValues must be a JSON object")));
		n = JB_ROOT_COUNT(vals);
		if (n == 0)
			validation_error(DDB_MSG_VALUES_EMPTY);
		cx->val_keys = palloc(n * sizeof(char *));
		cx->val_vals = palloc(n * sizeof(DdbValue *));
		cx->val_used = palloc0(n * sizeof(bool));
		it = JsonbIteratorInit(&vals->root);
		while ((tok = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
		{
			if (tok != WJB_KEY)
				continue;
			check_placeholder_key(k.val.string.val, k.val.string.len, ':');
			cx->val_keys[cx->nvals] = pnstrdup(k.val.string.val, k.val.string.len);
			tok = JsonbIteratorNext(&it, &v, true);
			cx->val_vals[cx->nvals] = placeholder_value(&v, cx->val_keys[cx->nvals]);
			cx->nvals++;
		}
	}

	for (int i = 0; i < cx->nnames; i++)
	{
		if (cx->name_vals[i][0] == '\0')
			validation_error(psprintf(DDB_MSG_NAMES_EMPTY_NAME, cx->name_keys[i]));
		ddb_check_attribute_name(cx->name_vals[i]);
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
		validation_error(psprintf(DDB_MSG_NAMES_UNUSED, buf.data));
	for (int i = 0; i < cx->nvals; i++)
		if (!cx->val_used[i])
			appendStringInfo(&buf, "%s%s", nunused++ ? ", " : "", cx->val_keys[i]);
	if (nunused > 0)
		validation_error(psprintf(DDB_MSG_VALUES_UNUSED, buf.data));
	pfree(buf.data);
}

/* ------------------------------------------------------------------------
 * Tokenizer: the whole text at once, so the parser can look ahead, back
 * up, and quote a syntax error's surroundings
 * ------------------------------------------------------------------------
 */
typedef enum TokType
{
	TOK_EOF,
	TOK_ID,						/* name or function name */
	TOK_NAMEREF,				/* #name */
	TOK_VALUEREF,				/* :value */
	TOK_INDEX,					/* 0, or digits without a leading zero */
	TOK_LPAREN,
	TOK_RPAREN,
	TOK_LBRACKET,
	TOK_RBRACKET,
	TOK_COMMA,
	TOK_DOT,
	TOK_EQ,						/* comparators: TOK_EQ .. TOK_GE */
	TOK_NE,
	TOK_LT,
	TOK_LE,
	TOK_GT,
	TOK_GE,
	TOK_PLUS,
	TOK_MINUS,
	TOK_IN,						/* keywords: TOK_IN .. TOK_REMOVE */
	TOK_BETWEEN,
	TOK_NOT,
	TOK_AND,
	TOK_OR,
	TOK_SET,
	TOK_ADD,
	TOK_DELETE,
	TOK_REMOVE,
	TOK_UNKNOWN					/* any other character */
} TokType;

typedef struct Token
{
	TokType		type;
	int			start;			/* byte offset in the text */
	int			len;
} Token;

static const struct
{
	const char *word;
	TokType		type;
}			keywords[] = {
	{"IN", TOK_IN}, {"BETWEEN", TOK_BETWEEN}, {"NOT", TOK_NOT},
	{"AND", TOK_AND}, {"OR", TOK_OR}, {"SET", TOK_SET}, {"ADD", TOK_ADD},
	{"DELETE", TOK_DELETE}, {"REMOVE", TOK_REMOVE}
};

static bool
ident_char(char c)
{
	return isalnum((unsigned char) c) || c == '_';
}

/* Scan one token at p (not whitespace); returns its type and length. */
static TokType
lex_one(const char *p, int *len)
{
	*len = 1;
	switch (*p)
	{
		case '(':
			return TOK_LPAREN;
		case ')':
			return TOK_RPAREN;
		case '[':
			return TOK_LBRACKET;
		case ']':
			return TOK_RBRACKET;
		case ',':
			return TOK_COMMA;
		case '.':
			return TOK_DOT;
		case '=':
			return TOK_EQ;
		case '+':
			return TOK_PLUS;
		case '-':
			return TOK_MINUS;
		case '<':
			if (p[1] == '=' || p[1] == '>')
			{
				*len = 2;
				return p[1] == '=' ? TOK_LE : TOK_NE;
			}
			return TOK_LT;
		case '>':
			if (p[1] == '=')
			{
				*len = 2;
				return TOK_GE;
			}
			return TOK_GT;
		case '#':
		case ':':
			while (ident_char(p[*len]))
				(*len)++;
			if (*len == 1)
				return TOK_UNKNOWN;
			return *p == '#' ? TOK_NAMEREF : TOK_VALUEREF;
		default:
			break;
	}
	if (*p == '0')
		return TOK_INDEX;
	if (isdigit((unsigned char) *p))
	{
		while (isdigit((unsigned char) p[*len]))
			(*len)++;
		return TOK_INDEX;
	}
	if (isalpha((unsigned char) *p))
	{
		while (ident_char(p[*len]))
			(*len)++;
		for (int i = 0; i < lengthof(keywords); i++)
			if (strlen(keywords[i].word) == *len &&
				pg_strncasecmp(p, keywords[i].word, *len) == 0)
				return keywords[i].type;
		return TOK_ID;
	}
	/* one character, the whole of it if it is a multibyte one */
	*len = pg_utf_mblen((const unsigned char *) p);
	for (int i = 1; i < *len; i++)
		if (p[i] == '\0')
			*len = i;
	return TOK_UNKNOWN;
}

/* Tokenize text; the last token is TOK_EOF at the end of the text. */
static Token *
tokenize(const char *text, int textlen, int *ntoks)
{
	int			cap = 16;
	int			n = 0;
	Token	   *toks = palloc(cap * sizeof(Token));
	int			pos = 0;

	for (;;)
	{
		int			len;

		while (pos < textlen && (text[pos] == ' ' || text[pos] == '\t' ||
								 text[pos] == '\n' || text[pos] == '\r'))
			pos++;
		if (n == cap)
		{
			cap *= 2;
			toks = repalloc(toks, cap * sizeof(Token));
		}
		if (pos >= textlen)
		{
			toks[n].type = TOK_EOF;
			toks[n].start = textlen;
			toks[n].len = 0;
			n++;
			break;
		}
		toks[n].type = lex_one(text + pos, &len);
		toks[n].start = pos;
		toks[n].len = len;
		n++;
		pos += len;
	}
	*ntoks = n;
	return toks;
}

/* ------------------------------------------------------------------------
 * Parse trees as written (stage 1), before placeholders are resolved
 * ------------------------------------------------------------------------
 */
typedef enum RawKind
{
	RAW_PATH,					/* elems: token indexes (ID, #name, INDEX) */
	RAW_VALUE,					/* tok: the :value */
	RAW_CALL,					/* tok: the function name; args */
	RAW_COMPARE,				/* tok: the comparator; args[0..1] */
	RAW_IN,						/* args[0] IN (args[1..]) */
	RAW_BETWEEN,				/* args[0] BETWEEN args[1] AND args[2] */
	RAW_AND,
	RAW_OR,
	RAW_NOT,
	RAW_ARITH					/* tok: + or -; args[0..1] */
} RawKind;

typedef struct Raw Raw;
struct Raw
{
	RawKind		kind;
	int			tok;
	int			nargs;
	Raw		  **args;
	int			nelems;
	int		   *elems;
	bool		parens;			/* written inside parentheses */
};

typedef struct RawSection
{
	TokType		kind;			/* TOK_SET, TOK_REMOVE, TOK_ADD, TOK_DELETE */
	int			nactions;
	Raw		  **paths;
	Raw		  **values;			/* NULL for REMOVE */
} RawSection;

/* ------------------------------------------------------------------------
 * Parser state, syntax errors and backtracking
 * ------------------------------------------------------------------------
 */
typedef struct Parser
{
	DdbExprContext *cx;
	const char *what;			/* "ConditionExpression", ... */
	const char *text;
	int			textlen;
	Token	   *toks;
	int			ntoks;
	int			pos;			/* current token */
	int			depth;			/* nesting of parentheses and functions */
	bool		update;			/* an UpdateExpression (for the walk) */

	/*
	 * While an alternative is tried (see try_parse), a syntax error jumps
	 * back to 'spec' instead of being reported, remembering the furthest
	 * token reached; a redundant pair of parentheses is only noted, and
	 * reported if the alternative is taken.
	 */
	sigjmp_buf *spec;
	int			spec_fail;
	bool		redundant;

	int			noperators;		/* operators and functions validated */
	MemoryContext caller;		/* where results go */
	MemoryContext scratch;		/* tokens and parse trees */
} Parser;

static void expr_error(Parser *ps, const char *detail) pg_attribute_noreturn();

/* "Invalid <what>: <detail>", DynamoDB's frame for expression errors. */
static void
expr_error(Parser *ps, const char *detail)
{
	ereport(ERROR,
			(errcode(DDB_ERRCODE_VALIDATION),
			 errmsg(VALIDATION_PREFIX DDB_MSG_EXPR_INVALID, ps->what, detail)));
}

static char *
tok_text(Parser *ps, int i)
{
	return pnstrdup(ps->text + ps->toks[i].start, ps->toks[i].len);
}

static TokType
tok_type(Parser *ps, int ahead)
{
	return ps->toks[Min(ps->pos + ahead, ps->ntoks - 1)].type;
}

static void
advance(Parser *ps)
{
	if (ps->toks[ps->pos].type != TOK_EOF)
		ps->pos++;
}

static void report_syntax_error(Parser *ps, int i) pg_attribute_noreturn();

/*
 * The token DynamoDB names and its surroundings: from the token before it
 * (or the start) through the token after it (or the end), whitespace
 * included.
 */
static void
report_syntax_error(Parser *ps, int i)
{
	Token	   *t = &ps->toks[i];
	int			from = i > 0 ? ps->toks[i - 1].start : 0;
	int			to;

	if (t->type == TOK_EOF || ps->toks[i + 1].type == TOK_EOF)
		to = ps->textlen;
	else
		to = ps->toks[i + 1].start + ps->toks[i + 1].len;
	expr_error(ps, psprintf(DDB_MSG_EXPR_SYNTAX,
							t->type == TOK_EOF ? "<EOF>" : tok_text(ps, i),
							pnstrdup(ps->text + from, to - from)));
}

static void syntax_error(Parser *ps) pg_attribute_noreturn();

static void
syntax_error(Parser *ps)
{
	if (ps->spec != NULL)
	{
		ps->spec_fail = Max(ps->spec_fail, ps->pos);
		siglongjmp(*ps->spec, 1);
	}
	report_syntax_error(ps, ps->pos);
}

static void
expect(Parser *ps, TokType type)
{
	if (tok_type(ps, 0) != type)
		syntax_error(ps);
	advance(ps);
}

/* ((x)): DynamoDB rejects parentheses around parentheses. */
static void
redundant_parens(Parser *ps)
{
	if (ps->spec != NULL)
		ps->redundant = true;
	else
		expr_error(ps, DDB_MSG_EXPR_REDUNDANT_PARENS);
}

static void
enter(Parser *ps)
{
	check_stack_depth();
	if (++ps->depth > DDB_MAX_PARSE_DEPTH)
		expr_error(ps, psprintf("The expression is nested too deeply; nesting levels: %d (ddb's limit is %d levels of parentheses and functions)",
								ps->depth, DDB_MAX_PARSE_DEPTH));
}

static void
leave(Parser *ps)
{
	ps->depth--;
}

typedef Raw *(*RawParser) (Parser *ps);
typedef void (*FollowCheck) (Parser *ps);

/*
 * Try to parse one alternative from the current token.  On success the
 * parser has moved past it; on a syntax error it is back where it was and
 * *furthest is raised to the furthest token the attempt reached.
 *
 * The jump is a plain siglongjmp over parser frames that only allocate
 * memory, never an ereport: real errors (stack depth, out of memory) still
 * propagate as usual.
 */
static bool
try_parse(Parser *ps, RawParser fn, FollowCheck follow, Raw **result,
		  int *furthest)
{
	sigjmp_buf	jb;
	sigjmp_buf *outer = ps->spec;
	int			start = ps->pos;
	int			depth = ps->depth;
	int			outer_fail = ps->spec_fail;
	bool		outer_redundant = ps->redundant;
	volatile bool ok = false;

	ps->spec = &jb;
	ps->spec_fail = start;
	ps->redundant = false;
	if (sigsetjmp(jb, 0) == 0)
	{
		*result = fn(ps);
		follow(ps);
		ok = true;
	}
	ps->spec = outer;
	if (!ok)
	{
		*furthest = Max(*furthest, ps->spec_fail);
		ps->pos = start;
		ps->depth = depth;
		ps->spec_fail = outer_fail;
		ps->redundant = outer_redundant;
		return false;
	}
	ps->spec_fail = outer_fail;
	if (ps->redundant)
		redundant_parens(ps);	/* reported now, or noted for the outer try */
	ps->redundant |= outer_redundant;
	return true;
}

/*
 * One of two alternatives, or a syntax error where they got furthest.  An
 * alternative counts only if 'follow' accepts the token after it: DynamoDB's
 * parser predicts with what may follow, so "(f(a)) = :v" is a comparison of
 * a parenthesized operand, not a parenthesized condition followed by junk.
 */
static Raw *
parse_either(Parser *ps, RawParser a, RawParser b, FollowCheck follow)
{
	int			furthest = ps->pos;
	Raw		   *r;

	if (try_parse(ps, a, follow, &r, &furthest) ||
		try_parse(ps, b, follow, &r, &furthest))
		return r;
	ps->pos = furthest;
	syntax_error(ps);
}

/* ------------------------------------------------------------------------
 * The grammar (stage 1)
 * ------------------------------------------------------------------------
 */
static Raw *
make_raw(RawKind kind, int tok, int nargs)
{
	Raw		   *r = palloc0(sizeof(Raw));

	r->kind = kind;
	r->tok = tok;
	r->nargs = nargs;
	if (nargs > 0)
		r->args = palloc0(nargs * sizeof(Raw *));
	return r;
}

static void
raw_add_arg(Raw *r, Raw *arg, int *cap)
{
	if (r->nargs == *cap)
	{
		*cap = Max(*cap * 2, 4);
		r->args = r->args ? repalloc(r->args, *cap * sizeof(Raw *)) :
			palloc(*cap * sizeof(Raw *));
	}
	r->args[r->nargs++] = arg;
}

/* path : (ID | #name) ('.' (ID | #name) | '[' INDEX ']')* */
static Raw *
parse_path(Parser *ps)
{
	Raw		   *r = make_raw(RAW_PATH, ps->pos, 0);
	int			cap = 4;

	r->elems = palloc(cap * sizeof(int));
	if (tok_type(ps, 0) != TOK_ID && tok_type(ps, 0) != TOK_NAMEREF)
		syntax_error(ps);
	r->elems[r->nelems++] = ps->pos;
	advance(ps);
	for (;;)
	{
		TokType		t = tok_type(ps, 0);

		if (t != TOK_DOT && t != TOK_LBRACKET)
			break;
		advance(ps);
		if (r->nelems == cap)
		{
			cap *= 2;
			r->elems = repalloc(r->elems, cap * sizeof(int));
		}
		if (t == TOK_DOT)
		{
			if (tok_type(ps, 0) != TOK_ID && tok_type(ps, 0) != TOK_NAMEREF)
				syntax_error(ps);
			r->elems[r->nelems++] = ps->pos;
			advance(ps);
		}
		else
		{
			if (tok_type(ps, 0) != TOK_INDEX)
				syntax_error(ps);
			r->elems[r->nelems++] = ps->pos;
			advance(ps);
			expect(ps, TOK_RBRACKET);
		}
	}
	return r;
}

static Raw *parse_operand(Parser *ps);

/* '(' operand (',' operand)* ')', appended to r's arguments */
static void
parse_operand_list(Parser *ps, Raw *r)
{
	int			cap = r->nargs;

	expect(ps, TOK_LPAREN);
	for (;;)
	{
		raw_add_arg(r, parse_operand(ps), &cap);
		if (tok_type(ps, 0) != TOK_COMMA)
			break;
		advance(ps);
	}
	expect(ps, TOK_RPAREN);
}

/* function : ID '(' operand (',' operand)* ')' */
static Raw *
parse_call(Parser *ps)
{
	Raw		   *r = make_raw(RAW_CALL, ps->pos, 0);

	enter(ps);
	advance(ps);				/* the name */
	parse_operand_list(ps, r);
	leave(ps);
	return r;
}

/* '(' inner ')', where parentheses directly inside are redundant */
static Raw *
parse_in_parens(Parser *ps, RawParser inner)
{
	Raw		   *r;

	enter(ps);
	expect(ps, TOK_LPAREN);
	r = inner(ps);
	expect(ps, TOK_RPAREN);
	leave(ps);
	if (r->parens)
		redundant_parens(ps);
	r->parens = true;
	return r;
}

/* operand : path | :value | function | '(' operand ')' */
static Raw *
parse_operand(Parser *ps)
{
	Raw		   *r;

	switch (tok_type(ps, 0))
	{
		case TOK_LPAREN:
			return parse_in_parens(ps, parse_operand);
		case TOK_VALUEREF:
			r = make_raw(RAW_VALUE, ps->pos, 0);
			advance(ps);
			return r;
		case TOK_ID:
			if (tok_type(ps, 1) == TOK_LPAREN)
				return parse_call(ps);
			return parse_path(ps);
		case TOK_NAMEREF:
			return parse_path(ps);
		default:
			syntax_error(ps);
	}
}

static Raw *parse_or(Parser *ps);

/*
 * A condition that starts with an operand: a comparison, IN or BETWEEN, or
 * (a function written alone) a function condition.
 */
static Raw *
parse_operand_condition(Parser *ps)
{
	Raw		   *left = parse_operand(ps);
	Raw		   *r;

	switch (tok_type(ps, 0))
	{
		case TOK_EQ:
		case TOK_NE:
		case TOK_LT:
		case TOK_LE:
		case TOK_GT:
		case TOK_GE:
			r = make_raw(RAW_COMPARE, ps->pos, 2);
			advance(ps);
			r->args[0] = left;
			r->args[1] = parse_operand(ps);
			return r;
		case TOK_BETWEEN:
			r = make_raw(RAW_BETWEEN, ps->pos, 3);
			advance(ps);
			r->args[0] = left;
			r->args[1] = parse_operand(ps);
			expect(ps, TOK_AND);
			r->args[2] = parse_operand(ps);
			return r;
		case TOK_IN:
			r = make_raw(RAW_IN, ps->pos, 1);
			advance(ps);
			r->args[0] = left;
			parse_operand_list(ps, r);
			return r;
		default:
			if (left->kind == RAW_CALL && !left->parens)
				return left;
			syntax_error(ps);
	}
}

/* '(' condition ')' */
static Raw *
parse_condition_group(Parser *ps)
{
	return parse_in_parens(ps, parse_or);
}

/* What may follow a condition that is not an AND or OR operand's end */
static void
follow_condition(Parser *ps)
{
	TokType		t = tok_type(ps, 0);

	if (t != TOK_AND && t != TOK_OR && t != TOK_RPAREN && t != TOK_EOF)
		syntax_error(ps);
}

/* A condition other than AND, OR and NOT. */
static Raw *
parse_primary(Parser *ps)
{
	/* '(' opens either a condition or an operand */
	if (tok_type(ps, 0) == TOK_LPAREN)
		return parse_either(ps, parse_condition_group, parse_operand_condition,
							follow_condition);
	return parse_operand_condition(ps);
}

/* NOT binds tighter than AND */
static Raw *
parse_not(Parser *ps)
{
	Raw		   *r;

	if (tok_type(ps, 0) != TOK_NOT)
		return parse_primary(ps);
	r = make_raw(RAW_NOT, ps->pos, 1);
	enter(ps);
	advance(ps);
	r->args[0] = parse_not(ps);
	leave(ps);
	return r;
}

/* operand (op operand)*, left-associative: the AND and OR chains */
static Raw *
parse_chain(Parser *ps, TokType op, RawKind kind, RawParser operand)
{
	Raw		   *r = operand(ps);

	while (tok_type(ps, 0) == op)
	{
		Raw		   *n = make_raw(kind, ps->pos, 2);

		advance(ps);
		n->args[0] = r;
		n->args[1] = operand(ps);
		r = n;
	}
	return r;
}

static Raw *
parse_and(Parser *ps)
{
	return parse_chain(ps, TOK_AND, RAW_AND, parse_not);
}

static Raw *
parse_or(Parser *ps)
{
	return parse_chain(ps, TOK_OR, RAW_OR, parse_and);
}

/* operand (('+' | '-') operand)? -- a SET value that is not in parentheses */
static Raw *
parse_operand_arith(Parser *ps)
{
	Raw		   *left = parse_operand(ps);
	Raw		   *r;

	if (tok_type(ps, 0) != TOK_PLUS && tok_type(ps, 0) != TOK_MINUS)
		return left;
	r = make_raw(RAW_ARITH, ps->pos, 2);
	advance(ps);
	r->args[0] = left;
	r->args[1] = parse_operand(ps);
	return r;
}

static Raw *parse_arith(Parser *ps);

/* '(' arithmetic ')' */
static Raw *
parse_arith_parens(Parser *ps)
{
	return parse_in_parens(ps, parse_arith);
}

/* operand ('+' | '-') operand */
static Raw *
parse_plus_minus(Parser *ps)
{
	Raw		   *r = parse_operand_arith(ps);

	if (r->kind != RAW_ARITH)
		syntax_error(ps);
	return r;
}

/* Inside parentheses an arithmetic is followed by ')'. */
static void
follow_rparen(Parser *ps)
{
	if (tok_type(ps, 0) != TOK_RPAREN)
		syntax_error(ps);
}

/* arithmetic : operand ('+' | '-') operand | '(' arithmetic ')' */
static Raw *
parse_arith(Parser *ps)
{
	if (tok_type(ps, 0) == TOK_LPAREN)
		return parse_either(ps, parse_arith_parens, parse_plus_minus, follow_rparen);
	return parse_plus_minus(ps);
}

/* A SET value is followed by ',', the next section or the end. */
static void
follow_set_value(Parser *ps)
{
	TokType		t = tok_type(ps, 0);

	if (t != TOK_COMMA && t != TOK_SET && t != TOK_REMOVE && t != TOK_ADD &&
		t != TOK_DELETE && t != TOK_EOF)
		syntax_error(ps);
}

/* set_value : operand | arithmetic */
static Raw *
parse_set_value(Parser *ps)
{
	if (tok_type(ps, 0) == TOK_LPAREN)
		return parse_either(ps, parse_operand_arith, parse_arith_parens,
							follow_set_value);
	return parse_operand_arith(ps);
}

/* SET, REMOVE, ADD and DELETE sections, in the order written */
static RawSection *
parse_update_sections(Parser *ps, int *nsections)
{
	int			cap = 4;
	RawSection *secs = palloc(cap * sizeof(RawSection));

	*nsections = 0;
	for (;;)
	{
		TokType		kind = tok_type(ps, 0);
		RawSection *sec;
		int			acap = 4;

		if (kind != TOK_SET && kind != TOK_REMOVE && kind != TOK_ADD &&
			kind != TOK_DELETE)
		{
			if (*nsections == 0)
				syntax_error(ps);
			break;
		}
		if (*nsections == cap)
		{
			cap *= 2;
			secs = repalloc(secs, cap * sizeof(RawSection));
		}
		sec = &secs[(*nsections)++];
		sec->kind = kind;
		sec->nactions = 0;
		sec->paths = palloc(acap * sizeof(Raw *));
		sec->values = palloc(acap * sizeof(Raw *));
		advance(ps);
		for (;;)
		{
			if (sec->nactions == acap)
			{
				acap *= 2;
				sec->paths = repalloc(sec->paths, acap * sizeof(Raw *));
				sec->values = repalloc(sec->values, acap * sizeof(Raw *));
			}
			sec->paths[sec->nactions] = parse_path(ps);
			sec->values[sec->nactions] = NULL;
			if (kind == TOK_SET)
			{
				expect(ps, TOK_EQ);
				sec->values[sec->nactions] = parse_set_value(ps);
			}
			else if (kind != TOK_REMOVE)
			{
				if (tok_type(ps, 0) != TOK_VALUEREF)
					syntax_error(ps);
				sec->values[sec->nactions] = make_raw(RAW_VALUE, ps->pos, 0);
				advance(ps);
			}
			sec->nactions++;
			if (tok_type(ps, 0) != TOK_COMMA)
				break;
			advance(ps);
		}
	}
	return secs;
}

/* ------------------------------------------------------------------------
 * The walk (stage 2): functions, reserved words, list indexes, sections
 * ------------------------------------------------------------------------
 */
typedef enum FuncId
{
	FN_ATTRIBUTE_EXISTS,
	FN_ATTRIBUTE_NOT_EXISTS,
	FN_ATTRIBUTE_TYPE,
	FN_BEGINS_WITH,
	FN_CONTAINS,
	FN_SIZE,
	FN_IF_NOT_EXISTS,
	FN_LIST_APPEND
} FuncId;

static const struct
{
	const char *name;
	int			nargs;
	bool		condition;		/* a condition function (else an update one) */
	bool		boolean;		/* returns a boolean (a condition of its own) */
}			functions[] = {
	[FN_ATTRIBUTE_EXISTS] = {"attribute_exists", 1, true, true},
	[FN_ATTRIBUTE_NOT_EXISTS] = {"attribute_not_exists", 1, true, true},
	[FN_ATTRIBUTE_TYPE] = {"attribute_type", 2, true, true},
	[FN_BEGINS_WITH] = {"begins_with", 2, true, true},
	[FN_CONTAINS] = {"contains", 2, true, true},
	[FN_SIZE] = {"size", 1, true, false},
	[FN_IF_NOT_EXISTS] = {"if_not_exists", 2, false, false},
	[FN_LIST_APPEND] = {"list_append", 2, false, false}
};

/* Function names are case-sensitive. */
static int
function_id(Parser *ps, int tok)
{
	Token	   *t = &ps->toks[tok];

	for (int i = 0; i < lengthof(functions); i++)
		if (strlen(functions[i].name) == t->len &&
			memcmp(functions[i].name, ps->text + t->start, t->len) == 0)
			return i;
	return -1;
}

static void
walk_path(Parser *ps, Raw *path)
{
	for (int i = 0; i < path->nelems; i++)
	{
		Token	   *t = &ps->toks[path->elems[i]];

		if (t->type == TOK_ID &&
			ddb_is_reserved_word(ps->text + t->start, t->len))
			expr_error(ps, psprintf(DDB_MSG_EXPR_RESERVED, tok_text(ps, path->elems[i])));
		/* an index must fit in 31 bits */
		if (t->type == TOK_INDEX &&
			(t->len > 10 ||
			 (t->len == 10 && strncmp(ps->text + t->start, "2147483647", 10) > 0)))
			expr_error(ps, psprintf(DDB_MSG_EXPR_LIST_INDEX,
									psprintf("[%s]", tok_text(ps, path->elems[i]))));
	}
}

static void walk_operand(Parser *ps, Raw *r, int nesting);

/*
 * A function call, judged before its arguments: it must exist, belong to
 * this kind of expression, and suit its place -- at the top of a condition
 * only a function returning a boolean, inside an operator only size (in
 * conditions) or if_not_exists (in updates).
 */
static void
walk_call(Parser *ps, Raw *r, int nesting)
{
	int			f = function_id(ps, r->tok);
	char	   *name = tok_text(ps, r->tok);

	if (f < 0)
		expr_error(ps, psprintf(DDB_MSG_EXPR_FUNCTION_NAME, name));
	if (!ps->update)
	{
		if (!functions[f].condition)
			expr_error(ps, psprintf(DDB_MSG_EXPR_NOT_IN_CONDITION, name));
		if (nesting == 0 ? !functions[f].boolean : f != FN_SIZE)
			expr_error(ps, psprintf(DDB_MSG_EXPR_FUNCTION_MISUSED, name));
	}
	else
	{
		if (functions[f].condition)
			expr_error(ps, psprintf(DDB_MSG_EXPR_NOT_IN_UPDATE, name));
		if (nesting > 0 && f != FN_IF_NOT_EXISTS)
			expr_error(ps, psprintf(DDB_MSG_EXPR_FUNCTION_MISUSED, name));
	}
	for (int i = 0; i < r->nargs; i++)
		walk_operand(ps, r->args[i], nesting + 1);
}

static void
walk_operand(Parser *ps, Raw *r, int nesting)
{
	check_stack_depth();
	switch (r->kind)
	{
		case RAW_PATH:
			walk_path(ps, r);
			break;
		case RAW_CALL:
			walk_call(ps, r, nesting);
			break;
		case RAW_ARITH:
			walk_operand(ps, r->args[0], nesting + 1);
			walk_operand(ps, r->args[1], nesting + 1);
			break;
		default:
			break;
	}
}

static void
walk_condition(Parser *ps, Raw *r)
{
	check_stack_depth();
	switch (r->kind)
	{
		case RAW_AND:
		case RAW_OR:
		case RAW_NOT:
			for (int i = 0; i < r->nargs; i++)
				walk_condition(ps, r->args[i]);
			break;
		case RAW_CALL:
			walk_call(ps, r, 0);
			break;
		default:
			/* a comparison, IN or BETWEEN: its operands are nested */
			for (int i = 0; i < r->nargs; i++)
				walk_operand(ps, r->args[i], 1);
			break;
	}
}

static const char *
section_name(TokType kind)
{
	return kind == TOK_SET ? "SET" : kind == TOK_REMOVE ? "REMOVE" :
		kind == TOK_ADD ? "ADD" : "DELETE";
}

static void
walk_update(Parser *ps, RawSection *secs, int nsections)
{
	bool		seen[4] = {false, false, false, false};

	for (int s = 0; s < nsections; s++)
	{
		RawSection *sec = &secs[s];
		int			k = sec->kind == TOK_SET ? 0 : sec->kind == TOK_REMOVE ? 1 :
			sec->kind == TOK_ADD ? 2 : 3;

		for (int i = 0; i < sec->nactions; i++)
		{
			walk_path(ps, sec->paths[i]);
			if (sec->kind == TOK_SET)
				walk_operand(ps, sec->values[i], 0);
		}
		/* a section used twice is reported after its actions */
		if (seen[k])
			expr_error(ps, psprintf(DDB_MSG_EXPR_SECTION_TWICE, section_name(sec->kind)));
		seen[k] = true;
	}
}

/* ------------------------------------------------------------------------
 * Validation (stage 3): placeholders, operators, paths
 * ------------------------------------------------------------------------
 */
static char *
resolve_name(Parser *ps, int tok)
{
	DdbExprContext *cx = ps->cx;
	Token	   *t = &ps->toks[tok];

	for (int i = 0; i < cx->nnames; i++)
		if (strlen(cx->name_keys[i]) == t->len &&
			memcmp(cx->name_keys[i], ps->text + t->start, t->len) == 0)
		{
			cx->name_used[i] = true;
			return cx->name_vals[i];
		}
	expr_error(ps, psprintf(DDB_MSG_EXPR_NAME_UNDEFINED, tok_text(ps, tok)));
}

static DdbPath *
validate_path(Parser *ps, Raw *raw)
{
	DdbPath    *path = palloc0(sizeof(DdbPath));

	if (raw->nelems > DDB_MAX_NESTING_DEPTH)
		expr_error(ps, psprintf(DDB_MSG_EXPR_PATH_TOO_DEEP, raw->nelems));
	path->nelems = raw->nelems;
	path->elems = palloc(raw->nelems * sizeof(DdbPathElem));
	for (int i = 0; i < raw->nelems; i++)
	{
		DdbPathElem *e = &path->elems[i];
		int			tok = raw->elems[i];

		switch (ps->toks[tok].type)
		{
			case TOK_ID:
				e->kind = DDB_PATH_NAME;
				e->name = tok_text(ps, tok);
				break;
			case TOK_NAMEREF:
				e->kind = DDB_PATH_NAME;
				e->name = resolve_name(ps, tok);
				break;
			default:
				e->kind = DDB_PATH_INDEX;
				e->name = NULL;
				e->index = atoi(tok_text(ps, tok));
				break;
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
validate_value(Parser *ps, Raw *raw)
{
	DdbExprContext *cx = ps->cx;
	Token	   *t = &ps->toks[raw->tok];
	DdbOperand *op = make_operand(DDB_OPERAND_VALUE);

	for (int i = 0; i < cx->nvals; i++)
		if (strlen(cx->val_keys[i]) == t->len &&
			memcmp(cx->val_keys[i], ps->text + t->start, t->len) == 0)
		{
			cx->val_used[i] = true;
			op->value = cx->val_vals[i];
			op->placeholder = cx->val_keys[i];
			return op;
		}
	expr_error(ps, psprintf(DDB_MSG_EXPR_VALUE_UNDEFINED, tok_text(ps, raw->tok)));
}

/* The operand types an operator accepts (DynamoDB's type sets) */
typedef enum TypeSet
{
	TS_ALL,
	TS_ORDERED,					/* S N B: < <= > >= BETWEEN */
	TS_STRING_BINARY,			/* begins_with */
	TS_ITERABLE,				/* size */
	TS_NUMBER,					/* + - */
	TS_LIST						/* list_append */
} TypeSet;

static bool
type_in_set(DdbType t, TypeSet set)
{
	switch (set)
	{
		case TS_ALL:
			return true;
		case TS_ORDERED:
			return t == DDB_TYPE_S || t == DDB_TYPE_N || t == DDB_TYPE_B;
		case TS_STRING_BINARY:
			return t == DDB_TYPE_S || t == DDB_TYPE_B;
		case TS_ITERABLE:
			return t != DDB_TYPE_N && t != DDB_TYPE_BOOL && t != DDB_TYPE_NULL;
		case TS_NUMBER:
			return t == DDB_TYPE_N;
		case TS_LIST:
			return t == DDB_TYPE_L;
	}
	return false;
}

/*
 * The operand's type when it is known before any item is read (a value, or
 * what a function returns), else -1: a path may hold any type.
 */
static int
operand_type(DdbOperand *op)
{
	switch (op->kind)
	{
		case DDB_OPERAND_VALUE:
			return op->value->type;
		case DDB_OPERAND_SIZE:
		case DDB_OPERAND_PLUS:
		case DDB_OPERAND_MINUS:
			return DDB_TYPE_N;
		case DDB_OPERAND_LIST_APPEND:
			return DDB_TYPE_L;
		default:
			return -1;
	}
}

static const char *
operand_type_name(DdbOperand *op)
{
	int			t = operand_type(op);

	return t < 0 ? DDB_MSG_EXPR_ANY_TYPE : ddb_type_name((DdbType) t);
}

static void
count_operator(Parser *ps)
{
	if (++ps->noperators > DDB_MAX_OPERATORS)
		expr_error(ps, psprintf(DDB_MSG_EXPR_TOO_MANY_OPERATORS, ps->noperators));
}

static bool
path_equal(DdbPath *p, DdbPath *q)
{
	if (p->nelems != q->nelems)
		return false;
	for (int i = 0; i < p->nelems; i++)
	{
		DdbPathElem *a = &p->elems[i],
				   *b = &q->elems[i];

		if (a->kind != b->kind ||
			(a->kind == DDB_PATH_NAME ? strcmp(a->name, b->name) != 0 :
			 a->index != b->index))
			return false;
	}
	return true;
}

/*
 * The checks every operator gets, in DynamoDB's order: the number of
 * operands, their types, and (for the operators that compare their first
 * operand with the others) that no later operand repeats the first path.
 */
static void
check_operator(Parser *ps, const char *name, DdbOperand **args, int nargs,
			   int want_nargs, TypeSet types, bool distinct)
{
	if (want_nargs >= 0 && nargs != want_nargs)
		expr_error(ps, psprintf(DDB_MSG_EXPR_OPERAND_COUNT, name, nargs));
	for (int i = 0; i < nargs; i++)
	{
		int			t = operand_type(args[i]);

		if (t >= 0 && !type_in_set((DdbType) t, types))
			expr_error(ps, psprintf(DDB_MSG_EXPR_OPERAND_TYPE, name,
									operand_type_name(args[i])));
	}
	if (distinct && nargs > 1 && args[0]->kind == DDB_OPERAND_PATH)
		for (int i = 1; i < nargs; i++)
			if (args[i]->kind == DDB_OPERAND_PATH &&
				path_equal(args[0]->path, args[i]->path))
				expr_error(ps, psprintf(DDB_MSG_EXPR_NOT_DISTINCT, name,
										ddb_path_to_string(args[0]->path)));
}

static DdbOperand *validate_operand(Parser *ps, Raw *raw);

static DdbOperand **
validate_args(Parser *ps, Raw *raw)
{
	DdbOperand **args = palloc(Max(raw->nargs, 1) * sizeof(DdbOperand *));

	for (int i = 0; i < raw->nargs; i++)
		args[i] = validate_operand(ps, raw->args[i]);
	return args;
}

/* size(), if_not_exists() and list_append(): functions that are operands */
static DdbOperand *
validate_function_operand(Parser *ps, Raw *raw)
{
	int			f = function_id(ps, raw->tok);
	const char *name = functions[f].name;
	DdbOperand **args = validate_args(ps, raw);
	DdbOperand *op;

	switch (f)
	{
		case FN_SIZE:
			check_operator(ps, name, args, raw->nargs, 1, TS_ITERABLE, false);
			op = make_operand(DDB_OPERAND_SIZE);
			/* a path's size is read from the item, a value's is known */
			if (args[0]->kind == DDB_OPERAND_PATH)
				op->path = args[0]->path;
			else
				op->left = args[0];
			break;
		case FN_IF_NOT_EXISTS:
			check_operator(ps, name, args, raw->nargs, 2, TS_ALL, false);
			if (args[0]->kind != DDB_OPERAND_PATH)
				expr_error(ps, psprintf(DDB_MSG_EXPR_PATH_REQUIRED, name));
			op = make_operand(DDB_OPERAND_IF_NOT_EXISTS);
			op->path = args[0]->path;
			op->left = args[1];
			break;
		default:
			check_operator(ps, name, args, raw->nargs, 2, TS_LIST, false);
			op = make_operand(DDB_OPERAND_LIST_APPEND);
			op->left = args[0];
			op->right = args[1];
			break;
	}
	count_operator(ps);
	return op;
}

static DdbOperand *
validate_operand(Parser *ps, Raw *raw)
{
	DdbOperand *op;
	DdbOperand **args;

	check_stack_depth();
	switch (raw->kind)
	{
		case RAW_PATH:
			op = make_operand(DDB_OPERAND_PATH);
			op->path = validate_path(ps, raw);
			return op;
		case RAW_VALUE:
			return validate_value(ps, raw);
		case RAW_CALL:
			return validate_function_operand(ps, raw);
		case RAW_ARITH:
			args = validate_args(ps, raw);
			check_operator(ps, tok_text(ps, raw->tok), args, 2, 2, TS_NUMBER, false);
			op = make_operand(ps->toks[raw->tok].type == TOK_PLUS ?
							  DDB_OPERAND_PLUS : DDB_OPERAND_MINUS);
			op->left = args[0];
			op->right = args[1];
			count_operator(ps);
			return op;
		default:
			elog(ERROR, "unexpected expression node %d as an operand", raw->kind);
	}
	return NULL;
}

static DdbCondition *
make_cond(DdbCondKind kind, int nargs, DdbOperand **args)
{
	DdbCondition *c = palloc0(sizeof(DdbCondition));

	c->kind = kind;
	c->nargs = nargs;
	c->args = args;
	return c;
}

/* attribute_exists(), attribute_type(), begins_with() ... as conditions */
static DdbCondition *
validate_function_condition(Parser *ps, Raw *raw)
{
	static const DdbCondKind kinds[] = {
		[FN_ATTRIBUTE_EXISTS] = DDB_COND_ATTRIBUTE_EXISTS,
		[FN_ATTRIBUTE_NOT_EXISTS] = DDB_COND_ATTRIBUTE_NOT_EXISTS,
		[FN_ATTRIBUTE_TYPE] = DDB_COND_ATTRIBUTE_TYPE,
		[FN_BEGINS_WITH] = DDB_COND_BEGINS_WITH,
		[FN_CONTAINS] = DDB_COND_CONTAINS
	};
	int			f = function_id(ps, raw->tok);
	const char *name = functions[f].name;
	DdbOperand **args = validate_args(ps, raw);
	DdbCondition *c;

	check_operator(ps, name, args, raw->nargs, functions[f].nargs,
				   f == FN_BEGINS_WITH ? TS_STRING_BINARY : TS_ALL,
				   functions[f].nargs == 2);
	c = make_cond(kinds[f], raw->nargs, args);
	if ((f == FN_ATTRIBUTE_EXISTS || f == FN_ATTRIBUTE_NOT_EXISTS) &&
		args[0]->kind != DDB_OPERAND_PATH)
		expr_error(ps, psprintf(DDB_MSG_EXPR_PATH_REQUIRED, name));
	if (f == FN_ATTRIBUTE_TYPE)
	{
		DdbValue   *t = args[1]->value;

		if (args[1]->kind != DDB_OPERAND_VALUE || t->type != DDB_TYPE_S)
			expr_error(ps, psprintf(DDB_MSG_EXPR_OPERAND_TYPE, name,
									operand_type_name(args[1])));
		if (!ddb_type_from_name(t->u.str.data, t->u.str.len, &c->type_arg))
			expr_error(ps, psprintf(DDB_MSG_EXPR_TYPE_NAME,
									pnstrdup(t->u.str.data, t->u.str.len)));
	}
	count_operator(ps);
	return c;
}

static DdbCondition *
validate_condition(Parser *ps, Raw *raw)
{
	DdbCondition *c;
	DdbOperand **args;
	DdbValue   *lo,
			   *hi;

	check_stack_depth();
	switch (raw->kind)
	{
		case RAW_AND:
		case RAW_OR:
			c = make_cond(raw->kind == RAW_AND ? DDB_COND_AND : DDB_COND_OR, 0, NULL);
			c->left = validate_condition(ps, raw->args[0]);
			c->right = validate_condition(ps, raw->args[1]);
			break;
		case RAW_NOT:
			c = make_cond(DDB_COND_NOT, 0, NULL);
			c->left = validate_condition(ps, raw->args[0]);
			break;
		case RAW_CALL:
			return validate_function_condition(ps, raw);
		case RAW_COMPARE:
			args = validate_args(ps, raw);
			c = make_cond(DDB_COND_COMPARE, 2, args);
			switch (ps->toks[raw->tok].type)
			{
				case TOK_EQ:
					c->op = DDB_CMP_EQ;
					break;
				case TOK_NE:
					c->op = DDB_CMP_NE;
					break;
				case TOK_LT:
					c->op = DDB_CMP_LT;
					break;
				case TOK_LE:
					c->op = DDB_CMP_LE;
					break;
				case TOK_GT:
					c->op = DDB_CMP_GT;
					break;
				default:
					c->op = DDB_CMP_GE;
					break;
			}
			check_operator(ps, tok_text(ps, raw->tok), args, 2, 2,
						   c->op == DDB_CMP_EQ || c->op == DDB_CMP_NE ? TS_ALL : TS_ORDERED,
						   true);
			break;
		case RAW_BETWEEN:
			args = validate_args(ps, raw);
			c = make_cond(DDB_COND_BETWEEN, 3, args);
			check_operator(ps, "BETWEEN", args, 3, 3, TS_ORDERED, true);
			lo = args[1]->kind == DDB_OPERAND_VALUE ? args[1]->value : NULL;
			hi = args[2]->kind == DDB_OPERAND_VALUE ? args[2]->value : NULL;
			if (lo && hi && lo->type != hi->type)
				expr_error(ps, psprintf(DDB_MSG_EXPR_BETWEEN_TYPES,
										ddb_value_describe(lo), ddb_value_describe(hi)));
			if (lo && hi && ddb_scalar_cmp(lo, hi) > 0)
				expr_error(ps, psprintf(DDB_MSG_EXPR_BETWEEN_ORDER,
										ddb_value_describe(lo), ddb_value_describe(hi)));
			break;
		case RAW_IN:
			args = validate_args(ps, raw);
			c = make_cond(DDB_COND_IN, raw->nargs, args);
			check_operator(ps, "IN", args, raw->nargs, -1, TS_ALL, true);
			if (raw->nargs - 1 > DDB_MAX_IN_OPERANDS)
				expr_error(ps, psprintf(DDB_MSG_EXPR_IN_TOO_MANY, raw->nargs - 1));
			break;
		default:
			elog(ERROR, "unexpected expression node %d as a condition", raw->kind);
	}
	count_operator(ps);
	return c;
}

/* ------------------------------------------------------------------------
 * Overlapping and conflicting paths (updates and projections)
 *
 * DynamoDB builds a tree of the paths, from the last one written back to
 * the first, and reports the first path that ends where another passes
 * (overlap: a and a.b, or a twice) or that uses a map as a list or a list
 * as a map (conflict: a.b and a[0]).  The second path it names is the one
 * the tree leads to from there -- through the element both paths share,
 * for an overlap -- taking the first child at each level below.
 * ------------------------------------------------------------------------
 */
typedef struct PathNode PathNode;
struct PathNode
{
	int			n;
	int			cap;
	DdbPathElem *keys;
	PathNode  **kids;			/* NULL: a path ends at this key */
};

static bool
elem_equal(DdbPathElem *a, DdbPathElem *b)
{
	return a->kind == b->kind &&
		(a->kind == DDB_PATH_NAME ? strcmp(a->name, b->name) == 0 : a->index == b->index);
}

/*
 * path's first 'depth' elements, then node's branch 'branch' (the one the
 * path passes, for an overlap), then the tree's first branch at each level
 * below
 */
static char *
path_to_leaf(DdbPath *path, int depth, PathNode *node, int branch)
{
	DdbPath		p;
	int			cap = depth + 8;

	p.nelems = 0;
	p.elems = palloc(cap * sizeof(DdbPathElem));
	for (int i = 0; i < depth; i++)
		p.elems[p.nelems++] = path->elems[i];
	while (node != NULL && node->n > 0)
	{
		if (p.nelems == cap)
		{
			cap *= 2;
			p.elems = repalloc(p.elems, cap * sizeof(DdbPathElem));
		}
		p.elems[p.nelems++] = node->keys[branch];
		node = node->kids[branch];
		branch = 0;
	}
	return ddb_path_to_string(&p);
}

static void
path_tree_add(Parser *ps, PathNode *node, DdbPath *path)
{
	for (int d = 0; d < path->nelems; d++)
	{
		DdbPathElem *e = &path->elems[d];
		bool		last = (d == path->nelems - 1);
		int			i;

		for (i = 0; i < node->n; i++)
			if (elem_equal(&node->keys[i], e))
				break;
		if (i < node->n)
		{
			if (node->kids[i] != NULL && !last)
			{
				node = node->kids[i];
				continue;
			}
			expr_error(ps, psprintf(DDB_MSG_EXPR_PATHS_OVERLAP, ddb_path_to_string(path),
									path_to_leaf(path, d, node, i)));
		}
		if (node->n > 0 && node->keys[0].kind != e->kind)
			expr_error(ps, psprintf(DDB_MSG_EXPR_PATHS_CONFLICT, ddb_path_to_string(path),
									path_to_leaf(path, d, node, 0)));
		/* a new branch: the rest of the path hangs below it (scratch memory) */
		MemoryContextSwitchTo(ps->scratch);
		for (; d < path->nelems; d++)
		{
			if (node->n == node->cap)
			{
				node->cap = Max(node->cap * 2, 4);
				node->keys = node->keys ? repalloc(node->keys, node->cap * sizeof(DdbPathElem)) :
					palloc(node->cap * sizeof(DdbPathElem));
				node->kids = node->kids ? repalloc(node->kids, node->cap * sizeof(PathNode *)) :
					palloc(node->cap * sizeof(PathNode *));
			}
			node->keys[node->n] = path->elems[d];
			node->kids[node->n] = d == path->nelems - 1 ? NULL : palloc0(sizeof(PathNode));
			node = node->kids[node->n++];
		}
		MemoryContextSwitchTo(ps->caller);
		return;
	}
}

/* ------------------------------------------------------------------------
 * Entry points
 * ------------------------------------------------------------------------
 */
/*
 * Tokens and parse trees are scratch: they live in a child of the caller's
 * context, deleted when the result (built in the caller's context) is done,
 * so a caller that keeps results for long (a call-site cache) keeps only
 * them.  parser_init switches to the scratch context, parser_done back.
 */
static void
parser_init(Parser *ps, DdbExprContext *cx, const char *text, const char *what,
			bool update)
{
	size_t		len = strlen(text);

	memset(ps, 0, sizeof(Parser));
	ps->cx = cx;
	ps->what = what;
	ps->text = text;
	ps->textlen = (int) Min(len, (size_t) PG_INT32_MAX);
	ps->update = update;
	if (len == 0)
		expr_error(ps, DDB_MSG_EXPR_EMPTY);
	if (len > DDB_MAX_EXPRESSION_BYTES)
	{
		/* DynamoDB tells the size for conditions only */
		if (update || strcmp(what, "ProjectionExpression") == 0)
			expr_error(ps, DDB_MSG_EXPR_SIZE);
		expr_error(ps, psprintf(DDB_MSG_EXPR_SIZE_DETAIL, (int) len));
	}
	ps->caller = CurrentMemoryContext;
	ps->scratch = AllocSetContextCreate(ps->caller, "ddb expression parse",
										ALLOCSET_SMALL_SIZES);
	MemoryContextSwitchTo(ps->scratch);
	ps->toks = tokenize(text, ps->textlen, &ps->ntoks);
}

/* Parsed and walked: build the result in the caller's context. */
static void
parser_validate(Parser *ps)
{
	MemoryContextSwitchTo(ps->caller);
}

static void
parser_done(Parser *ps)
{
	MemoryContextDelete(ps->scratch);
}

DdbCondition *
ddb_parse_condition(DdbExprContext *cx, const char *text, const char *what)
{
	Parser		ps;
	Raw		   *raw;

	DdbCondition *c;

	parser_init(&ps, cx, text, what, false);
	raw = parse_or(&ps);
	expect(&ps, TOK_EOF);
	walk_condition(&ps, raw);
	parser_validate(&ps);
	c = validate_condition(&ps, raw);
	parser_done(&ps);
	return c;
}

DdbUpdate *
ddb_parse_update(DdbExprContext *cx, const char *text)
{
	static const DdbUpdateActionKind kinds[] = {
		[TOK_SET] = DDB_UPDATE_SET, [TOK_REMOVE] = DDB_UPDATE_REMOVE,
		[TOK_ADD] = DDB_UPDATE_ADD, [TOK_DELETE] = DDB_UPDATE_DELETE
	};
	Parser		ps;
	RawSection *secs;
	int			nsections;
	int			n = 0;
	DdbUpdate  *u = palloc0(sizeof(DdbUpdate));
	Raw		  **paths;
	Raw		  **values;
	PathNode	root = {0};

	parser_init(&ps, cx, text, "UpdateExpression", true);
	secs = parse_update_sections(&ps, &nsections);
	expect(&ps, TOK_EOF);
	walk_update(&ps, secs, nsections);
	parser_validate(&ps);

	/* the actions in the order written */
	for (int s = 0; s < nsections; s++)
		n += secs[s].nactions;
	u->nactions = n;
	u->actions = palloc(n * sizeof(DdbUpdateAction));
	paths = palloc(n * sizeof(Raw *));
	values = palloc(n * sizeof(Raw *));
	n = 0;
	for (int s = 0; s < nsections; s++)
		for (int i = 0; i < secs[s].nactions; i++)
		{
			u->actions[n].kind = kinds[secs[s].kind];
			paths[n] = secs[s].paths[i];
			values[n++] = secs[s].values[i];
		}

	/* DynamoDB validates from the last action back: targets, then values */
	for (int i = n - 1; i >= 0; i--)
	{
		u->actions[i].path = validate_path(&ps, paths[i]);
		path_tree_add(&ps, &root, u->actions[i].path);
	}
	for (int i = n - 1; i >= 0; i--)
	{
		DdbUpdateAction *a = &u->actions[i];
		DdbType		t;

		a->value = values[i] ? validate_operand(&ps, values[i]) : NULL;
		if (a->kind != DDB_UPDATE_ADD && a->kind != DDB_UPDATE_DELETE)
			continue;
		t = a->value->value->type;
		if (!(ddb_type_is_set(t) || (a->kind == DDB_UPDATE_ADD && t == DDB_TYPE_N)))
			expr_error(&ps, psprintf(DDB_MSG_EXPR_ACTION_OPERAND_TYPE,
									 a->kind == DDB_UPDATE_ADD ? "ADD" : "DELETE",
									 t == DDB_TYPE_S ? "STRING" :
									 t == DDB_TYPE_N ? "NUMBER" :
									 t == DDB_TYPE_B ? "BINARY" :
									 t == DDB_TYPE_BOOL ? "BOOLEAN" :
									 t == DDB_TYPE_NULL ? "NULL" :
									 t == DDB_TYPE_L ? "LIST" : "MAP",
									 a->kind == DDB_UPDATE_ADD ? "ALLOWED_FOR_ADD_OPERAND" :
									 "ALLOWED_FOR_DELETE_OPERAND"));
	}
	pfree(paths);
	pfree(values);
	parser_done(&ps);
	return u;
}

DdbProjection *
ddb_parse_projection(DdbExprContext *cx, const char *text)
{
	Parser		ps;
	DdbProjection *p = palloc0(sizeof(DdbProjection));
	int			cap = 8;
	Raw		  **raws;
	PathNode	root = {0};

	parser_init(&ps, cx, text, "ProjectionExpression", false);
	raws = palloc(cap * sizeof(Raw *));
	for (;;)
	{
		if (p->npaths == cap)
		{
			cap *= 2;
			raws = repalloc(raws, cap * sizeof(Raw *));
		}
		raws[p->npaths++] = parse_path(&ps);
		if (tok_type(&ps, 0) != TOK_COMMA)
			break;
		advance(&ps);
	}
	expect(&ps, TOK_EOF);
	for (int i = 0; i < p->npaths; i++)
		walk_path(&ps, raws[i]);
	parser_validate(&ps);
	p->paths = palloc(p->npaths * sizeof(DdbPath *));
	for (int i = p->npaths - 1; i >= 0; i--)
	{
		p->paths[i] = validate_path(&ps, raws[i]);
		path_tree_add(&ps, &root, p->paths[i]);
	}
	parser_done(&ps);
	return p;
}

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

/* ------------------------------------------------------------------------
 * Key conditions (for Query)
 *
 * DynamoDB reduces a KeyConditionExpression to one condition per key
 * attribute, walking the ANDs: each condition is a comparison, BETWEEN or
 * begins_with with exactly one top-level attribute; a comparison may put
 * the value first (":v < sk" is "sk > :v"), BETWEEN and begins_with may
 * not.  Then the conditions are matched with the key schema.
 * ------------------------------------------------------------------------
 */
typedef struct KeyCond
{
	const char *attr;
	DdbCondKind kind;
	DdbCompareOp op;
	DdbValue   *values[2];
} KeyCond;

static void key_error(const char *message) pg_attribute_noreturn();

static void
key_error(const char *message)
{
	validation_error(message);
}

static void
key_condition_one(DdbCondition *c, KeyCond *conds, int *nconds)
{
	KeyCond		kc = {0};
	int			nvalues = 0;

	switch (c->kind)
	{
		case DDB_COND_COMPARE:
			if (c->op == DDB_CMP_NE)
				key_error(psprintf(DDB_MSG_KEY_INVALID_OPERATOR, "<>"));
			break;
		case DDB_COND_BETWEEN:
		case DDB_COND_BEGINS_WITH:
			break;
		default:
			key_error(psprintf(DDB_MSG_KEY_INVALID_OPERATOR,
							   c->kind == DDB_COND_OR ? "OR" :
							   c->kind == DDB_COND_NOT ? "NOT" :
							   c->kind == DDB_COND_IN ? "IN" :
							   c->kind == DDB_COND_ATTRIBUTE_EXISTS ? "attribute_exists" :
							   c->kind == DDB_COND_ATTRIBUTE_NOT_EXISTS ? "attribute_not_exists" :
							   c->kind == DDB_COND_ATTRIBUTE_TYPE ? "attribute_type" : "contains"));
	}
	kc.kind = c->kind;
	kc.op = c->op;
	for (int i = 0; i < c->nargs; i++)
	{
		DdbOperand *a = c->args[i];

		if (a->kind == DDB_OPERAND_PATH)
		{
			if (kc.attr != NULL)
				key_error(psprintf(DDB_MSG_KEY_INVALID_CONDITION, DDB_MSG_KEY_MULTIPLE_NAMES));
			if (a->path->nelems > 1)
				key_error(DDB_MSG_KEY_NESTED_PATH);
			kc.attr = a->path->elems[0].name;
		}
		else if (a->kind == DDB_OPERAND_VALUE)
		{
			if (kc.attr == NULL)
			{
				if (c->kind != DDB_COND_COMPARE)
					key_error(psprintf(DDB_MSG_KEY_INVALID_CONDITION,
									   psprintf(DDB_MSG_KEY_FIRST_OPERAND,
												c->kind == DDB_COND_BETWEEN ? "BETWEEN" : "begins_with")));
				/* the value comes first: turn the comparison around */
				kc.op = kc.op == DDB_CMP_LT ? DDB_CMP_GT :
					kc.op == DDB_CMP_GT ? DDB_CMP_LT :
					kc.op == DDB_CMP_LE ? DDB_CMP_GE :
					kc.op == DDB_CMP_GE ? DDB_CMP_LE : kc.op;
			}
			if (nvalues < 2)
				kc.values[nvalues] = a->value;
			nvalues++;
		}
		else
			key_error(DDB_MSG_KEY_NESTED_OPERATION);
	}
	if (kc.attr == NULL)
		key_error(psprintf(DDB_MSG_KEY_INVALID_CONDITION, DDB_MSG_KEY_NO_ATTRIBUTE));
	for (int i = 0; i < *nconds && i < 3; i++)
		if (strcmp(conds[i].attr, kc.attr) == 0)
			key_error(DDB_MSG_KEY_DUPLICATE);
	/* more than two conditions are counted, not kept */
	if (*nconds < 3)
		conds[*nconds] = kc;
	(*nconds)++;
}

static void
key_conditions(DdbCondition *c, KeyCond *conds, int *nconds)
{
	check_stack_depth();
	if (c->kind == DDB_COND_AND)
	{
		key_conditions(c->left, conds, nconds);
		key_conditions(c->right, conds, nconds);
	}
	else
		key_condition_one(c, conds, nconds);
}

static KeyCond *
find_key_cond(KeyCond *conds, int nconds, const char *name)
{
	for (int i = 0; i < nconds; i++)
		if (strcmp(conds[i].attr, name) == 0)
			return &conds[i];
	return NULL;
}

/*
 * Check a parsed KeyConditionExpression against the table's key attribute
 * names (sk_name NULL: no sort key) and reduce it to *out.
 */
void
ddb_analyze_key_condition(DdbCondition *cond, const char *pk_name,
						  const char *sk_name, DdbKeyCondition *out)
{
	KeyCond		conds[3];
	int			nconds = 0;
	KeyCond    *pk,
			   *sk;

	memset(out, 0, sizeof(DdbKeyCondition));
	key_conditions(cond, conds, &nconds);
	if (nconds > 2)
		key_error(DDB_MSG_KEY_CONDITION_COUNT);
	if (nconds > (sk_name ? 2 : 1))
		key_error(DDB_MSG_KEY_NOT_SUPPORTED);
	pk = find_key_cond(conds, nconds, pk_name);
	if (pk == NULL)
		key_error(psprintf(DDB_MSG_KEY_MISSED_ELEMENT, pk_name));
	if (pk->kind != DDB_COND_COMPARE || pk->op != DDB_CMP_EQ)
		key_error(DDB_MSG_KEY_NOT_SUPPORTED);
	out->pk_value = pk->values[0];
	if (sk_name == NULL)
		return;
	sk = find_key_cond(conds, nconds, sk_name);
	if (sk == NULL)
	{
		/* a second condition on another attribute */
		if (nconds > 1)
			key_error(psprintf(DDB_MSG_KEY_MISSED_ELEMENT, sk_name));
		return;
	}
	out->has_sk = true;
	out->sk_kind = sk->kind;
	out->sk_op = sk->op;
	out->sk_value = sk->values[0];
	out->sk_value2 = sk->kind == DDB_COND_BETWEEN ? sk->values[1] : NULL;
}
