//! The two crates' modules form layers (ARCHITECTURE.md, `lib.rs`): every `crate::` path in a
//! module's code names a module of a strictly lower layer, so no import runs upward and there is
//! no cycle (`specdec-math`'s modules sit in the bottom layers, and `specdec` re-exports them
//! under the same names); the lecture's mathematics has no burn in its dependency tree (read from
//! `cargo metadata`: the compiler then holds the line), the engine (`decode`) has no burn in it,
//! tests included, and meets the models only in `lab`. Inside every folder, the library's and the CLI's, the files' imports of each other
//! form no cycle either (a `mod.rs` counts as one more node; what it re-exports counts as the
//! file it comes from). Read from the sources, as a newcomer would draw them.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[path = "layers/reader.rs"]
mod reader;
use reader::{files, folder_cycles, paths, resolve, tokens, File};

/// Each top-level module and its layer, bottom (0) to top.
const LAYERS: [(&str, u32); 19] = [
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
    // `error`'s macros, which `#[macro_export]` puts at specdec-math's root (`error` re-exports
    // them).
    ("named", 0),
    ("choices", 0),
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

/// The two crates' sources: `specdec-math` (crate/math/src), whose modules `specdec` re-exports
/// under the same names, and `specdec` (crate/src). Their modules form one layering.
fn roots() -> [PathBuf; 2] {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    [here.join("math/src"), here.join("src")]
}

/// Every (file, its module, the module it names) of the two libraries, test modules left out.
fn imports() -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for root in roots() {
        imports_of(&root, &mut out);
    }
    out
}

fn imports_of(root: &Path, out: &mut Vec<(String, String, String)>) {
    let mut files = Vec::new();
    sources(root, &mut files);
    for path in files {
        let rel = path
            .strip_prefix(root)
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
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("math/src/decode");
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

#[test]
fn the_path_reader_expands_groups_and_resolves_super_and_children() {
    let t = tokens("use super::{a::x, b, c::{d, self}};\nlet v = crate::f::g(\"super::z\");\n");
    let found: Vec<String> = paths(&t).iter().map(|p| p.join("::")).collect();
    assert_eq!(
        found,
        [
            "super::a::x",
            "super::b",
            "super::c::d",
            "super::c",
            "crate::f::g"
        ]
    );
    let file = File {
        module: vec!["lab".into(), "hidden".into()],
        folder: true,
        code: String::new(),
    };
    let children: BTreeSet<Vec<String>> =
        [vec!["lab".to_string(), "hidden".into(), "eagle".into()]].into();
    let r = |p: &str| {
        resolve(
            &file,
            &p.split("::").map(String::from).collect::<Vec<_>>(),
            &children,
        )
    };
    assert_eq!(
        r("super::params::X"),
        Some(vec!["lab".into(), "params".into(), "X".into()])
    );
    assert_eq!(
        r("eagle::Run"),
        Some(vec![
            "lab".into(),
            "hidden".into(),
            "eagle".into(),
            "Run".into()
        ])
    );
    assert_eq!(r("burn::Tensor"), None);
    // Two files that import each other are a cycle; a parent's re-export counts as its source.
    let f = |m: &[&str], folder, code: &str| File {
        module: m.iter().map(|s| s.to_string()).collect(),
        folder,
        code: code.into(),
    };
    let circle = [
        f(&["a"], true, "pub use b::Thing;\nfn go() {}"),
        f(&["a", "b"], false, "use super::c::y;"),
        f(&["a", "c"], false, "use super::Thing;"),
    ];
    let cycles = folder_cycles(&circle);
    assert_eq!(cycles, ["a/: b → c → b"], "{cycles:?}");
    let line = [
        f(&["a"], true, "pub use b::Thing;"),
        f(&["a", "b"], false, "use super::c::y;"),
        f(&["a", "c"], false, "fn y() {}"),
    ];
    assert!(folder_cycles(&line).is_empty());
}

#[test]
fn no_folder_holds_an_import_cycle() {
    let [math, src] = roots();
    let lecture = files(&math, None);
    assert!(
        lecture.len() > 60,
        "specdec-math was read: {} files",
        lecture.len()
    );
    let library = files(&src, Some("bin/"));
    assert!(
        library.len() > 60,
        "the library was read: {} files",
        library.len()
    );
    let cli = files(&src.join("bin/specdec"), None);
    assert!(cli.len() > 5, "the CLI was read: {} files", cli.len());
    let mut cycles: Vec<String> = folder_cycles(&lecture)
        .into_iter()
        .map(|c| format!("crate/math/src: {c}"))
        .collect();
    cycles.extend(folder_cycles(&library));
    cycles.extend(
        folder_cycles(&cli)
            .into_iter()
            .map(|c| format!("bin/specdec/{c}")),
    );
    assert!(
        cycles.is_empty(),
        "import cycles inside folders:\n{}",
        cycles.join("\n")
    );
}

/// `specdec-math`'s dependency tree, every kind of dependency (normal, build, dev), as `cargo tree`
/// resolves it for this machine (the crate declares no dependency for one target only): no burn,
/// and nothing of the GPU stack.
#[test]
fn the_lectures_mathematics_has_no_burn_in_its_dependency_tree() {
    let tree = |package: &str| -> BTreeSet<String> {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let out = std::process::Command::new(cargo)
            .args(["tree", "-p", package, "-e", "normal,build,dev"])
            .args([
                "--prefix",
                "none",
                "--format",
                "{p}",
                "--locked",
                "--offline",
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("cargo tree runs");
        assert!(
            out.status.success(),
            "cargo tree: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_whitespace().next().map(String::from))
            .collect()
    };
    let math = tree("specdec-math");
    assert!(
        math.contains("plotters") && math.contains("serde"),
        "the tree was read: {math:?}"
    );
    let heavy: Vec<&String> = math
        .iter()
        .filter(|n| {
            ["burn", "cubecl", "wgpu", "gemm"]
                .iter()
                .any(|h| n.starts_with(h))
        })
        .collect();
    assert!(heavy.is_empty(), "specdec-math depends on {heavy:?}");
    // The same walk finds burn where it is: under `specdec`.
    assert!(tree("specdec").contains("burn"), "the walk reaches burn");
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("math/Cargo.toml"))
            .unwrap();
    assert!(
        !manifest.contains("[target."),
        "specdec-math declares a dependency for one target only: this test reads the host's tree"
    );
}

/// No Rust file of the workspace is over 600 lines (the crates' sources, their tests, the CLI,
/// the kernels): a longer one mixes jobs, and is split by what each part does.
#[test]
fn no_rust_file_is_over_600_lines() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    for dir in [
        "src",
        "tests",
        "math/src",
        "kernels/src",
        "kernels/examples",
    ] {
        sources(&crates.join(dir), &mut all);
    }
    assert!(
        all.len() > 200,
        "the workspace was read: {} files",
        all.len()
    );
    let long: Vec<String> = all
        .iter()
        .map(|p| (p, std::fs::read_to_string(p).unwrap().lines().count()))
        .filter(|(_, n)| *n > 600)
        .map(|(p, n)| format!("{}: {n} lines", p.strip_prefix(crates).unwrap().display()))
        .collect();
    assert!(long.is_empty(), "over 600 lines:\n{}", long.join("\n"));
}
