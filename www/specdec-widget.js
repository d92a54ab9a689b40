// <specdec-widget>: one widget of the playground as one HTML element, for an instructor's notes.
//
//   <script type="module" src="…/specdec-widget.js"></script>
//   <specdec-widget kind="theory" alpha="0.8" gamma="5" hide="gamma"></specdec-widget>
//
// kind: which widget (roofline, theory, exactness, multidraft, tree, likesworld, decoding,
// modelfree). Every other attribute named like one of its controls sets that control, validated
// as a URL value is (out of range: clamped, with a message in the widget); changing one at run
// time redraws. hide="c,gamma" hides those controls; compact drops the title and introduction.
// The element never reads or writes the host page's URL. The engine, the stylesheet and the
// models' weights load from beside this script, once for every element on the page.
import { ready } from './engine.js';
import { mount, escapeHtml } from './widget.js';
import { WIDGETS } from './widgets/index.js';

const CONTROL_KEYS = [...new Set(Object.values(WIDGETS).flatMap((w) => w.controls.map((c) => c.key)))];

function ensureStylesheet() {
  const href = new URL('./widget.css', import.meta.url).href;
  if ([...document.querySelectorAll('link[rel="stylesheet"]')].some((l) => l.href === href)) return;
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = href;
  document.head.append(link);
}

class SpecdecWidget extends HTMLElement {
  static observedAttributes = ['kind', 'hide', 'compact', ...CONTROL_KEYS];

  #ui = null;
  #widget = null;
  #mounting = null;

  connectedCallback() {
    ensureStylesheet();
    this.#mounting ??= this.#mount();
  }

  async #mount() {
    this.dataset.params = 'none'; // state lives in the attributes, never in the host page's URL
    try {
      await ready;
    } catch (e) {
      this.innerHTML = '<div role="alert" class="alert shown">Could not load the WebAssembly engine: <span class="why"></span></div>';
      this.querySelector('.why').textContent = e?.message ?? String(e);
      return;
    }
    const kind = this.getAttribute('kind') ?? '';
    const widget = Object.hasOwn(WIDGETS, kind) ? WIDGETS[kind] : null;
    if (!widget) {
      this.innerHTML = `<div role="alert" class="alert shown">Unknown widget kind “${escapeHtml(kind.slice(0, 40))}”. `
        + `Choose one of: ${Object.keys(WIDGETS).join(', ')}.</div>`;
      this.dataset.state = 'error';
      delete this.dataset.widget;
      this.#widget = null;
      this.#ui = null;
      return;
    }
    this.#widget = widget;
    this.dataset.widget = kind;
    this.#ui = mount(this, widget, {
      source: (key) => this.getAttribute(key),
      hide: this.getAttribute('hide') ?? '',
      compact: this.hasAttribute('compact'),
    });
  }

  attributeChangedCallback(name, before, after) {
    if (before === after || !this.#mounting) return;
    if (name === 'kind') {
      // Another widget: mount afresh once the current mount is done.
      this.#mounting = this.#mounting.then(() => {
        this.innerHTML = '';
        this.classList.remove('widget', 'compact');
        delete this.dataset.state;
        return this.#mount();
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
