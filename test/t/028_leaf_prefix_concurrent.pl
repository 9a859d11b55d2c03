
# Copyright (c) ddb authors

# Leaves that take the prefix of their items (storage version 3, ddb_page.h
# "Leaf prefix") under concurrent row-by-row writes, readers on the primary
# and on a hot standby, and crashes in the middle of the load.
#
# The keys are made for prefixes that shrink and grow all the time: 25
# interleaved partitions whose sort keys mostly share a 200-byte stem, with
# keys below it ('a...'), above it ('zz...'), sharing half of it, of 900
# bytes, and partitions of 2,000-byte partition keys; a global secondary
# index (written by its trigger, a ddb table of its own) on attributes
# shaped the same way.  Every write goes to the ddb table and to its heap
# twin in one transaction: single INSERTs, BatchWriteItem (the batch path,
# which stops its run at a key that shares less), UPDATEs, DELETEs of one
# row and of runs of a partition's rows (of both tables in one statement,
# so that one snapshot decides whether a row is there: a row committed
# between two statements would be missed by one), and VACUUMs, which
# prune and unlink the emptied leaves, some with their prefix in a copy.
#
# The oracle of the readers: in one REPEATABLE READ snapshot a partition
# read from the ddb table, forward and backward (the key scan), through a
# scroll cursor (FETCH ABSOLUTE, PRIOR, NEXT, with pauses between the
# fetches for other backends to re-lay and split the leaves it reads),
# through Query pages of 5 items both ways (ExclusiveStartKey), through a
# nested loop of key scans with LIMIT, and through the index, equals what
# the heap twin holds; and now and then the whole table read through Scan
# pages.  Readers run on the primary during the load and on
# the standby while it replays the load's RELAY and SPLIT_ITEMS records.
#
# Three rounds: (1) a backend killed with SIGKILL in the middle of the load
# (the postmaster reinitializes: crash recovery in place), (2) an immediate
# stop in the middle of the load, (3) a load that runs to its end.  After
# each: the table holds exactly its twin's rows, ddb_verify is clean on the
# table and the index's table, ddb_verify_gsi is clean, and (after round 3)
# every partition passes the readers' oracle.  At the end, the standby the same.
#
# DDB_TAP_WAL=custom runs it with ddb preloaded (test/t/DdbWal.pm), with
# wal_consistency_checking on ddb's records (replaying a RELAY record
# without re-laying the leaf fails it: the standby's readers, and crash
# recovery).  DDB_PREFIX_CONC_SCALE=N makes each round's load N times
# longer, and its pgbench seeds others (by hand: a failure is a finding).

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DdbWal;
use DdbPgbench;

plan skip_all => 'ddb_verify and the index need ddb tables'
  if ($ENV{DDB_TAP_AM} || 'ddb') ne 'ddb';

my $custom = DdbWal::mode() eq 'custom';
my $primary = PostgreSQL::Test::Cluster->new('cprim');
$primary->init(allows_streaming => 1);
DdbWal::configure($primary);
$primary->append_conf('postgresql.conf', qq(
autovacuum = off
max_connections = 30
hot_standby_feedback = on
restart_after_crash = on
));
$primary->append_conf('postgresql.conf', "wal_consistency_checking = 'ddb'\n")
  if $custom;
$primary->start;
DdbWal::check_mode($primary);

