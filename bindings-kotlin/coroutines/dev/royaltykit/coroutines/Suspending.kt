// royaltykit-coroutines: the clients as suspend functions (kotlinx-coroutines). A separate
// artifact, so the core jar gains no dependency.
package dev.royaltykit.coroutines

import dev.royaltykit.DeliveryStates
import dev.royaltykit.InboxHandler
import dev.royaltykit.InboxReport
import dev.royaltykit.JdbcInbox
import dev.royaltykit.RedisInbox
import dev.royaltykit.RedisInboxHandler
import dev.royaltykit.RequestParams
import dev.royaltykit.RevealedSecret
import dev.royaltykit.client.ApiClient
import dev.royaltykit.client.EnterpriseClient
import dev.royaltykit.client.ExportInterruptedException
import dev.royaltykit.client.ExportResult
import dev.royaltykit.client.ReportsClient
import dev.royaltykit.types.RecoveryReport
import dev.royaltykit.types.VerifiedWebhook
import dev.royaltykit.types.WebhookEvent
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.runInterruptible
import java.nio.file.Path
import java.time.Instant
import java.util.concurrent.CancellationException
import java.util.concurrent.atomic.AtomicBoolean

/**
 * [ApiClient.request] as a suspend function: the blocking call runs on [Dispatchers.IO], and
 * cancelling the coroutine interrupts its send or wait, including a wait for the token another
 * call is obtaining (the call ends with a `CancellationException`; a request already sent may have
 * been applied, as after any lost connection; a token exchange it led is abandoned, and another
 * call of the session leads the next; on a fleet's session the fleet's exchange lock it held is
 * released first, so the fleet's other processes need not wait out its lease).
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

/**
 * [EnterpriseClient.createSubscription] as a suspend function, on [Dispatchers.IO] and cancellable
 * as [requestAsync] is: the subscription's signing secret, **shown once: store it now**. The
 * request carries an `Idempotency-Key` (derived from [requestId] under the client's API key when
 * given, else random), so a create cancelled after it was sent can be made again with the same
 * [requestId] and gets the same subscription, secret included.
 */
suspend fun EnterpriseClient.createSubscriptionAsync(
    name: String,
    endpointUrl: String,
    events: Collection<String>,
    requestId: String? = null,
): RevealedSecret = runInterruptible(Dispatchers.IO) { createSubscription(name, endpointUrl, events, requestId) }

/**
 * [EnterpriseClient.rotateSecret] as a suspend function, on [Dispatchers.IO] and cancellable as
 * [requestAsync] is: the new signing secret, **shown once: store it now**; `secrets(previous)` of
 * it is what the receiver takes. A rotation whose answer was lost throws
 * `RoyaltyKitException.ReconcileRequired` (`ROTATE_AGAIN`) and is never sent twice; likewise a rotation
 * cancelled after it was sent may have been applied and its secret is lost: rotate again at once.
 */
suspend fun EnterpriseClient.rotateSecretAsync(reference: String): RevealedSecret =
    runInterruptible(Dispatchers.IO) { rotateSecret(reference) }

/**
 * [EnterpriseClient.fetchResource] as a suspend function, on [Dispatchers.IO] and cancellable as
 * [requestAsync] is: the current state of the resource at [resourceUrl] (an event's
 * `resource.url`, checked by the core to lie under the API before any request), acting for
 * [userId] when given.
 */
suspend fun EnterpriseClient.fetchResourceAsync(resourceUrl: String, userId: String? = null): ByteArray =
    runInterruptible(Dispatchers.IO) { fetchResource(resourceUrl, userId) }

/** [fetchResourceAsync] of [event]'s `resourceUrl`. */
suspend fun EnterpriseClient.fetchResourceAsync(event: WebhookEvent, userId: String? = null): ByteArray =
    fetchResourceAsync(event.resourceUrl, userId)

/** [fetchResourceAsync] of the resource a verified [delivery]'s event names. */
suspend fun EnterpriseClient.fetchResourceAsync(delivery: VerifiedWebhook, userId: String? = null): ByteArray =
    fetchResourceAsync(delivery.event.resourceUrl, userId)

/**
 * [EnterpriseClient.recoverDeliveries] as a suspend function, on [Dispatchers.IO] and cancellable
 * as [requestAsync] is: the subscription's delivery log read, each delivery from [since] on
 * checked against [store] (the receiver's, under its [namespace]; its `state` is called on that
 * thread, blocking) and the ones never processed replayed, the core deciding which. Cancelling
 * the coroutine interrupts the request or wait in progress and sends no further request: a
 * replay already sent may have been accepted, and the next run sees it pending in the log and
 * does not send it again.
 */
