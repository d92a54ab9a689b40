// Browser tests of a GPU target with a CPU draft (issue 31): on WebGPU the decoding widget runs
// its draft models on the CPU (flex, in the GPU module's worker) beside the target on the GPU, unless
// the drafts control puts them on the GPU too. The report says where they ran; the outputs are the
// same either way (greedy); c is far lower on the CPU, where a draft call costs its arithmetic
// rather than the GPU's fixed cost of a call (SwiftShader here: c ≈ 0.03 against ≈ 0.8). The
// control shows only on WebGPU and for the experiments that run a draft model; both languages,
// 390 px. Small sizes: the trained target, 10 prompts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { setControl, text, decoded, rowsOf } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

const W = '[data-widget="decoding"]';
const shown = (page, sel) => page.$eval(sel, (el) => !el.closest('[hidden]') && getComputedStyle(el.closest('label') ?? el).display !== 'none');
const QUERY = 'decoding.experiment=speedup&decoding.backend=wgpu&decoding.prompts=10&decoding.gamma=3&decoding.draft=b';
/** The measured row `name` of the speedup table (its second cell). */
const row = async (page, name) => (await rowsOf(page, `${W} table.dec-speedup`)).find((r) => r.startsWith(name))?.slice(name.length).trim();

test('on WebGPU the drafts run on the CPU by default: same outputs, c far below the drafts on the GPU, and the report says so', async () => {
  const { page, errors } = await open(env, `?${QUERY}`);
  assert.ok(await shown(page, `${W} [data-key="drafts"]`), 'the drafts control shows on WebGPU');
  await decoded(page, 1);
  assert.match(await text(page, `${W} .dec-result`), /Measured here on wgpu/);
  assert.match(await text(page, `${W} .dec-status`), /^Done on wgpu, the drafts on flex, in /);
  assert.match(await text(page, `${W} .drafts-note`), /^Drafts on the CPU: the draft ran on flex in this worker while the target ran on WebGPU, so c = [\d.]+ is a draft’s CPU time over the target’s GPU step\./);
  // How the drafts' matmuls ran: the WebGPU module's flex, one thread, its own kernel.
  assert.match(await text(page, `${W} .dec-during`), /The draft models’ matmuls ran on the CPU beside the GPU target, on 1 thread \(the WebGPU module’s\); FMA (on|off) \(kernel: .+\)\.$/);
  const tau = await row(page, 'τ (tokens per target call)');
  const cOnCpu = Number(await row(page, 'c (draft call / target call)'));
  await setControl(page, 'decoding', 'drafts', 'gpu');
  await decoded(page, 2);
  assert.equal(await page.$(`${W} .drafts-note`), null, 'no note with the drafts on the GPU');
  assert.match(await text(page, `${W} .dec-status`), /^Done on wgpu in /);
  assert.doesNotMatch(await text(page, `${W} .dec-during`), /matmuls ran/, 'nothing ran on the CPU');
  assert.equal(await row(page, 'τ (tokens per target call)'), tau, 'greedy: the same tokens per call wherever the drafts run');
  const cOnGpu = Number(await row(page, 'c (draft call / target call)'));
  // A draft call on SwiftShader pays its fixed cost like the target's (≈ 0.8 measured); on the
  // CPU it costs its arithmetic (≈ 0.03). A draft left on the GPU would fail this by far.
  assert.ok(cOnCpu < 0.5 * cOnGpu, `c on the CPU ${cOnCpu}, on the GPU ${cOnGpu}`);
  // For the drafts on the target's hidden states too (tests/hidden.test.mjs runs them), not for a
  // drafter without a model, nor on a CPU backend.
  for (const experiment of ['hidden', 'methods']) {
    await setControl(page, 'decoding', 'experiment', experiment);
    assert.ok(await shown(page, `${W} [data-key="drafts"]`), `the drafts control for ${experiment}`);
  }
  await setControl(page, 'decoding', 'experiment', 'speedup');
  await setControl(page, 'decoding', 'shape', 'prompt-lookup');
  assert.ok(!(await shown(page, `${W} [data-key="drafts"]`)), 'no drafts control for a drafter without a model');
  await setControl(page, 'decoding', 'shape', 'chain');
  await setControl(page, 'decoding', 'experiment', 'speedup');
  await setControl(page, 'decoding', 'backend', 'flex');
  assert.ok(!(await shown(page, `${W} [data-key="drafts"]`)), 'no drafts control on the CPU');
  assert.deepEqual(errors, []);
  await page.close();
});

test('the drafts on the CPU in Chinese at 390 px: the note and the control in Chinese, nothing wider than the phone', async () => {
  const { page, errors } = await open(env, `?lang=zh&${QUERY}`, { width: 390, height: 844 });
  await decoded(page, 1);
  assert.match(await text(page, `${W} .drafts-note`), /^草稿在 CPU 上：草稿在这个 worker 里的 flex 上运行，目标模型在 WebGPU 上运行，所以 c = [\d.]+ 是草稿的 CPU 时间/);
  assert.match(await text(page, `${W} [data-key="drafts"]`), /在 CPU 上，GPU 上的目标模型旁边/);
  const wide = await page.evaluate(() => document.scrollingElement.scrollWidth);
  assert.ok(wide <= 390, `the page is ${wide} px wide`);
  assert.deepEqual(errors, []);
  await page.close();
});
