// Hand-written Kotlin conveniences over the uniffi-generated API: naming only, no rules.
package dev.royaltykit

/** The stable error code of any royaltykit error, the same as in Rust, JS and Python. */
val RoyaltyKitException.code: String
    get() = when (this) {
        is RoyaltyKitException.Webhook -> this.code
        is RoyaltyKitException.InvalidArgument -> this.code
        is RoyaltyKitException.Request -> this.code
        is RoyaltyKitException.TokenResponse -> this.code
        is RoyaltyKitException.Api -> this.code
        is RoyaltyKitException.ExportState -> this.code
        is RoyaltyKitException.ExportDownload -> this.code
        is RoyaltyKitException.Host -> this.code
    }

/** This parsed error as a throwable `RoyaltyKitException.Api`. */
fun ApiError.toException(): RoyaltyKitException.Api =
    RoyaltyKitException.Api("api_error", "$status $message ($kind)", this)

/** [signWebhook] with one secret. */
fun signWebhook(secret: String, body: ByteArray, timestamp: Long? = null, deliveryId: String? = null): Map<String, String> =
    signWebhook(listOf(secret), body, timestamp, deliveryId)

/**
 * Verifies a delivery: `headers` as received (names case-insensitive), `body` the exact raw
 * bytes, `now` in Unix seconds (default: the system clock). Returns the verified delivery or
 * throws [RoyaltyKitException.Webhook] with a stable `code`. One JNA crossing per delivery.
 */
fun WebhookVerifier.verify(headers: Map<String, String>, body: ByteArray, now: Long? = null): VerifiedWebhook =
    verifyPacked(packDelivery(headers.entries.asSequence().map { it.key to it.value }, body, now))

/** As [verify], for headers with several values per name (servlet, `HttpExchange`). */
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
