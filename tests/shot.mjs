// Takes a full-page screenshot of the playground (or of a path given as argument), to look at
// what a student sees: `node tests/shot.mjs [path] [out.png]`.
import { start, open } from './browser.mjs';

const [path = '', out = 'playground.png'] = process.argv.slice(2);
const env = await start();
try {
  // A page of notes with <specdec-widget> elements has no data-ready of its own.
  const { page, errors } = await open(env, path, { ready: 'html[data-ready="true"], specdec-widget[data-state], specdec-widget[data-waiting]' });
  await page.waitForTimeout(800);
  await page.screenshot({ path: out, fullPage: true });
  console.log(`wrote ${out}${errors.length ? `; console errors:\n${errors.join('\n')}` : ''}`);
} finally {
  await env.close();
}
