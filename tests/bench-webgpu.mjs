// A GPU target with a CPU draft in the page (issue 31), measured in headless Chromium on WebGPU:
// the speedup of draft B's chain on the target widened ×W, with the drafts on the CPU (flex, in
// the worker) and on the GPU beside the target, one after the other on the same page; and the
// measured roofline of ×W on WebGPU (T(k)/T(1): what a verify call costs there), then the sweep
// over γ with the drafts on the CPU (the best γ on the wall clock); with --table, the §6 table at
// 8 nodes with every draft model (A, B, Medusa's heads, EAGLE) on the CPU, then on the GPU. Each
// speedup prints c, T(n)/T(1), τ, the measured speedup and the prediction on the measured curve.
//   node tests/bench-webgpu.mjs [--width 16] [--gamma 4] [--gammas 1,2,3,4] [--prompts 10] [--table]
// (CHROMIUM_ARGS adds Chromium flags: scripts/gpu-bench.sh asks for a hardware adapter)
// (after `bash scripts/build-wasm.sh cpu1 && bash scripts/build-wasm.sh gpu`). Here WebGPU is
// SwiftShader, a CPU emulation of a GPU: its step times say nothing about a real GPU's, which
// scripts/gpu-bench.sh measures where one is at hand. Run nothing else meanwhile.
import { start } from './browser.mjs';

const arg = (name, d) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : d; };
const width = arg('--width', '16');
const gamma = arg('--gamma', '4');
const gammas = arg('--gammas', '1,2,3,4');
const prompts = arg('--prompts', '10');
const withTable = process.argv.includes('--table');

const env = await start();
const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 }, serviceWorkers: 'block' });
const page = async (query) => {
  const p = await context.newPage();
  await p.goto(`${env.url}?${query}`);
  await p.waitForSelector('html[data-ready="true"]', { timeout: 60_000 });
  return p;
};
const decoded = (p, w, n) => p.waitForFunction(([sel, k]) => Number(document.querySelector(sel)?.dataset.decoded || 0) >= k,
  [`[data-widget="${w}"]`, n], { timeout: 3_600_000 });
const secs = (t0) => `${((Date.now() - t0) / 1000).toFixed(0)} s`;
try {
  console.log(`adapter: ${await (await page('')).evaluate(async () => {
    const a = await navigator.gpu?.requestAdapter();
    return a ? JSON.stringify(a.info ?? {}) : 'none';
  })}`);
  for (const drafts of ['cpu', 'gpu']) {
    const p = await page(`decoding.experiment=speedup&decoding.backend=wgpu&decoding.drafts=${drafts}&decoding.target_width=${width}`
      + `&decoding.draft=b&decoding.gamma=${gamma}&decoding.prompts=${prompts}&decoding.shape=chain`);
    const t0 = Date.now();
    await decoded(p, 'decoding', 1);
    const text = await p.$eval('[data-widget="decoding"] .dec-result', (e) => e.innerText);
    console.log(`\n=== ×${width}, draft B γ ${gamma}, ${prompts} prompts, drafts on the ${drafts} (${secs(t0)}) ===`);
    console.log(text.split('\n').filter((l) => /Measured here|^c |^T\(n\)|^τ|formula|curve|wall clock|Drafts on/.test(l)).join('\n'));
    await p.close();
  }
  const p = await page(`measured.width=${width}&measured.backend=wgpu`);
  const t0 = Date.now();
  await p.click('[data-widget="measured"] .mr-go');
  await decoded(p, 'measured', 1);
  const rows = await p.$$eval('[data-widget="measured"] table.mr-rows tr', (rs) => rs.map((r) => r.innerText.replace(/\s+/g, ' ').trim()));
  console.log(`\n=== measured roofline ×${width} on WebGPU (${secs(t0)}) ===\n  ${rows.join('\n  ')}`);
  await p.close();
  const s = await page(`decoding.experiment=sweep&decoding.backend=wgpu&decoding.drafts=cpu&decoding.target_width=${width}`
    + `&decoding.draft=b&decoding.gammas=${gammas}&decoding.prompts=${prompts}&decoding.shape=chain`);
  const t1 = Date.now();
  await decoded(s, 'decoding', 1);
  const sweep = await s.$$eval('[data-widget="decoding"] table.dec-sweep tr', (rs) => rs.map((r) => r.innerText.replace(/\s+/g, ' ').trim()));
  const best = await s.$eval('[data-widget="decoding"] .dec-result', (e) => e.innerText.split('\n').find((l) => /best measured γ/.test(l)));
  console.log(`\n=== sweep over γ ${gammas}, ×${width}, drafts on the CPU (${secs(t1)}) ===\n  ${sweep.join('\n  ')}\n${best}`);
  for (const drafts of withTable ? ['cpu', 'gpu'] : []) {
    const t = await page(`decoding.experiment=methods&decoding.backend=wgpu&decoding.drafts=${drafts}&decoding.target_width=${width}`
      + `&decoding.budget=8&decoding.prompts=${prompts}`);
    const t2 = Date.now();
    await decoded(t, 'decoding', 1);
    const rows = await t.$$eval('[data-widget="decoding"] table.dec-methods tr', (rs) => rs.map((r) => r.innerText.replace(/\s+/g, ' ').trim()));
    console.log(`\n=== the §6 table, ×${width}, 8 nodes, draft models on the ${drafts} (${secs(t2)}) ===\n  ${rows.join('\n  ')}`);
    await t.close();
  }
} finally {
  await env.close();
}
