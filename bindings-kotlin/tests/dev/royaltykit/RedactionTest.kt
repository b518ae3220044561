package dev.royaltykit

import dev.royaltykit.types.*

import org.junit.Assert.assertTrue
import org.junit.Test

/** No public object or error built from a secret prints it (toString, message). */
class RedactionTest {
    @Test
    fun noSecretInAnyPrintedObjectOrError() {
        val secret = "whsec_REDACTION_SECRET_1"; val token = "tok_REDACTION_TOKEN_2"
        val clientSecret = "cs_REDACTION_CLIENT_SECRET_3"; val apiSecret = "as_REDACTION_API_SECRET_4"
        val tenant = "0f8fad5b-d9cb-469f-a165-70867728950e"
        val out = mutableListOf<String>()
        fun show(v: Any?) { out += v.toString(); if (v is Throwable) out += (v.message ?: "") }
        val body = """{"event":"x","resource":{"type":"t","reference":"r","url":"/u"},"occurred_at":"2026-11-22T04:05:06Z"}""".toByteArray()
        val h = signWebhook(secret, body, 1000, "d")
        val v = WebhookVerifier(listOf(secret))
        show(v); show(v.verify(h, body, 1000))
        for ((b, now) in listOf(body to 9999L, "x".toByteArray() to 1000L, "{}".toByteArray() to 1000L)) {
            try { v.verify(h, b, now) } catch (e: RoyaltyKitException) { show(e) }
        }
        try { WebhookVerifier(listOf(secret, "")) } catch (e: RoyaltyKitException) { show(e) }
        show(WebhookSecret(secret, validUntil = 1000)); show(WebhookVerifier(listOf(WebhookSecret(secret, validUntil = 1000))))
        val d = buildRequest("listPlatformExports", RequestParams(token = BearerToken.reports(token, tenant), tenantId = tenant)); show(d); out += d.describe()
        val t = buildTokenRequest("cli", clientSecret, tenant); show(t); out += t.describe()
        val e = buildEnterpriseTokenRequest("key", apiSecret); show(e); out += e.describe()
        show(parseTokenResponse(200, mapOf("Cache-Control" to "no-store"), """{"access_token":"$token","token_type":"Bearer","expires_in":60}""".toByteArray(), "0f8fad5b-d9cb-469f-a165-70867728950e"))
        show(parseEnterpriseTokenResponse(200, emptyMap(), """{"token":"$token","expires_at":null}""".toByteArray()))
        try { buildRequest("listPlatformExports", RequestParams(query = listOf(Param("access_token", token)), token = BearerToken.reports(token, tenant), tenantId = tenant)) } catch (x: RoyaltyKitException) { show(x) }
        show(DedupWindow(10, 60))
        val revealed = """{"data":{"reference":"wh_1","secret":"$secret","previous_secret_valid_until":2000}}""".toByteArray()
        show(revealedSecret(revealed)); show(revealedSecret(revealed).secrets(token)); show(subscriptionSecret(revealed))
        out += revealedSecret(revealed).record; out += com.google.gson.Gson().toJson(revealedSecret(revealed))
        try { revealedSecret("""{"data":{"token":"$secret"}}""".toByteArray()) } catch (x: RoyaltyKitException) { show(x) }
        val leaks = out.filter { o -> listOf(secret, token, clientSecret, apiSecret).any { o.contains(it) } }
        assertTrue("leaked: $leaks", leaks.isEmpty())
        assertTrue(out.size >= 15)
    }
}
