// Browser tests of embedding from another site, as instructors do: a page of notes served by a
// second origin (another port) loads specdec-widget.js from the playground's server by its
// versioned URL. Every widget works there, model widgets included (their worker starts through a
// same-origin blob that imports ours); a part that fails to load shows a message and Retry,
// inside the element, in English and Chinese. And the other way to embed, an iframe of
// embed.html: with `autorun=0` (the form docs.html recommends for notes) it too downloads
// nothing until its reader's Run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { start, open } from './browser.mjs';
import { text } from './helpers.mjs';
import { VERSION } from '../www/version.js';

const EVERY_KIND = {
  roofline: '', measured: 'width="1"', theory: '', exactness: '', multidraft: '', tree: '', choose: '', choosehere: 'width="1" prompts="5" nodes="8"', train: 'steps="50" shape="16,1,2,32"', boost: 'pools="1,2" prompts="10"', treepaths: 'batches="1"', likesworld: 'autorun',
  decoding: 'experiment="acceptance" prompts="10" autorun', modelfree: 'requests="10" autorun', exercises: '',
};

let env;
let notes; // { server, url }: the second origin, serving the notes pages below

/** The notes pages, by path: each loads the script from the playground's origin. */
function notesPages(script) {
  const page = (body, head = '') => `<!doctype html><html lang="en"><head><meta charset="utf-8">${head}
    <title>Someone's notes</title><link rel="icon" href="data:,"><script type="module" src="${script}"></script></head>
    <body><h1>Notes on speculative decoding</h1>${body}</body></html>`;
  return {
    '/notes.html': page(`<p>Two runs side by side:</p>
      <specdec-widget id="d1" kind="decoding" experiment="acceptance" prompts="10" autorun></specdec-widget>
      <specdec-widget id="d2" kind="decoding" experiment="greedy" prompts="10" gamma="3" autorun></specdec-widget>
      <p>And the closed form:</p>
      <specdec-widget id="t" kind="theory" alpha="0.7" gamma="5"></specdec-widget>`),
    // Notes without autorun: nothing heavy until a reader presses Run.
    '/quiet.html': page(`<specdec-widget id="t" kind="theory" alpha="0.7" gamma="5"></specdec-widget>
      <specdec-widget id="x" kind="exactness" runs="5000"></specdec-widget><specdec-widget id="x2" kind="exactness" runs="1000" compact></specdec-widget>
      <specdec-widget id="d" kind="decoding" experiment="acceptance" prompts="10"></specdec-widget>`),
    '/theory.html': page('<specdec-widget id="t" kind="theory" alpha="0.7"></specdec-widget><specdec-widget id="t2" kind="tree"></specdec-widget>'),
    // A page whose Content-Security-Policy allows no workers at all.
    '/no-workers.html': page('<specdec-widget id="d1" kind="decoding" experiment="acceptance" prompts="10" autorun></specdec-widget>',
      `<meta http-equiv="Content-Security-Policy" content="script-src ${new URL(script).origin} 'wasm-unsafe-eval'; worker-src 'none'">`),
    // Every kind, the model widgets with small jobs.
    '/all.html': page(Object.entries(EVERY_KIND).map(([kind, attrs]) => `<specdec-widget id="${kind}" kind="${kind}" ${attrs}></specdec-widget>`).join('\n')),
  };
}

