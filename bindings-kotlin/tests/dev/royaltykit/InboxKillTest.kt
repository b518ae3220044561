package dev.royaltykit

import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.Test
import java.io.File
import java.util.concurrent.ThreadLocalRandom
import java.util.concurrent.TimeUnit

/**
 * Inbox workers SIGKILLed at random moments on PostgreSQL: child JVMs (InboxChild.kt, the built jar
 * on their class path) drain an inbox of 30 entries whose handler writes one effect row (UNIQUE)
 * and sleeps 0-300 ms; each child is killed (`destroyForcibly`: SIGKILL on Linux) a random time
 * after it opened the inbox, another started, at least 8 times, then the last ones drain it.
 * Every entry ends done, with exactly one effect row, none poison, and no effect insert was ever
 * refused as a duplicate.
 */
class InboxKillTest : InboxCase("postgres") {
    private val entries = 30

    private class Child(val process: Process, val out: File, val err: File) {
        fun lines(): List<String> = out.readLines()
        override fun toString() = "stdout: ${out.readText()}\nstderr: ${err.readText()}"
    }

    private fun child(n: Int): Child {
        val out = File(tmp.root, "child-$n.out")
        val err = File(tmp.root, "child-$n.err")
        val java = ProcessHandle.current().info().command().orElse(System.getProperty("java.home") + "/bin/java")
        val jnaDir = tmp.newFolder("jna-$n") // the native library JNA unpacks, left there by a SIGKILL
        val p = ProcessBuilder(
            java, "-cp", System.getProperty("java.class.path"), "-Djna.tmpdir=${jnaDir.path}",
            "dev.royaltykit.InboxChildKt", StoreCase.postgresUrl(), table, effects,
        ).redirectOutput(out).redirectError(err).start()
        return Child(p, out, err)
    }

    @Test
    fun workersKilledAtRandomMomentsCommitEachEffectExactlyOnce() {
        JdbcInbox(dataSource, table = table, leaseSeconds = InboxFixture.LEASE).use { inbox ->
            val refs = (1..entries).map { "ref-%02d".format(it) }
            for (ref in refs) {
                val did = "dlv_$ref"
                assertTrue(inbox.enqueue(deliveryKey(InboxFixture.NAMESPACE, did), did, "ddex.delivery.failed", String(InboxFixture.body(ref))))
            }
            val random = ThreadLocalRandom.current()
            val children = ArrayList<Child>()
            val diedAfter = ArrayList<String>()
            var kills = 0
            while (kills < 10) {
                if (inbox.counts()["pending"] == null) break
                val c = child(children.size).also { children += it }
                val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60)
                while (c.lines().firstOrNull() != "ready" && c.process.isAlive) {
                    if (System.nanoTime() > deadline) fail("the child never opened the inbox: $c")
                    Thread.sleep(10)
                }
                Thread.sleep(random.nextLong(50, 600))
                if (!c.process.isAlive) continue // it drained what was due before the kill
                c.process.destroyForcibly()
                assertTrue(c.process.waitFor(30, TimeUnit.SECONDS))
                assertEquals(c.toString(), 128 + 9, c.process.exitValue())
                kills++
                diedAfter += c.lines().lastOrNull()?.substringBefore(' ') ?: "nothing"
            }
            assertTrue("at least 8 kills: $diedAfter", kills >= 8)
            // the last workers drain it (an entry a killed worker held is due again once its lease ran out)
            var last = 0
            while (inbox.counts()["pending"] != null) {
                assertTrue("the inbox was not drained: ${inbox.counts()}", last++ < 10)
                val c = child(children.size).also { children += it }
                assertTrue(c.toString(), c.process.waitFor(120, TimeUnit.SECONDS))
                assertEquals(c.toString(), 0, c.process.exitValue())
                if (inbox.counts()["pending"] != null) Thread.sleep(InboxFixture.LEASE * 1000)
            }
            System.err.println("InboxKillTest: $kills kills, each child's last line before it: $diedAfter")
            for (c in children) {
                assertFalse("an effect was committed twice: $c", c.lines().any { it.startsWith("DUPLICATE") })
                assertTrue(c.toString(), c.process.exitValue() != InboxFixture.DUPLICATE_EXIT)
            }
            assertTrue("kills landed between an effect and its commit: $diedAfter", "effect" in diedAfter)
            assertEquals(mapOf("done" to entries.toLong()), inbox.counts())
            assertEquals(emptyList<PoisonEntry>(), inbox.poisoned())
            assertEquals("exactly one effect per entry", refs, effectRows())
        }
    }
}
