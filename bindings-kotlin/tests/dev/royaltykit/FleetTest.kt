package dev.royaltykit

import dev.royaltykit.client.EnterpriseClient
import dev.royaltykit.client.JavaHttpTransport
import dev.royaltykit.client.ReportsClient
import dev.royaltykit.types.Api
import dev.royaltykit.types.MachineEvent
import dev.royaltykit.types.RoyaltyKitException
import org.junit.AfterClass
import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertNull
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.BeforeClass
import org.junit.Test
import dev.royaltykit.coroutines.requestAsync
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import java.util.concurrent.TimeUnit

/**
 * Fleets (the core's `Fleet`): processes of one API client sharing one token and one rate budget
 * through a real `redis-server`, against the shared fake API (tests/fakeapi/server.py) over real
 * loopback HTTP. The processes are child JVMs ([FleetChild]) on this test's class path, each with
 * its own client and its own connection to Redis.
 */
class FleetTest {
    companion object {
        private lateinit var fake: FakeApi
        private lateinit var redis: RedisServer

        @BeforeClass @JvmStatic
        fun start() {
            fake = FakeApi()
            redis = RedisServer()
        }

        @AfterClass @JvmStatic
        fun stop() {
            fake.close()
            redis.close()
        }
    }

    private var prefixes = 0

    /** A prefix of its own for each fleet of the class (one Redis serves them all). */
    private fun prefix(): String = "fleet-test:${System.nanoTime()}:${prefixes++}:"

