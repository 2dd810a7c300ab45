junk 1
junk 2
junk 3
junk 4
junk 5
junk 6
junk 7
junk 8
junk 9
junk 10
junk 11
junk 12
junk 13
Feature: after the junk
