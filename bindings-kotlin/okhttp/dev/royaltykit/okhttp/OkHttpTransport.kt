// royaltykit-okhttp: the clients' transport over OkHttp (Android's standard HTTP client; 4.x and
// 5.x). A separate artifact, so the core jar gains no dependency.
package dev.royaltykit.okhttp

import dev.royaltykit.client.HttpOutcome
import dev.royaltykit.client.HttpRequest
import dev.royaltykit.client.HttpTransport
import dev.royaltykit.client.ConfigurableTransport
import dev.royaltykit.client.BodyTarget
import dev.royaltykit.client.readResponse
import dev.royaltykit.types.TransportFailure
import okhttp3.Headers
import okhttp3.MediaType.Companion.toMediaTypeOrNull
import okhttp3.OkHttpClient
import okhttp3.Request
import okhttp3.RequestBody.Companion.toRequestBody
import java.io.IOException
import java.io.InterruptedIOException
import java.net.ConnectException
import java.net.SocketTimeoutException
import java.net.UnknownHostException
import java.time.Duration
import java.util.concurrent.Executors
import java.util.concurrent.ScheduledExecutorService
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean

/**
 * [HttpTransport] over an `OkHttpClient` (share yours: its pool and interceptors apply). OkHttp's
 * exceptions: a refused connection (`ConnectException`), an unknown host, and a connect timeout
 * (a `SocketTimeoutException` raised while connecting) are `CONNECT_FAILED`; a read timeout or the
 * call's own timeout is `TIMEOUT`; any other `IOException` (reset, closed early, a body cut short)
 * is `CONNECTION_LOST`. OkHttp's own retry of failed connections is turned off for these calls: the
 * core decides every retry. Redirects are never followed, whatever [client] is configured to do
 * (`followRedirects(false).followSslRedirects(false)` on a copy of it): a 3xx ends the call with
 * rule `redirect`, and no credential reaches the origin it names.
 *
 * Timeouts: a client built over this transport sends through a copy of [client] (one per client,
 * sharing its connection pool) whose `connectTimeout` and `readTimeout` are the client's
 * `connectTimeout` and `readTimeout` (the core's defaults, 10 s and 30 s, when not given): OkHttp's
 * read timeout bounds the wait for the headers and each wait between two pieces of the body.
 * A thread interrupt (a cancelled coroutine, a shutdown hook) cancels the call in flight, which
 * OkHttp's blocking I/O would not notice by itself.
 */
class OkHttpTransport private constructor(
    private val client: OkHttpClient,
    /** The read timeout [client] already has (a configured copy), or null. */
    private val readTimeout: Duration?,
) : ConfigurableTransport {
    /** A transport over [client] (default: a new `OkHttpClient`). */
    @JvmOverloads
    constructor(client: OkHttpClient = OkHttpClient()) :
        this(client.newBuilder().retryOnConnectionFailure(false).followRedirects(false).followSslRedirects(false).build(), null)

    /** The `OkHttpClient` the requests go through (redirects and OkHttp's own retries off). */
    val okHttpClient: OkHttpClient get() = client

    /** A copy of the client with the client's two timeouts, sharing its pool. */
    override fun configured(connectTimeout: Duration, readTimeout: Duration): HttpTransport = OkHttpTransport(
        client.newBuilder().connectTimeout(connectTimeout.toMillis(), TimeUnit.MILLISECONDS)
            .readTimeout(readTimeout.toMillis(), TimeUnit.MILLISECONDS).build(),
        readTimeout,
    )

    override fun send(request: HttpRequest, timeout: Duration, target: BodyTarget): HttpOutcome {
        val headers = Headers.Builder().apply { request.headers.forEach { (n, v) -> add(n, v) } }.build()
        val type = headers["Content-Type"]?.toMediaTypeOrNull()
        val body = request.body?.toRequestBody(type) ?: if (request.method == "POST") ByteArray(0).toRequestBody(type) else null
        // The timeout bounds each wait for the response and for the next piece of the body (a read
        // timeout), not the whole call: a large artifact that keeps arriving is never cut off.
        val c = if (timeout == readTimeout) client else client.newBuilder().readTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS).build()
        val call = c.newCall(Request.Builder().url(request.url).headers(headers).method(request.method, body).build())
        // OkHttp's sockets block without looking at the thread's interrupt flag: a watcher cancels
        // the call when the sending thread is interrupted.
        val caller = Thread.currentThread()
        val cancelled = AtomicBoolean(false)
        val watch = watcher.scheduleWithFixedDelay({
            if (caller.isInterrupted && cancelled.compareAndSet(false, true)) call.cancel()
        }, WATCH_MS, WATCH_MS, TimeUnit.MILLISECONDS)
        return try {
            call.execute().use { response ->
                readResponse(response.code, response.headers.map { it.first to it.second }, response.body!!.byteStream(),
                    response.header("Content-Length")?.toLongOrNull(), target)
            }
        } catch (e: IOException) {
            if (cancelled.get() || caller.isInterrupted) {
                caller.interrupt() // the client sees the interrupt and ends the call
                HttpOutcome.Failed(TransportFailure.CONNECTION_LOST, e)
            } else {
                HttpOutcome.Failed(failure(e), e)
            }
        } finally {
            watch.cancel(false)
        }
    }

    private fun failure(e: IOException): TransportFailure {
        val chain = generateSequence<Throwable>(e) { it.cause }.take(5).toList()
        return when {
            chain.any { it is ConnectException || it is UnknownHostException } -> TransportFailure.CONNECT_FAILED
            // OkHttp says "connect timed out" for a connect timeout: nothing was sent
            chain.any { it is SocketTimeoutException && it.message?.contains("connect", ignoreCase = true) == true } ->
                TransportFailure.CONNECT_FAILED
            chain.any { it is SocketTimeoutException || (it is InterruptedIOException && it.message == "timeout") } -> TransportFailure.TIMEOUT
            else -> TransportFailure.CONNECTION_LOST
        }
    }

    private companion object {
        const val WATCH_MS = 25L

        /** One daemon thread for every transport, looking at the sending threads' interrupt flags. */
        val watcher: ScheduledExecutorService by lazy {
            Executors.newSingleThreadScheduledExecutor { r -> Thread(r, "royaltykit-okhttp-interrupts").apply { isDaemon = true } }
        }
    }
}
