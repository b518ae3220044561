package dev.royaltykit

import com.google.gson.JsonParser
import dev.royaltykit.client.ExportInterruptedException
import dev.royaltykit.client.HttpTransport
import dev.royaltykit.client.JavaHttpTransport
import dev.royaltykit.client.ReportsClient
import dev.royaltykit.coroutines.runExportAsync
import dev.royaltykit.okhttp.OkHttpTransport
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import org.junit.Assert.assertArrayEquals
import org.junit.Assert.assertEquals
import org.junit.Assert.assertNotNull
import org.junit.Assert.assertNull
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.Test
import java.io.File
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit

/**
 * Point 6 of issue 42: checkpoints before each send and pause, resume from a checkpoint (this client's and
 * the core's shared ones), and interruption — a thread interrupt, a coroutine's cancellation and
 * SIGINT to a child JVM at every step of a run — ending in one export and no temporary file.
 */
class InterruptTest {
    private val body = InterruptChild.BODY
    private val root = System.getenv("ROYALTYKIT_ROOT") ?: ".."

    private fun client(fake: FakeReports, keyed: Boolean, transport: HttpTransport = JavaHttpTransport(), time: VirtualTime = VirtualTime()) =
        ReportsClient(
            transport, fake.url, "cid", "csecret", fake.tenant, idempotencyHeader = if (keyed) "Idempotency-Key" else null,
            clock = time.clock, sleep = time.sleep, onEvent = {},
        )

    private fun temps(dir: Path): List<String> = dir.toFile().list()!!.filter { it.startsWith(".royaltykit-") }

    /** The operations of a whole uninterrupted run, in order. */
    private fun wholeRun(keyed: Boolean, states: List<String> = listOf("queued", "ready")): List<String> = FakeReports().use { fake ->
        fake.states = states
        client(fake, keyed).runExport(body)
        fake.seen.map { it.op }
    }

    /** Resumes [checkpoint] in this process and checks the run's end: the artifact, one export, no temporary file. */
    private fun finish(what: String, fake: FakeReports, keyed: Boolean, checkpoint: String, dir: Path) {
        fake.release()
        val result = client(fake, keyed).runExport(resume = checkpoint, to = dir.resolve("out.csv"))
        assertArrayEquals(what, fake.artifact, Files.readAllBytes(dir.resolve("out.csv")))
        assertEquals(what, 1, fake.exportCount())
        val creates = fake.creates()
        if (keyed) {
            assertTrue("$what: $creates", creates.isNotEmpty() && creates.all { it.key != null })
            assertEquals("$what: one idempotency key in both runs", 1, creates.map { it.key }.toSet().size)
        } else {
            assertEquals("$what: one create in both runs", 1, creates.size)
        }
        assertEquals(what, 1, fake.created)
        assertTrue(what, result.exportId.isNotEmpty())
        assertEquals(what, emptyList<String>(), temps(dir))
    }

    private fun startChild(fake: FakeReports, keyed: Boolean, dir: Path, poll: Double): Pair<Process, LinkedBlockingQueue<String>> {
        val java = ProcessHandle.current().info().command().orElse("java")
        val cmd = mutableListOf(java, "-cp", System.getProperty("java.class.path"))
        System.getProperty("royaltykit.native.dir")?.let { cmd += "-Droyaltykit.native.dir=$it" }
        cmd += listOf(InterruptChild::class.java.name, fake.url, fake.tenant, if (keyed) "keyed" else "unkeyed", dir.toString(), poll.toString())
        val p = ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start()
        val lines = LinkedBlockingQueue<String>()
        Thread { p.inputStream.bufferedReader().forEachLine { lines.put(it) } }.apply { isDaemon = true }.start()
        return p to lines
    }

    /** SIGINT to [p]; its exit code once it ended. */
    private fun sigint(p: Process): Int {
        assertEquals(0, ProcessBuilder("kill", "-INT", p.pid().toString()).start().waitFor())
        assertTrue("the child did not end after SIGINT", p.waitFor(60, TimeUnit.SECONDS))
        return p.exitValue()
    }

