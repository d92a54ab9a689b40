// Runs long engine calls off the main thread, so the page never freezes. Protocol (the page
// cancels a job by terminating the worker):
//   page → worker  { module, weights }            first: the compiled CPU module and the weights
//                  { lectureModule }             or, for lecture jobs, the lecture's compiled module
//                  { id, name, params, test, lecture }  a job (test: hooks for the browser tests;
//                        lecture: it runs on the lecture's module, with no model)
//   worker → page  { id, kind: 'loading' }       the job was received
//                  { id, kind: 'progress', progress }  what a long (async) job is doing now, as
//                        data: { phase, … } (the core's `Step`: { phase: 'count', done, total,
//                        backend } and the like, or this worker's 'gpu-download', 'weights-download', 'device-lost');
//                        the page words it in its language (engine.js `progressText`)
//                  { id, kind: 'done', result }  or { id, kind: 'error', message, panic, load }
//                        (load: the engine itself could not be loaded here, worth a retry)
// Exports that touch WebGPU are async (a browser hands out adapters and buffer read-backs only
// asynchronously); they take a progress callback as their second argument.
//
// A lecture job (`lecture`: Monte Carlo, the gallery of bugs) runs on the lecture's module
// (pkg/math/, no burn), which this worker loads itself; a model job on one of two builds of the
// models' engine: the CPU module (pkg/, flex and ndarray, compiled once by the page
// and passed in with the build the page chose for this browser — threads, FMA: threads.js — whose
// helper threads this worker starts) and the GPU module (pkg/gpu/, burn's wgpu backend, with flex
// for the drafts that run on the CPU beside the GPU target; several times larger), fetched only when a job asks for the WebGPU backend and this browser's WebGPU
// can run it. Whenever WebGPU cannot, the job runs on the CPU module with flex and a note says
// why. Neither module embeds the models' weights: the page downloads them once and passes them
// in, and each instance gets them before its first job.
import { fetchHidden, fetchPool, fetchWeights, needsHidden, needsPool, provideHidden, providePool, provideWeights } from './weights.js';
import { loadTrained } from './trained.js';
import { startPool } from './threads.js';

let lectureReady = null;
let lectureModule = null; // the lecture's compiled module, as the page hands it over
let cpuReady = null;
let gpuReady = null;
let gpuModule = null; // the compiled GPU module, kept for a fresh instance after a device loss
let gpuInstance = 0;
let weights = null; // a promise of { target: ArrayBuffer, … }
// The page's language, from the current job's parameters (engine.js adds it to every job; a
// worker has no localStorage to read it from): the worker's own notes follow it.
let zh = false;
const tr = (en, zhText) => (zh ? zhText : en);

/** The weights the page passed in, or (if it could not) downloaded here; a failure does not stick. */
function weightsReady() {
  weights ??= fetchWeights(new URL('./pkg/weights/', import.meta.url))
    .catch((e) => { weights = null; throw e; });
  return weights;
}

let hidden = null; // a promise of { medusa: ArrayBuffer, … }, fetched for the first job that needs it

/** The hidden-state drafts' weights, downloaded on first need; a failure does not stick. */
function hiddenReady() {
  hidden ??= fetchHidden(new URL('./pkg/weights/', import.meta.url))
    .catch((e) => { hidden = null; throw e; });
  return hidden;
}

let pools = null; // likewise the boost-tuned pools' weights

function poolReady() {
  pools ??= fetchPool(new URL('./pkg/weights/', import.meta.url))
    .catch((e) => { pools = null; throw e; });
  return pools;
}

let build = { dir: '', threads: 1, fma: false, why: null }; // the page's choice (threads.js)
// How the CPU module runs its matmuls here: { threads, threaded, fma, kernel, why, detail }, added
// to every CPU job's report (why: the reason for one thread, as threads.js names it).
let execution = null;

let helperPorts = null; // ports to the pool's helpers, which the page started (engine.js)
let pool = null; // the helper threads' start, once per instance (a second set would share its ids)

