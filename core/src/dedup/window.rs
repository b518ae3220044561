//! A bounded, time-windowed set of recently seen keys for single-process handlers, with the
//! two-phase claim → commit / release contract a webhook receiver needs.

use crate::retry::{WEBHOOK_ATTEMPT_TIMEOUT_SECONDS, WEBHOOK_RETRY_DELAYS_SECONDS};
use crate::webhook::DEFAULT_TOLERANCE_SECONDS;
use crate::ArgumentError;
use hashbrown::HashTable;
use siphasher::sip::SipHasher13;
use std::collections::VecDeque;
use std::hash::Hasher;

/// Largest capacity accepted (entries).
pub const MAX_CAPACITY: usize = 100_000_000;
/// Longest key accepted, in bytes. The keys of [`super`] are 68 to 69 bytes.
pub const MAX_KEY_BYTES: usize = 1024;

/// Default time-to-live of a processed (`done`) key: the service's whole redelivery schedule
/// (every retry delay, then the last attempt's time limit) plus the verification tolerance, so
/// that no redelivery of a processed event is processed again (enterprise API, Limits).
pub const DEFAULT_DEDUP_TTL_SECONDS: i64 = {
    let mut total = WEBHOOK_ATTEMPT_TIMEOUT_SECONDS + DEFAULT_TOLERANCE_SECONDS;
    let mut rest: &[u64] = &WEBHOOK_RETRY_DELAYS_SECONDS;
    while let [delay, tail @ ..] = rest {
        total += *delay;
        rest = tail;
    }
    total as i64
};

/// Default lease of an in-progress claim: a receiver that crashed mid-processing holds the
/// key this long, so the service's first redelivery (30 s after an attempt that timed out
/// after 10 s) is answered "in progress" and a later one is processed.
pub const DEFAULT_LEASE_SECONDS: i64 = 60;

string_enum! {
    /// What [`DedupWindow::claim`] found.
    pub enum ClaimState as "claim" {
        /// Not seen (or its claim expired): it is now claimed by the caller; process it, then
        /// `commit` (or `release` when processing failed).
        New = "new",
        /// Another worker holds a live claim: answer a temporary failure (503) so the service
        /// redelivers later.
        InProgress = "in_progress",
        /// Already processed: acknowledge (200) without processing.
        Done = "done",
    }
}

#[derive(Clone)]
struct Slot {
    /// The key; `None` once superseded (a re-insert after expiry out of time order).
    key: Option<Box<str>>,
    /// Its SipHash, kept so that eviction and table growth never hash the key again.
    hash: u64,
    expires_at: i64,
    /// Processed (`commit`), rather than claimed.
    done: bool,
}

/// Remembers keys for `ttl_seconds`, at most `capacity` of them; the oldest is forgotten first
/// when full. A receiver claims a delivery's key before processing it ([`DedupWindow::claim`]),
/// commits it once the effect is stored and releases it when processing failed, so a failed
/// attempt never turns the service's redelivery into a skipped duplicate. Each call is O(1) amortised; memory is bounded by `capacity` (entries) times the
/// key length plus a constant. Time is the caller's `now` (Unix seconds).
///
/// Hashing is SipHash-1-3 keyed by a caller-supplied 128-bit seed (bindings pass OS
/// randomness), so keys chosen by an attacker cannot degrade lookups.
///
/// For several processes, store the keys in your database instead (unique constraint on the
/// key, with the delivery's timestamp for expiry).
#[derive(Clone)]
pub struct DedupWindow {
    capacity: usize,
    ttl: i64,
    lease: i64,
    seed: (u64, u64),
    /// Slots in insertion order; absolute position of `slots[i]` is `base + i`.
    slots: VecDeque<Slot>,
    base: u64,
    /// Absolute positions of live slots, hashed by their key.
    index: HashTable<u64>,
}

impl std::fmt::Debug for DedupWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DedupWindow")
            .field("capacity", &self.capacity)
            .field("ttl_seconds", &self.ttl)
            .field("lease_seconds", &self.lease)
            .field("len", &self.index.len())
            .finish_non_exhaustive()
    }
}

