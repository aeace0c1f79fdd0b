// A chat widget from a vendor no dataset knows: an unknown third party unless the
// overrides name it.
function widgetSpin(ms) {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) {
    for (let i = 0; i < 2000; i++) x = (x * 31 + i) % 1000003;
  }
  return x;
}

function pollMessages() {
  return widgetSpin(80);
}

setTimeout(pollMessages, Math.max(0, 2600 - performance.now()));
