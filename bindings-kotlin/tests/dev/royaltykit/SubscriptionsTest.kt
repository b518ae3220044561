package dev.royaltykit

import com.google.gson.Gson
import com.google.gson.JsonObject
import com.google.gson.JsonParser
import dev.royaltykit.client.EnterpriseClient
import dev.royaltykit.client.HttpTransport
import dev.royaltykit.client.JavaHttpTransport
import dev.royaltykit.coroutines.createSubscriptionAsync
import dev.royaltykit.coroutines.fetchResourceAsync
import dev.royaltykit.coroutines.rotateSecretAsync
import dev.royaltykit.okhttp.OkHttpTransport
import dev.royaltykit.types.ErrorFamily
import dev.royaltykit.types.MachineEvent
import dev.royaltykit.types.Reconcile
import dev.royaltykit.types.RoyaltyKitException
import org.junit.AfterClass
import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertNotEquals
import org.junit.Assert.assertNotNull
import org.junit.Assert.assertNull
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.BeforeClass
import org.junit.Test

/**
 * Webhook subscriptions and their reveal-once secrets (`revealedSecret`, `EnterpriseClient.
 * createSubscription` / `rotateSecret`, their suspending versions) and the canonical fetch of an
 * event's resource (`fetchResource`), through the built jar against the shared fake API
 * (tests/fakeapi/server.py) over real loopback HTTP, with each shipped transport.
 */
class SubscriptionsTest {
    companion object {
        private lateinit var fake: FakeApi
        private val url get() = fake.url

        @BeforeClass @JvmStatic
        fun start() {
            fake = FakeApi()
        }

        @AfterClass @JvmStatic
        fun stop() = fake.close()
    }

    private fun control(what: String, payload: String? = null) = fake.control(what, payload)
    private fun reset(script: String = "{}") = control("reset", script)
    private fun stats() = control("stats")
    private fun requests(op: String) = stats()["requests"].asJsonObject[op]?.asInt ?: 0
    private fun hook(reference: String): JsonObject = stats()["webhooks"].asJsonObject[reference].asJsonObject
    private val clock = fake.clock
    private val sleep = fake.sleep

    private val transports: List<Pair<String, HttpTransport>> = listOf("java.net.http" to JavaHttpTransport(), "OkHttp" to OkHttpTransport())

    /** Every operation's events and how it ended, as the OpenTelemetry add-on would see them. */
    private class Recorded : Telemetry {
        val lines = java.util.Collections.synchronizedList(ArrayList<String>())
        override fun operation(name: String, baseUrl: String): OperationScope {
            lines.add("operation $name $baseUrl")
            return object : OperationScope {
                override fun event(event: MachineEvent) { lines.add(event.toString()) }
                override fun end(error: Throwable?) { lines.add("end $error ${error?.message}") }
            }
        }
    }

    private fun enterprise(t: HttpTransport = JavaHttpTransport(), events: MutableList<MachineEvent>? = null, telemetry: Telemetry? = null) =
        EnterpriseClient(t, url, "key-1", "secret-1", clock = clock, sleep = sleep, onEvent = { e -> events?.add(e) }, telemetry = telemetry)

    private val endpoint = "https://hooks.example.com/royalties"
    private val events = listOf("ddex.delivery.failed", "ddex.delivery.acknowledged")

    /** Everything a user could print of [r]: it must never hold [secrets]. */
    private fun assertHidden(what: String, secrets: List<String>, vararg shown: Any?) {
        for (s in shown) {
            val text = s.toString()
            for (secret in secrets) assertFalse("$what shows a secret: $text", text.contains(secret))
        }
    }

