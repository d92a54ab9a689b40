// Browser tests of the <specdec-widget> custom element (element.html: someone's notes) and of
// the widget reference that documents it (docs.html).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { text } from './helpers.mjs';
import { VERSION } from '../www/version.js';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

/** A page of someone's notes with <specdec-widget> elements; resolves once `sel` has drawn. */
async function notes(path, sel) {
  const page = await env.browser.newPage({ viewport: { width: 1280, height: 900 }, serviceWorkers: 'block' });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(env.url + path);
  // Notes load the engine when a reader first presses Run (the reference page has loaded it).
  if (path === 'element.html') await page.click('specdec-widget#theory[data-waiting="load"] .sw-run');
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

test('the widget reference lists every widget with its attributes, a snippet naming the versioned URL and a live example', async () => {
  const { page, errors } = await notes('docs.html', 'section#roofline specdec-widget');
  const sections = await page.$$eval('section.doc', (els) => els.map((e) => [e.id, e.querySelectorAll('table.attrs tbody tr').length]));
  const expected = await page.evaluate(async () => {
    const { WIDGETS } = await import('./widgets/index.js');
    // kind, hide, compact, lang, autorun (every element waits for Run before it loads the engine).
    return Object.entries(WIDGETS).map(([n, w]) => [n, 5 + w.controls.length]);
  });
  assert.deepEqual(sections, expected);
  assert.ok(expected.length >= 8);
  const snip = await text(page, '#theory-snippet');
  assert.match(snip, /<specdec-widget kind="theory" alpha="0\.8" gamma="5" c="0\.05" c_hat="0"><\/specdec-widget>/);
  // The versioned URL, which the site keeps serving after newer versions are published (and the
  // dev server serves too).
  const src = snip.match(/<script type="module" src="([^"]+)"><\/script>/)[1];
  assert.equal(src, `${env.url}v${VERSION}/specdec-widget.js`);
  assert.equal((await page.request.get(src)).status(), 200);
  // For notes that take no script, an iframe of the versioned embed.html that waits for its Run.
  const iframe = await text(page, '#theory-iframe');
  const framed = iframe.match(/^<iframe src="([^"]+)" title="How much faster: E, speedup and operations"/)?.[1]?.replaceAll('&amp;', '&');
  assert.equal(framed, `${env.url}v${VERSION}/embed.html?widget=theory&autorun=0`, iframe);
  assert.equal((await page.request.get(framed)).status(), 200);
  assert.equal(await page.getAttribute('section#roofline specdec-widget', 'data-state'), 'ok');
  assert.deepEqual(errors, []);
  await page.close();
});

test('two decoding elements on one page started together both finish with results (each has its own worker)', async () => {
  const { page, errors } = await notes('element.html', 'specdec-widget#theory');
  await page.evaluate(() => {
    for (const [id, experiment] of [['dec1', 'acceptance'], ['dec2', 'greedy']]) {
      const el = document.createElement('specdec-widget');
      Object.entries({ id, kind: 'decoding', experiment, prompts: '10', autorun: '' }).forEach(([k, v]) => el.setAttribute(k, v));
      document.body.append(el);
    }
  });
  // Each ends: with a result, or (as before each had its own worker) cancelled by the other.
  const ended = (id) => page.waitForFunction((s) => {
    const el = document.getElementById(s);
    return el?.dataset.decoded || el?.dataset.cancelled;
  }, id, { timeout: 180_000 });
  await Promise.all([ended('dec1'), ended('dec2')]);
  for (const id of ['dec1', 'dec2']) {
    assert.match(await text(page, `#${id} .dec-status`), /^Done/, id);
    assert.equal(await page.getAttribute(`#${id}`, 'data-cancelled'), null, `${id} was not cancelled`);
    assert.ok(await page.$(`#${id} .dec-result table`), `${id} has a result table`);
  }
  assert.ok(await page.$('#dec1 table.dec-kinds'), 'the acceptance table in the first');
  assert.deepEqual(errors, []);
  await page.close();
});
