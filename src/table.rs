//! One table renderer for everything readlab prints as a table: the terminal's run table, the
//! report's tables (Markdown, CSV, HTML), study summaries and the tuner's table. A [`Table`] is
//! columns (header, alignment, minimum width) and rows of finished cell text; it renders as
//! aligned text, Markdown, CSV or an HTML `<table>`.

use std::fmt::Write;

/// How a column's cells line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text: names, labels.
    Left,
    /// Numbers.
    Right,
}

/// One column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub header: String,
    pub align: Align,
    /// Aligned text pads the column to at least this many characters (wider cells widen it).
    pub width: usize,
    /// An HTML class for its body cells besides the alignment's (e.g. `lab`).
    pub class: Option<&'static str>,
    /// How long the column survives when aligned text must fit a narrow terminal: columns of
    /// the lowest priority are left out first (the rightmost of equals first). The first column
    /// always stays, and so does a column marked [`Column::keep`].
    pub priority: u8,
    /// Text in this column is cut no shorter than this while a column can be left out instead
    /// (`None`: a dozen characters).
    pub floor: Option<usize>,
}

impl Column {
    pub fn left(header: impl Into<String>) -> Column {
        Column {
            header: header.into(),
            align: Align::Left,
            width: 0,
            class: None,
            priority: 0,
            floor: None,
        }
    }

    pub fn right(header: impl Into<String>) -> Column {
        Column {
            align: Align::Right,
            ..Column::left(header)
        }
    }

    /// The same column, at least `width` characters wide in aligned text.
    pub fn width(mut self, width: usize) -> Column {
        self.width = width;
        self
    }

    /// The same column, left out later than columns of a lower `priority` when a terminal is
    /// too narrow for the table (0, the default, goes first).
    pub fn priority(mut self, priority: u8) -> Column {
        self.priority = priority;
        self
    }

    /// The same column, never left out to fit a terminal (a label column, say).
    pub fn keep(self) -> Column {
        self.priority(u8::MAX)
    }

    /// The same column, its text cut no shorter than `chars` characters while another column
    /// can be left out instead (`usize::MAX`: never cut while anything else can give).
    pub fn floor(mut self, chars: usize) -> Column {
        self.floor = Some(chars);
        self
    }

    /// The same column, its HTML body cells carrying `class` too.
    pub fn class(mut self, class: &'static str) -> Column {
        self.class = Some(class);
        self
    }
}

/// One row: its cells in column order, and an HTML class for the row.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Row {
    pub cells: Vec<String>,
    pub class: Option<String>,
}

/// A table ready to print.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
}

/// Escape text for HTML content and attribute values.
pub fn html_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// A Markdown cell: pipes escaped, line breaks as spaces.
pub fn markdown_escape(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// A CSV field, quoted when it must be (RFC 4180).
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Text cells are not cut shorter than this while a column of lower priority can go instead.
const TEXT_FLOOR: usize = 12;

/// The width of a line of the kept columns at widths `ws`, one space apart.
fn line_width(ws: &[usize], keep: &[bool]) -> usize {
    let kept: Vec<usize> = ws
        .iter()
        .zip(keep)
        .filter(|(_, k)| **k)
        .map(|(w, _)| *w)
        .collect();
    kept.iter().sum::<usize>() + kept.len().saturating_sub(1)
}

/// `s` in at most `w` characters: its start and `…` when longer.
fn abbreviate(s: &str, w: usize) -> std::borrow::Cow<'_, str> {
    if s.chars().count() <= w {
        s.into()
    } else if w == 0 {
        "".into()
    } else {
        let mut t: String = s.chars().take(w - 1).collect();
        t.push('…');
        t.into()
    }
}

impl Table {
    pub fn new(columns: Vec<Column>) -> Table {
        Table {
            columns,
            rows: Vec::new(),
        }
    }

