//! Lists, page by page: [`Pager`] hands out pages as they arrive (the
//! player shows the first one at once) and ends the list safely: on an
//! empty page, a page whose items were all seen before, a repeated page or
//! cursor, or a hard cap on pages (an error, never a silent cut). A page
//! that fails is asked again by the next call (the caller retries). A `next`
//! URL is followed only on the server's own origin, so the token never
//! leaves it. Items that cannot be decoded are skipped and counted.
//!
//! What arrived is counted against what the server says: the first answer
//! teaches the numbering (an answer to `page=1` that says it is not the
//! first page means pages count from 0: the list starts over at page 0),
//! and an ended list whose total, `hasMore` or page count says there is
//! more asks page 0 once (what a zero-based server keeps there), then says
//! what is missing ([`Shortfall`]); never a silent partial list.

use super::Client;
use super::transport::Access;
use crate::api::error::ApiError;
use crate::api::wire::{self, NextPage, SkippedItem};
use crate::domain::backoff::Kind;
use reqwest::Method;
use serde_json::Value;
use std::collections::HashSet;
use std::sync::Arc;

/// Where a page of a list starts (`Page(1)` is the first page).
pub type PageCursor = NextPage;

/// Decodes one list item; the `&str` names its place for errors.
pub type ItemDecoder<T> = Arc<dyn Fn(&Value, &str) -> Result<T, ApiError> + Send + Sync>;

/// One page of a list and where the next one starts.
#[derive(Debug, Clone, PartialEq)]
pub struct ListPage<T> {
    pub items: Vec<T>,
    pub total: Option<u64>,
    pub next: Option<PageCursor>,
    /// Items of this page that could not be decoded (left out of `items`).
    pub skipped: Vec<SkippedItem>,
}

/// A whole list: every item that could be read, and the ones that could not.
#[derive(Debug, Clone, PartialEq)]
pub struct Listing<T> {
    pub items: Vec<T>,
    pub skipped: Vec<SkippedItem>,
    /// The total the server reported, if it did.
    pub total: Option<u64>,
    /// Items read from the server, each once (readable or skipped).
    pub read: u64,
    /// What the server says is missing; `None`: the list is complete as
    /// far as anything the server said can tell.
    pub shortfall: Option<Shortfall>,
}

impl<T> Listing<T> {
    pub fn complete(&self) -> bool {
        self.shortfall.is_none()
    }
}

/// A list that ended with less than the server says it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shortfall {
    /// Items read, each once.
    pub read: u64,
    /// The server's own count, when it gave one (else its `hasMore` or
    /// page count said there is more).
    pub reported: Option<u64>,
}

impl Shortfall {
    /// "the server reports 3 books, earmark read 1", with `items` naming them.
    pub fn describe(&self, items: &str) -> String {
        match self.reported {
            Some(t) => format!("the server reports {t} {items}, earmark read {}", self.read),
            None => format!(
                "the server says it has more {items} than the {} earmark read",
                self.read
            ),
        }
    }
}

/// What to list: path, filters and the item decoder.
#[derive(Clone)]
pub(super) struct ListRequest<T> {
    pub segs: Vec<String>,
    pub query: Vec<(String, String)>,
    pub endpoint: String,
    pub decode: ItemDecoder<T>,
}

/// Fetches a list page by page; see the module comment for how it ends.
pub struct Pager<T> {
    client: Client,
    req: ListRequest<T>,
    at: Option<NextPage>,
    pages: usize,
    fetched: u64,
    seen_items: HashSet<String>,
    seen_pages: HashSet<NextPage>,
    skipped: Vec<SkippedItem>,
    total: Option<u64>,
    /// The latest `hasMore` (or `last`) a page said.
    more_said: Option<bool>,
    /// The latest page count a page said, and pages that held items.
    total_pages: Option<u64>,
    pages_with_items: u64,
    /// Every request so far asked by page number.
    numbered: bool,
    /// Page 0 was asked (the numbering was learned, or to fetch what is missing).
    asked_page_zero: bool,
    /// Pages are now those asked after the list first ended (they go before).
    went_back: bool,
}

impl<T> std::fmt::Debug for Pager<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pager")
            .field("endpoint", &self.req.endpoint)
            .field("at", &self.at)
            .field("pages", &self.pages)
            .finish_non_exhaustive()
    }
}

