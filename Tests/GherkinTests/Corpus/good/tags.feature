@feature-tag @another
@on-a-second-line
Feature: Tags everywhere

  @scenario-tag @with:colon @with.dot @émoji-tag
  Scenario: tagged scenario
    Given a step

  @a @b #a comment after tags
  Scenario: tags followed by a comment
    Given a step

  @outline
  Scenario Outline: tagged outline <v>
    Given <v>

    @examples-1
    Examples:
      | v |
      | 1 |

    @examples-2 @second
    Examples:
      | v |
      | 2 |

  @rule
  Rule: a tagged rule

    @inside
    Scenario: in the rule
      Given a step

  Rule: an untagged rule
    Scenario: untagged
      Given a step
