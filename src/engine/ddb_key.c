/*-------------------------------------------------------------------------
 *
 * ddb_key.c
 *	  The order-preserving key encoding and the routing hash.
 *
 * Every item of a ddb table is stored under one byte string, its encoded
 * key, and the tree orders items by comparing those strings with memcmp
 * (a string that is a prefix of another sorts first).  This file owns the
 * encoding; nothing else may look inside an encoded key.  An encoded key is
 *
 *		hash32(enc(pk)) || enc(pk) || enc(sk1) || enc(sk2) ...
 *
 * with hash32 as 4 bytes big-endian, so keys group by partition (all items
 * of one partition key are contiguous, ordered by sort key) and partitions
 * are spread evenly over the key space.  Each enc() is self-delimiting and
 * no encoding is a proper prefix of another, so the concatenation orders
 * lexicographically by (hash, pk, sk1, ...), each column by DynamoDB's
 * rules.  The format is on disk: changing it needs a new on-disk version.
 *
 * S (text) and B (bytea):
 *
 *		the value's bytes, each 0x00 written as 0x00 0xFF, then 0x00 0x01
 *
 *	  DynamoDB orders strings by their UTF-8 bytes, not by a collation, and
 *	  binaries by unsigned bytes; so does memcmp over this encoding.  The
 *	  terminator 0x00 0x01 sorts below every continuation (a non-zero byte,
 *	  or 0x00 0xFF), which makes "a" < "ab" < "b".  Escaping is bytewise, so
 *	  the escaped form of p is a byte prefix of the escaped form of s whenever
 *	  p is a prefix of s: begins_with() becomes a range scan.  Text is
 *	  encoded as UTF-8 whatever the database encoding (converted on the way
 *	  in and out), so that order and hash match DynamoDB and any client;
 *	  a SQL_ASCII database stores its bytes as they are.
 *
 * N (numeric):
 *
 *	  Numerically equal values encode identically (1e3, 1000 and 1000.00;
 *	  -0 and 0): a key is a number, not a display format, so decoding gives
 *	  back the normalized value (1000.00 reads back as 1000), as in DynamoDB.
 *	  Write a non-zero value as 0.d1d2...dn x 10^E with d1 != 0 and dn != 0
 *	  (n significant digits, leading and trailing zeros stripped).  Then
 *
 *		zero:      0x20
 *		positive:  0x30, (E + 0x8000) as uint16 big-endian,
 *				   digit pairs, 0x00
 *		negative:  0x10, ~(E + 0x8000) as uint16 big-endian,
 *				   complemented digit pairs, 0xFF
 *
 *	  Digits are packed two per byte, an odd last digit padded with 0; a pair
 *	  with value v (0..99) is the byte v + 1 (1..100) for a positive number
 *	  and 100 - v (100..1) for a negative one.  For positives a larger
 *	  exponent means a larger value, and with equal exponents the digit
 *	  strings compare as decimal fractions; a pair byte is never 0x00, so the
 *	  shorter digit string (the smaller fraction, as its continuation has a
 *	  non-zero digit) ends first and sorts first.  Negatives are the mirror
 *	  image: complemented exponent and pairs put larger magnitudes first, and
 *	  the 0xFF terminator, above every pair byte, puts -0.12 after -0.1201.
 *	  The exponent field covers every numeric value below 1e32767 (numeric
 *	  admits larger ones, which cannot be encoded); DynamoDB's own range,
 *	  enforced by ddb_check_key_value for stored keys, is E in [-129, 126]
 *	  with at most 38 significant digits.
 *
 * The routing hash is MurmurHash3_x86_32 with seed 0 over enc(pk), that is
 * the partition key's encoding including its terminator, read with explicit
 * little-endian loads so the result is the same on every platform.  A client
 * that routes requests by partition can reproduce it from this description;
 * the regression test "keys" pins a few values.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"

#include "ddb.h"

PG_FUNCTION_INFO_V1(ddb_hash32_sql);
PG_FUNCTION_INFO_V1(ddb_key_bytes);
PG_FUNCTION_INFO_V1(ddb_sort_key_bytes);

/* Bytes of the S/B encoding. */
#define DDB_ENC_ESCAPE		0x00	/* starts an escape or the terminator */
#define DDB_ENC_ESCAPED_00	0xFF	/* 0x00 0xFF: a 0x00 byte of the value */
#define DDB_ENC_END			0x01	/* 0x00 0x01: end of the value */

/* Bytes of the N encoding. */
#define DDB_NUM_NEG			0x10
#define DDB_NUM_ZERO		0x20
#define DDB_NUM_POS			0x30
#define DDB_NUM_EXP_BIAS	0x8000
#define DDB_NUM_POS_END		0x00
#define DDB_NUM_NEG_END		0xFF

