//! The password is never written to disk; the token file is private.
//! Runs the real `earmark` binary with isolated XDG directories.

use crate::harness::Home;
use crate::support::serve;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;

/// stdout and stderr of a finished command, apart.
pub fn out_and_err(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The token store left to choose (the keyring when there is one).
const AUTO_STORE: &[(&str, &str)] = &[("EARMARK_TOKEN_STORE", "auto")];

const PASSWORD: &str = "hunter2-Zebra-Quartz-9";

async fn login_server() -> String {
    let app = Router::new()
        .route(
            "/api/v1/auth/login",
            post(|Json(b): Json<Value>| async move {
                if b["password"] != PASSWORD {
                    return (
                        axum::http::StatusCode::UNAUTHORIZED,
                        Json(json!({"code": "invalid_credentials", "message": "Wrong user name or password."})),
                    );
                }
                (
                    axum::http::StatusCode::OK,
                    Json(json!({"data": {"token": "tok-0123456789abcdef", "serverId": "srv_x",
                        "user": {"id": 3, "username": b["username"]}}})),
                )
            }),
        )
        .route(
            "/api/v1/license/status",
            get(|| async { Json(json!({"data": {"status": "valid", "valid": true}})) }),
        );
    serve(app).await
}

#[tokio::test]
async fn password_never_on_disk_and_token_file_is_private() {
    let server = login_server().await;
    let home = Home::new();
    let out = home
        .run_async(
            &[
                "--server",
                &server,
                "--user",
                "alice",
                "login",
                "--password-stdin",
            ],
            Some(&format!("{PASSWORD}\n")),
        )
        .await;
    let (stdout, stderr) = out_and_err(&out);
    assert!(out.status.success(), "login failed: {stdout} {stderr}");
    assert!(stdout.contains("Logged in"), "{stdout}");
    assert!(!stdout.contains(PASSWORD) && !stderr.contains(PASSWORD));

    // The session works without the password: status reads it back.
    let out = home.run_async(&["status", "--json"], None).await;
    let (stdout, stderr) = out_and_err(&out);
    assert!(out.status.success(), "{stdout} {stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["tokenStore"], "file");
    assert_eq!(v["userId"], 3);
    assert_eq!(v["serverId"], "srv_x");
    assert_eq!(v["license"]["status"], "valid");

    // A wrong password: exit 3, nothing stored changes.
    let out = home
        .run_async(&["login", "--password-stdin"], Some("wrong-password\n"))
        .await;
    assert_eq!(out.status.code(), Some(3), "{:?}", out_and_err(&out));
    assert!(
        out_and_err(&out).1.contains("wrong user name or password"),
        "{:?}",
        out_and_err(&out)
    );

    let files = home.files();
    assert!(!files.is_empty());
    let mut token_seen = false;
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let hay = String::from_utf8_lossy(&bytes);
        assert!(!hay.contains(PASSWORD), "password found in {}", f.display());
        assert!(
            !hay.contains("wrong-password"),
            "password found in {}",
            f.display()
        );
        token_seen |= hay.contains("tok-0123456789abcdef");
    }
    assert!(
        token_seen,
        "the token itself is stored somewhere: {files:?}"
    );

    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let tokens = home.path("data/earmark/tokens");
    assert_eq!(mode(&tokens), 0o700);
    assert_eq!(mode(&tokens.join("default.token")), 0o600);
    assert_eq!(
        mode(&home.path("data/earmark/sessions/default.json")),
        0o600
    );

    // Logout removes the token.
    let out = home.run_async(&["logout"], None).await;
    assert!(out.status.success(), "{:?}", out_and_err(&out));
    assert!(!tokens.join("default.token").exists());
    let out = home.run_async(&["status"], None).await;
    assert_eq!(out.status.code(), Some(3));
}

#[tokio::test]
async fn login_without_a_terminal_asks_for_password_stdin() {
    let server = login_server().await;
    let home = Home::new();
    let out = home
        .run_async(&["--server", &server, "--user", "alice", "login"], None)
        .await;
    assert_eq!(out.status.code(), Some(2), "{:?}", out_and_err(&out));
    assert!(
        out_and_err(&out).1.contains("--password-stdin"),
        "{:?}",
        out_and_err(&out)
    );
    assert!(home.files().is_empty(), "a failed login stores nothing");
}

/// With no D-Bus session (as over SSH or in CI) the automatic store falls
/// back to the file, warns once, and `status` says which store is in use.
#[tokio::test]
async fn keyring_unavailable_falls_back_to_the_file_and_warns_once() {
    let server = login_server().await;
    let home = Home::new();
    let args = [
        "--server",
        server.as_str(),
        "--user",
        "alice",
        "login",
        "--password-stdin",
    ];
    let pw = format!("{PASSWORD}\n");
    let first = home.run_async_with(&args, Some(&pw), AUTO_STORE).await;
    let (_, stderr) = out_and_err(&first);
    assert!(first.status.success(), "{:?}", out_and_err(&first));
    assert!(stderr.contains("keyring is not available"), "{stderr}");
    let second = home.run_async_with(&args, Some(&pw), AUTO_STORE).await;
    assert!(second.status.success(), "{:?}", out_and_err(&second));
    assert!(
        !out_and_err(&second).1.contains("keyring"),
        "warned twice: {:?}",
        out_and_err(&second)
    );
    let out = home
        .run_async_with(&["status", "--json"], None, AUTO_STORE)
        .await;
    let v: Value = serde_json::from_str(&out_and_err(&out).0).unwrap();
    assert_eq!(v["tokenStore"], "file");
    assert!(home.path("data/earmark/tokens/default.token").exists());
}

/// A server that refuses logins with 403 `license_required`: the CLI says
/// so, exits 4 and stores nothing.
#[tokio::test]
async fn login_refused_for_the_license_says_so() {
    let app = Router::new().route(
        "/api/v1/auth/login",
        post(|| async {
            (
                axum::http::StatusCode::FORBIDDEN,
                Json(json!({"code": "license_required", "message": "The license has expired."})),
            )
        }),
    );
    let server = serve(app).await;
    let home = Home::new();
    let out = home
        .run_async(
            &[
                "--server",
                &server,
                "--user",
                "alice",
                "login",
                "--password-stdin",
            ],
            Some(&format!("{PASSWORD}\n")),
        )
        .await;
    assert_eq!(out.status.code(), Some(4), "{:?}", out_and_err(&out));
    let stderr = out_and_err(&out).1;
    assert!(
        stderr.contains("license is not valid") && stderr.contains("The license has expired."),
        "{stderr}"
    );
    assert!(home.files().is_empty(), "{:?}", home.files());
}

/// Run `earmark login` on a real pty, type `keys` after the prompt, and
/// return the exit code and everything the terminal showed.
async fn pty_login(server: String, home: &Home, keys: String) -> (u32, String) {
    let (env, root) = (home.env(), home.dir.path().to_owned());
    use portable_pty::{CommandBuilder, PtySize, native_pty_system};
    use std::io::{Read, Write};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    tokio::task::spawn_blocking(move || {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 24,
                cols: 100,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_earmark"));
        cmd.args(["--server", server.as_str(), "--user", "alice", "login"]);
        cmd.env_clear();
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.cwd(&root);
        let mut child = pair.slave.spawn_command(cmd).unwrap();
        drop(pair.slave);
        let out = Arc::new(Mutex::new(Vec::new()));
        let mut reader = pair.master.try_clone_reader().unwrap();
        let sink = out.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 1024];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        let seen = |s: &str| String::from_utf8_lossy(&out.lock().unwrap()).contains(s);
        let start = Instant::now();
        while !seen("Password for alice:") {
            assert!(start.elapsed() < Duration::from_secs(15), "no prompt");
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut w = pair.master.take_writer().unwrap();
        w.write_all(keys.as_bytes()).unwrap();
        w.flush().unwrap();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            assert!(start.elapsed() < Duration::from_secs(30), "login hung");
            std::thread::sleep(Duration::from_millis(20));
        };
        std::thread::sleep(Duration::from_millis(100));
        let screen = String::from_utf8_lossy(&out.lock().unwrap()).into_owned();
        (status.exit_code(), screen)
    })
    .await
    .unwrap()
}

/// On a real terminal the prompt reads the password without echoing it;
/// backspace edits it; Ctrl-C cancels cleanly.
#[tokio::test]
async fn terminal_prompt_does_not_echo_the_password() {
    let server = login_server().await;
    let home = Home::new();
    // A typo corrected with backspace.
    let (code, screen) = pty_login(server.clone(), &home, format!("{PASSWORD}x\x7f\r")).await;
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("Logged in"), "{screen}");
    assert!(
        !screen.contains(PASSWORD),
        "the password was echoed: {screen}"
    );

    let (code, screen) = pty_login(server, &home, "abc\x03".into()).await;
    assert_eq!(code, 2, "{screen}");
    assert!(screen.contains("cancelled"), "{screen}");
    assert!(!screen.contains("abc"), "{screen}");
}