    @Test
    fun revealedSecretReadsTheBodyAndNeverShowsTheSecret() {
        val body = """{"data":{"reference":"wh_9","secret":"whsec_abc123","active":true,"events":["ddex.delivery.failed"]}}""".toByteArray()
        val r = revealedSecret(body)
        assertEquals("whsec_abc123", r.secret.secret)
        assertNull(r.secret.validUntil)
        assertNull(r.previousValidUntil)
        assertEquals("wh_9", r.reference)
        val record = JsonParser.parseString(r.record).asJsonObject
        assertEquals(true, record["data"].asJsonObject["active"].asBoolean)
        assertFalse(record["data"].asJsonObject.has("secret"))
        assertEquals(listOf("whsec_abc123"), r.secrets().map { it.secret })
        assertEquals(1, r.secrets("whsec_old").size) // a create has no overlap: the previous one is not kept
        assertHidden("printing", listOf("whsec_abc123"), r, r.secret, r.secrets(), r.record, Gson().toJson(r))
        assertTrue(r.toString(), r.toString().startsWith("RevealedSecret(secret=WebhookSecret([redacted]"))

        val rotated = revealedSecret("""{"new_secret":"s2","previous_secret_valid_until":"2026-11-27T10:05:00Z"}""".toByteArray())
        assertEquals(1_795_773_900L, rotated.previousValidUntil)
        val both = rotated.secrets(previous = "s1")
        assertEquals(listOf("s2" to null, "s1" to 1_795_773_900L), both.map { it.secret to it.validUntil })
        assertHidden("printing", listOf("s1", "s2"), rotated, both, Gson().toJson(rotated))

        for (bad in listOf("""{"data":{"token_like":"hunter2"}}""", "[1]", "secret=hunter2", """{"secret":"hunter2","previous_secret_valid_until":"soon"}""")) {
            try {
                revealedSecret(bad.toByteArray())
                fail("accepted $bad")
            } catch (e: RoyaltyKitException.Webhook) {
                assertEquals(bad, "secret_not_revealed", e.code)
                assertEquals(bad, ErrorFamily.WEBHOOK, e.family)
                assertEquals(bad, 500, e.httpStatus.toInt())
                assertHidden("the error", listOf("hunter2"), e, e.message, e.detail)
            }
        }
    }

    @Test
    fun aCreateRevealsTheServersSecretOnceAndNothingPrintsIt() {
        for ((name, t) in transports) {
            reset()
            val seen = ArrayList<MachineEvent>()
            val traced = Recorded()
            val r = enterprise(t, seen, traced).createSubscription("Royalties", endpoint, events)
            val reference = r.reference
            assertNotNull(name, reference)
            val server = hook(reference!!)
            assertEquals(name, server["secret"].asString, r.secret.secret)
            assertNull(name, r.secret.validUntil)
            assertNull(name, r.previousValidUntil)
            val record = JsonParser.parseString(r.record).asJsonObject["data"].asJsonObject
            assertEquals(name, reference, record["reference"].asString)
            assertEquals(name, endpoint, record["endpoint_url"].asString)
            assertEquals(name, events, record["events"].asJsonArray.map { it.asString })
            assertFalse(name, record.has("secret"))
            assertEquals(name, 1, stats()["webhooks_created"].asInt)
            assertTrue("$name ${seen.map { it.kind }}", seen.any { it.kind == "send" && it.operation == "createEnterpriseWebhook" })
            assertTrue(name, traced.lines.contains("end null null"))
            assertHidden(name, listOf(r.secret.secret), r, r.secrets(), r.record, Gson().toJson(r), seen, traced.lines)
        }
    }

    @Test
    fun theNameAndEventsAreSentAsJsonWhateverTheyHold() {
        reset()
        val odd = "Royalties \"EU\" \\ tab\t new\nline é 🎵"
        val r = enterprise().createSubscription(odd, endpoint, listOf("ddex.delivery.failed", "a\"b"))
        val server = hook(r.reference!!)
        assertEquals(odd, server["name"].asString)
        assertEquals(listOf("ddex.delivery.failed", "a\"b"), server["events"].asJsonArray.map { it.asString })
        assertEquals(server["secret"].asString, r.secret.secret)
        // a lone surrogate (no character at all) is refused before any request, never sent as '?'
        try {
            enterprise().createSubscription("half \uD83C", endpoint, events)
            fail("a lone surrogate was sent")
        } catch (e: RoyaltyKitException.Request) {
            assertEquals("invalid_parameter", e.code)
        }
        assertEquals(1, requests("createEnterpriseWebhook"))
    }

    @Test
    fun anEndpointOutsideThePublicInternetIsRefusedBeforeAnyRequest() {
        reset()
        for (bad in listOf("http://hooks.example.com/x", "https://127.0.0.1/x", "https://user:pw@hooks.example.com/x")) {
            try {
                enterprise().createSubscription("x", bad, events)
                fail("accepted $bad")
            } catch (e: RoyaltyKitException.Request) {
                assertEquals(bad, "invalid_endpoint_url", e.code)
            }
        }
        assertEquals(0, requests("createEnterpriseWebhook"))
    }