/* DynamoDB's number limits: 38 digits, magnitude 1E-130 .. 9.99..9E+125 */
#define DDB_NUM_MAX_DIGITS	38
#define DDB_NUM_MIN_EXP		(-129)	/* 1E-130 = 0.1 x 10^-129 */
#define DDB_NUM_MAX_EXP		126		/* 9.9E+125 = 0.99 x 10^126 */

/* Length of the hash prefix of an encoded key. */
#define DDB_HASH_BYTES		4

/*
 * A finite numeric in the form 0.d1d2...dn x 10^exponent, d1 and dn
 * non-zero; ndigits = 0 for zero.  digits are ASCII '0'..'9' and point into
 * a palloc'd string.
 */
typedef struct DdbDecimal
{
	bool		negative;
	int			exponent;
	int			ndigits;
	const char *digits;
	char	   *str;			/* the palloc'd string digits points into */
} DdbDecimal;

static void ddb_report_corrupt_key(const char *what) pg_attribute_noreturn();
static void ddb_report_not_finite(const char *colname) pg_attribute_noreturn();


/* ----------------------------------------------------------------
 *		helpers
 * ----------------------------------------------------------------
 */

static void
ddb_report_corrupt_key(const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg_internal("corrupt ddb key: %s", what)));
}

/*
 * Does text need converting between the database encoding and UTF-8?  Not in
 * a UTF-8 database, nor in SQL_ASCII, whose bytes have no known encoding and
 * are kept as they are.
 */
static inline bool
ddb_text_needs_conversion(void)
{
	int			enc = GetDatabaseEncoding();

	return enc != PG_UTF8 && enc != PG_SQL_ASCII;
}

/*
 * The raw bytes of an S or B value as they are encoded: UTF-8 for text.
 * *tofree is set to anything the caller may pfree afterwards (or NULL).
 */
static const char *
ddb_key_raw_bytes(DdbKeyType type, Datum value, int *len, void **tofree)
{
	struct varlena *v = PG_DETOAST_DATUM_PACKED(value);
	const char *data = VARDATA_ANY(v);
	int			n = VARSIZE_ANY_EXHDR(v);

	*tofree = (v != (struct varlena *) DatumGetPointer(value)) ? v : NULL;

	if (type == DDB_KEY_S && n > 0 && ddb_text_needs_conversion())
	{
		const char *utf8 = pg_server_to_any(data, n, PG_UTF8);

		if (utf8 != data)
		{
			/* the converted string is NUL-terminated and palloc'd */
			if (*tofree)
				pfree(*tofree);
			*tofree = unconstify(char *, utf8);
			data = utf8;
			n = strlen(utf8);
		}
	}

	*len = n;
	return data;
}

/*
 * Split a numeric into sign, exponent and significant digits.  numeric's
 * normalized output is a plain decimal string without insignificant zeros,
 * and equal for equal values, so parsing it is simple and independent of
 * numeric's internal base.  Returns false for NaN and the infinities.
 */
static bool
ddb_numeric_decimal(Datum value, DdbDecimal *dec)
{
	Numeric		num = DatumGetNumeric(value);
	char	   *str;
	char	   *digits;
	int			ndigits = 0;
	int			intdigits = -1;
	int			first;
	int			last;

	if (numeric_is_nan(num) || numeric_is_inf(num))
		return false;

	str = numeric_normalize(num);
	dec->str = str;
	dec->negative = (*str == '-');

	/* Collect all digits in place, remembering where the point was. */
	digits = str;
	for (const char *s = str; *s; s++)
	{
		if (*s >= '0' && *s <= '9')
			digits[ndigits++] = *s;
		else if (*s == '.')
			intdigits = ndigits;
		else if (*s != '-')
			elog(ERROR, "unexpected character in normalized numeric \"%s\"", str);
	}
	if (intdigits < 0)
		intdigits = ndigits;

	for (first = 0; first < ndigits && digits[first] == '0'; first++)
		;
	if (first == ndigits)
	{
		/* zero has no sign: -0 must encode like 0 (numeric keeps none) */
		dec->negative = false;
		dec->exponent = 0;
		dec->ndigits = 0;
		dec->digits = digits;
		return true;
	}
	for (last = ndigits - 1; digits[last] == '0'; last--)
		;

	dec->exponent = intdigits - first;
	dec->ndigits = last - first + 1;
	dec->digits = digits + first;
	return true;
}

static void
ddb_report_not_finite(const char *colname)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("key attribute \"%s\" must be a finite number", colname),
			 errdetail("DynamoDB numbers have no NaN or infinity.")));
}


/* ----------------------------------------------------------------
 *		encoding
 * ----------------------------------------------------------------
 */

/* Append the S/B encoding of len bytes at data. */
static void
ddb_encode_bytes(StringInfo buf, const char *data, int len)
{
	const char *p = data;
	const char *end = data + len;

	/* Copy runs without 0x00 in one go: most keys have none at all. */
	while (p < end)
	{
		const char *z = memchr(p, 0, end - p);

		if (z == NULL)
		{
			appendBinaryStringInfo(buf, p, end - p);
			break;
		}
		appendBinaryStringInfo(buf, p, z - p);
		appendStringInfoCharMacro(buf, (char) DDB_ENC_ESCAPE);
		appendStringInfoCharMacro(buf, (char) DDB_ENC_ESCAPED_00);
		p = z + 1;
	}
	appendStringInfoCharMacro(buf, (char) DDB_ENC_ESCAPE);
	appendStringInfoCharMacro(buf, (char) DDB_ENC_END);
}

