// How to speculate on this device, measured (lecture §4.7; issue 54, items 1, 3 and 4): the
// analytic widget above chooses from a device's T(k), c and an acceptance vector given; this one
// measures all three here — T(1) … T(K) of the target's calls, draft B's call over T(1), every
// draft's acceptance vector — chooses, then decodes the chosen chain and tree beside EAGLE-2 at a
// fixed 8 nodes, each speedup beside its prediction and this device's limit. Where the browser
// offers WebGPU it can measure both plans (the CPU module; a WebGPU target with its drafts on the
// CPU) and say which is faster here, and why. Runs in a worker, only when asked (it times this
// device).
import { fmt, table, escapeHtml } from '../html.js';
import { runInWorker } from '../runbar.js';
import { tr } from '../i18n.js';
import { declare, menuOptions, targetSize, widthOptions } from '../engine.js';
import { beyond, noisyNote, spread } from '../noise.js';

const x = (v) => `${fmt(v, 2)}×`;
const ms = (us) => (us >= 1000 ? `${fmt(us / 1000, 2)} ms` : `${fmt(us, 0)} µs`);
const list = (p) => p.slice(0, 1 + Math.max(0, p.findLastIndex((y) => y >= 0.0005))).map((y) => y.toFixed(3)).join(', ');
const PLANS = { cpu: ['flex'], wgpu: ['wgpu'], both: ['flex', 'wgpu'] };
// widget root → the token of its latest run (after()): an older run's late callbacks do nothing.
const current = new WeakMap();

/** T(k)/T(1) of `times` at k = 2, 4, 8, 16 and K, in words. */
function curveText(times) {
  const K = times.length;
  const ks = [2, 4, 8, 16, 32].filter((k) => k < K).concat([K]);
  return ks.map((k) => `T(${k})/T(1) = ${fmt(times[k - 1] / times[0], 2)}`).join(tr(', ', '，'));
}

/** The rows decoded: the chosen chain, the chosen tree, EAGLE-2 at 8 nodes. */
function rowsOf(v) {
  const { chain, tree } = v.chosen;
  const chainName = chain.gamma === 0 ? tr(`chain γ ${chain.timed_gamma} (none pays: timed to show it)`, `链 γ ${chain.timed_gamma}（都不划算：计时以示代价）`) : tr(`chosen chain, γ ${chain.gamma}`, `选出的链，γ ${chain.gamma}`);
  const treeName = tree.dp.nodes === 0 ? tr('a tree of 1 node (none pays: timed to show it)', '1 个节点的树（都不划算：计时以示代价）')
    : tr(`chosen tree, ${tree.nodes} node${tree.nodes === 1 ? '' : 's'}, depth ${tree.depth} (${escapeHtml(tree.labels.join(' '))})`, `选出的树，${tree.nodes} 个节点，深度 ${tree.depth}（${escapeHtml(tree.labels.join(' '))}）`);
  return [
    { name: chainName, t: chain, predicted: chain.timed_predicted_speedup ?? chain.predicted_speedup, k: chain.timed_gamma + 1 },
    { name: treeName, t: tree, predicted: tree.predicted_speedup, k: tree.nodes + 1 },
    { name: tr('EAGLE-2, a fixed 8 nodes', 'EAGLE-2，固定 8 个节点'), t: v.fixed_eagle2_8, predicted: null, k: null },
  ];
}

/** Within 15% of the prediction, or how far off and what the run's own calls say of it. */
function predictionSentence(name, r, v) {
  if (r.predicted == null) return '';
  const off = r.t.measured_speedup / r.predicted - 1;
  const paid = v.times_us[r.k - 1] / v.times_us[0];
  const head = Math.abs(off) <= 0.15
    ? tr(`${name}: measured ${x(r.t.measured_speedup)}, within ${fmt(Math.abs(off) * 100, 0)}% of the ${x(r.predicted)} predicted before it ran.`,
      `${name}：实测 ${x(r.t.measured_speedup)}，与运行前预测的 ${x(r.predicted)} 相差 ${fmt(Math.abs(off) * 100, 0)}% 以内。`)
    : tr(`${name}: measured ${x(r.t.measured_speedup)}, ${fmt(Math.abs(off) * 100, 0)}% ${off < 0 ? 'under' : 'over'} the ${x(r.predicted)} predicted before it ran.`,
      `${name}：实测 ${x(r.t.measured_speedup)}，比运行前预测的 ${x(r.predicted)} ${off < 0 ? '低' : '高'} ${fmt(Math.abs(off) * 100, 0)}%。`);
  const why = Math.abs(off) > 0.15 && Math.abs(r.t.verify_over_target / paid - 1) > 0.05
    ? tr(` In decoding its verification call cost ${fmt(r.t.verify_over_target, 2)} one-token calls against ${fmt(paid, 2)} calibrated beforehand: on this run’s own calls the formula gives ${x(r.t.predicted_speedup_curve)}.`,
      ` 解码中它的验证调用花了 ${fmt(r.t.verify_over_target, 2)} 次单 token 调用的时间，而事先校准的是 ${fmt(paid, 2)}：按这次运行自己的调用，公式给出 ${x(r.t.predicted_speedup_curve)}。`)
    : '';
  return head + why;
}

