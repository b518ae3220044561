package dev.royaltykit

import com.google.gson.JsonObject
import com.google.gson.JsonParser
import dev.royaltykit.client.EnterpriseClient
import dev.royaltykit.client.HttpTransport
import dev.royaltykit.client.JavaHttpTransport
import dev.royaltykit.client.ReportsClient
import dev.royaltykit.coroutines.requestAsync
import dev.royaltykit.coroutines.runExportAsync
import kotlinx.coroutines.launch
import dev.royaltykit.okhttp.OkHttpTransport
import dev.royaltykit.types.EventLevel
import dev.royaltykit.types.Reconcile
import dev.royaltykit.types.RoyaltyKitException
import dev.royaltykit.types.TransportFailure
import org.junit.AfterClass
import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertNotEquals
import org.junit.Assert.assertNotNull
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.BeforeClass
import org.junit.Test
import java.io.File
import java.net.ServerSocket
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.nio.file.Files
import java.time.Duration
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit

/**
 * The clients against the shared fake API (tests/fakeapi/server.py) over real loopback HTTP, with
 * each shipped transport: java.net.http and OkHttp. The fake server's clock can be moved forward;
 * the clients get a clock and a sleep that move it, so minutes of backoff and pacing pass in no
 * time while the server checks every wait.
 */
class ClientTest {
    companion object {
        private lateinit var server: Process
        private lateinit var url: String
        private var offset = 0.0
        private val http = HttpClient.newHttpClient()
        private val root = System.getenv("ROYALTYKIT_ROOT") ?: ".."

        @BeforeClass @JvmStatic
        fun start() {
            server = ProcessBuilder("python3", File(root, "tests/fakeapi/server.py").path).redirectError(ProcessBuilder.Redirect.INHERIT).start()
            val line = server.inputStream.bufferedReader().readLine()
            assertTrue(line, line.startsWith("listening "))
            url = "http://127.0.0.1:${line.removePrefix("listening ").trim()}"
        }

        @AfterClass @JvmStatic
        fun stop() {
            server.outputStream.close()
            server.waitFor()
        }
    }

    private fun control(what: String, payload: String? = null): JsonObject {
        val b = HttpRequest.newBuilder(URI.create("$url/_fake/$what"))
        if (payload != null) b.POST(HttpRequest.BodyPublishers.ofString(payload))
        return JsonParser.parseString(http.send(b.build(), HttpResponse.BodyHandlers.ofString()).body()).asJsonObject
    }

    private fun reset(script: String = "{}") = control("reset", script)
    private fun stats() = control("stats")
    private fun artifact(): ByteArray = http.send(HttpRequest.newBuilder(URI.create("$url/_fake/artifact")).build(), HttpResponse.BodyHandlers.ofByteArray()).body()
    private val clock = { System.currentTimeMillis() / 1000.0 + offset }
    private val sleep = { s: Double -> offset += s; control("advance", """{"seconds":$s}"""); Unit }

    private val transports: List<Pair<String, HttpTransport>> = listOf("java.net.http" to JavaHttpTransport(), "OkHttp" to OkHttpTransport())

    private fun reports(t: HttpTransport, base: String = url) =
        ReportsClient(t, base, "cid", "csecret", TENANT, timeout = Duration.ofSeconds(1), clock = clock, sleep = sleep)

    /**
     * A transport's body read whole by `readResponse`: exactly its announced length, and a body
     * shorter or longer than announced refused (the transport reports `CONNECTION_LOST`), with
     * or without a length, small or past the size read into one array.
     */
    @Test
    fun readResponseTakesExactlyTheAnnouncedBody() {
        val whole = dev.royaltykit.client.BodyTarget { _, _ -> null }
        for (size in listOf(0, 1, 4096, 70_000, (1 shl 20) + 3)) {
            val body = ByteArray(size) { (it * 31 + 7).toByte() }
            for (total in listOf(size.toLong(), null)) {
                val r = dev.royaltykit.client.readResponse(200, listOf("a" to "b"), body.inputStream(), total, whole)
                assertTrue("size $size, total $total", r.body.contentEquals(body) && r.status == 200 && r.streamedLength == null)
            }
            for (wrong in listOf(size + 1L, size - 1L).filter { it >= 0 }) {
                try {
                    dev.royaltykit.client.readResponse(200, emptyList(), body.inputStream(), wrong, whole)
                    fail("size $size announced as $wrong was accepted")
                } catch (e: java.io.IOException) {
                    assertEquals("body ended at $size of $wrong bytes", e.message)
                }
            }
        }
    }

    @Test
    fun theEtlJobSurvivesEveryFaultAndCreatesOneExport() {
        for ((name, t) in transports) {
            reset("""{"scenario":"etl"}""")
            val expected = artifact()
            val dir = Files.createTempDirectory("rk-client")
            val seen = ArrayList<Pair<Long, Long?>>()
            val result = reports(t).runExport(BODY, to = dir.resolve("out.csv"), onProgress = { got, total -> seen.add(got to total) })
            val s = stats()
            assertEquals(name, 1, s["exports_created"].asInt) // the dropped create was looked up, not sent again
            assertTrue(name, expected.contentEquals(Files.readAllBytes(dir.resolve("out.csv"))))
            assertEquals(name, s["exports"].asJsonArray[0].asJsonObject["id"].asString, result.exportId)
            assertEquals(name, 0, s["retry_after_violations"].asInt)
            assertEquals(name, 2, s["tokens_issued"].asInt)
            assertEquals(name, 3, s["requests"].asJsonObject["exchangePlatformClientCredential"].asInt)
            assertEquals(name, 1, s["downloads"].asInt)
            assertEquals(name, 3, s["requests"].asJsonObject["downloadPlatformExport"].asInt)
            assertEquals(name, expected.size.toLong() to expected.size.toLong(), seen.last())
            // the scripted 206 (half the artifact) never shows as a complete download
            assertTrue("$name $seen", seen.all { (got, total) -> got != total || got == expected.size.toLong() })
            assertEquals(name, listOf("out.csv"), dir.toFile().list()!!.toList())
            // the artifact's mode is 0644 less the umask, as in every language
            val umask = ProcessBuilder("sh", "-c", "umask").start().inputStream.bufferedReader().readText().trim().toInt(8)
            val mode = Files.getPosixFilePermissions(dir.resolve("out.csv")).sumOf { 1 shl (8 - it.ordinal) }
            assertEquals(name, "%o".format(0b110_100_100 and umask.inv()), "%o".format(mode))
        }
    }

