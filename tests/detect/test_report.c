/* SPDX-License-Identifier: MIT */
/* The KASAN-format report of libhwtag's own handler: each bug runs in a child with the
 * library's handler installed, and the parent checks the report's lines. */
#include <dlfcn.h>
#include <malloc.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"
#include "options.h"
#include "tcache.h"
#include "report_text.h"

#define LARGE_SIZE 40000      /* order 4: a page-backed object */
#define RELEASED_SIZE 5000000 /* large enough that free gives its pages back at once */
#define ODD_SIZE 3000         /* a size class no other allocation of these children uses */
#define DUMP_ROWS 5
#define ROW_BYTES 256u
#define GRANULE 16u

static volatile unsigned char sink;
static volatile uint64_t sink64;
static void *volatile sink_ptr;

/* Runs fn in a child with libhwtag's handler; the default HWTAG_FAULT=panic aborts it. */
static void run_report(void (*fn)(void *), void *arg, struct child_result *r)
{
    if (!tagging_active())
        skip();
    assert_true(run_child(LIBRARY_REPORT, fn, arg, r));
    expect_abort(r);
}

/* Untagged address of the access line ("at addr <tagged>"). */
static uintptr_t fault_addr(const char *out)
{
    return untag((const void *)hex_after(out, " at addr "));
}

static __attribute__((noinline)) void overflow_by_one(void *arg)
{
    (void)arg;
    volatile unsigned char *volatile p = malloc(123);
    p[128] = 1;
}

static __attribute__((noinline)) void read_after_free(void *arg)
{
    (void)arg;
    unsigned char *volatile p = malloc(100);
    free(p);
    sink = p[40];
}

static __attribute__((noinline)) void free_twice(void *arg)
{
    (void)arg;
    void *volatile p = malloc(64);
    free(p);
    free(p);
}

static __attribute__((noinline)) void free_interior(void *arg)
{
    (void)arg;
    char *volatile p = malloc(64);
    free(p + 16);
}

static __attribute__((noinline)) void large_overflow(void *arg)
{
    (void)arg;
    volatile unsigned char *volatile p = malloc(LARGE_SIZE);
    say("ptr", (uintptr_t)p);
    p[LARGE_SIZE + 5] = 1;
}

static __attribute__((noinline)) void large_underflow(void *arg)
{
    (void)arg;
    volatile unsigned char *volatile p = malloc(LARGE_SIZE);
    say("ptr", (uintptr_t)p);
    sink = p[-1];
}

static __attribute__((noinline)) void large_read_after_free(void *arg)
{
    size_t size = (size_t)(uintptr_t)arg;
    volatile unsigned char *volatile p = malloc(size);
    say("ptr", (uintptr_t)p);
    free((void *)p);
    sink = p[100];
}

static __attribute__((noinline)) void read_u64_past_end(void *arg)
{
    (void)arg;
    volatile uint64_t *volatile p = malloc(32);
    sink64 = p[4];
}

static __attribute__((noinline)) void write_16_past_end(void *arg)
{
    (void)arg;
    /* a volatile 128-bit store is one STP of two X registers */
    volatile __uint128_t *volatile p = malloc(32);
    p[2] = 5;
}

static __attribute__((noinline)) void overflow_told(void *arg)
{
    (void)arg;
    volatile unsigned char *volatile p = malloc(123);
    say("ptr", (uintptr_t)p);
    p[128] = 1;
}

/* Three functions for the three stacks; the store after each call keeps it a real call
 * (a tail call would leave no frame of the function to find). */
static __attribute__((noinline)) unsigned char *alloc_here(size_t n)
{
    unsigned char *p = malloc(n);
    sink_ptr = p;
    return p;
}

static __attribute__((noinline)) void free_here(unsigned char *p)
{
    free(p);
    sink_ptr = NULL;
}

static __attribute__((noinline)) void use_here(volatile unsigned char *p)
{
    sink = p[8];
}

/* A use levels frames deep: its call trace is cut at its 32 frames. */
static __attribute__((noinline)) void deep_use(int levels, volatile unsigned char *p)
{
    if (levels > 0)
        deep_use(levels - 1, p);
    else
        use_here(p);
    sink_ptr = NULL;
}

