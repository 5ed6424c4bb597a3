/* SPDX-License-Identifier: MIT */
/* Address -> symbol from the modules' own ELF files (.symtab, then .dynsym), mapped read-only
 * with raw system calls; it must not take the dynamic loader's lock, use stdio or malloc. */
#include "symbolize.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "maps.h"
#include "os.h"

#define SYM_MAX_MODULES 256u
#define SYM_MAX_RANGES 1024u
#define SYM_PATH_POOL 65536u

/* A mapped file (or the vDSO). Entries are appended under scan_busy and published by
 * nr_modules (release); image is filled in lazily by any thread, with a CAS. */
struct sym_module {
    uint32_t path;        /* offset of the NUL-terminated path in path_pool */
    uint64_t inode;       /* 0 for the vDSO */
    uintptr_t mem_start;  /* vDSO: the mapping is the image; 0 for files */
    size_t mem_size;      /* vDSO image size */
    const uint8_t *image; /* the whole ELF file, PROT_READ; NULL until mapped (atomic) */
    size_t image_size;    /* bytes mapped, valid once image is set */
    int image_failed;     /* opening or validating failed; not retried (atomic) */
};

/* An executable mapping; module -1 for anonymous memory (JIT), so that it does not trigger a
 * rescan each time. Appended under scan_busy and published by nr_ranges (release). */
struct sym_range {
    uintptr_t start, end;
    uint64_t offset; /* file offset of start */
    int module;
};

static struct sym_module modules[SYM_MAX_MODULES];
static struct sym_range ranges[SYM_MAX_RANGES];
static char path_pool[SYM_PATH_POOL];
static unsigned nr_modules, nr_ranges; /* atomic, release after the entry is filled */
static size_t path_used;               /* under scan_busy */
static int scan_busy;                  /* one scanner at a time; others skip (try-lock) */

/* ---- module table ---- */

static int find_module(const char *path, uint64_t inode, unsigned count)
{
    for (unsigned i = 0; i < count; i++)
        if (modules[i].inode == inode && strcmp(&path_pool[modules[i].path], path) == 0)
            return (int)i;
    return -1;
}

/* Called with scan_busy held. */
static int add_module(const struct hwt_mapping *m, bool vdso)
{
    unsigned count = __atomic_load_n(&nr_modules, __ATOMIC_RELAXED);
    size_t len = strlen(m->path) + 1;
    struct sym_module *mod;
    int found = find_module(m->path, m->inode, count);

    if (found >= 0)
        return found;
    if (count == SYM_MAX_MODULES || len > SYM_PATH_POOL - path_used)
        return -1;
    memcpy(&path_pool[path_used], m->path, len);
    mod = &modules[count];
    mod->path = (uint32_t)path_used;
    mod->inode = m->inode;
    if (vdso) {
        mod->mem_start = m->start;
        mod->mem_size = m->end - m->start;
    }
    path_used += len;
    __atomic_store_n(&nr_modules, count + 1, __ATOMIC_RELEASE);
    return (int)count;
}

static bool known_range(const struct hwt_mapping *m, unsigned count)
{
    for (unsigned i = 0; i < count; i++) {
        const struct sym_range *r = &ranges[i];
        if (r->start == m->start && r->end == m->end && r->offset == m->offset &&
            (r->module < 0 ? m->path[0] != '/' : modules[r->module].inode == m->inode))
            return true;
    }
    return false;
}

static bool scan_one(const struct hwt_mapping *m, void *arg)
{
    unsigned count = __atomic_load_n(&nr_ranges, __ATOMIC_RELAXED);
    bool vdso = strcmp(m->path, "[vdso]") == 0;
    struct sym_range *r;

    (void)arg;
    if (!m->executable || known_range(m, count))
        return true;
    if (count == SYM_MAX_RANGES)
        return false;
    r = &ranges[count];
    r->start = m->start;
    r->end = m->end;
    r->offset = m->offset;
    r->module = m->path[0] == '/' || vdso ? add_module(m, vdso) : -1;
    __atomic_store_n(&nr_ranges, count + 1, __ATOMIC_RELEASE);
    return true;
}

/* Appends the executable mappings not seen yet. Returns false when another thread is scanning
 * (the caller then does without: a signal handler must not wait). */
static bool rescan(void)
{
    if (__atomic_exchange_n(&scan_busy, 1, __ATOMIC_ACQUIRE))
        return false;
    hwt_maps_foreach(scan_one, NULL);
    __atomic_store_n(&scan_busy, 0, __ATOMIC_RELEASE);
    return true;
}

/* The newest range holding pc: a library mapped over an unmapped one's addresses wins. */
static const struct sym_range *find_range(uintptr_t pc)
{
    unsigned count = __atomic_load_n(&nr_ranges, __ATOMIC_ACQUIRE);
    while (count-- > 0)
        if (pc >= ranges[count].start && pc < ranges[count].end)
            return &ranges[count];
    return NULL;
}

/* ---- ELF ---- */

static bool in_image(size_t size, uint64_t off, uint64_t len)
{
    return off <= size && len <= size - off;
}

static const Elf64_Ehdr *elf_header(const uint8_t *img, size_t size)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;

    if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64)
        return NULL;
    return eh;
}

static const Elf64_Shdr *elf_section(const uint8_t *img, size_t size, unsigned idx)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;

    if (eh->e_shentsize != sizeof(Elf64_Shdr) || idx >= eh->e_shnum || eh->e_shoff % 8 != 0 ||
        !in_image(size, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)))
        return NULL;
    return (const Elf64_Shdr *)(img + eh->e_shoff) + idx;
}

