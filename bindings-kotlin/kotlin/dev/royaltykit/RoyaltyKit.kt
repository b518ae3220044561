// Hand-written Kotlin conveniences over the uniffi-generated API: naming only, no rules.
package dev.royaltykit

import dev.royaltykit.types.ApiError
import dev.royaltykit.types.FfiConverterTypeReceiptStep
import dev.royaltykit.types.FfiConverterTypeRoyaltyKitError
import dev.royaltykit.types.FfiConverterTypeVerifiedWebhook
import dev.royaltykit.types.ClaimState
import dev.royaltykit.types.ErrorFamily
import dev.royaltykit.types.ReceiptOutcome
import dev.royaltykit.types.ReceiptStep
import dev.royaltykit.types.ResponseNotices
import dev.royaltykit.types.RoyaltyKitException
import dev.royaltykit.types.VerifiedWebhook
import dev.royaltykit.types.WebhookEvent
import java.nio.ByteBuffer
import java.nio.charset.StandardCharsets
import java.time.Instant
import java.util.concurrent.TimeUnit

/** The stable error code of any royaltykit error, the same as in Rust, JS and Python. */
val RoyaltyKitException.code: String
    get() = when (this) {
        is RoyaltyKitException.Webhook -> code
        is RoyaltyKitException.InvalidArgument -> code
        is RoyaltyKitException.Request -> code
        is RoyaltyKitException.TokenResponse -> code
        is RoyaltyKitException.ExportState -> code
        is RoyaltyKitException.ExportDownload -> code
        is RoyaltyKitException.Api -> code
        is RoyaltyKitException.Pagination -> code
        is RoyaltyKitException.CallFailed -> code
        is RoyaltyKitException.ReconcileRequired -> code
        is RoyaltyKitException.Host -> code
    }

/** The status a webhook receiver should answer when this error ends its handling. */
val RoyaltyKitException.httpStatus: UShort
    get() = when (this) {
        is RoyaltyKitException.Webhook -> httpStatus
        is RoyaltyKitException.InvalidArgument -> httpStatus
        is RoyaltyKitException.Request -> httpStatus
        is RoyaltyKitException.TokenResponse -> httpStatus
        is RoyaltyKitException.ExportState -> httpStatus
        is RoyaltyKitException.ExportDownload -> httpStatus
        is RoyaltyKitException.Api -> httpStatus
        is RoyaltyKitException.Pagination -> httpStatus
        is RoyaltyKitException.CallFailed -> httpStatus
        is RoyaltyKitException.ReconcileRequired -> httpStatus
        is RoyaltyKitException.Host -> httpStatus
    }

/**
 * The family of any royaltykit error: which subclass of [RoyaltyKitException] it is, as the core
 * names it (`family.name.lowercase()` is the snake_case name every language uses: `pagination`,
 * `invalid_argument`, …; Python and Node pick their error classes by it).
 */
val RoyaltyKitException.family: ErrorFamily
    get() = when (this) {
        is RoyaltyKitException.Webhook -> ErrorFamily.WEBHOOK
        is RoyaltyKitException.InvalidArgument -> ErrorFamily.INVALID_ARGUMENT
        is RoyaltyKitException.Request -> ErrorFamily.REQUEST
        is RoyaltyKitException.TokenResponse -> ErrorFamily.TOKEN_RESPONSE
        is RoyaltyKitException.ExportState -> ErrorFamily.EXPORT_STATE
        is RoyaltyKitException.ExportDownload -> ErrorFamily.EXPORT_DOWNLOAD
        is RoyaltyKitException.Api -> ErrorFamily.API
        is RoyaltyKitException.Pagination -> ErrorFamily.PAGINATION
        is RoyaltyKitException.CallFailed -> ErrorFamily.CALL_FAILED
        is RoyaltyKitException.ReconcileRequired -> ErrorFamily.RECONCILE_REQUIRED
        is RoyaltyKitException.Host -> ErrorFamily.HOST
    }

/** This parsed error as a throwable `RoyaltyKitException.Api`, with the core's message. */
fun ApiError.toException(): RoyaltyKitException.Api = apiErrorException(this) as RoyaltyKitException.Api

/** [verifyWebhook] with one value per header name (most HTTP libraries' maps). */
@JvmName("verifyWebhookSingle")
@Throws(RoyaltyKitException::class)
fun verifyWebhook(
    headers: Map<String, String>,
    body: ByteArray,
    secrets: List<String>,
    now: Long? = null,
    toleranceSeconds: Long? = null,
    maxBodyBytes: Long? = null,
    validUntil: List<Long?> = emptyList(),
): VerifiedWebhook {
    val multi: Map<String, List<String>> = headers.mapValues { listOf(it.value) }
    return verifyWebhook(multi, body, secrets, now, toleranceSeconds, maxBodyBytes, validUntil)
}

/** [verifyWebhook] for secrets with their ends of validity ([WebhookSecret]), current first. */
@JvmName("verifyWebhookSecrets")
@Throws(RoyaltyKitException::class)
fun verifyWebhook(
    headers: Map<String, String>,
    body: ByteArray,
    secrets: Collection<WebhookSecret>,
    now: Long? = null,
    toleranceSeconds: Long? = null,
    maxBodyBytes: Long? = null,
): VerifiedWebhook =
    verifyWebhook(headers, body, secrets.map { it.secret }, now, toleranceSeconds, maxBodyBytes, secrets.map { it.validUntil })

/**
 * A signing secret with the last Unix second it verifies: during a rotation, the previous
 * secret with the rotation's `previous_secret_valid_until`, so it stops verifying when the
 * five-minute overlap ends. A secret without [validUntil] never expires. `toString` never shows
 * the secret.
 *
 * [validUntil] is taken as Unix seconds (a `Long`, or a finite `Double`, its fraction dropped),
 * a `java.time.Instant`, or an ISO 8601 text (`"2026-11-27T03:05:06Z"`, `+0000` and basic forms
 * too: [parseTimestamp]). Anything else — `Double.NaN`, an infinity, text that is not a time —
 * is refused here with `RoyaltyKitException.InvalidArgument` (code `invalid_argument`): an
 * expiry that was lost (an unset environment variable) must fail loudly, never verify for good.
 */
class WebhookSecret @JvmOverloads constructor(val secret: String, val validUntil: Long? = null) {
    /** A secret valid until [validUntil] (its whole seconds). */
    constructor(secret: String, validUntil: Instant) : this(secret, validUntil.epochSecond)

    /** A secret valid until [validUntil] Unix seconds; NaN and infinities are refused. */
    @Throws(RoyaltyKitException::class)
    constructor(secret: String, validUntil: Double) : this(secret, webhookSecretValidUntil(seconds = validUntil))

