// Clients of both APIs over the HTTP library the app already has. Every rule is the core's: each
// request is a Call machine and an export an ExportJob; this file performs their steps.
package dev.royaltykit.client

import dev.royaltykit.BearerToken
import dev.royaltykit.Call
import dev.royaltykit.CallStep
import dev.royaltykit.ExportJob
import dev.royaltykit.ExportJobParams
import dev.royaltykit.Param
import dev.royaltykit.RateBudget
import dev.royaltykit.RequestDescriptor
import dev.royaltykit.RequestParams
import dev.royaltykit.buildEnterpriseTokenRequest
import dev.royaltykit.buildTokenRequest
import dev.royaltykit.parseEnterpriseTokenResponse
import dev.royaltykit.parseTokenResponse
import dev.royaltykit.types.Reconcile
import dev.royaltykit.types.RoyaltyKitException
import dev.royaltykit.types.TransportFailure
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.StandardCopyOption
import java.time.Duration

/** A request for an [HttpTransport]: what the core built, with its absolute URL. */
class HttpRequest(val method: String, val url: String, val headers: List<Pair<String, String>>, val body: ByteArray?) {
    /** Credentials are never printed. */
    override fun toString(): String = "HttpRequest($method $url)"
}

/** What one send gave: a response, or a failure below HTTP. */
sealed class HttpOutcome {
    /** A response (any status), its body read whole. */
    class Response(val status: Int, val headers: List<Pair<String, String>>, val body: ByteArray) : HttpOutcome()

    /**
     * No response. [failure] is `CONNECT_FAILED` only when nothing can have been sent (a refused
     * connection, a connect timeout), `TIMEOUT` when the response did not come in time, and
     * `CONNECTION_LOST` for every other broken connection (the request may have been applied).
     */
    class Failed(val failure: TransportFailure, val cause: Throwable? = null) : HttpOutcome()
}

/**
 * The one method a client needs from an HTTP library: send [request] within [timeout] and read the
 * body whole, reporting progress; the library's exceptions become [HttpOutcome.Failed]. Shipped:
 * [JavaHttpTransport] (java.net.http, JVM 11+) and `OkHttpTransport` (artifact royaltykit-okhttp).
 */
fun interface HttpTransport {
    fun send(request: HttpRequest, timeout: Duration, onProgress: ((Long, Long?) -> Unit)?): HttpOutcome
}

/**
 * Reads [input] whole, calling [onProgress] (bytes so far, [total] or null) as it arrives: for
 * [HttpTransport] implementations. A body shorter than [total] is a [java.io.IOException] (the
 * connection ended early, so the transport reports `CONNECTION_LOST`).
 */
@Throws(java.io.IOException::class)
fun readBody(input: java.io.InputStream, total: Long?, onProgress: ((Long, Long?) -> Unit)?): ByteArray {
    val out = java.io.ByteArrayOutputStream()
    val buffer = ByteArray(64 * 1024)
    input.use {
        while (true) {
            val n = it.read(buffer)
            if (n < 0) break
            out.write(buffer, 0, n)
            onProgress?.invoke(out.size().toLong(), total)
        }
    }
    if (total != null && total != out.size().toLong()) throw java.io.IOException("body ended at ${out.size()} of $total bytes")
    return out.toByteArray()
}

/**
 * A request that may have been applied must not be sent again blindly (code `reconcile_required`):
 * check its effect first, as [reconcile] says.
 */
class ReconcileRequiredException(val reconcile: Reconcile, val reason: String, val operationId: String) : RuntimeException(reason) {
    val code: String get() = "reconcile_required"
}

/**
 * A call or export job stopped without an API error to show (code `call_failed`): its attempts or
 * time ran out on transport failures, or a `Retry-After` passed its budget. [rule] is stable.
 */
class CallFailedException(
    val rule: String,
    reason: String,
    val transport: TransportFailure?,
    val status: Int?,
    val retryAfterSeconds: Double?,
    val operationId: String,
    val stage: String?,
    val exportId: String?,
) : RuntimeException(reason) {
    val code: String get() = "call_failed"
}

/** A finished export: its id, its size, where it was written (when `to` was given) or its bytes. */
class ExportResult(val exportId: String, val size: Long, val path: Path?, val data: ByteArray?)

