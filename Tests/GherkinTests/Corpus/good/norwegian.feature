# language: no
Egenskap: Norsk
  Scenario: enkel
    Gitt at noe finnes
    Når noe skjer
    Så ser jeg det
