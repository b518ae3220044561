// royaltykit-otel: the clients' and receivers' Telemetry as OpenTelemetry spans, over
// opentelemetry-api only. A separate artifact, so the core jar gains no dependency.
package dev.royaltykit.otel

import dev.royaltykit.OperationScope
import dev.royaltykit.ReceiptScope
import dev.royaltykit.Telemetry
import dev.royaltykit.errorType
import dev.royaltykit.types.MachineEvent
import io.opentelemetry.api.GlobalOpenTelemetry
import io.opentelemetry.api.OpenTelemetry
import io.opentelemetry.api.common.Attributes
import io.opentelemetry.api.common.AttributesBuilder
import io.opentelemetry.api.trace.Span
import io.opentelemetry.api.trace.SpanKind
import io.opentelemetry.api.trace.StatusCode
import io.opentelemetry.api.trace.Tracer
import io.opentelemetry.context.Context
import io.opentelemetry.context.Scope
import java.net.URI

/**
 * [Telemetry] as OpenTelemetry spans (tracer `royaltykit`), the same in every language:
 *
 * - one INTERNAL span per logical operation of a client, named after it (`listPlatformExports`,
 *   `runExport`, …), with `royaltykit.operation` and `royaltykit.attempts` (the requests sent, a
 *   token exchange's included); on failure status ERROR and `error.type` ([errorType]:
 *   `call_failed`, an API error's kind, `reconcile_required`, `export_interrupted`, …). Its retry,
 *   rate_limited, refresh_token, poll, progress, notice and reconcile events become span events
 *   of that name, with `royaltykit.rule`, `royaltykit.reason`, `royaltykit.wait_seconds`,
 *   `royaltykit.state`, `royaltykit.received_bytes` and `royaltykit.total_bytes` when present
 *   (a download's progress: a few per body, at each tenth and when whole, never one per piece);
 * - under it, one CLIENT span per request sent, named after its method (`GET`, `POST`), with
 *   `http.request.method`, `url.full` (the base URL and the path, never the query),
 *   `server.address`, `server.port`, `http.response.status_code` when a response came,
 *   `http.request.resend_count` (from the second attempt on) and `error.type` (the transport
 *   failure's kind, or the status as text from 400 on); status ERROR on a transport failure or a
 *   status from 500 on;
 * - one SERVER span per webhook delivery a receiver handles, named `POST` (`POST <route>` when
 *   [webhookRoute] is given, also as `http.route`), with `http.request.method`,
 *   `http.response.status_code`, `royaltykit.outcome` and `royaltykit.delivery_id` once verified;
 *   status ERROR and `error.type` (the outcome) for `handler_failed` and `store_unavailable`.
 *
 * Spans start under the caller's current context; the operation's and the delivery's span are
 * current while they run (so spans of your handler or HTTP library nest under them). No token,
 * credential, header value, query or body is ever put on a span.
 */
class OpenTelemetryTelemetry @JvmOverloads constructor(
    openTelemetry: OpenTelemetry = GlobalOpenTelemetry.get(),
    /** The route your server receives webhooks on (`/webhooks`), for the SERVER spans' names. */
    private val webhookRoute: String? = null,
) : Telemetry {
    private val tracer: Tracer = openTelemetry.getTracer("royaltykit")

    override fun operation(name: String, baseUrl: String): OperationScope = Operation(tracer, name, baseUrl)

    override fun receipt(): ReceiptScope = Delivery(tracer, webhookRoute)
}

/** A span made current on the thread that started it, until [close] there. */
private class Current(val span: Span) {
    private val thread = Thread.currentThread()
    private val scope: Scope = span.makeCurrent()

    fun close() {
        if (Thread.currentThread() === thread) scope.close() // a scope is closed by its own thread only
    }
}

