package dev.royaltykit

import com.google.gson.JsonParser
import dev.royaltykit.InboxFixture.NAMESPACE
import dev.royaltykit.InboxFixture.SECRET
import dev.royaltykit.client.EnterpriseClient
import dev.royaltykit.client.JavaHttpTransport
import dev.royaltykit.coroutines.runWorkerAsync
import dev.royaltykit.types.ClaimState
import dev.royaltykit.types.RecoveryAction
import dev.royaltykit.types.RoyaltyKitException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import org.junit.AfterClass
import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.Before
import org.junit.BeforeClass
import org.junit.Rule
import org.junit.Test
import org.junit.rules.TemporaryFolder
import org.junit.runner.RunWith
import org.junit.runners.Parameterized
import java.io.BufferedInputStream
import java.io.ByteArrayOutputStream
import java.io.File
import java.io.IOException
import java.net.InetAddress
import java.net.ServerSocket
import java.net.Socket
import java.time.Clock
import java.time.Instant
import java.time.ZoneId
import java.time.ZoneOffset
import java.util.UUID
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import javax.sql.DataSource
import kotlin.concurrent.thread

/** A clock the test moves: the inbox's rows and the worker's backoff are written in its time. */
class MovableClock(@Volatile var now: Instant = Instant.ofEpochSecond(Instant.now().epochSecond)) : Clock() {
    fun advanceTo(epochSecond: Long) {
        now = Instant.ofEpochSecond(epochSecond)
    }

    fun advance(seconds: Long) {
        now = now.plusSeconds(seconds)
    }

    override fun instant(): Instant = now
    override fun getZone(): ZoneId = ZoneOffset.UTC
    override fun withZone(zone: ZoneId?): Clock = this
}

/**
 * A [WebhookReceiver] of this binding served over loopback HTTP/1.1 (503 until [receiver] is set):
 * one request per connection, each answered with one write on a socket without Nagle's delay (so
 * a reply's time is the receiver's, not the delayed-ACK timer's), by a pool of 4 threads.
 */
class InboxEndpoint(@Volatile var receiver: WebhookReceiver? = null) : AutoCloseable {
    private val pool = Executors.newFixedThreadPool(4)
    private val server = ServerSocket(0, 50, InetAddress.getLoopbackAddress())
    val url = "http://127.0.0.1:${server.localPort}/webhooks"

    init {
        thread(isDaemon = true, name = "inbox-endpoint") {
            while (!server.isClosed) {
                val socket = try { server.accept() } catch (e: IOException) { break }
                pool.execute { socket.use { serve(it) } }
            }
        }
    }

    private fun serve(socket: Socket) {
        socket.tcpNoDelay = true
        val input = BufferedInputStream(socket.getInputStream())
        fun line(): String {
            val b = ByteArrayOutputStream()
            while (true) {
                val c = input.read()
                if (c < 0 || c == '\n'.code) break
                if (c != '\r'.code) b.write(c)
            }
            return b.toString(Charsets.ISO_8859_1)
        }
        val requestLine = line()
        val headers = LinkedHashMap<String, MutableList<String>>()
        while (true) {
            val h = line()
            if (h.isEmpty()) break
            headers.getOrPut(h.substringBefore(':').trim()) { ArrayList() } += h.substringAfter(':').trim()
        }
        val length = headers.entries.firstOrNull { it.key.equals("Content-Length", ignoreCase = true) }?.value?.first()?.toInt() ?: 0
        val body = input.readNBytes(length)
        val rx = receiver
        val (status, answer) = when {
            !requestLine.startsWith("POST /webhooks ") -> 404 to "{}"
            rx == null -> 503 to "{}"
            else -> rx.receiveMulti(headers, body).let { it.status to it.body }
        }
        val bytes = answer.toByteArray()
        val head = "HTTP/1.1 $status X\r\nContent-Type: application/json\r\nContent-Length: ${bytes.size}\r\nConnection: close\r\n\r\n"
        socket.getOutputStream().apply { write(head.toByteArray(Charsets.ISO_8859_1) + bytes); flush() }
    }

