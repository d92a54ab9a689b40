// The dev server's headers (issue 31): COOP and COEP on every answer it gives — pages, scripts,
// workers, the wasm builds, the weights, the service worker, and its errors (a 404, a malformed
// path) — so that the page and all its workers are cross-origin isolated; CORP cross-origin on
// what another site embeds; and none of the two on the server that stands in for a static host
// (isolation: false), where the service worker adds them (isolation.test.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serve } from '../scripts/serve.mjs';

const PATHS = ['/', '/index.html', '/embed.html', '/engine.js', '/worker.js', '/pool-worker.js', '/threads.js', '/sw.js',
  '/widgets/decoding.js', '/page.css', '/pkg/specdec.js', '/pkg/specdec_bg.wasm', '/pkg/weights/target.bpk', '/no-such-file.js', '/%'];

async function headersOf(isolation) {
  const { server, url } = await serve({ port: 0, isolation });
  try {
    const out = [];
    for (const path of PATHS) {
      const r = await fetch(new URL(path, url).href.replace(/\/%25$/, '/%'));
      await r.arrayBuffer();
      out.push({ path, status: r.status, coop: r.headers.get('cross-origin-opener-policy'), coep: r.headers.get('cross-origin-embedder-policy'), corp: r.headers.get('cross-origin-resource-policy') });
    }
    return out;
  } finally {
    await new Promise((ok) => server.close(ok));
  }
}

test('every answer of the dev server carries COOP and COEP, errors included', async () => {
  const answers = await headersOf(true);
  assert.ok(answers.some((a) => a.status === 404) && answers.some((a) => a.status === 400), JSON.stringify(answers));
  assert.ok(answers.filter((a) => a.status === 200).length >= 12, JSON.stringify(answers));
  for (const a of answers) {
    assert.equal(a.coop, 'same-origin', `${a.path} (${a.status})`);
    assert.equal(a.coep, 'require-corp', `${a.path} (${a.status})`);
    if (a.status === 200) assert.equal(a.corp, 'cross-origin', a.path);
  }
});

test('the stand-in for a static host sends neither, for the service worker to add', async () => {
  for (const a of await headersOf(false)) {
    assert.equal(a.coop, null, a.path);
    assert.equal(a.coep, null, a.path);
  }
});
