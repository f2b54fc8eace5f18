// SPDX-License-Identifier: Apache-2.0
// The only file in QiblaDBus that touches libdbus-1, raw pointers, Unmanaged or C callbacks.
// API reference: /usr/include/dbus-1.0/dbus/*.h (libdbus 1.14). Ownership rules followed here:
// - every DBusMessage* we own is unref'd exactly once, in `Message.deinit`;
// - borrowed messages (filter arguments) are ref'd when wrapped;
// - C callback `user_data` is an `Unmanaged.passRetained` box released by libdbus's free function;
// - libdbus treats invalid names/strings as programming errors and aborts ("check failed"), so
//   every string is validated in Swift before it reaches libdbus.
import CDBus
import QiblaEventLoop
import QiblaPlatform

enum LibDBus {
    /// `dbus_threads_init_default()`, once per process, before any other libdbus call.
    private static let threadsReady: Bool = dbus_threads_init_default() != 0

    static func initialize() { _ = threadsReady }

    // MARK: Type codes (dbus-protocol.h; the macros are `((int) 'y')` casts Swift cannot import)

    enum TypeCode {
        static let invalid: Int32 = 0
        static let byte = code("y"), bool = code("b"), int16 = code("n"), uint16 = code("q")
        static let int32 = code("i"), uint32 = code("u"), int64 = code("x"), uint64 = code("t")
        static let double = code("d"), string = code("s"), objectPath = code("o"), signature = code("g")
        static let array = code("a"), structure = code("r"), dictEntry = code("e"), variant = code("v")
        private static func code(_ c: Unicode.Scalar) -> Int32 { Int32(c.value) }
    }

    // MARK: Errors

    /// Runs `body` with an initialised `DBusError` and converts a set error into ``QiblaDBus/DBusError``.
    static func withError<R>(_ body: (UnsafeMutablePointer<CDBus.DBusError>) -> R) -> (R, DBusError?) {
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        let result = body(&error)
        guard dbus_error_is_set(&error) != 0 else { return (result, nil) }
        let swiftError = DBusError(
            name: error.name.map { String(cString: $0) } ?? DBusError.failedName,
            message: error.message.map { String(cString: $0) } ?? "")
        dbus_error_free(&error)
        return (result, swiftError)
    }

    // MARK: Validation (dbus-syntax.h, dbus-signature.h); safe for any input

    enum NameKind { case objectPath, busName, interface, errorName, member }

    static func validate(_ text: String, _ kind: NameKind) -> Bool {
        guard !text.utf8.contains(0) else { return false }
        initialize()
        return text.withCString { p in
            switch kind {
            case .objectPath: dbus_validate_path(p, nil) != 0
            case .busName: dbus_validate_bus_name(p, nil) != 0
            case .interface: dbus_validate_interface(p, nil) != 0
            case .errorName: dbus_validate_error_name(p, nil) != 0
            case .member: dbus_validate_member(p, nil) != 0
            }
        }
    }

    static func validateSignature(_ text: String, single: Bool) -> Bool {
        guard !text.utf8.contains(0) else { return false }
        initialize()
        return text.withCString { p in
            single ? dbus_signature_validate_single(p, nil) != 0 : dbus_signature_validate(p, nil) != 0
        }
    }

    // MARK: - Message

    /// Owns one reference to a `DBusMessage*`.
    final class Message {
        let pointer: OpaquePointer
        /// libdbus locks messages once sent; writing to them then is a fatal "check failed".
        /// Received messages are treated as read-only as well.
        private(set) var isLocked: Bool

        /// Takes over a reference we already own (from a `dbus_message_new*` or `steal_reply`).
        private init(owning pointer: OpaquePointer, locked: Bool) {
            self.pointer = pointer
            self.isLocked = locked
        }

        /// Wraps a message libdbus lends us, adding a reference.
        convenience init(borrowing pointer: OpaquePointer) {
            dbus_message_ref(pointer)
            self.init(owning: pointer, locked: true)
        }

        static func adopting(_ pointer: OpaquePointer) -> Message { Message(owning: pointer, locked: true) }

        deinit { dbus_message_unref(pointer) }

        /// Names must already be validated by the caller.
        convenience init(methodCallTo destination: String?, path: String, interface: String?, member: String) {
            LibDBus.initialize()
            let created = withOptionalCString(destination) { d in
                withOptionalCString(interface) { i in dbus_message_new_method_call(d, path, i, member) }
            }
            self.init(owning: LibDBus.unwrapAllocation(created), locked: false)
        }

