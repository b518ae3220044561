// Clients of both APIs over the HTTP library the app already has. Every rule is the core's: each
// request is a Call machine and an export an ExportJob, all on the client's Session (one token,
// one exchange in flight); this file performs their steps.
package dev.royaltykit.client

import dev.royaltykit.Advance
import dev.royaltykit.ClonedHandle
import dev.royaltykit.FfiConverterOptionalDouble
import dev.royaltykit.FfiConverterOptionalLong
import dev.royaltykit.FfiConverterOptionalULong
import dev.royaltykit.FfiConverterSequenceTypeMachineEvent
import dev.royaltykit.FfiConverterString
import dev.royaltykit.FfiConverterTypeAdvance
import dev.royaltykit.FfiConverterTypeStepOutcome
import dev.royaltykit.StepOutcome
import dev.royaltykit.FfiConverterTypeRequestParams
import dev.royaltykit.FfiConverterTypeWireRequest
import dev.royaltykit.NativeFast
import dev.royaltykit.WireRequest
import dev.royaltykit.jniAnswer
import dev.royaltykit.types.EventLevel
import dev.royaltykit.FfiConverterOptionalTypeEventLevel
import dev.royaltykit.BearerToken
import dev.royaltykit.Call
import dev.royaltykit.FleetToken
import dev.royaltykit.FleetTokenStep
import dev.royaltykit.RedisFleet
import dev.royaltykit.OperationScope
import dev.royaltykit.Telemetry
import dev.royaltykit.clientTimeouts
import dev.royaltykit.exportInterruptedMessage
import dev.royaltykit.guarded
import dev.royaltykit.CallStep
import dev.royaltykit.ExportJob
import dev.royaltykit.ExportJobParams
import dev.royaltykit.Pages
import dev.royaltykit.PagesStep
import dev.royaltykit.Param
import dev.royaltykit.RateBudget
import dev.royaltykit.DeliveryStates
import dev.royaltykit.Recovery
import dev.royaltykit.RecoveryStep
import dev.royaltykit.code
import dev.royaltykit.RequestDescriptor
import dev.royaltykit.RequestParams
import dev.royaltykit.RevealedSecret
import dev.royaltykit.revealedSecret
import dev.royaltykit.Session
import dev.royaltykit.awaitToken
import dev.royaltykit.buildEnterpriseTokenRequest
import dev.royaltykit.buildTokenRequest
import dev.royaltykit.callStepError
import dev.royaltykit.checkBaseUrl
import dev.royaltykit.parseEnterpriseTokenResponse
import dev.royaltykit.parseTokenResponse
import dev.royaltykit.wakeWaiters
import dev.royaltykit.types.Api
import dev.royaltykit.types.MachineEvent
import dev.royaltykit.types.RecoveryReport
import dev.royaltykit.types.RoyaltyKitException
import dev.royaltykit.types.TransportFailure
import dev.royaltykit.types.VerifiedWebhook
import dev.royaltykit.types.WebhookEvent
import java.nio.ByteBuffer
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.StandardCopyOption
import java.time.Duration
import java.time.Instant

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

/**
 * A streamed body into [sink] when the machine [m] streams the status, else read whole. Each piece
 * written is reported to the machine (`progress`: its events at each tenth of the body), whose
 * events [deliver] hands on at once: whatever the transport, the client sees the bytes here.
 */
private class Streamed(private val m: Driven, private val sink: ArtifactSink, private val deliver: () -> Unit) : BodyTarget {
    override fun streamTo(status: Int, contentLength: Long?): java.io.OutputStream? =
        if (m.streams(status.toLong())) {
            sink.start(contentLength) { received, total ->
                m.progress(received, total)
                deliver()
            }
        } else {
            null
        }
}

/**
 * The one method a client needs from an HTTP library: send [request], waiting at most [timeout]
 * (the client's read timeout) for the response's headers and then for each piece of its body,
 * and hand the body to [target] ([readResponse] does it); the library's exceptions become
 * [HttpOutcome.Failed]. Shipped: [JavaHttpTransport] (java.net.http, JVM 11+) and
 * `OkHttpTransport` (artifact royaltykit-okhttp).
 *
 * A thread interrupt (a coroutine's cancellation, Ctrl-C's shutdown hook) should end a send at
 * once: throw [InterruptedException], or return any outcome with the thread's interrupt flag
 * still set; the client then ends the call without reading that outcome.
 */
fun interface HttpTransport {
    fun send(request: HttpRequest, timeout: Duration, target: BodyTarget): HttpOutcome
}

/**
 * An [HttpTransport] that takes a client's connect timeout (shipped: [JavaHttpTransport] and
 * `OkHttpTransport`). A transport that is not one keeps its HTTP library's own connect timeout.
 */
interface ConfigurableTransport : HttpTransport {
    /**
     * This transport for a client whose connect timeout (making the connection: TCP and TLS) is
     * [connectTimeout] and whose read timeout is [readTimeout]: called once when a client (or a
     * `withOptions` copy) is built, which then sends through what this returns.
     */
    fun configured(connectTimeout: Duration, readTimeout: Duration): HttpTransport
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
    val out = try {
        target.streamTo(status, total)
    } catch (e: java.io.IOException) {
        throw java.io.UncheckedIOException(e) // the sink's (the disk's), never a network failure
    }
    if (out == null) {
        val body = if (total != null && total in 0..WHOLE_SIZED) readExactly(it, total.toInt()) else it.readBytes()
        if (total != null && total != body.size.toLong()) throw java.io.IOException("body ended at ${body.size} of $total bytes")
        return HttpOutcome.Response(status, headers, body)
    }
    // a streamed body only: a whole one (every call's) is read without this buffer, whose
    // allocation and zeroing showed as readResponse's own time in the clients' profile
    val buffer = ByteArray(64 * 1024)
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

/** The largest announced length read straight into an array of that size (a larger one, the server's word, grows as it arrives). */
private const val WHOLE_SIZED = 1L shl 20

/**
 * [input]'s body of announced length [total], read into one array of that size (no copy buffer):
 * what most calls get. A body that ends early is returned short and one that goes on past
 * [total] whole, so the caller's length check refuses both.
 */
private fun readExactly(input: java.io.InputStream, total: Int): ByteArray {
    val body = ByteArray(total)
    var got = 0
    while (got < total) {
        val n = input.read(body, got, total - got)
        if (n < 0) return body.copyOf(got)
        got += n
    }
    val next = input.read()
    if (next < 0) return body
    // longer than announced: the rest, for the caller's check to refuse
    return body + next.toByte() + input.readBytes()
}

/** [e] naming the user's [target] instead of the temporary file beside it (the original as cause). */
private fun ownPath(e: java.io.IOException, target: Path): java.io.IOException {
    if (e !is java.nio.file.FileSystemException) return e
    val file = target.toString()
    val renamed = when (e) {
        is java.nio.file.NoSuchFileException -> java.nio.file.NoSuchFileException(file, null, e.reason)
        is java.nio.file.AccessDeniedException -> java.nio.file.AccessDeniedException(file, null, e.reason)
        is java.nio.file.FileAlreadyExistsException -> java.nio.file.FileAlreadyExistsException(file, null, e.reason)
        else -> java.nio.file.FileSystemException(file, null, e.reason ?: e.javaClass.simpleName)
    }
    return renamed.apply { initCause(e) }
}

/** A new temporary file beside [to], with mode 0644 less the umask where the file system has POSIX
 * modes: the artifact's mode once moved, the same in every language. */
private fun createBeside(to: Path): Path {
    val dir = to.toAbsolutePath().parent
    return try {
        if (java.nio.file.FileSystems.getDefault().supportedFileAttributeViews().contains("posix")) {
            val mode = java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--")
            Files.createTempFile(dir, ".royaltykit-", ".part", java.nio.file.attribute.PosixFilePermissions.asFileAttribute(mode))
        } else {
            Files.createTempFile(dir, ".royaltykit-", ".part")
        }
    } catch (e: java.io.IOException) {
        throw ownPath(e, to)
    }
}

/**
 * Where a streamed artifact goes as it arrives: a temporary file next to [to] (moved over it when
 * whole; mode 0644 less the umask), else memory. Each attempt of the download starts it afresh.
 * Errors of the disk name [to], never the temporary file.
 */
private class ArtifactSink(private val to: Path?, private val onProgress: ((Long, Long?) -> Unit)?) : AutoCloseable {
    private val tmp: Path? = to?.let(::createBeside)
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

