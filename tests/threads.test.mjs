// Threads and FMA in the page (issue 31): the CPU module's build for this browser (www/threads.js).
// The dev server's page is cross-origin isolated, so Chromium gets the threaded FMA build: its
// jobs split the widened target's matmuls across one thread per core (up to 8) and say so, and
// greedy speculation on it still gives the target's own tokens. A browser without relaxed SIMD
// (simulated: the probe fails to validate) gets the threaded SIMD128 build; a page that is not
// isolated (a host without the headers, its service worker blocked, as where a widget is embedded)
// gets one thread and says why. Timing goals live in tests/bench-widened.mjs, not here.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open, wake } from './browser.mjs';
import { text, rowsOf, decoded } from './helpers.mjs';

let env;
let flat;
before(async () => {
  env = await start();
  flat = await start({ isolation: false, webgpu: false });
});
after(async () => {
  await env?.close();
  await flat?.close();
});

const M = '[data-widget="measured"]';
const measured = (page, n) => page.waitForFunction((k) => Number(document.querySelector('[data-widget="measured"]')?.dataset.decoded || 0) >= k, n, { timeout: 180_000 });
const buildOf = (page) => page.evaluate(async () => (await import('/engine.js')).build);

/** Measures the trained target's roofline (quick) and returns the report's last line. */
async function executionLine(page) {
  await page.click(`${M} .mr-go`);
  await measured(page, 1);
  return text(page, `${M} .mr-during`);
}

test('an isolated page runs the threaded FMA build: a thread per core, FMA on, and so the report says', async () => {
  // ×4: its largest matrices (256 × 768) are split; the trained target's are too small to be.
  const { page, errors } = await open(env, '?measured.width=4');
  assert.equal(await page.evaluate(() => crossOriginIsolated), true);
  const cores = await page.evaluate(() => Math.min(8, navigator.hardwareConcurrency));
  const build = await buildOf(page);
  assert.equal(build.fma, true, 'Debian’s Chromium validates relaxed SIMD');
  assert.equal(build.dir, cores > 1 ? 'mt-fma/' : 'fma/');
  const line = await executionLine(page);
  const threads = cores > 1 ? `${cores} threads` : '1 thread: the browser reports one core';
  // ×4's large layers are packed for the CPU's matmul (the smaller ones are not), and the report says so.
  assert.match(line, new RegExp(`The matmuls ran on ${threads}; FMA on \\(kernel: SIMD128 \\+ relaxed-SIMD FMA, over weights packed in strips; smaller layers up to (16|32) rows a call, burn’s matmul beyond\\)\\.`), line);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the widened target on the threaded FMA build: greedy chains and trees give the target’s tokens, and the trained target’s', async () => {
  const rowsAt = async (width, experiment = 'greedy') => {
    const { page, errors } = await open(env, `?decoding.experiment=${experiment}&decoding.prompts=10&decoding.target_width=${width}`);
    await decoded(page, 1);
    const rows = await rowsOf(page, '[data-widget="decoding"] table.dec-greedy');
    assert.deepEqual(errors, []);
    await page.close();
    return rows;
  };
  const wide = await rowsAt(16);
  assert.ok(wide.length > 2, wide.join(' | '));
  for (const r of wide.slice(1)) assert.match(r, /, greedy 10\/10 /, r);
  // The widened target answers as the trained one (its matmuls split across threads, 1 to 9
  // rows a call): every draft's acceptance, tokens per call and calls come out the same.
  assert.deepEqual(wide, await rowsAt(1));
  // Trees (the widget's default ⟨2,2,1⟩ and its others): a call verifies up to 9 rows under the
  // tree mask, split across threads the same way.
  const trees = await rowsAt(8, 'tree');
  assert.ok(trees.length > 1, trees.join(' | '));
  for (const r of trees.slice(1)) assert.match(r, / 10\/10 /, r);
  assert.deepEqual(trees, await rowsAt(1, 'tree'));
});

