package dev.royaltykit

import dev.royaltykit.types.*

import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.Test
import java.nio.charset.CharacterCodingException

/**
 * Hostile input through the JVM API: each case gets a RoyaltyKitException with the given code or
 * the documented result, and the library keeps working. Kotlin's types rule out wrong host types;
 * a String holding a lone UTF-16 surrogate is refused by uniffi's string conversion with
 * java.nio.charset.CharacterCodingException before it reaches the core (documented in docs/reference.md).
 */
class HostileTest {
    private val secret = "whsec_hostile"
    private val now = 1_795_320_000L
    private val body = """{"event":"ddex.delivery.failed","resource":{"type":"t","reference":"r","url":"/u"},"occurred_at":"2026-11-22T04:05:06Z"}""".toByteArray()
    private val signed = signWebhook(secret, body, now, "dlv_h")
    private val big = "x".repeat(10 * 1024 * 1024)
    private val verifier = WebhookVerifier(listOf(secret))
    private val tenant = "0f8fad5b-d9cb-469f-a165-70867728950e"

    private sealed class Want {
        data class Code(val code: String) : Want()
        data class Value(val value: Any?) : Want()
        data class Throws(val type: Class<out Throwable>) : Want()
    }

    private val cases: List<Triple<String, () -> Any?, Want>> = listOf(
        Triple("empty header map", { verifier.verify(emptyMap(), body, now) }, Want.Code("missing_header")),
        Triple("empty everything", { verifier.verify(emptyMap(), ByteArray(0), 0) }, Want.Code("missing_header")),
        Triple("10 MB body", { verifier.verify(signed, big.toByteArray(), now) }, Want.Code("payload_too_large")),
        Triple("10 MB signature", { verifier.verify(signed + ("Service-Webhook-Signature" to big), body, now) }, Want.Code("invalid_signature_header")),
        Triple("10 MB delivery id", { verifier.verify(signed + ("Service-Webhook-Id" to big), body, now) }, Want.Code("invalid_header")),
        Triple("10 MB timestamp", { verifier.verify(signed + ("Service-Webhook-Timestamp" to big), body, now) }, Want.Code("invalid_timestamp")),
        Triple("now Long.MIN_VALUE", { verifier.verify(signed, body, Long.MIN_VALUE) }, Want.Code("timestamp_too_new")),
        Triple("now Long.MAX_VALUE", { verifier.verify(signed, body, Long.MAX_VALUE) }, Want.Code("timestamp_too_old")),
        Triple("no secrets", { WebhookVerifier(emptyList<String>()) }, Want.Code("invalid_secret")),
        Triple("an empty secret", { WebhookVerifier(listOf("")) }, Want.Code("invalid_secret")),
        Triple("tolerance Long.MIN_VALUE", { WebhookVerifier(listOf(secret), Long.MIN_VALUE) }, Want.Code("invalid_argument")),
        Triple("maxBodyBytes -1", { WebhookVerifier(listOf(secret), null, -1) }, Want.Code("invalid_argument")),
        Triple("conflicting ids in a multimap", { verifier.verifyMulti(signed.mapValues { listOf(it.value) } + ("Service-Webhook-Id" to listOf("a", "b")), body, now) }, Want.Code("invalid_header")),
        Triple("empty value lists", { verifier.verifyMulti(signed.mapValues { emptyList<String>() }, body, now) }, Want.Code("missing_header")),
        Triple("a malformed packed delivery", { verifier.verifyPacked(byteArrayOf(1, 0, 0)) }, Want.Code("invalid_argument")),
        Triple("a packed delivery claiming 2^31 headers", { verifier.verifyPacked(byteArrayOf(0, 0x7f, -1, -1, -1)) }, Want.Code("invalid_argument")),
        Triple("tampered body", { verifier.verify(signed, body + 0x20, now) }, Want.Code("no_matching_signature")),
        Triple("lone surrogate in a header", { verifier.verify(signed + ("Service-Webhook-Id" to "a\uD800b"), body, now) }, Want.Throws(CharacterCodingException::class.java)),
        Triple("lone surrogate in a secret", { WebhookVerifier(listOf("\uDFFF")) }, Want.Throws(CharacterCodingException::class.java)),
        Triple("sign with a negative timestamp", { signWebhook(secret, body, -1, "d") }, Want.Code("invalid_argument")),
        Triple("sign with an empty delivery id", { signWebhook(secret, body, now, "") }, Want.Code("invalid_argument")),
        Triple("DedupWindow capacity 0", { DedupWindow(0, 1) }, Want.Code("invalid_argument")),
        Triple("DedupWindow ttl 0", { DedupWindow(1, 0) }, Want.Code("invalid_argument")),
        Triple("empty dedup key", { DedupWindow(1, 1).checkAndInsert("", now) }, Want.Code("invalid_argument")),
        Triple("10 MB dedup key", { DedupWindow(1, 1).checkAndInsert(big, now) }, Want.Code("invalid_argument")),
        Triple("empty namespace", { deliveryKey("", "x") }, Want.Code("invalid_argument")),
        Triple("a 10 MB request id", { idempotencyKey("t", "op", "[".repeat(10 * 1024 * 1024)) }, Want.Code("invalid_argument")),
        Triple("backoff attempt 0", { backoffDelay(0, 0.5) }, Want.Code("invalid_argument")),
        Triple("backoff random NaN", { backoffDelay(1, Double.NaN) }, Want.Code("invalid_argument")),
        Triple("status 1000", { decideRetry(RetryInput(retryClass = RetryClass.READ, attempt = 1, status = 1000)) }, Want.Code("invalid_argument")),
        Triple("Retry-After with a NUL", { parseRetryAfter("\u0000", now) }, Want.Value(null)),
        Triple("unknown operation", { buildRequest("nope", RequestParams()) }, Want.Code("unknown_operation")),
        Triple("10 MB path parameter", { buildRequest("getPlatformExport", RequestParams(path = mapOf("export" to big), token = BearerToken.reports("t", tenant), tenantId = tenant)) }, Want.Code("invalid_parameter")),
        Triple("10 MB error body keeps 4 KiB", { parseApiError(Api.REPORTS, 500, emptyMap(), big.toByteArray()).rawBody.length <= 4 * 1024 + 1 }, Want.Value(true)),
        Triple("poll attempt -1", { exportPollDecision("queued", -1, 0.5) }, Want.Code("invalid_argument")),
    )

    @Test
    fun hostileInputGetsTypedErrorsAndTheLibraryKeepsWorking() {
        assertTrue(cases.size >= 30)
        for ((name, call, want) in cases) {
            when (want) {
                is Want.Value -> assertEquals(name, want.value, call())
                is Want.Code -> try { call(); fail("$name: accepted") } catch (e: RoyaltyKitException) { assertEquals(name, want.code, e.code) }
                is Want.Throws -> try { call(); fail("$name: accepted") } catch (e: Throwable) { assertTrue("$name: $e", want.type.isInstance(e)) }
            }
            assertEquals(name, "dlv_h", verifier.verify(signed, body, now).deliveryId)
        }
    }
}
