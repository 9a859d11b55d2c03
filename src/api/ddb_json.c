/*-------------------------------------------------------------------------
 *
 * ddb_json.c
 *	  DynamoDB's JSON 1.0 bodies: parsing, writing, typed AttributeValues.
 *
 * The parser is a small recursive-descent one (one function per
 * production, as PostgreSQL's src/common/jsonapi.c) that builds a tree of
 * counted strings in CurrentMemoryContext.  It exists because DynamoDB
 * strings may hold U+0000, which PostgreSQL's JSON input (and so jsonb and
 * the text type) refuses: a PutItem of "a\u0000b" must come back from
 * GetItem byte for byte.  Everything here is counted (str + len); the
 * de-escaped strings are also NUL-terminated for convenience.
 *
 * Typed AttributeValues are checked in two steps, as DynamoDB does: the
 * JSON shape first (a number where a string belongs is a malformed request,
 * SerializationException, with the messages DynamoDB's Java deserializer
 * gives), then the values (ValidationException: empty or multi-typed
 * AttributeValues, NULL other than true, and the item model's own checks of
 * numbers, base64, sets and nesting, done by ddb_item_from_typed_jsonb).
 * The values reach the item model as an in-memory jsonb, which counts its
 * strings and so carries U+0000 too; they are never printed as jsonb text.
 *
 * The writer emits JSON text directly from DdbValue trees (typed form),
 * or from a parsed DdbJson tree as it came in, escaping every control
 * character, so U+0000 leaves as \u0000.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "common/base64.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "ddb.h"
#include "api/ddb_json.h"

/* DynamoDB's own limit on request nesting is far below this. */
#define DDB_JSON_MAX_DEPTH	200

typedef struct JsonParser
{
	const char *p;
	const char *end;
	int			depth;
	StringInfoData scratch;		/* a string being de-escaped */
	char	   *arena;			/* the rest of the current block (see */
	Size		arena_left;		/* parse_alloc) */
	Size		next_block;		/* the size of the next block */
} JsonParser;

/*
 * The tree's nodes, strings and member arrays are carved out of blocks
 * (twice the text at first, at least 1 kB, doubling up to 32 kB) rather
 * than palloc'd one by one: palloc's chunk header and power-of-two
 * rounding took a one-byte number 100 bytes, so that a 16 MB body of
 * [1,1,...] or of {"N":"1"}s took a worker near 1 GB.  Nothing in the tree
 * is freed or resized by its users; it goes with the memory context.
 * Larger pieces get a palloc of their own.
 */
#define PARSE_BLOCK			(32 * 1024)
#define PARSE_OWN_CHUNK		1024

static void *
parse_alloc(JsonParser *jp, Size size, bool align)
{
	void	   *p;

	if (size > PARSE_OWN_CHUNK)
		return palloc(size);
	if (align)
	{
		Size		pad = (Size) (MAXALIGN((uintptr_t) jp->arena) - (uintptr_t) jp->arena);

		if (jp->arena_left < pad + size)
			jp->arena_left = 0;
		else
		{
			jp->arena += pad;
			jp->arena_left -= pad;
		}
	}
	if (jp->arena_left < size)
	{
		/* first blocks sized by the text, so a small one takes little */
		jp->arena = palloc(jp->next_block);
		jp->arena_left = jp->next_block;
		jp->next_block = Min(PARSE_BLOCK, jp->next_block * 2);
	}
	p = jp->arena;
	jp->arena += size;
	jp->arena_left -= size;
	return p;
}

/* A member array grown from 'old' (n elements) to 'cap' elements. */
static void *
parse_grow(JsonParser *jp, void *old, int n, int cap, Size elemsize)
{
	void	   *p;

	if (old != NULL && (Size) n * elemsize > PARSE_OWN_CHUNK)
		return repalloc(old, (Size) cap * elemsize);
	p = parse_alloc(jp, (Size) cap * elemsize, true);
	if (n > 0)
		memcpy(p, old, (Size) n * elemsize);
	return p;
}

static DdbJson *parse_value(JsonParser *jp);

static void
serialization_error(const char *msg)
{
	ddb_raise(DDB_ERRCODE_SERIALIZATION, "SerializationException", "%s", msg);
}

static void
skip_ws(JsonParser *jp)
{
	while (jp->p < jp->end &&
		   (*jp->p == ' ' || *jp->p == '\t' || *jp->p == '\n' || *jp->p == '\r'))
		jp->p++;
}

static void
parse_fail(JsonParser *jp)
{
	if (jp->p >= jp->end)
		serialization_error("Unexpected end-of-input");
	serialization_error("Unexpected character in the request body");
}

