/* SPDX-License-Identifier: MIT */
/* The stack depot's limits: the most frames a stack keeps and the width of an id, for the
 * depot's modules and for the metadata that packs ids. Constants only. */
#ifndef HWT_STACKDEPOT_LIMITS_H
#define HWT_STACKDEPOT_LIMITS_H

#define HWT_STACK_MAX_FRAMES 32u
/* Frames an allocation or free stack keeps by default (HWTAG_STACK_DEPTH): enough to place
 * the call; fewer frames mean fewer distinct stacks to store and a shorter walk. The fast
 * paths inline the walk for this depth only. */
#define HWT_STACK_DEFAULT_DEPTH 12u
/* The most frames past the depth limit a stack counts for its "... N more frames not
 * recorded" line: the count continues the walk, which a deep recursion would make long. */
#define HWT_STACK_MORE_MAX 9999u
/* Ids are below 2^HWT_STACKDEPOT_ID_BITS: slot metadata packs two of them into a word. */
#define HWT_STACKDEPOT_ID_BITS 20u

#endif
