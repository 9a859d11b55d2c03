/*-------------------------------------------------------------------------
 *
 * ddb_main.c
 *	  The module's entry point: each layer installs its hooks and settings.
 *
 * Layers register in bottom-up order (WAL, engine, planner, API, HTTP), and only
 * then is the "ddb." GUC prefix reserved, so every setting is defined by
 * the layer that owns it and none by this file.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"

#include "ddb.h"
#include "http/ddb_http.h"

PG_MODULE_MAGIC;

void
_PG_init(void)
{
	ddb_wal_init();
	ddb_engine_init();
	ddb_planner_init();
	ddb_api_init();
	ddb_http_init();

	MarkGUCPrefixReserved("ddb");
}
