import ClinicApp
import Foundation
import OrchestrateKit

// The step definitions of Examples/clinic/Features, driving the app. orchestrate runs this executable once
// per scenario with the scenario's pickle in ORCHESTRATE_PICKLE; each step is reported to the worker's mock
// server, so its timing and its exchanges land in PostgreSQL.

var steps = Steps<ClinicApp>()

steps.given("I open the app") { app, _ in try await app.open() }
steps.given("I open the app without a second try") { app, _ in try await app.open(retrying: false) }

steps.then("I see {int} headline(s)") { app, match in
    let headlines = await app.headlines
    try check(headlines.count == match.int(0), "the home screen shows \(headlines.count) headlines: \(headlines)")
}

steps.when("I tell the bot {string}") { app, match in try await app.tell(match[0]) }

steps.then("the bot replies {string}") { app, match in
    let reply = await app.botReply
    try check(reply == match[0], "the bot replied \"\(reply)\"")
}

steps.then("the bot offers the answers {string} and {string}") { app, match in
    let options = await app.answerOptions
    try check(
        options == [match[0], match[1]], "the bot offers \(options.map { "\"\($0)\"" }.joined(separator: " and "))")
}

steps.when("I look at the free slots") { app, _ in try await app.showSlots() }

steps.then("the first slot is {word} at {word}") { app, match in
    guard let first = await app.slots.first else { throw ClinicError("there are no slots on screen") }
    let shown = await app.describe(first)
    try check(shown == "\(match[0]) at \(match[1])", "the first slot is \(shown)")
}

steps.when("I book the first free slot") { app, _ in try await app.bookFirstSlot() }

steps.when(regex: "I register with (?:a new|an unused) e-mail address") { app, _ in try await app.register() }

steps.when("I register with the same address again") { app, _ in
    try await app.register(address: await app.lastAddress)
}

steps.then("I am signed in with that address") { app, _ in
    let (signedIn, address) = await (app.signedInAs, app.lastAddress)
    try check(
        signedIn != nil && signedIn == address,
        "signed in as \(signedIn ?? "nobody"), registered \(address ?? "nothing")")
}

steps.then("I see {string}") { app, match in
    let banner = await app.banner
    try check(banner == match[0], "the app shows \"\(banner)\"")
}

func check(_ condition: Bool, _ otherwise: @autoclosure () -> String) throws {
    if !condition { throw ClinicError(otherwise()) }
}

let runner = ScenarioRunner(steps: steps)
exit(await runner.main { ClinicApp() })