static DdbJson *
new_node(JsonParser *jp, DdbJsonType type)
{
	DdbJson    *j = parse_alloc(jp, sizeof(DdbJson), true);

	memset(j, 0, sizeof(DdbJson));
	j->type = type;
	return j;
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static unsigned int
parse_hex4(JsonParser *jp)
{
	unsigned int v = 0;

	if (jp->end - jp->p < 4)
		parse_fail(jp);
	for (int i = 0; i < 4; i++)
	{
		int			h = hexval(jp->p[i]);

		if (h < 0)
			serialization_error("Invalid escape sequence in a JSON string");
		v = v * 16 + h;
	}
	jp->p += 4;
	return v;
}

/* A string token (jp->p at the opening quote), de-escaped into buf. */
static void
parse_string_into(JsonParser *jp, StringInfo buf)
{
	jp->p++;					/* the quote */
	for (;;)
	{
		const char *start = jp->p;

		/* copy a run of plain bytes at once */
		while (jp->p < jp->end && *jp->p != '"' && *jp->p != '\\' &&
			   (unsigned char) *jp->p >= 0x20)
			jp->p++;
		appendBinaryStringInfo(buf, start, jp->p - start);
		if (jp->p >= jp->end)
			parse_fail(jp);
		if (*jp->p == '"')
		{
			jp->p++;
			break;
		}
		if ((unsigned char) *jp->p < 0x20)
			serialization_error("Illegal unquoted character in a JSON string");
		/* an escape */
		jp->p++;
		if (jp->p >= jp->end)
			parse_fail(jp);
		switch (*jp->p++)
		{
			case '"':
				appendStringInfoChar(buf, '"');
				break;
			case '\\':
				appendStringInfoChar(buf, '\\');
				break;
			case '/':
				appendStringInfoChar(buf, '/');
				break;
			case 'b':
				appendStringInfoChar(buf, '\b');
				break;
			case 'f':
				appendStringInfoChar(buf, '\f');
				break;
			case 'n':
				appendStringInfoChar(buf, '\n');
				break;
			case 'r':
				appendStringInfoChar(buf, '\r');
				break;
			case 't':
				appendStringInfoChar(buf, '\t');
				break;
			case 'u':
				{
					pg_wchar	cp = parse_hex4(jp);
					unsigned char utf8[8];

					if (cp >= 0xD800 && cp <= 0xDBFF)
					{
						/* a high surrogate must be followed by a low one */
						pg_wchar	lo;

						if (jp->end - jp->p < 6 || jp->p[0] != '\\' || jp->p[1] != 'u')
							serialization_error("Invalid surrogate pair in a JSON string");
						jp->p += 2;
						lo = parse_hex4(jp);
						if (lo < 0xDC00 || lo > 0xDFFF)
							serialization_error("Invalid surrogate pair in a JSON string");
						cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
					}
					else if (cp >= 0xDC00 && cp <= 0xDFFF)
						serialization_error("Invalid surrogate pair in a JSON string");
					if (cp == 0)
						appendStringInfoChar(buf, '\0');
					else
					{
						unicode_to_utf8(cp, utf8);
						appendBinaryStringInfo(buf, (char *) utf8, pg_utf_mblen(utf8));
					}
					break;
				}
			default:
				serialization_error("Invalid escape sequence in a JSON string");
		}
	}
}

/*
 * A de-escaped string (a value or an object's key) must be valid in the
 * database's encoding, U+0000 (which the protocol allows) aside: each run
 * between NULs is checked.  A key unchecked would become an attribute name
 * that no client can decode.
 */
static void
check_string_encoding(const char *s, int len)
{
	while (len > 0)
	{
		const char *nul = memchr(s, '\0', len);
		int			run = nul ? nul - s : len;

		if (!pg_verifymbstr(s, run, true))
			serialization_error("Invalid UTF-8 in a JSON string");
		if (nul == NULL)
			break;
		s += run + 1;
		len -= run + 1;
	}
}

/*
 * A string token de-escaped, in a palloc'd copy of its own size.  (Each
 * one used to keep the 1 kB buffer it was de-escaped into: a 16 MB body of
 * short strings, ["a","a",...], took a worker past 4 GB.)
 */
static char *
parse_string_copy(JsonParser *jp, int *len)
{
	char	   *copy;

	if (jp->scratch.data == NULL)
		initStringInfo(&jp->scratch);
	else
		resetStringInfo(&jp->scratch);
	parse_string_into(jp, &jp->scratch);
	check_string_encoding(jp->scratch.data, jp->scratch.len);
	copy = parse_alloc(jp, jp->scratch.len + 1, false);
	memcpy(copy, jp->scratch.data, jp->scratch.len + 1);
	*len = jp->scratch.len;
	return copy;
}

static DdbJson *
parse_string(JsonParser *jp)
{
	DdbJson    *j = new_node(jp, DDB_JSON_STRING);

	j->str = parse_string_copy(jp, &j->len);
	return j;
}

static DdbJson *
parse_number(JsonParser *jp)
{
	const char *start = jp->p;
	DdbJson    *j;

	if (jp->p < jp->end && *jp->p == '-')
		jp->p++;
	if (jp->p >= jp->end || !isdigit((unsigned char) *jp->p))
		parse_fail(jp);
	while (jp->p < jp->end && isdigit((unsigned char) *jp->p))
		jp->p++;
	if (jp->p < jp->end && *jp->p == '.')
	{
		jp->p++;
		if (jp->p >= jp->end || !isdigit((unsigned char) *jp->p))
			parse_fail(jp);
		while (jp->p < jp->end && isdigit((unsigned char) *jp->p))
			jp->p++;
	}
	if (jp->p < jp->end && (*jp->p == 'e' || *jp->p == 'E'))
	{
		jp->p++;
		if (jp->p < jp->end && (*jp->p == '+' || *jp->p == '-'))
			jp->p++;
		if (jp->p >= jp->end || !isdigit((unsigned char) *jp->p))
			parse_fail(jp);
		while (jp->p < jp->end && isdigit((unsigned char) *jp->p))
			jp->p++;
	}
	j = new_node(jp, DDB_JSON_NUMBER);
	j->len = jp->p - start;
	j->str = parse_alloc(jp, j->len + 1, false);
	memcpy(j->str, start, j->len);
	j->str[j->len] = '\0';
	return j;
}

static bool
match_word(JsonParser *jp, const char *word)
{
	int			n = strlen(word);

	if (jp->end - jp->p >= n && memcmp(jp->p, word, n) == 0)
	{
		jp->p += n;
		return true;
	}
	return false;
}

static DdbJson *
parse_container(JsonParser *jp, bool object)
{
	DdbJson    *j = new_node(jp, object ? DDB_JSON_OBJECT : DDB_JSON_ARRAY);
	int			cap = 0;
	char		close = object ? '}' : ']';

	check_stack_depth();
	if (++jp->depth > DDB_JSON_MAX_DEPTH)
		serialization_error("The request body nests too deeply");
	jp->p++;					/* { or [ */
	skip_ws(jp);
	if (jp->p < jp->end && *jp->p == close)
	{
		jp->p++;
		jp->depth--;
		return j;
	}
	for (;;)
	{
		if (j->n == cap)
		{
			/* (most objects of a request have one or two members) */
			cap = cap ? cap * 2 : 2;
			if (cap > (int) (MaxAllocSize / sizeof(DdbJson *)))
				serialization_error("The request body has too many members");
			j->elems = parse_grow(jp, j->elems, j->n, cap, sizeof(DdbJson *));
			if (object)
			{
				j->keys = parse_grow(jp, j->keys, j->n, cap, sizeof(char *));
				j->keylens = parse_grow(jp, j->keylens, j->n, cap, sizeof(int));
			}
		}
		skip_ws(jp);
		if (object)
		{
			if (jp->p >= jp->end || *jp->p != '"')
				parse_fail(jp);
			j->keys[j->n] = parse_string_copy(jp, &j->keylens[j->n]);
			skip_ws(jp);
			if (jp->p >= jp->end || *jp->p != ':')
				parse_fail(jp);
			jp->p++;
		}
		j->elems[j->n++] = parse_value(jp);
		skip_ws(jp);
		if (jp->p < jp->end && *jp->p == ',')
		{
			jp->p++;
			continue;
		}
		if (jp->p < jp->end && *jp->p == close)
		{
			jp->p++;
			break;
		}
		parse_fail(jp);
	}
	jp->depth--;
	return j;
}

static DdbJson *
parse_value(JsonParser *jp)
{
	DdbJson    *j;

	skip_ws(jp);
	if (jp->p >= jp->end)
		parse_fail(jp);
	switch (*jp->p)
	{
		case '{':
			return parse_container(jp, true);
		case '[':
			return parse_container(jp, false);
		case '"':
			return parse_string(jp);
		case 't':
		case 'f':
			j = new_node(jp, DDB_JSON_BOOL);
			if (match_word(jp, "true"))
				j->boolean = true;
			else if (!match_word(jp, "false"))
				parse_fail(jp);
			return j;
		case 'n':
			if (!match_word(jp, "null"))
				parse_fail(jp);
			return new_node(jp, DDB_JSON_NULL);
		default:
			return parse_number(jp);
	}
}

DdbJson *
ddb_json_parse(const char *text, int len)
{
	JsonParser	jp;
	DdbJson    *j;

	jp.p = text;
	jp.end = text + len;
	jp.depth = 0;
	jp.scratch.data = NULL;		/* made at the first string */
	jp.arena = NULL;
	jp.arena_left = 0;
	/* (a 1 kB floor keeps a block above PARSE_OWN_CHUNK) */
	jp.next_block = Min(PARSE_BLOCK, Max((Size) 1024, (Size) len * 2));
	j = parse_value(&jp);
	skip_ws(&jp);
	if (jp.p != jp.end)
		parse_fail(&jp);
	return j;
}

DdbJson *
ddb_json_get(DdbJson *obj, const char *key)
{
	int			len = strlen(key);

	if (obj == NULL || obj->type != DDB_JSON_OBJECT)
		return NULL;
	/* the last one wins, as in DynamoDB's deserializer */
	for (int i = obj->n - 1; i >= 0; i--)
		if (obj->keylens[i] == len && memcmp(obj->keys[i], key, len) == 0)
			return obj->elems[i];
	return NULL;
}

DdbJson *
ddb_json_member(DdbJson *obj, const char *key)
{
	DdbJson    *j = ddb_json_get(obj, key);

	return (j == NULL || j->type == DDB_JSON_NULL) ? NULL : j;
}

/* ------------------------------------------------------------------------
 * Writing
 * ------------------------------------------------------------------------
 */
void
ddb_json_string(StringInfo buf, const char *s, int len)
{
	static const char hex[] = "0123456789abcdef";

	/* the common case: nothing to escape, one append with its quotes */
	{
		int			n = 0;

		while (n < len && (unsigned char) s[n] >= 0x20 && s[n] != '"' && s[n] != '\\')
			n++;
		if (n == len)
		{
			enlargeStringInfo(buf, len + 2);
			buf->data[buf->len++] = '"';
			memcpy(buf->data + buf->len, s, len);
			buf->len += len;
			buf->data[buf->len++] = '"';
			buf->data[buf->len] = '\0';
			return;
		}
	}

	appendStringInfoChar(buf, '"');
	for (int i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) s[i];
		int			run = i;

		/* a run of characters that need no escape goes in at once */
		while (run < len && (unsigned char) s[run] >= 0x20 && s[run] != '"' && s[run] != '\\')
			run++;
		if (run > i)
		{
			appendBinaryStringInfo(buf, s + i, run - i);
			i = run - 1;
			continue;
		}

		switch (c)
		{
			case '"':
				appendStringInfoString(buf, "\\\"");
				break;
			case '\\':
				appendStringInfoString(buf, "\\\\");
				break;
			case '\n':
				appendStringInfoString(buf, "\\n");
				break;
			case '\r':
				appendStringInfoString(buf, "\\r");
				break;
			case '\t':
				appendStringInfoString(buf, "\\t");
				break;
			case '\b':
				appendStringInfoString(buf, "\\b");
				break;
			case '\f':
				appendStringInfoString(buf, "\\f");
				break;
			default:
				if (c < 0x20)
				{
					appendStringInfoString(buf, "\\u00");
					appendStringInfoChar(buf, hex[c >> 4]);
					appendStringInfoChar(buf, hex[c & 15]);
				}
				else
					appendStringInfoChar(buf, (char) c);
		}
	}
	appendStringInfoChar(buf, '"');
}

