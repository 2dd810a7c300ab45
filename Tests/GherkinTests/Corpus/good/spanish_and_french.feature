#language:es
Característica: Español
  Antecedentes:
    Dado que hay un fondo

  Esquema del escenario: con <valor>
    Cuando uso <valor>
    Entonces funciona
    Pero no siempre

    Ejemplos:
      | valor |
      | uno   |
