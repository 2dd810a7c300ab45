Feature: Tags with nothing after them

  Scenario: fine
    Given a step

  @orphan
