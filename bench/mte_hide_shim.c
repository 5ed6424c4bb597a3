/* SPDX-License-Identifier: MIT */
/* LD_PRELOAD shim that hides HWCAP2_MTE from getauxval(), so that an allocator which tags
 * whenever the CPU can (Scudo standalone) runs its untagged path: the "Scudo without MTE"
 * configuration on an MTE machine. It changes nothing else. */
#include <sys/auxv.h>

#ifndef HWCAP2_MTE
#define HWCAP2_MTE (1UL << 18)
#endif

/* glibc's exported alias; calling it avoids dlsym, which may allocate inside malloc's init. */
unsigned long __getauxval(unsigned long type);

unsigned long getauxval(unsigned long type)
{
    unsigned long v = __getauxval(type);
    if (type == AT_HWCAP2)
        v &= ~(unsigned long)HWCAP2_MTE;
    return v;
}
