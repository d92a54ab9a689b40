// The wasm engine: loads the module, calls its exports, and recovers from a Rust panic.
//
// Short calls run on the main thread and stay synchronous, so a slider move redraws within the
// same frame. Long calls (Monte Carlo, the models) run in Web Workers (`runJob`), one job at a
// time per channel: a newer job on a channel supersedes the older one there, and only there. One
// queue for the whole page keeps a job that measures time alone on the CPU (`schedule`).
//
// A panic aborts the wasm instance (it traps with a RuntimeError). Its message was recorded by
// the panic hook, so we read it, then instantiate the module afresh (clean memory) and tell the
// widgets to redraw.
//
// Every URL (the module, its JavaScript, the weights, the worker) is derived from this file's
// own URL, so that a page on another site that loads specdec-widget.js from us finds them here.

import { fetchWeights, provideWeights } from './weights.js';
import { lang, tr } from './i18n.js';
import { candidates, chooseBuild, startHelpers } from './threads.js';

// The CPU module's build for this browser (threads.js): threads where the page is cross-origin
// isolated, relaxed-SIMD FMA where the browser validates it. Where that build cannot be had (the
// dev server builds it after the page is up), the best lesser one that can, and the reports say why.
const CHOSEN = chooseBuild();
export let build = CHOSEN;
const wasmUrl = () => new URL(`./pkg/${build.dir}specdec_bg.wasm`, import.meta.url);
const WEIGHTS_URL = new URL('./pkg/weights/', import.meta.url);
let mod = null;
let declared = null; // the core's declarations for the controls (its `presets`), read once
let exports = null; // the instance's raw exports (its memory)
let compiled = null;
let weights = null; // the models' weights, downloaded once (in parallel with the module)
let generation = 0;
let panicNext = false;

/** The compiled CPU module, from a response that must be a good one (else its HTTP status). */
async function compile(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(tr(`${url.href} could not be downloaded (HTTP ${r.status})`, `${url.href} 无法下载（HTTP ${r.status}）`));
  return WebAssembly.compileStreaming(r);
}

/** A fresh instance of `wasm` (the build's own bindings, at a URL of their own per generation:
 * a fresh JS module, hence a fresh instance and memory). */
async function instantiate(wasm) {
  const m = await import(new URL(`./pkg/${build.dir}specdec.js?instance=${generation}`, import.meta.url).href);
  exports = await m.default({ module_or_path: wasm });
  return m;
}

async function load() {
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
        throw e;
      }
      tries[i + 1] = { ...tries[i + 1], detail: tries[i + 1].detail ?? e?.message ?? String(e) };
    }
  }
  keepOffline();
  // What the core declares for the controls is there as soon as the engine is ready, even while
  // a later restart has no instance yet.
  declared ??= m.presets();
  mod = provideWeights(m, await ws);
  return m;
}

/** Asks the page's service worker (our own pages only) to keep the build this browser runs and the list of builds. */
function keepOffline() {
  if (new URL(import.meta.url).origin !== location.origin || !navigator.serviceWorker) return;
  const keep = [`./pkg/${build.dir}specdec.js`, `./pkg/${build.dir}specdec_bg.wasm`, './pkg/builds.json'].map((p) => new URL(p, import.meta.url).href);
  navigator.serviceWorker.ready.then((reg) => reg.active?.postMessage({ keep })).catch(() => {});
}

// Loaded when a page asks: the course page at once (app.js), notes when a reader asks (specdec-widget.js).
export let ready = null;
export const startEngine = () => (ready ??= load());

/** After a failed load (network, a truncated module): tries again; resolves when ready. */
export function retry() {
  ready = load();
  return ready;
}

export class PanicError extends Error {}
export class CancelledError extends Error {}

/** Calls export `name` with `params`; throws Error (bad input) or PanicError (a bug). */
/** Every engine call writes its figures' texts in the page's language (see crate/math/src/i18n.rs). */
function withLang(params) {
  return params && typeof params === 'object' ? { ...params, lang: lang() } : params;
}

export function call(name, params) {
  if (!mod) throw new Error(tr('the engine is restarting; try again in a moment', '引擎正在重启，请稍后再试'));
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
      mod = null;
      load().then(() => window.dispatchEvent(new CustomEvent('specdec:restarted')));
      throw new PanicError(`${message}${tr(' — the engine was restarted', ' — 引擎已重启')}`);
    }
    throw e;
  } finally {
    // It shared the CPU with the measurement running now, if any.
    if (measuring) measuring.others.ms += performance.now() - t0;
  }
}