/* Append the N encoding of a numeric Datum; see the file header. */
static void
ddb_encode_numeric(StringInfo buf, Datum value)
{
	DdbDecimal	dec;
	uint16		e;

	/* Stored keys were checked already; this catches query bounds. */
	if (!ddb_numeric_decimal(value, &dec))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ddb key numbers must be finite")));

	if (dec.ndigits == 0)
	{
		appendStringInfoCharMacro(buf, (char) DDB_NUM_ZERO);
		pfree(dec.str);
		return;
	}

	/*
	 * numeric's smallest exponent (about -16383) fits the field; only absurd
	 * values of 1e32767 and more do not.  No key can hold those, so a bound
	 * that large is refused rather than silently mis-ordered.
	 */
	if (dec.exponent > PG_INT16_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("number is too large for a ddb key"),
				 errdetail("Key numbers must be less than 1E+32767.")));

	e = (uint16) (dec.exponent + DDB_NUM_EXP_BIAS);
	if (dec.negative)
		e = ~e;
	appendStringInfoCharMacro(buf, (char) (dec.negative ? DDB_NUM_NEG : DDB_NUM_POS));
	appendStringInfoCharMacro(buf, (char) (e >> 8));
	appendStringInfoCharMacro(buf, (char) (e & 0xFF));

	for (int i = 0; i < dec.ndigits; i += 2)
	{
		int			pair = (dec.digits[i] - '0') * 10;

		if (i + 1 < dec.ndigits)
			pair += dec.digits[i + 1] - '0';
		appendStringInfoCharMacro(buf, (char) (dec.negative ? 100 - pair : pair + 1));
	}
	appendStringInfoCharMacro(buf, (char) (dec.negative ? DDB_NUM_NEG_END : DDB_NUM_POS_END));
	pfree(dec.str);
}

/*
 * Append enc(value) for a key column of the given type.  The value is not
 * checked against DynamoDB's limits (see ddb_check_key_value): query bounds
 * are encoded too, and any finite number below 1e32767 orders correctly.
 */
void
ddb_encode_key_column(StringInfo buf, DdbKeyType type, Datum value)
{
	switch (type)
	{
		case DDB_KEY_S:
		case DDB_KEY_B:
			{
				void	   *tofree;
				int			len;
				const char *data = ddb_key_raw_bytes(type, value, &len, &tofree);

				ddb_encode_bytes(buf, data, len);
				if (tofree)
					pfree(tofree);
				break;
			}
		case DDB_KEY_N:
			ddb_encode_numeric(buf, value);
			break;
		default:
			elog(ERROR, "unrecognized ddb key type %d", (int) type);
	}
}

/*
 * Append the hash prefix and enc(pk).  The hash covers enc(pk), which is
 * only known once written, so reserve its 4 bytes and fill them in after.
 */
static void
ddb_encode_partition(StringInfo buf, DdbKeyType type, Datum value)
{
	int			hashpos = buf->len;
	uint32		h;
	unsigned char *p;

	appendBinaryStringInfo(buf, "\0\0\0\0", DDB_HASH_BYTES);
	ddb_encode_key_column(buf, type, value);

	h = ddb_hash32(buf->data + hashpos + DDB_HASH_BYTES,
				   buf->len - hashpos - DDB_HASH_BYTES);
	p = (unsigned char *) buf->data + hashpos;
	p[0] = (unsigned char) (h >> 24);
	p[1] = (unsigned char) (h >> 16);
	p[2] = (unsigned char) (h >> 8);
	p[3] = (unsigned char) h;
}

/*
 * Append the encoded key of a row.  values/isnull are indexed by attribute
 * number - 1; the caller has checked that no key is null.
 */
void
ddb_encode_key(const DdbKeyInfo *ki, Datum *values, bool *isnull,
			   StringInfo buf)
{
	for (int k = 0; k < ki->nkeys; k++)
	{
		int			a = ki->keyattno[k] - 1;

		if (isnull[a])
			elog(ERROR, "ddb key column %d is null", k + 1);
		if (k == 0)
			ddb_encode_partition(buf, ki->keytype[0], values[a]);
		else
			ddb_encode_key_column(buf, ki->keytype[k], values[a]);
	}
}

/*
 * Append the encoding of the first nvalues key columns, values[] indexed by
 * key position (values[0] is the partition key).  Every key that starts with
 * (pk, sk1, ..., sk[nvalues-1]) has the result as a prefix: with nvalues = 1
 * it selects one partition.  Returns buf->len.
 */
