// Serves site/<host>/<path> for every host name from one HTTPS server on 127.0.0.1
// (Chromium maps every host here with --host-resolver-rules). Usage:
//   node serve.js PORT KEY.pem CERT.pem
const https = require('https');
const fs = require('fs');
const path = require('path');

const [port, key, cert] = process.argv.slice(2);
const root = path.join(__dirname, 'site');
const types = { '.html': 'text/html', '.js': 'text/javascript' };

https
  .createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) }, (req, res) => {
    const host = (req.headers.host || '').split(':')[0].toLowerCase();
    let rel = decodeURIComponent(new URL(req.url, 'https://x').pathname);
    if (rel.endsWith('/')) rel += 'index.html';
    const file = path.join(root, host, path.normalize(rel));
    // Only files inside site/<host>/, for host names that are folders there.
    if (!/^[a-z0-9.-]+$/.test(host) || !file.startsWith(path.join(root, host) + path.sep)) {
      res.writeHead(404).end();
      return;
    }
    fs.readFile(file, (err, body) => {
      if (err) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, {
        'Content-Type': types[path.extname(file)] || 'application/octet-stream',
        'Cache-Control': 'no-store',
      });
      res.end(body);
    });
  })
  .listen(Number(port), '127.0.0.1', () => console.log(`serving ${root} on 127.0.0.1:${port}`));
