// SPDX-License-Identifier: Apache-2.0
// libgweather-4: its world locations database (Locations.bin, libgweather-4-common), read offline.
#include <libgweather/gweather.h>
