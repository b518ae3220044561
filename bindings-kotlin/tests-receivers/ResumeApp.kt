// A reporting export job for tests/receivers/test_cross_resume.py, as a JVM worker runs one:
// `start` a new job, or `resume` the job whose checkpoint another language's process saved.
// Each checkpoint is written (atomically) to the checkpoint file before each of the job's
// requests goes out. Prints the export's id when the artifact is complete at the target path.
//   java ResumeAppKt start|resume BASE_URL CHECKPOINT_FILE TARGET_FILE
import dev.royaltykit.client.JavaHttpTransport
import dev.royaltykit.client.ReportsClient
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.StandardCopyOption

fun main(args: Array<String>) {
    val (mode, baseUrl, checkpoint, target) = args
    val save = { text: String ->
        val tmp = Path.of("$checkpoint.tmp")
        Files.writeString(tmp, text)
        Files.move(tmp, Path.of(checkpoint), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING)
        Unit
    }
    val client = ReportsClient(JavaHttpTransport(), baseUrl, "cid", "csecret", "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e")
    val result = if (mode == "start") {
        client.runExport(
            body = """{"export_class":"statements","format":"csv"}""", to = Path.of(target),
            requestId = "cross-language", onCheckpoint = save,
        )
    } else {
        client.runExport(resume = Files.readString(Path.of(checkpoint)), to = Path.of(target), onCheckpoint = save)
    }
    println(result.exportId)
}