    /** POSTs a delivery about [ref] signed now, as the service would (one write, Nagle off): its status and `result` (or `error`). */
    fun post(ref: String, deliveryId: String = "dlv_$ref"): Pair<Int, String> {
        val body = InboxFixture.body(ref)
        val head = StringBuilder("POST /webhooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n")
        signWebhook(SECRET, body, null, deliveryId).forEach { (name, value) -> head.append("$name: $value\r\n") }
        head.append("Content-Length: ${body.size}\r\nConnection: close\r\n\r\n")
        Socket(InetAddress.getLoopbackAddress(), server.localPort).use { socket ->
            socket.tcpNoDelay = true
            socket.getOutputStream().apply { write(head.toString().toByteArray(Charsets.ISO_8859_1) + body); flush() }
            val answer = String(socket.getInputStream().readAllBytes(), Charsets.UTF_8)
            val status = answer.substringAfter(' ').substringBefore(' ').toInt()
            val json = JsonParser.parseString(answer.substringAfter("\r\n\r\n")).asJsonObject
            return status to (json["result"] ?: json["error"]).asString
        }
    }

    override fun close() {
        server.close()
        pool.shutdownNow()
    }
}

/**
 * The inbox (JdbcInbox, its worker, a WebhookReceiver in inbox mode) against a real PostgreSQL
 * (ROYALTYKIT_PG_DSN, started by scripts/test-kotlin.sh) or a SQLite file, through the built jar.
 */
abstract class InboxCase(protected val kind: String) {
    @get:Rule
    val tmp = TemporaryFolder()

    private val suffix = UUID.randomUUID().toString().replace("-", "").take(12)
    protected val table = "inbox_$suffix"
    protected val effects = "effects_$suffix"
    protected lateinit var dataSource: DataSource
    protected val clock = MovableClock()

    @Before
    fun createEffects() {
        val target = if (kind == "postgres") StoreCase.postgresUrl() else File(tmp.root, "inbox.sqlite").path
        dataSource = StoreFixture.dataSource(kind, target)
        dataSource.connection.use { InboxFixture.createEffects(it, effects) }
    }

    protected fun inbox(ttlSeconds: Long? = null, leaseSeconds: Long? = null): JdbcInbox =
        JdbcInbox(dataSource, table = table, ttlSeconds = ttlSeconds, leaseSeconds = leaseSeconds, clock = clock)

    /** The handler's effect: the event's resource row, in the worker's transaction. */
    protected val effect = InboxHandler { event, c -> InboxFixture.writeEffect(c, effects, event.resourceReference) }

    /** The effect rows, sorted. */
    protected fun effectRows(): List<String> = dataSource.connection.use { c ->
        c.createStatement().use { s ->
            s.executeQuery("SELECT reference FROM $effects ORDER BY reference").use { rs ->
                generateSequence { if (rs.next()) rs.getString(1) else null }.toList()
            }
        }
    }

    /** An inbox row as the table holds it. */
    protected data class Row(val state: String, val attempts: Long, val dueAt: Long, val lastError: String?)

    protected fun row(key: String): Row? = dataSource.connection.use { c ->
        c.prepareStatement("SELECT state, attempts, due_at, last_error FROM $table WHERE inbox_key = ?").use { ps ->
            ps.setString(1, key)
            ps.executeQuery().use { rs -> if (rs.next()) Row(rs.getString(1), rs.getLong(2), rs.getLong(3), rs.getString(4)) else null }
        }
    }

    /** Puts a delivery about [ref] in [inbox] as a receiver does; its delivery key. */
    protected fun enqueue(inbox: JdbcInbox, ref: String): String {
        val key = deliveryKey(NAMESPACE, "dlv_$ref")
        assertTrue(inbox.enqueue(key, "dlv_$ref", "ddex.delivery.failed", String(InboxFixture.body(ref))))
        return key
    }
}

@RunWith(Parameterized::class)
class InboxTest(kind: String) : InboxCase(kind) {
    companion object {
        @JvmStatic
        @Parameterized.Parameters(name = "{0}")
        fun kinds(): List<Array<Any>> = listOf(arrayOf<Any>("postgres"), arrayOf<Any>("sqlite"))
    }