    /** A new attempt's body (of [total] bytes when announced): the sink starts afresh; [onChunk]
     * is called with the bytes written so far after each piece, before the user's onProgress. */
    fun start(total: Long?, onChunk: ((Long, Long?) -> Unit)? = null): java.io.OutputStream {
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
                onChunk?.invoke(length, total)
                onProgress?.invoke(length, total)
            }
        }
    }

    /** The artifact is whole: moved into place ([to]), else its bytes. */
    fun finish(): ByteArray? {
        if (file == null || tmp == null || to == null) return memory.toByteArray()
        try {
            file.force(true)
            file.close()
            Files.move(tmp, to, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE)
        } catch (e: java.io.IOException) {
            throw ownPath(e, to)
        }
        return null
    }

    /** Leaves nothing behind: the temporary file goes unless it was moved. */
    override fun close() {
        file?.close()
        tmp?.let { Files.deleteIfExists(it) }
    }
}

/**
 * The inputs a [Call] or an [ExportJob] on a session takes, so one loop drives both. The events
 * are those at the given level or above (null: all); the core drops the others unbuilt.
 */
internal class Driven(
    /** The next step and the events up to it, in one call (each call into the library costs). */
    val next: (Double, EventLevel?) -> Advanced,
    /** What became of the `Send` or `Reserve` performed, then the next step and the events up to it, in one call. */
    val report: (StepOutcome, Double, EventLevel?) -> Advanced,
    val streams: (Long) -> Boolean,
    val events: (EventLevel?) -> List<MachineEvent>,
    /** The streamed body's bytes so far, of its announced length (a `progress` event now and then). */
    val progress: (Long, Long?) -> Unit,
)

/**
 * A step and the events up to it: the machine's [step], or, when [step] is null, a `Send` whose
 * request is already in its wire form [wire] (a call through JNI: the request's object never
 * crosses).
 */
internal class Advanced(val step: CallStep?, val wire: WireRequest?, val events: List<MachineEvent>) {
    constructor(a: Advance) : this(a.step, null, a.events)
}

internal fun Call.driven(session: Session) = Driven({ now, level -> Advanced(advanceIn(now, session, level)) },
    { o, now, level -> Advanced(reportIn(o, now, session, level)) }, { streams(it) }, { takeEvents(it) }, { got, total -> progress(got, total) })

internal fun ExportJob.driven(session: Session) = Driven({ now, level -> Advanced(advanceIn(now, session, level)) },
    { o, now, level -> Advanced(reportIn(o, now, session, level)) }, { streams(it) }, { takeEvents(it) }, { got, total -> progress(got, total) })

/** The machines' outcome of what the transport gave: a response (its body whole or streamed) or none. */
internal fun HttpOutcome.outcome(): StepOutcome = when (this) {
    is HttpOutcome.Response -> {
        val length = streamedLength
        if (length != null) StepOutcome.Streamed(status.toLong(), headers.toMap(), length) else StepOutcome.Response(status.toLong(), headers.toMap(), body)
    }
    is HttpOutcome.Failed -> StepOutcome.NoResponse(failure)
}

/**
 * A [Call] through JNI (src/jni.rs, `callOpen` and `callStep`): the same machine, made by the same
 * constructor and driven by the same methods, with no JNA `Structure` allocated per crossing
 * (bench/clients/PROFILE.md). [session] is the client's cloned session handle. One call, one
 * thread; [close] releases it, once.
 */
internal class JniCall private constructor(private val handle: Long, private val session: ClonedHandle, baseUrl: String) : AutoCloseable {
    private var closed = false

    // the base URL as uniffi serialises a String, written into each step's arguments
    private val base = baseUrl.toByteArray(Charsets.UTF_8)

    private fun step(op: Int, size: ULong, write: (ByteBuffer) -> Unit): ByteBuffer {
        check(!closed) { "royaltykit: the call is closed" }
        val args = ByteBuffer.allocate(size.toInt())
        write(args)
        val answer = session.borrowing { s -> NativeFast.callStep(handle, s, op, args.array().copyOf(args.position())) }
            ?: throw IllegalStateException("royaltykit: the call's native step did not complete (see the log for a panic)")
        return jniAnswer(answer)
    }

    private fun ByteBuffer.putBase(): ByteBuffer = putInt(base.size).put(base)

    private fun advanced(buf: ByteBuffer): Advanced =
        if (buf.get() == 1.toByte()) Advanced(null, FfiConverterTypeWireRequest.read(buf), FfiConverterSequenceTypeMachineEvent.read(buf))
        else Advanced(FfiConverterTypeAdvance.read(buf))

    private fun ByteBuffer.putLevel(level: EventLevel?): ByteBuffer = apply { FfiConverterOptionalTypeEventLevel.write(level, this) }

    val driven = Driven(
        { now, level -> advanced(step(0, 17uL + base.size.toULong()) { it.putDouble(now).putLevel(level).putBase() }) },
        { outcome, now, level ->
            advanced(step(9, FfiConverterTypeStepOutcome.allocationSize(outcome) + 17uL + base.size.toULong()) {
                FfiConverterTypeStepOutcome.write(outcome, it)
                it.putDouble(now).putLevel(level).putBase()
            })
        },
        { status -> step(2, 8uL) { it.putLong(status) }.get() != 0.toByte() },
        { level -> FfiConverterSequenceTypeMachineEvent.read(step(5, 5uL) { it.putLevel(level) }) },
        { received, total -> step(6, 17uL) { it.putLong(received); FfiConverterOptionalLong.write(total, it) } },
    )

    override fun close() {
        if (!closed) {
            closed = true
            NativeFast.release(handle, 3)
        }
    }

    companion object {
        /**
         * The call through JNI, or null when the constructor's native call did not complete (the
         * caller then makes it through JNA); throws the core's [RoyaltyKitException] as the JNA
         * constructor does.
         */
        fun open(session: ClonedHandle, base: String, operationId: String, params: RequestParams, maxAttempts: Long?, maxElapsedSeconds: Double?, seed: ULong?): JniCall? {
            val args = ByteBuffer.allocate(
                (FfiConverterString.allocationSize(operationId) + FfiConverterTypeRequestParams.allocationSize(params) +
                    FfiConverterOptionalLong.allocationSize(maxAttempts) + FfiConverterOptionalDouble.allocationSize(maxElapsedSeconds) +
                    FfiConverterOptionalULong.allocationSize(seed)).toInt(),
            )
            FfiConverterString.write(operationId, args)
            FfiConverterTypeRequestParams.write(params, args)
            FfiConverterOptionalLong.write(maxAttempts, args)
            FfiConverterOptionalDouble.write(maxElapsedSeconds, args)
            FfiConverterOptionalULong.write(seed, args)
            val answer = NativeFast.callOpen(args.array().copyOf(args.position())) ?: return null
            return JniCall(jniAnswer(answer).getLong(), session, base)
        }
    }
}

/** Where the clients' events go by default: `java.util.logging`, logger `dev.royaltykit`, at the
 * event's own level (the core's: `debug` → FINER for the sends, responses and ends, `info` → FINE
 * for waits, retries, token refreshes, polls and a download's `progress`, `warning` → WARNING
 * for a failed call and a deprecated operation's `notice`). */
private val clientLog: java.util.logging.Logger = java.util.logging.Logger.getLogger("dev.royaltykit")

/** The default `onEvent` ([logEvent]), one object, so a client knows when only the log listens. */
internal object LogEvents : (MachineEvent) -> Unit {
    override fun invoke(e: MachineEvent) = logEvent(e)
}

/** The default `onEvent`: one log line per event. */
fun logEvent(e: MachineEvent) {
    val level = when (e.level) {
        "debug" -> java.util.logging.Level.FINER
        "warning" -> java.util.logging.Level.WARNING
        else -> java.util.logging.Level.FINE
    }
    if (clientLog.isLoggable(level)) clientLog.log(level, e.message)
}

/**
 * Deprecated name of [RoyaltyKitException.ReconcileRequired] (code `reconcile_required`), the
 * core's error family, as in Python and Node: kept for one release.
 */
@Deprecated(
    "The core's reconcile_required family: RoyaltyKitException.ReconcileRequired",
    ReplaceWith("RoyaltyKitException.ReconcileRequired", "dev.royaltykit.types.RoyaltyKitException"),
)
typealias ReconcileRequiredException = RoyaltyKitException.ReconcileRequired

