// SPDX-License-Identifier: Apache-2.0

/// gettext (glibc's libintl): a message of another library's catalogue, and the locale category
/// it follows.
public enum Gettext {
    /// The translation of `msgid` in `domain`'s catalogue for the user's language, nil when the
    /// catalogue has none (`dgettext(3)` then hands back its argument).
    public static func translation(_ msgid: String, domain: String) -> String? { Syscalls.translation(msgid, domain: domain) }

    /// Lets catalogues follow LANGUAGE, LC_ALL and LC_MESSAGES (`setlocale(LC_MESSAGES, "")`) and
    /// hands `domain`'s messages in UTF-8 whatever the locale's character set.
    public static func useUserLanguage(for domain: String) { Syscalls.useMessagesLocale(domain: domain) }

    /// Looks for `domain`'s catalogues in `directory` (`bindtextdomain(3)`: DIRECTORY/LANG/LC_MESSAGES/DOMAIN.mo).
    public static func bind(_ domain: String, directory: String) { Syscalls.bindTextDomain(domain, directory: directory) }

    /// The messages locale in effect (`setlocale(LC_MESSAGES, NULL)`: "ar_SA.UTF-8", "C"), nil
    /// when the C library cannot say.
    public static var messagesLocale: String? { Syscalls.messagesLocale() }

    /// Whether `domain` has a catalogue for the user's language (its header, the translation of "").
    public static func hasCatalogue(_ domain: String) -> Bool { translation("", domain: domain) != nil }
}