    @Test
    fun aReceiverInInboxModeQueuesEachDeliveryAndADrainProcessesEachOnce() {
        inbox().use { inbox ->
            WebhookReceiver(listOf(SECRET), NAMESPACE, inbox).use { receiver ->
                val outcomes = ArrayList<String?>()
                receiver.onEvent = { synchronized(outcomes) { outcomes += it.outcome } }
                InboxEndpoint(receiver).use { endpoint ->
                    for (ref in listOf("r1", "r2", "r3")) assertEquals(200 to "queued", endpoint.post(ref))
                    assertEquals("a redelivery of the same id", 200 to "duplicate", endpoint.post("r1"))
                    assertEquals("no handler runs in the request", emptyList<String>(), effectRows())
                    assertEquals(mapOf("pending" to 3L), inbox.counts())

                    assertEquals(InboxReport(3, 0, 0), inbox.drain(handler = effect))
                    assertEquals(listOf("r1", "r2", "r3"), effectRows())
                    assertEquals(mapOf("done" to 3L), inbox.counts())
                    assertEquals("a processed delivery is still a duplicate", 200 to "duplicate", endpoint.post("r2"))
                    assertEquals(InboxReport(0, 0, 0), inbox.drain(handler = effect))
                    assertEquals(listOf("r1", "r2", "r3"), effectRows())
                }
                assertEquals(listOf("queued", "queued", "queued", "duplicate", "duplicate"), outcomes)
                // a delivery that fails verification is never persisted
                val body = InboxFixture.body("r9")
                val forged = signWebhook("whsec_not_the_secret_0123456789", body, null, "dlv_r9")
                assertEquals(401, receiver.receive(forged, body).status)
                assertEquals(mapOf("done" to 3L), inbox.counts())
            }
        }
    }

    @Test
    fun aFailingHandlerIsRolledBackAndRetriedAfterTheCoresBackoff() {
        inbox().use { inbox ->
            val key = enqueue(inbox, "r1")
            val runs = AtomicInteger()
            val flaky = InboxHandler { event, c ->
                val run = runs.incrementAndGet()
                InboxFixture.writeEffect(c, effects, event.resourceReference)
                if (run <= 2) throw IllegalStateException("upstream 503 (run $run)")
            }
            val t0 = clock.now.epochSecond
            assertEquals(InboxReport(0, 1, 0), inbox.drain(seed = 5, handler = flaky))
            val first = row(key)!!
            assertEquals(Row("pending", 1, first.dueAt, "IllegalStateException: upstream 503 (run 1)"), first)
            assertEquals("the first backoff is 2 s", t0 + 2, first.dueAt)
            assertEquals("the effect was rolled back", emptyList<String>(), effectRows())
            assertEquals("not due yet: nothing to do", InboxReport(0, 0, 0), inbox.drain(handler = flaky))
            assertEquals(1, runs.get())

            clock.advanceTo(first.dueAt)
            assertEquals(InboxReport(0, 1, 0), inbox.drain(seed = 5, handler = flaky))
            val second = row(key)!!
            assertEquals(2L, second.attempts)
            assertEquals("the core's handlerErrorText", handlerErrorText("IllegalStateException", "upstream 503 (run 2)"), second.lastError)
            assertTrue("the retry moved forward: $second after $first", second.dueAt > first.dueAt + 2)

            clock.advanceTo(second.dueAt)
            assertEquals(InboxReport(1, 0, 0), inbox.drain(handler = flaky))
            assertEquals(3, runs.get())
            assertEquals(listOf("r1"), effectRows())
            assertEquals(Row("done", 3, row(key)!!.dueAt, null), row(key))
            // A negative seed is refused before anything runs, never wrapped into another seed.
            val refused = runCatching { inbox.drain(seed = -1, handler = flaky) }.exceptionOrNull()
            assertTrue(refused.toString(), refused is IllegalArgumentException && "non-negative" in refused.message!!)
            assertEquals(3, runs.get())
        }
    }

    @Test
    fun onErrorGetsTheHandlersFailureAndWhatItThrowsChangesNothingButAnInterruption() {
        inbox().use { inbox ->
            val key = enqueue(inbox, "r1")
            val failing = InboxHandler { _, _ -> throw IllegalStateException("upstream 503") }
            val seen = mutableListOf<Pair<String, String>>()
            assertEquals(InboxReport(0, 1, 0), inbox.apply { onError = { e, entry -> seen += e.message!! to entry.deliveryId } }.drain(seed = 5, handler = failing))
            assertEquals(listOf("upstream 503" to "dlv_r1"), seen)
            val first = row(key)!!
            assertEquals(Row("pending", 1, first.dueAt, "IllegalStateException: upstream 503"), first)

            // A hook that throws: logged; the attempt is settled as the core says, nothing escapes.
            clock.advanceTo(first.dueAt)
            inbox.onError = { _, _ -> throw IllegalStateException("the hook is broken") }
            val report = inbox.drain(seed = 5, handler = failing)
            assertEquals(InboxReport(0, 1, 0), report)
            assertEquals(2L, row(key)!!.attempts)
            assertEquals("pending", row(key)!!.state)

            // A hook that is interrupted stops the worker: rolled back, not settled (the lease runs out).
            clock.advanceTo(row(key)!!.dueAt)
            val before = row(key)!!
            inbox.onError = { _, _ -> throw InterruptedException("shutting down") }
            val thrown = runCatching { inbox.drain(seed = 5, handler = failing) }.exceptionOrNull()
            assertTrue(thrown.toString(), thrown is InterruptedException)
            val after = row(key)!!
            assertEquals("claimed (attempt counted)", before.attempts + 1, after.attempts)
            assertEquals("never settled: held for the claim's lease, not the backoff",
                Row("pending", before.attempts + 1, clock.now.epochSecond + inbox.leaseSeconds, before.lastError), after)
        }
    }

