//! `pages` runs: a walk over every page of a list against a model of a list service — cursor
//! lists (a cursor at the top, under `meta`, in a `next` link, or only the last item's id as a
//! keyset), numbered lists (`page`/`size`, with `meta.current_page`/`last_page`, `has_more`, a
//! `next_page_url` or nothing), single-page lists — with random page sizes, item shapes and
//! bounds, and in some runs one fault: a cursor given again, a page that says more without a
//! cursor, a page that is not JSON, a service that ignores the cursor or page number, a single
//! list that names a next page.
//!
//! Invariants: the walk ends, within as many fetches as the list has pages plus two; it never
//! gives an item twice, and what it gives is the list's beginning in order; `Done(last)` gives
//! the whole list; `Done(max_items)` gives exactly the bound; `Done(max_pages)` read exactly the
//! bound; a run with no fault never fails.

use crate::rng::Rng;
use crate::{seen, Violation};
use royaltykit::machine::{Pages, PagesEnd, PagesOptions, PagesStep};
use serde_json::{json, Value};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Style {
    /// A cursor at the top, under `meta`, in a `links.next` link, or none (keyset by id).
    Cursor(u8),
    /// `page`/`size` with 0: meta pages, 1: has_more, 2: next_page_url, 3: nothing.
    Numbered(u8),
    Single,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    RepeatCursor,
    MoreWithoutCursor,
    NotJson,
    IgnorePosition,
    SingleNamesNext,
}

struct Service {
    ids: Vec<String>,
    style: Style,
    /// The size a page holds when the request names none.
    default_size: usize,
    /// The most a page holds, whatever is asked.
    cap: usize,
    /// The member the items are in (None: the page is the array).
    member: Option<&'static str>,
    fault: Option<(Fault, u32)>,
    served: u32,
    /// The cursor given with the page before (for RepeatCursor).
    previous_cursor: Option<String>,
}

impl Service {
    fn answer(&mut self, query: &[(String, String)]) -> String {
        self.served += 1;
        let n = self.served;
        let get = |k: &str| query.iter().find(|(q, _)| q == k).map(|(_, v)| v.clone());
        let fault = self.fault.filter(|(_, at)| *at == n).map(|(f, _)| f);
        if fault == Some(Fault::NotJson) {
            return "<html>upstream busy</html>".to_owned();
        }
        let size = match self.style {
            Style::Cursor(_) => get("limit"),
            Style::Numbered(_) => get("size"),
            Style::Single => None,
        }
        .and_then(|s| s.parse::<usize>().ok())
        .unwrap_or(self.default_size)
        .min(self.cap);
        let ignore = self
            .fault
            .is_some_and(|(f, at)| f == Fault::IgnorePosition && n >= at);
        let start = match self.style {
            Style::Single => 0,
            _ if ignore => 0,
            Style::Cursor(3) => get("cursor").map_or(0, |c| {
                self.ids
                    .iter()
                    .position(|i| *i == c)
                    .map_or(self.ids.len(), |p| p + 1)
            }),
            Style::Cursor(_) => get("cursor").map_or(0, |c| {
                c.trim_start_matches('c').parse::<usize>().unwrap_or(0)
            }),
            Style::Numbered(_) => {
                let page = get("page")
                    .and_then(|p| p.parse::<usize>().ok())
                    .unwrap_or(1);
                (page - 1) * size
            }
        };
        let size = if self.style == Style::Single {
            self.ids.len()
        } else {
            size
        };
        let end = (start + size).min(self.ids.len());
        let start = start.min(end);
        let items: Vec<Value> = self.ids[start..end]
            .iter()
            .map(|id| json!({"id": id, "status": "ready"}))
            .collect();
        let more = end < self.ids.len();
        let mut page = match self.member {
            None => Value::Array(items),
            Some(m) => json!({ m: items }),
        };
        let cursor = if ignore {
            // A fresh cursor each time, over the same first page.
            Some(format!("c{}", size * n as usize))
        } else {
            more.then(|| format!("c{end}"))
        };
        if let Value::Object(o) = &mut page {
            match (self.style, fault) {
                (_, Some(Fault::MoreWithoutCursor)) => {
                    o.insert("has_more".into(), json!(true));
                }
                (Style::Cursor(s), _) => {
                    let given = if fault == Some(Fault::RepeatCursor) {
                        self.previous_cursor.clone().or(cursor.clone())
                    } else {
                        cursor.clone()
                    };
                    match s {
                        0 => {
                            o.insert("next_cursor".into(), json!(given));
                        }
                        1 => {
                            o.insert("meta".into(), json!({ "next_cursor": given }));
                        }
                        2 => {
                            let link = given.as_ref().map(|c| {
                                format!("/api/platform/v1/exports?limit={size}&cursor={c}")
                            });
                            o.insert("links".into(), json!({ "next": link }));
                        }
                        _ => {
                            if fault == Some(Fault::RepeatCursor) {
                                o.insert("next_cursor".into(), json!(given));
                            }
                        }
                    }
                    self.previous_cursor = given.or(self.previous_cursor.take());
                }
                (Style::Numbered(s), _) => {
                    let page_no = get("page")
                        .and_then(|p| p.parse::<usize>().ok())
                        .unwrap_or(1);
                    let last = self.ids.len().div_ceil(size).max(1);
                    match s {
                        0 => {
                            o.insert("meta".into(), json!({"current_page": if ignore { 1 } else { page_no }, "last_page": last}));
                        }
                        1 => {
                            o.insert("has_more".into(), json!(more || ignore));
                        }
                        2 => {
                            o.insert(
                                "next_page_url".into(),
                                json!((more || ignore).then(|| format!(
                                    "/api/v1/subscriptions?page={}",
                                    page_no + 1
                                ))),
                            );
                        }
                        _ => {}
                    }
                }
                (Style::Single, Some(Fault::SingleNamesNext)) => {
                    o.insert("next_cursor".into(), json!("more"));
                }
                (Style::Single, _) => {}
            }
        }
        page.to_string()
    }
}