test('a browser without relaxed SIMD gets the SIMD128 build, never one it cannot parse, and its jobs run', async () => {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  // Simulated: the 49-byte probe of threads.js (one f32x4.relaxed_madd, 0xfd 0x85 0x02) fails to validate.
  await context.addInitScript(() => {
    const validate = WebAssembly.validate;
    WebAssembly.validate = (bytes) => {
      const b = new Uint8Array(bytes.buffer ?? bytes);
      if (b.length === 49 && b[b.length - 4] === 0xfd && b[b.length - 3] === 0x85) return false;
      return validate(bytes);
    };
  });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${env.url}?measured.width=1&decoding.experiment=greedy&decoding.prompts=10&decoding.target_width=4`);
  await page.waitForSelector('html[data-ready="true"]', { timeout: 30_000 });
  await wake(page);
  const build = await buildOf(page);
  assert.equal(build.fma, false);
  assert.doesNotMatch(build.dir, /fma/);
  await decoded(page, 1);
  for (const r of (await rowsOf(page, '[data-widget="decoding"] table.dec-greedy')).slice(1)) assert.match(r, /, greedy 10\/10 /, r);
  const line = await executionLine(page);
  // The trained target's layers are too small to pack: the row-major kernel, up to its rows.
  assert.match(line, /FMA off \(kernel: SIMD128 \(no FMA\), up to (16|32) rows a call, burn’s matmul beyond\)/, line);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a page that is not cross-origin isolated runs one thread and says why', async () => {
  // A host without COOP/COEP and no service worker to add them: an embedding page's situation.
  const context = await flat.browser.newContext({ viewport: { width: 1280, height: 900 }, serviceWorkers: 'block' });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${flat.url}?measured.width=1`);
  await page.waitForSelector('html[data-ready="true"]', { timeout: 30_000 });
  await wake(page);
  assert.equal(await page.evaluate(() => crossOriginIsolated), false);
  const build = await buildOf(page);
  assert.equal(build.threads, 1);
  assert.equal(build.why, 'not-isolated');
  assert.doesNotMatch(build.dir, /mt/);
  const line = await executionLine(page);
  assert.match(line, /The matmuls ran on 1 thread: this page is not cross-origin isolated.*Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp; FMA on/, line);
  assert.deepEqual(errors, []);
  await context.close();
});

test('before the threaded builds exist, the page runs the best build that does (FMA on), with no 404 in the console', async () => {
  // As the dev server is while it builds them: scripts/build-wasm.sh's manifest lists the plain
  // and FMA builds only, and the threaded folders answer 404 (a request for them would be logged).
  const asked = [];
  const { page, errors } = await open(env, '?measured.width=1', {
    requests: asked,
    prepare: async (p) => {
      await p.route('**/pkg/builds.json', (route) => route.fulfill({ contentType: 'application/json', body: '{"builds": ["", "fma/"]}' }));
      await p.route(/\/pkg\/mt(-fma)?\//, (route) => route.fulfill({ status: 404, body: 'not built yet' }));
    },
  });
  const cores = await page.evaluate(() => Math.min(8, navigator.hardwareConcurrency));
  const build = await buildOf(page);
  assert.equal(build.dir, 'fma/');
  assert.equal(build.fma, true);
  assert.equal(build.threads, 1);
  assert.deepEqual(asked.filter((p) => /\/pkg\/mt/.test(p)), [], 'no threaded build asked for');
  const line = await executionLine(page);
  assert.match(line, /; FMA on \(kernel: SIMD128 \+ relaxed-SIMD FMA/, line);
  if (cores > 1) assert.match(line, /The matmuls ran on 1 thread: its threaded builds \(pkg\/mt-fma\/, pkg\/mt\/\) are not built yet; if the page was just started with scripts\/serve\.sh, they are being built/, line);
  assert.deepEqual(errors, []);
  await page.close();
});
