//! [`InboxWorker`]: the worker of an inbox (the spec's "persist and return success", then
//! process): it claims a due entry, runs the handler and marks the entry done, in a loop, with
//! the core's backoff between failed attempts and poison after the last one.
//!
//! With a transactional store ([`crate::dedup::SqlInbox`]) the handler's effect and the mark
//! share one transaction: `Claim` → `Begin` → `RunHandler` → `MarkDone` → `Commit`. A claim
//! counts the attempt before the handler runs (autocommit), so a worker killed at any step
//! leaves the entry pending with the attempt counted; it is claimed again once its lease runs
//! out, and the effect, rolled back with the dead worker's transaction, commits exactly once.
//! An entry claimed for more attempts than allowed (workers keep dying on it) is set aside as
//! poison without running the handler again. A mark that changes no row means another worker
//! claimed the entry after this claim's lease ran out: the transaction rolls back.
//!
//! A failed handler rolls back, then `Settle`s the entry: pending again after the default
//! backoff (2 s, 5 s, 15 s, then 30–60 s; jitter from the host's seed), or poison after
//! `max_attempts`. Without a transaction (a Redis stream) the same steps run without `Begin`,
//! `Commit` and `Rollback`, and effects are at least once.

use super::Jitter;
pub use crate::dedup::InboxEntry;
use crate::dedup::{cut, DEFAULT_MAX_ATTEMPTS, MAX_ERROR_BYTES};
use crate::retry::BackoffPolicy;
use crate::ArgumentError;

/// Default seconds between claims when nothing is due.
pub const DEFAULT_POLL_SECONDS: f64 = 1.0;
/// Most handler runs one entry may be given.
pub const MAX_INBOX_ATTEMPTS: u32 = 100;

record! {
/// How an inbox worker runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InboxOptions {
    /// Handler runs of one entry before it is poison (default [`DEFAULT_MAX_ATTEMPTS`]).
    pub max_attempts: Option<u32>,
    /// Seconds to wait when nothing is due (default [`DEFAULT_POLL_SECONDS`]).
    pub poll_seconds: Option<f64>,
    /// Whether the handler's effect and the mark share a transaction (default true).
    pub transactional: Option<bool>,
    /// Stop at the first claim that finds nothing due (`Drained`) rather than waiting.
    pub drain: Option<bool>,
}
}

step_enum! {
/// What the host does next for an inbox worker. Declared once here: the bindings' step types are
/// derived from it (a Python class per variant, a Kotlin sealed class, a TypeScript union tagged
/// by `step`, whose fields are camelCase).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
pub enum InboxStep {
    /// Run the store's claim at the current time, then report [`InboxWorker::claimed`] (or
    /// [`InboxWorker::store_failed`]).
    Claim {},
    /// Nothing is due: wait `seconds` (or until told to stop), then report
    /// [`InboxWorker::waited`].
    Idle {
        /// How long.
        seconds: f64,
    },
    /// (`drain`) Nothing is due: the worker is done.
    Drained {},
    /// Open the transaction, then report [`InboxWorker::began`] (or `store_failed`).
    Begin {},
    /// Run the handler with this entry (inside the transaction), then report
    /// [`InboxWorker::handler_succeeded`] or [`InboxWorker::handler_failed`].
    RunHandler {
        /// The entry.
        entry: InboxEntry,
    },
    /// Mark the entry done (inside the transaction), then report [`InboxWorker::marked`] with
    /// whether it changed a row (or `store_failed`).
    MarkDone {
        /// The entry's key.
        key: String,
        /// The claim's attempt count (the guard).
        attempts: u32,
    },
    /// Commit the transaction, then report [`InboxWorker::committed`] (or `store_failed`).
    Commit {},
    /// Roll the transaction back, then report [`InboxWorker::rolled_back`] (a failed rollback
    /// too: a transaction whose connection is gone is rolled back by the database).
    Rollback {},
    /// Record the failed attempt (autocommit), then report [`InboxWorker::settled`] (or
    /// `store_failed`).
    Settle {
        /// The entry's key.
        key: String,
        /// The claim's attempt count (the guard).
        attempts: u32,
        /// Set it aside as poison (no attempts left) rather than pending again.
        poison: bool,
        /// When it is due again, Unix seconds.
        retry_at: i64,
        /// Why the attempt failed.
        error: String,
    },
}
}

