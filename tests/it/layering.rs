//! The layout holds: the layer order of docs/ARCHITECTURE.md's table (every top-level
//! module of `src/` in it, none using a layer above its own, test code aside), no import
//! cycles between the top-level modules nor between the files of a folder (a name its
//! `mod.rs` re-exports counts as a use of the file it comes from), no command module uses
//! another, no command lays out text, nothing below the edge uses `cli` or `commands`, and
//! no file of `run/` names `engine::native` (the run reaches engines through the contract). Read from the source and the document's text, so a
//! module that reaches up fails here, not in a review.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The file's text without its test code (a trailing `#[cfg(test)]` module; `tests.rs`).
fn code_of(p: &Path) -> String {
    if p.file_name().is_some_and(|n| n == "tests.rs") {
        return String::new();
    }
    let t = std::fs::read_to_string(p).unwrap();
    match t.find("#[cfg(test)]") {
        Some(i) => t[..i].to_string(),
        None => t,
    }
}

/// `crate::NAME` references, by name.
fn crate_refs(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        out.insert(name);
    }
    out
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Top-level module -> the top-level modules it uses.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let top = |p: &Path| {
        let rel = p.strip_prefix(&root).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        first.trim_end_matches(".rs").to_string()
    };
    let modules: BTreeSet<String> = files
        .iter()
        .map(|p| top(p))
        .filter(|m| m != "lib" && m != "main")
        .collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for p in &files {
        let m = top(p);
        if !modules.contains(&m) {
            continue;
        }
        let uses: Vec<String> = crate_refs(&code_of(p))
            .into_iter()
            .filter(|r| *r != m && modules.contains(r))
            .collect();
        g.entry(m).or_default().extend(uses);
    }
    g
}

fn reaches(g: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_string()];
    while let Some(m) = stack.pop() {
        for n in g.get(&m).into_iter().flatten() {
            if n == to {
                return true;
            }
            if seen.insert(n.clone()) {
                stack.push(n.clone());
            }
        }
    }
    false
}

#[test]
fn top_level_modules_depend_one_way() {
    let g = module_graph();
    assert!(g.len() > 15, "found only {:?}", g.keys());
    let mut cycles = Vec::new();
    for (m, uses) in &g {
        for u in uses {
            if reaches(&g, u, m) {
                cycles.push(format!("{m} -> {u} -> … -> {m}"));
            }
        }
    }
    assert!(
        cycles.is_empty(),
        "import cycles: {cycles:#?}\ngraph: {g:#?}"
    );
    for (m, uses) in &g {
        if m != "commands" {
            assert!(!uses.contains("commands"), "{m} uses commands: {uses:?}");
        }
        if m != "commands" && m != "cli" {
            assert!(!uses.contains("cli"), "{m} uses cli: {uses:?}");
        }
    }
}

#[test]
fn no_command_module_uses_another() {
    let dir = src().join("commands");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let commands: Vec<String> = files
        .iter()
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .filter(|s| s != "mod" && s != "error")
        .collect();
    assert!(commands.len() >= 8, "{commands:?}");
    for p in &files {
        let code = code_of(p);
        for c in &commands {
            for pat in [format!("super::{c}"), format!("crate::commands::{c}")] {
                assert!(
                    !code.contains(&pat),
                    "{} uses {pat}: a command only turns arguments into library calls",
                    p.display()
                );
            }
        }
    }
}

#[test]
fn the_check_finds_a_cycle_when_there_is_one() {
    let mut g = module_graph();
    g.entry("units".into()).or_default().insert("run".into());
    assert!(reaches(&g, "units", "units"), "units -> run -> … -> units");
}

/// Uses that break the documented order today, each with why; the test fails once one is
/// gone, so that this list only shrinks (issue 26).
const KNOWN_UPWARD: &[(&str, &str, &str)] = &[];

/// docs/ARCHITECTURE.md's layer table: each top-level module (`main.rs` aside) and its
/// layer's rank, 0 the top.
fn documented_layers() -> BTreeMap<String, usize> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ARCHITECTURE.md"))
            .unwrap();
    let table = doc
        .split("## Layers")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("a Layers section");
    let mut layers = BTreeMap::new();
    let rows = table
        .lines()
        .filter(|l| l.starts_with('|'))
        .skip(2) // the heading and its rule
        .enumerate();
    for (rank, row) in rows {
        let modules = row.split('|').nth(2).expect("a modules column");
        for name in modules.split(',') {
            let name = name.trim().trim_matches('`');
            let name = name.trim_end_matches('/').trim_end_matches(".rs");
            if name != "main" {
                let before = layers.insert(name.to_string(), rank);
                assert!(before.is_none(), "{name} is in two layers");
            }
        }
    }
    layers
}

