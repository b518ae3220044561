package dev.royaltykit

import com.google.gson.JsonObject
import com.sun.net.httpserver.HttpServer
import dev.royaltykit.client.BodyTarget
import dev.royaltykit.client.EnterpriseClient
import dev.royaltykit.client.HttpOutcome
import dev.royaltykit.client.HttpTransport
import dev.royaltykit.client.JavaHttpTransport
import dev.royaltykit.coroutines.recoverDeliveriesAsync
import dev.royaltykit.types.ClaimState
import dev.royaltykit.types.PagesEnd
import dev.royaltykit.types.RecoveryAction
import dev.royaltykit.types.RecoveryReport
import dev.royaltykit.types.RoyaltyKitException
import dev.royaltykit.types.VerifiedWebhook
import org.junit.AfterClass
import org.junit.Assert.assertEquals
import org.junit.Assert.assertNotNull
import org.junit.Assert.assertNull
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.BeforeClass
import org.junit.Rule
import org.junit.Test
import org.junit.rules.TemporaryFolder
import java.net.InetSocketAddress
import java.time.Duration
import java.time.Instant
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger

/**
 * Delivery recovery (`EnterpriseClient.recoverDeliveries`, its suspending version, the stores'
 * read-only `state`) through the built jar: a subscription created with the client whose endpoint
 * is a [WebhookReceiver] served over loopback HTTP (com.sun.net.httpserver), deliveries sent and
 * lost by the shared fake API (tests/fakeapi/server.py), the lost ones found in the delivery log
 * and replayed to the same receiver, on the in-memory store and on SQLite through JDBC.
 */
class RecoveryTest {
    companion object {
        private lateinit var fake: FakeApi

        @BeforeClass @JvmStatic
        fun start() {
            fake = FakeApi()
        }

        @AfterClass @JvmStatic
        fun stop() = fake.close()

        /** The endpoint a subscription is created with: public, as the core requires of one. */
        const val PUBLIC = "https://hooks.example.com/royaltykit"
        const val NAMESPACE = "org-1"
    }

    @get:Rule
    val tmp = TemporaryFolder()

    private fun stats(): JsonObject = fake.stats()
    private fun requests(op: String) = stats()["requests"].asJsonObject[op]?.asInt ?: 0

    /**
     * The network as the service sees it: the create of a subscription naming [PUBLIC] reaches the
     * fake with [local] instead (what DNS and TLS would do for a real endpoint; the core refuses a
     * loopback endpoint before any request). [answer] may stand in for the service's response.
     */
    private class Routed(
        private val local: () -> String,
        private val answer: (dev.royaltykit.client.HttpRequest) -> HttpOutcome? = { null },
    ) : HttpTransport {
        private val inner = JavaHttpTransport()
        override fun send(request: dev.royaltykit.client.HttpRequest, timeout: Duration, target: BodyTarget): HttpOutcome {
            answer(request)?.let { return it }
            val creates = request.method == "POST" && request.url.endsWith("/api/v1/webhooks")
            val body = if (creates) request.body?.let { String(it).replace(PUBLIC, local()).toByteArray() } else request.body
            val headers = request.headers.filterNot { it.first.equals("Content-Length", ignoreCase = true) }
            return inner.send(dev.royaltykit.client.HttpRequest(request.method, request.url, headers, body), timeout, target)
        }
    }

    /**
     * A receiver of this binding on 127.0.0.1: [receiver] (set once the subscription's secret is
     * known; 503 until then) answers each POST to `/webhooks`.
     */
    private class Endpoint : AutoCloseable {
        @Volatile var receiver: WebhookReceiver? = null
        private val pool = Executors.newFixedThreadPool(4)
        private val server = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0).apply {
            executor = pool
            createContext("/webhooks") { ex ->
                val rx = receiver
                val (status, body) = if (rx == null) {
                    503 to "{}"
                } else {
                    val b = ex.requestBody.readNBytes((rx.maxBodyBytes + 1).toInt())
                    rx.receiveMulti(ex.requestHeaders, b).let { it.status to it.body }
                }
                val bytes = body.toByteArray()
                ex.responseHeaders.add("Content-Type", "application/json")
                ex.sendResponseHeaders(status, bytes.size.toLong())
                ex.responseBody.use { it.write(bytes) }
            }
            start()
        }
        val url = "http://127.0.0.1:${server.address.port}/webhooks"

