package dev.royaltykit

import dev.royaltykit.types.*

import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertNotEquals
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.Test
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger

/** The Kotlin surface: verifier object, defaults, exceptions, threads. */
class ApiTest {
    private val secret = "whsec_kotlin_test_secret"
    private val now = 1_763_784_000L
    private val body = """{"event":"ddex.delivery.rejected","resource":{"type":"ddex_message","reference":"3f2b8c1e-4d5a-4b6c-8e7f-9a0b1c2d3e4f","url":"/api/v1/ddex/messages/3f2b8c1e-4d5a-4b6c-8e7f-9a0b1c2d3e4f"},"occurred_at":"2026-11-22T04:00:00Z"}"""
        .toByteArray()
    private val signed = signWebhook(secret, body, now, "dlv_kt_1")

    @Test
    fun signThenVerifyWithTheVerifierObject() {
        assertEquals(setOf("Service-Webhook-Id", "Service-Webhook-Timestamp", "Service-Webhook-Signature"), signed.keys)
        WebhookVerifier(listOf(secret, "previous")).use { v ->
            val r = v.verify(signed, body, now)
            assertEquals("dlv_kt_1", r.deliveryId)
            assertEquals(0u, r.secretIndex)
            assertEquals("ddex.delivery.rejected", r.event.name)
            assertEquals(java.time.Instant.parse("2026-11-22T04:00:00Z").epochSecond, r.event.occurredAt)
            assertEquals(contentKey(secret, now.toString(), body), r.contentKey)
            // header names in any case
            assertEquals("dlv_kt_1", v.verify(signed.mapKeys { it.key.lowercase() }, body, now).deliveryId)
        }
    }

    @Test
    fun defaultsUseTheSystemClockAndRandomIds() {
        val h = signWebhook(secret, body)
        assertTrue(Math.abs(h.getValue("Service-Webhook-Timestamp").toLong() - System.currentTimeMillis() / 1000) < 5)
        assertEquals(36, h.getValue("Service-Webhook-Id").length)
        assertNotEquals(h["Service-Webhook-Id"], signWebhook(secret, body)["Service-Webhook-Id"])
        assertEquals(h["Service-Webhook-Id"], WebhookVerifier(listOf(secret)).verify(h, body).deliveryId)
    }

    @Test
    fun errorsAreSealedExceptionsWithCodes() {
        val v = WebhookVerifier(listOf(secret))
        try {
            v.verify(signed, body, now + 1000); fail("accepted a late delivery")
        } catch (e: RoyaltyKitException.Webhook) {
            assertEquals("timestamp_too_old", e.code)
            assertEquals(1000L, e.skewSeconds)
            assertEquals(300uL, e.limit)
            assertTrue(e.message!!.contains("1000 s"))
        }
        val err: RoyaltyKitException = try {
            v.verify(signed + ("Service-Webhook-Id" to ""), body, now); null
        } catch (e: RoyaltyKitException) { e } ?: throw AssertionError("accepted")
        assertEquals("missing_header", err.code)
        try {
            WebhookVerifier(listOf(secret), toleranceSeconds = -1); fail()
        } catch (e: RoyaltyKitException.InvalidArgument) {
            assertEquals("invalid_argument", e.code); assertEquals("tolerance_seconds", e.argument)
        }
    }

    @Test
    fun secretsNeverAppearInErrorsOrResults() {
        val s = "whsec_DO_NOT_LEAK_4242"
        val texts = mutableListOf<String>()
        for (f in listOf(
            { WebhookVerifier(listOf(s)).verify(signed, body, now).toString() },
            { WebhookVerifier(listOf(s)).verify(signWebhook(s, body, now), body, now + 999).toString() },
            { WebhookVerifier(listOf(s, "")).toString() },
            { WebhookVerifier(listOf(s)).verify(signWebhook(s, body, now), body, now).toString() },
        )) {
            try { texts += f() } catch (e: RoyaltyKitException) { texts += e.toString(); texts += e.message ?: "" }
        }
        assertFalse(texts.joinToString("\n"), texts.any { it.contains(s) })
    }

