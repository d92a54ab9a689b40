// What every widget shares: controls built from a declarative list, state from defaults ←
// markup attributes ← URL parameters (each value read and checked in values.js), an alert area
// for bad input, drawing, and sharing. The HTML helpers the widgets draw with are in html.js; the run bar of a widget whose experiments run in
// a worker is in runbar.js; the export menu is in export.js.
//
// A widget module exports { name, title, intro, controls, render(state, ui) } where render calls
// the engine and returns an array of HTML chunks (SVG included). Only chunks whose text changed
// are replaced, so moving one slider re-parses only the pictures it changed. Errors thrown by
// render are shown in the widget's role="alert" element; the last good drawing stays, and the
// next good render clears the alert.

import { call, PanicError } from './engine.js';
import { inLang, lang, t, tr } from './i18n.js';
import { listExports } from './export.js';
import { clip, escapeHtml } from './html.js';
import { clampNumber, parseValue, capText, cutNote } from './values.js';
import { urlPrefix, shareUrl, syncUrl } from './url.js';
import { figureRoom, inNextFrame, markScrollers } from './frame.js';

const params = new URLSearchParams(location.search);

/**
 * The initial state: defaults ← `source(key)` (a custom element's attributes), or defaults ←
 * data-* attributes ← URL parameters (a data-widget section, embed.html).
 */
function readInitial(root, widget, source) {
  const state = {};
  const notes = [];
  const prefix = urlPrefix(root, widget);
  for (const c of widget.controls) {
    let raw;
    if (source) {
      raw = source(c.key);
    } else {
      raw = root.dataset[c.key];
      const fromUrl = params.get(prefix + c.key) ?? (prefix ? null : params.get(c.key));
      if (fromUrl !== null) raw = fromUrl;
    }
    if (raw === undefined || raw === null) {
      state[c.key] = c.value;
    } else {
      const r = parseValue(c, raw);
      state[c.key] = r.value;
      if (r.error) notes.push(r.error);
    }
  }
  return { state, notes };
}

/** Control names from a `hide` list ("c, gamma"): { keys, notes } (unknown names get a note). */
export function parseHide(widget, text) {
  const keys = new Set();
  const notes = [];
  for (const name of String(text ?? '').split(',').map((x) => x.trim()).filter(Boolean)) {
    if (widget.controls.some((c) => c.key === name)) keys.add(name);
    else {
      const [shown, keys] = [clip(name), widget.controls.map((c) => c.key).join(', ')];
      notes.push(tr(`hide: “${shown}” is not a control of this widget (${keys})`, `hide：“${shown}” 不是这个组件的控件（${keys}）`));
    }
  }
  return { keys, notes };
}

