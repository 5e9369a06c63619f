//! The password is never written to disk; the token file is private.
//! Runs the real `earmark` binary with isolated XDG directories.

use crate::support::serve;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use tokio::io::AsyncWriteExt;

/// An isolated home for one CLI run: config, data, cache and HOME.
pub struct Home {
    pub dir: tempfile::TempDir,
}

impl Home {
    pub fn new() -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    /// Run `earmark ARGS` with `stdin` piped in, the file token store forced.
    pub async fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        self.run_with_store(args, stdin, Some("file")).await
    }

    /// `earmark ARGS` with only this home's environment; `store` sets
    /// EARMARK_TOKEN_STORE (`None`: automatic).
    pub fn command(&self, args: &[&str], store: Option<&str>) -> std::process::Command {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_earmark"));
        cmd.args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.path("home"))
            .env("XDG_CONFIG_HOME", self.path("config"))
            .env("XDG_DATA_HOME", self.path("data"))
            .env("XDG_CACHE_HOME", self.path("cache"))
            .env("XDG_STATE_HOME", self.path("state"))
            .env("EARMARK_TOKEN_STORE", store.unwrap_or("auto"));
        cmd
    }

    /// Like `run`; `store` sets EARMARK_TOKEN_STORE (`None`: automatic).
    pub async fn run_with_store(
        &self,
        args: &[&str],
        stdin: Option<&str>,
        store: Option<&str>,
    ) -> Output {
        let mut cmd = tokio::process::Command::from(self.command(args, store));
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // A new session has no controlling terminal, like CI: the CLI can
        // never block on /dev/tty in a test.
        // SAFETY: setsid is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        let mut child = cmd.spawn().unwrap();
        let mut pipe = child.stdin.take().unwrap();
        if let Some(s) = stdin {
            pipe.write_all(s.as_bytes()).await.unwrap();
        }
        drop(pipe);
        tokio::time::timeout(std::time::Duration::from_secs(30), child.wait_with_output())
            .await
            .expect("earmark finished in time")
            .unwrap()
    }

    pub fn files(&self) -> Vec<PathBuf> {
        fn walk(p: &Path, out: &mut Vec<PathBuf>) {
            if let Ok(rd) = std::fs::read_dir(p) {
                for e in rd.flatten() {
                    let path = e.path();
                    if path.is_dir() {
                        walk(&path, out);
                    } else {
                        out.push(path);
                    }
                }
            }
        }
        let mut out = Vec::new();
        walk(self.dir.path(), &mut out);
        out
    }
}

pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

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
        .run(
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
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "login failed: {stdout} {stderr}");
    assert!(stdout.contains("Logged in"), "{stdout}");
    assert!(!stdout.contains(PASSWORD) && !stderr.contains(PASSWORD));

    // The session works without the password: status reads it back.
    let out = home.run(&["status", "--json"], None).await;
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout} {stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["tokenStore"], "file");
    assert_eq!(v["userId"], 3);
    assert_eq!(v["serverId"], "srv_x");
    assert_eq!(v["license"]["status"], "valid");

    // A wrong password: exit 3, nothing stored changes.
    let out = home
        .run(&["login", "--password-stdin"], Some("wrong-password\n"))
        .await;
    assert_eq!(out.status.code(), Some(3), "{:?}", text(&out));
    assert!(
        text(&out).1.contains("wrong user name or password"),
        "{:?}",
        text(&out)
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
    let out = home.run(&["logout"], None).await;
    assert!(out.status.success(), "{:?}", text(&out));
    assert!(!tokens.join("default.token").exists());
    let out = home.run(&["status"], None).await;
    assert_eq!(out.status.code(), Some(3));
}

#[tokio::test]
async fn login_without_a_terminal_asks_for_password_stdin() {
    let server = login_server().await;
    let home = Home::new();
    let out = home
        .run(&["--server", &server, "--user", "alice", "login"], None)
        .await;
    assert_eq!(out.status.code(), Some(2), "{:?}", text(&out));
    assert!(
        text(&out).1.contains("--password-stdin"),
        "{:?}",
        text(&out)
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
    let first = home.run_with_store(&args, Some(&pw), None).await;
    let (_, stderr) = text(&first);
    assert!(first.status.success(), "{:?}", text(&first));
    assert!(stderr.contains("keyring is not available"), "{stderr}");
    let second = home.run_with_store(&args, Some(&pw), None).await;
    assert!(second.status.success(), "{:?}", text(&second));
    assert!(
        !text(&second).1.contains("keyring"),
        "warned twice: {:?}",
        text(&second)
    );
    let out = home.run_with_store(&["status", "--json"], None, None).await;
    let v: Value = serde_json::from_str(&text(&out).0).unwrap();
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
        .run(
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
    assert_eq!(out.status.code(), Some(4), "{:?}", text(&out));
    let stderr = text(&out).1;
    assert!(
        stderr.contains("license is not valid") && stderr.contains("The license has expired."),
        "{stderr}"
    );
    assert!(home.files().is_empty(), "{:?}", home.files());
}

/// Run `earmark login` on a real pty, type `keys` after the prompt, and
/// return the exit code and everything the terminal showed.
async fn pty_login(server: String, root: PathBuf, keys: String) -> (u32, String) {
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
        cmd.env("PATH", std::env::var_os("PATH").unwrap_or_default());
        cmd.env("HOME", root.join("home"));
        cmd.env("XDG_CONFIG_HOME", root.join("config"));
        cmd.env("XDG_DATA_HOME", root.join("data"));
        cmd.env("XDG_CACHE_HOME", root.join("cache"));
        cmd.env("EARMARK_TOKEN_STORE", "file");
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
    let root = home.dir.path().to_owned();
    // A typo corrected with backspace.
    let (code, screen) =
        pty_login(server.clone(), root.clone(), format!("{PASSWORD}x\x7f\r")).await;
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("Logged in"), "{screen}");
    assert!(
        !screen.contains(PASSWORD),
        "the password was echoed: {screen}"
    );

    let (code, screen) = pty_login(server, root, "abc\x03".into()).await;
    assert_eq!(code, 2, "{screen}");
    assert!(screen.contains("cancelled"), "{screen}");
    assert!(!screen.contains("abc"), "{screen}");
}
