//! The path reader of the folder-cycle test (`layers.rs`): each file of a crate as a module, the
//! paths its code names, where they lead, and the cycles inside a folder.

use super::{code, sources};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One source file as a module: its path of module names (`lab/hidden/eagle.rs` is
/// `[lab, hidden, eagle]`, `lab/mod.rs` is `[lab]`), whether it is a folder's `mod.rs` (or the
/// crate root), and its code without comments and test modules.
pub struct File {
    pub module: Vec<String>,
    pub folder: bool,
    pub code: String,
}

/// Every file of the crate rooted at `root` (`lib.rs` or `main.rs` there), skipping `skip`.
pub fn files(root: &Path, skip: Option<&str>) -> Vec<File> {
    let mut paths = Vec::new();
    sources(root, &mut paths);
    let mut out = Vec::new();
    for path in paths {
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if skip.is_some_and(|s| rel.starts_with(s)) {
            continue;
        }
        let mut parts: Vec<String> = rel
            .trim_end_matches(".rs")
            .split('/')
            .map(String::from)
            .collect();
        let last = parts.pop().unwrap();
        let folder = matches!(last.as_str(), "mod" | "lib" | "main");
        if !folder {
            parts.push(last);
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let code = code(text.split("#[cfg(test)]\nmod tests").next().unwrap());
        out.push(File {
            module: parts,
            folder,
            code,
        });
    }
    out
}

/// Splits code into identifiers and the punctuation a path is made of.
pub fn tokens(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
            continue;
        }
        if c == '"' {
            // A string literal is no path.
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            continue;
        }
        if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push("::".into());
            i += 2;
            continue;
        }
        if !c.is_whitespace() {
            out.push(c.to_string());
        }
        i += 1;
    }
    out
}

