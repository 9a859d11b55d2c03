/*-------------------------------------------------------------------------
 *
 * ddb_http_sigv4.c
 *	  AWS Signature Version 4, verified the way DynamoDB verifies it.
 *
 * A signed request carries
 *
 *	Authorization: AWS4-HMAC-SHA256 Credential=<key id>/<YYYYMMDD>/<region>/
 *		dynamodb/aws4_request, SignedHeaders=host;x-amz-date;..., Signature=<hex>
 *	X-Amz-Date: <YYYYMMDD>T<HHMMSS>Z
 *
 * and the signature is HMAC-SHA256 over a "string to sign" built from a
 * canonical form of the request (method, path, query, the signed headers,
 * SHA-256 of the body), keyed by a key derived from the secret through
 * the credential scope.  ddb_sigv4_parse checks everything that needs no
 * secret, in the order DynamoDB checks it (so a request with several
 * faults gets DynamoDB's first complaint); ddb_sigv4_verify recomputes the
 * signature with the key's secret.  Hashes and HMACs are PostgreSQL's own
 * (common/cryptohash.h, common/hmac.h); with an OpenSSL build they track
 * their state in CurrentResourceOwner, so verification runs inside the
 * request's transaction.
 *
 * Any region is accepted (the region only enters the key derivation), as
 * DynamoDB Local accepts any.  Presigned (query-string) signatures and
 * temporary credentials (X-Amz-Security-Token) are not supported: a
 * request using them is refused with DynamoDB's error for each.
 *
 * The error texts are DynamoDB's, defined once below.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <time.h>

#include "common/cryptohash.h"
#include "common/hmac.h"
#include "common/sha2.h"
#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "utils/datetime.h"
#include "utils/timestamp.h"

#include "http/ddb_http.h"

/* DynamoDB's texts for signature errors. */
#define MSG_MISSING_TOKEN	"Request is missing Authentication Token"
#define MSG_BOTH_AUTH		"Found both 'X-Amz-Algorithm' as a query-string param and 'Authorization' as HTTP header."
#define MSG_REQUIRES_PARAM	"Authorization header requires '%s' parameter. "
#define MSG_REQUIRES_DATE	"Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. "
#define MSG_BAD_DATE		"Date must be in ISO-8601 'basic format'. Got '%s'. See http://en.wikipedia.org/wiki/ISO_8601"
#define MSG_EXPIRED			"Signature expired: %s is now earlier than %s (%s - 15 min.)"
#define MSG_NOT_YET			"Signature not yet current: %s is still later than %s (%s + 15 min.)"
#define MSG_HOST_UNSIGNED	"'Host' must be a 'SignedHeader' in the AWS Authorization."
/* ddb's, in the form of the service's text above */
#define MSG_TARGET_UNSIGNED	"'X-Amz-Target' must be a 'SignedHeader' in the AWS Authorization."
#define MSG_ALGORITHM		"Unsupported AWS 'algorithm': '%s' (only AWS4-HMAC-SHA256 for now). "
#define MSG_CREDENTIAL		"Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term, got '%s'"
#define MSG_SCOPE_REGION	"Credential should be scoped to a valid region, not '%s'. "
#define MSG_SCOPE_SERVICE	"Credential should be scoped to correct service: 'dynamodb'. "
#define MSG_SCOPE_TERM		"Credential should be scoped with a valid terminator: 'aws4_request', not '%s'. "
#define MSG_SCOPE_DATE		"Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '%s' != '%s', from '%s'."
#define MSG_UNKNOWN_KEY		"The security token included in the request is invalid."
#define MSG_BAD_SIGNATURE	"The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."

#define SIGV4_ALGORITHM		"AWS4-HMAC-SHA256"
#define SIGV4_SERVICE		"dynamodb"
#define SIGV4_TERMINATOR	"aws4_request"
#define SIGV4_MAX_SKEW_SECS	(15 * 60)

static void
set_error(DdbHttpError *err, const char *kind, char *message)
{
	err->status = 400;
	err->type = kind;
	err->message = message;
}

/*
 * The value of a request header, NULL when absent (the first one when
 * repeated).  Header names are case-insensitive.
 */
const char *
ddb_http_header(const DdbHttpRequestView *req, const char *name)
{
	for (int i = 0; i < req->nheaders; i++)
		if (pg_strcasecmp(req->hname[i], name) == 0)
			return req->hvalue[i];
	return NULL;
}

static bool
has_query_arg(const DdbHttpRequestView *req, const char *name)
{
	for (int i = 0; i < req->nargs; i++)
		if (strcmp(req->aname[i], name) == 0)
			return true;
	return false;
}

