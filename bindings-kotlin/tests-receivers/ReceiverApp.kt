// A receiver app for the shared receiver tests (tests/receivers): com.sun.net.httpserver on
// 127.0.0.1:PORT with a WebhookReceiver deduplicating on the Redis at REDIS_PORT through Jedis,
// the client JVM users have, and
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
import java.io.File
import java.net.InetSocketAddress
import java.util.concurrent.Executors
import redis.clients.jedis.Protocol
import redis.clients.jedis.RedisClient

/**
 * [RedisCommands] over Jedis (Maven Central, pinned in tools/jvm/pom.xml), as a JVM user wires
 * it: a pooled, thread-safe RedisClient; replies as text (bulk and status replies as UTF-8,
 * integers in decimal, nil as null). A broken connection throws and is replaced by the pool.
 */
class JedisCommands(port: Int) : RedisCommands {
    private val client = RedisClient.create("127.0.0.1", port)

    override fun execute(command: List<String>): String? =
        when (val reply = client.sendCommand(Protocol.Command.valueOf(command[0]), *command.drop(1).toTypedArray())) {
            null -> null
            is ByteArray -> String(reply, Charsets.UTF_8)
            else -> reply.toString()
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
    val store = FlakyCommit(RedisDedupStore(JedisCommands(env.getValue("REDIS_PORT").toInt())))
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