    @Test
    fun anEntryThatKeepsFailingIsPoisonAndARetryRunsItAgain() {
        inbox().use { inbox ->
            val t0 = clock.now.epochSecond
            val key = enqueue(inbox, "r1")
            val failing = InboxHandler { _, _ -> throw IllegalArgumentException("bad payload") }
            assertEquals(InboxReport(0, 1, 0), inbox.drain(maxAttempts = 2, handler = failing))
            clock.advanceTo(row(key)!!.dueAt)
            assertEquals(InboxReport(0, 0, 1), inbox.drain(maxAttempts = 2, handler = failing))

            assertEquals(listOf(PoisonEntry(key, "dlv_r1", "ddex.delivery.failed", 2, "IllegalArgumentException: bad payload", t0)), inbox.poisoned())
            assertEquals(mapOf("poison" to 1L), inbox.counts())
            assertEquals("received, so a replay would not help", ClaimState.IN_PROGRESS, inbox.state(key))
            clock.advance(3600)
            assertEquals("a poison entry is never claimed", InboxReport(0, 0, 0), inbox.drain(handler = effect))

            assertTrue(inbox.retry(key))
            assertFalse("no longer poison", inbox.retry(key))
            assertEquals(Row("pending", 0, clock.now.epochSecond, null), row(key))
            assertEquals(InboxReport(1, 0, 0), inbox.drain(maxAttempts = 2, handler = effect))
            assertEquals(listOf("r1"), effectRows())
            assertEquals(emptyList<PoisonEntry>(), inbox.poisoned())
        }
    }

    @Test
    fun theStateOfAnEntryIsWhatDeliveryRecoveryAsksAndPurgeForgetsDoneEntries() {
        inbox(ttlSeconds = 10, leaseSeconds = 5).use { inbox ->
            val key = deliveryKey(NAMESPACE, "dlv_r1")
            assertEquals(ClaimState.NEW, inbox.state(key))
            enqueue(inbox, "r1")
            assertEquals(ClaimState.IN_PROGRESS, inbox.state(key))
            assertEquals(InboxReport(1, 0, 0), inbox.drain(handler = effect))
            assertEquals(ClaimState.DONE, inbox.state(key))
            assertEquals(0, inbox.purge())
            clock.advance(11)
            assertEquals(1, inbox.purge())
            assertEquals(ClaimState.NEW, inbox.state(key))
        }
    }

    @Test
    fun anInterruptedHandlerRollsBackAndTheEntryIsNotSettled() {
        inbox().use { inbox ->
            val key = enqueue(inbox, "r1")
            val t0 = clock.now.epochSecond
            try {
                inbox.drain { event, c ->
                    InboxFixture.writeEffect(c, effects, event.resourceReference)
                    throw InterruptedException("shutting down")
                }
                fail("the interruption must end the worker")
            } catch (e: InterruptedException) {
                assertEquals("shutting down", e.message)
            }
            assertEquals(emptyList<String>(), effectRows())
            assertEquals("pending, the attempt counted, held for the claim's lease, no failure recorded",
                Row("pending", 1, t0 + inbox.leaseSeconds, null), row(key))
            clock.advance(inbox.leaseSeconds)
            assertEquals(InboxReport(1, 0, 0), inbox.drain(handler = effect))
            assertEquals(listOf("r1"), effectRows())
        }
    }

