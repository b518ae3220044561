package dev.royaltykit

import dev.royaltykit.types.*

import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.Test
import java.time.Instant

/**
 * Secrets whose expiry cannot be lost, rotation secrets carrying theirs, the checked resource
 * path, the one timestamp parser, header lists for `responseNotices`, and receivers that dedup by
 * `Service-Webhook-Id` (the content key opt-in).
 */
class Issue39Test {
    private val now = 1_795_320_000L
    private val secret = "whsec_i39"

    private fun body(ref: String = "m1") =
        """{"event":"ddex.delivery.acknowledged","resource":{"type":"ddex_message","reference":"$ref","url":"/api/v1/ddex/messages/$ref"},"occurred_at":"2026-11-22T04:00:00Z"}""".toByteArray()

    private fun refused(what: String, block: () -> Unit): RoyaltyKitException.InvalidArgument {
        try {
            block()
        } catch (e: RoyaltyKitException.InvalidArgument) {
            assertEquals(what, "invalid_argument", e.code)
            return e
        }
        fail("$what was accepted")
        throw AssertionError()
    }

    @Test
    fun aValidUntilThatIsNotATimeIsRefusedAtConstruction() {
        for ((what, make) in listOf<Pair<String, () -> WebhookSecret>>(
            "NaN" to { WebhookSecret(secret, Double.NaN) },
            "Infinity" to { WebhookSecret(secret, Double.POSITIVE_INFINITY) },
            "-Infinity" to { WebhookSecret(secret, Double.NEGATIVE_INFINITY) },
            "an unset variable's text" to { WebhookSecret(secret, "") },
            "text that is no time" to { WebhookSecret(secret, "tomorrow") },
            "a number as text" to { WebhookSecret(secret, "1795320300") },
        )) {
            val e = refused(what) { make() }
            val m = e.message ?: ""
            assertTrue("$what: $m", m.contains("Unix seconds") && m.contains("Instant") && m.contains("ISO 8601"))
            assertTrue("$what: the secret is never shown: $m", !m.contains(secret))
        }
    }

    @Test
    fun aValidUntilAsSecondsAnInstantOrIsoTextIsTheSameSecond() {
        val until = now + 300
        val forms = listOf(
            WebhookSecret(secret, until),
            WebhookSecret(secret, until + 0.75),
            WebhookSecret(secret, Instant.ofEpochSecond(until, 500_000_000)),
            WebhookSecret(secret, Instant.ofEpochSecond(until).toString()),
            WebhookSecret(secret, "20261122T040500Z"),
            WebhookSecret(secret, "2026-11-22T04:05:00+0000"),
        )
        assertEquals(List(6) { until }, forms.map { it.validUntil })
        val signed = signWebhook(secret, body(), now, "dlv_until")
        WebhookVerifier(listOf(WebhookSecret(secret, Instant.ofEpochSecond(until).toString()))).use { v ->
            assertEquals("dlv_until", v.verify(signed, body(), now).deliveryId)
        }
        // past its valid-until it never verifies
        val late = signWebhook(secret, body(), until + 1, "dlv_late")
        try {
            verifyWebhook(late, body(), listOf(WebhookSecret(secret, Instant.ofEpochSecond(until).toString())), until + 1)
            fail("an expired secret verified")
        } catch (e: RoyaltyKitException.Webhook) {
            assertEquals("no_matching_signature", e.code)
        }
    }

    @Test
    fun theOneTimestampParserReadsEveryFormTheServicesSend() {
        for (form in listOf("2026-11-22T04:05:06Z", "2026-11-22T04:05:06+0000", "20261122T040506Z", "Sun, 22 Nov 2026 04:05:06 GMT")) {
            assertEquals(form, 1_795_320_306L, parseTimestamp(form))
        }
        assertEquals(null, parseTimestamp("tomorrow"))
    }

    @Test
    fun rotationSecretsCarryTheirExpiryIntoTheVerifier() {
        val until = now + 300
        val active = activeSecrets("whsec_new", "whsec_old", until, now)
        assertEquals(listOf(null, until), active.map { it.validUntil })
        assertTrue(active.none { it.toString().contains("whsec") })
        WebhookVerifier(active).use { v ->
            val old = body()
            assertEquals(1u, v.verify(signWebhook("whsec_old", old, now, "dlv_old"), old, now).secretIndex)
            // the verifier built at rotation time stops accepting the old secret after its second
            try {
                v.verify(signWebhook("whsec_old", old, until + 1, "dlv_old2"), old, until + 1)
                fail("the rotated-out secret verified after its valid-until")
            } catch (e: RoyaltyKitException.Webhook) {
                assertEquals("no_matching_signature", e.code)
            }
        }
    }

