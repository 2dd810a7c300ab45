import Foundation

extension Calendar {
    /// The Gregorian calendar in UTC: the days of rollups, quarantines and flakiness windows, whatever the host's zone.
    package static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        return calendar
    }()
}