/// The uses of a module of a layer above the user's own.
fn upward_uses<'a>(
    g: &'a BTreeMap<String, BTreeSet<String>>,
    layers: &BTreeMap<String, usize>,
) -> Vec<(&'a str, &'a str)> {
    let mut upward = Vec::new();
    for (m, uses) in g {
        let Some(&rank) = layers.get(m) else { continue };
        for u in uses {
            if layers.get(u).is_some_and(|&r| r < rank) {
                upward.push((m.as_str(), u.as_str()));
            }
        }
    }
    upward
}

#[test]
fn modules_use_only_their_own_layer_or_those_below_as_documented() {
    let layers = documented_layers();
    assert!(layers.len() > 15, "{layers:?}");
    let g = module_graph();
    let undocumented: Vec<&String> = g
        .keys()
        .filter(|m| *m != "test_support" && !layers.contains_key(*m))
        .collect();
    assert!(
        undocumented.is_empty(),
        "modules not in docs/ARCHITECTURE.md's layer table: {undocumented:?}"
    );
    for m in layers.keys() {
        assert!(
            g.contains_key(m),
            "the table names {m}, which src/ does not have"
        );
    }
    let mut upward = upward_uses(&g, &layers);
    for &(m, u, why) in KNOWN_UPWARD {
        assert!(
            upward.contains(&(m, u)),
            "{m} no longer uses {u} ({why}): take it off KNOWN_UPWARD and docs/ARCHITECTURE.md"
        );
    }
    upward.retain(|e| !KNOWN_UPWARD.iter().any(|&(m, u, _)| (m, u) == *e));
    assert!(
        upward.is_empty(),
        "modules using a layer above their own (docs/ARCHITECTURE.md): {upward:?}"
    );
}

#[test]
fn the_order_check_finds_a_use_of_a_layer_above() {
    let layers = documented_layers();
    let mut g = module_graph();
    g.entry("units".into()).or_default().insert("run".into());
    assert!(
        upward_uses(&g, &layers).contains(&("units", "run")),
        "the vocabulary reaching up to the runs: {layers:?}"
    );
}

/// Command files that still render text themselves, each with what it renders; the test
/// fails once one no longer does, so that this list only shrinks (issue 26).
const KNOWN_RENDERING: &[(&str, &str)] = &[];

/// The signs of text being laid out in `code`: `write!`/`writeln!`, text built up with
/// `push_str`, and padded or aligned format fields (`{:<10}`, `{name:>w$}`), the columns
/// of a table. A message in one `format!` is no rendering.
fn rendering_in(code: &str) -> Vec<String> {
    let mut found: Vec<String> = ["write!(", "writeln!(", ".push_str("]
        .into_iter()
        .filter(|m| code.contains(m))
        .map(String::from)
        .collect();
    for line in code.lines() {
        let mut rest = line;
        while let Some(i) = rest.find('{') {
            rest = &rest[i + 1..];
            let Some(end) = rest.find('}') else { break };
            let field = &rest[..end];
            let aligned = !field.contains(' ')
                && field
                    .split_once(':')
                    .is_some_and(|(_, spec)| spec.starts_with(['<', '>', '^']));
            if aligned {
                found.push(format!("{{{field}}}"));
            }
        }
    }
    found
}

#[test]
fn commands_hold_no_rendering() {
    let dir = src().join("commands");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let mut rendering = Vec::new();
    for p in &files {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let found = rendering_in(&code_of(p));
        let known = KNOWN_RENDERING.iter().find(|(f, _)| *f == name);
        match (found.is_empty(), known) {
            (true, Some((f, what))) => {
                panic!("commands/{f} no longer renders ({what}): take it off KNOWN_RENDERING")
            }
            (false, None) => rendering.push(format!("commands/{name}: {found:?}")),
            _ => {}
        }
    }
    assert!(
        rendering.is_empty(),
        "a command only turns its arguments into library calls; its text is made in the \
         library (docs/ARCHITECTURE.md): {rendering:#?}"
    );
}

