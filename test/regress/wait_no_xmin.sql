\set ECHO none
-- wait_no_xmin(): wait until no other backend holds a snapshot or
-- transaction older than now, so that a VACUUM run next can prune what the
-- calling file deleted and free the leaves it deleted (sql/unlink.sql,
-- modify.sql, bulk_load.sql, split_in_place.sql).  The horizon of deleted
-- pages is the whole server's, and autovacuum's ANALYZE in any database
-- holds it back while it runs (the prune horizon, this database's
-- ANALYZEs), so the wait is for those; a backend that starts later cannot
-- hold it below now.  (An older version of this wait, for no xmin at all,
-- returned while such a backend held an xid without a snapshot, and gave
-- up silently: a minute of waiting is an error.)  Included with \i from
-- the tree's top, where pg_regress runs, and not echoed (pg_regress's psql
-- echoes everything, -a); the caller drops the function.
CREATE FUNCTION wait_no_xmin() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	now_xid xid := (txid_current() % 4294967296)::text::xid;
BEGIN
	FOR i IN 1 .. 600 LOOP
		-- (a transaction reads backends' status once unless told again)
		PERFORM pg_stat_clear_snapshot();
		IF NOT EXISTS (SELECT FROM pg_stat_activity
					   WHERE pid <> pg_backend_pid()
						 AND (age(backend_xmin) > age(now_xid) OR age(backend_xid) > age(now_xid))) THEN
			RETURN;
		END IF;
		PERFORM pg_sleep(0.1);
	END LOOP;
	RAISE EXCEPTION 'a backend kept a snapshot older than xid % for a minute', now_xid;
END $$;
\set ECHO all
