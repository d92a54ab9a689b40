// A first visit, timed (issue 56): how long after navigation the course page's theory widget has
// drawn, on the local server in headless Chromium, with the lecture's module alone; and what the
// visit fetched from pkg/. Each round is a fresh browser context (nothing cached).
//   node tests/bench-first-visit.mjs [--rounds 5]
import { start } from './browser.mjs';

const args = process.argv.slice(2);
const rounds = Number(args[args.indexOf('--rounds') + 1]) || 5;
const env = await start();
const times = [];
let fetched = [];
try {
  for (let i = 0; i < rounds; i += 1) {
    const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 }, serviceWorkers: 'block' });
    const page = await context.newPage();
    const requests = [];
    page.on('request', (r) => requests.push(new URL(r.url()).pathname));
    await page.goto(env.url);
    await page.waitForSelector('[data-widget="theory"] .view svg', { timeout: 30_000 });
    times.push(await page.evaluate(() => performance.now()));
    fetched = requests.filter((r) => r.startsWith('/pkg/'));
    await context.close();
  }
} finally {
  await env.close();
}
times.sort((a, b) => a - b);
console.log(`theory widget drawn ${times.map((t) => t.toFixed(0)).join(', ')} ms after navigation; median ${times[Math.floor(times.length / 2)].toFixed(0)} ms`);
console.log(`fetched from pkg/: ${fetched.join(' ')}`);
