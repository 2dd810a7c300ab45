Feature: Minimal

  Scenario: one step
    Given a step

  Example: the other keyword for a scenario
    When it runs
