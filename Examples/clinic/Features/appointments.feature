@booking
Feature: Appointments
  Slots are relative to the backend's clock; the app shows them relative to its own (frozen) clock.

  Background:
    Given I open the app

  Scenario: Free slots start tomorrow morning
    When I look at the free slots
    Then the first slot is tomorrow at 09:00

  Scenario: Booking the first free slot
    When I book the first free slot
    Then I see "Booked for tomorrow at 09:00"
