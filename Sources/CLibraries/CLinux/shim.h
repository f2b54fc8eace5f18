/* SPDX-License-Identifier: Apache-2.0 */
/* Linux interfaces Glibc's Swift module does not export (eventfd, signalfd, timerfd, mallinfo2). Used by QiblaPlatform only. */
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
#else
static inline long qiblad_heap_bytes_in_use(void) { return -1; }
#endif
#endif