#[test]
fn the_rendering_check_finds_a_table_in_a_command() {
    let table = r#"
        out_line(&format!("{:<10} {:>10} SOURCES", "NAME", "SIZE"));
        let _ = writeln!(out, "{id:<w$}  {est}");
        s.push_str("x");
    "#;
    let found = rendering_in(table);
    for sign in ["writeln!(", ".push_str(", "{:<10}", "{:>10}", "{id:<w$}"] {
        assert!(found.iter().any(|f| f == sign), "{sign} in {found:?}");
    }
    let calls = r#"
        out_line(&serde_json::to_string_pretty(&rows)?);
        err_line(&format!("warning: {w}"));
        Output::default().text(Stream::Out, &devices::table_text(&rows));
        let f = |x: u8| { x };
    "#;
    assert!(rendering_in(calls).is_empty(), "{:?}", rendering_in(calls));
}

/// Folders of `src/` whose files still use each other in a circle, each with why; the test
/// fails once one no longer does, so that this list only shrinks (issue 26).
const KNOWN_FOLDER_CYCLES: &[(&str, &str)] = &[];

/// `code` without its comment lines (doc comments among them).
fn without_comments(code: &str) -> String {
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths written in `code` (`a::b::c`, `use a::{b, c::{d, e}}` expanded), each as its
/// segments; a single identifier is no path.
fn paths_in(code: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts = is_ident(chars[i])
            && !chars[i].is_ascii_digit()
            && (i == 0 || !(is_ident(chars[i - 1]) || chars[i - 1] == ':'));
        if starts {
            let before = out.len();
            i = use_tree(&chars, i, Vec::new(), &mut out);
            out[before..].sort();
            continue;
        }
        i += 1;
    }
    out.retain(|p: &Vec<String>| p.len() > 1);
    out
}

/// Reads one use tree from `at` (`a::b`, `a::{…}`, `{…}`) after `prefix`, pushing its paths;
/// returns where it ends.
fn use_tree(
    chars: &[char],
    mut at: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    loop {
        while at < chars.len() && chars[at].is_whitespace() {
            at += 1;
        }
        if at < chars.len() && chars[at] == '{' {
            at += 1;
            loop {
                while at < chars.len() && (chars[at].is_whitespace() || chars[at] == ',') {
                    at += 1;
                }
                if at >= chars.len() || chars[at] == '}' {
                    return at + 1;
                }
                let next = use_tree(chars, at, prefix.clone(), out);
                if next == at {
                    // something else in the braces (`*`, `as x`): go past it
                    at += 1;
                } else {
                    at = next;
                }
            }
        }
        let start = at;
        while at < chars.len() && is_ident(chars[at]) {
            at += 1;
        }
        if at == start {
            if !prefix.is_empty() {
                out.push(prefix);
            }
            return at;
        }
        prefix.push(chars[start..at].iter().collect());
        if chars.get(at) == Some(&':') && chars.get(at + 1) == Some(&':') {
            at += 2;
        } else {
            out.push(prefix);
            return at;
        }
    }
}

/// The module path of the file `p` of `src/` (`src/a/b.rs` and `src/a/b/mod.rs`: `[a, b]`).
fn module_path_of(p: &Path) -> Vec<String> {
    let rel = p.strip_prefix(src()).unwrap();
    let mut segs: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = segs.pop().unwrap();
    if last != "mod.rs" {
        segs.push(last.trim_end_matches(".rs").to_string());
    }
    segs
}

