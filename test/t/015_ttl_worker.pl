# The TTL background worker: with shared_preload_libraries = 'ddb' it
# deletes expired items of every TTL-enabled table in every database that
# has ddb, within ddb.ttl_interval of their expiry, keeps items that have
# not expired or have no number TTL, keeps their indexes exact, and leaves
# databases without ddb alone.  Each round also applies the streams'
# retention (ddb.stream_retention).  Also: pg_dump and pg_restore keep TTL
# enabled (the catalog row and the TTL index come back), and a table's
# local secondary index and item collection sizes.  The worker deletes in
# transactions of 500 items.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

my $node = PostgreSQL::Test::Cluster->new('ttl');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'ddb'
ddb.http_port = 0
ddb.ttl_interval = 1
ddb.stream_retention = 2
});
$node->start;

$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('postgres', 'CREATE DATABASE plain');    # no ddb here
for my $db ('app', 'other')
{
	$node->safe_psql($db, q{
		CREATE EXTENSION ddb;
		SELECT ddb_create_table('sessions', 'id');
		SELECT ddb_create_gsi('sessions', 'ByUser', 'usr');
		SELECT ddb_update_time_to_live('sessions', 'exp', true);
	});
}
$node->safe_psql('app', q{SELECT ddb_create_table('notl', 'id')});
# a table with a local secondary index, for the dump below
$node->safe_psql('app', q{
	SELECT ddb_create_table('orders', 'cust', 'S', 'day', 'S', '[{"IndexName": "ByAmount",
	  "KeySchema": [{"AttributeName": "cust", "KeyType": "HASH"},
	                {"AttributeName": "amount", "KeyType": "RANGE", "AttributeType": "N"}],
	  "Projection": {"ProjectionType": "KEYS_ONLY"}}]');
	SELECT ddb_put_item('orders', jsonb_build_object('cust', 'c' || (i % 3), 'day', 'd' || i, 'amount', i * 7 % 10))
	  FROM generate_series(1, 30) i;
});

# Items that expire two seconds from now, one that does not, one without a
# number TTL, and an expired item in a table without TTL.
my $setup = q{
	SELECT ddb_put_item('sessions', jsonb_build_object('id', 'e' || i, 'usr', 'u' || i,
	                    'exp', extract(epoch FROM clock_timestamp()) + 2))
	  FROM generate_series(1, 50) i;
	SELECT ddb_put_item('sessions', jsonb_build_object('id', 'keep', 'usr', 'k',
	                    'exp', extract(epoch FROM clock_timestamp()) + 3600));
	SELECT ddb_put_item('sessions', '{"id": "str", "usr": "s", "exp": "tomorrow"}');
};
# before the writes: no item expires before $start + 2
my $start = time();
$node->safe_psql('app', $setup . q{
	SELECT ddb_put_item('notl', jsonb_build_object('id', 'old', 'exp', 1000));
});
$node->safe_psql('other', $setup);

# Poll (a bounded wait) until both databases' items are gone.
my $count = q{SELECT count(*) FROM ddb_scan('sessions') x WHERE x->>'id' LIKE 'e%'};
my ($app, $other);
while (time() - $start < 30)
{
	$app = $node->safe_psql('app', $count);
	$other = $node->safe_psql('other', $count);
	last if $app eq '0' && $other eq '0';
	usleep(100_000);
}
my $took = time() - $start;
is($app, '0', 'the worker deleted the expired items in database app');
is($other, '0', 'and in database other');
# expiry 2 s + interval 1 s, and slack for a loaded machine
cmp_ok($took, '<', 10, sprintf('within the interval of their expiry (%.1f s after writing)', $took));
cmp_ok($took, '>=', 2, 'and not before they expired');

for my $db ('app', 'other')
{
	is($node->safe_psql($db, q{SELECT string_agg(x->>'id', ' ' ORDER BY x->>'id') FROM ddb_scan('sessions') x}),
		'keep str', "$db: unexpired items and items without a number TTL stay");
	like($node->safe_psql($db, q{SELECT ddb_verify_gsi('sessions')}),
		qr/\{"items": 2, "entries": 1, "IndexName": "\$ttl"\}, \{"items": 2, "entries": 2, "IndexName": "ByUser"\}/,
		"$db: the TTL index and the GSI hold exactly the remaining items");
}
is($node->safe_psql('app', q{SELECT count(*) FROM ddb_scan('notl')}), '1',
	'a table without TTL keeps its items');
ok(!$node->log_contains(qr/terminated by signal|ddb ttl.*ERROR|ERROR.*ddb ttl/),
	'no ddb ttl process failed');

# Stream retention: the worker removes records older than
# ddb.stream_retention (2 s here) without being asked, and later records
# are read as usual.
$node->safe_psql('app', q{
	SELECT ddb_create_table('events', 'id');
	SELECT ddb_update_stream('events', 'NEW_IMAGE');
});
# (counted in the writing transaction: on a stalled machine the retention
# could pass between a commit and a count after it)
my $records = q{SELECT count(*) FROM ddb_internal.stream_records};
is($node->safe_psql('app', qq{BEGIN;
	SELECT ddb_put_item('events', jsonb_build_object('id', 'ev' || i)) FROM generate_series(1, 5) i \\g /dev/null
	$records; COMMIT;}), '5', 'a stream with five records');