    /** A secret valid until [validUntil], an ISO 8601 text; text that is not a time is refused. */
    @Throws(RoyaltyKitException::class)
    constructor(secret: String, validUntil: String) : this(secret, webhookSecretValidUntil(text = validUntil))

    override fun toString(): String = "WebhookSecret([redacted], validUntil=$validUntil)"
}

/**
 * The secrets to verify with at [now] (default: the system clock) during a rotation, current
 * first, each carrying its expiry: the previous one keeps [previousValidUntil], so a verifier or
 * receiver built from them at rotation time stops accepting it after that second.
 */
@Throws(RoyaltyKitException::class)
fun activeSecrets(current: String, previous: String? = null, previousValidUntil: Long? = null, now: Long? = null): List<WebhookSecret> =
    activeWebhookSecrets(current, previous, previousValidUntil, now).map { s -> s.use { WebhookSecret(it.secret(), it.validUntil()) } }

/** [activeSecrets] with the rotation's `previous_secret_valid_until` as the API sends it (ISO 8601). */
@JvmName("activeSecretsUntilText")
@Throws(RoyaltyKitException::class)
fun activeSecrets(current: String, previous: String, previousValidUntil: String, now: Long? = null): List<WebhookSecret> =
    activeSecrets(current, previous, webhookSecretValidUntil(text = previousValidUntil), now)

/**
 * A webhook subscription's signing secret as its create or its rotation revealed it
 * ([revealedSecret], `EnterpriseClient.createSubscription`, `EnterpriseClient.rotateSecret`).
 * The service shows the secret once and never again: store [secret] now (your secret store),
 * before anything else can fail. [secrets] (with the secret you held before a rotation) is the
 * list a [WebhookVerifier] or [WebhookReceiver] takes from now on.
 *
 * The secret never shows in `toString` (nor in [secret]'s), and its fields are `transient`, so
 * field-based serializers (Gson, Java serialization) leave it out; [record] is the response
 * without it, safe to log or store.
 */
class RevealedSecret private constructor(
    @Transient private val native: SubscriptionSecret,
    /** The new signing secret (no expiry). Shown once: store it now. */
    @Transient val secret: WebhookSecret,
) {
    /** Reads [native]'s members once; [native] stays for [secrets] (the core's rule). */
    internal constructor(native: SubscriptionSecret) : this(native, WebhookSecret(native.secret()))

    /**
     * A rotation's `previous_secret_valid_until`, Unix seconds: until then deliveries carry the
     * previous secret's signature too. Null for a create.
     */
    val previousValidUntil: Long? = native.previousValidUntil()

    /** The subscription's reference, when the response names it: what `EnterpriseClient.rotateSecret` takes. */
    val reference: String? = native.reference()

    /** The response as JSON text with every secret member removed: safe to log or store. */
    val record: String = native.record()

    /**
     * The secrets a receiver or verifier takes from now on, each carrying its expiry: the new
     * one first, then [previous] (the secret held until this rotation) with [previousValidUntil]
     * as its `validUntil`, so a verifier built from them stops accepting it after that second.
     * The new one alone for a create, or without [previous].
     */
    @JvmOverloads
    fun secrets(previous: String? = null): List<WebhookSecret> =
        native.secrets(previous).map { s -> s.use { WebhookSecret(it.secret(), it.validUntil()) } }

    /** Never the secret: `RevealedSecret(secret=WebhookSecret([redacted], validUntil=null), previousValidUntil=…, reference=…)`. */
    override fun toString(): String = "RevealedSecret(secret=$secret, previousValidUntil=$previousValidUntil, reference=$reference)"
}

/**
 * The signing secret a subscription's create (`createEnterpriseWebhook`) or rotation
 * (`rotateEnterpriseWebhookSecret`) reveals, read from the response's raw 2xx [body] by the core.
 * The secret is shown once: store it now. Throws `RoyaltyKitException.Webhook` with code
 * `secret_not_revealed` (HTTP status 500) for a body that is not a JSON object of at most 1 MiB,
 * names no secret, or whose `previous_secret_valid_until` is not a time; its message never
 * contains the body. `EnterpriseClient.createSubscription` and `rotateSecret` call it for you.
 */
@Throws(RoyaltyKitException::class)
fun revealedSecret(body: ByteArray): RevealedSecret = RevealedSecret(subscriptionSecret(body))

/**
 * The event's `resource.url` as the path to fetch with a bearer token, checked: only a path under
 * the enterprise API (`/api/v1/…`) is returned, anything else (another origin, `//host`, a dot
 * segment, a backslash, …) throws `RoyaltyKitException.Webhook` with code `invalid_resource_url`.
 * Request it on the enterprise API's own base URL.
 */
@Throws(RoyaltyKitException::class)
fun WebhookEvent.resourcePath(): String = resourcePath(resourceUrl)

/** [responseNotices] for headers as a list of pairs (a name may repeat: two `Link` lines). */
@JvmName("responseNoticesPairs")
fun responseNotices(headers: List<Pair<String, String>>): ResponseNotices =
    responseNotices(headers.map { Param(it.first, it.second) })

/** [responseNotices] for a map with one value per name. */
@JvmName("responseNoticesSingle")
fun responseNotices(headers: Map<String, String>): ResponseNotices =
    responseNotices(headers.map { Param(it.key, it.value) })

/** [responseNotices] for a map with several values per name (`HttpHeaders.map()`). */
@JvmName("responseNoticesMulti")
fun responseNotices(headers: Map<String, List<String>>): ResponseNotices =
    responseNotices(headers.flatMap { (n, vs) -> vs.map { Param(n, it) } })

// ---- sessions: what the calls of one API client share (the core's Session). A call told to
// wait (`CallStep.AwaitToken`) blocks on the session's monitor until its version changes; the
// call that obtained the token (or failed to) reports it to the session, then wakes them.

/** [Session.storeToken] for a reporting token: `refreshAt` defaults to the token's own. Then [wakeWaiters]. */
fun Session.storeToken(token: Token, refreshAt: Double? = null) = storeReportsToken(token, refreshAt)

/** [Session.storeToken] for an enterprise token: `refreshAt` defaults to the token's own. Then [wakeWaiters]. */
fun Session.storeToken(token: EnterpriseToken, refreshAt: Double? = null) = storeEnterpriseToken(token, refreshAt)

/**
 * Blocks for a `CallStep.AwaitToken`: until [version] differs from the step's `version` or
 * [seconds] pass, then ask the machine again. Interruptible (`InterruptedException`): a call
 * that only waited has nothing to report.
 */
@Throws(InterruptedException::class)
fun Session.awaitToken(version: Long, seconds: Double) {
    val deadline = System.nanoTime() + (seconds.coerceIn(0.0, 86_400.0) * 1e9).toLong()
    val monitor = this as Object
    synchronized(monitor) {
        while (version() == version) {
            val left = deadline - System.nanoTime()
            if (left <= 0) return
            TimeUnit.NANOSECONDS.timedWait(monitor, left)
        }
    }
}

