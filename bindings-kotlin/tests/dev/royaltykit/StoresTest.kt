package dev.royaltykit

import com.google.gson.JsonParser
import dev.royaltykit.StoreFixture.LEASE
import dev.royaltykit.StoreFixture.NAMESPACE
import dev.royaltykit.StoreFixture.NOW
import dev.royaltykit.StoreFixture.SECRET
import dev.royaltykit.types.ClaimState
import dev.royaltykit.types.SqlDialect
import dev.royaltykit.types.VerifiedWebhook
import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertNotNull
import org.junit.Assert.assertSame
import org.junit.Assert.assertTrue
import org.junit.Before
import org.junit.Rule
import org.junit.Test
import org.junit.rules.TemporaryFolder
import org.junit.runner.RunWith
import org.junit.runners.Parameterized
import java.io.File
import java.net.URI
import java.sql.Connection
import java.time.Clock
import java.time.Duration
import java.util.UUID
import java.util.concurrent.TimeUnit
import javax.sql.DataSource

/**
 * JdbcDedupStore against a real PostgreSQL (the throw-away cluster scripts/test-kotlin.sh starts:
 * ROYALTYKIT_PG_DSN) and SQLite files, through the drivers from Maven Central: a receiver process
 * (StoreChild.kt) SIGKILLed at every step, PostgreSQL restarted mid-delivery, two processes racing
 * one delivery. Whatever happens, the effect is applied exactly once.
 */
abstract class StoreCase(protected val kind: String) {
    companion object {
        /** ROYALTYKIT_PG_DSN (postgresql://user@host:port/db) as a JDBC URL. */
        fun postgresUrl(password: String? = null): String {
            val dsn = System.getenv("ROYALTYKIT_PG_DSN")
                ?: throw IllegalStateException(
                    "ROYALTYKIT_PG_DSN is not set: run the suite with scripts/test-kotlin.sh, which starts a " +
                        "PostgreSQL cluster (source scripts/postgres.sh; start_postgres)",
                )
            val u = URI(dsn)
            val pw = if (password == null) "" else "&password=$password"
            return "jdbc:postgresql://${u.host}:${u.port}${u.path}?user=${u.userInfo}$pw"
        }
    }

    @get:Rule
    val tmp = TemporaryFolder()

    protected val table = "dedup_" + UUID.randomUUID().toString().replace("-", "").take(12)
    private lateinit var target: String
    private lateinit var effects: String
    private lateinit var dataSource: DataSource

    @Before
    fun createTables() {
        if (kind == "postgres") {
            target = postgresUrl()
            effects = "effects_$table"
        } else {
            target = File(tmp.root, "app.sqlite").path
            effects = "effects"
        }
        dataSource = StoreFixture.dataSource(kind, target)
        dataSource.connection.use { c ->
            c.createStatement().use { it.execute("CREATE TABLE IF NOT EXISTS $effects (delivery_id TEXT NOT NULL)") }
        }
        JdbcDedupStore(dataSource, table = table, leaseSeconds = LEASE).close() // creates the table
    }

    /** A store whose clock is [later] seconds ahead (past the lease: another worker's view later on). */
    protected fun store(later: Long = 0): JdbcDedupStore = JdbcDedupStore(
        dataSource, table = table, leaseSeconds = LEASE,
        clock = Clock.offset(Clock.systemUTC(), Duration.ofSeconds(later)), createTable = false,
    )

    protected fun handler(delivery: VerifiedWebhook, connection: Connection) =
        StoreFixture.writeEffect(connection, effects, delivery.deliveryId)

    protected fun newDelivery(name: String) = "dlv_${name}_" + UUID.randomUUID().toString().take(8)

