//! The formats a document renders to, each naming its renderer: adding a format is one renderer
//! file and one line here. Apart from `document/mod.rs`, which the renderers read, so that the
//! document and its renderers do not name each other.

pub mod csv;
pub mod html;
pub mod json;
pub mod markdown;
pub mod terminal;

use super::Renderer;
use crate::error::{Error, Result};
use crate::terminal::Terminal;

/// The formats a document renders to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Html,
    Csv,
    Markdown,
    Json,
    /// Aligned text for a terminal (`-o -` on a terminal, and every command's own output).
    Text,
}

impl Format {
    /// `html`, `csv`, `md`/`markdown`, `json`, `text`/`txt`.
    pub fn parse(s: &str) -> Result<Format> {
        match s.trim().to_ascii_lowercase().as_str() {
            "html" => Ok(Format::Html),
            "csv" => Ok(Format::Csv),
            "md" | "markdown" => Ok(Format::Markdown),
            "json" => Ok(Format::Json),
            "text" | "txt" => Ok(Format::Text),
            _ => Err(Error::invalid(format!(
                "unknown report format '{s}'; use html, csv, md, json or text"
            ))),
        }
    }

    /// The file name extension (and default output name `report.<ext>`).
    pub fn extension(self) -> &'static str {
        match self {
            Format::Html => "html",
            Format::Csv => "csv",
            Format::Markdown => "md",
            Format::Json => "json",
            Format::Text => "txt",
        }
    }

    /// The file written when the user names none: `report.<ext>` in the current directory.
    pub fn default_out(self) -> std::path::PathBuf {
        std::path::PathBuf::from(format!("report.{}", self.extension()))
    }

    /// The renderer of this format (text at `term`'s width and colour).
    pub fn renderer(self, term: Terminal) -> Box<dyn Renderer> {
        match self {
            Format::Html => Box::new(html::Html),
            Format::Csv => Box::new(csv::Csv),
            Format::Markdown => Box::new(markdown::Markdown),
            Format::Json => Box::new(json::Json),
            Format::Text => Box::new(terminal::Text(term)),
        }
    }
}
