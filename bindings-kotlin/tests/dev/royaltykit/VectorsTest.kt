package dev.royaltykit

import dev.royaltykit.types.*

import com.google.gson.JsonArray
import com.google.gson.JsonObject
import com.google.gson.JsonParser
import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.Test
import java.io.File

/** The shared vectors (the JSON files in tests/vectors) against the built jar. */
class VectorsTest {
    private val dir = File(System.getenv("ROYALTYKIT_VECTORS") ?: "../tests/vectors")
    private fun load(name: String): JsonObject = JsonParser.parseString(File(dir, name).readText()).asJsonObject

    private fun bytes(b: JsonObject): ByteArray =
        if (b.has("utf8")) b["utf8"].asString.toByteArray(Charsets.UTF_8)
        else b["hex"].asString.chunked(2).map { it.toInt(16).toByte() }.toByteArray()

    private fun strings(a: JsonArray) = a.map { it.asString }

    /** Pairs (a name may repeat) grouped into the multimap shape the JVM API takes. */
    private fun headers(a: JsonArray): Map<String, List<String>> {
        val out = LinkedHashMap<String, MutableList<String>>()
        for (p in a) out.getOrPut(p.asJsonArray[0].asString) { mutableListOf() }.add(p.asJsonArray[1].asString)
        return out
    }

    @Test
    fun webhookVectors() {
        val cases = load("webhook.json")["cases"].asJsonArray
        assertTrue(cases.size() >= 60)
        val failures = mutableListOf<String>()
        for (c in cases.map { it.asJsonObject }) {
            val i = c["input"].asJsonObject
            val id = "tcId ${c["tcId"]} (${c["comment"].asString})"
            val tol = if (i.has("tolerance")) i["tolerance"].asLong else null
            val max = if (i.has("max_body_bytes")) i["max_body_bytes"].asLong else null
            try {
                val v = verifyWebhook(headers(i["headers"].asJsonArray), bytes(i["body"].asJsonObject),
                    strings(i["secrets"].asJsonArray), i["now"].asLong, tol, max)
                if (c["result"].asString != "valid") { failures += "$id: accepted, expected ${c["error"]}"; continue }
                val e = c["expected"].asJsonObject
                val ev = e["event"].asJsonObject
                val want = listOf(e["delivery_id"].asString, e["timestamp"].asLong, e["secret_index"].asInt.toUInt(),
                    e["content_key"].asString, ev["name"].asString, ev["resource_type"].asString,
                    ev["resource_reference"].asString, ev["resource_url"].asString, ev["occurred_at"].asLong,
                    if (ev["replay_of"].isJsonNull) null else ev["replay_of"].asString, ev["is_test"].asBoolean)
                val got = listOf(v.deliveryId, v.timestamp, v.secretIndex, v.contentKey, v.event.name,
                    v.event.resourceType, v.event.resourceReference, v.event.resourceUrl, v.event.occurredAt,
                    v.event.replayOf, v.event.isTest)
                if (want != got) failures += "$id: $got != $want"
            } catch (e: RoyaltyKitException) {
                if (c["result"].asString != "invalid" || e.code != c["error"].asString || e.httpStatus.toInt() != c["http_status"].asInt) {
                    failures += "$id: ${e.code} ${e.httpStatus} (${e.message})"
                }
            }
        }
        if (failures.isNotEmpty()) fail(failures.joinToString("\n"))
    }

    @Test
    fun verifierObjectAgreesOnEveryVector() {
        var compared = 0
        for (c in load("webhook.json")["cases"].asJsonArray.map { it.asJsonObject }) {
            val i = c["input"].asJsonObject
            val tol = if (i.has("tolerance")) i["tolerance"].asLong else null
            val max = if (i.has("max_body_bytes")) i["max_body_bytes"].asLong else null
            val verifier = try {
                WebhookVerifier(strings(i["secrets"].asJsonArray), tol, max)
            } catch (e: RoyaltyKitException) {
                assertEquals("invalid_secret", e.code); continue
            }
            fun outcome(f: () -> VerifiedWebhook) = try { f().contentKey } catch (e: RoyaltyKitException) { e.code }
            val h = headers(i["headers"].asJsonArray)
            val body = bytes(i["body"].asJsonObject)
            val a = outcome { verifier.verifyMulti(h, body, i["now"].asLong) }
            val b = outcome { verifyWebhook(h, body, strings(i["secrets"].asJsonArray), i["now"].asLong, tol, max) }
            assertEquals("tcId ${c["tcId"]}", b, a)
            verifier.close()
            compared++
        }
        assertTrue(compared > 50)
    }

    private fun check(c: JsonObject, f: () -> String) {
        val got = try { "value:" + f() } catch (e: RoyaltyKitException) { "error:" + e.code }
        val want = if (c.has("expected")) "value:" + c["expected"].asString else "error:" + c["error"].asString
        assertEquals(c["comment"].asString, want, got)
    }

    @Test
    fun dedupKeys() {
        val d = load("dedup.json")
        for (c in d["delivery_key"].asJsonArray.map { it.asJsonObject }) {
            val i = c["input"].asJsonObject
            check(c) { deliveryKey(i["namespace"].asString, i["delivery_id"].asString) }
        }
        for (c in d["event_key"].asJsonArray.map { it.asJsonObject }) {
            val i = c["input"].asJsonObject
            val ev = WebhookEvent(i["name"].asString, true, false, i["resource_type"].asString,
                i["resource_reference"].asString, "", 0, i["occurred_at"].asString, null)
            check(c) { eventKey(i["namespace"].asString, ev) }
        }
        for (c in d["content_key"].asJsonArray.map { it.asJsonObject }) {
            val i = c["input"].asJsonObject
            check(c) { contentKey(i["secret"].asString, i["timestamp"].asString, bytes(i["body"].asJsonObject)) }
        }
        for (c in d["idempotency_key"].asJsonArray.map { it.asJsonObject }) {
            val i = c["input"].asJsonObject
            check(c) { idempotencyKey(i["tenant"].asString, i["operation_id"].asString, bytes(i["body"].asJsonObject)) }
        }
    }

    @Test
    fun dedupWindowSequences() {
        for (c in load("dedup.json")["window"].asJsonArray.map { it.asJsonObject }) {
            if (c.has("error")) {
                try {
                    DedupWindow(c["capacity"].asLong, c["ttl_seconds"].asLong); fail("accepted ${c["comment"]}")
                } catch (e: RoyaltyKitException) { assertEquals(c["error"].asString, e.code) }
                continue
            }
            DedupWindow(c["capacity"].asLong, c["ttl_seconds"].asLong).use { w ->
                for (op in c["ops"].asJsonArray.map { it.asJsonObject }) {
                    assertEquals("${c["comment"]}: $op", op["expected"].asBoolean, w.checkAndInsert(op["key"].asString, op["now"].asLong))
                }
            }
        }
    }
}
