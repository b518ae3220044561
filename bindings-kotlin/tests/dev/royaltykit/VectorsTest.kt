package dev.royaltykit

import dev.royaltykit.types.*

import com.google.gson.Gson
import com.google.gson.GsonBuilder
import com.google.gson.JsonArray
import com.google.gson.JsonElement
import com.google.gson.JsonNull
import com.google.gson.JsonObject
import com.google.gson.JsonParser
import com.google.gson.JsonPrimitive
import com.google.gson.JsonSerializer
import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.Test
import java.io.File

/** A case whose input Kotlin's types cannot express (refused before the core); only a case that
 * expects an error may be one. */
class Unrepresentable : Exception()

/**
 * Every shared vector file (tests/vectors/\*.json, one shape: see tests/vectors/shape.py) against
 * the built jar, with one generic runner. Only the adapter table is specific to Kotlin: how each
 * `function` a group names is called, and the value it gives back.
 */
class VectorsTest {
    private val dir = File(System.getenv("ROYALTYKIT_VECTORS") ?: "../tests/vectors")

    // ---- the generic runner -------------------------------------------------------------------

    /** Results as JSON: records by field name, enums by wire name, unsigned numbers as numbers. */
    private val gson: Gson = GsonBuilder().serializeNulls()
        .registerTypeHierarchyAdapter(Enum::class.java, JsonSerializer<Enum<*>> { e, _, _ -> JsonPrimitive(e.wireName) })
        .registerTypeAdapter(ULong::class.java, JsonSerializer<Any> { v, _, _ -> JsonPrimitive(java.math.BigInteger((v as ULong).toString())) })
        .registerTypeAdapter(UInt::class.java, JsonSerializer<Any> { v, _, _ -> JsonPrimitive((v as UInt).toLong()) })
        .registerTypeAdapter(UShort::class.java, JsonSerializer<Any> { v, _, _ -> JsonPrimitive((v as UShort).toInt()) })
        .create()

    /** An exception's own fields (the family's), with an API error's parsed response flattened on. */
    private fun errorView(e: RoyaltyKitException): JsonObject {
        val out = JsonObject()
        for (f in e.javaClass.declaredFields) {
            f.isAccessible = true
            val v = gson.toJsonTree(f.get(e))
            if (f.name == "error" && v.isJsonObject) v.asJsonObject.entrySet().forEach { (k, x) -> out.add(k, x) } else out.add(f.name, v)
        }
        // The error's message is its `detail` (uniffi's `message` lists the fields); an API
        // error's `message` is the parsed response's, as in the record.
        if (!out.has("message") && out.has("detail")) out.add("message", out["detail"])
        return out
    }

    private fun camel(k: String) = k.replace(Regex("_([a-z])")) { it.groupValues[1].uppercase() }
    private fun member(actual: JsonElement, k: String): JsonElement? =
        if (!actual.isJsonObject) null else actual.asJsonObject.let { it[k] ?: it[camel(k)] }

    private val checks: Map<String, (JsonElement, JsonElement) -> Boolean> = mapOf(
        "_prefix" to { got, want -> got.asString.startsWith(want.asString) },
        "_max_len" to { got, want -> got.asString.codePointCount(0, got.asString.length) <= want.asInt },
        "_count" to { got, want -> got.asJsonArray.size() == want.asInt },
    )

    /** Why `actual` does not match `expected` (a subset match, see shape.py), or null. */
    private fun mismatch(expected: JsonElement, actual: JsonElement): String? = when {
        expected.isJsonObject -> expected.asJsonObject.entrySet().firstNotNullOfOrNull { (k, want) ->
            val suffix = checks.keys.firstOrNull { k.endsWith(it) && member(actual, k.dropLast(it.length)) != null }
            if (suffix != null) {
                if (checks.getValue(suffix)(member(actual, k.dropLast(suffix.length))!!, want)) null else "`$k` $want does not hold"
            } else {
                val got = member(actual, k)
                if (got == null) "`$k` missing in $actual" else mismatch(want, got)?.let { "$k: $it" }
            }
        }
        expected.isJsonArray -> if (!actual.isJsonArray || actual.asJsonArray.size() != expected.asJsonArray.size()) "expected $expected, got $actual"
            else expected.asJsonArray.zip(actual.asJsonArray).withIndex().firstNotNullOfOrNull { (i, p) -> mismatch(p.first, p.second)?.let { "[$i]: $it" } }
        expected.isJsonPrimitive && expected.asJsonPrimitive.isNumber && actual.isJsonPrimitive && actual.asJsonPrimitive.isNumber ->
            if (Math.abs(expected.asDouble - actual.asDouble) < 1e-9) null else "expected $expected, got $actual"
        else -> if (expected == actual) null else "expected $expected, got $actual"
    }

