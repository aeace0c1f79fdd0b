// The site's own CDN on another registrable domain (shop-cdn.co.uk): a third party unless
// the overrides list it as first party.
function gallerySpin(ms) {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) {
    for (let i = 0; i < 2000; i++) x = (x * 31 + i) % 1000003;
  }
  return x;
}

function decodeThumbnails() {
  return gallerySpin(90);
}

setTimeout(decodeThumbnails, Math.max(0, 1300 - performance.now()));
