// The offline service worker: after a first visit the course page works without a network.
//
// Every request goes to the network first (so a new version is picked up at once) and each good
// answer is kept; without a network the kept copy answers. Installing keeps the page, its
// scripts and the lecture's module (pkg/math/): a reader of the closed forms downloads no model.
// The models' engine (the build of the CPU module this browser runs, the weights) and the GPU
// module are kept the first time they are loaded: offline, every widget runs that a visit online
// ran (a model widget that never woke online says its engine could not be loaded, and Retry).
// Requests that differ only in their query (pkg/specdec.js?instance=2) share one copy.
//
// Cross-origin isolation on any host: every answer it gives gets COOP/COEP when the host sent
// none (a static host such as the published site sends no headers), so that the page and its
// workers are cross-origin isolated there too — performance.now() then steps 5 µs, not 100 µs.
// The page is controlled from its second load on: app.js reloads it once on the first visit.
const CACHE = 'specdec-playground-v1';
const SHELL = [
  './', 'index.html', 'embed.html', 'docs.html', 'element.html', 'page.css', 'widget.css', 'favicon.svg',
  'app.js', 'engine.js', 'modules.js', 'jobs.js', 'progress.js', 'declare.js', 'widget.js', 'values.js', 'frame.js', 'url.js', 'html.js', 'noise.js', 'runbar.js', 'export.js', 'i18n.js', 'weights.js', 'worker.js', 'train-worker.js', 'trained.js', 'specdec-widget.js', 'asleep.js', 'docs.js', 'version.js', 'threads.js', 'pool-worker.js',
  'widgets/index.js', 'widgets/roofline.js', 'widgets/measured.js', 'widgets/theory.js', 'widgets/exactness.js', 'widgets/exactness-gallery.js', 'widgets/multidraft.js',
  'widgets/tree.js', 'widgets/train.js', 'widgets/boost.js', 'widgets/treepaths.js', 'widgets/choose.js', 'widgets/choosehere.js', 'widgets/likesworld.js', 'widgets/decoding.js', 'widgets/decoding-load.js', 'widgets/decoding-step.js', 'widgets/decoding-auto.js', 'widgets/offload.js', 'widgets/modelfree.js', 'widgets/exercises.js', 'widgets/sections.js',
  'pkg/math/specdec_math.js', 'pkg/math/specdec_math_bg.wasm',
];

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    await cache.addAll(SHELL.map((p) => new Request(p, { cache: 'no-cache' })));
    await self.skipWaiting();
  })());
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) if (name !== CACHE) await caches.delete(name);
    await self.clients.claim();
  })());
});

// The page names the files of an engine it loaded (the build of the CPU module depends on the
// browser, threads.js, so it cannot be in the shell), and they are kept too; the browser's HTTP
// cache usually answers.
self.addEventListener('message', (event) => {
  const keep = Array.isArray(event.data?.keep) ? event.data.keep : [];
  const ours = keep.filter((u) => {
    try {
      const url = new URL(u);
      return url.origin === location.origin && url.pathname.includes('/pkg/');
    } catch (_) {
      return false;
    }
  });
  if (ours.length) event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(ours)).catch(() => {}));
});

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.method !== 'GET' || new URL(request.url).origin !== location.origin) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    try {
      const answer = await fetch(request);
      if (answer.ok) await cache.put(stripQuery(request), answer.clone());
      return isolated(answer);
    } catch (offline) {
      const kept = await cache.match(stripQuery(request), { ignoreSearch: true });
      if (kept) return isolated(kept);
      throw offline;
    }
  })());
});

/** `answer` with COOP/COEP added, unless its host sent them already. */
function isolated(answer) {
  if (answer.headers.has('cross-origin-embedder-policy') || answer.type === 'opaque' || answer.status === 0) return answer;
  const headers = new Headers(answer.headers);
  headers.set('Cross-Origin-Opener-Policy', 'same-origin');
  headers.set('Cross-Origin-Embedder-Policy', 'require-corp');
  return new Response(answer.body, { status: answer.status, statusText: answer.statusText, headers });
}

function stripQuery(request) {
  const u = new URL(request.url);
  u.search = '';
  return new Request(u.href);
}
