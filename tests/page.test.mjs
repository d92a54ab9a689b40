// Browser tests of the playground page: headless Debian Chromium driven by playwright-core.
// They check what a student sees: every widget draws, controls redraw, the lecture's exact numbers
// reach the page, bad input gets a clear message and the widget recovers, and embedding works.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { readFileSync } from 'node:fs';
import { audit } from './a11y.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

const WIDGETS = ['roofline', 'theory', 'exactness', 'multidraft', 'tree'];

/** Sets a control's value the way a person does (an input event that bubbles). */
async function setControl(page, widget, key, value) {
  const before = await page.getAttribute(`[data-widget="${widget}"]`, 'data-renders');
  await page.$eval(`[data-widget="${widget}"] [data-key="${key}"]`, (el, v) => {
    el.value = String(v);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, value);
  const after = await page.getAttribute(`[data-widget="${widget}"]`, 'data-renders');
  assert.notEqual(after, before, `${widget}.${key} redrew`);
}

const text = (page, sel) => page.$eval(sel, (el) => el.textContent.replace(/\s+/g, ' ').trim());
const alertOf = (page, w) => text(page, `[data-widget="${w}"] [role="alert"]`);
const rowsOf = (page, sel) => page.$$eval(`${sel} tr`, (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent.trim()).join(' ')));
const alertShown = (page, w) => page.$eval(`[data-widget="${w}"] [role="alert"]`, (el) => el.classList.contains('shown'));

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