int
ddb_encode_key_prefix(const DdbKeyInfo *ki, Datum *values, int nvalues,
					  StringInfo buf)
{
	if (nvalues < 1 || nvalues > ki->nkeys)
		elog(ERROR, "invalid ddb key prefix length %d of %d", nvalues, ki->nkeys);

	ddb_encode_partition(buf, ki->keytype[0], values[0]);
	for (int k = 1; k < nvalues; k++)
		ddb_encode_key_column(buf, ki->keytype[k], values[k]);

	return buf->len;
}


/* ----------------------------------------------------------------
 *		decoding
 * ----------------------------------------------------------------
 */

/* Decode one S/B column into a palloc'd text or bytea. */
static const char *
ddb_decode_bytes(DdbKeyType type, const char *p, const char *end, Datum *value)
{
	const unsigned char *s = (const unsigned char *) p;
	const unsigned char *e = (const unsigned char *) end;
	struct varlena *v;
	char	   *out;
	int			len = 0;

	/* The value is never longer than its encoding. */
	v = (struct varlena *) palloc(VARHDRSZ + (end - p));
	out = VARDATA(v);

	for (;;)
	{
		const unsigned char *z = memchr(s, DDB_ENC_ESCAPE, e - s);

		if (z == NULL || z + 1 >= e)
			ddb_report_corrupt_key("unterminated string");
		memcpy(out + len, s, z - s);
		len += z - s;
		if (z[1] == DDB_ENC_END)
		{
			s = z + 2;
			break;
		}
		if (z[1] != DDB_ENC_ESCAPED_00)
			ddb_report_corrupt_key("invalid escape in string");
		out[len++] = '\0';
		s = z + 2;
	}
	SET_VARSIZE(v, VARHDRSZ + len);

	if (type == DDB_KEY_S && len > 0 && ddb_text_needs_conversion())
	{
		char	   *conv = pg_any_to_server(out, len, PG_UTF8);

		if (conv != out)
		{
			text	   *t = cstring_to_text(conv);

			pfree(conv);
			pfree(v);
			v = (struct varlena *) t;
		}
	}

	*value = PointerGetDatum(v);
	return (const char *) s;
}

/* Decode one N column into a palloc'd numeric; see the file header. */
static const char *
ddb_decode_numeric(const char *p, const char *end, Datum *value)
{
	const unsigned char *s = (const unsigned char *) p;
	const unsigned char *e = (const unsigned char *) end;
	bool		negative;
	int			exponent;
	uint16		ebits;
	char	   *digits;
	int			ndigits = 0;
	StringInfoData str;

	if (s >= e)
		ddb_report_corrupt_key("missing number");
	if (*s == DDB_NUM_ZERO)
	{
		*value = DirectFunctionCall3(numeric_in, CStringGetDatum("0"),
									 ObjectIdGetDatum(InvalidOid),
									 Int32GetDatum(-1));
		return (const char *) (s + 1);
	}
	if (*s != DDB_NUM_POS && *s != DDB_NUM_NEG)
		ddb_report_corrupt_key("invalid number tag");
	negative = (*s == DDB_NUM_NEG);
	s++;

	if (e - s < 2)
		ddb_report_corrupt_key("truncated number exponent");
	ebits = (uint16) ((s[0] << 8) | s[1]);
	if (negative)
		ebits = ~ebits;
	exponent = (int) ebits - DDB_NUM_EXP_BIAS;
	s += 2;

	/* Two digits per byte, at most the bytes left. */
	digits = palloc(2 * (e - s) + 1);
	for (;;)
	{
		int			pair;

		if (s >= e)
			ddb_report_corrupt_key("unterminated number");
		if (*s == (negative ? DDB_NUM_NEG_END : DDB_NUM_POS_END))
		{
			s++;
			break;
		}
		if (*s < 1 || *s > 100)
			ddb_report_corrupt_key("invalid digit pair in number");
		pair = negative ? 100 - *s : *s - 1;
		digits[ndigits++] = '0' + pair / 10;
		digits[ndigits++] = '0' + pair % 10;
		s++;
	}
	if (ndigits == 0 || digits[0] == '0')
		ddb_report_corrupt_key("number not normalized");
	if (digits[ndigits - 1] == '0')
		ndigits--;				/* the padding of an odd last digit */
	if (digits[ndigits - 1] == '0')
		ddb_report_corrupt_key("number not normalized");

	/*
	 * Write the value as a plain decimal: numeric_in limits exponent
	 * notation to +-1000, but the encoding allows larger exponents.
	 */
	initStringInfo(&str);
	if (negative)
		appendStringInfoChar(&str, '-');
	if (exponent <= 0)
	{
		appendStringInfoString(&str, "0.");
		for (int i = 0; i < -exponent; i++)
			appendStringInfoChar(&str, '0');
		appendBinaryStringInfo(&str, digits, ndigits);
	}
	else if (exponent >= ndigits)
	{
		appendBinaryStringInfo(&str, digits, ndigits);
		for (int i = ndigits; i < exponent; i++)
			appendStringInfoChar(&str, '0');
	}
	else
	{
		appendBinaryStringInfo(&str, digits, exponent);
		appendStringInfoChar(&str, '.');
		appendBinaryStringInfo(&str, digits + exponent, ndigits - exponent);
	}

	*value = DirectFunctionCall3(numeric_in, CStringGetDatum(str.data),
								 ObjectIdGetDatum(InvalidOid),
								 Int32GetDatum(-1));
	pfree(str.data);
	pfree(digits);
	return (const char *) s;
}

