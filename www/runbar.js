// The run bar of a widget whose experiments run in a worker (status, progress, Run, Cancel, Retry)
// and the worker channels of each widget: runInWorker starts a job on the widget's own channel a
// moment after the last change, words its progress, and lets a newer run supersede an older one.
//
// A run costs seconds of CPU (a ×16 target, minutes). On the course page the reader came for
// the experiments, so they run by themselves; in someone's notes (a <specdec-widget> without
// `autorun`) a widget waits for its Run button, saying what a run will cost, so that opening
// the notes computes nothing. Once run, it runs again by itself after every change, as on the
// course page: the reader has asked for this widget's experiments.
// A run that measures time says in its report whether anything else ran meanwhile.
import { runJob, closeChannel, CancelledError, LoadError } from './engine.js';
import { tr } from './i18n.js';
import { executionSentence } from './threads.js';
import { duration } from './html.js';

/** The run bar of a widget whose experiments run in a worker: status, progress, Run, Cancel, Retry. */
export function runBar(cls) {
  return `<div class="dec-run"><p class="numbers ${cls}-status" aria-live="polite">${tr('Waiting…', '等待中…')}</p>
    <button type="button" class="${cls}-go" hidden>${tr('Run', '运行')}</button> <progress class="${cls}-progress" max="1" value="0"></progress> <button type="button" class="${cls}-cancel">${tr('Cancel', '取消')}</button>
    <button type="button" class="${cls}-retry" hidden>${tr('Retry', '重试')}</button></div>`;
}

// widget root → { gen, timer, job, instance, channels (the ones it opened), started (Run pressed) }
const runs = new WeakMap();
let instances = 0;
const runOf = (root) => {
  const p = runs.get(root) ?? { gen: 0, instance: ++instances, channels: new Set(), started: false };
  runs.set(root, p);
  return p;
};

/** A worker channel of this widget's own: two widgets of one kind on a page never cancel each other's jobs. */
export function channelOf(ui, kind) {
  const p = runOf(ui.root);
  const channel = `${kind}#${p.instance}`;
  p.channels.add(channel);
  return channel;
}

// widget root → what else stops with its runs (a widget's own worker: the training widget's)
const stoppers = new WeakMap();

/** Calls `f` when the widget at `root` is stopped (stopRuns), once. */
export function onStop(root, f) {
  stoppers.set(root, (stoppers.get(root) ?? new Set()).add(f));
}

/**
 * Stops everything the widget at `root` runs: a run about to start, its jobs, and its workers
 * (a <specdec-widget> taken out of the page). Drawing it again starts afresh.
 */
export function stopRuns(root) {
  for (const f of stoppers.get(root) ?? []) f();
  stoppers.delete(root);
  const p = runs.get(root);
  if (!p) return;
  clearTimeout(p.timer);
  p.gen += 1; // what a stopped job still reports is stale
  for (const channel of p.channels) closeChannel(channel);
  p.channels.clear();
}

/**
 * Whether the widget must wait for its button (`.${cls}-go` in `view`, Run or Measure) before
 * this run: an element without `autorun`, or a widget that always asks (`ui.asks`: the measured
 * roofline, which a busy device disturbs), that has not run yet. Wires the button to `run` (it
 * runs again, once shown); while waiting, shows it in `.${cls}-status` with what the run will
 * cost (`ui.cost()`). Pressing it once makes the widget run by itself after every change.
 */
export function waitsForRun(ui, view, cls, run) {
  const p = runOf(ui.root);
  const go = view.querySelector(`.${cls}-go`);
  go.onclick = ui.inLang(() => {
    p.started = true;
    delete ui.root.dataset.waiting;
    run();
  });
  if ((ui.autorun && !ui.asks) || p.started) return false;
  const [cost, button] = [ui.cost(), go.textContent];
  view.querySelector(`.${cls}-status`).textContent = tr(`Press ${button} to start.${cost ? ` A run ${cost}.` : ''}`,
    `按“${button}”开始。${cost ? `一次运行${cost}。` : ''}`);
  go.hidden = false;
  ui.root.dataset.waiting = 'run';
  return true;
}

/** The widget's title, as the page shows it: what its jobs are called to the jobs that wait for them. */
export const titleOf = (ui) => ui.root.querySelector('header h2')?.textContent ?? '';

/**
 * The line a timed report carries (`during`, from runJob): that no other job of the page ran
 * during the measurement (the page cannot see other programs), or which did and for how long;
 * then, for a job on the CPU, how its matmuls ran (`execution`, from the worker: threads, FMA,
 * and why one thread where there could be more).
 */
