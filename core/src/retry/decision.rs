//! Retry decisions from both specs' rules.
//!
//! Sources: enterprise API "Errors → Client behaviour by status" (reads retry on 408, 429 and
//! 5xx with backoff and jitter; 429 waits at least `Retry-After`; a timed-out create, submit,
//! checkout or add-on action is reconciled first; a failed upload is retried with the same file
//! or chunk) and "Retry safety" (reads and token exchange may be retried; updates only when safe
//! to apply again; creates, submit, checkout, top-up and add-on actions never blindly; only
//! webhook create/update/delete take an idempotency key); reporting API "Errors" (409 state or
//! idempotency conflict; 503 dependency unavailable on token exchange, analytics and exports)
//! and `idem` operations.

use super::backoff::{check_random, BackoffPolicy};
use super::retry_after::{retry_after_from_headers, RetryAfter};
use crate::text::Num;
use crate::{ArgumentError, HeaderMap};

string_enum! {
    /// How safe an operation is to repeat. The operation catalog assigns one to every operation.
    pub enum RetryClass as "retry_class" {
        /// A read (GET): always safe to repeat.
        Read = "read",
        /// A token exchange: safe to repeat (enterprise "Retry safety").
        TokenExchange = "token_exchange",
        /// A write that takes an idempotency key (reporting `idem` operations, enterprise webhook
        /// create/update/delete): safe to repeat with the same key only when the key was
        /// actually sent ([`RetryState::idempotency_key_sent`]); without it, a create.
        IdempotentWrite = "idempotent_write",
        /// An update that is safe to apply again (e.g. a full replacement).
        SafeUpdate = "safe_update",
        /// A create without an idempotency key: never repeated blindly.
        UnsafeCreate = "unsafe_create",
        /// A webhook secret rotation: its new secret is shown once, so a lost answer cannot be
        /// looked up; never repeated blindly.
        SecretRotation = "secret_rotation",
        /// A release submit.
        Submit = "submit",
        /// A checkout creation.
        Checkout = "checkout",
        /// An add-on purchase, install, activate, deactivate or uninstall.
        AddonAction = "addon_action",
        /// A file or chunk upload.
        Upload = "upload",
    }
}

impl RetryClass {
    /// What to check before repeating, for classes that must not be repeated blindly.
    fn reconcile(self) -> Option<Reconcile> {
        match self {
            Self::UnsafeCreate => Some(Reconcile::LookupBySentData),
            Self::SecretRotation => Some(Reconcile::RotateAgain),
            Self::Submit => Some(Reconcile::FetchReleaseReviewState),
            Self::Checkout => Some(Reconcile::CheckCheckoutState),
            Self::AddonAction => Some(Reconcile::ReadAddonStatus),
            _ => None,
        }
    }
}

string_enum! {
    /// A failure below HTTP.
    pub enum TransportFailure as "transport" {
        /// No response in time: the request may have been received and applied.
        Timeout = "timeout",
        /// The connection could not be established: nothing was sent.
        ConnectFailed = "connect_failed",
        /// The connection broke after the request was sent: it may have been applied.
        ConnectionLost = "connection_lost",
    }
}

/// What happened to the attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// An HTTP response.
    Response {
        /// The status code (100–599).
        status: u16,
        /// Its `Retry-After`, if it had a usable one.
        retry_after: Option<RetryAfter>,
    },
    /// No HTTP response.
    Transport(TransportFailure),
}

impl Outcome {
    /// A response outcome, reading `Retry-After` from the headers (the whole wait).
    /// Promises `invalid_argument` for a status outside 100–599.
    pub fn response<H: HeaderMap + ?Sized>(
        status: i64,
        headers: &H,
        now: i64,
    ) -> Result<Self, ArgumentError> {
        let status = u16::try_from(status)
            .ok()
            .filter(|s| (100..=599).contains(s))
            .ok_or_else(|| {
                ArgumentError::new("status", format!("must be 100 to 599, got {status}"))
            })?;
        Ok(Self::Response {
            status,
            retry_after: retry_after_from_headers(headers, now),
        })
    }
}

