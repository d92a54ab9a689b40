// Per-sequence against tree-parallel decoding, measured (lecture §4.3, SpecInfer's Figure 11): one
// token tree, filled with the draft's top choices, verified by the target both ways for a batch of
// prompts — every root-to-leaf path as its own sequence on its own copy of the prompt's cache, or
// the whole tree in one call under the tree mask — with the tokens each computes (exact), both
// times, paths / tree, and whether the verdicts agree. Runs in a worker, and only when asked: it
// times this device.
import { fmt, table, escapeHtml } from '../html.js';
import { runInWorker } from '../runbar.js';
import { tr } from '../i18n.js';
import { backendOptions, declare, menuOptions, targetSize, widthOptions } from '../engine.js';
import { beyond, noisyNote, spread } from '../noise.js';


/** Figure 11 beside this run: does paths / tree rise with the batch, and where does this device differ? */
export function compareSentence(v) {
  const [first, last] = [v.rows[0], v.rows[v.rows.length - 1]];
  // A difference the sentences state must stand out of the calls' spread (noise.js `beyond`):
  // the ratio's IQR, from its two times' relative IQRs added (null for rows without timings).
  const iqr = (x) => (x.tree_iqr_us == null || x.paths_iqr_us == null ? null : x.ratio * (x.tree_iqr_us / x.tree_us + x.paths_iqr_us / x.paths_us));
  const over = (x, b) => beyond(x.ratio, iqr(x), b, 0);
  // A tree per prompt (EAGLE-2): the largest batch's own counts, exact, instead of one tree's.
  const bound = last.tokens_paths / last.tokens_tree;
  const one = v.rows.length < 2;
  const here = one
    ? tr(`Here tree-parallel verification is <b>${fmt(first.ratio, 2)}×</b> as fast at batch ${first.batch}`,
      `在这里，批 ${first.batch} 时按序列验证的耗时是树形并行验证的 <b>${fmt(first.ratio, 2)} 倍</b>`)
    : tr(`Here tree-parallel verification is <b>${fmt(first.ratio, 2)}×</b> as fast at batch ${first.batch} and <b>${fmt(last.ratio, 2)}×</b> at batch ${last.batch}`,
      `在这里，按序列验证的耗时在批 ${first.batch} 时是树形并行验证的 <b>${fmt(first.ratio, 2)} 倍</b>，批 ${last.batch} 时是 <b>${fmt(last.ratio, 2)} 倍</b>`);
  let trend;
  if (one) {
    trend = tr('; measure several batch sizes to compare the trend with SpecInfer’s Figure 11 (comparable at small batch, up to 1.8× at large batch).',
      '；测几个批大小，才能把趋势和 SpecInfer 的图 11 比较（小批时相当，大批时最多快 1.8 倍）。');
  } else if (Math.max(last.ratio / first.ratio, first.ratio / last.ratio) > 1.1 && !beyond(last.ratio, iqr(last), first.ratio, iqr(first)) && !beyond(first.ratio, iqr(first), last.ratio, iqr(last))) {
    trend = tr(`: the ratio moves with the batch, but within its calls’ spread (IQR), so no trend can be read from this run — measure again on a quiet device to compare it with SpecInfer’s Figure 11 (comparable at small batch, up to 1.8× at large batch).`,
      '：比值随批大小有变化，但在调用时间的波动（IQR）之内，这次运行看不出趋势——在空闲的设备上再测一次，再和 SpecInfer 的图 11 比较（小批时相当，大批时最多快 1.8 倍）。');
  } else if (last.ratio > first.ratio * 1.1) {
    trend = tr(': the ratio rises with the batch, as in SpecInfer’s Figure 11 (comparable at small batch, up to 1.8× at large batch).',
      '：比值随批大小上升，和 SpecInfer 的图 11 一样（小批时相当，大批时最多快 1.8 倍）。');
  } else if (last.ratio < first.ratio / 1.1) {
    trend = tr(': the ratio falls with the batch — unlike SpecInfer’s Figure 11, where it rises (comparable at small batch, up to 1.8× at large batch).',
      '：比值随批大小下降——和 SpecInfer 的图 11 不同，那里它上升（小批时相当，大批时最多快 1.8 倍）。');
  } else {
    trend = tr(': the ratio stays about level with the batch — unlike SpecInfer’s Figure 11, where it rises (comparable at small batch, up to 1.8× at large batch).',
      '：比值几乎不随批大小变化——和 SpecInfer 的图 11 不同，那里它上升（小批时相当，大批时最多快 1.8 倍）。');
  }
  const gpu = v.backend === 'wgpu';
  const device = gpu ? tr('this WebGPU device', '这台 WebGPU 设备') : tr(`this CPU (${escapeHtml(v.backend)})`, `这颗 CPU（${escapeHtml(v.backend)}）`);
  // A chain or a tree of one level: no node lies on two paths, so both ways compute the same tokens.
  const sameTokens = bound < 1.005;
  const small = first.ratio > 1.15 && !over(first, 1)
    ? tr(` At batch ${first.batch} per sequence took ${fmt(first.ratio, 2)}× as long, but within its calls’ spread (IQR): this run cannot tell the two apart there.`,
      `批 ${first.batch} 时按序列验证的耗时是 ${fmt(first.ratio, 2)} 倍，但在调用时间的波动（IQR）之内：这次运行在那里分不出两者。`)
    : first.ratio > 1.15 && sameTokens
    ? tr(` Unlike Figure 11, the per-sequence way is already slower at batch ${first.batch}, though here it computes no more tokens: what it adds is a copy of the prompt’s cache for every path, each path a sequence of its own.`,
      `和图 11 不同，按序列验证在批 ${first.batch} 时就已经更慢，尽管这里它并没有多算 token：多出来的是每条路径一份提示词缓存的复制，每条路径都是一个单独的序列。`)
    : first.ratio > 1.15
    ? tr(` Unlike Figure 11, the per-sequence way is already slower at batch ${first.batch}: on ${device} a call’s time grows with the tokens it computes even when it is small, where Figure 11’s GPU has idle lanes that hide the extra tokens of a small batch.`,
      `和图 11 不同，按序列验证在批 ${first.batch} 时就已经更慢：在${device}上，哪怕调用很小，它的时间也随计算的 token 数增长；而图 11 的 GPU 在小批时有空闲的计算单元，把多出来的 token 藏起来了。`)
    : tr(` At batch ${first.batch} the two are comparable, as in Figure 11: a call this small costs reading the weights and its fixed work, not its tokens.`,
      `批 ${first.batch} 时两者相当，和图 11 一样：这么小的调用，花的是读权重和固定开销，而不是 token。`);
  const counts = v.prompt_trees
    ? tr(`${last.tokens_paths} instead of ${last.tokens_tree} at batch ${last.batch}, a tree per prompt`, `批 ${last.batch} 时 ${last.tokens_paths} 个而不是 ${last.tokens_tree} 个，每个提示词一棵树`)
    : tr(`${v.path_tokens} instead of ${v.nodes} per prompt`, `每个提示词 ${v.path_tokens} 个而不是 ${v.nodes} 个`);
  const each = v.prompt_trees ? tr(`${last.tokens_tree} at batch ${last.batch}`, `批 ${last.batch} 时 ${last.tokens_tree} 个`) : tr(`${v.nodes} per prompt`, `每个提示词 ${v.nodes} 个`);
  const tokens = sameTokens ? tr(` Per sequence computes as many tokens as the tree here (${each}: no node lies on two paths), so the time ratio measures what the copies of the prompt’s cache cost.`,
    `这里按序列验证算的 token 和树一样多（${each}：没有节点同时在两条路径上），所以时间比量的是复制提示词缓存的开销。`)
    : tr(` Per sequence computes ${fmt(bound, 2)}× the tokens (${counts}), and also copies the prompt’s cache once per path; once a call is bound by its arithmetic the time ratio approaches that token ratio${last.ratio > bound * 1.1 && over(last, bound) ? ', and here it goes beyond it (the copies of the cache and the padded rows cost too)' : ''}.`,
    `按序列验证要算 ${fmt(bound, 2)} 倍的 token（${counts}），还要为每条路径复制一份提示词的缓存；一旦调用受算力限制，时间比就趋向这个 token 比${last.ratio > bound * 1.1 && over(last, bound) ? '，这里还超过了它（缓存的复制和补齐的行也要花时间）' : ''}。`);
  return `<p class="numbers">${here}${trend}${small}${tokens}</p>`;
}

