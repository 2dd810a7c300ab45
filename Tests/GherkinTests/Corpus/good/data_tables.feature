Feature: Data tables

  Scenario: cells
    Given a table
      | name | value |
      | a    | 1     |
      |      | empty |
      |	tab	|	tabs	|
      | 日本語 | ünïcödé |
    And escapes
      | pipe \| inside | back\\slash | new\nline | other \t escape |
    And one cell
      | alone |
    And padded cells
      |a|b|c|
      |   spaced   |   out   |   cells   |

  Scenario: a table after comments
    Given a table with comments between rows
      | h1 | h2 |
      # a comment row
      | v1 | v2 |

      | v3 | v4 |
