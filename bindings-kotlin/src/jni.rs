//! The JVM's hot path through JNI: `WebhookVerifier.verify` crosses here in one call, with the
//! packed delivery as a Java `byte[]` and the answer as a `byte[]` holding uniffi's own
//! serialisation of the result, which the Kotlin layer reads with the generated converters.
//! JNA's per-call costs (a `RustBuffer` allocated by a second native call, the call status
//! structure) are what made a 1 KiB verification cost three times the hand-written
//! `javax.crypto.Mac` (bench/PROFILES.md); a JNI call with two array copies costs a fraction of
//! one of them. The rules are the same function as the JNA path ([`WebhookVerifier::verify_packed`]),
//! so the two cannot disagree; the Kotlin tests run the vectors through both.
#![allow(unsafe_code)]

use crate::api::WireRequest;
use crate::machine::{Advance, Call, CallStep, Session, WebhookReceipt};
use crate::receiver::{RedisDedupProtocol, SqlDedupProtocol};
use crate::{DedupWindow, WebhookVerifier};
use jni_sys::{jbyte, jbyteArray, jclass, jint, jlong, jsize, JNIEnv};
use royaltykit::dedup::ClaimState;
use royaltykit::machine::ReceiptStep;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// The answer's first byte: the rest is a `VerifiedWebhook`.
const OK: u8 = 0;
/// The answer's first byte: the rest is a `RoyaltyKitException`.
const ERR: u8 = 1;

/// `dev.royaltykit.NativeFast.verifyPacked(handle, delivery)`: `handle` is the verifier's uniffi
/// handle, borrowed (Kotlin's `callWithBorrowedHandle` keeps the object's call count above zero
/// until this returns, so it cannot be freed meanwhile, and no clone call through JNA is needed);
/// `delivery` is packed as for [`WebhookVerifier::verify_packed`]. Returns `[0] + VerifiedWebhook` or
/// `[1] + RoyaltyKitException` in uniffi's serialisation, or null when the JVM could not
/// give or take the arrays (a Java exception is then pending) or on a panic, after which the
/// Kotlin layer makes the same call through JNA, whose panic handling reports it.
///
/// # Safety
/// Called by the JVM only: `env` is the current thread's environment and `delivery` a live
/// `byte[]` reference.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_dev_royaltykit_NativeFast_verifyPacked(
    env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
    delivery: jbyteArray,
) -> jbyteArray {
    // SAFETY: a handle of a live `WebhookVerifier` made by `Handle::from_arc` (uniffi's object
    // lowering, or `newVerifier` below), borrowed for this call as described above.
    let Some(verifier) = (unsafe { borrow::<WebhookVerifier>(handle) }) else {
        return std::ptr::null_mut();
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `env` and `delivery` come from the JVM for this call (see above).
        let input = unsafe { read_array(env, delivery) }?;
        // SAFETY: as above.
        unsafe { result_answer(env, verifier.verify_packed(input)) }
    }));
    outcome.ok().flatten().unwrap_or(std::ptr::null_mut())
}

/// `dev.royaltykit.NativeFast.newVerifier(args)`: `WebhookVerifier::new` through JNI, so that a
/// JVM that only verifies never starts JNA (its start and registration are most of a cold
/// start, bench/PROFILES.md). `args` holds the constructor's four arguments in uniffi's
/// serialisation (`secrets`, `toleranceSeconds`, `maxBodyBytes`, `validUntil`), written by the
/// generated converters. Returns `[0]` + the new object's uniffi handle (8 bytes, big-endian; the
/// Kotlin object owns it; its cleaner frees it through `freeVerifier`), `[1] + RoyaltyKitException`,
/// or null when the arguments do not read back or the JVM could not give or take the arrays (the
/// Kotlin layer then constructs through JNA).
///
/// # Safety
/// Called by the JVM only: `env` is the current thread's environment and `args` a live `byte[]`
/// reference.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_dev_royaltykit_NativeFast_newVerifier(
    env: *mut JNIEnv,
    _class: jclass,
    args: jbyteArray,
) -> jbyteArray {
    // SAFETY: `env` and `args` come from the JVM for this call (see above).
    unsafe {
        with_args(
            env,
            args,
            |buf| Some((arg(buf)?, arg(buf)?, arg(buf)?, arg(buf)?)),
            |(secrets, tolerance, max_body, valid_until)| {
                let made = WebhookVerifier::new(secrets, tolerance, max_body, valid_until);
                handle_answer(env, made, |_, _| {})
            },
        )
    }
}

