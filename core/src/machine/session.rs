//! [`Session`]: the state the calls of one API client share — the bearer token, when to
//! refresh it, the one token exchange in flight, and the request-rate budget (DESIGN
//! "Sessions").
//!
//! Calls borrow the session at each step ([`super::Call::next_in`],
//! [`super::ExportJob::next_in`]); it decides, for every call that needs a token:
//!
//! - a token that is not due is handed out;
//! - a token is handed out at least once to every call that waited for it, whatever its
//!   lifetime (a token that is due at once, `expires_in: 1` or an `expires_at` behind this
//!   clock, is used once and then refreshed on 401: the call ends);
//! - otherwise one call (the first to ask) is told to refresh (`RefreshToken`), and every other
//!   call waits for that exchange (`AwaitToken`): one exchange in flight per session;
//! - an exchange that failed fails the calls that waited for it (they do not each try again:
//!   the token exchange has "tighter credential and source limits");
//! - a token the server refused (401) is dropped for every call, once.
//!
//! The host reports the exchange's outcome to the session ([`Session::store_token`],
//! [`Session::exchange_failed`], [`Session::abandon_exchange`]) and wakes the calls waiting on
//! it (each host's own primitive: a condition, an event, a promise); a call that is never woken
//! asks again after the `AwaitToken`'s seconds, when an abandoned exchange's lease has run out.

use crate::bearer::BearerToken;
use crate::retry::RateBudget;

/// How long an exchange in flight holds the session before another call may start one: the
/// longest an exchange's own retries take ([`crate::retry::DEFAULT_MAX_ELAPSED_SECONDS`]) and
/// one more timeout. A host reports every exchange's end, so this only matters when a host
/// dies mid-exchange.
pub const EXCHANGE_LEASE_SECONDS: f64 = crate::retry::DEFAULT_MAX_ELAPSED_SECONDS + 30.0;

/// The token state: what a [`Session`] holds, and what a call or job standing alone keeps for
/// itself.
#[derive(Clone, Default)]
pub(crate) struct TokenSlot {
    /// The token, with when to refresh it and its generation.
    token: Option<(BearerToken, Option<f64>, u64)>,
    /// Generation of the last token stored (0: none yet).
    generation: u64,
    /// Changes whenever a waiting call has something new to look at: a token stored, an
    /// exchange failed or abandoned.
    version: u64,
    /// Since when an exchange is in flight.
    exchange_since: Option<f64>,
    /// The version at which the last exchange failed, and why.
    failed: Option<(u64, String)>,
    /// Exchanges started.
    exchanges: u64,
    /// The last token dropped because the server refused it (401), until the next is stored: a
    /// fleet refresh never adopts it again from Redis.
    dropped: Option<BearerToken>,
}

impl std::fmt::Debug for TokenSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenSlot")
            .field("token", &self.token.as_ref().map(|_| "[redacted]"))
            .field("generation", &self.generation)
            .field("version", &self.version)
            .field("exchange_since", &self.exchange_since)
            .field("exchanges", &self.exchanges)
            .finish()
    }
}

/// What one call keeps about its use of a token slot (not saved: a resumed call starts afresh).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TokenUse {
    /// A token of a later generation is fresh for this call's next send (it waited for it).
    fresh_after: Option<u64>,
    /// The slot's version when this call started waiting for (or leading) an exchange.
    waited: Option<u64>,
    /// The generation of a token the server refused for this call.
    refused: Option<u64>,
    /// Exchanges this call led or waited for.
    pub(crate) refreshes: u32,
}

impl TokenUse {
    /// A request went out: the freshness this call waited for is used up.
    pub(crate) fn sent(&mut self) {
        self.fresh_after = None;
        self.waited = None;
    }

    /// The server refused the token of `generation` (401): the slot drops it at this call's
    /// next ask, and no call of the slot uses it again.
    pub(crate) fn refuse(&mut self, generation: u64) {
        self.refused = Some(generation);
    }
}

