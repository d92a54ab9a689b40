// The widget reference: every widget, its attributes with their ranges, a copy-paste snippet and a
// live example, generated from the same control declarations the widgets mount from, so that it
// cannot drift from them. In English or Chinese, switched as the course page is (i18n.js); the
// live examples follow the page's <html lang>, as an element in someone's notes does.
import { WIDGETS } from './widgets/index.js';
import { escapeHtml } from './html.js';
import { startEngine, startModels } from './engine.js';
import './specdec-widget.js';
import { VERSION } from './version.js';
import { applyLang, wireSwitch, lang, t, tr } from './i18n.js';

applyLang();
wireSwitch(() => location.reload());

// Some ranges and choices (γ, the verification rules) are declared by the core and read from
// the engine (`declarations()` in engine.js), the model widgets' from the models' module: the
// reference waits for both, and says so if they cannot load.
let failed = null;
try {
  await startEngine();
  await startModels();
} catch (e) {
  failed = e;
}

// The snippet names this version's own folder (v<VERSION>/, which the site keeps serving after
// newer versions are published), not the root, whose files change with every publication.
const here = new URL('./', import.meta.url);
const versioned = here.pathname.endsWith(`/v${VERSION}/`) ? here : new URL(`v${VERSION}/`, here);
const script = new URL('specdec-widget.js', versioned).href;

function values(c) {
  if (c.type === 'range' || c.type === 'number') return `${c.min} … ${c.max}${c.step && c.step !== 'any' ? tr(`, step ${c.step}`, `，步长 ${c.step}`) : ''}`;
  if (c.type === 'select') return c.options.map(([v]) => `<code>${escapeHtml(v)}</code>`).join(' ');
  const cap = c.cap ?? 500;
  return tr(`text, up to ${cap} characters`, `文本，最多 ${cap} 个字符`);
}

/** An iframe of the versioned embed.html, for notes that take no script: it waits for its Run. */
function iframe(name, w) {
  const src = new URL(`embed.html?widget=${name}&autorun=0${lang() === 'zh' ? '&lang=zh' : ''}`, versioned).href;
  return `<iframe src="${escapeHtml(src)}" title="${escapeHtml(t(w, 'title'))}" width="100%" height="720" style="border: 0"></iframe>`;
}

function snippet(name, w) {
  const attrs = w.controls.map((c) => ` ${c.key}="${escapeHtml(String(c.value))}"`).join('');
  return `<script type="module" src="${script}"></script>\n<specdec-widget kind="${name}"${attrs}></specdec-widget>`;
}

const [boolean, absent] = [tr('boolean attribute', '布尔属性'), tr('absent', '无')];

/** The attributes every element has, then its controls'. */
function rows(name, w) {
  return [
    ['kind', tr('which widget', '哪个组件'), `<code>${name}</code>`, ''],
    ['hide', tr('controls to hide, comma-separated', '要隐藏的控件，逗号分隔'), w.controls.map((c) => `<code>${c.key}</code>`).join(' '), tr('none', '无')],
    ['compact', tr('no title or introduction (present or absent)', '不显示标题和介绍（有或没有）'), boolean, absent],
    ['lang', tr('the widget’s language: en, or zh (zh-CN, zh-Hans…)', '组件的语言：en，或 zh（zh-CN、zh-Hans……）'), '<code>en</code> <code>zh</code>',
      tr('the nearest <code>lang</code> (your page’s)', '最近的 <code>lang</code>（你网页的）')],
    // Every element waits for a Run before it downloads the engine; a widget that runs models (or
    // a Monte Carlo) waits for Run again unless told otherwise (the measured ones always wait).
    ['autorun', w.cost && !w.asks ? tr('load and run at once, without waiting for Run', '立即加载并运行，不等“运行”')
      : tr('load the engine and draw at once, without waiting for Run', '立即加载引擎并画出，不等“运行”'), boolean, absent],
    ...w.controls.map((c) => [c.key, escapeHtml(t(c, 'label')), values(c), `<code>${escapeHtml(String(c.value))}</code>`]),
  ];
}

function section(name, w) {
  const table = `<table class="attrs"><thead><tr>${tr(['attribute', 'what', 'values', 'default'], ['属性', '含义', '取值', '默认值']).map((h) => `<th>${h}</th>`).join('')}</tr></thead><tbody>${
    rows(name, w).map((r) => `<tr><td><code>${r[0]}</code></td><td>${r[1]}</td><td>${r[2]}</td><td>${r[3]}</td></tr>`).join('')}</tbody></table>`;
  return `<section class="doc" id="${name}" aria-labelledby="${name}-title">
    <h2 id="${name}-title"><code>${name}</code> — ${escapeHtml(t(w, 'title'))}</h2>
    <p>${t(w, 'intro')}</p>
    ${table}
    <p>${tr('Snippet', '代码片段')} <button type="button" class="copy" data-for="${name}">${tr('Copy', '复制')}</button></p>
    <pre><code class="snippet" id="${name}-snippet">${escapeHtml(snippet(name, w))}</code></pre>
    <p>${tr('Live, with every default:', '实时示例，全部取默认值：')}</p>
    <div class="live" data-kind="${name}"></div>
    <p>${tr('Or, where your notes take no script, an iframe: its state in the link (<b>Share</b> gives one); with <code>autorun=0</code> it downloads and computes nothing until a reader presses its <b>Run</b>, as the element; without it, it loads the engine as soon as your notes open.',
    '或者，讲义不能放脚本时用 iframe：状态写在链接里（<b>分享</b>会给出这样的链接）；带 <code>autorun=0</code> 时它和元素一样，在读者按下它的<b>运行</b>之前什么都不下载、不计算；不带的话，讲义一打开它就加载引擎。')}</p>
    <pre><code class="iframe-snippet" id="${name}-iframe">${escapeHtml(iframe(name, w))}</code></pre>
  </section>`;
}

const main = document.querySelector('main');
if (failed) {
  main.innerHTML = `<div role="alert" class="alert shown">${tr('Could not load the WebAssembly engine, which declares some of the widgets’ ranges:', '无法加载 WebAssembly 引擎，有些组件的范围由它声明：')} <span class="why"></span> ${tr('Reload the page to try again.', '重新加载页面再试一次。')}</div>`;
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
    b.textContent = tr('Copied', '已复制');
  } catch (_) {
    getSelection().selectAllChildren(document.getElementById(`${b.dataset.for}-snippet`));
    b.textContent = tr('Selected: press Ctrl+C', '已选中：按 Ctrl+C');
  }
});

// A live example mounts when it comes within 600 px of the view: the model widgets start workers
// and jobs, so not all at once; the first section's is on a first screen's reach.
const seen = new IntersectionObserver((entries) => {
  for (const e of entries) {
    if (!e.isIntersecting) continue;
    seen.unobserve(e.target);
    const el = document.createElement('specdec-widget');
    el.setAttribute('kind', e.target.dataset.kind);
    e.target.append(el);
  }
}, { rootMargin: '600px' });
document.querySelectorAll('.live').forEach((d) => seen.observe(d));
document.documentElement.dataset.ready = 'true';
