// The page's language: English or Chinese (the lecture's). It is chosen by `?lang=en|zh` in the
// URL (a link to the Chinese page), else by the switch in the header, remembered in this browser.
// Where storage is blocked the switch writes `lang` into the URL instead, so that it switches
// all the same. Page text comes in both languages as [data-lang] elements, one of which CSS
// hides (the document's <title> carries its Chinese in data-zh); a widget declares `title_zh`,
// `intro_zh` and each control's `label_zh` (and `options_zh`) beside the English ones; the rest
// of a widget's text goes through `tr`, and the engine writes its figures, reports and
// exercises in the language it is given (engine.js passes `lang()` to every call).
// The engine's error messages follow the language of the latest call (crate/src/wasm/mod.rs).
//
// A <specdec-widget> in someone's notes has a language of its own (its `lang` attribute, else
// its nearest ancestor's), and two on one page may differ. So lang(), t() and tr() answer the
// language of the widget whose code is running: widget.js runs a widget's drawing, its events
// and its jobs' callbacks inside inLang(its language); outside any widget they answer the page's.
const KEY = 'specdec-playground.lang';
const LANGS = ['en', 'zh'];

/** The language `?lang=` asks for, or null (a worker has a location too). */
function fromUrl() {
  const l = new URLSearchParams(globalThis.location?.search ?? '').get('lang');
  return LANGS.includes(l) ? l : null;
}

/** The language remembered in this browser, or null (none yet, or storage blocked). */
function stored() {
  try {
    const l = localStorage.getItem(KEY);
    return LANGS.includes(l) ? l : null;
  } catch (_) {
    return null;
  }
}

/** Stores the language; false where storage is blocked. */
function remember(l) {
  try {
    localStorage.setItem(KEY, l);
    return true;
  } catch (_) {
    return false;
  }
}

let scoped = null; // the language of the widget whose code runs now (inLang), else null

export function lang() {
  return scoped ?? fromUrl() ?? stored() ?? 'en';
}

/**
 * The page's language a `lang` attribute names, or null: its primary subtag, so en-GB is English
 * and zh, zh-CN, zh-Hans, zh-TW are Chinese (the lecture's, in simplified characters).
 */
export function langOf(tag) {
  const primary = String(tag ?? '').trim().toLowerCase().split(/[-_]/)[0];
  return LANGS.includes(primary) ? primary : null;
}

/** Runs `fn` with lang(), t() and tr() answering `l`; nested calls restore the outer language. */
export function inLang(l, fn) {
  const outer = scoped;
  scoped = l;
  try {
    return fn();
  } finally {
    scoped = outer;
  }
}

/** `obj[field]` in the page's language: `obj[field + '_zh']` in Chinese when there is one. */
export function t(obj, field) {
  return (lang() === 'zh' && obj[`${field}_zh`]) || obj[field];
}

// A line break beside full-width punctuation, which HTML would show as a space.
const FULL_WIDTH_BREAK = /(?<=[，。；：、！？）])\s*\n\s*|\s*\n\s*(?=[（，。；：、])/g;

/** A short text of the page's own chrome, in the page's language. */
export function tr(en, zh) {
  if (lang() !== 'zh') return en;
  return typeof zh === 'string' ? zh.replace(FULL_WIDTH_BREAK, '') : zh;
}

/**
 * Marks the document with the language (CSS shows that language's text), its title and the
 * switch's state. A language asked for by the URL is remembered, like the switch's.
 */
export function applyLang() {
  const l = lang();
  if (fromUrl()) remember(l);
  document.documentElement.lang = l === 'zh' ? 'zh-CN' : 'en';
  const title = document.querySelector('title');
  if (title?.dataset.zh) {
    title.dataset.en ??= title.textContent;
    document.title = l === 'zh' ? title.dataset.zh : title.dataset.en;
  }
  for (const b of document.querySelectorAll('[data-set-lang]')) b.setAttribute('aria-pressed', String(b.dataset.setLang === l));
}

/**
 * Wires the switch: the choice is stored, and written into the URL where storage is blocked or
 * the URL names a language already (otherwise the URL stays as it is: a changed URL makes the
 * browser fetch the icon again, which the reload would abort); then `changed()` redraws what CSS
 * cannot switch.
 */
export function wireSwitch(changed) {
  for (const b of document.querySelectorAll('[data-set-lang]')) {
    b.addEventListener('click', () => {
      const l = b.dataset.setLang;
      if (l === lang()) return;
      const u = new URL(location.href);
      if (!remember(l) || u.searchParams.has('lang')) {
        u.searchParams.set('lang', l);
        history.replaceState(history.state, '', u);
      }
      applyLang();
      changed(l);
    });
  }
}