static __attribute__((noinline)) void deep_stacks(void *arg)
{
    (void)arg;
    unsigned char *p = alloc_here(100);
    free_here(p);
    deep_use(40, p);
}

static __attribute__((noinline)) void three_stacks(void *arg)
{
    (void)arg;
    unsigned char *p = alloc_here(100);
    free_here(p);
    use_here(p);
}

/* The entry points whose allocation leaves the inlined fast path: calloc (another cache
 * copy when tagging), posix_memalign (the general path), realloc that moves. */
static __attribute__((noinline)) unsigned char *alloc_via(size_t n, int how)
{
    void *p = NULL;
    if (how == 0)
        p = calloc(1, n);
    else if (how == 1 && posix_memalign(&p, 64, n) != 0)
        p = NULL;
    else if (how == 2)
        p = realloc(malloc(8), n);
    else if (how == 3)
        p = malloc(n);
    sink_ptr = p;
    return p;
}

static __attribute__((noinline)) void entry_stacks(void *arg)
{
    /* twice from each call site: the first call misses the thread's stack cache and takes
     * the general path, the second is served by the fast path */
    unsigned char *p = NULL, *first = NULL;
    for (int i = 0; i < 2; i++) {
        first = p;
        p = alloc_via(100, (int)(intptr_t)arg);
    }
    for (int i = 0; i < 2; i++)
        free_here(i == 0 ? first : p);
    use_here(p);
}

/* The frame line after the first line of what (an "Allocated by" or "Freed by" section)
 * names fn: the stack starts at the call, with no frame of the library before or twice. */
static void expect_second_frame(const char *out, const char *what, const char *fn)
{
    const char *at = strstr(out, what);
    assert_non_null(at);
    const char *first = strchr(at + 1, '\n'); /* the end of the section's header */
    assert_non_null(first);
    const char *second = strchr(first + 1, '\n');
    assert_non_null(second);
    if (strncmp(second + 1, fn, strlen(fn)) != 0)
        fail_msg("after \"%s\" the second frame is not %s in:\n%s", what, fn, out);
}

/* Large objects from two call sites that differ only in their second frame: alloc_here and
 * free_here called from large_site_a / large_site_b. The general path answers from the thread's
 * stack cache before it copies any frame, so its key must tell the two apart. */
static __attribute__((noinline)) void large_site_a(void)
{
    free_here(alloc_here(LARGE_SIZE));
    sink_ptr = NULL;
}

static __attribute__((noinline)) unsigned char *large_site_b(void)
{
    unsigned char *p = alloc_here(LARGE_SIZE);
    sink_ptr = NULL;
    return p;
}

static __attribute__((noinline)) void large_drop_b(unsigned char *p)
{
    free_here(p);
    sink_ptr = NULL;
}

static __attribute__((noinline)) void large_two_sites(void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++) /* site a's stacks in the cache, then site b's at their depth */
        large_site_a();
    unsigned char *p = large_site_b();
    large_drop_b(p);
    use_here(p);
}

static void three_stacks_without_stacktrace(void *arg)
{
    hwt_opts.stacktrace = HWT_OFF;
    hwt_self.flags &= ~(uint32_t)HWT_TCACHE_STACK; /* the cache took the options at its start */
    three_stacks(arg);
}

static __attribute__((noinline)) void stale_after_reuse(void *arg)
{
    (void)arg;
    volatile unsigned char *volatile p = malloc(ODD_SIZE);
    free((void *)p);
    unsigned char *q = malloc(ODD_SIZE);
    if (untag(q) != untag((const void *)p))
        _exit(91); /* the slot was not reused: the test cannot say anything */
    say("old", (uintptr_t)p);
    say("new", (uintptr_t)q);
    if (arg != NULL) {
        /* push the old object out of the history ring */
        for (int i = 0; i < 20000; i++)
            free(malloc(24));
    }
    sink = p[3];
}

/* A large object left untagged by sampling (HWTAG_SAMPLE=2 here), freed twice. */
static __attribute__((noinline)) void double_free_sampled_out(void *arg)
{
    bool want_tagged = arg != NULL;
    hwt_opts.sample = 2;
    for (int i = 0; i < 4; i++) {
        void *volatile p = malloc(64 * 1024);
        if ((ptr_tag(p) != 0) == want_tagged) {
            free(p);
            free(p);
            _exit(92);
        }
    }
    _exit(93); /* sampling did not alternate */
}

