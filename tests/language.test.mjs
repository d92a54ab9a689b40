// Browser tests of the Chinese page: the language switch (page, widgets, figures, exercises,
// remembered), ?lang=zh|en links, the switch with storage blocked, and the engine's errors, the
// worker's notes and its progress in Chinese. The walk of the whole Chinese page for English
// left in it is chinese.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open, openFollowed, wake } from './browser.mjs';
import { setControl, text, alertOf, decoded, mfDone } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });


/**
 * Clicks the language switch's `l` and waits for the page it reloads to be ready: the document
 * before the switch is marked, so that its own readiness (or its late load event) is not taken
 * for the new one's.
 */
async function switchTo(page, l) {
  await page.evaluate(() => { window.beforeTheSwitch = true; });
  await page.click(`[data-set-lang="${l}"]`);
  await page.waitForFunction(() => !window.beforeTheSwitch && document.documentElement.dataset.ready === 'true', null, { timeout: 60_000 });
  await wake(page);
}

test('a request the switch’s reload cuts off is no error; a request aborted without a navigation still is', async () => {
  const { page, errors, nav } = await openFollowed(env, '', {
    prepare: (p) => p.route('**/slow/*', (route) => setTimeout(() => route.fulfill({ body: 'late' }).catch(() => {}), 5_000)),
  });
  // Aborted by the page itself, no navigation: an error.
  await page.evaluate(() => {
    const c = new AbortController();
    fetch('slow/aborted', { signal: c.signal }).catch(() => {});
    setTimeout(() => c.abort(), 200);
  });
  await page.waitForTimeout(500);
  // In flight when the switch reloads the page: cut off, no error.
  await page.evaluate(() => { fetch('slow/cut').catch(() => {}); });
  await page.waitForTimeout(200);
  await switchTo(page, 'zh');
  const failed = (name) => `request failed: ${env.url}slow/${name}`;
  assert.ok(errors.includes(failed('aborted')) && errors.includes(failed('cut')), errors.join('\n'));
  assert.deepEqual(nav.errorsBut(errors), [failed('aborted')]);
  await page.close();
});