    @Test
    fun rotationHelper() {
        // secrets carrying their expiry: the previous one keeps the rotation's valid-until
        fun view(l: List<WebhookSecret>) = l.map { it.secret to it.validUntil }
        assertEquals(listOf("new" to null, "old" to now + 300), view(activeSecrets("new", "old", now + 300, now)))
        assertEquals(listOf("new" to null), view(activeSecrets("new", "old", now + 300, now + 301)))
        assertEquals(listOf("new" to null), view(activeSecrets("new")))
        assertEquals(view(activeSecrets("new", "old", now + 300, now)),
            view(activeSecrets("new", "old", java.time.Instant.ofEpochSecond(now + 300).toString(), now)))
    }

    @Test
    fun replayKeys() {
        val v = WebhookVerifier(listOf(secret))
        val original = v.verify(signed, body, now)
        val rb = String(body).dropLast(1).plus(",\"replay_of\":\"dlv_kt_1\"}").toByteArray()
        val replay = v.verify(signWebhook(secret, rb, now + 60, "dlv_kt_2"), rb, now + 60)
        assertEquals("dlv_kt_1", replay.event.replayOf)
        assertEquals(eventKey("org", original.event), eventKey("org", replay.event))
        assertNotEquals(deliveryKey("org", original.deliveryId), deliveryKey("org", replay.deliveryId))
        val forged = v.verify(signed + ("Service-Webhook-Id" to "fresh"), body, now)
        assertEquals(original.contentKey, forged.contentKey)
    }

    @Test
    fun dedupWindowIsThreadSafe() {
        val w = DedupWindow(1000, 3600)
        val firsts = AtomicInteger()
        val pool = Executors.newFixedThreadPool(8)
        repeat(8) { pool.submit { for (i in 0 until 500) if (w.checkAndInsert("k$i", now)) firsts.incrementAndGet() } }
        pool.shutdown()
        assertTrue(pool.awaitTermination(60, TimeUnit.SECONDS))
        assertEquals(500, firsts.get())
        assertEquals(500L, w.size())
        assertTrue(w.checkAndInsert("new"))
    }

    @Test
    fun survivesHostileInputThenWorks() {
        val v = WebhookVerifier(listOf(secret))
        for (f in listOf(
            { v.verify(mapOf("Service-Webhook-Signature" to "v1=".repeat(100_000)), body, now) },
            { v.verify(signed, ByteArray(10 * 1024 * 1024), now) },
            { v.verify(emptyMap(), ByteArray(0), Long.MIN_VALUE) },
            { v.verify(signed, body, Long.MAX_VALUE) },
        )) {
            try { f() } catch (e: RoyaltyKitException) { assertTrue(e.code.isNotEmpty()) }
        }
        assertEquals("dlv_kt_1", v.verify(signed, body, now).deliveryId)
    }

    @Test
    fun eachRequestGetsItsOwnRandomKey() {
        val params = RequestParams(body = """{"format":"csv"}""".toByteArray(), token = BearerToken.reports("t", "0f8fad5b-d9cb-469f-a165-70867728950e"), tenantId = "0f8fad5b-d9cb-469f-a165-70867728950e")
        val a = buildRequest("createPlatformExport", params)
        val b = buildRequest("createPlatformExport", params)
        assertTrue(a.idempotencyKey()!!.matches(Regex("idem_[0-9a-f]{32}")))
        assertNotEquals("an identical second create is not a replay", a.idempotencyKey(), b.idempotencyKey())
        assertFalse(a.idempotencyKeySent())
        val withId = RequestParams(body = params.body, token = BearerToken.reports("t", params.tenantId!!), tenantId = params.tenantId, requestId = "job-1")
        assertEquals(buildRequest("createPlatformExport", withId).idempotencyKey(), buildRequest("createPlatformExport", withId).idempotencyKey())
    }

