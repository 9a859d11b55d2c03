
# Copyright (c) ddb authors

# Streams survive crashes and replicate (src/api/ddb_stream.c).
#
# A primary with a streaming standby.  pgbench clients write a streamed
# ddb table with the item API and plain SQL (an INSERT, a MODIFY, sometimes a
# REMOVE per transaction) and log each change in a heap "shadow" table in
# the same transaction; one transaction in eight rolls back.  The primary is
# killed (immediate shutdown) mid-burst and restarted.  Then:
#   (a) every committed change (a shadow row) has exactly one stream record
#       and every record is a committed change: same multiset of (key,
#       event), no sequence number twice;
#   (b) each item's records are in the order of its changes;
#   (c) the standby, caught up, reads the very same stream;
#   (d) writes after recovery are recorded, after the old records.
#
# DDB_TAP_WAL=custom runs it with ddb preloaded, so ddb tables are logged
# with ddb's own WAL records (test/t/DdbWal.pm); test/run.sh runs both.

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use DdbWal;
use IPC::Run;

my $primary = PostgreSQL::Test::Cluster->new('stream_primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', qq(
max_connections = 40
log_min_messages = warning
));
DdbWal::configure($primary);
$primary->start;
DdbWal::check_mode($primary);
$primary->safe_psql('postgres', q(
CREATE EXTENSION ddb;
SELECT ddb_create_table('stt', 'PK', 'S', 'SK', 'S');
SELECT ddb_update_stream('stt', 'NEW_AND_OLD_IMAGES') IS NOT NULL;
CREATE TABLE shadow (pk text, sk text, event text);
CREATE SEQUENCE txn_seq;
-- every record of the stream, page by page, resuming after the last number
CREATE FUNCTION all_records() RETURNS TABLE (pk text, sk text, event text, seq text)
LANGUAGE plpgsql AS $$
DECLARE
  after text;
  n int;
BEGIN
  LOOP
    n := 0;
    FOR pk, sk, event, seq IN
      SELECT r->'dynamodb'->'Keys'->>'PK', r->'dynamodb'->'Keys'->>'SK', r->>'eventName',
             r->'dynamodb'->>'SequenceNumber'
      FROM ddb_stream_records('stt', NULL, after, 1000) r
    LOOP
      n := n + 1;
      after := seq;
      RETURN NEXT;
    END LOOP;
    EXIT WHEN n = 0;
  END LOOP;
END
$$;
));

$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('stream_standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;

my $script = $primary->basedir . '/writers.sql';
PostgreSQL::Test::Utils::append_to_file($script, q(\set p random(0, 499)
\set abort random(1, 8)
\set del random(1, 4)
BEGIN;
SELECT nextval('txn_seq') AS n \gset
SELECT ddb_put_item('stt', jsonb_build_object('PK', 'P' || :p, 'SK', 'T' || :n, 'v', :n));
INSERT INTO shadow VALUES ('P' || :p, 'T' || :n, 'INSERT');
UPDATE stt SET item = item || jsonb_build_object('by', :client_id) WHERE "PK" = 'P' || :p AND "SK" = 'T' || :n;
INSERT INTO shadow VALUES ('P' || :p, 'T' || :n, 'MODIFY');
\if :del = 1
SELECT ddb_delete_item('stt', jsonb_build_object('PK', 'P' || :p, 'SK', 'T' || :n));
INSERT INTO shadow VALUES ('P' || :p, 'T' || :n, 'REMOVE');
\endif
\if :abort = 1
ROLLBACK;
\else
COMMIT;
\endif
));

my ($out, $err) = ('', '');
my $h = IPC::Run::start(
	[
		'pgbench', '-n', '-c', 6, '-j', 6, '-T', '600', '-f', $script,
		'-h', $primary->host, '-p', $primary->port, 'postgres'
	],
	'>', \$out, '2>', \$err,
	IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));

# until 1500 transactions started (or 20 s), so the crash lands mid-burst
my $deadline = time() + 20;
while (time() < $deadline)
{
	last if $primary->safe_psql('postgres', 'SELECT last_value FROM txn_seq') >= 1500;
	sleep 1;
}
ok($h->pumpable, 'writers still running at the crash');
$primary->stop('immediate');
eval { $h->finish; 1 } or $h->kill_kill;
my @bad = grep {
	/ERROR:/
	  || (/aborted in command/
		&& !/perhaps the backend died|server closed the connection unexpectedly/)
} split /\n/, $err;
is(scalar(@bad), 0, 'no client failed before the crash') or diag $err;
$primary->start;

sub check_stream
{
	my ($node, $what) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $q = sub { $node->safe_psql('postgres', shift) };

	my $n = $q->('SELECT count(*) FROM shadow');
	cmp_ok($n, '>', 100, "$what: many changes committed ($n)");
	is($q->('SELECT count(*) FROM all_records()'), $n, "$what: one record per committed change");
	is($q->('SELECT count(*) FROM (SELECT pk, sk, event FROM all_records() EXCEPT ALL SELECT * FROM shadow) x'),
		'0', "$what: every record is a committed change");
	is($q->('SELECT count(*) FROM (SELECT * FROM shadow EXCEPT ALL SELECT pk, sk, event FROM all_records()) x'),
		'0', "$what: every committed change has its record");
	is($q->('SELECT count(*) - count(DISTINCT seq) FROM all_records()'), '0',
		"$what: no sequence number twice");
	is( $q->(q{SELECT count(*) FROM (SELECT string_agg(event, ',' ORDER BY seq) AS e FROM all_records()
	            WHERE pk <> 'after' GROUP BY pk, sk) x WHERE e NOT IN ('INSERT,MODIFY', 'INSERT,MODIFY,REMOVE')}),
		'0', "$what: each item's records in the order of its changes");
	return;
}

check_stream($primary, 'primary after crash');
cmp_ok($primary->safe_psql('postgres', 'SELECT count(DISTINCT sk) FROM shadow'), '<',
	$primary->safe_psql('postgres', 'SELECT last_value FROM txn_seq'),
	'some transactions rolled back or were cut off');

$primary->wait_for_catchup($standby);
check_stream($standby, 'standby');
my $digest = q{SELECT md5(string_agg(pk || sk || event || seq, ',' ORDER BY seq)) FROM all_records()};
is($standby->safe_psql('postgres', $digest), $primary->safe_psql('postgres', $digest),
	'the standby reads the same stream as the primary');

# (d) after recovery
$primary->safe_psql('postgres', q(
BEGIN;
SELECT ddb_put_item('stt', jsonb_build_object('PK', 'after', 'SK', 'crash'));
INSERT INTO shadow VALUES ('after', 'crash', 'INSERT');
COMMIT;
));
check_stream($primary, 'primary after more writes');
is($primary->safe_psql('postgres', q{SELECT pk FROM all_records() ORDER BY seq DESC LIMIT 1}),
	'after', 'a write after recovery comes after the old records');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $digest), $primary->safe_psql('postgres', $digest),
	'the standby follows');

$standby->stop;
$primary->stop;
done_testing();
