// First-party code served from the site's static host (same registrable domain).
function checkoutSpin(ms) {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) {
    for (let i = 0; i < 2000; i++) x = (x * 31 + i) % 1000003;
  }
  return x;
}

function buildCart() {
  return checkoutSpin(100);
}

setTimeout(buildCart, Math.max(0, 1000 - performance.now()));
