// What every widget shares: controls built from a declarative list, state from defaults ←
// markup attributes ← URL parameters, an alert area for bad input, drawing, and sharing.
//
// A widget module exports { name, title, intro, controls, render(state, ui) } where render calls
// the engine and returns an array of HTML chunks (SVG included). Only chunks whose text changed
// are replaced, so moving one slider re-parses only the pictures it changed. Errors thrown by
// render are shown in the widget's role="alert" element; the last good drawing stays, and the
// next good render clears the alert.

import { call, PanicError, runJob, CancelledError } from './engine.js';

const params = new URLSearchParams(location.search);

function clampNumber(c, raw) {
  const v = Number(raw);
  if (raw === '' || raw === null || !Number.isFinite(v)) {
    return { error: `${c.label}: “${raw}” is not a number; using ${c.value}`, value: c.value };
  }
  if (v < c.min || v > c.max) {
    const to = Math.min(c.max, Math.max(c.min, v));
    return { error: `${c.label}: ${v} is outside ${c.min}…${c.max}; using ${to}`, value: to };
  }
  // Off the control's step (gamma=2.5): snap to the nearest step, as the control itself would.
  if (c.step && c.step !== 'any') {
    const decimals = (String(c.step).split('.')[1] ?? '').length;
    const snapped = Math.min(c.max, Number((c.min + Math.round((v - c.min) / c.step) * c.step).toFixed(decimals)));
    if (Math.abs(snapped - v) > 1e-9 * Math.max(1, Math.abs(v))) {
      return { error: `${c.label}: ${v} is not on the control’s steps of ${c.step}; using ${snapped}`, value: snapped };
    }
  }
  return { value: v };
}

function readInitial(root, widget) {
  const state = {};
  const notes = [];
  const prefix = root.dataset.params === 'plain' ? '' : `${widget.name}.`;
  for (const c of widget.controls) {
    let raw = root.dataset[c.key];
    const fromUrl = params.get(prefix + c.key) ?? (prefix ? null : params.get(c.key));
    if (fromUrl !== null) raw = fromUrl;
    if (raw === undefined || raw === null) {
      state[c.key] = c.value;
    } else if (c.type === 'range' || c.type === 'number') {
      const r = clampNumber(c, raw);
      state[c.key] = r.value;
      if (r.error) notes.push(r.error);
    } else if (c.type === 'select') {
      const ok = c.options.some(([v]) => v === raw);
      state[c.key] = ok ? raw : c.value;
      if (!ok) notes.push(`${c.label}: “${String(raw).slice(0, 40)}” is not one of the choices; using ${c.value}`);
    } else {
      state[c.key] = String(raw).slice(0, 500);
    }
  }
  return { state, notes };
}

function controlHtml(c, value, id) {
  const label = `<label for="${id}">${c.label}</label>`;
  if (c.type === 'select') {
    const opts = c.options.map(([v, t]) => `<option value="${v}"${v === value ? ' selected' : ''}>${t}</option>`).join('');
    return `${label}<select id="${id}" data-key="${c.key}">${opts}</select>`;
  }
  if (c.type === 'text') {
    return `${label}<input id="${id}" data-key="${c.key}" type="text" spellcheck="false" value="${escapeHtml(String(value))}">`;
  }
  const out = `<output data-for="${c.key}">${format(c, value)}</output>`;
  return `${label}<input id="${id}" data-key="${c.key}" type="${c.type}" min="${c.min}" max="${c.max}" step="${c.step}" value="${value}">${c.type === 'range' ? out : ''}`;
}

function format(c, v) {
  return c.format ? c.format(v) : String(v);
}

export function escapeHtml(s) {
  return s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]);
}

let counter = 0;

