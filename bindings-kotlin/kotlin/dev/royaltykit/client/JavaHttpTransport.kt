// The java.net.http transport (JVM 11+; not in the Android AAR, where OkHttp is the standard).
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
import java.time.Duration

/**
 * [HttpTransport] over `java.net.http.HttpClient`. Its exceptions: a refused connection
 * (`ConnectException`) and `HttpConnectTimeoutException` — a subclass of `HttpTimeoutException`,
 * yet nothing was sent — are `CONNECT_FAILED`; another `HttpTimeoutException` is `TIMEOUT`; any
 * other `IOException` (reset, closed early, a body cut short) is `CONNECTION_LOST`.
 *
 * Redirects are never followed (the specs: "Redirects are not followed"; a 3xx ends the call with
 * rule `redirect`, naming the `Location`'s origin): a [client] whose `followRedirects()` is not
 * `HttpClient.Redirect.NEVER` (the JDK's default) is refused here with `IllegalArgumentException`,
 * since java.net.http would carry the credentials to wherever a redirect points.
 */
class JavaHttpTransport @JvmOverloads constructor(
    private val client: HttpClient = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build(),
) : HttpTransport {
    init {
        require(client.followRedirects() == HttpClient.Redirect.NEVER) {
            "JavaHttpTransport needs an HttpClient that never follows redirects: build it with " +
                "followRedirects(HttpClient.Redirect.NEVER) (the default); this one is ${client.followRedirects()}, " +
                "which would send the credentials to the origin a redirect names"
        }
    }

    override fun send(request: HttpRequest, timeout: Duration, target: BodyTarget): HttpOutcome {
        val builder = JdkRequest.newBuilder(URI.create(request.url)).timeout(timeout)
            .method(request.method, request.body?.let { JdkRequest.BodyPublishers.ofByteArray(it) } ?: JdkRequest.BodyPublishers.noBody())
        // java.net.http sets these itself and refuses them from callers
        request.headers.filter { (n, _) -> !n.equals("Content-Length", true) && !n.equals("Host", true) }
            .forEach { (n, v) -> builder.header(n, v) }
        return try {
            val response = client.send(builder.build(), HttpResponse.BodyHandlers.ofInputStream())
            val total = response.headers().firstValueAsLong("Content-Length").let { if (it.isPresent) it.asLong else null }
            val headers = response.headers().map().flatMap { (n, vs) -> vs.map { n to it } }
            readResponse(response.statusCode(), headers, response.body(), total, target)
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
}
