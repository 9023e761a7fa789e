//! The document as JSON values: the same sections and blocks, each table with its columns, its
//! rows as people read them and, where it has one, its rows for machines (raw numbers).

use crate::document::{Block, Document, Renderer};
use crate::error::{Error, Result};
use crate::table::Table;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// JSON.
pub struct Json;

/// The document in JSON (`report --format json`'s `document`, or the document alone).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DocumentJson {
    pub title: String,
    /// The sentence under the title.
    pub lead: String,
    /// The answers the document opens with.
    pub answers: Vec<crate::document::Answer>,
    /// What the reader must know first (a point that failed, a measurement in doubt).
    pub banners: Vec<BannerJson>,
    pub sections: Vec<SectionJson>,
}

/// A banner: its text, how many points it concerns (0: the whole document) and both as one line.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BannerJson {
    pub text: String,
    pub points: usize,
    pub line: String,
}

/// A section: its anchor, title and blocks in order.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SectionJson {
    pub id: String,
    pub title: String,
    pub blocks: Vec<BlockJson>,
}

/// One block of a section, by its `type`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum BlockJson {
    Heading {
        text: String,
    },
    Paragraph {
        text: String,
    },
    Note {
        text: String,
    },
    List {
        items: Vec<String>,
    },
    Table {
        id: String,
        caption: String,
        /// The table as people read it.
        table: TableJson,
        /// What the labels in it stand for.
        key: Vec<KeyJson>,
        /// The same rows for machines (raw numbers), where the table has them.
        raw: Option<TableJson>,
    },
    /// A chart (drawn in the HTML page and as PNG; here its name and words only).
    Chart {
        id: String,
        title: String,
        caption: String,
    },
}

/// A table: its column headers and its rows, each as many cells as columns.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TableJson {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// A label of a table's key and the words it stands for.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct KeyJson {
    pub label: String,
    pub words: String,
}

fn table(t: &Table) -> TableJson {
    TableJson {
        columns: t.columns.iter().map(|c| c.header.clone()).collect(),
        rows: t
            .rows
            .iter()
            .map(|r| {
                (0..t.columns.len())
                    .map(|k| r.cells.get(k).cloned().unwrap_or_default())
                    .collect()
            })
            .collect(),
    }
}

/// The document as its typed JSON.
pub fn typed(d: &Document) -> DocumentJson {
    let sections = d
        .sections
        .iter()
        .map(|s| SectionJson {
            id: s.id.clone(),
            title: s.title.clone(),
            blocks: s
                .blocks
                .iter()
                .map(|b| match b {
                    Block::Heading(h) => BlockJson::Heading { text: h.clone() },
                    Block::Paragraph(p) => BlockJson::Paragraph { text: p.clone() },
                    Block::Note(n) => BlockJson::Note { text: n.clone() },
                    Block::List(items) => BlockJson::List {
                        items: items.clone(),
                    },
                    Block::Table(t) => BlockJson::Table {
                        id: t.id.clone(),
                        caption: t.caption.clone(),
                        table: table(&t.table),
                        key: t
                            .key
                            .iter()
                            .map(|(l, w)| KeyJson {
                                label: l.clone(),
                                words: w.clone(),
                            })
                            .collect(),
                        raw: t.raw.as_ref().map(table),
                    },
                    Block::Chart(c) => BlockJson::Chart {
                        id: c.id.clone(),
                        title: c.title.clone(),
                        caption: c.caption.clone(),
                    },
                })
                .collect(),
        })
        .collect();
    DocumentJson {
        title: d.title.clone(),
        lead: d.lead.clone(),
        answers: d.answers.clone(),
        banners: d
            .banners
            .iter()
            .map(|b| BannerJson {
                text: b.text.clone(),
                points: b.points,
                line: b.line(),
            })
            .collect(),
        sections,
    }
}

/// The document as one JSON value (its keys in order, as every JSON readlab writes).
pub fn value(d: &Document) -> Value {
    serde_json::to_value(typed(d)).unwrap_or_default()
}

impl Renderer for Json {
    fn render(&self, d: &Document) -> Result<String> {
        serde_json::to_string_pretty(&value(d))
            .map(|mut s| {
                s.push('\n');
                s
            })
            .map_err(|source| Error::Json {
                what: "the document",
                source,
            })
    }
}