/** The better choice against EAGLE-2 at 8 nodes, said only beyond the spread of EAGLE-2's time
 * over the better's, prompt by prompt (the four decode each prompt in turn); first, whether
 * either beats the target alone. */
export function versusSentence(v) {
  const [chain, tree, eagle] = rowsOf(v);
  const best = tree.t.measured_speedup > chain.t.measured_speedup ? tree : chain;
  const [a, b] = [best.t.measured_speedup, eagle.t.measured_speedup];
  const { ratio, iqr } = v.versus_eagle2;
  const per = tr(`EAGLE-2’s time ${fmt(ratio, 2)}× the better’s, IQR ${fmt(iqr, 2)} prompt by prompt`, `EAGLE-2 的时间是较好者的 ${fmt(ratio, 2)} 倍，逐个提示词的 IQR ${fmt(iqr, 2)}`);
  const slower = (r) => beyond(1, 0, r.t.measured_speedup, r.t.measured_speedup_iqr);
  if (v.chosen.chain.gamma === 0 && v.chosen.tree.dp.nodes === 0) {
    // Nothing chosen: the rows timed show what speculating would cost; slower only beyond the spread.
    return [chain, tree, eagle].every(slower)
      ? tr(`The choice is plain decoding, and the runs agree: the smallest chain and tree (timed to show what they cost) and EAGLE-2 at 8 nodes are all slower than the target alone (${x(chain.t.measured_speedup)}, ${x(tree.t.measured_speedup)}, ${x(b)}).`,
        `选择是不推测，运行结果也一致：最小的链和树（计时以示代价）和 8 个节点的 EAGLE-2 都比目标模型单独解码慢（${x(chain.t.measured_speedup)}、${x(tree.t.measured_speedup)}、${x(b)}）。`)
      : tr(`The choice is plain decoding; timed to show what they cost, the smallest chain and tree measured ${x(chain.t.measured_speedup)} and ${x(tree.t.measured_speedup)}, EAGLE-2 at 8 nodes ${x(b)} — not all of them beyond their spread from 1.`,
        `选择是不推测；计时以示代价，最小的链和树实测 ${x(chain.t.measured_speedup)} 和 ${x(tree.t.measured_speedup)}，8 个节点的 EAGLE-2 ${x(b)}——并非都超出了与 1 之间的波动。`);
  }
  if (slower(best) && slower(eagle)) {
    return tr(`Here both the better choice (${x(a)}) and EAGLE-2 at a fixed 8 nodes (${x(b)}) are slower than the target alone, beyond their spreads: the prediction was too high for this run (see above).`,
      `这里较好的选择（${x(a)}）和固定 8 个节点的 EAGLE-2（${x(b)}）都比目标模型单独解码慢，超出了波动：这次运行的预测偏高（见上）。`);
  }
  if (beyond(ratio, iqr, 1, 0)) {
    return tr(`The better choice is faster than EAGLE-2 at a fixed 8 nodes (${x(a)} against ${x(b)}; ${per}): sized for this device, a plain draft model’s chain or tree beats a stronger draft at a size chosen for another.`,
      `较好的选择比固定 8 个节点的 EAGLE-2 快（${x(a)} 对 ${x(b)}；${per}）：按这台设备选的大小，普通草稿模型的链或树胜过按别的设备选大小的更强草稿。`);
  }
  if (beyond(1, 0, ratio, iqr)) {
    // The reason only where the numbers show it: more tokens a call.
    const why = eagle.t.tokens_per_call > best.t.tokens_per_call
      ? tr(`: its draft reads the target’s own features, and its τ of ${fmt(eagle.t.tokens_per_call, 2)} beats ${fmt(best.t.tokens_per_call, 2)} by more than its larger calls cost`,
        `：它的草稿读目标模型自身的特征，τ = ${fmt(eagle.t.tokens_per_call, 2)} 胜过 ${fmt(best.t.tokens_per_call, 2)}，多出的比它更大的调用所花的还多`)
      : '';
    return tr(`EAGLE-2 at a fixed 8 nodes is faster here (${x(b)} against ${x(a)}; ${per})${why}.`,
      `这里固定 8 个节点的 EAGLE-2 更快（${x(b)} 对 ${x(a)}；${per}）${why}。`);
  }
  return tr(`The better choice and EAGLE-2 at a fixed 8 nodes cannot be told apart in this run (${x(a)} and ${x(b)}; ${per}: within the spread).`,
    `这次运行分不出较好的选择和固定 8 个节点的 EAGLE-2（${x(a)} 和 ${x(b)}；${per}：在波动之内）。`);
}

