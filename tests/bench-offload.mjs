// Offloading measured in the page (issue 34, part 2; lecture §4.6), in headless Chromium on WebGPU
// (SwiftShader here: a GPU emulated on this machine's CPU): the ×R target's weights on the GPU,
// then offloaded (written into the GPU's buffers before every target call), side by side in one
// run — the speedup of a chain (draft B, γ 4) and of a tree (⟨2,2,1,1⟩) against plain decoding,
// and the measured roofline T(k) with the crossing alone. `node tests/bench-offload.mjs [R]
// [prompts]` (after `bash scripts/build-wasm.sh`; defaults 16 and 10).
import { start, open } from './browser.mjs';

const [width = '16', prompts = '10'] = process.argv.slice(2);
const env = await start();
const rowsOf = (page, sel) => page.$$eval(`${sel} tr`, (rs) => rs.map((r) => r.innerText.replace(/\s+/g, ' ').trim()));
const textOf = (page, sel) => page.$eval(sel, (e) => e.innerText.replace(/\s+/g, ' ').trim()).catch(() => '');
try {
  const shapes = [['chain, draft B γ 4', 'decoding.shape=chain&decoding.draft=b&decoding.gamma=4'], ['tree ⟨2,2,1,1⟩ of draft B', 'decoding.shape=tree&decoding.draft=b&decoding.config=%3C2,2,1,1%3E']];
  for (const [name, query] of shapes) {
    for (const weights of ['gpu', 'host']) {
      const { page, errors } = await open(env, `?decoding.experiment=speedup&decoding.backend=wgpu&decoding.weights=${weights}&decoding.target_width=${width}&decoding.prompts=${prompts}&${query}`);
      const t0 = Date.now();
      await page.waitForSelector('[data-widget="decoding"] table.dec-speedup', { timeout: 3_600_000 });
      const rows = await rowsOf(page, '[data-widget="decoding"] table.dec-speedup');
      const measured = await textOf(page, '[data-widget="decoding"] .dec-result p.numbers');
      const crossing = await textOf(page, '[data-widget="decoding"] .offload-note');
      console.log(`speedup ×${width}, ${name}, weights ${weights === 'host' ? 'offloaded' : 'on the GPU'} (${((Date.now() - t0) / 1000).toFixed(1)} s):\n  ${measured}\n  ${rows.slice(1).join('\n  ')}${crossing ? `\n  ${crossing}` : ''}${errors.length ? `\n  console errors: ${errors.join('; ')}` : ''}`);
      await page.close();
    }
  }
  for (const weights of ['gpu', 'host']) {
    const { page } = await open(env, `?measured.backend=wgpu&measured.weights=${weights}&measured.width=${width}`);
    const t0 = Date.now();
    await page.click('[data-widget="measured"] .mr-go');
    await page.waitForSelector('[data-widget="measured"] table.mr-rows', { timeout: 3_600_000 });
    const rows = await rowsOf(page, '[data-widget="measured"] table.mr-rows');
    const crossing = await textOf(page, '[data-widget="measured"] .offload-note');
    console.log(`measured roofline ×${width}, weights ${weights === 'host' ? 'offloaded' : 'on the GPU'} (${((Date.now() - t0) / 1000).toFixed(1)} s):\n  ${rows.join('\n  ')}${crossing ? `\n  ${crossing}` : ''}`);
    await page.close();
  }
} finally {
  await env.close();
}
