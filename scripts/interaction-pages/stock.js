'use strict';
// A timer delays a click: the recorder calls armStockPoll() ~30 ms before it clicks #status;
// the timer task pollStock -> mergeInventory spins ~220 ms, so the click waits (input delay).
// The click handler onStatusClick itself is short (~3 ms).
function mergeInventory() {
  const end = performance.now() + 220;
  let acc = 11;
  let i = 0;
  for (;;) {
    acc = (acc * 7 + i) % 999983;
    i++;
    if ((i & 1023) === 0 && performance.now() >= end) return acc;
  }
}
function pollStock() {
  document.getElementById('out').dataset.stock = String(mergeInventory());
}
window.armStockPoll = function armStockPoll() {
  setTimeout(pollStock, 0);
};
function onStatusClick() {
  document.getElementById('out').textContent = 'status ' + spinFor(3);
}
document.getElementById('status').addEventListener('click', onStatusClick);
