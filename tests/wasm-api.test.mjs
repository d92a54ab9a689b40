// The wasm API, called as the page's scripts call it, on the modules that ship: the GPU module
// (pkg/gpu/: wgpu and flex) and the CPU module (pkg/: flex and ndarray, one thread). The exports
// take plain objects, return plain objects with the lecture's numbers, and turn bad input into a
// thrown error naming the bad value. Each module is loaded once, in a page of the static server,
// and handed the weights as the page hands them over; every assertion that holds for a module is
// checked on it, the backends each against its own. Chromium runs with WebGPU (SwiftShader), so
// the GPU module's jobs run on WebGPU, without a fallback.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start } from './browser.mjs';

const GPU = { path: '/pkg/gpu/specdec.js', backends: ['flex', 'wgpu'], modelsOn: 'wgpu' };
const CPU = { path: '/pkg/specdec.js', backends: ['flex', 'ndarray'], modelsOn: 'flex' };
const MODULES = [GPU, CPU];
const ALL_BACKENDS = ['flex', 'ndarray', 'wgpu'];
const WEIGHTS = ['target', 'draft-a', 'draft-b'];

let env;
let page;
before(async () => {
  env = await start();
  page = await env.browser.newPage();
  // Any document of the server's origin will do: the modules are imported into it by hand.
  await page.goto(`${env.url}pkg/builds.json`);
  await page.evaluate(async (paths) => {
    window.modules = {};
    for (const path of paths) {
      const m = await import(path);
      await m.default(); // wasm-bindgen's loader: instantiates, then runs the module's `start`
      window.modules[path] = m;
    }
  }, MODULES.map((m) => m.path));
});
after(async () => { await env?.close(); });

/** Calls export `name` of module `mod` with `args`: its value, or { message } where it threw. */
function callOf(mod, name, args) {
  return page.evaluate(async ([path, name, args]) => {
    try {
      return { value: await window.modules[path][name](...args) };
    } catch (e) {
      return { message: e.message ?? String(e) };
    }
  }, [mod.path, name, args]);
}

/** The value `name(...args)` returns (a promise's, for the asynchronous exports). */
async function call(mod, name, ...args) {
  const r = await callOf(mod, name, args);
  if ('message' in r) throw new Error(`${mod.path} ${name}: ${r.message}`);
  return r.value;
}

/** The message of the error `name(...args)` throws (it must throw). */
async function refused(mod, name, ...args) {
  const r = await callOf(mod, name, args);
  assert.ok('message' in r, `${mod.path} ${name}(${JSON.stringify(args)}) did not throw`);
  return r.message;
}

/**
 * Hands module `mod` the weights of `model` as the page does after downloading them (the module
 * does not embed them): the bytes of `source.file` under /pkg/weights/ (the model's own file by
 * default), or of the string `source.text`. Resolves to the error's message, or null.
 */
function handOver(mod, model, source = { file: model }) {
  return page.evaluate(async ([path, model, source]) => {
    const bytes = 'file' in source
      ? new Uint8Array(await (await fetch(`/pkg/weights/${source.file}.bpk`)).arrayBuffer())
      : new TextEncoder().encode(source.text);
    try {
      window.modules[path].provide_weights(model, bytes);
      return null;
    } catch (e) {
      return e.message;
    }
  }, [mod.path, model, source]);
}

/** Hands `mod` the three models' right files (a repeat is accepted). */
async function provideWeights(mod) {
  for (const model of WEIGHTS) assert.equal(await handOver(mod, model), null, `${mod.path}: ${model}`);
}

const at = (mod) => mod.path;

test('weights are checked when handed over, and a second hand-over is accepted', { timeout: 60_000 }, async () => {
  for (const mod of MODULES) {
    assert.match(await handOver(mod, 'draft-c', { text: '' }), /draft-c/, at(mod));
    // Garbage is refused (as not a Burnpack file, or as different from what the module has).
    assert.match(await handOver(mod, 'target', { text: 'not a burnpack file' }), /target/, at(mod));
    // A draft's file is not the target's.
    assert.match(await handOver(mod, 'target', { file: 'draft-a' }), /target/, at(mod));
    await provideWeights(mod);
    await provideWeights(mod);
  }
});

test('theory reports Table 1', { timeout: 30_000 }, async () => {
  for (const mod of MODULES) {
    const v = await call(mod, 'theory', { alpha: 0.8, gamma: 5, c: 0.0, c_hat: 0.0 });
    assert.equal(v.speedup.toFixed(2), '3.69', at(mod));
    assert.equal(v.operations.toFixed(2), '1.63', at(mod));
    assert.ok(v.svg.startsWith('<svg'), at(mod));
  }
});

