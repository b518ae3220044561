// royaltykit-coroutines: the clients as suspend functions (kotlinx-coroutines). A separate
// artifact, so the core jar gains no dependency.
package dev.royaltykit.coroutines

import dev.royaltykit.client.ApiClient
import dev.royaltykit.client.ExportResult
import dev.royaltykit.client.ReportsClient
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runInterruptible
import java.nio.file.Path

/**
 * [ApiClient.request] as a suspend function: the blocking call runs on [Dispatchers.IO], and
 * cancelling the coroutine interrupts its send or wait, including a wait for the token another
 * call is obtaining (the call ends with a `CancellationException`; a request already sent may have
 * been applied, as after any lost connection; a token exchange it led is abandoned, and another
 * call of the session leads the next).
 */
suspend fun ApiClient.requestAsync(
    operationId: String,
    path: Map<String, Any> = emptyMap(),
    query: Map<String, Any?> = emptyMap(),
    body: String? = null,
    requestId: String? = null,
): ByteArray = runInterruptible(Dispatchers.IO) { request(operationId, path, query, body, requestId) }

/** [ReportsClient.runExport] as a suspend function, on [Dispatchers.IO] and cancellable (see [requestAsync]). */
suspend fun ReportsClient.runExportAsync(
    body: String,
    to: Path? = null,
    requestId: String? = null,
    maxPolls: Long? = null,
    maxPollSeconds: Double? = null,
    onProgress: ((Long, Long?) -> Unit)? = null,
): ExportResult = runInterruptible(Dispatchers.IO) { runExport(body, to, requestId, maxPolls, maxPollSeconds, onProgress) }