/*
 * Decode one key column starting at p (not beyond end) into a palloc'd
 * Datum of the column's type.  Returns the position just past it.
 */
const char *
ddb_decode_key_column(DdbKeyType type, const char *p, const char *end,
					  Datum *value)
{
	switch (type)
	{
		case DDB_KEY_S:
		case DDB_KEY_B:
			return ddb_decode_bytes(type, p, end, value);
		case DDB_KEY_N:
			return ddb_decode_numeric(p, end, value);
		default:
			elog(ERROR, "unrecognized ddb key type %d", (int) type);
	}
	return NULL;				/* keep compiler quiet */
}

/*
 * Decode a whole encoded key into values/isnull, indexed by key position.
 * The key must be exactly hash, pk, sort keys; the hash is verified too, as
 * a wrong one would hide the item from every lookup of its partition.
 */
void
ddb_decode_key(const DdbKeyInfo *ki, const char *key, int keylen,
			   Datum *values, bool *isnull)
{
	ddb_decode_key_raw(ki, key, keylen, values, isnull, NULL, NULL);
}

/*
 * An S column whose encoding is its value as it is: no 0x00 in the value
 * (so no escape before the terminator) and text kept as UTF-8 (so no
 * conversion).  Sets *raw and *rawlen to the value's bytes inside the key
 * and returns the position after the column, or NULL when the column must
 * be decoded.
 */
static const char *
ddb_key_string_as_is(const char *p, const char *end, const char **raw, int *rawlen)
{
	const char *z = memchr(p, DDB_ENC_ESCAPE, end - p);

	if (z == NULL || z + 1 >= end || (unsigned char) z[1] != DDB_ENC_END ||
		ddb_text_needs_conversion())
		return NULL;
	*raw = p;
	*rawlen = z - p;
	return z + 2;
}

/*
 * Where the key column of type 'type' starting at s ends (the byte after
 * it), walking its bytes without decoding them, or NULL when the key ends
 * first.
 */
static const unsigned char *
ddb_key_column_end(DdbKeyType type, const unsigned char *s, const unsigned char *e)
{
	if (s >= e)
		return NULL;
	if (type == DDB_KEY_N)
	{
		unsigned char stop;

		if (*s == DDB_NUM_ZERO)
			return s + 1;
		stop = *s == DDB_NUM_NEG ? DDB_NUM_NEG_END : DDB_NUM_POS_END;
		/* marker and 2 exponent bytes, then digit pairs up to the stop byte */
		for (s += 3; s < e; s++)
			if (*s == stop)
				return s + 1;
		return NULL;
	}
	/* S and B: up to the terminator 0x00 0x01 (0x00 0xFF is an escaped 0x00) */
	for (; s + 1 < e; s++)
	{
		if (*s != DDB_ENC_ESCAPE)
			continue;
		if (s[1] == DDB_ENC_END)
			return s + 2;
		s++;					/* skip the escaped byte */
	}
	return NULL;
}

/*
 * ddb_decode_key's loop, for its variants: want NULL decodes every column,
 * else only those with want[k] (isnull[k] true and values[k] unset for the
 * others, whose bytes are only walked); raw not NULL copies S columns out
 * as they are (ddb_decode_key_raw).  The hash is verified all the same.
 */
static void
ddb_decode_key_internal(const DdbKeyInfo *ki, const char *key, int keylen,
						const bool *want, Datum *values, bool *isnull,
						const char **raw, int *rawlen)
{
	const char *end = key + keylen;
	const char *p;
	const unsigned char *h = (const unsigned char *) key;
	uint32		stored;

	if (keylen < DDB_HASH_BYTES)
		ddb_report_corrupt_key("shorter than its hash");
	p = key + DDB_HASH_BYTES;

	for (int k = 0; k < ki->nkeys; k++)
	{
		const char *next = NULL;

		if (raw != NULL)
		{
			raw[k] = NULL;
			if (ki->keytype[k] == DDB_KEY_S)
				next = ddb_key_string_as_is(p, end, &raw[k], &rawlen[k]);
		}
		if (want != NULL && !want[k])
		{
			next = (const char *)
				ddb_key_column_end(ki->keytype[k], (const unsigned char *) p,
								   (const unsigned char *) end);
			if (next == NULL)
				ddb_report_corrupt_key("unterminated key column");
			isnull[k] = true;
		}
		else
			isnull[k] = false;
		p = next != NULL ? next : ddb_decode_key_column(ki->keytype[k], p, end, &values[k]);

		if (k == 0)
		{
			stored = ((uint32) h[0] << 24) | ((uint32) h[1] << 16) |
				((uint32) h[2] << 8) | (uint32) h[3];
			if (stored != ddb_hash32(key + DDB_HASH_BYTES,
									 p - key - DDB_HASH_BYTES))
				ddb_report_corrupt_key("hash does not match the partition key");
		}
	}
	if (p != end)
		ddb_report_corrupt_key("trailing bytes after the last key column");
}

