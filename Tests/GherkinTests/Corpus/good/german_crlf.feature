# language: de
Funktionalität: Deutsch mit CRLF

  Grundlage:
    Angenommen ein Hintergrund

  Szenariogrundriss: mit <x>
    Wenn ich <x> tue
    Dann passiert etwas
    Und noch <x>

    Beispiele:
      | x |
      | a |
