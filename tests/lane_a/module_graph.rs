//! No import cycles between the library's modules: every `src/**/*.rs` file is a node, every path
//! it names into the crate (`use crate::…`, `use super::…`, `crate::x::f(…)`, `child::f(…)` in a
//! `mod.rs`) an edge to the file that defines what the path reaches. A parent and its children
//! are separate files and count like any other two: a child naming `super::X` where X is defined
//! in the parent's file is an edge to the parent, a parent naming `child::f` (or re-exporting it)
//! an edge to the child. `mod child;` itself is no edge: it only says where the child is. A name a
//! file merely imports (`use model::Point;` in `report/mod.rs`) is followed to the file that
//! defines it, so `super::Point` from a sibling is an edge to `model/point.rs`, not to the parent.
//! The binary (`src/bin/readlab/`) is a crate of its own and is checked the same way. The test
//! fails on any cycle and prints every one, so a new dependency that closes a loop is caught where
//! it is written.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    /// `::`
    Path,
    Punct(char),
}

/// The tokens of a Rust source, without comments, strings and character literals — except a
/// string inside an attribute that is a path (`#[serde(with = "crate::units::secs")]`), which
/// the derive turns into code: its path is kept, as if written outside the quotes.
fn tokens(src: &str) -> Vec<Tok> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    // How many `[` are open, and how many were when the attribute being read (`#[`, `#![`)
    // opened.
    let mut brackets = 0usize;
    let mut attr: Option<usize> = None;
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
            let start = i;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            if attr.is_some() {
                attr_string(&c[start..i.min(c.len())], &mut out);
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
                    if attr.is_some() {
                        attr_string(&c[body..i], &mut out);
                    }
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
                // A lifetime: `'static` names no item.
                i += 1;
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
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
            if ch == '[' {
                let opens_attr = matches!(
                    out.as_slice(),
                    [.., Tok::Punct('#')] | [.., Tok::Punct('#'), Tok::Punct('!')]
                );
                if opens_attr && attr.is_none() {
                    attr = Some(brackets);
                }
                brackets += 1;
            } else if ch == ']' {
                brackets = brackets.saturating_sub(1);
                if attr == Some(brackets) {
                    attr = None;
                }
            }
            out.push(Tok::Punct(ch));
            i += 1;
        }
    }
    out
}

/// The tokens of a string inside an attribute, when it is a path: `"crate::config::secs"`
/// (serde's `with`, `serialize_with`, `deserialize_with`, `default`, `skip_serializing_if`…)
/// names what the derive calls. A `with` names a module whose `serialize` and `deserialize` the
/// derive calls, so a one-word module there (`with = "secs"`, imported by a `use`) is a path
/// too. Anything else (`rename = "use"`, an error message, a feature name) adds nothing.
fn attr_string(s: &[char], out: &mut Vec<Tok>) {
    let s: String = s.iter().collect();
    let segs: Vec<&str> = s.split("::").collect();
    let word = |w: &str| {
        w.starts_with(|c: char| c.is_alphabetic() || c == '_')
            && w.chars().all(|c| c.is_alphanumeric() || c == '_')
    };
    if !segs.iter().all(|w| word(w)) {
        return;
    }
    let with = matches!(out.as_slice(), [.., Tok::Ident(k), Tok::Punct('=')] if k == "with");
    if segs.len() == 1 && !with {
        return;
    }
    for (n, w) in segs.iter().enumerate() {
        if n > 0 {
            out.push(Tok::Path);
        }
        out.push(Tok::Ident(w.to_string()));
    }
    if with {
        out.push(Tok::Path);
        out.push(Tok::Ident("serialize".into()));
    }
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

/// A module path (`["crate", "report", "model"]`) for every file of a crate whose root file
/// (`lib.rs`, `main.rs`) is in `dir`; `skip` names a folder that belongs to another crate.
fn modules(dir: &Path, root: &str, skip: Option<&str>) -> BTreeMap<Vec<String>, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                if skip.is_none_or(|s| p != dir.join(s)) {
                    stack.push(p);
                }
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let rel = p.strip_prefix(dir).unwrap();
            let mut segs: Vec<String> = vec!["crate".into()];
            segs.extend(
                rel.with_extension("")
                    .iter()
                    .map(|s| s.to_string_lossy().into_owned()),
            );
            let root_file = segs.len() == 2 && rel == Path::new(root);
            if root_file || segs.last().map(String::as_str) == Some("mod") {
                segs.pop();
            }
            out.insert(segs, p);
        }
    }
    out
}