impl Outcome {
    /// The outcome from a record's optional members: exactly one of `status` (with the response
    /// headers) and `transport` (`timeout`, `connect_failed`, `connection_lost`). Promises
    /// `invalid_argument` for both, neither, or an unknown or out-of-range value.
    fn of<H: HeaderMap + ?Sized>(
        status: Option<i64>,
        headers: &H,
        transport: Option<TransportFailure>,
        now: i64,
    ) -> Result<Self, ArgumentError> {
        match (status, transport) {
            (Some(s), None) => Self::response(s, headers, now),
            (None, Some(t)) => Ok(Self::Transport(t)),
            (Some(_), Some(_)) => Err(ArgumentError::new(
                "status",
                "give either an HTTP status or a transport failure, not both",
            )),
            (None, None) => Err(ArgumentError::new(
                "status",
                "give an HTTP status (the response) or a transport failure (no response)",
            )),
        }
    }
}

/// Where the caller is in its retry loop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryState {
    /// Attempts made so far, the failed one included (1 after the first attempt).
    pub attempt: i64,
    /// Seconds since the first attempt started.
    pub elapsed_seconds: f64,
    /// Whether the token was already refreshed for this request (401 refreshes once).
    pub token_refreshed: bool,
    /// A random value in `[0, 1)` for jitter.
    pub random: f64,
    /// Whether the request carried its idempotency key on the wire
    /// ([`crate::request::RequestDescriptor::idempotency_key_sent`]). An `idempotent_write`
    /// without it may have been applied and must not be repeated blindly (reporting `idem`
    /// operations; the spec does not show the key's parameter name).
    pub idempotency_key_sent: bool,
}

/// Bounds of a retry loop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryLimits {
    max_attempts: i64,
    max_elapsed_seconds: f64,
}

/// Default attempt limit (the first attempt and four retries: 2 s, 5 s, 15 s, 30–60 s).
pub const DEFAULT_MAX_ATTEMPTS: i64 = 5;
/// Default time budget of a retry loop, in seconds.
pub const DEFAULT_MAX_ELAPSED_SECONDS: f64 = 300.0;

impl Default for RetryLimits {
    fn default() -> Self {
        Self {
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            max_elapsed_seconds: DEFAULT_MAX_ELAPSED_SECONDS,
        }
    }
}

impl RetryLimits {
    /// [`RetryLimits::new`] with the defaults for values not given.
    pub fn with_defaults(
        max_attempts: Option<i64>,
        max_elapsed_seconds: Option<f64>,
    ) -> Result<Self, ArgumentError> {
        Self::new(
            max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS),
            max_elapsed_seconds.unwrap_or(DEFAULT_MAX_ELAPSED_SECONDS),
        )
    }

    /// Limits: at most `max_attempts` attempts (1 to 100) and no retry that would start after
    /// `max_elapsed_seconds` (finite, positive). Promises `invalid_argument` otherwise.
    pub fn new(max_attempts: i64, max_elapsed_seconds: f64) -> Result<Self, ArgumentError> {
        if !(1..=100).contains(&max_attempts) {
            return Err(ArgumentError::new(
                "max_attempts",
                format!("must be 1 to 100, got {max_attempts}"),
            ));
        }
        if !(max_elapsed_seconds.is_finite() && max_elapsed_seconds > 0.0) {
            return Err(ArgumentError::new(
                "max_elapsed_seconds",
                "must be a positive number of seconds",
            ));
        }
        Ok(Self {
            max_attempts,
            max_elapsed_seconds,
        })
    }
}

string_enum! {
    /// What to do next.
    pub enum RetryAction as "action" {
        /// Send the same request again after `delay_seconds` (same idempotency key, same file).
        Retry = "retry",
        /// Do not send it again.
        Stop = "stop",
        /// The request may have been applied: check its effect first (see [`Reconcile`]).
        Reconcile = "reconcile",
        /// Obtain a new token, then send the request again at once.
        RefreshToken = "refresh_token",
    }
}

string_enum! {
    /// What to check before repeating an operation that must not be repeated blindly.
    pub enum Reconcile as "reconcile" {
        /// Look up or search by the data already sent before creating again.
        LookupBySentData = "lookup_by_sent_data",
        /// Fetch the release and its review state before submitting again.
        FetchReleaseReviewState = "fetch_release_review_state",
        /// Check whether a checkout id was returned or the order state changed.
        CheckCheckoutState = "check_checkout_state",
        /// Read the add-on's status before repeating.
        ReadAddonStatus = "read_addon_status",
        /// A lost secret rotation: its secret was shown once; rotate again at once.
        RotateAgain = "rotate_again",
    }
}

