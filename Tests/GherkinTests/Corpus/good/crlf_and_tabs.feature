Feature: CRLF and tabs

	Scenario: tab-indented
		Given a tab-indented step   
		And a table
			| a |	 b	|
			| 1 | 2 |
		And a doc string
			"""
			kept
			"""
   
  Scenario:    padded name   
    Given    padded step text   