/** What both APIs' clients share: performing a machine's steps until its end. Blocking: call it off the main thread. */
abstract class ApiClient internal constructor(
    private val transport: HttpTransport,
    baseUrl: String,
    private val budget: RateBudget?,
    private val timeout: Duration,
    private val clock: () -> Double,
    private val sleep: (Double) -> Unit,
) {
    private val base = baseUrl.trimEnd('/')
    private var token: BearerToken? = null
    private var refreshAt: Double? = null

    internal abstract fun tokenRequest(): RequestDescriptor
    internal abstract fun parseToken(status: Long, headers: Map<String, String>, body: ByteArray): Pair<BearerToken, Double?>

    internal fun drive(
        next: (Double, RateBudget?) -> CallStep,
        response: (Long, Map<String, String>, ByteArray, Double) -> Unit,
        failed: (TransportFailure, Double) -> Unit,
        giveToken: (BearerToken, Double?) -> Unit,
        operationId: String,
        onProgress: ((Long, Long?) -> Unit)? = null,
    ): CallStep.Done {
        while (true) {
            when (val s = next(clock(), budget)) {
                is CallStep.Send -> {
                    val r = s.request
                    val progress = onProgress.takeIf { r.operationId().startsWith("downloadPlatformExport") }
                    val request = HttpRequest(r.method(), r.url(base), r.headers().map { it.name to it.value }, r.body())
                    when (val o = transport.send(request, timeout, progress)) {
                        is HttpOutcome.Response -> response(o.status.toLong(), o.headers.toMap(), o.body, clock())
                        is HttpOutcome.Failed -> failed(o.failure, clock())
                    }
                }
                is CallStep.Wait -> sleep(s.seconds)
                is CallStep.RefreshToken -> {
                    val done = Call.exchange(tokenRequest()).use { c ->
                        drive({ now, b -> c.next(now, b) }, { st, h, body, now -> c.response(st, h, body, now) },
                            { f, now -> c.transportFailure(f, now) }, { t, at -> c.token(t, at) }, "token exchange")
                    }
                    val (t, at) = parseToken(done.status.toLong(), done.headers.associate { it.name to it.value }, done.body)
                    token = t
                    refreshAt = at
                    giveToken(t, at)
                }
                is CallStep.Done -> return s
                is CallStep.Reconcile -> throw ReconcileRequiredException(s.reconcile, s.reason, operationId)
                is CallStep.Fail -> throw s.error ?: CallFailedException(
                    s.rule, s.reason, s.transport, s.status?.toInt(), s.retryAfterSeconds, operationId, s.stage, s.exportId,
                )
            }
        }
    }

    /**
     * Performs one operation with [params] (the client adds the token and, for the reporting API,
     * the tenant): the 2xx body (JSON text or an artifact's bytes; empty for none). Throws
     * `RoyaltyKitException.Api` for an error response retrying cannot fix,
     * [ReconcileRequiredException] when a request may have been applied, [CallFailedException]
     * when the attempts ran out without a response.
     */
    @Throws(RoyaltyKitException::class, ReconcileRequiredException::class, CallFailedException::class)
    fun request(operationId: String, params: RequestParams): ByteArray =
        Call(operationId, defaults(params)).use { c ->
            token?.let { c.token(it, refreshAt) }
            drive({ now, b -> c.next(now, b) }, { st, h, body, now -> c.response(st, h, body, now) },
                { f, now -> c.transportFailure(f, now) }, { t, at -> c.token(t, at) }, operationId).body
        }

    /**
     * [request] with Kotlin's own types: path and query values of any type (their `toString()`;
     * a null query value is left out), the body as JSON text.
     */
    @JvmOverloads
    @Throws(RoyaltyKitException::class, ReconcileRequiredException::class, CallFailedException::class)
    fun request(
        operationId: String,
        path: Map<String, Any> = emptyMap(),
        query: Map<String, Any?> = emptyMap(),
        body: String? = null,
        requestId: String? = null,
    ): ByteArray = request(
        operationId,
        RequestParams(
            path = path.mapValues { it.value.toString() },
            query = query.mapNotNull { (k, v) -> v?.let { Param(k, it.toString()) } },
            body = body?.toByteArray(),
            requestId = requestId,
        ),
    )

    internal open fun defaults(params: RequestParams): RequestParams = params

    internal fun currentToken(): Pair<BearerToken, Double?>? = token?.let { it to refreshAt }
}

