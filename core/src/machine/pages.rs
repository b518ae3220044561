//! [`Pages`]: every page of a list operation, one request at a time, bounded by a number of
//! pages or items. The export job's own lookup reads its lists with the same rules.
//!
//! How an operation pages comes from the catalog's query parameters:
//! - **cursor** (`cursor` and `limit`: the reporting exports, analytics and mapping review
//!   lists): the next page is asked for with the cursor the page names;
//! - **numbered** (`page` and `size`: the enterprise subscription list): pages 1, 2, … ;
//! - **single** (no paging parameter: the enterprise release and delivery lists, the identity
//!   sessions): one page. A page that names more pages there cannot be followed, and the walk
//!   fails rather than ending as if the list were whole.
//!
//! Page shapes are not shown in the specs. A page's items are the page itself when it is an
//! array, else its first array member among `data`, `items`, `exports`, `results`,
//! `subscriptions` and `deliveries`. What follows a page is read from `has_more` (or
//! `hasMore`, `has_next`, `hasNext`), `next_cursor` (or `nextCursor`, `next_page_cursor`) or a
//! `next` link's `cursor` parameter, at the top or under `meta`, `pagination`, `page`,
//! `paging`, `links` or `_links`; a numbered page also from `current_page` and `last_page`.
//! When a page says nothing, one shorter than the page size is the last (the size sent, else
//! the spec's default: 50 for a cursor list, 10 for the subscription list; a list whose
//! default is not shown ends at the first page that names no next page). After a full page
//! of the export list that names no cursor, the next is asked for with its last item's id
//! (the spec's export cursor is a UUID).
//!
//! The walk never loops and never gives a page twice: a cursor given twice, or a page that
//! repeats one read before (its items are not given again; two empty pages count as a
//! repeat), fails it (`list_cursor_repeated`),
//! and so does a page that says more follow without saying
//! how to ask for them (`next_page_unknown`), or a page with no items array
//! (`page_unreadable`).

use crate::catalog::{self, Operation, QueryKind};
use crate::{ArgumentError, RoyaltyKitError};
use serde_json::Value;

/// The members a page's items are looked for in, in order, when the page is not an array.
const ITEM_MEMBERS: [&str; 6] = [
    "data",
    "items",
    "exports",
    "results",
    "subscriptions",
    "deliveries",
];
/// Where a page's paging members are looked for, besides its top level.
const HOLDERS: [&str; 6] = ["meta", "pagination", "page", "paging", "links", "_links"];
/// The reporting lists' default page size (`limit`, 1 to 100, default 50).
const CURSOR_DEFAULT_SIZE: usize = 50;
/// The subscription list's default page size (`size`, default 10).
const NUMBERED_DEFAULT_SIZE: usize = 10;
/// The largest `limit` a reporting list takes.
const LIMIT_MAX: u32 = 100;

string_enum! {
    /// Why a walk over the pages of a list ended.
    pub enum PagesEnd as "end" {
        /// The list was read to its end.
        Last = "last",
        /// The page bound was reached; more pages may follow.
        MaxPages = "max_pages",
        /// The item bound was reached; more items may follow.
        MaxItems = "max_items",
    }
}

record! {
/// The bounds of a walk over a list's pages.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PagesOptions {
    /// Most pages to read (none: no bound).
    pub max_pages: Option<u32>,
    /// Most items to give (none: no bound). A page's items past it are not given.
    pub max_items: Option<u64>,
    /// The page size to ask for (`limit` or `size`); none: the operation's `limit`/`size` from
    /// the query, else 100 for a reporting list with a 1–100 `limit`, else the service's
    /// default.
    pub page_size: Option<u32>,
    /// The member of an item naming it, for the export list's keyset cursor (default `id`).
    pub id_field: Option<String>,
}
}

record! {
/// Where a page's items are, as [`Pages::page`] read them: the page itself (`member` none) or
/// its member `member`; the host gives the first `take` of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageItems {
    /// The page's member holding the items; none: the page is the array.
    pub member: Option<String>,
    /// How many of them to give (fewer than the page holds when the item bound cut it).
    pub take: u64,
}
}