static void expect_lines(void (*fn)(void *), const char *const *lines)
{
    struct child_result r;
    if (!tagging_active())
        skip();
    assert_true(run_child(LIBRARY_REPORT, fn, NULL, &r));
    assert_false(r.exited && r.exit_code == 0);
    for (size_t i = 0; lines[i] != NULL; i++) {
        if (strstr(r.output, lines[i]) == NULL)
            fail_msg("missing \"%s\" in report:\n%s", lines[i], r.output);
    }
}

static void test_slab_out_of_bounds_report(void **state)
{
    (void)state;
    const char *const lines[] = {"BUG: KASAN: slab-out-of-bounds in overflow_by_one+0x",
                                 "Write of size 1 at addr ",
                                 "Pointer tag: [",
                                 "Call trace:\n overflow_by_one+0x",
                                 "Allocated by task ",
                                 "which belongs to the size class 128 of size 128",
                                 "located 5 bytes to the right of\n 123-byte region",
                                 "Memory state around the buggy address:",
                                 "SUMMARY: KASAN: slab-out-of-bounds in overflow_by_one+0x",
                                 NULL};
    expect_lines(overflow_by_one, lines);
}

static void test_use_after_free_report(void **state)
{
    (void)state;
    const char *const lines[] = {"BUG: KASAN: slab-use-after-free in read_after_free+0x",
                                 "Read of size 1 at addr ",
                                 "Allocated by task ",
                                 "Freed by task ",
                                 "located 40 bytes inside of\n 100-byte region",
                                 NULL};
    expect_lines(read_after_free, lines);
}

static void test_double_free_report(void **state)
{
    (void)state;
    const char *const lines[] = {"BUG: KASAN: double-free in free_twice+0x", "Free of addr ",
                                 "Freed by task ", NULL};
    expect_lines(free_twice, lines);
}

static void test_invalid_free_report(void **state)
{
    (void)state;
    const char *const lines[] = {"BUG: KASAN: invalid-free in free_interior+0x", "Free of addr ",
                                 NULL};
    expect_lines(free_interior, lines);
}

static struct child_result result; /* 32 KiB of output: not on the stack */

/* The region line names the object: its start is the allocated pointer, untagged. */
static void expect_region_start(const struct child_result *r)
{
    uintptr_t start = untag((const void *)hex_after(r->output, "ptr=0x"));
    char want[96];
    snprintf(want, sizeof(want), "The buggy address belongs to the object at %lx\n",
             (unsigned long)start);
    expect_text(r, want);
    snprintf(want, sizeof(want), "region [%lx, ", (unsigned long)start);
    expect_text(r, want);
}

static void test_large_out_of_bounds_report(void **state)
{
    (void)state;
    run_report(large_overflow, NULL, &result);
    expect_text(&result, "BUG: KASAN: out-of-bounds in large_overflow+0x");
    expect_text(&result, "Write of size 1 at addr ");
    expect_text(&result, " which belongs to a page-backed mapping of ");
    expect_text(&result, "located 5 bytes to the right of\n 40000-byte region [");
    expect_text(&result, "SUMMARY: KASAN: out-of-bounds in large_overflow+0x");
    expect_region_start(&result);
    expect_no_text(&result, "Freed by task");
}

/* The byte below a large object is its free-tagged guard page. */
static void test_large_underflow_report(void **state)
{
    (void)state;
    run_report(large_underflow, NULL, &result);
    expect_text(&result, "BUG: KASAN: out-of-bounds in large_underflow+0x");
    expect_text(&result, "Read of size 1 at addr ");
    expect_text(&result, "located 1 bytes to the left of\n 40000-byte region [");
    expect_region_start(&result);
}

static void test_large_use_after_free_report(void **state)
{
    (void)state;
    run_report(large_read_after_free, (void *)(uintptr_t)LARGE_SIZE, &result);
    expect_text(&result, "BUG: KASAN: use-after-free in large_read_after_free+0x");
    expect_text(&result, "Read of size 1 at addr ");
    expect_text(&result, " which belongs to a page-backed mapping of ");
    expect_text(&result, "located 100 bytes inside of\n 40000-byte region [");
    expect_text(&result, "Freed by task ");
    expect_region_start(&result);
}

