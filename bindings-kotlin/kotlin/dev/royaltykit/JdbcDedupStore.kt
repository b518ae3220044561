// The transactional dedup store over JDBC: runs the core's SQL protocol (SqlDedupProtocol), decides
// nothing itself.
package dev.royaltykit

import dev.royaltykit.types.ClaimState
import dev.royaltykit.types.ParamStyle
import dev.royaltykit.types.RoyaltyKitException
import dev.royaltykit.types.SqlDialect
import dev.royaltykit.types.FfiConverterTypeSqlStatement
import dev.royaltykit.types.SqlStatement
import java.sql.Connection
import java.sql.PreparedStatement
import java.time.Clock
import java.util.concurrent.ConcurrentHashMap
import javax.sql.DataSource

/**
 * The dedup contract in the handler's own database over JDBC (PostgreSQL 9.5+, SQLite 3.35+), for
 * a [WebhookReceiver] built with a handler that takes the transaction's connection: the delivery
 * is claimed with a row (its own autocommit statement, with a lease), a transaction is opened, the
 * handler writes its effect on that connection, the row is marked done **inside** the same
 * transaction, and it commits the mark and the effect together or not at all — exactly once,
 * whatever crashes. Every statement and the meaning of its result are the core's ([SqlDedupProtocol]);
 * this class only runs them.
 *
 * [dataSource]: where connections come from (use a pool such as HikariCP in production: each
 * claim and release takes a connection of its own, and each delivery one for its transaction).
 * [dialect]: detected from the connection's metadata when null. [table], [ttlSeconds],
 * [leaseSeconds]: the core's defaults when null (`royaltykit_dedup`, the dedup window's TTL, a
 * 60 s lease: keep the handler shorter). [clock]: the time the rows' expiries are written in (Unix
 * seconds of its instant). [createTable]: create the table and its index now when missing.
 *
 * On SQLite the transaction is opened with `BEGIN IMMEDIATE` (the write lock at once, so two
 * processes never deadlock on a lock upgrade) on a connection left in JDBC autocommit mode;
 * writers wait for the lock as long as the DataSource's busy timeout says. On PostgreSQL it is the
 * connection's own transaction (`autoCommit = false`). Thread-safe. `toString` never shows the
 * DataSource (its URL may hold a password).
 */
