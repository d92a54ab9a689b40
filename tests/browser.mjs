// Shared by the browser tests, the benchmark and the screenshot tool: start the static server on
// a free port and launch Debian's Chromium (never a downloaded browser) with WebGPU enabled (SwiftShader);
// playwright gives it a fresh temporary profile.
import { chromium } from 'playwright-core';
import { serve } from '../scripts/serve.mjs';

export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

/**
 * `webgpu: false` leaves WebGPU off, as on a machine without a usable adapter; `isolation: false`
 * serves without COOP/COEP, as a static host does. `CHROMIUM_ARGS` (space-separated) adds flags:
 * scripts/gpu-bench.sh asks for a hardware WebGPU adapter with them.
 */
export async function start({ webgpu = true, isolation = true } = {}) {
  const { server, url } = await serve({ port: 0, isolation });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox', ...(webgpu ? ['--enable-unsafe-webgpu'] : []), '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-dev-shm-usage', '--disable-quic',
      ...(process.env.CHROMIUM_ARGS ?? '').split(' ').filter(Boolean),
    ],
  });
  return {
    url,
    browser,
    async close() {
      await browser.close();
      await new Promise((ok) => server.close(ok));
    },
  };
}

/**
 * Opens `path` in a fresh context, collecting console errors and page errors; waits for <html
 * data-ready>. With `requests` (an array), the path of every request the page and its workers make
 * from the start is pushed onto it. With `workerPrelude` (script text), the page's worker runs it
 * before its own code (a test's stand-in for what a browser's WebGPU lacks). The course page's
 * model widgets are then woken (`wake`), unless `asleep`.
 */
export async function open(env, path, {
  width = 1280, height = 900, serviceWorkers = 'block', ready = 'html[data-ready="true"]', requests = null, workerPrelude = null, prepare = null,
  asleep = false,
} = {}) {
  // The offline service worker is off unless asked for: it would see requests before a test's
  // page.route, and keep copies between the tests' pages.
  const page = await env.browser.newPage({ viewport: { width, height }, serviceWorkers });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('requestfailed', (r) => errors.push(`request failed: ${r.url()}`));
  if (requests) page.on('request', (r) => requests.push(new URL(r.url()).pathname));
  if (workerPrelude) {
    await page.route('**/worker.js', async (route) => {
      const response = await route.fetch();
      // The server's own headers (a cross-origin-isolated page loads only a worker that sends COEP).
      route.fulfill({ response, body: `${workerPrelude}\n${await response.text()}` });
    });
  }
  if (prepare) await prepare(page); // routes a test sets before the page loads
  await page.goto(env.url + path);
  await page.waitForSelector(ready, { timeout: 30_000 });
  if (!asleep && ready === 'html[data-ready="true"]') await wake(page);
  return { page, errors };
}

/**
 * Follows the requests of `page` (its workers' included) and its navigations, from before its
 * first document: the function returned tells whether a failed request was cut off by a
 * navigation of the page. The language switch reloads the page, and Chromium aborts the old
 * document's requests still in flight (its worker's script, the thread pool's) with
 * net::ERR_ABORTED when the new document commits; a reader sees nothing of it. So a request
 * counts as cut off when it failed with net::ERR_ABORTED after a navigation of the main frame
 * began, having started before that navigation's document was loaded — decided by the
 * navigation, whatever the request's name, and without waiting for the network to go quiet
 * before a switch (which raced the worker's requests).
 */
export function navigations(page) {
  let seq = 0; // the order of the events, as they reach this process
  const started = new Map(); // request → seq
  const navs = []; // { start, loaded }: a main-frame document request, and its DOMContentLoaded
  const cut = new Set(); // requests cut off by a navigation
  page.on('request', (r) => {
    started.set(r, (seq += 1));
    if (r.isNavigationRequest() && r.frame() === page.mainFrame()) navs.push({ start: seq, loaded: Infinity });
  });
  page.on('domcontentloaded', () => {
    seq += 1;
    for (const n of navs) if (n.loaded === Infinity) n.loaded = seq;
  });
  page.on('requestfailed', (r) => {
    const failed = (seq += 1);
    if (r.failure()?.errorText === 'net::ERR_ABORTED' && navs.some((n) => n.start < failed && started.get(r) < n.loaded)) cut.add(r.url());
  });
  return {
    /** `errors` (as `open` collects them) less the requests a navigation cut off. */
    errorsBut(errors) {
      return errors.filter((e) => !(e.startsWith('request failed: ') && cut.has(e.slice('request failed: '.length))));
    },
  };
}

/**
 * Opens `path` as `open` does, following its navigations from the start (`navigations`): for a
 * test that reloads the page, as the language switch does.
 */
export async function openFollowed(env, path, options = {}) {
  let nav;
  const r = await open(env, path, { ...options, prepare: async (page) => { nav = navigations(page); await options.prepare?.(page); } });
  return { ...r, nav };
}

/**
 * Scrolls the course page past every model widget still asleep until it comes into view (as a
 * reader reading down the page), waits until each is mounted, and scrolls back to the top. Every
 * test but a first visit's (`open(…, { asleep: true })`: tests/lecture.test.mjs) sees the page
 * so, every widget drawn.
 */
export async function wake(page) {
  const ids = await page.$$eval('[data-wakes="near"]', (els) => els.map((e) => e.id));
  if (!ids.length) return;
  for (const id of ids) {
    // Scrolled to, and again while the page's layout still moves (another widget drawing, a
    // job's progress), until the observer wakes it: waiting for the widget to be still, as
    // Playwright's scrolling does, timed out beside a running job.
    await page.waitForFunction((i) => {
      const e = document.getElementById(i);
      if (!e.dataset.wakes) return true;
      e.scrollIntoView({ block: 'center' });
      return false;
    }, id, { timeout: 30_000, polling: 250 });
  }
  // Mounted: drawn once (data-state), or refused with its reason (an alert).
  await page.waitForFunction((all) => all.every((id) => {
    const e = document.getElementById(id);
    return !e.dataset.wakes && (e.dataset.state || e.querySelector('[role="alert"].shown'));
  }), ids, { timeout: 60_000 });
  await page.evaluate(() => window.scrollTo(0, 0));
}

/**
 * Rewrites the core's `presets` export on its way to `page` (for tests of controls that follow
 * the core's declarations): `change` is code run on the declarations `p` before they are
 * returned. Give it as `open`'s `prepare`. A request the closing page abandons is let go.
 */
export async function rewritePresets(page, change) {
  // The lecture's module declares the analytic widgets' (`lecture_presets`), the models' CPU
  // module, whichever build the page runs (www/threads.js), the same and the model widgets'.
  // A change to a model widget's declarations does not apply to the lecture's, which lack them.
  const rewrite = (name) => async (route) => {
    try {
      const response = await route.fetch();
      const apply = name === 'presets' ? change : `try { ${change} } catch (e) { if (!(e instanceof TypeError)) throw e; }`;
      const body = (await response.text()).replace(`export function ${name}()`, 'function presetsDeclared()')
        + `\nexport function ${name}() { const p = presetsDeclared(); ${apply} return p; }\n`;
      await route.fulfill({ response, body });
    } catch {
      // The page closed while this request was under way.
    }
  };
  await page.route(/\/pkg\/math\/specdec_math\.js/, rewrite('lecture_presets'));
  await page.route(/\/pkg\/(mt\/|fma\/|mt-fma\/)?specdec\.js/, rewrite('presets'));
}

