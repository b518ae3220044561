// The SQL inbox over JDBC and its worker: runs the core's statements (SqlInboxProtocol) and
// performs the steps of the core's InboxWorker; decides nothing itself.
package dev.royaltykit

import dev.royaltykit.types.ClaimState
import dev.royaltykit.types.InboxEntry
import dev.royaltykit.types.ParamStyle
import dev.royaltykit.types.SqlDialect
import dev.royaltykit.types.WebhookEvent
import java.sql.Connection
import java.time.Clock
import java.util.concurrent.atomic.AtomicBoolean
import javax.sql.DataSource

/**
 * What an inbox worker runs for each entry ([JdbcInbox.runWorker], [JdbcInbox.drain]): apply
 * [event] (the delivery's event, parsed by the core from the body the receiver persisted; fetch
 * its resource and apply the current state idempotently) and write the effect with [connection],
 * the connection of the transaction that also marks the entry done. Never commit, roll back or
 * close it yourself. Returning means success; throwing fails the attempt (rolled back, retried
 * after the core's backoff, poison after the last attempt), except an interruption
 * (`InterruptedException`, `CancellationException`), which rolls back and ends the worker.
 */
fun interface InboxHandler {
    /** Applies [event], writing its effect with [connection] (see [InboxHandler]). */
    @Throws(Exception::class)
    fun handle(event: WebhookEvent, connection: Connection)
}

/**
 * An entry set aside as poison ([JdbcInbox.poisoned], [RedisInbox.poisoned]): its delivery [key],
 * `Service-Webhook-Id` [deliveryId], [event] name, handler runs started ([attempts]), the last
 * failure ([lastError]: the core's `handlerErrorText`, `ExceptionClass: message` as in every
 * language, cut to 1024 bytes) and when it arrived ([receivedAt], Unix seconds). Never the body.
 */
data class PoisonEntry(
    val key: String,
    val deliveryId: String,
    val event: String,
    val attempts: Long,
    val lastError: String?,
    val receivedAt: Long,
)

/**
 * What one run of an inbox worker did (the core machine's counters): entries [processed]
 * (committed, or marked done on Redis), failed attempts [retried] (settled to run again later) and entries set aside as
 * [poisoned].
 */
data class InboxReport(val processed: Long, val retried: Long, val poisoned: Long)

/**
 * The inbox in your own database over JDBC (PostgreSQL 9.5+, SQLite 3.35+): the spec's "persist
 * and return success", then process. A [WebhookReceiver] built with it verifies each delivery,
 * inserts it here ([enqueue]: the row is also the delivery's dedup record) and answers 200 at
 * once, however long the handler takes; a worker ([runWorker], or [drain]) claims due entries,
 * runs the handler and marks each entry done **in the transaction that holds the handler's
 * effect**, so an effect commits exactly once even when a worker is killed at any step. A failed
 * attempt is retried after the core's backoff (2 s, 5 s, 15 s, then 30–60 s) and set aside as
 * poison after the last one ([poisoned], [retry]). Every statement, what its result means and
 * every decision of the worker are the core's ([SqlInboxProtocol], [InboxWorker]); this class only
 * runs them.
 *
 * [dataSource]: where connections come from (a pool such as HikariCP in production: each
 * enqueue, claim and settle takes a connection for one statement, and each handler run one for
 * its transaction). [dialect]: detected from the connection's metadata when null. [table],
 * [ttlSeconds], [leaseSeconds]: the core's defaults when null (`royaltykit_inbox`; done rows kept
 * for the dedup window's TTL, so a redelivery of a processed delivery is still a duplicate; a
 * 60 s lease: how long a claimed entry is held before another worker may take it — keep the
 * handler shorter). [clock]: the time rows are written in (Unix seconds of its instant).
 * [createTable]: create the table and its index now when missing.
 *
 * The handler's transaction is opened with the core's statement (`BEGIN`, `BEGIN IMMEDIATE` on
 * SQLite) on a connection in JDBC autocommit mode and ended with its `COMMIT` or `ROLLBACK`. On
 * SQLite a transaction holds the database's one write lock: a receiver's insert waits (as long
 * as the DataSource's busy timeout allows) while a handler runs, so keep handlers short there or
 * use PostgreSQL, whose workers and receivers only lock the row they touch. Thread-safe; several
 * workers (threads or processes) may run on one inbox. `toString` never shows the DataSource
 * (its URL may hold a password).
 */