/* Pages of a big freed object go back to the OS and read as tag 0: still reported. */
static void test_released_large_use_after_free_report(void **state)
{
    (void)state;
    run_report(large_read_after_free, (void *)(uintptr_t)RELEASED_SIZE, &result);
    expect_text(&result, "BUG: KASAN: use-after-free in large_read_after_free+0x");
    expect_text(&result, ", memory tag: [00]");
    expect_text(&result, "located 100 bytes inside of\n 5000000-byte region [");
}

static void test_read_size_8_is_decoded(void **state)
{
    (void)state;
    run_report(read_u64_past_end, NULL, &result);
    expect_text(&result, "BUG: KASAN: slab-out-of-bounds in read_u64_past_end+0x");
    expect_text(&result, "Read of size 8 at addr ");
    expect_text(&result, "located 0 bytes to the right of\n 32-byte region [");
}

static void test_write_size_16_is_decoded(void **state)
{
    (void)state;
    run_report(write_16_past_end, NULL, &result);
    expect_text(&result, "BUG: KASAN: slab-out-of-bounds in write_16_past_end+0x");
    expect_text(&result, "Write of size 16 at addr ");
}

/* Five rows of 16 tags, 256 bytes a row, the faulting one in the middle marked '>' with
 * a '^' under the first digit of the faulting granule's tag, which is the memory tag of
 * the access line; the granule before it is the object's last, with the pointer's tag. */
static void test_tag_dump_marks_the_faulting_granule(void **state)
{
    (void)state;
    unsigned tags[DUMP_ROWS * 16];
    run_report(overflow_told, NULL, &result);
    uintptr_t addr = fault_addr(result.output);
    unsigned pointer_tag = (unsigned)hex_after(result.output, "Pointer tag: [");
    unsigned memory_tag = (unsigned)hex_after(result.output, "memory tag: [");
    uintptr_t fault_row = addr & ~(uintptr_t)(ROW_BYTES - 1);
    unsigned granule = (unsigned)((addr - fault_row) / GRANULE);
    const char *line = strstr(result.output, "Memory state around the buggy address:\n");
    assert_non_null(line);
    line = strchr(line, '\n') + 1;

    for (unsigned row = 0; row < DUMP_ROWS; row++) {
        uintptr_t want_addr = fault_row + (uintptr_t)row * ROW_BYTES - 2 * ROW_BYTES;
        char prefix[32];
        int plen = snprintf(prefix, sizeof(prefix), "%c%lx:", row == 2 ? '>' : ' ',
                            (unsigned long)want_addr);
        if (strncmp(line, prefix, (size_t)plen) != 0)
            fail_msg("dump row %u should start \"%s\":\n%s", row, prefix, result.output);
        const char *t = line + plen;
        for (unsigned g = 0; g < 16; g++, t += 3) {
            if (t[0] != ' ' || sscanf(t + 1, "%2x", &tags[row * 16 + g]) != 1)
                fail_msg("dump row %u granule %u unreadable:\n%s", row, g, result.output);
        }
        assert_int_equal(*t, '\n');
        line = t + 1;
        if (row == 2) {
            size_t col = (size_t)plen + 1 + 3 * granule;
            for (size_t i = 0; i < col; i++)
                if (line[i] != ' ')
                    fail_msg("caret line should have %zu spaces:\n%s", col, result.output);
            assert_memory_equal(line + col, "^\n", 2);
            line += col + 2;
        }
    }
    assert_int_equal(*line, '\n'); /* exactly five rows */
    assert_int_equal(tags[2 * 16 + granule], memory_tag);
    assert_int_equal(tags[2 * 16 + granule - 1], pointer_tag);
}

/* Registers: x0-x30, sp, pc and pstate; pc is the faulting instruction, whose offset in
 * its function the header gives; the summary line is the last before the closing rule. */
