//! `earmark doctor`: runs the contract flow against the configured server
//! and says what the client recognised in its answers and what it did
//! not. Read-only: the only write is ONE progress write for a book id that
//! cannot exist, sent WITHOUT identity headers, which a contract server
//! must refuse with 428 (docs/cli.md). It prints `--json` for bug reports.

use super::{CommandError, output::Out};
use crate::api::wire::{self, ProgressRead};
use crate::api::{Address, Auth, BookQuery, Client, Token};
use crate::config::{Profile, Session, read_record};
use crate::domain::*;
use reqwest::Method;
use serde_json::{Value, json};
use shape::{describe, find_path, kind, named_prefix};

mod shape;

/// One line of the report: recognised (`Some(true)`), not (`Some(false)`),
/// or could not be checked (`None`).
struct Check {
    name: &'static str,
    ok: Option<bool>,
    detail: String,
}

#[derive(Default)]
struct Report {
    checks: Vec<Check>,
}

impl Report {
    fn add(&mut self, name: &'static str, ok: Option<bool>, detail: impl Into<String>) {
        self.checks.push(Check {
            name,
            ok,
            detail: detail.into(),
        });
    }

    fn pass(&mut self, name: &'static str, detail: impl Into<String>) {
        self.add(name, Some(true), detail);
    }

    fn fail(&mut self, name: &'static str, detail: impl Into<String>) {
        self.add(name, Some(false), detail);
    }
}

pub async fn run(
    profile: &Profile,
    password_stdin: bool,
    out: &mut Out,
) -> Result<(), CommandError> {
    let mut r = Report::default();
    let mut base = profile.server().map(|s| s.to_string());
    let res = checks(profile, password_stdin, &mut r, &mut base).await;
    print(out, base.as_deref().unwrap_or("(none)"), &r);
    res
}

async fn checks(
    profile: &Profile,
    password_stdin: bool,
    r: &mut Report,
    base: &mut Option<String>,
) -> Result<(), CommandError> {
    let client = if password_stdin {
        let record = read_record(profile).ok().flatten();
        let server = match (profile.server(), &record) {
            (Some(s), _) => s.clone(),
            (None, Some(rec)) => rec.server.clone(),
            (None, None) => {
                return Err(CommandError::usage(format!(
                    "no server address for profile {:?}; pass --server or set it in config.toml",
                    profile.name
                )));
            }
        };
        let user = profile
            .user
            .clone()
            .or_else(|| record.map(|r| r.user))
            .ok_or_else(|| CommandError::usage("no user name; pass --user"))?;
        let password =
            super::password::from_stdin().map_err(|e| CommandError::usage(e.to_string()))?;
        // The profile's addresses (the login is checked at the first).
        let mut all: Vec<Address> = profile
            .addresses
            .iter()
            .cloned()
            .map(Address::new)
            .collect();
        if all.is_empty() {
            all.push(Address::new(server));
        }
        let client = Client::with_addresses(all, None, profile.options.clone(), None)?;
        *base = Some(client.base().to_string());
        login_checks(&client, &user, &password, r).await?;
        client
    } else {
        let session = Session::load(profile)?;
        r.add(
            "login",
            None,
            "not checked (the stored session is used; pass --password-stdin to check the login answer)",
        );
        session.client(profile)?
    };
    address_checks(&client, r).await;
    protocol_checks(&client, r).await;
    *base = Some(client.base().to_string());
    license_check(&client, r).await?;
    let first = books_checks(&client, r).await?;
    if let Some(book) = &first {
        let manifest = book_checks(&client, book, r).await;
        progress_check(&client, book, manifest.as_ref(), r).await?;
    } else {
        r.add(
            "progress shape",
            None,
            "not checked: the library has no book to read progress of",
        );
    }
    identity_check(&client, r).await
}