private fun systemClock(): Double = System.currentTimeMillis() / 1000.0
private fun threadSleep(seconds: Double) = Thread.sleep((seconds * 1000).toLong().coerceAtLeast(0))

/**
 * The reporting API's machine surface over [transport]: obtains and refreshes the bearer token
 * (client credentials), retries as the specs say, honours `Retry-After`, paces by [budget] when
 * given (the reporting API shows no rate limits). [clock] and [sleep] are for tests.
 */
class ReportsClient @JvmOverloads constructor(
    transport: HttpTransport,
    baseUrl: String,
    private val clientId: String,
    private val clientSecret: String,
    val tenantId: String,
    private val scopes: List<String> = emptyList(),
    private val idempotencyHeader: String? = null,
    budget: RateBudget? = null,
    timeout: Duration = Duration.ofSeconds(30),
    clock: () -> Double = ::systemClock,
    sleep: (Double) -> Unit = ::threadSleep,
) : ApiClient(transport, baseUrl, budget, timeout, clock, sleep) {
    override fun tokenRequest(): RequestDescriptor = buildTokenRequest(clientId, clientSecret, tenantId, scopes)

    override fun parseToken(status: Long, headers: Map<String, String>, body: ByteArray): Pair<BearerToken, Double?> =
        parseTokenResponse(status, headers, body, tenantId, scopes).use { it.bearer() to it.refreshAt().toDouble() }

    override fun defaults(params: RequestParams): RequestParams =
        params.copy(tenantId = params.tenantId ?: tenantId, idempotencyHeader = params.idempotencyHeader ?: idempotencyHeader)

    override fun toString(): String = "ReportsClient(tenantId=$tenantId)"

    /**
     * Creates an export from [body] (the CreateExportRequest as JSON), waits for it and downloads the
     * complete artifact: to [to] (written whole or not at all), else into [ExportResult.data]. A create
     * that may have been applied is looked up, never sent twice.
     */
    @JvmOverloads
    @Throws(RoyaltyKitException::class, ReconcileRequiredException::class, CallFailedException::class)
    fun runExport(
        body: String,
        to: Path? = null,
        requestId: String? = null,
        maxPolls: Long? = null,
        onProgress: ((Long, Long?) -> Unit)? = null,
    ): ExportResult {
        val params = ExportJobParams(tenantId, body.toByteArray(), idempotencyHeader, requestId, maxPolls)
        val done = ExportJob(params).use { j ->
            currentToken()?.let { (t, at) -> j.token(t, at) }
            drive({ now, b -> j.next(now, b) }, { st, h, b, now -> j.response(st, h, b, now) },
                { f, now -> j.transportFailure(f, now) }, { t, at -> j.token(t, at) }, "export job", onProgress)
        }
        val id = done.exportId ?: ""
        if (to == null) return ExportResult(id, done.body.size.toLong(), null, done.body)
        val dir = to.toAbsolutePath().parent
        val tmp = Files.createTempFile(dir, ".royaltykit-", ".part")
        try {
            Files.write(tmp, done.body)
            Files.move(tmp, to, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE)
        } finally {
            Files.deleteIfExists(tmp)
        }
        return ExportResult(id, done.body.size.toLong(), to, null)
    }
}

/**
 * The enterprise organization API over [transport]: the key and secret exchanged for a token, the
 * spec's one-minute limits kept ([budget], default `RateBudget.preset("enterprise")`; share one
 * budget between the clients of one API key), retries and `Retry-After` as the spec says.
 */
class EnterpriseClient @JvmOverloads constructor(
    transport: HttpTransport,
    baseUrl: String,
    private val apiKey: String,
    private val apiSecret: String,
    budget: RateBudget = RateBudget.preset("enterprise"),
    timeout: Duration = Duration.ofSeconds(30),
    clock: () -> Double = ::systemClock,
    sleep: (Double) -> Unit = ::threadSleep,
) : ApiClient(transport, baseUrl, budget, timeout, clock, sleep) {
    override fun tokenRequest(): RequestDescriptor = buildEnterpriseTokenRequest(apiKey, apiSecret)

    override fun parseToken(status: Long, headers: Map<String, String>, body: ByteArray): Pair<BearerToken, Double?> =
        parseEnterpriseTokenResponse(status, headers, body).use { it.bearer() to it.refreshAt()?.toDouble() }

    override fun toString(): String = "EnterpriseClient()"
}
