/*-------------------------------------------------------------------------
 *
 * ddb_legacy.h
 *	  DynamoDB's legacy request parameters translated into expressions
 *	  (ddb_legacy.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DDB_LEGACY_H
#define DDB_LEGACY_H

#include "api/ddb_json.h"

/* The placeholders one request's translations generated. */
typedef struct DdbLegacy
{
	int			nnames;
	List	   *names;			/* placeholder, name, placeholder, name, ... */
	int			nvalues;
	DdbValue   *values;			/* placeholder -> value */
} DdbLegacy;

extern const char *const ddb_legacy_comparison_ops[];
extern const char *const ddb_legacy_conditional_ops[];

#define DDB_LEGACY_COMPARISON_OPS_LIST \
	"IN, NULL, BETWEEN, LT, NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, CONTAINS"
#define DDB_LEGACY_CONDITIONAL_OPS_LIST "OR, AND"

extern void ddb_legacy_init(DdbLegacy *lx);
extern Jsonb *ddb_legacy_names(DdbLegacy *lx);
extern Jsonb *ddb_legacy_values(DdbLegacy *lx);
extern char *ddb_legacy_projection(DdbLegacy *lx, DdbJson *attrs);
extern char *ddb_legacy_conditions(DdbLegacy *lx, DdbJson *conds, const char *condop,
								   const char *member);
extern char *ddb_legacy_key_conditions(DdbLegacy *lx, DdbJson *conds);
extern char *ddb_legacy_expected(DdbLegacy *lx, DdbJson *expected, const char *condop);
extern char *ddb_legacy_updates(DdbLegacy *lx, DdbJson *updates);

#endif							/* DDB_LEGACY_H */
