//! Client commands of the CLI (`earmark login`, `books`, …): each one
//! talks to the server through `crate::api` and prints text or one JSON
//! document (docs/cli.md). Errors: one sentence on stderr and an exit code
//! per class (2 usage, 3 auth, 4 license, 5 not found, 6 network/server,
//! 7 scope mismatch).

mod addresses;
pub mod doctor;
pub mod downloads;
pub mod export;
mod library;
pub mod listening;
mod output;
pub mod password;
pub mod play;
mod select;
pub mod sound;
pub mod sync;

use crate::api::ApiError;
use crate::config::{Profile, ProfileSelector, Session, SessionError, read_record};
use crate::ctl::client::sentence;
use crate::domain::*;
use output::Out;
use serde_json::json;
use std::process::ExitCode;

/// What every command gets from the command line, once parsed: the
/// profile selection and the output format (the parser's types stop in
/// `cli`).
#[derive(Debug, Clone, Default)]
pub struct Invocation {
    pub select: ProfileSelector,
    /// One JSON document (or JSON lines) instead of text.
    pub json: bool,
}

/// A client command (parsed in `crate::cli`).
#[derive(Debug)]
pub enum ClientCommand {
    /// Log in and store the session token (never the password).
    Login {
        /// Read the password from standard input instead of the terminal.
        password_stdin: bool,
    },
    /// Log out: revoke the token on the server and remove it locally.
    Logout,
    /// Server, serverId, user id, license status and token store in use.
    Status,
    /// List books.
    Books {
        /// Only books of this category id.
        category: Option<String>,
        /// Only your favorites.
        favorites: bool,
        /// Sort order: title, author, recent or added.
        sort: Option<String>,
        /// Print each page as it arrives (with --json: one JSON line per page).
        stream: bool,
        /// Only books by this author (the whole name, any case).
        author: Option<String>,
        /// Only books read by this narrator (the whole name, any case).
        narrator: Option<String>,
        /// Only books of this series, in series order (#1, #1.5, #2, #10…;
        /// with --stream, in the server's order page by page).
        series: Option<String>,
    },
    /// Search books by title, author, narrator or description.
    Search {
        /// The search text (several words are joined with spaces).
        text: Vec<String>,
    },
    /// Details of a book.
    Book { book_id: String },
    /// Chapters of a book.
    Chapters { book_id: String },
    /// The playback manifest of a book, in server order.
    Manifest { book_id: String },
    /// Categories.
    Categories,
    /// List favorites, or add/remove one.
    Favorites { action: Option<FavoriteAction> },
    /// List a book's bookmarks, add/remove one, or export them.
    Bookmarks {
        /// The book's id (`None`: every book's, `--all --export`).
        book_id: Option<String>,
        /// Write the bookmarks as Markdown or CSV (chapter, times, note, date).
        export: Option<export::ExportFormat>,
        action: Option<BookmarkAction>,
    },
    /// Reading progress (and playback settings) of a book.
    Progress { book_id: String },
    /// Check what earmark recognises in this server's answers (read-only).
    Doctor {
        /// Also log in (password from standard input) to check the login answer.
        password_stdin: bool,
    },
}

#[derive(Debug)]
pub enum FavoriteAction {
    /// Mark a book as favorite.
    Add { book_id: String },
    /// Remove a book from the favorites.
    Remove { book_id: String },
}

#[derive(Debug)]
pub enum BookmarkAction {
    /// Add a bookmark.
    Add {
        /// Chapter id (from `earmark manifest`).
        chapter: String,
        /// Position in the chapter, seconds.
        at: f64,
        /// A note.
        note: Option<String>,
    },
    /// Remove a bookmark by id.
    Remove { bookmark_id: String },
}

/// An error of a command, with its exit code.
#[derive(Debug)]
pub struct CommandError {
    pub code: u8,
    pub message: String,
}

impl CommandError {
    fn usage(message: impl Into<String>) -> Self {
        CommandError {
            code: 2,
            message: message.into(),
        }
    }
}

// The exit codes of docs/cli.md: one mapping, `domain::StopReason`'s.
pub const EXIT_USAGE: u8 = StopReason::Rejected.exit_code();
pub const EXIT_AUTH: u8 = StopReason::Login.exit_code();
pub const EXIT_LICENSE: u8 = StopReason::License.exit_code();
pub const EXIT_NOT_FOUND: u8 = StopReason::NotFound.exit_code();
pub const EXIT_NETWORK: u8 = StopReason::Network.exit_code();

