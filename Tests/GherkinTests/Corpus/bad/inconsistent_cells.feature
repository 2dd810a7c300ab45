Feature: Inconsistent cells

  Scenario: rows of different widths
    Given a table
      | a | b |
      | c |

  Scenario Outline: an examples table of different widths
    Given <a>

    Examples:
      | a | b |
      | 1 | 2 | 3 |