    @Test
    fun wrongArgumentsAreRefusedByTheCore() {
        inbox().use { inbox ->
            for (call in listOf({ inbox.drain(maxAttempts = 0, handler = effect) }, { inbox.drain(maxAttempts = 101, handler = effect) },
                { inbox.runWorker(pollSeconds = 0.0, handler = effect) }, { inbox.poisoned(0) }, { inbox.poisoned(1001) })) {
                try {
                    call()
                    fail("accepted")
                } catch (e: RoyaltyKitException.InvalidArgument) {
                    assertEquals("invalid_argument", e.code)
                }
            }
            try {
                JdbcInbox(dataSource, table = "x;drop", createTable = false)
                fail("accepted")
            } catch (e: RoyaltyKitException.InvalidArgument) {
                assertTrue(e.message, e.message!!.contains("table"))
            }
            WebhookVerifier(listOf(SECRET)).use { v ->
                try {
                    v.receipt(emptyMap<String, String>(), ByteArray(0), NAMESPACE, transactional = true, inbox = true)
                    fail("accepted")
                } catch (e: IllegalArgumentException) {
                    assertTrue(e.message!!.contains("inbox"))
                }
            }
            assertEquals("JdbcInbox(dialect=${kind}, table=$table)", inbox.toString())
        }
    }
}

/** On PostgreSQL only: a receiver answering while a worker's handler runs, recovery over an inbox, cancellation. */
class PostgresInboxTest : InboxCase("postgres") {
    companion object {
        private lateinit var fake: FakeApi

        @BeforeClass @JvmStatic
        fun start() {
            fake = FakeApi()
        }

        @AfterClass @JvmStatic
        fun stop() = fake.close()

        /** The endpoint a subscription is created with (public, as the core requires); the fake routes it to the loopback receiver. */
        const val PUBLIC = "https://hooks.example.com/royaltykit-inbox"
    }

    @Test
    fun theReceiverAnswersAtOnceWhileTheWorkersHandlerSleeps() {
        inbox().use { inbox ->
            WebhookReceiver(listOf(SECRET), NAMESPACE, inbox).use { receiver ->
                InboxEndpoint(receiver).use { endpoint ->
                    val sleeping = CountDownLatch(1)
                    val inHandler = AtomicBoolean(false)
                    val first = AtomicBoolean(true)
                    val slow = InboxHandler { event, c ->
                        InboxFixture.writeEffect(c, effects, event.resourceReference)
                        if (first.getAndSet(false)) {
                            inHandler.set(true)
                            sleeping.countDown()
                            Thread.sleep(2000)
                            inHandler.set(false)
                        }
                    }
                    val stop = AtomicBoolean(false)
                    var report: InboxReport? = null
                    val worker = thread(name = "inbox-worker") { report = inbox.runWorker(stop, pollSeconds = 0.05, handler = slow) }
                    assertEquals(200 to "queued", endpoint.post("r1"))
                    assertTrue("the worker took the entry", sleeping.await(20, TimeUnit.SECONDS))
                    val millis = ArrayList<Double>()
                    for (ref in listOf("r2", "r3", "r4", "r1")) {
                        val started = System.nanoTime()
                        val answer = endpoint.post(ref)
                        millis += (System.nanoTime() - started) / 1e6
                        assertEquals(200 to (if (ref == "r1") "duplicate" else "queued"), answer)
                        assertTrue("answered while the handler still sleeps", inHandler.get())
                    }
                    System.err.println("InboxTest: replies while the worker's handler slept, ms: $millis")
                    // The handler sleeps 2 s: a reply that waited for it takes 2 s or more. The reply's speed
                    // is not asserted (wall-clock: a loaded 2-core runner took 78 ms).
                    assertTrue("each reply in < 1 s while the handler sleeps 2 s: $millis", millis.all { it < 1000 })
                    stop.set(true)
                    worker.join(20_000)
                    assertFalse(worker.isAlive)
                    assertEquals("the worker stopped after its entry", InboxReport(1, 0, 0), report)
                    assertEquals(listOf("r1"), effectRows())

                    assertEquals(InboxReport(3, 0, 0), inbox.drain(handler = effect))
                    assertEquals("each delivery's effect once", listOf("r1", "r2", "r3", "r4"), effectRows())
                    assertEquals(mapOf("done" to 4L), inbox.counts())
                }
            }
        }
    }

    @Test
    fun anInboxThatCannotBeReachedIsAnswered503SoTheServiceSendsItAgain() {
        val down = object : Inbox {
            override fun enqueue(key: String, deliveryId: String, event: String, body: String): Boolean =
                throw java.sql.SQLException("connection refused")
        }
        WebhookReceiver(listOf(SECRET), NAMESPACE, down).use { receiver ->
            val outcomes = ArrayList<String?>()
            receiver.onEvent = { outcomes += it.outcome }
            InboxEndpoint(receiver).use { endpoint -> assertEquals(503 to "store_unavailable", endpoint.post("r1")) }
            assertEquals(listOf("store_unavailable"), outcomes)
        }
    }

