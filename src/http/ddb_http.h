/*-------------------------------------------------------------------------
 *
 * ddb_http.h
 *	  The DynamoDB HTTP endpoint: what the files of src/http share.
 *
 * src/http is the top layer: it transports DynamoDB's JSON 1.0 protocol
 * between HTTP clients and ddb_api_execute (src/api/ddb_protocol.h) and
 * knows nothing of tables or items.
 *
 *	ddb_http.c			GUCs, listening sockets, the background workers, the
 *						libmicrohttpd event loop, one transaction per request,
 *						errors turned into DynamoDB's error responses
 *	ddb_http_sigv4.c	AWS Signature Version 4 verification
 *	ddb_http_keys.c		access keys: SQL functions and the workers' lookup
 *
 *-------------------------------------------------------------------------
 */
#ifndef DDB_HTTP_H
#define DDB_HTTP_H

#include "datatype/timestamp.h"

/*
 * A transport-level error: DynamoDB's answer to a request that never
 * reaches ddb_api_execute (bad signature, unknown operation, bad JSON).
 * 'type' is the whole __type ("com.amazon.coral.service#..."); 'message'
 * may be NULL (DynamoDB sends none for some errors).
 */
typedef struct DdbHttpError
{
	int			status;
	const char *type;
	char	   *message;
} DdbHttpError;

/* The __type namespace of DynamoDB's transport-level errors. */
#define DDB_HTTP_CORAL			"com.amazon.coral.service#"

/*
 * The parts of an HTTP request SigV4 signs, independent of the HTTP
 * library.  Header names are as received (any case); 'path' is the
 * decoded request path; query arguments are decoded (value NULL when the
 * argument had no '=').
 */
typedef struct DdbHttpRequestView
{
	const char *method;
	const char *path;
	int			nheaders;
	const char **hname;
	const char **hvalue;
	int			nargs;
	const char **aname;
	const char **avalue;
	const char *body;
	size_t		bodylen;
} DdbHttpRequestView;

/* A parsed Authorization header (ddb_http_sigv4.c). */
typedef struct DdbSigV4
{
	char	   *access_key_id;
	char	   *date;			/* credential scope date, YYYYMMDD */
	char	   *region;
	char	   *service;
	char	   *amz_date;		/* the request's time, YYYYMMDDTHHMMSSZ */
	char	   *signed_headers; /* as sent: "content-type;host;..." */
	char	   *signature;		/* 64 lowercase hex digits */
} DdbSigV4;

/* ddb_http_sigv4.c */
extern bool ddb_sigv4_parse(const DdbHttpRequestView *req, TimestampTz now,
							DdbSigV4 *sig, DdbHttpError *err);
extern bool ddb_sigv4_verify(const DdbHttpRequestView *req, const DdbSigV4 *sig,
							 const char *secret, DdbHttpError *err);
extern void ddb_sigv4_unknown_key(DdbHttpError *err);
extern const char *ddb_http_header(const DdbHttpRequestView *req, const char *name);

/* ddb_http_keys.c */
extern bool ddb_http_key_lookup(const char *access_key_id, char **secret, Oid *role);

/* ddb_http.c */
extern void ddb_http_init(void);
extern PGDLLEXPORT void ddb_http_worker_main(Datum arg);

#endif							/* DDB_HTTP_H */
