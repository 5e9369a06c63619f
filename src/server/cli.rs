//! `earmark serve` and its sub-commands: wiring only, from the plain
//! [`ServeArgs`] that `crate::cli` parses.

use super::{LicenseSetting, ServerConfig};
use anyhow::Context;
use std::io::BufRead;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

/// What `earmark serve` was asked to do (parsed in `crate::cli`).
#[derive(Debug)]
pub struct ServeArgs {
    pub command: Option<ServeCommand>,
    /// The library folder to serve.
    pub library: Option<PathBuf>,
    /// Address to listen on.
    pub listen: SocketAddr,
    /// Data directory (database, covers). Default: the platform data dir.
    pub data: Option<PathBuf>,
    /// Gateway prefix to emulate (the API is then under {prefix}/api/v1).
    pub prefix: String,
    /// Prefix of the identity header names ({prefix}-Expected-Server-Id).
    pub header_prefix: String,
    /// Keep every progress write the server decides (applied, stale or
    /// refused as a 0 over a valid place) in the database's progress_log
    /// table, for soak tests; it grows without bound.
    pub log_writes: bool,
    /// HTTP/1.1 only: no h2c on the port.
    pub http1_only: bool,
}

#[derive(Debug)]
pub enum ServeCommand {
    /// Manage users.
    User { command: UserCommand },
    /// Set the simulated license state (applies to a running server at once).
    License { command: LicenseCommand },
    /// Rescan the library into the catalog (a running server picks it up).
    Rescan { library: PathBuf },
}

#[derive(Debug)]
pub enum UserCommand {
    /// Add a user, the password read from the first line of standard input.
    Add { name: String, password_stdin: bool },
}

#[derive(Debug)]
pub enum LicenseCommand {
    /// Set the license state.
    Set { state: LicenseSetting },
}

/// The default data directory: `{platform data dir}/earmark/server`.
pub fn default_data_dir() -> anyhow::Result<PathBuf> {
    directories::ProjectDirs::from("", "", "earmark")
        .map(|d| d.data_dir().join("server"))
        .context("cannot find a home directory for the data dir; pass --data")
}

/// Resolves on Ctrl-C (or SIGTERM on Unix). The handlers are installed by
/// this call, so call it before printing the address: a signal that comes
/// early must stop the server cleanly, not kill the process.
pub fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        Ok(async move {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}

/// Prints a line to stdout; a closed stdout (the reader went away) must not
/// take a running server down, so write errors are ignored.
pub fn say(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        // symphonia logs every probed file at info level.
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,symphonia=warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

pub fn run(args: ServeArgs) -> ExitCode {
    init_logging();
    match run_inner(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("earmark serve: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run_inner(args: ServeArgs) -> anyhow::Result<()> {
    let data = args.data.clone().map_or_else(default_data_dir, Ok)?;
    match args.command {
        Some(ServeCommand::User {
            command: UserCommand::Add { name, .. },
        }) => {
            let mut password = String::new();
            std::io::stdin()
                .lock()
                .read_line(&mut password)
                .context("cannot read the password")?;
            let password = password.trim_end_matches(['\n', '\r']);
            let id = super::add_user(&data, &name, password)?;
            println!("added user {name:?} with id {id}");
        }
        Some(ServeCommand::License {
            command: LicenseCommand::Set { state },
        }) => {
            super::set_license(&data, state)?;
            println!("license set to {}", state.as_str());
        }
        Some(ServeCommand::Rescan { library }) => {
            let s = super::rescan(&library, &data)?;
            println!(
                "{} books, {} chapters ({} new, {} removed, {} unchanged, {} of them not read)",
                s.books,
                s.chapters,
                s.new_books,
                s.removed_books,
                s.unchanged_books,
                s.unread_books
            );
        }
        None => {
            let library = args.library.context("--library DIR is required")?;
            let config = ServerConfig {
                library,
                data_dir: data,
                listen: args.listen,
                prefix: args.prefix,
                header_prefix: args.header_prefix,
                login: Default::default(),
                log_writes: args.log_writes,
                http1_only: args.http1_only,
            };
            limit_malloc_arenas();
            // Database and file work runs on blocking threads that queue for
            // the connection pool; more threads than this only add memory.
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .max_blocking_threads(32)
                .build()?;
            rt.block_on(async {
                let stop = shutdown_signal()?;
                let server = super::spawn(config).await?;
                say(&format!(
                    "earmark serve: listening on {}",
                    server.base_url()
                ));
                stop.await;
                say("earmark serve: stopping");
                server.shutdown().await;
                anyhow::Ok(())
            })?;
        }
    }
    Ok(())
}

/// glibc keeps freed memory: every thread that allocates may get its own
/// arena (up to 8 per core), and after a large block is freed it raises
/// its mmap threshold, so later large blocks come from the arenas and
/// fragment them. Under 50 concurrent clients the server's RSS grew from
/// 190 to 730–816 MB; with two arenas and fixed thresholds it stays near
/// 170 MB (docs/benchmarks.md).
fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator tunables; it is called before
    // the runtime's threads exist.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 128 * 1024);
    }
}
