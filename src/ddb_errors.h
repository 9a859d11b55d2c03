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
#define DDB_ERRCODE_EXPIRED_ITERATOR	MAKE_SQLSTATE('D','B','0','2','0')	/* ExpiredIteratorException (Streams) */
#define DDB_ERRCODE_TRIMMED_DATA		MAKE_SQLSTATE('D','B','0','2','1')	/* TrimmedDataAccessException (Streams) */
#define DDB_ERRCODE_TABLE_NOT_FOUND		MAKE_SQLSTATE('D','B','0','2','2')	/* TableNotFoundException (backups) */
#define DDB_ERRCODE_DUPLICATE_ITEM		MAKE_SQLSTATE('D','B','0','2','3')	/* DuplicateItemException (PartiQL INSERT) */

/*
 * Raise a DynamoDB error: ddb_raise(CODE, "Kind", "message format", args).
 * The primary message is "Kind: message"; the kind must be the one CODE
 * stands for.
 */
#define ddb_raise(code, kind, ...) \
	ereport(ERROR, (errcode(code), errmsg(kind ": " __VA_ARGS__)))

/* DynamoDB's message texts (exact wording, DynamoDB's own spelling). */

/* ------------------------------------------------------------------------
 * Expression language and item model (src/model)
 *
 * Expression errors read "Invalid <Parameter>: <text>" (DDB_MSG_EXPR_INVALID)
 * except the key-condition messages, which DynamoDB raises bare.  Texts
 * ending in ";" are DynamoDB's with no details after them.
 * ------------------------------------------------------------------------
 */
#define DDB_MSG_EXPR_INVALID			"Invalid %s: %s"
#define DDB_MSG_EXPR_SYNTAX				"Syntax error; token: \"%s\", near: \"%s\""
#define DDB_MSG_EXPR_EMPTY				"The expression can not be empty;"
#define DDB_MSG_EXPR_SIZE				"Expression size has exceeded the maximum allowed size;"
#define DDB_MSG_EXPR_SIZE_DETAIL		"Expression size has exceeded the maximum allowed size; expression size: %d"
#define DDB_MSG_EXPR_REDUNDANT_PARENS	"The expression has redundant parentheses;"
#define DDB_MSG_EXPR_RESERVED			"Attribute name is a reserved keyword; reserved keyword: %s"
#define DDB_MSG_EXPR_LIST_INDEX			"List index is not within the allowable range; index: %s"
#define DDB_MSG_EXPR_FUNCTION_NAME		"Invalid function name; function: %s"
#define DDB_MSG_EXPR_NOT_IN_CONDITION	"The function is not allowed in a condition expression; function: %s"
#define DDB_MSG_EXPR_NOT_IN_UPDATE		"The function is not allowed in an update expression; function: %s"
#define DDB_MSG_EXPR_FUNCTION_MISUSED	"The function is not allowed to be used this way in an expression; function: %s"
#define DDB_MSG_EXPR_SECTION_TWICE		"The \"%s\" section can only be used once in an update expression;"
#define DDB_MSG_EXPR_PATH_TOO_DEEP		"The document path has too many nesting levels; nesting levels: %d"
#define DDB_MSG_EXPR_PATHS_CONFLICT		"Two document paths conflict with each other; must remove or rewrite one of these paths; path one: %s, path two: %s"
#define DDB_MSG_EXPR_PATHS_OVERLAP		"Two document paths overlap with each other; must remove or rewrite one of these paths; path one: %s, path two: %s"
#define DDB_MSG_EXPR_NAME_UNDEFINED		"An expression attribute name used in the document path is not defined; attribute name: %s"
#define DDB_MSG_EXPR_VALUE_UNDEFINED	"An expression attribute value used in expression is not defined; attribute value: %s"
#define DDB_MSG_EXPR_OPERAND_COUNT		"Incorrect number of operands for operator or function; operator or function: %s, number of operands: %d"
#define DDB_MSG_EXPR_OPERAND_TYPE		"Incorrect operand type for operator or function; operator or function: %s, operand type: %s"
#define DDB_MSG_EXPR_ACTION_OPERAND_TYPE "Incorrect operand type for operator or function; operator: %s, operand type: %s, typeSet: %s"
#define DDB_MSG_EXPR_PATH_REQUIRED		"Operator or function requires a document path; operator or function: %s"
#define DDB_MSG_EXPR_NOT_DISTINCT		"The first operand must be distinct from the remaining operands for this operator or function; operator: %s, first operand: %s"
#define DDB_MSG_EXPR_TYPE_NAME			"Invalid attribute type name found; type: %s, valid types: {B,NULL,SS,BOOL,L,BS,N,NS,S,M}"
#define DDB_MSG_EXPR_ANY_TYPE			"{NS,SS,L,BS,N,M,B,BOOL,NULL,S}"	/* a path's possible types */
#define DDB_MSG_EXPR_BETWEEN_TYPES		"The BETWEEN operator requires same data type for lower and upper bounds; lower bound operand: AttributeValue: %s, upper bound operand: AttributeValue: %s"
#define DDB_MSG_EXPR_BETWEEN_ORDER		"The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: %s, upper bound operand: AttributeValue: %s"
#define DDB_MSG_EXPR_IN_TOO_MANY		"The IN operator is provided with too many operands; number of operands: %d"
#define DDB_MSG_EXPR_TOO_MANY_OPERATORS	"The expression contains too many operators; operator count: %d"

