// The page's URL as the widgets' state: what each widget's controls are called there, writing
// them as they change (throttled), and the Share link that reopens one widget alone. widget.js
// reads the URL when it mounts a widget; this module writes it.
//
// Beside the URL, what this tab keeps that a link does not (`keep`, `kept`): typed exercise
// answers and a solution shown. They live in the history entry's state, which a reload keeps
// (the language switch reloads the page) and a Share link, a new visit or another tab never
// sees; unlike storage, no browser setting blocks it.

/**
 * What this widget's controls are called in the page's URL: `decoding.gamma`, or with
 * data-prefix="s6" `s6.gamma` (a second widget of one kind on the page keeps its own state), or
 * plain `gamma` in embed.html.
 */
export function urlPrefix(root, widget) {
  return root.dataset.params === 'plain' ? '' : `${root.dataset.prefix ?? widget.name}.`;
}

/**
 * The link that reopens this widget alone (embed.html) as it is now: its state and how it is
 * shown (hidden controls, compact, the language, whether it waits for Run), which embed.html
 * reads from its URL as a <specdec-widget> reads them from its attributes.
 */
export function shareUrl(widget, state, { hiddenKeys, compact, controls, language, autorun, element }) {
  // Beside this script: right on the course page and in a custom element on another site alike.
  const u = new URL('embed.html', import.meta.url);
  u.search = '';
  u.searchParams.set('widget', widget.name);
  for (const c of widget.controls) u.searchParams.set(c.key, String(state[c.key]));
  if (hiddenKeys.size) u.searchParams.set('hide', [...hiddenKeys].join(','));
  if (!controls) u.searchParams.set('controls', '0');
  if (compact) u.searchParams.set('compact', '1');
  if (!autorun) u.searchParams.set('autorun', '0');
  // A link shared from the Chinese page opens in Chinese; one shared from an element, in the
  // element's language, whichever the reader's browser remembers.
  if (language === 'zh' || element) u.searchParams.set('lang', language);
  return u.toString();
}

// The URL follows the state at most every URL_EVERY_MS (the first change at once, the last one
// always): browsers throttle history.replaceState and drop updates past ~100 per 10 s, which a
// dragged slider exceeds.
const URL_EVERY_MS = 200;
const urlPending = new Map(); // root → { widget, state }
let urlTimer = null;
let urlLast = -Infinity;

const keptPending = new Map(); // key → value, for the history entry's state

function schedule() {
  const wait = urlLast + URL_EVERY_MS - performance.now();
  if (wait <= 0) flushUrl();
  else urlTimer ??= setTimeout(flushUrl, wait);
}

export function syncUrl(widget, state, root) {
  urlPending.set(root, { widget, state });
  schedule();
}

/** Keeps `value` (plain data) under `key` in this tab's history entry, with the next URL write. */
export function keep(key, value) {
  keptPending.set(key, value);
  schedule();
}

/** What `keep` kept under `key` in this history entry (after a reload too), else undefined. */
export function kept(key) {
  if (keptPending.has(key)) return keptPending.get(key);
  const state = history.state;
  return state && typeof state === 'object' ? state.specdec?.[key] : undefined;
}

/** Writes any state change still waiting for the URL (before the page reloads, say). */
export function flushUrl() {
  urlTimer = null;
  urlLast = performance.now();
  const u = new URL(location.href);
  for (const [root, { widget, state }] of urlPending) {
    const prefix = urlPrefix(root, widget);
    for (const c of widget.controls) u.searchParams.set(prefix + c.key, String(state[c.key]));
  }
  urlPending.clear();
  // The entry's state, with what is kept; the rest of it (a host's, say) is left as it was.
  const old = history.state && typeof history.state === 'object' ? history.state : {};
  const state = keptPending.size ? { ...old, specdec: { ...old.specdec, ...Object.fromEntries(keptPending) } } : history.state;
  keptPending.clear();
  history.replaceState(state, '', u);
}