void
ddb_json_cstring(StringInfo buf, const char *s)
{
	ddb_json_string(buf, s, strlen(s));
}

/* Start an object member: a comma unless it is the first, the key, a colon. */
void
ddb_json_key(StringInfo buf, bool *first, const char *key)
{
	if (!*first)
		appendStringInfoChar(buf, ',');
	*first = false;
	ddb_json_cstring(buf, key);
	appendStringInfoChar(buf, ':');
}

static void
write_base64(StringInfo buf, const char *data, int len)
{
	int			enclen = pg_b64_enc_len(len);
	char	   *enc = palloc(enclen + 1);
	int			n = len == 0 ? 0 : pg_b64_encode(data, len, enc, enclen);

	if (n < 0)
		elog(ERROR, "base64 encoding failed");
	ddb_json_string(buf, enc, n);
	pfree(enc);
}

static void
write_number(StringInfo buf, Numeric num)
{
	ddb_json_cstring(buf, numeric_normalize(num));
}

/* One value in typed form: {"S": "x"}, {"N": "1"}, {"M": {...}}, ... */
void
ddb_json_write_value(StringInfo buf, DdbValue *v)
{
	const char *type = ddb_type_name(v->type);
	int			typelen = strlen(type);

	check_stack_depth();
	/* {"<type>": in one append (type names need no escapes) */
	enlargeStringInfo(buf, typelen + 4);
	buf->data[buf->len++] = '{';
	buf->data[buf->len++] = '"';
	memcpy(buf->data + buf->len, type, typelen);
	buf->len += typelen;
	buf->data[buf->len++] = '"';
	buf->data[buf->len++] = ':';
	buf->data[buf->len] = '\0';
	switch (v->type)
	{
		case DDB_TYPE_S:
			ddb_json_string(buf, v->u.str.data, v->u.str.len);
			break;
		case DDB_TYPE_N:
			write_number(buf, v->u.num);
			break;
		case DDB_TYPE_B:
			write_base64(buf, v->u.str.data, v->u.str.len);
			break;
		case DDB_TYPE_BOOL:
			appendStringInfoString(buf, v->u.boolean ? "true" : "false");
			break;
		case DDB_TYPE_NULL:
			appendStringInfoString(buf, "true");
			break;
		case DDB_TYPE_L:
			appendStringInfoChar(buf, '[');
			for (int i = 0; i < v->u.list.n; i++)
			{
				if (i > 0)
					appendStringInfoChar(buf, ',');
				ddb_json_write_value(buf, v->u.list.elems[i]);
			}
			appendStringInfoChar(buf, ']');
			break;
		case DDB_TYPE_M:
			ddb_json_write_item(buf, v);
			break;
		case DDB_TYPE_SS:
		case DDB_TYPE_NS:
		case DDB_TYPE_BS:
			appendStringInfoChar(buf, '[');
			for (int i = 0; i < v->u.list.n; i++)
			{
				DdbValue   *e = v->u.list.elems[i];

				if (i > 0)
					appendStringInfoChar(buf, ',');
				if (e->type == DDB_TYPE_N)
					write_number(buf, e->u.num);
				else if (e->type == DDB_TYPE_B)
					write_base64(buf, e->u.str.data, e->u.str.len);
				else
					ddb_json_string(buf, e->u.str.data, e->u.str.len);
			}
			appendStringInfoChar(buf, ']');
			break;
	}
	appendStringInfoChar(buf, '}');
}

