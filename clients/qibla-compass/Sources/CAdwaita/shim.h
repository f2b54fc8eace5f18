// SPDX-License-Identifier: Apache-2.0
// libadwaita 1.2 (Debian 12).
#include <adwaita.h>