/// What the host does next for a walk over pages.
#[derive(Debug, Clone, PartialEq)]
pub enum PagesStep {
    /// Request the list with this query (the caller's own parameters, with the page's), then
    /// report its 2xx body to [`Pages::page`].
    Fetch {
        /// The query, in order.
        query: Vec<(String, String)>,
    },
    /// The walk is over.
    Done {
        /// Why.
        end: PagesEnd,
        /// Pages read.
        pages: u32,
        /// Items given.
        items: u64,
    },
    /// The list cannot be read on; the items given so far stand.
    Fail {
        /// Family `pagination`: `page_unreadable`, `next_page_unknown` or
        /// `list_cursor_repeated`.
        error: Box<RoyaltyKitError>,
    },
}

/// How an operation pages.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Style {
    /// `cursor` (and `limit`); `keyset`: the cursor is an item id (a UUID).
    Cursor { keyset: bool },
    /// `page` and `size`.
    Numbered,
    /// No paging parameter.
    Single,
}

/// Where a walk is: what a checkpoint keeps of it.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct PageCursor {
    /// The cursor of the page being read (none: the first).
    pub(crate) cursor: Option<String>,
    /// Cursors read so far (a cursor seen twice cannot end).
    pub(crate) cursors: Vec<String>,
    /// Pages read.
    pub(crate) pages: u32,
    /// Items given.
    #[serde(default)]
    pub(crate) given: u64,
    /// The number of the page being read, for a numbered list (0: the first asked for).
    #[serde(default)]
    pub(crate) number: u64,
    /// A digest of each page's items: a page that repeats one (a service that ignores the
    /// cursor or the page number, or sends empty pages that say more follow) cannot end.
    #[serde(default)]
    pub(crate) digests: Vec<u64>,
}

/// What follows a page that was read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum After {
    /// Ask for the next page.
    Fetch,
    /// The walk ended.
    End(PagesEnd),
    /// The list cannot be read on: (code, message).
    Fail(&'static str, String),
}

/// The rules of one walk: the operation's paging and the caller's bounds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Paging {
    operation: &'static Operation,
    style: Style,
    /// The caller's query, without the paging parameters.
    base: Vec<(String, String)>,
    /// The page size sent, if any.
    size: Option<u32>,
    /// The size of a full page, when known.
    full: Option<usize>,
    /// The first page's number (numbered lists).
    first: u64,
    /// The cursor to start from.
    start_cursor: Option<String>,
    max_pages: Option<u32>,
    max_items: Option<u64>,
    id_field: String,
}

fn kind_of(op: &Operation, name: &str) -> Option<QueryKind> {
    op.query.iter().find(|q| q.name == name).map(|q| q.kind)
}

fn positive(name: &'static str, value: &str) -> Result<u64, ArgumentError> {
    value
        .parse::<u64>()
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| ArgumentError::new(name, format!("`{value}` is not a positive integer")))
}

