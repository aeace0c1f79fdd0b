// Records the source-map samples: serves samples/sm-site at http://127.0.0.1:37038/ and
// records one trace per case with headless Chromium (the flags of HELPERS.md), clicking
// "Import" (a ~120 ms click task) and "Sync" (two timer tasks of ~100 and ~80 ms).
//
//   NODE_PATH=<scratch>/node_modules node scripts/sourcemaps/record.cjs
// Writes samples/<case>/trace.json.gz for every case below.
const fs = require('fs');
const http = require('http');
const path = require('path');
const zlib = require('zlib');
const { chromium } = require('playwright-core');
const launch = require('./chromium.cjs');

const root = path.resolve(__dirname, '../..');
const site = path.join(root, 'samples/sm-site');
const PORT = 37038;
const BASE = [
  'devtools.timeline', 'disabled-by-default-devtools.timeline',
  'disabled-by-default-devtools.timeline.frame', 'disabled-by-default-devtools.timeline.stack',
  'v8.execute', 'disabled-by-default-v8.cpu_profiler', 'toplevel', 'blink.console',
  'blink.user_timing', 'latencyInfo', 'loading',
];
const RUNDOWN = [
  'disabled-by-default-devtools.target-rundown', 'disabled-by-default-devtools.v8-source-rundown',
  'disabled-by-default-devtools.v8-source-rundown-sources',
];
// case: page, rundown categories, tracing started before navigation.
const CASES = [
  { name: 'sm-rollup-terser', build: 'rollup-terser', rundown: true, beforeNavigation: false },
  { name: 'sm-webpack-no-rundown', build: 'webpack', rundown: false, beforeNavigation: true },
  { name: 'sm-index-map', build: 'index-map', rundown: true, beforeNavigation: false },
  { name: 'sm-data-url', build: 'esbuild-inline', rundown: true, beforeNavigation: true },
  { name: 'sm-missing-map', build: 'esbuild-missing', rundown: true, beforeNavigation: false },
  { name: 'sm-broken-map', build: 'esbuild-broken', rundown: false, beforeNavigation: false },
];
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.map': 'application/json' };

const server = http.createServer((req, res) => {
  const p = path.join(site, decodeURIComponent(new URL(req.url, 'http://x').pathname));
  if (!p.startsWith(site) || !fs.existsSync(p) || fs.statSync(p).isDirectory()) {
    res.writeHead(404); return res.end();
  }
  res.writeHead(200, { 'content-type': TYPES[path.extname(p)] || 'application/octet-stream' });
  fs.createReadStream(p).pipe(res);
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function record(browser, c) {
  const page = await browser.newPage();
  const url = `http://127.0.0.1:${PORT}/${c.build}.html`;
  const categories = ['-*', ...BASE, ...(c.rundown ? RUNDOWN : [])];
  if (c.beforeNavigation) await browser.startTracing(page, { categories });
  await page.goto(url, { waitUntil: 'load' });
  if (!c.beforeNavigation) await browser.startTracing(page, { categories });
  await sleep(400);
  await page.click('#import');
  await sleep(600);
  await page.click('#sync');
  await sleep(1200);
  const buf = await browser.stopTracing();
  await page.close();
  const dir = path.join(root, 'samples', c.name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'trace.json.gz'), zlib.gzipSync(buf, { level: 9 }));
  console.log(c.name, buf.length, 'bytes');
}

(async () => {
  await new Promise((r) => server.listen(PORT, '127.0.0.1', r));
  const browser = await launch(chromium);
  const only = process.argv.slice(2);
  for (const c of CASES.filter((c) => !only.length || only.includes(c.name))) await record(browser, c);
  await browser.close();
  server.close();
})().catch((e) => { console.error(e); process.exit(1); });