/// What became of the step an [`InboxWorker`] gave the host: its one input
/// ([`InboxWorker::report`]). Kotlin takes it as it is (a sealed class); Python names it
/// ([`InboxOutcome::from_parts`]) and Node gives its JSON ([`InboxOutcome::from_json`]).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "uniffi", derive(uniffi::Enum))]
pub enum InboxOutcome {
    /// The step was performed: the idle wait is over, the transaction is open, the handler
    /// finished, the transaction committed or was rolled back, the failed attempt is settled.
    Done,
    /// A `Claim`'s answer: the entry claimed, or none when nothing is due.
    Claimed(Option<InboxEntry>),
    /// A `MarkDone`'s answer: whether the mark changed a row (`false`: another worker claimed
    /// the entry since).
    Marked(bool),
    /// The step failed with this message (for operators; never a secret): the handler's
    /// failure during `RunHandler`, as good as done for a `Rollback` (the database rolls back
    /// a transaction whose connection is gone), the store's otherwise.
    Failed(String),
}

impl InboxOutcome {
    /// The forms the outcome is read from, as its refusal names them.
    const FORMS: &'static str = "`done` alone, `claimed` with the claimed entry or none, \
        `marked` with true or false, or `failed` with a message";

    /// The refusal of an outcome that is none of the forms.
    fn unknown() -> ArgumentError {
        ArgumentError::new(
            "outcome",
            format!("an inbox worker's outcome is {}", Self::FORMS),
        )
    }

    /// The outcome a binding names: `done` alone; `claimed` with the claim's `entry` (none
    /// when nothing is due); `marked` with its `flag`; `failed` with its `message`. Anything
    /// else is `invalid_argument` on `outcome`, naming the accepted forms.
    pub fn from_parts(
        kind: &str,
        entry: Option<Option<InboxEntry>>,
        flag: Option<bool>,
        message: Option<&str>,
    ) -> Result<Self, ArgumentError> {
        match (kind, entry, flag, message) {
            ("done", None, None, None) => Ok(Self::Done),
            ("claimed", Some(entry), None, None) => Ok(Self::Claimed(entry)),
            ("marked", None, Some(changed), None) => Ok(Self::Marked(changed)),
            ("failed", None, None, Some(message)) => Ok(Self::Failed(message.to_owned())),
            _ => Err(Self::unknown()),
        }
    }

