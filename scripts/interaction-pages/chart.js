'use strict';
// requestAnimationFrame with forced layout after a click: onChartClick is short and schedules
// drawChart; in the next frame, before its paint (presentation delay), drawChart -> sizeBars
// runs ~130 ms, writing a bar's height and reading offsetHeight every 2048 iterations (a
// forced synchronous layout each time, charged to sizeBars).
const CHART = document.getElementById('chart');
const BARS = [];
for (let i = 0; i < 80; i++) {
  const bar = document.createElement('div');
  bar.className = 'bar';
  CHART.appendChild(bar);
  BARS.push(bar);
}
function sizeBars() {
  const end = performance.now() + 130;
  let total = 0;
  let i = 0;
  let k = 0;
  for (;;) {
    total = (total + Math.imul(i, 40503)) % 65521;
    i++;
    if ((i & 2047) === 0) {
      const bar = BARS[k % BARS.length];
      k++;
      bar.style.height = (10 + ((k * 17) % 120)) + 'px';
      total += bar.offsetHeight;
      if (performance.now() >= end) return total;
    }
  }
}
function drawChart() {
  document.getElementById('out').dataset.chart = String(sizeBars());
}
function onChartClick() {
  CHART.classList.toggle('wide');
  requestAnimationFrame(drawChart);
}
document.getElementById('chart-button').addEventListener('click', onChartClick);
