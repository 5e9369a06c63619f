//! `earmark completions <shell>` and `earmark man`: generated from the
//! same clap definition that parses the command line (and, for the man
//! page's KEYS, the player's default keymap), so they never drift.

use clap::{Args, CommandFactory};
use std::io::Write;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write a completion script for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// Write the completion script for `args.shell` to standard output.
pub fn completions(args: CompletionsArgs) -> ExitCode {
    let mut cmd = super::Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "earmark", &mut out);
    write_stdout(&out)
}

/// Write the man page (roff, section 1) to standard output: one page,
/// with the commands, EXIT STATUS, FILES, ENVIRONMENT and the player's
/// KEYS (there are no per-command pages: `earmark COMMAND --help`).
pub fn man() -> ExitCode {
    let cmd = super::Cli::command();
    let page = clap_mangen::Man::new(cmd.clone());
    let mut out = Vec::new();
    let rendered = (|| -> std::io::Result<()> {
        page.render_title(&mut out)?;
        page.render_name_section(&mut out)?;
        page.render_synopsis_section(&mut out)?;
        page.render_description_section(&mut out)?;
        page.render_options_section(&mut out)?;
        out.extend_from_slice(sections(&cmd).as_bytes());
        page.render_version_section(&mut out)
    })();
    match rendered {
        Ok(()) => write_stdout(&out),
        Err(e) => {
            eprintln!("earmark: could not render the man page: {e}");
            ExitCode::from(1)
        }
    }
}

/// roff text: `\` and `-` escaped, and a line never starts with `.` or `'`.
fn roff(text: &str) -> String {
    let t = text.replace('\\', "\\e").replace('-', "\\-");
    match t.starts_with(['.', '\'']) {
        true => format!("\\&{t}"),
        false => t,
    }
}

/// `.TP` paragraphs: a bold term, then its text.
fn items(out: &mut String, rows: impl IntoIterator<Item = (impl AsRef<str>, impl AsRef<str>)>) {
    for (term, text) in rows {
        let (term, text) = (roff(term.as_ref()), roff(text.as_ref()));
        out.push_str(&format!(".TP\n\\fB{term}\\fR\n{text}\n"));
    }
}

const EXIT_STATUS: &[(&str, &str)] = &[
    ("0", "success"),
    (
        "1",
        "a local failure (a file that cannot be written, audio that cannot be played)",
    ),
    (
        "2",
        "usage: bad arguments, no server or user configured, an invalid config, or the server rejected the request (400)",
    ),
    (
        "3",
        "auth: not logged in, the session is invalid (401), a wrong password, or no permission (403)",
    ),
    (
        "4",
        "the server's license is required or invalid (403 license_required)",
    ),
    ("5", "not found (404)"),
    (
        "6",
        "network or server: unreachable, a time-out, 5xx, 429, an HTML or empty answer, an answer that cannot be read",
    ),
    (
        "7",
        "identity scope: 409 listening_scope_mismatch, 428 listening_scope_required, 400 listening_scope_invalid (log in again)",
    ),
    ("8", "earmark ctl: no session is running for the profile"),
    (
        "9",
        "earmark play: a session of the profile is already running",
    ),
    (
        "130",
        "earmark play ended by Ctrl-C or SIGTERM (the last place is saved)",
    ),
];

