// Browser tests of offloading measured (issue 34, part 2; lecture §4.6): on WebGPU the target's
// weights can stay in host memory and cross to the GPU before every target call. The decoding
// widget's speedup and the measured roofline report the crossing (its bytes, time and bandwidth)
// beside what they measured; the control shows only on WebGPU; both languages, 390 px; a WebGPU
// job that falls back to the CPU is refused with the core's one line and the page keeps working.
// Small sizes: the trained target (0.34 MB of weights), 10 prompts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { setControl, text, alertOf, decoded } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

const W = '[data-widget="decoding"]';
const M = '[data-widget="measured"]';
const shown = (page, sel) => page.$eval(sel, (el) => !el.closest('[hidden]') && getComputedStyle(el.closest('label') ?? el).display !== 'none');

test('the speedup with the weights offloaded on WebGPU: the crossing reported beside the wall clock; the control only on WebGPU', async () => {
  const { page, errors } = await open(env, '?decoding.experiment=speedup&decoding.backend=wgpu&decoding.weights=host&decoding.prompts=10&decoding.gamma=2&decoding.draft=b');
  await decoded(page, 1);
  const note = await text(page, `${W} .offload-note`);
  assert.match(note, /^Offloaded: the target’s 0\.3 MB of weights crossed from host memory to the GPU before every target call: [\d.]+ ms a crossing \([\d.]+ GB\/s\), \d+% of a one-token target call\. Every call saved is a crossing saved/, note);
  assert.match(await text(page, `${W} .dec-result`), /Measured here on wgpu/);
  assert.ok(await shown(page, `${W} [data-key="weights"]`), 'the weights control shows on WebGPU');
  // The preset at the lecture's kind of size is offered (not run here: ×16 on SwiftShader).
  assert.ok(await page.$$eval(`${W} [data-preset]`, (bs) => bs.some((b) => /offloading: the ×16 target/.test(b.textContent))));
  // On a CPU backend there is nothing to offload: the control goes, the run has no crossing.
  const done = Number(await page.getAttribute(W, 'data-decoded'));
  await setControl(page, 'decoding', 'backend', 'flex');
  await decoded(page, done + 1);
  assert.equal(await shown(page, `${W} [data-key="weights"]`), false, 'no weights control on flex');
  assert.equal(await page.$(`${W} .offload-note`), null, 'no crossing on flex');
  assert.deepEqual(errors, []);
  await page.close();
});

test('the measured roofline offloaded, in Chinese at 390 px: the crossing drawn as a floor of its own and reported', async () => {
  const { page, errors } = await open(env, '?lang=zh&measured.backend=wgpu&measured.weights=host&measured.width=1', { width: 390, height: 844 });
  await page.click(`${M} .mr-go`);
  await page.waitForSelector(`${M} .mr-plot svg`, { timeout: 300_000 });
  const svg = await page.$eval(`${M} .mr-plot`, (el) => el.innerHTML);
  assert.match(svg, /权重卸载：每次调用前传输 0\.3 MB/);
  assert.match(svg, /权重传输：[\d.]+ (µs|ms)（[\d.]+ GB\/s）/);
  assert.doesNotMatch(svg, /weights cross/, 'no English left in the figure');
  assert.match(await text(page, `${M} .offload-note`), /^权重卸载：每次目标调用前，目标模型的 0\.3 MB 权重从主机内存传到 GPU：每次传输 [\d.]+ ms（[\d.]+ GB\/s），占一次单 token 目标调用的 \d+%/);
  const wide = await page.evaluate(() => document.scrollingElement.scrollWidth);
  assert.ok(wide <= 390, `the page is ${wide} px wide`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('offloading where WebGPU gives no device: the core’s one line, and the widget keeps working', async () => {
  const refuse = 'GPUAdapter.prototype.requestDevice = function () { return Promise.reject(new TypeError(\'no device for this test\')); };';
  const { page, errors } = await open(env, '?decoding.experiment=speedup&decoding.backend=wgpu&decoding.weights=host&decoding.prompts=10&decoding.gamma=2', { workerPrelude: refuse });
  await page.waitForFunction(() => /offloading/.test(document.querySelector('[data-widget="decoding"] [role="alert"]')?.textContent ?? ''), null, { timeout: 120_000 });
  assert.match(await alertOf(page, 'decoding'), /offloading unavailable: on the CPU backends \(flex, ndarray\) the weights already live in host memory: offloading needs a GPU/);
  // The weights back on the GPU: the same job runs (on the CPU, said so).
  await setControl(page, 'decoding', 'weights', 'gpu');
  await decoded(page, 1);
  assert.match(await text(page, `${W} .dec-result`), /Measured here on flex/);
  assert.deepEqual(errors, []);
  await page.close();
});
