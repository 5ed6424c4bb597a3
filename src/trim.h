/* SPDX-License-Identifier: MIT */
/* malloc_trim: every free page of the heap back to the OS. */
#ifndef HWT_TRIM_H
#define HWT_TRIM_H

#include <stddef.h>

/* Returns the bytes given back. */
size_t hwt_trim(void);

#endif
