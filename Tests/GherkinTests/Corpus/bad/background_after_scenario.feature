Feature: Background too late

  Scenario: first
    Given a step

  Background:
    Given too late
