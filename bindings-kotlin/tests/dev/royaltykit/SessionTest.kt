package dev.royaltykit

import dev.royaltykit.types.*

import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertNotEquals
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.Test
import java.util.Collections
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger

/**
 * The core's Session from the JVM: one token exchange in flight for many threads (the others wait
 * on the session's monitor, `awaitToken`, and are woken by `wakeWaiters`), a failed exchange
 * failing its waiters, an abandoned one letting another call lead, and the waits themselves.
 */
class SessionTest {
    private val now = 1_763_900_000.0

    private fun auth(s: CallStep): String = (s as CallStep.Send).request.headers().first { it.name == "Authorization" }.value

    /** One call on [session] as a host drives it, up to its send: the token it sends. */
    private fun firstSend(session: Session, exchanges: AtomicInteger): String =
        Call("listEnterpriseCountries", RequestParams()).use { c ->
            while (true) {
                when (val s = c.nextIn(now, session)) {
                    is CallStep.RefreshToken -> {
                        exchanges.incrementAndGet()
                        Thread.sleep(200) // an exchange takes a while: the others wait for it
                        session.storeToken(BearerToken.enterprise("tok-1"), now + 3600)
                        session.wakeWaiters()
                    }
                    is CallStep.AwaitToken -> session.awaitToken(s.version, s.seconds)
                    is CallStep.Send -> return@use auth(s)
                    else -> fail("unexpected $s")
                }
            }
            @Suppress("UNREACHABLE_CODE") ""
        }

    @Test
    fun manyThreadsOnOneSessionShareOneExchange() {
        Session().use { session ->
            val threads = 16
            val exchanges = AtomicInteger()
            val pool = Executors.newFixedThreadPool(threads)
            try {
                val start = CountDownLatch(1)
                val futures = List(threads) { pool.submit<String> { start.await(); firstSend(session, exchanges) } }
                start.countDown()
                val tokens = futures.map { it.get(30, TimeUnit.SECONDS) }
                assertEquals(List(threads) { "Bearer tok-1" }, tokens)
                assertEquals(1, exchanges.get())
                assertEquals(1L, session.exchanges())
                assertTrue(session.hasToken())
                assertFalse(session.exchanging())
            } finally {
                pool.shutdownNow()
            }
        }
    }

    @Test
    fun aFailedExchangeFailsTheCallsThatWaitedForIt() {
        Session().use { session ->
            Call("listEnterpriseCountries", RequestParams()).use { leader ->
                Call("listEnterpriseCountries", RequestParams()).use { waiter ->
                    assertTrue(leader.nextIn(now, session) is CallStep.RefreshToken)
                    assertTrue(session.exchanging())
                    val wait = waiter.nextIn(now, session) as CallStep.AwaitToken
                    assertEquals(session.version(), wait.version)
                    session.exchangeFailed("401 invalid_client")
                    assertNotEquals(wait.version, session.version())
                    val failed = waiter.nextIn(now, session) as CallStep.Fail
                    assertEquals("token_exchange_failed", failed.rule)
                    assertTrue(failed.reason, failed.reason.contains("401 invalid_client"))
                    // a call that asks later leads a new exchange
                    Call("listEnterpriseCountries", RequestParams()).use { later ->
                        assertTrue(later.nextIn(now + 1, session) is CallStep.RefreshToken)
                    }
                    assertEquals(2L, session.exchanges())
                }
            }
        }
    }

    @Test
    fun anAbandonedExchangeLetsAWaitingCallLead() {
        Session().use { session ->
            Call("listEnterpriseCountries", RequestParams()).use { leader ->
                Call("listEnterpriseCountries", RequestParams()).use { waiter ->
                    assertTrue(leader.nextIn(now, session) is CallStep.RefreshToken)
                    assertTrue(waiter.nextIn(now, session) is CallStep.AwaitToken)
                    session.abandonExchange()
                    assertTrue(waiter.nextIn(now, session) is CallStep.RefreshToken)
                }
            }
        }
    }

    @Test
    fun aWaitEndsWhenWokenAfterItsSecondsOrWhenInterrupted() {
        Session().use { session ->
            // nothing changes: the wait lasts its seconds
            val t0 = System.nanoTime()
            session.awaitToken(session.version(), 0.2)
            assertTrue((System.nanoTime() - t0) / 1e9 >= 0.19)
            // a change woken at once ends it long before its seconds
            val version = session.version()
            val woken = Thread {
                Thread.sleep(100)
                session.storeToken(BearerToken.enterprise("t"))
                session.wakeWaiters()
            }
            val t1 = System.nanoTime()
            woken.start()
            session.awaitToken(version, 30.0)
            assertTrue((System.nanoTime() - t1) / 1e9 < 10)
            woken.join()
            // an interrupt ends it with InterruptedException
            val outcome = Collections.synchronizedList(ArrayList<String>())
            val waiting = Thread {
                try {
                    session.awaitToken(session.version(), 30.0)
                    outcome += "returned"
                } catch (e: InterruptedException) {
                    outcome += "interrupted"
                }
            }
            waiting.start()
            Thread.sleep(100)
            waiting.interrupt()
            waiting.join(5_000)
            assertEquals(listOf("interrupted"), outcome)
        }
    }

    @Test
    fun aParsedTokenIsStoredWithItsOwnRefreshTime() {
        val tenant = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"
        val body = """{"access_token":"tok_p","token_type":"Bearer","expires_in":3600,"scope":"exports:read"}""".toByteArray()
        val token = parseTokenResponse(200, mapOf("Cache-Control" to "no-store"), body, tenant, emptyList(), now.toLong())
        Session().use { session ->
            session.storeToken(token)
            val params = RequestParams(tenantId = tenant)
            Call("listPlatformExports", params).use { assertEquals("Bearer tok_p", auth(it.nextIn(now, session))) }
            // past the token's own refresh time the next call refreshes
            Call("listPlatformExports", params).use { assertTrue(it.nextIn(token.refreshAt().toDouble() + 1, session) is CallStep.RefreshToken) }
        }
    }

    @Test
    fun aSessionPacesItsCallsByItsBudget() {
        RateBudget(listOf(RateWindow("w", 2, 60))).use { budget ->
            Session(budget).use { session ->
                session.storeToken(BearerToken.enterprise("t"))
                val steps = List(3) { Call("listEnterpriseCountries", RequestParams()).use { it.nextIn(now, session) } }
                assertTrue(steps[0] is CallStep.Send && steps[1] is CallStep.Send)
                assertTrue("${steps[2]}", steps[2] is CallStep.Wait)
            }
        }
    }
}
