// Builds the production-size app of src/ (a dashboard on React, react-router, lodash-es,
// d3, date-fns, Chart.js and highlight.js, versions pinned in package.json) with webpack 5
// in production mode (terser) and `devtool: 'source-map'`, into OUT/site/:
// index.html, dist/app.min.js and dist/app.min.js.map. OUT defaults to
// /tmp/taskchain-bench/prodmaps (a benchmark input, too big to commit).
//
//   cd scripts/sourcemaps/prod && npm ci && node build.cjs [OUT]
const fs = require('fs');
const path = require('path');
const webpack = require('webpack');

const out = path.resolve(process.argv[2] || '/tmp/taskchain-bench/prodmaps');
const site = path.join(out, 'site');

const config = {
  mode: 'production',
  context: __dirname,
  entry: './src/main.js',
  devtool: 'source-map',
  output: { path: path.join(site, 'dist'), filename: 'app.min.js', clean: true },
  performance: { hints: false },
};

webpack(config, (err, stats) => {
  if (err || stats.hasErrors()) {
    console.error(err || stats.toString('errors-only'));
    process.exit(1);
  }
  fs.writeFileSync(path.join(site, 'index.html'), `<!doctype html>
<html><head><meta charset="utf-8"><title>shop dashboard</title></head>
<body>
<button id="recompute">Recompute</button>
<button id="export-button">Export</button>
<button id="customers">Customers</button>
<div id="app"></div>
<canvas id="line" width="800" height="300"></canvas>
<canvas id="bars" width="400" height="300"></canvas>
<svg id="network" width="600" height="400"></svg>
<p id="languages"></p>
<div id="export"></div>
<script src="dist/app.min.js"></script>
</body></html>
`);
  const js = fs.statSync(path.join(site, 'dist/app.min.js')).size;
  const mapPath = path.join(site, 'dist/app.min.js.map');
  const map = JSON.parse(fs.readFileSync(mapPath, 'utf8'));
  console.log(`${site}: app.min.js ${js} bytes, map ${fs.statSync(mapPath).size} bytes, ${map.sources.length} sources`);
});
