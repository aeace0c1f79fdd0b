// Makes samples/sm-embedded/trace.json.gz: the sm-rollup-terser recording saved the way
// DevTools saves a trace with "Include script content and source maps": `metadata` first,
// with `sourceMaps: [{url, sourceMapUrl, sourceMap}]` (the map object), then the events.
//
//   node scripts/sourcemaps/embed.cjs
const fs = require('fs');
const path = require('path');
const zlib = require('zlib');

const root = path.resolve(__dirname, '../..');
const trace = JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(root, 'samples/sm-rollup-terser/trace.json.gz'))));
const map = JSON.parse(fs.readFileSync(path.join(root, 'samples/sm-site/dist/rollup-terser/app.min.js.map'), 'utf8'));
const metadata = {
  source: 'DevTools',
  sourceMaps: [{ url: 'http://127.0.0.1:37038/dist/rollup-terser/app.min.js', sourceMapUrl: 'app.min.js.map', sourceMap: map }],
};
const events = trace.traceEvents || trace;
const text = `{"metadata": ${JSON.stringify(metadata, null, 2)},\n"traceEvents": [\n${events.map((e) => JSON.stringify(e)).join(',\n')}\n]}\n`;
fs.mkdirSync(path.join(root, 'samples/sm-embedded'), { recursive: true });
fs.writeFileSync(path.join(root, 'samples/sm-embedded/trace.json.gz'), zlib.gzipSync(text, { level: 9 }));
console.log('sm-embedded', text.length, 'bytes');