/* The first four bytes of a key, the routing hash, as a number. */
uint32
ddb_key_hash(const char *key)
{
	const unsigned char *p = (const unsigned char *) key;

	return ((uint32) p[0] << 24) | ((uint32) p[1] << 16) | ((uint32) p[2] << 8) | p[3];
}

/*
 * Why a whole encoded key (hash, pk, sort keys) is malformed -- a column
 * unterminated, bytes after the last, a hash that is not the partition
 * key's -- or NULL when it is not: ddb_verify's check of every leaf item's
 * key, which reads each through its leaf's prefix ("Leaf prefix" in
 * ddb_page.h), without raising.  Walks the bytes; decodes nothing.
 */
const char *
ddb_key_check(const DdbKeyInfo *ki, const char *key, int keylen)
{
	const unsigned char *s = (const unsigned char *) key + DDB_HASH_BYTES;
	const unsigned char *e = (const unsigned char *) key + keylen;

	if (keylen < DDB_HASH_BYTES)
		return "shorter than its hash";
	for (int k = 0; k < ki->nkeys; k++)
	{
		const unsigned char *col = s;

		s = ddb_key_column_end(ki->keytype[k], s, e);
		if (s == NULL)
			return "unterminated key column";
		/* a string's or binary's escapes: 0x00 0xFF, up to its 0x00 0x01 */
		for (; ki->keytype[k] != DDB_KEY_N && col < s - 2; col++)
		{
			if (*col != DDB_ENC_ESCAPE)
				continue;
			if (col[1] != DDB_ENC_ESCAPED_00)
				return "bad escape in a key column";
			col++;
		}
		if (k == 0 &&
			ddb_key_hash(key) != ddb_hash32(key + DDB_HASH_BYTES,
											(const char *) s - key - DDB_HASH_BYTES))
			return "hash does not match the partition key";
	}
	if (s != e)
		return "trailing bytes after the last key column";
	return NULL;
}

/*
 * ddb_decode_key for a reader that copies string keys out as they are
 * (the item API): an S column whose bytes in the key are its value (see
 * ddb_key_string_as_is) is not decoded into a text; raw[k] and rawlen[k]
 * point at those bytes inside key instead and values[k] is left unset.
 * Every other column is decoded as ddb_decode_key does, with raw[k] NULL.
 * raw NULL: decode every column.  The hash is verified all the same.
 */
void
ddb_decode_key_raw(const DdbKeyInfo *ki, const char *key, int keylen,
				   Datum *values, bool *isnull, const char **raw, int *rawlen)
{
	ddb_decode_key_internal(ki, key, keylen, NULL, values, isnull, raw, rawlen);
}

/*
 * ddb_decode_key for a reader that needs some key columns only (a key
 * scan whose plan reads only the columns its expressions name): the
 * columns with want[k] false are walked over, not decoded, and come back
 * with isnull[k] true.  The hash is verified all the same.
 */
void
ddb_decode_key_some(const DdbKeyInfo *ki, const char *key, int keylen,
					const bool *want, Datum *values, bool *isnull)
{
	ddb_decode_key_internal(ki, key, keylen, want, values, isnull, NULL, NULL);
}

/*
 * The length of the partition part -- hash32 and enc(pk) -- at the start of
 * an encoded key or item key of a table whose partition key has type
 * 'type', or -1 when 'key' ends before its partition key does (a truncated
 * separator).  Two keys are in one partition exactly when both have a
 * partition part and those are equal.  Only walks the bytes: no decoding.
 */
int
ddb_key_partition_len(DdbKeyType type, const char *key, int keylen)
{
	const unsigned char *e;

	if (keylen <= DDB_HASH_BYTES)
		return -1;
	e = ddb_key_column_end(type, (const unsigned char *) key + DDB_HASH_BYTES,
						   (const unsigned char *) key + keylen);
	return e == NULL ? -1 : (const char *) e - key;
}


/* ----------------------------------------------------------------
 *		hash and key ranges
 * ----------------------------------------------------------------
 */

static inline uint32
ddb_rotl32(uint32 x, int r)
{
	return (x << r) | (x >> (32 - r));
}

/*
 * MurmurHash3_x86_32 (Austin Appleby, public domain) with seed 0.  Blocks
 * are read byte by byte as little-endian, never as words, so the result
 * does not depend on the host's byte order or alignment.
 */
