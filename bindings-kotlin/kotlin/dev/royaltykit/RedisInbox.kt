// The inbox on a Redis stream and its worker: sends the core's commands (RedisInboxProtocol)
// through the host's Redis client and performs the steps of the core's InboxWorker (not
// transactional), with the worker loop JdbcInbox uses; decides nothing itself.
package dev.royaltykit

import dev.royaltykit.types.ClaimState
import dev.royaltykit.types.InboxEntry
import dev.royaltykit.types.WebhookEvent
import java.time.Clock
import java.util.concurrent.atomic.AtomicBoolean

/**
 * What a [RedisInbox] worker runs for each entry ([RedisInbox.runWorker], [RedisInbox.drain]):
 * apply [event] (the delivery's event, parsed by the core from the body the receiver persisted;
 * fetch its resource and apply the current state idempotently). [redis] is the inbox's own client,
 * for an effect kept in the same Redis (it is not a transaction: the entry is marked done after
 * the handler returns). Returning means success; throwing fails the attempt (retried after the
 * core's backoff, poison after the last attempt), except an interruption (`InterruptedException`,
 * `CancellationException`), which ends the worker with the entry left to its lease.
 *
 * **At least once**: a worker killed after the effect and before the mark runs the handler again
 * once the claim's lease runs out, so make the handler idempotent (or use a [JdbcInbox], whose
 * effect and mark commit together: exactly once).
 */
fun interface RedisInboxHandler {
    /** Applies [event] (see [RedisInboxHandler]). */
    @Throws(Exception::class)
    fun handle(event: WebhookEvent, redis: RedisCommands)
}

/**
 * The inbox on a Redis stream (Redis 6.2 or later, with persistence — AOF or RDB — or a restart
 * loses the inbox): the spec's "persist and return success", then process, for receivers and
 * workers that share a Redis rather than a SQL database. A [WebhookReceiver] built with it
 * verifies each delivery, adds it here ([enqueue]: the entry is also the delivery's dedup record)
 * and answers 200 at once, however long the handler takes; a worker ([runWorker], or [drain])
 * claims due entries from the stream's consumer group, runs the handler and marks each entry done.
 * A failed attempt is retried after the core's backoff (2 s, 5 s, 15 s, then 30–60 s) and set aside
 * as poison after the last one ([poisoned], [retry]). Each step is one `EVAL` of the core's scripts,
 * atomic in Redis ([RedisInboxProtocol]); every decision of the worker is the core's
 * ([InboxWorker], not transactional), with the worker loop [JdbcInbox] uses.
 *
 * **Effects are at least once** here: Redis has no transaction shared with the handler's effect,
 * so a worker killed after the effect and before the mark runs the handler again once the claim's
 * lease runs out. Make the handler idempotent, or use [JdbcInbox] for exactly once.
 *
 * [redis]: the client the commands go through ([RedisCommands], as [RedisDedupStore] and
 * [RedisFleet] take it; it must answer `EVAL` and `HGET`, and be thread-safe). [prefix]: the keys'
 * prefix (null: `{royaltykit:inbox}:`; a custom one should carry a `{…}` hash tag too, so every key
 * of the inbox lives in one slot of a Redis Cluster). [ttlSeconds], [leaseSeconds]: the core's
 * defaults when null (done entries kept for the dedup window's TTL, so a redelivery of a processed
 * delivery is still a duplicate; a 60 s lease: how long a claimed entry is held before another
 * worker may take it — keep the handler shorter). [clock]: the time entries are written in (their
 * arrival, backoff and expiry; the lease is Redis's own clock). The constructor throws
 * `RoyaltyKitException.InvalidArgument` for an empty prefix or one over 256 bytes, a TTL outside
 * 1 s to 10 years or a lease outside 1 s to the TTL. Thread-safe; several workers (threads or
 * processes) may run on one inbox.
 */
