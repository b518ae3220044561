// The java.net.http transport (JVM 11+; not in the Android AAR, where OkHttp is the standard): every
// class of this file is JavaHttpTransport or nested in it, which the AAR build leaves out.
package dev.royaltykit.client

import dev.royaltykit.types.TransportFailure
import java.io.IOException
import java.net.ConnectException
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpConnectTimeoutException
import java.net.http.HttpRequest as JdkRequest
import java.net.http.HttpResponse
import java.net.http.HttpTimeoutException
import java.nio.channels.UnresolvedAddressException
import java.io.InputStream
import java.nio.ByteBuffer
import java.time.Duration
import java.util.concurrent.Flow
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicReference
import dev.royaltykit.clientTimeouts

/**
 * [HttpTransport] over `java.net.http.HttpClient`. Its exceptions: a refused connection
 * (`ConnectException`) and `HttpConnectTimeoutException` — a subclass of `HttpTimeoutException`,
 * yet nothing was sent — are `CONNECT_FAILED`; another `HttpTimeoutException` (no headers within
 * the read timeout, or no piece of the body for that long) is `TIMEOUT`; any other `IOException`
 * (reset, closed early, a body cut short) is `CONNECTION_LOST`. A thread interrupt ends a send at
 * once, while waiting for the headers or for the body.
 *
 * Timeouts: java.net.http keeps the connect timeout on the `HttpClient`. Without [client] the
 * transport makes its own `HttpClient`, and a client built over it gets one with the client's
 * `connectTimeout` (the core's default, 10 s, when not given). With your own [client], that
 * client's `connectTimeout()` applies and the client's `connectTimeout` option does not. The read
 * timeout is the client's, for each request.
 *
 * Redirects are never followed (the specs: "Redirects are not followed"; a 3xx ends the call with
 * rule `redirect`, naming the `Location`'s origin): a [client] whose `followRedirects()` is not
 * `HttpClient.Redirect.NEVER` (the JDK's default) is refused here with `IllegalArgumentException`,
 * since java.net.http would carry the credentials to wherever a redirect points.
 */