    @Test
    fun theEventsOfAFaultyEtlRunSayWhatHappenedAndNeverASecret() {
        for ((name, t) in transports) {
            reset("""{"scenario":"etl"}""")
            val events = mutableListOf<dev.royaltykit.types.MachineEvent>()
            ReportsClient(t, url, "cid", "csecret", TENANT, timeout = Duration.ofSeconds(1), clock = clock, sleep = sleep,
                onEvent = { events.add(it) }).runExport(BODY)
            val kinds = events.map { it.kind }
            val s = stats()
            assertEquals(name, s["requests"].asJsonObject.entrySet().sumOf { it.value.asInt }, kinds.count { it == "send" })
            val last = events.filter { it.kind == "retry" }.associateBy { it.operation }
            assertEquals(name, 503, last.getValue("exchangePlatformClientCredential").status?.toInt())
            assertTrue(name, last.getValue("exchangePlatformClientCredential").waitSeconds!! > 0)
            assertEquals(name, 429, last.getValue("listPlatformExports").status?.toInt())
            assertTrue(name, last.getValue("listPlatformExports").waitSeconds!! >= 30)
            assertTrue(name, events.filter { it.kind == "retry" }.all { it.rule != null && it.reason != null })
            assertTrue("$name $kinds", "refresh_token" in kinds && "transport_failure" in kinds && kinds.last() == "done")
            assertEquals(name, "ready", events.last { it.kind == "poll" }.state)
            val everything = events.joinToString("\n")
            assertFalse(everything, everything.contains("csecret") || Regex("rt_[0-9a-f]{8}").containsMatchIn(everything) || everything.contains("Bearer"))
        }
    }

    @Test
    fun aPathInAFolderThatDoesNotExistFailsBeforeAnyExportNamingIt() {
        reset("""{"states":["ready"]}""")
        val target = Files.createTempDirectory("rk-client").resolve("no-such-dir").resolve("out.csv")
        try {
            reports(JavaHttpTransport()).runExport(BODY, to = target)
            fail("accepted")
        } catch (e: java.nio.file.NoSuchFileException) {
            assertEquals(target.toString(), e.file)
            assertFalse(e.message, e.message!!.contains(".royaltykit-"))
        }
        assertEquals(0, stats()["exports_created"].asInt)
    }

    @Test
    fun aLargeArtifactIsStreamedToDiskAsItArrives() {
        // 4 MiB (more as UTF-8), the first attempt cut short: the temporary file grows while the body
        // arrives, the cut attempt starts it afresh, and only the whole artifact is moved into place.
        val big = String(CharArray(4 * 1024 * 1024) { (it % 256).toChar() })
        val script = JsonObject().apply {
            add("states", JsonParser.parseString("""["ready"]"""))
            addProperty("artifact", big)
            add("faults", JsonParser.parseString("""[{"op":"downloadPlatformExport","nth":1,"do":"truncate"}]"""))
        }
        for ((name, t) in transports) {
            reset(script.toString())
            val expected = artifact()
            val dir = Files.createTempDirectory("rk-client")
            val target = dir.resolve("big.bin")
            val onDisk = ArrayList<Pair<Long, Long>>()
            val result = reports(t).runExport(BODY, to = target, onProgress = { got, _ ->
                val temp = dir.toFile().listFiles()!!.filter { it.name.startsWith(".royaltykit-") }
                assertEquals(name, 1, temp.size)
                assertTrue(name, !Files.exists(target))
                onDisk.add(got to temp[0].length())
            })
            assertTrue(name, expected.contentEquals(Files.readAllBytes(target)))
            assertEquals(name, expected.size.toLong(), result.size)
            assertEquals(name, 2, stats()["requests"].asJsonObject["downloadPlatformExport"].asInt)
            assertTrue("$name: ${onDisk.takeLast(3)}", onDisk.any { (got, size) -> got < expected.size && size == got && size > 1 shl 20 })
            assertEquals(name, listOf("big.bin"), dir.toFile().list()!!.toList())
        }
    }

    @Test
    fun aDownloadSlowerThanTheTimeoutInAllIsNotCutOff() {
        // 2.5 s for the body in 10 pieces against a 1 s timeout: the timeout bounds each wait.
        for ((name, t) in transports) {
            reset("""{"states":["ready"],"faults":[{"op":"downloadPlatformExport","nth":1,"do":"trickle","seconds":2.5}]}""")
            val expected = artifact()
            val dir = Files.createTempDirectory("rk-client")
            reports(t).runExport(BODY, to = dir.resolve("slow.csv"))
            assertTrue(name, expected.contentEquals(Files.readAllBytes(dir.resolve("slow.csv"))))
            assertEquals(name, 1, stats()["requests"].asJsonObject["downloadPlatformExport"].asInt)
        }
    }