uint32
ddb_hash32(const char *data, int len)
{
	const unsigned char *p = (const unsigned char *) data;
	const uint32 c1 = 0xcc9e2d51;
	const uint32 c2 = 0x1b873593;
	uint32		h = 0;			/* the seed */
	uint32		k;
	int			nblocks = len / 4;
	const unsigned char *tail;

	for (int i = 0; i < nblocks; i++, p += 4)
	{
		k = (uint32) p[0] | ((uint32) p[1] << 8) |
			((uint32) p[2] << 16) | ((uint32) p[3] << 24);
		k *= c1;
		k = ddb_rotl32(k, 15);
		k *= c2;
		h ^= k;
		h = ddb_rotl32(h, 13);
		h = h * 5 + 0xe6546b64;
	}

	tail = p;
	k = 0;
	switch (len & 3)
	{
		case 3:
			k ^= (uint32) tail[2] << 16;
			/* FALLTHROUGH */
		case 2:
			k ^= (uint32) tail[1] << 8;
			/* FALLTHROUGH */
		case 1:
			k ^= (uint32) tail[0];
			k *= c1;
			k = ddb_rotl32(k, 15);
			k *= c2;
			h ^= k;
	}

	/* finalization mix: every input bit affects every output bit */
	h ^= (uint32) len;
	h ^= h >> 16;
	h *= 0x85ebca6b;
	h ^= h >> 13;
	h *= 0xc2b2ae35;
	h ^= h >> 16;
	return h;
}

/*
 * Set out to the smallest byte string greater than every string that has key
 * as a prefix: the exclusive upper bound of a prefix range.  Trailing 0xFF
 * bytes cannot be incremented, so drop them and increment the byte before.
 * Returns false if there is no such string (key empty or all 0xFF): the
 * range is then unbounded above.
 */
bool
ddb_key_successor(const char *key, int keylen, StringInfo out)
{
	const unsigned char *k = (const unsigned char *) key;
	int			n = keylen;

	resetStringInfo(out);
	while (n > 0 && k[n - 1] == 0xFF)
		n--;
	if (n == 0)
		return false;

	appendBinaryStringInfo(out, key, n);
	out->data[n - 1] = (char) (k[n - 1] + 1);
	return true;
}


/* ----------------------------------------------------------------
 *		DynamoDB's key limits
 * ----------------------------------------------------------------
 */

/* The size of an S or B key value as DynamoDB counts it (UTF-8 bytes of text). */
int
ddb_key_value_bytes(DdbKeyType type, Datum value)
{
	void	   *tofree;
	int			len;

	(void) ddb_key_raw_bytes(type, value, &len, &tofree);
	if (tofree)
		pfree(tofree);
	return len;
}

/*
 * Reject a key value DynamoDB would reject: empty strings and binaries,
 * partition keys over 2048 bytes and sort keys over 1024 (of UTF-8 for
 * text), non-finite numbers, numbers with more than 38 significant digits
 * or outside DynamoDB's magnitude range.  colname names the key in errors.
 */
void
ddb_check_key_value(DdbKeyType type, Datum value, bool partition,
					const char *colname)
{
	switch (type)
	{
		case DDB_KEY_S:
		case DDB_KEY_B:
			{
				int			len = ddb_key_value_bytes(type, value);
				int			limit = partition ? DDB_MAX_PARTITION_KEY_BYTES :
					DDB_MAX_SORT_KEY_BYTES;

				if (len == 0)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("key attribute \"%s\" must not be empty", colname),
							 errdetail("DynamoDB does not allow empty %s values in keys.",
									   type == DDB_KEY_S ? "string" : "binary")));
				if (len > limit)
					ereport(ERROR,
							(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
							 errmsg("key attribute \"%s\" is too long", colname),
							 errdetail("The %s key is %d bytes; the limit is %d bytes.",
									   partition ? "partition" : "sort", len, limit)));
				break;
			}
		case DDB_KEY_N:
			{
				DdbDecimal	dec;

				if (!ddb_numeric_decimal(value, &dec))
					ddb_report_not_finite(colname);
				if (dec.ndigits > DDB_NUM_MAX_DIGITS)
					ereport(ERROR,
							(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
							 errmsg("key attribute \"%s\" has more than %d significant digits",
									colname, DDB_NUM_MAX_DIGITS),
							 errdetail("The number has %d significant digits.",
									   dec.ndigits)));
				if (dec.ndigits > 0 &&
					(dec.exponent < DDB_NUM_MIN_EXP || dec.exponent > DDB_NUM_MAX_EXP))
					ereport(ERROR,
							(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
							 errmsg("key attribute \"%s\" is out of range for a DynamoDB number",
									colname),
							 errdetail("The magnitude of a non-zero number must be between 1E-130 and 9.9999999999999999999999999999999999999E+125.")));
				pfree(dec.str);
				break;
			}
		default:
			elog(ERROR, "unrecognized ddb key type %d", (int) type);
	}
}