/**
 * Deprecated name of [RoyaltyKitException.CallFailed] (code `call_failed`), the core's error
 * family, as in Python and Node: kept for one release. Its `status` is now a `UShort?`, and its
 * text is `detail` (as on every `RoyaltyKitException`).
 */
@Deprecated(
    "The core's call_failed family: RoyaltyKitException.CallFailed",
    ReplaceWith("RoyaltyKitException.CallFailed", "dev.royaltykit.types.RoyaltyKitException"),
)
typealias CallFailedException = RoyaltyKitException.CallFailed

/**
 * [ReportsClient.runExport] was interrupted (code `export_interrupted`): its thread was
 * interrupted (Ctrl-C's shutdown hook, `Thread.interrupt()`) or its coroutine cancelled. The
 * temporary file beside `to` is gone. [exportId] is the export the service named (null when not
 * yet named: a create may have been sent); [checkpoint] is the job saved at the moment of the
 * interruption (a request in flight counts as a lost connection): give it to
 * `runExport(resume = checkpoint)` to finish the job, in this process or another, in any
 * language's client; that never creates a second export. [cause] is the original interruption.
 * A `java.util.concurrent.CancellationException`, so coroutines treat it as a cancellation; the
 * thread's interrupt flag is set again when it is thrown.
 */
class ExportInterruptedException(
    val exportId: String?,
    val checkpoint: String,
    cause: Throwable?,
) : java.util.concurrent.CancellationException(exportInterruptedMessage(exportId)) {
    init {
        if (cause != null) initCause(cause)
    }

    /** Always `export_interrupted`, as in Python and Node. */
    val code: String get() = "export_interrupted"

    override fun toString(): String = "ExportInterruptedException: $message"
}

/**
 * A seed given as a Long, as the core's u64: a negative one is refused
 * (`IllegalArgumentException`), never wrapped into another seed, as Python and Node refuse it.
 */
internal fun seedOf(seed: Long): ULong {
    require(seed >= 0) { "seed must be a non-negative Long (0 to 2^63-1), not $seed" }
    return seed.toULong()
}

/** Whether [e] (or what caused it) is a thread interrupt, not a timeout. */
internal fun interruption(e: Throwable): Boolean = generateSequence(e) { it.cause }.take(8).any {
    it is InterruptedException || it is java.nio.channels.ClosedByInterruptException ||
        (it is java.io.InterruptedIOException && it !is java.net.SocketTimeoutException && it.message != "timeout")
}

private fun seconds(d: Duration): Double = d.seconds + d.nano / 1e9
private fun duration(seconds: Double): Duration = Duration.ofNanos(Math.round(seconds * 1e9))

/**
 * A transport's exception as one line: its class and what the deepest exception under it says
 * (`ConnectException: Connection refused`).
 */
internal fun describeFailure(e: Throwable): String {
    var text = e.message
    var refused = e is java.net.ConnectException
    var inner = e.cause
    var depth = 0
    while (inner != null && inner !== e && depth < 8) {
        if (!inner.message.isNullOrEmpty()) text = inner.message
        refused = refused || inner is java.net.ConnectException
        inner = inner.cause
        depth++
    }
    // java.net.http reports a refused connection as a ConnectException without a message.
    if (text.isNullOrEmpty() && refused) text = "Connection refused"
    return if (text.isNullOrEmpty()) e.javaClass.simpleName else "${e.javaClass.simpleName}: $text"
}

/** A whole 2xx response ([ApiClient.requestRaw]): its status, its headers as received (in order,
 * repeated names kept), its body. */
class RawResponse(val status: Int, val headers: List<Pair<String, String>>, val body: ByteArray) {
    /** The first value of header [name] (any case), or null. */
    fun header(name: String): String? = headers.firstOrNull { it.first.equals(name, ignoreCase = true) }?.second
    override fun toString(): String = "RawResponse(status=$status, ${body.size} bytes)"
}

/** A finished export: its id, its size, where it was written (when `to` was given) or its bytes. */
class ExportResult(val exportId: String, val size: Long, val path: Path?, val data: ByteArray?)

/**
 * What both APIs' clients share: performing a machine's steps until its end, every machine on the
 * client's [session]. Thread-safe: calls from many threads share one token and make one token
 * exchange at a time (the others wait for it). Blocking: call it off the main thread.
 */
