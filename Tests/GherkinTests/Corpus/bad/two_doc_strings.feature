Feature: Two arguments

  Scenario: a step with two doc strings
    Given a step
      """
      one
      """
      """
      two
      """

  Scenario: a table and then a doc string
    Given a step
      | a |
      """
      text
      """
