package dev.royaltykit

import dev.royaltykit.types.*

import com.google.gson.JsonArray
import com.google.gson.JsonElement
import com.google.gson.JsonObject
import com.google.gson.JsonParser
import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.Test
import java.io.File

/**
 * The protocol machines' transcripts (tests/vectors/machines.json) against the built jar: each
 * machine is driven the way a host drives it (`when` on the step, do it against the script,
 * report the outcome) and every step is compared with the transcript's.
 */
class MachinesTest {
    private val data: JsonObject = JsonParser.parseString(
        File(System.getenv("ROYALTYKIT_VECTORS") ?: "../tests/vectors", "machines.json").readText(),
    ).asJsonObject

    private fun JsonObject.str(k: String): String? = get(k)?.takeUnless { it.isJsonNull }?.asString
    private fun JsonObject.num(k: String): Double? = get(k)?.takeUnless { it.isJsonNull }?.asDouble
    private fun pairs(a: JsonElement?): List<Pair<String, String>> =
        a?.takeUnless { it.isJsonNull }?.asJsonArray?.map { it.asJsonArray[0].asString to it.asJsonArray[1].asString } ?: emptyList()
    private fun step(vararg kv: Pair<String, Any?>): Map<String, Any?> = linkedMapOf(*kv)

    private fun receipt(i: JsonObject): List<Map<String, Any?>> {
        val secrets = i["secrets"].asJsonArray.map { val s = it.asJsonObject; WebhookSecret(s.str("secret")!!, s.num("valid_until")?.toLong()) }
        val body = i["body"].asJsonObject.let { if (it.has("utf8")) it.str("utf8")!!.toByteArray() else java.util.HexFormat.of().parseHex(it.str("hex")) }
        val headers = pairs(i["headers"]).groupBy({ it.first }, { it.second })
        val answers = ArrayDeque(i["answers"].asJsonArray.map { it.asString })
        val steps = ArrayList<Map<String, Any?>>()
        WebhookVerifier(secrets).use { verifier ->
            verifier.receiptMulti(headers, body, i.str("namespace")!!, i["now"].asLong, transactional = i["transactional"]?.asBoolean == true).use { r ->
                var s = r.next()
                while (true) {
                    s = when (s) {
                        is ReceiptStep.Claim -> {
                            steps.add(step("step" to "claim", "key" to s.key))
                            val a = answers.removeFirst()
                            if (a == "store_down") r.storeFailed() else r.claimed(ClaimState.valueOf(a.uppercase()))
                        }
                        is ReceiptStep.Release -> { steps.add(step("step" to "release", "key" to s.key)); answers.removeFirst(); r.released() }
                        is ReceiptStep.RunHandler -> {
                            steps.add(step("step" to "run_handler"))
                            assertTrue(r.delivery() != null)
                            if (answers.removeFirst() == "ok") r.handlerSucceeded() else r.handlerFailed()
                        }
                        is ReceiptStep.Commit -> {
                            steps.add(step("step" to "commit", "key" to s.key, "attempt" to s.attempt.toLong()))
                            when (answers.removeFirst()) { "ok" -> r.committed(); "lost" -> r.claimLost(); else -> r.storeFailed() }
                        }
                        is ReceiptStep.Begin -> { steps.add(step("step" to "begin")); if (answers.removeFirst() == "ok") r.began() else r.storeFailed() }
                        is ReceiptStep.CommitTransaction -> {
                            steps.add(step("step" to "commit_transaction"))
                            if (answers.removeFirst() == "ok") r.transactionCommitted() else r.storeFailed()
                        }
                        is ReceiptStep.Rollback -> { steps.add(step("step" to "rollback")); answers.removeFirst(); r.rolledBack() }
                        is ReceiptStep.Wait -> { steps.add(step("step" to "wait", "seconds" to s.seconds)); r.waited() }
                        is ReceiptStep.Reply -> {
                            val reply = JsonParser.parseString(s.body).asJsonObject
                            assertTrue(r.isFinished())
                            steps.add(step("step" to "reply", "status" to s.status.toLong(), *reply.entrySet().filter { it.key != "message" }.map { it.key to it.value.asString }.toTypedArray()))
                            return steps
                        }
                    }
                }
            }
        }
        @Suppress("UNREACHABLE_CODE") return steps
    }

