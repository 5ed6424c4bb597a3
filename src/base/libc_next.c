/* SPDX-License-Identifier: MIT */
/* Finds the C library's own definition of a name libhwtag defines too (pthread_create,
 * memcpy, ...), by the GNU hash tables of the loaded modules (dl_iterate_phdr), calling an
 * IFUNC's resolver as the loader does. It must not call dlsym or anything that may
 * allocate: it runs inside pthread_create and the first string routine calls, possibly
 * before the heap is initialised. */
#include "libc_next.h"

#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "os.h"

#define VERSYM_HIDDEN 0x8000u /* a non-default version (name@VERSION, not @@) */
/* aarch64's IFUNC resolver arguments (glibc's __ifunc_arg_t; the flag says it is passed). */
#define IFUNC_ARG_HWCAP (UINT64_C(1) << 62)
struct ifunc_arg {
    unsigned long size, hwcap, hwcap2;
};

struct search {
    const char *name;
    uint32_t hash;
    uintptr_t self; /* an address in libhwtag's own code */
    bool past_self;
    void *found;
};

static uint32_t gnu_hash(const char *s)
{
    uint32_t h = 5381;
    for (; *s != '\0'; s++)
        h = h * 33 + (uint8_t)*s;
    return h;
}

static bool module_holds(const struct dl_phdr_info *info, uintptr_t addr)
{
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && addr - (info->dlpi_addr + ph->p_vaddr) < ph->p_memsz)
            return true;
    }
    return false;
}

/* glibc relocates the dynamic section's pointers in place, other loaders may not. */
static uintptr_t dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
    return v < info->dlpi_addr ? info->dlpi_addr + v : v;
}

/* The implementation an IFUNC's resolver picks for this CPU (the string routines). */
static void *resolve_ifunc(uintptr_t resolver)
{
    uint64_t hwcap, hwcap2;
    hwt_os_hwcaps(&hwcap, &hwcap2);
#if defined(__aarch64__)
    struct ifunc_arg arg = {sizeof(arg), hwcap, hwcap2};
    return ((void *(*)(uint64_t, const struct ifunc_arg *))resolver)(hwcap | IFUNC_ARG_HWCAP, &arg);
#else
    (void)hwcap2;
    return ((void *(*)(uint64_t))resolver)(hwcap);
#endif
}

static void *module_lookup(const struct dl_phdr_info *info, const char *name, uint32_t hash)
{
    const ElfW(Dyn) *dyn = NULL;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const uint32_t *gnu = NULL;
    const uint16_t *versym = NULL;

    for (unsigned i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (dyn == NULL)
        return NULL;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        if (dyn->d_tag == DT_SYMTAB)
            symtab = (const ElfW(Sym) *)dyn_ptr(info, dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_STRTAB)
            strtab = (const char *)dyn_ptr(info, dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_GNU_HASH)
            gnu = (const uint32_t *)dyn_ptr(info, dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_VERSYM)
            versym = (const uint16_t *)dyn_ptr(info, dyn->d_un.d_ptr);
    }
    if (symtab == NULL || strtab == NULL || gnu == NULL || gnu[0] == 0)
        return NULL;
    uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom_words = gnu[2];
    const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)&gnu[4] + bloom_words);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t i = buckets[hash % nbuckets];
    if (i < symoffset)
        return NULL;
    for (;; i++) {
        uint32_t h = chain[i - symoffset];
        const ElfW(Sym) *s = &symtab[i];
        unsigned type = ELF64_ST_TYPE(s->st_info);
        if ((h | 1) == (hash | 1) && s->st_shndx != SHN_UNDEF &&
            (type == STT_FUNC || type == STT_GNU_IFUNC) &&
            (versym == NULL || (versym[i] & VERSYM_HIDDEN) == 0) &&
            strcmp(strtab + s->st_name, name) == 0) {
            uintptr_t addr = info->dlpi_addr + s->st_value;
            return type == STT_GNU_IFUNC ? resolve_ifunc(addr) : (void *)addr;
        }
        if (h & 1)
            return NULL;
    }
}

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
    struct search *s = data;
    (void)size;
    if (!s->past_self) {
        s->past_self = module_holds(info, s->self);
        return 0;
    }
    s->found = module_lookup(info, s->name, s->hash);
    return s->found != NULL;
}

void *hwt_libc_next(const char *name)
{
    struct search s = {name, gnu_hash(name), (uintptr_t)&hwt_libc_next, false, NULL};
    dl_iterate_phdr(visit, &s);
    return s.found;
}

void *hwt_libc_next_once(void **slot, const char *name)
{
    void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (fn == NULL) {
        fn = hwt_libc_next(name);
        if (fn != NULL)
            __atomic_store_n(slot, fn, __ATOMIC_RELEASE);
    }
    return fn;
}
