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
#include "engine/ddb_page.h"
#include "api/ddb_ops.h"

/*
 * ddb_item_column_check (ddb.h), which the engine calls for every plain
 * SQL write: the item column of the row must be an item the item API
 * would accept (ddb_validate_item_column), or the item functions could not
 * read it back.  Its key attributes are the key columns, already checked.
 * A NULL item column is an item of its keys alone.  The item column in
 * 'values' is replaced by the one to store when its numbers needed
 * normalizing (1.50 is stored as 1.5), as a numeric key column's are (the
 * key encoding): the row's RETURNING shows what was written, every read
 * what DynamoDB would give back.
 */
void
ddb_check_item_column_values(Relation rel, const DdbKeyInfo *ki, Datum *values)
{
	const char *names[DDB_MAX_KEY_COLUMNS];
	DdbValue   *keys[DDB_MAX_KEY_COLUMNS];
	Jsonb	   *item;

	for (int k = 0; k < ki->nkeys; k++)
	{
		Datum		d = values[ki->keyattno[k] - 1];
		DdbValue   *v;

		if (ki->keytype[k] == DDB_KEY_N)
		{
			v = ddb_value_new(DDB_TYPE_N);
			v->u.num = DatumGetNumeric(d);
		}
		else
		{
			struct varlena *b = PG_DETOAST_DATUM_PACKED(d);

			v = ddb_value_new(ki->keytype[k] == DDB_KEY_S ? DDB_TYPE_S : DDB_TYPE_B);
			v->u.str.data = VARDATA_ANY(b);
			v->u.str.len = VARSIZE_ANY_EXHDR(b);
		}
		keys[k] = v;
	}

	item = DatumGetJsonbP(values[ki->itemattno - 1]);

	/*
	 * The names after the values: detoasting a value may open a TOAST
	 * table and so accept an invalidation, which frees the catalog strings
	 * ddb_key_name returns (ddb_table_info).
	 */
	for (int k = 0; k < ki->nkeys; k++)
		names[k] = ddb_key_name(rel, k);
	/* the item column stored: numbers as DynamoDB gives them back */
	values[ki->itemattno - 1] = JsonbPGetDatum(ddb_validate_item_column(item, ki->nkeys,
																		  names, keys));
}

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

/* ------------------------------------------------------------------------
 * Building API items
 *
 * An API item is the item column's jsonb object with the key attributes
 * added.  Rather than pushing every pair through a JsonbParseState and
 * serializing the result again (which also expands every nested value),
 * the item is written in jsonb's binary format directly: the item column's
 * pairs are copied as they are stored (a value's bytes move as they are to
 * any int-aligned place: jsonb pads numerics and containers to int
 * boundaries, and a container's inner padding follows from its own
 * int-aligned start), merged with the key attributes in jsonb's key order
 * (shorter keys first, then bytewise).  The result is byte for
 * byte what pushJsonbValue and JsonbValueToJsonb would make of the same
 * pairs (convertJsonbObject's layout: keys, then values, every
 * JB_OFFSET_STRIDE'th entry an offset, numerics and containers int-aligned),
 * including its rule for a key named twice: the item column's pair wins,
 * as the last pushed pair does there.
 *
 * An item is read straight from the stored item column's entries
 * (write_item_at: no unpacking into pairs first, each run of stored keys
 * copied in one piece), and a string key's value straight from the encoded
 * key where its bytes are the value (ddb_decode_key_raw: no text is made).
 * A reader may have the item written where it wants it
 * (ddb_stored_to_item_in): Query and Scan in FROM write each item where its
 * tuple's data go.
 * ------------------------------------------------------------------------
 */

/* One pair of the item being built: a key and its value's stored bytes. */
typedef struct ItemPair
{
	const char *key;
	int			keylen;
	uint32		type;			/* JENTRY_IS* of the value */
	const char *data;			/* the value's bytes, without alignment padding */
	int			len;
} ItemPair;

/* jsonb's key order (lengthCompareJsonbStringValue) */
static int
pair_key_cmp(const ItemPair *a, const ItemPair *b)
{
	if (a->keylen != b->keylen)
		return a->keylen > b->keylen ? 1 : -1;
	return memcmp(a->key, b->key, a->keylen);
}

/* Room write_container_at may need for these pairs: every byte, the largest padding. */
static Size
container_size_bound(const ItemPair *pairs, int npairs, bool object)
{
	Size		size = VARHDRSZ + sizeof(uint32) +
		(object ? 2 * npairs : npairs) * sizeof(JEntry);

	for (int i = 0; i < npairs; i++)
		size += (object ? pairs[i].keylen : 0) + pairs[i].len + (sizeof(int) - 1);
	return size;
}

/*
 * Write a jsonb object (pairs sorted in jsonb's key order, keys unique) or
 * array (keys unused) of the given values at data (int-aligned, with room
 * for container_size_bound), in convertJsonbObject's and
 * convertJsonbArray's layout: keys, then values, every JB_OFFSET_STRIDE'th
 * entry an end offset, numerics and containers int-aligned.  Returns its
 * size (its varlena header is set).
 */
