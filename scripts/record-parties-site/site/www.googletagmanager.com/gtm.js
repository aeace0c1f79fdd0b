// A stand-in for a tag manager (our own code; only the host name is the vendor's): its
// timer runs vendor work, then calls back into the page's registered callbacks.
window.shopTagCallbacks = [];

function gtmSpin(ms) {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) {
    for (let i = 0; i < 2000; i++) x = (x * 31 + i) % 1000003;
  }
  return x;
}

function fireTags() {
  gtmSpin(30);
  for (const cb of window.shopTagCallbacks) cb();
}

setTimeout(fireTags, Math.max(0, 1600 - performance.now()));
