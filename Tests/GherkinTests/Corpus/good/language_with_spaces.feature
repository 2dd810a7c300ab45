  #   language  :   fr   
Fonctionnalité: l'en-tête avec des espaces
  Scénario: simple
    Soit un pas