    /** What the child wrote on ExportInterruptedException: export id, code, interrupt flag, checkpoint. */
    private fun interrupted(dir: Path): List<String> {
        val text = File(dir.toFile(), "interrupted.txt").readText()
        val lines = text.split("\n", limit = 4)
        assertEquals(text, "export_interrupted", lines[1])
        assertEquals("the interrupt flag is set again", "true", lines[2])
        return lines
    }

    @Test
    fun sigintAfterEachRequestOfAWholeRunThenAResumeMakeOneExport() {
        for (keyed in listOf(true, false)) {
            val ops = wholeRun(keyed)
            // keyed: token, create, reads, download; unkeyed: token, list, create, reads, download
            assertEquals("$keyed $ops", if (keyed) "token" else "list", if (keyed) ops[0] else ops[1])
            val createAt = ops.indexOf("create") + 1
            for (k in 1..ops.size) {
                val what = "${if (keyed) "keyed" else "unkeyed"}, SIGINT at request $k (${ops[k - 1]})"
                FakeReports().use { fake ->
                    fake.holdAt = k
                    val dir = Files.createTempDirectory("rk-sigint")
                    val (p, _) = startChild(fake, keyed, dir, 0.05)
                    assertTrue("$what: the request never came", fake.arrived.await(60, TimeUnit.SECONDS))
                    assertEquals(what, InterruptChild.INTERRUPTED, sigint(p))
                    val (exportId, _, _, checkpoint) = interrupted(dir)
                    // the id is known once the create's answer came (a held create's never did)
                    assertEquals(what, if (k <= createAt) "" else fake.exportIds().single(), exportId)
                    assertEquals("$what: the temporary file is removed", emptyList<String>(), temps(dir))
                    // each checkpoint was persisted before its request went out (none before the first)
                    assertTrue(what, File(dir.toFile(), "checkpoint.json").exists() == (ops.take(k).any { it != "token" }))
                    finish(what, fake, keyed, checkpoint, dir)
                }
            }
        }
    }

    @Test
    fun sigintDuringAPollWaitThenAResumeMakeOneExport() {
        for (keyed in listOf(true, false)) {
            FakeReports().use { fake ->
                fake.states = listOf("queued", "queued", "ready")
                val dir = Files.createTempDirectory("rk-sigint-wait")
                val (p, lines) = startChild(fake, keyed, dir, 30.0)
                while (true) {
                    val line = lines.poll(60, TimeUnit.SECONDS) ?: fail("the child never waited")
                    if (line.toString().startsWith("sleeping")) break
                }
                assertEquals(InterruptChild.INTERRUPTED, sigint(p))
                val (exportId, _, _, checkpoint) = interrupted(dir)
                assertTrue("the export was named before the wait: $exportId", exportId.isNotEmpty())
                assertEquals(emptyList<String>(), temps(dir))
                finish("poll wait, keyed=$keyed", fake, keyed, checkpoint, dir)
            }
        }
    }

    @Test
    fun aThreadInterruptDuringASendEndsTheJobWithItsCheckpointOnEitherTransport() {
        val ops = wholeRun(true)
        for ((name, transport) in listOf<Pair<String, () -> HttpTransport>>("java.net.http" to { JavaHttpTransport() }, "OkHttp" to { OkHttpTransport() })) {
            for (op in listOf("get", "download")) {
                val what = "$name, interrupted during $op"
                FakeReports().use { fake ->
                    fake.holdAt = ops.indexOf(op) + 1
                    val dir = Files.createTempDirectory("rk-interrupt")
                    var thrown: Throwable? = null
                    var flag = false
                    val worker = Thread {
                        try {
                            client(fake, true, transport()).runExport(body, to = dir.resolve("out.csv"))
                        } catch (e: Throwable) {
                            thrown = e
                            flag = Thread.currentThread().isInterrupted
                        }
                    }
                    worker.start()
                    assertTrue(what, fake.arrived.await(60, TimeUnit.SECONDS))
                    worker.interrupt()
                    worker.join(30_000)
                    assertTrue("$what: the send was not interrupted", !worker.isAlive)
                    val e = thrown as? ExportInterruptedException ?: throw AssertionError("$what: $thrown", thrown)
                    assertEquals(what, fake.exportIds().single(), e.exportId)
                    assertEquals(what, exportInterruptedMessage(e.exportId), e.message)
                    assertEquals(what, "export_interrupted", e.code)
                    assertNotNull(what, e.cause)
                    assertTrue(what, e is java.util.concurrent.CancellationException)
                    assertTrue("$what: the interrupt flag is set again", flag)
                    assertEquals(what, emptyList<String>(), temps(dir))
                    finish(what, fake, true, e.checkpoint, dir)
                }
            }
        }
    }

