/* SPDX-License-Identifier: Apache-2.0 */
/* libgps (libgps-dev). Only QiblaGPSD/LibGPS.swift touches these symbols.
 * qiblad is written against GPSD_API_MAJOR_VERSION 11 (gpsd 3.22, Debian 12) and
 * 12..14 share the fields it reads; anything else is refused at compile time. */
#ifndef QIBLAD_CGPS_SHIM_H
#define QIBLAD_CGPS_SHIM_H
#include <gps.h>
#if GPSD_API_MAJOR_VERSION < 9 || GPSD_API_MAJOR_VERSION > 14
#error "qiblad supports libgps API major versions 9..14 (gpsd 3.20 .. 3.26)"
#endif
#endif
