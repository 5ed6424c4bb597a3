# SPDX-License-Identifier: MIT
# perl workload for tests/integration/run_program.sh: hashes of arrays,
# sort with a custom comparison, regular expressions with captures, sprintf,
# join/split, string repetition and substitution, and references freed and
# rebuilt in rounds. Reads the generated words file; every walk over a hash
# is sorted, so the output depends only on the input.
use strict;
use warnings;
use List::Util qw(sum max);

my (%count, %by_first, @lines, %pos);
while (my $line = <>) {
    chomp $line;
    push @lines, $line;
    my @w = split / /, $line;
    for my $i (0 .. $#w) {
        $count{$w[$i]}++;
        push @{ $by_first{ substr($w[$i], 0, 2) } }, $w[$i];
        push @{ $pos{$w[$i]} }, "$.:$i" if $count{$w[$i]} <= 3;
    }
}
printf "lines %d distinct %d prefixes %d\n", scalar @lines, scalar keys %count, scalar keys %by_first;

my @top = (sort { $count{$b} <=> $count{$a} || $a cmp $b } keys %count)[0 .. 14];
printf "top %-14s %5d at %s\n", $_, $count{$_}, join(",", @{ $pos{$_} }) for @top;

for my $p (sort keys %by_first) {
    my %seen;
    my @u = grep { !$seen{$_}++ } sort @{ $by_first{$p} };
    printf "prefix %s %5d words %4d unique longest %s\n", $p, scalar @{ $by_first{$p} },
        scalar @u, (sort { length($b) <=> length($a) || $a cmp $b } @u)[0];
}

# Words with digits: captures, numeric sums, a histogram built with sprintf keys.
my (%hist, $digits);
for my $line (@lines) {
    while ($line =~ /\b([a-z]+?)(\d+)\b/g) {
        $digits += $2;
        $hist{ sprintf "%s-%03d", substr($1, 0, 1), $2 % 1000 / 100 }++;
    }
}
printf "digits sum %d buckets %d max %d\n", $digits, scalar keys %hist, max(values %hist);
print join(" ", map { "$_=$hist{$_}" } (sort keys %hist)[0 .. 9]), "\n";

# Rounds of building and dropping nested structures.
my $check = 0;
for my $round (1 .. 8) {
    my %tree;
    for my $i (0 .. $#lines) {
        next if $i % 8 != $round - 1;
        my @w = split / /, $lines[$i];
        my $node = \%tree;
        $node = ($node->{$_} //= {}) for @w[0 .. ($#w < 2 ? $#w : 2)];
        $node->{"#"} = ($lines[$i] x 3) =~ tr/aeiou//;
    }
    my @stack = (\%tree);
    my ($nodes, $leaves) = (0, 0);
    while (my $n = pop @stack) {
        $nodes++;
        for my $k (sort keys %$n) {
            if ($k eq "#") { $leaves += $n->{$k} } else { push @stack, $n->{$k} }
        }
    }
    printf "round %d nodes %d vowels %d\n", $round, $nodes, $leaves;
    $check += $nodes;
}

# A text rewritten with substitutions, printed whole.
for my $line (reverse @lines) {
    (my $t = $line) =~ s/(\w)(\w*)/\u$1\L$2/g;
    $t =~ s/(\d+)/sprintf("<%x>", $1)/ge;
    print $t, "\n";
}
printf "check %d\n", $check;