        convenience init(signalFrom path: String, interface: String, member: String) {
            LibDBus.initialize()
            // `withCString` lends the strings' own bytes (passing a String to a C parameter would
            // copy each into a new heap array: three allocations per PropertiesChanged).
            let created = path.withCString { p in
                interface.withCString { i in member.withCString { m in dbus_message_new_signal(p, i, m) } }
            }
            self.init(owning: LibDBus.unwrapAllocation(created), locked: false)
        }

        /// A reply to `call`. A call that was never sent (serial 0) has nobody to reply to and
        /// libdbus would abort on it; the reply is then an orphan that ``Connection/send(_:)`` drops.
        convenience init(methodReturnTo call: Message) {
            if call.serial == 0 {
                self.init(owning: LibDBus.unwrapAllocation(dbus_message_new(DBUS_MESSAGE_TYPE_METHOD_RETURN)), locked: false)
                isOrphan = true
            } else {
                self.init(owning: LibDBus.unwrapAllocation(dbus_message_new_method_return(call.pointer)), locked: false)
            }
        }

        /// `name` must be a valid error name and `message` free of NUL. Orphans as for method returns.
        convenience init(errorReplyTo call: Message, name: String, message: String) {
            if call.serial == 0 {
                self.init(owning: LibDBus.unwrapAllocation(dbus_message_new(DBUS_MESSAGE_TYPE_ERROR)), locked: false)
                _ = dbus_message_set_error_name(pointer, name)
                _ = try? append([.string(message)])
                isOrphan = true
            } else {
                self.init(owning: LibDBus.unwrapAllocation(dbus_message_new_error(call.pointer, name, message)), locked: false)
            }
        }

        /// A reply without a call to answer: never handed to libdbus for sending (the bus would
        /// reject it as lacking a reply serial and drop our connection).
        private(set) var isOrphan = false

        func markSent() { isLocked = true }

        var typeCode: Int32 { dbus_message_get_type(pointer) }
        var serial: UInt32 { dbus_message_get_serial(pointer) }
        var replySerial: UInt32 { dbus_message_get_reply_serial(pointer) }
        var noReplyExpected: Bool {
            get { dbus_message_get_no_reply(pointer) != 0 }
            set { dbus_message_set_no_reply(pointer, newValue ? 1 : 0) }
        }

        enum HeaderField { case sender, destination, path, interface, member, signature, errorName }

        func header(_ field: HeaderField) -> String? {
            let text: UnsafePointer<CChar>? = switch field {
            case .sender: dbus_message_get_sender(pointer)
            case .destination: dbus_message_get_destination(pointer)
            case .path: dbus_message_get_path(pointer)
            case .interface: dbus_message_get_interface(pointer)
            case .member: dbus_message_get_member(pointer)
            case .signature: dbus_message_get_signature(pointer)
            case .errorName: dbus_message_get_error_name(pointer)
            }
            return text.map { String(cString: $0) }
        }

        /// `name` must be validated; the message must not be locked.
        func setDestination(_ name: String?) {
            _ = withOptionalCString(name) { dbus_message_set_destination(pointer, $0) }
        }

        /// Appends pre-validated values.
        func append(_ values: [DBusValue]) throws(DBusError) {
            var iter = DBusMessageIter()
            dbus_message_iter_init_append(pointer, &iter)
            for value in values {
                guard LibDBus.append(value, to: &iter) else { throw DBusError.noMemory }
            }
        }

        /// Appends one `ay` argument from `bytes` in a single copy (`dbus_message_iter_append_fixed_array`).
        func appendByteArray(_ bytes: UnsafeRawBufferPointer) throws(DBusError) {
            var iter = DBusMessageIter(), array = DBusMessageIter()
            dbus_message_iter_init_append(pointer, &iter)
            guard dbus_message_iter_open_container(&iter, TypeCode.array, "y", &array) != 0 else { throw DBusError.noMemory }
            var elements = bytes.baseAddress
            let appended = withUnsafePointer(to: &elements) {
                dbus_message_iter_append_fixed_array(&array, TypeCode.byte, $0, Int32(bytes.count)) != 0
            }
            guard appended, dbus_message_iter_close_container(&iter, &array) != 0 else {
                if !appended { dbus_message_iter_abandon_container(&iter, &array) }
                throw DBusError.noMemory
            }
        }

        /// `sa{sv}as` for PropertiesChanged, with pre-validated strings; signatures are literals,
        /// so nothing is allocated on the Swift side.
        /// A copy of this message, not locked and with serial 0 (`dbus_message_copy`): the header
        /// and the arguments are copied as they are, without checking or marshalling them again.
        func copy() -> Message {
            Message(owning: LibDBus.unwrapAllocation(dbus_message_copy(pointer)), locked: false)
        }