$primary->safe_psql('postgres', q{
	CREATE EXTENSION ddb;
	CREATE SEQUENCE kseq;
	CREATE TABLE lpc ("PK" text, "SK" text, item jsonb) USING ddb;
	CREATE TABLE lpch ("PK" text COLLATE "C", "SK" text COLLATE "C", item jsonb, PRIMARY KEY ("PK", "SK"));
	SELECT ddb_create_gsi('lpc', 'GIdx', 'g', sort_key => 'h');
	-- the keys of row k: the partition, then one of ten shapes of sort key
	CREATE FUNCTION kpk(k bigint) RETURNS text IMMUTABLE LANGUAGE sql AS $$
	  SELECT CASE WHEN k % 23 = 0 THEN repeat('Q', 2000) || k % 2 ELSE 'P#' || k % 25 END $$;
	CREATE FUNCTION ksk(k bigint) RETURNS text IMMUTABLE LANGUAGE sql AS $$
	  SELECT CASE (k / 25) % 10
	    WHEN 0 THEN 'a' || k
	    WHEN 1 THEN 'zz' || k
	    WHEN 2 THEN repeat('s', 100) || 't' || k
	    WHEN 3 THEN repeat('s', 900) || k
	    ELSE repeat('s', 200) || lpad(k::text, 8, '0') END $$;
	CREATE FUNCTION kitem(k bigint) RETURNS jsonb IMMUTABLE LANGUAGE sql AS $$
	  SELECT jsonb_build_object('n', k, 'g', 'G#' || k % 7,
	    'h', CASE k % 5 WHEN 0 THEN 'b' || k ELSE repeat('h', 150) || lpad(k::text, 8, '0') END,
	    'pad', repeat('x', (k % 4)::int * 120)) $$;
	CREATE FUNCTION kput(k bigint) RETURNS jsonb IMMUTABLE LANGUAGE sql AS $$
	  SELECT jsonb_build_object('PutRequest', jsonb_build_object('Item',
	    kitem(k) || jsonb_build_object('PK', kpk(k), 'SK', ksk(k)))) $$;

	-- The readers' oracle on partition pk (and index partition g), in the
	-- caller's snapshot: raises "twin mismatch" when a read of the ddb table
	-- differs from the twin.  'pause': sleep now and then between a
	-- cursor's fetches and between Query pages, for writers to go on.
	CREATE FUNCTION twin_check(pk text, g text, pause boolean DEFAULT false) RETURNS int LANGUAGE plpgsql AS $f$
	DECLARE
	  want text[];
	  got text[];
	  half text[] := '{}';
	  rest text[] := '{}';
	  x text;
	  n int;
	  mid int;
	  page jsonb;
	  start jsonb;
	  fwd boolean;
	  starts text[] := ARRAY['', 'a', repeat('s', 100) || 't', repeat('s', 200) || '0000',
	                         repeat('s', 200) || '9', 'zz'];
	  c SCROLL CURSOR (p text) FOR SELECT "SK" FROM lpc WHERE "PK" = p ORDER BY "SK";
	BEGIN
	  SELECT array_agg("SK" ORDER BY "SK") INTO want FROM lpch WHERE "PK" = pk;
	  n := coalesce(cardinality(want), 0);
	  -- the key scan, both ways, with the items
	  IF (SELECT array_agg(ROW("SK", item)::text ORDER BY "SK") FROM lpch WHERE "PK" = pk)
	     IS DISTINCT FROM (SELECT array_agg(ROW("SK", item)::text) FROM
	                       (SELECT "SK", item FROM lpc WHERE "PK" = pk ORDER BY "SK") s) THEN
	    RAISE EXCEPTION 'twin mismatch: forward scan of %', left(pk, 10);
	  END IF;
	  SELECT array_agg("SK") INTO got FROM (SELECT "SK" FROM lpc WHERE "PK" = pk ORDER BY "SK" DESC) s;
	  IF got IS DISTINCT FROM (SELECT array_agg(w ORDER BY o DESC) FROM unnest(want) WITH ORDINALITY u(w, o)) THEN
	    RAISE EXCEPTION 'twin mismatch: backward scan of %', left(pk, 10);
	  END IF;
	  -- a scroll cursor: to the middle, back to the start, then on to the end
	  mid := n / 2 + 1;
	  OPEN c(pk);
	  FETCH ABSOLUTE mid FROM c INTO x;
	  LOOP
	    FETCH PRIOR FROM c INTO x;
	    EXIT WHEN NOT FOUND;
	    half := x || half;
	    IF pause AND cardinality(half) % 16 = 0 THEN PERFORM pg_sleep(0.005); END IF;
	  END LOOP;
	  FETCH ABSOLUTE mid - 1 FROM c INTO x;
	  LOOP
	    FETCH NEXT FROM c INTO x;
	    EXIT WHEN NOT FOUND;
	    rest := rest || x;
	    IF pause AND cardinality(rest) % 16 = 0 THEN PERFORM pg_sleep(0.005); END IF;
	  END LOOP;
	  CLOSE c;
	  IF n > 0 AND (half IS DISTINCT FROM coalesce(want[1:mid - 1], '{}') OR
	                rest IS DISTINCT FROM want[mid:n]) THEN
	    RAISE EXCEPTION 'twin mismatch: scroll cursor on % (% + % of %)', left(pk, 10),
	      cardinality(half), cardinality(rest), n;
	  END IF;
	  -- Query, 5 items a page, both ways
	  FOREACH fwd IN ARRAY ARRAY[true, false] LOOP
	    got := '{}';
	    start := NULL;
	    LOOP
	      page := ddb_query_page('lpc', 'PK = :p', jsonb_build_object(':p', pk), forward => fwd,
	                             "limit" => 5, start_key => start);
	      got := got || ARRAY(SELECT i ->> 'SK' FROM jsonb_array_elements(page -> 'Items') i);
	      start := page -> 'LastEvaluatedKey';
	      EXIT WHEN start IS NULL;
	      IF pause THEN PERFORM pg_sleep(0.002); END IF;
	    END LOOP;
	    IF got IS DISTINCT FROM coalesce(CASE WHEN fwd THEN want ELSE
	         (SELECT array_agg(w ORDER BY o DESC) FROM unnest(want) WITH ORDINALITY u(w, o)) END, '{}') THEN
	      RAISE EXCEPTION 'twin mismatch: Query pages of % (forward %)', left(pk, 10), fwd;
	    END IF;
	  END LOOP;
	  -- key scans with LIMIT in a nested loop, both ways
	  IF (SELECT array_agg(x."SK" ORDER BY v.i, x."SK") FROM unnest(starts) WITH ORDINALITY v(s, i)
	      CROSS JOIN LATERAL (SELECT "SK" FROM lpc WHERE "PK" = pk AND "SK" >= v.s ORDER BY "SK" LIMIT 4) x)
	     IS DISTINCT FROM
	     (SELECT array_agg(x."SK" ORDER BY v.i, x."SK") FROM unnest(starts) WITH ORDINALITY v(s, i)
	      CROSS JOIN LATERAL (SELECT "SK" FROM lpch WHERE "PK" = pk AND "SK" >= v.s ORDER BY "SK" LIMIT 4) x) OR
	     (SELECT array_agg(x."SK" ORDER BY v.i, x."SK") FROM unnest(starts) WITH ORDINALITY v(s, i)
	      CROSS JOIN LATERAL (SELECT "SK" FROM lpc WHERE "PK" = pk AND "SK" < v.s ORDER BY "SK" DESC LIMIT 4) x)
	     IS DISTINCT FROM
	     (SELECT array_agg(x."SK" ORDER BY v.i, x."SK") FROM unnest(starts) WITH ORDINALITY v(s, i)
	      CROSS JOIN LATERAL (SELECT "SK" FROM lpch WHERE "PK" = pk AND "SK" < v.s ORDER BY "SK" DESC LIMIT 4) x) THEN
	    RAISE EXCEPTION 'twin mismatch: nested loop of %', left(pk, 10);
	  END IF;
	  -- the index, both ways
	  FOREACH fwd IN ARRAY ARRAY[true, false] LOOP
	    IF (SELECT array_agg(i ->> 'h') FROM ddb_query('lpc', 'g = :g', jsonb_build_object(':g', g),
	                                                    index_name => 'GIdx', forward => fwd) i)
	       IS DISTINCT FROM
	       (SELECT array_agg(item ->> 'h' ORDER BY CASE WHEN fwd THEN item ->> 'h' END COLLATE "C",
	                         item ->> 'h' COLLATE "C" DESC) FROM lpch WHERE item ->> 'g' = g) THEN
	      RAISE EXCEPTION 'twin mismatch: index partition % (forward %)', g, fwd;
	    END IF;
	  END LOOP;
	  RETURN n;
	END
	$f$;

	-- Scan, 150 items a page (ExclusiveStartKey), against the whole twin
	CREATE FUNCTION twin_scan_check(pause boolean DEFAULT false) RETURNS bigint LANGUAGE plpgsql AS $f$
	DECLARE
	  got text[] := '{}';
	  page jsonb;
	  start jsonb;
	BEGIN
	  LOOP
	    page := ddb_scan_page('lpc', "limit" => 150, start_key => start);
	    got := got || ARRAY(SELECT md5((i ->> 'PK') || '/' || (i ->> 'SK')) FROM jsonb_array_elements(page -> 'Items') i);
	    start := page -> 'LastEvaluatedKey';
	    EXIT WHEN start IS NULL;
	    IF pause THEN PERFORM pg_sleep(0.002); END IF;
	  END LOOP;
	  IF (SELECT array_agg(x ORDER BY x) FROM unnest(got) x) IS DISTINCT FROM
	     (SELECT array_agg(x ORDER BY x) FROM (SELECT md5("PK" || '/' || "SK") FROM lpch) h(x)) THEN
	    RAISE EXCEPTION 'twin mismatch: Scan pages (% items, twin %)', cardinality(got),
	      (SELECT count(*) FROM lpch);
	  END IF;
	  RETURN cardinality(got);
	END
	$f$;
});
$primary->backup('bk');
my $standby = PostgreSQL::Test::Cluster->new('cstby');
$standby->init_from_backup($primary, 'bk', has_streaming => 1);
$standby->start;
DdbWal::check_mode($standby);

