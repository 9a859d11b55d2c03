/* placeholder: the key encoding is being written (see ddb.h for the contract) */
#include "postgres.h"
#include "fmgr.h"
#include "ddb.h"
PG_FUNCTION_INFO_V1(ddb_hash32_sql);
void ddb_encode_key(const DdbKeyInfo *ki, Datum *values, bool *isnull, StringInfo buf) { elog(ERROR, "not yet"); }
void ddb_decode_key(const DdbKeyInfo *ki, const char *key, int keylen, Datum *values, bool *isnull) { elog(ERROR, "not yet"); }
void ddb_check_key_value(DdbKeyType type, Datum value, bool partition, const char *colname) {}
Datum ddb_hash32_sql(PG_FUNCTION_ARGS) { PG_RETURN_NULL(); }
PG_FUNCTION_INFO_V1(ddb_key_bytes);
PG_FUNCTION_INFO_V1(ddb_sort_key_bytes);
Datum ddb_key_bytes(PG_FUNCTION_ARGS) { PG_RETURN_NULL(); }
Datum ddb_sort_key_bytes(PG_FUNCTION_ARGS) { PG_RETURN_NULL(); }