static Size
write_container_at(char *data, const ItemPair *pairs, int npairs, bool object)
{
	int			nentries = object ? 2 * npairs : npairs;
	int			first_value = object ? npairs : 0;
	JEntry	   *entries;
	Size		len;
	uint32		header;
	uint32		totallen = 0;

	header = npairs | (object ? JB_FOBJECT : JB_FARRAY);
	memcpy(data + VARHDRSZ, &header, sizeof(uint32));
	entries = (JEntry *) (data + VARHDRSZ + sizeof(uint32));
	len = VARHDRSZ + sizeof(uint32) + nentries * sizeof(JEntry);
	for (int i = 0; object && i < npairs; i++)
	{
		memcpy(data + len, pairs[i].key, pairs[i].keylen);
		len += pairs[i].keylen;
		totallen += pairs[i].keylen;
		entries[i] = (i % JB_OFFSET_STRIDE) == 0 ?
			JENTRY_ISSTRING | totallen | JENTRY_HAS_OFF :
			JENTRY_ISSTRING | pairs[i].keylen;
	}
	for (int i = 0; i < npairs; i++)
	{
		Size		before = len;

		/* numerics and containers start int-aligned: zero padding */
		if (pairs[i].type == JENTRY_ISNUMERIC || pairs[i].type == JENTRY_ISCONTAINER)
			while (len != INTALIGN(len))
				data[len++] = '\0';
		memcpy(data + len, pairs[i].data, pairs[i].len);
		len += pairs[i].len;
		totallen += len - before;
		if (totallen > JENTRY_OFFLENMASK)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("total size of jsonb %s elements exceeds the maximum of %u bytes",
							object ? "object" : "array", JENTRY_OFFLENMASK)));
		entries[first_value + i] = ((i + first_value) % JB_OFFSET_STRIDE) == 0 ?
			pairs[i].type | totallen | JENTRY_HAS_OFF :
			pairs[i].type | (uint32) (len - before);
	}
	SET_VARSIZE(data, len);
	return len;
}

/* write_container_at into a palloc'd jsonb of its own: one allocation */
static Jsonb *
write_container(ItemPair *pairs, int npairs, bool object)
{
	char	   *data = palloc(container_size_bound(pairs, npairs, object));

	write_container_at(data, pairs, npairs, object);
	return (Jsonb *) data;
}

/* A whole jsonb (NULL: JSON null) as one pair's value. */
static void
jsonb_pair_value(Jsonb *j, ItemPair *p)
{
	if (j == NULL)
	{
		p->type = JENTRY_ISNULL;
		p->data = NULL;
		p->len = 0;
	}
	else if (JB_ROOT_IS_SCALAR(j))
	{
		/* a raw scalar is a one-element array: its entry and its bytes */
		JEntry		e = j->root.children[0];
		uint32		end = JBE_OFFLENFLD(e);
		uint32		start = JBE_ISNUMERIC(e) ? INTALIGN(0) : 0;

		p->type = e & JENTRY_TYPEMASK;
		p->data = (char *) &j->root.children[1] + start;
		p->len = end - start;
	}
	else
	{
		p->type = JENTRY_ISCONTAINER;
		p->data = (char *) &j->root;
		p->len = VARSIZE(j) - VARHDRSZ;
	}
}

static int
pair_qsort_cmp(const void *a, const void *b)
{
	return pair_key_cmp((const ItemPair *) a, (const ItemPair *) b);
}

/*
 * The jsonb array of whole jsonb values (NULL: JSON null), as pushing each
 * one as an element would make it, without unpacking them.
 */
Jsonb *
ddb_jsonb_array(Jsonb **elems, int n)
{
	ItemPair   *pairs = palloc(sizeof(ItemPair) * Max(n, 1));
	Jsonb	   *result;

	for (int i = 0; i < n; i++)
		jsonb_pair_value(elems[i], &pairs[i]);
	result = write_container(pairs, n, false);
	pfree(pairs);
#ifdef DDB_CHECKS
	{
		JsonbParseState *ps = NULL;
		Jsonb	   *pushed;

		pushJsonbValue(&ps, WJB_BEGIN_ARRAY, NULL);
		for (int i = 0; i < n; i++)
			ddb_push_jsonb(&ps, WJB_ELEM, elems[i]);
		pushed = JsonbValueToJsonb(pushJsonbValue(&ps, WJB_END_ARRAY, NULL));
		DdbCheck(VARSIZE(pushed) == VARSIZE(result) &&
				 memcmp(pushed, result, VARSIZE(result)) == 0);
	}
#endif
	return result;
}

/*
 * The jsonb object of distinct keys and whole jsonb values (NULL: JSON
 * null), as pushing the pairs would make it, without unpacking the values.
 */