    @Test
    fun aDroppedCreateWithoutAKeyIsNotSentAgain() {
        for ((name, t) in transports) {
            reset("""{"faults":[{"op":"createPlatformExport","nth":1,"do":"drop_after_apply"}]}""")
            try {
                reports(t).request("createPlatformExport", RequestParams(body = BODY.toByteArray()))
                fail("$name: a create that may have been applied was not reported")
            } catch (e: RoyaltyKitException.ReconcileRequired) {
                assertEquals(name, Reconcile.LOOKUP_BY_SENT_DATA, e.reconcile)
                assertEquals(name, "reconcile_required", e.code)
                assertEquals(name, "createPlatformExport", e.operationId)
                assertNotNull("$name: the dropped connection is the cause, as in Python and Node", e.cause)
            }
            assertEquals(name, 1, stats()["requests"].asJsonObject["createPlatformExport"].asInt)
        }
    }

    @Test
    fun aWrongBaseUrlFailsWhenTheClientIsBuiltBeforeAnyRequest() {
        reset()
        val cases = mapOf(
            "htp://api.example.com" to "has the scheme `htp`",
            "api.example.com" to "has no scheme",
            "http://api.example.com" to "plain `http` to `api.example.com`",
            "https://api.example.com/api/platform/v1" to "API prefix",
            "https://key:secret@api.example.com" to "user-info",
        )
        val t = JavaHttpTransport()
        val makers = listOf<(String, Boolean) -> Any>(
            { b, insecure -> ReportsClient(t, b, "cid", "csecret", TENANT, allowInsecureHttp = insecure) },
            { b, insecure -> EnterpriseClient(t, b, "key-1", "secret-1", allowInsecureHttp = insecure) },
        )
        for (make in makers) {
            for ((base, says) in cases) {
                try {
                    make(base, false)
                    fail("$base was accepted")
                } catch (e: RoyaltyKitException.InvalidArgument) {
                    assertEquals(base, "invalid_argument", e.code)
                    assertEquals(base, "base_url", e.argument)
                    assertTrue(e.message, e.message!!.contains(says))
                    assertFalse(e.message, e.message!!.contains("secret"))
                }
            }
            // loopback over plain http is accepted (the fake API here), and any host with the opt-in
            make("$url/", false)
            make("http://api.example.com", true)
        }
        val s = stats()
        assertEquals(0, s["requests"].asJsonObject.entrySet().sumOf { it.value.asInt })
        assertEquals(0, s["tokens_issued"].asInt)
    }

    @Test
    fun aResetCreateIsLookedUpThenCreatedOnce() {
        for ((name, t) in transports) {
            reset("""{"faults":[{"op":"createPlatformExport","nth":1,"do":"reset"}],"states":["ready"]}""")
            reports(t).runExport(BODY)
            val s = stats()
            assertEquals(name, 1, s["exports_created"].asInt)
            assertEquals(name, 2, s["requests"].asJsonObject["createPlatformExport"].asInt)
            // the list before the create, then the lookup and its two looks after a grace (2 s, 5 s)
            assertEquals(name, 4, s["requests"].asJsonObject["listPlatformExports"].asInt)
        }
    }

    @Test
    fun errorsThatMustStopAreApiErrorsAndReadsReturnTheirBody() {
        for ((name, t) in transports) {
            reset()
            try {
                reports(t).request("getPlatformExport", path = mapOf("export" to "exp_missing"))
                fail(name)
            } catch (e: RoyaltyKitException.Api) {
                assertEquals(name, 404.toUShort(), e.error.status)
            }
            val page = reports(t).request("listPlatformExports", query = mapOf("limit" to 10, "cursor" to null), requestId = "ignored")
            assertEquals(name, page.size, reports(t).request("listPlatformExports", RequestParams(query = listOf(Param("limit", "10")))).size)
            assertEquals(name, EMPTY_PAGE, pageOf(page))
            // the whole response when asked: status, headers as received, body
            val raw = reports(t).requestRaw("listPlatformExports", RequestParams(query = listOf(Param("limit", "10"))))
            assertEquals(name, 200, raw.status)
            assertEquals(name, "application/json", raw.header("Content-Type"))
            assertEquals(name, EMPTY_PAGE, pageOf(raw.body))
            // and the ApiError's message in Kotlin is the core's sentence, as in Python and Node
            try {
                reports(t).request("getPlatformExport", path = mapOf("export" to "exp_missing"))
            } catch (e: RoyaltyKitException.Api) {
                assertTrue(e.detail, e.detail.startsWith("404 ") && e.detail.endsWith("(not_found)"))
            }
        }
    }

    @Test
    fun aRefusedConnectionIsConnectFailedThenCallFailed() {
        val port = ServerSocket(0).use { it.localPort }
        for ((name, t) in transports) {
            try {
                reports(t, "http://127.0.0.1:$port").request("listPlatformExports")
                fail(name)
            } catch (e: RoyaltyKitException.CallFailed) {
                assertEquals(name, TransportFailure.CONNECT_FAILED, e.transport)
                assertEquals(name, "attempts_exhausted", e.rule)
                assertEquals(name, "token exchange", e.operationId)
                // The message names the operation, the host, the attempts and what the transport
                // saw; the transport's own exception is chained.
                val text = e.detail
                assertTrue(text, text.startsWith("token exchange to 127.0.0.1:$port: "))
                assertEquals(name, 5L, e.attempts)
                assertTrue(text, text.contains("(5 attempts made)"))
                assertTrue(text, text.lowercase().contains("connection refused"))
                assertTrue(name, e.cause is java.io.IOException)
                assertFalse(text, text.contains("csecret"))
            }
        }
    }

