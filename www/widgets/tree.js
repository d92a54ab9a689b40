// Token-tree builder (lecture §4.2–4.3; exercise 5; the slide example).
import { table, escapeHtml } from '../html.js';
import { tr } from '../i18n.js';
import { declare, menuOptions } from '../engine.js';

export default {
  name: 'tree',
  title: 'Token trees: merge, expand, linearise, mask',
  intro: 'Type several drafts’ sequences (tokens separated by spaces, sequences by |) to merge them, or an expansion configuration '
    + 'such as ⟨2,2,1⟩. The tree is laid out depth-first; each token may attend only to its ancestors, and its position id is its depth.',
  title_zh: '令牌树：合并、展开、线性化、掩码',
  intro_zh: '输入几个草稿的序列（token 用空格分隔，序列用 | 分隔）来合并，或者输入 ⟨2,2,1⟩ 这样的扩展配置。树按深度优先排列；每个 token 只能看到它的祖先，位置编号就是它的深度。',
  // Lecture §4.2–4.3: SpecInfer Figure 3, its experiments' tree, and exercise 5.
  presets: [
    { label: 'Figure 3 · ⟨2,2,1⟩', label_zh: '图 3 · ⟨2,2,1⟩', values: { mode: 'config', config: '<2,2,1>', root: 'machine' } },
    { label: '⟨1,1,1,1⟩ · a chain, 5 nodes with the root', label_zh: '⟨1,1,1,1⟩ · 一条链，含根 5 个节点', values: { mode: 'config', config: '<1,1,1,1>', root: 'r' } },
    { label: '⟨2,2,2,2⟩ · 31 nodes with the root', label_zh: '⟨2,2,2,2⟩ · 含根 31 个节点', values: { mode: 'config', config: '<2,2,2,2>', root: 'r' } },
    { label: 'SpecInfer · ⟨1,1,3,1,1,1,1,1⟩', label_zh: 'SpecInfer · ⟨1,1,3,1,1,1,1,1⟩', values: { mode: 'config', config: '<1,1,3,1,1,1,1,1>', root: 'machine' } },
    { label: 'Exercise 5 · [a b c] [a b d e] [f g]', label_zh: '练习 5 · [a b c] [a b d e] [f g]', values: { mode: 'paths', paths: 'a b c | a b d e | f g', root: 'r' } },
  ],
  controls: [
    declare({ key: 'mode', label: 'build from', label_zh: '构造方式', type: 'select', value: 'paths' }, menuOptions('tree.mode')),
    { key: 'paths', label: 'sequences', label_zh: '序列', type: 'text', value: 'learning algorithm | learning system design | translation model', showIf: (s) => s.mode === 'paths' },
    { key: 'root', label: 'root', label_zh: '根', type: 'text', value: 'machine' },
    { key: 'config', label: 'configuration', label_zh: '扩展配置', type: 'text', value: '<2,2,1>', showIf: (s) => s.mode === 'config' },
    // Node indices up to the core's default budget (TreeParams', the largest tree the page asks for,
    // counting the root as node 0). The page highlights node 4 to start with; the core's default
    // highlights none.
    declare({ key: 'highlight', label: 'highlight node #', label_zh: '高亮节点 #', type: 'range', step: 1, value: 4 },
      { min: (d) => d.tree.highlight.min, max: (d) => d.tree.defaults.budget }),
  ],
  // The highlight slider spans the nodes of the tree on screen. When the tree shrinks under the
  // highlighted node, the browser moves the thumb to the new end; the state, its label and the
  // drawing follow it there (otherwise the label would name a node the tree no longer has).
  after(s, ui, view) {
    const n = view.querySelectorAll('table.order tbody tr').length;
    const input = ui.root.querySelector('[data-key="highlight"]');
    if (n === 0) return;
    input.max = String(n - 1);
    if (Number(s.highlight) > n - 1) {
      ui.set('highlight', n - 1);
      ui.redraw();
    }
  },
  render(s, ui) {
    const v = ui.call('token_tree', { mode: s.mode, paths: s.paths, root: s.root, config: s.config, highlight: Number(s.highlight) });
    const rows = [['#', 'token', tr('depth (position)', '深度（位置）'), tr('sees', '可见')]].concat(v.order.map((t, i) => [
      i, escapeHtml(t), v.depths[i], v.mask[i].map((b, j) => (b ? escapeHtml(v.order[j]) : '')).filter(Boolean).join(' ')]));
    return [
      tr(`<p class="numbers"><b>${v.nodes}</b> speculated nodes vs <b>${v.sequence_tokens}</b> tokens decoded path by path
        (${(v.sequence_tokens / Math.max(1, v.nodes)).toFixed(2)}×)</p>`,
      `<p class="numbers"><b>${v.nodes}</b> 个推测节点，逐条路径解码则要 <b>${v.sequence_tokens}</b> 个 token
        （${(v.sequence_tokens / Math.max(1, v.nodes)).toFixed(2)}×）</p>`),
      `<div class="plots">${v.svg_tree}${v.svg_mask}</div>`,
      `<details${v.order.length <= 16 ? ' open' : ''}><summary>${tr('Depth-first order', '深度优先顺序')}</summary>${table(rows, 'order')}</details>`,
    ];
  },
};