/** The lecture's module (its own bindings; the page's cache has both files); a failure does not stick. */
function lectureEngine() {
  lectureReady ??= (async () => {
    const m = await import(new URL('./pkg/math/specdec_math.js', import.meta.url).href);
    await m.default({ module_or_path: lectureModule ?? new URL('./pkg/math/specdec_math_bg.wasm', import.meta.url) });
    return m;
  })();
  lectureReady.catch(() => { lectureReady = null; });
  return lectureReady;
}

function cpuEngine(module) {
  cpuReady ??= (async () => {
    const js = new URL(`./pkg/${build.dir}specdec.js`, import.meta.url).href;
    const compiled = module ?? await WebAssembly.compileStreaming(fetch(new URL(`./pkg/${build.dir}specdec_bg.wasm`, import.meta.url)));
    const [m, ws] = await Promise.all([import(js), weightsReady()]);
    // wasm-bindgen keeps one instance per bindings module: a retry after a failure gets it again.
    const exports = await m.default({ module_or_path: compiled });
    pool ??= startPool(m, compiled, exports.memory, build, js, helperPorts);
    const started = await pool;
    execution = { ...m.execution(), why: started.why ?? build.why, detail: started.detail ?? build.detail };
    return provideWeights(m, ws);
  })();
  cpuReady.catch(() => { cpuReady = null; });
  return cpuReady;
}

// WebGPU devices the GPU module asked for, watched for loss (a driver reset, a GPU process crash,
// or the tests' `loseDevice` hook): a lost device fails its next call or never answers.
const devices = new Set();
let onDeviceLost = null;
function watchDevices() {
  if (typeof GPUAdapter === 'undefined' || GPUAdapter.prototype.requestDevice.watched) return;
  const request = GPUAdapter.prototype.requestDevice;
  const watched = async function requestDevice(...args) {
    const device = await request.apply(this, args);
    devices.add(device);
    device.lost.then((info) => {
      devices.delete(device);
      gpuReady = null; // the instance's runtime holds the dead device: the next job starts afresh
      onDeviceLost?.(info);
    });
    return device;
  };
  watched.watched = true;
  GPUAdapter.prototype.requestDevice = watched;
}

function gpuEngine(progress) {
  gpuReady ??= (async () => {
    progress({ phase: 'gpu-download' });
    watchDevices();
    // A fresh JavaScript module (hence instance) per generation: after a device loss, burn's
    // runtime in the old instance still holds the dead device.
    gpuInstance += 1;
    gpuModule ??= WebAssembly.compileStreaming(fetch(new URL('./pkg/gpu/specdec_bg.wasm', import.meta.url)))
      .catch((e) => { gpuModule = null; throw e; });
    // Awaited below, after the import: if the import fails first, this failure is still handled.
    gpuModule.catch(() => {});
    const gpu = await import(`./pkg/gpu/specdec.js?instance=${gpuInstance}`);
    await gpu.default({ module_or_path: await gpuModule });
    return provideWeights(gpu, await weightsReady());
  })();
  return gpuReady;
}

// Why WebGPU cannot run jobs in this browser, as a note in the page's language, or null. Asked
// once, before the GPU module is downloaded:
// - no WebGPU at all, or no adapter (the GPU module would be 2.4 MB downloaded for nothing);
// - an adapter without timestamp queries, as in Firefox and Safari today: burn's WebGPU runtime
//   (cubecl-wgpu 0.11) panics when it starts on one ("cannot profile on web assembly without
//   timestamp_query"), so such a browser gets the CPU and the reason, not a crashed engine.
// The GPU module itself then says whether it got a device (`webgpu_unavailable`).
let unusableChecked = null;
function webgpuUnusable() {
  unusableChecked ??= (async () => {
    const adapter = await navigator.gpu?.requestAdapter().catch(() => null);
    if (!adapter) return 'none';
    return adapter.features.has('timestamp-query') ? null : 'timestamps';
  })();
  return unusableChecked;
}

/** The note for a job sent to the CPU because WebGPU is unusable here (written by the core). */
async function unusableNote(why, lang) {
  const reason = why === 'timestamps' ? 'no-timestamps' : (self.navigator.gpu ? 'no-adapter' : 'no-webgpu');
  return (await cpuEngine()).webgpu_fallback_note({ reason, lang });
}