static void test_registers_and_summary(void **state)
{
    (void)state;
    run_report(overflow_told, NULL, &result);
    const char *out = result.output;
    const char *regs = strstr(out, "\nRegisters:\n");
    assert_non_null(regs);
    uintptr_t ptr = hex_after(out, "ptr=0x");
    bool holds_ptr = false;
    for (unsigned i = 0; i < 31; i++) {
        char name[8];
        snprintf(name, sizeof(name), "x%-2u ", i);
        holds_ptr |= hex_after(regs, name) == ptr;
    }
    assert_true(holds_ptr); /* the base register of the faulting store */
    (void)hex_after(regs, " sp  ");
    (void)hex_after(regs, " pstate ");
    uintptr_t pc = hex_after(regs, " pc  ");
    uintptr_t fn = (uintptr_t)overflow_told;
    assert_true(pc > fn && pc < fn + 256);

    char want[256];
    unsigned long off = (unsigned long)(pc - fn);
    snprintf(want, sizeof(want), "BUG: KASAN: slab-out-of-bounds in overflow_told+0x%lx/0x", off);
    expect_text(&result, want);

    Dl_info dl;
    assert_true(dladdr((void *)fn, &dl) != 0);
    const char *summary = strstr(out, "\nSUMMARY: KASAN: ");
    assert_non_null(summary);
    summary++;
    size_t len = (size_t)snprintf(
        want, sizeof(want), "SUMMARY: KASAN: slab-out-of-bounds in overflow_told+0x%lx/0x", off);
    assert_memory_equal(summary, want, len);
    /* "(<module file name>+0x<offset>)", then the closing rule on the next line */
    snprintf(want, sizeof(want), " (detect_test_report+0x%lx)\n" RULE "\n",
             (unsigned long)(pc - (uintptr_t)dl.dli_fbase));
    const char *tail = strstr(summary, want);
    if (tail == NULL || tail > strchr(summary, '\n'))
        fail_msg("summary line should end \"%s\":\n%s", want, out);
    /* two rules: the report's first line and the line after the summary */
    const char *first = strstr(out, RULE "\nBUG: KASAN: ");
    assert_non_null(first);
    assert_true(first == out || first[-1] == '\n');
    const char *second = strstr(first + 1, RULE);
    assert_ptr_equal(second, strchr(summary, '\n') + 1);
    assert_null(strstr(second + 1, RULE));
}

/* The task id of the access line ("by task <comm>/<tid>"). */
static unsigned long access_tid(const char *out)
{
    const char *at = strstr(out, " at addr ");
    assert_non_null(at);
    const char *slash = strchr(strstr(at, " by task "), '/');
    assert_non_null(slash);
    return strtoul(slash + 1, NULL, 10);
}

static void test_stacks_name_their_functions(void **state)
{
    (void)state;
    char want[96];
    run_report(three_stacks, NULL, &result);
    unsigned long tid = access_tid(result.output);
    expect_text(&result, "BUG: KASAN: slab-use-after-free in use_here+0x");
    expect_text(&result, "\nCall trace:\n use_here+0x");
    expect_text(&result, "\n three_stacks+0x");
    snprintf(want, sizeof(want), "\nAllocated by task %lu:\n alloc_here+0x", tid);
    expect_text(&result, want);
    snprintf(want, sizeof(want), "\nFreed by task %lu:\n free_here+0x", tid);
    expect_text(&result, want);
    expect_text(&result, "located 8 bytes inside of\n 100-byte region");
}

/* A stack cut at its limit ends with a line that says how many frames it left out. */
static void test_cut_call_trace_says_what_it_left_out(void **state)
{
    (void)state;
    run_report(deep_stacks, NULL, &result);
    expect_text(&result, "BUG: KASAN: slab-use-after-free in use_here+0x");
    const char *trace = strstr(result.output, "\nCall trace:\n");
    assert_non_null(trace);
    const char *end = strstr(trace, "\n\n");
    const char *marker = strstr(trace, " more frames not recorded\n");
    assert_non_null(marker);
    assert_true(end == NULL || marker < end);
    unsigned lines = 0;
    for (const char *q = trace + strlen("\nCall trace:\n"); q < marker; q = strchr(q, '\n') + 1)
        lines++;
    assert_int_equal(lines, 32 + 1); /* the frames, then the marker's own line */
    /* the allocation and free stacks are short: no marker */
    const char *alloc = strstr(result.output, "\nAllocated by task ");
    assert_non_null(alloc);
    assert_null(strstr(alloc, "not recorded"));
}