/// `dev.royaltykit.NativeFast.freeVerifier(handle)`: releases the Kotlin object's handle, as
/// uniffi's own free function does, so that closing a verifier made through JNI does not start JNA
/// either. Called once per object, by its cleaner (Kotlin's `destroy`/`close` or the GC).
///
/// # Safety
/// Called by the JVM only, with a `WebhookVerifier` handle (made by `Handle::from_arc`) that no
/// call is using and that is released here exactly once (uniffi's cleaner runs its action once,
/// after the last call that borrowed or cloned it).
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_dev_royaltykit_NativeFast_freeVerifier(
    _env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
) {
    // SAFETY: the caller's contract above.
    unsafe { free_handle::<WebhookVerifier>(handle) }
}

// ---- The receiver's receipt through JNI: `WebhookReceiver` (RoyaltyKit.kt) drives each
// delivery's `WebhookReceipt` with these, so a delivery crosses without JNA: through JNA, every
// call allocates `Structure`s whose native memory registers in JNA's global map and cleaner,
// which on a loaded server made the receiver several times slower than a hand-written endpoint
// and its GC pauses the p99 (bench/PROFILES.md). The machine is the same object the JNA path
// drives (`machine::WebhookReceipt`), made by the same function, so the two cannot disagree; the
// Kotlin tests run the receipt transcripts through both.

/// `dev.royaltykit.NativeFast.receiptOpen(verifier, window, delivery, namespace, flags)`: a new
/// `WebhookReceipt` for the packed `delivery` (as `receipt_packed`), on the `DedupWindow` handle
/// `window` when it is not 0 (as `receipt_on_packed`). `verifier` is borrowed (see
/// `verifyPacked`), `window` too (the `WebhookReceiver` holds a handle of its own for its
/// lifetime). `namespace` is UTF-8; `flags`: 1 transactional, 2 claim the content key, 4 inbox.
/// Returns `[0]` + the receipt's handle (8 bytes, big-endian; released by `receiptFree`, once) +
/// its first step (a `ReceiptStep`), or `[1] + RoyaltyKitException`, or null when the JVM could
/// not give or take the arrays, the namespace is not UTF-8, or on a panic.
///
/// # Safety
/// Called by the JVM only: `env` is the current thread's environment, `delivery` and
/// `namespace` live `byte[]` references, and the handles live objects' (as above).
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_dev_royaltykit_NativeFast_receiptOpen(
    env: *mut JNIEnv,
    _class: jclass,
    verifier: jlong,
    window: jlong,
    delivery: jbyteArray,
    namespace: jbyteArray,
    flags: jint,
) -> jbyteArray {
    // SAFETY: the caller's contract above: borrowed handles of live objects.
    let Some(verifier) = (unsafe { borrow::<WebhookVerifier>(verifier) }) else {
        return std::ptr::null_mut();
    };
    // SAFETY: as above (0: no window).
    let window = unsafe { borrow::<DedupWindow>(window) };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `env` and the arrays come from the JVM for this call (see above).
        let input = unsafe { read_array(env, delivery) }?;
        // SAFETY: as above.
        let namespace = String::from_utf8(unsafe { read_array(env, namespace) }?).ok()?;
        let (transactional, claim_content_key, inbox) =
            (flags & 1 != 0, flags & 2 != 0, flags & 4 != 0);
        let made = match window {
            Some(w) => verifier.receipt_on_packed(w, input, namespace, claim_content_key),
            None => {
                verifier.receipt_packed(input, namespace, transactional, claim_content_key, inbox)
            }
        };
        // SAFETY: as above.
        unsafe {
            handle_answer(env, made, |receipt, answer| {
                <ReceiptStep as uniffi::Lower<royaltykit::UniFfiTag>>::write(
                    receipt.next(),
                    answer,
                );
            })
        }
    }));
    outcome.ok().flatten().unwrap_or(std::ptr::null_mut())
}

