// The trained models' weights, which neither wasm module embeds: the three models' Burnpack
// files, which the page downloads once (engine.js) and hands to every module instance it starts,
// in the page and in its workers (`provide_weights`); and the three drafts on the target's hidden
// states, which a worker fetches from `hidden/` only for the jobs that run them; and the pools of
// small models of lecture §4.2, from `pool/`, likewise.
import { tr } from './i18n.js';

const MODELS = ['target', 'draft-a', 'draft-b'];

/** Fetches `names` (paths under `base` without .bpk); resolves to { name: ArrayBuffer }. */
async function fetchAll(base, names) {
  const files = await Promise.all(names.map(async (m) => {
    const r = await fetch(new URL(`${m}.bpk`, base)).catch((e) => {
      throw new Error(tr(`the weights of ${m} could not be downloaded (${e.message}): check the connection, then Retry`, `${m} 的权重无法下载（${e.message}）：请检查网络连接，然后重试`));
    });
    if (!r.ok) throw new Error(tr(`the weights of ${m} could not be downloaded (HTTP ${r.status})`, `${m} 的权重无法下载（HTTP ${r.status}）`));
    return r.arrayBuffer();
  }));
  return Object.fromEntries(names.map((m, i) => [m, files[i]]));
}

/** Fetches the three files under `base` (a URL ending in /); resolves to { model: ArrayBuffer }. */
export const fetchWeights = (base) => fetchAll(base, MODELS);

/** Hands the weights `ws` (as fetchWeights resolves) to a module instance; returns the instance. */
export function provideWeights(engine, ws) {
  for (const m of MODELS) engine.provide_weights(m, new Uint8Array(ws[m]));
  return engine;
}

// The drafts on the target's hidden states (Medusa's heads, EAGLE and EAGLE trained with the
// training-time test): fetched from `hidden/` under the same base only when an experiment that
// runs them is asked for, so that no other visit downloads them.
const HIDDEN = ['medusa', 'eagle', 'eagle-ttt'];

/** Fetches the hidden-state drafts under `base`/hidden/; resolves to { draft: ArrayBuffer }. */
export async function fetchHidden(base) {
  const ws = await fetchAll(base, HIDDEN.map((m) => `hidden/${m}`));
  return Object.fromEntries(HIDDEN.map((m) => [m, ws[`hidden/${m}`]]));
}

/** Hands the hidden-state drafts' weights to a module instance (a repeat is a no-op). */
export function provideHidden(engine, ws) {
  for (const m of HIDDEN) engine.provide_weights(m, new Uint8Array(ws[m]));
  return engine;
}

/**
 * Whether a job runs the hidden-state drafts (so that its worker fetches them first): the §5 and
 * §6 experiments, a step-through of any kind but drafts A and B's chain and tree (the core's
 * `StepKind`), and per-sequence vs tree-parallel verification of EAGLE-2's dynamic trees
 * (`eagle-2`, `eagle-2:N`; the core's `lab::paths::parse_source`).
 */
export function needsHidden(name, params) {
  if (name === 'tree_vs_paths') return /^\s*eagle/i.test(params?.config ?? '');
  const step = params?.experiment === 'step' && !['chain', 'tree', undefined].includes(params.stepkind);
  // How to speculate on this device measures EAGLE's and Medusa's vectors and times EAGLE-2.
  return name === 'likesworld_choose' || (name === 'likesworld_decode' && (['hidden', 'methods'].includes(params?.experiment) || step));
}

// The pools of small models boost-tuned as SpecInfer's (and the control, trained without the
// filter), four of each: fetched from `pool/` only for the jobs that run them (`needsPool`).
const POOL = ['boost', 'plain'].flatMap((k) => [1, 2, 3, 4].map((i) => `pool/${k}-${i}`));

/** Fetches the pools' files under `base`/pool/; resolves to { 'pool/boost-1': ArrayBuffer, … }. */
export const fetchPool = (base) => fetchAll(base, POOL);

/** Hands the pools' weights to a module instance (a repeat is a no-op). */
export function providePool(engine, ws) {
  for (const m of POOL) engine.provide_weights(m, new Uint8Array(ws[m]));
  return engine;
}

/** Whether a job runs the boost-tuned pools (so that its worker fetches them first): the
 * learned-speculators widget's, and the measured choice's (its table of acceptance vectors). */
export const needsPool = (name) => name === 'boost_pools' || name === 'likesworld_choose';