/** EAGLE-2's trees, one per prompt: each prompt's nodes and path tokens, and what the means say. */
function perPrompt(v) {
  if (!v.prompt_trees) return '';
  const each = v.prompt_trees.map((t) => `${t.nodes}/${t.path_tokens}`).join(', ');
  return tr(`EAGLE-2 grew a tree of its own after each of the ${v.prompt_trees.length} prompts, on the target’s features (nodes / path tokens: ${each}); the counts below are their means, the table’s are exact. `,
    `EAGLE-2 在目标模型的特征上，为 ${v.prompt_trees.length} 个提示词各长出一棵树（节点数 / 路径 token 数：${each}）；下面的数是它们的平均，表里的数是精确的。`);
}

/** The batches whose calls, either way, spread over half their median. */
export function noisyBatches(v) {
  const noisy = v.rows.filter((x) => spread(x.tree_us, x.tree_iqr_us) || spread(x.paths_us, x.paths_iqr_us)).map((x) => x.batch);
  return noisyNote('tp-noisy', noisy.length ? [[`at batch ${noisy.join(', ')} the calls varied by more than half their median (IQR)`, `批 ${noisy.join('、')} 时调用时间的波动（IQR）超过中位数的一半`]] : [],
    Math.min(...v.rows.map((x) => x.tree_us)));
}