Jsonb *
ddb_jsonb_object(const char **keys, Jsonb **vals, int n)
{
	ItemPair   *pairs = palloc(sizeof(ItemPair) * Max(n, 1));
	Jsonb	   *result;

	for (int i = 0; i < n; i++)
	{
		pairs[i].key = keys[i];
		pairs[i].keylen = strlen(keys[i]);
		jsonb_pair_value(vals[i], &pairs[i]);
	}
	qsort(pairs, n, sizeof(ItemPair), pair_qsort_cmp);
	for (int i = 1; i < n; i++)
		if (pair_key_cmp(&pairs[i - 1], &pairs[i]) == 0)
			elog(ERROR, "duplicate key \"%s\" in a jsonb object", pairs[i].key);
	result = write_container(pairs, n, true);
	pfree(pairs);
#ifdef DDB_CHECKS
	{
		JsonbParseState *ps = NULL;
		Jsonb	   *pushed;

		pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
		for (int i = 0; i < n; i++)
		{
			ddb_push_key(&ps, keys[i]);
			ddb_push_jsonb(&ps, WJB_VALUE, vals[i]);
		}
		pushed = JsonbValueToJsonb(pushJsonbValue(&ps, WJB_END_OBJECT, NULL));
		DdbCheck(VARSIZE(pushed) == VARSIZE(result) &&
				 memcmp(pushed, result, VARSIZE(result)) == 0);
	}
#endif
	return result;
}

/*
 * The pairs of a jsonb object container, in its order (jsonb's key order),
 * each value's bytes as stored, without their alignment padding.
 */
static void
object_pairs(JsonbContainer *jc, ItemPair *pairs)
{
	int			n = JsonContainerSize(jc);
	char	   *base = (char *) &jc->children[n * 2];
	uint32		off = 0;

	/*
	 * Entries hold lengths, with an end offset every JB_OFFSET_STRIDE'th;
	 * the keys' come first, then the values'.
	 */
	for (int i = 0; i < n * 2; i++)
	{
		JEntry		e = jc->children[i];
		uint32		start = off;

		off = JBE_HAS_OFF(e) ? JBE_OFFLENFLD(e) : off + JBE_OFFLENFLD(e);
		if (i < n)
		{
			pairs[i].key = base + start;
			pairs[i].keylen = off - start;
			continue;
		}
		if (JBE_ISNUMERIC(e) || JBE_ISCONTAINER(e))
			start = INTALIGN(start);
		pairs[i - n].type = e & JENTRY_TYPEMASK;
		pairs[i - n].data = base + start;
		pairs[i - n].len = off - start;
	}
}

/* A key column value as one pair's value (document form, key_to_jbv's). */
static void
key_pair_value(DdbKeyType type, Datum d, ItemPair *p)
{
	JsonbValue	v;

	key_to_jbv(type, d, &v);
	switch (v.type)
	{
		case jbvString:
			p->type = JENTRY_ISSTRING;
			p->data = v.val.string.val;
			p->len = v.val.string.len;
			break;
		case jbvNumeric:
			/* DatumGetNumeric gave it a 4-byte header, as jsonb stores numerics */
			p->type = JENTRY_ISNUMERIC;
			p->data = (const char *) v.val.numeric;
			p->len = VARSIZE(v.val.numeric);
			break;
		default:
			/* B's {"$B": "<base64>"}: a container of its own */
			jsonb_pair_value(JsonbValueToJsonb(&v), p);
			break;
	}
}

#ifdef DDB_CHECKS
/*
 * The same item through pushJsonbValue and JsonbValueToJsonb, as it was
 * built before build_item: checked builds compare the two byte for byte.
 */
static Jsonb *
build_item_pushed(Relation rel, Datum *keyvals, bool *keynull, Jsonb *itemcol)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(rel);
	JsonbParseState *ps = NULL;

	pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
	for (int k = 0; k < ki->nkeys; k++)
	{
		const char *name = ddb_key_name(rel, k);
		JsonbValue	jk,
					jv;

		if (keynull[k])
			continue;
		jk.type = jbvString;
		jk.val.string.val = (char *) name;
		jk.val.string.len = strlen(name);
		key_to_jbv(ki->keytype[k], keyvals[k], &jv);
		pushJsonbValue(&ps, WJB_KEY, &jk);
		pushJsonbValue(&ps, WJB_VALUE, &jv);
	}
	if (itemcol != NULL && JB_ROOT_IS_OBJECT(itemcol))
	{
		JsonbIterator *it = JsonbIteratorInit(&itemcol->root);
		JsonbValue	v;
		JsonbIteratorToken tok;

		while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
			if (tok == WJB_KEY || tok == WJB_VALUE)
				pushJsonbValue(&ps, tok, &v);
	}
	return JsonbValueToJsonb(pushJsonbValue(&ps, WJB_END_OBJECT, NULL));
}
#endif

/*
 * Where an item is built: a jsonb of its own (out NULL), or at out->data +
 * offset (int-aligned), out->len then its end.  raw: key columns given as
 * their text's bytes instead of a Datum (ddb_decode_key_raw), or NULL.
 */
