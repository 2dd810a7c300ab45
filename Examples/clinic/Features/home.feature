Feature: Home screen
  The news service fails now and then; the app fetches the headlines again.

  @smoke
  Scenario: Headlines survive a hiccup of the backend
    Given I open the app
    Then I see 3 headlines
