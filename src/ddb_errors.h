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

/*
 * Error kinds and their SQLSTATEs (class DB).  ddb_error_kind (api/
 * ddb_protocol.c) maps each back to DynamoDB's __type and HTTP status; the
 * comment names the kind and its __type namespace.  The transport's own
 * errors (authentication, unknown operation) have codes here too, so that
 * every DynamoDB error ddb can answer has exactly one SQLSTATE.
 */
#define DDB_ERRCODE_VALIDATION			MAKE_SQLSTATE('D','B','0','0','1')	/* ValidationException (coral.validate) */
#define DDB_ERRCODE_CONDITIONAL_CHECK	MAKE_SQLSTATE('D','B','0','0','2')	/* ConditionalCheckFailedException */
#define DDB_ERRCODE_RESOURCE_NOT_FOUND	MAKE_SQLSTATE('D','B','0','0','3')	/* ResourceNotFoundException */
#define DDB_ERRCODE_TRANSACTION_CANCELED MAKE_SQLSTATE('D','B','0','0','4')	/* TransactionCanceledException */
#define DDB_ERRCODE_ITEM_COLLECTION_SIZE MAKE_SQLSTATE('D','B','0','0','5')	/* ItemCollectionSizeLimitExceededException */
#define DDB_ERRCODE_RESOURCE_IN_USE		MAKE_SQLSTATE('D','B','0','0','6')	/* ResourceInUseException */
#define DDB_ERRCODE_TRANSACTION_CONFLICT MAKE_SQLSTATE('D','B','0','0','7')	/* TransactionConflictException */
#define DDB_ERRCODE_LIMIT_EXCEEDED		MAKE_SQLSTATE('D','B','0','0','8')	/* LimitExceededException */
#define DDB_ERRCODE_SERIALIZATION		MAKE_SQLSTATE('D','B','0','0','9')	/* SerializationException (coral.service) */
#define DDB_ERRCODE_UNKNOWN_OPERATION	MAKE_SQLSTATE('D','B','0','1','0')	/* UnknownOperationException (coral.service) */
#define DDB_ERRCODE_ACCESS_DENIED		MAKE_SQLSTATE('D','B','0','1','1')	/* AccessDeniedException (coral.service) */
#define DDB_ERRCODE_UNRECOGNIZED_CLIENT	MAKE_SQLSTATE('D','B','0','1','2')	/* UnrecognizedClientException (coral.service) */
#define DDB_ERRCODE_INVALID_SIGNATURE	MAKE_SQLSTATE('D','B','0','1','3')	/* InvalidSignatureException (coral.service) */
#define DDB_ERRCODE_MISSING_AUTH_TOKEN	MAKE_SQLSTATE('D','B','0','1','4')	/* MissingAuthenticationTokenException (coral.service) */
#define DDB_ERRCODE_INCOMPLETE_SIGNATURE MAKE_SQLSTATE('D','B','0','1','5')	/* IncompleteSignatureException (coral.service) */
#define DDB_ERRCODE_IDEMPOTENT_MISMATCH	MAKE_SQLSTATE('D','B','0','1','6')	/* IdempotentParameterMismatchException */
#define DDB_ERRCODE_TRANSACTION_IN_PROGRESS MAKE_SQLSTATE('D','B','0','1','7')	/* TransactionInProgressException */
#define DDB_ERRCODE_REQUEST_LIMIT		MAKE_SQLSTATE('D','B','0','1','8')	/* RequestLimitExceeded */
#define DDB_ERRCODE_INTERNAL			MAKE_SQLSTATE('D','B','0','1','9')	/* InternalServerError (HTTP 500) */

/*
 * Raise a DynamoDB error: ddb_raise(CODE, "Kind", "message format", args).
 * The primary message is "Kind: message"; the kind must be the one CODE
 * stands for.
 */
#define ddb_raise(code, kind, ...) \
	ereport(ERROR, (errcode(code), errmsg(kind ": " __VA_ARGS__)))

/* DynamoDB's message texts (exact wording, DynamoDB's own spelling). */

/* api: requests and tables */
#define DDB_MSG_RESOURCE_NOT_FOUND		"Requested resource not found"
#define DDB_MSG_TABLE_NOT_FOUND			"Requested resource not found: Table: %s not found"
#define DDB_MSG_TABLE_IN_USE			"Table already exists: %s"
#define DDB_MSG_CONDITIONAL_FAILED		"The conditional request failed"
#define DDB_MSG_KEY_SCHEMA_MISMATCH		"The provided key element does not match the schema"
#define DDB_MSG_REQUIRED_PARAMETER		"The parameter '%s' is required but was not present in the request"
#define DDB_MSG_VALIDATION_ERRORS		"%d validation error%s detected: %s"
#define DDB_MSG_CONSTRAINT				"Value %s at '%s' failed to satisfy constraint: %s"
#define DDB_MSG_EAN_WITHOUT_EXPRESSIONS	"ExpressionAttributeNames can only be specified when using expressions"
#define DDB_MSG_EAV_WITHOUT_EXPRESSIONS	"ExpressionAttributeValues can only be specified when using expressions: %s"
#define DDB_MSG_MIXED_PARAMETERS		"Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {%s} Expression parameters: {%s}"
#define DDB_MSG_RETURN_VALUES_PUT		"ReturnValues can only be ALL_OLD or NONE"
#define DDB_MSG_UNKNOWN_OPERATION		"An unknown operation was requested."
#define DDB_MSG_EMPTY_ATTRIBUTE_VALUE	"Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"
#define DDB_MSG_MULTI_TYPE_ATTRIBUTE_VALUE "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes"
#define DDB_MSG_NULL_MUST_BE_TRUE		"One or more parameter values were invalid: Null attribute value types must have the value of true"
#define DDB_MSG_KEY_EMPTY_VALUE			"One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty %s value. Key: %s"
#define DDB_MSG_KEY_TYPE_MISMATCH		"One or more parameter values were invalid: Type mismatch for key %s expected: %s actual: %s"
#define DDB_MSG_KEY_MISSING				"One or more parameter values were invalid: Missing the key %s in the item"
#define DDB_MSG_INDEX_NOT_FOUND			"The table does not have the specified index: %s"
#define DDB_MSG_LIMIT_GSI_COUNT			"One or more parameter values were invalid: GlobalSecondaryIndex count exceeds the per-table limit of %d"
#define DDB_MSG_INTERNAL				"Internal server error"

#endif							/* DDB_ERRORS_H */
