# language: fr
Fonctionnalité: Préfixes de mots-clés
  Scénario: les mots-clés les plus longs gagnent
    Soit que la préparation est faite
    Etant donné qu'un état existe
    Quand l'action a lieu
    Alors le résultat est là
    Et c'est tout
