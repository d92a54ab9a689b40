// Browser tests of what an instructor who embeds <specdec-widget> elements in their notes relies
// on (issue 32, items 8–11): each element speaks its own language (its lang, else its page's),
// model widgets wait for Run and say what a run costs, Share keeps how the element is shown, the
// reference page speaks Chinese, and a removed element stops its workers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { text } from './helpers.mjs';

let env;
before(async () => { env = await start({ webgpu: false }); });
after(async () => { await env?.close(); });

/**
 * element.html (someone's notes, <html lang="en">) at `width`, with the page's workers counted
 * (window.workers: jobs' workers started and terminated; window.helpers: the same for the thread
 * pools' helpers, pool-worker.js, which the page starts beside a threaded jobs' worker);
 * `body` (HTML) replaces the notes' elements.
 */
async function notes(body, { width = 1280, htmlLang = 'en' } = {}) {
  const { page, errors } = await open(env, 'element.html', {
    width,
    ready: 'specdec-widget#theory[data-waiting="load"] .sw-run',
    prepare: (p) => p.addInitScript(() => {
      const Original = window.Worker;
      window.workers = { started: 0, terminated: 0 };
      window.helpers = { started: 0, terminated: 0 };
      window.Worker = class extends Original {
        constructor(url, ...rest) {
          super(url, ...rest);
          this.count = /pool-worker\.js/.test(String(url)) ? window.helpers : window.workers;
          this.count.started += 1;
        }
        terminate() { this.count.terminated += 1; super.terminate(); }
      };
    }),
  });
  // A reader's first Run loads the engine; the elements put in afterwards draw at once.
  await page.click('specdec-widget#theory .sw-run');
  await page.waitForSelector('specdec-widget#theory[data-state]', { timeout: 30_000 });
  await page.evaluate(([html, l]) => {
    document.documentElement.lang = l;
    document.body.innerHTML = html;
  }, [body, htmlLang]);
  return { page, errors };
}

const drawn = (page, sel) => page.waitForSelector(`${sel}[data-state="ok"]`, { timeout: 30_000 });
const decodedAtLeast = (page, sel, n) => page.waitForFunction(([s, k]) => Number(document.querySelector(s)?.dataset.decoded || 0) >= k, [sel, n], { timeout: 180_000 });
const han = /[\u4e00-\u9fff]/;
/** No horizontal scrolling: the page fits its viewport. */
const fits = (page) => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

for (const width of [1280, 390]) {
  test(`at ${width} px, each element speaks its own language: lang="zh" beside lang="en", the page's <html lang>, an ancestor's lang; job results, alerts and figures too; a lang change redraws; lang="xx" gets a note`, async () => {
    const { page, errors } = await notes(`
      <specdec-widget id="zh" kind="theory" lang="zh" alpha="7"></specdec-widget>
      <specdec-widget id="en" kind="theory" lang="en"></specdec-widget>
      <specdec-widget id="page" kind="tree"></specdec-widget>
      <div lang="en-GB"><specdec-widget id="ancestor" kind="multidraft"></specdec-widget></div>
      <div lang="en"><specdec-widget id="bad" kind="theory" lang="xx"></specdec-widget></div>
      <specdec-widget id="dzh" kind="decoding" lang="zh-Hans" experiment="greedy" prompts="10" autorun></specdec-widget>
      <specdec-widget id="den" kind="decoding" lang="en" experiment="greedy" prompts="10" autorun></specdec-widget>`, { width, htmlLang: 'zh-CN' });
    for (const id of ['zh', 'en', 'page', 'ancestor', 'bad']) await page.waitForSelector(`#${id}[data-state]`, { timeout: 30_000 });
    // Titles, controls and buttons.
    assert.equal(await text(page, '#zh h2'), '能快多少：E、加速比与运算量');
    assert.equal(await text(page, '#zh .share'), '分享');
    assert.equal(await text(page, '#en h2'), 'How much faster: E, speedup and operations');
    assert.equal(await text(page, '#en .share'), 'Share');
    assert.match(await text(page, '#page h2'), han, 'no lang: the page’s <html lang="zh-CN">');
    assert.doesNotMatch(await text(page, '#ancestor h2'), han, 'the nearest ancestor’s lang="en-GB"');
    // The alert about a bad value, and the figures the engine drew, in each one's language.
    assert.match(await text(page, '#zh [role="alert"]'), /α：7 超出 0…1；改用 1/);
    assert.match(await page.$eval('#zh .plots svg', (e) => e.textContent), /E 和加速比随 γ 的变化/);
    assert.doesNotMatch(await page.$eval('#en .plots svg', (e) => e.textContent), han);
    // A language it does not have: English, said in the widget; the page goes on.
    assert.match(await text(page, '#bad [role="alert"]'), /lang: “xx” is not a language of this widget \(en, zh\); using English/);
    assert.equal(await text(page, '#bad h2'), 'How much faster: E, speedup and operations');
    // Texts drawn later by the jobs' callbacks: the status, the table, the figure.
    await decodedAtLeast(page, '#dzh', 1);
    await decodedAtLeast(page, '#den', 1);
    assert.match(await text(page, '#dzh .dec-status'), /^在 \S+ 上完成，用时/);
    assert.match(await text(page, '#den .dec-status'), /^Done on \S+ in/);
    assert.match(await text(page, '#dzh .dec-result table'), han);
    assert.doesNotMatch(await text(page, '#den .dec-result table'), han);
    assert.match(await page.$eval('#dzh .dec-plot svg', (e) => e.textContent), han);
    assert.doesNotMatch(await page.$eval('#den .dec-plot svg', (e) => e.textContent), han);
    // A control changed after a lang change keeps its state; the page's lang changing redraws the
    // elements that follow it, and only those.
    await page.$eval('#zh', (e) => e.setAttribute('lang', 'en'));
    await page.waitForFunction(() => document.querySelector('#zh h2')?.textContent.startsWith('How much'));
    assert.equal(await page.$eval('#zh [data-key="alpha"]', (e) => e.value), '1', 'the state survives the redraw');
    await page.evaluate(() => { document.documentElement.lang = 'en'; });
    await page.waitForFunction(() => !/[\u4e00-\u9fff]/.test(document.querySelector('#page h2')?.textContent ?? '汉'));
    assert.equal(await text(page, '#dzh .share'), '分享', 'its own lang wins over the page’s');
    assert.ok(await fits(page), 'no horizontal scrolling');
    assert.deepEqual(errors, []);
    await page.close();
  });
}

