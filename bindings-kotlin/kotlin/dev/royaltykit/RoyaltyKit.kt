// Hand-written Kotlin conveniences over the uniffi-generated API: naming only, no rules.
package dev.royaltykit

import dev.royaltykit.types.ApiError
import dev.royaltykit.types.ClaimState
import dev.royaltykit.types.ReceiptStep
import dev.royaltykit.types.RoyaltyKitException
import dev.royaltykit.types.VerifiedWebhook

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
        is RoyaltyKitException.Host -> httpStatus
    }

/** This parsed error as a throwable `RoyaltyKitException.Api`. */
fun ApiError.toException(): RoyaltyKitException.Api =
    RoyaltyKitException.Api("api_error", "$status $message (${kind.name.lowercase()})", 500u, this)

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
 */
class WebhookSecret(val secret: String, val validUntil: Long? = null) {
    override fun toString(): String = "WebhookSecret([redacted], validUntil=$validUntil)"
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
 * throws [RoyaltyKitException.Webhook] with a stable `code`. One JNA crossing per delivery.
 */
@Throws(RoyaltyKitException::class)
fun WebhookVerifier.verify(headers: Map<String, String>, body: ByteArray, now: Long? = null): VerifiedWebhook =
    verifyPacked(packDelivery(headers.entries.asSequence().map { it.key to it.value }, body, now))

/** As [verify], for headers with several values per name (servlet, `HttpExchange`). */
@Throws(RoyaltyKitException::class)
fun WebhookVerifier.verifyMulti(headers: Map<String, List<String>>, body: ByteArray, now: Long? = null): VerifiedWebhook =
    verifyPacked(
        packDelivery(
            headers.entries.asSequence().flatMap { (name, values) -> values.asSequence().map { name to it } },
            body,
            now,
        ),
    )

/**
 * One delivery as a [WebhookReceipt] machine, its keys scoped to [namespace]: drive it with
 * `next()` until it says [ReceiptStep.Reply] (each outcome reported returns the next step). A
 * rejected delivery's receipt replies at once.
 */
@Throws(RoyaltyKitException::class)
fun WebhookVerifier.receipt(
    headers: Map<String, String>, body: ByteArray, namespace: String, now: Long? = null, window: DedupWindow? = null,
): WebhookReceipt = receiptOf(packDelivery(headers.entries.asSequence().map { it.key to it.value }, body, now), namespace, window)

/** As [receipt], for headers with several values per name (servlet, `HttpExchange`). */
@Throws(RoyaltyKitException::class)
fun WebhookVerifier.receiptMulti(
    headers: Map<String, List<String>>, body: ByteArray, namespace: String, now: Long? = null, window: DedupWindow? = null,
): WebhookReceipt = receiptOf(
    packDelivery(headers.entries.asSequence().flatMap { (name, values) -> values.asSequence().map { name to it } }, body, now),
    namespace,
    window,
)

/** On a [DedupWindow] the receipt claims, releases and commits there itself: it asks only for the handler. */
private fun WebhookVerifier.receiptOf(packed: ByteArray, namespace: String, window: DedupWindow?): WebhookReceipt =
    if (window == null) receiptPacked(packed, namespace) else receiptOnPacked(window, packed, namespace)

/**
 * Strings as UTF-8 exactly as uniffi lowers them: a lone surrogate is refused with
 * `CharacterCodingException` rather than silently replaced.
 */
private fun utf8(s: String): ByteArray {
    if (s.none { it.isSurrogate() }) return s.toByteArray(Charsets.UTF_8)
    val encoded = Charsets.UTF_8.newEncoder()
        .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
        .encode(java.nio.CharBuffer.wrap(s))
    return ByteArray(encoded.remaining()).also { encoded.get(it) }
}

/** The layout `verify_packed` reads (bindings-kotlin/src/lib.rs, `unpack_delivery`). */
private fun packDelivery(pairs: Sequence<Pair<String, String>>, body: ByteArray, now: Long?): ByteArray {
    val encoded = ArrayList<ByteArray>()
    for ((name, value) in pairs) {
        encoded.add(utf8(name))
        encoded.add(utf8(value))
    }
    val size = 1 + (if (now == null) 0 else 8) + 4 + encoded.sumOf { 4 + it.size } + body.size
    val buf = java.nio.ByteBuffer.allocate(size)
    if (now == null) buf.put(0) else buf.put(1).putLong(now)
    buf.putInt(encoded.size / 2)
    for (b in encoded) buf.putInt(b.size).put(b)
    buf.put(body)
    return buf.array()
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

/** A [DedupWindow] as a [DedupStore]: one process only. */
class InMemoryDedupStore(internal val window: DedupWindow = DedupWindow(defaultStoreCapacity())) : DedupStore, AutoCloseable {
    override fun claim(key: String): ClaimState = window.claim(key)
    override fun commit(key: String) = window.commit(key)
    override fun release(key: String) { window.release(key) }
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
) : DedupStore, AutoCloseable {
    private val protocol = RedisDedupProtocol(prefix, ttlSeconds, leaseSeconds)
    private val tokens = java.util.concurrent.ConcurrentHashMap<String, String>()

    override fun claim(key: String): ClaimState {
        val token = protocol.newToken()
        if (protocol.claimReply(redis.execute(protocol.claimCommand(key, token))) == ClaimState.NEW) {
            tokens[key] = token
            return ClaimState.NEW
        }
        return protocol.stateReply(redis.execute(protocol.stateCommand(key)))
    }

    /** When Redis cannot be reached it throws and keeps the claim's token, so the receiver's
     * retry commits the same claim. */
    override fun commit(key: String) {
        redis.execute(protocol.commitCommand(key, tokens[key] ?: protocol.newToken()))
        tokens.remove(key)
    }

    override fun release(key: String) {
        redis.execute(protocol.releaseCommand(key, tokens[key] ?: protocol.newToken()))
        tokens.remove(key)
    }

    override fun close() = protocol.close()
}

/** What to answer: [status] with the small JSON [body]; [delivery] once verified. */
class Receipt(val status: Int, val body: String, val delivery: VerifiedWebhook? = null)

/**
 * A webhook receiver built once: secrets (current first; during a rotation the previous one as
 * `WebhookSecret(previous, validUntil = previousSecretValidUntil)`), the dedup namespace (your
 * organization, subscription or tenant), a [DedupStore] and the [handler] that stores a
 * delivery's effect. [receive] returns the status to answer. The handler runs once per new
 * delivery; when it throws, its claims are released and the answer is 500, so the service
 * redelivers and that attempt is processed. Processing is at least once: a commit that still
 * fails after its retries is answered 503 and the redelivery runs the handler again (make the
 * handler idempotent).
 */
class WebhookReceiver(
    secrets: Collection<WebhookSecret>,
    private val namespace: String,
    private val store: DedupStore = InMemoryDedupStore(),
    toleranceSeconds: Long? = null,
    maxBodyBytes: Long? = null,
    private val onError: (Exception, VerifiedWebhook) -> Unit = { e, d ->
        System.err.println("royaltykit: webhook handler failed for ${d.deliveryId}: $e")
    },
    private val handler: (VerifiedWebhook) -> Unit,
) : AutoCloseable {
    /** A receiver for plain secrets, which never expire (current first). */
    constructor(
        secrets: List<String>,
        namespace: String,
        store: DedupStore = InMemoryDedupStore(),
        toleranceSeconds: Long? = null,
        maxBodyBytes: Long? = null,
        onError: (Exception, VerifiedWebhook) -> Unit = { e, d ->
            System.err.println("royaltykit: webhook handler failed for ${d.deliveryId}: $e")
        },
        handler: (VerifiedWebhook) -> Unit,
    ) : this(secrets.map { WebhookSecret(it) }, namespace, store, toleranceSeconds, maxBodyBytes, onError, handler)

    private val verifier = WebhookVerifier(secrets, toleranceSeconds, maxBodyBytes)

    /** The largest body accepted: read at most one byte more from a request. */
    val maxBodyBytes: Long = verifier.maxBodyBytes()

    /** Receives one delivery (headers with one value per name). */
    fun receive(headers: Map<String, String>, body: ByteArray, now: Long? = null): Receipt =
        perform(verifier.receipt(headers, body, namespace, now, (store as? InMemoryDedupStore)?.window))

    /** Receives one delivery (headers with several values per name: servlet, `HttpExchange`). */
    fun receiveMulti(headers: Map<String, List<String>>, body: ByteArray, now: Long? = null): Receipt =
        perform(verifier.receiptMulti(headers, body, namespace, now, (store as? InMemoryDedupStore)?.window))

    /** Performs the steps of the core's receipt; every rule and every step is the core's. */
    private fun perform(r: WebhookReceipt): Receipt {
        r.use { return drive(r) }
    }

    private fun drive(r: WebhookReceipt): Receipt {
        var step = r.next()
        var delivery: VerifiedWebhook? = null
        while (true) {
            step = when (step) {
                is ReceiptStep.Claim -> outcome { store.claim(step.key) }.let { if (it == null) r.storeFailed() else r.claimed(it) }
                is ReceiptStep.Release -> { outcome { store.release(step.key) }; r.released() } // a failed release: the lease runs out
                is ReceiptStep.RunHandler -> {
                    // The core asks for the handler only with a verified delivery; were it absent, the
                    // machine answers as for a failed handler (no reply is written here).
                    val d = r.delivery().also { delivery = it }
                    val failure = if (d == null) null else try { handler(d); null } catch (e: Exception) { e }
                    when {
                        d == null -> r.handlerFailed()
                        failure == null -> r.handlerSucceeded()
                        else -> { onError(failure, d); r.handlerFailed() }
                    }
                }
                is ReceiptStep.Commit -> if (outcome { store.commit(step.key) } == null) r.storeFailed() else r.committed()
                is ReceiptStep.Wait -> { Thread.sleep((step.seconds * 1000).toLong()); r.waited() }
                is ReceiptStep.Reply -> return Receipt(step.status.toInt(), step.body, delivery ?: r.delivery())
            }
        }
    }

    /** The store call's value, or null when it threw (the store could not be reached). */
    private inline fun <T : Any> outcome(call: () -> T): T? = try { call() } catch (e: Exception) { null }

    override fun close() = verifier.close()
}