    /** Status and `result` of a delivery received on a fresh store [later] seconds ahead. */
    protected fun deliver(
        did: String,
        later: Long = 0,
        effect: (VerifiedWebhook, Connection) -> Unit = this::handler,
    ): Pair<Int, String> = store(later).use { s ->
        WebhookReceiver(listOf(SECRET), NAMESPACE, s, handler = effect).use { r ->
            val reply = r.receive(StoreFixture.headers(did), StoreFixture.body(did), NOW)
            reply.status to result(reply.body)
        }
    }

    /** The reply's `result` (`error` for a failure's body). */
    protected fun result(body: String): String =
        JsonParser.parseString(body).asJsonObject.let { (it["result"] ?: it["error"]).asString }

    protected fun effectsOf(did: String): Int = dataSource.connection.use { c ->
        c.prepareStatement("SELECT count(*) FROM $effects WHERE delivery_id = ?").use { ps ->
            ps.setString(1, did)
            ps.executeQuery().use { rs -> rs.next(); rs.getInt(1) }
        }
    }

    protected fun states(): List<String> = dataSource.connection.use { c ->
        c.createStatement().use { s ->
            s.executeQuery("SELECT state FROM $table ORDER BY dedup_key").use { rs ->
                generateSequence { if (rs.next()) rs.getString(1) else null }.toList()
            }
        }
    }

    /** A finished child process: its exit code, stdout and stderr. */
    protected class Child(val exit: Int, val out: String, val err: String) {
        override fun toString() = "exit $exit\nstdout: $out\nstderr: $err"
    }

    protected fun child(did: String, kill: String, startAt: Long = 0): () -> Child {
        val name = "$kill-${UUID.randomUUID()}"
        val out = File(tmp.root, "$name.out")
        val err = File(tmp.root, "$name.err")
        val java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java")
        val jnaDir = tmp.newFolder("jna-$name") // the native library JNA unpacks, left there by a SIGKILL
        val p = ProcessBuilder(
            java, "-cp", System.getProperty("java.class.path"), "-Djna.tmpdir=${jnaDir.path}",
            "dev.royaltykit.StoreChildKt", kind, target, table, effects, did, kill, startAt.toString(),
        ).redirectOutput(out).redirectError(err).start()
        return {
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly()
                throw AssertionError("the child process ($kill) did not finish in 120 s: ${err.readText()}")
            }
            Child(p.exitValue(), out.readText().trim(), err.readText())
        }
    }

    protected val sigkilled = 128 + 9

    protected fun killedBeforeItsCommit(point: String) {
        val did = newDelivery(point)
        val c = child(did, point)()
        assertEquals(c.toString(), sigkilled, c.exit)
        assertEquals("the effect died with the transaction", 0, effectsOf(did))
        // inside the lease the claim still stands: the redelivery is told to come back
        assertEquals(503, deliver(did).first)
        assertEquals(0, effectsOf(did))
        assertEquals(200 to "processed", deliver(did, later = LEASE + 1))
        assertEquals(1, effectsOf(did))
        assertEquals("the delivery key only (dedup by Service-Webhook-Id)", listOf("done"), states())
        assertEquals(200 to "acknowledge", deliver(did, later = LEASE + 2))
        assertEquals(1, effectsOf(did))
    }

}

@RunWith(Parameterized::class)
class StoresTest(kind: String) : StoreCase(kind) {
    companion object {
        @JvmStatic
        @Parameterized.Parameters(name = "{0}")
        fun kinds(): List<Array<Any>> = listOf(arrayOf<Any>("postgres"), arrayOf<Any>("sqlite"))
    }

    @Test
    fun aReceiverKilledAfterItsClaimLeavesNothingAndTheRedeliveryAppliesItOnce() = killedBeforeItsCommit("after_claim")

    @Test
    fun aReceiverKilledAfterItsMarkLeavesNothingAndTheRedeliveryAppliesItOnce() = killedBeforeItsCommit("after_mark")

    @Test
    fun aReceiverKilledAfterWritingTheEffectLeavesNothingAndTheRedeliveryAppliesItOnce() = killedBeforeItsCommit("after_effect")