function resultHtml(v) {
  const same = v.rows.every((x) => x.identical);
  const time = (t, iqr) => `${fmt(t, 0)}${tr(` (IQR ${fmt(iqr, 0)})`, `（IQR ${fmt(iqr, 0)}）`)}`;
  const rows = v.rows.map((x) => [x.batch, x.tokens_tree, x.tokens_paths, time(x.tree_us, x.tree_iqr_us), time(x.paths_us, x.paths_iqr_us), fmt(x.ratio, 2),
    x.identical ? tr('identical', '相同') : tr('DIFFERENT', '不同')]);
  return noisyBatches(v) + compareSentence(v)
    + `<p class="numbers">${perPrompt(v)}${tr(`Tree ${escapeHtml(v.tree)}: <b>${v.nodes}</b> nodes computed once by tree-parallel decoding, <b>${v.path_tokens}</b> tokens over its ${v.paths} root-to-leaf paths by per-sequence decoding (the longest ${v.longest_path}); target ×${v.target_width} on ${escapeHtml(v.backend)}, each time the median of at least ${v.repeats} runs. `,
      `树 ${escapeHtml(v.tree)}：树形并行解码把 <b>${v.nodes}</b> 个节点各算一次；按序列解码在 ${v.paths} 条从根到叶的路径上一共算 <b>${v.path_tokens}</b> 个 token（最长 ${v.longest_path}）；目标模型 ×${v.target_width}，在 ${escapeHtml(v.backend)} 上，每个时间是至少 ${v.repeats} 次运行的中位数。`)}`
    + (same
      ? tr(`Both ways gave every prompt the same verdict (greedy verification: ${fmt(v.accepted_mean, 2)} tokens accepted per prompt) and every node the same distribution (max |Δp| ${v.max_abs_diff.toExponential(1)}).</p>`,
        `两种方式给每个提示词的判定都相同（贪心验证：每个提示词接受 ${fmt(v.accepted_mean, 2)} 个 token），每个节点的分布也相同（最大 |Δp| ${v.max_abs_diff.toExponential(1)}）。</p>`)
      : tr(`<b>The two ways disagree</b> (max |Δp| ${v.max_abs_diff.toExponential(1)}): a bug, please report it.</p>`,
        `<b>两种方式不一致</b>（最大 |Δp| ${v.max_abs_diff.toExponential(1)}）：这是 bug，请报告。</p>`))
    + table([tr(['batch', 'tokens, tree', 'tokens, paths', 'tree (µs)', 'paths (µs)', 'paths / tree', 'verdicts'],
      ['批', 'token，树', 'token，路径', '树（µs）', '路径（µs）', '路径 / 树', '判定'])].concat(rows), 'tp-rows');
}

