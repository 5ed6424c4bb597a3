# SPDX-License-Identifier: MIT
# The word lists of tests/integration/run_program.sh: `awk -v lines=N -v
# vocab=V -f words.awk` prints N lines of 3 to 15 words drawn, skewed towards
# the first ones, from a vocabulary of V made-up words (some with digits).
# An LCG whose products stay below 2^53 keeps the output the same under any
# awk that computes in doubles (mawk, gawk).
function rnd(n) { x = (x * 69069 + 1) % 4294967296; return int(x / 65536) % n }
BEGIN {
    nsyl = split("ka lo mi ne ru sa to vi be da fu go hi je ku la mo ni po qu re si tu wa xe yo zu an el or", syl, " ")
    x = seed ? seed : 1
    for (w = 0; w < vocab; w++) {
        s = ""
        len = 1 + rnd(4)
        for (j = 0; j < len; j++) s = s syl[1 + rnd(nsyl)]
        word[w] = s (rnd(3) == 0 ? w : "")
    }
    for (i = 1; i <= lines; i++) {
        n = 3 + rnd(13)
        line = ""
        for (j = 0; j < n; j++) line = line (j ? " " : "") word[rnd(1 + rnd(vocab))]
        print line
    }
}
