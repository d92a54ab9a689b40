// The decoding widget's step-through: one seeded run, step by step — the draft's chain or tree
// (depth-first, with its tree mask), every check of the verification rule in force beside
// Algorithm 1's words where it departs from them, how the step ended, and p, q and the residual
// where its last token was drawn. A module of its own so that decoding.js stays one widget's
// controls and its other reports.
import { fmt, table, escapeHtml } from '../html.js';
import { tr } from '../i18n.js';

// What each verification rule does where Algorithm 1 decides (lecture §2.3): how the draft token
// is chosen, when it is accepted, what is drawn after a rejection and where the bonus comes from.
// A step is labelled by the rule in force, and where that rule departs from Algorithm 1 the label
// says so, beside Algorithm 1's own words.
const ALG1 = tr({ draft: 'x ~ q', accept: 'a = min(1, p/q)', reject: 'the residual norm(max(0, p − q))', bonus: 'the target’s p' },
  { draft: 'x ~ q', accept: 'a = min(1, p/q)', reject: '剩余分布 norm(max(0, p − q))', bonus: '目标模型的 p' });
function ruleOf(variant) {
  const own = tr({
    'argmax-draft': { draft: 'x = argmax q' }, 'accept-q-over-p': { accept: 'a = min(1, q/p)' },
    'greedy-rule': { accept: 'a = 1 if x = argmax p, else 0', reject: 'the target’s p' }, 'resample-from-target': { reject: 'the target’s p' },
    'bonus-from-draft': { bonus: 'the draft’s q' },
  }, {
    'argmax-draft': { draft: 'x = argmax q' }, 'accept-q-over-p': { accept: 'a = min(1, q/p)' },
    'greedy-rule': { accept: '若 x = argmax p 则 a = 1，否则 0', reject: '目标模型的 p' }, 'resample-from-target': { reject: '目标模型的 p' },
    'bonus-from-draft': { bonus: '草稿的 q' },
  })[variant] ?? {};
  const rule = { ...ALG1, ...own };
  // ⚠ marks a decision where the rule departs; `full` sets Algorithm 1's words beside it.
  const warn = '<span class="bad dec-departs">⚠</span>';
  rule.mark = (k) => (own[k] ? ` ${warn}` : '');
  // `say` puts a choice into its phrase, so that Algorithm 1's choice reads as a whole phrase too.
  const full = (k, say = (x) => x) => (own[k] ? `${say(own[k])} <span class="bad dec-departs">⚠ ${tr('Algorithm 1: ', '算法 1：')}${say(ALG1[k])}</span>` : say(rule[k]));
  const from = (x) => `从${x}抽取`;
  rule.summary = tr(`Draft tokens: ${full('draft')} · accept with ${full('accept')} · after a rejection, drawn from ${full('reject')} · bonus token drawn from ${full('bonus')}`,
    `草稿 token：${full('draft')} · 接受概率 ${full('accept')} · 拒绝后${full('reject', from)} · 奖励 token ${full('bonus', from)}`);
  rule.from = { reject: own.reject ? 'p' : 'residual', bonus: own.bonus ? 'q' : 'p' };
  return rule;
}

/** p, q, the residual and what the rule drew from, side by side where the step's last token was drawn. */
function compareHtml(st, rule, w) {
  if (!st.compare?.length) return '';
  const rejected = st.ending === 'residual';
  const from = rejected ? rule.from.reject : rule.from.bonus;
  // The residual is what Algorithm 1 draws after a rejection; after the bonus it means nothing.
  const cols = rejected ? ['p', 'q', 'residual'] : ['p', 'q'];
  const names = tr({ p: 'p (target)', q: 'q (draft)', residual: 'residual norm(max(0, p − q))' }, { p: 'p（目标）', q: 'q（草稿）', residual: '剩余分布 norm(max(0, p − q))' });
  const head = [tr('token', 'token'), ...cols.map((k) => names[k]), tr('drawn from (this rule)', '实际抽取的分布（本规则）')];
  const mark = (key, v) => (key === from ? `<b>${fmt(v, 3)}</b>` : fmt(v, 3));
  const rows = st.compare.map((c) => [`${w(c.token)}${c.token === st.last ? ' ←' : ''}`, ...cols.map((k) => mark(k, c[k])), fmt(c.drawn, 3)]);
  return table([head].concat(rows), 'dec-compare');
}

const depth = (tree, j) => (tree.parents[j] === null ? 1 : 1 + depth(tree, tree.parents[j]));