const FILES: &[(&str, &str)] = &[
    (
        "$XDG_CONFIG_HOME/earmark/config.toml",
        "profiles, [keys], [player], [sound], [ui], [theme] (earmark never rewrites it)",
    ),
    (
        "$XDG_DATA_HOME/earmark/sessions/<profile>.json",
        "the session: address, serverId, userId, user name, token store (0600)",
    ),
    (
        "$XDG_DATA_HOME/earmark/tokens/<profile>.token",
        "the token, only when the OS keyring is unavailable (0600)",
    ),
    (
        "$XDG_DATA_HOME/earmark/sync/<profile>/outbox.journal",
        "changes waiting for the server (crash-safe)",
    ),
    (
        "$XDG_DATA_HOME/earmark/sync/<profile>/progress-cache.json",
        "the last place and speed this device knew for each book",
    ),
    (
        "$XDG_DATA_HOME/earmark/sync/<profile>/listening.journal",
        "this device's place history and listening statistics",
    ),
    (
        "$XDG_DATA_HOME/earmark/offline/<scope>/<book>/",
        "a downloaded book",
    ),
    (
        "$XDG_DATA_HOME/earmark/sound.json",
        "each book's boost, normalisation and skip silence on this device",
    ),
    (
        "$XDG_RUNTIME_DIR/earmark/<profile>.sock",
        "the running session's control socket (earmark ctl; else under $XDG_DATA_HOME/earmark/run/)",
    ),
    (
        "$XDG_DATA_HOME/earmark/earmark.log",
        "the log of the player and of a detached session (0600; EARMARK_LOG=debug for more)",
    ),
    (
        "$XDG_CACHE_HOME/earmark/",
        "the library cache and the cover cache",
    ),
];

const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "EARMARK_PROFILE, EARMARK_SERVER, EARMARK_USER",
        "as --profile, --server and --user",
    ),
    ("EARMARK_AUDIO", "as --audio (auto, device or null)"),
    ("EARMARK_ACCESSIBLE", "1: as --accessible"),
    (
        "EARMARK_TOKEN_STORE",
        "file: keep the token in a file instead of the OS keyring",
    ),
    ("EARMARK_LOG", "the log's level (e.g. debug)"),
    (
        "NO_COLOR",
        "any value: no colours (bold, reverse and underline stay)",
    ),
];

/// The sections clap does not write.
fn sections(cmd: &clap::Command) -> String {
    let mut out = String::new();
    out.push_str(".SH COMMANDS\nWithout a command, the full\\-screen player opens. Each command's options: \\fBearmark COMMAND \\-\\-help\\fR.\n");
    items(
        &mut out,
        cmd.get_subcommands()
            .filter(|c| !c.is_hide_set() && c.get_name() != "help")
            .map(|c| {
                let about = c.get_about().map(|a| a.to_string()).unwrap_or_default();
                (format!("earmark {}", c.get_name()), about)
            }),
    );
    out.push_str(".SH EXIT STATUS\n");
    items(&mut out, EXIT_STATUS.iter().copied());
    out.push_str(".SH FILES\n");
    items(&mut out, FILES.iter().copied());
    out.push_str(".SH ENVIRONMENT\n");
    items(&mut out, ENVIRONMENT.iter().copied());
    out.push_str(".SH KEYS\nThe player's default keys; [keys] in config.toml changes them. Ctrl\\-C always quits.\n");
    let keymap = crate::ui::keymap::Keymap::default();
    items(
        &mut out,
        crate::ui::keymap::Action::ALL
            .iter()
            .map(|a| (keymap.label(*a), a.help().to_owned())),
    );
    out.push_str(".SH SEE ALSO\nREADME.md, docs/ui.md (the player), docs/cli.md (the commands), docs/sync.md (how the place is kept) in earmark's sources.\n");
    out
}

fn write_stdout(bytes: &[u8]) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("earmark: could not write to standard output: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_has_no_pages_it_cannot_keep_and_the_sections_users_look_for() {
        let s = sections(&super::super::Cli::command());
        assert!(!s.contains("(1)"), "no per-command pages exist");
        for h in ["COMMANDS", "EXIT STATUS", "FILES", "ENVIRONMENT", "KEYS"] {
            assert!(s.contains(&format!(".SH {h}\n")), "{h}");
        }
        assert!(s.contains("\\fBearmark play\\fR"), "{s}");
        assert!(s.contains("outbox.journal"));
        assert!(
            s.contains("\\fBspace\\fR") || s.contains("\\fBSpace\\fR"),
            "{s}"
        );
        // A line of text never starts a roff request.
        for l in s
            .lines()
            .filter(|l| !l.starts_with(".SH") && !l.starts_with(".TP"))
        {
            assert!(!l.starts_with('.') && !l.starts_with('\''), "{l}");
        }
    }
}
