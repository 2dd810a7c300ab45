Rule: a rule before the feature
  Scenario: x
    Given y
