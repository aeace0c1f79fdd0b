// Builds the inventory app of samples/sm-site/src into samples/sm-site/dist/<build>/ with
// the bundlers and minifiers real sites use, each with a source map, plus the odd cases
// (index map, inline data: URL, missing map, broken map), and one HTML page per build.
//
//   npm install esbuild@0.28.2 terser webpack rollup @rollup/plugin-terser source-map acorn
//   NODE_PATH=<that folder>/node_modules node scripts/sourcemaps/build.cjs
const fs = require('fs');
const path = require('path');

const site = path.resolve(__dirname, '../../samples/sm-site');
const dist = (b) => path.join(site, 'dist', b);
const entry = path.join(site, 'src/main.js');

function page(build) {
  fs.writeFileSync(path.join(site, `${build}.html`), `<!doctype html>
<html><head><meta charset="utf-8"><title>inventory app (${build})</title>
<link rel="stylesheet" href="common.css"></head>
<body>
<button id="import">Import inventory</button>
<button id="sync">Sync inventory</button>
<div id="out"></div>
<script src="dist/${build}/app.min.js"></script>
</body></html>
`);
}

async function esbuild(build, sourcemap) {
  fs.mkdirSync(dist(build), { recursive: true });
  await require('esbuild').build({
    entryPoints: [entry], bundle: true, format: 'iife', minify: true, sourcemap,
    outfile: path.join(dist(build), 'app.min.js'), logLevel: 'warning',
  });
  page(build);
}

async function rollupTerser() {
  const { rollup } = require('rollup');
  const terser = require('@rollup/plugin-terser');
  const b = await rollup({ input: entry, plugins: [terser()] });
  await b.write({ file: path.join(dist('rollup-terser'), 'app.min.js'), format: 'iife', sourcemap: true });
  page('rollup-terser');
}

function webpack() {
  const wp = require('webpack');
  return new Promise((ok, fail) => wp({
    mode: 'production', entry, devtool: 'source-map', context: site,
    output: { path: dist('webpack'), filename: 'app.min.js' },
  }, (err, stats) => {
    if (err || stats.hasErrors()) return fail(err || stats.toString());
    page('webpack');
    ok();
  }));
}

// An index map: a one-line banner (its own map) then the rollup bundle, as a concatenating
// server or bundler writes them, with `sections`.
function indexMap() {
  const src = fs.readFileSync(path.join(dist('rollup-terser'), 'app.min.js'), 'utf8')
    .replace(/\n\/\/# sourceMappingURL=.*\n?$/, '');
  const map = JSON.parse(fs.readFileSync(path.join(dist('rollup-terser'), 'app.min.js.map'), 'utf8'));
  fs.mkdirSync(dist('index-map'), { recursive: true });
  const banner = 'window.__build="index-map";';
  fs.writeFileSync(path.join(dist('index-map'), 'app.min.js'),
    `${banner}\n${src}\n//# sourceMappingURL=app.min.js.map\n`);
  map.sources = map.sources.map((s) => s.replace(/^(\.\.\/)+src\//, '../../src/'));
  const index = {
    version: 3, file: 'app.min.js',
    sections: [
      { offset: { line: 0, column: 0 }, map: { version: 3, sources: ['banner.js'], sourcesContent: [banner], names: [], mappings: 'AAAA' } },
      { offset: { line: 1, column: 0 }, map },
    ],
  };
  fs.writeFileSync(path.join(dist('index-map'), 'app.min.js.map'), JSON.stringify(index));
  page('index-map');
}

(async () => {
  await esbuild('esbuild-inline', 'inline'); // //# sourceMappingURL=data:application/json;base64,…
  await esbuild('esbuild-missing', true);
  fs.unlinkSync(path.join(dist('esbuild-missing'), 'app.min.js.map'));
  await esbuild('esbuild-broken', true);
  fs.writeFileSync(path.join(dist('esbuild-broken'), 'app.min.js.map'), '{"version":3,"sources":["a.js"],"mappings":"@@@ not vlq');
  await rollupTerser();
  await webpack();
  indexMap();
  console.log('built', fs.readdirSync(path.join(site, 'dist')).join(' '));
})().catch((e) => { console.error(e); process.exit(1); });
