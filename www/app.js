// Mounts every element with data-widget="<name>" once the engine has loaded, then marks the
// document ready. Used by index.html (all widgets) and embed.html (one, chosen by ?widget=). The
// lecture's module comes first and alone: the analytic widgets mount on it. On the course page
// each model widget sleeps (asleep.js) until it comes near the viewport or its Run is pressed,
// then the models' module and weights load (once for the page) and it mounts; an embedded model
// widget loads them at once.
//
// embed.html with `autorun=0` (an iframe in someone's notes, or a Share link from a widget that
// waits for Run) downloads and computes nothing until the reader asks, as a <specdec-widget>
// does: it shows the widget's title, introduction and a Run button (asleep.js,
// data-waiting="load" on the widget) and registers no service worker before it (its install fetches
// the weights). Its Run loads the engine and mounts the widget as if that Run was pressed (its
// experiments, or the exactness lab's Monte Carlo, start). <html data-ready="true"> means the
// page shows what it shows by itself: the widget drawn, or asleep; Run takes it away until the
// widget is drawn (or `failed`, with the message and Retry of any failed load).
import { startEngine, startModels, retry, panicOnNextCall, loseDeviceOnNextJob, call, health } from './engine.js';
import { mountAll } from './widget.js';
import { flushUrl } from './url.js';
import { clip } from './html.js';
import { applyLang, wireSwitch, lang, tr } from './i18n.js';
import { WIDGETS } from './widgets/index.js';
import { inSection } from './widgets/sections.js';
import * as asleep from './asleep.js';

const params = new URLSearchParams(location.search);
// The embed waits for its reader's Run (the course page never does).
const waits = document.querySelector('[data-embed]') !== null && params.get('autorun') === '0';

