// <specdec-widget>: one widget of the playground as one HTML element, for an instructor's notes.
//
//   <script type="module" src="…/specdec-widget.js"></script>
//   <specdec-widget kind="theory" alpha="0.8" gamma="5" hide="gamma"></specdec-widget>
//
// kind: which widget (roofline, measured, theory, exactness, multidraft, tree, likesworld,
// decoding, modelfree, exercises; docs.html lists each one's attributes). Every other attribute named like one of its controls sets that control, validated
// as a URL value is (out of range: clamped, with a message in the widget); changing one at run
// time redraws. hide="c,gamma" hides those controls; compact drops the title and introduction.
// The element never reads or writes the host page's URL. The engine, the stylesheet and the
// models' weights load from beside this script (URLs derived from its own), once for every
// element on the page, which may be on another site (the host then sends CORS headers: README).
//
// Everything but the language is imported when the first element connects, not statically: a
// part that fails to load (the network, a host without CORS, the wasm module) then shows a
// message inside each element with a Retry button, instead of leaving the elements empty; one
// Retry tries again for every element that failed.
import { tr } from './i18n.js';

const ATTRIBUTES = ['kind', 'hide', 'compact'];

let parts = null; // a promise of { engine, mount, escapeHtml, WIDGETS, keys }, once loaded
let retrying = null; // the engine's reload after a failure, shared by every element's Retry
const failed = new Set(); // the elements showing a failure to load, which one Retry mounts again

/** The engine (ready), the widget framework and the widgets; a failure does not stick. */
function load() {
  const loading = parts ??= (async () => {
    const [engine, framework, html, { WIDGETS }] = await Promise.all([
      import('./engine.js'), import('./widget.js'), import('./html.js'), import('./widgets/index.js')]);
    await (retrying ?? engine.ready);
    const keys = new Set(Object.values(WIDGETS).flatMap((w) => w.controls.map((c) => c.key)));
    return { engine, mount: framework.mount, escapeHtml: html.escapeHtml, WIDGETS, keys };
  })();
  loading.catch(() => { if (parts === loading) parts = null; });
  return loading;
}

/** After a failure: loads again (a fresh engine when it was the engine that failed). */
async function reload() {
  const engine = await import('./engine.js');
  retrying ??= engine.ready.then(() => engine.ready, () => engine.retry());
  retrying.catch(() => {}).finally(() => { retrying = null; });
  return load();
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

class SpecdecWidget extends HTMLElement {
  #ui = null;
  #widget = null;
  #mounting = null;
  // Attribute changes are watched with an observer rather than observedAttributes, whose list
  // (every control's name) is known only once the widgets have loaded.
  #observer = new MutationObserver((records) => {
    for (const r of records) this.#changed(r.attributeName, r.oldValue, this.getAttribute(r.attributeName));
  });

  #watched = null; // the attributes the observer watches, once the widgets are known

  connectedCallback() {
    ensureStylesheet();
    if (this.#watched) this.#watch();
    this.#mounting ??= this.#mount(load());
  }

  disconnectedCallback() {
    this.#observer.disconnect();
  }

  #watch() {
    this.#observer.observe(this, { attributes: true, attributeOldValue: true, attributeFilter: this.#watched });
  }

  async #mount(loading) {
    this.dataset.params = 'none'; // state lives in the attributes, never in the host page's URL
    let p;
    try {
      p = await loading;
    } catch (e) {
      this.#failed(e);
      return;
    }
    if (!this.#watched) {
      this.#watched = [...ATTRIBUTES, ...p.keys];
      if (this.isConnected) this.#watch();
    }
    const kind = this.getAttribute('kind') ?? '';
    const widget = Object.hasOwn(p.WIDGETS, kind) ? p.WIDGETS[kind] : null;
    if (!widget) {
      this.innerHTML = `<div role="alert" class="alert shown">${tr('Unknown widget kind', '未知的组件类型')} “${p.escapeHtml(kind.slice(0, 40))}”. `
        + `${tr('Choose one of', '可选')}: ${Object.keys(p.WIDGETS).join(', ')}.</div>`;
      this.dataset.state = 'error';
      delete this.dataset.widget;
      this.#widget = null;
      this.#ui = null;
      return;
    }
    this.#widget = widget;
    this.dataset.widget = kind;
    this.#ui = p.mount(this, widget, {
      source: (key) => this.getAttribute(key),
      hide: this.getAttribute('hide') ?? '',
      compact: this.hasAttribute('compact'),
    });
  }

  /** A part did not load: the reason and a Retry button, inside the element. */
  #failed(e) {
    this.classList.add('widget'); // widget.css shows the alert as every widget's alert looks
    this.classList.remove('compact');
    this.innerHTML = `<div role="alert" class="alert shown">${tr('This widget could not be loaded: ', '这个组件无法加载：')}<span class="why"></span>
      <button type="button" class="retry">${tr('Retry', '重试')}</button></div>`;
    this.querySelector('.why').textContent = e?.message ?? String(e);
    this.dataset.state = 'load-error';
    failed.add(this);
    this.querySelector('.retry').addEventListener('click', () => {
      const again = reload();
      for (const el of [...failed]) el.#remount(again);
    });
  }

  #remount(loading) {
    failed.delete(this);
    this.querySelector('.retry')?.setAttribute('disabled', '');
    this.#mounting = this.#mount(loading);
  }

  #changed(name, before, after) {
    if (before === after || !this.#mounting) return;
    if (name === 'kind') {
      // Another widget: mount afresh once the current mount is done.
      this.#mounting = this.#mounting.then(() => {
        this.innerHTML = '';
        this.classList.remove('widget', 'compact');
        delete this.dataset.state;
        return this.#mount(load());
      });
      return;
    }
    this.#mounting.then(() => {
      if (!this.#ui) return;
      if (name === 'hide') this.#ui.hide(after ?? '');
      else if (name === 'compact') this.#ui.compact(after !== null);
      else if (this.#widget.controls.some((c) => c.key === name)) this.#ui.apply(name, after);
    });
  }
}

if (!customElements.get('specdec-widget')) customElements.define('specdec-widget', SpecdecWidget);