    private fun runFile(file: String, minimum: Int = 1) {
        val data = JsonParser.parseString(File(dir, file).readText()).asJsonObject
        val failures = mutableListOf<String>()
        var count = 0
        for (group in data["testGroups"].asJsonArray.map { it.asJsonObject }) {
            val function = group["function"].asString
            val adapter = adapters[function] ?: run { failures += "no adapter for $function"; null }
            for (t in group["tests"].asJsonArray.map { it.asJsonObject }) {
                count++
                if (adapter == null) continue
                val valid = t["result"].asString == "valid"
                val problem = try {
                    val got = gson.toJsonTree(adapter(t["input"].asJsonObject))
                    if (valid) mismatch(t["expected"], got) else "accepted: $got"
                } catch (e: Unrepresentable) {
                    if (valid) "unrepresentable in Kotlin, but valid" else null
                } catch (e: RoyaltyKitException) {
                    if (valid) "refused: ${e.code} (${e.message})" else mismatch(t["error"], errorView(e))?.let { "$it (${e.message})" }
                }
                if (problem != null) failures += "$file tcId ${t["tcId"]} $function (${t["comment"].asString}): $problem"
            }
        }
        assertEquals(file, data["numberOfTests"].asInt, count)
        assertTrue(count >= minimum)
        if (failures.isNotEmpty()) fail(failures.joinToString("\n"))
    }

    @Test fun webhookVectors() = runFile("webhook.json", 100)
    @Test fun dedupVectors() = runFile("dedup.json")
    @Test fun retryVectors() = runFile("retry.json", 200)
    @Test fun exportVectors() = runFile("export.json")
    @Test fun apiErrorVectors() = runFile("api_error.json", 60)
    @Test fun requestVectors() = runFile("requests.json", 40)
    @Test fun tokenVectors() = runFile("token.json")
    @Test fun receiverVectors() = runFile("receiver.json")

    // ---- the adapter table --------------------------------------------------------------------

    private fun JsonObject.opt(k: String): JsonElement? = if (has(k) && !get(k).isJsonNull) get(k) else null
    private fun bytes(e: JsonElement?): ByteArray = e?.takeIf { !it.isJsonNull }?.asJsonObject?.let { b ->
        if (b.has("hex")) b["hex"].asString.chunked(2).map { it.toInt(16).toByte() }.toByteArray() else b["utf8"].asString.toByteArray()
    } ?: ByteArray(0)
    private fun strings(e: JsonElement?) = e?.takeIf { !it.isJsonNull }?.asJsonArray?.map { it.asString } ?: emptyList()
    private fun headerMap(e: JsonElement?) = e?.takeIf { !it.isJsonNull }?.asJsonArray?.associate { it.asJsonArray[0].asString to it.asJsonArray[1].asString } ?: emptyMap()

    /** Pairs (a name may repeat) grouped into the multimap shape the JVM API takes. */
    private fun headerMulti(a: JsonElement): Map<String, List<String>> {
        val out = LinkedHashMap<String, MutableList<String>>()
        for (p in a.asJsonArray) out.getOrPut(p.asJsonArray[0].asString) { mutableListOf() }.add(p.asJsonArray[1].asString)
        return out
    }

    /** The enum for a wire name, or Unrepresentable when Kotlin's types cannot name it. */
    private inline fun <reified T : Enum<T>> enumArg(e: JsonElement): T = wireOrNull<T>(e.asString) ?: throw Unrepresentable()

    private fun descriptor(d: RequestDescriptor): Map<String, Any?> {
        assertFalse("printing hides credentials", listOf("tok_ABC", "sec_1").any { d.describe().contains(it) || d.toString().contains(it) })
        return mapOf("method" to d.method(), "path" to d.path(), "query" to d.query(), "headers" to d.headers().map { listOf(it.name, it.value) },
            "body" to d.body()?.let { mapOf("utf8" to String(it)) }, "idempotency_key" to d.idempotencyKey(),
            "idempotency_key_sent" to d.idempotencyKeySent())
    }

