// SPDX-License-Identifier: Apache-2.0
// GTK 4 (with GDK, GSK, cairo, GLib/GIO's GDBus) for the app.
#include <gtk/gtk.h>
