/* SPDX-License-Identifier: MIT */
/* Unit tests of the AArch64 load/store decoder against words from aarch64-linux-gnu-as.
 * Must not depend on the host architecture: the decoder is pure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "decode.h"

struct insn_case {
    uint32_t word;
    const char *text; /* objdump's disassembly, for failure messages */
    bool known;
    unsigned size;
    bool is_read, is_write;
};

/* Words assembled with `aarch64-linux-gnu-as` (.arch armv8.7-a+lse+rcpc+memtag+ls64). */
static const struct insn_case cases[] = {
    {0xf9400020, "ldr x0, [x1]", true, 8, true, false},
    {0xb9400420, "ldr w0, [x1, #4]", true, 4, true, false},
    {0x39400420, "ldrb w0, [x1, #1]", true, 1, true, false},
    {0x79400420, "ldrh w0, [x1, #2]", true, 2, true, false},
    {0x39000062, "strb w2, [x3]", true, 1, false, true},
    {0x79000462, "strh w2, [x3, #2]", true, 2, false, true},
    {0xb9000062, "str w2, [x3]", true, 4, false, true},
    {0xf9000462, "str x2, [x3, #8]", true, 8, false, true},
    {0x39800020, "ldrsb x0, [x1]", true, 1, true, false},
    {0x39c00020, "ldrsb w0, [x1]", true, 1, true, false},
    {0x79800020, "ldrsh x0, [x1]", true, 2, true, false},
    {0x79c00020, "ldrsh w0, [x1]", true, 2, true, false},
    {0xb9800020, "ldrsw x0, [x1]", true, 4, true, false},
    {0xf8408c20, "ldr x0, [x1, #8]!", true, 8, true, false},
    {0xf8408420, "ldr x0, [x1], #8", true, 8, true, false},
    {0xb81fcc20, "str w0, [x1, #-4]!", true, 4, false, true},
    {0xf85ff020, "ldur x0, [x1, #-1]", true, 8, true, false},
    {0xb8003020, "stur w0, [x1, #3]", true, 4, false, true},
    {0x385ff020, "ldurb w0, [x1, #-1]", true, 1, true, false},
    {0xb89fd020, "ldursw x0, [x1, #-3]", true, 4, true, false},
    {0xf8626820, "ldr x0, [x1, x2]", true, 8, true, false},
    {0xb8625820, "ldr w0, [x1, w2, uxtw #2]", true, 4, true, false},
    {0x38226820, "strb w0, [x1, x2]", true, 1, false, true},
    {0x78a27820, "ldrsh x0, [x1, x2, lsl #1]", true, 2, true, false},
    {0xf8400820, "ldtr x0, [x1]", true, 8, true, false},
    {0x38000820, "sttrb w0, [x1]", true, 1, false, true},
    {0x58000be0, "ldr x0, lit", true, 8, true, false},
    {0x18000bc0, "ldr w0, lit", true, 4, true, false},
    {0x98000ba0, "ldrsw x0, lit", true, 4, true, false},
    {0x9c000b80, "ldr q0, lit", true, 16, true, false},
    {0x5c000b60, "ldr d0, lit", true, 8, true, false},
    {0x1c000b40, "ldr s0, lit", true, 4, true, false},
    {0xd8000b20, "prfm pldl1keep, lit", false, 0, false, false},
    {0xf9800020, "prfm pldl1keep, [x1]", false, 0, false, false},
    {0xf8801020, "prfum pldl1keep, [x1, #1]", false, 0, false, false},
    {0xf8a26820, "prfm pldl1keep, [x1, x2]", false, 0, false, false},
    {0x3d400020, "ldr b0, [x1]", true, 1, true, false},
    {0x7d400020, "ldr h0, [x1]", true, 2, true, false},
    {0xbd400020, "ldr s0, [x1]", true, 4, true, false},
    {0xfd400020, "ldr d0, [x1]", true, 8, true, false},
    {0x3dc00020, "ldr q0, [x1]", true, 16, true, false},
    {0x3c810c20, "str q0, [x1, #16]!", true, 16, false, true},
    {0x3c9f0020, "stur q0, [x1, #-16]", true, 16, false, true},
    {0x3c226820, "str b0, [x1, x2]", true, 1, false, true},
    {0x3ce27820, "ldr q0, [x1, x2, lsl #4]", true, 16, true, false},
    {0xa9400440, "ldp x0, x1, [x2]", true, 16, true, false},
    {0xa9bf0440, "stp x0, x1, [x2, #-16]!", true, 16, false, true},
    {0x28c10440, "ldp w0, w1, [x2], #8", true, 8, true, false},
    {0xa8400440, "ldnp x0, x1, [x2]", true, 16, true, false},
    {0x28000440, "stnp w0, w1, [x2]", true, 8, false, true},
    {0x69400440, "ldpsw x0, x1, [x2]", true, 8, true, false},
    {0xad400440, "ldp q0, q1, [x2]", true, 32, true, false},
    {0x6d000440, "stp d0, d1, [x2]", true, 16, false, true},
    {0x2dc10440, "ldp s0, s1, [x2, #8]!", true, 8, true, false},
    {0xac000440, "stnp q0, q1, [x2]", true, 32, false, true},
    {0x69000440, "stgp x0, x1, [x2]", true, 16, false, true},
    {0x4c402000, "ld1 {v0.16b-v3.16b}, [x0]", true, 64, true, false},
    {0x0c407000, "ld1 {v0.8b}, [x0]", true, 8, true, false},
    {0x4cdfa000, "ld1 {v0.16b, v1.16b}, [x0], #32", true, 32, true, false},
    {0x4c006c00, "st1 {v0.2d-v2.2d}, [x0]", true, 48, false, true},
    {0x4c408800, "ld2 {v0.4s, v1.4s}, [x0]", true, 32, true, false},
    {0x0c834000, "st3 {v0.8b-v2.8b}, [x0], x3", true, 24, false, true},
    {0x4c400400, "ld4 {v0.8h-v3.8h}, [x0]", true, 64, true, false},
    {0x0c407c00, "ld1 {v0.1d}, [x0]", true, 8, true, false},
    {0x0d400c00, "ld1 {v0.b}[3], [x0]", true, 1, true, false},
    {0x0d404800, "ld1 {v0.h}[1], [x0]", true, 2, true, false},
    {0x0d409000, "ld1 {v0.s}[1], [x0]", true, 4, true, false},
    {0x4ddf8400, "ld1 {v0.d}[1], [x0], #8", true, 8, true, false},
    {0x0d209000, "st2 {v0.s, v1.s}[1], [x0]", true, 8, false, true},
    {0x0d20a400, "st4 {v0.d-v3.d}[0], [x0]", true, 32, false, true},
    {0x4dc57800, "ld3 {v0.h-v2.h}[7], [x0], x5", true, 6, true, false},
    {0x4d40c800, "ld1r {v0.4s}, [x0]", true, 4, true, false},
    {0x4d60cc00, "ld2r {v0.2d, v1.2d}, [x0]", true, 16, true, false},
    {0x4dffe000, "ld4r {v0.16b-v3.16b}, [x0], #4", true, 4, true, false},
    {0xc85f7c20, "ldxr x0, [x1]", true, 8, true, false},
    {0x085f7c20, "ldxrb w0, [x1]", true, 1, true, false},
    {0xc8027c20, "stxr w2, x0, [x1]", true, 8, false, true},
    {0x4802fc20, "stlxrh w2, w0, [x1]", true, 2, false, true},
    {0x885ffc20, "ldaxr w0, [x1]", true, 4, true, false},
    {0xc8dffc20, "ldar x0, [x1]", true, 8, true, false},
    {0x08dffc20, "ldarb w0, [x1]", true, 1, true, false},
    {0x889ffc20, "stlr w0, [x1]", true, 4, false, true},
    {0xc89f7c20, "stllr x0, [x1]", true, 8, false, true},
    {0x88df7c20, "ldlar w0, [x1]", true, 4, true, false},
    {0xf8bfc020, "ldapr x0, [x1]", true, 8, true, false},
    {0x38bfc020, "ldaprb w0, [x1]", true, 1, true, false},
    {0xd95f8020, "ldapur x0, [x1, #-8]", true, 8, true, false},
    {0x99004020, "stlur w0, [x1, #4]", true, 4, false, true},
    {0x99800020, "ldapursw x0, [x1]", true, 4, true, false},
    {0x19c00020, "ldapursb w0, [x1]", true, 1, true, false},
    {0xc87f0440, "ldxp x0, x1, [x2]", true, 16, true, false},
    {0x887f0440, "ldxp w0, w1, [x2]", true, 8, true, false},
    {0xc8230440, "stxp w3, x0, x1, [x2]", true, 16, false, true},
    {0x88238440, "stlxp w3, w0, w1, [x2]", true, 8, false, true},
    {0xf8200041, "ldadd x0, x1, [x2]", true, 8, true, true},
    {0x38e00041, "ldaddalb w0, w1, [x2]", true, 1, true, true},
    {0x78201041, "ldclrh w0, w1, [x2]", true, 2, true, true},
    {0xb8202041, "ldeor w0, w1, [x2]", true, 4, true, true},
    {0xf8203041, "ldset x0, x1, [x2]", true, 8, true, true},
    {0xb8204041, "ldsmax w0, w1, [x2]", true, 4, true, true},
    {0xf8205041, "ldsmin x0, x1, [x2]", true, 8, true, true},
    {0xb8206041, "ldumax w0, w1, [x2]", true, 4, true, true},
    {0x78607041, "lduminlh w0, w1, [x2]", true, 2, true, true},
    {0xf820005f, "stadd x0, [x2]", true, 8, true, true},
    {0xf8208041, "swp x0, x1, [x2]", true, 8, true, true},
    {0x38e08041, "swpalb w0, w1, [x2]", true, 1, true, true},
    {0xc8a07c41, "cas x0, x1, [x2]", true, 8, true, true},
    {0x08e07c41, "casab w0, w1, [x2]", true, 1, true, true},
    {0x48e0fc41, "casalh w0, w1, [x2]", true, 2, true, true},
    {0x48207c82, "casp x0, x1, x2, x3, [x4]", true, 16, true, true},
    {0x0860fc82, "caspal w0, w1, w2, w3, [x4]", true, 8, true, true},
    {0xf83fd020, "ld64b x0, [x1]", true, 64, true, false},
    {0xf83f9020, "st64b x0, [x1]", true, 64, false, true},
    {0xf8200420, "ldraa x0, [x1]", true, 8, true, false},
    {0xf8a01c20, "ldrab x0, [x1, #8]!", true, 8, true, false},
    {0xd9200820, "stg x0, [x1]", false, 0, false, false},
    {0xd9600020, "ldg x0, [x1]", false, 0, false, false},
    {0xd9600820, "stzg x0, [x1]", false, 0, false, false},
    {0x8b020020, "add x0, x1, x2", false, 0, false, false},
    {0x14000002, "b lit", false, 0, false, false},
    {0xd503201f, "nop", false, 0, false, false},
};

