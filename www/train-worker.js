// The training widget's worker (lecture §4.2: a draft distilled from the target in the page). It
// loads the training module (pkg/train/: flex with burn's autodiff and optimizers, which no other
// part of the page downloads) and the models' weights, and runs one training; the page stops it
// by terminating this worker. Protocol:
//   page → worker  { params, every }   the run (lab::learned::TrainParams, with lang) and how
//                                      many steps between two quick checks
//   worker → page  { kind: 'phase', phase: 'download' | 'corpus', done, total }
//                  { kind: 'shipped', model, check }  the shipped draft it is measured against
//                  { kind: 'points', points: [{ step, loss, member }], total }
//                  { kind: 'check', step, check }      lab::learned::DraftCheck of the draft (or
//                                                      pool) now; for a pool also when a member
//                                                      has just finished
//                  { kind: 'done', file, shape, members }  the draft's file (an ArrayBuffer; a
//                                                      pool's first member), a pool's members
//                  { kind: 'error', message }
// Steps are taken a few at a time, about 100 ms of them per message, so the curve moves smoothly
// and the page's thread never waits for this one.
import init, * as engine from './pkg/train/specdec.js';
import { fetchWeights, provideWeights } from './weights.js';

const post = (m, transfer) => self.postMessage(m, transfer ?? []);
// Steps per message: as many as fit in this many milliseconds.
const SLICE_MS = 100;

async function train(params, every) {
  post({ kind: 'phase', phase: 'download' });
  const base = new URL('./pkg/', import.meta.url);
  try {
    await init({ module_or_path: new URL('train/specdec_bg.wasm', base) });
  } catch (e) {
    throw new Error(params.lang === 'zh'
      ? `训练模块无法加载（${e?.message ?? e}）；如果页面刚用 scripts/serve.sh 启动，它还在构建中：几分钟后再试`
      : `the training module could not be loaded (${e?.message ?? e}); if the page was just started with scripts/serve.sh, it is still being built: try again in a few minutes`);
  }
  provideWeights(engine, await fetchWeights(new URL('weights/', base)));
  const training = await engine.training_start(params, (p) => post({ kind: 'phase', phase: 'corpus', done: p.done, total: p.total }));
  const total = params.steps * (params.pool ?? 1);
  post({ kind: 'shipped', model: training.shipped(), check: await training.check_shipped() });
  post({ kind: 'check', step: 0, check: await training.check() });
  const pooled = (params.pool ?? 1) > 1;
  while (!training.finished()) {
    const start = performance.now();
    const points = [];
    let next = false; // a pool's member has just taken its last step: the pool so far is checked
    do {
      points.push(...training.steps(1));
      next = pooled && training.done() % params.steps === 0;
    } while (!next && !training.finished() && training.done() % every !== 0 && performance.now() - start < SLICE_MS);
    post({ kind: 'points', points, total });
    const done = training.done();
    if (next || done % every === 0 || training.finished()) post({ kind: 'check', step: done, check: await training.check() });
  }
  const file = training.file();
  post({ kind: 'done', file: file.buffer, shape: params.shape, members: training.members() }, [file.buffer]);
}

self.onmessage = async ({ data }) => {
  try {
    await train(data.params, Math.max(1, Math.round(data.every)));
  } catch (e) {
    let message = e?.message ?? String(e);
    if (e instanceof WebAssembly.RuntimeError) {
      let recorded = null;
      try { recorded = engine.last_panic(); } catch (_) { /* the instance is gone */ }
      message = recorded || (data.params?.lang === 'zh'
        ? `训练停止了（${message}）：很可能是这台设备的内存不够；小一些的形状或批大小需要的内存更少`
        : `the training stopped (${message}): most likely this device ran out of memory; a smaller shape or batch needs less`);
    }
    post({ kind: 'error', message });
  }
};
