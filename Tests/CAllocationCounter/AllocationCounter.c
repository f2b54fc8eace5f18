// SPDX-License-Identifier: Apache-2.0
// See include/CAllocationCounter.h. glibc exports __libc_malloc, __libc_calloc, __libc_realloc and
// __libc_memalign (GLIBC_2.2.5) for exactly this: a malloc that wraps the C library's.
#include "CAllocationCounter.h"

#include <errno.h>
#include <stddef.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

// Static TLS in the executable: reading it never allocates (no __tls_get_addr, no lazy block).
static _Thread_local long allocations;
static _Thread_local int counting;

void qiblad_allocations_begin(void) {
    allocations = 0;
    counting = 1;
}

long qiblad_allocations_end(void) {
    counting = 0;
    return allocations;
}

void *malloc(size_t size) {
    if (counting) allocations++;
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    if (counting) allocations++;
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    if (counting) allocations++;
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    if (counting) allocations++;
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    if (counting) allocations++;
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment == 0 || alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    if (counting) allocations++;
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}
