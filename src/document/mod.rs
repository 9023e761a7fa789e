//! One document, many renderers: everything readlab reports (the report, the verdict, a
//! comparison) is built once as an ordered list of sections made of blocks, each with a stable
//! unique id, and HTML, Markdown, JSON, CSV and the terminal render that one document. A section,
//! its order, its numbers and its warnings therefore cannot differ between formats; a new format
//! is one renderer file and its line in [`format`]'s registry, a new section one entry.
//!
//! The document layer, the base of what readlab shows: the document's types (here), the charts'
//! vocabulary ([`chart`]), their drawing ([`draw`]), the HTML page ([`page`]) and the formats
//! ([`format`]). It names only leaves (`error`, `table`, `terminal`, `units`, `size`,
//! `warnings`), never what composes a document (`report`, `verdict`, `compare`) nor the points
//! they are made of (`points`): what a table's labels mean is given to it ([`LabelWords`]).

pub mod chart;
pub mod draw;
pub mod format;
pub mod page;

use crate::error::Result;

use crate::table::Table;
use chart::Chart;
pub use format::Format;
use std::collections::BTreeSet;

/// Renders a whole document in one format.
pub trait Renderer {
    fn render(&self, d: &Document) -> Result<String>;
}

/// A whole document: its title, the answer first, the warnings common to many points once, then
/// the sections in order.
#[derive(Debug, Clone, Default)]
pub struct Document {
    pub title: String,
    /// The paragraph under the title: what this is and what it was made from.
    pub lead: String,
    /// One line per target, block size and access: what to use, or "too close to call".
    pub answers: Vec<Answer>,
    /// Warnings said once at the top, each with how many points it concerns.
    pub banners: Vec<Banner>,
    pub sections: Vec<Section>,
    /// What the labels in its tables mean, when they are labels of runs (`crate::label::key`): a
    /// table pushed without a key gets one from its `label` column. None: no keys.
    pub label_words: Option<LabelWords>,
}

/// Labels → (label, words) for those that have words, each once, in first-seen order.
pub type LabelWords = fn(&[&str]) -> Vec<(String, String)>;

/// One line of the answer: the pick (or "too close to call") for one target, block size and access.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct Answer {
    /// The whole line as people read it.
    pub text: String,
    /// The margin is inside the spread, or no spread was measured: no winner.
    pub close: bool,
}

/// A warning common to many points, said once (grouped from the points' warnings by
/// [`crate::warnings::group`]).
pub use crate::warnings::Banner;

/// One section: a heading with an id unique in the document, and its blocks.
#[derive(Debug, Clone, Default)]
pub struct Section {
    /// Unique in the document (`verdict`, `latency`, `all`, …); HTML's `sec-<id>`.
    pub id: String,
    pub title: String,
    pub blocks: Vec<Block>,
}

/// What a section is made of.
#[derive(Debug, Clone)]
pub enum Block {
    /// A sub-heading inside a section (`Verdict for loop6`).
    Heading(String),
    /// Running text.
    Paragraph(String),
    /// A list of short items.
    List(Vec<String>),
    /// A table with its caption (one without columns is for machines only: its `raw`).
    Table(TableBlock),
    /// A chart, drawn as a numbered figure where pictures can be shown, named where not.
    Chart(Chart),
    /// A remark set apart (readlab's own cost, a caveat).
    Note(String),
}

/// A table block: the table people read, the id it carries, its caption, and what its labels
/// mean (the key printed under it on the terminal, the tooltips in HTML).
#[derive(Debug, Clone, Default)]
pub struct TableBlock {
    /// Unique in the document; HTML's `table-<id>`.
    pub id: String,
    pub caption: String,
    pub table: Table,
    /// Label → words (`U32B1` → `io_uring, queue depth 32, batch 1`), in first-seen order.
    pub key: Vec<(String, String)>,
    /// The same rows for machines (raw numbers: ns, bytes), when the table has such a form:
    /// CSV and JSON render it.
    pub raw: Option<Table>,
    /// Column to keep when the terminal is too narrow for all (most important first).
    pub keep: Vec<usize>,
}