test('the language switch changes the page and the widgets to Chinese, is remembered, and keeps the state', async () => {
  const { page, errors, nav } = await openFollowed(env, '?theory.alpha=0.7');
  const h1 = () => page.$eval('h1', (e) => e.innerText.trim());
  assert.equal(await h1(), 'Speculative decoding, exactly');
  assert.equal(await page.getAttribute('html', 'lang'), 'en');
  // At once, while the page's workers may still be loading: what the reload cuts off is no error.
  await switchTo(page, 'zh');
  assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN');
  assert.equal(await h1(), '推测解码，精确地');
  assert.equal(await page.$eval('#s2-h', (e) => e.innerText.trim()), '§2 推测解码：小模型猜、大模型验');
  assert.match(await page.$eval('#s2 .explain', (e) => e.innerText), /墙钟加速比/);
  assert.equal(await page.$eval('[data-widget="theory"] h2', (e) => e.textContent), '能快多少：E、加速比与运算量');
  assert.equal(await page.$eval('[data-widget="roofline"] label[for$="-overhead"]', (e) => e.textContent), '固定开销 (ms)');
  assert.equal(await page.$eval('[data-widget="theory"] [data-key="alpha"]', (e) => e.value), '0.7', 'the state survives the switch');
  assert.equal(await page.$eval('[data-widget="theory"] .share', (e) => e.textContent), '分享');
  assert.equal(await page.$eval('[data-widget="exercises"] button[type="submit"]', (e) => e.textContent), '检查');
  assert.match(await page.$eval('[data-widget="theory"] .presets span', (e) => e.textContent), /课上的例子/);
  assert.equal(await page.$eval('[data-widget="theory"] .presets button', (e) => e.textContent), '表 1 · α 0.8，γ 5，c = ĉ = 0');
  assert.equal(await page.$eval('[data-widget="theory"] .presets button', (e) => e.title), '加速比 3.69×，运算量 1.63×');
  // Translated select options keep the values of the English ones, in the same order.
  const mismatched = await page.evaluate(async () => {
    const { WIDGETS } = await import('./widgets/index.js');
    return Object.values(WIDGETS).flatMap((w) => w.controls.filter((c) => c.options_zh
      && JSON.stringify(c.options_zh.map(([v]) => v)) !== JSON.stringify(c.options.map(([v]) => v))).map((c) => `${w.name}.${c.key}`));
  });
  assert.deepEqual(mismatched, []);
  assert.equal(await page.$eval('[data-widget="decoding"] [data-key="experiment"] option[value="tree"]', (e) => e.textContent), '贪心树（04.3）');
  // The figures too: titles, axes and legends come from the engine in the page's language.
  assert.match(await page.$eval('[data-widget="theory"] .plots svg', (e) => e.textContent), /E 和加速比随 γ 的变化/);
  assert.match(await page.$eval('[data-widget="roofline"] .plots svg', (e) => e.textContent), /每步时间/);
  // The exercises speak Chinese too, hints included.
  assert.match(await text(page, '[data-widget="exercises"] .ex-statement'), /每步平均产生多少 token/);
  await page.fill('[data-widget="exercises"] input[data-part="0"]', '9');
  await page.click('[data-widget="exercises"] button[type="submit"]');
  assert.match(await text(page, '[data-widget="exercises"] .ex-says'), /9 偏大。前 i 个草稿全部通过的概率是 αi/);
  assert.match(await page.$eval('[data-widget="exercises"] .ex-says', (e) => e.innerHTML), /α<sup>i<\/sup>/);
  // No English prose is visible: every [data-lang="en"] is hidden.
  assert.equal(await page.$$eval('[data-lang="en"]', (els) => els.filter((e) => e.getClientRects().length > 0).length), 0);
  // Remembered: a new visit is in Chinese; the switch goes back.
  await page.goto(env.url);
  await page.waitForSelector('html[data-ready="true"]');
  await wake(page);
  assert.equal(await h1(), '推测解码，精确地');
  assert.equal(await page.getAttribute('[data-set-lang="zh"]', 'aria-pressed'), 'true');
  await switchTo(page, 'en');
  assert.equal(await h1(), 'Speculative decoding, exactly');
  assert.equal(await page.$eval('[data-widget="theory"] h2', (e) => e.textContent), 'How much faster: E, speedup and operations');
  assert.deepEqual(nav.errorsBut(errors), []);
  await page.close();
});

test('the language switch keeps the exercises’ work: answers typed, the last check and its solution, judged again in the new language', async () => {
  const { page, errors, nav } = await openFollowed(env, '?exercises.exercise=1');
  const w = '[data-widget="exercises"]';
  const values = () => page.$$eval(`${w} input[data-part]`, (xs) => xs.map((x) => x.value));
  const says = () => page.$$eval(`${w} .ex-says`, (xs) => xs.map((x) => x.textContent));
  const solution = () => page.$eval(`${w} .ex-solution`, (e) => (e.hidden ? null : e.textContent.trim()));
  // Exercise 5 answered in part, unchecked; exercise 1 solved, then a part typed again.
  await setControl(page, 'exercises', 'exercise', '5');
  await page.fill(`${w} input[data-part="0"]`, '7');
  await setControl(page, 'exercises', 'exercise', '1');
  for (const [i, v] of ['3.05', '2.54', '1.67'].entries()) await page.fill(`${w} input[data-part="${i}"]`, v);
  await page.click(`${w} button[type="submit"]`);
  assert.match(await solution(), /^Solved\. E = /);
  await page.fill(`${w} input[data-part="2"]`, '9');
  await switchTo(page, 'zh');
  assert.deepEqual(await values(), ['3.05', '2.54', '9'], 'the answers as typed');
  assert.deepEqual(await says(), ['✓ 正确', '✓ 正确', '✓ 正确'], 'the last check, judged in Chinese');
  assert.match(await solution(), /^全部正确。E = /, 'its solution, in Chinese');
  assert.match(await text(page, `${w} .ex-statement`), /^练习 1\./);
  // A check in the new language judges what is typed now.
  await page.click(`${w} button[type="submit"]`);
  assert.match((await says())[2], /^✗ 9 偏大/);
  assert.equal(await solution(), null);
  // And back: the other exercise's answer too, and nothing is lost on the way.
  await switchTo(page, 'en');
  assert.deepEqual(await values(), ['3.05', '2.54', '9']);
  assert.match((await says())[2], /^✗ 9 is too high/);
  await setControl(page, 'exercises', 'exercise', '5');
  assert.equal(await page.$eval(`${w} input[data-part="0"]`, (e) => e.value), '7');
  assert.deepEqual(await says(), ['', '', ''], 'exercise 5 was never checked');
  // The answers are this tab's: a Share link does not carry them.
  await page.click(`${w} .share`);
  await page.waitForSelector(`${w} .share-link:not([hidden])`);
  const link = await page.$eval(`${w} .share-link a`, (a) => a.href);
  assert.ok(!link.includes('3.05') && !link.includes('answers'), link);
  assert.deepEqual(nav.errorsBut(errors), []);
  await page.close();
});

