// Runs long engine calls off the main thread, so the page never freezes. Protocol (the page
// cancels a job by terminating the worker):
//   page → worker  { id, name, params }          first message may carry { module } instead
//   worker → page  { id, kind: 'loading' }       the job was received
//                  { id, kind: 'progress', message }   what a long (async) job is doing now
//                  { id, kind: 'done', result }  or { id, kind: 'error', message, panic }
// Exports that touch WebGPU are async (a browser hands out adapters and buffer read-backs only
// asynchronously); they take a progress callback as their second argument.
//
// Two builds of the same engine: the CPU module (pkg/, compiled once by the page and passed in)
// and the GPU module (pkg/gpu/, burn's wgpu backend added; four times larger), fetched only
// when a job asks for the WebGPU backend.
import init, * as cpu from './pkg/specdec.js';

let cpuReady = null;
let gpuReady = null;

function cpuEngine() {
  cpuReady ??= init({ module_or_path: new URL('./pkg/specdec_bg.wasm', import.meta.url) }).then(() => cpu);
  return cpuReady;
}

/**
 * The engine for a job: { engine, params, note }. Without the GPU module (not built yet — the
 * dev server builds it after the page is up — or not fetchable) a WebGPU job runs on the CPU
 * module with flex and says so; the next WebGPU job tries the GPU module again.
 */
async function engineFor(params, progress) {
  if (params?.backend !== 'wgpu') return { engine: await cpuEngine(), params };
  gpuReady ??= (async () => {
    progress('downloading the WebGPU engine');
    const gpu = await import('./pkg/gpu/specdec.js');
    await gpu.default({ module_or_path: new URL('./pkg/gpu/specdec_bg.wasm', import.meta.url) });
    return gpu;
  })();
  try {
    return { engine: await gpuReady, params };
  } catch (e) {
    gpuReady = null;
    const note = `The WebGPU engine could not be loaded (${e?.message ?? e}), so this ran on the CPU (flex). `
      + 'If the page was just started with scripts/serve.sh, the WebGPU module is still being built: try WebGPU again in a few minutes.';
    return { engine: await cpuEngine(), params: { ...params, backend: 'flex' }, note };
  }
}

self.onmessage = async ({ data }) => {
  if (data.module) {
    cpuReady ??= init({ module_or_path: data.module }).then(() => cpu);
    return;
  }
  const { id, name, params } = data;
  self.postMessage({ id, kind: 'loading' });
  const progress = (message) => self.postMessage({ id, kind: 'progress', message });
  let engine = null;
  try {
    const job = await engineFor(params, progress);
    engine = job.engine;
    const result = await engine[name](job.params, progress);
    if (job.note && result && typeof result === 'object') result.note = [result.note, job.note].filter(Boolean).join(' ');
    self.postMessage({ id, kind: 'done', result });
  } catch (e) {
    const panic = e instanceof WebAssembly.RuntimeError;
    let message = e?.message ?? String(e);
    if (panic) {
      try { message = engine?.last_panic() || message; } catch (_) { /* the instance is gone */ }
    }
    self.postMessage({ id, kind: 'error', message, panic });
  }
};
