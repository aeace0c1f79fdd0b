'use strict';
// Slow click handler: click on #add runs onAddToCart -> recalcTotals -> applyDiscounts
// (~160 ms of processing, all in applyDiscounts).
function applyDiscounts(items) {
  const end = performance.now() + 160;
  let total = items;
  let i = 0;
  for (;;) {
    total = (total + Math.imul(i, 2654435761)) % 1000033;
    i++;
    if ((i & 1023) === 0 && performance.now() >= end) return total;
  }
}
function recalcTotals(items) {
  return applyDiscounts(items) + 1;
}
function onAddToCart() {
  document.getElementById('out').textContent = 'total ' + recalcTotals(3);
}
document.getElementById('add').addEventListener('click', onAddToCart);
