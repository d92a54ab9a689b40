// The page's language: English or Chinese (the lecture's), chosen with the switch in the header
// and remembered in this browser. Page text comes in both languages as [data-lang] elements, one
// of which CSS hides; a widget declares `title_zh`, `intro_zh` and each control's `label_zh`
// beside the English ones; the rest of a widget's text goes through `tr`, and the engine writes
// its figures and exercises in the language it is given (engine.js passes `lang()` to every call).
// The engine's error messages follow the language of the latest call (crate/src/wasm/mod.rs).
const KEY = 'specdec-playground.lang';

export function lang() {
  try {
    return localStorage.getItem(KEY) === 'zh' ? 'zh' : 'en';
  } catch (_) {
    return 'en'; // storage blocked: English
  }
}

/** `obj[field]` in the page's language: `obj[field + '_zh']` in Chinese when there is one. */
export function t(obj, field) {
  return (lang() === 'zh' && obj[`${field}_zh`]) || obj[field];
}

/** A short text of the page's own chrome, in the page's language. */
export function tr(en, zh) {
  return lang() === 'zh' ? zh : en;
}

/** Marks the document with the language (CSS shows that language's text) and the switch's state. */
export function applyLang() {
  const l = lang();
  document.documentElement.lang = l === 'zh' ? 'zh-CN' : 'en';
  for (const b of document.querySelectorAll('[data-set-lang]')) b.setAttribute('aria-pressed', String(b.dataset.setLang === l));
}

/** Wires the switch: the choice is stored, then `changed()` redraws what CSS cannot switch. */
export function wireSwitch(changed) {
  for (const b of document.querySelectorAll('[data-set-lang]')) {
    b.addEventListener('click', () => {
      if (b.dataset.setLang === lang()) return;
      try {
        localStorage.setItem(KEY, b.dataset.setLang);
      } catch (_) { /* not remembered, but switched for this visit below */ }
      applyLang();
      changed(b.dataset.setLang);
    });
  }
}