/** A failure to load the engine or its worker (the network, a host without CORS): worth a retry. */
export class LoadError extends Error {}

/**
 * A job's status, as the worker reports it: numbers and names, never words. `phase` is one of
 * 'queued', 'waiting' (in the page's queue; `for`: the names of the jobs it waits for), 'started'
 * (the worker has the job), the core's steps (`Step` in
 * crate/src/wasm/mod.rs: 'loading', 'running', 'timing', 'widening', 'offloading', 'count' with done, total
 * and backend) and the worker's own ('gpu-download', 'weights-download', 'device-lost'). The page words it
 * (`progressText`); as a string (a caption that interpolates it) it reads in the page's language.
 */
export class JobStatus {
  constructor(fields) { Object.assign(this, fields); }

  /** done / total when the job reports a count, else null. */
  get fraction() { return this.phase === 'count' ? this.done / Math.max(1, this.total) : null; }

  toString() { return progressText(this); }
}

const MODEL_NAMES_ZH = { target: '目标模型', 'draft-a': '草稿 A', 'draft-b': '草稿 B' };

/** A job's status in the page's language: "200 of 1000 on flex", "200 / 1000（flex）". */
export function progressText(st) {
  const b = st.backend;
  switch (st.phase) {
    case 'queued': return tr('queued', '排队中');
    case 'waiting': {
      const names = st.for.map((x) => `“${x}”`).join(tr(', ', '、'));
      return tr(`waiting for ${names} to finish`, `等待${names}结束`);
    }
    case 'started': return tr('starting', '正在启动');
    case 'loading': return tr(`loading the models (${b})`, `正在加载模型（${b}）`);
    case 'running': return tr(`running the models on ${b}`, `正在 ${b} 上运行模型`);
    case 'timing': return tr(`timing ${st.model} on ${b}`, `正在 ${b} 上为${MODEL_NAMES_ZH[st.model] ?? st.model}计时`);
    case 'widening': return tr(`widening the target ×${st.width}`, `正在把目标模型加宽 ×${st.width}`);
    case 'offloading': return tr('copying the target’s weights to host memory', '正在把目标模型的权重复制到主机内存');
    case 'count': return b ? tr(`${st.done} of ${st.total} on ${b}`, `${st.done} / ${st.total}（${b}）`)
      : tr(`${st.done} of ${st.total}`, `${st.done} / ${st.total}`);
    case 'gpu-download': return tr('downloading the WebGPU engine', '正在下载 WebGPU 引擎');
    case 'weights-download': return tr('downloading the drafts’ weights', '正在下载草稿模型的权重');
    case 'device-lost': return tr('the WebGPU device was lost: running again on the CPU (flex)', 'WebGPU 设备丢失：在 CPU（flex）上重新运行');
    default: return String(st.phase ?? '');
  }
}

// One worker per channel (Monte Carlo, each model widget on the page, …): a newer job cancels an
// older one on its own channel only.
const channels = new Map(); // channel → { worker, ready, current: the job wanted, running: the job in its worker }
let nextId = 0;

// Every job of the page passes through one queue, shared by every widget and every
// <specdec-widget> element (they import this one module). A job whose figures are wall-clock
// times runs alone: two jobs at once share the CPU and its memory bandwidth, and a measured
// roofline taken beside a decoding run read 1.2 GB/s instead of 4.8, its verdict flipped. So a
// timed job waits for the jobs already running, and any job started meanwhile waits behind it
// (first come, first served: later untimed jobs never starve it); untimed jobs run side by side,
// one per worker. A waiting job's status says what it waits for.
const queue = [];

// The jobs that time something (crate/src/wasm/jobs.rs): the measured roofline, LikesWorld's
// per-call latencies, a tree verified per sequence and tree-parallel, the boost-tuned pools' wall
// clock, and the decoding experiments
// whose reports hold wall-clock times (speedup and its sweeps over γ and the batch, the §6 table,
// and the hidden-state drafts' c).
const TIMED_EXPERIMENTS = ['speedup', 'sweep', 'load', 'methods', 'hidden'];
const timed = (name, params) => name === 'roofline_measure' || name === 'likesworld_latency' || name === 'tree_vs_paths' || name === 'boost_pools' || name === 'likesworld_choose'
  || (name === 'likesworld_decode' && TIMED_EXPERIMENTS.includes(params?.experiment));