/// What a call does about its token now.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Acquire {
    /// Send with this token (its generation).
    Token(BearerToken, u64),
    /// Obtain a token: this call leads the exchange.
    Refresh(String),
    /// Another call is obtaining one: ask again when the session changes, at the latest after
    /// these seconds.
    Await(f64),
    /// The exchange this call waited for failed, or its exchanges ran out: the rule and why.
    Failed(&'static str, String),
}

impl TokenSlot {
    /// Stores a token obtained (or given), ending any exchange in flight.
    pub(crate) fn store(&mut self, token: BearerToken, refresh_at: Option<f64>) {
        self.generation += 1;
        self.version += 1;
        self.token = Some((token, refresh_at.filter(|r| r.is_finite()), self.generation));
        self.dropped = None;
        self.exchange_since = None;
        self.failed = None;
    }

    /// The token for a call at `now` (see the module documentation); `limit` is how many
    /// exchanges one call may lead or wait for.
    pub(crate) fn acquire(&mut self, now: f64, use_: &mut TokenUse, limit: u32) -> Acquire {
        if use_.refused.is_some()
            && self
                .token
                .as_ref()
                .is_some_and(|(_, _, g)| Some(*g) == use_.refused)
        {
            self.dropped = self.token.take().map(|(t, _, _)| t);
        }
        if let Some((token, refresh_at, generation)) = &self.token {
            let refused = use_.refused == Some(*generation);
            let fresh = use_.fresh_after.is_some_and(|after| *generation > after);
            let due = refresh_at.is_some_and(|at| now >= at);
            if !refused && (fresh || !due) {
                return Acquire::Token(token.clone(), *generation);
            }
        }
        if let Some(since) = self.exchange_since {
            let left = since + EXCHANGE_LEASE_SECONDS - now;
            if left > 0.0 {
                if use_.waited.is_none() {
                    use_.waited = Some(self.version);
                    use_.fresh_after = Some(self.generation);
                    use_.refreshes += 1;
                }
                return Acquire::Await(left);
            }
            // The exchange's lease ran out (its host died): this call leads a new one.
            self.exchange_since = None;
        }
        if let (Some(waited), Some((at, reason))) = (use_.waited, &self.failed) {
            if *at > waited {
                return Acquire::Failed(
                    "token_exchange_failed",
                    format!("the token exchange this call waited for failed: {reason}"),
                );
            }
        }
        if use_.refreshes >= limit {
            return Acquire::Failed(
                "token_refresh_exhausted",
                format!("{limit} token exchanges were made or awaited for this call and it still has no token it can use; check the token lifetime the service grants and this host's clock"),
            );
        }
        use_.refreshes += 1;
        use_.waited = Some(self.version);
        use_.fresh_after = Some(self.generation);
        self.exchange_since = Some(now);
        self.exchanges += 1;
        Acquire::Refresh(match (&self.token, use_.refused) {
            (None, Some(_)) => {
                "401: the token was refused; obtain a new one and the request is sent again once"
            }
            (None, None) => "the operation needs a bearer token; obtain one",
            (Some(_), _) => "the token is due for refresh (before it expires); obtain a new one",
        }
        .to_owned())
    }

    fn exchange_failed(&mut self, reason: String) {
        self.version += 1;
        self.exchange_since = None;
        self.failed = Some((self.version, reason));
    }

    fn abandon(&mut self) {
        self.version += 1;
        self.exchange_since = None;
    }
}

/// What the calls of one API client share (see the module documentation). Not thread-safe by
/// itself: bindings hold it behind their lock, and hosts share one per API client (per API key,
/// or per client id and tenant).
#[derive(Debug, Clone, Default)]
pub struct Session {
    pub(crate) slot: TokenSlot,
    pub(crate) budget: Option<RateBudget>,
    /// The fleet whose Redis holds the token and counts the budget ([`super::Fleet::session`]).
    pub(crate) fleet: Option<super::Fleet>,
    /// The operations a `notice` event was given for (at most [`MAX_NOTICED`]).
    noticed: std::collections::BTreeSet<String>,
}