/* Every entry point's stack starts at the program's call, whichever path it takes. */
static void test_entry_stacks_start_at_the_call(void **state)
{
    (void)state;
    char want[96];
    for (intptr_t how = 0; how < 4; how++) {
        run_report(entry_stacks, (void *)how, &result);
        unsigned long tid = access_tid(result.output);
        expect_text(&result, "BUG: KASAN: slab-use-after-free in use_here+0x");
        snprintf(want, sizeof(want), "\nAllocated by task %lu:\n alloc_via+0x", tid);
        expect_text(&result, want);
        expect_second_frame(result.output, "\nAllocated by task ", " entry_stacks+0x");
        snprintf(want, sizeof(want), "\nFreed by task %lu:\n free_here+0x", tid);
        expect_text(&result, want);
        expect_second_frame(result.output, "\nFreed by task ", " entry_stacks+0x");
    }
}

/* The general path's stacks (large objects) come from the right call site when another,
 * two frames away, is in the thread's stack cache. */
static void test_large_stacks_tell_call_sites_apart(void **state)
{
    (void)state;
    run_report(large_two_sites, NULL, &result);
    expect_text(&result, "BUG: KASAN: use-after-free in use_here+0x");
    expect_second_frame(result.output, "\nAllocated by task ", " large_site_b+0x");
    expect_second_frame(result.output, "\nFreed by task ", " large_drop_b+0x");
}

static void test_stacktrace_off_says_stacks_are_not_available(void **state)
{
    (void)state;
    run_report(three_stacks_without_stacktrace, NULL, &result);
    expect_text(&result, "BUG: KASAN: slab-use-after-free in use_here+0x");
    expect_text(&result, "\nCall trace:\n use_here+0x"); /* the access stack is unwound */
    expect_text(&result, "\nAllocated by task ?:\n (stack not available)\n");
    expect_text(&result, "\nFreed by task ?:\n (stack not available)\n");
    expect_no_text(&result, "alloc_here");
    expect_no_text(&result, "free_here");
}

/* Runs a stale_after_reuse child (fn) and reads the old and the new object's tags. */
static void run_stale(void (*fn)(void *), void *arg, unsigned *old_tag, unsigned *new_tag)
{
    run_report(fn, arg, &result);
    *old_tag = ptr_tag((const void *)hex_after(result.output, "old=0x"));
    *new_tag = ptr_tag((const void *)hex_after(result.output, "new=0x"));
}

/* A stale pointer into a slot freed and reallocated since: the new object's tag differs
 * (policy); the history ring still knows the old object, so it is named with its stacks. */
static void test_stale_pointer_into_reused_slot(void **state)
{
    (void)state;
    char want[160];
    unsigned old_tag, new_tag;
    run_stale(stale_after_reuse, NULL, &old_tag, &new_tag);
    assert_int_not_equal(old_tag, new_tag);
    expect_text(&result, "BUG: KASAN: slab-use-after-free in stale_after_reuse+0x");
    snprintf(want, sizeof(want), "Pointer tag: [%02x], memory tag: [%02x]", old_tag, new_tag);
    expect_text(&result, want);
    expect_text(&result, "located 3 bytes inside of\n 3000-byte region");
    expect_text(&result, "Allocated by task ");
    expect_text(&result, "Freed by task ");
    expect_no_text(&result, "is neither this object's");
}

/* When the ring has forgotten the old object, the report says what is known instead. */
static void test_stale_pointer_forgotten_by_history(void **state)
{
    (void)state;
    char want[160];
    unsigned old_tag, new_tag;
    run_stale(stale_after_reuse, (void *)1, &old_tag, &new_tag);
    expect_text(&result, "BUG: KASAN: invalid-access in stale_after_reuse+0x");
    snprintf(want, sizeof(want),
             "The pointer tag [%02x] is neither this object's [%02x] nor a neighbour's:\n"
             " a stale pointer to an earlier object in this slot, freed and reallocated",
             old_tag, new_tag);
    expect_text(&result, want);
    expect_no_text(&result, "Freed by task"); /* the slot's object is live */
}