for (const [width, lang] of [[1280, 'en'], [390, 'zh']]) {
  test(`at ${width} px in ${lang}, an embedded model widget computes nothing until Run, says what a run costs from its parameters, then runs; autorun runs at once`, async () => {
    const { page, errors } = await notes(`
      <specdec-widget id="wait" kind="decoding" lang="${lang}" experiment="acceptance" prompts="10" target_width="16"></specdec-widget>
      <specdec-widget id="mf" kind="modelfree" lang="${lang}" requests="10"></specdec-widget>
      <specdec-widget id="lw" kind="likesworld" lang="${lang}"></specdec-widget>`, { width });
    for (const id of ['wait', 'mf', 'lw']) await page.waitForSelector(`#${id}[data-waiting="run"]`, { timeout: 30_000 });
    await page.waitForTimeout(1500); // a run would have started 250 ms after drawing
    assert.deepEqual(await page.evaluate(() => [window.workers.started, window.helpers.started]), [0, 0], 'no worker started');
    const status = await text(page, '#wait .dec-status');
    assert.match(status, lang === 'zh' ? /^按“运行”开始。一次运行用 \S+ 上的 ×16 目标模型（19 M 参数，每步读 76 MB）解码 10 个提示词。$/
      : /^Press Run to start\. A run decodes 10 prompts with the ×16 target \(19 M parameters, 76 MB a step\) on flex\.$/);
    assert.match(await text(page, '#mf .mf-status'), lang === 'zh' ? /起草并验证 10 个请求/ : /drafts and verifies 10 requests of every workload/);
    assert.match(await text(page, '#lw .lw-status'), lang === 'zh' ? /150 次调用计时/ : /times 150 calls of each on flex/);
    // The cost follows the parameters.
    await page.$eval('#wait', (e) => e.setAttribute('prompts', '50'));
    await page.waitForFunction(() => /50/.test(document.querySelector('#wait .dec-status').textContent));
    // A sweep over a γ list counts its values, and says when one is not a whole number.
    await page.$eval('#wait', (e) => { e.setAttribute('gammas', '2,3'); e.setAttribute('experiment', 'sweep'); });
    await page.waitForFunction((l) => (l === 'zh' ? /2 个 γ 各一遍/ : /for each of 2 γ values/).test(document.querySelector('#wait .dec-status').textContent), lang);
    await page.$eval('#wait', (e) => e.setAttribute('gammas', 'abc'));
    await page.waitForFunction((l) => (l === 'zh' ? /提示词；但列表里有不是整数的值/ : /on \S+; a value of its list is not a whole number/).test(document.querySelector('#wait .dec-status').textContent), lang);
    await page.$eval('#wait', (e) => e.setAttribute('experiment', 'acceptance'));
    await page.$eval('#wait', (e) => e.setAttribute('target_width', '1'));
    const run = await page.$('#wait .dec-go');
    assert.ok(await run.isVisible(), 'the Run button shows');
    const box = await run.boundingBox();
    assert.ok(box.x >= 0 && box.x + box.width <= width, 'the Run button is within the page');
    await page.$eval('#wait', (e) => e.setAttribute('prompts', '10'));
    await run.click();
    await decodedAtLeast(page, '#wait', 1);
    assert.equal(await page.getAttribute('#wait', 'data-waiting'), null);
    // After the first Run, a change runs again by itself.
    await page.$eval('#wait', (e) => e.setAttribute('experiment', 'greedy'));
    await decodedAtLeast(page, '#wait', 2);
    // The others still wait; autorun set at run time starts one.
    assert.equal(await page.getAttribute('#mf', 'data-waiting'), 'run');
    await page.$eval('#mf', (e) => e.setAttribute('autorun', ''));
    await decodedAtLeast(page, '#mf', 1);
    assert.ok(await fits(page), 'no horizontal scrolling');
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test('Share from an element keeps hide, compact, lang and autorun: the link reopens the widget as it was shown', async () => {
  const { page, errors } = await notes(`
    <specdec-widget id="t" kind="theory" alpha="0.7" hide="gamma,c" compact lang="zh"></specdec-widget>
    <specdec-widget id="d" kind="decoding" experiment="acceptance" prompts="10" lang="en"></specdec-widget>`);
  const link = async (id) => {
    await page.click(`#${id} .share`);
    await page.waitForSelector(`#${id} .share-link:not([hidden])`);
    return page.$eval(`#${id} .share-link a`, (a) => a.href);
  };
  await drawn(page, '#t');
  const shared = new URL(await link('t'));
  assert.equal(shared.searchParams.get('hide'), 'gamma,c');
  assert.equal(shared.searchParams.get('compact'), '1');
  assert.equal(shared.searchParams.get('lang'), 'zh');
  assert.equal(shared.searchParams.get('autorun'), '0');
  const opened = await open(env, shared.href.replace(env.url, ''));
  const w = '[data-widget="theory"]';
  // autorun=0: the embed downloads nothing until its reader's Run, which it shows in its language.
  await opened.page.waitForSelector(`${w}[data-waiting="load"]`);
  assert.equal(await text(opened.page, `${w} .sw-run`), '运行');
  await opened.page.click(`${w} .sw-run`);
  await opened.page.waitForSelector(`html[data-ready="true"] ${w}[data-state="ok"]`, { timeout: 30_000 });
  assert.equal(await opened.page.$eval(`${w} [data-key="alpha"]`, (e) => e.value), '0.7');
  assert.deepEqual(await opened.page.$$eval(`${w} .control`, (els) => els.filter((e) => e.hidden).map((e) => e.querySelector('[data-key]').dataset.key)), ['gamma', 'c']);
  assert.equal(await opened.page.$eval(`${w} h2`, (e) => getComputedStyle(e).display), 'none', 'compact: no title');
  assert.equal(await opened.page.getAttribute('html', 'lang'), 'zh-CN');
  assert.equal(await text(opened.page, `${w} .share`), '分享');
  assert.deepEqual(opened.errors, []);
  await opened.page.close();
  // A model widget that waited for Run waits there too, in its language (before it loads the
  // engine, as an element does); its Run runs it.
  await drawn(page, '#d');
  const dec = new URL(await link('d'));
  assert.equal(dec.searchParams.get('lang'), 'en');
  const reopened = await open(env, dec.href.replace(env.url, ''));
  const d = '[data-widget="decoding"]';
  await reopened.page.waitForSelector(`${d}[data-waiting="load"]`);
  assert.match(await text(reopened.page, `${d} .sw-status`), /^Nothing is downloaded or computed until you ask/);
  await reopened.page.click(`${d} .sw-run`);
  await reopened.page.waitForFunction((s) => Number(document.querySelector(s).dataset.decoded || 0) >= 1, d, { timeout: 60_000 });
  assert.match(await text(reopened.page, `${d} .dec-status`), /^Done/);
  assert.equal(await reopened.page.$eval(`${d} [data-key="experiment"]`, (e) => e.value), 'acceptance');
  assert.deepEqual(reopened.errors, []);
  await reopened.page.close();
  assert.deepEqual(errors, []);
  await page.close();
});

for (const width of [1280, 390]) {
  test(`at ${width} px the widget reference reads in Chinese: the page, each widget's attributes, and its live example; the switch goes back to English`, async () => {
    const { page, errors } = await open(env, 'docs.html?lang=zh', { width });
    assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN');
    assert.equal(await page.$eval('h1', (e) => e.innerText.trim()), '组件参考');
    assert.equal(await page.title(), 'specdec-playground — 组件参考');
    assert.equal(await page.$$eval('[data-lang="en"]', (els) => els.filter((e) => e.getClientRects().length > 0).length), 0, 'no English prose shows');
    assert.equal(await text(page, '#theory-title'), 'theory — 能快多少：E、加速比与运算量');
    assert.deepEqual(await page.$$eval('#theory table.attrs th', (ths) => ths.map((h) => h.textContent)), ['属性', '含义', '取值', '默认值']);
    assert.match(await text(page, '#decoding table.attrs'), /autorun\s*立即加载并运行，不等“运行”/);
    assert.match(await text(page, '#theory table.attrs'), /autorun\s*立即加载引擎并画出，不等“运行”/);
    assert.match(await text(page, '#theory .copy'), /复制/);
    assert.match(await text(page, '#theory-iframe'), /\/embed\.html\?widget=theory&amp;autorun=0&amp;lang=zh" title="能快多少：E、加速比与运算量"/);
    await page.$eval('section#theory .live', (e) => e.scrollIntoView());
    await page.waitForSelector('section#theory specdec-widget[data-state="ok"]', { timeout: 30_000 });
    assert.equal(await text(page, 'section#theory specdec-widget h2'), '能快多少：E、加速比与运算量', 'the live example follows the page');
    assert.ok(await fits(page), 'no horizontal scrolling');
    assert.deepEqual(errors, []);
    // The switch reloads the page, which may abort what a live example's worker was loading.
    await Promise.all([page.waitForEvent('load'), page.click('[data-set-lang="en"]')]);
    await page.waitForSelector('html[data-ready="true"]');
    assert.equal(await page.$eval('h1', (e) => e.innerText.trim()), 'Widget reference');
    assert.deepEqual(errors.filter((e) => !e.startsWith('request failed')), []);
    await page.close();
  });
}

test('a removed element terminates its workers; moved, it keeps them; put back, it runs again', async () => {
  const { page, errors } = await notes('<specdec-widget id="d" kind="decoding" experiment="acceptance" prompts="200" autorun></specdec-widget><div id="elsewhere"></div>');
  const workers = () => page.evaluate(() => window.workers);
  const helpers = () => page.evaluate(() => window.helpers);
  await page.waitForFunction(() => window.workers.started >= 1 && /Running/.test(document.querySelector('#d .dec-status')?.textContent), null, { timeout: 60_000 });
  // Moved in one task (a slide framework re-parenting it): the job goes on.
  await page.evaluate(() => document.getElementById('elsewhere').append(document.getElementById('d')));
  await page.waitForTimeout(300);
  assert.deepEqual(await workers(), { started: 1, terminated: 0 });
  // Removed: its worker is terminated.
  const el = await page.evaluateHandle(() => { const d = document.getElementById('d'); d.remove(); return d; });
  await page.waitForFunction(() => window.workers.terminated >= 1, null, { timeout: 10_000 });
  assert.deepEqual(await workers(), { started: 1, terminated: 1 });
  // The helpers of its thread pool (threads − 1 of them; none on a one-thread build) end with it.
  const threads = await page.evaluate(() => import('./threads.js').then((m) => m.chooseBuild().threads));
  assert.deepEqual(await helpers(), { started: threads - 1, terminated: threads - 1 }, 'every helper of the removed worker ended');
  // Put back: it mounts its job again, on a fresh worker, and finishes it (one more result than
  // before: the first job may have finished before it was removed).
  const before = Number(await el.evaluate((d) => d.dataset.decoded || 0));
  await page.evaluate((d) => { document.body.append(d); d.setAttribute('prompts', '10'); }, el);
  await decodedAtLeast(page, '#d', before + 1);
  assert.equal((await workers()).started, 2);
  assert.match(await text(page, '#d .dec-status'), /^Done/);
  assert.deepEqual(errors, []);
  await page.close();
});