    @Test
    fun aSecretPastItsValidUntilNeverVerifies() {
        val body = """{"event":"ddex.delivery.failed","resource":{"type":"ddex_message","reference":"r","url":"/api/v1/ddex/messages/r"},"occurred_at":"2026-11-22T04:00:00Z"}""".toByteArray()
        val headers = signWebhook("whsec_previous", body, timestamp = 1_000L, deliveryId = "dlv_1")
        val secrets = listOf(WebhookSecret("whsec_current"), WebhookSecret("whsec_previous", validUntil = 1_000L))
        assertEquals(1u, verifyWebhook(headers, body, secrets, now = 1_000L).secretIndex)
        for (verify in listOf(
            { verifyWebhook(headers, body, secrets, now = 1_001L) },
            { WebhookVerifier(secrets).use { it.verify(headers, body, 1_001L) } },
        )) {
            try {
                verify(); fail("a secret past its validUntil verified")
            } catch (e: RoyaltyKitException) {
                assertEquals("no_matching_signature", e.code)
            }
        }
        var handled = 0
        WebhookReceiver(secrets, namespace = "org") { handled++ }.use { r ->
            assertEquals(401, r.receive(headers, body, 1_001L).status)
            assertEquals(0, handled)
            assertEquals(200, r.receive(headers, body, 1_000L).status) // inside the overlap: processed
            assertEquals(1, handled)
        }
    }

    @Test
    fun aReceiverReportsEachDeliveryOutcome() {
        val body = """{"event":"ddex.delivery.acknowledged","resource":{"type":"ddex_message","reference":"m1","url":"/api/v1/ddex/messages/m1"},"occurred_at":"2026-11-22T04:00:00Z"}""".toByteArray()
        val headers = signWebhook("whsec_current", body, timestamp = 1_000L, deliveryId = "dlv_events")
        val forged = signWebhook("whsec_other", body, timestamp = 1_000L, deliveryId = "dlv_forged")
        val events = mutableListOf<ReceiptEvent>()
        WebhookReceiver(listOf("whsec_current"), namespace = "org-events") { }.use { r ->
            r.onEvent = { events.add(it) }
            assertEquals(200, r.receive(headers, body, 1_000L).status)
            assertEquals(200, r.receive(headers, body, 1_000L).status)
            assertEquals(401, r.receive(forged, body, 1_000L).status)
        }
        assertEquals(listOf("processed", "duplicate", "rejected"), events.map { it.outcome })
        assertEquals(ReceiptEvent("processed", 200, "dlv_events", "ddex.delivery.acknowledged"), events[0])
        assertEquals("receipt", events[0].kind)
        assertEquals(null, events[2].deliveryId)
    }

    @Test
    fun aStoreThatFailsAnswers503AndLogsTheOutageWithItsCause() {
        val body = """{"event":"ddex.delivery.acknowledged","resource":{"type":"ddex_message","reference":"m1","url":"/api/v1/ddex/messages/m1"},"occurred_at":"2026-11-22T04:00:00Z"}""".toByteArray()
        val headers = signWebhook("whsec_current", body, timestamp = 1_000L, deliveryId = "dlv_down")
        class Down : DedupStore {
            override fun claim(key: String): ClaimState = throw java.net.ConnectException("the store is down")
            override fun commit(key: String) = Unit
            override fun release(key: String) = Unit
        }
        val records = mutableListOf<java.util.logging.LogRecord>()
        val capture = object : java.util.logging.Handler() {
            override fun publish(record: java.util.logging.LogRecord) { records.add(record) }
            override fun flush() = Unit
            override fun close() = Unit
        }
        val logger = java.util.logging.Logger.getLogger("dev.royaltykit")
        logger.addHandler(capture)
        try {
            WebhookReceiver(listOf("whsec_current"), namespace = "org", store = Down()) { }.use { r ->
                assertEquals(503, r.receive(headers, body, 1_000L).status)
            }
        } finally {
            logger.removeHandler(capture)
        }
        val record = records.single()
        assertEquals(java.util.logging.Level.SEVERE, record.level)
        assertTrue(record.message, record.message.contains("Down") && record.message.contains("claim"))
        assertTrue(record.thrown is java.net.ConnectException)
        assertFalse(record.message.contains("whsec_"))
    }