/** Measured, then the same τ and drafting priced at the run's own calls, at bare calls and at this
 * device's limit; a gap is put down to something only where the next figure is higher (a noisy
 * run can order them otherwise), and the kernel's only where the limit is above the measured too
 * (a limit no higher than it is the measured figure itself: the kernel is not shown to cost anything). */
function limitSentence(v) {
  const [chain, tree] = rowsOf(v);
  const best = tree.t.measured_speedup > chain.t.measured_speedup ? tree : chain;
  const t = best.t;
  const bare = v.bare_times_us[best.k - 1] / v.bare_times_us[0];
  const atBare = t.tokens_per_call / (bare + t.drafting);
  const up = (lo, hi) => hi > lo * 1.02;
  const parts = tr([`measured <b>${x(t.measured_speedup)}</b>`,
    `at this run’s own calls (its call of ${best.k} tokens cost ${fmt(t.verify_over_target, 2)} one-token calls) ${x(t.predicted_speedup_curve)}${up(t.measured_speedup, t.predicted_speedup_curve) ? ' — the difference is time outside the model calls' : ''}`,
    `at the bare calls (${fmt(bare, 2)}) ${x(atBare)}${up(t.predicted_speedup_curve, atBare) ? ' — that gap is decoding’s own work around each call (the cache, the masks, the distributions)' : ''}`,
    `at this device’s limit <b>${x(t.limit_speedup)}</b>${up(Math.max(atBare, t.predicted_speedup_curve, t.measured_speedup), t.limit_speedup) ? ' — that gap is the kernel’s' : ''}`],
  [`实测 <b>${x(t.measured_speedup)}</b>`,
    `按这次运行自己的调用（它 ${best.k} 个 token 的调用花了 ${fmt(t.verify_over_target, 2)} 次单 token 调用的时间）${x(t.predicted_speedup_curve)}${up(t.measured_speedup, t.predicted_speedup_curve) ? '——差别是模型调用之外的时间' : ''}`,
    `按单独计时的调用（${fmt(bare, 2)}）${x(atBare)}${up(t.predicted_speedup_curve, atBare) ? '——这段差距是解码在每次调用周围自己的工作（缓存、掩码、分布）' : ''}`,
    `按这台设备的极限 <b>${x(t.limit_speedup)}</b>${up(Math.max(atBare, t.predicted_speedup_curve, t.measured_speedup), t.limit_speedup) ? '——这段差距属于内核' : ''}`]);
  return tr(`Where the time goes, for the better choice (τ = ${fmt(t.tokens_per_call, 2)}, ${fmt(t.drafting, 3)} one-token calls of drafting a step): ${parts.join('; ')}. `
    + `The limit prices each call at max(weights / bandwidth, k · FLOPs / peak), the bandwidth (${fmt(v.bandwidth_gbs, 1)} GB/s) and peak (${fmt(v.peak_gflops, 1)} GFLOP/s) measured here, never steeper in k than this device’s own calls, and never under what was measured. `
    + `The rest is the draft’s: its drafting and a τ below what a perfect draft gives. The best choice at the limit, with this vector and c: ${x(v.limit_speedup)}.`,
  `较好的选择的时间花在哪里（τ = ${fmt(t.tokens_per_call, 2)}，每步起草花 ${fmt(t.drafting, 3)} 次单 token 调用的时间）：${parts.join('；')}。`
    + `极限把每次调用按 max(权重 / 带宽, k · FLOPs / 峰值) 计，带宽（${fmt(v.bandwidth_gbs, 1)} GB/s）和峰值（${fmt(v.peak_gflops, 1)} GFLOP/s）都是这里实测的，随 k 增长不比这台设备自己的调用更陡，也绝不低于实测。`
    + `其余属于草稿：它的起草，以及低于完美草稿的 τ。用这个向量和 c，在极限下的最佳选择：${x(v.limit_speedup)}。`);
}

