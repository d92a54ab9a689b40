// An axe-style accessibility audit run inside the page (no download, no dependency): every form
// control has a label, every button and figure a name, every page a language, live regions for
// results, and every visible text at least WCAG AA contrast against its effective background
// (4.5:1, 3:1 for large text). Figures (SVG) are checked for a name, not for contrast.
export async function audit(page) {
  return page.evaluate(() => {
    const problems = [];
    const describe = (el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${el.className && typeof el.className === 'string' ? `.${el.className.trim().split(/\s+/).join('.')}` : ''}`;
    const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
    if (!document.documentElement.lang) problems.push('html has no lang');
    const named = (el) => (el.getAttribute('aria-label') ?? '').trim() || (el.getAttribute('aria-labelledby') ?? '').trim()
      || [...(el.labels ?? [])].some((l) => l.textContent.trim());
    for (const el of document.querySelectorAll('input:not([type="hidden"]), select, textarea')) {
      if (!named(el)) problems.push(`unlabelled control ${describe(el)}`);
    }
    for (const el of document.querySelectorAll('button, summary')) {
      if (!(el.textContent.trim() || el.getAttribute('aria-label'))) problems.push(`button without a name ${describe(el)}`);
    }
    for (const el of document.querySelectorAll('img')) if (!el.hasAttribute('alt')) problems.push(`img without alt ${describe(el)}`);
    for (const el of document.querySelectorAll('svg[role="img"]')) {
      if (!(el.getAttribute('aria-label') ?? '').trim()) problems.push(`figure without a name ${describe(el)}`);
    }
    for (const w of document.querySelectorAll('.widget')) {
      if (!w.querySelector('[aria-live]')) problems.push(`widget ${w.dataset.widget} has no live region`);
    }
    // Contrast.
    const rgba = (s) => (s.match(/[\d.]+/g) ?? []).map(Number);
    const lum = ([r, g, b]) => {
      const f = (c) => { const x = c / 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; };
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const background = (el) => {
      for (let e = el; e; e = e.parentElement) {
        const c = rgba(getComputedStyle(e).backgroundColor);
        if (c.length === 4 ? c[3] > 0.5 : c.length === 3) return c.slice(0, 3);
      }
      return [255, 255, 255];
    };
    const seen = new Set();
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!n.textContent.trim() || !el || seen.has(el) || el.closest('svg, option, script, style') || !visible(el)) continue;
      seen.add(el);
      const st = getComputedStyle(el);
      if (el.closest('input, select, button, textarea') || el.closest('[disabled]')) continue;
      const fg = rgba(st.color).slice(0, 3);
      const bg = background(el);
      const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
      const ratio = (a + 0.05) / (b + 0.05);
      const size = parseFloat(st.fontSize);
      const large = size >= 24 || (size >= 18.66 && Number(st.fontWeight) >= 700);
      if (ratio < (large ? 3 : 4.5)) problems.push(`contrast ${ratio.toFixed(2)} for “${n.textContent.trim().slice(0, 30)}” in ${describe(el)} (${st.color} on rgb(${bg}))`);
    }
    return problems;
  });
}
