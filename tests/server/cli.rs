//! The `earmark serve` admin commands, run as a separate process against
//! the data dir of a running server.

use crate::common::*;
use crate::harness::Home;
use crate::harness::TestServer;
use std::io::Write;
use std::process::Stdio;

#[tokio::test]
async fn admin_commands_act_on_a_running_server() {
    // Its own home: the commands read no config of the machine.
    let home = Home::new();
    let lib = small_library();
    let server = TestServer::start(lib.path()).await.unwrap();
    let data = server.data_path().to_str().unwrap().to_owned();

    let mut child = home
        .command(&[
            "serve",
            "user",
            "add",
            "carol",
            "--password-stdin",
            "--data",
            &data,
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"carols secret\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let carol = server.login_as("carol", "carols secret").await.unwrap();
    let api = Api::from_session(&server, carol);

    let out = home
        .command(&["serve", "license", "set", "expired", "--data", &data])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        api.get("/license/status").await.expect(200)["status"],
        "expired"
    );
    api.get("/auth/favorites")
        .await
        .expect_error(403, "license_required");
    let out = home
        .command(&["serve", "license", "set", "valid", "--data", &data])
        .output()
        .unwrap();
    assert!(out.status.success());
    api.get("/auth/favorites").await.expect(200);

    write_wav(&lib.path().join("Later/l1.wav"), 1.0, 100.0);
    write_wav(&lib.path().join("Later/l2.wav"), 1.0, 100.0);
    let out = home
        .command(&[
            "serve",
            "rescan",
            "--library",
            lib.path().to_str().unwrap(),
            "--data",
            &data,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(api.get("/books").await.expect(200)["total"], 4);

    let out = home
        .command(&["serve", "license", "set", "bogus", "--data", &data])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let out = home
        .command(&[
            "serve",
            "user",
            "add",
            "carol",
            "--password-stdin",
            "--data",
            &data,
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "empty password or duplicate user must fail"
    );
}

#[tokio::test]
async fn serve_command_serves_the_library_under_its_prefix() {
    use std::io::BufRead;
    // Its own home: the commands read no config of the machine.
    let home = Home::new();
    let lib = small_library();
    let data = tempfile::tempdir().unwrap();
    earmark::server::add_user(data.path(), "dora", "doras password").unwrap();
    let mut child = home
        .command(&["serve", "--library", lib.path().to_str().unwrap()])
        .args(["--data", data.path().to_str().unwrap()])
        .args(["--listen", "127.0.0.1:0", "--prefix", "/gw/earmark"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .unwrap();
        line
    })
    .await
    .unwrap();
    let base = line
        .trim()
        .strip_prefix("earmark serve: listening on ")
        .unwrap_or_else(|| panic!("{line:?}"))
        .to_owned();
    assert!(
        base.starts_with("http://127.0.0.1:") && base.ends_with("/gw/earmark/api/v1"),
        "{base}"
    );
    let http = reqwest::Client::new();
    let login: serde_json::Value = http
        .post(format!("{base}/auth/login"))
        .json(&serde_json::json!({"username": "dora", "password": "doras password"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = login["data"]["token"].as_str().unwrap();
    let books: serde_json::Value = http
        .get(format!("{base}/books"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(books["data"]["total"], 3);
    child.kill().unwrap();
    child.wait().unwrap();
}

#[tokio::test]
async fn demo_server_only_prints_working_credentials() {
    use std::io::BufRead;
    // Its own home: the commands read no config of the machine.
    let home = Home::new();
    let mut child = home
        .command(&["demo", "--server-only"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let lines = tokio::task::spawn_blocking(move || {
        let mut reader = std::io::BufReader::new(stdout);
        let mut lines = Vec::new();
        for _ in 0..4 {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            lines.push(line.trim().to_owned());
        }
        lines
    })
    .await
    .unwrap();
    let field = |name: &str| {
        lines
            .iter()
            .find_map(|l| l.strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} in {lines:?}"))
            .trim()
            .to_owned()
    };
    let (base, user, password) = (field("address:"), field("user:"), field("password:"));
    let http = reqwest::Client::new();
    let login: serde_json::Value = http
        .post(format!("{base}/auth/login"))
        .json(&serde_json::json!({"username": user, "password": password}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = login["data"]["token"].as_str().expect("demo login works");
    let books: serde_json::Value = http
        .get(format!("{base}/books"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(books["data"]["total"].as_u64().unwrap() >= 4, "{books}");
    // Ctrl-C stops it cleanly (and removes its temporary data dir).
    // SAFETY: signalling our own child process by its pid.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    assert!(status.success(), "{status:?}");
}