    @Test
    fun aCreateWhoseAnswerWasLostIsSentAgainWithItsKeyAndRevealsTheSameSecret() {
        for ((name, t) in transports) {
            reset("""{"faults":[{"op":"createEnterpriseWebhook","nth":1,"do":"drop_after_apply"}]}""")
            val seen = ArrayList<MachineEvent>()
            val r = enterprise(t, seen).createSubscription("Royalties", endpoint, events)
            val s = stats()
            assertEquals(name, 1, s["webhooks_created"].asInt)
            assertEquals(name, 1, s["idempotent_replays"].asInt)
            assertEquals(name, 2, s["requests"].asJsonObject["createEnterpriseWebhook"].asInt)
            assertEquals(name, hook(r.reference!!)["secret"].asString, r.secret.secret)
            assertTrue("$name ${seen.map { it.kind }}", "transport_failure" in seen.map { it.kind })
            assertHidden(name, listOf(r.secret.secret), seen)
        }
    }

    @Test
    fun aRequestIdGivesTheSameKeyInAnotherProcess() {
        reset()
        // two clients, as two processes of one API key: the second create is answered as the first
        val first = enterprise().createSubscription("Royalties", endpoint, events, requestId = "sync-1")
        val again = enterprise().createSubscription("Royalties", endpoint, events, requestId = "sync-1")
        val other = enterprise().createSubscription("Royalties", endpoint, events, requestId = "sync-2")
        val s = stats()
        assertEquals(2, s["webhooks_created"].asInt)
        assertEquals(1, s["idempotent_replays"].asInt)
        assertEquals(first.reference, again.reference)
        assertEquals(first.secret.secret, again.secret.secret)
        assertNotEquals(first.reference, other.reference)
    }

    @Test
    fun aRotationRevealsTheNewSecretAndTheReceiverTakesBothUntilTheOverlapEnds() {
        for ((name, t) in transports) {
            reset()
            val client = enterprise(t)
            val created = client.createSubscription("Royalties", endpoint, events)
            val old = created.secret.secret
            val seen = ArrayList<MachineEvent>()
            val rotated = enterprise(t, seen).rotateSecret(created.reference!!)
            val server = hook(created.reference!!)
            assertEquals(name, server["secret"].asString, rotated.secret.secret)
            assertEquals(name, old, server["previous"].asString)
            assertNotEquals(name, old, rotated.secret.secret)
            val until = parseTimestamp(server["previous_valid_until"].asString)
            assertNotNull(name, until)
            assertEquals(name, until, rotated.previousValidUntil)
            assertEquals(name, created.reference, rotated.reference)
            assertEquals(name, 1, stats()["rotations"].asInt)

            val secrets = rotated.secrets(previous = old)
            assertEquals(name, 2, secrets.size)
            assertEquals(name, listOf(rotated.secret.secret to null, old to until), secrets.map { it.secret to it.validUntil })
            val body = """{"event":"ddex.delivery.failed","resource":{"type":"ddex_message","reference":"r1","url":"/api/v1/ddex/messages/r1"},"occurred_at":"2026-11-22T04:00:00Z"}""".toByteArray()
            val before = until!! - 10
            val after = until + 10
            WebhookVerifier(secrets).use { v ->
                // before the overlap ends, a delivery signed with either secret verifies
                assertEquals(name, 1u, v.verify(signWebhook(old, body, before, "d-old"), body, before).secretIndex)
                assertEquals(name, 0u, v.verify(signWebhook(rotated.secret.secret, body, before, "d-new"), body, before).secretIndex)
                // after it, only the new one
                assertEquals(name, 0u, v.verify(signWebhook(rotated.secret.secret, body, after, "d-new-2"), body, after).secretIndex)
                try {
                    v.verify(signWebhook(old, body, after, "d-old-2"), body, after)
                    fail("$name: the previous secret verified after previous_valid_until")
                } catch (e: RoyaltyKitException.Webhook) {
                    assertHidden(name, listOf(old, rotated.secret.secret), e, e.message)
                }
            }
            // and a receiver built from the same list
            val handled = ArrayList<String>()
            WebhookReceiver(secrets, namespace = "org-1") { d -> handled.add(d.deliveryId) }.use { rx ->
                assertEquals(name, 200, rx.receive(signWebhook(old, body, before, "rx-old"), body, before).status)
                assertEquals(name, 200, rx.receive(signWebhook(rotated.secret.secret, body, after, "rx-new"), body, after).status)
                assertNotEquals(name, 200, rx.receive(signWebhook(old, body, after, "rx-old-late"), body, after).status)
            }
            assertEquals(name, listOf("rx-old", "rx-new"), handled)
            assertHidden(name, listOf(old, rotated.secret.secret), rotated, secrets, rotated.record, Gson().toJson(rotated), seen)
        }
    }

