import Foundation
import Shop
import XCTest

final class CartTests: XCTestCase {
    func testAdd() {
        var cart = Cart()
        cart.add(3)
        XCTAssertEqual(cart.prices, [3])
    }

    func testTotal() {
        var cart = Cart()
        cart.add(2)
        cart.add(2)
        XCTAssertEqual(cart.total, 5, "two and two")
    }

    func testSlow() {
        Thread.sleep(forTimeInterval: 0.2)
    }

    /// Fails on its first attempt, passes on its retry.
    func testFlaky() {
        XCTAssertNotEqual(ProcessInfo.processInfo.environment["ORCHESTRATE_ATTEMPT"], "1", "the first attempt fails")
    }

    /// Takes its whole process down.
    func testCrash() {
        if ProcessInfo.processInfo.environment["ORCHESTRATE_RUN_ID"] != nil { raise(SIGKILL) }
    }
}
