//! End-to-end: quick studies and a run measured by the real binary, turned into report.html with
//! a fio json+ file beside them; the page must hold every expected chart, load nothing from the
//! network, show the fio point, and render in headless Chromium to a picture that is not blank.

use crate::common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FIO_PLUS: &str = "tests/fixtures/fio-jsonplus.json";

fn ok(args: &[&str]) -> std::process::Output {
    let o = run(args);
    assert!(
        o.status.success(),
        "readlab {args:?} failed: {}\n{}",
        stderr(&o),
        stdout(&o)
    );
    o
}

/// The element with `id="{id}"` and its content up to its closing tag (`</{tag}>`).
fn element<'a>(html: &'a str, tag: &str, id: &str) -> &'a str {
    let start = html
        .find(&format!("<{tag} id=\"{id}\""))
        .unwrap_or_else(|| panic!("no <{tag} id=\"{id}\"> in the page"));
    let end = html[start..]
        .find(&format!("</{tag}>"))
        .unwrap_or_else(|| panic!("<{tag} id=\"{id}\"> is not closed"));
    &html[start..start + end]
}

/// Every value of `attr=` in the page (quoted or not).
fn attribute_values(html: &str, attr: &str) -> Vec<String> {
    let lower = html.to_ascii_lowercase();
    let needle = format!("{attr}=");
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = lower[from..].find(&needle) {
        let at = from + i;
        from = at + needle.len();
        // An attribute name starts after whitespace.
        if !lower[..at].ends_with(|c: char| c.is_whitespace()) {
            continue;
        }
        let rest = &html[from..];
        let value = match rest.chars().next() {
            Some(q @ ('"' | '\'')) => rest[1..].split(q).next().unwrap_or(""),
            _ => rest
                .split(|c: char| c.is_whitespace() || c == '>')
                .next()
                .unwrap_or(""),
        };
        out.push(value.to_string());
    }
    out
}

fn find_chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|d| d.join(name))
                    .find(|p| p.is_file())
            })
        })
}

