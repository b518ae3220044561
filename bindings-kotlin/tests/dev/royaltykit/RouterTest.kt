package dev.royaltykit

import com.sun.net.httpserver.HttpServer
import dev.royaltykit.types.ErrorFamily
import dev.royaltykit.types.RoyaltyKitException
import dev.royaltykit.types.VerifiedWebhook
import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.Rule
import org.junit.Test
import org.junit.rules.TemporaryFolder
import java.lang.reflect.Modifier
import java.net.InetSocketAddress
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.sql.Connection
import java.util.Collections
import java.util.concurrent.Executors
import java.util.concurrent.atomic.AtomicInteger

/**
 * Routing deliveries by their event name ([EventRouter], [TransactionalEventRouter], [EventNames])
 * through the built jar, as a user wires it: the router is the [WebhookReceiver]'s handler, and
 * the deliveries are signed with [signWebhook] and posted over loopback HTTP to a
 * com.sun.net.httpserver endpoint (and given to `receive` directly).
 */
class RouterTest {
    @get:Rule
    val tmp = TemporaryFolder()

    private val secret = "whsec_router_tests_0123456789abcdef"
    private val now = 1_763_900_000L

    private fun body(name: String, reference: String) =
        ("{\"event\":\"$name\",\"occurred_at\":\"2025-11-23T12:13:20Z\"," +
            "\"resource\":{\"type\":\"ddex_message\",\"reference\":\"$reference\",\"url\":\"/api/v1/ddex/messages/$reference\"}}").toByteArray()

    /** A delivery of the event [name], signed as the service signs it; [id] is its `Service-Webhook-Id`. */
    private fun signed(name: String, id: String, reference: String = id): Pair<Map<String, String>, ByteArray> {
        val b = body(name, reference)
        return signWebhook(secret, b, now, id) to b
    }

    private fun status(body: String) = com.google.gson.JsonParser.parseString(body).asJsonObject

    @Test
    fun theConstantsAreTheCoresNames() {
        val constants = EventNames::class.java.declaredFields
            .filter { Modifier.isStatic(it.modifiers) && Modifier.isFinal(it.modifiers) && it.type == String::class.java }
            .associate { it.name to it.get(null) as String }
        val known = knownEventNames()
        assertEquals(9, known.size)
        assertEquals(known.toSet(), constants.values.toSet())
        assertEquals(known.size, constants.size)
        for ((field, name) in constants) assertEquals(name.uppercase().replace('.', '_'), field)
        assertEquals("ddex.delivery.failed", EventNames.DDEX_DELIVERY_FAILED)
        assertEquals("enterprise.webhook.test", EventNames.ENTERPRISE_WEBHOOK_TEST)
    }