impl DedupWindow {
    /// [`DedupWindow::new`] with the defaults for values not given: [`DEFAULT_DEDUP_TTL_SECONDS`]
    /// and [`DEFAULT_LEASE_SECONDS`]. Promises `invalid_argument` for a lease outside 1 to
    /// `ttl_seconds`, and what `new` promises.
    pub fn with_defaults(
        capacity: i64,
        ttl_seconds: Option<i64>,
        lease_seconds: Option<i64>,
        seed: [u8; 16],
    ) -> Result<Self, ArgumentError> {
        let mut w = Self::new(
            capacity,
            ttl_seconds.unwrap_or(DEFAULT_DEDUP_TTL_SECONDS),
            seed,
        )?;
        let lease = lease_seconds.unwrap_or(DEFAULT_LEASE_SECONDS.min(w.ttl));
        if !(1..=w.ttl).contains(&lease) {
            return Err(ArgumentError::new(
                "lease_seconds",
                format!("must be 1 to ttl_seconds ({}), got {lease}", w.ttl),
            ));
        }
        w.lease = lease;
        Ok(w)
    }

    /// A window of `capacity` keys (1 to [`MAX_CAPACITY`]) remembered for `ttl_seconds`
    /// (1 to 10 years), hashing with `seed`; claims are leased for [`DEFAULT_LEASE_SECONDS`]
    /// (at most `ttl_seconds`).
    pub fn new(capacity: i64, ttl_seconds: i64, seed: [u8; 16]) -> Result<Self, ArgumentError> {
        let capacity = usize::try_from(capacity)
            .ok()
            .filter(|c| (1..=MAX_CAPACITY).contains(c))
            .ok_or_else(|| {
                ArgumentError::new(
                    "capacity",
                    format!("must be 1 to {MAX_CAPACITY}, got {capacity}"),
                )
            })?;
        const MAX_TTL: i64 = 10 * 365 * 86_400;
        if !(1..=MAX_TTL).contains(&ttl_seconds) {
            return Err(ArgumentError::new(
                "ttl_seconds",
                format!("must be 1 to {MAX_TTL} seconds, got {ttl_seconds}"),
            ));
        }
        let (k0, k1) = seed.split_at(8);
        let k = |b: &[u8]| {
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            u64::from_le_bytes(a)
        };
        Ok(Self {
            capacity,
            ttl: ttl_seconds,
            lease: DEFAULT_LEASE_SECONDS.min(ttl_seconds),
            seed: (k(k0), k(k1)),
            slots: VecDeque::new(),
            base: 0,
            index: HashTable::new(),
        })
    }

    /// The capacity given at construction.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The time-to-live given at construction, in seconds.
    pub fn ttl_seconds(&self) -> i64 {
        self.ttl
    }

    /// The lease of an in-progress claim, in seconds.
    pub fn lease_seconds(&self) -> i64 {
        self.lease
    }

    /// Number of keys currently remembered (expired ones may count until the next call).
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether no key is remembered.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Forgets every key.
    pub fn clear(&mut self) {
        self.slots.clear();
        self.index.clear();
    }

    fn hash(&self, key: &str) -> u64 {
        let mut h = SipHasher13::new_with_keys(self.seed.0, self.seed.1);
        h.write(key.as_bytes());
        h.finish()
    }

    fn check_key(key: &str) -> Result<(), ArgumentError> {
        if key.is_empty() || key.len() > MAX_KEY_BYTES {
            return Err(ArgumentError::new(
                "key",
                format!("must be 1 to {MAX_KEY_BYTES} bytes, got {}", key.len()),
            ));
        }
        Ok(())
    }

    /// Whether `key` is remembered at `now` (claimed or done), without recording it.
    pub fn contains(&self, key: &str, now: i64) -> Result<bool, ArgumentError> {
        Self::check_key(key)?;
        let hash = self.hash(key);
        Ok(self
            .find(hash, key)
            .and_then(|pos| self.slot(pos))
            .is_some_and(|s| s.expires_at > now))
    }