    @Test
    fun aReceiverKilledAfterItsCommitLeftTheEffectAndTheRedeliveryIsADuplicate() {
        val did = newDelivery("after_commit")
        val c = child(did, "after_commit")()
        assertEquals(c.toString(), sigkilled, c.exit)
        assertEquals(1, effectsOf(did))
        assertEquals(200 to "acknowledge", deliver(did))
        assertEquals(200 to "acknowledge", deliver(did, later = LEASE + 1))
        assertEquals(1, effectsOf(did))
    }

    @Test
    fun aDeliveryInAChildThatIsNotKilledIsProcessed() {
        val did = newDelivery("none")
        val c = child(did, "none")()
        assertEquals(c.toString(), 0, c.exit)
        val (status, body) = c.out.split(" ", limit = 2)
        assertEquals(c.toString(), "200", status)
        assertEquals("processed", result(body))
        assertEquals(1, effectsOf(did))
        assertEquals("the delivery key only (dedup by Service-Webhook-Id)", listOf("done"), states())
    }

    @Test
    fun twoProcessesRacingOneDeliveryApplyItOnce() {
        val did = newDelivery("race")
        val start = System.currentTimeMillis() + 2000
        val children = List(2) { child(did, "slow", start) }.map { it() }
        children.forEach { assertEquals(it.toString(), 0, it.exit) }
        val statuses = children.map { it.out.split(" ")[0].toInt() }.sorted()
        assertEquals(children.toString(), 200, statuses[0])
        assertTrue(children.toString(), statuses[1] in setOf(200, 503))
        assertEquals(1, effectsOf(did))
        assertEquals(200 to "acknowledge", deliver(did, later = LEASE + 1))
        assertEquals(1, effectsOf(did))
    }

    @Test
    fun aFailingHandlerRollsItsEffectBackAndTheRedeliveryAppliesItOnce() {
        val errors = ArrayList<Exception>()
        failingHandler("fails") { e, _ -> errors.add(e) }
        assertEquals("the handler failed after writing", errors.single().message)
    }

    @Test
    fun anOnErrorThatThrowsStillRollsBackReleasesAndAnswers500() {
        // onError's own exception is logged and changes nothing, as in Python and Node.
        val told = ArrayList<String>()
        failingHandler("onerror") { e, _ ->
            told.add(e.message!!)
            throw IllegalArgumentException("onError itself failed")
        }
        assertEquals(listOf("the handler failed after writing"), told)
    }

    @Test
    fun aCancellationOnErrorThrowsCancelsTheDelivery() {
        // An interrupted onError (blocked on its own I/O) cancels the delivery, as a handler's does.
        val did = newDelivery("onerror-cancelled")
        val cancellation = java.util.concurrent.CancellationException("cancelled in onError")
        val thrown = runCatching {
            store().use { s ->
                WebhookReceiver(listOf(SECRET), NAMESPACE, s, onError = { _, _ -> throw cancellation }, handler = { d: VerifiedWebhook, c: Connection ->
                    handler(d, c)
                    throw IllegalStateException("the handler failed after writing")
                }).use { it.receive(StoreFixture.headers(did), StoreFixture.body(did), NOW) }
            }
        }.exceptionOrNull()
        assertSame(cancellation, thrown)
        assertEquals(0, effectsOf(did))
        assertEquals("released at once", emptyList<String>(), states())
    }

    /** A handler that writes its effect, then fails, told to [onError]: a 500, the effect rolled
     * back, the key released at once, and the redelivery processed once. */
    private fun failingHandler(name: String, onError: (Exception, VerifiedWebhook) -> Unit) {
        val did = newDelivery(name)
        val failing = { d: VerifiedWebhook, c: Connection ->
            handler(d, c)
            throw IllegalStateException("the handler failed after writing")
        }
        val reply = store().use { s ->
            WebhookReceiver(listOf(SECRET), NAMESPACE, s, onError = onError, handler = failing).use {
                it.receive(StoreFixture.headers(did), StoreFixture.body(did), NOW)
            }
        }
        assertEquals(500, reply.status)
        assertEquals(0, effectsOf(did))
        assertEquals("released at once: the redelivery need not wait for the lease", emptyList<String>(), states())
        assertEquals(200 to "processed", deliver(did))
        assertEquals(1, effectsOf(did))
    }

