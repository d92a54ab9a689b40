// Exactness lab (lecture §2.3, §2.6, §5.1, §6; demos 02.1–02.5): exact enumeration beside Monte
// Carlo; typical acceptance's trade (tokens per call against TV) when it is the rule; and the
// gallery of real bugs (exactness-gallery.js), run in a worker after its button.
import { escapeHtml, fmt, table } from '../html.js';
import { channelOf, titleOf, waitsForRun } from '../runbar.js';
import { runJob, CancelledError, coreRange, declarations, declare, menuOptions, ruleOptions, seedRange, variantName } from '../engine.js';
import { galleryPart, wireGallery } from './exactness-gallery.js';
import { tr } from '../i18n.js';

function params(s) {
  return {
    gamma: Number(s.gamma), variant: s.variant, runs: Number(s.runs),
    // Typical acceptance's thresholds (lecture §5.1): the rule `typical` takes them, and the table's typical row.
    epsilon: Number(s.epsilon), delta: Number(s.delta),
    // 'auto': the core's window, γ + 1 and at least 4 (views/exactness.rs auto_window).
    window: s.window === 'auto' ? null : Number(s.window),
    // The toy's sharpness has no control: the core's default (ToyConfig's).
    toy: { seed: Number(s.seed), sharpness: declarations().exactness.defaults.toy.sharpness, draft_noise: Number(s.noise), temperature: Number(s.temperature) },
  };
}


const pending = new WeakMap(); // widget root → { timer, job }

