/* SPDX-License-Identifier: Apache-2.0 */
/* libdbus-1 (libdbus-1-dev). Only QiblaDBus/LibDBus.swift touches these symbols. */
#ifndef QIBLAD_CDBUS_SHIM_H
#define QIBLAD_CDBUS_SHIM_H
#include <dbus/dbus.h>
#endif
