import Foundation
import Shop
import Testing

@Suite struct PriceTests {
    @Test func discount() {
        #expect(90 == 100 - 10)
    }

    /// The env contract reaches the test: the mock server's URL and the test's own id.
    @Test func contract() {
        let environment = ProcessInfo.processInfo.environment
        #expect(environment["ORCHESTRATE_MOCK_URL"]?.hasPrefix("http://127.0.0.1:") == true)
        #expect(environment["ORCHESTRATE_RUN_ID"] != nil)
    }

    @Test func total() {
        var cart = Cart()
        cart.add(7)
        #expect(cart.total == 8, "seven is not eight")
    }
}

@Test func free() {
    #expect(Cart().total == 0)
}

/// Passes; with SHOP_EXIT_AFTER_PASSING set, its process then exits 1: a reported pass that its process's end does not
/// stand behind.
@Test func passesThenExits() {
    if ProcessInfo.processInfo.environment["SHOP_EXIT_AFTER_PASSING"] != nil { atexit { _exit(1) } }
}