    @Test
    fun maxAttemptsPerClientAndPerCallBoundTheRequestsAndTheCopySharesTheSession() {
        // A refused port: java.net.http sends a GET again by itself after a reset, so the server
        // could not count the machine's attempts; the attempts of a refused one are the machine's.
        val port = ServerSocket(0).use { it.localPort }
        for ((name, t) in transports) {
            val c = ReportsClient(t, "http://127.0.0.1:$port", "cid", "csecret", TENANT, timeout = Duration.ofSeconds(1),
                clock = clock, sleep = sleep, maxAttempts = 3)
            val copy = c.withOptions(maxAttempts = 2)
            assertTrue(name, copy.session === c.session)
            assertEquals(name, Duration.ofSeconds(1), copy.timeout)
            assertEquals(name, 3L to 2L, c.maxAttempts to copy.maxAttempts)
            val failed = { client: ReportsClient ->
                try {
                    client.request("listPlatformExports"); fail(name); throw AssertionError()
                } catch (e: RoyaltyKitException.CallFailed) {
                    e
                }
            }
            val three = failed(c)
            val two = failed(copy)
            assertEquals(name, 3L to 2L, three.attempts to two.attempts)
            assertTrue(two.message, two.message!!.contains("(2 attempts made)"))
            assertEquals(name, TransportFailure.CONNECT_FAILED, three.transport)
        }
    }

    @Test
    fun aReadThatTimesOutIsSentAgain() {
        for ((name, t) in transports) {
            reset("""{"faults":[{"op":"listPlatformExports","nth":1,"do":"stall","seconds":2.5}]}""")
            assertEquals(name, EMPTY_PAGE, pageOf(reports(t).request("listPlatformExports")))
            assertEquals(name, 2, stats()["requests"].asJsonObject["listPlatformExports"].asInt)
        }
    }

    @Test
    fun aBurstOfEnterpriseRequestsStaysInsideTheSpecMinute() {
        for ((name, t) in transports) {
            reset()
            val start = clock()
            val client = EnterpriseClient(t, url, "key-1", "secret-1", clock = clock, sleep = sleep)
            repeat(200) { assertTrue(String(client.request("listEnterpriseReleases")).contains("First")) }
            val s = stats()
            assertEquals(name, 200, s["requests"].asJsonObject["listEnterpriseReleases"].asInt)
            assertEquals(name, 1, s["tokens_issued"].asInt)
            assertTrue("$name: $s", s["max_per_minute"].asInt in 170..180) // 180 per source address
            assertTrue(name, clock() - start >= 60)
        }
    }

    @Test
    fun theReadmeExportJobRunsAsWritten() {
        reset("""{"scenario":"readme"}""")
        val expected = artifact()
        val main = Class.forName("readme.kotlin_client.ExampleKt").getMethod("main")
        val out = java.io.ByteArrayOutputStream()
        val saved = System.out
        System.setProperty("reports.url", url)
        System.setOut(java.io.PrintStream(out, true))
        try { main.invoke(null) } finally { System.setOut(saved); System.clearProperty("reports.url") }
        val s = stats()
        assertEquals("export ${s["exports"].asJsonArray[0].asJsonObject["id"].asString}: ${expected.size} bytes in statements.csv\n", out.toString())
        assertTrue(expected.contentEquals(File("statements.csv").readBytes()))
        assertEquals(1, s["exports_created"].asInt)
        assertEquals(0, s["retry_after_violations"].asInt)
    }

    @Test
    fun theReadmeConsumerWorkflowRunsAsWritten() {
        reset("""{"subscriptions":23,"faults":[{"op":"createEnterpriseWebhook","nth":1,"do":"drop_after_apply"}]}""")
        val main = Class.forName("readme.kotlin_consumer.ExampleKt").getMethod("main")
        val out = java.io.ByteArrayOutputStream()
        val saved = System.out
        System.setProperty("enterprise.url", url)
        System.setOut(java.io.PrintStream(out, true))
        try { main.invoke(null) } finally { System.setOut(saved); System.clearProperty("enterprise.url") }
        val lines = out.toString().lines()
        assertEquals("subscription wh_001: store its secret now, it is shown once", lines[0])
        assertEquals("23 subscriptions", lines[1])
        assertTrue(lines[2], lines[2].contains("\"status\": \"live\""))
        val s = stats()
        assertEquals(1, s["webhooks_created"].asInt) // the lost answer: sent again with its key, created once
        assertEquals(1, s["idempotent_replays"].asInt)
        assertEquals(3, s["requests"].asJsonObject["listEnterpriseSubscriptions"].asInt)
        assertFalse(out.toString().contains(s["webhooks"].asJsonObject["wh_001"].asJsonObject["secret"].asString))
    }

    @Test
    fun theReadmeInboxWorkflowRunsAsWritten() {
        reset("""{"replays":"hold"}""")
        // the subscription the example creates again under its requestId, with two deliveries its receiver never got
        val org = EnterpriseClient(JavaHttpTransport(), url, "key-1", "secret-1", clock = clock, sleep = sleep, onEvent = {})
        val hook = org.createSubscription("ops", "https://hooks.example.com/royaltykit", listOf("ddex.delivery.failed"), requestId = "ops-hook-1")
        repeat(2) { assertEquals("failed", control("deliver", """{"reference":"${hook.reference}","event":"ddex.delivery.failed","lose":true}""")["status"].asString) }
        val db = File("inbox.db").also { it.delete() }
        val main = Class.forName("readme.kotlin_inbox.ExampleKt").getMethod("main")
        val out = java.io.ByteArrayOutputStream()
        val saved = System.out
        System.setProperty("enterprise.url", url)
        System.setOut(java.io.PrintStream(out, true))
        try { main.invoke(null) } finally { System.setOut(saved); System.clearProperty("enterprise.url"); db.delete() }
        assertEquals(
            "{\"result\":\"queued\"}\nreplayed 2 of 2 deliveries\n" +
                "r-1: {\"data\": {\"uuid\": \"r-1\", \"title\": \"Current title\", \"status\": \"live\", \"acting_for\": null}}\n" +
                "InboxReport(processed=1, retried=0, poisoned=0)\n",
            out.toString(),
        )
        val s = stats()
        assertEquals(1, s["webhooks_created"].asInt)
        assertEquals(1, s["idempotent_replays"].asInt) // the example got the same subscription and secret
        assertEquals(2, s["replays"].asInt)
        assertEquals(1, s["requests"].asJsonObject["fetchEnterpriseResource"].asInt)
        assertFalse(out.toString().contains(hook.secret.secret))
    }