static void check_range(size_t first, size_t last)
{
    for (size_t i = first; i < last; i++) {
        const struct insn_case *c = &cases[i];
        struct hwt_access acc = {0, false, false};
        bool known = hwt_decode_access(c->word, &acc);
        if (known != c->known)
            fail_msg("%08x %s: known %d, expected %d", c->word, c->text, known, c->known);
        if (!known)
            continue;
        if (acc.size != c->size || acc.is_read != c->is_read || acc.is_write != c->is_write)
            fail_msg("%08x %s: size %u r%d w%d, expected size %u r%d w%d", c->word, c->text,
                     acc.size, acc.is_read, acc.is_write, c->size, c->is_read, c->is_write);
    }
}

static size_t find_case(const char *text)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *a = cases[i].text;
        const char *b = text;
        while (*a != '\0' && *a == *b) {
            a++;
            b++;
        }
        if (*a == *b)
            return i;
    }
    fail_msg("no case %s", text);
    return 0;
}

static void test_gpr_immediate_forms(void **state)
{
    (void)state;
    check_range(find_case("ldr x0, [x1]"), find_case("ldr x0, [x1, x2]"));
}

static void test_gpr_register_offset_and_unprivileged(void **state)
{
    (void)state;
    check_range(find_case("ldr x0, [x1, x2]"), find_case("ldr x0, lit"));
}

