// What the browser tests share: setting a control as a person does, reading texts, alerts and
// table rows, and waiting for the worker jobs of the decoding and model-free widgets.
import assert from 'node:assert/strict';

/** The analytic widgets: every control change redraws them at once. */
export const WIDGETS = ['roofline', 'theory', 'exactness', 'multidraft', 'tree', 'choose'];

/** Sets a control's value the way a person does (an input event that bubbles). */
export async function setControl(page, widget, key, value) {
  const before = await page.getAttribute(`[data-widget="${widget}"]`, 'data-renders');
  await page.$eval(`[data-widget="${widget}"] [data-key="${key}"]`, (el, v) => {
    el.value = String(v);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, value);
  const after = await page.getAttribute(`[data-widget="${widget}"]`, 'data-renders');
  assert.notEqual(after, before, `${widget}.${key} redrew`);
}

export const text = (page, sel) => page.$eval(sel, (el) => el.textContent.replace(/\s+/g, ' ').trim());
export const alertOf = (page, w) => text(page, `[data-widget="${w}"] [role="alert"]`);
export const rowsOf = (page, sel) => page.$$eval(`${sel} tr`, (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent.trim()).join(' ')));
/** What of widget `w` is wider than the window (a phone's): the page, its figure `figure`, a paragraph. */
export const tooWide = (page, w, figure) => page.evaluate(([name, sel]) => {
  const out = [];
  const root = document.querySelector(`[data-widget="${name}"]`);
  if (document.scrollingElement.scrollWidth > innerWidth) out.push(`page ${document.scrollingElement.scrollWidth}`);
  const svg = root.querySelector(sel).getBoundingClientRect();
  if (svg.right > innerWidth + 0.5) out.push(`figure ends at ${svg.right}`);
  for (const p of root.querySelectorAll('p')) if (p.scrollWidth > p.clientWidth + 1) out.push(`a paragraph ${p.scrollWidth} > ${p.clientWidth}`);
  return out;
}, [w, figure]);
export const alertShown = (page, w) => page.$eval(`[data-widget="${w}"] [role="alert"]`, (el) => el.classList.contains('shown'));

/** Waits until the decoding (resp. model-free) widget has finished `n` worker jobs in all. */
export const decoded = (page, n) => page.waitForFunction((k) => Number(document.querySelector('[data-widget="decoding"]')?.dataset.decoded || 0) >= k, n, { timeout: 180_000 });
export const mfDone = (page, n) => page.waitForFunction((k) => Number(document.querySelector('[data-widget="modelfree"]')?.dataset.decoded || 0) >= k, n, { timeout: 180_000 });

/** Every step of the step-through: the tree drafted and the tokens emitted (no probabilities). */
export async function stepsOf(page) {
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