/** Wakes the calls waiting on this session ([awaitToken]): after `storeToken`, `exchangeFailed` or `abandonExchange`. */
fun Session.wakeWaiters() {
    val monitor = this as Object
    synchronized(monitor) { monitor.notifyAll() }
}

/** A verifier for secrets with their ends of validity ([WebhookSecret]), current first. */
@Throws(RoyaltyKitException::class)
fun WebhookVerifier(
    secrets: Collection<WebhookSecret>,
    toleranceSeconds: Long? = null,
    maxBodyBytes: Long? = null,
): WebhookVerifier =
    WebhookVerifier(secrets.map { it.secret }, toleranceSeconds, maxBodyBytes, secrets.map { it.validUntil })

/** [signWebhook] with one secret. */
@Throws(RoyaltyKitException::class)
fun signWebhook(secret: String, body: ByteArray, timestamp: Long? = null, deliveryId: String? = null): Map<String, String> =
    signWebhook(listOf(secret), body, timestamp, deliveryId)

/**
 * Verifies a delivery: `headers` as received (names case-insensitive), `body` the exact raw
 * bytes, `now` in Unix seconds (default: the system clock). Returns the verified delivery or
 * throws [RoyaltyKitException.Webhook] with a stable `code`. One crossing per delivery: JNI on
 * the JVM ([NativeLoader]), JNA on Android or when the library was not loaded for JNI.
 */
@Throws(RoyaltyKitException::class)
fun WebhookVerifier.verify(headers: Map<String, String>, body: ByteArray, now: Long? = null): VerifiedWebhook =
    verifyDelivery(packDelivery(headers, body, now))

/** As [verify], for headers with several values per name (servlet, `HttpExchange`). */
@Throws(RoyaltyKitException::class)
fun WebhookVerifier.verifyMulti(headers: Map<String, List<String>>, body: ByteArray, now: Long? = null): VerifiedWebhook =
    verifyDelivery(packDeliveryMulti(headers, body, now))

/**
 * [WebhookVerifier.verifyPacked] through JNI when [NativeFast] is available (the same Rust
 * function, its answer read with the generated converters), else through JNA.
 */
@Throws(RoyaltyKitException::class)
internal fun WebhookVerifier.verifyDelivery(packed: ByteArray): VerifiedWebhook {
    if (!NativeFast.available) return verifyPacked(packed)
    val answer = callWithBorrowedHandle { NativeFast.verifyPacked(it, packed) } ?: return verifyPacked(packed)
    return FfiConverterTypeVerifiedWebhook.read(jniAnswer(answer))
}

/**
 * One delivery as a [WebhookReceipt] machine, its keys scoped to [namespace]: drive it with
 * `next()` until it says [ReceiptStep.Reply] (each outcome reported returns the next step). A
 * rejected delivery's receipt replies at once. [transactional]: the keys are marked done inside
 * the handler's database transaction (steps `Begin`, `CommitTransaction`, `Rollback`).
 * [claimContentKey]: also claim the delivery's content key (opt-in; see [WebhookReceiver]).
 * [inbox]: a verified delivery is persisted in an inbox (step `Enqueue`: report `enqueued` or
 * `storeFailed`) and answered 200 at once; the handler runs later in the inbox's worker.
 * [inbox] excludes [window] and [transactional] (`IllegalArgumentException`).
 */
@Throws(RoyaltyKitException::class)
fun WebhookVerifier.receipt(
    headers: Map<String, String>, body: ByteArray, namespace: String, now: Long? = null, window: DedupWindow? = null,
    transactional: Boolean = false, claimContentKey: Boolean = false, inbox: Boolean = false,
): WebhookReceipt =
    receiptOf(packDelivery(headers, body, now), namespace, window, transactional, claimContentKey, inbox)

/** As [receipt], for headers with several values per name (servlet, `HttpExchange`). */
@Throws(RoyaltyKitException::class)
fun WebhookVerifier.receiptMulti(
    headers: Map<String, List<String>>, body: ByteArray, namespace: String, now: Long? = null, window: DedupWindow? = null,
    transactional: Boolean = false, claimContentKey: Boolean = false, inbox: Boolean = false,
): WebhookReceipt = receiptOf(packDeliveryMulti(headers, body, now), namespace, window, transactional, claimContentKey, inbox)

/**
 * On a [DedupWindow] the receipt claims, releases and commits there itself: it asks only for the
 * handler. [transactional]: the keys are marked done inside the handler's database transaction.
 * [inbox]: the delivery is persisted in an inbox and answered at once.
 */
internal fun WebhookVerifier.receiptOf(
    packed: ByteArray, namespace: String, window: DedupWindow?, transactional: Boolean, claimContentKey: Boolean, inbox: Boolean,
): WebhookReceipt =
    when {
        inbox && (window != null || transactional) ->
            throw IllegalArgumentException("inbox excludes window and transactional: the inbox row is the delivery's dedup record")
        window == null -> receiptPacked(packed, namespace, transactional, claimContentKey, inbox)
        transactional -> throw IllegalArgumentException("window and transactional exclude each other: a DedupWindow is not a table in your database")
        else -> receiptOnPacked(window, packed, namespace, claimContentKey)
    }

/**
 * The inputs of one delivery's receipt, whichever way it crosses: the generated [WebhookReceipt]
 * through JNA ([JnaReceipt]) or the same machine through JNI ([JniReceipt]); names and answers are
 * the generated class's. [WebhookReceiver] drives it.
 */
internal interface ReceiptMachine : AutoCloseable {
    fun next(): ReceiptStep
    fun report(outcome: ReceiptOutcome): ReceiptStep
    fun delivery(): VerifiedWebhook?
    fun outcome(): String?
    fun isFinished(): Boolean
}

/** The generated [WebhookReceipt] (JNA) as a [ReceiptMachine]. */
internal class JnaReceipt(private val r: WebhookReceipt) : ReceiptMachine {
    override fun next() = r.next()
    override fun report(outcome: ReceiptOutcome) = r.report(outcome)
    override fun delivery() = r.delivery()
    override fun outcome() = r.outcome()
    override fun isFinished() = r.isFinished()
    override fun close() = r.close()
}

/**
 * The same receipt machine through JNI (src/jni.rs): one call per input, with no JNA `Structure`
 * allocated (bench/PROFILES.md, the JVM receiver). Not thread-safe (one delivery, one thread);
 * [close] releases it, once.
 */
internal class JniReceipt private constructor(private val handle: Long, private var pending: ReceiptStep) : ReceiptMachine {
    private var closed = false

