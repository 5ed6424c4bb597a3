/* SPDX-License-Identifier: MIT */
/* The allocator's only mmap/munmap/madvise/mincore/prctl/getauxval/write calls and the page size.
 * No policy: callers decide what to map and when. */
#include "os.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sysinfo.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "arch/clock.h"
#include "arch/mte.h"

#ifndef PROT_MTE
#define PROT_MTE 0x20
#endif
#ifndef HWCAP_ATOMICS
#define HWCAP_ATOMICS (1UL << 8)
#endif
#ifndef HWCAP2_MTE
#define HWCAP2_MTE (1UL << 18)
#endif
#ifndef PR_SET_TAGGED_ADDR_CTRL
#define PR_SET_TAGGED_ADDR_CTRL 55
#define PR_TAGGED_ADDR_ENABLE (1UL << 0)
#endif
#ifndef PR_MTE_TCF_SHIFT
#define PR_MTE_TCF_SHIFT 1
#define PR_MTE_TCF_NONE (0UL << PR_MTE_TCF_SHIFT)
#define PR_MTE_TCF_SYNC (1UL << PR_MTE_TCF_SHIFT)
#define PR_MTE_TCF_ASYNC (2UL << PR_MTE_TCF_SHIFT)
#define PR_MTE_TAG_SHIFT 3
#endif

size_t hwt_os_page_size = 4096;
size_t hwt_os_memory_bytes = SIZE_MAX;
int hwt_mte_active;
size_t hwt_mte_dcz_block = 64;

void hwt_os_init(void)
{
    unsigned long ps = getauxval(AT_PAGESZ);
    if (ps >= 4096 && (ps & (ps - 1)) == 0)
        hwt_os_page_size = ps;
    struct sysinfo si;
    if (syscall(SYS_sysinfo, &si) == 0 && si.totalram > 0) {
        uint64_t bytes = ((uint64_t)si.totalram + si.totalswap) * (si.mem_unit ? si.mem_unit : 1);
        if (bytes < SIZE_MAX)
            hwt_os_memory_bytes = (size_t)bytes;
    }
}

static int prot_for(bool tagged)
{
    int prot = PROT_READ | PROT_WRITE;
    if (tagged && hwt_mte_active)
        prot |= PROT_MTE;
    return prot;
}

