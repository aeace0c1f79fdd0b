// Records the Chrome traces of samples/recursion-and-triggers and samples/compare-builds
// (issue 17) with playwright-core and the system's Chromium. Run by
// scripts/record-chains-samples, which installs playwright-core in a scratch folder.
//
// Usage: node record-chains.js OUTDIR [CHROMIUM]
//   OUTDIR/recursion-and-triggers/trace.json      one page: direct and mutual recursion on
//       clicks, a timer, an animation frame, a MessageChannel message, a keystroke in an
//       input, a script evaluated at load
//   OUTDIR/compare-builds/base/run-N.json           five runs of a small app
//   OUTDIR/compare-builds/moved/run-N.json          the same app with every line of its
//       script moved down by one (and a new content hash in the script's name)
//   OUTDIR/compare-builds/slower/run-N.json         the same app with its click task 30% longer
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');
const { chromium } = require('playwright-core');

const out = process.argv[2];
const executablePath = process.argv[3] || '/usr/bin/chromium';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost'];
const CATEGORIES = ['-*', 'devtools.timeline', 'disabled-by-default-devtools.timeline',
  'v8.execute', 'disabled-by-default-v8.cpu_profiler'];

// Busy-waits `ms` on the wall clock: a task's length does not depend on the machine.
const SPIN = `function spin(ms) {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) x += Math.sqrt(x + 1);
  return x;
}`;

const pages = {
  '/recursion.html': `<!doctype html><title>recursion</title>
<button id="fib">fib</button><button id="mutual">mutual</button><input id="q">
<script src="boot.js"></script><script src="recursion.js"></script>`,
  // Evaluated at load: a long task whose trigger is the script itself.
  '/boot.js': `${SPIN}
function boot() { return spin(70); }
boot();
`,
  '/recursion.js': `${SPIN}
function fib(n) {
  if (n <= 1) return spin(10);
  return fib(n - 1) + spin(4);
}
function computeFib() { return fib(18); }
function onFibClick() { document.title = String(computeFib()); }
function isEven(n) { return n === 0 ? spin(30) : isOdd(n - 1) + spin(4); }
function isOdd(n) { return n === 0 ? spin(30) : isEven(n - 1) + spin(4); }
function onMutualClick() { document.title = String(isEven(12)); }
function onTimer() { return spin(80); }
function onFrame() { return spin(75); }
function onMessage() { return spin(65); }
function onKey() { return spin(60); }
function onInput() { return spin(90); }
document.getElementById('fib').addEventListener('click', onFibClick);
document.getElementById('mutual').addEventListener('click', onMutualClick);
document.getElementById('q').addEventListener('keydown', onKey);
document.getElementById('q').addEventListener('input', onInput);
const channel = new MessageChannel();
channel.port1.onmessage = onMessage;
window.startTimers = () => {
  setTimeout(onTimer, 50);
  setTimeout(() => requestAnimationFrame(onFrame), 300);
  setTimeout(() => channel.port2.postMessage(1), 600);
};
`,
};

// The app of the compare runs: a click task and a timer task, its script served under a
// content-hashed name as bundlers write them.
function appScript(clickMs, moved) {
  return `${moved ? '// build 2: every line below moved down by one\n' : ''}${SPIN}
function validate(order) { return spin(order.ms); }
function saveOrder() { return validate({ ms: ${clickMs} }) + 1; }
function onSaveClick() { document.title = String(saveOrder()); }
function render() { return spin(80); }
function refresh() { document.body.dataset.n = String(render()); }
document.getElementById('save').addEventListener('click', onSaveClick);
window.startTimers = () => setTimeout(refresh, 50);
`;
}
const builds = {
  'compare-builds/base': { script: 'app.3f9a2b1c.js', body: appScript(120, false) },
  'compare-builds/moved': { script: 'app.8d7e6f5a.js', body: appScript(120, true) },
  'compare-builds/slower': { script: 'app.c41d9e07.js', body: appScript(156, false) },
};
for (const b of Object.values(builds)) {
  pages['/' + b.script] = b.body;
  pages['/app-' + b.script + '.html'] = `<!doctype html><title>app</title>
<button id="save">save</button><script src="${b.script}?v=1"></script>`;
}

async function main() {
  const server = http.createServer((req, res) => {
    const body = pages[req.url.split('?')[0]];
    if (body === undefined) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'content-type': req.url.includes('.html') ? 'text/html' : 'text/javascript' });
    res.end(body);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}`;
  const browser = await chromium.launch({ executablePath, args: FLAGS, headless: true });
  const record = async (file, url, act) => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const page = await browser.newPage();
    await browser.startTracing(page, { path: file, categories: CATEGORIES });
    await page.goto(url);
    await page.waitForTimeout(200);
    await act(page);
    await page.waitForTimeout(300);
    await browser.stopTracing();
    await page.close();
  };
  await record(path.join(out, 'recursion-and-triggers', 'trace.json'), base + '/recursion.html',
    async (page) => {
      await page.click('#fib');
      await page.waitForTimeout(200);
      await page.click('#mutual');
      await page.waitForTimeout(200);
      await page.evaluate(() => window.startTimers());
      await page.waitForTimeout(1000);
      await page.focus('#q');
      await page.keyboard.press('a');
    });
  for (const [name, b] of Object.entries(builds)) {
    for (let run = 1; run <= 5; run++) {
      await record(path.join(out, name, `run-${run}.json`), `${base}/app-${b.script}.html`,
        async (page) => {
          await page.click('#save');
          await page.waitForTimeout(150);
          await page.evaluate(() => window.startTimers());
          await page.waitForTimeout(300);
        });
    }
  }
  await browser.close();
  server.close();
}
main().catch((e) => { console.error(e); process.exit(1); });