before(async () => {
  env = await start({ webgpu: false });
  const pages = notesPages(`${env.url}v${VERSION}/specdec-widget.js`);
  // ?isolated=1: the notes page is itself cross-origin isolated (COOP + COEP require-corp), as a
  // page that needs SharedArrayBuffer would be; what it loads from us must then allow it.
  // ?html-lang=zh-CN: the notes are written in that language (their <html lang>).
  const server = createServer((req, res) => {
    const u = new URL(req.url, 'http://x');
    const body = pages[u.pathname]?.replace('<html lang="en">', `<html lang="${u.searchParams.get('html-lang') ?? 'en'}">`);
    const isolated = u.searchParams.get('isolated') === '1'
      ? { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' } : {};
    res.writeHead(body ? 200 : 404, { 'content-type': 'text/html; charset=utf-8', ...isolated });
    res.end(body ?? 'not found');
  });
  await new Promise((ok) => { server.listen(0, '127.0.0.1', ok); });
  notes = { server, url: `http://127.0.0.1:${server.address().port}` };
});
after(async () => {
  await env?.close();
  await new Promise((ok) => { notes?.server.close(ok); });
});

/** Opens a notes page of the second origin (notes in Chinese with zh), collecting errors. */
async function openNotes(path, { zh = false } = {}) {
  const page = await env.browser.newPage({ viewport: { width: 1280, height: 900 }, serviceWorkers: 'block' });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  return { page, errors, go: () => page.goto(notes.url + path + (zh ? `${path.includes('?') ? '&' : '?'}html-lang=zh-CN` : '')) };
}

const finished = (page, sel) => page.waitForFunction((s) => Number(document.querySelector(s)?.dataset.decoded || 0) >= 1, sel, { timeout: 180_000 });

for (const isolated of [false, true]) {
  test(`a page on another origin${isolated ? ', itself cross-origin isolated,' : ''} embeds two decoding widgets and a theory widget: all three finish, no errors`, async () => {
    const { page, errors, go } = await openNotes(`/notes.html${isolated ? '?isolated=1' : ''}`);
    await go();
    assert.notEqual(new URL(page.url()).origin, new URL(env.url).origin, 'the notes are on another origin');
    assert.equal(await page.evaluate(() => crossOriginIsolated), isolated);
    await page.waitForSelector('#t[data-state="ok"] svg', { timeout: 30_000 });
    assert.match(await text(page, '#t .numbers'), /E = 2\.941 tokens/);
    // The stylesheet came from the playground's origin and applies (scoped to the widget).
    assert.ok(await page.$eval('#t', (e) => e.classList.contains('widget') && getComputedStyle(e.querySelector('form.controls')).display !== 'inline'));
    await finished(page, '#d1');
    await finished(page, '#d2');
    assert.equal(await page.$$eval('table.dec-kinds', (t) => t.length), 1, 'the acceptance table');
    assert.match(await text(page, '#d1 .dec-status'), /^Done/);
    assert.match(await text(page, '#d2 .dec-status'), /^Done/);
    assert.equal(await page.getAttribute('#d1', 'data-cancelled'), null, 'neither run cancelled the other');
    assert.equal(await page.getAttribute('#d2', 'data-cancelled'), null);
    if (isolated) {
      // Isolated notes give the widgets shared memory: the helper threads, which the page starts
      // from our origin as it starts the jobs' worker, ran the matmuls of a timed job (on ×4,
      // whose largest matrices are split; the trained target's are too small to be).
      await page.evaluate(() => {
        const d2 = document.getElementById('d2');
        d2.setAttribute('target_width', '4');
        d2.setAttribute('experiment', 'speedup');
      });
      await page.waitForFunction(() => Number(document.querySelector('#d2').dataset.decoded || 0) >= 2, null, { timeout: 180_000 });
      const cores = await page.evaluate(() => Math.min(8, navigator.hardwareConcurrency));
      assert.match(await text(page, '#d2 .dec-during'), cores > 1 ? new RegExp(`ran on ${cores} threads`) : /1 thread/);
    }
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test('a page on another origin embeds every kind of widget: each draws, and each one with a worker job finishes it', async () => {
  const { page, errors, go } = await openNotes('/all.html');
  await go();
  // The list above is every widget there is.
  const kinds = await page.evaluate(async (base) => Object.keys((await import(`${base}widgets/index.js`)).WIDGETS), `${env.url}v${VERSION}/`);
  assert.deepEqual(Object.keys(EVERY_KIND).sort(), kinds.sort());
  for (const kind of kinds) await page.waitForSelector(`#${kind}[data-state="ok"]`, { timeout: 30_000 });
  // The jobs in workers: Monte Carlo, the LikesWorld scores, decoding, drafting without a model,
  // the measured roofline, the tree-vs-paths timing and the boost-tuned pools once asked, and a
  // draft trained in its own worker (the training module from our origin, the draft kept in the
  // notes' origin's storage).
  await page.click('#measured .mr-go');
  await page.click('#train .tr-go');
  await page.click('#treepaths .tp-go');
  await page.click('#boost .bt-go');
  // The exactness lab's Monte Carlo waits for its Run in notes, as the model widgets do.
  await page.click('#exactness .mc-go');
  const marks = { exactness: 'mc', likesworld: 'model', decoding: 'decoded', modelfree: 'decoded', measured: 'decoded', treepaths: 'decoded', boost: 'decoded', train: 'trained' };
  for (const [kind, mark] of Object.entries(marks)) {
    await page.waitForFunction(([k, m]) => Number(document.getElementById(k).dataset[m] || 0) >= 1, [kind, mark], { timeout: 180_000 });
  }
  assert.deepEqual(errors, []);
  await page.close();
});

for (const zh of [false, true]) {
  test(`notes download nothing heavy before a reader asks: no wasm, no weights, no worker, no Monte Carlo until Run; then every element draws and the one pressed runs${zh ? ', in Chinese' : ''}`, async () => {
    const { page, errors, go } = await openNotes('/quiet.html', { zh });
    const heavy = [];
    page.on('request', (r) => { if (/\.wasm$|\.bpk$|worker\.js$/.test(new URL(r.url()).pathname)) heavy.push(new URL(r.url()).pathname); });
    await go();
    for (const id of ['t', 'x', 'x2', 'd']) await page.waitForSelector(`#${id}[data-waiting="load"] .sw-run`, { timeout: 30_000 });
    // Each shows its title (but the compact one) and says what Run will download.
    const title = await page.evaluate(async ([base, key]) => (await import(`${base}widgets/theory.js`)).default[key], [`${env.url}v${VERSION}/`, zh ? 'title_zh' : 'title']);
    assert.equal(await text(page, '#t h2'), title);
    assert.equal(await page.$eval('#x2 h2', (e) => getComputedStyle(e).display), 'none');
    assert.match(await text(page, '#x .sw-status'), zh ? /在你要求之前，什么都不下载、不计算/ : /^Nothing is downloaded or computed until you ask: Run downloads the playground’s engine/);
    assert.equal(await text(page, '#x .sw-run'), zh ? '运行' : 'Run');
    await page.waitForTimeout(1500); // time enough for anything started on load to ask
    assert.deepEqual(heavy, [], 'no wasm module, weights or worker before a click');
    assert.equal(await page.$('specdec-widget svg'), null, 'nothing drawn yet');
    // Run on the first exactness lab: the engine loads once; it draws and its Monte Carlo runs.
    await page.click('#x .sw-run');
    await page.waitForFunction(() => Number(document.querySelector('#x')?.dataset.mc || 0) >= 1, null, { timeout: 60_000 });
    assert.match(await text(page, '#x .mc-numbers'), /^5,000 runs of|^.*运行 5,000 次/);
    // The lecture's module, and (a decoding element is among them) the models' module, once each.
    assert.equal(heavy.filter((p) => p.endsWith('/pkg/math/specdec_math_bg.wasm')).length, 1, heavy.join(' '));
    assert.equal(heavy.filter((p) => /\/specdec_bg\.wasm$/.test(p)).length, 1, heavy.join(' '));
    assert.ok(heavy.some((p) => p.endsWith('target.bpk')), heavy.join(' '));
    // The others draw as well; their jobs wait for their own Run.
    await page.waitForSelector('#t[data-state="ok"] svg', { timeout: 30_000 });
    assert.match(await text(page, '#t .numbers'), /E = 2\.941|2\.941/);
    await page.waitForSelector('#x2[data-state="ok"][data-waiting="run"]', { timeout: 30_000 });
    await page.waitForSelector('#d[data-waiting="run"]', { timeout: 30_000 });
    assert.equal(await page.getAttribute('#x2', 'data-mc'), null, 'the other Monte Carlo waits');
    assert.match(await text(page, '#x2 .mc-numbers'), zh ? /^按“运行”开始。一次运行在后台线程里用真实的随机数对玩具模型做 1,000 次生成（蒙特卡洛）。/ : /^Press Run to start\. A run samples 1,000 generations of the toy model/);
    await page.click('#x2 .mc-go');
    await page.waitForFunction(() => Number(document.querySelector('#x2')?.dataset.mc || 0) >= 1, null, { timeout: 60_000 });
    assert.equal(await page.getAttribute('#d', 'data-decoded'), null, 'the decoding widget still waits');
    assert.deepEqual(errors, []);
    await page.close();
  });
}

// A module the element imports (widgets/theory.js, beside the script) or the wasm module the
// theory widget runs on (the lecture's), refused once by the host (503).
for (const [part, zh] of [['widgets/theory.js', false], ['pkg/math/specdec_math_bg.wasm', false], ['widgets/theory.js', true], ['pkg/math/specdec_math_bg.wasm', true]]) {
  test(`a failed load (${part}) shows a message and Retry inside the element, ${zh ? 'in Chinese' : 'in English'}; Retry then loads it`, async () => {
    const { page, errors, go } = await openNotes('/theory.html', { zh });
    let fail = true;
    const url = `**/${part}`;
    await page.route(url, (route) => (fail ? route.fulfill({ status: 503, body: 'busy' }) : route.fallback()));
    await go();
    // The engine loads when a reader asks for it (its modules, beside the script, before).
    if (part.endsWith('.wasm')) await page.click('#t[data-waiting="load"] .sw-run');
    await page.waitForSelector('#t[data-state="load-error"]', { timeout: 30_000 });
    await page.waitForSelector('#t2[data-state="load-error"]', { timeout: 30_000 });
    const message = await text(page, '#t [role="alert"]');
    assert.match(message, zh ? /^这个组件无法加载：.+ 重试$/ : /^This widget could not be loaded: .+ Retry$/);
    assert.equal(await page.$eval('#t .retry', (b) => b.textContent), zh ? '重试' : 'Retry');
    fail = false;
    await page.click('#t .retry');
    // One Retry brings up every element that failed.
    await page.waitForSelector('#t[data-state="ok"] svg', { timeout: 30_000 });
    await page.waitForSelector('#t2[data-state="ok"] svg', { timeout: 30_000 });
    assert.match(await text(page, '#t .numbers'), /E = .*2\.941/);
    // Only the refused response is logged (by the browser), nothing uncaught.
    assert.deepEqual(errors.filter((e) => !/503/.test(e)), []);
    await page.close();
  });
}

test('a page whose CSP refuses workers: the decoding widget draws and says the worker was refused, nothing uncaught', async () => {
  const { page, errors, go } = await openNotes('/no-workers.html');
  await go();
  await page.waitForSelector('#d1 .dec-retry:not([hidden])', { timeout: 60_000 });
  assert.match(await text(page, '#d1 .dec-status'), /^The engine could not be loaded: (the browser refused to start its worker|its worker script .* did not load)/);
  assert.equal(await page.getAttribute('#d1', 'aria-busy'), 'false', 'not stuck on Starting…');
  // The browser reports the policy's refusal itself; nothing of ours is uncaught.
  assert.deepEqual(errors.filter((e) => !/Content Security Policy/.test(e)), []);
  await page.close();
});

test('a worker that cannot load shows the reason and Retry in the run bar; Retry runs the job', async () => {
  const { page, errors, go } = await openNotes('/notes.html');
  let fail = true;
  await page.route('**/worker.js', (route) => (fail ? route.fulfill({ status: 503, body: 'busy' }) : route.fallback()));
  await go();
  await page.waitForSelector('#d1 .dec-retry:not([hidden])', { timeout: 60_000 });
  assert.match(await text(page, '#d1 .dec-status'), /^The engine could not be loaded: .*worker\.js/);
  assert.equal(await page.getAttribute('#d1', 'aria-busy'), 'false', 'not stuck on Starting…');
  fail = false;
  await page.click('#d1 .dec-retry');
  await finished(page, '#d1');
  assert.match(await text(page, '#d1 .dec-status'), /^Done/);
  assert.equal(await page.$eval('#d1 .dec-retry', (b) => b.hidden), true);
  // Only the refused worker script's own failure is logged, nothing uncaught.
  assert.deepEqual(errors.filter((e) => !/503|worker\.js/.test(e)), []);
  await page.close();
});

// embed.html?autorun=0: an iframe in notes sleeps as an element does. "Ready" (<html
// data-ready="true">) is what the page shows by itself: here the widget asleep, data-waiting="load".
const HEAVY = /\.wasm$|\.bpk$|worker\.js$/;
/** The widget's title in `lang`, from its module (the page's own). */
const titleOf = (page, kind, lang) => page.evaluate(async ([k, key]) => (await import(`./widgets/${k}.js`)).default[key], [kind, lang === 'zh' ? 'title_zh' : 'title']);

for (const [kind, query, lang] of [['decoding', 'experiment=acceptance&prompts=10', 'en'], ['theory', 'alpha=0.7&gamma=5', 'zh']]) {
  test(`embed.html?widget=${kind}&autorun=0${lang === 'zh' ? '&lang=zh' : ''} downloads nothing (no wasm, no weights, no worker, no service worker) until Run, showing its title and Run; Run loads, draws and runs it`, async () => {
    const requests = [];
    const { page, errors } = await open(env, `embed.html?widget=${kind}&${query}&autorun=0${lang === 'zh' ? '&lang=zh' : ''}`, { requests, serviceWorkers: 'allow' });
    const w = `[data-embed][data-widget="${kind}"]`;
    assert.equal(await page.getAttribute(w, 'data-waiting'), 'load');
    assert.equal(await text(page, `${w} h2`), await titleOf(page, kind, lang));
    assert.ok(await page.$eval(`${w} h2`, (e) => e.getClientRects().length > 0), 'the title shows');
    assert.ok((await text(page, `${w} .intro`)).length > 40, 'the introduction');
    // One widget, one engine: the element's "once for every widget on this page" is not said.
    // What Run downloads: the models' engine for a model widget, the lecture's module alone else.
    const says = kind === 'decoding'
      ? [/^在你要求之前，什么都不下载、不计算：按“运行”会下载这个演示的引擎（它的 WebAssembly 模块和训练好的模型权重），然后画出这个组件。$/,
        /^Nothing is downloaded or computed until you ask: Run downloads the playground’s engine \(its WebAssembly module and the trained models’ weights\) and draws this widget\.$/]
      : [/^在你要求之前，什么都不下载、不计算：按“运行”会下载这个演示讲解数学部分的引擎（一个 0\.2 MB 的 WebAssembly 模块），然后画出这个组件。$/,
        /^Nothing is downloaded or computed until you ask: Run downloads the playground’s engine for the lecture’s mathematics \(a WebAssembly module of 0\.2 MB\) and draws this widget\.$/];
    assert.match(await text(page, `${w} .sw-status`), lang === 'zh' ? says[0] : says[1]);
    assert.equal(await text(page, `${w} .sw-run`), lang === 'zh' ? '运行' : 'Run');
    assert.equal(await page.getAttribute('html', 'lang'), lang === 'zh' ? 'zh-CN' : 'en');
    await page.waitForTimeout(2000); // time enough for anything started on load to ask
    assert.deepEqual(requests.filter((r) => HEAVY.test(r)), [], 'nothing heavy before Run');
    assert.equal(await page.evaluate(async () => (await navigator.serviceWorker.getRegistrations()).length), 0, 'no service worker (its install fetches the weights)');
    assert.equal(await page.$(`${w} svg, ${w} form.controls`), null, 'nothing drawn yet');
    await page.click(`${w} .sw-run`);
    await page.waitForSelector(`html[data-ready="true"] ${w}[data-state="ok"]`, { timeout: 30_000 });
    assert.equal(requests.filter((r) => r.endsWith('/pkg/math/specdec_math_bg.wasm')).length, 1, requests.join(' '));
    // The models' module and weights for the decoding widget only.
    assert.equal(requests.filter((r) => /\/specdec_bg\.wasm$/.test(r)).length, kind === 'decoding' ? 1 : 0, requests.join(' '));
    assert.equal(requests.some((r) => r.endsWith('/target.bpk')), kind === 'decoding', requests.join(' '));
    if (kind === 'decoding') {
      // Its Run was this Run: the job starts without a second click.
      await page.waitForFunction((s) => Number(document.querySelector(s).dataset.decoded || 0) >= 1, w, { timeout: 60_000 });
      assert.match(await text(page, `${w} .dec-status`), /^Done/);
      assert.ok(await page.$(`${w} table.dec-kinds`), 'the acceptance table');
    } else {
      assert.ok(await page.$(`${w} svg`), 'the figure');
      assert.match(await text(page, `${w} .numbers`), /2\.941/);
      assert.equal(await text(page, `${w} .share`), '分享');
    }
    assert.equal(await page.getAttribute(w, 'data-waiting'), null);
    // Drawn, it keeps an offline copy as the course page does.
    await page.waitForFunction(async () => (await navigator.serviceWorker.getRegistrations()).length === 1, null, { timeout: 10_000 });
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test('embed.html without autorun=0 loads at once, as before: drawn when ready, its module asked for (the lecture’s for the theory widget, with no model)', async () => {
  const requests = [];
  const { page, errors } = await open(env, 'embed.html?widget=theory&alpha=0.7', { requests });
  assert.equal(await page.getAttribute('[data-embed]', 'data-state'), 'ok');
  assert.equal(await page.getAttribute('[data-embed]', 'data-waiting'), null);
  assert.ok(await page.$('[data-embed] svg'));
  assert.equal(await page.$('.sw-run'), null, 'no Run to load it');
  assert.ok(requests.includes('/pkg/math/specdec_math_bg.wasm'), requests.join(' '));
  assert.ok(!requests.some((r) => /\/specdec_bg\.wasm$|\.bpk$/.test(r)), requests.join(' '));
  assert.deepEqual(errors, []);
  await page.close();
});

test('embed.html?autorun=0&compact=1: asleep without title or introduction; a module that fails to load after Run shows the message and Try again, which loads it', async () => {
  let fail = true;
  const prepare = (p) => p.route('**/pkg/math/specdec_math_bg.wasm', (route) => (fail ? route.fulfill({ status: 503, body: 'busy' }) : route.fallback()));
  const { page, errors } = await open(env, 'embed.html?widget=exactness&runs=1000&autorun=0&compact=1', { prepare, width: 390, height: 844 });
  const w = '[data-embed][data-widget="exactness"]';
  assert.equal(await page.getAttribute(w, 'data-waiting'), 'load');
  assert.deepEqual(await page.$$eval(`${w} h2, ${w} .intro`, (els) => els.map((e) => getComputedStyle(e).display)), ['none', 'none']);
  assert.ok(await page.isVisible(`${w} .sw-run`));
  await page.click(`${w} .sw-run`);
  await page.waitForSelector('html[data-ready="failed"]', { timeout: 30_000 });
  assert.match(await text(page, `${w} [role="alert"]`), /^Could not load the WebAssembly engine: .*503.* Try again$/);
  fail = false;
  await page.click(`${w} .retry`);
  await page.waitForSelector(`html[data-ready="true"] ${w}[data-state="ok"]`, { timeout: 30_000 });
  // Drawn as if its Run was pressed: the Monte Carlo runs, in the compact widget.
  await page.waitForFunction((s) => Number(document.querySelector(s).dataset.mc || 0) >= 1, w, { timeout: 60_000 });
  assert.match(await text(page, `${w} .mc-numbers`), /^1,000 runs of/);
  assert.equal(await page.$eval(`${w} h2`, (e) => getComputedStyle(e).display), 'none');
  assert.deepEqual(errors.filter((e) => !/503/.test(e)), []);
  await page.close();
});
