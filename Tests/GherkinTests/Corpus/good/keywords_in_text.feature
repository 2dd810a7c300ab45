Feature: Keywords inside text
  Scenario: Scenario: a name with a keyword
    Given Given twice
    When the text says Feature: here
    Then Examples: are not examples here
    And Rule: neither is this

  Scenario Outline:no space after the colon
    Given <x>
    Examples:
    | x |
    | y |
