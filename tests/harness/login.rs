//! Logged in: a home through `earmark login`, API clients through the
//! API's own login, and the book a test wants.

use super::Home;
use crate::harness::TestServer;
use earmark::api::{Auth, BaseUrl, Client, ClientOptions, Token};
use earmark::domain::{Book, BookId, ServerId, UserId};

/// A home at `server` as its user, logged in with `earmark login`, a
/// client of the same user straight to the server, and the server's books.
pub async fn logged_in(server: &TestServer) -> (Home, Client, Vec<Book>) {
    logged_in_at(server, server.base_url()).await
}

/// [`logged_in`] with the home at `address`: a proxy or a gate in front
/// of the server (the direct client goes to the server itself).
pub async fn logged_in_at(server: &TestServer, address: &str) -> (Home, Client, Vec<Book>) {
    let home = Home::at(address).with_user(&server.username);
    home.log_in(&server.password);
    let direct = direct(server).await;
    let books = direct.books(&Default::default()).await.unwrap();
    (home, direct, books)
}

/// A home at `address` (the server, or a proxy or gate in front of it)
/// logged in with `earmark login`, and the id of the book titled `title`.
pub async fn log_in_and_find(server: &TestServer, address: &str, title: &str) -> (Home, BookId) {
    let (home, _, books) = logged_in_at(server, address).await;
    let id = titled(&books, title).id.clone();
    (home, id)
}

/// The server's user, logged in straight to it (no home, no proxy).
pub async fn direct(server: &TestServer) -> Client {
    let options = ClientOptions::default();
    client_logged_in(
        server.base_url(),
        options,
        &server.username,
        &server.password,
    )
    .await
}

/// A client at `address` logged in as `user` with the API's login.
pub async fn client_logged_in(
    address: &str,
    options: ClientOptions,
    user: &str,
    password: &str,
) -> Client {
    let c = Client::new(BaseUrl::parse(address).unwrap(), options).unwrap();
    c.login(user, password).await.unwrap();
    c
}

/// A client holding a made-up token (server "s", user 1), for in-test
/// servers that take any.
pub fn authed(address: &str, options: ClientOptions) -> Client {
    let auth = Auth {
        token: Token::new("t"),
        server_id: ServerId::new("s"),
        user_id: UserId::from(1),
    };
    Client::with_auth(BaseUrl::parse(address).unwrap(), options, auth).unwrap()
}

/// The book titled `title` among `books`; the test fails naming the
/// titles there when none is.
pub fn titled<'b>(books: &'b [Book], title: &str) -> &'b Book {
    books.iter().find(|b| b.title == title).unwrap_or_else(|| {
        let titles: Vec<&str> = books.iter().map(|b| b.title.as_str()).collect();
        panic!("no book titled {title:?} among {titles:?}")
    })
}
