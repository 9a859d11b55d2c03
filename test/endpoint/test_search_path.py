"""SQL that ddb runs for a request cannot be taken over by objects another
role created in a schema of the search path.

ddb's own statements name its relations with their schema, but PostgreSQL
looks their operators up in search_path, and prefers an operator whose
argument types match exactly wherever it is: "relid = $1" on a regclass
column and an oid parameter finds an "=(regclass, oid)" that a role with
CREATE on public (as README suggests granting to application roles)
defined there before pg_catalog's "=(oid, oid)".  Such an operator must run
neither as the catalogs' owner (a superuser), nor in the HTTP or TTL
workers as whichever role they serve.
"""
import subprocess
import time
import uuid

import pytest

from conftest import PGBIN, PGPORT, SOCK, client, create_table, psql, wait_for

PLANTER = "ddb_sp_planter"


def psql_as(role, sql):
    """Runs SQL in a session of 'role' (its own search_path, the default)."""
    r = subprocess.run(
        [f"{PGBIN}/psql", "-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1",
         "-h", SOCK, "-p", PGPORT, "-U", role, "-d", "postgres", "-c", sql],
        capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"psql failed: {r.stderr}")
    return r.stdout.strip()


@pytest.fixture
def planted():
    """A role with CREATE on public and, in public, "=(regclass, oid)": it
    compares as pg_catalog's would, notes who ran it, and makes its creator
    a superuser when a superuser runs it."""
    psql(f"CREATE ROLE {PLANTER} LOGIN; GRANT CREATE ON SCHEMA public TO {PLANTER}")
    psql_as(PLANTER, f"""
CREATE TABLE public.sp_ran_as (who name);
GRANT INSERT ON public.sp_ran_as TO PUBLIC;
CREATE FUNCTION public.sp_eq(regclass, oid) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.sp_ran_as VALUES (current_user);
  IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
    EXECUTE 'ALTER ROLE {PLANTER} SUPERUSER';
  END IF;
  RETURN $1::oid OPERATOR(pg_catalog.=) $2;
END $$;
CREATE OPERATOR public.= (LEFTARG = regclass, RIGHTARG = oid, FUNCTION = public.sp_eq);
""")
    try:
        yield
    finally:
        psql(f"""
DROP OPERATOR IF EXISTS public.= (regclass, oid);
DROP FUNCTION IF EXISTS public.sp_eq(regclass, oid);
DROP TABLE IF EXISTS public.sp_ran_as;
DO $$ DECLARE t text; BEGIN
  FOR t IN SELECT c.relname FROM pg_catalog.pg_class c
           WHERE c.relowner = '{PLANTER}'::regrole AND c.relkind = 'r' LOOP
    EXECUTE pg_catalog.format('DROP TABLE public.%I', t);
  END LOOP;
END $$;
REVOKE CREATE ON SCHEMA public FROM {PLANTER};
DROP ROLE {PLANTER};
""")


def superuser(role):
    return psql(f"SELECT rolsuper FROM pg_roles WHERE rolname = '{role}'") == "t"


def test_catalog_statements_ignore_the_callers_search_path(planted, ddb):
    """Creating a table, in SQL by the planting role itself or through the
    endpoint by another, updates ddb's catalog as its owner: the planted
    operator must not run then."""
    name = "sp_" + uuid.uuid4().hex[:12]
    psql_as(PLANTER, f"SELECT ddb_create_table('{name}', 'PK')")
    assert not superuser(PLANTER)
    create_table(ddb, name + "_h")
    assert not superuser(PLANTER)
    ddb.delete_table(TableName=name + "_h")


def test_workers_ignore_objects_in_public(planted, ddb, table_name):
    """The HTTP workers run ddb's statements as the key's role, and the TTL
    worker sweeps as a superuser: neither finds the planted operator."""
    create_table(ddb, table_name, sk=None)
    ddb.update_time_to_live(TableName=table_name, TimeToLiveSpecification={
        "Enabled": True, "AttributeName": "exp"})
    ddb.put_item(TableName=table_name, Item={"PK": {"S": "a"}, "exp": {"N": str(int(time.time()) - 60)}})
    ddb.get_item(TableName=table_name, Key={"PK": {"S": "a"}})
    ddb.describe_table(TableName=table_name)
    # the TTL worker (every 5 s) deletes the expired item
    assert wait_for(lambda: "Item" not in client().get_item(
        TableName=table_name, Key={"PK": {"S": "a"}}, ConsistentRead=True), timeout=30)
    assert not superuser(PLANTER)
    assert psql("SELECT string_agg(DISTINCT who::text, ',') FROM public.sp_ran_as") == ""
    ddb.delete_table(TableName=table_name)