let measuring = null; // the timed job running now, if any

// The page's own engine calls (its drawing, on the main thread) still share the CPU with a timed
// job. A timed report names them when they took at least this fraction of its time: less than
// that moves its figures by less than their own noise.
const NOTICEABLE = 0.01;
const MAIN_THREAD = () => tr('this page’s own drawing (its main thread)', '本页自己的绘图（主线程）');

const WORKER_URL = new URL('./worker.js', import.meta.url);
const shims = new Map(); // worker URL → the blob URL of the module that imports it from another origin

/**
 * A worker running worker.js (or `url`: the training widget's). A browser refuses `new Worker(url)` for a script of another origin
 * (a page on another site that loads specdec-widget.js from us: a SecurityError), so there the
 * worker is a same-origin blob module whose one line imports the real one by its absolute URL
 * (for which the host must send Access-Control-Allow-Origin); worker.js then finds the module and
 * the weights from its own URL. Throws LoadError when the browser refuses even that (a page
 * whose Content-Security-Policy allows no blob: workers).
 */
export function startWorker(url = WORKER_URL) {
  try {
    if (url.origin === location.origin) return new Worker(url, { type: 'module' });
    if (!shims.has(url.href)) shims.set(url.href, URL.createObjectURL(new Blob([`import ${JSON.stringify(url.href)};\n`], { type: 'text/javascript' })));
    return new Worker(shims.get(url.href), { type: 'module' });
  } catch (e) {
    throw new LoadError(tr(`the browser refused to start its worker (${e?.message ?? e})`,
      `浏览器拒绝启动它的后台线程（${e?.message ?? e}）`));
  }
}

function spawn(ch) {
  const w = startWorker();
  // The helper threads of its pool, started here on the page's thread (threads.js says why),
  // end with the worker.
  const helpers = startHelpers(build, startWorker);
  const end = w.terminate.bind(w);
  w.terminate = () => { helpers.end(); end(); };
  // The compiled module and the weights go first and every job after them (messages keep their
  // order), so the worker instantiates once and downloads nothing a second time.
  ch.ready = Promise.all([compiled ?? Promise.reject(new Error('no module')), weights])
    .then(([module, ws]) => w.postMessage({ module, weights: ws, build, helpers: helpers.ports }, helpers.ports), () => {});
  w.onmessage = ({ data }) => {
    const job = ch.current;
    const wanted = job && data.id === job.id;
    if (data.kind === 'loading' || data.kind === 'progress') {
      if (wanted) job.onStatus?.(data.kind === 'loading' ? new JobStatus({ phase: 'started' }) : new JobStatus(data.progress));
      return;
    }
    // The worker is free again, whether or not its job's answer is still wanted.
    if (ch.running?.id === data.id) finished(ch);
    if (!wanted) return;
    ch.current = null;
    if (data.kind === 'done') job.resolve(job.timed ? { ...data.result, during: during(job) } : data.result);
    else {
      if (data.panic || data.load) { w.terminate(); ch.worker = null; }
      job.reject(data.panic ? new PanicError(`${data.message}${tr(' — the worker was restarted', ' — 后台线程已重启')}`)
        : data.load ? new LoadError(data.message) : new Error(data.message));
    }
  };
  // A worker whose script cannot load (the network, a host without CORS) reports a bare error
  // event; one that throws outside a job, an ErrorEvent with a message. Either way it is gone,
  // and the next job starts a fresh one.
  w.onerror = (ev) => {
    ev.preventDefault(); // handled here: not reported again as an uncaught error of the page
    const job = ch.current;
    ch.current = null;
    ch.worker = null;
    w.terminate();
    finished(ch);
    job?.reject(new LoadError(ev.message ? `${tr('the worker failed: ', '后台线程出错：')}${ev.message}`
      : tr(`its worker script ${WORKER_URL.href} did not load`, `后台线程脚本 ${WORKER_URL.href} 未能加载`)));
  };
  return w;
}

/** What else ran while timed `job` did, from the page's main thread: [{ what, ms }], empty when nothing. */
function during(job) {
  const ms = performance.now() - job.started;
  return job.others.ms >= NOTICEABLE * ms ? [{ what: MAIN_THREAD(), ms: job.others.ms }] : [];
}

/** The worker of `ch` is free: the next jobs in the queue may start. */
function finished(ch) {
  if (measuring === ch.running) measuring = null;
  ch.running = null;
  schedule();
}

