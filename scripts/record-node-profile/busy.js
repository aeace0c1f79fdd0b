// Two blocking bursts separated by idle time, with a known call chain.
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
function computeReport() { let s = 0; const end = Date.now() + 120; while (Date.now() < end) s += fib(20); return s; }
function onTimer() { return computeReport(); }
setTimeout(onTimer, 50);
setTimeout(() => { const end = Date.now() + 80; let x = 0; while (Date.now() < end) x += Math.sqrt(x + 1); }, 400);
setTimeout(() => {}, 700);