        override fun close() {
            receiver?.close()
            server.stop(0)
            pool.shutdownNow()
        }
    }

    /** How many times a handler ran for each resource (an original and its replay name the same one). */
    private val handled = ConcurrentHashMap<String, AtomicInteger>()
    private fun handle(d: VerifiedWebhook) {
        handled.computeIfAbsent(d.event.resourceReference) { AtomicInteger() }.incrementAndGet()
    }

    private fun client(endpoint: Endpoint, answer: (dev.royaltykit.client.HttpRequest) -> HttpOutcome? = { null }) =
        EnterpriseClient(Routed({ endpoint.url }, answer), fake.url, "key-1", "secret-1", clock = fake.clock, sleep = fake.sleep, onEvent = {})

    /** Five events to [reference], the 2nd and 4th lost (never reached the receiver); their delivery references in order. */
    private fun deliverFive(reference: String): List<String> = listOf(false, true, false, true, false).map { lose ->
        val answer = fake.control("deliver", """{"reference":"$reference","event":"ddex.delivery.failed","lose":$lose}""")
        assertEquals(answer.toString(), if (lose) "failed" else "delivered", answer["status"].asString)
        answer["delivery"].asString
    }

    /** Waits (at most 15 s) until the fake's log shows [n] replays delivered. */
    private fun awaitReplaysDelivered(n: Int) {
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15)
        while (true) {
            val replays = stats()["deliveries"].asJsonArray.map { it.asJsonObject }.filter { it.has("replay_of") }
            if (replays.count { it["status"].asString == "delivered" } == n) return
            if (System.nanoTime() > deadline) fail("the replays were not delivered: $replays")
            Thread.sleep(50)
        }
    }

    private fun RecoveryReport.actions(): Map<String, RecoveryAction> = deliveries.associate { it.reference to it.action }

    private val anHourAgo get() = Instant.ofEpochMilli((fake.clock() * 1000).toLong()).minusSeconds(3600)

    /**
     * The whole story on one store: five events, two lost; the first run replays the two and
     * leaves the three processed alone; every handler ran once; the second run finds the two
     * processed by their replays and sends nothing.
     */
    private fun recoversTheLostDeliveries(
        store: DeliveryStates,
        receiver: (RevealedSecret) -> WebhookReceiver,
        effects: () -> Map<String, Int>,
        secondRun: (EnterpriseClient, String) -> RecoveryReport,
    ) {
        fake.reset()
        Endpoint().use { endpoint ->
            val client = client(endpoint)
            val hook = client.createSubscription("recovery", PUBLIC, listOf("ddex.delivery.failed"))
            assertEquals(endpoint.url, stats()["webhooks"].asJsonObject[hook.reference!!].asJsonObject["endpoint_url"].asString)
            endpoint.receiver = receiver(hook)
            val sent = deliverFive(hook.reference!!)
            val lost = listOf(sent[1], sent[3])
            assertEquals(3, effects().size)

            val report = client.recoverDeliveries(hook.reference!!, store, NAMESPACE, anHourAgo)
            assertEquals(report.toString(), 5L, report.considered.toLong())
            assertEquals(5L, report.entries.toLong())
            assertEquals(2L, report.replayed.toLong())
            assertEquals(PagesEnd.LAST, report.end)
            assertEquals(sent, report.deliveries.map { it.reference })
            for (r in sent) assertEquals(r, if (r in lost) RecoveryAction.REPLAYED else RecoveryAction.PROCESSED, report.actions()[r])
            for (d in report.deliveries.filter { it.reference in lost }) {
                assertNotNull("the replay's reference", d.replay)
                assertNull(d.error)
                assertEquals("ddex.delivery.failed", d.event)
                assertEquals("failed", d.status)
            }
            assertEquals(1, requests("listEnterpriseWebhookDeliveries"))
            assertEquals(2, requests("replayEnterpriseWebhookDelivery"))
            awaitReplaysDelivered(2)
            // every event's handler ran exactly once: five resources, each once
            assertEquals(effects().toString(), 5, effects().size)
            assertTrue(effects().toString(), effects().values.all { it == 1 })

            val again = secondRun(client, hook.reference!!)
            assertEquals(again.toString(), 0L, again.replayed.toLong())
            assertEquals(5L, again.considered.toLong())
            assertEquals(7L, again.entries.toLong())
            for (r in sent) {
                assertEquals(r, if (r in lost) RecoveryAction.PROCESSED_BY_REPLAY else RecoveryAction.PROCESSED, again.actions()[r])
            }
            for (d in again.deliveries.filter { it.reference in lost }) assertEquals(1, d.replays.size)
            assertEquals(2, stats()["replays"].asInt)
            assertEquals(5, effects().size)
            assertTrue(effects().values.all { it == 1 })
        }
    }

    @Test
    fun theLostDeliveriesAreReplayedOnceAndTheNextRunFindsThemProcessed() {
        handled.clear()
        InMemoryDedupStore().use { store ->
            recoversTheLostDeliveries(
                store,
                receiver = { hook -> WebhookReceiver(hook.secrets(), NAMESPACE, store, handler = ::handle) },
                effects = { handled.mapValues { it.value.get() } },
                // the second run through the suspending version
                secondRun = { client, reference ->
                    kotlinx.coroutines.runBlocking { client.recoverDeliveriesAsync(reference, store, NAMESPACE, anHourAgo) }
                },
            )
        }
    }

    @Test
    fun onSqliteThroughJdbcTheReplaysEffectsAreWrittenOnce() {
        val ds = org.sqlite.SQLiteDataSource().apply {
            url = "jdbc:sqlite:${tmp.newFile("recovery.sqlite").path}"
            setBusyTimeout(10_000)
        }
        ds.connection.use { c -> c.createStatement().use { it.execute("CREATE TABLE effects (resource TEXT NOT NULL)") } }
        fun effects(): Map<String, Int> = ds.connection.use { c ->
            c.createStatement().use { s ->
                s.executeQuery("SELECT resource, count(*) FROM effects GROUP BY resource").use { rs ->
                    generateSequence { if (rs.next()) rs.getString(1) to rs.getInt(2) else null }.toMap()
                }
            }
        }
        JdbcDedupStore(ds).use { store ->
            recoversTheLostDeliveries(
                store,
                receiver = { hook ->
                    WebhookReceiver(hook.secrets(), NAMESPACE, store) { d, connection ->
                        connection.prepareStatement("INSERT INTO effects (resource) VALUES (?)").use {
                            it.setString(1, d.event.resourceReference)
                            it.executeUpdate()
                        }
                    }
                },
                effects = ::effects,
                secondRun = { client, reference -> client.recoverDeliveries(reference, store, NAMESPACE, anHourAgo) },
            )
        }
    }

    @Test
    fun nowDecidesWhenADeliveryInAnUnknownStateHasEnded() {
        handled.clear()
        fake.reset()
        InMemoryDedupStore().use { store ->
            Endpoint().use { endpoint ->
                val client = client(endpoint)
                val hook = client.createSubscription("recovery", PUBLIC, listOf("ddex.delivery.failed"))
                endpoint.receiver = WebhookReceiver(hook.secrets(), NAMESPACE, store, handler = ::handle)
                val answer = fake.control("deliver", """{"reference":"${hook.reference}","event":"ddex.delivery.failed","lose":true,"status":"abandoned"}""")
                assertEquals(answer.toString(), "abandoned", answer["status"].asString)
                val delivery = answer["delivery"].asString
                // A status the spec does not name may still be attempted within the redelivery schedule.
                val today = client.recoverDeliveries(hook.reference!!, store, NAMESPACE, anHourAgo)
                assertEquals(today.toString(), RecoveryAction.IN_FLIGHT, today.actions()[delivery])
                assertEquals("an unknown status is kept as sent", "abandoned", today.deliveries.single().status)
                val later = client.recoverDeliveries(hook.reference!!, store, NAMESPACE, anHourAgo, now = Instant.ofEpochMilli((fake.clock() * 1000).toLong()).plusSeconds(30 * 86_400L))
                assertEquals(later.toString(), RecoveryAction.REPLAYED, later.actions()[delivery])
                assertEquals(1, requests("replayEnterpriseWebhookDelivery"))
            }
        }
    }

    @Test
    fun aReplayStillPendingIsNotSentAgain() {
        handled.clear()
        fake.reset("""{"replays":"hold"}""")
        InMemoryDedupStore().use { store ->
            Endpoint().use { endpoint ->
                val client = client(endpoint)
                val hook = client.createSubscription("recovery", PUBLIC, listOf("ddex.delivery.failed"))
                endpoint.receiver = WebhookReceiver(hook.secrets(), NAMESPACE, store, handler = ::handle)
                val sent = deliverFive(hook.reference!!)
                val lost = setOf(sent[1], sent[3])
                val first = client.recoverDeliveries(hook.reference!!, store, NAMESPACE, anHourAgo)
                assertEquals(2L, first.replayed.toLong())
                assertEquals(lost, first.deliveries.filter { it.action == RecoveryAction.REPLAYED }.map { it.reference }.toSet())
                val second = client.recoverDeliveries(hook.reference!!, store, NAMESPACE, anHourAgo)
                assertEquals(second.toString(), 0L, second.replayed.toLong())
                for (r in sent) assertEquals(r, if (r in lost) RecoveryAction.REPLAY_PENDING else RecoveryAction.PROCESSED, second.actions()[r])
                assertEquals(2, stats()["replays"].asInt)
                assertEquals(2, requests("replayEnterpriseWebhookDelivery"))
                assertEquals(3, handled.size)
            }
        }
    }

    @Test
    fun aRefusedReplayIsReportedWithItsCodeAndTheOthersGoOn() {
        handled.clear()
        fake.reset("""{"faults":[{"op":"replayEnterpriseWebhookDelivery","nth":1,"do":"status","status":404}]}""")
        InMemoryDedupStore().use { store ->
            Endpoint().use { endpoint ->
                val client = client(endpoint)
                val hook = client.createSubscription("recovery", PUBLIC, listOf("ddex.delivery.failed"))
                endpoint.receiver = WebhookReceiver(hook.secrets(), NAMESPACE, store, handler = ::handle)
                val sent = deliverFive(hook.reference!!)
                val report = client.recoverDeliveries(hook.reference!!, store, NAMESPACE, anHourAgo)
                assertEquals(report.toString(), 1L, report.replayed.toLong())
                val refused = report.deliveries.single { it.reference == sent[1] }
                assertEquals(RecoveryAction.REPLAY_FAILED, refused.action)
                assertEquals("api_error", refused.error)
                assertNull(refused.replay)
                val other = report.deliveries.single { it.reference == sent[3] }
                assertEquals(RecoveryAction.REPLAYED, other.action)
                assertNotNull(other.replay)
                assertEquals(1, stats()["replays"].asInt)
                awaitReplaysDelivered(1)
                // the next run replays the refused one
                val next = client.recoverDeliveries(hook.reference!!, store, NAMESPACE, anHourAgo)
                assertEquals(RecoveryAction.REPLAYED, next.actions()[sent[1]])
                assertEquals(RecoveryAction.PROCESSED_BY_REPLAY, next.actions()[sent[3]])
                awaitReplaysDelivered(2)
                assertEquals(5, handled.size)
                assertTrue(handled.values.all { it.get() == 1 })
            }
        }
    }

    @Test
    fun wrongArgumentsAreRefusedBeforeAnyRequestAndAnUnreadableLogThrowsPagination() {
        fake.reset()
        InMemoryDedupStore().use { store ->
            Endpoint().use { endpoint ->
                val client = client(endpoint)
                for ((what, call) in listOf<Pair<String, () -> Unit>>(
                    "an empty namespace" to { client.recoverDeliveries("wh_001", store, "", anHourAgo) },
                    "an empty subscription" to { client.recoverDeliveries("", store, NAMESPACE, anHourAgo) },
                    "no replay allowed" to { client.recoverDeliveries("wh_001", store, NAMESPACE, anHourAgo, maxReplays = 0) },
                    "a negative bound" to { client.recoverDeliveries("wh_001", store, NAMESPACE, anHourAgo, maxEntries = -1) },
                )) {
                    try {
                        call()
                        fail("accepted $what")
                    } catch (e: RoyaltyKitException.InvalidArgument) {
                        assertEquals(what, "invalid_argument", e.code)
                    }
                }
                assertEquals(0, requests("listEnterpriseWebhookDeliveries") + requests("exchangeEnterpriseToken"))

                val unreadable = client(endpoint) { r ->
                    if (r.url.contains("/deliveries")) HttpOutcome.Response(200, listOf("Content-Type" to "application/json"), "not json".toByteArray()) else null
                }
                val checked = ArrayList<String>()
                try {
                    unreadable.recoverDeliveries("wh_001", { k -> checked += k; ClaimState.NEW }, NAMESPACE, anHourAgo)
                    fail("an unreadable log was read")
                } catch (e: RoyaltyKitException.Pagination) {
                    assertEquals("page_unreadable", e.code)
                }
                assertEquals(emptyList<String>(), checked)
                assertEquals(0, requests("replayEnterpriseWebhookDelivery"))
            }
        }
    }

    // ---- the stores' read-only state: new → claim → in progress → commit → done, never claiming

    @Test
    fun theInMemoryStoresStateNeverClaims() {
        InMemoryDedupStore().use { s ->
            assertEquals(ClaimState.NEW, s.state("k1"))
            assertEquals(ClaimState.NEW, s.state("k1"))
            assertEquals(ClaimState.NEW, s.claim("k1")) // the lookups claimed nothing
            assertEquals(ClaimState.IN_PROGRESS, s.state("k1"))
            s.commit("k1")
            assertEquals(ClaimState.DONE, s.state("k1"))
            assertEquals(ClaimState.NEW, s.claim("k2"))
            s.release("k2")
            assertEquals(ClaimState.NEW, s.state("k2"))
            try {
                s.state("")
                fail("an empty key was looked up")
            } catch (e: RoyaltyKitException.InvalidArgument) {
                assertEquals("invalid_argument", e.code)
            }
        }
        // the window itself, at a given time: a claim's lease runs out, a commit's TTL too
        DedupWindow(10, ttlSeconds = 100, leaseSeconds = 10).use { w ->
            assertEquals(ClaimState.NEW, w.claim("k", 1000))
            assertEquals(ClaimState.IN_PROGRESS, w.state("k", 1005))
            assertEquals(ClaimState.NEW, w.state("k", 1011))
            w.commit("k", 1005)
            assertEquals(ClaimState.DONE, w.state("k", 1100))
            assertEquals(ClaimState.NEW, w.state("k", 1200))
        }
    }

    @Test
    fun theRedisStoresStateNeverClaims() {
        RedisServer().use { redis ->
            redis.client().use { c ->
                RedisDedupStore(c, prefix = "recovery-test:").use { s ->
                    assertEquals(ClaimState.NEW, s.state("k1"))
                    assertEquals(ClaimState.NEW, s.claim("k1")) // the lookup claimed nothing
                    assertEquals(ClaimState.IN_PROGRESS, s.state("k1"))
                    s.commit("k1")
                    assertEquals(ClaimState.DONE, s.state("k1"))
                    assertEquals(ClaimState.NEW, s.claim("k2"))
                    s.release("k2")
                    assertEquals(ClaimState.NEW, s.state("k2"))
                    assertEquals(listOf("GET", "recovery-test:k1"), RedisDedupProtocol("recovery-test:").use { it.lookupCommand("k1") })
                }
            }
        }
    }
}
