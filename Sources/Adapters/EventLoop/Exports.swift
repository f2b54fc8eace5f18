// SPDX-License-Identifier: Apache-2.0
// QiblaEventLoop calls no C function itself: poll, eventfd and signalfd come from QiblaPlatform.
import QiblaPlatform
import SystemPackage

@_exported import struct SystemPackage.Errno
@_exported import struct SystemPackage.FileDescriptor
@_exported import struct QiblaPlatform.EventFD
@_exported import struct QiblaPlatform.Signal