/* Parses "YYYYMMDDTHHMMSSZ" exactly; false if it is anything else. */
static bool
parse_amz_date(const char *s, struct pg_tm *tm)
{
	if (strlen(s) != 16 || s[8] != 'T' || s[15] != 'Z')
		return false;
	for (int i = 0; i < 15; i++)
		if (i != 8 && !isdigit((unsigned char) s[i]))
			return false;
	memset(tm, 0, sizeof(*tm));
	tm->tm_year = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
	tm->tm_mon = (s[4] - '0') * 10 + (s[5] - '0');
	tm->tm_mday = (s[6] - '0') * 10 + (s[7] - '0');
	tm->tm_hour = (s[9] - '0') * 10 + (s[10] - '0');
	tm->tm_min = (s[11] - '0') * 10 + (s[12] - '0');
	tm->tm_sec = (s[13] - '0') * 10 + (s[14] - '0');
	return tm->tm_mon >= 1 && tm->tm_mon <= 12 && tm->tm_mday >= 1 &&
		tm->tm_mday <= day_tab[isleap(tm->tm_year)][tm->tm_mon - 1] &&
		tm->tm_hour < 24 && tm->tm_min < 60 && tm->tm_sec < 60;
}

/* A timestamp in SigV4's basic format, palloc'd. */
static char *
format_amz_date(TimestampTz t)
{
	struct pg_tm tm;
	fsec_t		fsec;

	if (timestamp2tm(t, NULL, &tm, &fsec, NULL, NULL) != 0)
		elog(ERROR, "timestamp out of range");
	return psprintf("%04d%02d%02dT%02d%02d%02dZ", tm.tm_year, tm.tm_mon, tm.tm_mday,
					tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/*
 * An HTTP Date header (RFC 7231 IMF-fixdate, "Sun, 06 Nov 1994 08:49:37
 * GMT") in SigV4's basic format; NULL when it is not one.
 */
static char *
http_date_to_amz(const char *s)
{
	struct tm	t;
	const char *end;

	memset(&t, 0, sizeof(t));
	end = strptime(s, "%a, %d %b %Y %H:%M:%S GMT", &t);
	if (end == NULL || *end != '\0')
		return NULL;
	return psprintf("%04d%02d%02dT%02d%02d%02dZ", t.tm_year + 1900, t.tm_mon + 1,
					t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec);
}

/* Splits off the value of "Name=value" in an Authorization parameter list. */
static char *
auth_param(List *params, const char *name)
{
	ListCell   *lc;
	int			len = strlen(name);

	foreach(lc, params)
	{
		char	   *p = lfirst(lc);

		if (strncmp(p, name, len) == 0 && p[len] == '=' && p[len + 1] != '\0')
			return p + len + 1;
	}
	return NULL;
}

/*
 * Checks the Authorization header and the request's date in DynamoDB's
 * order, filling *sig.  Needs no secret and touches no table.
 */
bool
ddb_sigv4_parse(const DdbHttpRequestView *req, TimestampTz now, DdbSigV4 *sig,
				DdbHttpError *err)
{
	const char *auth = ddb_http_header(req, "Authorization");
	const char *xdate;
	char	   *copy;
	char	   *algorithm;
	char	   *rest;
	char	   *tok;
	char	   *save;
	char	   *credential;
	List	   *params = NIL;
	StringInfoData msg;
	struct pg_tm tm;
	TimestampTz reqtime;
	char	   *parts[6];
	int			nparts;
	char	   *scope;

	memset(sig, 0, sizeof(*sig));

	if (auth && has_query_arg(req, "X-Amz-Algorithm"))
	{
		set_error(err, DDB_HTTP_CORAL "InvalidSignatureException", pstrdup(MSG_BOTH_AUTH));
		return false;
	}
	while (auth && isspace((unsigned char) *auth))
		auth++;
	if (auth == NULL || strncmp(auth, "AWS4-", 5) != 0)
	{
		set_error(err, DDB_HTTP_CORAL "MissingAuthenticationTokenException",
				  pstrdup(MSG_MISSING_TOKEN));
		return false;
	}

	/* "<algorithm> Name=value, Name=value, ..." (commas or spaces between) */
	copy = pstrdup(auth);
	algorithm = copy;
	rest = strchr(copy, ' ');
	if (rest)
		*rest++ = '\0';
	for (tok = rest ? strtok_r(rest, ", ", &save) : NULL; tok; tok = strtok_r(NULL, ", ", &save))
		params = lappend(params, tok);

	initStringInfo(&msg);
	credential = auth_param(params, "Credential");
	sig->signature = auth_param(params, "Signature");
	sig->signed_headers = auth_param(params, "SignedHeaders");
	if (!credential)
		appendStringInfo(&msg, MSG_REQUIRES_PARAM, "Credential");
	if (!sig->signature)
		appendStringInfo(&msg, MSG_REQUIRES_PARAM, "Signature");
	if (!sig->signed_headers)
		appendStringInfo(&msg, MSG_REQUIRES_PARAM, "SignedHeaders");
	xdate = ddb_http_header(req, "X-Amz-Date");
	if (!xdate && !ddb_http_header(req, "Date"))
		appendStringInfoString(&msg, MSG_REQUIRES_DATE);
	if (msg.len > 0)
	{
		appendStringInfo(&msg, "Authorization=%s", auth);
		set_error(err, DDB_HTTP_CORAL "IncompleteSignatureException", msg.data);
		return false;
	}

	/* The request's time, and DynamoDB's 15 minutes of allowed skew. */
	if (xdate)
		sig->amz_date = pstrdup(xdate);
	else
	{
		sig->amz_date = http_date_to_amz(ddb_http_header(req, "Date"));
		if (sig->amz_date == NULL)
			sig->amz_date = pstrdup(ddb_http_header(req, "Date"));
	}
	if (!parse_amz_date(sig->amz_date, &tm) || tm2timestamp(&tm, 0, NULL, &reqtime) != 0)
	{
		set_error(err, DDB_HTTP_CORAL "IncompleteSignatureException",
				  psprintf(MSG_BAD_DATE, sig->amz_date));
		return false;
	}
	if (reqtime < now - (TimestampTz) SIGV4_MAX_SKEW_SECS * USECS_PER_SEC)
	{
		set_error(err, DDB_HTTP_CORAL "InvalidSignatureException",
				  psprintf(MSG_EXPIRED, sig->amz_date,
						   format_amz_date(now - (TimestampTz) SIGV4_MAX_SKEW_SECS * USECS_PER_SEC),
						   format_amz_date(now)));
		return false;
	}
	if (reqtime > now + (TimestampTz) SIGV4_MAX_SKEW_SECS * USECS_PER_SEC)
	{
		set_error(err, DDB_HTTP_CORAL "InvalidSignatureException",
				  psprintf(MSG_NOT_YET, sig->amz_date,
						   format_amz_date(now + (TimestampTz) SIGV4_MAX_SKEW_SECS * USECS_PER_SEC),
						   format_amz_date(now)));
		return false;
	}

	/*
	 * Host must be signed, and so must X-Amz-Target, which names the
	 * operation (SigV4 signs the x-amz-* headers a request carries; every
	 * SDK signs it): otherwise a captured GetItem could be replayed as the
	 * DeleteItem of the same key.
	 */
	{
		bool		host = false;
		bool		target = false;
		char	   *sh = pstrdup(sig->signed_headers);

		for (tok = strtok_r(sh, ";", &save); tok; tok = strtok_r(NULL, ";", &save))
		{
			if (pg_strcasecmp(tok, "host") == 0)
				host = true;
			if (pg_strcasecmp(tok, "x-amz-target") == 0)
				target = true;
		}
		if (!host || !target)
		{
			set_error(err, DDB_HTTP_CORAL "InvalidSignatureException",
					  pstrdup(!host ? MSG_HOST_UNSIGNED : MSG_TARGET_UNSIGNED));
			return false;
		}
	}

	if (strcmp(algorithm, SIGV4_ALGORITHM) != 0)
	{
		set_error(err, DDB_HTTP_CORAL "IncompleteSignatureException",
				  psprintf(MSG_ALGORITHM, algorithm));
		return false;
	}

	/* Credential: keyid/date/region/service/terminator (trailing '/'s ignored) */
	scope = pstrdup(credential);
	while (strlen(scope) > 0 && scope[strlen(scope) - 1] == '/')
		scope[strlen(scope) - 1] = '\0';
	nparts = 0;
	{
		char	   *p = scope;

		for (;;)
		{
			char	   *slash = strchr(p, '/');

			if (nparts < 6)
				parts[nparts] = p;
			nparts++;
			if (!slash)
				break;
			*slash = '\0';
			p = slash + 1;
		}
	}
	if (nparts != 5)
	{
		set_error(err, DDB_HTTP_CORAL "IncompleteSignatureException",
				  psprintf(MSG_CREDENTIAL, credential));
		return false;
	}
	sig->access_key_id = parts[0];
	sig->date = parts[1];
	sig->region = parts[2];
	sig->service = parts[3];

	resetStringInfo(&msg);
	if (sig->region[0] == '\0')
		appendStringInfo(&msg, MSG_SCOPE_REGION, sig->region);
	if (strcmp(sig->service, SIGV4_SERVICE) != 0)
		appendStringInfoString(&msg, MSG_SCOPE_SERVICE);
	if (strcmp(parts[4], SIGV4_TERMINATOR) != 0)
		appendStringInfo(&msg, MSG_SCOPE_TERM, parts[4]);
	if (strncmp(sig->date, sig->amz_date, 8) != 0 || strlen(sig->date) != 8)
	{
		char		ymd[9];

		memcpy(ymd, sig->amz_date, 8);
		ymd[8] = '\0';
		appendStringInfo(&msg, MSG_SCOPE_DATE, sig->date, ymd, sig->amz_date);
	}
	if (msg.len > 0)
	{
		set_error(err, DDB_HTTP_CORAL "InvalidSignatureException", msg.data);
		return false;
	}
	return true;
}

/* The error for an access key id that names no key. */
void
ddb_sigv4_unknown_key(DdbHttpError *err)
{
	set_error(err, DDB_HTTP_CORAL "UnrecognizedClientException", pstrdup(MSG_UNKNOWN_KEY));
}

/* --- canonical request ------------------------------------------------- */

/* RFC 3986 percent-encoding as SigV4 wants it: unreserved kept, %XX upper. */
static void
uri_encode(StringInfo buf, const char *s, bool keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++)
	{
		unsigned char c = (unsigned char) *s;

		if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ||
			(keep_slash && c == '/'))
			appendStringInfoChar(buf, (char) c);
		else
		{
			appendStringInfoChar(buf, '%');
			appendStringInfoChar(buf, hex[c >> 4]);
			appendStringInfoChar(buf, hex[c & 15]);
		}
	}
}