static void stale_after_reuse_without_stacktrace(void *arg)
{
    hwt_opts.stacktrace = HWT_OFF;
    hwt_self.flags &= ~(uint32_t)HWT_TCACHE_STACK; /* the cache took the options at its start */
    stale_after_reuse(arg);
}

/* Stacks off keeps no history ring (kasan.stacktrace=off): the old object cannot be named
 * even just after its free, and the report says why. */
static void test_stacktrace_off_keeps_no_history(void **state)
{
    (void)state;
    char want[160];
    unsigned old_tag, new_tag;
    run_stale(stale_after_reuse_without_stacktrace, NULL, &old_tag, &new_tag);
    expect_text(&result, "BUG: KASAN: invalid-access in stale_after_reuse+0x");
    snprintf(want, sizeof(want),
             "The pointer tag [%02x] is neither this object's [%02x] nor a neighbour's:\n"
             " a stale pointer to an earlier object in this slot, freed and reallocated since\n"
             " (HWTAG_STACKTRACE=off keeps no history of allocations), or a corrupt one\n",
             old_tag, new_tag);
    expect_text(&result, want);
    expect_no_text(&result, "Freed by task"); /* the old object and its free are not named */
}

static void test_sampled_out_object_is_named(void **state)
{
    (void)state;
    run_report(double_free_sampled_out, NULL, &result);
    expect_text(&result, "BUG: KASAN: double-free in double_free_sampled_out+0x");
    expect_text(&result, "Pointer tag: [00]");
    expect_text(&result, " which belongs to a page-backed mapping of ");
    expect_text(&result, "located 0 bytes inside of\n 65536-byte region");
    expect_text(&result, "The object was left untagged by sampling (HWTAG_SAMPLE)");
    /* and a tagged one is not said to be */
    run_report(double_free_sampled_out, (void *)1, &result);
    expect_text(&result, "BUG: KASAN: double-free in double_free_sampled_out+0x");
    expect_no_text(&result, "left untagged by sampling");
}

static __attribute__((noinline)) void free_stripped(void *arg)
{
    (void)arg;
    char *volatile p = malloc(64);
    free((void *)((uintptr_t)p & ~((uintptr_t)0xff << 56)));
}

/* A live object freed through a tag-stripped pointer: not a double free, and the report
 * says the pointer carries no tag. */
static void test_free_through_stripped_pointer(void **state)
{
    (void)state;
    struct child_result r;
    run_report(free_stripped, NULL, &r);
    expect_text(&r, "BUG: KASAN: invalid-free in free_stripped+0x");
    expect_text(&r, "Pointer tag: [00]");
    expect_text(&r, " the pointer carries no tag (built from an untagged address?)");
    expect_no_text(&r, "double-free");
    expect_no_text(&r, "Freed by task");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_use_after_free_report),
        cmocka_unit_test(test_slab_out_of_bounds_report),
        cmocka_unit_test(test_double_free_report),
        cmocka_unit_test(test_invalid_free_report),
        cmocka_unit_test(test_large_out_of_bounds_report),
        cmocka_unit_test(test_large_underflow_report),
        cmocka_unit_test(test_large_use_after_free_report),
        cmocka_unit_test(test_large_stacks_tell_call_sites_apart),
        cmocka_unit_test(test_released_large_use_after_free_report),
        cmocka_unit_test(test_read_size_8_is_decoded),
        cmocka_unit_test(test_write_size_16_is_decoded),
        cmocka_unit_test(test_tag_dump_marks_the_faulting_granule),
        cmocka_unit_test(test_registers_and_summary),
        cmocka_unit_test(test_stacks_name_their_functions),
        cmocka_unit_test(test_entry_stacks_start_at_the_call),
        cmocka_unit_test(test_cut_call_trace_says_what_it_left_out),
        cmocka_unit_test(test_stacktrace_off_says_stacks_are_not_available),
        cmocka_unit_test(test_stacktrace_off_keeps_no_history),
        cmocka_unit_test(test_stale_pointer_into_reused_slot),
        cmocka_unit_test(test_stale_pointer_forgotten_by_history),
        cmocka_unit_test(test_sampled_out_object_is_named),
        cmocka_unit_test(test_free_through_stripped_pointer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
