Feature: A doc string that never closes

  Scenario: open
    Given a doc string
      """
      and the file ends