static int
cmp_cstring(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/*
 * A header value as SigV4 canonicalizes it: surrounding blanks removed,
 * runs of blanks collapsed to one space.
 */
static void
append_trimmed(StringInfo buf, const char *v)
{
	bool		space = false;

	while (*v == ' ' || *v == '\t')
		v++;
	for (; *v; v++)
	{
		if (*v == ' ' || *v == '\t')
			space = true;
		else
		{
			if (space)
				appendStringInfoChar(buf, ' ');
			space = false;
			appendStringInfoChar(buf, *v);
		}
	}
}

static void
hex_encode_lower(const uint8 *in, int len, char *out)
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0; i < len; i++)
	{
		out[2 * i] = hex[in[i] >> 4];
		out[2 * i + 1] = hex[in[i] & 15];
	}
	out[2 * len] = '\0';
}

static void
sha256_hex(const char *data, size_t len, char *out)
{
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);
	uint8		digest[PG_SHA256_DIGEST_LENGTH];

	if (pg_cryptohash_init(ctx) < 0 ||
		pg_cryptohash_update(ctx, (const uint8 *) data, len) < 0 ||
		pg_cryptohash_final(ctx, digest, sizeof(digest)) < 0)
		elog(ERROR, "could not compute SHA-256: %s", pg_cryptohash_error(ctx));
	pg_cryptohash_free(ctx);
	hex_encode_lower(digest, sizeof(digest), out);
}