    /// What is remembered of `key` at `now`, without claiming or recording it: `done` once
    /// committed (for the time-to-live), `in_progress` while a claim's lease is live, `new`
    /// otherwise. Delivery recovery asks it. Promises: `invalid_argument` for an empty key or
    /// one over [`MAX_KEY_BYTES`].
    pub fn state(&self, key: &str, now: i64) -> Result<ClaimState, ArgumentError> {
        Self::check_key(key)?;
        let hash = self.hash(key);
        Ok(match self.find(hash, key).and_then(|pos| self.slot(pos)) {
            Some(s) if s.expires_at > now && s.done => ClaimState::Done,
            Some(s) if s.expires_at > now => ClaimState::InProgress,
            _ => ClaimState::New,
        })
    }

    /// Records `key` at `now` as processed and returns `true` when it was not seen within its
    /// time-to-live (first delivery: process it), `false` when it was (a duplicate). One phase:
    /// if processing can fail, use [`DedupWindow::claim`] / [`DedupWindow::commit`] /
    /// [`DedupWindow::release`] instead, or a failed attempt's redelivery is skipped.
    /// Promises: `invalid_argument` for an empty key or one over [`MAX_KEY_BYTES`].
    pub fn check_and_insert(&mut self, key: &str, now: i64) -> Result<bool, ArgumentError> {
        Ok(match self.claim(key, now)? {
            ClaimState::New => {
                self.commit(key, now)?;
                true
            }
            ClaimState::InProgress | ClaimState::Done => false,
        })
    }

    /// Claims `key` at `now` before processing its delivery. Promises: `new` when the key is
    /// not remembered (or its claim's lease ran out: the worker that held it is presumed dead),
    /// and the caller now holds a claim for the lease; `in_progress` while another claim is
    /// live; `done` once committed, for the time-to-live; `invalid_argument` for an empty key
    /// or one over [`MAX_KEY_BYTES`].
    pub fn claim(&mut self, key: &str, now: i64) -> Result<ClaimState, ArgumentError> {
        Self::check_key(key)?;
        self.expire(now);
        let hash = self.hash(key);
        if let Some(pos) = self.find(hash, key) {
            match self.slot(pos) {
                Some(s) if s.expires_at > now && s.done => return Ok(ClaimState::Done),
                Some(s) if s.expires_at > now => return Ok(ClaimState::InProgress),
                // Expired but not yet at the front (a lease ran out, or the host's clock went
                // backwards): supersede it.
                _ => self.forget(hash, pos),
            }
        }
        self.insert(key, hash, now.saturating_add(self.lease), false);
        Ok(ClaimState::New)
    }

    /// Marks `key` processed at `now`: later claims answer `done` for the time-to-live. Call it
    /// once the delivery's effect is stored, before answering 2xx. Promises: the key is
    /// remembered as done whether or not its claim was still held; `invalid_argument` for a
    /// bad key.
    pub fn commit(&mut self, key: &str, now: i64) -> Result<(), ArgumentError> {
        Self::check_key(key)?;
        self.expire(now);
        let hash = self.hash(key);
        let expires_at = now.saturating_add(self.ttl);
        match self.find(hash, key).and_then(|pos| self.slot_mut(pos)) {
            // The claimed slot becomes the done one, in place: no second slot per key.
            Some(slot) => {
                slot.done = true;
                slot.expires_at = expires_at;
            }
            None => self.insert(key, hash, expires_at, true),
        }
        Ok(())
    }

    /// Gives up a claim after processing failed, so the service's redelivery is processed
    /// (answer 5xx). Promises: `true` when a live in-progress claim was dropped; `false`,
    /// changing nothing, when the key is unknown, its lease ran out or it is done;
    /// `invalid_argument` for a bad key.
    pub fn release(&mut self, key: &str, now: i64) -> Result<bool, ArgumentError> {
        Self::check_key(key)?;
        self.expire(now);
        let hash = self.hash(key);
        let Some(pos) = self.find(hash, key) else {
            return Ok(false);
        };
        let live_claim = self
            .slot(pos)
            .is_some_and(|s| !s.done && s.expires_at > now);
        if live_claim {
            self.forget(hash, pos);
        }
        Ok(live_claim)
    }

