Feature: A step outside any scenario
  Given a step where a description was expected is a description

  Scenario: fine
    Given a step
    | a table | then |
    Then fine
Given not in a scenario? It is: steps can be unindented
    | broken |
  """
