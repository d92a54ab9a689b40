// Browser tests of speculation under load (issue 34, part 4): the decoding widget's `load`
// experiment times one chain at every batch of a list against the target alone and draws the
// speedup against the batch beside the EAGLE-3 paper's serving figures, with a caption computed
// from the measured rows. Small sizes (the trained target, 10 prompts, batches 1 and 2); both
// languages; at 390 px; a bad batch list gets the core's one line and the widget keeps working; a
// list too long for its field is cut between two values.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { setControl, text, alertOf, rowsOf, decoded } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

const W = '[data-widget="decoding"]';
const svgOf = (page) => page.$eval(`${W} .dec-plot`, (el) => el.innerHTML);

test('the speedup against the batch: a row per batch (one group: no IQR), the published serving figures drawn and labelled, a caption from the measured rows; bad lists refused', async () => {
  const { page, errors } = await open(env, '?decoding.experiment=load&decoding.batches=10,1&decoding.prompts=10&decoding.gamma=2');
  await decoded(page, 1);
  const rows = await rowsOf(page, `${W} table.dec-load`);
  assert.equal(rows.length, 3, rows.join(' | '));
  assert.match(rows[1], /^1 10 [\d.]+ [\d.]+ [\d.]+ \([\d.]+\) [\d.]+ [\d.]+ [\d.]+× [\d.]+× \(IQR [\d.]+\)$/, 'batch 1 first');
  // Batch 10 of 10 prompts is one timed group: no spread to give, and none claimed.
  assert.match(rows[2], /^10 10 .* [\d.]+× \(one group: no spread\)$/, rows[2]);
  // The measured speedup is the ratio of the two times per token.
  const cells = rows[1].split(' ');
  const ratio = Number(cells[2]) / Number(cells[3]);
  assert.ok(Math.abs(ratio - Number(cells[9].replace('×', ''))) < 0.02 * ratio + 0.01, rows[1]);
  const caption = await text(page, `${W} .dec-load-caption`);
  assert.match(caption, /^Here the speedup goes from [\d.]+× at batch 1 to [\d.]+× at batch 10: it (stays about level|changes, but batch 10 was timed as one group, whose spread is unknown)/, caption);
  assert.match(caption, /T\(n\)\/T\(1\) \+ d·c = [\d.]+ \+ [\d.]+ one-token calls at batch 1/, caption);
  assert.match(await text(page, `${W} .dec-published`), /published \(EAGLE-3 paper\), H100\/SGLang, chain of 3: 1\.81× at batch 2, ≈ 1\.3–1\.4× at batch 64/);
  const svg = await svgOf(page);
  assert.match(svg, /Speculation under load: speedup against the batch/);
  assert.match(svg, /published \(EAGLE-3 paper\), H100\/SGLang, chain of 3/);
  assert.match(svg, /published \(EAGLE-3 paper\), vLLM, chain of 2/);
  // The state is in the URL and the Share link.
  assert.equal(new URL(page.url()).searchParams.get('decoding.batches'), '10,1');
  // The method in the lecture's words.
  assert.match(await text(page, `${W} .dec-result`), /draft B chain γ 2, greedy/);
  // The preset at the published sizes is offered (not run here: the ×16 target at batch 32).
  assert.ok(await page.$$eval(`${W} [data-preset]`, (bs) => bs.some((b) => /Speculation under load/.test(b.textContent))));
  // A drafter without a model follows one request: greyed out here.
  const off = await page.$$eval(`${W} [data-key="shape"] option`, (os) => os.filter((o) => o.disabled).map((o) => o.value).join(','));
  assert.equal(off, 'prompt-lookup,suffix,jacobi,lookahead');

  // Bad lists: the core's one line beside the control; the widget keeps working.
  for (const [typed, said] of [['1,,2', /bad batch list "1,,2": expected whole numbers separated by commas/], ['0,2', /batch = 0 is out of range: 1 ≤ batch ≤ 64/], ['2,99', /batch = 99 is out of range/]]) {
    await setControl(page, 'decoding', 'batches', typed);
    await page.waitForFunction((re) => new RegExp(re).test(document.querySelector('[data-widget="decoding"] [role="alert"]').textContent), said.source, { timeout: 30_000 });
    assert.match(await alertOf(page, 'decoding'), said);
  }
  // A list too long is refused too.
  await setControl(page, 'decoding', 'batches', '1,2,3,4,5,6,7,8,9');
  await page.waitForFunction(() => /#batches = 9/.test(document.querySelector('[data-widget="decoding"] [role="alert"]').textContent), null, { timeout: 30_000 });
  // A list longer than the field keeps (40 URL bytes) is cut between two values, never inside
  // one, and the person is told; Chinese commas become ASCII ones (a URL spells "，" in nine bytes).
  // (A link spells a comma in three bytes: 40 bytes hold eight values of two digits.)
  await setControl(page, 'decoding', 'batches', '65,66,67,68,69,70,71,72,73,74,75');
  assert.equal(await page.inputValue(`${W} [data-key="batches"]`), '65,66,67,68,69,70,71,72');
  await page.waitForFunction(() => /batch = 65 is out of range/.test(document.querySelector('[data-widget="decoding"] [role="alert"]').textContent), null, { timeout: 30_000 });
  assert.match(await alertOf(page, 'decoding'), /batches: the text was cut to its first 23 characters, after its last whole value/);
  // One value longer than the field: cut as any text (not emptied), and refused as out of range.
  await setControl(page, 'decoding', 'batches', '9'.repeat(44));
  assert.equal(await page.inputValue(`${W} [data-key="batches"]`), '9'.repeat(40));
  await page.waitForFunction(() => /: 9{40} is out of range: 1 ≤ batch ≤ 64/.test(document.querySelector('[data-widget="decoding"] [role="alert"]').textContent), null, { timeout: 30_000 });
  await setControl(page, 'decoding', 'batches', '1，2，4，8，16，32，64，99');
  assert.equal(await page.inputValue(`${W} [data-key="batches"]`), '1,2,4,8,16,32,64,99');
  await page.waitForFunction(() => /batch = 99 is out of range/.test(document.querySelector('[data-widget="decoding"] [role="alert"]').textContent), null, { timeout: 30_000 });
  assert.doesNotMatch(await alertOf(page, 'decoding'), /cut/);
  const done = Number(await page.getAttribute(W, 'data-decoded'));
  await setControl(page, 'decoding', 'batches', '1');
  await decoded(page, done + 1);
  assert.equal((await rowsOf(page, `${W} table.dec-load`)).length, 2);
  assert.match(await text(page, `${W} .dec-load-caption`), /^One batch measured: [\d.]+× at batch 1\./);
  assert.deepEqual(errors, []);
  await page.close();
});

test('in Chinese at 390 px: the caption and the published figures in Chinese, nothing wider than the phone', async () => {
  const { page, errors } = await open(env, '?lang=zh&decoding.experiment=load&decoding.batches=1,2&decoding.prompts=10&decoding.gamma=2', { width: 390, height: 844 });
  await decoded(page, 1);
  const caption = await text(page, `${W} .dec-load-caption`);
  assert.match(caption, /^这里加速比从批 1 的 [\d.]+× 变到批 2 的 [\d.]+×：/, caption);
  assert.match(caption, /EAGLE-3 论文报告/);
  assert.match(await text(page, `${W} .dec-published`), /已发表（EAGLE-3 论文），H100\/SGLang，长 3 的链：1\.81×（批 2）/);
  const svg = await svgOf(page);
  assert.match(svg, /负载下的推测解码/);
  assert.match(svg, /已发表/);
  assert.doesNotMatch(svg, /published \(EAGLE-3/, 'no English left in the figure');
  assert.equal((await rowsOf(page, `${W} table.dec-load`))[0].split(' ')[0], '批大小');
  const wide = await page.evaluate((w) => {
    const root = document.querySelector(w);
    const svg = root.querySelector('.dec-plot svg');
    return { page: document.scrollingElement.scrollWidth, window: innerWidth, svg: svg.getBoundingClientRect().right, box: root.getBoundingClientRect().right };
  }, W);
  assert.ok(wide.page <= wide.window, `the page scrolls sideways: ${JSON.stringify(wide)}`);
  assert.ok(wide.svg <= wide.box + 0.5, `the figure is wider than its widget: ${JSON.stringify(wide)}`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a noisy speedup is flagged in every decoding table (speedup, γ sweep, batch sweep), and the note names what moves calls of that length (the ×16 sweep said "the calls take microseconds" beside 17 ms calls)', async () => {
  const { page, errors } = await open(env, '');
  const notes = await page.evaluate(async () => {
    const { noisyHtml } = await import('./widgets/decoding-load.js');
    const row = (gamma, batch, measured_speedup, measured_speedup_iqr, target_call_us) => ({ gamma, batch, prompts: 8, measured_speedup, measured_speedup_iqr, target_call_us });
    return [noisyHtml([row(2, 1, 1.5, 0.2, 17_000), row(4, 1, 1.2, 0.9, 17_000)]), noisyHtml([row(2, 1, 1.5, 0.9, 200)]),
      noisyHtml([row(2, 1, 1.5, 0.2, 200)]), noisyHtml([row(2, 8, 1.5, 0.9, 200)]),
      noisyHtml([row(2, 1, 1.2, 0.9, 300), row(2, 4, 1.2, 0.1, 300)], (w) => `batch ${w.batch}`)];
  });
  assert.match(notes[0], /Noisy: the speedup at γ 4 varies by more than half itself/);
  assert.doesNotMatch(notes[0], /microseconds/);
  assert.match(notes[0], /Something else may have used this device/);
  assert.match(notes[1], /Its calls take microseconds/);
  assert.equal(notes[2], '', 'a steady speedup has no note');
  assert.equal(notes[3], '', 'one group of prompts has no spread to flag');
  assert.match(notes[4], /the speedup at batch 1 varies/);
  assert.deepEqual(errors, []);
  await page.close();
});