    private fun report(outcome: Int, arg: Int = 0): ReceiptStep {
        check(!closed) { "royaltykit: the receipt is closed" }
        val answer = NativeFast.receiptReport(handle, outcome, arg)
            ?: throw IllegalStateException("royaltykit: the receipt's native call did not complete (see the log for a panic)")
        return FfiConverterTypeReceiptStep.read(jniAnswer(answer)).also { pending = it }
    }

    private fun state(): ByteBuffer {
        check(!closed) { "royaltykit: the receipt is closed" }
        return ByteBuffer.wrap(
            NativeFast.receiptState(handle)
                ?: throw IllegalStateException("royaltykit: the receipt's native call did not complete (see the log for a panic)"),
        )
    }

    override fun next() = pending
    override fun report(outcome: ReceiptOutcome) = when (outcome) {
        is ReceiptOutcome.Done -> report(1)
        is ReceiptOutcome.Failed -> report(2)
        is ReceiptOutcome.Cancelled -> report(3)
        is ReceiptOutcome.Claimed -> report(4, outcome.v1.ordinal)
        is ReceiptOutcome.Marked -> report(5, if (outcome.v1) 1 else 0)
        is ReceiptOutcome.Enqueued -> report(6, if (outcome.v1) 1 else 0)
    }
    override fun delivery(): VerifiedWebhook? = FfiConverterOptionalTypeVerifiedWebhook.read(state())
    override fun outcome(): String? = state().let { FfiConverterOptionalTypeVerifiedWebhook.read(it); dev.royaltykit.FfiConverterOptionalString.read(it) }
    override fun isFinished() = pending is ReceiptStep.Reply
    override fun close() {
        if (!closed) {
            closed = true
            NativeFast.receiptFree(handle)
        }
    }

    companion object {
        /**
         * The receipt of a packed delivery through JNI, or null when JNI is not available or the
         * call did not complete (the caller then goes through JNA, with the same rules); throws
         * the core's [RoyaltyKitException] as the JNA path does. [window]: a `DedupWindow` handle
         * the caller holds (0: none).
         */
        fun open(verifier: WebhookVerifier, window: Long, packed: ByteArray, namespace: String, flags: Int): JniReceipt? {
            if (!NativeFast.available) return null
            val ns = utf8(namespace)
            val answer = verifier.callWithBorrowedHandle { NativeFast.receiptOpen(it, window, packed, ns, flags) } ?: return null
            val buf = jniAnswer(answer)
            val handle = buf.getLong()
            val first = try {
                FfiConverterTypeReceiptStep.read(buf)
            } catch (e: Throwable) {
                NativeFast.receiptFree(handle)
                throw e
            }
            return JniReceipt(handle, first)
        }

        /** The flags of [open]. */
        fun flags(transactional: Boolean, claimContentKey: Boolean, inbox: Boolean): Int =
            (if (transactional) 1 else 0) or (if (claimContentKey) 2 else 0) or (if (inbox) 4 else 0)
    }
}

/**
 * Strings as UTF-8 exactly as uniffi lowers them: a lone surrogate is refused with
 * `CharacterCodingException` rather than silently replaced.
 */
private fun utf8(s: String): ByteArray {
    // java.lang, not kotlin.text: no stdlib facade class to load on a cold JVM's first delivery.
    var clean = true
    for (i in 0 until s.length) if (Character.isSurrogate(s[i])) { clean = false; break }
    if (clean) return s.toByteArray(StandardCharsets.UTF_8)
    val encoded = StandardCharsets.UTF_8.newEncoder()
        .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
        .encode(java.nio.CharBuffer.wrap(s))
    return ByteArray(encoded.remaining()).also { encoded.get(it) }
}

/**
 * The layout `verify_packed` reads (bindings-kotlin/src/lib.rs, `unpack_delivery`), written with
 * plain loops (no `Sequence` or `Pair`: fewer classes to load before a cold JVM's first delivery).
 */
private class DeliveryPacker {
    private val encoded = ArrayList<ByteArray>()
    private var size = 0

    fun header(name: String, value: String) {
        add(utf8(name))
        add(utf8(value))
    }

    private fun add(bytes: ByteArray) {
        encoded.add(bytes)
        size += 4 + bytes.size
    }

    fun pack(body: ByteArray, now: Long?): ByteArray {
        val buf = ByteBuffer.allocate(1 + (if (now == null) 0 else 8) + 4 + size + body.size)
        if (now == null) buf.put(0) else buf.put(1).putLong(now)
        buf.putInt(encoded.size / 2)
        for (b in encoded) buf.putInt(b.size).put(b)
        buf.put(body)
        return buf.array()
    }
}

private fun packDelivery(headers: Map<String, String>, body: ByteArray, now: Long?): ByteArray {
    val packer = DeliveryPacker()
    for (entry in headers.entries) packer.header(entry.key, entry.value)
    return packer.pack(body, now)
}

internal fun packDeliveryMulti(headers: Map<String, List<String>>, body: ByteArray, now: Long?): ByteArray {
    val packer = DeliveryPacker()
    for (entry in headers.entries) for (value in entry.value) packer.header(entry.key, value)
    return packer.pack(body, now)
}

// ---- receivers: the flow of every JVM integration (servlet, com.sun.net.httpserver, Ktor, an
// Android WorkManager job) is the core's WebhookReceipt machine; this only performs its steps.

/** The two-phase dedup contract a receiver needs. Implementations must be thread-safe. */
interface DedupStore {
    /** `NEW` (this worker now holds the key), `IN_PROGRESS` or `DONE`. */
    fun claim(key: String): ClaimState
    /** Marks `key` processed (after the effect is stored). */
    fun commit(key: String)
    /** Gives up this worker's claim on `key` (processing failed). */
    fun release(key: String)
}

/**
 * The dedup contract in the handler's own database, for exactly-once effects ([JdbcDedupStore]):
 * the receiver claims the keys, opens a transaction with [begin], runs the handler with that
 * transaction's connection, marks each key done inside it with [markDone], then calls
 * [commitTransaction]; after a failure it calls [rollback], then [release] for each claim (the
 * order is the core's receipt).
 * Throwing from any of them means the database could not be reached (the receiver answers 503,
 * or 500 for a failed handler, and nothing is applied). Implementations must be thread-safe.
 */
interface TransactionalDedupStore {
    /** `NEW` (this worker now holds the key, with a lease), `IN_PROGRESS` or `DONE`; its own
     * statement, outside any transaction. */
    fun claim(key: String): ClaimState
    /** Gives up this worker's claim on `key` (never another worker's, never a committed mark). */
    fun release(key: String)
    /** Opens the transaction the marks and the handler's effect share; returns its connection. */
    fun begin(): java.sql.Connection
    /** Marks `key` done inside the transaction of `connection`: false when this worker's claim was
     * lost (its lease ran out and another worker took the key). */
    fun markDone(connection: java.sql.Connection, key: String): Boolean
    /** Commits the transaction (the marks and the effect together) and gives the connection back;
     * a failed commit rolls back, gives the connection back and throws. */
    fun commitTransaction(connection: java.sql.Connection)
    /** Rolls the transaction back and gives the connection back (also when it throws). */
    fun rollback(connection: java.sql.Connection)
}

