// Browser tests of the page's one job queue (www/engine.js, `schedule`): a job that measures time
// never shares the CPU with another job of the page. A measurement started while the decoding
// widget runs waits for it and says so; its report says that no other job of the page ran; a waiting job can
// be cancelled or superseded, and the jobs started during a measurement wait for it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, open } from './browser.mjs';
import { text, decoded, mfDone, setControl } from './helpers.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

const M = '[data-widget="measured"]';
const D = '[data-widget="decoding"]';
// A decoding run that lasts a while (200 prompts, sampled three times), so that Measure is
// clicked while it runs; the target ×1 measures quickly.
const BUSY = '?decoding.experiment=sample&decoding.prompts=200&decoding.repeats=3&measured.width=1';

/** Every text the measured widget's status shows from now on, in order (window.seenStatus). */
const watchStatus = (page) => page.$eval(`${M} .mr-status`, (el) => {
  window.seenStatus = [el.textContent];
  new MutationObserver(() => window.seenStatus.push(el.textContent)).observe(el, { childList: true, characterData: true, subtree: true });
});
// The decoding widget runs, and it alone: the first runs of the decoding and model-free widgets
// (started as the page wakes them, side by side) have finished, and a new seed starts the
// decoding run again. A measurement queued then waits for that run; queued while both first runs
// ran, it named whichever it met first (the model-free table, once in CI).
const decodingRuns = async (page) => {
  await mfDone(page, 1);
  await decoded(page, 1);
  await setControl(page, 'decoding', 'seed', 7);
  await page.waitForFunction((sel) => /Running|运行中/.test(document.querySelector(`${sel} .dec-status`).textContent), D);
};

test('queue: Measure clicked while the decoding widget runs waits for it (its status says so, at 390 px in Chinese), then reports that no other job of the page ran', async () => {
  const { page, errors } = await open(env, `${BUSY}&lang=zh`, { width: 390 });
  await decodingRuns(page);
  await watchStatus(page);
  await page.click(`${M} .mr-go`);
  await page.waitForFunction((sel) => Number(document.querySelector(sel).dataset.decoded || 0) >= 1, M, { timeout: 180_000 });
  const seen = await page.evaluate(() => window.seenStatus);
  const waited = seen.find((t) => /^排队中：等待.*“在 LikesWorld 上做推测解码：链、树与墙钟时间”.*结束…$/.test(t));
  assert.ok(waited, seen.join(' | '));
  // It ran only after it waited, and once it ran nothing else did.
  assert.ok(seen.indexOf(waited) < seen.findIndex((t) => /^运行中/.test(t)), seen.join(' | '));
  // Then how the matmuls ran (www/threads.js), in Chinese too.
  assert.match(await text(page, `${M} .mr-during`), /^测量期间本页没有别的任务在运行。矩阵乘法用了 \d+ 个线程.*；FMA (开启|关闭)（内核：.+）。$/);
  assert.ok(await page.$eval(`${M} .mr-during`, (el) => !el.hidden && el.getBoundingClientRect().right <= 390));
  assert.deepEqual(errors, []);
  await page.close();
});

test('queue: a waiting measurement can be cancelled, and then never runs', async () => {
  const { page, errors } = await open(env, BUSY);
  await decodingRuns(page);
  await page.click(`${M} .mr-go`);
  await page.waitForFunction((sel) => /^Queued: waiting for .*“Speculative decoding on LikesWorld/.test(document.querySelector(`${sel} .mr-status`).textContent), M);
  await page.click(`${M} .mr-cancel`);
  assert.equal(await text(page, `${M} .mr-status`), 'Cancelled.');
  assert.equal(await page.$eval(M, (el) => el.dataset.cancelled), '1');
  // The jobs it waited for end, and the queue empties; it stays cancelled.
  await page.waitForFunction(() => { const h = window.specdec.health(); return h.running === 0 && h.waiting === 0; }, null, { timeout: 180_000 });
  assert.equal(await text(page, `${M} .mr-status`), 'Cancelled.');
  assert.equal(await page.$(`${M} table.mr-rows`), null);
  assert.deepEqual(errors, []);
  await page.close();
});

