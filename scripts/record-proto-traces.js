// Records the scenarios of ../shared/traces/chromium/ (their pages written anew here from
// the README's descriptions and the ground truth's function names) in both of Chrome's
// trace formats: Perfetto protobuf and JSON, with the same categories and the same steps.
// Run by scripts/record-proto-traces, which installs puppeteer-core in a scratch folder.
//
// Usage: node record-proto-traces.js OUTDIR [CHROMIUM] [SCENARIO ...]
//   OUTDIR/NAME.pftrace   CDP Tracing.start, transferMode ReturnAsStream, streamFormat proto
//   OUTDIR/NAME.json      the same, streamFormat json
//   OUTDIR/startup_load.{pftrace,json}  `chromium --trace-startup=CATEGORIES
//       --trace-startup-format=proto|json --trace-startup-file=F` (every process, from start)
'use strict';
const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');
const { spawn } = require('child_process');
const puppeteer = require('puppeteer-core');

const out = process.argv[2];
const executablePath = process.argv[3] || '/usr/bin/chromium';
const only = process.argv.slice(4);
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost'];
// The shared recordings' categories (the Performance panel's, without screenshots).
const CATEGORIES = ['-*', 'devtools.timeline', 'disabled-by-default-devtools.timeline',
  'disabled-by-default-devtools.timeline.frame', 'disabled-by-default-devtools.timeline.stack',
  'v8.execute', 'disabled-by-default-v8.cpu_profiler', 'toplevel', 'blink.console',
  'blink.user_timing', 'latencyInfo', 'loading'];

// Busy-waits `ms` on the wall clock, in the named function (its own frame in samples).
const spin = (name) => `function ${name}(ms) {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) x += Math.sqrt(x + 1);
  return x;
}`;

