Feature: Tags

  @good @bad tag
  Scenario: tagged
    Given a step