/// Headless Chromium's screenshot of a local page, with no network and a throwaway profile.
fn screenshot(page: &Path, out: &Path) {
    let chromium = find_chromium().unwrap_or_else(|| {
        panic!(
            "chromium is not installed, so report.html cannot be rendered; install it with \
             `apt-get install -y chromium` (.ci/run does)"
        )
    });
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(&chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--screenshot={}", out.display()))
        .arg("--window-size=1280,4000")
        .arg(format!("file://{}", page.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", chromium.display()));
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                use std::io::Read;
                let _ = e.read_to_string(&mut err);
            }
            assert!(
                status.success() && out.is_file(),
                "chromium failed ({status}): {err}"
            );
            return;
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish its screenshot within 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Decode a PNG: (width, height, distinct colours, share of pixels that are not white).
fn png_stats(path: &Path) -> (u32, u32, usize, f64) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    assert_eq!(info.bit_depth, png::BitDepth::Eight, "8-bit screenshot");
    let mut colours = std::collections::HashSet::new();
    let mut not_white = 0usize;
    let px = (info.width * info.height) as usize;
    for p in buf[..info.buffer_size()].chunks(channels) {
        let rgb = (
            p[0],
            p.get(1).copied().unwrap_or(p[0]),
            p.get(2).copied().unwrap_or(p[0]),
        );
        colours.insert(rgb);
        if rgb.0 < 245 || rgb.1 < 245 || rgb.2 < 245 {
            not_white += 1;
        }
    }
    (
        info.width,
        info.height,
        colours.len(),
        not_white as f64 / px as f64,
    )
}

#[test]
fn report_from_quick_studies_renders_in_chromium() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "32M");
    let lat = d.path().join("lat");
    let thr = d.path().join("thr");
    let run_json = d.path().join("run.json");
    ok(&["study", "latency", "--quick", "--out", s(&lat), s(&f)]);
    ok(&[
        "study",
        "threads",
        "--quick",
        "--max-threads",
        "2",
        "--out",
        s(&thr),
        s(&f),
    ]);
    // The all-experiments scatter shows points with a p99.9, which needs 10,000 requests: the
    // run asks for 12,288 reads (48 MiB of 4 KiB), not for a duration a loaded machine may fill
    // with fewer (CI once read fewer than 10,000 in 2 s, and the chart was rightly left out).
    ok(&[
        "run",
        "--io-limit",
        "48m",
        "--runtime",
        "120s",
        "--quiet",
        "--json",
        s(&run_json),
        s(&f),
    ]);

    let page = d.path().join("report.html");
    let pngs = d.path().join("png");
    let o = ok(&[
        "report",
        s(&lat),
        s(&thr.join("results.jsonl")),
        s(&run_json),
        "--fio",
        FIO_PLUS,
        "-o",
        s(&page),
        "--png",
        s(&pngs),
    ]);
    assert!(stderr(&o).contains("wrote"), "{}", stderr(&o));
    let html = std::fs::read_to_string(&page).unwrap();

    // Every expected section, each with its charts as inline SVG.
    for (section, charts) in [
        ("sec-latency", &["chart-latency-bars"][..]),
        (
            "sec-threads",
            &[
                "chart-threads-throughput",
                "chart-threads-cpu",
                "chart-threads-latency-4K",
            ][..],
        ),
        (
            "sec-all",
            &["chart-all-scatter", "chart-all-cdf", "chart-all-timeline"][..],
        ),
    ] {
        let sec = element(&html, "section", section);
        for c in charts {
            let svg = element(sec, "svg", c);
            assert!(svg.contains("<text"), "{c} has text");
            assert!(
                svg.contains("<rect") || svg.contains("<polyline") || svg.contains("<path"),
                "{c} draws something"
            );
        }
    }
    // Sections only for studies that have data.
    for absent in ["sec-queue", "sec-batch", "sec-scan", "sec-uring-features"] {
        assert!(
            !html.contains(&format!("id=\"{absent}\"")),
            "{absent} has no data"
        );
    }
    // Captions name target, kernel and date.
    let kernel = rustix::system::uname()
        .release()
        .to_string_lossy()
        .into_owned();
    let caption = element(&html, "figure", "fig-latency-bars");
    assert!(
        caption.contains(s(&f)) && caption.contains(&kernel),
        "{caption}"
    );
    assert!(caption.contains(" UTC"), "{caption}");

    // Self-contained: nothing loaded from anywhere.
    for attr in ["src", "href", "xlink:href"] {
        for v in attribute_values(&html, attr) {
            let l = v.to_ascii_lowercase();
            assert!(
                !l.starts_with("http://") && !l.starts_with("https://") && !l.starts_with("//"),
                "{attr}={v}"
            );
        }
    }
    assert!(!html.contains("http://") && !html.contains("https://"));
    assert!(!html.to_ascii_lowercase().contains("<script"));
    assert!(!html.contains("@import") && !html.contains("url("));
    let links = attribute_values(&html, "href");
    assert!(links.iter().all(|l| l.starts_with('#')), "{links:?}");

    // The fio json+ point is on the all-experiments chart, named and in the legend.
    let scatter = element(&html, "svg", "chart-all-scatter");
    assert!(
        scatter.contains("fio:P"),
        "fio point labelled on the scatter"
    );
    assert!(scatter.contains("fio point"), "fio in the scatter's legend");
    assert!(element(&html, "svg", "chart-all-cdf").contains("fio:P"));

    // PNG export: one per chart.
    let n_charts = html.matches("<svg id=\"chart-").count();
    let written = std::fs::read_dir(&pngs).unwrap().count();
    assert_eq!(written, n_charts);

    // The page renders: many colours, a good share of ink.
    let shot = d.path().join("report.png");
    screenshot(&page, &shot);
    let (w, h, colours, ink) = png_stats(&shot);
    assert_eq!((w, h), (1280, 4000));
    assert!(
        colours > 300,
        "only {colours} distinct colours: a blank or broken page"
    );
    assert!(
        ink > 0.05,
        "only {:.1}% of the page is not white",
        ink * 100.0
    );
    if let Some(keep) = std::env::var_os("READLAB_KEEP_SCREENSHOT") {
        let _ = std::fs::copy(&shot, keep);
    }

    // The same tables as CSV and Markdown, on stdout.
    let o = ok(&[
        "report",
        s(&lat),
        "--fio",
        FIO_PLUS,
        "--format",
        "csv",
        "-o",
        "-",
    ]);
    let csv = stdout(&o);
    assert!(csv.starts_with("tables,source,label,name"));
    assert!(csv.contains("lat_p99_99_ns") && csv.contains(",fio,fio:P,"));
    assert!(
        csv.lines()
            .filter(|l| l.starts_with("latency;all,"))
            .count()
            >= 2
    );
    // One row per point.
    let points = csv.lines().count() - 1;
    assert_eq!(
        points,
        std::fs::read_to_string(lat.join("results.jsonl"))
            .unwrap()
            .lines()
            .count()
            + 1,
        "{csv}"
    );
    let o = ok(&["report", s(&thr), "--format", "md", "-o", "-"]);
    assert!(stdout(&o).contains("## Reading from several threads"));

    // A plain run alone still gets the all-experiments charts.
    let single = d.path().join("single.html");
    ok(&["report", s(&run_json), "-o", s(&single)]);
    let html = std::fs::read_to_string(&single).unwrap();
    for c in ["chart-all-scatter", "chart-all-cdf", "chart-all-timeline"] {
        assert!(html.contains(&format!("<svg id=\"{c}\"")), "{c}");
    }
    assert!(!html.contains("id=\"sec-latency\""));
}

