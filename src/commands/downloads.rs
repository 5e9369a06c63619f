//! `earmark download BOOK_ID` and `earmark downloads [remove BOOK_ID]`:
//! offline copies of books (crate::offline does the work; this prints a
//! progress bar, text or one JSON document, and maps errors to exit codes).

use super::{CommandError, EXIT_NETWORK, EXIT_NOT_FOUND, EXIT_USAGE, Invocation};
use crate::config::{Profile, Session};
use crate::domain::BookId;
use crate::offline::{self, Download, DownloadError, DownloadState, Scope, Store, human_bytes};
use serde_json::{Value, json};
use std::io::IsTerminal;
use std::process::ExitCode;

/// What `earmark download` was asked (parsed in `crate::cli`).
#[derive(Debug)]
pub struct DownloadArgs {
    /// The book to download (its complete manifest, in server order).
    pub book_id: String,
    /// At most this many bytes per second.
    pub limit_rate: Option<u64>,
}

/// What `earmark downloads` was asked: list them, or remove one.
#[derive(Debug)]
pub struct DownloadsArgs {
    pub command: Option<DownloadsCommand>,
}

#[derive(Debug)]
pub enum DownloadsCommand {
    /// Remove a downloaded book and free its space.
    Remove { book_id: String },
}

impl From<DownloadError> for CommandError {
    fn from(e: DownloadError) -> Self {
        let code = match &e {
            DownloadError::Api(a) => return a.clone().into(),
            DownloadError::TooLarge { .. } => EXIT_USAGE,
            DownloadError::Length { .. } => EXIT_NETWORK,
            DownloadError::Empty => EXIT_NOT_FOUND,
            DownloadError::Busy | DownloadError::Store(_) | DownloadError::Write { .. } => 1,
        };
        CommandError {
            code,
            message: e.to_string(),
        }
    }
}

impl From<offline::StoreError> for CommandError {
    fn from(e: offline::StoreError) -> Self {
        CommandError {
            code: 1,
            message: e.to_string(),
        }
    }
}

fn finish(json_out: bool, r: Result<Value, CommandError>) -> ExitCode {
    match r {
        Ok(v) => {
            if json_out {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&v).expect("JSON values print")
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            if json_out {
                let v = json!({"error": {"exitCode": e.code, "message": e.message}});
                println!("{v}");
            }
            eprintln!("earmark: {}", e.message);
            ExitCode::from(e.code)
        }
    }
}

pub fn run_download(global: &Invocation, args: DownloadArgs) -> ExitCode {
    let r = super::runtime()
        .map_err(|e| CommandError {
            code: 1,
            message: format!("cannot start: {e}"),
        })
        .and_then(|rt| rt.block_on(download(global, args)));
    finish(global.json, r)
}

pub fn run_downloads(global: &Invocation, args: DownloadsArgs) -> ExitCode {
    let r = (|| {
        let profile = Profile::resolve(&global.select)?;
        let session = Session::load(&profile)?;
        let store = Store::new(&profile.dirs.data);
        let scope = session.account();
        match args.command {
            None => list(global.json, &profile, &store, &scope),
            Some(DownloadsCommand::Remove { book_id }) => {
                remove(global.json, &store, &scope, &BookId::new(book_id))
            }
        }
    })();
    finish(global.json, r)
}

async fn download(global: &Invocation, args: DownloadArgs) -> Result<Value, CommandError> {
    let profile = Profile::resolve(&global.select)?;
    let session = Session::load(&profile)?;
    let client = session.client(&profile)?;
    let store = Store::new(&profile.dirs.data);
    let scope = session.account();
    let book = BookId::new(args.book_id.as_str());
    let options = offline::Options {
        limit: profile.download_limit,
        rate: args.limit_rate,
    };
    let bar = (!global.json && std::io::stdout().is_terminal()).then(progress_bar);
    let mut show = |p: offline::Progress| {
        if let Some(b) = &bar {
            b.set_length(p.total);
            b.set_position(p.done);
        }
    };
    let r = offline::download(&client, &store, &scope, &book, &options, &mut show).await;
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let o = r?;
    let d = &o.download;
    if !global.json {
        if o.replaced {
            println!("The server's manifest had changed: the old download was replaced.");
        }
        println!(
            "Downloaded {} ({} files, {}; {} fetched now) to {}",
            title_of(d),
            d.snapshot.files.len(),
            human_bytes(d.bytes),
            human_bytes(o.fetched),
            d.dir.display()
        );
    }
    let mut v = download_json(d);
    v["fetchedBytes"] = json!(o.fetched);
    v["replaced"] = json!(o.replaced);
    Ok(v)
}

fn progress_bar() -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(0);
    let style = indicatif::ProgressStyle::with_template(
        "{bar:30} {bytes}/{total_bytes}  {bytes_per_sec}  {eta} left",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    bar
}

fn title_of(d: &Download) -> String {
    match &d.snapshot.title {
        Some(t) => format!("\"{t}\""),
        None => d.snapshot.book_id.to_string(),
    }
}

fn download_json(d: &Download) -> Value {
    let (have, want) = match d.state {
        DownloadState::Complete => (d.bytes, Some(d.bytes)),
        DownloadState::Partial { have, want } => (have, want),
    };
    json!({
        "bookId": d.snapshot.book_id.as_str(),
        "title": d.snapshot.title,
        "state": d.state.name(),
        "bytes": d.bytes,
        "downloadedBytes": have,
        "totalBytes": want,
        "files": d.snapshot.files.len(),
        "chapters": d.snapshot.manifest.items.len(),
        "savedAt": d.snapshot.saved_at,
        "dir": d.dir.display().to_string(),
    })
}

fn list(
    json_out: bool,
    profile: &Profile,
    store: &Store,
    scope: &Scope,
) -> Result<Value, CommandError> {
    let all = store.list(scope)?;
    let used = store.used_bytes()?;
    if !json_out {
        if all.is_empty() {
            println!("No downloaded books (`earmark download BOOK_ID` downloads one).");
        }
        for d in &all {
            let state = match d.state {
                DownloadState::Complete => "complete".to_owned(),
                DownloadState::Partial { have, want } => format!(
                    "partial {} of {}",
                    human_bytes(have),
                    want.map(human_bytes).unwrap_or_else(|| "?".into())
                ),
            };
            println!(
                "{:<40} {:>10}  {:<24} {}",
                title_of(d),
                human_bytes(d.bytes),
                state,
                d.snapshot.book_id
            );
        }
        match profile.download_limit {
            Some(l) => println!("{} used of {}.", human_bytes(used), human_bytes(l)),
            None => println!("{} used.", human_bytes(used)),
        }
    }
    Ok(json!({
        "downloads": all.iter().map(download_json).collect::<Vec<_>>(),
        "usedBytes": used,
        "limitBytes": profile.download_limit,
    }))
}

fn remove(
    json_out: bool,
    store: &Store,
    scope: &Scope,
    book: &BookId,
) -> Result<Value, CommandError> {
    let title = store.get(scope, book).ok().flatten().map(|d| title_of(&d));
    match store.remove(scope, book)? {
        Some(freed) => {
            if !json_out {
                println!(
                    "Removed {}: {} freed.",
                    title.unwrap_or_else(|| book.to_string()),
                    human_bytes(freed)
                );
            }
            Ok(json!({"bookId": book.as_str(), "freedBytes": freed}))
        }
        None => Err(CommandError {
            code: EXIT_NOT_FOUND,
            message: format!("{book} is not downloaded"),
        }),
    }
}
