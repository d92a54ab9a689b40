// The page on a phone (390 px wide): wide content (a table, a figure, a formula, a long word) either
// wraps or scrolls inside a box of its own; nothing is cut off by the widget's box and the page
// never pans sideways. Checked on every widget of the course page as it first draws, and after
// the model widgets have filled in their results (the decoding widget's greedy chains and its
// step-through, the model-free table and highlighted output), since those are the widest.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { setControl, decoded, mfDone } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

const PHONE = { width: 390, height: 844 };

/**
 * Everything that lies wider than its widget's box with no scroll container (overflow-x auto or
 * scroll) between it and the widget, as readable lines; and the page's sideways overflow. Text is
 * measured through a Range, so a long word that runs past its paragraph counts; the inside of an
 * SVG is the picture's own business (the SVG element itself is measured).
 */
function overflows(page) {
  return page.evaluate(() => {
    const out = [];
    const scrolls = (el) => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
    const name = (el) => `${el.tagName.toLowerCase()}${typeof el.className === 'string' && el.className.trim() ? `.${el.className.trim().split(/\s+/).join('.')}` : ''}`;
    for (const root of document.querySelectorAll('[data-widget]')) {
      const box = root.getBoundingClientRect();
      const left = box.left + root.clientLeft;
      const right = left + root.clientWidth;
      const scrolled = (el) => {
        for (let e = el.parentElement; e && e !== root; e = e.parentElement) if (scrolls(e)) return true;
        return false;
      };
      const check = (el, rect, what) => {
        if (rect.width === 0 && rect.height === 0) return;
        if ((rect.right > right + 0.5 || rect.left < left - 0.5) && !scrolled(el)) {
          out.push(`${root.dataset.widget}: ${what} spans ${Math.round(rect.left - left)}…${Math.round(rect.right - left)} of ${Math.round(right - left)} px`);
        }
      };
      for (const el of root.querySelectorAll('*')) {
        if (el.closest('svg') && el.tagName.toLowerCase() !== 'svg') continue;
        if (!el.checkVisibility()) continue; // not drawn: hidden, or in a closed <details>
        check(el, el.getBoundingClientRect(), name(el));
        for (const node of el.childNodes) {
          if (node.nodeType !== Node.TEXT_NODE || !node.textContent.trim()) continue;
          const range = document.createRange();
          range.selectNodeContents(node);
          check(el, range.getBoundingClientRect(), `text “${node.textContent.trim().slice(0, 30)}” in ${name(el)}`);
        }
      }
    }
    const page = document.scrollingElement;
    if (page.scrollWidth > innerWidth) out.push(`the page scrolls sideways: ${page.scrollWidth} px wide in a ${innerWidth} px window`);
    return out;
  });
}

async function assertFits(page, when) {
  const bad = await overflows(page);
  assert.deepEqual(bad.slice(0, 12), [], `${when}: ${bad.length} overflows`);
}

test('at 390 px every widget’s content fits its box or scrolls in its own, and the page never scrolls sideways', async () => {
  const { page, errors } = await open(env, '?decoding.prompts=10&modelfree.requests=10', PHONE);
  // The course page once everything has drawn: the analytic widgets at once, the model widgets'
  // first jobs (greedy chains, the model-free table, LikesWorld's probabilities) when they end.
  await decoded(page, 1);
  await mfDone(page, 1);
  await page.waitForSelector('[data-widget="likesworld"][data-state="ok"] table.kinds', { timeout: 60_000 });
  await page.waitForSelector('[data-widget="exactness"][data-mc]', { timeout: 60_000 });
  await assertFits(page, 'the course page');
  // The demo-5 heat map, a grid of small numbers and words, keeps its size and scrolls, rather
  // than shrinking its cell texts to 6 px.
  const scale = await page.$eval('[data-widget="roofline"] .stack svg', (svg) => svg.getBoundingClientRect().width / Number(svg.getAttribute('width')));
  assert.equal(scale, 1, 'the heat map is drawn at its own size');
  // The model-free widget's one output with every token coloured by its source.
  await setControl(page, 'modelfree', 'experiment', 'highlight');
  await mfDone(page, 2);
  await assertFits(page, 'model-free, highlighted output');
  // The step-through: a sampling chain (its checks table), then a greedy tree (its mask).
  await setControl(page, 'decoding', 'experiment', 'step');
  await decoded(page, 2);
  await assertFits(page, 'the step-through of a chain');
  await setControl(page, 'decoding', 'stepkind', 'tree');
  await decoded(page, 3);
  await assertFits(page, 'the step-through of a tree');
  assert.deepEqual(errors, []);
  await page.close();
});

