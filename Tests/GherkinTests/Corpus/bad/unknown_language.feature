# language: xx-unknown
Feature: the header names no language
  Scenario: still parsed in English
    Given a step
