// <specdec-widget>: one widget of the playground as one HTML element, for an instructor's notes.
//
//   <script type="module" src="…/specdec-widget.js"></script>
//   <specdec-widget kind="theory" alpha="0.8" gamma="5" hide="gamma"></specdec-widget>
//
// kind: which widget (roofline, measured, theory, exactness, multidraft, tree, train, boost, treepaths, likesworld,
// decoding, modelfree, exercises; docs.html lists each one's attributes). Every other attribute named like one of its controls sets that control, validated
// as a URL value is (out of range: clamped, with a message in the widget); changing one at run
// time redraws. hide="c,gamma" hides those controls; compact drops the title and introduction.
// lang="zh" (or zh-CN, zh-Hans…; en) sets its language; without one it follows the nearest
// ancestor's lang, usually the host page's <html lang>, so each element on a page may speak its
// own; a language it does not have reads as English, with a note for its own lang attribute.
// Changing a lang, the element's or an ancestor's, draws it again in the new language.
// Model widgets (decoding, likesworld, modelfree, and the exactness lab's Monte Carlo; measured,
// boost and treepaths always) wait for their Run button (train for its Train button), which says
// what a run will cost, so that opening the notes computes nothing; `autorun` runs them at once. After the first Run, every change runs again by itself. Share makes a link to
// embed.html that keeps the state and all of these (hide, compact, lang, autorun).
// An element taken out of the page stops its jobs and workers; put back, it runs again.
// The element never reads or writes the host page's URL. The engine, the stylesheet and the
// models' weights load from beside this script (URLs derived from its own), once for every
// element on the page, which may be on another site (the host then sends CORS headers: README).
//
// Everything but the language and the waiting state (asleep.js, small) is imported when the
// first element connects, not statically: a part that fails to load (the network, a host without
// CORS, the wasm module) then shows a message inside each element with a Retry button, instead of
// leaving the elements empty; one Retry tries again for every element that failed.
//
// Nothing heavy before the reader asks: until then an element shows its widget's title and
// introduction and a Run button (`data-waiting="load"`), and neither the wasm module nor the
// weights are downloaded. The first Run pressed in any element loads the engine once for the
// page (the lecture's module; the models' module and weights too, where a model widget is among
// the elements) and draws every element: the one pressed as if run (its experiments, or the exactness
// lab's Monte Carlo, start), the others as a reader finds them on the course page, except that
// their worker jobs wait for their own Run. An element with `autorun` asks for all of this at
// once, and a page that has loaded the engine itself (the widget reference) draws them at once.
// An iframe of embed.html with `autorun=0` (the form of a Share link from a widget that waits)
// likewise downloads nothing before its own Run, and sleeps drawn by the same code (asleep.js).
import { inLang, langOf, tr } from './i18n.js';
import { clip } from './html.js';
import * as asleep from './asleep.js';

const ATTRIBUTES = ['kind', 'hide', 'compact', 'autorun'];

let modules = null; // a promise of { engine, mount, stopRuns, escapeHtml, WIDGETS, keys }, once imported
let parts = null; // the same, once the engine is ready too
let retrying = null; // the engine's reload after a failure, shared by every element's Retry
const failed = new Set(); // the elements showing a failure to load, which one Retry mounts again
const sleeping = new Set(); // the elements waiting for a reader's first Run
let woken = false; // a reader (or an element's autorun, or the page) asked for the engine

/** The widget framework and the widgets, without starting the engine; a failure does not stick. */
function framework() {
  const loading = modules ??= (async () => {
    const [engine, widget, runbar, html, { WIDGETS }] = await Promise.all([
      import('./engine.js'), import('./widget.js'), import('./runbar.js'), import('./html.js'), import('./widgets/index.js')]);
    const keys = new Set(Object.values(WIDGETS).flatMap((w) => w.controls.map((c) => c.key)));
    return { engine, mount: widget.mount, stopRuns: runbar.stopRuns, escapeHtml: html.escapeHtml, WIDGETS, keys };
  })();
  loading.catch(() => { if (modules === loading) modules = null; });
  return loading;
}

/** The framework and the engine (ready), which this starts; a failure does not stick. */
function load() {
  const loading = parts ??= (async () => {
    const p = await framework();
    await (retrying ?? p.engine.startEngine());
    return p;
  })();
  loading.catch(() => { if (parts === loading) parts = null; });
  return loading;
}

/** After a failure: loads again (a fresh engine when it was the engine that failed). */
async function reload() {
  const engine = await import('./engine.js');
  retrying ??= engine.startEngine().then(() => engine.ready, () => engine.retry());
  retrying.catch(() => {}).finally(() => { retrying = null; });
  return load();
}

/** The engine is asked for: every element still waiting draws (`pressed`, if any, as if run). */
function wake(pressed = null) {
  woken = true;
  for (const el of [...sleeping]) el.wake(el === pressed);
}