/// The most operations a session remembers having given a `notice` for.
pub const MAX_NOTICED: usize = 256;

impl Session {
    /// A session without a token yet, pacing its calls by `budget` when given (the enterprise
    /// API's one-minute limits: `RateBudget::preset("enterprise")`).
    pub fn new(budget: Option<RateBudget>) -> Self {
        Self {
            slot: TokenSlot::default(),
            budget,
            fleet: None,
            noticed: std::collections::BTreeSet::new(),
        }
    }

    /// A session of `fleet` (see [`super::Fleet::session`]).
    pub(crate) fn in_fleet(budget: Option<RateBudget>, fleet: super::Fleet) -> Self {
        Self {
            fleet: Some(fleet),
            ..Self::new(budget)
        }
    }

    /// The fleet the session shares its token and budget with, when it is a fleet's.
    pub fn fleet(&self) -> Option<&super::Fleet> {
        self.fleet.as_ref()
    }

    /// The bearer value the session holds, or the one it dropped when the server refused it
    /// (401): the token a refresh replaces, which a fleet refresh never adopts again.
    pub(crate) fn token_value(&self) -> Option<&str> {
        self.slot
            .token
            .as_ref()
            .map(|(t, _, _)| t)
            .or(self.slot.dropped.as_ref())
            .map(BearerToken::value)
    }

    /// Drops from `events` every `notice` for an operation the session gave one for already:
    /// a deprecated or sunset operation is reported once per session (per API client), not on
    /// every call.
    pub(crate) fn notice_once(&mut self, events: &mut Vec<super::MachineEvent>) {
        events.retain(|e| {
            if e.kind != "notice" || !self.noticed.contains(&e.operation) {
                if e.kind == "notice" && self.noticed.len() < MAX_NOTICED {
                    self.noticed.insert(e.operation.clone());
                }
                return true;
            }
            false
        });
    }

    /// Stores a token for every call of the session: the one the call told to `RefreshToken`
    /// obtained, or one restored from a cache. `refresh_at` (Unix seconds) is when to obtain the
    /// next ([`crate::token::Token::refresh_at`]; `None`: never due). Ends the exchange in
    /// flight; wake the calls waiting on the session.
    pub fn store_token(&mut self, token: BearerToken, refresh_at: Option<f64>) {
        self.slot.store(token, refresh_at);
    }

    /// The exchange in flight failed (`reason`, never a credential): every call that waited for
    /// it fails with rule `token_exchange_failed`; a call that asks later starts a new exchange.
    /// Wake the calls waiting on the session.
    pub fn exchange_failed(&mut self, reason: &str) {
        self.slot
            .exchange_failed(reason.chars().take(1024).collect());
    }

    /// The exchange in flight ended without an outcome (its call was cancelled): the next call
    /// that asks starts a new one. Wake the calls waiting on the session.
    pub fn abandon_exchange(&mut self) {
        self.slot.abandon();
    }

    /// Changes whenever a call waiting on the session (`AwaitToken`) has something new to look
    /// at: a host waits until it differs from the value it read before asking.
    pub fn version(&self) -> u64 {
        self.slot.version
    }

    /// How many token exchanges the session's calls have started.
    pub fn exchanges(&self) -> u64 {
        self.slot.exchanges
    }

    /// Whether an exchange is in flight.
    pub fn exchanging(&self) -> bool {
        self.slot.exchange_since.is_some()
    }

    /// Whether the session holds a token.
    pub fn has_token(&self) -> bool {
        self.slot.token.is_some()
    }

