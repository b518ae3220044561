package dev.royaltykit

import dev.royaltykit.client.ExportInterruptedException
import dev.royaltykit.okhttp.OkHttpTransport
import dev.royaltykit.client.ReportsClient
import dev.royaltykit.otel.OpenTelemetryTelemetry
import dev.royaltykit.types.MachineEvent
import dev.royaltykit.types.RoyaltyKitException
import io.opentelemetry.api.common.AttributeKey
import io.opentelemetry.api.trace.SpanKind
import io.opentelemetry.api.trace.StatusCode
import io.opentelemetry.sdk.OpenTelemetrySdk
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter
import io.opentelemetry.sdk.trace.SdkTracerProvider
import io.opentelemetry.sdk.trace.data.SpanData
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor
import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertNull
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.Test
import java.util.concurrent.TimeUnit

/**
 * Point 4 of issue 42: royaltykit-otel's spans, read with the SDK's in-memory exporter — an
 * operation span per call with a CLIENT span per send (resend counts, statuses, error types), the
 * export job's and an interrupted one's, the receiver's SERVER spans — and no secret in any.
 */
class OtelTest {
    private val exporter = InMemorySpanExporter.create()
    private val otel = OpenTelemetrySdk.builder()
        .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build()).build()
    private val telemetry = OpenTelemetryTelemetry(otel, webhookRoute = "/webhooks")

    // OkHttp: java.net.http would itself send a GET again on a pooled connection that closed
    // without an answer, so the fake's dropped read would not reach the client.
    private fun client(fake: FakeReports, events: MutableList<MachineEvent> = ArrayList(), maxAttempts: Long? = null, time: VirtualTime = VirtualTime()) = ReportsClient(
        OkHttpTransport(), fake.url, "cid", "csecret", fake.tenant, clock = time.clock, sleep = time.sleep, onEvent = { events.add(it) },
        maxAttempts = maxAttempts, telemetry = telemetry, idempotencyHeader = "Idempotency-Key",
    )

    private fun SpanData.str(key: String): String? = attributes.get(AttributeKey.stringKey(key))
    private fun SpanData.long(key: String): Long? = attributes.get(AttributeKey.longKey(key))
    private fun children(of: SpanData) = exporter.finishedSpanItems.filter { it.parentSpanId == of.spanId }.sortedBy { it.startEpochNanos }

    /** Every name, attribute, event and status text of every span, to search for secrets. */
    private fun everything(): String = exporter.finishedSpanItems.joinToString("\n") { s ->
        "${s.name} ${s.attributes} ${s.status.description} " + s.events.joinToString { "${it.name} ${it.attributes}" }
    }

    private fun assertNoSecret() {
        val all = everything()
        for (secret in listOf("csecret", "Bearer", "Basic ", "whsec_", "Authorization")) {
            assertFalse("$secret in the spans:\n$all", all.contains(secret))
        }
        assertFalse("a token in the spans:\n$all", Regex("rt_[0-9a-f]{8}").containsMatchIn(all))
    }

    @Test
    fun aFaultyCallIsOneOperationSpanWithAClientSpanPerSend() {
        FakeReports().use { fake ->
            fake.faults["token" to 1] = FakeReports.Fault.Status(503)
            fake.faults["list" to 1] = FakeReports.Fault.ExpireToken
            fake.faults["list" to 2] = FakeReports.Fault.Drop
            val events = ArrayList<MachineEvent>()
            client(fake, events).request("listPlatformExports")
            val op = exporter.finishedSpanItems.single { it.name == "listPlatformExports" }
            assertEquals(SpanKind.INTERNAL, op.kind)
            assertEquals("listPlatformExports", op.str("royaltykit.operation"))
            assertEquals(fake.seen.size.toLong(), op.long("royaltykit.attempts"))
            assertEquals(StatusCode.UNSET, op.status.statusCode)
            val kinds = op.events.map { it.name }
            assertTrue("$kinds", "retry" in kinds && "refresh_token" in kinds)
            val retry = op.events.first { it.name == "retry" }
            assertTrue("${retry.attributes}", retry.attributes.get(AttributeKey.stringKey("royaltykit.rule")) != null &&
                retry.attributes.get(AttributeKey.doubleKey("royaltykit.wait_seconds")) != null)
            // one CLIENT child per request that reached the API, in order
            val sends = children(op)
            assertEquals(fake.seen.map { it.method }, sends.map { it.name })
            assertTrue(sends.all { it.kind == SpanKind.CLIENT && it.str("http.request.method") == it.name })
            assertEquals(fake.seen.map { fake.url + it.path }, sends.map { it.str("url.full") })
            assertTrue(sends.all { it.str("server.address") == "127.0.0.1" && it.long("server.port") == fake.url.substringAfterLast(':').toLong() })
            // resend counts: the attempt's, from the second on
            val attempts = events.filter { it.kind == "send" }.map { it.attempt }
            assertEquals(attempts.map { if (it > 1) it - 1 else null }, sends.map { it.long("http.request.resend_count") })
            assertEquals(1L, sends[1].long("http.request.resend_count")) // the exchange after its 503
            // the 503: ERROR, error.type "503"; the 401: error.type, not ERROR; the dropped read: connection_lost
            assertEquals(503L, sends[0].long("http.response.status_code"))
            assertEquals("503", sends[0].str("error.type"))
            assertEquals(StatusCode.ERROR, sends[0].status.statusCode)
            val unauthorized = sends.single { it.long("http.response.status_code") == 401L }
            assertEquals("401", unauthorized.str("error.type"))
            assertEquals(StatusCode.UNSET, unauthorized.status.statusCode)
            val dropped = sends.single { it.long("http.response.status_code") == null }
            assertEquals("connection_lost", dropped.str("error.type"))
            assertEquals(StatusCode.ERROR, dropped.status.statusCode)
            assertEquals(200L, sends.last().long("http.response.status_code"))
            assertNull(sends.last().str("error.type"))
            assertNoSecret()
        }
    }

    @Test
    fun aFailedCallsSpanSaysWhy() {
        FakeReports().use { fake ->
            fake.faults["list" to 1] = FakeReports.Fault.Drop
            try {
                client(fake, maxAttempts = 1).request("listPlatformExports")
                fail("no failure")
            } catch (e: RoyaltyKitException.CallFailed) {
            }
            fake.faults["list" to 2] = FakeReports.Fault.Status(404)
            try {
                client(fake).request("listPlatformExports")
                fail("no failure")
            } catch (e: RoyaltyKitException.Api) {
            }
            val (failed, notFound) = exporter.finishedSpanItems.filter { it.name == "listPlatformExports" }
            assertEquals("call_failed", failed.str("error.type"))
            assertEquals(StatusCode.ERROR, failed.status.statusCode)
            assertEquals(2L, failed.long("royaltykit.attempts")) // the token exchange and the read
            assertEquals("not_found", notFound.str("error.type"))
            assertEquals(StatusCode.ERROR, notFound.status.statusCode)
            assertNoSecret()
        }
    }

    @Test
    fun anExportJobIsOneRunExportSpanAndAnInterruptedOneSaysSo() {
        FakeReports().use { fake ->
            fake.states = listOf("queued", "ready")
            client(fake).runExport(InterruptChild.BODY)
            val run = exporter.finishedSpanItems.single { it.name == "runExport" }
            assertEquals(fake.seen.map { it.method }, children(run).map { it.name })
            assertTrue(run.events.any { it.name == "poll" && it.attributes.get(AttributeKey.stringKey("royaltykit.state")) != null })
            // the download's progress: span events on the operation span, the last one whole
            val progress = run.events.filter { it.name == "progress" }
            val size = fake.artifact.size.toLong()
            assertTrue("${run.events.map { it.name }}", progress.size in 1..11)
            assertEquals(size, progress.last().attributes.get(AttributeKey.longKey("royaltykit.received_bytes")))
            assertTrue(progress.all { it.attributes.get(AttributeKey.longKey("royaltykit.total_bytes")) == size })
            assertTrue(children(run).none { s -> s.events.any { it.name == "progress" } })
            assertEquals(StatusCode.UNSET, run.status.statusCode)
        }
        exporter.reset()
        FakeReports().use { fake ->
            fake.holdAt = 3 // token, create, the first read: held
            var thrown: Throwable? = null
            val worker = Thread { try { client(fake).runExport(InterruptChild.BODY) } catch (e: Throwable) { thrown = e } }
            worker.start()
            assertTrue(fake.arrived.await(60, TimeUnit.SECONDS))
            worker.interrupt()
            worker.join(30_000)
            assertTrue("$thrown", thrown is ExportInterruptedException)
            val run = exporter.finishedSpanItems.single { it.name == "runExport" }
            assertEquals("export_interrupted", run.str("error.type"))
            assertEquals(StatusCode.ERROR, run.status.statusCode)
            // the read in flight ended with the operation
            assertEquals("export_interrupted", children(run).last().str("error.type"))
            assertNoSecret()
        }
    }

    @Test
    fun eachDeliveryIsAServerSpanWithItsOutcome() {
        val secret = "whsec_otel"
        val now = 1_795_320_000L
        val body = """{"event":"ddex.delivery.acknowledged","resource":{"type":"ddex_message","reference":"m1","url":"/api/v1/ddex/messages/m1"},"occurred_at":"2026-11-22T04:00:00Z"}""".toByteArray()
        WebhookReceiver(listOf(secret), "org-1", onError = { _, _ -> }, telemetry = telemetry) { d ->
            if (d.deliveryId == "dlv_fail") throw IllegalStateException("handler down")
        }.use { r ->
            val ok = signWebhook(secret, body, now, "dlv_1")
            val statuses = listOf(
                r.receive(ok, body, now),
                r.receive(ok, body, now),
                r.receive(signWebhook("whsec_wrong", body, now, "dlv_2"), body, now),
                r.receive(signWebhook(secret, body, now, "dlv_fail"), body, now),
            ).map { it.status }
            val spans = exporter.finishedSpanItems
            assertEquals(4, spans.size)
            assertTrue(spans.all { it.name == "POST /webhooks" && it.kind == SpanKind.SERVER && it.str("http.request.method") == "POST" })
            assertEquals(listOf("processed", "duplicate", "rejected", "handler_failed"), spans.map { it.str("royaltykit.outcome") })
            assertEquals(statuses.map { it.toLong() }, spans.map { it.long("http.response.status_code") })
            assertEquals(listOf("dlv_1", "dlv_1", null, "dlv_fail"), spans.map { it.str("royaltykit.delivery_id") })
            assertEquals(listOf(StatusCode.UNSET, StatusCode.UNSET, StatusCode.UNSET, StatusCode.ERROR), spans.map { it.status.statusCode })
            assertEquals(listOf(null, null, null, "handler_failed"), spans.map { it.str("error.type") })
            assertNoSecret()
        }
    }
}
