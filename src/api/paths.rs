//! The one table of what the contract leaves "not shown" on the request
//! side: paths of categories, favorites and bookmarks, query parameter
//! names and login body field names. Defaults are ours (docs/contract.md);
//! a profile may override any of them in config.toml `[profiles.NAME.paths]`.
//!
//! Path templates are relative to the base address; `{bookId}` and
//! `{bookmarkId}` are replaced by the percent-encoded id.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Paths {
    pub categories: String,
    pub favorites: String,
    /// POST adds, DELETE removes.
    pub favorite: String,
    /// GET lists (with `bookmarks_book_param`), POST creates.
    pub bookmarks: String,
    /// DELETE removes.
    pub bookmark: String,
    pub logout: String,
    pub search_param: String,
    pub category_param: String,
    pub favorites_param: String,
    pub bookmarks_book_param: String,
    pub page_param: String,
    pub page_size_param: String,
    pub offset_param: String,
    pub limit_param: String,
    pub cursor_param: String,
    /// Page size the client asks for.
    pub page_size: u32,
    pub login_user_field: String,
    pub login_password_field: String,
}

impl Default for Paths {
    fn default() -> Self {
        Paths {
            categories: "/categories".into(),
            favorites: "/auth/favorites".into(),
            favorite: "/auth/favorites/{bookId}".into(),
            bookmarks: "/auth/bookmarks".into(),
            bookmark: "/auth/bookmarks/{bookmarkId}".into(),
            logout: "/auth/logout".into(),
            search_param: "q".into(),
            category_param: "category".into(),
            favorites_param: "favorites".into(),
            bookmarks_book_param: "bookId".into(),
            page_param: "page".into(),
            page_size_param: "pageSize".into(),
            offset_param: "offset".into(),
            limit_param: "limit".into(),
            cursor_param: "cursor".into(),
            page_size: 100,
            login_user_field: "username".into(),
            login_password_field: "password".into(),
        }
    }
}

/// Split a path template into segments, replacing `{name}` segments with
/// `value`. The segments are later percent-encoded one by one.
pub fn segments<'a>(template: &'a str, value: Option<&'a str>) -> Vec<&'a str> {
    template
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            if s.starts_with('{') && s.ends_with('}') {
                value.unwrap_or(s)
            } else {
                s
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_split_and_fill() {
        assert_eq!(
            segments("/auth/favorites/{bookId}", Some("bk 1")),
            ["auth", "favorites", "bk 1"]
        );
        assert_eq!(segments("categories", None), ["categories"]);
    }

    #[test]
    fn overrides_parse_from_toml_and_keep_defaults() {
        let p: Paths =
            toml::from_str("categories = \"/genres\"\nsearch_param = \"keyword\"").unwrap();
        assert_eq!(p.categories, "/genres");
        assert_eq!(p.search_param, "keyword");
        assert_eq!(p.favorites, Paths::default().favorites);
        assert!(toml::from_str::<Paths>("nonsense = 1").is_err());
    }
}
