package dev.royaltykit

import com.google.gson.Gson
import com.google.gson.JsonObject
import com.google.gson.JsonParser
import com.sun.net.httpserver.HttpExchange
import com.sun.net.httpserver.HttpServer
import java.net.InetSocketAddress
import java.util.Collections
import java.util.UUID
import java.util.concurrent.CountDownLatch
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit

/**
 * A small reporting API in the test JVM (com.sun.net.httpserver on loopback) that the interrupt,
 * checkpoint, timeout and OpenTelemetry tests control request by request: it counts the creates
 * (and their idempotency keys), holds the [holdAt]-th request open (applied first; a download
 * sends half its body) until [release], answers scripted [faults], and can hold exports a
 * "previous process" created ([seed]).
 */
class FakeReports(val tenant: String = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e") : AutoCloseable {
    /** One request as it arrived: its operation, method, path (no query), idempotency key. */
    data class Seen(val op: String, val method: String, val path: String, val key: String?, val authorization: String?)

    /** What the [n]-th request of an operation gets instead of its answer. */
    sealed class Fault {
        class Status(val status: Int, val headers: Map<String, String> = emptyMap()) : Fault()
        object Drop : Fault()
        object ExpireToken : Fault()
    }

    private val server = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 50)
    private val pool = Executors.newCachedThreadPool { r -> Thread(r).apply { isDaemon = true } }
    val url: String get() = "http://127.0.0.1:${server.address.port}"

    val artifact: ByteArray = (1..2000).joinToString("\n") { "row,$it,${it * 7}" }.toByteArray()
    /** What successive reads of an export show (the last repeated). */
    @Volatile var states: List<String> = listOf("queued", "ready")
    @Volatile var holdAt: Int = 0
    val arrived = CountDownLatch(1)
    private val released = CountDownLatch(1)
    val faults: MutableMap<Pair<String, Int>, Fault> = Collections.synchronizedMap(HashMap())
    /** Called as each request arrives, before it is answered (the test's probe). */
    @Volatile var onArrival: ((Seen) -> Unit)? = null

    val seen: MutableList<Seen> = Collections.synchronizedList(ArrayList())
    private val exports = LinkedHashMap<String, JsonObject>()
    private val reads = HashMap<String, Int>()
    private val byKey = HashMap<String, String>()
    private val tokens = HashSet<String>()
    private val counts = HashMap<String, Int>()
    /** Exports applied by a create request (not the seeded ones). */
    @Volatile var created = 0
        private set

    init {
        server.executor = pool
        server.createContext("/") { ex -> try { handle(ex) } catch (_: Exception) { } finally { ex.close() } }
        server.start()
    }

    fun release() = released.countDown()

    /** An export a previous process created: [id], the create's [body] members, its idempotency [key]. */
    fun seed(body: String, id: String = UUID.randomUUID().toString(), key: String? = null, status: String = "queued"): String {
        synchronized(this) {
            val e = JsonParser.parseString(body).asJsonObject.deepCopy()
            e.addProperty("id", id)
            e.addProperty("status", status)
            exports[id] = e
            if (key != null) byKey[key] = id
        }
        return id
    }

    fun exportCount(): Int = synchronized(this) { exports.size }

    fun exportIds(): List<String> = synchronized(this) { exports.keys.toList() }

    fun creates(): List<Seen> = seen.filter { it.op == "create" }

    /** The job's requests (not the token exchanges), as `METHOD path`. */
    fun jobRequests(): List<String> = seen.filter { it.op != "token" }.map { "${it.method} ${it.path}" }

    private fun op(method: String, path: String): String? {
        val p = "/api/platform/v1"
        return when {
            method == "POST" && path == "$p/oauth/token" -> "token"
            method == "GET" && path == "$p/exports" -> "list"
            method == "POST" && path == "$p/exports" -> "create"
            method == "GET" && Regex("^$p/exports/[^/]+$").matches(path) -> "get"
            method == "GET" && Regex("^$p/exports/[^/]+/download$").matches(path) -> "download"
            else -> null
        }
    }

    private fun send(ex: HttpExchange, status: Int, json: String) {
        val b = json.toByteArray()
        ex.responseHeaders.add("Content-Type", "application/json")
        ex.sendResponseHeaders(status, b.size.toLong())
        ex.responseBody.write(b)
    }

    private fun handle(ex: HttpExchange) {
        val method = ex.requestMethod
        val path = ex.requestURI.rawPath
        val body = ex.requestBody.readAllBytes()
        val op = op(method, path) ?: return send(ex, 404, """{"message":"Resource not found"}""")
        val s = Seen(op, method, path, ex.requestHeaders.getFirst("Idempotency-Key"), ex.requestHeaders.getFirst("Authorization"))
        val (nth, index) = synchronized(this) {
            counts[op] = (counts[op] ?: 0) + 1
            seen.add(s)
            counts.getValue(op) to seen.size
        }
        onArrival?.invoke(s)
        val fault = faults[op to nth]
        if (fault is Fault.Drop) return // closed without an answer
        if (fault is Fault.Status) {
            fault.headers.forEach { (name, value) -> ex.responseHeaders.add(name, value) }
            return send(ex, fault.status, """{"message":"scripted ${fault.status}"}""")
        }
        if (op != "token") {
            val token = s.authorization?.removePrefix("Bearer ")
            val known = synchronized(this) { token in tokens }
            if (!known || ex.requestHeaders.getFirst("X-Tenant-ID") != tenant) return send(ex, 401, """{"message":"Missing bearer token"}""")
            if (fault is Fault.ExpireToken) {
                synchronized(this) { tokens.remove(token) }
                return send(ex, 401, """{"message":"token expired"}""")
            }
        }
        val (status, json, raw) = apply(op, path, body, s)
        if (index == holdAt) {
            arrived.countDown()
            if (raw != null) { // half the artifact, then nothing until released
                ex.sendResponseHeaders(200, raw.size.toLong())
                ex.responseBody.write(raw, 0, raw.size / 2)
                ex.responseBody.flush()
                released.await(60, TimeUnit.SECONDS)
                return
            }
            released.await(60, TimeUnit.SECONDS)
        }
        if (raw != null) {
            ex.responseHeaders.add("Content-Type", "text/csv")
            ex.sendResponseHeaders(200, raw.size.toLong())
            ex.responseBody.write(raw)
        } else {
            send(ex, status, json)
        }
    }

    private fun apply(op: String, path: String, body: ByteArray, s: Seen): Triple<Int, String, ByteArray?> = synchronized(this) {
        when (op) {
            "token" -> {
                if (!String(body).contains("client_credentials")) return Triple(400, """{"message":"grant_type"}""", null)
                val t = "rt_" + UUID.randomUUID().toString().replace("-", "")
                tokens.add(t)
                Triple(200, """{"access_token":"$t","token_type":"Bearer","expires_in":3600,"scope":"exports:read exports:write"}""", null)
            }
            "list" -> Triple(200, """{"data":${Gson().toJson(exports.values.toList())},"next_cursor":null}""", null)
            "create" -> {
                val existing = s.key?.let { byKey[it] }
                if (existing != null) return Triple(200, exports.getValue(existing).toString(), null)
                val e = JsonParser.parseString(String(body)).asJsonObject.deepCopy()
                val id = UUID.randomUUID().toString()
                e.addProperty("id", id)
                e.addProperty("status", "queued")
                exports[id] = e
                created++
                s.key?.let { byKey[it] = id }
                Triple(200, e.toString(), null)
            }
            "get" -> {
                val id = path.substringAfterLast('/')
                val e = exports[id] ?: return Triple(404, """{"message":"Resource not found"}""", null)
                val n = (reads[id] ?: 0) + 1
                reads[id] = n
                e.addProperty("status", states[minOf(n, states.size) - 1])
                Triple(200, e.toString(), null)
            }
            else -> { // download
                val id = path.removeSuffix("/download").substringAfterLast('/')
                val e = exports[id] ?: return Triple(404, """{"message":"Resource not found"}""", null)
                if (e["status"].asString != "ready") Triple(409, """{"message":"Export is not ready"}""", null)
                else Triple(200, "", artifact)
            }
        }
    }

    override fun close() {
        release()
        server.stop(0)
        pool.shutdownNow()
    }
}

/** A clock that the client's sleep moves forward (no real waiting), recording each wait. */
class VirtualTime {
    @Volatile private var offset = 0.0
    val waits: MutableList<Double> = Collections.synchronizedList(ArrayList())
    val clock: () -> Double = { System.currentTimeMillis() / 1000.0 + offset }
    val sleep: (Double) -> Unit = { s -> waits.add(s); offset += s }
}