class JdbcDedupStore @JvmOverloads constructor(
    private val dataSource: DataSource,
    dialect: SqlDialect? = null,
    table: String? = null,
    ttlSeconds: Long? = null,
    leaseSeconds: Long? = null,
    private val clock: Clock = Clock.systemUTC(),
    createTable: Boolean = true,
) : TransactionalDedupStore, DeliveryStates, AutoCloseable {
    private val protocol: SqlDedupProtocol
    private val sqlite: Boolean

    /** This process's claim tokens, by key. */
    private val tokens = ConcurrentHashMap<String, String>()

    /** The keys marked in each open transaction (their tokens are dropped when it ends). */
    private val marked = ConcurrentHashMap<Connection, MutableList<String>>()

    init {
        val known = dialect ?: dataSource.connection.use { detectDialect(it, "JdbcDedupStore") }
        protocol = SqlDedupProtocol(known, ParamStyle.QMARK, table, ttlSeconds, leaseSeconds)
        sqlite = known == SqlDialect.SQLITE
        if (createTable) {
            try {
                createTable()
            } catch (e: Exception) {
                protocol.close()
                throw e
            }
        }
    }

    /** The dialect the statements are written for. */
    val dialect: SqlDialect get() = protocol.dialect()

    /** The dedup table's name. */
    val table: String get() = protocol.table()

    private fun now(): Long = clock.instant().epochSecond

    /** A connection in autocommit mode for one short statement or two; closed by [use]. */
    private fun autocommit(): Connection = dataSource.connection.also { c ->
        try {
            if (!c.autoCommit) c.autoCommit = true
        } catch (e: Exception) {
            c.closeQuietly()
            throw e
        }
    }

    /** Creates the table and its index when missing (idempotent). */
    fun createTable() {
        autocommit().use { c -> c.createStatement().use { s -> protocol.schema().forEach { s.execute(it) } } }
    }

    /** Claims [key] (its own autocommit statement): `NEW` (this worker now holds it with a lease),
     * `IN_PROGRESS` (another worker holds it) or `DONE` (processed). */
    override fun claim(key: String): ClaimState {
        val (token, claim) = claimStatement(key, now())
        return autocommit().use { c ->
            val returned = c.prepare(claim).use { ps ->
                if (ps.execute()) ps.resultSet.use { rs -> var n = 0L; while (rs.next()) n++; n } else 0L
            }
            if (claimReply(returned) == ClaimState.NEW) {
                tokens[key] = token
                ClaimState.NEW
            } else {
                val state = c.prepare(protocol.state(key)).use { ps ->
                    ps.executeQuery().use { rs -> if (rs.next()) rs.getString(1) else null }
                }
                protocol.stateReply(state)
            }
        }
    }

    /** What the table holds of [key] now (the core's read-only lookup, its own autocommit statement):
     * `DONE`, `IN_PROGRESS` (a live claim) or `NEW` (no live row). Never claims. */
    override fun state(key: String): ClaimState = autocommit().use { c ->
        protocol.lookupReply(
            c.prepare(protocol.lookup(key, now())).use { ps -> ps.executeQuery().use { rs -> if (rs.next()) rs.getString(1) else null } },
        )
    }

    /** Opens the handler's transaction on a connection of its own and returns it; [commitTransaction]
     * or [rollback] closes it. */
    override fun begin(): Connection {
        val c = dataSource.connection
        try {
            if (sqlite) {
                if (!c.autoCommit) c.autoCommit = true
                c.createStatement().use { it.execute(protocol.begin()) }
            } else {
                c.autoCommit = false
            }
            return c
        } catch (e: Exception) {
            c.closeQuietly()
            throw e
        }
    }

    /** Marks [key] done inside the transaction of [connection]: false when this worker's claim was
     * lost (its lease ran out and another worker took the key). */
    override fun markDone(connection: Connection, key: String): Boolean {
        val changed = connection.prepare(markDoneStatement(key, tokens[key] ?: protocol.newToken(), now())).use { it.executeUpdate() }
        marked.getOrPut(connection) { java.util.Collections.synchronizedList(ArrayList()) }.add(key)
        return guardedReply(changed.toLong())
    }

    /** Commits the marks and the effect together, then closes [connection]; when the commit fails it
     * rolls back, closes and throws. */
    override fun commitTransaction(connection: Connection) {
        try {
            if (sqlite) connection.createStatement().use { it.execute(protocol.commit()) } else connection.commit()
        } catch (e: Exception) {
            try {
                rollbackOnly(connection)
            } catch (r: Exception) {
                e.addSuppressed(r)
            }
            finish(connection, committed = false)
            throw e
        }
        finish(connection, committed = true)
    }

    /** Rolls the transaction of [connection] back, then closes it (a rollback that fails still
     * closes it: the database rolls back a transaction whose connection is gone). */
    override fun rollback(connection: Connection) {
        try {
            rollbackOnly(connection)
        } finally {
            finish(connection, committed = false)
        }
    }

    private fun rollbackOnly(connection: Connection) {
        if (sqlite) connection.createStatement().use { it.execute(protocol.rollback()) } else connection.rollback()
    }

    /** Closes a transaction's connection (autocommit restored for a pool) and forgets its marks. */
    private fun finish(connection: Connection, committed: Boolean) {
        val keys = marked.remove(connection)
        if (committed) keys?.let { synchronized(it) { it.toList() } }?.forEach { tokens.remove(it) }
        try {
            if (!sqlite && !connection.isClosed) connection.autoCommit = true
        } catch (ignored: Exception) {
            // a broken connection: closed below all the same
        }
        connection.closeQuietly()
    }

    /** Gives up this worker's claim on [key] (autocommit, after a rollback): never another worker's,
     * never a row whose transaction committed. */
    override fun release(key: String) {
        try {
            autocommit().use { c -> c.prepare(protocol.release(key, tokens[key] ?: protocol.newToken())).use { it.executeUpdate() } }
        } finally {
            tokens.remove(key)
        }
    }

    /** Deletes the rows expired now (claims whose lease ran out, deliveries past the TTL) and returns
     * how many. Run it now and then; correctness never depends on it. */
    fun purge(): Int = autocommit().use { c -> c.prepare(protocol.purge(now())).use { it.executeUpdate() } }

    // The per-delivery calls cross through JNI when it is in use ([FastDedup]), else through JNA.
    private val fast = FastDedup.of(sql = true) { protocol.uniffiCloneHandle() }

    /** A new token and its claim statement for [key] at [now]. */
    private fun claimStatement(key: String, now: Long): Pair<String, SqlStatement> =
        fast?.call(11, FfiConverterString.allocationSize(key) + FfiConverterLong.allocationSize(now)) {
            FfiConverterString.write(key, it)
            FfiConverterLong.write(now, it)
        }?.let { FfiConverterString.read(it) to FfiConverterTypeSqlStatement.read(it) }
            ?: protocol.newToken().let { it to protocol.claim(key, it, now) }

    private fun claimReply(rows: Long): ClaimState? {
        val answer = fast?.call(12, FfiConverterLong.allocationSize(rows)) { FfiConverterLong.write(rows, it) }
            ?: return protocol.claimReply(rows)
        return FfiConverterOptionalTypeClaimState.read(answer)
    }

    private fun markDoneStatement(key: String, token: String, now: Long): SqlStatement {
        val size = FfiConverterString.allocationSize(key) + FfiConverterString.allocationSize(token) + FfiConverterLong.allocationSize(now)
        val answer = fast?.call(13, size) {
            FfiConverterString.write(key, it)
            FfiConverterString.write(token, it)
            FfiConverterLong.write(now, it)
        } ?: return protocol.markDone(key, token, now)
        return FfiConverterTypeSqlStatement.read(answer)
    }

    private fun guardedReply(rows: Long): Boolean {
        val answer = fast?.call(14, FfiConverterLong.allocationSize(rows)) { FfiConverterLong.write(rows, it) }
            ?: return protocol.guardedReply(rows)
        return FfiConverterBoolean.read(answer)
    }

    /** Frees the protocol's native memory (the DataSource is yours to close). */
    override fun close() {
        fast?.close()
        protocol.close()
    }

    /** The dialect and table only: never the DataSource, whose URL may hold a password. */
    override fun toString(): String = "JdbcDedupStore(dialect=${dialect.name.lowercase()}, table=$table)"
}

/**
 * The dialect of [c]'s database for [what] (the class asking, named in the refusals): the core's
 * [detectSqlDialect] of what the driver reports; SQLite older than 3.35 (no `RETURNING`) and other
 * databases are refused (`IllegalArgumentException` with the core's message).
 */
internal fun detectDialect(c: Connection, what: String): SqlDialect {
    val meta = c.metaData
    return try {
        detectSqlDialect(meta.databaseProductName ?: "", meta.databaseProductVersion ?: "")
    } catch (e: RoyaltyKitException) {
        throw IllegalArgumentException("$what: ${e.message}", e)
    }
}

/** [statement] prepared on this connection with its arguments bound (closed when binding fails). */
internal fun Connection.prepare(statement: SqlStatement): PreparedStatement {
    val ps = prepareStatement(statement.sql)
    try {
        statement.args.forEachIndexed { i, a -> ps.setString(i + 1, a) }
    } catch (e: Exception) {
        ps.close()
        throw e
    }
    return ps
}

/** Closes this connection, ignoring a failure (it is broken already: nothing to free). */
internal fun Connection.closeQuietly() {
    try {
        close()
    } catch (ignored: Exception) {
        // already broken: nothing to free
    }
}
