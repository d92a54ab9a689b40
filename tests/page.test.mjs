// Browser tests of the page as a whole: headless Debian Chromium driven by playwright-core.
// Every widget draws, the lecture's exact numbers reach the page, sliders redraw, figures and
// tables export, the lecture presets, offline use, the Content-Security-Policy, a Rust panic, a
// failed engine load, and long use. Widgets have their own files (tree.test.mjs, ...); shared
// helpers are in helpers.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open, openFollowed, rewritePresets, wake } from './browser.mjs';
import { readFileSync } from 'node:fs';
import { WIDGETS, setControl, text, alertOf, rowsOf, alertShown, mfDone, decoded } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

test('the page loads without console errors and every widget draws', async () => {
  const { page, errors } = await open(env, '');
  for (const w of WIDGETS) {
    assert.equal(await page.getAttribute(`[data-widget="${w}"]`, 'data-state'), 'ok', w);
    assert.ok(await page.$(`[data-widget="${w}"] .view svg`), `${w} has an svg`);
    assert.ok(await page.$(`[data-widget="${w}"] [role="alert"]`), `${w} has an alert element`);
  }
  await page.waitForSelector('[data-widget="exactness"][data-mc]', { timeout: 30_000 });
  assert.deepEqual(errors, []);
  await page.close();
});

// What a select offers is the core's (imports.test.mjs holds the widgets' code to it): every
// select on the course page offers one of the lists `presets` declares, in its order.
test('every select offers a list the core declares, in its order', async () => {
  const { page, errors } = await open(env, '');
  const { declared, selects } = await page.evaluate(async () => {
    const d = (await import(new URL('modules.js', location.href).href)).declarations();
    const lists = [
      ...Object.values(d.menus).map((m) => m.map((c) => c.name)),
      d.widths.map((w) => String(w.width)),
      d.choose.devices.map((x) => x.key),
      d.variants,
      d.rules,
    ];
    const selects = [...document.querySelectorAll('[data-widget] select[data-key]')]
      .map((e) => ({ at: `${e.closest('[data-widget]').dataset.widget}.${e.dataset.key}`, values: [...e.options].map((o) => o.value) }));
    return { declared: lists.map((l) => l.join('|')), selects };
  });
  assert.ok(selects.length >= 40, `${selects.length} selects`);
  const strays = selects.filter((s) => !declared.includes(s.values.join('|'))).map((s) => `${s.at}: ${s.values.join(', ')}`);
  assert.deepEqual(strays, [], 'selects offering a list the core does not declare');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a widget that cannot be built says so in its place, and the widgets after it still mount', async () => {
  // The core declares none of the exactness lab's ranges: its controls cannot be built.
  const prepare = (p) => rewritePresets(p, 'delete p.exactness;');
  const { page, errors } = await open(env, '', { prepare });
  assert.equal(await page.getAttribute('html', 'data-ready'), 'true');
  assert.match(await page.textContent('[data-widget="exactness"] [role="alert"]'), /This widget could not be built: /);
  const names = await page.$$eval('[data-widget]', (els) => els.map((e) => e.dataset.widget));
  const after = names.slice(names.indexOf('exactness') + 1);
  for (const w of after) assert.ok(await page.$(`[data-widget="${w}"] .view`), `${w} was built`);
  assert.ok(after.length >= 5 && errors.length === 1, errors.join('\n'));
  await page.unrouteAll({ behavior: 'ignoreErrors' });
  await page.close();
});