    @Test
    fun aResponseThatArrivedAsTheThreadWasInterruptedIsKept() {
        // The create's answer came, then the interrupt: the job knows its export (as in Python and
        // Node), so the interruption and its checkpoint name it.
        FakeReports().use { fake ->
            val java = JavaHttpTransport()
            val interrupting = HttpTransport { request, timeout, target ->
                val o = java.send(request, timeout, target)
                if (request.method == "POST" && request.url.endsWith("/exports")) Thread.currentThread().interrupt()
                o
            }
            val dir = Files.createTempDirectory("rk-answered")
            val e = runCatching { client(fake, false, interrupting).runExport(body, to = dir.resolve("out.csv")) }.exceptionOrNull()
            Thread.interrupted()
            val interrupted = e as? ExportInterruptedException ?: throw AssertionError("$e", e)
            assertEquals(fake.exportIds().single(), interrupted.exportId)
            assertEquals(emptyList<String>(), temps(dir))
            finish("answered, then interrupted", fake, false, interrupted.checkpoint, dir)
        }
    }

    @Test
    fun cancellingTheSuspendRunExportGivesTheCheckpointAndResumes() = runBlocking {
        val ops = wholeRun(false)
        FakeReports().use { fake ->
            fake.holdAt = ops.indexOf("get") + 1
            val dir = Files.createTempDirectory("rk-cancel")
            var caught: Throwable? = null
            val job = launch(Dispatchers.Default) {
                try {
                    client(fake, false).runExportAsync(body, to = dir.resolve("out.csv"))
                } catch (e: Throwable) {
                    caught = e
                    throw e
                }
            }
            assertTrue(withContext(Dispatchers.IO) { fake.arrived.await(60, TimeUnit.SECONDS) })
            job.cancel()
            job.join()
            assertTrue(job.isCancelled)
            val e = caught as? ExportInterruptedException ?: throw AssertionError("$caught", caught)
            assertTrue(e.exportId!!.isNotEmpty())
            assertEquals(emptyList<String>(), temps(dir))
            fake.release()
            val result = client(fake, false).runExportAsync(resume = e.checkpoint, to = dir.resolve("out.csv"))
            assertEquals(e.exportId, result.exportId)
            finish("coroutine", fake, false, e.checkpoint, dir)
        }
    }

    @Test
    fun theCheckpointIsGivenBeforeEachSendAndPauseAndOnlyWhenItChanged() {
        for (keyed in listOf(true, false)) {
            FakeReports().use { fake ->
                fake.states = listOf("queued", "running", "ready")
                val given = ArrayList<String>()
                val atSend = ArrayList<String?>()
                fake.onArrival = { s -> if (s.op != "token") synchronized(given) { atSend.add(given.lastOrNull()) } }
                val time = VirtualTime()
                client(fake, keyed, time = time).runExport(body, onCheckpoint = { synchronized(given) { given.add(it) } })
                assertTrue("$atSend", atSend.isNotEmpty() && atSend.none { it == null })
                // a new checkpoint before each of the job's requests (each changes the job)...
                assertTrue(atSend.zipWithNext().all { (a, b) -> a != b })
                // ...and only then: never the same text twice in a row
                assertTrue(given.zipWithNext().all { (a, b) -> a != b })
                // ...and before each pause too (the poll intervals), and never besides
                assertTrue("${time.waits}", time.waits.size >= 2)
                assertEquals(atSend.size + time.waits.size, given.size)
                // never a token or a credential
                assertTrue(given.none { Regex("rt_[0-9a-f]{8}").containsMatchIn(it) || it.contains("csecret") || it.contains("Bearer") })
            }
        }
    }

