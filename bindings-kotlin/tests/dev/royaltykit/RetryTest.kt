package dev.royaltykit

import dev.royaltykit.types.*

import org.junit.Assert.assertEquals
import org.junit.Assert.assertTrue
import org.junit.Test

/** The Kotlin retry surface beyond the shared vectors (run by VectorsTest). */
class RetryTest {
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
