# SPDX-License-Identifier: MIT
# jq workload for tests/integration/run_program.sh, run with -s on the JSON
# lines the test makes from the generated words ({"n":..,"text":..}): split,
# group_by, sort_by, unique, reduce into objects, string interpolation, and
# objects rebuilt with to_entries/from_entries. jq keeps keys in insertion
# order and sorts where asked, so the output depends only on the input.
def words: [.[] | .text | split(" ") | .[]];
(words) as $w
| ($w | group_by(.) | map({key: .[0], value: length}) | from_entries) as $count
| {
    lines: length,
    words: ($w | length),
    distinct: ($count | length),
    top: ($count | to_entries | sort_by(-.value, .key) | .[:15] | map("\(.key)=\(.value)")),
    by_first: ($w | group_by(.[:1]) | map({key: .[0][:1], value: {n: length, unique: (unique | length), longest: (max_by(length))}}) | from_entries),
    rewritten: [.[] | select(.n % 3 == 0) | {n, up: (.text | ascii_upcase | split(" ") | map(.[:3]) | join("-")), lens: (.text | split(" ") | map(length) | add)}],
    rounds: [range(4) as $r | [.[] | select(.n % 4 == $r) | .text | split(" ") | {(.[0]): length}] | add | to_entries | sort_by(.key) | {round: $r, keys: length, sum: (map(.value) | add)}]
  }