/** Mounts `widget` into `root`; resolves after the first drawing (good or an alert). */
export function mount(root, widget) {
  const { state, notes } = readInitial(root, widget);
  const hidden = root.dataset.controls === 'hidden' || params.get('controls') === '0' || params.get(`${widget.name}.controls`) === '0';
  counter += 1;
  const ids = widget.controls.map((c) => `w${counter}-${c.key}`);
  root.classList.add('widget');
  root.innerHTML = `
    <header><h2>${widget.title}</h2><button type="button" class="share" title="Copy a link to this state">Share</button></header>
    <p class="intro">${widget.intro}</p>
    <form class="controls"${hidden ? ' hidden' : ''}>
      ${widget.controls.map((c, i) => `<div class="control control-${c.type}">${controlHtml(c, state[c.key], ids[i])}</div>`).join('')}
    </form>
    <div class="alert" role="alert" aria-live="polite"></div>
    <div class="view"></div>`;
  const alertBox = root.querySelector('[role="alert"]');
  const view = root.querySelector('.view');
  const ui = {
    root,
    state,
    set(key, value) {
      state[key] = value;
      const input = root.querySelector(`[data-key="${key}"]`);
      if (input) input.value = value;
      const out = root.querySelector(`output[data-for="${key}"]`);
      const c = widget.controls.find((x) => x.key === key);
      if (out && c) out.textContent = format(c, value);
    },
    call,
    redraw: () => draw(),
    /** Shows a message from work that finished after the drawing (a worker job). */
    alert(message) {
      alertBox.textContent = message;
      alertBox.classList.toggle('shown', Boolean(message));
      root.dataset.state = message ? 'error' : 'ok';
    },
  };
  let initialNotes = notes;

  // After a panic the engine restarts and every widget redraws; `keepAlert` leaves the panic's
  // message in view until the person's next change.
  function draw({ keepAlert = false } = {}) {
    widget.controls.forEach((c, i) => {
      if (c.showIf) root.querySelectorAll('.control')[i].hidden = !c.showIf(state);
    });
    try {
      update(view, widget.render(state, ui));
      if (!keepAlert) {
        alertBox.textContent = initialNotes.join(' · ');
        alertBox.classList.toggle('shown', initialNotes.length > 0);
        initialNotes = [];
      }
      root.dataset.state = 'ok';
      widget.after?.(state, ui, view);
    } catch (e) {
      const msg = e instanceof PanicError ? e.message : e?.message ?? String(e);
      alertBox.textContent = msg;
      alertBox.classList.add('shown');
      root.dataset.state = 'error';
    }
    root.dataset.renders = String(Number(root.dataset.renders || 0) + 1);
  }

  root.querySelector('form').addEventListener('submit', (ev) => ev.preventDefault());
  root.querySelector('form').addEventListener('input', (ev) => {
    const key = ev.target.dataset.key;
    const c = widget.controls.find((x) => x.key === key);
    if (!c) return;
    let v = ev.target.value;
    if (c.type === 'range' || c.type === 'number') {
      const r = clampNumber(c, v);
      if (r.error) {
        alertBox.textContent = r.error;
        alertBox.classList.add('shown');
        root.dataset.state = 'error';
        return;
      }
      v = r.value;
    }
    ui.set(key, v);
    draw();
    if (root.dataset.params !== 'none') syncUrl(widget, state, root);
  });
  root.querySelector('.share').addEventListener('click', async () => {
    const url = shareUrl(widget, state);
    try { await navigator.clipboard.writeText(url); } catch (_) { /* no clipboard: show it */ }
    alertBox.textContent = `Link to this state: ${url}`;
    alertBox.classList.add('shown');
  });
  window.addEventListener('specdec:restarted', () => draw({ keepAlert: true }));
  draw();
  return ui;
}

const shown = new WeakMap(); // part element → the HTML it shows

/**
 * Replaces the children of `view` whose HTML chunk changed; adds or removes the rest. A chunk
 * that is an array is a stack of layers drawn on top of each other, each diffed on its own.
 */
function update(view, chunks) {
  const parts = [...view.children];
  chunks.forEach((chunk, i) => {
    const layered = Array.isArray(chunk);
    let part = parts[i];
    if (!part || part.classList.contains('stack') !== layered) {
      const fresh = document.createElement('div');
      fresh.className = layered ? 'part stack' : 'part';
      if (part) part.replaceWith(fresh); else view.appendChild(fresh);
      part = fresh;
    }
    if (layered) {
      update(part, chunk);
    } else if (shown.get(part) !== chunk) {
      part.innerHTML = chunk;
      shown.set(part, chunk);
    }
  });
  parts.slice(chunks.length).forEach((p) => p.remove());
}

function shareUrl(widget, state) {
  const u = new URL('embed.html', location.href);
  u.search = '';
  u.searchParams.set('widget', widget.name);
  for (const c of widget.controls) u.searchParams.set(c.key, String(state[c.key]));
  return u.toString();
}

