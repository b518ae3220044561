// The JVM app of the end-to-end receiver benchmark (issue 44, point 2; bench/e2e/jvm/setup.sh
// compiles it): com.sun.net.httpserver on 127.0.0.1:$PORT serving POST /webhook, one process.
//
//   BENCH_IMPL=royaltykit  WebhookReceiver as bindings-kotlin/README.md and
//                          bindings-kotlin/tests-receivers/ReceiverApp.kt wire it, with the
//                          library's store for BENCH_STORE: the in-memory window, RedisDedupStore
//                          over Jedis, or JdbcDedupStore (transactional) over pgjdbc; the handler
//                          does nothing.
//   BENCH_IMPL=hand        the same work written by hand in the same server: raw body, timestamp
//                          within 300 s, `v1=` HMAC-SHA256 over `<timestamp>.<body>` with
//                          javax.crypto.Mac and MessageDigest.isEqual, gson parse, then dedup by
//                          Service-Webhook-Id: a ConcurrentHashMap set, Jedis
//                          `SET key 1 NX EX 86400`, or `INSERT ... ON CONFLICT DO NOTHING` in a
//                          transaction; the same statuses and bodies as the royaltykit app.
//
// Both implementations share the server set-up (the executor and its threads, the backlog), the
// Jedis client (RedisClient, its default pool) and the PostgreSQL connections (BenchPool below:
// a fixed pool of THREADS connections, one per server thread, which is all either needs at once).
// Env: PORT, BENCH_IMPL, BENCH_STORE (memory | redis | postgres), BENCH_SECRET, REDIS_URL, PG_DSN;
// BENCH_THREADS (default 8, as ReceiverApp.kt).
import com.google.gson.JsonParser
import com.sun.net.httpserver.HttpExchange
import com.sun.net.httpserver.HttpHandler
import com.sun.net.httpserver.HttpServer
import dev.royaltykit.DedupStore
import dev.royaltykit.InMemoryDedupStore
import dev.royaltykit.JdbcDedupStore
import dev.royaltykit.RedisCommands
import dev.royaltykit.RedisDedupStore
import dev.royaltykit.WebhookReceiver
import dev.royaltykit.WebhookSecret
import java.io.PrintWriter
import java.net.InetSocketAddress
import java.net.URI
import java.security.MessageDigest
import java.sql.Connection
import java.sql.DriverManager
import java.util.concurrent.ArrayBlockingQueue
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.logging.Logger
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec
import javax.sql.DataSource
import redis.clients.jedis.Protocol
import redis.clients.jedis.RedisClient
import redis.clients.jedis.params.SetParams

/** [RedisCommands] over Jedis, exactly as ReceiverApp.kt (and the README) wire it. */
class JedisCommands(private val client: RedisClient) : RedisCommands {
    override fun execute(command: List<String>): String? =
        when (val reply = client.sendCommand(Protocol.Command.valueOf(command[0]), *command.drop(1).toTypedArray())) {
            null -> null
            is ByteArray -> String(reply, Charsets.UTF_8)
            else -> reply.toString()
        }
}

/**
 * A fixed pool of [size] pgjdbc connections opened at start, as a [DataSource]: `getConnection`
 * takes one (waiting when all are out), `close()` gives it back. What HikariCP does on the hot
 * path, without its extras; both implementations use it alike.
 */
class BenchPool(private val url: String, size: Int) : DataSource {
    private val idle = ArrayBlockingQueue<Connection>(size)

    init {
        repeat(size) { idle.add(DriverManager.getConnection(url)) }
    }

    private inner class Pooled(private val c: Connection) : Connection by c {
        @Volatile private var returned = false
        override fun close() {
            if (returned) return
            returned = true
            if (c.isClosed) idle.add(DriverManager.getConnection(url)) else idle.add(c)
        }
        override fun isClosed(): Boolean = returned || c.isClosed
    }

    override fun getConnection(): Connection = Pooled(idle.take())
    override fun getConnection(username: String?, password: String?): Connection = connection
    override fun getLogWriter(): PrintWriter? = null
    override fun setLogWriter(out: PrintWriter?) {}
    override fun setLoginTimeout(seconds: Int) {}
    override fun getLoginTimeout(): Int = 0
    override fun getParentLogger(): Logger = Logger.getGlobal()
    override fun <T : Any?> unwrap(iface: Class<T>?): T = throw java.sql.SQLException("not a wrapper")
    override fun isWrapperFor(iface: Class<*>?): Boolean = false
}

