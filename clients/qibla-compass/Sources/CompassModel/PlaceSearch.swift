// SPDX-License-Identifier: Apache-2.0
import QiblaPlaces

// The place search itself (Place, SearchText, PlaceIndex, the well-known names) lives in the
// root package's QiblaPlaces, which qiblactl shares; what the app says about it is here.

extension PlaceIndex {
    /// What the list says when nothing matches.
    public static func noMatchMessage(_ query: String) -> String {
        fill(tr("No place called “{query}” in the offline list. Try another spelling, a larger town nearby, or type the latitude and longitude."),
             ["query": query.trimmingSpaces])
    }
}

extension Place {
    /// ``Place/title`` with the language's list separator ("Birmingham، England، United Kingdom" in Arabic).
    public var localizedTitle: String {
        // TRANSLATORS: the separator between a town, its region and its country ("Birmingham, England, United Kingdom"); Arabic, Persian and Urdu write "، ".
        title(separator: tr(", "))
    }
}

extension String {
    /// Without spaces at either end.
    public var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}
