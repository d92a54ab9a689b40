// Browser tests of "how to speculate on this device, measured" (lecture §4.7; issue 54, items 1,
// 3 and 4): nothing runs until Measure; a run on the trained target measures T(k), c and every
// draft's acceptance vector, chooses, and sets the chosen chain and tree beside EAGLE-2 at 8
// nodes, each speedup with its prediction and this device's limit, in English and in Chinese at
// 390 px; both plans (the CPU module, a WebGPU target on SwiftShader with its drafts on the CPU)
// are measured and the faster named; bad values are refused by name and the widget still runs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { alertOf, text, tooWide } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

const W = '[data-widget="choosehere"]';
const measured = (page, n) => page.waitForFunction((k) => Number(document.querySelector('[data-widget="choosehere"]')?.dataset.decoded || 0) >= k, n, { timeout: 240_000 });
/** The decoded rows after the header: [decoded, τ, predicted before, on this run's curve, measured, IQR, limit, time a token]. */
const rows = (page) => page.$$eval(`${W} table.ch-rows tr`, (trs) => trs.slice(1).map((r) => [...r.cells].map((c) => c.textContent.trim())));
const times = (cell) => Number(cell.replace('×', ''));

test('choosehere on the CPU: bad values refused by name, then the choice measured — three rows, each with its prediction and the limit, every draft’s vector', async () => {
  const { page, errors } = await open(env, 'embed.html?widget=choosehere&width=1&prompts=5&nodes=31&plan=cpu');
  // Nothing runs (it times this device) until Measure.
  assert.equal(await page.$(`${W} table.ch-rows`), null);
  assert.match(await text(page, `${W} .ch-status`), /Press Measure to start\. A run times the ×1 target/);
  // The engine's own checks, in the worker, before any model loads.
  const refused = await page.evaluate(async () => {
    const { runJob } = await import('./engine.js');
    const why = (p) => runJob('likesworld_choose', p, null, 'ch-test').promise.then(() => 'ran', (e) => e.message);
    return [await why({ max_nodes: 0 }), await why({ max_nodes: 32 }), await why({ prompts: 0 }), await why({ target_width: 0 }), await why({ prompts: 5, max_nodes: 'x' })];
  });
  assert.match(refused[0], /max-nodes = 0 is out of range: 1 ≤ max-nodes ≤ 31/, refused[0]);
  assert.match(refused[1], /max-nodes = 32 is out of range/, refused[1]);
  assert.match(refused[2], /prompts = 0 is out of range/, refused[2]);
  assert.match(refused[3], /width/, refused[3]);
  // A value of the wrong type names its parameter.
  assert.match(refused[4], /^bad parameters: max_nodes: invalid type: string "x", expected usize/, refused[4]);
  // A value the page does not offer is named, and the widget runs with its default.
  const { page: bad } = await open(env, 'embed.html?widget=choosehere&nodes=99&width=1&prompts=5');
  assert.match(await alertOf(bad, 'choosehere'), /“99” is not one of the choices; using 16/);
  await bad.close();
  await page.click(`${W} .ch-go`);
  await measured(page, 1);
  const r = await rows(page);
  assert.equal(r.length, 3, r.join('\n'));
  assert.match(r[0][0], /chain/);
  assert.match(r[1][0], /tree/);
  assert.match(r[2][0], /EAGLE-2, a fixed 8 nodes/);
  for (const x of r) {
    assert.ok(Number(x[1]) >= 1, x.join(' '));
    // The limit prices the same τ and drafting at the device's bandwidth and peak: never under
    // what was measured (what this device did, it can do).
    assert.ok(times(x[6]) >= times(x[4]), `limit under measured: ${x.join(' ')}`);
  }
  const all = await text(page, `${W} .ch-result`);
  assert.match(all, /Measured on flex, the ×1 target\. Bare calls: T\(1\) = \d+ µs, T\(2\)\/T\(1\) = \d\.\d\d/);
  assert.match(all, /Decoding pays more \(calibrated on a few training prompts.*\), so the choice reads T\(1\) = \d+ µs \(the target alone’s call in decoding\)/);
  // The calibration's three points (31 nodes: every chain's calls within the curve), each at the
  // tokens its calls carried, decoding's cost against the bare one.
  assert.match(all, /by draft B’s chains of γ 1, 3 and 7: their calls, of [\d.]+, [\d.]+ and [\d.]+ tokens on average, cost [\d.]+, [\d.]+ and [\d.]+ one-token calls \(bare: [\d.]+, [\d.]+ and [\d.]+\); draft B’s c [\d.]+× its bare one/);
  assert.match(all, /The choice: /);
  assert.match(all, /predicted before it ran/);
  assert.match(all, /EAGLE-2 (at a fixed )?(at )?8 nodes/);
  assert.match(all, /Where the time goes, for the better choice .*: measured [\d.]+×; at this run’s own calls .*; at the bare calls \([\d.]+\) [\d.]+×.*; at this device’s limit [\d.]+×/);
  assert.match(all, /The limit prices each call at max\(weights \/ bandwidth, k · FLOPs \/ peak\), the bandwidth \([\d.]+ GB\/s\) and peak \([\d.]+ GFLOP\/s\) measured here/);
  assert.match(all, /The rest is the draft’s/);
  // Item 1: every draft's vector (the shipped pools' as one proposer each), and what the chosen
  // tree's decoding met a depth.
  const vectors = await page.$$eval(`${W} table.ch-vectors tr`, (trs) => trs.slice(1).map((tr) => [...tr.cells].map((c) => c.textContent.trim())));
  const names = vectors.map((v) => `${v[0]} · ${v[1]}`);
  for (const want of [/^draft A · greedy/, /^draft A · MSS/, /^draft B · greedy/, /^draft B · MSS/, /^the boost-tuned pool of 4, one proposer .* · greedy/, /^the control pool of 4 .* · greedy/,
    /^Medusa, head 1/, /^EAGLE \(one step ahead/, /^draft B, met at depth 1/]) {
    assert.ok(names.some((n) => want.test(n)), `${want}: ${names.join(' | ')}`);
  }
  // A pool's children are its members' distinct guesses: four members, four children at most.
  for (const v of vectors.filter((r) => /pool of 4/.test(r[0]))) assert.ok(v.slice(6).every((c) => Number(c) === 0), v.join(' '));
  for (const v of vectors) {
    const p = v.slice(2).filter((c) => c !== '—').map(Number);
    assert.ok(p.every((x) => x >= 0 && x <= 1) && p.reduce((a, b) => a + b, 0) <= 1.0015, v.join(' '));
  }
  assert.equal(await page.$$eval(`${W} .ch-plot svg`, (s) => s.length), 4);
  assert.match(await page.$eval(`${W} .ch-plot`, (p) => p.textContent), /T\(k\)\/T\(1\) on this device/);
  assert.match(await text(page, `${W} .ch-status`), /Measured on flex/);
  assert.match(await text(page, `${W} .ch-during`), /No other job of this page ran during this measurement|ran during this measurement/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('choosehere in Chinese at 390 px, both plans: the CPU module and a WebGPU target measured, the faster named, nothing wider than the phone', async () => {
  const { page, errors } = await open(env, 'embed.html?widget=choosehere&lang=zh&width=1&prompts=5&nodes=8&plan=both', { width: 390, height: 844 });
  await page.click(`${W} .ch-go`);
  await measured(page, 2);
  const plan = await text(page, `${W} .ch-plan`);
  assert.match(plan, /两种方案都测了：/);
  assert.match(plan, /CPU 模块（flex）/);
  assert.match(plan, /WebGPU，草稿在 CPU 上（wgpu）/);
  assert.match(plan, /原因：目标模型一次单 token 调用在/);
  assert.equal(await page.$$eval(`${W} table.ch-rows`, (t) => t.length), 2);
  const all = await text(page, `${W} .ch-result`);
  assert.match(all, /选择：/);
  assert.match(all, /这台设备的极限/);
  assert.doesNotMatch(all, /predicted before|The choice|limit, from/);
  assert.deepEqual(await tooWide(page, 'choosehere', '.ch-plot svg'), []);
  assert.deepEqual(errors, []);
  await page.close();
});

test('choosehere names the faster plan by its time a token, and calls two within 5% about as fast', async () => {
  const { page } = await open(env, 'embed.html?widget=choosehere&width=1');
  const said = await page.evaluate(async () => {
    const { planHtml } = await import('./widgets/choosehere.js');
    const plan = (backend, gpu, t1, chainUs, treeUs) => ({
      backend, drafts_on: gpu ? 'flex' : undefined, times_us: [t1], bare_times_us: [t1],
      chosen: { chain: { gamma: 3, us_per_token: chainUs, measured_speedup: 1.4 }, tree: { dp: { nodes: 3 }, us_per_token: treeUs, measured_speedup: 1.5 } },
    });
    return [planHtml([plan('flex', false, 5800, 4100, 3900), plan('wgpu', true, 9000, 8000, 7000)]),
      planHtml([plan('flex', false, 5800, 4100, 3900), plan('wgpu', true, 2000, 1500, 1400)]),
      planHtml([plan('flex', false, 5800, 4100, 3900), plan('wgpu', true, 5800, 4000, 3950)]),
      planHtml([plan('flex', false, 5800, 4100, 3900)]),
      // A plan whose choice is plain decoding is timed at the target alone's time a token.
      planHtml([plan('flex', false, 5800, 4100, 3900), { ...plan('wgpu', true, 900, 800, 700), chosen: { chain: { gamma: 0, plain_us_per_token: 1000 }, tree: { dp: { nodes: 0 } } } }])];
  });
  assert.match(said[0], /the CPU module \(flex\) is faster here<\/b>, 3\.90 ms a token against 7\.00 ms/);
  assert.match(said[1], /WebGPU with the drafts on the CPU \(wgpu\) is faster here<\/b>, 1\.40 ms a token against 3\.90 ms/);
  assert.match(said[2], /are about as fast here/);
  assert.equal(said[3], '', 'one plan: nothing to compare');
  assert.match(said[4], /WebGPU with the drafts on the CPU \(wgpu\) is faster here<\/b>, 1\.00 ms a token against 3\.90 ms/);
  assert.match(said[4], /the choice there gives plain decoding \(nothing chosen\) against 1\.50×/);
  // Against EAGLE-2 at 8 nodes: faster, slower or about as fast only beyond the spread of its time
  // over the better's, prompt by prompt (not of the two speedups apart); where the
  // choice is plain decoding, whether the rows timed agree.
  const versus = await page.evaluate(async () => {
    const { versusSentence } = await import('./widgets/choosehere.js');
    const t = (m, iqr) => ({ measured_speedup: m, measured_speedup_iqr: iqr });
    // EAGLE-2's time over the better's, prompt by prompt: the ratio of the speedups, its IQR given.
    const v = (gamma, nodes, c, tr, e, iqr = 0.1) => ({ chosen: { chain: { gamma, timed_gamma: Math.max(1, gamma), ...c }, tree: { dp: { nodes }, nodes: Math.max(1, nodes), depth: 1, labels: ['1'], ...tr } }, fixed_eagle2_8: e,
      versus_eagle2: { ratio: Math.max(c.measured_speedup, tr.measured_speedup) / e.measured_speedup, iqr } });
    return [versusSentence(v(3, 3, t(1.5, 0.1), t(1.4, 0.1), t(1.2, 0.1))), versusSentence(v(3, 3, t(1.2, 0.1), t(1.1, 0.1), t(1.5, 0.1))),
      versusSentence(v(3, 3, t(1.3, 0.3), t(1.2, 0.1), t(1.25, 0.3), 0.3)), versusSentence(v(0, 0, t(0.8, 0.05), t(0.7, 0.05), t(0.5, 0.05))),
      versusSentence(v(0, 0, t(0.95, 0.2), t(0.7, 0.05), t(0.5, 0.05))), versusSentence(v(3, 3, t(0.8, 0.05), t(0.7, 0.05), t(0.6, 0.05))),
      // Each speedup spread widely, but prompt by prompt the choice was faster every time.
      versusSentence(v(3, 3, t(1.4, 0.5), t(1.3, 0.5), t(1.25, 0.5), 0.04))];
  });
  assert.match(versus[0], /The better choice is faster than EAGLE-2 at a fixed 8 nodes \(1\.50× against 1\.20×/);
  assert.match(versus[1], /EAGLE-2 at a fixed 8 nodes is faster here \(1\.50× against 1\.20×/);
  assert.match(versus[2], /cannot be told apart in this run/);
  assert.match(versus[3], /The choice is plain decoding, and the runs agree: .* all slower than the target alone \(0\.80×, 0\.70×, 0\.50×\)/);
  assert.match(versus[4], /not all of them beyond their spread from 1/);
  assert.match(versus[5], /both the better choice \(0\.80×\) and EAGLE-2 at a fixed 8 nodes \(0\.60×\) are slower than the target alone/);
  assert.match(versus[6], /The better choice is faster than EAGLE-2 at a fixed 8 nodes \(1\.40× against 1\.25×; EAGLE-2’s time 1\.12× the better’s, IQR 0\.04 prompt by prompt\)/);
  await page.close();
});
