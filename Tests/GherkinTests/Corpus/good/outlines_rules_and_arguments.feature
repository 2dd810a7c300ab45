# A comment before everything
@billing @release-2
Feature: Outlines, rules and arguments
  A description line
    indented further, with a # that is not a comment

  # a comment between description and background
  Background: shared set-up
    Given a backend at "<not a placeholder>"
    * a clean database

  @smoke
  Scenario Outline: paying <amount> with <method>
    And an outline whose first step is a conjunction
    When the user pays <amount> with <method>
      """json
      {"amount": <amount>, "method": "<method>", "escaped": "\"\"\""}
      """
    Then the receipt shows:
      | field  | value    |
      | amount | <amount> |
      | method | <method> |
    But nothing else

    @fast
    Examples: cards
      | amount | method |
      | 10     | visa   |
      | 20     | amex   |

    @slow @manual
    Scenarios: cash
      Only small amounts.
      | amount | method |
      | 1      | cash   |

    Examples: no table at all

  Scenario: steps with every kind of argument
    Given a table with escapes:
      | a \| b | c \\ d | e \n f | \x |
      |   padded   |x|   | 😀 |
    And a doc string with backticks
      ```text/markdown
      line one
        indented line
      \`\`\` escaped
      ```
    When nothing happens

  Scenario: no steps at all

  @rule-tag
  Rule: a business rule
    The rule's description.

    Background:
      Given the rule's own set-up

    Example: inside the rule
      Given a step
      Then its outcome

    @wip
    Scenario Template: template with <thing>
      Given a <thing>

      Examples:
        | thing |
        | cat   |
        | <dog> |

  Rule: a rule without background
    Scenario: plain
      When it runs