/* KeyConditionExpression, reduced to key conditions (raised bare) */
#define DDB_MSG_KEY_INVALID_OPERATOR	"Invalid operator used in KeyConditionExpression: %s"
#define DDB_MSG_KEY_INVALID_CONDITION	"Invalid condition in KeyConditionExpression: %s"
#define DDB_MSG_KEY_MULTIPLE_NAMES		"Multiple attribute names used in one condition"
#define DDB_MSG_KEY_NO_ATTRIBUTE		"No key attribute specified"
#define DDB_MSG_KEY_FIRST_OPERAND		"%s operator must have the key attribute as its first operand"
#define DDB_MSG_KEY_NESTED_OPERATION	"KeyConditionExpressions cannot contain nested operations"
#define DDB_MSG_KEY_NESTED_PATH			"KeyConditionExpressions cannot have conditions on nested attributes"
#define DDB_MSG_KEY_DUPLICATE			"KeyConditionExpressions must only contain one condition per key"
#define DDB_MSG_KEY_CONDITION_COUNT		"Conditions can be of length 1 or 2 only"
#define DDB_MSG_KEY_NOT_SUPPORTED		"Query key condition not supported"
#define DDB_MSG_KEY_NOT_INDEXABLE		"Attempted conditional constraint is not an indexable operation"
#define DDB_MSG_KEY_MISSED_ELEMENT		"Query condition missed key schema element: %s"

/* ExpressionAttributeNames / ExpressionAttributeValues */
#define DDB_MSG_NAMES_EMPTY				"ExpressionAttributeNames must not be empty"
#define DDB_MSG_VALUES_EMPTY			"ExpressionAttributeValues must not be empty"
#define DDB_MSG_NAMES_INVALID_KEY		"ExpressionAttributeNames contains invalid key: Syntax error; key: \"%s\""
#define DDB_MSG_VALUES_INVALID_KEY		"ExpressionAttributeValues contains invalid key: Syntax error; key: \"%s\""
#define DDB_MSG_NAMES_KEY_TOO_LONG		"ExpressionAttributeNames contains invalid key: The expression attribute map contains a key that is too long; size of key: %d"
#define DDB_MSG_VALUES_KEY_TOO_LONG		"ExpressionAttributeValues contains invalid key: The expression attribute map contains a key that is too long;"
#define DDB_MSG_NAMES_EMPTY_NAME		"ExpressionAttributeNames contains invalid value: Empty attribute name for key %s"
#define DDB_MSG_VALUES_INVALID_VALUE	"ExpressionAttributeValues contains invalid value: %s for key %s"
#define DDB_MSG_NAMES_UNUSED			"Value provided in ExpressionAttributeNames unused in expressions: keys: {%s}"
#define DDB_MSG_VALUES_UNUSED			"Value provided in ExpressionAttributeValues unused in expressions: keys: {%s}"

