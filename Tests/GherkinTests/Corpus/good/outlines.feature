Feature: Outlines

  Scenario Outline: <greeting>, <name>!
    Given I say "<greeting>" to <name>
    And a doc string naming <name>
      """<type>
      Dear <name>, <greeting>.
      """
    And a table of <name>
      | who    | <name> |
      | greets | <greeting> |
    Then <missing> stays as it is

    Examples: two rows
      | greeting | name | type |
      | Hello    | Ann  | text |
      | Hi       | Bob  | json |

    Examples: values with special characters
      | greeting     | name        | type |
      | costs $5     | trailing\\  | x    |
      | a \| pipe    | <name>      | y    |

    Examples: a header and no rows
      | greeting | name | type |

    Examples: no table

  Scenario: a scenario with examples is an outline too
    Given <thing>

    Examples:
      | thing |
      | one   |

  Scenario Outline: without examples
    Given <nothing>

  Scenario Template: the template keyword
    Given <a> and <b>

    Scenarios:
      | a | b |
      | 1 | 2 |
