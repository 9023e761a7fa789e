//! One table of engine options: each engine declares each of its options once (its flag, help,
//! kind of value, label letter, words, fio option and field), and everything that names an option
//! reads that row — the flags of `readlab run` and `readlab serve` (the binary makes each row a
//! flag, refused beside `--profile` and `--job`), the label and its reading back, the check that
//! an option belongs to the engine run, the words in tables and tooltips, the `readlab run` and
//! fio command lines written for a configuration, and the fio import.

pub use super::spec::{EngineOption, Unset, Value};
use super::{EngineKind, EngineOptions, registry};

/// Every option of every engine, with its engine, in the registry's order.
pub fn all() -> impl Iterator<Item = (EngineKind, &'static EngineOption)> {
    EngineKind::all().flat_map(|k| k.spec().options.iter().map(move |o| (k, o)))
}

/// The options of `kind` set in `o`, in its table's order.
pub fn set_in(kind: EngineKind, o: &EngineOptions) -> impl Iterator<Item = &'static EngineOption> {
    kind.spec().options.iter().filter(move |d| d.on(o))
}

/// The first option set in `o` that belongs to an engine other than `kind`, with that engine.
pub fn foreign(kind: EngineKind, o: &EngineOptions) -> Option<(EngineKind, &'static str)> {
    registry()
        .iter()
        .filter(|s| s.name != kind.name())
        .flat_map(|s| s.options.iter().map(move |d| (s, d)))
        .find(|(_, d)| d.on(o))
        .map(|(s, d)| (EngineKind::parse(s.name).expect("registered"), d.flag))
}

/// The letters `kind`'s options in `o` add to a label (`MF` for io_uring, `R8` for the pool).
pub fn label_suffix(kind: EngineKind, o: &EngineOptions) -> String {
    let mut s = String::new();
    for d in set_in(kind, o) {
        let (Some(c), Some(n)) = (d.letter, d.get(o)) else {
            continue;
        };
        s.push(c);
        if d.value == Value::Count {
            s.push_str(&n.to_string());
        }
    }
    s
}

/// The options a label suffix stands for (the inverse of [`label_suffix`]): letters in the
/// table's order, each at most once, a counted letter followed by its number (at least 1, no
/// leading zero); none when the suffix is not one `kind` writes.
pub fn parse_suffix(kind: EngineKind, s: &str) -> Option<EngineOptions> {
    let table = kind.spec().options;
    let mut o = EngineOptions::default();
    let mut next = 0;
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        let k = table[next..].iter().position(|d| d.letter == Some(c))? + next;
        let d = &table[k];
        rest = &rest[c.len_utf8()..];
        let mut n = d.bare().unwrap_or(1);
        if d.value == Value::Count {
            let end = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            n = rest[..end].parse().ok().filter(|&n| n >= 1)?;
            if n.to_string() != rest[..end] {
                return None;
            }
            rest = &rest[end..];
        }
        d.set(&mut o, n);
        next = k + 1;
    }
    Some(o)
}

/// The options in `o` of `kind`, in words (`fixed files, SQ poll`); empty when none is set.
pub fn words(kind: EngineKind, o: &EngineOptions) -> Vec<String> {
    set_in(kind, o).filter_map(|d| d.words_in(o)).collect()
}

/// The names a row's flag has on the command line: the flag, and fio's name for the option where
/// it is no flag of its own and no earlier row's (`--fixed-files` is also `--registerfiles`; fio's
/// `hipri` is pvsync2's own flag, so io_uring's `--iopoll` is not also `--hipri`).
pub fn flag_names(d: &'static EngineOption) -> impl Iterator<Item = &'static str> {
    let alias = d.fio.filter(|&f| {
        f != d.flag
            && all().all(|(_, e)| e.flag != f)
            && all()
                .find(|(_, e)| e.fio == Some(f))
                .is_some_and(|(_, e)| e.flag == d.flag)
    });
    std::iter::once(d.flag).chain(alias)
}

/// The row of `kind` that `owner`'s flag stands for on the command line: `owner` itself when it
/// is `kind`'s, else `kind`'s row fio calls by one of the flag's names (`--hipri` is pvsync2's
/// RWF_HIPRI, and with `--engine uring` io_uring's `--iopoll`, as fio's `hipri` means there);
/// none when the flag is not one of `kind`'s.
pub fn on_command_line(
    kind: EngineKind,
    owner: &'static EngineOption,
) -> Option<&'static EngineOption> {
    let own = kind.spec().options;
    own.iter().find(|d| d.flag == owner.flag).or_else(|| {
        own.iter()
            .find(|d| d.fio.is_some_and(|f| flag_names(owner).any(|n| n == f)))
    })
}