/* UpdateExpression evaluation */
#define DDB_MSG_UPDATE_MISSING_ATTRIBUTE "The provided expression refers to an attribute that does not exist in the item"
#define DDB_MSG_UPDATE_OPERAND_TYPE		"An operand in the update expression has an incorrect data type"
#define DDB_MSG_UPDATE_TYPE_MISMATCH	"Type mismatch for attribute to update"
#define DDB_MSG_UPDATE_INVALID_PATH		"The document path provided in the update expression is invalid for update"
#define DDB_MSG_UPDATE_KEY_ATTRIBUTE	"One or more parameter values were invalid: Cannot update attribute %s. This attribute is part of the key"
#define DDB_MSG_KEY_NOT_SCALAR			"Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: %s: %s"
#define DDB_MSG_UPDATE_INDEX_KEY_TYPE	"The update expression attempted to update the secondary index key to unsupported type"
#define DDB_MSG_UPDATE_ITEM_SIZE		"Item size to update has exceeded the maximum allowed size"

/* The item model */
#define DDB_MSG_ITEM_SIZE				"Item size has exceeded the maximum allowed size"
#define DDB_MSG_EMPTY_SS				"One or more parameter values were invalid: An string set  may not be empty"
#define DDB_MSG_EMPTY_NS				"One or more parameter values were invalid: An number set  may not be empty"
#define DDB_MSG_EMPTY_BS				"One or more parameter values were invalid: Binary sets should not be empty"
#define DDB_MSG_DUPLICATES_SS			"One or more parameter values were invalid: Input collection %s contains duplicates."
#define DDB_MSG_DUPLICATES_NS			"Input collection contains duplicates"
#define DDB_MSG_DUPLICATES_BS			"One or more parameter values were invalid: Input collection %sof type BS contains duplicates."
#define DDB_MSG_NULL_NOT_TRUE			"One or more parameter values were invalid: Null attribute value types must have the value of true"
#define DDB_MSG_NUMBER_INVALID			"The parameter cannot be converted to a numeric value"
#define DDB_MSG_NUMBER_INVALID_TEXT		"The parameter cannot be converted to a numeric value: %s"
#define DDB_MSG_NUMBER_OVERFLOW			"Number overflow. Attempting to store a number with magnitude larger than supported range"
#define DDB_MSG_NUMBER_UNDERFLOW		"Number underflow. Attempting to store a number with magnitude smaller than supported range"
#define DDB_MSG_NUMBER_PRECISION		"Attempting to store more than 38 significant digits in a Number"
#define DDB_MSG_NESTING					"Nesting Levels have exceeded supported limits"
#define DDB_MSG_NAME_TOO_LARGE			"1 validation error detected: Attribute name is too large, must be less than 65536 bytes"
#define DDB_MSG_EMPTY_ATTRIBUTE_NAME	"One or more parameter values were invalid: Empty attribute name"
/* ddb's own (DynamoDB has no item column): a plain SQL write whose item repeats a key */
#define DDB_MSG_ITEM_COLUMN_KEY			"One or more parameter values were invalid: The item column holds the key attribute %s"
#define DDB_MSG_RETURN_VALUES_ENUM		"1 validation error detected: Value '%s' at 'returnValues' failed to satisfy constraint: Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]"

/*
 * Typed AttributeValues of the wrong JSON shape: SerializationException,
 * with the texts of DynamoDB's Java deserializer (its spelling included).
 */
#define DDB_MSG_SER_VALUE_TYPE			"Unexpected value type in payload"
#define DDB_MSG_SER_FIELD_TYPE			"Unexpected field type"
#define DDB_MSG_SER_START_OF_MAP		"Start of structure or map found where not expected"
#define DDB_MSG_SER_COLLECTION			"Unrecognized collection type %s"
#define DDB_MSG_SER_CONVERT				"%s cannot be converted to %s"
#define DDB_MSG_SER_BYTES				"only base-64-encoded strings are convertible to bytes"
#define DDB_MSG_SER_BASE64_LENGTH		"Base64 encoded length is expected a multiple of 4 bytes but found: %d"
#define DDB_MSG_SER_BASE64_CHAR			"Invalid last non-pad Base64 character dectected"
#define DDB_MSG_SER_BOOL_TOKEN			"Unexpected token received from parser"
#define DDB_MSG_SER_CLASS_ATTRIBUTE_VALUE "class com.amazonaws.dynamodb.v20120810.AttributeValue"

/*
 * ddb's document form (README "Items"): tagged values DynamoDB has no
 * counterpart of, so the texts are ddb's own, in DynamoDB's style.
 */