function ensureStylesheet() {
  const href = new URL('./widget.css', import.meta.url).href;
  if ([...document.querySelectorAll('link[rel="stylesheet"]')].some((l) => l.href === href)) return;
  const link = document.createElement('link');
  // A CORS request, like the modules': it needs only Access-Control-Allow-Origin from our host,
  // also on a page that is itself cross-origin isolated (which loads no-cors files only with CORP).
  link.crossOrigin = 'anonymous';
  link.rel = 'stylesheet';
  link.href = href;
  document.head.append(link);
}

/** The language of `el`: its own lang, else its nearest ancestor's; { lang, note? }. */
function languageOf(el) {
  const own = el.getAttribute('lang');
  const inherited = el.parentElement?.closest('[lang]')?.getAttribute('lang');
  const fallback = langOf(inherited) ?? 'en';
  if (own === null || langOf(own)) return { lang: langOf(own) ?? fallback };
  const shown = clip(own);
  const note = inLang(fallback, () => tr(`lang: “${shown}” is not a language of this widget (en, zh); using ${fallback === 'zh' ? 'Chinese' : 'English'}`,
    `lang：“${shown}” 不是这个组件的语言（en、zh）；改用${fallback === 'zh' ? '中文' : '英文'}`));
  return { lang: fallback, note };
}

// One watch over the page's lang attributes, the elements' own and their ancestors': a change
// draws each element whose language it changed.
const speaking = new Set(); // the connected elements
const langs = new MutationObserver(() => { for (const el of speaking) el.relang(); });

