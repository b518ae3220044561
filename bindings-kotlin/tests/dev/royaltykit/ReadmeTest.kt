package dev.royaltykit

import dev.royaltykit.types.*

import com.sun.net.httpserver.HttpExchange
import com.sun.net.httpserver.HttpServer
import org.junit.Assert.assertEquals
import org.junit.Test
import java.io.ByteArrayOutputStream
import java.io.PrintStream
import java.net.InetSocketAddress
import java.util.Base64

/** The documentation's Kotlin examples (README.md and the pages under docs/): test-kotlin.sh extracts each into package readme.<name>. */
class ReadmeTest {
    private fun run(name: String): String {
        val main = Class.forName("readme.$name.ExampleKt").getMethod("main")
        val out = ByteArrayOutputStream()
        val saved = System.out
        System.setOut(PrintStream(out, true))
        try { main.invoke(null) } finally { System.setOut(saved) }
        return out.toString()
    }

    @Test
    fun webhookExampleProcessesTheRedeliveryOnce() = assertEquals("500\n200\n200 1\n", run("kotlin"))

    @Test
    fun receiverExampleOverHttp() = assertEquals(
        "stored ddex.delivery.acknowledged\n{\"result\":\"processed\"}\n{\"result\":\"acknowledge\"}\n",
        run("kotlin_receiver"),
    )

    @Test
    fun androidExampleStoresOnce() = assertEquals("ddex.delivery.acknowledged\n200\n200\n", run("kotlin_android"))

    @Test
    fun retryLoopExample() = assertEquals(
        "503: retry in 2 s (server_error_retry)\n429: retry in 3 s (rate_limited_retry_after)\ndone after 3 attempts\n",
        run("kotlin_retry"),
    )

    /** The reporting API's token and export routes, as far as the examples need them, on 127.0.0.1. */
    private fun fakeReportsApi(): HttpServer {
        val server = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0)
        var reads = 0
        fun HttpExchange.json(status: Int, body: String, vararg headers: Pair<String, String>) {
            responseHeaders.add("Content-Type", "application/json")
            headers.forEach { responseHeaders.add(it.first, it.second) }
            val bytes = body.toByteArray()
            sendResponseHeaders(status, bytes.size.toLong())
            responseBody.use { it.write(bytes) }
        }
        server.createContext("/") { ex ->
            ex.requestBody.readAllBytes()
            val auth = ex.requestHeaders.getFirst("Authorization")
            when {
                ex.requestMethod == "POST" && ex.requestURI.path == "/api/platform/v1/oauth/token" ->
                    if (auth == "Basic " + Base64.getEncoder().encodeToString("cli:secret".toByteArray()) && ex.requestHeaders.getFirst("X-Tenant-ID") != null)
                        ex.json(200, """{"access_token":"tok_local_1","token_type":"Bearer","expires_in":3600,"scope":"exports:read"}""", "Cache-Control" to "no-store")
                    else ex.json(401, """{"error":"invalid_client"}""")
                auth != "Bearer tok_local_1" -> ex.json(401, """{"message":"token missing"}""")
                ex.requestURI.path == "/api/platform/v1/exports/exp_404" -> ex.json(404, """{"message":"Export not found","code":"export_not_found"}""")
                ex.requestMethod == "POST" && ex.requestURI.path == "/api/platform/v1/exports" -> ex.json(201, """{"id":"exp_1","status":"queued"}""")
                ex.requestURI.path == "/api/platform/v1/exports/exp_1" -> ex.json(200, """{"id":"exp_1","status":"${if (++reads == 1) "queued" else "ready"}"}""")
                ex.requestURI.path == "/api/platform/v1/exports/exp_1/download" -> {
                    val data = "a,b\n1,2\n".toByteArray()
                    ex.responseHeaders.add("Content-Type", "text/csv")
                    ex.sendResponseHeaders(200, data.size.toLong())
                    ex.responseBody.use { it.write(data) }
                }
                else -> ex.json(500, """{"message":"unexpected route"}""")
            }
        }
        server.start()
        return server
    }

    @Test
    fun exportFlowAgainstALoopbackServer() {
        val server = fakeReportsApi()
        try {
            System.setProperty("royaltykit.baseUrl", "http://127.0.0.1:${server.address.port}")
            System.setProperty("royaltykit.token", "tok_local_1")
            assertEquals("created exp_1 (queued)\npoll 1: queued -> keep_polling\npoll 2: ready -> download\ndownloaded 8 bytes\n", run("kotlin_export"))
        } finally {
            System.clearProperty("royaltykit.baseUrl")
            System.clearProperty("royaltykit.token")
            server.stop(0)
        }
    }

    @Test
    fun httpExampleAgainstALoopbackServer() {
        val server = fakeReportsApi()
        try {
            System.setProperty("royaltykit.baseUrl", "http://127.0.0.1:${server.address.port}")
            assertEquals("token for 3600 s, missing scopes: exports:write\n404 not_found export_not_found declared=true\n", run("kotlin_http"))
        } finally {
            System.clearProperty("royaltykit.baseUrl")
            server.stop(0)
        }
    }
}