async fn login_checks(
    client: &Client,
    user: &str,
    password: &str,
    r: &mut Report,
) -> Result<(), CommandError> {
    let p = &client.options().paths;
    let mut body = serde_json::Map::new();
    body.insert(p.login_user_field.clone(), json!(user));
    body.insert(p.login_password_field.clone(), json!(password));
    let body = Value::Object(body);
    let a = client
        .probe(Method::POST, &["auth", "login"], &[], Some(body), false)
        .await?;
    let v = match &a.body {
        Ok(v) if (200..300).contains(&a.status) => v.clone(),
        _ => {
            let (code, message) = match &a.body {
                Ok(v) => {
                    let b = wire::error_body(v);
                    (b.code, b.message)
                }
                Err(_) => (None, None),
            };
            let base = client.base();
            let e = crate::api::ApiError::from_status(a.status, code, message, base.as_str());
            r.fail("login", format!("HTTP {}: {e}", a.status));
            return Err(e.into());
        }
    };
    let envelope = ["data", "result", "payload", "response"]
        .into_iter()
        .find(|k| v.get(k).is_some_and(Value::is_object))
        .unwrap_or("none (fields at the top)");
    r.pass("envelope", envelope);
    let token = find_path(
        &v,
        &|k, x| wire::TOKEN_KEYS.contains(&k) && x.is_string(),
        3,
    );
    match wire::decode_login(&v, "POST /auth/login") {
        Ok(l) => {
            r.pass("token key", token.unwrap_or_default());
            let uid = find_path(&v, &|k, x| k == "id" && !x.is_object(), 3).unwrap_or_default();
            let sid = find_path(&v, &|k, _| k.to_ascii_lowercase().contains("serverid"), 3)
                .unwrap_or_default();
            r.pass(
                "login ids",
                format!("serverId at {sid}; user id at {uid} = {}", l.user_id),
            );
            client.set_auth(Some(Auth {
                token: Token::new(l.token.expose()),
                server_id: l.server_id,
                user_id: l.user_id,
            }));
            Ok(())
        }
        Err(e) => {
            r.fail(
                "token key",
                format!("{e}; the answer was {}", wire::describe_shape(&v)),
            );
            Err(e.into())
        }
    }
}

/// Every address of several: the same server, another one (NO: the token
/// never goes there), or not checked; and whether it answers now. The
/// checks after it go to one that answers.
async fn address_checks(client: &Client, r: &mut Report) {
    if client.addresses().len() < 2 {
        return;
    }
    client.check_address().await;
    let server = client.auth().map(|a| a.server_id);
    for a in super::addresses::knocked(client).await {
        let ok = match (&a.said, &server, &a.reach) {
            (Some(s), Some(mine), _) if s != mine => Some(false),
            (Some(_), Some(_), Some(Ok(_))) => Some(true),
            _ => None,
        };
        r.add(
            "address",
            ok,
            format!("{} {}", a.base, a.words(server.as_ref())),
        );
    }
}

/// What each address speaks, asked now (a stored session keeps it): h2c
/// carries a whole session on one connection.
async fn protocol_checks(client: &Client, r: &mut Report) {
    for (base, speaks) in client.learn_protocols().await {
        let ok = speaks.map(|s| s == crate::api::Speaks::H2c);
        let words = crate::api::protocol_words(&base, speaks);
        let words = match speaks {
            None if base.as_str().starts_with("http:") => {
                "not known: no answer to the HTTP/2 probe"
            }
            _ => words,
        };
        r.add("protocol", ok.filter(|h2| *h2), format!("{base} {words}"));
    }
}

async fn license_check(client: &Client, r: &mut Report) -> Result<(), CommandError> {
    let a = client
        .probe(Method::GET, &["license", "status"], &[], None, true)
        .await?;
    match &a.body {
        Ok(v) if (200..300).contains(&a.status) => {
            match wire::decode_license(v, "GET /license/status") {
                Ok(l) => {
                    let c = wire::content(v);
                    let word = find_path(
                        c,
                        &|k, x| matches!(k, "status" | "state" | "licenseStatus") && x.is_string(),
                        1,
                    )
                    .and_then(|p| c.pointer(&format!("/{}", p.replace('.', "/"))).cloned());
                    r.pass(
                        "license words",
                        format!(
                            "{} → {}",
                            word.map(|w| w.to_string())
                                .unwrap_or_else(|| "a flag".into()),
                            super::output::license_word(l.state)
                        ),
                    );
                }
                Err(e) => r.fail("license words", e.to_string()),
            }
        }
        other => r.fail(
            "license words",
            format!("HTTP {}: {}", a.status, describe(other)),
        ),
    }
    Ok(())
}

