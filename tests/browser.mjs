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
 * before its own code (a test's stand-in for what a browser's WebGPU lacks).
 */
export async function open(env, path, {
  width = 1280, height = 900, serviceWorkers = 'block', ready = 'html[data-ready="true"]', requests = null, workerPrelude = null, prepare = null,
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
  return { page, errors };
}

/**
 * Rewrites the core's `presets` export on its way to `page` (for tests of controls that follow
 * the core's declarations): `change` is code run on the declarations `p` before they are
 * returned. Give it as `open`'s `prepare`. A request the closing page abandons is let go.
 */
export function rewritePresets(page, change) {
  // The bindings of whichever build of the CPU module the page runs (www/threads.js).
  return page.route(/\/pkg\/(mt\/|fma\/|mt-fma\/)?specdec\.js/, async (route) => {
    try {
      const response = await route.fetch();
      const body = (await response.text()).replace('export function presets()', 'function presetsDeclared()')
        + `\nexport function presets() { const p = presetsDeclared(); ${change} return p; }\n`;
      await route.fulfill({ response, body });
    } catch {
      // The page closed while this request was under way.
    }
  });
}