my $rstart = time();
my $left;
while (time() - $rstart < 30)
{
	$left = $node->safe_psql('app', $records);
	last if $left eq '0';
	usleep(100_000);
}
is($left, '0', sprintf('the worker removed them after the retention (%.1f s)', time() - $rstart));
$node->safe_psql('app', q{SELECT ddb_put_item('events', '{"id": "later"}')});
is($node->safe_psql('app', q{SELECT string_agg(r->'dynamodb'->'Keys'->>'id', ',') FROM ddb_stream_records('events') r}),
	'later', 'a record written after the sweep is read');

# The worker deletes in transactions of 500 items, each in key order: with
# 1,200 expired items (expiring in key order) and item 700 locked by an
# open transaction, the first 500 are gone for good while the worker
# waits at item 700 in its second transaction, whose deletions (501 to
# 699) nobody sees yet; when the lock goes, the rest go too.
$node->safe_psql('app', q{
	SELECT ddb_create_table('bulk', 'id', 'N');
	INSERT INTO bulk SELECT i, jsonb_build_object('exp', extract(epoch FROM now())::bigint - 100000 + i)
	  FROM generate_series(1, 1200) i;
});
my $holder = $node->background_psql('app');
$holder->query_safe('BEGIN; SELECT id FROM bulk WHERE id = 700 FOR UPDATE;');
$node->safe_psql('app', q{SELECT ddb_update_time_to_live('bulk', 'exp', true)});
ok($node->poll_query_until('app', q{
	SELECT count(*) FROM pg_stat_activity WHERE query = 'ddb ttl sweep' AND wait_event_type = 'Lock'}, '1'),
	'the worker waits for the locked item');
is($node->safe_psql('app', q{SELECT count(*) FROM bulk}), '700',
	'having committed one transaction of 500 items before it');
# one worker at a time: the launcher (connected to no database) waits for
# it, so two max_worker_processes slots are all TTL takes
is($node->safe_psql('app', q{
	SELECT string_agg(backend_type || ' in ' || coalesce(datname, 'no database'), ', ' ORDER BY backend_type)
	  FROM pg_stat_activity WHERE backend_type LIKE 'ddb ttl%'}),
	'ddb ttl launcher in no database, ddb ttl worker in app',
	'a launcher and one worker, whatever the number of databases');
$holder->query_safe('COMMIT');
$holder->quit;
ok($node->poll_query_until('app', q{SELECT count(*) FROM bulk}, '0'),
	'and it deletes the rest once the lock is gone');
like($node->safe_psql('app', q{SELECT ddb_verify_gsi('bulk')}), qr/\{"items": 0, "entries": 0, "IndexName": "\$ttl"\}/,
	'the TTL index is empty with them');
$node->safe_psql('app', q{DROP TABLE bulk});

# pg_dump / pg_restore: TTL stays enabled and the restored table is swept.
my $dumpfile = $node->basedir . '/app.dump';
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dumpfile, '-h', $node->host, '-p', $node->port, 'app' ],
	'pg_dump of a database with TTL');
$node->safe_psql('postgres', q{ALTER SYSTEM SET ddb.ttl_interval = 0});
$node->reload;
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok([ 'pg_restore', '-d', 'restored', '-h', $node->host, '-p', $node->port, $dumpfile ],
	'pg_restore');
is($node->safe_psql('restored', q{SELECT ddb_describe_time_to_live('sessions')}),
	'{"AttributeName": "exp", "TimeToLiveStatus": "ENABLED"}', 'TTL is enabled after the restore');
$node->safe_psql('restored', q{
	SELECT ddb_put_item('sessions', jsonb_build_object('id', 'gone', 'exp', extract(epoch FROM now()) - 5));
});
is($node->safe_psql('restored', q{SELECT ddb_ttl_sweep('sessions')}), '1',
	'the restored TTL index is maintained and swept');
like($node->safe_psql('restored', q{SELECT ddb_verify_gsi('sessions')}), qr/"IndexName": "\$ttl"/,
	'the restored TTL index verifies');

# The LSI table: its index and item collection sizes come back and are kept.
my $lsi_state = q{SELECT ddb_verify_gsi('orders')::text || ' ' ||
	(SELECT string_agg(x->>'day', ',') FROM ddb_query('orders', 'cust = :c', '{":c": "c1"}', index_name => 'ByAmount') x)};
is($node->safe_psql('restored', $lsi_state), $node->safe_psql('app', $lsi_state),
	'the LSI and the item collections are restored as they were');
$node->safe_psql('restored', q{SELECT ddb_put_item('orders', '{"cust": "c1", "day": "d99", "amount": 3}')});
like($node->safe_psql('restored', q{SELECT ddb_verify_gsi('orders')}),
	qr/\{"items": 31, "IndexName": "\$collections", "collections": 3\}, \{"items": 31, "entries": 31, "IndexName": "ByAmount"\}/,
	'and kept by writes after the restore');

$node->stop;
done_testing();
