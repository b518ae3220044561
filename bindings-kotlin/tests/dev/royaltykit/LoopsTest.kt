package dev.royaltykit

import dev.royaltykit.types.*

import com.sun.net.httpserver.HttpServer
import org.junit.Assert.assertEquals
import org.junit.Test
import java.net.InetSocketAddress
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.net.http.HttpTimeoutException
import java.time.Duration
import java.util.concurrent.Executors

/**
 * The retry loop and the receiver as users write them, over real HTTP on 127.0.0.1: no blind
 * second create; a failed delivery is processed on redelivery, exactly once.
 */
class LoopsTest {
    private val tenant = "0f8fad5b-d9cb-469f-a165-70867728950e"
    private val client: HttpClient = HttpClient.newHttpClient()

    private fun server(handle: (com.sun.net.httpserver.HttpExchange) -> Unit): HttpServer =
        HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0).apply {
            createContext("/") { ex -> handle(ex) }
            executor = Executors.newFixedThreadPool(4)
            start()
        }

    private fun HttpServer.base() = "http://127.0.0.1:${address.port}"

    /** POST exports: the first request is applied but answered too late; a known key is a replay. */
    private class Exports {
        var calls = 0
        val exports = mutableListOf<String>()
        val byKey = mutableMapOf<String, String>()
    }

    private fun exportServer(state: Exports) = server { ex ->
        ex.requestBody.readAllBytes()
        val key = ex.requestHeaders.getFirst("Idempotency-Key")
        val first = synchronized(state) {
            state.calls++
            if (key == null || key !in state.byKey) {
                state.exports += "exp_${state.exports.size + 1}"
                if (key != null) state.byKey[key] = state.exports.last()
            }
            state.calls == 1
        }
        if (first) Thread.sleep(1500) // applied, but the answer comes after the client gave up
        runCatching { ex.sendResponseHeaders(201, -1); ex.close() }
    }

    /** The documented retry loop for a create: send, and on failure do what decideRetry says. */
    private fun createExport(base: String, header: String?): Triple<String, Reconcile?, Int> {
        val op = operation("createPlatformExport")
        val d = buildRequest("createPlatformExport", RequestParams(body = """{"export_class":"statements","format":"csv"}""".toByteArray(),
            token = BearerToken.reports("t", tenant), tenantId = tenant, idempotencyHeader = header))
        var attempt = 0
        while (true) {
            attempt++
            val req = HttpRequest.newBuilder(URI(d.url(base))).timeout(Duration.ofMillis(500))
                .method(d.method(), HttpRequest.BodyPublishers.ofByteArray(d.body()!!))
                .apply { d.headers().forEach { h -> if (h.name != "Content-Length") header(h.name, h.value) } }.build()
            try {
                val res = client.send(req, HttpResponse.BodyHandlers.discarding())
                return Triple("created ${res.statusCode()}", null, attempt)
            } catch (e: HttpTimeoutException) {
                val decision = decideRetry(RetryInput(retryClass = op.retryClass, attempt = attempt.toLong(), transport = TransportFailure.TIMEOUT,
                    random = 0.0, idempotencyKeySent = d.idempotencyKeySent()))
                if (decision.action != RetryAction.RETRY) return Triple(decision.action.wireName, decision.reconcile, attempt)
            }
        }
    }

    /** Runs the loop against a fresh server; checks its outcome, the requests sent and the exports kept. */
    private fun createOnce(header: String?, outcome: Triple<String, Reconcile?, Int>, calls: Int) {
        val state = Exports()
        val s = exportServer(state)
        try {
            assertEquals(outcome, createExport(s.base(), header))
            Thread.sleep(1600)
            assertEquals(calls, state.calls)
            assertEquals(listOf("exp_1"), state.exports)
        } finally { s.stop(0) }
    }

    @Test
    fun aTimedOutCreateWithoutItsKeyIsReconciledNotSentTwice() =
        createOnce(null, Triple("reconcile", Reconcile.LOOKUP_BY_SENT_DATA, 1), calls = 1)

    @Test
    fun withTheKeySentTheRetryIsSafeAndOneExportExists() =
        createOnce("Idempotency-Key", Triple("created 201", null, 2), calls = 2)

    @Test
    fun aReceiverProcessesAFailedDeliveryOnceAndALateRedeliveryIsADuplicate() {
        val secret = "whsec_loop"
        var clock = 1_795_320_000L // injected clock (Unix seconds)
        var dbUp = false
        val stored = mutableListOf<String>()
        val seen = DedupWindow(1000) // default TTL: the whole redelivery schedule
        val verifier = WebhookVerifier(listOf(secret))
        val s = server { ex ->
            val body = ex.requestBody.readAllBytes()
            val headers = ex.requestHeaders.mapValues { it.value.toList() }
            val status = run {
                val v = try { verifier.verifyMulti(headers, body, clock) } catch (e: RoyaltyKitException) { return@run e.httpStatus.toInt() }
                val key = deliveryKey("org-1", v.deliveryId)
                when (seen.claim(key, clock)) {
                    ClaimState.DONE -> return@run 200
                    ClaimState.IN_PROGRESS -> return@run 503
                    ClaimState.NEW -> {}
                }
                if (!dbUp) { seen.release(key, clock); return@run 500 }
                synchronized(stored) { stored += v.deliveryId }
                seen.commit(key, clock)
                200
            }
            ex.sendResponseHeaders(status, -1)
            ex.close()
        }
        val body = """{"event":"ddex.delivery.failed","resource":{"type":"ddex_message","reference":"r","url":"/u"},"occurred_at":"2026-11-22T04:05:06Z"}""".toByteArray()
        fun deliver(): Int {
            val b = HttpRequest.newBuilder(URI("${s.base()}/webhooks")).POST(HttpRequest.BodyPublishers.ofByteArray(body))
            signWebhook(secret, body, clock, "dlv_1").forEach { (n, v) -> b.header(n, v) }
            return client.send(b.build(), HttpResponse.BodyHandlers.discarding()).statusCode()
        }
        try {
            assertEquals("DB down: released", 500, deliver())
            dbUp = true
            clock += 30 // the service's first redelivery delay
            assertEquals(200, deliver())
            clock += 6 * 3600 // a late redelivery, re-signed at its own time
            assertEquals(200, deliver())
            assertEquals("exactly one effect", listOf("dlv_1"), stored)
        } finally { s.stop(0); verifier.close(); seen.close() }
    }
}
