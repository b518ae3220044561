package dev.royaltykit

import dev.royaltykit.InboxFixture.NAMESPACE
import dev.royaltykit.InboxFixture.SECRET
import dev.royaltykit.client.EnterpriseClient
import dev.royaltykit.client.JavaHttpTransport
import dev.royaltykit.types.ClaimState
import dev.royaltykit.types.RecoveryAction
import dev.royaltykit.types.RoyaltyKitException
import org.junit.AfterClass
import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.BeforeClass
import org.junit.Rule
import org.junit.Test
import org.junit.rules.TemporaryFolder
import java.io.File
import java.time.Instant
import java.util.UUID
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicInteger
import kotlin.concurrent.thread

/**
 * The inbox on a Redis stream (RedisInbox, its worker, a WebhookReceiver in inbox mode) against a
 * real redis-server (RedisServer, as FleetTest's) through the built jar: the core's Lua scripts run
 * for real. Each test has its own key prefix (with a hash tag, as a Cluster wants).
 */
class RedisInboxTest {
    companion object {
        private lateinit var server: RedisServer
        private lateinit var fake: FakeApi

        @BeforeClass @JvmStatic
        fun start() {
            server = RedisServer()
            fake = FakeApi()
        }

        @AfterClass @JvmStatic
        fun stop() {
            fake.close()
            server.close()
        }

        /** The endpoint a subscription is created with (public, as the core requires); the fake routes it to the loopback receiver. */
        const val PUBLIC = "https://hooks.example.com/royaltykit-redis-inbox"
        const val EVENT = "ddex.delivery.failed"
    }

    @get:Rule
    val tmp = TemporaryFolder()

    private val prefix = "{rk-${UUID.randomUUID().toString().take(8)}}:"
    private val effects = "${prefix}effects"
    private val clock = MovableClock()
    private val redis = server.client()

    private fun inbox(ttlSeconds: Long? = null, leaseSeconds: Long? = null, client: RedisCommands = redis): RedisInbox =
        RedisInbox(client, prefix, ttlSeconds, leaseSeconds, clock)

    /** The handler's effect: one more run counted for the event's resource, in Redis. */
    private val effect = RedisInboxHandler { event, r -> r.execute(listOf("HINCRBY", effects, event.resourceReference, "1")) }

    /** How many times each resource's effect ran. */
    private fun effectRuns(): Map<String, Int> {
        val all = redis.execute(listOf("EVAL", "return cjson.encode(redis.call('HGETALL', KEYS[1]))", "1", effects))!!
        val flat = com.google.gson.JsonParser.parseString(all).let { if (it.isJsonArray) it.asJsonArray.map { e -> e.asString } else emptyList() }
        return flat.chunked(2).associate { it[0] to it[1].toInt() }.toSortedMap()
    }

    /** Adds a delivery about [ref] as a receiver does; its delivery key. */
    private fun enqueue(inbox: RedisInbox, ref: String): String {
        val key = deliveryKey(NAMESPACE, "dlv_$ref")
        assertTrue(inbox.enqueue(key, "dlv_$ref", EVENT, String(InboxFixture.body(ref))))
        return key
    }

    private fun field(key: String, name: String): String? = redis.execute(listOf("HGET", "${prefix}e:$key", name))

    @Test
    fun anEnqueueThenADuplicateAndTheStatesDeliveryRecoveryAsks() {
        inbox(ttlSeconds = 10, leaseSeconds = 5).use { inbox ->
            val key = deliveryKey(NAMESPACE, "dlv_r1")
            assertEquals(ClaimState.NEW, inbox.state(key))
            assertTrue(inbox.enqueue(key, "dlv_r1", EVENT, String(InboxFixture.body("r1"))))
            assertFalse("a duplicate", inbox.enqueue(key, "dlv_r1", EVENT, String(InboxFixture.body("r1"))))
            assertEquals(ClaimState.IN_PROGRESS, inbox.state(key))
            assertEquals(mapOf("pending" to 1L), inbox.counts())
            assertEquals(InboxReport(1, 0, 0), inbox.drain(handler = effect))
            assertEquals(ClaimState.DONE, inbox.state(key))
            assertFalse("a processed delivery is still a duplicate", inbox.enqueue(key, "dlv_r1", EVENT, "{}"))
            assertEquals(mapOf("done" to 1L), inbox.counts())
            assertEquals(mapOf("r1" to 1), effectRuns())
            assertEquals(InboxReport(0, 0, 0), inbox.drain(handler = effect))
            assertEquals(0, inbox.purge())
            clock.advance(11)
            assertEquals(1, inbox.purge())
            assertEquals(emptyMap<String, Long>(), inbox.counts())
        }
    }

