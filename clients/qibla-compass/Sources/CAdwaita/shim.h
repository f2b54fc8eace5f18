// SPDX-License-Identifier: Apache-2.0
// libadwaita 1.2 (Debian 12) and later.
#include <adwaita.h>

// The About window and the question dialog. libadwaita 1.2 has AdwAboutWindow and
// AdwMessageDialog only; 1.5 added AdwAboutDialog and AdwAlertDialog, and 1.6 deprecated the two
// windows (Debian 13 has 1.7: a build there warned at every call). These take the newer where the
// headers have it, the older otherwise; both give a widget with a "response" signal where asked.

/// Presents the About window or dialog over `parent` (a GtkWindow).
static inline void qc_about_present(GtkWidget *parent, const char *name, const char *icon, const char *version,
                                    const char *developer, GtkLicense license, const char *website,
                                    const char *comments) {
#if ADW_CHECK_VERSION(1, 5, 0)
    AdwAboutDialog *about = ADW_ABOUT_DIALOG(adw_about_dialog_new());
    adw_about_dialog_set_application_name(about, name);
    adw_about_dialog_set_application_icon(about, icon);
    adw_about_dialog_set_version(about, version);
    adw_about_dialog_set_developer_name(about, developer);
    adw_about_dialog_set_license_type(about, license);
    adw_about_dialog_set_website(about, website);
    adw_about_dialog_set_comments(about, comments);
    adw_dialog_present(ADW_DIALOG(about), parent);
#else
    AdwAboutWindow *about = ADW_ABOUT_WINDOW(adw_about_window_new());
    adw_about_window_set_application_name(about, name);
    adw_about_window_set_application_icon(about, icon);
    adw_about_window_set_version(about, version);
    adw_about_window_set_developer_name(about, developer);
    adw_about_window_set_license_type(about, license);
    adw_about_window_set_website(about, website);
    adw_about_window_set_comments(about, comments);
    gtk_window_set_transient_for(GTK_WINDOW(about), GTK_WINDOW(parent));
    gtk_window_present(GTK_WINDOW(about));
#endif
}

/// A question with a heading and a body, to be shown over `parent` (a GtkWindow) by
/// `qc_question_present`; its "response" signal carries the chosen response's id.
static inline GtkWidget *qc_question_new(GtkWidget *parent, const char *heading, const char *body) {
#if ADW_CHECK_VERSION(1, 5, 0)
    (void)parent;
    return GTK_WIDGET(adw_alert_dialog_new(heading, body));
#else
    return adw_message_dialog_new(GTK_WINDOW(parent), heading, body);
#endif
}

static inline void qc_question_add_response(GtkWidget *question, const char *id, const char *label) {
#if ADW_CHECK_VERSION(1, 5, 0)
    adw_alert_dialog_add_response(ADW_ALERT_DIALOG(question), id, label);
#else
    adw_message_dialog_add_response(ADW_MESSAGE_DIALOG(question), id, label);
#endif
}

static inline void qc_question_suggest(GtkWidget *question, const char *id) {
#if ADW_CHECK_VERSION(1, 5, 0)
    adw_alert_dialog_set_response_appearance(ADW_ALERT_DIALOG(question), id, ADW_RESPONSE_SUGGESTED);
#else
    adw_message_dialog_set_response_appearance(ADW_MESSAGE_DIALOG(question), id, ADW_RESPONSE_SUGGESTED);
#endif
}

static inline void qc_question_present(GtkWidget *question, GtkWidget *parent) {
#if ADW_CHECK_VERSION(1, 5, 0)
    adw_dialog_present(ADW_DIALOG(question), parent);
#else
    (void)parent;
    gtk_window_present(GTK_WINDOW(question));
#endif
}