/**
 * The read-only side of a dedup store, which delivery recovery asks
 * (`EnterpriseClient.recoverDeliveries`): what the store knows of a delivery key **without
 * claiming it**. Every built-in store implements it ([InMemoryDedupStore], [RedisDedupStore],
 * [JdbcDedupStore]); a store of your own implements it beside [DedupStore] or
 * [TransactionalDedupStore] (or give a lambda). Implementations must be thread-safe.
 */
fun interface DeliveryStates {
    /**
     * What the store knows of [key] now, never claiming or recording it: `DONE` (processed, within
     * the store's time-to-live), `IN_PROGRESS` (a receiver holds a live claim on it) or `NEW`
     * (never seen, or forgotten). Throwing (the store cannot be reached) ends the recovery run
     * with that exception.
     */
    fun state(key: String): ClaimState
}

/**
 * Where a [WebhookReceiver] in inbox mode persists each verified delivery ([JdbcInbox] in your SQL
 * database, [RedisInbox] on a Redis stream, or one of your own): the spec's "persist and return
 * success". The receiver answers 200 as soon as [enqueue] returns; a worker ([JdbcInbox.runWorker],
 * [RedisInbox.runWorker], their `drain`) runs the handler later. Implementations must be
 * thread-safe.
 */
interface Inbox {
    /**
     * Persists the verified delivery under [key] (its delivery key): its `Service-Webhook-Id`
     * [deliveryId], its [event] name and the raw [body] as received (UTF-8 text). True when it was
     * added, false when it was in the inbox already (a redelivery: answered 200 all the same).
     * Throwing means the inbox could not be reached (the receiver answers 503 and the service
     * sends the delivery again).
     */
    fun enqueue(key: String, deliveryId: String, event: String, body: String): Boolean
}

/** A [DedupWindow] as a [DedupStore]: one process only. */
class InMemoryDedupStore(internal val window: DedupWindow = DedupWindow(defaultStoreCapacity())) : DedupStore, DeliveryStates, AutoCloseable {
    override fun claim(key: String): ClaimState = window.claim(key)
    override fun commit(key: String) = window.commit(key)
    override fun release(key: String) { window.release(key) }

    /** The window's state of [key] at the system clock (the core's [DedupWindow.state]): never claims. */
    override fun state(key: String): ClaimState = window.state(key)
    override fun close() = window.close()
}

/**
 * What a Redis client does for [RedisDedupStore]: send one command (its arguments as strings)
 * and return the reply as text — bulk and status replies as they are (`OK`), integers in
 * decimal, nil as null. With Jedis (tested: bindings-kotlin/tests-receivers):
 * ```
 * val jedis = RedisClient.create(host, port)
 * val commands = RedisCommands { c ->
 *     when (val r = jedis.sendCommand(Protocol.Command.valueOf(c[0]), *c.drop(1).toTypedArray())) {
 *         null -> null
 *         is ByteArray -> String(r, Charsets.UTF_8)
 *         else -> r.toString()
 *     }
 * }
 * ```
 * With Lettuce: `dispatch(...)`. Throwing (a connection failure) makes the receiver answer 503.
 */
fun interface RedisCommands {
    fun execute(command: List<String>): String?
}

/**
 * The dedup contract on Redis, for receivers in several processes: the commands come from the
 * core ([RedisDedupProtocol]); claims carry a random token, so a worker whose lease ran out can
 * neither commit nor release a claim another worker took since. Thread-safe.
 */
class RedisDedupStore(
    private val redis: RedisCommands,
    prefix: String? = null,
    ttlSeconds: Long? = null,
    leaseSeconds: Long? = null,
) : DedupStore, DeliveryStates, AutoCloseable {
    private val protocol = RedisDedupProtocol(prefix, ttlSeconds, leaseSeconds)
    private val tokens = java.util.concurrent.ConcurrentHashMap<String, String>()

    // The per-delivery calls cross through JNI when it is in use ([FastDedup]), else through JNA.
    private val fast = FastDedup.of(sql = false) { protocol.uniffiCloneHandle() }

    /** A new token and its claim command for [key]. */
    private fun claimCommand(key: String): Pair<String, List<String>> =
        fast?.call(1, FfiConverterString.allocationSize(key)) { FfiConverterString.write(key, it) }
            ?.let { FfiConverterString.read(it) to FfiConverterSequenceString.read(it) }
            ?: protocol.newToken().let { it to protocol.claimCommand(key, it) }

    private fun claimReply(reply: String?): ClaimState? {
        val answer = fast?.call(2, FfiConverterOptionalString.allocationSize(reply)) { FfiConverterOptionalString.write(reply, it) }
            ?: return protocol.claimReply(reply)
        return FfiConverterOptionalTypeClaimState.read(answer)
    }

    /** The guarded commit (op 3) or release (op 4) of [key] by this worker's claim. */
    private fun guarded(op: Int, key: String): List<String> {
        val token = tokens[key] ?: protocol.newToken()
        val size = FfiConverterString.allocationSize(key) + FfiConverterString.allocationSize(token)
        return fast?.call(op, size) { FfiConverterString.write(key, it); FfiConverterString.write(token, it) }
            ?.let { FfiConverterSequenceString.read(it) }
            ?: if (op == 3) protocol.commitCommand(key, token) else protocol.releaseCommand(key, token)
    }

    override fun claim(key: String): ClaimState {
        val (token, command) = claimCommand(key)
        if (claimReply(redis.execute(command)) == ClaimState.NEW) {
            tokens[key] = token
            return ClaimState.NEW
        }
        return protocol.stateReply(redis.execute(protocol.stateCommand(key)))
    }

    /** When Redis cannot be reached it throws and keeps the claim's token, so the receiver's
     * retry commits the same claim. */
    override fun commit(key: String) {
        redis.execute(guarded(3, key))
        tokens.remove(key)
    }

    override fun release(key: String) {
        redis.execute(guarded(4, key))
        tokens.remove(key)
    }

    /** A read-only `GET` of [key] ([RedisDedupProtocol.lookupCommand]), read by the core: never claims. */
    override fun state(key: String): ClaimState = protocol.lookupReply(redis.execute(protocol.lookupCommand(key)))

    /** Frees the protocol's native memory (the Redis client is yours to close). */
    override fun close() {
        fast?.close()
        protocol.close()
    }
}

/** What to answer: [status] with the small JSON [body]; [delivery] once verified. */
class Receipt(val status: Int, val body: String, val delivery: VerifiedWebhook? = null)

