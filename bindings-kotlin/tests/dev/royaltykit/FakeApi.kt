package dev.royaltykit

import com.google.gson.JsonObject
import com.google.gson.JsonParser
import java.io.File
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import org.junit.Assert.assertTrue

/**
 * The shared fake API (tests/fakeapi/server.py) in a child process, for one test class: its
 * control routes, and a clock and a sleep that move the server's clock with the client's.
 */
class FakeApi {
    private val process: Process = ProcessBuilder(
        "python3", File(System.getenv("ROYALTYKIT_ROOT") ?: "..", "tests/fakeapi/server.py").path,
    ).redirectError(ProcessBuilder.Redirect.INHERIT).start()
    private val http = HttpClient.newHttpClient()

    /** The server's base URL on 127.0.0.1. */
    val url: String = process.inputStream.bufferedReader().readLine().let { line ->
        assertTrue(line, line.startsWith("listening "))
        "http://127.0.0.1:${line.removePrefix("listening ").trim()}"
    }

    /** Seconds the clock was moved forward. */
    var offset = 0.0
        private set

    /** A control route's JSON answer (POST with `payload`, else GET). */
    fun control(what: String, payload: String? = null): JsonObject {
        val b = HttpRequest.newBuilder(URI.create("$url/_fake/$what"))
        if (payload != null) b.POST(HttpRequest.BodyPublishers.ofString(payload))
        return JsonParser.parseString(http.send(b.build(), HttpResponse.BodyHandlers.ofString()).body()).asJsonObject
    }

    fun reset(script: String = "{}") = control("reset", script)
    fun stats() = control("stats")

    /** The client's clock: the real one plus the offset. */
    val clock = { System.currentTimeMillis() / 1000.0 + offset }

    /** The client's sleep: moves both clocks forward at once. */
    val sleep = { s: Double -> offset += s; control("advance", """{"seconds":$s}"""); Unit }

    /** Ends the server (it stops when its stdin closes). */
    fun close() {
        process.outputStream.close()
        process.waitFor()
    }
}
