// The wasm engine: loads the module, calls its exports, and recovers from a Rust panic.
//
// A panic aborts the wasm instance (it traps with a RuntimeError). Its message was recorded by
// the panic hook, so we read it, then import a fresh copy of the module (a new instance with
// clean memory) and tell the widgets to redraw. Calls stay synchronous, so a slider move redraws
// within the same frame.

let mod = null;
let generation = 0;
let panicNext = false;

async function load() {
  generation += 1;
  // A distinct URL per generation gives a fresh module record, hence a fresh instance.
  const m = await import(`./pkg/specdec.js?instance=${generation}`);
  await m.default({ module_or_path: new URL('./pkg/specdec_bg.wasm', import.meta.url) });
  mod = m;
  return m;
}

export const ready = load();

export class PanicError extends Error {}

/** Calls export `name` with `params`; throws Error (bad input) or PanicError (a bug). */
export function call(name, params) {
  if (!mod) throw new Error('the engine is still loading');
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

export function presets() {
  return call('presets');
}

/** For tests of the recovery path: the next call panics inside Rust. */
export function panicOnNextCall() {
  panicNext = true;
}
