//! No import cycles between the library's modules: every `src/**/*.rs` file is a node, every path
//! it names into the crate (`use crate::…`, `use super::…`, `crate::x::f(…)`, `child::f(…)` in a
//! `mod.rs`) an edge to the file that defines the module it reaches. The test fails on any cycle
//! and prints it, so a new dependency that closes a loop is caught where it is written.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Cycles known and being removed elsewhere; each pair is allowed in either direction. None now.
const ALLOWED: &[(&str, &str)] = &[];

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    /// `::`
    Path,
    Punct(char),
}

/// The tokens of a Rust source, without comments, strings and character literals.
fn tokens(src: &str) -> Vec<Tok> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if ch == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
        } else if (ch == 'r' || ch == 'b')
            && !c
                .get(i.wrapping_sub(1))
                .is_some_and(|p| p.is_alphanumeric() || *p == '_')
            && raw_string_start(&c, i).is_some()
        {
            let (hashes, body) = raw_string_start(&c, i).unwrap();
            i = body;
            loop {
                if i >= c.len() {
                    break;
                }
                if c[i] == '"' && (0..hashes).all(|k| c.get(i + 1 + k) == Some(&'#')) {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
        } else if ch == '\'' {
            // A character literal ('a', '\n', '\u{1F600}') or a lifetime ('a).
            if c.get(i + 1) == Some(&'\\') {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(c[start..i].iter().collect()));
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push(Tok::Path);
            i += 2;
        } else if ch.is_whitespace() {
            i += 1;
        } else {
            out.push(Tok::Punct(ch));
            i += 1;
        }
    }
    out
}

/// At `i`, `r"`, `r#"`, `br"`…: the number of `#` and where the body starts.
fn raw_string_start(c: &[char], i: usize) -> Option<(usize, usize)> {
    let mut j = i;
    if c[j] == 'b' {
        j += 1;
    }
    if c.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while c.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    (c.get(j) == Some(&'"')).then_some((hashes, j + 1))
}

/// A module path (`["crate", "report", "model"]`) for every file of the library.
fn modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let rel = p.strip_prefix(src).unwrap();
            let mut segs: Vec<String> = vec!["crate".into()];
            segs.extend(
                rel.with_extension("")
                    .iter()
                    .map(|s| s.to_string_lossy().into_owned()),
            );
            match segs.last().map(String::as_str) {
                // The binary is its own crate.
                Some("main") if segs.len() == 2 => continue,
                Some("lib") if segs.len() == 2 => {
                    segs.pop();
                }
                Some("mod") => {
                    segs.pop();
                }
                _ => {}
            }
            out.insert(segs, p);
        }
    }
    out
}

/// The paths a file names into the crate, as absolute module paths (`crate::a::b::Item`).
fn paths(toks: &[Tok], me: &[String], files: &BTreeMap<Vec<String>, PathBuf>) -> Vec<Vec<String>> {
    let ident = |k: usize| match toks.get(k) {
        Some(Tok::Ident(s)) => Some(s.as_str()),
        _ => None,
    };
    // Inline modules (`mod tests { … }`) change what `super` and `self` mean.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut out = Vec::new();
    let mut k = 0;
    while k < toks.len() {
        let here: Vec<String> = me
            .iter()
            .cloned()
            .chain(inline.iter().map(|(n, _)| n.clone()))
            .collect();
        match &toks[k] {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            Tok::Ident(w) if w == "mod" => {
                if let (Some(name), Some(Tok::Punct('{'))) = (ident(k + 1), toks.get(k + 2)) {
                    inline.push((name.to_string(), depth));
                    depth += 1;
                    k += 3;
                    continue;
                }
            }
            Tok::Ident(w) if w == "use" => {
                let mut end = k + 1;
                while end < toks.len() && toks[end] != Tok::Punct(';') {
                    end += 1;
                }
                let mut found = Vec::new();
                use_tree(&toks[k + 1..end], &[], &mut found);
                for p in found {
                    if let Some(abs) = absolute(&p, &here, files) {
                        out.push(abs);
                    }
                }
                k = end + 1;
                continue;
            }
            Tok::Ident(_)
                if toks.get(k + 1) == Some(&Tok::Path)
                    && toks.get(k.wrapping_sub(1)) != Some(&Tok::Path) =>
            {
                let mut p = Vec::new();
                let mut j = k;
                while let Some(s) = ident(j) {
                    p.push(s.to_string());
                    if toks.get(j + 1) != Some(&Tok::Path) {
                        break;
                    }
                    j += 2;
                }
                if let Some(abs) = absolute(&p, &here, files) {
                    out.push(abs);
                }
                k = j + 1;
                continue;
            }
            _ => {}
        }
        k += 1;
    }
    out
}