/// One `pages` run.
pub fn run(seed: u64) -> Result<(), Violation> {
    let mut rng = Rng::new(seed);
    let count = if rng.chance(0.2) {
        rng.range(0, 3) as usize
    } else {
        rng.range(0, 260) as usize
    };
    let style = match rng.range(0, 10) {
        0..=4 => Style::Cursor(rng.range(0, 4) as u8),
        5..=8 => Style::Numbered(rng.range(0, 4) as u8),
        _ => Style::Single,
    };
    let (operation, base, default_size, limit_max) = match style {
        Style::Cursor(3) => ("listPlatformExports", vec![], 50, 100),
        Style::Cursor(_) => (
            "listPublishedObservedRates",
            vec![
                ("currency".to_owned(), "EUR".to_owned()),
                ("currency_basis".to_owned(), "reporting".to_owned()),
                ("basis".to_owned(), "net".to_owned()),
                ("dimension".to_owned(), "territory".to_owned()),
            ],
            50,
            100,
        ),
        Style::Numbered(_) => ("listEnterpriseSubscriptions", vec![], 10, 60),
        Style::Single => ("listEnterpriseReleases", vec![], 0, 0),
    };
    let ids: Vec<String> = (0..count).map(|_| rng.uuid()).collect();
    let page_size =
        (style != Style::Single && rng.chance(0.7)).then(|| rng.range(1, limit_max + 1) as u32);
    let options = PagesOptions {
        max_pages: rng.chance(0.2).then(|| rng.range(1, 7) as u32),
        max_items: rng.chance(0.25).then(|| rng.range(1, count as u64 + 6)),
        page_size,
        id_field: None,
    };
    // The service answers a full page at most: its cap is at least what is asked, except
    // (keyset lists) where a smaller cap would only make pages shorter than asked, which ends
    // the walk early by the rule "a short page is the last".
    let cap = 200;
    let fault = if rng.chance(0.35) {
        let f = match style {
            Style::Single => Fault::SingleNamesNext,
            Style::Numbered(_) => *rng.pick(&[
                Fault::MoreWithoutCursor,
                Fault::NotJson,
                Fault::IgnorePosition,
            ]),
            Style::Cursor(3) => *rng.pick(&[
                Fault::MoreWithoutCursor,
                Fault::NotJson,
                Fault::IgnorePosition,
            ]),
            Style::Cursor(_) => *rng.pick(&[
                Fault::RepeatCursor,
                Fault::MoreWithoutCursor,
                Fault::NotJson,
                Fault::IgnorePosition,
            ]),
        };
        Some((f, rng.range(1, 5) as u32))
    } else {
        None
    };
    let member = match rng.range(0, 4) {
        0 if !matches!(style, Style::Single) || fault.is_none() => None,
        1 => Some("items"),
        2 => Some("results"),
        _ => Some("data"),
    };
    // A bare array carries no paging members: only keyset and numbered-by-size lists page
    // without them.
    let member = match (member, style) {
        (None, Style::Cursor(3) | Style::Numbered(3)) if fault.is_none() => None,
        (None, _) => Some("data"),
        (m, _) => m,
    };
    let mut service = Service {
        ids: ids.clone(),
        style,
        default_size,
        cap,
        member,
        fault,
        served: 0,
        previous_cursor: None,
    };
    let describe = |detail: String| {
        format!("{detail} (style {style:?}, {count} items, page size {page_size:?}, {options:?}, fault {fault:?}, items in {member:?})")
    };
    let mut walk = Pages::new(operation, base, options.clone())
        .map_err(|e| Violation::new("a walk starts", describe(e.to_string())))?;
    let page_len = page_size.map_or(default_size.max(1), |s| s as usize).max(1);
    let fetch_bound = count / page_len + 3 + usize::from(fault.is_some());
    let mut given: Vec<String> = Vec::new();
    let mut fetches = 0usize;
    let end = loop {
        match walk.next() {
            PagesStep::Fetch { query } => {
                fetches += 1;
                if fetches > fetch_bound {
                    return Err(Violation::new(
                        "the walk ends",
                        describe(format!("{fetches} fetches for {count} items")),
                    ));
                }
                let body = service.answer(&query);
                let Some(items) = walk
                    .page(body.as_bytes())
                    .map_err(|e| Violation::new("a page is taken", describe(e.to_string())))?
                else {
                    continue;
                };
                let page: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
                let list = match &items.member {
                    None => page.as_array().cloned().unwrap_or_default(),
                    Some(m) => page[m.as_str()].as_array().cloned().unwrap_or_default(),
                };
                for item in list.iter().take(items.take as usize) {
                    given.push(item["id"].as_str().unwrap_or_default().to_owned());
                }
            }
            PagesStep::Done { end, pages, items } => {
                if items as usize != given.len() {
                    return Err(Violation::new(
                        "Done counts what was given",
                        describe(format!("{items} counted, {} given", given.len())),
                    ));
                }
                break Ok((end, pages));
            }
            PagesStep::Fail { error } => break Err(error.code().to_owned()),
        }
    };
    let mut unique = given.clone();
    unique.sort();
    unique.dedup();
    if unique.len() != given.len() {
        return Err(Violation::new(
            "no item is given twice",
            describe(format!("{} given, {} distinct", given.len(), unique.len())),
        ));
    }
    if given.len() > ids.len() || given[..] != ids[..given.len()] {
        return Err(Violation::new(
            "what is given is the list's beginning, in order",
            describe(format!("{} given", given.len())),
        ));
    }
    match end {
        Ok((PagesEnd::Last, pages)) => {
            seen::count("walks read to the end", 1);
            if pages >= 2 {
                seen::count("walks of 2+ pages", 1);
            }
            if given.len() != ids.len() {
                return Err(Violation::new(
                    "Done(last) gives the whole list",
                    describe(format!("{} of {} given", given.len(), ids.len())),
                ));
            }
        }
        Ok((PagesEnd::MaxItems, _)) => {
            seen::count("walks stopped by a bound", 1);
            if Some(given.len() as u64) != options.max_items {
                return Err(Violation::new(
                    "Done(max_items) gives exactly the bound",
                    describe(format!("{} given", given.len())),
                ));
            }
        }
        Ok((PagesEnd::MaxPages, pages)) => {
            seen::count("walks stopped by a bound", 1);
            if Some(pages) != options.max_pages {
                return Err(Violation::new(
                    "Done(max_pages) reads exactly the bound",
                    describe(format!("{pages} pages read")),
                ));
            }
        }
        Err(code) => {
            seen::count("walks failed on a fault", 1);
            if fault.is_none() {
                return Err(Violation::new(
                    "a run with no fault never fails",
                    describe(format!("failed {code} after {} items", given.len())),
                ));
            }
        }
    }
    Ok(())
}
