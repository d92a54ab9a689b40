//! The crate's modules form layers (ARCHITECTURE.md, `lib.rs`): every `crate::` path in a
//! module's code names a module of a strictly lower layer, so no import runs upward and there is
//! no cycle; the engine (`decode`) has no burn in it, tests included, and meets the models only
//! in `lab`. Read from the sources, as a newcomer would draw them.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Each top-level module and its layer, bottom (0) to top.
const LAYERS: [(&str, u32); 17] = [
    ("i18n", 0),
    ("error", 1),
    ("clock", 1),
    ("sampling", 2),
    ("tree", 2),
    ("theory", 2),
    ("likesworld", 3),
    ("plot", 3),
    ("roofline", 3),
    ("toy", 3),
    ("decode", 4),
    ("model", 4),
    ("lab", 5),
    ("views", 6),
    ("wasm", 7),
    ("Error", 1), // the crate root's re-export of `error::Error`
    ("lib", 8),
];

fn layer(module: &str) -> u32 {
    LAYERS
        .iter()
        .find(|(m, _)| *m == module)
        .unwrap_or_else(|| panic!("module {module} has no layer in this test's table"))
        .1
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without comments (a doc link is not an import).
fn code(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules named by `crate::…` paths in `code`, `use crate::{a, b::c}` included.
fn named(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `use crate::{a::x, b, c::{d, e}}`: the first segment of each top-level item.
            let (mut depth, mut item_start) = (0, true);
            for (j, ch) in group.char_indices() {
                match ch {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && (c.is_alphanumeric() || c == '_') => {
                        let word: String = group[j..]
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        out.insert(word);
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            let word: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.insert(word);
        }
    }
    out
}

/// The top-level modules named by `super::…` paths that climb out of the top-level module: in a
/// file `depth` modules deep (`decode/mod.rs` is 1, `decode/free/workloads.rs` 3), `super::`
/// taken `depth` times reaches the crate root.
fn named_via_super(code: &str, depth: usize) -> BTreeSet<String> {
    let climb = "super::".repeat(depth);
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find(&climb) {
        rest = &rest[i + climb.len()..];
        if rest.starts_with("super::") {
            continue; // climbs further than the crate root: not valid Rust, nothing to count
        }
        let word: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !word.is_empty() {
            out.insert(word);
        }
    }
    out
}

/// Every (file, its module, the module it names) of the library, test modules left out.
fn imports() -> Vec<(String, String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut out = Vec::new();
    for path in files {
        let rel = path
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel.starts_with("bin/") {
            continue; // the CLI sits above everything and names the library as `specdec::`
        }
        let module = rel.split(['/', '.']).next().unwrap().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let library = code(text.split("#[cfg(test)]\nmod tests").next().unwrap());
        // `decode/mod.rs` is the module `decode` (depth 1), `decode/engine.rs` is `decode::engine`.
        let parts: Vec<&str> = rel.trim_end_matches(".rs").split('/').collect();
        let depth = parts.len() - usize::from(matches!(parts.last(), Some(&"mod") | Some(&"lib")));
        let via_super = if depth > 0 {
            named_via_super(&library, depth)
        } else {
            BTreeSet::new()
        };
        for name in named(&library).into_iter().chain(via_super) {
            out.push((rel.clone(), module.clone(), name));
        }
    }
    out
}

#[test]
fn the_parser_finds_grouped_and_plain_paths_and_skips_comments() {
    let text = "use crate::{a::x, b, c::{d, e}};\nlet v = crate::f::g();\n// crate::h\n";
    let found: Vec<String> = named(&code(text)).into_iter().collect();
    assert_eq!(found, ["a", "b", "c", "f"]);
    // From decode/free/workloads.rs (3 deep), super::super::super:: is the crate root.
    let climbs = "use super::super::super::views::x;\nuse super::super::engine::y;\n";
    let found: Vec<String> = named_via_super(climbs, 3).into_iter().collect();
    assert_eq!(found, ["views"]);
}

#[test]
fn no_module_imports_from_its_own_layer_or_above() {
    let all = imports();
    assert!(
        all.len() > 100,
        "the sources were read: {} imports",
        all.len()
    );
    let upward: Vec<String> = all
        .iter()
        .filter(|(_, m, n)| m != n && layer(n) >= layer(m))
        .map(|(f, m, n)| {
            format!(
                "{f}: {m} (layer {}) uses {n} (layer {})",
                layer(m),
                layer(n)
            )
        })
        .collect();
    assert!(
        upward.is_empty(),
        "imports that run upward or sideways:\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_engine_has_no_burn_and_meets_the_models_only_in_the_lab() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/decode");
    let mut files = Vec::new();
    sources(&root, &mut files);
    assert!(files.len() >= 10, "decode/ was read");
    for path in &files {
        let text = code(&std::fs::read_to_string(path).unwrap());
        assert!(!text.contains("burn"), "{} uses burn", path.display());
        for name in named(&text) {
            assert!(
                !["model", "lab", "views", "wasm"].contains(&name.as_str()),
                "{} uses crate::{name}",
                path.display()
            );
        }
    }
    let model_uses_engine = imports()
        .into_iter()
        .any(|(_, m, n)| m == "model" && (n == "decode" || n == "lab"));
    assert!(!model_uses_engine, "model/ imports the engine");
}