    @Test
    fun theDialectComesFromTheCoreAndAnOldSqliteIsRefused() {
        assertEquals(SqlDialect.POSTGRES, detectSqlDialect("PostgreSQL", "16.2"))
        assertEquals(SqlDialect.SQLITE, detectSqlDialect("SQLite", "3.45.1"))
        val old = runCatching { detectSqlDialect("SQLite", "3.34.1") }.exceptionOrNull()
        assertTrue(old.toString(), old is dev.royaltykit.types.RoyaltyKitException.InvalidArgument && "3.35 or later" in old.message!!)
        val other = runCatching { detectSqlDialect("MySQL", "8.0") }.exceptionOrNull()
        assertTrue(other.toString(), other is dev.royaltykit.types.RoyaltyKitException.InvalidArgument && "PostgreSQL and SQLite" in other.message!!)
    }

    @Test
    fun aCancelledHandlerRollsBackReleasesAndTheCancellationGoesOn() =
        cancelledMidDelivery(java.util.concurrent.CancellationException("the coroutine was cancelled"))

    @Test
    fun anInterruptedHandlerRollsBackReleasesAndTheInterruptionGoesOn() =
        cancelledMidDelivery(InterruptedException("the thread was interrupted"))

    @Test
    fun anInterruptionADriverWrappedIsACancellationToo() =
        // JDBC drivers wrap the interrupt of a blocked query (as the client and the inbox worker see it)
        cancelledMidDelivery(java.sql.SQLException("the query was interrupted", InterruptedException()))

    /** A handler that writes its effect, then is cancelled: the same exception goes on, nothing stays. */
    private fun cancelledMidDelivery(cancellation: Exception) {
        val did = newDelivery("cancelled")
        val errors = ArrayList<Exception>()
        val thrown = runCatching {
            store().use { s ->
                WebhookReceiver(listOf(SECRET), NAMESPACE, s, onError = { e, _ -> errors.add(e) }, handler = { d: VerifiedWebhook, c: Connection ->
                    handler(d, c)
                    throw cancellation
                }).use { it.receive(StoreFixture.headers(did), StoreFixture.body(did), NOW) }
            }
        }.exceptionOrNull()
        assertSame(cancellation, thrown)
        assertEquals("a cancellation is not a handler failure", emptyList<Exception>(), errors)
        assertEquals(0, effectsOf(did))
        assertEquals("released at once: the redelivery need not wait for the lease", emptyList<String>(), states())
        assertEquals(200 to "processed", deliver(did))
        assertEquals(1, effectsOf(did))
    }

    @Test
    fun aClaimLostToAnotherWorkerRollsItsEffectBack() {
        val did = newDelivery("lost")
        var other: Pair<Int, String>? = null
        var ran = 0
        store().use { slow ->
            // this worker claims, then stalls past its lease; another takes the key over and finishes
            val stalling = object : TransactionalDedupStore by slow {
                override fun begin(): Connection {
                    other = deliver(did, later = LEASE + 1)
                    return slow.begin()
                }
            }
            val reply = WebhookReceiver(listOf(SECRET), NAMESPACE, stalling) { d, c ->
                ran++
                handler(d, c)
            }.use { it.receive(StoreFixture.headers(did), StoreFixture.body(did), NOW) }
            assertEquals(200 to "processed", other)
            assertEquals(503 to "retry_later", reply.status to result(reply.body))
        }
        assertEquals("it ran, and its mark found the key taken: its effect was rolled back", 1, ran)
        assertEquals(1, effectsOf(did))
        assertEquals("the delivery key only (dedup by Service-Webhook-Id)", listOf("done"), states())
    }