export default {
  name: 'exactness',
  title: 'Exactness lab: speculative sampling and its wrong variants',
  intro: 'The toy LM (vocabulary 5, p depends on the last two tokens, q = softmax(log p + noise)) lets us enumerate every branch '
    + 'of speculative decoding: the exact distribution of the first n output tokens (the window), compared with the target’s own. '
    + 'The correct rule is exact (TV ≤ 1e-12); the wrong ones are not — where the window reaches their error: a test sees only what its window covers. '
    + 'Monte Carlo alone cannot tell TV 0.02 from noise.',
  title_zh: '精确性实验：推测采样及其错误写法',
  intro_zh: '玩具模型（词表 5，p 只看最近两个 token，q = softmax(log p + 噪声)）可以枚举推测解码的每一个分支：输出前 n 个 token（窗口）的精确分布，与目标模型自己的分布比较。正确的规则是精确的（TV ≤ 1e-12），错误的写法不是——前提是窗口覆盖到它们出错的位置：测试只能看见窗口里的东西。只靠蒙特卡洛分不清 0.02 的 TV 和噪声。',
  // Lecture §2.3 (demos 02.2–02.3).
  presets: [
    { label: 'Demo 02.2 · exact, γ = 4', label_zh: '演示 02.2 · 精确枚举，γ = 4', values: { variant: 'correct', gamma: 4, window: 'auto', noise: 1.5, temperature: 1, seed: 0 }, note: 'TV 1e-16 over 5 tokens: the same distribution; bonus-from-draft is caught once the window reaches the bonus token', note_zh: '5 个 token 上 TV 1e-16：分布完全相同；窗口一覆盖到奖励 token，“奖励取自草稿”就露馅' },
    { label: 'Too short a window · γ = 4, 4 tokens', label_zh: '窗口太短 · γ = 4，4 个 token', values: { variant: 'bonus-from-draft', gamma: 4, window: '4' }, note: 'the window ends before the bonus token: the wrong rule looks exact, and the verdict says undecided', note_zh: '窗口在奖励 token 之前结束：错误的规则看起来是精确的，判定为“未判定”' },
    { label: 'Demo 02.3 · Monte Carlo, 20,000 runs', label_zh: '演示 02.3 · 蒙特卡洛，20,000 次', values: { variant: 'correct', runs: '20000' }, note: 'Monte Carlo alone cannot tell a small bias from noise', note_zh: '单靠蒙特卡洛分不清小偏差和噪声' },
    { label: 'A wrong rule · greedy rule', label_zh: '错误的规则 · 贪心规则', values: { variant: 'greedy-rule' } },
  ],
  controls: [
    // The verification rules are the core's (`presets`: the lecture's variants, then Medusa's
    // typical acceptance), read when the widget mounts.
    declare({ key: 'variant', label: 'sampler', label_zh: '采样规则', type: 'select', value: 'correct' }, ruleOptions('rules')),
    // Typical acceptance's thresholds, the core's ranges and Medusa's defaults (0.09, 0.3).
    declare({ key: 'epsilon', label: 'ε (typical)', label_zh: 'ε（典型接受）', type: 'range', step: 0.01, showIf: (s) => s.variant === 'typical' }, coreRange('exactness', 'epsilon')),
    declare({ key: 'delta', label: 'δ (typical)', label_zh: 'δ（典型接受）', type: 'range', step: 0.01, showIf: (s) => s.variant === 'typical' }, coreRange('exactness', 'delta')),
    // The sliders' ranges and defaults are the core's (`presets`: views/exactness.rs's and toy/mod.rs's
    // ranges, ExactnessParams' defaults). The page offers less of each than the core takes, the spans
    // it has always offered around the lecture's demos: γ up to 6, noise up to 3, T from 0.25 to 3.
    declare({ key: 'gamma', label: 'γ', label_zh: 'γ', type: 'range', step: 1 }, { ...coreRange('exactness', 'gamma'), max: (d) => Math.min(6, d.exactness.gamma.max) }),
    // The enumeration window: 'auto' (γ + 1, at least 4) or a number of tokens in the core's WINDOW.
    declare({ key: 'window', label: 'window (tokens)', label_zh: '窗口（token 数）', type: 'select', value: 'auto' },
      menuOptions('exactness.window')),
    declare({ key: 'noise', label: 'draft noise', label_zh: '草稿噪声', type: 'range', step: 0.05 },
      { ...coreRange('exactness', 'draft_noise', (x) => x.toy.draft_noise), max: (d) => Math.min(3, d.exactness.draft_noise.max) }),
    declare({ key: 'temperature', label: 'T', label_zh: '温度 T', type: 'range', step: 0.05 }, {
      ...coreRange('exactness', 'temperature', (x) => x.toy.temperature),
      min: (d) => Math.max(0.25, d.exactness.temperature.min), max: (d) => Math.min(3, d.exactness.temperature.max) }),
    declare({ key: 'seed', label: 'seed', label_zh: '种子', type: 'number', step: 1, value: 0 }, seedRange),
    declare({ key: 'runs', label: 'Monte Carlo runs', label_zh: '蒙特卡洛次数', type: 'select' }, { ...menuOptions('exactness.runs'), value: (d) => String(d.exactness.defaults.runs) }),
  ],
  render(s, ui) {
    const v = ui.call('exactness', params(s));
    // Typical acceptance trades exactness for tokens per call: its figure, under the TV bars.
    const typ = s.variant === 'typical' ? ui.call('typical', params(s)) : null;
    const verdict = {
      exact: `<span class="ok">${tr(`exact over ${v.window} tokens`, `前 ${v.window} 个 token 精确`)}</span>`,
      biased: `<span class="bad">${tr(`biased within ${v.window} tokens`, `前 ${v.window} 个 token 内有偏`)}</span>`,
      undecided: `<span class="undecided">${tr(`undecided: ${v.window} tokens end before the bonus token`, `未判定：${v.window} 个 token 在奖励 token 之前结束`)}</span>`,
    };
    const rows = [[tr('sampler', '采样规则'), tr(`exact TV (γ = ${v.gamma}, first ${v.window} tokens)`, `精确 TV（γ = ${v.gamma}，前 ${v.window} 个 token）`), tr('verdict', '判定')]].concat(v.tvs.map((t) => [
      variantName(t.variant), fmt(t.tv), verdict[t.verdict]]));
    return [
      tr(`<p class="numbers">mean per-context acceptance β = Σ min(p, q): <b>${fmt(v.mean_beta)}</b>
        (range ${fmt(Math.min(...v.beta_by_context), 2)}–${fmt(Math.max(...v.beta_by_context), 2)});
        tokens per target call with <b>${v.variant}</b>: exactly <b>${fmt(v.tokens_per_call)}</b>,
        ${typ ? `Algorithm 1’s ${fmt(typ.exact_tokens_per_call)} (typical acceptance keeps what Algorithm 1 would reject)` : `i.i.d. formula E(β̄, γ) = ${fmt(v.tokens_per_call_formula)}`}</p>`,
      `<p class="numbers">各上下文的平均接受率 β = Σ min(p, q)：<b>${fmt(v.mean_beta)}</b>
        （范围 ${fmt(Math.min(...v.beta_by_context), 2)}–${fmt(Math.max(...v.beta_by_context), 2)}）；
        用<b>${variantName(v.variant)}</b>时每次目标模型调用的 token 数：精确值 <b>${fmt(v.tokens_per_call)}</b>，
        ${typ ? `算法 1 是 ${fmt(typ.exact_tokens_per_call)}（典型接受会留下算法 1 会拒绝的 token）` : `i.i.d. 公式 E(β̄, γ) = ${fmt(v.tokens_per_call_formula)}`}</p>`) + table(rows, 'tvs')
        + `<p class="numbers coverage">${v.coverage}</p>`,
      `<div class="plots">${v.svg_tv}${v.svg_dist}</div>`,
      typ ? `<div class="plots typical">${typ.svg}</div><p class="numbers typical-caption">${escapeHtml(typ.caption)}</p>` : '',
      `<figure class="mc"><figcaption class="numbers mc-numbers mc-status" aria-live="polite">${tr('Monte Carlo: waiting…', '蒙特卡洛：等待中…')}</figcaption>
        <button type="button" class="mc-go" hidden>${tr('Run', '运行')}</button> <button type="button" class="mc-cancel" hidden>${tr('Cancel', '取消')}</button><progress hidden></progress><div class="mc-plot"></div></figure>`,
      `<div class="plots">${v.svg_temperature}</div>`,
      galleryPart(params(s).toy),
    ];
  },
  // Monte Carlo is the one slow part: it runs in the worker once the controls rest for 120 ms,
  // and a newer request cancels an older one. In someone's notes (an element without autorun) it
  // waits for its Run button, as a model widget does (runbar.js).
  cost: (s) => tr(`samples ${Number(s.runs).toLocaleString('en')} generations of the toy model with real coins (Monte Carlo), in a worker`,
    `在后台线程里用真实的随机数对玩具模型做 ${Number(s.runs).toLocaleString('en')} 次生成（蒙特卡洛）`),
  after(s, ui, view) {
    const p = pending.get(ui.root) ?? {};
    clearTimeout(p.timer);
    p.job?.cancel();
    const fig = view.querySelector('.mc');
    const caption = fig.querySelector('.mc-numbers');
    const cancel = fig.querySelector('.mc-cancel');
    const bar = fig.querySelector('progress');
    const busy = (on) => { cancel.hidden = !on; bar.hidden = !on; fig.setAttribute('aria-busy', String(on)); };
    wireGallery(ui, view, params(s).toy);
    if (waitsForRun(ui, fig, 'mc', () => ui.redraw())) return;
    fig.querySelector('.mc-go').hidden = true;
    // Later, in the widget's language (i18n.js).
    p.timer = setTimeout(ui.inLang(() => {
      const job = runJob('monte_carlo', { ...params(s), figure_width: ui.figureWidth() }, ui.inLang((status) => { caption.textContent = `${tr('Monte Carlo', '蒙特卡洛')}: ${status}…`; }), channelOf(ui, 'monte_carlo'), titleOf(ui));
      p.job = job;
      busy(true);
      cancel.onclick = () => job.cancel();
      job.promise.then(ui.inLang((m) => {
        caption.innerHTML = tr(`${m.runs.toLocaleString('en')} runs of <b>${m.variant}</b>: TV to the exact target <b>${fmt(m.tv_sampler)}</b>;
          as many samples of the target itself: ${fmt(m.tv_target)} (the 1/√n line, a first-order estimate: ${fmt(m.floor)}).
          Two seeds of the target differ by ${fmt(m.tv_two_seeds)}: the noise of two samples, about √2 times one's.`,
        `<b>${variantName(m.variant)}</b>运行 ${m.runs.toLocaleString('en')} 次：与精确目标分布的 TV 为 <b>${fmt(m.tv_sampler)}</b>；
          目标模型自己同样多的样本：${fmt(m.tv_target)}（1/√n 线，一阶估计：${fmt(m.floor)}）。目标模型换两个种子相差 ${fmt(m.tv_two_seeds)}：两份样本的噪声，约为一份的 √2 倍。`);
        fig.querySelector('.mc-plot').innerHTML = m.svg;
        ui.root.dataset.mc = String(Number(ui.root.dataset.mc || 0) + 1);
      }), ui.inLang((e) => {
        caption.textContent = e instanceof CancelledError ? tr('Monte Carlo: cancelled.', '蒙特卡洛：已取消。') : `${tr('Monte Carlo failed', '蒙特卡洛失败')}: ${e.message}`;
      })).finally(() => busy(false));
    }), 120);
    pending.set(ui.root, p);
  },
};