/**
 * A webhook receiver built once: secrets (current first; during a rotation the previous one as
 * `WebhookSecret(previous, validUntil = previousSecretValidUntil)`, or [activeSecrets]), the dedup
 * namespace (your organization, subscription or tenant), a store and the handler that stores a
 * delivery's effect. [receive] returns the status to answer. After a rotation, [useSecrets] gives
 * the live receiver `rotated.secrets(previous = currentSecret)`: no new receiver to build.
 *
 * Deliveries are deduplicated by `Service-Webhook-Id`, as the spec says: every new id is
 * processed. `claimContentKey = true` also claims each delivery's content key (its timestamp and
 * body, which the signature covers): that stops a captured delivery resent under a new id inside
 * the tolerance, and it also merges two genuine deliveries whose body and timestamp are
 * byte-identical (two changes of one resource in the same second: the second is acknowledged and
 * its handler never runs). Off by default; the handler applies the resource's current state
 * idempotently either way.
 *
 * With a [DedupStore] (the in-memory window by default, or [RedisDedupStore]) the handler is
 * `(VerifiedWebhook) -> Unit`. It runs once per new delivery; when it throws, its claims are
 * released and the answer is 500, so the service redelivers and that attempt is processed.
 * Processing is at least once: a commit that still fails after its retries is answered 503 and
 * the redelivery runs the handler again (make the handler idempotent).
 *
 * With a [TransactionalDedupStore] ([JdbcDedupStore]) the handler is `(VerifiedWebhook,
 * java.sql.Connection) -> Unit`: write the effect with that connection, inside the transaction
 * that also marks the delivery done, and never commit or roll back yourself. The mark and the
 * effect commit together or not at all: exactly once.
 *
 * With an [Inbox] ([JdbcInbox], [RedisInbox]) there is no handler here: each verified delivery is
 * persisted in the inbox and answered 200 at once (`{"result":"queued"}`, or
 * `{"result":"duplicate"}` for a delivery already there; 503 when the inbox cannot be reached),
 * however long the handler takes; the inbox's worker (`runWorker`) runs the handler later. On a
 * [JdbcInbox] its effect and the entry's mark commit in one transaction (exactly once); on a
 * [RedisInbox] the mark follows the handler (at least once: make the handler idempotent).
 *
 * `telemetry` (optional, every constructor): one [Telemetry.receipt] per delivery, ended with the
 * receipt's outcome, the status answered and the delivery id once verified
 * (`dev.royaltykit.otel.OpenTelemetryTelemetry` makes a SERVER span of it).
 */