export default {
  name: 'treepaths',
  // It runs the trained models: it mounts once their engine is loaded (app.js, specdec-widget.js).
  models: true,
  title: 'Per-sequence or tree-parallel verification, measured',
  intro: 'Existing systems verify a token tree as separate sequences, one per root-to-leaf path, each with its own copy of the KV cache, so shared prefixes are computed again; SpecInfer verifies the whole tree in one call under the tree mask, with one cache. '
    + 'Here the target verifies one tree (filled with the draft’s top choices; or EAGLE-2’s dynamic tree, grown after each prompt) both ways for a batch of prompts; the table gives the tokens each way computes, both times, and checks that the verdicts are the same.',
  title_zh: '按序列验证还是树形并行验证：实测',
  intro_zh: '现有系统把令牌树拆成若干条序列来验证，每条从根到叶的路径一条，各有一份 KV 缓存，所以共享的前缀要重复计算；SpecInfer 在一次调用里用树掩码验证整棵树，只用一份缓存。'
    + '这里目标模型用两种方式为一批提示词验证同一棵树（树上填的是草稿模型的前几名候选；或者 EAGLE-2 的动态树，每个提示词各长一棵）；表里给出每种方式计算的 token 数、两种方式的时间，并检查两者的判定是否相同。',
  presets: [
    { label: '⟨2,2,1⟩', label_zh: '⟨2,2,1⟩', values: { config: '<2,2,1>' }, note: '10 nodes, 12 path tokens (1.2×)', note_zh: '10 个节点，12 个路径 token（1.2 倍）' },
    { label: '⟨2,2,2,2⟩', label_zh: '⟨2,2,2,2⟩', values: { config: '<2,2,2,2>' }, note: '30 nodes, 64 path tokens', note_zh: '30 个节点，64 个路径 token' },
    { label: 'exercise 5', label_zh: '练习 5', values: { config: 'exercise-5' }, note: 'a b c, a b d e, f g: 7 nodes, 9 path tokens', note_zh: 'a b c、a b d e、f g：7 个节点，9 个路径 token' },
    { label: 'EAGLE-2, dynamic', label_zh: 'EAGLE-2 动态树', values: { config: 'eagle-2' }, note: 'a tree per prompt, grown on the target’s features', note_zh: '每个提示词一棵树，在目标模型的特征上长出' },
    { label: 'the slides’ example', label_zh: '讲义幻灯片上的例子', values: { config: 'slides' }, note: '“learning” computed twice: 7 tokens instead of 6', note_zh: '“learning” 算两遍：7 个 token 而不是 6 个' },
  ],
  controls: [
    // Choices, not text fields: the page writes every control into its URL, and its text fields
    // together are already at the URL's budget (widget.js, TEXT_URL_MAX).
    // The defaults are the core's (`presets`: the view's own defaults).
    declare({ key: 'config', label: 'tree', label_zh: '树', type: 'select' }, { ...menuOptions('treepaths.config'), value: (d) => d.treepaths.defaults.config }),
    declare({ key: 'batches', label: 'batch sizes', label_zh: '批大小', type: 'select' }, { ...menuOptions('treepaths.batches'), value: (d) => d.treepaths.defaults.batches }),
    declare({ key: 'width', label: 'target width', label_zh: '目标模型宽度', type: 'select', value: '1' }, widthOptions),
    declare({ key: 'backend', label: 'backend', label_zh: '后端', type: 'select', value: 'flex' }, backendOptions),
  ],
  // Timing wants a quiet device: the widget waits for Measure, as the measured roofline does.
  asks: true,
  cost: (s) => tr(`verifies the tree both ways on the ×${s.width} target (${targetSize(s.width)}) on ${s.backend} at batch sizes ${s.batches}, at least six times each: seconds on the trained target, minutes on a wide one`,
    `在 ${s.backend} 上用 ×${s.width} 目标模型（${targetSize(s.width)}）按两种方式验证这棵树，批大小 ${s.batches}，每种至少六次：训练好的目标模型要几秒，加宽的要几分钟`),
  render() {
    return [`<div class="dec-run"><button type="button" class="tp-go">${tr('Measure', '测量')}</button>
      <p class="numbers tp-status" aria-live="polite"></p>
      <progress class="tp-progress" max="1" value="0" hidden></progress> <button type="button" class="tp-cancel" hidden>${tr('Cancel', '取消')}</button></div>`,
    '<p class="note tp-note" hidden></p>', '<div class="tp-result"></div>', '<p class="numbers tp-during" hidden></p>', '<div class="plots tp-plot"></div>'];
  },
  after(s, ui, view) {
    const params = { backend: s.backend, target_width: Number(s.width), config: s.config, batches: s.batches, figure_width: ui.figureWidth() };
    runInWorker(ui, view, 'tp', 'tree_vs_paths', params, 'measure', (v) => {
      view.querySelector('.tp-plot').innerHTML = v.svg;
      view.querySelector('.tp-result').innerHTML = resultHtml(v);
      return tr(`Measured on ${v.backend}.`, `在 ${v.backend} 上测完。`);
    });
  },
};
