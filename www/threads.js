// Which build of the CPU module this browser gets, and its pool of helper threads.
//
// The CPU module is built four ways (scripts/build-wasm.sh), differing only in how the matmul runs:
//   pkg/         one thread, SIMD128 (multiply, then add): every browser with wasm SIMD
//   pkg/fma/     one thread, relaxed-SIMD fused multiply-add
//   pkg/mt/      threads (shared memory): the matmuls of a large model split across cores
//   pkg/mt-fma/  both
// A module with relaxed SIMD does not even parse in a browser without it (Safari today, Firefox
// before 146), so a 49-byte module holding one f32x4.relaxed_madd is validated first; threads need
// SharedArrayBuffer, which a browser gives only to a cross-origin isolated page (the dev server's
// headers, or sw.js on a static host; never a widget embedded in another site's page that does
// not send them) and only with more than one core to use.
//
// Threads: the page starts `threads − 1` helper workers (pool-worker.js) beside each worker that
// runs jobs (engine.js), each with a port to it, and the worker (worker.js) sends them the same
// compiled module and the same shared memory over those ports; each enters the core's pool
// (`pool_helper`) and stays there, and the worker then grants the pool the helpers that came
// (`pool_start`). The page starts them, not the worker: in Firefox a worker's own `new Worker`
// could block for good when it raced other workers starting (3 of 10 page loads with 8 threads,
// 0 of 20 once the page started them). A helper the page could not start is started by the worker
// itself, as before. Where none comes (a page of another origin whose blob workers cannot start
// ours) the module runs on one thread and says why.

const BODY = [0x00, ...[0, 1, 2].flatMap(() => [0x43, 0, 0, 0, 0, 0xfd, 0x13]), 0xfd, 0x85, 0x02, 0x0b];
/** () → v128: f32x4.relaxed_madd of three splatted zeros. */
const RELAXED_PROBE = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 5, 1, 0x60, 0, 1, 0x7b, 3, 2, 1, 0,
  10, BODY.length + 2, 1, BODY.length, ...BODY]);

/** The most threads the page asks for (one per core up to this). */
const MAX_THREADS = 8;

/**
 * The build for this browser: { dir ('' | 'fma/' | 'mt/' | 'mt-fma/'), threads (how many the pool
 * is to have), fma, why } — why: null, or why there is one thread: 'not-isolated' or 'one-core'
 * (engine.js adds 'unavailable', with `detail`, when the build chosen cannot be had).
 */
export function chooseBuild() {
  let fma = false;
  try { fma = WebAssembly.validate(RELAXED_PROBE); } catch (_) { /* no SIMD at all */ }
  const cores = Math.min(MAX_THREADS, self.navigator?.hardwareConcurrency || 1);
  const shared = self.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function';
  const why = !shared ? 'not-isolated' : cores < 2 ? 'one-core' : null;
  const threads = why ? 1 : cores;
  const dir = `${threads > 1 ? 'mt' : ''}${threads > 1 && fma ? '-' : ''}${fma ? 'fma' : ''}`;
  return { dir: dir ? `${dir}/` : '', threads, fma, why };
}

/**
 * The builds to try for this browser, best first: the one chosen (chooseBuild), then each lesser
 * one it also runs — mt-fma → mt → fma → plain — keeping those the manifest at `manifest` lists
 * (pkg/builds.json, which scripts/build-wasm.sh rewrites as each build is moved in: the dev
 * server builds all but the plain one after the page is up). The manifest is asked for, rather
 * than each build: a missing build would be a 404 in the console. Without a manifest (a network
 * error), every build in that order; one that fails to load is passed over (engine.js). A lesser
 * build than the one chosen says why (`why`: the chosen one's reason for one thread, else
 * 'not-built' with the missing folders in `detail`, or 'unavailable' with the error, which
 * engine.js fills in).
 */
export async function candidates(chosen, manifest) {
  const order = [];
  for (const mt of chosen.threads > 1 ? [true, false] : [false]) {
    for (const fma of chosen.fma ? [true, false] : [false]) {
      const dir = [mt ? 'mt' : '', fma ? 'fma' : ''].filter(Boolean).join('-');
      order.push({ dir: dir ? `${dir}/` : '', threads: mt ? chosen.threads : 1, fma, why: mt ? chosen.why : chosen.why ?? (chosen.threads > 1 ? 'unavailable' : null) });
    }
  }
  let built = null;
  try {
    const r = await fetch(manifest, { cache: 'no-cache' });
    if (r.ok) built = (await r.json()).builds;
  } catch (_) { /* no manifest: try every build */ }
  if (!Array.isArray(built)) return order;
  // The plain build is every browser's last resort, listed or not; a lesser build names the
  // better ones that are missing.
  return order.filter((b) => b.dir === '' || built.includes(b.dir)).map((b) => {
    const missing = order.slice(0, order.indexOf(b)).filter((x) => !built.includes(x.dir)).map((x) => `pkg/${x.dir}`);
    return b.why === 'unavailable' && missing.length ? { ...b, why: 'not-built', detail: missing.join(', ') } : b;
  });
}

