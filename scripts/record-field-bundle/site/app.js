// Known hot code: a click handler calls a 3-deep chain that spins ~150 ms in the leaf,
// and a timer later does ~90 ms of work in another chain.
function spin(ms) { const end = performance.now() + ms; let x = 0; while (performance.now() < end) x += Math.sqrt(x + 1); return x; }
function sumColumns() { return spin(150); }
function recalcSheet() { return sumColumns(); }
function onRecalcClick() { return recalcSheet(); }
document.getElementById('go').addEventListener('click', onRecalcClick);
function rebuildIndex() { return spin(90); }
function onSyncTimer() { return rebuildIndex(); }
window.scheduleSync = () => setTimeout(onSyncTimer, 300);