    @Test
    fun threeWorkersDrainFiftyEntriesEachEffectOnce() {
        val refs = (1..50).map { "ref-%02d".format(it) }
        inbox().use { inbox -> refs.forEach { enqueue(inbox, it) } }
        val clients = (1..3).map { server.client() }
        val reports = ConcurrentHashMap<Int, InboxReport>()
        val failures = ArrayList<Throwable>()
        val workers = clients.mapIndexed { i, client ->
            thread(name = "redis-inbox-worker-$i") {
                try {
                    inbox(client = client).use { reports[i] = it.drain(handler = effect) }
                } catch (e: Throwable) {
                    synchronized(failures) { failures += e }
                }
            }
        }
        workers.forEach { it.join(60_000) }
        clients.forEach { it.close() }
        assertEquals(emptyList<Throwable>(), failures)
        assertEquals("every entry processed by one of the workers: $reports", 50L, reports.values.sumOf { it.processed })
        assertEquals(refs.associateWith { 1 }, effectRuns())
        inbox().use { assertEquals(mapOf("done" to 50L), it.counts()) }
    }

    @Test
    fun aFailingHandlerIsRetriedOnTheCoresBackoffThenPoisonThenPutBack() {
        inbox().use { inbox ->
            val t0 = clock.now.epochSecond
            val key = enqueue(inbox, "r1")
            val runs = AtomicInteger()
            val failing = RedisInboxHandler { _, _ -> runs.incrementAndGet(); throw IllegalStateException("upstream 503") }
            fun dueAt(): Long? = redis.execute(listOf("ZSCORE", "${prefix}delayed", key))?.toDouble()?.toLong()

            assertEquals(InboxReport(0, 1, 0), inbox.drain(maxAttempts = 3, seed = 5, handler = failing))
            assertEquals("the first backoff is 2 s", t0 + 2, dueAt())
            assertEquals("IllegalStateException: upstream 503", field(key, "last_error"))
            assertEquals(handlerErrorText("IllegalStateException", "upstream 503"), field(key, "last_error"))
            assertEquals("1", field(key, "attempts"))
            assertEquals("not due yet: nothing to do", InboxReport(0, 0, 0), inbox.drain(maxAttempts = 3, handler = failing))
            assertEquals(ClaimState.IN_PROGRESS, inbox.state(key))
            assertEquals(mapOf("pending" to 1L), inbox.counts())

            clock.advanceTo(dueAt()!!)
            val first = dueAt()!!
            assertEquals(InboxReport(0, 1, 0), inbox.drain(maxAttempts = 3, seed = 5, handler = failing))
            assertTrue("the retry moved forward", dueAt()!! > first + 2)
            clock.advanceTo(dueAt()!!)
            assertEquals(InboxReport(0, 0, 1), inbox.drain(maxAttempts = 3, seed = 5, handler = failing))
            assertEquals(3, runs.get())

            assertEquals(listOf(PoisonEntry(key, "dlv_r1", EVENT, 3, "IllegalStateException: upstream 503", t0)), inbox.poisoned())
            assertEquals(mapOf("poison" to 1L), inbox.counts())
            assertEquals("received, so a replay would not help", ClaimState.IN_PROGRESS, inbox.state(key))
            clock.advance(3600)
            assertEquals("a poison entry is never claimed", InboxReport(0, 0, 0), inbox.drain(handler = effect))

            assertTrue(inbox.retry(key))
            assertFalse("no longer poison", inbox.retry(key))
            assertEquals("0", field(key, "attempts"))
            assertEquals(InboxReport(1, 0, 0), inbox.drain(maxAttempts = 3, handler = effect))
            assertEquals(mapOf("r1" to 1), effectRuns())
            assertEquals(emptyList<PoisonEntry>(), inbox.poisoned())
            assertEquals(mapOf("done" to 1L), inbox.counts())
        }
    }

    @Test
    fun aClaimWhoseLeaseRanOutIsClaimedAgainAndTheFirstWorkersMarkIsRefused() {
        inbox(leaseSeconds = 1).use { inbox ->
            val key = enqueue(inbox, "r1")
            val inHandler = CountDownLatch(1)
            val release = CountDownLatch(1)
            val slow = RedisInboxHandler { event, r ->
                r.execute(listOf("HINCRBY", effects, event.resourceReference, "1"))
                inHandler.countDown()
                release.await(30, TimeUnit.SECONDS)
            }
            var first: InboxReport? = null
            val a = thread(name = "redis-inbox-first") { first = inbox.drain(handler = slow) }
            assertTrue(inHandler.await(20, TimeUnit.SECONDS))
            assertEquals("1", field(key, "attempts"))
            Thread.sleep(1300) // the first claim's lease (1 s) runs out
            server.client().use { other ->
                inbox(leaseSeconds = 1, client = other).use { second ->
                    assertEquals(InboxReport(1, 0, 0), second.drain(handler = effect))
                }
            }
            assertEquals("claimed again with attempts + 1", "2", field(key, "attempts"))
            assertEquals(ClaimState.DONE, inbox.state(key))
            release.countDown()
            a.join(20_000)
            assertFalse(a.isAlive)
            assertEquals("the first worker's mark was refused", InboxReport(0, 0, 0), first)
            assertEquals("done", field(key, "state"))
            assertEquals("at least once: the effect ran in both", mapOf("r1" to 2), effectRuns())
            assertEquals(mapOf("done" to 1L), inbox.counts())
        }
    }

