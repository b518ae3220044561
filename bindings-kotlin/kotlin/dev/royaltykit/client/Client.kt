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
    /**
     * A response (any status): its body read whole, or, when the [BodyTarget] took it, streamed
     * there: then [body] is empty and [streamedLength] is how many bytes were written.
     */
    class Response(
        val status: Int,
        val headers: List<Pair<String, String>>,
        val body: ByteArray,
        val streamedLength: Long? = null,
    ) : HttpOutcome()

    /**
     * No response. [failure] is `CONNECT_FAILED` only when nothing can have been sent (a refused
     * connection, a connect timeout), `TIMEOUT` when the response did not come in time, and
     * `CONNECTION_LOST` for every other broken connection (the request may have been applied).
     */
    class Failed(val failure: TransportFailure, val cause: Throwable? = null) : HttpOutcome()
}

/**
 * Where a response body goes, chosen once its status is known: a stream to write it into (the
 * core streams only a 2xx to an export download, so an artifact need not fit in memory), or null
 * to read it whole.
 */
fun interface BodyTarget {
    fun streamTo(status: Int, contentLength: Long?): java.io.OutputStream?
}

/** Every body read whole. */
private object Whole : BodyTarget {
    override fun streamTo(status: Int, contentLength: Long?): java.io.OutputStream? = null
}

/** A streamed body into [sink] when the machine [m] streams the status, else read whole. */
private class Streamed(private val m: Driven, private val sink: ArtifactSink) : BodyTarget {
    override fun streamTo(status: Int, contentLength: Long?): java.io.OutputStream? =
        if (m.streams(status.toLong())) sink.start(contentLength) else null
}

/**
 * The one method a client needs from an HTTP library: send [request] within [timeout], and hand
 * the body to [target] ([readResponse] does it); the library's exceptions become
 * [HttpOutcome.Failed]. Shipped: [JavaHttpTransport] (java.net.http, JVM 11+) and
 * `OkHttpTransport` (artifact royaltykit-okhttp).
 */
fun interface HttpTransport {
    fun send(request: HttpRequest, timeout: Duration, target: BodyTarget): HttpOutcome
}

/**
 * Reads a response's [input] for [HttpTransport] implementations: into the stream [target] gives
 * for [status] (the length written is reported; the core checks it against [total]), else whole
 * (a body shorter than [total] is then an [java.io.IOException]: the connection ended early, so
 * the transport reports `CONNECTION_LOST`). A failure of the target's stream (a full disk) is
 * rethrown as [java.io.UncheckedIOException], never taken for a network failure.
 */
@Throws(java.io.IOException::class)
fun readResponse(
    status: Int,
    headers: List<Pair<String, String>>,
    input: java.io.InputStream,
    total: Long?,
    target: BodyTarget,
): HttpOutcome.Response = input.use {
    val buffer = ByteArray(64 * 1024)
    val out = try {
        target.streamTo(status, total)
    } catch (e: java.io.IOException) {
        throw java.io.UncheckedIOException(e) // the sink's (the disk's), never a network failure
    }
    if (out == null) {
        val body = it.readBytes()
        if (total != null && total != body.size.toLong()) throw java.io.IOException("body ended at ${body.size} of $total bytes")
        return HttpOutcome.Response(status, headers, body)
    }
    var length = 0L
    while (true) {
        val n = it.read(buffer)
        if (n < 0) break
        try {
            out.write(buffer, 0, n)
        } catch (e: java.io.IOException) {
            throw java.io.UncheckedIOException(e)
        }
        length += n
    }
    HttpOutcome.Response(status, headers, ByteArray(0), length)
}

/**
 * Where a streamed artifact goes as it arrives: a temporary file next to [to] (moved over it when
 * whole), else memory. Each attempt of the download starts it afresh.
 */
private class ArtifactSink(private val to: Path?, private val onProgress: ((Long, Long?) -> Unit)?) : AutoCloseable {
    private val tmp: Path? = to?.let { Files.createTempFile(it.toAbsolutePath().parent, ".royaltykit-", ".part") }
    private val file = tmp?.let { t ->
        try {
            java.nio.channels.FileChannel.open(t, java.nio.file.StandardOpenOption.WRITE)
        } catch (e: Throwable) {
            Files.deleteIfExists(t)
            throw e
        }
    }
    private val memory = java.io.ByteArrayOutputStream()
    var length = 0L
        private set

