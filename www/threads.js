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
// Threads: the worker that runs the jobs (worker.js) starts `threads − 1` helper workers
// (pool-worker.js) on the same compiled module and the same shared memory; each enters the core's
// pool (`pool_helper`) and stays there, and the worker then grants the pool the helpers that came
// (`pool_start`). Where that fails (a browser that refuses nested workers, or a page of another
// origin whose worker is a blob that cannot start ours) the module runs on one thread and says why.

const BODY = [0x00, ...[0, 1, 2].flatMap(() => [0x43, 0, 0, 0, 0, 0xfd, 0x13]), 0xfd, 0x85, 0x02, 0x0b];
/** () → v128: f32x4.relaxed_madd of three splatted zeros. */
const RELAXED_PROBE = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 1, 5, 1, 0x60, 0, 1, 0x7b, 3, 2, 1, 0,
  10, BODY.length + 2, 1, BODY.length, ...BODY]);

/** The most threads the page asks for (one per core up to this). */
const MAX_THREADS = 8;

/**
 * The build for this browser: { dir ('' | 'fma/' | 'mt/' | 'mt-fma/'), threads (how many the pool
 * is to have), fma, why } — why: null, or why there is one thread: 'not-isolated' or 'one-core'
 * (engine.js adds 'not-built' when the build chosen cannot be had).
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
 * Starts the helpers of `engine` (the CPU module's bindings, instantiated on `module` with its
 * shared `memory`) and grants its pool those that came; resolves to { threads, why } (why:
 * 'helpers-failed' with the browser's words in `detail` when none came).
 */
export async function startPool(engine, module, memory, build, jsUrl) {
  if (build.threads < 2) return { threads: 1, why: build.why };
  const came = [];
  let detail = '';
  for (let id = 1; id < build.threads; id += 1) {
    came.push(new Promise((resolve) => {
      let w;
      try {
        w = new Worker(new URL('./pool-worker.js', import.meta.url), { type: 'module' });
      } catch (e) {
        detail ||= e?.message ?? String(e);
        resolve(false);
        return;
      }
      const timer = setTimeout(() => { detail ||= 'no answer in 10 s'; resolve(false); }, 10000);
      w.onmessage = ({ data }) => { clearTimeout(timer); if (data?.error) detail ||= data.error; resolve(data === 'ready'); };
      w.onerror = (ev) => { ev.preventDefault(); clearTimeout(timer); detail ||= ev.message || 'its script did not load'; resolve(false); };
      w.postMessage({ id, module, memory, js: jsUrl });
    }));
  }
  const ok = (await Promise.all(came)).filter(Boolean).length;
  // The helpers answered just before entering the pool: the core waits for them to be in.
  const threads = engine.pool_start(ok + 1, 2000);
  return { threads, why: threads > 1 ? null : 'helpers-failed', detail };
}

/** Why a page runs its models on one thread, in the page's language (`tr`), or ''. */
export function oneThreadReason(why, tr, detail = '') {
  switch (why) {
    case 'not-isolated': return tr('this page is not cross-origin isolated, so the browser gives it no shared memory; its host can send the two headers Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp',
      '本页没有跨源隔离，浏览器不给它共享内存；它的服务器可以发送这两个响应头：Cross-Origin-Opener-Policy: same-origin 和 Cross-Origin-Embedder-Policy: require-corp');
    case 'one-core': return tr('the browser reports one core', '浏览器报告只有一个核心');
    case 'helpers-failed': return tr(`its helper threads could not start (${detail})`, `它的辅助线程无法启动（${detail}）`);
    case 'not-built': return tr('the threaded and FMA builds of the engine are not there yet (scripts/serve.sh builds them after the page is up: reload in a few minutes)',
      '引擎的多线程和 FMA 版本还没有构建好（scripts/serve.sh 在页面启动后才构建它们：几分钟后刷新）');
    default: return '';
  }
}

/**
 * How a CPU job ran its matmuls, as one sentence in the page's language (`tr`): threads, FMA and
 * the kernel, and why one thread where there could have been more. `ex`: a report's `execution`
 * (the core's { threads, fma, kernel }, with the worker's { why, detail, wanted }); '' without.
 */
export function executionSentence(ex, tr) {
  if (!ex) return '';
  const fma = ex.fma ? tr('FMA on', 'FMA 开启') : tr('FMA off', 'FMA 关闭');
  const why = oneThreadReason(ex.why, tr, ex.detail);
  const threads = ex.threads > 1 ? tr(`${ex.threads} threads`, `${ex.threads} 个线程`)
    : tr(`1 thread${why ? `: ${why}` : ''}`, `1 个线程${why ? `：${why}` : ''}`);
  return tr(`The matmuls ran on ${threads}; ${fma} (kernel: ${ex.kernel}).`, `矩阵乘法在${threads}上运行；${fma}（内核：${ex.kernel}）。`);
}