/** One step of the step-through, as HTML. */
export function stepHtml(v, i) {
  const st = v.steps[i];
  const w = (t) => escapeHtml(v.words[t] ?? '?');
  const before = v.prompt.concat(v.report.output.slice(0, st.before));
  const tail = before.slice(-8).map(escapeHtml).join(' ');
  const tree = st.tree;
  const chain = tree.parents.every((p, j) => (j === 0 ? p === null : p === j - 1));
  const onPath = new Set(st.path);
  // The lecture lays a tree out depth-first (ancestors first); the engine builds it level by level.
  const order = [];
  const visit = (parent) => tree.parents.forEach((p, j) => { if (p === parent) { order.push(j); visit(j); } });
  visit(null);
  // A draft on the target's hidden states: which head (Medusa) or depth (EAGLE) proposed each node.
  const by = (j) => (v.report.heads ? tr(`head ${depth(tree, j)}`, `头 ${depth(tree, j)}`) : `${tr('depth', '深度')} ${depth(tree, j)}`);
  const mark = (j) => (v.report.hidden ? `<sub>${v.report.heads ? 'h' : 'd'}${depth(tree, j)}</sub>` : '');
  const nodes = order.map((j) => `<span class="dec-node${onPath.has(j) ? ' on' : ''}" title="${by(j)}">${w(tree.tokens[j])}${mark(j)}</span>`).join(chain ? ' → ' : ' ');
  const checks = st.checks.map((c) => [c.at === 0 ? tr('root', '根') : `${tr('after', '在')} ${w(tree.tokens[c.at - 1])}${tr('', ' 之后')}`, w(c.token), fmt(c.p), c.q == null ? '—' : fmt(c.q), fmt(c.a),
    c.u == null ? '—' : fmt(c.u), c.accepted ? `<span class="ok">${tr('accepted', '接受')}</span>` : `<span class="bad">${tr('rejected', '拒绝')}</span>`]);
  const sampled = st.checks.some((c) => c.u != null);
  // The target's token was none of the children where the accepted path stopped (the root, or
  // after its last accepted token): the step ends with it, whatever was accepted before.
  const at = st.path.length ? w(tree.tokens[st.path[st.path.length - 1]]) : null;
  const own = at ? tr(`the target’s own token (no draft token after ${at} matched it)`, `目标模型自己的 token（${at} 之后没有草稿 token 与它相同）`)
    : tr('the target’s own token (no draft token matched it)', '目标模型自己的 token（没有草稿 token 与它相同）');
  const rule = ruleOf(sampled ? v.report.variant : null);
  const ending = sampled ? tr({ bonus: `every check passed: the bonus token drawn from ${rule.bonus}${rule.mark('bonus')}`,
    residual: `a check failed: drawn from ${rule.reject}${rule.mark('reject')}`, target: own },
  { bonus: `每个检验都通过：奖励 token 从${rule.bonus}抽取${rule.mark('bonus')}`,
    residual: `有一个检验没通过：从${rule.reject}抽取${rule.mark('reject')}`, target: own })[st.ending]
    : tr({ bonus: 'every check passed: the bonus token, the target’s argmax after the last one',
      residual: 'a check failed: the target’s argmax there', target: own },
    { bonus: '每个检验都通过：奖励 token 是最后一个之后目标模型的 argmax', residual: '有一个检验没通过：取那里目标模型的 argmax', target: own })[st.ending];
  let mask = '';
  if (!chain) {
    const anc = (a, b) => { for (let n = b; n !== null; n = tree.parents[n]) if (n === a) return true; return false; };
    const head = [tr('mask (depth-first)', '掩码（深度优先）')].concat(order.map((j) => w(tree.tokens[j])));
    mask = table([head].concat(order.map((r) => [w(tree.tokens[r])].concat(order.map((c) => (anc(c, r) ? '✓' : '·'))))), 'dec-mask');
  }
  const a = sampled ? `${tr('accept prob', '接受概率')} ${rule.accept}${rule.mark('accept')}` : tr('a (greedy: x = argmax p)', 'a（贪心：x = argmax p）');
  const drafted = sampled ? `<p class="numbers dec-rule">${rule.summary}</p>` : '';
  const cut = st.cut_at_end ? tr(' The output ended within this step: what the step decided after its end is not output.', '输出在这一步里结束了：这一步在结尾之后决定的内容不输出。') : '';
  const dist = `${st.last_dist.map(([t, p]) => `${w(t)} ${fmt(p, 3)}`).join(', ')} → <b>${w(st.last)}</b>`;
  const emitted = `<b>${st.emitted.map(w).join(' ')}</b>`;
  return `<p class="numbers">${tr(`Step ${i + 1} of ${v.steps.length} · context`, `第 ${i + 1} 步，共 ${v.steps.length} 步 · 上下文`)} …${tail}</p>
    <p class="dec-tree">${chain ? tr('draft chain', '草稿链') : tr('token tree', '令牌树')}${tr(': ', '：')}${nodes || tr('(none)', '（无）')}</p>${drafted}`
    + (checks.length ? table([tr(['at', 'candidate x', 'p(x)', 'q(x)', a, 'uniform u', 'verdict'], ['位置', '候选 x', 'p(x)', 'q(x)', a, '均匀 u', '结果'])].concat(checks), 'dec-checks') : '')
    + tr(`<p class="numbers">Then ${ending}: ${dist}.
      This step emitted: ${emitted} (${st.emitted.length} token${st.emitted.length > 1 ? 's' : ''} for one target call).${cut}</p>`,
    `<p class="numbers">然后${ending}：${dist}。这一步输出：${emitted}（一次目标模型调用得到 ${st.emitted.length} 个 token）。${cut}</p>`) + compareHtml(st, rule, w) + mask;
}