    /** The job over each transport with [script]: one export, the artifact whole, the job done. */
    private fun oneExportUnder(script: String) {
        for ((name, t) in transports) {
            reset(script)
            val expected = artifact()
            val result = reports(t).runExport(BODY)
            val s = stats()
            assertEquals("$name: $s", 1, s["exports_created"].asInt)
            assertTrue(name, s["exports"].asJsonArray.any { it.asJsonObject["id"].asString == result.exportId })
            assertTrue(name, expected.contentEquals(result.data!!))
        }
    }

    private val droppedCreate = """{"op":"createPlatformExport","nth":1,"do":"drop_after_apply"}"""

    @Test
    fun aDroppedCreateIsAdoptedWhenTheListDoesNotEchoTheBody() =
        oneExportUnder("""{"list":{"echo":false},"faults":[$droppedCreate],"states":["ready"]}""")

    @Test
    fun aDroppedCreateIsFoundOnALaterPageAmong150Exports() =
        oneExportUnder("""{"existing":{"count":150,"body":$BODY},"list":{"page_size":40},"faults":[$droppedCreate],"states":["ready"]}""")

    @Test
    fun aDroppedCreateIsFoundWhenTheListShowsItOneReadLate() =
        oneExportUnder("""{"list":{"lag_reads":1},"faults":[$droppedCreate],"states":["ready"]}""")

    /** [n] calls of [call] started at once from as many threads: their results. */
    private fun <T> atOnce(n: Int, call: () -> T): List<T> {
        val pool = Executors.newFixedThreadPool(n)
        try {
            val start = CountDownLatch(1)
            val futures = List(n) { pool.submit<T> { start.await(); call() } }
            start.countDown()
            return futures.map { it.get(60, TimeUnit.SECONDS) }
        } finally {
            pool.shutdownNow()
        }
    }

    @Test
    fun twentyConcurrentFirstCallsMakeOneTokenExchange() {
        for ((name, t) in transports) {
            reset("""{"token_delay":0.3}""")
            val client = reports(t)
            assertTrue(name, atOnce(20) { String(client.request("listPlatformExports")) }.all { it.contains("data") })
            val s = stats()
            assertEquals("$name: $s", 1, s["tokens_issued"].asInt)
            assertEquals("$name: $s", 1, s["max_concurrent_exchanges"].asInt)
            assertEquals(name, 1L, client.session.exchanges())
        }
        // two enterprise clients of one API key on one session: one exchange between them
        reset("""{"token_delay":0.3}""")
        val a = EnterpriseClient(JavaHttpTransport(), url, "key-1", "secret-1", clock = clock, sleep = sleep)
        val b = EnterpriseClient(OkHttpTransport(), url, "key-1", "secret-1", clock = clock, sleep = sleep, session = a.session)
        val clients = listOf(a, b)
        val n = java.util.concurrent.atomic.AtomicInteger()
        assertTrue(atOnce(20) { String(clients[n.getAndIncrement() % 2].request("listEnterpriseReleases")) }.all { it.contains("First") })
        val s = stats()
        assertEquals("$s", 1, s["tokens_issued"].asInt)
        assertEquals("$s", 1, s["max_concurrent_exchanges"].asInt)
        assertEquals("$s", 20, s["requests"].asJsonObject["listEnterpriseReleases"].asInt)
    }

    @Test
    fun aTokenThatIsDueAtOnceIsUsedOnceAndTheCallReturns() {
        for ((name, t) in transports) {
            reset("""{"token_expires_in":1}""")
            val client = reports(t)
            val page = atOnce(1) { String(client.request("listPlatformExports")) }.single()
            assertEquals(name, EMPTY_PAGE, pageOf(page))
            val s = stats()
            assertEquals("$name: $s", 1, s["tokens_issued"].asInt)
            assertEquals("$name: $s", 1, s["requests"].asJsonObject["listPlatformExports"].asInt)
        }
    }

    @Test
    fun enterpriseExpiresAtInEveryFormTheServiceMaySend() {
        for (form in listOf("past", "offset", "basic")) {
            for ((name, t) in transports) {
                reset("""{"enterprise_expires_at":"$form"}""")
                val client = EnterpriseClient(t, url, "key-1", "secret-1", clock = clock, sleep = sleep)
                repeat(2) { assertTrue("$form $name", atOnce(1) { String(client.request("listEnterpriseReleases")) }.single().contains("First")) }
                val s = stats()
                assertEquals("$form $name: $s", 0, s["unauthorized"].asInt)
                assertEquals("$form $name: $s", 2, s["requests"].asJsonObject["listEnterpriseReleases"].asInt)
            }
        }
    }

