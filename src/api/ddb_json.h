/*-------------------------------------------------------------------------
 *
 * ddb_json.h
 *	  DynamoDB's JSON 1.0 bodies: a parser that keeps every string byte
 *	  (U+0000 included), a writer, and typed AttributeValues.
 *
 * PostgreSQL's JSON input refuses \u0000 in strings, and DynamoDB allows
 * U+0000 in string values, so request bodies are parsed here, into a small
 * tree of counted strings, never through jsonb text input.  See
 * ddb_json.c.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DDB_JSON_H
#define DDB_JSON_H

#include "lib/stringinfo.h"
#include "utils/jsonb.h"

#include "model/ddb_expr.h"

typedef enum DdbJsonType
{
	DDB_JSON_NULL,
	DDB_JSON_BOOL,
	DDB_JSON_NUMBER,
	DDB_JSON_STRING,
	DDB_JSON_ARRAY,
	DDB_JSON_OBJECT
} DdbJsonType;

typedef struct DdbJson DdbJson;
struct DdbJson
{
	DdbJsonType type;
	bool		boolean;		/* BOOL */
	char	   *str;			/* STRING: de-escaped, NUL-terminated copy; */
	int			len;			/* its length (it may hold NUL bytes); NUMBER:
								 * the lexeme */
	int			n;				/* ARRAY, OBJECT: number of members */
	DdbJson   **elems;			/* ARRAY elements, OBJECT values */
	char	  **keys;			/* OBJECT keys (NUL-terminated) */
	int		   *keylens;		/* their lengths */
};

/* Parse one JSON text; SerializationException when it is not JSON. */
extern DdbJson *ddb_json_parse(const char *text, int len);

/* An object's member (the last one of that name), or NULL. */
extern DdbJson *ddb_json_get(DdbJson *obj, const char *key);

/* ... NULL also when it is JSON null, which requests mean as absent. */
extern DdbJson *ddb_json_member(DdbJson *obj, const char *key);

/* Does a counted string hold a NUL byte? */
static inline bool
ddb_has_nul(const char *s, int len)
{
	return memchr(s, '\0', len) != NULL;
}

/* Writing JSON text. */
extern void ddb_json_string(StringInfo buf, const char *s, int len);
extern void ddb_json_cstring(StringInfo buf, const char *s);
extern void ddb_json_key(StringInfo buf, bool *first, const char *key);
extern void ddb_json_write_json(StringInfo buf, DdbJson *j);

/*
 * Typed AttributeValues ({"S": "x"}) to and from the item model.  'where'
 * names the request member for messages.  Wrong JSON types are
 * SerializationExceptions (a malformed request), invalid values
 * ValidationExceptions, as DynamoDB raises them.
 */
extern DdbValue *ddb_typed_value(DdbJson *j);
extern DdbValue *ddb_typed_item(DdbJson *j);
extern Jsonb *ddb_typed_item_jsonb(DdbJson *j);
extern Jsonb *ddb_typed_values_jsonb(DdbJson *j);

/* Shape checks of request members (SerializationException). */
extern void ddb_json_check_string(DdbJson *j);
extern const char *ddb_json_member_cstring(DdbJson *j, const char *name);
extern void ddb_json_check_key_names(DdbJson *j, const char *what);
extern bool ddb_json_check_bool(DdbJson *j);
extern double ddb_json_check_number(DdbJson *j, const char *target);
extern void ddb_json_check_list(DdbJson *j);
extern void ddb_json_check_struct(DdbJson *j, const char *structname);
extern void ddb_json_check_value_struct(DdbJson *j, const char *structname);
extern void ddb_json_check_string_map(DdbJson *j);
extern void ddb_json_check_attribute_map(DdbJson *j);
extern void ddb_json_write_value(StringInfo buf, DdbValue *v);
extern void ddb_json_write_item(StringInfo buf, DdbValue *item);
extern void ddb_json_write_jsonb_item(StringInfo buf, Jsonb *item);

#endif							/* DDB_JSON_H */