    /// Add a row of cells (missing cells print empty).
    pub fn push<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.push_row(Row {
            cells: cells.into_iter().map(Into::into).collect(),
            class: None,
        });
    }

    pub fn push_row(&mut self, row: Row) {
        self.rows.push(row);
    }

    fn cell(row: &Row, k: usize) -> &str {
        row.cells.get(k).map(String::as_str).unwrap_or("")
    }

    /// Aligned text for the terminal: one line per row under a header line, columns one space
    /// apart, each as wide as its widest cell (or its minimum width).
    pub fn text(&self) -> String {
        let widths: Vec<usize> = self
            .columns
            .iter()
            .enumerate()
            .map(|(k, c)| {
                self.rows
                    .iter()
                    .map(|r| Self::cell(r, k).chars().count())
                    .chain([c.header.chars().count(), c.width])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &mut dyn Iterator<Item = &str>| {
            let parts: Vec<String> = cells
                .zip(&self.columns)
                .zip(&widths)
                .map(|((s, c), &w)| match c.align {
                    Align::Left => format!("{s:<w$}"),
                    Align::Right => format!("{s:>w$}"),
                })
                .collect();
            parts.join(" ") + "\n"
        };
        let mut out = line(&mut self.columns.iter().map(|c| c.header.as_str()));
        for r in &self.rows {
            out.push_str(&line(
                &mut (0..self.columns.len()).map(|k| Self::cell(r, k)),
            ));
        }
        out
    }

    /// Aligned text whose every line fits in `width` columns, for a terminal. When the table
    /// is wider, first the columns' minimum widths give way, then long text cells are shortened
    /// (their start kept, an ellipsis `…` at the cut), then whole columns are left out, lowest
    /// [`Column::priority`] first, and a line under the table names them. A number is never cut
    /// nor wrapped: a number column is shown whole or not at all. The first column always stays.
    pub fn text_within(&self, width: usize) -> String {
        let n = self.columns.len();
        let natural: Vec<usize> = (0..n).map(|k| self.natural(k)).collect();
        let padded: Vec<usize> = (0..n)
            .map(|k| natural[k].max(self.columns[k].width))
            .collect();
        let all = vec![true; n];
        if n == 0 || line_width(&padded, &all) <= width {
            return self.text();
        }
        let mut keep = all;
        let mut left_out = Vec::new();
        // Per column, how short its text may be cut: its own floor at first.
        let mut floors: Vec<usize> = self
            .columns
            .iter()
            .map(|c| c.floor.unwrap_or(TEXT_FLOOR))
            .collect();
        // Ordinary columns go before text is cut shorter than its floor; only a terminal too
        // narrow for the first column and the kept ones cuts text further, then drops kept ones.
        for drop_kept in [false, true] {
            if drop_kept {
                floors.iter_mut().for_each(|f| *f = 1);
            }
            loop {
                if let Some(ws) = self.squeeze(&natural, &keep, &floors, width) {
                    return self.render_fitted(&ws, &keep, &left_out, width);
                }
                let next = (1..n)
                    .filter(|&k| keep[k] && (drop_kept || self.columns[k].priority < u8::MAX))
                    .min_by_key(|&k| (self.columns[k].priority, std::cmp::Reverse(k)));
                match next {
                    // A text column with a floor of its own is cut to the usual floor before
                    // it is left out.
                    Some(k) if self.columns[k].align == Align::Left && floors[k] > TEXT_FLOOR => {
                        floors[k] = TEXT_FLOOR;
                    }
                    Some(k) => {
                        keep[k] = false;
                        left_out.push(k);
                    }
                    None => break,
                }
            }
        }
        // Only a first column of numbers wider than the terminal is left: shown whole.
        let ws = self
            .squeeze(&natural, &keep, &vec![1; n], usize::MAX)
            .unwrap_or(natural);
        self.render_fitted(&ws, &keep, &left_out, width)
    }

    /// The width column `k` needs for its header and cells (its minimum width aside).
    fn natural(&self, k: usize) -> usize {
        self.rows
            .iter()
            .map(|r| Self::cell(r, k).chars().count())
            .chain([self.columns[k].header.chars().count()])
            .max()
            .unwrap_or(0)
    }

    /// Widths of the kept columns within `width`, text columns shortened widest first down to
    /// their `floors` (numbers keep theirs); None when that is not enough.
    fn squeeze(
        &self,
        natural: &[usize],
        keep: &[bool],
        floors: &[usize],
        width: usize,
    ) -> Option<Vec<usize>> {
        let mut ws = natural.to_vec();
        let min = |k: usize| match self.columns[k].align {
            Align::Left => natural[k].min(floors[k]),
            Align::Right => natural[k],
        };
        let least: Vec<usize> = (0..ws.len()).map(min).collect();
        if line_width(&least, keep) > width {
            return None;
        }
        let mut over = line_width(&ws, keep).saturating_sub(width);
        while over > 0 {
            // The widest text column that can still give, the rightmost of equals.
            let k = (0..ws.len())
                .filter(|&k| keep[k] && ws[k] > least[k])
                .max_by_key(|&k| (ws[k], k))?;
            ws[k] -= 1;
            over -= 1;
        }
        Some(ws)
    }

    /// The kept columns at widths `ws` (text cut with `…` where longer), trailing blanks
    /// trimmed, and the line naming the columns left out.
    fn render_fitted(
        &self,
        ws: &[usize],
        keep: &[bool],
        left_out: &[usize],
        width: usize,
    ) -> String {
        let cols: Vec<usize> = (0..self.columns.len()).filter(|&k| keep[k]).collect();
        let line = |cells: &[&str]| {
            let parts: Vec<String> = cols
                .iter()
                .map(|&k| {
                    let w = ws[k];
                    let s = abbreviate(cells[k], w);
                    match self.columns[k].align {
                        Align::Left => format!("{s:<w$}"),
                        Align::Right => format!("{s:>w$}"),
                    }
                })
                .collect();
            parts.join(" ").trim_end().to_string() + "\n"
        };
        let headers: Vec<&str> = self.columns.iter().map(|c| c.header.as_str()).collect();
        let mut out = line(&headers);
        for r in &self.rows {
            let cells: Vec<&str> = (0..self.columns.len()).map(|k| Self::cell(r, k)).collect();
            out.push_str(&line(&cells));
        }
        if !left_out.is_empty() {
            let mut left_out = left_out.to_vec();
            left_out.sort_unstable();
            let names: Vec<String> = left_out
                .iter()
                .map(|&k| match self.columns[k].header.trim() {
                    "" => format!("column {}", k + 1),
                    h => h.to_string(),
                })
                .collect();
            let note = format!(
                "left out to fit {width} columns: {} — use --output json for all",
                names.join(", ")
            );
            out.push_str(&crate::terminal::wrap(&note, width));
            out.push('\n');
        }
        out
    }

    /// A Markdown table (`| a | b |`, `|---|---:|`, …); an empty header reads `| |`.
    pub fn markdown(&self) -> String {
        let mut s = String::from("|");
        for c in &self.columns {
            if c.header.is_empty() {
                s.push_str(" |");
            } else {
                let _ = write!(s, " {} |", markdown_escape(&c.header));
            }
        }
        s.push_str("\n|");
        for c in &self.columns {
            s.push_str(match c.align {
                Align::Left => "---|",
                Align::Right => "---:|",
            });
        }
        s.push('\n');
        for r in &self.rows {
            s.push('|');
            for k in 0..self.columns.len() {
                let _ = write!(s, " {} |", markdown_escape(Self::cell(r, k)));
            }
            s.push('\n');
        }
        s
    }

    /// CSV: the header line, then one line per row, CRLF line ends.
    pub fn csv(&self) -> String {
        let line = |cells: &mut dyn Iterator<Item = &str>| {
            let fields: Vec<String> = cells.map(csv_field).collect();
            fields.join(",") + "\r\n"
        };
        let mut out = line(&mut self.columns.iter().map(|c| c.header.as_str()));
        for r in &self.rows {
            out.push_str(&line(
                &mut (0..self.columns.len()).map(|k| Self::cell(r, k)),
            ));
        }
        out
    }

    /// An HTML `<table>` with `id` and a caption (both given as text, escaped here). Text
    /// columns carry class `t` (left-aligned by the page's CSS); rows carry their class.
    pub fn html(&self, id: &str, caption: &str) -> String {
        let mut out = String::new();
        let _ = write!(
            out,
            "<table id=\"{}\"><caption>{}</caption>\n<thead><tr>",
            html_escape(id),
            html_escape(caption)
        );
        for c in &self.columns {
            let _ = write!(
                out,
                "<th{}>{}</th>",
                if c.align == Align::Left {
                    " class=\"t\""
                } else {
                    ""
                },
                html_escape(&c.header)
            );
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for r in &self.rows {
            match &r.class {
                Some(c) => {
                    let _ = write!(out, "<tr class=\"{}\">", html_escape(c));
                }
                None => out.push_str("<tr>"),
            }
            for (k, c) in self.columns.iter().enumerate() {
                let classes: Vec<&str> = (c.align == Align::Left)
                    .then_some("t")
                    .into_iter()
                    .chain(c.class)
                    .collect();
                let attr = if classes.is_empty() {
                    String::new()
                } else {
                    format!(" class=\"{}\"", classes.join(" "))
                };
                let _ = write!(out, "<td{attr}>{}</td>", html_escape(Self::cell(r, k)));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table>");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new(vec![
            Column::left("name").width(6),
            Column::right("MB/s").width(6),
        ]);
        t.push(["a|b", "12.5"]);
        t.push(["long name", ""]);
        t
    }

    #[test]
    fn text_lines_up() {
        assert_eq!(
            sample().text(),
            "name        MB/s\na|b         12.5\nlong name       \n"
        );
    }

    #[test]
    fn markdown() {
        assert_eq!(
            sample().markdown(),
            "| name | MB/s |\n|---|---:|\n| a\\|b | 12.5 |\n| long name |  |\n"
        );
        let corner = Table::new(vec![Column::left(""), Column::right("x")]);
        assert_eq!(corner.markdown(), "| | x |\n|---|---:|\n");
    }

    #[test]
    fn csv_quotes() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(sample().csv(), "name,MB/s\r\na|b,12.5\r\nlong name,\r\n");
    }

    #[test]
    fn html() {
        let mut t = Table::new(vec![Column::left("l").class("lab"), Column::right("<v>")]);
        t.push_row(Row {
            cells: vec!["x".into(), "1".into()],
            class: Some("fio".into()),
        });
        assert_eq!(
            t.html("table-a", "A & B"),
            "<table id=\"table-a\"><caption>A &amp; B</caption>\n<thead><tr><th class=\"t\">l</th><th>&lt;v&gt;</th></tr></thead>\n<tbody>\n<tr class=\"fio\"><td class=\"t lab\">x</td><td>1</td></tr>\n</tbody></table>"
        );
        assert_eq!(
            html_escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    /// The study summaries' and the tuner's Markdown tables, as they print them today.
    #[test]
    fn summaries_and_the_tune_table_fit() {
        let mut pivot = Table::new(vec![
            Column::left(""),
            Column::right("4K MB/s"),
            Column::right("4K p99.9"),
        ]);
        pivot.push(["1", "10.0", "–"]);
        assert_eq!(
            pivot.markdown(),
            "| | 4K MB/s | 4K p99.9 |\n|---|---:|---:|\n| 1 | 10.0 | – |\n"
        );
        let scan = Table::new(vec![Column::right("offset"), Column::right("MB/s")]);
        assert_eq!(scan.markdown(), "| offset | MB/s |\n|---:|---:|\n");
        let points = Table::new(
            ["label", "workload"]
                .map(Column::left)
                .into_iter()
                .chain(["MB/s", "IOPS", "p50", "p99", "p99.9", "CPU %"].map(Column::right))
                .chain([Column::left("ended")])
                .collect(),
        );
        assert_eq!(
            points.markdown(),
            "| label | workload | MB/s | IOPS | p50 | p99 | p99.9 | CPU % | ended |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n"
        );
        let mut tune = Table::new(
            ["goal", "target", "engine"]
                .map(Column::left)
                .into_iter()
                .chain(["threads", "queue size", "batch"].map(Column::right))
                .chain([Column::left("features")])
                .chain(["MB/s", "IOPS", "p99.9", "CPU (cores)"].map(Column::right))
                .chain([Column::left("label")])
                .collect(),
        );
        tune.push([
            "throughput (recommended)",
            "f",
            "uring",
            "1",
            "32",
            "4",
            "-",
            "500.0",
            "122070",
            "1.22ms",
            "0.95",
            "U32B4",
        ]);
        assert_eq!(
            tune.markdown(),
            "| goal | target | engine | threads | queue size | batch | features | MB/s | IOPS | p99.9 | CPU (cores) | label |\n\
             |---|---|---|---:|---:|---:|---|---:|---:|---:|---:|---|\n\
             | throughput (recommended) | f | uring | 1 | 32 | 4 | - | 500.0 | 122070 | 1.22ms | 0.95 | U32B4 |\n"
        );
    }

    /// A tiny deterministic generator for the property tests (no dependency needed).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n.max(1)
        }
        fn text(&mut self, max: u64) -> String {
            let words = [
                "uring",
                "psync",
                "fastest",
                "lowest tail",
                "no spread measured",
                "recommended: balanced",
                "4K random",
                "µs",
                "–",
                "ext4 on vda",
                "(p99)",
            ];
            let mut s = String::new();
            while (s.chars().count() as u64) < self.below(max + 1) {
                if !s.is_empty() {
                    s.push(' ');
                }
                s.push_str(words[self.below(words.len() as u64) as usize]);
            }
            s
        }
        fn number(&mut self) -> String {
            match self.below(4) {
                0 => format!("{}", self.below(10_000_000)),
                1 => format!("{}.{}", self.below(100_000), self.below(10)),
                2 => format!("{}.{:02}ms", self.below(1000), self.below(100)),
                _ => format!("{:+.1} %*", self.below(100_000) as f64 / 10.0),
            }
        }
    }

    fn random_table(rng: &mut Rng) -> Table {
        let ncol = 1 + rng.below(16) as usize;
        let columns: Vec<Column> = (0..ncol)
            .map(|k| {
                let header = format!(
                    "{}{k}",
                    ["p", "IOPS ", "how sure ", "label ", ""][rng.below(5) as usize]
                );
                let c = if rng.below(2) == 0 {
                    Column::left(header)
                } else {
                    Column::right(header)
                };
                let c = c.width(rng.below(14) as usize).priority(rng.below(4) as u8);
                let c = if rng.below(4) == 0 {
                    c.floor(rng.below(80) as usize)
                } else {
                    c
                };
                if rng.below(6) == 0 { c.keep() } else { c }
            })
            .collect();
        let mut t = Table::new(columns);
        for _ in 0..rng.below(8) {
            let cells: Vec<String> = (0..ncol)
                .map(|k| match t.columns[k].align {
                    Align::Left => rng.text(70),
                    Align::Right => rng.number(),
                })
                .collect();
            t.push(cells);
        }
        t
    }

    /// Every line of a table fitted to any width from 40 to 199 fits it, whatever the table;
    /// every number shown is shown whole, and a column not shown is named under the table.
    #[test]
    fn text_within_fits_every_width_and_never_cuts_a_number() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..3000 {
            let t = random_table(&mut rng);
            let w = 40 + rng.below(160) as usize;
            let text = t.text_within(w);
            for l in text.lines() {
                assert!(l.chars().count() <= w, "width {w}: {l:?}\n{text}");
            }
            let lines: Vec<&str> = text.lines().collect();
            let note = lines.iter().position(|l| l.starts_with("left out to fit"));
            // Headers are unique (they end in their index): the note names the columns left out.
            let left_out: Vec<String> = note.map_or_else(Vec::new, |n| {
                let all = lines[n..].join(" ");
                let all = all.split_whitespace().collect::<Vec<_>>().join(" ");
                let names = &all[all.find(": ").unwrap() + 2..all.find(" —").unwrap()];
                names.split(", ").map(String::from).collect()
            });
            let shown = |k: usize| !left_out.contains(&t.columns[k].header);
            for (k, c) in t.columns.iter().enumerate() {
                if c.align != Align::Right || !shown(k) {
                    continue;
                }
                for (i, r) in t.rows.iter().enumerate() {
                    let cell = Table::cell(r, k);
                    assert!(
                        lines[i + 1].split(' ').any(|w| w == cell)
                            || cell.contains(' ') && lines[i + 1].contains(cell),
                        "number {cell:?} of column {k} cut in row {i} at width {w}:\n{text}"
                    );
                }
            }
            if t.columns.iter().all(|c| c.align == Align::Right)
                || t.text().lines().all(|l| l.chars().count() <= w)
            {
                assert!(note.is_none() || t.columns.iter().all(|c| c.align == Align::Right));
            }
        }
    }

    #[test]
    fn text_within_trims_then_abbreviates_then_leaves_columns_out() {
        let mut t = Table::new(vec![
            Column::left("label").width(10),
            Column::left("workload").width(30),
            Column::right("IOPS").width(10).keep(),
            Column::right("p90").width(9),
            Column::right("p99.99").width(9),
            Column::left("how sure").priority(2),
        ]);
        t.push([
            "U8B1",
            "uring rand 4K direct",
            "30460",
            "66.4us",
            "4.04ms",
            "356 % more IOPS than U1B1; no spread measured",
        ]);
        // Wide enough: the usual text.
        assert_eq!(t.text_within(200), t.text());
        // Padding goes first: the same cells, one space apart.
        let trimmed = t.text_within(100);
        assert_eq!(
            trimmed.lines().nth(1).unwrap(),
            "U8B1  uring rand 4K direct 30460 66.4us 4.04ms 356 % more IOPS than U1B1; no spread measured"
        );
        // Then the long text, its start kept.
        let cut = t.text_within(80);
        let row = cut.lines().nth(1).unwrap();
        assert!(
            row.starts_with("U8B1  uring rand 4K direct 30460 66.4us 4.04ms 356 % more"),
            "{cut}"
        );
        assert!(row.ends_with('…') && row.chars().count() == 80, "{cut}");
        assert!(!cut.contains("left out"), "{cut}");
        // Then the columns of lowest priority, rightmost first, named below.
        let narrow = t.text_within(42);
        assert!(narrow.lines().all(|l| l.chars().count() <= 42), "{narrow}");
        let words = narrow.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains("left out to fit 42 columns: p90, p99.99 — use --output json for all"),
            "{narrow}"
        );
        assert!(
            narrow.contains("30460") && narrow.contains("U8B1"),
            "{narrow}"
        );
        // At the narrowest, even the kept number column stays whole.
        let least = t.text_within(40);
        assert!(least.lines().all(|l| l.chars().count() <= 40), "{least}");
        assert!(least.contains("30460"), "{least}");
    }
}
