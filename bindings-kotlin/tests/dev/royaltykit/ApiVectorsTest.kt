package dev.royaltykit

import dev.royaltykit.types.*

import com.google.gson.JsonElement
import com.google.gson.JsonObject
import com.google.gson.JsonParser
import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.Test
import java.io.File

/** api_error.json, requests.json and token.json against the built jar. */
class ApiVectorsTest {
    private val dir = File(System.getenv("ROYALTYKIT_VECTORS") ?: "../tests/vectors")
    private fun load(n: String): JsonObject = JsonParser.parseString(File(dir, n).readText()).asJsonObject
    private fun JsonObject.opt(k: String): JsonElement? = if (has(k) && !get(k).isJsonNull) get(k) else null
    private fun bytes(e: JsonElement?): ByteArray? = e?.takeIf { !it.isJsonNull }?.asJsonObject?.let { b ->
        if (b.has("utf8")) b["utf8"].asString.toByteArray() else b["hex"].asString.chunked(2).map { it.toInt(16).toByte() }.toByteArray()
    }
    private fun headerMap(e: JsonElement) = e.asJsonArray.associate { it.asJsonArray[0].asString to it.asJsonArray[1].asString }
    private fun strings(e: JsonElement) = e.asJsonArray.map { it.asString }
    private fun pairs(d: RequestDescriptor) = d.headers().map { listOf(it.name, it.value) }
    private fun jsonPairs(e: JsonElement) = e.asJsonArray.map { p -> p.asJsonArray.map { it.asString } }

    @Test
    fun apiErrorVectors() {
        val failures = mutableListOf<String>()
        for (c in load("api_error.json")["cases"].asJsonArray.map { it.asJsonObject }) {
            val i = c["input"].asJsonObject
            try {
                val e = parseApiError(wire(i["api"].asString), i["status"].asLong, headerMap(i["headers"]), bytes(i["body"])!!, i.opt("operation_id")?.asString, i["now"].asLong)
                val x = c.opt("expected")?.asJsonObject ?: run { failures += "${c["comment"]}: accepted"; continue }
                val fields = x["field_errors"].asJsonObject.entrySet().associate { (k, v) -> k to strings(v) }
                val want = listOf(x["kind"].asString, x.opt("reason")?.asString, x["message"].asString, x.opt("body_code")?.asString, fields,
                    x.opt("retry_after_seconds")?.asLong?.toULong(), x.opt("declared")?.asBoolean)
                val got = listOf(e.kind.wireName, e.reason, e.message, e.bodyCode, e.fieldErrors, e.retryAfterSeconds, e.declared)
                if (want != got) failures += "tcId ${c["tcId"]} ${c["comment"]}: $got != $want"
                x.opt("raw_body_prefix")?.let { if (!e.rawBody.startsWith(it.asString)) failures += "${c["comment"]}: raw body" }
            } catch (e: RoyaltyKitException) {
                if (c.opt("error")?.asString != e.code) failures += "${c["comment"]}: ${e.message}"
            }
        }
        if (failures.isNotEmpty()) fail(failures.joinToString("\n"))
    }

    @Test
    fun requestVectors() {
        val failures = mutableListOf<String>()
        for (c in load("requests.json")["cases"].asJsonArray.map { it.asJsonObject }) {
            val p = c["params"].asJsonObject
            val params = RequestParams(
                path = p["path"].asJsonObject.entrySet().associate { (k, v) -> k to v.asString },
                query = p["query"].asJsonArray.map { Param(it.asJsonArray[0].asString, it.asJsonArray[1].asString) },
                body = bytes(p.opt("body")), token = p.opt("token")?.asString, tenantId = p.opt("tenant_id")?.asString,
                userId = p.opt("user_id")?.asString, idempotencyKey = p.opt("idempotency_key")?.asString,
                idempotencyHeader = p.opt("idempotency_header")?.asString,
            )
            val id = "tcId ${c["tcId"]} ${c["comment"]}"
            try {
                val d = buildRequest(c["operation_id"].asString, params)
                val x = c.opt("expected")?.asJsonObject ?: run { failures += "$id: accepted"; continue }
                val want = listOf(x["method"].asString, x["path"].asString, x["query"].asString, jsonPairs(x["headers"]),
                    x.opt("body")?.asJsonObject?.get("utf8")?.asString, x.opt("idempotency_key")?.asString)
                val got = listOf(d.method(), d.path(), d.query(), pairs(d), d.body()?.let { String(it) }, d.idempotencyKey())
                if (want != got) failures += "$id: $got != $want"
                if (d.describe().contains("tok_ABC") || d.toString().contains("tok_ABC")) failures += "$id: token printed"
            } catch (e: RoyaltyKitException) {
                if (c.opt("error")?.asString != e.code) failures += "$id: ${e.message}"
            }
        }
        if (failures.isNotEmpty()) fail(failures.joinToString("\n"))
    }

