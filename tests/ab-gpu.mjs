// A/B (not a test): two builds of the GPU module timed side by side in one page, alternating.
//   node tests/ab-gpu.mjs /pkg/gpu-a/ /pkg/gpu-b/ [rounds]
import { start, open } from './browser.mjs';

const [a, b] = process.argv.slice(2, 4);
const rounds = Number(process.argv[4] ?? 4);
const env = await start();
try {
  const { page } = await open(env, 'embed.html?widget=theory');
  await page.evaluate(async ([a, b]) => {
    const { fetchWeights, provideWeights } = await import('/weights.js');
    const ws = await fetchWeights(new URL('/pkg/weights/', location.href));
    window.mods = {};
    for (const m of [a, b]) {
      const gpu = await import(`${m}specdec.js`);
      await gpu.default({ module_or_path: `${m}specdec_bg.wasm` });
      window.mods[m] = provideWeights(gpu, ws);
    }
  }, [a, b]);
  const sums = { [a]: [], [b]: [] };
  for (let r = 0; r < rounds; r += 1) {
    for (const m of r % 2 ? [b, a] : [a, b]) {
      const v = await page.evaluate(([m]) => window.mods[m].likesworld_latency({ backend: 'wgpu', runs: 40, warmup: 10 }), [m]);
      const row = ['target', 'draft_a', 'draft_b'].map((k) => ['decode1', 'chain5', 'tree31'].map((w) => v[k][w].median_us));
      sums[m].push(row);
      console.log(m, row.map((x) => x.map((u) => (u / 1000).toFixed(2)).join(' / ')).join('   '));
    }
  }
  for (const m of [a, b]) {
    const med = (xs) => xs.slice().sort((p, q) => p - q)[Math.floor(xs.length / 2)];
    const out = [0, 1, 2].map((i) => [0, 1, 2].map((j) => med(sums[m].map((s) => s[i][j]))));
    console.log('median of rounds', m, out.map((x) => x.map((u) => (u / 1000).toFixed(2)).join(' / ')).join('   '));
  }
} finally {
  await env.close();
}