/// `dev.royaltykit.NativeFast.receiptReport(receipt, outcome, arg)`: reports the pending step's
/// outcome to the receipt `receipt` (borrowed, alive until `receiptFree`) and answers the next
/// step, as `WebhookReceipt.report` does. `outcome`: 1 `Done`, 2 `Failed`, 3 `Cancelled`,
/// 4 `Claimed` (`arg`: 0 new, 1 in progress, 2 done), 5 `Marked` and 6 `Enqueued` (`arg` != 0:
/// true). Answers `[0] + ReceiptStep` or `[1] + RoyaltyKitException` (an outcome the pending step
/// cannot have), or null for an unknown outcome, when the JVM could not take the array, or on a
/// panic.
///
/// # Safety
/// Called by the JVM only, with the handle of a receipt made by `receiptOpen` and not yet freed.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_dev_royaltykit_NativeFast_receiptReport(
    env: *mut JNIEnv,
    _class: jclass,
    receipt: jlong,
    outcome: jint,
    arg: jint,
) -> jbyteArray {
    use royaltykit::machine::ReceiptOutcome as O;
    // SAFETY: the caller's contract above.
    let Some(r) = (unsafe { borrow::<WebhookReceipt>(receipt) }) else {
        return std::ptr::null_mut();
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let next = r.report(match outcome {
            1 => O::Done,
            2 => O::Failed,
            3 => O::Cancelled,
            4 => O::Claimed(match arg {
                0 => ClaimState::New,
                1 => ClaimState::InProgress,
                2 => ClaimState::Done,
                _ => return None,
            }),
            5 => O::Marked(arg != 0),
            6 => O::Enqueued(arg != 0),
            _ => return None,
        });
        // SAFETY: `env` comes from the JVM for this call.
        unsafe { result_answer(env, next) }
    }));
    outcome.ok().flatten().unwrap_or(std::ptr::null_mut())
}

/// `dev.royaltykit.NativeFast.receiptState(receipt)`: the receipt's verified delivery and
/// outcome, as its `delivery()` and `outcome()` answer them: `Option<VerifiedWebhook>` then
/// `Option<String>` in uniffi's serialisation; null when the JVM could not take the array or on
/// a panic.
///
/// # Safety
/// As `receiptReport`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_dev_royaltykit_NativeFast_receiptState(
    env: *mut JNIEnv,
    _class: jclass,
    receipt: jlong,
) -> jbyteArray {
    // SAFETY: the caller's contract above.
    let Some(r) = (unsafe { borrow::<WebhookReceipt>(receipt) }) else {
        return std::ptr::null_mut();
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let mut answer = Vec::with_capacity(256);
        <Option<royaltykit::webhook::VerifiedWebhook> as uniffi::Lower<royaltykit::UniFfiTag>>::write(
            r.delivery(),
            &mut answer,
        );
        <Option<String> as uniffi::Lower<crate::UniFfiTag>>::write(r.outcome(), &mut answer);
        // SAFETY: `env` comes from the JVM for this call.
        unsafe { new_array(env, &answer) }
    }));
    outcome.ok().flatten().unwrap_or(std::ptr::null_mut())
}

/// `dev.royaltykit.NativeFast.receiptFree(receipt)`: releases a receipt made by `receiptOpen`.
///
/// # Safety
/// Called by the JVM only, once per receipt, after its last `receiptReport` or `receiptState`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_dev_royaltykit_NativeFast_receiptFree(
    _env: *mut JNIEnv,
    _class: jclass,
    receipt: jlong,
) {
    // SAFETY: the caller's contract above.
    unsafe { free_handle::<WebhookReceipt>(receipt) }
}

