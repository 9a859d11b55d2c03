
# Copyright (c) ddb authors

# Differential fuzzing against a heap twin, with fixed seeds.
#
# Every write goes to a ddb table and to a heap table of the same rows (its
# twin) in one statement -- a DO block -- so the two share every fate: a
# savepoint rolled back or released, an exception block's rollback, a
# TRUNCATE (twice in one savepoint: the second truncates the first one's
# file in place), a DROP TABLE in a savepoint rolled back, a table rewrite,
# a ROLLBACK, a PREPARE TRANSACTION committed or rolled back.  The writes
# are SQL (INSERT, UPDATE, DELETE, MERGE, COPY) and the item functions
# (ddb_put_item, ddb_update_item, ddb_delete_item, ddb_batch_write_item),
# with VACUUM between transactions, over two twin pairs (one is dropped in
# a savepoint while the other is written).  Some transactions write more
# versions than the pending list of deferred row-id map entries holds
# (DDB_MAX_PENDING in ddb_rowid.c, 65536), which writes it out in the
# middle of the transaction.  That list is where the bugs this kind of
# test found lived: entries of a rolled-back subtransaction written at
# commit, those of an earlier file voided by an in-place TRUNCATE, those
# of a table dropped in a savepoint voided by a flush.
#
# The oracles, after each seed, for each twin pair: the ddb table holds
# exactly the rows of its twin (ordered dumps compared), ddb_verify is
# clean with no orphan map entries (also after a VACUUM), an UPDATE of
# every row succeeds (a version without its map entry fails it with
# "failed to fetch tuple being updated") and leaves the twins equal, and
# once everything is deleted and VACUUMed nothing is left, in the tree or
# the map.  A generated statement also checks what it can at once: a key
# the twin has is refused by a ddb INSERT and by a put conditioned on its
# absence, and a batch leaves nothing unprocessed.
#
# Then two clients at once, each on partitions of its own (DML only, so
# that no lock order between them can deadlock), and the same oracles.
#
# The oracles are shown failing on planted differences first: a twin
# missing a row, a twin with one item changed, ddb_verify failing, orphan
# map entries or items left in its report, an UPDATE that fails.
#
# DDB_TAP_WAL=custom runs it with ddb preloaded (test/t/DdbWal.pm): a single
# write then sets its map entry in its own record, and only batches (COPY's
# row path, BatchWriteItem) defer theirs.  DDB_FUZZ_TAP_SEEDS="4 5 6" runs
# other seeds (by hand: a new seed's failure is a finding, not a flake).

use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib $FindBin::RealBin;
use DdbWal;

plan skip_all => 'the item functions and ddb_verify need ddb tables'
  if ($ENV{DDB_TAP_AM} || 'ddb') ne 'ddb';