    @Test
    fun aJobKilledDuringARetryAfterResumesTheWaitAndNeverSendsEarly() {
        FakeReports().use { fake ->
            // The first read is answered 429 with Retry-After: 2.
            fake.faults["get" to 1] = FakeReports.Fault.Status(429, mapOf("Retry-After" to "2"))
            val time = VirtualTime()
            val given = ArrayList<Triple<String, Double, Int>>()
            client(fake, keyed = true, time = time).runExport(body, onCheckpoint = { synchronized(given) { given.add(Triple(it, time.clock(), fake.seen.size)) } })
            val at429 = fake.seen.indexOfFirst { it.op == "get" } + 1
            assertEquals(listOf("get", "get", "get"), fake.seen.map { it.op }.filter { it == "get" })
            // Given once the 429 had arrived: before its pause, then before the next read goes out.
            val (pause, next) = given.filter { it.third == at429 }
            assertTrue(pause.first != next.first)
            for ((dt, left) in listOf(0.0 to 2.0, 1.0 to 1.0)) {
                val s = ExportJob.resume(pause.first).use { job -> Session().use { job.nextIn(pause.second + dt, it) } }
                assertTrue("$s", s is CallStep.Wait && Math.abs(s.seconds - left) < 0.05)
            }
            // Once the Retry-After has passed, it goes on at once.
            val s = ExportJob.resume(pause.first).use { job -> Session().use { job.nextIn(pause.second + 2.5, it) } }
            assertTrue("$s", s !is CallStep.Wait)
        }
    }

    @Test
    fun bodyOrResumeNotBothNorNeither() {
        FakeReports().use { fake ->
            val c = client(fake, true)
            for ((what, call) in listOf<Pair<String, () -> Unit>>(
                "neither" to { c.runExport() },
                "both" to { c.runExport(body, resume = "{}") },
            )) {
                try {
                    call()
                    fail(what)
                } catch (e: IllegalArgumentException) {
                    assertTrue("$what: ${e.message}", e.message!!.contains("body") && e.message!!.contains("resume"))
                }
            }
            // a resumed job keeps what it was saved with: the arguments that shape a new job are refused
            try {
                c.runExport(resume = "{}", maxPolls = 3, minPollIntervalSeconds = 1.0)
                fail("shaping arguments with resume")
            } catch (e: IllegalArgumentException) {
                assertTrue(e.message!!, e.message!!.startsWith("maxPolls, minPollIntervalSeconds cannot be given with resume"))
            }
            assertEquals(0, fake.seen.size)
        }
    }

    @Test
    fun theSharedCheckpointsResumeIntoOneExport() {
        val vectors = JsonParser.parseString(File(root, "tests/vectors/checkpoints.json").readText()).asJsonObject
        val tenant = vectors["tenant_id"].asString
        val saved = vectors["body"].asString
        for (v in vectors["checkpoints"].asJsonArray.map { it.asJsonObject }) {
            val what = v["comment"].asString
            val next = v["next"].asJsonObject
            FakeReports(tenant).use { fake ->
                fake.states = listOf("ready")
                // the export the previous process created
                when {
                    !v["export_id"].isJsonNull -> fake.seed(saved, id = v["export_id"].asString)
                    next.has("idempotency_key") -> fake.seed(saved, key = next["idempotency_key"].asString)
                    else -> fake.seed(saved)
                }
                val dir = Files.createTempDirectory("rk-vector")
                client(fake, v["keyed"].asBoolean).runExport(resume = v["checkpoint"].asString, to = dir.resolve("out.csv"))
                val first = fake.seen.first { it.op != "token" }
                assertEquals(what, "${next["method"].asString} ${next["path"].asString}", "${first.method} ${first.path}")
                if (next.has("idempotency_key")) assertEquals(what, next["idempotency_key"].asString, first.key)
                assertEquals(what, 1, fake.exportCount())
                assertEquals("$what: nothing created", 0, fake.created)
                assertArrayEquals(what, fake.artifact, Files.readAllBytes(dir.resolve("out.csv")))
                assertEquals(what, emptyList<String>(), temps(dir))
            }
        }
    }
}