/// `dev.royaltykit.NativeFast.windowFree(window)`: releases a `DedupWindow` handle the
/// `WebhookReceiver` cloned for its lifetime (`uniffiCloneHandle`), once.
///
/// # Safety
/// Called by the JVM only, once per cloned handle, after its last `receiptOpen`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_dev_royaltykit_NativeFast_windowFree(
    _env: *mut JNIEnv,
    _class: jclass,
    window: jlong,
) {
    // SAFETY: the caller's contract above.
    unsafe { free_handle::<DedupWindow>(window) }
}

// ---- The stores' protocols through JNI: `RedisDedupStore` and `JdbcDedupStore` ask the core
// for each delivery's commands and read its replies here, so that a delivery on Redis or
// PostgreSQL costs no JNA call either (four and five of them made the JVM receiver 0.29x and
// 0.20x a hand-written endpoint on those stores: bench/PROFILES.md). Each operation is the
// uniffi method of the same name on the same object, so the two paths cannot disagree; the
// Kotlin tests run the stores through both.

/// `dev.royaltykit.NativeFast.dedupCall(protocol, op, args)`: one call of a dedup store's
/// protocol. `protocol` is the borrowed uniffi handle of a `RedisDedupProtocol` (ops 1 to 4) or
/// a `SqlDedupProtocol` (ops 11 to 14); `args` are the operation's arguments in uniffi's
/// serialisation:
/// - 1 `claim(key: String)`: a new token and its claim command: `String` + `Vec<String>`;
/// - 2 `claimReply(reply: Option<String>)`: `Option<ClaimState>`;
/// - 3 `commitCommand(key, token: String)`, 4 `releaseCommand(key, token)`: `Vec<String>`;
/// - 11 `claim(key: String, now: i64)`: a new token and its claim statement: `String` + `SqlStatement`;
/// - 12 `claimReply(rows: i64)`: `Option<ClaimState>`;
/// - 13 `markDone(key, token: String, now: i64)`: `SqlStatement`;
/// - 14 `guardedReply(rows: i64)`: `bool`.
///
/// Answers `[0]` + the value or `[1] + RoyaltyKitException`, or null for an unknown operation,
/// arguments that do not read back, when the JVM could not give or take the arrays, or on a
/// panic (the Kotlin layer then makes the same call through JNA).
///
/// # Safety
/// Called by the JVM only: `env` is the current thread's environment, `args` a live `byte[]`
/// reference and `protocol` a live handle of the type the operation names, borrowed as in
/// `verifyPacked`.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_dev_royaltykit_NativeFast_dedupCall(
    env: *mut JNIEnv,
    _class: jclass,
    protocol: jlong,
    op: jint,
    args: jbyteArray,
) -> jbyteArray {
    let call = |buf: &mut &[u8]| {
        let mut answer = Vec::with_capacity(160);
        match op {
            1..=4 => {
                // SAFETY: the caller's contract: a live `RedisDedupProtocol` handle for ops 1 to 4.
                let p = unsafe { borrow::<RedisDedupProtocol>(protocol) }?;
                redis_dedup_call(&p, op, buf, &mut answer)?;
            }
            11..=14 => {
                // SAFETY: the caller's contract: a live `SqlDedupProtocol` handle for ops 11 to 14.
                let p = unsafe { borrow::<SqlDedupProtocol>(protocol) }?;
                sql_dedup_call(&p, op, buf, &mut answer)?;
            }
            _ => return None,
        }
        Some(answer)
    };
    // SAFETY: `env` and `args` come from the JVM for this call (see above).
    unsafe { with_args(env, args, call, |answer| new_array(env, &answer)) }
}

/// `dev.royaltykit.NativeFast.release(handle, kind)`: releases a handle cloned for JNI, once:
/// `kind` 0 a `RedisDedupProtocol` and 1 a `SqlDedupProtocol` (cloned for `dedupCall`), 2 a
/// `Session` (cloned by a client for `callStep`), 3 a `Call` made by `callOpen`.
///
/// # Safety
/// Called by the JVM only, once per handle of that kind, after its last use.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_dev_royaltykit_NativeFast_release(
    _env: *mut JNIEnv,
    _class: jclass,
    handle: jlong,
    kind: jint,
) {
    // SAFETY: the caller's contract above.
    unsafe {
        match kind {
            0 => free_handle::<RedisDedupProtocol>(handle),
            1 => free_handle::<SqlDedupProtocol>(handle),
            2 => free_handle::<Session>(handle),
            3 => free_handle::<Call>(handle),
            _ => {}
        }
    }
}

