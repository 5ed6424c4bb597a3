/* SPDX-License-Identifier: MIT */
/* ELF images as symtab.c reads them (elfimg.c). All signal-safe. */
#ifndef HWT_ELFIMG_H
#define HWT_ELFIMG_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symtab.h"

const Elf64_Ehdr *hwt_elfimg_header(const uint8_t *img, size_t size);
uintptr_t hwt_elfimg_bias(const uint8_t *img, size_t size, uintptr_t start, uint64_t offset);
bool hwt_elfimg_lookup(const uint8_t *img, size_t size, uint32_t type, uint64_t vaddr,
                       struct hwt_symbol *out);
bool hwt_elfimg_has_section(const uint8_t *img, size_t size, uint32_t type);
void hwt_elfimg_build_id(const uint8_t *img, size_t size, struct hwt_symbol *out);
const char *hwt_elfimg_got_symbol(const uint8_t *img, size_t size, uintptr_t bias,
                                  uintptr_t target);
bool hwt_elfimg_fde_range(const uint8_t *img, size_t size, uintptr_t bias, uintptr_t pc,
                          uintptr_t *start, uintptr_t *len);

#endif
