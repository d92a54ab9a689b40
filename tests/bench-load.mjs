// Speculation under load in the page (issue 34, part 4), measured in headless Chromium on flex:
// the decoding widget's `load` experiment on the ×16 target — a chain of 3 of draft B (EAGLE-3's
// SGLang setting) and of 2 (its vLLM setting) — at every batch of a list, the rows and the
// caption as the page shows them. `node tests/bench-load.mjs [batches] [prompts]` (after
// `bash scripts/build-wasm.sh cpu`; defaults 1,2,4,8,16,32 and 10).
import { start, open } from './browser.mjs';

const [batches = '1,2,4,8,16,32', prompts = '10'] = process.argv.slice(2);
const env = await start();
try {
  for (const gamma of [3, 2]) {
    const query = `decoding.experiment=load&decoding.target_width=16&decoding.draft=b&decoding.shape=chain&decoding.gamma=${gamma}&decoding.batches=${batches}&decoding.prompts=${prompts}`;
    const { page, errors } = await open(env, `?${query}`);
    const t0 = Date.now();
    await page.waitForSelector('[data-widget="decoding"] table.dec-load', { timeout: 3_600_000 });
    const rows = await page.$$eval('[data-widget="decoding"] table.dec-load tr', (rs) => rs.map((r) => r.innerText.replace(/\s+/g, ' ').trim()));
    const caption = await page.$eval('[data-widget="decoding"] .dec-load-caption', (e) => e.innerText);
    console.log(`load, ×16, draft B γ ${gamma}, batches ${batches}, ${prompts} prompts (${((Date.now() - t0) / 1000).toFixed(1)} s):\n  ${rows.join('\n  ')}\n${caption}${errors.length ? `\nconsole errors: ${errors.join('; ')}` : ''}`);
    await page.close();
  }
} finally {
  await env.close();
}