    @Test
    fun aRedirectIsNeverFollowedWhateverTheClientIsConfiguredToDo() {
        val following = okhttp3.OkHttpClient.Builder().followRedirects(true).followSslRedirects(true).build()
        val all = transports + ("OkHttp told to follow redirects" to OkHttpTransport(following))
        for ((name, t) in all) {
            for (op in listOf("exchangePlatformClientCredential", "listPlatformExports", "exchangeEnterpriseToken", "listEnterpriseReleases")) {
                reset("""{"faults":[{"op":"$op","nth":1,"do":"redirect"}]}""")
                try {
                    if (op.contains("Enterprise")) EnterpriseClient(t, url, "key-1", "secret-1", clock = clock, sleep = sleep).request("listEnterpriseReleases")
                    else reports(t).request("listPlatformExports")
                    fail("$name $op: a redirect was followed")
                } catch (e: RoyaltyKitException.CallFailed) {
                    assertEquals("$name $op", "redirect", e.rule)
                    assertEquals("$name $op", 307.toUShort(), e.status)
                    val origin = Regex("Location points at ([^)\\s;]+)").find(e.detail)?.groupValues?.get(1)
                    assertTrue("$name $op: ${e.detail}", origin != null && origin.startsWith("http://127.0.0.1:"))
                    assertNotEquals("$name $op", url, origin)
                }
                val s = stats()
                assertEquals("$name $op: $s", 0, s["evil_requests"].asInt)
                assertEquals("$name $op: $s", 0, s["evil_credentials"].asJsonArray.size())
            }
        }
    }

    @Test
    fun aJavaHttpClientThatFollowsRedirectsIsRefused() {
        for (policy in listOf(HttpClient.Redirect.NORMAL, HttpClient.Redirect.ALWAYS)) {
            try {
                JavaHttpTransport(HttpClient.newBuilder().followRedirects(policy).build())
                fail("$policy was accepted")
            } catch (e: IllegalArgumentException) {
                assertTrue(e.message, e.message!!.contains("HttpClient.Redirect.NEVER"))
            }
        }
        JavaHttpTransport(HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build())
        JavaHttpTransport(HttpClient.newHttpClient())
    }

    @Test
    fun aFailedExchangeFailsItsWaitersAndALaterCallExchangesAnew() {
        // the exchange refused: the leader throws its error, and the calls that waited for it fail
        // with token_exchange_failed instead of each exchanging again; a later call exchanges anew
        for ((name, t) in transports) {
            reset("""{"token_delay":0.3,"faults":[{"op":"exchangePlatformClientCredential","nth":1,"do":"status","status":401}]}""")
            val client = reports(t)
            val outcomes = atOnce(8) {
                try {
                    client.request("listPlatformExports")
                    "ok"
                } catch (e: RoyaltyKitException.Api) {
                    "api ${e.error.status}"
                } catch (e: RoyaltyKitException.CallFailed) {
                    e.rule
                }
            }
            assertEquals("$name: $outcomes", 1, outcomes.count { it == "api 401" })
            assertTrue("$name: $outcomes", outcomes.all { it == "api 401" || it == "token_exchange_failed" || it == "ok" })
            assertEquals(name, EMPTY_PAGE, pageOf(client.request("listPlatformExports")))
        }
    }

    @Test
    fun anInterruptedExchangeIsAbandonedAndTheWaitingCallLeadsTheNext() {
        // the leader's thread is interrupted mid-exchange (a cancelled coroutine): it reports the
        // exchange abandoned and wakes the call waiting for it, which leads a new one at once
        // instead of waiting out the exchange's lease
        reset("""{"token_delay":0.5}""")
        val client = reports(JavaHttpTransport())
        val leaderOutcome = java.util.concurrent.atomic.AtomicReference<Throwable?>()
        val leader = Thread { try { client.request("listPlatformExports") } catch (e: Throwable) { leaderOutcome.set(e) } }
        leader.start()
        while (!client.session.exchanging()) Thread.sleep(10)
        val pool = Executors.newSingleThreadExecutor()
        try {
            val waiter = pool.submit<String> { String(client.request("listPlatformExports")) }
            Thread.sleep(200) // the waiter now waits on the session
            leader.interrupt()
            leader.join(10_000)
            assertTrue("${leaderOutcome.get()}", leaderOutcome.get() is InterruptedException)
            assertEquals(EMPTY_PAGE, pageOf(waiter.get(30, TimeUnit.SECONDS)))
            assertEquals(2L, client.session.exchanges())
        } finally {
            pool.shutdownNow()
        }
    }


    @Test
    fun twoExportsThatMayBeTheJobsOwnAreReconcileRequiredWithBothCandidates() {
        // the job's create is applied and its connection drops; at that moment another process of
        // the tenant creates an export of the same data: the lookup cannot tell which is the job's
        for ((name, t) in transports) {
            reset("""{"list":{"echo":false},"faults":[{"op":"createPlatformExport","nth":1,"do":"drop_after_apply","also_created_by_another":1}]}""")
            val dir = Files.createTempDirectory("rk-client")
            try {
                reports(t).runExport(BODY, to = dir.resolve("x.csv"))
                fail("$name: the job guessed")
            } catch (e: RoyaltyKitException.ReconcileRequired) {
                val s = stats()
                assertEquals(name, "reconcile_required", e.code)
                assertEquals(name, Reconcile.LOOKUP_BY_SENT_DATA, e.reconcile)
                assertEquals(name, "reconcile", e.stage)
                assertEquals(name, "export job", e.operationId)
                assertEquals(name, s["exports"].asJsonArray.map { it.asJsonObject["id"].asString }.sorted(), e.candidates.sorted())
                assertEquals(name, 1, s["requests"].asJsonObject["createPlatformExport"].asInt)
            }
            assertEquals(name, emptyList<String>(), dir.toFile().list()!!.toList())
        }
    }

