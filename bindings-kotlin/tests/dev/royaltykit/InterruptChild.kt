package dev.royaltykit

import dev.royaltykit.client.ExportInterruptedException
import dev.royaltykit.client.JavaHttpTransport
import dev.royaltykit.client.ReportsClient
import java.io.File
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.StandardCopyOption

/**
 * The child JVM of the SIGINT test (InterruptTest): runs one export against the fake API as an
 * app would, a worker thread doing `runExport` and a shutdown hook (Ctrl-C, SIGINT) that
 * interrupts the worker and waits for it. Each checkpoint is persisted to `<dir>/checkpoint.json`;
 * on [ExportInterruptedException] the worker writes `<dir>/interrupted.txt` (the export id, then
 * the checkpoint) and the process exits with [INTERRUPTED]. It prints `sleeping` before each wait.
 *
 * Arguments: base URL, tenant, `keyed` or `unkeyed`, the folder of the artifact and the files,
 * the poll interval in seconds (min = max).
 */
object InterruptChild {
    const val INTERRUPTED = 3
    const val BODY = """{"export_class":"statements","format":"csv","period":"2026-10"}"""

    @Volatile private var code = 1

    private fun write(file: File, text: String) {
        val tmp = File(file.path + ".tmp")
        tmp.writeText(text)
        Files.move(tmp.toPath(), file.toPath(), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE)
    }

    @JvmStatic
    fun main(args: Array<String>) {
        val (url, tenant, keyed, dir, poll) = args
        val folder = File(dir)
        val client = ReportsClient(
            JavaHttpTransport(), url, "cid", "csecret", tenant,
            idempotencyHeader = if (keyed == "keyed") "Idempotency-Key" else null,
            sleep = { s -> println("sleeping $s"); System.out.flush(); Thread.sleep((s * 1000).toLong()) },
            onEvent = {},
        )
        val worker = Thread {
            code = try {
                val r = client.runExport(
                    BODY, to = Path.of(dir, "out.csv"), onCheckpoint = { write(File(folder, "checkpoint.json"), it) },
                    minPollIntervalSeconds = poll.toDouble(), maxPollIntervalSeconds = poll.toDouble(),
                )
                println("done ${r.exportId}")
                0
            } catch (e: ExportInterruptedException) {
                write(File(folder, "interrupted.txt"), "${e.exportId ?: ""}\n${e.code}\n${Thread.currentThread().isInterrupted}\n${e.checkpoint}")
                INTERRUPTED
            } catch (e: Throwable) {
                e.printStackTrace()
                1
            }
        }
        Runtime.getRuntime().addShutdownHook(Thread {
            if (worker.isAlive) {
                worker.interrupt()
                worker.join()
                Runtime.getRuntime().halt(code)
            }
        })
        worker.start()
        println("started")
        System.out.flush()
        worker.join()
        System.exit(code)
    }
}
