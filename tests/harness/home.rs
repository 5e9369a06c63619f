//! An isolated home for the `earmark` binary.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// How long an awaited command may take before the test fails.
const DEADLINE: Duration = Duration::from_secs(60);

/// A home of its own for the `earmark` binary: HOME, the XDG config, data,
/// cache and state folders under one temporary folder, the file token
/// store, and nothing else of the test's environment but PATH. Commands
/// run in a session of their own without a controlling terminal, as in
/// CI, so none can block on /dev/tty.
pub struct Home {
    pub dir: tempfile::TempDir,
    /// `--server ADDRESS --user USER` before every command's arguments.
    account: Option<(String, String)>,
}

impl Home {
    /// A home where each command says where and as whom itself (or the
    /// config does).
    pub fn new() -> Home {
        let home = Home {
            dir: tempfile::tempdir().unwrap(),
            account: None,
        };
        std::fs::create_dir(home.home()).unwrap();
        home
    }

    /// A home whose every command goes to `address` as user "alice".
    pub fn at(address: &str) -> Home {
        Home {
            account: Some((address.to_owned(), "alice".to_owned())),
            ..Home::new()
        }
    }

    /// The same home as `user`.
    pub fn with_user(mut self, user: &str) -> Home {
        if let Some((_, who)) = &mut self.account {
            *who = user.to_owned();
        }
        self
    }

    /// A home whose `config.toml` is `toml`.
    pub fn with_config(toml: &str) -> Home {
        let home = Home::new();
        let dir = home.path("config/earmark");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), toml).unwrap();
        home
    }

    /// `sub` under the home's folder (`data/earmark/…`, `config/earmark/…`).
    pub fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    /// The HOME of its commands (where ALSA reads `.asoundrc`).
    pub fn home(&self) -> PathBuf {
        self.path("home")
    }

    /// The sync outbox of the default profile.
    pub fn outbox(&self) -> PathBuf {
        self.path("data/earmark/sync/default/outbox.journal")
    }

    /// The whole environment of its commands (for one started another
    /// way, in a pty): PATH, HOME, the XDG folders, the file token store.
    pub fn env(&self) -> Vec<(&'static str, OsString)> {
        vec![
            ("PATH", std::env::var_os("PATH").unwrap_or_default()),
            ("HOME", self.home().into()),
            ("XDG_CONFIG_HOME", self.path("config").into()),
            ("XDG_DATA_HOME", self.path("data").into()),
            ("XDG_CACHE_HOME", self.path("cache").into()),
            ("XDG_STATE_HOME", self.path("state").into()),
            ("EARMARK_TOKEN_STORE", "file".into()),
        ]
    }

    /// Every file in the home, at any depth.
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

    /// `earmark ARGS` in this home, ready to spawn, with stdin, stdout and
    /// stderr piped.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_earmark"));
        if let Some((address, user)) = &self.account {
            c.args(["--server", address, "--user", user]);
        }
        c.args(args)
            .env_clear()
            .envs(self.env())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // SAFETY: setsid is async-signal-safe.
        unsafe {
            c.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        c
    }

    /// Runs `earmark ARGS` to the end with `stdin` as its input, blocking
    /// the thread (a test whose servers run on other threads).
    pub fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        use std::io::Write;
        let mut c = self.command(args).spawn().unwrap();
        let mut input = c.stdin.take().unwrap();
        if let Some(s) = stdin {
            input.write_all(s.as_bytes()).unwrap();
        }
        drop(input);
        c.wait_with_output().unwrap()
    }

    /// [`Home::run`] awaited, within a minute (the in-test servers go on
    /// serving on the same thread).
    pub async fn run_async(&self, args: &[&str], stdin: Option<&str>) -> Output {
        self.run_async_with(args, stdin, &[]).await
    }

    /// [`Home::run_async`] with `env` added to (or replacing some of) the
    /// home's environment.
    pub async fn run_async_with(
        &self,
        args: &[&str],
        stdin: Option<&str>,
        env: &[(&str, &str)],
    ) -> Output {
        use tokio::io::AsyncWriteExt;
        let mut c = self.command(args);
        c.envs(env.iter().copied());
        let mut child = tokio::process::Command::from(c)
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        if let Some(s) = stdin {
            input.write_all(s.as_bytes()).await.unwrap();
        }
        drop(input);
        tokio::time::timeout(DEADLINE, child.wait_with_output())
            .await
            .expect("earmark finished within a minute")
            .unwrap()
    }

    /// `earmark login` with `password` on stdin; the test fails with its
    /// output if the login does.
    pub fn log_in(&self, password: &str) {
        let o = self.run(&["login", "--password-stdin"], Some(password));
        assert!(o.status.success(), "earmark login: {}", text(&o));
    }

    /// A copy of this home as it is now (session, token, data) in a new
    /// folder: the same account, a place of its own.
    pub fn copy(&self) -> Home {
        let copy = Home {
            dir: tempfile::tempdir().unwrap(),
            account: self.account.clone(),
        };
        copy_dir(self.dir.path(), copy.dir.path());
        copy
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// stdout and stderr of a finished command, for assertion messages.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
