'use strict';
// The vendor's tag (served as http://cdn.tagvendor.test/tag.js): a click listener on every
// [id=pay] button that builds and encodes a beacon, ~120 ms in encodeBeacon.
(function () {
  function encodeBeacon(fields) {
    const end = performance.now() + 120;
    let h = fields.length;
    let i = 0;
    for (;;) {
      h = (h * 33 + i) % 16777213;
      i++;
      if ((i & 1023) === 0 && performance.now() >= end) return h;
    }
  }
  function vendorCollect(event) {
    const beacon = encodeBeacon([event.type, event.target.id, Date.now()]);
    window.__tagvendor = beacon;
  }
  document.getElementById('pay').addEventListener('click', vendorCollect);
})();