/** The helper workers started, held for as long as this worker runs: a Worker object nothing
 * refers to may be collected, and with it its thread (the spec lets a browser end a worker that
 * is no longer "protected"), in the middle of a share the pool then waits for. */
const HELPERS = new Set();

/** A module worker on `url`; from a worker of another origin (a widget embedded in another site's
 * page, whose worker is a blob), a blob module whose one line imports it, as engine.js does. */
function moduleWorker(url) {
  if (url.origin === self.location.origin) return new Worker(url, { type: 'module' });
  const shim = URL.createObjectURL(new Blob([`import ${JSON.stringify(url.href)};\n`], { type: 'text/javascript' }));
  return new Worker(shim, { type: 'module' });
}

/**
 * The page's side of the pool (engine.js): starts the `build.threads − 1` helpers of one jobs'
 * worker with `start` (a module worker on a URL, across origins too), each given one end of a
 * channel; returns { ports: the other ends, for the worker, end() }. One that cannot be started
 * is left to the worker to start (startPool).
 */
export function startHelpers(build, start) {
  const helpers = [];
  const ports = [];
  for (let id = 1; id < build.threads; id += 1) {
    try {
      const h = start(new URL('./pool-worker.js', import.meta.url));
      const { port1, port2 } = new MessageChannel();
      h.postMessage({ port: port1 }, [port1]);
      helpers.push(h);
      ports.push(port2);
    } catch (_) { break; }
  }
  return { ports, end: () => { for (const h of helpers) h.terminate(); } };
}

/**
 * Starts the helpers of `engine` (the CPU module's bindings, instantiated on `module` with its
 * shared `memory`) and grants its pool those that came; resolves to { threads, why, detail }
 * (why: 'helpers-failed', with the browser's words in `detail`, when none came). A helper that
 * failed or did not answer in 10 s is ended; one that came but was not granted leaves the pool.
 */
export async function startPool(engine, module, memory, build, jsUrl, ports = null) {
  if (build.threads < 2) return { threads: 1, why: build.why };
  const came = [];
  let detail = '';
  for (let id = 1; id < build.threads; id += 1) {
    came.push(new Promise((resolve) => {
      // A helper the page started (engine.js) is reached over its port; one the page could not
      // start, this worker starts and holds. Both speak the same protocol.
      const port = ports?.[id - 1];
      let w = null;
      if (!port) {
        try {
          w = moduleWorker(new URL('./pool-worker.js', import.meta.url));
        } catch (e) {
          detail ||= e?.message ?? String(e);
          resolve(false);
          return;
        }
        HELPERS.add(w);
      }
      const fail = (why) => { detail ||= why; if (w) { w.terminate(); HELPERS.delete(w); } resolve(false); };
      const timer = setTimeout(() => fail('no answer in 10 s'), 10000);
      const helper = port ?? w;
      helper.onmessage = ({ data }) => {
        clearTimeout(timer);
        if (data === 'ready') resolve(true);
        else fail(data?.error ?? String(data));
      };
      if (w) w.onerror = (ev) => { ev.preventDefault(); clearTimeout(timer); fail(ev.message || 'its script did not load'); };
      helper.postMessage({ id, module, memory, js: jsUrl });
    }));
  }
  const ok = await Promise.all(came);
  // Only helpers 1, 2, … without a gap can share the work: the core grants those and waits
  // for them to be in (each answered just before entering).
  const run = ok.indexOf(false) < 0 ? ok.length : ok.indexOf(false);
  const threads = engine.pool_start(run + 1, 2000);
  return { threads, why: threads > 1 ? null : 'helpers-failed', detail };
}

