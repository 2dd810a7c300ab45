Feature: no newline at the end
  Scenario: last line
    Given the file ends here