// The page's jobs in Web Workers: one worker per channel (Monte Carlo, each model widget on the
// page, …), one job at a time in each, a newer job on a channel superseding the older one there;
// and one queue for the whole page, which keeps a job that measures time alone on the CPU.
//
// A lecture job (Monte Carlo, the gallery of bugs) runs on the lecture's module in its worker; a
// model job first has the page load the models' module and weights (modules.js `startModels`:
// its status says so), which its worker is handed.
import { build, compiled, declarations, lectureModule, weights, startModels, modelsLoaded, onLecture, withLang, observeCalls, memoryBytes, CancelledError, PanicError } from './modules.js';
import { JobStatus } from './progress.js';
import { tr } from './i18n.js';
import { startHelpers } from './threads.js';

/** A failure to load the engine or its worker (the network, a host without CORS): worth a retry. */
export class LoadError extends Error {}

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

// The jobs that time something, as the models' core declares them (`timed` in `presets`: the
// exports whose reports are wall-clock times, and the decoding experiments that are). Read when
// a job queues: a model job queues once the models' module has declared them; the lecture's
// jobs time nothing.
const timed = (name, params) => {
  const t = declarations().timed;
  return !!t && (t.exports.includes(name) || (name === 'likesworld_decode' && t.experiments.includes(params?.experiment)));
};

let measuring = null; // the timed job running now, if any
// The page's own engine calls share the CPU with it: their time is counted against it.
observeCalls((ms) => { if (measuring) measuring.others.ms += ms; });

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

function spawn(ch, lecture) {
  const w = startWorker();
  if (lecture) {
    // A lecture job's worker is handed the lecture's compiled module, before any job.
    if (lectureModule) w.postMessage({ lectureModule });
    ch.ready = Promise.resolve();
  } else {
    // The helper threads of its pool, started here on the page's thread (threads.js says why),
    // end with the worker.
    const helpers = startHelpers(build, startWorker);
    const end = w.terminate.bind(w);
    w.terminate = () => { helpers.end(); end(); };
    // The compiled module and the weights go first and every job after them (messages keep their
    // order), so the worker instantiates once and downloads nothing a second time.
    ch.ready = Promise.all([compiled ?? Promise.reject(new Error('no module')), weights])
      .then(([module, ws]) => w.postMessage({ module, weights: ws, build, helpers: helpers.ports }, helpers.ports), () => {});
  }
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
    ch.worker ??= spawn(ch, job.lecture);
  } catch (e) {
    ch.current = null;
    job.reject(e);
    return;
  }
  ch.running = job;
  job.started = performance.now();
  if (job.timed) measuring = job;
  const w = ch.worker;
  ch.ready.then(() => w.postMessage({ id: job.id, name: job.name, params: job.params, test: job.test, lecture: job.lecture }));
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
  // The hook is for the next WebGPU job: another widget's CPU job started meanwhile leaves it set.
  const test = loseDeviceNext && params?.backend === 'wgpu' ? { loseDevice: true } : undefined;
  if (test) loseDeviceNext = false;
  const job = {
    id: ++nextId, ch, name, params: withLang(params), test, onStatus, what, timed: false, others: { ms: 0 }, waitingFor: '', lecture: onLecture(name),
  };
  const promise = new Promise((resolve, reject) => { Object.assign(job, { resolve, reject }); });
  ch.current = job;
  const enqueue = () => {
    job.timed = !job.lecture && timed(name, params);
    onStatus?.(new JobStatus({ phase: 'queued' }));
    queue.push(job);
    schedule();
  };
  if (job.lecture || modelsLoaded()) enqueue();
  else {
    // A model job waits for the models' module and weights (once for the page), then queues.
    onStatus?.(new JobStatus({ phase: 'models-download' }));
    startModels().then(() => { if (ch.current === job) enqueue(); }, (e) => {
      if (ch.current !== job) return;
      ch.current = null;
      job.reject(new LoadError(e?.message ?? String(e)));
    });
  }
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

let loseDeviceNext = false;
/** For tests of the recovery path: the next WebGPU job's device is destroyed mid-run. */
export function loseDeviceOnNextJob() {
  loseDeviceNext = true;
}

/**
 * For the long-use test and the curious: the main CPU instance's wasm memory, the live workers, and
 * the jobs running in them and waiting in the queue.
 */
export function health() {
  return {
    wasmBytes: memoryBytes(),
    workers: [...channels.values()].filter((ch) => ch.worker).length,
    channels: channels.size,
    running: running().length,
    waiting: queue.length,
  };
}
