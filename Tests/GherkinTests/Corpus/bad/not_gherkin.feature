This is not a feature file.
It has no keywords at all.
