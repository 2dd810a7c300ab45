# a comment first
# language: de
Feature: the language line must come first to count
  Scenario: English after all
    Given a step