my %writers = (
	ins => q{
SELECT nextval('kseq') AS k \gset
BEGIN;
INSERT INTO lpc VALUES (kpk(:k), ksk(:k), kitem(:k));
INSERT INTO lpch VALUES (kpk(:k), ksk(:k), kitem(:k));
COMMIT;
},
	batch => q{
DO $$
DECLARE ks bigint[] := ARRAY(SELECT nextval('kseq') FROM generate_series(1, 12));
BEGIN
  PERFORM ddb_batch_write_item(jsonb_build_object('lpc', (SELECT jsonb_agg(kput(k)) FROM unnest(ks) k)));
  INSERT INTO lpch SELECT kpk(k), ksk(k), kitem(k) FROM unnest(ks) k;
END $$;
},
	upd => q{
SELECT last_value AS lv FROM kseq \gset
\set r random(1, :lv)
WITH u AS (UPDATE lpch SET item = item || jsonb_build_object('u', :r, 'pad', repeat('u', :r % 300))
           WHERE "PK" = kpk(:r) AND "SK" = ksk(:r) RETURNING 1)
UPDATE lpc SET item = item || jsonb_build_object('u', :r, 'pad', repeat('u', :r % 300))
WHERE "PK" = kpk(:r) AND "SK" = ksk(:r) AND EXISTS (SELECT FROM u);
},
	del => q{
SELECT last_value AS lv FROM kseq \gset
\set r random(1, :lv)
WITH d AS (DELETE FROM lpch WHERE "PK" = kpk(:r) AND "SK" = ksk(:r) RETURNING 1)
DELETE FROM lpc WHERE "PK" = kpk(:r) AND "SK" = ksk(:r) AND EXISTS (SELECT FROM d);
},
	rdel => q{
SELECT last_value AS lv FROM kseq \gset
\set r random(1, :lv)
WITH d AS (DELETE FROM lpch WHERE "PK" = kpk(:r) AND "SK" >= repeat('s', 200) || lpad(:r::text, 8, '0')
             AND "SK" < repeat('s', 200) || lpad((:r + 1500)::text, 8, '0') RETURNING "PK", "SK")
DELETE FROM lpc USING d WHERE lpc."PK" = d."PK" AND lpc."SK" = d."SK";
},
	vac => q{
VACUUM lpc;
},
	reader => q{
\set p random(0, 26)
\set g random(0, 6)
\set s random(0, 7)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT CASE WHEN :s = 0 THEN twin_scan_check(true) END;
SELECT twin_check(CASE WHEN :p < 25 THEN 'P#' || :p ELSE repeat('Q', 2000) || :p - 25 END, 'G#' || :g, true);
COMMIT;
});
my $scale = $ENV{DDB_PREFIX_CONC_SCALE} || 1;
my %weights = (ins => 8, batch => 2, upd => 3, del => 1, rdel => 1, vac => 1);
my %readers = (reader => delete $writers{reader});