/* A map of attributes (an item, or an M value's body) in typed form. */
void
ddb_json_write_item(StringInfo buf, DdbValue *item)
{
	appendStringInfoChar(buf, '{');
	for (int i = 0; i < item->u.map.n; i++)
	{
		if (i > 0)
			appendStringInfoChar(buf, ',');
		ddb_json_cstring(buf, item->u.map.keys[i]);
		appendStringInfoChar(buf, ':');
		ddb_json_write_value(buf, item->u.map.vals[i]);
	}
	appendStringInfoChar(buf, '}');
}

/* A document-form item (as the item functions return it), typed. */
void
ddb_json_write_jsonb_item(StringInfo buf, Jsonb *item)
{
	ddb_json_write_item(buf, ddb_item_from_jsonb(item));
}

/*
 * A parsed tree back to JSON text, as it came in but for whitespace and
 * escapes (numbers keep their lexeme, strings their every byte).
 */
void
ddb_json_write_json(StringInfo buf, DdbJson *j)
{
	switch (j->type)
	{
		case DDB_JSON_NULL:
			appendStringInfoString(buf, "null");
			break;
		case DDB_JSON_BOOL:
			appendStringInfoString(buf, j->boolean ? "true" : "false");
			break;
		case DDB_JSON_NUMBER:
			appendStringInfoString(buf, j->str);
			break;
		case DDB_JSON_STRING:
			ddb_json_string(buf, j->str, j->len);
			break;
		case DDB_JSON_ARRAY:
			appendStringInfoChar(buf, '[');
			for (int i = 0; i < j->n; i++)
			{
				if (i > 0)
					appendStringInfoChar(buf, ',');
				ddb_json_write_json(buf, j->elems[i]);
			}
			appendStringInfoChar(buf, ']');
			break;
		case DDB_JSON_OBJECT:
			appendStringInfoChar(buf, '{');
			for (int i = 0; i < j->n; i++)
			{
				if (i > 0)
					appendStringInfoChar(buf, ',');
				ddb_json_string(buf, j->keys[i], j->keylens[i]);
				appendStringInfoChar(buf, ':');
				ddb_json_write_json(buf, j->elems[i]);
			}
			appendStringInfoChar(buf, '}');
			break;
	}
}

