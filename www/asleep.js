// A widget asleep: what someone's notes show of a widget before the reader asks for it, and what
// the course page shows of a model widget until it comes near the viewport (app.js). Its title
// and introduction and a Run button that says what it will download, marked data-waiting="load";
// neither the wasm module nor the weights are downloaded until that Run. A <specdec-widget>
// without `autorun` and embed.html?autorun=0 (an iframe in notes) both sleep so, and each loads
// the engine its own way when Run is pressed (the element once for the page's elements, the
// embed for its one widget); this module only draws the waiting state and leaves it.
import { inLang, t, tr } from './i18n.js';

/**
 * Shows `widget`'s title and introduction (hidden by widget.css when `compact`) and a Run button
 * in `root`, in `lang`, and marks it data-waiting="load"; a click on Run calls `run()`. `shared`:
 * the engine Run loads serves every widget of the page (the elements'), which the text says.
 */
export function sleep(root, widget, { lang, compact, shared, near = false }, run) {
  root.classList.add('widget');
  root.classList.toggle('compact', compact);
  root.dataset.waiting = 'load';
  // Which: a model widget of the course page wakes by itself when it comes near the viewport.
  if (near) root.dataset.wakes = 'near';
  root.innerHTML = inLang(lang, () => `<header><h2>${t(widget, 'title')}</h2></header><p class="intro">${t(widget, 'intro')}</p>
    <div class="dec-run"><p class="numbers sw-status" aria-live="polite">${waitingText(widget, shared, near)}</p>
    <button type="button" class="sw-run">${tr('Run', '运行')}</button></div>`);
  root.querySelector('.sw-run').addEventListener('click', () => run());
}

/** What a widget asleep says it waits for, in the page's language (inside `inLang`). */
function waitingText(widget, shared, near) {
  // The course page: a model widget wakes by itself when it comes near.
  if (near) {
    return tr('This widget runs the trained models: their engine (a WebAssembly module and the weights, 1.7 MB, once for every model widget on this page) loads when it comes into view, or now with Run.',
      '这个组件运行训练好的模型：它们的引擎（一个 WebAssembly 模块和模型权重，共 1.7 MB，本页所有模型组件共用一份）在组件进入视野时加载，也可以现在按“运行”。');
  }
  if (!widget.models) {
    return shared
      ? tr('Nothing is downloaded or computed until you ask: Run downloads the playground’s engine for the lecture’s mathematics (a WebAssembly module of 0.2 MB, once for every widget on this page) and draws this widget.',
        '在你要求之前，什么都不下载、不计算：按“运行”会下载这个演示讲解数学部分的引擎（一个 0.2 MB 的 WebAssembly 模块，本页所有组件共用一份），然后画出这个组件。')
      : tr('Nothing is downloaded or computed until you ask: Run downloads the playground’s engine for the lecture’s mathematics (a WebAssembly module of 0.2 MB) and draws this widget.',
        '在你要求之前，什么都不下载、不计算：按“运行”会下载这个演示讲解数学部分的引擎（一个 0.2 MB 的 WebAssembly 模块），然后画出这个组件。');
  }
  return shared
    ? tr('Nothing is downloaded or computed until you ask: Run downloads the playground’s engine (its WebAssembly module and the trained models’ weights, once for every widget on this page) and draws this widget.',
      '在你要求之前，什么都不下载、不计算：按“运行”会下载这个演示的引擎（它的 WebAssembly 模块和训练好的模型权重，本页所有组件共用一份），然后画出这个组件。')
    : tr('Nothing is downloaded or computed until you ask: Run downloads the playground’s engine (its WebAssembly module and the trained models’ weights) and draws this widget.',
      '在你要求之前，什么都不下载、不计算：按“运行”会下载这个演示的引擎（它的 WebAssembly 模块和训练好的模型权重），然后画出这个组件。');
}

/** The engine is asked for: Run is disabled and says, in `lang`, that the engine is loading. */
export function wake(root, lang) {
  root.querySelector('.sw-run')?.setAttribute('disabled', '');
  const status = root.querySelector('.sw-status');
  if (status) status.textContent = inLang(lang, () => tr('Loading the engine…', '正在加载引擎…'));
  delete root.dataset.waiting;
  delete root.dataset.wakes;
}