# The whole table's oracle: the twin's rows, a clean tree and index, and
# every partition through twin_check.
sub same_and_sound
{
	my ($node, $step, $quick) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	is($node->safe_psql('postgres', q{SELECT count(*) FROM
			((SELECT * FROM lpc EXCEPT ALL SELECT * FROM lpch) UNION ALL (SELECT * FROM lpch EXCEPT ALL SELECT * FROM lpc)) d}),
		'0', "$step: lpc holds exactly its twin's rows on " . $node->name);
	my $gsi = $node->safe_psql('postgres', q{SELECT index_table FROM ddb_internal.gsi WHERE index_name = 'GIdx'});
	my ($ret, $out, $err) = $node->psql('postgres', qq{
		SELECT (ddb_verify('lpc') ->> 'leaf_prefix_copies')::int >= 0, ddb_verify('$gsi') IS NOT NULL,
		       ddb_verify_gsi('lpc') IS NOT NULL});
	is($ret . $out, '0t|t|t', "$step: ddb_verify clean on lpc and its index, the index its table's, on "
		  . $node->name . ": $err");
	return if $quick;
	($ret, $out, $err) = $node->psql('postgres', q{
		BEGIN ISOLATION LEVEL REPEATABLE READ;
		SELECT (SELECT sum(twin_check(p, 'G#' || length(p) % 7)) FROM (SELECT DISTINCT "PK" FROM lpch) d(p))
		       = (SELECT count(*) FROM lpch) AND twin_scan_check() = (SELECT count(*) FROM lpch);
		COMMIT;});
	is($ret . $out, '0t', "$step: every partition reads as the twin holds it on " . $node->name . ": $err");
}

