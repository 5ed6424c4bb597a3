/* SPDX-License-Identifier: MIT */
/* insncount: a qemu TCG plugin (plugin API version 1, qemu 7.2 linux-user) that counts the guest
 * instructions executed, split by module (the file mapping the code was translated from), and
 * the MTE instructions executed, split by kind.
 *
 *   qemu-aarch64 -cpu max,sve=off -L / -plugin bench/insncount/insncount.so,out=FILE prog ...
 *
 * FILE (default: stderr through qemu_plugin_outs; "%p" in it becomes the process id) gets lines
 *   total N
 *   module N PATH          (PATH "[anon]" for code outside any file mapping)
 *   mte KIND N             (irg gmi addg subg subp stg stzg st2g stz2g stgp ldg dc_gva dc_gzva tco)
 * With "pcs=TEXT", every instruction of the modules whose path contains TEXT is also counted
 * on its own, and FILE gets, after those lines,
 *   map LO HI PATH         (each mapping of such a module: the lowest LO is its load base)
 *   pc ADDR N              (N executions of the instruction at ADDR, N > 0; an address
 *                           translated more than once has a line per translation)
 * for bench/insnprof.py to attribute to functions and source lines.
 * Counting is inline (no helper calls): one add per translation block for the totals, one per
 * MTE instruction. The adds are not atomic: counts of several threads running at once may lose
 * a few increments; single-threaded counts are exact. A block is charged to the module of its
 * first instruction. A forked child starts from zero (qemu-user forks the host process, so
 * a pthread_atfork handler runs in the child): with "%p", each process's file holds its own
 * instructions, and the files of a run add up to the run. Debian ships no qemu-plugin.h, so the few declarations used are below,
 * with the documented v1 signatures. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the part of the qemu plugin API v1 that this plugin uses ---- */
typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t; /* not looked at */
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
                                              void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn,
                                                enum qemu_plugin_op op, void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
void *qemu_plugin_insn_haddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
void qemu_plugin_outs(const char *string);
#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))
QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;

/* ---- MTE instruction kinds (Arm ARM encodings, A64) ---- */
enum { K_IRG, K_GMI, K_ADDG, K_SUBG, K_SUBP, K_STG, K_STZG, K_ST2G, K_STZ2G, K_STGP, K_LDG,
       K_DC_GVA, K_DC_GZVA, K_TCO, K_N, K_NONE = -1 };
static const char *const kind_name[K_N] = {"irg", "gmi", "addg", "subg", "subp", "stg", "stzg",
    "st2g", "stz2g", "stgp", "ldg", "dc_gva", "dc_gzva", "tco"};

static int mte_kind(uint32_t i)
{
    if ((i & 0xFFE0FC00u) == 0x9AC01000u) return K_IRG;
    if ((i & 0xFFE0FC00u) == 0x9AC01400u) return K_GMI;
    if ((i & 0xDFE0FC00u) == 0x9AC00000u) return K_SUBP; /* subp and subps */
    if ((i & 0xFFC0C000u) == 0x91800000u) return K_ADDG;
    if ((i & 0xFFC0C000u) == 0xD1800000u) return K_SUBG;
    if ((i & 0xFF200000u) == 0xD9200000u) { /* stg/stzg/st2g/stz2g, ldg and the EL1-only *gm */
        unsigned opc = (i >> 22) & 3, op2 = (i >> 10) & 3;
        if (op2 == 0) return opc == 1 ? K_LDG : K_NONE;
        return (int[]){K_STG, K_STZG, K_ST2G, K_STZ2G}[opc];
    }
    if ((i & 0xFFC00000u) == 0x68800000u || (i & 0xFF800000u) == 0x69000000u) return K_STGP;
    if ((i & 0xFFFFFFE0u) == 0xD50B7460u) return K_DC_GVA;
    if ((i & 0xFFFFFFE0u) == 0xD50B7480u) return K_DC_GZVA;
    if ((i & 0xFFFFF0FFu) == 0xD503409Fu) return K_TCO;              /* msr tco, #imm */
    if ((i & 0xFFDFFFE0u) == 0xD51B42E0u) return K_TCO;              /* msr/mrs tco, xN */
    return K_NONE;
}

/* ---- modules: host /proc/self/maps, since linux-user maps the guest's files itself ---- */
#define MAX_MAPS 4096
#define MAX_MODS 512
struct map { uintptr_t lo, hi; int mod; };
static struct map maps[MAX_MAPS];
static int nmaps;
static char *mod_name[MAX_MODS];
static uint64_t mod_count[MAX_MODS];
static int nmods = 1; /* 0 is "[anon]" */
static uint64_t mte_count[K_N];
static const char *out_path;
static const char *pcs_text; /* "pcs=": the modules counted per instruction, or NULL */
struct pc_count {
    uintptr_t addr;
    uint64_t n;
    struct pc_count *next;
};
static struct pc_count *pc_counts; /* every instruction so counted, newest first */