suspend fun EnterpriseClient.recoverDeliveriesAsync(
    subscription: String,
    store: DeliveryStates,
    namespace: String,
    since: Instant,
    maxReplays: Int? = null,
    maxReplaysPerDelivery: Int? = null,
    maxEntries: Long? = null,
    now: Instant? = null,
): RecoveryReport = runInterruptible(Dispatchers.IO) {
    recoverDeliveries(subscription, store, namespace, since, maxReplays, maxReplaysPerDelivery, maxEntries, now)
}

/**
 * [JdbcInbox.runWorker] as a suspend function, on [Dispatchers.IO]: runs the inbox until [stop] is
 * set or the coroutine is cancelled. Cancelling it interrupts the worker's wait or handler (a
 * handler blocked in a call that ignores interrupts finishes first); the open transaction is
 * rolled back, the entry stays pending with its attempt counted (claimed again once its lease runs
 * out), and the coroutine ends with a `CancellationException`. [handler] runs on that thread,
 * blocking.
 */
suspend fun JdbcInbox.runWorkerAsync(
    stop: AtomicBoolean = AtomicBoolean(false),
    maxAttempts: Int? = null,
    pollSeconds: Double? = null,
    seed: Long? = null,
    handler: InboxHandler,
): InboxReport = runInterruptible(Dispatchers.IO) { runWorker(stop, maxAttempts, pollSeconds, seed, handler) }

/** [JdbcInbox.drain] as a suspend function, on [Dispatchers.IO] and cancellable as [runWorkerAsync] is. */
suspend fun JdbcInbox.drainAsync(maxAttempts: Int? = null, seed: Long? = null, handler: InboxHandler): InboxReport =
    runInterruptible(Dispatchers.IO) { drain(maxAttempts, seed, handler) }

/**
 * [RedisInbox.runWorker] as a suspend function, on [Dispatchers.IO]: runs the inbox until [stop] is
 * set or the coroutine is cancelled. Cancelling it interrupts the worker's wait or handler; the
 * entry stays pending with its attempt counted (claimed again once its lease runs out), and the
 * coroutine ends with a `CancellationException`. [handler] runs on that thread, blocking.
 */
suspend fun RedisInbox.runWorkerAsync(
    stop: AtomicBoolean = AtomicBoolean(false),
    maxAttempts: Int? = null,
    pollSeconds: Double? = null,
    seed: Long? = null,
    handler: RedisInboxHandler,
): InboxReport = runInterruptible(Dispatchers.IO) { runWorker(stop, maxAttempts, pollSeconds, seed, handler) }

/** [RedisInbox.drain] as a suspend function, on [Dispatchers.IO] and cancellable as [runWorkerAsync] is. */
suspend fun RedisInbox.drainAsync(maxAttempts: Int? = null, seed: Long? = null, handler: RedisInboxHandler): InboxReport =
    runInterruptible(Dispatchers.IO) { drain(maxAttempts, seed, handler) }

/**
 * [ApiClient.paginate] as a cold [Flow]: each collection walks the list from the start, a page
 * requested only when the items before it have been collected, each page's request on
 * [Dispatchers.IO] and cancellable as [requestAsync] is (cancelling the collecting coroutine
 * interrupts the send or wait in progress and sends no further page). Items are each one's JSON
 * text as the service sent it. Wrong arguments throw `RoyaltyKitException.InvalidArgument` here,
 * before any request; a list that cannot be read on throws `RoyaltyKitException.Pagination` into
 * the collector after the items before it were emitted.
 */
fun ApiClient.paginateFlow(
    operationId: String,
    path: Map<String, Any> = emptyMap(),
    query: Map<String, Any?> = emptyMap(),
    maxPages: Int? = null,
    maxItems: Long? = null,
    pageSize: Int? = null,
): Flow<ByteArray> = paginate(operationId, path, query, maxPages, maxItems, pageSize).collectedOnIo()

/** [paginateFlow] with the request's parameters as [RequestParams] (its query is where the walk starts). */
fun ApiClient.paginateFlow(
    operationId: String,
    params: RequestParams,
    maxPages: Int? = null,
    maxItems: Long? = null,
    pageSize: Int? = null,
): Flow<ByteArray> = paginate(operationId, params, maxPages, maxItems, pageSize).collectedOnIo()

/** A lazy blocking sequence as a flow: each step that may block (a page's request) on [Dispatchers.IO], interruptible. */
private fun <T> Sequence<T>.collectedOnIo(): Flow<T> = flow {
    val items = iterator()
    while (runInterruptible(Dispatchers.IO) { items.hasNext() }) emit(items.next())
}
