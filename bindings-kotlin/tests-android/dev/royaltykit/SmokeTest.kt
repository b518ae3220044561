package dev.royaltykit

import dev.royaltykit.types.*
import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.Test

/**
 * The small suite every platform runs against its artifact: a valid, a tampered, a stale and a
 * rotated delivery, one retry decision and one error body. Plain JUnit 4 with no files, so the
 * same source runs in the JVM suite here (`make test`) and as the Android instrumented test on
 * an emulator (bindings-kotlin/android, .github/workflows/release.yml; not run here).
 */
class SmokeTest {
    private val now = 1_795_320_000L
    private val body = """{"event":"ddex.delivery.acknowledged","resource":{"type":"ddex_message","reference":"5b1f6a0e-2c3d-4e5f-8a9b-0c1d2e3f4a5b","url":"/api/v1/ddex/messages/5b1f6a0e-2c3d-4e5f-8a9b-0c1d2e3f4a5b"},"occurred_at":"2026-11-22T04:00:00Z"}""".toByteArray()

    private fun rejected(code: String, block: () -> Unit) {
        try {
            block()
            fail("expected $code")
        } catch (e: RoyaltyKitException.Webhook) {
            assertEquals(code, e.code)
        }
    }

    @Test
    fun validDelivery() {
        val headers = signWebhook("whsec_current", body, timestamp = now, deliveryId = "dlv_1")
        WebhookVerifier(listOf("whsec_current")).use { verifier ->
            val v = verifier.verify(headers, body, now)
            assertEquals("dlv_1", v.deliveryId)
            assertEquals(0u, v.secretIndex)
            assertEquals("ddex.delivery.acknowledged", v.event.name)
        }
    }

    @Test
    fun tamperedBody() {
        val headers = signWebhook("whsec_current", body, timestamp = now, deliveryId = "dlv_1")
        val tampered = body.copyOf().also { it[it.size - 3] = '1'.code.toByte() }
        rejected("no_matching_signature") { verifyWebhook(headers, tampered, listOf("whsec_current"), now) }
    }

    @Test
    fun staleDelivery() {
        val headers = signWebhook("whsec_current", body, timestamp = now - 600, deliveryId = "dlv_1")
        rejected("timestamp_too_old") { verifyWebhook(headers, body, listOf("whsec_current"), now) }
    }

    @Test
    fun rotatedSecret() {
        val headers = signWebhook("whsec_previous", body, timestamp = now, deliveryId = "dlv_1")
        val v = verifyWebhook(headers, body, listOf("whsec_current", "whsec_previous"), now)
        assertEquals(1u, v.secretIndex)
    }

    @Test
    fun retryDecision() {
        val d = decideRetry(RetryInput(retryClass = RetryClass.READ, attempt = 1, status = 429, headers = mapOf("Retry-After" to "7"), now = now, random = 0.5))
        assertEquals(RetryAction.RETRY, d.action)
        assertEquals(7.0, d.delaySeconds, 0.0)
    }

    @Test
    fun errorBody() {
        val e = parseApiError(Api.ENTERPRISE, 422, mapOf(), """{"success":false,"message":"validation failed","errors":{"name":["is required"]}}""".toByteArray(), now = now)
        assertEquals(ApiErrorKind.VALIDATION, e.kind)
        assertEquals(listOf("is required"), e.fieldErrors["name"])
        assertTrue(e.message.isNotEmpty())
    }
}