/// Every path in `tokens`, groups expanded: `use a::{b, c::{d, self}}` gives `a::b`, `a::c::d`
/// and `a::c`.
pub fn paths(tokens: &[String]) -> Vec<Vec<String>> {
    fn is_ident(t: &str) -> bool {
        t.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
    }
    /// Reads one path from `i` with `prefix` before it, pushing every full path into `out`;
    /// returns where it ended.
    fn read(
        tokens: &[String],
        mut i: usize,
        mut prefix: Vec<String>,
        out: &mut Vec<Vec<String>>,
    ) -> usize {
        loop {
            match tokens.get(i).map(String::as_str) {
                Some("{") => {
                    i += 1;
                    loop {
                        match tokens.get(i).map(String::as_str) {
                            Some("}") => return i + 1,
                            Some(",") => i += 1,
                            Some(_) => i = read(tokens, i, prefix.clone(), out),
                            None => return i,
                        }
                    }
                }
                Some("self")
                    if !prefix.is_empty()
                        && tokens.get(i + 1).map(String::as_str) != Some("::") =>
                {
                    out.push(prefix);
                    return i + 1;
                }
                Some(t) if is_ident(t) => {
                    prefix.push(t.to_string());
                    i += 1;
                    if tokens.get(i).map(String::as_str) == Some("::") {
                        i += 1;
                        continue;
                    }
                    out.push(prefix);
                    return i;
                }
                _ => {
                    if !prefix.is_empty() {
                        out.push(prefix);
                    }
                    return i;
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let starts = is_ident(&tokens[i])
            && tokens.get(i + 1).map(String::as_str) == Some("::")
            && (i == 0 || tokens[i - 1] != "::");
        if starts {
            i = read(tokens, i, Vec::new(), &mut out);
        } else {
            i += 1;
        }
    }
    out
}

/// The module path a path in `file` names, absolute, if it names one of this crate's modules
/// (`crate::`, `super::`, `self::`, or a child module by its own name in a `mod.rs`).
pub fn resolve(
    file: &File,
    path: &[String],
    children: &BTreeSet<Vec<String>>,
) -> Option<Vec<String>> {
    let first = path.first()?.as_str();
    let mut base = file.module.clone();
    let rest: &[String] = match first {
        "crate" => {
            base.clear();
            &path[1..]
        }
        "self" => &path[1..],
        "super" => {
            let ups = path.iter().take_while(|s| *s == "super").count();
            base.truncate(base.len().checked_sub(ups)?);
            &path[ups..]
        }
        _ if file.folder => {
            let mut child = file.module.clone();
            child.push(first.to_string());
            if !children.contains(&child) {
                return None;
            }
            path
        }
        _ => return None,
    };
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The import cycles inside any folder of the crate made of `all`, each as the files it runs
/// through.
pub fn folder_cycles(all: &[File]) -> Vec<String> {
    let reexport = |l: &str| {
        let l = l.trim_start();
        l.starts_with("pub use ") || l.starts_with("pub(crate) use ")
    };
    let modules: BTreeSet<Vec<String>> = all.iter().map(|f| f.module.clone()).collect();
    // What each folder's `mod.rs` re-exports: (folder, item) → the child it comes from.
    let mut reexports: BTreeMap<(Vec<String>, String), String> = BTreeMap::new();
    for f in all.iter().filter(|f| f.folder) {
        for line in f.code.lines().filter(|l| reexport(l)) {
            for p in paths(&tokens(line)) {
                if let (Some(child), Some(item)) = (p.first(), p.last()) {
                    reexports.insert((f.module.clone(), item.clone()), child.clone());
                }
            }
        }
    }
    // Edges between the nodes of each folder: a child module of it, or its own `mod.rs` ("").
    let mut edges: BTreeMap<Vec<String>, BTreeSet<(String, String)>> = BTreeMap::new();
    for f in all {
        let own: String = f
            .code
            .lines()
            .filter(|l| !(f.folder && reexport(l)))
            .collect::<Vec<_>>()
            .join("\n");
        for p in paths(&tokens(&own)) {
            let Some(target) = resolve(f, &p, &modules) else {
                continue;
            };
            // Every folder holding both the file and what it names, where they differ.
            for depth in 0..f.module.len().max(1) {
                let folder = &f.module[..depth.min(f.module.len())];
                if !modules.contains(folder) || target.len() < depth || target[..depth] != *folder {
                    continue;
                }
                let node_of = |m: &[String]| -> String {
                    if m.len() == depth {
                        return String::new();
                    }
                    let mut child = folder.to_vec();
                    child.push(m[depth].clone());
                    if modules.contains(&child) {
                        m[depth].clone()
                    } else {
                        // An item of the folder's mod.rs, or one it re-exports from a child.
                        reexports
                            .get(&(folder.to_vec(), m[depth].clone()))
                            .cloned()
                            .unwrap_or_default()
                    }
                };
                let (from, to) = (
                    if f.folder && f.module.len() == depth {
                        String::new()
                    } else {
                        node_of(&f.module)
                    },
                    node_of(&target),
                );
                if from != to {
                    edges.entry(folder.to_vec()).or_default().insert((from, to));
                }
            }
        }
    }
    let mut cycles = Vec::new();
    for (folder, e) in &edges {
        let nodes: BTreeSet<&String> = e.iter().flat_map(|(a, b)| [a, b]).collect();
        // Depth-first search for a back edge, reporting the cycle it closes.
        fn visit<'a>(
            n: &'a String,
            e: &'a BTreeSet<(String, String)>,
            stack: &mut Vec<&'a String>,
            done: &mut BTreeSet<&'a String>,
            out: &mut Option<Vec<String>>,
        ) {
            if out.is_some() || done.contains(n) {
                return;
            }
            if let Some(i) = stack.iter().position(|s| *s == n) {
                *out = Some(
                    stack[i..]
                        .iter()
                        .map(|s| s.to_string())
                        .chain([n.clone()])
                        .collect(),
                );
                return;
            }
            stack.push(n);
            for (_, b) in e.iter().filter(|(a, _)| a == n) {
                visit(b, e, stack, done, out);
            }
            stack.pop();
            done.insert(n);
        }
        let mut done = BTreeSet::new();
        for n in nodes {
            let mut found = None;
            visit(n, e, &mut Vec::new(), &mut done, &mut found);
            if let Some(c) = found {
                let name = |s: &String| if s.is_empty() { "mod.rs" } else { s }.to_string();
                let c: Vec<String> = c.iter().map(name).collect();
                cycles.push(format!("{}/: {}", folder.join("/"), c.join(" → ")));
                break;
            }
        }
    }
    cycles
}
