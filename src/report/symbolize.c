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

/* The NT_GNU_BUILD_ID note of the file image. */
static void elf_build_id(const uint8_t *img, size_t size, struct hwt_symbol *out)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
    const Elf64_Phdr *ph;

    if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff % 8 != 0 ||
        !in_image(size, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)))
        return;
    ph = (const Elf64_Phdr *)(img + eh->e_phoff);
    for (unsigned i = 0; i < eh->e_phnum; i++) {
        uint64_t off = ph[i].p_offset, end;
        if (ph[i].p_type != PT_NOTE || off % 4 != 0 || !in_image(size, off, ph[i].p_filesz))
            continue;
        end = off + ph[i].p_filesz;
        while (end - off >= sizeof(Elf64_Nhdr)) {
            const Elf64_Nhdr *n = (const Elf64_Nhdr *)(img + off);
            uint64_t name = off + sizeof(*n), desc = name + ((n->n_namesz + 3u) & ~3u);
            uint64_t next = desc + ((n->n_descsz + 3u) & ~3u);
            if (next > end || next <= off)
                break;
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
                memcmp(img + name, "GNU", 4) == 0 && n->n_descsz > 0 && n->n_descsz <= 64) {
                out->build_id = img + desc;
                out->build_id_len = n->n_descsz;
                return;
            }
            off = next;
        }
    }
}

/* The module image and load bias of a mapped pc. */
static bool module_at(uintptr_t pc, int *module, const uint8_t **img, size_t *size, uintptr_t *bias)
{
    const struct sym_range *r = find_range(pc);

    if (!r && rescan())
        r = find_range(pc);
    if (!r || r->module < 0)
        return false;
    *module = r->module;
    *img = module_image(&modules[r->module], size);
    if (*img == NULL)
        return false;
    *bias = elf_bias(*img, *size, r->start, r->offset);
    return true;
}

/* The dynamic symbol whose resolved JUMP_SLOT or GLOB_DAT slot (a GOT entry of the loaded
 * module at bias) holds target. Lazy binding resolves a slot at its first call, so a
 * function that was called through the PLT is found. */
static const char *got_symbol(const uint8_t *img, size_t size, uintptr_t bias, uintptr_t target)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;

    for (unsigned i = 0; i < eh->e_shnum; i++) {
        const Elf64_Shdr *sh = elf_section(img, size, i), *dynsym, *strtab;
        if (!sh)
            return NULL;
        if (sh->sh_type != SHT_RELA || sh->sh_entsize != sizeof(Elf64_Rela) ||
            sh->sh_offset % 8 != 0 || !in_image(size, sh->sh_offset, sh->sh_size) ||
            !(sh->sh_flags & SHF_ALLOC))
            continue;
        dynsym = elf_section(img, size, sh->sh_link);
        if (!dynsym || dynsym->sh_type != SHT_DYNSYM || dynsym->sh_entsize != sizeof(Elf64_Sym) ||
            dynsym->sh_offset % 8 != 0 || !in_image(size, dynsym->sh_offset, dynsym->sh_size))
            continue;
        strtab = elf_section(img, size, dynsym->sh_link);
        if (!strtab || strtab->sh_size == 0 ||
            !in_image(size, strtab->sh_offset, strtab->sh_size) ||
            img[strtab->sh_offset + strtab->sh_size - 1] != '\0')
            continue;
        const Elf64_Rela *rel = (const Elf64_Rela *)(img + sh->sh_offset);
        for (uint64_t k = 0; k < sh->sh_size / sizeof(Elf64_Rela); k++) {
            uint64_t type = ELF64_R_TYPE(rel[k].r_info), sym = ELF64_R_SYM(rel[k].r_info);
            const Elf64_Sym *s;
            if ((type != R_AARCH64_JUMP_SLOT && type != R_AARCH64_GLOB_DAT) || sym == 0 ||
                sym >= dynsym->sh_size / sizeof(Elf64_Sym) || rel[k].r_offset % 8 != 0)
                continue;
            if (*(const volatile uintptr_t *)(bias + rel[k].r_offset) != target)
                continue;
            s = (const Elf64_Sym *)(img + dynsym->sh_offset) + sym;
            if (s->st_name < strtab->sh_size)
                return (const char *)img + strtab->sh_offset + s->st_name;
        }
    }
    return NULL;
}

/* The .eh_frame_hdr entry (runtime start and length) of the function holding pc, from the
 * loaded image (only the encodings binutils and lld write: the table datarel sdata4, the
 * FDE's pc_begin pcrel sdata4, checked against the table). */
static bool fde_range(const uint8_t *img, size_t size, uintptr_t bias, uintptr_t pc,
                      uintptr_t *start, uintptr_t *len)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
    const Elf64_Phdr *ph;
    const uint8_t *hdr = NULL;

    if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff % 8 != 0 ||
        !in_image(size, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)))
        return false;
    ph = (const Elf64_Phdr *)(img + eh->e_phoff);
    for (unsigned i = 0; i < eh->e_phnum && !hdr; i++)
        if (ph[i].p_type == PT_GNU_EH_FRAME && ph[i].p_memsz >= 12)
            hdr = (const uint8_t *)(bias + ph[i].p_vaddr);
    if (!hdr || hdr[0] != 1 || hdr[1] != 0x1b || hdr[2] != 0x03 || hdr[3] != 0x3b)
        return false;
    uint32_t count;
    memcpy(&count, hdr + 8, 4);
    const int32_t *table = (const int32_t *)(hdr + 12);
    uintptr_t base = (uintptr_t)hdr;
    if (count == 0 || pc < base + (intptr_t)table[0])
        return false;
    uint32_t lo = 0, hi = count; /* the last entry starting at or below pc */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (base + (intptr_t)table[2 * mid] <= pc)
            lo = mid;
        else
            hi = mid;
    }
    uintptr_t begin = base + (intptr_t)table[2 * lo];
    const uint8_t *fde = (const uint8_t *)(base + (intptr_t)table[2 * lo + 1]);
    int32_t rel, range;
    memcpy(&rel, fde + 8, 4);
    memcpy(&range, fde + 12, 4);
    if ((uintptr_t)(fde + 8) + (intptr_t)rel != begin || range <= 0 ||
        pc - begin >= (uintptr_t)range)
        return false;
    *start = begin;
    *len = (uintptr_t)range;
    return true;
}

bool hwt_symbolize_callee(uintptr_t pc, uintptr_t ret, struct hwt_symbol *out)
{
    const uint8_t *img;
    size_t size;
    uintptr_t bias, start, len;
    int module, callee;
    const char *name = NULL;

    if (!module_at(pc, &callee, &img, &size, &bias) ||
        !fde_range(img, size, bias, pc, &start, &len))
        return false;
    /* the caller's own GOT only: its module is mapped (ret is on the stack), while a
     * library unloaded since would have its slots read from unmapped memory */
    if (module_at(ret, &module, &img, &size, &bias) && module != callee)
        name = got_symbol(img, size, bias, start);
    if (!name)
        return false;
    out->function = name;
    out->function_offset = pc - start;
    out->function_size = len;
    return true;
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
    if (img)
        elf_build_id(img, size, out);
    if (img && !elf_lookup(img, size, SHT_SYMTAB, pc - bias, out))
        elf_lookup(img, size, SHT_DYNSYM, pc - bias, out);
    return true;
}
