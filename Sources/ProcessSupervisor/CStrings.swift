#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Calls `body` with a NULL-terminated C array of copies of `strings`.
func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    pointers.append(nil)
    defer { for pointer in pointers { free(pointer) } }
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}

func withOptionalCString<R>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let string else { return body(nil) }
    return string.withCString { body($0) }
}

/// Runs `work` on a new OS thread: waiting for a process blocks, and must not block the
/// cooperative pool that the rest of the program runs on.
func spawnBlockingThread(_ work: @escaping @Sendable () -> Void) {
    final class Box { let work: @Sendable () -> Void; init(_ work: @escaping @Sendable () -> Void) { self.work = work } }
    let context = Unmanaged.passRetained(Box(work)).toOpaque()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    pthread_attr_setstacksize(&attributes, 256 * 1024)
    #if canImport(Glibc)
    var thread = pthread_t()
    #else
    var thread: pthread_t?
    #endif
    let result = pthread_create(&thread, &attributes, { context in
        let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
        box.work()
        return nil
    }, context)
    pthread_attr_destroy(&attributes)
    if result != 0 {
        Unmanaged<Box>.fromOpaque(context).takeRetainedValue().work()
    }
}