/// Every path of a `use` tree (`a::{b, c::{d, self}}` → a::b, a::c::d, a::c).
fn use_tree(t: &[Tok], prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut k = 0;
    let mut seg = prefix.to_vec();
    while k < t.len() {
        match &t[k] {
            Tok::Ident(s) if s == "as" => {
                k += 2;
                continue;
            }
            // `{self, …}`: the prefix itself.
            Tok::Ident(s) if s == "self" && !prefix.is_empty() => {}
            Tok::Ident(s) => seg.push(s.clone()),
            Tok::Path => {}
            Tok::Punct('{') => {
                // Find the matching brace and split its contents at top-level commas.
                let mut d = 0;
                let mut j = k;
                let mut start = k + 1;
                while j < t.len() {
                    match t[j] {
                        Tok::Punct('{') => d += 1,
                        Tok::Punct('}') => {
                            d -= 1;
                            if d == 0 {
                                use_tree(&t[start..j], &seg, out);
                                break;
                            }
                        }
                        Tok::Punct(',') if d == 1 => {
                            use_tree(&t[start..j], &seg, out);
                            start = j + 1;
                        }
                        _ => {}
                    }
                    j += 1;
                }
                return;
            }
            Tok::Punct('*') => {}
            Tok::Punct(_) => {}
        }
        k += 1;
    }
    if seg.len() > prefix.len() || !prefix.is_empty() {
        out.push(seg);
    }
}

/// A path as seen from module `here`, made absolute; None when it leaves the crate (std, serde…).
/// Relative paths count only when they start with a child module of `here` (`charts::f` in
/// `report/mod.rs`, or `use model::Point` there).
fn absolute(
    p: &[String],
    here: &[String],
    files: &BTreeMap<Vec<String>, PathBuf>,
) -> Option<Vec<String>> {
    let first = p.first()?;
    let mut base: Vec<String>;
    let mut rest = p;
    match first.as_str() {
        "crate" => {
            base = vec!["crate".into()];
            rest = &p[1..];
        }
        "self" => {
            base = here.to_vec();
            rest = &p[1..];
        }
        "super" => {
            base = here.to_vec();
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        name => {
            let mut child = here.to_vec();
            child.push(name.to_string());
            if !files.contains_key(&child) {
                return None;
            }
            base = here.to_vec();
        }
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The file that defines the deepest module on a path.
fn target<'a>(
    p: &[String],
    files: &'a BTreeMap<Vec<String>, PathBuf>,
) -> Option<(&'a Vec<String>, &'a PathBuf)> {
    (1..=p.len())
        .rev()
        .find_map(|n| files.get_key_value(&p[..n]))
}

fn name(m: &[String]) -> String {
    m.join("::")
}

/// The module graph: for every module, the modules it names.
fn graph() -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = modules(&src);
    let mut g: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (m, path) in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let toks = tokens(&text);
        let deps = g.entry(m.clone()).or_default();
        for p in paths(&toks, m, &files) {
            // A module and the modules inside it are built together (`super::Trait` in a child,
            // `child::f` in its parent); only edges between separate subtrees can form a cycle.
            if let Some((t, _)) = target(&p, &files)
                && !t.starts_with(m)
                && !m.starts_with(t)
            {
                deps.insert(t.clone());
            }
        }
    }
    g
}