/** Every drawn SVG text under `root` smaller than `min` CSS px: its font size times the SVG's scale. */
function smallTexts(page, min) {
  return page.evaluate((least) => [...document.querySelectorAll('[data-widget] svg text')]
    .filter((t) => t.checkVisibility() && t.textContent.trim())
    .map((t) => {
      const m = t.getScreenCTM();
      return { px: parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b), text: t.textContent.trim().slice(0, 30), widget: t.closest('[data-widget]').dataset.widget };
    })
    .filter((t) => t.px < least)
    .map((t) => `${t.widget}: “${t.text}” at ${t.px.toFixed(1)} px`), min);
}

test('at 390 px every figure text on the course page is at least 10 CSS px, and every box that scrolls sideways shows a hint and takes focus', async () => {
  const { page, errors } = await open(env, '?decoding.prompts=10&modelfree.requests=10', PHONE);
  await decoded(page, 1);
  await page.waitForSelector('[data-widget="likesworld"][data-state="ok"] table.kinds', { timeout: 60_000 });
  await page.waitForSelector('[data-widget="exactness"][data-mc]', { timeout: 60_000 });
  await page.waitForTimeout(300); // the scroll boxes are marked on the next frame
  const small = await smallTexts(page, 10);
  assert.deepEqual(small.slice(0, 12), [], `${small.length} figure texts under 10 px`);
  const boxes = await page.$$eval('[data-widget] .table-scroll, [data-widget] .stack', (els) => els
    .filter((b) => b.checkVisibility() && b.scrollWidth > b.clientWidth + 1)
    .map((b) => ({ hint: getComputedStyle(b, '::before').content, tab: b.tabIndex, label: b.getAttribute('aria-label') })));
  assert.ok(boxes.length > 0, 'the heat map at least scrolls at 390 px');
  for (const b of boxes) {
    assert.match(b.hint, /scroll →/, JSON.stringify(b));
    assert.equal(b.tab, 0, JSON.stringify(b));
    assert.ok(b.label, JSON.stringify(b));
  }
  // The title bar's tools stay on one line: Export's summary is one line high.
  const lines = await page.$$eval('[data-widget] details.export summary', (ss) => ss.map((s) => Math.round(s.getBoundingClientRect().height / parseFloat(getComputedStyle(s).lineHeight || '20'))));
  assert.ok(lines.every((n) => n <= 1), `Export wraps: ${lines}`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('at 390 px a long unbroken word and the alert it causes wrap inside the widget', async () => {
  const { page, errors } = await open(env, '', PHONE);
  const word = 'x'.repeat(400);
  await page.fill('[data-widget="tree"] [data-key="paths"]', `${word} | a b`);
  await page.fill('[data-widget="tree"] [data-key="root"]', word);
  await setControl(page, 'tree', 'mode', 'config');
  await page.fill('[data-widget="tree"] [data-key="config"]', `<${'9'.repeat(400)}>`);
  assert.equal(await page.getAttribute('[data-widget="tree"]', 'data-state'), 'error');
  await assertFits(page, 'a bad configuration typed as one long word');
  assert.deepEqual(errors, []);
  await page.close();
});

test('at 390 px the Chinese course page fits as well', async () => {
  const context = await env.browser.newContext({ viewport: PHONE, serviceWorkers: 'block' });
  await context.addInitScript(() => localStorage.setItem('specdec-playground.lang', 'zh'));
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${env.url}?decoding.prompts=10&modelfree.requests=10`);
  await page.waitForSelector('html[lang="zh-CN"][data-ready="true"]', { timeout: 30_000 });
  await decoded(page, 1);
  await mfDone(page, 1);
  await page.waitForSelector('[data-widget="likesworld"][data-state="ok"] table.kinds', { timeout: 60_000 });
  await assertFits(page, 'the Chinese course page');
  await setControl(page, 'decoding', 'experiment', 'step');
  await decoded(page, 2);
  await assertFits(page, 'the Chinese step-through');
  assert.deepEqual(errors, []);
  await context.close();
});
