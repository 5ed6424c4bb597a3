/* SPDX-License-Identifier: MIT */
/* Reads the aarch64 signal frame: the ESR record, the registers and the faulting
 * instruction (decoded by decode.c). Reads only memory the fault proved mapped. */
#include "context.h"

#include <string.h>

#include "arch/mte.h"
#include "decode.h"

/* Signal frame record with the fault's ESR (arch/arm64 uapi sigcontext.h). */
#define ESR_RECORD_MAGIC 0x45535201u
#define ESR_WNR (UINT64_C(1) << 6)
#define ESR_ISV (UINT64_C(1) << 24)
#define ESR_SAS_SHIFT 22
/* A64 load/store fields: base register Rn, and the "load register (literal)" class. */
#define INSN_RN_SHIFT 5
#define INSN_REG_MASK 31u
#define INSN_REG_SP 31u
#define INSN_LITERAL_MASK 0x3b000000u
#define INSN_LITERAL_BITS 0x18000000u

#if defined(__aarch64__)
/* The ESR the kernel saved in the signal frame, when it did. */
static bool frame_esr(const ucontext_t *uc, uint64_t *esr)
{
    const unsigned char *p = uc->uc_mcontext.__reserved;
    size_t room = sizeof(uc->uc_mcontext.__reserved);
    size_t off = 0;

    while (off + 8 <= room) {
        uint32_t magic, size;
        memcpy(&magic, p + off, sizeof(magic));
        memcpy(&size, p + off + 4, sizeof(size));
        if (magic == 0 || size < 8 || size > room - off)
            return false;
        if (magic == ESR_RECORD_MAGIC && size >= 16) {
            memcpy(esr, p + off + 8, sizeof(*esr));
            return true;
        }
        off += size;
    }
    return false;
}
#endif

/* Size and direction of the faulting access, from its instruction or else from the ESR. */
void hwt_context_describe(struct hwt_report *r, void *ucontext)
{
    r->access = HWTAG_ACCESS_READ;
    r->access_size = 0;
#if defined(__aarch64__)
    const ucontext_t *uc = ucontext;
    struct hwt_access acc;
    uint64_t esr;
    uint32_t insn;

    r->have_regs = true;
    for (unsigned i = 0; i < 31; i++)
        r->regs[i] = uc->uc_mcontext.regs[i];
    r->sp = uc->uc_mcontext.sp;
    r->pc = uc->uc_mcontext.pc;
    r->pstate = uc->uc_mcontext.pstate;
    if (r->asynchronous)
        return;
    /* Code is never tagged; the faulting instruction was just fetched, so it is mapped. */
    memcpy(&insn, (const void *)(uintptr_t)r->pc, sizeof(insn));
    if (hwt_decode_access(insn, &acc)) {
        r->access = acc.is_write ? HWTAG_ACCESS_WRITE : HWTAG_ACCESS_READ;
        r->access_size = acc.size;
    } else if (frame_esr(uc, &esr)) {
        r->access = (esr & ESR_WNR) ? HWTAG_ACCESS_WRITE : HWTAG_ACCESS_READ;
        if (esr & ESR_ISV)
            r->access_size = (size_t)1 << ((esr >> ESR_SAS_SHIFT) & 3);
    }
#else
    (void)ucontext;
    r->have_regs = false;
#endif
}

/* The faulting address with its pointer tag. The kernel clears si_addr's top byte for a
 * handler without SA_EXPOSE_TAGBITS, so when an application's handler installed after
 * ours forwards the fault to us, the tag is gone; it is still in the base register: every
 * A64 load/store that can reach tagged memory addresses through Rn = insn[9:5] (literal
 * loads, the exception, only read untagged images), and the check used that register's
 * tag. A genuinely untagged pointer has tag 0 there too. */
uintptr_t hwt_context_fault_addr(const siginfo_t *info, void *ucontext)
{
    uintptr_t addr = (uintptr_t)info->si_addr;
#if defined(__aarch64__)
    const ucontext_t *uc = ucontext;
    struct hwt_access acc;
    uint32_t insn;

    if (mte_ptr_tag(info->si_addr) != 0)
        return addr;
    memcpy(&insn, (const void *)(uintptr_t)uc->uc_mcontext.pc, sizeof(insn));
    unsigned rn = (insn >> INSN_RN_SHIFT) & INSN_REG_MASK;
    bool literal = (insn & INSN_LITERAL_MASK) == INSN_LITERAL_BITS;
    if (rn == INSN_REG_SP || literal || !hwt_decode_access(insn, &acc))
        return addr;
    return (uintptr_t)mte_with_tag(addr, mte_ptr_tag((const void *)uc->uc_mcontext.regs[rn]));
#else
    (void)ucontext;
    return addr;
#endif
}

/* PSTATE.TCO in the saved pstate (arch/arm64 PSR_TCO_BIT). */
#define PSTATE_TCO (UINT64_C(1) << 25)

void hwt_context_resume_unchecked(void *ucontext)
{
#if defined(__aarch64__)
    ucontext_t *uc = ucontext;
    uc->uc_mcontext.pstate |= PSTATE_TCO;
#else
    (void)ucontext;
#endif
}