/** Every draft's acceptance vector (item 1), and what the chosen tree's decoding met a depth. */
function vectorsHtml(v) {
  const how = (h) => (h === 'mss' ? tr('MSS, children drawn without replacement', 'MSS，孩子不放回抽取') : tr('greedy', '贪心'));
  const ranks = Math.max(...v.vectors.models.map((m) => m.p.length));
  const head = [tr('draft', '草稿'), tr('verification', '验证')].concat(Array.from({ length: ranks }, (_, i) => `p${i + 1}`));
  const cells = (p) => Array.from({ length: ranks }, (_, i) => (p[i] == null ? '—' : p[i].toFixed(3)));
  const rows = v.vectors.models.map((m) => [tr(`draft ${m.draft}`, `草稿 ${m.draft}`), how(m.verify)].concat(cells(m.p)))
    .concat((v.vectors.pools ?? []).map((q) => [q.boosted
      ? tr(`the boost-tuned pool of ${q.members}, one proposer (its members’ distinct guesses, in order)`, `集体提升调优的 ${q.members} 个草稿，作为一个提议者（各成员不同的猜测，按顺序）`)
      : tr(`the control pool of ${q.members} (trained without the filter)`, `对照组的 ${q.members} 个草稿（不加过滤训练）`), how('greedy')].concat(cells(q.p))))
    .concat(v.vectors.hidden.flatMap((h) => h.rows.map((p, j) => [h.draft === 'EAGLE' ? tr('EAGLE (one step ahead, every depth)', 'EAGLE（向前一步，每层都用）') : tr(`Medusa, head ${j + 1} (depth ${j + 1})`, `Medusa，第 ${j + 1} 个头（深度 ${j + 1}）`), how('greedy')].concat(cells(p)))))
    .concat(v.met_by_depth.map((p, j) => [tr(`draft B, met at depth ${j + 1} by the chosen tree`, `草稿 B，选出的树在深度 ${j + 1} 遇到的`), tr('greedy, replayed', '贪心，重放')].concat(cells(p))));
  return `<p class="numbers">${tr('Acceptance vectors measured on 200 calibration worlds, teacher-forced (p_i: the chance that the i-th ranked child is the one accepted). A draft model sees the same context at every depth, so its vector is one row; what decoding meets a depth is not (a step starts after a rejection, at the names): the last rows.',
    '接受向量在 200 个校准世界上教师强制地测得（p_i：排第 i 的孩子正是被接受那一个的概率）。草稿模型在每层看到的上下文相同，所以它的向量只有一行；解码在各层实际遇到的并不相同（每一步都从一次拒绝之后、名字那里开始）：见最后几行。')}</p>${table([head].concat(rows), 'ch-vectors')}`;
}

