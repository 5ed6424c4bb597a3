/* SPDX-License-Identifier: MIT */
/* Threads for reports: the registry of the threads pthread_create started (number T<n> in
 * creation order, creator, creation stack, name) and thread names. The registry is a fixed
 * table outside the heap, written by the threads it describes and read lock-free by the
 * fault handler; names are kept when a thread is named and when it exits, so a report
 * names threads that are gone. */
#ifndef HWT_TASK_H
#define HWT_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HWT_TASK_NONE UINT32_MAX /* no thread number: not created through pthread_create */
#define HWT_TASK_NAME_CAP 16     /* the kernel's TASK_COMM_LEN */

/* A copy of one thread's record. */
struct hwt_task {
    uint32_t number;          /* T<number>; 0 is the main thread */
    uint32_t parent;          /* its creator's number, HWT_TASK_NONE when not known */
    uint32_t stack;           /* depot id of the creation stack, 0 for none */
    int tid, tid_before_fork; /* tid 0 until it runs; the second: its tid before a fork made
                               * it a child's only thread, else 0 */
    bool exited;
    char name[HWT_TASK_NAME_CAP]; /* as given, or kept at exit; "" for none */
};

/* The name of thread tid of this process when it says more than the process name comm (it
 * differs from comm and from the main thread's kernel name, which is "qemu-aarch64" under
 * qemu-user for every unnamed thread): the name the registry kept for a thread that has
 * exited, else its name now from /proc/self/task/TID/comm. signal-safe */
bool hwt_task_thread_name(int tid, const char *comm, char *buf, size_t cap);

/* Once at start-up: the main thread is T0. handle: its pthread_t. */
void hwt_task_init_main(uintptr_t handle);

/* The calling thread is about to create one: returns the new thread's number, its record
 * holding the caller as its creator, the creation stack's depot id and the caller's name
 * (a new thread starts with its creator's), or HWT_TASK_NONE when none can be had. */
uint32_t hwt_task_create(uint32_t stack);
/* pthread_create's outcome for number: its pthread_t, or failure (the record is dropped). */
void hwt_task_created(uint32_t number, bool ok, uintptr_t handle);
/* The new thread number runs: its tid and handle. */
void hwt_task_start(uint32_t number, uintptr_t handle);
/* The thread number exits: its last name is kept. */
void hwt_task_exit(uint32_t number);
/* pthread_setname_np(handle, name) succeeded. */
void hwt_task_named(uintptr_t handle, const char *name);
/* In a fork child: the other threads are gone, the caller has a new tid. */
void hwt_task_after_fork_child(void);

/* The newest record of thread tid (tids are reused), or of thread number. signal-safe */
bool hwt_task_find_tid(int tid, struct hwt_task *out);
bool hwt_task_find_number(uint32_t number, struct hwt_task *out);
/* t's name when it says more than the process name comm: its name now while it runs
 * (/proc), else the one kept. signal-safe */
bool hwt_task_name(const struct hwt_task *t, const char *comm, char *buf, size_t cap);

#endif
