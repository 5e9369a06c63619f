//! `--export md|csv` (`earmark history`, `earmark bookmarks`), turned into
//! [`ExportFormat`].

use crate::commands::export::ExportFormat;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFlag {
    #[value(name = "md")]
    Markdown,
    Csv,
}

impl From<ExportFlag> for ExportFormat {
    fn from(f: ExportFlag) -> ExportFormat {
        match f {
            ExportFlag::Markdown => ExportFormat::Markdown,
            ExportFlag::Csv => ExportFormat::Csv,
        }
    }
}