/** One plan's report: inputs, choice, the rows decoded and the sentences. */
export function resultHtml(v) {
  const { chain, tree } = v.chosen;
  const on = v.drafts_on ? tr(`${v.backend}, the drafts on ${v.drafts_on}`, `${v.backend}，草稿在 ${v.drafts_on} 上`) : v.backend;
  const e = v.engine;
  // The calibration's points beyond k = 1 (a one-token call is the unit), said as one list.
  const pts = e.points.filter((p) => p.k > 1);
  const and = (xs) => (xs.length < 2 ? xs.join('') : tr(`${xs.slice(0, -1).join(', ')} and ${xs.at(-1)}`, `${xs.slice(0, -1).join('、')} 和 ${xs.at(-1)}`));
  const say = (f, d) => and(pts.map((p) => fmt(f(p), d)));
  const one = pts.length === 1;
  const calibrated = pts.length === 0 ? tr('decoded by the target alone and by draft B’s chains, which gave no point: the bare curve as it is', '目标模型单独解码、草稿 B 的链解码，链没有给出校准点：单独计时的曲线照用')
    : tr(`decoded in turn by the target alone and by draft B’s ${one ? 'chain' : 'chains'} of γ ${say((p) => p.k - 1, 0)}: ${one ? 'its' : 'their'} calls, of ${say((p) => p.tokens, 1)} tokens on average, cost ${say((p) => p.decoding, 2)} one-token calls (bare: ${say((p) => p.bare, 2)})`,
      `目标模型单独解码、草稿 B 用 γ ${say((p) => p.k - 1, 0)} 的链轮流解码，${one ? '它的调用' : '它们的调用'}平均 ${say((p) => p.tokens, 1)} 个 token，${one ? '' : '分别'}花了 ${say((p) => p.decoding, 2)} 次单 token 调用的时间（单独计时 ${say((p) => p.bare, 2)}）`);
  const inputs = tr(`Measured on <b>${escapeHtml(on)}</b>, the ×${v.target_width} target. Bare calls: T(1) = ${ms(v.bare_times_us[0])}, ${curveText(v.bare_times_us)}; draft B’s call ${fmt(v.bare_draft_cost, 3)} of T(1). `
    + `Decoding pays more (calibrated on a few training prompts, ${calibrated}; draft B’s c ${fmt(e.draft_lift, 1)}× its bare one; a tree’s calls are not calibrated apart), so the choice reads T(1) = ${ms(v.times_us[0])} (the target alone’s call in decoding), ${curveText(v.times_us)}, and c = ${fmt(v.draft_cost, 3)}; draft B’s greedy vector ${list(v.vector.p)}.`,
  `在 <b>${escapeHtml(on)}</b> 上实测，×${v.target_width} 目标模型。单独计时的调用：T(1) = ${ms(v.bare_times_us[0])}，${curveText(v.bare_times_us)}；草稿 B 一次调用是 T(1) 的 ${fmt(v.bare_draft_cost, 3)}。`
    + `解码付出的更多（在几个训练提示词上校准：${calibrated}；草稿 B 的 c 是单独计时的 ${fmt(e.draft_lift, 1)} 倍；树的调用没有单独校准），所以选择依据的是 T(1) = ${ms(v.times_us[0])}（解码中目标模型单独的调用），${curveText(v.times_us)}，c = ${fmt(v.draft_cost, 3)}；草稿 B 的贪心向量 ${list(v.vector.p)}。`);
  const chainPart = chain.gamma === 0 ? tr('no chain pays', '没有哪条链划算')
    : tr(`a chain of <b>γ = ${chain.gamma}</b> (E = ${fmt(chain.expected_tokens, 2)}, ${x(chain.predicted_speedup)}; replayed on the calibration prompts, ${fmt(chain.replayed_tokens, 2)} tokens a step, ${x(chain.timed_predicted_speedup)} predicted)`,
      `<b>γ = ${chain.gamma}</b> 的链（E = ${fmt(chain.expected_tokens, 2)}，${x(chain.predicted_speedup)}；在校准提示词上重放，每步 ${fmt(chain.replayed_tokens, 2)} 个 token，预测 ${x(chain.timed_predicted_speedup)}）`);
  // The tree decoded is the DP's, improved leaf by leaf where greedy decoding replayed on the
  // calibration prompts gains; a tree of one branch is a chain, said so.
  const asChain = tree.labels.every((l) => /^1(\.1)*$/.test(l));
  const treePart = tree.dp.nodes === 0 ? tr('no tree pays', '没有哪棵树划算')
    : tr(`a tree of <b>${tree.dp.nodes} node${tree.dp.nodes === 1 ? '' : 's'}, depth ${tree.dp.depth}</b> (E = ${fmt(tree.dp.expected_tokens, 2)}, ${x(tree.dp.predicted_speedup)}), decoded after improving it on greedy decoding replayed on calibration prompts (${fmt(tree.replayed_tokens, 2)} tokens a step there, ${x(tree.predicted_speedup)} predicted)${asChain ? ': one branch, the same as a chain' : ''}`,
      `<b>${tree.dp.nodes} 个节点、深度 ${tree.dp.depth}</b> 的树（E = ${fmt(tree.dp.expected_tokens, 2)}，${x(tree.dp.predicted_speedup)}），解码前在校准提示词上重放的贪心解码里改进过（那里每步 ${fmt(tree.replayed_tokens, 2)} 个 token，预测 ${x(tree.predicted_speedup)}）${asChain ? '：只有一条枝，和链一样' : ''}`);
  const choice = chain.gamma === 0 && tree.dp.nodes === 0
    ? tr('The choice: <b>plain decoding</b> — no chain or tree pays on this device at this c.', '选择：<b>不推测</b>——在这台设备上、这个 c 下，没有哪条链或哪棵树划算。')
    : tr(`The choice: ${chainPart}; ${treePart}.`, `选择：${chainPart}；${treePart}。`);
  const rows = rowsOf(v);
  const noisy = rows.filter((r) => spread(r.t.measured_speedup, r.t.measured_speedup_iqr)).map((r) => [`the speedup of ${r.name} varied by more than half itself from prompt to prompt (IQR)`, `${r.name}的加速比在提示词之间的波动（IQR）超过它自身的一半`]);
  // More tokens in a call cannot cost less: a fall of a fifth is the device's load, and the choice
  // (made on these times) rests on it.
  const falls = v.bare_times_us.slice(1).flatMap((t, i) => (t < 0.8 * v.bare_times_us[i] ? [`k = ${i + 1} → ${i + 2}`] : []));
  if (falls.length) noisy.unshift([`T(k) fell from ${falls.join(', ')}, though more tokens cannot cost less, and the choice rests on these times`, `T(k) 在 ${falls.join('、')} 处反而变小了，而更多的 token 不会更便宜，选择又正是按这些时间做的`]);
  const body = rows.map((r) => [r.name, fmt(r.t.tokens_per_call, 2), r.predicted == null ? '—' : x(r.predicted), x(r.t.predicted_speedup_curve),
    `<b>${x(r.t.measured_speedup)}</b>`, fmt(r.t.measured_speedup_iqr, 2), x(r.t.limit_speedup), ms(r.t.us_per_token)]);
  const head = tr(['decoded', 'τ', 'predicted before', 'on this run’s curve', 'measured', 'IQR', 'limit', 'time a token'], ['解码方式', 'τ', '运行前预测', '按本次曲线', '实测', 'IQR', '极限', '每个 token 的时间']);
  const said = rows.map((r) => predictionSentence(r.name, r, v)).filter(Boolean);
  return noisyNote('ch-noisy', noisy, v.times_us[0]) + `<p class="numbers">${inputs}</p><p class="numbers">${choice}</p>`
    + table([head].concat(body), 'ch-rows')
    + said.map((p) => `<p class="numbers ch-said">${p}</p>`).join('') + `<p class="numbers ch-versus">${versusSentence(v)}</p><p class="numbers ch-limit">${limitSentence(v)}</p>` + vectorsHtml(v);
}

