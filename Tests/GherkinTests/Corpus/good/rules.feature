Feature: Rules

  Scenario: before any rule
    Given a step

  Rule:
    Scenario: in a rule without a name
      Given a step

  @r1 @r2
  Rule: tagged rule
    With a description.

    Example: an example
      Given a step

    Scenario Outline: an outline in a rule with <n>
      Given <n>

      Examples:
        | n |
        | 1 |
        | 2 |

  Rule: an empty rule