// ---- The clients' calls through JNI: `ApiClient.request` (client/Client.kt) drives each call's
// `Call` with these. Through JNA, the five crossings of a GET (the constructor, two steps, the
// request's wire form, the release) allocate `Structure`s registered in JNA's global map and
// cleaner: about 300-500 us per call, several times a loopback round trip (bench/clients/
// PROFILE.md). The machine is the binding's `Call`, made by the same constructor and driven by
// the same methods the JNA path calls, so the two cannot disagree; the Kotlin client tests run
// through both.

/// `dev.royaltykit.NativeFast.callOpen(args)`: `Call::new` through JNI. `args` holds the
/// constructor's arguments in uniffi's serialisation (`operationId`, `params`, `maxAttempts`,
/// `maxElapsedSeconds`, `seed`). Returns `[0]` + the call's uniffi handle (8 bytes, big-endian;
/// released by `release(handle, 3)`, once) or `[1] + RoyaltyKitException`, or null when the
/// arguments do not read back, the JVM could not give or take the arrays, or on a panic (the
/// client then makes the call through JNA).
///
/// # Safety
/// Called by the JVM only: `env` is the current thread's environment and `args` a live `byte[]`
/// reference.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_dev_royaltykit_NativeFast_callOpen(
    env: *mut JNIEnv,
    _class: jclass,
    args: jbyteArray,
) -> jbyteArray {
    // SAFETY: `env` and `args` come from the JVM for this call (see above).
    unsafe {
        with_args(
            env,
            args,
            |buf| Some((arg(buf)?, arg(buf)?, arg(buf)?, arg(buf)?, arg(buf)?)),
            |(operation_id, params, max_attempts, max_elapsed, seed)| {
                let made = Call::new(operation_id, params, max_attempts, max_elapsed, seed);
                handle_answer(env, made, |_, _| {})
            },
        )
    }
}

/// `dev.royaltykit.NativeFast.callStep(call, session, op, args)`: one input of a call made by
/// `callOpen`, on `session` (a handle the client cloned), both borrowed as in `verifyPacked`.
/// `op` and its arguments (uniffi's serialisation), each the `Call` method of that name:
///
/// - 0 `advanceIn(now: f64, minLevel: Option<EventLevel>, base: String)`: the next step,
///   written as `[0]` + an `Advance`, or, for a `Send`, `[1]` + its `WireRequest` under `base`
///   + the events (so the request's own object never crosses);
/// - 2 `streams(status: i64)`: `bool`;
/// - 5 `takeEvents(minLevel: Option<EventLevel>)`: the events;
/// - 6 `progress(received: i64, total: Option<i64>)`;
/// - 9 `reportIn(outcome: StepOutcome, now: f64, minLevel: Option<EventLevel>, base: String)`:
///   the next step, as op 0 writes it.
///
/// Answers `[0]` + the value (nothing for the inputs that return none) or `[1] +
/// RoyaltyKitException`, or null for an unknown operation, arguments that do not read back, when
/// the JVM could not give or take the arrays, or on a panic.
///
/// # Safety
/// Called by the JVM only: `env` is the current thread's environment, `args` a live `byte[]`
/// reference, `call` a live handle made by `callOpen` and `session` a live `Session` handle.
#[unsafe(no_mangle)]
pub unsafe extern "system" fn Java_dev_royaltykit_NativeFast_callStep(
    env: *mut JNIEnv,
    _class: jclass,
    call: jlong,
    session: jlong,
    op: jint,
    args: jbyteArray,
) -> jbyteArray {
    // SAFETY: the caller's contract: live handles of these types, borrowed for this call.
    let (Some(call), Some(session)) = (unsafe { borrow::<Call>(call) }, unsafe {
        borrow::<Session>(session)
    }) else {
        return std::ptr::null_mut();
    };
    let step = |buf: &mut &[u8]| {
        let mut answer = Vec::with_capacity(512);
        call_step(&call, session, op, buf, &mut answer)?;
        Some(answer)
    };
    // SAFETY: `env` and `args` come from the JVM for this call (see above).
    unsafe { with_args(env, args, step, |answer| new_array(env, &answer)) }
}