abstract class ApiClient internal constructor(
    internal val transport: HttpTransport,
    baseUrl: String,
    /**
     * What the client's calls share: the token, when to refresh it, the one exchange in flight and
     * the rate budget. Give it to another client of the same credentials (`session = a.session`)
     * so that they share them too.
     */
    val session: Session,
    timeout: Duration?,
    connectTimeout: Duration?,
    readTimeout: Duration?,
    internal val clock: () -> Double,
    internal val sleep: (Double) -> Unit,
    internal val allowInsecureHttp: Boolean,
    /** The most attempts of each request (null: the core's default, 5). */
    val maxAttempts: Long?,
    /** The most seconds of each request's retries (null: the core's default, 300). */
    val maxElapsedSeconds: Double?,
    /**
     * Called with each of the machines' events, in order (the core's [MachineEvent]: each send
     * and response, each retry with its rule and wait, token refreshes, rate-budget waits, polls,
     * a download's `progress` (`receivedBytes` of `totalBytes`, at each tenth of the body, each
     * MiB when its length is unknown, and when whole: given while the body arrives, on the
     * calling thread), a deprecated operation's `notice` (once per operation per [session]), how
     * each call ended); never a token, a credential, a header or a body. Default [logEvent].
     */
    internal val onEvent: (MachineEvent) -> Unit,
    /**
     * Where the client reports each logical operation for tracing (null: nowhere): one
     * [Telemetry.operation] per `request`/`requestRaw` (named by the operation id) and per
     * `runExport` (`runExport`), fed every event of it. `dev.royaltykit.otel.OpenTelemetryTelemetry`
     * (artifact royaltykit-otel) makes OpenTelemetry spans of them.
     */
    val telemetry: Telemetry?,
    /** The shortest wait between two reads of a pending export, in seconds (null: the core's backoff). */
    val minPollIntervalSeconds: Double?,
    /** The longest wait between two reads of a pending export, in seconds (null: the core's, 60). */
    val maxPollIntervalSeconds: Double?,
    /**
     * The fleet the client's process shares its token and rate budget with, through Redis (null:
     * none, the process keeps its own): then [session] is a session of the fleet, each request is
     * reserved in the fleet's Redis before it is sent, and a token is obtained through the fleet
     * (one exchange for the fleet).
     */
    val fleet: RedisFleet?,
    /**
     * The source of each machine's seed (the jitter of its waits and the idempotency keys it
     * makes), asked once per call, token exchange, fleet refresh and export job; null: the OS
     * RNG. Give a fixed one to replay a run exactly (tests, simulations), as Python's and Node's
     * `seed`.
     */
    val seed: (() -> Long)?,
) {
    /**
     * The next machine's seed: [seed]'s, or null (the OS RNG). A negative one is refused
     * (`IllegalArgumentException`), as Python and Node refuse a seed below 0.
     */
    internal fun nextSeed(): ULong? = seed?.invoke()?.let(::seedOf)

    // A wrong base URL fails here, before any request, not after a minute of retries.
    internal val base = checkBaseUrl(baseUrl, allowInsecureHttp)

    // The session's handle for the calls made through JNI ([JniCall]), cloned once (one JNA call)
    // and released when the client is collected; null when JNI is not in use (Android,
    // `-Droyaltykit.jni=false`): each call is then a [Call] through JNA, with the same results.
    private val fastSession: ClonedHandle? = if (NativeFast.available) ClonedHandle(session.uniffiCloneHandle(), 2) else null

    /** [use] with a new call's machine: through JNI when it is in use, else a [Call] (JNA). */
    private inline fun <T> withCall(operationId: String, params: RequestParams, use: (Driven) -> T): T {
        val seed = nextSeed()
        fastSession?.let { s -> JniCall.open(s, base, operationId, params, maxAttempts, maxElapsedSeconds, seed)?.use { return use(it.driven) } }
        return Call(operationId, params, maxAttempts, maxElapsedSeconds, seed).use { use(it.driven(session)) }
    }

    init {
        require(timeout == null || readTimeout == null) {
            "give readTimeout or its alias timeout, not both (timeout is the read timeout)"
        }
    }

    // Each given timeout is checked (invalid_argument naming connect_timeout or read_timeout);
    // the ones not given are the core's defaults.
    private val timeouts = clientTimeouts(connectTimeout?.let(::seconds), (readTimeout ?: timeout)?.let(::seconds))

    /** How long to wait to make a connection (TCP and TLS): `connectTimeout`, else the core's
     * default (10 s). A [JavaHttpTransport] over your own `HttpClient` keeps that client's. */
    val connectTimeout: Duration = duration(timeouts.connectSeconds)

    /** How long to wait for a response's headers once the request is sent, then between two
     * pieces of its body (an idle bound: a large artifact that keeps arriving is never cut off):
     * `readTimeout` (or its alias `timeout`), else the core's default (30 s). */
    val readTimeout: Duration = duration(timeouts.readSeconds)

    /** The read timeout ([readTimeout]), under its older name. */
    val timeout: Duration get() = readTimeout

    /** What the calls are sent through: [transport] configured with the client's timeouts. */
    internal val sender: HttpTransport =
        (transport as? ConfigurableTransport)?.configured(this.connectTimeout, this.readTimeout) ?: transport

    /**
     * This client with other bounds for the calls made through the copy: the copy shares the
     * transport, the credentials, the telemetry and the [session] (the token, its one exchange,
     * the budget). `client.withOptions(maxAttempts = 2).request("listPlatformExports")`.
     * [maxAttempts], [maxElapsedSeconds] and the poll bounds: null is the core's default. The
     * timeouts: null keeps this client's; [timeout] is the read timeout's alias (giving both it and
     * [readTimeout] is an `IllegalArgumentException`); each is checked as at construction.
     * The poll bounds apply to `runExport` (a [ReportsClient]'s).
     */
    abstract fun withOptions(
        maxAttempts: Long? = this.maxAttempts,
        maxElapsedSeconds: Double? = this.maxElapsedSeconds,
        timeout: Duration? = null,
        connectTimeout: Duration? = null,
        readTimeout: Duration? = null,
        minPollIntervalSeconds: Double? = this.minPollIntervalSeconds,
        maxPollIntervalSeconds: Double? = this.maxPollIntervalSeconds,
    ): ApiClient

    /** The read timeout of a copy: the one given (not both), else this client's. */
    internal fun readOf(timeout: Duration?, readTimeout: Duration?): Duration {
        require(timeout == null || readTimeout == null) {
            "give readTimeout or its alias timeout, not both (timeout is the read timeout)"
        }
        return readTimeout ?: timeout ?: this.readTimeout
    }

    internal abstract fun tokenRequest(): RequestDescriptor

    /** The API whose token the client obtains, and the tenant a reporting token is bound to (a fleet's token record names both). */
    internal abstract val tokenApi: Api
    internal abstract val tokenTenant: String?

    /** Parses the exchange's response: the token with its own refresh time (null: never due). */
    internal abstract fun parseToken(status: Long, headers: Map<String, String>, body: ByteArray): Pair<BearerToken, Double?>

    /** Runs the token exchange (a [Call] of its own, with the client's retries): the token obtained and its refresh time. */
    private fun exchange(scope: OperationScope?): Pair<BearerToken, Double?> {
        val done = Call.exchange(tokenRequest(), maxAttempts, maxElapsedSeconds, nextSeed()).use { c -> drive(c.driven(session), "token exchange", null, scope) }
        return parseToken(done.status.toLong(), done.headers.associate { it.name to it.value }, done.body)
    }

    /**
     * Leads the session's token exchange (`RefreshToken`): stores the token (on a fleet's session:
     * the fleet's, through [fleetToken]), or reports the failure (`exchangeFailed`: the calls that
     * waited for it fail too, then the exchange's error is thrown) or the cancellation
     * (`abandonExchange`: an interrupt, a coroutine's cancellation, a JVM `Error`; another call
     * leads a new one), and wakes the calls waiting on the session.
     */
    private fun exchangeToken(scope: OperationScope?) {
        var settled = false
        // The session's exchange ended (decided once): [thrown] null when the token is stored;
        // abandoned when cancelled; failed otherwise, unless a fleet's refresh reported its
        // exchange's failure already (FleetTokenStep.Failed). The waiting calls are woken.
        fun settle(thrown: Throwable?) {
            if (settled) return
            settled = true
            try {
                when {
                    thrown == null -> Unit
                    cancelled(thrown) -> session.abandonExchange()
                    thrown is FleetExchangeFailed -> Unit
                    else -> session.exchangeFailed(thrown.message ?: thrown.javaClass.simpleName)
                }
            } finally {
                session.wakeWaiters()
            }
        }
        val thrown = try {
            if (fleet != null) {
                fleetToken(fleet, scope, ::settle)
            } else {
                val (token, refreshAt) = exchange(scope)
                token.use { session.storeToken(it, refreshAt) }
            }
            null
        } catch (e: Throwable) {
            e
        }
        settle(thrown)
        if (thrown is FleetExchangeFailed) throw thrown.cause!!
        if (thrown != null) throw thrown
    }

    /** The exchange of a fleet's refresh failed with [cause], and the refresh reported it ([FleetTokenStep.Failed]). */
    private class FleetExchangeFailed(cause: Throwable) : RuntimeException(cause)

    /**
     * Obtains the fleet's token for [session] ([FleetToken]: the core decides whether to adopt
     * the token another process published, to exchange, or to wait for the process exchanging):
     * sends its Redis commands through [f], runs the exchange when it says so, sleeps when it
     * waits. Returns once the session holds the token; throws the exchange's own error (wrapped in
     * [FleetExchangeFailed]) when it failed, and whatever interrupted it. Interrupted (or ended by
     * any other throwable) while this process holds the fleet's exchange lock, it releases the
     * lock ([releaseLock]), so the fleet's other processes need not wait out its lease; it
     * [settle]s the session's exchange before that (this process's waiting calls go on at once,
     * however long Redis takes), as Python and Node do.
     */
    private fun fleetToken(f: RedisFleet, scope: OperationScope?, settle: (Throwable) -> Unit) {
        var refresh: FleetToken? = null
        try {
            val ft = FleetToken(session, tokenApi, tokenTenant, nextSeed(), clock())
            refresh = ft
            fleetSteps(f, ft, scope)
        } catch (e: Throwable) {
            settle(e)
            refresh?.let { releaseLock(f, it, e) }
            throw e
        } finally {
            refresh?.close()
        }
    }

    /**
     * Sends [ft]'s `abandonCommand` (the unlock of the fleet's exchange lock while its exchange
     * runs; null: no lock held) through [f], best effort: its failure is added to [thrown] as
     * suppressed, never thrown. The thread's interrupt is set aside for the send (a Redis client
     * may refuse to start a command on an interrupted thread) and set again after it.
     */
    private fun releaseLock(f: RedisFleet, ft: FleetToken, thrown: Throwable) {
        val unlock = try {
            ft.abandonCommand()
        } catch (e: Throwable) {
            thrown.addSuppressed(e)
            null
        } ?: return
        val interrupted = Thread.interrupted()
        try {
            unlock.use { f.execute(it.args()) }
        } catch (e: Throwable) {
            thrown.addSuppressed(e)
        } finally {
            if (interrupted) Thread.currentThread().interrupt()
        }
    }

    /** [fleetToken]'s loop: [ft]'s steps performed until `Done`, or `Failed` thrown. */
    private fun fleetSteps(f: RedisFleet, ft: FleetToken, scope: OperationScope?) {
        var failure: Throwable? = null
        var step = ft.next()
        while (true) {
            if (Thread.interrupted()) throw InterruptedException("the token refresh was interrupted")
            step = when (step) {
                is FleetTokenStep.Command -> when (val o = step.command.let { c -> redis { c.use { f.execute(it.args()) } } }) {
                    is StepOutcome.Reply -> ft.replied(o.reply, session, clock())
                    else -> ft.redisFailed(session)
                }
                is FleetTokenStep.Exchange -> {
                    val obtained = runCatching { exchange(scope) }.onFailure { if (cancelled(it)) throw it; failure = it }.getOrNull()
                    if (obtained == null) ft.exchangeFailed(failure!!.let { it.message ?: it.javaClass.simpleName })
                    else obtained.first.use { ft.exchanged(it, obtained.second, clock()) }
                }
                is FleetTokenStep.Wait -> {
                    sleep(step.seconds)
                    ft.waited()
                }
                is FleetTokenStep.Done -> return
                is FleetTokenStep.Failed -> throw FleetExchangeFailed(failure ?: IllegalStateException(step.reason))
            }
        }
    }

    /**
     * (Fleet.) A request's reservation in the fleet's budget: [command] sent through the fleet's
     * Redis, its reply, or no response when Redis cannot be reached (the machine waits a second
     * and asks again). An interrupt propagates.
     */
    private fun reserve(command: List<String>): StepOutcome {
        val f = fleet ?: throw IllegalStateException("a fleet's session needs its RedisFleet (give the client fleet = ...)")
        return redis { f.execute(command) }
    }

    /** A command to the fleet's Redis ([send]): its reply, or no response when Redis cannot be reached. An interrupt propagates. */
    private fun redis(send: () -> String?): StepOutcome = try {
        StepOutcome.Reply(send())
    } catch (e: Exception) {
        if (cancelled(e)) throw e
        StepOutcome.NoResponse(TransportFailure.CONNECT_FAILED)
    }

    private fun cancelled(e: Throwable): Boolean =
        e is InterruptedException || e is java.util.concurrent.CancellationException || e is Error ||
            e is java.nio.channels.ClosedByInterruptException || Thread.currentThread().isInterrupted

    /** Runs [body] as the logical operation [name], reported to [telemetry] when there is one. */
    internal inline fun <T> traced(name: String, body: (OperationScope?) -> T): T {
        var scope: OperationScope? = null
        telemetry?.let { t -> guarded("operation") { scope = t.operation(name, base) } }
        val result = try {
            body(scope)
        } catch (e: Throwable) {
            scope?.let { s -> guarded("end") { s.end(e) } }
            throw e
        }
        scope?.let { s -> guarded("end") { s.end(null) } }
        return result
    }

    /**
     * The lowest level of event anyone listens to: all (null) for the caller's own `onEvent` or a
     * telemetry [scope]; for the default `onEvent` ([logEvent]), what the `dev.royaltykit`
     * logger shows now.
     */
    internal fun eventLevel(scope: OperationScope?): EventLevel? = when {
        scope != null || onEvent !== LogEvents -> null
        clientLog.isLoggable(java.util.logging.Level.FINER) -> null
        clientLog.isLoggable(java.util.logging.Level.FINE) -> EventLevel.INFO
        else -> EventLevel.WARNING
    }

    /** The machine's events to [onEvent] and to the operation's [scope]. */
    private fun emit(events: List<MachineEvent>, scope: OperationScope?) {
        for (e in events) {
            onEvent(e)
            if (scope != null) guarded("event") { scope.event(e) }
        }
    }

    /**
     * Performs [m]'s steps to its end; a body the machine streams goes into [sink]; [checkpoint]
     * runs after each step is given, before it is performed (an export job's gives the
     * checkpoint the job has: the core's rule, before each request and each pause, so a
     * Retry-After or backoff the job holds survives the process).
     */
    private fun drive(m: Driven, operationId: String, sink: ArtifactSink?, scope: OperationScope?,
                      checkpoint: (() -> Unit)? = null): CallStep.Done {
        val target = target(m, sink, scope)
        var failed: HttpOutcome.Failed? = null // the last send's when it got no response: the cause of the exception the call ends in
        var given: Advanced? = null // the next step when the outcome's report gave it (one call into the library)
        while (true) {
            if (Thread.interrupted()) throw InterruptedException("the call was interrupted") // a cancelled coroutine, whatever its transport made of it
            val advanced = given ?: m.next(clock(), eventLevel(scope))
            given = null
            emit(advanced.events, scope)
            checkpoint?.invoke()
            when (val s = advanced.step) {
                null, is CallStep.Send -> {
                    val o = send(advanced.wire ?: (s as CallStep.Send).request.wire(base), target)
                    failed = o as? HttpOutcome.Failed
                    val interrupted = Thread.interrupted() // a failure then is the interrupt's own, never reported ([interrupted])
                    if (!interrupted || failed == null) given = m.report(o.outcome(), clock(), eventLevel(scope))
                    if (interrupted) throw interrupted(given, scope, failed)
                }
                is CallStep.Reserve -> given = m.report(reserve(s.command), clock(), eventLevel(scope))
                is CallStep.Wait -> sleep(s.seconds)
                is CallStep.RefreshToken -> exchangeToken(scope)
                is CallStep.AwaitToken -> session.awaitToken(s.version, s.seconds)
                is CallStep.Done -> return s
                // the core's error: ReconcileRequired, CallFailed, … (the transport's last error, if the last send ended in one, its cause)
                is CallStep.Reconcile, is CallStep.Fail -> throw callStepError(s, operationId, base, failed?.cause?.let(::describeFailure))
                    .apply { failed?.cause?.let(::initCause) }
            }
        }
    }

    /**
     * Where a response's body goes: read whole, or into [sink] when the machine streams it, its
     * progress events delivered as the pieces arrive (those anyone listens to then, [eventLevel]).
     */
    private fun target(m: Driven, sink: ArtifactSink?, scope: OperationScope?): BodyTarget =
        if (sink == null) Whole else Streamed(m, sink) { emit(m.events(eventLevel(scope)), scope) }

    /** [r] sent through the client's transport, its body to [target]. */
    private fun send(r: WireRequest, target: BodyTarget): HttpOutcome =
        sender.send(HttpRequest(r.method, r.url, r.headers.map { it.name to it.value }, r.body), readTimeout, target)

    /**
     * The interrupt of a call during its send. A response that arrived was given to the machine
     * (a create that was answered is known, as in Python and Node) and its own events are
     * delivered first (a notice comes once); a failure is the interrupt's own and was not, so the
     * request stays in flight (a lost connection, if the job is resumed).
     */
    private fun interrupted(given: Advanced?, scope: OperationScope?, failed: HttpOutcome.Failed?): InterruptedException {
        given?.let { emit(it.events, scope) }
        return InterruptedException("the call was interrupted").apply { failed?.cause?.let(::initCause) }
    }

    /**
     * Performs one operation with [params] (the client adds the token and, for the reporting API,
     * the tenant): the 2xx body (JSON text or an artifact's bytes; empty for none). Throws
     * `RoyaltyKitException.Api` for an error response retrying cannot fix,
     * [RoyaltyKitException.ReconcileRequired] when a request may have been applied, [RoyaltyKitException.CallFailed]
     * when the attempts ran out without a response (rule `redirect` for a 3xx: redirects are
     * never followed; `token_exchange_failed` when the exchange this call waited for failed).
     */
    @Throws(RoyaltyKitException::class)
    fun request(operationId: String, params: RequestParams): ByteArray = done(operationId, params).body

    /** [request], returning the whole 2xx response: status, headers as received, body. */
    @Throws(RoyaltyKitException::class)
    fun requestRaw(operationId: String, params: RequestParams): RawResponse =
        done(operationId, params).let { d -> RawResponse(d.status.toInt(), d.headers.map { it.name to it.value }, d.body) }

    private fun done(operationId: String, params: RequestParams): CallStep.Done = doneThen(operationId, params) { it }

    /**
     * One call of [operationId] as [request] makes it, its 2xx response handed to [then] inside the
     * operation's trace: a refusal of [then] ends the operation with that error.
     */
    internal fun <T> doneThen(operationId: String, params: RequestParams, then: (CallStep.Done) -> T): T = traced(operationId) { scope ->
        then(withCall(operationId, defaults(params)) { m -> drive(m, operationId, null, scope) })
    }

    /**
     * [request] with Kotlin's own types: path and query values of any type (their `toString()`;
     * a null query value is left out), the body as JSON text.
     */
    @JvmOverloads
    @Throws(RoyaltyKitException::class)
    fun request(
        operationId: String,
        path: Map<String, Any> = emptyMap(),
        query: Map<String, Any?> = emptyMap(),
        body: String? = null,
        requestId: String? = null,
    ): ByteArray = request(operationId, params(path, query).copy(body = body?.toByteArray(), requestId = requestId))

    /** Path and query values of any type as [RequestParams]: their `toString()`, a null query value left out. */
    private fun params(path: Map<String, Any>, query: Map<String, Any?>) = RequestParams(
        path = path.mapValues { it.value.toString() },
        query = query.mapNotNull { (k, v) -> v?.let { Param(k, it.toString()) } },
    )

    /**
     * Every item of the list operation [operationId], page after page, as a lazy [Sequence]: a
     * page is requested only when the items before it have been taken, so `take(n)` or an early
     * `break` sends no further request. Each item is its JSON text exactly as the service sent it
     * (a `ByteArray`, as [request] returns a body: parse it with your JSON library). How the
     * operation pages (a cursor, numbered pages, one page), where a page's items are and when the
     * list ends are the core's ([Pages]).
     *
     * [params] are sent with every page (path, tenant, user); their query is where the walk starts
     * (a `cursor`, `page`, `limit` or `size` in it is the starting point or the page size). The
     * walk reads at most [maxPages] pages and gives at most [maxItems] items (null: no bound),
     * asking for [pageSize] items a page (null: the query's, else the list's largest, else the
     * service's default). Each page is one [request] — the client's session (token, rate budget),
     * retries, events and telemetry, one operation per page — and is blocking, as [request] is:
     * take the items off the main thread.
     *
     * Wrong arguments (an unknown operation or one that lists nothing, a bound below 1, a page size
     * out of range or differing from the query's) throw `RoyaltyKitException.InvalidArgument`
     * here, before any request. While iterating, a page's request throws as [request] does, and a
     * list that cannot be read on throws `RoyaltyKitException.Pagination` (code `page_unreadable`,
     * `next_page_unknown` or `list_cursor_repeated`) after the items before it were given. Each
     * iteration of the sequence walks the list again from the start.
     */
    @JvmOverloads
    @Throws(RoyaltyKitException::class)
    fun paginate(
        operationId: String,
        params: RequestParams,
        maxPages: Int? = null,
        maxItems: Long? = null,
        pageSize: Int? = null,
    ): Sequence<ByteArray> {
        val walk = { Pages(operationId, params.query, maxPages?.toLong(), maxItems, pageSize?.toLong()) }
        walk().close() // the arguments are checked now, before any request
        return sequence {
            walk().use { pages ->
                while (true) {
                    when (val step = pages.next()) {
                        is PagesStep.Fetch -> pages.pageItems(request(operationId, params.copy(query = step.query)))?.let { yieldAll(it) }
                        is PagesStep.Done -> return@sequence
                        is PagesStep.Fail -> throw step.error
                    }
                }
            }
        }
    }

    /**
     * [paginate] with Kotlin's own types, as the matching [request]: path and query values of any
     * type (their `toString()`; a null query value is left out).
     */
    @JvmOverloads
    @Throws(RoyaltyKitException::class)
    fun paginate(
        operationId: String,
        path: Map<String, Any> = emptyMap(),
        query: Map<String, Any?> = emptyMap(),
        maxPages: Int? = null,
        maxItems: Long? = null,
        pageSize: Int? = null,
    ): Sequence<ByteArray> = paginate(operationId, params(path, query), maxPages, maxItems, pageSize)

    internal open fun defaults(params: RequestParams): RequestParams = params

    /**
     * Runs [job] on the client's session; its artifact goes to [to] (or memory). [onCheckpoint]
     * gets `job.save()` before each of the job's sends and pauses when it changed; an interruption is an
     * [ExportInterruptedException] (the temporary file removed, the interrupt flag set again).
     */
    internal fun runJob(
        job: ExportJob,
        to: Path?,
        onProgress: ((Long, Long?) -> Unit)?,
        onCheckpoint: ((String) -> Unit)?,
        scope: OperationScope?,
    ): ExportResult {
        val checkpoint = onCheckpoint?.let { give -> { job.checkpoint()?.let(give); Unit } }
        try {
            return ArtifactSink(to, onProgress).use { sink ->
                val done = drive(job.driven(session), "export job", sink, scope, checkpoint)
                val data = sink.finish()
                ExportResult(done.exportId ?: "", sink.length, to, data.takeIf { to == null })
            }
        } catch (e: Throwable) {
            if (e is ExportInterruptedException || !(interruption(e) || Thread.currentThread().isInterrupted)) throw e
            // The sink is closed (its temporary file removed); the job is as it was when interrupted.
            val interrupted = ExportInterruptedException(job.exportId(), job.save(), e)
            Thread.currentThread().interrupt()
            throw interrupted
        }
    }
}

