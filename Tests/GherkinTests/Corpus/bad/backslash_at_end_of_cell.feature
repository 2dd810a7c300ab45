Feature: A backslash at the end of a row

  Scenario: broken escape
    Given a table
      | a | b \|
      | c | d |