async fn books_checks(client: &Client, r: &mut Report) -> Result<Option<BookId>, CommandError> {
    let p = &client.options().paths;
    let q = [
        (p.page_param.clone(), "1".to_owned()),
        (p.page_size_param.clone(), p.page_size.to_string()),
    ];
    let a = client
        .probe(Method::GET, &["books"], &q, None, true)
        .await?;
    let Ok(v) = a.body.as_ref().map_err(|k| k.to_string()) else {
        r.fail(
            "list key",
            format!("HTTP {}: {}", a.status, describe(&a.body)),
        );
        return Ok(None);
    };
    match wire::find_list(v, "GET /books") {
        Ok(list) => {
            let ptr = list.items.as_ptr();
            let key = find_path(
                v,
                &|_, x| x.as_array().is_some_and(|a| a.as_ptr() == ptr),
                4,
            )
            .unwrap_or_else(|| "a bare array".into());
            let ids = list
                .items
                .first()
                .and_then(Value::as_object)
                .and_then(|o| {
                    ["id", "bookId", "book_id", "uuid"]
                        .iter()
                        .find_map(|k| o.get(*k))
                })
                .map(kind)
                .unwrap_or("unknown (empty list)");
            r.pass("list key", format!("{key}; ids are {ids}s"));
            let i = &list.info;
            let style = if i.next_url.is_some() {
                "next URL"
            } else if i.cursor.is_some() {
                "cursor"
            } else if i.next_unnamed.is_some() {
                "a bare next (followed as a link when it addresses this list, else sent back as a cursor)"
            } else if i.offset.is_some() {
                "offset"
            } else if i.page.is_some() || i.total_pages.is_some() || i.has_more.is_some() {
                "page"
            } else {
                "none said (the client reads on until an empty or repeated page)"
            };
            let total = i.total.map(|t| format!(", total {t}")).unwrap_or_default();
            let size = u64::from(p.page_size.max(1));
            let numbering = if wire::skipped_first_page(i, list.items.len(), size) {
                ", pages counted from 0 (the answer to page=1 is not the first page)"
            } else {
                ""
            };
            r.pass("paging style", format!("{style}{total}{numbering}"));
        }
        Err(e) => {
            r.fail("list key", format!("{e}: {}", wire::describe_shape(v)));
            return Ok(None);
        }
    }
    let listing = client.books_listing(&BookQuery::default()).await?;
    let skipped = listing.skipped.len();
    let incomplete = listing
        .shortfall
        .map(|s| format!("; the library is INCOMPLETE: {}", s.describe("books")))
        .unwrap_or_default();
    r.add(
        "books",
        Some(skipped == 0 && listing.complete()),
        format!(
            "{} read, {skipped} could not be read{}{incomplete}",
            listing.items.len(),
            listing
                .skipped
                .first()
                .map(|s| format!(" (first: {s})"))
                .unwrap_or_default()
        ),
    );
    Ok(listing.items.first().map(|b| b.id.clone()))
}

/// How the chapters' lengths are given: in a unit the key names, or as
/// numbers without one, read in the unit the audio fits (or not at all).
async fn lengths_check(client: &Client, m: &mut Manifest, r: &mut Report) {
    let unitless = m
        .items
        .iter()
        .find_map(|i| i.duration_source.unchecked().cloned());
    let (ok, detail) = match (unitless, client.check_lengths(m).await) {
        (_, Some(u)) => (
            Some(false),
            format!("{:?} without a unit, not read: {:?}", u.key, u.why),
        ),
        (Some(u), None) => (
            Some(true),
            format!("{:?} without a unit, read by the audio", u.key),
        ),
        (None, None) if m.items.iter().all(|i| i.duration.is_none()) => (None, "not given".into()),
        (None, None) => (Some(true), "in a unit the server names".into()),
    };
    r.add("chapter lengths", ok, detail);
}

/// The first book's details and manifest; the manifest, when it decodes.
async fn book_checks(client: &Client, book: &BookId, r: &mut Report) -> Option<Manifest> {
    match client.book(book).await {
        Ok(_) => r.pass("book details", format!("book {book}")),
        Err(e) => r.fail("book details", e.to_string()),
    }
    match client.manifest(book).await {
        Ok(mut m) => {
            r.pass("manifest", format!("{} chapters", m.items.len()));
            lengths_check(client, &mut m, r).await;
            Some(m)
        }
        Err(e) => {
            r.fail("manifest", e.to_string());
            None
        }
    }
}