static void
hmac_sha256(const uint8 *key, size_t keylen, const char *data, uint8 *out)
{
	pg_hmac_ctx *ctx = pg_hmac_create(PG_SHA256);

	if (ctx == NULL ||
		pg_hmac_init(ctx, key, keylen) < 0 ||
		pg_hmac_update(ctx, (const uint8 *) data, strlen(data)) < 0 ||
		pg_hmac_final(ctx, out, PG_SHA256_DIGEST_LENGTH) < 0)
		elog(ERROR, "could not compute HMAC-SHA256");
	pg_hmac_free(ctx);
}

/* The canonical request of SigV4 ("Task 1"), palloc'd. */
static char *
canonical_request(const DdbHttpRequestView *req, const DdbSigV4 *sig)
{
	StringInfoData buf;
	StringInfoData once;
	char		bodyhash[2 * PG_SHA256_DIGEST_LENGTH + 1];
	char	   *sh;
	char	   *tok;
	char	   *save;

	initStringInfo(&buf);
	appendStringInfo(&buf, "%s\n", req->method);

	/*
	 * The path: the client encodes it once to send it and once more to
	 * sign it (every service but S3).  We have it decoded.
	 */
	initStringInfo(&once);
	uri_encode(&once, req->path[0] ? req->path : "/", true);
	uri_encode(&buf, once.data, true);
	appendStringInfoChar(&buf, '\n');

	/* The query: encoded name=value pairs in byte order, joined by '&'. */
	if (req->nargs > 0)
	{
		char	  **pairs = palloc(sizeof(char *) * req->nargs);

		for (int i = 0; i < req->nargs; i++)
		{
			StringInfoData p;

			initStringInfo(&p);
			uri_encode(&p, req->aname[i], false);
			appendStringInfoChar(&p, '=');
			uri_encode(&p, req->avalue[i] ? req->avalue[i] : "", false);
			pairs[i] = p.data;
		}
		qsort(pairs, req->nargs, sizeof(char *), cmp_cstring);
		for (int i = 0; i < req->nargs; i++)
			appendStringInfo(&buf, "%s%s", i > 0 ? "&" : "", pairs[i]);
	}
	appendStringInfoChar(&buf, '\n');

	/* The signed headers, in the order SignedHeaders lists them. */
	sh = pstrdup(sig->signed_headers);
	for (tok = strtok_r(sh, ";", &save); tok; tok = strtok_r(NULL, ";", &save))
	{
		bool		first = true;

		for (const char *c = tok; *c; c++)
			appendStringInfoChar(&buf, pg_tolower((unsigned char) *c));
		appendStringInfoChar(&buf, ':');
		for (int i = 0; i < req->nheaders; i++)
		{
			if (pg_strcasecmp(req->hname[i], tok) != 0)
				continue;
			if (!first)
				appendStringInfoChar(&buf, ',');
			append_trimmed(&buf, req->hvalue[i]);
			first = false;
		}
		appendStringInfoChar(&buf, '\n');
	}
	appendStringInfo(&buf, "\n%s\n", sig->signed_headers);

	sha256_hex(req->body ? req->body : "", req->bodylen, bodyhash);
	appendStringInfoString(&buf, bodyhash);
	return buf.data;
}

