'use strict';
// Keyboard interaction: keydown in #search runs onSearchKeydown -> rankSuggestions (~110 ms of
// processing); keyup runs a short onSearchKeyup (~2 ms), its own event of the same interaction.
function rankSuggestions(query) {
  const end = performance.now() + 110;
  let score = query.length;
  let i = 0;
  for (;;) {
    score = (score * 31 + i) % 1000003;
    i++;
    if ((i & 1023) === 0 && performance.now() >= end) return score;
  }
}
function onSearchKeydown(event) {
  document.getElementById('out').textContent = 'rank ' + rankSuggestions(event.key);
}
function onSearchKeyup() {
  document.getElementById('out').dataset.q = String(spinFor(2));
}
document.getElementById('search').addEventListener('keydown', onSearchKeydown);
document.getElementById('search').addEventListener('keyup', onSearchKeyup);
