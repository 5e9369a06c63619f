use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The entry point: `main.rs`, `cli.rs` and `cli/`.
fn at_the_entry_point(relative: &Path) -> bool {
    relative == Path::new("main.rs")
        || relative == Path::new("cli.rs")
        || relative.starts_with("cli")
}

#[test]
fn clap_is_named_only_at_the_entry_point() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(
        files.len() > 100,
        "the sources were found ({})",
        files.len()
    );
    let mut found = Vec::new();
    for path in files {
        let relative = path.strip_prefix(&src).unwrap();
        if at_the_entry_point(relative) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, line) in text.lines().enumerate() {
            if line.to_ascii_lowercase().contains("clap") {
                found.push(format!("src/{}:{}: {line}", relative.display(), i + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "clap outside main.rs, cli.rs and cli/ (parse there, hand plain values down):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_command_line_definition_is_consistent() {
    use clap::CommandFactory;
    super::Cli::command().debug_assert();
}
