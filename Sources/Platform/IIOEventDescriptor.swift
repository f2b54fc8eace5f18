// SPDX-License-Identifier: Apache-2.0
import SystemPackage

extension FileDescriptor {
    /// On an open IIO character device (`/dev/iio:deviceN`): the device's event descriptor from
    /// `ioctl(IIO_GET_EVENT_FD_IOCTL)` (include/uapi/linux/iio/events.h). Reads from it return
    /// whole `struct iio_event_data` records (16 bytes: `u64 id`, `s64 timestamp`); the kernel
    /// queues events only while it is open, and gives it to one holder at a time (`EBUSY`).
    /// `ENOTTY` on anything but an IIO device.
    public func iioEventDescriptor() throws(Errno) -> FileDescriptor {
        FileDescriptor(rawValue: try Syscalls.iioEventDescriptor(rawValue))
    }

    /// Whether the open file is a character device or a FIFO (`fstat(2)`); nil when it cannot be told.
    public var fileKind: (isCharacterDevice: Bool, isFIFO: Bool)? { Syscalls.fileKind(rawValue) }
}
