// The lecture's exercises 1, 3, 4, 5, 6 and 7 (§10) as checks: type an answer, and the core
// computes the truth with the same code as the other widgets. A wrong answer gets a hint, not the
// number; the worked solution appears once every part is right.
//
// What was typed and checked is this tab's work, not the link's: kept per exercise in the history
// entry (url.js's `keep`), so that the language switch, which reloads the page, and a change of
// exercise and back find the answers as they were, and the last check judged again in the new
// language. A widget in someone's notes (a <specdec-widget>) keeps nothing in its host's history.
import { escapeHtml, typeset } from '../html.js';
import { capText, cutNote } from '../values.js';
import { tr } from '../i18n.js';
import { declare, menuOptions } from '../declare.js';
import { keep, kept, urlPrefix } from '../url.js';

const prefixes = new WeakMap(); // widget root → a prefix for its input ids
let roots = 0;

/**
 * The work kept for this widget: { [exercise]: { answers, checked } }, `checked` being the
 * answers of the last check (null before one). Nothing for a widget in someone's notes.
 */
function work(root) {
  if (root.dataset.params === 'none') return { get: () => ({}), set() {} };
  const key = `${urlPrefix(root, widget)}answers`;
  const get = () => {
    const w = kept(key);
    return w && typeof w === 'object' ? w : {};
  };
  return { get, set: (exercise, entry) => keep(key, { ...get(), [exercise]: { ...get()[exercise], ...entry } }) };
}

const widget = {
  name: 'exercises',
  title: 'Exercises: check your answers',
  intro: 'The lecture’s exercises, checked by the same code that draws the other widgets. Type your answer and press '
    + 'Check (or Enter): a wrong answer gets a hint about what to compute, never the answer; the worked solution '
    + 'appears when every part is right.',
  title_zh: '练习：检查你的答案',
  intro_zh: '本讲的练习，由绘制其他组件的同一份代码来检查。输入答案后按“检查”（或回车）：答错时给出应该怎么算的提示，而不是答案；所有小题都对了才显示完整解答。',
  controls: [
    declare({ key: 'exercise', label: 'exercise', label_zh: '练习', type: 'select', value: '1' }, menuOptions('exercises.exercise')),
  ],
  render(s, ui) {
    const v = ui.call('exercise', { exercise: Number(s.exercise), answers: [] });
    if (!prefixes.has(ui.root)) prefixes.set(ui.root, `ex${(roots += 1)}`);
    const parts = v.parts.map((p, i) => {
      const id = `${prefixes.get(ui.root)}-${v.exercise}-${i}`;
      return `<div class="ex-part"><label for="${id}">${escapeHtml(p.question)}</label>
        <input id="${id}" type="text" spellcheck="false" autocomplete="off" data-part="${i}" aria-describedby="${id}-says">
        <span class="ex-says" id="${id}-says" aria-live="polite"></span></div>`;
    }).join('');
    return [
      `<form class="ex-form" data-exercise="${v.exercise}"><p class="ex-statement"><b>${tr('Exercise', '练习')} ${v.exercise}.</b> ${escapeHtml(v.statement)}</p>
        ${parts}<p><button type="submit">${tr('Check', '检查')}</button></p>
        <div class="ex-solution" aria-live="polite" hidden></div></form>`,
    ];
  },
  after(s, ui, view) {
    const form = view.querySelector('form.ex-form');
    if (!form || form.dataset.wired) return;
    form.dataset.wired = 'true';
    const mine = work(ui.root);
    const exercise = form.dataset.exercise;
    const inputs = [...form.querySelectorAll('input[data-part]')];
    const typed = () => inputs.map((x) => x.value);
    // An answer is a text like any control's: cut to the page's one cap as it is typed, and said
    // so until that answer is typed again (a check keeps the note up).
    const cuts = new Map(); // part → the note that its answer was cut
    // Clicks and keys come later: in the widget's language (i18n.js).
    form.addEventListener('input', ui.inLang((ev) => {
      const input = ev.target.closest('input[data-part]');
      if (!input) return;
      const r = capText(input.value);
      cuts.delete(input.dataset.part);
      if (!r.cut) return;
      input.value = r.text;
      const part = Number(input.dataset.part) + 1;
      cuts.set(input.dataset.part, cutNote({ label: tr(`answer ${part}`, `第 ${part} 小题的答案`) }, r.text));
      ui.note(cuts.get(input.dataset.part));
    }));
    form.addEventListener('input', () => mine.set(exercise, { answers: typed() }));
    // Judges `answers` (the inputs show them) and shows each part's verdict and the solution.
    const judge = (answers) => {
      let v;
      try {
        v = ui.call('exercise', { exercise: Number(exercise), answers });
      } catch (e) {
        ui.alert(e.message);
        return;
      }
      ui.alert('');
      if (cuts.size) ui.note([...cuts.values()].join(' · '));
      v.parts.forEach((p, i) => {
        const says = form.querySelector(`#${inputs[i].id}-says`);
        says.className = `ex-says ex-${p.verdict}`;
        // The hints and the solution carry formulas (α^i, Σ_{i=0}^{γ}): typeset, never raw.
        says.innerHTML = { right: tr('✓ right', '✓ 正确'), empty: tr('not answered yet', '还没有作答'), wrong: `✗ ${typeset(p.feedback)}`, unreadable: typeset(p.feedback) }[p.verdict];
        inputs[i].setAttribute('aria-invalid', String(p.verdict === 'wrong' || p.verdict === 'unreadable'));
      });
      const solution = form.querySelector('.ex-solution');
      solution.hidden = !v.solved;
      // No space after a full-width full stop.
      solution.innerHTML = v.solved ? tr(`Solved. ${typeset(v.solution)}`, `全部正确。${typeset(v.solution)}`) : '';
      ui.root.dataset.checks = String(Number(ui.root.dataset.checks || 0) + 1);
    };
    form.addEventListener('submit', ui.inLang((ev) => {
      ev.preventDefault();
      judge(typed());
      mine.set(exercise, { answers: typed(), checked: typed() });
    }));
    // The work kept from before a reload (the language switch) or from this exercise shown
    // earlier: the last check judged again, in this language, and the answers as typed since.
    const saved = mine.get()[exercise];
    if (saved?.checked) {
      saved.checked.forEach((a, i) => { if (inputs[i]) inputs[i].value = a; });
      judge(saved.checked);
    }
    if (saved?.answers) saved.answers.forEach((a, i) => { if (inputs[i]) inputs[i].value = a; });
  },
};

export default widget;