/// What a file's own scope holds, so a path through it can be followed to where an item is
/// defined: the names its top-level `use` declarations bring in (each to the absolute path it
/// stands for; None when it comes from outside the crate), its glob imports, and the items it
/// defines itself.
#[derive(Debug, Default)]
struct Scope {
    names: BTreeMap<String, Option<Vec<String>>>,
    globs: Vec<Option<Vec<String>>>,
    defined: BTreeSet<String>,
}

/// What a `use` tree binds a path to: a name (the last segment or the `as` alias), or a glob.
#[derive(Debug, Clone, PartialEq)]
enum Bind {
    Name(String),
    Glob,
}

/// The keywords that define a named item.
const ITEMS: &[&str] = &[
    "fn", "struct", "enum", "trait", "type", "const", "static", "union", "mod",
];

/// The paths a file names into the crate, as absolute module paths (`crate::a::b::Item`), and
/// the file's scope.
fn paths(
    toks: &[Tok],
    me: &[String],
    files: &BTreeMap<Vec<String>, PathBuf>,
) -> (Vec<Vec<String>>, Scope) {
    let ident = |k: usize| match toks.get(k) {
        Some(Tok::Ident(s)) => Some(s.as_str()),
        _ => None,
    };
    // Inline modules (`mod tests { … }`) change what `super` and `self` mean.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut out = Vec::new();
    let mut scope = Scope::default();
    // Every name a `use` in the file binds, at any depth.
    let mut local: BTreeMap<String, Option<Vec<String>>> = BTreeMap::new();
    let mut reexports: Vec<(String, Vec<String>)> = Vec::new();
    let mut k = 0;
    while k < toks.len() {
        let here: Vec<String> = me
            .iter()
            .cloned()
            .chain(inline.iter().map(|(n, _)| n.clone()))
            .collect();
        let top = depth == 0 && inline.is_empty();
        if top && let Tok::Ident(w) = &toks[k] {
            if ITEMS.contains(&w.as_str())
                && let Some(n) = ident(k + 1)
            {
                scope.defined.insert(n.to_string());
            }
            if w == "macro_rules"
                && toks.get(k + 1) == Some(&Tok::Punct('!'))
                && let Some(n) = ident(k + 2)
            {
                scope.defined.insert(n.to_string());
            }
        }
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
                // `pub use`, `pub(crate) use`…: a re-export.
                let public = toks[..k]
                    .iter()
                    .rev()
                    .find(|t| {
                        !matches!(t, Tok::Punct('(' | ')')) && !is(t, "crate") && !is(t, "super")
                    })
                    .is_some_and(|t| is(t, "pub"));
                for (p, bind) in found {
                    let abs = absolute(&p, &here, files);
                    // Naming a module (`use super::charts;`) is no edge by itself; the paths
                    // through the name are. Nor is re-exporting an item: who names it through
                    // this file reaches the file that defines it.
                    if let Some(abs) = abs
                        .as_ref()
                        .filter(|a| bind == Bind::Glob || !files.contains_key(a.as_slice()))
                    {
                        match (&bind, public) {
                            (Bind::Name(n), true) => reexports.push((n.clone(), abs.clone())),
                            _ => out.push(abs.clone()),
                        }
                    }
                    if let Bind::Name(n) = &bind {
                        local.insert(n.clone(), abs.clone());
                    }
                    if top {
                        match bind {
                            Bind::Name(n) => {
                                scope.names.insert(n, abs);
                            }
                            Bind::Glob => scope.globs.push(abs),
                        }
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
                // A path through a name the file imported (`use crate::report::charts;` then
                // `charts::Chart`) reaches what the name stands for.
                let abs = absolute(&p, &here, files).or_else(|| {
                    let to = local.get(&p[0])?.as_ref()?;
                    Some(to.iter().chain(&p[1..]).cloned().collect())
                });
                if let Some(abs) = abs {
                    out.push(abs);
                }
                k = j + 1;
                continue;
            }
            _ => {}
        }
        k += 1;
    }
    // A re-exported name the file also uses itself is an edge after all.
    for (n, abs) in reexports {
        let mut inside_use = false;
        let used = toks.iter().enumerate().any(|(i, t)| {
            match t {
                Tok::Ident(w) if w == "use" => inside_use = true,
                Tok::Punct(';') => inside_use = false,
                _ => {}
            }
            // `mod load;` beside `pub use load::load;` is not a use of the item.
            !inside_use && is(t, &n) && !(i > 0 && is(&toks[i - 1], "mod"))
        });
        if used {
            out.push(abs);
        }
    }
    (out, scope)
}