static void test_literal_and_prefetch(void **state)
{
    (void)state;
    check_range(find_case("ldr x0, lit"), find_case("ldr b0, [x1]"));
}

static void test_simd_fp_registers(void **state)
{
    (void)state;
    check_range(find_case("ldr b0, [x1]"), find_case("ldp x0, x1, [x2]"));
}

static void test_pairs_cover_both_registers(void **state)
{
    (void)state;
    check_range(find_case("ldp x0, x1, [x2]"), find_case("ld1 {v0.16b-v3.16b}, [x0]"));
}

static void test_simd_multiple_structures(void **state)
{
    (void)state;
    check_range(find_case("ld1 {v0.16b-v3.16b}, [x0]"), find_case("ld1 {v0.b}[3], [x0]"));
}

static void test_simd_single_structure_and_replicate(void **state)
{
    (void)state;
    check_range(find_case("ld1 {v0.b}[3], [x0]"), find_case("ldxr x0, [x1]"));
}

static void test_exclusive_and_ordered(void **state)
{
    (void)state;
    check_range(find_case("ldxr x0, [x1]"), find_case("ldadd x0, x1, [x2]"));
}

static void test_atomics_read_and_write(void **state)
{
    (void)state;
    check_range(find_case("ldadd x0, x1, [x2]"), find_case("stg x0, [x1]"));
}

