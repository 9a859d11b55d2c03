/*
 * ddb_protocol_stub.c -- THROWAWAY stand-in for ddb_api_execute and
 * ddb_error_kind, built only with "make HTTP_STUB=1", to test the HTTP
 * transport before the real protocol layer is merged.  Deleted then.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/builtins.h"

#include "ddb_errors.h"
#include "api/ddb_protocol.h"

char *
ddb_api_execute(const char *operation, const char *body, int bodylen, int *resplen)
{
	char	   *r;

	if (strcmp(operation, "ListTables") == 0)
		r = pstrdup("{\"TableNames\":[]}");
	else if (strcmp(operation, "DescribeEndpoints") == 0)
		r = psprintf("{\"Endpoints\":[{\"Address\":\"%s\",\"CachePeriodInMinutes\":1440}]}",
					 GetUserNameFromId(GetUserId(), false));
	else if (strcmp(operation, "DeleteTable") == 0)
		ereport(ERROR, (errcode(DDB_ERRCODE_RESOURCE_NOT_FOUND),
						errmsg("ResourceNotFoundException: Requested resource not found")));
	else if (strcmp(operation, "CreateTable") == 0)
		elog(ERROR, "internal stub failure with secret detail");
	else
		ereport(ERROR, (errcode(DDB_ERRCODE_VALIDATION),
						errmsg("ValidationException: stub does not know %s", operation)));
	*resplen = strlen(r);
	return r;
}

const char *
ddb_error_kind(int sqlerrcode, const char **type_prefix, int *http_status)
{
	*http_status = 400;
	*type_prefix = "com.amazonaws.dynamodb.v20120810#";
	if (sqlerrcode == DDB_ERRCODE_VALIDATION)
	{
		*type_prefix = "com.amazon.coral.validate#";
		return "ValidationException";
	}
	if (sqlerrcode == DDB_ERRCODE_RESOURCE_NOT_FOUND)
		return "ResourceNotFoundException";
	return NULL;
}