    /// Drops a remembered key (its slot stays until it reaches the front).
    fn forget(&mut self, hash: u64, pos: u64) {
        self.remove_index(hash, pos);
        if let Some(slot) = self.slot_mut(pos) {
            slot.key = None;
        }
    }

    fn insert(&mut self, key: &str, hash: u64, expires_at: i64, done: bool) {
        while self.slots.len() >= self.capacity {
            self.pop_front();
        }
        let pos = self.base + self.slots.len() as u64;
        self.slots.push_back(Slot {
            key: Some(key.into()),
            hash,
            expires_at,
            done,
        });
        let slots = &self.slots;
        let base = self.base;
        self.index.insert_unique(hash, pos, |p| {
            p.checked_sub(base)
                .and_then(|i| usize::try_from(i).ok())
                .and_then(|i| slots.get(i))
                .map_or(0, |s| s.hash)
        });
    }

    fn slot(&self, pos: u64) -> Option<&Slot> {
        usize::try_from(pos.checked_sub(self.base)?)
            .ok()
            .and_then(|i| self.slots.get(i))
    }

    fn slot_mut(&mut self, pos: u64) -> Option<&mut Slot> {
        let i = usize::try_from(pos.checked_sub(self.base)?).ok()?;
        self.slots.get_mut(i)
    }

    fn find(&self, hash: u64, key: &str) -> Option<u64> {
        self.index
            .find(hash, |p| {
                self.slot(*p)
                    .filter(|s| s.hash == hash)
                    .and_then(|s| s.key.as_deref())
                    .is_some_and(|k| k == key)
            })
            .copied()
    }

    fn remove_index(&mut self, hash: u64, pos: u64) {
        if let Ok(entry) = self.index.find_entry(hash, |p| *p == pos) {
            entry.remove();
        }
    }

    /// Drops expired entries from the front (insertion order is expiry order when `now` does
    /// not go backwards).
    fn expire(&mut self, now: i64) {
        while self.slots.front().is_some_and(|s| s.expires_at <= now) {
            self.pop_front();
        }
    }

