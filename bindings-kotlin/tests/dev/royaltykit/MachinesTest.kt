package dev.royaltykit

import dev.royaltykit.types.*
import dev.royaltykit.types.InboxStep

import com.google.gson.GsonBuilder
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

    /** A receipt transcript, driven through JNA (the generated `WebhookReceipt`) or through JNI
     * (`JniReceipt`, what `WebhookReceiver` drives on the JVM). */
    private fun receipt(i: JsonObject, jni: Boolean): List<Map<String, Any?>> {
        val secrets = i["secrets"].asJsonArray.map { val s = it.asJsonObject; WebhookSecret(s.str("secret")!!, s.num("valid_until")?.toLong()) }
        val body = i["body"].asJsonObject.let { if (it.has("utf8")) it.str("utf8")!!.toByteArray() else java.util.HexFormat.of().parseHex(it.str("hex")) }
        val headers = pairs(i["headers"]).groupBy({ it.first }, { it.second })
        val answers = ArrayDeque(i["answers"].asJsonArray.map { it.asString })
        val steps = ArrayList<Map<String, Any?>>()
        WebhookVerifier(secrets).use { verifier ->
            val (transactional, claimContentKey, inbox) =
                Triple(i["transactional"]?.asBoolean == true, i["claim_content_key"]?.asBoolean == true, i["inbox"]?.asBoolean == true)
            val machine: ReceiptMachine = if (jni) {
                checkNotNull(JniReceipt.open(verifier, 0L, packDeliveryMulti(headers, body, i["now"].asLong), i.str("namespace")!!,
                    JniReceipt.flags(transactional, claimContentKey, inbox))) { "the JNI path is not loaded in this JVM" }
            } else {
                JnaReceipt(verifier.receiptMulti(headers, body, i.str("namespace")!!, i["now"].asLong, transactional = transactional,
                    claimContentKey = claimContentKey, inbox = inbox))
            }
            machine.use { r ->
                var s = r.next()
                while (s !is ReceiptStep.Reply) {
                    steps.add(receiptView(s))
                    if (s is ReceiptStep.RunHandler || s is ReceiptStep.Enqueue) assertTrue(r.delivery() != null)
                    // every answer through the receipt's one input, report; "cancel": the host was
                    // cancelled while the step was in flight (a Wait takes an answer only then)
                    val a = if (s is ReceiptStep.Wait && answers.firstOrNull() != "cancel") "ok" else answers.removeFirst()
                    s = r.report(
                        when {
                            a == "cancel" -> ReceiptOutcome.Cancelled
                            s is ReceiptStep.Claim && a != "store_down" -> ReceiptOutcome.Claimed(ClaimState.valueOf(a.uppercase()))
                            s is ReceiptStep.Enqueue && (a == "new" || a == "dup") -> ReceiptOutcome.Enqueued(a == "new")
                            s is ReceiptStep.Commit && (a == "lost" || (a == "ok" && transactional)) -> ReceiptOutcome.Marked(a == "ok")
                            a == "ok" -> ReceiptOutcome.Done
                            else -> ReceiptOutcome.Failed
                        },
                    )
                }
                val reply = JsonParser.parseString(s.body).asJsonObject
                assertTrue(r.isFinished())
                steps.add(step("step" to "reply", "status" to s.status.toLong(), *reply.entrySet().filter { it.key != "message" }.map { it.key to it.value.asString }.toTypedArray()))
                return steps
            }
        }
        @Suppress("UNREACHABLE_CODE") return steps
    }

    /** What a transcript records of a receipt's step that takes an answer. */
    private fun receiptView(s: ReceiptStep): Map<String, Any?> = when (s) {
        is ReceiptStep.Claim -> step("step" to "claim", "key" to s.key)
        is ReceiptStep.Release -> step("step" to "release", "key" to s.key)
        is ReceiptStep.Enqueue -> step("step" to "enqueue", "key" to s.key)
        is ReceiptStep.Commit -> step("step" to "commit", "key" to s.key, "attempt" to s.attempt.toLong())
        is ReceiptStep.Wait -> step("step" to "wait", "seconds" to s.seconds)
        is ReceiptStep.RunHandler -> step("step" to "run_handler")
        is ReceiptStep.Begin -> step("step" to "begin")
        is ReceiptStep.CommitTransaction -> step("step" to "commit_transaction")
        is ReceiptStep.Rollback -> step("step" to "rollback")
        is ReceiptStep.Reply -> step("step" to "reply")
    }

    /** What a transcript records of a Call's or an ExportJob's step. */
    private fun view(s: CallStep): MutableMap<String, Any?> = when (s) {
        is CallStep.Send -> {
            val r = s.request
            val auth = r.headers().firstOrNull { it.name == "Authorization" }?.value
            // wire(base), the clients' one call, reads what the four getters read
            val w = r.wire("https://api.example.test")
            assertEquals(listOf(r.method(), r.url("https://api.example.test"), r.headers()), listOf(w.method, w.url, w.headers))
            assertTrue("wire body", (w.body ?: ByteArray(0)).contentEquals(r.body() ?: ByteArray(0)) && (w.body == null) == (r.body() == null))
            linkedMapOf("step" to "send", "method" to r.method(), "target" to r.pathAndQuery(), "token" to auth?.removePrefix("Bearer "),
                "idempotency_key" to (if (r.idempotencyKeySent()) r.idempotencyKey() else null))
        }
        is CallStep.Wait -> linkedMapOf("step" to "wait", "seconds" to s.seconds)
        is CallStep.RefreshToken -> linkedMapOf("step" to "refresh_token")
        // a fleet's reservation: its keys and arguments, the script's text left out (`reserve_view`)
        is CallStep.Reserve -> linkedMapOf("step" to "reserve", "command" to s.command.drop(2))
        is CallStep.AwaitToken -> linkedMapOf("step" to "await_token", "seconds" to s.seconds)
        is CallStep.Reconcile -> linkedMapOf("step" to "reconcile", "reconcile" to s.reconcile.name.lowercase(), "stage" to s.stage,
            "candidates" to s.candidates)
        is CallStep.Done -> if (s.exportId == null) linkedMapOf("step" to "done", "status" to s.status.toLong(), "body" to String(s.body))
            else linkedMapOf("step" to "done", "export_id" to s.exportId, "artifact" to String(s.body))
        is CallStep.Fail -> linkedMapOf("step" to "fail", "rule" to s.rule, "status" to s.status?.toLong(), "code" to s.error?.code,
            "transport" to s.transport?.name?.lowercase(), "retry_after_seconds" to s.retryAfterSeconds, "stage" to s.stage, "export_id" to s.exportId)
    }

    /** The inputs of a Call or an ExportJob, so one loop reports to both: every outcome through `report`. */
    private class Inputs(
        val report: (StepOutcome, Double) -> Unit,
        val streams: (Long) -> Boolean,
        val token: (BearerToken, Double?) -> Unit,
    )

    private fun Call.inputs() = Inputs({ o, now -> report(o, now) }, { streams(it) }, { t, at -> token(t, at) })

    private fun ExportJob.inputs() = Inputs({ o, now -> report(o, now) }, { streams(it) }, { t, at -> token(t, at) })

    /** A token as the transcript gives it: a reporting one bound to the transcript's tenant. */
    private fun bearer(api: Api, value: String, tenant: String?): BearerToken =
        if (api == Api.REPORTS) BearerToken.reports(value, tenant!!) else BearerToken.enterprise(value)

    /** Reports a send's outcome event (a response, maybe streamed, or a transport failure). */
    private fun report(m: Inputs, e: JsonObject, now: Double) {
        val kind = e.str("transport")
        if (kind != null) return m.report(StepOutcome.NoResponse(TransportFailure.valueOf(kind.uppercase())), now)
        val resp = e["response"].asJsonObject
        val status = resp["status"].asLong
        val body = resp.str("body")!!.toByteArray()
        val flag = e["streamed"]?.asBoolean
        if (flag != null) assertEquals("streams($status)", flag, m.streams(status))
        val headers = pairs(resp["headers"]).toMap()
        m.report(if (flag == true) StepOutcome.Streamed(status, headers, body.size.toLong()) else StepOutcome.Response(status, headers, body), now)
    }

    private fun budget(b: JsonElement?): RateBudget? = b?.takeUnless { it.isJsonNull }?.asJsonArray?.let { w ->
        RateBudget(w.map { val a = it.asJsonArray; RateWindow(a[0].asString, a[1].asLong, a[2].takeUnless { x -> x.isJsonNull }?.asLong) })
    }

    /** The host loop of a Call or an ExportJob standing alone over a scripted transport and clock. */
    private fun drive(i: JsonObject, api: Api, tenant: String?, next: (Double, RateBudget?) -> CallStep, m: Inputs,
                      checkpoint: () -> String? = { null }): Map<String, Any?> {
        var now = i["start"].asDouble
        val events = ArrayDeque(i["events"].asJsonArray.map { it.asJsonObject })
        val budget = budget(i["budget"])
        val steps = ArrayList<Map<String, Any?>>()
        repeat(200) {
            val s = next(now, budget)
            // the host keeps the checkpoint an export job gives before performing the step
            steps.add(if (checkpoint() != null) view(s) + ("checkpoint" to true) else view(s))
            when (s) {
                is CallStep.Send -> {
                    val e = events.removeFirst()
                    now += e.num("after") ?: 0.0
                    report(m, e, now)
                }
                is CallStep.Wait -> now += s.seconds
                is CallStep.RefreshToken -> {
                    val e = events.removeFirst()
                    m.token(bearer(api, e.str("token")!!, tenant), e.num("valid_for")?.let { now + it })
                }
                else -> return mapOf("steps" to steps)
            }
        }
        fail("no end after 200 steps: $steps")
        return emptyMap()
    }

    private fun exchange(i: JsonObject): Map<String, Any?> {
        val x = i["exchange"].asJsonObject
        val request = if (x.str("api") == "reports") {
            buildTokenRequest(x.str("client_id")!!, x.str("client_secret")!!, x.str("tenant_id")!!, emptyList())
        } else {
            buildEnterpriseTokenRequest(x.str("api_key")!!, x.str("api_secret")!!)
        }
        val api = if (x.str("api") == "reports") Api.REPORTS else Api.ENTERPRISE
        return Call.exchange(request, seed = i["options"].asJsonObject["seed"].asLong.toULong()).use { c ->
            drive(i, api, x.str("tenant_id"), { now, b -> c.next(now, b) }, c.inputs())
        }
    }

    private fun params(p: JsonObject) = RequestParams(
        path = pairs(p["path"]).toMap(), query = pairs(p["query"]).map { Param(it.first, it.second) },
        body = p.str("body")?.toByteArray(), tenantId = p.str("tenant_id"), idempotencyKey = p.str("idempotency_key"),
        idempotencyHeader = p.str("idempotency_header"), requestId = p.str("request_id"),
    )

    private fun newCall(operation: String, p: JsonObject, o: JsonObject) =
        Call(operation, params(p), o.num("max_attempts")?.toLong(), o.num("max_elapsed_seconds"), o["seed"]?.asLong?.toULong() ?: 0uL)

    private fun call(i: JsonObject): Map<String, Any?> {
        if (i.has("exchange")) return exchange(i)
        val p = i["params"].asJsonObject
        return newCall(i.str("operation")!!, p, i["options"].asJsonObject).use { c ->
            drive(i, operation(i.str("operation")!!).api, p.str("tenant_id"), { now, b -> c.next(now, b) }, c.inputs())
        }
    }

    private fun jobParams(o: JsonObject) = ExportJobParams(
        tenantId = o.str("tenant_id")!!, body = o.str("body")!!.toByteArray(), idempotencyHeader = o.str("idempotency_header"),
        requestId = o.str("request_id"), maxPolls = o.num("max_polls")?.toLong(), maxPollSeconds = o.num("max_poll_seconds"),
        reconcileGraceSeconds = o.num("reconcile_grace_seconds"),
        minPollIntervalSeconds = o.num("min_poll_interval_seconds"), maxPollIntervalSeconds = o.num("max_poll_interval_seconds"), maxAttempts = o.num("max_attempts")?.toLong(),
        maxElapsedSeconds = o.num("max_elapsed_seconds"), seed = o["seed"]?.asLong?.toULong() ?: 0uL,
        idField = o.str("id_field"), stateField = o.str("state_field"),
    )

    private fun exportJob(i: JsonObject): Map<String, Any?> {
        val o = i["options"].asJsonObject
        return ExportJob(jobParams(o)).use { j -> drive(i, Api.REPORTS, o.str("tenant_id"), { now, b -> j.next(now, b) }, j.inputs(), j::checkpoint) }
    }

    /**
     * Several machines on one Session, played by the transcript's script (gen_machine_vectors.py,
     * above SPEC_S; core/tests/machines.rs, `fn session`): a transcript with `fleet` runs on
     * `Fleet(prefix).session(budget)`, its machines' reservations answered by `reserved` and
     * `reserve_failed`.
     */
    private fun session(i: JsonObject): Map<String, Any?> {
        val api = if (i.str("api") == "reports") Api.REPORTS else Api.ENTERPRISE
        val tenant = i.str("tenant_id")
        val session = when (val prefix = i.str("fleet")) {
            null -> Session(budget(i["budget"]))
            else -> Fleet(prefix).use { it.session(budget(i["budget"])) }
        }
        val machines: List<AutoCloseable> = i["machines"].asJsonArray.map { it.asJsonObject }.map { m ->
            if (m.str("kind") == "call") newCall(m.str("operation")!!, m["params"]?.asJsonObject ?: JsonObject(), m["options"]?.asJsonObject ?: JsonObject())
            else ExportJob(jobParams(m["options"].asJsonObject))
        }
        var now = i["start"].asDouble
        val steps = ArrayList<Map<String, Any?>>()
        try {
            for (a in i["script"].asJsonArray.map { it.asJsonObject }) {
                when {
                    a.has("next") -> {
                        val k = a["next"].asInt
                        val s = when (val m = machines[k]) { is Call -> m.nextIn(now, session); else -> (m as ExportJob).nextIn(now, session) }
                        steps.add(view(s).apply { put("machine", k.toLong()) })
                    }
                    a.has("respond") -> {
                        now += a.num("after") ?: 0.0
                        report(when (val m = machines[a["respond"].asInt]) { is Call -> m.inputs(); else -> (m as ExportJob).inputs() }, a, now)
                    }
                    a.has("token") -> session.storeToken(bearer(api, a.str("token")!!, tenant), a.num("valid_for")?.let { now + it })
                    a.has("exchange_failed") -> session.exchangeFailed(a.str("exchange_failed")!!)
                    a["abandon"]?.asBoolean == true -> session.abandonExchange()
                    a.has("advance") -> now += a["advance"].asDouble
                    a.has("reserved") -> {
                        val m = machines[a["machine"].asInt]
                        (if (m is Call) m.inputs() else (m as ExportJob).inputs()).report(StepOutcome.Reply(a.str("reserved")), now)
                    }
                    a.has("reserve_failed") -> {
                        val m = machines[a["reserve_failed"].asInt]
                        (if (m is Call) m.inputs() else (m as ExportJob).inputs()).report(StepOutcome.NoResponse(TransportFailure.CONNECT_FAILED), now)
                    }
                    else -> fail("unknown script action $a")
                }
            }
            return mapOf("steps" to steps, "exchanges" to session.exchanges())
        } finally {
            machines.forEach { it.close() }
            session.close()
        }
    }

    /** A fleet token step as a transcript records it (core/tests/machines.rs, `fleet_token_view`): a script's text as its name. */
    private fun fleetTokenView(s: FleetTokenStep): Map<String, Any?> = when (s) {
        is FleetTokenStep.Command -> {
            val scripts = mapOf(reserveScript() to "RESERVE_SCRIPT", publishScript() to "PUBLISH_SCRIPT", unlockScript() to "UNLOCK_SCRIPT")
            step("step" to "command", "command" to s.command.args().map { scripts[it] ?: it })
        }
        is FleetTokenStep.Exchange -> step("step" to "exchange")
        is FleetTokenStep.Wait -> step("step" to "wait", "seconds" to s.seconds)
        is FleetTokenStep.Done -> step("step" to "done")
        is FleetTokenStep.Failed -> step("step" to "failed", "reason" to s.reason)
    }

    /**
     * A fleet token refresh driven by the transcript's events (core/tests/machines.rs,
     * `fleet_token`): the step after each event, then whether the session holds a token. Each
     * input's returned step must be `next()`'s.
     */
    private fun fleetToken(i: JsonObject): Map<String, Any?> {
        val api = if (i.str("api") == "reports") Api.REPORTS else Api.ENTERPRISE
        val tenant = i.str("tenant_id")
        var now = i["now"].asDouble
        val session = Fleet(i.str("prefix")).use { it.session() }
        try {
            i.str("held")?.let { session.storeToken(bearer(api, it, tenant), null) }
            FleetToken(session, api, tenant, i["seed"].asLong.toULong(), now).use { ft ->
                val steps = arrayListOf(fleetTokenView(ft.next()))
                for (e in i["events"].asJsonArray.map { it.asJsonObject }) {
                    if (e.has("advance")) {
                        now += e["advance"].asDouble
                        continue
                    }
                    val returned = when {
                        e.has("reply") -> ft.replied(e.str("reply"), session, now)
                        e.has("redis_failed") -> ft.redisFailed(session)
                        e.has("exchanged") -> ft.exchanged(bearer(api, e.str("exchanged")!!, tenant), e.num("refresh_at"), now)
                        e.has("exchange_failed") -> ft.exchangeFailed(e.str("exchange_failed")!!)
                        e.has("waited") -> ft.waited()
                        else -> throw AssertionError("unknown event $e")
                    }
                    val view = fleetTokenView(ft.next())
                    assertEquals("the step an input returns is next()'s", view, fleetTokenView(returned))
                    steps.add(view)
                }
                return mapOf("steps" to steps, "has_token" to session.hasToken())
            }
        } finally {
            session.close()
        }
    }

    /**
     * A walk over a list's pages as the transcript scripts it (core/tests/machines.rs, `fn pages`):
     * each fetch's query, each page's items (where and how many), then how it ended.
     */
    private fun pages(i: JsonObject): Map<String, Any?> {
        val o = i["options"].asJsonObject
        val bodies = ArrayDeque(i["pages"].asJsonArray.map { it.asString })
        val steps = ArrayList<Map<String, Any?>>()
        Pages(i.str("operation")!!, pairs(i["query"]).map { Param(it.first, it.second) }, o.num("max_pages")?.toLong(),
            o.num("max_items")?.toLong(), o.num("page_size")?.toLong(), o.str("id_field")).use { walk ->
            while (true) {
                when (val s = walk.next()) {
                    is PagesStep.Fetch -> {
                        steps.add(step("step" to "fetch", "query" to s.query.map { listOf(it.name, it.value) }))
                        val body = bodies.removeFirstOrNull() ?: break // a fetch the transcript did not script: the steps differ
                        val items = walk.page(body.toByteArray())
                        steps.add(if (items == null) step("step" to "page", "items" to null)
                            else step("step" to "page", "member" to items.member, "take" to items.take.toLong()))
                    }
                    is PagesStep.Done -> {
                        assertEquals(s.pages, walk.pages())
                        assertEquals(s.items, walk.items())
                        steps.add(step("step" to "done", "end" to s.end.name.lowercase(), "pages" to s.pages, "items" to s.items))
                        break
                    }
                    is PagesStep.Fail -> {
                        assertTrue(s.error is RoyaltyKitException.Pagination)
                        steps.add(step("step" to "fail", "code" to s.error.code, "family" to s.error.family.name.lowercase()))
                        break
                    }
                }
            }
        }
        return mapOf("steps" to steps)
    }

    /**
     * A recovery run as the transcript scripts it (core/tests/machines.rs, `fn recovery`): each
     * fetch's query, each check's keys (answered from `states` by key, `new` when absent), each
     * replay (answered from `replays`: `failed` → `replayFailed`, else `replayed` with `body`),
     * then the report with snake_case keys, or the failure.
     */
    /** An input returns the step that follows: the one `next()` gives (compared as text: a
     *  `Fail`'s exception is a new object each time). */
    private fun returnsNext(run: Recovery, step: RecoveryStep) =
        assertEquals("an input returns the step next() gives", run.next().toString(), step.toString())

    private fun recovery(i: JsonObject): Map<String, Any?> {
        val o = i["options"].asJsonObject
        val bodies = ArrayDeque(i["pages"].asJsonArray.map { it.asString })
        val replays = ArrayDeque(i["replays"].asJsonArray.map { it.asJsonObject })
        val states = i["states"].asJsonObject
        val steps = ArrayList<Map<String, Any?>>()
        // a refusal comes from the constructor only: any later one fails the test
        Recovery(i.str("subscription")!!, i.str("namespace")!!, i["since"].asDouble, i["now"].asDouble,
            o.num("max_replays")?.toLong(), o.num("max_replays_per_delivery")?.toLong(), o.num("max_entries")?.toLong()).use { run ->
            try {
                while (true) {
                    when (val s = run.next()) {
                        is RecoveryStep.Fetch -> {
                            assertEquals("listEnterpriseWebhookDeliveries", s.operation)
                            steps.add(step("step" to "fetch", "query" to s.query.map { listOf(it.name, it.value) }))
                            val body = bodies.removeFirstOrNull() ?: break
                            returnsNext(run, run.page(body.toByteArray()))
                        }
                        is RecoveryStep.Check -> {
                            steps.add(step("step" to "check", "keys" to s.keys))
                            returnsNext(run, run.checked(s.keys.map { k -> ClaimState.valueOf((states.str(k) ?: "new").uppercase()) }))
                        }
                        is RecoveryStep.Replay -> {
                            assertEquals("replayEnterpriseWebhookDelivery", s.operation)
                            steps.add(step("step" to "replay", "delivery" to s.delivery))
                            val answer = replays.removeFirstOrNull() ?: break
                            val failed = answer.str("failed")
                            returnsNext(run, if (failed != null) run.replayFailed(failed) else run.replayed(answer.str("body")!!.toByteArray()))
                        }
                        is RecoveryStep.Done -> {
                            val r = s.report
                            val deliveries = r.deliveries.map { d ->
                                step("reference" to d.reference, "event" to d.event, "status" to d.status, "created_at" to d.createdAt,
                                    "replays" to d.replays, "action" to d.action.name.lowercase(), "replay" to d.replay, "error" to d.error)
                            }
                            steps.add(step("step" to "done", "report" to step(
                                "entries" to r.entries.toLong(), "considered" to r.considered.toLong(), "before_since" to r.beforeSince.toLong(),
                                "skipped" to r.skipped.toLong(), "replayed" to r.replayed.toLong(), "end" to r.end.name.lowercase(),
                                "deliveries" to deliveries,
                            )))
                            break
                        }
                        is RecoveryStep.Fail -> {
                            assertTrue(s.error is RoyaltyKitException.Pagination)
                            steps.add(step("step" to "fail", "code" to s.error.code, "family" to s.error.family.name.lowercase()))
                            break
                        }
                    }
                }
            } catch (e: RoyaltyKitException) {
                throw AssertionError("a recovery input was refused after construction: $e", e)
            }
        }
        return mapOf("steps" to steps)
    }

    /** What a transcript records of an inbox worker's step (core/tests/machines.rs, `inbox_view`). */
    private fun inboxView(s: InboxStep): Map<String, Any?> = when (s) {
        is InboxStep.Claim -> step("step" to "claim")
        is InboxStep.Idle -> step("step" to "idle", "seconds" to s.seconds)
        is InboxStep.Drained -> step("step" to "drained")
        is InboxStep.Begin -> step("step" to "begin")
        is InboxStep.RunHandler -> step("step" to "run_handler", "key" to s.entry.key, "attempts" to s.entry.attempts.toLong())
        is InboxStep.MarkDone -> step("step" to "mark_done", "key" to s.key, "attempts" to s.attempts.toLong())
        is InboxStep.Commit -> step("step" to "commit")
        is InboxStep.Rollback -> step("step" to "rollback")
        is InboxStep.Settle -> step("step" to "settle", "key" to s.key, "attempts" to s.attempts.toLong(), "poison" to s.poison,
            "retry_at" to s.retryAt, "error" to s.error)
    }

    /**
     * An inbox worker fed the transcript's events (core/tests/machines.rs, `inbox`): the step after
     * each event, then the machine's counters. Each input's returned step must be `next()`'s.
     */
    private fun inbox(i: JsonObject): Map<String, Any?> {
        val o = i["options"].asJsonObject
        val options = InboxOptions(o.num("max_attempts")?.toLong()?.toUInt(), o.num("poll_seconds"),
            o["transactional"]?.asBoolean, o["drain"]?.asBoolean)
        InboxWorker.withOptions(options, i["seed"].asLong.toULong()).use { w ->
            val steps = arrayListOf(inboxView(w.next()))
            for (e in i["events"].asJsonArray.map { it.asJsonObject }) {
                val now = e.num("now")
                // every event through the worker's one input, report
                val returned = when {
                    e.has("claimed") -> w.report(InboxOutcome.Claimed(e["claimed"].takeUnless { it.isJsonNull }?.asJsonObject?.let { c ->
                        InboxEntry(c.str("key")!!, c.str("delivery_id")!!, c.str("event")!!, c.str("body")!!, c["attempts"].asLong.toUInt())
                    }), now!!)
                    e.has("handler_failed") -> w.report(InboxOutcome.Failed(e.str("handler_failed")!!), now!!)
                    e.has("marked") -> w.report(InboxOutcome.Marked(e["marked"].asBoolean), null)
                    e.has("store_failed") -> w.report(InboxOutcome.Failed("the store could not be reached"), null)
                    listOf("waited", "began", "handler", "committed", "rolled_back", "settled").any { e.has(it) } -> w.report(InboxOutcome.Done, null)
                    else -> throw AssertionError("unknown event $e")
                }
                val view = inboxView(w.next())
                assertEquals("the step an input returns is next()'s", view, inboxView(returned))
                steps.add(view)
            }
            return mapOf("steps" to steps, "counts" to step("processed" to w.processed(), "retried" to w.retried(), "poisoned" to w.poisoned()))
        }
    }

    private val gson = GsonBuilder().serializeNulls().create()
    private fun camel(k: String) = k.replace(Regex("_([a-z])")) { it.groupValues[1].uppercase() }
    private fun member(actual: JsonElement, k: String): JsonElement? =
        if (!actual.isJsonObject) null else actual.asJsonObject.let { it[k] ?: it[camel(k)] }

    /** Why `actual` does not match `expected` (the subset match of tests/vectors/shape.py, with `_count`), or null. */
    private fun mismatch(expected: JsonElement, actual: JsonElement): String? = when {
        expected.isJsonObject -> expected.asJsonObject.entrySet().firstNotNullOfOrNull { (k, want) ->
            val counted = k.removeSuffix("_count").takeIf { k.endsWith("_count") }?.let { member(actual, it) }
            if (counted != null) {
                if (counted.isJsonArray && counted.asJsonArray.size() == want.asInt) null else "`$k` $want does not hold"
            } else {
                val got = member(actual, k)
                if (got == null) "`$k` missing in $actual" else mismatch(want, got)?.let { "$k: $it" }
            }
        }
        expected.isJsonArray -> if (!actual.isJsonArray || actual.asJsonArray.size() != expected.asJsonArray.size()) "expected $expected, got $actual"
            else expected.asJsonArray.zip(actual.asJsonArray).withIndex().firstNotNullOfOrNull { (n, p) -> mismatch(p.first, p.second)?.let { "[$n]: $it" } }
        expected.isJsonPrimitive && expected.asJsonPrimitive.isNumber && actual.isJsonPrimitive && actual.asJsonPrimitive.isNumber ->
            if (Math.abs(expected.asDouble - actual.asDouble) < 1e-6) null else "expected $expected, got $actual"
        else -> if (expected == actual) null else "expected $expected, got $actual"
    }

    @Test
    fun everyTranscriptGivesTheSameSteps() {
        var count = 0
        val failures = ArrayList<String>()
        for (group in data["testGroups"].asJsonArray.map { it.asJsonObject }) {
            val tests = group["tests"].asJsonArray.map { it.asJsonObject }
            assertTrue(tests.size >= when (group.str("function")) { "session" -> 8; "fleet_token" -> 12; "pages" -> 20; "recovery" -> 20; "inbox" -> 16; else -> 40 })
            for (t in tests) {
                count++
                val input = t["input"].asJsonObject
                val run = {
                    when (val f = group.str("function")) {
                        "receipt" -> {
                            // the same steps, or the same refusal, through both crossings
                            val jna = runCatching { receipt(input, jni = false) }
                            val jni = runCatching { receipt(input, jni = true) }
                            val (a, b) = jna.exceptionOrNull() to jni.exceptionOrNull()
                            if (a != null || b != null) {
                                if (a !is RoyaltyKitException || b !is RoyaltyKitException || a.code != b.code) throw AssertionError("JNA: $a, JNI: $b")
                                throw a
                            }
                            if (jna.getOrThrow() != jni.getOrThrow()) throw AssertionError("JNI steps ${jni.getOrThrow()} differ from JNA's ${jna.getOrThrow()}")
                            mapOf("steps" to jna.getOrThrow())
                        }
                        "call" -> call(input)
                        "export_job" -> exportJob(input)
                        "session" -> session(input)
                        "pages" -> pages(input)
                        "recovery" -> recovery(input)
                        "inbox" -> inbox(input)
                        "fleet_token" -> fleetToken(input)
                        else -> { fail("no adapter for $f"); emptyMap() }
                    }
                }
                if (t.str("result") == "invalid") {
                    // refused when the machine is built, with the transcript's code
                    val code = t["error"].asJsonObject.str("code")
                    try {
                        run()
                        failures += "tcId ${t["tcId"]} ${group.str("function")} (${t.str("comment")}): accepted"
                    } catch (e: RoyaltyKitException) {
                        if (e.code != code) failures += "tcId ${t["tcId"]}: ${e.code} instead of $code"
                    }
                    continue
                }
                val got = run()
                val problem = mismatch(t["expected"], gson.toJsonTree(got))
                if (problem != null) failures += "tcId ${t["tcId"]} ${group.str("function")} (${t.str("comment")}): $problem in $got"
            }
        }
        assertEquals(data["numberOfTests"].asInt, count)
        assertTrue(count >= 222)
        if (failures.isNotEmpty()) fail(failures.joinToString("\n"))
    }

    @Test
    fun aSavedExportJobResumesWithoutASecondCreate() {
        val params = ExportJobParams(tenantId = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e", body = """{"format":"csv"}""".toByteArray(), seed = 1uL)
        val saved = ExportJob(params).use { job ->
            job.token(BearerToken.reports("secret-bearer-9", params.tenantId))
            assertTrue(job.next(0.0) is CallStep.Send)
            job.response(200, emptyMap(), "[]".toByteArray(), 0.0)
            val create = job.next(0.0)
            assertEquals("POST", (create as CallStep.Send).request.method())
            job.save() // the create is in flight when the process dies
        }
        assertFalse(saved.contains("secret-bearer-9"))
        ExportJob.resume(saved).use { job ->
            job.token(BearerToken.reports("secret-bearer-10", params.tenantId))
            val s = job.next(5.0)
            assertEquals("reconciled, never created twice", "GET", (s as CallStep.Send).request.method())
        }
    }

    /** A call whose two attempts get a 503: its events carry every level (a send is debug, a
     * retry info, the failure warning). */
    private fun failingCall(): Call {
        val tenant = "0b9c8d7e-6f5a-4b3c-9d2e-1f0a9b8c7d6e"
        val c = Call("listPlatformExports", RequestParams(tenantId = tenant), 2L, null, 7uL)
        c.token(BearerToken.reports("tok-events", tenant), null)
        var now = 1_763_900_000.0
        repeat(10) {
            when (val s = c.next(now, null)) {
                is CallStep.Send -> c.response(503, mapOf("Retry-After" to "1"), ByteArray(0), now)
                is CallStep.Wait -> now += s.seconds
                is CallStep.Fail -> return c
                else -> fail("unexpected $s")
            }
        }
        fail("the call did not end")
        return c
    }

    @Test
    fun eventsBelowTheHostsLevelAreDroppedAndTheRestKeptInOrder() {
        val everything = failingCall().use { it.takeEvents() }
        assertEquals(setOf("debug", "info", "warning"), everything.map { it.level }.toSet())
        for ((min, kept) in listOf(null to setOf("debug", "info", "warning"), EventLevel.DEBUG to setOf("debug", "info", "warning"),
            EventLevel.INFO to setOf("info", "warning"), EventLevel.WARNING to setOf("warning"))) {
            failingCall().use { c ->
                assertEquals("$min", everything.filter { it.level in kept }, c.takeEvents(min))
                assertEquals("$min: the dropped events are gone too", emptyList<MachineEvent>(), c.takeEvents())
            }
        }
    }

    /** The client throws what `callStepError` gives: the core's error table, as in Python and Node. */
    @Test
    fun aFailOrReconcileStepGivesTheCoreErrorOfItsFamily() {
        val fail = CallStep.Fail(
            "attempts_exhausted", "would retry, but 3 of 3 attempts are used", null, TransportFailure.TIMEOUT,
            null, null, "poll", "exp_9", 3L,
        )
        val e = callStepError(fail, "getPlatformExport", "https://api.example.com/base", "ReadTimeout:\nslow")
        assertTrue(e is RoyaltyKitException.CallFailed)
        e as RoyaltyKitException.CallFailed
        assertEquals(
            "getPlatformExport to api.example.com: would retry, but 3 of 3 attempts are used (3 attempts made); last failure: ReadTimeout: slow",
            e.detail,
        )
        assertEquals(
            listOf("call_failed", 500, "attempts_exhausted", TransportFailure.TIMEOUT, null, 3L, "getPlatformExport", "poll", "exp_9"),
            listOf(e.code, e.httpStatus.toInt(), e.rule, e.transport, e.status, e.attempts, e.operationId, e.stage, e.exportId),
        )
        assertEquals(ErrorFamily.CALL_FAILED, e.family)
        val r = callStepError(
            CallStep.Reconcile(Reconcile.LOOKUP_BY_SENT_DATA, "the create may have been applied", listOf("exp_1"), "reconcile"),
            "createPlatformExport", "https://api.example.com", null,
        ) as RoyaltyKitException.ReconcileRequired
        assertEquals(
            listOf("reconcile_required", "the create may have been applied", Reconcile.LOOKUP_BY_SENT_DATA, listOf("exp_1"), "reconcile", "createPlatformExport"),
            listOf(r.code, r.detail, r.reconcile, r.candidates, r.stage, r.operationId),
        )
        assertEquals(ErrorFamily.INVALID_ARGUMENT, callStepError(CallStep.Wait(1.0), "op", "https://h", null).family)
        // The deprecated names still catch the core's families for one release.
        @Suppress("DEPRECATION")
        val caught = try { throw e } catch (x: dev.royaltykit.client.CallFailedException) { x.rule }
        assertEquals("attempts_exhausted", caught)
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
                val reply = first.report(ReceiptOutcome.Done) as ReceiptStep.Reply
                assertEquals(200.toUShort(), reply.status)
                assertTrue(reply.body.contains("processed"))
                assertEquals(ClaimState.DONE, window.claim(key, now))
                val again = verifier.receipt(headers, body, "org_1", now + 60, window).next() as ReceiptStep.Reply
                assertEquals(200.toUShort(), again.status)
                assertFalse("a duplicate skips the handler", again.body.contains("processed"))
                val (h2, b2) = signed("dlv_w2", "m2") // other content: the same content is a duplicate
                assertEquals(500.toUShort(), (verifier.receipt(h2, b2, "org_1", now, window).report(ReceiptOutcome.Failed) as ReceiptStep.Reply).status)
                assertTrue("released for the redelivery", verifier.receipt(h2, b2, "org_1", now + 30, window).next() is ReceiptStep.RunHandler)
            }
        }
    }
}
