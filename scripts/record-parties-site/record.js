// Records samples/parties-shop/trace.json.gz: a page whose scripts come from six host
// names, all served by serve.js on 127.0.0.1. Usage: node record.js PORT OUT.json.gz
const { chromium } = require('playwright-core');
const fs = require('fs');
const zlib = require('zlib');

const [port, out] = process.argv.slice(2);

(async () => {
  // Playwright launches with a fresh temporary profile (user data dir) of its own.
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync',
           `--host-resolver-rules=MAP * 127.0.0.1:${port}`, '--ignore-certificate-errors'],
  });
  const context = await browser.newContext({ ignoreHTTPSErrors: true });
  const page = await context.newPage();
  // Tracing starts on about:blank, before the navigation: the page's URL comes from the
  // main frame's commit.
  await browser.startTracing(page, {
    categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8.execute',
                 'disabled-by-default-v8.cpu_profiler', 'toplevel', 'blink.user_timing',
                 'loading', '__metadata'],
  });
  await page.goto('https://www.shop.test/');
  await page.waitForFunction(() => performance.now() > 2000, null, { polling: 50 });
  await page.click('#buy');
  await page.waitForFunction(() => performance.now() > 3000, null, { polling: 50 });
  const trace = await browser.stopTracing();
  fs.writeFileSync(out, zlib.gzipSync(trace, { level: 9 }));
  console.log(`${trace.length} bytes of trace → ${out}`);
  await browser.close();
})();