    /** A vector's secrets: strings, or `{secret, valid_until}` as [WebhookSecret]. */
    private fun secrets(e: JsonElement): List<WebhookSecret> = e.asJsonArray.map {
        if (it.isJsonPrimitive) WebhookSecret(it.asString) else it.asJsonObject.let { o -> WebhookSecret(o["secret"].asString, o.opt("valid_until")?.asLong) }
    }

    /** verifyWebhook (secrets and their ends of validity as two lists), and the reusable
     * WebhookVerifier built from [WebhookSecret]s, which must agree. */
    private fun verify(i: JsonObject): VerifiedWebhook {
        val tol = i.opt("tolerance")?.asLong
        val max = i.opt("max_body_bytes")?.asLong
        val secrets = secrets(i["secrets"])
        val run = { verifyWebhook(headerMulti(i["headers"]), bytes(i["body"]), secrets.map { it.secret }, i["now"].asLong, tol, max, secrets.map { it.validUntil }) }
        fun outcome(f: () -> VerifiedWebhook) = try { f().contentKey } catch (e: RoyaltyKitException) { e.code }
        val verifier = try { WebhookVerifier(secrets, tol, max) } catch (e: RoyaltyKitException) { null }
        verifier?.use { v -> assertEquals(outcome(run), outcome { v.verifyMulti(headerMulti(i["headers"]), bytes(i["body"]), i["now"].asLong) }) }
        return run()
    }

    private fun rateBudget(i: JsonObject): List<RateDecision> {
        val budget = i.opt("preset")?.let { RateBudget.preset(it.asString) }
            ?: RateBudget(i["windows"].asJsonArray.map { w -> w.asJsonArray.let { RateWindow(it[0].asString, it[1].asLong, if (it[2].isJsonNull) null else it[2].asLong) } })
        return budget.use { b ->
            i["ops"].asJsonArray.map { it.asJsonObject }.map { op ->
                val all = List(op.opt("repeat")?.asInt ?: 1) { b.tryAcquire(op["now"].asLong) }
                assertTrue("repeats give the same decision", all.all { it == all[0] })
                all[0]
            }
        }
    }

    private fun backoff(i: JsonObject): Double {
        val policy = i.opt("policy")?.asJsonObject?.let {
            val band = it.opt("band")?.asJsonArray
            BackoffPolicy(it["steps"].asJsonArray.map { s -> s.asDouble }, band?.get(0)?.asDouble, band?.get(1)?.asDouble, enumArg(it["jitter"]), it["cap_seconds"].asDouble)
        }
        return backoffDelay(i["attempt"].asLong, i["random"].asDouble, policy)
    }

    private fun request(i: JsonObject): Map<String, Any?> {
        val p = i["params"].asJsonObject
        val params = RequestParams(
            path = p["path"].asJsonObject.entrySet().associate { (k, v) -> k to v.asString },
            query = p["query"].asJsonArray.map { Param(it.asJsonArray[0].asString, it.asJsonArray[1].asString) },
            body = p.opt("body")?.let { bytes(it) }, token = p.opt("token")?.asJsonObject?.let { bearer(it) }, tenantId = p.opt("tenant_id")?.asString,
            userId = p.opt("user_id")?.asString, idempotencyKey = p.opt("idempotency_key")?.asString, idempotencyHeader = p.opt("idempotency_header")?.asString,
            requestId = p.opt("request_id")?.asString, keyNamespace = p.opt("key_namespace")?.asString,
            keyRandom = p["key_random"].asString.chunked(2).map { it.toInt(16).toByte() }.toByteArray(),
        )
        return descriptor(buildRequest(i["operation_id"].asString, params))
    }

    /** A vector's token; a reporting token without its tenant cannot be built in Kotlin (the tenant is required). */
    private fun bearer(t: JsonObject): BearerToken =
        if (t["api"].asString == "enterprise") BearerToken.enterprise(t["value"].asString)
        else BearerToken.reports(t["value"].asString, t.opt("tenant_id")?.asString)