    private class Child(val process: Process, val out: File, val err: File) {
        fun lines(): List<String> = out.readLines()
        override fun toString() = "stdout: ${out.readText()}\nstderr: ${err.readText()}"
    }

    private fun child(n: Int, mode: String): Child {
        val out = File(tmp.root, "child-$n.out")
        val err = File(tmp.root, "child-$n.err")
        val java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java")
        val jnaDir = tmp.newFolder("jna-$n") // the native library JNA unpacks, left there by a SIGKILL
        val p = ProcessBuilder(
            java, "-cp", System.getProperty("java.class.path"), "-Djna.tmpdir=${jnaDir.path}",
            "dev.royaltykit.RedisInboxChildKt", server.port.toString(), prefix, effects, mode,
        ).redirectOutput(out).redirectError(err).start()
        return Child(p, out, err)
    }

    @Test
    fun aWorkerSigkilledMidHandlerLosesNothingTheEntryRunsAgainAfterTheLease() {
        val refs = (1..5).map { "ref-$it" }
        val keys = inbox(leaseSeconds = 1).use { inbox -> refs.map { enqueue(inbox, it) } }
        val killed = child(0, "hang")
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60)
        while ("effect ref-1" !in killed.lines()) {
            if (System.nanoTime() > deadline || !killed.process.isAlive) fail("the child never ran the first handler: $killed")
            Thread.sleep(10)
        }
        killed.process.destroyForcibly() // SIGKILL: after the effect, before the mark
        assertTrue(killed.process.waitFor(30, TimeUnit.SECONDS))
        assertEquals(killed.toString(), 128 + 9, killed.process.exitValue())
        inbox(leaseSeconds = 1).use { inbox ->
            assertEquals(ClaimState.IN_PROGRESS, inbox.state(keys[0]))
            assertEquals(mapOf("pending" to 5L), inbox.counts())
        }
        Thread.sleep(1300) // its claim's lease runs out
        val next = child(1, "run")
        assertTrue(next.toString(), next.process.waitFor(120, TimeUnit.SECONDS))
        assertEquals(next.toString(), 0, next.process.exitValue())
        assertEquals(next.toString(), "drained 5 0 0", next.lines().last())
        inbox(leaseSeconds = 1).use { inbox ->
            assertEquals(mapOf("done" to 5L), inbox.counts())
            assertEquals(keys.map { ClaimState.DONE }, keys.map { inbox.state(it) })
        }
        assertEquals("2", field(keys[0], "attempts"))
        assertEquals("nothing lost; the killed entry's effect ran again (at least once)",
            mapOf("ref-1" to 2, "ref-2" to 1, "ref-3" to 1, "ref-4" to 1, "ref-5" to 1), effectRuns())
    }

    @Test
    fun aReceiverInInboxModeAnswersAtOnceWhileTheHandlerSleepsAndRedisDownIs503() {
        // warmed up as a running app is: a few receipts through a throwaway inbox (the first
        // request's class loading and JIT), so the times below are the receiver's own
        RedisInbox(redis, "${prefix}warm:").use { warm ->
            WebhookReceiver(listOf(SECRET), NAMESPACE, warm).use { receiver ->
                InboxEndpoint(receiver).use { endpoint -> repeat(5) { assertEquals(200 to "queued", endpoint.post("w$it")) } }
            }
        }
        inbox().use { inbox ->
            WebhookReceiver(listOf(SECRET), NAMESPACE, inbox).use { receiver ->
                val outcomes = ArrayList<String?>()
                receiver.onEvent = { synchronized(outcomes) { outcomes += it.outcome } }
                InboxEndpoint(receiver).use { endpoint ->
                    val sleeping = CountDownLatch(1)
                    val inHandler = AtomicBoolean(false)
                    val first = AtomicBoolean(true)
                    val slow = RedisInboxHandler { event, r ->
                        if (first.getAndSet(false)) {
                            inHandler.set(true)
                            sleeping.countDown()
                            Thread.sleep(2000)
                            inHandler.set(false)
                        }
                        r.execute(listOf("HINCRBY", effects, event.resourceReference, "1"))
                    }
                    val stop = AtomicBoolean(false)
                    var report: InboxReport? = null
                    val worker = thread(name = "redis-inbox-worker") {
                        server.client().use { own -> inbox(client = own).use { report = it.runWorker(stop, pollSeconds = 0.05, handler = slow) } }
                    }
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
                    System.err.println("RedisInboxTest: replies while the worker's handler slept, ms: $millis")
                    // The handler sleeps 2 s: a reply that waited for it takes 2 s or more. The reply's speed
                    // is not asserted (wall-clock: a loaded 2-core runner took 78 ms).
                    assertTrue("each reply in < 1 s while the handler sleeps 2 s: $millis", millis.all { it < 1000 })
                    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30)
                    while (inbox.counts() != mapOf("done" to 4L)) {
                        if (System.nanoTime() > deadline) fail("the worker did not process the entries: ${inbox.counts()}")
                        Thread.sleep(50)
                    }
                    stop.set(true)
                    worker.join(20_000)
                    assertFalse(worker.isAlive)
                    assertEquals(InboxReport(4, 0, 0), report)
                    assertEquals(mapOf("r1" to 1, "r2" to 1, "r3" to 1, "r4" to 1), effectRuns())
                }
                assertEquals(listOf("queued", "queued", "queued", "queued", "duplicate"), outcomes)
            }
        }
        // Redis down: its own server, stopped
        RedisServer().let { own ->
            own.client().use { client ->
                RedisInbox(client, prefix).use { inbox ->
                    WebhookReceiver(listOf(SECRET), NAMESPACE, inbox).use { receiver ->
                        InboxEndpoint(receiver).use { endpoint ->
                            assertEquals(200 to "queued", endpoint.post("r1"))
                            own.close()
                            assertEquals(503 to "store_unavailable", endpoint.post("r2"))
                        }
                    }
                }
            }
        }
    }

    @Test
    fun recoverDeliveriesChecksTheRedisInboxAndReplaysOnlyTheLostDelivery() {
        fake.reset()
        inbox().use { inbox ->
            InboxEndpoint().use { endpoint ->
                fake.control("route", """{"from":"$PUBLIC","to":"${endpoint.url}"}""")
                val client = EnterpriseClient(JavaHttpTransport(), fake.url, "key-1", "secret-1", clock = fake.clock, sleep = fake.sleep, onEvent = {})
                val hook = client.createSubscription("redis-inbox", PUBLIC, listOf(EVENT))
                endpoint.receiver = WebhookReceiver(hook.secrets(), NAMESPACE, inbox)
                val sent = listOf(false, true, false).map { lose ->
                    val answer = fake.control("deliver", """{"reference":"${hook.reference}","event":"$EVENT","lose":$lose}""")
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
                assertEquals("three resources, each once", listOf(1, 1, 1), effectRuns().values.toList())

                val again = client.recoverDeliveries(hook.reference!!, inbox, NAMESPACE, since)
                assertEquals(again.toString(), 0L, again.replayed.toLong())
                assertEquals(RecoveryAction.PROCESSED_BY_REPLAY, again.deliveries.single { it.reference == sent[1] }.action)
            }
        }
    }

    @Test
    fun wrongArgumentsAreRefusedByTheCoreAndTheErrorTextIsTheCores() {
        inbox().use { inbox ->
            for (call in listOf({ inbox.drain(maxAttempts = 0, handler = effect) }, { inbox.runWorker(pollSeconds = 0.0, handler = effect) },
                { inbox.poisoned(0) }, { inbox.poisoned(1001) }, { inbox.enqueue("k", "", EVENT, "{}") }, { RedisInbox(redis, "") },
                { RedisInbox(redis, ttlSeconds = 60, leaseSeconds = 61) })) {
                try {
                    call()
                    fail("accepted")
                } catch (e: RoyaltyKitException.InvalidArgument) {
                    assertEquals("invalid_argument", e.code)
                }
            }
            assertEquals("RedisInbox(prefix=$prefix)", inbox.toString())
            RedisInbox(redis).use { assertEquals("{royaltykit:inbox}:", it.prefix) }
            assertEquals(100L, defaultPoisonListed())
            assertEquals("IllegalStateException", InboxRunner.errorText(IllegalStateException()))
            assertEquals("IOException: gone", InboxRunner.errorText(java.io.IOException("gone")))
            assertEquals(1024, handlerErrorText("E", "x".repeat(5000)).length)
        }
    }
}
