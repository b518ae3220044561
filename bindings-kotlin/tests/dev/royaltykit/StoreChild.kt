// A receiver process for StoresTest: receives one delivery on a JdbcDedupStore and SIGKILLs
// itself at the step it is told, as a crash would.
//
//   java -cp … dev.royaltykit.StoreChildKt <postgres|sqlite> <jdbc url or sqlite file> <table>
//        <effects table> <delivery id> <kill point> [<start at, Unix ms>]
//
// Kill points: none, after_claim, after_mark, after_effect, after_commit; `restart` runs the
// cluster's restart command (ROYALTYKIT_PG_RESTART) after the effect is written; `slow` holds the
// transaction 0.5 s after the effect (for races). Prints the reply's status and body.
package dev.royaltykit

import java.sql.Connection
import javax.sql.DataSource

/** What StoresTest and its child process share: the delivery and how to reach the database. */
object StoreFixture {
    const val SECRET = "whsec_store_tests_0123456789abcdef"
    const val NAMESPACE = "org-7/stores"
    const val LEASE = 5L
    const val NOW = 1_763_900_000L

    /** The body of delivery [did]: a release change whose event key is its own. */
    fun body(did: String): ByteArray =
        ("{\"event\":\"enterprise.release.updated\",\"occurred_at\":\"2026-11-22T04:05:06Z\"," +
            "\"resource\":{\"type\":\"release\",\"reference\":\"$did\",\"url\":\"/api/v1/releases/$did\"}}").toByteArray()

    /** The signed headers of delivery [did] (the same every time: a fixed timestamp). */
    fun headers(did: String): Map<String, String> = signWebhook(SECRET, body(did), NOW, did)

    /** A DataSource from the driver itself: [target] is a JDBC URL (PostgreSQL) or a file (SQLite). */
    fun dataSource(kind: String, target: String): DataSource = when (kind) {
        "postgres" -> org.postgresql.ds.PGSimpleDataSource().apply { setURL(target) }
        "sqlite" -> org.sqlite.SQLiteDataSource().apply {
            url = "jdbc:sqlite:$target"
            setBusyTimeout(10_000)
        }
        else -> throw IllegalArgumentException("unknown database kind $kind")
    }

    /** The handler's effect: one row per delivery in [effects], written on the transaction's connection. */
    fun writeEffect(connection: Connection, effects: String, deliveryId: String) {
        connection.prepareStatement("INSERT INTO $effects (delivery_id) VALUES (?)").use {
            it.setString(1, deliveryId)
            it.executeUpdate()
        }
    }
}

fun main(args: Array<String>) {
    val (kind, target, table, effects, did) = args
    val kill = args[5]
    val startAt = args.getOrNull(6)?.toLong() ?: 0L

    fun die(point: String) {
        if (kill != point) return
        System.out.flush()
        ProcessBuilder("kill", "-KILL", ProcessHandle.current().pid().toString()).start().waitFor()
        Thread.sleep(60_000) // never reached: the signal is delivered at once
        throw IllegalStateException("still alive after SIGKILL")
    }

    val inner = JdbcDedupStore(
        StoreFixture.dataSource(kind, target), table = table, leaseSeconds = StoreFixture.LEASE, createTable = false,
    )
    val store = object : TransactionalDedupStore by inner {
        override fun claim(key: String) = inner.claim(key).also { die("after_claim") }
        override fun markDone(connection: Connection, key: String) = inner.markDone(connection, key).also { die("after_mark") }
        override fun commitTransaction(connection: Connection) {
            inner.commitTransaction(connection)
            die("after_commit")
        }
    }
    val receiver = WebhookReceiver(listOf(StoreFixture.SECRET), StoreFixture.NAMESPACE, store) { delivery, connection ->
        StoreFixture.writeEffect(connection, effects, delivery.deliveryId)
        die("after_effect")
        if (kill == "restart") {
            val rc = ProcessBuilder("bash", "-c", System.getenv("ROYALTYKIT_PG_RESTART"))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.INHERIT)
                .start().waitFor()
            check(rc == 0) { "the restart command failed: exit $rc" }
        }
        if (kill == "slow") Thread.sleep(500)
    }
    while (System.currentTimeMillis() < startAt) Thread.sleep(1)
    val reply = receiver.receive(StoreFixture.headers(did), StoreFixture.body(did), StoreFixture.NOW)
    println("${reply.status} ${reply.body}")
    receiver.close()
    inner.close()
}
