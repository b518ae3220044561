package dev.royaltykit

import org.junit.Assert.assertEquals
import org.junit.Test
import java.io.ByteArrayOutputStream
import java.io.PrintStream

/** The README's Kotlin example: test-kotlin.sh extracts it into Readme.kt (class ReadmeKt). */
class ReadmeTest {
    @Test
    fun readmeKotlinExampleProcessesTheDelivery() {
        val main = Class.forName("ReadmeKt").getMethod("main")
        val out = ByteArrayOutputStream()
        val saved = System.out
        System.setOut(PrintStream(out, true))
        try { main.invoke(null) } finally { System.setOut(saved) }
        assertEquals("process ddex.delivery.acknowledged\n", out.toString())
    }
}
