// SPDX-License-Identifier: Apache-2.0

/// A shared library loaded while the process runs (`dlopen(3)`), for a library only some
/// commands need: qiblactl loads libgeonames for its name commands alone, so its other commands
/// (the long-running `monitor` and `waybar` among them) map neither it nor GLib and GIO.
/// Never unloaded: what it registered (GLib types, resources) stays valid.
public struct SharedLibrary: @unchecked Sendable {
    private let handle: UnsafeMutableRawPointer

    /// Why a library or a symbol could not be had: `dlerror(3)`'s words.
    public struct LoadError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    /// Loads `name` (a soname such as "libgeonames.so.0", searched as the dynamic linker searches)
    /// with every symbol bound now (`RTLD_NOW`), so a missing one fails here, not mid-call.
    public init(_ name: String) throws(LoadError) {
        switch Syscalls.dynamicOpen(name) {
        case .success(let handle): self.handle = handle
        case .failure(let error): throw error
        }
    }

    /// The address of `symbol` in the library or the libraries it depends on (`dlsym(3)`).
    public func symbol(_ symbol: String) throws(LoadError) -> UnsafeMutableRawPointer {
        switch Syscalls.dynamicSymbol(handle, symbol) {
        case .success(let address): return address
        case .failure(let error): throw error
        }
    }
}

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

    /// Whether `domain` has a catalogue for the user's language (its header, the translation of "").
    public static func hasCatalogue(_ domain: String) -> Bool { translation("", domain: domain) != nil }
}