/// `path` as written in the file of module `here`, made absolute (from the crate's root);
/// `None` for a path not starting at `crate`, `super` or `self`.
fn absolute(here: &[String], path: &[String]) -> Option<Vec<String>> {
    let mut base: Vec<String> = match path.first().map(String::as_str) {
        Some("crate") => Vec::new(),
        Some("super") | Some("self") => here.to_vec(),
        _ => return None,
    };
    let mut rest = path;
    if rest[0] == "crate" {
        rest = &rest[1..];
    }
    while let Some(s) = rest.first() {
        match s.as_str() {
            "super" => {
                base.pop()?;
            }
            "self" => {}
            _ => break,
        }
        rest = &rest[1..];
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The folders of `src/` below its root, each as its module path, with its modules (its files
/// but `mod.rs`, and its subfolders) and each module's source files.
fn folders() -> BTreeMap<Vec<String>, BTreeMap<String, Vec<PathBuf>>> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut out: BTreeMap<Vec<String>, BTreeMap<String, Vec<PathBuf>>> = BTreeMap::new();
    for p in files {
        let rel: Vec<String> = p
            .strip_prefix(src())
            .unwrap()
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        // the file belongs to a module of each folder it is below
        for depth in 1..rel.len() {
            let name = rel[depth].trim_end_matches(".rs");
            if name == "mod" {
                continue;
            }
            out.entry(rel[..depth].to_vec())
                .or_default()
                .entry(name.to_string())
                .or_default()
                .push(p.clone());
        }
    }
    out
}

/// The names a folder's `mod.rs` re-exports (`pub use child::{A, b::C}`), each with the module
/// of the folder it comes from: `super::A` and `crate::folder::A` name that module.
fn reexports_in(
    folder: &[String],
    mod_code: &str,
    modules: &BTreeSet<String>,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let code = without_comments(mod_code);
    let mut rest = code.as_str();
    while let Some(i) = rest.find("pub") {
        let after = &rest[i + "pub".len()..];
        let after = after.strip_prefix("(crate)").unwrap_or(after).trim_start();
        rest = after;
        let Some(tree) = after.strip_prefix("use ") else {
            continue;
        };
        let tree = &tree[..tree.find(';').unwrap_or(tree.len())];
        for path in paths_in(tree) {
            let abs = absolute(folder, &path).unwrap_or_else(|| {
                let mut p = folder.to_vec();
                p.extend(path.iter().cloned());
                p
            });
            let Some(name) = abs.last() else { continue };
            if abs.len() > folder.len() + 1 && abs.starts_with(folder) {
                let from = &abs[folder.len()];
                if modules.contains(from) {
                    out.insert(name.clone(), from.clone());
                }
            }
        }
    }
    out
}

/// The modules of a folder -> the modules of the same folder each uses: `files` holds each
/// module's files as (module path, code), `reexports` what the folder's `mod.rs` re-exports.
fn folder_graph_of(
    folder: &[String],
    files: &BTreeMap<String, Vec<(Vec<String>, String)>>,
    reexports: &BTreeMap<String, String>,
) -> BTreeMap<String, BTreeSet<String>> {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, codes) in files {
        let uses = g.entry(m.clone()).or_default();
        for (here, code) in codes {
            for path in paths_in(&without_comments(code)) {
                let Some(abs) = absolute(here, &path) else {
                    continue;
                };
                if abs.len() > folder.len() && abs.starts_with(folder) {
                    let named = &abs[folder.len()];
                    let used = if files.contains_key(named) {
                        Some(named)
                    } else {
                        reexports.get(named)
                    };
                    if let Some(used) = used.filter(|u| *u != m) {
                        uses.insert(used.clone());
                    }
                }
            }
        }
    }
    g
}

/// The modules of a folder -> the modules of the same folder each uses, read from `src/`.
fn folder_graph(
    folder: &[String],
    modules: &BTreeMap<String, Vec<PathBuf>>,
) -> BTreeMap<String, BTreeSet<String>> {
    let files: BTreeMap<String, Vec<(Vec<String>, String)>> = modules
        .iter()
        .map(|(m, paths)| {
            let codes = paths
                .iter()
                .map(|p| (module_path_of(p), code_of(p)))
                .collect();
            (m.clone(), codes)
        })
        .collect();
    let mut dir = src();
    dir.extend(folder);
    // the folder's own module file: `folder/mod.rs` or `folder.rs` beside it
    let own = match dir.join("mod.rs") {
        m if m.exists() => m,
        _ => dir.with_extension("rs"),
    };
    let mod_code = code_of(&own);
    let names: BTreeSet<String> = modules.keys().cloned().collect();
    folder_graph_of(folder, &files, &reexports_in(folder, &mod_code, &names))
}

fn cycles_in(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut cycles = Vec::new();
    for (m, uses) in g {
        for u in uses {
            if reaches(g, u, m) {
                cycles.push(format!("{m} -> {u} -> … -> {m}"));
            }
        }
    }
    cycles
}

#[test]
fn the_files_of_each_folder_use_each_other_one_way() {
    let folders = folders();
    assert!(folders.len() > 15, "found only {:?}", folders.keys());
    let mut found = Vec::new();
    for (folder, modules) in &folders {
        let g = folder_graph(folder, modules);
        let cycles = cycles_in(&g);
        let name = folder.join("/");
        let known = KNOWN_FOLDER_CYCLES.iter().find(|(f, _)| *f == name);
        match (cycles.is_empty(), known) {
            (true, Some((f, why))) => panic!(
                "src/{f} has no import circle any more ({why}): take it off KNOWN_FOLDER_CYCLES"
            ),
            (false, None) => found.push(format!("src/{name}: {cycles:#?}\ngraph: {g:#?}")),
            _ => {}
        }
    }
    assert!(
        found.is_empty(),
        "files of a folder using each other in a circle: {}",
        found.join("\n")
    );
}

#[test]
fn the_folder_check_reads_every_way_of_naming_a_sibling() {
    let here: Vec<String> = ["drive", "in_use", "probe"].map(String::from).to_vec();
    let code = r#"
        use super::super::{mounts::Mount, sysroot};
        use crate::drive::resolve::{self, Resolved};
        let x = super::scene::Scene::new();
        /// crate::drive::identity in a doc comment
        let y = self::local::f();
    "#;
    let used: BTreeSet<Vec<String>> = paths_in(&without_comments(code))
        .iter()
        .filter_map(|p| absolute(&here, p))
        .map(|p| p[..p.len().min(2)].to_vec())
        .collect();
    for m in ["mounts", "sysroot", "resolve", "in_use"] {
        assert!(
            used.contains(&vec!["drive".to_string(), m.to_string()]),
            "{m} in {used:?}"
        );
    }
    assert!(
        !used.contains(&vec!["drive".to_string(), "identity".to_string()]),
        "{used:?}"
    );
}

#[test]
fn the_check_finds_a_cycle_in_a_folder_when_there_is_one() {
    let folders = folders();
    let folder = vec!["drive".to_string()];
    let mut g = folder_graph(&folder, &folders[&folder]);
    assert!(cycles_in(&g).is_empty(), "{g:#?}");
    assert!(g["in_use"].contains("mounts"), "{g:#?}");
    g.entry("mounts".into())
        .or_default()
        .insert("in_use".into());
    assert!(
        !cycles_in(&g).is_empty(),
        "mounts -> in_use -> mounts: {g:#?}"
    );
}

#[test]
fn the_folder_check_follows_a_parents_re_exports() {
    // x/a.rs names `super::B`, which x/mod.rs re-exports from x/b.rs; x/b.rs uses x/a.rs.
    let folder = vec!["x".to_string()];
    let file = |m: &str, code: &str| {
        let here = vec!["x".to_string(), m.to_string()];
        (m.to_string(), vec![(here, code.to_string())])
    };
    let files: BTreeMap<String, Vec<(Vec<String>, String)>> = [
        file("a", "use super::{B, C};\nfn f(_: B) {}"),
        file("b", "pub struct B(crate::x::a::A);"),
        file("c", "pub struct C;"),
    ]
    .into_iter()
    .collect();
    let names: BTreeSet<String> = files.keys().cloned().collect();
    let mod_code = "mod a;\nmod b;\nmod c;\npub use b::B;\npub(crate) use self::c::{\n    C,\n};\npub use thiserror::Error;\n";
    let reexports = reexports_in(&folder, mod_code, &names);
    assert_eq!(
        reexports,
        [("B", "b"), ("C", "c")]
            .map(|(n, m)| (n.to_string(), m.to_string()))
            .into_iter()
            .collect(),
    );
    let g = folder_graph_of(&folder, &files, &reexports);
    assert!(g["a"].contains("b") && g["a"].contains("c"), "{g:#?}");
    assert!(!cycles_in(&g).is_empty(), "a -> (super::B) b -> a: {g:#?}");
    // without the re-exports the circle is not seen: how engine/'s escaped the check
    let blind = folder_graph_of(&folder, &files, &BTreeMap::new());
    assert!(cycles_in(&blind).is_empty(), "{blind:#?}");
    // and on src/ itself: engine/native/ names the contract's error through engine/mod.rs
    let folders = folders();
    let engine = vec!["engine".to_string()];
    let g = folder_graph(&engine, &folders[&engine]);
    assert!(g["native"].contains("error"), "{g:#?}");
}

/// The run reaches an engine only through the engine contract (`engine/`: the seam, the
/// shape check, aligned memory, the generator): no file of `run/` names `engine::native`,
/// whose in-process engines are one implementation among others.
#[test]
fn the_run_names_no_engine_implementation() {
    let mut files = Vec::new();
    rust_files(&src().join("run"), &mut files);
    let native = |p: &Vec<String>| p.windows(2).any(|w| w[0] == "engine" && w[1] == "native");
    let reaching: Vec<String> = files
        .iter()
        .filter(|f| paths_in(&without_comments(&code_of(f))).iter().any(native))
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        reaching.is_empty(),
        "run/ files naming engine::native: {reaching:?}"
    );
    // The check sees such a path, imported or written out.
    let seen = |code: &str| paths_in(code).iter().any(native);
    assert!(seen("use crate::engine::{native::Buffers, Rng};"));
    assert!(seen("let x = crate::engine::native::first_error(r);"));
    assert!(!seen("use crate::engine::{AlignedBuf, Rng};"));
}