/* ------------------------------------------------------------------------
 * Typed AttributeValues in
 * ------------------------------------------------------------------------
 */

/* The Java class names DynamoDB's deserializer mentions, by target type. */
static void
shape_error_scalar(DdbJson *j, const char *target, const char *collection_class)
{
	switch (j->type)
	{
		case DDB_JSON_BOOL:
			ereport(ERROR,
					(errcode(DDB_ERRCODE_SERIALIZATION),
					 errmsg("SerializationException: " DDB_MSG_SER_CONVERT,
							j->boolean ? "TRUE_VALUE" : "FALSE_VALUE", target)));
			break;
		case DDB_JSON_NUMBER:
			ereport(ERROR,
					(errcode(DDB_ERRCODE_SERIALIZATION),
					 errmsg("SerializationException: " DDB_MSG_SER_CONVERT,
							strpbrk(j->str, ".eE") ? "DECIMAL_VALUE" : "NUMBER_VALUE", target)));
			break;
		case DDB_JSON_STRING:
			ereport(ERROR,
					(errcode(DDB_ERRCODE_SERIALIZATION),
					 errmsg("SerializationException: " DDB_MSG_SER_CONVERT, "STRING_VALUE", target)));
			break;
		case DDB_JSON_ARRAY:
			ereport(ERROR,
					(errcode(DDB_ERRCODE_SERIALIZATION),
					 errmsg("SerializationException: " DDB_MSG_SER_COLLECTION, collection_class)));
			break;
		case DDB_JSON_OBJECT:
			serialization_error(DDB_MSG_SER_START_OF_MAP);
			break;
		case DDB_JSON_NULL:
			break;
	}
}

static void push_typed_value(JsonbParseState **ps, DdbJson *j, JsonbIteratorToken tok);

static void
push_str(JsonbParseState **ps, JsonbIteratorToken tok, const char *s, int len)
{
	JsonbValue	v;

	v.type = jbvString;
	v.val.string.val = (char *) s;
	v.val.string.len = len;
	pushJsonbValue(ps, tok, &v);
}

/*
 * A JSON null where a string is required: an element of a list of strings
 * (AttributesToGet, NonKeyAttributes, TagKeys) or of a set.  Members that
 * are null are left out before they get here (member(), the typed value's
 * members), so every caller that reads ->str next would read NULL.
 * DynamoDB's deserializer keeps such a null and its validation refuses it;
 * its text is not recorded, so the words are ddb's.
 */
static void
null_element(void)
{
	ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", DDB_MSG_NULL_ELEMENT);
}

/* Check a string member of an AttributeValue (S, N, set elements). */
static void
check_string(DdbJson *j)
{
	if (j->type == DDB_JSON_NULL)
		null_element();
	if (j->type != DDB_JSON_STRING)
		shape_error_scalar(j, "String", "class java.lang.String");
}

/* B and BS elements: base64 strings, checked as DynamoDB's deserializer does */
static void
check_blob(DdbJson *j)
{
	if (j->type == DDB_JSON_NULL)
		null_element();
	if (j->type == DDB_JSON_BOOL || j->type == DDB_JSON_NUMBER)
		serialization_error(DDB_MSG_SER_BYTES);
	if (j->type == DDB_JSON_ARRAY)
		serialization_error(psprintf(DDB_MSG_SER_COLLECTION, "class java.nio.ByteBuffer"));
	if (j->type == DDB_JSON_OBJECT)
		serialization_error(DDB_MSG_SER_START_OF_MAP);
	if (j->len % 4 != 0)
		ereport(ERROR,
				(errcode(DDB_ERRCODE_SERIALIZATION),
				 errmsg("SerializationException: " DDB_MSG_SER_BASE64_LENGTH, j->len)));
	if (j->len > 0 && pg_b64_decode(j->str, j->len, palloc(pg_b64_dec_len(j->len) + 1),
									pg_b64_dec_len(j->len)) < 0)
		serialization_error(DDB_MSG_SER_BASE64_CHAR);
}