/// fio's options for the same features, as readlab's options of `kind`: `fio_value(name)` gives
/// the value fio's job had for option `name`, if any (`1`, `true`, or a number).
pub fn from_fio(kind: EngineKind, fio_value: impl Fn(&str) -> Option<String>) -> EngineOptions {
    let mut o = EngineOptions::default();
    for d in kind.spec().options {
        let Some(v) = d.fio.and_then(&fio_value) else {
            continue;
        };
        let n = match (d.value, v.as_str()) {
            (Value::Switch, "1" | "true") => 1,
            (Value::Switch, _) => continue,
            (_, v) => match v.parse::<u64>() {
                Ok(n) => n,
                Err(_) => continue,
            },
        };
        d.set(&mut o, n);
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Each option is declared once: one engine owns each flag, field and fio option, and an
    /// engine's letters are its own (not `T`, `B` or `×`, which the label's grammar uses).
    #[test]
    fn every_option_appears_exactly_once() {
        let mut flags = BTreeSet::new();
        let mut columns = BTreeSet::new();
        for (k, d) in all() {
            assert!(flags.insert(d.flag), "--{} declared twice", d.flag);
            assert!(columns.insert(d.column), "{} declared twice", d.column);
            assert!(!d.words.is_empty() && !d.flag.starts_with('-'));
            match d.value {
                Value::Switch => assert!(!d.words.contains("{n}"), "{}", d.flag),
                Value::Count => assert!(d.words.contains("{n}"), "{}", d.flag),
                Value::Setting { .. } => {}
            }
            let mut fio = BTreeSet::new();
            let mut letters = BTreeSet::new();
            for e in k.spec().options {
                if let Some(f) = e.fio {
                    assert!(fio.insert(f), "{}: fio's {f} twice", k.name());
                }
                if let Some(c) = e.letter {
                    assert!(letters.insert(c), "{}: letter {c} twice", k.name());
                    assert!(!"TBx×0123456789".contains(c), "{}: letter {c}", k.name());
                }
            }
        }
        // The options of EngineOptions are all in the table (the SQ poll thread's idle time is
        // a setting every configuration carries, not an option of one engine).
        let fields = serde_json::to_value(EngineOptions::default()).unwrap();
        let fields: BTreeSet<&str> = fields
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .filter(|f| *f != EngineOptions::SQPOLL_IDLE_MS)
            .collect();
        assert_eq!(fields, columns);
    }

    /// Each option set alone: `get` reads back what `set` wrote, it belongs to its own engine
    /// only, and its field is the one its column names.
    #[test]
    fn each_option_sets_its_own_field() {
        for (k, d) in all() {
            let mut o = EngineOptions::default();
            assert_eq!(d.get(&o), None, "{}", d.flag);
            d.set(&mut o, 3);
            let n = d.get(&o).unwrap_or_else(|| panic!("{} not set", d.flag));
            if d.value == Value::Count {
                assert_eq!(n, 3);
            }
            assert_eq!(set_in(k, &o).map(|e| e.flag).collect::<Vec<_>>(), [d.flag]);
            assert_eq!(foreign(k, &o), None);
            let json = serde_json::to_value(&o).unwrap();
            let default = serde_json::to_value(EngineOptions::default()).unwrap();
            let changed: Vec<&String> = json
                .as_object()
                .unwrap()
                .iter()
                .filter(|(f, v)| default[f.as_str()] != **v)
                .map(|(f, _)| f)
                .collect();
            assert_eq!(changed, [d.column], "{}", d.flag);
            // fio reads back what fio's option says.
            if let Some(f) = d.fio {
                let arg = d.fio_arg(&o).unwrap();
                let v = arg.strip_prefix(&format!("--{f}=")).unwrap().to_string();
                let back = from_fio(k, |name| (name == f).then(|| v.clone()));
                assert_eq!(d.get(&back), Some(n), "{}", d.flag);
            }
            assert!(
                d.readlab_arg(&o)
                    .unwrap()
                    .starts_with(&format!("--{}", d.flag))
            );
        }
    }

    /// On the command line each flag stands for its own row with its engine, and with another
    /// engine only for a row fio calls by the flag's name: `--hipri` is io_uring's `--iopoll`,
    /// `--registerfiles` is `--fixed-files`, `--iopoll` is nothing of pvsync2's.
    #[test]
    fn a_flag_stands_for_its_own_row_or_the_one_fio_names_so() {
        for (k, d) in all() {
            assert_eq!(on_command_line(k, d).map(|e| e.flag), Some(d.flag));
            for other in EngineKind::all().filter(|&o| o != k) {
                if let Some(e) = on_command_line(other, d) {
                    assert!(e.fio.is_some_and(|f| flag_names(d).any(|n| n == f)));
                }
            }
            // A setting the flag gives without a value says so in its help.
            if let Value::Setting {
                unit,
                bare: Some(b),
                ..
            } = d.value
            {
                assert!(d.help.contains(&format!("default {b}{unit}")), "{}", d.flag);
            }
            assert!(!d.help.is_empty() && !d.help.ends_with('.'), "{}", d.flag);
        }
        let flag = |f: &str| all().find(|(_, d)| d.flag == f).unwrap().1;
        let uring = |f: &str| on_command_line(EngineKind::Uring, flag(f)).map(|d| d.flag);
        assert_eq!(uring("hipri"), Some("iopoll"));
        assert_eq!(uring("nowait"), None);
        assert!(on_command_line(EngineKind::Pvsync2, flag("iopoll")).is_none());
        let names: Vec<_> = flag_names(flag("fixed-files")).collect();
        assert_eq!(names, ["fixed-files", "registerfiles"]);
        assert_eq!(flag_names(flag("iopoll")).collect::<Vec<_>>(), ["iopoll"]);
        assert_eq!(flag_names(flag("hipri")).collect::<Vec<_>>(), ["hipri"]);
    }

    /// Every letter reads back as its option, and every option's words are in the words of a
    /// label carrying it.
    #[test]
    fn letters_round_trip_through_words() {
        for (k, d) in all() {
            let Some(c) = d.letter else { continue };
            let mut o = EngineOptions::default();
            d.set(&mut o, 8);
            let suffix = label_suffix(k, &o);
            assert!(suffix.starts_with(c), "{suffix}");
            let back = parse_suffix(k, &suffix).unwrap();
            assert_eq!(label_suffix(k, &back), suffix);
            assert_eq!(words(k, &back), [d.words_in(&back).unwrap()]);
        }
    }
}