fn allowed(a: &[String], b: &[String]) -> bool {
    let (a, b) = (name(a), name(b));
    ALLOWED
        .iter()
        .any(|&(x, y)| (a == x && b == y) || (a == y && b == x))
}

/// A cycle through the graph, if any: the modules in order, the first repeated at the end.
fn find_cycle(g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Option<Vec<Vec<String>>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    fn visit(
        n: &Vec<String>,
        g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        mark: &mut BTreeMap<Vec<String>, Mark>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<Vec<String>>> {
        mark.insert(n.clone(), Mark::Open);
        stack.push(n.clone());
        for d in g.get(n).into_iter().flatten() {
            if allowed(n, d) {
                continue;
            }
            match mark.get(d).copied().unwrap_or(Mark::New) {
                Mark::Open => {
                    let at = stack.iter().position(|s| s == d).unwrap();
                    let mut c = stack[at..].to_vec();
                    c.push(d.clone());
                    return Some(c);
                }
                Mark::New => {
                    if let Some(c) = visit(d, g, mark, stack) {
                        return Some(c);
                    }
                }
                Mark::Done => {}
            }
        }
        stack.pop();
        mark.insert(n.clone(), Mark::Done);
        None
    }
    let mut mark = BTreeMap::new();
    for n in g.keys() {
        if mark.get(n).copied().unwrap_or(Mark::New) == Mark::New
            && let Some(c) = visit(n, g, &mut mark, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

/// Every module that is on some cycle (the nontrivial strongly connected components).
fn tangled(g: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    // A module is on a cycle when it can reach itself.
    let reach = |from: &Vec<String>| {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&Vec<String>> = g
            .get(from)
            .into_iter()
            .flatten()
            .filter(|d| !allowed(from, d))
            .collect();
        while let Some(n) = todo.pop() {
            if seen.insert(n.clone()) {
                todo.extend(g.get(n).into_iter().flatten().filter(|d| !allowed(n, d)));
            }
        }
        seen
    };
    g.keys()
        .filter(|n| reach(n).contains(*n))
        .cloned()
        .collect()
}

#[test]
fn modules_do_not_import_each_other_in_a_cycle() {
    let g = graph();
    assert!(g.len() > 20, "found only {} modules", g.len());
    if let Some(c) = find_cycle(&g) {
        let path: Vec<String> = c.iter().map(|m| name(m)).collect();
        panic!(
            "module import cycle: {}\n(every module on it names the next one; move what they share into a module of its own)\nevery module on a cycle: {}",
            path.join(" → "),
            tangled(&g)
                .iter()
                .map(|m| name(m))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

#[test]
fn the_scanner_reads_paths_as_rustc_does() {
    let files: BTreeMap<Vec<String>, PathBuf> = [
        "crate",
        "crate::a",
        "crate::a::b",
        "crate::a::c",
        "crate::d",
    ]
    .iter()
    .map(|m| (m.split("::").map(String::from).collect(), PathBuf::new()))
    .collect();
    let src = r##"
        //! use crate::d;  (a comment)
        use super::c::{self, Thing as Other};
        use crate::{d::X, a::{b}};
        use std::fmt;
        fn f() { let s = "crate::d::x"; let r = r#"super::c"#; let c = '"'; crate::d::g(); super::super::a::c::h(); }
        mod tests { use super::*; use super::super::c; }
    "##;
    let me: Vec<String> = ["crate", "a", "b"].iter().map(|s| s.to_string()).collect();
    let got: BTreeSet<String> = paths(&tokens(src), &me, &files)
        .iter()
        .filter_map(|p| target(p, &files))
        .map(|(m, _)| name(m))
        .collect();
    let want: BTreeSet<String> = ["crate::a::c", "crate::d", "crate::a::b"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(got, want);
    // A mod.rs naming its child module without a prefix.
    let me: Vec<String> = vec!["crate".into(), "a".into()];
    let got: Vec<String> = paths(&tokens("fn f() { b::g(); fmt::x(); }"), &me, &files)
        .iter()
        .filter_map(|p| target(p, &files))
        .map(|(m, _)| name(m))
        .collect();
    assert_eq!(got, ["crate::a::b"]);
}
