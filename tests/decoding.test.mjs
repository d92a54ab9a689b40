// Browser tests of the speculative-decoding widget: greedy chains and trees, progress, cancel and
// bad input, acceptance by kind, the seeded step-through, the same tree run on WebGPU and flex, and the CPU fallback
// when WebGPU lacks timestamp queries or loses its device mid-run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { setControl, text, alertOf, rowsOf, alertShown, decoded, stepsOf } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

test('speculative decoding: greedy chains and trees are identical to the target, on flex', async () => {
  const { page, errors } = await open(env, '?decoding.experiment=greedy&decoding.prompts=10&decoding.draft=b');
  await decoded(page, 1);
  const rows = await rowsOf(page, '[data-widget="decoding"] table.dec-greedy');
  assert.equal(rows.length, 1 + 4, rows.join(' | ')); // γ 1, 2, 4, 6 (the default γ 4 is one of them)
  for (const r of rows.slice(1)) assert.match(r, /^draft B chain γ \d+, greedy 10\/10 /, r);
  assert.ok(await page.$('[data-widget="decoding"] .dec-plot svg'), 'the tokens-per-call chart');
  await setControl(page, 'decoding', 'experiment', 'tree');
  await decoded(page, 2);
  const trees = await rowsOf(page, '[data-widget="decoding"] table.dec-greedy');
  assert.equal(trees.length, 1 + 6, trees.join(' | ')); // the lecture's six shapes (the typed ⟨2,2,1,1⟩ is one of them)
  assert.ok(trees.slice(1).every((r) => / 10\/10 /.test(r)), trees.join(' | '));
  assert.deepEqual(errors, []);
  await page.close();
});

test('speculative decoding: acceptance by token kind names each kind as the core declares it', async () => {
  const { page, errors } = await open(env, '?decoding.experiment=acceptance&decoding.prompts=10');
  await decoded(page, 1);
  const kinds = await page.$$eval('[data-widget="decoding"] table.dec-kinds tr td:first-child', (c) => c.map((x) => x.textContent));
  assert.deepEqual(kinds, ['boilerplate', 'random fact', 'question name', 'answer']);
  const rows = await rowsOf(page, '[data-widget="decoding"] table.dec-kinds');
  assert.match(rows[rows.length - 1], /^answer \d+ 0\.\d{3} /, rows.join(' | '));
  assert.deepEqual(errors, []);
  await page.close();
});

test('speculative decoding: progress, cancel, bad input, and the widget keeps working', async () => {
  const { page, errors } = await open(env, '?decoding.experiment=sample&decoding.prompts=200&decoding.repeats=5');
  await page.waitForFunction(() => Number(document.querySelector('[data-widget="decoding"] .dec-progress')?.value) > 0, null, { timeout: 60_000 });
  await page.click('[data-widget="decoding"] .dec-cancel');
  await page.waitForSelector('[data-widget="decoding"][data-cancelled]', { timeout: 10_000 });
  assert.match(await text(page, '[data-widget="decoding"] .dec-status'), /Cancelled/);
  await setControl(page, 'decoding', 'experiment', 'tree');
  await page.fill('[data-widget="decoding"] [data-key="config"]', '<2,,1>');
  await page.waitForSelector('[data-widget="decoding"][data-state="error"]', { timeout: 30_000 });
  assert.match(await alertOf(page, 'decoding'), /level 2 is empty/);
  await page.fill('[data-widget="decoding"] [data-key="config"]', '<9,9>');
  await page.waitForFunction(() => /over the budget of 64/.test(document.querySelector('[data-widget="decoding"] [role="alert"]').textContent), null, { timeout: 30_000 });
  await setControl(page, 'decoding', 'prompts', 10);
  await page.fill('[data-widget="decoding"] [data-key="config"]', '<3,1>');
  await decoded(page, 1);
  assert.equal(await page.getAttribute('[data-widget="decoding"]', 'data-state'), 'ok');
  assert.equal(await alertShown(page, 'decoding'), false);
  const rows = await rowsOf(page, '[data-widget="decoding"] table.dec-greedy');
  assert.ok(rows.some((r) => r.startsWith('draft B tree ⟨3,1⟩')), rows.join(' | '));
  assert.deepEqual(errors, []);
  await page.close();
});

