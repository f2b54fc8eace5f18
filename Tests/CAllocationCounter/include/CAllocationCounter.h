// SPDX-License-Identifier: Apache-2.0
// Counts the heap allocations of one thread, for tests that prove a path allocates nothing
// (issue 12). The test executable's own malloc, calloc, realloc, memalign, aligned_alloc and
// posix_memalign stand in front of the C library's (symbol interposition: a shared library's call
// to malloc binds to the executable's definition), count when the calling thread counts, and
// forward to glibc's __libc_* entry points. free is glibc's own.
#ifndef QIBLAD_ALLOCATION_COUNTER_H
#define QIBLAD_ALLOCATION_COUNTER_H

/// Starts counting the calling thread's allocations, from zero.
void qiblad_allocations_begin(void);

/// Stops counting on the calling thread; returns the allocations made since
/// `qiblad_allocations_begin` (each malloc, calloc, realloc, memalign, aligned_alloc or
/// posix_memalign call is one).
long qiblad_allocations_end(void);

#endif
