// make bench, JVM part. Usage: java -cp ... BenchKt <cases.json> <out.json>
// Contenders of one body run interleaved: ROUNDS rounds, each a timed batch per contender;
// reported: min and median over the rounds of ns per call.
import com.google.gson.JsonParser
import dev.royaltykit.DedupWindow
import dev.royaltykit.types.RetryInput
import dev.royaltykit.WebhookVerifier
import dev.royaltykit.decideRetry
import dev.royaltykit.ffiFloor
import dev.royaltykit.ffiFloorWithBytes
import dev.royaltykit.parseApiError
import dev.royaltykit.verify
import dev.royaltykit.types.Api
import dev.royaltykit.types.RetryClass
import java.io.File
import java.security.MessageDigest
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec

val ROUNDS = (System.getenv("BENCH_ROUNDS") ?: "15").toInt()
val BATCH_NS = (System.getenv("BENCH_BATCH_MS") ?: "20").toDouble() * 1e6

/** Per contender: min and median ns per call (bench/jvm/Interleave.kt). */
fun timeInterleaved(contenders: List<Pair<String, () -> Any?>>) =
    timeInterleaved(contenders, ROUNDS, BATCH_NS, warmup = 20_000)

/** javax.crypto.Mac, keyed once per thread, as a careful JVM user would write it. */
class HandWritten(secret: ByteArray) {
    private val mac = ThreadLocal.withInitial {
        Mac.getInstance("HmacSHA256").apply { init(SecretKeySpec(secret, "HmacSHA256")) }
    }

    fun verify(headers: Map<String, String>, body: ByteArray, now: Long, parse: Boolean): Any {
        val id = headers["service-webhook-id"] ?: error("missing header")
        val ts = headers["service-webhook-timestamp"] ?: error("missing header")
        val sig = headers["service-webhook-signature"] ?: error("missing header")
        check(id.isNotEmpty() && ts.length in 1..15 && ts.all { it in '0'..'9' }) { "bad timestamp" }
        val m = mac.get()
        m.update(ts.toByteArray())
        m.update('.'.code.toByte())
        val expected = m.doFinal(body)
        var ok = false
        for (part in sig.split(',')) {
            val p = part.trim()
            if (!p.startsWith("v1=") || p.length != 67) continue
            val got = ByteArray(32) { i -> p.substring(3 + 2 * i, 5 + 2 * i).toInt(16).toByte() }
            if (MessageDigest.isEqual(got, expected)) ok = true
        }
        check(ok) { "no matching signature" }
        check(Math.abs(now - ts.toLong()) <= 300) { "timestamp" }
        return if (parse) JsonParser.parseString(String(body, Charsets.UTF_8)) else true
    }
}

fun str(s: String) = "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\""

fun main(args: Array<String>) {
    val cases = JsonParser.parseString(File(args[0]).readText()).asJsonObject["cases"].asJsonArray
    val rows = ArrayList<String>()
    // Warm-up of the whole JNA/uniffi path (C2 compiles it only after many calls), so that the
    // first body measured is not penalised.
    run {
        val c = cases[0].asJsonObject
        val rk = c["royaltykit"].asJsonObject
        val v = WebhookVerifier(listOf(rk["secret"].asString))
        val h = rk["headers"].asJsonObject.entrySet().associate { it.key to it.value.asString }
        val b = c["body"].asString.toByteArray(Charsets.UTF_8)
        val t0 = System.nanoTime()
        while (System.nanoTime() - t0 < 3_000_000_000L) v.verify(h, b, c["timestamp"].asLong)
    }
    for (ce in cases) {
        val c = ce.asJsonObject
        val name = c["name"].asString
        val body = c["body"].asString.toByteArray(Charsets.UTF_8)
        val rk = c["royaltykit"].asJsonObject
        val secret = rk["secret"].asString
        val headers = rk["headers"].asJsonObject.entrySet().associate { it.key.lowercase() to it.value.asString }
        val now = c["timestamp"].asLong
        val verifier = WebhookVerifier(listOf(secret))
        val hand = HandWritten(secret.toByteArray())
        val contenders = listOf<Pair<String, () -> Any?>>(
            "royaltykit WebhookVerifier.verify" to { verifier.verify(headers, body, now) },
            "javax.crypto.Mac hand-written, signature only" to { hand.verify(headers, body, now, false) },
            "javax.crypto.Mac hand-written + gson parse" to { hand.verify(headers, body, now, true) },
            "uniffi no-op, no arguments (JNA floor)" to { ffiFloor() },
            "uniffi no-op taking a ByteArray of the body's size" to { ffiFloorWithBytes(body) },
        )
        contenders.forEach { it.second() } // every contender must accept the delivery
        check(verifier.verify(headers, body, now).event.name == JsonParser.parseString(c["body"].asString).asJsonObject["event"].asString)
        val forged = String(body).replaceFirst("\"event\":\"", "\"event\":\"x").toByteArray()
        check(runCatching { verifier.verify(headers, forged, now) }.isFailure) { "royaltykit accepted a forgery" }
        check(runCatching { hand.verify(headers, forged, now, false) }.isFailure) { "hand-written accepted a forgery" }
        for ((contender, min, median) in timeInterleaved(contenders)) {
            rows.add("""{"group":"verify","case":${str(name)},"bytes":${body.size},"contender":${str(contender)},"min_ns":$min,"median_ns":$median}""")
        }
        System.err.println("jvm: $name done")
    }
    val keys = Array(200_000) { "dlv1:org_42:wh_del_%012d".format(it) }
    val w = DedupWindow(100_000, 3600)
    val dupes = DedupWindow(100_000, 3600)
    for (k in 0 until 1000) dupes.checkAndInsert(keys[k], 1000)
    var i = 0
    var j = 0
    val errBody = """{"error":{"code":"validation_failed","message":"The request is invalid.","details":[{"field":"name","issue":"required"}]},"request_id":"req_123"}""".toByteArray()
    val errHeaders = mapOf("content-type" to "application/json", "x-request-id" to "req_123")
    val retryHeaders = mapOf("retry-after" to "7")
    val calls = listOf<Pair<String, () -> Any?>>(
        "DedupWindow.checkAndInsert (new keys, full window)" to { i = (i + 1) % keys.size; w.checkAndInsert(keys[i], 1000) },
        "DedupWindow.checkAndInsert (duplicates)" to { j = (j + 1) % 1000; dupes.checkAndInsert(keys[j], 1000) },
        "decideRetry (503 with Retry-After, read)" to {
            decideRetry(RetryInput(retryClass = RetryClass.READ, attempt = 1, status = 503, headers = retryHeaders, elapsedSeconds = 0.5, random = 0.25, now = 1000))
        },
        "parseApiError (422 JSON body)" to { parseApiError(Api.ENTERPRISE, 422L, errHeaders, errBody, null, 1000L) },
    )
    for ((contender, min, median) in timeInterleaved(calls)) {
        rows.add("""{"group":"calls","case":"","bytes":0,"contender":${str(contender)},"min_ns":$min,"median_ns":$median}""")
    }
    val out = """{"language":"jvm","java":${str(System.getProperty("java.version"))},"results":[
${rows.joinToString(",\n")}]}"""
    File(args[1]).writeText(out)
}
