/* SPDX-License-Identifier: MIT */
/* Alternate signal stacks, so the handler can run when a fault hits near the end of a
 * thread's stack. Stacks come from metadata memory and are recycled across threads. */
#ifndef HWT_ALTSTACK_H
#define HWT_ALTSTACK_H

/* Gives the calling thread an alternate signal stack if it has none. */
void hwt_altstack_init(void);
/* Takes the calling thread's alternate stack back for reuse by later threads; call at
 * thread exit, never from a signal handler running on that stack. */
void hwt_altstack_exit(void);

#endif
