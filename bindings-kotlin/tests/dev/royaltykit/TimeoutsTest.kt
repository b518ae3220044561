package dev.royaltykit

import dev.royaltykit.client.EnterpriseClient
import dev.royaltykit.client.HttpTransport
import dev.royaltykit.client.JavaHttpTransport
import dev.royaltykit.client.ReportsClient
import dev.royaltykit.okhttp.OkHttpTransport
import dev.royaltykit.types.RoyaltyKitException
import dev.royaltykit.types.TransportFailure
import org.junit.Assert.assertEquals
import org.junit.Assert.assertSame
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.Test
import java.net.ServerSocket
import java.net.Socket
import java.net.http.HttpClient
import java.time.Duration

/**
 * Point 5 of issue 42: connect and read timeouts per client and per copy (the core's defaults and
 * checks), the connect timeout reaching each HTTP library, a real read timeout on loopback (no
 * headers; headers then a stalled body), and the poll-interval bounds clamping the waits.
 */
class TimeoutsTest {
    private fun reports(t: HttpTransport, url: String = "http://127.0.0.1:9", connect: Duration? = null,
                        read: Duration? = null, timeout: Duration? = null) =
        ReportsClient(t, url, "cid", "csecret", "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e", timeout = timeout, connectTimeout = connect,
            readTimeout = read, sleep = {}, maxAttempts = 1, onEvent = {})

    private fun seconds(d: Duration) = d.seconds + d.nano / 1e9

    @Test
    fun unsetTimeoutsAreTheCoresDefaultsAndTimeoutIsTheReadTimeout() {
        val defaults = clientTimeouts()
        val c = reports(JavaHttpTransport())
        assertEquals(defaults.connectSeconds, seconds(c.connectTimeout), 0.0)
        assertEquals(defaults.readSeconds, seconds(c.readTimeout), 0.0)
        val alias = reports(JavaHttpTransport(), timeout = Duration.ofMillis(1500))
        assertEquals(Duration.ofMillis(1500), alias.readTimeout)
        assertEquals(Duration.ofMillis(1500), alias.timeout)
        val e = EnterpriseClient(JavaHttpTransport(), "http://127.0.0.1:9", "k", "s", readTimeout = Duration.ofSeconds(3))
        assertEquals(Duration.ofSeconds(3), e.timeout)
    }

    @Test
    fun aBadTimeoutIsRefusedAtConstructionNamingIt() {
        for ((name, make) in listOf<Pair<String, () -> Unit>>(
            "connect_timeout" to { reports(JavaHttpTransport(), connect = Duration.ZERO) },
            "read_timeout" to { reports(JavaHttpTransport(), read = Duration.ofSeconds(-1)) },
            "read_timeout" to { reports(JavaHttpTransport(), timeout = Duration.ofDays(2)) },
            "connect_timeout" to { reports(JavaHttpTransport()).withOptions(connectTimeout = Duration.ofDays(3)) },
        )) {
            try {
                make()
                fail("$name accepted")
            } catch (e: RoyaltyKitException.InvalidArgument) {
                assertEquals(name, e.argument)
            }
        }
        for (make in listOf<() -> Unit>(
            { reports(JavaHttpTransport(), timeout = Duration.ofSeconds(1), read = Duration.ofSeconds(2)) },
            { reports(JavaHttpTransport()).withOptions(timeout = Duration.ofSeconds(1), readTimeout = Duration.ofSeconds(2)) },
        )) {
            try {
                make()
                fail("timeout and readTimeout both accepted")
            } catch (e: IllegalArgumentException) {
                assertTrue(e.message, e.message!!.contains("readTimeout") && e.message!!.contains("timeout"))
            }
        }
    }

