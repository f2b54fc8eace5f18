/* Linux interfaces Glibc's Swift module does not export (eventfd, signalfd, timerfd). Used by QiblaPlatform only. */
#ifndef QIBLAD_CLINUX_SHIM_H
#define QIBLAD_CLINUX_SHIM_H
#include <sys/eventfd.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <signal.h>
#endif
