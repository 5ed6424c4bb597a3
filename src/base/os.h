/* SPDX-License-Identifier: MIT */
/* Thin wrappers over the system calls of the allocator: mappings, prctl, write, thread ids,
 * the auxiliary vector. The only file that calls mmap/munmap/madvise/prctl directly. */
#ifndef HWT_OS_H
#define HWT_OS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Page size, read from the auxiliary vector at start-up. */
extern size_t hwt_os_page_size;
/* RAM plus swap: no single request larger than this can be met (an early ENOMEM, where
 * mmap's overcommit check may not catch it, e.g. under QEMU's user mode). */
extern size_t hwt_os_memory_bytes;

void hwt_os_init(void);
/* Maps size bytes of fresh zeroed memory, PROT_MTE when tagged and MTE is active.
 * Returns NULL on failure. */
void *hwt_os_map(size_t size, bool tagged);
/* Reserves address space only (PROT_NONE); commit parts with hwt_os_commit. */
void *hwt_os_reserve(size_t size, size_t align);
bool hwt_os_commit(void *addr, size_t size, bool tagged);
void hwt_os_unmap(void *addr, size_t size);
/* Gives the pages back to the OS; they read as zero (and tag 0) afterwards. */
void hwt_os_decommit(void *addr, size_t size);
/* A monotonic clock in milliseconds, wrapping (compare differences): a few nanoseconds
 * natively (the vDSO's coarse clock), one instruction on aarch64 (the generic timer). */
uint32_t hwt_os_clock_ms(void);
/* How many pages of [addr, addr+size) are resident (mincore); all of them when it fails. */
size_t hwt_os_resident_pages(void *addr, size_t size);

/* signal-safe */
long hwt_os_write(int fd, const void *buf, size_t len);
/* Returns false when not every byte could be written (full disk, closed pipe, ...). */
bool hwt_os_write_all(int fd, const void *buf, size_t len);
int hwt_os_gettid(void);
int hwt_os_getpid(void);
/* Whether every byte of [addr, addr + len) is readable now, as the kernel checks it (a copy
 * by process_vm_readv, which stops at the first page it cannot read; no signal). False too
 * where that call is missing or forbidden (seccomp, QEMU's user mode). */
bool hwt_os_readable(uintptr_t addr, size_t len);
/* open(path, O_RDONLY | O_CLOEXEC), read(2) retried on EINTR, close(2). signal-safe */
int hwt_os_open_read(const char *path);
long hwt_os_read(int fd, void *buf, size_t len);
void hwt_os_close(int fd);
/* Maps the whole file read-only; NULL when it cannot be opened or is empty. signal-safe */
const void *hwt_os_map_file(const char *path, size_t *size);

/* Whether the kernel started this process in secure-execution mode (AT_SECURE: set-user-ID,
 * set-group-ID, file capabilities, an LSM's transition): its environment then belongs to a
 * less privileged user and must not choose files or programs. signal-safe */
bool hwt_os_secure(void);
/* Tests set it to run as a secure-execution process would. It can only add AT_SECURE, never
 * take it away, so a process the kernel marked stays secure whatever writes it. */
extern bool hwt_os_simulate_secure;

struct sigaction;
/* libc's sigaction itself, past the program-facing one that interpose.c defines (which
 * keeps our SIGSEGV handler in front). signal-safe */
int hwt_os_sigaction(int sig, const struct sigaction *act, struct sigaction *old);

/* 64 random bits from the kernel (AT_RANDOM and the stack address when getrandom fails). */
uint64_t hwt_os_random64(void);

/* MTE control. mode: 0 none, 1 sync, 2 async, 3 asymm. Applies to the calling thread
 * (threads created later inherit it). Returns false when the kernel refuses. */
bool hwt_os_mte_supported(void);
/* Whether the CPU has a single-instruction compare-and-swap (aarch64: LSE atomics,
 * AT_HWCAP's ATOMICS bit; x86_64: always). arch/cas.h */
bool hwt_os_has_cas(void);
/* The CPU's AT_HWCAP and AT_HWCAP2 bits (for IFUNC resolvers). signal-safe */
void hwt_os_hwcaps(uint64_t *hwcap, uint64_t *hwcap2);
bool hwt_os_mte_set_mode(int mode);

#endif