const PAGES = {
  '/orders.html': `<!doctype html><title>orders</title><button id="go">orders</button>
<script src="orders.js"></script>`,
  '/orders.js': `${spin('busyLoop')}
function computeTotals(orders) { return busyLoop(120) + orders.length; }
function parseOrders() {
  const orders = [1, 2, 3].map((x) => ({ id: x }));
  return computeTotals(orders);
}
function onOrderClick() { document.title = String(parseOrders()); }
document.getElementById('go').addEventListener('click', onOrderClick);
`,
  '/frames.html': `<!doctype html><title>frames</title><button id="recalc">recalc</button>
<iframe id="same" src="/widget.html" width="300" height="80"></iframe>
<iframe id="cross" width="300" height="80"></iframe>
<script src="frames-parent.js"></script>`,
  '/frames-parent.js': `function onRecalcClick() {
  document.title = String(document.getElementById('same').contentWindow.recalcWidget());
}
document.getElementById('recalc').addEventListener('click', onRecalcClick);
const cross = document.getElementById('cross');
cross.src = 'http://localhost:' + location.port + '/cross.html';
function pokeCross() { cross.contentWindow.postMessage('go', '*'); }
`,
  '/widget.html': `<!doctype html><title>widget</title><button id="w">widget</button>
<script src="widget.js"></script>`,
  '/widget.js': `${spin('measureWidget')}
${spin('widgetLoop')}
function recalcWidget() { return measureWidget(100); }
function refreshWidget() { return widgetLoop(90); }
function onWidgetClick() { document.title = String(refreshWidget()); }
document.getElementById('w').addEventListener('click', onWidgetClick);
`,
  '/cross.html': `<!doctype html><title>cross</title><script src="cross.js"></script>`,
  '/cross.js': `${spin('crossLoop')}
function crossCompute() { return crossLoop(120); }
function onCrossMessage() { document.title = String(crossCompute()); }
window.addEventListener('message', onCrossMessage);
`,
  '/layout.html': `<!doctype html><title>layout</title>
<style>.col{display:inline-block;border:1px solid #888}.wide .cell{padding:3px;letter-spacing:1px}
.cell{display:inline-block;margin:1px}</style>
<button id="measure">measure</button><button id="restyle">restyle</button>
<div id="cols"></div><div id="grid"></div><script src="layout.js"></script>`,
  '/layout.js': `const cols = document.getElementById('cols');
for (let i = 0; i < 400; i++) { const d = document.createElement('div'); d.className = 'col'; d.textContent = 'c' + i; cols.appendChild(d); }
const grid = document.getElementById('grid');
for (let i = 0; i < 60000; i++) { const s = document.createElement('span'); s.className = 'cell'; s.textContent = 'x' + (i % 97); grid.appendChild(s); }
function resizeColumns() {
  let total = 0;
  const end = performance.now() + 200;
  for (const c of cols.children) {
    c.style.width = (20 + (total % 30)) + 'px';
    total += c.offsetWidth;
    if (performance.now() > end) break;
  }
  return total;
}
function onMeasureClick() { document.title = String(resizeColumns()); }
function onRestyleClick() { document.body.classList.toggle('wide'); }
document.getElementById('measure').addEventListener('click', onMeasureClick);
document.getElementById('restyle').addEventListener('click', onRestyleClick);
`,
  '/split.html': `<!doctype html><title>split</title><button id="report">report</button>
<button id="dash">dashboard</button><script src="split.js"></script>`,
  '/split.js': `${spin('aggregateSales')}
${spin('renderSummary')}
${spin('computeTrends')}
${spin('computeForecast')}
${spin('formatWidgets')}
function buildReport() { return aggregateSales(91) + renderSummary(39); }
function onReportClick() { document.title = String(buildReport()); }
function refreshDashboard() { return computeTrends(60) + computeForecast(36) + formatWidgets(24); }
function onDashboardClick() { document.title = String(refreshDashboard()); }
document.getElementById('report').addEventListener('click', onReportClick);
document.getElementById('dash').addEventListener('click', onDashboardClick);
`,
  '/startup.html': `<!doctype html><title>startup</title><ul id="list"></ul>
<script src="startup.js"></script>`,
  '/startup.js': `${spin('tokenizeCorpus')}
${spin('renderListItems')}
function buildSearchIndex() { return tokenizeCorpus(150); }
function bootstrap() { return buildSearchIndex(); }
bootstrap();
function hydrateList() { return renderListItems(100); }
function onDomReady() { document.title = String(hydrateList()); }
document.addEventListener('DOMContentLoaded', onDomReady);
`,
  '/chart.html': `<!doctype html><title>chart</title><button id="draw">draw</button>
<script src="chart.js"></script>`,
  '/chart.js': `${spin('computeBars')}
const worker = new Worker('chart-worker.js');
function layoutChart() { return computeBars(120); }
function drawChart() { document.title = String(layoutChart()); }
function startWorker() { worker.postMessage(400); }
document.getElementById('draw').addEventListener('click', drawChart);
`,
  '/chart-worker.js': `${spin('crunchSeries')}
function onWorkerMessage(e) { postMessage(crunchSeries(e.data)); }
onmessage = onWorkerMessage;
`,
  '/session.html': `<!doctype html><title>session</title><input id="q"><button id="filter">filter</button>
<div id="rows" style="height:120px;overflow:auto"><div style="height:4000px">rows</div></div>
<canvas id="c" width="100" height="40"></canvas><script src="session.js"></script>`,
  '/session.js': `${spin('rankSuggestions')}
${spin('reconcileStock')}
${spin('mergeDocument')}
${spin('rasterizeTiles')}
${spin('rebuildCache')}
${spin('sortRows')}
${spin('updateVisibleRows')}
${spin('decodeCatalog')}
function suggestCompletions() { return rankSuggestions(130); }
function onQueryInput() { document.title = String(suggestCompletions()); }
function syncInventory() { return reconcileStock(90); }
function onSyncTimer() { document.title = String(syncInventory()); }
function applyPatch() { return mergeDocument(110); }
function onPortMessage() { document.title = String(applyPatch()); }
function drawScene() { return rasterizeTiles(120); }
function refreshCache() { return rebuildCache(100); }
async function onCacheReady() { await null; document.title = String(refreshCache()); }
function applyFilters() { return sortRows(140); }
function onFilterClick() { document.title = String(applyFilters()); }
function onRowsScroll() { document.title = String(updateVisibleRows(95)); }
function onCatalogTimer() { document.title = String(decodeCatalog(105)); }
document.getElementById('q').addEventListener('input', onQueryInput);
document.getElementById('filter').addEventListener('click', onFilterClick);
document.getElementById('rows').addEventListener('scroll', onRowsScroll);
const channel = new MessageChannel();
channel.port1.onmessage = onPortMessage;
// The page's own schedule: a timer, a message, a frame, a microtask and a JSON decode.
const plan = ['timer', 'message', 'raf', 'microtask', 'json', 'message', 'timer', 'raf'];
function runPlan(i) {
  if (i >= plan.length) return;
  const kind = plan[i];
  if (kind === 'timer') setTimeout(onSyncTimer, 0);
  else if (kind === 'message') channel.port2.postMessage(i);
  else if (kind === 'raf') requestAnimationFrame(drawScene);
  else if (kind === 'microtask') Promise.resolve().then(onCacheReady);
  else setTimeout(onCatalogTimer, 0);
  setTimeout(() => runPlan(i + 1), 400);
}
`,
};

