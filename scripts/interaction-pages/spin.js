'use strict';
// Busy-waits `ms` on the wall clock, calling nothing (so the sampled leaf is the caller):
// a phase's length does not depend on the machine.
function spinFor(ms) {
  const end = performance.now() + ms;
  let x = 1;
  let i = 0;
  for (;;) {
    x = (x * 48271 + i) % 2147483647;
    i++;
    if ((i & 1023) === 0 && performance.now() >= end) return x;
  }
}
