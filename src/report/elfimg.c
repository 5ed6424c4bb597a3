/* SPDX-License-Identifier: MIT */
/* Reading a mapped ELF image: header, load bias, symbols, build id, the .got entries and
 * the .eh_frame_hdr table. Every offset is checked against the image's size; no state,
 * no allocation, so the fault path may call it. */
#include "elfimg.h"

#include <string.h>

static bool in_image(size_t size, uint64_t off, uint64_t len)
{
    return off <= size && len <= size - off;
}

const Elf64_Ehdr *hwt_elfimg_header(const uint8_t *img, size_t size)
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

/* Load bias of the segment mapped at start from file offset offset: runtime - link address. */
uintptr_t hwt_elfimg_bias(const uint8_t *img, size_t size, uintptr_t start, uint64_t offset)
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
bool hwt_elfimg_lookup(const uint8_t *img, size_t size, uint32_t type, uint64_t vaddr,
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

/* Whether the image has a section of type with contents (a debug file's .symtab does; its
 * copies of the loaded sections are SHT_NOBITS). */
bool hwt_elfimg_has_section(const uint8_t *img, size_t size, uint32_t type)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;

    for (unsigned i = 0; i < eh->e_shnum; i++) {
        const Elf64_Shdr *sh = elf_section(img, size, i);
        if (!sh)
            return false;
        if (sh->sh_type == type && sh->sh_size > 0)
            return true;
    }
    return false;
}

/* The NT_GNU_BUILD_ID note of the file image. */
void hwt_elfimg_build_id(const uint8_t *img, size_t size, struct hwt_symbol *out)
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

/* The dynamic symbol whose resolved JUMP_SLOT or GLOB_DAT slot (a GOT entry of the loaded
 * module at bias) holds target. Lazy binding resolves a slot at its first call, so a
 * function that was called through the PLT is found. */
const char *hwt_elfimg_got_symbol(const uint8_t *img, size_t size, uintptr_t bias, uintptr_t target)
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
bool hwt_elfimg_fde_range(const uint8_t *img, size_t size, uintptr_t bias, uintptr_t pc,
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
