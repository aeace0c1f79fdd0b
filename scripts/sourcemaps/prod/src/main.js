// A dashboard of a made-up shop's orders. On load it generates the orders, aggregates them,
// renders the React views and draws the charts (one long task); "Recompute" does it again
// for another seed with a network layout; "Export" highlights the data as code; "Customers"
// routes to the customer list.
import { createElement as h } from 'react';
import { flushSync } from 'react-dom';
import { createRoot } from 'react-dom/client';
import { RouterProvider } from 'react-router-dom';
import * as _ from 'lodash-es';
import * as d3 from 'd3';
import * as dateFns from 'date-fns';
import { makeOrders, orderLines } from './data.js';
import { summarize } from './stats.js';
import { layoutNetwork } from './network.js';
import { drawCharts } from './charts.js';
import { exportSnippets, guessLanguages, highlightSnippets } from './snippets.js';
import { makeRouter, Store } from './views.js';

// The whole libraries stay reachable from the console, as in apps that expose them.
window.shop = { _, d3, dateFns };

const params = new URLSearchParams(location.search);
const state = { seed: Number(params.get('seed') || 1), orders: 20000 };
const router = makeRouter();
let root;

function render(store) {
  flushSync(() => root.render(h(Store.Provider, { value: store }, h(RouterProvider, { router }))));
}

function computeStore(seed) {
  const { orders, customers } = makeOrders(seed, state.orders);
  const summary = summarize(orders);
  return { orders, customers, summary, now: Date.UTC(2026, 11, 1) };
}

function bootDashboard() {
  const store = computeStore(state.seed);
  root = createRoot(document.getElementById('app'));
  render(store);
  drawCharts(store.summary, layoutNetwork(store.orders, 300, 120), document.body);
  state.store = store;
}

function handleRecomputeClick() {
  state.seed += 1;
  const store = computeStore(state.seed);
  render(store);
  drawCharts(store.summary, layoutNetwork(store.orders, 400, 200), document.body);
  state.store = store;
}

function handleExportClick() {
  const snippets = exportSnippets(orderLines(state.store.orders, 600));
  const html = highlightSnippets(snippets);
  document.getElementById('export').innerHTML = html.map((s) => `<pre class="hljs">${s.html}</pre>`).join('');
  document.getElementById('languages').textContent = guessLanguages(snippets).join(', ');
}

function handleCustomersClick() {
  flushSync(() => router.navigate('/customers'));
}

document.getElementById('recompute').addEventListener('click', handleRecomputeClick);
document.getElementById('export-button').addEventListener('click', handleExportClick);
document.getElementById('customers').addEventListener('click', handleCustomersClick);
bootDashboard();