#[test]
fn bad_report_input_exits_2() {
    let d = disk_dir();
    let empty_dir = d.path().join("nothing");
    std::fs::create_dir(&empty_dir).unwrap();
    let out = d.path().join("r.html");
    for args in [
        vec!["report"],
        vec!["report", "/nonexistent/results.jsonl"],
        vec!["report", s(&empty_dir)],
        vec!["report", FIO_PLUS, "--format", "pdf"],
        vec!["report", "--fio", "Cargo.toml"],
    ] {
        let mut a = args.clone();
        a.extend(["-o", s(&out)]);
        let o = run(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("error"), "{a:?}");
    }
    assert!(!out.exists(), "nothing written on bad input");
}

/// The `<text>` contents of an SVG, joined by newlines (plotters writes one element per string).
fn svg_texts(svg: &str) -> String {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find("<text") {
        rest = &rest[i..];
        let Some(open) = rest.find('>') else { break };
        let Some(close) = rest.find("</text>") else {
            break;
        };
        out.push(rest[open + 1..close].to_string());
        rest = &rest[close..];
    }
    out.join("\n")
}

/// Issue 13: a report over two targets (a loop device and a disk file) keeps them apart: two
/// all-experiments scatters, each with its own Pareto frontier and its target's name in the
/// legend, names (never paths) in every legend, a side-by-side section and a verdict per target.
#[test]
fn two_targets_get_two_scatters_and_frontiers_named_in_legends() {
    let d = disk_dir();
    let f = prepare(d.path(), "f", "64M");
    let lo = LoopDev::prepared("64M");
    // Each target's scatter shows points with a p99.9, which needs 10,000 requests: each run
    // asks for 12,288 reads (48 MiB of 4 KiB), not for a second a loaded machine may fill with
    // fewer (CI once read fewer on one target, and its scatter was rightly left out).
    let runs = |target: &str, json: &Path| {
        ok(&[
            "run",
            "--engine",
            "psync,libaio",
            "--iodepth",
            "1,8",
            "--io-limit",
            "48m",
            "--runtime",
            "120s",
            "--budget",
            "0",
            "-q",
            "--json",
            s(json),
            target,
        ])
    };
    let on_loop = d.path().join("loop.json");
    let on_file = d.path().join("file.json");
    let o = runs(&lo.dev, &on_loop);
    assert!(stdout(&o).contains("Verdict for loop"), "{}", stdout(&o));
    runs(s(&f), &on_file);
    let page = d.path().join("two.html");
    ok(&["report", s(&on_loop), s(&on_file), "-o", s(&page)]);
    let html = std::fs::read_to_string(&page).unwrap();
    let loop_name = lo.dev.trim_start_matches("/dev/").to_string();
    // The file's name is what its environment says: `<fs> on <device>`.
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&on_file).unwrap()).unwrap();
    let env = &doc[0]["environment"];
    let file_name = match (env["filesystem"].as_str(), env["device"]["name"].as_str()) {
        (Some(fs), Some(dev)) => format!("{fs} on {dev}"),
        (Some(fs), None) => fs.to_string(),
        (None, Some(dev)) => dev.to_string(),
        (None, None) => panic!("the disk file's environment names no device: {env}"),
    };
    let file_name = file_name.as_str();
    // Two scatters, one per target, each with its frontier and its name in the legend.
    let all = element(&html, "section", "sec-all");
    assert_eq!(
        all.matches("<svg id=\"chart-all-scatter-").count(),
        2,
        "two scatters"
    );
    for (k, name) in [(1, loop_name.as_str()), (2, file_name)] {
        let svg = element(all, "svg", &format!("chart-all-scatter-{k}"));
        let texts = svg_texts(svg);
        // The chart and its table agree: the dashed frontier is drawn (and in the legend)
        // exactly when the table marks more than one of this target's rows as on it. Which
        // points a real device puts there is the device's business: one point may beat all.
        let front = element(&html, "table", "table-all")
            .split("<tr")
            .filter(|r| r.starts_with(" class=\"front\"") || r.starts_with(" class=\"fio front\""))
            .filter(|r| r.contains(&format!("<td class=\"t\">{name}</td>")))
            .count();
        assert!(front >= 1, "scatter {k}: no row of {name} on the frontier");
        assert_eq!(
            texts.contains("Pareto frontier"),
            front > 1,
            "scatter {k}: legend against {front} frontier rows: {texts}"
        );
        assert!(
            texts
                .lines()
                .any(|t| t.starts_with("target: ") && t.contains(name)),
            "scatter {k} names {name} in its legend: {texts}"
        );
        if front > 1 {
            assert!(svg.contains("stroke-dasharray") || svg.matches("<polyline").count() > 0);
        }
    }
    // Legends use names, never paths.
    for id in attribute_values(&html, "id")
        .iter()
        .filter(|i| i.starts_with("chart-"))
    {
        let texts = svg_texts(element(&html, "svg", id));
        assert!(
            !texts.contains(s(&f)) && !texts.contains("/dev/loop"),
            "{id} shows a path: {texts}"
        );
    }
    // The devices side by side, and a verdict per target.
    let dev = element(&html, "section", "sec-devices");
    for name in [loop_name.as_str(), file_name] {
        assert!(dev.contains(name), "{name} in the side-by-side section");
    }
    let bars = svg_texts(element(dev, "svg", "chart-devices-throughput"));
    assert!(
        bars.contains(&loop_name) && bars.contains(file_name),
        "{bars}"
    );
    let verdict = element(&html, "section", "sec-verdict");
    assert_eq!(verdict.matches("<h3>Verdict for ").count(), 2);

    let shot = d.path().join("two.png");
    screenshot(&page, &shot);
    let (_, _, colours, ink) = png_stats(&shot);
    assert!(colours > 300 && ink > 0.05, "{colours} colours, {ink} ink");
    if let Some(keep) = std::env::var_os("READLAB_KEEP_DEVICES_SCREENSHOT") {
        let _ = std::fs::copy(&shot, keep);
    }
}