my @seeds = split ' ', ($ENV{DDB_FUZZ_TAP_SEEDS} // '1 2 3');
my $ntx = 20;             # transactions of a seed
my $ntx_conc = 16;        # transactions of each concurrent client
my @pairs = ([ 'fza', 'fza_h' ], [ 'fzb', 'fzb_h' ]);

# ---------------------------------------------------------------------------
# A deterministic random stream (Park-Miller): the same on every platform
# and Perl, unlike rand().
# ---------------------------------------------------------------------------
my $rs = 1;
sub rseed { my ($s) = @_; $rs = ($s * 7919 + 104729) % 2147483647 || 1; rnd() for 1 .. 4; return; }
sub rnd { $rs = ($rs * 48271) % 2147483647; return $rs; }
sub r { my ($n) = @_; return rnd() % $n; }
sub chance { my ($p) = @_; return rnd() < $p * 2147483647; }
sub pick { return $_[ r(scalar @_) ]; }

sub lit { my ($s) = @_; $s =~ s/'/''/g; return "'$s'"; }

# ---------------------------------------------------------------------------
# The generator.  $g: seed, prefix (of the partition keys: a client's own),
# ddl (TRUNCATE, DROP, rewrites: one client only), dir (for COPY's files),
# np partitions and ns sort keys of the small key space, fresh (the next
# unused key of the bulk key space), out (the script), used (what it did).
# ---------------------------------------------------------------------------
sub gen_new
{
	my (%o) = @_;
	rseed($o{seed});
	return {
		%o,
		np => pick(1, 3, 8),
		ns => pick(40, 400, 3000),
		fresh => 0,
		nfile => 0,
		nprep => 0,
		nbig => 0,
		out => [],
		used => {},
	};
}

sub emit { my ($g, $s) = @_; push @{ $g->{out} }, $s; return; }
sub used { my ($g, $what) = @_; $g->{used}{$what}++; return; }

sub do_block
{
	my ($g, $body) = @_;
	emit($g, "DO \$fz\$ DECLARE it jsonb; r jsonb; BEGIN\n$body\nEND \$fz\$;");
	return;
}

# A failed check inside a generated statement: never caught (the exception
# blocks catch unique_violation, DB002 and raise_exception only).
sub bad { my ($msg) = @_; return "RAISE EXCEPTION USING ERRCODE = 'FZ001', MESSAGE = " . lit("FZBAD $msg") . ";"; }

sub key
{
	my ($g) = @_;
	return (lit($g->{prefix} . 'p' . r($g->{np})), lit(sprintf('s%05d', r($g->{ns}))));
}
sub keyw { my ($p, $s) = @_; return qq{"PK" = $p AND "SK" = $s}; }
# the partition key of bulk row g
sub bulk_pk { my ($g, $v) = @_; return lit($g->{prefix} . 'p') . " || ($v % $g->{np})"; }
sub bulk_sk { my ($v) = @_; return "'g' || lpad(($v)::text, 7, '0')"; }

# Fresh bulk keys: n of them, never used before (rows rolled back included).
sub fresh
{
	my ($g, $n) = @_;
	my $lo = $g->{fresh};
	$g->{fresh} += $n;
	return ($lo, $lo + $n - 1);
}

# A bulk op's size: a big one (more map entries than the pending list
# holds) where the generator asks for it, and at most once a seed besides,
# where it allows them.
sub bulk_n
{
	my ($g, @small) = @_;
	if ($g->{big} && ($g->{force_big} || ($g->{nbig} < 1 && chance(0.1))))
	{
		$g->{nbig}++ unless $g->{force_big};
		used($g, 'overflow');
		return 70000;
	}
	return pick(@small);
}

sub pad_expr
{
	my $x = r(100);
	return "''" if $x < 50;
	return 'repeat(' . lit('x') . ', ' . pick(10, 100, 400, 1500) . ')' if $x < 85;
	# incompressible: stored out of line
	return '(SELECT string_agg(md5((i + ' . r(1000000) . ")::text), '') FROM generate_series(1, "
	  . pick(80, 300) . ') i)';
}
sub item_expr { my ($n) = @_; return "jsonb_build_object('n', $n, 'pad', " . pad_expr() . ')'; }

# A range of sort keys of the client's partitions, in either key space.
sub range_where
{
	my ($g) = @_;
	my $w;
	if (chance(0.5) || $g->{fresh} == 0)
	{
		my $lo = r($g->{ns});
		$w = sprintf(q{"SK" >= 's%05d' AND "SK" < 's%05d'}, $lo, $lo + pick(2, 20, 300));
	}
	else
	{
		my $lo = r($g->{fresh});
		$w = sprintf(q{"SK" >= 'g%07d' AND "SK" < 'g%07d'}, $lo, $lo + pick(10, 500, 5000));
	}
	$w .= ' AND "PK" LIKE ' . lit($g->{prefix} . 'p%') if $g->{prefix} ne '';
	return $w;
}

# ---- the operations: PL/pgSQL that writes a pair (D, H) alike ------------
my %op;

$op{ins} = sub {
	my ($g, $d, $h) = @_;
	my ($p, $s) = key($g);
	my $k = keyw($p, $s);
	return "it := " . item_expr(r(100)) . ";\n"
	  . "IF EXISTS (SELECT FROM $h WHERE $k) THEN\n"
	  . "  BEGIN INSERT INTO $d VALUES ($p, $s, it); " . bad("$d took a second item of a key")
	  . " EXCEPTION WHEN unique_violation THEN NULL; END;\n"
	  . "ELSE\n  INSERT INTO $d VALUES ($p, $s, it);\n  INSERT INTO $h VALUES ($p, $s, it);\nEND IF;";
};

$op{ins_many} = sub {
	my ($g, $d, $h) = @_;
	my ($lo, $hi) = fresh($g, bulk_n($g, 5, 50, 300));
	my $sel = 'SELECT ' . bulk_pk($g, 'g') . ', ' . bulk_sk('g')
	  . ", jsonb_build_object('n', g, 'pad', repeat('y', " . pick(0, 50, 400) . "))"
	  . " FROM generate_series($lo, $hi) g";
	return "INSERT INTO $d $sel;\nINSERT INTO $h $sel;";
};

$op{upd} = sub {
	my ($g, $d, $h) = @_;
	my ($p, $s) = key($g);
	my $x = r(100);
	my $w = $x < 50 ? keyw($p, $s) : $x < 65 ? qq{"PK" = $p} : range_where($g);
	if (chance(0.3))
	{
		return "it := " . item_expr(r(1000)) . ";\n"
		  . "UPDATE $d SET item = it WHERE $w;\nUPDATE $h SET item = it WHERE $w;";
	}
	my $v = r(1000);
	return "UPDATE $d SET item = item || '{\"u\": $v}' WHERE $w;\n"
	  . "UPDATE $h SET item = item || '{\"u\": $v}' WHERE $w;";
};

$op{del} = sub {
	my ($g, $d, $h) = @_;
	my $w = chance(0.25) ? range_where($g) : keyw(key($g));
	return "DELETE FROM $d WHERE $w;\nDELETE FROM $h WHERE $w;";
};

$op{merge} = sub {
	my ($g, $d, $h) = @_;
	my ($p, $s) = key($g);
	my $v = r(1000);
	my $act = pick("UPDATE SET item = t.item || '{\"m\": $v}'", 'DELETE');
	my $m = "MERGE INTO %s t USING (VALUES ($p, $s)) v(p, s) ON t.\"PK\" = v.p AND t.\"SK\" = v.s "
	  . "WHEN MATCHED THEN $act WHEN NOT MATCHED THEN INSERT VALUES (v.p, v.s, '{\"n\": $v}');";
	return sprintf($m, $d) . "\n" . sprintf($m, $h);
};

$op{put_item} = sub {
	my ($g, $d, $h) = @_;
	my ($p, $s) = key($g);
	my $k = keyw($p, $s);
	my $put = "ddb_put_item('$d', it || jsonb_build_object('PK', $p, 'SK', $s)";
	my $twin = "DELETE FROM $h WHERE $k;\nINSERT INTO $h VALUES ($p, $s, it);";
	my $body = "it := " . item_expr(r(100)) . ";\n";
	return $body . "PERFORM $put);\n$twin" unless chance(0.3);
	return $body
	  . "IF EXISTS (SELECT FROM $h WHERE $k) THEN\n"
	  . "  BEGIN PERFORM $put, 'attribute_not_exists(PK)'); " . bad("conditional put of $d overwrote")
	  . " EXCEPTION WHEN SQLSTATE 'DB002' THEN NULL; END;\n"
	  . "ELSE\n  PERFORM $put, 'attribute_not_exists(PK)');\n$twin\nEND IF;";
};

$op{update_item} = sub {
	my ($g, $d, $h) = @_;
	my ($p, $s) = key($g);
	my $k = keyw($p, $s);
	my $key = "jsonb_build_object('PK', $p, 'SK', $s)";
	if (chance(0.5))
	{
		my $v = r(100);
		return "PERFORM ddb_update_item('$d', $key, 'SET n = :v', vals => '{\":v\": $v}');\n"
		  . "INSERT INTO $h VALUES ($p, $s, '{\"n\": $v}') ON CONFLICT (\"PK\", \"SK\") DO UPDATE SET item = $h.item || '{\"n\": $v}';";
	}
	my $call = "ddb_update_item('$d', $key, 'SET n = n + :one', 'attribute_exists(PK)', vals => '{\":one\": 1}')";
	return "IF EXISTS (SELECT FROM $h WHERE $k) THEN\n"
	  . "  PERFORM $call;\n"
	  . "  UPDATE $h SET item = jsonb_set(item, '{n}', to_jsonb((item->>'n')::numeric + 1)) WHERE $k;\n"
	  . "ELSE\n  BEGIN PERFORM $call; " . bad("conditional update of $d found an item")
	  . " EXCEPTION WHEN SQLSTATE 'DB002' THEN NULL; END;\nEND IF;";
};

$op{delete_item} = sub {
	my ($g, $d, $h) = @_;
	my ($p, $s) = key($g);
	return "PERFORM ddb_delete_item('$d', jsonb_build_object('PK', $p, 'SK', $s));\n"
	  . "DELETE FROM $h WHERE " . keyw($p, $s) . ";";
};

# one BatchWriteItem of distinct keys, puts and deletes
$op{batch} = sub {
	my ($g, $d, $h) = @_;
	my (%seen, @req, @twin);
	for (1 .. pick(3, 10, 25))
	{
		my ($p, $s) = key($g);
		next if $seen{"$p$s"}++;
		my $k = keyw($p, $s);
		if (chance(0.75))
		{
			my $it = "'n', " . r(100) . ", 'pad', repeat('z', " . pick(0, 100, 700) . ')';
			push @req, "jsonb_build_object('PutRequest', jsonb_build_object('Item', jsonb_build_object('PK', $p, 'SK', $s, $it)))";
			push @twin, "DELETE FROM $h WHERE $k;\nINSERT INTO $h VALUES ($p, $s, jsonb_build_object($it));";
		}
		else
		{
			push @req, "jsonb_build_object('DeleteRequest', jsonb_build_object('Key', jsonb_build_object('PK', $p, 'SK', $s)))";
			push @twin, "DELETE FROM $h WHERE $k;";
		}
	}
	return "r := ddb_batch_write_item(jsonb_build_object('$d', jsonb_build_array(" . join(",\n  ", @req) . ")));\n"
	  . "IF r->'UnprocessedItems' <> '{}' THEN " . bad("batch left items unprocessed") . " END IF;\n"
	  . join("\n", @twin);
};

# many batches of new keys, some rolled back in exception blocks (their
# dead versions sit beside the next batches' keys, and are pruned when a
# leaf fills); a big one writes more entries than the pending list holds
$op{batch_loop} = sub {
	my ($g, $d, $h) = @_;
	my $nb = bulk_n($g, 4, 20, 40);
	my $big = $nb == 70000;
	$nb = 2700 if $big;
	my ($lo) = fresh($g, $nb * 25);
	my $mod = $big ? 0 : pick(2, 3, 5);
	my $v = "($lo + j * 25 + i)";
	my $pad = pick(0, 100, 600);
	my $itm = 'jsonb_build_object(' . "'PK', " . bulk_pk($g, $v) . ", 'SK', " . bulk_sk($v)
	  . ", 'n', j, 'pad', repeat('b', $pad))";
	my $body = "r := ddb_batch_write_item(jsonb_build_object('$d', (SELECT jsonb_agg(jsonb_build_object('PutRequest', jsonb_build_object('Item', $itm))) FROM generate_series(0, 24) i)));\n"
	  . "INSERT INTO $h SELECT " . bulk_pk($g, $v) . ', ' . bulk_sk($v) . ", jsonb_build_object('n', j, 'pad', repeat('b', $pad)) FROM generate_series(0, 24) i;\n";
	$body = "BEGIN\n$body" . "IF j % $mod = 1 THEN RAISE EXCEPTION 'roll back'; END IF;\n"
	  . "EXCEPTION WHEN raise_exception THEN NULL;\nEND;\n" if $mod;
	return "FOR j IN 0 .. " . ($nb - 1) . " LOOP\n$body" . "END LOOP;";
};

# COPY from a file both read (into a table whose file is new in this
# subtransaction it is spooled and built at the end: ddb_bulk.c)
$op{copy} = sub {
	my ($g, $d, $h) = @_;
	my ($lo, $hi) = fresh($g, bulk_n($g, 5, 300, 2000));
	my $f = sprintf('%s/copy_%s%d_%d.tsv', $g->{dir}, $g->{prefix}, $g->{seed}, ++$g->{nfile});
	my $pad = 'c' x pick(0, 0, 50, 300);
	open my $fh, '>', $f or die "cannot write $f: $!";
	printf $fh "%sp%d\tg%07d\t{\"n\": %d, \"pad\": \"%s\"}\n", $g->{prefix}, $_ % $g->{np}, $_, $_, $pad
	  for $lo .. $hi;
	close $fh;
	used($g, 'copy');
	return "EXECUTE 'COPY $d FROM ' || " . lit(lit($f)) . ";\nEXECUTE 'COPY $h FROM ' || " . lit(lit($f)) . ";";
};

# one key written over and over, some of the writes rolled back
$op{hot} = sub {
	my ($g, $d, $h) = @_;
	my ($p, $s) = key($g);
	my $k = keyw($p, $s);
	my $pad = pick(0, 200, 1000);
	my $it = "jsonb_build_object('n', i, 'pad', repeat('h', $pad))";
	my $w = chance(0.5)
	  ? "DELETE FROM $d WHERE $k;\nDELETE FROM $h WHERE $k;\nINSERT INTO $d VALUES ($p, $s, $it);\nINSERT INTO $h VALUES ($p, $s, $it);\n"
	  : "PERFORM ddb_update_item('$d', jsonb_build_object('PK', $p, 'SK', $s), 'SET n = :v, #p = :p', names => '{\"#p\": \"pad\"}', vals => jsonb_build_object(':v', i, ':p', repeat('h', $pad)));\n"
	  . "INSERT INTO $h VALUES ($p, $s, $it) ON CONFLICT (\"PK\", \"SK\") DO UPDATE SET item = $h.item || $it;\n";
	return "FOR i IN 1 .. " . pick(20, 100, 300) . " LOOP\nBEGIN\n$w"
	  . "IF i % " . pick(2, 3, 7) . " = 0 THEN RAISE EXCEPTION 'roll back'; END IF;\n"
	  . "EXCEPTION WHEN raise_exception THEN NULL;\nEND;\nEND LOOP;";
};

$op{truncate} = sub { my ($g, $d, $h) = @_; used($g, 'truncate'); return "TRUNCATE $d;\nTRUNCATE $h;"; };

# the second TRUNCATE truncates the first one's file in place
$op{truncate2} = sub {
	my ($g, $d, $h) = @_;
	used($g, 'truncate2');
	return join("\n", "TRUNCATE $d;\nTRUNCATE $h;", $op{ins_many}->($g, $d, $h), $op{batch}->($g, $d, $h),
		"TRUNCATE $d;\nTRUNCATE $h;", $op{ins}->($g, $d, $h));
};

# a rewrite through heap and back (ddb_relation_copy_data, the map anew)
$op{setam} = sub {
	my ($g, $d, $h) = @_;
	used($g, 'rewrite');
	return "ALTER TABLE $d SET ACCESS METHOD heap;\nALTER TABLE $d SET ACCESS METHOD ddb;";
};

# in the middle of a transaction, its own entries written first
$op{verify} = sub {
	my ($g, $d, $h) = @_;
	return "IF (ddb_verify('$d') ->> 'orphan_map_entries')::int <> 0 THEN " . bad("orphan map entries in $d") . " END IF;";
};

my @ops = (
	[ ins => 10 ], [ ins_many => 4 ], [ upd => 10 ], [ del => 7 ], [ merge => 3 ],
	[ put_item => 8 ], [ update_item => 8 ], [ delete_item => 5 ], [ batch => 8 ], [ batch_loop => 4 ],
	[ copy => 4 ], [ hot => 2 ], [ truncate => 1 ], [ truncate2 => 2 ], [ setam => 1 ], [ verify => 2 ]);
my %ddl = map { $_ => 1 } qw(truncate truncate2 setam verify);

sub pick_op
{
	my ($g) = @_;
	my @can = grep { $g->{ddl} || !$ddl{ $_->[0] } } @ops;
	my $total = 0;
	$total += $_->[1] for @can;
	my $x = r($total);
	for (@can)
	{
		return $_->[0] if $x < $_->[1];
		$x -= $_->[1];
	}
	die;
}

sub pair_op
{
	my ($g, $name, $pair) = @_;
	$pair //= $pairs[ r(2) ];
	used($g, $name);
	return $op{$name}->($g, @$pair);
}

sub tx
{
	my ($g) = @_;
	my (@sp, $spn);
	$spn = 0;
	emit($g, 'BEGIN;');
	for (1 .. pick(1, 3, 6, 12))
	{
		my $x = r(100);
		if ($x < 22)
		{
			push @sp, ++$spn;
			emit($g, "SAVEPOINT sp$spn;");
		}
		elsif ($x < 34)
		{
			next unless @sp;
			my $i = r(scalar @sp);
			emit($g, "ROLLBACK TO sp$sp[$i];");
			splice @sp, $i + 1;
			used($g, 'rollback_to');
		}
		elsif ($x < 40)
		{
			next unless @sp;
			my $i = r(scalar @sp);
			emit($g, "RELEASE sp$sp[$i];");
			splice @sp, $i;
			used($g, 'release');
		}
		elsif ($x < 43)
		{
			next unless $g->{ddl};
			# a pair dropped in a savepoint after a batch into it, while
			# the other pair is written to (perhaps past the pending
			# list's size): the rollback brings the table back
			my $i = r(2);
			$spn++;
			do_block($g, pair_op($g, 'batch', $pairs[$i]));
			emit($g, "SAVEPOINT dz$spn;");
			emit($g, "DROP TABLE $pairs[$i][0], $pairs[$i][1];");
			$g->{force_big} = !$g->{used}{drop_in_savepoint} || chance(0.1);
			do_block($g, pair_op($g, pick('batch_loop', 'copy', 'ins_many'), $pairs[ 1 - $i ]));
			$g->{force_big} = 0;
			emit($g, "ROLLBACK TO dz$spn;");
			used($g, 'drop_in_savepoint');
		}
		elsif ($x < 47)
		{
			next unless $g->{ddl};
			# TRUNCATE twice in a savepoint, after deferred entries of the
			# file before it, rolled back or released
			my $pair = $pairs[ r(2) ];
			$spn++;
			do_block($g, pair_op($g, pick('batch', 'copy'), $pair));
			emit($g, "SAVEPOINT tz$spn;");
			do_block($g, pair_op($g, 'truncate2', $pair));
			emit($g, chance(0.7) ? "ROLLBACK TO tz$spn;" : "RELEASE tz$spn;");
			used($g, 'truncate2_in_savepoint');
		}
		elsif ($x < 54)
		{
			# an exception block that rolls two writes back
			do_block($g, "BEGIN\n" . pair_op($g, pick_op($g)) . "\n" . pair_op($g, pick_op($g))
				  . "\nRAISE EXCEPTION 'roll back';\nEXCEPTION WHEN raise_exception THEN NULL;\nEND;");
			used($g, 'exception_rollback');
		}
		do_block($g, pair_op($g, pick_op($g)));
	}
	my $x = r(100);
	if ($x < 65)
	{
		emit($g, 'COMMIT;');
	}
	elsif ($x < 77)
	{
		emit($g, 'ROLLBACK;');
		used($g, 'rollback');
	}
	else
	{
		my $gid = sprintf("fz_%s%d_%d", $g->{prefix}, $g->{seed}, ++$g->{nprep});
		emit($g, "PREPARE TRANSACTION '$gid';");
		emit($g, (chance(0.7) ? 'COMMIT' : 'ROLLBACK') . " PREPARED '$gid';");
		used($g, 'prepared');
	}
	if (chance(0.2))
	{
		emit($g, "VACUUM $pairs[r(2)][0];");
		used($g, 'vacuum');
	}
	return;
}

# The script of a seed (or of one client of one).
sub gen_script
{
	my (%o) = @_;
	my $g = gen_new(%o);
	tx($g) for 1 .. $o{ntx};
	return ($g, join("\n", @{ $g->{out} }) . "\n");
}

# ---------------------------------------------------------------------------
# The oracles.  Each returns '' when all is well, else what is wrong.
# ---------------------------------------------------------------------------

# The ddb table d and its twin h hold the same rows: the ordered dumps
# (key, then item as text) compared by digest, and when they differ, the
# counts and the rows of either missing from the other.  Every pair at once.
sub twin_diff
{
	my ($node, @pairs) = @_;
	my $dump = q{(SELECT count(*) || ':' || coalesce(md5(string_agg(concat_ws(E'\t', "PK", "SK", item::text), E'\n'
		ORDER BY "PK" COLLATE "C", "SK" COLLATE "C")), '') FROM %s)};
	my @dumps = split /\|/, $node->safe_psql('postgres',
		'SELECT ' . join(" || '|' || ", map { sprintf($dump, $_->[0]), sprintf($dump, $_->[1]) } @pairs));
	my @diff;
	for my $pair (@pairs)
	{
		my ($d, $h) = @$pair;
		my ($dd, $hd) = splice @dumps, 0, 2;
		next if $dd eq $hd;
		my $only = q{SELECT count(*) || coalesce(' ' || min(concat_ws(' ', "PK", "SK", item::text)), '')
			FROM (SELECT * FROM %s EXCEPT ALL SELECT * FROM %s) x};
		push @diff, sprintf('%s has %s rows, %s has %s; only in %s: %s; only in %s: %s',
			$d, (split /:/, $dd)[0], $h, (split /:/, $hd)[0],
			$d, $node->safe_psql('postgres', sprintf($only, $d, $h)),
			$h, $node->safe_psql('postgres', sprintf($only, $h, $d)));
	}
	return join('; ', @diff);
}

# ddb_verify's answers ($ret, $out, $err of psql, a line a table) judged:
# it ran clean, and counts no orphan map entries (and, with %want, those
# of its fields).  An empty file (no page at all) has no map to count.
sub verify_judge
{
	my ($ret, $out, $err, %want) = @_;
	return "ddb_verify failed: $err" if $ret != 0;
	for my $v (split /\n/, $out)
	{
		if ($v =~ /"orphan_map_entries": (\d+)/)
		{
			return "orphan map entries: $v" if $1 != 0;
		}
		elsif ($v !~ /"pages": 0\b/)
		{
			return "ddb_verify said: $v";
		}
		for my $f (sort keys %want)
		{
			return "$f is not $want{$f}: $v" unless $v =~ /"$f": (\d+)/ && $1 == $want{$f};
		}
	}
	return '';
}

# ddb_verify of each table, after the SQL $before.
sub verify_problem
{
	my ($node, $before, $tables, %want) = @_;
	return verify_judge($node->psql('postgres', $before . join('', map { "SELECT ddb_verify('$_');\n" } @$tables)), %want);
}

# Every row of each table updated, by an UPDATE of all of it: a version
# whose map entry is missing fails it ("failed to fetch tuple being
# updated"), and one it cannot reach leaves a row not updated.
sub update_problem
{
	my ($node, @tables) = @_;
	my $sql = join(";\n", map {
			"WITH u AS (UPDATE $_ SET item = item || '{\"fin\": 1}' RETURNING 1) SELECT (SELECT count(*) FROM $_) - count(*) FROM u"
	} @tables);
	my ($ret, $out, $err) = $node->psql('postgres', "BEGIN;\n$sql;\nCOMMIT;");
	return "UPDATE of every row failed: $err" if $ret != 0;
	return "rows not updated: $out" if $out =~ /[1-9]/;
	return '';
}

# All of the oracles, for every pair, after a run.
sub check_pairs
{
	my ($node, $label) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my @d = map { $_->[0] } @pairs;
	my @all = map { @$_ } @pairs;
	is(twin_diff($node, @pairs), '', "$label: the ddb tables hold the rows of their heap twins");
	is(verify_problem($node, '', \@d), '', "$label: ddb_verify is clean, no orphan map entries");
	is(verify_problem($node, join('', map { "VACUUM $_;\n" } @d), \@d), '', "$label: ... and after a VACUUM");
	is(update_problem($node, @all), '', "$label: an UPDATE of every row of every table succeeds");
	is(twin_diff($node, @pairs), '', "$label: ... and the twins still hold the same rows");
	is(verify_problem($node, join('', map { "DELETE FROM $_;\n" } @all) . join('', map { "VACUUM $_;\n" } @d), \@d, items => 0),
		'', "$label: all deleted and VACUUMed: no items, no orphan map entries");
	return;
}

sub setup_pairs
{
	my ($node) = @_;
	$node->safe_psql('postgres', join("\n", map {
		my ($d, $h) = @$_;
		qq{DROP TABLE IF EXISTS $d, $h;
		CREATE TABLE $d ("PK" text, "SK" text, item jsonb) USING ddb WITH (autovacuum_enabled = false);
		CREATE TABLE $h ("PK" text, "SK" text, item jsonb, PRIMARY KEY ("PK", "SK"));}
	} @pairs));
	return;
}

# ---------------------------------------------------------------------------
# The server
# ---------------------------------------------------------------------------
my $node = PostgreSQL::Test::Cluster->new('twin');
$node->init;
DdbWal::configure($node);
$node->append_conf('postgresql.conf', qq(
max_prepared_transactions = 10
autovacuum = off
log_min_messages = warning
));
$node->start;
DdbWal::check_mode($node);
$node->safe_psql('postgres', 'CREATE EXTENSION ddb');
my $dir = $node->basedir . '/copy';
mkdir $dir or die "cannot create $dir: $!";

# ---------------------------------------------------------------------------
# The oracles catch planted differences.
# ---------------------------------------------------------------------------
setup_pairs($node);
$node->safe_psql('postgres', q{
	INSERT INTO fza SELECT 'p' || (g % 3), 's' || g, jsonb_build_object('n', g) FROM generate_series(1, 500) g;
	INSERT INTO fza_h SELECT * FROM fza;
	CREATE TABLE plant_missing AS SELECT * FROM fza_h;
	DELETE FROM plant_missing WHERE "SK" = 's250';
	CREATE TABLE plant_changed AS SELECT * FROM fza_h;
	UPDATE plant_changed SET item = '{"n": 0}' WHERE "SK" = 's250';
	CREATE TABLE plant_noupdate ("PK" text, "SK" text, item jsonb CHECK (NOT item ? 'fin'));
	INSERT INTO plant_noupdate VALUES ('p', 's', '{}');
});
is(twin_diff($node, [ 'fza', 'fza_h' ]), '', 'self-test: a true twin compares equal');
is(twin_diff($node, [ 'fza', 'plant_missing' ]),
	'fza has 500 rows, plant_missing has 499; only in fza: 1 p1 s250 {"n": 250}; only in plant_missing: 0',
	'self-test: a twin missing a row is reported');
is(twin_diff($node, [ 'fza', 'fza_h' ], [ 'fza', 'plant_changed' ]),
	'fza has 500 rows, plant_changed has 500; only in fza: 1 p1 s250 {"n": 250}; only in plant_changed: 1 p1 s250 {"n": 0}',
	'self-test: a twin with one item changed is reported, beside a true one');
is(verify_problem($node, '', [ 'fza' ]), '', 'self-test: ddb_verify of a sound table is clean');
like(verify_problem($node, '', [ 'fza', 'fza_h' ]), qr/^ddb_verify failed: .*ERROR/, 'self-test: ddb_verify failing is reported');
like(verify_judge(0, qq({"live": 5, "orphan_map_entries": 0}\n{"live": 5, "orphan_map_entries": 2}), ''), qr/^orphan map entries/,
	'self-test: orphan map entries are reported');
like(verify_judge(0, '{"live": 5, "pages": 3}', ''), qr/^ddb_verify said/, 'self-test: a report without orphan_map_entries is one');
like(verify_judge(0, '{"items": 3, "orphan_map_entries": 0}', '', items => 0), qr/^items is not 0/,
	'self-test: items left after delete and VACUUM are reported');
is(update_problem($node, 'fza', 'fza_h'), '', 'self-test: an UPDATE of every row of a sound pair succeeds');
like(update_problem($node, 'fza', 'plant_noupdate'), qr/^UPDATE of every row failed: .*ERROR/,
	'self-test: an UPDATE that fails is reported');
$node->safe_psql('postgres', 'DROP TABLE plant_missing, plant_changed, plant_noupdate');

# ---------------------------------------------------------------------------
# The seeds, one client
# ---------------------------------------------------------------------------
my %used;
for my $seed (@seeds)
{
	setup_pairs($node);
	my ($g, $script) = gen_script(seed => $seed, prefix => '', ddl => 1, big => 1, dir => $dir, ntx => $ntx);
	$used{$_} += $g->{used}{$_} for keys %{ $g->{used} };
	my $file = "$dir/seed$seed.sql";
	PostgreSQL::Test::Utils::append_to_file($file, $script);
	my ($ret, $out, $err) = $node->psql('postgres', '', timeout => $PostgreSQL::Test::Utils::timeout_default, extra_params => [ '-f', $file ]);
	is($ret, 0, "seed $seed: the script ran (" . scalar(@{ $g->{out} }) . " statements, $file)")
	  or diag $err;
	check_pairs($node, "seed $seed");
	unlink glob("$dir/copy_*");
}

# What the seeds did, between them: a change of weights or sizes that drops
# a case fails here rather than silently.
for my $what (qw(ins ins_many upd del merge put_item update_item delete_item batch batch_loop
	copy hot truncate truncate2 rewrite verify rollback_to release drop_in_savepoint
	truncate2_in_savepoint exception_rollback rollback prepared vacuum overflow))
{
	ok($used{$what}, "the seeds use $what (" . ($used{$what} // 0) . ' times)');
}

# ---------------------------------------------------------------------------
# Two clients at once, each on partitions of its own, DML only
# ---------------------------------------------------------------------------
setup_pairs($node);
my @cfiles;
for my $c (0, 1)
{
	my ($g, $script) = gen_script(seed => 100 + $c, prefix => "c$c", ddl => 0, big => 0, dir => $dir, ntx => $ntx_conc);
	push @cfiles, "$dir/client$c.sql";
	PostgreSQL::Test::Utils::append_to_file($cfiles[-1], $script);
}
my ($out1, $err1) = ('', '');
my $bg = IPC::Run::start(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres'), '-f', $cfiles[1] ],
	'>', \$out1, '2>', \$err1);
my ($ret0, $out0, $err0) = $node->psql('postgres', '', timeout => $PostgreSQL::Test::Utils::timeout_default, extra_params => [ '-f', $cfiles[0] ]);
my $ok1 = $bg->finish;
is($ret0, 0, 'concurrent: client 0 ran its script') or diag $err0;
ok($ok1, 'concurrent: client 1 ran its script') or diag $err1;
check_pairs($node, 'concurrent');

$node->stop;
done_testing();
