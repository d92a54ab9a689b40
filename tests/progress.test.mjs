// Browser tests of the one progress protocol: a worker job reports numbers ({phase: 'count',
// done, total, backend}), which the page words in its language and turns into its progress bar.
// Before, the engine wrote "200 / 1000（flex）" on the Chinese page and the bar parsed English.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, wake } from './browser.mjs';
import { decoded } from './helpers.mjs';

let env;
before(async () => { env = await start({ webgpu: false }); });
after(async () => { await env?.close(); });

test('on the Chinese page the decoding progress bar advances during a job, and its status is worded in Chinese', async () => {
  const page = await env.browser.newPage({ viewport: { width: 1280, height: 900 }, serviceWorkers: 'block' });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.addInitScript(() => localStorage.setItem('specdec-playground.lang', 'zh'));
  await page.goto(`${env.url}?decoding.experiment=sample&decoding.prompts=50&decoding.repeats=1`);
  await page.waitForSelector('html[data-ready="true"]', { timeout: 30_000 });
  assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN');
  // Every value the bar takes and every status text, recorded until the job has ended.
  await page.evaluate(() => {
    const root = document.querySelector('[data-widget="decoding"]');
    window.seen = { values: [], texts: [] };
    new MutationObserver(() => {
      if (root.dataset.decoded) return;
      // From before the widget wakes (it mounts when it comes into view, below).
      const bar = root.querySelector('.dec-progress');
      if (!bar) return;
      window.seen.values.push(Number(bar.value));
      window.seen.texts.push(root.querySelector('.dec-status').textContent);
    }).observe(root, { attributes: true, childList: true, subtree: true, characterData: true });
  });
  await wake(page);
  await decoded(page, 1);
  const { values, texts } = await page.evaluate(() => window.seen);
  assert.ok(values.some((v) => v > 0 && v < 1), `the bar moved before the end: ${values.join(' ')}`);
  assert.ok(texts.some((t) => /^运行中：\d+ \/ \d+（flex）…$/.test(t)), texts.join(' | '));
  assert.ok(texts.some((t) => /^运行中：正在加载模型（flex）…$/.test(t)), texts.join(' | '));
  assert.ok(!texts.some((t) => /\d+ of \d+|loading|queued|running/.test(t)), `no English: ${texts.join(' | ')}`);
  assert.deepEqual(errors, []);
  await page.close();
});
