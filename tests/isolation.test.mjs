// Cross-origin isolation on a host that sends no headers (issue 31): served without COOP/COEP, as
// a static host serves it, the course page is not isolated on the first load; its service worker
// adds the headers to every answer, the page reloads itself once, and from then on it is
// isolated (the clock steps finely), its model jobs run in their workers, and nothing fails.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, wake } from './browser.mjs';

let env;
before(async () => { env = await start({ isolation: false }); });
after(async () => { await env?.close(); });

test('a host without COOP/COEP: the service worker isolates the page after one reload, and its jobs run', async () => {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  let loads = 0;
  page.on('load', () => { loads += 1; });
  await page.goto(`${env.url}?decoding.experiment=greedy&decoding.prompts=10`);
  const first = await page.evaluate(() => self.crossOriginIsolated);
  assert.equal(first, false, 'the host sends no headers: not isolated on the first load');
  await page.waitForFunction(() => self.crossOriginIsolated === true, null, { timeout: 60_000 });
  await page.waitForSelector('html[data-ready="true"]', { timeout: 30_000 });
  assert.equal(loads, 2, 'one reload');
  await wake(page);
  // A model job runs in its worker: an isolated page starts only a worker whose script carries
  // COEP, which the service worker added.
  await page.waitForFunction(() => Number(document.querySelector('[data-widget="decoding"]')?.dataset.decoded || 0) >= 1, null, { timeout: 180_000 });
  // Later loads are isolated at once: no further reload.
  await page.reload();
  await page.waitForSelector('html[data-ready="true"]', { timeout: 30_000 });
  assert.equal(await page.evaluate(() => self.crossOriginIsolated), true);
  assert.equal(loads, 3);
  assert.deepEqual(errors, []);
  await context.close();
});
