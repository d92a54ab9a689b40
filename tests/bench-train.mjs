// Benchmark of training a draft in the page (issue 33; lecture §4.2), in headless Chromium on
// this machine: for each teacher, a draft of draft A's shape trained by the training module in
// its worker (train-worker.js) — the wall clock, and the draft checked as the shipped draft A is
// (greedy chains of γ 4 on 200 held-out prompts: tokens per call, α, identity) — and, while the
// training widget trains, the main thread's long tasks (PerformanceObserver: none over 50 ms is
// the goal); and a pool of 2 trained in the page, boost-tuned and without the filter, against its
// first member alone. Timing goals live here, not in the tests.
//   node tests/bench-train.mjs [--steps N] [--batch B] [--corpus W] [--prompts P] [--teachers greedy,kl,text] [--pool-steps N]
import { start, open } from './browser.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const steps = Number(arg('steps', 1000));
const batch = Number(arg('batch', 64));
const corpus = Number(arg('corpus', 1024));
const prompts = Number(arg('prompts', 200));
const teachers = arg('teachers', 'greedy,kl,text').split(',').filter(Boolean);
const poolSteps = Number(arg('pool-steps', 500));

const env = await start();
const { page } = await open(env, '?train.steps=1000#train');
console.log(`draft A's shape, ${steps} steps, batch ${batch}, corpus ${corpus} worlds, checked on ${prompts} prompts (γ 4)`);
/** One run of train-worker.js in the page: its times, the shipped draft's check, every check by step. */
const train = (params) => page.evaluate((p) => new Promise((resolve, reject) => {
    const w = new Worker(new URL('train-worker.js', location.href), { type: 'module' });
    const t0 = performance.now();
    let trainStart = null;
    let shipped = null;
    let last = null;
    const checks = {};
    w.onmessage = ({ data }) => {
      if (data.kind === 'shipped') shipped = data.check;
      if (data.kind === 'points' && trainStart === null) trainStart = performance.now();
      if (data.kind === 'check') { last = data.check; checks[data.step] = data.check; }
      if (data.kind === 'error') reject(new Error(data.message));
      if (data.kind === 'done') {
        w.terminate();
        resolve({ total_s: (performance.now() - t0) / 1e3, train_s: (performance.now() - trainStart) / 1e3, shipped, last, checks, members: data.members });
      }
    };
    w.postMessage({ params: p, every: p.steps * (p.pool ?? 1) });
  }), params);

for (const teacher of teachers) {
  const r = await train({ shape: 'a', teacher, steps, batch, corpus, prompts, seed: 1, lang: 'en' });
  const ratio = r.last.tokens_per_call / r.shipped.tokens_per_call;
  console.log(`${teacher.padEnd(6)}  τ ${r.last.tokens_per_call.toFixed(3)} (shipped A ${r.shipped.tokens_per_call.toFixed(3)}: ${(100 * ratio).toFixed(1)}%)  α ${r.last.alpha.toFixed(3)} (A ${r.shipped.alpha.toFixed(3)})  identical ${r.last.identical}/${r.last.prompts}  ${r.total_s.toFixed(1)} s in all (training with its checks ${r.train_s.toFixed(1)} s)`);
}

// A pool of 2 of draft A's shape, boost-tuned and the control, poolSteps steps per member: τ of
// its first member alone (checked when it finishes) and of the pool's merged tree.
if (poolSteps > 0) {
  for (const filter of [true, false]) {
    const r = await train({ shape: 'a', teacher: 'greedy', steps: poolSteps, batch, corpus, prompts, seed: 1, pool: 2, filter, lang: 'en' });
    const [one, two] = [r.checks[poolSteps], r.checks[2 * poolSteps]];
    const cover = r.members.map((m) => `${(100 * m.pool_coverage).toFixed(1)}%`).join(' → ');
    console.log(`pool of 2, ${filter ? 'boost-tuned' : 'no filter  '}, ${poolSteps} steps each: τ ${one.tokens_per_call.toFixed(3)} → ${two.tokens_per_call.toFixed(3)} (+${(100 * (two.tokens_per_call / one.tokens_per_call - 1)).toFixed(1)}%), ${two.tree_nodes.toFixed(2)} nodes a call, coverage ${cover}, identical ${two.identical}/${two.prompts}, ${r.total_s.toFixed(1)} s`);
  }
}

// The main thread while the widget trains (its own defaults): the longest task, and how many
// took over 50 ms.
await page.evaluate(() => {
  window.longTasks = [];
  new PerformanceObserver((l) => { for (const e of l.getEntries()) window.longTasks.push(e.duration); }).observe({ type: 'longtask' });
});
const t0 = Date.now();
await page.click('[data-widget="train"] .tr-go');
await page.waitForFunction(() => document.querySelector('[data-widget="train"]')?.dataset.trained, null, { timeout: 600_000 });
const long = await page.evaluate(() => window.longTasks);
console.log(`widget (steps 1000): trained in ${((Date.now() - t0) / 1e3).toFixed(1)} s; main-thread tasks over 50 ms: ${long.length}${long.length ? ` (longest ${Math.max(...long).toFixed(0)} ms)` : ''}`);
await env.close();
