// Runs long engine calls off the main thread, so the page never freezes. Protocol (one job at a
// time; the page cancels a job by terminating the worker):
//   page → worker  { id, name, params }          first message may carry { module } instead
//   worker → page  { id, kind: 'loading' }       the job was received
//                  { id, kind: 'done', result }  or { id, kind: 'error', message, panic }
import init, * as engine from './pkg/specdec.js';

let ready = null;

self.onmessage = async ({ data }) => {
  if (data.module) {
    ready = init({ module_or_path: data.module });
    return;
  }
  const { id, name, params } = data;
  self.postMessage({ id, kind: 'loading' });
  try {
    await (ready ??= init({ module_or_path: new URL('./pkg/specdec_bg.wasm', import.meta.url) }));
    self.postMessage({ id, kind: 'done', result: engine[name](params) });
  } catch (e) {
    const panic = e instanceof WebAssembly.RuntimeError;
    let message = e?.message ?? String(e);
    if (panic) {
      try { message = engine.last_panic() || message; } catch (_) { /* the instance is gone */ }
    }
    self.postMessage({ id, kind: 'error', message, panic });
  }
};
