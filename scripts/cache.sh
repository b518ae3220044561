# Sourced by scripts/setup.sh and scripts/test-platforms.sh: a cache of this machine's earlier
# set-ups, outside any clone (ROYALTYKIT_CACHE, default ~/.cache/royaltykit-setup; the JVM jar
# keeps its extracted library apart, in ~/.cache/royaltykit), so that a fresh clone copies what a
# run before it made slowly instead of making it again. Each entry is keyed
# by what pins it (a version, a lock file's hash); a missing or half-written entry is made anew,
# so nothing here is ever needed: it only saves time.
CACHE=${ROYALTYKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/royaltykit-setup}

# from_cache KEY DEST: DEST becomes a copy of the cached KEY; false when there is none.
from_cache() {
  [ -f "$CACHE/$1/.royaltykit-cache-complete" ] || return 1
  rm -rf "$2" && mkdir -p "$(dirname "$2")" && cp -a "$CACHE/$1" "$2" && rm -f "$2/.royaltykit-cache-complete"
}

# to_cache KEY SRC: keeps a copy of SRC as KEY (replacing it whole; a failure leaves no entry).
to_cache() {
  mkdir -p "$CACHE" || return 0
  rm -rf "$CACHE/$1.part.$$"
  if cp -a "$2" "$CACHE/$1.part.$$" && touch "$CACHE/$1.part.$$/.royaltykit-cache-complete"; then
    rm -rf "$CACHE/$1" && mv "$CACHE/$1.part.$$" "$CACHE/$1"
  else
    rm -rf "$CACHE/$1.part.$$"
  fi
  return 0
}