    @Test
    fun aLargeDownloadGivesAFewProgressEventsAsItArrives() {
        // 2 MB in many pieces: the user's onProgress sees every piece, onEvent the core's progress
        // events (at most one per tenth and the whole), delivered while the body is still arriving.
        val script = JsonObject().apply {
            add("states", JsonParser.parseString("""["ready"]"""))
            addProperty("artifact", "0123456789abcdef".repeat(2_000_000 / 16))
        }
        for ((name, t) in transports) {
            reset(script.toString())
            val expected = artifact().size.toLong()
            assertEquals(name, 2_000_000L, expected)
            val dir = Files.createTempDirectory("rk-client")
            val target = dir.resolve("big.csv")
            val events = ArrayList<dev.royaltykit.types.MachineEvent>()
            // what onProgress had seen when each progress event came
            val seenAtEvent = ArrayList<Long>()
            var seen = 0L
            var pieces = 0
            val client = ReportsClient(t, url, "cid", "csecret", TENANT, timeout = Duration.ofSeconds(5), clock = clock, sleep = sleep,
                onEvent = { e ->
                    events.add(e)
                    if (e.kind == "progress") seenAtEvent.add(seen)
                })
            client.runExport(BODY, to = target, onProgress = { got, _ -> pieces++; seen = got })
            val progress = events.filter { it.kind == "progress" }
            val got = progress.map { it.receivedBytes!!.toLong() }
            assertTrue("$name: $got", progress.size in 2..11)
            assertTrue("$name: $pieces pieces, ${progress.size} events", pieces > progress.size)
            assertEquals("$name: $got", got.sorted(), got)
            assertEquals(name, got.size, got.toSet().size)
            assertEquals(name, expected, got.last())
            assertTrue(name, progress.all { it.totalBytes?.toLong() == expected && it.level == "info" && it.operation == "downloadPlatformExport" })
            assertTrue(name, progress.last().message.contains("$expected of $expected bytes"))
            // each given at once with its piece (before onProgress sees it), not after the body
            assertEquals(name, got.size, seenAtEvent.size)
            assertTrue("$name $got $seenAtEvent", got.zip(seenAtEvent).all { (event, before) -> before < event && before < expected })
            // between the download's send and its response
            val kinds = events.map { it.kind }
            val download = events.indexOfLast { it.kind == "send" && it.operation == "downloadPlatformExport" }
            assertTrue("$name $kinds", events.indexOf(progress.first()) > download && events.indexOf(progress.last()) < kinds.lastIndexOf("response"))
        }
    }

    @Test
    fun aTruncatedBodyReadAgainReportsItsProgressFromZero() {
        val script = JsonObject().apply {
            add("states", JsonParser.parseString("""["ready"]"""))
            addProperty("artifact", "x".repeat(1_000_000))
            add("faults", JsonParser.parseString("""[{"op":"downloadPlatformExport","nth":1,"do":"truncate"}]"""))
        }
        for ((name, t) in transports) {
            reset(script.toString())
            val events = ArrayList<dev.royaltykit.types.MachineEvent>()
            ReportsClient(t, url, "cid", "csecret", TENANT, timeout = Duration.ofSeconds(5), clock = clock, sleep = sleep,
                onEvent = { events.add(it) }).runExport(BODY)
            val sends = events.withIndex().filter { it.value.kind == "send" && it.value.operation == "downloadPlatformExport" }.map { it.index }
            assertEquals(name, 2, sends.size)
            val first = events.subList(sends[0], sends[1]).filter { it.kind == "progress" }.map { it.receivedBytes!!.toLong() }
            val second = events.subList(sends[1], events.size).filter { it.kind == "progress" }.map { it.receivedBytes!!.toLong() }
            // half was sent (pieces of at most 64 KiB): its first tenths, never whole
            assertTrue("$name $first", first.isNotEmpty() && first.all { it <= 500_000 })
            assertTrue("$name $second", second.size in 2..11 && second.last() == 1_000_000L && second == second.sorted())
            // the body read again counts from 0: its first tenth is reported again
            assertTrue("$name $first $second", second.first() < 200_000)
        }
    }

    /**
     * The records the `dev.royaltykit` logger publishes while [block] runs, with the logger at
     * [level] (null: as it is).
     */
    private fun logged(level: java.util.logging.Level? = null, block: (MutableList<java.util.logging.LogRecord>) -> Unit): List<java.util.logging.LogRecord> {
        val logger = java.util.logging.Logger.getLogger("dev.royaltykit")
        val records = java.util.Collections.synchronizedList(ArrayList<java.util.logging.LogRecord>())
        val handler = object : java.util.logging.Handler() {
            override fun publish(r: java.util.logging.LogRecord) { records.add(r) }
            override fun flush() {}
            override fun close() {}
        }.apply { this.level = java.util.logging.Level.ALL }
        val before = logger.level
        logger.addHandler(handler)
        if (level != null) logger.level = level
        try {
            block(records)
        } finally {
            logger.removeHandler(handler)
            logger.level = before
        }
        return records
    }

    /** With the default onEvent, the client takes from the core only the events the log shows now
     * (the others are dropped unbuilt: the level it asks the core for is the log's): at FINE every
     * info line (the retry) and no debug line; at FINER the debug lines too (each send, response
     * and the done); at INFO only warnings are asked for. */
    @Test
    fun theDefaultLogGetsEveryEventAtItsLevelAndNoneBelow() {
        val asked = mapOf(java.util.logging.Level.INFO to EventLevel.WARNING, java.util.logging.Level.FINE to EventLevel.INFO,
            java.util.logging.Level.FINER to null)
        for ((level, expected) in asked) {
            reset("""{"faults":[{"op":"listPlatformExports","nth":1,"do":"status","status":503}]}""")
            val records = logged(level) {
                val client = ReportsClient(JavaHttpTransport(), url, "cid", "csecret", TENANT, timeout = Duration.ofSeconds(1), clock = clock, sleep = sleep)
                // the level of events the client asks the core for at this log level (what its
                // loop passes to each step; the log itself would hide any extra events)
                assertEquals("$level", expected, client.eventLevel(null))
                client.request("listPlatformExports")
            }
            if (level == java.util.logging.Level.INFO) {
                assertEquals("$level $records", emptyList<String>(), records.map { it.message })
                continue
            }
            val shown = "$level ${records.map { "${it.level} ${it.message}" }}"
            assertTrue(shown, records.any { it.level == java.util.logging.Level.FINE && it.message.startsWith("retry listPlatformExports") })
            val debug = records.filter { it.level == java.util.logging.Level.FINER }.map { it.message.substringBefore(' ') }
            if (level == java.util.logging.Level.FINE) assertEquals(shown, emptyList<String>(), debug)
            else assertTrue(shown, debug.count { it == "send" } >= 2 && "response" in debug && "done" in debug)
        }
    }