test('the roofline’s defaults are the lecture’s example', { timeout: 30_000 }, async () => {
  for (const mod of MODULES) {
    const v = await call(mod, 'roofline', undefined);
    assert.equal(v.step.time_ms.toFixed(2), '26.90', at(mod));
    assert.equal(v.step.bound, 'memory', at(mod));
  }
});

test('exactness: the correct sampler is exact in the browser', { timeout: 30_000 }, async () => {
  for (const mod of MODULES) {
    const first = (await call(mod, 'exactness', { gamma: 4 })).tvs[0];
    assert.equal(first.variant, 'correct', at(mod));
    assert.ok(first.tv <= 1e-12, `${at(mod)}: TV ${first.tv}`);
  }
});

test('multi-draft: the slide’s example', { timeout: 30_000 }, async () => {
  for (const mod of MODULES) {
    const v = await call(mod, 'multi_draft', null);
    assert.equal(v.given.mss.acceptance, 1.0, at(mod));
    assert.equal(v.averaged.naive.acceptance, 0.4375, at(mod));
  }
});

test('the token tree and its errors', { timeout: 30_000 }, async () => {
  for (const mod of MODULES) {
    assert.equal((await call(mod, 'token_tree', { mode: 'config', config: '⟨2,2,1⟩' })).nodes, 10, at(mod));
    assert.match(await refused(mod, 'token_tree', { mode: 'config', config: '<2,,1>' }), /level 2 is empty/, at(mod));
  }
});

test('bad parameter types are reported', { timeout: 30_000 }, async () => {
  for (const mod of MODULES) {
    // The parameter is named, not only the type serde wanted.
    assert.match(await refused(mod, 'theory', { alpha: 'high' }), /bad parameters: alpha: invalid type/, at(mod));
    assert.match(await refused(mod, 'theory', { alpha: 2.0 }), /alpha = 2/, at(mod));
  }
});

test('each call speaks the language of its own parameters', { timeout: 30_000 }, async () => {
  for (const mod of MODULES) {
    // No language is remembered between calls: a Chinese call, then one that names none.
    assert.match(await refused(mod, 'theory', { alpha: 2.0, lang: 'zh' }), /超出范围/, at(mod));
    assert.match(await refused(mod, 'theory', { alpha: 2.0 }), /out of range/, at(mod));
    assert.match(await refused(mod, 'token_tree', { mode: 'config', config: '<2,,1>', lang: 'zh' }), /第 2 层/, at(mod));
  }
});

// The core's declarations the presets must carry, as crate/src declares them (the Rust test read
// the constants themselves): lab::params::ranges' BUDGET, DEPTH, HEADS (MAX_HEADS), GAMMA, PROMPTS
// and REPEATS, and HiddenRun's defaults; theory's GAMMA and C; roofline's OVERHEAD_MS; toy's
// DRAFT_NOISE; multidraft's K (the toy's vocabulary); free::kind's WINDOW; the views' defaults.
const DECODING = { budget: [1, 64, 16], depth: [1, 12, 10], heads: [1, 4, 4] };
const RANGES = [
  ['decoding', 'gamma', 1, 16], ['decoding', 'prompts', 1, 1000], ['decoding', 'repeats', 1, 20],
  ['theory', 'gamma', 0, 256], ['theory', 'c', 0, 1e6], ['roofline', 'overhead_ms', 0, 1000],
  ['exactness', 'draft_noise', 0, 10], ['multidraft', 'k', 1, 5], ['modelfree', 'window', 1, 24],
];

test('presets declare the ranges and choices the page reads', { timeout: 30_000 }, async () => {
  for (const mod of MODULES) {
    const p = await call(mod, 'presets');
    // The hidden-state drafts' ranges and defaults come from their one declaration each.
    for (const [name, [min, max, def]] of Object.entries(DECODING)) {
      assert.deepEqual([p.decoding[name].min, p.decoding[name].max, p.decoding.defaults[name]], [min, max, def], `${at(mod)} ${name}`);
    }
    // Every other widget's ranges, and its defaults as its view's `Default` has them.
    for (const [widget, name, min, max] of RANGES) {
      assert.deepEqual([p[widget][name].min, p[widget][name].max], [min, max], `${at(mod)} ${widget}.${name}`);
    }
    assert.equal(p.theory.defaults.alpha, 0.8, at(mod));
    assert.equal(p.modelfree.defaults.budget, 8, at(mod));
    assert.equal(p.exactness.defaults.toy.sharpness, 2.2, at(mod));
    assert.equal(p.roofline.heat_batches[0], 1, at(mod));
    assert.equal(p.variants.length, 6, at(mod));
    assert.equal(p.variants[0], 'correct', at(mod));
    assert.equal(p.token_kinds.length, 4, at(mod));
    assert.equal(p.token_kinds[3].name, 'answer', at(mod));
    assert.equal(p.token_kinds[3].zh, '答案', at(mod));
    assert.match(await call(mod, 'webgpu_fallback_note', { reason: 'no-adapter', lang: 'zh' }), /没有提供 WebGPU 适配器/, at(mod));
    // The menus of the core's named choices, each labelled in both languages; the timed jobs,
    // each an export of this module.
    assert.deepEqual(p.menus.backend.map((c) => c.name), ['flex', 'ndarray', 'wgpu'], at(mod));
    assert.equal(p.menus.backend[2].zh, 'GPU：WebGPU', at(mod));
    for (const [menu, items] of Object.entries(p.menus)) {
      assert.ok(items.length >= 2 && items.every((c) => c.name && c.en && c.zh), `${at(mod)} menu ${menu}`);
    }
    assert.deepEqual(p.menus.tree_drafter.map((c) => c.name), ['suffix', 'both'], at(mod));
    assert.deepEqual(p.timed.experiments, ['speedup', 'sweep', 'load', 'hidden', 'methods'], at(mod));
    const exports = await page.evaluate(([path, names]) => names.filter((n) => typeof window.modules[path][n] !== 'function'), [mod.path, p.timed.exports]);
    assert.deepEqual(exports, [], `${at(mod)}: timed names that are not exports`);
    assert.deepEqual([p.seed.min, p.seed.max], [0, 4294967295], at(mod));
  }
});