    @Test
    fun manyThreadsShareOneStore() {
        val dids = List(12) { newDelivery("t$it") }
        val statuses = java.util.Collections.synchronizedList(ArrayList<Int>())
        store().use { s ->
            WebhookReceiver(listOf(SECRET), NAMESPACE, s, handler = this::handler).use { r ->
                val threads = (0 until 3).map { i ->
                    val mine = dids.filterIndexed { n, _ -> n % 3 == i }
                    Thread {
                        for (did in mine + mine) statuses.add(r.receive(StoreFixture.headers(did), StoreFixture.body(did), NOW).status)
                    }.apply { start() }
                }
                threads.forEach { it.join(120_000) }
            }
        }
        assertEquals(List(12) { 1 }, dids.map { effectsOf(it) })
        assertEquals(24, statuses.size)
        assertTrue(statuses.toString(), statuses.count { it == 200 } >= 12 && statuses.toSet().all { it == 200 || it == 503 })
    }

    @Test
    fun purgeRemovesOnlyExpiredRows() {
        val did = newDelivery("purge")
        assertEquals(200 to "processed", deliver(did))
        store().use { assertEquals(0, it.purge()) }
        store(later = LEASE + 1).use { assertEquals("done rows keep their TTL, not the lease", 0, it.purge()) }
        assertEquals(1, states().size)
        store(later = 10L * 366 * 86_400 + 1).use { assertEquals(1, it.purge()) } // past any TTL
        assertEquals(emptyList<String>(), states())
    }

    @Test
    fun theDialectIsDetectedAndTheTableCreatedIdempotently() {
        store().use { s ->
            assertEquals(if (kind == "postgres") SqlDialect.POSTGRES else SqlDialect.SQLITE, s.dialect)
            assertEquals(table, s.table)
            s.createTable()
            s.createTable()
            assertEquals("JdbcDedupStore(dialect=$kind, table=$table)", s.toString())
        }
    }

    @Test
    fun aNewClaimIsNewAndAProcessedKeyIsDone() {
        store().use { s ->
            assertEquals(ClaimState.NEW, s.claim("k1"))
            assertEquals(ClaimState.IN_PROGRESS, s.claim("k1"))
            val c = s.begin()
            assertTrue(s.markDone(c, "k1"))
            s.commitTransaction(c)
            assertTrue(c.isClosed)
            assertEquals(ClaimState.DONE, s.claim("k1"))
            // a mark without this worker's claim changes nothing
            assertEquals(ClaimState.NEW, s.claim("k2"))
            val other = store(later = LEASE + 1)
            assertEquals(ClaimState.NEW, other.claim("k2")) // the lease ran out: taken over
            val c2 = s.begin()
            assertFalse(s.markDone(c2, "k2"))
            s.rollback(c2)
            assertTrue(c2.isClosed)
            s.release("k2") // never another worker's claim
            assertEquals(ClaimState.IN_PROGRESS, s.claim("k2"))
            other.release("k2")
            assertEquals(ClaimState.NEW, s.claim("k2"))
            other.close()
        }
    }

    @Test
    fun stateReadsTheKeyWithoutClaimingIt() {
        store().use { s ->
            assertEquals(ClaimState.NEW, s.state("k1"))
            assertEquals(ClaimState.NEW, s.state("k1"))
            assertEquals(emptyList<String>(), states()) // the lookups wrote nothing
            assertEquals(ClaimState.NEW, s.claim("k1"))
            assertEquals(ClaimState.IN_PROGRESS, s.state("k1"))
            val c = s.begin()
            assertTrue(s.markDone(c, "k1"))
            assertEquals(ClaimState.IN_PROGRESS, s.state("k1")) // not yet committed
            s.commitTransaction(c)
            assertEquals(ClaimState.DONE, s.state("k1"))
            // a claim whose lease ran out is forgotten: new again, as the next claim would find it
            assertEquals(ClaimState.NEW, s.claim("k2"))
            store(later = LEASE + 1).use { later -> assertEquals(ClaimState.NEW, later.state("k2")) }
            s.release("k2")
            assertEquals(ClaimState.NEW, s.state("k2"))
            assertEquals(listOf("done"), states())
        }
    }
}