test('a tree config too long, in Unicode, read from a link: the note that it was cut stays beside the parse error (at 390 px, in Chinese)', async () => {
  // ⟨二, spelled out long in a link: cut well before 500 characters, and not a tree.
  const config = `⟨${'二,'.repeat(300)}`;
  const { page, errors } = await open(env, `?lang=zh&decoding.experiment=tree&decoding.config=${encodeURIComponent(config)}`, { width: 390 });
  await page.waitForSelector('[data-widget="decoding"][data-state="error"]', { timeout: 60_000 });
  const alert = await alertOf(page, 'decoding');
  assert.match(alert, /^树 ⟨k₁,…⟩：文本被截短为前 \d+ 个字符.* · .*⟨二,二,/, alert);
  assert.deepEqual(errors, []);
  await page.close();
});

test('speculative decoding: a seeded step-through, operable with the keyboard', async () => {
  const { page, errors } = await open(env, '?decoding.experiment=step&decoding.seed=4&decoding.gamma=3');
  await page.waitForSelector('[data-widget="decoding"][data-step="1"]', { timeout: 120_000 });
  const first = await text(page, '[data-widget="decoding"] .dec-step');
  assert.match(first, /Step 1 of \d+/);
  assert.match(first, /accept prob a = min\(1, p\/q\)uniform uverdict/);
  await page.focus('[data-widget="decoding"] .dec-step');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.getAttribute('[data-widget="decoding"]', 'data-step'), '2');
  await page.keyboard.press('ArrowLeft');
  assert.equal(await text(page, '[data-widget="decoding"] .dec-step'), first, 'the same step again');
  // A seed typed out of range is not used: the message says which seed the run keeps.
  await page.fill('[data-widget="decoding"] [data-key="seed"]', '-5');
  await page.waitForSelector('[data-widget="decoding"][data-state="error"]', { timeout: 30_000 });
  assert.match(await alertOf(page, 'decoding'), /^seed: -5 is outside 0…4294967295; the run keeps 4$/);
  assert.equal(new URL(page.url()).searchParams.get('decoding.seed'), '4');
  // A seed past what a float spells exactly is quoted as typed.
  await page.fill('[data-widget="decoding"] [data-key="seed"]', '99999999999999999999');
  await page.waitForFunction(() => document.querySelector('[data-widget="decoding"] [role="alert"]').textContent.includes('9999'));
  assert.match(await alertOf(page, 'decoding'), /^seed: 99999999999999999999 is outside 0…4294967295; the run keeps 4$/);
  // The same seed replays the same run.
  await setControl(page, 'decoding', 'seed', 5);
  await decoded(page, 2);
  await setControl(page, 'decoding', 'seed', 4);
  await decoded(page, 3);
  assert.equal(await text(page, '[data-widget="decoding"] .dec-step'), first);
  // A greedy tree: the mask is drawn.
  await setControl(page, 'decoding', 'stepkind', 'tree');
  await decoded(page, 4);
  assert.ok(await page.$('[data-widget="decoding"] table.dec-mask'), 'the tree mask');
  // A step that ends with the target's own token says where the path stopped: after its last
  // accepted token, or at the root (it never says no draft token matched when some did).
  const sel = '[data-widget="decoding"] .dec-step';
  const n = Number((await text(page, sel)).match(/Step 1 of (\d+)/)[1]);
  const endings = [];
  for (let i = 1; i <= n; i += 1) {
    const [t, last] = [await text(page, sel), await page.$$eval(`${sel} .dec-node.on`, (ns) => ns.at(-1)?.textContent)];
    if (/Then the target’s own token/.test(t)) endings.push([t.match(/Then (the target’s own token \([^)]*\))/)[1], last]);
    if (i < n) await page.click('[data-widget="decoding"] .dec-next');
  }
  assert.ok(endings.some(([, last]) => last), `a step stops after an accepted token: ${endings.join(' / ')}`);
  for (const [said, last] of endings) assert.equal(said, last ? `the target’s own token (no draft token after ${last} matched it)` : 'the target’s own token (no draft token matched it)');
  assert.deepEqual(errors, []);
  await page.close();
});