impl From<ApiError> for CommandError {
    fn from(e: ApiError) -> Self {
        CommandError {
            // Its stop reason's, from the one classification (`playback::stop`).
            code: crate::playback::stop::of_api(&e).exit_code(),
            message: e.to_string(),
        }
    }
}

impl From<SessionError> for CommandError {
    fn from(e: SessionError) -> Self {
        let code = match &e {
            SessionError::Api(a) => return a.clone().into(),
            SessionError::NotLoggedIn { .. } | SessionError::OtherServer { .. } => EXIT_AUTH,
            SessionError::Config(_)
            | SessionError::NoServer { .. }
            | SessionError::NoUser { .. } => EXIT_USAGE,
            SessionError::Store(_) | SessionError::Record { .. } => 1,
        };
        CommandError {
            code,
            message: e.to_string(),
        }
    }
}

impl From<crate::config::ConfigError> for CommandError {
    fn from(e: crate::config::ConfigError) -> Self {
        CommandError::usage(e.to_string())
    }
}

/// The one-thread runtime a client command runs on.
fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

pub fn run(global: &Invocation, cmd: ClientCommand) -> ExitCode {
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("earmark: cannot start: {e}");
            return ExitCode::from(1);
        }
    };
    let mut out = Out::new(global.json);
    match rt.block_on(dispatch(global, cmd, &mut out)) {
        Ok(()) => {
            out.finish();
            ExitCode::SUCCESS
        }
        Err(e) => {
            out.error(e.code, &sentence(&e.message));
            out.finish();
            eprintln!("earmark: {}", sentence(&e.message));
            ExitCode::from(e.code)
        }
    }
}

async fn dispatch(
    global: &Invocation,
    cmd: ClientCommand,
    out: &mut Out,
) -> Result<(), CommandError> {
    let profile = Profile::resolve(&global.select)?;
    match cmd {
        ClientCommand::Login { password_stdin } => login(&profile, password_stdin, out).await,
        ClientCommand::Logout => logout(&profile, out).await,
        ClientCommand::Status => status(&profile, out).await,
        ClientCommand::Doctor { password_stdin } => {
            doctor::run(&profile, password_stdin, out).await
        }
        ClientCommand::Bookmarks {
            book_id,
            export: Some(format),
            action,
            ..
        } => {
            if action.is_some() {
                return Err(CommandError::usage(
                    "--export writes the bookmarks out; it does not go with add or remove",
                ));
            }
            export::bookmarks(global, &profile, book_id.map(BookId::new), format).await
        }
        cmd => {
            let session = Session::load(&profile)?;
            let client = session.client(&profile)?;
            library::run(&client, cmd, out).await
        }
    }
}

async fn login(profile: &Profile, password_stdin: bool, out: &mut Out) -> Result<(), CommandError> {
    let previous = read_record(profile).ok().flatten();
    let user = profile
        .user
        .clone()
        .or_else(|| previous.as_ref().map(|r| r.user.clone()))
        .ok_or_else(|| {
            CommandError::usage(format!(
                "no user name for profile {:?}; pass --user or set it in config.toml",
                profile.name
            ))
        })?;
    if profile.addresses.is_empty() && previous.is_none() {
        return Err(CommandError::usage(format!(
            "no server address for profile {:?}; pass --server or set it in config.toml",
            profile.name
        )));
    }
    let password = if password_stdin {
        password::from_stdin()
    } else {
        password::from_terminal(&format!("Password for {user}: "))
    }
    .map_err(|e| CommandError::usage(e.to_string()))?;
    let logged = match crate::config::login(profile, Some(&user), &password).await {
        Ok(l) => l,
        Err(SessionError::Api(ApiError::LicenseRequired { message })) => {
            return Err(CommandError {
                code: EXIT_LICENSE,
                message: format!(
                    "the server refused the login because its license is not valid ({message}); resolve the license on the server, then log in again"
                ),
            });
        }
        Err(e) => return Err(e.into()),
    };
    drop(password);
    if let Some(w) = &logged.store_warning {
        eprintln!("earmark: warning: {w}");
    }
    let s = &logged.session;
    let license = logged.client.license_status().await;
    let (license_json, license_note) = match &license {
        Ok(l) => (output::license_json(l), None),
        Err(e) => (json!(null), Some(e.to_string())),
    };
    let states = addresses::logged(&logged.answers, &s.server);
    out.json(json!({
        "profile": s.profile, "server": s.server.as_str(), "user": s.user,
        "userId": s.user_id, "serverId": s.server_id.as_str(),
        "tokenStore": s.token_store.to_string(), "license": license_json,
        "addresses": states.iter().map(|a| a.json(Some(&s.server_id))).collect::<Vec<_>>(),
    }));
    out.line(format!(
        "Logged in to {} as {} (user id {}, server {}).",
        s.server, s.user, s.user_id, s.server_id
    ));
    for l in addresses::lines(&states, Some(&s.server_id)) {
        out.line(l);
    }
    for a in states
        .iter()
        .filter(|a| a.said.as_ref().is_some_and(|x| *x != s.server_id))
    {
        eprintln!(
            "earmark: warning: {} is another server (serverId {}), not {}; earmark never sends it the token. Take it out of the profile's addresses unless the server was rebuilt.",
            a.base,
            a.said.as_ref().map(|x| x.as_str()).unwrap_or_default(),
            s.server_id
        );
    }
    match license {
        Ok(l) if !l.valid => eprintln!(
            "earmark: the server's license is {}: {} Playback and sync stay disabled until it is resolved.",
            output::license_word(l.state),
            l.message.as_deref().unwrap_or("")
        ),
        Ok(_) => out.line("License: valid."),
        Err(ApiError::LicenseRequired { message }) => eprintln!(
            "earmark: the server's license is not valid: {message} Playback and sync stay disabled until it is resolved."
        ),
        Err(_) => {
            if let Some(n) = license_note {
                eprintln!("earmark: warning: could not read the license status: {n}");
            }
        }
    }
    Ok(())
}