impl Reconcile {
    fn explain(self) -> &'static str {
        match self {
            Self::LookupBySentData => "look up or search by the data already sent before creating again",
            Self::FetchReleaseReviewState => "fetch the release and its review state before submitting again",
            Self::CheckCheckoutState => "check whether a checkout_id was returned or the order state changed before a new checkout",
            Self::ReadAddonStatus => "read the add-on status before repeating",
            Self::RotateAgain => "the new secret is shown only once and its answer was lost, so it cannot be looked up: rotate again at once and use the secret that rotation returns, keeping the current one until then (for five minutes after the lost rotation, deliveries still carry the current secret's signature too)",
        }
    }
}

record! {
/// A retry decision.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryDecision {
    /// What to do.
    pub action: RetryAction,
    /// Seconds to wait before retrying; for a `stop` with rule `retry_after_exceeds_budget`, the
    /// wait the server asked for (`Retry-After`, never shortened); otherwise 0.
    pub delay_seconds: f64,
    /// A stable identifier of the rule that decided (e.g. `server_error_retry`).
    pub rule: String,
    /// A sentence naming the rule and its source, for logs and people.
    pub reason: String,
    /// What to check first, when the action is `reconcile`.
    pub reconcile: Option<Reconcile>,
}
}

/// The question [`decide_retry`] answers, as the one record every binding fills in: the
/// attempt's outcome (a response `status` with its `headers`, or a `transport` failure: exactly
/// one of the two) and where the caller's loop is. `random` and `now` are the host's when absent
/// ([`RetryInput::decide`] takes them); absent limits are [`DEFAULT_MAX_ATTEMPTS`] and
/// [`DEFAULT_MAX_ELAPSED_SECONDS`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Record))]
pub struct RetryInput {
    /// How safe the operation is to repeat (the catalog's `retry_class`).
    pub retry_class: RetryClass,
    /// Attempts made so far, the failed one included.
    pub attempt: i64,
    /// The response status.
    #[cfg_attr(feature = "uniffi", uniffi(default = None))]
    pub status: Option<i64>,
    /// The response headers (`Retry-After` is read).
    #[cfg_attr(feature = "uniffi", uniffi(default))]
    pub headers: std::collections::HashMap<String, String>,
    /// The failure below HTTP, when there was no response.
    #[cfg_attr(feature = "uniffi", uniffi(default = None))]
    pub transport: Option<TransportFailure>,
    /// Seconds since the first attempt.
    #[cfg_attr(feature = "uniffi", uniffi(default = 0.0))]
    pub elapsed_seconds: f64,
    /// The token was already refreshed for this request.
    #[cfg_attr(feature = "uniffi", uniffi(default = false))]
    pub token_refreshed: bool,
    /// The request carried its idempotency key (`RequestDescriptor::idempotency_key_sent`); an
    /// `idempotent_write` without it is reconciled, never repeated blindly.
    #[cfg_attr(feature = "uniffi", uniffi(default = false))]
    pub idempotency_key_sent: bool,
    /// In `[0, 1)`, for jitter; the host's RNG when absent.
    #[cfg_attr(feature = "uniffi", uniffi(default = None))]
    pub random: Option<f64>,
    /// Unix seconds; the host's clock when absent.
    #[cfg_attr(feature = "uniffi", uniffi(default = None))]
    pub now: Option<i64>,
    /// The core's default when absent.
    #[cfg_attr(feature = "uniffi", uniffi(default = None))]
    pub max_attempts: Option<i64>,
    /// The core's default when absent.
    #[cfg_attr(feature = "uniffi", uniffi(default = None))]
    pub max_elapsed_seconds: Option<f64>,
}

impl RetryInput {
    /// A question about `retry_class` after attempt `attempt`, everything else absent.
    pub fn new(retry_class: RetryClass, attempt: i64) -> Self {
        Self {
            retry_class,
            attempt,
            status: None,
            headers: std::collections::HashMap::new(),
            transport: None,
            elapsed_seconds: 0.0,
            token_refreshed: false,
            idempotency_key_sent: false,
            random: None,
            now: None,
            max_attempts: None,
            max_elapsed_seconds: None,
        }
    }