const running = () => [...channels.values()].map((ch) => ch.running).filter(Boolean);

/**
 * Starts every job in the queue that may start now, in order of arrival: a job needs its
 * channel's worker free and no timed job running; a timed job needs nothing running and nothing
 * queued before it, and an untimed one no timed job queued before it. The jobs left waiting are
 * told what they wait for.
 */
function schedule() {
  for (let i = 0; i < queue.length;) {
    const job = queue[i];
    const ahead = queue.slice(0, i);
    const now = running();
    const may = !job.ch.running && !measuring
      && (job.timed ? now.length === 0 && i === 0 : !ahead.some((j) => j.timed));
    if (may) {
      queue.splice(i, 1);
      start(job);
    } else {
      // What it waits for, its own channel's previous job aside (that one ends in a moment).
      const blockers = (job.timed ? [...now, ...ahead] : [...now.filter((j) => j.timed), ...ahead.filter((j) => j.timed)])
        .filter((j) => j.ch !== job.ch);
      const names = [...new Set(blockers.map((j) => j.what))];
      const key = names.join('\n');
      if (names.length && key !== job.waitingFor) job.onStatus?.(new JobStatus({ phase: 'waiting', for: names }));
      job.waitingFor = key;
      i += 1;
    }
  }
}

function start(job) {
  const { ch } = job;
  try {
    ch.worker ??= spawn(ch);
  } catch (e) {
    ch.current = null;
    job.reject(e);
    return;
  }
  ch.running = job;
  job.started = performance.now();
  if (job.timed) measuring = job;
  const w = ch.worker;
  ch.ready.then(() => w.postMessage({ id: job.id, name: job.name, params: job.params, test: job.test }));
}

// A newer job supersedes the current one: its result will be ignored. A job still waiting leaves
// the queue. A job that has run for a while is stopped by terminating its worker; a short one is
// left to finish (its worker stays busy till then), since starting a worker (instantiating a 6 MB
// module) costs more CPU than letting it end.
const TERMINATE_AFTER_MS = 500;

function supersede(ch) {
  const job = ch.current;
  if (ch.running !== job || performance.now() - job.started > TERMINATE_AFTER_MS) {
    cancel(ch, 'superseded');
    return;
  }
  ch.current = null;
  job.reject(new CancelledError('superseded'));
}

function cancel(ch, why = 'cancelled') {
  const job = ch.current;
  ch.current = null;
  const waiting = queue.indexOf(job);
  if (waiting >= 0) queue.splice(waiting, 1);
  else {
    ch.worker?.terminate();
    ch.worker = null;
  }
  job?.reject(new CancelledError(why));
  if (waiting < 0) finished(ch);
  else schedule();
}

/**
 * Runs export `name` in the worker of `channel` (default: the export's name), through the page's
 * queue (above); `what` names the job to the jobs that wait for it (a widget's title). Returns
 * { promise, cancel }; a newer job on the same channel cancels this one, waiting or running.
 * `onStatus` receives each JobStatus. A worker that cannot start rejects the promise with a
 * LoadError. A timed job's result carries `during`: what else ran while it did ([] when nothing).
 */
export function runJob(name, params, onStatus, channel = name, what = name) {
  if (!channels.has(channel)) channels.set(channel, { worker: null, current: null, running: null });
  const ch = channels.get(channel);
  if (ch.current) supersede(ch);
  const test = loseDeviceNext ? { loseDevice: true } : undefined;
  loseDeviceNext = false;
  const job = {
    id: ++nextId, ch, name, params: withLang(params), test, onStatus, what, timed: timed(name, params), others: { ms: 0 }, waitingFor: '',
  };
  const promise = new Promise((resolve, reject) => { Object.assign(job, { resolve, reject }); });
  ch.current = job;
  onStatus?.(new JobStatus({ phase: 'queued' }));
  queue.push(job);
  schedule();
  return { promise, cancel: () => { if (ch.current === job) cancel(ch); } };
}

/**
 * Ends `channel`: its job is cancelled, its worker terminated, and the channel forgotten (its
 * widget left the page). A later job on the same name starts a fresh worker.
 */
export function closeChannel(channel) {
  const ch = channels.get(channel);
  if (!ch) return;
  cancel(ch);
  // A job still waiting in the queue left its worker alive, and a superseded one may still run.
  ch.worker?.terminate();
  ch.worker = null;
  channels.delete(channel);
  if (ch.running) finished(ch);
}

