Feature: Descriptions everywhere
  The feature's description.
  # a comment inside the description ends it? No: it is a comment.
  It goes on after the comment.

  Background: with a description
    Background text.
    Given a background step

  Scenario: with a description
    This scenario is described
      over several lines, some indented.

    Then it still has steps

  Scenario Outline: an outline with a description
    Outline text.
    Given <x>

    Examples: described examples
      The rows below.
      | x |
      | 1 |

  Rule: a described rule
    Rule text, line one.
    Rule text, line two.

    Scenario: inside
      Given a step
