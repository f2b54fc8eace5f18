/* SPDX-License-Identifier: Apache-2.0 */
/* The C math library (libm, math.h): sin, cos, atan2, ... for QiblaCore, which imports only these
 * functions by name (Sources/QiblaCore/Vectors/Math.swift). glibc and musl both provide it. */
#ifndef QIBLAD_CMATH_SHIM_H
#define QIBLAD_CMATH_SHIM_H
#include <math.h>
#endif
