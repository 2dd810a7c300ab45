Feature: One
  Scenario: a
    Given a step

Feature: Two
  Scenario: b
    Given a step
