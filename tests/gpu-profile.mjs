// Profile (not a test): where one WebGPU model call's time goes in headless Chromium
// (SwiftShader). Wraps the WebGPU entry points the GPU module uses, counts them per call, and
// times how long reading the logits back (mapAsync) waits.
//   node tests/gpu-profile.mjs [--runs 10] [--module /pkg/gpu/] [--cpu-profile] [--backend flex]
// --module: a GPU module built with its name section (wasm-bindgen without --remove-name-section)
// makes --cpu-profile's table name the Rust functions where the main thread's time goes.
import { start, open } from './browser.mjs';

const arg = (name, d) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : d);
const runs = Number(arg('--runs', 10));
const module = arg('--module', '/pkg/gpu/');
const cpuProfile = process.argv.includes('--cpu-profile');
// --backend flex profiles the CPU path of a CPU module (`--module /pkg/` or one generated with its
// name section; the GPU module's flex runs only drafts): its CPU profile is the useful part.
const backend = arg('--backend', 'wgpu');

const env = await start();
try {
  const { page } = await open(env, 'embed.html?widget=theory');
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') console.error(`console ${m.type()}: ${m.text()}`); });
  const cdp = cpuProfile ? await page.context().newCDPSession(page) : null;
  await page.evaluate(async ({ module, backend }) => {
    const stats = {};
    const note = (name, ms = 0) => { const s = (stats[name] ??= { n: 0, ms: 0 }); s.n += 1; s.ms += ms; };
    const wrap = (proto, name, timed = false) => {
      const original = proto[name];
      if (!original) return;
      proto[name] = function wrapped(...args) {
        const t0 = performance.now();
        const r = original.apply(this, args);
        if (r instanceof Promise) return r.then((v) => { note(name + ' (awaited)', performance.now() - t0); return v; });
        note(name, timed ? performance.now() - t0 : performance.now() - t0);
        return r;
      };
    };
    for (const n of ['dispatchWorkgroups', 'setPipeline', 'setBindGroup', 'end']) wrap(GPUComputePassEncoder.prototype, n);
    // Which kernels run: every pipeline set, by its label (cubecl names a pipeline after its kernel).
    const pipelines = {};
    const setPipeline = GPUComputePassEncoder.prototype.setPipeline;
    GPUComputePassEncoder.prototype.setPipeline = function labelled(p) {
      const k = (p.label || '(no label)').replace(/[0-9a-f]{8,}/g, '…').slice(0, 90);
      pipelines[k] = (pipelines[k] ?? 0) + 1;
      return setPipeline.call(this, p);
    };
    stats.pipelines = pipelines;
    for (const n of ['beginComputePass', 'copyBufferToBuffer', 'finish', 'clearBuffer']) wrap(GPUCommandEncoder.prototype, n);
    for (const n of ['submit', 'writeBuffer', 'onSubmittedWorkDone']) wrap(GPUQueue.prototype, n);
    for (const n of ['createBuffer', 'createBindGroup', 'createComputePipeline', 'createComputePipelineAsync', 'createShaderModule', 'createCommandEncoder', 'createBindGroupLayout', 'createPipelineLayout']) wrap(GPUDevice.prototype, n);
    for (const n of ['mapAsync', 'getMappedRange', 'unmap', 'destroy']) wrap(GPUBuffer.prototype, n);
    const [gpu, { fetchWeights, provideWeights }] = await Promise.all([import(`${module}specdec.js`), import('/weights.js')]);
    await gpu.default({ module_or_path: `${module}specdec_bg.wasm` });
    await provideWeights(gpu, await fetchWeights(new URL('/pkg/weights/', location.href)));
    // Warm-up (compiles every pipeline), then the measured calls.
    await gpu.likesworld_latency({ backend, runs: 10, warmup: 2 });
    for (const k of Object.keys(stats)) delete stats[k];
    for (const k of Object.keys(pipelines)) delete pipelines[k];
    stats.pipelines = pipelines;
    window.profiled = { gpu, stats };
  }, { module, backend });
  if (cdp) { await cdp.send('Profiler.enable'); await cdp.send('Profiler.setSamplingInterval', { interval: 200 }); await cdp.send('Profiler.start'); }
  const out = await page.evaluate(async ({ runs, backend }) => {
    const { gpu, stats } = window.profiled;
    const t0 = performance.now();
    const lat = await gpu.likesworld_latency({ backend, runs, warmup: 0 });
    const wall = performance.now() - t0;
    return { wall, lat, stats };
  }, { runs, backend });
  if (cdp) {
    const { profile } = await cdp.send('Profiler.stop');
    const self = new Map();
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const dt = profile.timeDeltas;
    let total = 0;
    profile.samples.forEach((id, i) => {
      const n = byId.get(id);
      const name = `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').pop()}`;
      self.set(name, (self.get(name) ?? 0) + (dt[i] ?? 0));
      total += dt[i] ?? 0;
    });
    console.log(`main-thread CPU profile, self time (${(total / 1000).toFixed(0)} ms sampled):`);
    for (const [name, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 40)) {
      console.log(`  ${(us / 1000).toFixed(1).padStart(9)} ms  ${(100 * us / total).toFixed(1).padStart(5)}%  ${name.slice(0, 110)}`);
    }
  }
  // likesworld_latency times 3 models × 3 workloads × (runs rounded up to blocks of 10) calls.
  const calls = 9 * Math.ceil(runs / 10) * 10;
  console.log(`wall ${out.wall.toFixed(0)} ms for ${calls} calls (${(out.wall / calls).toFixed(1)} ms per call)`);
  console.log('call'.padEnd(40), 'per call', 'ms per call');
  const { pipelines = {} } = out.stats;
  delete out.stats.pipelines;
  if (backend === 'wgpu') {
    console.log('kernels per call, by pipeline label:');
    for (const [k, n] of Object.entries(pipelines).sort((a, b) => b[1] - a[1])) console.log(`  ${(n / calls).toFixed(1).padStart(6)}  ${k}`);
  }
  for (const [k, s] of Object.entries(out.stats).sort((a, b) => b[1].ms - a[1].ms)) {
    console.log(k.padEnd(40), (s.n / calls).toFixed(1).padStart(8), (s.ms / calls).toFixed(2).padStart(10));
  }
  console.log(JSON.stringify(out.lat.target));
} finally {
  await env.close();
}