static bool
check_bool(DdbJson *j)
{
	if (j->type == DDB_JSON_BOOL)
		return j->boolean;
	if (j->type == DDB_JSON_STRING)
	{
		/* DynamoDB's deserializer takes these strings for booleans */
		if (pg_strcasecmp(j->str, "true") == 0 || strcmp(j->str, "1") == 0 ||
			pg_strcasecmp(j->str, "yes") == 0)
			return true;
		if (pg_strcasecmp(j->str, "false") == 0 || strcmp(j->str, "0") == 0 ||
			pg_strcasecmp(j->str, "no") == 0)
			return false;
		serialization_error(DDB_MSG_SER_BOOL_TOKEN);
	}
	shape_error_scalar(j, "Boolean", "class java.lang.Boolean");
	return false;
}

static void
check_list(DdbJson *j)
{
	if (j->type == DDB_JSON_OBJECT)
		serialization_error(DDB_MSG_SER_START_OF_MAP);
	if (j->type != DDB_JSON_ARRAY)
		serialization_error(DDB_MSG_SER_FIELD_TYPE);
}

static void
check_attribute_map(DdbJson *j)
{
	if (j->type == DDB_JSON_ARRAY)
		serialization_error(psprintf(DDB_MSG_SER_COLLECTION, "java.util.Map<java.lang.String, com.amazonaws.dynamodb.v20120810.AttributeValue>"));
	if (j->type != DDB_JSON_OBJECT)
		serialization_error(DDB_MSG_SER_FIELD_TYPE);
}

/* An attribute name: any string but one holding U+0000 (see README). */
static void
check_attribute_name(const char *name, int len)
{
	if (ddb_has_nul(name, len))
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException",
				  "One or more parameter values were invalid: An attribute name contains U+0000, which ddb does not support in attribute names");
}

/*
 * Push a map of attribute name -> typed AttributeValue as a typed jsonb
 * object (an Item, Key, ExpressionAttributeValues, or an M value).
 */
static void
push_typed_map(JsonbParseState **ps, DdbJson *j, JsonbIteratorToken tok)
{
	check_attribute_map(j);
	pushJsonbValue(ps, WJB_BEGIN_OBJECT, NULL);
	for (int i = 0; i < j->n; i++)
	{
		/* a null value is an absent member */
		if (j->elems[i]->type == DDB_JSON_NULL)
			continue;
		check_attribute_name(j->keys[i], j->keylens[i]);
		push_str(ps, WJB_KEY, j->keys[i], j->keylens[i]);
		push_typed_value(ps, j->elems[i], WJB_VALUE);
	}
	pushJsonbValue(ps, WJB_END_OBJECT, NULL);
}

/*
 * One typed AttributeValue: the JSON shape checked here, pushed as typed
 * jsonb for the item model to validate.  Unknown type names are ignored and
 * null members are absent, as in DynamoDB, so {"X": 1} is an empty
 * AttributeValue.
 */