class RedisInbox @JvmOverloads constructor(
    /** The Redis client the inbox's commands go through. */
    val redis: RedisCommands,
    prefix: String? = null,
    ttlSeconds: Long? = null,
    leaseSeconds: Long? = null,
    private val clock: Clock = Clock.systemUTC(),
) : Inbox, DeliveryStates, AutoCloseable {
    private val protocol = RedisInboxProtocol(prefix, ttlSeconds, leaseSeconds)

    /**
     * Where this inbox's workers ([runWorker], [drain]) report a handler that threw, with the entry
     * it ran: the attempt fails either way (the entry is tried again after the core's
     * backoff, or set aside as poison after its last attempt). Null (the default): logged, logger
     * `dev.royaltykit`, WARNING. An exception it throws is logged and changes nothing, as in Python
     * (`on_error`) and Node (`onError`); an interruption it throws stops the worker as one the
     * handler throws does. Set it before starting a worker.
     */
    @Volatile
    var onError: ((Exception, InboxEntry) -> Unit)? = null

    /** The key prefix. */
    val prefix: String = protocol.prefix()

    /** How long a claim holds an entry, in seconds. */
    val leaseSeconds: Long = protocol.leaseSeconds()

    private fun now(): Long = clock.instant().epochSecond

    /**
     * Adds a verified delivery (one `EVAL`): [key] its delivery key ([deliveryKey]), [deliveryId]
     * its `Service-Webhook-Id`, [event] its event name, [body] its raw JSON body. True when it was
     * added, false when it was in the inbox already. A [WebhookReceiver] in inbox mode calls it;
     * throws `RoyaltyKitException.InvalidArgument` for a bad key, an empty delivery id or a body
     * larger than a delivery holds, and what [redis] throws when Redis cannot be reached.
     */
    override fun enqueue(key: String, deliveryId: String, event: String, body: String): Boolean =
        protocol.addedReply(redis.execute(protocol.enqueueCommand(key, deliveryId, event, body, now())))

    /**
     * What the inbox holds of [key] (the core's read-only lookup, `HGET <entry> state`; delivery
     * recovery asks it): `NEW` never received (or done and past its TTL), `DONE` processed,
     * `IN_PROGRESS` received and not processed yet (pending, or poison: a replay would not help).
     */
    override fun state(key: String): ClaimState = protocol.lookupReply(redis.execute(protocol.lookupCommand(key)))

    /**
     * The poison entries, oldest first, at most [limit] (1 to 1000, `InvalidArgument` otherwise;
     * default: the core's `defaultPoisonListed()`, 100).
     */
    @JvmOverloads
    fun poisoned(limit: Int = defaultPoisonListed().toInt()): List<PoisonEntry> =
        protocol.poisonedReply(redis.execute(protocol.poisonedCommand(limit.toLong()))).map {
            PoisonEntry(it.key, it.deliveryId, it.event, it.attempts.toLong(), it.lastError, it.receivedAt)
        }

    /**
     * Puts the poison entry [key] back to pending, due now, with no attempts counted (you fixed the
     * cause): the next worker runs it. False when [key] is not a poison entry.
     */
    fun retry(key: String): Boolean = protocol.addedReply(redis.execute(protocol.retryCommand(key)))

    /** The count of entries by state (`pending`, `done`, `poison`; a state without entries is absent), as [JdbcInbox.counts]. */
    fun counts(): Map<String, Long> {
        val c = protocol.countsReply(redis.execute(protocol.countsCommand(now())))
        val out = LinkedHashMap<String, Long>()
        if (c.pending > 0u) out["pending"] = c.pending.toLong()
        if (c.done > 0u) out["done"] = c.done.toLong()
        if (c.poison > 0u) out["poison"] = c.poison.toLong()
        return out
    }

    /** Forgets the done entries past their TTL (their hashes expire by themselves) and returns how many. Run it now and then. */
    fun purge(): Int = redis.execute(protocol.purgeCommand(now()))?.trim()?.toInt() ?: 0

    /**
     * Runs the inbox until [stop] is set (checked before each claim and during each wait; an entry
     * being handled is finished first) or the thread is interrupted (`InterruptedException`):
     * claims a due entry, runs [handler] with its event and [redis], marks it done; waits
     * [pollSeconds] (null: the core's 1 s) when nothing is due. Each entry gets at most
     * [maxAttempts] handler runs (null: the core's 5; 1 to 100). [seed] seeds the backoff's jitter
     * (null: the OS RNG). A Redis that cannot be reached is logged (logger `dev.royaltykit`, SEVERE)
     * and tried again after the core's backoff, never thrown. Returns what it did. Blocking: run it
     * on a thread of its own.
     *
     * An interruption (the handler throws `InterruptedException`, `CancellationException`, an
     * interrupted I/O exception; or the thread is interrupted) is thrown as is: the entry is not
     * settled, and it is claimed again once its lease runs out. So is an `Error` the handler throws.
     */
    @JvmOverloads
    @Throws(InterruptedException::class)
    fun runWorker(
        stop: AtomicBoolean = AtomicBoolean(false),
        maxAttempts: Int? = null,
        pollSeconds: Double? = null,
        seed: Long? = null,
        handler: RedisInboxHandler,
    ): InboxReport = Runner(handler).work(stop, maxAttempts, pollSeconds, seed, drain = false)

    /**
     * As [runWorker], returning as soon as a claim finds nothing due (entries waiting for a retry
     * later, or held by another worker's lease, are left for a later run): processes what is due
     * now, then returns what it did.
     */
    @JvmOverloads
    @Throws(InterruptedException::class)
    fun drain(maxAttempts: Int? = null, seed: Long? = null, handler: RedisInboxHandler): InboxReport =
        Runner(handler).work(AtomicBoolean(false), maxAttempts, null, seed, drain = true)

    /** The worker loop this binding's inboxes share ([InboxRunner]), on this inbox: not transactional. */
    private inner class Runner(private val handler: RedisInboxHandler) : InboxRunner<Unit>(false, clock, this@RedisInbox.onError) {
        override val description: String get() = "Redis inbox $prefix"
        override fun claim(now: Long): InboxEntry? = protocol.claimReply(redis.execute(protocol.claimCommand(now)))
        override fun handle(event: WebhookEvent, tx: Unit?) = handler.handle(event, redis)
        override fun markDone(tx: Unit?, key: String, attempts: Long, now: Long): Boolean =
            protocol.addedReply(redis.execute(protocol.markDoneCommand(key, attempts, now)))
        override fun settle(key: String, attempts: Long, poison: Boolean, retryAt: Long, error: String) {
            redis.execute(protocol.settleCommand(key, attempts, poison, retryAt, error))
        }
    }

    /** Frees the protocol's native memory (the Redis client is yours to close). */
    override fun close() = protocol.close()

    /** The prefix only: never the client, whose settings may hold a password. */
    override fun toString(): String = "RedisInbox(prefix=$prefix)"
}
