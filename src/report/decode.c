/* SPDX-License-Identifier: MIT */
/* AArch64 load/store decoder: turns the faulting instruction word into the size and
 * direction of its memory access, following the A64 "Loads and Stores" encoding index.
 * Must stay pure (no memory access beyond its arguments) so the fault handler can use it. */
#include "decode.h"

/* Field insn[hi:lo]. */
static unsigned field(uint32_t insn, unsigned hi, unsigned lo)
{
    return (insn >> lo) & ((1u << (hi - lo + 1)) - 1);
}

static bool set(struct hwt_access *out, unsigned size, bool is_read, bool is_write)
{
    out->size = size;
    out->is_read = is_read;
    out->is_write = is_write;
    return true;
}

/* LD1-LD4/ST1-ST4 (multiple structures): size = registers * 8 or 16 bytes. */
static bool simd_multiple(uint32_t insn, struct hwt_access *out)
{
    /* registers transferred by opcode (insn[15:12]); 0 = unallocated */
    static const unsigned char regs_by_opcode[16] = {
        [0x0] = 4, /* LD4/ST4 */
        [0x2] = 4, /* LD1/ST1, four registers */
        [0x4] = 3, /* LD3/ST3 */
        [0x6] = 3, /* LD1/ST1, three registers */
        [0x7] = 1, /* LD1/ST1, one register */
        [0x8] = 2, /* LD2/ST2 */
        [0xa] = 2, /* LD1/ST1, two registers */
    };
    bool post = field(insn, 23, 23);
    unsigned regs = regs_by_opcode[field(insn, 15, 12)];
    unsigned reg_bytes = field(insn, 30, 30) ? 16 : 8;
    bool load = field(insn, 22, 22);

    if (field(insn, 31, 31) || field(insn, 21, 21) || (!post && field(insn, 20, 16)) || regs == 0)
        return false;
    /* LD2-LD4/ST2-ST4 of .1d arrangements are reserved (only LD1/ST1 may use them) */
    if (field(insn, 11, 10) == 3 && !field(insn, 30, 30) && (field(insn, 15, 12) & 3) == 0)
        return false;
    return set(out, regs * reg_bytes, load, !load);
}

/* LD1-LD4/ST1-ST4 (single structure) and LD1R-LD4R (replicate). */
static bool simd_single(uint32_t insn, struct hwt_access *out)
{
    bool post = field(insn, 23, 23);
    bool load = field(insn, 22, 22);
    unsigned opcode = field(insn, 15, 13);
    unsigned s = field(insn, 12, 12);
    unsigned size = field(insn, 11, 10);
    unsigned selem = ((opcode & 1) << 1 | field(insn, 21, 21)) + 1;
    unsigned scale;

    if (field(insn, 31, 31) || (!post && field(insn, 20, 16)))
        return false;
    switch (opcode >> 1) {
    case 0: /* byte lanes */
        scale = 0;
        break;
    case 1: /* halfword lanes */
        if (size & 1)
            return false;
        scale = 1;
        break;
    case 2: /* word or doubleword lanes */
        if (size == 0) {
            scale = 2;
        } else if (size == 1 && s == 0) {
            scale = 3;
        } else {
            return false;
        }
        break;
    default: /* replicate to all lanes: loads only */
        if (!load || s)
            return false;
        scale = size;
        break;
    }
    return set(out, selem << scale, load, !load);
}

/* Exclusives, load-acquire/store-release, CAS and CASP (bits 29:24 = 001000). */
static bool exclusive_ordered(uint32_t insn, struct hwt_access *out)
{
    unsigned size = field(insn, 31, 30);
    bool o2 = field(insn, 23, 23);
    bool load = field(insn, 22, 22);
    bool o1 = field(insn, 21, 21);
    unsigned width = 1u << size;

    if (!o2 && !o1) /* LDXR/LDAXR/STXR/STLXR */
        return set(out, width, load, !load);
    if (!o2 && o1) {
        if (size >= 2) /* LDXP/LDAXP/STXP/STLXP: two registers */
            return set(out, 2 * width, load, !load);
        /* CASP: sz = bit 30, a pair of W or X registers; Rt and Rs even */
        if (field(insn, 14, 10) != 0x1f || (field(insn, 20, 16) & 1) || (field(insn, 4, 0) & 1))
            return false;
        return set(out, field(insn, 30, 30) ? 16 : 8, true, true);
    }
    if (o2 && !o1) /* LDAR/LDLAR/STLR/STLLR */
        return set(out, width, load, !load);
    /* CASB/CASH/CAS with acquire/release variants */
    if (field(insn, 14, 10) != 0x1f)
        return false;
    return set(out, width, true, true);
}

/* LDR (literal), GPR and SIMD&FP (bits 29:24 = 011V00). */
static bool literal(uint32_t insn, struct hwt_access *out)
{
    static const unsigned char gpr[4] = {4, 8, 4, 0}; /* LDR W, LDR X, LDRSW, PRFM */
    static const unsigned char fp[4] = {4, 8, 16, 0}; /* LDR S, D, Q */
    unsigned opc = field(insn, 31, 30);
    unsigned size = field(insn, 26, 26) ? fp[opc] : gpr[opc];

    if (size == 0)
        return false;
    return set(out, size, true, false);
}

