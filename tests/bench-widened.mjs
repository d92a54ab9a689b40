// The widened target in the page (issues 22 and 31), measured in headless Chromium on flex, in one
// run: on the page's own build for this browser (threads and FMA where it is cross-origin isolated:
// www/threads.js) and on one thread (the same server without COOP/COEP and with the service
// worker blocked, as a widget embedded in notes runs), each of
//   - the measured roofline of ×16: T(k) for k = 1 … 64, the memory floor, T(k)/T(1);
//   - the sweep over γ of draft B's chain on ×16 (10 prompts): the best γ on the wall clock;
//   - the §6 table on ×16 at 8 nodes (10 prompts);
// and, with --peer DIR (a copy of shared/peers prepared as its README says: onnx16/ made and
// ort-web's packages installed), onnxruntime-web on the same ×16 shape at 1 and 2 threads.
//   node tests/bench-widened.mjs [--peer /tmp/peers] [--only threads|one]
// (after `bash scripts/build-wasm.sh cpu`). Run nothing else meanwhile: it times this machine.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { start, open } from './browser.mjs';

const arg = (name) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : null; };
const peer = arg('--peer');
const only = arg('--only');

const rowsOf = (page, sel) => page.$$eval(`${sel} tr`, (rs) => rs.map((r) => r.innerText.replace(/\s+/g, ' ').trim()));
const done = (page, w, n = 1) => page.waitForFunction(([sel, k]) => Number(document.querySelector(sel)?.dataset.decoded || 0) >= k,
  [`[data-widget="${w}"]`, n], { timeout: 900_000 });
const secs = (t0) => `${((Date.now() - t0) / 1000).toFixed(0)} s`;

/** Every measurement on pages of `env`, opened in `context`. */
async function measure(label, env, context) {
  const page = async (query) => {
    const p = await context.newPage();
    await p.goto(`${env.url}${query}`);
    await p.waitForSelector('html[data-ready="true"]', { timeout: 60_000 });
    return p;
  };
  console.log(`\n=== ${label} ===`);
  let p = await page('?measured.width=16');
  console.log(`build: ${JSON.stringify(await p.evaluate(async () => (await import('/engine.js')).build))}, crossOriginIsolated ${await p.evaluate(() => crossOriginIsolated)}`);
  let t0 = Date.now();
  await p.click('[data-widget="measured"] .mr-go');
  await done(p, 'measured');
  const text = await p.$eval('[data-widget="measured"] .mr-result', (e) => e.innerText);
  console.log(`measured roofline ×16 (${secs(t0)}):\n  ${(await rowsOf(p, '[data-widget="measured"] table.mr-rows')).join('\n  ')}`);
  console.log(text.split('\n').filter((l) => /bandwidth|memory floor|almost free|not free/.test(l)).join('\n'));
  console.log(await p.$eval('[data-widget="measured"] .mr-during', (e) => e.innerText));
  await p.close();
  for (const [name, query, table] of [
    ['sweep over γ, draft B chain, ×16', 'decoding.experiment=sweep&decoding.target_width=16&decoding.draft=b&decoding.gammas=1,2,3,4,6&decoding.prompts=10&decoding.shape=chain', 'table.dec-sweep'],
    ['§6 table, ×16, 8 nodes', 'decoding.experiment=methods&decoding.target_width=16&decoding.budget=8&decoding.prompts=10', 'table'],
  ]) {
    p = await page(`?${query}`);
    t0 = Date.now();
    await done(p, 'decoding');
    const rows = await rowsOf(p, `[data-widget="decoding"] .dec-result ${table}`);
    const summary = await p.$eval('[data-widget="decoding"] .dec-result', (e) => e.innerText.split('\n').filter((l) => /best|measured|curve|T\(/.test(l)).slice(0, 6).join('\n'));
    console.log(`${name} (${secs(t0)}):\n  ${rows.join('\n  ')}\n${summary}`);
    await p.close();
  }
}

const threaded = await start();
const flat = await start({ isolation: false, webgpu: false });
try {
  if (only !== 'one') await measure('the page’s build (threads, FMA)', threaded, await threaded.browser.newContext({ viewport: { width: 1280, height: 900 } }));
  if (only !== 'threads') await measure('one thread (not isolated)', flat, await flat.browser.newContext({ viewport: { width: 1280, height: 900 }, serviceWorkers: 'block' }));
} finally {
  await threaded.close();
  await flat.close();
}
if (peer) {
  console.log('\n=== onnxruntime-web, the same ×16 shape (shared/peers) ===');
  const r = spawnSync('node', ['run.mjs', '--onnx-dir', join(peer, 'onnx16'), '--runs', 'wasm:1:wasm,wasm:2:wasm', '--warmup-ms', '2000'],
    { cwd: join(peer, 'ort-web'), encoding: 'utf8', timeout: 900_000 });
  console.log(r.stdout, r.stderr);
}
