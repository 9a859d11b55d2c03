/*-------------------------------------------------------------------------
 *
 * ddb_protocol.h
 *	  The DynamoDB protocol as one C entry point, shared by the SQL function
 *	  ddb_api(operation, request) and the HTTP endpoint (src/http).
 *
 * The HTTP layer only transports: it authenticates, starts a transaction,
 * calls ddb_api_execute, and turns an error into DynamoDB's error response
 * with ddb_error_kind.  Every rule of every operation lives below this
 * interface, shared with the SQL functions.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DDB_PROTOCOL_H
#define DDB_PROTOCOL_H

#include "lib/stringinfo.h"

/*
 * Run one DynamoDB operation as the current user, in the caller's
 * transaction.  'operation' is the action name without its service prefix
 * ("PutItem", "Query", "ListStreams"); 'body' is the request body, JSON
 * text of 'bodylen' bytes (not necessarily NUL-terminated).  Returns the
 * response body as palloc'd JSON text and its length in *resplen.
 *
 * Errors are raised with ereport(ERROR): a DB-class SQLSTATE (ddb_errors.h)
 * and the message "<ErrorName>: <DynamoDB's message>".  When a DynamoDB
 * error carries more than its message (ConditionalCheckFailedException's
 * Item, with ReturnValuesOnConditionCheckFailure ALL_OLD), the error's
 * DETAIL is a JSON object whose members belong in the error response next
 * to __type and message; any other DETAIL is for humans and starts with a
 * letter, never '{'.
 */
extern char *ddb_api_execute(const char *operation, const char *body, int bodylen,
							 int *resplen);

/*
 * The address a request over HTTP was sent to (its Host header), set by
 * the endpoint around ddb_api_execute and NULL otherwise: what
 * DescribeEndpoints answers, so that a client with endpoint discovery on
 * stays with this server.
 */
extern const char *ddb_request_address;

/*
 * Set by an HTTP worker before it connects: ddb.schema, ddb.region and
 * ddb.account_id then come from the server's configuration only, not from
 * ALTER DATABASE or ALTER ROLE (ddb_table.c).
 */
extern bool ddb_settings_server_only;

/*
 * Forget what the caches hold about dropped tables; only between requests,
 * in a transaction (ddb_table.c).  Returns the entries removed.
 */
extern int	ddb_forget_dropped_tables(void);

/*
 * The DynamoDB error an SQLSTATE stands for: its name (the part after '#'
 * in the response's __type, e.g. "ValidationException"), its __type
 * namespace prefix in *type_prefix, and its HTTP status in *http_status.
 * NULL for an SQLSTATE that is no DynamoDB error: the endpoint answers
 * 500 InternalServerError and never passes PostgreSQL's message on.
 */
extern const char *ddb_error_kind(int sqlerrcode, const char **type_prefix,
								  int *http_status);

/*
 * The message a client gets for an error of a DynamoDB kind that PostgreSQL
 * itself raised (a privilege check, a serialization failure, a deadlock):
 * DynamoDB's words, since PostgreSQL's name the server's objects ("permission
 * denied for schema public") -- or NULL when 'message' is ddb's own and goes
 * out as it is.  'role' is the request's role, 'operation' its action.
 */
extern const char *ddb_error_client_message(int sqlerrcode, const char *message,
											const char *role, const char *operation);

/*
 * A JSON object written member by member: ddb_resp_begin opens it,
 * ddb_resp_key starts a member (its value is then appended to buf),
 * ddb_resp_end closes it and returns its text and length.  The operations
 * write their responses with it, and PartiQL the requests of the
 * operations it runs.
 */
typedef struct DdbResponse
{
	StringInfoData buf;
	bool		first;			/* no member yet */
} DdbResponse;

extern void ddb_resp_begin(DdbResponse *r);
extern void ddb_resp_key(DdbResponse *r, const char *key);
extern char *ddb_resp_end(DdbResponse *r, int *len);

#endif							/* DDB_PROTOCOL_H */