/**
 * The receiver's transactional loop against a recording store: it performs exactly the steps the
 * core returns and reports each outcome (a throwing store call is a store failure, a false mark a
 * lost claim, a failed rollback still rolled back).
 */
/** The scenarios only a server has: a restart mid-delivery, a database that cannot be reached. */
class PostgresStoresTest : StoreCase("postgres") {
    @Test
    fun postgresRestartedMidDeliveryAnswers503AndLosesNothing() {
        assertNotNull("ROYALTYKIT_PG_RESTART is not set", System.getenv("ROYALTYKIT_PG_RESTART"))
        val did = newDelivery("restart")
        val c = child(did, "restart")()
        assertEquals(c.toString(), 0, c.exit)
        assertEquals(c.toString(), "503", c.out.split(" ")[0])
        assertEquals(0, effectsOf(did))
        // the claims were released on new connections: the redelivery is processed at once
        assertEquals(200 to "processed", deliver(did))
        assertEquals(1, effectsOf(did))
    }

    @Test
    fun anUnreachableDatabaseAnswers503AndThePasswordNeverShows() {
        // the store over a DataSource whose URL holds a password
        val withPassword = org.postgresql.ds.PGSimpleDataSource().apply { setURL(postgresUrl("s3cret-pw")) }
        JdbcDedupStore(withPassword, table = table, createTable = false).use { assertFalse(it.toString().contains("s3cret")) }
        // nothing listens on port 1: every claim fails, the receiver answers 503
        val nowhere = org.postgresql.ds.PGSimpleDataSource().apply {
            setURL("jdbc:postgresql://127.0.0.1:1/postgres?user=postgres&password=s3cret-pw&connectTimeout=2")
        }
        JdbcDedupStore(nowhere, SqlDialect.POSTGRES, table = table, createTable = false).use { s ->
            assertFalse(s.toString().contains("s3cret"))
            val failure = runCatching { s.claim("k") }.exceptionOrNull()
            assertNotNull(failure)
            assertFalse(failure.toString(), failure.toString().contains("s3cret"))
            WebhookReceiver(listOf(SECRET), NAMESPACE, s) { _, _ -> throw AssertionError("never run") }.use { r ->
                val did = newDelivery("nowhere")
                val reply = r.receive(StoreFixture.headers(did), StoreFixture.body(did), NOW)
                assertEquals(503, reply.status)
                assertFalse(reply.body.contains("s3cret"))
            }
        }
    }
}

class TransactionalReceiverTest {
    private val did = "dlv_driver"

    private class Recording(
        val failBegin: Boolean = false,
        val lose: String? = null,
        val failMark: Boolean = false,
        val failCommit: Boolean = false,
        val failRollback: Boolean = false,
    ) : TransactionalDedupStore {
        val calls = ArrayList<String>()
        val connection: Connection = java.lang.reflect.Proxy.newProxyInstance(
            Connection::class.java.classLoader, arrayOf(Connection::class.java),
        ) { _, m, _ -> if (m.name == "toString") "tx" else throw UnsupportedOperationException(m.name) } as Connection

        private val keys = ArrayList<String>()

        /** `delivery` or `content`: the keys in the order they are first claimed. */
        private fun short(key: String): String {
            if (key !in keys) keys += key
            return listOf("delivery", "content")[keys.indexOf(key)]
        }

        override fun claim(key: String): ClaimState { calls += "claim ${short(key)}"; return ClaimState.NEW }
        override fun release(key: String) { calls += "release ${short(key)}" }
        override fun begin(): Connection {
            calls += "begin"
            if (failBegin) throw java.sql.SQLException("down")
            return connection
        }
        override fun markDone(connection: Connection, key: String): Boolean {
            assertSame(this.connection, connection)
            calls += "mark ${short(key)}"
            if (failMark) throw java.sql.SQLException("lost")
            return short(key) != lose
        }
        override fun commitTransaction(connection: Connection) {
            calls += "commit"
            if (failCommit) throw java.sql.SQLException("lost")
        }
        override fun rollback(connection: Connection) {
            calls += "rollback"
            if (failRollback) throw java.sql.SQLException("gone")
        }
    }

