// Launches the headless Chromium the source-map recorders use (record.cjs, prod/record.cjs):
// /usr/bin/chromium with the isolation flags of the project (no network but 127.0.0.1 and
// localhost, no background traffic); playwright gives it a fresh temporary
// --user-data-dir of its own. `chromium` is playwright-core's, from the caller's
// node_modules.
module.exports = (chromium) => chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost',
  ],
});
