// A small static server for the playground: www/ at the root and the generated pkg/ under
// /pkg/, with the headers the page needs (wasm MIME type for streaming compilation, a CSP that
// allows WebAssembly but no eval or inline script). Used by `scripts/serve.sh` and the tests.
// COOP/COEP make the dev page cross-origin isolated, which gives performance.now() a 5 µs step
// instead of 100 µs (the measured roofline says which it got; the page is correct either way).
// For pages on other sites that embed a widget (specdec-widget.js): Access-Control-Allow-Origin
// lets them load the modules, the worker and the wasm (all CORS requests), CORP cross-origin the
// stylesheet (a no-cors request) even from a page that is itself cross-origin isolated. COEP on
// our responses binds only our own documents and workers, never the page that embeds us. The
// current version is also served under /v<version>/ (www/version.js), the URL the widget
// reference tells instructors to use, as the published site does (README, "Embedding a widget").
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VERSION } from '../www/version.js';

const repo = resolve(fileURLToPath(new URL('..', import.meta.url)));
const roots = { '/pkg/': join(repo, 'pkg'), '/': join(repo, 'www') };
const versioned = `/v${VERSION}/`;
const types = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.wasm': 'application/wasm', '.svg': 'image/svg+xml', '.json': 'application/json',
  '.bpk': 'application/octet-stream',
};
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'none'";

function resolvePath(urlPath) {
  let path = decodeURIComponent(urlPath);
  if (path === '/favicon.ico') path = '/favicon.svg';
  if (path.startsWith(versioned)) path = path.slice(versioned.length - 1);
  if (path.endsWith('/')) path += 'index.html';
  for (const [prefix, dir] of Object.entries(roots)) {
    if (path.startsWith(prefix)) {
      const file = normalize(join(dir, path.slice(prefix.length)));
      return file.startsWith(dir + sep) ? file : null;
    }
  }
  return null;
}

/**
 * Starts the server; resolves to { server, url }. Port 0 picks a free one. `isolation: false`
 * leaves out COOP/COEP, as a static host does (the page's service worker then adds them).
 */
export function serve({ host = '127.0.0.1', port = 8000, isolation = true } = {}) {
  // On every answer, errors included: an isolated page's 404 is still an isolated document.
  const isolating = isolation ? { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' } : {};
  const server = createServer(async (req, res) => {
    let file;
    try {
      file = resolvePath(new URL(req.url, 'http://x').pathname);
    } catch {
      // A malformed escape such as GET /% : the client's mistake, and the server keeps serving.
      res.writeHead(400, { 'content-type': 'text/plain', ...isolating });
      res.end('bad request\n');
      return;
    }
    try {
      if (!file) throw Object.assign(new Error('outside the site'), { code: 'ENOENT' });
      const body = await readFile(file);
      res.writeHead(200, {
        'content-type': types[extname(file)] ?? 'application/octet-stream',
        'content-security-policy': CSP,
        'cache-control': 'no-cache',
        ...isolating,
        'cross-origin-resource-policy': 'cross-origin',
        'access-control-allow-origin': '*',
      });
      res.end(body);
    } catch (e) {
      // With CORS, so that a page on another site sees the 404 rather than a blocked request.
      res.writeHead(e.code === 'ENOENT' || e.code === 'EISDIR' ? 404 : 500, { 'content-type': 'text/plain', 'access-control-allow-origin': '*', ...isolating });
      res.end(e.code === 'ENOENT' || e.code === 'EISDIR' ? 'not found\n' : 'server error\n');
    }
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => ok({ server, url: `http://${host}:${server.address().port}/` }));
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const port = Number(process.env.PORT ?? 8000);
  serve({ port }).then(({ url }) => console.log(`specdec-playground: serving on ${url}  (Ctrl-C to stop)`), (e) => {
    console.error(`specdec-playground: cannot listen on 127.0.0.1:${port}: ${e.message}`);
    process.exit(1);
  });
}