    /// The session's rate budget, when it has one.
    pub fn budget(&self) -> Option<&RateBudget> {
        self.budget.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(slot: &mut TokenSlot, now: f64, use_: &mut TokenUse) -> Acquire {
        slot.acquire(now, use_, 5)
    }

    #[test]
    fn one_exchange_for_many_calls() {
        let mut slot = TokenSlot::default();
        let (mut a, mut b, mut c) = Default::default();
        assert!(matches!(token(&mut slot, 0.0, &mut a), Acquire::Refresh(_)));
        assert!(matches!(token(&mut slot, 0.0, &mut b), Acquire::Await(_)));
        assert!(matches!(token(&mut slot, 0.5, &mut c), Acquire::Await(_)));
        // A token due at once is still used by every call that waited for it.
        slot.store(BearerToken::enterprise("t1"), Some(1.0));
        for u in [&mut a, &mut b, &mut c] {
            assert!(matches!(token(&mut slot, 2.0, u), Acquire::Token(_, 1)));
            // Asked again before sending (a budget wait): still the fresh token.
            assert!(matches!(token(&mut slot, 2.5, u), Acquire::Token(_, 1)));
            u.sent();
        }
        assert_eq!(slot.exchanges, 1);
        // Then it is due: the next ask refreshes.
        assert!(matches!(token(&mut slot, 2.0, &mut a), Acquire::Refresh(_)));
    }

    #[test]
    fn a_failed_exchange_fails_its_waiters_once() {
        let mut slot = TokenSlot::default();
        let (mut a, mut b) = Default::default();
        assert!(matches!(token(&mut slot, 0.0, &mut a), Acquire::Refresh(_)));
        assert!(matches!(token(&mut slot, 0.0, &mut b), Acquire::Await(_)));
        slot.exchange_failed("401 invalid_client".into());
        assert!(matches!(
            token(&mut slot, 0.1, &mut b),
            Acquire::Failed("token_exchange_failed", _)
        ));
        let mut later = TokenUse::default();
        assert!(matches!(
            token(&mut slot, 9.0, &mut later),
            Acquire::Refresh(_)
        ));
    }

    #[test]
    fn an_abandoned_exchange_lets_another_call_lead() {
        let mut slot = TokenSlot::default();
        let (mut a, mut b) = Default::default();
        assert!(matches!(token(&mut slot, 0.0, &mut a), Acquire::Refresh(_)));
        assert!(matches!(token(&mut slot, 0.0, &mut b), Acquire::Await(_)));
        slot.abandon();
        assert!(matches!(token(&mut slot, 0.0, &mut b), Acquire::Refresh(_)));
        // A dead host's exchange holds the session only for its lease.
        let mut c = TokenUse::default();
        assert!(matches!(
            token(&mut slot, EXCHANGE_LEASE_SECONDS - 1.0, &mut c),
            Acquire::Await(_)
        ));
        assert!(matches!(
            token(&mut slot, EXCHANGE_LEASE_SECONDS + 1.0, &mut c),
            Acquire::Refresh(_)
        ));
    }

    #[test]
    fn a_refused_token_is_dropped_for_everyone_and_refreshes_are_bounded() {
        let mut slot = TokenSlot::default();
        slot.store(BearerToken::enterprise("t1"), None);
        let (mut a, mut b) = (TokenUse::default(), TokenUse::default());
        let Acquire::Token(_, g) = token(&mut slot, 0.0, &mut a) else {
            panic!()
        };
        a.sent();
        assert!(matches!(token(&mut slot, 0.0, &mut b), Acquire::Token(..)));
        a.refuse(g);
        assert!(matches!(token(&mut slot, 0.0, &mut a), Acquire::Refresh(_)));
        assert!(matches!(token(&mut slot, 0.0, &mut b), Acquire::Await(_)));
        let mut greedy = TokenUse::default();
        for _ in 0..3 {
            slot.abandon();
            assert!(matches!(
                slot.acquire(0.0, &mut greedy, 3),
                Acquire::Refresh(_)
            ));
        }
        slot.abandon();
        assert!(matches!(
            slot.acquire(0.0, &mut greedy, 3),
            Acquire::Failed("token_refresh_exhausted", _)
        ));
    }
}
