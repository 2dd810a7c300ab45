@only @tags
Feature: nothing to run
  A description that spans
  two lines, and then ends.
