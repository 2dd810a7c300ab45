Feature: Backgrounds

  Background: with arguments
    Given a table in the background
      | k | v |
    And a doc string in the background
      """
      text
      """

  Scenario: first
    When something

  Rule: with its own background
    Background:
      Given the rule's step

    Scenario: in the rule
      Then both backgrounds run first

  Rule: with an empty background
    Background: nothing in it

    Scenario: in the second rule
      Then only the feature's background runs