typedef struct ItemKeys
{
	const char *const *names;	/* key attribute names, or NULL to look up */
	Datum	   *values;
	bool	   *isnull;
	const char **raw;			/* raw[k] != NULL: the S value's bytes */
	int		   *rawlen;
} ItemKeys;

static Jsonb *build_item_direct(Relation rel, const ItemKeys *keys, Jsonb *itemcol,
								StringInfo out, int offset);

/* Room write_item_at may need: every byte, the largest padding. */
static Size
item_size_bound(const ItemPair *kp, int nk, Jsonb *itemcol)
{
	Size		size = container_size_bound(kp, nk, true);

	/* the stored entries, keys and values (all of the item column), padded */
	if (itemcol != NULL)
		size += VARSIZE(itemcol) + JsonContainerSize(&itemcol->root) * (sizeof(int) - 1);
	return size;
}

/*
 * Write the API item of the key pairs kp[0..nk) (sorted in jsonb's key
 * order, names distinct) and the stored item column's object container jc
 * (NULL: none) at data (int-aligned, with room for item_size_bound): the
 * layout write_container_at gives the merged pairs, a stored pair winning
 * over a key pair of the same name.  The stored pairs are read straight
 * from jc's entries rather than unpacked first, and each run of stored keys
 * that the merge leaves together is copied in one piece.  Returns the
 * item's size (its varlena header is set).
 */
static Size
write_item_at(char *data, const ItemPair *kp, int nk, JsonbContainer *jc)
{
	int			ns = jc ? JsonContainerSize(jc) : 0;
	const JEntry *se = jc ? jc->children : NULL;
	const char *sbase = jc ? (const char *) &jc->children[2 * ns] : NULL;
	int			src_local[64];
	uint32		kend_local[64];
	int		   *src;			/* merged order: stored pair i, or -(k + 1) */
	uint32	   *kend;			/* end of stored key i in sbase */
	int			n = 0;
	int			k = 0;
	uint32		off = 0;
	uint32		header;
	uint32		totallen = 0;
	JEntry	   *entries;
	Size		len;

	src = ns + nk <= lengthof(src_local) ? src_local : palloc(sizeof(int) * (ns + nk));
	kend = ns <= lengthof(kend_local) ? kend_local : palloc(sizeof(uint32) * Max(ns, 1));

	/* the merge, by key: entries hold lengths, an end offset every stride'th */
	for (int i = 0; i < ns; i++)
	{
		uint32		start = off;

		off = JBE_HAS_OFF(se[i]) ? JBE_OFFLENFLD(se[i]) : off + JBE_OFFLENFLD(se[i]);
		kend[i] = off;
		for (; k < nk; k++)
		{
			int			c = kp[k].keylen != (int) (off - start) ?
				(kp[k].keylen > (int) (off - start) ? 1 : -1) :
				memcmp(kp[k].key, sbase + start, off - start);

			if (c > 0)
				break;
			if (c < 0)
				src[n++] = -(k + 1);
			/* equal: the stored pair wins */
		}
		src[n++] = i;
	}
	for (; k < nk; k++)
		src[n++] = -(k + 1);

	header = n | JB_FOBJECT;
	memcpy(data + VARHDRSZ, &header, sizeof(uint32));
	entries = (JEntry *) (data + VARHDRSZ + sizeof(uint32));
	len = VARHDRSZ + sizeof(uint32) + 2 * n * sizeof(JEntry);

	/* the keys: a key pair's name, or a run of consecutive stored keys */
	for (int j = 0; j < n;)
	{
		if (src[j] < 0)
		{
			const ItemPair *p = &kp[-src[j] - 1];

			memcpy(data + len, p->key, p->keylen);
			len += p->keylen;
			totallen += p->keylen;
			entries[j] = (j % JB_OFFSET_STRIDE) == 0 ?
				JENTRY_ISSTRING | totallen | JENTRY_HAS_OFF :
				JENTRY_ISSTRING | p->keylen;
			j++;
			continue;
		}
		else
		{
			int			first = src[j];
			uint32		from = first == 0 ? 0 : kend[first - 1];
			int			last = first;

			for (; j < n && src[j] == last; j++, last++)
			{
				uint32		klen = kend[last] - (last == 0 ? 0 : kend[last - 1]);

				totallen += klen;
				entries[j] = (j % JB_OFFSET_STRIDE) == 0 ?
					JENTRY_ISSTRING | totallen | JENTRY_HAS_OFF :
					JENTRY_ISSTRING | klen;
			}
			memcpy(data + len, sbase + from, kend[last - 1] - from);
			len += kend[last - 1] - from;
		}
	}

	/* the values, in the same order; numerics and containers int-aligned */
	off = ns > 0 ? kend[ns - 1] : 0;
	for (int j = 0; j < n; j++)
	{
		Size		before = len;
		uint32		type;
		const char *bytes;
		uint32		blen;

		if (src[j] < 0)
		{
			const ItemPair *p = &kp[-src[j] - 1];

			type = p->type;
			bytes = p->data;
			blen = p->len;
		}
		else
		{
			JEntry		e = se[ns + src[j]];
			uint32		start = off;

			off = JBE_HAS_OFF(e) ? JBE_OFFLENFLD(e) : off + JBE_OFFLENFLD(e);
			type = e & JENTRY_TYPEMASK;
			if (type == JENTRY_ISNUMERIC || type == JENTRY_ISCONTAINER)
				start = INTALIGN(start);
			bytes = sbase + start;
			blen = off - start;
		}
		if (type == JENTRY_ISNUMERIC || type == JENTRY_ISCONTAINER)
			while (len != INTALIGN(len))
				data[len++] = '\0';
		memcpy(data + len, bytes, blen);
		len += blen;
		totallen += len - before;
		entries[n + j] = ((n + j) % JB_OFFSET_STRIDE) == 0 ?
			type | totallen | JENTRY_HAS_OFF :
			type | (uint32) (len - before);
	}
	if (totallen > JENTRY_OFFLENMASK)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("total size of jsonb object elements exceeds the maximum of %u bytes",
						JENTRY_OFFLENMASK)));
	SET_VARSIZE(data, len);
	if (src != src_local)
		pfree(src);
	if (kend != kend_local)
		pfree(kend);
	return len;
}