class WebhookReceiver private constructor(
    secrets: Collection<WebhookSecret>,
    private val namespace: String,
    private val store: DedupStore?,
    private val transactionalStore: TransactionalDedupStore?,
    private val inbox: Inbox?,
    toleranceSeconds: Long?,
    maxBodyBytes: Long?,
    private val claimContentKey: Boolean,
    private val onError: (Exception, VerifiedWebhook) -> Unit,
    /** Where each delivery is reported for tracing ([Telemetry.receipt]; null: nowhere). */
    val telemetry: Telemetry?,
    private val handler: ((VerifiedWebhook) -> Unit)?,
    private val transactionalHandler: ((VerifiedWebhook, java.sql.Connection) -> Unit)?,
) : AutoCloseable {
    /** A receiver on a [DedupStore] (default: an in-memory window, one process). */
    constructor(
        secrets: Collection<WebhookSecret>,
        namespace: String,
        store: DedupStore = InMemoryDedupStore(),
        toleranceSeconds: Long? = null,
        maxBodyBytes: Long? = null,
        claimContentKey: Boolean = false,
        onError: (Exception, VerifiedWebhook) -> Unit = ::logHandlerFailure,
        telemetry: Telemetry? = null,
        handler: (VerifiedWebhook) -> Unit,
    ) : this(secrets, namespace, store, null, null, toleranceSeconds, maxBodyBytes, claimContentKey, onError, telemetry, handler, null)

    /** A receiver for plain secrets, which never expire (current first). */
    constructor(
        secrets: List<String>,
        namespace: String,
        store: DedupStore = InMemoryDedupStore(),
        toleranceSeconds: Long? = null,
        maxBodyBytes: Long? = null,
        claimContentKey: Boolean = false,
        onError: (Exception, VerifiedWebhook) -> Unit = ::logHandlerFailure,
        telemetry: Telemetry? = null,
        handler: (VerifiedWebhook) -> Unit,
    ) : this(secrets.map { WebhookSecret(it) }, namespace, store, toleranceSeconds, maxBodyBytes, claimContentKey, onError, telemetry, handler)

    /** A receiver on a [TransactionalDedupStore]: [handler] writes the effect with the connection
     * of the transaction that marks the delivery done (exactly once). */
    constructor(
        secrets: Collection<WebhookSecret>,
        namespace: String,
        store: TransactionalDedupStore,
        toleranceSeconds: Long? = null,
        maxBodyBytes: Long? = null,
        claimContentKey: Boolean = false,
        onError: (Exception, VerifiedWebhook) -> Unit = ::logHandlerFailure,
        telemetry: Telemetry? = null,
        handler: (VerifiedWebhook, java.sql.Connection) -> Unit,
    ) : this(secrets, namespace, null, store, null, toleranceSeconds, maxBodyBytes, claimContentKey, onError, telemetry, null, handler)

    /** A receiver on a [TransactionalDedupStore], for plain secrets, which never expire (current
     * first). */
    constructor(
        secrets: List<String>,
        namespace: String,
        store: TransactionalDedupStore,
        toleranceSeconds: Long? = null,
        maxBodyBytes: Long? = null,
        claimContentKey: Boolean = false,
        onError: (Exception, VerifiedWebhook) -> Unit = ::logHandlerFailure,
        telemetry: Telemetry? = null,
        handler: (VerifiedWebhook, java.sql.Connection) -> Unit,
    ) : this(secrets.map { WebhookSecret(it) }, namespace, store, toleranceSeconds, maxBodyBytes, claimContentKey, onError, telemetry, handler)

    /** A receiver in inbox mode: each verified delivery is persisted in [inbox] ([JdbcInbox],
     * [RedisInbox]) and answered 200 at once; the inbox's worker (`runWorker`, `drain`) runs the handler. */
    constructor(
        secrets: Collection<WebhookSecret>,
        namespace: String,
        inbox: Inbox,
        toleranceSeconds: Long? = null,
        maxBodyBytes: Long? = null,
        claimContentKey: Boolean = false,
        telemetry: Telemetry? = null,
    ) : this(secrets, namespace, null, null, inbox, toleranceSeconds, maxBodyBytes, claimContentKey, ::logHandlerFailure, telemetry, null, null)

    /** A receiver in inbox mode, for plain secrets, which never expire (current first). */
    constructor(
        secrets: List<String>,
        namespace: String,
        inbox: Inbox,
        toleranceSeconds: Long? = null,
        maxBodyBytes: Long? = null,
        claimContentKey: Boolean = false,
        telemetry: Telemetry? = null,
    ) : this(secrets.map { WebhookSecret(it) }, namespace, inbox, toleranceSeconds, maxBodyBytes, claimContentKey, telemetry)

    private val toleranceSeconds = toleranceSeconds
    private val bodyLimit = maxBodyBytes

    /**
     * The verifier of the current secrets. [useSecrets] swaps it; each delivery reads it once, so
     * a delivery being verified keeps the one it started with. A replaced verifier is not closed
     * here (a delivery may still be using it): its native memory is freed when it becomes
     * unreachable (uniffi's cleaner).
     */
    private val verifier = java.util.concurrent.atomic.AtomicReference(WebhookVerifier(secrets, toleranceSeconds, maxBodyBytes))

    private val transactional = transactionalStore != null

    /** The largest body accepted: read at most one byte more from a request. */
    val maxBodyBytes: Long = verifier.get().maxBodyBytes()

    /**
     * Replaces the secrets this receiver verifies with, atomically, for the deliveries that arrive
     * after it (current first, as the constructor takes them); a delivery being verified keeps the
     * secrets it started with. Thread-safe. Checked as the constructor checks them: a list it
     * would refuse (empty, an empty or too long secret…) throws `RoyaltyKitException` (code
     * `invalid_secret`, …) and the receiver keeps its secrets. The tolerance and body limit stay.
     *
     * After `EnterpriseClient.rotateSecret`, pass `rotated.secrets(previous = currentSecret)`: the
     * deliveries still signed with the previous secret verify until the rotation's
     * `previous_secret_valid_until` ([RevealedSecret.previousValidUntil]), and only the new one
     * after it — no new receiver to build and swap in your web framework.
     */
    @Throws(RoyaltyKitException::class)
    fun useSecrets(secrets: Collection<WebhookSecret>) {
        verifier.set(WebhookVerifier(secrets, toleranceSeconds, bodyLimit))
    }

    /** [useSecrets] for plain secrets, which never expire (current first). */
    @JvmName("useSecretStrings")
    @Throws(RoyaltyKitException::class)
    fun useSecrets(secrets: List<String>) = useSecrets(secrets.map { WebhookSecret(it) })

    /** Called once per delivery with what happened (also logged at FINE, logger `dev.royaltykit`). */
    @Volatile
    var onEvent: ((ReceiptEvent) -> Unit)? = null

    /**
     * Receives one delivery (headers with one value per name). A cancellation while it runs — a
     * `CancellationException` (a cancelled coroutine) from the handler or a store, or an
     * interrupted thread — is reported to the core's receipt, which then asks only for the
     * transaction's rollback and the claims' releases; they are performed and the same exception
     * is thrown, so the redelivery is processed at once.
     */
    fun receive(headers: Map<String, String>, body: ByteArray, now: Long? = null): Receipt =
        perform(open(packDelivery(headers, body, now)), body)

    /** Receives one delivery (headers with several values per name: servlet, `HttpExchange`). */
    fun receiveMulti(headers: Map<String, List<String>>, body: ByteArray, now: Long? = null): Receipt =
        perform(open(packDeliveryMulti(headers, body, now)), body)

    /** The in-memory store's window, if any: the receipt claims and commits there itself. */
    private val window: DedupWindow? = (store as? InMemoryDedupStore)?.window

    /**
     * A handle of [window] this receiver holds for the JNI path (one JNA clone here, none per
     * delivery), released by [close] or, unclosed, when the receiver is collected; 0 without a
     * window or JNI.
     */
    private val windowHandle: Long = window?.takeIf { NativeFast.available }?.uniffiCloneHandle() ?: 0L
    private val windowRelease = windowHandle.takeIf { it != 0L }?.let { h -> UniffiObjectCleaner.CLEANER.register(this) { NativeFast.windowFree(h) } }

    /** The delivery's receipt: through JNI where the library was loaded for it, else through JNA;
     * the same machine either way. */
    private fun open(packed: ByteArray): ReceiptMachine {
        val v = verifier.get()
        if (window == null || windowHandle != 0L) {
            JniReceipt.open(v, windowHandle, packed, namespace, JniReceipt.flags(transactional, claimContentKey, inbox != null))?.let { return it }
        }
        return JnaReceipt(v.receiptOf(packed, namespace, window, transactional, claimContentKey, inbox != null))
    }

    /** Performs the steps of the core's receipt ([body]: the raw request body, for an inbox);
     * every rule and every step is the core's. */
    private fun perform(r: ReceiptMachine, body: ByteArray): Receipt {
        var scope: ReceiptScope? = null
        telemetry?.let { t -> guarded("receipt") { scope = t.receipt() } }
        val open = Open()
        val receipt = try {
            r.use { drive(r, open, body) }
        } catch (e: Throwable) {
            scope?.let { s -> guarded("end") { s.end(null, 500, null, e) } }
            throw e
        }
        scope?.let { s -> guarded("end") { s.end(open.outcome, receipt.status, receipt.delivery?.deliveryId, open.error) } }
        return receipt
    }

    /** A cancelled coroutine (kotlinx's CancellationException is this class) or an interrupted
     * thread, also when a driver wrapped the interrupt (as the clients and the inbox worker read it). */
    private fun isCancellation(e: Exception) =
        e is java.util.concurrent.CancellationException || dev.royaltykit.client.interruption(e)

    /**
     * The transaction open between `Begin` and `CommitTransaction` or `Rollback`, if any; the
     * receipt's outcome once replied, and the last handler or store exception.
     */
    private class Open(
        var connection: java.sql.Connection? = null,
        var outcome: String? = null,
        var error: Exception? = null,
        /** The cancellation (a cancelled coroutine, an interrupted thread) that stopped the delivery. */
        var cancelled: Exception? = null,
    ) {
        /** What a store call's `value` (null: it failed) tells the receipt: `of(value)`, else `Cancelled` when the failure was a cancellation, else `Failed`. */
        inline fun <T : Any> answer(value: T?, of: (T) -> ReceiptOutcome): ReceiptOutcome =
            if (value != null) of(value) else if (cancelled != null) ReceiptOutcome.Cancelled else ReceiptOutcome.Failed
    }

    /**
     * The handler's failure given to `onError`, then what the receipt is told: an exception
     * `onError` throws is logged and changes nothing (the delivery still ends as a handler
     * failure: rolled back, released, 500), as in Python and Node; a cancellation it throws
     * cancels the delivery, as one the handler throws does.
     */
    private fun reportHandlerFailure(open: Open, failure: Exception, d: VerifiedWebhook): ReceiptOutcome {
        open.error = failure
        try {
            onError(failure, d)
        } catch (e: Exception) {
            if (isCancellation(e)) {
                open.cancelled = e
                return ReceiptOutcome.Cancelled
            }
            storeLog.log(java.util.logging.Level.SEVERE, "onError threw for ${d.deliveryId}", e)
        }
        return ReceiptOutcome.Failed
    }

    private fun drive(r: ReceiptMachine, open: Open, body: ByteArray): Receipt {
        try {
            return steps(r, open, body)
        } finally {
            // Only when a step threw out of the loop (an Error from the handler): the transaction
            // must not stay open holding its locks.
            open.connection?.let { c -> outcome("rollback") { transactionalStore!!.rollback(c) } }
        }
    }

    private fun steps(r: ReceiptMachine, open: Open, body: ByteArray): Receipt {
        var step = r.next()
        while (true) {
            if (step is ReceiptStep.Reply) return replied(r, open, step)
            step = r.report(perform(step, r, open, body))
        }
    }

    /** Performs the receipt's `step` (the store's, the inbox's or the handler's call); what became of it. */
    private fun perform(step: ReceiptStep, r: ReceiptMachine, open: Open, body: ByteArray): ReceiptOutcome {
        val tx = transactionalStore
        val done = { _: Any -> ReceiptOutcome.Done }
        return when (step) {
            is ReceiptStep.Claim -> open.answer(outcome("claim", open) { tx?.claim(step.key) ?: store!!.claim(step.key) }) { ReceiptOutcome.Claimed(it) }
            // a failed release: the lease runs out (the core counts it as done)
            is ReceiptStep.Release -> open.answer(outcome("release", open) { if (tx != null) tx.release(step.key) else store!!.release(step.key) }, done)
            is ReceiptStep.RunHandler -> handle(r, open)
            // (transactional) the mark, inside the open transaction: false when the claim was lost
            is ReceiptStep.Commit -> if (tx != null) {
                open.answer(outcome("markDone", open) { tx.markDone(open.connection!!, step.key) }) { ReceiptOutcome.Marked(it) }
            } else open.answer(outcome("commit", open) { store!!.commit(step.key) }, done)
            is ReceiptStep.Wait -> try {
                Thread.sleep((step.seconds * 1000).toLong())
                ReceiptOutcome.Done
            } catch (e: InterruptedException) {
                open.cancelled = e
                ReceiptOutcome.Cancelled
            }
            is ReceiptStep.Begin -> open.answer(outcome("begin", open) { tx!!.begin() }.also { open.connection = it }, done)
            is ReceiptStep.CommitTransaction -> {
                val c = open.connection
                open.connection = null // the store gives it back, committed or not
                open.answer(outcome("commitTransaction", open) { tx!!.commitTransaction(c!!) }, done)
            }
            is ReceiptStep.Rollback -> {
                val c = open.connection
                open.connection = null
                // a failed rollback: the database rolls back a lost connection; none after a failed
                // commitTransaction, which rolled back and gave the connection back
                if (c != null) outcome("rollback", open) { tx!!.rollback(c) }
                ReceiptOutcome.Done
            }
            is ReceiptStep.Enqueue -> {
                // The core asks for it only with a verified delivery (its id and event name).
                val d = r.delivery()
                open.answer(if (d == null || inbox == null) null else outcome("enqueue", open) {
                    inbox.enqueue(step.key, d.deliveryId, d.event.name, String(body, StandardCharsets.UTF_8))
                }) { ReceiptOutcome.Enqueued(it) }
            }
            is ReceiptStep.Reply -> throw IllegalStateException("royaltykit: a reply is answered, not performed")
        }
    }

    /** Runs the handler on the receipt's delivery; what became of it. */
    private fun handle(r: ReceiptMachine, open: Open): ReceiptOutcome {
        // The core asks for the handler only with a verified delivery; were it absent, the
        // machine answers as for a failed handler (no reply is written here).
        val d = r.delivery() ?: return ReceiptOutcome.Failed
        val failure = try {
            if (transactionalStore != null) transactionalHandler!!(d, open.connection!!) else handler!!(d)
            return ReceiptOutcome.Done
        } catch (e: Exception) {
            e
        }
        if (!isCancellation(failure)) return reportHandlerFailure(open, failure, d)
        open.cancelled = failure
        return ReceiptOutcome.Cancelled
    }

    /** The delivery's receipt, after the rollback and the releases: its event; a cancelled delivery throws instead. */
    private fun replied(r: ReceiptMachine, open: Open, step: ReceiptStep.Reply): Receipt {
        open.cancelled?.let { throw it }
        val d = r.delivery()
        open.outcome = r.outcome()
        val event = ReceiptEvent(open.outcome, step.status.toInt(), d?.deliveryId, d?.event?.name)
        onEvent?.invoke(event)
        if (storeLog.isLoggable(java.util.logging.Level.FINE)) storeLog.fine("royaltykit: $event")
        return Receipt(step.status.toInt(), step.body, d)
    }

    /**
     * The store call's value, or null when it threw (the store could not be reached): the delivery
     * is then answered 503 so the sender retries it, and the outage is logged with its cause
     * (logger `dev.royaltykit`, SEVERE), never silently.
     */
    private inline fun <T : Any> outcome(what: String, open: Open? = null, call: () -> T): T? = try {
        call()
    } catch (e: Exception) {
        if (open != null && isCancellation(e)) {
            open.cancelled = open.cancelled ?: e // not an outage: reported as the cancellation
        } else {
            open?.error = e
            storeLog.log(
                java.util.logging.Level.SEVERE,
                "royaltykit: webhook store ${(transactionalStore ?: store ?: inbox)?.javaClass?.simpleName} failed on $what: answering 503 so that the delivery is sent again",
                e,
            )
        }
        null
    }

    override fun close() {
        windowRelease?.clean()
        verifier.get().close()
    }
}

/**
 * What happened to one delivery ([WebhookReceiver.onEvent]): the receipt's [outcome] (`processed`,
 * `duplicate`, `in_progress`, `rejected`, `acknowledged`, `queued` (inbox), `handler_failed`,
 * `store_unavailable`, `claim_lost`), the [status] answered, the delivery id and event name (null when it was not
 * verified). Never the body.
 */
data class ReceiptEvent(val outcome: String?, val status: Int, val deliveryId: String?, val event: String?) {
    /** Always `receipt`, as in Python and Node. */
    val kind: String get() = "receipt"
}

/** Where a [WebhookReceiver] reports its store's failures. */
private val storeLog: java.util.logging.Logger = java.util.logging.Logger.getLogger("dev.royaltykit")

/** The default `onError` of a [WebhookReceiver]: one line on standard error. */
private fun logHandlerFailure(e: Exception, d: VerifiedWebhook) {
    System.err.println("royaltykit: webhook handler failed for ${d.deliveryId}: $e")
}