function controlHtml(c, value, id) {
  const label = `<label for="${id}">${t(c, 'label')}</label>`;
  if (c.type === 'select') {
    const opts = t(c, 'options').map(([v, text]) => `<option value="${v}"${v === value ? ' selected' : ''}>${text}</option>`).join('');
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

let counter = 0;

/**
 * Mounts `widget` into `root` and draws it. Options (a custom element passes them; a section reads
 * its data-* attributes and the URL instead):
 *   source(key)  the raw initial value of each control, or null for its default
 *   hide         control names to hide ("c,gamma"); the URL's `hide` otherwise
 *   compact      no title bar or introduction
 *   lang         the widget's language ('en' or 'zh'); the page's otherwise
 *   autorun      false: a widget whose experiments run in a worker waits for a click before its
 *                first run (runbar.js); the URL's `autorun=0` otherwise, else true
 * Returns the widget's `ui`; `ui.apply(key, raw)` changes a control from outside (validated like
 * a URL value) and redraws, `ui.hide(text)` and `ui.compact(on)` change the chrome.
 *
 * Three parts: readControls (the state and which controls show), buildTemplate (the HTML
 * skeleton), wire (the ui object, drawing, and the events: uiOf, drawer, listen).
 */
export function mount(root, widget, options = {}) {
  const [done] = mountAll([{ root, widget, options }]);
  if (done.error) throw done.error;
  return done.ui;
}

/**
 * Mounts several widgets at once (the course page's), each as `mount` would, with one layout for
 * all: every skeleton is written first, then every view's width is read, then every widget draws
 * for its width. Returns { ui } or { error } for each, in order: one that cannot be built does
 * not stop the others.
 */
export function mountAll(entries) {
  const built = entries.map(({ root, widget, options = {} }) => {
    const language = options.lang ?? lang();
    // A section of the course page that costs every reader a minute of CPU says data-autorun="0".
    const autorun = options.autorun ?? (options.source ? true : root.dataset.autorun !== '0' && params.get('autorun') !== '0');
    try {
      return inLang(language, () => {
        const controls = readControls(root, widget, options);
        const { alertBox, view } = buildTemplate(root, widget, controls);
        return { root, widget, controls, alertBox, view, language, autorun };
      });
    } catch (error) {
      return { error };
    }
  });
  const rooms = built.map((b) => (b.error ? undefined : figureRoom(b.view)));
  return built.map((b, i) => {
    if (b.error) return b;
    try {
      return { ui: inLang(b.language, () => wire(b.root, b.widget, b.controls, b.alertBox, b.view, { language: b.language, autorun: b.autorun, room: rooms[i] })) };
    } catch (error) {
      return { error };
    }
  });
}

/**
 * The controls' side: each control's initial value, validated (with a note for each bad one),
 * whether the controls are hidden altogether, which ones are hidden by name, and compact mode.
 */
function readControls(root, widget, { source = null, hide = null, compact = false }) {
  const { state, notes } = readInitial(root, widget, source);
  const fromPage = source === null;
  const hidden = fromPage && (root.dataset.controls === 'hidden' || params.get('controls') === '0' || params.get(`${urlPrefix(root, widget)}controls`) === '0');
  let hiddenKeys = new Set();
  const hideList = hide ?? (fromPage ? root.dataset.hide ?? params.get(`${urlPrefix(root, widget)}hide`) : null);
  if (hideList) {
    const h = parseHide(widget, hideList);
    hiddenKeys = h.keys;
    notes.push(...h.notes);
  }
  if (fromPage && (root.dataset.compact !== undefined || params.get('compact') === '1')) compact = true;
  return { state, notes, hidden, hiddenKeys, compact };
}

/**
 * The widget's HTML skeleton in `root`: title bar (Export, Share), introduction, the controls'
 * form, the lecture presets, the alert and the view. Returns the alert and view elements.
 */
function buildTemplate(root, widget, { state, hidden, compact }) {
  counter += 1;
  const ids = widget.controls.map((c) => `w${counter}-${c.key}`);
  root.classList.add('widget');
  root.classList.toggle('compact', compact);
  root.innerHTML = `
    <header><h2>${t(widget, 'title')}</h2><span class="tools"><details class="export"><summary>${tr('Export', '导出')}</summary><ul class="export-list"></ul></details>
      <button type="button" class="share" title="${tr('Copy a link to this state', '复制指向当前状态的链接')}">${tr('Share', '分享')}</button></span></header>
    <p class="intro">${t(widget, 'intro')}</p>
    <form class="controls"${hidden ? ' hidden' : ''}>
      ${widget.controls.map((c, i) => `<div class="control control-${c.type}">${controlHtml(c, state[c.key], ids[i])}</div>`).join('')}
    </form>
    ${widget.presets?.length ? `<div class="presets" role="group" aria-label="${tr('Presets from the lecture', '课上的例子')}"${hidden ? ' hidden' : ''}>
      <span>${tr('Lecture presets:', '课上的例子：')}</span> ${widget.presets.map((p, i) => `<button type="button" data-preset="${i}" title="${escapeHtml(t(p, 'note') ?? '')}">${escapeHtml(t(p, 'label'))}</button>`).join(' ')}</div>` : ''}
    <div class="alert" role="alert" aria-live="polite"></div>
    <p class="share-link" aria-live="polite" hidden></p>
    <div class="view"></div>`;
  return { alertBox: root.querySelector('[role="alert"]'), view: root.querySelector('.view') };
}

/**
 * The wiring: the `ui` object render and the outside use (uiOf), draw() (drawer: controls shown,
 * the view updated, alerts), and the events (listen: input, presets, Export, Share, an engine
 * restart, a new width). Draws once. Everything the widget runs, now or later, runs in its
 * language (`speak`; see i18n.js). The parts share one record of the widget's mutable state, `w`.
 */
function wire(root, widget, { state, notes, hiddenKeys }, alertBox, view, { language, autorun, room }) {
  const w = {
    root, widget, state, alertBox, view, language, hiddenKeys,
    stateNotes: [], // notes about the state drawn last, kept until the next change
    initialNotes: notes, // the notes on the values read at load, shown with the first drawing
    // The room for a figure (the view's width less a figure's border): the core draws figures for
    // it (`figure_width`) rather than the page scaling them down, so that their labels keep their
    // size on a phone. Measured at mount and whenever the view is resized, in the frame's reading
    // pass (frame.js): never read here, where the page may have just been written.
    width: room,
    speak: (fn) => (...args) => inLang(language, () => fn(...args)),
  };
  w.ui = uiOf(w, autorun);
  w.draw = drawer(w);
  // A value read at load that the widget could not use (a note says which it uses instead): the
  // URL then says what is drawn, not what was refused (a reload or a Share keeps the good value).
  if (notes.length && root.dataset.params !== 'none') syncUrl(widget, state, root);
  listen(w);
  w.draw();
  return w.ui;
}

/** The `ui` object a widget's render and the outside (an element's attributes) use. */
function uiOf(w, autorun) {
  const { root, widget, state, alertBox, speak } = w;
  const figureWidth = () => w.width;
  const ui = {
    root,
    state,
    lang: w.language,
    /** Whether jobs in a worker start by themselves; else runbar.js waits for a click. */
    autorun,
    /** Whether the widget waits for its button even when autorun (`asks` in its module). */
    asks: Boolean(widget.asks),
    /** What one run of this state will cost, in words, for the Run button (widgets with a `cost`). */
    cost: () => widget.cost?.(state),
    /** `fn`, run in the widget's language whenever it is called: a job's callback, a click. */
    inLang: speak,
    set(key, value) {
      state[key] = value;
      const input = root.querySelector(`[data-key="${key}"]`);
      if (input) input.value = value;
      const out = root.querySelector(`output[data-for="${key}"]`);
      const c = widget.controls.find((x) => x.key === key);
      if (out && c) out.textContent = format(c, value);
    },
    call: speak((name, p) => call(name, p && typeof p === 'object' ? { figure_width: figureWidth(), ...p } : p)),
    figureWidth,
    redraw: () => w.draw(),
    /** Sets control `key` from a raw outside value (an attribute), validated, and redraws. */
    apply: speak((key, raw) => {
      const c = widget.controls.find((x) => x.key === key);
      if (!c) return;
      const r = raw === null || raw === undefined ? { value: c.value } : parseValue(c, raw);
      ui.set(key, r.value);
      w.draw();
      if (r.error) ui.alert(r.error);
    }),
    hide: speak((text) => {
      const h = parseHide(widget, text);
      w.hiddenKeys = h.keys;
      w.draw();
      if (h.notes.length) ui.alert(h.notes.join(' · '));
    }),
    compact(on) {
      root.classList.toggle('compact', Boolean(on));
    },
    /** Shows a message from work that finished after the drawing (a worker job). */
    alert(message) {
      // A note about this state (a text cut as it was typed) stays beside a later error of it.
      const text = [...w.stateNotes, message].filter(Boolean).join(' · ');
      alertBox.textContent = text;
      alertBox.classList.toggle('shown', Boolean(text));
      root.dataset.state = message ? 'error' : 'ok';
    },
    /** Adds a note to the alert (a value that was changed, say) without marking an error. */
    note(message) {
      w.stateNotes.push(message);
      const shown = alertBox.classList.contains('shown') ? alertBox.textContent : '';
      alertBox.textContent = [shown, message].filter(Boolean).join(' · ');
      alertBox.classList.add('shown');
    },
  };
  return ui;
}

/**
 * draw(): the controls shown (and choices greyed out) for this state, the view updated, the
 * alert. After a panic the engine restarts and every widget redraws; `keepAlert` leaves the
 * panic's message in view until the person's next change.
 */
function drawer(w) {
  const { root, widget, state, alertBox, view } = w;
  return w.speak(({ keepAlert = false } = {}) => {
    // A draw that comes late (a resize seen in the next frame) to a widget whose view has left
    // its root (an element given another kind meanwhile) has nothing to draw.
    if (!root.contains(view)) return;
    root.querySelector('.share-link').hidden = true; // a link to the state before this change
    const boxes = root.querySelectorAll('.control');
    widget.controls.forEach((c, i) => {
      boxes[i].hidden = w.hiddenKeys.has(c.key) || (c.showIf ? !c.showIf(state) : false);
      // Choices that the other controls make meaningless are greyed out (a URL may still ask for
      // one: the core then says why).
      if (c.optionOff) for (const o of boxes[i].querySelectorAll('option')) o.disabled = c.optionOff(o.value, state);
    });
    try {
      update(view, widget.render(state, w.ui));
      if (!keepAlert) {
        // The notes on the values read at load (a text cut from a URL) are about this state: a
        // worker's later error of it is shown beside them, not instead.
        w.stateNotes = w.initialNotes;
        alertBox.textContent = w.stateNotes.join(' · ');
        alertBox.classList.toggle('shown', w.stateNotes.length > 0);
        w.initialNotes = [];
      }
      root.dataset.state = 'ok';
      widget.after?.(state, w.ui, view);
    } catch (e) {
      const msg = e instanceof PanicError ? e.message : e?.message ?? String(e);
      alertBox.textContent = msg;
      alertBox.classList.add('shown');
      root.dataset.state = 'error';
    }
    root.dataset.renders = String(Number(root.dataset.renders || 0) + 1);
  });
}

/** The events: a control typed, a preset, Export, Share, an engine restart, a new width. */
function listen(w) {
  const { root, widget, state, alertBox, view, language, speak, ui } = w;
  const form = root.querySelector('form');
  form.addEventListener('submit', (ev) => ev.preventDefault());
  form.addEventListener('input', speak((ev) => {
    const key = ev.target.dataset.key;
    const c = widget.controls.find((x) => x.key === key);
    if (!c) return;
    let v = ev.target.value;
    let cut = '';
    if (c.type === 'text') {
      // Cut as it is typed (or pasted), so that what the field shows is what the URL keeps.
      const r = capText(v, c.cap, c.list);
      if (r.text !== v) ev.target.value = r.text;
      if (r.cut) cut = cutNote(c, r.text, r.atValue);
      v = r.text;
    }
    if (c.type === 'range' || c.type === 'number') {
      const r = clampNumber(c, v, state[key]);
      if (r.error) {
        alertBox.textContent = r.error;
        alertBox.classList.add('shown');
        root.dataset.state = 'error';
        return;
      }
      v = r.value;
    }
    ui.set(key, v);
    w.draw();
    if (cut) ui.note(cut);
    if (root.dataset.params !== 'none') syncUrl(widget, state, root);
  }));
  // A preset is a whole state: the controls it names take its values, every other one returns to
  // its default (a ×16 width left by one preset must not make the next one's run take minutes).
  // Redraws once.
  root.querySelector('.presets')?.addEventListener('click', (ev) => {
    const b = ev.target.closest('button[data-preset]');
    if (!b) return;
    const { values } = widget.presets[Number(b.dataset.preset)];
    for (const c of widget.controls) ui.set(c.key, Object.hasOwn(values, c.key) ? values[c.key] : c.value);
    w.draw();
    if (root.dataset.params !== 'none') syncUrl(widget, state, root);
  });
  const exportBox = root.querySelector('details.export');
  exportBox.addEventListener('toggle', speak(() => { if (exportBox.open) listExports(widget, view, exportBox.querySelector('.export-list')); }));
  root.querySelector('.share').addEventListener('click', async () => {
    const url = shareUrl(widget, state, {
      hiddenKeys: w.hiddenKeys, language, autorun: ui.autorun, element: root.dataset.params === 'none',
      compact: root.classList.contains('compact'), controls: !root.querySelector('form.controls').hidden,
    });
    try { await navigator.clipboard.writeText(url); } catch (_) { /* no clipboard: show it */ }
    // Beside the alert, not in it: a link is news, not an error.
    const box = root.querySelector('.share-link');
    const a = document.createElement('a');
    a.href = url;
    a.textContent = url;
    box.replaceChildren(inLang(language, () => tr('Link to this state: ', '当前状态的链接：')), a);
    box.hidden = false;
  });
  // A widget out of the page (an element taken out of someone's notes, or drawn afresh in
  // another language or kind) stays as it is: drawing it would start its jobs again.
  window.addEventListener('specdec:restarted', () => { if (view.isConnected) w.draw({ keepAlert: true }); });
  // A new width (a phone turned, a window resized) redraws the figures for it; not a widget whose
  // drawing starts a model job (`after`), which would run it again: its next run takes the width.
  // Measured in the next frame with every other widget's (frame.js), then drawn.
  const sized = {};
  new ResizeObserver(() => inNextFrame(sized, () => figureRoom(view), (width) => {
    const changed = width !== w.width;
    w.width = width;
    if (changed && !widget.after) w.draw({ keepAlert: true });
    markScrollers(view, speak);
  })).observe(view);
  // Whatever the view shows, drawn here or by a job's result later, has its scroll boxes marked.
  new MutationObserver(() => markScrollers(view, speak)).observe(view, { childList: true, subtree: true });
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