/*
 * The API item of key column values (in key order, values[k] unset when
 * isnull[k] or raw[k]) and an item column (NULL: none), built by
 * build_item_direct.
 */
static Jsonb *
build_item(Relation rel, const ItemKeys *keys, Jsonb *itemcol, StringInfo out, int offset)
{
	Jsonb	   *item = build_item_direct(rel, keys, itemcol, out, offset);

#ifdef DDB_CHECKS
	{
		const DdbKeyInfo *ki = ddb_get_keyinfo(rel);
		Datum		values[DDB_MAX_KEY_COLUMNS];
		Jsonb	   *pushed;

		for (int k = 0; k < ki->nkeys; k++)
			values[k] = keys->raw && keys->raw[k] ?
				PointerGetDatum(cstring_to_text_with_len(keys->raw[k], keys->rawlen[k])) :
				keys->values[k];
		pushed = build_item_pushed(rel, values, keys->isnull, itemcol);
		DdbCheck(VARSIZE(pushed) == VARSIZE(item) &&
				 memcmp(pushed, item, VARSIZE(item)) == 0);
		pfree(pushed);
	}
#endif
	return item;
}

static Jsonb *
build_item_direct(Relation rel, const ItemKeys *keys, Jsonb *itemcol,
				  StringInfo out, int offset)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(rel);
	ItemPair	keypairs[DDB_MAX_KEY_COLUMNS];
	int			nkeys = 0;
	JsonbContainer *jc = NULL;
	Jsonb	   *item;
	Size		bound;
	Size		len;

	/* the key attributes, sorted; of a name given twice the later column wins */
	for (int k = 0; k < ki->nkeys; k++)
	{
		ItemPair	p;
		int			i;

		if (keys->isnull[k])
			continue;
		p.key = keys->names ? keys->names[k] : ddb_key_name(rel, k);
		p.keylen = strlen(p.key);
		if (keys->raw && keys->raw[k])
		{
			/* a string as its bytes: key_to_jbv's jbvString without the text */
			p.type = JENTRY_ISSTRING;
			p.data = keys->raw[k];
			p.len = keys->rawlen[k];
		}
		else
			key_pair_value(ki->keytype[k], keys->values[k], &p);
		for (i = nkeys; i > 0 && pair_key_cmp(&keypairs[i - 1], &p) > 0; i--)
			keypairs[i] = keypairs[i - 1];
		if (i > 0 && pair_key_cmp(&keypairs[i - 1], &p) == 0)
		{
			keypairs[i - 1] = p;
			memmove(&keypairs[i], &keypairs[i + 1], sizeof(ItemPair) * (nkeys - i));
			continue;
		}
		keypairs[i] = p;
		nkeys++;
	}

	if (itemcol != NULL && JB_ROOT_IS_OBJECT(itemcol))
		jc = &itemcol->root;
	bound = item_size_bound(keypairs, nkeys, jc ? itemcol : NULL);
	if (out == NULL)
		item = palloc(bound);
	else
	{
		Assert(offset == INTALIGN(offset) && offset <= out->maxlen);
		out->len = offset;
		enlargeStringInfo(out, bound);
		item = (Jsonb *) (out->data + offset);
	}
	len = write_item_at((char *) item, keypairs, nkeys, jc);
	if (out != NULL)
		out->len = offset + len;
	return item;
}

/*
 * The API item of a full row tuple: the item column plus the key attributes.
 */
Jsonb *
ddb_tuple_to_item(Relation rel, HeapTuple tuple)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(rel);
	TupleDesc	desc = RelationGetDescr(rel);
	Datum		keyvals[DDB_MAX_KEY_COLUMNS];
	bool		keynull[DDB_MAX_KEY_COLUMNS];
	ItemKeys	keys = {NULL, keyvals, keynull, NULL, NULL};
	bool		isnull;
	Datum		itemd;

	for (int k = 0; k < ki->nkeys; k++)
		keyvals[k] = heap_getattr(tuple, ki->keyattno[k], desc, &keynull[k]);
	itemd = heap_getattr(tuple, ki->itemattno, desc, &isnull);
	return build_item(rel, &keys, isnull ? NULL : DatumGetJsonbP(itemd), NULL, 0);
}