class SpecdecWidget extends HTMLElement {
  #ui = null;
  #widget = null;
  #mounting = null;
  #lang = null; // the language it was drawn in
  #stopped = false; // taken out of the page: its jobs and workers were stopped
  // Attribute changes are watched with an observer rather than observedAttributes, whose list
  // (every control's name) is known only once the widgets have loaded.
  #observer = new MutationObserver((records) => {
    for (const r of records) this.#changed(r.attributeName, r.oldValue, this.getAttribute(r.attributeName));
  });

  #watched = null; // the attributes the observer watches, once the widgets are known
  #asleep = false; // showing its Run button before the engine is loaded
  #pressed = false; // its own Run woke the page: it runs as `autorun` does

  connectedCallback() {
    ensureStylesheet();
    if (!speaking.size) langs.observe(document.documentElement, { attributes: true, attributeFilter: ['lang'], subtree: true });
    speaking.add(this);
    if (this.#watched) this.#watch();
    // Put back while waiting for Run: it waits again, or draws if the engine was asked for meanwhile.
    if (this.#asleep && woken) this.wake(false);
    else if (this.#asleep) sleeping.add(this);
    if (this.#stopped) {
      // Put back after its jobs were stopped: it draws again, which runs them again.
      this.#stopped = false;
      this.#mounting = this.#mounting.then(() => this.#ui?.redraw());
    }
    if (this.hasAttribute('autorun')) wake();
    this.#mounting ??= woken ? this.#mount(load()) : this.#sleep();
  }

  /** Before the engine: the widget's title, introduction and a Run button that loads it. */
  async #sleep() {
    const { lang } = languageOf(this);
    this.#lang = lang;
    let p;
    try {
      p = await framework();
    } catch (e) {
      this.#failed(e);
      return;
    }
    this.#watchAll(p);
    // The page loaded the engine itself (the widget reference), or a reader asked meanwhile.
    if (p.engine.ready) woken = true;
    const kind = this.getAttribute('kind') ?? '';
    if (woken) return this.#mount(load());
    // An unknown kind is named at once: no engine is needed to say so.
    if (!Object.hasOwn(p.WIDGETS, kind)) return this.#mount(framework());
    this.dataset.widget = kind;
    asleep.sleep(this, p.WIDGETS[kind], { lang, compact: this.hasAttribute('compact'), shared: true }, () => wake(this));
    this.#asleep = true;
    sleeping.add(this);
  }

  /** Draws it now that the engine is asked for (`pressed`: its own Run asked). */
  wake(pressed) {
    if (!this.#asleep) return;
    this.#asleep = false;
    sleeping.delete(this);
    this.#pressed ||= pressed;
    asleep.wake(this, this.#lang);
    this.#mounting = this.#mounting.then(() => this.#mount(load()));
  }

  /** Watches every attribute a widget may read, once the widgets are known. */
  #watchAll(p) {
    if (this.#watched) return;
    this.#watched = [...ATTRIBUTES, ...p.keys];
    if (this.isConnected) this.#watch();
  }

  disconnectedCallback() {
    this.#observer.disconnect();
    speaking.delete(this);
    sleeping.delete(this);
    if (!speaking.size) langs.disconnect();
    // Moved rather than removed (taken out and put back in one task): it keeps running.
    queueMicrotask(() => {
      if (this.isConnected || this.#stopped || !this.#mounting) return;
      this.#stopped = true;
      this.#mounting.then(async () => { if (this.#stopped) (await framework()).stopRuns(this); });
    });
  }

  /** Draws the widget again if its language changed (a lang attribute, its own or an ancestor's). */
  relang() {
    if (!this.#mounting || languageOf(this).lang === this.#lang) return;
    this.#mounting = this.#mounting.then(() => this.#remountKeeping());
  }

  /** Mounts the widget afresh where it is, with the state it has now (not its attributes'). */
  async #remountKeeping() {
    if (!this.#ui) return woken ? this.#mount(load()) : this.#sleep();
    const { state } = this.#ui;
    return this.#mount(load(), (key) => state[key]);
  }
  #watch() {
    this.#observer.observe(this, { attributes: true, attributeOldValue: true, attributeFilter: this.#watched });
  }

  /** Mounts the widget named by `kind`; `source(key)` gives the controls' values (attributes). */
  async #mount(loading, source = (key) => this.getAttribute(key)) {
    this.dataset.params = 'none'; // state lives in the attributes, never in the host page's URL
    const { lang, note } = languageOf(this);
    this.#lang = lang;
    let p;
    try {
      p = await loading;
    } catch (e) {
      this.#failed(e);
      return;
    }
    this.#watchAll(p);
    const kind = this.getAttribute('kind') ?? '';
    const widget = Object.hasOwn(p.WIDGETS, kind) ? p.WIDGETS[kind] : null;
    if (!widget) {
      this.innerHTML = inLang(lang, () => `<div role="alert" class="alert shown">${tr('Unknown widget kind', '未知的组件类型')} “${p.escapeHtml(clip(kind))}”. `
        + `${tr('Choose one of', '可选')}: ${Object.keys(p.WIDGETS).join(', ')}.</div>`);
      this.dataset.state = 'error';
      delete this.dataset.widget;
      this.#widget = null;
      this.#ui = null;
      return;
    }
    if (widget.models) {
      // A model widget waits for the models' engine too (once for the page's elements).
      try {
        await p.engine.startModels();
      } catch (e) {
        this.#failed(e);
        return;
      }
    }
    this.#widget = widget;
    this.dataset.widget = kind;
    this.#ui = p.mount(this, widget, {
      source,
      hide: this.getAttribute('hide') ?? '',
      compact: this.hasAttribute('compact'),
      lang,
      autorun: this.#pressed || this.hasAttribute('autorun'),
    });
    if (note) this.#ui.note(note);
  }

  /** A part did not load: the reason and a Retry button, inside the element. */
  #failed(e) {
    this.classList.add('widget'); // widget.css shows the alert as every widget's alert looks
    this.classList.remove('compact');
    this.innerHTML = inLang(this.#lang, () => `<div role="alert" class="alert shown">${tr('This widget could not be loaded: ', '这个组件无法加载：')}<span class="why"></span>
      <button type="button" class="retry">${tr('Retry', '重试')}</button></div>`);
    this.querySelector('.why').textContent = e?.message ?? String(e);
    this.dataset.state = 'load-error';
    failed.add(this);
    this.querySelector('.retry').addEventListener('click', () => {
      const again = reload();
      for (const el of [...failed]) el.#remount(again);
      wake(); // a Retry asks for the engine: the elements still waiting draw too
    });
  }

  #remount(loading) {
    failed.delete(this);
    this.querySelector('.retry')?.setAttribute('disabled', '');
    this.#mounting = this.#mount(loading);
  }

  #changed(name, before, after) {
    if (before === after || !this.#mounting) return;
    if (name === 'autorun' && after !== null && !woken) {
      wake();
      return;
    }
    if (name === 'kind') {
      // Another widget: mount afresh once the current mount is done.
      this.#mounting = this.#mounting.then(() => {
        this.innerHTML = '';
        this.classList.remove('widget', 'compact');
        delete this.dataset.state;
        return woken ? this.#mount(load()) : this.#sleep();
      });
      return;
    }
    this.#mounting.then(() => {
      if (this.#asleep && name === 'compact') this.classList.toggle('compact', after !== null);
      if (!this.#ui) return;
      if (name === 'hide') this.#ui.hide(after ?? '');
      else if (name === 'compact') this.#ui.compact(after !== null);
      else if (name === 'autorun') {
        this.#ui.autorun = after !== null;
        if (this.#ui.autorun) this.#ui.redraw(); // a widget waiting for Run starts
      }
      else if (this.#widget.controls.some((c) => c.key === name)) this.#ui.apply(name, after);
    });
  }
}

if (!customElements.get('specdec-widget')) customElements.define('specdec-widget', SpecdecWidget);
