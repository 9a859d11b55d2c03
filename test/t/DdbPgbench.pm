
# Copyright (c) ddb authors

# Concurrent workloads for the TAP tests: pgbench clients running a mix of
# named scripts against a node, with a fixed random seed (the scripts'
# random() draws repeat; the interleaving of the clients does not).
#
#   my ($ok, $stdout, $stderr) = DdbPgbench::run($node, \%scripts, \%weights,
#       clients => 6, transactions => 300);
#   my $h = DdbPgbench::start($node, \%scripts, \%weights, seconds => 60,
#       out => \$out, err => \$err);   # in the background; $h->finish
#
# Each script is written to the node's base directory as NAME.sql and run
# with weight $weights{NAME} (default 1).  pgbench replaces :name anywhere
# in a script, string literals included: spell an expression's placeholder
# ':' || 'name' when a pgbench variable of that name may exist.  A
# statement running longer than 5 minutes is cancelled, which fails the run.

package DdbPgbench;

use strict;
use warnings;
use IPC::Run;

sub command
{
	my ($node, $scripts, $weights, %opt) = @_;
	my @files;

	for my $name (sort keys %$scripts)
	{
		my $f = $node->basedir . "/$name.sql";
		open my $fh, '>', $f or die "cannot write $f: $!";
		print $fh $scripts->{$name};
		close $fh;
		push @files, '-f', "$f\@" . ($weights->{$name} // 1);
	}
	return [
		'pgbench', '-n', '--random-seed=' . ($opt{seed} // 1),
		'-c', $opt{clients} // 6, '-j', '2',
		(defined $opt{seconds} ? ('-T', $opt{seconds}) : ('-t', $opt{transactions})),
		@files, '-h', $node->host, '-p', $node->port, 'postgres'
	];
}

sub run
{
	my ($stdout, $stderr);
	# a statement that never ends (a loop in the engine) fails the run
	# instead of hanging it
	local $ENV{PGOPTIONS} = '-c statement_timeout=300s';
	my $ok = IPC::Run::run(command(@_), '>', \$stdout, '2>', \$stderr);
	return ($ok, $stdout, $stderr);
}

sub start
{
	my ($node, $scripts, $weights, %opt) = @_;
	local $ENV{PGOPTIONS} = '-c statement_timeout=300s';
	return IPC::Run::start(command($node, $scripts, $weights, %opt),
		'>', $opt{out}, '2>', $opt{err});
}

1;