    /** The host loop of a Call or an ExportJob over a scripted transport and clock. */
    private fun drive(
        i: JsonObject,
        api: Api,
        next: (Double, RateBudget?) -> CallStep,
        response: (Long, Map<String, String>, ByteArray, Double) -> Unit,
        streams: (Long) -> Boolean,
        streamed: (Long, Map<String, String>, Long, Double) -> Unit,
        transport: (TransportFailure, Double) -> Unit,
        token: (BearerToken, Double?) -> Unit,
    ): List<Map<String, Any?>> {
        var now = i["start"].asDouble
        val events = ArrayDeque(i["events"].asJsonArray.map { it.asJsonObject })
        val budget = i["budget"]?.takeUnless { it.isJsonNull }?.asJsonArray?.let { w ->
            RateBudget(w.map { val a = it.asJsonArray; RateWindow(a[0].asString, a[1].asLong, a[2].asLong) })
        }
        val steps = ArrayList<Map<String, Any?>>()
        repeat(200) {
            when (val s = next(now, budget)) {
                is CallStep.Send -> {
                    val r = s.request
                    val auth = r.headers().firstOrNull { it.name == "Authorization" }?.value
                    steps.add(step("step" to "send", "method" to r.method(), "target" to r.pathAndQuery(), "token" to auth?.removePrefix("Bearer "),
                        "idempotency_key" to (if (r.idempotencyKeySent()) r.idempotencyKey() else null)))
                    val e = events.removeFirst()
                    now += e.num("after") ?: 0.0
                    val kind = e.str("transport")
                    if (kind != null) transport(TransportFailure.valueOf(kind.uppercase()), now)
                    else e["response"].asJsonObject.let { resp ->
                        val status = resp["status"].asLong
                        val body = resp.str("body")!!.toByteArray()
                        val flag = e["streamed"]?.asBoolean
                        if (flag != null) assertEquals("streams($status)", flag, streams(status))
                        if (flag == true) streamed(status, pairs(resp["headers"]).toMap(), body.size.toLong(), now)
                        else response(status, pairs(resp["headers"]).toMap(), body, now)
                    }
                }
                is CallStep.Wait -> { steps.add(step("step" to "wait", "seconds" to s.seconds)); now += s.seconds }
                is CallStep.RefreshToken -> {
                    steps.add(step("step" to "refresh_token"))
                    val e = events.removeFirst()
                    val t = if (api == Api.REPORTS) BearerToken.reports(e.str("token")!!) else BearerToken.enterprise(e.str("token")!!)
                    token(t, e.num("valid_for")?.let { now + it })
                }
                is CallStep.Reconcile -> { steps.add(step("step" to "reconcile", "reconcile" to s.reconcile.name.lowercase())); return steps }
                is CallStep.Done -> {
                    steps.add(if (s.exportId == null) step("step" to "done", "status" to s.status.toLong(), "body" to String(s.body))
                        else step("step" to "done", "export_id" to s.exportId, "artifact" to String(s.body)))
                    return steps
                }
                is CallStep.Fail -> {
                    steps.add(step("step" to "fail", "rule" to s.rule, "status" to s.status?.toLong(), "code" to s.error?.code,
                        "transport" to s.transport?.name?.lowercase(), "retry_after_seconds" to s.retryAfterSeconds, "stage" to s.stage, "export_id" to s.exportId))
                    return steps
                }
            }
        }
        fail("no end after 200 steps: $steps")
        return steps
    }