/// The operations of `callStep`; `None` for an unknown one or arguments that do not read back.
fn call_step(
    call: &Call,
    session: Arc<Session>,
    op: jint,
    buf: &mut &[u8],
    answer: &mut Vec<u8>,
) -> Option<()> {
    match op {
        0 => {
            let (now, min_level) = (arg(buf)?, arg(buf)?);
            put_advance(answer, call.advance_in(now, session, min_level), arg(buf)?);
        }
        2 => put(answer, Ok(call.streams(arg(buf)?))),
        5 => put(answer, Ok(call.take_events(arg(buf)?))),
        6 => {
            call.progress(arg(buf)?, arg(buf)?);
            answer.push(OK);
        }
        9 => {
            let (outcome, now, min_level) = (
                arg::<crate::machine::StepOutcome>(buf)?,
                arg(buf)?,
                arg(buf)?,
            );
            put_advance(
                answer,
                call.report_in(outcome, now, session, min_level),
                arg(buf)?,
            );
        }
        _ => return None,
    }
    Some(())
}

/// Writes a step of `callStep` (ops 0 and 9): `[0, 0] + Advance`, `[0, 1] + WireRequest under
/// `base` + the events` for a `Send`, or `[1] + RoyaltyKitException`.
fn put_advance(answer: &mut Vec<u8>, result: crate::Result<Advance>, base: String) {
    match result {
        Ok(Advance {
            step: CallStep::Send { request },
            events,
        }) => {
            answer.extend([OK, 1]);
            <WireRequest as uniffi::Lower<crate::UniFfiTag>>::write(request.wire(base), answer);
            <Vec<royaltykit::machine::MachineEvent> as uniffi::Lower<crate::UniFfiTag>>::write(
                events, answer,
            );
        }
        Ok(advance) => {
            answer.extend([OK, 0]);
            <Advance as uniffi::Lower<crate::UniFfiTag>>::write(advance, answer);
        }
        Err(error) => put::<bool>(answer, Err(error)),
    }
}

/// A JNI call's arguments `args` (uniffi's serialisation) given to `read` (which may act on them),
/// then what it read to `then`, which makes the answer: null when the JVM could not give the
/// array, `read` or `then` answers `None`, `read` left bytes unread, or on a panic (which does
/// not unwind into the JVM).
///
/// # Safety
/// `env` is the current thread's environment and `args` a live `byte[]` reference; `then` is
/// called with the same `env`, for this call.
unsafe fn with_args<A>(
    env: *mut JNIEnv,
    args: jbyteArray,
    read: impl FnOnce(&mut &[u8]) -> Option<A>,
    then: impl FnOnce(A) -> Option<jbyteArray>,
) -> jbyteArray {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller's contract.
        let input = unsafe { read_array(env, args) }?;
        let mut buf = input.as_slice();
        let read = read(&mut buf)?;
        if !buf.is_empty() {
            return None;
        }
        then(read)
    }));
    outcome.ok().flatten().unwrap_or(std::ptr::null_mut())
}

/// Reads one argument of a JNI call; `None` when it does not read back.
fn arg<T: uniffi::Lift<crate::UniFfiTag>>(buf: &mut &[u8]) -> Option<T> {
    T::try_read(buf).ok()
}

/// Writes `[0] + value` or `[1] + RoyaltyKitException` into `answer`.
fn put<T: uniffi::Lower<royaltykit::UniFfiTag>>(answer: &mut Vec<u8>, result: crate::Result<T>) {
    match result {
        Ok(value) => {
            answer.push(OK);
            T::write(value, answer);
        }
        Err(error) => {
            answer.push(ERR);
            <royaltykit::Error as uniffi::Lower<royaltykit::UniFfiTag>>::write(error, answer);
        }
    }
}