    @Test
    fun aDeprecatedOperationGivesOneNoticePerSessionAtWarning() {
        reset("""{"deprecated":["listPlatformExports"]}""")
        logged { records ->
            fun client(events: MutableList<dev.royaltykit.types.MachineEvent>) =
                ReportsClient(JavaHttpTransport(), url, "cid", "csecret", TENANT, timeout = Duration.ofSeconds(1), clock = clock,
                    sleep = sleep, onEvent = { e -> events.add(e); dev.royaltykit.client.logEvent(e) })
            val first = ArrayList<dev.royaltykit.types.MachineEvent>()
            val a = client(first)
            repeat(3) { a.request("listPlatformExports") }
            val notices = first.filter { it.kind == "notice" }
            assertEquals("${first.map { it.kind }}", 1, notices.size)
            val n = notices.single()
            assertEquals("listPlatformExports", n.operation)
            assertEquals("warning", n.level)
            assertEquals("deprecation", n.rule)
            assertTrue(n.reason, n.reason!!.contains("sunset") && n.reason!!.contains("01 Sep 2027"))
            val warned = records.filter { it.level == java.util.logging.Level.WARNING && it.message.contains("notice") }
            assertEquals(records.map { "${it.level} ${it.message}" }.toString(), 1, warned.size)
            assertEquals(n.message, warned.single().message)
            assertTrue(warned.single().message, warned.single().message.contains("listPlatformExports") && warned.single().message.contains("01 Sep 2027"))
            // the other operations are not deprecated: no notice for the token exchange
            assertEquals(3, stats()["requests"].asJsonObject["listPlatformExports"].asInt)
            // a second client has its own session: its own one notice
            val second = ArrayList<dev.royaltykit.types.MachineEvent>()
            val b = client(second)
            repeat(3) { b.request("listPlatformExports") }
            assertEquals(1, second.count { it.kind == "notice" })
            assertEquals(2, records.count { it.level == java.util.logging.Level.WARNING && it.message.contains("notice") })
            // a copy shares its client's session: no new notice
            repeat(2) { b.withOptions(maxAttempts = 2).request("listPlatformExports") }
            assertEquals(1, second.count { it.kind == "notice" })
        }
    }

    @Test
    fun credentialsAreNotPrinted() {
        val c = ReportsClient(JavaHttpTransport(), url, "cid", "csecret", TENANT)
        assertTrue(!c.toString().contains("csecret"))
    }
}

private const val TENANT = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"
private val EMPTY_PAGE: JsonObject = JsonParser.parseString("""{"data": []}""").asJsonObject

/** A list page's JSON without its cursor member (an empty page names no next one). */
private fun pageOf(body: Any): JsonObject = JsonParser.parseString(if (body is ByteArray) String(body) else body as String).asJsonObject
    .apply { remove("next_cursor") }
private const val BODY = """{"export_class":"statements","format":"csv","period":"2026-10"}"""

/** royaltykit-coroutines: the same clients as suspend functions, cancellable. */
class ClientCoroutinesTest {
    @Test
    fun suspendFunctionsRunTheJobAndCancellationStopsAWait() = kotlinx.coroutines.runBlocking {
        val server = ProcessBuilder("python3", File(System.getenv("ROYALTYKIT_ROOT") ?: "..", "tests/fakeapi/server.py").path)
            .redirectError(ProcessBuilder.Redirect.INHERIT).start()
        try {
            val url = "http://127.0.0.1:" + server.inputStream.bufferedReader().readLine().removePrefix("listening ").trim()
            val http = HttpClient.newHttpClient()
            fun reset(script: String) = http.send(HttpRequest.newBuilder(URI.create("$url/_fake/reset")).POST(HttpRequest.BodyPublishers.ofString(script)).build(),
                HttpResponse.BodyHandlers.ofString())
            reset("""{"states":["ready"],"artifact":"a,b\n1,2\n"}""")
            val client = ReportsClient(JavaHttpTransport(), url, "cid", "csecret", TENANT)
            val result = client.runExportAsync(BODY)
            assertEquals("a,b\n1,2\n", String(result.data!!))
            assertTrue(String(client.requestAsync("listPlatformExports", query = mapOf("limit" to 5))).contains("data"))
            // a call waiting on a 60 s Retry-After is cancelled at once, and sends nothing more (a new
            // client: the reset forgot the old one's token)
            reset("""{"faults":[{"op":"listPlatformExports","nth":1,"do":"status","status":429,"retry_after":60}]}""")
            val waiting = ReportsClient(JavaHttpTransport(), url, "cid", "csecret", TENANT)
            val job = launch { waiting.requestAsync("listPlatformExports") }
            kotlinx.coroutines.delay(500)
            job.cancel()
            job.join()
            assertTrue("$job", job.isCancelled)
            // an uninterrupted wait would have sent the request again after 60 s: still one
            val stats = JsonParser.parseString(http.send(HttpRequest.newBuilder(URI.create("$url/_fake/stats")).build(), HttpResponse.BodyHandlers.ofString()).body()).asJsonObject
            assertEquals(1, stats["requests"].asJsonObject["listPlatformExports"].asInt)
        } finally {
            server.outputStream.close()
            server.waitFor()
        }
    }
}
