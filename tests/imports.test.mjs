// Checks of the page's module structure that need no browser: no import cycle among the page's
// scripts (www/, the generated pkg/ aside), and no page script or test file over 500 lines. A
// cycle makes the order in which modules run depend on which one a page loads first, and a module
// then reads another's exports before they exist; a long file is one that mixes jobs.
//
// The import graph is read from the sources: static `import … from '…'`, `export … from '…'` and
// bare `import '…'`, and dynamic `import('…')` with a literal relative path (a dynamic import
// with a computed path, such as the wasm module's, is not followed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const www = join(repo, 'www');
const MAX_LINES = 500;

/** Every .js and .mjs file under `dir`, recursively, skipping node_modules and pkg. */
function scripts(dir, recurse = true) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return recurse && e.name !== 'node_modules' && e.name !== 'pkg' ? scripts(path) : [];
    return /\.m?js$/.test(e.name) ? [path] : [];
  });
}

const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"`;]*?\sfrom\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;

/** The www/ modules that `file` imports (relative paths only; pkg/ and other origins aside). */
function importsOf(file) {
  // Comment lines aside (`//`, and `/*`, `*` of a block comment), where an example may name a module.
  const source = readFileSync(file, 'utf8').replace(/^\s*(\/\/|\/\*|\*).*$/gm, '');
  const out = new Set();
  for (const m of source.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (!spec.startsWith('.')) continue;
    const target = resolve(dirname(file), spec.split('?')[0]);
    if (target.startsWith(www + '/') && !relative(www, target).startsWith('pkg/')) out.add(target);
  }
  return [...out];
}

/** Every cycle in `graph` (a Map of node → nodes), each as a path that ends where it starts. */
function cycles(graph) {
  const found = [];
  const state = new Map(); // node → 'open' while on the stack, 'done' after
  const stack = [];
  const visit = (node) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return found;
}

test('no import cycle among the page’s modules', () => {
  const files = scripts(www);
  assert.ok(files.some((f) => f.endsWith('/widget.js')), 'www/widget.js is found');
  const graph = new Map(files.map((f) => [f, importsOf(f)]));
  // The graph must hold the edges the page is built on, or the check would pass on a broken parse.
  assert.ok(graph.get(join(www, 'app.js')).includes(join(www, 'widget.js')), 'app.js → widget.js is read');
  for (const [from, to] of graph) for (const t of to) assert.ok(graph.has(t), `${relative(repo, from)} imports ${relative(repo, t)}, which does not exist`);
  const found = cycles(graph).map((c) => c.map((f) => relative(www, f)).join(' → '));
  assert.deepEqual(found, [], `import cycles:\n${found.join('\n')}`);
});

/** Lines as `wc -l` counts them, and a last line without its newline too. */
const lineCount = (text) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

test(`no page script or test file is over ${MAX_LINES} lines`, () => {
  const files = [...scripts(www), ...scripts(join(repo, 'tests'), false).filter((f) => f.endsWith('.mjs'))];
  const long = files
    .map((f) => [relative(repo, f), lineCount(readFileSync(f, 'utf8'))])
    .filter(([, n]) => n > MAX_LINES)
    .map(([f, n]) => `${f}: ${n} lines`);
  assert.deepEqual(long, [], `over ${MAX_LINES} lines (split by what each part does):\n${long.join('\n')}`);
});

test('the offline service worker keeps every file of the page (sw.js’ shell lists each one)', () => {
  const sw = readFileSync(join(www, 'sw.js'), 'utf8');
  const list = sw.match(/const SHELL = \[([\s\S]*?)\];/);
  assert.ok(list, 'sw.js declares its SHELL');
  const shell = new Set([...list[1].matchAll(/'([^']+)'/g)].map((m) => m[1]));
  assert.ok(shell.has('app.js') && shell.has('widgets/theory.js'), 'the shell is read');
  const files = readdirSync(www, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => relative(www, join(e.parentPath ?? e.path, e.name)))
    .filter((f) => /\.(js|html|css|svg)$/.test(f) && !f.startsWith('pkg/') && f !== 'sw.js');
  const missing = files.filter((f) => !shell.has(f));
  assert.deepEqual(missing, [], `not kept offline (add them to sw.js' SHELL): ${missing.join(' ')}`);
  // And nothing it lists is gone (an install fails as a whole on one missing file).
  const gone = [...shell].filter((f) => f !== './' && !f.startsWith('pkg/') && !files.includes(f));
  assert.deepEqual(gone, [], `listed in sw.js but not in www/: ${gone.join(' ')}`);
});

// The core declares what a control offers (`presets`, www/declare.js): a widget that typed a
// range's bounds or a select's options would drift from the core unseen. A slider's bounds come
// from `declare` (a step is the page's own), and every select's options from the core's menus
// (`menuOptions`) or its lists (the widths, the devices, the budgets).
test('no widget types a range’s bounds or a select’s options', () => {
  const typed = [];
  for (const file of scripts(join(www, 'widgets'))) {
    const code = readFileSync(file, 'utf8').split('\n').map((l) => l.replace(/\/\/.*$/, '')).join('\n');
    for (const m of code.matchAll(/\b(min|max):\s*-?\d[\d.e]*/g)) typed.push(`${relative(repo, file)}: ${m[0]}`);
    // Options are a function of the declarations, never a list written here.
    for (const m of code.matchAll(/\boptions(_zh)?:\s*(?!\(d\)\s*=>)[^\s,}]+/g)) typed.push(`${relative(repo, file)}: ${m[0]}`);
    // Nor a choice written inside such a function: ['auto', 'Auto (this device)'].
    for (const m of code.matchAll(/\boptions(_zh)?:\s*\(d\)\s*=>[^\n]*?\[\s*'[^']*'\s*,\s*'[^']*'\s*\]/g)) typed.push(`${relative(repo, file)}: ${m[0]}`);
    for (const name of ['ndarray', 'prompt-lookup', 'mss-top-k', 'eagle-balanced', 'eagle-2-ttt']) {
      if (new RegExp(`\\[\\s*'${name}'\\s*,`).test(code)) typed.push(`${relative(repo, file)}: an option '${name}'`);
    }
  }
  assert.deepEqual(typed, [], 'typed in a widget instead of read from presets');
});