    /// The outcome from its JSON: `"done"`, `{"claimed": entry}` (the entry's camelCase
    /// fields, or null), `{"marked": bool}` or `{"failed": "message"}`. Anything else is
    /// `invalid_argument` on `outcome`, naming the accepted forms (never echoing the text).
    pub fn from_json(json: &str) -> Result<Self, ArgumentError> {
        serde_json::from_str(json).map_err(|_| Self::unknown())
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Phase {
    Claiming,
    Idle(f64),
    Drained,
    Beginning,
    Handling,
    Marking,
    Committing,
    /// Rolling back, then `Some` settle or `None` (claim again).
    RollingBack(Option<Settle>),
    Settling(Settle),
    /// Rolling back after a store failure, then idle for the seconds.
    RollingBackIdle(f64),
}

#[derive(Debug, Clone, PartialEq)]
struct Settle {
    poison: bool,
    retry_at: i64,
    error: String,
}

/// One inbox worker (see the module documentation): ask [`InboxWorker::next`], perform the step
/// with the store and the handler, report the outcome, and ask again — until `Drained`, or for
/// as long as the host runs it (it may stop at any `Claim` or `Idle`).
#[derive(Debug, Clone, PartialEq)]
pub struct InboxWorker {
    max_attempts: u32,
    poll: f64,
    transactional: bool,
    drain: bool,
    jitter: Jitter,
    phase: Phase,
    entry: Option<InboxEntry>,
    processed: u64,
    retried: u64,
    poisoned: u64,
    store_failures: u32,
}

impl InboxWorker {
    /// A worker with `options`, drawing jitter from `seed` (the host's RNG). Promises
    /// `invalid_argument` for `max_attempts` outside 1 to [`MAX_INBOX_ATTEMPTS`] or a poll
    /// interval that is not finite and positive.
    pub fn new(options: &InboxOptions, seed: u64) -> Result<Self, ArgumentError> {
        let max_attempts = options.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS);
        if !(1..=MAX_INBOX_ATTEMPTS).contains(&max_attempts) {
            return Err(ArgumentError::new(
                "max_attempts",
                format!("must be 1 to {MAX_INBOX_ATTEMPTS}, got {max_attempts}"),
            ));
        }
        let poll = options.poll_seconds.unwrap_or(DEFAULT_POLL_SECONDS);
        if !(poll.is_finite() && poll > 0.0 && poll <= 3600.0) {
            return Err(ArgumentError::new(
                "poll_seconds",
                "must be more than 0 and at most 3600",
            ));
        }
        Ok(Self {
            max_attempts,
            poll,
            transactional: options.transactional.unwrap_or(true),
            drain: options.drain.unwrap_or(false),
            jitter: Jitter(seed),
            phase: Phase::Claiming,
            entry: None,
            processed: 0,
            retried: 0,
            poisoned: 0,
            store_failures: 0,
        })
    }

    /// The step pending; the same until its outcome is reported.
    pub fn next(&self) -> InboxStep {
        let entry = self.entry.as_ref();
        let key = || entry.map(|e| e.key.clone()).unwrap_or_default();
        let attempts = entry.map_or(0, |e| e.attempts);
        match &self.phase {
            Phase::Claiming => InboxStep::Claim {},
            Phase::Idle(seconds) => InboxStep::Idle { seconds: *seconds },
            Phase::Drained => InboxStep::Drained {},
            Phase::Beginning => InboxStep::Begin {},
            Phase::Handling => match entry {
                Some(e) => InboxStep::RunHandler { entry: e.clone() },
                None => InboxStep::Claim {},
            },
            Phase::Marking => InboxStep::MarkDone {
                key: key(),
                attempts,
            },
            Phase::Committing => InboxStep::Commit {},
            Phase::RollingBack(_) | Phase::RollingBackIdle(_) => InboxStep::Rollback {},
            Phase::Settling(s) => InboxStep::Settle {
                key: key(),
                attempts,
                poison: s.poison,
                retry_at: s.retry_at,
                error: s.error.clone(),
            },
        }
    }

    fn expect(&self, ok: bool, input: &str) -> Result<(), ArgumentError> {
        if ok {
            Ok(())
        } else {
            Err(super::unexpected(input, "another input"))
        }
    }

    fn delay(&mut self, attempt: u32) -> f64 {
        let r = self.jitter.next();
        BackoffPolicy::default()
            .delay(i64::from(attempt.max(1)), r)
            .unwrap_or(60.0)
    }

    /// What the claim returned at `now`: the entry, or none when nothing is due.
    pub fn claimed(&mut self, entry: Option<InboxEntry>, now: f64) -> Result<(), ArgumentError> {
        self.expect(self.phase == Phase::Claiming, "a claim")?;
        let (_, now) = super::check_now(now)?;
        self.store_failures = 0;
        self.phase = match entry {
            None if self.drain => Phase::Drained,
            None => Phase::Idle(self.poll),
            Some(e) if e.attempts > self.max_attempts => {
                let error = format!(
                    "{} handler runs started and none finished (the worker was killed, or the handler outlived the lease); set aside after the limit of {}",
                    e.attempts - 1,
                    self.max_attempts
                );
                self.entry = Some(e);
                Phase::Settling(Settle {
                    poison: true,
                    retry_at: now,
                    error,
                })
            }
            Some(e) => {
                self.entry = Some(e);
                if self.transactional {
                    Phase::Beginning
                } else {
                    Phase::Handling
                }
            }
        };
        Ok(())
    }

    /// The idle wait is over.
    pub fn waited(&mut self) -> Result<(), ArgumentError> {
        self.expect(matches!(self.phase, Phase::Idle(_)), "a wait")?;
        self.phase = Phase::Claiming;
        Ok(())
    }

    /// The transaction is open.
    pub fn began(&mut self) -> Result<(), ArgumentError> {
        self.expect(self.phase == Phase::Beginning, "a transaction begun")?;
        self.phase = Phase::Handling;
        Ok(())
    }

    /// The handler finished.
    pub fn handler_succeeded(&mut self) -> Result<(), ArgumentError> {
        self.expect(self.phase == Phase::Handling, "a handler's result")?;
        self.phase = Phase::Marking;
        Ok(())
    }

    /// The handler failed with `error` at `now` (a message for operators; never include a
    /// secret): the attempt is settled after the rollback.
    pub fn handler_failed(&mut self, error: &str, now: f64) -> Result<(), ArgumentError> {
        self.expect(self.phase == Phase::Handling, "a handler's result")?;
        let (now_f, _) = super::check_now(now)?;
        let attempts = self.entry.as_ref().map_or(1, |e| e.attempts);
        let poison = attempts >= self.max_attempts;
        let delay = self.delay(attempts);
        let settle = Settle {
            poison,
            retry_at: (now_f + delay).ceil() as i64,
            error: cut(error, MAX_ERROR_BYTES).to_owned(),
        };
        self.phase = if self.transactional {
            Phase::RollingBack(Some(settle))
        } else {
            Phase::Settling(settle)
        };
        Ok(())
    }

    /// Whether the mark changed a row: `false` means another worker claimed the entry since.
    pub fn marked(&mut self, changed: bool) -> Result<(), ArgumentError> {
        self.expect(self.phase == Phase::Marking, "a mark")?;
        self.phase = match (changed, self.transactional) {
            (true, true) => Phase::Committing,
            (true, false) => {
                self.processed += 1;
                self.entry = None;
                Phase::Claiming
            }
            (false, true) => Phase::RollingBack(None),
            (false, false) => {
                self.entry = None;
                Phase::Claiming
            }
        };
        Ok(())
    }

    /// The transaction committed: the entry is done.
    pub fn committed(&mut self) -> Result<(), ArgumentError> {
        self.expect(self.phase == Phase::Committing, "a commit")?;
        self.processed += 1;
        self.entry = None;
        self.phase = Phase::Claiming;
        Ok(())
    }

    /// The transaction was rolled back (or its connection is gone).
    pub fn rolled_back(&mut self) -> Result<(), ArgumentError> {
        self.phase = match &self.phase {
            Phase::RollingBack(Some(s)) => Phase::Settling(s.clone()),
            Phase::RollingBack(None) => {
                self.entry = None;
                Phase::Claiming
            }
            Phase::RollingBackIdle(seconds) => {
                self.entry = None;
                Phase::Idle(*seconds)
            }
            _ => return Err(super::unexpected("a rollback", "another input")),
        };
        Ok(())
    }

    /// The failed attempt is recorded.
    pub fn settled(&mut self) -> Result<(), ArgumentError> {
        let Phase::Settling(s) = &self.phase else {
            return Err(super::unexpected("a settle", "another input"));
        };
        if s.poison {
            self.poisoned += 1;
        } else {
            self.retried += 1;
        }
        self.entry = None;
        self.phase = Phase::Claiming;
        Ok(())
    }

    /// The store could not be reached at the pending store step: an open transaction is rolled
    /// back, and the worker waits the backoff before claiming again (the entry, if any, stays
    /// pending and is claimed again once its lease runs out).
    pub fn store_failed(&mut self) -> Result<(), ArgumentError> {
        let in_tx = match self.phase {
            Phase::Beginning | Phase::Claiming | Phase::Settling(_) => false,
            Phase::Marking | Phase::Committing => self.transactional,
            _ => return Err(super::unexpected("a store failure", "another input")),
        };
        self.store_failures = self.store_failures.saturating_add(1);
        let wait = self.delay(self.store_failures);
        if in_tx {
            self.phase = Phase::RollingBackIdle(wait);
        } else {
            self.entry = None;
            self.phase = Phase::Idle(wait);
        }
        Ok(())
    }

    /// What became of the pending step, at `now`: the one input of a worker (the other inputs
    /// are its parts). Promises what the part it stands for promises: [`InboxWorker::claimed`],
    /// [`InboxWorker::marked`]; for `Done`, the pending step's own (`waited`, `began`,
    /// `handler_succeeded`, `committed`, `rolled_back`, `settled`); for `Failed`,
    /// [`InboxWorker::handler_failed`] during the handler, `rolled_back` during a rollback,
    /// otherwise [`InboxWorker::store_failed`]. An outcome the pending step cannot have (a
    /// `Done` for a claim, a failed wait) is `invalid_argument`, the worker unchanged.
    pub fn report(&mut self, outcome: InboxOutcome, now: f64) -> Result<(), ArgumentError> {
        use InboxOutcome as O;
        match (outcome, &self.phase) {
            (O::Claimed(entry), _) => self.claimed(entry, now),
            (O::Marked(changed), _) => self.marked(changed),
            (O::Done | O::Failed(_), Phase::RollingBack(_) | Phase::RollingBackIdle(_)) => {
                self.rolled_back()
            }
            (O::Done, Phase::Idle(_)) => self.waited(),
            (O::Done, Phase::Beginning) => self.began(),
            (O::Done, Phase::Handling) => self.handler_succeeded(),
            (O::Done, Phase::Committing) => self.committed(),
            (O::Done, Phase::Settling(_)) => self.settled(),
            (O::Failed(error), Phase::Handling) => self.handler_failed(&error, now),
            (O::Failed(_), Phase::Idle(_) | Phase::Drained) | (O::Done, _) => {
                Err(super::unexpected("this outcome", "another input"))
            }
            (O::Failed(_), _) => self.store_failed(),
        }
    }

    /// Entries processed (committed) so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Failed attempts settled to be retried so far.
    pub fn retried(&self) -> u64 {
        self.retried
    }

    /// Entries set aside as poison so far.
    pub fn poisoned(&self) -> u64 {
        self.poisoned
    }
}
