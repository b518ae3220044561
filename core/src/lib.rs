//! royaltykit: the pure core for two HTTP services — the tenant reporting API and the
//! enterprise organization API.
//!
//! This crate does no I/O: no sockets, no files, no clock and no randomness. Time enters as a
//! `now` argument (Unix seconds) and randomness as a caller-supplied value or seed, so every
//! result is reproducible from its inputs. The Node, Python and Kotlin packages wrap this crate
//! thinly; every rule of the APIs lives here.
//!
//! Capabilities:
//! - [`webhook`]: verify and sign enterprise outbound webhook deliveries, secret rotation,
//!   event payloads.
//! - [`dedup`]: delivery, content, event and idempotency keys, and a bounded in-memory
//!   [`dedup::DedupWindow`].
//! - [`receiver`]: a webhook receiver's rules (keys to claim, what claims mean, statuses),
//!   shared by every framework integration.
//! - [`machine`]: protocol machines (sans-I/O): a webhook [`machine::WebhookReceipt`], an API
//!   [`machine::Call`] and a reporting [`machine::ExportJob`].
//! - [`retry`]: the server's webhook delivery schedule, client backoff, `Retry-After`, retry
//!   decisions from both specs' rules, and request-rate budgets.
#![forbid(unsafe_code)]
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

#[macro_use]
mod macros;

pub mod api_error;
mod argument;
mod bearer;
pub mod catalog;
pub mod dedup;
mod error;
pub mod export;
mod headers;
mod keyhash;
pub mod machine;
pub mod receiver;
pub mod request;
pub mod retry;
mod text;
mod timestamp;
pub mod token;
pub mod webhook;

/// The Rust guide's examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/rust.md")]
struct GuideExamples;

pub use argument::{integer_from_f64, seconds_from_f64, ArgumentError};
pub use error::{Error, ErrorFamily, RoyaltyKitError};
pub use headers::{HeaderMap, RESPONSE_HEADER_NAMES};
pub use timestamp::parse_timestamp;

#[cfg(feature = "uniffi")]
uniffi::setup_scaffolding!("royaltykit");