# A load with readers on both nodes; $kill (a sub) crashes the primary
# in its middle, or undef to let it finish.
sub round
{
	my ($step, $seconds, $kill) = @_;
	$seconds *= $scale;
	my ($wout, $werr, $rout, $rerr, $sout, $serr) = ('', '', '', '', '', '');
	my $w = DdbPgbench::start($primary, \%writers, \%weights, clients => 4, seconds => $seconds,
		seed => $step * $scale, out => \$wout, err => \$werr);
	my $r = DdbPgbench::start($primary, \%readers, {}, clients => 1, seconds => $seconds,
		seed => $step * $scale, out => \$rout, err => \$rerr);
	my $s = DdbPgbench::start($standby, \%readers, {}, clients => 2, seconds => $seconds,
		seed => $step * $scale, out => \$sout, err => \$serr);
	if ($kill)
	{
		sleep(int($seconds / 2));
		$kill->();
	}
	my $wok = $w->finish;
	my $rok = $r->finish;
	my $sok = $s->finish;
	unlike($werr . $rerr, qr/twin mismatch|ERROR:|PANIC/,
		"$step: the primary's clients saw no wrong read or engine error");
	ok($sok, "$step: the standby's readers agreed with the twin throughout: $serr");
	ok($wok && $rok, "$step: the load and the primary's reader ran to their end: $werr$rerr") unless $kill;
	$primary->poll_query_until('postgres', 'SELECT true') or die "the primary did not come back";
	same_and_sound($primary, $step, $step < 3);
	return;
}

round(1, 6, sub {
	# a backend of the load killed: the postmaster reinitializes, and
	# recovery replays
	my $pid = $primary->safe_psql('postgres', q{SELECT pid FROM pg_stat_activity
		WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
		ORDER BY random() LIMIT 1});
	kill 'KILL', $pid if $pid;
	ok($pid, '(1) a backend of the load was killed');
});
round(2, 6, sub { $primary->stop('immediate'); $primary->start; });
round(3, 4, undef);

$primary->wait_for_catchup($standby);
same_and_sound($standby, '(4) the standby');
cmp_ok($primary->safe_psql('postgres', q{SELECT count(*) FROM lpch}), '>', 1000, '(4) the load wrote rows');
my $v = $primary->safe_psql('postgres', q{SELECT (v ->> 'leaf_prefix_copies')::int > 0,
	(v ->> 'leaf_prefix_bytes')::float > 50, (v ->> 'leaf_pages')::int > 50, (v ->> 'deleted_pages')::int > 0
	FROM ddb_verify('lpc') v});
is($v, 't|t|t|t', '(4) the leaves have long prefixes, some in copies, and VACUUM unlinked some');
ok(!$standby->log_contains(qr/inconsistent page found/) && !$primary->log_contains(qr/inconsistent page found/),
	'(4) every replayed page matched the primary\'s');
$standby->stop;
$primary->stop;
done_testing();