    private fun exchange(i: JsonObject): List<Map<String, Any?>> {
        val x = i["exchange"].asJsonObject
        val request = if (x.str("api") == "reports") {
            buildTokenRequest(x.str("client_id")!!, x.str("client_secret")!!, x.str("tenant_id")!!, emptyList())
        } else {
            buildEnterpriseTokenRequest(x.str("api_key")!!, x.str("api_secret")!!)
        }
        val api = if (x.str("api") == "reports") Api.REPORTS else Api.ENTERPRISE
        return Call.exchange(request, seed = i["options"].asJsonObject["seed"].asLong.toULong()).use { c ->
            drive(i, api, { now, b -> c.next(now, b) }, { st, h, body, now -> c.response(st, h, body, now) },
                { st -> c.streams(st) }, { st, h, n, now -> c.streamedResponse(st, h, n, now) },
                { f, now -> c.transportFailure(f, now) }, { t, at -> c.token(t, at) })
        }
    }

    private fun call(i: JsonObject): List<Map<String, Any?>> {
        if (i.has("exchange")) return exchange(i)
        val p = i["params"].asJsonObject
        val o = i["options"].asJsonObject
        val params = RequestParams(
            path = pairs(p["path"]).toMap(), query = pairs(p["query"]).map { Param(it.first, it.second) },
            body = p.str("body")?.toByteArray(), tenantId = p.str("tenant_id"), idempotencyKey = p.str("idempotency_key"),
            idempotencyHeader = p.str("idempotency_header"), requestId = p.str("request_id"),
        )
        return Call(i.str("operation")!!, params, o.num("max_attempts")?.toLong(), o.num("max_elapsed_seconds"), o["seed"].asLong.toULong()).use { c ->
            drive(i, operation(i.str("operation")!!).api, { now, b -> c.next(now, b) }, { st, h, body, now -> c.response(st, h, body, now) },
                { st -> c.streams(st) }, { st, h, n, now -> c.streamedResponse(st, h, n, now) },
                { f, now -> c.transportFailure(f, now) }, { t, at -> c.token(t, at) })
        }
    }

    private fun exportJob(i: JsonObject): List<Map<String, Any?>> {
        val o = i["options"].asJsonObject
        val params = ExportJobParams(
            tenantId = o.str("tenant_id")!!, body = o.str("body")!!.toByteArray(), idempotencyHeader = o.str("idempotency_header"),
            requestId = o.str("request_id"), maxPolls = o.num("max_polls")?.toLong(), seed = o["seed"].asLong.toULong(),
            idField = o.str("id_field"), stateField = o.str("state_field"),
        )
        return ExportJob(params).use { j ->
            drive(i, Api.REPORTS, { now, b -> j.next(now, b) }, { st, h, body, now -> j.response(st, h, body, now) },
                { st -> j.streams(st) }, { st, h, n, now -> j.streamedResponse(st, h, n, now) },
                { f, now -> j.transportFailure(f, now) }, { t, at -> j.token(t, at) })
        }
    }

    /** The transcript's step as Kotlin values: numbers as Double unless whole (compared as Long). */
    private fun expected(e: JsonElement): Map<String, Any?> = e.asJsonObject.entrySet().associate { (k, v) ->
        k to when {
            v.isJsonNull -> null
            v.isJsonPrimitive && v.asJsonPrimitive.isNumber -> v.asDouble
            else -> v.asString
        }
    }

    private fun same(want: Map<String, Any?>, got: Map<String, Any?>): Boolean = want.all { (k, w) ->
        val g = got[k]
        k in got && when {
            w is Double && g is Number -> Math.abs(w - g.toDouble()) < 1e-6
            else -> w == g
        }
    }

