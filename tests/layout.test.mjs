// The page on a phone (390 px wide): wide content (a table, a figure, a formula, a long word) either
// wraps or scrolls inside a box of its own; nothing is cut off by the widget's box and the page
// never pans sideways. Checked on every widget of the course page as it first draws, and after
// the model widgets have filled in their results (the decoding widget's greedy chains and its
// step-through, the model-free table and highlighted output), since those are the widest. Inside
// every figure (an SVG the core draws for the widget's width), no two texts overlap and none is
// cut by the figure's edge, English and Chinese; and no text on the page is under 10 px.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open, wake } from './browser.mjs';
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

/**
 * Inside every drawn figure (one SVG) of a widget: every two texts whose boxes overlap by more
 * than a pixel both ways, and every text that runs past the figure's left or right edge, as
 * readable lines. The boxes are the browser's own (getBoundingClientRect, turned texts included),
 * so a size the core estimated wrong for this font shows here.
 */
function clashes(page) {
  return page.evaluate(() => {
    const out = [];
    for (const svg of document.querySelectorAll('[data-widget] svg')) {
      if (!svg.checkVisibility()) continue;
      const where = `${svg.closest('[data-widget]').dataset.widget} “${(svg.getAttribute('aria-label') ?? '').slice(0, 40)}”`;
      const frame = svg.getBoundingClientRect();
      const texts = [...svg.querySelectorAll('text')]
        .filter((t) => t.textContent.trim() && t.checkVisibility())
        .map((t) => ({ text: t.textContent.trim().slice(0, 30), r: t.getBoundingClientRect() }));
      texts.forEach((a, i) => {
        if (a.r.left < frame.left - 0.5 || a.r.right > frame.right + 0.5) {
          out.push(`${where}: “${a.text}” spans ${Math.round(a.r.left - frame.left)}…${Math.round(a.r.right - frame.left)} of ${Math.round(frame.width)} px`);
        }
        for (const b of texts.slice(i + 1)) {
          const x = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
          const y = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
          if (x > 1 && y > 1) out.push(`${where}: “${a.text}” overlaps “${b.text}” by ${x.toFixed(1)} × ${y.toFixed(1)} px`);
        }
      });
    }
    return out;
  });
}

async function assertFits(page, when) {
  const bad = await overflows(page);
  assert.deepEqual(bad.slice(0, 12), [], `${when}: ${bad.length} overflows`);
  const crowded = await clashes(page);
  assert.deepEqual(crowded.slice(0, 12), [], `${when}: ${crowded.length} texts over each other or cut in a figure`);
}

test('at 390 px every widget’s content fits its box or scrolls in its own, and the page never scrolls sideways', async () => {
  const { page, errors } = await open(env, '?decoding.prompts=10&modelfree.requests=10', PHONE);
  // The course page once everything has drawn: the analytic widgets at once, the model widgets'
  // first jobs (greedy chains, the model-free table, LikesWorld's probabilities) when they end.
  await decoded(page, 1);
  await mfDone(page, 1);
  await page.waitForSelector('[data-widget="likesworld"][data-state="ok"] table.kinds', { timeout: 60_000 });
  await page.waitForSelector('[data-widget="exactness"][data-mc]', { timeout: 60_000 });
  // The figures issue 53 found crowded on a phone are drawn (a widget in error draws none).
  for (const [w, n] of [['multidraft', 2], ['tree', 2], ['modelfree', 1], ['theory', 2], ['exactness', 3]]) {
    assert.ok(await page.$$eval(`[data-widget="${w}"] svg`, (s) => s.length) >= n, `${w} draws its figures`);
  }
  await assertFits(page, 'the course page');
  // The demo-5 heat map, a grid of small numbers and words, keeps its size and scrolls, rather
  // than shrinking its cell texts to 6 px.
  const scale = await page.$eval('[data-widget="roofline"] .stack svg', (svg) => svg.clientWidth / Number(svg.getAttribute('width')));
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

/**
 * Every drawn text of the page smaller than `min` CSS px: an SVG text's font size times its
 * figure's scale; any other element's computed font size (a formula's exponent, which MathML
 * sets smaller at each level of script).
 */
function smallTexts(page, min) {
  return page.evaluate((least) => {
    const where = (el) => el.closest('[data-widget]')?.dataset.widget ?? el.closest('section')?.id ?? 'page';
    const svg = [...document.querySelectorAll('[data-widget] svg text')]
      .filter((t) => t.checkVisibility() && t.textContent.trim())
      .map((t) => {
        const m = t.getScreenCTM();
        return { px: parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b), text: t.textContent.trim().slice(0, 30), where: where(t) };
      });
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const html = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!n.textContent.trim() || !el || el.closest('svg, script, style') || !el.checkVisibility()) continue;
      html.push({ px: parseFloat(getComputedStyle(el).fontSize), text: `${el.tagName.toLowerCase()} ${n.textContent.trim().slice(0, 30)}`, where: where(el) });
    }
    return [...svg, ...html].filter((t) => t.px < least).map((t) => `${t.where}: “${t.text}” at ${t.px.toFixed(1)} px`);
  }, min);
}

