package dev.royaltykit

import org.junit.Assert.assertEquals
import org.junit.Test
import java.io.ByteArrayOutputStream
import java.io.PrintStream

/** The README's Kotlin examples: test-kotlin.sh extracts each into package readme.<name>. */
class ReadmeTest {
    private fun run(name: String): String {
        val main = Class.forName("readme.$name.ExampleKt").getMethod("main")
        val out = ByteArrayOutputStream()
        val saved = System.out
        System.setOut(PrintStream(out, true))
        try { main.invoke(null) } finally { System.setOut(saved) }
        return out.toString()
    }

    @Test
    fun webhookExampleProcessesTheDelivery() = assertEquals("process ddex.delivery.acknowledged\n", run("kotlin"))

    @Test
    fun retryLoopExample() = assertEquals(
        "503: retry in 2 s (server_error_retry)\n429: retry in 3 s (rate_limited_retry_after)\ndone after 3 attempts\n",
        run("kotlin_retry"),
    )
}
