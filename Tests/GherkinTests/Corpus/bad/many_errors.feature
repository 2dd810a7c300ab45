Feature: Many errors

  Scenario: broken table
    Given a table
      | a | b |
      | c |
    Given a tag line with spaces
  @good tag
  Scenario: after
    Given x
    | one |
    """
    never closed