test('LikesWorld’s models run in the browser on every backend each module has, and not on the others', { timeout: 120_000 }, async () => {
  // Worlds have 3 to 6 facts; the models never saw fewer.
  const text = 'dan likes jam . fay likes nuts . eve likes tea . q fay nuts . q dan jam . q eve tea . <eos>';
  for (const mod of MODULES) {
    await provideWeights(mod);
    for (const backend of ALL_BACKENDS.filter((b) => !mod.backends.includes(b))) {
      if (backend === 'wgpu') continue; // a build without wgpu runs WebGPU jobs on flex, with a note
      assert.match(await refused(mod, 'likesworld', { backend }), new RegExp(`no ${backend} backend`), at(mod));
    }
    for (const backend of mod.backends) {
      const v = await call(mod, 'likesworld', { text, backend });
      // Chromium runs with --enable-unsafe-webgpu (SwiftShader): no fallback here.
      assert.equal(v.backend, backend, at(mod));
      assert.equal(v.note, null, `${at(mod)} ${backend}: fell back`);
      const answers = v.positions.filter((p) => p.kind === 'answer');
      for (const a of answers) assert.ok(a.p[0] > 0.9, `${at(mod)} ${backend}: the target answers with p = ${a.p[0]}`);
      assert.equal(answers.length, 3, `${at(mod)} ${backend}`);
    }
    assert.match(await refused(mod, 'likesworld', { text: 'dan loves jam', backend: mod.modelsOn }), /"loves"/, at(mod));
  }
});

// The worker asks the GPU module whether it can run WebGPU jobs before the first one: here it
// can (the page's tests cover an adapter that gives no device).
test('WebGPU is usable in headless Chromium', { timeout: 60_000 }, async () => {
  assert.equal(await call(GPU, 'webgpu_unavailable', { lang: 'en' }), undefined);
});

/** Largest |a − b| over two arrays of numbers (any length difference is a failure). */
function worst(a, b) {
  assert.equal(a.length, b.length);
  return a.reduce((w, x, i) => Math.max(w, Math.abs(x - b[i])), 0);
}

/** Every target probability a step-through read from its tree forwards, in order. */
const probabilities = (v) => v.steps.flatMap((s) => [...s.checks.map((c) => c.p), ...s.last_dist.map(([, p]) => p)]);

// Tree attention on WebGPU (lecture §4.3): one forward over the tree with a cached prompt equals
// every root-to-leaf path run on its own (`tree_vs_paths`: every node's distribution within 1e-4,
// the same verdicts); and WebGPU's tree forwards give flex's distributions (a greedy tree's
// step-through on each: every checked p and every drawn-from distribution within 1e-4, the same
// tokens). The page's tests compare the two modules' decoding token for token.
test('tree attention on WebGPU equals every path and the CPU', { timeout: 180_000 }, async () => {
  await provideWeights(GPU);
  for (const config of ['<2,2,1>', '<3,1,1,1>', '<2,2,2,2>']) {
    const v = await call(GPU, 'tree_vs_paths', { backend: 'wgpu', config, batches: '1' });
    assert.equal(v.backend, 'wgpu', config);
    assert.equal(v.note, null, config);
    assert.ok(v.max_abs_diff <= 1e-4, `${config}: max |Δp| ${v.max_abs_diff}`);
    assert.ok(v.rows.every((r) => r.identical), config);
    const step = (backend) => call(GPU, 'likesworld_decode', { experiment: 'step', stepkind: 'tree', config, seed: 3, backend });
    const [g, c] = [await step('wgpu'), await step('flex')];
    assert.deepEqual([g.backend, c.backend], ['wgpu', 'flex']);
    assert.deepEqual(g.steps.map((s) => s.emitted), c.steps.map((s) => s.emitted), config);
    const d = worst(probabilities(g), probabilities(c));
    assert.ok(d <= 1e-4, `${config}: WebGPU vs flex max |Δp| ${d}`);
  }
  // The paths' tree: six nodes, nine tokens when each path runs on its own.
  const v = await call(GPU, 'tree_vs_paths', { backend: 'wgpu', config: 'q dan jam | q dan nuts . | q fay', batches: '1' });
  assert.ok(v.max_abs_diff <= 1e-4, `merge: max |Δp| ${v.max_abs_diff}`);
  assert.deepEqual([v.nodes, v.path_tokens], [6, 9]);
});

