// Hand-written Kotlin conveniences over the uniffi-generated API: naming only, no rules.
package dev.royaltykit

import dev.royaltykit.types.ApiError
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
): VerifiedWebhook {
    val multi: Map<String, List<String>> = headers.mapValues { listOf(it.value) }
    return verifyWebhook(multi, body, secrets, now, toleranceSeconds, maxBodyBytes)
}

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
