// royaltykit-coroutines: the clients as suspend functions (kotlinx-coroutines). A separate
// artifact, so the core jar gains no dependency.
package dev.royaltykit.coroutines

import dev.royaltykit.client.ApiClient
import dev.royaltykit.client.ExportInterruptedException
import dev.royaltykit.client.ExportResult
import dev.royaltykit.client.ReportsClient
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runInterruptible
import java.nio.file.Path
import java.util.concurrent.CancellationException

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

/**
 * [ReportsClient.runExport] as a suspend function, on [Dispatchers.IO] and cancellable (see
 * [requestAsync]), with the same arguments (checkpoints, `resume`, poll bounds). Cancelling the
 * coroutine once the job started throws [ExportInterruptedException] (a `CancellationException`,
 * so the coroutine ends cancelled) carrying the export id and the checkpoint to resume from; the
 * temporary file beside [to] is removed. Cancelled before the job started, it is the plain
 * `CancellationException` (nothing was sent).
 */
suspend fun ReportsClient.runExportAsync(
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
    // runInterruptible would report the coroutine's own cancellation instead of the job's
    // exception: it is kept here and thrown instead.
    var interrupted: ExportInterruptedException? = null
    try {
        return runInterruptible(Dispatchers.IO) {
            try {
                runExport(body, to, requestId, maxPolls, maxPollSeconds, onProgress, onCheckpoint, resume,
                    minPollIntervalSeconds, maxPollIntervalSeconds)
            } catch (e: ExportInterruptedException) {
                interrupted = e
                throw e
            }
        }
    } catch (e: CancellationException) {
        throw interrupted ?: e
    }
}