    /** The reply's status and `result` (`error` for a failure's body); both keys claimed unless told. */
    private fun receive(
        store: Recording,
        claimContentKey: Boolean = true,
        handler: (VerifiedWebhook, Connection) -> Unit = { _, c -> store.calls += "handler $c" },
    ): Pair<Int, String> =
        WebhookReceiver(listOf(SECRET), NAMESPACE, store, claimContentKey = claimContentKey, onError = { _, _ -> }, handler = handler).use { r ->
            val reply = r.receive(StoreFixture.headers(did), StoreFixture.body(did), NOW)
            reply.status to JsonParser.parseString(reply.body).asJsonObject.let { (it["result"] ?: it["error"]).asString }
        }

    @Test
    fun byDefaultOnlyTheDeliveryKeyIsClaimedAndMarked() {
        val s = Recording()
        assertEquals(200 to "processed", receive(s, claimContentKey = false))
        assertEquals(listOf("claim delivery", "begin", "handler tx", "mark delivery", "commit"), s.calls)
    }

    @Test
    fun theHandlerRunsInsideTheTransactionThenTheKeysAreMarkedInIt() {
        val s = Recording()
        assertEquals(200 to "processed", receive(s))
        assertEquals(
            listOf("claim delivery", "claim content", "begin", "handler tx", "mark delivery", "mark content", "commit"),
            s.calls,
        )
    }

    @Test
    fun aLostClaimRollsTheEffectBackAndReleases() {
        val s = Recording(lose = "content")
        assertEquals(503 to "retry_later", receive(s))
        assertEquals(
            listOf("claim delivery", "claim content", "begin", "handler tx", "mark delivery", "mark content", "rollback",
                "release delivery", "release content"),
            s.calls,
        )
    }

    @Test
    fun aFailedBeginOrCommitReleasesTheClaimsAnd503() {
        val b = Recording(failBegin = true)
        assertEquals(503, receive(b).first)
        assertEquals(listOf("claim delivery", "claim content", "begin", "release delivery", "release content"), b.calls)
        val c = Recording(failCommit = true)
        assertEquals(503, receive(c).first)
        assertEquals(
            listOf("claim delivery", "claim content", "begin", "handler tx", "mark delivery", "mark content", "commit",
                "release delivery", "release content"),
            c.calls,
        )
    }

    @Test
    fun aFailedMarkRollsBackReleasesAnd503() {
        val s = Recording(failMark = true)
        assertEquals(503, receive(s).first)
        assertEquals(
            listOf("claim delivery", "claim content", "begin", "handler tx", "mark delivery", "rollback", "release delivery",
                "release content"),
            s.calls,
        )
    }

    @Test
    fun aFailingHandlerIsRolledBackEvenWhenTheRollbackFails() {
        val s = Recording(failRollback = true)
        assertEquals(500, receive(s) { _, _ -> throw IllegalStateException("boom") }.first)
        assertEquals(
            listOf("claim delivery", "claim content", "begin", "rollback", "release delivery", "release content"),
            s.calls,
        )
    }

    @Test
    fun anErrorThrownThroughTheHandlerStillRollsTheTransactionBack() {
        val s = Recording()
        val thrown = runCatching { receive(s) { _, _ -> throw StackOverflowError("deep") } }.exceptionOrNull()
        assertTrue(thrown.toString(), thrown is StackOverflowError)
        assertEquals("rollback", s.calls.last())
    }
}