test('on the Chinese page the engine’s errors, the worker’s notes and its progress are in Chinese', async () => {
  const page = await env.browser.newPage({ viewport: { width: 1280, height: 900 }, serviceWorkers: 'block' });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.addInitScript(() => localStorage.setItem('specdec-playground.lang', 'zh'));
  await page.route('**/pkg/gpu/**', (route) => route.fulfill({ status: 404, body: 'not built yet' }));
  await page.goto(`${env.url}?modelfree.experiment=highlight&modelfree.workload=likesworld&modelfree.requests=2&modelfree.request=1&modelfree.backend=wgpu`);
  await page.waitForSelector('html[data-ready="true"]', { timeout: 30_000 });
  await wake(page);
  // Core errors raised on the main thread: a tree config, a distribution, drawn tokens.
  await setControl(page, 'tree', 'mode', 'config');
  await page.fill('[data-widget="tree"] [data-key="config"]', '<2,0>');
  assert.equal(await alertOf(page, 'tree'), '无法读取树配置“<2,0>”：第 2 层宽度为 0；每层至少需要一个子节点');
  await page.fill('[data-widget="tree"] [data-key="config"]', '<9,9,9,9>');
  assert.match(await alertOf(page, 'tree'), /^树配置 <9,9,9,9> 有 7380 个节点，超出 \d+ 个节点的预算$/);
  await page.fill('[data-widget="multidraft"] [data-key="p"]', '0.5,0.6');
  assert.match(await alertOf(page, 'multidraft'), /^无法读取p“0\.5,0\.6”：总和为 1\.1/);
  // In a worker: the WebGPU module is missing, so the job runs on flex with a note in Chinese.
  await mfDone(page, 1);
  assert.match(await text(page, '[data-widget="modelfree"] .mf-note'), /WebGPU 引擎无法加载（.*），所以这次在 CPU（flex）上运行/);
  // A core error raised in a worker job: the decoding widget's tree budget.
  await setControl(page, 'decoding', 'experiment', 'tree');
  await page.fill('[data-widget="decoding"] [data-key="config"]', '<9,9>');
  await page.waitForFunction(() => /超出 64 个节点的预算/.test(document.querySelector('[data-widget="decoding"] [role="alert"]').textContent), null, { timeout: 30_000 });
  // Progress from the engine, "done / total（backend）": every text the status line shows.
  await page.evaluate(() => {
    window.statusLog = [];
    new MutationObserver((records) => {
      for (const r of records) for (const n of r.addedNodes) window.statusLog.push(n.textContent);
    }).observe(document.querySelector('[data-widget="decoding"] .dec-status'), { childList: true });
  });
  const runs = Number(await page.getAttribute('[data-widget="decoding"]', 'data-decoded') || 0);
  await page.fill('[data-widget="decoding"] [data-key="config"]', '<2,1>');
  await decoded(page, runs + 1);
  const log = await page.evaluate(() => window.statusLog);
  assert.ok(log.some((s) => /^运行中：\d+ \/ \d+（flex）…$/.test(s)), log.join(' | '));
  assert.deepEqual(errors, []);
  await page.close();
});