impl<T> Pager<T> {
    pub(super) fn new(client: Client, req: ListRequest<T>) -> Pager<T> {
        Pager {
            client,
            req,
            at: Some(NextPage::Page(1)),
            pages: 0,
            fetched: 0,
            seen_items: HashSet::new(),
            seen_pages: HashSet::new(),
            skipped: Vec::new(),
            total: None,
            more_said: None,
            total_pages: None,
            pages_with_items: 0,
            numbered: true,
            asked_page_zero: false,
            went_back: false,
        }
    }

    /// What the server says is missing from what was read so far.
    pub fn shortfall(&self) -> Option<Shortfall> {
        let read = self.seen_items.len() as u64;
        let short = self.total.is_some_and(|t| read < t)
            || self.more_said == Some(true)
            || self
                .total_pages
                .is_some_and(|tp| self.numbered && self.pages_with_items < tp);
        short.then_some(Shortfall {
            read,
            reported: self.total.filter(|t| *t > read),
        })
    }

    /// The page to ask when the list ended short: page 0, once, of a
    /// list asked by page number (a zero-based server keeps items there).
    fn missing_page(&self) -> Option<NextPage> {
        (self.numbered && !self.asked_page_zero && self.shortfall().is_some())
            .then_some(NextPage::Page(0))
    }

    /// The whole list from the items handed out (in the order to show).
    pub fn into_listing(self, items: Vec<T>) -> Listing<T> {
        Listing {
            items,
            read: self.seen_items.len() as u64,
            shortfall: self.shortfall(),
            skipped: self.skipped,
            total: self.total,
        }
    }