impl Section {
    pub fn new(id: impl Into<String>, title: impl Into<String>) -> Section {
        Section {
            id: id.into(),
            title: title.into(),
            blocks: Vec::new(),
        }
    }

    pub fn push(&mut self, b: Block) -> &mut Section {
        self.blocks.push(b);
        self
    }

    pub fn paragraph(&mut self, s: impl Into<String>) -> &mut Section {
        self.push(Block::Paragraph(s.into()))
    }
}

impl Document {
    /// Append a section, making its id and the ids of its tables and charts unique in the
    /// document (a second `devices` becomes `devices-2`), so a contents link cannot jump to the
    /// wrong place.
    pub fn push(&mut self, mut s: Section) {
        let mut used = self.ids();
        s.id = unique(&mut used, &format!("sec-{}", s.id))["sec-".len()..].to_string();
        for b in &mut s.blocks {
            match b {
                Block::Table(t) => {
                    if t.key.is_empty()
                        && let Some(words) = self.label_words
                    {
                        t.key = label_key(&t.table, words);
                    }
                    t.id =
                        unique(&mut used, &format!("table-{}", t.id))["table-".len()..].to_string()
                }
                Block::Chart(c) => {
                    c.id = unique(&mut used, &format!("fig-{}", c.id))["fig-".len()..].to_string()
                }
                _ => {}
            }
        }
        self.sections.push(s);
    }

    /// Every id the document gives an HTML element: `sec-…`, `table-…`, `fig-…` (a chart's SVG
    /// is `chart-…`, one to one with its figure).
    pub fn ids(&self) -> BTreeSet<String> {
        let mut v = BTreeSet::new();
        for s in &self.sections {
            v.insert(format!("sec-{}", s.id));
            for b in &s.blocks {
                match b {
                    Block::Table(t) => {
                        v.insert(format!("table-{}", t.id));
                    }
                    Block::Chart(c) => {
                        v.insert(format!("fig-{}", c.id));
                    }
                    _ => {}
                }
            }
        }
        v
    }

    /// Every chart, in document order.
    pub fn charts(&self) -> impl Iterator<Item = &Chart> {
        self.sections.iter().flat_map(|s| {
            s.blocks.iter().filter_map(|b| match b {
                Block::Chart(c) => Some(c),
                _ => None,
            })
        })
    }

    /// The section titles in order (what every renderer's headings follow).
    pub fn outline(&self) -> Vec<(&str, &str)> {
        self.sections
            .iter()
            .map(|s| (s.id.as_str(), s.title.as_str()))
            .collect()
    }
}

/// The key to a table's labels: every label in its `label` column (and the labels it names in
/// `A ~ B` cells), in words, in first-seen order.
fn label_key(t: &Table, words: LabelWords) -> Vec<(String, String)> {
    let Some(k) = t.columns.iter().position(|c| c.header == "label") else {
        return Vec::new();
    };
    let cells: Vec<&str> = t
        .rows
        .iter()
        .filter_map(|r| r.cells.get(k))
        .flat_map(|c| c.split(" ~ "))
        .map(str::trim)
        .collect();
    words(&cells)
}

/// `want`, or `want-2`, `want-3`, … whichever is not used yet; marks it used.
fn unique(used: &mut BTreeSet<String>, want: &str) -> String {
    let mut id = want.to_string();
    let mut n = 1;
    while used.contains(&id) {
        n += 1;
        id = format!("{want}-{n}");
    }
    used.insert(id.clone());
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_made_unique_on_push() {
        let mut d = Document::default();
        let mut a = Section::new("devices", "Devices");
        a.push(Block::Table(TableBlock {
            id: "devices".into(),
            ..TableBlock::default()
        }));
        d.push(a.clone());
        d.push(a);
        let ids: Vec<&str> = d.sections.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["devices", "devices-2"]);
        assert_eq!(d.ids().len(), 4);
        assert!(d.ids().contains("table-devices-2"));
    }
}
