// Browser tests of what a message quotes of what someone typed or linked (issue 53, a hostile
// user): a pasted page of text is quoted by a few dozen characters and an ellipsis, so that the
// alert stays a line or two at any width, in English and in Chinese; a character that shows
// nothing is named where it is; and a link too long for a server is refused by the server, as
// docs.html tells instructors (the page never writes one).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { setControl, alertOf } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

/** The alert of widget `w`: its text, and its box against the widget's. */
const alertBox = (page, w) => page.$eval(`[data-widget="${w}"] [role="alert"]`, (el) => {
  const r = el.getBoundingClientRect();
  const widget = el.closest('[data-widget]').getBoundingClientRect();
  return { text: el.textContent, width: r.width, height: r.height, right: r.right, widgetRight: widget.right };
});

for (const [lang, width, words] of [['en', 1280, /α: “x{20,40}…” is not a number; using/], ['zh', 390, /α：“x{20,40}…” 不是数字；改用/]]) {
  test(`a 10,000-character α is quoted by its first characters, in an alert of a line or two (${lang}, ${width} px)`, async () => {
    const { page, errors } = await open(env, `?lang=${lang}&theory.alpha=${'x'.repeat(10_000)}`, { width });
    const a = await alertBox(page, 'theory');
    assert.match(a.text, words);
    assert.ok(a.text.length < 200, `${a.text.length} characters: ${a.text.slice(0, 120)}…`);
    assert.ok(a.height < 80 && a.right <= a.widgetRight + 0.5, JSON.stringify({ ...a, text: undefined }));
    // Typed into a text field and refused by the core: quoted as short.
    await page.fill('[data-widget="multidraft"] [data-key="given"]', 'y'.repeat(500));
    const m = await alertBox(page, 'multidraft');
    assert.ok([...m.text].filter((c) => c === 'y').length < 80 && m.text.includes('…'), m.text);
    assert.ok(m.height < 130, `${m.height} px: ${m.text}`); // a few lines on a phone, not 1,800 px
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test('a zero-width space in a tree configuration is named, not taken for an open bracket, in both languages', async () => {
  for (const [lang, said] of [['en', /unexpected character U\+200B \(zero width space\) at position 6/], ['zh', /第 6 个字符是意外的 U\+200B（零宽空格）/]]) {
    const { page, errors } = await open(env, `?lang=${lang}`);
    await setControl(page, 'tree', 'mode', 'config');
    await page.fill('[data-widget="tree"] [data-key="config"]', '<2,2>\u200B');
    const alert = await alertOf(page, 'tree');
    assert.match(alert, said);
    assert.doesNotMatch(alert, /not closed|没有闭合/);
    assert.deepEqual(errors, []);
    await page.close();
  }
});

test('a link over 16 KB is refused by the server (HTTP 431), as the docs tell instructors; the page never writes one', async () => {
  const long = await fetch(`${env.url}?theory.alpha=${'9'.repeat(17_000)}`);
  assert.equal(long.status, 431);
  const { page } = await open(env, 'docs.html');
  for (const l of ['en', 'zh']) assert.match(await page.$$eval(`header [data-lang="${l}"]`, (es) => es.map((e) => e.textContent).join(' ')), /16 KB[^]*431/);
  await page.close();
});