/**
 * The engine for a job: { engine, params, note }. A WebGPU job runs on the CPU module with flex,
 * and says why, when this browser's WebGPU is unusable, when the GPU module cannot be had (not
 * built yet — the dev server builds it after the page is up — or not fetchable; the next WebGPU
 * job tries again), or when the GPU module gets no device.
 */
async function engineFor(params, progress) {
  if (params?.backend !== 'wgpu') return { engine: await cpuEngine(), params };
  const onCpu = async (note) => ({ engine: await cpuEngine(), params: { ...params, backend: 'flex' }, note });
  const unusable = await webgpuUnusable();
  if (unusable) return onCpu(await unusableNote(unusable, params.lang));
  let engine;
  try {
    engine = await gpuEngine(progress);
  } catch (e) {
    gpuReady = null;
    // Offline, the module is there only if it was loaded once online (sw.js keeps it then).
    const note = self.navigator.onLine === false
      ? tr(`The WebGPU engine is not available offline: it is kept for offline use only once it has been loaded with a network, so this ran on the CPU (flex) (${e?.message ?? e}).`,
        `离线时没有 WebGPU 引擎：只有联网加载过一次之后它才会被保存下来供离线使用，所以这次在 CPU（flex）上运行（${e?.message ?? e}）。`)
      : tr(`The WebGPU engine could not be loaded (${e?.message ?? e}), so this ran on the CPU (flex). `
        + 'If the page was just started with scripts/serve.sh, the WebGPU module is still being built: try WebGPU again in a few minutes.',
      `WebGPU 引擎无法加载（${e?.message ?? e}），所以这次在 CPU（flex）上运行。`
        + '如果页面刚用 scripts/serve.sh 启动，WebGPU 模块还在构建中：几分钟后再试 WebGPU。');
    return onCpu(note);
  }
  // An adapter that gives no device: the GPU module says why (the CPU module, with its threads and
  // FMA, runs the job instead).
  const note = await engine.webgpu_unavailable({ lang: params.lang });
  if (note) return onCpu(note);
  return { engine, params, gpu: true };
}

class DeviceLost extends Error {}

/**
 * Runs a job on the GPU module, racing it against the loss of the WebGPU device. On a loss the
 * GPU instance is dropped (the next WebGPU job starts a fresh one) and the job runs again from
 * the start on the CPU module with flex, with a note saying so.
 */
async function runOnGpu(job, name, progress, test) {
  let lost;
  const loss = new Promise((_, reject) => {
    lost = (info) => reject(new DeviceLost(`${info?.message || info?.reason || tr('no reason given', '没有给出原因')}`));
  });
  loss.catch(() => {});
  onDeviceLost = lost;
  let restore = () => {};
  if (test?.loseDevice) {
    // The hook: destroy the device right after the job's first submission of GPU work, so that
    // the loss lands mid-run (between two awaits of the module).
    const submit = GPUQueue.prototype.submit;
    GPUQueue.prototype.submit = function submitThenLose(...args) {
      const r = submit.apply(this, args);
      GPUQueue.prototype.submit = submit;
      queueMicrotask(() => { for (const d of devices) d.destroy(); });
      return r;
    };
    restore = () => { GPUQueue.prototype.submit = submit; };
  }
  const run = job.engine[name](job.params, progress);
  run.catch(() => {}); // after a loss its failure (or silence) no longer matters
  try {
    return await Promise.race([run, loss]);
  } catch (error) {
    // A call on a lost device may fail before the loss itself is reported: wait a moment for it.
    const e = error instanceof DeviceLost ? error
      : await Promise.race([loss.catch((l) => l), new Promise((ok) => { setTimeout(ok, 250, null); })]);
    if (!(e instanceof DeviceLost)) throw error;
    progress({ phase: 'device-lost' });
    const result = await (await cpuEngine())[name]({ ...job.params, backend: 'flex' }, progress);
    const note = tr(`The WebGPU device was lost during this run (${e.message}), so it ran again on the CPU (flex). `
      + 'The next WebGPU job asks for a new device.',
    `这次运行中 WebGPU 设备丢失（${e.message}），所以在 CPU（flex）上重新运行了。下一个 WebGPU 任务会申请新设备。`);
    if (result && typeof result === 'object') result.note = [result.note, note].filter(Boolean).join(' ');
    return result;
  } finally {
    onDeviceLost = null;
    restore();
  }
}

