Feature: Examples in the wrong places

  Background:
    Given a step

    Examples:
      | a |
      | 1 |

  Rule: rules take no examples
    Examples:
      | b |