fn is(t: &Tok, word: &str) -> bool {
    matches!(t, Tok::Ident(w) if w == word)
}

/// Every path of a `use` tree (`a::{b, c::{d, self}}` → a::b, a::c::d, a::c), with what it binds.
fn use_tree(t: &[Tok], prefix: &[String], out: &mut Vec<(Vec<String>, Bind)>) {
    let mut k = 0;
    let mut seg = prefix.to_vec();
    let mut alias = None;
    let mut glob = false;
    while k < t.len() {
        match &t[k] {
            Tok::Ident(s) if s == "as" => {
                if let Some(Tok::Ident(a)) = t.get(k + 1) {
                    alias = Some(a.clone());
                }
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
            Tok::Punct('*') => glob = true,
            Tok::Punct(_) => {}
        }
        k += 1;
    }
    if let Some(last) = seg
        .last()
        .filter(|_| seg.len() > prefix.len() || !prefix.is_empty())
    {
        let bind = if glob {
            Bind::Glob
        } else {
            Bind::Name(alias.unwrap_or_else(|| last.clone()))
        };
        out.push((seg, bind));
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

/// The file module that holds the deepest module on a path.
fn target<'a>(
    p: &[String],
    files: &'a BTreeMap<Vec<String>, PathBuf>,
) -> Option<(&'a Vec<String>, &'a PathBuf)> {
    (1..=p.len())
        .rev()
        .find_map(|n| files.get_key_value(&p[..n]))
}

/// The file that defines what a path reaches: the file of its deepest module, or, when that file
/// only imports the item (`pub use model::Point;`), the file the import leads to. None when the
/// item comes from outside the crate.
fn resolve(
    p: &[String],
    files: &BTreeMap<Vec<String>, PathBuf>,
    scopes: &BTreeMap<Vec<String>, Scope>,
    hops: usize,
) -> Option<Vec<String>> {
    let (t, _) = target(p, files)?;
    let Some(next) = p.get(t.len()) else {
        return Some(t.clone());
    };
    let scope = &scopes[t];
    if hops > 16 || scope.defined.contains(next) {
        return Some(t.clone());
    }
    let rest = &p[t.len() + 1..];
    if let Some(to) = scope.names.get(next) {
        let to = to.as_ref()?;
        let q: Vec<String> = to.iter().chain(rest).cloned().collect();
        return resolve(&q, files, scopes, hops + 1);
    }
    // A glob import: follow the one whose module has the name.
    let mut outside = false;
    for g in &scope.globs {
        let Some(g) = g else {
            outside = true;
            continue;
        };
        if let Some(s) = scopes.get(g)
            && (s.defined.contains(next) || s.names.contains_key(next))
        {
            let q: Vec<String> = g.iter().chain([next]).chain(rest).cloned().collect();
            return resolve(&q, files, scopes, hops + 1);
        }
    }
    (!outside).then(|| t.clone())
}

fn name(m: &[String]) -> String {
    m.join("::")
}

type Graph = BTreeMap<Vec<String>, BTreeSet<Vec<String>>>;

/// Modules that reach each other, and a shortest cycle through them.
type Tangle = (BTreeSet<Vec<String>>, Vec<Vec<String>>);

/// The graph of a crate's files: for every file, the files it names.
fn graph_of(files: &BTreeMap<Vec<String>, PathBuf>) -> Graph {
    let mut scopes = BTreeMap::new();
    let mut named = BTreeMap::new();
    for (m, path) in files {
        let text = std::fs::read_to_string(path).unwrap();
        let (p, scope) = paths(&tokens(&text), m, files);
        scopes.insert(m.clone(), scope);
        named.insert(m.clone(), p);
    }
    let mut g = Graph::new();
    for (m, ps) in named {
        let deps = g.entry(m.clone()).or_default();
        for p in ps {
            if let Some(t) = resolve(&p, files, &scopes, 0)
                && t != m
            {
                deps.insert(t);
            }
        }
    }
    g
}

/// The library's graph (`src/`, without the binary).
fn graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    graph_of(&modules(&src, "lib.rs", Some("bin")))
}

/// The binary's graph (`src/bin/readlab/`); the library is outside it.
fn graph_bin() -> Graph {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/bin/readlab");
    graph_of(&modules(&dir, "main.rs", None))
}

/// Every module `from` reaches.
fn reach(g: &Graph, from: &Vec<String>) -> BTreeSet<Vec<String>> {
    let mut seen = BTreeSet::new();
    let mut todo: Vec<&Vec<String>> = g.get(from).into_iter().flatten().collect();
    while let Some(n) = todo.pop() {
        if seen.insert(n.clone()) {
            todo.extend(g.get(n).into_iter().flatten());
        }
    }
    seen
}

/// The groups of modules that reach each other (strongly connected components of two or more,
/// or one that names itself), each with a shortest cycle through its first module.
fn cycles(g: &Graph) -> Vec<Tangle> {
    let reaches: BTreeMap<&Vec<String>, BTreeSet<Vec<String>>> =
        g.keys().map(|n| (n, reach(g, n))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for n in g.keys() {
        if done.contains(n) || !reaches[n].contains(n) {
            continue;
        }
        let group: BTreeSet<Vec<String>> = reaches[n]
            .iter()
            .filter(|d| reaches.get(d).is_some_and(|r| r.contains(n)))
            .cloned()
            .collect();
        done.extend(group.iter().cloned());
        // Breadth first from n back to n, inside the group.
        let mut prev: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([n.clone()]);
        'search: while let Some(a) = queue.pop_front() {
            for b in g[&a].iter().filter(|b| group.contains(*b)) {
                if b == n {
                    prev.insert(n.clone(), a.clone());
                    break 'search;
                }
                if !prev.contains_key(b) {
                    prev.insert(b.clone(), a.clone());
                    queue.push_back(b.clone());
                }
            }
        }
        let mut cycle = vec![n.clone()];
        let mut at = prev[n].clone();
        while &at != n {
            cycle.push(at.clone());
            at = prev[&at].clone();
        }
        cycle.push(n.clone());
        cycle.reverse();
        out.push((group, cycle));
    }
    out
}

/// Every cycle of a graph, said so a reader can find the edge to cut.
fn explain(g: &Graph) -> String {
    cycles(g)
        .iter()
        .map(|(group, cycle)| {
            format!(
                "module import cycle: {}\n  the {} modules that reach each other: {}",
                cycle
                    .iter()
                    .map(|m| name(m))
                    .collect::<Vec<_>>()
                    .join(" → "),
                group.len(),
                group.iter().map(|m| name(m)).collect::<Vec<_>>().join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn modules_do_not_import_each_other_in_a_cycle() {
    let g = graph();
    assert!(g.len() > 20, "found only {} modules", g.len());
    let found = explain(&g);
    assert!(
        found.is_empty(),
        "{found}\n(every module on a cycle names the next one; a child naming `super::X` defined in its parent counts, and so does a parent naming `child::f`; move what they share into a module of its own, or pass data instead of calling up)"
    );
}

#[test]
fn the_binarys_modules_do_not_import_each_other_in_a_cycle() {
    let g = graph_bin();
    assert!(g.len() > 5, "found only {} modules", g.len());
    let found = explain(&g);
    assert!(found.is_empty(), "{found}");
}

fn ms(names: &[&str]) -> BTreeMap<Vec<String>, PathBuf> {
    names
        .iter()
        .map(|m| (m.split("::").map(String::from).collect(), PathBuf::new()))
        .collect()
}

fn module(m: &str) -> Vec<String> {
    m.split("::").map(String::from).collect()
}

#[test]
fn the_scanner_reads_paths_as_rustc_does() {
    let files = ms(&[
        "crate",
        "crate::a",
        "crate::a::b",
        "crate::a::c",
        "crate::d",
    ]);
    let src = r##"
        //! use crate::d;  (a comment)
        use super::c::{self, Thing as Other};
        use crate::{d::X, a::{b}};
        use std::fmt;
        fn f() { let s = "crate::d::x"; let r = r#"super::c"#; let c = '"'; crate::d::g(); super::super::a::c::h(); }
        mod tests { use super::*; use super::super::c; }
    "##;
    let me = module("crate::a::b");
    let got: BTreeSet<String> = paths(&tokens(src), &me, &files)
        .0
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
    let me = module("crate::a");
    let got: Vec<String> = paths(&tokens("fn f() { b::g(); fmt::x(); }"), &me, &files)
        .0
        .iter()
        .filter_map(|p| target(p, &files))
        .map(|(m, _)| name(m))
        .collect();
    assert_eq!(got, ["crate::a::b"]);
}

#[test]
fn the_scanner_reads_paths_in_attribute_strings() {
    // stability names config's `secs` only inside a serde attribute, config names stability in
    // code: a cycle. units reaches config through a one-word `with` module it imports, and
    // stability through a path in an inner attribute (`#![…]`); the other strings (a rename to a
    // keyword, a type for schemars, a sentence, a string in code) are no paths into the crate.
    let g = graph_from(&[
        (
            "lib.rs",
            "pub mod config;\npub mod stability;\npub mod units;",
        ),
        (
            "config.rs",
            "use crate::stability::StopRule;\npub mod secs { pub fn serialize() {} }\npub struct C { pub stop: StopRule }",
        ),
        (
            "stability.rs",
            "#[derive(Serialize)]\npub struct StopRule {\n    #[serde(with = \"crate::config::secs\")]\n    #[schemars(with = \"f64\")]\n    pub min: u64,\n}",
        ),
        (
            "units.rs",
            "use crate::config::secs;\n#![doc = \"crate::stability\"]\n#[derive(Serialize)]\npub struct Q {\n    #[serde(with = \"secs\", rename = \"use\", default = r#\"one\"#)]\n    pub x: [u64; 2],\n    #[doc = \"see crate::stability::StopRule\"]\n    pub y: u64,\n}\nfn f() -> &'static str { \"crate::stability::StopRule\" }",
        ),
    ]);
    assert_eq!(
        edges(&g),
        [
            "crate::config → crate::stability",
            "crate::stability → crate::config",
            "crate::units → crate::config",
            "crate::units → crate::stability",
        ]
        .map(String::from)
        .into()
    );
    assert!(explain(&g).contains("crate::config → crate::stability → crate::config"));
    // A path in a raw string in an attribute, and nothing from strings in code.
    let toks =
        tokens("#[serde(deserialize_with = r#\"crate::a::f\"#)] fn g() { h(\"crate::b::x\"); }");
    let words: Vec<&str> = toks
        .iter()
        .filter_map(|t| match t {
            Tok::Ident(w) => Some(w.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        words,
        [
            "serde",
            "deserialize_with",
            "crate",
            "a",
            "f",
            "fn",
            "g",
            "h"
        ]
    );
}

/// Writes a crate of the given files into a fresh directory and returns its graph.
fn graph_from(files: &[(&str, &str)]) -> Graph {
    let dir = std::env::temp_dir().join(format!(
        "readlab-module-graph-{}-{}",
        std::process::id(),
        files.len()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
    }
    let g = graph_of(&modules(&dir, "lib.rs", Some("bin")));
    std::fs::remove_dir_all(&dir).unwrap();
    g
}

fn edges(g: &Graph) -> BTreeSet<String> {
    g.iter()
        .flat_map(|(a, ds)| ds.iter().map(move |d| format!("{} → {}", name(a), name(d))))
        .collect()
}

#[test]
fn a_parent_and_its_child_naming_each_other_are_a_cycle() {
    // The parent defines X and calls its child; the child uses X: two files naming each other.
    let g = graph_from(&[
        ("lib.rs", "pub mod a;"),
        ("a/mod.rs", "mod b;\npub struct X;\npub fn f() { b::g(); }"),
        ("a/b.rs", "use super::X;\npub fn g() -> X { X }"),
    ]);
    assert_eq!(
        edges(&g),
        ["crate::a → crate::a::b", "crate::a::b → crate::a"]
            .map(String::from)
            .into()
    );
    assert!(explain(&g).contains("crate::a → crate::a::b → crate::a"));
}

#[test]
fn mod_declarations_and_names_the_parent_only_imports_are_no_edge_to_it() {
    // `mod b; mod c;` is no edge, nor is re-exporting `c::Y`; b reaches Y through the parent
    // (`super::Y`) — that is an edge to c, where Y is defined, not to the parent. A name the parent
    // imports from outside the crate leads nowhere. The parent using what it re-exports (Z) is an
    // edge.
    let g = graph_from(&[
        ("lib.rs", "pub mod a;"),
        (
            "a/mod.rs",
            "mod b;\nmod c;\nmod d;\npub use c::Y;\npub use d::Z;\nuse std::fmt::Debug;\npub fn z() -> Z { Z }",
        ),
        (
            "a/b.rs",
            "use super::{Y, Debug};\npub fn g(y: Y) -> impl Debug { super::c::h(y) }",
        ),
        (
            "a/c.rs",
            "#[derive(Debug)]\npub struct Y;\npub fn h(y: Y) -> Y { y }",
        ),
        ("a/d.rs", "pub struct Z;"),
    ]);
    assert_eq!(
        edges(&g),
        ["crate::a → crate::a::d", "crate::a::b → crate::a::c"]
            .map(String::from)
            .into()
    );
    assert!(explain(&g).is_empty());
}

/// Every module under `prefix` (itself included) and, for each, the modules under any of `above`
/// it reaches: the arrows that run up from a layer.
fn upward(g: &Graph, prefix: &str, above: &[&str]) -> Vec<String> {
    let layer = module(prefix);
    let above: Vec<Vec<String>> = above.iter().map(|m| module(m)).collect();
    let mut found = Vec::new();
    for m in g.keys().filter(|m| m.starts_with(&layer)) {
        let up: Vec<String> = reach(g, m)
            .iter()
            .filter(|d| above.iter().any(|a| d.starts_with(a)))
            .map(|d| name(d))
            .collect();
        if !up.is_empty() {
            found.push(format!("{} reaches {}", name(m), up.join(", ")));
        }
    }
    found
}

/// The document layer (`src/document/`: the document's types, the charts' vocabulary, their
/// drawing, the page and the formats) is what the report, the verdict and compare render
/// through: none of its modules may reach what composes a document or the points it is made of,
/// or those modules and the document would name each other.
#[test]
fn the_document_reaches_none_of_what_renders_it() {
    let g = graph();
    for m in [
        "crate::document::chart",
        "crate::document::draw",
        "crate::document::page",
        "crate::document::format",
    ] {
        assert!(
            g.contains_key(&module(m)),
            "{m} is not in the document layer"
        );
    }
    let up = upward(
        &g,
        "crate::document",
        &[
            "crate::report",
            "crate::points",
            "crate::verdict",
            "crate::compare",
            "crate::export",
        ],
    );
    assert!(
        up.is_empty(),
        "{}\n(the document layer names only leaves such as error, table, terminal, units, size; \
         what composes a document gives it what it needs, as `label_words`)",
        up.join("\n")
    );
}

/// The points (`src/points/`: the inputs loaded, fio's JSON imported, sections and frontier) are
/// the data layer the verdict, compare and the report read: none of its modules reaches them, nor
/// the document layer they draw with.
#[test]
fn the_points_reach_neither_the_document_nor_the_report() {
    let g = graph();
    assert!(g.contains_key(&module("crate::points::fio")));
    let up = upward(
        &g,
        "crate::points",
        &[
            "crate::document",
            "crate::report",
            "crate::verdict",
            "crate::compare",
            "crate::export",
        ],
    );
    assert!(
        up.is_empty(),
        "{}\n(the points are data: what reads them (compare, the verdict, the report) does the \
         comparing and the drawing)",
        up.join("\n")
    );
}

/// The studies say what to measure, how to run it and how to summarise it; how a study is drawn
/// is the report's (keyed by the study's name), so nothing under `study/` reaches the report, the
/// points it reads or the outputs of runs. And a run's result (`result.rs`, `result/`) is below the
/// studies that make results: it names no study module (a study's name is the results' own type).
#[test]
fn the_studies_need_nothing_of_the_report() {
    let g = graph();
    let up = upward(
        &g,
        "crate::study",
        &[
            "crate::report",
            "crate::points",
            "crate::export",
            "crate::document",
        ],
    );
    assert!(up.is_empty(), "{}", up.join("\n"));
    let up = upward(&g, "crate::result", &["crate::study"]);
    assert!(up.is_empty(), "{}", up.join("\n"));
}
