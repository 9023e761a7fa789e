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
}

impl Column {
    pub fn left(header: impl Into<String>) -> Column {
        Column {
            header: header.into(),
            align: Align::Left,
            width: 0,
            class: None,
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

    /// Aligned text that fits in `width` columns: columns are dropped or abbreviated rather
    /// than wrapped. (The fitting is being written; for now this is [`Table::text`].)
    pub fn text_within(&self, width: usize) -> String {
        let _ = width;
        self.text()
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
}