/** postgresql://user[:password]@host:port/db -> a pgjdbc URL. */
fun jdbcUrl(dsn: String): String {
    val u = URI(dsn)
    val (user, password) = (u.userInfo ?: "postgres").split(":", limit = 2).let { it[0] to it.getOrNull(1) }
    val db = u.path.trimStart('/').ifEmpty { "postgres" }
    return "jdbc:postgresql://${u.host}:${if (u.port > 0) u.port else 5432}/$db?user=$user" +
        (password?.let { "&password=$it" } ?: "")
}

fun redisClient(url: String): RedisClient {
    val u = URI(url)
    return RedisClient.create(u.host, if (u.port > 0) u.port else 6379)
}

fun HttpExchange.reply(status: Int, body: ByteArray) {
    responseHeaders.add("Content-Type", "application/json")
    sendResponseHeaders(status, body.size.toLong())
    responseBody.use { it.write(body) }
}

/** The royaltykit receiver, as users wire it (ReceiverApp.kt). */
fun royaltykitHandler(store: String, secret: String, threads: Int, env: Map<String, String>): HttpHandler {
    val secrets = listOf(WebhookSecret(secret))
    val noErrorLog = { _: Exception, _: dev.royaltykit.types.VerifiedWebhook -> }
    val receiver = when (store) {
        "memory" -> WebhookReceiver(secrets, namespace = "bench", store = InMemoryDedupStore(), onError = noErrorLog) { _ -> }
        "redis" -> WebhookReceiver(
            secrets, namespace = "bench",
            store = RedisDedupStore(JedisCommands(redisClient(env.getValue("REDIS_URL")))) as DedupStore,
            onError = noErrorLog,
        ) { _ -> }
        "postgres" -> WebhookReceiver(
            secrets, namespace = "bench",
            store = JdbcDedupStore(BenchPool(jdbcUrl(env.getValue("PG_DSN")), threads)), // creates royaltykit_dedup
            onError = noErrorLog,
        ) { _, _ -> }
        else -> error("BENCH_STORE must be memory, redis or postgres, not $store")
    }
    return HttpHandler { ex ->
        val body = ex.requestBody.readNBytes((receiver.maxBodyBytes + 1).toInt())
        ex.requestBody.readAllBytes() // drain the rest: the receiver answers 413
        val r = receiver.receiveMulti(ex.requestHeaders, body)
        ex.reply(r.status, r.body.toByteArray())
    }
}

/** The hand-written endpoint: the same work, the same replies. */
class Hand(store: String, secret: String, threads: Int, env: Map<String, String>) : HttpHandler {
    private val key = SecretKeySpec(secret.toByteArray(Charsets.UTF_8), "HmacSHA256")
    private val mac = ThreadLocal.withInitial { Mac.getInstance("HmacSHA256").apply { init(key) } }

    /** Dedup by delivery id: true when the id is new. */
    private val claim: (String) -> Boolean = when (store) {
        "memory" -> {
            val seen = ConcurrentHashMap.newKeySet<String>()
            ({ id -> seen.add(id) })
        }
        "redis" -> {
            val redis = redisClient(env.getValue("REDIS_URL"))
            val params = SetParams().nx().ex(86400)
            ({ id -> redis.set("bench:dedup:$id", "1", params) != null })
        }
        "postgres" -> {
            val pool = BenchPool(jdbcUrl(env.getValue("PG_DSN")), threads)
            pool.connection.use { c ->
                c.createStatement().use { it.execute("CREATE TABLE IF NOT EXISTS bench_dedup (id TEXT PRIMARY KEY)") }
            }
            ({ id ->
                pool.connection.use { c ->
                    c.autoCommit = false
                    try {
                        val inserted = c.prepareStatement("INSERT INTO bench_dedup (id) VALUES (?) ON CONFLICT DO NOTHING").use {
                            it.setString(1, id)
                            it.executeUpdate()
                        }
                        c.commit()
                        inserted == 1
                    } catch (e: Exception) {
                        c.rollback()
                        throw e
                    } finally {
                        c.autoCommit = true
                    }
                }
            })
        }
        else -> error("BENCH_STORE must be memory, redis or postgres, not $store")
    }

