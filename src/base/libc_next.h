/* SPDX-License-Identifier: MIT */
/* The next definition of a name libhwtag defines too (pthread_create, pthread_setname_np,
 * the string routines of src/libcall.c): RTLD_NEXT's answer, read from the loaded modules'
 * dynamic symbol tables. */
#ifndef HWT_LIBC_NEXT_H
#define HWT_LIBC_NEXT_H

/* The address of the function name defined by the first module loaded after the one that
 * holds libhwtag (the program itself when it is linked in, else the preloaded library),
 * skipping non-default symbol versions, an IFUNC resolved for this CPU; NULL when there is
 * none. dlsym may allocate and
 * report through malloc; this takes only the loader's lock (dl_iterate_phdr). */
void *hwt_libc_next(const char *name);

/* hwt_libc_next(name), looked up once and kept in *slot (a caller's static, NULL until
 * found); NULL while there is none. */
void *hwt_libc_next_once(void **slot, const char *name);

#endif