test('speculative decoding on WebGPU: a greedy tree run end to end, token for token the same as on flex', async () => {
  const { page, errors } = await open(env, '?decoding.experiment=step&decoding.backend=wgpu&decoding.stepkind=tree&decoding.config=%3C2,1%3E&decoding.seed=3');
  await page.waitForSelector('[data-widget="decoding"][data-step="1"]', { timeout: 240_000 });
  assert.match(await text(page, '[data-widget="decoding"] .dec-status'), /Done on wgpu/);
  assert.ok(await page.$eval('[data-widget="decoding"] .dec-note', (n) => n.hidden), 'no fallback note');
  const onGpu = await stepsOf(page);
  assert.ok(onGpu.length > 3, onGpu.join(' / '));
  await setControl(page, 'decoding', 'backend', 'flex');
  await decoded(page, 2);
  assert.match(await text(page, '[data-widget="decoding"] .dec-status'), /Done on flex/);
  assert.deepEqual(await stepsOf(page), onGpu);
  assert.deepEqual(errors, []);
  await page.close();
});

test('WebGPU without timestamp queries (as in Firefox and Safari): the job runs on the CPU and says why', async () => {
  // The worker's adapter and device hide the feature, and a device asking for it is refused.
  const hide = `{
    const without = (proto) => {
      const get = Object.getOwnPropertyDescriptor(proto, 'features').get;
      Object.defineProperty(proto, 'features', { get() { return new Set([...get.call(this)].filter((f) => f !== 'timestamp-query')); } });
    };
    without(GPUAdapter.prototype);
    without(GPUDevice.prototype);
    const request = GPUAdapter.prototype.requestDevice;
    GPUAdapter.prototype.requestDevice = function (d = {}) {
      if ([...(d.requiredFeatures ?? [])].includes('timestamp-query')) return Promise.reject(new TypeError('timestamp-query is not supported here'));
      self.specdecNoTimestamps = (self.specdecNoTimestamps ?? 0) + 1;
      return request.call(this, d);
    };
  }`;
  const { page, errors } = await open(env, '?decoding.experiment=step&decoding.backend=wgpu&decoding.gamma=2&decoding.seed=1', { workerPrelude: hide });
  await page.waitForSelector('[data-widget="decoding"][data-step="1"]', { timeout: 120_000 });
  assert.match(await text(page, '[data-widget="decoding"] .dec-status'), /Done on flex/);
  assert.match(await text(page, '[data-widget="decoding"] .dec-note'), /WebGPU is not usable in this browser \(its adapter has no timestamp-query feature.*\), so this ran on the CPU \(flex\)/);
  assert.ok(await page.$eval('[data-widget="decoding"] .dec-note', (n) => !n.hidden && n.getBoundingClientRect().height > 0), 'the note is visible');
  // The GPU module never started a device (it would have panicked).
  // The jobs' workers (not the CPU module's helper threads, which never return to their event loop).
  const jobs = page.workers().filter((w) => !w.url().includes('pool-worker'));
  const devices = await Promise.all(jobs.map((w) => w.evaluate(() => self.specdecNoTimestamps ?? 0)));
  assert.deepEqual(devices.filter((n) => n > 0), []);
  // The page keeps working: another run, the same answer.
  const first = await text(page, '[data-widget="decoding"] .dec-step');
  await setControl(page, 'decoding', 'seed', 2);
  await decoded(page, 2);
  await setControl(page, 'decoding', 'seed', 1);
  await decoded(page, 3);
  assert.equal(await text(page, '[data-widget="decoding"] .dec-step'), first);
  assert.deepEqual(errors, []);
  await page.close();
});