    fn pop_front(&mut self) {
        let Some(slot) = self.slots.pop_front() else {
            return;
        };
        let pos = self.base;
        self.base += 1;
        if slot.key.is_some() {
            self.remove_index(slot.hash, pos);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<DedupWindow>();
    }

    fn window(capacity: i64, ttl: i64) -> DedupWindow {
        DedupWindow::new(capacity, ttl, [7; 16]).unwrap()
    }

    #[test]
    fn state_reads_without_claiming() {
        let mut w = window(10, 600);
        assert_eq!(w.state("a", 1000).unwrap(), ClaimState::New);
        assert_eq!(
            w.claim("a", 1000).unwrap(),
            ClaimState::New,
            "state claimed nothing"
        );
        assert_eq!(w.state("a", 1001).unwrap(), ClaimState::InProgress);
        assert_eq!(
            w.state("a", 1000 + DEFAULT_LEASE_SECONDS).unwrap(),
            ClaimState::New,
            "a lease that ran out is new again"
        );
        w.commit("a", 1001).unwrap();
        assert_eq!(w.state("a", 1500).unwrap(), ClaimState::Done);
        assert_eq!(
            w.state("a", 1601).unwrap(),
            ClaimState::New,
            "past its time-to-live"
        );
        assert!(w.state("", 1).is_err());
    }

    #[test]
    fn first_seen_then_duplicate_then_expired() {
        let mut w = window(10, 60);
        assert!(w.check_and_insert("a", 1000).unwrap());
        assert!(!w.check_and_insert("a", 1059).unwrap());
        assert!(
            w.check_and_insert("a", 1060).unwrap(),
            "expires at exactly ttl"
        );
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn never_holds_more_than_capacity_and_evicts_oldest() {
        let mut w = window(3, 3600);
        for (i, k) in ["a", "b", "c", "d"].iter().enumerate() {
            assert!(w.check_and_insert(k, i as i64).unwrap());
            assert!(w.len() <= 3);
        }
        assert!(!w.contains("a", 5).unwrap() && w.contains("d", 5).unwrap());
        assert!(
            w.check_and_insert("a", 5).unwrap(),
            "evicted key is new again"
        );
    }

    #[test]
    fn clock_going_backwards_supersedes_without_growth() {
        let mut w = window(4, 10);
        assert!(w.check_and_insert("a", 100).unwrap());
        assert!(w.check_and_insert("b", 50).unwrap()); // earlier now: expires at 60
        assert!(w.check_and_insert("b", 70).unwrap()); // expired, behind a live front
        assert!(!w.check_and_insert("b", 71).unwrap());
        assert_eq!(w.len(), 2);
        assert!(w.slots.len() <= 4);
    }

    #[test]
    fn claim_commit_release() {
        let mut w = window(10, 1000);
        assert_eq!(w.claim("k", 0).unwrap(), ClaimState::New);
        assert_eq!(w.claim("k", 1).unwrap(), ClaimState::InProgress);
        assert!(w.release("k", 2).unwrap(), "processing failed: released");
        assert_eq!(
            w.claim("k", 3).unwrap(),
            ClaimState::New,
            "the redelivery is processed"
        );
        w.commit("k", 4).unwrap();
        assert_eq!(
            w.slots.len(),
            2,
            "the released claim's slot and the done one: no slot per commit"
        );
        assert_eq!(w.claim("k", 5).unwrap(), ClaimState::Done);
        assert!(!w.release("k", 6).unwrap(), "a done key is not released");
        assert_eq!(w.claim("k", 1003).unwrap(), ClaimState::Done);
        assert_eq!(
            w.claim("k", 1004).unwrap(),
            ClaimState::New,
            "done for ttl after the commit"
        );
    }

    #[test]
    fn a_lease_runs_out_so_a_crashed_worker_does_not_hold_the_key() {
        let mut w = DedupWindow::with_defaults(10, Some(1000), Some(60), [1; 16]).unwrap();
        assert_eq!(w.claim("k", 0).unwrap(), ClaimState::New);
        assert_eq!(w.claim("k", 59).unwrap(), ClaimState::InProgress);
        assert_eq!(w.claim("k", 60).unwrap(), ClaimState::New);
        assert!(DedupWindow::with_defaults(1, Some(10), Some(11), [0; 16]).is_err());
        assert!(DedupWindow::with_defaults(1, Some(10), Some(0), [0; 16]).is_err());
    }

    #[test]
    fn the_default_ttl_covers_the_whole_redelivery_schedule() {
        let last_attempt = crate::retry::webhook_gives_up_at(0);
        assert!(DEFAULT_DEDUP_TTL_SECONDS > last_attempt + 300 - 1);
        let mut w = DedupWindow::with_defaults(10, None, None, [2; 16]).unwrap();
        assert_eq!(w.claim("k", 0).unwrap(), ClaimState::New);
        w.commit("k", 0).unwrap();
        assert_eq!(w.claim("k", last_attempt).unwrap(), ClaimState::Done);
    }

    #[test]
    fn rejects_bad_arguments() {
        assert_eq!(
            DedupWindow::new(0, 1, [0; 16]).unwrap_err().name,
            "capacity"
        );
        assert_eq!(
            DedupWindow::new(1, 0, [0; 16]).unwrap_err().name,
            "ttl_seconds"
        );
        let mut w = window(1, 1);
        assert_eq!(
            w.check_and_insert("", 0).unwrap_err().code(),
            "invalid_argument"
        );
        assert!(w
            .check_and_insert(&"k".repeat(MAX_KEY_BYTES + 1), 0)
            .is_err());
    }
}