/*
 * The API item of a stored version (ddb_range_next_stored,
 * ddb_lookup_stored): the key attributes taken from its encoded key (string
 * keys copied as they are stored, the others decoded), the item column as
 * stored.  No full tuple is formed.  keynames: the key attributes' names (a
 * reader of many items looks them up once), or NULL.
 */
Jsonb *
ddb_stored_to_item(Relation rel, DdbStoredItem *si, const char *const *keynames)
{
	return ddb_stored_to_item_in(rel, si, keynames, NULL, 0);
}

/*
 * The same, written at out->data + offset (offset int-aligned) instead of
 * a jsonb of its own: out->len becomes the item's end.  A reader that
 * hands its items on as tuples writes each one where its tuple's data go.
 */
Jsonb *
ddb_stored_to_item_in(Relation rel, DdbStoredItem *si, const char *const *keynames,
					  StringInfo out, int offset)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(rel);
	Datum		keyvals[DDB_MAX_KEY_COLUMNS];
	bool		keynull[DDB_MAX_KEY_COLUMNS];
	const char *raw[DDB_MAX_KEY_COLUMNS];
	int			rawlen[DDB_MAX_KEY_COLUMNS];
	ItemKeys	keys = {keynames, keyvals, keynull, raw, rawlen};
	bool		isnull;
	Datum		itemd;

	ddb_decode_key_raw(ki, si->key, si->keylen, keyvals, keynull, raw, rawlen);
	itemd = ddb_stored_item_column(ki, RelationGetDescr(rel), &si->tuple, &isnull);
	return build_item(rel, &keys, isnull ? NULL : DatumGetJsonbP(itemd), out, offset);
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

/* Is a document-form value of key type type? */
bool
ddb_jbv_is_key_type(DdbKeyType type, JsonbValue *v)
{
	switch (type)
	{
		case DDB_KEY_S:
			return v->type == jbvString;
		case DDB_KEY_N:
			return v->type == jbvNumeric;
		default:
			return v->type == jbvBinary && ddb_value_from_jbv(v)->type == DDB_TYPE_B;
	}
}

/*
 * An item's key attribute of the wrong type: PutItem's message names the
 * key and both types.
 */
static void
check_item_key_type(DdbKeyType type, JsonbValue *v, const char *name)
{
	nul_key_check(v, name);
	if (!ddb_jbv_is_key_type(type, v))
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
 * DynamoDB's error for an S or B key attribute over its size limit (2048
 * bytes for a partition key, 1024 for a sort key): of the table's key, or
 * with 'index' of that index's (ddb_gsi.c).
 */
void
ddb_raise_key_size(bool partition, const char *name, const char *index, int len)
{
	int			limit = partition ? DDB_MAX_PARTITION_KEY_BYTES : DDB_MAX_SORT_KEY_BYTES;

	ereport(ERROR,
			(errcode(DDB_ERRCODE_VALIDATION),
			 errmsg("ValidationException: %s",
					psprintf(partition ? DDB_MSG_HASH_KEY_SIZE : DDB_MSG_RANGE_KEY_SIZE, limit)),
			 index ? errdetail("Key attribute \"%s\" of index \"%s\" is %d bytes.", name, index, len) :
			 errdetail("Key attribute \"%s\" is %d bytes.", name, len)));
}

/*
 * ddb's own limit on a table key's encoding (DDB_MAX_KEY_LEN; DynamoDB has
 * none like it), for an item about to be written through the API: a
 * ValidationException, so that the endpoint answers 400 with this message
 * rather than 500 with the engine's.  Only keys of many zero bytes (each
 * encoded in two) or of several long sort key columns reach it.
 */
void
ddb_check_key_encoded_len(Relation rel, int len)
{
	if (len > DDB_MAX_KEY_LEN)
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: One or more parameter values were invalid: the key of table %s encodes to %d bytes, over ddb's limit of %d",
						ddb_table_name(rel), len, (int) DDB_MAX_KEY_LEN),
				 errhint("A zero byte of a binary key takes two bytes of the encoding.")));
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
		ddb_raise_key_size(partition, name, NULL, len);
}

/*
 * Key attribute k's value v (NULL: missing) of a key document or, with
 * item, of an item, checked and stored in values/isnull.
 */