static void
push_typed_value(JsonbParseState **ps, DdbJson *j, JsonbIteratorToken tok)
{
	int			ntypes = 0;
	int			which = -1;
	DdbType		type = DDB_TYPE_NULL;
	DdbJson    *v;
	JsonbValue	jv;

	check_stack_depth();
	if (j->type != DDB_JSON_OBJECT)
	{
		if (j->type == DDB_JSON_ARRAY)
			serialization_error(psprintf(DDB_MSG_SER_COLLECTION, DDB_MSG_SER_CLASS_ATTRIBUTE_VALUE));
		serialization_error(DDB_MSG_SER_VALUE_TYPE);
	}
	for (int i = 0; i < j->n; i++)
	{
		DdbType		t;

		if (j->elems[i]->type == DDB_JSON_NULL ||
			!ddb_type_from_name(j->keys[i], j->keylens[i], &t))
			continue;
		/* the shape of each member, whichever one is used */
		v = j->elems[i];
		switch (t)
		{
			case DDB_TYPE_S:
			case DDB_TYPE_N:
				check_string(v);
				break;
			case DDB_TYPE_B:
				check_blob(v);
				break;
			case DDB_TYPE_BOOL:
			case DDB_TYPE_NULL:
				(void) check_bool(v);
				break;
			case DDB_TYPE_L:
				check_list(v);
				break;
			case DDB_TYPE_SS:
			case DDB_TYPE_NS:
			case DDB_TYPE_BS:
				check_list(v);
				for (int e = 0; e < v->n; e++)
				{
					if (t == DDB_TYPE_BS)
						check_blob(v->elems[e]);
					else
						check_string(v->elems[e]);
				}
				break;
			case DDB_TYPE_M:
				check_attribute_map(v);
				break;
		}
		ntypes++;
		which = i;
		type = t;
	}
	if (ntypes == 0)
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", DDB_MSG_EMPTY_ATTRIBUTE_VALUE);
	if (ntypes > 1)
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", DDB_MSG_MULTI_TYPE_ATTRIBUTE_VALUE);
	v = j->elems[which];
	if (type == DDB_TYPE_NULL && !check_bool(v))
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", DDB_MSG_NULL_MUST_BE_TRUE);

	pushJsonbValue(ps, WJB_BEGIN_OBJECT, NULL);
	push_str(ps, WJB_KEY, ddb_type_name(type), strlen(ddb_type_name(type)));
	switch (type)
	{
		case DDB_TYPE_S:
		case DDB_TYPE_N:
		case DDB_TYPE_B:
			push_str(ps, WJB_VALUE, v->str, v->len);
			break;
		case DDB_TYPE_BOOL:
		case DDB_TYPE_NULL:
			jv.type = jbvBool;
			jv.val.boolean = check_bool(v);
			pushJsonbValue(ps, WJB_VALUE, &jv);
			break;
		case DDB_TYPE_L:
			pushJsonbValue(ps, WJB_BEGIN_ARRAY, NULL);
			for (int e = 0; e < v->n; e++)
				push_typed_value(ps, v->elems[e], WJB_ELEM);
			pushJsonbValue(ps, WJB_END_ARRAY, NULL);
			break;
		case DDB_TYPE_SS:
		case DDB_TYPE_NS:
		case DDB_TYPE_BS:
			pushJsonbValue(ps, WJB_BEGIN_ARRAY, NULL);
			for (int e = 0; e < v->n; e++)
				push_str(ps, WJB_ELEM, v->elems[e]->str, v->elems[e]->len);
			pushJsonbValue(ps, WJB_END_ARRAY, NULL);
			break;
		case DDB_TYPE_M:
			push_typed_map(ps, v, WJB_VALUE);
			break;
	}
	pushJsonbValue(ps, WJB_END_OBJECT, NULL);
}

