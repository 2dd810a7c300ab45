Feature: an incomplete background

  Background:

  Scenario: still runs
    Given a step
