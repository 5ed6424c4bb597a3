# SPDX-License-Identifier: MIT
# gawk workload for tests/integration/run_program.sh: large associative
# arrays (word counts, bigrams, per-length lists), split, asort/asorti, long
# strings built piece by piece, gsub and sprintf over generated words. The
# output depends only on the input (every walk over an array is sorted), so
# the glibc and preloaded runs must print the same bytes. Before 62a0aea
# gawk crashed here under the library: calloc returned non-zero bytes for
# page-backed sizes, and gawk's array buckets come from calloc.
{
    n = split($0, w, " ")
    for (i = 1; i <= n; i++) {
        c = ++count[w[i]]
        if (c == 1 || c % 4 == 0) bylen[length(w[i])] = bylen[length(w[i])] " " w[i]
        if (i > 1) bigram[w[i - 1] SUBSEP w[i]]++
        total++
    }
    line[NR] = $0
    chars += length($0)
}
END {
    printf "lines %d words %d chars %d distinct %d bigrams %d\n", NR, total, chars, length(count), length(bigram)

    # The 20 most frequent words: asort on "count word" keys built with sprintf.
    m = 0
    for (k in count) freq[++m] = sprintf("%08d %s", 99999999 - count[k], k)
    asort(freq)
    for (i = 1; i <= 20 && i <= m; i++) {
        split(freq[i], f, " ")
        printf "top %2d %-20s %d\n", i, f[2], 99999999 - f[1]
    }

    # asorti over the words, and a long string built from every 7th.
    nk = asorti(count, keys)
    s = ""
    for (i = 1; i <= nk; i += 7) s = s keys[i] ","
    printf "keys %d first %s last %s joined %d\n", nk, keys[1], keys[nk], length(s)
    printf "joined %s...%s\n", substr(s, 1, 60), substr(s, length(s) - 59)

    # Per-length buckets: split the long strings again, sort, deduplicate.
    nl = asorti(bylen, lens, "@ind_num_asc")
    for (i = 1; i <= nl; i++) {
        c = split(bylen[lens[i]], parts, " ")
        asort(parts, sorted)
        u = 0
        prev = ""
        for (j = 1; j <= c; j++)
            if (sorted[j] != prev) { u++; prev = sorted[j] }
        printf "len %2d words %6d unique %5d first %s\n", lens[i], c, u, sorted[1]
        delete parts
        delete sorted
    }

    # The bigrams seen more than a few times, sorted by value then key.
    PROCINFO["sorted_in"] = "@val_num_desc"
    b = 0
    for (k in bigram) {
        if (bigram[k] < 5) continue
        split(k, pair, SUBSEP)
        if (++b <= 15) printf "bigram %s+%s %d\n", pair[1], pair[2], bigram[k]
    }
    delete PROCINFO["sorted_in"]
    printf "frequent bigrams %d\n", b

    # Rewrite every line (gsub, toupper, substr) into a reversed text, built
    # up in one string printed in pieces of about 64 KiB.
    out = ""
    for (i = NR; i >= 1; i--) {
        t = line[i]
        gsub(/[aeiou]/, "&&", t)
        t = toupper(substr(t, 1, 1)) substr(t, 2)
        out = out t "\n"
        if (length(out) > 65536) { printf "%s", out; out = "" }
    }
    printf "%s", out

    # Delete half the words and look the rest up again.
    for (i = 1; i <= nk; i += 2) delete count[keys[i]]
    left = 0
    for (i = 2; i <= nk; i += 2) left += (keys[i] in count)
    printf "after delete %d present %d\n", length(count), left
}
