// The widened target in the page (issue 22's goals, measured in headless Chromium on flex): the
// speedup experiment on the ×16 target (draft B γ 3, draft A γ 2) and on the trained one, and the
// measured roofline of ×16 with its widening, each timed from the page's own report.
// `node tests/bench-widened.mjs` (after `bash scripts/build-wasm.sh cpu`).
import { start, open } from './browser.mjs';

const env = await start();
try {
  const runs = [
    ['×16, draft B γ 3', 'target_width=16&decoding.draft=b&decoding.gamma=3'],
    ['×16, draft A γ 2', 'target_width=16&decoding.draft=a&decoding.gamma=2'],
    ['×1, draft B γ 3', 'target_width=1&decoding.draft=b&decoding.gamma=3'],
  ];
  for (const [name, query] of runs) {
    const { page } = await open(env, `?decoding.experiment=speedup&decoding.prompts=20&decoding.${query}`);
    const t0 = Date.now();
    await page.waitForSelector('[data-widget="decoding"] table.dec-speedup', { timeout: 600_000 });
    const rows = await page.$$eval('[data-widget="decoding"] table.dec-speedup tr', (rs) => rs.map((r) => r.innerText.replace(/\s+/g, ' ').trim()));
    console.log(`speedup ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s):\n  ${rows.slice(1).join('\n  ')}`);
    await page.close();
  }
  const { page } = await open(env, '?measured.width=16');
  const t0 = Date.now();
  await page.click('[data-widget="measured"] .mr-go');
  await page.waitForFunction(() => Number(document.querySelector('[data-widget="measured"]')?.dataset.decoded || 0) >= 1, null, { timeout: 600_000 });
  const rows = await page.$$eval('[data-widget="measured"] table.mr-rows tr', (rs) => rs.map((r) => r.innerText.replace(/\s+/g, ' ').trim()));
  const text = await page.$eval('[data-widget="measured"] .mr-result', (e) => e.innerText);
  console.log(`measured roofline ×16, widening included (${((Date.now() - t0) / 1000).toFixed(1)} s):\n  ${rows.join('\n  ')}\n${text.split('\n').filter((l) => /bandwidth|almost free|not free/.test(l)).join('\n')}`);
  await page.close();
} finally {
  await env.close();
}
