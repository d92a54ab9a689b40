// Browser tests of the measured roofline (§1): a measurement of the widened target finishes with a
// row per k and this device's bandwidth; bad values, typed in the URL or sent to the engine, are
// named clearly and the widget keeps working.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { setControl, text, alertOf, rowsOf } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

const W = '[data-widget="measured"]';
const measured = (page, n) => page.waitForFunction((k) => Number(document.querySelector('[data-widget="measured"]')?.dataset.decoded || 0) >= k, n, { timeout: 180_000 });

test('measured roofline: the target ×2 timed at every k of the lecture’s demo 1 (1 to 64), beside this device’s bandwidth', async () => {
  const { page, errors } = await open(env, '?measured.width=2');
  // Nothing runs until asked: a measurement takes the device for a while.
  assert.equal(await page.$(`${W} table.mr-rows`), null);
  await page.click(`${W} .mr-go`);
  await measured(page, 1);
  const rows = await rowsOf(page, `${W} table.mr-rows`);
  assert.deepEqual(rows.slice(1).map((r) => r.split(' ')[0]), ['1', '2', '4', '8', '16', '32', '64'], rows.join(' | '));
  assert.match(rows[1], /^1 [\d.]+ [\d.]+ 1\.00 [\d.]+$/, rows[1]);
  const all = await text(page, `${W} .mr-result`);
  const gbs = Number(all.match(/bandwidth ([\d.]+) GB\/s/)[1]);
  assert.ok(gbs > 0, all);
  assert.match(all, /Target ×2: \d+ k parameters/);
  assert.match(all, /verification is (almost free (up to k ≈ \d+|beyond k = 64)|not free)/);
  // The caution shows exactly where the points are noisy, and names what made them so.
  const noisy = await page.evaluate(async () => {
    const { noisyPoints } = await import('./widgets/measured.js');
    const row = (k, median_us, iqr_us) => ({ k, median_us, iqr_us });
    return [noisyPoints([row(2, 467, 10), row(1, 14300, 11625), row(4, 600, 20)]), noisyPoints([row(1, 100, 5), row(2, 90, 5), row(4, 150, 80)])];
  });
  assert.deepEqual(noisy, [{ spread: [1], falls: [[1, 2]] }, { spread: [4], falls: [] }]);
  // A one-token call far above the floor: the trained target's few MB sit in the caches, a widened
  // target's 76 MB do not (its caption must not say they do).
  const floors = await page.evaluate(async () => {
    const { floorSentence } = await import('./widgets/measured.js');
    const v = (width, weight_bytes) => ({ width, weight_bytes, backend: 'flex', memory_floor_us: 100, rows: [{ k: 1, median_us: 400 }] });
    return [floorSentence(v(16, 75.66e6)), floorSentence(v(1, 4.7e6))];
  });
  assert.match(floors[0], /reading 75\.7 MB of weights explains only part of it/);
  assert.doesNotMatch(floors[0], /caches|Widen/);
  assert.match(floors[1], /stay in the CPU’s caches.*Widen the target/);
  // The table's rounded values give the page's verdict, unless one sits within 5% of a threshold.
  const points = (await rowsOf(page, `${W} table.mr-rows`)).slice(1).map((r) => r.split(' ').map(Number));
  const near = (x, t) => Math.abs(x / t - 1) < 0.05;
  const close = points.some(([, m, iqr], i) => near(iqr / m, 0.5) || (i > 0 && near(m / points[i - 1][1], 0.8)));
  const expected = await page.evaluate(async (ps) => {
    const { noisyPoints } = await import('./widgets/measured.js');
    const n = noisyPoints(ps.map(([k, median_us, iqr_us]) => ({ k, median_us, iqr_us })));
    return n.spread.length + n.falls.length > 0;
  }, points);
  if (!close) assert.equal(/^Noisy: /m.test(all), expected, all);
  assert.ok(await page.$(`${W} .mr-plot svg`), 'the figure');
  assert.match(await text(page, `${W} .mr-status`), /Measured on flex/);
  // The peak is a ceiling on its own points: no call's rate (2 flops a weight and token, from the
  // table's medians and the caption's MB, rounded: 5% of room) above the peak the caption gives.
  const peak = Number(all.match(/peak ([\d.]+) GFLOP\/s/)[1]);
  const weights = Number(all.match(/([\d.]+) MB of weights a call/)[1]) * 1e6 / 4;
  for (const [k, median] of points) assert.ok(2 * weights * k / median / 1e3 <= peak * 1.05, `k = ${k}: ${all}`);
  const ceilings = await page.evaluate(async () => {
    const { peakText } = await import('./widgets/measured.js');
    return [peakText({ peak_gflops: 26.5, calibrated_peak_gflops: 5, peak_from_k: 64 }), peakText({ peak_gflops: 30, calibrated_peak_gflops: 30 })];
  });
  assert.match(ceilings[0], /26\.5 GFLOP\/s<\/b> — the rate of its own k = 64 call; the calibration reached only 5\.0 GFLOP\/s/);
  assert.equal(ceilings[1], '<b>30.0 GFLOP/s</b>');
  // The dev server sends COOP/COEP: the page is cross-origin isolated, its clock fine.
  assert.equal(await page.evaluate(() => crossOriginIsolated), true);
  const step = Number(all.match(/clock resolution ([\d.]+) µs/)[1]);
  assert.ok(step > 0 && step < 20, all);
  assert.doesNotMatch(all, /coarse/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('measured roofline: a bad width in the URL is named, the engine rejects bad values, and the widget keeps working', async () => {
  const { page, errors } = await open(env, '?measured.width=25');
  assert.match(await alertOf(page, 'measured'), /target width: “25” is not one of the choices; using “×16 \(19 M parameters, 76 MB a step\)” \(16\)/);
  // The engine's own checks, in the worker: width 0 and 25, k 65.
  const refused = await page.evaluate(async () => {
    const { runJob } = await import('./engine.js');
    const why = (p) => runJob('roofline_measure', p, null, 'measure-test').promise.then(() => 'ran', (e) => e.message);
    return [await why({ width: 25 }), await why({ width: 0 }), await why({ width: 1, ks: [1, 65] })];
  });
  assert.match(refused[0], /target width.*25.*1 ≤ width ≤ 24/, refused[0]);
  assert.match(refused[1], /target width.*0/, refused[1]);
  assert.match(refused[2], /k.*65.*1 ≤ k ≤ 64/, refused[2]);
  await setControl(page, 'measured', 'width', '1');
  await page.click(`${W} .mr-go`);
  await measured(page, 1);
  assert.equal(await page.getAttribute(W, 'data-state'), 'ok');
  const rows = await rowsOf(page, `${W} table.mr-rows`);
  assert.equal(rows.length, 1 + 7, rows.join(' | '));
  assert.deepEqual(errors, []);
  await page.close();
});

test('measured roofline on WebGPU: the captions speak of a GPU — its fixed work, its calibration — not of a CPU', async () => {
  const { page, errors } = await open(env, '?measured.backend=wgpu&measured.width=1');
  await page.click(`${W} .mr-go`);
  await measured(page, 1);
  assert.match(await text(page, `${W} .mr-status`), /Measured on wgpu/);
  const all = await text(page, `${W} .mr-result`);
  assert.match(all, /bandwidth [\d.]+ GB\/s \(one row through the model’s weight-streaming kernel over 64 MB of weights/, all);
  assert.doesNotMatch(all, /CPU’s|summing 64 MB/, all);
  // The first row's last cell is T(1) over the memory floor.
  const over = Number((await rowsOf(page, `${W} table.mr-rows`))[1].split(' ').at(-1));
  if (over > 3) assert.match(all, /on a GPU a call’s fixed work \(its submission, some twenty kernels, the read-back\) outweighs reading 0\.3 MB of weights/, all);
  else assert.match(all, /reading 0\.3 MB of weights is most of what it costs/, all);
  assert.match(all, /the calibrations took [\d.]+ s, once for this page/, all);
  // A second measurement on the page reuses the GPU's calibration (seconds on an emulated GPU).
  await setControl(page, 'measured', 'batch', '4');
  await measured(page, 2);
  assert.match(await text(page, `${W} .mr-result`), /calibrated once on this page, reused/);
  assert.deepEqual(errors, []);
  await page.close();
});
