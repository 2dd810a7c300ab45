Feature: Registration
  Every registration needs an address nobody used yet: it is a recorded random value, so a replay
  registers the address its recording registered.

  Scenario: A new patient registers
    Given I open the app
    When I register with a new e-mail address
    Then I am signed in with that address

  Scenario: An address can only be registered once
    Given I open the app
    And I register with an unused e-mail address
    When I register with the same address again
    Then I see "This address is already registered"