    override fun handle(ex: HttpExchange) {
        val body = ex.requestBody.readNBytes(MAX_BODY + 1)
        ex.requestBody.readAllBytes()
        val (status, reply) = try {
            answer(ex, body)
        } catch (e: Exception) {
            503 to STORE_UNAVAILABLE
        }
        ex.reply(status, reply)
    }

    private fun answer(ex: HttpExchange, body: ByteArray): Pair<Int, ByteArray> {
        if (body.size > MAX_BODY) return 413 to TOO_LARGE
        val h = ex.requestHeaders
        val id = h.getFirst("Service-Webhook-Id")
        val ts = h.getFirst("Service-Webhook-Timestamp")
        val sig = h.getFirst("Service-Webhook-Signature")
        if (id.isNullOrEmpty() || ts == null || sig == null) return 400 to MISSING_HEADERS
        val t = ts.toLongOrNull() ?: return 400 to BAD_TIMESTAMP
        val now = System.currentTimeMillis() / 1000
        if (t < now - TOLERANCE) return 400 to TOO_OLD
        if (t > now + TOLERANCE) return 400 to TOO_NEW
        val m = mac.get()
        m.update(ts.toByteArray(Charsets.US_ASCII))
        m.update('.'.code.toByte())
        m.update(body)
        val expected = m.doFinal()
        val ok = sig.split(' ').any { it.startsWith("v1=") && MessageDigest.isEqual(unhex(it, 3), expected) }
        if (!ok) return 401 to NO_MATCH
        val event = try {
            JsonParser.parseString(String(body, Charsets.UTF_8)).asJsonObject
        } catch (e: Exception) {
            return 400 to BAD_PAYLOAD
        }
        if (!event.has("event")) return 400 to BAD_PAYLOAD
        return 200 to (if (claim(id)) PROCESSED else ACKNOWLEDGE)
    }

    private companion object {
        const val MAX_BODY = 1024 * 1024
        const val TOLERANCE = 300L
        val PROCESSED = """{"result":"processed"}""".toByteArray()
        val ACKNOWLEDGE = """{"result":"acknowledge"}""".toByteArray()
        val NO_MATCH = """{"error":"no_matching_signature"}""".toByteArray()
        val TOO_OLD = """{"error":"timestamp_too_old"}""".toByteArray()
        val TOO_NEW = """{"error":"timestamp_too_new"}""".toByteArray()
        val BAD_TIMESTAMP = """{"error":"invalid_timestamp"}""".toByteArray()
        val MISSING_HEADERS = """{"error":"missing_header"}""".toByteArray()
        val BAD_PAYLOAD = """{"error":"invalid_payload"}""".toByteArray()
        val TOO_LARGE = """{"error":"body_too_large"}""".toByteArray()
        val STORE_UNAVAILABLE = """{"error":"store_unavailable"}""".toByteArray()

        /** Hex (from [from]) to bytes; an empty array (never equal to a MAC) when not hex. */
        fun unhex(s: String, from: Int): ByteArray {
            val n = s.length - from
            if (n != 64) return ByteArray(0)
            val out = ByteArray(n / 2)
            for (i in out.indices) {
                val hi = Character.digit(s[from + 2 * i], 16)
                val lo = Character.digit(s[from + 2 * i + 1], 16)
                if (hi < 0 || lo < 0) return ByteArray(0)
                out[i] = ((hi shl 4) or lo).toByte()
            }
            return out
        }
    }
}

fun main() {
    val env = System.getenv()
    val impl = env["BENCH_IMPL"] ?: "royaltykit"
    val store = env["BENCH_STORE"] ?: "memory"
    val secret = env.getValue("BENCH_SECRET")
    val threads = env["BENCH_THREADS"]?.toInt() ?: 8
    val port = env.getValue("PORT").toInt()
    val handler = when (impl) {
        "royaltykit" -> royaltykitHandler(store, secret, threads, env)
        "hand" -> Hand(store, secret, threads, env)
        else -> error("BENCH_IMPL must be royaltykit or hand, not $impl")
    }
    val server = HttpServer.create(InetSocketAddress("127.0.0.1", port), 1024)
    val executor = Executors.newFixedThreadPool(threads)
    server.executor = executor
    server.createContext("/webhook", handler)
    Runtime.getRuntime().addShutdownHook(Thread {
        server.stop(0)
        executor.shutdown()
        executor.awaitTermination(2, TimeUnit.SECONDS)
    })
    server.start()
    println("ready $port")
    System.out.flush()
}