static int mod_id(const char *path)
{
    for (int m = 1; m < nmods; m++)
        if (!strcmp(mod_name[m], path)) return m;
    if (nmods == MAX_MODS) return 0;
    mod_name[nmods] = strdup(path);
    return nmods++;
}

static void load_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4352], path[4096];
    nmaps = 0;
    while (f && nmaps < MAX_MAPS && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        path[0] = 0;
        if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %4095s", &lo, &hi, path) < 2 || path[0] != '/')
            continue;
        maps[nmaps++] = (struct map){lo, hi, mod_id(path)};
    }
    if (f) fclose(f);
}

static int find_mod(uintptr_t a)
{
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < nmaps; i++)
            if (a >= maps[i].lo && a < maps[i].hi) return maps[i].mod;
        load_maps(); /* a new mapping since the last look: read the table again once */
    }
    return 0;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    if (!n) return;
    int m = find_mod((uintptr_t)qemu_plugin_insn_haddr(qemu_plugin_tb_get_insn(tb, 0)));
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &mod_count[m], n);
    bool each = pcs_text && m && strstr(mod_name[m], pcs_text);
    for (size_t k = 0; k < n; k++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, k);
        uint32_t w;
        struct pc_count *pc = each ? calloc(1, sizeof *pc) : NULL;
        if (pc) { /* never freed: the counters live as long as the translated code may run */
            pc->addr = (uintptr_t)qemu_plugin_insn_haddr(insn);
            pc->next = pc_counts;
            pc_counts = pc;
            qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &pc->n, 1);
        }
        if (qemu_plugin_insn_size(insn) != 4) continue;
        memcpy(&w, qemu_plugin_insn_data(insn), 4);
        int kind = mte_kind(w);
        if (kind != K_NONE)
            qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64,
                                                       &mte_count[kind], 1);
    }
}

/* A forked child's counts begin at its fork; the module table is inherited as it is. */
static void fork_child(void)
{
    memset(mod_count, 0, sizeof mod_count);
    memset(mte_count, 0, sizeof mte_count);
    for (struct pc_count *pc = pc_counts; pc; pc = pc->next)
        pc->n = 0;
}

/* out_path with each "%p" replaced by the process id, into buf. */
static const char *expand_path(char *buf, size_t size)
{
    size_t n = 0;
    for (const char *s = out_path; *s && n + 1 < size; s++) {
        if (s[0] == '%' && s[1] == 'p') {
            n += (size_t)snprintf(buf + n, size - n, "%d", (int)getpid());
            s++;
        } else {
            buf[n++] = *s;
        }
    }
    buf[n < size ? n : size - 1] = 0;
    return buf;
}

static void at_exit(qemu_plugin_id_t id, void *u)
{
    (void)id, (void)u;
    char buf[4400], path[4096];
    FILE *f = out_path ? fopen(expand_path(path, sizeof path), "w") : NULL;
    uint64_t total = 0;
    for (int m = 0; m < nmods; m++) total += mod_count[m];
#define EMIT(...) do { snprintf(buf, sizeof buf, __VA_ARGS__); \
        if (f) fputs(buf, f); else qemu_plugin_outs(buf); } while (0)
    EMIT("total %llu\n", (unsigned long long)total);
    for (int m = 0; m < nmods; m++)
        if (mod_count[m])
            EMIT("module %llu %s\n", (unsigned long long)mod_count[m], m ? mod_name[m] : "[anon]");
    for (int k = 0; k < K_N; k++)
        EMIT("mte %s %llu\n", kind_name[k], (unsigned long long)mte_count[k]);
    for (int i = 0; pcs_text && i < nmaps; i++)
        if (strstr(mod_name[maps[i].mod], pcs_text))
            EMIT("map %lx %lx %s\n", (unsigned long)maps[i].lo, (unsigned long)maps[i].hi,
                 mod_name[maps[i].mod]);
    for (struct pc_count *pc = pc_counts; pc; pc = pc->next)
        if (pc->n)
            EMIT("pc %lx %llu\n", (unsigned long)pc->addr, (unsigned long long)pc->n);
    if (f) fclose(f);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                           int argc, char **argv)
{
    (void)info;
    for (int i = 0; i < argc; i++) {
        if (!strncmp(argv[i], "out=", 4)) out_path = argv[i] + 4;
        if (!strncmp(argv[i], "pcs=", 4)) pcs_text = argv[i] + 4;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    pthread_atfork(NULL, NULL, fork_child);
    return 0;
}