    /**
     * [processes] child JVMs of one fleet, each making [requests] requests at once from the same
     * moment under [budget] (`preset` or a per-minute limit); each one's `done` line once all ended.
     */
    private fun fleet(processes: Int, requests: Int, budget: String, timeoutSeconds: Long = 60): List<List<Int>> {
        val java = ProcessHandle.current().info().command().orElse("java")
        val prefix = prefix()
        val startAt = System.currentTimeMillis() + 4000 // every JVM started and loaded by then
        val children = (1..processes).map {
            val cmd = mutableListOf(java, "-cp", System.getProperty("java.class.path"))
            System.getProperty("royaltykit.native.dir")?.let { cmd += "-Droyaltykit.native.dir=$it" }
            cmd += listOf(FleetChild::class.java.name, fake.url, "${redis.port}", prefix, "$requests", budget, "$startAt")
            ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start()
        }
        return children.map { p ->
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                children.forEach { it.destroyForcibly() }
                fail("a fleet process did not finish in $timeoutSeconds s")
            }
            val line = p.inputStream.bufferedReader().readLines().lastOrNull { it.startsWith("done ") }
                ?: throw AssertionError("a fleet process ended (exit ${p.exitValue()}) without its done line")
            assertEquals("exit of a fleet process: $line", 0, p.exitValue())
            line.removePrefix("done ").split(" ").map { it.toInt() }
        }
    }

    private fun stat(name: String): Int = fake.stats()[name].asInt

    @Test
    fun fourProcessesShareOneTokenExchange() {
        fake.reset("""{"token_delay": 0.5}""")
        val done = fleet(processes = 4, requests = 10, budget = "preset")
        assertEquals("every request done: $done", listOf(10, 10, 10, 10), done.map { it[0] })
        assertEquals("one exchange for the fleet: $done", 1, stat("tokens_issued"))
        assertEquals(1, stat("max_concurrent_exchanges"))
        assertEquals(40, fake.stats()["requests"].asJsonObject["listEnterpriseCountries"].asInt)
        // every process refreshed (led or adopted) once
        assertEquals(listOf(1, 1, 1, 1), done.map { it[2] })
    }

    @Test
    fun aTokenRefusedMidRunIsExchangedOnceMoreForTheFleet() {
        fake.reset(
            """{"token_delay": 0.5, "faults": [{"op": "listEnterpriseCountries", "nth": 15, "do": "expire_token"}]}""",
        )
        val done = fleet(processes = 4, requests = 10, budget = "preset")
        assertEquals("every request done: $done", listOf(10, 10, 10, 10), done.map { it[0] })
        assertTrue("the refused token was seen", stat("unauthorized") >= 1)
        assertEquals("one exchange more for the fleet, not one per process: $done", 2, stat("tokens_issued"))
    }

    @Test
    fun theBudgetHoldsAcrossProcesses() {
        // 12 a minute for the fleet: the first 12 reservations go at once (the exchange is one of
        // them), the rest wait for the window (a minute: the fake counts a rolling 60 s)
        fake.reset()
        val done = fleet(processes = 4, requests = 5, budget = "12", timeoutSeconds = 150)
        assertEquals("every request done: $done", listOf(5, 5, 5, 5), done.map { it[0] })
        val most = stat("max_per_minute")
        assertTrue("at most 12 in any minute at the service, across the processes: $most", most <= 12)
        assertTrue("the first window was used at once: $most", most >= 10)
        assertTrue("the processes waited for the fleet's window: $done", done.sumOf { it[3] } > 0)
        assertEquals(1, stat("tokens_issued"))
    }

    @Test
    fun aRedisThatCannotBeReachedHoldsTheRequestsUntilItIsBack() {
        fake.reset()
        val port = RedisServer.freePort() // nothing listens there yet
        val events = ArrayList<MachineEvent>()
        var server: RedisServer? = null
        var slept = 0.0
        val prefix = prefix()
        // The reservations Redis answered: a call reserves again when a second has passed since
        // its reservation (one is used only in the second it was made), so there may be more
        // than sends, each one counted.
        val resp = Resp(port)
        val answered = java.util.concurrent.atomic.AtomicInteger()
        val counting = RedisCommands { command ->
            resp.execute(command).also { if ("${prefix}rate:api_client" in command) answered.incrementAndGet() }
        }
        try {
            RedisFleet(counting, prefix).use { fleet ->
                val client = EnterpriseClient(
                    JavaHttpTransport(), fake.url, "key-1", "secret-1", fleet = fleet, onEvent = { events += it },
                    sleep = { s ->
                        slept += s
                        // Redis comes back after two seconds of waiting
                        if (slept >= 2.0 && server == null) server = RedisServer(port)
                        Thread.sleep((s * 1000).toLong())
                    },
                )
                assertTrue(fleet.owns(client.session))
                client.request("listEnterpriseCountries")
                val waits = events.filter { it.kind == "rate_limited" }
                assertTrue("a rate_limited event per second without Redis: $waits", waits.size >= 2)
                assertTrue(waits.all { it.reason == "the fleet's Redis could not be reached" && it.waitSeconds == 1.0 })
                val sends = events.filter { it.kind == "send" }.map { it.operation }
                assertEquals(listOf("exchangeEnterpriseToken", "listEnterpriseCountries"), sends)
                // nothing was sent uncounted: each send has its reservation in Redis, and Redis
                // holds every reservation it answered
                server!!.client().use { c ->
                    val counted = c.execute(listOf("ZCARD", "${prefix}rate:api_client"))!!.toInt()
                    assertEquals("every reservation Redis answered is counted", answered.get(), counted)
                    assertTrue("each of the ${sends.size} sends has its reservation: $counted", counted >= sends.size)
                    // and the token was published for the fleet (its value never in an event)
                    val record = c.execute(listOf("GET", "${prefix}token"))!!
                    assertTrue(record.contains("\"a\":\"enterprise\""))
                    assertFalse(events.any { it.message.contains(record.substringAfter("\"v\":\"").substringBefore('"')) })
                }
            }
            assertEquals(1, fake.stats()["requests"].asJsonObject["listEnterpriseCountries"].asInt)
        } finally {
            resp.close()
            server?.close()
        }
    }

    @Test
    fun aRefreshCancelledWhileAnotherProcessExchangesIsAbandoned() {
        fake.reset()
        val prefix = prefix()
        // another process holds the fleet's exchange lock (and never publishes)
        redis.client().use { assertEquals("OK", it.execute(listOf("SET", "${prefix}exchange", "another-process", "PX", "60000"))) }
        RedisFleet(redis.client(), prefix).use { fleet ->
            val client = EnterpriseClient(JavaHttpTransport(), fake.url, "key-1", "secret-1", fleet = fleet, onEvent = {})
            runBlocking {
                val job = launch(Dispatchers.Default) { client.requestAsync("listEnterpriseCountries") }
                delay(500)
                assertTrue("the call leads the refresh, waiting for the other process", client.session.exchanging())
                job.cancelAndJoin()
                assertTrue(job.isCancelled)
            }
            assertFalse("the cancelled refresh was abandoned", client.session.exchanging())
            assertEquals(0, stat("tokens_issued"))
            assertEquals(null, fake.stats()["requests"].asJsonObject["listEnterpriseCountries"])
        }
    }

    /** The fleet's exchange lock under [prefix] as Redis holds it (null: nobody holds it). */
    private fun lockHolder(prefix: String): String? = redis.client().use { it.execute(listOf("GET", "${prefix}exchange")) }

    /** Waits (at most 10 s) until some process holds the fleet's exchange lock under [prefix]: its holder. */
    private fun awaitLock(prefix: String): String {
        val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10)
        while (System.nanoTime() < deadline) {
            lockHolder(prefix)?.let { return it }
            Thread.sleep(10)
        }
        throw AssertionError("nobody took the fleet's exchange lock")
    }

    @Test
    fun aCallCancelledMidExchangeReleasesTheFleetsLock() {
        // a slow exchange: the coroutine is cancelled while its process holds the lock
        fake.reset("""{"token_delay": 3}""")
        val prefix = prefix()
        RedisFleet(redis.client(), prefix).use { fleet ->
            val client = EnterpriseClient(JavaHttpTransport(), fake.url, "key-1", "secret-1", fleet = fleet, onEvent = {})
            runBlocking {
                val job = launch(Dispatchers.Default) { client.requestAsync("listEnterpriseCountries") }
                val holder = withContext(Dispatchers.IO) { awaitLock(prefix) }
                assertTrue("the call leads the refresh: $holder", client.session.exchanging())
                job.cancelAndJoin()
                assertTrue(job.isCancelled)
            }
            assertNull("the lock is released at once, not after its lease", lockHolder(prefix))
            assertFalse("the cancelled refresh was abandoned", client.session.exchanging())
            assertFalse(client.session.hasToken())
            assertNull(redis.client().use { it.execute(listOf("GET", "${prefix}token")) })
            assertEquals(null, fake.stats()["requests"].asJsonObject["listEnterpriseCountries"])
        }
    }

    @Test
    fun aThreadInterruptedMidExchangeReleasesTheFleetsLockForTheNextProcess() {
        fake.reset("""{"token_delay": 2}""")
        val prefix = prefix()
        RedisFleet(redis.client(), prefix).use { fleet ->
            val client = EnterpriseClient(JavaHttpTransport(), fake.url, "key-1", "secret-1", fleet = fleet, onEvent = {})
            var thrown: Throwable? = null
            val caller = Thread {
                try {
                    client.request("listEnterpriseCountries")
                } catch (e: Throwable) {
                    thrown = e
                }
            }
            caller.start()
            awaitLock(prefix)
            assertTrue(client.session.exchanging())
            caller.interrupt()
            caller.join(10_000)
            assertFalse("the interrupted call ended", caller.isAlive)
            assertTrue("the call ended with its interrupt: $thrown", thrown is InterruptedException)
            assertNull("the lock is released at once, not after its lease", lockHolder(prefix))
            assertFalse(client.session.exchanging())
        }
        // another process of the fleet takes the lock and exchanges now, not after the lease (330 s)
        RedisFleet(redis.client(), prefix).use { other ->
            val client = EnterpriseClient(JavaHttpTransport(), fake.url, "key-1", "secret-1", fleet = other, onEvent = {})
            val started = System.nanoTime()
            client.request("listEnterpriseCountries")
            val seconds = (System.nanoTime() - started) / 1e9
            assertTrue("the next process waited for no lease: $seconds s", seconds < 30)
            assertTrue(client.session.hasToken())
            assertNull(lockHolder(prefix))
            assertEquals(1, fake.stats()["requests"].asJsonObject["listEnterpriseCountries"].asInt)
        }
    }

    @Test
    fun anAbandonCommandReleasesOnlyTheLockItsRefreshHolds() {
        Fleet(prefix()).use { fleet ->
            val session = fleet.session()
            redis.client().use { c ->
                FleetToken(session, Api.ENTERPRISE, null, 9uL).use { ft ->
                    assertNull("no lock held before the exchange", ft.abandonCommand())
                    var step = ft.next()
                    while (step != FleetTokenStep.Exchange) {
                        val command = (step as FleetTokenStep.Command).command
                        // from the lock taken on (its one more look, then the exchange), it can be released
                        val held = c.execute(listOf("GET", "${fleet.prefix()}exchange")) == "0000000000000009"
                        assertEquals(command.describe(), held, ft.abandonCommand() != null)
                        step = ft.replied(c.execute(command.args()), session)
                    }
                    assertEquals("0000000000000009", c.execute(listOf("GET", "${fleet.prefix()}exchange")))
                    val unlock = ft.abandonCommand()!!
                    assertEquals("EVAL ${fleet.prefix()}exchange", unlock.describe())
                    assertEquals(unlockScript(), unlock.args()[1])
                    assertEquals("1", c.execute(unlock.args()))
                    assertNull(c.execute(listOf("GET", "${fleet.prefix()}exchange")))
                    session.abandonExchange()
                }
                // another holder's lock is left alone
                FleetToken(session, Api.ENTERPRISE, null, 10uL).use { ft ->
                    var step = ft.next()
                    while (step != FleetTokenStep.Exchange) {
                        step = ft.replied(c.execute((step as FleetTokenStep.Command).command.args()), session)
                    }
                    val unlock = ft.abandonCommand()!!
                    assertEquals("OK", c.execute(listOf("SET", "${fleet.prefix()}exchange", "another-process")))
                    assertEquals("0", c.execute(unlock.args()))
                    assertEquals("another-process", c.execute(listOf("GET", "${fleet.prefix()}exchange")))
                    ft.exchanged(BearerToken.enterprise("et_x"), null)
                    assertNull("the publish releases the lock: nothing to abandon", ft.abandonCommand())
                }
            }
        }
    }

    @Test
    fun reportingClientsOfAFleetShareOneToken() {
        // two clients with sessions of their own (as two processes have), one fleet: the second
        // adopts the token the first published, bound to the same tenant
        fake.reset()
        val tenant = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"
        val prefix = prefix()
        RedisFleet(redis.client(), prefix).use { one ->
            RedisFleet(redis.client(), prefix).use { two ->
                val a = ReportsClient(JavaHttpTransport(), fake.url, "cid", "csecret", tenant, fleet = one, onEvent = {})
                val b = ReportsClient(JavaHttpTransport(), fake.url, "cid", "csecret", tenant, fleet = two, onEvent = {})
                assertFalse(a.session === b.session)
                a.request("listPlatformExports")
                b.request("listPlatformExports")
                assertEquals(1, stat("tokens_issued"))
                assertEquals(2, fake.stats()["requests"].asJsonObject["listPlatformExports"].asInt)
                // another tenant's client of the same prefix never adopts that token
                val other = ReportsClient(JavaHttpTransport(), fake.url, "cid", "csecret", "another-tenant", fleet = two, onEvent = {})
                try {
                    other.request("listPlatformExports")
                } catch (e: Exception) {
                    // the fake knows one tenant: its exchange is refused, and nothing was adopted
                }
                assertEquals(1, stat("tokens_issued"))
                assertTrue(other.session.exchanges() >= 1)
                assertFalse(other.session.hasToken())
            }
        }
    }

    @Test
    fun aClientOfAFleetNeedsItsFleet() {
        RedisFleet(Resp(RedisServer.freePort()), "a:").use { a ->
            RedisFleet(Resp(RedisServer.freePort()), "b:").use { b ->
                val one = EnterpriseClient(JavaHttpTransport(), fake.url, "key-1", "secret-1", fleet = a)
                assertTrue(a.owns(one.session))
                assertEquals("a:", one.session.fleet()!!.prefix())
                // shared with another client of the fleet; a copy keeps it
                val two = EnterpriseClient(JavaHttpTransport(), fake.url, "key-1", "secret-1", session = one.session, fleet = a)
                assertTrue(two.session === one.session)
                assertTrue(one.withOptions(maxAttempts = 2).session === one.session)
                // a fleet's session without its fleet, or another fleet's: refused before any request
                try {
                    EnterpriseClient(JavaHttpTransport(), fake.url, "key-1", "secret-1", session = one.session)
                    fail("a fleet's session without its fleet was accepted")
                } catch (e: IllegalArgumentException) {
                    assertTrue(e.message!!, e.message!!.contains("fleet"))
                }
                try {
                    EnterpriseClient(JavaHttpTransport(), fake.url, "key-1", "secret-1", session = one.session, fleet = b)
                    fail("another fleet's session was accepted")
                } catch (e: IllegalArgumentException) {
                    assertTrue(e.message!!, e.message!!.contains("another fleet"))
                }
                // the reporting client too, its budget (none by default) the fleet's
                val reports = ReportsClient(JavaHttpTransport(), fake.url, "cid", "csecret", "t-1", fleet = b)
                assertTrue(b.owns(reports.session))
                assertNull(Session().fleet())
            }
        }
        for (bad in listOf("", "has space", "x".repeat(129))) {
            try {
                RedisFleet(Resp(1), bad)
                fail("prefix '$bad' accepted")
            } catch (e: RoyaltyKitException.InvalidArgument) {
                assertEquals("invalid_argument", e.code)
            }
        }
        assertEquals(defaultFleetPrefix(), RedisFleet(Resp(1)).use { it.prefix })
    }

    @Test
    fun aFleetTokenStepNeverShowsTheToken() {
        Fleet("show:").use { fleet ->
            val session = fleet.session()
            FleetToken(session, Api.ENTERPRISE, null, 7uL, 1_763_900_000.0).use { ft ->
                assertTrue(ft.replied(null, session, 1_763_900_000.0) is FleetTokenStep.Command) // nothing published
                // the lock is ours: one more look for a token published meanwhile, then the exchange
                val recheck = ft.replied("OK", session, 1_763_900_000.0)
                assertEquals("GET show:token", (recheck as FleetTokenStep.Command).command.describe())
                assertEquals(FleetTokenStep.Exchange, ft.replied(null, session, 1_763_900_000.0))
                val publish = ft.exchanged(BearerToken.enterprise("et_secret_value"), 1_763_903_000.0, 1_763_900_000.0)
                val command = (publish as FleetTokenStep.Command).command
                assertEquals(publishScript(), command.args()[1])
                assertTrue(command.args().any { it.contains("et_secret_value") })
                for (shown in listOf(publish.toString(), command.describe(), command.toString(), ft.describe())) {
                    assertFalse(shown, shown.contains("et_secret_value"))
                }
                assertEquals("EVAL show:token", command.describe())
                assertEquals(FleetTokenStep.Done, ft.replied("1", session, 1_763_900_000.0))
                assertTrue(session.hasToken())
            }
            // a session of no fleet has no fleet token
            try {
                Session().use { FleetToken(it, Api.ENTERPRISE) }
                fail("a fleet token of a session of no fleet")
            } catch (e: RoyaltyKitException.InvalidArgument) {
                assertEquals("invalid_argument", e.code)
            }
        }
        assertTrue(reserveScript().contains("ZADD"))
        assertTrue(unlockScript().contains("DEL"))
        assertEquals(0.1, fleetPollSeconds(), 0.0)
    }

    @Test
    fun aReservationIsCountedInRedis() {
        // the machines alone, as a host drives them: the budget's windows are the fleet's
        RateBudget(listOf(RateWindow("w", 2, 60))).use { budget ->
            Fleet(prefix()).use { fleet ->
                val session = fleet.session(budget)
                session.storeToken(BearerToken.enterprise("t"))
                redis.client().use { c ->
                    val now = 1_763_900_000.0
                    val steps = (1..3).map {
                        Call("listEnterpriseCountries", RequestParams(), seed = it.toULong()).use { call ->
                            val reserve = call.nextIn(now, session) as CallStep.Reserve
                            call.reserved(c.execute(reserve.command), now)
                            call.nextIn(now, session)
                        }
                    }
                    assertTrue(steps[0] is CallStep.Send)
                    assertTrue(steps[1] is CallStep.Send)
                    assertEquals("the third waits for the window: 62 s, a minute and the margin", 62.0, (steps[2] as CallStep.Wait).seconds, 0.001)
                }
            }
        }
    }
}
