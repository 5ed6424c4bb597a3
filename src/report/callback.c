/* SPDX-License-Identifier: MIT */
/* Hands a finished report to the application's callback as struct hwtag_report_info.
 * Lock-free: the callback may be replaced while a report is being printed. */
#include "callback.h"

#include <string.h>

/* arg is published before cb so a reader that sees cb sees its arg. */
static hwtag_report_callback callback_fn;
static void *callback_arg;

void hwt_callback_set(hwtag_report_callback cb, void *arg)
{
    __atomic_store_n(&callback_fn, NULL, __ATOMIC_RELEASE);
    __atomic_store_n(&callback_arg, arg, __ATOMIC_RELEASE);
    __atomic_store_n(&callback_fn, cb, __ATOMIC_RELEASE);
}

void hwt_callback_invoke(const struct hwt_report *r, const char *text, size_t len)
{
    hwtag_report_callback cb = __atomic_load_n(&callback_fn, __ATOMIC_ACQUIRE);
    if (cb == NULL)
        return;
    struct hwtag_report_info info;
    memset(&info, 0, sizeof(info));
    info.bug_type = r->bug;
    info.bug_name = hwt_report_bug_name(r->bug);
    info.access = r->access;
    info.addr = r->addr;
    info.access_size = r->access_size;
    info.pointer_tag = r->pointer_tag;
    info.memory_tag = r->memory_tag;
    info.asynchronous = r->asynchronous;
    if (r->have_object) {
        info.sampled_out = !r->object.sampled;
        info.object_start = r->object.start;
        info.object_size = r->object.size;
        info.object_requested = r->object.requested;
        info.object_class = r->object.class_size;
        info.distance = hwt_report_distance(r->addr, &r->object);
    }
    info.text = text;
    info.text_len = len;
    cb(&info, __atomic_load_n(&callback_arg, __ATOMIC_ACQUIRE));
}