    @Test
    fun aRotationWhoseAnswerWasLostIsReconcileRequiredAndNeverSentTwice() {
        for ((name, t) in transports) {
            reset("""{"faults":[{"op":"rotateEnterpriseWebhookSecret","nth":1,"do":"drop_after_apply"}]}""")
            val again = enterprise(t).createSubscription("Royalties", endpoint, events)
            val seen = ArrayList<MachineEvent>()
            val traced = Recorded()
            try {
                enterprise(t, seen, traced).rotateSecret(again.reference!!)
                fail("$name: a lost rotation returned")
            } catch (e: RoyaltyKitException.ReconcileRequired) {
                assertEquals(name, Reconcile.ROTATE_AGAIN, e.reconcile)
                assertEquals(name, "reconcile_required", e.code)
                assertEquals(name, "rotateEnterpriseWebhookSecret", e.operationId)
                assertTrue(name, e.detail.contains("shown only once"))
                assertTrue(name, e.detail.contains("rotate again"))
                val s = stats()
                assertEquals(name, 1, s["rotations"].asInt)
                assertEquals(name, 1, s["requests"].asJsonObject["rotateEnterpriseWebhookSecret"].asInt)
                val server = hook(again.reference!!)
                // the rotation was applied: its secret is lost to the client, the previous one still verifies
                assertEquals(name, again.secret.secret, server["previous"].asString)
                assertHidden(name, listOf(server["secret"].asString, again.secret.secret), e, e.message, seen, traced.lines)
            }
        }
    }

    @Test
    fun fetchResourceGetsTheCurrentStateOfWhatAnEventNamesAndNothingOutsideTheApi() {
        for ((name, t) in transports) {
            reset()
            val client = enterprise(t)
            val uuid = "5b1f6a0e-2c3d-4e5f-8a9b-0c1d2e3f4a5b"
            val rel = "/api/v1/releases/$uuid"
            val user = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"
            val body = """{"event":"release.updated","resource":{"type":"release","reference":"$uuid","url":"$rel"},"occurred_at":"2026-11-22T04:00:00Z"}""".toByteArray()
            val now = 1_795_000_000L
            val delivery = verifyWebhook(signWebhook("whsec_x", body, now, "d-1"), body, listOf("whsec_x"), now)
            fun data(b: ByteArray) = JsonParser.parseString(String(b)).asJsonObject["data"].asJsonObject
            val viaDelivery = data(client.fetchResource(delivery))
            assertEquals(name, uuid, viaDelivery["uuid"].asString)
            assertEquals(name, "live", viaDelivery["status"].asString)
            assertTrue(name, viaDelivery["acting_for"].isJsonNull)
            assertEquals(name, user, data(client.fetchResource(delivery.event, userId = user))["acting_for"].asString)
            assertEquals(name, uuid, data(client.fetchResource(rel))["uuid"].asString)
            for (bad in listOf("http://127.0.0.1:1$rel", "//evil.example/api/v1/releases/1", "/api/v1/../v1/token", "/api/platform/v1/exports")) {
                try {
                    client.fetchResource(bad)
                    fail("$name: fetched $bad")
                } catch (e: RoyaltyKitException.Request) {
                    assertEquals("$name $bad", "invalid_resource_url", e.code)
                }
            }
            assertEquals(name, 3, requests("fetchEnterpriseResource"))
        }
    }

    @Test
    fun theSuspendingVersionsDoTheSame() = kotlinx.coroutines.runBlocking {
        reset()
        val client = enterprise()
        val created = client.createSubscriptionAsync("Royalties", endpoint, events, requestId = "async-1")
        assertEquals(hook(created.reference!!)["secret"].asString, created.secret.secret)
        val rotated = client.rotateSecretAsync(created.reference!!)
        assertEquals(hook(created.reference!!)["secret"].asString, rotated.secret.secret)
        assertEquals(2, rotated.secrets(created.secret.secret).size)
        val rel = "/api/v1/releases/5b1f6a0e-2c3d-4e5f-8a9b-0c1d2e3f4a5b"
        val state = JsonParser.parseString(String(client.fetchResourceAsync(rel, userId = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"))).asJsonObject["data"].asJsonObject
        assertEquals("0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e", state["acting_for"].asString)
        try {
            client.fetchResourceAsync("https://evil.example$rel")
            fail("fetched another origin")
        } catch (e: RoyaltyKitException.Request) {
            assertEquals("invalid_resource_url", e.code)
        }
        assertEquals(1, requests("fetchEnterpriseResource"))
    }
}