async function main() {
  // The language first, so that the widgets mount in it; switching reloads the page with the
  // state every widget keeps in the URL, so that every widget redraws in the new language.
  applyLang();
  wireSwitch(() => {
    flushUrl();
    location.reload();
  });
  const embedded = document.querySelector('[data-embed]');
  let pressed = null; // the widget whose Run loaded the engine: it runs as `autorun` does
  if (embedded) {
    const name = params.get('widget') ?? embedded.dataset.widget ?? '';
    if (!Object.hasOwn(WIDGETS, name)) {
      const shown = clip(name).replace(/[<>&"]/g, '');
      const known = Object.keys(WIDGETS).join(', ');
      embedded.innerHTML = `<div role="alert" class="alert shown">${tr(`Unknown widget “${shown}”. Choose one of: ${known}.`,
        `未知的组件“${shown}”。可选：${known}。`)}</div>`;
      document.documentElement.dataset.ready = 'true';
      return;
    }
    embedded.dataset.widget = name;
    embedded.dataset.params = 'plain';
    if (waits) {
      await new Promise((run) => {
        asleep.sleep(embedded, WIDGETS[name], { lang: lang(), compact: params.get('compact') === '1', shared: false }, run);
        document.documentElement.dataset.ready = 'true';
      });
      delete document.documentElement.dataset.ready;
      asleep.wake(embedded, lang());
      pressed = embedded;
    }
  }
  // A failed load shows a message with a retry in every widget; the page stays alive.
  const roots = [...document.querySelectorAll('[data-widget]')];
  await loaded(startEngine, retry, roots);
  const entries = roots
    .filter((el) => WIDGETS[el.dataset.widget])
    .map((el) => ({ root: el, widget: inSection(WIDGETS[el.dataset.widget], el.dataset.prefix), options: el === pressed ? { autorun: true } : {} }));
  // The models' engine: an embedded model widget waits for it (it is what the reader opened); on
  // the course page each model widget sleeps until it comes near the viewport or its Run is
  // pressed, so that a reader of the closed forms downloads no model.
  const modelEntries = entries.filter((e) => e.widget.models);
  if (embedded && modelEntries.length) await loaded(startModels, startModels, modelEntries.map((e) => e.root));
  mountEntries(embedded ? entries : entries.filter((e) => !e.widget.models));
  if (!embedded) modelEntries.forEach(sleepUntilNear);
  document.documentElement.dataset.ready = 'true';
  // A handle for tests and for the curious, in the console.
  window.specdec = { call, panicOnNextCall, loseDeviceOnNextJob, health };
  // Once drawn, not while the engine downloads what its install downloads again.
  if (pressed) keepOffline({ reload: false });
}

/**
 * Waits for `start()` (an engine's load); a failure shows its message and a Retry in each of
 * `roots` and waits for a Retry (`again()`), marking the page `failed` meanwhile.
 */
async function loaded(start, again, roots) {
  for (let engine = start(); ; engine = again()) {
    try {
      await engine;
      return;
    } catch (e) {
      const pressedRetry = new Promise((resolve) => {
        roots.forEach((el) => {
          el.innerHTML = `<div role="alert" class="alert shown">${tr('Could not load the WebAssembly engine:', '无法加载 WebAssembly 引擎：')} <span class="why"></span> `
            + `<button type="button" class="retry">${tr('Try again', '重试')}</button></div>`;
          el.querySelector('.why').textContent = e?.message ?? String(e);
          el.querySelector('.retry').onclick = resolve;
        });
      });
      document.documentElement.dataset.ready = 'failed';
      await pressedRetry;
      roots.forEach((el) => { el.innerHTML = ''; });
    }
  }
}

/** Mounts `entries` at once (the page is laid out once for all their widths: widget.js); a widget that cannot be built says so in its place. */
function mountEntries(entries) {
  mountAll(entries).forEach(({ error: e }, i) => {
    if (!e) return;
    const el = entries[i].root;
    console.error(e);
    el.innerHTML = `<div role="alert" class="alert shown">${tr('This widget could not be built:', '这个组件无法构建：')} <span class="why"></span></div>`;
    el.querySelector('.why').textContent = e?.message ?? String(e);
  });
}

// A model widget of the course page wakes when it comes within this margin of the viewport.
const near = new IntersectionObserver((seen) => {
  for (const s of seen) if (s.isIntersecting) wakeModels(s.target);
}, { rootMargin: '100px 0px' });
const asleepEntries = new Map(); // root → its entry, while it sleeps

/** Shows a model widget asleep (title, introduction, Run) until it comes near or Run is pressed. */
function sleepUntilNear(entry) {
  asleepEntries.set(entry.root, entry);
  asleep.sleep(entry.root, entry.widget, { lang: lang(), compact: false, shared: true, near: true }, () => wakeModels(entry.root, true));
  near.observe(entry.root);
}

/** Loads the models' engine (once for the page) and mounts the model widget at `root`. */
async function wakeModels(root, pressed = false) {
  const entry = asleepEntries.get(root);
  if (!entry) return;
  asleepEntries.delete(root);
  near.unobserve(root);
  asleep.wake(root, lang());
  await loaded(startModels, startModels, [root]);
  root.innerHTML = '';
  mountEntries([{ ...entry, options: pressed ? { autorun: true } : entry.options }]);
  document.documentElement.dataset.ready = 'true';
}

main();

/**
 * Offline after the first visit (sw.js). Only on the course page's own origin, never in an
 * element embedded elsewhere; a failure here only means no offline copy. `reload: false` (an
 * embed woken by its reader's Run) leaves out the one reload that isolates a first visit, which
 * would put the reader back before their Run: the next visit is isolated from its start.
 */
function keepOffline({ reload }) {
  if (!('serviceWorker' in navigator) || location.protocol === 'file:') return;
  // On a host that sends no COOP/COEP, the service worker adds them: once it controls this page
  // (the first visit), one reload makes the page cross-origin isolated. Once per tab session, so
  // that a browser that refuses isolation is never reloaded in a loop.
  const RELOADED = 'specdec-isolation-reload';
  const reloadOnce = () => {
    let done = true;
    try { done = sessionStorage.getItem(RELOADED) !== null; sessionStorage.setItem(RELOADED, '1'); } catch (_) { /* no storage: no reload */ }
    if (!done && !self.crossOriginIsolated) location.reload();
  };
  if (reload && !self.crossOriginIsolated && window.isSecureContext) {
    if (navigator.serviceWorker.controller) reloadOnce();
    else navigator.serviceWorker.addEventListener('controllerchange', reloadOnce, { once: true });
  }
  navigator.serviceWorker.register(new URL('sw.js', import.meta.url)).catch((e) => {
    console.warn(`specdec-playground: no offline copy (${e?.message ?? e})`);
  });
}

// An embed that waits registers it once woken and drawn (main).
if (!waits) keepOffline({ reload: true });