impl Paging {
    /// The rules for `operation_id` with the caller's `query` and `options`. Promises
    /// `invalid_argument` for an operation that is not a GET, a page size out of the
    /// operation's range, or a `limit`/`size` in the query that differs from `page_size`.
    pub(crate) fn new(
        operation_id: &str,
        query: &[(String, String)],
        options: &PagesOptions,
    ) -> Result<Self, ArgumentError> {
        let operation = catalog::operation(operation_id)?;
        if operation.method != "GET" {
            return Err(ArgumentError::new(
                "operation_id",
                format!(
                    "{operation_id} is a {} and does not list anything; give a list operation (a GET)",
                    operation.method
                ),
            ));
        }
        let style = if kind_of(operation, "cursor").is_some() {
            Style::Cursor {
                keyset: kind_of(operation, "cursor") == Some(QueryKind::Uuid),
            }
        } else if kind_of(operation, "page").is_some() {
            Style::Numbered
        } else {
            Style::Single
        };
        let (size_name, page_name) = match style {
            Style::Cursor { .. } => (Some("limit"), "cursor"),
            Style::Numbered => (Some("size"), "page"),
            Style::Single => (None, ""),
        };
        let mut base = Vec::new();
        let mut given_size = None;
        let mut start = None;
        for (k, v) in query {
            if Some(k.as_str()) == size_name {
                given_size = Some(positive("query", v)?);
            } else if !page_name.is_empty() && k == page_name {
                start = Some(v.clone());
            } else {
                base.push((k.clone(), v.clone()));
            }
        }
        if let (Some(a), Some(b)) = (given_size, options.page_size) {
            if a != u64::from(b) {
                return Err(ArgumentError::new(
                    "page_size",
                    format!("the query's page size ({a}) and page_size ({b}) differ; give one"),
                ));
            }
        }
        let size_kind = size_name.and_then(|n| kind_of(operation, n));
        let mut size = options
            .page_size
            .map(u64::from)
            .or(given_size)
            .map(|n| u32::try_from(n).unwrap_or(u32::MAX));
        if size == Some(0) {
            return Err(ArgumentError::new("page_size", "must be at least 1"));
        }
        if size_kind == Some(QueryKind::Limit) {
            if let Some(n) = size.filter(|n| *n > LIMIT_MAX) {
                return Err(ArgumentError::new(
                    "page_size",
                    format!("{n} is more than the list takes (1 to {LIMIT_MAX})"),
                ));
            }
            size = size.or(Some(LIMIT_MAX));
        }
        if style == Style::Single && options.page_size.is_some() {
            return Err(ArgumentError::new(
                "page_size",
                format!("{operation_id} takes no page size in the spec: it is read as one page"),
            ));
        }
        let full = match (size, &style, size_kind) {
            (Some(n), _, _) => Some(n as usize),
            (None, Style::Cursor { .. }, Some(QueryKind::Limit)) => Some(CURSOR_DEFAULT_SIZE),
            (None, Style::Numbered, _) => Some(NUMBERED_DEFAULT_SIZE),
            _ => None,
        };
        let (first, start_cursor) = match style {
            Style::Numbered => (
                start
                    .as_deref()
                    .map(|p| positive("query", p))
                    .transpose()?
                    .unwrap_or(1),
                None,
            ),
            _ => (1, start),
        };
        if options.max_pages == Some(0) || options.max_items == Some(0) {
            return Err(ArgumentError::new(
                "max_pages",
                "max_pages and max_items must be at least 1 when given",
            ));
        }
        Ok(Self {
            operation,
            style,
            base,
            size,
            full,
            first,
            start_cursor,
            max_pages: options.max_pages,
            max_items: options.max_items,
            id_field: options.id_field.clone().unwrap_or_else(|| "id".to_owned()),
        })
    }

    /// The query of the page `at` is on.
    pub(crate) fn query(&self, at: &PageCursor) -> Vec<(String, String)> {
        let mut query = Vec::with_capacity(self.base.len() + 2);
        match self.style {
            Style::Cursor { .. } => {
                if let Some(n) = self.size {
                    query.push(("limit".to_owned(), n.to_string()));
                }
                query.extend(self.base.iter().cloned());
                if let Some(c) = at.cursor.as_ref().or(self.start_cursor.as_ref()) {
                    query.push(("cursor".to_owned(), c.clone()));
                }
            }
            Style::Numbered => {
                query.extend(self.base.iter().cloned());
                query.push(("page".to_owned(), (self.first + at.number).to_string()));
                if let Some(n) = self.size {
                    query.push(("size".to_owned(), n.to_string()));
                }
            }
            Style::Single => query.extend(self.base.iter().cloned()),
        }
        query
    }

    /// Reads one page: where its items are and how many to give (`None` when it has no items
    /// array), and what follows. Moves `at` to the next page when one is to be read.
    pub(crate) fn read(&self, at: &mut PageCursor, page: &Value) -> (Option<PageItems>, After) {
        let Some((member, found)) = items_of(page) else {
            let names = ITEM_MEMBERS.join(", ");
            return (
                None,
                After::Fail(
                    "page_unreadable",
                    format!("a page of {} has no array of items (the page itself, or its member {names}); read it with request() to see its shape", self.operation.id),
                ),
            );
        };
        let count = found.len();
        // A page that repeats the one before (a service that ignores the cursor or the page
        // number) gives nothing: its items were given already.
        let digest = digest(found);
        if at.digests.contains(&digest) {
            return (
                Some(PageItems {
                    member: member.map(str::to_owned),
                    take: 0,
                }),
                After::Fail(
                    "list_cursor_repeated",
                    format!(
                        "page {} of {} repeats the page before it: reading on would loop",
                        at.pages + 1,
                        self.operation.id
                    ),
                ),
            );
        }
        at.digests.push(digest);
        let room = self
            .max_items
            .map_or(u64::MAX, |m| m.saturating_sub(at.given));
        let take = (count as u64).min(room);
        at.given += take;
        at.pages += 1;
        let shown = PageItems {
            member: member.map(str::to_owned),
            take,
        };
        let next = match self.style {
            Style::Single => match next_of(page, count, None) {
                Next::End => Next::End,
                _ => Next::Unknown(
                    "the page names more pages, but the spec shows no paging parameter for this list",
                ),
            },
            Style::Numbered => numbered_next(page, count, self.full),
            Style::Cursor { keyset } => match next_of(page, count, self.full) {
                Next::Unknown(why) if keyset && why.starts_with("a full page") => {
                    keyset_cursor(found, &self.id_field).map_or(Next::Unknown(why), Next::Cursor)
                }
                other => other,
            },
        };
        let after = match next {
            // A page the item bound cut: what it did not give is not read.
            _ if take < count as u64 => After::End(PagesEnd::MaxItems),
            Next::End => After::End(PagesEnd::Last),
            _ if self.max_items.is_some_and(|m| at.given >= m) => After::End(PagesEnd::MaxItems),
            _ if self.max_pages.is_some_and(|m| at.pages >= m) => After::End(PagesEnd::MaxPages),
            Next::Unknown(why) => After::Fail(
                "next_page_unknown",
                format!("{why} ({} page {}); the items given so far stand, and the rest cannot be asked for", self.operation.id, at.pages),
            ),
            Next::Cursor(c) if at.cursors.contains(&c) => After::Fail(
                "list_cursor_repeated",
                format!("the list gave a cursor it had given before ({} page {}): reading on would loop", self.operation.id, at.pages),
            ),
            Next::Cursor(c) => {
                at.cursors.push(c.clone());
                at.cursor = Some(c);
                After::Fetch
            }
            Next::Page => {
                at.number += 1;
                After::Fetch
            }
        };
        (Some(shown), after)
    }
}