/// Writes a claim's answer, `[0] + token + command` (the command a Redis command or an SQL
/// statement), or `[1] + RoyaltyKitException`.
fn put_claim<C: uniffi::Lower<royaltykit::UniFfiTag>>(
    answer: &mut Vec<u8>,
    claim: crate::Result<(C, String)>,
) {
    match claim {
        Ok((command, token)) => {
            put(answer, Ok(token));
            C::write(command, answer);
        }
        Err(error) => put::<String>(answer, Err(error)),
    }
}

/// Ops 1 to 4 of `dedupCall`.
fn redis_dedup_call(
    p: &RedisDedupProtocol,
    op: jint,
    buf: &mut &[u8],
    answer: &mut Vec<u8>,
) -> Option<()> {
    match op {
        1 => {
            let key: String = arg(buf)?;
            let claim = p
                .new_token()
                .and_then(|token| Ok((p.claim_command(key, token.clone())?, token)));
            put_claim(answer, claim);
        }
        2 => put(answer, Ok(p.claim_reply(arg(buf)?))),
        3 => {
            let (key, token) = (arg(buf)?, arg(buf)?);
            put(answer, p.commit_command(key, token));
        }
        4 => {
            let (key, token) = (arg(buf)?, arg(buf)?);
            put(answer, p.release_command(key, token));
        }
        _ => return None,
    }
    Some(())
}

/// Ops 11 to 14 of `dedupCall`.
fn sql_dedup_call(
    p: &SqlDedupProtocol,
    op: jint,
    buf: &mut &[u8],
    answer: &mut Vec<u8>,
) -> Option<()> {
    match op {
        11 => {
            let (key, now): (String, i64) = (arg(buf)?, arg(buf)?);
            let claim = p
                .new_token()
                .and_then(|token| Ok((p.claim(key, token.clone(), now)?, token)));
            put_claim(answer, claim);
        }
        12 => put(answer, Ok(p.claim_reply(arg(buf)?))),
        13 => {
            let (key, token, now) = (arg(buf)?, arg(buf)?, arg(buf)?);
            put(answer, p.mark_done(key, token, now));
        }
        14 => put(answer, Ok(p.guarded_reply(arg(buf)?))),
        _ => return None,
    }
    Some(())
}

/// The object behind a borrowed uniffi handle, with a count of its own released on every path
/// (the caller's count keeps it alive meanwhile); `None` for 0.
///
/// # Safety
/// `handle` is 0 or an `Arc<T>` handle made by `Handle::from_arc` that stays alive during the call.
unsafe fn borrow<T: Send + Sync + 'static>(handle: jlong) -> Option<Arc<T>> {
    // SAFETY: the caller's contract.
    (handle != 0)
        .then(|| unsafe { uniffi::Handle::from_raw_unchecked(handle as u64).into_arc_borrowed() })
}

/// Releases an object's uniffi handle (0: none), as uniffi's own free function does; a panic in
/// its destructor does not unwind into the JVM.
///
/// # Safety
/// `handle` is 0 or an `Arc<T>` handle made by `Handle::from_arc`, released here exactly once,
/// after its last use.
unsafe fn free_handle<T: Send + Sync + 'static>(handle: jlong) {
    if handle == 0 {
        return;
    }
    let _ = catch_unwind(|| {
        // SAFETY: the caller's contract.
        drop(unsafe { uniffi::Handle::from_raw_unchecked(handle as u64).into_arc::<T>() });
    });
}

/// A call's answer as a new Java `byte[]`: `[0] + T` or `[1] + RoyaltyKitException`, in uniffi's
/// serialisation (the Kotlin layer reads it with the generated converters); `None` when the JVM
/// could not allocate the array.
///
/// # Safety
/// `env` is the current thread's JNI environment.
unsafe fn result_answer<T: uniffi::Lower<royaltykit::UniFfiTag>>(
    env: *mut JNIEnv,
    result: crate::Result<T>,
) -> Option<jbyteArray> {
    let mut answer = Vec::with_capacity(256);
    put(&mut answer, result);
    // SAFETY: the caller's contract.
    unsafe { new_array(env, &answer) }
}

