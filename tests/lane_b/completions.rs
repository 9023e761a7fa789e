//! Shell completions and man pages, generated from the command line's definition: the bash script
//! `readlab completions bash` prints is sourced in a real bash and asked what it completes
//! (subcommands, flags, every registered study's name); the man pages render with man/groff and
//! name the flags; and every help lists every study of the library's registry and every input
//! kind `report` and `compare` read.

use crate::common;

use common::{run, stderr, stdout};
use std::process::Command;

/// What bash's completion function offers for `words` (the last word the one being
/// completed; an empty last word completes after a space), with the script sourced as installed.
fn complete(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let cword = words.len() - 1;
    let prev = if cword > 0 { words[cword - 1] } else { "" };
    let program = format!(
        "source '{}'\nCOMP_WORDS=({})\nCOMP_CWORD={cword}\nCOMP_LINE='{}'\nCOMP_POINT=${{#COMP_LINE}}\n\
         _readlab readlab '{}' '{prev}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script.display(),
        quoted.join(" "),
        words.join(" "),
        words[cword],
    );
    let o = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .expect("bash");
    assert!(o.status.success(), "bash: {}", stderr(&o));
    stdout(&o)
        .lines()
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

fn bash_script(dir: &std::path::Path) -> std::path::PathBuf {
    let o = run(&["completions", "bash"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let p = dir.join("readlab.bash");
    std::fs::write(&p, &o.stdout).unwrap();
    p
}

fn runnable() -> Vec<&'static str> {
    readlab::study::runnable().map(|s| s.name).collect()
}

#[test]
fn bash_completes_commands_flags_and_study_names() {
    let dir = tempfile::tempdir().unwrap();
    let script = bash_script(dir.path());
    assert_eq!(complete(&script, &["readlab", "ru"]), ["run"]);
    // fio's `--iodepth_batch_complete_max` is a word readlab takes too, so it is offered beside
    // `--iodepth`; every offer starts with what was typed.
    let iod = complete(&script, &["readlab", "run", "--iod"]);
    assert!(
        iod.contains(&"--iodepth".to_string()) && iod.iter().all(|w| w.starts_with("--iod")),
        "{iod:?}"
    );
    assert_eq!(
        complete(&script, &["readlab", "run", "--fixed-f"]),
        ["--fixed-files"]
    );
    let studies = complete(&script, &["readlab", "study", ""]);
    let names = runnable();
    assert!(names.len() >= 16, "{names:?}");
    for name in names.iter().chain(&["all"]) {
        assert!(
            studies.iter().any(|s| s == name),
            "`readlab study <TAB>` does not offer {name}: {studies:?}"
        );
    }
    assert_eq!(
        complete(&script, &["readlab", "study", "uring-f"]),
        ["uring-features"]
    );
    assert_eq!(
        complete(&script, &["readlab", "completions", "fi"]),
        ["fish"]
    );
}

#[test]
fn zsh_and_fish_scripts_name_the_commands_and_studies() {
    for shell in ["zsh", "fish"] {
        let o = run(&["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", stderr(&o));
        let text = stdout(&o);
        for word in [
            "run",
            "study",
            "iodepth",
            "uring-features",
            "latency-breakdown",
        ] {
            assert!(text.contains(word), "{shell} script lacks {word}");
        }
    }
    let o = run(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// A page rendered for people: man -l if there is man, else groff.
fn render(page: &std::path::Path) -> String {
    let o = Command::new("man")
        .arg("-l")
        .arg(page)
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("MANWIDTH", "100")
        .output()
        .or_else(|_| {
            Command::new("groff")
                .args(["-man", "-Tutf8"])
                .arg(page)
                .output()
        })
        .expect("man or groff");
    assert!(o.status.success(), "{}: {}", page.display(), stderr(&o));
    // Bold and underline as overstrikes (groff's grotty without -c) read as plain text.
    let mut plain = String::new();
    let text = stdout(&o);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if chars.peek() == Some(&'\u{8}') {
            chars.next();
            continue;
        }
        plain.push(c);
    }
    plain
}

#[test]
fn man_pages_render_one_per_command_with_their_flags() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(&["man", dir.path().to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    for name in [
        "readlab.1",
        "readlab-run.1",
        "readlab-study.1",
        "readlab-report.1",
        "readlab-compare.1",
        "readlab-completions.1",
        "readlab-man.1",
    ] {
        assert!(dir.path().join(name).is_file(), "no {name}");
    }
    let run_page = render(&dir.path().join("readlab-run.1"));
    for flag in ["--iodepth", "--engine", "--json", "--runtime"] {
        assert!(
            run_page.contains(flag),
            "readlab-run(1) lacks {flag}:\n{run_page}"
        );
    }
    let study_page = render(&dir.path().join("readlab-study.1"));
    for name in runnable() {
        assert!(study_page.contains(name), "readlab-study(1) lacks {name}");
    }
    let main_page = render(&dir.path().join("readlab.1"));
    assert!(main_page.contains("completions") && main_page.contains("study"));
    // One page printed: readlab(1), or a command's with --page.
    let o = run(&["man"]);
    assert!(o.status.success() && stdout(&o).contains(".TH readlab 1"));
    let o = run(&["man", "--page", "run"]);
    assert!(o.status.success() && stdout(&o).contains("iodepth"));
    // Refused in one line, exit 2, nothing written: a page that is no command, a directory that
    // is a file (or cannot be made), both a directory and --page.
    let file = dir.path().join("readlab.1");
    let before = std::fs::read(&file).unwrap();
    let file = file.to_str().unwrap();
    for args in [
        &["man", "--page", "nosuch"][..],
        &["man", file],
        &["man", "/proc/readlab-no-such-dir"],
        &["man", dir.path().to_str().unwrap(), "--page", "run"],
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{args:?}: {}", stderr(&o));
    }
    assert_eq!(std::fs::read(file).unwrap(), before);
}

#[test]
fn study_help_lists_every_registered_study() {
    let o = run(&["study", "--help"]);
    assert!(o.status.success());
    let help = stdout(&o);
    let runnable = runnable();
    for spec in readlab::study::registry() {
        // A study `readlab study` runs is a possible value, with its description; one another
        // command writes (tune's) is named with that command.
        let listed = if runnable.contains(&spec.name) {
            format!("- {}:", spec.name)
        } else {
            format!("`readlab {}`", spec.name)
        };
        assert!(
            help.contains(&listed),
            "`study --help` does not list the {} study ({listed}):\n{help}",
            spec.name
        );
    }
    assert!(help.contains("- all:"), "{help}");
    // A name not registered is still refused with the library's message and exit 2.
    let o = run(&["study", "bogus", "f"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown study"), "{}", stderr(&o));
    let o = run(&["study", "tune", "f"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("readlab tune"), "{}", stderr(&o));
}

#[test]
fn report_and_compare_help_list_every_input_kind() {
    for cmd in ["report", "compare"] {
        let o = run(&[cmd, "--help"]);
        assert!(o.status.success());
        let help = stdout(&o).split_whitespace().collect::<Vec<_>>().join(" ");
        for kind in [
            "run --json",
            "study",
            "tune",
            "results.jsonl",
            "report --format json",
            "fio",
        ] {
            assert!(
                help.contains(kind),
                "`{cmd} --help` does not name {kind}: {help}"
            );
        }
    }
}