/*
 * Recomputes the request's signature with the key's secret; false (and
 * DynamoDB's InvalidSignatureException) when it differs from the one sent.
 */
bool
ddb_sigv4_verify(const DdbHttpRequestView *req, const DdbSigV4 *sig, const char *secret,
				 DdbHttpError *err)
{
	char	   *creq = canonical_request(req, sig);
	char		creq_hash[2 * PG_SHA256_DIGEST_LENGTH + 1];
	char	   *sts;
	char	   *kinit;
	uint8		k[PG_SHA256_DIGEST_LENGTH];
	uint8		mac[PG_SHA256_DIGEST_LENGTH];
	char		expected[2 * PG_SHA256_DIGEST_LENGTH + 1];
	int			diff = 0;

	sha256_hex(creq, strlen(creq), creq_hash);
	sts = psprintf("%s\n%s\n%s/%s/%s/%s\n%s", SIGV4_ALGORITHM, sig->amz_date,
				   sig->date, sig->region, sig->service, SIGV4_TERMINATOR, creq_hash);

	/* kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" secret, date), region), service), term) */
	kinit = psprintf("AWS4%s", secret);
	hmac_sha256((const uint8 *) kinit, strlen(kinit), sig->date, k);
	hmac_sha256(k, sizeof(k), sig->region, k);
	hmac_sha256(k, sizeof(k), sig->service, k);
	hmac_sha256(k, sizeof(k), SIGV4_TERMINATOR, k);
	hmac_sha256(k, sizeof(k), sts, mac);
	hex_encode_lower(mac, sizeof(mac), expected);
	explicit_bzero(kinit, strlen(kinit));
	explicit_bzero(k, sizeof(k));

	/* constant time: the comparison must not tell how much of it matched */
	if (strlen(sig->signature) != strlen(expected))
		diff = 1;
	else
		for (int i = 0; expected[i]; i++)
			diff |= expected[i] ^ pg_tolower((unsigned char) sig->signature[i]);
	if (diff != 0)
	{
		/* DynamoDB shows what it signed, to help debug a client. */
		set_error(err, DDB_HTTP_CORAL "InvalidSignatureException",
				  psprintf("%s\n\nThe Canonical String for this request should have been\n'%s'\n\n"
						   "The String-to-Sign should have been\n'%s'\n",
						   MSG_BAD_SIGNATURE, creq, sts));
		return false;
	}

	/* Temporary credentials would need STS; DynamoDB's answer to a bad token. */
	if (ddb_http_header(req, "X-Amz-Security-Token"))
	{
		ddb_sigv4_unknown_key(err);
		return false;
	}
	return true;
}