    /// The next page, `Ok(None)` when the list has ended (see
    /// [`Pager::shortfall`] for whether it is complete). Items already
    /// handed out are not repeated.
    pub async fn next_page(&mut self) -> Result<Option<ListPage<T>>, ApiError> {
        loop {
            let Some(at) = self.at.take() else {
                match self.missing_page() {
                    Some(zero) => {
                        tracing::info!(
                            "{}: the list ended short ({}); asking page 0",
                            self.req.endpoint,
                            self.shortfall()
                                .map(|s| s.describe("items"))
                                .unwrap_or_default()
                        );
                        self.asked_page_zero = true;
                        self.went_back = true;
                        self.at = Some(zero);
                        continue;
                    }
                    None => return Ok(None),
                }
            };
            match self.fetch_at(at).await {
                Ok(Some(page)) => return Ok(Some(page)),
                Ok(None) => {}
                // A server that refuses page 0 has nothing there: the list
                // ends as it was, short (a transient failure is asked again).
                Err(e) if self.went_back && !e.is_transient() => {
                    tracing::info!("{}: page 0 refused: {e}", self.req.endpoint);
                    self.at = None;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// One page at `at`: `Ok(None)` when it holds nothing new (the list
    /// ends or starts over; `self.at` says where it goes on).
    async fn fetch_at(&mut self, at: NextPage) -> Result<Option<ListPage<T>>, ApiError> {
        // The cap stops a server that never ends a list; a library whose
        // reported total needs more pages than the cap is not cut short.
        let per_page = if self.pages == 0 {
            1
        } else {
            (self.fetched / self.pages as u64).max(1)
        };
        let needed = self
            .total
            .map_or(0, |t| usize::try_from(t / per_page).unwrap_or(usize::MAX))
            .saturating_add(2);
        let cap = self.client.inner.opts.max_pages.max(needed).max(1);
        if self.pages >= cap {
            return Err(ApiError::Decode {
                endpoint: self.req.endpoint.clone(),
                field: "paging".into(),
                problem: format!(
                    "did not end after {cap} pages ({} items); earmark stops rather than loop; `earmark doctor` shows the paging style the server uses",
                    self.fetched
                ),
            });
        }
        let raw = match self
            .client
            .fetch_raw_page(&self.req, &at, self.fetched)
            .await
        {
            Ok(raw) => raw,
            Err(e) => {
                // The same page is asked again on the next call: a failed
                // page never reads as the end of the list.
                self.at = Some(at);
                return Err(e);
            }
        };
        self.numbered &= matches!(at, NextPage::Page(_));
        let size = u64::from(self.client.inner.opts.paths.page_size.max(1));
        if self.pages == 0
            && at == NextPage::Page(1)
            && !self.asked_page_zero
            && wire::skipped_first_page(&raw.info, raw.entries.len(), size)
        {
            // Nothing of this page was handed out: start over at page 0.
            tracing::info!(
                "{}: the answer to page 1 is not the first page; this server counts pages from 0",
                self.req.endpoint
            );
            self.asked_page_zero = true;
            self.at = Some(NextPage::Page(0));
            return Ok(None);
        }
        self.pages += 1;
        self.seen_pages.insert(at.clone());
        self.fetched += raw.entries.len() as u64;
        self.total = raw.total.or(self.total);
        self.more_said = raw.info.has_more.or(self.more_said);
        self.total_pages = raw.info.total_pages.or(self.total_pages);
        if !raw.entries.is_empty() {
            self.pages_with_items += 1;
        }
        let fresh: Vec<bool> = raw
            .entries
            .iter()
            .map(|(k, _)| self.seen_items.insert(k.clone()))
            .collect();
        if !fresh.is_empty() && fresh.iter().all(|f| !f) {
            // A server that ignores the page parameter repeats itself.
            tracing::debug!(
                "{}: a page of items seen before ends the list",
                self.req.endpoint
            );
            return Ok(None);
        }
        let mut page = ListPage {
            items: Vec::with_capacity(raw.entries.len()),
            total: raw.total,
            next: raw.next,
            skipped: Vec::new(),
        };
        for ((_, entry), fresh) in raw.entries.into_iter().zip(fresh) {
            match entry {
                Ok(t) if fresh => page.items.push(t),
                Ok(_) => {}
                Err(s) => {
                    tracing::warn!("left out of the list: {s}");
                    page.skipped.push(s);
                }
            }
        }
        self.skipped.extend(page.skipped.iter().cloned());
        let complete = page.total.is_some_and(|t| self.fetched >= t);
        self.at = match page.next.clone() {
            _ if complete => None,
            Some(n) if self.seen_pages.contains(&n) => None,
            n => n,
        };
        page.next = self.at.clone();
        Ok(Some(page))
    }

    /// Items skipped so far, with the reasons.
    pub fn skipped(&self) -> &[SkippedItem] {
        &self.skipped
    }

    /// The total the server reported, if any.
    pub fn total(&self) -> Option<u64> {
        self.total
    }

    /// Every remaining page, collected; what was fetched after the list
    /// first ended (page 0 of a zero-based server) goes before the rest.
    pub async fn collect_all(mut self) -> Result<Listing<T>, ApiError> {
        let (mut front, mut items) = (Vec::new(), Vec::new());
        while let Some(p) = self.next_page().await? {
            if self.went_back {
                front.extend(p.items);
            } else {
                items.extend(p.items);
            }
        }
        front.extend(items);
        if let Some(short) = self.shortfall() {
            tracing::warn!(
                "{} is incomplete: {}",
                self.req.endpoint,
                short.describe("items")
            );
        }
        Ok(self.into_listing(front))
    }
}

/// A page as fetched: every raw item's key with its decoded value or the
/// reason it was skipped, in server order.
pub(super) struct RawPage<T> {
    pub entries: Vec<(String, Result<T, SkippedItem>)>,
    pub total: Option<u64>,
    pub next: Option<NextPage>,
    /// The paging facts the answer gave.
    pub info: wire::PageInfo,
}

impl Client {
    /// Fetch one page at `at`; `fetched_before` counts items before it.
    pub(super) async fn fetch_raw_page<T>(
        &self,
        req: &ListRequest<T>,
        at: &NextPage,
        fetched_before: u64,
    ) -> Result<RawPage<T>, ApiError> {
        let p = &self.inner.opts.paths;
        let size = u64::from(p.page_size.max(1));
        let mut query = req.query.clone();
        let page_no = match at {
            NextPage::Page(n) => {
                query.push((p.page_param.clone(), n.to_string()));
                query.push((p.page_size_param.clone(), size.to_string()));
                *n
            }
            NextPage::Offset(o) => {
                query.push((p.offset_param.clone(), o.to_string()));
                query.push((p.limit_param.clone(), size.to_string()));
                1
            }
            NextPage::Cursor(c) => {
                query.push((p.cursor_param.clone(), c.clone()));
                1
            }
            NextPage::Url(_) => 1,
        };
        let base = self.base();
        let url = match at {
            NextPage::Url(u) => self.next_url(&base, &req.endpoint, &req.segs, u)?,
            _ => {
                let mut url = base.endpoint(req.segs.iter().map(String::as_str));
                url.query_pairs_mut().extend_pairs(&query);
                url
            }
        };
        let v = self
            .call_url(Method::GET, Kind::Read, &base, url, None, Access::Token)
            .await?;
        let mut list = wire::find_list(&v, &req.endpoint)?;
        // A bare `next` is a link only when it addresses this very list.
        let this_list = base.endpoint(req.segs.iter().map(String::as_str));
        list.info.settle_next(|s| {
            base.resolve_next(&this_list, s)
                .is_ok_and(|u| u.path() == this_list.path())
        });
        let place = format!("{} page {}", req.endpoint, page_no_label(at, page_no));
        let entries = list
            .items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let here = format!("{place} items[{i}]");
                let decoded = (req.decode)(item, &here).map_err(|e| SkippedItem {
                    place: here,
                    reason: e.to_string(),
                });
                (wire::item_key(item), decoded)
            })
            .collect();
        // Items before this page: what was counted, or what the server's
        // page size says; the size asked for only for a page asked alone
        // (a server may ignore it).
        let before = match (at, list.info.page_size) {
            (NextPage::Offset(o), _) => *o,
            (NextPage::Page(n), Some(s)) => s.saturating_mul(n.saturating_sub(1)),
            (NextPage::Page(n), None) if fetched_before == 0 => {
                size.saturating_mul(n.saturating_sub(1))
            }
            _ => 0,
        }
        .max(fetched_before);
        let fetched = before.saturating_add(list.items.len() as u64);
        let mut next = wire::next_page(&list.info, list.items.len(), fetched, page_no, size);
        if next.as_ref() == Some(at) {
            next = None; // a server that repeats itself must not loop us
        }
        Ok(RawPage {
            entries,
            total: list.info.total,
            next,
            info: list.info,
        })
    }

    /// A `next` link as a URL we may send the token to: same origin only.
    fn next_url(
        &self,
        base: &crate::api::BaseUrl,
        endpoint: &str,
        segs: &[String],
        given: &str,
    ) -> Result<url::Url, ApiError> {
        let current = base.endpoint(segs.iter().map(String::as_str));
        let url = base
            .resolve_next(&current, given)
            .map_err(|e| ApiError::Decode {
                endpoint: endpoint.to_owned(),
                field: "next".into(),
                problem: format!("is not a URL earmark can follow: {e}"),
            })?;
        if !base.same_origin(&url) {
            return Err(ApiError::Decode {
                endpoint: endpoint.to_owned(),
                field: "next".into(),
                problem: format!(
                    "points to another origin ({}); earmark does not send your token there, so the rest of the list cannot be read",
                    url.origin().ascii_serialization()
                ),
            });
        }
        Ok(url)
    }

    /// A list request of this client.
    pub(super) fn pager<T>(
        &self,
        segs: &[&str],
        query: Vec<(String, String)>,
        endpoint: &str,
        decode: ItemDecoder<T>,
    ) -> Pager<T> {
        let req = ListRequest {
            segs: segs.iter().map(|s| (*s).to_owned()).collect(),
            query,
            endpoint: endpoint.to_owned(),
            decode,
        };
        Pager::new(self.clone(), req)
    }

    /// One page at `at`, without the pager's memory of earlier pages.
    pub(super) async fn one_page<T>(
        &self,
        segs: &[&str],
        query: Vec<(String, String)>,
        at: &PageCursor,
        endpoint: &str,
        decode: ItemDecoder<T>,
    ) -> Result<ListPage<T>, ApiError> {
        let req = self.pager(segs, query, endpoint, decode).req;
        let raw = self.fetch_raw_page(&req, at, 0).await?;
        let mut page = ListPage {
            items: Vec::with_capacity(raw.entries.len()),
            total: raw.total,
            next: raw.next,
            skipped: Vec::new(),
        };
        for (_, entry) in raw.entries {
            match entry {
                Ok(t) => page.items.push(t),
                Err(s) => page.skipped.push(s),
            }
        }
        Ok(page)
    }
}

fn page_no_label(at: &NextPage, n: u64) -> String {
    match at {
        NextPage::Page(_) => n.to_string(),
        NextPage::Offset(o) => format!("at offset {o}"),
        NextPage::Cursor(_) | NextPage::Url(_) => "after a link".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The player fetches pages on a spawned task: the pager and its
    /// futures must be `Send`.
    #[test]
    fn pages_can_be_fetched_on_another_task() {
        fn send<T: Send>(_: &T) {}
        let c = Client::new(
            crate::api::BaseUrl::parse("127.0.0.1:9").unwrap(),
            Default::default(),
        )
        .unwrap();
        let mut p = c.book_pager(&Default::default());
        send(&p);
        let fut = p.next_page();
        send(&fut);
    }
}