class JdbcInbox @JvmOverloads constructor(
    private val dataSource: DataSource,
    dialect: SqlDialect? = null,
    table: String? = null,
    ttlSeconds: Long? = null,
    leaseSeconds: Long? = null,
    private val clock: Clock = Clock.systemUTC(),
    createTable: Boolean = true,
) : Inbox, DeliveryStates, AutoCloseable {
    private val protocol: SqlInboxProtocol

    /** The dialect the statements are written for. */
    val dialect: SqlDialect

    init {
        val known = dialect ?: dataSource.connection.use { detectDialect(it, "JdbcInbox") }
        protocol = SqlInboxProtocol(known, ParamStyle.QMARK, table, ttlSeconds, leaseSeconds)
        this.dialect = known
        if (createTable) {
            try {
                createTable()
            } catch (e: Exception) {
                protocol.close()
                throw e
            }
        }
    }

    /**
     * Where this inbox's workers ([runWorker], [drain]) report a handler that threw, with the entry
     * it ran: the attempt fails either way (rolled back; the entry is tried again after the core's
     * backoff, or set aside as poison after its last attempt). Null (the default): logged, logger
     * `dev.royaltykit`, WARNING. An exception it throws is logged and changes nothing, as in Python
     * (`on_error`) and Node (`onError`); an interruption it throws stops the worker as one the
     * handler throws does. Set it before starting a worker.
     */
    @Volatile
    var onError: ((Exception, InboxEntry) -> Unit)? = null

    /** The inbox table's name. */
    val table: String get() = protocol.table()

    /** How long a claim holds an entry, in seconds. */
    val leaseSeconds: Long get() = protocol.leaseSeconds()

    private fun now(): Long = clock.instant().epochSecond

    /** A connection in autocommit mode for one short statement; closed by [use]. */
    private fun autocommit(): Connection = dataSource.connection.also { c ->
        try {
            if (!c.autoCommit) c.autoCommit = true
        } catch (e: Exception) {
            c.closeQuietly()
            throw e
        }
    }

    /** Runs the statement text [sql] (`BEGIN`, `COMMIT`, `ROLLBACK`: the core's) on [c]. */
    private fun execute(c: Connection, sql: String) {
        c.createStatement().use { it.execute(sql) }
    }

    /** Creates the table and its index when missing (idempotent). */
    fun createTable() {
        autocommit().use { c -> c.createStatement().use { s -> protocol.schema().forEach { s.execute(it) } } }
    }

    /**
     * Persists a verified delivery (its own autocommit statement): [key] its delivery key
     * ([deliveryKey]), [deliveryId] its `Service-Webhook-Id`, [event] its event name, [body] its
     * raw JSON body. True when it was added, false when it was in the inbox already. A
     * [WebhookReceiver] in inbox mode calls it; throws `RoyaltyKitException.InvalidArgument` for
     * a bad key, an empty delivery id or a body larger than a delivery holds, and the driver's
     * exception when the database cannot be reached.
     */
    override fun enqueue(key: String, deliveryId: String, event: String, body: String): Boolean =
        autocommit().use { c ->
            c.prepare(protocol.enqueue(key, deliveryId, event, body, now())).use { protocol.enqueueReply(it.executeUpdate().toLong()) }
        }

    /**
     * What the inbox holds of [key] (the core's read-only lookup; delivery recovery asks it):
     * `NEW` never received, `DONE` processed, `IN_PROGRESS` received and not processed yet
     * (pending, or poison: a replay would not help). Never claims.
     */
    override fun state(key: String): ClaimState = autocommit().use { c ->
        protocol.lookupReply(
            c.prepare(protocol.lookup(key)).use { ps -> ps.executeQuery().use { rs -> if (rs.next()) rs.getString(1) else null } },
        )
    }

    /**
     * The poison entries, oldest first, at most [limit] (1 to 1000, `InvalidArgument` otherwise;
     * default: the core's `defaultPoisonListed()`, 100).
     */
    @JvmOverloads
    fun poisoned(limit: Int = defaultPoisonListed().toInt()): List<PoisonEntry> = autocommit().use { c ->
        c.prepare(protocol.poisoned(limit.toLong())).use { ps ->
            ps.executeQuery().use { rs ->
                val out = ArrayList<PoisonEntry>()
                while (rs.next()) {
                    out += PoisonEntry(rs.getString(1), rs.getString(2), rs.getString(3), rs.getLong(4), rs.getString(5), rs.getLong(6))
                }
                out
            }
        }
    }

    /**
     * Puts the poison entry [key] back to pending, due now, with no attempts counted (you fixed the
     * cause): the next worker runs it. False when [key] is not a poison entry.
     */
    fun retry(key: String): Boolean = autocommit().use { c ->
        c.prepare(protocol.retry(key, now())).use { protocol.guardedReply(it.executeUpdate().toLong()) }
    }

    /** The count of entries by state (`pending`, `done`, `poison`; a state without entries is absent). */
    fun counts(): Map<String, Long> = autocommit().use { c ->
        c.prepare(protocol.counts()).use { ps ->
            ps.executeQuery().use { rs ->
                val out = LinkedHashMap<String, Long>()
                while (rs.next()) out[rs.getString(1)] = rs.getLong(2)
                out
            }
        }
    }

    /** Deletes the done entries past their TTL and returns how many. Run it now and then. */
    fun purge(): Int = autocommit().use { c -> c.prepare(protocol.purge(now())).use { it.executeUpdate() } }

    /**
     * Runs the inbox until [stop] is set (checked before each claim and during each wait; an
     * entry being handled is finished first) or the thread is interrupted (`InterruptedException`):
     * claims the oldest due entry, runs [handler] with its event and the transaction's connection,
     * marks it done and commits; waits [pollSeconds] (null: the core's 1 s) when nothing is due.
     * Each entry gets at most [maxAttempts] handler runs (null: the core's 5; 1 to 100). [seed]
     * seeds the backoff's jitter (null: the OS RNG). A database that cannot be reached is
     * logged (logger `dev.royaltykit`, SEVERE) and tried again after the core's backoff, never
     * thrown. Returns what it did. Blocking: run it on a thread of its own.
     *
     * An interruption (the handler throws `InterruptedException`, `CancellationException`, an
     * interrupted I/O exception; or the thread is interrupted) rolls the open transaction back and
     * is thrown as is: the entry is not settled, and it is claimed again once its lease runs out.
     * So is an `Error` the handler throws.
     */
    @JvmOverloads
    @Throws(InterruptedException::class)
    fun runWorker(
        stop: AtomicBoolean = AtomicBoolean(false),
        maxAttempts: Int? = null,
        pollSeconds: Double? = null,
        seed: Long? = null,
        handler: InboxHandler,
    ): InboxReport = work(handler, stop, maxAttempts, pollSeconds, seed, drain = false)

    /**
     * As [runWorker], returning as soon as a claim finds nothing due (entries waiting for a retry
     * later, or held by another worker's lease, are left for a later run): processes what is due
     * now, each entry once, then returns what it did.
     */
    @JvmOverloads
    @Throws(InterruptedException::class)
    fun drain(maxAttempts: Int? = null, seed: Long? = null, handler: InboxHandler): InboxReport =
        work(handler, AtomicBoolean(false), maxAttempts, null, seed, drain = true)

    /** The claim at [now]: the entry it returned, or null when nothing is due. */
    private fun claim(now: Long): InboxEntry? = autocommit().use { c ->
        c.prepare(protocol.claim(now)).use { ps ->
            if (!ps.execute()) return@use null
            ps.resultSet.use { rs ->
                if (!rs.next()) null else InboxEntry(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getLong(5).toUInt())
            }
        }
    }

    /** Opens the handler's transaction on a connection of its own and returns it. */
    private fun begin(): Connection {
        val c = autocommit()
        try {
            execute(c, protocol.begin())
            return c
        } catch (e: Exception) {
            c.closeQuietly()
            throw e
        }
    }

    /** Rolls [c]'s transaction back and closes it; a failed rollback too (the database rolls back
     * a transaction whose connection is gone). */
    private fun rollBackAndClose(c: Connection) {
        try {
            execute(c, protocol.rollback())
        } catch (ignored: Exception) {
            // closed below: the database rolls the transaction back
        } finally {
            c.closeQuietly()
        }
    }

    /** The worker loop this binding's inboxes share ([InboxRunner]), on this table: transactional. */
    private inner class Runner(private val handler: InboxHandler) : InboxRunner<Connection>(true, clock, this@JdbcInbox.onError) {
        override val description: String get() = "inbox $table"
        override fun claim(now: Long): InboxEntry? = this@JdbcInbox.claim(now)
        override fun begin(): Connection = this@JdbcInbox.begin()
        override fun handle(event: WebhookEvent, tx: Connection?) = handler.handle(event, checkNotNull(tx))
        override fun markDone(tx: Connection?, key: String, attempts: Long, now: Long): Boolean =
            checkNotNull(tx).prepare(protocol.markDone(key, attempts, now)).use { protocol.guardedReply(it.executeUpdate().toLong()) }
        override fun commit(tx: Connection) = execute(tx, protocol.commit())
        override fun release(tx: Connection) = tx.closeQuietly()
        override fun rollBackAndClose(tx: Connection) = this@JdbcInbox.rollBackAndClose(tx)
        override fun settle(key: String, attempts: Long, poison: Boolean, retryAt: Long, error: String) {
            autocommit().use { c -> c.prepare(protocol.settle(key, attempts, poison, retryAt, error)).use { it.executeUpdate() } }
        }
    }

    /** Performs the steps of the core's worker; every decision is the core's. */
    private fun work(
        handler: InboxHandler, stop: AtomicBoolean, maxAttempts: Int?, pollSeconds: Double?, seed: Long?, drain: Boolean,
    ): InboxReport = Runner(handler).work(stop, maxAttempts, pollSeconds, seed, drain)

    /** Frees the protocol's native memory (the DataSource is yours to close). */
    override fun close() = protocol.close()

    /** The dialect and table only: never the DataSource, whose URL may hold a password. */
    override fun toString(): String = "JdbcInbox(dialect=${dialect.name.lowercase()}, table=$table)"

}
