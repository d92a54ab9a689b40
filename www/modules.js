// The page's two wasm engines on its main thread: loading, calls, and recovery from a Rust panic.
//
// The lecture's module (pkg/math/, no burn: 0.2 MB) loads first and alone: the analytic widgets
// (the closed forms, the roofline, the exactness lab, trees…) run on it, and a student moves the
// theory slider before any model is downloaded. The models' CPU module (pkg/, burn: 1.3 MB) and
// the trained models' weights are fetched when a model widget wakes (`startModels`: on the course
// page, when one comes near the viewport or its Run is pressed; app.js), and serve the model
// widgets' calls on this thread and every worker after that.
//
// Short calls run on the main thread and stay synchronous, so a slider move redraws within the
// same frame. A panic aborts a wasm instance (it traps with a RuntimeError). Its message was
// recorded by the panic hook, so we read it, then instantiate that module afresh (clean memory)
// and tell the widgets to redraw.
//
// Every URL (the modules, their JavaScript, the weights) is derived from this file's own URL, so
// that a page on another site that loads specdec-widget.js from us finds them here.

import { fetchWeights, provideWeights } from './weights.js';
import { lang, tr } from './i18n.js';
import { candidates, chooseBuild } from './threads.js';

// The CPU module's build for this browser (threads.js): threads where the page is cross-origin
// isolated, relaxed-SIMD FMA where the browser validates it. Where that build cannot be had (the
// dev server builds it after the page is up), the best lesser one that can, and the reports say why.
const CHOSEN = chooseBuild();
export let build = CHOSEN;
const wasmUrl = () => new URL(`./pkg/${build.dir}specdec_bg.wasm`, import.meta.url);
const WEIGHTS_URL = new URL('./pkg/weights/', import.meta.url);
const LECTURE_JS = './pkg/math/specdec_math.js';
const LECTURE_WASM = './pkg/math/specdec_math_bg.wasm';

let lecture = null; // the lecture's instance (its bindings module)
const lectureExports = new Set(); // its exports' names, kept across a restart
let lectureGeneration = 0;
let models = null; // the CPU module's instance, once a model widget woke
let declared = null; // what the core declares for the controls (`lecture_presets`, then `presets`)
let exports = null; // the CPU instance's raw exports (its memory)
export let lectureModule = null; // the lecture's compiled module, handed to a lecture job's worker
export let compiled = null; // the compiled CPU module, handed to every model job's worker
export let weights = null; // the models' weights, downloaded once (in parallel with the module)
let generation = 0;
let panicNext = false;

/** The compiled module at `url`, from a response that must be a good one (else its HTTP status). */
async function compile(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(tr(`${url.href} could not be downloaded (HTTP ${r.status})`, `${url.href} 无法下载（HTTP ${r.status}）`));
  return WebAssembly.compileStreaming(r);
}

/** A fresh instance of the lecture's module (a fresh bindings module per generation). */
async function loadLecture() {
  lectureGeneration += 1;
  const [m, wasm] = await Promise.all([
    // The first as the course page preloads it (index.html), a restart's a fresh module.
    import(new URL(lectureGeneration > 1 ? `${LECTURE_JS}?instance=${lectureGeneration}` : LECTURE_JS, import.meta.url).href),
    compile(new URL(LECTURE_WASM, import.meta.url)),
  ]);
  await m.default({ module_or_path: wasm });
  lectureModule = wasm;
  keepOffline([LECTURE_JS, LECTURE_WASM]);
  declared ??= m.lecture_presets();
  for (const name of Object.keys(m)) lectureExports.add(name);
  lecture = m;
  return m;
}

/** A fresh instance of `wasm`, the CPU module (the build's own bindings, at a URL of their own
 * per generation: a fresh JS module, hence a fresh instance and memory). */
async function instantiate(wasm) {
  const m = await import(new URL(`./pkg/${build.dir}specdec.js?instance=${generation}`, import.meta.url).href);
  exports = await m.default({ module_or_path: wasm });
  return m;
}