    @Test
    fun theResourcePathIsCheckedBeforeAnyFetch() {
        assertEquals("/api/v1/ddex/messages/m1", resourcePath("/api/v1/ddex/messages/m1"))
        for (url in listOf("https://evil.example/steal", "//evil.example/x", "/api/v1/../admin", "/api/v1/a%2Fb", "/api/v1\\x", "/other/path")) {
            try {
                resourcePath(url)
                fail("$url was accepted")
            } catch (e: RoyaltyKitException.Webhook) {
                assertEquals(url, "invalid_resource_url", e.code)
            }
        }
        WebhookVerifier(listOf(secret)).use { v ->
            val ok = v.verify(signWebhook(secret, body(), now, "dlv_p"), body(), now)
            assertEquals("/api/v1/ddex/messages/m1", ok.event.resourcePath())
            val evil = """{"event":"ddex.delivery.acknowledged","resource":{"type":"ddex_message","reference":"m1","url":"https://evil.example/steal"},"occurred_at":"2026-11-22T04:00:00Z"}""".toByteArray()
            val verified = v.verify(signWebhook(secret, evil, now, "dlv_e"), evil, now) // it verifies: the check is the path's
            try {
                verified.event.resourcePath()
                fail("another origin was accepted")
            } catch (e: RoyaltyKitException.Webhook) {
                assertEquals("invalid_resource_url", e.code)
            }
        }
    }

    @Test
    fun responseNoticesTakeAHeaderListWithTwoLinkLines() {
        val lines = listOf(
            "Deprecation" to "@1795320000",
            "Link" to "<https://docs.example/a>; rel=\"alternate\"",
            "Link" to "<https://api.example/v2>; rel=\"successor-version\"",
        )
        val fromList = responseNotices(lines)
        assertEquals(fromList, responseNotices(lines.groupBy({ it.first }, { it.second })))
        assertEquals(fromList, responseNotices(lines.map { Param(it.first, it.second) }))
        // the successor named on the second Link line is found: no `no_replacement` issue
        assertTrue("$fromList", fromList.link!!.contains("successor-version") && fromList.link!!.contains("alternate"))
        assertTrue("$fromList", NoticeIssue.NO_REPLACEMENT !in fromList.policyIssues)
        assertTrue(NoticeIssue.NO_REPLACEMENT in responseNotices(lines.take(2)).policyIssues)
    }

    private fun twins(claimContentKey: Boolean): Pair<List<Int>, List<String>> {
        val handled = ArrayList<String>()
        val b = body("same-second")
        // two deliveries of two changes in one second: byte-identical body and timestamp, two ids
        val first = signWebhook(secret, b, now, "dlv_twin_1")
        val second = signWebhook(secret, b, now, "dlv_twin_2")
        WebhookReceiver(listOf(secret), "org-1", claimContentKey = claimContentKey) { handled += it.deliveryId }.use { r ->
            val statuses = listOf(r.receive(first, b, now), r.receive(second, b, now), r.receive(second, b, now)).map { it.status }
            return statuses to handled
        }
    }

    @Test
    fun twoDeliveriesWithOneBodyAndTimestampAreBothProcessedByDefault() {
        assertEquals(listOf(200, 200, 200) to listOf("dlv_twin_1", "dlv_twin_2"), twins(claimContentKey = false))
    }

    @Test
    fun withTheContentKeyClaimedTheSecondTwinIsOnlyAcknowledged() {
        assertEquals(listOf(200, 200, 200) to listOf("dlv_twin_1"), twins(claimContentKey = true))
    }

    @Test
    fun aReceiptClaimsTheContentKeyOnlyWhenAsked() {
        WebhookVerifier(listOf(secret)).use { v ->
            val h = signWebhook(secret, body(), now, "dlv_keys")
            val plain = v.receipt(h, body(), "org-1", now)
            val claim = plain.next() as ReceiptStep.Claim
            assertEquals(deliveryKey("org-1", "dlv_keys"), claim.key)
            assertTrue(plain.report(ReceiptOutcome.Claimed(ClaimState.NEW)) is ReceiptStep.RunHandler)
            val both = v.receipt(h, body(), "org-1", now, claimContentKey = true)
            assertTrue(both.report(ReceiptOutcome.Claimed(ClaimState.NEW)) is ReceiptStep.Claim)
            val verified = v.verify(h, body(), now)
            assertEquals(listOf(deliveryKey("org-1", "dlv_keys")), planReceipt("org-1", verified).keys)
            assertEquals(listOf(deliveryKey("org-1", "dlv_keys"), verified.contentKey), planReceipt("org-1", verified, true).keys)
        }
    }
}