test('?lang=zh links the Chinese page and ?lang=en the English one, whatever this browser remembers', async () => {
  const { page, errors, nav } = await openFollowed(env, '?lang=zh&theory.alpha=0.7');
  const h1 = () => page.$eval('h1', (e) => e.innerText.trim());
  assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN');
  assert.equal(await h1(), '推测解码，精确地');
  assert.equal(await page.title(), 'specdec-playground — 推测解码，精确地');
  assert.equal(await page.$eval('[data-widget="theory"] h2', (e) => e.textContent), '能快多少：E、加速比与运算量');
  assert.equal(await page.getAttribute('[data-set-lang="zh"]', 'aria-pressed'), 'true');
  // The header names the button as it reads: 分享.
  assert.match(await page.$eval('header.page > [data-lang="zh"]', (e) => e.textContent), /用它的分享链接/);
  // A Share link made on the Chinese page opens in Chinese, wherever it is opened.
  await page.click('[data-widget="theory"] .share');
  await page.waitForSelector('[data-widget="theory"] .share-link:not([hidden])'); // after the clipboard's answer
  const link = await page.$eval('[data-widget="theory"] .share-link a', (a) => a.href);
  assert.equal(new URL(link).searchParams.get('lang'), 'zh', link);
  // A link is a choice, remembered like the switch's: a later visit without ?lang is Chinese.
  await page.goto(env.url);
  await page.waitForSelector('html[data-ready="true"]');
  await wake(page);
  assert.equal(await h1(), '推测解码，精确地');
  // An unknown ?lang is ignored (not an error): the remembered language stays.
  await page.goto(`${env.url}embed.html?widget=theory&lang=fr`);
  await page.waitForSelector('html[data-ready="true"]');
  await wake(page);
  assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN');
  // ?lang=en wins over what is remembered.
  await page.goto(`${env.url}?lang=en`);
  await page.waitForSelector('html[data-ready="true"]');
  await wake(page);
  assert.equal(await page.getAttribute('html', 'lang'), 'en');
  assert.equal(await h1(), 'Speculative decoding, exactly');
  // The footer links the Chinese page.
  assert.equal(await page.$eval('footer [data-lang="en"] a[hreflang="zh-CN"]', (a) => new URL(a.href).searchParams.get('lang')), 'zh');
  // Each navigation may cut short what the page before it had asked for: not an error.
  assert.deepEqual(nav.errorsBut(errors), []);
  await page.close();
});

test('with storage blocked the switch still changes the language (through the URL), and the state survives', async () => {
  const page = await env.browser.newPage({ viewport: { width: 1280, height: 900 }, serviceWorkers: 'block' });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.addInitScript(() => {
    Object.defineProperty(window, 'localStorage', { get() { throw new DOMException('storage blocked', 'SecurityError'); } });
  });
  await page.goto(`${env.url}?theory.alpha=0.7`);
  await page.waitForSelector('html[data-ready="true"]', { timeout: 30_000 });
  await wake(page);
  assert.equal(await page.getAttribute('html', 'lang'), 'en');
  // An exercise's answer is kept too: it lives in the history entry, not in storage.
  await page.fill('[data-widget="exercises"] input[data-part="0"]', '3.05');
  await switchTo(page, 'zh');
  assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN', 'switched although nothing could be stored');
  assert.equal(await page.$eval('[data-widget="exercises"] input[data-part="0"]', (e) => e.value), '3.05');
  assert.equal(await page.$eval('h1', (e) => e.innerText.trim()), '推测解码，精确地');
  assert.equal(new URL(page.url()).searchParams.get('lang'), 'zh');
  assert.equal(await page.$eval('[data-widget="theory"] [data-key="alpha"]', (e) => e.value), '0.7');
  await switchTo(page, 'en');
  assert.equal(await page.getAttribute('html', 'lang'), 'en');
  assert.deepEqual(errors, []);
  await page.close();
});
