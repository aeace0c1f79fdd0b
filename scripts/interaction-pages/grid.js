'use strict';
// A click whose cost is not JavaScript: onDenseClick only toggles a class on #grid, which
// restyles and lays out its 16,000 cells before the next paint (presentation delay: style and
// layout, no JS sample). #grid is contained (contain: strict) so other clicks do not lay it out.
const GRID = document.getElementById('grid');
const cells = document.createDocumentFragment();
for (let i = 0; i < 16000; i++) cells.appendChild(document.createElement('div'));
GRID.appendChild(cells);
function onDenseClick() {
  GRID.classList.toggle('dense');
}
document.getElementById('restyle').addEventListener('click', onDenseClick);
