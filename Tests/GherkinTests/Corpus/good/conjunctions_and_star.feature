Feature: Conjunctions and stars

  Scenario: starting with a conjunction
    And the first step is And
    But the second is But
    Given then a Given
    And an And after it
    When a When
    But a But after it
    * a star
    Then a Then
    * another star
    And a final And

  Scenario: stars only
    * one
    * two
