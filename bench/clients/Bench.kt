// make bench, clients, JVM part. Usage: java -cp ... BenchKt <base url> <out.json>
// The cost per call of royaltykit's ReportsClient.request() (its token already cached) over
// JavaHttpTransport and OkHttpTransport against the same GET made directly with java.net.http and
// OkHttp: the same headers (bearer token, tenant, Accept), the body read as bytes (request()
// returns the body's bytes), the status checked. Each contender has its own, identically built
// HTTP client. Contenders run interleaved: ROUNDS rounds, each a timed batch per contender;
// reported: min and median over the rounds of µs per call.
import dev.royaltykit.client.JavaHttpTransport
import dev.royaltykit.client.ReportsClient
import dev.royaltykit.okhttp.OkHttpTransport
import okhttp3.OkHttpClient
import okhttp3.Request
import java.io.File
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.time.Duration

val ROUNDS = (System.getenv("BENCH_CLIENT_ROUNDS") ?: "31").toInt()
val BATCH_NS = (System.getenv("BENCH_CLIENT_BATCH_MS") ?: "40").toDouble() * 1e6
val WARMUP = (System.getenv("BENCH_CLIENT_WARMUP") ?: "5000").toInt()
const val TENANT = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"
const val EXPORT_ID = "7a1f6c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b"
const val TOKEN = "rt_bench_00112233445566778899aabbccddeeff" // what the server issues; the direct contenders hold it

/** Per contender: min and median µs per call (bench/jvm/Interleave.kt). */
fun timeInterleaved(contenders: List<Pair<String, () -> Any?>>) =
    timeInterleaved(contenders, ROUNDS, BATCH_NS, WARMUP, maxN = 1_000_000, growth = 2)
        .map { (name, min, median) -> Triple(name, min / 1e3, median / 1e3) }

fun javaHttp(): HttpClient = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build() // JavaHttpTransport's default

fun reports(transport: dev.royaltykit.client.HttpTransport, base: String) =
    ReportsClient(transport, baseUrl = base, clientId = "cid", clientSecret = "csecret", tenantId = TENANT)

fun stats(base: String): Map<String, Long> {
    val text = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("$base/_stats")).build(),
        HttpResponse.BodyHandlers.ofString()).body()
    return Regex("\"(\\w+)\":(\\d+)").findAll(text).associate { it.groupValues[1] to it.groupValues[2].toLong() }
}

fun main(args: Array<String>) {
    val base = args[0].trimEnd('/')
    val url = "$base/api/platform/v1/exports/$EXPORT_ID"
    val path = mapOf("export" to EXPORT_ID)

    val rkJava = reports(JavaHttpTransport(javaHttp()), base)
    val jdk = javaHttp()
    val jdkRequest = HttpRequest.newBuilder(URI.create(url)).header("Accept", "application/json")
        .header("Authorization", "Bearer $TOKEN").header("X-Tenant-ID", TENANT).GET().build()
    fun directJava(): ByteArray {
        val r = jdk.send(jdkRequest, HttpResponse.BodyHandlers.ofByteArray())
        check(r.statusCode() == 200) { "status ${r.statusCode()}" }
        return r.body()
    }

    val rkOk = reports(OkHttpTransport(OkHttpClient()), base)
    val ok = OkHttpClient()
    fun directOk(): ByteArray {
        val request = Request.Builder().url(url).header("Accept", "application/json")
            .header("Authorization", "Bearer $TOKEN").header("X-Tenant-ID", TENANT).build()
        return ok.newCall(request).execute().use { r ->
            check(r.code == 200) { "status ${r.code}" }
            r.body!!.bytes()
        }
    }

    val groups = listOf(
        "java.net.http" to listOf<Pair<String, () -> Any?>>(
            "royaltykit" to { rkJava.request("getPlatformExport", path = path) }, "direct" to ::directJava),
        "OkHttp" to listOf<Pair<String, () -> Any?>>(
            "royaltykit" to { rkOk.request("getPlatformExport", path = path) }, "direct" to ::directOk),
    )
    // Every contender gets the same answer; the royaltykit clients obtain their tokens here (not timed).
    val start = stats(base)
    for ((client, contenders) in groups) {
        val answers = contenders.map { (_, fn) -> String(fn() as ByteArray) }
        check(answers.all { it == answers[0] } && answers[0].contains(EXPORT_ID)) { "$client: $answers" }
    }
    val before = stats(base)
    check(before["tokens"]!! - start["tokens"]!! == 2L && before["unauthorized"] == start["unauthorized"]) { "server saw $before" }

    val out = StringBuilder("[")
    for ((client, contenders) in groups) {
        val res = timeInterleaved(contenders)
        for ((name, min, med) in res) {
            if (out.length > 1) out.append(",")
            out.append("\n {\"language\": \"JVM\", \"client\": \"$client\", \"contender\": \"$name\", \"min_us\": $min, \"median_us\": $med}")
        }
        System.err.println("jvm $client: royaltykit %.1f µs, direct %.1f µs, %.2f×".format(res[0].third, res[1].third, res[0].third / res[1].third))
    }
    val after = stats(base) // the timed calls were all answered, and never exchanged a token
    check(after["tokens"] == before["tokens"] && after["unauthorized"] == start["unauthorized"]) { "server saw $after" }
    File(args[1]).writeText(out.append("\n]\n").toString())
}
