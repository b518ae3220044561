// Tracing hooks of the clients and receivers, with no tracing library behind them: the
// royaltykit-otel artifact implements them over OpenTelemetry (dev.royaltykit.otel).
package dev.royaltykit

import dev.royaltykit.types.MachineEvent
import dev.royaltykit.types.RoyaltyKitException

/**
 * Where a client ([dev.royaltykit.client.ReportsClient], [dev.royaltykit.client.EnterpriseClient])
 * and a [WebhookReceiver] report what they do, for tracing (`telemetry =` on each). The library
 * itself depends on no tracing API: `dev.royaltykit.otel.OpenTelemetryTelemetry` (artifact
 * royaltykit-otel) turns these calls into OpenTelemetry spans.
 *
 * Promises: a client opens one [operation] per logical operation (`request`/`requestRaw`: the
 * operation id; `runExport`: `runExport`; a token exchange is part of the operation that needed
 * it), on the thread that runs it, gives its scope every [MachineEvent] of that operation in
 * order on that thread, and calls [OperationScope.end] exactly once there. A receiver opens one
 * [receipt] per delivery and ends it once. Nothing given here holds a token, a credential, a
 * header value or a body. An exception thrown by a scope is logged (logger `dev.royaltykit`) and
 * never changes what the client or receiver does.
 */
interface Telemetry {
    /** The scope of one logical operation [name] of a client whose base URL is [baseUrl]. */
    fun operation(name: String, baseUrl: String): OperationScope

    /** The scope of one webhook delivery a receiver handles (default: none is recorded). */
    fun receipt(): ReceiptScope = ReceiptScope.NONE
}

/** One logical operation of a client (see [Telemetry.operation]). */
interface OperationScope {
    /** The operation's next machine event: a send and its response or transport failure, a
     * retry, a token refresh, a poll, a download's progress (while its body arrives), a notice,
     * a reconcile, how it ended. */
    fun event(event: MachineEvent)

    /** The operation ended: [error] is what it threw (null on success; [errorType] names it). */
    fun end(error: Throwable?)
}

/** One webhook delivery (see [Telemetry.receipt]). */
interface ReceiptScope {
    /**
     * The delivery was answered [httpStatus]: [outcome] is the core's receipt outcome
     * (`processed`, `duplicate`, `in_progress`, `rejected`, `acknowledged`, `handler_failed`,
     * `store_unavailable`, `claim_lost`; null when the receipt threw), [deliveryId] the verified
     * delivery's id (null when not verified), [error] the handler's or the store's exception when
     * one failed, or what the receipt threw.
     */
    fun end(outcome: String?, httpStatus: Int, deliveryId: String?, error: Throwable?)

    companion object {
        /** A scope that records nothing. */
        @JvmField
        val NONE: ReceiptScope = object : ReceiptScope {
            override fun end(outcome: String?, httpStatus: Int, deliveryId: String?, error: Throwable?) = Unit
        }
    }
}

/**
 * The stable name of what [e] is, the same in every language (a span's `error.type`): an API
 * error's kind (`unauthenticated`, `not_found`, `rate_limited`, …), another library error's code
 * (`call_failed`, `reconcile_required`, `export_interrupted`, `invalid_argument`, …), else the
 * exception's class name.
 */
fun errorType(e: Throwable): String {
    if (e is RoyaltyKitException.Api) return e.error.kind.name.lowercase()
    if (e is RoyaltyKitException) return e.code
    return when (e) {
        is dev.royaltykit.client.ExportInterruptedException -> e.code
        else -> e.javaClass.name
    }
}

private val telemetryLog: java.util.logging.Logger = java.util.logging.Logger.getLogger("dev.royaltykit")

/** Runs a telemetry call; its exception is logged, never thrown into the client or receiver. */
internal inline fun guarded(what: String, call: () -> Unit) {
    try {
        call()
    } catch (e: Exception) {
        telemetryLog.log(java.util.logging.Level.WARNING, "royaltykit: telemetry failed on $what", e)
    }
}