/** A plan's best: its chosen chain or tree, the faster by measured speedup, or plain decoding
 * where nothing was chosen (its time a token the target alone's). */
function best(v) {
  const { chain, tree } = v.chosen;
  if (chain.gamma === 0 && tree.dp.nodes === 0) return { us_per_token: chain.plain_us_per_token, measured_speedup: 1, plain: true };
  const picked = [chain.gamma > 0 && chain, tree.dp.nodes > 0 && tree].filter(Boolean);
  return picked.reduce((a, b) => (b.measured_speedup > a.measured_speedup ? b : a));
}
/** The plan whose best decoding takes the least time a token. */
const fastest = (plans) => plans.reduce((a, b) => (best(b).us_per_token < best(a).us_per_token ? b : a));

/** The faster of the plans measured (the best of each one's chain and tree, by time a token), and why. */
export function planHtml(plans) {
  if (plans.length < 2) return '';
  const [a, b] = plans.map((v) => ({ v, t: best(v) }));
  const [win, lose] = a.t.us_per_token <= b.t.us_per_token ? [a, b] : [b, a];
  const name = (p) => (p.v.drafts_on ? tr(`WebGPU with the drafts on the CPU (${p.v.backend})`, `WebGPU，草稿在 CPU 上（${p.v.backend}）`) : tr(`the CPU module (${p.v.backend})`, `CPU 模块（${p.v.backend}）`));
  const t1 = (p) => ms(p.v.bare_times_us[0]);
  const close = !beyond(lose.t.us_per_token, null, win.t.us_per_token, null);
  const head = close
    ? tr(`Both plans measured: ${name(win)} and ${name(lose)} are about as fast here (${ms(win.t.us_per_token)} and ${ms(lose.t.us_per_token)} a token).`,
      `两种方案都测了：这里 ${name(win)} 和 ${name(lose)} 差不多快（每个 token ${ms(win.t.us_per_token)} 和 ${ms(lose.t.us_per_token)}）。`)
    : tr(`Both plans measured: <b>${name(win)} is faster here</b>, ${ms(win.t.us_per_token)} a token against ${ms(lose.t.us_per_token)}.`,
      `两种方案都测了：<b>这里 ${name(win)} 更快</b>，每个 token ${ms(win.t.us_per_token)}，对 ${ms(lose.t.us_per_token)}。`);
  const gain = (p) => (p.t.plain ? tr('plain decoding (nothing chosen)', '不推测（没有选中）') : x(p.t.measured_speedup));
  const why = tr(` Why: a one-token call of the target takes ${t1(win)} on ${name(win)} against ${t1(lose)} on ${name(lose)}, and the choice there gives ${gain(win)} against ${gain(lose)}.`
    + (lose.v.drafts_on || win.v.drafts_on ? ' On an emulated GPU (SwiftShader, as in CI) the WebGPU target runs on this CPU with none of its speed; on a real GPU the target’s calls are nearly flat in k, so larger trees pay there.' : ''),
  `原因：目标模型一次单 token 调用在 ${name(win)} 上要 ${t1(win)}，在 ${name(lose)} 上要 ${t1(lose)}；选择在前者给出 ${gain(win)}，在后者给出 ${gain(lose)}。`
    + (lose.v.drafts_on || win.v.drafts_on ? '在模拟的 GPU 上（SwiftShader，CI 里就是），WebGPU 目标模型其实在这颗 CPU 上运行，没有 GPU 的速度；在真正的 GPU 上，目标模型的调用随 k 几乎不变，所以更大的树在那里划算。' : ''));
  return `<p class="numbers ch-plan">${head}${why}</p>`;
}

