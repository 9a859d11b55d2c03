/*-------------------------------------------------------------------------
 *
 * ddb_errors.h
 *	  DynamoDB's error kinds, their SQLSTATEs, and DynamoDB's message texts.
 *
 * Every DynamoDB error kind that ddb raises has its own SQLSTATE in class
 * DB, listed here once; README.md "Errors" repeats this table and the HTTP
 * endpoint maps each SQLSTATE back to DynamoDB's __type and HTTP status.
 * An error's primary message is "<Kind>: <DynamoDB's exact text>"; a
 * PostgreSQL-style DETAIL or HINT may follow.
 *
 * DynamoDB's message texts are fixed sentences that client code and
 * libraries match on.  Each one ddb uses is defined below, once, and raised
 * through these names, never retyped at a call site.
 *
 *-------------------------------------------------------------------------
 */
#ifndef DDB_ERRORS_H
#define DDB_ERRORS_H

/* Error kinds and their SQLSTATEs (class DB). */
#define DDB_ERRCODE_VALIDATION			MAKE_SQLSTATE('D','B','0','0','1')	/* ValidationException */
#define DDB_ERRCODE_CONDITIONAL_CHECK	MAKE_SQLSTATE('D','B','0','0','2')	/* ConditionalCheckFailedException */
#define DDB_ERRCODE_RESOURCE_NOT_FOUND	MAKE_SQLSTATE('D','B','0','0','3')	/* ResourceNotFoundException */
#define DDB_ERRCODE_TRANSACTION_CANCELED MAKE_SQLSTATE('D','B','0','0','4')	/* TransactionCanceledException */
#define DDB_ERRCODE_ITEM_COLLECTION_SIZE MAKE_SQLSTATE('D','B','0','0','5')	/* ItemCollectionSizeLimitExceededException */
#define DDB_ERRCODE_RESOURCE_IN_USE		MAKE_SQLSTATE('D','B','0','0','6')	/* ResourceInUseException */
#define DDB_ERRCODE_TRANSACTION_CONFLICT MAKE_SQLSTATE('D','B','0','0','7')	/* TransactionConflictException */

/* DynamoDB's message texts (exact wording, DynamoDB's own spelling). */

#endif							/* DDB_ERRORS_H */