const char *
ddb_key_type_name(DdbKeyType type)
{
	switch (type)
	{
		case DDB_KEY_S:
			return "S";
		case DDB_KEY_N:
			return "N";
		case DDB_KEY_B:
			return "B";
	}
	return "?";
}


/* ----------------------------------------------------------------
 *		SQL-callable functions, for tests and client-side routers
 * ----------------------------------------------------------------
 */

/*
 * The key type of a SQL argument type.  An untyped literal ('abc') is taken
 * as text, so ddb_hash32('abc') works without a cast.
 */
static DdbKeyType
ddb_sql_key_type(Oid typid)
{
	switch (getBaseType(typid))
	{
		case TEXTOID:
		case UNKNOWNOID:
			return DDB_KEY_S;
		case NUMERICOID:
			return DDB_KEY_N;
		case BYTEAOID:
			return DDB_KEY_B;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("ddb keys must be text, numeric or bytea"),
					 errdetail("The argument has type %s.", format_type_be(typid))));
	}
	return DDB_KEY_S;			/* keep compiler quiet */
}

/* Argument argno as a checked key Datum; *type is set to its key type. */
static Datum
ddb_sql_key_arg(FunctionCallInfo fcinfo, int argno, bool partition,
				const char *colname, DdbKeyType *type)
{
	Oid			typid = get_fn_expr_argtype(fcinfo->flinfo, argno);
	Datum		value = PG_GETARG_DATUM(argno);

	if (!OidIsValid(typid))
		elog(ERROR, "could not determine the type of argument %d", argno + 1);
	*type = ddb_sql_key_type(typid);
	if (getBaseType(typid) == UNKNOWNOID)
		value = CStringGetTextDatum(DatumGetCString(value));
	ddb_check_key_value(*type, value, partition, colname);
	return value;
}

static bytea *
ddb_stringinfo_to_bytea(StringInfo buf)
{
	bytea	   *result = (bytea *) palloc(VARHDRSZ + buf->len);

	SET_VARSIZE(result, VARHDRSZ + buf->len);
	memcpy(VARDATA(result), buf->data, buf->len);
	return result;
}

/*
 * ddb_hash32(value) -> bigint: the routing hash of a partition key value, as
 * an unsigned 32-bit number.
 */
Datum
ddb_hash32_sql(PG_FUNCTION_ARGS)
{
	DdbKeyType	type;
	Datum		value = ddb_sql_key_arg(fcinfo, 0, true, "value", &type);
	StringInfoData buf;
	uint32		h;

	initStringInfo(&buf);
	ddb_encode_key_column(&buf, type, value);
	h = ddb_hash32(buf.data, buf.len);
	pfree(buf.data);

	PG_RETURN_INT64((int64) h);
}

/*
 * ddb_key_bytes(pk, sk...) -> bytea: the full encoded key, hash first.  The
 * first argument is checked as a partition key, the others as sort keys.
 */
Datum
ddb_key_bytes(PG_FUNCTION_ARGS)
{
	int			nargs = PG_NARGS();
	StringInfoData buf;

	/*
	 * With VARIADIC "any" the values arrive as separate arguments of their
	 * own types; an explicit VARIADIC array would force one type on all.
	 */
	if (get_fn_expr_variadic(fcinfo->flinfo))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("ddb_key_bytes does not accept a VARIADIC array"),
				 errhint("Pass the key values as separate arguments.")));
	if (nargs < 1 || nargs > DDB_MAX_KEY_COLUMNS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a ddb key has 1 to %d columns, not %d",
						DDB_MAX_KEY_COLUMNS, nargs)));

	initStringInfo(&buf);
	for (int k = 0; k < nargs; k++)
	{
		DdbKeyType	type;
		char		name[NAMEDATALEN];
		Datum		value;

		if (k == 0)
			strlcpy(name, "pk", sizeof(name));
		else if (nargs == 2)
			strlcpy(name, "sk", sizeof(name));
		else
			snprintf(name, sizeof(name), "sk%d", k);
		value = ddb_sql_key_arg(fcinfo, k, k == 0, name, &type);

		if (k == 0)
			ddb_encode_partition(&buf, type, value);
		else
			ddb_encode_key_column(&buf, type, value);
	}

	PG_RETURN_BYTEA_P(ddb_stringinfo_to_bytea(&buf));
}

/*
 * ddb_sort_key_bytes(value) -> bytea: enc(value) alone, no hash.  Ordering
 * by it shows the order ddb stores keys in.  Checked with the partition key
 * limits, the looser ones, as the value may play either role.
 */
Datum
ddb_sort_key_bytes(PG_FUNCTION_ARGS)
{
	DdbKeyType	type;
	Datum		value = ddb_sql_key_arg(fcinfo, 0, true, "value", &type);
	StringInfoData buf;

	initStringInfo(&buf);
	ddb_encode_key_column(&buf, type, value);

	PG_RETURN_BYTEA_P(ddb_stringinfo_to_bytea(&buf));
}