/**
 * The session of a client given [fleet]: [given] when it is a session of that fleet (another
 * client's, `session = other.session`), else a new session of the fleet over [budget] (the default
 * session, or one of no fleet, is not used: the fleet's Redis holds what it would). Without a
 * fleet, [given]; a fleet's session given without its fleet is an `IllegalArgumentException`
 * (nothing could send its Redis commands).
 */
private fun sessionOf(fleet: RedisFleet?, given: Session, budget: RateBudget?): Session {
    val of = given.fleet()?.use { it.prefix() }
    if (fleet == null) {
        require(of == null) { "the session is a fleet's (prefix $of): give the client its fleet = RedisFleet(redis, prefix)" }
        return given
    }
    if (of == null) return fleet.session(budget)
    require(of == fleet.prefix) { "the session is another fleet's (prefix $of, the client's fleet: ${fleet.prefix})" }
    return given
}

private fun systemClock(): Double = System.currentTimeMillis() / 1000.0
private fun threadSleep(seconds: Double) = Thread.sleep((seconds * 1000).toLong().coerceAtLeast(0))

/**
 * The reporting API's machine surface over [transport]: obtains and refreshes the bearer token
 * (client credentials; one exchange at a time however many threads call), retries as the specs
 * say, honours `Retry-After`, paces by [budget] when given (the reporting API shows no rate
 * limits). [session]: what the client's calls share (default: a new one over [budget]; give the
 * clients of one client id and tenant one session). [clock] and [sleep] are for tests.
 * [baseUrl] is the API's origin, checked here: `https` (plain `http` only to a loopback host, or
 * anywhere with [allowInsecureHttp], since the credentials would travel in clear), a host, no
 * user-info, query, fragment or API prefix; a mistake throws `RoyaltyKitException.InvalidArgument`
 * before any request.
 *
 * Timeouts: [connectTimeout] bounds making the connection (TCP and TLS), [readTimeout] the wait for
 * a response's headers once sent, then each wait between two pieces of its body; each null is the
 * core's default (10 s and 30 s), each given one is checked here (`InvalidArgument` naming
 * `connect_timeout` or `read_timeout`). [timeout] is the read timeout's older name: giving both it
 * and [readTimeout] is an `IllegalArgumentException`. A timeout is a transport failure the core
 * retries like any other (`CONNECT_FAILED` for the connection, `TIMEOUT` for the read).
 * [minPollIntervalSeconds] / [maxPollIntervalSeconds] clamp each wait between two reads of a
 * pending export (`runExport` may override them). [telemetry]: see [ApiClient.telemetry].
 * [fleet]: processes of one client id and tenant sharing one token (and [budget], when given)
 * through Redis, as [EnterpriseClient]'s `fleet`.
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
    timeout: Duration? = null,
    clock: () -> Double = ::systemClock,
    sleep: (Double) -> Unit = ::threadSleep,
    session: Session = Session(budget),
    allowInsecureHttp: Boolean = false,
    maxAttempts: Long? = null,
    maxElapsedSeconds: Double? = null,
    onEvent: (MachineEvent) -> Unit = LogEvents,
    connectTimeout: Duration? = null,
    readTimeout: Duration? = null,
    minPollIntervalSeconds: Double? = null,
    maxPollIntervalSeconds: Double? = null,
    telemetry: Telemetry? = null,
    fleet: RedisFleet? = null,
    seed: (() -> Long)? = null,
) : ApiClient(
    transport, baseUrl, sessionOf(fleet, session, budget), timeout, connectTimeout, readTimeout, clock, sleep, allowInsecureHttp,
    maxAttempts, maxElapsedSeconds, onEvent, telemetry, minPollIntervalSeconds, maxPollIntervalSeconds, fleet, seed,
) {
    override fun tokenRequest(): RequestDescriptor = buildTokenRequest(clientId, clientSecret, tenantId, scopes)

    override fun withOptions(
        maxAttempts: Long?,
        maxElapsedSeconds: Double?,
        timeout: Duration?,
        connectTimeout: Duration?,
        readTimeout: Duration?,
        minPollIntervalSeconds: Double?,
        maxPollIntervalSeconds: Double?,
    ): ReportsClient = ReportsClient(
        transport, base, clientId, clientSecret, tenantId, scopes, idempotencyHeader, null, null, clock, sleep, session,
        allowInsecureHttp, maxAttempts, maxElapsedSeconds, onEvent, connectTimeout ?: this.connectTimeout,
        readOf(timeout, readTimeout), minPollIntervalSeconds, maxPollIntervalSeconds, telemetry, fleet, seed,
    )

    override val tokenApi: Api get() = Api.REPORTS
    override val tokenTenant: String? get() = tenantId

    override fun parseToken(status: Long, headers: Map<String, String>, body: ByteArray): Pair<BearerToken, Double?> =
        parseTokenResponse(status, headers, body, tenantId, scopes).use { it.bearer() to it.refreshAt().toDouble() }

    override fun defaults(params: RequestParams): RequestParams =
        params.copy(tenantId = params.tenantId ?: tenantId, idempotencyHeader = params.idempotencyHeader ?: idempotencyHeader)

    override fun toString(): String = "ReportsClient(tenantId=$tenantId)"

    /**
     * Creates an export from [body] (the CreateExportRequest as JSON), waits for it and downloads the
     * complete artifact: to [to] (streamed to a temporary file beside it as it arrives, moved into
     * place when whole: never held in memory), else into [ExportResult.data]. [onProgress] is called
     * with the bytes received so far and the announced length (null when unknown) after each piece
     * of the body (a piece read again starts from 0); `onEvent` and the telemetry get the core's
     * fewer `progress` events (each tenth of the body, and when whole). A create that may have
     * been applied is looked up through every page of the list (looking again after a grace), never
     * sent twice; when the lookup cannot tell, [RoyaltyKitException.ReconcileRequired] carries the ids that may
     * be the job's own. Polling stops after [maxPolls] reads or [maxPollSeconds] (the core's
     * defaults when null); each wait between two reads is clamped into [minPollIntervalSeconds] ..
     * [maxPollIntervalSeconds] (default: the client's).
     *
     * Checkpoints: [onCheckpoint] is called with the job saved as portable JSON text (no token)
     * before each of the job's requests goes out and before each of its pauses (a poll interval,
     * a backoff, a Retry-After), whenever it changed since the last one given (or the one resumed
     * from; the core's `ExportJob.checkpoint()` rule); persist it. A job
     * resumed during a pause waits out the rest of it. [resume] finishes the job of such a checkpoint (from any language's client) instead of
     * starting one: give exactly one of [body] and [resume] (else `IllegalArgumentException`). A
     * resumed job keeps what it was saved with (body, request id, poll and attempt bounds), so
     * giving [requestId], [maxPolls], [maxPollSeconds], [minPollIntervalSeconds] or
     * [maxPollIntervalSeconds] with [resume] is an `IllegalArgumentException` (as in Python and
     * Node); the client's own poll bounds apply to new jobs only. A request that was in flight counts as a lost
     * connection, so a create is sent again only with its idempotency key, else looked up first.
     *
     * Interruption (the thread interrupted, e.g. by a shutdown hook on Ctrl-C, or the coroutine
     * of `runExportAsync` cancelled) throws [ExportInterruptedException] with the export id and the
     * checkpoint to resume from; the temporary file is removed.
     */
    @JvmOverloads
    @Throws(RoyaltyKitException::class)
    fun runExport(
        body: String? = null,
        to: Path? = null,
        requestId: String? = null,
        maxPolls: Long? = null,
        maxPollSeconds: Double? = null,
        onProgress: ((Long, Long?) -> Unit)? = null,
        onCheckpoint: ((String) -> Unit)? = null,
        resume: String? = null,
        minPollIntervalSeconds: Double? = null,
        maxPollIntervalSeconds: Double? = null,
    ): ExportResult {
        require(body != null || resume != null) {
            "give body (the CreateExportRequest of a new export) or resume (a checkpoint from onCheckpoint or ExportInterruptedException)"
        }
        require(body == null || resume == null) {
            "give body or resume, not both: a resumed job sends the body it was saved with"
        }
        if (resume != null) {
            val shaping = listOf(
                "requestId" to requestId, "maxPolls" to maxPolls, "maxPollSeconds" to maxPollSeconds,
                "minPollIntervalSeconds" to minPollIntervalSeconds, "maxPollIntervalSeconds" to maxPollIntervalSeconds,
            ).filter { it.second != null }.map { it.first }
            require(shaping.isEmpty()) {
                "${shaping.joinToString()} cannot be given with resume: the checkpoint carries the job's own"
            }
        }
        return traced("runExport") { scope ->
            val job = if (resume != null) {
                ExportJob.resume(resume)
            } else {
                ExportJob(
                    ExportJobParams(
                        tenantId = tenantId, body = body!!.toByteArray(), idempotencyHeader = idempotencyHeader, requestId = requestId,
                        maxPolls = maxPolls, maxPollSeconds = maxPollSeconds, maxAttempts = this.maxAttempts,
                        maxElapsedSeconds = this.maxElapsedSeconds,
                        minPollIntervalSeconds = minPollIntervalSeconds ?: this.minPollIntervalSeconds,
                        maxPollIntervalSeconds = maxPollIntervalSeconds ?: this.maxPollIntervalSeconds,
                        seed = nextSeed(),
                    ),
                )
            }
            job.use { runJob(it, to, onProgress, onCheckpoint, scope) }
        }
    }
}

