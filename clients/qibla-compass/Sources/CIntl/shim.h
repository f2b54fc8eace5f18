// SPDX-License-Identifier: Apache-2.0
// gettext (in glibc): the app's strings are looked up in the qibla-compass text domain.
#include <libintl.h>
#include <locale.h>