    @Test
    fun aReportingTokenRemembersItsTenant() {
        val tenantA = "0f8fad5b-d9cb-469f-a165-70867728950e"
        val tenantB = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
        val token = parseTokenResponse(200, mapOf("Cache-Control" to "no-store"), """{"access_token":"tok_r","token_type":"Bearer","expires_in":60}""".toByteArray(), tenantA)
        assertEquals(tenantA, token.tenantId())
        val sent = buildRequest("listPlatformExports", RequestParams(token = token.bearer()))
        assertEquals(tenantA, sent.headers().first { it.name == "X-Tenant-ID" }.value)
        for (t in listOf(token.bearer(), BearerToken.reports("tok_c", tenantA))) {
            try {
                buildRequest("listPlatformExports", RequestParams(token = t, tenantId = tenantB)); fail("a token of tenant A was sent for tenant B")
            } catch (e: RoyaltyKitException.Request) {
                assertEquals("invalid_parameter", e.code)
                assertFalse(e.message!!.contains("tok_"))
            }
        }
        assertEquals(tenantA, BearerToken.reports("tok_c", tenantA).tenantId())
    }

    @Test
    fun tokensAreTypedByTheApiThatIssuedThem() {
        val tenant = "0f8fad5b-d9cb-469f-a165-70867728950e"
        val reporting = parseTokenResponse(200, mapOf("Cache-Control" to "no-store"), """{"access_token":"tok_r","token_type":"Bearer","expires_in":60}""".toByteArray(), tenant)
        val enterprise = parseEnterpriseTokenResponse(200, emptyMap(), """{"token":"tok_e","expires_at":null}""".toByteArray())
        fun auth(d: RequestDescriptor) = d.headers().first { it.name == "Authorization" }.value
        assertEquals("Bearer tok_r", auth(buildRequest("listPlatformExports", RequestParams(token = reporting.bearer(), tenantId = tenant))))
        assertEquals("Bearer tok_e", auth(buildRequest("listEnterpriseSubscriptions", RequestParams(token = enterprise.bearer()))))
        val cached = BearerToken.enterprise("tok_c")
        assertEquals(Api.ENTERPRISE, cached.api())
        assertFalse(cached.toString().contains("tok_c") || cached.describe().contains("tok_c"))
        for ((op, params) in listOf(
            "listEnterpriseSubscriptions" to RequestParams(token = reporting.bearer()),
            "listPlatformExports" to RequestParams(token = enterprise.bearer(), tenantId = tenant),
        )) {
            try {
                buildRequest(op, params); fail("$op accepted the other API's token")
            } catch (e: RoyaltyKitException.Request) {
                assertEquals("invalid_parameter", e.code); assertEquals("token", e.parameter); assertFalse(e.message!!.contains("tok_"))
            }
        }
    }

    @Test
    fun catalogAndThrowableApiError() {
        val ops = operations()
        assertEquals(44, ops.count { it.api == Api.REPORTS })
        assertEquals(15, ops.count { it.api == Api.ENTERPRISE })
        assertEquals("exports:write", operation("getPlatformExport").scope)
        val e = parseApiError(Api.REPORTS, 503, mapOf("Retry-After" to "7"), ByteArray(0))
        try { throw e.toException() } catch (x: RoyaltyKitException) { assertEquals("api_error", x.code); assertTrue(x.message!!.contains("503")); assertEquals(500, (x as RoyaltyKitException.Api).httpStatus.toInt()) }
    }
}
