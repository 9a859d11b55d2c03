#include "postgres.h"
#include "ddb.h"
DdbRangeScan ddb_range_begin(Relation rel, Snapshot snapshot, const DdbRange *range, bool forward) { return NULL; }
HeapTuple ddb_range_next(DdbRangeScan scan) { return NULL; }
void ddb_range_end(DdbRangeScan scan) {}
void ddb_range_rescan(DdbRangeScan scan, const DdbRange *range, bool forward) {}