test('a WebGPU device lost mid-run: the job runs again on the CPU with a note, the next one gets a new device', async () => {
  const { page, errors } = await open(env, '?decoding.experiment=step&decoding.gamma=2&decoding.seed=1');
  await page.waitForSelector('[data-widget="decoding"][data-step="1"]', { timeout: 120_000 });
  let done = Number(await page.getAttribute('[data-widget="decoding"]', 'data-decoded'));
  await page.evaluate(() => window.specdec.loseDeviceOnNextJob());
  await setControl(page, 'decoding', 'backend', 'wgpu');
  await decoded(page, ++done);
  assert.match(await text(page, '[data-widget="decoding"] .dec-status'), /Done on flex/);
  assert.match(await text(page, '[data-widget="decoding"] .dec-note'), /WebGPU device was lost during this run \(.+\), so it ran again on the CPU \(flex\)/);
  assert.ok(await page.$eval('[data-widget="decoding"] .dec-note', (n) => !n.hidden && n.getBoundingClientRect().height > 0), 'the note is visible');
  // The next WebGPU job starts a fresh instance of the GPU module, which asks for a new device.
  await setControl(page, 'decoding', 'seed', 2);
  await decoded(page, ++done);
  assert.match(await text(page, '[data-widget="decoding"] .dec-status'), /Done on wgpu/);
  assert.ok(await page.$eval('[data-widget="decoding"] .dec-note', (n) => n.hidden), 'no note on the new device');
  assert.deepEqual(errors, []);
  await page.close();
});