/// A page's items: the page itself when it is an array (member none), else its first array
/// member among [`ITEM_MEMBERS`].
pub(crate) fn items_of(page: &Value) -> Option<(Option<&'static str>, &Vec<Value>)> {
    if let Value::Array(a) = page {
        return Some((None, a));
    }
    ITEM_MEMBERS
        .iter()
        .find_map(|k| page.get(k).and_then(Value::as_array).map(|a| (Some(*k), a)))
}

/// What a page says of the pages after it.
enum Next {
    End,
    Cursor(String),
    /// The next numbered page.
    Page,
    Unknown(&'static str),
}

fn holders(page: &Value) -> Vec<&serde_json::Map<String, Value>> {
    let mut holders = Vec::new();
    if let Value::Object(o) = page {
        holders.push(o);
        for k in HOLDERS {
            if let Some(Value::Object(inner)) = o.get(k) {
                holders.push(inner);
            }
        }
    }
    holders
}

fn has_more(holders: &[&serde_json::Map<String, Value>]) -> Option<bool> {
    let mut more = None;
    for h in holders {
        for k in ["has_more", "hasMore", "has_next", "hasNext"] {
            if let Some(Value::Bool(b)) = h.get(k) {
                more = Some(*b);
            }
        }
    }
    more
}

/// The `cursor` query parameter of a link (`/exports?cursor=…`, a full URL), else the link
/// itself when it is a bare cursor.
fn cursor_of_link(link: &str) -> String {
    match link.split_once('?') {
        Some((_, query)) => query
            .split('&')
            .find_map(|p| p.strip_prefix("cursor="))
            .map(|c| {
                percent_encoding::percent_decode_str(c.split('#').next().unwrap_or(c))
                    .decode_utf8_lossy()
                    .into_owned()
            })
            .unwrap_or_default(),
        None if link.contains('/') => String::new(),
        None => link.to_owned(),
    }
}

/// What a cursor page says of the pages after it; `full`: the size of a full page, if known.
fn next_of(page: &Value, count: usize, full: Option<usize>) -> Next {
    let holders = holders(page);
    let more = has_more(&holders);
    for h in &holders {
        for k in ["next_cursor", "nextCursor", "next_page_cursor", "next"] {
            let found = match h.get(k) {
                None => continue,
                Some(Value::Null) => String::new(),
                Some(Value::String(v)) if k == "next" => cursor_of_link(v),
                Some(Value::String(v)) => v.clone(),
                Some(Value::Object(link)) => match link.get("href") {
                    Some(Value::String(v)) => cursor_of_link(v),
                    _ => continue,
                },
                Some(_) => continue,
            };
            return if !found.is_empty() {
                Next::Cursor(found)
            } else if more == Some(true) {
                Next::Unknown("the page says there is more but gives no next cursor")
            } else {
                Next::End
            };
        }
    }
    match (more, full) {
        (Some(false), _) => Next::End,
        (Some(true), _) => Next::Unknown("the page says there is more but gives no next cursor"),
        (None, Some(n)) if count < n => Next::End,
        (None, None) => Next::End,
        // A full page that says nothing of the next.
        (None, Some(_)) => Next::Unknown("a full page without a next cursor"),
    }
}

/// What a numbered page says of the pages after it.
fn numbered_next(page: &Value, count: usize, full: Option<usize>) -> Next {
    let holders = holders(page);
    if count == 0 {
        return Next::End;
    }
    if let Some(more) = has_more(&holders) {
        return if more { Next::Page } else { Next::End };
    }
    let number = |h: &serde_json::Map<String, Value>, k: &str| h.get(k).and_then(Value::as_u64);
    for h in &holders {
        if let (Some(current), Some(last)) = (number(h, "current_page"), number(h, "last_page")) {
            return if current >= last {
                Next::End
            } else {
                Next::Page
            };
        }
        for k in ["next_page_url", "next"] {
            match h.get(k) {
                Some(Value::Null) => return Next::End,
                Some(Value::String(s)) if s.is_empty() => return Next::End,
                Some(Value::String(_)) => return Next::Page,
                _ => {}
            }
        }
    }
    match full {
        Some(n) if count < n => Next::End,
        _ => Next::Page,
    }
}

/// The cursor after a full page that names none: its last item's id, when that is a UUID.
fn keyset_cursor(items: &[Value], id_field: &str) -> Option<String> {
    items
        .last()?
        .get(id_field)
        .and_then(Value::as_str)
        .filter(|id| crate::request::is_uuid(id))
        .map(str::to_owned)
}

/// A digest of a page's items (FNV-1a over their JSON), to see a numbered page repeated.
fn digest(items: &[Value]) -> u64 {
    let text = serde_json::to_string(items).unwrap_or_default();
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Every page of a list operation (see the module documentation): ask [`Pages::next`], fetch
/// the query it gives with the caller's own request (path, tenant, user), report the 2xx body
/// to [`Pages::page`], give the items it points at, and ask again, until `Done` or `Fail`.
#[derive(Debug, Clone, PartialEq)]
pub struct Pages {
    paging: Paging,
    at: PageCursor,
    after: After,
}

impl Pages {
    /// A walk over `operation_id`'s pages with the caller's `query` (its `cursor`, `page`,
    /// `limit` or `size` say where to start and the page size). Promises `invalid_argument` for
    /// an unknown operation, one that is not a GET, or bounds out of range.
    pub fn new(
        operation_id: &str,
        query: Vec<(String, String)>,
        options: PagesOptions,
    ) -> Result<Self, ArgumentError> {
        Ok(Self {
            paging: Paging::new(operation_id, &query, &options)?,
            at: PageCursor::default(),
            after: After::Fetch,
        })
    }

    /// The step pending; the same until a page is reported.
    pub fn next(&self) -> PagesStep {
        match &self.after {
            After::Fetch => PagesStep::Fetch {
                query: self.paging.query(&self.at),
            },
            After::End(end) => PagesStep::Done {
                end: *end,
                pages: self.at.pages,
                items: self.at.given,
            },
            After::Fail(code, message) => PagesStep::Fail {
                error: Box::new(RoyaltyKitError::Pagination {
                    code: (*code).to_owned(),
                    detail: message.clone(),
                    http_status: 500,
                }),
            },
        }
    }

    /// The 2xx body of the page fetched: where its items are and how many to give (none when
    /// the page has no items array: the next step is then `Fail`). Promises `invalid_argument`
    /// when no fetch is pending.
    pub fn page(&mut self, body: &[u8]) -> Result<Option<PageItems>, ArgumentError> {
        if self.after != After::Fetch {
            return Err(super::unexpected("a page", "nothing: the walk is over"));
        }
        let Ok(page) = serde_json::from_slice::<Value>(body) else {
            self.after = After::Fail(
                "page_unreadable",
                format!(
                    "a page of {} is not JSON; read it with request() to see what the service sent",
                    self.paging.operation.id
                ),
            );
            return Ok(None);
        };
        let (items, after) = self.paging.read(&mut self.at, &page);
        self.after = after;
        Ok(items)
    }

    /// Pages read so far.
    pub fn pages(&self) -> u32 {
        self.at.pages
    }

    /// Items given so far.
    pub fn items(&self) -> u64 {
        self.at.given
    }
}
