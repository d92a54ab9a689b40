// Browser tests of the drafts on the target's hidden states (lecture §5.1, §5.2, §4.7) and the
// §6 table in the decoding widget: greedy outputs identical to the target's, the two trees drawn,
// MSS on the sampled dynamic tree calibrated, the choices that cannot run greyed and refused with
// the core's message, the drafts' weights downloaded only when asked for, and WebGPU.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open, rewritePresets } from './browser.mjs';
import { setControl, rowsOf, decoded } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

const widget = '[data-widget="decoding"]';
const hiddenFiles = (requests) => requests.filter((p) => p.includes('/weights/hidden/'));

test('hidden-state drafts: EAGLE-2 and Medusa are lossless, their trees drawn; the weights come only when asked for', async () => {
  const requests = [];
  const { page, errors } = await open(env, '?decoding.experiment=acceptance&decoding.prompts=10', { requests });
  await decoded(page, 1);
  assert.deepEqual(hiddenFiles(requests), [], 'no other experiment downloads the drafts on the hidden states');
  await setControl(page, 'decoding', 'experiment', 'hidden');
  await decoded(page, 2);
  assert.deepEqual(hiddenFiles(requests).sort(), ['/pkg/weights/hidden/eagle-ttt.bpk', '/pkg/weights/hidden/eagle.bpk', '/pkg/weights/hidden/medusa.bpk']);
  let rows = await rowsOf(page, `${widget} table.dec-hidden`);
  assert.ok(rows.includes('identical to the target’s greedy output 10/10'), rows.join(' | '));
  const tau = Number(rows.find((r) => r.startsWith('τ')).split(' ').pop());
  assert.ok(tau > 1.5, `EAGLE-2 decides more than one token a call: ${tau}`);
  const svg = await page.$eval(`${widget} .dec-plot`, (el) => el.innerHTML);
  assert.match(svg, /Two trees for the same context, static beside dynamic/);
  assert.match(svg, /EAGLE-2/);
  assert.match(svg, /depth 1/);

  // Medusa: its heads' accuracy, and the verifications it cannot run greyed out.
  await setControl(page, 'decoding', 'method', 'medusa');
  await decoded(page, 3);
  rows = await rowsOf(page, `${widget} table.dec-hidden`);
  assert.ok(rows.includes('identical to the target’s greedy output 10/10'), rows.join(' | '));
  assert.ok(rows.some((r) => /^head accuracy, top-1 0\.\d\d( · 0\.\d\d){3}$/.test(r)), rows.join(' | '));
  assert.match(await page.$eval(`${widget} .dec-plot`, (el) => el.innerHTML), /head 1/);
  const off = await page.$$eval(`${widget} [data-key="verify"] option`, (os) => os.filter((o) => o.disabled).map((o) => o.value).join(','));
  assert.equal(off, 'mss,mss-top-k');
  // Asked for anyway (a URL may), the core's message, and the widget keeps working.
  await setControl(page, 'decoding', 'verify', 'mss');
  await page.waitForFunction((w) => /sampled verification runs on EAGLE-2/.test(document.querySelector(`${w} [role="alert"]`).textContent), widget, { timeout: 30_000 });
  await setControl(page, 'decoding', 'method', 'eagle-2');
  await page.waitForFunction((w) => /children sampled, MSS/.test(document.querySelector(`${w} .dec-result`)?.textContent ?? ''), widget, { timeout: 120_000 });
  rows = await rowsOf(page, `${widget} table.dec-hidden`);
  const p = Number(rows.find((r) => r.startsWith('calibration test')).split('p = ')[1]);
  assert.ok(p > 0.001, `MSS on sampled children is exact: p = ${p}`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the §6 table: every method on one wall-clock axis, in Chinese too, and on WebGPU it says where the drafts ran', async () => {
  const { page, errors } = await open(env, '?lang=zh&decoding.experiment=methods&decoding.prompts=2&decoding.budget=8');
  await decoded(page, 1);
  const rows = await rowsOf(page, `${widget} table.dec-methods`);
  assert.equal(rows.length, 1 + 8, rows.join(' | '));
  assert.ok(rows.some((r) => r.startsWith('EAGLE-2 + 训练时测试')), rows.join(' | '));
  assert.ok(rows.some((r) => r.startsWith('草稿 A 链 γ 4')), `every method's name in Chinese: ${rows.join(' | ')}`);
  // The lecture's formula, the measured curve, the wall clock and its spread prompt by prompt.
  for (const r of rows.slice(1)) {
    assert.match(r, /[\d.]+× [\d.]+× [\d.]+× [\d.]+ [\d.]+×$/, r);
    // This device's limit: the same τ and drafting at the bandwidth and peak measured here, never
    // under the wall clock (what this device did, it can do).
    const [measured, limit] = r.match(/([\d.]+)× [\d.]+ ([\d.]+)×$/).slice(1).map(Number);
    assert.ok(limit >= measured, `limit under measured: ${r}`);
  }
  assert.match(await page.$eval(`${widget} .dec-plot`, (el) => el.innerHTML), /第 6 节实测/);
  assert.equal(await page.$(`${widget} .gpu-methods`), null, 'no WebGPU sentence on the CPU');
  // On WebGPU (a run there takes minutes on SwiftShader) the table says where its drafts ran:
  // the widget's own sentence for a WebGPU report, in the page's language.
  const note = await page.evaluate(async () => {
    const m = await import('./widgets/decoding.js');
    const p = document.createElement('div');
    const text = (r, backend) => { p.innerHTML = m.placementNote(r, { backend }); return p.textContent; };
    return { gpu: text({}, 'wgpu'), cpu: text({ drafts_on: 'flex' }, 'wgpu'), flex: text({}, 'flex') };
  });
  assert.match(note.gpu, /^在 WebGPU 上，每一行（草稿也一样）都在 GPU 上运行.*把草稿放到 CPU 上，就能看到它们在 GPU 目标模型旁边运行。$/);
  assert.match(note.cpu, /^在 WebGPU 上，表里的每个草稿模型（A、B、Medusa 的头、EAGLE）都在 CPU（flex）上、GPU 上的目标模型旁边运行/);
  assert.equal(note.flex, '');
  assert.deepEqual(errors, []);
  await page.close();
});

test('hidden-state drafts on WebGPU: on the CPU beside the GPU target by default, or on the GPU; the same greedy output either way', async () => {
  const { page, errors } = await open(env, '?decoding.experiment=hidden&decoding.backend=wgpu&decoding.method=eagle&decoding.prompts=10&decoding.budget=8');
  await decoded(page, 1);
  const status = () => page.$eval(`${widget} .dec-status`, (el) => el.textContent);
  const rows = await rowsOf(page, `${widget} table.dec-hidden`);
  assert.ok(rows.includes('identical to the target’s greedy output 10/10'), rows.join(' | '));
  assert.match(await status(), /^Done on wgpu, the drafts on flex, in /);
  assert.match(await page.$eval(`${widget} .drafts-note`, (el) => el.textContent), /^Drafts on the CPU: the draft ran on flex in this worker while the target ran on WebGPU, so c = [\d.]+ /);
  const tau = rows.find((r) => r.startsWith('τ'));
  await setControl(page, 'decoding', 'drafts', 'gpu');
  await decoded(page, 2);
  const onGpu = await rowsOf(page, `${widget} table.dec-hidden`);
  assert.ok(onGpu.includes('identical to the target’s greedy output 10/10'), onGpu.join(' | '));
  assert.equal(onGpu.find((r) => r.startsWith('τ')), tau, 'greedy: the same proposals wherever the draft runs');
  assert.match(await status(), /^Done on wgpu in /);
  assert.equal(await page.$(`${widget} .drafts-note`), null, 'no note with the drafts on the GPU');
  // The step-through too: its status names where the draft ran.
  await setControl(page, 'decoding', 'drafts', 'cpu');
  await setControl(page, 'decoding', 'experiment', 'step');
  await setControl(page, 'decoding', 'stepkind', 'eagle-2');
  await page.waitForSelector(`${widget} .dec-step`, { timeout: 180_000 });
  assert.match(await page.$eval(`${widget} .dec-step`, (el) => el.textContent.trim()), /^EAGLE-2, a dynamic tree/);
  assert.match(await status(), /^Done on wgpu, the drafts on flex, in /);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the step-through of Medusa and EAGLE-2 says which head or depth proposed each node', async () => {
  const { page, errors } = await open(env, '?decoding.experiment=step&decoding.stepkind=medusa&decoding.seed=2');
  await decoded(page, 1);
  await page.click(`${widget} .dec-next`);
  const step = await page.$eval(`${widget} .dec-step`, (el) => el.innerHTML);
  assert.match(step, /Medusa, 4 heads/);
  assert.match(step, /title="head 1"/);
  assert.match(step, /<sub>h1<\/sub>/);
  assert.equal(await page.$eval(`${widget} [data-key="draft"]`, (el) => el.offsetParent === null), true, 'no draft model to choose');
  await setControl(page, 'decoding', 'stepkind', 'eagle-2');
  await decoded(page, 2);
  await page.click(`${widget} .dec-next`); // step 1 is the target's alone: it yields the prompt's features
  const eagle = await page.$eval(`${widget} .dec-step`, (el) => el.innerHTML);
  assert.match(eagle, /EAGLE-2, a dynamic tree of up to 16 nodes, depth 10/);
  assert.match(eagle, /<sub>d1<\/sub>/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the depth slider takes its bounds and default from the core’s one declaration, and follows it when it changes', async () => {
  const depth = (page) => page.$eval(`${widget} [data-key="depth"]`, (el) => [el.min, el.max, el.value].map(Number));
  const path = '?decoding.experiment=hidden&decoding.method=eagle-2&decoding.prompts=10';
  // As declared: presets' depth (lab::params::DEPTH and HiddenRun's default).
  let { page, errors } = await open(env, path);
  const declared = await page.evaluate(async () => (await import('./engine.js')).declarations().decoding);
  assert.deepEqual(await depth(page), [declared.depth.min, declared.depth.max, declared.defaults.depth]);
  assert.ok(declared.depth.max > 7, `the constant's bound is not the one the test declares below: ${declared.depth.max}`);
  assert.deepEqual(errors, []);
  await page.close();
  // Declared otherwise (presets rewritten on its way to the page): the slider follows, so no bound
  // or default is typed again in JavaScript.
  const prepare = (p) => rewritePresets(p, 'Object.assign(p.decoding.depth, { min: 2, max: 7 }); p.decoding.defaults.depth = 5;');
  ({ page, errors } = await open(env, path, { prepare }));
  assert.deepEqual(await depth(page), [2, 7, 5]);
  assert.deepEqual(errors, []);
  await page.unrouteAll({ behavior: 'ignoreErrors' });
  await page.close();
});

