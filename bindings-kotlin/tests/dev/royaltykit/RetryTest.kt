package dev.royaltykit

import dev.royaltykit.types.*

import com.google.gson.JsonElement
import com.google.gson.JsonObject
import com.google.gson.JsonParser
import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.Test
import java.io.File

/** The retry vectors (tests/vectors/retry.json) and the Kotlin retry surface. */
class RetryTest {
    private val v: JsonObject = JsonParser.parseString(
        File(System.getenv("ROYALTYKIT_VECTORS") ?: "../tests/vectors", "retry.json").readText()
    ).asJsonObject

    private fun JsonObject.opt(k: String): JsonElement? = if (has(k) && !get(k).isJsonNull) get(k) else null

    @Test
    fun decisionVectors() {
        val cases = v["decisions"].asJsonArray.map { it.asJsonObject }
        assertTrue(cases.size >= 100)
        val failures = mutableListOf<String>()
        for (c in cases) {
            val i = c["input"].asJsonObject
            val headers = i.opt("headers")?.asJsonArray?.associate { it.asJsonArray[0].asString to it.asJsonArray[1].asString } ?: emptyMap()
            val retryClass = wireOrNull<RetryClass>(i["retry_class"].asString)
            val transport = i.opt("transport")?.asString?.let { wireOrNull<TransportFailure>(it) ?: run { unrepresentable(c); continue } }
            if (retryClass == null) { unrepresentable(c); continue }
            val input = RetryInput(
                retryClass = retryClass, attempt = i["attempt"].asLong, status = i.opt("status")?.asLong,
                headers = headers, transport = transport, elapsedSeconds = i["elapsed_seconds"].asDouble,
                tokenRefreshed = i["token_refreshed"].asBoolean, random = i["random"].asDouble, now = i["now"].asLong,
                maxAttempts = i.opt("max_attempts")?.asLong, maxElapsedSeconds = i.opt("max_elapsed_seconds")?.asDouble,
            )
            val id = "tcId ${c["tcId"]} (${c["comment"].asString})"
            try {
                val d = decideRetry(input)
                val e = c.opt("expected")?.asJsonObject ?: run { failures += "$id: accepted"; continue }
                val ok = d.action.wireName == e["action"].asString && d.rule == e["rule"].asString &&
                    Math.abs(d.delaySeconds - e["delay_seconds"].asDouble) < 1e-9 && d.reconcile?.wireName == e.opt("reconcile")?.asString &&
                    d.reason.length > 10
                if (!ok) failures += "$id: $d"
            } catch (e: RoyaltyKitException) {
                if (c.opt("error")?.asString != e.code) failures += "$id: ${e.message}"
            }
        }
        if (failures.isNotEmpty()) fail(failures.joinToString("\n"))
    }

    @Test
    fun scheduleVectors() {
        val s = v["schedule"].asJsonObject
        val first = s["first_attempt_at"].asLong
        assertEquals(s["delays"].asJsonArray.map { it.asLong.toULong() }, webhookRetrySchedule())
        assertEquals(s["gives_up_at"].asLong, webhookGivesUpAt(first))
        for (c in s["next_attempt_at"].asJsonArray.map { it.asJsonObject }) {
            assertEquals(c.opt("expected")?.asLong, webhookNextAttemptAt(first, c["attempts_made"].asLong))
        }
        try { webhookNextAttemptAt(first, -1); fail() } catch (e: RoyaltyKitException) { assertEquals("invalid_argument", e.code) }
    }

    @Test
    fun backoffVectors() {
        for (c in v["backoff"].asJsonArray.map { it.asJsonObject }) {
            val p = c.opt("policy")?.asJsonObject
            val policy = p?.let {
                val band = it.opt("band")?.asJsonArray
                val jitter = wireOrNull<Jitter>(it["jitter"].asString) ?: run { unrepresentable(c); continue }
                BackoffPolicy(it["steps"].asJsonArray.map { s -> s.asDouble }, band?.get(0)?.asDouble, band?.get(1)?.asDouble,
                    jitter, it["cap_seconds"].asDouble)
            }
            try {
                val d = backoffDelay(c["attempt"].asLong, c["random"].asDouble, policy)
                assertEquals(c["comment"].asString, c["expected"].asDouble, d, 1e-9)
            } catch (e: RoyaltyKitException) {
                assertEquals(c["comment"].asString, c.opt("error")?.asString, e.code)
            }
        }
    }

    @Test
    fun retryAfterVectors() {
        for (c in v["retry_after"].asJsonArray.map { it.asJsonObject }) {
            val r = parseRetryAfter(c["value"].asString, c["now"].asLong, c.opt("cap_seconds")?.asLong)
            val e = c.opt("expected")?.asJsonObject
            assertEquals(c["comment"].asString, e?.let { RetryAfter(it["seconds"].asLong.toULong(), it["capped"].asBoolean, wire(it["form"].asString)) }, r)
        }
    }

    @Test
    fun rateBudgetVectors() {
        for (c in v["rate_budget"].asJsonArray.map { it.asJsonObject }) {
            val budget = try {
                c.opt("preset")?.let { RateBudget.preset(it.asString) }
                    ?: RateBudget(c["windows"].asJsonArray.map { w -> w.asJsonArray.let { RateWindow(it[0].asString, it[1].asLong, if (it[2].isJsonNull) null else it[2].asLong) } })
            } catch (e: RoyaltyKitException) {
                assertEquals(c.opt("error")?.asString, e.code); continue
            }
            for (op in c["ops"].asJsonArray.map { it.asJsonObject }) {
                repeat(op.opt("repeat")?.asInt ?: 1) {
                    val d = budget.tryAcquire(op["now"].asLong)
                    assertEquals("${c["comment"]} $op", RateDecision(op["allowed"].asBoolean, op.opt("wait_until")?.asLong, op.opt("limit")?.asString), d)
                }
            }
        }
    }

    @Test
    fun defaultsUseTheClockAndOsRandomness() {
        repeat(50) { val d = backoffDelay(4); assertTrue(d >= 30.0 && d < 60.0) }
        val date = java.time.format.DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", java.util.Locale.US)
            .format(java.time.ZonedDateTime.now(java.time.ZoneOffset.UTC).plusSeconds(30))
        val d = decideRetry(RetryInput(retryClass = RetryClass.READ, attempt = 1, status = 429, headers = mapOf("Retry-After" to date)))
        assertEquals(RetryAction.RETRY, d.action)
        assertTrue(d.delaySeconds in 28.0..31.0)
    }
}
