# language: em
📚: Emoji
  📕: emoji scenario
    😐 a given
    🎬 a when
    🙏 a then
