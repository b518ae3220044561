package dev.royaltykit

import dev.royaltykit.types.RoyaltyKitException
import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Test

/**
 * Runs against the test-hooks build only (`panicForTests` is not in the shipped jar): a Rust
 * panic reaches the JVM as uniffi's `InternalException` and the library keeps working.
 */
class PanicTest {
    @Test
    fun aRustPanicBecomesAJvmExceptionAndTheLibraryKeepsWorking() {
        val thrown = try { panicForTests(); null } catch (e: Exception) { e }
        assertTrue("a panic must surface as an exception, got $thrown", thrown != null && thrown !is RoyaltyKitException)
        assertTrue(thrown!!.javaClass.simpleName, thrown.javaClass.simpleName == "InternalException")
        val body = "{}".toByteArray()
        val v = WebhookVerifier(listOf("s"))
        assertEquals("invalid_payload", try { v.verify(signWebhook("s", body, 100, "d"), body, 100); "" } catch (e: RoyaltyKitException) { e.code })
    }
}