async fn progress_check(
    client: &Client,
    book: &BookId,
    manifest: Option<&Manifest>,
    r: &mut Report,
) -> Result<(), CommandError> {
    let segs = ["auth", "reading-progress", book.as_str()];
    let a = client.probe(Method::GET, &segs, &[], None, true).await?;
    let (ok, detail) = match (&a.body, a.status, manifest) {
        (_, 404, _) => (Some(true), "no progress yet (HTTP 404)".to_owned()),
        (_, 204, _) => (Some(true), "no progress yet (HTTP 204)".to_owned()),
        (Ok(_), 200..=299, None) => (
            None,
            "not checked: a progress answer is read against the book's manifest, which could not be read".to_owned(),
        ),
        (Ok(v), 200..=299, Some(m)) => match wire::decode_progress_read(v, book, m) {
            ProgressRead::Record { progress, settings } => (
                Some(true),
                format!(
                    "a record ({} at {:.1} s){}",
                    super::output::chapter_name(Some(m), &progress.chapter_id),
                    progress.position,
                    if settings.is_some() {
                        " with playback settings"
                    } else {
                        ""
                    }
                ),
            ),
            ProgressRead::NoProgress { .. } => (
                Some(true),
                format!("no progress yet: {}", wire::describe_shape(v)),
            ),
            ProgressRead::Unreadable { shape } => (
                Some(false),
                format!(
                    "NOT recognised, so earmark will not report progress for this book: {shape}"
                ),
            ),
        },
        (body, status, _) => (None, format!("HTTP {status}: {}", describe(body))),
    };
    r.add("progress shape", ok, detail);
    Ok(())
}

/// The one write: a book id that cannot exist, no identity headers.
async fn identity_check(client: &Client, r: &mut Report) -> Result<(), CommandError> {
    let book = format!("earmark-doctor-no-such-book-{}", std::process::id());
    let body = client.options().fields.progress(
        &ChapterId::new("earmark-doctor-no-such-chapter"),
        1.0,
        now_millis(),
        false,
        false,
        Some("earmark-doctor"),
    );
    let segs = ["auth", "reading-progress", book.as_str()];
    let a = client
        .probe(Method::POST, &segs, &[], Some(body), true)
        .await?;
    let prefix = client.options().identity_header_prefix.clone();
    let text = a.body.as_ref().map(Value::to_string).unwrap_or_default();
    if let Ok(v) = &a.body
        && a.status >= 400
    {
        let b = wire::error_body(v);
        let code = b.code.clone().unwrap_or_default();
        let at = find_path(
            v,
            &|_, x| {
                x.as_str()
                    .is_some_and(|s| !code.is_empty() && wire::normalize_code(s) == code)
            },
            3,
        );
        r.add(
            "error shape",
            Some(b.code.is_some() || b.message.is_some()),
            format!(
                "code {} under {}; message {}",
                b.code.as_deref().unwrap_or("(none)"),
                at.unwrap_or_else(|| "(nowhere)".into()),
                b.message
                    .map(|m| format!("{m:?}"))
                    .unwrap_or_else(|| "(none)".into())
            ),
        );
    }
    let named = named_prefix(&text);
    let (ok, detail) = match a.status {
        428 => match named {
            Some(p) if !p.eq_ignore_ascii_case(&prefix) => (
                Some(false),
                format!(
                    "NOT understood: the server names {p}-Expected-Server-Id, but identity_header_prefix is \"{prefix}\"; set identity_header_prefix = \"{p}\" for this profile in config.toml"
                ),
            ),
            Some(_) => (Some(true), format!("understood: the server asks for {prefix}-Expected-… (428)")),
            None => (
                None,
                format!(
                    "the server requires identity headers (428) but does not name them; earmark sends {prefix}-Expected-Server-Id and {prefix}-Expected-User-Id"
                ),
            ),
        },
        200..=299 => (
            Some(false),
            "the server ACCEPTED a progress write without identity headers (for a book that does not exist)".to_owned(),
        ),
        404 => (None, "cannot tell: the server checks the book before the headers (404)".to_owned()),
        s => (None, format!("cannot tell: HTTP {s}: {}", describe(&a.body))),
    };
    r.add("identity headers", ok, detail);
    Ok(())
}

fn print(out: &mut Out, base: &str, r: &Report) {
    let all_ok = r.checks.iter().all(|c| c.ok != Some(false));
    out.json(json!({
        "server": base,
        "recognised": all_ok,
        "checks": r.checks.iter().map(|c| json!({
            "check": c.name, "recognised": c.ok, "detail": c.detail,
        })).collect::<Vec<_>>(),
    }));
    out.line(format!("Server: {base}"));
    for c in &r.checks {
        let mark = match c.ok {
            Some(true) => "ok ",
            Some(false) => "NO ",
            None => " ? ",
        };
        out.line(format!("[{mark}] {:<17} {}", c.name, c.detail));
    }
    out.line(if all_ok {
        "Everything earmark checked was recognised."
    } else {
        "Some answers were not recognised (NO above); paste this report into a bug report."
    });
}
