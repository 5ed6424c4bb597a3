/* SPDX-License-Identifier: MIT */
/* The live-object walk: every live small object reported once, freed ones never. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "alloc.h"
#include "arch/mte.h"
#include "init.h"
#include "slab.h"
#include "unwind.h"

#define NOBJ 96u
#define NOTHERS 4096u

static const size_t sizes[] = {1, 16, 24, 100, 256, 1000, 3000, 8000};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* What a walk saw of the test's objects, by index; objects of anyone else are counted. */
struct seen {
    uintptr_t start[NOBJ];
    size_t requested[NOBJ];
    unsigned times[NOBJ];
    unsigned others;
};

static struct seen seen;

static void note(const struct hwt_object *obj, void *arg)
{
    struct seen *sn = arg;
    assert_true(obj->live && !obj->large && obj->ever_used && obj->free_stack == 0);
    assert_int_equal(obj->size, (obj->requested + HWT_GRANULE - 1) & ~(size_t)(HWT_GRANULE - 1));
    assert_true(obj->class_size >= obj->size && obj->region_size == obj->class_size);
    for (unsigned i = 0; i < NOBJ; i++) {
        if (sn->start[i] == obj->start) {
            assert_int_equal(obj->requested, sn->requested[i]);
            sn->times[i]++;
            return;
        }
    }
    sn->others++;
}

static struct hwt_caller here(void)
{
    return hwt_caller_of_record((uintptr_t)__builtin_frame_address(0));
}

static void test_walk_reports_exactly_the_live_objects(void **state)
{
    (void)state;
    hwt_init_ensure();
    seen = (struct seen){0};
    hwt_slab_walk_live(note, &seen);
    unsigned before = seen.others;

    void *objs[NOBJ];
    for (unsigned i = 0; i < NOBJ; i++) {
        objs[i] = hwt_alloc(sizes[i % NSIZES], HWT_GRANULE, false, here());
        assert_non_null(objs[i]);
    }
    /* one in three freed, in every class */
    for (unsigned i = 0; i < NOBJ; i += 3)
        hwt_alloc_free(objs[i], here());

    seen = (struct seen){0};
    for (unsigned i = 0; i < NOBJ; i++) {
        seen.start[i] = mte_untag(objs[i]);
        seen.requested[i] = sizes[i % NSIZES];
    }
    hwt_slab_walk_live(note, &seen);
    for (unsigned i = 0; i < NOBJ; i++)
        assert_int_equal(seen.times[i], i % 3 == 0 ? 0u : 1u);
    assert_int_equal(seen.others, before);

    for (unsigned i = 0; i < NOBJ; i++)
        if (i % 3 != 0)
            hwt_alloc_free(objs[i], here());
    seen = (struct seen){0};
    hwt_slab_walk_live(note, &seen);
    assert_int_equal(seen.others, before);
}

/* Enough objects of one class to fill several spans, all freed again: the spans emptied,
 * kept or released, report nothing. */
static void test_walk_skips_emptied_spans(void **state)
{
    (void)state;
    static void *many[NOTHERS];
    seen = (struct seen){0};
    hwt_slab_walk_live(note, &seen);
    unsigned before = seen.others;
    for (unsigned i = 0; i < NOTHERS; i++)
        assert_non_null(many[i] = hwt_alloc(512, HWT_GRANULE, false, here()));
    seen = (struct seen){0};
    hwt_slab_walk_live(note, &seen);
    assert_int_equal(seen.others, before + NOTHERS);
    for (unsigned i = 0; i < NOTHERS; i++)
        hwt_alloc_free(many[i], here());
    hwt_slab_trim();
    seen = (struct seen){0};
    hwt_slab_walk_live(note, &seen);
    assert_int_equal(seen.others, before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_walk_reports_exactly_the_live_objects),
        cmocka_unit_test(test_walk_skips_emptied_spans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
