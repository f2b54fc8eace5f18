/* SPDX-License-Identifier: Apache-2.0 */
/* Linux interfaces Glibc's Swift module does not export (eventfd, signalfd, timerfd, mallinfo2, malloc_trim). Used by QiblaPlatform only. */
#ifndef QIBLAD_CLINUX_SHIM_H
#define QIBLAD_CLINUX_SHIM_H
#include <sys/eventfd.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <signal.h>
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>
/* Heap bytes in use (glibc >= 2.33 `mallinfo2().uordblks`), for the allocation benchmarks. */
static inline long qiblad_heap_bytes_in_use(void) { return (long)mallinfo2().uordblks; }
/* glibc `malloc_trim(0)`: 1 when memory was given back to the kernel, 0 when not. */
static inline int qiblad_malloc_trim(void) { return malloc_trim(0); }
#else
static inline long qiblad_heap_bytes_in_use(void) { return -1; }
static inline int qiblad_malloc_trim(void) { return -1; }
#endif
#endif
