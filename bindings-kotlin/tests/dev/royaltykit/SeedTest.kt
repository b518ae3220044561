package dev.royaltykit

import dev.royaltykit.client.HttpOutcome
import dev.royaltykit.client.HttpTransport
import dev.royaltykit.client.ReportsClient
import org.junit.Assert.assertEquals
import org.junit.Assert.assertNotEquals
import org.junit.Assert.assertTrue
import org.junit.Test

/**
 * A client's `seed` is every machine's seed (issue 41: "every injected seed is honoured"): the
 * token exchange's jittered waits, each call's and each create's idempotency key come from it,
 * so a run is replayed exactly, as with Python's and Node's `seed`.
 */
class SeedTest {
    private val tenant = "0f8fad5b-d9cb-469f-a165-70867728950e"

    /** What a run with [seed] did: each wait, and the Idempotency-Key of each create sent. */
    private fun run(seed: (() -> Long)?): Pair<List<Double>, List<String?>> {
        val waits = ArrayList<Double>()
        val keys = ArrayList<String?>()
        var now = 1_763_900_000.0
        var exchanges = 0
        val transport = HttpTransport { request, _, _ ->
            if (request.url.endsWith("/oauth/token")) {
                // The exchange fails 4 times (waits 2, 5, 15, then 30–60 s jittered), then succeeds.
                if (++exchanges < 5) HttpOutcome.Response(503, emptyList(), ByteArray(0))
                else HttpOutcome.Response(200, listOf("Cache-Control" to "no-store"),
                    """{"access_token":"tok_seed","token_type":"Bearer","expires_in":3600}""".toByteArray())
            } else {
                keys.add(request.headers.firstOrNull { it.first.equals("Idempotency-Key", true) }?.second)
                HttpOutcome.Response(201, emptyList(), """{"id":"exp_1","status":"queued"}""".toByteArray())
            }
        }
        ReportsClient(transport, "https://reports.example", "cid", "csecret", tenant, idempotencyHeader = "Idempotency-Key",
            clock = { now }, sleep = { waits.add(it); now += it }, onEvent = {}, seed = seed).let { client ->
            repeat(2) { client.request("createPlatformExport", body = """{"export_class":"statements","format":"csv"}""") }
        }
        return waits to keys
    }

    @Test
    fun theSameSeedReplaysTheSameWaitsAndKeys() {
        var n = 0L
        val a = run { 42L + n++ }
        n = 0L
        val b = run { 42L + n++ }
        assertEquals(a, b)
        assertEquals(listOf(2.0, 5.0, 15.0), a.first.take(3))
        assertTrue(a.first[3] in 30.0..60.0)
        assertEquals(2, a.second.filterNotNull().toSet().size) // one key per logical create
    }

    @Test
    fun anotherSeedGivesOtherKeysAndJitter() {
        val a = run { 42L }
        val b = run { 43L }
        assertNotEquals(a.second, b.second)
        assertNotEquals(a.first[3], b.first[3])
    }

    @Test
    fun aNegativeSeedIsRefusedAsInPythonAndNode() {
        val thrown = runCatching { run { -1L } }.exceptionOrNull()
        assertTrue(thrown.toString(), thrown is IllegalArgumentException && "non-negative" in thrown.message!!)
    }

    @Test
    fun withoutASeedEachRunHasItsOwnKeys() {
        val a = run(null).second
        val b = run(null).second
        assertEquals("four creates, four keys from the OS RNG", 4, (a + b).filterNotNull().toSet().size)
    }
}