test('the lecture’s exact numbers reach the page', async () => {
  const { page } = await open(env, '');
  assert.match(await text(page, '[data-widget="roofline"] .numbers'), /26\.90 ms per step, memory-bound/);
  await setControl(page, 'roofline', 'k', 8);
  assert.match(await text(page, '[data-widget="roofline"] .numbers'), /37\.63 ms per step, compute-bound/);
  await setControl(page, 'theory', 'c', 0);
  assert.match(await text(page, '[data-widget="theory"] .numbers'), /E = 3\.689 .* speedup 3\.69×, operations 1\.63×; optimal γ = — \(c = 0/);
  // At α = 1 the speedup rises for ever: the search's limit is not shown as the optimum.
  await setControl(page, 'theory', 'c', 0.05);
  await setControl(page, 'theory', 'alpha', 1);
  assert.match(await text(page, '[data-widget="theory"] .numbers'), /optimal γ = — \(α = 1: the speedup rises with γ towards 1\/c = 20\.00\)/);
  const tvs = await page.$$eval('[data-widget="exactness"] table.tvs tbody tr', (rows) => rows.map((r) => r.textContent));
  assert.match(tvs[0], /^correct.*exact over 4 tokens$/);
  assert.ok(tvs.slice(1).every((r) => /biased within 4 tokens$/.test(r)), tvs.join(' | '));
  const acc = await rowsOf(page, '[data-widget="multidraft"] table.acceptance');
  assert.deepEqual(acc.slice(1), ['given the drawn tokens 50.00% 100.00%', 'averaged over the drafts 43.75% 81.25%']);
  const order = await page.$$eval('[data-widget="tree"] table.order tbody tr td:nth-child(2)', (c) => c.map((x) => x.textContent));
  assert.deepEqual(order, ['machine', 'learning', 'algorithm', 'system', 'design', 'translation', 'model']);
  await page.close();
});

test('moving a slider changes the drawing', async () => {
  const { page, errors } = await open(env, '');
  for (const [w, key, value] of [['theory', 'alpha', 0.6], ['roofline', 'batch', 0], ['exactness', 'gamma', 2], ['multidraft', 'k', 3], ['tree', 'highlight', 2]]) {
    const before = await page.$eval(`[data-widget="${w}"] .view`, (el) => el.innerHTML);
    await setControl(page, w, key, value);
    const after = await page.$eval(`[data-widget="${w}"] .view`, (el) => el.innerHTML);
    assert.notEqual(after, before, `${w} drawing changed when ${key} moved`);
    assert.equal(await page.getAttribute(`[data-widget="${w}"]`, 'data-state'), 'ok');
  }
  assert.deepEqual(errors, []);
  await page.close();
});

test('every figure exports as SVG and PNG, every table as CSV', async () => {
  const { page, errors } = await open(env, '');
  const exportsOf = async (w) => {
    await page.click(`[data-widget="${w}"] details.export summary`);
    // The list is filled on the details' toggle event, which comes a task after the click.
    await page.waitForSelector(`[data-widget="${w}"] .export-list li`);
    return page.$$eval(`[data-widget="${w}"] .export-list li`, (lis) => lis.map((li) => li.firstChild.textContent));
  };
  const take = async (w, n, format) => {
    const [file] = await Promise.all([
      page.waitForEvent('download'),
      page.click(`[data-widget="${w}"] .export-list li:nth-child(${n}) button[data-format="${format}"]`),
    ]);
    return { name: file.suggestedFilename(), bytes: readFileSync(await file.path()) };
  };
  // The roofline: a plot, and the heat map drawn as two layers, exported as one picture.
  const items = await exportsOf('roofline');
  assert.deepEqual(items.map((t) => t.replace(/:.*/, '')), ['Figure 1', 'Figure 2']);
  assert.match(items[1], /Optimal gamma over batch and context/);
  const svg = await take('roofline', 2, 'svg');
  assert.equal(svg.name, 'roofline-figure-2.svg');
  const text = svg.bytes.toString('utf8');
  assert.match(text, /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="560" height="360"/);
  assert.equal((text.match(/<svg /g) ?? []).length, 3, 'the frame and both layers');
  // It is well-formed XML that the browser can draw: parse it there.
  const parsed = await page.evaluate((t) => {
    const doc = new DOMParser().parseFromString(t, 'image/svg+xml');
    return doc.querySelector('parsererror') ? 'error' : doc.documentElement.querySelectorAll('text').length;
  }, text);
  assert.ok(parsed > 81, `text elements: ${parsed}`);
  const png = await take('roofline', 1, 'png');
  assert.equal(png.name, 'roofline-figure-1.png');
  assert.deepEqual([...png.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.equal(png.bytes.readUInt32BE(16), 1120, 'twice the width');
  // The multi-draft acceptance table as CSV.
  const md = await exportsOf('multidraft');
  const table = md.findIndex((t) => t === 'Table 1') + 1;
  assert.ok(table > 0, md.join(' | '));
  const csv = await take('multidraft', table, 'csv');
  // UTF-8 with its byte order mark, so that a spreadsheet program reads α and γ as such.
  assert.deepEqual([...csv.bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
  assert.equal(csv.bytes.toString('utf8'), '\uFEFF,naive,MSS\r\ngiven the drawn tokens,50.00%,100.00%\r\naveraged over the drafts,43.75%,81.25%\r\n');
  assert.deepEqual(errors, []);
  await page.close();
});

test('CSV: a column of cells holding two numbers, “208 (352)”, becomes two columns; other cells stay whole', async () => {
  const { page } = await open(env, 'embed.html?widget=theory');
  const csv = await page.evaluate(async () => {
    const [{ csvOf }, { table }] = await Promise.all([import('./export.js'), import('./html.js')]);
    const box = document.createElement('div');
    box.innerHTML = table([['method', 'target calls (alone)', 'α by kind (tested)', '目标模型调用（单独解码）'],
      ['draft B, γ 4', '208 (352)', 'name 0.50 (12)', '17（40）'], ['draft A, γ 1', '1,024 (2,048)', 'answer 1.00 (3)', '3（3）']]);
    return csvOf(box.querySelector('table'));
  });
  assert.equal(csv, '\uFEFFmethod,target calls,target calls (alone),α by kind (tested),目标模型调用,目标模型调用（单独解码）\r\n'
    + '"draft B, γ 4",208,352,name 0.50 (12),17,40\r\n"draft A, γ 1","1,024","2,048",answer 1.00 (3),3,3\r\n');
  await page.close();
});

test('a job’s time reads in milliseconds under a second, never “0.0 s”', async () => {
  const { page, errors } = await open(env, 'embed.html?widget=modelfree&requests=10');
  const said = await page.evaluate(async () => {
    const { duration } = await import('./html.js');
    return [0.2, 30, 999.6, 1234].map(duration);
  });
  assert.deepEqual(said, ['under 1 ms', '30 ms', '1.0 s', '1.2 s']);
  await mfDone(page, 1);
  const status = await text(page, '[data-widget="modelfree"] .mf-status');
  assert.match(status, /^Done .*in (\d+ ms|\d+\.\d s)\.$/);
  assert.doesNotMatch(status, /\b0\.0 s/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the formulas keep their spaces: a word and the symbol beside it never touch', async () => {
  // The switch below reloads the page: a request it cuts off (a helper thread's script still
  // loading) is no error (`navigations`).
  const { page, errors, nav } = await openFollowed(env, '');
  // The gap between each word (mtext) of a formula and a symbol (mi) beside it, in each language.
  const gaps = () => page.$$eval('math mtext', (words) => words.filter((w) => w.getBoundingClientRect().width > 0).flatMap((w) => {
    const side = (step) => { let e = w[step]; while (e?.localName === 'mspace') e = e[step]; return e; };
    const r = w.getBoundingClientRect();
    const before = side('previousElementSibling');
    const after = side('nextElementSibling');
    return [
      ...(before?.localName === 'mi' ? [[`${before.textContent}|${w.textContent}`, r.left - before.getBoundingClientRect().right]] : []),
      ...(after?.localName === 'mi' ? [[`${w.textContent}|${after.textContent}`, after.getBoundingClientRect().left - r.right]] : []),
    ];
  }));
  const en = await gaps();
  assert.ok(en.length >= 3, JSON.stringify(en));
  for (const [where, gap] of en) assert.ok(gap >= 3, `${where}: ${gap.toFixed(1)} px`);
  await page.waitForLoadState('networkidle');
  await Promise.all([page.waitForEvent('load'), page.click('[data-set-lang="zh"]')]);
  await page.waitForSelector('html[data-ready="true"]');
  await wake(page);
  const zh = await gaps();
  assert.ok(zh.length >= 3, JSON.stringify(zh));
  for (const [where, gap] of zh) assert.ok(gap >= 3, `${where}: ${gap.toFixed(1)} px`);
  assert.deepEqual(nav.errorsBut(errors), []);
  await page.close();
});

test('offline after the first visit: the service worker serves the page, the module and the weights', async () => {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${env.url}?decoding.prompts=10`);
  await page.waitForSelector('html[data-ready="true"]', { timeout: 30_000 });
  await wake(page);
  // Installed (the shell kept) and in control of the page.
  await page.evaluate(async () => { await navigator.serviceWorker.ready; });
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 30_000 });
  // The build of the CPU module this browser runs (threads.js) is kept once the page names it.
  const dir = await page.evaluate(async () => (await import('/engine.js')).build.dir);
  // Polled from here: page.waitForFunction takes a Promise for a truthy answer and never waits.
  const keptYet = (d) => page.evaluate(async (x) => !!(await (await caches.open('specdec-playground-v1')).match(`/pkg/${x}specdec_bg.wasm`)), d);
  for (const until = Date.now() + 30_000; !(await keptYet(dir));) {
    assert.ok(Date.now() < until, `/pkg/${dir}specdec_bg.wasm not kept within 30 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const kept = await page.evaluate(async () => (await (await caches.open('specdec-playground-v1')).keys()).map((r) => new URL(r.url).pathname));
  for (const path of ['/index.html', `/pkg/${dir}specdec_bg.wasm`, `/pkg/${dir}specdec.js`, '/pkg/builds.json', '/pkg/weights/target.bpk', '/widgets/theory.js', '/pool-worker.js']) {
    assert.ok(kept.includes(path), `${path} kept: ${kept.join(' ')}`);
  }
  await context.setOffline(true);
  await page.reload();
  await page.waitForSelector('html[data-ready="true"]', { timeout: 30_000 });
  await wake(page);
  assert.equal(await page.getAttribute('[data-widget="theory"]', 'data-state'), 'ok');
  await setControl(page, 'theory', 'alpha', 0.9);
  assert.match(await text(page, '[data-widget="theory"] .numbers'), /E = 4\.686 tokens/);
  // The models too: the LikesWorld widget runs them in a worker from the kept module and weights.
  await page.waitForSelector('[data-widget="likesworld"][data-state="ok"] table.kinds', { timeout: 60_000 });
  // WebGPU chosen offline, its module never loaded with a network: the job runs on the CPU and
  // the note names that cause (not a module still being built).
  await decoded(page, 1);
  await setControl(page, 'decoding', 'backend', 'wgpu');
  await decoded(page, 2);
  assert.match(await text(page, '[data-widget="decoding"] .dec-note'), /^The WebGPU engine is not available offline/);
  assert.doesNotMatch(await text(page, '[data-widget="decoding"] .dec-note'), /serve\.sh/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('lecture presets: one click sets the controls and reproduces the lecture’s numbers; every preset is valid', async () => {
  const { page, errors } = await open(env, '');
  const preset = async (w, label) => {
    const before = await page.getAttribute(`[data-widget="${w}"]`, 'data-renders');
    await page.click(`[data-widget="${w}"] .presets button:text-is("${label}")`);
    assert.notEqual(await page.getAttribute(`[data-widget="${w}"]`, 'data-renders'), before);
  };
  await preset('theory', 'Table 1 · α 0.8, γ 5, c = ĉ = 0');
  assert.match(await text(page, '[data-widget="theory"] .numbers'), /E = 3\.689 .* speedup 3\.69×, operations 1\.63×/);
  await preset('theory', 'Figure 3 · α 0.8, c 0.01');
  assert.match(await text(page, '[data-widget="theory"] .numbers'), /optimal γ = 14 \(4\.2\d×\)/);
  await preset('theory', 'Figure 3 · α 0.8, c 0.1');
  assert.match(await text(page, '[data-widget="theory"] .numbers'), /optimal γ = 6 \(2\.47×\)/);
  await page.waitForURL(/theory\.c=0\.1/); // the URL is written a moment after the redraw
  await preset('roofline', 'Demo 1 · OPT-13B, batch 32, context 512');
  assert.match(await text(page, '[data-widget="roofline"] .numbers'), /^26\.90 ms per step, memory-bound/);
  await preset('multidraft', 'Exercise 6');
  assert.match((await rowsOf(page, '[data-widget="multidraft"] table.acceptance'))[1], /given the drawn tokens 50\.00% 100\.00%/);
  await preset('multidraft', 'The slide example, averaged over SSM 2');
  const averaged = await rowsOf(page, '[data-widget="multidraft"] table.acceptance');
  assert.equal(averaged.length, 2, 'no drawn tokens: only the average');
  assert.match(averaged[1], /averaged over the drafts 43\.75% 81\.25%/);
  await preset('tree', '⟨2,2,2,2⟩ · 31 nodes with the root');
  assert.match(await text(page, '[data-widget="tree"] .numbers'), /^30 speculated nodes vs/);
  await preset('tree', 'Exercise 5 · [a b c] [a b d e] [f g]');
  assert.match(await text(page, '[data-widget="tree"] .numbers'), /7 speculated nodes vs 9 tokens/);
  // Every preset of every analytic widget draws without an alert.
  for (const w of ['roofline', 'theory', 'exactness', 'multidraft', 'tree', 'choose']) {
    const n = await page.$$eval(`[data-widget="${w}"] .presets button`, (b) => b.length);
    assert.ok(n >= 2, w);
    for (let i = 0; i < n; i++) {
      await page.click(`[data-widget="${w}"] .presets button[data-preset="${i}"]`);
      assert.equal(await page.getAttribute(`[data-widget="${w}"]`, 'data-state'), 'ok', `${w} preset ${i}`);
    }
  }
  // The model widgets' presets name only options that exist.
  for (const w of ['decoding', 'modelfree']) {
    const bad = await page.evaluate(async (name) => {
      const { WIDGETS } = await import('./widgets/index.js');
      const widget = WIDGETS[name];
      return widget.presets.flatMap((p) => Object.entries(p.values).filter(([k, v]) => {
        const c = widget.controls.find((x) => x.key === k);
        if (!c) return true;
        if (c.type === 'select') return !c.options.some(([o]) => o === String(v));
        if (c.type === 'range' || c.type === 'number') return !(v >= c.min && v <= c.max);
        return false;
      }).map(([k, v]) => `${p.label}: ${k}=${v}`));
    }, w);
    assert.deepEqual(bad, [], w);
  }
  assert.deepEqual(errors, []);
  await page.close();
});

test('every page has a Content-Security-Policy and no inline script or handler', async () => {
  const { readdirSync } = await import('node:fs');
  const www = new URL('../www/', import.meta.url);
  const pages = readdirSync(www).filter((f) => f.endsWith('.html'));
  assert.ok(pages.length >= 4, pages.join(' '));
  for (const f of pages) {
    const html = readFileSync(new URL(f, www), 'utf8');
    assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'self'; script-src 'self' 'wasm-unsafe-eval';/, f);
    assert.doesNotMatch(html, /<script(?![^>]*\ssrc=)[^>]*>/, `${f}: an inline script`);
    assert.doesNotMatch(html, /\son[a-z]+=/i, `${f}: an inline event handler`);
  }
});

test('a Rust panic is shown in the widget and the widget recovers', async () => {
  const { page } = await open(env, '');
  await page.evaluate(() => window.specdec.panicOnNextCall());
  await setControl(page, 'theory', 'gamma', 7);
  // The engine restarts on its own and every widget redraws from its state; the message stays.
  await page.waitForSelector('[data-widget="theory"][data-state="ok"]', { timeout: 30_000 });
  assert.match(await alertOf(page, 'theory'), /internal error \(a bug\).*debug_panic was called.*the engine was restarted/);
  assert.ok(await alertShown(page, 'theory'));
  await setControl(page, 'theory', 'gamma', 8);
  assert.equal(await page.getAttribute('[data-widget="theory"]', 'data-state'), 'ok');
  assert.equal(await alertShown(page, 'theory'), false);
  assert.match(await text(page, '[data-widget="theory"] .numbers'), /E = 4\.329/);
  await setControl(page, 'tree', 'highlight', 1);
  assert.equal(await page.getAttribute('[data-widget="tree"]', 'data-state'), 'ok');
  await page.close();
});

test('a failed engine load shows a message and a retry brings the page up', async () => {
  const page = await env.browser.newPage({ viewport: { width: 1280, height: 900 }, serviceWorkers: 'block' });
  let fail = true;
  // The module the theory widget runs on: the lecture's (a model widget's engine that fails to
  // load: tests/lecture.test.mjs).
  await page.route('**/pkg/math/specdec_math_bg.wasm', (route) => (fail ? route.fulfill({ status: 503, body: 'busy' }) : route.continue()));
  await page.goto(`${env.url}embed.html?widget=theory`);
  await page.waitForSelector('html[data-ready="failed"]', { timeout: 30_000 });
  assert.match(await text(page, '[data-widget="theory"] [role="alert"]'), /Could not load the WebAssembly engine/);
  fail = false;
  await page.click('[data-widget="theory"] .retry');
  await page.waitForSelector('html[data-ready="true"]', { timeout: 30_000 });
  await wake(page);
  assert.equal(await page.getAttribute('[data-widget="theory"]', 'data-state'), 'ok');
  assert.ok(await page.$('[data-widget="theory"] .view svg'));
  await page.close();
});

test('long use: 10,000 slider moves and 100 model jobs with cancels keep memory and workers bounded', async () => {
  const { page, errors } = await open(env, '?modelfree.experiment=highlight&modelfree.workload=likesworld&modelfree.requests=200');
  await mfDone(page, 1);
  const health = () => page.evaluate(() => window.specdec.health());
  // Random moves of every slider of the analytic widgets (exactness starts a Monte Carlo job in
  // its worker on each move, superseding the last), 1,000 per round.
  const moves = (seed) => page.evaluate((s) => {
    let x = s;
    const rnd = () => { x = (x * 1103515245 + 12345) % 2147483648; return x / 2147483648; };
    const sliders = [...document.querySelectorAll('[data-widget]:is([data-widget="roofline"],[data-widget="theory"],[data-widget="exactness"],[data-widget="multidraft"],[data-widget="tree"]) input[type="range"]')];
    for (let i = 0; i < 1000; i++) {
      const el = sliders[Math.floor(rnd() * sliders.length)];
      const [lo, hi, step] = [Number(el.min), Number(el.max), Number(el.step) || 1];
      el.value = String(lo + Math.round((rnd() * (hi - lo)) / step) * step);
      el.dispatchEvent(new Event('input', { bubbles: true }));
    }
    return sliders.length;
  }, seed);
  assert.ok(await moves(1) >= 10, 'sliders found');
  const warm = await health();
  for (let r = 2; r <= 10; r++) await moves(r);
  const afterMoves = await health();
  // 100 model jobs, each started by one control change: one LikesWorld output decoded with a
  // suffix index over 200 requests (a fraction of a second), and every fourth the whole table
  // (every drafter on every workload, 200 requests each: many seconds), cancelled while it runs,
  // once the worker has reported progress on it and before it has answered. A cancel counts when
  // the widget says "Cancelled.", its cancel counter moves and no result arrived.
  const W = '[data-widget="modelfree"]';
  const counter = async (key) => Number(await page.getAttribute(W, `data-${key}`) ?? 0);
  const intended = 25;
  let done = await counter('decoded');
  let cancelled = 0;
  for (let i = 0; i < 100; i++) {
    if (i % 4 === 3) {
      const before = [await counter('decoded'), await counter('cancelled')];
      await setControl(page, 'modelfree', 'experiment', 'table');
      await page.waitForFunction((w) => document.querySelector(`${w} .mf-progress`).value > 0, W, { timeout: 60_000 });
      await page.click(`${W} .mf-cancel`);
      await page.waitForFunction((w) => document.querySelector(w).getAttribute('aria-busy') !== 'true', W, { timeout: 60_000 });
      const status = await text(page, `${W} .mf-status`);
      const after = [await counter('decoded'), await counter('cancelled')];
      if (status === 'Cancelled.' && after[0] === before[0] && after[1] === before[1] + 1) cancelled += 1;
      else console.log(`job ${i} was not cancelled mid-run: “${status}”, decoded ${before[0]} → ${after[0]}, cancelled ${before[1]} → ${after[1]}`);
    } else {
      if (i % 4 === 0 && i > 0) await setControl(page, 'modelfree', 'experiment', 'highlight');
      else await setControl(page, 'modelfree', 'request', i % 4);
      done += 1;
      await mfDone(page, done);
    }
  }
  // None of the cancelled jobs answered late.
  assert.equal(await counter('decoded'), done, 'no cancelled job answered');
  const end = await health();
  console.log(`long use: wasm memory ${warm.wasmBytes} B after 1,000 moves, ${afterMoves.wasmBytes} B after 10,000, ${end.wasmBytes} B after 100 jobs (${cancelled} of ${intended} cancelled mid-run); live workers ${end.workers} of ${end.channels} channels`);
  assert.equal(cancelled, intended, 'every fourth job was cancelled while it ran');
  assert.ok(afterMoves.wasmBytes <= warm.wasmBytes * 1.25 + 4 * 2 ** 20, `memory grew: ${warm.wasmBytes} → ${afterMoves.wasmBytes}`);
  assert.ok(end.wasmBytes <= warm.wasmBytes * 1.25 + 4 * 2 ** 20, `memory grew: ${warm.wasmBytes} → ${end.wasmBytes}`);
  assert.ok(end.workers <= end.channels && end.channels <= 4, JSON.stringify(end));
  // Every widget still answers.
  await setControl(page, 'theory', 'gamma', 4);
  assert.match(await text(page, '[data-widget="theory"] .numbers'), /E = /);
  await setControl(page, 'modelfree', 'request', 1);
  await mfDone(page, done + 1);
  assert.deepEqual(errors, []);
  await page.close();
});