class JavaHttpTransport private constructor(
    given: HttpClient?,
    /** The connect timeout of this transport's own `HttpClient` (when [given] is null). */
    private val connect: Duration,
) : ConfigurableTransport {
    /** A transport over [client], or over an `HttpClient` of its own when null (see the class). */
    @JvmOverloads
    constructor(client: HttpClient? = null) : this(client, duration(clientTimeouts().connectSeconds))

    private val own = given == null
    private val client: HttpClient by lazy { given ?: HttpClient.newBuilder().connectTimeout(connect).build() }

    init {
        if (given != null) {
            require(given.followRedirects() == HttpClient.Redirect.NEVER) {
                "JavaHttpTransport needs an HttpClient that never follows redirects: build it with " +
                    "followRedirects(HttpClient.Redirect.NEVER) (the default); this one is ${given.followRedirects()}, " +
                    "which would send the credentials to the origin a redirect names"
            }
        }
    }

    /** The `HttpClient` the requests go through. */
    val httpClient: HttpClient get() = client

    /** The transports of other connect timeouts made from this one, each made once. */
    private val variants = java.util.concurrent.ConcurrentHashMap<Duration, JavaHttpTransport>()

    /**
     * With its own `HttpClient`: a transport whose `HttpClient` has [connectTimeout] (one per
     * timeout, shared by the clients and `withOptions` copies made over this transport); yours is
     * kept.
     */
    override fun configured(connectTimeout: Duration, readTimeout: Duration): HttpTransport =
        if (!own || connectTimeout == connect) this else variants.computeIfAbsent(connectTimeout) { JavaHttpTransport(null, it) }

    override fun send(request: HttpRequest, timeout: Duration, target: BodyTarget): HttpOutcome {
        val builder = JdkRequest.newBuilder(URI.create(request.url)).timeout(timeout)
            .method(request.method, request.body?.let { JdkRequest.BodyPublishers.ofByteArray(it) } ?: JdkRequest.BodyPublishers.noBody())
        // java.net.http sets these itself and refuses them from callers
        request.headers.filter { (n, _) -> !n.equals("Content-Length", true) && !n.equals("Host", true) }
            .forEach { (n, v) -> builder.header(n, v) }
        return try {
            val response = client.send(builder.build(), HttpResponse.BodyHandlers.ofPublisher())
            val total = response.headers().firstValueAsLong("Content-Length").let { if (it.isPresent) it.asLong else null }
            val headers = response.headers().map().flatMap { (n, vs) -> vs.map { n to it } }
            readResponse(response.statusCode(), headers, IdleBoundInput(response.body(), timeout), total, target)
        } catch (e: HttpConnectTimeoutException) {
            HttpOutcome.Failed(TransportFailure.CONNECT_FAILED, e)
        } catch (e: HttpTimeoutException) {
            HttpOutcome.Failed(TransportFailure.TIMEOUT, e)
        } catch (e: IOException) {
            HttpOutcome.Failed(if (refused(e)) TransportFailure.CONNECT_FAILED else TransportFailure.CONNECTION_LOST, e)
        }
    }

    private fun refused(e: Throwable): Boolean =
        generateSequence(e) { it.cause }.take(5).any { it is ConnectException || it is UnresolvedAddressException }

    private companion object {
        fun duration(seconds: Double): Duration = Duration.ofNanos(Math.round(seconds * 1e9))
    }

    /**
     * A response body as an `InputStream` that waits at most [idle] for each piece (an
     * `HttpTimeoutException` then: java.net.http bounds only the wait for the headers), and that a
     * thread interrupt ends (`InterruptedIOException`, the interrupt flag kept). Closing it cancels
     * the rest of the body.
     */
    private class IdleBoundInput(publisher: Flow.Publisher<List<ByteBuffer>>, private val idle: Duration) :
        InputStream(), Flow.Subscriber<List<ByteBuffer>> {
        private val queue = LinkedBlockingQueue<Any>()
        private val subscription = AtomicReference<Flow.Subscription?>()
        private var current: ByteBuffer = ByteBuffer.allocate(0)
        private var pending: Iterator<ByteBuffer>? = null
        private var ended = false

        init {
            publisher.subscribe(this)
        }

        override fun onSubscribe(s: Flow.Subscription) {
            if (!subscription.compareAndSet(null, s)) s.cancel() else s.request(1)
        }

        override fun onNext(item: List<ByteBuffer>) {
            queue.put(item)
        }

        override fun onError(throwable: Throwable) {
            queue.put(throwable)
        }

        override fun onComplete() {
            queue.put(End)
        }

        /** The next non-empty buffer, or false at the body's end. */
        private fun advance(): Boolean {
            while (!current.hasRemaining()) {
                val next = pending
                if (next != null && next.hasNext()) {
                    current = next.next()
                    continue
                }
                if (ended) return false
                val item = try {
                    queue.poll(idle.toNanos(), TimeUnit.NANOSECONDS)
                } catch (e: InterruptedException) {
                    close()
                    Thread.currentThread().interrupt()
                    throw java.io.InterruptedIOException("interrupted while reading the body").apply { initCause(e) }
                }
                when (item) {
                    null -> {
                        close()
                        throw HttpTimeoutException("no piece of the body within the read timeout (${idle.toMillis()} ms)")
                    }
                    End -> { ended = true; return false }
                    is Throwable -> { ended = true; throw (item as? IOException ?: IOException(item)) }
                    else -> {
                        @Suppress("UNCHECKED_CAST")
                        pending = (item as List<ByteBuffer>).iterator()
                        subscription.get()?.request(1)
                    }
                }
            }
            return true
        }

        override fun read(): Int = if (advance()) current.get().toInt() and 0xff else -1

        override fun read(b: ByteArray, off: Int, len: Int): Int {
            if (len == 0) return 0
            if (!advance()) return -1
            val n = minOf(len, current.remaining())
            current.get(b, off, n)
            return n
        }

        override fun close() {
            ended = true
            subscription.getAndSet(NoSubscription)?.cancel()
        }

        private object End

        private object NoSubscription : Flow.Subscription {
            override fun request(n: Long) = Unit
            override fun cancel() = Unit
        }
    }
}
