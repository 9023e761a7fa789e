//! The formats a document renders to, each with its renderer: adding a format is one renderer
//! file beside these and, here, its `mod` line and its line in [`formats!`]'s registry below.
//! The renderers read `document/mod.rs` (the document's types); the document names none of them.

pub mod csv;
pub mod html;
pub mod json;
pub mod markdown;
pub mod terminal;

use super::Renderer;
use crate::error::{Error, Result};
use crate::terminal::Terminal;

/// Makes [`Format`] from the registry: per format its variant, the names `--format` takes (the
/// first is the one messages list), its file extension, and its renderer made from the terminal
/// (`_` for a renderer that has no use for it).
macro_rules! formats {
    ($($(#[$doc:meta])* $variant:ident [$($name:literal),+] $ext:literal, $term:pat => $renderer:expr;)+) => {
        /// The formats a document renders to.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Format {
            $($(#[$doc])* $variant,)+
        }

        impl Format {
            /// Every format, in the registry's order.
            pub const ALL: &'static [Format] = &[$(Format::$variant),+];

            /// The names `--format` takes for it.
            fn names(self) -> &'static [&'static str] {
                match self {
                    $(Format::$variant => &[$($name),+],)+
                }
            }

            /// The file name extension (and default output name `report.<ext>`).
            pub fn extension(self) -> &'static str {
                match self {
                    $(Format::$variant => $ext,)+
                }
            }

            /// The renderer of this format (text at `term`'s width and colour).
            pub fn renderer(self, term: Terminal) -> Box<dyn Renderer> {
                match self {
                    $(Format::$variant => {
                        let $term = term;
                        Box::new($renderer)
                    })+
                }
            }
        }
    };
}

formats! {
    Html ["html"] "html", _ => html::Html;
    Csv ["csv"] "csv", _ => csv::Csv;
    Markdown ["md", "markdown"] "md", _ => markdown::Markdown;
    Json ["json"] "json", _ => json::Json;
    /// Aligned text for a terminal (`-o -` on a terminal, and every command's own output).
    Text ["text", "txt"] "txt", t => terminal::Text(t);
}

impl Format {
    /// Any of a format's names (`html`, `csv`, `md`/`markdown`, `json`, `text`/`txt`), in any case.
    pub fn parse(s: &str) -> Result<Format> {
        let want = s.trim().to_ascii_lowercase();
        Format::ALL
            .iter()
            .copied()
            .find(|f| f.names().contains(&want.as_str()))
            .ok_or_else(|| {
                Error::invalid(format!(
                    "unknown report format '{s}'; use {}",
                    Format::choices()
                ))
            })
    }

    /// Every format by its first name: `html, csv, md, json or text`.
    fn choices() -> String {
        let first: Vec<&str> = Format::ALL.iter().map(|f| f.names()[0]).collect();
        match first.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => first.join(""),
        }
    }

    /// The file written when the user names none: `report.<ext>` in the current directory.
    pub fn default_out(self) -> std::path::PathBuf {
        std::path::PathBuf::from(format!("report.{}", self.extension()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_to_its_format() {
        for f in Format::ALL {
            for n in f.names() {
                assert_eq!(Format::parse(&n.to_uppercase()).unwrap(), *f);
            }
        }
        // Every format by its first name, the last after "or".
        let c = Format::choices();
        assert!(
            c.starts_with("html, csv, md, json") && c.contains(" or "),
            "{c}"
        );
        assert!(Format::ALL.iter().all(|f| c.contains(f.names()[0])), "{c}");
        assert_eq!(Format::Text.default_out().to_str(), Some("report.txt"));
    }
}
