/*-------------------------------------------------------------------------
 *
 * ddb_http_keys.c
 *	  Access keys: AWS-style key pairs that map HTTP clients to roles.
 *
 * A key is a row of ddb_internal.access_keys (access_key_id primary key,
 * secret_access_key, role regrole, role_name), created by
 * ddb_create_access_key(role) and removed by ddb_drop_access_key(id) (both
 * in ddb--0.1--0.2.sql).  The table grants nothing to PUBLIC and has
 * row-level security with no policy, which pg_read_all_data does not
 * bypass, so only superusers (and roles with BYPASSRLS that were granted
 * the table) read the secrets; this file reads it with direct access,
 * which row-level security does not apply to.  The functions run with the caller's
 * rights, so only superusers (or whom they grant the functions and the
 * table to) manage keys.  SigV4 needs the secret itself (the client signs
 * with it, the server recomputes), so it is stored as given, as AWS stores
 * it; the table is an extension configuration table, so pg_dump keeps the
 * keys.
 *
 * The HTTP workers look a key up on every request, through the primary
 * key index, in the request's own transaction and snapshot: a dropped key
 * or a dropped role stops working at the next request, with no cache to
 * invalidate.
 *
 * A key authenticates only as the role it was made for: its OID must still
 * name a role called role_name, the name it had then.  The OID alone would
 * not do: DROP ROLE cannot remove the key (it may run in any database, the
 * keys live in one), and once OIDs wrap a new, unrelated role may get the
 * dropped one's OID.  Keeping the rows consistent instead -- a hook on DROP
 * ROLE deleting them -- would work only where the keys' database is the
 * one DROP ROLE runs in, and a restore of a dump taken after the drop
 * would still bring back a row naming a bare OID.  The check is made where
 * the key is used, so it holds however the row came to be; the price is
 * that renaming a role disables its keys (renaming it back enables them).
 * ddb_drop_orphaned_access_keys() removes the keys that fail it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "http/ddb_http.h"

#define KEYS_SCHEMA		"ddb_internal"
#define KEYS_TABLE		"access_keys"
#define KEYS_INDEX		"access_keys_pkey"

/* the primary key index's column (the table's columns go by name) */
#define Anum_key_id		1

/*
 * The number of the key table's column 'name', which must have type
 * 'type'.  Found by name, so that a key table made by an earlier
 * development build (without role_name) is an error, not a column misread.
 */
static AttrNumber
key_column(Relation rel, const char *name, Oid type)
{
	TupleDesc	desc = RelationGetDescr(rel);

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped && strcmp(NameStr(att->attname), name) == 0 &&
			att->atttypid == type)
			return att->attnum;
	}
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("table %s.%s has no column \"%s\" of type %s",
					KEYS_SCHEMA, KEYS_TABLE, name, format_type_be(type))));
}

/*
 * Does the role with OID 'role' exist under the name 'name'?
 */
static bool
role_is(Oid role, const char *name)
{
	HeapTuple	tup = SearchSysCache1(AUTHOID, ObjectIdGetDatum(role));
	bool		same;

	if (!HeapTupleIsValid(tup))
		return false;
	same = strcmp(NameStr(((Form_pg_authid) GETSTRUCT(tup))->rolname), name) == 0;
	ReleaseSysCache(tup);
	return same;
}

/*
 * Finds an access key: its secret (palloc'd) and role.  False when there
 * is no such key, when its role was dropped or renamed (see the file
 * header), or when the extension's key table does not exist in this
 * database (nothing can be authenticated).  Runs as the worker's own
 * superuser, inside the request's transaction.
 */
bool
ddb_http_key_lookup(const char *access_key_id, char **secret, Oid *role)
{
	Oid			nsp = get_namespace_oid(KEYS_SCHEMA, true);
	Oid			relid;
	Oid			indexid;
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tup;
	bool		found = false;

	if (!OidIsValid(nsp))
		return false;
	relid = get_relname_relid(KEYS_TABLE, nsp);
	indexid = get_relname_relid(KEYS_INDEX, nsp);
	if (!OidIsValid(relid) || !OidIsValid(indexid))
		return false;

	rel = table_open(relid, AccessShareLock);
	ScanKeyInit(&key, Anum_key_id, BTEqualStrategyNumber, F_TEXTEQ,
				CStringGetTextDatum(access_key_id));
	scan = systable_beginscan(rel, indexid, true, GetActiveSnapshot(), 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		TupleDesc	desc = RelationGetDescr(rel);
		bool		nulls[3];
		Datum		secret_d = heap_getattr(tup, key_column(rel, "secret_access_key", TEXTOID),
											desc, &nulls[0]);
		Datum		role_d = heap_getattr(tup, key_column(rel, "role", REGROLEOID),
										  desc, &nulls[1]);
		Datum		name_d = heap_getattr(tup, key_column(rel, "role_name", NAMEOID),
										  desc, &nulls[2]);

		if (!nulls[0] && !nulls[1] && !nulls[2] &&
			role_is(DatumGetObjectId(role_d), NameStr(*DatumGetName(name_d))))
		{
			*secret = TextDatumGetCString(secret_d);
			*role = DatumGetObjectId(role_d);
			found = true;
		}
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * ddb_access_key_random(kind text) → text: a new access key id ('id':
 * "AKDB" and 16 characters of [A-Z2-7], the shape of AWS's ids) or secret
 * ('secret': 40 characters of [A-Za-z0-9+/]), from the strong random
 * source.  Used by ddb_create_access_key.
 */
PG_FUNCTION_INFO_V1(ddb_access_key_random);
Datum
ddb_access_key_random(PG_FUNCTION_ARGS)
{
	static const char idchars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
	static const char secretchars[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char	   *kind = text_to_cstring(PG_GETARG_TEXT_PP(0));
	const char *alphabet;
	const char *prefix;
	int			n;
	uint8		rnd[40];
	char		out[64];
	int			len;

	if (strcmp(kind, "id") == 0)
	{
		alphabet = idchars;
		prefix = "AKDB";
		n = 16;
	}
	else if (strcmp(kind, "secret") == 0)
	{
		alphabet = secretchars;
		prefix = "";
		n = 40;
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown access key part \"%s\"", kind),
				 errhint("Use 'id' or 'secret'.")));

	if (!pg_strong_random(rnd, n))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate random access key")));
	len = strlen(prefix);
	memcpy(out, prefix, len);
	/* both alphabets have a power-of-two size: no modulo bias */
	for (int i = 0; i < n; i++)
		out[len++] = alphabet[rnd[i] % (strlen(alphabet))];
	out[len] = '\0';
	explicit_bzero(rnd, sizeof(rnd));
	PG_RETURN_TEXT_P(cstring_to_text(out));
}