    @Test
    fun everyTranscriptGivesTheSameSteps() {
        var count = 0
        for (group in data["testGroups"].asJsonArray.map { it.asJsonObject }) {
            val tests = group["tests"].asJsonArray.map { it.asJsonObject }
            assertTrue(tests.size >= 40)
            for (t in tests) {
                count++
                val input = t["input"].asJsonObject
                val got = when (val f = group.str("function")) {
                    "receipt" -> receipt(input)
                    "call" -> call(input)
                    "export_job" -> exportJob(input)
                    else -> { fail("no adapter for $f"); emptyList() }
                }
                val want = t["expected"].asJsonObject["steps"].asJsonArray.map(::expected)
                val id = "tcId ${t["tcId"]} ${t.str("comment")}"
                assertEquals("$id: $got", want.size, got.size)
                want.zip(got).forEachIndexed { n, (w, g) -> assertTrue("$id step $n: want $w, got $g", same(w, g)) }
            }
        }
        assertEquals(data["numberOfTests"].asInt, count)
    }

    @Test
    fun aSavedExportJobResumesWithoutASecondCreate() {
        val params = ExportJobParams(tenantId = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e", body = """{"format":"csv"}""".toByteArray(), seed = 1uL)
        val saved = ExportJob(params).use { job ->
            job.token(BearerToken.reports("secret-bearer-9"))
            assertTrue(job.next(0.0) is CallStep.Send)
            job.response(200, emptyMap(), "[]".toByteArray(), 0.0)
            val create = job.next(0.0)
            assertEquals("POST", (create as CallStep.Send).request.method())
            job.save() // the create is in flight when the process dies
        }
        assertFalse(saved.contains("secret-bearer-9"))
        ExportJob.resume(saved).use { job ->
            job.token(BearerToken.reports("secret-bearer-10"))
            val s = job.next(5.0)
            assertEquals("reconciled, never created twice", "GET", (s as CallStep.Send).request.method())
        }
    }

    @Test
    fun aReceiptOnADedupWindowAsksOnlyForTheHandler() {
        val now = 1_763_784_000L
        fun signed(id: String, ref: String = "m1"): Pair<Map<String, String>, ByteArray> {
            val body = """{"event":"ddex.import.completed","resource":{"type":"ddex_message","reference":"$ref","url":"/api/v1/ddex/messages/$ref"},"occurred_at":"2026-11-22T04:00:00Z"}""".toByteArray()
            return signWebhook("whsec_window", body, now, id) to body
        }
        WebhookVerifier(listOf("whsec_window")).use { verifier ->
            DedupWindow(100).use { window ->
                val (headers, body) = signed("dlv_w1")
                val first = verifier.receipt(headers, body, "org_1", now, window)
                assertTrue("claimed in the core", first.next() is ReceiptStep.RunHandler)
                val key = deliveryKey("org_1", "dlv_w1")
                assertEquals(ClaimState.IN_PROGRESS, window.claim(key, now))
                val twin = verifier.receipt(headers, body, "org_1", now, window)
                assertEquals(503.toUShort(), (twin.next() as ReceiptStep.Reply).status)
                assertEquals("the twin released nothing", ClaimState.IN_PROGRESS, window.claim(key, now))
                val reply = first.handlerSucceeded() as ReceiptStep.Reply
                assertEquals(200.toUShort(), reply.status)
                assertTrue(reply.body.contains("processed"))
                assertEquals(ClaimState.DONE, window.claim(key, now))
                val again = verifier.receipt(headers, body, "org_1", now + 60, window).next() as ReceiptStep.Reply
                assertEquals(200.toUShort(), again.status)
                assertFalse("a duplicate skips the handler", again.body.contains("processed"))
                val (h2, b2) = signed("dlv_w2", "m2") // other content: the same content is a duplicate
                assertEquals(500.toUShort(), (verifier.receipt(h2, b2, "org_1", now, window).handlerFailed() as ReceiptStep.Reply).status)
                assertTrue("released for the redelivery", verifier.receipt(h2, b2, "org_1", now + 30, window).next() is ReceiptStep.RunHandler)
            }
        }
    }
}
