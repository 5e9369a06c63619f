//! `earmark completions <shell>` and `earmark man`: generated from the real
//! command definition, so they name the real subcommands.

use std::process::Command;

fn earmark(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_earmark"))
        .args(args)
        .output()
        .expect("run earmark");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn completions_for_every_shell_name_the_real_subcommands() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let (ok, out, err) = earmark(&["completions", shell]);
        assert!(ok, "{shell}: {err}");
        for sub in [
            "login",
            "books",
            "bookmarks",
            "play",
            "serve",
            "completions",
            "man",
        ] {
            assert!(out.contains(sub), "{shell} script does not mention {sub}");
        }
        // Options of a subcommand are completed too.
        assert!(
            out.contains("password-stdin"),
            "{shell}: no --password-stdin"
        );
    }
}

#[test]
fn bash_completion_completes_a_subcommand_prefix() {
    let (ok, script, err) = earmark(&["completions", "bash"]);
    assert!(ok, "{err}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("earmark.bash");
    std::fs::write(&path, script).unwrap();
    let out = Command::new("bash")
        .arg("-c")
        .arg(
            r#"source "$1"; COMP_WORDS=(earmark boo); COMP_CWORD=1; COMP_LINE="earmark boo"; COMP_POINT=11; _earmark earmark boo earmark; printf '%s\n' "${COMPREPLY[@]}" | sort"#,
        )
        .arg("bash")
        .arg(&path)
        .output()
        .expect("run bash");
    let words = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        words.lines().collect::<Vec<_>>(),
        ["book", "bookmarks", "books"],
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn completions_reject_an_unknown_shell_naming_the_choices() {
    let (ok, out, err) = earmark(&["completions", "nushell"]);
    assert!(!ok);
    assert!(out.is_empty());
    assert!(err.contains("nushell") && err.contains("bash"), "{err}");
}

#[test]
fn man_page_is_roff_with_the_subcommands() {
    let (ok, out, err) = earmark(&["man"]);
    assert!(ok, "{err}");
    assert!(out.contains(".TH earmark 1"), "not a section-1 man page");
    assert!(out.contains("keyboard"), "no description");
    for sub in ["login", "books", "play", "serve", "completions"] {
        assert!(out.contains(sub), "man page does not mention {sub}");
    }
}

#[test]
fn the_man_page_names_no_missing_pages_and_has_exit_status_files_and_keys() {
    let (ok, out, err) = earmark(&["man"]);
    assert!(ok, "{err}");
    assert!(
        !out.contains("earmark\\-login(1)"),
        "a page that does not exist"
    );
    for h in ["COMMANDS", "EXIT STATUS", "FILES", "ENVIRONMENT", "KEYS"] {
        assert!(out.contains(&format!(".SH {h}")), "no {h} section");
    }
    assert!(out.contains("listening_scope_mismatch"), "exit code 7");
    assert!(out.contains("config.toml"));
    assert!(out.contains("play / pause"), "the player's keys");
}
