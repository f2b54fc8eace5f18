/* SPDX-License-Identifier: Apache-2.0 */
/* Linux interfaces Glibc's Swift module does not export (eventfd, signalfd, timerfd, futex, mallinfo2, malloc_trim, mallopt, dlopen, gettext, the IIO event ioctl, O_PATH). Used by QiblaPlatform only. */
#ifndef QIBLAD_CLINUX_SHIM_H
#define QIBLAD_CLINUX_SHIM_H
#include <sys/eventfd.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <signal.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <dlfcn.h>
#include <libintl.h>
#include <locale.h>

/* A word a thread waits on with futex(2) and others change and wake; C11 atomics, since Swift's
   Atomic has no stable address to hand the kernel. */
static inline uint32_t qiblad_word_load(const uint32_t *word) { return __atomic_load_n(word, __ATOMIC_ACQUIRE); }
static inline void qiblad_word_store(uint32_t *word, uint32_t value) { __atomic_store_n(word, value, __ATOMIC_RELEASE); }

/* futex(2) FUTEX_WAIT_BITSET (private): sleeps while *word == expected, until woken or the absolute
   CLOCK_MONOTONIC time deadline_ns (< 0: no deadline). 0 when woken, else the errno: ETIMEDOUT,
   EAGAIN (*word was not `expected`), EINTR. */
static inline int qiblad_futex_wait_until(uint32_t *word, uint32_t expected, int64_t deadline_ns) {
    struct timespec deadline = { .tv_sec = deadline_ns / 1000000000, .tv_nsec = deadline_ns % 1000000000 };
    long result = syscall(SYS_futex, word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, expected,
                          deadline_ns < 0 ? NULL : &deadline, NULL, FUTEX_BITSET_MATCH_ANY);
    return result == 0 ? 0 : errno;
}

/* futex(2) FUTEX_WAKE (private): wakes every thread waiting on word. */
static inline void qiblad_futex_wake_all(uint32_t *word) {
    syscall(SYS_futex, word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, INT_MAX, NULL, NULL, 0);
}
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>
/* Heap bytes in use (glibc >= 2.33 `mallinfo2().uordblks`), for the allocation benchmarks. */
static inline long qiblad_heap_bytes_in_use(void) { return (long)mallinfo2().uordblks; }
/* glibc `malloc_trim(0)`: 1 when memory was given back to the kernel, 0 when not. */
static inline int qiblad_malloc_trim(void) { return malloc_trim(0); }
/* glibc mallopt(M_MMAP_THRESHOLD) and mallopt(M_TRIM_THRESHOLD), bytes: 1 when both were set. */
static inline int qiblad_malloc_set_thresholds(int mmap_bytes, int trim_bytes) {
    return mallopt(M_MMAP_THRESHOLD, mmap_bytes) == 1 && mallopt(M_TRIM_THRESHOLD, trim_bytes) == 1;
}
#else
static inline long qiblad_heap_bytes_in_use(void) { return -1; }
static inline int qiblad_malloc_trim(void) { return -1; }
static inline int qiblad_malloc_set_thresholds(int mmap_bytes, int trim_bytes) { (void)mmap_bytes; (void)trim_bytes; return 0; }
#endif
#include <sys/ioctl.h>
#include <linux/iio/events.h>
/* ioctl(fd, IIO_GET_EVENT_FD_IOCTL) on an IIO character device (include/uapi/linux/iio/events.h):
   the device's event descriptor (O_RDONLY | O_CLOEXEC; one holder at a time, EBUSY otherwise), or -errno. */
static inline int qiblad_iio_event_fd(int fd) {
    int event_fd = -1;
    if (ioctl(fd, IIO_GET_EVENT_FD_IOCTL, &event_fd) < 0) return -errno;
    return event_fd;
}

#include <fcntl.h>
/* open(2) of a directory with O_PATH (a handle for lookups relative to it), or -1. glibc names
   O_PATH only under _GNU_SOURCE, its value __O_PATH always; musl names it always. */
static inline int qiblad_open_directory_for_lookups(const char *path) {
#if defined(O_PATH)
    return open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
#elif defined(__O_PATH)
    return open(path, __O_PATH | O_DIRECTORY | O_CLOEXEC);
#else
    return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
#endif
}
#endif
