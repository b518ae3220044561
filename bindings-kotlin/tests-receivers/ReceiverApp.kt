// A receiver app for the shared receiver tests (tests/receivers): com.sun.net.httpserver on
// 127.0.0.1:PORT with a WebhookReceiver deduplicating on the Redis at REDIS_PORT, through a
// minimal RESP client standing in for the host's (no Maven client can be installed here), and
// the handler every language's app implements alike: a resource reference starting with "slow"
// sleeps 0.6 s; one starting with "fail-once" fails its first attempt (a marker file beside
// EFFECTS remembers it); then the reference is appended to the EFFECTS file; after one starting
// with "commit-fails-once", the next commit fails once (the store going away between the effect
// and the commit). Secrets: the current, the previous (no end) and one rotated out long ago.
import com.sun.net.httpserver.HttpServer
import dev.royaltykit.DedupStore
import dev.royaltykit.RedisCommands
import dev.royaltykit.RedisDedupStore
import dev.royaltykit.WebhookReceiver
import dev.royaltykit.WebhookSecret
import java.io.BufferedInputStream
import java.io.File
import java.io.InputStream
import java.net.InetSocketAddress
import java.net.Socket
import java.util.concurrent.Executors

/** RESP over one socket per thread, reconnecting after any failure; replies as text. */
class Resp(private val port: Int) : RedisCommands {
    private val socket = ThreadLocal<Pair<Socket, BufferedInputStream>?>()

    override fun execute(command: List<String>): String? {
        val (s, input) = socket.get() ?: Socket("127.0.0.1", port).let { it.soTimeout = 2000; it to BufferedInputStream(it.getInputStream()) }.also { socket.set(it) }
        try {
            val out = StringBuilder("*${command.size}\r\n")
            command.forEach { val b = it.toByteArray(); out.append("\$${b.size}\r\n").append(it).append("\r\n") }
            s.getOutputStream().write(out.toString().toByteArray())
            return read(input)
        } catch (e: Exception) {
            runCatching { s.close() }
            socket.set(null)
            throw e
        }
    }

    private fun line(input: InputStream): String {
        val b = StringBuilder()
        while (true) {
            val c = input.read()
            check(c >= 0) { "connection closed" }
            if (c == '\r'.code) { input.read(); return b.toString() }
            b.append(c.toChar())
        }
    }

    private fun read(input: InputStream): String? {
        val l = line(input)
        return when (l[0]) {
            '+', ':' -> l.substring(1)
            '-' -> error("redis: ${l.substring(1)}")
            '$' -> l.substring(1).toInt().let { n -> if (n < 0) null else String(input.readNBytes(n)).also { input.readNBytes(2) } }
            else -> error("unexpected reply $l")
        }
    }
}

/** [store], whose next commit fails once when [failNextCommit] is set. */
class FlakyCommit(private val store: DedupStore) : DedupStore by store {
    val failNextCommit = java.util.concurrent.atomic.AtomicBoolean(false)
    override fun commit(key: String) {
        if (failNextCommit.getAndSet(false)) throw java.io.IOException("Redis connection reset")
        store.commit(key)
    }
}

fun main() {
    val env = System.getenv()
    val effects = File(env.getValue("EFFECTS"))
    val store = FlakyCommit(RedisDedupStore(Resp(env.getValue("REDIS_PORT").toInt())))
    val receiver = WebhookReceiver(
        secrets = listOf(WebhookSecret("whsec_current"), WebhookSecret("whsec_previous"), WebhookSecret("whsec_rotated_out", validUntil = 1_700_000_000)),
        namespace = "org-test",
        store = store,
        onError = { _, _ -> },
    ) { delivery ->
        val ref = delivery.event.resourceReference
        if (ref.startsWith("slow")) Thread.sleep(600)
        if (ref.startsWith("commit-fails-once")) store.failNextCommit.set(true)
        val marker = File("${effects.path}.failed.$ref")
        if (ref.startsWith("fail-once") && marker.createNewFile()) error("the database is down (first attempt)")
        synchronized(effects) { effects.appendText("$ref\n") }
    }
    val port = env.getValue("PORT").toInt()
    val server = HttpServer.create(InetSocketAddress("127.0.0.1", port), 0)
    server.executor = Executors.newFixedThreadPool(8)
    server.createContext("/webhooks") { ex ->
        val body = ex.requestBody.readNBytes((receiver.maxBodyBytes + 1).toInt())
        ex.requestBody.readAllBytes() // drain the rest: the receiver answers 413
        val r = receiver.receiveMulti(ex.requestHeaders, body)
        val bytes = r.body.toByteArray()
        ex.responseHeaders.add("Content-Type", "application/json")
        ex.sendResponseHeaders(r.status, bytes.size.toLong())
        ex.responseBody.use { it.write(bytes) }
    }
    server.start()
    println("ready $port")
}