test('at 390 px every text on the course page, in a figure or a formula, is at least 10 CSS px, and every box that scrolls sideways shows a hint and takes focus', async () => {
  const { page, errors } = await open(env, '?decoding.prompts=10&modelfree.requests=10', PHONE);
  await decoded(page, 1);
  await page.waitForSelector('[data-widget="likesworld"][data-state="ok"] table.kinds', { timeout: 60_000 });
  await page.waitForSelector('[data-widget="exactness"][data-mc]', { timeout: 60_000 });
  await page.waitForTimeout(300); // the scroll boxes are marked on the next frame
  const small = await smallTexts(page, 10);
  assert.deepEqual(small.slice(0, 12), [], `${small.length} texts under 10 px`);
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

test('a token tree’s long label is cut with an ellipsis, not left out, and runs into nothing', async () => {
  for (const viewport of [PHONE, { width: 1280, height: 900 }]) {
    const { page, errors } = await open(env, '', viewport);
    const long = 'x'.repeat(60);
    await page.fill('[data-widget="tree"] [data-key="paths"]', `${long} | a b | a c`);
    await page.waitForFunction(() => document.querySelector('[data-widget="tree"]').dataset.state === 'ok');
    const labels = await page.$$eval('[data-widget="tree"] svg text', (ts) => ts.map((t) => t.textContent.trim()));
    const cut = labels.filter((l) => /^x+…$/.test(l));
    assert.equal(cut.length, 2, `the tree and its mask each name the long token, cut: ${labels.join(' | ')}`);
    await assertFits(page, `a long token at ${viewport.width} px`);
    assert.deepEqual(errors, []);
    await page.close();
  }
});

test('at 390 px the Chinese course page fits as well', async () => {
  const context = await env.browser.newContext({ viewport: PHONE, serviceWorkers: 'block' });
  await context.addInitScript(() => localStorage.setItem('specdec-playground.lang', 'zh'));
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${env.url}?decoding.prompts=10&modelfree.requests=10`);
  await page.waitForSelector('html[lang="zh-CN"][data-ready="true"]', { timeout: 30_000 });
  await wake(page);
  await decoded(page, 1);
  await mfDone(page, 1);
  await page.waitForSelector('[data-widget="likesworld"][data-state="ok"] table.kinds', { timeout: 60_000 });
  await assertFits(page, 'the Chinese course page');
  const small = await smallTexts(page, 10);
  assert.deepEqual(small.slice(0, 12), [], `${small.length} texts under 10 px in Chinese`);
  await setControl(page, 'decoding', 'experiment', 'step');
  await decoded(page, 2);
  await assertFits(page, 'the Chinese step-through');
  assert.deepEqual(errors, []);
  await context.close();
});

test('at 390 px the §6 figure, drawn after a run, keeps its texts apart and at 10 px or more, in English and Chinese', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, errors } = await open(env, `?lang=${lang}&decoding.experiment=methods&decoding.prompts=2&decoding.budget=8`, PHONE);
    await decoded(page, 1);
    assert.ok(await page.$('[data-widget="decoding"] .dec-plot svg'), 'the §6 figure is drawn');
    await assertFits(page, `the §6 figure (${lang})`);
    const small = (await smallTexts(page, 10)).filter((t) => t.startsWith('decoding'));
    assert.deepEqual(small, [], `${lang}: the §6 figure's texts under 10 px`);
    assert.deepEqual(errors, []);
    await page.close();
  }
});