/* A map of typed AttributeValues as typed jsonb (in memory only). */
static Jsonb *
typed_map_jsonb(DdbJson *j)
{
	JsonbParseState *ps = NULL;
	JsonbValue *res;

	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	for (int i = 0; i < j->n; i++)
	{
		if (j->elems[i]->type == DDB_JSON_NULL)
			continue;
		check_attribute_name(j->keys[i], j->keylens[i]);
		push_str(&ps, WJB_KEY, j->keys[i], j->keylens[i]);
		push_typed_value(&ps, j->elems[i], WJB_VALUE);
	}
	res = pushJsonbValue(&ps, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(res);
}

/* A map of attributes (Item, Key, ...) as a validated item. */
DdbValue *
ddb_typed_item(DdbJson *j)
{
	check_attribute_map(j);
	return ddb_item_from_typed_jsonb(typed_map_jsonb(j));
}

/* One AttributeValue, validated. */
DdbValue *
ddb_typed_value(DdbJson *j)
{
	JsonbParseState *ps = NULL;
	DdbValue   *m;

	/* as the only attribute of a one-attribute item */
	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	push_str(&ps, WJB_KEY, "v", 1);
	push_typed_value(&ps, j, WJB_VALUE);
	m = ddb_item_from_typed_jsonb(JsonbValueToJsonb(pushJsonbValue(&ps, WJB_END_OBJECT, NULL)));
	return m->u.map.vals[0];
}

/* A map of typed attributes as a document-form item (what SQL stores). */
Jsonb *
ddb_typed_item_jsonb(DdbJson *j)
{
	return ddb_item_to_jsonb(ddb_typed_item(j));
}

/* jsonb's order of object keys: shorter first, then bytewise */
static int
jsonb_key_order(const void *a, const void *b, void *arg)
{
	DdbJson    *j = (DdbJson *) arg;
	int			x = *(const int *) a;
	int			y = *(const int *) b;

	if (j->keylens[x] != j->keylens[y])
		return j->keylens[x] < j->keylens[y] ? -1 : 1;
	return memcmp(j->keys[x], j->keys[y], j->keylens[x]);
}

/*
 * ExpressionAttributeValues as a document-form map.  An invalid value is
 * reported in DynamoDB's frame for it, naming its key
 * (ddb_raise_value_error): when the map as a whole fails validation, each
 * value is converted again on its own to find it -- only then, so that
 * valid requests convert once -- in jsonb's key order, the order the SQL
 * functions' values are checked in, whatever order the request's text
 * has.  (Which of several invalid values DynamoDB names is not
 * documented.)  Any other error (a malformed value's
 * SerializationException, which DynamoDB raises before it validates
 * anything; a cancel) is raised as it is.
 */
Jsonb *
ddb_typed_values_jsonb(DdbJson *j)
{
	MemoryContext cxt = CurrentMemoryContext;
	Jsonb	   *volatile result = NULL;

	PG_TRY();
	{
		result = ddb_typed_item_jsonb(j);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		int		   *order;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		if (!ddb_value_error_frameable(edata))
			ReThrowError(edata);
		order = palloc(sizeof(int) * Max(j->n, 1));
		for (int i = 0; i < j->n; i++)
			order[i] = i;
		qsort_arg(order, j->n, sizeof(int), jsonb_key_order, j);
		for (int o = 0; o < j->n; o++)
		{
			/* the map of this value alone, converted as the whole was */
			int			i = order[o];
			DdbJson		one = *j;

			one.n = 1;
			one.keys = &j->keys[i];
			one.keylens = &j->keylens[i];
			one.elems = &j->elems[i];
			PG_TRY();
			{
				(void) ddb_typed_item_jsonb(&one);
			}
			PG_CATCH();
			{
				ErrorData  *vdata;

				MemoryContextSwitchTo(cxt);
				vdata = CopyErrorData();
				FlushErrorState();
				ddb_raise_value_error(vdata, j->keys[i]);
			}
			PG_END_TRY();
		}
		ReThrowError(edata);
	}
	PG_END_TRY();
	return result;
}

/* ------------------------------------------------------------------------
 * Shapes of request members, as DynamoDB's deserializer checks them
 * ------------------------------------------------------------------------
 */
void
ddb_json_check_string(DdbJson *j)
{
	check_string(j);
}

/*
 * The keys of a map of attribute names (the legacy parameters' conditions
 * and updates), which are read as C strings: one holding U+0000 would name
 * another attribute, so it is refused as the member strings below are.
 */
void
ddb_json_check_key_names(DdbJson *j, const char *what)
{
	for (int i = 0; j->type == DDB_JSON_OBJECT && i < j->n; i++)
		if (strlen(j->keys[i]) != (size_t) j->keylens[i])
			ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", DDB_MSG_NUL_IN_NAME, what);
}

/*
 * A request member read as a C string (a name, an expression, a token):
 * one holding U+0000 would be read cut short -- TableName "t\u0000x" as the
 * table t -- so it is refused.
 */
const char *
ddb_json_member_cstring(DdbJson *j, const char *name)
{
	check_string(j);
	if (strlen(j->str) != (size_t) j->len)
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", DDB_MSG_NUL_IN_NAME, name);
	return j->str;
}

bool
ddb_json_check_bool(DdbJson *j)
{
	return check_bool(j);
}

/*
 * A number member (target: "Integer", "Long": Java's int and long), its
 * value floored, as DynamoDB's deserializer takes 1.5 for 1 (dynalite's
 * record).  A number that the target cannot hold (Limit 1e100, Segment
 * 2147483648) is not a value of the member's type at all, so it is a
 * SerializationException, before any member's constraints are checked,
 * rather than a ValidationException naming a bound the API reference does
 * not give (Scan's Limit has none).  DynamoDB's text for it is not
 * recorded; the words are its deserializer's for a number where a string
 * is expected ("NUMBER_VALUE cannot be converted to Integer").
 */
double
ddb_json_check_number(DdbJson *j, const char *target)
{
	double		d;
	bool		fits;

	if (j->type != DDB_JSON_NUMBER)
		shape_error_scalar(j, target, psprintf("class java.lang.%s", target));
	d = floor(strtod(j->str, NULL));
	if (strcmp(target, "Integer") == 0)
		fits = d >= PG_INT32_MIN && d <= PG_INT32_MAX;
	else
	{
		/* long: exact for an integer's digits, which a double rounds */
		char	   *end;

		errno = 0;
		(void) strtoi64(j->str, &end, 10);
		if (*end == '\0')
			fits = errno != ERANGE;
		else
			fits = d >= -9223372036854775808.0 && d < 9223372036854775808.0;
	}
	if (!fits)
		shape_error_scalar(j, target, NULL);
	return d;
}

void
ddb_json_check_list(DdbJson *j)
{
	check_list(j);
}

/*
 * A structure: a member's value (ddb_json_check_struct) or an element of a
 * list or map of structures (ddb_json_check_value_struct).  DynamoDB words
 * a scalar in the two places differently: "Unexpected field type" for a
 * member, "Unexpected value type in payload" for an element.
 */
static void
check_struct(DdbJson *j, const char *structname, const char *scalar_msg)
{
	if (j->type == DDB_JSON_ARRAY)
		ereport(ERROR,
				(errcode(DDB_ERRCODE_SERIALIZATION),
				 errmsg("SerializationException: Unrecognized collection type class com.amazonaws.dynamodb.v20120810.%s",
						structname)));
	if (j->type != DDB_JSON_OBJECT)
		serialization_error(scalar_msg);
}

void
ddb_json_check_struct(DdbJson *j, const char *structname)
{
	check_struct(j, structname, DDB_MSG_SER_FIELD_TYPE);
}

void
ddb_json_check_value_struct(DdbJson *j, const char *structname)
{
	check_struct(j, structname, DDB_MSG_SER_VALUE_TYPE);
}

/* A map of strings (ExpressionAttributeNames, Tags as a map) */
void
ddb_json_check_string_map(DdbJson *j)
{
	if (j->type == DDB_JSON_ARRAY)
		serialization_error("Unrecognized collection type java.util.Map<java.lang.String, java.lang.String>");
	if (j->type != DDB_JSON_OBJECT)
		serialization_error(DDB_MSG_SER_FIELD_TYPE);
	for (int i = 0; i < j->n; i++)
		if (j->elems[i]->type != DDB_JSON_NULL)
			check_string(j->elems[i]);
}

void
ddb_json_check_attribute_map(DdbJson *j)
{
	check_attribute_map(j);
}