export default {
  name: 'choosehere',
  // It runs the trained models: it mounts once their engine is loaded (app.js, specdec-widget.js).
  models: true,
  title: 'How to speculate on this device, measured',
  intro: 'The widget above chooses from figures given; this one measures them here: T(1) … T(K) of the target’s calls, c (draft B’s call over T(1)) and every draft’s acceptance vector. '
    + 'It then chooses the chain’s γ and the tree’s (n, d), decodes both on held-out prompts beside EAGLE-2 at a fixed 8 nodes, and sets each speedup beside its prediction and this device’s limit — '
    + 'how much of what you see is the method, how much the kernel, how much the machine.',
  title_zh: '在这台设备上怎么推测：实测',
  intro_zh: '上面的组件按给出的数字做选择；这个组件在这里把它们测出来：目标模型调用的 T(1) … T(K)、c（草稿 B 一次调用相对 T(1)）和每个草稿的接受向量。'
    + '然后选出链的 γ 和树的 (n, d)，在留出的提示词上解码，并与固定 8 个节点的 EAGLE-2 对比，每个加速比旁边都有它的预测和这台设备的极限——'
    + '看到的结果里多少归方法，多少归内核，多少归机器。',
  presets: [
    { label: '×16 on the CPU', label_zh: 'CPU 上的 ×16', values: { width: '16', plan: 'cpu', prompts: '10' }, note: '76 MB a step, as a real model’s: a short chain or tree pays', note_zh: '每步 76 MB，和真实模型一样：短链或小树划算' },
    { label: '×16: CPU or WebGPU?', label_zh: '×16：CPU 还是 WebGPU？', values: { width: '16', plan: 'both', prompts: '10' }, note: 'both plans measured, the faster named', note_zh: '两种方案都测，说出哪种更快' },
    { label: '×1 (in cache)', label_zh: '×1（在缓存里）', values: { width: '1', plan: 'cpu', prompts: '10' }, note: 'draft B costs most of a target call: plain decoding may win', note_zh: '草稿 B 几乎和目标调用一样贵：不推测可能更快' },
  ],
  controls: [
    declare({ key: 'width', label: 'target width', label_zh: '目标模型宽度', type: 'select', value: '16' }, widthOptions),
    // Both where the browser offers WebGPU (else the CPU module alone, said so).
    declare({ key: 'plan', label: 'plan', label_zh: '方案', type: 'select', value: 'both' }, menuOptions('choosehere.plan')),
    declare({ key: 'nodes', label: 'largest tree (nodes)', label_zh: '最大的树（节点数）', type: 'select', value: '16' }, menuOptions('choosehere.nodes')),
    declare({ key: 'prompts', label: 'prompts', label_zh: '提示词数', type: 'select', value: '10' }, menuOptions('choosehere.prompts')),
  ],
  asks: true,
  cost: (s) => tr(`times the ×${s.width} target (${targetSize(s.width)}) for calls of 1 to ${Number(s.nodes) + 1} tokens, measures every draft’s acceptance vector (the boost-tuned pools’, 0.40 MB, downloaded once), then decodes ${s.prompts} prompts four ways in turn, twice over${s.plan === 'both' ? ', once per plan' : ''}: seconds on the trained target, a minute or more on a wide one`,
    `为 ×${s.width} 目标模型（${targetSize(s.width)}）计时 1 到 ${Number(s.nodes) + 1} 个 token 的调用，测出每个草稿的接受向量（小模型池的权重 0.40 MB，只下载一次），再用四种方式轮流解码 ${s.prompts} 个提示词，共两遍${s.plan === 'both' ? '，每种方案一遍' : ''}：训练好的目标模型几秒钟，加宽的一分钟以上`),
  render() {
    return [`<div class="dec-run"><button type="button" class="ch-go">${tr('Measure', '测量')}</button>
      <p class="numbers ch-status" aria-live="polite"></p>
      <progress class="ch-progress" max="1" value="0" hidden></progress> <button type="button" class="ch-cancel" hidden>${tr('Cancel', '取消')}</button>
      <button type="button" class="ch-retry" hidden>${tr('Retry', '重试')}</button></div>`,
    '<p class="note ch-note" hidden></p>', '<div class="ch-result"></div>', '<p class="numbers ch-during" hidden></p>', '<div class="plots ch-plot"></div>'];
  },
  after(s, ui, view) {
    // This drawing's own run: a later change (or Measure) starts another, and what this one
    // still reports then (its second plan, the adapter's answer) is dropped.
    const token = {};
    current.set(ui.root, token);
    const live = () => current.get(ui.root) === token;
    const state = { ...s }; // the values this run measures, not the controls' later ones
    const backends = PLANS[state.plan] ?? PLANS.cpu;
    const done = [];
    let alone = ''; // why the second plan was not measured
    const show = (v) => {
      // A WebGPU plan that ran on the CPU (its note says why) is no second plan.
      const plans = done.filter((d, j) => j === 0 || !d.note);
      const faster = plans.length > 1 ? fastest(plans) : v;
      view.querySelector('.ch-result').innerHTML = planHtml(plans) + (alone ? `<p class="numbers ch-plan">${alone}</p>` : '')
        + plans.map((d) => (plans.length > 1 ? `<h3 class="ch-plan-head">${escapeHtml(d.drafts_on ? 'WebGPU' : 'CPU')}</h3>` : '') + resultHtml(d)).join('');
      // The figures of the faster plan (the one this device should use).
      view.querySelector('.ch-plot').innerHTML = [faster.svg_heat, faster.svg_tree, faster.svg_curve, faster.svg_vectors].join('');
    };
    const run = (i) => {
      const params = { backend: backends[i], target_width: Number(state.width), max_nodes: Number(state.nodes), prompts: Number(state.prompts), figure_width: ui.figureWidth() };
      runInWorker(ui, view, 'ch', 'likesworld_choose', params, 'measure', (v) => {
        done.push(v);
        show(v);
        if (i + 1 < backends.length) {
          // The second plan only where this browser has a WebGPU adapter: without one it would
          // run on the CPU module again (the worker's note would say why).
          const adapter = globalThis.navigator?.gpu ? navigator.gpu.requestAdapter().catch(() => null) : Promise.resolve(null);
          adapter.then(ui.inLang((a) => {
            if (!live()) return;
            if (a) return run(i + 1);
            alone = tr('This browser offers no WebGPU adapter: the CPU module is the only plan here.', '这个浏览器没有可用的 WebGPU 适配器：这里只有 CPU 模块一种方案。');
            show(v);
            view.querySelector('.ch-status').textContent = tr(`Measured on ${v.backend}.`, `在 ${v.backend} 上测完。`);
          }));
          return tr(`Measured on ${v.backend}; then the next plan…`, `在 ${v.backend} 上测完；接着测下一种方案…`);
        }
        return tr(`Measured on ${v.backend}.`, `在 ${v.backend} 上测完。`);
      });
    };
    run(0);
  },
};
