// The widget reference: every widget, its attributes with their ranges, a copy-paste snippet and a
// live example, generated from the same control declarations the widgets mount from, so that it
// cannot drift from them.
import { WIDGETS } from './widgets/index.js';
import { escapeHtml } from './html.js';
import { ready } from './engine.js';
import './specdec-widget.js';
import { VERSION } from './version.js';

// Some ranges and choices (γ, the verification rules) are declared by the core and read from
// the engine (`declarations()` in engine.js): the reference waits for it, and says so if it
// cannot load.
let failed = null;
try {
  await ready;
} catch (e) {
  failed = e;
}

// The snippet names this version's own folder (v<VERSION>/, which the site keeps serving after
// newer versions are published), not the root, whose files change with every publication.
const here = new URL('./', import.meta.url);
const versioned = here.pathname.endsWith(`/v${VERSION}/`) ? here : new URL(`v${VERSION}/`, here);
const script = new URL('specdec-widget.js', versioned).href;

function values(c) {
  if (c.type === 'range' || c.type === 'number') return `${c.min} … ${c.max}${c.step && c.step !== 'any' ? `, step ${c.step}` : ''}`;
  if (c.type === 'select') return c.options.map(([v]) => `<code>${escapeHtml(v)}</code>`).join(' ');
  return 'text, up to 500 characters';
}

function snippet(name, w) {
  const attrs = w.controls.map((c) => ` ${c.key}="${escapeHtml(String(c.value))}"`).join('');
  return `<script type="module" src="${script}"></script>\n<specdec-widget kind="${name}"${attrs}></specdec-widget>`;
}

function section(name, w) {
  const rows = [
    ['kind', 'which widget', `<code>${name}</code>`, ''],
    ['hide', 'controls to hide, comma-separated', w.controls.map((c) => `<code>${c.key}</code>`).join(' '), 'none'],
    ['compact', 'no title or introduction (present or absent)', 'boolean attribute', 'absent'],
    ...w.controls.map((c) => [c.key, escapeHtml(c.label), values(c), `<code>${escapeHtml(String(c.value))}</code>`]),
  ];
  const table = `<table class="attrs"><thead><tr><th>attribute</th><th>what</th><th>values</th><th>default</th></tr></thead><tbody>${
    rows.map((r) => `<tr><td><code>${r[0]}</code></td><td>${r[1]}</td><td>${r[2]}</td><td>${r[3]}</td></tr>`).join('')}</tbody></table>`;
  return `<section class="doc" id="${name}" aria-labelledby="${name}-title">
    <h2 id="${name}-title"><code>${name}</code> — ${escapeHtml(w.title)}</h2>
    <p>${w.intro}</p>
    ${table}
    <p>Snippet <button type="button" class="copy" data-for="${name}">Copy</button></p>
    <pre><code class="snippet" id="${name}-snippet">${escapeHtml(snippet(name, w))}</code></pre>
    <p>Live, with every default:</p>
    <div class="live" data-kind="${name}"></div>
  </section>`;
}

const main = document.querySelector('main');
if (failed) {
  main.innerHTML = '<div role="alert" class="alert shown">Could not load the WebAssembly engine, which declares some of the widgets’ ranges: <span class="why"></span> Reload the page to try again.</div>';
  main.querySelector('.why').textContent = failed?.message ?? String(failed);
  document.documentElement.dataset.ready = 'failed';
  throw failed;
}
main.innerHTML = Object.entries(WIDGETS).map(([name, w]) => section(name, w)).join('');
document.querySelector('nav.widgets').innerHTML = Object.keys(WIDGETS).map((n) => `<a href="#${n}"><code>${n}</code></a>`).join(' · ');

main.addEventListener('click', async (ev) => {
  const b = ev.target.closest('button.copy');
  if (!b) return;
  const text = document.getElementById(`${b.dataset.for}-snippet`).textContent;
  try {
    await navigator.clipboard.writeText(text);
    b.textContent = 'Copied';
  } catch (_) {
    getSelection().selectAllChildren(document.getElementById(`${b.dataset.for}-snippet`));
    b.textContent = 'Selected: press Ctrl+C';
  }
});

// A live example mounts when it scrolls into view: the model widgets start workers and jobs.
const seen = new IntersectionObserver((entries) => {
  for (const e of entries) {
    if (!e.isIntersecting) continue;
    seen.unobserve(e.target);
    const el = document.createElement('specdec-widget');
    el.setAttribute('kind', e.target.dataset.kind);
    e.target.append(el);
  }
}, { rootMargin: '200px' });
document.querySelectorAll('.live').forEach((d) => seen.observe(d));
document.documentElement.dataset.ready = 'true';
