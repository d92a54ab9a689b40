// The few-row matmul alone in headless Chromium, on one thread: what the page's measured roofline
// cannot separate, the kernel from the rest of a call and from the threads. Builds
// crate/kernels/wasm-bench (the kernels crate alone, exported without bindings) with relaxed-SIMD FMA
// and without, and for each build prints the FMA peak, the streaming sum's bandwidth over 64 MB,
// and the median ms per call (with GFLOP/s) of the matmul over 64 MB of weights (4096 × 4096)
// and over the ×16 target's eight layers in a row (75.5 MB), for 1 to 1024 rows, with the weights
// row-major (as burn stores them) and packed in strips (kernels::Packed). Rounds alternate
// the builds, so that a machine whose speed drifts drifts for both.
//   node tests/bench-kernel.mjs [--rounds N] [--only fma|simd] [--rows 1,2,4,8]
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM } from './browser.mjs';

const arg = (name, fallback) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : fallback; };
const rounds = Number(arg('--rounds', 2));
const only = arg('--only', null);
const rowsList = arg('--rows', '1,2,4,8,16').split(',').map(Number);
if (!(rounds >= 1) || rowsList.some((r) => !(r >= 1 && r <= 1024)) || (only && !['fma', 'simd'].includes(only))) {
  console.error('usage: node tests/bench-kernel.mjs [--rounds N ≥ 1] [--only fma|simd] [--rows 1,2,…,1024]');
  process.exit(2);
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const builds = [['fma', ['--features', 'relaxed']], ['simd', []]].filter(([name]) => !only || name === only);
const modules = builds.map(([name, features]) => {
  const dir = join(root, 'target', 'wasm-bench', name);
  execFileSync('cargo', ['build', '--release', '--target', 'wasm32-unknown-unknown', '--manifest-path',
    join(root, 'crate', 'kernels', 'wasm-bench', 'Cargo.toml'), '--target-dir', dir, ...features], { stdio: 'inherit' });
  return [name, [...readFileSync(join(dir, 'wasm32-unknown-unknown', 'release', 'specdec_kernels_bench.wasm'))]];
});

// Runs in the page: every figure of one build.
async function measure({ bytes, rowsList }) {
  const { instance } = await WebAssembly.instantiate(new Uint8Array(bytes), {});
  const e = instance.exports;
  const layers = [];
  // Each of its two blocks: qkv, out, up, down.
  for (let l = 0; l < 2; l++) layers.push([1024, 3072], [1024, 1024], [1024, 2560], [2560, 1024]);
  const big = 4096 * 4096;
  const model = layers.reduce((s, [a, b]) => s + a * b, 0);
  const page = 65536;
  const start = Math.ceil(e.memory.buffer.byteLength / page) * page;
  const most = Math.max(...rowsList);
  e.memory.grow(Math.ceil(((big + model + 2 * most * 4096) * 4 + 16 * 4096) / page) + 1);
  const w = start;
  let at = w + big * 4;
  const ws = layers.map(([a, b]) => { const p = at; at += a * b * 4 + 4096; return p; });
  const x = at; const y = x + most * 4096 * 4;
  const f = new Float32Array(e.memory.buffer);
  for (let i = w / 4; i < (y + most * 4096 * 4) / 4; i++) f[i] = Math.sin(i) * 0.01;
  const median = (run, times) => {
    for (let k = 0; k < 2; k++) run();
    const ts = [];
    for (let k = 0; k < times; k++) { const t = performance.now(); run(); ts.push(performance.now() - t); }
    return ts.sort((a, b) => a - b)[times >> 1];
  };
  const flops = Number(e.fma_peak(10_000_000));
  const peak = flops / median(() => e.fma_peak(10_000_000), 5) / 1e6;
  const sum = median(() => e.stream_sum(w, big), 9);
  // The same weights packed (a second copy, made in the module's heap).
  const pw = e.pack(w, 4096, 4096);
  const pws = layers.map(([a, b], i) => e.pack(ws[i], a, b));
  const rows = rowsList.map((r) => ({
    rows: r,
    square: median(() => e.matmul(x, r, w, 4096, 4096, y), 11),
    layers: median(() => layers.forEach(([a, b], i) => e.matmul(x, r, ws[i], a, b, y)), 11),
    packedSquare: median(() => e.matmul_packed(x, r, pw, y), 11),
    packedLayers: median(() => pws.forEach((p) => e.matmul_packed(x, r, p, y)), 11),
  }));
  [pw, ...pws].forEach((p) => e.unpack(p));
  return { peak, bandwidth: big * 4 / sum / 1e6, rows, big, model };
}

const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
try {
  const page = await browser.newPage();
  const all = Object.fromEntries(builds.map(([name]) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, bytes] of modules) all[name].push(await page.evaluate(measure, { bytes, rowsList }));
  }
  console.log(`Chromium ${browser.version()}, one thread, ${rounds} round(s), medians of the rounds' medians`);
  const mid = (xs) => xs.slice().sort((a, b) => a - b)[(xs.length - 1) >> 1];
  for (const [name] of builds) {
    const runs = all[name];
    const { big, model } = runs[0];
    console.log(`\n${name === 'fma' ? 'SIMD128 + relaxed-SIMD FMA' : 'SIMD128 (no FMA)'}: peak ${mid(runs.map((r) => r.peak)).toFixed(1)} GFLOP/s, streaming sum ${mid(runs.map((r) => r.bandwidth)).toFixed(1)} GB/s`);
    console.log('weights   rows  4096×4096 ms  GFLOP/s  ×16 layers ms  GFLOP/s  GB/s');
    for (const [label, sqKey, lyKey] of [['row-major', 'square', 'layers'], ['packed', 'packedSquare', 'packedLayers']]) {
      rowsList.forEach((r, i) => {
        const sq = mid(runs.map((run) => run.rows[i][sqKey]));
        const ly = mid(runs.map((run) => run.rows[i][lyKey]));
        console.log(`${label.padEnd(9)} ${String(r).padStart(4)}  ${sq.toFixed(2).padStart(12)}  ${(2 * r * big / sq / 1e6).toFixed(1).padStart(7)}  ${ly.toFixed(2).padStart(13)}  ${(2 * r * model / ly / 1e6).toFixed(1).padStart(7)}  ${(model * 4 / ly / 1e6).toFixed(1).padStart(4)}`);
      });
    }
  }
} finally {
  await browser.close();
}
