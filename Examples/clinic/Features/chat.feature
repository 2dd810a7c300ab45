Feature: Chat with the clinic's bot
  The bot takes its time to answer, and its answer options are content the backend may change.

  Background:
    Given I open the app

  @smoke
  Scenario: The bot offers to book an appointment
    When I tell the bot "I need an appointment"
    Then the bot replies "Shall I book you in?"
    And the bot offers the answers "OK" and "Not now"

  Scenario Outline: The bot greets whoever says hello
    When I tell the bot "<greeting>"
    Then the bot replies "Hello! How can I help?"

    Examples:
      | greeting     |
      | Hello        |
      | Good morning |
