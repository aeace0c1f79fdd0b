const { chromium } = require('playwright-core');
(async () => {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
           '--disable-background-networking', '--disable-component-update', '--disable-sync',
           '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost'],
  });
  const page = await browser.newPage();
  await page.goto('http://127.0.0.1:8766/index.html');
  await page.waitForTimeout(300);
  await page.click('#go');
  await page.evaluate(() => window.scheduleSync());
  await page.waitForTimeout(1200);
  const bundle = await page.evaluate(() => window.collect());
  require('fs').writeFileSync(process.argv[2], JSON.stringify(bundle));
  console.log('samples', bundle.profile.samples.length, 'longTasks', bundle.longTasks.length, 'loafs', bundle.longAnimationFrames.length, bundle.userAgent);
  await browser.close();
})();