export function duringText(during, execution) {
  const how = execution ? tr(' ', '') + executionSentence(execution, tr) : '';
  // The page knows its own jobs only: other programs on the device may have run.
  if (!during.length) return tr('No other job of this page ran during this measurement.', '测量期间本页没有别的任务在运行。') + how;
  const others = during.map((d) => tr(`${d.what} ran during this measurement for ${duration(d.ms)}`, `测量期间${d.what}运行了 ${duration(d.ms)}`));
  return tr(`Warning: ${others.join(', ')}; the figures may be off (times too long, speeds too low).`,
    `警告：${others.join('，')}；这些数字可能不准（时间偏长、速度偏低）。`) + how;
}

/**
 * Runs export `name` with `params` in the worker of `channel`, 250 ms after the last change, for
 * the widget `ui` whose view holds runBar(cls) and a `.${cls}-note` (and, where a run
 * measures time, a `.${cls}-during` for duringText). Each widget on the page has
 * its own worker (the channel is per widget, not per kind), so two decoding widgets never cancel
 * each other; within one widget a newer run supersedes the older one: a stale answer (or its
 * cancellation) never touches the newer view. Progress arrives as numbers (JobStatus) and is
 * worded here. `done(v)` draws a result; errors go to the widget's alert, and a failure to load
 * the engine's worker offers Retry. Sets data-decoded / data-cancelled counters.
 */
export function runInWorker(ui, view, cls, name, params, channel, done) {
  // Called from a click too (Run, Retry, Measure): in the widget's language all the same.
  ui.inLang(startRun)(ui, view, cls, name, params, channel, done);
}

function startRun(ui, view, cls, name, params, channel, done) {
  const p = runOf(ui.root);
  clearTimeout(p.timer);
  const gen = ++p.gen;
  const current = () => p.gen === gen;
  p.job?.cancel();
  const q = (what) => view.querySelector(`.${cls}-${what}`);
  const [status, bar, cancel, note, retry, duringLine] = ['status', 'progress', 'cancel', 'note', 'retry', 'during'].map(q);
  // Everything the view shows under its run bar (each in a part of its own, widget.js): a run's
  // result, note, figures and timing line.
  const below = () => [...view.children].filter((el) => !el.matches('.dec-run') && !el.querySelector('.dec-run'));
  const busy = (on) => { cancel.hidden = !on; bar.hidden = !on; ui.root.setAttribute('aria-busy', String(on)); };
  if (waitsForRun(ui, view, cls, () => runInWorker(ui, view, cls, name, params, channel, done))) {
    busy(false);
    return;
  }
  const count = (key) => { ui.root.dataset[key] = String(Number(ui.root.dataset[key] || 0) + 1); };
  busy(true);
  bar.value = 0; // a new run: the previous run's progress and Cancel do not apply to it
  cancel.onclick = null;
  if (retry) retry.hidden = true;
  status.textContent = tr('Starting…', '正在启动…');
  // Whatever arrives later is worded in the widget's language (i18n.js).
  p.timer = setTimeout(ui.inLang(() => {
    const job = runJob(name, params, ui.inLang((st) => {
      if (!current()) return;
      status.textContent = `${st.phase === 'waiting' ? tr('Queued', '排队中') : tr('Running', '运行中')}${tr(': ', '：')}${st}…`;
      if (st.fraction !== null) bar.value = st.fraction;
    }), channelOf(ui, channel), titleOf(ui));
    p.job = job;
    cancel.onclick = () => job.cancel();
    job.promise.then(ui.inLang((v) => {
      if (!current()) return;
      note.hidden = !v.note;
      note.textContent = v.note ?? '';
      if (duringLine) {
        duringLine.hidden = !v.during;
        duringLine.textContent = v.during ? duringText(v.during, v.execution) : '';
      }
      status.textContent = done(v);
      for (const el of below()) el.classList.remove('stale');
      // An error this run bar showed belongs to an earlier run: this one succeeded.
      if (p.shownError) ui.alert('');
      p.shownError = false;
      count('decoded');
    }), ui.inLang((e) => {
      if (!current()) return;
      if (e instanceof CancelledError) {
        status.textContent = tr('Cancelled.', '已取消。');
        count('cancelled');
        return;
      }
      if (e instanceof LoadError && retry) {
        status.textContent = `${tr('The engine could not be loaded: ', '引擎无法加载：')}${e.message}`;
        retry.hidden = false;
        retry.onclick = () => runInWorker(ui, view, cls, name, params, channel, done);
        count('failed');
        return;
      }
      // What the widget still shows came from the last run that did (another input, a draft since
      // forgotten): greyed out, and said so.
      const last = !!q('result')?.textContent.trim();
      for (const el of below()) el.classList.toggle('stale', last);
      status.textContent = last ? tr('The experiment could not run; what is greyed out below is from the last run that did.', '实验无法运行；下面变灰的是上一次成功运行的结果。')
        : tr('The experiment could not run.', '实验无法运行。');
      ui.alert(e.message);
      p.shownError = true;
    })).finally(() => { if (current()) busy(false); });
  }), 250);
}