    @Test
    fun tokenVectors() {
        val t = load("token.json")
        for (c in t["build"].asJsonArray.map { it.asJsonObject }) {
            val i = c["input"].asJsonObject
            try {
                val d = buildTokenRequest(i["client_id"].asString, i["client_secret"].asString, i["tenant_id"].asString, strings(i["scopes"]))
                val x = c["expected"].asJsonObject
                assertEquals(c["comment"].asString, listOf(x["method"].asString, x["path"].asString, jsonPairs(x["headers"]), x["body"].asJsonObject["utf8"].asString),
                    listOf(d.method(), d.path(), pairs(d), String(d.body()!!)))
                assertFalse(d.describe().contains(pairs(d)[1][1]))
            } catch (e: RoyaltyKitException) { assertEquals(c["comment"].asString, c.opt("error")?.asString, e.code) }
        }
        for (c in t["parse"].asJsonArray.map { it.asJsonObject }) {
            val i = c["input"].asJsonObject
            try {
                val tk = parseTokenResponse(i["status"].asLong, headerMap(i["headers"]), bytes(i["body"])!!, strings(i["requested_scopes"]), i["now"].asLong)
                val x = c.opt("expected")?.asJsonObject ?: throw AssertionError("accepted ${c["comment"]}")
                assertEquals(c["comment"].asString,
                    listOf(x["access_token"].asString, x["token_type"].asString, x["expires_in"].asLong, x["expires_at"].asLong, x["refresh_at"].asLong, strings(x["scopes"]), strings(x["missing_scopes"]), x["warnings"].asInt),
                    listOf(tk.accessToken(), tk.tokenType(), tk.expiresIn(), tk.expiresAt(), tk.refreshAt(), tk.scopes(), tk.missingScopes(), tk.warnings().size))
                assertFalse(tk.toString().contains(tk.accessToken()))
            } catch (e: RoyaltyKitException) {
                assertEquals(c["comment"].asString, c.opt("error")?.asString, e.code)
                if (e is RoyaltyKitException.Api) {
                    val a = c["api_error"].asJsonObject
                    assertEquals(a["kind"].asString, e.error.kind.wireName)
                    assertEquals(a.opt("reason")?.asString, e.error.reason)
                }
            }
        }
        for (c in t["build_enterprise"].asJsonArray.map { it.asJsonObject }) {
            val i = c["input"].asJsonObject
            try {
                val d = buildEnterpriseTokenRequest(i["api_key"].asString, i["api_secret"].asString)
                assertEquals(jsonPairs(c["expected"].asJsonObject["headers"]), pairs(d))
                assertFalse(d.describe().contains("sec_1"))
            } catch (e: RoyaltyKitException) { assertEquals(c.opt("error")?.asString, e.code) }
        }
        for (c in t["parse_enterprise"].asJsonArray.map { it.asJsonObject }) {
            val i = c["input"].asJsonObject
            try {
                val tk = parseEnterpriseTokenResponse(i["status"].asLong, headerMap(i["headers"]), bytes(i["body"])!!, i["now"].asLong)
                val x = c["expected"].asJsonObject
                assertEquals(c["comment"].asString, listOf(x["token"].asString, x.opt("expires_at")?.asLong, x.opt("refresh_at")?.asLong), listOf(tk.token(), tk.expiresAt(), tk.refreshAt()))
            } catch (e: RoyaltyKitException) {
                assertEquals(c["comment"].asString, c.opt("error")?.asString, e.code)
                if (e is RoyaltyKitException.Api) assertEquals(c["api_error"].asJsonObject["reason"].asString, e.error.reason)
            }
        }
        for (c in t["missing_scopes"].asJsonArray.map { it.asJsonObject }) {
            try {
                val got = missingScopes(strings(c["granted"]), c["operation_id"].asString)
                assertEquals(c["comment"].asString, strings(c.opt("expected") ?: throw AssertionError("accepted ${c["comment"]}")), got)
            } catch (e: RoyaltyKitException) { assertEquals(c.opt("error")?.asString, e.code) }
        }
        for (c in t["notices"].asJsonArray.map { it.asJsonObject }) {
            val x = c["expected"].asJsonObject
            assertEquals(c["comment"].asString, ResponseNotices(x["deprecated"].asBoolean, x.opt("deprecated_at")?.asLong, x.opt("sunset_at")?.asLong, x.opt("link")?.asString),
                responseNotices(headerMap(c["headers"])))
        }
    }

    @Test
    fun catalogAndThrowableApiError() {
        val ops = operations()
        assertEquals(44, ops.count { it.api == Api.REPORTS })
        assertEquals(14, ops.count { it.api == Api.ENTERPRISE })
        assertEquals("exports:write", operation("getPlatformExport").scope)
        val e = parseApiError(Api.REPORTS, 503, mapOf("Retry-After" to "7"), ByteArray(0))
        try { throw e.toException() } catch (x: RoyaltyKitException) { assertEquals("api_error", x.code); assertTrue(x.message!!.contains("503")) }
    }
}
