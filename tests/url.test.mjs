// Browser tests of state in URLs, embedding and sharing: hostile, long and off-step URL values,
// the state written into the URL, embed.html (one widget, hidden controls, compact mode), a
// round trip through the URL and the Share link for every control of every widget, the theory
// sliders following the core's presets, the Share link shown apart from the alert, and the one
// length cap on typed text that keeps the URL short.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open, rewritePresets, wake } from './browser.mjs';
import { WIDGETS, setControl, text, alertOf } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

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

test('a long bad value is quoted cut at 40 whole characters, with “…”: never half an emoji', async () => {
  const value = `${'a'.repeat(39)}😀${'b'.repeat(20)}`;
  const { page, errors } = await open(env, `?roofline.weights=${encodeURIComponent(value)}`);
  const alert = await alertOf(page, 'roofline');
  assert.ok(alert.includes(`“${'a'.repeat(39)}😀…” is not one of the choices`), alert);
  assert.doesNotMatch(alert, /[\ud800-\udbff](?![\udc00-\udfff])/, 'no lone surrogate');
  assert.equal(await page.getAttribute('[data-widget="roofline"]', 'data-state'), 'ok');
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
  await page.waitForURL(/theory\.alpha=0\.7/, { timeout: 5_000 }); // written at most every 200 ms
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

test('the theory sliders take their bounds and defaults from the core’s presets, and follow them when they change', async () => {
  const sliders = (page) => page.$$eval('[data-widget="theory"] input[type="range"]', (els) => els.map((el) => [el.dataset.key, ...[el.min, el.max, el.value].map(Number)]));
  // As declared: theory.rs's ranges and TheoryParams' defaults; the page's γ stops at the chart's
  // γ axis (GAMMA_AXIS) and its costs at 1.
  let { page, errors } = await open(env, 'embed.html?widget=theory');
  const d = await page.evaluate(async () => (await import('./engine.js')).declarations().theory);
  assert.ok(d.gamma.max > d.gamma_axis && d.c.max > 1, `the core allows more than the page offers: ${JSON.stringify(d)}`);
  assert.deepEqual(await sliders(page), [['alpha', d.alpha.min, d.alpha.max, d.defaults.alpha], ['gamma', d.gamma.min, d.gamma_axis, d.defaults.gamma],
    ['c', d.c.min, 1, d.defaults.c], ['c_hat', d.c_hat.min, 1, d.defaults.c_hat]]);
  assert.deepEqual(errors, []);
  await page.close();
  // Declared otherwise (presets rewritten on its way to the page): the sliders follow, a bound under
  // the page's cap wins over it, and a URL value is checked against the new bound.
  const prepare = (p) => rewritePresets(p, `Object.assign(p.theory.alpha, { min: 0.1, max: 0.9 });
    Object.assign(p.theory.gamma, { min: 1, max: 12 }); p.theory.c.max = 0.5; Object.assign(p.theory.defaults, { alpha: 0.5, gamma: 7 });`);
  ({ page, errors } = await open(env, 'embed.html?widget=theory&gamma=20', { prepare }));
  assert.deepEqual(await sliders(page), [['alpha', 0.1, 0.9, 0.5], ['gamma', 1, 12, 12], ['c', d.c.min, 0.5, d.defaults.c], ['c_hat', d.c_hat.min, 1, d.defaults.c_hat]]);
  assert.match(await alertOf(page, 'theory'), /γ: 20 is outside 1…12; using 12/);
  assert.deepEqual(errors, []);
  await page.unrouteAll({ behavior: 'ignoreErrors' });
  await page.close();
});

test('URL round trip for every widget: every control set from the URL, then the Share link restores the same state', async () => {
  // A model widget's embed: the models' declarations are there too.
  const probe = await open(env, 'embed.html?widget=likesworld');
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
    await page.waitForSelector('[data-widget] .share-link:not([hidden])');
    const link = await page.$eval('[data-widget] .share-link a', (a) => a.href);
    await page.close();
    const shared = await open(env, link.replace(env.url, ''));
    assert.deepEqual(await values(shared.page), controls, `${name} from its Share link`);
    await shared.page.close();
  }
});

test('the Share link is shown beside the alert, not as an error in it', async () => {
  const { page, errors } = await open(env, '?theory.alpha=abc');
  assert.match(await alertOf(page, 'theory'), /not a number/);
  await page.click('[data-widget="theory"] .share');
  await page.waitForSelector('[data-widget="theory"] .share-link:not([hidden])');
  assert.match(await text(page, '[data-widget="theory"] .share-link'), /^Link to this state: http:\/\/.*embed\.html\?widget=theory&alpha=0\.8/);
  assert.doesNotMatch(await alertOf(page, 'theory'), /Link to this state/, 'the link is not in the alert');
  const look = await page.$eval('[data-widget="theory"] .share-link', (e) => [e.getAttribute('role'), getComputedStyle(e).borderLeftColor, getComputedStyle(e).backgroundColor]);
  const alertLook = await page.$eval('[data-widget="theory"] [role="alert"]', (e) => [getComputedStyle(e).borderLeftColor, getComputedStyle(e).backgroundColor]);
  assert.equal(look[0], null, 'not an alert');
  assert.notDeepEqual(look.slice(1), alertLook, 'not styled as the error box');
  // A change makes the link stale: it goes.
  await setControl(page, 'theory', 'gamma', 3);
  assert.equal(await page.$eval('[data-widget="theory"] .share-link', (e) => e.hidden), true);
  assert.deepEqual(errors, []);
  await page.close();
});

test('100,000 characters typed into text fields are cut to one cap: the URL stays under 8 KB, the page reloads, the person is told', async () => {
  const { page, errors } = await open(env, '');
  // The tree's sequences typed (pasted) as a person does: 100k characters of words.
  const words = 'ab '.repeat(40_000).slice(0, 100_000);
  await page.fill('[data-widget="tree"] [data-key="paths"]', words);
  assert.match(await alertOf(page, 'tree'), /sequences: the text was cut to its first 500 characters/);
  assert.equal(await page.inputValue('[data-widget="tree"] [data-key="paths"]'), words.slice(0, 500));
  // Every other text field of the page (shown or not), with characters a URL spells out long.
  const others = await page.$$eval('[data-widget] input[type="text"][data-key]', (els) => els.filter((el) => el.dataset.key !== 'paths' || el.closest('[data-widget]').dataset.widget !== 'tree').map((el) => {
    el.value = '中'.repeat(100_000);
    el.dispatchEvent(new Event('input', { bubbles: true }));
    return `${el.closest('[data-widget]').dataset.widget}.${el.dataset.key} ${el.value.length}`;
  }));
  assert.ok(others.length >= 7, others.join(' | '));
  for (const o of others) {
    const [, n] = o.split(' ');
    assert.ok(Number(n) > 0 && Number(n) <= 500, o);
  }
  assert.match(await alertOf(page, 'multidraft'), /the text was cut to its first \d+ characters/);
  assert.match(await alertOf(page, 'likesworld'), /world: the text was cut/);
  // The URL follows the state (every change written, the last one at most 200 ms later).
  await page.waitForFunction(() => new URL(location.href).searchParams.get('likesworld.text')?.startsWith('中'));
  const url = page.url();
  assert.ok(url.length < 8192, `the URL is ${url.length} bytes`);
  // The changes started model jobs (new workers load their scripts): a reload mid-load would abort
  // them, which the browser reports as failed requests. Let them finish first.
  await page.waitForFunction(() => [...document.querySelectorAll('[data-widget]')].every((w) => w.getAttribute('aria-busy') !== 'true'), null, { timeout: 120_000 });
  await page.waitForTimeout(500);
  assert.deepEqual(errors, []);
  const response = await page.reload();
  assert.equal(response.status(), 200);
  await page.waitForSelector('html[data-ready="true"]', { timeout: 30_000 });
  await wake(page);
  assert.equal(await page.inputValue('[data-widget="tree"] [data-key="paths"]'), words.slice(0, 500), 'the cut text came back from the URL');
  // A worker still fetching its scripts when the page reloads has that request aborted by the
  // reload (a busy machine): that is the browser leaving the page, not a fault of it. Any other
  // error after the reload is one.
  assert.deepEqual(errors.filter((e) => !/^request failed: .*\.(js|wasm|bpk)$/.test(e)), []);
  await page.close();
});