        /// Appends the body of `PropertiesChanged` (`sa{sv}as`), or with `interface` nil only
        /// `a{sv}as` (the prototype holds the interface already). `writeEntries` appends the
        /// changed properties; when it throws, the open containers are abandoned and nothing
        /// more is appended (the message is then incomplete: callers drop it, or check first).
        func appendPropertiesChanged(
            interface: String?, _ writeEntries: (inout DBusPropertiesChangedEntries) throws(DBusError) -> Void
        ) throws(DBusError) {
            var iter = DBusMessageIter()
            dbus_message_iter_init_append(pointer, &iter)
            var ok = interface.map { LibDBus.appendText(TypeCode.string, $0, to: &iter) } ?? true
            var entries = DBusPropertiesChangedEntries()
            ok = ok && dbus_message_iter_open_container(&iter, TypeCode.array, "{sv}", &entries.raw.dictionary) != 0
            guard ok else { throw DBusError.noMemory }
            do {
                try writeEntries(&entries)
            } catch {
                dbus_message_iter_abandon_container(&iter, &entries.raw.dictionary)
                throw error
            }
            var invalidated = DBusMessageIter()
            ok = dbus_message_iter_close_container(&iter, &entries.raw.dictionary) != 0
            ok = ok && dbus_message_iter_open_container(&iter, TypeCode.array, "s", &invalidated) != 0
            ok = ok && dbus_message_iter_close_container(&iter, &invalidated) != 0
            guard ok else { throw DBusError.noMemory }
        }