#define DDB_MSG_DOC_NOT_OBJECT			"An item must be a JSON object of attributes"
#define DDB_MSG_DOC_NUL_STRING			"The value of a \"$S\" tag must be a JSON array of strings"
#define DDB_MSG_DOC_NUL_STRING_PARTS	"The value of a \"$S\" tag must be a JSON array of at least two strings"
#define DDB_MSG_DOC_SET_NOT_ARRAY		"The value of a \"%s\" tag must be a JSON array"
#define DDB_MSG_DOC_NS_ELEMENT			"The elements of a \"$NS\" set must be JSON numbers"
#define DDB_MSG_DOC_SET_ELEMENT			"The elements of a \"%s\" set must be JSON strings"
#define DDB_MSG_DOC_B_NOT_STRING		"The value of a \"$B\" tag must be a base64 string"
#define DDB_MSG_DOC_M_NOT_OBJECT		"The value of a \"$M\" tag must be a JSON object"
#define DDB_MSG_DOC_BASE64				"Invalid base64 in a binary value: \"%.*s\""

/* ------------------------------------------------------------------------
 * The protocol layer (src/api): requests and tables
 * ------------------------------------------------------------------------
 */
#define DDB_MSG_RESOURCE_NOT_FOUND		"Requested resource not found"
#define DDB_MSG_TABLE_NOT_FOUND			"Requested resource not found: Table: %s not found"
#define DDB_MSG_TABLE_IN_USE			"Table already exists: %s"
#define DDB_MSG_CONDITIONAL_FAILED		"The conditional request failed"
/* the Developer Guide's "Error handling" table and TransactionCanceledException's reasons */
#define DDB_MSG_COLLECTION_SIZE			"Collection size exceeded"
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
#define DDB_MSG_NUL_IN_NAME				"One or more parameter values were invalid: %s must not contain U+0000"
#define DDB_MSG_NULL_ELEMENT			"One or more parameter values were invalid: a list of strings or a set holds a null element"
#define DDB_MSG_MULTI_TYPE_ATTRIBUTE_VALUE "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes"
#define DDB_MSG_NULL_MUST_BE_TRUE		DDB_MSG_NULL_NOT_TRUE
#define DDB_MSG_KEY_EMPTY_VALUE			"One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty %s value. Key: %s"
/* DynamoDB's texts as it words them: "of2048" without a space, "all range keys" for the one */
#define DDB_MSG_HASH_KEY_SIZE			"One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of%d bytes"
#define DDB_MSG_RANGE_KEY_SIZE			"One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of %d bytes"
#define DDB_MSG_KEY_TYPE_MISMATCH		"One or more parameter values were invalid: Type mismatch for key %s expected: %s actual: %s"
#define DDB_MSG_KEY_MISSING				"One or more parameter values were invalid: Missing the key %s in the item"
#define DDB_MSG_INDEX_NOT_FOUND			"The table does not have the specified index: %s"
#define DDB_MSG_LIMIT_GSI_COUNT			"One or more parameter values were invalid: GlobalSecondaryIndex count exceeds the per-table limit of %d"
#define DDB_MSG_INTERNAL				"Internal server error"

/* DynamoDB Streams (src/api/ddb_stream.c) */
#define DDB_MSG_STREAM_TRIMMED			"The data you are trying to access has been trimmed."
#define DDB_MSG_STREAM_EXPIRED_ITERATOR	"The provided iterator exceeds the maximum age allowed."
#define DDB_MSG_STREAM_ALREADY_ENABLED	"Table already has an enabled stream: TableName: %s"
#define DDB_MSG_STREAM_NOT_ENABLED		"Table has no stream to disable: TableName: %s"
#define DDB_MSG_STREAM_NOT_FOUND		"Requested resource not found: Stream: %s not found"
#define DDB_MSG_STREAM_SHARD_NOT_FOUND	"Requested resource not found: Shard: %s not found"
#define DDB_MSG_STREAM_TABLE_HAS_NONE	"Requested resource not found: Table: %s has no stream"
#define DDB_MSG_STREAM_INVALID_ARN		"Invalid StreamArn"
#define DDB_MSG_STREAM_INVALID_ITERATOR	"Invalid ShardIterator"
#define DDB_MSG_STREAM_INVALID_SEQUENCE	"Invalid SequenceNumber: %s"
#define DDB_MSG_STREAM_SEQUENCE_REQUIRED "Must specify a SequenceNumber when ShardIteratorType is %s"
#define DDB_MSG_STREAM_SEQUENCE_NOT_ALLOWED "Must not specify a SequenceNumber when ShardIteratorType is %s"

#endif							/* DDB_ERRORS_H */