// The URL follows the state at most every URL_EVERY_MS (the first change at once, the last one
// always): browsers throttle history.replaceState and drop updates past ~100 per 10 s, which a
// dragged slider exceeds.
const URL_EVERY_MS = 200;
const urlPending = new Map(); // root → { widget, state }
let urlTimer = null;
let urlLast = -Infinity;

function syncUrl(widget, state, root) {
  urlPending.set(root, { widget, state });
  const wait = urlLast + URL_EVERY_MS - performance.now();
  if (wait <= 0) flushUrl();
  else urlTimer ??= setTimeout(flushUrl, wait);
}

function flushUrl() {
  urlTimer = null;
  urlLast = performance.now();
  const u = new URL(location.href);
  for (const [root, { widget, state }] of urlPending) {
    const prefix = root.dataset.params === 'plain' ? '' : `${widget.name}.`;
    for (const c of widget.controls) u.searchParams.set(prefix + c.key, String(state[c.key]));
  }
  urlPending.clear();
  history.replaceState(null, '', u);
}

/** A small HTML table from rows of cells; the first row is the header. */
export function table(rows, cls = '') {
  const [head, ...body] = rows;
  const th = head.map((h) => `<th>${h}</th>`).join('');
  const tb = body.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('');
  return `<table class="${cls}"><thead><tr>${th}</tr></thead><tbody>${tb}</tbody></table>`;
}

export function fmt(x, digits = 3) {
  if (x === null || x === undefined) return '∞';
  if (x !== 0 && (Math.abs(x) < 1e-3 || Math.abs(x) >= 1e6)) return x.toExponential(2);
  return x.toFixed(digits);
}

/** The run bar of a widget whose experiments run in a worker: status, progress, Cancel. */
export function runBar(cls) {
  return `<div class="dec-run"><p class="numbers ${cls}-status" aria-live="polite">Waiting…</p>
    <progress class="${cls}-progress" max="1" value="0"></progress> <button type="button" class="${cls}-cancel">Cancel</button></div>`;
}

const runs = new WeakMap(); // widget root → { gen, timer, job }

/**
 * Runs export `name` with `params` in the worker of `channel`, 250 ms after the last change, for
 * the widget `ui` whose view holds runBar(cls) and a `.${cls}-note`. A newer run supersedes the
 * older one: a stale answer (or its cancellation) never touches the newer view. `done(v)` draws
 * a result; errors go to the widget's alert. Sets data-decoded / data-cancelled counters.
 */
export function runInWorker(ui, view, cls, name, params, channel, done) {
  const p = runs.get(ui.root) ?? { gen: 0 };
  runs.set(ui.root, p);
  clearTimeout(p.timer);
  const gen = ++p.gen;
  const current = () => p.gen === gen;
  p.job?.cancel();
  const q = (what) => view.querySelector(`.${cls}-${what}`);
  const [status, bar, cancel, note] = ['status', 'progress', 'cancel', 'note'].map(q);
  const busy = (on) => { cancel.hidden = !on; bar.hidden = !on; ui.root.setAttribute('aria-busy', String(on)); };
  const count = (key) => { ui.root.dataset[key] = String(Number(ui.root.dataset[key] || 0) + 1); };
  busy(true);
  bar.value = 0; // a new run: the previous run's progress and Cancel do not apply to it
  cancel.onclick = null;
  status.textContent = 'Starting…';
  p.timer = setTimeout(() => {
    const job = runJob(name, params, (st) => {
      if (!current()) return;
      status.textContent = `Running: ${st}…`;
      const m = /^(\d+) of (\d+)/.exec(st);
      if (m) bar.value = Number(m[1]) / Math.max(1, Number(m[2]));
    }, channel);
    p.job = job;
    cancel.onclick = () => job.cancel();
    job.promise.then((v) => {
      if (!current()) return;
      note.hidden = !v.note;
      note.textContent = v.note ?? '';
      status.textContent = done(v);
      count('decoded');
    }, (e) => {
      if (!current()) return;
      if (e instanceof CancelledError) {
        status.textContent = 'Cancelled.';
        count('cancelled');
        return;
      }
      status.textContent = 'The experiment could not run.';
      ui.alert(e.message);
    }).finally(() => { if (current()) busy(false); });
  }, 250);
}
