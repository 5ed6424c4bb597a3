/* SPDX-License-Identifier: MIT */
/* Thread names for reports: /proc/self/task/TID/comm, read with raw system calls at report
 * time only (the allocation and free paths record just the tid). */
#ifndef HWT_TASK_H
#define HWT_TASK_H

#include <stdbool.h>
#include <stddef.h>

/* The name of thread tid of this process when it is alive and its name says more than the
 * process name comm (it differs from comm and from the main thread's kernel name, which is
 * "qemu-aarch64" under qemu-user for every unnamed thread). signal-safe */
bool hwt_task_thread_name(int tid, const char *comm, char *buf, size_t cap);

#endif
