\set ECHO none
-- wait_no_xmin(): wait until no other backend holds a snapshot or
-- transaction older than now, so that a VACUUM run next can prune what the
-- calling file deleted and free the leaves it deleted (sql/unlink.sql,
-- modify.sql, bulk_load.sql, split_in_place.sql), and a prune run next
-- can remove what the calling file's last transaction deleted
-- (long_key_updates.sql).  The horizon of deleted pages is the whole
-- server's, and autovacuum's ANALYZE in any database holds it back while
-- it runs (the prune horizon, this database's ANALYZEs), so the wait is
-- for those.
--
-- Not through pg_stat_activity: a backend is listed there only at the end
-- of its start-up, and before that it has already taken a snapshot in
-- this database (InitPostgres reads the catalogs under one), so an
-- autovacuum worker starting up held a round's prunes back unseen.  So,
-- as CREATE INDEX CONCURRENTLY waits for older snapshots: first until
-- every transaction id older than ours has ended (a fresh snapshot's xmin
-- reaches ours; prepared transactions count), after which no new
-- snapshot can be older than now; then until every transaction begun
-- before that has ended (their virtual transaction ids in pg_locks, which
-- each backend takes as its transaction starts, before any snapshot).
-- (Older versions of this wait looked for no xmin at all, which returned
-- while a backend held an xid without a snapshot, and gave up silently: a
-- minute of waiting is an error.)
--
-- A prune in the caller's transaction may still go by a horizon computed
-- during the wait (PostgreSQL recomputes it only for a newer snapshot
-- xmin): a caller that prunes should COMMIT after the wait, as
-- long_key_updates.sql does.  Included with \i from the tree's top, where
-- pg_regress runs, and not echoed (pg_regress's psql echoes everything,
-- -a); the caller drops the function.
CREATE FUNCTION wait_no_xmin() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	now_xid xid8 := pg_current_xact_id();
	begun text[];
BEGIN
	FOR i IN 1 .. 600 LOOP
		-- (each expression of this volatile function takes a new snapshot)
		IF begun IS NULL AND pg_snapshot_xmin(pg_current_snapshot()) >= now_xid THEN
			begun := ARRAY(SELECT virtualxid FROM pg_locks
						   WHERE locktype = 'virtualxid' AND granted AND pid <> pg_backend_pid());
		END IF;
		IF begun IS NOT NULL AND NOT EXISTS (SELECT FROM pg_locks
											 WHERE locktype = 'virtualxid' AND granted
											   AND virtualxid = ANY (begun)) THEN
			RETURN;
		END IF;
		PERFORM pg_sleep(0.1);
	END LOOP;
	RAISE EXCEPTION 'transactions older than xid % were still running after a minute', now_xid;
END $$;
\set ECHO all
