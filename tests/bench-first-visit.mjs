// A first visit, timed (issue 56): how long after navigation the course page's theory widget has
// drawn, on the local server in headless Chromium, with the lecture's module alone; what the
// visit fetched from pkg/; and how long each analytic widget's call takes on the main thread with
// its defaults (the median of 9), which is why they run there and Monte Carlo and the gallery in
// a worker. Each round is a fresh browser context (nothing cached).
//   node tests/bench-first-visit.mjs [--rounds 5]
import { start } from './browser.mjs';

const args = process.argv.slice(2);
const rounds = Number(args[args.indexOf('--rounds') + 1]) || 5;
const env = await start();
const times = [];
let fetched = [];
let calls = [];
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
    if (i === 0) {
      calls = await page.evaluate(() => {
        const names = ['theory', 'roofline', 'exactness', 'typical', 'multi_draft', 'token_tree', 'choose', 'exercise'];
        return names.map((name) => {
          const ms = [];
          for (let k = 0; k < 9; k += 1) {
            const t0 = performance.now();
            window.specdec.call(name, name === 'exercise' ? { exercise: 1, answers: [] } : {});
            ms.push(performance.now() - t0);
          }
          ms.sort((a, b) => a - b);
          return `${name} ${ms[4].toFixed(1)} ms`;
        });
      });
    }
    await context.close();
  }
} finally {
  await env.close();
}
times.sort((a, b) => a - b);
console.log(`theory widget drawn ${times.map((t) => t.toFixed(0)).join(', ')} ms after navigation; median ${times[Math.floor(times.length / 2)].toFixed(0)} ms`);
console.log(`fetched from pkg/: ${fetched.join(' ')}`);
console.log(`one call on the main thread (median of 9, defaults): ${calls.join(', ')}`);
