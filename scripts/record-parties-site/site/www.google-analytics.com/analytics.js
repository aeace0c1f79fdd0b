// A stand-in for an analytics SDK (our own code; only the host name is the vendor's).
function gaSpin(ms) {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) {
    for (let i = 0; i < 2000; i++) x = (x * 31 + i) % 1000003;
  }
  return x;
}

function trackEvent(name, params) {
  return gaSpin(110);
}

window.gaLite = { track: trackEvent };