    private fun tokenView(i: JsonObject): Map<String, Any?> {
        val tk = parseTokenResponse(i["status"].asLong, headerMap(i["headers"]), bytes(i["body"]), i["tenant_id"].asString, strings(i["requested_scopes"]), i["now"].asLong)
        assertFalse("printing hides the token", tk.toString().contains(tk.accessToken()))
        return mapOf("access_token" to tk.accessToken(), "token_type" to tk.tokenType(), "expires_in" to tk.expiresIn(), "expires_at" to tk.expiresAt(),
            "refresh_at" to tk.refreshAt(), "scopes" to tk.scopes(), "missing_scopes" to tk.missingScopes(), "warnings" to tk.warnings(),
            "tenant_id" to tk.tenantId())
    }

    private val listKeys = setOf("limit", "cursor", "export_class", "status", "format")

    /**
     * The core's [Route] for the registrations ([EventRoutes]), and the [EventRouter] a user holds,
     * which must refuse the same names (at once) and run exactly the handlers that route names:
     * the `on` handlers at `named`, then every `onAny` handler, then the fallback.
     */
    private fun routeEvent(i: JsonObject): Route {
        val routes = EventRoutes()
        val router = EventRouter()
        val ran = mutableListOf<Int>()
        val on = mutableListOf<Int>()
        val any = mutableListOf<Int>()
        var fallback: Int? = null
        for ((k, registration) in i["registrations"].asJsonArray.map { it.asJsonObject }.withIndex()) {
            val handler: (VerifiedWebhook) -> Unit = { ran += k }
            when {
                registration.has("on") -> {
                    val name = registration["on"].asString
                    val refused = try { EventRoutes().on(name); false } catch (e: RoyaltyKitException.InvalidArgument) { true }
                    try {
                        router.on(name, handler) // throws the vector's error
                    } catch (e: RoyaltyKitException) {
                        assertTrue("the router refused what the core accepts: $name", refused)
                        throw e
                    }
                    assertFalse("the router accepted what the core refuses: $name", refused)
                    assertEquals(on.size.toLong(), routes.on(name))
                    on += k
                }
                registration.opt("on_any")?.asBoolean == true -> { router.onAny(handler); routes.onAny(); any += k }
                else -> {
                    assertTrue(registration.toString(), registration["otherwise"].asBoolean)
                    router.otherwise(handler); routes.otherwise(); fallback = k
                }
            }
        }
        val name = i["event"].asString
        val route = routes.route(name)
        assertEquals(route, router.route(name))
        router(VerifiedWebhook("dlv_route", 0, 0u, "", WebhookEvent(name, false, false, "t", "r", "/api/v1/r", null, "", null)))
        assertEquals(route.named.map { on[it.toInt()] } + (if (route.any) any else emptyList()) + listOfNotNull(fallback?.takeIf { route.fallback }), ran)
        return route
    }