async function loadModels() {
  generation += 1;
  const ws = weights ??= fetchWeights(WEIGHTS_URL);
  ws.catch(() => { if (weights === ws) weights = null; });
  // A restart after a panic keeps the build that ran; a first load (or a retry) goes down the
  // builds this browser runs that exist, best first.
  const tries = compiled ? [build] : await candidates(CHOSEN, new URL('./pkg/builds.json', import.meta.url));
  let m;
  for (const [i, b] of tries.entries()) {
    build = b;
    // Held here: the shared promise is dropped on failure (a retry starts over), which must not
    // turn this load's own failure into an undefined module.
    const module = compiled ??= compile(wasmUrl());
    try {
      m = await instantiate(await module);
      break;
    } catch (e) {
      // Not built, a 2 GiB shared memory refused: the next build, which says why; none left (the
      // network): a retry starts over from the build chosen.
      if (compiled === module) compiled = null;
      if (i + 1 === tries.length) {
        build = CHOSEN;
        throw /HTTP 404/.test(e?.message) ? new Error(tr(`${e.message}. If the page was just started with scripts/serve.sh, the models’ engine is still being built: try again in a few minutes.`,
          `${e.message}。如果页面刚用 scripts/serve.sh 启动，模型引擎还在构建中：几分钟后再试。`)) : e;
      }
      tries[i + 1] = { ...tries[i + 1], detail: tries[i + 1].detail ?? e?.message ?? String(e) };
    }
  }
  keepOffline([`./pkg/${build.dir}specdec.js`, `./pkg/${build.dir}specdec_bg.wasm`, './pkg/builds.json',
    './pkg/weights/target.bpk', './pkg/weights/draft-a.bpk', './pkg/weights/draft-b.bpk']);
  // The models' declarations hold the lecture's and theirs.
  declared = m.presets();
  models = provideWeights(m, await ws);
  return m;
}

/** Asks the page's service worker (our own pages only) to keep `paths` (under pkg/) for offline use. */
function keepOffline(paths) {
  if (new URL(import.meta.url).origin !== location.origin || !navigator.serviceWorker) return;
  const keep = paths.map((p) => new URL(p, import.meta.url).href);
  navigator.serviceWorker.ready.then((reg) => reg.active?.postMessage({ keep })).catch(() => {});
}

// The lecture's module: the course page loads it at once (app.js), notes when a reader asks
// (specdec-widget.js). The models' module: when a model widget wakes.
export let ready = null;
export const startEngine = () => (ready ??= loadLecture());
export let modelsReady = null;
export function startModels() {
  const loading = modelsReady ??= loadModels();
  // A failure does not stick: the next model widget's Run (or a Retry) loads again.
  loading.catch(() => { if (modelsReady === loading) modelsReady = null; });
  return loading;
}

/** Whether the models' module is loaded on this thread (a model job then queues at once). */
export const modelsLoaded = () => models !== null && compiled !== null && weights !== null;

/** Whether export `name` is the lecture's (its job runs on the lecture's module). */
export const onLecture = (name) => lectureExports.has(name);

/** After a failed load (network, a truncated module): tries again; resolves when ready. */
export function retry() {
  ready = loadLecture();
  return ready;
}

export class PanicError extends Error {}
export class CancelledError extends Error {}

/** Every engine call writes its figures' texts in the page's language (see crate/math/src/i18n.rs). */
export function withLang(params) {
  return params && typeof params === 'object' ? { ...params, lang: lang() } : params;
}

let observe = null; // told how long each call took (jobs.js: a timed job's report names them)
/** Has `f(ms)` told the duration of every call on this thread. */
export function observeCalls(f) {
  observe = f;
}

/**
 * Calls export `name` with `params`; throws Error (bad input) or PanicError (a bug). The
 * lecture's exports run on its module; the models' (a trained draft's shape) on the CPU module,
 * once a model widget woke it.
 */
export function call(name, params) {
  const mine = lectureExports.has(name);
  const mod = mine ? lecture : models;
  if (!mod) {
    throw new Error(mine || !modelsReady ? tr('the engine is restarting; try again in a moment', '引擎正在重启，请稍后再试')
      : tr('the models’ engine is still loading; try again in a moment', '模型引擎还在加载，请稍后再试'));
  }
  const t0 = performance.now();
  try {
    if (panicNext) {
      panicNext = false;
      mod.debug_panic();
    }
    return mod[name](withLang(params));
  } catch (e) {
    if (e instanceof WebAssembly.RuntimeError) {
      let message = e.message;
      try { message = mod.last_panic() || message; } catch (_) { /* the instance is gone */ }
      const restart = mod === lecture ? (lecture = null, loadLecture()) : (models = null, loadModels());
      restart.then(() => window.dispatchEvent(new CustomEvent('specdec:restarted')));
      throw new PanicError(`${message}${tr(' — the engine was restarted', ' — 引擎已重启')}`);
    }
    throw e;
  } finally {
    observe?.(performance.now() - t0);
  }
}

/**
 * What the core declares for the page's controls: the lecture module's `lecture_presets` (the
 * analytic widgets'), then, once the models' module is loaded, its `presets` (the same and the
 * model widgets'). The page reads these instead of restating them; a model widget mounts once
 * the models are loaded (app.js), so that its declarations are there.
 */
export function declarations() {
  declared ??= call('lecture_presets');
  return declared;
}

/** For tests of the recovery path: the next call panics inside Rust. */
export function panicOnNextCall() {
  panicNext = true;
}

/** The instances' wasm memories: the lecture's, and the CPU module's on this thread. */
export function memoryBytes() {
  return exports?.memory?.buffer.byteLength ?? 0;
}