/// A new object's answer as a new Java `byte[]`: `[0]` + its uniffi handle (8 bytes, big-endian;
/// the caller owns it) + what `then` writes of it, or `[1] + RoyaltyKitException`; `None` when the
/// JVM could not allocate the array, in which case the object is released here (no one else
/// could).
///
/// # Safety
/// `env` is the current thread's JNI environment.
unsafe fn handle_answer<T: Send + Sync + 'static>(
    env: *mut JNIEnv,
    made: crate::Result<Arc<T>>,
    then: impl FnOnce(&T, &mut Vec<u8>),
) -> Option<jbyteArray>
where
    Arc<T>: uniffi::Lower<crate::UniFfiTag, FfiType = uniffi::Handle>,
{
    let mut answer = Vec::with_capacity(128);
    let handle = match made {
        Ok(object) => {
            answer.push(OK);
            let mut rest = Vec::new();
            then(&object, &mut rest);
            let handle = <Arc<T> as uniffi::Lower<crate::UniFfiTag>>::lower(object);
            answer.extend_from_slice(&handle.as_raw().to_be_bytes());
            answer.extend_from_slice(&rest);
            Some(handle)
        }
        Err(error) => {
            answer.push(ERR);
            <royaltykit::Error as uniffi::Lower<royaltykit::UniFfiTag>>::write(error, &mut answer);
            None
        }
    };
    // SAFETY: the caller's contract.
    let array = unsafe { new_array(env, &answer) };
    if let (None, Some(handle)) = (&array, handle) {
        // SAFETY: made by `Handle::from_arc` just above and not given out.
        drop(unsafe { handle.into_arc::<T>() });
    }
    array
}

/// The contents of a Java `byte[]`, copied; `None` when the JVM refused (exception pending).
///
/// # Safety
/// `env` is the current thread's JNI environment and `array` a live `byte[]` reference.
unsafe fn read_array(env: *mut JNIEnv, array: jbyteArray) -> Option<Vec<u8>> {
    if env.is_null() || array.is_null() {
        return None;
    }
    // SAFETY: a JNIEnv points at the JVM's function table, whose entries are all set.
    let table = unsafe { &**env };
    let (len_fn, region_fn, check_fn) = (
        table.GetArrayLength?,
        table.GetByteArrayRegion?,
        table.ExceptionCheck?,
    );
    // SAFETY: the JNI contract for these two functions, with the arguments the JVM gave.
    let len = unsafe { len_fn(env, array) };
    let mut bytes = vec![0u8; usize::try_from(len).ok()?];
    // SAFETY: `bytes` holds `len` bytes; jbyte is i8, the same size and alignment as u8.
    unsafe { region_fn(env, array, 0, len, bytes.as_mut_ptr().cast::<jbyte>()) };
    // SAFETY: as above.
    (unsafe { check_fn(env) } == 0).then_some(bytes)
}

/// A new Java `byte[]` holding `bytes`; `None` when the JVM could not allocate it.
///
/// # Safety
/// `env` is the current thread's JNI environment.
unsafe fn new_array(env: *mut JNIEnv, bytes: &[u8]) -> Option<jbyteArray> {
    let len = jsize::try_from(bytes.len()).ok()?;
    // SAFETY: a JNIEnv points at the JVM's function table.
    let table = unsafe { &**env };
    let (new_fn, set_fn, check_fn) = (
        table.NewByteArray?,
        table.SetByteArrayRegion?,
        table.ExceptionCheck?,
    );
    // SAFETY: the JNI contract for these functions; `bytes` holds `len` bytes.
    let array = unsafe { new_fn(env, len) };
    if array.is_null() {
        return None;
    }
    unsafe { set_fn(env, array, 0, len, bytes.as_ptr().cast::<jbyte>()) };
    (unsafe { check_fn(env) } == 0).then_some(array)
}