static void
key_value(Relation rel, const DdbKeyInfo *ki, int k, const char *name, JsonbValue *v,
		  bool item, Datum *values, bool *isnull)
{
	int			a = ki->keyattno[k] - 1;

	if (v == NULL)
		ddb_raise(DDB_ERRCODE_VALIDATION, "ValidationException", DDB_MSG_KEY_MISSING, name);
	if (item)
		check_item_key_type(ki->keytype[k], v, name);
	values[a] = jbv_to_key(rel, ki->keytype[k], v, name);
	isnull[a] = false;
	api_check_key(ki->keytype[k], values[a], k == 0, name);
	ddb_check_key_value(ki->keytype[k], values[a], k == 0, name);
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
	const char *names[DDB_MAX_KEY_COLUMNS];

	ddb_table_key_names(rel, names);
	ddb_key_from_jsonb_named(rel, names, doc, exact, values, isnull, enckey);
}

/*
 * ddb_key_from_jsonb for a caller that has looked the key columns' names up
 * already (ddb_table_key_names) and needs them again.
 */
void
ddb_key_from_jsonb_named(Relation rel, const char **names, Jsonb *doc, bool exact,
						 Datum *values, bool *isnull, StringInfo enckey)
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
		const char *name = names[k];
		JsonbValue *v = getKeyJsonValueFromContainer(&doc->root, name, strlen(name), NULL);

		if (v == NULL && exact)
			key_schema_error(rel, "Key attribute \"%s\" of table \"%s\" is missing.", name);
		key_value(rel, ki, k, name, v, !exact, values, isnull);
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
 * 'base' (a jsonb object) with the pairs named in names[] replaced by those
 * of 'repl' (an object whose keys are among names[]; a name missing from it
 * is removed): what UpdateItem makes of the item it read, the other pairs
 * copied as they are stored (see "Building API items").
 */
Jsonb *
ddb_jsonb_replace_pairs(Jsonb *base, const char *const *names, int nnames, Jsonb *repl)
{
	int			nbase = JsonContainerSize(&base->root);
	int			nrepl = JsonContainerSize(&repl->root);
	ItemPair   *bpairs = palloc(sizeof(ItemPair) * Max(nbase, 1));
	ItemPair   *rpairs = palloc(sizeof(ItemPair) * Max(nrepl, 1));
	ItemPair   *pairs = palloc(sizeof(ItemPair) * Max(nbase + nrepl, 1));
	int			npairs = 0;
	int			r = 0;
	Jsonb	   *result;

	Assert(JB_ROOT_IS_OBJECT(base) && JB_ROOT_IS_OBJECT(repl));
	object_pairs(&base->root, bpairs);
	object_pairs(&repl->root, rpairs);
	for (int i = 0; i < nbase; i++)
	{
		bool		named = false;

		for (int k = 0; k < nnames && !named; k++)
			named = bpairs[i].keylen == strlen(names[k]) &&
				memcmp(bpairs[i].key, names[k], bpairs[i].keylen) == 0;
		if (named)
			continue;
		while (r < nrepl && pair_key_cmp(&rpairs[r], &bpairs[i]) < 0)
			pairs[npairs++] = rpairs[r++];
		pairs[npairs++] = bpairs[i];
	}
	while (r < nrepl)
		pairs[npairs++] = rpairs[r++];
	result = write_container(pairs, npairs, true);
	pfree(bpairs);
	pfree(rpairs);
	pfree(pairs);
	return result;
}

/*
 * The item column of an API item (an object): the item without its key
 * attributes, its other pairs copied as they are (see "Building API
 * items").  Key attribute k's pair goes to keypairs[k], found[k] saying
 * whether the item has one.  names: ddb_table_key_names.
 */
static Jsonb *
item_column_of(Relation rel, Jsonb *item, const char **names, ItemPair *keypairs,
			   bool *found)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(rel);
	int			n = JsonContainerSize(&item->root);
	ItemPair	pairs_local[40];
	ItemPair   *pairs = n <= lengthof(pairs_local) ? pairs_local :
		palloc(sizeof(ItemPair) * n);
	int			namelens[DDB_MAX_KEY_COLUMNS];
	int			kept = 0;
	Jsonb	   *result;

	/* (the names' lengths once, not once per attribute) */
	for (int k = 0; k < ki->nkeys; k++)
	{
		namelens[k] = strlen(names[k]);
		found[k] = false;
	}
	object_pairs(&item->root, pairs);
	for (int i = 0; i < n; i++)
	{
		bool		key = false;

		for (int k = 0; k < ki->nkeys && !key; k++)
			if (pairs[i].keylen == namelens[k] &&
				memcmp(pairs[i].key, names[k], namelens[k]) == 0)
			{
				keypairs[k] = pairs[i];
				found[k] = key = true;
			}
		if (!key)
			pairs[kept++] = pairs[i];
	}
	result = write_container(pairs, kept, true);
	if (pairs != pairs_local)
		pfree(pairs);
	return result;
}

/* A pair's value as the JsonbValue an iterator would give (scalars, binary). */
static void
pair_jbv(const ItemPair *p, JsonbValue *v)
{
	switch (p->type)
	{
		case JENTRY_ISSTRING:
			v->type = jbvString;
			v->val.string.val = (char *) p->data;
			v->val.string.len = p->len;
			break;
		case JENTRY_ISNUMERIC:
			v->type = jbvNumeric;
			v->val.numeric = (Numeric) p->data;
			break;
		case JENTRY_ISBOOL_FALSE:
		case JENTRY_ISBOOL_TRUE:
			v->type = jbvBool;
			v->val.boolean = p->type == JENTRY_ISBOOL_TRUE;
			break;
		case JENTRY_ISNULL:
			v->type = jbvNull;
			break;
		default:
			v->type = jbvBinary;
			v->val.binary.data = (JsonbContainer *) p->data;
			v->val.binary.len = p->len;
			break;
	}
}