self.onmessage = async ({ data }) => {
  if (data.lectureModule) {
    lectureModule = data.lectureModule;
    return;
  }
  if (data.module || data.weights) {
    if (data.build) build = data.build;
    if (data.helpers) helperPorts = data.helpers;
    if (data.weights) weights ??= Promise.resolve(data.weights);
    if (data.module) cpuEngine(data.module).catch(() => {});
    return;
  }
  const { id, name, params, test, lecture } = data;
  zh = params?.lang === 'zh';
  self.postMessage({ id, kind: 'loading' });
  const progress = (step) => self.postMessage({ id, kind: 'progress', progress: step });
  let engine = null;
  let job;
  try {
    if (lecture) job = { engine: await lectureEngine(), params, lecture: true };
    else job = await engineFor(params, progress);
    if (needsHidden(name, params)) {
      if (!hidden) progress({ phase: 'weights-download' });
      const hs = await hiddenReady();
      provideHidden(job.engine, hs);
      // A WebGPU job that loses its device runs again on the CPU module.
      if (job.gpu) provideHidden(await cpuEngine(), hs);
    }
    if (params?.trained_draft) {
      // The draft trained in the page (the training widget keeps it in the browser's storage).
      // Forgotten since: null, which the module forgets too (the job then says there is none).
      const bytes = (await loadTrained())?.bytes ?? null;
      job.engine.provide_trained_draft({ bytes, lang: params.lang });
      if (job.gpu) (await cpuEngine()).provide_trained_draft({ bytes, lang: params.lang });
    }
    if (needsPool(name)) {
      if (!pools) progress({ phase: 'weights-download' });
      const ps = await poolReady();
      providePool(job.engine, ps);
      if (job.gpu) providePool(await cpuEngine(), ps);
    }
  } catch (e) {
    // A module or the weights could not be had (the network, a host without CORS).
    self.postMessage({ id, kind: 'error', message: e?.message ?? String(e), load: true });
    return;
  }
  try {
    engine = job.engine;
    const result = job.gpu ? await runOnGpu(job, name, progress, test) : await engine[name](job.params, progress);
    // Two notes, two sentences: no space between Chinese ones.
    if (job.note && result && typeof result === 'object') result.note = [result.note, job.note].filter(Boolean).join(job.params?.lang === 'zh' ? '' : ' ');
    // How the matmuls ran, for a job on flex (the few-rows kernel and its threads are flex's).
    if (!job.gpu && !job.lecture && (job.params?.backend ?? 'flex') === 'flex' && result && typeof result === 'object' && !Array.isArray(result)) {
      result.execution = { ...execution, width: Number(job.params?.target_width ?? 1), yours: !!job.params?.trained_draft, ...result.execution };
    }
    // Beside a GPU target the draft models ran on the GPU module's own flex: one thread, its kernel.
    if (job.gpu && result?.drafts_on) result.execution = { ...job.engine.execution?.(), drafts: true };
    self.postMessage({ id, kind: 'done', result });
  } catch (e) {
    const panic = e instanceof WebAssembly.RuntimeError;
    let message = e?.message ?? String(e);
    if (panic) {
      let recorded = null;
      try { recorded = engine?.last_panic(); } catch (_) { /* the instance is gone */ }
      // A trap with no panic recorded: Rust aborts when an allocation fails, as on a device with
      // too little memory for a widened target (the engine restarts; narrower widths still run).
      message = recorded || tr(`the engine stopped (${message}): most likely this device ran out of memory for the model; a narrower target width needs less`,
        `引擎停止了（${message}）：很可能是这台设备的内存不够装下这个模型；窄一些的目标模型宽度需要的内存更少`);
    }
    // A WebGPU job sent to the CPU that then failed: why WebGPU could not run it comes first.
    if (!panic && job?.note && !message.includes(job.note)) message = `${job.note} ${message}`;
    self.postMessage({ id, kind: 'error', message, panic });
  }
};