/**
 * The enterprise organization API over [transport]: the key and secret exchanged for a token (one
 * exchange at a time however many threads call), the spec's one-minute limits kept ([budget],
 * default `RateBudget.preset("enterprise")`), retries and `Retry-After` as the spec says.
 * [session]: what the client's calls share — the token, the one exchange in flight and the budget
 * (default: a new one over [budget]); give the clients of one API key one session
 * (`session = other.session`) so that they share all three. The timeouts, [telemetry] and the
 * base URL's checks are the [ReportsClient]'s.
 *
 * [fleet]: the processes (workers, replicas) of one API key share one token and one budget through
 * one Redis ([RedisFleet]): the client's session is then `fleet.session(budget)` (unless [session]
 * is already a session of that fleet), each request is reserved in Redis before it is sent (the
 * budget's limits hold across the processes), and the token is exchanged once for the fleet.
 */
class EnterpriseClient @JvmOverloads constructor(
    transport: HttpTransport,
    baseUrl: String,
    private val apiKey: String,
    private val apiSecret: String,
    budget: RateBudget = RateBudget.preset("enterprise"),
    timeout: Duration? = null,
    clock: () -> Double = ::systemClock,
    sleep: (Double) -> Unit = ::threadSleep,
    session: Session = Session(budget),
    allowInsecureHttp: Boolean = false,
    maxAttempts: Long? = null,
    maxElapsedSeconds: Double? = null,
    onEvent: (MachineEvent) -> Unit = LogEvents,
    connectTimeout: Duration? = null,
    readTimeout: Duration? = null,
    telemetry: Telemetry? = null,
    fleet: RedisFleet? = null,
    seed: (() -> Long)? = null,
) : ApiClient(
    transport, baseUrl, sessionOf(fleet, session, budget), timeout, connectTimeout, readTimeout, clock, sleep, allowInsecureHttp,
    maxAttempts, maxElapsedSeconds, onEvent, telemetry, null, null, fleet, seed,
) {
    override fun tokenRequest(): RequestDescriptor = buildEnterpriseTokenRequest(apiKey, apiSecret)

    override fun withOptions(
        maxAttempts: Long?,
        maxElapsedSeconds: Double?,
        timeout: Duration?,
        connectTimeout: Duration?,
        readTimeout: Duration?,
        minPollIntervalSeconds: Double?,
        maxPollIntervalSeconds: Double?,
    ): EnterpriseClient = EnterpriseClient(
        transport, base, apiKey, apiSecret, RateBudget.preset("enterprise"), null, clock, sleep, session, allowInsecureHttp,
        maxAttempts, maxElapsedSeconds, onEvent, connectTimeout ?: this.connectTimeout, readOf(timeout, readTimeout), telemetry, fleet, seed,
    )

    override val tokenApi: Api get() = Api.ENTERPRISE
    override val tokenTenant: String? get() = null

    override fun parseToken(status: Long, headers: Map<String, String>, body: ByteArray): Pair<BearerToken, Double?> =
        parseEnterpriseTokenResponse(status, headers, body).use { it.bearer() to it.refreshAt()?.toDouble() }

    override fun toString(): String = "EnterpriseClient()"

    /**
     * Creates a webhook subscription (`createEnterpriseWebhook`, the JSON body `{"name",
     * "endpoint_url", "events"}`) and returns its signing secret, read from the raw 2xx body by
     * the core ([revealedSecret]; the body goes through no JSON decoding of the client and into no
     * event or telemetry). **The secret is shown once: store `secret` now**, before anything else
     * can fail; `secrets()` of the result is what a receiver or verifier takes.
     *
     * The request carries an `Idempotency-Key`, the same on each of its retries, so a create whose
     * connection was lost is sent again safely: the service answers the first create again, secret
     * included. Without [requestId] the key is random (one per call); with it, the key is derived
     * from [requestId] under this client's API key, the same in every process, so a job restarted
     * after a crash that gives the same [requestId] gets the subscription it created. The core
     * checks [endpointUrl] before any request (`https`, a public host: `RoyaltyKitException.Request`
     * `invalid_endpoint_url` otherwise).
     *
     * Throws as [request] does, and `RoyaltyKitException.Webhook` `secret_not_revealed` when the
     * response names no secret (the subscription exists then: rotate its secret).
     */
    @JvmOverloads
    @Throws(RoyaltyKitException::class)
    fun createSubscription(name: String, endpointUrl: String, events: Collection<String>, requestId: String? = null): RevealedSecret {
        val body = "{\"name\":${jsonString(name)},\"endpoint_url\":${jsonString(endpointUrl)},\"events\":[${events.joinToString(",") { jsonString(it) }}]}"
        val params = RequestParams(body = body.toByteArray(), requestId = requestId, keyNamespace = requestId?.let { apiKey })
        return doneThen("createEnterpriseWebhook", params) { revealedSecret(it.body) }
    }

    /**
     * Rotates the signing secret of the subscription [reference] (`rotateEnterpriseWebhookSecret`)
     * and returns the new one, read from the raw 2xx body by the core ([revealedSecret]), with the
     * rotation's `previousValidUntil`. **The new secret is shown once: store it now.** Until
     * `previousValidUntil` deliveries carry the previous secret's signature too:
     * `rotated.secrets(previous = oldSecret)` is the list a receiver or verifier takes from now on.
     *
     * A rotation is never sent twice: when it may have been applied but its answer was lost (a
     * timeout, a lost connection, a 5xx after sending) the new secret cannot be read again, so the
     * call throws [RoyaltyKitException.ReconcileRequired] with `reconcile = Reconcile.ROTATE_AGAIN` (the core's
     * reason: rotate again at once, keep the current secret until then). Otherwise throws as
     * [request] does, and `RoyaltyKitException.Webhook` `secret_not_revealed` when the response
     * names no secret.
     */
    @Throws(RoyaltyKitException::class)
    fun rotateSecret(reference: String): RevealedSecret =
        doneThen("rotateEnterpriseWebhookSecret", RequestParams(path = mapOf("reference" to reference))) { revealedSecret(it.body) }

    /**
     * The canonical fetch of the consumer workflow (`fetchEnterpriseResource`): the current state of
     * the resource an event names, [resourceUrl] being its `resource.url`, with the client's bearer
     * token and, given [userId], `X-User-Id` (acting for that user of the organization). The core
     * checks that the URL is a path under the enterprise API and throws
     * `RoyaltyKitException.Request` with code `invalid_resource_url` before any request otherwise,
     * so the token goes nowhere else. Returns the 2xx body (JSON text), as [request] does, and
     * throws as it does.
     */
    @JvmOverloads
    @Throws(RoyaltyKitException::class)
    fun fetchResource(resourceUrl: String, userId: String? = null): ByteArray =
        request("fetchEnterpriseResource", RequestParams(path = mapOf("resource" to resourceUrl), userId = userId))

    /** [fetchResource] of [event]'s `resourceUrl`. */
    @JvmOverloads
    @Throws(RoyaltyKitException::class)
    fun fetchResource(event: WebhookEvent, userId: String? = null): ByteArray = fetchResource(event.resourceUrl, userId)

    /** [fetchResource] of the resource a verified [delivery]'s event names. */
    @JvmOverloads
    @Throws(RoyaltyKitException::class)
    fun fetchResource(delivery: VerifiedWebhook, userId: String? = null): ByteArray = fetchResource(delivery.event, userId)

    /**
     * Delivery recovery for the subscription [subscription] (the spec's "keep periodic
     * reconciliation until event delivery is proven"): reads its delivery log
     * (`listEnterpriseWebhookDeliveries`, every page), asks [store] — the store your receiver
     * deduplicates with, under its [namespace] — which of the deliveries from [since] on it has
     * processed, without claiming any, and replays (`replayEnterpriseWebhookDelivery`) those the
     * service gave up on that the store never processed. Returns the [RecoveryReport]: every
     * delivery considered, with what was found and done (`RecoveryAction`). Which deliveries are
     * processed, in flight, pending or lost, and which are replayed, are all the core's decisions
     * ([Recovery]); this only performs its steps.
     *
     * Safe to run periodically (a scheduled job): a delivery the service is still attempting, or
     * whose replay it is still attempting, is left alone, so a run never replays what an earlier
     * run replayed while that replay is pending. A delivery the service says was delivered but
     * the store does not know is reported `UNRECORDED`, not replayed (the store forgot it, or is
     * not the receiver's). At most [maxReplays] replays are sent (null: the core's 100; the rest
     * are `DEFERRED` to the next run), a delivery whose [maxReplaysPerDelivery] replays all
     * failed is left alone (null: 3), and at most [maxEntries] log entries are read (null:
     * 10000). [now] is the time of the run (null: the client's clock): a delivery in a state the
     * spec does not name counts as ended once the redelivery schedule has passed.
     *
     * Each request is one [request] — the client's session (token, rate budget), retries, events
     * and telemetry — and blocking: call it off the main thread. A replay is never sent twice
     * blindly: a replay that ended in the library's error ([RoyaltyKitException.ReconcileRequired],
     * [RoyaltyKitException.CallFailed], a `RoyaltyKitException` such as a 404's `api_error`) is reported
     * `REPLAY_FAILED` with that code and the run goes on. A failed log request throws as
     * [request] does; a log that cannot be read throws `RoyaltyKitException.Pagination` (nothing
     * replayed); wrong arguments throw `RoyaltyKitException.InvalidArgument` before any request;
     * an exception of [store] and an interrupt end the run with it.
     */
    @JvmOverloads
    @Throws(RoyaltyKitException::class)
    fun recoverDeliveries(
        subscription: String,
        store: DeliveryStates,
        namespace: String,
        since: Instant,
        maxReplays: Int? = null,
        maxReplaysPerDelivery: Int? = null,
        maxEntries: Long? = null,
        now: Instant? = null,
    ): RecoveryReport {
        val sinceSeconds = since.epochSecond + since.nano / 1e9
        val at = now?.let { it.epochSecond + it.nano / 1e9 } ?: clock()
        Recovery(subscription, namespace, sinceSeconds, at, maxReplays?.toLong(), maxReplaysPerDelivery?.toLong(), maxEntries).use { run ->
            while (true) {
                when (val step = run.next()) {
                    is RecoveryStep.Fetch -> run.page(
                        request(step.operation, RequestParams(path = mapOf("reference" to subscription), query = step.query)),
                    )
                    is RecoveryStep.Check -> run.checked(step.keys.map { store.state(it) })
                    is RecoveryStep.Replay -> {
                        val path = mapOf("reference" to subscription, "deliveryReference" to step.delivery)
                        // the library's own errors are the replay's failure; anything else (an interrupt) propagates
                        var failed: String? = null
                        val answer = try {
                            request(step.operation, RequestParams(path = path))
                        } catch (e: RoyaltyKitException) {
                            failed = e.code
                            null
                        }
                        if (answer != null) run.replayed(answer) else run.replayFailed(failed!!)
                    }
                    is RecoveryStep.Done -> return step.report
                    is RecoveryStep.Fail -> throw step.error
                }
            }
        }
    }
}

/**
 * [s] as a JSON string: `"`, `\` and the control characters escaped, every surrogate as `\uXXXX`
 * (a pair stays the character it encodes; a lone one makes JSON the core refuses), the rest as is.
 */
private fun jsonString(s: String): String {
    val out = StringBuilder(s.length + 2).append('"')
    for (c in s) {
        when {
            c == '"' -> out.append("\\\"")
            c == '\\' -> out.append("\\\\")
            c < ' ' || Character.isSurrogate(c) -> out.append("\\u").append(String.format("%04x", c.code))
            else -> out.append(c)
        }
    }
    return out.append('"').toString()
}