/* LDAPUR/STLUR family (bits 29:24 = 011001, bit 21 = 0, bits 11:10 = 00). */
static bool rcpc_unscaled(uint32_t insn, struct hwt_access *out)
{
    unsigned size = field(insn, 31, 30);
    unsigned opc = field(insn, 23, 22);

    if (field(insn, 21, 21) || field(insn, 11, 10) != 0)
        return false; /* memory tagging (STG/LDG...) or memory copy/set */
    if (opc == 0)     /* STLURB/H/W/X */
        return set(out, 1u << size, false, true);
    if (size == 3 && opc >= 2)
        return false;
    if (size == 2 && opc == 3)
        return false;
    return set(out, 1u << size, true, false);
}

/* LDP/STP/LDNP/STNP/LDPSW/STGP, GPR and SIMD&FP: size covers both registers. */
static bool pair(uint32_t insn, struct hwt_access *out)
{
    unsigned opc = field(insn, 31, 30);
    bool simd = field(insn, 26, 26);
    bool load = field(insn, 22, 22);
    bool no_allocate = field(insn, 24, 23) == 0;

    if (simd) {
        if (opc == 3)
            return false;
        return set(out, 2 * (4u << opc), load, !load);
    }
    switch (opc) {
    case 0:
        return set(out, 8, load, !load);
    case 1:
        if (no_allocate)
            return false;
        /* LDPSW, or STGP which stores two X registers (and a tag) */
        return load ? set(out, 8, true, false) : set(out, 16, false, true);
    case 2:
        return set(out, 16, load, !load);
    default:
        return false;
    }
}

/* Data access of LDR/STR/LDUR/STUR/LDTR/STTR by size:V:opc; false for PRFM/PRFUM and
 * unallocated combinations (neither accesses memory). */
static bool single_register(unsigned size, bool simd, unsigned opc, struct hwt_access *out)
{
    if (simd) {
        if (opc >= 2) {
            if (size != 0)
                return false;
            return set(out, 16, opc == 3, opc == 2); /* STR/LDR Q */
        }
        return set(out, 1u << size, opc == 1, opc == 0);
    }
    switch (opc) {
    case 0: /* STRB/STRH/STR */
        return set(out, 1u << size, false, true);
    case 1: /* LDRB/LDRH/LDR */
        return set(out, 1u << size, true, false);
    case 2: /* LDRSB/LDRSH/LDRSW to X; size 11 is PRFM */
        if (size == 3)
            return false;
        return set(out, 1u << size, true, false);
    default: /* LDRSB/LDRSH to W */
        if (size >= 2)
            return false;
        return set(out, 1u << size, true, false);
    }
}

/* LDADD/LDCLR/LDEOR/LDSET/LD[SU]MAX/LD[SU]MIN/SWP, LDAPR, LD64B/ST64B. */
static bool atomic(uint32_t insn, struct hwt_access *out)
{
    unsigned size = field(insn, 31, 30);
    bool o3 = field(insn, 15, 15);
    unsigned opc = field(insn, 14, 12);

    if (field(insn, 26, 26))
        return false;
    if (!o3)
        return set(out, 1u << size, true, true);
    switch (opc) {
    case 0: /* SWP */
        return set(out, 1u << size, true, true);
    case 4: /* LDAPR: A=1, R=0, Rs=11111 */
        if (field(insn, 23, 22) != 2 || field(insn, 20, 16) != 0x1f)
            return false;
        return set(out, 1u << size, true, false);
    case 1: /* ST64B */
    case 2: /* ST64BV0 */
    case 3: /* ST64BV */
        if (size != 3)
            return false;
        return set(out, 64, false, true);
    case 5: /* LD64B */
        if (size != 3)
            return false;
        return set(out, 64, true, false);
    default:
        return false;
    }
}

/* Load/store register with bits 25:24 = 00: unscaled, post/pre-index, unprivileged,
 * atomics, register offset, pointer-authenticated. */
static bool register_forms(uint32_t insn, struct hwt_access *out)
{
    unsigned size = field(insn, 31, 30);
    bool simd = field(insn, 26, 26);
    unsigned opc = field(insn, 23, 22);
    unsigned kind = field(insn, 11, 10);

    if (!field(insn, 21, 21)) {
        /* 00 LDUR/STUR (PRFUM when size=11 opc=10), 01 post-index, 10 LDTR/STTR, 11 pre-index */
        if (kind == 2 && simd)
            return false;
        return single_register(size, simd, opc, out);
    }
    switch (kind) {
    case 0:
        return atomic(insn, out);
    case 2: /* register offset; option<1> must be 1 */
        if (!field(insn, 14, 14))
            return false;
        return single_register(size, simd, opc, out);
    default: /* LDRAA/LDRAB */
        if (size != 3 || simd)
            return false;
        return set(out, 8, true, false);
    }
}

bool hwt_decode_access(uint32_t insn, struct hwt_access *out)
{
    /* Loads and stores: op0 = x1x0 (bit 27 set, bit 25 clear). */
    if ((insn & 0x0a000000u) != 0x08000000u)
        return false;
    switch (field(insn, 29, 24)) {
    case 0x08:
        return exclusive_ordered(insn, out);
    case 0x0c:
        return simd_multiple(insn, out);
    case 0x0d:
        return simd_single(insn, out);
    case 0x18:
    case 0x1c:
        return literal(insn, out);
    case 0x19:
        return rcpc_unscaled(insn, out);
    case 0x28:
    case 0x29:
    case 0x2c:
    case 0x2d:
        return pair(insn, out);
    case 0x38:
    case 0x3c:
        return register_forms(insn, out);
    case 0x39:
    case 0x3d: /* unsigned immediate offset */
        return single_register(field(insn, 31, 30), field(insn, 26, 26), field(insn, 23, 22), out);
    default:
        return false;
    }
}
