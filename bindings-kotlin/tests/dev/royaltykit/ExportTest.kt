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

/** tests/vectors/export.json against the built jar. */
class ExportTest {
    private val v: JsonObject = JsonParser.parseString(File(System.getenv("ROYALTYKIT_VECTORS") ?: "../tests/vectors", "export.json").readText()).asJsonObject
    private fun JsonObject.opt(k: String): JsonElement? = if (has(k) && !get(k).isJsonNull) get(k) else null
    private fun objs(k: String) = v[k].asJsonArray.map { it.asJsonObject }

    @Test
    fun transitions() {
        for (c in objs("transitions")) {
            assertEquals(c.toString(), c["state_known"].asBoolean, exportState(c["state"].asString).known)
            try {
                val command = wireOrNull<ExportCommand>(c["command"].asString) ?: run { unrepresentable(c); continue }
                val after = validateExportCommand(c["state"].asString, command)
                assertEquals(c.toString(), c.opt("expected_state")?.asString ?: fail("accepted $c"), after)
            } catch (e: RoyaltyKitException.ExportState) {
                assertEquals(c.toString(), c.opt("error")?.asString, e.code)
                assertEquals(c["allowed"].asJsonArray.map { it.asString }, e.allowed)
            }
        }
    }

    @Test
    fun pollDecisions() {
        for (c in objs("poll")) {
            try {
                val d = exportPollDecision(c["state"].asString, c["attempt"].asLong, c["random"].asDouble, c.opt("max_polls")?.asLong, c.opt("max_unknown_polls")?.asLong)
                val x = c.opt("expected")?.asJsonObject ?: throw AssertionError("accepted $c")
                assertEquals(c.toString(), x["action"].asString, d.action.wireName)
                assertEquals(x["delay_seconds"].asDouble, d.delaySeconds, 1e-9)
            } catch (e: RoyaltyKitException) { assertEquals(c.opt("error")?.asString, e.code) }
        }
    }

    @Test
    fun downloads() {
        for (c in objs("download")) {
            val headers = c["headers"].asJsonArray.associate { it.asJsonArray[0].asString to it.asJsonArray[1].asString }
            try {
                checkExportDownload(c["status"].asLong, headers, (c.opt("body")?.asString ?: "").toByteArray())
                assertTrue(c["comment"].asString, c.opt("error") == null)
            } catch (e: RoyaltyKitException) {
                assertEquals(c["comment"].asString, c.opt("error")?.asString, e.code)
                if (e is RoyaltyKitException.Api) {
                    val x = c["api_error"].asJsonObject
                    assertEquals(listOf(x["kind"].asString, x["declared"].asBoolean, x.opt("body_code")?.asString), listOf(e.error.kind.wireName, e.error.declared, e.error.bodyCode))
                }
            }
        }
    }

    @Test
    fun listQueriesScopesHumanRoutesStepUp() {
        for (c in objs("list_query")) {
            val q = c["query"].asJsonArray.associate { it.asJsonArray[0].asString to it.asJsonArray[1].asString }
            if (c.opt("error")?.asString == "unknown_parameter") continue // only named parameters exist in Kotlin
            try {
                val got = validateExportListQuery(q["limit"], q["cursor"], q["export_class"], q["status"], q["format"])
                assertEquals(c["comment"].asString, c.opt("expected")?.asString ?: fail("accepted $c"), got)
            } catch (e: RoyaltyKitException) { assertEquals(c["comment"].asString, c.opt("error")?.asString, e.code) }
        }
        for (c in objs("scopes")) assertEquals(c["expected"].asJsonArray.map { it.asString }, missingScopes(c["granted"].asJsonArray.map { it.asString }, c["operation_id"].asString))
        for (c in objs("human_routes")) {
            val o = operation(c["operation_id"].asString)
            assertEquals(listOf(c["csrf"].asBoolean, c["idempotency"].asString, c["step_up"].asString), listOf(o.csrf, o.idempotency.wireName, o.stepUp.wireName))
        }
        for (c in objs("step_up")) {
            try {
                val requirement = wireOrNull<StepUp>(c["requirement"].asString) ?: run { unrepresentable(c); continue }
                val kind = wireOrNull<StepUpKind>(c["kind"].asString) ?: run { unrepresentable(c); continue }
                val ok = stepUpSatisfies(requirement, kind, c["at"].asLong, c["max_age_seconds"].asLong, c["now"].asLong)
                assertEquals(c.toString(), c.opt("expected")?.asBoolean ?: fail("accepted $c"), ok)
            } catch (e: RoyaltyKitException) { assertEquals(c.opt("error")?.asString, e.code) }
        }
    }
}