    /// [`decide_retry`] with the default backoff policy, the response `headers` (the record's
    /// own, or a binding's header shape), and the host's `random` and `now` standing in for the
    /// record's when it has none. Promises the same as [`decide_retry`], and
    /// `invalid_argument` for both or neither outcome.
    pub fn decide<H: HeaderMap + ?Sized>(
        &self,
        headers: &H,
        random: f64,
        now: i64,
    ) -> Result<RetryDecision, ArgumentError> {
        let now = self.now.unwrap_or(now);
        let outcome = Outcome::of(self.status, headers, self.transport, now)?;
        let state = RetryState {
            attempt: self.attempt,
            elapsed_seconds: self.elapsed_seconds,
            token_refreshed: self.token_refreshed,
            random: self.random.unwrap_or(random),
            idempotency_key_sent: self.idempotency_key_sent,
        };
        let limits = RetryLimits::with_defaults(self.max_attempts, self.max_elapsed_seconds)?;
        decide_retry(
            self.retry_class,
            outcome,
            state,
            limits,
            &BackoffPolicy::default(),
        )
    }
}

/// Classes whose request may be repeated after it may have been applied.
fn repeatable(class: RetryClass) -> bool {
    class.reconcile().is_none()
}

/// Decides what to do after an attempt of an operation of class `class` ended with `outcome`.
/// Promises: never `retry` for a class that must not be repeated blindly once the request may
/// have been received (timeout, lost connection, 408, 5xx) — those get `reconcile`; `connect_failed`
/// and 429 (nothing was applied) may retry for every class; a 206 (partial content, which
/// neither API serves) is never a success: reads retry it, other classes stop; `retry` only within `limits`;
/// `invalid_argument` for an attempt below 1, a negative or non-finite elapsed time, or a random
/// value outside `[0, 1)`.
pub fn decide_retry(
    class: RetryClass,
    outcome: Outcome,
    state: RetryState,
    limits: RetryLimits,
    policy: &BackoffPolicy,
) -> Result<RetryDecision, ArgumentError> {
    if state.attempt < 1 {
        return Err(ArgumentError::new(
            "attempt",
            format!(
                "must be 1 or more (attempts made, the failed one included), got {}",
                state.attempt
            ),
        ));
    }
    if !(state.elapsed_seconds.is_finite() && state.elapsed_seconds >= 0.0) {
        return Err(ArgumentError::new(
            "elapsed_seconds",
            "must be a finite number >= 0",
        ));
    }
    check_random(state.random)?;
    let backoff = policy.delay(state.attempt, state.random)?;
    // An idempotent write sent without its key is a create: the server cannot recognise a repeat.
    let keyless = class == RetryClass::IdempotentWrite && !state.idempotency_key_sent;
    let class = if keyless {
        RetryClass::UnsafeCreate
    } else {
        class
    };
    let c = if keyless {
        "idempotent_write (sent without its idempotency key, so a create)"
    } else {
        class.as_str()
    };
    let stop = |rule: &str, reason: String| RetryDecision {
        action: RetryAction::Stop,
        delay_seconds: 0.0,
        rule: rule.to_owned(),
        reason,
        reconcile: None,
    };
    let reconcile = |rule: &str, what: String| {
        let r = class.reconcile();
        RetryDecision {
            action: RetryAction::Reconcile,
            delay_seconds: 0.0,
            rule: rule.to_owned(),
            reason: format!(
                "{what}: the request may have been applied and a {c} operation must not be repeated blindly; {}",
                r.map_or("", Reconcile::explain)
            ),
            reconcile: r,
        }
    };
    let retry = |rule: &str, delay: f64, reason: String| RetryDecision {
        action: RetryAction::Retry,
        delay_seconds: delay,
        rule: rule.to_owned(),
        reason,
        reconcile: None,
    };

    let decision = match outcome {
        Outcome::Transport(TransportFailure::ConnectFailed) => retry(
            "connect_failed_retry",
            backoff,
            "the connection could not be established, so nothing was sent: safe to retry for every operation, with backoff".to_owned(),
        ),
        Outcome::Transport(t) if repeatable(class) => retry(
            "maybe_sent_retry",
            backoff,
            format!(
                "{}: a {c} operation is safe to send again{}, with backoff and jitter",
                t.as_str(),
                same_what(class)
            ),
        ),
        Outcome::Transport(t) => reconcile("maybe_sent_reconcile", format!("{} on a {c} operation", t.as_str())),
        Outcome::Response { status, retry_after } => match status {
            // 206: neither API serves partial content (no request sends Range), so the body is
            // not the resource: a read is sent again, anything else stops.
            206 if repeatable(class) => retry(
                "partial_content_retry",
                backoff,
                format!("206: partial content, which neither API serves (an export is one complete artifact); a {c} operation is safe to send again, without Range, with backoff"),
            ),
            206 => stop(
                "partial_content",
                format!("206: partial content, which neither API serves, on a {c} operation: not a success, and not repeated blindly"),
            ),
            100..=299 => stop("success", format!("status {status} is not a failure")),
            300..=399 => stop(
                "redirect",
                format!("status {status}: redirects are not followed; the operation's path or base URL is wrong"),
            ),
            401 if class == RetryClass::TokenExchange => stop(
                "token_exchange_unauthorized",
                "401 on the token exchange: the credentials are invalid; retrying cannot help".to_owned(),
            ),
            401 if !state.token_refreshed => RetryDecision {
                action: RetryAction::RefreshToken,
                delay_seconds: 0.0,
                rule: "unauthorized_refresh".to_owned(),
                reason: "401: the token is missing, expired or revoked; obtain a new one and send the request again once".to_owned(),
                reconcile: None,
            },
            401 => stop(
                "unauthorized_after_refresh",
                "401 again after refreshing the token: the credentials or tenant binding are wrong".to_owned(),
            ),
            429 => match retry_after {
                Some(ra) => retry(
                    "rate_limited_retry_after",
                    ra.seconds as f64,
                    format!(
                        "429: rate limited; wait the Retry-After of {} s before sending the same request again, never less",
                        ra.seconds
                    ),
                ),
                None => retry(
                    "rate_limited_backoff",
                    backoff,
                    "429: rate limited without Retry-After; back off before sending the same request again".to_owned(),
                ),
            },
            409 => stop(
                "conflict",
                format!("409: state or idempotency conflict on a {c} operation; read the current state instead of repeating"),
            ),
            408 | 500..=599 if repeatable(class) => {
                let delay = retry_after.map_or(backoff, |ra| backoff.max(ra.seconds as f64));
                retry(
                    if status == 408 { "request_timeout_retry" } else { "server_error_retry" },
                    delay,
                    format!(
                        "{status}: a temporary failure; a {c} operation is safe to send again{}, with exponential backoff and jitter (enterprise: reads retry on 408, 429, 5xx; reporting: 503 dependency unavailable)",
                        same_what(class)
                    ),
                )
            }
            408 | 500..=599 => reconcile(
                if status == 408 { "request_timeout_reconcile" } else { "server_error_reconcile" },
                format!("{status} on a {c} operation"),
            ),
            _ => stop(
                "client_error",
                format!("{status}: the request itself was refused; sending it again unchanged cannot succeed"),
            ),
        },
    };

    if decision.action != RetryAction::Retry {
        return Ok(decision);
    }
    if state.attempt >= limits.max_attempts {
        return Ok(stop(
            "attempts_exhausted",
            format!(
                "would retry ({}), but {} of {} attempts are used",
                decision.rule, state.attempt, limits.max_attempts
            ),
        ));
    }
    let server_wait = match outcome {
        Outcome::Response {
            retry_after: Some(ra),
            ..
        } => ra.seconds as f64,
        _ => 0.0,
    };
    if state.elapsed_seconds + decision.delay_seconds > limits.max_elapsed_seconds
        && server_wait >= decision.delay_seconds
    {
        // Never shortened: stop, with the wait the server asked for.
        return Ok(RetryDecision {
            action: RetryAction::Stop,
            delay_seconds: server_wait,
            rule: "retry_after_exceeds_budget".to_owned(),
            reason: format!(
                "would retry ({}), but the server asked to wait at least {} s (Retry-After), which passes the {} s budget ({} s elapsed); wait that long before a new attempt, or raise the budget (a Retry-After is never shortened)",
                decision.rule, Num(server_wait), Num(limits.max_elapsed_seconds), Num(state.elapsed_seconds)
            ),
            reconcile: None,
        });
    }
    if state.elapsed_seconds + decision.delay_seconds > limits.max_elapsed_seconds {
        return Ok(stop(
            "time_budget_exhausted",
            format!(
                "would retry ({}) after {} s, but that passes the {} s budget ({} s elapsed)",
                decision.rule,
                Num(decision.delay_seconds),
                Num(limits.max_elapsed_seconds),
                Num(state.elapsed_seconds)
            ),
        ));
    }
    Ok(decision)
}

fn same_what(class: RetryClass) -> &'static str {
    match class {
        RetryClass::IdempotentWrite => " with the same idempotency key",
        RetryClass::Upload => " with the same file or chunk",
        _ => "",
    }
}