async fn logout(profile: &Profile, out: &mut Out) -> Result<(), CommandError> {
    let mut revoked = false;
    if let Ok(session) = Session::load(profile)
        && let Ok(client) = session.client(profile)
    {
        // Best effort: the local token goes away even when the server is down.
        revoked = client.logout().await.is_ok();
    }
    let removed = crate::config::logout_local(profile)?;
    out.json(json!({"profile": profile.name, "loggedOut": removed.is_some(), "revoked": revoked}));
    out.line(match removed {
        Some(r) => format!("Logged out of {} (profile {}).", r.server, profile.name),
        None => format!("Profile {} was not logged in.", profile.name),
    });
    Ok(())
}

async fn status(profile: &Profile, out: &mut Out) -> Result<(), CommandError> {
    let session = match Session::load(profile) {
        Ok(s) => s,
        Err(SessionError::NotLoggedIn { .. }) => {
            out.json(json!({
                "profile": profile.name, "loggedIn": false,
                "server": profile.server().map(|s| s.as_str()),
                "user": profile.user, "userId": null, "serverId": null,
                "tokenStore": null, "license": null,
            }));
            out.line(format!("Profile:     {}", profile.name));
            if let Some(s) = profile.server() {
                out.line(format!("Server:      {s}"));
            }
            out.line("Not logged in; run `earmark login`.");
            return Err(CommandError {
                code: EXIT_AUTH,
                message: format!(
                    "not logged in (profile {:?}); run `earmark login`",
                    profile.name
                ),
            });
        }
        Err(e) => return Err(e.into()),
    };
    let client = session.client(profile)?;
    let license = client.license_status().await;
    // Several addresses: each is knocked at (without the token).
    let states = if session.addresses.len() > 1 {
        addresses::knocked(&client).await
    } else {
        addresses::known(&session.addresses, &session.server)
    };
    let mine = Some(&session.server_id);
    out.json(json!({
        "profile": session.profile, "loggedIn": true, "server": client.base().as_str(),
        "user": session.user, "userId": session.user_id, "serverId": session.server_id.as_str(),
        "tokenStore": session.token_store.to_string(),
        "license": license.as_ref().ok().map(output::license_json),
        "addresses": states.iter().map(|a| a.json(mine)).collect::<Vec<_>>(),
    }));
    out.line(format!("Profile:     {}", session.profile));
    out.line(format!("Server:      {}", client.base()));
    for l in addresses::lines(&states, mine) {
        out.line(l);
    }
    let in_use = states.iter().find(|a| a.in_use);
    let speaks = in_use.and_then(|a| a.speaks);
    out.line(format!(
        "Protocol:    {}",
        crate::api::protocol_words(&client.base(), speaks)
    ));
    out.line(format!("Server id:   {}", session.server_id));
    out.line(format!(
        "User:        {} (id {})",
        session.user, session.user_id
    ));
    out.line(format!("Token store: {}", session.token_store));
    match license {
        Ok(l) => {
            out.line(format!(
                "License:     {}{}",
                output::license_word(l.state),
                l.message.map(|m| format!(" ({m})")).unwrap_or_default()
            ));
            Ok(())
        }
        Err(e) => {
            out.line("License:     unknown");
            Err(e.into())
        }
    }
}
