#include "postgres.h"
#include "fmgr.h"
#include "ddb.h"
PG_FUNCTION_INFO_V1(ddb_verify);
Datum ddb_verify(PG_FUNCTION_ARGS) { PG_RETURN_NULL(); }
