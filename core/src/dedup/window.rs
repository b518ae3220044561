//! A bounded, time-windowed set of recently seen keys for single-process handlers.

use crate::ArgumentError;
use hashbrown::HashTable;
use siphasher::sip::SipHasher13;
use std::collections::VecDeque;
use std::hash::Hasher;

/// Largest capacity accepted (entries).
pub const MAX_CAPACITY: usize = 100_000_000;
/// Longest key accepted, in bytes. The keys of [`super`] are 68 to 69 bytes.
pub const MAX_KEY_BYTES: usize = 1024;

struct Slot {
    /// The key; `None` once superseded (a re-insert after expiry out of time order).
    key: Option<Box<str>>,
    /// Its SipHash, kept so that eviction and table growth never hash the key again.
    hash: u64,
    expires_at: i64,
}

/// Remembers keys for `ttl_seconds`, at most `capacity` of them; the oldest is forgotten first
/// when full. Each call is O(1) amortised; memory is bounded by `capacity` (entries) times the
/// key length plus a constant. Time is the caller's `now` (Unix seconds).
///
/// Hashing is SipHash-1-3 keyed by a caller-supplied 128-bit seed (bindings pass OS
/// randomness), so keys chosen by an attacker cannot degrade lookups.
///
/// For several processes, store the keys in your database instead (unique constraint on the
/// key, with the delivery's timestamp for expiry).
pub struct DedupWindow {
    capacity: usize,
    ttl: i64,
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
            .field("len", &self.index.len())
            .finish_non_exhaustive()
    }
}

impl DedupWindow {
    /// A window of `capacity` keys (1 to [`MAX_CAPACITY`]) remembered for `ttl_seconds`
    /// (1 to 10 years), hashing with `seed`.
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

    /// Whether `key` was seen within its time-to-live before `now`, without recording it.
    pub fn contains(&self, key: &str, now: i64) -> Result<bool, ArgumentError> {
        Self::check_key(key)?;
        let hash = self.hash(key);
        Ok(self
            .find(hash, key)
            .and_then(|pos| self.slot(pos))
            .is_some_and(|s| s.expires_at > now))
    }

    /// Records `key` at `now` and returns `true` when it was not seen within its time-to-live
    /// (first delivery: process it), `false` when it was (a duplicate: acknowledge, skip).
    /// Promises: `invalid_argument` for an empty key or one over [`MAX_KEY_BYTES`].
    pub fn check_and_insert(&mut self, key: &str, now: i64) -> Result<bool, ArgumentError> {
        Self::check_key(key)?;
        self.expire(now);
        let hash = self.hash(key);
        if let Some(pos) = self.find(hash, key) {
            let live = self.slot(pos).is_some_and(|s| s.expires_at > now);
            if live {
                return Ok(false);
            }
            // Expired but not yet at the front (the host's clock went backwards): supersede it.
            self.remove_index(hash, pos);
            if let Some(slot) = self.slot_mut(pos) {
                slot.key = None;
            }
        }
        while self.slots.len() >= self.capacity {
            self.pop_front();
        }
        let pos = self.base + self.slots.len() as u64;
        self.slots.push_back(Slot {
            key: Some(key.into()),
            hash,
            expires_at: now.saturating_add(self.ttl),
        });
        let slots = &self.slots;
        let base = self.base;
        self.index.insert_unique(hash, pos, |p| {
            p.checked_sub(base)
                .and_then(|i| usize::try_from(i).ok())
                .and_then(|i| slots.get(i))
                .map_or(0, |s| s.hash)
        });
        Ok(true)
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

    fn window(capacity: i64, ttl: i64) -> DedupWindow {
        DedupWindow::new(capacity, ttl, [7; 16]).unwrap()
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
