// Browser tests of the LikesWorld widget: the trained models in a worker on both CPU backends
// and on WebGPU, and the CPU fallback (with its note) without an adapter or without a device.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { setControl, text, alertOf, rowsOf } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

test('LikesWorld runs the trained models in a worker, on both CPU backends', async () => {
  const { page, errors } = await open(env, '');
  await page.waitForSelector('[data-widget="likesworld"][data-model]', { timeout: 60_000 });
  assert.ok(await page.$('[data-widget="likesworld"] .lw-plot svg'));
  const kinds = await rowsOf(page, '[data-widget="likesworld"] table.kinds');
  assert.ok(kinds.some((r) => r.startsWith('answer ')), kinds.join(' | '));
  // The trained models' matrices are never split across threads: the timed line says 1 thread
  // (and, with a pool, why), not the widened target's policy.
  await page.waitForSelector('[data-widget="likesworld"][data-latency]', { timeout: 120_000 });
  const how = await text(page, '[data-widget="likesworld"] .lw-during');
  assert.match(how, /The matmuls ran on 1 thread/, how);
  assert.doesNotMatch(how, /ran on \d+ threads/, how);
  // A typed world: the target answers it; the status shows the parsed sequence.
  await page.fill('[data-widget="likesworld"] [data-key="text"]', 'dan likes jam . fay likes nuts . eve likes tea . q fay nuts . q dan jam . q eve tea . <eos>');
  await page.waitForFunction(() => document.querySelector('[data-widget="likesworld"] .lw-status')?.textContent.includes('<bos> dan likes jam'));
  await page.fill('[data-widget="likesworld"] [data-key="text"]', 'dan loves jam');
  await page.waitForSelector('[data-widget="likesworld"][data-state="error"]', { timeout: 30_000 });
  assert.match(await alertOf(page, 'likesworld'), /unknown LikesWorld word "loves"/);
  await page.fill('[data-widget="likesworld"] [data-key="text"]', '');
  const timed = Number(await page.getAttribute('[data-widget="likesworld"]', 'data-latency'));
  await setControl(page, 'likesworld', 'backend', 'ndarray');
  await page.waitForFunction(() => document.querySelector('[data-widget="likesworld"] .lw-status b')?.textContent === 'ndarray', null, { timeout: 60_000 });
  await page.waitForFunction((n) => Number(document.querySelector('[data-widget="likesworld"]').dataset.latency) > n, timed, { timeout: 120_000 });
  const latency = await text(page, '[data-widget="likesworld"] .lw-latency');
  assert.match(latency, /c = draft\/target for one token: A \d\.\d\d, B \d\.\d\d/);
  assert.match(latency, /\(IQR \d+ µs\)/, 'every time with its spread');
  // The table flags what the review saw in Firefox, a chain of 5 cheaper than one token, and a
  // spread over half the median; a steady table gets no note.
  const noise = await page.evaluate(async () => {
    const { latencyNoise } = await import('./widgets/likesworld.js');
    const t = (median_us, iqr_us = 1) => ({ median_us, iqr_us });
    const steady = { decode1: t(100), chain5: t(120), tree31: t(300) };
    return [latencyNoise({ target: { decode1: t(100), chain5: t(70), tree31: t(300) }, draft_a: steady, draft_b: { ...steady, tree31: t(300, 200) } }),
      latencyNoise({ target: steady, draft_a: steady, draft_b: steady })];
  });
  assert.deepEqual(noise[0].map(([en]) => en), ['target: a chain of 5 was timed cheaper than one token, though more tokens cannot cost less',
    'draft B: a tree of 31 varied by more than half the median (IQR)']);
  assert.deepEqual(noise[1], []);
  assert.deepEqual(errors, []);
  await page.close();
});

test('LikesWorld on WebGPU: the models run on the GPU and are timed there', async () => {
  const requests = [];
  const { page, errors } = await open(env, '?likesworld.backend=wgpu', { requests });
  await page.waitForFunction(() => document.querySelector('[data-widget="likesworld"] .lw-status b')?.textContent === 'wgpu', null, { timeout: 120_000 });
  // The worker's download of the GPU module is seen (the next test relies on it).
  assert.ok(requests.includes('/pkg/gpu/specdec_bg.wasm'), requests.join(' '));
  assert.ok(await page.$eval('[data-widget="likesworld"] .lw-note', (n) => n.hidden), 'no fallback note with an adapter');
  const kinds = await rowsOf(page, '[data-widget="likesworld"] table.kinds');
  assert.ok(kinds.some((r) => r.startsWith('answer ')), kinds.join(' | '));
  await page.waitForSelector('[data-widget="likesworld"][data-latency]', { timeout: 240_000 });
  assert.match(await text(page, '[data-widget="likesworld"] .lw-latency'), /on wgpu in this browser/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('LikesWorld without a WebGPU adapter falls back to the CPU with a visible note, without downloading the GPU module', async () => {
  const noGpu = await start({ webgpu: false });
  try {
    const requests = [];
    const { page, errors } = await open(noGpu, '?likesworld.backend=wgpu', { requests });
    await page.waitForFunction(() => document.querySelector('[data-widget="likesworld"] .lw-status b')?.textContent === 'flex', null, { timeout: 120_000 });
    const note = await page.$eval('[data-widget="likesworld"] .lw-note', (n) => (n.hidden ? '' : n.textContent));
    assert.match(note, /No WebGPU here, so the models run on the CPU \(flex\) instead\. Details: the browser offers no WebGPU adapter/);
    assert.ok(await page.$eval('[data-widget="likesworld"] .lw-note', (n) => n.getBoundingClientRect().height > 0), 'the note is visible');
    assert.deepEqual(requests.filter((p) => p.includes('/pkg/gpu/')), [], 'the GPU module is not downloaded');
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await noGpu.close();
  }
});

test('a WebGPU adapter that gives no device: the GPU module says why and the job runs on the CPU', async () => {
  const refuse = 'GPUAdapter.prototype.requestDevice = function () { return Promise.reject(new TypeError(\'no device for this test\')); };';
  const { page, errors } = await open(env, '?likesworld.backend=wgpu', { workerPrelude: refuse });
  await page.waitForFunction(() => document.querySelector('[data-widget="likesworld"] .lw-status b')?.textContent === 'flex', null, { timeout: 120_000 });
  const note = await page.$eval('[data-widget="likesworld"] .lw-note', (n) => (n.hidden ? '' : n.textContent));
  assert.match(note, /No WebGPU here, so the models run on the CPU \(flex\) instead\. Details: WebGPU\/wgpu device unavailable: .+/);
  const kinds = await rowsOf(page, '[data-widget="likesworld"] table.kinds');
  assert.ok(kinds.some((r) => r.startsWith('answer ')), kinds.join(' | '));
  assert.deepEqual(errors, []);
  await page.close();
});
