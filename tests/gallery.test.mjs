// Browser tests of the exactness lab's typical acceptance (lecture §5.1) and its gallery of real
// bugs (lecture §6, second principle): choosing `typical` shows ε and δ and draws the trade of
// tokens per call against TV, whose caption follows ε; the gallery runs in a worker after its
// button and shows ten bugs, each with its source, and the correct rule, in English and Chinese,
// on a desktop and a phone; a bad ε in the URL is refused by name and the page keeps working.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { alertOf, rowsOf, setControl, text, tooWide } from './helpers.mjs';
import { audit } from './a11y.mjs';

let env;
before(async () => { env = await start({ webgpu: false }); });
after(async () => { await env?.close(); });

const W = '[data-widget="exactness"]';
const shown = (page, key) => page.$eval(`${W} [data-key="${key}"]`, (el) => !el.closest('.control').hidden);

test('typical acceptance: ε and δ appear, its trade is drawn under the TV bars, and moving ε changes the caption', { timeout: 60_000 }, async () => {
  const { page, errors } = await open(env, '');
  assert.equal(await shown(page, 'epsilon'), false);
  assert.equal(await page.$(`${W} .typical svg`), null);
  await setControl(page, 'exactness', 'variant', 'typical');
  assert.equal(await shown(page, 'epsilon'), true);
  assert.equal(await shown(page, 'delta'), true);
  // Medusa's thresholds are the core's defaults.
  assert.equal(await page.inputValue(`${W} [data-key="epsilon"]`), '0.09');
  assert.equal(await page.inputValue(`${W} [data-key="delta"]`), '0.3');
  assert.ok(await page.$(`${W} .typical svg`), 'the trade figure');
  const before = await text(page, `${W} .typical-caption`);
  assert.match(before, /^Typical acceptance at ε 0\.09, δ 0\.3: [\d.]+ tokens a call against the exact rule's [\d.]+ .*TV of [\d.]+/);
  // The TV table names the rule too, as a biased one.
  const rows = await rowsOf(page, `${W} table.tvs`);
  assert.ok(rows.some((r) => /^typical .*biased/.test(r)), rows.join(' | '));
  await setControl(page, 'exactness', 'epsilon', 0.3);
  const after = await text(page, `${W} .typical-caption`);
  assert.match(after, /^Typical acceptance at ε 0\.3, δ 0\.3: /);
  assert.notEqual(after.replace(/^[^:]*:/, ''), before.replace(/^[^:]*:/, ''), 'its numbers moved');
  // The URL keeps it (written at most every 200 ms, so a moment after the caption).
  await page.waitForURL(/exactness\.epsilon=0\.3/, { timeout: 5_000 });
  // Another rule: the sliders and the figure go.
  await setControl(page, 'exactness', 'variant', 'correct');
  assert.equal(await shown(page, 'epsilon'), false);
  assert.equal(await page.$(`${W} .typical svg`), null);
  assert.deepEqual(errors, []);
  await page.close();
});

for (const [lang, width] of [['en', 1280], ['zh', 1280], ['en', 390], ['zh', 390]]) {
  test(`the gallery runs ${lang === 'zh' ? 'in Chinese' : 'in English'} at ${width} px: ten bugs with their sources and the correct rule`, { timeout: 90_000 }, async () => {
    const { page, errors } = await open(env, `?lang=${lang}`, { width });
    assert.equal(await page.$(`${W} table.gallery-bugs`), null, 'nothing runs before its button');
    await page.click(`${W} .gallery-go`);
    await page.waitForSelector(`${W}[data-gallery]`, { timeout: 40_000 });
    const rows = await rowsOf(page, `${W} table.gallery-bugs`);
    assert.equal(rows.length, 1 + 10 + 1, rows.join('\n'));
    assert.match(rows[0], lang === 'zh' ? /^# 缺陷 它做了什么 出处 精确 TV/ : /^# bug what it does source exact TV/);
    rows.slice(1, 11).forEach((r, i) => assert.ok(r.startsWith(String(i + 1)), r));
    assert.match(rows[11], lang === 'zh' ? /^✓ 正确的规则 .*χ² 误报.*20 个种子中/ : /^✓ the correct rule .*χ² false alarms \(level 5%\): \d+ of 20 seeds at 1,000 samples/);
    // Each bug's source is a link to its thread, opened apart from the page.
    const links = await page.$$eval(`${W} table.gallery-bugs tbody a`, (as) => as.map((a) => [a.href, a.rel, a.target, a.textContent]));
    assert.equal(links.length, 10);
    for (const [href, rel, target, words] of links) {
      assert.match(href, /^https:\/\/github\.com\/[^/]+\/[^/]+\/(pull|issues)\/\d+/, href);
      assert.equal(rel, 'noopener');
      assert.equal(target, '_blank');
      assert.match(words, /^\S+\/\S+ (PR|issue) #\d+$/, words);
    }
    // The tests are named in words of the page's language, never by their ids.
    const body = rows.slice(1).join('\n');
    assert.doesNotMatch(body, /exact-enumeration|monte-carlo|greedy-identity/);
    assert.match(body, lang === 'zh' ? /精确枚举/ : /exact enumeration/);
    if (lang === 'zh') {
      assert.doesNotMatch(rows.slice(1, 11).map((r) => r.split(' ')[1]).join(' '), /[a-z]+-[a-z]+/, 'the bugs by their Chinese names');
      // No English sentence (three Latin words in a row) outside the sources' links, figure included.
      const words = await page.$eval(`${W} section.gallery`, (s) => { const c = s.cloneNode(true); c.querySelectorAll('a').forEach((a) => a.remove()); return c.textContent; });
      assert.doesNotMatch(words, /[A-Za-z]{2,}[ ()]+[A-Za-z]{2,}[ ()]+[A-Za-z]{2,}/);
    }
    assert.ok(await page.$(`${W} section.gallery .plots svg`), 'the samples-needed figure');
    assert.match(await text(page, `${W} .gallery-caption`), lang === 'zh' ? /10 个缺陷中，精确枚举抓到/ : /^Of 10 bugs, exact enumeration catches/);
    // On a phone the table scrolls in its own box: the page never pans sideways.
    assert.deepEqual(await tooWide(page, 'exactness', 'section.gallery .plots svg'), []);
    assert.equal(await page.getAttribute(W, 'data-state'), 'ok');
    // Its table, links and figure pass the page's accessibility audit (names, contrast).
    if (width > 1000) assert.deepEqual(await audit(page), []);
    assert.deepEqual(errors, []);
    await page.close();
  });
}

test('a run can be cancelled, and a change of toy world drops a result of the old one', { timeout: 60_000 }, async () => {
  const { page, errors } = await open(env, '');
  await page.click(`${W} .gallery-go`);
  await page.click(`${W} .gallery-cancel`);
  await page.waitForFunction((w) => /cancelled/.test(document.querySelector(`${w} .gallery-status`).textContent), W);
  assert.equal(await page.$(`${W} table.gallery-bugs`), null);
  await page.click(`${W} .gallery-go`);
  await page.waitForSelector(`${W}[data-gallery]`, { timeout: 40_000 });
  await setControl(page, 'exactness', 'noise', 0.5);
  assert.equal(await page.$(`${W} table.gallery-bugs`), null, 'the old world’s result is gone');
  assert.equal(await page.isEnabled(`${W} .gallery-go`), true);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a bad ε in the URL is refused by name, and the page keeps working', { timeout: 60_000 }, async () => {
  for (const [path, says] of [
    ['?exactness.variant=typical&exactness.epsilon=-1', /^ε \(typical\): -1 is outside 0…1; using 0\b/],
    ['?exactness.variant=typical&exactness.epsilon=abc', /^ε \(typical\): “abc” is not a number; using 0\.09/],
    ['?lang=zh&exactness.variant=typical&exactness.epsilon=abc', /^ε（典型接受）：“abc” 不是数字；改用 0\.09/],
    ['?exactness.variant=typical&exactness.epsilon=1e999', /^ε \(typical\): 1e999 is outside 0…1; using 1\b/],
  ]) {
    const { page, errors } = await open(env, path);
    assert.match(await alertOf(page, 'exactness'), says, path);
    // The URL says the value used, not the one refused.
    const used = path.includes('=-1') ? '0' : path.includes('1e999') ? '1' : '0.09';
    await page.waitForFunction((v) => new URL(location.href).searchParams.get('exactness.epsilon') === v, used, { timeout: 10_000 });
    // It draws with the value it says it uses, and a good value clears the note.
    assert.ok(await page.$(`${W} .typical svg`), path);
    await setControl(page, 'exactness', 'epsilon', 0.2);
    assert.match(await text(page, `${W} .typical-caption`), /(ε 0\.2|ε 为? ?0\.2)/);
    // Beside typical acceptance's tokens a call, Algorithm 1's (not the i.i.d. formula, which is
    // Algorithm 1's own).
    const summary = await text(page, `${W} .view p.numbers`);
    assert.match(summary, path.includes('zh') ? /算法 1 是 [\d.]+/ : /Algorithm 1’s [\d.]+ \(typical acceptance keeps/, summary);
    assert.doesNotMatch(summary, /i\.i\.d\./);
    assert.equal(await alertOf(page, 'exactness'), '');
    assert.equal(await page.getAttribute(W, 'data-state'), 'ok');
    // The other widgets still answer.
    await setControl(page, 'theory', 'alpha', 0.6);
    assert.equal(await page.getAttribute('[data-widget="theory"]', 'data-state'), 'ok');
    assert.deepEqual(errors, []);
    await page.close();
  }
});