function serve() {
  return new Promise((resolve) => {
    const srv = http.createServer((req, res) => {
      const p = PAGES[req.url.split('?')[0]];
      if (p === undefined) { res.statusCode = 404; res.end(); return; }
      res.setHeader('content-type', req.url.includes('.js') ? 'text/javascript' : 'text/html');
      res.end(p);
    }).listen(0, '127.0.0.1', () => resolve(srv));
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// One scenario in one format: load (or not), start tracing, act, stop, read the stream.
async function record(port, name, format, scenario) {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'taskchain-ud-'));
  const browser = await puppeteer.launch({ executablePath, headless: true, args: FLAGS, userDataDir });
  try {
    const page = await browser.newPage();
    const base = `http://127.0.0.1:${port}`;
    if (!scenario.beforeLoad) await page.goto(base + scenario.url, { waitUntil: 'load' });
    const cdp = await page.createCDPSession();
    await cdp.send('Tracing.start', {
      transferMode: 'ReturnAsStream', streamFormat: format,
      traceConfig: { includedCategories: CATEGORIES },
    });
    await sleep(300);
    await scenario.act(page, base);
    await sleep(500);
    const done = new Promise((r) => cdp.once('Tracing.tracingComplete', r));
    await cdp.send('Tracing.end');
    const { stream } = await done;
    const parts = [];
    for (;;) {
      const c = await cdp.send('IO.read', { handle: stream, size: 1 << 20 });
      parts.push(Buffer.from(c.data, c.base64Encoded ? 'base64' : 'utf8'));
      if (c.eof) break;
    }
    await cdp.send('IO.close', { handle: stream });
    const file = path.join(out, `${name}.${format === 'proto' ? 'pftrace' : 'json'}`);
    fs.writeFileSync(file, Buffer.concat(parts));
    console.log(`${file}: ${fs.statSync(file).size} bytes`);
  } finally {
    await browser.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  }
}

const click = (sel) => async (page) => { await page.click(sel); await sleep(400); };
const SCENARIOS = {
  click_chain: { url: '/orders.html', act: click('#go') },
  iframes: {
    url: '/frames.html',
    async act(page) {
      await page.click('#recalc');
      await sleep(400);
      const same = page.frames().find((f) => f.url().endsWith('/widget.html'));
      await same.click('#w');
      await sleep(400);
      await page.evaluate('pokeCross()');
      await sleep(500);
    },
  },
  native_layout: {
    url: '/layout.html',
    async act(page) { await click('#measure')(page); await click('#restyle')(page); },
  },
  split_70_30: {
    url: '/split.html',
    async act(page) { await click('#report')(page); await click('#dash')(page); },
  },
  worker_and_main: {
    url: '/chart.html',
    async act(page) {
      await page.evaluate('startWorker()');
      await sleep(100);
      await click('#draw')(page);
      await sleep(500);
    },
  },
  session: {
    url: '/session.html',
    async act(page) {
      await page.evaluate('runPlan(0)');
      await sleep(900);
      await page.type('#q', 'a');
      await sleep(500);
      await click('#filter')(page);
      await page.evaluate("document.getElementById('rows').scrollTop = 300");
      await sleep(2600);
    },
  },
};

// `--trace-startup`: the browser traces itself from its start and writes the file when
// the duration is over.
function startup(port, format) {
  return new Promise((resolve, reject) => {
    const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'taskchain-ud-'));
    const file = path.join(out, `startup_load.${format === 'proto' ? 'pftrace' : 'json'}`);
    const child = spawn(executablePath, [...FLAGS, `--user-data-dir=${userDataDir}`,
      `--trace-startup=${CATEGORIES.join(',')}`, `--trace-startup-format=${format}`,
      `--trace-startup-file=${file}`, '--trace-startup-duration=6',
      '--remote-debugging-port=0', `http://127.0.0.1:${port}/startup.html`], { stdio: 'ignore' });
    const check = setInterval(() => {
      if (fs.existsSync(file) && fs.statSync(file).size > 0) {
        // Written once complete; give the browser a moment to close the file.
        clearInterval(check);
        setTimeout(() => { child.kill('SIGTERM'); }, 1500);
      }
    }, 250);
    setTimeout(() => { clearInterval(check); child.kill('SIGKILL'); }, 30000);
    child.on('exit', () => {
      clearInterval(check);
      // The browser's children may still be writing into it: best effort.
      try { fs.rmSync(userDataDir, { recursive: true, force: true, maxRetries: 5 }); } catch (e) { /* left in /tmp */ }
      if (fs.existsSync(file)) {
        console.log(`${file}: ${fs.statSync(file).size} bytes`);
        resolve();
      } else reject(new Error(`no ${file}`));
    });
  });
}

(async () => {
  fs.mkdirSync(out, { recursive: true });
  const srv = await serve();
  const port = srv.address().port;
  try {
    for (const [name, scenario] of Object.entries(SCENARIOS)) {
      if (only.length && !only.includes(name)) continue;
      for (const format of ['proto', 'json']) await record(port, name, format, scenario);
    }
    if (!only.length || only.includes('startup_load')) {
      for (const format of ['proto', 'json']) await startup(port, format);
    }
  } finally {
    srv.close();
  }
})().catch((e) => { console.error(e); process.exit(1); });