/*
 * PutItem's split of an API item (checked by ddb_check_item): its encoded
 * key, as ddb_key_from_jsonb_named(..., exact = false, ...) makes it (the
 * same checks, errors and order), and its item column, as
 * ddb_item_without_keys makes it, from one pass over the item's pairs: the
 * key attributes are picked out of them instead of searched for by name,
 * and the key names are looked up once for both.
 */
Jsonb *
ddb_item_split_key(Relation rel, Jsonb *item, Datum *values, bool *isnull,
				   StringInfo enckey)
{
	const DdbKeyInfo *ki = ddb_get_keyinfo(rel);
	const char *names[DDB_MAX_KEY_COLUMNS];
	ItemPair	keypairs[DDB_MAX_KEY_COLUMNS];
	bool		found[DDB_MAX_KEY_COLUMNS];
	Jsonb	   *result;

	if (!JB_ROOT_IS_OBJECT(item) || JB_ROOT_IS_SCALAR(item))
		ereport(ERROR,
				(errcode(DDB_ERRCODE_VALIDATION),
				 errmsg("ValidationException: the item must be a JSON object of attributes")));
	ddb_table_key_names(rel, names);
	for (int a = 0; a < ki->natts; a++)
	{
		values[a] = (Datum) 0;
		isnull[a] = true;
	}
	/* (building the item column raises nothing: the key's errors stay first) */
	result = item_column_of(rel, item, names, keypairs, found);

	/* the key attributes, checked in key order as ddb_key_from_jsonb_named does */
	for (int k = 0; k < ki->nkeys; k++)
	{
		JsonbValue	v;

		if (found[k])
			pair_jbv(&keypairs[k], &v);
		key_value(rel, ki, k, names[k], found[k] ? &v : NULL, true, values, isnull);
	}
	ddb_encode_key(ki, values, isnull, enckey);
#ifdef DDB_CHECKS
	{
		/* the same key and item column as the two walks it replaces */
		Datum	   *v2 = palloc(sizeof(Datum) * ki->natts);
		bool	   *n2 = palloc(sizeof(bool) * ki->natts);
		StringInfoData k2;
		Jsonb	   *col2 = ddb_item_without_keys(rel, item);

		initStringInfo(&k2);
		ddb_key_from_jsonb_named(rel, names, item, false, v2, n2, &k2);
		DdbCheck(k2.len == enckey->len && memcmp(k2.data, enckey->data, k2.len) == 0);
		DdbCheck(VARSIZE(col2) == VARSIZE(result) &&
				 memcmp(col2, result, VARSIZE(result)) == 0);
	}
#endif
	return result;
}

/*
 * The item column of an API item: the item without its key attributes.
 * Its other pairs are copied as they are (see "Building API items").
 */
Jsonb *
ddb_item_without_keys(Relation rel, Jsonb *item)
{
	const char *names[DDB_MAX_KEY_COLUMNS];
	ItemPair	keypairs[DDB_MAX_KEY_COLUMNS];
	bool		found[DDB_MAX_KEY_COLUMNS];
	Jsonb	   *result;

	Assert(JB_ROOT_IS_OBJECT(item));
	ddb_table_key_names(rel, names);
	result = item_column_of(rel, item, names, keypairs, found);
#ifdef DDB_CHECKS
	{
		/* the same through pushJsonbValue, as it was built before */
		const DdbKeyInfo *ki = ddb_get_keyinfo(rel);
		JsonbParseState *ps = NULL;
		JsonbIterator *it = JsonbIteratorInit(&item->root);
		JsonbValue	v;
		JsonbIteratorToken tok;
		bool		skip = false;
		Jsonb	   *pushed;

		pushJsonbValue(&ps, WJB_BEGIN_OBJECT, NULL);
		while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
		{
			if (tok == WJB_KEY)
			{
				skip = false;
				for (int k = 0; k < ki->nkeys; k++)
					if (v.val.string.len == strlen(names[k]) &&
						memcmp(v.val.string.val, names[k], v.val.string.len) == 0)
						skip = true;
				if (!skip)
					pushJsonbValue(&ps, WJB_KEY, &v);
			}
			else if (tok == WJB_VALUE && !skip)
				pushJsonbValue(&ps, WJB_VALUE, &v);
		}
		pushed = JsonbValueToJsonb(pushJsonbValue(&ps, WJB_END_OBJECT, NULL));
		DdbCheck(VARSIZE(pushed) == VARSIZE(result) &&
				 memcmp(pushed, result, VARSIZE(result)) == 0);
	}
#endif
	return result;
}