private class Operation(private val tracer: Tracer, name: String, baseUrl: String) : OperationScope {
    private val base = baseUrl.trimEnd('/')
    private val uri = runCatching { URI(base) }.getOrNull()
    private val host = uri?.host?.removePrefix("[")?.removeSuffix("]")
    private val port = uri?.let { if (it.port >= 0) it.port else if (it.scheme == "http") 80 else 443 }
    private val span = tracer.spanBuilder(name).setSpanKind(SpanKind.INTERNAL).setParent(Context.current())
        .setAttribute("royaltykit.operation", name).startSpan()
    private val current = Current(span)
    private var send: Current? = null
    private var sends = 0L

    override fun event(event: MachineEvent) {
        when (event.kind) {
            "send" -> {
                endSend(null) // never two at once; were one left open, it ends here
                sends++
                val method = event.method ?: "HTTP"
                val b = tracer.spanBuilder(method).setSpanKind(SpanKind.CLIENT).setParent(Context.current().with(span))
                    .setAttribute("http.request.method", method)
                event.path?.let { b.setAttribute("url.full", base + it.substringBefore('?')) }
                host?.let { b.setAttribute("server.address", it) }
                port?.let { b.setAttribute("server.port", it.toLong()) }
                if (event.attempt > 1) b.setAttribute("http.request.resend_count", event.attempt - 1)
                send = Current(b.startSpan())
            }
            "response" -> send?.span?.let { s ->
                val status = event.status?.toInt()
                if (status != null) {
                    s.setAttribute("http.response.status_code", status.toLong())
                    if (status >= 400) s.setAttribute("error.type", status.toString())
                    if (status >= 500) s.setStatus(StatusCode.ERROR)
                }
                endSend(null)
            }
            "transport_failure" -> send?.span?.let { s ->
                s.setAttribute("error.type", event.transport ?: "transport_failure")
                s.setStatus(StatusCode.ERROR)
                endSend(null)
            }
            "retry", "rate_limited", "refresh_token", "poll", "progress", "notice", "reconcile" -> {
                val a: AttributesBuilder = Attributes.builder()
                event.rule?.let { a.put("royaltykit.rule", it) }
                event.reason?.let { a.put("royaltykit.reason", it) }
                event.waitSeconds?.let { a.put("royaltykit.wait_seconds", it) }
                event.state?.let { a.put("royaltykit.state", it) }
                event.receivedBytes?.let { a.put("royaltykit.received_bytes", it.toLong()) }
                event.totalBytes?.let { a.put("royaltykit.total_bytes", it.toLong()) }
                span.addEvent(event.kind, a.build())
            }
        }
    }

    /** Ends the send span in flight, if any ([error]: the operation's, when it ended during it). */
    private fun endSend(error: Throwable?) {
        val s = send ?: return
        send = null
        if (error != null) {
            s.span.setAttribute("error.type", errorType(error))
            s.span.setStatus(StatusCode.ERROR)
        }
        s.close()
        s.span.end()
    }

    override fun end(error: Throwable?) {
        endSend(error)
        span.setAttribute("royaltykit.attempts", sends)
        if (error != null) {
            span.setAttribute("error.type", errorType(error))
            span.setStatus(StatusCode.ERROR, error.message ?: errorType(error))
        }
        current.close()
        span.end()
    }
}

private class Delivery(tracer: Tracer, private val route: String?) : ReceiptScope {
    private val span = tracer.spanBuilder(if (route == null) "POST" else "POST $route").setSpanKind(SpanKind.SERVER)
        .setParent(Context.current()).setAttribute("http.request.method", "POST")
        .also { b -> route?.let { b.setAttribute("http.route", it) } }.startSpan()
    private val current = Current(span)

    override fun end(outcome: String?, httpStatus: Int, deliveryId: String?, error: Throwable?) {
        span.setAttribute("http.response.status_code", httpStatus.toLong())
        outcome?.let { span.setAttribute("royaltykit.outcome", it) }
        deliveryId?.let { span.setAttribute("royaltykit.delivery_id", it) }
        if (outcome == "handler_failed" || outcome == "store_unavailable" || outcome == null) {
            val type = outcome ?: (error?.let(::errorType) ?: "receipt_failed")
            span.setAttribute("error.type", type)
            span.setStatus(StatusCode.ERROR, type)
        }
        current.close()
        span.end()
    }
}
