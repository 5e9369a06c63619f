//! Private at rest: the data dir is 0700 and the database files 0600 after
//! `user add`, `license set` and `serve`, and an older, readable
//! installation is fixed on start with a notice.
#![cfg(unix)]

use crate::common::*;
use crate::harness::Home;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The data dir and every database file in it.
fn assert_private(data: &Path) {
    assert_eq!(mode(data), 0o700, "data dir {}", data.display());
    let mut files = 0;
    for entry in std::fs::read_dir(data).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("earmark.sqlite3") {
            assert_eq!(mode(&path), 0o600, "{name}");
            files += 1;
        }
    }
    assert!(files >= 1, "no database in {}", data.display());
}

/// Makes an installation readable by everyone, as older versions left it.
fn loosen(data: &Path) {
    set_mode(data, 0o755);
    for entry in std::fs::read_dir(data).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            set_mode(&path, 0o644);
        }
    }
}

/// `earmark ARGS` (in a home of its own) with `stdin`; it must succeed.
fn earmark(args: &[&str], stdin: &str) -> std::process::Output {
    let out = Home::new().run(args, Some(stdin));
    assert!(
        out.status.success(),
        "earmark {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[tokio::test]
async fn data_dir_and_database_are_private_after_user_add_license_set_and_serve() {
    let parent = tempfile::tempdir().unwrap();
    let data = parent.path().join("server-data");
    let d = data.to_str().unwrap();

    earmark(
        &[
            "serve",
            "user",
            "add",
            "erin",
            "--password-stdin",
            "--data",
            d,
        ],
        "erins password\n",
    );
    assert_private(&data);

    loosen(&data);
    let out = earmark(&["serve", "license", "set", "valid", "--data", d], "");
    assert_private(&data);
    let notice = String::from_utf8_lossy(&out.stderr);
    assert!(
        notice.contains("made") && notice.contains("private"),
        "a notice says what was fixed: {notice}"
    );

    loosen(&data);
    let lib = small_library();
    let server = earmark::server::spawn(earmark::server::ServerConfig::new(lib.path(), &data))
        .await
        .unwrap();
    assert_private(&data);
    // The served database is the same one: erin can log in.
    let res = reqwest::Client::new()
        .post(format!("{}/auth/login", server.base_url()))
        .json(&serde_json::json!({"username": "erin", "password": "erins password"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_private(&data);
    server.shutdown().await;
}
