// SPDX-License-Identifier: Apache-2.0
// What a distribution installs so GeoClue2 lets qiblad in without asking an agent, and the one log
// line that says so when GeoClue2 refuses. Reference: geoclue.conf(5), "APPLICATION CONFIGURATION
// OPTIONS"; GeoClue 2.6 reads only /etc/geoclue/geoclue.conf, 2.7 and later also
// /etc/geoclue/conf.d/*.conf. The shipped file is dbus/geoclue-qiblad.conf.

/// GeoClue2's authorisation of qiblad.
public enum GeoClueAuthorization {
    /// Where GeoClue 2.7 and later read drop-in files.
    public static let dropInPath = "/etc/geoclue/conf.d/90-qiblad.conf"
    /// GeoClue 2.6's only configuration file.
    public static let mainConfigurationPath = "/etc/geoclue/geoclue.conf"

    /// The configuration section that allows `desktopId` for every user without an agent
    /// (`dbus/geoclue-qiblad.conf` for the default `qiblad`).
    public static func snippet(desktopId: String) -> String {
        "[\(desktopId)]\nallowed=true\nsystem=false\nusers=\n"
    }

    /// One line for the log: what GeoClue2 said and how to allow qiblad.
    public static func hint(desktopId: String, refusal: String) -> String {
        let lines = snippet(desktopId: desktopId).split(separator: "\n").joined(separator: " ")
        return "GeoClue2 denied access to the location (\(refusal)). To allow qiblad without an agent, install "
            + "dbus/geoclue-qiblad.conf as \(dropInPath) (GeoClue 2.7 and later) or append it to "
            + "\(mainConfigurationPath) (GeoClue 2.6), i.e. the lines \"\(lines)\", then restart geoclue"
    }
}