static void test_tag_ops_and_non_memory_rejected(void **state)
{
    (void)state;
    check_range(find_case("stg x0, [x1]"), sizeof(cases) / sizeof(cases[0]));
}

static void test_reserved_encodings_rejected(void **state)
{
    struct hwt_access acc;
    (void)state;
    /* ld2 {v0.1d, v1.1d}: .1d is reserved for LD2-LD4 */
    assert_false(hwt_decode_access(0x0c408c00, &acc));
    /* ld1 with a non-zero Rm field in the no-offset form */
    assert_false(hwt_decode_access(0x4c412000, &acc));
    /* ldr q0 via LDR (literal) opc=11 is unallocated */
    assert_false(hwt_decode_access(0xdc000000, &acc));
    /* ldrsw to W (size=10 opc=11) is unallocated */
    assert_false(hwt_decode_access(0xb9c00020, &acc));
    /* 0 and an all-ones word */
    assert_false(hwt_decode_access(0, &acc));
    assert_false(hwt_decode_access(0xffffffff, &acc));
}

static void test_every_word_is_safe(void **state)
{
    struct hwt_access acc;
    unsigned known = 0;
    (void)state;
    /* A sparse sweep of the whole space: never crashes, sizes are sane. */
    for (uint64_t w = 0; w <= UINT32_MAX; w += 0x1001) {
        if (hwt_decode_access((uint32_t)w, &acc)) {
            known++;
            assert_true(acc.size >= 1 && acc.size <= 64);
            assert_true(acc.is_read || acc.is_write);
        }
    }
    assert_true(known > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gpr_immediate_forms),
        cmocka_unit_test(test_gpr_register_offset_and_unprivileged),
        cmocka_unit_test(test_literal_and_prefetch),
        cmocka_unit_test(test_simd_fp_registers),
        cmocka_unit_test(test_pairs_cover_both_registers),
        cmocka_unit_test(test_simd_multiple_structures),
        cmocka_unit_test(test_simd_single_structure_and_replicate),
        cmocka_unit_test(test_exclusive_and_ordered),
        cmocka_unit_test(test_atomics_read_and_write),
        cmocka_unit_test(test_tag_ops_and_non_memory_rejected),
        cmocka_unit_test(test_reserved_encodings_rejected),
        cmocka_unit_test(test_every_word_is_safe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
