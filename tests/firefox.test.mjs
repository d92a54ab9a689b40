// A second browser engine: the course page in Debian's Firefox ESR, driven by puppeteer-core
// over WebDriver BiDi (a stock browser: puppeteer-core never downloads one; scripts/setup.sh
// installs firefox-esr from Debian as it does chromium). A smoke test of what students on
// Firefox meet: the page loads, every widget draws, a decoding job finishes and another is
// cancelled, the matmuls run on a thread per core, choosing WebGPU (which Firefox ESR does not
// offer here) runs on the CPU with a note, and nothing logs an error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import puppeteer from 'puppeteer-core';
import { serve } from '../scripts/serve.mjs';

export const FIREFOX = process.env.FIREFOX ?? '/usr/bin/firefox-esr';

let server;
let url;
let browser;
before(async () => {
  assert.ok(existsSync(FIREFOX), `${FIREFOX} is missing: bash scripts/setup.sh --browser installs Debian's firefox-esr`);
  ({ server, url } = await serve({ port: 0 }));
  browser = await puppeteer.launch({ browser: 'firefox', executablePath: FIREFOX, protocol: 'webDriverBiDi', headless: true });
});
after(async () => {
  await browser?.close();
  if (server) await new Promise((ok) => server.close(ok));
});

const count = (page, widget, key) => page.$eval(`[data-widget="${widget}"]`, (el, k) => Number(el.dataset[k] || 0), key);

/** Sets a control as a person does (an input event that bubbles). */
const set = (page, widget, key, value) => page.$eval(`[data-widget="${widget}"] [data-key="${key}"]`, (el, v) => {
  el.value = v;
  el.dispatchEvent(new Event('input', { bubbles: true }));
}, String(value));