/**
 * What the core declares for the page's controls (its `presets` export): the verification rules,
 * the token kinds with their names, the ranges of the decoding widget's values, and each other
 * widget's ranges beside its parameters' defaults. The page reads these instead of restating
 * them; they are there once the engine is ready.
 */
export function declarations() {
  declared ??= call('presets');
  return declared;
}

/** A list of rules the core declares (`variants`; the exactness lab's `rules`, typical acceptance too) as a select's options, as the core names them. */
export const ruleOptions = (list) => ({ options: (d) => d[list].map((v) => [v, v]), options_zh: (d) => d[list].map((v, i) => [v, d[`${list}_zh`][i]]) });
export const variantOptions = ruleOptions('variants');

/** The verification rule `name` (any of `rules`, which hold the `variants`) in the page's language, as the core names it. */
export const variantName = (name) => tr(name, declarations().rules_zh[declarations().rules.indexOf(name)] ?? name);

/** A parameter count as the page writes it: 85 k, 19 M. */
const count = (n) => (n >= 1e7 ? `${Math.round(n / 1e6)} M` : n >= 1e6 ? `${(n / 1e6).toFixed(1)} M` : `${Math.round(n / 1e3)} k`);
/** Bytes as the page writes them: 1.3 MB, 76 MB. */
const megabytes = (b) => (b >= 1e7 ? `${Math.round(b / 1e6)} MB` : `${(b / 1e6).toFixed(1)} MB`);

/**
 * The target's widths as a select's options (`declare(control, widthOptions)`), as the core
 * lists them with their sizes: "×1 (trained, 85 k parameters)", "×16 (19 M parameters, 76 MB a step)".
 */
export const widthOptions = {
  options: (d) => d.widths.map((w) => [String(w.width), w.width === 1 ? `×1 (trained, ${count(w.params)} parameters)`
    : `×${w.width} (${count(w.params)} parameters, ${megabytes(w.step_bytes)} a step)`]),
  options_zh: (d) => d.widths.map((w) => [String(w.width), w.width === 1 ? `×1（训练好的，${count(w.params)} 参数）`
    : `×${w.width}（${count(w.params)} 参数，每步读 ${megabytes(w.step_bytes)}）`]),
};

/** The target widened ×`width` in words, as the core sizes it: "19 M parameters, 76 MB a step". */
export function targetSize(width) {
  const w = declarations().widths.find((x) => x.width === Number(width));
  if (!w) return '';
  return tr(`${count(w.params)} parameters, ${megabytes(w.step_bytes)} a step`, `${count(w.params)} 参数，每步读 ${megabytes(w.step_bytes)}`);
}

/** The token kind `name` in the page's language, as the core names it. */
export function kindName(name) {
  const k = declarations().token_kinds.find((x) => x.name === name);
  return k ? tr(k.en, k.zh) : name;
}

/**
 * Gives `control` fields read from the core's declarations when they are first needed (a widget
 * mounts once the engine is ready): `fields` maps a field (min, max, options) to a function of
 * the declarations.
 */
export function declare(control, fields) {
  for (const [key, of] of Object.entries(fields)) {
    Object.defineProperty(control, key, { get: () => of(declarations()), enumerable: true, configurable: true });
  }
  return control;
}

/**
 * A slider's fields as the core declares them for `widget` (its entry in `presets`): the bounds
 * of its range `name`, and its default, `defaults[name]` unless `value` reads it otherwise. Use
 * as `declare(control, coreRange('theory', 'alpha'))`; spread it to override one field where the
 * page offers less than the core allows.
 */
export function coreRange(widget, name, value = (defaults) => defaults[name]) {
  return { min: (d) => d[widget][name].min, max: (d) => d[widget][name].max, value: (d) => value(d[widget].defaults) };
}

/** For tests of the recovery path: the next call panics inside Rust. */
export function panicOnNextCall() {
  panicNext = true;
}

let loseDeviceNext = false;
/** For tests of the recovery path: the next job's WebGPU device is destroyed mid-run. */
export function loseDeviceOnNextJob() {
  loseDeviceNext = true;
}

/**
 * For the long-use test and the curious: the main instance's wasm memory, the live workers, and
 * the jobs running in them and waiting in the queue.
 */
export function health() {
  return {
    wasmBytes: exports?.memory?.buffer.byteLength ?? 0,
    workers: [...channels.values()].filter((ch) => ch.worker).length,
    channels: channels.size,
    running: running().length,
    waiting: queue.length,
  };
}
