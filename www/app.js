// Mounts every element with data-widget="<name>" once the engine has loaded, then marks the
// document ready. Used by index.html (all widgets) and embed.html (one, chosen by ?widget=).
import { startEngine, retry, panicOnNextCall, loseDeviceOnNextJob, call, health } from './engine.js';
import { mountAll } from './widget.js';
import { flushUrl } from './url.js';
import { clip } from './html.js';
import { applyLang, wireSwitch, tr } from './i18n.js';
import { WIDGETS } from './widgets/index.js';
import { inSection } from './widgets/sections.js';

async function main() {
  // The language first, so that the widgets mount in it; switching reloads the page with the
  // state every widget keeps in the URL, so that every widget redraws in the new language.
  applyLang();
  wireSwitch(() => {
    flushUrl();
    location.reload();
  });
  const params = new URLSearchParams(location.search);
  const embedded = document.querySelector('[data-embed]');
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
  }
  // A failed load shows a message with a retry in every widget; the page stays alive.
  for (let engine = startEngine(); ; engine = retry()) {
    try {
      await engine;
      break;
    } catch (e) {
      const again = new Promise((resolve) => {
        document.querySelectorAll('[data-widget]').forEach((el) => {
          el.innerHTML = `<div role="alert" class="alert shown">${tr('Could not load the WebAssembly engine:', '无法加载 WebAssembly 引擎：')} <span class="why"></span> `
            + `<button type="button" class="retry">${tr('Try again', '重试')}</button></div>`;
          el.querySelector('.why').textContent = e?.message ?? String(e);
          el.querySelector('.retry').onclick = resolve;
        });
      });
      document.documentElement.dataset.ready = 'failed';
      await again;
      document.querySelectorAll('[data-widget]').forEach((el) => { el.innerHTML = ''; });
    }
  }
  // All at once, so that the page is laid out once for every widget's width (widget.js).
  const entries = [...document.querySelectorAll('[data-widget]')]
    .filter((el) => WIDGETS[el.dataset.widget])
    .map((el) => ({ root: el, widget: inSection(WIDGETS[el.dataset.widget], el.dataset.prefix) }));
  mountAll(entries).forEach(({ error: e }, i) => {
    if (!e) return;
    // A widget that cannot be built says so in its place; the others still mount.
    const el = entries[i].root;
    console.error(e);
    el.innerHTML = `<div role="alert" class="alert shown">${tr('This widget could not be built:', '这个组件无法构建：')} <span class="why"></span></div>`;
    el.querySelector('.why').textContent = e?.message ?? String(e);
  });
  document.documentElement.dataset.ready = 'true';
  // A handle for tests and for the curious, in the console.
  window.specdec = { call, panicOnNextCall, loseDeviceOnNextJob, health };
}

main();

// Offline after the first visit (sw.js). Only on the course page's own origin, never in an
// element embedded elsewhere; a failure here only means no offline copy.
if ('serviceWorker' in navigator && location.protocol !== 'file:') {
  // On a host that sends no COOP/COEP, the service worker adds them: once it controls this page
  // (the first visit), one reload makes the page cross-origin isolated. Once per tab session, so
  // that a browser that refuses isolation is never reloaded in a loop.
  const RELOADED = 'specdec-isolation-reload';
  const reloadOnce = () => {
    let done = true;
    try { done = sessionStorage.getItem(RELOADED) !== null; sessionStorage.setItem(RELOADED, '1'); } catch (_) { /* no storage: no reload */ }
    if (!done && !self.crossOriginIsolated) location.reload();
  };
  if (!self.crossOriginIsolated && window.isSecureContext) {
    if (navigator.serviceWorker.controller) reloadOnce();
    else navigator.serviceWorker.addEventListener('controllerchange', reloadOnce, { once: true });
  }
  navigator.serviceWorker.register(new URL('sw.js', import.meta.url)).catch((e) => {
    console.warn(`specdec-playground: no offline copy (${e?.message ?? e})`);
  });
}
