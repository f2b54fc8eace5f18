// SPDX-License-Identifier: Apache-2.0
extension GPSDPositionSource.Configuration: Equatable {
    /// Equal when every setting is; a reload restarts the gpsd watch only when this is false.
    public static func == (a: Self, b: Self) -> Bool {
        a.host == b.host && a.port == b.port && a.fixTimeoutSeconds == b.fixTimeoutSeconds
            && a.initialBackoffSeconds == b.initialBackoffSeconds && a.maximumBackoffSeconds == b.maximumBackoffSeconds
            && a.absentRetrySeconds == b.absentRetrySeconds
            && a.controlSocketDirectory == b.controlSocketDirectory && a.watchedAbsentRetrySeconds == b.watchedAbsentRetrySeconds
    }
}