    @Test
    fun theConnectTimeoutReachesEachHttpLibrary() {
        val connect = Duration.ofMillis(1500)
        val read = Duration.ofMillis(2500)
        // java.net.http: the transport's own HttpClient is built with the client's connect timeout
        val transport = JavaHttpTransport()
        val own = reports(transport, connect = connect, read = read)
        assertEquals(connect, (own.sender as JavaHttpTransport).httpClient.connectTimeout().get())
        // one HttpClient per connect timeout, shared by the copies
        assertSame(own.sender, own.withOptions(maxAttempts = 2).sender)
        assertSame(own.sender, reports(transport, connect = connect).sender)
        // the default one has the core's default
        assertEquals(clientTimeouts().connectSeconds, seconds((JavaHttpTransport().httpClient.connectTimeout().get())), 0.0)
        // yours keeps its own (documented)
        val mine = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(7)).build()
        val yours = JavaHttpTransport(mine)
        assertSame(yours, reports(yours, connect = connect).sender)
        // OkHttp: one copy per client with both timeouts
        val ok = reports(OkHttpTransport(), connect = connect, read = read).sender as OkHttpTransport
        assertEquals(1500, ok.okHttpClient.connectTimeoutMillis)
        assertEquals(2500, ok.okHttpClient.readTimeoutMillis)
        // a copy with other timeouts gets them; one without keeps the client's
        val copy = reports(OkHttpTransport(), connect = connect, read = read).withOptions(readTimeout = Duration.ofSeconds(4))
        assertEquals(connect, copy.connectTimeout)
        assertEquals(Duration.ofSeconds(4), copy.readTimeout)
        assertEquals(4000, (copy.sender as OkHttpTransport).okHttpClient.readTimeoutMillis)
        assertEquals(read, reports(JavaHttpTransport(), read = read).withOptions(maxAttempts = 2).readTimeout)
    }

    /**
     * A loopback server: the token exchange is answered; every other request gets nothing
     * ([headers] false) or headers announcing 100 bytes, then 10 of them and nothing more.
     */
    private fun silentServer(headers: Boolean): ServerSocket {
        val server = ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())
        Thread {
            while (!server.isClosed) {
                val s: Socket = try { server.accept() } catch (_: Exception) { break }
                Thread {
                    try {
                        val input = s.getInputStream().bufferedReader(Charsets.ISO_8859_1)
                        while (true) {
                            val line = input.readLine() ?: break
                            if (line.startsWith("POST") && line.contains("/oauth/token")) {
                                var length = 0
                                while (true) {
                                    val h = input.readLine() ?: break
                                    if (h.isEmpty()) break
                                    if (h.lowercase().startsWith("content-length:")) length = h.substringAfter(':').trim().toInt()
                                }
                                repeat(length) { input.read() }
                                val body = """{"access_token":"rt_00","token_type":"Bearer","expires_in":3600,"scope":"exports:read"}"""
                                s.getOutputStream().write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n$body".toByteArray())
                                s.getOutputStream().flush()
                            } else if (line.startsWith("GET")) {
                                while ((input.readLine() ?: "").isNotEmpty()) Unit
                                if (headers) {
                                    s.getOutputStream().write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"data\":[ ".toByteArray())
                                    s.getOutputStream().flush()
                                }
                                Thread.sleep(30_000)
                            }
                        }
                    } catch (_: Exception) {
                    } finally {
                        s.close()
                    }
                }.apply { isDaemon = true }.start()
            }
        }.apply { isDaemon = true }.start()
        return server
    }

    @Test
    fun aReadThatGetsNoHeadersOrStallsInTheBodyTimesOut() {
        for (headers in listOf(false, true)) {
            silentServer(headers).use { server ->
                for ((name, t) in listOf<Pair<String, HttpTransport>>("java.net.http" to JavaHttpTransport(), "OkHttp" to OkHttpTransport())) {
                    val what = "$name, ${if (headers) "body stalls" else "no headers"}"
                    val c = reports(t, "http://127.0.0.1:${server.localPort}", read = Duration.ofMillis(300))
                    try {
                        c.request("listPlatformExports")
                        fail("$what: no timeout")
                    } catch (e: RoyaltyKitException.CallFailed) {
                        assertEquals(what, TransportFailure.TIMEOUT, e.transport)
                        assertEquals(what, 1L, e.attempts)
                    }
                }
            }
        }
    }

    @Test
    fun pollWaitsAreClampedIntoTheClientsBoundsAndARunExportsOwn() {
        FakeReports().use { fake ->
            fake.states = listOf("queued", "queued", "running", "running", "ready")
            val time = VirtualTime()
            val waits = time.waits
            val c = ReportsClient(JavaHttpTransport(), fake.url, "cid", "csecret", fake.tenant, clock = time.clock, sleep = time.sleep, onEvent = {},
                minPollIntervalSeconds = 3.0, maxPollIntervalSeconds = 4.0)
            c.runExport(InterruptChild.BODY)
            assertTrue("${waits.take(20)}", waits.size in 4..20 && waits.all { it in 3.0..4.0 })
            waits.clear()
            c.runExport(InterruptChild.BODY, minPollIntervalSeconds = 0.5, maxPollIntervalSeconds = 0.5)
            assertTrue("${waits.take(20)}", waits.size in 4..20 && waits.all { it == 0.5 })
            waits.clear()
            c.withOptions(minPollIntervalSeconds = 1.0, maxPollIntervalSeconds = 1.0).runExport(InterruptChild.BODY)
            assertTrue("${waits.take(20)}", waits.size in 4..20 && waits.all { it == 1.0 })
            try {
                c.runExport(InterruptChild.BODY, minPollIntervalSeconds = 5.0, maxPollIntervalSeconds = 1.0)
                fail("min > max accepted")
            } catch (e: RoyaltyKitException.InvalidArgument) {
                assertEquals("min_poll_interval_seconds", e.argument)
            }
        }
    }
}
