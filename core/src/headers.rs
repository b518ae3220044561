//! Read access to HTTP headers in whatever shape the host has.

use std::collections::{BTreeMap, HashMap};

/// Every response header the library reads (retry decisions, error parsing, token checks,
/// lifecycle notices, export downloads); bindings may pass only these.
pub const RESPONSE_HEADER_NAMES: [&str; 10] = [
    "Retry-After",
    // the service's clock, against which a Retry-After date is also counted
    "Date",
    "Content-Type",
    "Content-Length",
    "Cache-Control",
    "Deprecation",
    "Sunset",
    "Link",
    "Content-Range",
    // a redirect's target: its origin is named in the error (redirects are never followed)
    "Location",
];

/// Read access to request headers. Name lookup is ASCII case-insensitive; a header may have
/// several values (repeated header lines), reported in order.
///
/// Implemented for slices and vectors of `(name, value)` pairs and for `HashMap`/`BTreeMap`
/// of name to value; bindings implement it for their own shapes without copying.
pub trait HeaderMap {
    /// Calls `f` with each value of header `name` (any case), in order.
    fn for_each_value<'a>(&'a self, name: &str, f: &mut dyn FnMut(&'a str));
}

impl<N: AsRef<str>, V: AsRef<str>> HeaderMap for [(N, V)] {
    fn for_each_value<'a>(&'a self, name: &str, f: &mut dyn FnMut(&'a str)) {
        for (n, v) in self {
            if n.as_ref().eq_ignore_ascii_case(name) {
                f(v.as_ref());
            }
        }
    }
}

impl<N: AsRef<str>, V: AsRef<str>> HeaderMap for Vec<(N, V)> {
    fn for_each_value<'a>(&'a self, name: &str, f: &mut dyn FnMut(&'a str)) {
        self.as_slice().for_each_value(name, f);
    }
}

impl<N: AsRef<str>, V: AsRef<str>, const K: usize> HeaderMap for [(N, V); K] {
    fn for_each_value<'a>(&'a self, name: &str, f: &mut dyn FnMut(&'a str)) {
        self.as_slice().for_each_value(name, f);
    }
}

impl<N: AsRef<str>, V: AsRef<str>, S> HeaderMap for HashMap<N, V, S> {
    fn for_each_value<'a>(&'a self, name: &str, f: &mut dyn FnMut(&'a str)) {
        for (n, v) in self {
            if n.as_ref().eq_ignore_ascii_case(name) {
                f(v.as_ref());
            }
        }
    }
}

impl<N: AsRef<str>, V: AsRef<str>> HeaderMap for BTreeMap<N, V> {
    fn for_each_value<'a>(&'a self, name: &str, f: &mut dyn FnMut(&'a str)) {
        for (n, v) in self {
            if n.as_ref().eq_ignore_ascii_case(name) {
                f(v.as_ref());
            }
        }
    }
}

/// The first non-empty value of header `name`, trimmed of optional whitespace.
pub(crate) fn first_value<'a, H: HeaderMap + ?Sized>(
    headers: &'a H,
    name: &str,
) -> Option<&'a str> {
    let mut found = None;
    headers.for_each_value(name, &mut |v| {
        let v = v.trim_matches([' ', '\t']);
        if found.is_none() && !v.is_empty() {
            found = Some(v);
        }
    });
    found
}
