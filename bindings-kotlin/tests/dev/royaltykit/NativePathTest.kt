package dev.royaltykit

import dev.royaltykit.types.RoyaltyKitException
import org.junit.Assert.assertArrayEquals
import org.junit.Assert.assertEquals
import org.junit.Assert.assertFalse
import org.junit.Assert.assertNull
import org.junit.Assert.assertTrue
import org.junit.Assert.fail
import org.junit.Test
import java.io.File
import java.security.MessageDigest
import java.util.zip.ZipFile

/**
 * The native library's loading and the JNI hot path. scripts/test-kotlin.sh runs the suites twice:
 * with the JNI path (`-Droyaltykit.native.dir=<empty dir>`) and with `-Droyaltykit.jni=false`
 * (JNA only), so every verification test passes through both.
 */
class NativePathTest {
    private val jniWanted = System.getProperty("royaltykit.jni") != "false"

    @Test
    fun theJniPathIsInUseExactlyWhenWanted() {
        assertEquals(jniWanted, RoyaltyKitNative.jni)
        if (!jniWanted) {
            assertNull(RoyaltyKitNative.path)
            return
        }
        val path = File(RoyaltyKitNative.path ?: error("no library path"))
        val dir = File(System.getProperty("royaltykit.native.dir") ?: error("the suite sets royaltykit.native.dir"))
        assertEquals(dir.canonicalFile, path.parentFile.parentFile.canonicalFile)
        // The cached file is the jar's library, byte for byte, under its digest.
        val jar = File(WebhookVerifier::class.java.protectionDomain.codeSource.location.toURI())
        val shipped = ZipFile(jar).use { z -> z.getInputStream(z.getEntry("linux-x86-64/${path.name}")).readBytes() }
        assertArrayEquals(shipped, path.readBytes())
        val sha = MessageDigest.getInstance("SHA-256").digest(shipped).joinToString("") { "%02x".format(it) }
        assertEquals(sha, path.parentFile.name)
        assertEquals(path.path, System.getProperty("uniffi.component.royaltykit_kotlin.libraryOverride"))
        assertEquals(path.path, System.getProperty("uniffi.component.royaltykit.libraryOverride"))
    }

    @Test
    fun aSecondProcessReusesTheCachedLibrary() {
        if (!jniWanted) return
        val path = File(RoyaltyKitNative.path ?: error("no library path"))
        val before = path.lastModified()
        Thread.sleep(1_100) // a re-extraction would show as a later modification time
        val java = File(System.getProperty("java.home"), "bin/java").path
        val child = ProcessBuilder(
            java, "-cp", System.getProperty("java.class.path"),
            "-Droyaltykit.native.dir=${System.getProperty("royaltykit.native.dir")}",
            "dev.royaltykit.NativePathChild",
        ).redirectErrorStream(true).start()
        val out = child.inputStream.bufferedReader().readText().trim()
        assertEquals("child failed: $out", 0, child.waitFor())
        assertEquals("true ${path.path} dlv_child", out)
        assertEquals(before, path.lastModified())
        assertEquals(1, path.parentFile.listFiles()!!.size) // no temporary file left behind
    }

    @Test
    fun bothPathsGiveTheSameAnswersAndErrors() {
        val secret = "whsec_native_path"
        val body = """{"event":"export.completed","resource":{"type":"export","reference":"e1","url":"/x"},"occurred_at":"2026-11-22T04:00:00Z"}""".toByteArray()
        val now = 1_763_784_000L
        val headers = signWebhook(secret, body, now, "dlv_native")
        WebhookVerifier(listOf("other", secret)).use { v ->
            val viaDefault = v.verify(headers, body, now)
            // The one-shot verifyWebhook always crosses through JNA.
            assertEquals(verifyWebhook(headers, body, listOf("other", secret), now), viaDefault)
            assertEquals("dlv_native", viaDefault.deliveryId)
            assertEquals(1u, viaDefault.secretIndex)
            for ((label, h, b) in listOf(
                Triple("forged", headers + ("Service-Webhook-Signature" to "v1=" + "0".repeat(64)), body),
                Triple("late", headers, body),
                Triple("not JSON", signWebhook(secret, "{".toByteArray(), now, "d"), "{".toByteArray()),
            )) {
                val at = if (label == "late") now + 10_000 else now
                val viaJna = try { verifyWebhook(h, b, listOf("other", secret), at); fail(label); null } catch (e: RoyaltyKitException) { e }
                try {
                    v.verify(h, b, at); fail("$label accepted")
                } catch (e: RoyaltyKitException) {
                    assertEquals(label, viaJna!!.javaClass, e.javaClass)
                    assertEquals(label, viaJna.code, e.code)
                    assertEquals(label, viaJna.message, e.message)
                    assertEquals(label, viaJna.httpStatus, e.httpStatus)
                }
            }
        }
        // A closed verifier is refused on either path, never a crash.
        val closed = WebhookVerifier(listOf(secret)).also { it.close() }
        try { closed.verify(headers, body, now); fail("a closed verifier verified") } catch (e: IllegalStateException) { assertFalse(e.message.isNullOrEmpty()) }
        assertTrue(RoyaltyKitNative.jni == jniWanted)
    }
}

/** The child process of [NativePathTest.aSecondProcessReusesTheCachedLibrary]. */
object NativePathChild {
    @JvmStatic
    fun main(args: Array<String>) {
        val secret = "whsec_child"
        val body = """{"event":"e","resource":{"type":"t","reference":"r","url":"/u"},"occurred_at":"2026-11-22T04:00:00Z"}""".toByteArray()
        val id = WebhookVerifier(listOf(secret)).verify(signWebhook(secret, body, 100, "dlv_child"), body, 100).deliveryId
        println("${RoyaltyKitNative.jni} ${RoyaltyKitNative.path} $id")
    }
}
