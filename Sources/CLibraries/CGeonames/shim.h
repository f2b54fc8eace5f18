/* SPDX-License-Identifier: Apache-2.0 */
/* libgeonames (libgeonames-dev: Lomiri's GeoNames library, GPL-3; its data geonames.org, CC BY 4.0),
 * GLib's resources and variants it keeps its list in, and gettext for its catalogues of names.
 * Only QiblaGeonames/Geonames.swift touches these symbols. */
#ifndef QIBLAD_CGEONAMES_SHIM_H
#define QIBLAD_CGEONAMES_SHIM_H
#include <geonames.h>
#include <libintl.h>
#include <locale.h>
#endif