test('the widened target: greedy ×2 is identical to the target, and the speedup reports the width and the curve’s prediction', async () => {
  const { page, errors } = await open(env, '?decoding.experiment=greedy&decoding.prompts=10&decoding.target_width=2');
  assert.match(await text(page, '[data-widget="decoding"] .dec-width'), /widened ×2: the same model.*Its answers are the trained target’s/);
  await decoded(page, 1);
  const rows = await rowsOf(page, '[data-widget="decoding"] table.dec-greedy');
  assert.equal(await page.getAttribute('[data-widget="decoding"]', 'data-target-width'), '2');
  for (const r of rows.slice(1)) assert.match(r, /^draft B chain γ \d+, greedy 10\/10 /, r);
  await setControl(page, 'decoding', 'experiment', 'speedup');
  await decoded(page, 2);
  const speed = await text(page, '[data-widget="decoding"] .dec-result');
  assert.match(speed, /on the target ×2, 10 prompts, batch 1/, speed);
  const cells = await rowsOf(page, '[data-widget="decoding"] table.dec-speedup');
  assert.match(cells.find((r) => r.startsWith('on the measured curve')), /\)\s*[\d.]+×$/, cells.join(' | '));
  assert.match(cells.find((r) => r.startsWith('lecture’s formula')), /[\d.]+×$/, cells.join(' | '));
  assert.match(cells.find((r) => r.startsWith('wall clock')), /[\d.]+× \(IQR [\d.]+\)$/, cells.join(' | '));
  assert.match(cells.find((r) => r.startsWith('at this device’s limit')), /\)\s*[\d.]+×$/, cells.join(' | '));
  // "Slower than plain decoding" only where the speedup's spread cannot reach 1 (made-up runs).
  const [slow, even, untimed, close] = await page.evaluate(async () => {
    const { slowerHtml } = await import('./widgets/decoding.js');
    const r = { measured_speedup: 0.9, measured_speedup_iqr: 0.05, draft_calls_per_step: 4, c: 0.05, verify_over_target: 2, tokens_per_call: 2.2, shape: 'chain' };
    return [slowerHtml(r), slowerHtml({ ...r, measured_speedup_iqr: 0.3 }), slowerHtml({ ...r, measured_speedup: 0.97, measured_speedup_iqr: null }),
      slowerHtml({ ...r, measured_speedup: 0.99, measured_speedup_iqr: 0.001 })];
  });
  assert.match(slow, /Slower than plain decoding\..*verification is not free/);
  assert.match(even, /About as fast as plain decoding\..*0\.90× is below 1, but within this run’s spread \(IQR 0\.30\)/);
  assert.doesNotMatch(even, /Slower/);
  assert.match(untimed, /About as fast as plain decoding\..*within 5% of it/);
  assert.match(close, /0\.99× is below 1, but within 2% of it/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the step-through labels every step by the rule in force, and marks where a wrong rule departs from Algorithm 1', async () => {
  const { page, errors } = await open(env, '?decoding.experiment=step&decoding.seed=4&decoding.gamma=3&decoding.variant=correct');
  await page.waitForSelector('[data-widget="decoding"][data-step="1"]', { timeout: 120_000 });
  const sel = '[data-widget="decoding"] .dec-step';
  // Every step of the run: its text, its checks (p, q, a) and its side-by-side rows (p, q, residual, drawn).
  const walk = async () => {
    const n = Number((await text(page, sel)).match(/Step 1 of (\d+)/)[1]);
    const steps = [];
    for (let i = 1; i <= n; i += 1) {
      steps.push(await page.$eval(sel, (el) => {
        const cells = (t) => [...(el.querySelector(`table.${t}`)?.tBodies[0].rows ?? [])].map((r) => [...r.cells].map((c) => c.textContent.trim()));
        const head = (t) => [...(el.querySelector(`table.${t}`)?.tHead.rows[0].cells ?? [])].map((c) => c.textContent.trim());
        return { text: el.textContent.replace(/\s+/g, ' '), checks: cells('dec-checks'), compare: cells('dec-compare'), compareHead: head('dec-compare') };
      }));
      if (i < n) await page.click('[data-widget="decoding"] .dec-next');
    }
    return steps;
  };
  const num = Number;
  let runs = 1;
  const rules = {
    correct: { accept: (p, q) => Math.min(1, p / q), reject: 'residual', bonus: 'p', departs: null },
    'accept-q-over-p': { accept: (p, q) => Math.min(1, q / p), reject: 'residual', bonus: 'p', departs: /a = min\(1, q\/p\) ⚠ Algorithm 1: a = min\(1, p\/q\)/ },
    'resample-from-target': { accept: (p, q) => Math.min(1, p / q), reject: 'p', bonus: 'p', departs: /drawn from the target’s p ⚠ Algorithm 1: the residual/ },
    'bonus-from-draft': { accept: (p, q) => Math.min(1, p / q), reject: 'residual', bonus: 'q', departs: /bonus token drawn from the draft’s q ⚠ Algorithm 1: the target’s p/ },
    'greedy-rule': { accept: null, reject: 'p', bonus: 'p', departs: /a = 1 if x = argmax p, else 0 ⚠ Algorithm 1/ },
    'argmax-draft': { accept: (p, q) => Math.min(1, p / q), reject: 'residual', bonus: 'p', departs: /Draft tokens: x = argmax q ⚠ Algorithm 1: x ~ q/ },
  };
  for (const [variant, rule] of Object.entries(rules)) {
    if (variant !== 'correct') {
      await setControl(page, 'decoding', 'variant', variant);
      runs += 1;
      await decoded(page, runs);
    }
    const steps = await walk();
    const all = steps.map((s) => s.text).join(' ');
    if (rule.departs) assert.match(all, rule.departs, `${variant}: the departure is named`);
    else assert.doesNotMatch(all, /⚠/, 'Algorithm 1 departs from nothing');
    let compared = 0;
    for (const s of steps) {
      // The shown a is the rule's own a, computed from the shown p and q (3 decimals each).
      for (const [, , p, q, a] of s.checks) {
        if (rule.accept) assert.ok(Math.abs(num(a) - rule.accept(num(p), num(q))) <= 0.02 + 0.002 / Math.min(num(p), num(q)), `${variant}: a ${a} for p ${p}, q ${q}`);
        else assert.ok(a === '0.000' || a === '1.000', `${variant}: a ${a}`);
      }
      // The column the rule drew from is the drawn one (the residual is shown after a rejection only).
      const from = /Then every check passed/.test(s.text) ? rule.bonus : (/Then a check failed/.test(s.text) ? rule.reject : null);
      if (!from || !s.compare.length) continue;
      const col = s.compareHead.findIndex((h) => h.startsWith(from === 'residual' ? 'residual' : `${from} (`));
      const drawn = s.compareHead.findIndex((h) => h.startsWith('drawn from'));
      assert.ok(col > 0 && drawn > col, s.compareHead.join(' | '));
      assert.equal(s.compareHead.some((h) => h.startsWith('residual')), /Then a check failed/.test(s.text), 'the residual beside a rejection only');
      for (const row of s.compare) assert.equal(row[drawn], row[col], `${variant}: drawn from ${from}: ${row.join(' ')}`);
      compared += 1;
    }
    assert.ok(compared > 0, `${variant}: some step drew after a check`);
  }
  assert.deepEqual(errors, []);
  await page.close();
});

