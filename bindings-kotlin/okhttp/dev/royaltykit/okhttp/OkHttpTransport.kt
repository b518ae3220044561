// royaltykit-okhttp: the clients' transport over OkHttp (Android's standard HTTP client; 4.x and
// 5.x). A separate artifact, so the core jar gains no dependency.
package dev.royaltykit.okhttp

import dev.royaltykit.client.HttpOutcome
import dev.royaltykit.client.HttpRequest
import dev.royaltykit.client.HttpTransport
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
import java.util.concurrent.TimeUnit

/**
 * [HttpTransport] over an `OkHttpClient` (share yours: its pool and interceptors apply). OkHttp's
 * exceptions: a refused connection (`ConnectException`), an unknown host, and a connect timeout
 * (a `SocketTimeoutException` raised while connecting) are `CONNECT_FAILED`; a read timeout or the
 * call's own timeout is `TIMEOUT`; any other `IOException` (reset, closed early, a body cut short)
 * is `CONNECTION_LOST`. OkHttp's own retry of failed connections is turned off for these calls: the
 * core decides every retry. Redirects are never followed, whatever [client] is configured to do
 * (`followRedirects(false).followSslRedirects(false)` on a copy of it): a 3xx ends the call with
 * rule `redirect`, and no credential reaches the origin it names.
 */
class OkHttpTransport @JvmOverloads constructor(client: OkHttpClient = OkHttpClient()) : HttpTransport {
    private val client = client.newBuilder().retryOnConnectionFailure(false).followRedirects(false).followSslRedirects(false).build()

    override fun send(request: HttpRequest, timeout: Duration, target: BodyTarget): HttpOutcome {
        val headers = Headers.Builder().apply { request.headers.forEach { (n, v) -> add(n, v) } }.build()
        val type = headers["Content-Type"]?.toMediaTypeOrNull()
        val body = request.body?.toRequestBody(type) ?: if (request.method == "POST") ByteArray(0).toRequestBody(type) else null
        // The timeout bounds each wait for the response and for the next piece of the body (a read
        // timeout), not the whole call: a large artifact that keeps arriving is never cut off.
        val call = client.newBuilder().readTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS).build()
            .newCall(Request.Builder().url(request.url).headers(headers).method(request.method, body).build())
        return try {
            call.execute().use { response ->
                readResponse(response.code, response.headers.map { it.first to it.second }, response.body!!.byteStream(),
                    response.header("Content-Length")?.toLongOrNull(), target)
            }
        } catch (e: IOException) {
            HttpOutcome.Failed(failure(e), e)
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
}
