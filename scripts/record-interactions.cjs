// Records samples/interactions-shop (issue 41) with puppeteer-core and the system's Chromium:
// the page scripts/interaction-pages/shop.html, seven interactions with real input (CDP
// Input.dispatchMouseEvent / dispatchKeyEvent through page.mouse and page.keyboard), 1.3 s
// apart, traced with the DevTools Performance panel's categories plus the V8 sampler and
// timeline stacks. Run by scripts/record-interactions, which installs puppeteer-core.
//
// Usage: node record-interactions.cjs OUTDIR [CHROMIUM]
//   OUTDIR/trace.json   the whole trace (the wrapper keeps the page's renderer)
//   OUTDIR/run.json     the steps (what was done, when, to which element), the page's own
//                       Event Timing entries (PerformanceObserver, durationThreshold 16), the
//                       browser version, flags and categories, every request the server saw
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');
const puppeteer = require('puppeteer-core');

const out = process.argv[2];
const executablePath = process.argv[3] || '/usr/bin/chromium';
const PAGES = path.join(__dirname, 'interaction-pages');
const SHOP = 'www.shop-inp.test';
const VENDOR = 'cdn.tagvendor.test';
// The DevTools Performance panel's categories (TimelineController, Chromium 156 era), the V8
// sampler, and timeline stacks (stack traces on Layout / UpdateLayoutTree forced from script).
const CATEGORIES = ['-*', 'blink.console', 'blink.user_timing', 'devtools.timeline',
  'disabled-by-default-devtools.target-rundown', 'disabled-by-default-devtools.timeline.frame',
  'disabled-by-default-devtools.timeline.stack', 'disabled-by-default-devtools.timeline',
  'disabled-by-default-devtools.v8-source-rundown-sources', 'disabled-by-default-devtools.v8-source-rundown',
  'disabled-by-default-v8.inspector', 'v8.execute', 'v8', 'loading', 'navigation',
  'disabled-by-default-v8.cpu_profiler'];
const GAP_MS = 1300;

// The page's own view of its interactions: every Event Timing entry with its target.
const EVENT_TIMING_OBSERVER = `
window.__eventTimings = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    window.__eventTimings.push({ name: e.name, interactionId: e.interactionId, startTime: e.startTime,
      processingStart: e.processingStart, processingEnd: e.processingEnd, duration: e.duration,
      target: e.target ? (e.target.id ? '#' + e.target.id : e.target.nodeName) : null });
  }
}).observe({ type: 'event', durationThreshold: 16, buffered: true });`;

async function main() {
  const requests = [];
  const server = http.createServer((req, res) => {
    const host = (req.headers.host || '').split(':')[0];
    const url = req.url.split('?')[0];
    let file = null;
    if (host === SHOP && /^\/[a-z]+\.(html|js)$/.test(url)) file = path.join(PAGES, url);
    if (host === VENDOR && url === '/tag.js') file = path.join(PAGES, 'vendor', 'tag.js');
    requests.push({ host, path: req.url, status: file && fs.existsSync(file) ? 200 : 404 });
    if (!file || !fs.existsSync(file)) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'content-type': file.endsWith('.html') ? 'text/html' : 'text/javascript',
      'cache-control': 'no-store' });
    res.end(fs.readFileSync(file));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const port = server.address().port;
  const userDataDir = fs.mkdtempSync('/tmp/taskchain-interactions-profile-');
  const args = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    `--host-resolver-rules=MAP * 127.0.0.1:${port}`, '--no-proxy-server', `--user-data-dir=${userDataDir}`,
    '--window-size=800,900'];
  const browser = await puppeteer.launch({ executablePath, args, headless: true, defaultViewport: { width: 800, height: 900 } });
  const page = await browser.newPage();
  await page.evaluateOnNewDocument(EVENT_TIMING_OBSERVER);
  await page.goto(`http://${SHOP}/shop.html`, { waitUntil: 'load' });
  const center = async (sel) => {
    const b = await (await page.$(sel)).boundingBox();
    return { x: Math.round(b.x + b.width / 2), y: Math.round(b.y + b.height / 2) };
  };
  const at = {};
  for (const id of ['search', 'add', 'status', 'chart-button', 'pay', 'quick', 'restyle']) at[id] = await center('#' + id);
  await new Promise((r) => setTimeout(r, 500));

  fs.mkdirSync(out, { recursive: true });
  const tracePath = path.join(out, 'trace.json');
  await page.tracing.start({ path: tracePath, categories: CATEGORIES });
  const t0 = Date.now();
  const wait = (ms) => new Promise((r) => setTimeout(r, ms));
  const steps = [];
  const click = async (step, id, extra = {}) => {
    const { x, y } = at[id];
    steps.push({ step, target: '#' + id, t_wall_ms: Date.now() - t0, input: `page.mouse.click(${x}, ${y})`, ...extra });
    await page.mouse.click(x, y);
  };
  await wait(GAP_MS);
  // keyboard: focus first (a click would be an interaction of its own), then one key press
  await page.evaluate(() => document.getElementById('search').focus());
  await wait(300);
  steps.push({ step: 'search', target: '#search', t_wall_ms: Date.now() - t0, input: "page.keyboard.press('k') with #search focused" });
  await page.keyboard.press('k');
  await wait(GAP_MS);
  await click('add', 'add');
  await wait(GAP_MS);
  await page.evaluate(() => window.armStockPoll());
  await wait(30);
  await click('status', 'status', { armed_timer_ms_before_click: 30 });
  await wait(GAP_MS);
  await click('chart', 'chart-button');
  await wait(GAP_MS);
  await click('pay', 'pay');
  await wait(GAP_MS);
  await click('quick', 'quick');
  await wait(GAP_MS);
  await click('restyle', 'restyle');
  await wait(GAP_MS);
  await page.tracing.stop();
  const eventTimings = await page.evaluate(() => window.__eventTimings);
  const version = await browser.version();
  await browser.close();
  server.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
  const run = {
    page_url: `http://${SHOP}/shop.html`, vendor_url: `http://${VENDOR}/tag.js`, browser: version,
    browser_executable: executablePath, browser_args: args.filter((a) => !a.startsWith('--user-data-dir')),
    categories: CATEGORIES, recorded_at: new Date().toISOString(), steps, page_event_timings_all: eventTimings,
    requests,
  };
  fs.writeFileSync(path.join(out, 'run.json'), JSON.stringify(run, null, 1) + '\n');
}
main().catch((e) => { console.error(e); process.exit(1); });