        func arguments(maximumTextBytes: Int) throws(DBusError) -> [DBusValue] {
            var iter = DBusMessageIter()
            guard dbus_message_iter_init(pointer, &iter) != 0 else { return [] }
            var values: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&iter) != TypeCode.invalid {
                values.append(try LibDBus.decode(&iter, maximumTextBytes: maximumTextBytes))
                dbus_message_iter_next(&iter)
            }
            return values
        }
    }

    /// The open `a{sv}` of one `PropertiesChanged` being written (inside
    /// ``DBusPropertiesChangedEntries``): never copied, it holds libdbus's iterator.
    struct PropertiesChangedEntries: ~Copyable {
        var dictionary = DBusMessageIter()

        /// Appends one `{sv}` entry. `name` and a string `value` must be free of NUL (checked by
        /// the caller); throws only when libdbus runs out of memory.
        mutating func append(name: String, value: DBusBasicValue) throws(DBusError) {
            var entry = DBusMessageIter(), variant = DBusMessageIter()
            guard dbus_message_iter_open_container(&dictionary, TypeCode.dictEntry, nil, &entry) != 0 else {
                throw DBusError.noMemory
            }
            var done = LibDBus.appendText(TypeCode.string, name, to: &entry)
            done = done && value.staticSignature.withUTF8Buffer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { dbus_message_iter_open_container(&entry, TypeCode.variant, $0.baseAddress, &variant) != 0 }
            }
            if done {
                done = LibDBus.appendBasic(value, to: &variant)
                done = dbus_message_iter_close_container(&entry, &variant) != 0 && done
            }
            done = done && dbus_message_iter_close_container(&dictionary, &entry) != 0
            guard done else { throw DBusError.noMemory }
        }
    }

    /// libdbus returns NULL from constructors only when out of memory.
    private static func unwrapAllocation(_ pointer: OpaquePointer?) -> OpaquePointer {
        guard let pointer else { fatalError("libdbus: out of memory creating a message") }
        return pointer
    }

    /// libdbus accepts only `-1` (its default) or a non-negative timeout and aborts on anything else.
    private static func timeout(_ milliseconds: Int32) -> Int32 { milliseconds < 0 ? -1 : milliseconds }

    private static func withOptionalCString<R>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
        if let text { text.withCString { body($0) } } else { body(nil) }
    }

    // MARK: Marshalling (dbus-message.h, DBusMessageIter)

    /// Appends a string-like basic value (`s`, `o`, `g`); false when libdbus runs out of memory.
    static func appendText(_ type: Int32, _ text: String, to iter: inout DBusMessageIter) -> Bool {
        text.withCString { p in
            var p: UnsafePointer<CChar>? = p
            return dbus_message_iter_append_basic(&iter, type, &p) != 0
        }
    }

    /// Appends one basic value; false when libdbus runs out of memory.
    static func appendBasic(_ value: DBusBasicValue, to iter: inout DBusMessageIter) -> Bool {
        func basic<T: BitwiseCopyable>(_ type: Int32, _ v: T) -> Bool {
            var v = v
            return dbus_message_iter_append_basic(&iter, type, &v) != 0
        }
        switch value {
        case .bool(let v): return basic(TypeCode.bool, dbus_bool_t(v ? 1 : 0))
        case .int32(let v): return basic(TypeCode.int32, v)
        case .uint32(let v): return basic(TypeCode.uint32, v)
        case .int64(let v): return basic(TypeCode.int64, v)
        case .uint64(let v): return basic(TypeCode.uint64, v)
        case .double(let v): return basic(TypeCode.double, v)
        case .string(let s): return appendText(TypeCode.string, s, to: &iter)
        }
    }

    /// Appends one validated value; false when libdbus runs out of memory.
    private static func append(_ value: DBusValue, to iter: inout DBusMessageIter) -> Bool {
        func basic<T: BitwiseCopyable>(_ type: Int32, _ v: T) -> Bool {
            var v = v
            return dbus_message_iter_append_basic(&iter, type, &v) != 0
        }
        func text(_ type: Int32, _ s: String) -> Bool { appendText(type, s, to: &iter) }
        func container(_ type: Int32, _ signature: String?, _ body: (inout DBusMessageIter) -> Bool) -> Bool {
            var sub = DBusMessageIter()
            let opened = withOptionalCString(signature) { dbus_message_iter_open_container(&iter, type, $0, &sub) }
            guard opened != 0 else { return false }
            guard body(&sub) else {
                dbus_message_iter_abandon_container(&iter, &sub)
                return false
            }
            return dbus_message_iter_close_container(&iter, &sub) != 0
        }
        switch value {
        case .byte(let v): return basic(TypeCode.byte, v)
        case .bool(let v): return basic(TypeCode.bool, dbus_bool_t(v ? 1 : 0))
        case .int16(let v): return basic(TypeCode.int16, v)
        case .uint16(let v): return basic(TypeCode.uint16, v)
        case .int32(let v): return basic(TypeCode.int32, v)
        case .uint32(let v): return basic(TypeCode.uint32, v)
        case .int64(let v): return basic(TypeCode.int64, v)
        case .uint64(let v): return basic(TypeCode.uint64, v)
        case .double(let v): return basic(TypeCode.double, v)
        case .string(let s): return text(TypeCode.string, s)
        case .objectPath(let s): return text(TypeCode.objectPath, s)
        case .signature(let s): return text(TypeCode.signature, s)
        case .array(let element, let values):
            return container(TypeCode.array, element) { sub in values.allSatisfy { append($0, to: &sub) } }
        case .dictionary(let key, let valueSignature, let entries):
            return container(TypeCode.array, "{" + key + valueSignature + "}") { sub in
                for (k, v) in entries {
                    var entry = DBusMessageIter()
                    guard dbus_message_iter_open_container(&sub, TypeCode.dictEntry, nil, &entry) != 0 else { return false }
                    guard append(k, to: &entry), append(v, to: &entry) else {
                        dbus_message_iter_abandon_container(&sub, &entry)
                        return false
                    }
                    guard dbus_message_iter_close_container(&sub, &entry) != 0 else { return false }
                }
                return true
            }
        case .structure(let fields):
            return container(TypeCode.structure, nil) { sub in fields.allSatisfy { append($0, to: &sub) } }
        case .variant(let inner):
            return container(TypeCode.variant, inner.signature) { sub in append(inner, to: &sub) }
        }
    }

    /// Decodes the value under `iter` (libdbus has validated the wire data already). A string,
    /// object path or signature longer than `maximumTextBytes` throws `InvalidArgs` before it is
    /// copied (its length is counted in the message's own buffer, at most `maximumTextBytes` + 1 bytes).
    private static func decode(_ iter: inout DBusMessageIter, maximumTextBytes: Int) throws(DBusError) -> DBusValue {
        func basic<T: BitwiseCopyable>(_ initial: T) -> T {
            var v = initial
            dbus_message_iter_get_basic(&iter, &v)
            return v
        }
        func text() throws(DBusError) -> String {
            var p: UnsafePointer<CChar>? = nil
            dbus_message_iter_get_basic(&iter, &p)
            guard let p else { return "" }
            if maximumTextBytes < Int.max {
                var length = 0
                while length <= maximumTextBytes, p[length] != 0 { length += 1 }
                guard length <= maximumTextBytes else {
                    throw .invalidArgs("a string argument is longer than \(maximumTextBytes) bytes")
                }
            }
            return String(cString: p)
        }
        let type = dbus_message_iter_get_arg_type(&iter)
        switch type {
        case TypeCode.byte: return .byte(basic(UInt8(0)))
        case TypeCode.bool: return .bool(basic(dbus_bool_t(0)) != 0)
        case TypeCode.int16: return .int16(basic(Int16(0)))
        case TypeCode.uint16: return .uint16(basic(UInt16(0)))
        case TypeCode.int32: return .int32(basic(Int32(0)))
        case TypeCode.uint32: return .uint32(basic(UInt32(0)))
        case TypeCode.int64: return .int64(basic(Int64(0)))
        case TypeCode.uint64: return .uint64(basic(UInt64(0)))
        case TypeCode.double: return .double(basic(Double(0)))
        case TypeCode.string: return .string(try text())
        case TypeCode.objectPath: return .objectPath(try text())
        case TypeCode.signature: return .signature(try text())
        case TypeCode.array:
            let elementSignature = String(signature(of: &iter).dropFirst())  // "a…" → "…"
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            if dbus_message_iter_get_element_type(&iter) == TypeCode.dictEntry {
                // "{kv…}": the key is one basic type code, the value the rest.
                let inner = elementSignature.dropFirst().dropLast()
                let keySignature = String(inner.prefix(1)), valueSignature = String(inner.dropFirst())
                var entries: [(DBusValue, DBusValue)] = []
                while dbus_message_iter_get_arg_type(&sub) == TypeCode.dictEntry {
                    var entry = DBusMessageIter()
                    dbus_message_iter_recurse(&sub, &entry)
                    let key = try decode(&entry, maximumTextBytes: maximumTextBytes)
                    guard dbus_message_iter_next(&entry) != 0 else { throw .invalidArgs("dict entry without a value") }
                    entries.append((key, try decode(&entry, maximumTextBytes: maximumTextBytes)))
                    dbus_message_iter_next(&sub)
                }
                return .dictionary(keySignature: keySignature, valueSignature: valueSignature, entries)
            }
            var elements: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&sub) != TypeCode.invalid {
                elements.append(try decode(&sub, maximumTextBytes: maximumTextBytes))
                dbus_message_iter_next(&sub)
            }
            return .array(elementSignature: elementSignature, elements)
        case TypeCode.structure:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            var fields: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&sub) != TypeCode.invalid {
                fields.append(try decode(&sub, maximumTextBytes: maximumTextBytes))
                dbus_message_iter_next(&sub)
            }
            return .structure(fields)
        case TypeCode.variant:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            return .variant(try decode(&sub, maximumTextBytes: maximumTextBytes))
        default:
            let scalar = Unicode.Scalar(UInt32(max(0, type))).map(String.init) ?? "?"
            throw .notSupported("D-Bus type '\(scalar)' is not supported by QiblaDBus")
        }
    }

    /// `dbus_message_iter_get_signature` (malloc'd by libdbus, freed with `dbus_free`).
    private static func signature(of iter: inout DBusMessageIter) -> String {
        guard let raw = dbus_message_iter_get_signature(&iter) else { return "" }
        defer { dbus_free(raw) }
        return String(cString: raw)
    }

    // MARK: - Connection

    /// Owns a private `DBusConnection*`; closes and unrefs it in ``close()``.
    final class Connection {
        private var pointer: OpaquePointer?
        private var binding: LoopBinding?
        private var filterBox: UnsafeMutableRawPointer?
        /// Async calls still waiting; completed with `Disconnected` by ``close()``.
        fileprivate var outstanding: [ObjectIdentifier: PendingReply] = [:]

        init(_ bus: BusAddress, router: MessageRouter) throws(DBusError) {
            LibDBus.initialize()
            let (opened, error): (OpaquePointer?, DBusError?) = LibDBus.withError { error in
                switch bus {
                case .session: return dbus_bus_get_private(DBUS_BUS_SESSION, error)
                case .system: return dbus_bus_get_private(DBUS_BUS_SYSTEM, error)
                case .address(let address):
                    guard !address.utf8.contains(0) else { return nil }
                    guard let connection = dbus_connection_open_private(address, error) else { return nil }
                    if dbus_bus_register(connection, error) == 0 {
                        dbus_connection_close(connection)
                        dbus_connection_unref(connection)
                        return nil
                    }
                    return connection
                }
            }
            guard let opened else {
                throw error ?? DBusError(name: "org.freedesktop.DBus.Error.BadAddress", message: "invalid bus address")
            }
            dbus_connection_set_exit_on_disconnect(opened, 0)
            let box = Unmanaged.passRetained(router).toOpaque()
            guard dbus_connection_add_filter(opened, LibDBus.filter, box, LibDBus.releaseRouter) != 0 else {
                Unmanaged<MessageRouter>.fromOpaque(box).release()
                dbus_connection_close(opened)
                dbus_connection_unref(opened)
                throw DBusError.noMemory
            }
            pointer = opened
            filterBox = box
        }

        deinit { close() }

        var uniqueName: String? {
            guard let pointer, let name = dbus_bus_get_unique_name(pointer) else { return nil }
            return String(cString: name)
        }

        var isConnected: Bool { pointer.map { dbus_connection_get_is_connected($0) != 0 } ?? false }

        private func open() throws(DBusError) -> OpaquePointer {
            guard let pointer else { throw DBusError.disconnected() }
            return pointer
        }

        func attach(to loop: EventLoop) {
            guard let pointer, binding == nil else { return }
            let binding = LoopBinding(loop: loop)
            self.binding = binding
            // Each registration owns one retain of the binding, released by libdbus through `releaseBinding`.
            _ = dbus_connection_set_watch_functions(
                pointer, LibDBus.addWatch, LibDBus.removeWatch, LibDBus.toggleWatch,
                Unmanaged.passRetained(binding).toOpaque(), LibDBus.releaseBinding)
            _ = dbus_connection_set_timeout_functions(
                pointer, LibDBus.addTimeout, LibDBus.removeTimeout, LibDBus.toggleTimeout,
                Unmanaged.passRetained(binding).toOpaque(), LibDBus.releaseBinding)
            dbus_connection_set_wakeup_main_function(
                pointer, LibDBus.wakeUp, Unmanaged.passRetained(binding).toOpaque(), LibDBus.releaseBinding)
            binding.dispatchHook = loop.beforeSleeping { [binding] in  // strong: the cycle ends when close() cancels the hook
                // Convert buffered data to messages and run handlers until libdbus has nothing left.
                // A handler may close the connection: hold a reference and stop once closed.
                guard !binding.isClosed else { return }
                dbus_connection_ref(pointer)
                defer { dbus_connection_unref(pointer) }
                while !binding.isClosed, dbus_connection_get_dispatch_status(pointer) == DBUS_DISPATCH_DATA_REMAINS {
                    _ = dbus_connection_dispatch(pointer)
                }
            }
        }

        /// After a blocking round trip other messages may sit in the incoming queue: make sure the
        /// loop does not go to sleep before dispatching them.
        private func wakeLoopIfDataRemains() {
            guard let pointer, let binding,
                  dbus_connection_get_dispatch_status(pointer) == DBUS_DISPATCH_DATA_REMAINS else { return }
            binding.loop.post {}
        }

        func requestName(_ name: String, flags: UInt32) throws(DBusError) -> Int32 {
            let connection = try open()
            defer { wakeLoopIfDataRemains() }
            let (result, error) = LibDBus.withError { dbus_bus_request_name(connection, name, flags, $0) }
            if let error { throw error }
            return result
        }

        func releaseName(_ name: String) throws(DBusError) {
            let connection = try open()
            defer { wakeLoopIfDataRemains() }
            let (_, error) = LibDBus.withError { dbus_bus_release_name(connection, name, $0) }
            if let error { throw error }
        }

        func addMatch(_ rule: String, add: Bool) throws(DBusError) {
            guard !rule.utf8.contains(0) else { throw .invalidArgs("match rules cannot contain NUL") }
            let connection = try open()
            defer { wakeLoopIfDataRemains() }
            let (_, error) = LibDBus.withError { error in
                add ? dbus_bus_add_match(connection, rule, error) : dbus_bus_remove_match(connection, rule, error)
            }
            if let error { throw error }
        }

        func send(_ message: Message) {
            guard let pointer, !message.isOrphan else { return }
            _ = dbus_connection_send(pointer, message.pointer, nil)
            message.markSent()
        }

        func flush() {
            guard let pointer else { return }
            dbus_connection_flush(pointer)
        }

        func call(_ message: Message, timeoutMilliseconds: Int32) throws(DBusError) -> DBusMessage {
            let connection = try open()
            defer { wakeLoopIfDataRemains() }
            message.markSent()
            let (reply, error) = LibDBus.withError {
                dbus_connection_send_with_reply_and_block(connection, message.pointer, LibDBus.timeout(timeoutMilliseconds), $0)
            }
            if let error { throw error }
            guard let reply else { throw DBusError.failed("no reply") }
            return DBusMessage(raw: .adopting(reply))
        }

        func callAsync(_ message: Message, timeoutMilliseconds: Int32,
                       completion: @escaping (Result<DBusMessage, DBusError>) -> Void) {
            guard let pointer else { return completion(.failure(.disconnected())) }
            var pending: OpaquePointer?
            message.markSent()
            guard dbus_connection_send_with_reply(pointer, message.pointer, &pending, LibDBus.timeout(timeoutMilliseconds)) != 0 else {
                return completion(.failure(.noMemory))
            }
            guard let pending else { return completion(.failure(.disconnected())) }
            let reply = PendingReply(completion, pending: pending, owner: self)
            let box = Unmanaged.passRetained(reply).toOpaque()
            guard dbus_pending_call_set_notify(pending, LibDBus.pendingCallDone, box, LibDBus.releasePendingReply) != 0 else {
                Unmanaged<PendingReply>.fromOpaque(box).release()
                dbus_pending_call_cancel(pending)
                dbus_pending_call_unref(pending)
                return completion(.failure(.noMemory))
            }
            outstanding[ObjectIdentifier(reply)] = reply
            // Our reference to `pending` is dropped in `pendingCallDone` or `close()`.
        }

        func readWriteDispatch(timeoutMilliseconds: Int32) -> Bool {
            guard let pointer else { return false }
            return dbus_connection_read_write_dispatch(pointer, LibDBus.timeout(timeoutMilliseconds)) != 0
        }

        func close() {
            guard let pointer else { return }
            self.pointer = nil
            if let binding {
                binding.isClosed = true
                if let hook = binding.dispatchHook { binding.loop.cancel(hook) }
                binding.dispatchHook = nil
            }
            // Pending calls hold references to the connection; cancel them so it can be finalised,
            // and tell their callers (each completion runs exactly once).
            let waiting = outstanding.values
            outstanding = [:]
            for reply in waiting {
                guard let pending = reply.pending else { continue }
                reply.pending = nil
                dbus_pending_call_cancel(pending)
                reply.completion(.failure(.disconnected("the connection was closed")))
                dbus_pending_call_unref(pending)  // frees the notify box
            }
            if let filterBox {
                dbus_connection_remove_filter(pointer, LibDBus.filter, filterBox)  // releases the router
                self.filterBox = nil
            }
            dbus_connection_close(pointer)  // calls removeWatch/removeTimeout for everything still registered
            if binding != nil {
                _ = dbus_connection_set_watch_functions(pointer, nil, nil, nil, nil, nil)
                _ = dbus_connection_set_timeout_functions(pointer, nil, nil, nil, nil, nil)
                dbus_connection_set_wakeup_main_function(pointer, nil, nil, nil)
                binding = nil
            }
            dbus_connection_unref(pointer)
        }
    }

    // MARK: Event-loop binding (watches, timeouts, wake-ups)

    /// State shared by the C callbacks of one attached connection; lives on the loop thread.
    final class LoopBinding {
        let loop: EventLoop
        /// The loop thread (``QiblaPlatform/PlatformThread/currentID`` when attached).
        let thread: PlatformThread.ID
        var tokens: [OpaquePointer: EventLoop.Token] = [:]
        var dispatchHook: EventLoop.Token?
        var isClosed = false

        init(loop: EventLoop) {
            self.loop = loop
            self.thread = PlatformThread.currentID
        }

        func registerWatch(_ watch: OpaquePointer) {
            let fd = FileDescriptor(rawValue: dbus_watch_get_unix_fd(watch))
            tokens[watch] = loop.watch(fd, for: interest(of: watch)) { readiness in
                var flags: UInt32 = 0
                if readiness.contains(.readable) { flags |= DBUS_WATCH_READABLE.rawValue }
                if readiness.contains(.writable) { flags |= DBUS_WATCH_WRITABLE.rawValue }
                if readiness.contains(.error) || readiness.contains(.invalid) { flags |= DBUS_WATCH_ERROR.rawValue }
                if readiness.contains(.hangup) { flags |= DBUS_WATCH_HANGUP.rawValue }
                _ = dbus_watch_handle(watch, flags)
            }
        }

        func interest(of watch: OpaquePointer) -> EventLoop.Interest {
            guard dbus_watch_get_enabled(watch) != 0 else { return [] }
            let flags = dbus_watch_get_flags(watch)
            var interest: EventLoop.Interest = []
            if flags & DBUS_WATCH_READABLE.rawValue != 0 { interest.insert(.readable) }
            if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { interest.insert(.writable) }
            return interest
        }

        func armTimeout(_ timeout: OpaquePointer) {
            if let old = tokens.removeValue(forKey: timeout) { loop.cancel(old) }
            guard dbus_timeout_get_enabled(timeout) != 0 else { return }
            let interval = Duration.milliseconds(Int64(max(0, dbus_timeout_get_interval(timeout))))
            // libdbus timeouts repeat every `interval` until removed or disabled.
            tokens[timeout] = loop.schedule(after: interval, repeating: interval) {
                _ = dbus_timeout_handle(timeout)
            }
        }

        func remove(_ key: OpaquePointer) {
            if let token = tokens.removeValue(forKey: key) { loop.cancel(token) }
        }
    }

    private static func binding(_ data: UnsafeMutableRawPointer?) -> LoopBinding {
        Unmanaged<LoopBinding>.fromOpaque(data!).takeUnretainedValue()
    }

    private static let releaseBinding: DBusFreeFunction = { data in
        if let data { Unmanaged<LoopBinding>.fromOpaque(data).release() }
    }

    private static let addWatch: DBusAddWatchFunction = { watch, data in
        guard let watch else { return 0 }
        binding(data).registerWatch(watch)
        return 1
    }

    private static let removeWatch: DBusRemoveWatchFunction = { watch, data in
        guard let watch else { return }
        binding(data).remove(watch)
    }

    private static let toggleWatch: DBusWatchToggledFunction = { watch, data in
        guard let watch else { return }
        let binding = binding(data)
        if let token = binding.tokens[watch] { binding.loop.update(token, interest: binding.interest(of: watch)) }
    }

    private static let addTimeout: DBusAddTimeoutFunction = { timeout, data in
        guard let timeout else { return 0 }
        binding(data).armTimeout(timeout)
        return 1
    }

    private static let removeTimeout: DBusRemoveTimeoutFunction = { timeout, data in
        guard let timeout else { return }
        binding(data).remove(timeout)
    }

    private static let toggleTimeout: DBusTimeoutToggledFunction = { timeout, data in
        guard let timeout else { return }
        binding(data).armTimeout(timeout)
    }

    /// libdbus asks the main loop to wake up (e.g. a message queued from another thread). On the
    /// loop thread itself the loop is awake already, so only other threads post.
    private static let wakeUp: DBusWakeupMainFunction = { data in
        let binding = binding(data)
        if PlatformThread.currentID != binding.thread { binding.loop.post {} }
    }

    // MARK: Filter (all incoming messages → MessageRouter)

    private static let releaseRouter: DBusFreeFunction = { data in
        if let data { Unmanaged<MessageRouter>.fromOpaque(data).release() }
    }

    private static let filter: DBusHandleMessageFunction = { connection, message, data in
        guard let connection, let message, let data else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
        let router = Unmanaged<MessageRouter>.fromOpaque(data).takeUnretainedValue()
        switch router.route(DBusMessage(raw: Message(borrowing: message))) {
        case .notHandled:
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        case .handled(let reply):
            if let reply, !reply.raw.isOrphan {
                _ = dbus_connection_send(connection, reply.raw.pointer, nil)
                reply.raw.markSent()
            }
            return DBUS_HANDLER_RESULT_HANDLED
        }
    }

    // MARK: Pending calls

    /// The Swift side of one `DBusPendingCall`: retained by libdbus as its notify data (released
    /// through `releasePendingReply`) and listed in its connection's `outstanding` until answered.
    final class PendingReply {
        let completion: (Result<DBusMessage, DBusError>) -> Void
        /// Our reference from `dbus_connection_send_with_reply`; nil once completed or cancelled.
        var pending: OpaquePointer?
        /// Read only while `pending` is set, which means the connection is open: its `close()` (run
        /// by its deinit too) clears `pending` on every outstanding reply before it goes. Not `weak`:
        /// a weak reference gives the connection, which lives until exit, a Swift side table whose
        /// address sits bit-packed in its refcount word, and LeakSanitizer reports it as a leak.
        unowned let owner: Connection
        init(_ completion: @escaping (Result<DBusMessage, DBusError>) -> Void, pending: OpaquePointer, owner: Connection) {
            self.completion = completion
            self.pending = pending
            self.owner = owner
        }
    }

    private static let releasePendingReply: DBusFreeFunction = { data in
        if let data { Unmanaged<PendingReply>.fromOpaque(data).release() }
    }

    private static let pendingCallDone: DBusPendingCallNotifyFunction = { pending, data in
        guard let pending, let data else { return }
        let box = Unmanaged<PendingReply>.fromOpaque(data).takeUnretainedValue()
        guard box.pending != nil else { return }
        box.pending = nil
        box.owner.outstanding[ObjectIdentifier(box)] = nil
        let reply = dbus_pending_call_steal_reply(pending)
        dbus_pending_call_unref(pending)  // the reference from dbus_connection_send_with_reply
        guard let reply else { return box.completion(.failure(.failed("pending call completed without a reply"))) }
        let message = DBusMessage(raw: .adopting(reply))
        if let error = message.error {
            box.completion(.failure(error))
        } else {
            box.completion(.success(message))
        }
    }
}
