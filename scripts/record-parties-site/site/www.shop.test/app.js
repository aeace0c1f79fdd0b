// First-party code of www.shop.test.
function appSpin(ms) {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) {
    for (let i = 0; i < 2000; i++) x = (x * 31 + i) % 1000003;
  }
  return x;
}

function initShop() {
  return appSpin(120);
}

// Called back by the tag manager's timer (vendor code → first-party code).
function onTagsReady() {
  return appSpin(100);
}
window.shopTagCallbacks.push(onTagsReady);

// A first-party click handler that calls the analytics vendor's SDK.
function onBuyClick() {
  appSpin(5);
  window.gaLite.track('purchase', { value: 42 });
}
document.getElementById('buy').addEventListener('click', onBuyClick);

setTimeout(initShop, Math.max(0, 700 - performance.now()));
