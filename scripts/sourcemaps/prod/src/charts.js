// Charts: a Chart.js line and bar chart, and d3 SVG drawings of the network and a histogram.
import Chart from 'chart.js/auto';
import * as d3 from 'd3';

let lineChart;
let barChart;

export function drawCharts(summary, network, root) {
  drawLine(summary.byDay, root.querySelector('#line'));
  drawBars(summary.byRegion, root.querySelector('#bars'));
  drawNetwork(network, root.querySelector('#network'));
}

function drawLine(byDay, canvas) {
  const data = { labels: byDay.map((d) => d.label), datasets: [{ label: 'revenue', data: byDay.map((d) => d.total) }] };
  if (lineChart) {
    lineChart.data = data;
    lineChart.update('none');
    return;
  }
  lineChart = new Chart(canvas, { type: 'line', data, options: { animation: false, responsive: false } });
}

function drawBars(byRegion, canvas) {
  const data = { labels: byRegion.map((r) => r[0]), datasets: [{ label: 'by region', data: byRegion.map((r) => r[1]) }] };
  if (barChart) barChart.destroy();
  barChart = new Chart(canvas, { type: 'bar', data, options: { animation: false, responsive: false } });
}

export function drawNetwork(network, svgNode) {
  const svg = d3.select(svgNode).attr('viewBox', '0 0 600 400');
  svg.selectAll('*').remove();
  const color = d3.scaleSequential(d3.interpolateTurbo).domain(d3.extent(network.nodes, (d) => d.n));
  svg.append('g').selectAll('path').data(network.nodes).join('path')
    .attr('d', (d, i) => network.cells.renderCell(i)).attr('fill', 'none').attr('stroke', '#ddd');
  svg.append('g').selectAll('line').data(network.links).join('line')
    .attr('x1', (l) => l.source.x).attr('y1', (l) => l.source.y)
    .attr('x2', (l) => l.target.x).attr('y2', (l) => l.target.y).attr('stroke', '#999');
  svg.append('g').selectAll('circle').data(network.nodes).join('circle')
    .attr('cx', (d) => d.x).attr('cy', (d) => d.y).attr('r', (d) => 2 + Math.sqrt(d.n))
    .attr('fill', (d) => color(d.n));
  if (network.hull) svg.append('path').attr('d', d3.line()(network.hull) + 'Z').attr('fill', 'none').attr('stroke', 'red');
}
