'use strict';
// A third-party listener on the same click: the page's own onPayClick -> checkCart runs ~35 ms,
// then the vendor's listener (tag.js from cdn.tagvendor.test, another site) runs ~120 ms;
// the processing phase's chain is the vendor's.
function checkCart() {
  return spinFor(35);
}
function onPayClick() {
  document.getElementById('out').textContent = 'pay ' + checkCart();
}
document.getElementById('pay').addEventListener('click', onPayClick);
