/* SPDX-License-Identifier: MIT */
/* The stack depot's limits: the most frames a stack keeps and the width of an id, for the
 * depot's modules and for the metadata that packs ids. Constants only. */
#ifndef HWT_STACKDEPOT_LIMITS_H
#define HWT_STACKDEPOT_LIMITS_H

#define HWT_STACK_MAX_FRAMES 32u
/* Ids are below 2^HWT_STACKDEPOT_ID_BITS: slot metadata packs two of them into a word. */
#define HWT_STACKDEPOT_ID_BITS 20u

#endif
