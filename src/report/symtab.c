/* SPDX-License-Identifier: MIT */
/* Address -> symbol from the modules' own ELF files (.symtab, then .dynsym), mapped read-only
 * with raw system calls; it must not take the dynamic loader's lock, use stdio or malloc. */
#include "symtab.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "elfimg.h"
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
    int debug_state;      /* DEBUG_*: the module's own .symtab or its debug file (atomic) */
    const uint8_t *debug; /* the debug file's image when DEBUG_FILE (atomic) */
    size_t debug_size;    /* valid once debug is set */
};

/* Where a module's local names come from. Decided once per module; racers decide alike. */
enum { DEBUG_UNKNOWN, DEBUG_OWN, DEBUG_FILE, DEBUG_NONE };
#define DEBUG_DIR "/usr/lib/debug/.build-id/"
#define DEBUG_PATH_CAP 192u

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
    if (!img || !hwt_elfimg_header(img, len)) {
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

/* DEBUG_DIR "xx/yyyy.debug" for the build id; false when it has none or is too long. */
static bool debug_path(const struct hwt_symbol *sym, char *out, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    size_t len = sizeof(DEBUG_DIR) - 1;

    if (sym->build_id == NULL || sym->build_id_len < 2 ||
        len + 2 * sym->build_id_len + sizeof("/.debug") > cap)
        return false;
    memcpy(out, DEBUG_DIR, len);
    for (unsigned i = 0; i < sym->build_id_len; i++) {
        out[len++] = hex[sym->build_id[i] >> 4];
        out[len++] = hex[sym->build_id[i] & 0xf];
        if (i == 0)
            out[len++] = '/';
    }
    memcpy(out + len, ".debug", sizeof(".debug"));
    return true;
}

/* The module's debug file (mapped on first use, as module_image does), or NULL when the
 * module has a .symtab of its own (*own) or no debug file. sym holds the build id. */
static const uint8_t *module_debug(struct sym_module *mod, const uint8_t *img, size_t size,
                                   const struct hwt_symbol *sym, size_t *debug_size, bool *own)
{
    int state = __atomic_load_n(&mod->debug_state, __ATOMIC_ACQUIRE);
    char path[DEBUG_PATH_CAP];
    const uint8_t *dbg = NULL, *expected = NULL;
    size_t len = 0;

    if (state == DEBUG_UNKNOWN) {
        state = DEBUG_NONE;
        if (mod->mem_start || hwt_elfimg_has_section(img, size, SHT_SYMTAB)) {
            state = DEBUG_OWN; /* the vDSO counts as its own: there is nothing to install */
        } else if (debug_path(sym, path, sizeof(path)) &&
                   (dbg = hwt_os_map_file(path, &len)) != NULL) {
            if (hwt_elfimg_header(dbg, len) && hwt_elfimg_has_section(dbg, len, SHT_SYMTAB)) {
                mod->debug_size = len; /* the same value from every racer */
                if (!__atomic_compare_exchange_n(&mod->debug, &expected, dbg, false,
                                                 __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
                    hwt_os_unmap((void *)dbg, len);
                state = DEBUG_FILE;
            } else {
                hwt_os_unmap((void *)dbg, len);
            }
        }
        __atomic_store_n(&mod->debug_state, state, __ATOMIC_RELEASE);
    }
    *own = state == DEBUG_OWN;
    if (state != DEBUG_FILE)
        return NULL;
    dbg = __atomic_load_n(&mod->debug, __ATOMIC_ACQUIRE);
    *debug_size = mod->debug_size;
    return dbg;
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
    *bias = hwt_elfimg_bias(*img, *size, r->start, r->offset);
    return true;
}

bool hwt_symtab_callee(uintptr_t pc, uintptr_t ret, struct hwt_symbol *out)
{
    const uint8_t *img;
    size_t size;
    uintptr_t bias, start, len;
    int module, callee;
    const char *name = NULL;

    if (!module_at(pc, &callee, &img, &size, &bias) ||
        !hwt_elfimg_fde_range(img, size, bias, pc, &start, &len))
        return false;
    /* the caller's own GOT only: its module is mapped (ret is on the stack), while a
     * library unloaded since would have its slots read from unmapped memory */
    if (module_at(ret, &module, &img, &size, &bias) && module != callee)
        name = hwt_elfimg_got_symbol(img, size, bias, start);
    if (!name)
        return false;
    out->function = name;
    out->function_offset = pc - start;
    out->function_size = len;
    return true;
}

bool hwt_symtab_lookup(uintptr_t pc, struct hwt_symbol *out)
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
        bias = hwt_elfimg_bias(img, size, r->start, r->offset);
    out->module_offset = pc - bias;
    if (!img)
        return true;
    hwt_elfimg_build_id(img, size, out);
    size_t debug_size = 0;
    bool own = false;
    const uint8_t *dbg = module_debug(mod, img, size, out, &debug_size, &own);
    out->debug_found = own || dbg != NULL;
    if (own) {
        if (!hwt_elfimg_lookup(img, size, SHT_SYMTAB, pc - bias, out))
            hwt_elfimg_lookup(img, size, SHT_DYNSYM, pc - bias, out);
    } else if (!hwt_elfimg_lookup(img, size, SHT_DYNSYM, pc - bias, out) && dbg != NULL) {
        out->local = hwt_elfimg_lookup(dbg, debug_size, SHT_SYMTAB, pc - bias, out);
    }
    return true;
}
