// The wasm engine: loads the module, calls its exports, and recovers from a Rust panic.
//
// Short calls run on the main thread and stay synchronous, so a slider move redraws within the
// same frame. Long calls (Monte Carlo; later, models) run in a Web Worker (`runJob`), one job at
// a time: starting a job cancels the previous one by terminating its worker.
//
// A panic aborts the wasm instance (it traps with a RuntimeError). Its message was recorded by
// the panic hook, so we read it, then instantiate the module afresh (clean memory) and tell the
// widgets to redraw.

const WASM_URL = new URL('./pkg/specdec_bg.wasm', import.meta.url);
let mod = null;
let compiled = null;
let generation = 0;
let panicNext = false;

async function load() {
  generation += 1;
  compiled ??= WebAssembly.compileStreaming(fetch(WASM_URL));
  // A distinct URL per generation gives a fresh JS module, hence a fresh instance and memory.
  const m = await import(`./pkg/specdec.js?instance=${generation}`);
  await m.default({ module_or_path: await compiled });
  mod = m;
  return m;
}

export const ready = load();

export class PanicError extends Error {}
export class CancelledError extends Error {}

/** Calls export `name` with `params`; throws Error (bad input) or PanicError (a bug). */
export function call(name, params) {
  if (!mod) throw new Error('the engine is restarting; try again in a moment');
  try {
    if (panicNext) {
      panicNext = false;
      mod.debug_panic();
    }
    return mod[name](params);
  } catch (e) {
    if (e instanceof WebAssembly.RuntimeError) {
      let message = e.message;
      try { message = mod.last_panic() || message; } catch (_) { /* the instance is gone */ }
      mod = null;
      load().then(() => window.dispatchEvent(new CustomEvent('specdec:restarted')));
      throw new PanicError(`${message} — the engine was restarted`);
    }
    throw e;
  }
}

let worker = null;
let current = null; // { id, resolve, reject, onStatus }
let nextId = 0;

function spawn() {
  const w = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  compiled?.then((module) => w.postMessage({ module }));
  w.onmessage = ({ data }) => {
    if (!current || data.id !== current.id) return;
    if (data.kind === 'loading') { current.onStatus?.('running'); return; }
    const job = current;
    current = null;
    if (data.kind === 'done') job.resolve(data.result);
    else {
      if (data.panic) { w.terminate(); worker = null; }
      job.reject(data.panic ? new PanicError(`${data.message} — the worker was restarted`) : new Error(data.message));
    }
  };
  w.onerror = (ev) => {
    const job = current;
    current = null;
    worker = null;
    w.terminate();
    job?.reject(new Error(`the worker failed: ${ev.message ?? 'unknown error'}`));
  };
  return w;
}

/** Runs export `name` in the worker. Returns { promise, cancel }; a newer job cancels this one. */
export function runJob(name, params, onStatus) {
  if (current) cancelCurrent();
  worker ??= spawn();
  const id = ++nextId;
  const promise = new Promise((resolve, reject) => { current = { id, resolve, reject, onStatus }; });
  onStatus?.('queued');
  worker.postMessage({ id, name, params });
  return { promise, cancel: () => { if (current?.id === id) cancelCurrent(); } };
}

function cancelCurrent() {
  const job = current;
  current = null;
  worker?.terminate();
  worker = null;
  job.reject(new CancelledError('cancelled'));
}

/** For tests of the recovery path: the next call panics inside Rust. */
export function panicOnNextCall() {
  panicNext = true;
}