    private val adapters: Map<String, (JsonObject) -> Any?> = mapOf(
        "verify_webhook" to ::verify,
        "plan_receipt" to { i -> planReceipt(i["namespace"].asString, verify(i), i.opt("claim_content_key")?.asBoolean ?: false) },
        "resource_path" to { i -> mapOf("path" to resourcePath(i["resource_url"].asString)) },
        "active_secrets" to { i ->
            activeSecrets(i["current"].asString, i.opt("previous")?.asString, i.opt("previous_valid_until")?.asLong, i["now"].asLong)
        },
        // the secrets a receiver takes (as WebhookSecret: secret, validUntil), the record parsed
        "revealed_secret" to { i ->
            val r = revealedSecret(bytes(i["body"]))
            mapOf("secrets" to r.secrets(i.opt("previous")?.asString), "previous_valid_until" to r.previousValidUntil,
                "reference" to r.reference, "record" to JsonParser.parseString(r.record))
        },
        "route_event" to { i -> routeEvent(i) },
        "decide_claims" to { i -> decideClaims(i["states"].asJsonArray.map { enumArg<ClaimState>(it) }) },
        "redis_dedup_command" to { i ->
            RedisDedupProtocol(i.opt("prefix")?.asString, i.opt("ttl_seconds")?.asLong, i.opt("lease_seconds")?.asLong).use { p ->
                val (key, token) = i["key"].asString to i["token"].asString
                when (i["op"].asString) {
                    "claim" -> p.claimCommand(key, token)
                    "state" -> p.stateCommand(key)
                    "commit" -> p.commitCommand(key, token)
                    else -> p.releaseCommand(key, token)
                }
            }
        },
        "redis_dedup_reply" to { i ->
            RedisDedupProtocol().use { p ->
                i.opt("reply")?.asString.let { r ->
                    when (i["op"].asString) { "claim" -> p.claimReply(r); "state" -> p.stateReply(r); else -> p.guardedReply(r) }
                }
            }
        },
        "redis_inbox_command" to { i ->
            RedisInboxProtocol(i.opt("prefix")?.asString, i.opt("ttl_seconds")?.asLong, i.opt("lease_seconds")?.asLong).use { p ->
                val key = i.opt("key")?.asString ?: ""
                when (i["op"].asString) {
                    "enqueue" -> p.enqueueCommand(key, i["delivery_id"].asString, i["event"].asString, String(bytes(i["body"])), i["now"].asLong)
                    "claim" -> p.claimCommand(i["now"].asLong)
                    "mark_done" -> p.markDoneCommand(key, i["attempts"].asLong, i["now"].asLong)
                    "settle" -> p.settleCommand(key, i["attempts"].asLong, i["poison"].asBoolean, i["retry_at"].asLong, i["error"].asString)
                    "poisoned" -> p.poisonedCommand(i["limit"].asLong)
                    "retry" -> p.retryCommand(key)
                    "lookup" -> p.lookupCommand(key)
                    "counts" -> p.countsCommand(i["now"].asLong)
                    "purge" -> p.purgeCommand(i["now"].asLong)
                    else -> throw AssertionError("unknown op ${i["op"]}")
                }
            }
        },
        "redis_inbox_reply" to { i ->
            RedisInboxProtocol().use { p ->
                val r = i.opt("reply")?.asString
                when (i["op"].asString) {
                    "claim" -> p.claimReply(r)
                    "poisoned" -> p.poisonedReply(r)
                    "counts" -> p.countsReply(r)
                    "added" -> p.addedReply(r)
                    "lookup" -> p.lookupReply(r)
                    else -> throw AssertionError("unknown op ${i["op"]}")
                }
            }
        },
        "delivery_key" to { i -> deliveryKey(i["namespace"].asString, i["delivery_id"].asString) },
        "event_key" to { i ->
            eventKey(i["namespace"].asString, WebhookEvent(i["name"].asString, true, false, i["resource_type"].asString,
                i["resource_reference"].asString, "", 0, i["occurred_at"].asString, null))
        },
        "content_key" to { i -> contentKey(i["secret"].asString, i["timestamp"].asString, bytes(i["body"])) },
        "idempotency_key" to { i -> idempotencyKey(i["namespace"].asString, i["operation_id"].asString, i["request_id"].asString) },
        "dedup_window" to { i ->
            DedupWindow(i["capacity"].asLong, i["ttl_seconds"].asLong).use { w -> i["ops"].asJsonArray.map { it.asJsonObject }.map { w.checkAndInsert(it["key"].asString, it["now"].asLong) } }
        },
        "decide_retry" to { i ->
            decideRetry(RetryInput(
                retryClass = enumArg(i["retry_class"]), attempt = i["attempt"].asLong, status = i.opt("status")?.asLong, headers = headerMap(i.opt("headers")),
                transport = i.opt("transport")?.let { enumArg<TransportFailure>(it) }, elapsedSeconds = i["elapsed_seconds"].asDouble,
                tokenRefreshed = i["token_refreshed"].asBoolean, random = i["random"].asDouble, now = i["now"].asLong,
                idempotencyKeySent = i.opt("idempotency_key_sent")?.asBoolean ?: false,
                maxAttempts = i.opt("max_attempts")?.asLong, maxElapsedSeconds = i.opt("max_elapsed_seconds")?.asDouble,
            ))
        },
        "webhook_retry_schedule" to { _ -> webhookRetrySchedule() },
        "webhook_next_attempt_at" to { i -> webhookNextAttemptAt(i["first_attempt_at"].asLong, i["attempts_made"].asLong) },
        "webhook_gives_up_at" to { i -> webhookGivesUpAt(i["first_attempt_at"].asLong) },
        "backoff_delay" to ::backoff,
        "dedup_claims" to { i ->
            DedupWindow(i["capacity"].asLong, i.opt("ttl_seconds")?.asLong, i.opt("lease_seconds")?.asLong).use { w ->
                i["ops"].asJsonArray.map { it.asJsonObject }.map { op ->
                    val (key, now) = op["key"].asString to op["now"].asLong
                    when (op["op"].asString) {
                        "claim" -> w.claim(key, now)
                        "commit" -> w.commit(key, now).let { null }
                        else -> w.release(key, now)
                    }
                }
            }
        },
        "parse_retry_after" to { i ->
            // A non-null ULong field is a raw long to reflection: read it as Kotlin does.
            parseRetryAfter(i["value"].asString, i["now"].asLong)?.let { mapOf("seconds" to java.math.BigInteger(it.seconds.toString()), "form" to it.form) }
        },
        "rate_budget" to ::rateBudget,
        "parse_api_error" to { i ->
            parseApiError(enumArg(i["api"]), i["status"].asLong, headerMap(i["headers"]), bytes(i["body"]), i.opt("operation_id")?.asString, i["now"].asLong)
        },
        "api_error_message" to { i ->
            parseApiError(enumArg(i["api"]), i["status"].asLong, headerMap(i["headers"]), bytes(i["body"]), i.opt("operation_id")?.asString, i["now"].asLong)
                .toException().detail
        },
        "build_request" to ::request,
        "call_failed_message" to { i ->
            callFailedMessage(i["operation"].asString, i["base_url"].asString, i["reason"].asString, i["attempts"].asLong, i.opt("cause")?.asString)
        },
        "export_interrupted_message" to { i -> exportInterruptedMessage(i.opt("export_id")?.asString) },
        "client_timeouts" to { i ->
            val t = clientTimeouts(i.opt("connect_timeout")?.asDouble, i.opt("read_timeout")?.asDouble)
            mapOf("connect_seconds" to t.connectSeconds, "read_seconds" to t.readSeconds)
        },
        "check_base_url" to { i -> checkBaseUrl(i["base_url"].asString, i["allow_insecure_http"].asBoolean) },
        "build_token_request" to { i -> descriptor(buildTokenRequest(i["client_id"].asString, i["client_secret"].asString, i["tenant_id"].asString, strings(i["scopes"]))) },
        "build_enterprise_token_request" to { i -> descriptor(buildEnterpriseTokenRequest(i["api_key"].asString, i["api_secret"].asString)) },
        "parse_token_response" to ::tokenView,
        "parse_enterprise_token_response" to { i ->
            val tk = parseEnterpriseTokenResponse(i["status"].asLong, headerMap(i["headers"]), bytes(i["body"]), i["now"].asLong)
            mapOf("token" to tk.token(), "expires_at" to tk.expiresAt(), "refresh_at" to tk.refreshAt())
        },
        "parse_api_session" to { i -> parseApiSession(i["status"].asLong, headerMap(i["headers"]), bytes(i["body"]), i["now"].asLong) },
        "missing_scopes" to { i -> missingScopes(strings(i["granted"]), i["operation_id"].asString) },
        // the header lines as a list, a name repeated on several lines (two `Link` lines); the map
        // forms (one value per name; several) must agree with it
        "response_notices" to { i ->
            val lines = i["headers"].asJsonArray.map { it.asJsonArray[0].asString to it.asJsonArray[1].asString }
            val notices = responseNotices(lines)
            assertEquals(notices, responseNotices(headerMulti(i["headers"])))
            notices
        },
        "operation" to { i -> operation(i["operation_id"].asString) },
        "export_state" to { i -> exportState(i["state"].asString) },
        "validate_export_command" to { i -> validateExportCommand(i["state"].asString, enumArg(i["command"])) },
        "export_poll_decision" to { i ->
            exportPollDecision(i["state"].asString, i["attempt"].asLong, i["random"].asDouble, i.opt("max_polls")?.asLong)
        },
        "check_export_download" to { i -> checkExportDownload(i["status"].asLong, headerMap(i["headers"]), bytes(i.opt("body"))).let { "ok" } },
        "validate_export_list_query" to { i ->
            val q = i["query"].asJsonArray.associate { it.asJsonArray[0].asString to it.asJsonArray[1].asString }
            if (!listKeys.containsAll(q.keys)) throw Unrepresentable() // only the named parameters exist in Kotlin
            validateExportListQuery(q["limit"], q["cursor"], q["export_class"], q["status"], q["format"])
        },
        "step_up_satisfies" to { i ->
            stepUpSatisfies(enumArg(i["requirement"]), enumArg(i["kind"]), i["at"].asLong, i["max_age_seconds"].asLong, i["now"].asLong)
        },
    )
}