    fun start(total: Long?): java.io.OutputStream {
        file?.truncate(0)?.position(0)
        memory.reset()
        length = 0
        return object : java.io.OutputStream() {
            override fun write(b: Int) = write(byteArrayOf(b.toByte()), 0, 1)
            override fun write(b: ByteArray, off: Int, len: Int) {
                if (file != null) {
                    val buf = java.nio.ByteBuffer.wrap(b, off, len)
                    while (buf.hasRemaining()) file.write(buf)
                } else {
                    memory.write(b, off, len)
                }
                length += len
                onProgress?.invoke(length, total)
            }
        }
    }

    /** The artifact is whole: moved into place ([to]), else its bytes. */
    fun finish(): ByteArray? {
        if (file == null || tmp == null || to == null) return memory.toByteArray()
        file.force(true)
        file.close()
        Files.move(tmp, to, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE)
        return null
    }

    /** Leaves nothing behind: the temporary file goes unless it was moved. */
    override fun close() {
        file?.close()
        tmp?.let { Files.deleteIfExists(it) }
    }
}

/** The inputs a [Call] or an [ExportJob] takes, so one loop drives both. */
internal class Driven(
    val next: (Double, RateBudget?) -> CallStep,
    val response: (Long, Map<String, String>, ByteArray, Double) -> Unit,
    val streams: (Long) -> Boolean,
    val streamed: (Long, Map<String, String>, Long, Double) -> Unit,
    val failed: (TransportFailure, Double) -> Unit,
    val token: (BearerToken, Double?) -> Unit,
)

internal fun Call.driven() = Driven({ now, b -> next(now, b) }, { st, h, b, now -> response(st, h, b, now) }, { streams(it) },
    { st, h, n, now -> streamedResponse(st, h, n, now) }, { f, now -> transportFailure(f, now) }, { t, at -> token(t, at) })

internal fun ExportJob.driven() = Driven({ now, b -> next(now, b) }, { st, h, b, now -> response(st, h, b, now) }, { streams(it) },
    { st, h, n, now -> streamedResponse(st, h, n, now) }, { f, now -> transportFailure(f, now) }, { t, at -> token(t, at) })

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

    /** Performs [m]'s steps to its end; a body the machine streams goes into [sink]. */
    private fun drive(m: Driven, operationId: String, sink: ArtifactSink? = null): CallStep.Done {
        val target: BodyTarget = if (sink == null) Whole else Streamed(m, sink)
        while (true) {
            when (val s = m.next(clock(), budget)) {
                is CallStep.Send -> {
                    val r = s.request
                    val request = HttpRequest(r.method(), r.url(base), r.headers().map { it.name to it.value }, r.body())
                    when (val o = transport.send(request, timeout, target)) {
                        is HttpOutcome.Response -> {
                            val headers = o.headers.toMap()
                            val length = o.streamedLength
                            if (length != null) m.streamed(o.status.toLong(), headers, length, clock())
                            else m.response(o.status.toLong(), headers, o.body, clock())
                        }
                        is HttpOutcome.Failed -> m.failed(o.failure, clock())
                    }
                }
                is CallStep.Wait -> sleep(s.seconds)
                is CallStep.RefreshToken -> {
                    val done = Call.exchange(tokenRequest()).use { c -> drive(c.driven(), "token exchange") }
                    val (t, at) = parseToken(done.status.toLong(), done.headers.associate { it.name to it.value }, done.body)
                    token = t
                    refreshAt = at
                    m.token(t, at)
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
            drive(c.driven(), operationId).body
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

    /** Runs [job] with the client's token; its artifact goes to [to] (or memory). */
    internal fun runJob(job: ExportJob, to: Path?, onProgress: ((Long, Long?) -> Unit)?): ExportResult =
        ArtifactSink(to, onProgress).use { sink ->
            token?.let { job.token(it, refreshAt) }
            val done = drive(job.driven(), "export job", sink)
            val data = sink.finish()
            ExportResult(done.exportId ?: "", sink.length, to, data.takeIf { to == null })
        }
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
     * complete artifact: to [to] (streamed to a temporary file beside it as it arrives, moved into
     * place when whole: never held in memory), else into [ExportResult.data]. A create that may have
     * been applied is looked up, never sent twice.
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
        return ExportJob(params).use { runJob(it, to, onProgress) }
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