test('a job that panics in its worker: the panic’s message, a restarted worker (a fresh instance, clean memory), and the next job on the channel runs', async () => {
  const { page, errors } = await open(env, '?decoding.experiment=greedy&decoding.prompts=10');
  await decoded(page, 1);
  const failed = await page.evaluate(async () => {
    const { runJob } = await import('./engine.js');
    try { await runJob('debug_panic', {}, () => {}, 'trap-test').promise; return null; } catch (e) { return `${e.name}: ${e.message}`; }
  });
  assert.match(failed, /debug_panic was called — the worker was restarted/, failed);
  // The channel starts a fresh worker (a fresh instance, clean memory) for its next job.
  const next = await page.evaluate(async () => {
    const { runJob } = await import('./engine.js');
    const v = await runJob('likesworld_decode', { experiment: 'greedy', gamma: 2, prompts: 3, lang: 'en' }, () => {}, 'trap-test').promise;
    return v.report.map((r) => `${r.identical}/${r.prompts}`).join(' ');
  });
  assert.match(next, /^3\/3( 3\/3)+$/, next);
  assert.deepEqual(errors.filter((e) => !/debug_panic/.test(e)), []);
  await page.close();
});

test('§5’s decoding widget has its own title and presets (not §3’s fifteen) and answers its question with the measured wall-clock speedup', async () => {
  for (const zh of [false, true]) {
    const { page, errors } = await open(env, `?${zh ? 'lang=zh&' : ''}s5.prompts=10`);
    const [S3, S5] = ['#decoding', '#hidden'];
    const title = (w) => text(page, `${w} > header h2`);
    const presets = (w) => page.$$eval(`${w} .presets button`, (bs) => bs.map((b) => b.textContent));
    assert.equal(await title(S5), zh ? '读目标模型自身特征的草稿：Medusa、EAGLE 与 EAGLE-2' : 'Drafts on the target’s own features: Medusa, EAGLE and EAGLE-2');
    assert.notEqual(await title(S5), await title(S3));
    assert.match(await text(page, `${S5} .intro`), zh ? /在这台设备上划不划算/ : /whether it pays on this device/);
    const own = await presets(S5);
    assert.equal(own.length, 6, own.join(' | '));
    assert.ok(own.every((l) => /^§(5|5\.1|5\.2|4\.7) · /.test(l)), own.join(' | '));
    assert.ok((await presets(S3)).length > own.length, '§3’s widget keeps its own presets');
    if (!zh) {
      // Run: τ, c and the speedup it asks about, timed against the target alone, with its IQR over the prompts.
      await page.click(`${S5} .dec-go`);
      await page.waitForFunction((s) => Number(document.querySelector(s).dataset.decoded || 0) >= 1, S5, { timeout: 180_000 });
      const rows = await rowsOf(page, `${S5} table.dec-hidden`);
      assert.ok(rows.includes('identical to the target’s greedy output 10/10'), rows.join(' | '));
      assert.ok(rows.some((r) => /^wall clock: the target alone’s time per token over this run’s \d+\.\d\d× \(IQR \d+\.\d\d\)$/.test(r)), rows.join(' | '));
      assert.match(await text(page, `${S5} .dec-during`), /No other job of this page ran during this measurement|ran during this measurement/);
    }
    // A preset of §5 sets §5's widget alone.
    await page.click(`${S5} .presets button[data-preset="1"]`);
    assert.equal(await page.$eval(`${S5} [data-key="method"]`, (e) => e.value), 'medusa');
    assert.equal(await page.$eval(`${S3} [data-key="experiment"]`, (e) => e.value), 'greedy');
    assert.deepEqual(errors, []);
    await page.close();
  }
});