/* The module's ELF image, mapped on first use by whichever thread gets there first. */
static const uint8_t *module_image(struct sym_module *mod, size_t *size)
{
    const uint8_t *img = __atomic_load_n(&mod->image, __ATOMIC_ACQUIRE);
    const uint8_t *expected = NULL;
    size_t len = 0;

    if (img) {
        *size = mod->image_size;
        return img;
    }
    if (__atomic_load_n(&mod->image_failed, __ATOMIC_RELAXED))
        return NULL;
    if (mod->mem_start) {
        img = (const uint8_t *)mod->mem_start;
        len = mod->mem_size;
    } else {
        img = hwt_os_map_file(&path_pool[mod->path], &len);
    }
    if (!img || !elf_header(img, len)) {
        if (img && !mod->mem_start)
            hwt_os_unmap((void *)img, len);
        __atomic_store_n(&mod->image_failed, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    mod->image_size = len; /* the same value from every racer */
    if (!__atomic_compare_exchange_n(&mod->image, &expected, img, false, __ATOMIC_RELEASE,
                                     __ATOMIC_ACQUIRE)) {
        if (!mod->mem_start)
            hwt_os_unmap((void *)img, len);
        img = expected;
    }
    *size = len;
    return img;
}

/* Load bias of the segment mapped at start from file offset offset: runtime - link address. */
static uintptr_t elf_bias(const uint8_t *img, size_t size, uintptr_t start, uint64_t offset)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
    const Elf64_Phdr *ph;

    if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff % 8 != 0 ||
        !in_image(size, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)))
        return start - offset;
    ph = (const Elf64_Phdr *)(img + eh->e_phoff);
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        uint64_t align = ph[i].p_align > 1 ? ph[i].p_align : 1;
        if (ph[i].p_type != PT_LOAD)
            continue;
        if (offset >= (ph[i].p_offset & ~(align - 1)) && offset < ph[i].p_offset + ph[i].p_filesz)
            return start - (uintptr_t)(ph[i].p_vaddr - ph[i].p_offset + offset);
    }
    return start - offset;
}

/* Lower is better: fewer leading underscores ("write" over "__write"), then stronger binding. */
static unsigned symbol_rank(const char *name, unsigned bind)
{
    unsigned underscores = 0;
    while (name[underscores] == '_')
        underscores++;
    return underscores * 4 + (bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2);
}

/* Searches the first section of type for a function holding vaddr. */
static bool elf_lookup(const uint8_t *img, size_t size, uint32_t type, uint64_t vaddr,
                       struct hwt_symbol *out)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
    const Elf64_Shdr *symtab = NULL, *strtab;
    const Elf64_Sym *syms;
    const char *strs;
    unsigned best_rank = ~0u;
    uint64_t count;

    for (unsigned i = 0; i < eh->e_shnum && !symtab; i++) {
        const Elf64_Shdr *sh = elf_section(img, size, i);
        if (!sh)
            return false;
        if (sh->sh_type == type)
            symtab = sh;
    }
    if (!symtab || symtab->sh_entsize != sizeof(Elf64_Sym) || symtab->sh_offset % 8 != 0 ||
        !in_image(size, symtab->sh_offset, symtab->sh_size))
        return false;
    strtab = elf_section(img, size, symtab->sh_link);
    if (!strtab || strtab->sh_type != SHT_STRTAB || strtab->sh_size == 0 ||
        !in_image(size, strtab->sh_offset, strtab->sh_size) ||
        img[strtab->sh_offset + strtab->sh_size - 1] != '\0')
        return false;
    syms = (const Elf64_Sym *)(img + symtab->sh_offset);
    strs = (const char *)img + strtab->sh_offset;
    count = symtab->sh_size / sizeof(Elf64_Sym);
    for (uint64_t i = 0; i < count; i++) {
        const Elf64_Sym *s = &syms[i];
        unsigned kind = ELF64_ST_TYPE(s->st_info), rank;
        if ((kind != STT_FUNC && kind != STT_GNU_IFUNC) || s->st_shndx == SHN_UNDEF ||
            vaddr < s->st_value || vaddr - s->st_value >= s->st_size ||
            s->st_name >= strtab->sh_size)
            continue;
        rank = symbol_rank(strs + s->st_name, ELF64_ST_BIND(s->st_info));
        if (rank < best_rank) {
            best_rank = rank;
            out->function = strs + s->st_name;
            out->function_offset = (uintptr_t)(vaddr - s->st_value);
            out->function_size = (uintptr_t)s->st_size;
        }
    }
    return out->function != NULL;
}

void hwt_symbolize_init(void)
{
    rescan();
}

bool hwt_symbolize(uintptr_t pc, struct hwt_symbol *out)
{
    const struct sym_range *r = find_range(pc);
    struct sym_module *mod;
    const uint8_t *img;
    size_t size = 0;
    uintptr_t bias;

    memset(out, 0, sizeof(*out));
    if (!r && rescan())
        r = find_range(pc);
    if (!r || r->module < 0)
        return false;
    mod = &modules[r->module];
    out->module = &path_pool[mod->path];
    bias = r->start - (uintptr_t)r->offset;
    img = module_image(mod, &size);
    if (img)
        bias = elf_bias(img, size, r->start, r->offset);
    out->module_offset = pc - bias;
    if (img && !elf_lookup(img, size, SHT_SYMTAB, pc - bias, out))
        elf_lookup(img, size, SHT_DYNSYM, pc - bias, out);
    return true;
}
