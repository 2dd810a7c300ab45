Feature: A row that never closes

  Scenario: open row
    Given a table
      | a | b |
      | c | d