    @Test
    fun aReceiverHandsEachDeliveryToTheHandlersOfItsName() {
        val ran = Collections.synchronizedList(mutableListOf<String>())
        val firstFailedAttempt = AtomicInteger(0)
        val router = EventRouter()
            .on(EventNames.DDEX_DELIVERY_FAILED) { d -> ran += "failed-1 ${d.deliveryId}" }
            .on("ddex.delivery.failed") { d -> ran += "failed-2 ${d.deliveryId}" }
            .on(EventNames.DDEX_IMPORT_FAILED) { d ->
                ran += "import-failed ${d.deliveryId}"
                if (firstFailedAttempt.incrementAndGet() == 1) throw IllegalStateException("the database is down (first attempt)")
            }
            .on(EventNames.DDEX_IMPORT_FAILED) { d -> ran += "import-failed-after ${d.deliveryId}" }
            .onAny { d -> ran += "any ${d.event.name} ${d.deliveryId}" }
            .otherwise { d -> ran += "otherwise ${d.event.name} ${d.deliveryId}" }
        assertTrue(router.toString(), router.toString().contains("ddex.delivery.failed") && router.toString().contains("otherwise=true"))
        val errors = mutableListOf<Exception>()
        WebhookReceiver(listOf(secret), "org-1", onError = { e, _ -> errors += e }, handler = router).use { rx ->
            val server = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0)
            server.executor = Executors.newFixedThreadPool(2)
            server.createContext("/webhooks") { ex ->
                val b = ex.requestBody.readNBytes((rx.maxBodyBytes + 1).toInt())
                val r = rx.receiveMulti(ex.requestHeaders, b, now)
                val bytes = r.body.toByteArray()
                ex.responseHeaders.add("Content-Type", "application/json")
                ex.sendResponseHeaders(r.status, bytes.size.toLong())
                ex.responseBody.use { it.write(bytes) }
            }
            server.start()
            try {
                val http = HttpClient.newHttpClient()
                fun post(delivery: Pair<Map<String, String>, ByteArray>): Pair<Int, String> {
                    val request = HttpRequest.newBuilder(URI("http://127.0.0.1:${server.address.port}/webhooks"))
                        .POST(HttpRequest.BodyPublishers.ofByteArray(delivery.second))
                    delivery.first.forEach { (n, v) -> request.header(n, v) }
                    val response = http.send(request.build(), HttpResponse.BodyHandlers.ofString())
                    return response.statusCode() to response.body()
                }

                // two handlers of the name, in order, then the on_any handler; no fallback
                assertEquals(200, post(signed("ddex.delivery.failed", "dlv_1")).first)
                assertEquals(listOf("failed-1 dlv_1", "failed-2 dlv_1", "any ddex.delivery.failed dlv_1"), ran.toList())
                ran.clear()

                // a known name nobody named: on_any and the fallback see it
                assertEquals(200, post(signed("ddex.import.completed", "dlv_2")).first)
                assertEquals(listOf("any ddex.import.completed dlv_2", "otherwise ddex.import.completed dlv_2"), ran.toList())
                ran.clear()

                // a name the spec does not list: kept as sent, the fallback gets it
                assertEquals(200, post(signed("ddex.delivery.retried", "dlv_3")).first)
                assertEquals(listOf("any ddex.delivery.retried dlv_3", "otherwise ddex.delivery.retried dlv_3"), ran.toList())
                ran.clear()

                // a handler that throws: 500, the handlers after it do not run, its claim is released ...
                val failing = signed("ddex.import.failed", "dlv_4")
                val (failedStatus, failedBody) = post(failing)
                assertEquals(500, failedStatus)
                assertEquals("handler_failed", status(failedBody)["error"].asString)
                assertEquals(listOf("import-failed dlv_4"), ran.toList())
                assertEquals(1, errors.size)
                assertTrue(errors[0] is IllegalStateException)
                ran.clear()
                // ... so the redelivery runs it again, then the rest
                assertEquals(200, post(failing).first)
                assertEquals(listOf("import-failed dlv_4", "import-failed-after dlv_4", "any ddex.import.failed dlv_4"), ran.toList())
                ran.clear()
                // and once processed, a duplicate runs nothing
                assertEquals(200, post(failing).first)
                assertEquals(emptyList<String>(), ran.toList())
            } finally {
                server.stop(0)
                (server.executor as java.util.concurrent.ExecutorService).shutdown()
            }
        }
    }

    @Test
    fun aDeliveryNoHandlerTakesIsAcknowledgedAndNothingRuns() {
        val ran = mutableListOf<String>()
        val router = EventRouter().on(EventNames.DDEX_DELIVERY_FAILED) { ran += it.deliveryId }
        val events = mutableListOf<ReceiptEvent>()
        WebhookReceiver(listOf(secret), "org-1", handler = router).use { rx ->
            rx.onEvent = { events += it }
            for ((name, id) in listOf(EventNames.DDEX_CONNECTION_DEGRADED to "dlv_n1", "ddex.delivery.retried" to "dlv_n2")) {
                val (h, b) = signed(name, id)
                val r = rx.receive(h, b, now)
                assertEquals(200, r.status)
                assertEquals(name, r.delivery!!.event.name)
            }
            assertEquals(emptyList<String>(), ran)
            assertEquals(listOf("processed", "processed"), events.map { it.outcome })
            // and the one it names still reaches its handler
            val (h, b) = signed("ddex.delivery.failed", "dlv_n3")
            assertEquals(200, rx.receive(h, b, now).status)
            assertEquals(listOf("dlv_n3"), ran)
        }
    }

    @Test
    fun anInvalidNameIsRefusedAtOnceAndNothingIsKept() {
        val router = EventRouter()
        for (name in listOf("", "ddex delivery failed", "ddex.delivery.failed\n", "a".repeat(257))) {
            try {
                router.on(name) { }
                fail("accepted ${name.take(20)}")
            } catch (e: RoyaltyKitException.InvalidArgument) {
                assertEquals("invalid_argument", e.code)
                assertEquals(ErrorFamily.INVALID_ARGUMENT, e.family)
            }
            try {
                TransactionalEventRouter().on(name) { _, _ -> }
                fail("the transactional router accepted ${name.take(20)}")
            } catch (e: RoyaltyKitException.InvalidArgument) {
                assertEquals("invalid_argument", e.code)
            }
        }
        // 256 bytes is the longest name; a name the spec does not list is taken, case kept
        router.on("a".repeat(256)) { }.on("ddex.delivery.retried") { }.on("DDEX.Delivery.Failed") { }
        // the refusals kept nothing: the next registrations got the next indices
        assertEquals(listOf(1u), router.route("ddex.delivery.retried").named)
        assertEquals(emptyList<UInt>(), router.route("ddex.delivery.failed").named)
        val r = router.route("DDEX.Delivery.Failed")
        assertEquals(listOf(2u), r.named)
        assertFalse(r.any || r.fallback)
    }

    @Test
    fun aRouterNestsAsAnyOtherHandler() {
        val ran = mutableListOf<String>()
        val ddex = EventRouter().on(EventNames.DDEX_DELIVERY_REJECTED) { ran += "inner rejected" }.otherwise { ran += "inner other" }
        val outer = EventRouter().onAny(ddex).on(EventNames.DDEX_DELIVERY_REJECTED) { ran += "outer rejected" }
        WebhookReceiver(listOf(secret), "org-1", handler = outer).use { rx ->
            val (h, b) = signed("ddex.delivery.rejected", "dlv_nest")
            assertEquals(200, rx.receive(h, b, now).status)
        }
        assertEquals(listOf("outer rejected", "inner rejected"), ran)
    }

    @Test
    fun registeringWhileDeliveriesAreRoutedKeepsEveryIndexInPlace() {
        val seen = AtomicInteger()
        val router = EventRouter().on(EventNames.DDEX_DELIVERY_FAILED) { seen.incrementAndGet() }
        val pool = Executors.newFixedThreadPool(4)
        try {
            val readers = (0 until 3).map {
                pool.submit {
                    val d = VerifiedWebhook("dlv_c", now, 0u, "", dev.royaltykit.types.WebhookEvent(
                        "ddex.delivery.failed", true, false, "ddex_message", "r", "/api/v1/r", null, "", null))
                    repeat(2_000) { router(d) }
                }
            }
            repeat(499) { router.on(EventNames.DDEX_DELIVERY_FAILED) { seen.incrementAndGet() } }
            readers.forEach { it.get() }
        } finally {
            pool.shutdown()
        }
        assertEquals((0u until 500u).toList(), router.route("ddex.delivery.failed").named)
        assertTrue(seen.get() >= 3 * 2_000)
    }

    @Test
    fun aTransactionalRouterWritesEveryHandlersEffectInTheDeliverysTransaction() {
        val ds = org.sqlite.SQLiteDataSource().apply { url = "jdbc:sqlite:${tmp.root}/app.sqlite" }
        ds.connection.use { c -> c.createStatement().use { it.execute("CREATE TABLE effects (what TEXT NOT NULL)") } }
        fun effects(): List<String> = ds.connection.use { c ->
            c.createStatement().use { s -> s.executeQuery("SELECT what FROM effects ORDER BY rowid").use { rs ->
                generateSequence { if (rs.next()) rs.getString(1) else null }.toList()
            } }
        }
        fun write(c: Connection, what: String) = c.prepareStatement("INSERT INTO effects (what) VALUES (?)").use {
            it.setString(1, what)
            it.executeUpdate()
        }
        val attempts = AtomicInteger()
        val router = TransactionalEventRouter()
            .on(EventNames.DDEX_DELIVERY_FAILED) { d, c -> write(c, "failed ${d.deliveryId}") }
            .on(EventNames.DDEX_DELIVERY_FAILED) { d, c ->
                write(c, "failed-2 ${d.deliveryId}")
                if (attempts.incrementAndGet() == 1) throw java.sql.SQLException("deadlock detected (first attempt)")
            }
            .onAny { d, c -> write(c, "any ${d.event.name}") }
            .otherwise { d, c -> write(c, "otherwise ${d.event.name}") }
        JdbcDedupStore(ds).use { store ->
            WebhookReceiver(listOf(secret), "org-1", store, onError = { _, _ -> }, handler = router).use { rx ->
                val (h, b) = signed("ddex.delivery.failed", "dlv_t1")
                // the second handler throws: the first's effect is rolled back with it
                assertEquals(500, rx.receive(h, b, now).status)
                assertEquals(emptyList<String>(), effects())
                // the redelivery runs them again, and all commit together
                assertEquals(200, rx.receive(h, b, now).status)
                assertEquals(listOf("failed dlv_t1", "failed-2 dlv_t1", "any ddex.delivery.failed"), effects())
                assertEquals(200, rx.receive(h, b, now).status) // a duplicate: nothing more
                val (h2, b2) = signed("ddex.delivery.retried", "dlv_t2")
                assertEquals(200, rx.receive(h2, b2, now).status)
                assertEquals(listOf("any ddex.delivery.retried", "otherwise ddex.delivery.retried"), effects().drop(3))
            }
        }
    }
}
