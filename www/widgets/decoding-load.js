// The decoding widget's speculation under load (issue 34, part 4): the report of its `load`
// experiment — one chain or tree timed against the target alone at every batch of a list — as a
// table, with the caption the core computed from the measured rows (`views::load::caption`) and
// the published serving figures it is set beside. A module of its own so that decoding.js stays
// one widget's controls and its other reports.
import { fmt, table, escapeHtml } from '../html.js';
import { tr } from '../i18n.js';
import { noisyNote, spread } from '../noise.js';
import { crossingHtml, draftsHtml } from './offload.js';

const x = (v) => (v == null ? '—' : `${fmt(v, 2)}×`);
const us = (v) => fmt(v, v >= 100 ? 0 : 1);

/** One published serving system's figures, in words: "1.81× at batch 2, ≈ 1.3–1.4× at batch 64". */
function publishedHtml(p) {
  const on = p.gpu ? `${p.gpu}/${p.system}` : p.system;
  const points = p.points.map(([b, lo, hi]) => (lo === hi ? `${lo}×` : `≈ ${lo}–${hi}×`) + tr(` at batch ${b}`, `（批 ${b}）`)).join(tr(', ', '，'));
  return tr(`published (EAGLE-3 paper), ${on}, chain of ${p.chain}: ${points}`, `已发表（EAGLE-3 论文），${on}，长 ${p.chain} 的链：${points}`);
}

/** A measured speedup's spread over its timed groups (of `batch` prompts each), as the tables
 * write it after the speedup: one group has none, and "IQR 0.00" would claim a steadiness. */
export function spreadHtml(w) {
  if (Math.ceil(w.prompts / w.batch) < 2) return tr(' (one group: no spread)', '（只有一组：没有离散度可言）');
  return tr(` (IQR ${fmt(w.measured_speedup_iqr, 2)})`, `（IQR ${fmt(w.measured_speedup_iqr, 2)}）`);
}

/** A caution where a speedup's spread over its groups of prompts is over half itself (IQR); it
 * says what moves calls as long as these (a call of microseconds, or of milliseconds). `what`
 * names a row: its γ, or its batch. */
export function noisyHtml(rows, what = (w) => tr(`γ ${w.gamma}`, `γ ${w.gamma}`)) {
  const noisy = rows.filter((w) => Math.ceil(w.prompts / w.batch) >= 2 && spread(w.measured_speedup, w.measured_speedup_iqr));
  if (!noisy.length) return '';
  const which = rows.length > 1 ? tr(` at ${noisy.map(what).join(', ')}`, `（${noisy.map(what).join('、')}）`) : '';
  return noisyNote('dec-noisy', [[`the speedup${which} varies by more than half itself from one group of prompts to the next (IQR)`,
    `加速比${which}在各组提示词之间的波动（IQR）超过它自身的一半`]], Math.min(...noisy.map((w) => w.target_call_us ?? Infinity)));
}

/** The sweep over the batch: a row per batch, what the rows say, and the published figures. */
export function loadHtml(r) {
  const target = r.target_width > 1 ? tr(`the target ×${r.target_width}`, `目标模型 ×${r.target_width}`) : tr('the trained target', '训练好的目标模型');
  const head = tr(['batch', 'prompts', 'plain µs / token', 'speculative µs / token', 'τ tokens a call (drafts accepted)', 'T(n)/T(1)', 'c', 'predicted (measured costs)', 'measured'],
    ['批大小', '提示词', '普通 µs / token', '推测 µs / token', 'τ 每次调用的 token（接受的草稿）', 'T(n)/T(1)', 'c', '预测（实测开销）', '实测']);
  const rows = r.rows.map((w) => [w.batch, w.prompts, us(w.plain_us_per_token), us(w.speculative_us_per_token),
    `${fmt(w.tokens_per_call, 2)} (${fmt(w.accepted_per_call, 2)})`, fmt(w.verify_over_target, 2), fmt(w.c, 3), x(w.predicted_speedup_curve),
    `<b>${x(w.measured_speedup)}</b>${spreadHtml(w)}`]);
  const summary = tr(`<p class="numbers">${escapeHtml(r.method)} on <b>${r.backend}</b>, ${target}, timed against the target alone at every batch (each batch decodes its prompts that many at a time, at least one whole batch; the time per token counts every row of the batch).</p>`,
    `<p class="numbers">${escapeHtml(r.method)}，<b>${r.backend}</b>，${target}，每个批大小都与目标模型单独解码对比计时（每个批大小把提示词按该批大小分组一起解码；每 token 时间计入批里的每一行）。</p>`);
  return noisyHtml(r.rows, (w) => tr(`batch ${w.batch}`, `批 ${w.batch}`)) + summary + table([head].concat(rows), 'dec-load') + crossingHtml(r.rows[0].transfer, r.rows[0].target_call_us) + draftsHtml(r.rows[0])
    + `<p class="numbers dec-load-caption">${escapeHtml(r.caption)}</p>`
    + `<ul class="numbers dec-published">${r.published.map((p) => `<li>${publishedHtml(p)}</li>`).join('')}</ul>`;
}