test('the lecture’s exact numbers reach the page', async () => {
  const { page } = await open(env, '');
  assert.match(await text(page, '[data-widget="roofline"] .numbers'), /26\.90 ms per step, memory-bound/);
  await setControl(page, 'roofline', 'k', 8);
  assert.match(await text(page, '[data-widget="roofline"] .numbers'), /37\.63 ms per step, compute-bound/);
  await setControl(page, 'theory', 'c', 0);
  assert.match(await text(page, '[data-widget="theory"] .numbers'), /E = 3\.689 .* speedup 3\.69×, operations 1\.63×; optimal γ = — \(c = 0/);
  const tvs = await page.$$eval('[data-widget="exactness"] table.tvs tbody tr', (rows) => rows.map((r) => r.textContent));
  assert.match(tvs[0], /^correct.*exact$/);
  assert.ok(tvs.slice(1).every((r) => r.endsWith('biased')), tvs.join(' | '));
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

test('a malformed tree config shows an alert and the widget recovers', async () => {
  const { page, errors } = await open(env, '');
  await setControl(page, 'tree', 'mode', 'config');
  for (const [bad, msg] of [['<2,,1>', /level 2 is empty/], ['<0>', /width 0/], ['<99,99,99,99>', /over the budget/], ['<2,x', /not closed/]]) {
    await page.fill('[data-widget="tree"] [data-key="config"]', bad);
    assert.ok(await alertShown(page, 'tree'), bad);
    assert.match(await alertOf(page, 'tree'), msg);
    assert.equal(await page.getAttribute('[data-widget="tree"]', 'data-state'), 'error');
  }
  await page.fill('[data-widget="tree"] [data-key="config"]', '⟨2,2,1⟩');
  assert.equal(await alertShown(page, 'tree'), false);
  assert.equal(await page.getAttribute('[data-widget="tree"]', 'data-state'), 'ok');
  assert.match(await text(page, '[data-widget="tree"] .numbers'), /^10 speculated nodes vs 12 tokens/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('bad distributions in the multi-draft widget are explained', async () => {
  const { page } = await open(env, '');
  await page.fill('[data-widget="multidraft"] [data-key="p"]', '0.5,0.6');
  assert.match(await alertOf(page, 'multidraft'), /sums to 1\.1/);
  await page.fill('[data-widget="multidraft"] [data-key="p"]', '0.25,0.25,0.25,0.25');
  await page.fill('[data-widget="multidraft"] [data-key="given"]', '1,1');
  assert.match(await alertOf(page, 'multidraft'), /draft 1 gives token 1 probability 0/);
  await page.fill('[data-widget="multidraft"] [data-key="given"]', '');
  assert.equal(await alertShown(page, 'multidraft'), false);
  assert.deepEqual(await rowsOf(page, '[data-widget="multidraft"] table.acceptance'), [' naive MSS', 'averaged over the drafts 43.75% 81.25%']);
  await page.close();
});

test('hostile URL parameters get a message and sane values', async () => {
  const q = '?theory.alpha=abc&roofline.k=99999&exactness.variant=%3Cimg%20src%3Dx%3E&tree.paths=%3Cb%3Ex%3C%2Fb%3E%20y';
  const { page, errors } = await open(env, q);
  assert.match(await alertOf(page, 'theory'), /α: “abc” is not a number; using 0\.8/);
  assert.match(await alertOf(page, 'roofline'), /k tokens: 99999 is outside 1…64; using 64/);
  assert.match(await alertOf(page, 'exactness'), /not one of the choices/);
  assert.equal(await page.$('[data-widget="exactness"] img'), null, 'no markup injected');
  assert.equal(await page.$('[data-widget="tree"] .view b:not(.numbers b)'), null);
  for (const w of WIDGETS) assert.equal(await page.getAttribute(`[data-widget="${w}"]`, 'data-state'), 'ok', w);
  assert.deepEqual(errors, []);
  await page.close();
});

test('URL values off a control’s step are snapped with a note, and the server survives a bad escape', async () => {
  const { page, errors } = await open(env, '?theory.gamma=2.5&tree.highlight=1.5');
  assert.match(await alertOf(page, 'theory'), /γ: 2\.5 is not on the control’s steps of 1; using 3/);
  assert.match(await alertOf(page, 'tree'), /1\.5 is not on the control’s steps of 1; using 2/);
  for (const w of ['theory', 'tree']) {
    assert.equal(await page.getAttribute(`[data-widget="${w}"]`, 'data-state'), 'ok', w);
    assert.ok(await page.$(`[data-widget="${w}"] .view svg`), `${w} draws`);
  }
  assert.equal((await fetch(`${env.url}%`)).status, 400);
  assert.equal((await fetch(`${env.url}%E0%A4%A`)).status, 400);
  assert.equal((await fetch(env.url)).status, 200, 'still serving');
  assert.deepEqual(errors, []);
  await page.close();
});

test('state goes into the URL and an embed shows one widget without controls', async () => {
  const { page } = await open(env, '');
  await setControl(page, 'theory', 'alpha', 0.7);
  assert.match(page.url(), /theory\.alpha=0\.7/);
  await page.close();
  const { page: embed, errors } = await open(env, 'embed.html?widget=theory&alpha=0.7&gamma=4&c=0.05&controls=0');
  assert.equal(await embed.$$eval('[data-widget]', (els) => els.length), 1);
  assert.equal(await embed.$eval('[data-widget="theory"] form', (f) => f.hidden), true);
  assert.match(await text(embed, '[data-widget="theory"] .numbers'), /E = 2\.773 tokens/);
  assert.deepEqual(errors, []);
  const { page: unknown } = await open(env, 'embed.html?widget=%3Cscript%3E');
  assert.match(await text(unknown, '[role="alert"]'), /Unknown widget “script”\. Choose one of: roofline/);
  await embed.close();
  await unknown.close();
});

test('embed.html hides controls by name and has a compact mode', async () => {
  const { page, errors } = await open(env, 'embed.html?widget=theory&hide=gamma,c,nope&compact=1');
  const hidden = await page.$$eval('[data-widget="theory"] .control', (els) => els.map((e) => [e.querySelector('[data-key]').dataset.key, e.hidden]));
  assert.deepEqual(hidden, [['alpha', false], ['gamma', true], ['c', true], ['c_hat', false]]);
  assert.match(await alertOf(page, 'theory'), /hide: “nope” is not a control of this widget \(alpha, gamma, c, c_hat\)/);
  assert.equal(await page.$eval('[data-widget="theory"] .intro', (e) => getComputedStyle(e).display), 'none');
  assert.deepEqual(errors, []);
  await page.close();
});

/** A page of someone's notes with <specdec-widget> elements; resolves once `sel` has drawn. */
async function notes(path, sel) {
  const page = await env.browser.newPage({ viewport: { width: 1280, height: 900 }, serviceWorkers: 'block' });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(env.url + path);
  await page.waitForSelector(`${sel}[data-state]`, { timeout: 30_000 });
  return { page, errors };
}

test('<specdec-widget>: attributes set the state, hide controls and redraw when changed; bad values get a message', async () => {
  const el = 'specdec-widget#theory';
  const { page, errors } = await notes('element.html', el);
  const url = page.url();
  const value = (key) => page.$eval(`${el} [data-key="${key}"]`, (e) => e.value);
  const shown = (key) => page.$eval(`${el} [data-key="${key}"]`, (e) => !e.closest('.control').hidden);
  const renders = () => page.$eval(el, (e) => Number(e.dataset.renders));
  const setAttr = async (name, v) => {
    const before = await renders();
    await page.$eval(el, (e, [n, x]) => (x === null ? e.removeAttribute(n) : e.setAttribute(n, x)), [name, v]);
    await page.waitForFunction(([s, b]) => Number(document.querySelector(s).dataset.renders) > b, [el, before]);
  };
  assert.equal(await value('alpha'), '0.7');
  assert.equal(await shown('gamma'), false);
  assert.equal(await shown('alpha'), true);
  // α = 0.7, γ = 5: E = (1 − 0.7⁶)/(1 − 0.7).
  assert.match(await text(page, `${el} .numbers`), /E = 2\.941 tokens/);
  await setAttr('alpha', '0.9');
  assert.equal(await value('alpha'), '0.9');
  assert.match(await text(page, `${el} .numbers`), /E = 4\.686 tokens/);
  // Out of range: clamped, with a message; then a hostile value: a message, nothing inserted.
  await setAttr('alpha', '7');
  assert.equal(await value('alpha'), '1');
  assert.match(await text(page, `${el} [role="alert"]`), /α: 7 is outside 0…1; using 1/);
  await setAttr('alpha', '<img src=x onerror="window.pwned=1">');
  assert.match(await text(page, `${el} [role="alert"]`), /is not a number; using 0\.8/);
  assert.equal(await page.$$eval(`${el} img`, (x) => x.length), 0);
  // Removing the attribute returns to the default; hide changes at run time.
  await setAttr('alpha', null);
  assert.equal(await value('alpha'), '0.8');
  await setAttr('hide', 'alpha');
  assert.equal(await shown('alpha'), false);
  assert.equal(await shown('gamma'), true);
  // compact: no title; the roofline example was declared compact with batch 2^3.
  assert.equal(await page.$eval('specdec-widget#roofline h2', (e) => getComputedStyle(e).display), 'none');
  assert.equal(await page.$eval('specdec-widget#roofline [data-key="batch"]', (e) => e.value), '3');
  // Another kind at run time; an unknown kind is named.
  await page.$eval(el, (e) => e.setAttribute('kind', 'tree'));
  await page.waitForSelector(`${el}[data-widget="tree"][data-state="ok"] svg`);
  await page.$eval(el, (e) => e.setAttribute('kind', '<b>x</b>'));
  await page.waitForSelector(`${el}[data-state="error"]`);
  assert.match(await text(page, el), /Unknown widget kind “<b>x<\/b>”\. Choose one of: roofline/);
  assert.equal(await page.$$eval(`${el} b`, (x) => x.length), 0);
  assert.equal(page.url(), url, 'the host page URL is untouched');
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the widget reference lists every widget with its attributes, a snippet and a live example', async () => {
  const { page, errors } = await notes('docs.html', 'section#roofline specdec-widget');
  const sections = await page.$$eval('section.doc', (els) => els.map((e) => [e.id, e.querySelectorAll('table.attrs tbody tr').length]));
  const expected = await page.evaluate(async () => {
    const { WIDGETS } = await import('./widgets/index.js');
    return Object.entries(WIDGETS).map(([n, w]) => [n, 3 + w.controls.length]);
  });
  assert.deepEqual(sections, expected);
  assert.ok(expected.length >= 8);
  const snip = await text(page, '#theory-snippet');
  assert.match(snip, /<specdec-widget kind="theory" alpha="0\.8" gamma="5" c="0\.05" c_hat="0"><\/specdec-widget>/);
  assert.match(snip, /<script type="module" src="http:\/\/[^"]+\/specdec-widget\.js"><\/script>/);
  assert.equal(await page.getAttribute('section#roofline specdec-widget', 'data-state'), 'ok');
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
  assert.match(text, /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="560" height="330"/);
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
  assert.equal(csv.bytes.toString('utf8'), ',naive,MSS\r\ngiven the drawn tokens,50.00%,100.00%\r\naveraged over the drafts,43.75%,81.25%\r\n');
  assert.deepEqual(errors, []);
  await page.close();
});

test('offline after the first visit: the service worker serves the page, the module and the weights', async () => {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(env.url);
  await page.waitForSelector('html[data-ready="true"]', { timeout: 30_000 });
  // Installed (the shell kept) and in control of the page.
  await page.evaluate(async () => { await navigator.serviceWorker.ready; });
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: 30_000 });
  const kept = await page.evaluate(async () => (await (await caches.open('specdec-playground-v1')).keys()).map((r) => new URL(r.url).pathname));
  for (const path of ['/index.html', '/pkg/specdec_bg.wasm', '/pkg/weights/target.bpk', '/widgets/theory.js']) {
    assert.ok(kept.includes(path), `${path} kept: ${kept.join(' ')}`);
  }
  await context.setOffline(true);
  await page.reload();
  await page.waitForSelector('html[data-ready="true"]', { timeout: 30_000 });
  assert.equal(await page.getAttribute('[data-widget="theory"]', 'data-state'), 'ok');
  await setControl(page, 'theory', 'alpha', 0.9);
  assert.match(await text(page, '[data-widget="theory"] .numbers'), /E = 4\.686 tokens/);
  // The models too: the LikesWorld widget runs them in a worker from the kept module and weights.
  await page.waitForSelector('[data-widget="likesworld"][data-state="ok"] table.kinds', { timeout: 60_000 });
  assert.deepEqual(errors, []);
  await context.close();
});

test('exercises: answers are checked by the core, wrong ones get a hint, the solution only when solved', async () => {
  const { page, errors } = await open(env, '?exercises.exercise=1');
  const w = '[data-widget="exercises"]';
  const answer = async (values) => {
    const before = await page.getAttribute(w, 'data-checks');
    const inputs = await page.$$(`${w} input[data-part]`);
    for (const [i, v] of values.entries()) await inputs[i].fill(v);
    await inputs[0].press('Enter'); // keyboard: Enter checks
    await page.waitForFunction(([s, b]) => document.querySelector(s).dataset.checks !== b, [w, before]);
    return page.$$eval(`${w} .ex-says`, (xs) => xs.map((x) => x.textContent));
  };
  let says = await answer(['3.05', '3', '']);
  assert.equal(says[0], '✓ right');
  assert.match(says[1], /^✗ 3 is too high\. A step costs γ draft calls/);
  assert.equal(says[2], 'not answered yet');
  assert.equal(await page.$eval(`${w} .ex-solution`, (e) => e.hidden), true);
  assert.ok(!(await text(page, w)).includes('2.54'), 'the answer is not revealed');
  says = await answer(['3.05', '2.54', 'many']);
  assert.match(says[2], /“many” is not a number/);
  assert.equal(await page.$eval(`${w} input[data-part="2"]`, (e) => e.getAttribute('aria-invalid')), 'true');
  says = await answer(['3.05', '2.54', '1.67']);
  assert.deepEqual(says, ['✓ right', '✓ right', '✓ right']);
  assert.match(await text(page, `${w} .ex-solution`), /^Solved\. E = \(1 − 0\.75\^5\)\/\(1 − 0\.75\) = 3\.0508/);
  // Another exercise from the menu: the tree of exercise 5, one part wrong.
  await setControl(page, 'exercises', 'exercise', '5');
  says = await answer(['9', 'r0 a1 b2 c3 d3 e4 f1 g2', 'a b d e']);
  assert.match(says[0], /every sequence on its own/);
  assert.deepEqual(says.slice(1), ['✓ right', '✓ right']);
  assert.deepEqual(errors, []);
  await page.close();
});

test('URL round trip for every widget: every control set from the URL, then the Share link restores the same state', async () => {
  const probe = await open(env, 'embed.html?widget=theory');
  // For each widget, a value other than the default for every control (text controls keep theirs).
  const plans = await probe.page.evaluate(async () => {
    const { WIDGETS } = await import('./widgets/index.js');
    return Object.entries(WIDGETS).map(([name, w]) => [name, w.controls.map((c) => {
      let v = c.value;
      if (c.type === 'range' || c.type === 'number') v = c.value !== c.min ? c.min : c.max;
      if (c.type === 'select') v = c.options.find(([o]) => o !== c.value)[0];
      return [c.key, String(v)];
    })]);
  });
  await probe.page.close();
  assert.ok(plans.length >= 9);
  const values = (page) => page.$$eval('[data-widget] [data-key]', (els) => els.map((e) => [e.dataset.key, e.value]));
  for (const [name, controls] of plans) {
    const q = new URLSearchParams([['widget', name], ...controls]);
    const { page } = await open(env, `embed.html?${q}`);
    assert.deepEqual(await values(page), controls, `${name} from the URL`);
    await page.click('[data-widget] .share');
    await page.waitForFunction(() => document.querySelector('[data-widget] [role="alert"]').textContent.includes('Link to this state: '));
    const link = (await text(page, '[data-widget] [role="alert"]')).replace(/^.*Link to this state: /, '');
    await page.close();
    const shared = await open(env, link.replace(env.url, ''));
    assert.deepEqual(await values(shared.page), controls, `${name} from its Share link`);
    await shared.page.close();
  }
});

test('accessibility: labels, names, live regions and contrast on every page, with no violation', async () => {
  for (const path of ['', 'docs.html', 'embed.html?widget=exercises', 'embed.html?widget=decoding']) {
    const { page, errors } = await open(env, path);
    if (path === '') {
      await page.waitForSelector('[data-widget="decoding"][data-decoded]', { timeout: 120_000 });
      await page.waitForSelector('[data-widget="modelfree"][data-decoded]', { timeout: 120_000 });
      await page.waitForSelector('[data-widget="likesworld"][data-latency]', { timeout: 120_000 });
    }
    if (path === 'docs.html') await page.waitForSelector('section#roofline specdec-widget[data-state="ok"]');
    // An exercise checked (results shown) and an export menu open, so their texts are audited too.
    if (path.includes('exercises')) {
      await page.fill('input[data-part="0"]', '1');
      await page.press('input[data-part="0"]', 'Enter');
      await page.waitForSelector('.ex-says.ex-wrong');
    }
    await page.click('details.export summary');
    await page.waitForSelector('.export-list li');
    assert.deepEqual(await audit(page), [], path || 'index.html');
    assert.deepEqual(errors, []);
    await page.close();
  }
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
  await preset('multidraft', 'The slide example, averaged over SSM2');
  const averaged = await rowsOf(page, '[data-widget="multidraft"] table.acceptance');
  assert.equal(averaged.length, 2, 'no drawn tokens: only the average');
  assert.match(averaged[1], /averaged over the drafts 43\.75% 81\.25%/);
  await preset('tree', '⟨2,2,2,2⟩ · 31 nodes with the root');
  assert.match(await text(page, '[data-widget="tree"] .numbers'), /^30 speculated nodes vs/);
  await preset('tree', 'Exercise 5 · [a b c] [a b d e] [f g]');
  assert.match(await text(page, '[data-widget="tree"] .numbers'), /7 speculated nodes vs 9 tokens/);
  // Every preset of every analytic widget draws without an alert.
  for (const w of ['roofline', 'theory', 'exactness', 'multidraft', 'tree']) {
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

test('the language switch changes the page and the widgets to Chinese, is remembered, and keeps the state', async () => {
  const { page, errors } = await open(env, '?theory.alpha=0.7');
  const h1 = () => page.$eval('h1', (e) => e.innerText.trim());
  assert.equal(await h1(), 'Speculative decoding, exactly');
  assert.equal(await page.getAttribute('html', 'lang'), 'en');
  // The switch reloads the page; a reload while the worker script is still loading aborts that
  // request (harmless, but it would count as a failed request), so the switch waits for quiet.
  await page.waitForLoadState('networkidle');
  await Promise.all([page.waitForEvent('load'), page.click('[data-set-lang="zh"]')]);
  await page.waitForSelector('html[data-ready="true"]');
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
  assert.match(await text(page, '[data-widget="exercises"] .ex-says'), /9 偏大。前 i 个草稿全部通过的概率是 α\^i/);
  // No English prose is visible: every [data-lang="en"] is hidden.
  assert.equal(await page.$$eval('[data-lang="en"]', (els) => els.filter((e) => e.getClientRects().length > 0).length), 0);
  // Remembered: a new visit is in Chinese; the switch goes back.
  await page.goto(env.url);
  await page.waitForSelector('html[data-ready="true"]');
  assert.equal(await h1(), '推测解码，精确地');
  assert.equal(await page.getAttribute('[data-set-lang="zh"]', 'aria-pressed'), 'true');
  await page.waitForLoadState('networkidle');
  await Promise.all([page.waitForEvent('load'), page.click('[data-set-lang="en"]')]);
  await page.waitForSelector('html[data-ready="true"]');
  assert.equal(await h1(), 'Speculative decoding, exactly');
  assert.equal(await page.$eval('[data-widget="theory"] h2', (e) => e.textContent), 'How much faster: E, speedup and operations');
  assert.deepEqual(errors, []);
  await page.close();
});

test('keyboard only: a slider and the tree editor are operated with Tab, arrows and typing', async () => {
  const { page, errors } = await open(env, 'embed.html?widget=theory');
  // Tab from the top of the page reaches the α slider; arrow keys move it and the widget redraws.
  let guard = 0;
  while (!(await page.evaluate(() => document.activeElement?.dataset?.key === 'alpha')) && guard++ < 20) await page.keyboard.press('Tab');
  assert.ok(guard < 20, 'the α slider is reachable with Tab');
  const before = await text(page, '[data-widget="theory"] .numbers');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.$eval('[data-key="alpha"]', (e) => e.value), '0.82');
  assert.notEqual(await text(page, '[data-widget="theory"] .numbers'), before);
  assert.equal(await page.$eval('[data-key="alpha"]', (e) => getComputedStyle(e).outlineStyle), 'solid', 'focus is visible');
  await page.close();
  // The tree editor: pick "sequences", type the exercise-5 drafts, and the tree follows.
  const tree = await open(env, 'embed.html?widget=tree');
  guard = 0;
  while (!(await tree.page.evaluate(() => document.activeElement?.dataset?.key === 'paths')) && guard++ < 20) await tree.page.keyboard.press('Tab');
  assert.ok(guard < 20, 'the sequences field is reachable with Tab');
  await tree.page.keyboard.press('Control+A');
  await tree.page.keyboard.type('a b c | a b d e | f g');
  await tree.page.keyboard.press('Tab');
  await tree.page.keyboard.press('Control+A');
  await tree.page.keyboard.type('r');
  assert.match(await text(tree.page, '[data-widget="tree"] .numbers'), /7 speculated nodes vs 9 tokens/);
  // The highlight slider, by keyboard: End goes to the last node of the tree on screen.
  guard = 0;
  while (!(await tree.page.evaluate(() => document.activeElement?.dataset?.key === 'highlight')) && guard++ < 20) await tree.page.keyboard.press('Tab');
  await tree.page.keyboard.press('End');
  assert.equal(await tree.page.$eval('[data-key="highlight"]', (e) => e.value), '7');
  assert.deepEqual([...errors, ...tree.errors], []);
  await tree.page.close();
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

test('LikesWorld runs the trained models in a worker, on both CPU backends', async () => {
  const { page, errors } = await open(env, '');
  await page.waitForSelector('[data-widget="likesworld"][data-model]', { timeout: 60_000 });
  assert.ok(await page.$('[data-widget="likesworld"] .lw-plot svg'));
  const kinds = await rowsOf(page, '[data-widget="likesworld"] table.kinds');
  assert.ok(kinds.some((r) => r.startsWith('answer ')), kinds.join(' | '));
  // A typed world: the target answers it; the status shows the parsed sequence.
  await page.fill('[data-widget="likesworld"] [data-key="text"]', 'dan likes jam . fay likes nuts . eve likes tea . q fay nuts . q dan jam . q eve tea . <eos>');
  await page.waitForFunction(() => document.querySelector('[data-widget="likesworld"] .lw-status')?.textContent.includes('<bos> dan likes jam'));
  await page.fill('[data-widget="likesworld"] [data-key="text"]', 'dan loves jam');
  await page.waitForSelector('[data-widget="likesworld"][data-state="error"]', { timeout: 30_000 });
  assert.match(await alertOf(page, 'likesworld'), /unknown LikesWorld word "loves"/);
  await page.fill('[data-widget="likesworld"] [data-key="text"]', '');
  await setControl(page, 'likesworld', 'backend', 'ndarray');
  await page.waitForFunction(() => document.querySelector('[data-widget="likesworld"] .lw-status b')?.textContent === 'ndarray', null, { timeout: 60_000 });
  await page.waitForSelector('[data-widget="likesworld"][data-latency]', { timeout: 120_000 });
  assert.match(await text(page, '[data-widget="likesworld"] .lw-latency'), /c = draft\/target for one token: A \d\.\d\d, B \d\.\d\d/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('LikesWorld on WebGPU: the models run on the GPU and are timed there', async () => {
  const requests = [];
  const { page, errors } = await open(env, '?likesworld.backend=wgpu', { requests });
  await page.waitForFunction(() => document.querySelector('[data-widget="likesworld"] .lw-status b')?.textContent === 'wgpu', null, { timeout: 120_000 });
  // The worker's download of the GPU module is seen (the next test relies on it).
  assert.ok(requests.includes('/pkg/gpu/specdec_bg.wasm'), requests.join(' '));
  assert.ok(await page.$eval('[data-widget="likesworld"] .lw-note', (n) => n.hidden), 'no fallback note with an adapter');
  const kinds = await rowsOf(page, '[data-widget="likesworld"] table.kinds');
  assert.ok(kinds.some((r) => r.startsWith('answer ')), kinds.join(' | '));
  await page.waitForSelector('[data-widget="likesworld"][data-latency]', { timeout: 240_000 });
  assert.match(await text(page, '[data-widget="likesworld"] .lw-latency'), /on wgpu in this browser/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('LikesWorld without a WebGPU adapter falls back to the CPU with a visible note, without downloading the GPU module', async () => {
  const noGpu = await start({ webgpu: false });
  try {
    const requests = [];
    const { page, errors } = await open(noGpu, '?likesworld.backend=wgpu', { requests });
    await page.waitForFunction(() => document.querySelector('[data-widget="likesworld"] .lw-status b')?.textContent === 'flex', null, { timeout: 120_000 });
    const note = await page.$eval('[data-widget="likesworld"] .lw-note', (n) => (n.hidden ? '' : n.textContent));
    assert.match(note, /No WebGPU here, so the models run on the CPU \(flex\) instead\. Details: the browser offers no WebGPU adapter/);
    assert.ok(await page.$eval('[data-widget="likesworld"] .lw-note', (n) => n.getBoundingClientRect().height > 0), 'the note is visible');
    assert.deepEqual(requests.filter((p) => p.includes('/pkg/gpu/')), [], 'the GPU module is not downloaded');
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await noGpu.close();
  }
});

const decoded = (page, n) => page.waitForFunction((k) => Number(document.querySelector('[data-widget="decoding"]')?.dataset.decoded || 0) >= k, n, { timeout: 180_000 });

test('speculative decoding: greedy chains and trees are identical to the target, on flex', async () => {
  const { page, errors } = await open(env, '?decoding.experiment=greedy&decoding.prompts=10&decoding.draft=b');
  await decoded(page, 1);
  const rows = await rowsOf(page, '[data-widget="decoding"] table.dec-greedy');
  assert.equal(rows.length, 1 + 4, rows.join(' | ')); // γ 1, 2, 4, 6 (the default γ 4 is one of them)
  for (const r of rows.slice(1)) assert.match(r, /^draft B chain γ \d+, greedy 10\/10 /, r);
  assert.ok(await page.$('[data-widget="decoding"] .dec-plot svg'), 'the tokens-per-call chart');
  await setControl(page, 'decoding', 'experiment', 'tree');
  await decoded(page, 2);
  const trees = await rowsOf(page, '[data-widget="decoding"] table.dec-greedy');
  assert.equal(trees.length, 1 + 6, trees.join(' | ')); // the lecture's six shapes (the typed ⟨2,2,1,1⟩ is one of them)
  assert.ok(trees.slice(1).every((r) => / 10\/10 /.test(r)), trees.join(' | '));
  assert.deepEqual(errors, []);
  await page.close();
});

test('speculative decoding: progress, cancel, bad input, and the widget keeps working', async () => {
  const { page, errors } = await open(env, '?decoding.experiment=sample&decoding.prompts=200&decoding.repeats=5');
  await page.waitForFunction(() => Number(document.querySelector('[data-widget="decoding"] .dec-progress')?.value) > 0, null, { timeout: 60_000 });
  await page.click('[data-widget="decoding"] .dec-cancel');
  await page.waitForSelector('[data-widget="decoding"][data-cancelled]', { timeout: 10_000 });
  assert.match(await text(page, '[data-widget="decoding"] .dec-status'), /Cancelled/);
  await setControl(page, 'decoding', 'experiment', 'tree');
  await page.fill('[data-widget="decoding"] [data-key="config"]', '<2,,1>');
  await page.waitForSelector('[data-widget="decoding"][data-state="error"]', { timeout: 30_000 });
  assert.match(await alertOf(page, 'decoding'), /level 2 is empty/);
  await page.fill('[data-widget="decoding"] [data-key="config"]', '<9,9>');
  await page.waitForFunction(() => /over the budget of 64/.test(document.querySelector('[data-widget="decoding"] [role="alert"]').textContent), null, { timeout: 30_000 });
  await setControl(page, 'decoding', 'prompts', 10);
  await page.fill('[data-widget="decoding"] [data-key="config"]', '<3,1>');
  await decoded(page, 1);
  assert.equal(await page.getAttribute('[data-widget="decoding"]', 'data-state'), 'ok');
  assert.equal(await alertShown(page, 'decoding'), false);
  const rows = await rowsOf(page, '[data-widget="decoding"] table.dec-greedy');
  assert.ok(rows.some((r) => r.startsWith('draft B tree ⟨3,1⟩')), rows.join(' | '));
  assert.deepEqual(errors, []);
  await page.close();
});

test('speculative decoding: a seeded step-through, operable with the keyboard', async () => {
  const { page, errors } = await open(env, '?decoding.experiment=step&decoding.seed=4&decoding.gamma=3');
  await page.waitForSelector('[data-widget="decoding"][data-step="1"]', { timeout: 120_000 });
  const first = await text(page, '[data-widget="decoding"] .dec-step');
  assert.match(first, /Step 1 of \d+/);
  assert.match(first, /accept prob a = min\(1, p\/q\)uniform uverdict/);
  await page.focus('[data-widget="decoding"] .dec-step');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.getAttribute('[data-widget="decoding"]', 'data-step'), '2');
  await page.keyboard.press('ArrowLeft');
  assert.equal(await text(page, '[data-widget="decoding"] .dec-step'), first, 'the same step again');
  // The same seed replays the same run.
  await setControl(page, 'decoding', 'seed', 5);
  await decoded(page, 2);
  await setControl(page, 'decoding', 'seed', 4);
  await decoded(page, 3);
  assert.equal(await text(page, '[data-widget="decoding"] .dec-step'), first);
  // A greedy tree: the mask is drawn.
  await setControl(page, 'decoding', 'stepkind', 'tree');
  await decoded(page, 4);
  assert.ok(await page.$('[data-widget="decoding"] table.dec-mask'), 'the tree mask');
  assert.deepEqual(errors, []);
  await page.close();
});

/** Every step of the step-through: the tree drafted and the tokens emitted (no probabilities). */
async function stepsOf(page) {
  const sel = '[data-widget="decoding"] .dec-step';
  const n = Number((await text(page, sel)).match(/Step 1 of (\d+)/)[1]);
  const steps = [(await text(page, sel)).match(/^(.*? target calls\.)/)[1]];
  for (let i = 1; i <= n; i += 1) {
    const t = await text(page, sel);
    assert.match(t, new RegExp(`Step ${i} of ${n}`));
    steps.push(`${t.match(/(?:draft chain|token tree): [^]*?(?= at | Then)/)?.[0]} | ${t.match(/This step emitted: (.*?) \(/)[1]}`);
    if (i < n) await page.click('[data-widget="decoding"] .dec-next');
  }
  return steps;
}

test('speculative decoding on WebGPU: a greedy tree run end to end, token for token the same as on flex', async () => {
  const { page, errors } = await open(env, '?decoding.experiment=step&decoding.backend=wgpu&decoding.stepkind=tree&decoding.config=%3C2,1%3E&decoding.seed=3');
  await page.waitForSelector('[data-widget="decoding"][data-step="1"]', { timeout: 240_000 });
  assert.match(await text(page, '[data-widget="decoding"] .dec-status'), /Done on wgpu/);
  assert.ok(await page.$eval('[data-widget="decoding"] .dec-note', (n) => n.hidden), 'no fallback note');
  const onGpu = await stepsOf(page);
  assert.ok(onGpu.length > 3, onGpu.join(' / '));
  await setControl(page, 'decoding', 'backend', 'flex');
  await decoded(page, 2);
  assert.match(await text(page, '[data-widget="decoding"] .dec-status'), /Done on flex/);
  assert.deepEqual(await stepsOf(page), onGpu);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a WebGPU adapter that gives no device: the GPU module says why and the job runs on the CPU', async () => {
  const refuse = 'GPUAdapter.prototype.requestDevice = function () { return Promise.reject(new TypeError(\'no device for this test\')); };';
  const { page, errors } = await open(env, '?likesworld.backend=wgpu', { workerPrelude: refuse });
  await page.waitForFunction(() => document.querySelector('[data-widget="likesworld"] .lw-status b')?.textContent === 'flex', null, { timeout: 120_000 });
  const note = await page.$eval('[data-widget="likesworld"] .lw-note', (n) => (n.hidden ? '' : n.textContent));
  assert.match(note, /No WebGPU here, so the models run on the CPU \(flex\) instead\. Details: WebGPU\/wgpu device unavailable: .+/);
  const kinds = await rowsOf(page, '[data-widget="likesworld"] table.kinds');
  assert.ok(kinds.some((r) => r.startsWith('answer ')), kinds.join(' | '));
  assert.deepEqual(errors, []);
  await page.close();
});

test('WebGPU without timestamp queries (as in Firefox and Safari): the job runs on the CPU and says why', async () => {
  // The worker's adapter and device hide the feature, and a device asking for it is refused.
  const hide = `{
    const without = (proto) => {
      const get = Object.getOwnPropertyDescriptor(proto, 'features').get;
      Object.defineProperty(proto, 'features', { get() { return new Set([...get.call(this)].filter((f) => f !== 'timestamp-query')); } });
    };
    without(GPUAdapter.prototype);
    without(GPUDevice.prototype);
    const request = GPUAdapter.prototype.requestDevice;
    GPUAdapter.prototype.requestDevice = function (d = {}) {
      if ([...(d.requiredFeatures ?? [])].includes('timestamp-query')) return Promise.reject(new TypeError('timestamp-query is not supported here'));
      self.specdecNoTimestamps = (self.specdecNoTimestamps ?? 0) + 1;
      return request.call(this, d);
    };
  }`;
  const { page, errors } = await open(env, '?decoding.experiment=step&decoding.backend=wgpu&decoding.gamma=2&decoding.seed=1', { workerPrelude: hide });
  await page.waitForSelector('[data-widget="decoding"][data-step="1"]', { timeout: 120_000 });
  assert.match(await text(page, '[data-widget="decoding"] .dec-status'), /Done on flex/);
  assert.match(await text(page, '[data-widget="decoding"] .dec-note'), /WebGPU is not usable in this browser \(its adapter has no timestamp-query feature.*\), so this ran on the CPU \(flex\)/);
  assert.ok(await page.$eval('[data-widget="decoding"] .dec-note', (n) => !n.hidden && n.getBoundingClientRect().height > 0), 'the note is visible');
  // The GPU module never started a device (it would have panicked).
  const devices = await Promise.all(page.workers().map((w) => w.evaluate(() => self.specdecNoTimestamps ?? 0)));
  assert.deepEqual(devices.filter((n) => n > 0), []);
  // The page keeps working: another run, the same answer.
  const first = await text(page, '[data-widget="decoding"] .dec-step');
  await setControl(page, 'decoding', 'seed', 2);
  await decoded(page, 2);
  await setControl(page, 'decoding', 'seed', 1);
  await decoded(page, 3);
  assert.equal(await text(page, '[data-widget="decoding"] .dec-step'), first);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a WebGPU device lost mid-run: the job runs again on the CPU with a note, the next one gets a new device', async () => {
  const { page, errors } = await open(env, '?decoding.experiment=step&decoding.gamma=2&decoding.seed=1');
  await page.waitForSelector('[data-widget="decoding"][data-step="1"]', { timeout: 120_000 });
  let done = Number(await page.getAttribute('[data-widget="decoding"]', 'data-decoded'));
  await page.evaluate(() => window.specdec.loseDeviceOnNextJob());
  await setControl(page, 'decoding', 'backend', 'wgpu');
  await decoded(page, ++done);
  assert.match(await text(page, '[data-widget="decoding"] .dec-status'), /Done on flex/);
  assert.match(await text(page, '[data-widget="decoding"] .dec-note'), /WebGPU device was lost during this run \(.+\), so it ran again on the CPU \(flex\)/);
  assert.ok(await page.$eval('[data-widget="decoding"] .dec-note', (n) => !n.hidden && n.getBoundingClientRect().height > 0), 'the note is visible');
  // The next WebGPU job starts a fresh instance of the GPU module, which asks for a new device.
  await setControl(page, 'decoding', 'seed', 2);
  await decoded(page, ++done);
  assert.match(await text(page, '[data-widget="decoding"] .dec-status'), /Done on wgpu/);
  assert.ok(await page.$eval('[data-widget="decoding"] .dec-note', (n) => n.hidden), 'no note on the new device');
  assert.deepEqual(errors, []);
  await page.close();
});

const mfDone = (page, n) => page.waitForFunction((k) => Number(document.querySelector('[data-widget="modelfree"]')?.dataset.decoded || 0) >= k, n, { timeout: 180_000 });

test('model-free drafting: every drafter on every workload, identical outputs, draft B beside', async () => {
  const { page, errors } = await open(env, '?modelfree.requests=10');
  await mfDone(page, 1);
  const rows = await rowsOf(page, '[data-widget="modelfree"] table.mf-table');
  assert.equal(rows.length, 1 + 3 * 5 + 1, rows.join(' | '));
  for (const r of rows.slice(1)) assert.match(r, / 10\/10 /, r);
  const tpc = (prefix) => Number(rows.find((r) => r.startsWith(prefix)).slice(prefix.length).trim().split(' ')[0]);
  assert.ok(tpc('code rewrite Prompt Lookup') > 2, rows.join(' | '));
  assert.ok(tpc('agent request + global index (SuffixDecoding)') > tpc('agent Prompt Lookup'), rows.join(' | '));
  assert.ok(rows.some((r) => r.startsWith('LikesWorld draft model B, γ 6')), rows.join(' | '));
  assert.ok(await page.$('[data-widget="modelfree"] .mf-plot svg'), 'the bar chart');
  assert.deepEqual(errors, []);
  await page.close();
});

test('model-free drafting: the budget sweep, Jacobi starts, and tokens coloured by source', async () => {
  const { page, errors } = await open(env, '?modelfree.experiment=sweep&modelfree.workload=agent&modelfree.requests=10');
  await mfDone(page, 1);
  const sweep = await rowsOf(page, '[data-widget="modelfree"] table.mf-sweep');
  assert.equal(sweep.length, 1 + 8, sweep.join(' | '));
  const frac = (r) => Number(r.split(/\s+/)[2].replace('%', ''));
  assert.ok(frac(sweep[1]) > frac(sweep[8]), `accepted fraction falls: ${sweep.join(' | ')}`);
  await setControl(page, 'modelfree', 'experiment', 'jacobi');
  await mfDone(page, 2);
  const jac = await rowsOf(page, '[data-widget="modelfree"] table.mf-jacobi');
  assert.match(jac[1], /^fixed\s*1\.0\d\d /, jac.join(' | '));
  await setControl(page, 'modelfree', 'experiment', 'highlight');
  await mfDone(page, 3);
  const kinds = await page.$$eval('[data-widget="modelfree"] .mf-output .mf-tok', (t) => [...new Set(t.map((x) => x.className))]);
  assert.ok(kinds.includes('mf-tok mf-src-earlier') && kinds.includes('mf-tok mf-src-target'), kinds.join(', '));
  assert.match(await text(page, '[data-widget="modelfree"] .mf-result'), /Identical to the target’s own greedy output/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('model-free drafting: bad input is named, a run can be cancelled, and the widget recovers', async () => {
  const { page, errors } = await open(env, '?modelfree.experiment=highlight&modelfree.requests=10&modelfree.request=50');
  await page.waitForSelector('[data-widget="modelfree"][data-state="error"]', { timeout: 60_000 });
  assert.match(await alertOf(page, 'modelfree'), /request = 50 is out of range/);
  await setControl(page, 'modelfree', 'request', 3);
  await mfDone(page, 1);
  assert.equal(await alertShown(page, 'modelfree'), false);
  await setControl(page, 'modelfree', 'requests', 200);
  await setControl(page, 'modelfree', 'experiment', 'table');
  await page.waitForFunction(() => Number(document.querySelector('[data-widget="modelfree"] .mf-progress')?.value) > 0, null, { timeout: 60_000 });
  await page.click('[data-widget="modelfree"] .mf-cancel');
  await page.waitForSelector('[data-widget="modelfree"][data-cancelled]', { timeout: 10_000 });
  assert.match(await text(page, '[data-widget="modelfree"] .mf-status'), /Cancelled/);
  await setControl(page, 'modelfree', 'requests', 10);
  await mfDone(page, 2);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a failed engine load shows a message and a retry brings the page up', async () => {
  const page = await env.browser.newPage({ viewport: { width: 1280, height: 900 }, serviceWorkers: 'block' });
  let fail = true;
  await page.route('**/pkg/specdec_bg.wasm', (route) => (fail ? route.fulfill({ status: 503, body: 'busy' }) : route.continue()));
  await page.goto(`${env.url}embed.html?widget=theory`);
  await page.waitForSelector('html[data-ready="failed"]', { timeout: 30_000 });
  assert.match(await text(page, '[data-widget="theory"] [role="alert"]'), /Could not load the WebAssembly engine/);
  fail = false;
  await page.click('[data-widget="theory"] .retry');
  await page.waitForSelector('html[data-ready="true"]', { timeout: 30_000 });
  assert.equal(await page.getAttribute('[data-widget="theory"]', 'data-state'), 'ok');
  assert.ok(await page.$('[data-widget="theory"] .view svg'));
  await page.close();
});

test('long use: 10,000 slider moves and 100 model jobs with cancels keep memory and workers bounded', async () => {
  const { page, errors } = await open(env, '?modelfree.experiment=highlight&modelfree.workload=likesworld&modelfree.requests=4');
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
  // 100 model jobs (LikesWorld decoded with a suffix index), every fourth cancelled mid-run.
  let done = 1;
  let cancelled = 0;
  for (let i = 0; i < 100; i++) {
    await setControl(page, 'modelfree', 'request', i % 4);
    if (i % 4 === 3) {
      // Cancel once it runs (a job that already ended has nothing to cancel).
      await page.waitForFunction(() => /Running|Done/.test(document.querySelector('[data-widget="modelfree"] .mf-status').textContent), null, { timeout: 60_000 });
      await page.click('[data-widget="modelfree"] .mf-cancel', { timeout: 1000 }).catch(() => {});
      await page.waitForFunction(() => document.querySelector('[data-widget="modelfree"]').getAttribute('aria-busy') !== 'true', null, { timeout: 60_000 });
      const ended = Number(await page.getAttribute('[data-widget="modelfree"]', 'data-decoded'));
      if (ended > done) done = ended; else cancelled += 1;
    } else {
      done += 1;
      await mfDone(page, done);
    }
  }
  const end = await health();
  console.log(`long use: wasm memory ${warm.wasmBytes} B after 1,000 moves, ${afterMoves.wasmBytes} B after 10,000, ${end.wasmBytes} B after 100 jobs (${cancelled} cancelled); live workers ${end.workers} of ${end.channels} channels`);
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

test('WebGPU chosen before the GPU module exists: the job runs on the CPU and says so', async () => {
  const page = await env.browser.newPage({ viewport: { width: 1280, height: 900 }, serviceWorkers: 'block' });
  await page.route('**/pkg/gpu/**', (route) => route.fulfill({ status: 404, body: 'not built yet' }));
  await page.goto(`${env.url}?modelfree.experiment=highlight&modelfree.workload=likesworld&modelfree.requests=2&modelfree.request=1&modelfree.backend=wgpu`);
  await page.waitForSelector('html[data-ready="true"]', { timeout: 30_000 });
  await mfDone(page, 1);
  assert.match(await text(page, '[data-widget="modelfree"] .mf-status'), /LikesWorld on flex/);
  assert.match(await text(page, '[data-widget="modelfree"] .mf-note'), /WebGPU engine could not be loaded .* ran on the CPU \(flex\)/);
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
  // Core errors raised on the main thread: a tree config, a distribution, drawn tokens.
  await setControl(page, 'tree', 'mode', 'config');
  await page.fill('[data-widget="tree"] [data-key="config"]', '<2,0>');
  assert.equal(await alertOf(page, 'tree'), '无法读取树配置 "<2,0>"：第 2 层宽度为 0；每层至少需要一个子节点');
  await page.fill('[data-widget="tree"] [data-key="config"]', '<9,9,9,9>');
  assert.match(await alertOf(page, 'tree'), /^树配置 <9,9,9,9> 有 7380 个节点，超出 \d+ 个节点的预算$/);
  await page.fill('[data-widget="multidraft"] [data-key="p"]', '0.5,0.6');
  assert.match(await alertOf(page, 'multidraft'), /^无法读取p "0\.5,0\.6"：总和为 1\.1/);
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
  assert.ok(log.some((s) => /^运行中: \d+ \/ \d+（flex）…$/.test(s)), log.join(' | '));
  assert.deepEqual(errors, []);
  await page.close();
});