/** Why a page runs its models on one thread, in the page's language (`tr`), or ''. */
export function oneThreadReason(why, tr, detail = '') {
  switch (why) {
    case 'not-isolated': return tr('this page is not cross-origin isolated, so the browser gives it no shared memory; its host can send the two headers Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp',
      '本页没有跨源隔离，浏览器不给它共享内存；它的服务器可以发送这两个响应头：Cross-Origin-Opener-Policy: same-origin 和 Cross-Origin-Embedder-Policy: require-corp');
    case 'one-core': return tr('the browser reports one core', '浏览器报告只有一个核心');
    case 'helpers-failed': return tr(`its helper threads could not start (${detail})`, `它的辅助线程无法启动（${detail}）`);
    case 'not-built': return tr(`its threaded builds (${detail}) are not built yet; if the page was just started with scripts/serve.sh, they are being built: reload in a few minutes`,
      `它的多线程版本（${detail}）还没有构建；如果页面刚用 scripts/serve.sh 启动，它们正在构建中：几分钟后刷新`);
    case 'unavailable': return tr(`the engine’s threaded build could not be loaded (${detail}); if the page was just started with scripts/serve.sh, it is still being built: reload in a few minutes`,
      `引擎的多线程版本无法加载（${detail}）；如果页面刚用 scripts/serve.sh 启动，它还在构建中：几分钟后刷新`);
    default: return '';
  }
}

const KERNELS_ZH = { 'SIMD128 (no FMA)': 'SIMD128（无 FMA）', 'SIMD128 + relaxed-SIMD FMA': 'SIMD128 + relaxed-SIMD FMA',
  'AVX2 + FMA': 'AVX2 + FMA', portable: '可移植', "burn's ndarray matmul": 'burn 的 ndarray 矩阵乘法' };

/**
 * How a CPU job ran its matmuls, as one sentence in the page's language (`tr`): threads, FMA and
 * the kernel, and why one thread where there could have been more. `ex`: a report's `execution`
 * — the worker's { pool, split_from, fma, kernel, why, detail } with the job's target `width` and
 * whether it ran a draft trained in the page (`yours`), and for a measured model the core's
 * { threads, pool, fma, kernel, packed, most_rows } over it; for the drafts beside a GPU target
 * the WebGPU module's, with `drafts`; '' without.
 */
export function executionSentence(ex, tr) {
  if (!ex) return '';
  const fma = ex.fma ? tr('FMA on', 'FMA 开启') : tr('FMA off', 'FMA 关闭');
  const kernel = tr(ex.kernel, KERNELS_ZH[ex.kernel] ?? ex.kernel)
    + (ex.packed ? tr(', over weights packed in strips', '，权重按列条打包') : '')
    + (ex.most_rows ? tr(`${ex.packed ? '; smaller layers' : ','} up to ${ex.most_rows} rows a call, burn’s matmul beyond`,
      `${ex.packed ? '；较小的层' : '，'}每次调用最多 ${ex.most_rows} 行，更多行用 burn 的矩阵乘法`) : '');
  const why = oneThreadReason(ex.why, tr, ex.detail);
  const one = tr(`1 thread${why ? `: ${why}` : ''}`, `1 个线程${why ? `（${why}）` : ''}`);
  const ran = (n) => tr(`The matmuls ran on ${n}; ${fma} (kernel: ${kernel}).`, `矩阵乘法用了 ${n}；${fma}（内核：${kernel}）。`);
  if (ex.drafts) {
    return tr(`The draft models’ matmuls ran on the CPU beside the GPU target, on 1 thread (the WebGPU module’s); ${fma} (kernel: ${kernel}).`,
      `草稿模型的矩阵乘法在 GPU 目标模型旁边的 CPU 上运行，用 1 个线程（WebGPU 模块的）；${fma}（内核：${kernel}）。`);
  }
  if (ex.threads != null) {
    // One model, measured: the threads its own calls used.
    return ran(ex.threads > 1 ? tr(`${ex.threads} threads`, `${ex.threads} 个线程`)
      : ex.pool > 1 ? tr('1 thread: this model’s matrices are too small to be worth splitting', '1 个线程（这个模型的矩阵太小，不值得拆分）') : one);
  }
  if (ex.pool > 1 && ex.width === 1 && !ex.yours) {
    return ran(tr(`1 thread: the trained target’s and the drafts’ matrices are too small to be worth splitting across ${ex.pool} threads (a widened target’s are)`,
      `1 个线程（训练好的目标模型和草稿模型的矩阵太小，不值得拆到 ${ex.pool} 个线程上；加宽的目标模型的才值得）`));
  }
  if (ex.pool > 1) {
    const from = Math.round((ex.split_from ?? 0) / 1024);
    return tr(`Matmuls of ${from} k weights or more (a widened target’s) ran on ${ex.pool} threads, smaller ones (the drafts’, the trained target’s) on one; ${fma} (kernel: ${kernel}).`,
      `不少于 ${from}k 个权重的矩阵乘法（加宽的目标模型的）用了 ${ex.pool} 个线程，更小的（草稿模型的、训练好的目标模型的）用一个线程；${fma}（内核：${kernel}）。`);
  }
  return ran(one);
}
