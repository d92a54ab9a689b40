// Browser tests of issue 34's serving model in the roofline widget: the target on many GPUs
// (tensor and pipeline parallel, §1.1) and offloaded to the host (§4.6): its controls and presets,
// in English and Chinese, at 390 px, and a bad deployment in the URL.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { alertOf, text } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

const preset = async (page, label) => {
  const before = await page.getAttribute('[data-widget="roofline"]', 'data-renders');
  await page.click(`[data-widget="roofline"] .presets button:text-is("${label}")`);
  assert.notEqual(await page.getAttribute('[data-widget="roofline"]', 'data-renders'), before, label);
};
const deployed = (page) => text(page, '[data-widget="roofline"] .deployed');
// Every figure's text: the step chart and the heat map.
const heat = (page) => page.$$eval('[data-widget="roofline"] svg', (all) => all.map((e) => e.textContent).join(' '));

test('§1.1 preset: LLaMA-2-70B on 4 A100s, its communication and 1.6% / 78.1% utilisation; two nodes; offloading', async () => {
  const { page, errors } = await open(env, '');
  // One GPU (the default): no communication line, the utilisation of demo 1's step.
  assert.doesNotMatch(await deployed(page), /GPUs:/);
  assert.match(await deployed(page), /^utilisation: compute 40\.3% of the datasheet peak \(at most 60% in this model\), memory bandwidth 94\.4%; 39\.5 GB per GPU, 40 GB each$/);
  await preset(page, '§1.1 · LLaMA-2-70B on 4 × A100 (tensor parallel)');
  assert.equal(await page.$eval('[data-widget="roofline"] [data-key="tp"]', (e) => e.value), '4');
  assert.match(await deployed(page), /^4 GPUs: communication 4\.85 ms of the step; utilisation: compute 1\.6% of the datasheet peak \(at most 60% in this model\), memory bandwidth 78\.1%; 35\.2 GB per GPU, 40 GB each$/);
  assert.match(await text(page, '[data-widget="roofline"] .numbers'), /^28\.97 ms per step, memory-bound/);
  assert.match(await heat(page), /LLaMA-2-70B on 4 × A100-40GB \(tp 4\)/);
  // Batch 256 at 32k tokens would need 700 GB a GPU: the heat map marks the cells that cannot run.
  assert.match(await heat(page), /the weights and KV cache exceed the GPUs’ memory: the step could not run/);
  // Without the other three GPUs the weights do not fit.
  await page.selectOption('[data-widget="roofline"] [data-key="tp"]', '1');
  assert.match(await deployed(page), /^does not fit: 140\.7 GB per GPU, 40 GB each \(the weights alone are 138\.0 GB\): add GPUs or offload the weights; /);
  await preset(page, '§4.6 · two nodes: tp 4 × pp 2');
  assert.match(await deployed(page), /^8 GPUs: communication \d+\.\d\d ms of the step, pipeline bubble 33% \(2 micro-batches\)/);
  await preset(page, '§4.6 · offloading: OPT-30B on one A10');
  assert.equal(await page.$eval('[data-widget="roofline"] [data-key="tp"]', (e) => e.value), '1', 'a preset is a whole state');
  assert.match(await text(page, '[data-widget="roofline"] .numbers'), /^2401\.50 ms per step, transfer-bound; .* best γ here 16 \(the largest searched\) → 4\.\d\d×/);
  assert.match(await deployed(page), /the weights cross PCIe in 2400\.0 ms a step/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('in Chinese at 390 px: the deployment controls, line and figures are Chinese and nothing overflows', async () => {
  const q = 'roofline.target=llama2-70b&roofline.draft=llama-68m&roofline.batch=2&roofline.context=11&roofline.k=1&roofline.tp=4&roofline.pp=2&roofline.micro=2';
  const { page, errors } = await open(env, `?lang=zh&${q}`, { width: 390 });
  assert.equal(await page.$eval('[data-widget="roofline"] label[for$="-tp"]', (e) => e.textContent), '张量并行 t');
  assert.equal(await page.$eval('[data-widget="roofline"] label[for$="-weights"]', (e) => e.textContent), '权重');
  assert.deepEqual(await page.$$eval('[data-widget="roofline"] [data-key="weights"] option', (o) => o.map((x) => x.textContent)), ['在 GPU 上', '卸载到主机内存']);
  const line = await deployed(page);
  assert.match(line, /^8 块 GPU：通信占每步 \d+\.\d\d ms，流水线气泡 33%（2 个微批）；利用率：算力为标称峰值的 0\.5%（本模型最多 60%），显存带宽 52\.9%；每块 GPU 占用 17\.6 GB（每块 40 GB）$/);
  assert.doesNotMatch(line, /[a-z]{4,}/, 'no English word in the line');
  const svg = await page.$eval('[data-widget="roofline"] .plots svg', (e) => e.textContent);
  assert.match(svg, /通信/);
  assert.doesNotMatch(svg, /communication|memory-bound/);
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth), 0, 'no horizontal overflow at 390 px');
  await page.click('[data-widget="roofline"] .presets button[data-preset="5"]');
  assert.match(await deployed(page), /权重每步经 PCIe 搬运 2400\.0 ms/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a deployment the target cannot split, from the URL, is named and replaced; the widget keeps working', async () => {
  const { page, errors } = await open(env, '?roofline.tp=3&roofline.weights=disk&roofline.micro=0');
  const alert = await alertOf(page, 'roofline');
  assert.match(alert, /tensor parallel t: “3” is not one of the choices; using “1 GPU” \(1\)/);
  assert.match(alert, /weights: “disk” is not one of the choices; using “on the GPUs” \(gpu\)/);
  assert.match(alert, /micro-batches: “0” is not one of the choices; using 1/);
  assert.equal(await page.getAttribute('[data-widget="roofline"]', 'data-state'), 'ok');
  await page.selectOption('[data-widget="roofline"] [data-key="tp"]', '8');
  assert.match(await deployed(page), /^8 GPUs: communication/);
  // The core refuses what the page's choices cannot express, in one line.
  const e = await page.evaluate(() => {
    try { window.specdec.call('roofline', { target: 'llama2-70b', tp: 3 }); return 'no error'; } catch (x) { return String(x.message ?? x); }
  });
  assert.match(e, /tp 3.*t divides both \(1, 2, 4, 8\)/);
  assert.deepEqual(errors, []);
  await page.close();
  // In Chinese the choice put in its place goes by its Chinese label, and by the code a URL spells.
  const zh = await open(env, '?lang=zh&roofline.weights=disk');
  assert.match(await alertOf(zh.page, 'roofline'), /权重：“disk” 不是可选项之一；改用“[^”]*[\u4e00-\u9fff][^”]*”（gpu）/);
  assert.deepEqual(zh.errors, []);
  await zh.page.close();
});

test('the heat map: a cell whose step could not run shows neither a γ nor a speedup, and neither does the numbers line there', async () => {
  // Cell texts of the heat map (its first SVG layer): "γ · speedup×", "off" or "—".
  const cells = (page) => page.$$eval('[data-widget="roofline"] svg', (all) => {
    const layer = all.find((s) => /Demo 5|演示 5/.test(s.textContent));
    return [...layer.querySelectorAll('text')].map((t) => t.textContent.trim()).filter((t) => /^(\d+ · \d+\.\d×|off|不用|—)$/.test(t));
  });
  for (const zh of [false, true]) {
    // LLaMA-2-70B on 4 A100s: batch 256 at 32k tokens (row 9, column 9) cannot run, batch 1 at 128 can.
    const { page, errors } = await open(env, `?${zh ? 'lang=zh&' : ''}roofline.target=llama2-70b&roofline.draft=llama-68m&roofline.tp=4&roofline.batch=8&roofline.context=15`);
    const four = await cells(page);
    assert.equal(four.length, 81, four.join(' | '));
    assert.match(four[0], /^\d+ · \d+\.\d×$/, 'batch 1, context 128 runs');
    assert.equal(four[80], '—', 'batch 256, context 32k could not run');
    assert.ok(four.filter((t) => t === '—').length > 1);
    assert.match(await text(page, '[data-widget="roofline"] .numbers'), zh ? /此处没有最优 γ：这一步跑不起来/ : /no best γ here: the step could not run/);
    assert.doesNotMatch(await text(page, '[data-widget="roofline"] .numbers'), zh ? /此处最优 γ \d/ : /best γ here \d/);
    // On one GPU its 138 GB of weights never fit: no cell has a γ or a speedup.
    await page.selectOption('[data-widget="roofline"] [data-key="tp"]', '1');
    assert.deepEqual(await cells(page), Array(81).fill('—'));
    assert.deepEqual(errors, []);
    await page.close();
  }
});