test('queue: the decoding widget’s wall-clock report says that no other job of the page ran while it was timed, and why its matmuls ran on one thread; an untimed report says nothing of it', async () => {
  const { page, errors } = await open(env, '?decoding.experiment=speedup&decoding.prompts=10');
  await decoded(page, 1);
  assert.match(await text(page, `${D} .dec-result`), /wall clock/);
  // The trained target (×1): its matrices and the drafts' are too small to split, and it says so.
  assert.match(await text(page, `${D} .dec-during`), /^No other job of this page ran during this measurement\. The matmuls ran on 1 thread: /);
  await setControl(page, 'decoding', 'experiment', 'greedy');
  await decoded(page, 2);
  assert.equal(await page.$eval(`${D} .dec-during`, (el) => el.hidden), true);
  assert.deepEqual(errors, []);
  await page.close();
});

test('queue: a newer job on a channel supersedes one still waiting; a timed job waits for the jobs running before it, and jobs started during it wait for it', async () => {
  const { page, errors } = await open(env, '');
  // The page's own jobs (decoding, model-free, LikesWorld's latencies) first, so that the jobs
  // below wait only for each other.
  await page.waitForFunction(() => { const h = window.specdec.health(); return h.running === 0 && h.waiting === 0; }, null, { timeout: 180_000 });
  const r = await page.evaluate(async () => {
    const { runJob } = await import('./engine.js');
    const order = [];
    const waits = { b: [], d: [] };
    const a = runJob('likesworld_decode', { experiment: 'greedy', prompts: 100 }, null, 'queue-a', 'job A');
    a.promise.then(() => order.push('A done'));
    const b = runJob('roofline_measure', { width: 1 }, (st) => { if (st.phase === 'waiting') waits.b.push(String(st)); }, 'queue-b', 'job B');
    const outcome = b.promise.then(() => 'ran', (e) => `${e.constructor.name}: ${e.message}`);
    let d = null;
    const c = runJob('roofline_measure', { width: 1 }, (st) => {
      if (st.phase !== 'started' || d) return;
      order.push('C started');
      // An untimed job started while C measures waits for it.
      d = runJob('likesworld_decode', { experiment: 'greedy', prompts: 3 }, (s) => {
        if (s.phase === 'waiting') waits.d.push(String(s));
        if (s.phase === 'started') order.push('D started');
      }, 'queue-d', 'job D');
      d.promise.then(() => order.push('D done'));
    }, 'queue-b', 'job C');
    const measured = await c.promise;
    order.push('C done');
    await d.promise;
    return { b: await outcome, waits, order, during: measured.during };
  });
  assert.equal(r.b, 'CancelledError: superseded');
  assert.ok(r.waits.b.some((t) => /^waiting for .*“job A”/.test(t)), JSON.stringify(r.waits));
  assert.ok(r.order.indexOf('A done') < r.order.indexOf('C started'), r.order.join(', '));
  assert.deepEqual(r.waits.d, ['waiting for “job C” to finish']);
  assert.ok(r.order.indexOf('C done') < r.order.indexOf('D started'), r.order.join(', '));
  assert.deepEqual(r.during, []);
  assert.deepEqual(errors, []);
  await page.close();
});

test('queue: engine calls of the page that share the CPU with a measurement are named in its report, with their time', async () => {
  const { page, errors } = await open(env, '');
  const r = await page.evaluate(async () => {
    const { runJob, call } = await import('./engine.js');
    const { duringText } = await import('./runbar.js');
    let busy = true;
    // The main thread calls the engine back to back while the target is timed.
    const draw = () => {
      if (!busy) return;
      const end = performance.now() + 20;
      while (performance.now() < end) call('presets');
      setTimeout(draw, 0);
    };
    const job = runJob('roofline_measure', { width: 1 }, (st) => { if (st.phase === 'started') draw(); }, 'queue-busy', 'busy');
    const v = await job.promise;
    busy = false;
    return { during: v.during, said: duringText(v.during) };
  });
  assert.equal(r.during.length, 1, JSON.stringify(r));
  assert.match(r.said, /^Warning: this page’s own drawing \(its main thread\) ran during this measurement for [\d.]+ (ms|s); the figures may be off/);
  assert.deepEqual(errors, []);
  await page.close();
});