const decode = (mod, params) => call(mod, 'likesworld_decode', params);
const tokens = (v) => JSON.stringify(v.report.output);

// Speculative decoding in the browser: greedy chains identical to the target's own greedy
// decoding; a seeded step-through (a chain under the correct rule, the default) on WebGPU, equal
// to the same run on flex; the drafts on the CPU beside the WebGPU target.
test('speculative decoding runs in the browser', { timeout: 180_000 }, async () => {
  for (const mod of MODULES) {
    await provideWeights(mod);
    const v = await decode(mod, { experiment: 'greedy', prompts: 5, draft: 'a', backend: mod.modelsOn });
    assert.equal(v.report.length, 4, `${at(mod)}: γ 1, 2, 4, 6`);
    for (const r of v.report) assert.equal(r.identical, 5, at(mod));
    const step = (backend) => decode(mod, { experiment: 'step', backend, config: '<2,1>', seed: 3 });
    const here = await step(mod.modelsOn);
    assert.equal(here.backend, mod.modelsOn, at(mod));
    assert.ok(here.steps.length > 1, `${at(mod)}: a run of several steps`);
    if (mod === GPU) {
      assert.equal(tokens(here), tokens(await step('flex')));
      // The drafts on the CPU beside the WebGPU target (issue 31): the target's own greedy
      // outputs still, and the timed report says where the drafts ran.
      const apart = (experiment) => decode(mod, { experiment, prompts: 3, gamma: 3, draft: 'b', backend: 'wgpu', drafts: 'flex' });
      for (const r of (await apart('greedy')).report) assert.equal(r.identical, 3);
      const timedRun = await apart('speedup');
      assert.equal(timedRun.report.backend, 'wgpu');
      assert.equal(timedRun.report.drafts_on, 'flex');
    } else {
      // The CPU module's two backends decode alike.
      assert.equal(tokens(here), tokens(await step('ndarray')), at(mod));
    }
    // An experiment not named is the widget's default, greedy chains (here γ 4 among 1, 2, 6).
    const unnamed = await decode(mod, { prompts: 1, backend: mod.modelsOn });
    assert.equal(unnamed.experiment, 'greedy', at(mod));
    assert.equal(unnamed.report.length, 4, at(mod));
    assert.match(await refused(mod, 'likesworld_decode', { experiment: 'greedy', gamma: 0, backend: mod.modelsOn }), /gamma = 0/, at(mod));
  }
});

// Drafting without a model in the browser: a rule workload without the models, LikesWorld with
// them, outputs identical to the target's; bad values named.
test('model-free drafting runs in the browser', { timeout: 120_000 }, async () => {
  for (const mod of MODULES) {
    await provideWeights(mod);
    const h = await call(mod, 'modelfree', { experiment: 'highlight', workload: 'agent', requests: 6, request: 5 });
    assert.equal(h.highlight.identical, true, at(mod));
    assert.equal(h.backend, null, `${at(mod)}: no models for a rule workload`);
    const s = await call(mod, 'modelfree', { experiment: 'jacobi', workload: 'likesworld', requests: 4, backend: mod.modelsOn });
    assert.equal(s.report.rows.length, 3, at(mod));
    for (const r of s.report.rows) assert.equal(r.row.identical, 4, at(mod));
    assert.match(await refused(mod, 'modelfree', { drafter: 'medusa' }), /"medusa"/, at(mod));
  }
});

// The multi-draft size guard on wasm32, where usize is 32 bits: 16⁸ = 2³² combinations must be
// refused, not wrapped to 0 and enumerated on the main thread.
test('the multi-draft size guard holds on 32 bits', { timeout: 30_000 }, async () => {
  const p = Array(16).fill('0.0625').join(',');
  const drafts = Array(8).fill(p).join(';');
  for (const mod of MODULES) {
    assert.match(await refused(mod, 'multi_draft', { p, drafts }), /4294967296 combinations/, at(mod));
  }
});
