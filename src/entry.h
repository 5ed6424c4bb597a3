/* SPDX-License-Identifier: MIT */
/* How an exported entry point (interpose.c, introspect.c, leak_api.c) is declared and finds where
 * the program called it, the start of every stack it records. No entry point is defined here. */
#ifndef HWT_ENTRY_H
#define HWT_ENTRY_H

#include <stdint.h>

#include "arch/caller.h"
#include "unwind.h"

#define EXPORT __attribute__((visibility("default")))

/* Where the program called the entry point, from its frame record: the stack it records
 * starts there (alloc.h). For entry points that set up a frame. */
#define ENTRY_CALLER() hwt_caller_of_record((uintptr_t)__builtin_frame_address(0))

/* malloc and free: frameless where the architecture allows (arch/caller.h). Their
 * fast paths are inline and make no call, and every other way out is a tail call, so they
 * set up no frame record and save no register; their caller is read from the registers. */
#define LEAF_ENTRY EXPORT HWT_ARCH_FRAMELESS
#if HWT_ARCH_HAVE_FRAMELESS
static inline __attribute__((always_inline)) struct hwt_caller leaf_caller(void)
{
    struct hwt_caller c;
    hwt_arch_entry_caller(&c.pc, &c.fp);
    return c;
}
#define LEAF_CALLER() leaf_caller()
/* leaf_caller, read where it is used (hwt_arch_entry_caller_here) */
static inline __attribute__((always_inline)) struct hwt_caller leaf_caller_here(void)
{
    struct hwt_caller c;
    hwt_arch_entry_caller_here(&c.pc, &c.fp);
    return c;
}
#define LEAF_CALLER_HERE() leaf_caller_here()
#else
#define LEAF_CALLER() ENTRY_CALLER()
#define LEAF_CALLER_HERE() ENTRY_CALLER()
#endif

#endif