void *hwt_os_map(size_t size, bool tagged)
{
    void *p =
        mmap(NULL, size, prot_for(tagged), MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void *hwt_os_reserve(size_t size, size_t align)
{
    size_t span = size + align;
    char *p = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    uintptr_t start = hwt_align_up((uintptr_t)p, align);
    if (start > (uintptr_t)p)
        munmap(p, start - (uintptr_t)p);
    uintptr_t end = start + size;
    if ((uintptr_t)p + span > end)
        munmap((void *)end, (uintptr_t)p + span - end);
    return (void *)start;
}

bool hwt_os_commit(void *addr, size_t size, bool tagged)
{
    return mprotect(addr, size, prot_for(tagged)) == 0;
}

uint32_t hwt_os_clock_ms(void)
{
#if HWT_HAVE_ARCH_CLOCK
    uint64_t per_ms = hwt_arch_clock_hz() / 1000;
    return (uint32_t)(hwt_arch_clock() / (per_ms != 0 ? per_ms : 1));
#else
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) != 0)
        return 0;
    return (uint32_t)((uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u);
#endif
}

void hwt_os_unmap(void *addr, size_t size)
{
    munmap(addr, size);
}

void hwt_os_decommit(void *addr, size_t size)
{
    madvise(addr, size, MADV_DONTNEED);
}

size_t hwt_os_resident_pages(void *addr, size_t size)
{
    enum { CHUNK = 512 }; /* pages asked per mincore call: the vector lives on the stack */
    unsigned char vec[CHUNK];
    size_t pages = (size + hwt_os_page_size - 1) / hwt_os_page_size, resident = 0;
    for (size_t done = 0; done < pages;) {
        size_t n = pages - done < CHUNK ? pages - done : CHUNK;
        if (mincore((char *)addr + done * hwt_os_page_size, n * hwt_os_page_size, vec) != 0)
            return pages;
        for (size_t i = 0; i < n; i++)
            resident += vec[i] & 1;
        done += n;
    }
    return resident;
}

long hwt_os_write(int fd, const void *buf, size_t len)
{
    return syscall(SYS_write, fd, buf, len);
}

bool hwt_os_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        long n = hwt_os_write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

int hwt_os_gettid(void)
{
    return (int)syscall(SYS_gettid);
}

int hwt_os_getpid(void)
{
    return (int)syscall(SYS_getpid);
}

bool hwt_os_readable(uintptr_t addr, size_t len)
{
    /* the copy lands in one small buffer, named again by each local iovec */
    enum { CHUNK = 512, CHUNKS = 32 };
    char buf[CHUNK];
    struct iovec local[CHUNKS];
    for (unsigned i = 0; i < CHUNKS; i++)
        local[i] = (struct iovec){buf, CHUNK};
    long pid = hwt_os_getpid();
    while (len > 0) {
        size_t n = len < (size_t)CHUNK * CHUNKS ? len : (size_t)CHUNK * CHUNKS;
        struct iovec remote = {(void *)addr, n};
        if (syscall(SYS_process_vm_readv, pid, local, (long)CHUNKS, &remote, 1L, 0L) != (long)n)
            return false;
        addr += n;
        len -= n;
    }
    return true;
}

/* syscall() takes longs: every int argument is widened explicitly. */
int hwt_os_open_read(const char *path)
{
    return (int)syscall(SYS_openat, (long)AT_FDCWD, path, (long)(O_RDONLY | O_CLOEXEC));
}

long hwt_os_read(int fd, void *buf, size_t len)
{
    long r;
    do
        r = syscall(SYS_read, (long)fd, buf, len);
    while (r < 0 && errno == EINTR);
    return r;
}

void hwt_os_close(int fd)
{
    syscall(SYS_close, (long)fd);
}

const void *hwt_os_map_file(const char *path, size_t *size)
{
    int fd = hwt_os_open_read(path);
    long end, addr;

    if (fd < 0)
        return NULL;
    end = syscall(SYS_lseek, (long)fd, 0L, (long)SEEK_END);
    addr = end > 0 ? syscall(SYS_mmap, NULL, (size_t)end, (long)PROT_READ, (long)MAP_PRIVATE,
                             (long)fd, 0L)
                   : -1;
    hwt_os_close(fd);
    if (end <= 0 || addr == -1) /* syscall() turns errors into -1 */
        return NULL;
    *size = (size_t)end;
    return (const void *)addr;
}

bool hwt_os_simulate_secure;

bool hwt_os_secure(void)
{
    return getauxval(AT_SECURE) != 0 || hwt_os_simulate_secure;
}

uint64_t hwt_os_random64(void)
{
    uint64_t v = 0;
    /* GRND_NONBLOCK (1): never wait for the entropy pool at start-up */
    if (syscall(SYS_getrandom, &v, sizeof(v), 1L) == (long)sizeof(v))
        return v;
    const uint64_t *at_random = (const uint64_t *)getauxval(AT_RANDOM);
    if (at_random != NULL)
        v = at_random[1]; /* glibc uses the first 8 bytes for the stack guard */
    return v ^ (uint64_t)(uintptr_t)&v;
}

bool hwt_os_mte_supported(void)
{
#if HWTAG_MTE
    return (getauxval(AT_HWCAP2) & HWCAP2_MTE) != 0;
#else
    return false;
#endif
}

bool hwt_os_has_cas(void)
{
#if defined(__aarch64__)
    return (getauxval(AT_HWCAP) & HWCAP_ATOMICS) != 0;
#else
    return true;
#endif
}

void hwt_os_hwcaps(uint64_t *hwcap, uint64_t *hwcap2)
{
    *hwcap = getauxval(AT_HWCAP);
    *hwcap2 = getauxval(AT_HWCAP2);
}

bool hwt_os_mte_set_mode(int mode)
{
#if HWTAG_MTE
    unsigned long tcf;
    switch (mode) {
    case 1:
        tcf = PR_MTE_TCF_SYNC;
        break;
    case 2:
        tcf = PR_MTE_TCF_ASYNC;
        break;
    case 3: /* asymmetric: sync reads, async writes (the kernel picks it from both bits) */
        tcf = PR_MTE_TCF_SYNC | PR_MTE_TCF_ASYNC;
        break;
    default:
        tcf = PR_MTE_TCF_NONE;
        break;
    }
    unsigned long ctrl =
        PR_TAGGED_ADDR_ENABLE | tcf | ((unsigned long)HWT_TAG_INCLUDE_MASK << PR_MTE_TAG_SHIFT);
    return prctl(PR_SET_TAGGED_ADDR_CTRL, ctrl, 0, 0, 0) == 0;
#else
    (void)mode;
    return false;
#endif
}

/* glibc's exported second name of sigaction: interpose.c defines sigaction itself. */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

int hwt_os_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    return __sigaction(sig, act, old);
}
