package dev.royaltykit

import com.google.gson.JsonObject
import com.google.gson.JsonParser
import dev.royaltykit.client.CallFailedException
import dev.royaltykit.client.EnterpriseClient
import dev.royaltykit.client.HttpTransport
import dev.royaltykit.client.JavaHttpTransport
import dev.royaltykit.client.ReconcileRequiredException
import dev.royaltykit.client.ReportsClient
import dev.royaltykit.coroutines.requestAsync
import dev.royaltykit.coroutines.runExportAsync
import kotlinx.coroutines.launch
import dev.royaltykit.okhttp.OkHttpTransport
import dev.royaltykit.types.Reconcile
import dev.royaltykit.types.RoyaltyKitException
import dev.royaltykit.types.TransportFailure
import org.junit.AfterClass
import org.junit.Assert.assertEquals
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
            assertEquals(name, listOf("out.csv"), dir.toFile().list()!!.toList())
        }
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
            } catch (e: ReconcileRequiredException) {
                assertEquals(name, Reconcile.LOOKUP_BY_SENT_DATA, e.reconcile)
                assertEquals(name, "reconcile_required", e.code)
                assertEquals(name, "createPlatformExport", e.operationId)
            }
            assertEquals(name, 1, stats()["requests"].asJsonObject["createPlatformExport"].asInt)
        }
    }

    @Test
    fun aResetCreateIsLookedUpThenCreatedOnce() {
        for ((name, t) in transports) {
            reset("""{"faults":[{"op":"createPlatformExport","nth":1,"do":"reset"}],"states":["ready"]}""")
            reports(t).runExport(BODY)
            val s = stats()
            assertEquals(name, 1, s["exports_created"].asInt)
            assertEquals(name, 2, s["requests"].asJsonObject["createPlatformExport"].asInt)
            assertEquals(name, 2, s["requests"].asJsonObject["listPlatformExports"].asInt)
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
            assertEquals(name, """{"data": []}""", String(page))
        }
    }

    @Test
    fun aRefusedConnectionIsConnectFailedThenCallFailed() {
        val port = ServerSocket(0).use { it.localPort }
        for ((name, t) in transports) {
            try {
                reports(t, "http://127.0.0.1:$port").request("listPlatformExports")
                fail(name)
            } catch (e: CallFailedException) {
                assertEquals(name, TransportFailure.CONNECT_FAILED, e.transport)
                assertEquals(name, "attempts_exhausted", e.rule)
                assertEquals(name, "token exchange", e.operationId)
            }
        }
    }

    @Test
    fun aReadThatTimesOutIsSentAgain() {
        for ((name, t) in transports) {
            reset("""{"faults":[{"op":"listPlatformExports","nth":1,"do":"stall","seconds":2.5}]}""")
            assertEquals(name, """{"data": []}""", String(reports(t).request("listPlatformExports")))
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
    fun credentialsAreNotPrinted() {
        val c = ReportsClient(JavaHttpTransport(), url, "cid", "csecret", TENANT)
        assertTrue(!c.toString().contains("csecret"))
    }
}

private const val TENANT = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"
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
