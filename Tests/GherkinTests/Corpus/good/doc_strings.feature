Feature: Doc strings

  Scenario: quotes
    Given a doc string
      """
      first line
        indented line
      # not a comment
      | not a table |
      Given not a step
      """
    And an empty doc string
      """
      """
    And a doc string with a media type
      """application/json
      {"key": "value"}
      """

  Scenario: backticks and escapes
    Given backticks
      ```
      a line with """ inside
      ```
    And escaped separators
      """
      \"\"\" stays three quotes
      ```
      """
    And escaped backticks
      ```markdown
      \`\`\`
      ```

  Scenario: indentation
    Given content less indented than the fence
      """
    less
        more
      same
      """
    And blank lines inside

      """

      between blank lines

      """
