Feature: A table before any step is a description

  Scenario: the table comes first
    | a | b |
    Given a step
