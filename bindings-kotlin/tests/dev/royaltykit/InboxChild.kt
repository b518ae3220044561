// An inbox worker process for InboxKillTest: drains a JdbcInbox on PostgreSQL whose handler writes
// one effect row (the resource reference is the effects table's primary key) and then sleeps a
// random 0-300 ms, so that a SIGKILL from the test lands anywhere in the worker's steps.
//
//   java -cp … dev.royaltykit.InboxChildKt <jdbc url> <inbox table> <effects table>
//
// Prints `ready` once the inbox is open, then per entry `start <ref>` and `effect <ref>` (the
// effect written, the transaction still open) and `end <ref>`; `drained <processed> <retried>
// <poisoned>` when nothing is due. An effect insert refused as a duplicate (the effect of an
// entry committed twice) prints `DUPLICATE <ref>` and halts with exit code 3 at once.
package dev.royaltykit

import java.sql.Connection
import java.sql.SQLException
import java.util.concurrent.ThreadLocalRandom

/** What InboxTest, InboxKillTest and the child process share. */
object InboxFixture {
    const val SECRET = "whsec_inbox_tests_0123456789abcdef"
    const val NAMESPACE = "org-7/inbox"

    /** A lease short enough that an entry a killed worker held is due again by the next worker. */
    const val LEASE = 1L

    /** The exit code of a child whose effect insert was refused as a duplicate. */
    const val DUPLICATE_EXIT = 3

    /** The body of a delivery about resource [ref]. */
    fun body(ref: String): ByteArray =
        ("{\"event\":\"ddex.delivery.failed\",\"occurred_at\":\"2026-11-22T04:05:06Z\"," +
            "\"resource\":{\"type\":\"ddex_message\",\"reference\":\"$ref\",\"url\":\"/api/v1/releases/$ref\"}}").toByteArray()

    /** Creates the effects table: one row per resource at most. */
    fun createEffects(c: Connection, effects: String) {
        c.createStatement().use { it.execute("CREATE TABLE IF NOT EXISTS $effects (reference TEXT PRIMARY KEY)") }
    }

    /** The handler's effect: the resource's row, written on the transaction's connection. */
    fun writeEffect(c: Connection, effects: String, reference: String) {
        c.prepareStatement("INSERT INTO $effects (reference) VALUES (?)").use {
            it.setString(1, reference)
            it.executeUpdate()
        }
    }
}

fun main(args: Array<String>) {
    val (url, table, effects) = args
    val inbox = JdbcInbox(StoreFixture.dataSource("postgres", url), table = table, leaseSeconds = InboxFixture.LEASE, createTable = false)
    println("ready")
    System.out.flush()
    val report = inbox.drain(maxAttempts = 20) { event, c ->
        val ref = event.resourceReference
        println("start $ref")
        System.out.flush()
        try {
            InboxFixture.writeEffect(c, effects, ref)
        } catch (e: SQLException) {
            if (e.sqlState == "23505") {
                println("DUPLICATE $ref")
                System.out.flush()
                Runtime.getRuntime().halt(InboxFixture.DUPLICATE_EXIT)
            }
            throw e
        }
        println("effect $ref")
        System.out.flush()
        Thread.sleep(ThreadLocalRandom.current().nextLong(0, 301))
        println("end $ref")
        System.out.flush()
    }
    println("drained ${report.processed} ${report.retried} ${report.poisoned}")
    inbox.close()
}