test('Firefox ESR: the page loads, every widget draws, a job finishes and one is cancelled, threads run, WebGPU falls back with a note, no errors', async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.setViewport({ width: 1280, height: 900 });
  // Small jobs: ten prompts for decoding and ten requests for the model-free table.
  await page.goto(`${url}?decoding.experiment=greedy&decoding.prompts=10&decoding.gamma=2&modelfree.requests=10`);
  await page.waitForSelector('html[data-ready="true"]', { timeout: 60_000 });
  assert.match(await browser.version(), /firefox/i);
  // The model widgets wake as a reader scrolls down to each (tests/browser.mjs `wake`).
  await page.evaluate(async () => {
    const frame = () => new Promise((r) => { requestAnimationFrame(() => requestAnimationFrame(r)); });
    for (const el of [...document.querySelectorAll('[data-wakes="near"]')]) {
      el.scrollIntoView();
      for (let i = 0; el.dataset.wakes && i < 600; i += 1) await frame();
    }
    window.scrollTo(0, 0);
  });
  await page.waitForFunction(() => [...document.querySelectorAll('[data-widget]')].every((e) => e.dataset.state), { timeout: 60_000 });

  // Every widget drew: its controls, a view, no alert; the analytic ones with a figure or table.
  const widgets = await page.$$eval('[data-widget]', (els) => els.map((el) => ({
    name: el.dataset.widget,
    renders: Number(el.dataset.renders || 0),
    state: el.dataset.state,
    content: el.querySelector('.view')?.children.length ?? 0,
  })));
  // As many as the course page places (counted in its source, not a number kept here).
  const placed = readFileSync(new URL('../www/index.html', import.meta.url), 'utf8').match(/data-widget=/g).length;
  assert.equal(widgets.length, placed, JSON.stringify(widgets));
  for (const w of widgets) {
    assert.ok(w.renders >= 1 && w.content > 0, `${w.name} drew: ${JSON.stringify(w)}`);
    assert.equal(w.state, 'ok', `${w.name} shows no error`);
  }
  for (const w of ['roofline', 'theory', 'exactness', 'multidraft', 'tree']) {
    assert.ok(await page.$(`[data-widget="${w}"] svg, [data-widget="${w}"] table`), `${w} has a figure or a table`);
  }

  // One model job finishes: greedy chains, every output identical to the target's.
  await page.waitForFunction(() => Number(document.querySelector('[data-widget="decoding"]').dataset.decoded || 0) >= 1, { timeout: 240_000 });
  const rows = await page.$$eval('[data-widget="decoding"] table.dec-greedy tbody tr', (trs) => trs.map((r) => r.cells[1].textContent));
  assert.ok(rows.length > 0 && rows.every((r) => r === '10/10'), rows.join(' | '));

  // One is cancelled mid-run: the wall-clock experiment on the target widened ×16, 200 prompts,
  // takes many seconds here; it is cancelled a second after it started.
  await set(page, 'decoding', 'prompts', '200');
  await set(page, 'decoding', 'target_width', '16');
  await set(page, 'decoding', 'experiment', 'speedup');
  await page.waitForFunction(() => {
    const w = document.querySelector('[data-widget="decoding"]');
    return w.getAttribute('aria-busy') === 'true' && !w.querySelector('.dec-cancel').hidden
      && /^Running/.test(w.querySelector('.dec-status').textContent);
  }, { timeout: 60_000 });
  await new Promise((ok) => { setTimeout(ok, 1000); });
  assert.equal(await page.$eval('[data-widget="decoding"]', (w) => w.getAttribute('aria-busy')), 'true', 'still running when cancelled');
  const cancelledBefore = await count(page, 'decoding', 'cancelled');
  await page.click('[data-widget="decoding"] .dec-cancel');
  await page.waitForFunction((n) => Number(document.querySelector('[data-widget="decoding"]').dataset.cancelled || 0) > n, { timeout: 30_000 }, cancelledBefore);
  assert.equal(await page.$eval('[data-widget="decoding"] .dec-status', (el) => el.textContent), 'Cancelled.');
  assert.equal(await count(page, 'decoding', 'decoded'), 1, 'the cancelled job drew nothing');

  // The wall-clock experiment's two lanes (batch 1, a few prompts): every text lies inside its
  // SVG, measured by Firefox's own font, and the draft calls are drawn.
  await set(page, 'decoding', 'prompts', '10');
  // ×4: its largest matrices are split across the helper threads (the trained target's are not).
  await set(page, 'decoding', 'target_width', '4');
  await set(page, 'decoding', 'experiment', 'speedup');
  await page.waitForFunction(() => Number(document.querySelector('[data-widget="decoding"]').dataset.decoded || 0) >= 2, { timeout: 240_000 });
  const outside = await page.$eval('[data-widget="decoding"] .dec-plot svg', (svg) => {
    const box = svg.getBoundingClientRect();
    return [...svg.querySelectorAll('text')].map((t) => [t.textContent.trim(), t.getBoundingClientRect()])
      .filter(([, r]) => r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
      .map(([text, r]) => `“${text}” spans ${Math.round(r.left - box.left)}…${Math.round(r.right - box.left)} of ${Math.round(box.width)} px`);
  });
  assert.deepEqual(outside, [], 'the two lanes’ texts lie inside their SVG');
  // The page is cross-origin isolated here too, so the CPU module's helper threads ran its matmuls
  // (the page starts them: engine.js, threads.js).
  assert.equal(await page.evaluate(() => crossOriginIsolated), true);
  const cores = await page.evaluate(() => Math.min(8, navigator.hardwareConcurrency));
  const during = await page.$eval('[data-widget="decoding"] .dec-during', (el) => el.textContent);
  assert.match(during, cores > 1 ? new RegExp(`ran on ${cores} threads`) : /ran on 1 thread: the browser reports one core/, during);

  // WebGPU chosen where Firefox offers none: the job runs on the CPU and says so.
  await set(page, 'decoding', 'prompts', '10');
  await set(page, 'decoding', 'target_width', '1');
  await set(page, 'decoding', 'experiment', 'greedy');
  await set(page, 'decoding', 'backend', 'wgpu');
  await page.waitForFunction(() => Number(document.querySelector('[data-widget="decoding"]').dataset.decoded || 0) >= 3, { timeout: 240_000 });
  const note = await page.$eval('[data-widget="decoding"] .dec-note', (el) => (el.hidden ? '' : el.textContent));
  assert.match(note, /WebGPU/, 'the fallback note is shown');
  assert.match(note, /flex/, 'and names the CPU backend the job ran on');

  // The model-free widget's worker finished its table too.
  await page.waitForFunction(() => Number(document.querySelector('[data-widget="modelfree"]').dataset.decoded || 0) >= 1, { timeout: 240_000 });
  assert.deepEqual(errors, []);
  await page.close();
});