    @Test
    fun recoverDeliveriesChecksAnInboxAndReplaysOnlyTheLostDelivery() {
        fake.reset()
        inbox().use { inbox ->
            InboxEndpoint().use { endpoint ->
                fake.control("route", """{"from":"$PUBLIC","to":"${endpoint.url}"}""")
                val client = EnterpriseClient(JavaHttpTransport(), fake.url, "key-1", "secret-1", clock = fake.clock, sleep = fake.sleep, onEvent = {})
                val hook = client.createSubscription("inbox", PUBLIC, listOf("ddex.delivery.failed"))
                endpoint.receiver = WebhookReceiver(hook.secrets(), NAMESPACE, inbox)
                val sent = listOf(false, true, false).map { lose ->
                    val answer = fake.control("deliver", """{"reference":"${hook.reference}","event":"ddex.delivery.failed","lose":$lose}""")
                    assertEquals(answer.toString(), if (lose) "failed" else "delivered", answer["status"].asString)
                    answer["delivery"].asString
                }
                assertEquals(mapOf("pending" to 2L), inbox.counts())
                assertEquals(ClaimState.IN_PROGRESS, inbox.state(deliveryKey(NAMESPACE, sent[0])))
                assertEquals(ClaimState.NEW, inbox.state(deliveryKey(NAMESPACE, sent[1])))
                assertEquals(InboxReport(2, 0, 0), inbox.drain(handler = effect))

                val since = Instant.ofEpochMilli((fake.clock() * 1000).toLong()).minusSeconds(3600)
                val report = client.recoverDeliveries(hook.reference!!, inbox, NAMESPACE, since)
                assertEquals(report.toString(), 1L, report.replayed.toLong())
                val actions = report.deliveries.associate { it.reference to it.action }
                assertEquals(mapOf(sent[0] to RecoveryAction.PROCESSED, sent[1] to RecoveryAction.REPLAYED, sent[2] to RecoveryAction.PROCESSED), actions)
                val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15)
                while (inbox.counts()["pending"] != 1L) {
                    if (System.nanoTime() > deadline) fail("the replay never reached the inbox: ${fake.stats()}")
                    Thread.sleep(50)
                }
                assertEquals(InboxReport(1, 0, 0), inbox.drain(handler = effect))
                assertEquals("three resources, each once", 3, effectRows().toSet().size)
                assertEquals(3, effectRows().size)

                val again = client.recoverDeliveries(hook.reference!!, inbox, NAMESPACE, since)
                assertEquals(again.toString(), 0L, again.replayed.toLong())
                assertEquals(RecoveryAction.PROCESSED_BY_REPLAY, again.deliveries.single { it.reference == sent[1] }.action)
            }
        }
    }

    @Test
    fun cancellingTheSuspendingWorkerRollsBackItsHandlerAndEndsCancelled() {
        inbox().use { inbox ->
            val key = enqueue(inbox, "r1")
            val t0 = clock.now.epochSecond
            val running = CountDownLatch(1)
            val blocked = InboxHandler { event, c ->
                InboxFixture.writeEffect(c, effects, event.resourceReference)
                running.countDown()
                Thread.sleep(60_000)
            }
            runBlocking {
                val job = launch { inbox.runWorkerAsync(pollSeconds = 0.05, handler = blocked) }
                assertTrue(withContext(Dispatchers.IO) { running.await(20, TimeUnit.SECONDS) })
                job.cancelAndJoin()
                assertTrue(job.isCancelled)
            }
            assertEquals(emptyList<String>(), effectRows())
            assertEquals(Row("pending", 1, t0 + inbox.leaseSeconds, null), row(key))
            // a worker with nothing due stops when asked
            clock.advance(inbox.leaseSeconds)
            assertEquals(InboxReport(1, 0, 0), inbox.drain(handler = effect))
            val stop = AtomicBoolean(false)
            var report: InboxReport? = null
            val idle = thread { report = inbox.runWorker(stop, handler = effect) }
            Thread.sleep(100)
            assertTrue("idle, waiting for work", idle.isAlive)
            stop.set(true)
            idle.join(5_000)
            assertFalse(idle.isAlive)
            assertEquals(InboxReport(0, 0, 0), report)
        }
    }
}
