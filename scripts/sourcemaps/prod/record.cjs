// Records traces of the build of build.cjs: serves OUT/site at http://127.0.0.1:37039/ and,
// for each of N recordings, opens index.html?seed=K in headless Chromium (the flags of
// HELPERS.md, a fresh profile per browser) with tracing started before navigation (the
// categories DevTools records, with the source rundown), then clicks Recompute, Export and
// Customers. Writes OUT/traces/tNNN.json (uncompressed) for K = 1..N, except those already
// there (a run stopped half-way goes on); a failed page (an exception in the app) stops
// the run.
//
//   cd scripts/sourcemaps/prod && node record.cjs [N] [OUT]
const fs = require('fs');
const http = require('http');
const path = require('path');
const { chromium } = require('playwright-core');
const launch = require('../chromium.cjs');

const count = Number(process.argv[2] || 10);
const out = path.resolve(process.argv[3] || '/tmp/taskchain-bench/prodmaps');
const site = path.join(out, 'site');
const traces = path.join(out, 'traces');
const PORT = 37039;
const CATEGORIES = [
  '-*', 'devtools.timeline', 'disabled-by-default-devtools.timeline',
  'disabled-by-default-devtools.timeline.frame', 'disabled-by-default-devtools.timeline.stack',
  'v8.execute', 'disabled-by-default-v8.cpu_profiler', 'toplevel', 'blink.console',
  'blink.user_timing', 'latencyInfo', 'loading',
  'disabled-by-default-devtools.target-rundown', 'disabled-by-default-devtools.v8-source-rundown',
  'disabled-by-default-devtools.v8-source-rundown-sources',
];
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.map': 'application/json' };

const server = http.createServer((req, res) => {
  const p = path.join(site, decodeURIComponent(new URL(req.url, 'http://x').pathname));
  if (!p.startsWith(site + path.sep) || !fs.existsSync(p) || fs.statSync(p).isDirectory()) {
    res.writeHead(404);
    return res.end();
  }
  res.writeHead(200, { 'content-type': TYPES[path.extname(p)] || 'application/octet-stream' });
  fs.createReadStream(p).pipe(res);
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function record(browser, k) {
  const file = path.join(traces, `t${String(k).padStart(3, '0')}.json`);
  if (fs.existsSync(file)) return;
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e));
  await browser.startTracing(page, { categories: CATEGORIES });
  await page.goto(`http://127.0.0.1:${PORT}/index.html?seed=${k}`, { waitUntil: 'load' });
  await sleep(600);
  for (const button of ['#recompute', '#export-button', '#customers']) {
    await page.click(button);
    await sleep(700);
  }
  const buf = await browser.stopTracing();
  await page.close();
  if (errors.length) throw new Error(`seed ${k}: ${errors[0].stack || errors[0]}`);
  fs.writeFileSync(`${file}.part`, buf);
  fs.renameSync(`${file}.part`, file);
  console.log(file, buf.length, 'bytes');
}

(async () => {
  fs.mkdirSync(traces, { recursive: true });
  await new Promise((r) => server.listen(PORT, '127.0.0.1', r));
  const browser = await launch(chromium);
  for (let k = 1; k <= count; k++) await record(browser, k);
  await browser.close();
  server.close();
})().catch((e) => { console.error(e); process.exit(1); });
