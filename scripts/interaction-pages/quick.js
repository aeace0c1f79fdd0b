'use strict';
// A quick click that is not slow: onQuickClick flips a class (~1 ms).
function onQuickClick() {
  document.getElementById('quick').classList.toggle('on');
}
document.getElementById('quick').addEventListener('click', onQuickClick);
